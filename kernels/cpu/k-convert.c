/* Conversions: element types (float16 with F16C when the CPU has it) and
 * the NCHW <-> NHWC layout transposes. */
#include "config.h"

#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "k-cpu.h"
#include "k-int.h"
#include "k-tensor.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define K_X86_F16C 1
#include <cpuid.h>
#include <immintrin.h>
#endif

size_t
k_dtype_size(st_dtype t)
{
	static const size_t sizes[ST_DTYPE_COUNT] = {
		[ST_DTYPE_FLOAT32] = 4, [ST_DTYPE_FLOAT16] = 2, [ST_DTYPE_INT64] = 8, [ST_DTYPE_INT32] = 4,
		[ST_DTYPE_INT8] = 1,    [ST_DTYPE_UINT8] = 1,   [ST_DTYPE_BOOL] = 1,
	};
	return (unsigned)t < ST_DTYPE_COUNT ? sizes[t] : 0;
}

int64_t
k_elements(const st_shape *s)
{
	int64_t n = 1;
	for (int k = 0; k < s->rank; k++)
		n *= s->dims[k];
	return n;
}

/* ---- float16, one value ---- */

float
k_half_to_float(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
	uint32_t bits;
	if (exp == 0x1f) {
		/* Infinity, or a NaN: F16C sets the quiet bit and keeps the payload. */
		bits = sign | 0x7f800000u | (mant << 13) | (mant ? 0x400000u : 0);
	} else if (exp != 0) {
		bits = sign | ((exp + 112) << 23) | (mant << 13);
	} else if (mant == 0) {
		bits = sign;
	} else {
		/* A subnormal half is a normal float: shift the mantissa up until its
		 * leading one reaches the hidden-bit position. */
		uint32_t e = 113;
		while (!(mant & 0x400u)) {
			mant <<= 1;
			e--;
		}
		bits = sign | (e << 23) | ((mant & 0x3ffu) << 13);
	}
	float f;
	memcpy(&f, &bits, sizeof f);
	return f;
}

uint16_t
k_float_to_half(float f)
{
	uint32_t x;
	memcpy(&x, &f, sizeof x);
	uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
	uint32_t abs = x & 0x7fffffffu;
	if (abs > 0x7f800000u) /* NaN: quiet, with the top ten bits of the payload */
		return (uint16_t)(sign | 0x7e00u | ((abs >> 13) & 0x3ffu));
	if (abs >= 0x477ff000u) /* 65520 and up round to infinity */
		return (uint16_t)(sign | 0x7c00u);
	if (abs >= 0x38800000u) {
		/* Normal: rebias the exponent (127 -> 15) and drop 13 mantissa bits,
		 * rounding to nearest even; a carry moves into the exponent. */
		uint32_t r = abs - 0x38000000u;
		r += 0x0fffu + ((r >> 13) & 1u);
		return (uint16_t)(sign | (r >> 13));
	}
	if (abs <= 0x33000000u) /* at most 2^-25: ties to the even zero */
		return sign;
	/* Subnormal: the value in units of 2^-24 is the 24-bit significand
	 * shifted right by 126 - exponent (14 to 24 places), rounded to even. */
	uint32_t e = abs >> 23, m = (abs & 0x7fffffu) | 0x800000u;
	uint32_t shift = 126 - e;
	uint32_t h = m >> shift, rest = m & ((1u << shift) - 1), half = 1u << (shift - 1);
	if (rest > half || (rest == half && (h & 1u)))
		h++;
	return (uint16_t)(sign | h);
}

/* ---- float16 arrays ---- */

void
k_half_to_float_portable(const uint16_t *src, float *dst, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		dst[i] = k_half_to_float(src[i]);
}

void
k_float_to_half_portable(const float *src, uint16_t *dst, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		dst[i] = k_float_to_half(src[i]);
}

#ifdef K_X86_F16C
__attribute__((target("avx,f16c"))) void
k_half_to_float_f16c(const uint16_t *src, float *dst, int64_t n)
{
	int64_t i = 0;
	for (; i + 8 <= n; i += 8) {
		__m128i h = _mm_loadu_si128((const __m128i *)(const void *)(src + i));
		_mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
	}
	if (i < n) {
		uint16_t in[8] = { 0 };
		float out[8];
		memcpy(in, src + i, (size_t)(n - i) * sizeof *in);
		_mm256_storeu_ps(out, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)in)));
		memcpy(dst + i, out, (size_t)(n - i) * sizeof *out);
	}
}

