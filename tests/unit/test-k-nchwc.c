/* Unit tests: convolution on channel-blocked tensors (k-nchwc.c) against
 * k_conv_ref, at every SIMD level this processor runs, serially and in
 * pieces; the layout conversions. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "k-helpers.h"

#include "k-nchwc.h"
#include "k-nn.h"
#include "k-sgemm.h"
#include "k-winograd.h"

/* One layout and back at every level (AVX-512 converts with gathers) and
 * in 1 to 3 pieces: planes shorter and longer than a vector, not a
 * multiple of it, channels off the blocks. */
Test(k_nchwc, conversions_round_trip_and_zero_the_padding)
{
	test_rng r = { 3 };
	static const int64_t shapes[][4] = { { 2, 21, 3, 5 }, { 2, 37, 5, 7 }, { 1, 64, 9, 9 }, { 1, 5, 1, 1 } };
	k_isa have[K_ISA_COUNT];
	int count = test_isa_levels(have);
	for (int lv = 0; lv < count; lv++) {
		cr_assert_eq(k_cpu_isa_force(have[lv]), 0);
		for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
			int64_t n = shapes[i][0], c = shapes[i][1], h = shapes[i][2], w = shapes[i][3];
			int64_t blocks = (c + 15) / 16, plane = h * w;
			float *src = test_random_floats(&r, n * c * h * w);
			int64_t nb = k_nchwc_floats(n, c, h, w);
			cr_assert_eq(nb, n * blocks * 16 * plane);
			for (int pieces = 1; pieces <= 3; pieces++) {
				st_exec_ctx ctx = { .n_threads = pieces, .parallel_for = test_pieces_run };
				float *blocked = test_nan_floats(nb), *back = test_nan_floats(n * c * h * w);
				k_nchwc_from_nchw(n, c, h, w, src, blocked, pieces > 1 ? &ctx : NULL);
				for (int64_t s = 0; s < n; s++)
					for (int64_t ch = 0; ch < blocks * 16; ch++)
						for (int64_t p = 0; p < plane; p++) {
							float got = blocked[((s * blocks + ch / 16) * plane + p) * 16 + ch % 16];
							float want = ch < c ? src[(s * c + ch) * plane + p] : 0.0f;
							cr_assert(got == want && !signbit(got) == !signbit(want),
							          "%s %lldx%lldx%lldx%lld: sample %lld channel %lld position %lld",
							          k_cpu_isa_name(have[lv]), (long long)n, (long long)c, (long long)h,
							          (long long)w, (long long)s, (long long)ch, (long long)p);
						}
				k_nchwc_to_nchw(n, c, h, w, blocked, back, pieces > 1 ? &ctx : NULL);
				cr_assert(memcmp(src, back, (size_t)(n * c * h * w) * sizeof *src) == 0);
				free(blocked), free(back);
			}
			free(src);
		}
	}
	k_cpu_isa_force(k_cpu_isa_best());
}

/* One window at the level in use: the blocked convolution, serially and in
 * 2 and 3 pieces, against k_conv_ref on the same values (within the FP32
 * agreement of ARCHITECTURE.md), the same bits from every piece count, and
 * the blocked channels past the outputs zero. */
