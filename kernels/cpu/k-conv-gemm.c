/*
 * Convolutions as products on Strata's own SGEMM (k-sgemm.h). On small
 * images (a 7 x 7 output) the roles are swapped: the output positions are
 * the rows of the product, packed per call, and the filters, packed once,
 * its columns (the "swapped" section below). Otherwise, per group, the
 * filters are A (output channels x input channels·taps), packed once;
 * B, whose columns are output positions, is never built whole:
 *   - a stride-1 convolution over one or two axes whose output is as large
 *     as its input (same padding, 1x1 included), on a level with masked
 *     loads, reads the input in place: the micro-kernel's lanes are output
 *     positions, each tap a shift of the input, and the lanes whose shifted
 *     input falls in the padding load nothing (k_conv_tile);
 *   - a strided convolution over one or two axes whose taps reach no
 *     further than one stride past the output position (3x3 stride 2 pad
 *     1, 1x1 stride 2) does the same on a per-thread copy of the input
 *     split into its stride phases (even and odd rows and columns for
 *     stride 2), each phase as large as the output: every tap is then a
 *     shift of one phase;
 *   - elsewhere (the portable level, other sizes, or on AVX2 a 1x1 layer
 *     of at most 32 input channels) a 1x1 convolution with stride 1 and no
 *     padding reads the input planes in place (B is X, channels by
 *     positions);
 *   - and a stride-1 convolution over one or two axes reads a padded copy
 *     of a few input rows that each thread makes in its own slot. Its positions
 *     are counted over the padded width, so that the tap (kh, kw) of every
 *     position is the same shift of the copy and the micro-kernel reads B
 *     rows at fixed offsets from it (the columns past the output width are
 *     computed and dropped);
 *   - the rest (strides, three axes) goes through a tile of im2col per
 *     thread, small enough to stay in its L2.
 * Threads share nothing they write: each takes a contiguous run of tasks
 * (sample, group, block of positions, block of output channels) with its
 * own slot.
 */
#include "config.h"

#include <assert.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#if defined(__x86_64__) && defined(__GNUC__) && defined(K_HAVE_AVX2)
#include <immintrin.h>
#endif

#include "k-conv-gemm.h"
#include "k-int.h"

enum { SRC_DIRECT, SRC_PHASED, SRC_POINTWISE, SRC_SHIFTED, SRC_IM2COL };

/* Bytes of B source one thread keeps for a block (the input it reads, the
 * phases, the padded rows or the im2col tile), read by every panel of
 * filters in turn: half of the 1 MiB L2 of a Zen 4 core, the rest for the
 * filters. */
#define B_TARGET_BYTES (512 * 1024)
/* Tiles of positions outside and panels of filters inside (columns_outer)
 * where a block's filters take at most three quarters of a 512 KiB L2 and
 * a tile's input at most three quarters of a 32 KiB L1 (AVX-512's
 * 48-column tiles on 256 channels would fill it). */
#define COLUMNS_OUTER_FILTER_BYTES (384 * 1024)
#define COLUMNS_OUTER_B_BYTES (24 * 1024)

/* The header of packed filters: which kernel packed them, and for what. */
typedef struct packed_head {
	uint32_t magic;
	int32_t isa;
	int64_t nr;           /* which of the level's kernels: the width of its tile */
	int64_t groups, out_per_group, depth;
	int64_t group_floats; /* floats of one group's panels */
	int64_t tap_major;    /* steps in (tap, channel) order: for the direct and phased sources */
	int64_t swapped;      /* the filters are B (k_sgemm_pack_b), the positions A: swap_run */
} packed_head;
_Static_assert(sizeof(packed_head) == 64, "the packed filters start 64 bytes in");
#define PACKED_MAGIC 0x4b435650u /* "PVCK" */

typedef struct gplan {
	k_geometry g;
	const k_gemm_kernel *kr;
	int source;
	int64_t depth;            /* GEMM K: in_per_group x kernel_size */
	int64_t units;            /* per plane: output rows (shifted, phased) or register tiles of positions */
	int64_t blocks, block;    /* blocks per plane, units in the largest */
	int64_t mblock, mblocks;  /* output channels per block, a multiple of mr */
	int64_t tasks;            /* batch x groups x blocks x mblocks */
	int64_t wp;               /* shifted: the padded row, positions per output row */
	int64_t span;             /* shifted, phased: input (phase) rows one block reads */
	int64_t pitch;            /* shifted: floats per channel of the copy; phased: per phase;
	                           * im2col: per row */
	int64_t phases;           /* phased: stride phases per channel */
	size_t off_floats, a_floats, b_floats, slot_floats;
} gplan;

/* The positions a block of `rows` output rows spans in padded-row counting. */
static int64_t
shifted_positions(const gplan *p, int64_t rows)
{
	return (rows - 1) * p->wp + p->g.out[2];
}

/* Block b's part of a plane: output rows [*lo, *hi) for the shifted and
 * phased sources, positions otherwise. */
static void
block_span(const gplan *p, int64_t b, int64_t *lo, int64_t *hi)
{
	int64_t u0 = b * p->units / p->blocks, u1 = (b + 1) * p->units / p->blocks;
	if (p->source == SRC_SHIFTED || p->source == SRC_PHASED) {
		*lo = u0;
		*hi = u1;
	} else {
		*lo = u0 * p->kr->nr;
		*hi = k_min64(u1 * p->kr->nr, p->g.out_size);
	}
}

/* Where tap k of axis a (1 rows, 2 columns) reads, relative to the output
 * position times the stride: a shift in whole strides and a phase. */
static void
tap_phase(const k_geometry *g, int a, int64_t k, int64_t *shift, int64_t *phase)
{
	int64_t reach = k * g->dilation[a] - g->pad[a];
	*shift = k_div_down(reach, g->stride[a]);
	*phase = reach - *shift * g->stride[a];
}

/* Whether a strided convolution suits the phased source: no tap reaches a
 * stride or more past its output position (so each phase needs no more
 * rows or columns than the output has). */
static bool
phased_fits(const k_geometry *g)
{
	for (int a = 1; a <= 2; a++) {
		int64_t shift, phase;
		tap_phase(g, a, g->kernel[a] - 1, &shift, &phase);
		if (shift > 0 || g->pad[a] < 0)
			return false;
	}
	return g->stride[1] * g->stride[2] <= 64;
}

/*
 * Plans for `threads` threads: blocks sized for L2, then cut finer while
 * there are fewer tasks than threads, first along the positions (as long
 * as each block keeps two register tiles of them), then along the output
 * channels. Returns false when the offsets would not fit 32 bits.
 */
/* The part of `panels` that is work when they are cut into whole panels
 * for `threads`. */
static double
balance(int64_t panels, int threads)
{
	return (double)panels / (double)(k_div_up(panels, threads) * threads);
}

