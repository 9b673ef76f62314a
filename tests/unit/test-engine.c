/* Unit tests: compiling, planning memory, converting formats, binding
 * weights and running plans, with the engine-test plugin's layers. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"
#include "st-engine.h"
#include "st-io.h"
#include "st-report.h"

static st_registry *
registry(void)
{
	static st_registry *r;
	if (r == NULL) {
		r = st_registry_new();
		st_registry_load_default(r);
		char *path = st_xasprintf("%s/engine-test.so", getenv("TEST_PLUGIN_DIR"));
		st_plugin *pl = st_registry_load_file(r, path);
		cr_assert(pl->loaded, "%s: %s", path, pl->refusal ? pl->refusal : "?");
		free(path);
	}
	return r;
}

/* A checked graph built by an edit script. */
static st_session *
model(const char *script)
{
	st_session *s = st_session_new(st_graph_new(registry()), NULL);
	st_diag d;
	st_diag_init(&d);
	int rc = st_session_run_script(s, script, "test", &d);
	cr_assert_eq(rc, 0, "%s", d.count ? d.items[0].text : "");
	st_diag_free(&d);
	st_graph_check(st_session_graph(s));
	cr_assert_eq(st_session_graph(s)->errors, 0);
	return s;
}

static st_plan *
compile(st_session *s, int format, int threads)
{
	st_plan_options opt = { .format = format, .threads = threads };
	st_diag d;
	st_diag_init(&d);
	st_plan *p = st_plan_compile(st_session_graph(s), &opt, &d);
	cr_assert_not_null(p, "%s", d.count ? d.items[0].text : "");
	st_diag_free(&d);
	return p;
}

/* Feeds 0, 1, 2, ... (NCHW, float32) to input 0. */
static void
feed_ramp(st_plan *p, const st_shape *shape)
{
	int64_t n = st_shape_elements(shape);
	float *x = malloc(sizeof *x * (size_t)n);
	for (int64_t i = 0; i < n; i++)
		x[i] = (float)i;
	st_tensor t = { .data = x, .shape = *shape, .layout = ST_LAYOUT_NCHW };
	st_diag d;
	st_diag_init(&d);
	cr_assert_eq(st_plan_set_input(p, 0, &t, &d), 0, "%s", d.count ? d.items[0].text : "");
	st_diag_free(&d);
	free(x);
}

static float *
run_and_get(st_plan *p, int64_t *n)
{
	st_diag d;
	st_diag_init(&d);
	cr_assert_eq(st_plan_run(p, &d), 0, "%s", d.count ? d.items[0].text : "");
	st_diag_free(&d);
	*n = st_shape_elements(st_plan_output_shape(p, 0));
	float *y = malloc(sizeof *y * (size_t)*n);
	st_plan_get_output(p, 0, y);
	return y;
}

static void
bind_random(st_plan *p)
{
	st_diag d;
	st_diag_init(&d);
	cr_assert_eq(st_plan_bind_random_weights(p, 7, &d), 0, "%s", d.count ? d.items[0].text : "");
	st_diag_free(&d);
}

Test(engine, a_chain_reuses_memory_and_computes)
{
	st_buf b;
	st_buf_init(&b);
	st_buf_puts(&b, "add input data; set data dims 2x4x4; add triple t0; connect data t0;");
	for (int i = 1; i < 10; i++)
		st_buf_printf(&b, "add triple t%d; connect t%d t%d;", i, i - 1, i);
	st_buf_puts(&b, "add output out; connect t9 out");
	st_session *s = model(b.data);
	st_buf_free(&b);
	st_plan *p = compile(s, ST_FORMAT_FP32_NCHW, 1);
	/* Tensors of 128 bytes: the input and the output live throughout, two in flight. */
	cr_assert_eq(st_plan_live_bound(p), 4 * 128, "bound %zu", st_plan_live_bound(p));
	cr_assert_eq(st_plan_arena_bytes(p), st_plan_live_bound(p), "arena %zu", st_plan_arena_bytes(p));
	bind_random(p);
	cr_assert_eq(st_plan_scratch_bytes(p), 4096, "prepare sized the scratch");
	feed_ramp(p, st_plan_input_shape(p, 0));
	int64_t n;
	float *y = run_and_get(p, &n);
	cr_assert_eq(n, 32);
	for (int64_t i = 0; i < n; i++)
		cr_assert_float_eq(y[i], (float)i * 59049.0f, 1e-2, "element %lld", (long long)i);
	free(y);
	/* The inputs stay: a second run gives the same. */
	y = run_and_get(p, &n);
	cr_assert_float_eq(y[31], 31.0f * 59049.0f, 1e-2);
	free(y);
	st_plan_free(p);
	st_session_free(s);
}

