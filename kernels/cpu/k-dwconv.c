/* Direct convolutions on the CPU, for the shapes where im2col and GEMM do
 * badly: depthwise convolutions (one input channel per group) and a
 * network's first layer (a few input channels, many outputs). The loops are
 * in k-dwconv-body.h, compiled here for AVX-512, for AVX2 with FMA and for
 * the baseline instruction set; one is chosen at run time. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "k-cpu.h"
#include "k-nn.h"
#include "k-int.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define DW_X86 1
#else
#define DW_X86 0
#endif

/* Filter rows (depth x height) the depthwise loops gather per output row. */
#define DW_MAX_ROWS 64

/* Padded planes of at most this many floats (256 KiB) are copied for the
 * general depthwise loops (dw_args). */
#define DW_COPY_MOST_FLOATS (64 * 1024)

/* Output rows the 3 x 3 stride-2 loops compute at once: their sums are
 * independent chains of multiply-adds, which a single row (of often no
 * more than one vector) would not give. */
#define DW3S2_ROWS 4
_Static_assert(DW3S2_ROWS == 4, "dw3s2_plane calls its loops with 4, 3, 2 or 1 rows");

/* Output rows this short are computed as one flattened row (dw_args), for
 * filters of at most DW_NARROW_TAPS taps. */
#define DW_NARROW 8
#define DW_NARROW_TAPS 64
#define DW_NARROW_SLACK (3 * WIDEST_LANES)

/* Bytes of padded input one thread keeps for the first-layer kernel: read
 * again for every block of output channels, so it should stay in L2. */
#define FEW_SLOT_TARGET_BYTES (64 * 1024)

/* Widest vector of any variant, in floats: the first-layer kernel's padded
 * rows are long enough for it. */
#define WIDEST_LANES 16

/* The depthwise loops with the channels in the lanes (k-dwconv-lanes.h)
 * take output planes of at most this many floats, filters of at most
 * DW_LANES_TAPS taps and at least DW_LANES_LEAST_CHANNELS channels (fewer
 * would leave most lanes of the widest vectors empty); dw_lanes_pays says
 * where they are faster (they are slower on wider outputs with any vectors). */
#define DW_LANES_MOST_OUTPUTS (32 * 32)
#define DW_LANES_MOST_WIDTH 20
#define DW_LANES_TAPS 64
#define DW_LANES_LEAST_CHANNELS 8

/* Whether the window is 2-D (or 1-D): one output depth that reads the one
 * input depth (a padded depth axis would read only padding). */
static bool
flat(const k_geometry *g)
{
	return g->in[0] == 1 && g->out[0] == 1 && g->kernel[0] == 1 && g->pad[0] == 0;
}

/* ---- depthwise: what every variant shares ---- */

/* The input rows that reach one output row, with the filter row applied to
 * each (rows above or below the input are left out). */
typedef struct dw_rows {
	int count;
	const float *in[DW_MAX_ROWS];   /* the first element of each input row */
	const float *taps[DW_MAX_ROWS]; /* its filter row */
} dw_rows;

typedef enum dw_kind { DW_GENERAL, DW_3X3_STRIDE1, DW_3X3_STRIDE2 } dw_kind;

/*
 * Where the loops with the channels in the lanes keep a block's input. A
 * padded input position (row, column), counted from the top left of the
 * padding, is split into its phases (row mod stride, column mod stride)
 * and its place in that phase's plane (row / stride, column / stride): the
 * planes of the stride[1] x stride[2] phases follow each other, each of
 * `rows` x `cols` positions. Output (oh, ow) is numbered q = oh x cols +
 * ow, and its tap t lies at position q + tap_at[t] whatever the output:
 * consecutive outputs read consecutive positions. A position is a vector
 * of L floats, one per channel of the block.
 */
typedef struct dw_lanes_plan {
	bool on;
	int64_t sh, sw;             /* the strides */
	int64_t rows, cols;         /* of each phase's plane */
	int64_t last_row, last_col; /* the last padded row and column an output reads */
	int64_t q_end;              /* every output has q below it */
	int taps;
	int64_t tap_at[DW_LANES_TAPS];
	int64_t tap_index[DW_LANES_TAPS]; /* the tap's place in a filter */
	/* A slot, in floats of WIDEST_LANES lanes: the input positions (as
	 * many as the phases hold, or as the last block of outputs reads), the
	 * weight vectors, then WIDEST_LANES staging rows of stage_pitch
	 * outputs (q), the blocks rounded up. */
	int64_t buf_floats, wts_floats, stage_pitch, slot_floats;
} dw_lanes_plan;

/* The position of padded input (row, col) in a dw_lanes_plan. The strides
 * are 1 or 2: stride - 1 is both the mask of the phase and the shift of
 * the place (a division here would cost more than the copy it addresses). */
