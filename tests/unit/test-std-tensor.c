/* Unit tests: std-tensor (inputs, constants, element-wise, concatenation, split) and the activations. */
#include "config.h"

#include <string.h>

#include "helpers.h"

#define SHAPES(...) ((const char *const[]){ __VA_ARGS__ })

/* Asserts that the messages hold text, showing them when they do not. */
#define assert_message(res, text)                                                             \
	cr_assert(strstr((res).messages, (text)) != NULL, "expected \"%s\" in:\n%s", (text),   \
	          (res).messages)

static const st_layer_desc *
layer_desc(const char *name)
{
	const st_layer_type *t = st_registry_find_layer(test_registry(), name);
	cr_assert(t != NULL, "no layer type '%s'", name);
	return t->desc;
}

/* The registry default of one parameter of a layer type. */
static const st_value *
layer_default(const char *type, const char *param)
{
	const st_layer_type *t = st_registry_find_layer(test_registry(), type);
	cr_assert(t != NULL, "no layer type '%s'", type);
	int i = st_params_find(t->desc->params, t->desc->n_params, param);
	cr_assert(i >= 0, "%s has no parameter '%s'", type, param);
	return &t->defaults[i];
}

/* ---- descriptors ---- */

Test(std_tensor, descriptors_complete)
{
	static const struct {
		const char *name, *category;
		bool activation;
	} expected[] = {
		{ "input", "Input/Output", false },   { "output", "Input/Output", false },
		{ "constant", "Input/Output", false }, { "identity", "General", true },
		{ "dropout", "General", false },       { "softmax", "General", false },
		{ "elementwise", "Element-wise", true }, { "linear_blend", "Element-wise", true },
		{ "concatenation", "Shape", true },    { "split", "Shape", false },
	};
	for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++) {
		const st_layer_desc *d = layer_desc(expected[i].name);
		cr_assert_str_eq(d->category, expected[i].category, "%s", d->name);
		cr_assert_eq((d->flags & ST_LAYER_ACTIVATION) != 0, expected[i].activation, "%s", d->name);
		cr_assert(d->display_name && *d->display_name, "%s has no display name", d->name);
		cr_assert(d->summary && *d->summary, "%s has no summary", d->name);
		for (int k = 0; k < d->n_params; k++)
			cr_assert(d->params[k].doc && strlen(d->params[k].doc) > 20, "%s.%s has no real doc",
			          d->name, d->params[k].name);
		for (int k = 0; k < d->n_inputs; k++)
			cr_assert(d->inputs[k].doc && *d->inputs[k].doc, "%s input %d has no doc", d->name, k);
		for (int k = 0; k < d->n_outputs; k++)
			cr_assert(d->outputs[k].doc && *d->outputs[k].doc, "%s output %d has no doc", d->name, k);
	}
}

Test(std_tensor, aliases_resolve)
{
	static const char *const pairs[][2] = {
		{ "in", "input" },      { "out", "output" },         { "eltwise", "elementwise" },
		{ "blend", "linear_blend" }, { "concat", "concatenation" },
	};
	for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
		cr_assert_str_eq(layer_desc(pairs[i][0])->name, pairs[i][1]);
	const st_layer_desc *c = layer_desc("constant");
	cr_assert(c->aliases && strcmp(c->aliases[0], "const") == 0, "constant lists alias const");
}

/* ---- input, output, constant ---- */

Test(std_tensor, input_default_and_dtype)
{
	test_result res;
	cr_assert_eq(test_reshape("input", "", 0, NULL, &res), 0, "%s", res.messages);
	assert_shape(res.outputs[0], "1x3x224x224");
	cr_assert_eq(test_reshape("input", "dims=[10] batch=4 dtype=int64", 0, NULL, &res), 0);
	assert_shape(res.outputs[0], "int64:4x10");
}

Test(std_tensor, output_has_no_outputs)
{
	test_result res;
	cr_assert_eq(test_reshape("output", "", 1, SHAPES("1x10"), &res), 0, "%s", res.messages);
	cr_assert_eq(res.n_outputs, 0);
	cr_assert_neq(test_reshape("output", "", 1, SHAPES(NULL), &res), 0);
	assert_message(res, "not connected");
}

