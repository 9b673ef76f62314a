/* Strata's own single-precision matrix product: operands packed into
 * panels, cache blocking, and a register-tile micro-kernel per SIMD level
 * (k-sgemm-avx512.c, k-sgemm-avx2.c, k-sgemm-portable.c). */
#ifndef K_SGEMM_H
#define K_SGEMM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "k-cpu.h"
#include "st-plugin.h"

/*
 * Layouts. C (m x n) = A (m x k) . B (k x n), all row-major in meaning; a
 * k_matrix gives any strides. Packed A is cut into panels of mr rows
 * (rows past m are zero): panel p holds, for each step t of the depth, the
 * mr values A[p*mr + r][t] one after another. Packed B is cut into panels
 * of nr columns (zero past n): for each step t, B[t][q*nr + j] for j < nr.
 * A panel of a pre-packed operand spans the whole depth k, so its part for
 * steps [t0, t1) starts t0*mr (or t0*nr) floats into the panel.
 */

/* Element (i, j) at data[i * rs + j * cs]. */
typedef struct k_matrix {
	const float *data;
	int64_t rs, cs;
} k_matrix;

/*
 * One register tile as a micro-kernel computes it: mr x nr sums over
 * `depth` steps, then c = sums (+ c when load_c) (+ row_bias[r]) (+
 * col_bias[j]), clamped to [lo, hi] with `clamp` (k_clamp: a relu or a
 * clip applied while the tile is in registers), stored as mr rows of nr
 * floats ldc apart. Fusions that act on a finished tile go here; a tile
 * is finished when it has seen the last block of the depth (only then may
 * it clamp).
 */
typedef struct k_tile {
	int64_t depth;
	const float *a;           /* a packed A panel, at its first step; or see lda */
	int64_t lda;              /* 0, or A read where it lies: step s of row r at a[r * lda + s] */
	const float *b;           /* a packed B panel, or the base of b_offsets */
	const int32_t *b_offsets; /* NULL, or step t's nr values at b + b_offsets[t], any alignment */
	float *c;
	int64_t ldc;
	int rows;                 /* 0 (all mr), or the first rows stored (a product's last panel) */
	const float *row_bias;    /* mr values, or NULL */
	const float *col_bias;    /* nr values, or NULL */
	bool load_c;
	bool clamp;
	float lo, hi;
	/* NULL, or a packed B panel of the next block, whose vector b_next_lane
	 * of each step the tile prefetches into L2 as it goes (without
	 * b_offsets; none when the lane is past the tile's vectors): the rows
	 * of a block share that block's fetching from memory while they
	 * compute, where the first row would otherwise wait for all of it. */
	const float *b_next;
	int b_next_lane;
} k_tile;

/* What a clamping tile does to each result: k_activation's relu (lo 0, hi
 * infinity) and clip, comparison for comparison, so that a NaN stays NaN
 * and the result is the same to the bit. The micro-kernels use max(lo, v)
 * then min(hi, v), which the x86 instructions answer alike (v when either
 * is NaN). */
static inline float
k_clamp(float v, float lo, float hi)
{
	v = v < lo ? lo : v;
	return v > hi ? hi : v;
}

/*
 * A register tile of a stride-1 convolution whose output is as large as its
 * input (same padding), read from the input where it lies: the `cols`
 * output positions from position p of an h x w plane (row-major), summed
 * over taps (each an input shift of dy rows and dx columns, from x plus
 * the tap's base) and input channels (plane floats apart), input outside
 * the plane reading as zero. A is packed with its steps in (tap, channel) order. The result goes
 * to c as k_tile's does, only the first cols columns of each row.
 */
typedef struct k_conv_tile {
	const float *a;
	const float *x;
	int64_t channels, plane;
	int taps;
	const int32_t *dy, *dx;
	const int32_t *base;     /* NULL, or per tap floats added to x (which input a tap reads) */
	int64_t p, h, w;
	int cols;
	int rows;      /* 0 (all MR), or the first rows stored: a group's last panel */
	float *c;
	int64_t ldc;
	const float *row_bias;
	bool load_c;
	bool clamp;    /* as k_tile's */
	float lo, hi;
} k_conv_tile;