static inline int64_t
dw_lanes_at(const dw_lanes_plan *p, int64_t row, int64_t col)
{
	int64_t rs = p->sh - 1, cs = p->sw - 1;
	return ((((row & rs) << cs) + (col & cs)) * p->rows + (row >> rs)) * p->cols + (col >> cs);
}

typedef struct dw_args {
	k_geometry g;
	dw_kind kind;
	/* The outputs [lo, hi) of a row read every tap from inside the input row. */
	int64_t lo, hi;
	/* The general loops on a small 2-D plane: each thread first copies the
	 * input plane into its scratch slot with the padding written out, so
	 * that no block reaches outside a row; `copy` is the geometry of that
	 * copy (no padding left, rows of copy.in[2] floats). */
	bool padded;
	k_geometry copy;
	/* Output rows of at most DW_NARROW floats (stride 1): the copy's rows
	 * are no longer than the outputs read, and the plane is computed as one
	 * row of copy.in[1] x copy.in[2] floats (output (oh, ow) at
	 * oh * copy.in[2] + ow), vectors not being wasted on short rows. */
	bool narrow;
	/* 3 x 3 at stride 2 both ways, flat: dw3s2_plane, DW3S2_ROWS output
	 * rows at a time, each input vector split into even and odd columns in
	 * registers; nothing is copied. */
	bool split;
	/* Small planes of many channels: dw_lanes (k-dwconv-lanes.h). */
	dw_lanes_plan lanes;
	const k_post *post; /* applied to each plane once computed, or NULL */
	/* At stride 2 a copied row is kept as its even columns, then its odd
	 * ones from float `phase` on, so that every tap reads consecutive
	 * floats; 0 at stride 1. */
	int64_t phase;
	size_t slot_floats;
	int64_t chunks;
	float *scratch;
	const float *x, *weights, *bias;
	float *y;
} dw_args;

static void
dw_rows_make(const k_geometry *g, const float *in, const float *filter, int64_t od, int64_t oh, dw_rows *r)
{
	r->count = 0;
	for (int64_t kd = 0; kd < g->kernel[0]; kd++) {
		int64_t id = od * g->stride[0] - g->pad[0] + kd * g->dilation[0];
		if (id < 0 || id >= g->in[0])
			continue;
		for (int64_t kh = 0; kh < g->kernel[1]; kh++) {
			int64_t ih = oh * g->stride[1] - g->pad[1] + kh * g->dilation[1];
			if (ih < 0 || ih >= g->in[1])
				continue;
			r->in[r->count] = in + (id * g->in[1] + ih) * g->in[2];
			r->taps[r->count] = filter + (kd * g->kernel[1] + kh) * g->kernel[2];
			r->count++;
		}
	}
}

/* The plan of the loops with the channels in the lanes, when they take g. */
static bool
dw_lanes_make(const k_geometry *g, dw_lanes_plan *p)
{
	*p = (dw_lanes_plan){ 0 };
	if (!flat(g) || g->in_per_group != 1 || g->out_channels < DW_LANES_LEAST_CHANNELS ||
	    g->out_size > DW_LANES_MOST_OUTPUTS || g->out[2] > DW_LANES_MOST_WIDTH ||
	    g->kernel[1] * g->kernel[2] > DW_LANES_TAPS || g->stride[1] > 2 || g->stride[2] > 2)
		return false;
	p->sh = g->stride[1], p->sw = g->stride[2];
	int64_t reach_h = (g->kernel[1] - 1) * g->dilation[1], reach_w = (g->kernel[2] - 1) * g->dilation[2];
	p->rows = g->out[1] + reach_h / p->sh;
	p->cols = g->out[2] + reach_w / p->sw;
	p->last_row = (g->out[1] - 1) * p->sh + reach_h;
	p->last_col = (g->out[2] - 1) * p->sw + reach_w;
	p->q_end = (g->out[1] - 1) * p->cols + g->out[2];
	int64_t most = 0;
	for (int64_t kh = 0; kh < g->kernel[1]; kh++) {
		for (int64_t kw = 0; kw < g->kernel[2]; kw++) {
			int64_t at = dw_lanes_at(p, kh * g->dilation[1], kw * g->dilation[2]);
			p->tap_at[p->taps] = at;
			p->tap_index[p->taps] = kh * g->kernel[2] + kw;
			p->taps++;
			most = at > most ? at : most;
		}
	}
	p->stage_pitch = k_div_up(p->q_end, WIDEST_LANES) * WIDEST_LANES;
	int64_t positions = p->sh * p->sw * p->rows * p->cols;
	if (positions < p->stage_pitch + most)
		positions = p->stage_pitch + most;
	p->buf_floats = positions * WIDEST_LANES;
	p->wts_floats = p->taps * WIDEST_LANES;
	p->slot_floats = p->buf_floats + p->wts_floats + WIDEST_LANES * p->stage_pitch;
	p->on = true;
	return true;
}

