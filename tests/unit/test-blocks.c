/* Unit tests: expansions and blocks (plugin ABI 2.3): the cascade
 * convolution expanded into its parts (names, parameters, links, the
 * activation, undo, and the same numbers from the same weights folder), the
 * XWN collection's blocks inserted in every order, the block-style settings
 * transform= and pruning= in model files and commands, and the host's
 * checks of what plugins register. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "st-engine.h"
#include "st-io.h"

/* ---- helpers ---- */

static st_session *
session(const char *script)
{
	return test_session(script);
}

/* Runs script, which must fail; returns the first message (caller frees). */
static char *
failing(st_session *s, const char *script)
{
	st_diag d;
	st_diag_init(&d);
	int rc = st_session_run_script(s, script, "test", &d);
	cr_assert_neq(rc, 0, "'%s' should have failed", script);
	char *text = st_xstrdup(d.count ? d.items[0].text : "");
	st_diag_free(&d);
	return text;
}

#define assert_has(text, needle) \
	cr_assert(strstr((text), (needle)) != NULL, "'%s' not found in:\n%s", (needle), (text))

static st_layer *
layer(st_session *s, const char *name)
{
	st_layer *l = st_graph_find(st_session_graph(s), name);
	cr_assert_not_null(l, "no layer '%s'", name);
	return l;
}

/* A parameter of a layer as `show` writes it ("3x3", "true", "0.3"). */
static char *
param_text(st_session *s, const char *name, const char *param)
{
	st_layer *l = layer(s, name);
	const st_layer_desc *d = l->type->desc;
	int i = st_params_find(d->params, d->n_params, param);
	cr_assert(i >= 0, "%s has no parameter %s", d->name, param);
	st_buf b;
	st_buf_init(&b);
	st_value_to_text(&d->params[i], &l->params.values[i], &b);
	return st_buf_take(&b);
}

#define assert_param(s, name, param, want)                                                         \
	do {                                                                                           \
		char *got_ = param_text((s), (name), (param));                                         \
		cr_assert_str_eq(got_, (want), "%s.%s is %s, expected %s", (name), (param), got_, (want)); \
		free(got_);                                                                            \
	} while (0)

static bool
param_set(st_session *s, const char *name, const char *param)
{
	st_layer *l = layer(s, name);
	int i = st_params_find(l->type->desc->params, l->type->desc->n_params, param);
	cr_assert(i >= 0);
	return l->params.set[i];
}

/* "src.N" of input i of a layer, or "-" when unlinked. */
static void
assert_input(st_session *s, const char *name, int input, const char *want)
{
	st_layer *l = layer(s, name);
	char got[128] = "-";
	if (input < l->n_inputs && l->inputs[input].layer != NULL)
		snprintf(got, sizeof got, "%s.%d", l->inputs[input].layer->name, l->inputs[input].output);
	cr_assert_str_eq(got, want, "input %d of %s is %s, expected %s", input, name, got, want);
}

static char *
text_of(st_session *s)
{
	return st_model_serialize(st_session_graph(s));
}

/* The cascade model the expansion tests start from: data -> casc (relu) -> out. */
#define CASCADE_MODEL                                                                             \
	"add input data 0 0; set data dims 4x6x6;"                                                \
	"add xwn_cascade_convolution casc 0 8; set casc num_output 6; set casc kernel_size 7;"  \
	"activation casc relu; connect data casc;"                                                \
	"add output out 0 16; connect casc out"

/* ---- the cascade's expansion ---- */

