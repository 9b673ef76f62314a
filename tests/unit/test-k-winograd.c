/* Unit tests: Winograd convolution (k-winograd.c) against k_conv_ref, for
 * both tile sizes at every SIMD level this processor runs, serially and cut
 * into pieces as a pool would; and through k_conv_packed, packed twice. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"

#include "k-nn.h"
#include "k-winograd.h"

typedef struct wrng {
	uint64_t s;
} wrng;

static uint64_t
wrng_next(wrng *r)
{
	r->s ^= r->s << 13;
	r->s ^= r->s >> 7;
	r->s ^= r->s << 17;
	return r->s;
}

static int64_t
wpick(wrng *r, int64_t lo, int64_t hi)
{
	return lo + (int64_t)(wrng_next(r) % (uint64_t)(hi - lo + 1));
}

/* Uniform in [-scale, scale). Caller frees. */
static float *
wrandom(wrng *r, int64_t n, double scale)
{
	float *v = malloc((size_t)(n ? n : 1) * sizeof *v);
	cr_assert(v != NULL);
	for (int64_t i = 0; i < n; i++)
		v[i] = (float)(((double)(wrng_next(r) >> 11) / 9007199254740992.0 * 2.0 - 1.0) * scale);
	return v;
}

static k_window
wwindow(int64_t n, int64_t c, int64_t oc, int64_t h, int64_t w, int64_t pt, int64_t pb, int64_t pl, int64_t pr)
{
	k_window win = { .spatial = 2, .batch = n, .in_channels = c, .out_channels = oc, .groups = 1 };
	int64_t in[2] = { h, w }, pad0[2] = { pt, pl }, pad1[2] = { pb, pr };
	for (int i = 0; i < 2; i++) {
		win.in[i] = in[i];
		win.kernel[i] = 3;
		win.stride[i] = 1;
		win.dilation[i] = 1;
		win.pad_begin[i] = pad0[i];
		win.pad_end[i] = pad1[i];
		win.out[i] = in[i] + pad0[i] + pad1[i] - 2;
	}
	return win;
}

static int64_t
out_elements(const k_window *w)
{
	return w->batch * w->out_channels * w->out[0] * w->out[1];
}

/* Asserts the FP32 agreement of ARCHITECTURE.md: |a - b| <= 1e-5 (max|b| +
 * |b|); returns the worst |a - b| / max|b|. */
static double
assert_agree(const float *got, const float *want, int64_t n, const char *what)
{
	double most = 0.0, worst = 0.0;
	for (int64_t i = 0; i < n; i++)
		most = fmax(most, fabs((double)want[i]));
	for (int64_t i = 0; i < n; i++) {
		double d = fabs((double)got[i] - (double)want[i]);
		cr_assert(d <= 1e-5 * (most + fabs((double)want[i])), "%s: element %lld is %.9g, want %.9g", what,
		          (long long)i, (double)got[i], (double)want[i]);
		worst = fmax(worst, most > 0 ? d / most : d);
	}
	return worst;
}

/* One window at tile size m and level isa, serially and in 2 and 3 pieces
 * (on small planes the pieces share out the input transform first: the
 * results must not change, to the bit). */