/*
 * Whether the loops with the channels in the lanes beat the loops on
 * planes for g, with vectors of `lanes` floats. Their two transposes cost
 * as much as the sums, so they pay where a plane's rows fit the vectors
 * badly: measured one thread with 3 x 3 filters (bench/dwconv, and the
 * MobileNetV2 planes), with 16 floats 1.6 times as fast on 14 x 14 and
 * 7 x 7 outputs (both strides) and 1.15 times on 20 x 20, 0.9 times on
 * 28 x 28 and 0.7 on 32 x 32; with 4 (portable) 3.3 times as fast on 14 x
 * 14; with 8 floats (AVX2, whose rows of 14 take two vectors) 1.7 times as
 * fast on 7 x 7 outputs at stride 2, but 0.9 times on 7 x 7 at stride 1
 * and 0.85 on 28 x 28.
 */
static bool
dw_lanes_pays(int lanes, const k_geometry *g)
{
	if (lanes == 8)
		return g->stride[2] == 2 && g->out[2] <= 8;
	return g->out[2] <= DW_LANES_MOST_WIDTH;
}

static void
dw_args_make(const k_window *w, dw_args *a)
{
	k_geometry *g = &a->g;
	k_geometry_expand(w, g);
	dw_lanes_make(g, &a->lanes);
	int64_t step = g->stride[2], pad = g->pad[2];
	a->kind = DW_GENERAL;
	if (g->kernel[0] == 1 && g->kernel[1] == 3 && g->kernel[2] == 3 && g->dilation[1] == 1 &&
	    g->dilation[2] == 1 && (step == 1 || step == 2))
		a->kind = step == 1 ? DW_3X3_STRIDE1 : DW_3X3_STRIDE2;
	int64_t reach = (g->kernel[2] - 1) * g->dilation[2];
	a->lo = k_clamp64(k_div_up(pad, step), 0, g->out[2]);
	int64_t last = g->in[2] - 1 - reach + pad; /* the last ow has ow * step <= last */
	a->hi = last < 0 ? 0 : last / step + 1;
	a->hi = k_clamp64(a->hi, a->lo, g->out[2]);
	a->padded = a->narrow = a->split = false;
	if (flat(g) && step == 1 && g->stride[1] == 1 && g->out[2] <= DW_NARROW &&
	    g->kernel[1] * g->kernel[2] <= DW_NARROW_TAPS) {
		int64_t rows = g->out[1] + (g->kernel[1] - 1) * g->dilation[1];
		int64_t cols = g->out[2] + reach;
		cols = cols > pad + g->in[2] ? cols : pad + g->in[2];
		if (rows * cols <= DW_COPY_MOST_FLOATS) {
			a->padded = a->narrow = true;
			a->phase = 0;
			a->copy = *g;
			a->copy.in[1] = rows;
			a->copy.in[2] = cols;
			a->copy.pad[1] = a->copy.pad[2] = 0;
			a->copy.in_size = rows * cols;
			/* The vectors read up to three vectors past the copy. */
			a->slot_floats = (size_t)(rows * cols + DW_NARROW_SLACK);
			return;
		}
	}
	/* 3 x 3 at stride 2 both ways: dw3s2_plane, on the input in place. */
	a->split = a->kind == DW_3X3_STRIDE2 && flat(g) && g->stride[1] == 2;
	if (a->split)
		return;
	if (a->kind != DW_GENERAL || !flat(g) || step > 2)
		return;
	/* The copy holds every float the vectors read: whole vectors of the
	 * widest variant up to the end of each output row. */
	int64_t rows = (g->out[1] - 1) * g->stride[1] + (g->kernel[1] - 1) * g->dilation[1] + 1;
	int64_t out_cols = g->out[2] > WIDEST_LANES ? g->out[2] : WIDEST_LANES;
	int64_t cols = (out_cols - 1) * step + reach + 1;
	cols = k_div_up(cols > pad + g->in[2] ? cols : pad + g->in[2], 16) * 16;
	a->phase = 0;
	if (step == 2) {
		a->phase = k_div_up(k_div_up(cols, 2), 16) * 16;
		cols = 2 * a->phase;
	}
	if (rows * cols > DW_COPY_MOST_FLOATS)
		return;
	a->padded = true;
	a->copy = *g;
	a->copy.in[1] = rows;
	a->copy.in[2] = cols;
	a->copy.pad[1] = a->copy.pad[2] = 0;
	a->copy.in_size = rows * cols;
	a->slot_floats = (size_t)(rows * cols);
}