/* How many channel steps ahead the direct convolution tile prefetches its
 * input, over 32 channels or more (0: it does not). 4 by default: on a
 * Xeon with two 512-bit FMA units, 1x1 256 -> 64 at 56 x 56 1.13 times
 * faster, 144 -> 24 1.11, ResNet-18's 3x3/2 64 -> 128 1.07, a distance of
 * 8 as good on deep products and slower on thin ones (bench-gemm --small).
 * For benchmarks to change. */
extern int k_conv_tile_prefetch;
/* For benchmarks: whether k_sgemm_block has the tiles prefetch the next
 * block of filters packed once (k_tile's b_next; true, the default). */
extern bool k_sgemm_fetch_next;
/* For benchmarks: whether k_sgemm_parallel shares a few uneven column
 * panels out tile by tile (true, the default). */
extern bool k_sgemm_split_tiles;

/* The largest mr x nr of any level: a tile buffer of this many floats holds
 * any tile. */
#define K_GEMM_MAX_TILE 1024

/* One SIMD level's micro-kernel and the block sizes tuned for it. */
typedef struct k_gemm_kernel {
	k_isa isa;
	int mr, nr;         /* the register tile */
	int64_t kc;         /* depth of one packed block: an A panel of kc steps stays in L1 */
	/* The depth of one block where nothing is packed per call (A read in
	 * place or packed once, B packed once), when deeper than kc: each
	 * tile then finishes in fewer passes; 0 for kc. */
	int64_t kc_whole;
	int64_t nc;         /* columns of one packed B block (kc x nc stays in L2) */
	int64_t mc;         /* rows of one packed A block (bounds the scratch) */
	void (*tile)(const k_tile *t);
	/* The direct convolution tile, where the level has masked loads, or NULL. */
	void (*conv_tile)(const k_conv_tile *t);
	/* A direct convolution tile for a last panel of at most conv_tail_rows
	 * filters, reading conv_tile's panels (mr filters a step) and computing
	 * only its own rows; or NULL. */
	void (*conv_tile_tail)(const k_conv_tile *t);
	int conv_tail_rows;
	/* A variant with fewer columns (and more rows) for products with few
	 * columns, or NULL. */
	const struct k_gemm_kernel *narrow;
	/* A variant with few rows (and more columns) for products with few
	 * rows, such as convolutions on small images with the output positions
	 * as rows; or NULL. */
	const struct k_gemm_kernel *few_rows;
	/* A variant of 24 columns in 8-lane vectors, for products with 24
	 * columns (MobileNetV2's 24-channel layers channels last), which a
	 * 16-lane tile covers with a third empty; or NULL. */
	const struct k_gemm_kernel *cols24;
	/* A variant of 5 rows and the main tile's columns, for products whose
	 * rows leave the main tile's last panel nearly empty (7 x 7 = 49
	 * positions: 6-row tiles compute 54 rows, 5-row ones 50); or NULL. It
	 * packs B as the main tile does. */
	const struct k_gemm_kernel *rows5;
} k_gemm_kernel;

/* The kernel of one level, or NULL when this build lacks it. */
const k_gemm_kernel *k_gemm_kernel_of(k_isa isa);
/* The kernel of k_cpu_isa(). */
const k_gemm_kernel *k_gemm_kernel_now(void);
/* Of a level's kernels (the main one and its narrow variant), the one
 * whose tiles waste least on an m x n product; the main one unless the
 * other saves more than a twentieth. */
const k_gemm_kernel *k_gemm_kernel_for(k_isa isa, int64_t m, int64_t n);
/* The kernel of level isa (the main one or a variant) whose tile is nr
 * columns wide, or NULL. */
const k_gemm_kernel *k_gemm_kernel_by_width(k_isa isa, int nr);

