/* Unit tests: the tensor kernels and the std plugin's CPU implementations of
 * the tensor, shape and activation layers, against the reference fixtures in
 * tests/reference/tensor; fast kernels against their references; float16. */
#include "config.h"

#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* criterion.h (through helpers.h) must come before parameterized.h, or its
 * placeholder definition of Test wins. */
#include "helpers.h"
#include <criterion/parameterized.h>

#include "../../plugins/std/std.h"
#include "k-cpu.h"
#include "k-helpers.h"
#include "k-tensor.h"
#include "st-io.h"

/* ------------------------------------------------------------------------
 * Helpers
 * ------------------------------------------------------------------------ */

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

/* xorshift64*: deterministic test data. */
static uint64_t
next_u64(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1du;
}

static float
uniform(float lo, float hi)
{
	return lo + (hi - lo) * (float)((double)(next_u64() >> 11) / 9007199254740992.0);
}

static int64_t
below(int64_t n)
{
	return (int64_t)(next_u64() % (uint64_t)n);
}

/* 64-byte aligned memory, as the engine hands out; freed with free. */
static void *
aligned(size_t bytes)
{
	void *p = aligned_alloc(64, (bytes + 63) / 64 * 64 + 64);
	cr_assert(p != NULL);
	return p;
}

/* Fills bytes with random bits, or floats with values in [-4, 4). */
static void *
random_buffer(int64_t n, size_t elem, bool floats)
{
	uint8_t *p = aligned((size_t)n * elem);
	if (floats) {
		for (int64_t i = 0; i < n; i++)
			((float *)(void *)p)[i] = uniform(-4, 4);
	} else {
		for (size_t i = 0; i < (size_t)n * elem; i++)
			p[i] = (uint8_t)next_u64();
	}
	return p;
}

static st_shape
shape_of(int rank, const int64_t *dims)
{
	st_shape s = { .dtype = ST_DTYPE_FLOAT32, .rank = rank };
	for (int k = 0; k < rank; k++)
		s.dims[k] = dims[k];
	return s;
}

/*
 * A thread pool stand-in: runs the ranges one after another on the calling
 * thread, cut into odd-sized pieces far below the grain asked for, so every
 * kernel's code for starting in the middle of its work runs too.
 */
static void
chunked_for(const st_exec_ctx *ctx, int64_t n, int64_t grain, st_range_fn fn, void *arg)
{
	(void)ctx;
	(void)grain;
	int64_t piece = n / 7 + 1;
	for (int64_t b = 0; b < n; b += piece)
		fn(arg, b, b + piece < n ? b + piece : n);
}

static const st_exec_ctx chunked = { .n_threads = 7, .parallel_for = chunked_for };

#define assert_bytes_eq(a, b, n, ...) cr_assert(memcmp((a), (b), (n)) == 0, __VA_ARGS__)

static void
assert_close(const float *got, const float *want, int64_t n, double rtol, const char *what)
{
	char why[256];
	cr_assert(test_allclose(got, want, n, rtol, why, sizeof why), "%s: %s", what, why);
}

/* ------------------------------------------------------------------------
 * (a) The reference fixtures through the CPU implementations
 * ------------------------------------------------------------------------ */

struct fixture_case {
	char name[96];
};

static void
free_cases(struct criterion_test_params *p)
{
	cr_free(p->params);
}

static int
compare_names(const void *a, const void *b)
{
	return strcmp(((const struct fixture_case *)a)->name, ((const struct fixture_case *)b)->name);
}

static char *
fixture_dir(void)
{
	const char *top = getenv("top_srcdir");
	return top ? st_xasprintf("%s/tests/reference/tensor", top) : NULL;
}

ParameterizedTestParameters(k_tensor, fixtures)
{
	/* One test per case folder; without top_srcdir, one that says so. */
	size_t n = 0, cap = 512;
	struct fixture_case *cases = cr_malloc(cap * sizeof *cases);
	char *dir = fixture_dir();
	DIR *d = dir ? opendir(dir) : NULL;
	for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
		if (e->d_name[0] == '.' || n == cap || strlen(e->d_name) >= sizeof cases[0].name)
			continue;
		snprintf(cases[n++].name, sizeof cases[0].name, "%s", e->d_name);
	}
	if (d)
		closedir(d);
	free(dir);
	if (n == 0)
		snprintf(cases[n++].name, sizeof cases[0].name, "%s", "");
	qsort(cases, n, sizeof *cases, compare_names);
	return cr_make_param_array(struct fixture_case, cases, n, free_cases);
}

/* Reads a .npy file as dtype into 64-byte aligned memory; returns the
 * tensor (data NULL when the file does not exist and may_miss). */
static st_tensor
read_npy(const char *path, st_dtype dtype, bool may_miss)
{
	st_tensor t = { .layout = ST_LAYOUT_NCHW };
	if (may_miss && access(path, F_OK) != 0)
		return t;
	st_npy a;
	char err[256];
	cr_assert(st_npy_read(path, &a, err, sizeof err) == 0, "%s: %s", path, err);
	cr_assert(st_npy_convert(&a, dtype, err, sizeof err) == 0, "%s: %s", path, err);
	t.shape = (st_shape){ .dtype = dtype, .rank = a.rank };
	for (int k = 0; k < a.rank; k++)
		t.shape.dims[k] = a.dims[k];
	t.data = aligned(a.bytes);
	memcpy(t.data, a.data, a.bytes);
	st_npy_free(&a);
	return t;
}

/* The dtype a .npy file stores. */
static st_dtype
npy_dtype(const char *path)
{
	st_npy a;
	char err[256];
	cr_assert(st_npy_read(path, &a, err, sizeof err) == 0, "%s: %s", path, err);
	int t = st_npy_type_dtype(a.type);
	st_npy_free(&a);
	cr_assert(t >= 0, "%s: no dtype for its element type", path);
	return (st_dtype)t;
}

/* The parameters a model sets on a layer, as test_layer_run takes them. */
static char *
params_text(const st_layer *l)
{
	const st_layer_desc *d = l->type->desc;
	st_buf b;
	st_buf_init(&b);
	st_buf_puts(&b, "");
	for (int i = 0; i < d->n_params; i++) {
		if (!l->params.set[i])
			continue;
		st_buf v;
		st_buf_init(&v);
		st_value_to_text(&d->params[i], &l->params.values[i], &v);
		st_buf_printf(&b, "%s%s=", b.len ? " " : "", d->params[i].name);
		for (const char *c = v.data; c && *c; c++) {
			if (*c != ' ')
				st_buf_putc(&b, *c);
		}
		st_buf_free(&v);
	}
	return st_buf_take(&b);
}

/* Applies the layer's activation to output 0 as the engine will: per
 * channel with the learned prelu slopes when the case has them. */
static void
apply_activation(const char *dir, const st_layer *l, st_tensor *out)
{
	const st_activation_impl *impl = st_registry_find_activation_impl(test_registry(), l->act.type_name);
	cr_assert(impl != NULL, "no computation registered for activation %s", l->act.type_name);
	cr_assert_eq(out->shape.dtype, ST_DTYPE_FLOAT32);
	int64_t n = k_elements(&out->shape);
	char *path = st_xasprintf("%s/weights/layer_prelu_slope.npy", dir);
	st_tensor slope = read_npy(path, ST_DTYPE_FLOAT32, true);
	free(path);
	if (slope.data == NULL) {
		impl->apply(l->act.coef.values, out->data, n, NULL, 0);
		return;
	}
	int64_t c = out->shape.dims[1], inner = n / (out->shape.dims[0] * c);
	cr_assert_eq(k_elements(&slope.shape), c, "one slope per channel");
	for (int64_t i = 0; i < out->shape.dims[0] * c; i++)
		impl->apply(l->act.coef.values, (float *)out->data + i * inner, inner,
		            (const float *)slope.data + i % c, 0);
	free(slope.data);
}