Test(expand, cascade_of_kernel_7_becomes_three_stages_a_concatenation_and_a_pointwise)
{
	st_session *s = session(CASCADE_MODEL "; set casc transform 4; set casc pruning 0.3");
	st_graph *g = st_session_graph(s);
	cr_assert_eq(test_run(s, "expand casc"), 0);
	cr_assert_null(st_graph_find(g, "casc"));
	static const char *const parts[] = { "casc_stage0", "casc_stage1", "casc_stage2", "casc_concat",
		                             "casc_pointwise" };
	cr_assert_eq(g->n_layers, 7);
	/* The parts take the layer's place in the model's order. */
	for (int i = 0; i < 5; i++)
		cr_assert_str_eq(g->layers[1 + i]->name, parts[i]);
	for (int j = 0; j < 3; j++) {
		char *name = st_xasprintf("casc_stage%d", j);
		cr_assert_str_eq(layer(s, name)->type_name, "xwn_convolution");
		assert_param(s, name, "num_output", "2"); /* 4 inputs x channel_ratio 0.5 */
		assert_param(s, name, "kernel", "3");
		assert_param(s, name, "stride", "1");
		assert_param(s, name, "pads", "1");
		assert_param(s, name, "bias", "false");
		assert_param(s, name, "use_transform", "true");
		assert_param(s, name, "bit", "4");
		assert_param(s, name, "use_pruning", "true");
		assert_param(s, name, "prun_weight", "0.3");
		cr_assert_null(layer(s, name)->act.type_name);
		free(name);
	}
	assert_input(s, "casc_stage0", 0, "data.0");
	assert_input(s, "casc_stage1", 0, "casc_stage0.0");
	assert_input(s, "casc_stage2", 0, "casc_stage1.0");
	cr_assert_str_eq(layer(s, "casc_concat")->type_name, "concatenation");
	assert_param(s, "casc_concat", "axis", "1");
	for (int j = 0; j < 3; j++) {
		char want[32];
		snprintf(want, sizeof want, "casc_stage%d.0", j);
		assert_input(s, "casc_concat", j, want);
	}
	assert_param(s, "casc_pointwise", "num_output", "6");
	assert_param(s, "casc_pointwise", "kernel", "1");
	assert_param(s, "casc_pointwise", "use_transform", "true");
	assert_input(s, "casc_pointwise", 0, "casc_concat.0");
	/* The activation moved to the output part; the consumer follows. */
	cr_assert_str_eq(layer(s, "casc_pointwise")->act.type_name, "relu");
	assert_input(s, "out", 0, "casc_pointwise.0");
	/* Placed down the canvas from where the layer was; what lay below moved down. */
	cr_assert_eq(layer(s, "casc_stage0")->y, 8);
	cr_assert(layer(s, "casc_stage1")->y > layer(s, "casc_stage0")->y);
	cr_assert(layer(s, "casc_pointwise")->y > layer(s, "casc_concat")->y);
	cr_assert(layer(s, "out")->y > layer(s, "casc_pointwise")->y);
	/* Same shapes, no errors. */
	st_graph_check(g);
	cr_assert_eq(g->errors, 0);
	char shape[64];
	st_shape_format(&layer(s, "casc_pointwise")->outputs[0], shape, sizeof shape);
	cr_assert_str_eq(shape, "1x6x6x6");
	st_session_free(s);
}

Test(expand, undo_restores_the_model_exactly_in_one_step_and_redo_repeats_it)
{
	st_session *s = session(CASCADE_MODEL);
	char *before = text_of(s);
	int depth = st_session_undo_depth(s);
	cr_assert_eq(test_run(s, "expand casc"), 0);
	cr_assert_eq(st_session_undo_depth(s), depth + 1, "expand is one step");
	char *expanded = text_of(s);
	cr_assert_eq(test_run(s, "undo"), 0);
	char *undone = text_of(s);
	cr_assert_str_eq(undone, before);
	cr_assert_eq(test_run(s, "redo"), 0);
	char *redone = text_of(s);
	cr_assert_str_eq(redone, expanded);
	free(before);
	free(expanded);
	free(undone);
	free(redone);
	st_session_free(s);
}

Test(expand, pointwise_takes_stride_pads_and_bias_and_a_single_stage_has_no_concatenation)
{
	st_session *s = session("add input data; set data dims 8x9x9;"
	                        "add cascade c; set c kernel_size 3; set c num_output 5; set c stride 2;"
	                        "set c pads 1; set c bias true; set c mid_channels 3; connect data c");
	cr_assert_eq(test_run(s, "expand c"), 0);
	st_graph *g = st_session_graph(s);
	cr_assert_null(st_graph_find(g, "c_concat"));
	assert_param(s, "c_stage0", "num_output", "3");
	assert_input(s, "c_pointwise", 0, "c_stage0.0");
	assert_param(s, "c_pointwise", "stride", "2");
	assert_param(s, "c_pointwise", "pads", "1");
	assert_param(s, "c_pointwise", "bias", "true");
	/* XWN settings at their defaults stay defaults (the file stays short). */
	cr_assert(!param_set(s, "c_pointwise", "use_transform"));
	cr_assert(!param_set(s, "c_stage0", "bit"));
	st_graph_check(g);
	char shape[64];
	st_shape_format(&layer(s, "c_pointwise")->outputs[0], shape, sizeof shape);
	cr_assert_str_eq(shape, "1x5x6x6");
	st_session_free(s);
}

Test(expand, a_cascade_too_large_for_one_layer_expands_all_the_same)
{
	/* 17 needs eight stages: more weights than one layer may hold. */
	st_session *s = session("add input data; set data dims 4x20x20; add cascade c; set c kernel_size 17;"
	                        "connect data c; add output out; connect c out");
	st_graph *g = st_session_graph(s);
	st_graph_check(g);
	cr_assert_gt(g->errors, 0);
	cr_assert_eq(test_run(s, "expand c"), 0);
	cr_assert_not_null(st_graph_find(g, "c_stage7"));
	st_graph_check(g);
	cr_assert_eq(g->errors, 0);
	st_session_free(s);
}

