/* Max and average pooling over sliding windows and over whole planes. The
 * common 2-D windows and whole planes run the vector loops of
 * k-pool-body.h, compiled for AVX2 (also used at the AVX-512 level) and for
 * the baseline; the rest take a general path. */
#include "config.h"

#include <float.h>
#include <string.h>

#include "k-nn.h"
#include "k-int.h"
#include "k-nchwc.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define PB_X86 1
#else
#define PB_X86 0
#endif

/* ---- sliding windows ---- */

void
k_pool_ref(const k_window *w, k_pool_mode mode, bool count_include_pad, const float *x, float *y)
{
	k_geometry g;
	k_geometry_expand(w, &g);
	for (int64_t plane = 0; plane < g.batch * g.in_channels; plane++) {
		const float *in = x + plane * g.in_size;
		float *out = y + plane * g.out_size;
		for (int64_t od = 0; od < g.out[0]; od++)
		for (int64_t oh = 0; oh < g.out[1]; oh++)
		for (int64_t ow = 0; ow < g.out[2]; ow++) {
			double best = -FLT_MAX, sum = 0;
			int64_t inside = 0, padded = 0;
			for (int64_t kd = 0; kd < g.kernel[0]; kd++)
			for (int64_t kh = 0; kh < g.kernel[1]; kh++)
			for (int64_t kw = 0; kw < g.kernel[2]; kw++) {
				int64_t at[3] = {
					od * g.stride[0] - g.pad[0] + kd * g.dilation[0],
					oh * g.stride[1] - g.pad[1] + kh * g.dilation[1],
					ow * g.stride[2] - g.pad[2] + kw * g.dilation[2],
				};
				bool in_input = true, in_padded = true;
				for (int i = 0; i < 3; i++) {
					if (at[i] < 0 || at[i] >= g.in[i])
						in_input = false;
					if (at[i] < -g.pad[i] || at[i] >= g.in[i] + g.pad_end[i])
						in_padded = false;
				}
				padded += in_padded;
				if (!in_input)
					continue;
				inside++;
				float v = in[(at[0] * g.in[1] + at[1]) * g.in[2] + at[2]];
				if (v > best)
					best = v;
				sum += v;
			}
			int64_t divisor = count_include_pad ? padded : inside;
			float *o = &out[(od * g.out[1] + oh) * g.out[2] + ow];
			if (mode == K_POOL_MAX)
				*o = (float)best;
			else
				*o = divisor ? (float)(sum / (double)divisor) : 0.0f;
		}
	}
}

/* The taps [lo, hi) of window o on axis i that land in the input, and how
 * many land in the padded input. */
typedef struct tap_range {
	int64_t lo, hi, padded;
} tap_range;

static tap_range
taps(const k_geometry *g, int i, int64_t o)
{
	int64_t start = o * g->stride[i] - g->pad[i], k = g->kernel[i], d = g->dilation[i];
	tap_range r;
	r.lo = k_div_up(-start, d);
	r.lo = r.lo < 0 ? 0 : r.lo > k ? k : r.lo;
	r.hi = k_div_up(g->in[i] - start, d);
	r.hi = r.hi < r.lo ? r.lo : r.hi > k ? k : r.hi;
	/* Windows start at or after -pad, so only the end can leave the padding. */
	r.padded = k_div_up(g->in[i] + g->pad_end[i] - start, d);
	r.padded = r.padded < 0 ? 0 : r.padded > k ? k : r.padded;
	return r;
}

/* Longest input row reduced on the stack; longer ones take the plain path. */
#define ROW_MAX 2048

typedef int32_t k_v8i __attribute__((vector_size(32)));

/*
 * Reduces the input rows that the windows of one output row cover into acc
 * (a row of in[2] values): their largest element or their sum, position by
 * position, eight at a time. The windows then only reduce along acc.
 */
