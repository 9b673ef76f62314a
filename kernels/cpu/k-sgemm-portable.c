/* The portable micro-kernel (k-sgemm-tile.h) in GCC vector extensions, for
 * the compiler's baseline instruction set. */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "k-sgemm.h"

/* Four floats: one register of SSE2 (the x86-64 baseline) or NEON, which
 * GCC keeps in registers; wider generic vectors it would keep in memory. */
typedef float v4 __attribute__((vector_size(16)));

/* Loads and stores through memcpy (any alignment), as statement
 * expressions: a function returning a vector would depend on the
 * instruction set for its calling convention. */
#define V4_LOAD(p) __extension__({ v4 v4_; memcpy(&v4_, (p), sizeof v4_); v4_; })
#define V4_STORE(p, v) __extension__({ v4 v4_ = (v); memcpy((p), &v4_, sizeof v4_); })

#define K_TARGET
#define VEC v4
#define VLEN 4
#define V_ZERO() ((v4){ 0 })
#define V_LOADU(p) V4_LOAD(p)
#define V_BCAST(p) __extension__({ float f_ = *(p); (v4){ f_, f_, f_, f_ }; })
#define V_FMA(a, b, c) ((a) * (b) + (c))
#define V_ADD(a, b) ((a) + (b))
/* a where the comparison holds, else b (so b where either is NaN). */
typedef int32_t v4i __attribute__((vector_size(16)));
#define V4_PICK(m, a, b) ((v4)(((m) & (v4i)(a)) | (~(m) & (v4i)(b))))
#define V_MAX(a, b) __extension__({ v4 x_ = (a), y_ = (b); V4_PICK(x_ > y_, x_, y_); })
#define V_MIN(a, b) __extension__({ v4 u_ = (a), w_ = (b); V4_PICK(u_ < w_, u_, w_); })
#define V_STOREU(p, v) V4_STORE(p, v)

/* 6 rows by two vectors of 4 (6 x 8): 12 registers of sums, 2 of B and
 * one broadcast in the 16 that SSE2 has. */
#define MR 6
#define NV 2
#define TILE_FN tile_portable

#include "k-sgemm-tile.h"

const k_gemm_kernel k_gemm_kernel_portable = {
	.isa = K_ISA_PORTABLE, .mr = MR, .nr = NV * VLEN, .kc = 256, .nc = 256, .mc = 516, .tile = tile_portable,
};
