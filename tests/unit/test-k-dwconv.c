/* Unit tests: the direct convolution kernels of k-dwconv.c (depthwise and
 * first layer) against k_conv_ref, in every instruction-set variant the
 * processor runs, serially and split over threads; the rule k_conv chooses
 * them by; and the plugin's STRATA_KERNELS=reference switch. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "k-helpers.h"

#include "k-nn.h"

/* ---- ways to run a kernel ---- */

typedef struct run_mode {
	const char *name;
	st_exec_ctx ctx;
	bool serial;
	int slots;
} run_mode;

static const run_mode modes[] = {
	{ "serial", { 0 }, true, 1 },
	{ "3 pieces", { .n_threads = 3, .parallel_for = test_pieces_run }, false, 3 },
	{ "2 pieces, 5 slots", { .n_threads = 2, .parallel_for = test_pieces_run }, false, 5 },
	{ "4 threads", { .n_threads = 4, .parallel_for = test_threads_run }, false, 4 },
};
#define N_MODES (sizeof modes / sizeof modes[0])

/* ---- data ---- */

static int64_t
elements(const k_window *w, bool out)
{
	int64_t n = w->batch * (out ? w->out_channels : w->in_channels);
	for (int i = 0; i < w->spatial; i++)
		n *= out ? w->out[i] : w->in[i];
	return n;
}

static void
window_text(const k_window *w, bool bias, char *buf, size_t size)
{
	int used = snprintf(buf, size, "N%lld C%lld->%lld g%lld%s", (long long)w->batch, (long long)w->in_channels,
	                    (long long)w->out_channels, (long long)w->groups, bias ? " bias" : "");
	for (int i = 0; i < w->spatial && used > 0 && (size_t)used < size; i++)
		used += snprintf(buf + used, size - (size_t)used, " [in %lld out %lld k %lld s %lld d %lld p %lld,%lld]",
		                 (long long)w->in[i], (long long)w->out[i], (long long)w->kernel[i],
		                 (long long)w->stride[i], (long long)w->dilation[i], (long long)w->pad_begin[i],
		                 (long long)w->pad_end[i]);
}


static k_window
window2d(int64_t n, int64_t c, int64_t oc, int64_t groups, int64_t h, int64_t wd, int64_t k, int64_t s,
         int64_t pad)
{
	k_window w;
	cr_assert(test_window2d(&w, n, c, oc, groups, h, wd, k, s, pad));
	return w;
}

/* ---- the check ---- */

static int checked_variants;

/*
 * Runs a window through the direct kernel of every variant this processor
 * has, every way, and compares each result with k_conv_ref (ARCHITECTURE.md's
 * FP32 agreement); the result must not depend on the way, and k_conv must
 * give the same when it takes the direct kernel.
 */
static void
check_direct(test_rng *r, const k_window *w, bool with_bias, k_direct_kind kind)
{
	char text[512];
	window_text(w, with_bias, text, sizeof text);
	cr_assert_eq(k_conv_direct_fits(w), kind, "%s: fits %d, expected %d", text, k_conv_direct_fits(w), kind);
	int64_t kernel = 1;
	for (int i = 0; i < w->spatial; i++)
		kernel *= w->kernel[i];
	int64_t n_out = elements(w, true);
	float *x = test_random_floats(r, elements(w, false));
	float *filters = test_random_floats(r, w->out_channels * (w->in_channels / w->groups) * kernel);
	float *bias = with_bias ? test_random_floats(r, w->out_channels) : NULL;
	float *want = test_nan_floats(n_out), *first = test_nan_floats(n_out);
	k_conv_ref(w, x, filters, bias, want);
	bool have_first = false;
	for (int isa = K_ISA_PORTABLE; isa < K_ISA_COUNT; isa++) {
		if (!k_cpu_isa_supported((k_isa)isa))
			continue;
		checked_variants |= 1 << isa;
		for (size_t m = 0; m < N_MODES; m++) {
			size_t bytes = k_conv_direct_scratch_bytes(w, modes[m].slots);
			unsigned char *scratch = test_scratch_new(bytes);
			float *got = test_nan_floats(n_out);
			bool ran = k_conv_direct_with((k_isa)isa, w, x, filters, bias, got, scratch, modes[m].slots,
			                              modes[m].serial ? NULL : &modes[m].ctx);
			char what[700];
			snprintf(what, sizeof what, "%s, %s, %s", text, k_cpu_isa_name((k_isa)isa), modes[m].name);
			cr_assert(ran, "%s: the direct kernel did not run", what);
			test_scratch_free(scratch, bytes, what);
			char why[256];
			cr_assert(test_allclose(got, want, n_out, 1e-5, why, sizeof why), "%s: %s", what, why);
			/* One variant computes the same whatever the threads. */
			if (m == 0) {
				memcpy(first, got, (size_t)n_out * sizeof *got);
				have_first = true;
			} else {
				cr_assert(have_first && memcmp(first, got, (size_t)n_out * sizeof *got) == 0,
				          "%s: differs from the serial run", what);
			}
			free(got);
		}
	}
	if (k_conv_direct_chosen(w) != K_DIRECT_NONE) {
		size_t bytes = k_conv_scratch_bytes(w, 2);
		unsigned char *scratch = test_scratch_new(bytes);
		float *got = test_nan_floats(n_out);
		st_exec_ctx two = { .n_threads = 2, .parallel_for = test_threads_run };
		k_conv(w, x, filters, bias, got, scratch, 2, &two);
		test_scratch_free(scratch, bytes, text);
		char why[256];
		cr_assert(test_allclose(got, want, n_out, 1e-5, why, sizeof why), "%s, k_conv: %s", text, why);
		free(got);
	}
	free(x);
	free(filters);
	free(bias);
	free(want);
	free(first);
}

