/* Unit tests: the figures of XWN layers (src/engine/engine-xwn.c): which
 * layers are XWN layers, their settings, pruned slices and level counts
 * from a plan and from a weights folder, the transformed weights, the copy
 * without the transform and the difference measure, on the fixed Conv2D
 * example of docs/xwn.md and on the pruning table. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "st-engine.h"
#include "st-io.h"

/* A checked session built by an edit script. */
static st_session *
model(const char *script)
{
	st_session *s = st_session_new(st_graph_new(test_registry()), NULL);
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
compile(const st_graph *g)
{
	st_plan_options opt = { .format = -1, .threads = 1, .keep_outputs = true };
	st_diag d;
	st_diag_init(&d);
	st_plan *p = st_plan_compile(g, &opt, &d);
	cr_assert_not_null(p, "%s", d.count ? d.items[0].text : "");
	st_diag_free(&d);
	return p;
}

static void
bind_dir(st_plan *p, const char *dir)
{
	st_diag d;
	st_diag_init(&d);
	cr_assert_eq(st_plan_bind_weights(p, dir, &d), 0, "%s", d.count ? d.items[0].text : "");
	st_diag_free(&d);
}

static void
write_npy(const char *dir, const char *file, const char *shape, const float *data)
{
	st_shape s = test_shape(shape);
	char *path = st_xasprintf("%s/%s", dir, file);
	char err[256];
	cr_assert_eq(st_npy_write(path, &s, data, err, sizeof err), 0, "%s", err);
	free(path);
}

/* The fixed Conv2D example: out-channel 0 [[2,3],[0,1]], 1 [[.1,.2],[.3,.4]]. */
static const float fixed_kernel[8] = { 2, 3, 0, 1, 0.1f, 0.2f, 0.3f, 0.4f };
/* Its XWN weights (4-bit, max_scale 4) and level indices. */
static const float fixed_xwn[8] = { 1.5f, 3, 0.046875f, 0.75f, 0.125f, 0.25f, 0.25f, 0.5f };

#define FIXED_MODEL                                                                                \
	"add input data; set data dims 1x5x5; add xwn_convolution conv; set conv num_output 2; "      \
	"set conv kernel 2x2; set conv bias false; set conv use_transform true; connect data conv; "  \
	"add output out; connect conv out"

static char *
fixed_weights(void)
{
	char *dir = test_temp_dir("engine-xwn");
	write_npy(dir, "conv_weights.npy", "2x1x2x2", fixed_kernel);
	return dir;
}

Test(engine_xwn, layers_are_found_by_their_parameter_set)
{
	st_session *s = model("add input data; set data dims 3x8x8; add xwn_convolution a; connect data a; "
	                      "add xwn_deconvolution b; set b num_output 4; connect a b; add xwn_cascade_convolution c; connect b c; "
	                      "add convolution d; connect c d; add output out; connect d out");
	st_graph *g = st_session_graph(s);
	cr_assert(st_xwn_layer(st_graph_find(g, "a")));
	cr_assert(st_xwn_layer(st_graph_find(g, "b")));
	cr_assert(st_xwn_layer(st_graph_find(g, "c")));
	cr_assert(!st_xwn_layer(st_graph_find(g, "d")));
	cr_assert(!st_xwn_layer(st_graph_find(g, "data")));
	cr_assert(!st_xwn_layer(NULL));
	/* Only the transposed convolution reads its weights input channels first. */
	cr_assert(!st_xwn_transposed(st_graph_find(g, "a")));
	cr_assert(st_xwn_transposed(st_graph_find(g, "b")));
	cr_assert(!st_xwn_transposed(st_graph_find(g, "c")));
	st_shape filter = test_shape("2x3x3x3"), line = test_shape("2x3x5"), bias = test_shape("2");
	cr_assert(st_xwn_weight_transformed(&filter));
	cr_assert(st_xwn_weight_transformed(&line));
	cr_assert(!st_xwn_weight_transformed(&bias));

	/* Settings from the graph, and in words. */
	cr_assert_eq(test_run(s, "set a use_transform true; set a bit 3; set a use_pruning true; "
	                         "set a prun_weight 0.75"),
	             0);
	st_xwn_settings set;
	cr_assert_eq(st_xwn_settings_of(st_graph_find(g, "a"), NULL, &set), 0);
	cr_assert(set.transform && set.pruning);
	cr_assert_eq(set.bit, 3);
	cr_assert_eq(set.max_scale, 4.0f);
	cr_assert_eq(set.prun_weight, 0.75f);
	cr_assert_eq(st_xwn_settings_of(st_graph_find(g, "d"), NULL, &set), -1);
	static const struct {
		const char *script, *text;
	} words[] = {
		{ "set b use_transform false; set b use_pruning false", "transform and pruning off" },
		{ "set b use_transform true; set b bit 1", "1-bit (sign times mean), no pruning" },
		{ "set b bit 4; set b max_scale 2; set b use_pruning true", "4-bit, max_scale 2, pruning 0.5" },
		{ "set b use_transform false", "no transform, pruning 0.5" },
		{ "set b use_transform true; set b bit 0; set b use_pruning false", "transform and pruning off" },
	};
	for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
		cr_assert_eq(test_run(s, words[i].script), 0, "%s", words[i].script);
		cr_assert_eq(st_xwn_settings_of(st_graph_find(g, "b"), NULL, &set), 0);
		st_buf b;
		st_buf_init(&b);
		st_xwn_settings_text(&set, &b);
		cr_assert_str_eq(b.data, words[i].text);
		st_buf_free(&b);
	}
	st_session_free(s);
}

