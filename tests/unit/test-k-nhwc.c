/* Unit tests: the channels-last kernels of k-nhwc.c (depthwise convolution,
 * global pooling) against the NCHW references on transposed data, at
 * every SIMD level this machine runs, serially and split over threads,
 * with fused activations against unfused ones. */
#include "config.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "helpers.h"
#include "k-helpers.h"

#include "k-nhwc.h"

/* ---- levels and threads ---- */


/* Calls split into two or more pieces, so that the tests can tell that
 * the threaded runs did split. */
static int split_runs;

static void
count_threads_run(const st_exec_ctx *ctx, int64_t n, int64_t grain, st_range_fn fn, void *arg)
{
	if (n >= 2 * grain)
		split_runs++;
	test_threads_run(ctx, n, grain, fn, arg);
}

typedef struct run_mode {
	const char *name;
	st_exec_ctx ctx;
	bool serial;
} run_mode;

static const run_mode modes[] = {
	{ "serial", { 0 }, true },
	{ "2 threads", { .n_threads = 2, .parallel_for = count_threads_run }, false },
	{ "3 pieces", { .n_threads = 3, .parallel_for = test_pieces_run }, false },
};
#define N_MODES (sizeof modes / sizeof modes[0])

/* ---- memory that ends at a page nobody may touch ---- */

/* n floats whose last one is followed by an inaccessible page, so that a
 * kernel reading or writing past the end crashes the test. Free with
 * guarded_free. */
typedef struct guarded {
	float *p;
	void *map;
	size_t bytes;
} guarded;

static guarded
guarded_new(int64_t n)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), data = (size_t)n * sizeof(float);
	size_t bytes = (data + page - 1) / page * page + page;
	guarded g = { NULL, mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), bytes };
	cr_assert_neq(g.map, MAP_FAILED);
	unsigned char *end = (unsigned char *)g.map + bytes - page;
	cr_assert_eq(mprotect(end, page, PROT_NONE), 0);
	g.p = (float *)(void *)(end - data);
	return g;
}

static void
guarded_free(guarded *g)
{
	munmap(g->map, g->bytes);
}

/* ---- layouts ---- */

/* ---- windows ---- */

static void
window_text(const k_window *w, bool bias, char *buf, size_t size)
{
	snprintf(buf, size,
	         "N%lld C%lld%s in %lldx%lld out %lldx%lld k %lldx%lld s %lldx%lld d %lldx%lld pad %lld,%lld/%lld,%lld",
	         (long long)w->batch, (long long)w->in_channels, bias ? " bias" : "", (long long)w->in[0],
	         (long long)w->in[1], (long long)w->out[0], (long long)w->out[1], (long long)w->kernel[0],
	         (long long)w->kernel[1], (long long)w->stride[0], (long long)w->stride[1], (long long)w->dilation[0],
	         (long long)w->dilation[1], (long long)w->pad_begin[0], (long long)w->pad_begin[1],
	         (long long)w->pad_end[0], (long long)w->pad_end[1]);
}


/* A depthwise window, square kernel, stride and padding. */
static k_window
depthwise(int64_t n, int64_t c, int64_t h, int64_t wd, int64_t k, int64_t s, int64_t pad)
{
	k_window w;
	cr_assert(test_window2d(&w, n, c, c, c, h, wd, k, s, pad));
	return w;
}

/* A random depthwise window of c channels on planes of up to 23 x 19. */
static k_window
random_window(test_rng *r, int64_t c)
{
	k_window w = { .spatial = 2, .batch = test_pick(r, 1, 2), .in_channels = c, .out_channels = c, .groups = c };
	do {
		for (int i = 0; i < 2; i++) {
			w.in[i] = test_pick(r, 1, i ? 19 : 23);
			w.kernel[i] = test_pick(r, 1, 7);
			w.stride[i] = test_pick(r, 1, 3);
			w.dilation[i] = test_pick(r, 1, 2);
			w.pad_begin[i] = test_pick(r, 0, 3);
			w.pad_end[i] = test_pick(r, 0, 3);
		}
	} while (!test_window_finish(&w));
	return w;
}

/* ---- the depthwise check ---- */

static int checked_levels;

static void check_dw_half(test_rng *r, const k_window *w, bool with_bias, int post_kind);

