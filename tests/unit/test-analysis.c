/* Unit tests: the analysis collection's layers against hand-computed
 * values, runtime options changed on a compiled plan, triggers, status
 * lines, and the refusals around them. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "st-engine.h"

/* A checked graph built by an edit script, over the default plugins. */
static st_session *
model(const char *script)
{
	st_session *s = st_session_new(st_graph_new(test_registry()), NULL);
	cr_assert_not_null(st_registry_find_layer(test_registry(), "statistics"),
	                   "the analysis plugin did not load from STRATA_PLUGIN_PATH");
	st_diag d;
	st_diag_init(&d);
	int rc = st_session_run_script(s, script, "test", &d);
	cr_assert_eq(rc, 0, "%s", d.count ? d.items[0].text : "");
	st_diag_free(&d);
	st_graph_check(st_session_graph(s));
	cr_assert_eq(st_session_graph(s)->errors, 0, "the model has type errors");
	return s;
}

static st_plan *
compile(st_session *s, int format)
{
	st_plan_options opt = { .format = format, .threads = 1 };
	st_diag d;
	st_diag_init(&d);
	st_plan *p = st_plan_compile(st_session_graph(s), &opt, &d);
	cr_assert_not_null(p, "%s", d.count ? d.items[0].text : "");
	cr_assert_eq(st_plan_bind_random_weights(p, 1, &d), 0);
	st_diag_free(&d);
	return p;
}

/* Feeds values (float32 NCHW) to input i, whose shape must be want. */
static void
feed(st_plan *p, int i, const char *want, const float *values)
{
	const st_shape *shape = st_plan_input_shape(p, i);
	assert_shape(*shape, want);
	st_tensor t = { .data = (void *)values, .shape = *shape, .layout = ST_LAYOUT_NCHW };
	t.shape.dtype = ST_DTYPE_FLOAT32;
	st_diag d;
	st_diag_init(&d);
	cr_assert_eq(st_plan_set_input(p, i, &t, &d), 0, "%s", d.count ? d.items[0].text : "");
	st_diag_free(&d);
}

/* Runs p and checks output 0 against want (n values, FP32 tolerance). */
static void
run_expect(st_plan *p, const float *want, int64_t n)
{
	st_diag d;
	st_diag_init(&d);
	cr_assert_eq(st_plan_run(p, &d), 0, "%s", d.count ? d.items[0].text : "");
	st_diag_free(&d);
	cr_assert_eq(st_shape_elements(st_plan_output_shape(p, 0)), n);
	float *got = malloc(sizeof *got * (size_t)n);
	st_plan_get_output(p, 0, got);
	char why[256];
	bool ok = test_allclose(got, want, n, 1e-5, why, sizeof why);
	free(got);
	cr_assert(ok, "%s", why);
}

/* Sets a runtime option, which must succeed. */
static void
set(st_plan *p, st_session *s, const char *layer, const char *param, const char *value)
{
	char err[512] = "";
	const st_layer *l = st_graph_find(st_session_graph(s), layer);
	cr_assert_not_null(l);
	cr_assert_eq(st_plan_set_runtime(p, l, param, value, err, sizeof err), 0, "%s", err);
}

/* Sets a runtime option that must be refused; returns the reason. */
static const char *
refused(st_plan *p, st_session *s, const char *layer, const char *param, const char *value)
{
	static char err[512];
	err[0] = '\0';
	const st_layer *l = st_graph_find(st_session_graph(s), layer);
	cr_assert_eq(st_plan_set_runtime(p, l, param, value, err, sizeof err), -1);
	cr_assert(err[0] != '\0', "a refusal without a reason");
	return err;
}

static const char *
status_of(st_plan *p, st_session *s, const char *layer, st_severity *sev)
{
	return st_plan_layer_status(p, st_graph_find(st_session_graph(s), layer), sev);
}

static void
done(st_plan *p, st_session *s)
{
	st_plan_free(p);
	st_session_free(s);
}

