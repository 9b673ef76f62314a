/* Activations, in place on float32: a reference in double precision, and a
 * fast version whose loops the compiler vectorises (with its own exp). */
#include "config.h"

#include <math.h>
#include <string.h>

#include "k-cpu.h"
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

/* ln(1 + y) for y >= 0, accurate for tiny y too: Cephes' logf on u = 1 + y,
 * scaled by y/(u − 1) to undo the rounding of the sum (Goldberg's trick). */
VINLINE vf
vlog1p(vf y)
{
	vf u = 1.0f + y;
	/* u = m·2^e with m in [√½, √2). */
	vi bits = (vi)u;
	vi e = ((bits >> 23) & 0xff) - 126;
	vf m = (vf)((bits & 0x007fffff) | 0x3f000000); /* [0.5, 1) */
	vi low = m < vsplat(0.70710678118654752f);
	m = vsel(low, m + m, m) - 1.0f;
	vf ef = __builtin_convertvector(e + low, vf); /* low lanes: e − 1 */
	vf z = m * m;
	vf p = vsplat(7.0376836292e-2f);
	p = p * m - 1.1514610310e-1f;
	p = p * m + 1.1676998740e-1f;
	p = p * m - 1.2420140846e-1f;
	p = p * m + 1.4249322787e-1f;
	p = p * m - 1.6668057665e-1f;
	p = p * m + 2.0000714765e-1f;
	p = p * m - 2.4999993993e-1f;
	p = p * m + 3.3333331174e-1f;
	vf l = m * z * p + ef * -2.12194440e-4f - 0.5f * z + m + ef * 0.693359375f;
	vf d = u - 1.0f;
	return vsel(d == vsplat(0), y, l * (y / d));
}

/* ln(1 + e^x) without overflow: max(x, 0) + ln(1 + e^−|x|). */
VINLINE vf
vsoftplus(vf x)
{
	vf zero = vsplat(0);
	return vsel(x > zero, x, zero) + vlog1p(vexp(-vabs(x)));
}

/* Φ(x) = ½·erfc(−x/√2), the normal distribution: erfc for z >= 0 by
 * Numerical Recipes' Chebyshev fit (relative error below 1.2e-7 in exact
 * arithmetic), so the lower tail keeps its relative accuracy too. */
