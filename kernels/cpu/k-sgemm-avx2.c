/* The AVX2+FMA micro-kernel (k-sgemm-tile.h), built with a target attribute
 * so that a baseline build carries it; k-cpu.c decides whether it runs. */
#include "config.h"

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
#define V_STOREU(p, v) _mm256_storeu_ps(p, v)

/* 6 rows by 2 vectors (6 x 16): 12 accumulators, 2 B vectors and one
 * broadcast in the 16 registers AVX2 has. */
#define MR 6
#define NV 2
#define TILE_FN tile_avx2

#include "k-sgemm-tile.h"

/* kc x 6 of A is 6 KiB (L1); kc x nc of B 384 KiB (L2); mc x kc of A
 * (packed once per depth block) 1 MiB. */
const k_gemm_kernel k_gemm_kernel_avx2 = {
	.isa = K_ISA_AVX2, .mr = MR, .nr = NV * VLEN, .kc = 256, .nc = 384, .mc = 1020, .tile = tile_avx2,
};

#endif