static bool
gplan_make(const k_geometry *g, const k_gemm_kernel *kr, int threads, bool packed, gplan *p)
{
	*p = (gplan){ .g = *g, .kr = kr };
	int64_t nr = kr->nr, mr = kr->mr, cg = g->in_per_group;
	p->depth = cg * g->kernel_size;
	bool unit = g->stride[0] == 1 && g->stride[1] == 1 && g->stride[2] == 1;
	bool unpadded = g->pad[0] == 0 && g->pad[1] == 0 && g->pad[2] == 0;
	bool flat = g->in[0] == 1 && g->out[0] == 1 && g->kernel[0] == 1 && g->pad[0] == 0;
	bool same = g->out[1] == g->in[1] && g->out[2] == g->in[2];
	/* 1x1 layers of few input channels read the input as the pointwise
	 * source does on AVX2: each direct tile there costs its lane and mask
	 * set-up for only 16 or 32 steps (Zen 3, ABBA in one process: 16 -> 64
	 * at 55 x 55 0.168 -> 0.155 ms on one thread, 0.110 -> 0.098 on two;
	 * 32 -> 128 at 27 x 27 0.094 -> 0.085 / 0.091 -> 0.076; with 64
	 * channels the direct tile is faster again, 0.106 against 0.112). */
	bool thin = kr->isa == K_ISA_AVX2 && g->kernel_size == 1 && unpadded && cg <= 32;
	if (kr->conv_tile != NULL && flat && g->stride[1] == 1 && g->stride[2] == 1 && same &&
	    g->in_size < INT32_MAX / 4 && !thin)
		p->source = SRC_DIRECT;
	else if (kr->conv_tile != NULL && flat && !unit && phased_fits(g) &&
	         cg * g->stride[1] * g->stride[2] * g->out_size < INT32_MAX / 4)
		p->source = SRC_PHASED;
	else if (g->kernel_size == 1 && unit && unpadded && g->in_size == g->out_size)
		p->source = SRC_POINTWISE;
	else if (flat && g->stride[1] == 1 && g->stride[2] == 1)
		p->source = SRC_SHIFTED;
	else
		p->source = SRC_IM2COL;
	/*
	 * Blocks: of output rows for the sources that copy rows (shifted,
	 * phased), else of register tiles of positions. As few as keep a
	 * block's B source within B_TARGET_BYTES, in a multiple of the pieces
	 * each plane is cut into for the threads, their bounds spread evenly
	 * over the units, so that every thread gets the same share.
	 */
	bool by_rows = p->source == SRC_SHIFTED || p->source == SRC_PHASED;
	int64_t target = B_TARGET_BYTES / (int64_t)sizeof(float), most, unit_positions, extra = 0;
	if (p->source == SRC_SHIFTED) {
		p->wp = g->out[2] + (g->kernel[2] - 1) * g->dilation[2];
		extra = (g->kernel[1] - 1) * g->dilation[1];
		most = target / k_max64(cg * p->wp, 1) - extra;
		unit_positions = p->wp;
	} else if (p->source == SRC_PHASED) {
		int64_t shift, phase;
		tap_phase(g, 1, 0, &shift, &phase);
		extra = -shift;
		p->phases = g->stride[1] * g->stride[2];
		most = target / k_max64(cg * p->phases * g->out[2], 1) - extra;
		unit_positions = g->out[2];
	} else {
		most = target / k_max64((p->source == SRC_IM2COL ? p->depth : cg) * nr, 1);
		unit_positions = nr;
	}
	p->units = by_rows ? g->out[1] : k_div_up(g->out_size, nr);
	int64_t planes = g->batch * g->groups;
	int64_t parts = planes < threads ? k_div_up(threads, planes) : 1;
	bool split_channels = false;
	/* Cutting a plane pays while each piece keeps two register tiles;
	 * below that the threads share the output channels instead. So they
	 * do where the plane's tiles share out worse than the channels' panels
	 * (13 tiles of a 14 x 14 image on two threads: 7 + 6), when B is read
	 * in place (pointwise, direct: no copy each thread would make again)
	 * and one block holds the plane. */
	if (parts > 1 && k_div_up(p->units, parts) * unit_positions < 2 * nr) {
		parts = 1;
		split_channels = true;
	} else if (parts > 1 && planes == 1 && (p->source == SRC_POINTWISE || p->source == SRC_DIRECT) &&
	           p->units <= most &&
	           balance(p->units, threads) < balance(k_div_up(g->out_per_group, mr), threads)) {
		parts = 1;
		split_channels = true;
	}
	int64_t per_part = k_div_up(p->units, parts);
	p->blocks = k_max64(1, k_min64(p->units, k_div_up(per_part, k_max64(most, 1)) * parts));
	p->block = k_div_up(p->units, p->blocks); /* the largest block, in units */
	if (p->source == SRC_SHIFTED) {
		p->span = p->block + extra;
		p->pitch = p->span * p->wp;
		/* Reads run up to a register tile past the last position. */
		p->b_floats = k_line_floats(cg * p->pitch + nr + 16);
		if (cg * p->pitch + nr + 16 > INT32_MAX)
			return false;
	} else if (p->source == SRC_PHASED) {
		p->span = p->block + extra;
		p->pitch = p->span * g->out[2];
		p->b_floats = k_line_floats(cg * p->phases * p->pitch);
	} else if (p->source == SRC_DIRECT) {
		p->b_floats = 0;
	} else if (p->source == SRC_POINTWISE) {
		/* The last register tile of a plane comes packed from a copy. */
		p->b_floats = k_line_floats(p->depth * nr);
		if (cg * g->in_size > INT32_MAX)
			return false;
	} else {
		p->pitch = p->block * nr;
		p->b_floats = k_line_floats(p->depth * p->pitch + nr + 16);
		if (p->depth * p->pitch + nr + 16 > INT32_MAX)
			return false;
	}
	p->mblocks = 1;
	p->mblock = g->out_per_group;
	if (split_channels || planes * p->blocks < threads) {
		int64_t want = k_div_up(threads, planes * p->blocks);
		p->mblocks = k_max64(1, k_min64(want, k_div_up(g->out_per_group, mr)));
	}
	p->mblock = k_round_up(k_div_up(g->out_per_group, p->mblocks), mr);
	p->mblocks = k_div_up(g->out_per_group, p->mblock);
	p->tasks = planes * p->blocks * p->mblocks;
	/* int32 offsets (direct: the taps' row and column shifts; phased: and
	 * their phases' places), as many as floats */
	p->off_floats = k_line_floats(p->source == SRC_DIRECT   ? 2 * g->kernel_size
	                            : p->source == SRC_PHASED ? 3 * g->kernel_size
	                                                      : p->depth);
	p->a_floats = packed ? 0 : k_line_floats(p->mblock * p->depth);
	p->slot_floats = p->off_floats + p->a_floats + p->b_floats;
	return true;
}

/* The share of the work a kernel's tiles would do that is real, planned
 * for one thread: output channels rounded up to whole panels, positions
 * (with the padded columns of the shifted source) to whole tiles. */
static double
tile_use(const k_geometry *g, const k_gemm_kernel *kr)
{
	gplan p;
	if (!gplan_make(g, kr, 1, true, &p))
		return 0.0;
	double computed = 0.0;
	for (int64_t b = 0; b < p.blocks; b++) {
		int64_t lo, hi;
		block_span(&p, b, &lo, &hi);
		int64_t positions = p.source == SRC_SHIFTED  ? shifted_positions(&p, hi - lo)
		                    : p.source == SRC_PHASED ? (hi - lo) * g->out[2]
		                                             : hi - lo;
		computed += (double)k_round_up(positions, kr->nr);
	}
	return (double)g->out_size / computed * (double)g->out_per_group /
	       (double)k_round_up(g->out_per_group, kr->mr);
}

/* Level isa's kernel for this convolution: its narrow variant when that
 * wastes clearly less (small images), the main one otherwise. */
static const k_gemm_kernel *
conv_kernel(const k_geometry *g, k_isa isa)
{
	const k_gemm_kernel *kr = k_gemm_kernel_of(isa);
	if (kr == NULL)
		kr = &k_gemm_kernel_portable;
	if (kr->narrow != NULL && tile_use(g, kr->narrow) > 1.05 * tile_use(g, kr))
		return kr->narrow;
	return kr;
}

/* ---- swapped roles: output positions as rows ---- */

/*
 * A convolution on a small image has few output positions (49 at 7 x 7)
 * and often many output channels. With positions as the columns of the
 * product, its register tiles (16 or 48 positions wide) are half empty or
 * run on the narrow tile; with the roles swapped the output channels are
 * the wide side, the positions the rows (7 x 7 fills a 7-row tile), and
 * the image, packed once per call, is the small operand: C^T (positions x
 * channels) = X^T . W^T, each register tile transposed into place when
 * it is finished.
 */

/* The most output positions a plane may have for the swapped path at all
 * (its scratch holds the whole packed image). */
#define SWAP_MOST_POSITIONS 400
/* The widest rows (mr) and columns (nr) of any kernel's tile: scratch is
 * sized with these so that it suits whichever kernel packed the filters. */
#define SWAP_MAX_MR 32
#define SWAP_MAX_NR 64

static int swap_forced; /* k_conv_gemm_force_swap */

void
k_conv_gemm_force_swap(int mode)
{
	swap_forced = mode;
}

/* Whether the swapped path can take g: one group, two flat axes, a small
 * plane. */
static bool
swap_possible(const k_geometry *g)
{
	bool flat = g->in[0] == 1 && g->out[0] == 1 && g->kernel[0] == 1 && g->pad[0] == 0;
	return flat && g->groups == 1 && g->out_size <= SWAP_MOST_POSITIONS && g->in_per_group > 0 &&
	       g->out_per_group > 0;
}

/*
 * The most output positions for which the swapped path is chosen at a
 * level (bench-gemm --small, docs/performance.md): 7 x 7 everywhere; on
 * AVX2, whose 6 x 16 tile fits 14 x 14 images badly as columns, up to
 * 14 x 14 too. On AVX-512 the 16-wide direct tiles keep 14 x 14.
 */
static int64_t
swap_limit(k_isa isa)
{
	return isa == K_ISA_AVX2 ? 196 : 64;
}

static const k_gemm_kernel *swap_kernel(const k_geometry *g, k_isa isa);
static double product_use(const k_gemm_kernel *kr, int64_t m, int64_t n);