Test(expand, failures_say_why_and_change_nothing)
{
	/* No input shape and no mid_channels: the stage width is unknown. */
	st_session *s = session("add cascade c; add identity i; add input data; set data dims 2x5x5;"
	                        "add cascade d; connect data d; add identity d_stage1");
	char *before = text_of(s);
	int depth = st_session_undo_depth(s);
	char *why = failing(s, "expand c");
	assert_has(why, "cannot expand 'c'");
	assert_has(why, "mid_channels");
	free(why);
	/* A type without an expansion. */
	why = failing(s, "expand i");
	assert_has(why, "no loaded plugin describes the parts of identity layers");
	free(why);
	/* A part's name is taken by another layer. */
	why = failing(s, "expand d");
	assert_has(why, "d_stage1");
	assert_has(why, "rename that layer first");
	free(why);
	why = failing(s, "expand nothing");
	assert_has(why, "not a layer");
	free(why);
	char *after = text_of(s);
	cr_assert_str_eq(after, before);
	cr_assert_eq(st_session_undo_depth(s), depth);
	free(before);
	free(after);
	st_session_free(s);
}

/* ---- the expanded model computes what the layer did ---- */

static float *
run_model(st_graph *g, const char *weights, const float *input, const st_shape *shape, int64_t *n)
{
	st_plan_options opt = { .format = ST_FORMAT_FP32_NCHW, .threads = 1 };
	st_diag d;
	st_diag_init(&d);
	st_plan *p = st_plan_compile(g, &opt, &d);
	cr_assert_not_null(p, "%s", d.count ? d.items[0].text : "");
	if (weights != NULL)
		cr_assert_eq(st_plan_bind_weights(p, weights, &d), 0, "%s", d.count ? d.items[0].text : "");
	else
		cr_assert_eq(st_plan_bind_random_weights(p, 5, &d), 0);
	st_tensor t = { .data = (void *)input, .shape = *shape, .layout = ST_LAYOUT_NCHW };
	cr_assert_eq(st_plan_set_input(p, 0, &t, &d), 0, "%s", d.count ? d.items[0].text : "");
	cr_assert_eq(st_plan_run(p, &d), 0, "%s", d.count ? d.items[0].text : "");
	*n = st_shape_elements(st_plan_output_shape(p, 0));
	float *y = malloc(sizeof *y * (size_t)*n);
	st_plan_get_output(p, 0, y);
	st_plan_free(p);
	st_diag_free(&d);
	return y;
}

/* Writes the random weights a plan binds for g into dir, by the file
 * convention (layer_weight.npy). */
static void
write_weights(st_graph *g, const char *dir)
{
	st_plan_options opt = { .format = ST_FORMAT_FP32_NCHW, .threads = 1 };
	st_diag d;
	st_diag_init(&d);
	st_plan *p = st_plan_compile(g, &opt, &d);
	cr_assert_not_null(p);
	cr_assert_eq(st_plan_bind_random_weights(p, 99, &d), 0);
	int files = 0;
	for (int i = 0; i < g->n_layers; i++) {
		const st_layer *l = g->layers[i];
		for (int k = 0; k < l->n_weights; k++) {
			st_shape shape;
			const float *w = st_plan_layer_weight(p, l, l->weights[k].name, &shape);
			if (w == NULL)
				continue;
			char *path = st_xasprintf("%s/%s_%s.npy", dir, l->name, l->weights[k].name);
			char err[256];
			cr_assert_eq(st_npy_write(path, &shape, w, err, sizeof err), 0, "%s", err);
			free(path);
			files++;
		}
	}
	cr_assert_gt(files, 0);
	st_plan_free(p);
	st_diag_free(&d);
}

static void
same_numbers(const char *extra)
{
	char *script = st_xasprintf(CASCADE_MODEL "; %s", extra);
	st_session *s = session(script);
	free(script);
	st_graph *g = st_session_graph(s);
	st_graph_check(g);
	cr_assert_eq(g->errors, 0);
	char *dir = test_temp_dir("expand");
	write_weights(g, dir);
	if (strstr(extra, "bias true") != NULL) {
		char *bias = st_xasprintf("%s/casc_pointwise_bias.npy", dir);
		FILE *f = fopen(bias, "rb");
		cr_assert_not_null(f, "no %s", bias);
		fclose(f);
		free(bias);
	}
	st_shape shape = { .dtype = ST_DTYPE_FLOAT32, .rank = 4, .dims = { 1, 4, 6, 6 } };
	st_tensor x;
	st_tensor_random(&shape, 3, &x);
	float *data = x.data;
	for (int i = 0; i < 144; i++)
		data[i] = data[i] * 2 - 1;
	int64_t n0, n1;
	float *y0 = run_model(g, dir, data, &shape, &n0);
	cr_assert_eq(test_run(s, "expand casc"), 0);
	st_graph_check(g);
	cr_assert_eq(g->errors, 0);
	float *y1 = run_model(g, dir, data, &shape, &n1);
	cr_assert_eq(n0, n1);
	char why[256];
	cr_assert(test_allclose(y1, y0, n0, 1e-5, why, sizeof why), "%s: %s", extra, why);
	/* Not trivially equal: the output is not all zeros. */
	double sum = 0;
	for (int64_t i = 0; i < n0; i++)
		sum += fabs(y0[i]);
	cr_assert_gt(sum, 1e-3);
	free(y0);
	free(y1);
	free(x.data);
	test_remove_dir(dir);
	st_session_free(s);
}

