/* Unit tests: std-norm (normalisation, fully connected, matrix multiply). */
#include "config.h"

#include <string.h>

#include "helpers.h"

/* Asserts a failed reshape whose messages contain text. */
#define assert_error(res, text)                                                                  \
	do {                                                                                     \
		cr_assert_neq((res).rc, 0, "expected an error mentioning '%s'", (text));         \
		cr_assert(strstr((res).messages, (text)) != NULL, "expected '%s' in:\n%s", (text), \
		          (res).messages);                                                       \
	} while (0)

/* Asserts that weight i of a reshape has this name and shape. */
static void
assert_weight(const test_result *res, int i, const char *name, const char *shape)
{
	cr_assert_lt(i, res->r.n_weights, "only %d weights declared", res->r.n_weights);
	cr_assert_str_eq(res->r.weights[i].name, name);
	cr_assert_not(res->r.weights[i].optional, "weight %s should not be optional", name);
	assert_shape(res->r.weights[i].shape, shape);
}

static int
run_one(const char *type, const char *params, const char *input, test_result *res)
{
	return test_reshape(type, params, 1, (const char *[]){ input }, res);
}

static int
run_matmul(const char *a, const char *b, test_result *res)
{
	return test_reshape("matrix_multiply", "", 2, (const char *[]){ a, b }, res);
}

/* ---- batch normalisation ---- */

Test(std_norm, batch_norm_shape_weights_flops)
{
	test_result res;
	cr_assert_eq(run_one("batch_normalization", "", "1x64x56x56", &res), 0, "%s", res.messages);
	assert_shape(res.outputs[0], "1x64x56x56");
	cr_assert_eq(res.r.n_weights, 4);
	assert_weight(&res, 0, "scale", "64");
	assert_weight(&res, 1, "bias", "64");
	assert_weight(&res, 2, "mean", "64");
	assert_weight(&res, 3, "variance", "64");
	/* 2 * 64 * 56 * 56. */
	cr_assert_eq(res.r.flops, 401408.0, "flops %.0f", res.r.flops);
}

Test(std_norm, batch_norm_ranks_and_aliases)
{
	test_result res;
	cr_assert_eq(run_one("bn", "epsilon=0.001", "8x100", &res), 0, "%s", res.messages);
	assert_shape(res.outputs[0], "8x100");
	assert_weight(&res, 3, "variance", "100");
	cr_assert_eq(run_one("batchnorm", "", "2x3x4x5x6", &res), 0, "%s", res.messages);
	assert_shape(res.outputs[0], "2x3x4x5x6");
	run_one("bn", "", "100", &res);
	assert_error(res, "input 100 has rank 1, but batch_normalization needs N x C x ... (rank 2 or more)");
}

Test(std_norm, batch_norm_dtypes)
{
	test_result res;
	cr_assert_eq(run_one("bn", "", "float16:1x8x4x4", &res), 0, "%s", res.messages);
	assert_shape(res.outputs[0], "float16:1x8x4x4");
	/* Weights are read as FP32 whatever the input. */
	assert_weight(&res, 0, "scale", "8");
	run_one("bn", "", "int32:1x8x4x4", &res);
	assert_error(res, "input 1x8x4x4 is int32, but batch_normalization needs float32 or float16");
}

/* ---- instance normalisation ---- */

Test(std_norm, instance_norm)
{
	test_result res;
	cr_assert_eq(run_one("instance_normalization", "epsilon=0", "1x3x32x32", &res), 0, "%s",
	             res.messages);
	assert_shape(res.outputs[0], "1x3x32x32");
	cr_assert_eq(res.r.n_weights, 2);
	assert_weight(&res, 0, "scale", "3");
	assert_weight(&res, 1, "bias", "3");
	/* 5 * 3 * 1024. */
	cr_assert_eq(res.r.flops, 15360.0, "flops %.0f", res.r.flops);
	cr_assert_eq(run_one("instnorm", "", "float16:2x4x10", &res), 0, "%s", res.messages);
	assert_shape(res.outputs[0], "float16:2x4x10");
	run_one("instnorm", "", "2x4", &res);
	assert_error(res, "input 2x4 has rank 2, but instance_normalization needs N x C x spatial (rank 3");
	run_one("instnorm", "", "bool:2x4x3", &res);
	assert_error(res, "is bool");
}

/* ---- fully connected ---- */

Test(std_norm, fc_flattens)
{
	test_result res;
	cr_assert_eq(run_one("fully_connected", "num_output=1000", "1x512x7x7", &res), 0, "%s", res.messages);
	assert_shape(res.outputs[0], "1x1000");
	/* K = 512 * 7 * 7 = 25088. */
	assert_weight(&res, 0, "weights", "1000x25088");
	assert_weight(&res, 1, "bias", "1000");
	/* 2 * 25088 * 1000 + 1000. */
	cr_assert_eq(res.r.flops, 50177000.0, "flops %.0f", res.r.flops);
}

Test(std_norm, fc_two_dims_and_no_bias)
{
	test_result res;
	cr_assert_eq(run_one("fc", "num_output=3 bias=false", "4x10", &res), 0, "%s", res.messages);
	assert_shape(res.outputs[0], "4x3");
	cr_assert_eq(res.r.n_weights, 1);
	assert_weight(&res, 0, "weights", "3x10");
	/* 2 * 4 * 10 * 3. */
	cr_assert_eq(res.r.flops, 240.0, "flops %.0f", res.r.flops);
	cr_assert_eq(run_one("dense", "num_output=7", "float16:2x3x5", &res), 0, "%s", res.messages);
	assert_shape(res.outputs[0], "float16:2x7");
	assert_weight(&res, 0, "weights", "7x15");
}