Test(engine_xwn, fixed_conv2d_figures_from_the_plan_and_the_folder)
{
	char *dir = fixed_weights();
	st_session *s = model(FIXED_MODEL);
	st_graph *g = st_session_graph(s);
	const st_layer *conv = st_graph_find(g, "conv");
	st_plan *p = compile(g);
	bind_dir(p, dir);
	st_xwn_figures f;
	char err[256];
	cr_assert_eq(st_xwn_figures_from_plan(p, conv, &f, err, sizeof err), 0, "%s", err);
	cr_assert(f.active);
	cr_assert(!f.transposed);
	cr_assert_eq(f.n_parts, 1);
	cr_assert_str_eq(f.parts[0].name, "weights");
	cr_assert_eq(f.slices, 2);
	cr_assert_eq(f.pruned, 0);
	cr_assert_eq(f.weights, 8);
	cr_assert_eq(f.levels, 8);
	/* Indices o0 [[2,1],[7,3]], o1 [[3,2],[2,1]]. */
	static const int64_t counts[8] = { 0, 2, 3, 2, 0, 0, 0, 1 };
	for (int k = 0; k < 8; k++)
		cr_assert_eq(f.level_count[k], counts[k], "level %d: %lld", k, (long long)f.level_count[k]);

	/* The same without a plan, straight from the folder. */
	st_xwn_figures g2;
	cr_assert_eq(st_xwn_figures_from_dir(conv, dir, &g2, err, sizeof err), 0, "%s", err);
	cr_assert_eq(g2.n_parts, 1);
	assert_shape(g2.parts[0].shape, "2x1x2x2");
	cr_assert_eq(g2.slices, f.slices);
	cr_assert_eq(g2.pruned, f.pruned);
	cr_assert_eq(g2.weights, f.weights);
	cr_assert_eq(memcmp(g2.level_count, f.level_count, sizeof f.level_count), 0);

	/* The transformed copy, bit for bit the reference's. */
	float *w;
	st_shape shape;
	cr_assert_eq(st_xwn_transformed_weight(p, conv, "weights", &w, &shape, err, sizeof err), 1, "%s", err);
	assert_shape(shape, "2x1x2x2");
	cr_assert_eq(memcmp(w, fixed_xwn, sizeof fixed_xwn), 0);
	free(w);
	cr_assert_eq(st_xwn_transformed_weight(p, conv, "bias", &w, &shape, err, sizeof err), -1);
	cr_assert(strstr(err, "bias") != NULL, "%s", err);
	cr_assert_null(w);
	st_plan_free(p);

	/* A missing file is named. */
	cr_assert_eq(st_xwn_figures_from_dir(conv, "/nonexistent-strata", &g2, err, sizeof err), -1);
	cr_assert(strstr(err, "/nonexistent-strata") != NULL, "%s", err);
	st_session_free(s);
	test_remove_dir(dir);
}