Test(expand, the_parts_compute_what_the_layer_did_from_the_same_weights_folder)
{
	same_numbers("set casc bias false");
}

Test(expand, the_same_numbers_with_the_xwn_transform_pruning_a_bias_and_a_stride)
{
	same_numbers("set casc transform 4; set casc pruning 0.5; set casc bias true; set casc stride 2;"
	             "set casc pads 1; activation casc none");
}

/* ---- blocks ---- */

static const char *const roles_of_conv[] = { "conv", "bn", "act", "dropout" };

Test(blocks, every_block_inserts_its_chain_in_the_default_order)
{
	static const struct {
		const char *block, *first_role, *first_type, *input;
	} cases[] = {
		{ "conv_block_1d", "conv", "xwn_convolution", "3x16" },
		{ "conv_block_2d", "conv", "xwn_convolution", "3x8x8" },
		{ "tconv_block_2d", "tconv", "xwn_deconvolution", "3x8x8" },
		{ "cascade_block_1d", "cascade", "xwn_cascade_convolution", "4x16" },
		{ "cascade_block_2d", "cascade", "xwn_cascade_convolution", "4x8x8" },
		{ "fc_block", "fc", "fully_connected", "12" },
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		char *script = st_xasprintf("add input data; set data dims %s; add-block %s b 0 10 num_output=4;"
		                            "connect data b_%s",
		                            cases[c].input, cases[c].block, cases[c].first_role);
		st_session *s = session(script);
		free(script);
		st_graph *g = st_session_graph(s);
		cr_assert_eq(g->n_layers, 5, "%s", cases[c].block);
		char first[64];
		snprintf(first, sizeof first, "b_%s", cases[c].first_role);
		cr_assert_str_eq(layer(s, first)->type_name, cases[c].first_type);
		assert_param(s, first, "num_output", "4");
		cr_assert_str_eq(layer(s, "b_bn")->type_name, "batch_normalization");
		cr_assert_str_eq(layer(s, "b_act")->type_name, "identity");
		cr_assert_str_eq(layer(s, "b_act")->act.type_name, "relu");
		cr_assert_str_eq(layer(s, "b_dropout")->type_name, "dropout");
		char from[72];
		snprintf(from, sizeof from, "%s.0", first);
		assert_input(s, "b_bn", 0, from);
		assert_input(s, "b_act", 0, "b_bn.0");
		assert_input(s, "b_dropout", 0, "b_act.0");
		/* Stacked down from the given place. */
		cr_assert_eq(layer(s, "b_dropout")->x, 0);
		cr_assert_gt(layer(s, "b_dropout")->y, layer(s, "b_act")->y);
		st_graph_check(g);
		cr_assert_eq(g->errors, 0, "%s does not check", cases[c].block);
		st_session_free(s);
	}
}

Test(blocks, the_order_picks_and_orders_the_parts)
{
	static const struct {
		const char *order;
		int n;
		const char *chain[4];
	} cases[] = {
		{ "conv,bn,act", 3, { "conv", "bn", "act" } },
		{ "conv", 1, { "conv" } },
		{ "conv,act,bn", 3, { "conv", "act", "bn" } },
		{ "CONV,DROPOUT", 2, { "conv", "dropout" } }, /* the API writes them in capitals */
		{ "bn,conv", 2, { "bn", "conv" } },
		{ "conv,bn,act,dropout", 4, { "conv", "bn", "act", "dropout" } },
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		char *script = st_xasprintf("add-block conv_block_2d b order=%s", cases[c].order);
		st_session *s = session(script);
		free(script);
		st_graph *g = st_session_graph(s);
		cr_assert_eq(g->n_layers, cases[c].n, "order %s", cases[c].order);
		for (int k = 0; k < cases[c].n; k++) {
			char name[32], from[40];
			snprintf(name, sizeof name, "b_%s", cases[c].chain[k]);
			cr_assert_eq(g->layers[k], layer(s, name), "order %s: %s is not part %d", cases[c].order, name, k);
			if (k > 0) {
				snprintf(from, sizeof from, "b_%s.0", cases[c].chain[k - 1]);
				assert_input(s, name, 0, from);
			} else {
				assert_input(s, name, 0, "-");
			}
		}
		/* Left-out parts are not there at all. */
		for (int r = 0; r < 4; r++) {
			bool in = false;
			for (int k = 0; k < cases[c].n; k++)
				in = in || strcmp(cases[c].chain[k], roles_of_conv[r]) == 0;
			char name[32];
			snprintf(name, sizeof name, "b_%s", roles_of_conv[r]);
			cr_assert_eq(st_graph_find(g, name) != NULL, in, "order %s: %s", cases[c].order, name);
		}
		st_session_free(s);
	}
}