Test(engine, threads_give_the_same_result)
{
	st_session *s = model("add input data; set data dims 3x50x50; add triple t; connect data t;"
	                      "add output out; connect t out");
	st_plan *one = compile(s, ST_FORMAT_FP32_NCHW, 1), *two = compile(s, ST_FORMAT_FP32_NCHW, 3);
	cr_assert_eq(st_plan_threads(two), 3);
	bind_random(one);
	bind_random(two);
	feed_ramp(one, st_plan_input_shape(one, 0));
	feed_ramp(two, st_plan_input_shape(two, 0));
	int64_t n1, n2;
	float *a = run_and_get(one, &n1), *b = run_and_get(two, &n2);
	cr_assert_eq(memcmp(a, b, sizeof *a * (size_t)n1), 0);
	free(a);
	free(b);
	st_plan_free(one);
	st_plan_free(two);
	st_session_free(s);
}

static int
count_conversions(const st_plan *p, const char *what)
{
	int n = 0;
	for (int i = 0; i < st_plan_step_count(p); i++) {
		st_step_info info;
		st_plan_step(p, i, &info);
		if (info.kind == ST_STEP_CONVERT && (what == NULL || strcmp(info.what, what) == 0))
			n++;
	}
	return n;
}

Test(engine, layouts_are_converted_around_implementations)
{
	st_session *s = model("add input data; set data dims 3x2x5; add twice_nhwc w; connect data w;"
	                      "add add_bias b; connect w b; add output out; connect b out");
	st_plan *nchw = compile(s, ST_FORMAT_FP32_NCHW, 1);
	cr_assert_eq(count_conversions(nchw, "fp32-nchw -> fp32-nhwc"), 1);
	cr_assert_eq(count_conversions(nchw, "fp32-nhwc -> fp32-nchw"), 1);
	st_plan *nhwc = compile(s, ST_FORMAT_FP32_NHWC, 1);
	cr_assert_eq(count_conversions(nhwc, "fp32-nhwc -> fp32-nchw"), 1, "into add_bias");
	cr_assert_eq(count_conversions(nhwc, "fp32-nchw -> fp32-nhwc"), 1, "out of add_bias");
	st_buf listing;
	st_buf_init(&listing);
	st_plan_describe(nhwc, &listing);
	cr_assert(strstr(listing.data, "convert fp32-nhwc -> fp32-nchw") != NULL, "%s", listing.data);
	st_buf_free(&listing);
	bind_random(nchw);
	bind_random(nhwc);
	feed_ramp(nchw, st_plan_input_shape(nchw, 0));
	feed_ramp(nhwc, st_plan_input_shape(nhwc, 0));
	int64_t n;
	float *a = run_and_get(nchw, &n), *b = run_and_get(nhwc, &n);
	for (int64_t i = 0; i < n; i++)
		cr_assert_eq(a[i], b[i], "element %lld: %g vs %g", (long long)i, a[i], b[i]);
	/* 2x + bias: element 7 of 1x3x2x5 is channel 0. */
	cr_assert(fabsf(a[7] - 14.0f) < 1.0f, "%g", a[7]);
	free(a);
	free(b);
	st_plan_free(nchw);
	st_plan_free(nhwc);
	st_session_free(s);
}

/* The format of the step that runs layer `name`. */
static st_tensor_format
step_format_of(const st_plan *p, const st_session *s, const char *name)
{
	const st_layer *l = st_graph_find(st_session_graph((st_session *)s), name);
	for (int i = 0; i < st_plan_step_count(p); i++) {
		st_step_info info;
		st_plan_step(p, i, &info);
		if (info.kind == ST_STEP_LAYER && info.layer == l)
			return info.format;
	}
	cr_assert_fail("no step runs %s", name);
	return ST_FORMAT_FP32_NCHW;
}

/* Runs a chain of three plus_channel layers (each picks the layout its
 * input does not have) compiled with opt and checks x + 3 c. */
static st_plan *
plus_channel_chain(st_session *s, const st_plan_options *opt)
{
	st_diag d;
	st_diag_init(&d);
	st_plan *p = st_plan_compile(st_session_graph(s), opt, &d);
	cr_assert_not_null(p, "%s", d.count ? d.items[0].text : "");
	st_diag_free(&d);
	bind_random(p);
	feed_ramp(p, st_plan_input_shape(p, 0));
	int64_t n;
	float *y = run_and_get(p, &n);
	for (int64_t i = 0; i < n; i++)
		cr_assert_eq(y[i], (float)i + 3.0f * (float)(i / 20 % 3), "element %lld: %g", (long long)i, y[i]);
	free(y);
	return p;
}

