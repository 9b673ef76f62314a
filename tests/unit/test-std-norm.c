/* Unit tests: std-norm (normalisation, fully connected, matrix multiply). */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "k-nn.h"

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

/* ---- layer normalisation ---- */

Test(std_norm, layer_norm_shapes_and_weights)
{
	test_result res;
	/* The default axis -1 normalises each row of the last axis. */
	cr_assert_eq(run_one("layer_normalization", "", "2x5x16", &res), 0, "%s", res.messages);
	assert_shape(res.outputs[0], "2x5x16");
	cr_assert_eq(res.r.n_weights, 2);
	assert_weight(&res, 0, "scale", "16");
	assert_weight(&res, 1, "bias", "16");
	/* 5 * 2 * 5 * 16. */
	cr_assert_eq(res.r.flops, 800.0, "flops %.0f", res.r.flops);
	cr_assert_eq(run_one("layernorm", "axis=1", "2x3x4x5", &res), 0, "%s", res.messages);
	assert_weight(&res, 0, "scale", "3x4x5");
	assert_weight(&res, 1, "bias", "3x4x5");
	cr_assert_eq(run_one("layernorm", "axis=-3", "2x3x4x5", &res), 0, "%s", res.messages);
	assert_weight(&res, 0, "scale", "3x4x5");
	/* Axis 0 takes the whole tensor as one row; rank 1 is enough. */
	cr_assert_eq(run_one("layernorm", "axis=0", "7", &res), 0, "%s", res.messages);
	assert_shape(res.outputs[0], "7");
	assert_weight(&res, 0, "scale", "7");
	cr_assert_eq(run_one("layernorm", "epsilon=0.001", "float16:1x8x32", &res), 0, "%s", res.messages);
	assert_shape(res.outputs[0], "float16:1x8x32");
	/* Weights are FP32 whatever the input. */
	assert_weight(&res, 0, "scale", "32");
}

Test(std_norm, layer_norm_without_bias)
{
	test_result res;
	cr_assert_eq(run_one("layer_normalization", "axis=-2 bias=false", "4x6x8", &res), 0, "%s",
	             res.messages);
	cr_assert_eq(res.r.n_weights, 1);
	assert_weight(&res, 0, "scale", "6x8");
	/* 4 * 4 * 6 * 8. */
	cr_assert_eq(res.r.flops, 768.0, "flops %.0f", res.r.flops);
}

Test(std_norm, layer_norm_errors)
{
	test_result res;
	run_one("layernorm", "axis=3", "2x3x4", &res);
	assert_error(res, "axis 3 is out of range for input 2x3x4: it must be from -3 to 2");
	run_one("layernorm", "axis=-4", "2x3x4", &res);
	assert_error(res, "axis -4 is out of range for input 2x3x4: it must be from -3 to 2");
	run_one("layernorm", "", "scalar", &res);
	assert_error(res, "input scalar has rank 0, but layer_normalization needs at least one axis");
	run_one("layernorm", "", "int64:2x3", &res);
	assert_error(res, "input 2x3 is int64, but layer_normalization needs float32 or float16");
}

/* Layer normalisation as ONNX defines it, all in double: the mean, then the
 * variance as the mean of the squared deviations. */
static void
layer_norm_double(int64_t rows, int64_t size, const float *x, const float *scale, const float *bias,
                  double epsilon, float *y)
{
	for (int64_t r = 0; r < rows; r++) {
		const float *in = x + r * size;
		double mean = 0, variance = 0;
		for (int64_t j = 0; j < size; j++)
			mean += in[j];
		mean /= (double)size;
		for (int64_t j = 0; j < size; j++)
			variance += ((double)in[j] - mean) * ((double)in[j] - mean);
		variance /= (double)size;
		for (int64_t j = 0; j < size; j++)
			y[r * size + j] = (float)(((double)in[j] - mean) / sqrt(variance + epsilon) * scale[j] +
			                          (bias ? bias[j] : 0.0));
	}
}

/* Deterministic values in [-1, 1). */
static float *
ln_floats(uint64_t *state, int64_t n, float gain, float offset)
{
	float *v = malloc((size_t)(n ? n : 1) * sizeof *v);
	cr_assert(v != NULL);
	for (int64_t i = 0; i < n; i++) {
		*state ^= *state << 13;
		*state ^= *state >> 7;
		*state ^= *state << 17;
		v[i] = gain * (float)((double)(*state >> 11) / 9007199254740992.0 * 2.0 - 1.0) + offset;
	}
	return v;
}

static void
ln_assert_close(const float *got, const float *want, int64_t n, const char *what)
{
	char why[256];
	cr_assert(test_allclose(got, want, n, 1e-5, why, sizeof why), "%s: %s", what, why);
}

