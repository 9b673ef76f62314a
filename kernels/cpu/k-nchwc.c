/* Convolution on channel-blocked tensors (k-nchwc.h). One body, compiled
 * for AVX-512 (a block is one vector), AVX2 with FMA (two) and the
 * baseline instruction set (four); k_cpu_isa() picks one at run time. */
#include "config.h"

#include <assert.h>
#include <stdint.h>
#include <string.h>

#include "k-int.h"
#include "k-nchwc.h"
#include "k-sgemm.h"

#define B K_NCHWC_BLOCK
/* Output channels of a register tile (four blocks) and its outputs along a
 * row: 7 divides the 112, 56, 28, 14 and 7 wide rows of the usual
 * networks, and 7 x 4 sums leave registers for the four weight vectors. */
#define GROUP 64
#define ROW 7

typedef float nc_vec __attribute__((vector_size(B * sizeof(float))));
typedef int32_t nc_ivec __attribute__((vector_size(B * sizeof(int32_t))));

size_t k_nchwc_slice_bytes = 128 * 1024;

int64_t
k_nchwc_floats(int64_t n, int64_t c, int64_t h, int64_t w)
{
	return n * k_div_up(c, B) * B * h * w;
}

/* The conversions' tasks: one (sample, block of 16 channels) each. */
typedef struct convert_args {
	int64_t c, plane, blocks;
	const float *src;
	float *dst;
	bool to_plain; /* blocked to NCHW */
	void (*fn)(const float *src, int64_t plane, int64_t live, float *d);
} convert_args;

/* One block of 16 channels (live of them real) of one sample: the plain
 * planes from src (its first channel), the blocked positions at d. */
static void
from_block(const float *src, int64_t plane, int64_t live, float *d)
{
	for (int64_t p = 0; p < plane; p++)
		for (int64_t l = 0; l < B; l++)
			d[p * B + l] = l < live ? src[l * plane + p] : 0.0f;
}

static void
to_block(const float *src, int64_t plane, int64_t live, float *d)
{
	for (int64_t l = 0; l < live; l++)
		for (int64_t p = 0; p < plane; p++)
			d[l * plane + p] = src[p * B + l];
}

#if defined(__x86_64__) && defined(__GNUC__) && defined(K_HAVE_AVX512)
#include <immintrin.h>
/* The same with AVX-512 gathers: one position's 16 channels, or one
 * channel's 16 positions, a vector at a time. */
__attribute__((target("avx512f"))) static void
from_block_avx512(const float *src, int64_t plane, int64_t live, float *d)
{
	__m512i at = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
	                                _mm512_set1_epi32((int32_t)plane));
	__mmask16 m = (__mmask16)((1u << live) - 1);
	for (int64_t p = 0; p < plane; p++)
		_mm512_storeu_ps(d + p * B, _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, at, src + p, 4));
}

__attribute__((target("avx512f"))) static void
to_block_avx512(const float *src, int64_t plane, int64_t live, float *d)
{
	__m512i at = _mm512_setr_epi32(0, 16, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240);
	for (int64_t p = 0; p < plane; p += B) {
		__mmask16 m = (__mmask16)((1u << k_min64(B, plane - p)) - 1);
		for (int64_t l = 0; l < live; l++)
			_mm512_mask_storeu_ps(d + l * plane + p, m,
			                      _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, at, src + p * B + l, 4));
	}
}
#endif

/* Tasks [t0, t1): one block of one sample each, with a->fn, from the plain
 * planes to the blocked positions or back. */
static void
convert_range(void *arg, int64_t t0, int64_t t1)
{
	const convert_args *a = arg;
	for (int64_t t = t0; t < t1; t++) {
		int64_t s = t / a->blocks, cb = t % a->blocks, live = k_min64(B, a->c - cb * B);
		int64_t plain = (s * a->c + cb * B) * a->plane, blocked = t * a->plane * B;
		if (a->to_plain)
			a->fn(a->src + blocked, a->plane, live, a->dst + plain);
		else
			a->fn(a->src + plain, a->plane, live, a->dst + blocked);
	}
}