Test(std_tensor, constant_scalar_and_weights)
{
	test_result res;
	cr_assert_eq(test_reshape("constant", "", 0, NULL, &res), 0, "%s", res.messages);
	assert_shape(res.outputs[0], "scalar");
	cr_assert_eq(res.r.n_weights, 1);
	cr_assert_str_eq(res.r.weights[0].name, "values");
	cr_assert(res.r.weights[0].optional);
	cr_assert_eq(res.r.weights[0].shape.rank, 0);

	cr_assert_eq(test_reshape("constant", "dims=2x3 dtype=int64 value=7", 0, NULL, &res), 0);
	assert_shape(res.outputs[0], "int64:2x3");
	char text[64];
	test_shape_text(&res.r.weights[0].shape, text, sizeof text);
	cr_assert_str_eq(text, "int64:2x3");
	cr_assert_eq(res.r.flops, 0);
}

Test(std_tensor, constant_value_must_fit_dtype)
{
	test_result res;
	cr_assert_neq(test_reshape("constant", "dims=4 dtype=int32 value=0.5", 0, NULL, &res), 0);
	assert_message(res, "value 0.5 does not fit dtype int32");
	cr_assert_neq(test_reshape("constant", "dims=4 dtype=uint8 value=256", 0, NULL, &res), 0);
	assert_message(res, "from 0 to 255");
	cr_assert_neq(test_reshape("constant", "dims=4 dtype=bool value=2", 0, NULL, &res), 0);
	assert_message(res, "0 or 1");
	cr_assert_eq(test_reshape("constant", "dims=4 dtype=int8 value=-128", 0, NULL, &res), 0);
	assert_shape(res.outputs[0], "int8:4");
}

Test(std_tensor, constant_overflow)
{
	test_result res;
	cr_assert_neq(test_reshape("constant", "dims=[4294967296,4294967296]", 0, NULL, &res), 0);
	assert_message(res, "more elements than memory can address");
}

/* ---- identity, dropout, softmax ---- */

Test(std_tensor, identity_keeps_dtype)
{
	test_result res;
	cr_assert_eq(test_reshape("identity", "", 1, SHAPES("int8:2x3"), &res), 0);
	assert_shape(res.outputs[0], "int8:2x3");
	cr_assert_eq(res.r.flops, 0);
}

Test(std_tensor, dropout_passes_on)
{
	test_result res;
	cr_assert_eq(test_reshape("dropout", "", 1, SHAPES("1x128"), &res), 0);
	assert_shape(res.outputs[0], "1x128");
	cr_assert_eq(test_reshape("dropout", "ratio=0", 1, SHAPES("uint8:3"), &res), 0);
	assert_shape(res.outputs[0], "uint8:3");
	cr_assert_float_eq(layer_default("dropout", "ratio")->f, 0.5, 1e-12);
}

Test(std_tensor, dropout_ratio_limits)
{
	/* Values below 0 or above 1 are refused by value parsing; 1 reaches the reshape. */
	const st_layer_desc *d = layer_desc("dropout");
	cr_assert(d->params[0].flags & ST_PARAM_HAS_MIN);
	cr_assert_eq(d->params[0].min, 0);
	char err[256];
	st_value v;
	cr_assert_neq(st_value_from_text(&d->params[0], "1.5", &v, err, sizeof err), 0);
	cr_assert_neq(st_value_from_text(&d->params[0], "-0.1", &v, err, sizeof err), 0);
	test_result res;
	cr_assert_neq(test_reshape("dropout", "ratio=1", 1, SHAPES("1x128"), &res), 0);
	assert_message(res, "below 1");
}