Test(analysis, channel_select_follows_first_without_recompiling)
{
	st_session *s = model("add input data; set data dims 4x1x2; add channel_select c; set c count 2; "
	                      "set c first 1; connect data c; add output out; connect c out");
	st_plan *p = compile(s, -1);
	const float x[] = { 0, 1, 2, 3, 4, 5, 6, 7 };
	feed(p, 0, "1x4x1x2", x);
	run_expect(p, (const float[]){ 2, 3, 4, 5 }, 4);
	st_severity sev;
	cr_assert_str_eq(status_of(p, s, "c", &sev), "channels 1 to 2 of 4");
	cr_assert_eq(sev, ST_SEVERITY_INFO);

	set(p, s, "c", "first", "0");
	run_expect(p, (const float[]){ 0, 1, 2, 3 }, 4);
	/* Past the end: the last range that fits, with a warning. */
	set(p, s, "c", "first", "3");
	run_expect(p, (const float[]){ 4, 5, 6, 7 }, 4);
	cr_assert_str_eq(status_of(p, s, "c", &sev), "first 3 is past the end: channels 2 to 3 of 4");
	cr_assert_eq(sev, ST_SEVERITY_WARNING);
	/* The graph keeps its own value: the plan changed only its copy. */
	const st_layer *l = st_graph_find(st_session_graph(s), "c");
	cr_assert_eq(l->params.values[0].i, 1);
	cr_assert_eq(st_plan_layer_params(p, l)[0].i, 3);
	done(p, s);
}

Test(analysis, normalize_modes)
{
	st_session *s = model("add input data; set data dims 2x1x2; add normalize n; connect data n; "
	                      "add output out; connect n out");
	st_plan *p = compile(s, -1);
	feed(p, 0, "1x2x1x2", (const float[]){ 0, 2, 4, 8 });
	/* min_max per channel: each channel to [0, 1]. */
	run_expect(p, (const float[]){ 0, 1, 0, 1 }, 4);
	set(p, s, "n", "over", "tensor");
	run_expect(p, (const float[]){ 0, 0.25f, 0.5f, 1 }, 4);
	/* mean 3.5, population std sqrt(8.75). */
	set(p, s, "n", "mode", "mean_std");
	double sd = sqrt(8.75);
	run_expect(p, (const float[]){ (float)(-3.5 / sd), (float)(-1.5 / sd), (float)(0.5 / sd), (float)(4.5 / sd) },
	           4);
	/* Per channel: means 1 and 6, deviations 1 and 2. */
	set(p, s, "n", "over", "channel");
	run_expect(p, (const float[]){ -1, 1, -1, 1 }, 4);
	set(p, s, "n", "mode", "scale_shift");
	set(p, s, "n", "scale", "2");
	set(p, s, "n", "shift", "-1");
	run_expect(p, (const float[]){ -1, 3, 7, 15 }, 4);
	done(p, s);
}

Test(analysis, normalize_constant_channel_becomes_zero)
{
	st_session *s = model("add input data; set data dims 1x1x3; add normalize n; connect data n; "
	                      "add output out; connect n out");
	st_plan *p = compile(s, -1);
	feed(p, 0, "1x1x1x3", (const float[]){ 5, 5, 5 });
	run_expect(p, (const float[]){ 0, 0, 0 }, 3);
	set(p, s, "n", "mode", "mean_std");
	run_expect(p, (const float[]){ 0, 0, 0 }, 3);
	done(p, s);
}

Test(analysis, threshold_modes)
{
	st_session *s = model("add input data; set data dims 1x1x4; add threshold t; connect data t; "
	                      "add output out; connect t out");
	st_plan *p = compile(s, -1);
	feed(p, 0, "1x1x1x4", (const float[]){ 0.2f, 0.5f, 0.7f, -1 });
	run_expect(p, (const float[]){ 0, 0, 1, 0 }, 4);
	set(p, s, "t", "invert", "true");
	run_expect(p, (const float[]){ 1, 1, 0, 1 }, 4);
	set(p, s, "t", "mode", "to_zero");
	run_expect(p, (const float[]){ 0.2f, 0.5f, 0, -1 }, 4);
	set(p, s, "t", "invert", "false");
	set(p, s, "t", "level", "0");
	run_expect(p, (const float[]){ 0.2f, 0.5f, 0.7f, 0 }, 4);
	done(p, s);
}