__attribute__((target("avx,f16c"))) void
k_float_to_half_f16c(const float *src, uint16_t *dst, int64_t n)
{
	int64_t i = 0;
	for (; i + 8 <= n; i += 8) {
		__m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT);
		_mm_storeu_si128((__m128i *)(void *)(dst + i), h);
	}
	if (i < n) {
		float in[8] = { 0 };
		uint16_t out[8];
		memcpy(in, src + i, (size_t)(n - i) * sizeof *in);
		__m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(in), _MM_FROUND_TO_NEAREST_INT);
		_mm_storeu_si128((__m128i *)(void *)out, h);
		memcpy(dst + i, out, (size_t)(n - i) * sizeof *out);
	}
}

/* Whether the CPU (and the OS, for the AVX registers) runs F16C code. */
static int
cpu_has_f16c(void)
{
#if defined(__clang__)
	/* clang's __builtin_cpu_supports does not know "f16c": ask CPUID (leaf
	 * 1: ECX bit 29 F16C, 28 AVX, 27 OSXSAVE) and XGETBV (XMM and YMM state). */
	unsigned a, b, c, d;
	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27)) || !(c & (1u << 28)) || !(c & (1u << 29)))
		return 0;
	unsigned lo, hi;
	__asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return (lo & 6u) == 6u;
#else
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx") && __builtin_cpu_supports("f16c");
#endif
}

bool
k_have_f16c(void)
{
	/* -1 until the first call asks the CPU; races only store the same answer. */
	static atomic_int have = -1;
	int v = atomic_load_explicit(&have, memory_order_relaxed);
	if (v < 0) {
		v = cpu_has_f16c();
		atomic_store_explicit(&have, v, memory_order_relaxed);
	}
	return v != 0;
}
#else
void
k_half_to_float_f16c(const uint16_t *src, float *dst, int64_t n)
{
	k_half_to_float_portable(src, dst, n);
}

void
k_float_to_half_f16c(const float *src, uint16_t *dst, int64_t n)
{
	k_float_to_half_portable(src, dst, n);
}

bool
k_have_f16c(void)
{
	return false;
}
#endif

void
k_half_to_float_array(const uint16_t *src, float *dst, int64_t n)
{
	if (k_have_f16c())
		k_half_to_float_f16c(src, dst, n);
	else
		k_half_to_float_portable(src, dst, n);
}

void
k_float_to_half_array(const float *src, uint16_t *dst, int64_t n)
{
	if (k_have_f16c())
		k_float_to_half_f16c(src, dst, n);
	else
		k_float_to_half_portable(src, dst, n);
}

/* ---- any dtype to any dtype ---- */

static bool
is_integer(st_dtype t)
{
	return t == ST_DTYPE_INT64 || t == ST_DTYPE_INT32 || t == ST_DTYPE_INT8 || t == ST_DTYPE_UINT8 ||
	       t == ST_DTYPE_BOOL;
}

/* Element i of an integer or bool array. */
static int64_t
load_int(const void *p, st_dtype t, int64_t i)
{
	switch (t) {
	case ST_DTYPE_INT64:
		return ((const int64_t *)p)[i];
	case ST_DTYPE_INT32:
		return ((const int32_t *)p)[i];
	case ST_DTYPE_INT8:
		return ((const int8_t *)p)[i];
	default: /* uint8, bool */
		return ((const uint8_t *)p)[i];
	}
}

static double
load_float(const void *p, st_dtype t, int64_t i)
{
	if (t == ST_DTYPE_FLOAT32)
		return ((const float *)p)[i];
	return k_half_to_float(((const uint16_t *)p)[i]);
}

static void
int_range(st_dtype t, int64_t *lo, int64_t *hi)
{
	switch (t) {
	case ST_DTYPE_INT64:
		*lo = INT64_MIN, *hi = INT64_MAX;
		break;
	case ST_DTYPE_INT32:
		*lo = INT32_MIN, *hi = INT32_MAX;
		break;
	case ST_DTYPE_INT8:
		*lo = INT8_MIN, *hi = INT8_MAX;
		break;
	case ST_DTYPE_UINT8:
		*lo = 0, *hi = UINT8_MAX;
		break;
	default:
		*lo = 0, *hi = 1;
		break;
	}
}

static void
store_int(void *p, st_dtype t, int64_t i, int64_t v)
{
	switch (t) {
	case ST_DTYPE_INT64:
		((int64_t *)p)[i] = v;
		break;
	case ST_DTYPE_INT32:
		((int32_t *)p)[i] = (int32_t)v;
		break;
	case ST_DTYPE_INT8:
		((int8_t *)p)[i] = (int8_t)v;
		break;
	default:
		((uint8_t *)p)[i] = (uint8_t)v;
		break;
	}
}