/* ---- first layer: what every variant shares ---- */

typedef struct few_plan {
	k_geometry g;
	int64_t band, bands;    /* output rows per task; tasks per sample */
	int64_t tasks;          /* batch x bands */
	int64_t band_rows;      /* padded input rows a band of `band` output rows reads */
	int64_t row_floats;     /* length of a padded row */
	/* At stride 2 a padded row is kept as its even columns, then its odd
	 * ones from column `phase` on, so that every tap reads consecutive
	 * floats; 0 at stride 1. */
	int64_t phase;
	int64_t taps;           /* in_channels x kernel height x kernel width */
	int64_t band_floats;    /* in_channels x band_rows x row_floats */
	/* band_floats, then the taps' offsets (int32, as many floats) */
	size_t slot_floats;
	/* Where output row oh of channel c goes: (oh - out_row0) x out[2] +
	 * c x out_plane floats into the output given; 0 and the output's
	 * plane, except into a band of rows (k_conv_pool_direct). */
	int64_t out_plane, out_row0;
} few_plan;

typedef struct few_args {
	const few_plan *p;
	const float *x, *weights, *bias;
	const k_post *post; /* applied to each band of rows once computed, or NULL */
	float *y;
	float *scratch;
	int64_t chunks;
} few_args;

/* The padded input rows a band reads, with the band's own sizes. */
static int64_t
few_band_rows(const k_geometry *g, int64_t band)
{
	return (band - 1) * g->stride[1] + (g->kernel[1] - 1) * g->dilation[1] + 1;
}

/* The taps' offsets in a band, in the filters' order (input channel,
 * row, column), from the first input of its first row that an output
 * row's first column reads: at stride 2, into the column phases. */
static void
few_offsets(const few_plan *p, int32_t *offs)
{
	const k_geometry *g = &p->g;
	int64_t t = 0;
	for (int64_t c = 0; c < g->in_channels; c++)
		for (int64_t kh = 0; kh < g->kernel[1]; kh++)
			for (int64_t kw = 0; kw < g->kernel[2]; kw++) {
				int64_t col = kw * g->dilation[2];
				int64_t at = g->stride[2] == 1 ? col : (col & 1) * p->phase + (col >> 1);
				offs[t++] = (int32_t)((c * p->band_rows + kh * g->dilation[1]) * p->row_floats + at);
			}
}

/* Plans the first-layer kernel for `threads` threads. The slot size does
 * not depend on the thread count: more threads only make bands shorter. */
static void
few_plan_make(const k_window *w, int threads, few_plan *p)
{
	*p = (few_plan){ 0 };
	k_geometry *g = &p->g;
	k_geometry_expand(w, g);
	/* A padded row holds every float the vectors read, whole vectors of the
	 * widest variant up to the end of the output row included. */
	int64_t out_cols = k_div_up(g->out[2], WIDEST_LANES) * WIDEST_LANES;
	int64_t reads = (out_cols - 1) * g->stride[2] + (g->kernel[2] - 1) * g->dilation[2] + g->stride[2];
	int64_t row = reads > g->pad[2] + g->in[2] ? reads : g->pad[2] + g->in[2];
	p->row_floats = k_div_up(row, 16) * 16;
	if (g->stride[2] == 2) {
		p->phase = k_div_up(k_div_up(row, 2), 16) * 16;
		p->row_floats = 2 * p->phase;
	}
	int64_t row_bytes = g->in_channels * p->row_floats * (int64_t)sizeof(float);
	int64_t band = 1;
	while (band < g->out[1] && few_band_rows(g, band + 1) * row_bytes <= FEW_SLOT_TARGET_BYTES)
		band++;
	p->band_rows = few_band_rows(g, band);
	p->band_floats = g->in_channels * p->band_rows * p->row_floats;
	p->taps = g->in_channels * g->kernel[1] * g->kernel[2];
	p->slot_floats = (size_t)(p->band_floats + k_div_up(p->taps, 16) * 16);
	/* Enough bands for every thread, in a multiple of the threads when
	 * there is one sample. */
	int64_t bands = k_div_up(g->out[1], band);
	if (g->batch * bands < threads)
		bands = k_div_up(threads, g->batch);
	if (g->batch == 1 && threads > 1)
		bands = k_div_up(bands, threads) * threads;
	if (bands > g->out[1])
		bands = g->out[1];
	p->band = k_div_up(g->out[1], bands);
	p->bands = k_div_up(g->out[1], p->band);
	p->tasks = g->batch * p->bands;
	p->out_plane = g->out_size;
	p->out_row0 = 0;
}

/* ---- the variants ---- */