Test(analysis, colormap_maps_and_ranges)
{
	st_session *s = model("add input data; set data dims 1x1x3; add colormap c; set c map gray; "
	                      "connect data c; add output out; connect c out");
	st_plan *p = compile(s, -1);
	assert_shape(*st_plan_output_shape(p, 0), "1x3x1x3");
	feed(p, 0, "1x1x1x3", (const float[]){ 0, 0.5f, 1 });
	/* Gray: every channel is the value itself. */
	run_expect(p, (const float[]){ 0, 0.5f, 1, 0, 0.5f, 1, 0, 0.5f, 1 }, 9);
	/* Heat runs from black to white; values outside [low, high] clamp. */
	set(p, s, "c", "map", "heat");
	set(p, s, "c", "low", "0.5");
	run_expect(p, (const float[]){ 0, 0, 1, 0, 0, 1, 0, 0, 1 }, 9);
	/* Viridis has nine stops: over [0, 8] the values 0, 0.5 and 1 land on
	 * the first stop, half way to the second, and on the second. */
	set(p, s, "c", "map", "viridis");
	set(p, s, "c", "low", "0");
	set(p, s, "c", "high", "8");
	run_expect(p, (const float[]){ 0.267f, 0.275f, 0.283f, 0.005f, 0.073f, 0.141f, 0.329f, 0.3935f, 0.458f }, 9);
	/* Automatic range: the sample's own minimum and maximum. */
	set(p, s, "c", "map", "gray");
	set(p, s, "c", "auto_range", "true");
	feed(p, 0, "1x1x1x3", (const float[]){ 2, 3, 4 });
	run_expect(p, (const float[]){ 0, 0.5f, 1, 0, 0.5f, 1, 0, 0.5f, 1 }, 9);
	/* Diverging keeps zero in the middle: -2, 0, 1 over [-2, 2]. */
	set(p, s, "c", "map", "diverging");
	feed(p, 0, "1x1x1x3", (const float[]){ -2, 0, 1 });
	run_expect(p, (const float[]){ 0.230f, 0.865f, (0.865f + 0.706f) / 2, 0.299f, 0.865f,
	                               (0.865f + 0.016f) / 2, 0.754f, 0.865f, (0.865f + 0.150f) / 2 },
	           9);
	done(p, s);
}

Test(analysis, colormap_takes_one_channel)
{
	st_session *s = st_session_new(st_graph_new(test_registry()), NULL);
	cr_assert_eq(test_run(s, "add input data; set data dims 2x3x3; add colormap c; connect data c"), 0);
	st_graph_check(st_session_graph(s));
	cr_assert_gt(st_session_graph(s)->errors, 0, "colormap took two channels");
	st_session_free(s);
}

Test(analysis, difference_modes)
{
	st_session *s = model("add input a; set a dims 1x1x3; add input b; set b dims 1x1x3; "
	                      "add difference d; connect a d; connect b d; add output out; connect d out");
	st_plan *p = compile(s, -1);
	feed(p, 0, "1x1x1x3", (const float[]){ 1, 5, -2 });
	feed(p, 1, "1x1x1x3", (const float[]){ 3, 1, -2 });
	run_expect(p, (const float[]){ 2, 4, 0 }, 3);
	set(p, s, "d", "mode", "signed");
	run_expect(p, (const float[]){ -2, 4, 0 }, 3);
	set(p, s, "d", "mode", "squared");
	run_expect(p, (const float[]){ 4, 16, 0 }, 3);
	done(p, s);
}

Test(analysis, difference_in_fp16_runs_in_fp32)
{
	st_session *s = model("add input a; set a dims 1x1x2; add input b; set b dims 1x1x2; "
	                      "add difference d; connect a d; connect b d; add output out; connect d out");
	st_plan *p = compile(s, ST_FORMAT_FP16_NCHW);
	feed(p, 0, "1x1x1x2", (const float[]){ 1.5f, -2 });
	feed(p, 1, "1x1x1x2", (const float[]){ 0.5f, 2 });
	run_expect(p, (const float[]){ 1, 4 }, 2);
	done(p, s);
}