Test(std_tensor, softmax_axis_range)
{
	test_result res;
	cr_assert_eq(test_reshape("softmax", "", 1, SHAPES("2x10"), &res), 0, "%s", res.messages);
	assert_shape(res.outputs[0], "2x10");
	cr_assert_float_eq(res.r.flops, 100.0, 1e-9);
	cr_assert_eq(test_reshape("softmax", "axis=-2", 1, SHAPES("2x10"), &res), 0);
	cr_assert_eq(test_reshape("softmax", "axis=1", 1, SHAPES("2x10"), &res), 0);
	cr_assert_neq(test_reshape("softmax", "axis=2", 1, SHAPES("2x10"), &res), 0);
	assert_message(res, "axis 2 is out of range for input 2x10: it must be from -2 to 1");
	cr_assert_neq(test_reshape("softmax", "axis=-3", 1, SHAPES("2x10"), &res), 0);
	assert_message(res, "axis -3 is out of range");
}

Test(std_tensor, softmax_needs_float)
{
	test_result res;
	cr_assert_neq(test_reshape("softmax", "", 1, SHAPES("int64:2x10"), &res), 0);
	assert_message(res, "needs a float input");
	cr_assert_eq(test_reshape("softmax", "", 1, SHAPES("float16:2x10"), &res), 0);
	assert_shape(res.outputs[0], "float16:2x10");
	cr_assert_neq(test_reshape("softmax", "axis=0", 1, SHAPES("scalar"), &res), 0);
	assert_message(res, "rank 1 or more");
}

/* ---- elementwise ---- */

Test(std_tensor, eltwise_numpy_broadcast)
{
	test_result res;
	cr_assert_eq(test_reshape("elementwise", "", 2, SHAPES("2x1x3", "4x1"), &res), 0, "%s", res.messages);
	assert_shape(res.outputs[0], "2x4x3");
	cr_assert_float_eq(res.r.flops, 24.0, 1e-9);
	cr_assert_eq(test_reshape("elementwise", "operation=mul", 2, SHAPES("scalar", "3x5"), &res), 0);
	assert_shape(res.outputs[0], "3x5");
}

Test(std_tensor, eltwise_three_inputs)
{
	test_result res;
	cr_assert_eq(test_reshape("eltwise", "operation=max", 3, SHAPES("2x3", "3", "1x1"), &res), 0,
	             "%s", res.messages);
	assert_shape(res.outputs[0], "2x3");
	cr_assert_float_eq(res.r.flops, 12.0, 1e-9);
	cr_assert_eq(test_reshape("eltwise", "", 3, SHAPES("5x1x1", "1x4x1", "1x1x3"), &res), 0);
	assert_shape(res.outputs[0], "5x4x3");
	cr_assert_float_eq(res.r.flops, 120.0, 1e-9);
}

Test(std_tensor, eltwise_broadcast_error_names_shapes)
{
	test_result res;
	cr_assert_neq(test_reshape("elementwise", "", 3, SHAPES("2x3", "2x1", "4x3"), &res), 0);
	assert_message(res, "input 2 (4x3) does not broadcast with input 0 (2x3)");
	assert_message(res, "sizes 4 and 2");
	cr_assert_neq(test_reshape("elementwise", "", 2, SHAPES("1x3x8x8", "5x8"), &res), 0);
	assert_message(res, "input 1 (5x8) does not broadcast with input 0 (1x3x8x8)");
}

Test(std_tensor, eltwise_single_input_info)
{
	test_result res;
	cr_assert_eq(test_reshape("elementwise", "", 1, SHAPES("1x3x4x4"), &res), 0);
	assert_shape(res.outputs[0], "1x3x4x4");
	assert_message(res, "info: only one input: the layer passes it on");
	cr_assert_eq(res.r.flops, 0);
}

Test(std_tensor, eltwise_hole_is_reported)
{
	test_result res;
	cr_assert_neq(test_reshape("elementwise", "", 3, SHAPES("1x3", NULL, "1x3"), &res), 0);
	assert_message(res, "not connected: 1");
}