Test(engine, layouts_chosen_by_implementations)
{
	st_session *s = model("add input data; set data dims 3x4x5; add plus_channel a; connect data a;"
	                      "add plus_channel b; connect a b; add plus_channel c; connect b c;"
	                      "add output out; connect c out");
	/* fp32-nchw: each asked (plus_channel takes the layout its input does
	 * not come in). Asked in turn, a and c run NHWC and b NCHW, each a
	 * layout island between conversions (plan_build); built again with
	 * a and c NCHW, b chooses NHWC and is one in turn; the plan ends with
	 * every step NCHW and no conversion. */
	st_plan_options opt = { .format = ST_FORMAT_FP32_NCHW, .threads = 1 };
	st_plan *p = plus_channel_chain(s, &opt);
	cr_assert_eq(step_format_of(p, s, "a"), ST_FORMAT_FP32_NCHW);
	cr_assert_eq(step_format_of(p, s, "b"), ST_FORMAT_FP32_NCHW);
	cr_assert_eq(step_format_of(p, s, "c"), ST_FORMAT_FP32_NCHW);
	cr_assert_eq(count_conversions(p, NULL), 0);
	st_plan_free(p);
	/* Kept NCHW: nobody is asked. */
	opt.fixed_layouts = true;
	p = plus_channel_chain(s, &opt);
	cr_assert_eq(count_conversions(p, NULL), 0);
	cr_assert_eq(step_format_of(p, s, "a"), ST_FORMAT_FP32_NCHW);
	st_plan_free(p);
	opt.fixed_layouts = false;
	setenv("STRATA_LAYOUTS", "fixed", 1);
	p = plus_channel_chain(s, &opt);
	cr_assert_eq(count_conversions(p, NULL), 0, "STRATA_LAYOUTS=fixed");
	st_plan_free(p);
	unsetenv("STRATA_LAYOUTS");
	/* fp32-nhwc: asked too, and the outputs go back to the plan's layout. */
	opt.format = ST_FORMAT_FP32_NHWC;
	p = plus_channel_chain(s, &opt);
	cr_assert_eq(step_format_of(p, s, "a"), ST_FORMAT_FP32_NCHW);
	cr_assert_eq(step_format_of(p, s, "b"), ST_FORMAT_FP32_NCHW);
	cr_assert_eq(count_conversions(p, "fp32-nhwc -> fp32-nchw"), 3);
	st_plan_free(p);
	st_session_free(s);
}

Test(engine, an_implementation_that_cannot_choose_is_refused)
{
	st_registry *r = registry();
	const st_plugin *pl = NULL;
	for (int i = 0; i < r->n_plugins; i++) {
		if (r->plugins[i]->name != NULL && strcmp(r->plugins[i]->name, "engine_test") == 0)
			pl = r->plugins[i];
	}
	cr_assert_not_null(pl);
	bool said = false;
	for (int i = 0; i < pl->n_notes; i++)
		said |= strcmp(pl->notes[i], "the cpu implementation of 'no_impl' refused: it says it chooses layouts "
		                             "but has no choose_layout") == 0;
	cr_assert(said, "no note on the refused implementation");
	said = false;
	for (int i = 0; i < pl->n_notes; i++)
		said |= strcmp(pl->notes[i], "the cpu implementation of 'no_impl' refused: it says it chooses float "
		                             "types but has no choose_dtype") == 0;
	cr_assert(said, "no note on the implementation without choose_dtype");
	cr_assert_null(st_registry_find_impl(r, "no_impl", "cpu"));
}

Test(engine, fp16_storage_with_fp32_compute)
{
	st_session *s = model("add input data; set data dims 8; add triple t; connect data t;"
	                      "add half_copy h; connect t h; add output out; connect h out");
	st_plan *p32 = compile(s, ST_FORMAT_FP32_NCHW, 1), *p16 = compile(s, ST_FORMAT_FP16_NCHW, 1);
	cr_assert_eq(count_conversions(p32, "fp32-nchw -> fp16-nchw"), 1, "into half_copy");
	cr_assert_eq(count_conversions(p32, "fp16-nchw -> fp32-nchw"), 1, "back");
	cr_assert_eq(count_conversions(p16, "fp16-nchw -> fp32-nchw"), 1, "into triple");
	cr_assert_eq(count_conversions(p16, "fp32-nchw -> fp16-nchw"), 1, "out of triple");
	bind_random(p32);
	bind_random(p16);
	st_shape in = test_shape("1x8");
	float x[8] = { 0.1f, 1.0f / 3, 1000.5f, -2.0f, 1000.0f / 3, 1e-5f, 7.0f, -0.25f };
	st_tensor t = { .data = x, .shape = in };
	st_diag d;
	st_diag_init(&d);
	cr_assert_eq(st_plan_set_input(p16, 0, &t, &d), 0);
	cr_assert_eq(st_plan_set_input(p32, 0, &t, &d), 0);
	int64_t n;
	float *a = run_and_get(p32, &n), *b = run_and_get(p16, &n);
	cr_assert_eq(st_plan_output_shape(p16, 0)->dtype, ST_DTYPE_FLOAT32, "outputs read as float32");
	char why[256];
	cr_assert(test_allclose(b, a, n, 1e-2, why, sizeof why), "%s", why);
	/* Both round to FP16 before half_copy; only the FP16 plan rounds the input. */
	cr_assert_eq(b[2], st_half_to_float(st_float_to_half(3 * st_half_to_float(st_float_to_half(1000.5f)))));
	free(a);
	free(b);
	st_diag_free(&d);
	st_plan_free(p32);
	st_plan_free(p16);
	st_session_free(s);
}

