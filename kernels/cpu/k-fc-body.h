/* The few-row fully connected loops of k-gemm.c, written once and compiled
 * once per instruction set. k-gemm.c defines
 *   FB_NAME(x)      x with the variant's suffix
 *   FB_TARGET       the function attribute that selects the instruction set
 *   FB_LANES        floats per vector: 16, 8 or 4
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

/*
 * Output columns [j0, j1) of a fully connected layer with N (1 to 3) input
 * rows: y[i, j] = x[i, :] . w[j, :] + bias[j]. The product is bound by
 * reading w, so four weight rows stream at once (enough for the prefetchers
 * to keep the memory busy) and each weight vector serves all N inputs.
 */
FB_FN void
FB_NAME(fc_block)(const fc_rows_args *a, int64_t j0, int64_t j1, int n)
{
	int64_t k = a->k, m = a->m;
	int64_t j = j0;
	for (; j + 4 <= j1; j += 4) {
		const float *w = a->w + j * k;
		FB_VEC acc[3][4];
		FB_UNROLL
		for (int i = 0; i < n; i++)
			FB_UNROLL
			for (int r = 0; r < 4; r++)
				acc[i][r] = (FB_VEC){ 0 };
		int64_t t = 0;
		for (; t + FB_LANES <= k; t += FB_LANES) {
			FB_VEC xv[3];
			FB_UNROLL
			for (int i = 0; i < n; i++)
				xv[i] = FB_NAME(load)(a->x + i * k + t);
			FB_UNROLL
			for (int r = 0; r < 4; r++) {
				FB_VEC wv = FB_NAME(load)(w + r * k + t);
				FB_UNROLL
				for (int i = 0; i < n; i++)
					acc[i][r] = FB_FMA(wv, xv[i], acc[i][r]);
			}
		}
		for (int i = 0; i < n; i++) {
			for (int r = 0; r < 4; r++) {
				float s = 0;
				for (int l = 0; l < FB_LANES; l++)
					s += acc[i][r][l];
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
			float s = 0;
			for (int l = 0; l < FB_LANES; l++)
				s += acc[i][l];
			for (int64_t u = t; u < k; u++)
				s += a->x[i * k + u] * w[u];
			a->y[i * m + j] = s + (a->bias ? a->bias[j] : 0.0f);
		}
	}
}

/* Blocks [b0, b1) of four output columns. */
static FB_TARGET void
FB_NAME(fc_rows)(void *arg, int64_t b0, int64_t b1)
{
	const fc_rows_args *a = arg;
	int64_t j0 = 4 * b0, j1 = 4 * b1 < a->m ? 4 * b1 : a->m;
	if (a->n == 1)
		FB_NAME(fc_block)(a, j0, j1, 1);
	else if (a->n == 2)
		FB_NAME(fc_block)(a, j0, j1, 2);
	else
		FB_NAME(fc_block)(a, j0, j1, 3);
}

#undef FB_VEC
#undef FB_FN
#undef FB_UNROLL