K_SIMD_CLONES static void
reduce_rows(const k_geometry *g, const float *in, tap_range rd, int64_t id0, tap_range rh, int64_t ih0,
            k_pool_mode mode, float *acc)
{
	int64_t n = g->in[2];
	for (int64_t j = 0; j < n; j++)
		acc[j] = mode == K_POOL_MAX ? -FLT_MAX : 0.0f;
	for (int64_t kd = rd.lo; kd < rd.hi; kd++) {
		for (int64_t kh = rh.lo; kh < rh.hi; kh++) {
			const float *src =
				in + ((id0 + kd * g->dilation[0]) * g->in[1] + ih0 + kh * g->dilation[1]) * n;
			int64_t j = 0;
			k_v8 x, y;
			if (mode == K_POOL_MAX) {
				for (; j + 8 <= n; j += 8) {
					K_V8_LOAD(x, src + j);
					K_V8_LOAD(y, acc + j);
					/* x > y is false for NaN: like the reference, NaN is skipped. */
					k_v8i larger = x > y;
					y = (k_v8)(((k_v8i)x & larger) | ((k_v8i)y & ~larger));
					K_V8_STORE(acc + j, y);
				}
				for (; j < n; j++)
					acc[j] = src[j] > acc[j] ? src[j] : acc[j];
			} else {
				for (; j + 8 <= n; j += 8) {
					K_V8_LOAD(x, src + j);
					K_V8_LOAD(y, acc + j);
					y += x;
					K_V8_STORE(acc + j, y);
				}
				for (; j < n; j++)
					acc[j] += src[j];
			}
		}
	}
}

typedef struct pool_args {
	k_geometry g;
	k_pool_mode mode;
	bool count_include_pad;
	const float *x;
	float *y;
	int64_t x_plane, y_plane; /* floats from one plane to the next: in_size and out_size, or more */
} pool_args;

/* One window's result from a reduced row acc, whose first tap would read
 * acc[start]; rd and rh are the taps of the outer axes. */
static float
window_row(const float *acc, int64_t start, tap_range rw, int64_t dilation, k_pool_mode mode,
           bool count_include_pad, tap_range rd, tap_range rh)
{
	if (mode == K_POOL_MAX) {
		float best = -FLT_MAX;
		for (int64_t kw = rw.lo; kw < rw.hi; kw++)
			best = acc[start + kw * dilation] > best ? acc[start + kw * dilation] : best;
		return best;
	}
	float sum = 0;
	for (int64_t kw = rw.lo; kw < rw.hi; kw++)
		sum += acc[start + kw * dilation];
	int64_t divisor = count_include_pad ? rd.padded * rh.padded * rw.padded
	                                    : (rd.hi - rd.lo) * (rh.hi - rh.lo) * (rw.hi - rw.lo);
	return divisor ? sum / (float)divisor : 0.0f;
}

/* Windows [w_lo, w_hi) of an output row, whose taps all lie in the reduced
 * row acc: tap by tap across the windows, so that no window waits on its
 * previous tap. */
static void
inner_windows(const k_geometry *g, const float *acc, int64_t w_lo, int64_t w_hi, k_pool_mode mode,
              bool count_include_pad, tap_range rd, tap_range rh, float *row)
{
	int64_t s = g->stride[2], pad = g->pad[2];
	if (w_lo >= w_hi)
		return;
	for (int64_t ow = w_lo; ow < w_hi; ow++)
		row[ow] = acc[ow * s - pad];
	for (int64_t kw = 1; kw < g->kernel[2]; kw++) {
		int64_t offset = kw * g->dilation[2] - pad;
		if (mode == K_POOL_MAX) {
			for (int64_t ow = w_lo; ow < w_hi; ow++)
				row[ow] = acc[ow * s + offset] > row[ow] ? acc[ow * s + offset] : row[ow];
		} else {
			for (int64_t ow = w_lo; ow < w_hi; ow++)
				row[ow] += acc[ow * s + offset];
		}
	}
	if (mode == K_POOL_AVG) {
		int64_t divisor = count_include_pad ? rd.padded * rh.padded * g->kernel[2]
		                                    : (rd.hi - rd.lo) * (rh.hi - rh.lo) * g->kernel[2];
		for (int64_t ow = w_lo; ow < w_hi; ow++)
			row[ow] = divisor ? row[ow] / (float)divisor : 0.0f;
	}
}

