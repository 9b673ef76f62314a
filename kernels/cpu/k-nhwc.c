/* Depthwise convolution and global pooling on channels-last tensors. The
 * loops are in k-nhwc-body.h, compiled here for AVX-512 (16 lanes), AVX2
 * with FMA (8) and the baseline instruction set (4); k_cpu_isa() picks one
 * at run time. A vector holds consecutive channels of one position, so a
 * tap is one full-width multiply-add whatever the plane's size. */
#include "config.h"

#include <float.h>
#include <stdint.h>
#include <string.h>

#include "k-nhwc.h"
#include "k-int.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define NH_X86 1
#else
#define NH_X86 0
#endif

/* Channels of the packed filters are rounded up to this (the widest
 * vector), whatever the level in use. */
#define NH_PACK_LANES 16

/* Floats of the strip each thread keeps on its stack (k-nhwc-body.h):
 * 32 KiB, the L1 data cache of the machines measured. The strip takes 3 x 3
 * filters on rows of up to 170 outputs at stride 1 with 16 lanes; wider
 * planes read the input in place. */
#define NH_STRIP_FLOATS 8192

/* Channel counts that go through the strip: multiples of this, whose
 * positions lie a multiple of 1 KiB apart (k-nhwc-body.h). */
#define NH_STRIP_CHANNELS 256

/* Channels per block of the global pooling, the unit threads take. */
#define NH_POOL_BLOCK 64

/* What the depthwise loops read, set up once per call. */
typedef struct nh_args {
	int64_t batch, c, h, w, oh, ow;
	int64_t kh, kw, sh, sw, dh, dw, ph, pw;
	int64_t cp;     /* channels of a packed tap */
	int64_t lo, hi; /* the outputs [lo, hi) of a row read every tap from inside the input row */
	int64_t ring;   /* strip rows: the input rows one output row spans */
	int64_t cols;   /* strip positions: the padded input columns a row of outputs spans */
	int64_t copy;   /* input columns copied into a strip row (the rest are not read) */
	bool three;     /* 3 x 3, column dilation 1, column stride 1 or 2: the weights stay in registers */
	bool pairs;     /* also row dilation 1, row stride 1 or 2: two output rows at once where inside */
	bool strip;     /* C a multiple of NH_STRIP_CHANNELS: through the strip, where it fits */
	bool clamp;     /* a relu or clip applied in registers, to [floor, ceil] */
	float floor, ceil;
	const k_post *post; /* another activation, applied to each row once stored; or NULL */
	const float *x, *packed, *bias;
	float *y;
} nh_args;

typedef struct nh_pool_args {
	int64_t batch, positions, channels;
	bool max;
	const float *x;
	float *y;
} nh_pool_args;

/* ---- the variants ---- */

/* NH_CLAMP: max(lo, v) is lo > v ? lo : v, the same comparison as k_clamp's
 * v < lo ? lo : v (a NaN v stays, and of -0 and +0 v stays), and min(hi,
 * v) likewise; so the instructions take the operands in this order. */

#if NH_X86 && defined(K_HAVE_AVX512)
#define VL 16
#define SUF avx512
#define K_TARGET __attribute__((target("avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")))
#define NH_FMA(a, b, c) _mm512_fmadd_ps((a), (b), (c))
#define NH_MASK __mmask16
#define NH_MASK_OF(n) ((__mmask16)((1u << (n)) - 1u))
#define NH_LOAD_PART(p, m) _mm512_maskz_loadu_ps((m), (p))
#define NH_STORE_PART(p, v, m) _mm512_mask_storeu_ps((p), (m), (__m512)(v))
#define NH_CLAMP(v, lo, hi) _mm512_min_ps((hi), _mm512_max_ps((lo), (v)))
#define NH_ROW_GROUP 8
#define NH_PAIR_GROUP 4
#include "k-nhwc-body.h"
#undef VL
#undef SUF
#undef K_TARGET
#undef NH_FMA
#undef NH_CLAMP
#undef NH_MASK
#undef NH_MASK_OF
#undef NH_LOAD_PART
#undef NH_STORE_PART
#undef NH_ROW_GROUP
#undef NH_PAIR_GROUP
#endif

#if NH_X86 && defined(K_HAVE_AVX2)
#define VL 8
#define SUF avx2
#define K_TARGET __attribute__((target("avx2,fma")))
#define NH_FMA(a, b, c) _mm256_fmadd_ps((a), (b), (c))
#define NH_MASK __m256i
#define NH_MASK_OF(n) _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7))
#define NH_LOAD_PART(p, m) _mm256_maskload_ps((p), (m))
/* Not a masked store (k_store_part_avx2 says why); the mask's lanes are a
 * prefix, counted. */