/*
 * Runs window w through k_dwconv_nhwc at every level, every way, on random
 * data (x and bias ending at an inaccessible page, y too), and compares
 * with k_conv_ref on the NCHW transpose (ARCHITECTURE.md's FP32 agreement,
 * as the other kernel tests); k_dwconv_nhwc_ref must give k_conv_ref's bits,
 * and each level the same bits however the rows are split.
 */
static void
check_dw(test_rng *r, const k_window *w, bool with_bias)
{
	char text[256];
	window_text(w, with_bias, text, sizeof text);
	cr_assert(k_dwconv_nhwc_fits(w), "%s: does not fit", text);
	int64_t c = w->in_channels, in_q = w->in[0] * w->in[1], out_q = w->out[0] * w->out[1];
	int64_t taps = w->kernel[0] * w->kernel[1], n_in = w->batch * c * in_q, n_out = w->batch * c * out_q;
	float *x_nchw = test_random_floats(r, n_in), *filter = test_random_floats(r, c * taps);
	float *bias_data = test_random_floats(r, c);
	float *want_nchw = test_nan_floats(n_out), *want = test_nan_floats(n_out), *ref = test_nan_floats(n_out);
	guarded x = guarded_new(n_in), bias = guarded_new(c), packed = guarded_new((int64_t)k_dwconv_nhwc_packed_floats(w));
	guarded y = guarded_new(n_out);
	test_to_nhwc(w->batch, c, in_q, x_nchw, x.p);
	memcpy(bias.p, bias_data, (size_t)c * sizeof(float));
	const float *b = with_bias ? bias.p : NULL;

	k_conv_ref(w, x_nchw, filter, with_bias ? bias_data : NULL, want_nchw);
	test_to_nhwc(w->batch, c, out_q, want_nchw, want);
	k_dwconv_nhwc_ref(w, x.p, filter, b, ref);
	cr_assert(memcmp(ref, want, (size_t)n_out * sizeof *ref) == 0, "%s: k_dwconv_nhwc_ref differs from k_conv_ref",
	          text);
	k_dwconv_nhwc_pack(w, filter, packed.p);

	float *first = test_nan_floats(n_out);
	k_isa levels[K_ISA_COUNT];
	int n_levels = test_isa_levels(levels);
	for (int l = 0; l < n_levels; l++) {
		cr_assert_eq(k_cpu_isa_force(levels[l]), 0);
		checked_levels |= 1 << levels[l];
		for (size_t m = 0; m < N_MODES; m++) {
			for (int64_t i = 0; i < n_out; i++)
				y.p[i] = NAN;
			k_dwconv_nhwc(w, x.p, packed.p, b, y.p, NULL, modes[m].serial ? NULL : &modes[m].ctx);
			char what[400], why[256];
			snprintf(what, sizeof what, "%s, %s, %s", text, k_cpu_isa_name(levels[l]), modes[m].name);
			cr_assert(test_allclose(y.p, want, n_out, 1e-5, why, sizeof why), "%s: %s", what, why);
			if (m == 0)
				memcpy(first, y.p, (size_t)n_out * sizeof *first);
			else
				cr_assert(memcmp(first, y.p, (size_t)n_out * sizeof *first) == 0,
				          "%s: differs from the serial run", what);
		}
	}
	k_cpu_isa_force(k_cpu_isa_best());
	guarded_free(&x);
	guarded_free(&bias);
	guarded_free(&packed);
	guarded_free(&y);
	free(x_nchw);
	free(filter);
	free(bias_data);
	free(want_nchw);
	free(want);
	free(ref);
	free(first);
	static int calls;
	calls++;
	check_dw_half(r, w, with_bias, calls);
}

/* n float16 values ending at an inaccessible page (in a guarded block of
 * floats, freed with guarded_free). */
static uint16_t *
guarded_halves(guarded *g, int64_t n)
{
	*g = guarded_new((n + 1) / 2);
	return (uint16_t *)(void *)((char *)g->p + (size_t)((n + 1) / 2) * sizeof(float)) - n;
}

/*
 * k_dwconv_nhwc_half against k_dwconv_nhwc: on input a half holds exactly,
 * its output is the float one narrowed, to the bit, at every level and
 * every way of splitting (bands of rows), with a clamp or another
 * activation; and the scratch it asks for is enough.
 */