/* Planes [p0, p1): each window's taps are clipped to the input once, so the
 * inner loops run without bounds checks. */
static void
pool_range(void *arg, int64_t p0, int64_t p1)
{
	const pool_args *a = arg;
	const k_geometry *g = &a->g;
	/* Windows [w_lo, w_hi) of a row have every tap inside the input; only
	 * the others need their taps clipped (with divisions). */
	int64_t last = g->in[2] - 1 + g->pad[2] - (g->kernel[2] - 1) * g->dilation[2];
	int64_t w_hi = last < 0 ? 0 : last / g->stride[2] + 1;
	w_hi = w_hi > g->out[2] ? g->out[2] : w_hi;
	int64_t w_lo = k_div_up(g->pad[2], g->stride[2]);
	const tap_range full = { 0, g->kernel[2], g->kernel[2] };
	w_lo = w_lo > w_hi ? w_hi : w_lo;
	for (int64_t plane = p0; plane < p1; plane++) {
		const float *in = a->x + plane * a->x_plane;
		float *out = a->y + plane * a->y_plane;
		for (int64_t od = 0; od < g->out[0]; od++) {
			tap_range rd = taps(g, 0, od);
			int64_t id0 = od * g->stride[0] - g->pad[0];
			for (int64_t oh = 0; oh < g->out[1]; oh++) {
				tap_range rh = taps(g, 1, oh);
				int64_t ih0 = oh * g->stride[1] - g->pad[1];
				float *row = out + (od * g->out[1] + oh) * g->out[2];
				if (g->in[2] <= ROW_MAX) {
					float acc[ROW_MAX];
					reduce_rows(g, in, rd, id0, rh, ih0, a->mode, acc);
					inner_windows(g, acc, w_lo, w_hi, a->mode, a->count_include_pad, rd, rh, row);
					for (int64_t ow = 0; ow < g->out[2]; ow++) {
						if (ow >= w_lo && ow < w_hi)
							continue;
						row[ow] = window_row(acc, ow * g->stride[2] - g->pad[2], taps(g, 2, ow),
						                     g->dilation[2], a->mode, a->count_include_pad, rd, rh);
					}
					continue;
				}
				for (int64_t ow = 0; ow < g->out[2]; ow++) {
					tap_range rw = ow >= w_lo && ow < w_hi ? full : taps(g, 2, ow);
					int64_t iw0 = ow * g->stride[2] - g->pad[2];
					float best = -FLT_MAX, sum = 0;
					for (int64_t kd = rd.lo; kd < rd.hi; kd++) {
						for (int64_t kh = rh.lo; kh < rh.hi; kh++) {
							int64_t base = ((id0 + kd * g->dilation[0]) * g->in[1] + ih0 +
							                kh * g->dilation[1]) * g->in[2] + iw0;
							if (a->mode == K_POOL_MAX) {
								for (int64_t kw = rw.lo; kw < rw.hi; kw++) {
									float v = in[base + kw * g->dilation[2]];
									best = v > best ? v : best;
								}
							} else {
								for (int64_t kw = rw.lo; kw < rw.hi; kw++)
									sum += in[base + kw * g->dilation[2]];
							}
						}
					}
					if (a->mode == K_POOL_MAX) {
						row[ow] = best;
						continue;
					}
					int64_t divisor = a->count_include_pad
					                          ? rd.padded * rh.padded * rw.padded
					                          : (rd.hi - rd.lo) * (rh.hi - rh.lo) * (rw.hi - rw.lo);
					row[ow] = divisor ? sum / (float)divisor : 0.0f;
				}
			}
		}
	}
}

/* Planes per task: enough to carry some 16 k element reads or taps. */
static int64_t
pool_grain(const k_geometry *g)
{
	int64_t work = g->out_size * g->kernel_size + g->in_size;
	return work >= 16384 ? 1 : 16384 / (work + 1) + 1;
}