/* Compares an output with its expectation: floats by ARCHITECTURE.md's
 * rule (float16 with its own tolerance), everything else exactly. */
static void
compare_output(const char *name, const char *what, const st_tensor *got, const st_tensor *want)
{
	char a[128], b[128];
	test_shape_text(&got->shape, a, sizeof a);
	test_shape_text(&want->shape, b, sizeof b);
	cr_assert(st_shape_equal(&got->shape, &want->shape), "%s %s: shape %s, expected %s", name, what, a, b);
	int64_t n = k_elements(&got->shape);
	char label[256];
	snprintf(label, sizeof label, "%s %s", name, what);
	if (got->shape.dtype == ST_DTYPE_FLOAT32) {
		assert_close(got->data, want->data, n, 1e-5, label);
	} else if (got->shape.dtype == ST_DTYPE_FLOAT16) {
		float *g = aligned((size_t)n * 4 + 4), *w = aligned((size_t)n * 4 + 4);
		k_half_to_float_array(got->data, g, n);
		k_half_to_float_array(want->data, w, n);
		assert_close(g, w, n, 1e-2, label);
		free(g);
		free(w);
	} else {
		assert_bytes_eq(got->data, want->data, (size_t)n * k_dtype_size(got->shape.dtype),
		                "%s: values differ", label);
	}
}

ParameterizedTest(struct fixture_case *c, k_tensor, fixtures)
{
	char *root = fixture_dir();
	cr_assert(root != NULL && c->name[0], "top_srcdir is unset, or tests/reference/tensor is empty");
	char *dir = st_xasprintf("%s/%s", root, c->name);
	char *path = st_xasprintf("%s/model.strata.json", dir);
	st_diag diag;
	st_diag_init(&diag);
	st_graph *g = st_model_load(path, test_registry(), &diag);
	cr_assert(g != NULL, "%s: %s", path, diag.count ? diag.items[0].text : "cannot load");
	st_graph_check(g);
	cr_assert_eq(g->errors, 0, "%s does not type-check", c->name);
	const st_layer *l = st_graph_find(g, "layer");
	cr_assert(l != NULL && l->type != NULL, "%s has no layer called 'layer'", c->name);

	/* Inputs, converted to what the input layers declare. */
	st_tensor inputs[16];
	cr_assert(l->n_inputs <= 16);
	for (int i = 0; i < l->n_inputs; i++) {
		const st_port *p = &l->inputs[i];
		char *file = st_xasprintf("%s/input_%s.npy", dir, p->layer->name);
		inputs[i] = read_npy(file, p->layer->outputs[p->output].dtype, false);
		cr_assert(st_shape_equal(&inputs[i].shape, &p->layer->outputs[p->output]), "%s: shape", file);
		free(file);
	}
	/* Weights reshape declared, float32 as the engine hands them over. */
	st_tensor weights[ST_MAX_WEIGHTS];
	for (int i = 0; i < l->n_weights; i++) {
		char *file = st_xasprintf("%s/weights/layer_%s.npy", dir, l->weights[i].name);
		weights[i] = read_npy(file, ST_DTYPE_FLOAT32, l->weights[i].optional);
		free(file);
	}

	char *params = params_text(l);
	test_layer res;
	int rc = test_layer_run(l->type->desc->name, params, l->n_inputs, inputs, l->n_weights,
	                        l->n_weights ? weights : NULL, &res);
	cr_assert_eq(rc, 0, "%s: %s (params: %s)\n%s", c->name, l->type->desc->name, params, res.messages);
	if (l->act.type_name != NULL)
		apply_activation(dir, l, &res.outputs[0]);

	/* Every output layer against its expectation. */
	int checked = 0;
	for (int i = 0; i < g->n_layers; i++) {
		const st_layer *y = g->layers[i];
		if (strcmp(y->type_name, "output") != 0)
			continue;
		cr_assert(y->inputs[0].layer == l);
		char *file = st_xasprintf("%s/expected_%s.npy", dir, y->name);
		st_tensor want = read_npy(file, npy_dtype(file), false);
		compare_output(c->name, y->name, &res.outputs[y->inputs[0].output], &want);
		free(want.data);
		free(file);
		checked++;
	}
	cr_assert_gt(checked, 0, "%s has no output layer", c->name);

	test_layer_free(&res);
	free(params);
	for (int i = 0; i < l->n_inputs; i++)
		free(inputs[i].data);
	for (int i = 0; i < l->n_weights; i++)
		free(weights[i].data);
	st_graph_free(g);
	st_diag_free(&diag);
	free(path);
	free(dir);
	free(root);
}

Test(k_tensor, every_layer_has_a_cpu_implementation)
{
	static const char *const layers[] = {
		"constant", "identity", "dropout", "softmax", "elementwise", "linear_blend",
		"concatenation", "split", "resize", "pad", "slice", "reshape", "flatten",
		"transpose", "space_to_depth", "depth_to_space",
	};
	for (size_t i = 0; i < sizeof layers / sizeof layers[0]; i++) {
		const st_impl_desc *impl = st_registry_find_impl(test_registry(), layers[i], "cpu");
		cr_assert(impl != NULL, "no cpu implementation of %s", layers[i]);
		cr_assert(impl->layouts & ST_LAYOUT_BIT(ST_LAYOUT_NCHW), "%s", layers[i]);
		cr_assert(impl->dtypes & ST_DTYPE_BIT(ST_DTYPE_FLOAT32), "%s", layers[i]);
	}
	const st_registry *r = test_registry();
	for (int i = 0; i < r->n_activations; i++) {
		const char *name = r->activations[i]->desc->name;
		cr_assert(st_registry_find_activation_impl(r, name) != NULL, "activation %s has no computation",
		          name);
	}
}

/* The parameter positions and enum values std.h gives the CPU code name
 * what the descriptors say they name. */