static void
check_window(test_rng *r, const k_window *w, bool with_bias, int clamp)
{
	/* clamp 1: a relu; 2: a clip to [0.1, 0.5], whose floor is not 0 (the
	 * lanes past the outputs must still be 0). */
	float lo = clamp == 2 ? 0.1f : 0.0f, hi = clamp == 2 ? 0.5f : INFINITY;
	char what[256];
	snprintf(what, sizeof what, "%s N%lld %lld->%lld %lldx%lld k%lldx%lld s%lld,%lld d%lld,%lld p%lld,%lld,%lld,%lld%s%s",
	         k_cpu_isa_name(k_cpu_isa()), (long long)w->batch, (long long)w->in_channels,
	         (long long)w->out_channels, (long long)w->in[0], (long long)w->in[1], (long long)w->kernel[0],
	         (long long)w->kernel[1], (long long)w->stride[0], (long long)w->stride[1], (long long)w->dilation[0],
	         (long long)w->dilation[1], (long long)w->pad_begin[0], (long long)w->pad_end[0],
	         (long long)w->pad_begin[1], (long long)w->pad_end[1], with_bias ? " bias" : "", clamp == 1 ? " relu" : clamp == 2 ? " clip" : "");
	int64_t nx = w->batch * w->in_channels * w->in[0] * w->in[1];
	int64_t ny = w->batch * w->out_channels * w->out[0] * w->out[1];
	int64_t nw = w->out_channels * w->in_channels * w->kernel[0] * w->kernel[1];
	float *x = test_random_floats(r, nx), *weights = test_random_floats(r, nw);
	float *bias = with_bias ? test_random_floats(r, w->out_channels) : NULL;
	float *want = malloc((size_t)ny * sizeof *want);
	k_conv_ref(w, x, weights, bias, want);
	if (clamp)
		for (int64_t i = 0; i < ny; i++)
			want[i] = want[i] < lo ? lo : want[i] > hi ? hi : want[i];
	float *xb = test_nan_floats(k_nchwc_floats(w->batch, w->in_channels, w->in[0], w->in[1]));
	k_nchwc_from_nchw(w->batch, w->in_channels, w->in[0], w->in[1], x, xb, NULL);
	size_t pf = k_conv_nchwc_packed_floats(w);
	float *packed = aligned_alloc(64, (pf * sizeof(float) + 63) / 64 * 64);
	k_conv_nchwc_pack(w, weights, packed);
	int64_t nyb = k_nchwc_floats(w->batch, w->out_channels, w->out[0], w->out[1]);
	float *first = NULL, *got = malloc((size_t)ny * sizeof *got);
	for (int pieces = 1; pieces <= 3; pieces++) {
		float *yb = test_nan_floats(nyb);
		st_exec_ctx ctx = { .n_threads = pieces, .parallel_for = test_pieces_run };
		k_conv_nchwc(w, xb, packed, bias, clamp != 0, lo, hi, yb, pieces > 1 ? &ctx : NULL);
		int64_t plane = w->out[0] * w->out[1], blocks = (w->out_channels + 15) / 16;
		for (int64_t s = 0; s < w->batch; s++)
			for (int64_t l = w->out_channels; l < blocks * 16; l++)
				for (int64_t p = 0; p < plane; p++)
					cr_assert_eq(yb[((s * blocks + l / 16) * plane + p) * 16 + l % 16], 0.0f,
					             "%s: channel %lld past the outputs", what, (long long)l);
		k_nchwc_to_nchw(w->batch, w->out_channels, w->out[0], w->out[1], yb, got, NULL);
		char why[256];
		cr_assert(test_allclose(got, want, ny, 1e-5, why, sizeof why), "%s, %d pieces: %s", what, pieces, why);
		if (first == NULL)
			first = yb;
		else {
			cr_assert(memcmp(first, yb, (size_t)nyb * sizeof *yb) == 0, "%s: %d pieces differ from one", what,
			          pieces);
			free(yb);
		}
	}
	free(first), free(got), free(packed), free(xb), free(want), free(bias), free(weights), free(x);
}

static k_window
blocked_window(int64_t n, int64_t c, int64_t oc, int64_t h, int64_t wd, int64_t k, int64_t s, int64_t p)
{
	k_window w;
	cr_assert(test_window2d(&w, n, c, oc, 1, h, wd, k, s, p));
	return w;
}

