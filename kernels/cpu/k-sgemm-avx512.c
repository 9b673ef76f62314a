/* The AVX-512 micro-kernel (k-sgemm-tile.h), built with a target attribute
 * so that a baseline build carries it; k-cpu.c decides whether it runs. */
#include "config.h"

#include "k-sgemm.h"

#if defined(K_HAVE_AVX512) && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>

#define K_TARGET __attribute__((target("avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")))
#define VEC __m512
#define VLEN 16
#define V_ZERO() _mm512_setzero_ps()
#define V_LOADU(p) _mm512_loadu_ps(p)
#define V_BCAST(p) _mm512_set1_ps(*(p))
#define V_FMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define V_ADD(a, b) _mm512_add_ps(a, b)
#define V_MAX(a, b) _mm512_max_ps(a, b)
#define V_MIN(a, b) _mm512_min_ps(a, b)
#define V_STOREU(p, v) _mm512_storeu_ps(p, v)
#define V_MASKZ_LOADU(m, p) _mm512_maskz_loadu_ps(m, p)
#define V_PART_STOREU(p, m, n, v) _mm512_mask_storeu_ps(p, m, v)
#define VI __m512i
#define MASK __mmask16
#define VI_SET1(x) _mm512_set1_epi32(x)
#define VI_IOTA() _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
#define VI_ADD(a, b) _mm512_add_epi32(a, b)
#define VI_WRAP(row, col, w)                                                     \
	do {                                                                     \
		__mmask16 wrap_ = _mm512_cmpge_epi32_mask(col, _mm512_set1_epi32(w)); \
		col = _mm512_mask_sub_epi32(col, wrap_, col, _mm512_set1_epi32(w)); \
		row = _mm512_mask_add_epi32(row, wrap_, row, _mm512_set1_epi32(1)); \
	} while (0)
#define M_INSIDE(v, lo, hi)                                                      \
	((__mmask16)(_mm512_cmpge_epi32_mask(v, _mm512_set1_epi32(lo)) &         \
	             _mm512_cmplt_epi32_mask(v, _mm512_set1_epi32((int32_t)(hi)))))
#define M_AND(a, b) ((__mmask16)((a) & (b)))
#define M_NONE(m) ((m) == 0)
#define M_ALL(m) ((m) == 0xffff)

/*
 * The main tile: 8 rows by 3 vectors (8 x 48), 24 accumulators. On Zen 4,
 * which runs a 512-bit FMA as two 256-bit halves, every shape tried (6x64,
 * 8x48, 12x32, 14x32, 16x16) sustains 111-116 GFLOP/s of its 117 peak with
 * the panels in cache, so the shape is picked for the problems: 8 rows
 * divide the channel counts of convolutions, and 48 columns make fewer
 * B loads per FMA than 16 or 32 while wasting less of a 56-wide image row
 * than 64.
 */
#ifndef K_AVX512_MR
#define K_AVX512_MR 8
#define K_AVX512_NV 3
#endif
#define MR K_AVX512_MR
#define NV K_AVX512_NV
#define TILE_FN tile_avx512
#define CONV_TILE_FN conv_tile_avx512
#include "k-sgemm-tile.h"
#include "k-sgemm-conv-tile.h"
#undef MR
#undef NV
#undef TILE_FN
#undef CONV_TILE_FN

/* The narrow tile: 16 rows by one vector (16 x 16), for products with few
 * columns (the 14x14 and 7x7 layers of a ResNet, where 48 columns would
 * leave up to half the tile empty). */
#define MR 16
#define NV 1
#define TILE_FN tile_avx512_narrow
#define CONV_TILE_FN conv_tile_avx512_narrow
#include "k-sgemm-tile.h"
#include "k-sgemm-conv-tile.h"
#undef MR
#undef NV
#undef TILE_FN
#undef CONV_TILE_FN

/* The few-rows tile: 7 rows by 4 vectors (7 x 64), for products whose
 * rows are the output positions of a small image (7 x 7 = 49 of them, 14 x
 * 14 = 196 = 28 x 7) and whose columns are output channels (multiples of
 * 64 mostly). 28 accumulators and 4 B vectors fill the 32 registers; the
 * A values come as broadcast memory operands. */
#define MR 7
#define NV 4
#define TILE_FN tile_avx512_few_rows
#include "k-sgemm-tile.h"
#undef MR
#undef NV
#undef TILE_FN

/* The 24-column tile: 8 rows by three 8-lane vectors (8 x 24), 24
 * accumulators. Zen 4 runs two 256-bit FMAs a cycle, as many flops as one
 * 512-bit one, so nothing is lost against the 16-lane tiles, and a product
 * of 24 columns (channels last, MobileNetV2's 24-channel projections)
 * fills it where 16-lane tiles leave a third empty. */
#undef VEC
#undef VLEN
#undef V_ZERO
#undef V_LOADU
#undef V_BCAST
#undef V_FMA
#undef V_ADD
#undef V_MAX
#undef V_MIN
#undef V_STOREU
#define VEC __m256
#define VLEN 8
#define V_ZERO() _mm256_setzero_ps()
#define V_LOADU(p) _mm256_loadu_ps(p)
#define V_BCAST(p) _mm256_broadcast_ss(p)
#define V_FMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define V_ADD(a, b) _mm256_add_ps(a, b)
#define V_MAX(a, b) _mm256_max_ps(a, b)
#define V_MIN(a, b) _mm256_min_ps(a, b)
#define V_STOREU(p, v) _mm256_storeu_ps(p, v)
#define MR 8
#define NV 3
#define TILE_FN tile_avx512_cols24
#include "k-sgemm-tile.h"
#undef MR
#undef NV
#undef TILE_FN
/* Back to 16 lanes, which the tables below count in. */
#undef VLEN
#define VLEN 16

/* kc x 8 of A is 12 KiB (L1); kc x nc of B 504 KiB (L2). */
static const k_gemm_kernel cols24 = {
	.isa = K_ISA_AVX512, .mr = 8, .nr = 24, .kc = 384, .nc = 336, .mc = 1024, .tile = tile_avx512_cols24,
};

/* kc x 7 of A is 14 KiB (L1); kc x nc of B 512 KiB (L2). */
static const k_gemm_kernel few_rows = {
	.isa = K_ISA_AVX512, .mr = 7, .nr = 64, .kc = 512, .nc = 256, .mc = 1022, .tile = tile_avx512_few_rows,
};

/* kc x 16 of A is 16 KiB (L1); kc x nc of B 512 KiB (L2); mc x kc of A
 * (packed once per depth block, read panel by panel) 1 MiB. */
static const k_gemm_kernel narrow = {
	.isa = K_ISA_AVX512, .mr = 16, .nr = 16, .kc = 256, .nc = 512, .mc = 1024, .tile = tile_avx512_narrow,
	.conv_tile = conv_tile_avx512_narrow,
};

/* kc x 8 of A is 12 KiB (L1); kc x nc of B 504 KiB (L2); mc x kc of A
 * (packed once per depth block, read panel by panel) 1.5 MiB. */
const k_gemm_kernel k_gemm_kernel_avx512 = {
	.isa = K_ISA_AVX512, .mr = K_AVX512_MR, .nr = K_AVX512_NV * VLEN, .kc = 384, .nc = 336, .mc = 1024,
	.tile = tile_avx512, .conv_tile = conv_tile_avx512, .narrow = &narrow, .few_rows = &few_rows,
	.cols24 = &cols24,
};

#endif