Test(blocks, xwn_settings_and_other_parameters_reach_the_part_that_takes_them)
{
	st_session *s = session("add-block conv_block_2d b num_output=16 kernel=5 stride=2 transform=4 pruning=0.3 "
	                        "max_scale=2 activation=leaky_relu dropout.ratio=0.2 bn.epsilon=0.001");
	assert_param(s, "b_conv", "num_output", "16");
	assert_param(s, "b_conv", "kernel", "5");
	assert_param(s, "b_conv", "stride", "2");
	assert_param(s, "b_conv", "use_transform", "true");
	assert_param(s, "b_conv", "bit", "4");
	assert_param(s, "b_conv", "use_pruning", "true");
	assert_param(s, "b_conv", "prun_weight", "0.3");
	assert_param(s, "b_conv", "max_scale", "2.0");
	assert_param(s, "b_conv", "bias", "false"); /* the API's use_bias=False */
	cr_assert_str_eq(layer(s, "b_act")->act.type_name, "leaky_relu");
	assert_param(s, "b_dropout", "ratio", "0.2");
	assert_param(s, "b_bn", "epsilon", "0.001");
	st_session_free(s);

	/* transform=None, pruning=None: off. The cascade block's cascade part
	 * has the set too. */
	s = session("add-block cascade_block_2d c transform=none pruning=None kernel_size=7 order=cascade,act");
	assert_param(s, "c_cascade", "use_transform", "false");
	assert_param(s, "c_cascade", "use_pruning", "false");
	assert_param(s, "c_cascade", "kernel_size", "7");
	st_session_free(s);

	/* The tconv block names its first part tconv. */
	s = session("add-block TConv2DBlock t stride=2 tconv.transform=3");
	assert_param(s, "t_tconv", "stride", "2");
	assert_param(s, "t_tconv", "bit", "3");
	st_session_free(s);
}

Test(blocks, one_undo_step_and_generated_names_that_do_not_clash)
{
	st_session *s = session("add input conv_block_2d_1_bn");
	char *before = text_of(s);
	cr_assert_eq(test_run(s, "add-block conv_block_2d"), 0);
	/* _1 would take a name that is in use. */
	cr_assert_not_null(st_graph_find(st_session_graph(s), "conv_block_2d_2_conv"));
	cr_assert_eq(test_run(s, "undo"), 0);
	char *after = text_of(s);
	cr_assert_str_eq(after, before);
	free(before);
	free(after);
	st_session_free(s);
}

Test(blocks, mistakes_are_named_and_change_nothing)
{
	st_session *s = session("add-block fc_block f");
	char *before = text_of(s);
	static const struct {
		const char *command, *message;
	} cases[] = {
		{ "add-block fc_block x transform=4", "no part of fc_block takes 'transform'" },
		{ "add-block conv_block_2d y order=conv,bn ratio=0.3", "'ratio' belongs to the part 'dropout'" },
		{ "add-block conv_block_2d y order=conv,bn dropout.ratio=0.3", "not in the order conv,bn" },
		{ "add-block conv_block_2d y order=conv,zz", "'zz' is not a part of conv_block_2d" },
		{ "add-block conv_block_2d y order=conv,conv", "named twice" },
		{ "add-block conv_block_2d y zz.ratio=1", "'zz' is not a part" },
		{ "add-block conv_block_2d y conv.zz=1", "the part 'conv' (xwn_convolution) has no parameter 'zz'" },
		{ "add-block conv_block_2d y num_output=-1", "parameter 'num_output' must be a positive integer" },
		{ "add-block conv_block_2d y transform=2.5", "parameter 'transform' must be a number of bits" },
		{ "add-block conv_block_2d y 3 x", "neither a position" },
		{ "add-block conv_block_2d y junk", "'junk' is neither a position X Y nor KEY=VALUE" },
		{ "add-block conv_block_2d y 1 2 junk", "'junk' is not KEY=VALUE" },
		{ "add-block fc_block f", "the name 'f_fc' is taken" },
		{ "add-block no_such_block", "unknown block 'no_such_block'; known: conv_block_1d" },
		{ "add-block conv_block_2d y activation=nope", "unknown activation 'nope'" },
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		char *why = failing(s, cases[c].command);
		assert_has(why, cases[c].message);
		free(why);
		char *after = text_of(s);
		cr_assert_str_eq(after, before, "%s changed the model", cases[c].command);
		free(after);
	}
	free(before);
	st_session_free(s);
}