static void
check_dw_half(test_rng *r, const k_window *w, bool with_bias, int post_kind)
{
	char text[256];
	window_text(w, with_bias, text, sizeof text);
	static const k_post posts[] = {
		{ .on = false },
		{ .on = true, .act = K_ACT_CLIP, .a = 0.0f, .b = 0.5f },
		{ .on = true, .act = K_ACT_LEAKY_RELU, .a = 0.125f },
	};
	const k_post *post = &posts[post_kind % 3];
	int64_t c = w->in_channels, n_in = w->batch * c * w->in[0] * w->in[1];
	int64_t n_out = w->batch * c * w->out[0] * w->out[1];
	float *x = test_random_floats(r, n_in), *filter = test_random_floats(r, c * w->kernel[0] * w->kernel[1]);
	float *bias = with_bias ? test_random_floats(r, c) : NULL, *y = test_nan_floats(n_out);
	float *packed = aligned_alloc(64, k_dwconv_nhwc_packed_floats(w) * sizeof(float));
	uint16_t *want = malloc(sizeof *want * (size_t)n_out);
	guarded gx, gy;
	uint16_t *xh = guarded_halves(&gx, n_in), *yh = guarded_halves(&gy, n_out);
	cr_assert(packed && want);
	k_float_to_half_array(x, xh, n_in);
	k_half_to_float_array(xh, x, n_in);
	k_dwconv_nhwc_pack(w, filter, packed);
	k_isa levels[K_ISA_COUNT];
	int n_levels = test_isa_levels(levels);
	for (int l = 0; l < n_levels; l++) {
		cr_assert_eq(k_cpu_isa_force(levels[l]), 0);
		k_dwconv_nhwc(w, x, packed, bias, y, post, NULL);
		k_float_to_half_array(y, want, n_out);
		for (size_t m = 0; m < N_MODES; m++) {
			int slots = modes[m].serial ? 1 : modes[m].ctx.n_threads;
			size_t sb = k_dwconv_nhwc_half_scratch_bytes(w, slots);
			unsigned char *scratch = test_scratch_new(sb);
			memset(yh, 0x7f, sizeof *yh * (size_t)n_out);
			k_dwconv_nhwc_half(w, xh, packed, bias, yh, post, scratch, slots,
			                   modes[m].serial ? NULL : &modes[m].ctx);
			char what[400];
			snprintf(what, sizeof what, "%s, half, post %d, %s, %s", text, post_kind % 3,
			         k_cpu_isa_name(levels[l]), modes[m].name);
			test_scratch_free(scratch, sb, what);
			for (int64_t e = 0; e < n_out; e++)
				cr_assert_eq(yh[e], want[e], "%s: element %lld is 0x%04x, the narrowed float 0x%04x", what,
				             (long long)e, yh[e], want[e]);
		}
	}
	k_cpu_isa_force(k_cpu_isa_best());
	guarded_free(&gx);
	guarded_free(&gy);
	free(x), free(filter), free(bias), free(y), free(packed), free(want);
}

/* ---- depthwise ---- */

Test(k_nhwc, dwconv_fits_and_packing)
{
	k_window w = depthwise(1, 5, 9, 7, 3, 1, 1);
	cr_assert(k_dwconv_nhwc_fits(&w));
	k_window multiplier = w;
	multiplier.out_channels = 10;
	cr_assert_not(k_dwconv_nhwc_fits(&multiplier));
	k_window grouped = w;
	grouped.groups = 1;
	cr_assert_not(k_dwconv_nhwc_fits(&grouped));
	k_window flat = w;
	flat.spatial = 1;
	cr_assert_not(k_dwconv_nhwc_fits(&flat));
	k_window negative = w;
	negative.pad_begin[1] = -1;
	cr_assert_not(k_dwconv_nhwc_fits(&negative));
	k_window empty = w;
	empty.batch = 0;
	cr_assert_not(k_dwconv_nhwc_fits(&empty));

	/* [kh][kw][C rounded up to 16], the rounding zero. */
	k_window odd = depthwise(1, 17, 6, 6, 1, 1, 0);
	odd.kernel[0] = 2;
	odd.kernel[1] = 3;
	cr_assert(test_window_finish(&odd));
	cr_assert_eq(k_dwconv_nhwc_packed_floats(&odd), 2 * 3 * 32);
	float filter[17 * 6], packed[2 * 3 * 32];
	for (int i = 0; i < 17 * 6; i++)
		filter[i] = (float)(i + 1);
	memset(packed, 0xff, sizeof packed);
	k_dwconv_nhwc_pack(&odd, filter, packed);
	for (int t = 0; t < 6; t++) {
		for (int ch = 0; ch < 32; ch++) {
			float want = ch < 17 ? filter[ch * 6 + t] : 0.0f;
			cr_assert_eq(packed[t * 32 + ch], want, "tap %d channel %d: %g, expected %g", t, ch, packed[t * 32 + ch],
			             want);
		}
	}
}