Test(engine, weights_from_a_folder)
{
	char dir[] = "/tmp/strata-weights-XXXXXX";
	cr_assert_not_null(mkdtemp(dir));
	st_session *s = model("add input data; set data dims 3x2; add add_bias b; connect data b;"
	                      "add output out; connect b out");
	st_plan *p = compile(s, ST_FORMAT_FP32_NCHW, 1);
	st_diag d;
	st_diag_init(&d);
	/* Missing: the path looked for is named. */
	cr_assert_eq(st_plan_bind_weights(p, dir, &d), -1);
	cr_assert(strstr(d.items[0].text, "b_bias.npy") != NULL, "%s", d.items[0].text);
	st_diag_free(&d);
	/* Wrong shape: both shapes are named. */
	char *path = st_xasprintf("%s/b_bias.npy", dir);
	float four[4] = { 1, 2, 3, 4 }, three[3] = { 10, 20, 30 };
	st_shape s4 = test_shape("4"), s3 = test_shape("3");
	char err[256];
	cr_assert_eq(st_npy_write(path, &s4, four, err, sizeof err), 0);
	st_diag_init(&d);
	cr_assert_eq(st_plan_bind_weights(p, dir, &d), -1);
	cr_assert(strstr(d.items[0].text, "3") != NULL && strstr(d.items[0].text, "4") != NULL, "%s",
	          d.items[0].text);
	st_diag_free(&d);
	cr_assert_eq(st_npy_write(path, &s3, three, err, sizeof err), 0);
	st_diag_init(&d);
	cr_assert_eq(st_plan_bind_weights(p, dir, &d), 0, "%s", d.count ? d.items[0].text : "");
	st_diag_free(&d);
	feed_ramp(p, st_plan_input_shape(p, 0));
	int64_t n;
	float *y = run_and_get(p, &n);
	float want[6] = { 10, 11, 22, 23, 34, 35 }; /* 1x3x2: x + bias[c], c = i / 2 */
	for (int i = 0; i < 6; i++)
		cr_assert_float_eq(y[i], want[i], 0, "element %d: %g", i, y[i]);
	free(y);
	unlink(path);
	rmdir(dir);
	free(path);
	st_plan_free(p);
	st_session_free(s);
}

Test(engine, attached_activations_are_applied)
{
	st_session *s = model("add input data; set data dims 4; add triple t; connect data t;"
	                      "activation t negate_test; add output out; connect t out");
	st_plan *p = compile(s, ST_FORMAT_FP32_NCHW, 1);
	bind_random(p);
	feed_ramp(p, st_plan_input_shape(p, 0));
	int64_t n;
	float *y = run_and_get(p, &n);
	cr_assert_float_eq(y[3], -9.0f, 0);
	free(y);
	st_plan_free(p);
	st_session_free(s);
}

/* An implementation flagged ST_IMPL_FUSES_RELU_CLIP is trusted with a relu
 * (minus_three flags it and applies nothing: negatives come out), and the
 * host still applies any other activation. */
Test(engine, relu_and_clip_left_to_implementations_that_fuse_them)
{
	static const struct {
		const char *act;
		float want[4];
	} cases[] = {
		{ "relu", { -3, -2, -1, 0 } },
		{ "negate_test", { 3, 2, 1, 0 } },
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		char *script = st_xasprintf("add input data; set data dims 4; add minus_three m; connect data m;"
		                            "activation m %s; add output out; connect m out",
		                            cases[c].act);
		st_session *s = model(script);
		free(script);
		for (int threads = 1; threads <= 2; threads++) {
			st_plan *p = compile(s, ST_FORMAT_FP32_NCHW, threads);
			bind_random(p);
			feed_ramp(p, st_plan_input_shape(p, 0));
			int64_t n;
			float *y = run_and_get(p, &n);
			cr_assert_eq(n, 4);
			for (int i = 0; i < 4; i++)
				cr_assert_float_eq(y[i], cases[c].want[i], 0, "%s, %d threads, element %d: %g", cases[c].act,
				                   threads, i, y[i]);
			free(y);
			st_plan_free(p);
		}
		st_session_free(s);
	}
}