#define DW_CAT2(a, b) a##_##b
#define DW_CAT(a, b) DW_CAT2(a, b)
#define DW_NAME(x) DW_CAT(x, DW_SUFFIX)

#if DW_X86 && defined(K_HAVE_AVX512)
#define DW_SUFFIX avx512
#define DW_TARGET __attribute__((target("avx512f,avx512vl,avx2,fma")))
#define DW_LANES 16
#define DW_FMA(a, b, c) _mm512_fmadd_ps((a), (b), (c))
#define DW_FEW_OUTPUTS 8
#define DW_FEW_BLOCKS 3
#define DW_MASKED_LOADS 512
#include "k-dwconv-body.h"
#undef DW_SUFFIX
#undef DW_TARGET
#undef DW_LANES
#undef DW_FMA
#undef DW_FEW_OUTPUTS
#undef DW_FEW_BLOCKS
#undef DW_MASKED_LOADS
#endif

#if DW_X86 && defined(K_HAVE_AVX2)
#define DW_SUFFIX avx2
#define DW_TARGET __attribute__((target("avx2,fma")))
#define DW_LANES 8
#define DW_FMA(a, b, c) _mm256_fmadd_ps((a), (b), (c))
#define DW_FEW_OUTPUTS 4
#define DW_FEW_BLOCKS 3
#define DW_MASKED_LOADS 256
#include "k-dwconv-body.h"
#undef DW_SUFFIX
#undef DW_TARGET
#undef DW_LANES
#undef DW_FMA
#undef DW_FEW_OUTPUTS
#undef DW_FEW_BLOCKS
#undef DW_MASKED_LOADS
#endif

#define DW_SUFFIX portable
#define DW_TARGET
#define DW_LANES 4
#define DW_FMA(a, b, c) ((a) * (b) + (c))
#define DW_FEW_OUTPUTS 4
#define DW_FEW_BLOCKS 2
#define DW_MASKED_LOADS 0
#include "k-dwconv-body.h"
#undef DW_SUFFIX
#undef DW_TARGET
#undef DW_LANES
#undef DW_FMA
#undef DW_FEW_OUTPUTS
#undef DW_FEW_BLOCKS
#undef DW_MASKED_LOADS

typedef void (*few_compute_fn)(const few_plan *p, const float *in, const float *weights, const float *bias,
                               int64_t oh0, int64_t oh1, float *band, float *out);

typedef struct direct_variant {
	const char *name;
	int lanes; /* floats per vector */
	st_range_fn dw_planes;  /* over n x out_channels planes */
	st_range_fn dw_chunks;  /* over chunks of those planes, copied first */
	st_range_fn dw_lanes;   /* over chunks of blocks of channels (dw_lanes_plan) */
	st_range_fn few_chunks; /* over chunks of the first-layer tasks */
	few_compute_fn few_compute; /* one band of first-layer rows */
} direct_variant;

/* Indexed by k_isa; a level this build lacks has no entry. */
static const direct_variant variants[K_ISA_COUNT] = {
	[K_ISA_PORTABLE] = { "portable", 4, dw_planes_portable, dw_chunks_portable, dw_lanes_portable,
	                     few_chunks_portable, few_compute_portable },
#if DW_X86 && defined(K_HAVE_AVX2)
	[K_ISA_AVX2] = { "avx2", 8, dw_planes_avx2, dw_chunks_avx2, dw_lanes_avx2, few_chunks_avx2, few_compute_avx2 },
#endif
#if DW_X86 && defined(K_HAVE_AVX512)
	[K_ISA_AVX512] = { "avx512", 16, dw_planes_avx512, dw_chunks_avx512, dw_lanes_avx512, few_chunks_avx512,
	                   few_compute_avx512 },
#endif
};

/* ---- entry points ---- */

k_direct_kind
k_conv_direct_fits(const k_window *w)
{
	k_geometry g;
	k_geometry_expand(w, &g);
	if (g.batch < 1 || g.out_channels < 1 || g.in_channels < 1 || g.out_size < 1)
		return K_DIRECT_NONE;
	if (g.groups == 1 && g.in_channels <= 4 && flat(&g) && g.stride[1] <= 2 && g.stride[2] <= 2)
		return K_DIRECT_FEW_CHANNELS;
	if (g.in_per_group == 1 && g.kernel[0] * g.kernel[1] <= DW_MAX_ROWS)
		return K_DIRECT_DEPTHWISE;
	return K_DIRECT_NONE;
}