#define NH_STORE_PART(p, v, m)                                                                     \
	k_store_part_avx2((p), (__m256)(v),                                                        \
	                  __builtin_popcount((unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(m))))
#define NH_CLAMP(v, lo, hi) _mm256_min_ps((hi), _mm256_max_ps((lo), (v)))
#define NH_ROW_GROUP 4
#define NH_PAIR_GROUP 2
#include "k-nhwc-body.h"
#undef VL
#undef SUF
#undef K_TARGET
#undef NH_FMA
#undef NH_CLAMP
#undef NH_MASK
#undef NH_MASK_OF
#undef NH_LOAD_PART
#undef NH_STORE_PART
#undef NH_ROW_GROUP
#undef NH_PAIR_GROUP
#endif

/* The baseline: the lanes a tail block keeps are counted, not masked. */
#define VL 4
#define SUF portable
#define K_TARGET
#define NH_FMA(a, b, c) ((a) * (b) + (c))
#define NH_MASK int
#define NH_MASK_OF(n) ((int)(n))
#define NH_LOAD_PART(p, m) load_part_portable((p), (m))
#define NH_STORE_PART(p, v, m)                    \
	do {                                          \
		for (int l_ = 0; l_ < (m); l_++)          \
			(p)[l_] = (v)[l_];                    \
	} while (0)
#define NH_CLAMP(v, lo, hi) clamp_portable((v), (lo), (hi))
#define NH_ROW_GROUP 4
#define NH_PAIR_GROUP 2
#define NH_PORTABLE 1
#include "k-nhwc-body.h"
#undef VL
#undef SUF
#undef K_TARGET
#undef NH_FMA
#undef NH_MASK
#undef NH_MASK_OF
#undef NH_LOAD_PART
#undef NH_STORE_PART
#undef NH_CLAMP
#undef NH_ROW_GROUP
#undef NH_PAIR_GROUP
#undef NH_PORTABLE

typedef struct nh_variant {
	st_range_fn dw_rows; /* over batch x output rows */
	st_range_fn pool_blocks; /* over blocks of NH_POOL_BLOCK channels */
} nh_variant;

/* Indexed by k_isa; a level this build lacks has no entry. */
static const nh_variant variants[K_ISA_COUNT] = {
	[K_ISA_PORTABLE] = { dw_rows_portable, pool_blocks_portable },
#if NH_X86 && defined(K_HAVE_AVX2)
	[K_ISA_AVX2] = { dw_rows_avx2, pool_blocks_avx2 },
#endif
#if NH_X86 && defined(K_HAVE_AVX512)
	[K_ISA_AVX512] = { dw_rows_avx512, pool_blocks_avx512 },
#endif
};

static const nh_variant *
variant_in_use(void)
{
	k_isa isa = k_cpu_isa();
	return variants[isa].dw_rows != NULL ? &variants[isa] : &variants[K_ISA_PORTABLE];
}

/* ---- depthwise convolution ---- */

bool
k_dwconv_nhwc_fits(const k_window *w)
{
	if (w->spatial != 2 || w->batch < 1 || w->in_channels < 1 || w->groups != w->in_channels ||
	    w->out_channels != w->in_channels)
		return false;
	for (int i = 0; i < 2; i++) {
		if (w->in[i] < 1 || w->out[i] < 1 || w->kernel[i] < 1 || w->stride[i] < 1 || w->dilation[i] < 1 ||
		    w->pad_begin[i] < 0)
			return false;
	}
	return true;
}

size_t
k_dwconv_nhwc_packed_floats(const k_window *w)
{
	return (size_t)(w->kernel[0] * w->kernel[1] * k_round_up(w->out_channels, NH_PACK_LANES));
}

void
k_dwconv_nhwc_pack(const k_window *w, const float *filter, float *packed)
{
	int64_t c = w->out_channels, cp = k_round_up(c, NH_PACK_LANES), taps = w->kernel[0] * w->kernel[1];
	memset(packed, 0, k_dwconv_nhwc_packed_floats(w) * sizeof *packed);
	for (int64_t t = 0; t < taps; t++) {
		for (int64_t ch = 0; ch < c; ch++)
			packed[t * cp + ch] = filter[ch * taps + t];
	}
}