Test(engine_xwn, pruning_and_settings_that_change_nothing)
{
	/* The pruning table of docs/xwn.md: (O=2, I=3, 1x2) with prun_weight 1
	 * zeroes slices (0,0) and (0,1); with everything off nothing changes
	 * and the copy is the bound weights. */
	float w[12] = { 1, -1, 0.2f, 0.2f, 3, -3, 0.5f, 0.5f, 0.5f, -0.5f, -0.5f, 0.5f };
	char *dir = test_temp_dir("engine-xwn");
	write_npy(dir, "conv_weights.npy", "2x3x1x2", w);
	st_session *s = model("add input data; set data dims 3x2x4; add xwn_convolution conv; set conv num_output 2; "
	                      "set conv kernel 1x2; set conv bias false; set conv use_pruning true; "
	                      "set conv prun_weight 1; connect data conv; add output out; connect conv out");
	st_graph *g = st_session_graph(s);
	const st_layer *conv = st_graph_find(g, "conv");
	st_plan *p = compile(g);
	bind_dir(p, dir);
	st_xwn_figures f;
	char err[256];
	cr_assert_eq(st_xwn_figures_from_plan(p, conv, &f, err, sizeof err), 0, "%s", err);
	cr_assert_eq(f.slices, 6);
	cr_assert_eq(f.pruned, 2);
	cr_assert_eq(f.levels, 0, "no transform: no levels");
	float *y;
	st_shape shape;
	cr_assert_eq(st_xwn_transformed_weight(p, conv, "weights", &y, &shape, err, sizeof err), 1, "%s", err);
	static const float want[12] = { 0, -0.0f, 0, 0, 3, -3, 0.5f, 0.5f, 0.5f, -0.5f, -0.5f, 0.5f };
	for (int i = 0; i < 12; i++)
		cr_assert_eq(y[i], want[i], "element %d: %g", i, y[i]);
	free(y);
	st_plan_free(p);

	cr_assert_eq(test_run(s, "set conv use_pruning false"), 0);
	st_graph_check(g);
	p = compile(g);
	bind_dir(p, dir);
	cr_assert_eq(st_xwn_figures_from_plan(p, conv, &f, err, sizeof err), 0, "%s", err);
	cr_assert(!f.active);
	cr_assert_eq(f.pruned, 0);
	cr_assert_eq(st_xwn_transformed_weight(p, conv, "weights", &y, &shape, err, sizeof err), 0, "%s", err);
	cr_assert_eq(memcmp(y, w, sizeof w), 0);
	free(y);
	/* Not an XWN layer, or not in the plan. */
	cr_assert_eq(st_xwn_figures_from_plan(p, st_graph_find(g, "data"), &f, err, sizeof err), -1);
	st_plan_free(p);
	st_session_free(s);
	test_remove_dir(dir);
}