void
k_pool_general(const k_window *w, k_pool_mode mode, bool count_include_pad, const float *x, float *y,
               const st_exec_ctx *ctx)
{
	pool_args a = { .mode = mode, .count_include_pad = count_include_pad, .x = x, .y = y };
	k_geometry_expand(w, &a.g);
	a.x_plane = a.g.in_size, a.y_plane = a.g.out_size;
	k_parallel_for(ctx, a.g.batch * a.g.in_channels, pool_grain(&a.g), pool_range, &a);
}

/* ---- the vector variants ---- */

typedef pool_args pool_fast_args;

typedef struct global_args {
	int64_t size;
	k_pool_mode mode;
	const float *x;
	float *y;
} global_args;

/* The row buffers of the 2-D loops, on the stack: up to 8 rows at once,
 * fewer when they are long (at least one of ROW_MAX floats and slack). */
#define PB_ROW_MAX ROW_MAX
#define PB_GROUP_ROWS 8
#define PB_GROUP_FLOATS (4 * ROW_MAX)

#define PB_CAT2(a, b) a##_##b
#define PB_CAT(a, b) PB_CAT2(a, b)
#define PB_NAME(x) PB_CAT(x, PB_SUFFIX)

#if PB_X86 && defined(K_HAVE_AVX2)
/* p[0 .. n) then fill, for 0 < n < 8, through a masked load that reads
 * nothing past p[n - 1]. */
static inline __attribute__((always_inline, target("avx2,fma"))) __m256
pool_load_part_avx2(const float *p, int64_t n, float fill)
{
	__m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
	__m256i live = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)n), lanes);
	return _mm256_blendv_ps(_mm256_set1_ps(fill), _mm256_maskload_ps(p, live), _mm256_castsi256_ps(live));
}


#define PB_SUFFIX avx2
#define PB_TARGET __attribute__((target("avx2,fma")))
#define PB_LANES 8
#define PB_MAX(x, m) ((vec_avx2)_mm256_max_ps((__m256)(x), (__m256)(m)))
#define PB_LOAD_PART(p, n, fill) ((vec_avx2)pool_load_part_avx2((p), (n), (fill)))
#define PB_STORE_PART(p, v, n) k_store_part_avx2((p), (__m256)(v), (n))
/* Lanes 0, 2, .. 14 of a then b as vshufps and vpermpd: two shuffles where
 * the generic shuffle became two vpermd and a blend. A 3x3 stride-2 max
 * pool of 128 x 55 x 55 (SqueezeNet's) 0.098 -> 0.072 ms on one thread,
 * Zen 3, alternated ABBA (issue 10, session 15). */
#define PB_SHUFFLE_EVENS(a, b)                                                                              \
	((vec_avx2)_mm256_castpd_ps(_mm256_permute4x64_pd(                                                 \
		_mm256_castps_pd(_mm256_shuffle_ps((__m256)(a), (__m256)(b), _MM_SHUFFLE(2, 0, 2, 0))), 0xD8)))
#include "k-pool-body.h"
#undef PB_SUFFIX
#undef PB_TARGET
#undef PB_LANES
#undef PB_MAX
#undef PB_LOAD_PART
#undef PB_STORE_PART
#undef PB_SHUFFLE_EVENS
#endif

typedef float pb_v4 __attribute__((vector_size(16)));
typedef int32_t pb_v4i __attribute__((vector_size(16)));

/* x > m ? x : m without instructions of one machine (a NaN compares false). */
static inline pb_v4
pool_max_portable(pb_v4 x, pb_v4 m)
{
	pb_v4i larger = x > m;
	return (pb_v4)(((pb_v4i)x & larger) | ((pb_v4i)m & ~larger));
}

#define PB_MAX(x, m) pool_max_portable((x), (m))
/* p[0 .. n) then fill, lane by lane. */
#define PB_LOAD_PART(p, n, fill)                                      \
	__extension__({                                               \
		vec_portable part_ = { (fill), (fill), (fill), (fill) }; \
		memcpy(&part_, (p), (size_t)(n) * sizeof(float));      \
		part_;                                                \
	})
