/* The few-row fully connected loops of k-gemm.c, written once and compiled
 * once per instruction set. k-gemm.c defines
 *   FB_NAME(x)      x with the variant's suffix
 *   FB_TARGET       the function attribute that selects the instruction set
 *   FB_LANES        floats per vector: 8 or 4
 *   FB_FMA(a, b, c) a * b + c on vectors
 * and, before the first inclusion, fc_rows_args. */

#define FB_VEC FB_NAME(vec)
#define FB_FN static inline __attribute__((always_inline)) FB_TARGET
#define FB_UNROLL _Pragma("GCC unroll 16")

typedef float FB_VEC __attribute__((vector_size(FB_LANES * sizeof(float))));

FB_FN FB_VEC
FB_NAME(load)(const float *p)
{
	FB_VEC v;
	memcpy(&v, p, sizeof v);
	return v;
}

/* The sum of v's lanes, halving the width at each step: fewer dependent
 * adds than lane after lane, which showed with a sum per output. */
FB_FN float
FB_NAME(sum)(FB_VEC v)
{
	float lanes[FB_LANES];
	memcpy(lanes, &v, sizeof lanes);
	FB_UNROLL
	for (int width = FB_LANES / 2; width >= 1; width /= 2) {
		FB_UNROLL
		for (int l = 0; l < width; l++)
			lanes[l] += lanes[l + width];
	}
	return lanes[0];
}

/*
 * Output columns [j0, j1) of a fully connected layer with N (1 to 3) input
 * rows: y[i, j] = x[i, :] . w[j, :] + bias[j]. The product is bound by
 * reading w, so R weight rows (at most 8) stream at once and each weight
 * vector serves all N inputs; one input row takes 8 weight rows, which
 * measured some 8% faster than 4 (software prefetching measured no gain).
 */
FB_FN void
FB_NAME(fc_block)(const fc_rows_args *a, int64_t j0, int64_t j1, int n, int R)
{
	int64_t k = a->k, m = a->m;
	int64_t j = j0;
	for (; j + R <= j1; j += R) {
		const float *w = a->w + j * k;
		FB_VEC acc[3][8];
		FB_UNROLL
		for (int i = 0; i < n; i++)
			FB_UNROLL
			for (int r = 0; r < R; r++)
				acc[i][r] = (FB_VEC){ 0 };
		int64_t t = 0;
		for (; t + FB_LANES <= k; t += FB_LANES) {
			FB_VEC xv[3];
			FB_UNROLL
			for (int i = 0; i < n; i++)
				xv[i] = FB_NAME(load)(a->x + i * k + t);
			FB_UNROLL
			for (int r = 0; r < R; r++) {
				FB_VEC wv = FB_NAME(load)(w + r * k + t);
				FB_UNROLL
				for (int i = 0; i < n; i++)
					acc[i][r] = FB_FMA(wv, xv[i], acc[i][r]);
			}
		}
		for (int i = 0; i < n; i++) {
			for (int r = 0; r < R; r++) {
				float s = FB_NAME(sum)(acc[i][r]);
				for (int64_t u = t; u < k; u++)
					s += a->x[i * k + u] * w[r * k + u];
				a->y[i * m + j + r] = s + (a->bias ? a->bias[j + r] : 0.0f);
			}
		}
	}
	for (; j < j1; j++) {
		const float *w = a->w + j * k;
		FB_VEC acc[3];
		FB_UNROLL
		for (int i = 0; i < n; i++)
			acc[i] = (FB_VEC){ 0 };
		int64_t t = 0;
		for (; t + FB_LANES <= k; t += FB_LANES) {
			FB_VEC wv = FB_NAME(load)(w + t);
			FB_UNROLL
			for (int i = 0; i < n; i++)
				acc[i] = FB_FMA(wv, FB_NAME(load)(a->x + i * k + t), acc[i]);
		}
		for (int i = 0; i < n; i++) {
			float s = FB_NAME(sum)(acc[i]);
			for (int64_t u = t; u < k; u++)
				s += a->x[i * k + u] * w[u];
			a->y[i * m + j] = s + (a->bias ? a->bias[j] : 0.0f);
		}
	}
}

/* Blocks [b0, b1) of eight output columns. */
static FB_TARGET void
FB_NAME(fc_rows)(void *arg, int64_t b0, int64_t b1)
{
	const fc_rows_args *a = arg;
	int64_t j0 = 8 * b0, j1 = 8 * b1 < a->m ? 8 * b1 : a->m;
	if (a->n == 1)
		FB_NAME(fc_block)(a, j0, j1, 1, 8);
	else if (a->n == 2)
		FB_NAME(fc_block)(a, j0, j1, 2, 4);
	else
		FB_NAME(fc_block)(a, j0, j1, 3, 4);
}

#undef FB_VEC
#undef FB_FN
#undef FB_UNROLL
