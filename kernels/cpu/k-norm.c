/* Batch, instance and layer normalisation at inference. */
#include "config.h"

#include <math.h>

#include "k-nn.h"

/* ---- batch normalisation ---- */

void
k_batch_norm_ref(int64_t n, int64_t c, int64_t inner, const float *x, const float *scale,
                 const float *bias, const float *mean, const float *variance, float epsilon, float *y)
{
	for (int64_t i = 0; i < n; i++) {
		for (int64_t ch = 0; ch < c; ch++) {
			const float *in = x + (i * c + ch) * inner;
			float *out = y + (i * c + ch) * inner;
			double deviation = sqrt((double)variance[ch] + (double)epsilon);
			for (int64_t j = 0; j < inner; j++)
				out[j] = (float)(((double)in[j] - mean[ch]) / deviation * scale[ch] + bias[ch]);
		}
	}
}

void
k_batch_norm_fold(int64_t c, const float *scale, const float *bias, const float *mean,
                  const float *variance, float epsilon, float *a, float *b)
{
	for (int64_t ch = 0; ch < c; ch++) {
		double factor = scale[ch] / sqrt((double)variance[ch] + (double)epsilon);
		a[ch] = (float)factor;
		b[ch] = (float)(bias[ch] - mean[ch] * factor);
	}
}

/* out[j] = (in[j] - shift) * a + b for j < n, eight at a time; out may be in. */
K_SIMD_CLONES static void
shift_scale_row(const float *in, int64_t n, float shift, float a, float b, float *out)
{
	k_v8 vs = K_V8_SPLAT(shift), va = K_V8_SPLAT(a), vb = K_V8_SPLAT(b), x;
	int64_t j = 0;
	for (; j + 8 <= n; j += 8) {
		K_V8_LOAD(x, in + j);
		x = (x - vs) * va + vb;
		K_V8_STORE(out + j, x);
	}
	for (; j < n; j++)
		out[j] = (in[j] - shift) * a + b;
}

typedef struct affine_args {
	int64_t c, inner;
	const float *x, *a, *b;
	float *y;
} affine_args;

static void
affine_range(void *arg, int64_t p0, int64_t p1)
{
	const affine_args *p = arg;
	for (int64_t plane = p0; plane < p1; plane++) {
		const float *in = p->x + plane * p->inner;
		float *out = p->y + plane * p->inner;
		shift_scale_row(in, p->inner, 0.0f, p->a[plane % p->c], p->b[plane % p->c], out);
	}
}

void
k_channel_affine(int64_t n, int64_t c, int64_t inner, const float *x, const float *a, const float *b,
                 float *y, const st_exec_ctx *ctx)
{
	affine_args p = { c, inner, x, a, b, y };
	k_parallel_for(ctx, n * c, inner >= 16384 ? 1 : 16384 / (inner + 1) + 1, affine_range, &p);
}

/* ---- instance normalisation ---- */

/* The mean and biased variance of a plane, in double. */
static void
plane_moments(const float *x, int64_t size, double *mean, double *variance)
{
	double sum = 0;
	for (int64_t j = 0; j < size; j++)
		sum += x[j];
	double m = size ? sum / (double)size : 0.0, squares = 0;
	for (int64_t j = 0; j < size; j++) {
		double d = x[j] - m;
		squares += d * d;
	}
	*mean = m;
	*variance = size ? squares / (double)size : 0.0;
}

void
k_instance_norm_ref(int64_t n, int64_t c, int64_t inner, const float *x, const float *scale,
                    const float *bias, float epsilon, float *y)
{
	for (int64_t plane = 0; plane < n * c; plane++) {
		const float *in = x + plane * inner;
		float *out = y + plane * inner;
		int64_t ch = plane % c;
		double mean, variance;
		plane_moments(in, inner, &mean, &variance);
		double deviation = sqrt(variance + (double)epsilon);
		for (int64_t j = 0; j < inner; j++)
			out[j] = (float)((in[j] - mean) / deviation * scale[ch] + bias[ch]);
	}
}