/* Saturates v to dtype t's range (bool: non-zero is 1). */
static int64_t
saturate(int64_t v, st_dtype t)
{
	if (t == ST_DTYPE_BOOL)
		return v != 0;
	int64_t lo, hi;
	int_range(t, &lo, &hi);
	return v < lo ? lo : v > hi ? hi : v;
}

/* A float truncated toward zero into dtype t, saturated; NaN gives 0. */
static int64_t
float_to_int(double v, st_dtype t)
{
	if (t == ST_DTYPE_BOOL)
		return v != 0; /* NaN compares unequal: true */
	if (isnan(v))
		return 0;
	int64_t lo, hi;
	int_range(t, &lo, &hi);
	if (v <= (double)lo)
		return lo;
	/* (double)INT64_MAX rounds up to 2^63, so compare against that bound. */
	if (v >= (double)hi)
		return hi;
	return (int64_t)v;
}

void
k_convert(const void *src, st_dtype from, void *dst, st_dtype to, int64_t n)
{
	if (from == to) {
		memcpy(dst, src, (size_t)n * k_dtype_size(to));
		return;
	}
	if (from == ST_DTYPE_FLOAT32 && to == ST_DTYPE_FLOAT16) {
		k_float_to_half_array(src, dst, n);
		return;
	}
	if (from == ST_DTYPE_FLOAT16 && to == ST_DTYPE_FLOAT32) {
		k_half_to_float_array(src, dst, n);
		return;
	}
	for (int64_t i = 0; i < n; i++) {
		if (is_integer(from) && is_integer(to)) {
			store_int(dst, to, i, saturate(load_int(src, from, i), to));
		} else if (is_integer(from)) {
			int64_t v = load_int(src, from, i);
			if (to == ST_DTYPE_FLOAT32)
				((float *)dst)[i] = (float)v;
			else
				((uint16_t *)dst)[i] = k_float_to_half((float)v);
		} else if (is_integer(to)) {
			store_int(dst, to, i, float_to_int(load_float(src, from, i), to));
		}
	}
}

void
k_scalar(double v, st_dtype t, void *out)
{
	switch (t) {
	case ST_DTYPE_FLOAT32: {
		float f = (float)v;
		memcpy(out, &f, sizeof f);
		break;
	}
	case ST_DTYPE_FLOAT16: {
		uint16_t h = k_float_to_half((float)v);
		memcpy(out, &h, sizeof h);
		break;
	}
	default: {
		int64_t i = float_to_int(v, t);
		switch (t) {
		case ST_DTYPE_INT64:
			memcpy(out, &i, sizeof i);
			break;
		case ST_DTYPE_INT32: {
			int32_t w = (int32_t)i;
			memcpy(out, &w, sizeof w);
			break;
		}
		case ST_DTYPE_INT8: {
			int8_t w = (int8_t)i;
			memcpy(out, &w, sizeof w);
			break;
		}
		default: {
			uint8_t w = (uint8_t)i;
			memcpy(out, &w, sizeof w);
			break;
		}
		}
		break;
	}
	}
}

bool
k_float_fits(float v, st_dtype t)
{
	switch (t) {
	case ST_DTYPE_FLOAT32:
		return true;
	case ST_DTYPE_FLOAT16:
		return isnan(v) || fabsf(v) <= 65504.0f || isinf(v);
	case ST_DTYPE_BOOL:
		return v == 0 || v == 1;
	default: {
		if (!(v == floorf(v)))
			return false; /* fractions, NaN and infinities */
		int64_t lo, hi;
		int_range(t, &lo, &hi);
		/* 2^63 is the first float past INT64_MAX. */
		return (double)v >= (double)lo && (t == ST_DTYPE_INT64 ? (double)v < 9223372036854775808.0
		                                                        : (double)v <= (double)hi);
	}
	}
}

/* ---- layouts ---- */

/*
 * 4-byte elements of `count` matrices of rows x cols each, transposed into
 * cols x rows: the layout conversions of float32 tensors, with the batch
 * as the matrices. A task is a block of at most 1024 rows by as many
 * columns as make some 64 KiB of output, swept in tiles of 16 x 16 (a
 * 1 KiB block read and one written, in L1): every output line is finished
 * while it is in cache. (Tasks of 16 rows by every column wrote a 32-row
 * matrix's output lines half at a time, a whole pass apart, and the
 * element-at-a-time gather before them took 68 us for MobileNetV2's
 * 192 x 784.) With AVX2 each whole 8 x 8 block of a tile moves through
 * eight registers (unpacks, shuffles and lane swaps, bits untouched).
 * MobileNetV2's 32 x 112 x 112 stem output on a Zen 3, tasks of 16 rows
 * against these: 0.56 against 0.16 ms in C, 0.19 against 0.12 with AVX2.
 */