void
k_dwconv_nhwc_ref(const k_window *w, const float *x, const float *filter, const float *bias, float *y)
{
	int64_t c = w->out_channels, h = w->in[0], wd = w->in[1], oh = w->out[0], ow = w->out[1];
	int64_t kh = w->kernel[0], kw = w->kernel[1];
	for (int64_t n = 0; n < w->batch; n++)
	for (int64_t i = 0; i < oh; i++)
	for (int64_t j = 0; j < ow; j++)
	for (int64_t ch = 0; ch < c; ch++) {
		double sum = bias ? bias[ch] : 0.0;
		for (int64_t u = 0; u < kh; u++)
		for (int64_t v = 0; v < kw; v++) {
			int64_t ih = i * w->stride[0] - w->pad_begin[0] + u * w->dilation[0];
			int64_t iw = j * w->stride[1] - w->pad_begin[1] + v * w->dilation[1];
			if (ih < 0 || ih >= h || iw < 0 || iw >= wd)
				continue;
			sum += (double)x[((n * h + ih) * wd + iw) * c + ch] * filter[(ch * kh + u) * kw + v];
		}
		y[((n * oh + i) * ow + j) * c + ch] = (float)sum;
	}
}

/* The loops' arguments for window w (k_dwconv_nhwc's contract). */
static nh_args
dw_args(const k_window *w, const float *x, const float *packed, const float *bias, float *y, const k_post *post)
{
	nh_args a = {
		.batch = w->batch, .c = w->out_channels, .h = w->in[0], .w = w->in[1], .oh = w->out[0],
		.ow = w->out[1], .kh = w->kernel[0], .kw = w->kernel[1], .sh = w->stride[0], .sw = w->stride[1],
		.dh = w->dilation[0], .dw = w->dilation[1], .ph = w->pad_begin[0], .pw = w->pad_begin[1],
		.x = x, .packed = packed, .bias = bias, .y = y,
	};
	a.cp = k_round_up(a.c, NH_PACK_LANES);
	int64_t reach = (a.kw - 1) * a.dw, last = a.w - 1 - reach + a.pw; /* the last interior ow has ow * sw <= last */
	a.lo = k_clamp64(k_div_up(a.pw, a.sw), 0, a.ow);
	a.hi = k_clamp64(last < 0 ? 0 : last / a.sw + 1, a.lo, a.ow);
	a.ring = (a.kh - 1) * a.dh + 1;
	a.cols = (a.ow - 1) * a.sw + reach + 1;
	a.copy = k_clamp64(a.cols - a.pw, 0, a.w);
	a.three = a.kh == 3 && a.kw == 3 && a.dw == 1 && a.sw <= 2;
	a.pairs = a.three && a.dh == 1 && a.sh <= 2;
	a.strip = a.c % NH_STRIP_CHANNELS == 0;
	a.clamp = k_post_clamp(post, &a.floor, &a.ceil);
	a.post = post != NULL && post->on && !a.clamp ? post : NULL;
	return a;
}

void
k_dwconv_nhwc(const k_window *w, const float *x, const float *packed, const float *bias, float *y,
              const k_post *post, const st_exec_ctx *ctx)
{
	nh_args a = dw_args(w, x, packed, bias, y, post);
	/* An output row is worth a thread from some 16 k multiply-adds. */
	int64_t work = a.ow * a.c * a.kh * a.kw;
	int64_t grain = work >= 16384 ? 1 : 16384 / (work + 1) + 1;
	k_parallel_for(ctx, a.batch * a.oh, grain, variant_in_use()->dw_rows, &a);
}

/* ---- depthwise convolution, float16 storage ---- */

/* Floats of one band's widened input rows and float32 output rows
 * together: 256 KiB, in L2 from the widening to the narrowing. */
#define NH_HALF_FLOATS 65536

/* Output rows of one band: within the budget where one row allows, and no
 * more than an even share of slots threads. */
static int64_t
dw_half_rows(const k_window *w, int slots)
{
	int64_t c = w->out_channels, in_row = w->in[1] * c, out_row = w->out[1] * c;
	int64_t reach = (w->kernel[0] - 1) * w->dilation[0] + 1, sh = w->stride[0];
	/* rows r need ((r - 1) * sh + reach) input rows and r output rows */
	int64_t room = NH_HALF_FLOATS - (reach - sh) * in_row;
	int64_t rows = room > 0 ? room / (sh * in_row + out_row) : 1;
	int64_t share = k_div_up(w->out[0], slots > 1 ? slots : 1);
	return k_max64(1, k_min64(rows, share));
}

/* Floats of one slot: the input rows of a band, then its output rows. */
static void
dw_half_layout(const k_window *w, int64_t rows, size_t *in_floats, size_t *out_floats)
{
	int64_t c = w->out_channels;
	int64_t reach = (w->kernel[0] - 1) * w->dilation[0] + 1;
	int64_t in_rows = k_min64(w->in[0], (rows - 1) * w->stride[0] + reach);
	*in_floats = k_line_floats(k_max64(1, in_rows) * w->in[1] * c);
	*out_floats = k_line_floats(rows * w->out[1] * c);
}