Test(engine, input_sizes_change_without_rebinding)
{
	st_session *s = model("add input data; set data dims 3x4x4; add add_bias b; connect data b;"
	                      "add triple t; connect b t; add output out; connect t out");
	st_plan *p = compile(s, ST_FORMAT_FP32_NCHW, 1);
	bind_random(p);
	feed_ramp(p, st_plan_input_shape(p, 0));
	int64_t n;
	float *small = run_and_get(p, &n);
	cr_assert_eq(n, 48);
	size_t arena = st_plan_arena_bytes(p);
	st_shape big = test_shape("2x3x9x7");
	feed_ramp(p, &big);
	float *large = run_and_get(p, &n);
	cr_assert_eq(n, 2 * 3 * 9 * 7);
	cr_assert_gt(st_plan_arena_bytes(p), arena);
	/* The bias is the same tensor: element 0 of channel 0 agrees. */
	cr_assert_float_eq(large[0], small[0], 1e-5);
	const st_shape *now = st_plan_output_shape(p, 0);
	cr_assert_eq(now->dims[0], 2);
	cr_assert_eq(now->dims[3], 7);
	/* A different rank is refused, and the plan still runs at its size. */
	st_shape flat = test_shape("378");
	float *x = calloc(378, sizeof *x);
	st_tensor t = { .data = x, .shape = flat };
	st_diag d;
	st_diag_init(&d);
	cr_assert_eq(st_plan_set_input(p, 0, &t, &d), -1);
	cr_assert(strstr(d.items[0].text, "rank") != NULL, "%s", d.items[0].text);
	st_diag_free(&d);
	free(x);
	free(small);
	free(large);
	st_plan_free(p);
	st_session_free(s);
}

Test(engine, failures_are_reported)
{
	st_session *s = model("add input data; add no_impl x; connect data x");
	st_diag d;
	st_diag_init(&d);
	st_plan_options opt = { .format = -1 };
	cr_assert_null(st_plan_compile(st_session_graph(s), &opt, &d));
	cr_assert_str_eq(d.items[0].text, "layer 'x': no loaded plugin implements no_impl on the cpu backend");
	st_diag_free(&d);
	st_session_free(s);

	s = model("add input data; add refuser x; connect data x; add output out; connect x out");
	st_plan *p = compile(s, -1, 1);
	st_diag_init(&d);
	cr_assert_eq(st_plan_bind_random_weights(p, 1, &d), -1);
	cr_assert_str_eq(d.items[0].text, "layer 'x': refuses all inputs");
	st_diag_free(&d);
	st_diag_init(&d);
	cr_assert_eq(st_plan_run(p, &d), -1, "no run before weights are bound");
	st_diag_free(&d);
	st_plan_free(p);
	st_session_free(s);

	/* A graph with type errors is not compiled. */
	s = st_session_new(st_graph_new(registry()), NULL);
	cr_assert_eq(test_run(s, "add triple t"), 0);
	st_graph_check(st_session_graph(s));
	st_diag_init(&d);
	cr_assert_null(st_plan_compile(st_session_graph(s), &opt, &d));
	cr_assert(strstr(d.items[0].text, "1 type error") != NULL, "%s", d.items[0].text);
	st_diag_free(&d);
	st_session_free(s);
}

Test(engine, a_run_can_be_cancelled)
{
	volatile sig_atomic_t stop = 0;
	st_session *s = model("add input data; add triple t; connect data t; add output out; connect t out");
	st_plan_options opt = { .format = -1, .threads = 1, .cancel = &stop };
	st_diag d;
	st_diag_init(&d);
	st_plan *p = st_plan_compile(st_session_graph(s), &opt, &d);
	bind_random(p);
	feed_ramp(p, st_plan_input_shape(p, 0));
	stop = 1;
	cr_assert_eq(st_plan_run(p, &d), 1);
	st_diag_free(&d);
	st_plan_free(p);
	st_session_free(s);
}