k_direct_kind
k_conv_direct_chosen(const k_window *w)
{
	k_direct_kind kind = k_conv_direct_fits(w);
	k_geometry g;
	k_geometry_expand(w, &g);
	/* Many outputs of one input channel make a good GEMM again: measured
	 * with 3x3 and 5x5 filters, the direct loops are faster up to a depth
	 * multiplier of 12 and slower from 16. */
	if (kind == K_DIRECT_DEPTHWISE && g.out_per_group >= 16)
		return K_DIRECT_NONE;
	return kind;
}

size_t
k_conv_direct_scratch_bytes(const k_window *w, int slots)
{
	size_t slot_floats = 0;
	k_direct_kind kind = k_conv_direct_fits(w);
	if (kind == K_DIRECT_FEW_CHANNELS) {
		few_plan p;
		few_plan_make(w, 1, &p);
		slot_floats = p.slot_floats;
	} else if (kind == K_DIRECT_DEPTHWISE) {
		dw_args a = { 0 };
		dw_args_make(w, &a);
		slot_floats = a.padded ? a.slot_floats : 0;
		if (a.lanes.on && (size_t)a.lanes.slot_floats > slot_floats)
			slot_floats = (size_t)a.lanes.slot_floats;
	}
	return slot_floats * sizeof(float) * (size_t)(slots < 1 ? 1 : slots);
}

bool
k_conv_direct_with(k_isa isa, const k_window *w, const float *x, const float *weights, const float *bias,
                   float *y, void *scratch, int slots, const st_exec_ctx *ctx)
{
	return k_conv_direct_post_with(isa, w, x, weights, bias, y, scratch, slots, NULL, ctx);
}

bool
k_conv_direct_post_with(k_isa isa, const k_window *w, const float *x, const float *weights, const float *bias,
                        float *y, void *scratch, int slots, const k_post *post, const st_exec_ctx *ctx)
{
	if (post != NULL && !post->on)
		post = NULL;
	if (!k_cpu_isa_supported(isa) || variants[isa].dw_planes == NULL)
		return false;
	const direct_variant *v = &variants[isa];
	k_direct_kind kind = k_conv_direct_fits(w);
	if (kind == K_DIRECT_DEPTHWISE) {
		dw_args a = { 0 };
		dw_args_make(w, &a);
		a.x = x, a.weights = weights, a.bias = bias, a.y = y, a.scratch = scratch, a.post = post;
		/* A plane is worth a thread from some 16 k multiply-adds. */
		int64_t planes = a.g.batch * a.g.out_channels, work = a.g.out_size * a.g.kernel_size;
		int64_t grain = work >= 16384 ? 1 : 16384 / (work + 1) + 1;
		if (a.lanes.on && dw_lanes_pays(v->lanes, &a.g)) {
			int64_t blocks = a.g.batch * k_div_up(a.g.out_channels, v->lanes);
			int64_t threads = k_threads_used(slots, ctx), most = k_div_up(blocks * v->lanes, grain);
			a.chunks = threads < most ? threads : most;
			a.chunks = a.chunks < blocks ? a.chunks : blocks;
			k_parallel_for(ctx, a.chunks, 1, v->dw_lanes, &a);
		} else if (a.padded) {
			int64_t threads = k_threads_used(slots, ctx), most = k_div_up(planes, grain);
			a.chunks = threads < most ? threads : most;
			k_parallel_for(ctx, a.chunks, 1, v->dw_chunks, &a);
		} else {
			k_parallel_for(ctx, planes, grain, v->dw_planes, &a);
		}
		return true;
	}
	if (kind == K_DIRECT_FEW_CHANNELS) {
		int threads = k_threads_used(slots, ctx);
		few_plan p;
		few_plan_make(w, threads, &p);
		few_args a = { .p = &p, .x = x, .weights = weights, .bias = bias, .post = post, .y = y, .scratch = scratch };
		a.chunks = p.tasks < threads ? p.tasks : threads;
		k_parallel_for(ctx, a.chunks, 1, v->few_chunks, &a);
		return true;
	}
	return false;
}

void
k_conv_direct(const k_window *w, const float *x, const float *weights, const float *bias, float *y,
              void *scratch, int slots, const st_exec_ctx *ctx)
{
	k_conv_direct_with(k_cpu_isa(), w, x, weights, bias, y, scratch, slots, ctx);
}

void
k_conv_direct_post(const k_window *w, const float *x, const float *weights, const float *bias, float *y,
                   void *scratch, int slots, const k_post *post, const st_exec_ctx *ctx)
{
	k_conv_direct_post_with(k_cpu_isa(), w, x, weights, bias, y, scratch, slots, post, ctx);
}

/* ---- a first layer and the max pooling after it, band by band ---- */