static double
check_one(const k_window *w, int m, k_isa isa, const float *x, const float *wt, const float *bias)
{
	char what[256];
	snprintf(what, sizeof what, "F(%d,3) %s N%lld C%lld->%lld %lldx%lld pad %lld,%lld,%lld,%lld%s", m,
	         k_cpu_isa_name(isa), (long long)w->batch, (long long)w->in_channels, (long long)w->out_channels,
	         (long long)w->in[0], (long long)w->in[1], (long long)w->pad_begin[0], (long long)w->pad_end[0],
	         (long long)w->pad_begin[1], (long long)w->pad_end[1], bias ? " bias" : "");
	int64_t ny = out_elements(w);
	float *want = malloc((size_t)ny * sizeof *want), *got = malloc((size_t)ny * sizeof *got);
	cr_assert(want && got);
	k_conv_ref(w, x, wt, bias, want);
	size_t pbytes = k_winograd_packed_bytes(w, m, isa);
	void *packed = aligned_alloc(64, (pbytes + 63) / 64 * 64);
	cr_assert(packed != NULL);
	k_winograd_pack(w, m, isa, wt, packed);
	cr_assert(k_winograd_is_packed(packed));
	double worst = 0.0;
	float *serial = malloc((size_t)ny * sizeof *serial);
	cr_assert(serial != NULL);
	for (int threads = 1; threads <= 3; threads++) {
		st_exec_ctx ctx = { .n_threads = threads, .parallel_for = test_pieces_run };
		size_t sbytes = k_winograd_scratch_bytes(w, m, isa, threads);
		unsigned char *scratch = test_scratch_new(sbytes);
		for (int64_t i = 0; i < ny; i++)
			got[i] = NAN;
		k_winograd(w, packed, x, bias, got, scratch, threads, threads > 1 ? &ctx : NULL);
		test_scratch_free(scratch, sbytes, what);
		worst = fmax(worst, assert_agree(got, want, ny, what));
		if (threads == 1)
			memcpy(serial, got, (size_t)ny * sizeof *got);
		else
			cr_assert(memcmp(serial, got, (size_t)ny * sizeof *got) == 0,
			          "%s: %d pieces differ from one", what, threads);
	}
	free(serial);
	free(packed);
	free(want);
	free(got);
	return worst;
}

/* Random shapes: channels 1..70, sizes 1..19 (smaller than a tile
 * included) and some wide ones, paddings 0..2 on each side, batch 1..3,
 * with and without bias. */
static void
random_shapes(int m, uint64_t seed, int count)
{
	wrng r = { seed };
	int done = 0;
	for (int isa = 0; isa < K_ISA_COUNT; isa++) {
		if (!k_cpu_isa_supported((k_isa)isa))
			continue;
		for (int i = 0; i < count; i++) {
			int64_t h = wpick(&r, 1, 19), wd = wpick(&r, 1, 19);
			int64_t pt = wpick(&r, 0, 2), pb = wpick(&r, 0, 2), pl = wpick(&r, 0, 2), pr = wpick(&r, 0, 2);
			if (h + pt + pb < 3 || wd + pl + pr < 3)
				continue;
			int64_t n = wpick(&r, 1, 3), c = wpick(&r, 1, 70), oc = wpick(&r, 1, 70);
			if (i % 7 == 0) {
				c = wpick(&r, 1, 4);
				oc = wpick(&r, 1, 9);
			}
			/* Some wide planes: tile rows of 12 or more tiles take the
			 * 16-lane transforms, shorter ones narrower ones. */
			if (i % 5 == 0) {
				h = wpick(&r, 20, 40);
				wd = wpick(&r, 24 * m, 30 * m + 5);
				c = wpick(&r, 1, 12);
				oc = wpick(&r, 1, 20);
			}
			k_window w = wwindow(n, c, oc, h, wd, pt, pb, pl, pr);
			cr_assert(k_winograd_fits(&w));
			float *x = wrandom(&r, n * c * h * wd, 1.0);
			float *wt = wrandom(&r, oc * c * 9, 1.0);
			float *bias = i % 2 ? wrandom(&r, oc, 1.0) : NULL;
			check_one(&w, m, (k_isa)isa, x, wt, bias);
			free(x);
			free(wt);
			free(bias);
			done++;
		}
	}
	cr_assert_gt(done, 20);
}

Test(k_winograd, f2_random_shapes)
{
	random_shapes(2, 0x9e3779b97f4a7c15u, 60);
}

Test(k_winograd, f4_random_shapes)
{
	random_shapes(4, 0xc2b2ae3d27d4eb4fu, 60);
}

/* Network shapes with He-scaled weights, where the error of F(4,3) grows
 * most: many input channels (k_winograd_chosen keeps F(4,3) to 256). */
Test(k_winograd, network_shapes)
{
	static const int64_t shapes[][3] = { { 64, 64, 20 }, { 256, 256, 14 }, { 512, 512, 7 }, { 48, 192, 13 } };
	wrng r = { 12345 };
	for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
		k_window w = wwindow(1, shapes[s][0], shapes[s][1], shapes[s][2], shapes[s][2], 1, 1, 1, 1);
		/* Uniform with the variance of N(0, 2 / fan_in) and of N(0, 1). */
		float *x = wrandom(&r, w.in_channels * shapes[s][2] * shapes[s][2], sqrt(3.0));
		float *wt = wrandom(&r, w.out_channels * w.in_channels * 9, sqrt(3.0 * 2.0 / (9.0 * (double)w.in_channels)));
		float *bias = wrandom(&r, w.out_channels, 0.1);
		for (int m = 2; m <= 4; m += 2)
			check_one(&w, m, k_cpu_isa_best(), x, wt, bias);
		free(x);
		free(wt);
		free(bias);
	}
}