static void
collect(void *user, const char *text)
{
	st_buf_printf(user, "%s\n", text);
}

Test(blocks, alone_add_block_lists_the_blocks_and_the_description_names_the_parts)
{
	st_session *s = session("");
	st_buf out;
	st_buf_init(&out);
	st_session_set_print(s, collect, &out);
	cr_assert_eq(test_run(s, "add-block"), 0);
	assert_has(out.data, "conv_block_2d");
	assert_has(out.data, "conv,bn,act,dropout");
	assert_has(out.data, "fc_block");
	cr_assert_eq(st_session_graph(s)->n_layers, 0);
	st_buf_free(&out);
	const st_block_type *b = st_registry_find_block(test_registry(), "Conv2DBlock");
	cr_assert_not_null(b);
	cr_assert_str_eq(b->desc->name, "conv_block_2d");
	cr_assert_eq(st_registry_find_block(test_registry(), "conv2d_block"), b);
	char *text = st_block_describe(test_registry(), b);
	assert_has(text, "# Conv2DBlock (conv_block_2d)");
	assert_has(text, "- conv: xwn_convolution, kernel=[3, 3] bias=false");
	assert_has(text, "- act: identity, activation relu");
	assert_has(text, "Default order: conv,bn,act,dropout");
	free(text);
	st_session_free(s);
}

/* ---- block-style settings: transform= and pruning= ---- */

Test(block_style, set_maps_transform_and_pruning_onto_the_xwn_set)
{
	st_session *s = session("add xwn_convolution c; add cascade k; add convolution plain");
	int depth = st_session_undo_depth(s);
	cr_assert_eq(test_run(s, "set c transform 4"), 0);
	cr_assert_eq(st_session_undo_depth(s), depth + 1, "one step");
	assert_param(s, "c", "use_transform", "true");
	assert_param(s, "c", "bit", "4");
	cr_assert_eq(test_run(s, "set c transform none"), 0);
	assert_param(s, "c", "use_transform", "false");
	assert_param(s, "c", "bit", "4");
	cr_assert_eq(test_run(s, "set c pruning 0.3; set k transform 2; set k pruning 0.7"), 0);
	assert_param(s, "c", "use_pruning", "true");
	assert_param(s, "c", "prun_weight", "0.3");
	assert_param(s, "k", "bit", "2");
	assert_param(s, "k", "prun_weight", "0.7");
	cr_assert_eq(test_run(s, "set c pruning null"), 0);
	assert_param(s, "c", "use_pruning", "false");
	/* Several layers at once, and unset returns both parameters. */
	cr_assert_eq(test_run(s, "set c,k transform 3"), 0);
	assert_param(s, "k", "bit", "3");
	cr_assert_eq(test_run(s, "unset k transform"), 0);
	cr_assert(!param_set(s, "k", "use_transform"));
	cr_assert(!param_set(s, "k", "bit"));
	assert_param(s, "k", "bit", "4");
	/* Saved under the canonical names only. */
	char *text = text_of(s);
	cr_assert_null(strstr(text, "\"transform\""), "%s", text);
	cr_assert_null(strstr(text, "\"pruning\""), "%s", text);
	assert_has(text, "\"use_transform\": true");
	free(text);

	static const struct {
		const char *command, *message;
	} cases[] = {
		{ "set c transform 2.5", "layer 'c': parameter 'transform' must be a number of bits, an integer from 0 to 8" },
		{ "set c transform 9", "got 9" },
		{ "set c pruning x", "layer 'c': parameter 'pruning' must be a pruning edge" },
		{ "set c pruning -1", "got -1" },
		{ "set plain transform 4", "layer 'plain': convolution has no parameter 'transform': it is a block-style setting" },
		{ "set plain pruning none", "XWN parameter set" },
		{ "unset plain transform", "convolution has no parameter 'transform'" },
	};
	char *before = text_of(s);
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		char *why = failing(s, cases[c].command);
		assert_has(why, cases[c].message);
		free(why);
	}
	char *after = text_of(s);
	cr_assert_str_eq(after, before);
	free(before);
	free(after);
	st_session_free(s);
}

static st_graph *
parse(const char *text, st_diag *d)
{
	st_diag_init(d);
	return st_model_parse(text, strlen(text), "m.strata.json", test_registry(), d);
}