/* Either conversion, on ctx's threads: gathers where AVX-512 runs and a
 * plane's 16 channels lie within int32 offsets. */
static void
convert(int64_t n, int64_t c, int64_t h, int64_t w, const float *src, float *dst, bool to_plain,
        const st_exec_ctx *ctx)
{
	convert_args a = { .c = c, .plane = h * w, .blocks = k_div_up(c, B), .src = src, .dst = dst,
		           .to_plain = to_plain, .fn = to_plain ? to_block : from_block };
#if defined(__x86_64__) && defined(__GNUC__) && defined(K_HAVE_AVX512)
	if (k_cpu_isa() == K_ISA_AVX512 && a.plane < INT32_MAX / B)
		a.fn = to_plain ? to_block_avx512 : from_block_avx512;
#endif
	k_parallel_for(ctx, n * a.blocks, 1, convert_range, &a);
}

/* Tasks [t0, t1) between blocked and channels-last tensors: one block of
 * one sample each, its positions' sixteen lanes a run in both. */
static void
convert_nhwc_range(void *arg, int64_t t0, int64_t t1)
{
	const convert_args *a = arg;
	for (int64_t t = t0; t < t1; t++) {
		int64_t s = t / a->blocks, cb = t % a->blocks, live = k_min64(B, a->c - cb * B);
		const float *src = a->src;
		float *dst = a->dst;
		for (int64_t p = 0; p < a->plane; p++) {
			int64_t last = ((s * a->plane + p) * a->c + cb * B), blocked = (t * a->plane + p) * B;
			if (a->to_plain) {
				memcpy(dst + last, src + blocked, (size_t)live * sizeof *dst);
			} else {
				memcpy(dst + blocked, src + last, (size_t)live * sizeof *dst);
				memset(dst + blocked + live, 0, (size_t)(B - live) * sizeof *dst);
			}
		}
	}
}

void
k_nchwc_zero_tail(int64_t n, int64_t c, int64_t plane, float *y)
{
	int64_t live = c % B, blocks = k_div_up(c, B);
	for (int64_t s = 0; live != 0 && s < n; s++) {
		float *last = y + (s * blocks + blocks - 1) * plane * B;
		for (int64_t p = 0; p < plane; p++)
			memset(last + p * B + live, 0, sizeof *last * (size_t)(B - live));
	}
}

void
k_nchwc_from_nhwc(int64_t n, int64_t c, int64_t plane, const float *src, float *dst, const st_exec_ctx *ctx)
{
	convert_args a = { .c = c, .plane = plane, .blocks = k_div_up(c, B), .src = src, .dst = dst };
	k_parallel_for(ctx, n * a.blocks, 1, convert_nhwc_range, &a);
}

void
k_nchwc_to_nhwc(int64_t n, int64_t c, int64_t plane, const float *src, float *dst, const st_exec_ctx *ctx)
{
	convert_args a = { .c = c, .plane = plane, .blocks = k_div_up(c, B), .src = src, .dst = dst,
		           .to_plain = true };
	k_parallel_for(ctx, n * a.blocks, 1, convert_nhwc_range, &a);
}

void
k_nchwc_from_nchw(int64_t n, int64_t c, int64_t h, int64_t w, const float *src, float *dst,
                  const st_exec_ctx *ctx)
{
	convert(n, c, h, w, src, dst, false, ctx);
}

void
k_nchwc_to_nchw(int64_t n, int64_t c, int64_t h, int64_t w, const float *src, float *dst, const st_exec_ctx *ctx)
{
	convert(n, c, h, w, src, dst, true, ctx);
}

bool
k_conv_nchwc_fits(const k_window *w)
{
	if (w->spatial != 2 || w->groups != 1 || w->batch < 1 || w->in_channels < 1 || w->out_channels < 1)
		return false;
	for (int i = 0; i < 2; i++)
		if (w->in[i] < 1 || w->out[i] < 1 || w->kernel[i] < 1 || w->stride[i] < 1 || w->dilation[i] < 1 ||
		    w->pad_begin[i] < 0 || w->pad_end[i] < 0)
			return false;
	return true;
}