/*
 * Deep products on images up to 14 x 14 swap too on AVX-512: with at least
 * DEEP_SWAP_DEPTH steps (input channels times taps) and DEEP_SWAP_OUT output
 * channels, packing the image once per call costs little against the
 * product, and the filters, streamed once as B instead of once per
 * 16-position block as A, are the large operand. bench-gemm --small, one
 * thread / two, on a Xeon with two 512-bit FMA units: SqueezeNet's 1x1
 * 512 -> 1000 at 13 x 13 1.81 -> 1.55 / 1.00 -> 0.90 ms, 1x1 512 -> 512 at
 * 14 x 14 1.06 -> 0.85 / 0.59 -> 0.49, 1024 -> 256 1.08 -> 0.84 / 0.59 ->
 * 0.53; with 64 input channels (64 -> 256) swapping was 1.4x slower, with
 * 64 output channels (512 -> 64) no faster, and a 3x3 256 -> 512 at 13 x 13
 * the same either way.
 */
#define DEEP_SWAP_POSITIONS 196
#define DEEP_SWAP_DEPTH 256
#define DEEP_SWAP_OUT 256

/*
 * On AVX2 a stride-1 1x1 layer swaps only with at least SWAP_1X1_DEPTH
 * input and SWAP_1X1_OUT output channels: the swapped product pays for
 * packing the image and transposing each tile into place, which the
 * filters streamed once repay only when they are deep and many.
 * bench-gemm --small on a Zen 3, columns against swapped, one thread / two:
 * SqueezeNet's 13 x 13 layers 48 -> 192 0.044 against 0.057 / 0.024 against
 * 0.032 ms, 64 -> 256 0.074 / 0.089, 384 -> 48 0.072 / 0.084, 384 -> 64
 * 0.097 / 0.107, 512 -> 64 0.134 / 0.144; 128 -> 128 and 96 -> 256 at
 * 14 x 14 0.90 and 0.75 times; while 160 -> 960 at 7 x 7 swapped ran 1.13
 * times faster, 960 -> 160 1.27, 1024 -> 256 at 14 x 14 1.21, 512 -> 1000
 * at 13 x 13 1.07 (issue 10, session 15).
 */
#define SWAP_1X1_DEPTH 160
#define SWAP_1X1_OUT 128

/* Chosen on a small enough image when the swapped product's tiles are at
 * least nine tenths work: 960 -> 160 at 7 x 7 on AVX-512 (160 channels in
 * 64-wide tiles, 83 %) ran no faster on one thread and slower on two. */
static bool
swap_chosen(const k_geometry *g)
{
	if (!swap_possible(g) || swap_forced < 0)
		return false;
	if (swap_forced > 0)
		return true;
	k_isa isa = k_cpu_isa();
	const k_gemm_kernel *kr = swap_kernel(g, isa);
	bool pointwise = g->kernel_size == 1 && g->stride[1] == 1 && g->stride[2] == 1;
	if (isa == K_ISA_AVX2 && pointwise && (g->in_per_group < SWAP_1X1_DEPTH || g->out_per_group < SWAP_1X1_OUT))
		return false;
	bool small = g->out_size <= swap_limit(isa) && g->out_per_group >= 16;
	bool deep = isa == K_ISA_AVX512 && g->out_size <= DEEP_SWAP_POSITIONS &&
	            g->in_per_group * g->kernel_size >= DEEP_SWAP_DEPTH && g->out_per_group >= DEEP_SWAP_OUT;
	return (small || deep) && product_use(kr, g->out_size, g->out_per_group) >= 0.9;
}

bool
k_conv_gemm_swaps(const k_geometry *g)
{
	return swap_chosen(g);
}

/* The share of an m x n product's register tiles that is real work. */
static double
product_use(const k_gemm_kernel *kr, int64_t m, int64_t n)
{
	return (double)m * (double)n / ((double)k_round_up(m, kr->mr) * (double)k_round_up(n, kr->nr));
}

/* Level isa's kernel for the swapped product: the few-rows variant unless
 * the main tile wastes less. */
static const k_gemm_kernel *
swap_kernel(const k_geometry *g, k_isa isa)
{
	const k_gemm_kernel *kr = k_gemm_kernel_of(isa);
	if (kr == NULL)
		kr = &k_gemm_kernel_portable;
	if (kr->few_rows != NULL &&
	    product_use(kr->few_rows, g->out_size, g->out_per_group) >= product_use(kr, g->out_size, g->out_per_group))
		return kr->few_rows;
	return kr;
}

/* The input rows and columns the taps reach: the padded image's extent
 * (or less, where the last rows or columns are never read). */
static int64_t
swap_extent(const k_geometry *g, int a)
{
	return (g->out[a] - 1) * g->stride[a] + (g->kernel[a] - 1) * g->dilation[a] + 1;
}

/* Whether the taps read padding, so that the image is copied with it. */
static bool
swap_padded(const k_geometry *g)
{
	return g->pad[1] > 0 || g->pad[2] > 0 || swap_extent(g, 1) - g->pad[1] > g->in[1] ||
	       swap_extent(g, 2) - g->pad[2] > g->in[2];
}

/* Scratch of the swapped path, laid out as: packed filters (when not
 * pre-packed), the padded image (when padded), the packed image, C^T.
 * Sized for any kernel's tile. */
static size_t
swap_b_floats(const k_geometry *g)
{
	return k_line_floats((g->out_per_group + SWAP_MAX_NR) * g->in_per_group * g->kernel_size);
}

static size_t
swap_pad_floats(const k_geometry *g)
{
	return swap_padded(g) ? k_line_floats(g->in_per_group * swap_extent(g, 1) * swap_extent(g, 2)) : 0;
}

static size_t
swap_a_floats(const k_geometry *g)
{
	return k_line_floats((g->out_size + SWAP_MAX_MR) * g->in_per_group * g->kernel_size);
}

/* C^T with its rows and columns rounded up to whole tiles. */
static size_t
swap_c_floats(const k_geometry *g)
{
	return k_line_floats((g->out_size + SWAP_MAX_MR) * (g->out_per_group + SWAP_MAX_NR));
}

static size_t
swap_scratch_bytes(const k_geometry *g, bool packed)
{
	return ((packed ? 0 : swap_b_floats(g)) + swap_pad_floats(g) + swap_a_floats(g) + swap_c_floats(g)) *
	       sizeof(float);
}

/* Channel after channel (step floats apart in d, plane apart in src), the
 * `live` inputs at off (or one run of them from off[0]), zeros after them
 * up to mr. Inlined per tile height, so that the copies have a constant
 * size. */
static inline __attribute__((always_inline)) void
gather_steps(float *d, const float *src, const int64_t *off, int64_t channels, int64_t plane, int64_t step,
             int mr, int live, bool run)
{
	if (run && live == mr) {
		src += off[0];
		for (int64_t c = 0; c < channels; c++, d += step, src += plane)
			memcpy(d, src, (size_t)mr * sizeof *d);
		return;
	}
	for (int64_t c = 0; c < channels; c++, d += step, src += plane) {
		for (int r = 0; r < live; r++)
			d[r] = src[off[r]];
		for (int r = live; r < mr; r++)
			d[r] = 0.0f;
	}
}

/*
 * Output positions [p0, p0 + mr) as one A panel: step (c, kh, kw), in the
 * filters' order, holds for each position the input that tap reads, or 0
 * past the last position. src is the image with any padding it needs
 * (rows `pitch` floats long, channels `plane` apart), so that every tap of
 * every position lies inside it; positions in one output row with stride
 * 1 read a run of adjacent inputs, copied as one.
 */
static void
pack_positions(const k_geometry *g, int mr, const float *src, int64_t pitch, int64_t plane, int64_t p0,
               float *panel)
{
	int64_t wo = g->out[2], taps = g->kernel_size;
	int live = (int)k_min64(mr, g->out_size - p0);
	int64_t at[SWAP_MAX_MR], off[SWAP_MAX_MR];
	assert(mr <= SWAP_MAX_MR);
	bool run = true;
	for (int r = 0; r < live; r++) {
		at[r] = (p0 + r) / wo * g->stride[1] * pitch + (p0 + r) % wo * g->stride[2];
		run = run && at[r] == at[0] + r;
	}
	for (int64_t kh = 0, tap = 0; kh < g->kernel[1]; kh++) {
		for (int64_t kw = 0; kw < g->kernel[2]; kw++, tap++) {
			int64_t shift = kh * g->dilation[1] * pitch + kw * g->dilation[2];
			for (int r = 0; r < live; r++)
				off[r] = at[r] + shift;
			float *d = panel + tap * mr;
			int64_t step = taps * mr, ch = g->in_per_group;
			switch (mr) {
			case 6:
				gather_steps(d, src, off, ch, plane, step, 6, live, run);
				break;
			case 7:
				gather_steps(d, src, off, ch, plane, step, 7, live, run);
				break;
			case 8:
				gather_steps(d, src, off, ch, plane, step, 8, live, run);
				break;
			default:
				gather_steps(d, src, off, ch, plane, step, mr, live, run);
				break;
			}
		}
	}
}