/* Three lanes at most: plain stores beat a call to memcpy. */
#define PB_STORE_PART(p, v, n)                          \
	do {                                            \
		vec_portable whole_ = (v);              \
		for (int64_t lane_ = 0; lane_ < (n); lane_++) \
			(p)[lane_] = whole_[lane_];     \
	} while (0)
#define PB_SUFFIX portable
#define PB_TARGET
#define PB_LANES 4
#include "k-pool-body.h"
#undef PB_SUFFIX
#undef PB_TARGET
#undef PB_LANES
#undef PB_MAX
#undef PB_LOAD_PART
#undef PB_STORE_PART

typedef struct pool_variant {
	st_range_fn pool_planes, global_planes;
} pool_variant;

/*
 * Indexed by k_isa; a level this build lacks has no entry. The AVX-512 level
 * runs the AVX2 loops: compiled for 16 lanes they were measured no faster
 * on the Zen 4 machines (which split 512-bit operations in two), and slower
 * on most layers: ResNet-18's max pooling 0.11 against 0.093 ms, global
 * averages 0.0155 against 0.0097 (bench/pool, docs/performance.md).
 */
static const pool_variant variants[K_ISA_COUNT] = {
	[K_ISA_PORTABLE] = { pool_planes_portable, global_planes_portable },
#if PB_X86 && defined(K_HAVE_AVX2)
	[K_ISA_AVX2] = { pool_planes_avx2, global_planes_avx2 },
#if defined(K_HAVE_AVX512)
	[K_ISA_AVX512] = { pool_planes_avx2, global_planes_avx2 },
#endif
#endif
};

/* Whether the 2-D loops take the window: no depth, no dilation, a column
 * stride of 1 or 2, and rows that fit their stack buffer. */
static bool
pool_fast_fits(const k_geometry *g)
{
	if (g->in[0] != 1 || g->out[0] != 1 || g->kernel[0] != 1 || g->pad[0] != 0)
		return false;
	if (g->dilation[1] != 1 || g->dilation[2] != 1 || g->stride[2] < 1 || g->stride[2] > 2)
		return false;
	if (g->kernel[2] < 1 || g->out[1] < 1 || g->out[2] < 1 || g->in[2] < 1)
		return false;
	return g->pad[2] + g->in[2] <= ROW_MAX && g->stride[2] * g->out[2] + g->kernel[2] <= ROW_MAX;
}

bool
k_pool_with(k_isa isa, const k_window *w, k_pool_mode mode, bool count_include_pad, const float *x, float *y,
            const st_exec_ctx *ctx)
{
	pool_fast_args a = { .mode = mode, .count_include_pad = count_include_pad, .x = x, .y = y };
	k_geometry_expand(w, &a.g);
	a.x_plane = a.g.in_size, a.y_plane = a.g.out_size;
	if (!k_cpu_isa_supported(isa) || variants[isa].pool_planes == NULL || !pool_fast_fits(&a.g))
		return false;
	k_parallel_for(ctx, a.g.batch * a.g.in_channels, pool_grain(&a.g), variants[isa].pool_planes, &a);
	return true;
}

void
k_pool_strided(const k_window *w, k_pool_mode mode, bool count_include_pad, const float *x, int64_t x_plane,
               float *y, int64_t y_plane)
{
	pool_args a = { .mode = mode, .count_include_pad = count_include_pad, .x = x, .y = y, .x_plane = x_plane,
		        .y_plane = y_plane };
	k_geometry_expand(w, &a.g);
	k_isa isa = k_cpu_isa();
	int64_t planes = a.g.batch * a.g.in_channels;
	if (variants[isa].pool_planes != NULL && pool_fast_fits(&a.g))
		variants[isa].pool_planes(&a, 0, planes);
	else
		pool_range(&a, 0, planes);
}

