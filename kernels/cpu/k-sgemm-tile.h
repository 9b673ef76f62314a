/*
 * The micro-kernel body, written once and compiled per SIMD level: each
 * k-sgemm-<level>.c defines its vector type and operations, its register
 * tile (MR rows by NV vectors of VLEN floats) and the function name, then
 * includes this file. The mr x nr sums live in registers for the whole
 * depth; every step loads NV vectors of B and multiplies them by MR
 * broadcast values of A.
 *
 * Needs: VEC, VLEN, MR, NV, TILE_FN, K_TARGET (function attributes, may be
 * empty), V_ZERO(), V_LOADU(p), V_BCAST(p) (p points at one float),
 * V_FMA(a, b, c) (a * b + c), V_ADD(a, b), V_MAX(a, b) (a > b ? a : b)
 * and V_MIN(a, b) (a < b ? a : b), each lane b where either is NaN,
 * V_STOREU(p, v).
 *
 * A tile of t->rows rows (fewer than MR: a product's last panel) computes
 * all MR and stores, loads (load_c) and biases only those rows.
 */

#define NR (NV * VLEN)

/* One step: row r's value of A at ap + r * as. */
#define TILE_STEP(ap, as, bp)                                                      \
	do {                                                                       \
		VEC bv_[NV];                                                       \
		_Pragma("GCC unroll 8") for (int j_ = 0; j_ < NV; j_++)            \
			bv_[j_] = V_LOADU((bp) + j_ * VLEN);                       \
		_Pragma("GCC unroll 32") for (int r_ = 0; r_ < MR; r_++) {         \
			VEC av_ = V_BCAST((ap) + r_ * (as));                       \
			_Pragma("GCC unroll 8") for (int j_ = 0; j_ < NV; j_++)    \
				acc[r_][j_] = V_FMA(av_, bv_[j_], acc[r_][j_]);    \
		}                                                                  \
	} while (0)

K_TARGET static void
TILE_FN(const k_tile *t)
{
	VEC acc[MR][NV];
	_Pragma("GCC unroll 32") for (int r = 0; r < MR; r++)
		_Pragma("GCC unroll 8") for (int j = 0; j < NV; j++)
			acc[r][j] = V_ZERO();
	const float *a = t->a;
	int64_t depth = t->depth, lda = t->lda;
	const float *pf = t->b_next != NULL && t->b_next_lane < NV ? t->b_next + t->b_next_lane * VLEN : NULL;
	if (lda != 0) {
		/* A where it lies: MR rows lda apart, each read along its steps. */
		const float *b = t->b;
		if (pf != NULL)
			for (int64_t s = 0; s < depth; s++, a++, b += NR, pf += NR) {
				__builtin_prefetch(pf, 0, 2);
				TILE_STEP(a, lda, b);
			}
		else
			for (int64_t s = 0; s < depth; s++, a++, b += NR)
				TILE_STEP(a, lda, b);
	} else if (t->b_offsets == NULL) {
		const float *b = t->b;
		if (pf != NULL)
			for (int64_t s = 0; s < depth; s++, a += MR, b += NR, pf += NR) {
				__builtin_prefetch(pf, 0, 2);
				TILE_STEP(a, 1, b);
			}
		else
			for (int64_t s = 0; s < depth; s++, a += MR, b += NR)
				TILE_STEP(a, 1, b);
	} else {
		const float *base = t->b;
		const int32_t *off = t->b_offsets;
		for (int64_t s = 0; s < depth; s++, a += MR)
			TILE_STEP(a, 1, base + off[s]);
	}
	float *c = t->c;
	bool clamp = t->clamp;
	VEC lo = V_ZERO(), hi = V_ZERO();
	if (clamp)
		lo = V_BCAST(&t->lo), hi = V_BCAST(&t->hi);
	int rows = t->rows > 0 && t->rows < MR ? t->rows : MR;
	_Pragma("GCC unroll 32") for (int r = 0; r < MR; r++) {
		if (r >= rows)
			break;
		_Pragma("GCC unroll 8") for (int j = 0; j < NV; j++) {
			VEC v = acc[r][j];
			float *p = c + r * t->ldc + j * VLEN;
			if (t->load_c)
				v = V_ADD(v, V_LOADU(p));
			if (t->row_bias)
				v = V_ADD(v, V_BCAST(t->row_bias + r));
			if (t->col_bias)
				v = V_ADD(v, V_LOADU(t->col_bias + j * VLEN));
			if (clamp)
				v = V_MIN(hi, V_MAX(lo, v));
			V_STOREU(p, v);
		}
	}
}

#undef TILE_STEP
#undef NR