enum { SPLIT_ROWS, SPLIT_COLUMNS, SPLIT_TILES };

typedef struct swap_args {
	const k_geometry *g;
	const k_gemm_kernel *kr;
	const float *x, *weights, *bias;
	float *y;
	float *a, *b;          /* packed image, packed filters */
	float *ct;             /* C^T in whole tiles, ct_ld floats a row: sums over depth blocks */
	int64_t ct_ld;
	float *padded;         /* the padded image, or NULL to read x as it is */
	int64_t pitch, plane;  /* of the image the panels are packed from */
	int64_t a_panels;      /* the image's panels, then (weights given) the filters' */
	int64_t b_panels;
	int64_t chunks, panels;
	int split;             /* the product in chunks of row panels, column panels or tiles (SPLIT_) */
	bool clamp;            /* each output clamped to [lo, hi] as it is stored (k_post_clamp) */
	float lo, hi;
	bool vector_store;     /* store_transposed8_avx2 may run */
} swap_args;

/* Channels [c0, c1) of the padded image: zeros around the input. */
static void
swap_pad_range(void *arg, int64_t c0, int64_t c1)
{
	const swap_args *s = arg;
	const k_geometry *g = s->g;
	int64_t hp = swap_extent(g, 1), top = g->pad[1], left = g->pad[2];
	int64_t copy = k_max64(0, k_min64(g->in[2], s->pitch - left));
	for (int64_t c = c0; c < c1; c++) {
		float *dst = s->padded + c * s->plane;
		for (int64_t r = 0; r < hp; r++, dst += s->pitch) {
			int64_t ih = r - top;
			if (ih < 0 || ih >= g->in[1] || copy == 0) {
				memset(dst, 0, (size_t)s->pitch * sizeof *dst);
				continue;
			}
			memset(dst, 0, (size_t)k_min64(left, s->pitch) * sizeof *dst);
			memcpy(dst + left, s->x + c * g->in_size + ih * g->in[2], (size_t)copy * sizeof *dst);
			memset(dst + left + copy, 0, (size_t)(s->pitch - left - copy) * sizeof *dst);
		}
	}
}

static void
swap_pack_range(void *arg, int64_t t0, int64_t t1)
{
	const swap_args *s = arg;
	const k_geometry *g = s->g;
	int64_t depth = g->in_per_group * g->kernel_size;
	const float *src = s->padded ? s->padded : s->x;
	for (int64_t t = t0; t < t1; t++) {
		if (t < s->a_panels) {
			pack_positions(g, s->kr->mr, src, s->pitch, s->plane, t * s->kr->mr, s->a + t * depth * s->kr->mr);
			continue;
		}
		int64_t nr = s->kr->nr, q = t - s->a_panels;
		k_matrix w = { s->weights, 1, depth };
		k_sgemm_pack_b_block(s->kr, w, g->out_per_group, q * nr, nr, 0, depth, s->b + q * depth * nr);
	}
}

#if defined(__x86_64__) && defined(__GNUC__) && defined(K_HAVE_AVX2)
/*
 * Eight rows of a finished tile into the output eight columns at a time,
 * each 8 x 8 block transposed in registers: a channel's eight positions
 * become one vector, stored whole. The scalar loop below did one element
 * at a time, a column's eight apart by `ld`: 2.5 % of SqueezeNet's time
 * (its 512 -> 1000 classifier at 13 x 13) went to it. The bias and the
 * clamp are the scalar loop's operations in its order (max(lo, v) keeps a
 * NaN as v < lo ? lo : v does), so that the two agree to the bit. Returns
 * the columns done: every whole eight of them.
 */
__attribute__((target("avx2,fma"))) static int
store_transposed8_avx2(const swap_args *s, const float *src, int64_t ld, int cols, int64_t i, int64_t j)
{
	int64_t positions = s->g->out_size;
	int q = 0;
	for (; q + 8 <= cols; q += 8) {
		__m256 t[8];
		for (int k = 0; k < 8; k++)
			t[k] = _mm256_loadu_ps(src + k * ld + q);
		k_transpose8_avx2(t);
		/* t[k] is column k: channel j + q + k at the eight positions. */
		for (int k = 0; k < 8; k++) {
			__m256 v = _mm256_add_ps(t[k], _mm256_set1_ps(s->bias ? s->bias[j + q + k] : 0.0f));
			if (s->clamp) {
				v = _mm256_max_ps(_mm256_set1_ps(s->lo), v);
				v = _mm256_min_ps(_mm256_set1_ps(s->hi), v);
			}
			_mm256_storeu_ps(s->y + (j + q + k) * positions + i, v);
		}
	}
	return q;
}
#endif

/* A finished tile (rows x cols of src, `ld` floats a row) transposed into
 * the output from position i and channel j on, with the bias (and the
 * clamp). */
static void
store_transposed(const swap_args *s, const float *src, int64_t ld, int rows, int cols, int64_t i, int64_t j)
{
	int64_t positions = s->g->out_size;
	int q = 0;
#if defined(__x86_64__) && defined(__GNUC__) && defined(K_HAVE_AVX2)
	if (rows == 8 && s->vector_store)
		q = store_transposed8_avx2(s, src, ld, cols, i, j);
#endif
	for (; q < cols; q++) {
		float add = s->bias ? s->bias[j + q] : 0.0f, *d = s->y + (j + q) * positions + i;
		if (s->clamp) {
			for (int r = 0; r < rows; r++)
				d[r] = k_clamp(src[r * ld + q] + add, s->lo, s->hi);
		} else {
			for (int r = 0; r < rows; r++)
				d[r] = src[r * ld + q] + add;
		}
	}
}

/*
 * The most steps of depth one pass of the swapped product takes: the
 * kernel's kc_whole where it has one (the filters packed once, the image
 * once per call). On AVX2 that is 1024: the image's panel (6 positions x
 * 1024 steps, 24 KiB) still sits in L1 while a filter panel streams past
 * it, and each tile is finished in one pass instead of summed in C^T over
 * passes of 256. On a Zen 3 (one thread / two, ABBA in one process, 25th
 * percentiles) SqueezeNet's 512 -> 1000 classifier at 13 x 13 2.20 ->
 * 2.00 / 1.15 -> 1.06 ms, 1x1 1024 -> 256 at 14 x 14 1.47 -> 1.35, 512 ->
 * 512 at 14 x 14 1.23 -> 1.16 / 0.66 -> 0.60, 384 -> 48 at 13 x 13 0.114 ->
 * 0.108; deeper products (3x3 256 -> 256 at 14 x 14, 2304 steps in three
 * passes) the same either way.
 */
static int64_t
swap_depth_block(const k_gemm_kernel *kr)
{
	return kr->kc_whole > kr->kc ? kr->kc_whole : kr->kc;
}

/*
 * Rows [i0, i1) (positions; i0 a multiple of mr) and columns [j0, j1)
 * (channels; j0 a multiple of nr) of the product. The loops are
 * k_sgemm_block's: an A panel (kc x mr) stays in L1 while it sweeps the B
 * panels of a block of nc columns (in L2). Over one depth block a tile is
 * transposed into the output straight from the registers' buffer; over
 * several it sums in C^T (whole tiles, in the scratch) and is transposed
 * once, after the last.
 */