Test(engine_xwn, the_plain_copy_runs_without_the_transform)
{
	char *dir = fixed_weights();
	st_session *s = model(FIXED_MODEL "; add xwn_deconvolution up; set up use_pruning true; connect conv up; "
	                                  "add output out2; connect up out2");
	st_graph *g = st_session_graph(s);
	st_diag d;
	st_diag_init(&d);
	int changed = -1;
	st_graph *plain = st_xwn_graph_plain(g, "fixed", &changed, &d);
	cr_assert_not_null(plain, "%s", d.count ? d.items[0].text : "");
	st_diag_free(&d);
	cr_assert_eq(changed, 2);
	st_xwn_settings set;
	cr_assert_eq(st_xwn_settings_of(st_graph_find(plain, "conv"), NULL, &set), 0);
	cr_assert(!set.transform && !set.pruning);
	cr_assert_eq(set.bit, 4, "the other settings stay");
	cr_assert_eq(st_xwn_settings_of(st_graph_find(plain, "up"), NULL, &set), 0);
	cr_assert(!set.transform && !set.pruning);
	/* The original is untouched. */
	cr_assert_eq(st_xwn_settings_of(st_graph_find(g, "conv"), NULL, &set), 0);
	cr_assert(set.transform);

	/* On x of the example, the two give out_plain and out_xwn. */
	static const float x[25] = { 2, 1, 2, 0, 1, 1, 3, 2, 2, 3, 1, 1, 3, 3, 0, 2, 2, 0, 1, 1, 0, 0, 3, 1, 2 };
	static const float plain_o0[16] = { 10, 10, 6, 6, 12, 15, 13, 13, 7, 11, 16, 7, 10, 7, 4, 7 };
	static const float xwn_o0[16] = { 8.296875f, 9.140625f, 4.59375f, 5.34375f, 11.296875f, 12.796875f,
		                          11.390625f, 12.140625f, 6.09375f, 10.59375f, 14.25f, 5.296875f,
		                          9, 5.25f, 3.890625f, 6.046875f };
	/* The deconvolution's weights, 2 x 1 x 3 x 3 ones, and its bias. */
	float ones[18], zero[1] = { 0 };
	for (int i = 0; i < 18; i++)
		ones[i] = 1;
	write_npy(dir, "up_weights.npy", "2x1x3x3", ones);
	write_npy(dir, "up_bias.npy", "1", zero);
	st_graph *graphs[2] = { g, plain };
	const float *wants[2] = { xwn_o0, plain_o0 };
	float got[2][32];
	for (int k = 0; k < 2; k++) {
		st_plan *p = compile(graphs[k]);
		bind_dir(p, dir);
		st_tensor t = { .data = (void *)x, .shape = test_shape("1x1x5x5"), .layout = ST_LAYOUT_NCHW };
		st_diag_init(&d);
		cr_assert_eq(st_plan_set_input(p, 0, &t, &d), 0);
		cr_assert_eq(st_plan_run(p, &d), 0, "%s", d.count ? d.items[0].text : "");
		st_diag_free(&d);
		cr_assert_eq(st_plan_get_layer_output(p, st_graph_find(graphs[k], "conv"), 0, got[k]), 0);
		for (int i = 0; i < 16; i++)
			cr_assert_float_eq(got[k][i], wants[k][i], 1e-5, "graph %d element %d: %g", k, i, got[k][i]);
		st_plan_free(p);
	}
	double max_abs, rel;
	st_xwn_difference(got[0], got[1], 32, &max_abs, &rel);
	cr_assert_float_eq(max_abs, 2.203125, 1e-6);
	st_graph_free(plain);
	st_session_free(s);
	test_remove_dir(dir);
}

Test(engine_xwn, difference_measures)
{
	static const float a[4] = { 1, 2, 3, 4 }, b[4] = { 1, 2, 3, 5 }, z[4] = { 0, 0, 0, 0 };
	double m, r;
	st_xwn_difference(a, b, 4, &m, &r);
	cr_assert_float_eq(m, 1.0, 1e-12);
	cr_assert_float_eq(r, 1.0 / sqrt(39.0), 1e-12);
	st_xwn_difference(a, a, 4, &m, &r);
	cr_assert_eq(m, 0);
	cr_assert_eq(r, 0);
	st_xwn_difference(z, z, 4, &m, &r);
	cr_assert_eq(r, 0, "both zero: no difference");
	st_xwn_difference(a, z, 4, &m, &r);
	cr_assert(isinf(r), "a difference from zero is infinitely large relative to it");
	float nan[4] = { 1, NAN, 3, 4 };
	st_xwn_difference(nan, b, 4, &m, &r);
	cr_assert(isnan(m) && isnan(r));
}