Test(std_norm, fc_errors)
{
	test_result res;
	run_one("fc", "", "10", &res);
	assert_error(res, "input 10 has rank 1, but fully_connected needs a batch dimension");
	run_one("fc", "", "int64:1x10", &res);
	assert_error(res, "input 1x10 is int64, but fully_connected needs float32 or float16");
	/* The weights would be 2^53 x 4096 = 2^65 elements. */
	run_one("fc", "num_output=9007199254740992", "1x4096", &res);
	assert_error(res, "the weights 9007199254740992x4096 would hold more elements");
	/* K itself overflows: 2^32 * 2^32 features. */
	run_one("fc", "", "1x4294967296x4294967296", &res);
	assert_error(res, "more features per sample than fit in 64 bits");
}

/* ---- matrix multiply ---- */

Test(std_norm, matmul_matrices)
{
	test_result res;
	cr_assert_eq(run_matmul("2x3", "3x4", &res), 0, "%s", res.messages);
	assert_shape(res.outputs[0], "2x4");
	cr_assert_eq(res.r.n_weights, 0);
	/* 2 * 2 * 3 * 4. */
	cr_assert_eq(res.r.flops, 48.0, "flops %.0f", res.r.flops);
	cr_assert_eq(test_reshape("matmul", "", 2, (const char *[]){ "int64:5x2", "int64:2x1" }, &res), 0,
	             "%s", res.messages);
	assert_shape(res.outputs[0], "int64:5x1");
}

Test(std_norm, matmul_vector_promotion)
{
	test_result res;
	/* [3] becomes 1x3, and the 1 is dropped again. */
	cr_assert_eq(run_matmul("3", "3x4", &res), 0, "%s", res.messages);
	assert_shape(res.outputs[0], "4");
	/* [3] becomes 3x1, and the 1 is dropped again. */
	cr_assert_eq(run_matmul("2x3", "3", &res), 0, "%s", res.messages);
	assert_shape(res.outputs[0], "2");
	/* Two vectors give their dot product, a scalar: 2 * 3 flops. */
	cr_assert_eq(run_matmul("3", "3", &res), 0, "%s", res.messages);
	assert_shape(res.outputs[0], "scalar");
	cr_assert_eq(res.r.flops, 6.0, "flops %.0f", res.r.flops);
	/* A vector against a batch: 1x3 times 2x(3x4) gives 2x1x4, then 2x4. */
	cr_assert_eq(run_matmul("3", "2x3x4", &res), 0, "%s", res.messages);
	assert_shape(res.outputs[0], "2x4");
	cr_assert_eq(run_matmul("2x5x3", "3", &res), 0, "%s", res.messages);
	assert_shape(res.outputs[0], "2x5");
}

Test(std_norm, matmul_broadcasting)
{
	test_result res;
	/* Batch 2x1 against 5: 2x5. */
	cr_assert_eq(run_matmul("2x1x3x4", "5x4x6", &res), 0, "%s", res.messages);
	assert_shape(res.outputs[0], "2x5x3x6");
	/* 2 * 10 * 3 * 4 * 6. */
	cr_assert_eq(res.r.flops, 1440.0, "flops %.0f", res.r.flops);
	cr_assert_eq(run_matmul("1x3", "2x3x4", &res), 0, "%s", res.messages);
	assert_shape(res.outputs[0], "2x1x4");
	/* Rank 8, the most a tensor may have. */
	cr_assert_eq(run_matmul("1x1x1x1x1x7x2x3", "3x4", &res), 0, "%s", res.messages);
	assert_shape(res.outputs[0], "1x1x1x1x1x7x2x4");
}

Test(std_norm, matmul_errors)
{
	test_result res;
	run_matmul("2x3", "4x5", &res);
	assert_error(res, "a is 2x3, b is 4x5: the inner dimensions 3 and 4 differ");
	run_matmul("3", "4", &res);
	assert_error(res, "the inner dimensions 3 and 4 differ");
	run_matmul("2x3x4", "5x4x6", &res);
	assert_error(res, "a is 2x3x4, b is 5x4x6: the batch dimensions 2 and 5 do not broadcast");
	run_matmul("2x3", "float16:3x4", &res);
	assert_error(res, "a is float32 but b is float16");
	test_reshape("matmul", "", 2, (const char *[]){ "bool:2x3", "bool:3x4" }, &res);
	assert_error(res, "the inputs are bool, but matrix_multiply needs float32, float16, int32 or int64");
	run_matmul("scalar", "3", &res);
	assert_error(res, "a is scalar and b is 3");
}

Test(std_norm, matmul_needs_both_inputs)
{
	test_result res;
	test_reshape("matmul", "", 2, (const char *[]){ "2x3", NULL }, &res);
	assert_error(res, "mandatory inputs are not connected: 1");
}

Test(std_norm, descriptors)
{
	static const struct {
		const char *name, *category;
		bool activation;
	} expected[] = {
		{ "batch_normalization", "Normalization", true },
		{ "instance_normalization", "Normalization", true },
		{ "fully_connected", "General", true },
		{ "matrix_multiply", "General", true },
	};
	for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++) {
		const st_layer_type *t = st_registry_find_layer(test_registry(), expected[i].name);
		cr_assert_not_null(t, "%s is not registered", expected[i].name);
		cr_assert_str_eq(t->desc->category, expected[i].category);
		cr_assert_eq((t->desc->flags & ST_LAYER_ACTIVATION) != 0, expected[i].activation);
		for (int p = 0; p < t->desc->n_params; p++)
			cr_assert(t->desc->params[p].doc && strlen(t->desc->params[p].doc) > 20);
	}
}