static void
swap_block(const swap_args *s, int64_t i0, int64_t i1, int64_t j0, int64_t j1)
{
	const k_geometry *g = s->g;
	const k_gemm_kernel *kr = s->kr;
	int64_t mr = kr->mr, nr = kr->nr, k = g->in_per_group * g->kernel_size;
	int64_t kc = k_div_up(k, k_div_up(k, swap_depth_block(kr))), ld = s->ct_ld;
	float buf[K_GEMM_MAX_TILE] __attribute__((aligned(64)));
	/* The filters (B) come from memory in a network: the first row
	 * panels of each run fetch the next panel or block of them into L2 as
	 * they go, one vector of each step apiece (k_tile's b_next; the tile
	 * ignores lanes past its vectors), as k_sgemm_block does. SqueezeNet's
	 * 512 -> 1000 classifier at 13 x 13 with its filters from memory 1.05
	 * times faster on one thread. */
	if (kc == k) {
		/* One depth block: the B panel outside, so that a run of tiles
		 * fills the same nr output rows from left to right and their
		 * lines are whole before they leave L1 (stores to scattered
		 * partial lines cost more than the product of a shallow layer). */
		k_tile t = { .depth = k, .c = buf, .ldc = nr };
		for (int64_t j = j0; j < j1; j += nr) {
			int cols = (int)k_min64(nr, j1 - j);
			t.b = s->b + j / nr * k * nr;
			const float *next = k_sgemm_fetch_next && j + nr < j1 ? t.b + k * nr : NULL;
			for (int64_t i = i0; i < i1; i += mr) {
				t.a = s->a + i / mr * k * mr;
				t.b_next = next;
				t.b_next_lane = (int)k_min64((i - i0) / mr, INT_MAX);
				kr->tile(&t);
				store_transposed(s, buf, nr, (int)k_min64(mr, i1 - i), cols, i, j);
			}
		}
		return;
	}
	for (int64_t pc = 0; pc < k; pc += kc) {
		bool first = pc == 0, last = pc + kc >= k;
		k_tile t = { .depth = k_min64(kc, k - pc), .load_c = !first };
		for (int64_t jc = j0; jc < j1; jc += kr->nc) {
			int64_t jend = k_min64(jc + kr->nc, j1);
			/* The next block: the next columns at this depth, else the
			 * first columns at the next depth; as many panels of it
			 * as this block has, or fewer. */
			int64_t next_j = jend < j1 ? jend : j0, next_pc = jend < j1 ? pc : pc + kc;
			bool fetch = k_sgemm_fetch_next && next_pc < k;
			int64_t next_panels = fetch ? k_div_up(k_min64(kr->nc, j1 - next_j), nr) : 0;
			for (int64_t i = i0; i < i1; i += mr) {
				int rows = (int)k_min64(mr, i1 - i);
				t.a = s->a + i / mr * k * mr + pc * mr;
				t.b_next_lane = (int)k_min64((i - i0) / mr, INT_MAX);
				for (int64_t j = jc; j < jend; j += nr) {
					int cols = (int)k_min64(nr, jend - j);
					t.b = s->b + j / nr * k * nr + pc * nr;
					int64_t panel = (j - jc) / nr;
					t.b_next = panel < next_panels
					           ? s->b + (next_j / nr + panel) * k * nr + next_pc * nr
					           : NULL;
					if (first && last) {
						t.c = buf;
						t.ldc = nr;
					} else {
						t.c = s->ct + i * ld + j;
						t.ldc = ld;
					}
					kr->tile(&t);
					if (last)
						store_transposed(s, t.c, t.ldc, rows, cols, i, j);
				}
			}
		}
	}
}

static void
swap_gemm_range(void *arg, int64_t c0, int64_t c1)
{
	const swap_args *s = arg;
	const k_geometry *g = s->g;
	int64_t mr = s->kr->mr, nr = s->kr->nr;
	for (int64_t c = c0; c < c1; c++) {
		int64_t q0 = c * s->panels / s->chunks, q1 = (c + 1) * s->panels / s->chunks;
		if (s->split == SPLIT_ROWS) {
			swap_block(s, q0 * mr, k_min64(q1 * mr, g->out_size), 0, g->out_per_group);
		} else if (s->split == SPLIT_COLUMNS) {
			swap_block(s, 0, g->out_size, q0 * nr, k_min64(q1 * nr, g->out_per_group));
		} else {
			/* Tiles q0.. q1 - 1 counted down each column panel: one run of
			 * row panels per column panel. */
			for (int64_t q = q0; q < q1;) {
				int64_t j = q / s->a_panels, i = q % s->a_panels, end = k_min64(q1 - q, s->a_panels - i);
				swap_block(s, i * mr, k_min64((i + end) * mr, g->out_size), j * nr,
				           k_min64((j + 1) * nr, g->out_per_group));
				q += end;
			}
		}
	}
}

/* The swapped path (one group): b_packed from k_conv_gemm_pack, or NULL to
 * pack the weights into the scratch first. */
static void
swap_run(const k_geometry *g, const k_gemm_kernel *kr, const float *x, const float *weights,
         const float *b_packed, const float *bias, float *y, void *scratch, int threads, const k_post *post,
         const st_exec_ctx *ctx)
{
	float *base = scratch;
	swap_args s = { .g = g, .kr = kr, .weights = weights, .bias = bias };
	s.clamp = k_post_clamp(post, &s.lo, &s.hi);
	s.vector_store = k_cpu_isa() == K_ISA_AVX2 || k_cpu_isa() == K_ISA_AVX512;
	s.b = b_packed ? (float *)b_packed : base;
	float *next = base + (b_packed ? 0 : swap_b_floats(g));
	if (swap_padded(g)) {
		s.padded = next;
		s.pitch = swap_extent(g, 2);
		s.plane = swap_extent(g, 1) * s.pitch;
	} else {
		s.pitch = g->in[2];
		s.plane = g->in_size;
	}
	s.a = next + swap_pad_floats(g);
	s.ct = s.a + swap_a_floats(g);
	s.ct_ld = k_round_up(g->out_per_group, kr->nr);
	s.a_panels = k_div_up(g->out_size, kr->mr);
	s.b_panels = k_div_up(g->out_per_group, kr->nr);
	double work = (double)g->out_size * (double)g->out_per_group * (double)g->in_per_group * (double)g->kernel_size;
	if (work < 262144.0)
		threads = 1;
	const st_exec_ctx *pool = threads > 1 ? ctx : NULL;
	/* Row panels or column panels, whichever shares out more evenly
	 * (columns on a tie: each thread then reads only its own filters);
	 * single tiles where both leave a thread idle for long (7 row panels
	 * and 3 column panels on two threads: 4 + 3 or 2 + 1 of them, but 11 +
	 * 10 tiles). */
	double rows = balance(s.a_panels, threads), columns = balance(s.b_panels, threads);
	double tiles = balance(s.a_panels * s.b_panels, threads);
	if (tiles > 1.05 * (rows > columns ? rows : columns)) {
		s.split = SPLIT_TILES;
		s.panels = s.a_panels * s.b_panels;
	} else {
		s.split = rows > columns ? SPLIT_ROWS : SPLIT_COLUMNS;
		s.panels = s.split == SPLIT_ROWS ? s.a_panels : s.b_panels;
	}
	s.chunks = k_min64(threads, s.panels);
	for (int64_t n = 0; n < g->batch; n++) {
		s.x = x + n * g->in_channels * g->in_size;
		s.y = y + n * g->out_channels * g->out_size;
		if (s.padded)
			k_parallel_for(pool, g->in_per_group, 16, swap_pad_range, &s);
		bool pack_b = b_packed == NULL && n == 0;
		k_parallel_for(pool, s.a_panels + (pack_b ? s.b_panels : 0), 1, swap_pack_range, &s);
		k_parallel_for(pool, s.chunks, 1, swap_gemm_range, &s);
	}
}

bool
k_conv_gemm_fits(const k_geometry *g)
{
	gplan p;
	return g->in_per_group > 0 && gplan_make(g, k_gemm_kernel_now(), 1, false, &p);
}

size_t
k_conv_gemm_scratch_bytes(const k_geometry *g, int slots, bool packed)
{
	/* Room for the swapped path whenever it could be taken, so that the
	 * scratch suits filters packed under any k_conv_gemm_force_swap. */
	size_t most = swap_possible(g) ? swap_scratch_bytes(g, packed) : 0;
	for (int t = 1; t <= slots || t == 1; t++) {
		gplan p;
		if (!gplan_make(g, conv_kernel(g, k_cpu_isa()), t, packed, &p))
			return 0;
		size_t bytes = p.slot_floats * sizeof(float) * (size_t)t;
		most = bytes > most ? bytes : most;
	}
	return most;
}

/* ---- packed filters ---- */

static int64_t
group_floats(const k_gemm_kernel *kr, const k_geometry *g)
{
	return (int64_t)(k_sgemm_packed_a_bytes(kr, g->out_per_group, g->in_per_group * g->kernel_size) /
	                 sizeof(float));
}

size_t
k_conv_gemm_packed_bytes(const k_geometry *g)
{
	if (swap_chosen(g)) {
		const k_gemm_kernel *kr = swap_kernel(g, k_cpu_isa());
		return sizeof(packed_head) +
		       k_sgemm_packed_b_bytes(kr, g->in_per_group * g->kernel_size, g->out_per_group);
	}
	const k_gemm_kernel *kr = conv_kernel(g, k_cpu_isa());
	return sizeof(packed_head) + (size_t)(g->groups * group_floats(kr, g)) * sizeof(float);
}

/*
 * Filters [m0, m1) of one group (filters: its first) into panels of mr,
 * steps in (channel, tap) order as they lie, or in (tap, channel) order
 * for the direct source.
 */