Test(k_tensor, std_enums_match_descriptors)
{
	static const struct {
		const char *layer;
		int param;
		const char *name;
		int value;          /* -1: no enum value to check */
		const char *text;
	} params[] = {
		{ "constant", CONSTANT_DIMS, "dims", -1, NULL },
		{ "constant", CONSTANT_DTYPE, "dtype", -1, NULL },
		{ "constant", CONSTANT_VALUE, "value", -1, NULL },
		{ "softmax", SOFTMAX_AXIS, "axis", -1, NULL },
		{ "elementwise", ELTWISE_OPERATION, "operation", OP_ADD, "add" },
		{ "elementwise", ELTWISE_OPERATION, "operation", OP_SUB, "sub" },
		{ "elementwise", ELTWISE_OPERATION, "operation", OP_MUL, "mul" },
		{ "elementwise", ELTWISE_OPERATION, "operation", OP_DIV, "div" },
		{ "elementwise", ELTWISE_OPERATION, "operation", OP_MAX, "max" },
		{ "elementwise", ELTWISE_OPERATION, "operation", OP_MIN, "min" },
		{ "elementwise", ELTWISE_BROADCAST, "broadcast", BROADCAST_NUMPY, "numpy" },
		{ "elementwise", ELTWISE_BROADCAST, "broadcast", BROADCAST_CHANNEL, "channel" },
		{ "linear_blend", BLEND_ALPHA, "alpha", -1, NULL },
		{ "concatenation", CONCAT_AXIS, "axis", -1, NULL },
		{ "split", SPLIT_AXIS, "axis", -1, NULL },
		{ "split", SPLIT_SPLIT, "split", -1, NULL },
		{ "split", SPLIT_NUM_OUTPUTS, "num_outputs", -1, NULL },
		{ "resize", RESIZE_MODE, "mode", RESIZE_NEAREST, "nearest" },
		{ "resize", RESIZE_MODE, "mode", RESIZE_LINEAR, "linear" },
		{ "resize", RESIZE_MODE, "mode", RESIZE_CUBIC, "cubic" },
		{ "resize", RESIZE_SCALES, "scales", -1, NULL },
		{ "resize", RESIZE_SIZES, "sizes", -1, NULL },
		{ "resize", RESIZE_COORDINATES, "coordinate_transformation_mode", COORD_HALF_PIXEL, "half_pixel" },
		{ "resize", RESIZE_COORDINATES, "coordinate_transformation_mode", COORD_HALF_PIXEL_SYMMETRIC,
		  "half_pixel_symmetric" },
		{ "resize", RESIZE_COORDINATES, "coordinate_transformation_mode", COORD_PYTORCH_HALF_PIXEL,
		  "pytorch_half_pixel" },
		{ "resize", RESIZE_COORDINATES, "coordinate_transformation_mode", COORD_ALIGN_CORNERS, "align_corners" },
		{ "resize", RESIZE_COORDINATES, "coordinate_transformation_mode", COORD_ASYMMETRIC, "asymmetric" },
		{ "resize", RESIZE_NEAREST_MODE, "nearest_mode", NEAREST_ROUND_PREFER_FLOOR, "round_prefer_floor" },
		{ "resize", RESIZE_NEAREST_MODE, "nearest_mode", NEAREST_ROUND_PREFER_CEIL, "round_prefer_ceil" },
		{ "resize", RESIZE_NEAREST_MODE, "nearest_mode", NEAREST_FLOOR, "floor" },
		{ "resize", RESIZE_NEAREST_MODE, "nearest_mode", NEAREST_CEIL, "ceil" },
		{ "resize", RESIZE_CUBIC_A, "cubic_coeff_a", -1, NULL },
		{ "resize", RESIZE_EXCLUDE_OUTSIDE, "exclude_outside", -1, NULL },
		{ "pad", PAD_MODE, "mode", PAD_CONSTANT, "constant" },
		{ "pad", PAD_MODE, "mode", PAD_REFLECT, "reflect" },
		{ "pad", PAD_MODE, "mode", PAD_EDGE, "edge" },
		{ "pad", PAD_PADS, "pads", -1, NULL },
		{ "pad", PAD_VALUE, "value", -1, NULL },
		{ "slice", SLICE_STARTS, "starts", -1, NULL },
		{ "slice", SLICE_ENDS, "ends", -1, NULL },
		{ "slice", SLICE_AXES, "axes", -1, NULL },
		{ "slice", SLICE_STEPS, "steps", -1, NULL },
		{ "transpose", TRANSPOSE_PERM, "perm", -1, NULL },
		{ "space_to_depth", BLOCK_SIZE, "block_size", -1, NULL },
		{ "depth_to_space", BLOCK_SIZE, "block_size", -1, NULL },
		{ "depth_to_space", D2S_MODE, "mode", D2S_DCR, "DCR" },
		{ "depth_to_space", D2S_MODE, "mode", D2S_CRD, "CRD" },
	};
	for (size_t i = 0; i < sizeof params / sizeof params[0]; i++) {
		const st_layer_type *t = st_registry_find_layer(test_registry(), params[i].layer);
		cr_assert(t != NULL && params[i].param < t->desc->n_params, "%s", params[i].layer);
		const st_param_desc *p = &t->desc->params[params[i].param];
		cr_assert_str_eq(p->name, params[i].name, "%s parameter %d", params[i].layer, params[i].param);
		if (params[i].value >= 0)
			cr_assert_str_eq(p->enum_values[params[i].value], params[i].text, "%s.%s value %d",
			                 params[i].layer, p->name, params[i].value);
	}
	static const struct {
		const char *activation;
		int coef;
		const char *name;
	} coefs[] = {
		{ "leaky_relu", LEAKY_RELU_ALPHA, "alpha" }, { "prelu", PRELU_ALPHA, "alpha" },
		{ "elu", ELU_ALPHA, "alpha" },               { "selu", SELU_ALPHA, "alpha" },
		{ "selu", SELU_GAMMA, "gamma" },             { "hard_sigmoid", HARD_SIGMOID_ALPHA, "alpha" },
		{ "hard_sigmoid", HARD_SIGMOID_BETA, "beta" }, { "gelu", GELU_APPROXIMATE, "approximate" },
		{ "clip", CLIP_MIN, "min" },                 { "clip", CLIP_MAX, "max" },
	};
	for (size_t i = 0; i < sizeof coefs / sizeof coefs[0]; i++) {
		const st_activation_type *a = st_registry_find_activation(test_registry(), coefs[i].activation);
		cr_assert(a != NULL && coefs[i].coef < a->desc->n_params, "%s", coefs[i].activation);
		cr_assert_str_eq(a->desc->params[coefs[i].coef].name, coefs[i].name, "%s", coefs[i].activation);
	}
	const st_activation_type *gelu = st_registry_find_activation(test_registry(), "gelu");
	cr_assert_str_eq(gelu->desc->params[GELU_APPROXIMATE].enum_values[GELU_TANH], "tanh");
	cr_assert_str_eq(gelu->desc->params[GELU_APPROXIMATE].enum_values[GELU_NONE], "none");
}

Test(k_tensor, prelu_slope_per_element)
{
	const st_activation_impl *prelu = st_registry_find_activation_impl(test_registry(), "prelu");
	const st_activation_type *t = st_registry_find_activation(test_registry(), "prelu");
	cr_assert(prelu && t);
	float x[11], slope[11];
	for (int i = 0; i < 11; i++) {
		x[i] = (float)(i - 5);
		slope[i] = 0.1f * (float)i;
	}
	prelu->apply(t->defaults, x, 11, slope, 1);
	for (int i = 0; i < 11; i++)
		cr_assert_float_eq(x[i], i < 5 ? 0.1f * (float)i * (float)(i - 5) : (float)(i - 5), 1e-6,
		                   "element %d", i);
	/* Without slopes alpha (0.25 by default) applies to every element. */
	float y[3] = { -4, 0, 4 };
	prelu->apply(t->defaults, y, 3, NULL, 0);
	cr_assert(y[0] == -1 && y[1] == 0 && y[2] == 4);
}

/* ------------------------------------------------------------------------
 * (b) Fast kernels against their references
 * ------------------------------------------------------------------------ */

static const st_dtype int_types[] = { ST_DTYPE_INT64, ST_DTYPE_INT32, ST_DTYPE_INT8, ST_DTYPE_UINT8 };

/* Random shapes broadcasting to out: each axis kept, set to 1, or dropped
 * from the front. */
static st_shape
broadcast_operand(const st_shape *out)
{
	st_shape s = *out;
	for (int k = 0; k < s.rank; k++) {
		if (below(3) == 0)
			s.dims[k] = 1;
	}
	int drop = (int)below(s.rank + 1);
	if (below(2) == 0)
		drop = 0;
	s.rank -= drop;
	memmove(s.dims, s.dims + drop, (size_t)s.rank * sizeof s.dims[0]);
	return s;
}