/* The shapes it is for (ResNet's, channels cut down) and odd ones. */
Test(k_nchwc, network_shapes_match_reference)
{
	test_rng r = { 17 };
	k_window cases[] = {
		blocked_window(1, 64, 128, 20, 20, 3, 2, 1), /* 3x3/2 */
		blocked_window(1, 32, 64, 14, 14, 3, 1, 1),  /* 3x3 */
		blocked_window(1, 48, 64, 14, 14, 1, 2, 0),  /* 1x1/2 projection */
		blocked_window(2, 16, 16, 7, 7, 3, 1, 1),    /* 7x7, batch 2 */
		blocked_window(1, 3, 64, 30, 30, 7, 2, 3),   /* a stem: 3 channels */
		blocked_window(1, 20, 70, 9, 13, 3, 1, 0),   /* channels off the blocks */
		blocked_window(1, 1, 1, 1, 1, 1, 1, 0),      /* one of everything */
		blocked_window(1, 100, 70, 9, 8, 3, 1, 1),   /* filters in three slices */
		blocked_window(1, 600, 20, 5, 6, 1, 1, 0),   /* a deep 1x1: two slices */
	};
	k_isa have[K_ISA_COUNT];
	int count = test_isa_levels(have);
	for (int l = 0; l < count; l++) {
		cr_assert_eq(k_cpu_isa_force(have[l]), 0);
		for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
			check_window(&r, &cases[i], i % 2 == 0, (int)(i % 3));
	}
	k_cpu_isa_force(k_cpu_isa_best());
}

Test(k_nchwc, random_windows_match_reference)
{
	test_rng r = { 0x5eed };
	k_isa have[K_ISA_COUNT];
	int count = test_isa_levels(have);
	int done = 0;
	for (int t = 0; t < 90; t++) {
		k_window w = { .spatial = 2, .batch = test_pick(&r, 1, 2), .groups = 1, .in_channels = test_pick(&r, 1, 40),
		               .out_channels = test_pick(&r, 1, 80) };
		for (int i = 0; i < 2; i++) {
			w.in[i] = test_pick(&r, 1, 17);
			w.kernel[i] = test_pick(&r, 1, 5);
			w.stride[i] = test_pick(&r, 1, 3);
			w.dilation[i] = test_pick(&r, 1, 2);
			w.pad_begin[i] = test_pick(&r, 0, 2);
			w.pad_end[i] = test_pick(&r, 0, 2);
		}
		if (!test_window_finish(&w))
			continue;
		cr_assert(k_conv_nchwc_fits(&w));
		cr_assert_eq(k_cpu_isa_force(have[t % count]), 0);
		check_window(&r, &w, t % 2 == 0, t % 3);
		done++;
	}
	k_cpu_isa_force(k_cpu_isa_best());
	cr_assert_gt(done, 40);
}

Test(k_nchwc, fits)
{
	k_window w = blocked_window(1, 8, 8, 5, 5, 3, 1, 1);
	cr_assert(k_conv_nchwc_fits(&w));
	k_window grouped = w;
	grouped.groups = 2;
	cr_assert_not(k_conv_nchwc_fits(&grouped));
	k_window flat = w;
	flat.spatial = 1;
	cr_assert_not(k_conv_nchwc_fits(&flat));
}

/* Through k_conv_packed_post as the std plugin runs it, the blocked path
 * forced at every level: the NCHW input converted in the scratch (which it
 * must not overrun), relu and clip applied as the kernel stores and other
 * activations after, in 1 to 3 pieces, then packed again with new weights
 * into the same buffer. */
