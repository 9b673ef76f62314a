/*
 * The direct convolution tile (k_conv_tile in k-sgemm.h), written once and
 * compiled per SIMD level that has masked loads: k-sgemm-avx512.c and
 * k-sgemm-avx2.c define the operations below, MR, NV, VLEN and the
 * function name, then include this file after k-sgemm-tile.h (whose VEC and
 * V_ operations it uses too).
 *
 * The nr output positions of the tile are found as (row, column) lanes
 * once; each tap's lane mask then keeps the lanes whose shifted input
 * lies inside the image, and the loads of every input channel for that tap
 * use it, so padding reads as zero without a padded copy and nothing
 * outside the input is touched. A tap no lane reaches is skipped. The
 * loads of the channels k_conv_tile_prefetch steps ahead are prefetched
 * (prefetches do not fault: past the input they do nothing).
 *
 * Needs: VI (a vector of VLEN int32), MASK, VI_SET1(x), VI_IOTA() (0, 1,
 * ...), VI_ADD(a, b), VI_WRAP(row, col, w) (where col >= w: col -= w,
 * row += 1), M_INSIDE(v, lo, hi) (lanes with lo <= v < hi), M_AND(a, b),
 * M_NONE(m) (no lane set), M_ALL(m) (every lane set), V_LOADU(p),
 * V_MASKZ_LOADU(m, p), V_PART_STOREU(p, m, n, v) (the first n lanes, 0 < n <
 * VLEN, which the mask m keeps), CONV_TILE_FN.
 *
 * A tile of t->rows rows (a group's last panel, fewer filters than MR)
 * computes all MR, whose packed filters past the group are zeros, and
 * stores only those rows.
 */

#define NR (NV * VLEN)
/* Floats of packed filters per input channel step: MR, or the main tile's
 * rows for a tail tile that reads the main tile's panels (CONV_A_STEP). */
#ifndef CONV_A_STEP
#define CONV_A_STEP MR
#endif

/* One input channel of one tap: NV vectors of the input against MR
 * filters (a), into the sums; masked, or (every lane inside) not. */
#define CONV_TILE_STEP(masked)                                                                 \
	do {                                                                                   \
		VEC bv[NV];                                                                    \
		_Pragma("GCC unroll 8") for (int j = 0; j < NV; j++)                           \
			bv[j] = (masked) ? V_MASKZ_LOADU(m[j], (const float *)b + j * VLEN)    \
			                 : V_LOADU((const float *)b + j * VLEN);               \
		_Pragma("GCC unroll 32") for (int r = 0; r < MR; r++) {                        \
			VEC av = V_BCAST(a + r);                                               \
			_Pragma("GCC unroll 8") for (int j = 0; j < NV; j++)                   \
				acc[r][j] = V_FMA(av, bv[j], acc[r][j]);                       \
		}                                                                              \
	} while (0)