/* Channel counts around the vector lengths, each with windows chosen to
 * reach every path: 3 x 3 at strides 1 and 2 (pairs of rows, edges,
 * planes of one row or column), other sizes, dilations, uneven pads. */
Test(k_nhwc, dwconv_channels)
{
	test_rng r = { 0x6e6877 };
	static const int64_t channels[] = { 1, 3, 4, 7, 8, 15, 16, 17, 31, 33, 96, 144 };
	for (size_t i = 0; i < sizeof channels / sizeof channels[0]; i++) {
		int64_t c = channels[i];
		k_window cases[] = {
			depthwise(1, c, 14, 14, 3, 1, 1),
			depthwise(2, c, 9, 11, 3, 2, 1),
			depthwise(1, c, 8, 17, 3, 1, 0),
			depthwise(1, c, 7, 9, 3, 2, 0),
			depthwise(1, c, 1, 1, 3, 1, 1),
			depthwise(1, c, 1, 13, 3, 1, 1),
			depthwise(1, c, 12, 1, 3, 2, 1),
			depthwise(1, c, 13, 10, 5, 1, 2),
			depthwise(2, c, 11, 12, 7, 2, 3),
			depthwise(1, c, 6, 5, 1, 1, 0),
			depthwise(1, c, 9, 9, 3, 3, 1),
		};
		for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
			check_dw(&r, &cases[k], (i + k) % 3 != 0);
		/* Non-square filters, dilation, pads that differ at the two ends. */
		k_window w = depthwise(1 + (int64_t)(i % 2), c, 15, 12, 3, 1, 1);
		w.kernel[0] = 2;
		w.kernel[1] = 5;
		w.dilation[0] = 2;
		w.pad_begin[0] = 3;
		w.pad_end[0] = 0;
		w.pad_begin[1] = 0;
		w.pad_end[1] = 2;
		w.stride[1] = 2;
		cr_assert(test_window_finish(&w));
		check_dw(&r, &w, true);
		/* 3 x 3 with row dilation (the 3 x 3 loops) and column dilation
		 * (the general ones). */
		w = depthwise(1, c, 13, 11, 3, 1, 2);
		w.dilation[0] = 2;
		cr_assert(test_window_finish(&w));
		check_dw(&r, &w, false);
		w.dilation[0] = 1;
		w.dilation[1] = 2;
		cr_assert(test_window_finish(&w));
		check_dw(&r, &w, true);
		/* More padding than input: rows of bias alone. */
		w = depthwise(1, c, 2, 3, 3, 1, 3);
		check_dw(&r, &w, true);
	}
}

Test(k_nhwc, dwconv_random)
{
	test_rng r = { 0x2545f4914f6cdd1du };
	static const int64_t channels[] = { 1, 3, 4, 7, 8, 15, 16, 17, 31, 33, 96, 144 };
	for (int t = 0; t < 150; t++) {
		k_window w = random_window(&r, channels[t % 12]);
		check_dw(&r, &w, t % 4 != 0);
	}
}

/* MobileNetV2's depthwise layers, exactly (3 x 3, pad 1). */
Test(k_nhwc, dwconv_mobilenet_v2)
{
	test_rng r = { 0x4d4e5632 };
	k_window cases[] = {
		depthwise(1, 32, 112, 112, 3, 1, 1),
		depthwise(1, 96, 112, 112, 3, 2, 1),
		depthwise(1, 144, 56, 56, 3, 1, 1),
		depthwise(1, 144, 56, 56, 3, 2, 1),
		depthwise(1, 192, 28, 28, 3, 1, 1),
		depthwise(1, 192, 28, 28, 3, 2, 1),
		depthwise(1, 384, 14, 14, 3, 1, 1),
		depthwise(1, 576, 14, 14, 3, 1, 1),
		depthwise(1, 576, 14, 14, 3, 2, 1),
		depthwise(1, 960, 7, 7, 3, 1, 1),
		depthwise(2, 960, 7, 7, 3, 1, 1),
	};
	split_runs = 0;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		check_dw(&r, &cases[i], true);
	/* The two-thread runs did split the rows. */
	cr_assert_gt(split_runs, 0);
}