Test(k_nchwc, through_conv_packed)
{
	test_rng r = { 99 };
	k_window cases[] = {
		blocked_window(2, 64, 128, 15, 15, 3, 2, 1),
		blocked_window(1, 100, 70, 9, 8, 3, 1, 1),
		blocked_window(1, 600, 20, 5, 6, 1, 1, 0),
	};
	static const k_post posts[] = {
		{ .on = false },
		{ .on = true, .act = K_ACT_RELU },
		{ .on = true, .act = K_ACT_CLIP, .a = 0.1f, .b = 0.5f },
		{ .on = true, .act = K_ACT_SIGMOID },
	};
	k_isa have[K_ISA_COUNT];
	int count = test_isa_levels(have);
	k_conv_blocked_force(1);
	for (int lv = 0; lv < count; lv++) {
		cr_assert_eq(k_cpu_isa_force(have[lv]), 0);
		for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
			const k_window *w = &cases[i];
			cr_assert(k_conv_blocked_chosen(w, have[lv]));
			int64_t nx = w->batch * w->in_channels * w->in[0] * w->in[1];
			int64_t ny = w->batch * w->out_channels * w->out[0] * w->out[1];
			int64_t nw = w->out_channels * w->in_channels * w->kernel[0] * w->kernel[1];
			size_t pbytes = k_conv_packed_bytes(w), sbytes = k_conv_packed_scratch_bytes(w, 3);
			cr_assert_eq(pbytes, 64 + k_conv_nchwc_packed_floats(w) * sizeof(float));
			void *packed = aligned_alloc(64, (pbytes + 63) / 64 * 64);
			float *x = test_random_floats(&r, nx), *want = malloc((size_t)ny * sizeof *want);
			float *bias = i == 1 ? NULL : test_random_floats(&r, w->out_channels);
			for (int round = 0; round < 2; round++) {
				float *weights = test_random_floats(&r, nw);
				k_conv_pack(w, weights, packed);
				const k_post *post = &posts[(i + (size_t)round * 2 + (size_t)lv) % 4];
				k_conv_ref(w, x, weights, bias, want);
				/* The error comes from the scale of the sums, not of what
				 * a clip or a sigmoid leaves of them. */
				double scale = test_max_abs(want, ny);
				k_post_planes(post, want, ny, 0, 1);
				for (int pieces = 1; pieces <= 3; pieces++) {
					unsigned char *scratch = test_scratch_new(sbytes);
					float *got = test_nan_floats(ny);
					st_exec_ctx ctx = { .n_threads = pieces, .parallel_for = test_pieces_run };
					k_conv_packed_post(w, x, weights, packed, bias, got, scratch, pieces, post,
					                   pieces > 1 ? &ctx : NULL);
					char why[256];
					cr_assert(test_allclose_scaled(got, want, ny, 1e-5, scale, why, sizeof why),
					          "%s case %zu round %d, %d pieces: %s", k_cpu_isa_name(have[lv]), i, round,
					          pieces, why);
					test_scratch_free(scratch, sbytes, "the blocked path");
					free(got);
				}
				free(weights);
			}
			free(packed), free(x), free(want), free(bias);
		}
	}
	k_conv_blocked_force(-1);
	k_cpu_isa_force(k_cpu_isa_best());
}

/* What the rule takes: with AVX-512, 3x3 filters on 64 channels or more
 * at stride 2 or on planes of at most 14 x 14 (measured in ResNet-18,
 * docs/performance.md); not the 1x1 projections (their conversions cost
 * more than they gain), not few channels, not other levels. */
Test(k_nchwc, chosen_where_measured_faster)
{
	k_window s2 = blocked_window(1, 64, 128, 56, 56, 3, 2, 1), deep = blocked_window(1, 512, 512, 7, 7, 3, 1, 1);
	k_window mid = blocked_window(1, 256, 256, 14, 14, 3, 1, 1), big = blocked_window(1, 64, 64, 56, 56, 3, 1, 1);
	k_window proj = blocked_window(1, 64, 128, 56, 56, 1, 2, 0), few = blocked_window(1, 32, 64, 14, 14, 3, 1, 1);
	k_window grouped = deep;
	grouped.groups = 2;
	for (int isa = 0; isa < K_ISA_COUNT; isa++) {
		bool avx512 = isa == K_ISA_AVX512 && k_gemm_kernel_of(K_ISA_AVX512) != NULL;
		cr_assert_eq(k_conv_blocked_chosen(&s2, (k_isa)isa), avx512);
		cr_assert_eq(k_conv_blocked_chosen(&deep, (k_isa)isa), avx512);
		cr_assert_eq(k_conv_blocked_chosen(&mid, (k_isa)isa), avx512);
		cr_assert_not(k_conv_blocked_chosen(&big, (k_isa)isa));
		cr_assert_not(k_conv_blocked_chosen(&proj, (k_isa)isa));
		cr_assert_not(k_conv_blocked_chosen(&few, (k_isa)isa));
		cr_assert_not(k_conv_blocked_chosen(&grouped, (k_isa)isa));
	}
	/* Winograd forced where it fits takes the 3x3 stride-1 shapes back. */
	k_winograd_force(4);
	cr_assert_not(k_conv_blocked_chosen(&mid, K_ISA_AVX512));
	cr_assert_eq(k_conv_blocked_chosen(&s2, K_ISA_AVX512), k_gemm_kernel_of(K_ISA_AVX512) != NULL);
	k_winograd_force(-1);
	k_conv_blocked_force(0);
	cr_assert_not(k_conv_blocked_chosen(&deep, K_ISA_AVX512));
	k_conv_blocked_force(1);
	cr_assert(k_conv_blocked_chosen(&few, k_cpu_isa()));
	cr_assert_not(k_conv_blocked_chosen(&grouped, k_cpu_isa()));
	k_conv_blocked_force(-1);
}