static void
check_binary(k_op op, st_dtype t, const st_shape *out, const st_shape *sa, const st_shape *sb)
{
	size_t elem = k_dtype_size(t);
	int64_t n = k_elements(out);
	bool floats = t == ST_DTYPE_FLOAT32;
	void *a = random_buffer(k_elements(sa), elem, floats), *b = random_buffer(k_elements(sb), elem, floats);
	if (op == K_OP_DIV) {
		/* Keep quotients finite. */
		for (int64_t i = 0; i < k_elements(sb); i++)
			((float *)b)[i] = ((float *)b)[i] < 0 ? ((float *)b)[i] - 0.5f : ((float *)b)[i] + 0.5f;
	}
	void *fast = aligned((size_t)n * elem), *ref = aligned((size_t)n * elem);
	k_binary(op, t, fast, out, a, sa, b, sb, &chunked);
	k_binary_ref(op, t, ref, out, a, sa, b, sb);
	char o[128], x[128], y[128];
	test_shape_text(out, o, sizeof o);
	test_shape_text(sa, x, sizeof x);
	test_shape_text(sb, y, sizeof y);
	assert_bytes_eq(fast, ref, (size_t)n * elem, "op %d dtype %d: %s = %s op %s", op, t, o, x, y);
	/* The same again, with the output as the first operand (the fold). */
	if (st_shape_equal(sa, out)) {
		memcpy(fast, a, (size_t)n * elem);
		k_binary(op, t, fast, out, fast, out, b, sb, NULL);
		assert_bytes_eq(fast, ref, (size_t)n * elem, "in place: op %d dtype %d %s", op, t, o);
	}
	free(a);
	free(b);
	free(fast);
	free(ref);
}

Test(k_tensor, binary_fast_matches_reference)
{
	for (int trial = 0; trial < 300; trial++) {
		st_shape out = { .dtype = ST_DTYPE_FLOAT32, .rank = 1 + (int)below(5) };
		for (int k = 0; k < out.rank; k++)
			out.dims[k] = 1 + below(k == out.rank - 1 ? 23 : 5);
		st_shape sa = broadcast_operand(&out), sb = broadcast_operand(&out);
		/* The output shape is what the operands broadcast to. */
		st_shape real = out;
		for (int k = 1; k <= out.rank; k++) {
			int64_t x = k <= sa.rank ? sa.dims[sa.rank - k] : 1, y = k <= sb.rank ? sb.dims[sb.rank - k] : 1;
			real.dims[out.rank - k] = x > y ? x : y;
		}
		k_op op = (k_op)(trial % K_OP_COUNT);
		check_binary(op, ST_DTYPE_FLOAT32, &real, &sa, &sb);
		if (op != K_OP_DIV)
			check_binary(op, int_types[trial % 4], &real, &sa, &sb);
	}
	/* A big same-shape case, and a big broadcast one, across the chunks. */
	st_shape big = test_shape("3x7x41x53"), row = test_shape("53"), col = test_shape("3x1x41x1");
	for (int op = 0; op < K_OP_COUNT; op++) {
		check_binary((k_op)op, ST_DTYPE_FLOAT32, &big, &big, &big);
		check_binary((k_op)op, ST_DTYPE_FLOAT32, &big, &big, &row);
		check_binary((k_op)op, ST_DTYPE_FLOAT32, &big, &col, &big);
		if (op != K_OP_DIV)
			check_binary((k_op)op, ST_DTYPE_INT8, &big, &row, &col);
	}
}

/* Every operation on float16 operands of one shape is the float32 one on
 * the widened values, narrowed, to the bit: NaN, infinities and values
 * that round at the edge of the half range included, serially and split
 * over threads (in place too). */
Test(k_tensor, binary_half_is_narrowed_float)
{
	test_rng r = { 0x6b6e68u };
	int64_t n = 100003;
	uint16_t *a = malloc(sizeof *a * (size_t)n), *b = malloc(sizeof *b * (size_t)n);
	uint16_t *got = malloc(sizeof *got * (size_t)n), *want = malloc(sizeof *want * (size_t)n);
	float *fa = malloc(sizeof *fa * (size_t)n), *fb = malloc(sizeof *fb * (size_t)n), *fy = malloc(sizeof *fy * (size_t)n);
	cr_assert(a && b && got && want && fa && fb && fy);
	for (int64_t i = 0; i < n; i++) {
		a[i] = (uint16_t)test_pick(&r, 0, 0xffff);
		b[i] = (uint16_t)test_pick(&r, 0, 0xffff);
	}
	a[0] = 0x7bff, b[0] = 0x7bff; /* 65504 + 65504: infinity */
	a[1] = 0x7e00, b[1] = 0x3c00; /* NaN */
	a[2] = 0x7c00, b[2] = 0xfc00; /* inf - inf */
	k_half_to_float_array(a, fa, n);
	k_half_to_float_array(b, fb, n);
	st_shape flat = { .dtype = ST_DTYPE_FLOAT32, .rank = 1, .dims = { n } };
	st_exec_ctx two = { .n_threads = 2, .parallel_for = test_threads_run };
	for (int op = 0; op < K_OP_COUNT; op++) {
		k_binary_ref((k_op)op, ST_DTYPE_FLOAT32, fy, &flat, fa, &flat, fb, &flat);
		k_float_to_half_array(fy, want, n);
		for (int way = 0; way < 3; way++) {
			uint16_t *out = got;
			if (way == 2) {
				memcpy(got, a, sizeof *got * (size_t)n);
				k_binary_half((k_op)op, got, got, b, n, &two);
			} else {
				k_binary_half((k_op)op, out, a, b, n, way ? &two : NULL);
			}
			for (int64_t i = 0; i < n; i++) {
				bool nan_both = (got[i] & 0x7c00) == 0x7c00 && (got[i] & 0x3ff) && (want[i] & 0x7c00) == 0x7c00 &&
				                (want[i] & 0x3ff);
				cr_assert(got[i] == want[i] || nan_both, "op %d, way %d, element %lld: 0x%04x op 0x%04x is 0x%04x, "
				          "not 0x%04x", op, way, (long long)i, a[i], b[i], got[i], want[i]);
			}
		}
	}
	free(a), free(b), free(got), free(want), free(fa), free(fb), free(fy);
}

Test(k_tensor, binary_nan_and_wrapping)
{
	st_shape s = test_shape("3");
	float a[3] = { NAN, 1, 2 }, b[3] = { 0, NAN, 1 }, out[3];
	k_binary(K_OP_MAX, ST_DTYPE_FLOAT32, out, &s, a, &s, b, &s, NULL);
	cr_assert(isnan(out[0]) && isnan(out[1]) && out[2] == 2);
	k_binary(K_OP_MIN, ST_DTYPE_FLOAT32, out, &s, a, &s, b, &s, NULL);
	cr_assert(isnan(out[0]) && isnan(out[1]) && out[2] == 1);
	int8_t x[3] = { 127, -128, 100 }, y[3] = { 1, -1, 100 }, z[3];
	k_binary(K_OP_ADD, ST_DTYPE_INT8, z, &s, x, &s, y, &s, NULL);
	cr_assert(z[0] == -128 && z[1] == 127 && z[2] == -56);
	cr_assert(!k_binary_supports(K_OP_DIV, ST_DTYPE_INT32));
	cr_assert(!k_binary_supports(K_OP_ADD, ST_DTYPE_BOOL));
	cr_assert(!k_binary_supports(K_OP_ADD, ST_DTYPE_FLOAT16));
}

Test(k_tensor, linear_blend_fast_matches_reference)
{
	const char *cases[][3] = { { "2x3x40x41", "2x3x40x41", "2x3x40x41" },
		                   { "2x3x40x41", "3x1x41", "2x3x40x41" },
		                   { "41", "2x3x40x41", "2x3x40x41" },
		                   { "5x1", "1x7", "5x7" } };
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		st_shape sa = test_shape(cases[i][0]), sb = test_shape(cases[i][1]), so = test_shape(cases[i][2]);
		int64_t n = k_elements(&so);
		float *a = random_buffer(k_elements(&sa), 4, true), *b = random_buffer(k_elements(&sb), 4, true);
		float *fast = aligned((size_t)n * 4), *ref = aligned((size_t)n * 4);
		k_linear_blend(0.3f, fast, &so, a, &sa, b, &sb, &chunked);
		k_linear_blend_ref(0.3f, ref, &so, a, &sa, b, &sb);
		assert_bytes_eq(fast, ref, (size_t)n * 4, "blend case %zu", i);
		free(a);
		free(b);
		free(fast);
		free(ref);
	}
}