void
k_pool(const k_window *w, k_pool_mode mode, bool count_include_pad, const float *x, float *y,
       const st_exec_ctx *ctx)
{
	if (!k_pool_with(k_cpu_isa(), w, mode, count_include_pad, x, y, ctx))
		k_pool_general(w, mode, count_include_pad, x, y, ctx);
}

/* ---- whole planes ---- */

static float
plane_pool(const float *x, int64_t size, k_pool_mode mode)
{
	if (mode == K_POOL_MAX) {
		float best = -FLT_MAX;
		for (int64_t i = 0; i < size; i++)
			best = x[i] > best ? x[i] : best;
		return best;
	}
	double sum = 0;
	for (int64_t i = 0; i < size; i++)
		sum += x[i];
	return size ? (float)(sum / (double)size) : 0.0f;
}

void
k_global_pool_ref(int64_t planes, int64_t size, k_pool_mode mode, const float *x, float *y)
{
	for (int64_t p = 0; p < planes; p++)
		y[p] = plane_pool(x + p * size, size, mode);
}

bool
k_global_pool_with(k_isa isa, int64_t planes, int64_t size, k_pool_mode mode, const float *x, float *y,
                   const st_exec_ctx *ctx)
{
	if (!k_cpu_isa_supported(isa) || variants[isa].global_planes == NULL)
		return false;
	global_args a = { size, mode, x, y };
	/* At some 20 GB/s, a piece under 64 k elements is a few microseconds
	 * of reading: waking a thread for it costs more than it saves. */
	k_parallel_for(ctx, planes, size >= 65536 ? 1 : 65536 / (size + 1) + 1, variants[isa].global_planes, &a);
	return true;
}

void
k_global_pool(int64_t planes, int64_t size, k_pool_mode mode, const float *x, float *y,
              const st_exec_ctx *ctx)
{
	if (!k_global_pool_with(k_cpu_isa(), planes, size, mode, x, y, ctx))
		k_global_pool_ref(planes, size, mode, x, y);
}

/* ---- channel-blocked tensors (NCHW16C, k-nchwc.h) ---- */

/* Sixteen lanes as two k_v8 halves: the largest (NaN skipped, as by
 * k_pool_ref) or the sum of acc and the sixteen floats at p. */
#define B16_REDUCE(acc, p, mode)                                                         \
	do {                                                                             \
		for (int h_ = 0; h_ < 2; h_++) {                                         \
			k_v8 v_;                                                         \
			K_V8_LOAD(v_, (p) + 8 * h_);                                     \
			if ((mode) == K_POOL_MAX) {                                      \
				k_v8i larger_ = v_ > (acc)[h_];                           \
				(acc)[h_] = (k_v8)(((k_v8i)v_ & larger_) | ((k_v8i)(acc)[h_] & ~larger_)); \
			} else {                                                         \
				(acc)[h_] += v_;                                         \
			}                                                                \
		}                                                                        \
	} while (0)

typedef struct pool_nchwc_args {
	k_geometry g;
	k_pool_mode mode;
	bool count_include_pad;
	const float *x;
	float *y;
	int64_t blocks;
} pool_nchwc_args;

/* Tasks [t0, t1): one output row (sample, block, depth, row) each, every
 * window's taps clipped to the input once and reduced sixteen lanes at a
 * time in the order kd, kh, kw. */