Test(std_tensor, eltwise_dtypes)
{
	test_result res;
	cr_assert_neq(test_reshape("elementwise", "", 2, SHAPES("1x3", "int64:1x3"), &res), 0);
	assert_message(res, "input 1 is int64 but input 0 is float32");
	cr_assert_eq(test_reshape("elementwise", "operation=sub", 2, SHAPES("int32:2x2", "int32:2"), &res), 0);
	assert_shape(res.outputs[0], "int32:2x2");
	cr_assert_neq(test_reshape("elementwise", "operation=div", 2, SHAPES("int32:2x2", "int32:2"), &res), 0);
	assert_message(res, "div needs float inputs");
	cr_assert_eq(test_reshape("elementwise", "operation=div", 2, SHAPES("float16:2x2", "float16:2"), &res), 0);
	cr_assert_neq(test_reshape("elementwise", "operation=min", 2, SHAPES("bool:2", "bool:2"), &res), 0);
	assert_message(res, "not bool");
}

Test(std_tensor, eltwise_channel_broadcast)
{
	test_result res;
	const char *ok[] = { "16", "1x16", "2x16", "1x16x1x1" };
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		cr_assert_eq(test_reshape("elementwise", "operation=mul broadcast=channel", 2,
		                          SHAPES("2x16x8x8", ok[i]), &res),
		             0, "%s: %s", ok[i], res.messages);
		assert_shape(res.outputs[0], "2x16x8x8");
		cr_assert_float_eq(res.r.flops, 2048.0, 1e-9);
	}
	/* Plain numpy broadcasting would refuse [N,C] against N, C, H, W. */
	cr_assert_neq(test_reshape("elementwise", "", 2, SHAPES("2x16x8x8", "2x16"), &res), 0);
}

Test(std_tensor, eltwise_channel_errors)
{
	test_result res;
	const char *bad[] = { "8", "3x16", "1x16x1", "1x16x2x1", "16x1x1" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		cr_assert_neq(test_reshape("elementwise", "broadcast=channel", 2, SHAPES("2x16x8x8", bad[i]), &res),
		              0, "%s was accepted", bad[i]);
		assert_message(res, "not a per-channel vector for input 0 (2x16x8x8)");
	}
	cr_assert_neq(test_reshape("elementwise", "broadcast=channel", 2, SHAPES("16", "16"), &res), 0);
	assert_message(res, "rank 2 or more");
}

/* ---- linear_blend ---- */

Test(std_tensor, blend_broadcast_and_flops)
{
	test_result res;
	cr_assert_eq(test_reshape("linear_blend", "alpha=0.25", 2, SHAPES("1x3x4x4", "1x1x4x4"), &res), 0,
	             "%s", res.messages);
	assert_shape(res.outputs[0], "1x3x4x4");
	cr_assert_float_eq(res.r.flops, 144.0, 1e-9);
	cr_assert_float_eq(layer_default("blend", "alpha")->f, 0.5, 1e-12);
}

Test(std_tensor, blend_errors)
{
	test_result res;
	cr_assert_neq(test_reshape("blend", "", 2, SHAPES("1x3", "float16:1x3"), &res), 0);
	assert_message(res, "input b is float16 but input a is float32");
	cr_assert_neq(test_reshape("blend", "", 2, SHAPES("int32:1x3", "int32:1x3"), &res), 0);
	assert_message(res, "needs float inputs");
	cr_assert_neq(test_reshape("blend", "", 2, SHAPES("1x3", "1x4"), &res), 0);
	assert_message(res, "input b (1x4) does not broadcast with input a (1x3)");
	cr_assert_neq(test_reshape("blend", "", 2, SHAPES("1x3", NULL), &res), 0);
	assert_message(res, "not connected: 1");
}

/* ---- concatenation ---- */

Test(std_tensor, concat_channels)
{
	test_result res;
	cr_assert_eq(test_reshape("concatenation", "axis=1", 2, SHAPES("1x3x8x8", "1x5x8x8"), &res), 0,
	             "%s", res.messages);
	assert_shape(res.outputs[0], "1x8x8x8");
	cr_assert_eq(res.r.flops, 0);
}

Test(std_tensor, concat_negative_axis_three_inputs)
{
	test_result res;
	cr_assert_eq(test_reshape("concat", "axis=-1", 3, SHAPES("int64:2x3", "int64:2x4", "int64:2x1"), &res), 0,
	             "%s", res.messages);
	assert_shape(res.outputs[0], "int64:2x8");
	cr_assert_eq(test_reshape("concat", "axis=-4", 2, SHAPES("1x3x8x8", "2x3x8x8"), &res), 0);
	assert_shape(res.outputs[0], "3x3x8x8");
}

