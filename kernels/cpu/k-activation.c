/* Activations, in place on float32: a reference in double precision, and a
 * fast version whose loops the compiler vectorises (with its own exp). */
#include "config.h"

#include <math.h>
#include <string.h>

#include "k-tensor.h"

/* Elements per loop step of the scalar-written loops; see k-eltwise.c. */
#define BLOCK 8

/* ---- the reference ---- */

static double
sigmoid_ref(double x)
{
	return x >= 0 ? 1 / (1 + exp(-x)) : exp(x) / (1 + exp(x));
}

/* ln(1 + e^x) without overflow: max(x, 0) + ln(1 + e^−|x|). */
static double
softplus_ref(double x)
{
	return fmax(x, 0) + log1p(exp(-fabs(x)));
}

static double
activation_ref(k_act act, double a, double b, double x)
{
	switch (act) {
	case K_ACT_RELU:
		return x < 0 ? 0 : x;
	case K_ACT_LEAKY_RELU:
		return x >= 0 ? x : a * x;
	case K_ACT_ELU:
		return x >= 0 ? x : a * expm1(x);
	case K_ACT_SELU:
		return x > 0 ? b * x : b * a * expm1(x);
	case K_ACT_SIGMOID:
		return sigmoid_ref(x);
	case K_ACT_TANH:
		return tanh(x);
	case K_ACT_SOFTPLUS:
		return isnan(x) ? x : softplus_ref(x);
	case K_ACT_HARD_SIGMOID:
		return isnan(x) ? x : fmax(0, fmin(1, a * x + b));
	case K_ACT_HARD_SWISH:
		return isnan(x) ? x : x * fmax(0, fmin(1, x / 6 + 0.5));
	case K_ACT_SILU:
		return x * sigmoid_ref(x);
	case K_ACT_GELU:
		return 0.5 * x * (1 + erf(x / sqrt(2.0)));
	case K_ACT_GELU_TANH:
		return 0.5 * x * (1 + tanh(sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
	case K_ACT_MISH:
		return isnan(x) ? x : x * tanh(softplus_ref(x));
	case K_ACT_CLIP: {
		/* min(max(x, lo), hi): hi wins when the bounds cross, as in ONNX. */
		double y = x < a ? a : x;
		return y > b ? b : y;
	}
	default:
		return x;
	}
}

void
k_activation_ref(k_act act, float a, float b, float *x, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		x[i] = (float)activation_ref(act, a, b, x[i]);
}

/* ---- building blocks of the fast version ----
 *
 * The fast loops work on vectors of four floats (GCC's and clang's vector
 * extensions), the width every x86-64 and AArch64 CPU has; wider vectors
 * would fall back to scalar code where the build targets plain SSE2.
 * exp follows Cephes' expf: a rounded multiple of ln 2 splits off (rounded
 * by adding and subtracting 1.5·2^23, which needs no SSE4.1), a degree-6
 * polynomial does the rest, and the exponent goes straight into the bits.
 * About 2 ulp over its range; past 88.72 it overflows to infinity as expf
 * does, and below −87.3 (where expf turns subnormal) it gives 0. */

#define VINLINE static inline __attribute__((always_inline))

typedef float vf __attribute__((vector_size(16)));
typedef int32_t vi __attribute__((vector_size(16)));
#define VN 4

VINLINE vf
vsplat(float x)
{
	vf v = { x, x, x, x };
	return v;
}

/* Lanes of a where mask m is set (all ones), of b elsewhere. */
VINLINE vf
vsel(vi m, vf a, vf b)
{
	return (vf)((m & (vi)a) | (~m & (vi)b));
}

VINLINE vf
vabs(vf x)
{
	return (vf)((vi)x & 0x7fffffff);
}

/* min and max that keep a NaN in x. */
VINLINE vf
vmin(vf x, vf bound)
{
	return vsel(x > bound, bound, x);
}

VINLINE vf
vmax(vf x, vf bound)
{
	return vsel(x < bound, bound, x);
}

VINLINE vf
vexp(vf x)
{
	/* NaN lanes compute on 0 (converting NaN to int is undefined) and get
	 * their NaN back at the end. */
	vi nan = x != x;
	vf xc = vsel(nan, vsplat(0), x);
	xc = vmax(vmin(xc, vsplat(88.72f)), vsplat(-87.3f));
	vf t = xc * 1.44269504088896341f;
	vf big = t + 12582912.0f; /* n in the low mantissa bits: 0x4b400000 + n */
	vf n = big - 12582912.0f; /* the nearest integer to t, -126 to 128 */
	vf r = xc - n * 0.693359375f;
	r = r - n * -2.12194440e-4f;
	vf z = r * r;
	vf p = vsplat(1.9875691500e-4f);
	p = p * r + 1.3981999507e-3f;
	p = p * r + 8.3334519073e-3f;
	p = p * r + 4.1665795894e-2f;
	p = p * r + 1.6666665459e-1f;
	p = p * r + 5.0000001201e-1f;
	p = p * z + r + 1.0f;
	/* 2^n in two halves, each a normal float even for n = 128 or -126. */
	vi ni = (vi)big - 0x4b400000, half = ni >> 1;
	vf y = p * (vf)((half + 127) << 23) * (vf)((ni - half + 127) << 23);
	y = vsel(x > vsplat(88.7228394f), vsplat(INFINITY), y);
	y = vsel(x < vsplat(-87.3f), vsplat(0), y);
	return vsel(nan, x, y);
}

/* e^x − 1, accurate near 0 where the subtraction would cancel: Taylor to
 * x^7 below |x| 0.35 (the next term is under 2e-8 relative). */
VINLINE vf
vexpm1(vf x)
{
	vf p = x * (1.0f / 5040);
	p = (p + 1.0f / 720) * x;
	p = (p + 1.0f / 120) * x;
	p = (p + 1.0f / 24) * x;
	p = (p + 1.0f / 6) * x;
	p = (p + 0.5f) * x;
	p = (p + 1.0f) * x;
	return vsel(vabs(x) < vsplat(0.35f), p, vexp(x) - 1.0f);
}

VINLINE vf
vsigmoid(vf x)
{
	return 1.0f / (1.0f + vexp(-x));
}

/* Cephes' tanhf: an odd polynomial below 0.625, 1 − 2/(e^2|x| + 1) above,
 * where it no longer cancels. */
VINLINE vf
vtanh(vf x)
{
	vf ax = vabs(x), z = x * x;
	vf small = ((((-5.70498872745e-3f * z + 2.06390887954e-2f) * z - 5.37397155531e-2f) * z +
	             1.33314422036e-1f) * z - 3.33332819422e-1f) * z * x + x;
	vf big = 1.0f - 2.0f / (vexp(2.0f * ax) + 1.0f);
	big = vsel(x < vsplat(0), -big, big);
	return vsel(ax < vsplat(0.625f), small, big);
}

/* x·tanh(ln(1 + e^x)) = x·m/(m + 2) with m = e^x(e^x + 2); past x = 20
 * the tanh is 1 in float. */
VINLINE vf
vmish(vf x)
{
	vf e = vexp(x);
	vf m = e * (e + 2.0f);
	return vsel(x > vsplat(20.0f), x, x * m / (m + 2.0f));
}

/* x[i] = EXPR(v) four at a time; the tail goes through a padded copy. */
#define VLOOP(EXPR)                                                           \
	do {                                                                  \
		int64_t i_ = 0;                                               \
		for (; i_ + VN <= n; i_ += VN) {                              \
			vf v;                                                 \
			memcpy(&v, x + i_, sizeof v);                         \
			v = (EXPR);                                           \
			memcpy(x + i_, &v, sizeof v);                         \
		}                                                             \
		if (i_ < n) {                                                 \
			float t_[VN] = { 0 };                                 \
			size_t bytes_ = (size_t)(n - i_) * sizeof(float);     \
			memcpy(t_, x + i_, bytes_);                           \
			vf v;                                                 \
			memcpy(&v, t_, sizeof v);                             \
			v = (EXPR);                                           \
			memcpy(t_, &v, sizeof v);                             \
			memcpy(x + i_, t_, bytes_);                           \
		}                                                             \
	} while (0)

void
k_activation(k_act act, float a, float b, float *x, int64_t n)
{
	vf va = vsplat(a), vb = vsplat(b), zero = vsplat(0), one = vsplat(1);
	switch (act) {
	case K_ACT_RELU:
		VLOOP(vsel(v < zero, zero, v));
		break;
	case K_ACT_LEAKY_RELU:
		VLOOP(vsel(v < zero, va * v, v));
		break;
	case K_ACT_ELU:
		VLOOP(vsel(v < zero, va * vexpm1(v), v));
		break;
	case K_ACT_SELU: {
		vf ba = vsplat(b * a);
		VLOOP(vsel(v > zero, vb * v, ba * vexpm1(v)));
		break;
	}
	case K_ACT_SIGMOID:
		VLOOP(vsigmoid(v));
		break;
	case K_ACT_TANH:
		VLOOP(vtanh(v));
		break;
	case K_ACT_SOFTPLUS:
		/* log1p has no vector form here; this one stays in libm. */
		for (int64_t i = 0; i < n; i++) {
			float v = x[i];
			x[i] = (v > 0 ? v : 0.0f) + log1pf(expf(-fabsf(v)));
		}
		break;
	case K_ACT_HARD_SIGMOID:
		VLOOP(vmax(vmin(va * v + vb, one), zero));
		break;
	case K_ACT_HARD_SWISH:
		VLOOP(v * vmax(vmin(v * (1.0f / 6) + 0.5f, one), zero));
		break;
	case K_ACT_SILU:
		VLOOP(v * vsigmoid(v));
		break;
	case K_ACT_GELU:
		/* erf has no vector form here either. */
		for (int64_t i = 0; i < n; i++)
			x[i] = 0.5f * x[i] * (1.0f + erff(x[i] * 0.70710678118654752f));
		break;
	case K_ACT_GELU_TANH:
		VLOOP(0.5f * v * (1.0f + vtanh(0.79788456080286536f * (v + 0.044715f * v * v * v))));
		break;
	case K_ACT_MISH:
		VLOOP(vmish(v));
		break;
	case K_ACT_CLIP:
		/* min(max(x, lo), hi), so hi wins when the bounds cross. */
		VLOOP(vmin(vmax(v, va), vb));
		break;
	default:
		break;
	}
}

void
k_prelu(float *x, int64_t n, const float *slope)
{
	int64_t i = 0;
	for (; i + BLOCK <= n; i += BLOCK) {
		float v[BLOCK], s[BLOCK];
		memcpy(v, x + i, sizeof v);
		memcpy(s, slope + i, sizeof s);
		for (int j = 0; j < BLOCK; j++)
			x[i + j] = v[j] < 0 ? s[j] * v[j] : v[j];
	}
	for (; i < n; i++)
		x[i] = x[i] < 0 ? slope[i] * x[i] : x[i];
}