K_SIMD_CLONES static void
pool_nchwc_range(void *arg, int64_t t0, int64_t t1)
{
	const pool_nchwc_args *a = arg;
	const k_geometry *g = &a->g;
	float start = a->mode == K_POOL_MAX ? -FLT_MAX : 0.0f;
	for (int64_t t = t0; t < t1; t++) {
		int64_t oh = t % g->out[1], od = t / g->out[1] % g->out[0], plane = t / (g->out[0] * g->out[1]);
		const float *in = a->x + plane * g->in_size * 16;
		float *out = a->y + ((plane * g->out[0] + od) * g->out[1] + oh) * g->out[2] * 16;
		tap_range rd = taps(g, 0, od), rh = taps(g, 1, oh);
		int64_t id0 = od * g->stride[0] - g->pad[0], ih0 = oh * g->stride[1] - g->pad[1];
		for (int64_t ow = 0; ow < g->out[2]; ow++) {
			tap_range rw = taps(g, 2, ow);
			int64_t iw0 = ow * g->stride[2] - g->pad[2];
			k_v8 acc[2] = { K_V8_SPLAT(start), K_V8_SPLAT(start) };
			for (int64_t kd = rd.lo; kd < rd.hi; kd++)
				for (int64_t kh = rh.lo; kh < rh.hi; kh++) {
					const float *row = in + ((id0 + kd * g->dilation[0]) * g->in[1] + ih0 +
					                         kh * g->dilation[1]) * g->in[2] * 16;
					for (int64_t kw = rw.lo; kw < rw.hi; kw++)
						B16_REDUCE(acc, row + (iw0 + kw * g->dilation[2]) * 16, a->mode);
				}
			if (a->mode == K_POOL_AVG) {
				int64_t divisor = a->count_include_pad
				                          ? rd.padded * rh.padded * rw.padded
				                          : (rd.hi - rd.lo) * (rh.hi - rh.lo) * (rw.hi - rw.lo);
				for (int h = 0; h < 2; h++)
					acc[h] = divisor ? acc[h] / (float)divisor : K_V8_SPLAT(0.0f);
			}
			K_V8_STORE(out + ow * 16, acc[0]);
			K_V8_STORE(out + ow * 16 + 8, acc[1]);
		}
	}
}

void
k_pool_nchwc(const k_window *w, k_pool_mode mode, bool count_include_pad, const float *x, float *y,
             const st_exec_ctx *ctx)
{
	pool_nchwc_args a = { .mode = mode, .count_include_pad = count_include_pad, .x = x, .y = y,
		              .blocks = k_div_up(w->in_channels, 16) };
	k_geometry_expand(w, &a.g);
	int64_t rows = w->batch * a.blocks * a.g.out[0] * a.g.out[1];
	k_parallel_for(ctx, rows, 4, pool_nchwc_range, &a);
	/* A window wholly in the padding has nothing to reduce: max leaves
	 * -FLT_MAX there as k_pool_ref does, in every lane, and lanes past the
	 * channels must be zero. */
	if (mode == K_POOL_MAX)
		k_nchwc_zero_tail(w->batch, w->in_channels, a.g.out[0] * a.g.out[1] * a.g.out[2], y);
}

typedef struct global_nchwc_args {
	int64_t size;
	k_pool_mode mode;
	const float *x;
	float *y;
} global_nchwc_args;

K_SIMD_CLONES static void
global_nchwc_range(void *arg, int64_t b0, int64_t b1)
{
	const global_nchwc_args *a = arg;
	float start = a->mode == K_POOL_MAX ? -FLT_MAX : 0.0f;
	for (int64_t b = b0; b < b1; b++) {
		const float *in = a->x + b * a->size * 16;
		k_v8 acc[2] = { K_V8_SPLAT(start), K_V8_SPLAT(start) };
		for (int64_t p = 0; p < a->size; p++)
			B16_REDUCE(acc, in + p * 16, a->mode);
		for (int h = 0; h < 2 && a->mode == K_POOL_AVG; h++)
			acc[h] = a->size ? acc[h] / (float)a->size : K_V8_SPLAT(0.0f);
		K_V8_STORE(a->y + b * 16, acc[0]);
		K_V8_STORE(a->y + b * 16 + 8, acc[1]);
	}
}

void
k_global_pool_nchwc(int64_t n, int64_t c, int64_t size, k_pool_mode mode, const float *x, float *y,
                    const st_exec_ctx *ctx)
{
	global_nchwc_args a = { .size = size, .mode = mode, .x = x, .y = y };
	int64_t blocks = k_div_up(c, 16);
	k_parallel_for(ctx, n * blocks, 1, global_nchwc_range, &a);
	k_nchwc_zero_tail(n, c, 1, y);
}