Test(block_style, model_files_take_them_and_save_the_canonical_names)
{
	const char *text = "{\"format\": \"strata-model\", \"version\": 1, \"layers\": ["
	                   "{\"name\": \"c\", \"type\": \"xwn_convolution\", \"params\": {\"transform\": 4, \"pruning\": null}},"
	                   "{\"name\": \"t\", \"type\": \"xwn_deconvolution\", \"params\": {\"transform\": null, \"pruning\": 0.25}},"
	                   "{\"name\": \"k\", \"type\": \"cascade\", \"params\": {\"transform\": 1, \"pruning\": 0}}]}";
	st_diag d;
	st_graph *g = parse(text, &d);
	cr_assert_not_null(g, "%s", d.count ? d.items[0].text : "");
	char *saved = st_model_serialize(g);
	cr_assert_null(strstr(saved, "\"transform\""), "%s", saved);
	cr_assert_null(strstr(saved, "\"pruning\""), "%s", saved);
	assert_has(saved, "\"use_transform\": true, \"bit\": 4, \"use_pruning\": false");
	assert_has(saved, "\"use_transform\": false, \"use_pruning\": true, \"prun_weight\": 0.25");
	assert_has(saved, "\"use_transform\": true, \"bit\": 1, \"use_pruning\": true, \"prun_weight\": 0.0");
	/* What was saved reads back the same. */
	st_diag d2;
	st_graph *again = parse(saved, &d2);
	cr_assert_not_null(again);
	char *twice = st_model_serialize(again);
	cr_assert_str_eq(twice, saved);
	free(twice);
	free(saved);
	st_graph_free(again);
	st_graph_free(g);
	st_diag_free(&d);
	st_diag_free(&d2);
}

Test(block_style, model_file_errors_name_the_file_path_and_field)
{
	static const struct {
		const char *params, *type, *message;
	} cases[] = {
		{ "{\"transform\": 2.5}", "xwn_convolution",
		  "error: layer 'c': parameter 'transform' must be a number of bits, an integer "
		  "from 0 to 8, or null (none) to turn use_transform off; got 2.5" },
		{ "{\"pruning\": \"x\"}", "xwn_convolution", "parameter 'pruning' must be a pruning edge" },
		{ "{\"transform\": true}", "xwn_convolution", "got true" },
		{ "{\"transform\": 4}", "convolution",
		  "layer 'c': convolution has no parameter 'transform': it is a block-style setting" },
		{ "{\"transform\": 4, \"bit\": 3}", "xwn_convolution", "both 'transform' and 'bit' are given" },
		{ "{\"use_pruning\": true, \"pruning\": 0.5}", "cascade", "both 'pruning' and 'use_pruning' are given" },
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		char *text = st_xasprintf("{\"format\": \"strata-model\", \"version\": 1, \"layers\": ["
		                          "{\"name\": \"c\", \"type\": \"%s\", \"params\": %s}]}",
		                          cases[c].type, cases[c].params);
		st_diag d;
		st_graph *g = parse(text, &d);
		cr_assert_null(g, "%s loaded", cases[c].params);
		cr_assert_geq(d.count, 1);
		char line[1024];
		snprintf(line, sizeof line, "%s:%d:%d: error: %s", d.items[0].file, d.items[0].line, d.items[0].col,
		         d.items[0].text);
		assert_has(line, cases[c].message);
		assert_has(line, "(at layers[0].params.");
		assert_has(line, "m.strata.json:1:");
		cr_assert_gt(d.items[0].line, 0);
		st_diag_free(&d);
		free(text);
	}
}

/* ---- what plugins may register ---- */

static int
refuses_to_fail(st_expansion *e, const st_host_api *api)
{
	api->expand_fail(e, "this layer has no parts today");
	return -1;
}

static int
links_backwards(st_expansion *e, const st_host_api *api)
{
	api->expand_part(e, "a", "identity", 0, 0);
	api->expand_part(e, "b", "identity", 0, 1);
	api->expand_link(e, "a", 0, "b", 0);
	api->expand_output(e, "b", 0);
	return 0;
}

static int
unknown_type(st_expansion *e, const st_host_api *api)
{
	api->expand_part(e, "a", "no_such_type", 0, 0);
	api->expand_output(e, "a", 0);
	return 0;
}

static int
bad_value(st_expansion *e, const st_host_api *api)
{
	api->expand_part(e, "a", "dropout", 0, 0);
	api->expand_set(e, "a", "ratio", "7");
	api->expand_link(e, "a", 0, NULL, 0);
	api->expand_output(e, "a", 0);
	return 0;
}

static const st_block_part good_parts[] = {
	{ .role = "first", .layer_type = "identity", .activation = "relu", .doc = "x" },
	{ .role = "second", .layer_type = "dropout", .doc = "x" },
};
static const st_block_part twin_parts[] = {
	{ .role = "same", .layer_type = "identity", .doc = "x" },
	{ .role = "same", .layer_type = "dropout", .doc = "x" },
};
static const char *const good_order[] = { "second", "first", NULL };
static const char *const bad_order[] = { "first", "third", NULL };
static const char *const empty_order[] = { NULL };
static const char *const odd_defaults[] = { "ratio", NULL };
static const st_block_part odd_parts[] = {
	{ .role = "second", .layer_type = "dropout", .params = odd_defaults, .doc = "x" },
};
static const char *const odd_order[] = { "second", NULL };