size_t
k_conv_nchwc_packed_floats(const k_window *w)
{
	return (size_t)(k_div_up(w->out_channels, GROUP) * k_div_up(w->in_channels, B) * w->kernel[0] *
	                w->kernel[1] * B * GROUP);
}

void
k_conv_nchwc_pack(const k_window *w, const float *weights, float *packed)
{
	int64_t o_all = w->out_channels, c_all = w->in_channels, kh = w->kernel[0], kw = w->kernel[1];
	int64_t cbs = k_div_up(c_all, B);
	memset(packed, 0, k_conv_nchwc_packed_floats(w) * sizeof *packed);
	for (int64_t o = 0; o < o_all; o++)
		for (int64_t c = 0; c < c_all; c++)
			for (int64_t i = 0; i < kh; i++)
				for (int64_t j = 0; j < kw; j++) {
					int64_t at = ((((o / GROUP * cbs + c / B) * kh + i) * kw + j) * B + c % B) * GROUP + o % GROUP;
					packed[at] = weights[((o * c_all + c) * kh + i) * kw + j];
				}
}

/* What one call runs: the window, its operands, and the tasks (sample,
 * group of 64 output channels, output row). */
typedef struct nc_args {
	const k_window *w;
	const float *x, *packed, *bias;
	bool clamp;
	float lo, hi;
	float *y;
	int64_t groups, tasks, chunks;
	int64_t cb_step;      /* input channel blocks per pass over a task's rows */
	int64_t slice_floats; /* the filters of cb_step blocks */
} nc_args;

/* Sixteen zeros, read where a tap falls in the padding. */
static const float nc_zeros[B] __attribute__((aligned(64)));

/* acc + x * w lane by lane: one rounding where the level has FMA. Macros,
 * so that no 64-byte vector crosses a call (whose ABI depends on the
 * level). */
#define nc_fma_portable(acc, x, w) ((acc) + (x) * (w))

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define nc_fma_avx512(acc, x, w) ((nc_vec)_mm512_fmadd_ps((__m512)(x), (__m512)(w), (__m512)(acc)))
#define nc_fma_avx2(acc, x, w)                                          \
	__extension__({                                                 \
		nc_vec a_ = (acc), x_ = (x), w_ = (w);                  \
		__m256 p_[2], q_[2], r_[2];                             \
		memcpy(p_, &a_, sizeof p_);                             \
		memcpy(q_, &x_, sizeof q_);                             \
		memcpy(r_, &w_, sizeof r_);                             \
		p_[0] = _mm256_fmadd_ps(q_[0], r_[0], p_[0]);           \
		p_[1] = _mm256_fmadd_ps(q_[1], r_[1], p_[1]);           \
		memcpy(&a_, p_, sizeof a_);                             \
		a_;                                                     \
	})
#endif