/* Each level's table (k-sgemm-<level>.c); only those this build has. */
extern const k_gemm_kernel k_gemm_kernel_portable;
extern const k_gemm_kernel k_gemm_kernel_avx2;
extern const k_gemm_kernel k_gemm_kernel_avx512;

/* ---- k-sgemm.c ---- */

/* Pre-packing a constant operand (weights, at prepare): bytes needed, and
 * the packing itself, into 64-byte aligned memory. */
size_t k_sgemm_packed_a_bytes(const k_gemm_kernel *kr, int64_t m, int64_t k);
void k_sgemm_pack_a(const k_gemm_kernel *kr, int64_t m, int64_t k, k_matrix a, float *packed);
size_t k_sgemm_packed_b_bytes(const k_gemm_kernel *kr, int64_t k, int64_t n);
void k_sgemm_pack_b(const k_gemm_kernel *kr, int64_t k, int64_t n, k_matrix b, float *packed);

/* Rows [i0, i0 + rows) of A over steps [t0, t0 + depth) into panels of
 * depth * mr floats each (the building block of both packings). */
void k_sgemm_pack_a_block(const k_gemm_kernel *kr, k_matrix a, int64_t m, int64_t i0, int64_t rows,
                          int64_t t0, int64_t depth, float *dst);
void k_sgemm_pack_b_block(const k_gemm_kernel *kr, k_matrix b, int64_t n, int64_t j0, int64_t cols,
                          int64_t t0, int64_t depth, float *dst);

/* One product: C = A . B (+ C when accumulate) + the biases. */
typedef struct k_sgemm_op {
	int64_t m, n, k;
	k_matrix a, b;           /* unused where the packed form is given */
	const float *a_packed;   /* by k_sgemm_pack_a with the same kernel, m and k; or NULL */
	const float *b_packed;   /* by k_sgemm_pack_b with the same kernel, k and n; or NULL */
	float *c;
	int64_t ldc;
	const float *row_bias;   /* m values, one per row of C, or NULL */
	const float *col_bias;   /* n values, one per column, or NULL */
	bool accumulate;
	/* A is read where it lies (a.cs must be 1), rows a.rs apart, instead of
	 * being packed: for products whose A is read once, such as a pointwise
	 * convolution channels last, where packing would cost as much as the
	 * product. A last panel of fewer than mr rows is packed still. */
	bool a_in_place;
	bool clamp;              /* k_clamp to [lo, hi] as the results are stored */
	float lo, hi;
} k_sgemm_op;

/* Scratch one thread needs for op (64-byte aligned when given). */
size_t k_sgemm_scratch_bytes(const k_gemm_kernel *kr, const k_sgemm_op *op);

/* The block C[i0:i1, j0:j1] of op on this thread; i0 is a multiple of mr
 * and j0 of nr. No allocation. */
void k_sgemm_block(const k_gemm_kernel *kr, const k_sgemm_op *op, int64_t i0, int64_t i1, int64_t j0,
                   int64_t j1, void *scratch);
void k_sgemm(const k_gemm_kernel *kr, const k_sgemm_op *op, void *scratch);

/* The same over the pool: C is cut into at most min(slots, threads) blocks
 * of whole panels, block c using scratch slot c. */
size_t k_sgemm_parallel_scratch_bytes(const k_gemm_kernel *kr, const k_sgemm_op *op, int slots);
void k_sgemm_parallel(const k_gemm_kernel *kr, const k_sgemm_op *op, void *scratch, int slots,
                      const st_exec_ctx *ctx);

/* The plain loops, summing in double: what the tests hold k_sgemm to. */
void k_sgemm_ref(const k_sgemm_op *op);

/*
 * Runs t's product into a tile buffer and stores its first rows x cols
 * values as t says (c, ldc, load_c, biases): for tiles at the edges of C.
 */
void k_gemm_tile_part(const k_gemm_kernel *kr, const k_tile *t, int rows, int cols);

#endif