#define TRANSPOSE_TILE 16
#define TRANSPOSE_BAND 1024

typedef struct transpose_job {
	const uint32_t *src;
	uint32_t *dst;
	int64_t rows, cols;
	int64_t band, chunk;   /* rows and columns of a task */
	int64_t bands, chunks; /* tasks along the rows and the columns of one matrix */
	bool avx2;
} transpose_job;

#if defined(__x86_64__) && defined(__GNUC__) && defined(K_HAVE_AVX2)
#define K_TRANSPOSE_AVX2 1
/* The 8 x 8 block at src (rows ss elements apart) into dst (ds apart). */
__attribute__((target("avx2"))) static void
transpose_8x8_avx2(const uint32_t *src, int64_t ss, uint32_t *dst, int64_t ds)
{
	__m256 r[8];
	for (int i = 0; i < 8; i++)
		r[i] = _mm256_loadu_ps((const float *)(src + i * ss));
	k_transpose8_avx2(r);
	for (int i = 0; i < 8; i++)
		_mm256_storeu_ps((float *)(dst + i * ds), r[i]);
}
#endif

/* Rows [r0, r0 + R) x columns [c0, c1), R a constant where inlined: each
 * column's R elements stored together with no inner loop. */
static inline void
transpose_few(const transpose_job *j, const uint32_t *src, uint32_t *dst, int64_t r0, int R, int64_t c0,
              int64_t c1)
{
	const uint32_t *s = src + r0 * j->cols;
	for (int64_t c = c0; c < c1; c++) {
		uint32_t *d = dst + c * j->rows + r0;
		for (int r = 0; r < R; r++)
			d[r] = s[r * j->cols + c];
	}
}

/* Rows [r0, r1) x columns [c0, c1) of one matrix, an element at a time;
 * two to four rows (an image's few channels going channels last) with the
 * count fixed, which took a 3 x 224 x 224 image from 0.109 ms to 0.082 (one
 * thread, Zen 3). */
static void
transpose_elements(const transpose_job *j, const uint32_t *src, uint32_t *dst, int64_t r0, int64_t r1, int64_t c0,
                   int64_t c1)
{
	switch (r1 - r0) {
	case 2:
		transpose_few(j, src, dst, r0, 2, c0, c1);
		return;
	case 3:
		transpose_few(j, src, dst, r0, 3, c0, c1);
		return;
	case 4:
		transpose_few(j, src, dst, r0, 4, c0, c1);
		return;
	default:
		break;
	}
	for (int64_t c = c0; c < c1; c++)
		for (int64_t r = r0; r < r1; r++)
			dst[c * j->rows + r] = src[r * j->cols + c];
}

/* The tile of rows [r0, r1) x columns [c0, c1), each at most 16. */
static void
transpose_tile(const transpose_job *j, const uint32_t *src, uint32_t *dst, int64_t r0, int64_t r1, int64_t c0,
               int64_t c1)
{
#ifdef K_TRANSPOSE_AVX2
	if (j->avx2) {
		/* Whole 8 x 8 blocks in registers, the strips past them an
		 * element at a time. */
		int64_t r8 = r0 + (r1 - r0) / 8 * 8, c8 = c0 + (c1 - c0) / 8 * 8;
		for (int64_t r = r0; r < r8; r += 8)
			for (int64_t c = c0; c < c8; c += 8)
				transpose_8x8_avx2(src + r * j->cols + c, j->cols, dst + c * j->rows + r, j->rows);
		transpose_elements(j, src, dst, r8, r1, c0, c1);
		transpose_elements(j, src, dst, r0, r8, c8, c1);
		return;
	}
#endif
	if (r1 - r0 == TRANSPOSE_TILE && c1 - c0 == TRANSPOSE_TILE) {
		for (int c = 0; c < TRANSPOSE_TILE; c++)
			for (int r = 0; r < TRANSPOSE_TILE; r++)
				dst[(c0 + c) * j->rows + r0 + r] = src[(r0 + r) * j->cols + c0 + c];
		return;
	}
	transpose_elements(j, src, dst, r0, r1, c0, c1);
}