Test(std_tensor, concat_mismatch_message)
{
	test_result res;
	cr_assert_neq(test_reshape("concatenation", "axis=1", 3, SHAPES("1x3x8x8", "1x5x8x8", "1x4x16x16"), &res),
	              0);
	assert_message(res, "input 2 is 1x4x16x16 but input 0 is 1x3x8x8: dim 2 differs (16 vs 8)");
}

Test(std_tensor, concat_errors)
{
	test_result res;
	cr_assert_neq(test_reshape("concat", "", 2, SHAPES("1x3x8x8", "1x3x8"), &res), 0);
	assert_message(res, "input 1 is 1x3x8 (rank 3) but input 0 is 1x3x8x8 (rank 4)");
	cr_assert_neq(test_reshape("concat", "", 2, SHAPES("1x3", "int8:1x3"), &res), 0);
	assert_message(res, "input 1 is int8 but input 0 is float32");
	cr_assert_neq(test_reshape("concat", "axis=4", 2, SHAPES("1x3x8x8", "1x3x8x8"), &res), 0);
	assert_message(res, "axis 4 is out of range for input 0 (1x3x8x8): it must be from -4 to 3");
	cr_assert_neq(test_reshape("concat", "axis=0", 2, SHAPES("scalar", "scalar"), &res), 0);
	assert_message(res, "scalar");
	cr_assert_eq(test_reshape("concat", "", 1, SHAPES("1x3"), &res), 0);
	assert_message(res, "only one input");
}

/* ---- split ---- */

Test(std_tensor, split_equal)
{
	test_result res;
	cr_assert_eq(test_reshape("split", "", 1, SHAPES("1x6x4x4"), &res), 0, "%s", res.messages);
	cr_assert_eq(res.n_outputs, 2);
	assert_shape(res.outputs[0], "1x3x4x4");
	assert_shape(res.outputs[1], "1x3x4x4");
	cr_assert(layer_desc("split")->flags & ST_LAYER_VARIABLE_OUTPUTS);
	cr_assert_eq(layer_desc("split")->n_outputs, 1);
}

Test(std_tensor, split_uneven_rounds_up)
{
	test_result res;
	/* ONNX 18: ceil(8 / 3) = 3, so 3, 3 and the remaining 2. */
	cr_assert_eq(test_reshape("split", "num_outputs=3", 1, SHAPES("2x8"), &res), 0, "%s", res.messages);
	cr_assert_eq(res.n_outputs, 3);
	assert_shape(res.outputs[0], "2x3");
	assert_shape(res.outputs[1], "2x3");
	assert_shape(res.outputs[2], "2x2");
	cr_assert_eq(test_reshape("split", "axis=0 num_outputs=4", 1, SHAPES("int32:10"), &res), 0);
	cr_assert_eq(res.n_outputs, 4);
	assert_shape(res.outputs[0], "int32:3");
	assert_shape(res.outputs[3], "int32:1");
}

Test(std_tensor, split_uneven_that_does_not_fit)
{
	test_result res;
	/* ceil(5 / 4) = 2, and 3 parts of 2 already take 6. */
	cr_assert_neq(test_reshape("split", "num_outputs=4", 1, SHAPES("1x5"), &res), 0);
	assert_message(res, "leave -1 for the last one");
	/* ceil(4 / 3) = 2: the last part is empty, which ONNX allows. */
	cr_assert_eq(test_reshape("split", "num_outputs=3", 1, SHAPES("1x4"), &res), 0);
	assert_shape(res.outputs[2], "1x0");
	assert_message(res, "warning: num_outputs 3 on a size of 4 leaves the last output empty");
}