/* STRATA_BLOCKED and STRATA_WINOGRAD do what k_conv_blocked_force and
 * k_winograd_force do, read where the choice is made; other text leaves
 * the rule. */
Test(k_nchwc, the_environment_forces_as_the_calls_do)
{
	k_window deep = blocked_window(1, 512, 512, 7, 7, 3, 1, 1), few = blocked_window(1, 32, 64, 14, 14, 3, 1, 1);
	k_window big = blocked_window(1, 64, 64, 56, 56, 3, 1, 1);
	k_isa isa = k_cpu_isa();
	bool rule_deep = k_conv_blocked_chosen(&deep, isa), rule_few = k_conv_blocked_chosen(&few, isa);
	int rule_big = k_winograd_chosen(&big, isa);
	cr_assert_eq(setenv("STRATA_BLOCKED", "off", 1), 0);
	cr_assert_not(k_conv_blocked_chosen(&deep, isa));
	cr_assert_eq(setenv("STRATA_BLOCKED", "1", 1), 0);
	cr_assert(k_conv_blocked_chosen(&few, isa));
	cr_assert_eq(setenv("STRATA_BLOCKED", "sideways", 1), 0);
	cr_assert_eq(k_conv_blocked_chosen(&deep, isa), rule_deep);
	cr_assert_eq(k_conv_blocked_chosen(&few, isa), rule_few);
	/* A call wins over the variable. */
	cr_assert_eq(setenv("STRATA_BLOCKED", "on", 1), 0);
	k_conv_blocked_force(0);
	cr_assert_not(k_conv_blocked_chosen(&few, isa));
	k_conv_blocked_force(-1);
	cr_assert_eq(unsetenv("STRATA_BLOCKED"), 0);

	const char *texts[] = { "off", "0", "2", "4", "five" };
	int want[] = { 0, 0, 2, 4, rule_big };
	for (int i = 0; i < 5; i++) {
		cr_assert_eq(setenv("STRATA_WINOGRAD", texts[i], 1), 0);
		cr_assert_eq(k_winograd_chosen(&big, isa), want[i], "STRATA_WINOGRAD=%s", texts[i]);
	}
	cr_assert_eq(unsetenv("STRATA_WINOGRAD"), 0);
	cr_assert_eq(k_winograd_chosen(&big, isa), rule_big);
}

/* Blocked from and to channels last gives the bits the planar conversions
 * give, the lanes past the channels zero, serially and in pieces. */