static const st_block_desc test_blocks[] = {
	{ .name = "test_block", .summary = "fine", .parts = good_parts, .n_parts = 2, .order = good_order },
	{ .name = "test_block", .summary = "the same name", .parts = good_parts, .n_parts = 2, .order = good_order },
	{ .name = "twins", .summary = "two parts with one role", .parts = twin_parts, .n_parts = 2, .order = good_order },
	{ .name = "lost", .summary = "an order naming no part", .parts = good_parts, .n_parts = 2, .order = bad_order },
	{ .name = "empty", .summary = "no order", .parts = good_parts, .n_parts = 2, .order = empty_order },
	{ .name = "odd", .summary = "defaults not in pairs", .parts = odd_parts, .n_parts = 1, .order = odd_order },
	{ .name = "Bad-Name", .summary = "x", .parts = good_parts, .n_parts = 2, .order = good_order },
};

static int
test_entry(const st_host_api *api, st_plugin_ctx *ctx)
{
	static const st_plugin_info info = { .name = "blocktest", .version = "1" };
	if (api->declare(ctx, &info) != 0)
		return -1;
	api->register_expansion(ctx, "identity", refuses_to_fail);
	api->register_expansion(ctx, "softmax", links_backwards);
	api->register_expansion(ctx, "flatten", unknown_type);
	api->register_expansion(ctx, "dropout", bad_value);
	api->register_expansion(ctx, "identity", links_backwards); /* taken */
	for (size_t i = 0; i < sizeof test_blocks / sizeof test_blocks[0]; i++)
		api->register_block(ctx, &test_blocks[i]);
	return 0;
}

Test(plugins, the_abi_is_2_4_and_the_host_checks_blocks_and_expansions)
{
	cr_assert_eq(st_host.abi_minor, 8);
	cr_assert(ST_HOST_HAS(&st_host, register_block));
	cr_assert(ST_HOST_HAS(&st_host, expand_fail));
	st_registry *r = st_registry_new();
	st_registry_load_default(r);
	st_plugin *p = st_registry_load_builtin(r, "(test)", test_entry);
	cr_assert(p->loaded, "%s", p->refusal ? p->refusal : "");
	cr_assert_eq(p->n_blocks, 1);
	cr_assert_eq(p->n_expansions, 4);
	st_buf notes;
	st_buf_init(&notes);
	for (int i = 0; i < p->n_notes; i++)
		st_buf_printf(&notes, "%s\n", p->notes[i]);
	assert_has(notes.data, "block 'test_block' refused: the name is already taken");
	assert_has(notes.data, "block 'twins' refused: the role 'same' is given to two parts");
	assert_has(notes.data, "block 'lost' refused: its order names 'third', which is no part's role");
	assert_has(notes.data, "block 'empty' refused: its default order is empty");
	assert_has(notes.data, "block 'odd' refused: the defaults of part 'second' must be name, value pairs");
	assert_has(notes.data, "a block without a valid name was refused");
	assert_has(notes.data, "the expansion of 'identity' refused: one is already registered");
	st_buf_free(&notes);

	/* The good block: its order is its own (second, then first). */
	st_session *s = st_session_new(st_graph_new(r), NULL);
	cr_assert_eq(test_run(s, "add-block test_block t activation=tanh"), 0);
	st_graph *g = st_session_graph(s);
	cr_assert_str_eq(g->layers[0]->name, "t_second");
	cr_assert_str_eq(g->layers[1]->name, "t_first");
	cr_assert_str_eq(g->layers[1]->act.type_name, "tanh");

	/* Expansions that fail leave the model as it was, with the reason. */
	cr_assert_eq(test_run(s, "add identity i; add softmax sm; add flatten f; add input data; set data dims 4;"
	                         "add dropout d; connect data d"),
	             0);
	char *before = st_model_serialize(g);
	static const struct {
		const char *command, *message;
	} cases[] = {
		{ "expand i", "cannot expand 'i': this layer has no parts today" },
		{ "expand sm", "part 'a' is linked from 'b', which is not described before it" },
		{ "expand f", "part 'a' needs the layer type 'no_such_type', which no loaded plugin provides" },
		{ "expand d", "its expansion (plugin blocktest) describes parts that do not fit: layer 'd_a': parameter 'ratio'" },
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		char *why = failing(s, cases[c].command);
		assert_has(why, cases[c].message);
		free(why);
		char *after = st_model_serialize(g);
		cr_assert_str_eq(after, before, "%s changed the model", cases[c].command);
		free(after);
	}
	free(before);
	st_session_free(s);
	st_registry_free(r);
}