/*
 * A network's first convolution writes the largest tensor of the network
 * (ResNet-18's 64 x 112 x 112, 3.2 MB), which its max pooling reads back
 * at once. Written whole it leaves L2 for L3 or memory and comes back; here
 * the convolution's rows are computed into a buffer of a few rows that
 * stays in L2, pooled from there, and the buffer slides down the image:
 * the rows the next band of pooled rows shares with this one move to its
 * top instead of being computed again.
 */

/* Bytes of convolution output rows one thread keeps (every channel). */
#define FEW_POOL_BUFFER_BYTES (256 * 1024)

typedef struct few_pool_plan {
	few_plan few;         /* the convolution's, computed at most few.band rows at a time */
	k_geometry pg;        /* the pooling's, over the whole convolution output */
	int64_t span;         /* convolution rows one pooling window spans */
	int64_t rows;         /* convolution rows the buffer holds: what `band` pooled rows read at most */
	int64_t band;         /* pooled rows per band */
	size_t slot_floats;   /* few.slot_floats, then the buffer (out_channels x rows x out width) */
	/* The pooling of one band over the buffer: its columns, kernel,
	 * strides and channels; each band sets its rows and top padding. */
	k_window sub;
} few_pool_plan;

/* The convolution rows [*r0, *r1) the pooled rows [ph0, ph1) read. */
static void
few_pool_rows(const few_pool_plan *q, int64_t ph0, int64_t ph1, int64_t *r0, int64_t *r1)
{
	const k_geometry *pg = &q->pg;
	int64_t height = q->few.g.out[1];
	*r0 = k_clamp64(ph0 * pg->stride[1] - pg->pad[1], 0, height);
	*r1 = k_clamp64((ph1 - 1) * pg->stride[1] - pg->pad[1] + q->span, 0, height);
}

bool
k_conv_pool_fits(const k_window *w, const k_window *pool, k_pool_mode mode)
{
	if (mode != K_POOL_MAX || k_conv_direct_chosen(w) != K_DIRECT_FEW_CHANNELS || w->spatial != 2 ||
	    pool->spatial != 2 || pool->batch != w->batch || pool->in_channels != w->out_channels ||
	    pool->out_channels != w->out_channels || pool->in[0] != w->out[0] || pool->in[1] != w->out[1])
		return false;
	k_geometry pg;
	k_geometry_expand(pool, &pg);
	/* Every window holds a convolution row and a column (a window wholly
	 * in the padding is another matter). */
	for (int i = 1; i < 3; i++) {
		int64_t span = (pg.kernel[i] - 1) * pg.dilation[i] + 1;
		if (pg.out[i] < 1 || pg.stride[i] < 1 || pg.dilation[i] < 1 || pg.pad[i] < 0 || pg.pad[i] >= span ||
		    (pg.out[i] - 1) * pg.stride[i] - pg.pad[i] >= pg.in[i])
			return false;
	}
	return true;
}

static void
few_pool_plan_make(const k_window *w, const k_window *pool, few_pool_plan *q)
{
	few_plan_make(w, 1, &q->few);
	k_geometry_expand(pool, &q->pg);
	const k_geometry *pg = &q->pg;
	int64_t channels = q->few.g.out_channels, row_bytes = channels * q->few.g.out[2] * (int64_t)sizeof(float);
	q->span = (pg->kernel[1] - 1) * pg->dilation[1] + 1;
	q->band = 1;
	while (q->band < pg->out[1] && (q->band * pg->stride[1] + q->span) * row_bytes <= FEW_POOL_BUFFER_BYTES)
		q->band++;
	q->rows = (q->band - 1) * pg->stride[1] + q->span;
	q->slot_floats = q->few.slot_floats + (size_t)(channels * q->rows * q->few.g.out[2]);
	q->sub = (k_window){ .spatial = 2, .batch = 1, .in_channels = channels, .out_channels = channels, .groups = 1 };
	for (int i = 0; i < 2; i++) {
		q->sub.kernel[i] = pg->kernel[1 + i];
		q->sub.stride[i] = pg->stride[1 + i];
		q->sub.dilation[i] = pg->dilation[1 + i];
	}
	q->sub.in[1] = pg->in[2], q->sub.out[1] = pg->out[2];
	q->sub.pad_begin[1] = pg->pad[2], q->sub.pad_end[1] = pg->pad_end[2];
}

size_t
k_conv_pool_scratch_bytes(const k_window *w, const k_window *pool, int slots)
{
	if (!k_conv_pool_fits(w, pool, K_POOL_MAX))
		return 0;
	few_pool_plan q;
	few_pool_plan_make(w, pool, &q);
	return q.slot_floats * sizeof(float) * (size_t)(slots < 1 ? 1 : slots);
}

typedef struct few_pool_args {
	const few_pool_plan *q;
	few_compute_fn compute;
	const float *x, *weights, *bias;
	const k_post *post;
	float *y;
	float *scratch;
	int64_t chunks;
} few_pool_args;