static void
pack_filters(const k_geometry *g, const k_gemm_kernel *kr, bool tap_major, const float *filters, int64_t m0,
             int64_t m1, float *dst)
{
	int64_t depth = g->in_per_group * g->kernel_size, mr = kr->mr;
	if (!tap_major) {
		k_matrix w = { filters, depth, 1 };
		k_sgemm_pack_a_block(kr, w, g->out_per_group, m0, m1 - m0, 0, depth, dst);
		return;
	}
	for (int64_t i = m0; i < m1; i += mr) {
		float *panel = dst + (i - m0) / mr * depth * mr;
		int64_t live = k_min64(mr, m1 - i);
		for (int64_t t = 0; t < g->kernel_size; t++)
			for (int64_t c = 0; c < g->in_per_group; c++) {
				float *step = panel + (t * g->in_per_group + c) * mr;
				for (int64_t r = 0; r < mr; r++)
					step[r] = r < live ? filters[(i + r) * depth + c * g->kernel_size + t] : 0.0f;
			}
	}
}

void
k_conv_gemm_pack(const k_geometry *g, const float *weights, void *packed)
{
	int64_t depth = g->in_per_group * g->kernel_size;
	if (swap_chosen(g)) {
		/* B is the filters transposed: B[t][o] = weights[o * depth + t]. */
		const k_gemm_kernel *kr = swap_kernel(g, k_cpu_isa());
		packed_head *h = packed;
		*h = (packed_head){ .magic = PACKED_MAGIC, .isa = (int32_t)kr->isa, .nr = kr->nr, .groups = 1,
			            .out_per_group = g->out_per_group, .depth = depth, .swapped = 1 };
		k_matrix w = { weights, 1, depth };
		k_sgemm_pack_b(kr, depth, g->out_per_group, w, (float *)(h + 1));
		return;
	}
	const k_gemm_kernel *kr = conv_kernel(g, k_cpu_isa());
	gplan p;
	gplan_make(g, kr, 1, true, &p);
	packed_head *h = packed;
	*h = (packed_head){ .magic = PACKED_MAGIC, .isa = (int32_t)kr->isa, .nr = kr->nr, .groups = g->groups,
		            .out_per_group = g->out_per_group, .depth = depth,
		            .group_floats = group_floats(kr, g),
		            .tap_major = p.source == SRC_DIRECT || p.source == SRC_PHASED };
	float *data = (float *)(h + 1);
	for (int64_t grp = 0; grp < g->groups; grp++)
		pack_filters(g, kr, h->tap_major, weights + grp * g->out_per_group * depth, 0, g->out_per_group,
		             data + grp * h->group_floats);
}

/* ---- B sources ---- */

/* Rows [r0, r0 + p->span) of the padded input of one group (rows and
 * columns outside the input are zero), channel after channel, p->pitch
 * floats apart; then the slack that reads past the last position touch. */
static void
pad_rows(const gplan *p, const float *x, int64_t r0, float *dst)
{
	const k_geometry *g = &p->g;
	int64_t w = g->in[2], left = g->pad[2];
	int64_t copy = k_min64(w, p->wp - left); /* the input columns that land inside */
	for (int64_t c = 0; c < g->in_per_group; c++) {
		const float *plane = x + c * g->in_size;
		for (int64_t r = 0; r < p->span; r++) {
			float *row = dst + c * p->pitch + r * p->wp;
			int64_t ih = r0 - g->pad[1] + r;
			if (ih < 0 || ih >= g->in[1] || copy <= 0) {
				memset(row, 0, (size_t)p->wp * sizeof *row);
				continue;
			}
			memset(row, 0, (size_t)k_min64(left, p->wp) * sizeof *row);
			memcpy(row + left, plane + ih * w, (size_t)copy * sizeof *row);
			memset(row + left + copy, 0, (size_t)(p->wp - left - copy) * sizeof *row);
		}
	}
	memset(dst + g->in_per_group * p->pitch, 0, (size_t)(p->kr->nr + 16) * sizeof *dst);
}

/* Offsets of B's rows (c, kd, kh, kw) from a position's base; for the
 * direct source, the row shifts of the taps then their column shifts. */
static void
fill_offsets(const gplan *p, int32_t *off)
{
	const k_geometry *g = &p->g;
	int64_t t = 0;
	if (p->source == SRC_DIRECT) {
		for (int64_t kh = 0; kh < g->kernel[1]; kh++)
			for (int64_t kw = 0; kw < g->kernel[2]; kw++, t++) {
				off[t] = (int32_t)(kh * g->dilation[1] - g->pad[1]);
				off[g->kernel_size + t] = (int32_t)(kw * g->dilation[2] - g->pad[2]);
			}
		return;
	}
	if (p->source == SRC_PHASED) {
		for (int64_t kh = 0; kh < g->kernel[1]; kh++)
			for (int64_t kw = 0; kw < g->kernel[2]; kw++, t++) {
				int64_t dy, py, dx, px;
				tap_phase(g, 1, kh, &dy, &py);
				tap_phase(g, 2, kw, &dx, &px);
				off[t] = (int32_t)dy;
				off[g->kernel_size + t] = (int32_t)dx;
				off[2 * g->kernel_size + t] = (int32_t)((py * g->stride[2] + px) * p->pitch);
			}
		return;
	}
	for (int64_t c = 0; c < g->in_per_group; c++)
		for (int64_t kd = 0; kd < g->kernel[0]; kd++)
			for (int64_t kh = 0; kh < g->kernel[1]; kh++)
				for (int64_t kw = 0; kw < g->kernel[2]; kw++, t++) {
					if (p->source == SRC_POINTWISE)
						off[t] = (int32_t)(c * g->in_size);
					else if (p->source == SRC_SHIFTED)
						off[t] = (int32_t)(c * p->pitch + kh * g->dilation[1] * p->wp +
						                   kw * g->dilation[2]);
					else
						off[t] = (int32_t)(t * p->pitch);
				}
}

/*
 * dst[j] = src[2 j] for j < n, reading no further than src[avail - 1]:
 * the stride-2 phases' columns. Vectors of sixteen or eight evens from two
 * loads and a shuffle where the level has them (the columns of a row are
 * a third of a 1x1 stride-2 projection's time element by element).
 */
#if defined(__x86_64__) && defined(__GNUC__) && defined(K_HAVE_AVX512)
__attribute__((target("avx512f"))) static int64_t
evens_avx512(float *dst, const float *src, int64_t n, int64_t avail)
{
	const __m512i pick = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
	int64_t j = 0;
	for (; j + 16 <= n && 2 * j + 32 <= avail; j += 16) {
		__m512 a = _mm512_loadu_ps(src + 2 * j), b = _mm512_loadu_ps(src + 2 * j + 16);
		_mm512_storeu_ps(dst + j, _mm512_permutex2var_ps(a, pick, b));
	}
	if (j < n && n - j < 16) {
		/* The last evens: masked loads of what lies inside, a masked store. */
		int64_t left = k_min64(avail - 2 * j, 32);
		__mmask16 ma = (__mmask16)(left >= 16 ? 0xffffu : (1u << left) - 1u);
		__mmask16 mb = (__mmask16)(left <= 16 ? 0u : left >= 32 ? 0xffffu : (1u << (left - 16)) - 1u);
		__m512 a = _mm512_maskz_loadu_ps(ma, src + 2 * j), b = _mm512_maskz_loadu_ps(mb, src + 2 * j + 16);
		_mm512_mask_storeu_ps(dst + j, (__mmask16)((1u << (n - j)) - 1u), _mm512_permutex2var_ps(a, pick, b));
		j = n;
	}
	return j;
}
#endif
#if defined(__x86_64__) && defined(__GNUC__) && defined(K_HAVE_AVX2)
__attribute__((target("avx2"))) static int64_t
evens_avx2(float *dst, const float *src, int64_t n, int64_t avail)
{
	int64_t j = 0;
	for (; j + 8 <= n && 2 * j + 16 <= avail; j += 8) {
		__m256 a = _mm256_loadu_ps(src + 2 * j), b = _mm256_loadu_ps(src + 2 * j + 8);
		/* a0 a2 b0 b2 | a4 a6 b4 b6, then the 64-bit pairs in order */
		__m256 even = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));
		_mm256_storeu_ps(dst + j, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(even),
		                                                                 _MM_SHUFFLE(3, 1, 2, 0))));
	}
	return j;
}
#endif

static void
evens(k_isa isa, float *dst, const float *src, int64_t n, int64_t avail)
{
	int64_t j = 0;
#if defined(__x86_64__) && defined(__GNUC__) && defined(K_HAVE_AVX512)
	if (isa == K_ISA_AVX512)
		j = evens_avx512(dst, src, n, avail);
#endif
#if defined(__x86_64__) && defined(__GNUC__) && defined(K_HAVE_AVX2)
	if (isa == K_ISA_AVX2)
		j = evens_avx2(dst, src, n, avail);
#endif
	for (; j < n; j++)
		dst[j] = src[2 * j];
}