K_TARGET static void
CONV_TILE_FN(const k_conv_tile *t)
{
	/* Each lane's output row and column, and whether it exists. */
	VI row[NV], col[NV];
	MASK live[NV];
	int64_t first_row = t->p / t->w, first_col = t->p % t->w;
	_Pragma("GCC unroll 8") for (int j = 0; j < NV; j++) {
		row[j] = VI_SET1((int32_t)first_row);
		col[j] = VI_ADD(VI_SET1((int32_t)(first_col + j * VLEN)), VI_IOTA());
		for (int64_t step = first_col + (j + 1) * VLEN; step > 0; step -= t->w)
			VI_WRAP(row[j], col[j], (int32_t)t->w);
		live[j] = M_INSIDE(VI_ADD(VI_SET1(j * VLEN), VI_IOTA()), 0, t->cols);
	}
	VEC acc[MR][NV];
	_Pragma("GCC unroll 32") for (int r = 0; r < MR; r++)
		_Pragma("GCC unroll 8") for (int j = 0; j < NV; j++)
			acc[r][j] = V_ZERO();
	const float *a = t->a;
	for (int tap = 0; tap < t->taps; tap++) {
		int32_t dy = t->dy[tap], dx = t->dx[tap];
		MASK m[NV];
		bool none = true;
		_Pragma("GCC unroll 8") for (int j = 0; j < NV; j++) {
			m[j] = M_AND(M_AND(live[j], M_INSIDE(VI_ADD(row[j], VI_SET1(dy)), 0, t->h)),
			             M_INSIDE(VI_ADD(col[j], VI_SET1(dx)), 0, t->w));
			none = none && M_NONE(m[j]);
		}
		if (none) {
			a += t->channels * CONV_A_STEP;
			continue;
		}
		/* The address of the tile's first lane, shifted; lanes outside the
		 * input are never loaded, so it may lie outside it. */
		int64_t shift = t->p + (int64_t)dy * t->w + dx + (t->base ? t->base[tap] : 0);
		uintptr_t b = (uintptr_t)t->x + (uintptr_t)(shift * (int64_t)sizeof(float));
		uintptr_t step = (uintptr_t)(t->plane * (int64_t)sizeof(float));
		/* The next channels' vectors lie a plane apart, a stride the
		 * hardware prefetchers do not follow: ask for them a few steps
		 * ahead (where there are enough steps for it to matter). */
		int64_t channels = t->channels;
		uintptr_t ahead = channels >= 32 ? (uintptr_t)k_conv_tile_prefetch * step : 0;
		/* A copy of the loop for each case, so that none tests at every
		 * step: with the prefetch or without, and with plain loads where
		 * every lane lies inside: a masked load costs more (on the Xeon,
		 * the tile in cache 1.08-1.14 times faster with plain ones, 1x1
		 * 256 -> 64 at 56 x 56 1.04-1.11). */
		bool full = true;
		_Pragma("GCC unroll 8") for (int j = 0; j < NV; j++)
			full = full && M_ALL(m[j]);
		if (ahead && full) {
			for (int64_t c = 0; c < channels; c++, a += CONV_A_STEP, b += step) {
				_Pragma("GCC unroll 8") for (int j = 0; j < NV; j++)
					__builtin_prefetch((const float *)(b + ahead) + j * VLEN);
				CONV_TILE_STEP(false);
			}
		} else if (ahead) {
			for (int64_t c = 0; c < channels; c++, a += CONV_A_STEP, b += step) {
				_Pragma("GCC unroll 8") for (int j = 0; j < NV; j++)
					__builtin_prefetch((const float *)(b + ahead) + j * VLEN);
				CONV_TILE_STEP(true);
			}
		} else if (full) {
			for (int64_t c = 0; c < channels; c++, a += CONV_A_STEP, b += step)
				CONV_TILE_STEP(false);
		} else {
			for (int64_t c = 0; c < channels; c++, a += CONV_A_STEP, b += step)
				CONV_TILE_STEP(true);
		}
	}
	bool clamp = t->clamp;
	VEC lo = V_ZERO(), hi = V_ZERO();
	if (clamp)
		lo = V_BCAST(&t->lo), hi = V_BCAST(&t->hi);
	/* Live lanes of each vector: a prefix (the tile's first cols). Whole
	 * vectors are stored plainly, the last part one through
	 * V_PART_STOREU, none past it. */
	int lanes[NV];
	_Pragma("GCC unroll 8") for (int j = 0; j < NV; j++)
		lanes[j] = t->cols - j * VLEN >= VLEN ? VLEN : t->cols - j * VLEN > 0 ? t->cols - j * VLEN : 0;
	int rows = t->rows > 0 && t->rows < MR ? t->rows : MR;
	_Pragma("GCC unroll 32") for (int r = 0; r < MR; r++) {
		if (r >= rows)
			break;
		_Pragma("GCC unroll 8") for (int j = 0; j < NV; j++) {
			VEC v = acc[r][j];
			float *p = t->c + r * t->ldc + j * VLEN;
			if (lanes[j] == 0)
				continue;
			if (t->load_c)
				v = V_ADD(v, lanes[j] == VLEN ? V_LOADU(p) : V_MASKZ_LOADU(live[j], p));
			if (t->row_bias)
				v = V_ADD(v, V_BCAST(t->row_bias + r));
			if (clamp)
				v = V_MIN(hi, V_MAX(lo, v));
			if (lanes[j] == VLEN)
				V_STOREU(p, v);
			else
				V_PART_STOREU(p, live[j], lanes[j], v);
		}
	}
}

#undef NR
#undef CONV_TILE_STEP
#undef CONV_A_STEP