VINLINE vf
vphi(vf x)
{
	vf z = vabs(x) * 0.70710678118654752f;
	vf t = 1.0f / (1.0f + 0.5f * z);
	vf p = vsplat(0.17087277f);
	p = p * t - 0.82215223f;
	p = p * t + 1.48851587f;
	p = p * t - 1.13520398f;
	p = p * t + 0.27886807f;
	p = p * t - 0.18628806f;
	p = p * t + 0.09678418f;
	p = p * t + 0.37409196f;
	p = p * t + 1.00002368f;
	p = p * t - 1.26551223f;
	vf erfc = t * vexp(p - z * z);
	vf half = 0.5f * erfc; /* Φ(−|x|) */
	return vsel(x < vsplat(0), half, 1.0f - half);
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

/*
 * relu, leaky relu and clip a vector at a time, in one body compiled for
 * AVX-512 (16 lanes), AVX2 (8) and the baseline (4), the level k_cpu_isa()
 * chose: convolutions apply them to every output they write (k_post),
 * where four lanes of SSE cost as much as the pass over memory used to.
 * Each level's vector is its registers' width: a 64-byte vector compiled
 * for AVX2 (by target_clones, before issue 10's session 12) had its
 * comparisons split into scalars; clip ran at 3 ns an element and made
 * MobileNetV2's stem 5x slower on a Zen 3. The same comparisons and
 * selections as the scalar tail, and at most one rounding (leaky relu's
 * product), so each lane's result is the same whatever the width.
 */
#define CHEAP_BODY(VT, VIT)                                                      \
	{                                                                        \
		enum { W = sizeof(VT) / sizeof(float) };                         \
		VT va, vb, zero;                                                 \
		for (int j = 0; j < W; j++)                                      \
			va[j] = a, vb[j] = b, zero[j] = 0;                       \
		int64_t i = 0;                                                   \
		for (; i + W <= n; i += W) {                                     \
			VT v;                                                    \
			memcpy(&v, x + i, sizeof v);                             \
			if (act == K_ACT_RELU) {                                 \
				v = CHEAP_SEL(VT, VIT, v < zero, zero, v);       \
			} else if (act == K_ACT_LEAKY_RELU) {                    \
				v = CHEAP_SEL(VT, VIT, v < zero, va * v, v);     \
			} else { /* vmax, then vmin: hi wins */                  \
				v = CHEAP_SEL(VT, VIT, v < va, va, v);           \
				v = CHEAP_SEL(VT, VIT, v > vb, vb, v);           \
			}                                                        \
			memcpy(x + i, &v, sizeof v);                             \
		}                                                                \
		return i;                                                        \
	}
/* Lanes of a where m is set, of b elsewhere. */
#define CHEAP_SEL(VT, VIT, m, a, b) ((VT)(((m) & (VIT)(a)) | (~(m) & (VIT)(b))))

typedef float cheap_v4 __attribute__((vector_size(16)));
typedef int32_t cheap_v4i __attribute__((vector_size(16)));

/* Each does the leading whole vectors of x and returns how many elements
 * that was. */
static int64_t
cheap_vectors_portable(k_act act, float a, float b, float *x, int64_t n)
CHEAP_BODY(cheap_v4, cheap_v4i)

#if defined(__x86_64__) && defined(__GNUC__) && defined(K_HAVE_AVX2)
typedef float cheap_v8 __attribute__((vector_size(32)));
typedef int32_t cheap_v8i __attribute__((vector_size(32)));
__attribute__((target("avx2,fma"))) static int64_t
cheap_vectors_avx2(k_act act, float a, float b, float *x, int64_t n)
CHEAP_BODY(cheap_v8, cheap_v8i)
#endif

#if defined(__x86_64__) && defined(__GNUC__) && defined(K_HAVE_AVX512)
typedef float cheap_v16 __attribute__((vector_size(64)));
typedef int32_t cheap_v16i __attribute__((vector_size(64)));
__attribute__((target("avx512f,avx512vl,avx512bw,avx512dq"))) static int64_t
cheap_vectors_avx512(k_act act, float a, float b, float *x, int64_t n)
CHEAP_BODY(cheap_v16, cheap_v16i)
#endif

static void
cheap_activation(k_act act, float a, float b, float *x, int64_t n)
{
	int64_t i;
	switch (k_cpu_isa()) {
#if defined(__x86_64__) && defined(__GNUC__) && defined(K_HAVE_AVX512)
	case K_ISA_AVX512:
		i = cheap_vectors_avx512(act, a, b, x, n);
		break;
#endif
#if defined(__x86_64__) && defined(__GNUC__) && defined(K_HAVE_AVX2)
	case K_ISA_AVX2:
		i = cheap_vectors_avx2(act, a, b, x, n);
		break;
#endif
	default:
		i = cheap_vectors_portable(act, a, b, x, n);
		break;
	}
	for (; i < n; i++) {
		float v = x[i];
		if (act == K_ACT_RELU) {
			v = v < 0 ? 0 : v;
		} else if (act == K_ACT_LEAKY_RELU) {
			v = v < 0 ? a * v : v;
		} else {
			v = v < a ? a : v;
			v = v > b ? b : v;
		}
		x[i] = v;
	}
}

void
k_activation(k_act act, float a, float b, float *x, int64_t n)
{
	if (act == K_ACT_RELU || act == K_ACT_LEAKY_RELU || act == K_ACT_CLIP) {
		cheap_activation(act, a, b, x, n);
		return;
	}
	vf va = vsplat(a), vb = vsplat(b), zero = vsplat(0), one = vsplat(1);
	switch (act) {
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
		VLOOP(vsoftplus(v));
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
		VLOOP(v * vphi(v));
		break;
	case K_ACT_GELU_TANH:
		VLOOP(0.5f * v * (1.0f + vtanh(0.79788456080286536f * (v + 0.044715f * v * v * v))));
		break;
	case K_ACT_MISH:
		VLOOP(vmish(v));
		break;
	default: /* relu, leaky relu and clip: cheap_activation */
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

/* ---- exponentials for softmax ---- */

float
k_exp_sum(const float *x, float *y, int64_t n, float shift)
{
	vf total = vsplat(0), vs = vsplat(shift);
	int64_t i = 0;
	for (; i + VN <= n; i += VN) {
		vf v;
		memcpy(&v, x + i, sizeof v);
		v = vexp(v - vs);
		memcpy(y + i, &v, sizeof v);
		total += v;
	}
	float sum = total[0] + total[1] + total[2] + total[3];
	for (; i < n; i++) {
		/* The tail through a vector too, so every element gets the same exp. */
		vf v = vexp(vsplat(x[i] - shift));
		y[i] = v[0];
		sum += v[0];
	}
	return sum;
}

void
k_exp_minus(const float *x, const float *shift, float *y, int64_t n)
{
	int64_t i = 0;
	for (; i + VN <= n; i += VN) {
		vf v, s;
		memcpy(&v, x + i, sizeof v);
		memcpy(&s, shift + i, sizeof s);
		v = vexp(v - s);
		memcpy(y + i, &v, sizeof v);
	}
	for (; i < n; i++)
		y[i] = vexp(vsplat(x[i] - shift[i]))[0];
}