size_t
k_dwconv_nhwc_half_scratch_bytes(const k_window *w, int slots)
{
	size_t in, out;
	dw_half_layout(w, dw_half_rows(w, slots), &in, &out);
	return (in + out) * sizeof(float) * (size_t)(slots > 1 ? slots : 1);
}

typedef struct dw_half_args {
	nh_args base; /* the whole convolution's, x and y unset */
	int64_t rows, per_image, bands, parts;
	const uint16_t *x;
	uint16_t *y;
	char *scratch;
	size_t in_floats, out_floats;
	st_range_fn dw_rows;
} dw_half_args;

/*
 * Band by band: the input rows a band of output rows reads are widened
 * into the slot and the loops run on them as on an image of those rows
 * alone, its top padding what remains of the real one above them; rows
 * below it are not read. Each output sums the same taps in the same order
 * as on the whole image.
 */
static void
dw_half_parts(void *arg, int64_t c0, int64_t c1)
{
	const dw_half_args *p = arg;
	const nh_args *b = &p->base;
	int64_t in_row = b->w * b->c, out_row = b->ow * b->c;
	for (int64_t c = c0; c < c1; c++) {
		float *xa = (float *)(void *)(p->scratch + (size_t)c * (p->in_floats + p->out_floats) * sizeof(float));
		float *ya = xa + p->in_floats;
		for (int64_t band = c * p->bands / p->parts; band < (c + 1) * p->bands / p->parts; band++) {
			int64_t n = band / p->per_image, r0 = band % p->per_image * p->rows;
			int64_t r1 = k_min64(b->oh, r0 + p->rows);
			int64_t first = k_max64(0, r0 * b->sh - b->ph);
			int64_t end = k_min64(b->h, (r1 - 1) * b->sh - b->ph + (b->kh - 1) * b->dh + 1);
			nh_args a = *b;
			a.batch = 1;
			a.oh = r1 - r0;
			a.ph = b->ph - r0 * b->sh + first;
			a.x = xa;
			a.y = ya;
			if (end > first) {
				a.h = end - first;
				k_half_to_float_array(p->x + (n * b->h + first) * in_row, xa, a.h * in_row);
			} else {
				/* Every tap of the band is padding: one zero row out of reach. */
				a.h = 1;
				a.ph = a.oh * b->sh + b->kh * b->dh;
				memset(xa, 0, (size_t)in_row * sizeof *xa);
			}
			p->dw_rows(&a, 0, a.oh);
			k_float_to_half_array(ya, p->y + (n * b->oh + r0) * out_row, a.oh * out_row);
		}
	}
}

void
k_dwconv_nhwc_half(const k_window *w, const uint16_t *x, const float *packed, const float *bias, uint16_t *y,
                   const k_post *post, void *scratch, int slots, const st_exec_ctx *ctx)
{
	dw_half_args a = { .base = dw_args(w, NULL, packed, bias, NULL, post), .x = x, .y = y, .scratch = scratch,
		           .dw_rows = variant_in_use()->dw_rows };
	if (a.base.batch < 1 || a.base.oh < 1 || a.base.ow < 1 || a.base.c < 1)
		return;
	a.rows = dw_half_rows(w, slots);
	dw_half_layout(w, a.rows, &a.in_floats, &a.out_floats);
	a.per_image = k_div_up(a.base.oh, a.rows);
	a.bands = a.base.batch * a.per_image;
	a.parts = k_slot_parts(ctx, slots, a.bands);
	k_parallel_for(ctx, a.parts, 1, dw_half_parts, &a);
}

/* ---- global pooling ---- */

void
k_global_pool_nhwc(int64_t batch, int64_t positions, int64_t channels, k_pool_mode mode, const float *x,
                   float *y, const st_exec_ctx *ctx)
{
	if (batch < 1 || channels < 1)
		return;
	nh_pool_args a = { batch, positions, channels, mode == K_POOL_MAX, x, y };
	/* At some 20 GB/s, under 64 k elements is a few microseconds of reading:
	 * less than waking a thread costs. */
	int64_t blocks = k_div_up(channels, NH_POOL_BLOCK), work = batch * positions * NH_POOL_BLOCK;
	int64_t grain = work >= 65536 ? 1 : 65536 / (work + 1) + 1;
	k_parallel_for(ctx, blocks, grain, variant_in_use()->pool_blocks, &a);
}