Test(std_norm, layer_norm_kernel_matches_double)
{
	/* rows x size: one row, many small rows, rows not a multiple of eight,
	 * a single-element row (all zero before the bias), a large block. */
	static const int64_t shapes[][2] = { { 1, 16 }, { 37, 3 }, { 5, 129 }, { 6, 1 }, { 3, 20000 } };
	const st_exec_ctx threads = { .n_threads = 4, .parallel_for = test_threads_run };
	uint64_t state = 29;
	for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
		int64_t rows = shapes[i][0], size = shapes[i][1], count = rows * size;
		/* An offset that a one-pass variance in float would lose. */
		float *x = ln_floats(&state, count, 3.0f, 100.0f);
		float *scale = ln_floats(&state, size, 0.5f, 1.0f), *bias = ln_floats(&state, size, 1.0f, 0.0f);
		float *want = malloc((size_t)count * sizeof *want), *got = malloc((size_t)count * sizeof *got);
		cr_assert(want != NULL && got != NULL);
		for (int with_bias = 0; with_bias < 2; with_bias++) {
			const float *b = with_bias ? bias : NULL;
			char what[96];
			snprintf(what, sizeof what, "%lld rows of %lld, %s bias", (long long)rows, (long long)size,
			         with_bias ? "with" : "without");
			layer_norm_double(rows, size, x, scale, b, 1e-5, want);
			k_layer_norm_ref(rows, size, x, scale, b, 1e-5f, got);
			ln_assert_close(got, want, count, what);
			k_layer_norm(rows, size, x, scale, b, 1e-5f, got, NULL);
			ln_assert_close(got, want, count, what);
			k_layer_norm(rows, size, x, scale, b, 1e-5f, got, &threads);
			ln_assert_close(got, want, count, what);
			/* In place, as ST_IMPL_IN_PLACE allows. */
			memcpy(got, x, (size_t)count * sizeof *got);
			k_layer_norm(rows, size, got, scale, b, 1e-5f, got, &threads);
			ln_assert_close(got, want, count, what);
		}
		free(x), free(scale), free(bias), free(want), free(got);
	}
}

/* A tensor of the given shape filled from state. */
static st_tensor
ln_tensor(uint64_t *state, const char *shape, float gain, float offset)
{
	st_tensor t = { .shape = test_shape(shape), .layout = ST_LAYOUT_NCHW };
	int64_t n = 1;
	for (int i = 0; i < t.shape.rank; i++)
		n *= t.shape.dims[i];
	t.data = ln_floats(state, n, gain, offset);
	return t;
}

/* The CPU implementation over several ranks and axes, against the double
 * reference with the rows and row size worked out here. */
Test(std_norm, layer_norm_layer_axes)
{
	static const struct {
		const char *input, *params, *normalised;
		int64_t rows, size;
	} cases[] = {
		{ "2x3x4x5", "", "5", 24, 5 },
		{ "2x3x4x5", "axis=1", "3x4x5", 2, 60 },
		{ "2x3x4x5", "axis=-2 bias=false", "4x5", 6, 20 },
		{ "2x3x4x5", "axis=0 epsilon=0.01", "2x3x4x5", 1, 120 },
		{ "10", "", "10", 1, 10 },
		{ "3x7", "axis=0", "3x7", 1, 21 },
		{ "2x2x2x2x3", "axis=2", "2x2x3", 4, 12 },
	};
	uint64_t state = 31;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		bool bias = strstr(cases[i].params, "bias=false") == NULL;
		double epsilon = strstr(cases[i].params, "epsilon=0.01") ? 0.01 : 1e-5;
		st_tensor in = ln_tensor(&state, cases[i].input, 2.0f, -4.0f);
		st_tensor w[2] = { ln_tensor(&state, cases[i].normalised, 0.5f, 1.0f),
			           ln_tensor(&state, cases[i].normalised, 1.0f, 0.0f) };
		test_layer res;
		cr_assert_eq(test_layer_run("layer_normalization", cases[i].params, 1, &in, bias ? 2 : 1, w, &res),
		             0, "%s %s: %s", cases[i].input, cases[i].params, res.messages);
		assert_shape(res.outputs[0].shape, cases[i].input);
		int64_t count = cases[i].rows * cases[i].size;
		float *want = malloc((size_t)count * sizeof *want);
		cr_assert(want != NULL);
		layer_norm_double(cases[i].rows, cases[i].size, in.data, w[0].data, bias ? w[1].data : NULL,
		                  epsilon, want);
		char what[96];
		snprintf(what, sizeof what, "%s %s", cases[i].input, cases[i].params);
		ln_assert_close(res.outputs[0].data, want, count, what);
		test_layer_free(&res);
		free(want), free(in.data), free(w[0].data), free(w[1].data);
	}
}

/* Asserts a failed layer run whose messages contain text. */
static void
assert_failed_text(const test_layer *res, const char *text)
{
	cr_assert_neq(res->rc, 0, "expected a failure mentioning '%s'", text);
	cr_assert(strstr(res->messages, text) != NULL, "expected '%s' in:\n%s", text, res->messages);
}

Test(std_norm, layer_norm_layer_checks_weights)
{
	uint64_t state = 37;
	st_tensor in = ln_tensor(&state, "2x3x4", 1.0f, 0.0f);
	st_tensor w[2] = { ln_tensor(&state, "3", 1.0f, 1.0f), ln_tensor(&state, "4", 1.0f, 0.0f) };
	test_layer res;
	test_layer_run("layer_normalization", "", 1, &in, 2, w, &res);
	assert_failed_text(&res, "the scale weights are float32 3, expected float32 4");
	test_layer_free(&res);
	free(in.data), free(w[0].data), free(w[1].data);
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
		{ "layer_normalization", "Normalization", true },
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