Test(engine, profiling_times_steps_and_fills_the_layer_table)
{
	st_session *s = model("add input data; set data dims 2x4x4; add triple t0; connect data t0;"
	                      "add triple t1; connect t0 t1; add triple t2; connect t1 t2;"
	                      "add output out; connect t2 out");
	st_plan *p = compile(s, ST_FORMAT_FP32_NCHW, 1);
	bind_random(p);
	feed_ramp(p, st_plan_input_shape(p, 0));
	int64_t n;
	/* Off, nothing is timed. */
	float *y = run_and_get(p, &n);
	free(y);
	cr_assert_null(st_plan_step_seconds(p));
	st_plan_set_profiling(p, true);
	y = run_and_get(p, &n);
	free(y);
	const double *secs = st_plan_step_seconds(p);
	cr_assert_not_null(secs);
	for (int i = 0; i < st_plan_step_count(p); i++)
		cr_assert_geq(secs[i], 0.0);
	st_plan_set_profiling(p, false);
	cr_assert_null(st_plan_step_seconds(p));

	st_report r;
	memset(&r, 0, sizeof r);
	st_diag d;
	st_diag_init(&d);
	setenv("STRATA_COUNTERS", "off", 1);
	cr_assert_eq(st_plan_profile(p, 5, &r, &d), 0);
	cr_assert_str_eq(r.counters_note, "not measured: STRATA_COUNTERS=off");
	cr_assert_null(st_plan_step_seconds(p), "profiling is back off");
	cr_assert_eq(r.profile_iterations, 5);
	cr_assert_eq(r.n_layers, 3, "one row per layer step");
	double share = 0;
	for (int i = 0; i < r.n_layers; i++) {
		const st_report_layer *l = &r.layers[i];
		char want[16];
		snprintf(want, sizeof want, "t%d", i);
		cr_assert_str_eq(l->name, want);
		cr_assert_str_eq(l->type, "triple");
		cr_assert_str_eq(l->output, "1x2x4x4");
		cr_assert_eq(l->distance, i + 1);
		cr_assert_eq(l->time.count, 5);
		/* The iterations in run order, for sparklines. */
		cr_assert_eq(l->n_samples, 5);
		for (int k = 0; k < 5; k++)
			cr_assert(l->samples[k] >= l->time.min && l->samples[k] <= l->time.max);
		cr_assert(l->time.min <= l->time.median && l->time.median <= l->time.max);
		/* 32 floats in and 32 out. */
		cr_assert_float_eq(l->bytes, 256.0, 1e-9);
		cr_assert_eq(l->mem_allocated, 128);
		cr_assert_eq(l->cycles, -1.0, "counters not measured are unavailable, not 0");
		share += l->share;
	}
	cr_assert_float_eq(share, 1.0, 1e-9);
	/* t2 writes the network's output: it stays to the end. */
	cr_assert_eq(r.layers[2].mem_persistent, 128);
	cr_assert_eq(r.layers[0].mem_persistent, 0);
	/* t0's output is freed once t1 has read it. */
	cr_assert_eq(r.layers[1].mem_freed, 128);
	cr_assert_geq(r.peak_bytes, r.layers[0].mem_live);
	cr_assert_not_null(r.peak_layer);
	cr_assert_eq(r.n_skipped, 2, "the input and output layers run no layer step");
	st_report_free(&r);
	st_diag_free(&d);
	st_plan_free(p);
	st_session_free(s);
}

/* Busy work for the counters: every thread of the pool spins a while. */
static void
spin_range(void *arg, int64_t begin, int64_t end)
{
	volatile double *sink = arg;
	for (int64_t i = begin; i < end; i++) {
		double x = 0;
		for (int k = 0; k < 200000; k++)
			x += k * 0.5;
		*sink += x;
	}
}

Test(engine, counters_sum_over_the_pool_threads)
{
	st_pool *pool = st_pool_new(2);
	int tids[2];
	cr_assert_eq(st_pool_thread_ids(pool, tids), 2);
	cr_assert(tids[0] > 0 && tids[1] > 0 && tids[0] != tids[1]);
	char why[320];
	/* The kernel's software events stand in for the CPU's counters, which
	 * virtual machines seldom have. */
	st_counters *c = st_counters_open(tids, 2, true, why, sizeof why);
	cr_assert_not_null(c, "%s", why);
	cr_assert(st_counters_available(c, ST_COUNTER_CYCLES));
	double before[ST_N_COUNTERS], after[ST_N_COUNTERS];
	cr_assert_eq(st_counters_read(c, before), 0);
	st_exec_ctx ctx;
	st_pool_context(pool, &ctx);
	volatile double sink = 0;
	ctx.parallel_for(&ctx, 2, 1, spin_range, (void *)&sink);
	cr_assert_eq(st_counters_read(c, after), 0);
	/* Task-clock nanoseconds: both threads worked. */
	cr_assert_gt(after[ST_COUNTER_CYCLES], before[ST_COUNTER_CYCLES]);
	st_counters_close(c);
	/* The hardware counters either open or say why not; never a silent 0. */
	c = st_counters_open(tids, 2, false, why, sizeof why);
	if (c == NULL) {
		cr_assert(strncmp(why, "perf_event_open", 15) == 0, "%s", why);
	} else {
		cr_assert_eq(st_counters_read(c, before), 0);
		for (int e = 0; e < ST_N_COUNTERS; e++)
			cr_assert(st_counters_available(c, e) ? before[e] >= 0 : before[e] == -1);
		st_counters_close(c);
	}
	st_pool_free(pool);
}