Test(k_tensor, softmax_fast_matches_reference)
{
	static const int64_t shapes[][3] = { { 7, 13, 1 }, { 3, 5, 300 }, { 1, 1, 9 }, { 2, 257, 1 },
		                             { 40, 30, 41 }, { 1, 3, 1 }, { 5, 1, 7 } };
	for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
		int64_t outer = shapes[i][0], len = shapes[i][1], inner = shapes[i][2], n = outer * len * inner;
		float *x = random_buffer(n, 4, true), *fast = aligned((size_t)n * 4), *ref = aligned((size_t)n * 4);
		for (int64_t j = 0; j < n; j++)
			x[j] *= 20; /* exponents well past what exp could take unshifted */
		k_softmax(x, fast, outer, len, inner, &chunked);
		k_softmax_ref(x, ref, outer, len, inner);
		assert_close(fast, ref, n, 1e-5, "softmax");
		/* In place gives the same. */
		k_softmax(x, x, outer, len, inner, NULL);
		assert_close(x, ref, n, 1e-5, "softmax in place");
		free(x);
		free(fast);
		free(ref);
	}
}

/* Element sizes the data-movement kernels see: every dtype's, and an odd one. */
static const size_t elem_sizes[] = { 1, 2, 4, 8, 3 };

Test(k_tensor, transpose_fast_matches_reference)
{
	for (int trial = 0; trial < 400; trial++) {
		int rank = 1 + (int)below(8);
		int64_t dims[ST_MAX_RANK];
		int64_t budget = 1;
		for (int k = 0; k < rank; k++) {
			dims[k] = 1 + below(rank <= 3 ? 40 : rank <= 5 ? 7 : 3);
			budget *= dims[k];
		}
		if (budget > 200000)
			continue;
		st_shape s = shape_of(rank, dims);
		int perm[ST_MAX_RANK];
		for (int k = 0; k < rank; k++)
			perm[k] = k;
		for (int k = rank - 1; k > 0; k--) {
			int j = (int)below(k + 1), t = perm[k];
			perm[k] = perm[j];
			perm[j] = t;
		}
		size_t elem = elem_sizes[trial % 5];
		int64_t n = k_elements(&s);
		void *in = random_buffer(n, elem, false), *fast = aligned((size_t)n * elem),
		     *ref = aligned((size_t)n * elem);
		k_transpose(in, &s, perm, fast, elem, trial % 2 ? &chunked : NULL);
		k_transpose_ref(in, &s, perm, ref, elem);
		assert_bytes_eq(fast, ref, (size_t)n * elem, "transpose trial %d (rank %d, elem %zu)", trial, rank,
		                elem);
		free(in);
		free(fast);
		free(ref);
	}
}

Test(k_tensor, slice_fast_matches_reference)
{
	for (int trial = 0; trial < 300; trial++) {
		int rank = 1 + (int)below(5);
		st_shape in = { .rank = rank }, out = { .rank = rank };
		int64_t start[ST_MAX_RANK], step[ST_MAX_RANK];
		for (int k = 0; k < rank; k++) {
			in.dims[k] = 1 + below(12);
			step[k] = below(3) == 0 ? -(1 + below(3)) : 1 + below(3);
			start[k] = below(in.dims[k]);
			/* As many indices as fit walking from start by step. */
			int64_t room = step[k] > 0 ? (in.dims[k] - start[k] + step[k] - 1) / step[k]
			                           : start[k] / -step[k] + 1;
			out.dims[k] = below(room + 1);
		}
		size_t elem = elem_sizes[trial % 5];
		int64_t n = k_elements(&out);
		void *src = random_buffer(k_elements(&in), elem, false), *fast = aligned((size_t)n * elem + 1),
		     *ref = aligned((size_t)n * elem + 1);
		k_slice(src, &in, start, step, fast, &out, elem, &chunked);
		k_slice_ref(src, &in, start, step, ref, &out, elem);
		assert_bytes_eq(fast, ref, (size_t)n * elem, "slice trial %d", trial);
		free(src);
		free(fast);
		free(ref);
	}
}

Test(k_tensor, pad_fast_matches_reference)
{
	for (int trial = 0; trial < 400; trial++) {
		int rank = 1 + (int)below(5);
		k_pad_mode mode = (k_pad_mode)(trial % 3);
		st_shape in = { .rank = rank }, out = { .rank = rank };
		int64_t begin[ST_MAX_RANK];
		for (int k = 0; k < rank; k++) {
			in.dims[k] = 1 + below(9);
			/* Crop up to all but one element, then pad less than what is left
			 * (reflect's rule, which the others do not need but keeps one loop). */
			int64_t crop_lo = below(in.dims[k]), crop_hi = below(in.dims[k] - crop_lo);
			int64_t kept = in.dims[k] - crop_lo - crop_hi;
			int64_t pad_lo = crop_lo ? 0 : below(mode == K_PAD_REFLECT ? kept : 2 * kept + 1);
			int64_t pad_hi = crop_hi ? 0 : below(mode == K_PAD_REFLECT ? kept : 2 * kept + 1);
			begin[k] = crop_lo ? -crop_lo : pad_lo;
			out.dims[k] = kept + pad_lo + pad_hi;
		}
		size_t elem = elem_sizes[trial % 5];
		int64_t n = k_elements(&out);
		uint64_t fill = next_u64();
		void *src = random_buffer(k_elements(&in), elem, false), *fast = aligned((size_t)n * elem),
		     *ref = aligned((size_t)n * elem);
		k_pad(src, &in, begin, mode, &fill, fast, &out, elem, trial % 2 ? &chunked : NULL);
		k_pad_ref(src, &in, begin, mode, &fill, ref, &out, elem);
		assert_bytes_eq(fast, ref, (size_t)n * elem, "pad trial %d mode %d", trial, mode);
		free(src);
		free(fast);
		free(ref);
	}
}

Test(k_tensor, concat_and_split_match_references)
{
	for (int trial = 0; trial < 200; trial++) {
		int rank = 1 + (int)below(4), n = 1 + (int)below(5), axis = (int)below(rank);
		st_dtype t = (st_dtype)(trial % ST_DTYPE_COUNT);
		size_t elem = k_dtype_size(t);
		st_tensor parts[5], whole = { .shape = { .dtype = t, .rank = rank } };
		for (int k = 0; k < rank; k++)
			whole.shape.dims[k] = 1 + below(6);
		whole.shape.dims[axis] = 0;
		for (int i = 0; i < n; i++) {
			parts[i].shape = whole.shape;
			parts[i].shape.dims[axis] = below(5);
			whole.shape.dims[axis] += parts[i].shape.dims[axis];
			parts[i].data = random_buffer(k_elements(&parts[i].shape), elem, false);
		}
		int64_t total = k_elements(&whole.shape);
		whole.data = aligned((size_t)total * elem);
		st_tensor ref = whole;
		ref.data = aligned((size_t)total * elem);
		k_concat(parts, n, axis, &whole, &chunked);
		k_concat_ref(parts, n, axis, &ref);
		assert_bytes_eq(whole.data, ref.data, (size_t)total * elem, "concat trial %d", trial);
		/* Splitting the result gives the parts back, both ways. */
		st_tensor back[5], back_ref[5];
		for (int i = 0; i < n; i++) {
			size_t bytes = (size_t)k_elements(&parts[i].shape) * elem;
			back[i] = back_ref[i] = parts[i];
			back[i].data = aligned(bytes);
			back_ref[i].data = aligned(bytes);
		}
		k_split(&whole, axis, back, n, &chunked);
		k_split_ref(&whole, axis, back_ref, n);
		for (int i = 0; i < n; i++) {
			size_t bytes = (size_t)k_elements(&parts[i].shape) * elem;
			assert_bytes_eq(back[i].data, parts[i].data, bytes, "split part %d, trial %d", i, trial);
			assert_bytes_eq(back_ref[i].data, parts[i].data, bytes, "split_ref part %d", i);
			free(back[i].data);
			free(back_ref[i].data);
			free(parts[i].data);
		}
		free(whole.data);
		free(ref.data);
	}
}