Test(analysis, statistics_status_trigger_and_clearing)
{
	st_session *s = model("add input data; set data dims 1x1x4; add statistics st; connect data st; "
	                      "add threshold t; connect st t; add output out; connect t out");
	st_plan *p = compile(s, -1);
	const st_layer *l = st_graph_find(st_session_graph(s), "st");
	st_severity sev;
	cr_assert_null(status_of(p, s, "st", &sev), "a status before any run");
	feed(p, 0, "1x1x1x4", (const float[]){ 0, 1, 2, 3 });
	set(p, s, "t", "level", "-10");
	set(p, s, "t", "mode", "to_zero");
	/* A pass-through: the threshold at -10 keeps every value. */
	run_expect(p, (const float[]){ 0, 1, 2, 3 }, 4);
	cr_assert_str_eq(status_of(p, s, "st", &sev),
	                 "min 0 max 3 mean 1.5 std 1.118 NaN 0 Inf 0; runs 1: min 0 max 3 NaN 0 Inf 0");
	cr_assert_eq(sev, ST_SEVERITY_INFO);
	cr_assert_null(status_of(p, s, "t", NULL), "threshold never reports a status");

	/* The second run counts on; a NaN makes the status a warning. */
	feed(p, 0, "1x1x1x4", (const float[]){ NAN, 4, 5, 6 });
	st_diag d;
	st_diag_init(&d);
	cr_assert_eq(st_plan_run(p, &d), 0);
	cr_assert_str_eq(status_of(p, s, "st", &sev),
	                 "min 4 max 6 mean 5 std 0.8165 NaN 1 Inf 0; runs 2: min 0 max 6 NaN 1 Inf 0");
	cr_assert_eq(sev, ST_SEVERITY_WARNING);

	/* The trigger resets the counts for one run, then goes back to false. */
	set(p, s, "st", "reset", "true");
	cr_assert(st_plan_layer_params(p, l)[0].b);
	cr_assert_eq(st_plan_run(p, &d), 0);
	cr_assert_str_eq(status_of(p, s, "st", &sev),
	                 "min 4 max 6 mean 5 std 0.8165 NaN 1 Inf 0; runs 1: min 4 max 6 NaN 1 Inf 0");
	cr_assert_not(st_plan_layer_params(p, l)[0].b, "the trigger stayed pressed");
	cr_assert_eq(st_plan_run(p, &d), 0);
	cr_assert(strstr(status_of(p, s, "st", &sev), "runs 2:") != NULL, "%s", status_of(p, s, "st", &sev));

	/* Status lines belong to one run: a run stopped before any layer
	 * leaves none. */
	volatile sig_atomic_t cancel = 1;
	st_plan_options opt = { .format = -1, .threads = 1, .cancel = &cancel };
	st_plan *q = st_plan_compile(st_session_graph(s), &opt, &d);
	cr_assert_not_null(q);
	cr_assert_eq(st_plan_bind_random_weights(q, 1, &d), 0);
	feed(q, 0, "1x1x1x4", (const float[]){ 0, 1, 2, 3 });
	cancel = 0;
	cr_assert_eq(st_plan_run(q, &d), 0);
	cr_assert_not_null(status_of(q, s, "st", NULL));
	cancel = 1;
	cr_assert_eq(st_plan_run(q, &d), 1);
	cr_assert_null(status_of(q, s, "st", NULL), "the last run's status survived a new run");
	st_plan_free(q);
	st_diag_free(&d);
	done(p, s);
}

Test(analysis, set_runtime_refusals)
{
	st_session *s = model("add input data; set data dims 4x1x2; add channel_select c; set c count 2; "
	                      "connect data c; add statistics st; connect c st; add output out; connect st out");
	st_plan *p = compile(s, -1);
	cr_assert_str_eq(refused(p, s, "c", "count", "1"),
	                 "parameter 'count' of layer 'c' is not a runtime option: changing it needs a new "
	                 "type check and plan");
	cr_assert_str_eq(refused(p, s, "c", "last", "1"), "layer 'c' (channel_select) has no parameter 'last'");
	const char *why = refused(p, s, "c", "first", "-1");
	cr_assert(strstr(why, "parameter 'first' of layer 'c'") == why, "%s", why);
	why = refused(p, s, "c", "first", "two");
	cr_assert(strstr(why, "parameter 'first' of layer 'c'") == why, "%s", why);
	cr_assert_str_eq(refused(p, s, "st", "note", "hello"),
	                 "parameter 'note' of layer 'st' is a label: it is read-only");
	/* Refused values leave the old one in place. */
	const st_layer *l = st_graph_find(st_session_graph(s), "c");
	cr_assert_eq(st_plan_layer_params(p, l)[0].i, 0);
	/* The input layer is in the plan but has no such option. */
	why = refused(p, s, "data", "first", "1");
	cr_assert(strstr(why, "has no parameter 'first'") != NULL, "%s", why);
	done(p, s);
}

Test(analysis, string_runtime_values_stay_valid)
{
	/* A label is read-only, but the plan's copy of it is its own: it
	 * outlives the graph's edits until the plan goes. */
	st_session *s = model("add input data; set data dims 1x1x2; add statistics st; connect data st; "
	                      "add output out; connect st out");
	st_plan *p = compile(s, -1);
	const st_layer *l = st_graph_find(st_session_graph(s), "st");
	const st_value *v = st_plan_layer_params(p, l);
	cr_assert_neq(v[1].s, l->params.values[1].s, "the plan shares the graph's string");
	cr_assert_str_eq(v[1].s, l->params.values[1].s);
	done(p, s);
}

