/* The AVX2+FMA micro-kernel (k-sgemm-tile.h), built with a target attribute
 * so that a baseline build carries it; k-cpu.c decides whether it runs. */
#include "config.h"

#include "k-int.h"
#include "k-sgemm.h"

#if defined(K_HAVE_AVX2) && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>

#define K_TARGET __attribute__((target("avx2,fma")))
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
#define V_MASKZ_LOADU(m, p) _mm256_maskload_ps(p, m)
/* Not a masked store: k_store_part_avx2 (k-int.h) says why. */
#define V_PART_STOREU(p, m, n, v) k_store_part_avx2((p), (v), (n))
#define VI __m256i
#define MASK __m256i
#define VI_SET1(x) _mm256_set1_epi32(x)
#define VI_IOTA() _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)
#define VI_ADD(a, b) _mm256_add_epi32(a, b)
#define VI_WRAP(row, col, w)                                                          \
	do {                                                                          \
		__m256i wrap_ = _mm256_cmpgt_epi32(col, _mm256_set1_epi32((w) - 1));  \
		col = _mm256_sub_epi32(col, _mm256_and_si256(wrap_, _mm256_set1_epi32(w))); \
		row = _mm256_sub_epi32(row, wrap_);                                    \
	} while (0)
#define M_INSIDE(v, lo, hi)                                                           \
	_mm256_and_si256(_mm256_cmpgt_epi32(v, _mm256_set1_epi32((lo) - 1)),          \
	                 _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t)(hi)), v))
#define M_AND(a, b) _mm256_and_si256(a, b)
#define M_NONE(m) _mm256_testz_si256(m, m)
#define M_ALL(m) _mm256_testc_si256(m, _mm256_set1_epi32(-1))

/* 6 rows by 2 vectors (6 x 16): 12 accumulators, 2 B vectors and one
 * broadcast in the 16 registers AVX2 has. */
#define MR 6
#define NV 2
#define TILE_FN tile_avx2
#define CONV_TILE_FN conv_tile_avx2

#include "k-sgemm-tile.h"
#include "k-sgemm-conv-tile.h"

/* The direct convolution tile for a group's last panel of at most 4
 * filters (64 filters: ten panels of 6 and one of 4), reading the main
 * tile's panels of 6 filters a step: 4 rows of sums where the main tile
 * computes 6. On a Zen 3, one thread, alternating run by run in one
 * process (25th percentile): 256 -> 64 at 56 x 56 1.229 -> 1.204 ms,
 * SqueezeNet's squeezes 64 -> 16 at 55 x 55 0.108 -> 0.103, 128 -> 16
 * 0.190 -> 0.181, 256 -> 32 at 27 x 27 0.168 -> 0.164. */
#undef MR
#undef CONV_TILE_FN
#define MR 4
#define CONV_A_STEP 6
#define CONV_TILE_FN conv_tile_avx2_tail4
#include "k-sgemm-conv-tile.h"

/* 4 rows by 3 vectors (4 x 24), 12 accumulators again: products of 24
 * columns (channels last, MobileNetV2's 24-channel projections at 56 x 56)
 * fill it where 16-column tiles leave a quarter of their sums unused; on
 * a Zen 3 those two layers took 0.44 and 0.30 ms against ONNX Runtime's
 * 0.24 and 0.16. */
#undef MR
#undef NV
#undef TILE_FN
#define MR 4
#define NV 3
#define TILE_FN tile_avx2_cols24
#include "k-sgemm-tile.h"

/* 5 rows by 2 vectors (5 x 16), 10 accumulators: products of 49 positions
 * (MobileNetV2's 7 x 7 layers channels last), of which 6-row tiles compute
 * 54. On a Zen 3, one thread, best of 3 alternated processes: 320 -> 1280
 * 0.569 -> 0.530 ms, 160 -> 960 0.206 -> 0.199; the 960-deep projections
 * stay (0.213, 0.423: their filter panels stream from L2 either way). */
#undef MR
#undef NV
#undef TILE_FN
#define MR 5
#define NV 2
#define TILE_FN tile_avx2_rows5
#include "k-sgemm-tile.h"

static const k_gemm_kernel rows5 = {
	.isa = K_ISA_AVX2, .mr = 5, .nr = 16, .kc = 256, .kc_whole = 1024, .nc = 384, .mc = 1020,
	.tile = tile_avx2_rows5,
};

/* kc x 4 of A is 4 KiB (L1); kc x nc of B 384 KiB (L2). */
static const k_gemm_kernel cols24 = {
	.isa = K_ISA_AVX2, .mr = 4, .nr = 24, .kc = 256, .kc_whole = 1024, .nc = 384, .mc = 1020,
	.tile = tile_avx2_cols24,
};

/*
 * kc x 6 of A is 6 KiB (L1); kc x nc of B 384 KiB (L2); mc x kc of A
 * (packed once per depth block) 1 MiB. Where nothing is packed per call,
 * depth blocks of up to 1024 (24 KiB of A, still in the 32 KiB L1, while
 * B streams from L2 or beyond): on a Zen 3, ABBA in one process, one
 * thread, MobileNetV2's channels-last 960 -> 160 at 7 x 7 0.323 -> 0.304
 * ms, 960 -> 320 0.409 -> 0.380, 320 -> 1280 0.523 -> 0.487, 576 -> 96 at
 * 14 x 14 0.342 -> 0.328 (nc 128 instead of 384 beside it: no better), and
 * the swapped convolutions (k-conv-gemm.c) likewise.
 */
const k_gemm_kernel k_gemm_kernel_avx2 = {
	.isa = K_ISA_AVX2, .mr = 6, .nr = 16, .kc = 256, .kc_whole = 1024, .nc = 384, .mc = 1020,
	.tile = tile_avx2, .conv_tile = conv_tile_avx2, .conv_tile_tail = conv_tile_avx2_tail4, .conv_tail_rows = 4,
	.cols24 = &cols24, .rows5 = &rows5,
};

#endif
