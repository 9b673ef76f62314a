/* Small helpers the CPU kernel files share: sizes, blocks, thread counts
 * and the environment variables that force a choice. */
#ifndef STRATA_K_INT_H
#define STRATA_K_INT_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "st-plugin.h"

static inline int64_t
k_min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

static inline int64_t
k_max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

static inline int64_t
k_clamp64(int64_t v, int64_t lo, int64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* ceil(a / b) and floor(a / b) for b > 0 and any a. */
static inline int64_t
k_div_up(int64_t a, int64_t b)
{
	return a >= 0 ? (a + b - 1) / b : -((-a) / b);
}

static inline int64_t
k_div_down(int64_t a, int64_t b)
{
	return a >= 0 ? a / b : -((-a + b - 1) / b);
}

/* a rounded up to a multiple of b (b > 0, a >= 0). */
static inline int64_t
k_round_up(int64_t a, int64_t b)
{
	return k_div_up(a, b) * b;
}

/* Floats rounded up to whole 64-byte lines. */
static inline size_t
k_line_floats(int64_t floats)
{
	return (size_t)k_round_up(floats, 16);
}

/* The threads a kernel runs on: as many as the context has (1 without a
 * parallel_for), no more than the scratch slots prepared for it. */
static inline int
k_threads_used(int slots, const st_exec_ctx *ctx)
{
	int threads = ctx && ctx->parallel_for ? ctx->n_threads : 1;
	if (threads > slots)
		threads = slots;
	return threads < 1 ? 1 : threads;
}

/* What environment variable `name` asks for: values[i] where its text is
 * words[i] (n of them), else -1 (unset, or anything else: the rule). */
static inline int
k_env_choice(const char *name, const char *const *words, const int *values, int n)
{
	const char *env = getenv(name);
	for (int i = 0; env != NULL && i < n; i++)
		if (strcmp(env, words[i]) == 0)
			return values[i];
	return -1;
}

#if defined(__x86_64__) && defined(__GNUC__) && defined(K_HAVE_AVX2)
#include <immintrin.h>
/* The 8 x 8 block whose row k is r[k], transposed in place: r[k] becomes
 * its column k. Unpacks, shuffles and lane swaps, bits untouched (the
 * layout conversions and the swapped convolution's stores). */
static inline __attribute__((always_inline, target("avx2"))) void
k_transpose8_avx2(__m256 r[8])
{
	__m256 t[8];
	for (int k = 0; k < 8; k += 2) {
		t[k] = _mm256_unpacklo_ps(r[k], r[k + 1]);
		t[k + 1] = _mm256_unpackhi_ps(r[k], r[k + 1]);
	}
	for (int k = 0; k < 8; k += 4) {
		r[k] = _mm256_shuffle_ps(t[k], t[k + 2], 0x44);
		r[k + 1] = _mm256_shuffle_ps(t[k], t[k + 2], 0xee);
		r[k + 2] = _mm256_shuffle_ps(t[k + 1], t[k + 3], 0x44);
		r[k + 3] = _mm256_shuffle_ps(t[k + 1], t[k + 3], 0xee);
	}
	/* r[k] (k < 4): column k of rows 0-3, then column k + 4 of them;
	 * r[k + 4] the same of rows 4-7. */
	for (int k = 0; k < 4; k++) {
		t[k] = _mm256_permute2f128_ps(r[k], r[k + 4], 0x20);
		t[k + 4] = _mm256_permute2f128_ps(r[k], r[k + 4], 0x31);
	}
	for (int k = 0; k < 8; k++)
		r[k] = t[k];
}

/* Lanes [0, n) of v to p (0 <= n <= 8), nothing past p[n - 1]: four,
 * two and one at a time from the register, as AMD's masked stores
 * (vmaskmovps) take some 24 cycles each on a Zen 3 against one for a plain
 * store (7.4 against 0.65 ns measured; the direct convolution tile's
 * twelve made a 1x1 layer of 16 input channels 3x slower), and a memcpy
 * of a variable count is a rep movs of some 30 cycles to start. Masked
 * loads are fast and stay. */
static inline __attribute__((always_inline, target("avx2"))) void
k_store_part_avx2(float *p, __m256 v, int64_t n)
{
	if (n >= 8) {
		_mm256_storeu_ps(p, v);
		return;
	}
	__m128 part = _mm256_castps256_ps128(v);
	if (n >= 4) {
		_mm_storeu_ps(p, part);
		part = _mm256_extractf128_ps(v, 1);
		p += 4;
		n -= 4;
	}
	if (n >= 2) {
		_mm_storel_pi((__m64 *)(void *)p, part);
		part = _mm_movehl_ps(part, part);
		p += 2;
		n -= 2;
	}
	if (n >= 1)
		_mm_store_ss(p, part);
}
#endif

#endif