/* ---- registration ---- */

static const st_plugin_info bad_info = { .name = "bad_runtime", .author = "tests", .description = "d",
	                                 .version = "1" };

static int
pass_reshape(st_reshape *r, const st_host_api *api)
{
	(void)api;
	r->outputs[0] = *r->inputs[0];
	return 0;
}

static const st_port_desc port[] = { { "input", 0, "x" } };
static const st_param_desc list_option[] = {
	{ .name = "sizes", .kind = ST_PARAM_DIMS, .default_value = "[1, 2]", .flags = ST_PARAM_RUNTIME,
	  .doc = "A list cannot change at run time." },
};
static const st_param_desc int_trigger[] = {
	{ .name = "go", .kind = ST_PARAM_INT, .default_value = "0", .flags = ST_PARAM_TRIGGER,
	  .doc = "A trigger must be a bool." },
};
static const st_param_desc float_label[] = {
	{ .name = "caption", .kind = ST_PARAM_FLOAT, .default_value = "0", .flags = ST_PARAM_LABEL,
	  .doc = "A label must be text." },
};
static const st_param_desc good_option[] = {
	{ .name = "gain", .kind = ST_PARAM_FLOAT, .default_value = "1", .flags = ST_PARAM_RUNTIME,
	  .doc = "A scalar is fine." },
};
static const st_layer_desc bad_layers[] = {
	{ .name = "list_option", .summary = "s", .inputs = port, .n_inputs = 1, .outputs = port, .n_outputs = 1,
	  .params = list_option, .n_params = 1, .reshape = pass_reshape },
	{ .name = "int_trigger", .summary = "s", .inputs = port, .n_inputs = 1, .outputs = port, .n_outputs = 1,
	  .params = int_trigger, .n_params = 1, .reshape = pass_reshape },
	{ .name = "float_label", .summary = "s", .inputs = port, .n_inputs = 1, .outputs = port, .n_outputs = 1,
	  .params = float_label, .n_params = 1, .reshape = pass_reshape },
	{ .name = "good_option", .summary = "s", .inputs = port, .n_inputs = 1, .outputs = port, .n_outputs = 1,
	  .params = good_option, .n_params = 1, .reshape = pass_reshape },
};

static int
bad_entry(const st_host_api *api, st_plugin_ctx *ctx)
{
	api->declare(ctx, &bad_info);
	for (int i = 0; i < 4; i++)
		api->register_layer(ctx, &bad_layers[i]);
	return 0;
}

Test(analysis, runtime_options_must_be_scalars)
{
	st_registry *r = st_registry_new();
	st_plugin *p = st_registry_load_builtin(r, "test", bad_entry);
	cr_assert(p->loaded);
	cr_assert_eq(p->n_layers, 1, "only the scalar option's type loads");
	cr_assert_not_null(st_registry_find_layer(r, "good_option"));
	cr_assert_eq(p->n_notes, 3);
	cr_assert_str_eq(p->notes[0], "layer type 'list_option' refused: parameter 'sizes' is a runtime option "
	                              "of kind dims, but runtime options must be scalars (bool, int, float, "
	                              "enum or string)");
	cr_assert(strstr(p->notes[1], "'go' is a trigger, which must be a bool") != NULL, "%s", p->notes[1]);
	cr_assert(strstr(p->notes[2], "'caption' is a label, which must be a string") != NULL, "%s", p->notes[2]);
	st_registry_free(r);
}

Test(analysis, editor_steps)
{
	const st_layer_type *t = st_registry_find_layer(test_registry(), "normalize");
	cr_assert_not_null(t);
	const st_param_desc *scale = &t->desc->params[2];
	cr_assert_float_eq(st_param_step(scale), 2.0, 1e-12); /* (100 - -100) / 100 */
	st_param_desc open = *scale;
	open.flags = ST_PARAM_RUNTIME;
	cr_assert_float_eq(st_param_step(&open), 0.1, 1e-12);
	cr_assert_str_eq(st_param_runtime_name(scale), "option");
	cr_assert_str_eq(st_param_runtime_name(&st_registry_find_layer(test_registry(), "statistics")->desc->params[0]),
	                 "trigger");
	cr_assert_null(st_param_runtime_name(&st_registry_find_layer(test_registry(), "channel_select")->desc->params[1]));
}