Test(engine, profile_with_software_counters)
{
	st_session *s = model("add input data; set data dims 2x4x4; add triple t0; connect data t0;"
	                      "add output out; connect t0 out");
	st_plan *p = compile(s, ST_FORMAT_FP32_NCHW, 2);
	bind_random(p);
	feed_ramp(p, st_plan_input_shape(p, 0));
	st_report r;
	memset(&r, 0, sizeof r);
	st_diag d;
	st_diag_init(&d);
	setenv("STRATA_COUNTERS", "software", 1);
	cr_assert_eq(st_plan_profile(p, 3, &r, &d), 0);
	cr_assert_not_null(r.counters_note);
	cr_assert(strstr(r.counters_note, "software stand-ins") != NULL, "%s", r.counters_note);
	cr_assert_eq(r.n_layers, 1);
	/* Task-clock ns per iteration: the step took some. */
	cr_assert_gt(r.layers[0].cycles, 0);
	cr_assert_geq(r.layers[0].instructions, 0);
	st_report_free(&r);
	st_diag_free(&d);
	st_plan_free(p);
	st_session_free(s);
}

Test(engine, kept_layer_outputs_are_readable_after_a_run)
{
	st_session *s = model("add input data; set data dims 2x4x4; add triple t0; connect data t0;"
	                      "add triple t1; connect t0 t1; add triple t2; connect t1 t2;"
	                      "add output out; connect t2 out");
	const st_graph *g = st_session_graph(s);
	const st_layer *t0 = st_graph_find(g, "t0"), *t1 = st_graph_find(g, "t1"), *out = st_graph_find(g, "out");
	/* Without keep_outputs, the arena reuses t0's memory: it is not readable. */
	st_plan *p = compile(s, ST_FORMAT_FP32_NCHW, 1);
	bind_random(p);
	feed_ramp(p, st_plan_input_shape(p, 0));
	float buf[32];
	cr_assert_not_null(st_plan_layer_shape(p, t0, 0));
	cr_assert_eq(st_plan_get_layer_output(p, t0, 0, buf), -1, "no run yet");
	int64_t n;
	free(run_and_get(p, &n));
	cr_assert_eq(st_plan_get_layer_output(p, t0, 0, buf), -1, "not kept");
	st_plan_free(p);

	st_plan_options opt = { .format = -1, .threads = 1, .keep_outputs = true };
	st_diag d;
	st_diag_init(&d);
	p = st_plan_compile(g, &opt, &d);
	cr_assert_not_null(p);
	bind_random(p);
	feed_ramp(p, st_plan_input_shape(p, 0));
	free(run_and_get(p, &n));
	const st_shape *shape = st_plan_layer_shape(p, t1, 0);
	cr_assert_not_null(shape);
	cr_assert_eq(st_shape_elements(shape), 32);
	cr_assert_eq(st_plan_get_layer_output(p, t0, 0, buf), 0);
	for (int i = 0; i < 32; i++)
		cr_assert_eq(buf[i], 3.0f * (float)i);
	cr_assert_eq(st_plan_get_layer_output(p, t1, 0, buf), 0);
	for (int i = 0; i < 32; i++)
		cr_assert_eq(buf[i], 9.0f * (float)i);
	/* The output layer has no slot output; an output index past the end neither. */
	cr_assert_null(st_plan_layer_shape(p, out, 0));
	cr_assert_eq(st_plan_get_layer_output(p, t1, 1, buf), -1);
	st_diag_free(&d);
	st_plan_free(p);
	st_session_free(s);
}

Test(engine, bound_weights_are_readable_by_name)
{
	st_session *s = model("add input data; set data dims 2x4x4; add convolution c; set c num_output 3;"
	                      "set c kernel [3, 3]; connect data c; add output out; connect c out");
	const st_graph *g = st_session_graph(s);
	st_plan *p = compile(s, ST_FORMAT_FP32_NCHW, 1);
	st_shape shape;
	cr_assert_null(st_plan_layer_weight(p, st_graph_find(g, "c"), "weights", &shape), "nothing bound yet");
	bind_random(p);
	const float *w = st_plan_layer_weight(p, st_graph_find(g, "c"), "weights", &shape);
	cr_assert_not_null(w);
	cr_assert_eq(shape.rank, 4);
	cr_assert(shape.dims[0] == 3 && shape.dims[1] == 2 && shape.dims[2] == 3 && shape.dims[3] == 3);
	cr_assert_null(st_plan_layer_weight(p, st_graph_find(g, "c"), "gamma", &shape));
	cr_assert_null(st_plan_layer_weight(p, st_graph_find(g, "data"), "weights", &shape));
	st_plan_free(p);
	st_session_free(s);
}