static void
transpose_range(void *arg, int64_t t0, int64_t t1)
{
	const transpose_job *j = arg;
	int64_t per_matrix = j->bands * j->chunks;
	for (int64_t t = t0; t < t1; t++) {
		int64_t m = t / per_matrix, b = t % per_matrix / j->chunks, k = t % j->chunks;
		int64_t rb0 = b * j->band, rb1 = rb0 + j->band < j->rows ? rb0 + j->band : j->rows;
		int64_t cb0 = k * j->chunk, cb1 = cb0 + j->chunk < j->cols ? cb0 + j->chunk : j->cols;
		const uint32_t *src = j->src + m * j->rows * j->cols;
		uint32_t *dst = j->dst + m * j->rows * j->cols;
		for (int64_t r0 = rb0; r0 < rb1; r0 += TRANSPOSE_TILE) {
			int64_t r1 = r0 + TRANSPOSE_TILE < rb1 ? r0 + TRANSPOSE_TILE : rb1;
			for (int64_t c0 = cb0; c0 < cb1; c0 += TRANSPOSE_TILE)
				transpose_tile(j, src, dst, r0, r1, c0, c0 + TRANSPOSE_TILE < cb1 ? c0 + TRANSPOSE_TILE : cb1);
		}
	}
}

static void
transpose_32(const void *src, void *dst, int64_t count, int64_t rows, int64_t cols, const st_exec_ctx *ctx)
{
	if (count <= 0 || rows <= 0 || cols <= 0)
		return;
	transpose_job j = { .src = src, .dst = dst, .rows = rows, .cols = cols };
#ifdef K_TRANSPOSE_AVX2
	j.avx2 = k_cpu_isa() >= K_ISA_AVX2;
#endif
	j.band = rows < TRANSPOSE_BAND ? rows : TRANSPOSE_BAND;
	/* Columns for 16 K output elements (64 KiB), whole tiles. */
	j.chunk = k_div_up(k_div_up(16384, j.band), TRANSPOSE_TILE) * TRANSPOSE_TILE;
	j.chunk = j.chunk < cols ? j.chunk : cols;
	j.bands = k_div_up(rows, j.band), j.chunks = k_div_up(cols, j.chunk);
	int64_t tasks = count * j.bands * j.chunks;
	if (ctx != NULL && ctx->parallel_for != NULL && ctx->n_threads > 1)
		ctx->parallel_for(ctx, tasks, 1, transpose_range, &j);
	else
		transpose_range(&j, 0, tasks);
}

/* N and the product of the spatial axes of an image shape (rank >= 3). */
static void
image_sizes(const st_shape *shape, int64_t *n, int64_t *spatial)
{
	*n = shape->dims[0];
	*spatial = 1;
	for (int k = 2; k < shape->rank; k++)
		*spatial *= shape->dims[k];
}

void
k_nchw_to_nhwc(const void *src, void *dst, const st_shape *shape, size_t elem, const st_exec_ctx *ctx)
{
	if (elem == 4 && shape->rank >= 3) {
		int64_t n, spatial;
		image_sizes(shape, &n, &spatial);
		transpose_32(src, dst, n, shape->dims[1], spatial, ctx);
		return;
	}
	/* Logical (N, C, S1..Sk) stored as NCHW; NHWC storage is the transpose
	 * with C moved last. */
	int perm[ST_MAX_RANK];
	int r = shape->rank;
	perm[0] = 0;
	for (int k = 1; k < r - 1; k++)
		perm[k] = k + 1;
	perm[r - 1] = 1;
	k_transpose(src, shape, perm, dst, elem, ctx);
}

void
k_nhwc_to_nchw(const void *src, void *dst, const st_shape *shape, size_t elem, const st_exec_ctx *ctx)
{
	if (elem == 4 && shape->rank >= 3) {
		int64_t n, spatial;
		image_sizes(shape, &n, &spatial);
		transpose_32(src, dst, n, spatial, shape->dims[1], ctx);
		return;
	}
	/* The stored order is (N, S1..Sk, C): move its last axis to position 1. */
	st_shape stored = *shape;
	int r = shape->rank;
	for (int k = 1; k < r - 1; k++)
		stored.dims[k] = shape->dims[k + 1];
	stored.dims[r - 1] = shape->dims[1];
	int perm[ST_MAX_RANK];
	perm[0] = 0;
	perm[1] = r - 1;
	for (int k = 2; k < r; k++)
		perm[k] = k - 1;
	k_transpose(src, &stored, perm, dst, elem, ctx);
}