Test(k_nchwc, channels_last_conversions_match_the_planar_ones)
{
	test_rng r = { 5 };
	static const int64_t shapes[][3] = { { 2, 21, 15 }, { 1, 37, 35 }, { 1, 64, 81 }, { 3, 5, 1 } };
	for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
		int64_t n = shapes[i][0], c = shapes[i][1], plane = shapes[i][2], all = n * c * plane;
		float *nchw = test_random_floats(&r, all), *nhwc = malloc(sizeof *nhwc * (size_t)all);
		test_to_nhwc(n, c, plane, nchw, nhwc);
		int64_t nb = k_nchwc_floats(n, c, plane, 1);
		float *want = test_nan_floats(nb);
		k_nchwc_from_nchw(n, c, plane, 1, nchw, want, NULL);
		for (int pieces = 1; pieces <= 3; pieces++) {
			st_exec_ctx ctx = { .n_threads = pieces, .parallel_for = test_pieces_run };
			float *blocked = test_nan_floats(nb), *back = test_nan_floats(all);
			k_nchwc_from_nhwc(n, c, plane, nhwc, blocked, pieces > 1 ? &ctx : NULL);
			cr_assert(memcmp(blocked, want, (size_t)nb * sizeof *want) == 0, "%lldx%lldx%lld in %d pieces",
			          (long long)n, (long long)c, (long long)plane, pieces);
			k_nchwc_to_nhwc(n, c, plane, blocked, back, pieces > 1 ? &ctx : NULL);
			cr_assert(memcmp(back, nhwc, (size_t)all * sizeof *nhwc) == 0);
			free(blocked), free(back);
		}
		free(nhwc), free(nchw), free(want);
	}
}

/* Pooling on blocked tensors against k_pool_ref on the planar ones: random
 * windows of 1 to 3 spatial axes (strides, dilations, padding, windows
 * wholly in the padding), both modes and both average divisors, serially
 * and in pieces; max to the bit, averages within the FP32 bound; the lanes
 * past the channels zero. Global pooling likewise. */
Test(k_nchwc, pooling_on_blocked_tensors_matches_reference)
{
	test_rng r = { 17 };
	int done = 0;
	for (int trial = 0; trial < 400 && done < 120; trial++) {
		k_window w = { .spatial = (int)test_pick(&r, 1, 3), .batch = test_pick(&r, 1, 2), .groups = 1 };
		w.in_channels = w.out_channels = test_pick(&r, 1, 40);
		for (int i = 0; i < w.spatial; i++) {
			w.in[i] = test_pick(&r, 1, w.spatial == 3 ? 6 : 12);
			w.kernel[i] = test_pick(&r, 1, 4);
			w.stride[i] = test_pick(&r, 1, 3);
			w.dilation[i] = test_pick(&r, 1, 2);
			w.pad_begin[i] = test_pick(&r, 0, w.kernel[i] - 1);
			w.pad_end[i] = test_pick(&r, 0, w.kernel[i]);
		}
		if (!test_window_finish(&w))
			continue;
		done++;
		int64_t in_plane = 1, out_plane = 1;
		for (int i = 0; i < w.spatial; i++)
			in_plane *= w.in[i], out_plane *= w.out[i];
		int64_t n = w.batch, c = w.in_channels;
		float *x = test_random_floats(&r, n * c * in_plane), *xb = test_nan_floats(k_nchwc_floats(n, c, in_plane, 1));
		k_nchwc_from_nchw(n, c, in_plane, 1, x, xb, NULL);
		int64_t ob = k_nchwc_floats(n, c, out_plane, 1);
		for (int m = 0; m < 3; m++) {
			k_pool_mode mode = m == 0 ? K_POOL_MAX : K_POOL_AVG;
			bool include = m == 2;
			float *want = test_nan_floats(n * c * out_plane), *got = test_nan_floats(n * c * out_plane);
			k_pool_ref(&w, mode, include, x, want);
			for (int pieces = 1; pieces <= 3; pieces++) {
				st_exec_ctx ctx = { .n_threads = pieces, .parallel_for = test_pieces_run };
				float *yb = test_nan_floats(ob);
				k_pool_nchwc(&w, mode, include, xb, yb, pieces > 1 ? &ctx : NULL);
				for (int64_t s = 0; s < n; s++)
					for (int64_t ch = c; ch < (c + 15) / 16 * 16; ch++)
						for (int64_t p = 0; p < out_plane; p++)
							cr_assert_eq(yb[((s * ((c + 15) / 16) + ch / 16) * out_plane + p) * 16 + ch % 16], 0.0f,
							             "trial %d: a lane past the channels", trial);
				k_nchwc_to_nchw(n, c, out_plane, 1, yb, got, NULL);
				char why[256];
				if (mode == K_POOL_MAX)
					cr_assert(memcmp(got, want, sizeof *got * (size_t)(n * c * out_plane)) == 0,
					          "trial %d: max differs", trial);
				else
					cr_assert(test_allclose(got, want, n * c * out_plane, 1e-5, why, sizeof why),
					          "trial %d mode %d: %s", trial, m, why);
				free(yb);
			}
			/* The whole plane. */
			float *gw = malloc(sizeof *gw * (size_t)(n * c)), *gb = test_nan_floats(k_nchwc_floats(n, c, 1, 1));
			float *gg = malloc(sizeof *gg * (size_t)(n * c));
			k_global_pool_ref(n * c, in_plane, mode, x, gw);
			k_global_pool_nchwc(n, c, in_plane, mode, xb, gb, NULL);
			for (int64_t ch = c; ch < (c + 15) / 16 * 16; ch++)
				cr_assert_eq(gb[((n - 1) * ((c + 15) / 16) + ch / 16) * 16 + ch % 16], 0.0f);
			k_nchwc_to_nchw(n, c, 1, 1, gb, gg, NULL);
			char why[256];
			cr_assert(test_allclose(gg, gw, n * c, 1e-5, why, sizeof why), "trial %d global: %s", trial, why);
			free(gw), free(gb), free(gg);
			free(want), free(got);
		}
		free(x), free(xb);
	}
	cr_assert_geq(done, 100);
}