/* Channel counts that are multiples of 256 go through the strip, where it
 * fits: 3 x 3 and other filters, strides, dilations, planes wider than the
 * strip (read in place at 16 lanes), several samples. */
Test(k_nhwc, dwconv_strip)
{
	test_rng r = { 0x5715 };
	k_window cases[] = {
		depthwise(1, 256, 14, 14, 3, 1, 1),
		depthwise(2, 256, 9, 10, 3, 2, 1),
		depthwise(1, 512, 7, 7, 3, 1, 1),
		depthwise(1, 256, 1, 1, 3, 1, 1),
		depthwise(1, 256, 11, 13, 5, 2, 2),
		depthwise(2, 256, 8, 9, 1, 1, 0),
		depthwise(1, 256, 3, 200, 3, 1, 1),
		depthwise(1, 256, 4, 180, 7, 1, 3),
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		check_dw(&r, &cases[i], i % 2 == 0);
	for (int t = 0; t < 12; t++) {
		k_window w = random_window(&r, 256 * (1 + t % 2));
		check_dw(&r, &w, t % 3 != 0);
	}
	k_window w = depthwise(1, 256, 12, 13, 3, 2, 1);
	w.dilation[0] = 2;
	w.pad_begin[0] = 0;
	cr_assert(test_window_finish(&w));
	check_dw(&r, &w, true);
}

/* ---- post ---- */

/*
 * Fused activations against the unfused run followed by k_activation: the
 * same bits, a NaN input and outputs of -0 included, at every level and
 * every way. Channel 0's input is +0 and its filter negative, its bias -0:
 * every output of that channel is -0.
 */
static void
check_post(test_rng *r, const k_window *w, const k_post *post, const char *name)
{
	int64_t c = w->in_channels, in_q = w->in[0] * w->in[1], out_q = w->out[0] * w->out[1];
	int64_t taps = w->kernel[0] * w->kernel[1], n_in = w->batch * c * in_q, n_out = w->batch * c * out_q;
	float *x = test_random_floats(r, n_in), *filter = test_random_floats(r, c * taps);
	float *bias = test_random_floats(r, c);
	for (int64_t q = 0; q < w->batch * in_q; q++)
		x[q * c] = 0.0f;
	for (int64_t t = 0; t < taps; t++)
		filter[t] = -fabsf(filter[t]) - 0.125f;
	bias[0] = -0.0f;
	x[(w->batch * in_q / 2) * c + c / 2] = NAN;
	float *packed = aligned_alloc(64, k_dwconv_nhwc_packed_floats(w) * sizeof(float));
	k_dwconv_nhwc_pack(w, filter, packed);
	float *want = test_nan_floats(n_out), *got = test_nan_floats(n_out);
	k_isa levels[K_ISA_COUNT];
	int n_levels = test_isa_levels(levels);
	bool saw_nan = false, saw_minus_zero = false;
	for (int l = 0; l < n_levels; l++) {
		cr_assert_eq(k_cpu_isa_force(levels[l]), 0);
		k_dwconv_nhwc(w, x, packed, bias, want, NULL, NULL);
		k_activation(post->act, post->a, post->b, want, n_out);
		for (size_t m = 0; m < N_MODES; m++) {
			k_dwconv_nhwc(w, x, packed, bias, got, post, modes[m].serial ? NULL : &modes[m].ctx);
			char text[256];
			window_text(w, true, text, sizeof text);
			cr_assert(memcmp(got, want, (size_t)n_out * sizeof *got) == 0, "%s, %s, %s, %s: fused differs", text,
			          name, k_cpu_isa_name(levels[l]), modes[m].name);
		}
		for (int64_t i = 0; i < n_out; i++) {
			saw_nan |= isnan(got[i]);
			saw_minus_zero |= got[i] == 0.0f && signbit(got[i]);
		}
	}
	k_cpu_isa_force(k_cpu_isa_best());
	if (post->act == K_ACT_RELU || post->act == K_ACT_CLIP)
		cr_assert(saw_nan, "%s: no NaN reached the output", name);
	if (post->act == K_ACT_RELU || (post->act == K_ACT_CLIP && post->a <= 0.0f && post->b >= 0.0f))
		cr_assert(saw_minus_zero, "%s: no -0 reached the output", name);
	free(x);
	free(filter);
	free(bias);
	free(packed);
	free(want);
	free(got);
}

Test(k_nhwc, dwconv_post)
{
	test_rng r = { 0x9057 };
	const struct {
		const char *name;
		k_post post;
	} posts[] = {
		{ "relu", { true, K_ACT_RELU, 0, 0 } },
		{ "relu6", { true, K_ACT_CLIP, 0.0f, 6.0f } },
		{ "clip", { true, K_ACT_CLIP, -0.25f, 0.5f } },
		{ "crossed clip", { true, K_ACT_CLIP, 0.3f, -0.2f } },
		{ "sigmoid", { true, K_ACT_SIGMOID, 0, 0 } },
		{ "hard swish", { true, K_ACT_HARD_SWISH, 0, 0 } },
	};
	k_window cases[] = {
		depthwise(1, 33, 14, 14, 3, 1, 1), /* pairs, edges, a tail block */
		depthwise(2, 96, 9, 10, 3, 2, 1),
		depthwise(1, 17, 8, 9, 5, 1, 2),   /* the general loops */
		depthwise(1, 256, 7, 7, 3, 1, 1),  /* the strip */
		depthwise(1, 256, 6, 9, 5, 2, 2),
		depthwise(1, 384, 14, 14, 3, 1, 1),
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		for (size_t p = 0; p < sizeof posts / sizeof posts[0]; p++)
			check_post(&r, &cases[i], &posts[p].post, posts[p].name);
	/* A k_post that is off is no post. */
	k_window w = depthwise(1, 20, 6, 6, 3, 1, 1);
	k_post off = { false, K_ACT_SIGMOID, 0, 0 };
	int64_t n = 20 * 36;
	float *x = test_random_floats(&r, n), *filter = test_random_floats(&r, 20 * 9);
	float *packed = aligned_alloc(64, k_dwconv_nhwc_packed_floats(&w) * sizeof(float));
	float *a = test_nan_floats(n), *b = test_nan_floats(n);
	k_dwconv_nhwc_pack(&w, filter, packed);
	k_dwconv_nhwc(&w, x, packed, NULL, a, NULL, NULL);
	k_dwconv_nhwc(&w, x, packed, NULL, b, &off, NULL);
	cr_assert(memcmp(a, b, (size_t)n * sizeof *a) == 0);
	free(x);
	free(filter);
	free(packed);
	free(a);
	free(b);
}

/* ---- global pooling ---- */

/*
 * k_global_pool_nhwc on batch x positions x channels against k_global_pool
 * and k_global_pool_ref on the NCHW transpose: max the same bits as both,
 * average the same bits as the reference (the same sums in the same order)
 * and within 1e-6 of k_global_pool; at every level, every way.
 */
static void
check_pool(test_rng *r, int64_t batch, int64_t positions, int64_t channels, bool nans)
{
	int64_t n = batch * positions * channels, planes = batch * channels;
	float *nhwc = test_random_floats(r, n), *nchw = test_nan_floats(n);
	if (nans && n > 0) {
		for (int i = 0; i < 1 + (int)(n / 50); i++)
			nhwc[test_pick(r, 0, n - 1)] = NAN;
		/* The last channel all NaN: -FLT_MAX, as k_global_pool gives. */
		for (int64_t q = 0; q < batch * positions; q++)
			nhwc[q * channels + channels - 1] = NAN;
	}
	guarded x = guarded_new(n), y = guarded_new(planes);
	memcpy(x.p, nhwc, (size_t)n * sizeof(float));
	test_to_nchw(batch, channels, positions, nhwc, nchw);
	for (int mode = 0; mode < 2; mode++) {
		k_pool_mode pm = mode ? K_POOL_AVG : K_POOL_MAX;
		float *fast = test_nan_floats(planes), *ref = test_nan_floats(planes), *first = test_nan_floats(planes);
		k_global_pool(planes, positions, pm, nchw, fast, NULL);
		k_global_pool_ref(planes, positions, pm, nchw, ref);
		k_isa levels[K_ISA_COUNT];
		int n_levels = test_isa_levels(levels);
		for (int l = 0; l < n_levels; l++) {
			cr_assert_eq(k_cpu_isa_force(levels[l]), 0);
			for (size_t m = 0; m < N_MODES; m++) {
				for (int64_t i = 0; i < planes; i++)
					y.p[i] = NAN;
				k_global_pool_nhwc(batch, positions, channels, pm, x.p, y.p, modes[m].serial ? NULL : &modes[m].ctx);
				char what[200];
				snprintf(what, sizeof what, "N%lld positions %lld C%lld %s, %s, %s", (long long)batch,
				         (long long)positions, (long long)channels, mode ? "avg" : "max", k_cpu_isa_name(levels[l]),
				         modes[m].name);
				size_t bytes = (size_t)planes * sizeof(float);
				cr_assert(memcmp(y.p, ref, bytes) == 0, "%s: differs from k_global_pool_ref", what);
				if (pm == K_POOL_MAX) {
					cr_assert(memcmp(y.p, fast, bytes) == 0, "%s: differs from k_global_pool", what);
				} else {
					char why[256];
					cr_assert(test_allclose(y.p, fast, planes, 1e-6, why, sizeof why), "%s: %s", what, why);
				}
				if (m == 0)
					memcpy(first, y.p, bytes);
				else
					cr_assert(memcmp(first, y.p, bytes) == 0, "%s: differs from the serial run", what);
			}
		}
		k_cpu_isa_force(k_cpu_isa_best());
		free(fast);
		free(ref);
		free(first);
	}
	guarded_free(&x);
	guarded_free(&y);
	free(nhwc);
	free(nchw);
}

Test(k_nhwc, global_pool)
{
	test_rng r = { 0x600d };
	static const int64_t channels[] = { 1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 129 };
	static const int64_t positions[] = { 1, 2, 3, 7, 16, 49, 64, 200 };
	for (size_t c = 0; c < sizeof channels / sizeof channels[0]; c++)
		for (size_t q = 0; q < sizeof positions / sizeof positions[0]; q++)
			check_pool(&r, 1 + (int64_t)((c + q) % 3), positions[q], channels[c], (c + q) % 2 == 0);
	/* Enough work for the two threads to split the blocks of channels. */
	split_runs = 0;
	check_pool(&r, 2, 200, 1000, true);
	check_pool(&r, 1, 49, 1280, false); /* MobileNetV2's last pooling */
	cr_assert_gt(split_runs, 0);
	/* No positions: max -FLT_MAX, average 0, as the reference. */
	float y[6];
	k_global_pool_nhwc(2, 0, 3, K_POOL_MAX, NULL, y, NULL);
	for (int i = 0; i < 6; i++)
		cr_assert_eq(y[i], -FLT_MAX);
	k_global_pool_nhwc(2, 0, 3, K_POOL_AVG, NULL, y, NULL);
	for (int i = 0; i < 6; i++)
		cr_assert_eq(y[i], 0.0f);
}

/* Of a -0 and a +0, max keeps the one that came first, as the reference. */
Test(k_nhwc, global_pool_signed_zeros)
{
	int64_t channels = 37, positions = 5;
	float x[5 * 37], want[37], nchw[5 * 37];
	for (int64_t q = 0; q < positions; q++) {
		for (int64_t c = 0; c < channels; c++)
			x[q * channels + c] = c % 2 == (q == 0) ? -0.0f : 0.0f;
	}
	test_to_nchw(1, channels, positions, x, nchw);
	k_global_pool_ref(channels, positions, K_POOL_MAX, nchw, want);
	k_isa levels[K_ISA_COUNT];
	int n_levels = test_isa_levels(levels);
	for (int l = 0; l < n_levels; l++) {
		cr_assert_eq(k_cpu_isa_force(levels[l]), 0);
		float got[37];
		k_global_pool_nhwc(1, positions, channels, K_POOL_MAX, x, got, NULL);
		cr_assert(memcmp(got, want, sizeof got) == 0, "%s", k_cpu_isa_name(levels[l]));
	}
	k_cpu_isa_force(k_cpu_isa_best());
}

/* Every level this machine has was checked (the portable one at least). */
Test(k_nhwc, dwconv_levels)
{
	test_rng r = { 3 };
	k_window w = depthwise(1, 19, 6, 7, 3, 1, 1);
	check_dw(&r, &w, true);
	cr_assert(checked_levels & (1 << K_ISA_PORTABLE));
	for (int isa = K_ISA_PORTABLE; isa < K_ISA_COUNT; isa++) {
		if (k_cpu_isa_supported((k_isa)isa))
			cr_assert(checked_levels & (1 << isa), "level %s not checked", k_cpu_isa_name((k_isa)isa));
	}
}