/* ---- depthwise ---- */

/* Widths around the vector lengths (4, 8, 16 floats) and the two-vector
 * blocks, 3 x 3 at both strides and pads 0 to 2, and the other sizes. */
Test(k_nn, direct_depthwise_shapes)
{
	test_rng r = { 7 };
	static const int64_t widths[] = { 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 18, 31, 32, 33, 34, 47, 56, 57, 66, 113 };
	for (size_t i = 0; i < sizeof widths / sizeof widths[0]; i++) {
		int64_t wd = widths[i];
		for (int64_t s = 1; s <= 2; s++) {
			for (int64_t pad = 0; pad <= 2; pad++) {
				if (wd + 2 * pad < 3)
					continue;
				k_window w = window2d(1, 3, 3, 3, 5 + wd % 3, wd, 3, s, pad);
				check_direct(&r, &w, (wd + pad) % 2 == 0, K_DIRECT_DEPTHWISE);
			}
		}
	}
	k_window cases[] = {
		window2d(2, 4, 8, 4, 11, 37, 3, 1, 1),   /* multiplier 2, batch 2 */
		window2d(1, 5, 15, 5, 9, 21, 3, 2, 1),   /* multiplier 3 */
		window2d(1, 2, 24, 2, 10, 35, 3, 1, 1),  /* multiplier 12: still k_conv's choice */
		window2d(1, 6, 6, 6, 29, 40, 5, 1, 2),   /* EfficientNet's 5 x 5 */
		window2d(1, 4, 4, 4, 30, 41, 5, 2, 2),
		window2d(1, 3, 3, 3, 23, 71, 7, 1, 3),   /* ConvNeXt's 7 x 7 */
		window2d(1, 3, 3, 3, 17, 35, 7, 2, 3),
		window2d(1, 2, 2, 2, 6, 40, 3, 3, 1),    /* stride 3 */
		window2d(1, 5, 5, 5, 1, 1, 1, 1, 0),     /* 1 x 1 image */
		window2d(1, 5, 5, 5, 1, 1, 3, 1, 1),
		window2d(3, 2, 2, 2, 2, 2, 3, 2, 2),
		/* Planes too large to copy padded (dw_args): masked loads at the
		 * row ends instead. */
		window2d(1, 2, 2, 2, 40, 1700, 5, 1, 2),
		window2d(1, 2, 4, 2, 36, 1900, 7, 2, 3),
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		check_direct(&r, &cases[i], i % 2 == 0, K_DIRECT_DEPTHWISE);
	/* Dilation 2, and pads that differ at the two ends. */
	k_window w = window2d(1, 3, 6, 3, 20, 45, 3, 1, 2);
	w.dilation[0] = w.dilation[1] = 2;
	w.pad_end[1] = 0;
	cr_assert(test_window_finish(&w));
	check_direct(&r, &w, true, K_DIRECT_DEPTHWISE);
	w = window2d(1, 3, 3, 3, 20, 45, 3, 2, 1);
	w.pad_begin[1] = 0;
	w.pad_end[0] = 2;
	cr_assert(test_window_finish(&w));
	check_direct(&r, &w, false, K_DIRECT_DEPTHWISE);
	/* 3-D with one depth that reads only padding: bias alone. */
	k_window deep = { .spatial = 3, .batch = 1, .in_channels = 2, .out_channels = 2, .groups = 2 };
	int64_t in[3] = { 1, 9, 30 }, kernel[3] = { 1, 5, 5 }, stride[3] = { 2, 1, 1 }, pad[3] = { 1, 2, 2 };
	for (int i = 0; i < 3; i++) {
		deep.in[i] = in[i], deep.kernel[i] = kernel[i], deep.stride[i] = stride[i], deep.dilation[i] = 1;
		deep.pad_begin[i] = pad[i], deep.pad_end[i] = i ? pad[i] : 0;
	}
	cr_assert(test_window_finish(&deep));
	check_direct(&r, &deep, true, K_DIRECT_DEPTHWISE);
}

/* 3 x 3 at stride 2 both ways (dw3s2_plane): heights that leave 1 to 4
 * rows for the last group of four, widths around one and two vectors of
 * outputs at every vector length (so that blocks both start and end at the
 * row's ends), pads 0 to 2 and uneven ones, and the MobileNetV2 planes. */
Test(k_nn, direct_depthwise_3x3_stride2)
{
	test_rng r = { 23 };
	static const int64_t widths[] = { 3, 6, 9, 14, 16, 17, 30, 31, 33, 34, 35, 63, 64, 65, 66, 67, 97, 130 };
	for (size_t i = 0; i < sizeof widths / sizeof widths[0]; i++) {
		for (int64_t pad = 0; pad <= 2; pad++) {
			int64_t h = 7 + 2 * (int64_t)(i % 5) + pad;
			k_window w = window2d(1, 2, 2, 2, h, widths[i], 3, 2, pad);
			check_direct(&r, &w, (i + (size_t)pad) % 2 == 0, K_DIRECT_DEPTHWISE);
		}
	}
	k_window cases[] = {
		window2d(1, 3, 3, 3, 112, 112, 3, 2, 1), /* MobileNetV2's planes, fewer channels */
		window2d(1, 3, 3, 3, 56, 56, 3, 2, 1),
		window2d(1, 5, 5, 5, 14, 14, 3, 2, 1),
		window2d(2, 3, 6, 3, 19, 40, 3, 2, 1),   /* multiplier 2, batch 2 */
		window2d(1, 2, 2, 2, 3, 3, 3, 2, 0),     /* one output */
		window2d(1, 2, 2, 2, 1, 1, 3, 2, 1),
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		check_direct(&r, &cases[i], i % 2 == 1, K_DIRECT_DEPTHWISE);
	/* Uneven pads: more at the end than the start, and the other way. */
	for (int t = 0; t < 4; t++) {
		k_window w = window2d(1, 2, 2, 2, 13 + t, 37 + 9 * t, 3, 2, 1);
		w.pad_begin[0] = t % 2 ? 0 : 2;
		w.pad_end[0] = t % 2 ? 2 : 0;
		w.pad_begin[1] = t / 2 ? 0 : 2;
		w.pad_end[1] = t / 2 ? 1 : 0;
		cr_assert(test_window_finish(&w));
		check_direct(&r, &w, t % 2 == 0, K_DIRECT_DEPTHWISE);
	}
}

/* Small planes of many channels (the loops with the channels in the
 * lanes): channel counts around the vector lengths (a last block of 1 to L
 * channels), MobileNetV2's 14 x 14 and 7 x 7 planes, both strides on each
 * axis, dilations, uneven pads, multipliers and batches, then random ones. */
Test(k_nn, direct_depthwise_lanes)
{
	test_rng r = { 0x1a2e5 };
	static const int64_t channels[] = { 8, 9, 15, 16, 17, 24, 31, 33, 40 };
	for (size_t i = 0; i < sizeof channels / sizeof channels[0]; i++) {
		int64_t c = channels[i];
		for (int64_t s = 1; s <= 2; s++) {
			k_window w = window2d(1 + (int64_t)(i % 2), c, c, c, 7 + 7 * (int64_t)(i % 2), 14 - (int64_t)i, 3, s, 1);
			check_direct(&r, &w, (i + (size_t)s) % 2 == 0, K_DIRECT_DEPTHWISE);
		}
	}
	k_window cases[] = {
		window2d(1, 16, 16, 16, 14, 14, 3, 1, 1),
		window2d(1, 16, 16, 16, 7, 7, 3, 1, 1),
		window2d(1, 20, 20, 20, 14, 14, 3, 2, 1),
		window2d(1, 12, 12, 12, 32, 32, 3, 1, 1),  /* the largest plane taken */
		window2d(1, 9, 9, 9, 1, 1, 3, 1, 1),       /* 1 x 1 */
		window2d(1, 9, 9, 9, 5, 5, 5, 1, 2),
		window2d(1, 10, 10, 10, 11, 13, 5, 2, 2),
		window2d(1, 8, 8, 8, 9, 30, 7, 1, 3),
		window2d(1, 8, 8, 8, 17, 19, 7, 2, 3),
		window2d(1, 10, 10, 10, 9, 9, 8, 1, 0),    /* 64 taps */
		window2d(2, 6, 12, 6, 12, 10, 3, 1, 1),    /* multiplier 2 */
		window2d(1, 3, 9, 3, 10, 9, 3, 2, 0),      /* multiplier 3 */
		window2d(1, 8, 8, 8, 6, 6, 1, 2, 0),       /* 1 x 1 filter, stride 2 */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		check_direct(&r, &cases[i], i % 2 == 0, K_DIRECT_DEPTHWISE);
	for (int t = 0; t < 60; t++) {
		int64_t c = test_pick(&r, 8, 40);
		k_window w = { .spatial = 2, .batch = test_pick(&r, 1, 2), .in_channels = c, .out_channels = c,
		               .groups = c };
		do {
			for (int i = 0; i < 2; i++) {
				w.in[i] = test_pick(&r, 1, 30);
				w.kernel[i] = test_pick(&r, 1, 5);
				w.stride[i] = test_pick(&r, 1, 2);
				w.dilation[i] = test_pick(&r, 1, 2);
				w.pad_begin[i] = test_pick(&r, 0, 3);
				w.pad_end[i] = test_pick(&r, 0, 3);
			}
		} while (!test_window_finish(&w) || w.out[0] * w.out[1] > 32 * 32);
		check_direct(&r, &w, t % 2 == 0, K_DIRECT_DEPTHWISE);
	}
}

/* Random depthwise windows of 1 to 3 spatial axes (one group of one
 * channel is a first layer). */
Test(k_nn, direct_depthwise_random)
{
	test_rng r = { 0x5851f42d4c957f2du };
	for (int t = 0; t < 220; t++) {
		k_window w = { .batch = test_pick(&r, 1, 3), .groups = test_pick(&r, 2, 5) };
		int shape = (int)test_pick(&r, 0, 9);
		w.spatial = shape == 0 ? 1 : shape == 1 ? 3 : 2;
		w.in_channels = w.groups;
		w.out_channels = w.groups * test_pick(&r, 1, 3);
		do {
			for (int i = 0; i < w.spatial; i++) {
				int64_t most = w.spatial == 3 ? 7 : i + 1 == w.spatial ? 70 : 20;
				w.in[i] = test_pick(&r, 1, most);
				w.kernel[i] = test_pick(&r, 1, w.spatial == 3 ? 3 : 7);
				w.stride[i] = test_pick(&r, 1, 3);
				w.dilation[i] = test_pick(&r, 1, 2);
				w.pad_begin[i] = test_pick(&r, 0, 2);
				w.pad_end[i] = test_pick(&r, 0, 2);
			}
		} while (!test_window_finish(&w));
		check_direct(&r, &w, t % 3 != 0, K_DIRECT_DEPTHWISE);
	}
}

/* ---- a few input channels ---- */

Test(k_nn, direct_few_channels_shapes)
{
	test_rng r = { 11 };
	k_window cases[] = {
		window2d(1, 3, 16, 1, 63, 65, 7, 2, 3),  /* a ResNet stem, smaller */
		window2d(1, 3, 8, 1, 224, 224, 3, 2, 1), /* a MobileNet stem: several bands */
		window2d(1, 3, 13, 1, 40, 37, 3, 1, 1),  /* 8 + 4 + 1 output channels */
		window2d(1, 1, 32, 1, 28, 28, 3, 1, 1),  /* a grey image */
		window2d(4, 1, 6, 1, 28, 28, 5, 1, 0),   /* LeNet, batch 4 */
		window2d(2, 4, 9, 1, 17, 15, 5, 2, 2),
		window2d(1, 2, 3, 1, 1, 1, 1, 1, 0),     /* 1 x 1 image */
		window2d(1, 2, 5, 1, 3, 5, 3, 2, 2),
		window2d(1, 3, 24, 1, 9, 100, 3, 1, 0),  /* long rows: two-vector blocks */
		window2d(1, 3, 37, 1, 13, 75, 3, 2, 1),  /* stride 2: 16 + 16 + 4 + 1 channels */
		window2d(1, 3, 64, 1, 9, 224, 3, 2, 0),  /* SqueezeNet's stem, fewer rows: 111 wide */
		window2d(2, 2, 33, 1, 8, 21, 3, 2, 1),
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		check_direct(&r, &cases[i], i % 2 == 0, K_DIRECT_FEW_CHANNELS);
	/* Stride 2 across and 1 down, dilation 2, uneven pads. */
	k_window w = window2d(1, 3, 10, 1, 21, 33, 3, 1, 1);
	w.stride[1] = 2;
	w.dilation[0] = w.dilation[1] = 2;
	w.pad_begin[1] = 3;
	w.pad_end[0] = 0;
	cr_assert(test_window_finish(&w));
	check_direct(&r, &w, true, K_DIRECT_FEW_CHANNELS);
}

/* Windows the direct loops run take their weights as they are:
 * k_conv_packed_bytes says 0, and k_conv_pack writes nothing (it once
 * packed them for the GEMM path anyway, past an empty buffer). */
Test(k_nn, direct_windows_pack_nothing)
{
	test_rng r = { 5 };
	k_window cases[] = {
		window2d(1, 3, 64, 1, 224, 224, 7, 2, 3), /* ResNet's stem */
		window2d(1, 3, 64, 1, 224, 224, 3, 2, 0), /* SqueezeNet's */
		window2d(1, 32, 32, 32, 56, 56, 3, 1, 1), /* depthwise */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		k_window *w = &cases[i];
		cr_assert_neq(k_conv_direct_chosen(w), K_DIRECT_NONE, "case %zu", i);
		cr_assert_eq(k_conv_packed_bytes(w), 0, "case %zu", i);
		float *weights = test_random_floats(&r, w->out_channels * w->in_channels / w->groups * w->kernel[0] * w->kernel[1]);
		unsigned char *packed = test_scratch_new(0);
		k_conv_pack(w, weights, packed);
		test_scratch_free(packed, 0, "k_conv_pack of a direct window");
		free(weights);
	}
}

Test(k_nn, direct_few_channels_random)
{
	test_rng r = { 0x14057b7ef767814fu };
	for (int t = 0; t < 160; t++) {
		k_window w = { .batch = test_pick(&r, 1, 3), .groups = 1, .in_channels = test_pick(&r, 1, 4),
		               .out_channels = test_pick(&r, 1, 20) };
		w.spatial = test_pick(&r, 0, 5) == 0 ? 1 : 2;
		do {
			for (int i = 0; i < w.spatial; i++) {
				w.in[i] = test_pick(&r, 1, i + 1 == w.spatial ? 80 : 30);
				w.kernel[i] = test_pick(&r, 1, 7);
				w.stride[i] = test_pick(&r, 1, 2);
				w.dilation[i] = test_pick(&r, 1, 2);
				w.pad_begin[i] = test_pick(&r, 0, 3);
				w.pad_end[i] = test_pick(&r, 0, 3);
			}
		} while (!test_window_finish(&w));
		check_direct(&r, &w, t % 3 != 0, K_DIRECT_FEW_CHANNELS);
	}
	/* Every variant this processor has was checked, the portable one at least. */
	cr_assert(checked_variants & (1 << K_ISA_PORTABLE));
	for (int isa = K_ISA_PORTABLE; isa < K_ISA_COUNT; isa++) {
		if (k_cpu_isa_supported((k_isa)isa))
			cr_assert(checked_variants & (1 << isa), "variant %s not checked", k_cpu_isa_name((k_isa)isa));
	}
}

/* ---- the rule ---- */

Test(k_nn, direct_rule)
{
	k_window dw = window2d(1, 144, 144, 144, 56, 56, 3, 1, 1);
	cr_assert_eq(k_conv_direct_chosen(&dw), K_DIRECT_DEPTHWISE);
	k_window eight = window2d(1, 4, 32, 4, 20, 20, 3, 1, 1); /* 8 outputs per input channel */
	cr_assert_eq(k_conv_direct_chosen(&eight), K_DIRECT_DEPTHWISE);
	k_window wide = window2d(1, 4, 64, 4, 20, 20, 3, 1, 1); /* 16 outputs per input channel */
	cr_assert_eq(k_conv_direct_fits(&wide), K_DIRECT_DEPTHWISE);
	cr_assert_eq(k_conv_direct_chosen(&wide), K_DIRECT_NONE);
	k_window stem = window2d(1, 3, 64, 1, 224, 224, 7, 2, 3);
	cr_assert_eq(k_conv_direct_chosen(&stem), K_DIRECT_FEW_CHANNELS);
	k_window grey = window2d(1, 1, 32, 1, 28, 28, 3, 1, 1);
	cr_assert_eq(k_conv_direct_chosen(&grey), K_DIRECT_FEW_CHANNELS);
	k_window dense = window2d(1, 64, 64, 1, 56, 56, 3, 1, 1);
	cr_assert_eq(k_conv_direct_fits(&dense), K_DIRECT_NONE);
	cr_assert_eq(k_conv_direct_chosen(&dense), K_DIRECT_NONE);
	k_window five = window2d(1, 5, 64, 1, 56, 56, 3, 1, 1);
	cr_assert_eq(k_conv_direct_fits(&five), K_DIRECT_NONE);
	k_window stride3 = window2d(1, 3, 16, 1, 30, 30, 3, 3, 1);
	cr_assert_eq(k_conv_direct_fits(&stride3), K_DIRECT_NONE);
	/* One depth, but padded in front: not a 2-D first layer. */
	k_window deep = { .spatial = 3, .batch = 1, .in_channels = 3, .out_channels = 8, .groups = 1,
	                  .in = { 1, 8, 8 }, .out = { 1, 8, 8 }, .kernel = { 1, 3, 3 }, .stride = { 2, 1, 1 },
	                  .dilation = { 1, 1, 1 }, .pad_begin = { 1, 1, 1 }, .pad_end = { 0, 1, 1 } };
	cr_assert_eq(k_conv_direct_fits(&deep), K_DIRECT_NONE);
	cr_assert_eq(k_conv_direct_scratch_bytes(&dw, 4), 0);
	cr_assert_gt(k_conv_direct_scratch_bytes(&stem, 2), 0);
	cr_assert_eq(k_conv_direct_with(K_ISA_PORTABLE, &dense, NULL, NULL, NULL, NULL, NULL, 1, NULL), false);
}

/* ---- the plugin ---- */

/* A depthwise layer through the std plugin: STRATA_KERNELS=reference gives
 * k_conv_ref's result to the bit, the fast path one within the tolerance. */
Test(k_nn, direct_layer_reference_switch)
{
	test_rng r = { 5 };
	int64_t c = 6, h = 13, wd = 19;
	st_tensor in = { .shape = { .dtype = ST_DTYPE_FLOAT32, .rank = 4, .dims = { 1, c, h, wd } },
	                 .layout = ST_LAYOUT_NCHW };
	in.data = test_random_floats(&r, c * h * wd);
	float *filters = test_random_floats(&r, c * 9), *bias = test_random_floats(&r, c);
	st_tensor weights[2] = {
		{ .shape = { .dtype = ST_DTYPE_FLOAT32, .rank = 4, .dims = { c, 1, 3, 3 } }, .data = filters,
		  .layout = ST_LAYOUT_NCHW },
		{ .shape = { .dtype = ST_DTYPE_FLOAT32, .rank = 1, .dims = { c } }, .data = bias,
		  .layout = ST_LAYOUT_NCHW },
	};
	k_window w = window2d(1, c, c, c, h, wd, 3, 1, 1);
	int64_t n = elements(&w, true);
	float *want = test_nan_floats(n);
	k_conv_ref(&w, in.data, filters, bias, want);
	for (int reference = 0; reference < 2; reference++) {
		if (reference)
			setenv("STRATA_KERNELS", "reference", 1);
		test_layer res;
		int rc = test_layer_run("convolution", "num_output=6 kernel=3 pads=1 groups=6 bias=true", 1, &in, 2,
		                        weights, &res);
		unsetenv("STRATA_KERNELS");
		cr_assert_eq(rc, 0, "%s", res.messages);
		cr_assert_eq(st_shape_elements(&res.outputs[0].shape), n);
		if (reference) {
			cr_assert(memcmp(res.outputs[0].data, want, (size_t)n * sizeof *want) == 0,
			          "STRATA_KERNELS=reference did not run k_conv_ref");
		} else {
			char why[256];
			cr_assert(test_allclose(res.outputs[0].data, want, n, 1e-5, why, sizeof why), "%s", why);
		}
		test_layer_free(&res);
	}
	free(in.data);
	free(filters);
	free(bias);
	free(want);
}

/* ---- a first layer and its max pooling, band by band ---- */

/* The max pooling over w's output: kernel k, stride s, pads pb and pe,
 * floor or ceil sizes (a ceil window starting in the end padding
 * dropped, as std's pooling sizes them). */
static k_window
pool_over(const k_window *w, int64_t k, int64_t s, int64_t pb, int64_t pe, bool ceil_mode)
{
	k_window p = { .spatial = 2, .batch = w->batch, .in_channels = w->out_channels,
		       .out_channels = w->out_channels, .groups = 1 };
	for (int i = 0; i < 2; i++) {
		p.in[i] = w->out[i];
		p.kernel[i] = k, p.stride[i] = s, p.dilation[i] = 1;
		p.pad_begin[i] = pb, p.pad_end[i] = pe;
		int64_t room = p.in[i] + pb + pe - k;
		p.out[i] = room < 0 ? 0 : room / s + 1;
		if (ceil_mode && room >= 0 && room % s != 0 && p.out[i] * s < p.in[i] + pb)
			p.out[i]++;
	}
	return p;
}

/*
 * Convolution w, post and max pooling p through k_conv_pool_direct_with,
 * every variant and way: to the bit what the direct kernel and then k_pool
 * give (the pooling only picks values, and each convolution output is the
 * same sum in the same order whichever band computes it), and within
 * the FP32 agreement of k_conv_ref, the activation and k_pool_ref.
 */
static void
check_conv_pool(test_rng *r, const k_window *w, const k_window *p, const k_post *post)
{
	char text[512], ptext[256];
	window_text(w, true, text, sizeof text);
	window_text(p, false, ptext, sizeof ptext);
	cr_assert(k_conv_pool_fits(w, p, K_POOL_MAX), "%s, pool %s: does not fit", text, ptext);
	cr_assert_not(k_conv_pool_fits(w, p, K_POOL_AVG));
	int64_t n_conv = elements(w, true), n_out = elements(p, true);
	float *x = test_random_floats(r, elements(w, false));
	float *filters = test_random_floats(r, w->out_channels * w->in_channels * w->kernel[0] * w->kernel[1]);
	float *bias = test_random_floats(r, w->out_channels);
	float *conv = test_nan_floats(n_conv), *want = test_nan_floats(n_out);
	k_conv_ref(w, x, filters, bias, conv);
	k_post_planes(post, conv, n_conv, 0, 1);
	k_pool_ref(p, K_POOL_MAX, false, conv, want);
	for (int isa = K_ISA_PORTABLE; isa < K_ISA_COUNT; isa++) {
		if (!k_cpu_isa_supported((k_isa)isa))
			continue;
		/* The direct kernel and k_pool, one after the other. */
		size_t dbytes = k_conv_direct_scratch_bytes(w, 1);
		unsigned char *dscratch = test_scratch_new(dbytes);
		float *apart = test_nan_floats(n_out);
		cr_assert(k_conv_direct_post_with((k_isa)isa, w, x, filters, bias, conv, dscratch, 1, post, NULL));
		test_scratch_free(dscratch, dbytes, text);
		k_pool(p, K_POOL_MAX, false, conv, apart, NULL);
		for (size_t m = 0; m < N_MODES; m++) {
			size_t bytes = k_conv_pool_scratch_bytes(w, p, modes[m].slots);
			cr_assert_gt(bytes, 0);
			unsigned char *scratch = test_scratch_new(bytes);
			float *got = test_nan_floats(n_out);
			bool ran = k_conv_pool_direct_with((k_isa)isa, w, p, x, filters, bias, got, scratch, modes[m].slots,
			                                   post, modes[m].serial ? NULL : &modes[m].ctx);
			char what[900];
			snprintf(what, sizeof what, "%s, pool %s, post %d, %s, %s", text, ptext, post ? (int)post->act : -1,
			         k_cpu_isa_name((k_isa)isa), modes[m].name);
			cr_assert(ran, "%s: did not run", what);
			test_scratch_free(scratch, bytes, what);
			char why[256];
			cr_assert(test_allclose(got, want, n_out, 1e-5, why, sizeof why), "%s: %s", what, why);
			for (int64_t i = 0; i < n_out; i++)
				cr_assert(memcmp(&got[i], &apart[i], sizeof got[i]) == 0,
				          "%s: element %lld is %.9g, the kernels one after the other give %.9g", what,
				          (long long)i, got[i], apart[i]);
			free(got);
		}
		free(apart);
	}
	free(x), free(filters), free(bias), free(conv), free(want);
}

Test(k_nn, conv_pool_networks)
{
	test_rng r = { 0x5eed0f57e3u };
	const k_post relu = { .on = true, .act = K_ACT_RELU };
	/* ResNet's stem and pooling (7x7/2 pad 3, 3x3/2 pad 1) and
	 * SqueezeNet's (3x3/2, 3x3/2 ceil), on smaller images. */
	k_window resnet = window2d(1, 3, 24, 1, 64, 58, 7, 2, 3);
	k_window rp = pool_over(&resnet, 3, 2, 1, 1, false);
	check_conv_pool(&r, &resnet, &rp, &relu);
	k_window squeeze = window2d(2, 3, 16, 1, 57, 61, 3, 2, 0);
	k_window sp = pool_over(&squeeze, 3, 2, 0, 0, true);
	check_conv_pool(&r, &squeeze, &sp, &relu);
	/* The real sizes, which take several bands per thread. */
	k_window big = window2d(1, 3, 64, 1, 224, 224, 7, 2, 3);
	k_window bp = pool_over(&big, 3, 2, 1, 1, false);
	check_conv_pool(&r, &big, &bp, NULL);
	/* An average pooling, or a convolution the first-layer kernel does
	 * not take, does not fit. */
	cr_assert_not(k_conv_pool_fits(&resnet, &rp, K_POOL_AVG));
	k_window deep = window2d(1, 16, 16, 1, 20, 20, 3, 1, 1);
	k_window dp = pool_over(&deep, 2, 2, 0, 0, false);
	cr_assert_not(k_conv_pool_fits(&deep, &dp, K_POOL_MAX));
	cr_assert_eq(k_conv_pool_scratch_bytes(&deep, &dp, 2), 0);
	/* A window wholly in the padding: not taken. */
	k_window edge = pool_over(&resnet, 2, 2, 1, 1, false);
	edge.pad_begin[0] = 2, edge.kernel[0] = 2;
	cr_assert_not(k_conv_pool_fits(&resnet, &edge, K_POOL_MAX));
}

Test(k_nn, conv_pool_random)
{
	test_rng r = { 0xc0417b00u };
	const k_post posts[] = {
		{ .on = true, .act = K_ACT_RELU },
		{ .on = true, .act = K_ACT_CLIP, .a = -0.2f, .b = 0.3f },
		{ .on = false },
	};
	int done = 0;
	for (int t = 0; done < 40 && t < 400; t++) {
		k_window w;
		if (!test_window2d(&w, test_pick(&r, 1, 2), test_pick(&r, 1, 4), test_pick(&r, 1, 20), 1,
		                   test_pick(&r, 4, 40), test_pick(&r, 4, 70), test_pick(&r, 1, 7), test_pick(&r, 1, 2),
		                   test_pick(&r, 0, 3)))
			continue;
		int64_t k = test_pick(&r, 1, 4), s = test_pick(&r, 1, 3);
		k_window p = pool_over(&w, k, s, test_pick(&r, 0, k - 1), test_pick(&r, 0, k - 1), test_pick(&r, 0, 1));
		if (p.out[0] < 1 || p.out[1] < 1 || k_conv_direct_chosen(&w) != K_DIRECT_FEW_CHANNELS ||
		    !k_conv_pool_fits(&w, &p, K_POOL_MAX))
			continue;
		check_conv_pool(&r, &w, &p, done % 4 == 3 ? NULL : &posts[done % 3]);
		done++;
	}
	cr_assert_geq(done, 40);
}