Test(k_tensor, space_depth_are_transposes)
{
	/* Against the 6-D reshape and transpose ONNX defines them by. */
	for (int trial = 0; trial < 60; trial++) {
		int64_t b = 1 + below(3), n = 1 + below(2), c = 1 + below(3), h = b * (1 + below(4)),
		        w = b * (1 + below(4));
		size_t elem = elem_sizes[trial % 5];
		st_shape s = { .rank = 4, .dims = { n, c, h, w } };
		int64_t count = k_elements(&s);
		void *in = random_buffer(count, elem, false), *got = aligned((size_t)count * elem),
		     *want = aligned((size_t)count * elem);
		st_shape six = { .rank = 6, .dims = { n, c, h / b, b, w / b, b } };
		k_space_to_depth(in, &s, b, got, elem, &chunked);
		k_transpose_ref(in, &six, (const int[]){ 0, 3, 5, 1, 2, 4 }, want, elem);
		assert_bytes_eq(got, want, (size_t)count * elem, "space_to_depth trial %d", trial);
		/* depth_to_space on a C·b² input, in both modes. */
		st_shape d = { .rank = 4, .dims = { n, c * b * b, h, w } };
		count = k_elements(&d);
		free(in);
		free(got);
		free(want);
		in = random_buffer(count, elem, false);
		got = aligned((size_t)count * elem);
		want = aligned((size_t)count * elem);
		st_shape dcr = { .rank = 6, .dims = { n, b, b, c, h, w } }, crd = { .rank = 6, .dims = { n, c, b, b, h, w } };
		k_depth_to_space(in, &d, b, false, got, elem, NULL);
		k_transpose_ref(in, &dcr, (const int[]){ 0, 3, 4, 1, 5, 2 }, want, elem);
		assert_bytes_eq(got, want, (size_t)count * elem, "depth_to_space DCR trial %d", trial);
		k_depth_to_space(in, &d, b, true, got, elem, &chunked);
		k_transpose_ref(in, &crd, (const int[]){ 0, 1, 4, 2, 5, 3 }, want, elem);
		assert_bytes_eq(got, want, (size_t)count * elem, "depth_to_space CRD trial %d", trial);
		free(in);
		free(got);
		free(want);
	}
}

Test(k_tensor, resize_fast_matches_reference)
{
	for (int trial = 0; trial < 400; trial++) {
		int rank = 1 + (int)below(5);
		k_resize_desc d = {
			.mode = (k_resize_mode)(trial % 3),
			.coord = (k_coord_mode)below(5),
			.nearest = (k_nearest_mode)below(4),
			.cubic_a = below(2) ? -0.75f : -0.5f,
			.exclude_outside = below(2) == 0,
		};
		st_shape in = { .rank = rank }, out = { .rank = rank };
		for (int k = 0; k < rank; k++) {
			in.dims[k] = 1 + below(rank > 3 ? 4 : 9);
			/* Outer axes mostly unchanged, as on images. */
			bool moves = k >= rank - 2 || below(4) == 0;
			if (!moves) {
				out.dims[k] = in.dims[k];
				d.scales[k] = 1;
			} else if (below(2)) {
				out.dims[k] = 1 + below(2 * in.dims[k] + 3);
				d.scales[k] = (float)out.dims[k] / (float)in.dims[k];
			} else {
				static const float factors[] = { 0.5f, 0.6f, 1.5f, 2.0f, 2.5f, 3.0f, 0.75f };
				d.scales[k] = factors[below(7)];
				out.dims[k] = (int64_t)floor((double)in.dims[k] * d.scales[k]);
				if (out.dims[k] == 0)
					out.dims[k] = 1;
			}
		}
		size_t elem = d.mode == K_RESIZE_NEAREST ? elem_sizes[trial % 5] : 4;
		int64_t n = k_elements(&out);
		void *src = random_buffer(k_elements(&in), elem, d.mode != K_RESIZE_NEAREST);
		void *fast = aligned((size_t)n * elem), *ref = aligned((size_t)n * elem);
		void *plan_memory = aligned(k_resize_plan_bytes(&d, &in, &out));
		const k_resize_plan *plan = k_resize_plan_init(plan_memory, &d, &in, &out);
		void *scratch = aligned(k_resize_scratch_bytes(plan));
		k_resize(plan, src, fast, elem, scratch, trial % 2 ? &chunked : NULL);
		k_resize_ref(&d, src, &in, ref, &out, elem);
		char a[128], b[128];
		test_shape_text(&in, a, sizeof a);
		test_shape_text(&out, b, sizeof b);
		if (d.mode == K_RESIZE_NEAREST)
			assert_bytes_eq(fast, ref, (size_t)n * elem, "nearest %s -> %s, trial %d", a, b, trial);
		else
			assert_close(fast, ref, n, 1e-5, "resize interpolation");
		free(src);
		free(fast);
		free(ref);
		free(plan_memory);
		free(scratch);
	}
}

Test(k_tensor, activations_fast_match_reference)
{
	static const struct {
		float lo, hi;
	} ranges[] = { { -8, 8 }, { -90, 90 }, { -0.01f, 0.01f }, { -1e-6f, 1e-6f }, { 0.3f, 0.4f },
		       { -0.4f, -0.3f }, { 15, 25 }, { -25, -15 } };
	const int64_t n = 1001; /* not a multiple of the vector width */
	float *x = aligned(n * 4), *fast = aligned(n * 4), *ref = aligned(n * 4);
	for (int act = 0; act < K_ACT_COUNT; act++) {
		for (size_t r = 0; r < sizeof ranges / sizeof ranges[0]; r++) {
			for (int64_t i = 0; i < n; i++)
				x[i] = uniform(ranges[r].lo, ranges[r].hi);
			x[0] = 0;
			float a = act == K_ACT_CLIP ? -0.5f : act == K_ACT_HARD_SIGMOID ? 0.2f : 1.3f;
			float b = act == K_ACT_CLIP ? 0.7f : act == K_ACT_HARD_SIGMOID ? 0.5f : 1.05f;
			memcpy(fast, x, n * 4);
			memcpy(ref, x, n * 4);
			k_activation((k_act)act, a, b, fast, n);
			k_activation_ref((k_act)act, a, b, ref, n);
			char what[64];
			snprintf(what, sizeof what, "activation %d on [%g, %g]", act, ranges[r].lo, ranges[r].hi);
			assert_close(fast, ref, n, 1e-5, what);
		}
		/* NaN stays NaN; infinities go where the formula sends them. */
		float special[5] = { NAN, INFINITY, -INFINITY, 0.0f, -0.0f }, want[5];
		memcpy(want, special, sizeof special);
		k_activation((k_act)act, 0.1f, 6.0f, special, 5);
		k_activation_ref((k_act)act, 0.1f, 6.0f, want, 5);
		cr_assert(isnan(special[0]), "activation %d loses NaN", act);
		for (int i = 1; i < 5; i++)
			cr_assert(special[i] == want[i] || (isnan(special[i]) && isnan(want[i])),
			          "activation %d of special %d: %g, expected %g", act, i, special[i], want[i]);
	}
	free(x);
	free(fast);
	free(ref);
}