#define NC_BODY(SUF, TARGET)                                                                                     \
	TARGET static void nc_row_##SUF(const nc_args *a, int64_t n, int64_t g, int64_t oh, int64_t cb0,          \
	                                int64_t cb1, int64_t pf)                                                 \
	{                                                                                                        \
		const k_window *w = a->w;                                                                        \
		int64_t H = w->in[0], W = w->in[1], OH = w->out[0], OW = w->out[1];                              \
		int64_t kh = w->kernel[0], kw = w->kernel[1], sh = w->stride[0], sw = w->stride[1];              \
		int64_t dh = w->dilation[0], dw = w->dilation[1], ph = w->pad_begin[0], pw = w->pad_begin[1];    \
		int64_t cbs = k_div_up(w->in_channels, B), obs = k_div_up(w->out_channels, B);                   \
		bool last = cb1 == cbs;                                                                          \
		const float *xs = a->x + n * cbs * H * W * B;                                                    \
		const float *wg = a->packed + g * cbs * kh * kw * B * GROUP;                                     \
		nc_vec lo = (nc_vec){ 0 } + a->lo, hi = (nc_vec){ 0 } + a->hi;                                   \
		for (int64_t ow0 = 0; ow0 < OW; ow0 += ROW) {                                                    \
			nc_vec acc[ROW][4];                                                                      \
			for (int o = 0; o < 4; o++) {                                                            \
				int64_t ch = g * GROUP + o * B, ob = g * 4 + o;                                  \
				if (cb0 > 0 && ob < obs) {                                                       \
					/* The sums of the channel blocks before cb0. */                        \
					const float *yrow = a->y + (((n * obs + ob) * OH + oh) * OW) * B;        \
					for (int r = 0; r < ROW && ow0 + r < OW; r++)                            \
						memcpy(&acc[r][o], yrow + (ow0 + r) * B, sizeof acc[r][o]);      \
					continue;                                                                \
				}                                                                                \
				nc_vec b0 = { 0 };                                                               \
				if (a->bias)                                                                     \
					for (int l = 0; l < B; l++)                                              \
						b0[l] = ch + l < w->out_channels ? a->bias[ch + l] : 0.0f;       \
				_Pragma("GCC unroll 8") for (int r = 0; r < ROW; r++) acc[r][o] = b0;            \
			}                                                                                        \
			for (int64_t cb = cb0; cb < cb1; cb++) {                                                 \
				for (int64_t i = 0; i < kh; i++) {                                               \
					int64_t ih = oh * sh + i * dh - ph;                                      \
					if (ih < 0 || ih >= H)                                                   \
						continue;                                                        \
					const float *xrow = xs + (cb * H + ih) * W * B;                          \
					for (int64_t j = 0; j < kw; j++) {                                       \
						const float *src[ROW];                                           \
						_Pragma("GCC unroll 8") for (int r = 0; r < ROW; r++)            \
						{                                                                \
							int64_t iw = (ow0 + r) * sw + j * dw - pw;               \
							src[r] = ow0 + r < OW && iw >= 0 && iw < W ? xrow + iw * B \
							                                            : nc_zeros;  \
						}                                                                \
						const float *wt = wg + ((cb * kh + i) * kw + j) * B * GROUP;     \
						for (int ci = 0; ci < B; ci++, wt += GROUP) {                    \
							__builtin_prefetch(wt + a->slice_floats + pf, 0, 2);     \
							nc_vec wv[4];                                            \
							_Pragma("GCC unroll 4") for (int o = 0; o < 4; o++)      \
								memcpy(&wv[o], wt + o * B, sizeof wv[o]);        \
							_Pragma("GCC unroll 8") for (int r = 0; r < ROW; r++)    \
							{                                                        \
								nc_vec xv = src[r][ci] - (nc_vec){ 0 };          \
								_Pragma("GCC unroll 4") for (int o = 0; o < 4; o++) \
									acc[r][o] = nc_fma_##SUF(acc[r][o], xv, wv[o]); \
							}                                                        \
						}                                                                \
					}                                                                        \
				}                                                                                \
			}                                                                                        \
			for (int o = 0; o < 4; o++) {                                                            \
				int64_t ob = g * 4 + o;                                                          \
				if (ob >= obs)                                                                   \
					break;                                                                   \
				int64_t live = w->out_channels - ob * B;                                         \
				nc_ivec keep = { 0 };                                                            \
				for (int l = 0; l < B; l++)                                                      \
					keep[l] = l < live ? -1 : 0;                                             \
				float *yrow = a->y + (((n * obs + ob) * OH + oh) * OW) * B;                      \
				for (int r = 0; r < ROW && ow0 + r < OW; r++) {                                  \
					nc_vec v = acc[r][o];                                                    \
					if (!last) {                                                             \
						memcpy(yrow + (ow0 + r) * B, &v, sizeof v);                      \
						continue;                                                        \
					}                                                                        \
					if (a->clamp) {                                                          \
						nc_ivec below = v < lo;                                          \
						v = (nc_vec)((below & (nc_ivec)lo) | (~below & (nc_ivec)v));     \
						nc_ivec above = v > hi;                                          \
						v = (nc_vec)((above & (nc_ivec)hi) | (~above & (nc_ivec)v));     \
					}                                                                        \
					v = (nc_vec)((nc_ivec)v & keep);                                         \
					memcpy(yrow + (ow0 + r) * B, &v, sizeof v);                              \
				}                                                                                \
			}                                                                                        \
		}                                                                                                \
	}                                                                                                        \
	static void nc_chunks_##SUF(void *arg, int64_t c0, int64_t c1)                                           \
	{                                                                                                        \
		const nc_args *a = arg;                                                                          \
		int64_t rows = a->w->out[0], cbs = k_div_up(a->w->in_channels, B);                               \
		for (int64_t c = c0; c < c1; c++) {                                                              \
			int64_t t0 = c * a->tasks / a->chunks, t1 = (c + 1) * a->tasks / a->chunks;              \
			/* The rows of one (sample, group) at a time, a slice of the input's     \
			 * channel blocks over all of them before the next slice. */            \
			for (int64_t t = t0; t < t1;) {                                                          \
				int64_t oh0 = t % rows, rest = t / rows, oh1 = k_min64(rows, oh0 + t1 - t);      \
				for (int64_t cb0 = 0; cb0 < cbs; cb0 += a->cb_step)                              \
					for (int64_t oh = oh0; oh < oh1; oh++)                                   \
						nc_row_##SUF(a, rest / a->groups, rest % a->groups, oh, cb0,     \
						             k_min64(cbs, cb0 + a->cb_step), (oh - oh0) % 4 * B); \
				t += oh1 - oh0;                                                                  \
			}                                                                                        \
		}                                                                                                \
	}