typedef struct instance_args {
	int64_t c, inner;
	const float *x, *scale, *bias;
	float epsilon;
	float *y;
} instance_args;

/* Planes [p0, p1): the statistics in double, then float arithmetic per element. */
static void
instance_range(void *arg, int64_t p0, int64_t p1)
{
	const instance_args *p = arg;
	for (int64_t plane = p0; plane < p1; plane++) {
		const float *in = p->x + plane * p->inner;
		float *out = p->y + plane * p->inner;
		int64_t ch = plane % p->c;
		double mean, variance;
		plane_moments(in, p->inner, &mean, &variance);
		/* Subtracting the mean first keeps a plane with a large offset exact. */
		float m = (float)mean, a = (float)(p->scale[ch] / sqrt(variance + (double)p->epsilon));
		shift_scale_row(in, p->inner, m, a, p->bias[ch], out);
	}
}

void
k_instance_norm(int64_t n, int64_t c, int64_t inner, const float *x, const float *scale,
                const float *bias, float epsilon, float *y, const st_exec_ctx *ctx)
{
	instance_args p = { c, inner, x, scale, bias, epsilon, y };
	k_parallel_for(ctx, n * c, inner >= 8192 ? 1 : 8192 / (inner + 1) + 1, instance_range, &p);
}

/* ---- layer normalisation ---- */

void
k_layer_norm_ref(int64_t rows, int64_t size, const float *x, const float *scale, const float *bias,
                 float epsilon, float *y)
{
	for (int64_t row = 0; row < rows; row++) {
		const float *in = x + row * size;
		float *out = y + row * size;
		double mean, variance;
		plane_moments(in, size, &mean, &variance);
		double deviation = sqrt(variance + (double)epsilon);
		for (int64_t j = 0; j < size; j++)
			out[j] = (float)((in[j] - mean) / deviation * scale[j] + (bias ? bias[j] : 0.0));
	}
}

/* out[j] = (in[j] - shift) * factor * scale[j] + bias[j] (bias NULL: 0), eight at a time; out may be in. */
K_SIMD_CLONES static void
normalise_row(const float *in, int64_t n, float shift, float factor, const float *scale, const float *bias,
              float *out)
{
	k_v8 vs = K_V8_SPLAT(shift), vf = K_V8_SPLAT(factor), x, g, b = K_V8_SPLAT(0.0f);
	int64_t j = 0;
	for (; j + 8 <= n; j += 8) {
		K_V8_LOAD(x, in + j);
		K_V8_LOAD(g, scale + j);
		if (bias != NULL)
			K_V8_LOAD(b, bias + j);
		x = (x - vs) * vf * g + b;
		K_V8_STORE(out + j, x);
	}
	for (; j < n; j++)
		out[j] = (in[j] - shift) * factor * scale[j] + (bias != NULL ? bias[j] : 0.0f);
}

typedef struct layer_args {
	int64_t size;
	const float *x, *scale, *bias;
	float epsilon;
	float *y;
} layer_args;

/* Rows [r0, r1): the statistics in double, then float arithmetic per element. */
static void
layer_range(void *arg, int64_t r0, int64_t r1)
{
	const layer_args *p = arg;
	for (int64_t row = r0; row < r1; row++) {
		const float *in = p->x + row * p->size;
		float *out = p->y + row * p->size;
		double mean, variance;
		plane_moments(in, p->size, &mean, &variance);
		/* As for instance normalisation, the mean is subtracted first. */
		float factor = (float)(1.0 / sqrt(variance + (double)p->epsilon));
		normalise_row(in, p->size, (float)mean, factor, p->scale, p->bias, out);
	}
}

void
k_layer_norm(int64_t rows, int64_t size, const float *x, const float *scale, const float *bias,
             float epsilon, float *y, const st_exec_ctx *ctx)
{
	layer_args p = { size, x, scale, bias, epsilon, y };
	k_parallel_for(ctx, rows, size >= 8192 ? 1 : 8192 / (size + 1) + 1, layer_range, &p);
}