/*
 * The stride phases of one group's input for output rows from r0: phase
 * (py, px) row i, column j holds input (i * sy + py, j * sx + px), or 0
 * outside the input, for phase rows [r0 + shift, r0 + shift + p->span)
 * (shift: that of the first tap, zero or negative) and the output's
 * columns; channel after channel, phase after phase. Phases no tap reads
 * are left as they are.
 */
static void
phase_rows(const gplan *p, const float *x, int64_t r0, float *dst)
{
	const k_geometry *g = &p->g;
	int64_t sy = g->stride[1], sx = g->stride[2], wo = g->out[2], top, unused;
	tap_phase(g, 1, 0, &top, &unused);
	for (int64_t py = 0; py < sy; py++)
		for (int64_t px = 0; px < sx; px++) {
			bool used = false;
			for (int64_t kh = 0; kh < g->kernel[1] && !used; kh++)
				for (int64_t kw = 0; kw < g->kernel[2] && !used; kw++) {
					int64_t dy, ty, dx, tx;
					tap_phase(g, 1, kh, &dy, &ty);
					tap_phase(g, 2, kw, &dx, &tx);
					used = ty == py && tx == px;
				}
			if (!used)
				continue;
			/* The output columns whose input column lies inside. */
			int64_t inside = px < g->in[2] ? k_min64(wo, k_div_up(g->in[2] - px, sx)) : 0;
			for (int64_t c = 0; c < g->in_per_group; c++) {
				float *plane = dst + (c * p->phases + py * sx + px) * p->pitch;
				for (int64_t r = 0; r < p->span; r++) {
					float *row = plane + r * wo;
					int64_t ih = (r0 + top + r) * sy + py;
					if (ih < 0 || ih >= g->in[1]) {
						memset(row, 0, (size_t)wo * sizeof *row);
						continue;
					}
					const float *src = x + c * g->in_size + ih * g->in[2] + px;
					if (sx == 1) {
						memcpy(row, src, (size_t)inside * sizeof *row);
					} else if (sx == 2) {
						evens(p->kr->isa, row, src, inside, g->in[2] - px);
					} else {
						for (int64_t j = 0; j < inside; j++)
							row[j] = src[j * sx];
					}
					memset(row + inside, 0, (size_t)(wo - inside) * sizeof *row);
				}
			}
		}
}

/*
 * A shifted tile: positions [p0, p0 + cols) of the block starting at output
 * row r0 go, those that fall inside the output width, to their places; the
 * padded columns are dropped. out is the tile's first output channel.
 */
static void
store_shifted(const gplan *p, const k_tile *t, int rows, int64_t p0, int64_t cols, int64_t r0, float *out,
              const float *bias)
{
	const k_gemm_kernel *kr = p->kr;
	int64_t wo = p->g.out[2], plane = p->g.out_size;
	float buf[K_GEMM_MAX_TILE] __attribute__((aligned(64)));
	k_tile u = *t;
	u.c = buf;
	u.ldc = kr->nr;
	u.load_c = false;
	u.row_bias = u.col_bias = NULL;
	u.clamp = false; /* after the bias, below */
	kr->tile(&u);
	for (int64_t q = p0; q < p0 + cols;) {
		int64_t row = q / p->wp, col = q % p->wp;
		int64_t end = k_min64(p0 + cols, row * p->wp + wo);
		if (col < wo) {
			const float *src = buf + (q - p0);
			float *dst = out + (r0 + row) * wo + col;
			for (int r = 0; r < rows; r++) {
				float add = bias ? bias[r] : 0.0f;
				const float *s = src + r * kr->nr;
				float *d = dst + r * plane;
				for (int64_t j = 0; j < end - q; j++)
					d[j] = s[j] + add;
				if (t->clamp) {
					for (int64_t j = 0; j < end - q; j++)
						d[j] = k_clamp(d[j], t->lo, t->hi);
				}
			}
		}
		q = (row + 1) * p->wp;
	}
}

typedef struct gargs {
	const gplan *p;
	const float *x, *weights, *bias;
	/* An activation: a relu or clip the tiles apply as they store (clamp,
	 * to [lo, hi]), else one applied to each task's block of the output
	 * (post), or neither. */
	bool clamp;
	float lo, hi;
	const k_post *post;
	const packed_head *packed;
	float *y;
	char *scratch;
	int64_t chunks;
} gargs;

/*
 * Whether a block runs tile columns outside and panels of filters inside:
 * where its filters (filter_floats) stay in L2 and a tile's input
 * (tile_floats: its nr positions of every channel, over the rows its taps
 * reach) in L1, that input then comes from memory once and stays in L1
 * while each panel sweeps it, where panels outside streamed it from L2
 * once a panel. On a Zen 3, one thread, alternating run by run: 256 -> 64
 * at 56 x 56 1.28 -> 1.21 ms, 256 -> 32 at 27 x 27 0.163 -> 0.152, 64 ->
 * 128 3 x 3 / 2 at 56 x 56 1.68 -> 1.60, ResNet-18 30.1 -> 29.3 (its 256
 * -> 512 3 x 3 / 2, which the L1 bound leaves panels outside, took the
 * same either way); through the GEMM sources SqueezeNet's 16 -> 64 at
 * 55 x 55 0.129 -> 0.126, 32 -> 128 at 27 x 27 0.098 -> 0.094.
 */
static bool
columns_outer(int64_t filter_floats, int64_t tile_floats)
{
	return filter_floats * (int64_t)sizeof(float) <= COLUMNS_OUTER_FILTER_BYTES &&
	       tile_floats * (int64_t)sizeof(float) <= COLUMNS_OUTER_B_BYTES;
}

/*
 * The direct and phased sources: output positions [first, first +
 * positions) of one plane for filters [m0, m1) (packed from a_base). The
 * direct source reads the input x in place; the phased one the phases in
 * the slot (b), which hold output rows from r0 on. shifts: the taps' row
 * shifts, then their column shifts, then (phased) their phases' places.
 */
static void
direct_block(const gplan *p, const float *a_base, const float *x, const float *b, int64_t r0, int64_t first,
             int64_t positions, int64_t m0, int64_t m1, float *out, const float *bias, const int32_t *shifts,
             const gargs *ga)
{
	const k_geometry *g = &p->g;
	const k_gemm_kernel *kr = p->kr;
	int64_t mr = kr->mr, nr = kr->nr;
	k_conv_tile t = { .x = x, .channels = g->in_per_group, .plane = g->in_size, .taps = (int)g->kernel_size,
		          .dy = shifts, .dx = shifts + g->kernel_size, .h = g->in[1], .w = g->in[2] };
	if (p->source == SRC_PHASED) {
		/* Positions count from the plane's start; the phases in the slot
		 * from their first row (r0 + the first tap's shift). */
		int64_t top, unused;
		tap_phase(g, 1, 0, &top, &unused);
		t.x = (const float *)((uintptr_t)b - (uintptr_t)((r0 + top) * g->out[2] * (int64_t)sizeof(float)));
		t.plane = p->phases * p->pitch;
		t.base = shifts + 2 * g->kernel_size;
		t.h = g->out[1];
		t.w = g->out[2];
	}
	t.ldc = g->out_size;
	t.clamp = ga->clamp, t.lo = ga->lo, t.hi = ga->hi;
	bool by_columns = columns_outer((m1 - m0) * p->depth, g->in_per_group * g->kernel[1] * nr);
	int64_t outer = by_columns ? positions : m1 - m0, step_outer = by_columns ? nr : mr;
	int64_t inner = by_columns ? m1 - m0 : positions, step_inner = by_columns ? mr : nr;
	for (int64_t u = 0; u < outer; u += step_outer) {
		for (int64_t v = 0; v < inner; v += step_inner) {
			int64_t i = m0 + (by_columns ? v : u), q = by_columns ? u : v;
			t.rows = (int)k_min64(mr, m1 - i);
			t.a = a_base + (i - m0) / mr * p->depth * mr;
			t.c = out + i * g->out_size + first + q;
			t.row_bias = bias ? bias + i : NULL;
			t.p = first + q;
			t.cols = (int)k_min64(nr, positions - q);
			if (kr->conv_tile_tail != NULL && t.rows <= kr->conv_tail_rows)
				kr->conv_tile_tail(&t);
			else
				kr->conv_tile(&t);
		}
	}
}

/* ---- running ---- */

/* Tasks [t0, t1) on one slot: B's source is made again only when the
 * block changes, the filters (when not pre-packed) when their group or
 * channel block does. */