/* Relu, leaky relu and clip run a vector at a time at each instruction set
 * level: bit for bit what the scalar loops give, NaN, infinities and signed
 * zeros inside the vectors as well as in the tail. */
Test(k_tensor, cheap_activations_alike_at_every_level)
{
	const int64_t n = 77;
	float x[77], got[77];
	for (int64_t i = 0; i < n; i++)
		x[i] = (float)(i % 13) * 0.75f - 4.0f;
	const float special[] = { NAN, INFINITY, -INFINITY, 0.0f, -0.0f, -1e-40f, 1e-40f, 6.0f, -0.5f };
	for (size_t k = 0; k < sizeof special / sizeof special[0]; k++)
		x[3 + 7 * k] = special[k]; /* positions in every lane of 4, 8 and 16 */
	const k_act acts[] = { K_ACT_RELU, K_ACT_LEAKY_RELU, K_ACT_CLIP };
	k_isa have[K_ISA_COUNT];
	int count = test_isa_levels(have);
	for (size_t a = 0; a < sizeof acts / sizeof acts[0]; a++) {
		float lo = acts[a] == K_ACT_CLIP ? -0.5f : 0.1f, hi = 6.0f;
		for (int lv = 0; lv < count; lv++) {
			cr_assert_eq(k_cpu_isa_force(have[lv]), 0);
			for (int64_t len = n - 16; len <= n; len += 8) {
				memcpy(got, x, sizeof x);
				k_activation(acts[a], lo, hi, got, len);
				for (int64_t i = 0; i < n; i++) {
					float v = x[i];
					if (i < len) {
						if (acts[a] == K_ACT_RELU)
							v = v < 0 ? 0 : v;
						else if (acts[a] == K_ACT_LEAKY_RELU)
							v = v < 0 ? lo * v : v;
						else
							v = v > hi ? hi : v < lo ? lo : v;
					}
					cr_assert(memcmp(&got[i], &v, sizeof v) == 0,
					          "%s: activation %d, %lld elements: [%lld] = %g, expected %g",
					          k_cpu_isa_name(have[lv]), (int)acts[a], (long long)len, (long long)i,
					          got[i], v);
				}
			}
		}
	}
	k_cpu_isa_force(k_cpu_isa_best());
}

/* ------------------------------------------------------------------------
 * (c) float16 and layouts
 * ------------------------------------------------------------------------ */

static float
bits_float(uint32_t b)
{
	float f;
	memcpy(&f, &b, sizeof f);
	return f;
}

static uint32_t
float_bits(float f)
{
	uint32_t b;
	memcpy(&b, &f, sizeof b);
	return b;
}

Test(k_tensor, half_round_trips_every_pattern)
{
	static uint16_t h[65536], back[65536], via_f16c[65536];
	static float f[65536], f16c[65536];
	for (int i = 0; i < 65536; i++)
		h[i] = (uint16_t)i;
	k_half_to_float_portable(h, f, 65536);
	k_float_to_half_portable(f, back, 65536);
	for (int i = 0; i < 65536; i++) {
		bool nan = (i & 0x7c00) == 0x7c00 && (i & 0x3ff);
		/* Every number comes back exactly; a NaN comes back quieted (its
		 * top mantissa bit set), with its sign and payload, as on F16C. */
		uint16_t want = nan ? (uint16_t)(i | 0x200) : (uint16_t)i;
		cr_assert_eq(back[i], want, "half %04x -> %08x -> %04x", i, float_bits(f[i]), back[i]);
		cr_assert_eq(isnan(f[i]) != 0, nan, "half %04x", i);
		if (!nan)
			cr_assert_eq(float_bits(st_half_to_float((uint16_t)i)), float_bits(f[i]),
			             "half %04x: the core's conversion differs", i);
	}
	if (!k_have_f16c()) {
		cr_log_warn("this CPU has no F16C: only the portable path was tested");
		return;
	}
	k_half_to_float_f16c(h, f16c, 65536);
	k_float_to_half_f16c(f16c, via_f16c, 65536);
	for (int i = 0; i < 65536; i++) {
		cr_assert_eq(float_bits(f16c[i]), float_bits(f[i]), "half %04x: F16C %08x, portable %08x", i,
		             float_bits(f16c[i]), float_bits(f[i]));
		cr_assert_eq(via_f16c[i], back[i], "half %04x back: F16C %04x, portable %04x", i, via_f16c[i],
		             back[i]);
	}
}

Test(k_tensor, float_to_half_rounds_like_numpy)
{
	/* Float bits and numpy's float16 of them (numpy 1.24, astype). */
	static const struct {
		uint32_t f;
		uint16_t h;
	} cases[] = {
		{ 0x00000000u, 0x0000 }, /* 0.0 */
		{ 0x80000000u, 0x8000 }, /* -0.0 */
		{ 0x3f800000u, 0x3c00 }, /* 1.0 */
		{ 0x477fe000u, 0x7bff }, /* 65504, the largest half */
		{ 0x477feffdu, 0x7bff }, /* 65519.99: still rounds down */
		{ 0x477ff000u, 0x7c00 }, /* 65520: the tie rounds to infinity */
		{ 0x49742400u, 0x7c00 }, /* 1e6 */
		{ 0x7f800000u, 0x7c00 }, /* inf */
		{ 0xff800000u, 0xfc00 }, /* -inf */
		{ 0x33800000u, 0x0001 }, /* 2^-24, the smallest subnormal */
		{ 0x33000000u, 0x0000 }, /* 2^-25: a tie, to the even zero */
		{ 0x33000001u, 0x0001 }, /* just above it */
		{ 0x33c00000u, 0x0002 }, /* 3·2^-25: a tie, to the even 2 */
		{ 0x34200000u, 0x0002 }, /* 5·2^-25: a tie, to the even 2 */
		{ 0x38800000u, 0x0400 }, /* 2^-14, the smallest normal */
		{ 0x387fc000u, 0x03ff }, /* the largest subnormal */
		{ 0x387fe000u, 0x0400 }, /* between them: a tie, up into the normals */
		{ 0x3f801000u, 0x3c00 }, /* 1 + 2^-11: a tie, to the even 1 */
		{ 0x3f803000u, 0x3c02 }, /* 1 + 3·2^-11: a tie, to the even 1 + 2^-9 */
		{ 0x3f801001u, 0x3c01 }, /* just above a tie */
		{ 0xbfc00000u, 0xbe00 }, /* -1.5 */
		{ 0x3dcccccdu, 0x2e66 }, /* 0.1 */
		{ 0x322bcc77u, 0x0000 }, /* 1e-8 */
		{ 0xb3000000u, 0x8000 }, /* -2^-25: to -0 */
		{ 0x3380d959u, 0x0001 }, /* 6e-8 */
		{ 0x45001000u, 0x6800 }, /* 2049: a tie, to even */
		{ 0x45003000u, 0x6802 }, /* 2051: a tie, to even */
		{ 0x45800800u, 0x6c00 }, /* 4097 */
		{ 0x3eaaaaabu, 0x3555 }, /* 1/3 */
		{ 0x00000001u, 0x0000 }, /* the smallest float subnormal */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		float f = bits_float(cases[i].f);
		cr_assert_eq(k_float_to_half(f), cases[i].h, "%08x (%g): %04x, numpy %04x", cases[i].f, f,
		             k_float_to_half(f), cases[i].h);
		cr_assert_eq(st_float_to_half(f), cases[i].h, "%08x: the core's conversion differs", cases[i].f);
	}
	/* NaN stays NaN (numpy keeps different payload bits; only NaN-ness is
	 * common ground). */
	static const uint32_t nans[] = { 0x7fc00000u, 0xffc00000u, 0x7f800001u, 0x7fbfffffu, 0xffffffffu };
	for (size_t i = 0; i < sizeof nans / sizeof nans[0]; i++) {
		uint16_t h = k_float_to_half(bits_float(nans[i]));
		cr_assert((h & 0x7c00) == 0x7c00 && (h & 0x3ff), "NaN %08x became %04x", nans[i], h);
		cr_assert_eq(h >> 15, nans[i] >> 31, "NaN %08x lost its sign", nans[i]);
	}
}