/* Pooled rows [ph_a, ph_b) of sample n, band by band, with slot `slot`. */
static void
few_pool_sample(const few_pool_args *a, int64_t n, int64_t ph_a, int64_t ph_b, float *slot)
{
	const few_pool_plan *q = a->q;
	const k_geometry *g = &q->few.g, *pg = &q->pg;
	float *band = slot, *buf = slot + q->few.slot_floats;
	int64_t width = g->out[2], plane = q->rows * width, channels = g->out_channels;
	few_plan fp = q->few;
	fp.out_plane = plane;
	const float *in = a->x + n * g->in_channels * g->in_size;
	float *out = a->y + n * channels * pg->out_size;
	int64_t have0 = 0, have1 = 0; /* the convolution rows in buf, from its first row */
	for (int64_t ph0 = ph_a; ph0 < ph_b; ph0 += q->band) {
		int64_t ph1 = ph0 + q->band < ph_b ? ph0 + q->band : ph_b, r0, r1;
		few_pool_rows(q, ph0, ph1, &r0, &r1);
		int64_t from = r0;
		if (r0 >= have0 && r0 < have1 && have1 <= r1) {
			/* Rows the last band computed move to the top. */
			if (r0 > have0) {
				for (int64_t c = 0; c < channels; c++)
					memmove(buf + c * plane, buf + c * plane + (r0 - have0) * width,
					        (size_t)((have1 - r0) * width) * sizeof *buf);
			}
			from = have1;
		}
		fp.out_row0 = r0;
		for (int64_t oh = from; oh < r1; oh += q->few.band) {
			int64_t oh1 = oh + q->few.band < r1 ? oh + q->few.band : r1;
			a->compute(&fp, in, a->weights, a->bias, oh, oh1, band, buf);
		}
		if (from < r1)
			k_post_block(a->post, buf, plane, 0, channels, (from - r0) * width, (r1 - r0) * width);
		have0 = r0, have1 = r1;
		/* The pooling of rows [ph0, ph1) over the buffer's rows: its
		 * windows start pad_begin earlier than ph * stride - pad, in rows
		 * of the buffer. */
		k_window sub = q->sub;
		sub.in[0] = r1 - r0, sub.out[0] = ph1 - ph0;
		sub.pad_begin[0] = r0 + pg->pad[1] - ph0 * pg->stride[1];
		k_pool_strided(&sub, K_POOL_MAX, false, buf, plane, out + ph0 * pg->out[2], pg->out_size);
	}
}

/* Chunks [c0, c1) of the pooled rows of every sample, chunk c with slot c. */
static void
few_pool_chunks(void *arg, int64_t c0, int64_t c1)
{
	const few_pool_args *a = arg;
	const few_pool_plan *q = a->q;
	int64_t height = q->pg.out[1], units = q->few.g.batch * height;
	for (int64_t c = c0; c < c1; c++) {
		float *slot = a->scratch + (size_t)c * q->slot_floats;
		int64_t u0 = c * units / a->chunks, u1 = (c + 1) * units / a->chunks;
		while (u0 < u1) {
			int64_t n = u0 / height, end = (n + 1) * height < u1 ? (n + 1) * height : u1;
			few_pool_sample(a, n, u0 - n * height, end - n * height, slot);
			u0 = end;
		}
	}
}

bool
k_conv_pool_direct_with(k_isa isa, const k_window *w, const k_window *pool, const float *x, const float *weights,
                        const float *bias, float *y, void *scratch, int slots, const k_post *post,
                        const st_exec_ctx *ctx)
{
	if (post != NULL && !post->on)
		post = NULL;
	if (!k_cpu_isa_supported(isa) || variants[isa].few_compute == NULL || !k_conv_pool_fits(w, pool, K_POOL_MAX))
		return false;
	few_pool_plan q;
	few_pool_plan_make(w, pool, &q);
	few_pool_args a = { .q = &q, .compute = variants[isa].few_compute, .x = x, .weights = weights, .bias = bias,
		            .post = post, .y = y, .scratch = scratch };
	int64_t units = q.few.g.batch * q.pg.out[1], threads = k_threads_used(slots, ctx);
	a.chunks = units < threads ? units : threads;
	k_parallel_for(ctx, a.chunks, 1, few_pool_chunks, &a);
	return true;
}

bool
k_conv_pool_direct(const k_window *w, const k_window *pool, const float *x, const float *weights,
                   const float *bias, float *y, void *scratch, int slots, const k_post *post,
                   const st_exec_ctx *ctx)
{
	return k_conv_pool_direct_with(k_cpu_isa(), w, pool, x, weights, bias, y, scratch, slots, post, ctx);
}