/* Through k_conv_packed as the std plugin runs it: packed, run, then the
 * weights change and are packed again into the same buffer. */
Test(k_winograd, through_conv_packed)
{
	wrng r = { 777 };
	k_window w = wwindow(2, 37, 45, 17, 22, 1, 1, 1, 1);
	int64_t nx = 2 * 37 * 17 * 22, nw = 45 * 37 * 9, ny = out_elements(&w);
	for (int m = 2; m <= 4; m += 2) {
		k_winograd_force(m);
		cr_assert_eq(k_winograd_chosen(&w, k_cpu_isa()), m);
		size_t pbytes = k_conv_packed_bytes(&w);
		cr_assert_eq(pbytes, k_winograd_packed_bytes(&w, m, k_cpu_isa()));
		void *packed = aligned_alloc(64, (pbytes + 63) / 64 * 64);
		size_t sbytes = k_conv_packed_scratch_bytes(&w, 2);
		unsigned char *scratch = test_scratch_new(sbytes);
		float *x = wrandom(&r, nx, 1.0), *bias = wrandom(&r, 45, 1.0);
		float *want = malloc((size_t)ny * sizeof *want), *got = malloc((size_t)ny * sizeof *got);
		cr_assert(packed && want && got);
		st_exec_ctx ctx = { .n_threads = 2, .parallel_for = test_pieces_run };
		for (int round = 0; round < 2; round++) {
			float *wt = wrandom(&r, nw, 0.5);
			k_conv_pack(&w, wt, packed);
			cr_assert(k_winograd_is_packed(packed));
			k_conv_ref(&w, x, wt, bias, want);
			for (int64_t i = 0; i < ny; i++)
				got[i] = NAN;
			k_conv_packed(&w, x, wt, packed, bias, got, scratch, 2, &ctx);
			assert_agree(got, want, ny, round ? "k_conv_packed after repacking" : "k_conv_packed");
			free(wt);
		}
		test_scratch_free(scratch, sbytes, "k_conv_packed");
		free(packed);
		free(x);
		free(bias);
		free(want);
		free(got);
	}
	k_winograd_force(-1);
}

/* What the rule takes and leaves. */
Test(k_winograd, fits)
{
	k_window w = wwindow(1, 16, 16, 8, 8, 1, 1, 1, 1);
	cr_assert(k_winograd_fits(&w));
	k_window strided = w;
	strided.stride[0] = 2;
	cr_assert_not(k_winograd_fits(&strided));
	k_window grouped = w;
	grouped.groups = 2;
	cr_assert_not(k_winograd_fits(&grouped));
	k_window five = w;
	five.kernel[1] = 5;
	cr_assert_not(k_winograd_fits(&five));
	k_winograd_force(0);
	cr_assert_eq(k_winograd_chosen(&w, k_cpu_isa()), 0);
	k_winograd_force(-1);
	/* The rule keeps F(4,3) to at most 256 input channels, where it is
	 * accurate enough, and leaves shapes with few channels to the direct
	 * kernels. */
	for (int isa = 0; isa < K_ISA_COUNT; isa++) {
		if (!k_cpu_isa_supported((k_isa)isa))
			continue;
		k_window deep = wwindow(1, 512, 512, 14, 14, 1, 1, 1, 1);
		k_window wide = wwindow(1, 64, 64, 56, 56, 1, 1, 1, 1);
		k_window thin = wwindow(1, 8, 64, 56, 56, 1, 1, 1, 1);
		cr_assert_eq(k_winograd_chosen(&deep, (k_isa)isa), 2);
		cr_assert_eq(k_winograd_chosen(&wide, (k_isa)isa), 4);
		cr_assert_eq(k_winograd_chosen(&thin, (k_isa)isa), 0);
	}
}