Test(std_tensor, split_explicit)
{
	test_result res;
	cr_assert_eq(test_reshape("split", "axis=-1 split=[2,3,5] num_outputs=7", 1, SHAPES("4x10"), &res), 0,
	             "%s", res.messages);
	cr_assert_eq(res.n_outputs, 3);
	assert_shape(res.outputs[0], "4x2");
	assert_shape(res.outputs[1], "4x3");
	assert_shape(res.outputs[2], "4x5");
	cr_assert_neq(test_reshape("split", "split=[2,3,4]", 1, SHAPES("1x10"), &res), 0);
	assert_message(res, "split sizes add up to 9, but dim 1 of the input (1x10) is 10");
	cr_assert_neq(test_reshape("split", "axis=2", 1, SHAPES("1x10"), &res), 0);
	assert_message(res, "axis 2 is out of range");
}

/* ---- activations ---- */

static const st_activation_type *
activation(const char *name)
{
	const st_activation_type *a = st_registry_find_activation(test_registry(), name);
	cr_assert(a != NULL, "no activation '%s'", name);
	return a;
}

/* The default of coefficient name of activation a. */
static const st_value *
coefficient(const st_activation_type *a, const char *name)
{
	int i = st_params_find(a->desc->params, a->desc->n_params, name);
	cr_assert(i >= 0, "%s has no coefficient '%s'", a->desc->name, name);
	return &a->defaults[i];
}

Test(std_tensor, activations_registered)
{
	static const char *const names[] = { "relu",   "leaky_relu",   "prelu",      "elu",  "selu",
		                             "sigmoid", "tanh",        "softplus",   "hard_sigmoid",
		                             "hard_swish", "silu",     "gelu",       "mish", "clip" };
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		const st_activation_type *a = activation(names[i]);
		char prefix[32];
		snprintf(prefix, sizeof prefix, "%s: ", names[i]);
		cr_assert(a->desc->summary && strncmp(a->desc->summary, prefix, strlen(prefix)) == 0,
		          "the summary of %s should start with its name and give the formula", names[i]);
		cr_assert(a->desc->display_name && *a->desc->display_name);
		for (int k = 0; k < a->desc->n_params; k++)
			cr_assert(a->desc->params[k].doc && strlen(a->desc->params[k].doc) > 10, "%s.%s has no doc",
			          names[i], a->desc->params[k].name);
	}
	cr_assert_eq(activation("relu")->desc->n_params, 0);
	cr_assert_eq(activation("mish")->desc->n_params, 0);
}

Test(std_tensor, activation_defaults)
{
	cr_assert_eq(coefficient(activation("leaky_relu"), "alpha")->f, 0.01);
	cr_assert_eq(coefficient(activation("prelu"), "alpha")->f, 0.25);
	cr_assert_eq(coefficient(activation("elu"), "alpha")->f, 1.0);
	/* ONNX's float32 constants, exactly. */
	cr_assert_eq(coefficient(activation("selu"), "alpha")->f, 1.67326319217681884765625);
	cr_assert_eq(coefficient(activation("selu"), "gamma")->f, 1.05070102214813232421875);
	cr_assert_eq(coefficient(activation("hard_sigmoid"), "alpha")->f, 0.2);
	cr_assert_eq(coefficient(activation("hard_sigmoid"), "beta")->f, 0.5);
	cr_assert_eq(coefficient(activation("clip"), "min")->f, 0.0);
	cr_assert_eq(coefficient(activation("clip"), "max")->f, 6.0);
	const st_activation_type *gelu = activation("gelu");
	const st_value *approx = coefficient(gelu, "approximate");
	cr_assert_eq(approx->kind, ST_PARAM_ENUM);
	cr_assert_str_eq(gelu->desc->params[0].enum_values[approx->i], "none");
	cr_assert_str_eq(gelu->desc->params[0].enum_values[1], "tanh");
}

Test(std_tensor, activation_summaries_explain)
{
	cr_assert(strstr(activation("prelu")->desc->summary, "prelu_slope.npy") != NULL);
	cr_assert(strstr(activation("clip")->desc->summary, "relu6") != NULL);
	cr_assert(strstr(activation("clip")->desc->summary, "not representable") != NULL);
	cr_assert_str_eq(activation("leaky_relu")->desc->summary, "leaky_relu: x if x ≥ 0, else alpha·x");
}