NC_BODY(portable, )
#if defined(__x86_64__) && defined(__GNUC__)
#if defined(K_HAVE_AVX2)
NC_BODY(avx2, __attribute__((target("avx2,fma"))))
#endif
#if defined(K_HAVE_AVX512)
NC_BODY(avx512, __attribute__((target("avx512f,avx512vl,avx512dq,avx2,fma"))))
#endif
#endif

void
k_conv_nchwc(const k_window *w, const float *x, const float *packed, const float *bias, bool clamp, float lo,
             float hi, float *y, const st_exec_ctx *ctx)
{
	assert(k_conv_nchwc_fits(w));
	nc_args a = { .w = w, .x = x, .packed = packed, .bias = bias, .clamp = clamp, .lo = lo, .hi = hi, .y = y };
	a.groups = k_div_up(w->out_channels, GROUP);
	a.tasks = w->batch * a.groups * w->out[0];
	int threads = ctx && ctx->parallel_for ? ctx->n_threads : 1;
	a.chunks = k_min64(a.tasks, threads < 1 ? 1 : threads);
	/* A pass reads k_nchwc_slice_bytes of filters, which then stay in L2
	 * for the other rows: filters that come from memory come once. */
	a.cb_step = k_max64(1, (int64_t)k_nchwc_slice_bytes / (w->kernel[0] * w->kernel[1] * B * GROUP * (int64_t)sizeof(float)));
	a.slice_floats = a.cb_step * w->kernel[0] * w->kernel[1] * B * GROUP;
	st_range_fn fn = nc_chunks_portable;
#if defined(__x86_64__) && defined(__GNUC__)
#if defined(K_HAVE_AVX2)
	if (k_cpu_isa() == K_ISA_AVX2)
		fn = nc_chunks_avx2;
#endif
#if defined(K_HAVE_AVX512)
	if (k_cpu_isa() == K_ISA_AVX512)
		fn = nc_chunks_avx512;
#endif
#endif
	k_parallel_for(ctx, a.chunks, 1, fn, &a);
}