/* Checks p's arena: every tensor (not a part) on an align boundary, none
 * overlapping another alive at the same step, the arena at least the
 * live bound and holding every tensor. */
static void
check_places(const st_plan *p, size_t align)
{
	int n = st_plan_tensor_count(p);
	cr_assert_gt(n, 0);
	cr_assert_eq(st_plan_arena_align(p), align);
	for (int i = 0; i < n; i++) {
		st_tensor_place a;
		st_plan_tensor_place(p, i, &a);
		cr_assert_leq(a.offset + a.bytes, st_plan_arena_bytes(p), "tensor %d past the arena", i);
		if (a.part)
			continue;
		cr_assert_eq(a.offset % align, 0, "tensor %d at %zu", i, a.offset);
		for (int j = 0; j < i; j++) {
			st_tensor_place b;
			st_plan_tensor_place(p, j, &b);
			if (b.part || a.last_step < b.first_step || b.last_step < a.first_step)
				continue;
			cr_assert(a.offset + a.bytes <= b.offset || b.offset + b.bytes <= a.offset,
			          "tensors %d [%zu, +%zu) and %d [%zu, +%zu) overlap while both live", i, a.offset,
			          a.bytes, j, b.offset, b.bytes);
		}
	}
	cr_assert_geq(st_plan_arena_bytes(p), st_plan_live_bound(p));
}

/* A device backend asks for a coarser alignment (cuDNN wants 256 bytes):
 * the same liveness plan, every tensor on that boundary, the same results. */
Test(engine, the_arena_takes_the_alignment_asked_for)
{
	st_buf b;
	st_buf_init(&b);
	/* Odd sizes (3 x 5 x 7 floats: 420 bytes) so that alignment shows. */
	st_buf_puts(&b, "add input data; set data dims 3x5x7; add triple t0; connect data t0;");
	for (int i = 1; i < 6; i++)
		st_buf_printf(&b, "add triple t%d; connect t%d t%d;", i, i - 1, i);
	st_buf_puts(&b, "add output out; connect t5 out");
	st_session *s = model(b.data);
	st_buf_free(&b);
	st_plan *p64 = compile(s, ST_FORMAT_FP32_NCHW, 1);
	check_places(p64, 64);
	st_plan_options opt = { .format = ST_FORMAT_FP32_NCHW, .threads = 1, .arena_align = 256 };
	st_diag d;
	st_diag_init(&d);
	st_plan *p256 = st_plan_compile(st_session_graph(s), &opt, &d);
	cr_assert_not_null(p256, "%s", d.count ? d.items[0].text : "");
	check_places(p256, 256);
	/* Four 420-byte tensors live at once (the input and the output
	 * throughout, two in flight): 4 x 448 with 64, 4 x 512 with 256. */
	cr_assert_eq(st_plan_live_bound(p64), 4 * 448, "%zu", st_plan_live_bound(p64));
	cr_assert_eq(st_plan_live_bound(p256), 4 * 512, "%zu", st_plan_live_bound(p256));
	bind_random(p64);
	bind_random(p256);
	feed_ramp(p64, st_plan_input_shape(p64, 0));
	feed_ramp(p256, st_plan_input_shape(p256, 0));
	int64_t n1, n2;
	float *y1 = run_and_get(p64, &n1), *y2 = run_and_get(p256, &n2);
	cr_assert_eq(n1, n2);
	cr_assert_arr_eq(y1, y2, sizeof *y1 * (size_t)n1);
	free(y1);
	free(y2);
	st_plan_free(p64);
	st_plan_free(p256);

	/* Not a power of two, or below 64: refused with the reason. */
	size_t bad[] = { 96, 32, 1 << 20 };
	for (int k = 0; k < 3; k++) {
		opt.arena_align = bad[k];
		st_diag_free(&d);
		st_diag_init(&d);
		cr_assert_null(st_plan_compile(st_session_graph(s), &opt, &d));
		cr_assert(d.count > 0 && strstr(d.items[0].text, "must be a power of two from 64") != NULL, "%s",
		          d.count ? d.items[0].text : "no message");
	}
	st_diag_free(&d);
	st_session_free(s);
}