/* Plans run blocked: at the AVX-512 level the layers the NCHW rule takes,
 * and from blocked input also 1x1 and strided ones and those on small
 * planes, not 3x3 ones at 28x28; not with groups, not at other levels
 * unless STRATA_BLOCKED says so. */
Test(k_nchwc, plans_take_blocked_layers_where_the_rule_says)
{
	k_window mid = blocked_window(1, 128, 128, 28, 28, 3, 1, 1), big = blocked_window(1, 64, 64, 56, 56, 3, 1, 1);
	k_window small = blocked_window(1, 32, 48, 14, 14, 3, 1, 1), pw = blocked_window(1, 128, 64, 28, 28, 1, 1, 0);
	k_window grouped = mid;
	grouped.groups = 2;
	cr_assert_not(k_conv_blocked_layout(&grouped, K_ISA_AVX512, true));
	if (k_gemm_kernel_of(K_ISA_AVX512) != NULL) {
		cr_assert(k_conv_blocked_layout(&small, K_ISA_AVX512, true));
		cr_assert(k_conv_blocked_layout(&pw, K_ISA_AVX512, true));
		cr_assert_not(k_conv_blocked_layout(&small, K_ISA_AVX512, false));
		cr_assert_not(k_conv_blocked_layout(&pw, K_ISA_AVX512, false));
	}
	cr_assert_not(k_conv_blocked_layout(&mid, K_ISA_AVX512, true));
	cr_assert_not(k_conv_blocked_layout(&big, K_ISA_AVX512, false));
	cr_assert_not(k_conv_blocked_layout(&mid, K_ISA_AVX2, true));
	cr_assert_eq(setenv("STRATA_BLOCKED", "on", 1), 0);
	cr_assert(k_conv_blocked_layout(&big, K_ISA_PORTABLE, false));
	cr_assert_not(k_conv_blocked_layout(&grouped, K_ISA_PORTABLE, false));
	cr_assert_eq(setenv("STRATA_BLOCKED", "off", 1), 0);
	cr_assert_not(k_conv_blocked_layout(&mid, K_ISA_AVX512, true));
	cr_assert_eq(unsetenv("STRATA_BLOCKED"), 0);
}