Test(analysis, every_layer_is_documented)
{
	const char *top = getenv("top_srcdir");
	cr_assert_not_null(top, "top_srcdir is not set (run through make check)");
	const st_registry *r = test_registry();
	int n = 0;
	for (int i = 0; i < r->n_types; i++) {
		const st_layer_desc *d = r->types[i]->desc;
		if (strcmp(r->types[i]->plugin->name, "analysis") != 0)
			continue;
		n++;
		cr_expect_str_eq(d->category, "Analysis");
		cr_expect(d->doc != NULL && strlen(d->doc) > 40, "%s has no doc text", d->name);
		cr_expect_not_null(st_registry_find_impl(r, d->name, "cpu"), "%s has no CPU implementation", d->name);
		char *path = st_xasprintf("%s/docs/layers/prose/%s.md", top, d->name);
		char *text = st_read_file(path, NULL);
		cr_expect_not_null(text, "%s has no prose page", d->name);
		for (int k = 0; text && k < d->n_params; k++)
			cr_expect(strstr(text, d->params[k].name) != NULL, "%s: the prose never mentions '%s'", d->name,
			          d->params[k].name);
		free(text);
		free(path);
	}
	cr_assert_eq(n, 6);
}

/* The counters a device backend compares before replaying a recorded run:
 * each moves when its part changes, and only then. */
Test(analysis, generations_follow_rebuilds_binds_and_runtime_options)
{
	st_session *s = model("add input data; set data dims 1x1x4; add statistics st; connect data st; "
	                      "add threshold t; connect st t; add output out; connect t out");
	st_plan *p = compile(s, -1);
	/* A pass-through threshold. */
	set(p, s, "t", "mode", "to_zero");
	set(p, s, "t", "level", "-10");
	st_plan_generations g0, g;
	st_plan_generations_of(p, &g0);
	cr_assert_gt(g0.build, 0);
	cr_assert_gt(g0.weights, 0, "compile() bound weights");
	feed(p, 0, "1x1x1x4", (const float[]){ 0, 1, 2, 3 });
	run_expect(p, (const float[]){ 0, 1, 2, 3 }, 4);
	st_plan_generations_of(p, &g);
	cr_assert(g.build == g0.build && g.weights == g0.weights && g.runtime == g0.runtime,
	          "a plain run changed a generation");

	set(p, s, "t", "level", "-5");
	st_plan_generations_of(p, &g);
	cr_assert_eq(g.runtime, g0.runtime + 1);
	cr_assert_eq(g.build, g0.build);
	/* A refused value changes nothing. */
	refused(p, s, "t", "level", "banana");
	st_plan_generations_of(p, &g);
	cr_assert_eq(g.runtime, g0.runtime + 1);

	/* A trigger: set (one change), then back to false after the run (another). */
	set(p, s, "st", "reset", "true");
	run_expect(p, (const float[]){ 0, 1, 2, 3 }, 4);
	st_plan_generations_of(p, &g);
	cr_assert_eq(g.runtime, g0.runtime + 3, "runtime generation %llu", (unsigned long long)g.runtime);
	run_expect(p, (const float[]){ 0, 1, 2, 3 }, 4);
	st_plan_generations_of(p, &g);
	cr_assert_eq(g.runtime, g0.runtime + 3, "a run without a trigger changed it");

	/* The same size again: no rebuild; a new size: one. */
	feed(p, 0, "1x1x1x4", (const float[]){ 3, 2, 1, 0 });
	st_plan_generations_of(p, &g);
	cr_assert_eq(g.build, g0.build);
	float six[6] = { 0, 1, 2, 3, 4, 5 };
	st_shape wide = *st_plan_input_shape(p, 0);
	wide.dims[3] = 6;
	wide.dtype = ST_DTYPE_FLOAT32;
	st_tensor t = { .data = six, .shape = wide, .layout = ST_LAYOUT_NCHW };
	st_diag d;
	st_diag_init(&d);
	cr_assert_eq(st_plan_set_input(p, 0, &t, &d), 0, "%s", d.count ? d.items[0].text : "");
	st_plan_generations_of(p, &g);
	cr_assert_gt(g.build, g0.build);
	cr_assert_eq(g.weights, g0.weights, "a new size bound the weights again");

	cr_assert_eq(st_plan_bind_random_weights(p, 2, &d), 0);
	st_plan_generations_of(p, &g);
	cr_assert_eq(g.weights, g0.weights + 1);
	st_diag_free(&d);
	st_plan_free(p);
	st_session_free(s);
}