Test(k_tensor, float_to_half_f16c_agrees_with_portable)
{
	if (!k_have_f16c()) {
		cr_log_warn("this CPU has no F16C: nothing to compare");
		return;
	}
	/* A stride through all 2^32 patterns, every pattern near the half range's
	 * rounding points, and arrays whose length is not a multiple of 8. */
	enum { N = 1 << 16 };
	static float f[N];
	static uint16_t a[N], b[N];
	uint64_t start = 0;
	for (int round = 0; round < 80; round++) {
		for (int i = 0; i < N; i++) {
			uint32_t bits;
			if (round < 64)
				bits = (uint32_t)(start + (uint64_t)i * 1009u * 64u + (uint64_t)round);
			else if (round < 72)
				bits = 0x33000000u + (uint32_t)(round - 64) * 0x00800000u + (uint32_t)i * 37u;
			else
				bits = (uint32_t)next_u64();
			f[i] = bits_float(bits);
		}
		start += (uint64_t)N * 1009u * 64u;
		int n = N - round % 8;
		k_float_to_half_portable(f, a, n);
		k_float_to_half_f16c(f, b, n);
		for (int i = 0; i < n; i++)
			cr_assert_eq(a[i], b[i], "float %08x: portable %04x, F16C %04x", float_bits(f[i]), a[i], b[i]);
	}
}

Test(k_tensor, convert_between_dtypes)
{
	float f[6] = { -2.75f, -1, 0, 0.5f, 3, 300 };
	int64_t i64[6];
	int8_t i8[6];
	uint8_t u8[6], flags[6];
	uint16_t h[6];
	float back[6];
	k_convert(f, ST_DTYPE_FLOAT32, i64, ST_DTYPE_INT64, 6);
	cr_assert(i64[0] == -2 && i64[3] == 0 && i64[5] == 300, "truncation toward zero");
	k_convert(f, ST_DTYPE_FLOAT32, i8, ST_DTYPE_INT8, 6);
	cr_assert(i8[5] == 127, "saturates");
	k_convert(f, ST_DTYPE_FLOAT32, u8, ST_DTYPE_UINT8, 6);
	cr_assert(u8[0] == 0 && u8[5] == 255, "saturates");
	k_convert(f, ST_DTYPE_FLOAT32, flags, ST_DTYPE_BOOL, 6);
	cr_assert(flags[0] == 1 && flags[2] == 0 && flags[3] == 1);
	k_convert(f, ST_DTYPE_FLOAT32, h, ST_DTYPE_FLOAT16, 6);
	k_convert(h, ST_DTYPE_FLOAT16, back, ST_DTYPE_FLOAT32, 6);
	assert_bytes_eq(back, f, sizeof f, "these floats are exact in float16");
	k_convert(i64, ST_DTYPE_INT64, back, ST_DTYPE_FLOAT32, 6);
	cr_assert(back[0] == -2 && back[5] == 300);
	k_convert(i64, ST_DTYPE_INT64, i8, ST_DTYPE_INT8, 6);
	cr_assert(i8[0] == -2 && i8[5] == 127);
	cr_assert(k_float_fits(3, ST_DTYPE_INT8) && !k_float_fits(3.5f, ST_DTYPE_INT8));
	cr_assert(!k_float_fits(128, ST_DTYPE_INT8) && k_float_fits(255, ST_DTYPE_UINT8));
	cr_assert(!k_float_fits(2, ST_DTYPE_BOOL) && !k_float_fits(NAN, ST_DTYPE_INT32));
	cr_assert(!k_float_fits(9.3e18f, ST_DTYPE_INT64) && k_float_fits(-9.223372e18f, ST_DTYPE_INT64));
	cr_assert(!k_float_fits(70000, ST_DTYPE_FLOAT16) && k_float_fits(65504, ST_DTYPE_FLOAT16));
	int64_t v;
	k_scalar(-7, ST_DTYPE_INT64, &v);
	cr_assert_eq(v, -7);
}

/* Random shapes, then shapes whose channels and planes hold whole 8 x 8
 * blocks and strips beside them (the AVX2 transposes), and images of two
 * to four channels (transpose_few), at every level. */
Test(k_tensor, layouts_round_trip)
{
	static const int64_t fixed[][4] = { { 1, 32, 112, 112 }, { 2, 24, 7, 8 }, { 1, 37, 9, 7 }, { 1, 8, 1, 8 },
		                            { 1, 16, 4, 4 },     { 3, 9, 3, 3 },  { 2, 3, 17, 19 }, { 1, 4, 5, 33 },
		                            { 1, 2, 9, 9 } };
	const int n_fixed = (int)(sizeof fixed / sizeof fixed[0]);
	k_isa have[K_ISA_COUNT];
	int count = test_isa_levels(have);
	for (int lv = 0; lv < count; lv++) {
		cr_assert_eq(k_cpu_isa_force(have[lv]), 0);
		for (int rank = 3; rank <= 6 + n_fixed; rank++) {
			for (size_t e = 0; e < sizeof elem_sizes / sizeof elem_sizes[0]; e++) {
				size_t elem = elem_sizes[e];
				st_shape s = { .rank = rank <= 6 ? rank : 4 };
				if (rank <= 6) {
					for (int k = 0; k < rank; k++)
						s.dims[k] = 1 + below(rank > 4 ? 4 : 13);
					s.dims[1] = 1 + below(40);
				} else {
					memcpy(s.dims, fixed[rank - 7], sizeof fixed[0]);
				}
				int64_t n = k_elements(&s);
				void *nchw = random_buffer(n, elem, false), *nhwc = aligned((size_t)n * elem),
				     *want = aligned((size_t)n * elem), *back = aligned((size_t)n * elem);
				k_nchw_to_nhwc(nchw, nhwc, &s, elem, &chunked);
				int perm[ST_MAX_RANK] = { 0 };
				for (int k = 1; k < s.rank - 1; k++)
					perm[k] = k + 1;
				perm[s.rank - 1] = 1;
				k_transpose_ref(nchw, &s, perm, want, elem);
				assert_bytes_eq(nhwc, want, (size_t)n * elem, "%s: NCHW to NHWC, %lldx%lldx%lld..., elem %zu",
				                k_cpu_isa_name(have[lv]), (long long)s.dims[0], (long long)s.dims[1],
				                (long long)s.dims[2], elem);
				k_nhwc_to_nchw(nhwc, back, &s, elem, NULL);
				assert_bytes_eq(back, nchw, (size_t)n * elem, "%s: NHWC to NCHW, rank %d elem %zu",
				                k_cpu_isa_name(have[lv]), s.rank, elem);
				free(nchw);
				free(nhwc);
				free(want);
				free(back);
			}
		}
	}
	k_cpu_isa_force(k_cpu_isa_best());
}