static void
gemm_tasks(const gargs *a, int64_t t0, int64_t t1, float *slot)
{
	const gplan *p = a->p;
	const k_geometry *g = &p->g;
	const k_gemm_kernel *kr = p->kr;
	int64_t mr = kr->mr, nr = kr->nr, depth = p->depth;
	int32_t *off = (int32_t *)slot;
	float *a_buf = slot + p->off_floats, *b_buf = a_buf + p->a_floats;
	fill_offsets(p, off);
	int64_t have_b = -1, have_a = -1;
	for (int64_t t = t0; t < t1; t++) {
		int64_t mb = t % p->mblocks, field = t / p->mblocks;
		int64_t blk = field % p->blocks, plane = field / p->blocks;
		int64_t n = plane / g->groups, grp = plane % g->groups;
		int64_t m0 = mb * p->mblock, m1 = k_min64(m0 + p->mblock, g->out_per_group);
		const float *x = a->x + (n * g->in_channels + grp * g->in_per_group) * g->in_size;
		float *out = a->y + (n * g->out_channels + grp * g->out_per_group) * g->out_size;
		const float *bias = a->bias ? a->bias + grp * g->out_per_group : NULL;
		/* Filters: panel (i - m0) / mr of a_base holds rows i.. of the group. */
		const float *a_base;
		if (a->packed) {
			a_base = (const float *)(a->packed + 1) + grp * a->packed->group_floats + m0 / mr * depth * mr;
		} else {
			if (have_a != grp * p->mblocks + mb) {
				pack_filters(g, kr, p->source == SRC_DIRECT || p->source == SRC_PHASED,
				             a->weights + grp * g->out_per_group * depth, m0, m1, a_buf);
				have_a = grp * p->mblocks + mb;
			}
			a_base = a_buf;
		}
		int64_t lo, hi;
		block_span(p, blk, &lo, &hi);
		/* The positions this task writes, for a->post (rows of a 2-D
		 * output for the shifted and phased sources). */
		bool by_rows = p->source == SRC_SHIFTED || p->source == SRC_PHASED;
		int64_t q0 = by_rows ? lo * g->out[2] : lo, q1 = by_rows ? hi * g->out[2] : hi;
		if (p->source == SRC_DIRECT) {
			direct_block(p, a_base, x, NULL, 0, lo, hi - lo, m0, m1, out, bias, off, a);
			k_post_block(a->post, out, g->out_size, m0, m1, q0, q1);
			continue;
		}
		if (p->source == SRC_PHASED) {
			if (have_b != field)
				phase_rows(p, x, lo, b_buf);
			have_b = field;
			direct_block(p, a_base, x, b_buf, lo, lo * g->out[2], (hi - lo) * g->out[2], m0, m1, out, bias, off,
			             a);
			k_post_block(a->post, out, g->out_size, m0, m1, q0, q1);
			continue;
		}
		/* B: its base, the positions of the block, where they go. */
		int64_t first = lo, positions, r0 = 0;
		const float *b_base;
		bool tail_packed = false;
		if (p->source == SRC_SHIFTED) {
			r0 = lo;
			positions = shifted_positions(p, hi - lo);
			if (have_b != field)
				pad_rows(p, x, r0, b_buf);
			b_base = b_buf;
		} else {
			positions = hi - lo;
			if (p->source == SRC_POINTWISE) {
				b_base = x + first;
				if (positions % nr != 0 && have_b != field) {
					int64_t last = positions / nr * nr;
					k_matrix xm = { x, g->in_size, 1 };
					k_sgemm_pack_b_block(kr, xm, g->out_size, first + last, positions - last, 0, depth,
					                     b_buf);
				}
				tail_packed = true;
			} else {
				if (have_b != field)
					k_im2col(g, x, first, first + positions, p->pitch, b_buf);
				b_base = b_buf;
			}
		}
		have_b = field;
		bool dense = p->source != SRC_SHIFTED || p->wp == g->out[2];
		bool by_columns = columns_outer((m1 - m0) * depth, depth * nr);
		int64_t outer = by_columns ? positions : m1 - m0, step_outer = by_columns ? nr : mr;
		int64_t inner = by_columns ? m1 - m0 : positions, step_inner = by_columns ? mr : nr;
		/* One tile made here and changed member by member: a compound
		 * literal per tile was a rep stos of its 112 bytes, some tenth of
		 * the time of shallow 1 x 1 layers (SqueezeNet's 16 -> 64 at
		 * 55 x 55, issue 10's session 15). */
		k_tile tile = { .depth = depth, .clamp = a->clamp, .lo = a->lo, .hi = a->hi, .ldc = g->out_size };
		for (int64_t u = 0; u < outer; u += step_outer) {
			for (int64_t v = 0; v < inner; v += step_inner) {
				int64_t i = m0 + (by_columns ? v : u), q = by_columns ? u : v;
				int rows = (int)k_min64(mr, m1 - i), cols = (int)k_min64(nr, positions - q);
				const float *row_bias = bias ? bias + i : NULL;
				tile.a = a_base + (i - m0) / mr * depth * mr;
				tile.b = b_base + q;
				tile.b_offsets = off;
				if (tail_packed && cols < nr) {
					tile.b = b_buf;
					tile.b_offsets = NULL;
				}
				if (!dense) {
					store_shifted(p, &tile, rows, q, cols, r0, out + i * g->out_size, row_bias);
					continue;
				}
				tile.c = out + i * g->out_size + (p->source == SRC_SHIFTED ? r0 * g->out[2] : first) + q;
				tile.row_bias = row_bias;
				if (rows == mr && cols == nr)
					kr->tile(&tile);
				else
					k_gemm_tile_part(kr, &tile, rows, cols);
			}
		}
		k_post_block(a->post, out, g->out_size, m0, m1, q0, q1);
	}
}

static void
gemm_chunks(void *arg, int64_t c0, int64_t c1)
{
	const gargs *a = arg;
	for (int64_t c = c0; c < c1; c++) {
		int64_t t0 = c * a->p->tasks / a->chunks, t1 = (c + 1) * a->p->tasks / a->chunks;
		gemm_tasks(a, t0, t1, (float *)(a->scratch + (size_t)c * a->p->slot_floats * sizeof(float)));
	}
}

/* Whether swap_run applied post: a relu or clip, as it stores. */
static bool
swap_posts(const k_post *post)
{
	float lo, hi;
	return k_post_clamp(post, &lo, &hi);
}

bool
k_conv_gemm(const k_geometry *g, const float *x, const float *weights, const void *packed, const float *bias,
            float *y, void *scratch, int slots, const k_post *post, const st_exec_ctx *ctx)
{
	const packed_head *h = packed;
	const k_gemm_kernel *kr;
	if (h != NULL && h->swapped) {
		assert(h->magic == PACKED_MAGIC && g->groups == 1 && h->out_per_group == g->out_per_group &&
		       h->depth == g->in_per_group * g->kernel_size && swap_possible(g));
		kr = k_gemm_kernel_by_width((k_isa)h->isa, (int)h->nr);
		assert(kr != NULL);
		swap_run(g, kr, x, weights, (const float *)(h + 1), bias, y, scratch, k_threads_used(slots, ctx), post, ctx);
		return swap_posts(post);
	}
	if (h == NULL && swap_chosen(g)) {
		swap_run(g, swap_kernel(g, k_cpu_isa()), x, weights, NULL, bias, y, scratch, k_threads_used(slots, ctx),
		         post, ctx);
		return swap_posts(post);
	}
	if (h != NULL) {
		assert(h->magic == PACKED_MAGIC && h->groups == g->groups && h->out_per_group == g->out_per_group &&
		       h->depth == g->in_per_group * g->kernel_size);
		kr = k_gemm_kernel_by_width((k_isa)h->isa, (int)h->nr);
		assert(kr != NULL);
		gplan q;
		gplan_make(g, kr, 1, true, &q);
		assert((q.source == SRC_DIRECT || q.source == SRC_PHASED) == (h->tap_major != 0));
	} else {
		kr = conv_kernel(g, k_cpu_isa());
	}
	int threads = k_threads_used(slots, ctx);
	gplan p;
	bool ok = gplan_make(g, kr, threads, h != NULL, &p);
	assert(ok);
	(void)ok;
	/* Rows of a plane are whole planes only in 2-D (depth 1): otherwise
	 * the caller makes the pass. */
	bool posted = post != NULL && post->on &&
	              (g->out[0] == 1 || (p.source != SRC_SHIFTED && p.source != SRC_PHASED));
	gargs a = { .p = &p, .x = x, .weights = weights, .bias = bias, .packed = h, .y = y, .scratch = scratch };
	/* The tiles clamp where they can: the shifted and phased sources store
	 * whole rows of whole planes, as the post does. */
	if (posted)
		a.clamp = k_post_clamp(post, &a.lo, &a.hi);
	a.post = posted && !a.clamp ? post : NULL;
	a.chunks = k_min64(p.tasks, threads);
	k_parallel_for(ctx, a.chunks, 1, gemm_chunks, &a);
	return posted;
}
