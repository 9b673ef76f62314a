/* Unit tests: the convolution, pooling, normalisation and dense kernels
 * (kernels/cpu/k-nn.h) and the std layers' CPU implementations over them. */
#include "config.h"

#include <dirent.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "helpers.h"
#include "k-helpers.h"

#include <criterion/parameterized.h>
#include "k-cpu.h"
#include "k-nn.h"
#include "st-io.h"

/* The ways a kernel is run (test_pieces_run, test_threads_run in helpers.c): serially, cut into pieces, and on threads, with
 * as many scratch slots as threads or more. */
typedef struct run_mode {
	const char *name;
	st_exec_ctx ctx;
	bool serial;
	int slots;
} run_mode;

static const run_mode modes[] = {
	{ "serial", { 0 }, true, 1 },
	{ "3 pieces", { .n_threads = 3, .parallel_for = test_pieces_run }, false, 3 },
	{ "2 pieces, 8 slots", { .n_threads = 2, .parallel_for = test_pieces_run }, false, 8 },
	{ "4 threads", { .n_threads = 4, .parallel_for = test_threads_run }, false, 4 },
};

static const st_exec_ctx *
mode_ctx(const run_mode *m)
{
	return m->serial ? NULL : &m->ctx;
}

/* The GEMMs a product may run on: as chosen per shape, ours, OpenBLAS. */
static const k_gemm_impl gemm_impls[] = { K_GEMM_AUTO, K_GEMM_OWN, K_GEMM_OPENBLAS };
static const char *const gemm_impl_names[] = { "auto", "own", "openblas" };

/* ------------------------------------------------------------------------
 * Random data (test_rng and friends in helpers.c) and scratch
 * ------------------------------------------------------------------------ */

static void
assert_close(const float *got, const float *want, int64_t n, const char *what)
{
	char why[256];
	cr_assert(test_allclose(got, want, n, 1e-5, why, sizeof why), "%s: %s", what, why);
}

static int64_t
window_elements(const k_window *w, bool out)
{
	int64_t n = w->batch * (out ? w->out_channels : w->in_channels);
	for (int i = 0; i < w->spatial; i++)
		n *= out ? w->out[i] : w->in[i];
	return n;
}

static void
window_text(const k_window *w, char *buf, size_t size)
{
	int used = snprintf(buf, size, "N%lld C%lld->%lld g%lld", (long long)w->batch,
	                    (long long)w->in_channels, (long long)w->out_channels, (long long)w->groups);
	for (int i = 0; i < w->spatial && used > 0 && (size_t)used < size; i++)
		used += snprintf(buf + used, size - (size_t)used, " [in %lld out %lld k %lld s %lld d %lld p %lld,%lld]",
		                 (long long)w->in[i], (long long)w->out[i], (long long)w->kernel[i],
		                 (long long)w->stride[i], (long long)w->dilation[i], (long long)w->pad_begin[i],
		                 (long long)w->pad_end[i]);
}

/* ------------------------------------------------------------------------
 * (a) The reference cases of tests/reference/nn, written by make_nn.py from
 * ONNX Runtime, through each layer's CPU implementation.
 * ------------------------------------------------------------------------ */

#define CASE_NAME_MAX 96

typedef struct nn_case {
	char name[CASE_NAME_MAX];
	bool reference; /* with STRATA_KERNELS=reference */
} nn_case;

static void
case_dir(char *buf, size_t size)
{
	const char *top = getenv("top_srcdir");
	snprintf(buf, size, "%s/tests/reference/nn", top && *top ? top : ".");
}

static int
is_case(const struct dirent *e)
{
	return e->d_name[0] != '.' && strlen(e->d_name) < CASE_NAME_MAX;
}

/* The case folders, sorted; caller frees the list and its entries. */
static int
case_list(struct dirent ***list)
{
	char dir[PATH_MAX];
	case_dir(dir, sizeof dir);
	int n = scandir(dir, list, is_case, alphasort);
	return n < 0 ? 0 : n;
}

static void
free_cases(struct criterion_test_params *params)
{
	cr_free(params->params);
}

ParameterizedTestParameters(k_nn, reference_case)
{
	struct dirent **list;
	int n = case_list(&list);
	nn_case *cases = cr_malloc(sizeof *cases * (size_t)(2 * n + 1));
	for (int i = 0; i < n; i++) {
		for (int r = 0; r < 2; r++) {
			memset(&cases[2 * i + r], 0, sizeof *cases);
			snprintf(cases[2 * i + r].name, CASE_NAME_MAX, "%.*s", CASE_NAME_MAX - 1, list[i]->d_name);
			cases[2 * i + r].reference = r;
		}
		free(list[i]);
	}
	if (n > 0)
		free(list);
	return cr_make_param_array(nn_case, cases, (size_t)(2 * n), free_cases);
}

/* Reads a .npy file of a case as a tensor (the mapping stays in *npy). */
static st_tensor
case_tensor(const char *path, st_npy *npy)
{
	char err[256];
	cr_assert_eq(st_npy_read(path, npy, err, sizeof err), 0, "%s: %s", path, err);
	int dtype = st_npy_type_dtype(npy->type);
	cr_assert(dtype >= 0, "%s: type %s has no dtype", path, st_npy_type_name(npy->type));
	st_tensor t = { .data = (void *)npy->data, .layout = ST_LAYOUT_NCHW };
	t.shape.dtype = (st_dtype)dtype;
	t.shape.rank = npy->rank;
	for (int i = 0; i < npy->rank; i++)
		t.shape.dims[i] = npy->dims[i];
	return t;
}

ParameterizedTest(nn_case *c, k_nn, reference_case)
{
	char dir[PATH_MAX], path[PATH_MAX + 200];
	case_dir(dir, sizeof dir);
	snprintf(path, sizeof path, "%s/%s/model.strata.json", dir, c->name);
	st_diag d;
	st_diag_init(&d);
	st_graph *g = st_model_load(path, test_registry(), &d);
	cr_assert(g != NULL, "%s: %s", path, d.count ? d.items[0].text : "cannot be loaded");
	st_diag_free(&d);
	st_graph_check(g);
	cr_assert_eq(g->errors, 0, "%s: the model has type errors", c->name);

	/* The layer under test is the one that is neither input nor output. */
	st_layer *l = NULL;
	for (int i = 0; i < g->n_layers; i++) {
		const st_layer_type *t = g->layers[i]->type;
		if (t && !(t->desc->flags & (ST_LAYER_GRAPH_INPUT | ST_LAYER_GRAPH_OUTPUT)))
			l = g->layers[i];
	}
	cr_assert(l != NULL, "%s: no layer under test", c->name);
	const st_layer_desc *desc = l->type->desc;
	st_buf params;
	st_buf_init(&params);
	for (int i = 0; i < desc->n_params; i++) {
		st_buf_printf(&params, "%s%s=", i ? " " : "", desc->params[i].name);
		st_value_to_text(&desc->params[i], &l->params.values[i], &params);
	}

	st_npy arrays[ST_MAX_WEIGHTS + 8];
	st_tensor inputs[8], weights[ST_MAX_WEIGHTS];
	int n_arrays = 0;
	cr_assert_leq(l->n_inputs, 8);
	for (int i = 0; i < l->n_inputs; i++) {
		snprintf(path, sizeof path, "%s/%s/input_%s.npy", dir, c->name, l->inputs[i].layer->name);
		inputs[i] = case_tensor(path, &arrays[n_arrays++]);
	}
	for (int i = 0; i < l->n_weights; i++) {
		snprintf(path, sizeof path, "%s/%s/weights/%s_%s.npy", dir, c->name, l->name, l->weights[i].name);
		weights[i] = case_tensor(path, &arrays[n_arrays++]);
	}
	st_npy expected_npy;
	snprintf(path, sizeof path, "%s/%s/expected_out.npy", dir, c->name);
	st_tensor expected = case_tensor(path, &expected_npy);

	if (c->reference)
		setenv("STRATA_KERNELS", "reference", 1);
	test_layer res;
	int rc = test_layer_run(desc->name, params.data, l->n_inputs, inputs, l->n_weights,
	                        l->n_weights ? weights : NULL, &res);
	unsetenv("STRATA_KERNELS");
	cr_assert_eq(rc, 0, "%s: %s %s failed:\n%s", c->name, desc->name, params.data, res.messages);

	const st_tensor *got = &res.outputs[0];
	char a[128], b[128];
	test_shape_text(&got->shape, a, sizeof a);
	test_shape_text(&expected.shape, b, sizeof b);
	cr_assert(st_shape_equal(&got->shape, &expected.shape), "%s: output %s, expected %s", c->name, a, b);
	int64_t n = st_shape_elements(&expected.shape);
	if (expected.shape.dtype == ST_DTYPE_FLOAT32) {
		char why[256];
		cr_assert(test_allclose(got->data, expected.data, n, 1e-5, why, sizeof why), "%s%s: %s", c->name,
		          c->reference ? " (reference kernels)" : "", why);
	} else {
		cr_assert_eq(memcmp(got->data, expected.data, (size_t)st_shape_bytes(&expected.shape)), 0,
		             "%s: integer results differ", c->name);
	}

	test_layer_free(&res);
	st_npy_free(&expected_npy);
	for (int i = 0; i < n_arrays; i++)
		st_npy_free(&arrays[i]);
	st_buf_free(&params);
	st_graph_free(g);
}

/* The cases are there: a missing folder would otherwise pass silently. */
Test(k_nn, reference_cases_present)
{
	struct dirent **list;
	int n = case_list(&list);
	char dir[PATH_MAX];
	case_dir(dir, sizeof dir);
	cr_assert_geq(n, 60, "only %d reference cases under %s (is top_srcdir set?)", n, dir);
	for (int i = 0; i < n; i++)
		free(list[i]);
	free(list);
}

/* ------------------------------------------------------------------------
 * (b) Fast kernels against the reference kernels
 * ------------------------------------------------------------------------ */

/* Runs a convolution (or deconvolution) every way and compares with the
 * reference. */
static void
check_conv(test_rng *r, const k_window *w, bool transposed, bool bias)
{
	char text[512];
	window_text(w, text, sizeof text);
	int64_t kernel = 1;
	for (int i = 0; i < w->spatial; i++)
		kernel *= w->kernel[i];
	int64_t n_weights = transposed ? w->in_channels * (w->out_channels / w->groups) * kernel
	                               : w->out_channels * (w->in_channels / w->groups) * kernel;
	int64_t n_out = window_elements(w, true);
	float *x = test_random_floats(r, window_elements(w, false)), *filters = test_random_floats(r, n_weights);
	float *b = bias ? test_random_floats(r, w->out_channels) : NULL;
	float *want = test_nan_floats(n_out);
	(transposed ? k_deconv_ref : k_conv_ref)(w, x, filters, b, want);
	if (transposed) {
		for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
			size_t bytes = k_deconv_scratch_bytes(w, modes[m].slots);
			unsigned char *scratch = test_scratch_new(bytes);
			float *got = test_nan_floats(n_out);
			k_deconv(w, x, filters, b, got, scratch, modes[m].slots, mode_ctx(&modes[m]));
			char what[700];
			snprintf(what, sizeof what, "deconv %s, %s", text, modes[m].name);
			test_scratch_free(scratch, bytes, what);
			assert_close(got, want, n_out, what);
			free(got);
		}
	}
	/* A convolution at every SIMD level, with its filters as they are and
	 * packed beforehand, and once through OpenBLAS. */
	k_isa levels[K_ISA_COUNT];
	int n_levels = transposed ? 0 : test_isa_levels(levels);
	for (int l = 0; l <= n_levels && !transposed; l++) {
		bool blas = l == n_levels;
		if (blas)
			k_gemm_force(K_GEMM_OPENBLAS);
		else
			cr_assert_eq(k_cpu_isa_force(levels[l]), 0);
		size_t packed_bytes = k_conv_packed_bytes(w);
		void *packed = NULL;
		if (packed_bytes > 0) {
			packed = aligned_alloc(64, (packed_bytes + 63) / 64 * 64);
			k_conv_pack(w, filters, packed);
		}
		for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
			for (int pre = 0; pre < (packed ? 2 : 1); pre++) {
				size_t bytes = (pre ? k_conv_packed_scratch_bytes : k_conv_scratch_bytes)(w, modes[m].slots);
				unsigned char *scratch = test_scratch_new(bytes);
				float *got = test_nan_floats(n_out);
				if (pre)
					k_conv_packed(w, x, filters, packed, b, got, scratch, modes[m].slots, mode_ctx(&modes[m]));
				else
					k_conv(w, x, filters, b, got, scratch, modes[m].slots, mode_ctx(&modes[m]));
				char what[700];
				snprintf(what, sizeof what, "conv %s, %s, %s%s", text, modes[m].name,
				         blas ? "openblas" : k_cpu_isa_name(levels[l]), pre ? ", packed" : "");
				test_scratch_free(scratch, bytes, what);
				assert_close(got, want, n_out, what);
				free(got);
			}
		}
		free(packed);
	}
	k_gemm_force(K_GEMM_AUTO);
	k_cpu_isa_force(k_cpu_isa_best());
	free(x);
	free(filters);
	free(b);
	free(want);
}

/* A random window: conv gives ordinary output sizes, transposed ones with
 * output_padding and crops (sometimes negative, as the same modes can). */
static void
random_window(test_rng *r, k_window *w, bool transposed)
{
	*w = (k_window){ .spatial = (int)test_pick(r, 1, 3), .batch = test_pick(r, 1, 3) };
	int64_t in_per_group = test_pick(r, 1, 4), out_per_group = test_pick(r, 1, 4);
	w->groups = test_pick(r, 1, 3);
	if (test_pick(r, 0, 4) == 0)
		in_per_group = out_per_group = 1; /* depthwise */
	w->in_channels = w->groups * in_per_group;
	w->out_channels = w->groups * out_per_group;
	int64_t most = w->spatial == 3 ? 6 : w->spatial == 2 ? 12 : 24;
	for (int i = 0; i < w->spatial; i++) {
		for (;;) {
			w->in[i] = test_pick(r, 1, most);
			w->kernel[i] = test_pick(r, 1, w->spatial == 3 ? 3 : 4);
			w->stride[i] = test_pick(r, 1, 3);
			w->dilation[i] = test_pick(r, 1, 2);
			int64_t extent = (w->kernel[i] - 1) * w->dilation[i] + 1;
			if (transposed) {
				int64_t most_op = (w->stride[i] > w->dilation[i] ? w->stride[i] : w->dilation[i]) - 1;
				int64_t full = w->stride[i] * (w->in[i] - 1) + test_pick(r, 0, most_op) + extent;
				w->pad_begin[i] = test_pick(r, -1, 2);
				w->pad_end[i] = test_pick(r, -1, 2);
				w->out[i] = full - w->pad_begin[i] - w->pad_end[i];
				if (w->out[i] >= 1)
					break;
			} else {
				w->pad_begin[i] = test_pick(r, 0, 2);
				w->pad_end[i] = test_pick(r, 0, 2);
				int64_t padded = w->in[i] + w->pad_begin[i] + w->pad_end[i];
				if (padded < extent)
					continue;
				w->out[i] = (padded - extent) / w->stride[i] + 1;
				break;
			}
		}
	}
}

Test(k_nn, conv_fast_matches_reference_random)
{
	test_rng r = { 0x9e3779b97f4a7c15u };
	for (int i = 0; i < 150; i++) {
		k_window w;
		random_window(&r, &w, false);
		check_conv(&r, &w, false, i % 3 != 0);
	}
}

Test(k_nn, deconv_fast_matches_reference_random)
{
	test_rng r = { 0x2545f4914f6cdd1du };
	for (int i = 0; i < 150; i++) {
		k_window w;
		random_window(&r, &w, true);
		check_conv(&r, &w, true, i % 3 != 0);
	}
}

/* A 2-D window with explicit sizes (out computed as a convolution's). */
static k_window
window2d(int64_t n, int64_t c, int64_t oc, int64_t groups, int64_t h, int64_t wd, int64_t k, int64_t s,
         int64_t pad)
{
	k_window w;
	cr_assert(test_window2d(&w, n, c, oc, groups, h, wd, k, s, pad));
	return w;
}

/* The planner's paths: several column tiles, tiles cut mid-row, channel
 * blocks when there are fewer tiles than slots, 1x1 without im2col, and
 * direct loops for one input channel per group. */
Test(k_nn, conv_fast_paths)
{
	test_rng r = { 42 };
	k_window cases[] = {
		window2d(1, 32, 8, 1, 37, 41, 3, 1, 1),   /* 1517 outputs, K 288: two tiles, cut mid-row */
		window2d(1, 64, 96, 1, 5, 7, 3, 1, 1),    /* few positions, many channels: blocks */
		window2d(2, 12, 20, 4, 9, 13, 3, 2, 0),   /* groups, stride, no padding */
		window2d(1, 24, 40, 1, 33, 35, 1, 1, 0),  /* pointwise */
		window2d(2, 16, 16, 2, 20, 21, 1, 1, 0),  /* pointwise in groups */
		window2d(1, 8, 8, 1, 19, 17, 1, 2, 0),    /* 1x1 with stride: im2col */
		window2d(2, 6, 12, 6, 31, 29, 3, 1, 1),   /* depthwise, multiplier 2 */
		window2d(1, 1, 5, 1, 40, 40, 5, 2, 2),    /* one input channel */
		window2d(1, 3, 16, 1, 63, 65, 7, 2, 3),   /* a stem: 7x7 stride 2 */
		/* Same-size stride-1 convolutions (the direct source): rows
		 * narrower than a vector, a filter count that leaves a partial
		 * panel, groups, one column, many channels, a tile's worth. */
		window2d(1, 5, 13, 1, 9, 7, 3, 1, 1),
		window2d(2, 8, 12, 2, 15, 16, 3, 1, 1),
		window2d(1, 4, 8, 1, 17, 1, 3, 1, 1),
		window2d(1, 70, 24, 1, 12, 12, 3, 1, 1),
		window2d(1, 9, 17, 1, 11, 13, 5, 1, 2),
		window2d(1, 33, 40, 1, 7, 7, 1, 1, 0),
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		check_conv(&r, &cases[i], false, true);
	/* Same size with dilation 2, with an even kernel padded on one side only,
	 * and along one axis. */
	k_window dilated = window2d(1, 6, 10, 1, 20, 23, 3, 1, 2);
	dilated.dilation[0] = dilated.dilation[1] = 2;
	check_conv(&r, &dilated, false, true);
	k_window even = window2d(1, 5, 9, 1, 14, 18, 2, 1, 0);
	even.pad_end[0] = even.pad_end[1] = 1;
	even.out[0] = even.in[0];
	even.out[1] = even.in[1];
	check_conv(&r, &even, false, false);
	/* Strided convolutions split into stride phases: 3x3 stride 2 pad 1 on
	 * even and odd sizes, 1x1 stride 2, stride 3, strides of 2 and 1; rows
	 * of 16 and 8 evens and more, with tails of every length, on wide
	 * inputs (the vector column copies). */
	k_window strided[] = {
		window2d(1, 24, 40, 1, 28, 28, 3, 2, 1), window2d(2, 6, 13, 1, 15, 17, 3, 2, 1),
		window2d(1, 20, 16, 1, 14, 14, 1, 2, 0), window2d(1, 5, 8, 1, 19, 23, 3, 3, 1),
		window2d(1, 7, 9, 1, 11, 12, 3, 2, 1),   window2d(1, 6, 8, 1, 9, 67, 1, 2, 0),
		window2d(1, 5, 7, 1, 8, 64, 3, 2, 1),    window2d(1, 4, 9, 1, 7, 33, 1, 2, 0),
		window2d(1, 3, 10, 1, 6, 49, 3, 2, 1),   window2d(1, 4, 8, 1, 5, 32, 1, 2, 0),
	};
	strided[4].stride[1] = 1;
	strided[4].out[1] = strided[4].in[1];
	for (size_t i = 0; i < sizeof strided / sizeof strided[0]; i++)
		check_conv(&r, &strided[i], false, i % 2 == 0);
	k_window line = { .spatial = 1, .batch = 2, .in_channels = 7, .out_channels = 11, .groups = 1,
		          .in = { 50 }, .out = { 50 }, .kernel = { 5 }, .stride = { 1 }, .dilation = { 1 },
		          .pad_begin = { 2 }, .pad_end = { 2 } };
	check_conv(&r, &line, false, true);
}

Test(k_nn, deconv_fast_paths)
{
	test_rng r = { 43 };
	k_window cases[] = {
		window2d(1, 32, 48, 1, 9, 11, 4, 2, 1), /* one plane, many output channels: blocks */
		window2d(1, 16, 48, 1, 40, 40, 2, 2, 0), /* long input: two tiles when serial */
		window2d(2, 8, 8, 8, 7, 9, 3, 2, 1),    /* depthwise */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		/* Those sizes are a convolution's; give them a transposed output. */
		k_window *w = &cases[i];
		for (int a = 0; a < 2; a++) {
			w->out[a] = w->stride[a] * (w->in[a] - 1) + w->kernel[a] - w->pad_begin[a] - w->pad_end[a];
		}
		check_conv(&r, w, true, true);
	}
}

static void
check_pool(test_rng *r, const k_window *w, k_pool_mode mode, bool count_include_pad)
{
	char text[512];
	window_text(w, text, sizeof text);
	int64_t n_out = window_elements(w, true);
	float *x = test_random_floats(r, window_elements(w, false)), *want = test_nan_floats(n_out);
	k_pool_ref(w, mode, count_include_pad, x, want);
	for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
		float *got = test_nan_floats(n_out);
		k_pool(w, mode, count_include_pad, x, got, mode_ctx(&modes[m]));
		char what[700];
		snprintf(what, sizeof what, "%s pool %s%s, %s", mode == K_POOL_MAX ? "max" : "avg", text,
		         count_include_pad ? " counting pads" : "", modes[m].name);
		assert_close(got, want, n_out, what);
		free(got);
	}
	/* Both of k_pool's paths, the vector one at each SIMD level. */
	for (int path = -1; path < K_ISA_COUNT; path++) {
		for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
			float *got = test_nan_floats(n_out);
			if (path < 0)
				k_pool_general(w, mode, count_include_pad, x, got, mode_ctx(&modes[m]));
			else if (!k_pool_with((k_isa)path, w, mode, count_include_pad, x, got, mode_ctx(&modes[m]))) {
				free(got);
				continue;
			}
			char what[700];
			snprintf(what, sizeof what, "%s pool %s%s, %s, %s", mode == K_POOL_MAX ? "max" : "avg", text,
			         count_include_pad ? " counting pads" : "", modes[m].name,
			         path < 0 ? "general" : k_cpu_isa_name((k_isa)path));
			assert_close(got, want, n_out, what);
			free(got);
		}
	}
	free(x);
	free(want);
}

/* The windows the vector loops take: 2-D and 1-D, kernels 1 to 4, column
 * strides 1 and 2 (any row stride), padding and ceil mode, rows of odd
 * lengths around the vector widths. */
Test(k_nn, pool_vector_windows_match_reference)
{
	test_rng r = { 71 };
	int taken = 0;
	for (int t = 0; t < 400; t++) {
		k_window w = { .spatial = (int)test_pick(&r, 1, 2), .batch = test_pick(&r, 1, 2), .groups = 1 };
		w.in_channels = w.out_channels = test_pick(&r, 1, 5);
		bool ceil_mode = test_pick(&r, 0, 1);
		for (int i = 0; i < w.spatial; i++) {
			for (;;) {
				bool column = i == w.spatial - 1;
				w.in[i] = test_pick(&r, 1, column ? 75 : 13);
				w.kernel[i] = test_pick(&r, 1, 4);
				w.stride[i] = test_pick(&r, 1, column ? 2 : 3);
				w.dilation[i] = 1;
				w.pad_begin[i] = test_pick(&r, 0, w.kernel[i] - 1);
				w.pad_end[i] = test_pick(&r, 0, w.kernel[i] - 1);
				int64_t padded = w.in[i] + w.pad_begin[i] + w.pad_end[i];
				if (padded < w.kernel[i])
					continue;
				w.out[i] = (padded - w.kernel[i]) / w.stride[i] + 1;
				if (ceil_mode && (padded - w.kernel[i]) % w.stride[i]) {
					w.out[i]++;
					if ((w.out[i] - 1) * w.stride[i] >= w.in[i] + w.pad_begin[i])
						w.out[i]--;
				}
				break;
			}
		}
		/* Count the windows the vector loops take, so the test cannot pass by skipping them. */
		float *x = test_nan_floats(window_elements(&w, false)), *y = test_nan_floats(window_elements(&w, true));
		taken += k_pool_with(K_ISA_PORTABLE, &w, K_POOL_MAX, false, x, y, NULL);
		free(x), free(y);
		check_pool(&r, &w, t % 2 ? K_POOL_AVG : K_POOL_MAX, test_pick(&r, 0, 1));
	}
	cr_assert_eq(taken, 400);
}

/* The pooling layers of SqueezeNet and ResNet-18, and NaN and infinities,
 * which max pooling skips (NaN) or clamps to -FLT_MAX (-inf) as the
 * reference does. */
Test(k_nn, pool_network_shapes)
{
	test_rng r = { 72 };
	int64_t shapes[][6] = { /* in, kernel, stride, pad, ceil */
		{ 111, 3, 2, 0, 1 }, { 55, 3, 2, 0, 1 }, { 27, 3, 2, 0, 1 }, { 112, 3, 2, 1, 0 }, { 56, 2, 2, 0, 0 },
		{ 14, 3, 1, 1, 0 },
	};
	for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
		k_window w = { .spatial = 2, .batch = 1, .in_channels = 3, .out_channels = 3, .groups = 1 };
		for (int a = 0; a < 2; a++) {
			w.in[a] = shapes[i][0];
			w.kernel[a] = shapes[i][1];
			w.stride[a] = shapes[i][2];
			w.dilation[a] = 1;
			w.pad_begin[a] = w.pad_end[a] = shapes[i][3];
			int64_t span = w.in[a] + 2 * w.pad_begin[a] - w.kernel[a];
			w.out[a] = (span + (shapes[i][4] ? w.stride[a] - 1 : 0)) / w.stride[a] + 1;
		}
		for (int mode = 0; mode < 2; mode++) {
			check_pool(&r, &w, (k_pool_mode)mode, false);
			check_pool(&r, &w, (k_pool_mode)mode, true);
		}
	}
	/* Special values through every path. */
	k_window w = { .spatial = 2, .batch = 1, .in_channels = 1, .out_channels = 1, .groups = 1,
		       .in = { 6, 40 }, .out = { 3, 20 }, .kernel = { 2, 2 }, .stride = { 2, 2 }, .dilation = { 1, 1 } };
	float x[240], want[60];
	for (int i = 0; i < 240; i++)
		x[i] = i % 7 == 0 ? NAN : i % 5 == 0 ? -INFINITY : (float)(i % 11) - 5.0f;
	for (int i = 0; i < 40; i++)
		x[i] = x[i + 40] = -INFINITY;
	k_pool_ref(&w, K_POOL_MAX, false, x, want);
	for (int path = -1; path < K_ISA_COUNT; path++) {
		float got[60];
		if (path < 0)
			k_pool_general(&w, K_POOL_MAX, false, x, got, NULL);
		else if (!k_pool_with((k_isa)path, &w, K_POOL_MAX, false, x, got, NULL))
			continue;
		cr_assert(memcmp(got, want, sizeof got) == 0, "special values, path %d", path);
	}
}

Test(k_nn, pool_fast_matches_reference_random)
{
	test_rng r = { 7 };
	for (int t = 0; t < 300; t++) {
		k_window w = { .spatial = (int)test_pick(&r, 1, 3), .batch = test_pick(&r, 1, 2), .groups = 1 };
		w.in_channels = w.out_channels = test_pick(&r, 1, 4);
		bool ceil_mode = test_pick(&r, 0, 1);
		for (int i = 0; i < w.spatial; i++) {
			for (;;) {
				w.in[i] = test_pick(&r, 1, w.spatial == 3 ? 7 : 15);
				w.kernel[i] = test_pick(&r, 1, 4);
				w.stride[i] = test_pick(&r, 1, 3);
				w.dilation[i] = test_pick(&r, 1, 2);
				w.pad_begin[i] = test_pick(&r, 0, 2);
				w.pad_end[i] = test_pick(&r, 0, 2);
				int64_t extent = (w.kernel[i] - 1) * w.dilation[i] + 1;
				int64_t padded = w.in[i] + w.pad_begin[i] + w.pad_end[i];
				if (padded < extent)
					continue;
				/* std-conv.c's rule, last-window drop included. */
				w.out[i] = (padded - extent) / w.stride[i] + 1;
				if (ceil_mode && (padded - extent) % w.stride[i]) {
					w.out[i]++;
					if ((w.out[i] - 1) * w.stride[i] >= w.in[i] + w.pad_begin[i])
						w.out[i]--;
				}
				break;
			}
		}
		check_pool(&r, &w, t % 2 ? K_POOL_AVG : K_POOL_MAX, test_pick(&r, 0, 1));
	}
}

/* Rows longer than the kernel reduces on its stack take the plain path. */
Test(k_nn, pool_long_rows)
{
	test_rng r = { 8 };
	k_window w = { .spatial = 1, .batch = 1, .in_channels = 2, .out_channels = 2, .groups = 1,
		       .in = { 3001 }, .kernel = { 5 }, .stride = { 2 }, .dilation = { 2 },
		       .pad_begin = { 3 }, .pad_end = { 4 } };
	w.out[0] = (3001 + 7 - 9) / 2 + 1;
	for (int mode = 0; mode < 2; mode++) {
		check_pool(&r, &w, (k_pool_mode)mode, false);
		check_pool(&r, &w, (k_pool_mode)mode, true);
	}
	/* Rows just short of the vector loops' limit: fewer rows per group. */
	k_window wide = { .spatial = 2, .batch = 1, .in_channels = 2, .out_channels = 2, .groups = 1,
		          .in = { 9, 2040 }, .out = { 5, 1021 }, .kernel = { 3, 3 }, .stride = { 2, 2 },
		          .dilation = { 1, 1 }, .pad_begin = { 1, 1 }, .pad_end = { 1, 1 } };
	float *x = test_nan_floats(window_elements(&wide, false)), *y = test_nan_floats(window_elements(&wide, true));
	cr_assert(k_pool_with(K_ISA_PORTABLE, &wide, K_POOL_MAX, false, x, y, NULL), "the vector loops take it");
	free(x), free(y);
	for (int mode = 0; mode < 2; mode++)
		check_pool(&r, &wide, (k_pool_mode)mode, mode == 1);
}

Test(k_nn, global_pool_matches_reference)
{
	test_rng r = { 11 };
	int64_t sizes[][2] = { { 1, 1 }, { 6, 49 }, { 64, 3136 }, { 3, 17 }, { 1000, 169 }, { 2, 50176 }, { 5, 31 } };
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		int64_t planes = sizes[i][0], size = sizes[i][1];
		float *x = test_random_floats(&r, planes * size);
		for (int mode = 0; mode < 2; mode++) {
			float *want = test_nan_floats(planes);
			k_global_pool_ref(planes, size, (k_pool_mode)mode, x, want);
			for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
				float *got = test_nan_floats(planes);
				k_global_pool(planes, size, (k_pool_mode)mode, x, got, mode_ctx(&modes[m]));
				assert_close(got, want, planes, modes[m].name);
				for (int isa = 0; isa < K_ISA_COUNT; isa++) {
					for (int64_t p = 0; p < planes; p++)
						got[p] = NAN;
					if (!k_global_pool_with((k_isa)isa, planes, size, (k_pool_mode)mode, x, got,
					                        mode_ctx(&modes[m])))
						continue;
					char what[160];
					snprintf(what, sizeof what, "global %s %lld x %lld, %s, %s", mode ? "avg" : "max",
					         (long long)planes, (long long)size, modes[m].name, k_cpu_isa_name((k_isa)isa));
					assert_close(got, want, planes, what);
				}
				free(got);
			}
			free(want);
		}
		free(x);
	}
}

Test(k_nn, batch_norm_fold_matches_reference)
{
	test_rng r = { 13 };
	int64_t shapes[][3] = { { 2, 5, 42 }, { 4, 6, 1 }, { 1, 32, 3136 } };
	for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
		int64_t n = shapes[i][0], c = shapes[i][1], inner = shapes[i][2], count = n * c * inner;
		float *x = test_random_floats(&r, count), *scale = test_random_floats(&r, c), *bias = test_random_floats(&r, c);
		float *mean = test_random_floats(&r, c), *variance = test_random_floats(&r, c);
		for (int64_t j = 0; j < c; j++)
			variance[j] = fabsf(variance[j]) + 0.1f;
		float *want = test_nan_floats(count), *a = test_nan_floats(c), *b = test_nan_floats(c);
		k_batch_norm_ref(n, c, inner, x, scale, bias, mean, variance, 1e-5f, want);
		k_batch_norm_fold(c, scale, bias, mean, variance, 1e-5f, a, b);
		for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
			float *got = test_nan_floats(count);
			k_channel_affine(n, c, inner, x, a, b, got, mode_ctx(&modes[m]));
			assert_close(got, want, count, modes[m].name);
			/* In place, as ST_IMPL_IN_PLACE allows. */
			memcpy(got, x, (size_t)count * sizeof *got);
			k_channel_affine(n, c, inner, got, a, b, got, mode_ctx(&modes[m]));
			assert_close(got, want, count, modes[m].name);
			free(got);
		}
		free(x), free(scale), free(bias), free(mean), free(variance), free(want), free(a), free(b);
	}
}

Test(k_nn, instance_norm_matches_reference)
{
	test_rng r = { 17 };
	int64_t shapes[][3] = { { 2, 3, 30 }, { 1, 4, 1 }, { 3, 8, 1000 } };
	for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
		int64_t n = shapes[i][0], c = shapes[i][1], inner = shapes[i][2], count = n * c * inner;
		float *x = test_random_floats(&r, count), *scale = test_random_floats(&r, c), *bias = test_random_floats(&r, c);
		for (int64_t j = 0; j < count; j++)
			x[j] = x[j] * 3.0f + 10.0f; /* an offset the statistics must not lose */
		float *want = test_nan_floats(count);
		k_instance_norm_ref(n, c, inner, x, scale, bias, 1e-5f, want);
		for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
			float *got = test_nan_floats(count);
			k_instance_norm(n, c, inner, x, scale, bias, 1e-5f, got, mode_ctx(&modes[m]));
			assert_close(got, want, count, modes[m].name);
			memcpy(got, x, (size_t)count * sizeof *got);
			k_instance_norm(n, c, inner, got, scale, bias, 1e-5f, got, mode_ctx(&modes[m]));
			assert_close(got, want, count, modes[m].name);
			free(got);
		}
		free(x), free(scale), free(bias), free(want);
	}
}

Test(k_nn, fully_connected_matches_reference)
{
	test_rng r = { 19 };
	k_gemm_init();
	int64_t shapes[][3] = { { 1, 1, 1 },     { 1, 512, 1000 }, { 4, 33, 17 }, { 3, 70, 257 },
		                { 2, 0, 5 },     { 37, 300, 71 },  { 8, 1, 9 },  { 64, 513, 100 },
		                { 2, 1280, 1001 }, { 1, 37, 6 },   { 3, 15, 3 }, { 1, 16, 4 }, { 1, 100, 13 }, { 1, 300, 4001 } };
	k_isa levels[K_ISA_COUNT];
	int n_levels = test_isa_levels(levels);
	for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
		int64_t n = shapes[i][0], k = shapes[i][1], m = shapes[i][2];
		float *x = test_random_floats(&r, n * k), *w = test_random_floats(&r, m * k), *b = test_random_floats(&r, m);
		for (int with_bias = 0; with_bias < 2; with_bias++) {
			float *want = test_nan_floats(n * m);
			k_fully_connected_ref(n, k, m, x, w, with_bias ? b : NULL, want);
			for (int l = 0; l < n_levels; l++) {
				cr_assert_eq(k_cpu_isa_force(levels[l]), 0);
				for (size_t g = 0; g < sizeof gemm_impls / sizeof gemm_impls[0]; g++) {
					k_gemm_force(gemm_impls[g]);
					size_t packed_bytes = k_fully_connected_packed_bytes(n, k, m);
					void *packed = NULL;
					if (packed_bytes) {
						packed = aligned_alloc(64, (packed_bytes + 63) / 64 * 64);
						k_fully_connected_pack(n, k, m, w, packed);
					}
					for (size_t j = 0; j < sizeof modes / sizeof modes[0]; j++) {
						size_t bytes = k_fully_connected_scratch_bytes(n, k, m, modes[j].slots);
						unsigned char *scratch = test_scratch_new(bytes);
						float *got = test_nan_floats(n * m);
						k_fully_connected(n, k, m, x, w, packed, with_bias ? b : NULL, got, scratch,
						                  modes[j].slots, mode_ctx(&modes[j]));
						char what[160];
						snprintf(what, sizeof what, "fc %lldx%lld -> %lld, %s, %s, %s", (long long)n,
						         (long long)k, (long long)m, modes[j].name, gemm_impl_names[g],
						         k_cpu_isa_name(levels[l]));
						test_scratch_free(scratch, bytes, what);
						assert_close(got, want, n * m, what);
						free(got);
					}
					free(packed);
				}
			}
			k_gemm_force(K_GEMM_AUTO);
			free(want);
		}
		free(x), free(w), free(b);
	}
}

/* A random pair of matmul operands that broadcast. */
static void
random_matmul_shapes(test_rng *r, st_shape *a, st_shape *b)
{
	*a = (st_shape){ .dtype = ST_DTYPE_FLOAT32, .rank = (int)test_pick(r, 1, 4) };
	*b = (st_shape){ .dtype = ST_DTYPE_FLOAT32, .rank = (int)test_pick(r, 1, 4) };
	int64_t m = test_pick(r, 1, 9), k = test_pick(r, 1, 40), n = test_pick(r, 1, 70);
	a->dims[a->rank - 1] = k;
	if (a->rank >= 2)
		a->dims[a->rank - 2] = m;
	if (b->rank == 1) {
		b->dims[0] = k;
	} else {
		b->dims[b->rank - 2] = k;
		b->dims[b->rank - 1] = n;
	}
	int a_batch = a->rank >= 2 ? a->rank - 2 : 0, b_batch = b->rank >= 2 ? b->rank - 2 : 0;
	for (int i = 1; i <= 2; i++) {
		int64_t size = test_pick(r, 1, 3);
		if (i <= a_batch)
			a->dims[a_batch - i] = test_pick(r, 0, 1) ? size : 1;
		if (i <= b_batch)
			b->dims[b_batch - i] = test_pick(r, 0, 1) ? size : 1;
	}
}

static int64_t
elements(const st_shape *s)
{
	int64_t n = 1;
	for (int i = 0; i < s->rank; i++)
		n *= s->dims[i];
	return n;
}

Test(k_nn, matmul_matches_reference_random)
{
	test_rng r = { 23 };
	k_gemm_init();
	k_isa levels[K_ISA_COUNT];
	int n_levels = test_isa_levels(levels);
	for (int t = 0; t < 200; t++) {
		st_shape as, bs;
		random_matmul_shapes(&r, &as, &bs);
		k_matmul_dims g;
		cr_assert_eq(k_matmul_dims_make(&as, &bs, &g), 0);
		int64_t count = g.batch * g.m * g.n;
		float *a = test_random_floats(&r, elements(&as)), *b = test_random_floats(&r, elements(&bs));
		float *want = test_nan_floats(count);
		k_matmul_ref(&g, a, b, want);
		for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
			/* Our SGEMM at a level picked from those there are, or OpenBLAS. */
			k_gemm_force(gemm_impls[(t + m) % 3]);
			cr_assert_eq(k_cpu_isa_force(levels[(t / 3 + m) % n_levels]), 0);
			size_t bytes = k_matmul_scratch_bytes(&g, modes[m].slots);
			unsigned char *scratch = test_scratch_new(bytes);
			float *got = test_nan_floats(count);
			k_matmul(&g, a, b, got, scratch, modes[m].slots, mode_ctx(&modes[m]));
			test_scratch_free(scratch, bytes, modes[m].name);
			assert_close(got, want, count, modes[m].name);
			free(got);
		}
		k_gemm_force(K_GEMM_AUTO);
		/* The integer kernels against the float reference on small integers,
		 * which the float sums hold exactly. */
		int32_t *ai = malloc(sizeof *ai * (size_t)elements(&as)), *bi = malloc(sizeof *bi * (size_t)elements(&bs));
		int64_t *al = malloc(sizeof *al * (size_t)elements(&as)), *bl = malloc(sizeof *bl * (size_t)elements(&bs));
		for (int64_t i = 0; i < elements(&as); i++) {
			ai[i] = (int32_t)test_pick(&r, -20, 20);
			al[i] = ai[i];
			a[i] = (float)ai[i];
		}
		for (int64_t i = 0; i < elements(&bs); i++) {
			bi[i] = (int32_t)test_pick(&r, -20, 20);
			bl[i] = bi[i];
			b[i] = (float)bi[i];
		}
		k_matmul_ref(&g, a, b, want);
		int32_t *oi = malloc(sizeof *oi * (size_t)count);
		int64_t *ol = malloc(sizeof *ol * (size_t)count);
		k_matmul_i32(&g, ai, bi, oi, mode_ctx(&modes[3]));
		k_matmul_i64(&g, al, bl, ol, mode_ctx(&modes[1]));
		for (int64_t i = 0; i < count; i++) {
			cr_assert_eq(oi[i], (int32_t)want[i]);
			cr_assert_eq(ol[i], (int64_t)want[i]);
		}
		free(ai), free(bi), free(al), free(bl), free(oi), free(ol);
		free(a), free(b), free(want);
	}
}

Test(k_nn, matmul_integers_wrap)
{
	st_shape s = { .dtype = ST_DTYPE_INT64, .rank = 2, .dims = { 1, 2 } };
	st_shape t = { .dtype = ST_DTYPE_INT64, .rank = 2, .dims = { 2, 1 } };
	k_matmul_dims g;
	cr_assert_eq(k_matmul_dims_make(&s, &t, &g), 0);
	int64_t a[2] = { INT64_MAX, 1 }, b[2] = { 1, 1 }, out = 0;
	k_matmul_i64(&g, a, b, &out, NULL);
	cr_assert_eq(out, INT64_MIN);
	int32_t a32[2] = { INT32_MAX, 2 }, b32[2] = { 2, 1 }, out32 = 0;
	k_matmul_i32(&g, a32, b32, &out32, NULL);
	cr_assert_eq(out32, 0);
}

/* ------------------------------------------------------------------------
 * The implementations: failures at prepare, and prepare again
 * ------------------------------------------------------------------------ */

/* A float32 tensor of the given shape text filled with `value`; free data. */
static st_tensor
filled(const char *shape, float value)
{
	st_tensor t = { .shape = test_shape(shape), .layout = ST_LAYOUT_NCHW };
	int64_t n = st_shape_elements(&t.shape);
	float *v = malloc((size_t)(n ? n : 1) * sizeof *v);
	for (int64_t i = 0; i < n; i++)
		v[i] = value;
	t.data = v;
	return t;
}

static void
assert_failed(const test_layer *res, const char *text)
{
	cr_assert_neq(res->rc, 0, "expected a failure mentioning '%s'", text);
	cr_assert(strstr(res->messages, "failed: ") != NULL, "no failure message in:\n%s", res->messages);
	cr_assert(strstr(res->messages, text) != NULL, "expected '%s' in:\n%s", text, res->messages);
}

Test(k_nn, prepare_refuses_wrong_filter_shape)
{
	st_tensor in = filled("1x3x8x8", 1), w[2] = { filled("4x3x3x2", 1), filled("4", 0) };
	test_layer res;
	test_layer_run("convolution", "num_output=4 kernel=3 pads=1", 1, &in, 2, w, &res);
	assert_failed(&res, "the filter weights are float32 4x3x3x2, expected float32 4x3x3x3");
	test_layer_free(&res);
	free(w[0].data);
	w[0] = filled("4x3x3x3", 1);
	free(w[1].data);
	w[1] = filled("5", 0);
	test_layer_run("convolution", "num_output=4 kernel=3 pads=1", 1, &in, 2, w, &res);
	assert_failed(&res, "the bias weights are float32 5, expected float32 4");
	test_layer_free(&res);
	free(in.data), free(w[0].data), free(w[1].data);
}

Test(k_nn, prepare_refuses_float16)
{
	st_tensor in = filled("1x2x4x4", 0);
	in.shape.dtype = ST_DTYPE_FLOAT16;
	test_layer res;
	test_layer_run("pooling", "kernel=2", 1, &in, 0, NULL, &res);
	assert_failed(&res, "computes in float32");
	test_layer_free(&res);
	test_layer_run("global_pooling", "", 1, &in, 0, NULL, &res);
	assert_failed(&res, "computes in float32");
	test_layer_free(&res);
	free(in.data);
}

Test(k_nn, prepare_refuses_missing_and_misshapen_weights)
{
	st_tensor in = filled("2x3x4", 1);
	st_tensor w[4] = { filled("3", 1), filled("3", 0), filled("3", 0), filled("3", 1) };
	test_layer res;
	void *mean = w[2].data;
	w[2].data = NULL;
	test_layer_run("batch_normalization", "", 1, &in, 4, w, &res);
	assert_failed(&res, "the mean weights are missing");
	test_layer_free(&res);
	w[2].data = mean;
	free(w[1].data);
	w[1] = filled("2", 0);
	test_layer_run("instance_normalization", "", 1, &in, 2, w, &res);
	assert_failed(&res, "the bias weights are float32 2, expected float32 3");
	test_layer_free(&res);
	st_tensor fc[2] = { filled("5x11", 1), filled("5", 0) };
	test_layer_run("fully_connected", "num_output=5", 1, &in, 2, fc, &res);
	assert_failed(&res, "the weight matrix weights are float32 5x11, expected float32 5x12");
	test_layer_free(&res);
	free(in.data), free(fc[0].data), free(fc[1].data);
	for (int i = 0; i < 4; i++)
		free(w[i].data);
}

Test(k_nn, prepare_refuses_matmul_layout)
{
	st_tensor in[2] = { filled("2x3x4x5", 1), filled("5x2", 1) };
	in[0].layout = ST_LAYOUT_NHWC;
	test_layer res;
	test_layer_run("matrix_multiply", "", 2, in, 0, NULL, &res);
	assert_failed(&res, "needs NCHW tensors");
	test_layer_free(&res);
	free(in[0].data), free(in[1].data);
}

/* Integers pass through the implementation as they are. */
Test(k_nn, matmul_layer_int32)
{
	st_tensor in[2] = { { .shape = test_shape("int32:2x3"), .layout = ST_LAYOUT_NCHW },
		            { .shape = test_shape("int32:3"), .layout = ST_LAYOUT_NCHW } };
	int32_t a[6] = { 1, 2, 3, 4, 5, 6 }, b[3] = { 1, 0, -1 };
	in[0].data = a;
	in[1].data = b;
	test_layer res;
	cr_assert_eq(test_layer_run("matmul", "", 2, in, 0, NULL, &res), 0, "%s", res.messages);
	assert_shape(res.outputs[0].shape, "int32:2");
	const int32_t *out = res.outputs[0].data;
	cr_assert(out[0] == -2 && out[1] == -2);
	test_layer_free(&res);
}

static void
serial_for(const st_exec_ctx *ctx, int64_t n, int64_t grain, st_range_fn fn, void *arg)
{
	(void)ctx;
	(void)grain;
	fn(arg, 0, n);
}

/* Prepare runs again when input sizes change: the state is kept, the
 * geometry and scratch follow the new shape. */
Test(k_nn, prepare_again_with_new_input_size)
{
	const st_registry *reg = test_registry();
	const st_layer_type *type = st_registry_find_layer(reg, "convolution");
	const st_impl_desc *impl = st_registry_find_impl(reg, "convolution", "cpu");
	cr_assert(type != NULL && impl != NULL);
	st_params p;
	st_params_init(&p, type->desc->params, type->desc->n_params, type->defaults);
	/* kernel 3, pads 0, bias: the defaults. */
	p.values[st_params_find(type->desc->params, type->desc->n_params, "num_output")].i = 6;
	test_rng r = { 5 };
	float *filters = test_random_floats(&r, 6 * 4 * 9), *bias = test_random_floats(&r, 6);
	st_tensor weights[2] = {
		{ .data = filters, .shape = test_shape("6x4x3x3"), .layout = ST_LAYOUT_NCHW },
		{ .data = bias, .shape = test_shape("6"), .layout = ST_LAYOUT_NCHW },
	};
	st_exec_report report = { 0 };
	st_exec_layer L = { .name = "conv", .desc = type->desc, .params = p.values, .n_inputs = 1,
		            .n_outputs = 1, .n_weights = 2, .weights = weights, .host_private = &report };
	const char *sizes[][2] = { { "1x4x9x9", "1x6x7x7" }, { "2x4x30x17", "2x6x28x15" }, { "1x4x5x3", "1x6x3x1" } };
	void *state = NULL;
	for (int i = 0; i < 3; i++) {
		st_tensor in = { .shape = test_shape(sizes[i][0]), .layout = ST_LAYOUT_NCHW };
		st_tensor out = { .shape = test_shape(sizes[i][1]), .layout = ST_LAYOUT_NCHW };
		int64_t n_in = st_shape_elements(&in.shape), n_out = st_shape_elements(&out.shape);
		in.data = test_random_floats(&r, n_in);
		out.data = test_nan_floats(n_out);
		L.inputs = &in;
		L.outputs = &out;
		cr_assert_eq(impl->prepare(&L, &st_host), 0, "%s", report.text);
		if (i > 0)
			cr_assert_eq(L.state, state, "prepare replaced its state");
		state = L.state;
		unsigned char *scratch = test_scratch_new(L.scratch_bytes);
		L.scratch = scratch;
		st_exec_ctx ctx = { .api = &st_host, .n_threads = 1, .parallel_for = serial_for };
		cr_assert_eq(impl->run(&L, &ctx), 0);
		test_scratch_free(scratch, L.scratch_bytes, "convolution");
		k_window w = { .spatial = 2, .batch = in.shape.dims[0], .in_channels = 4, .out_channels = 6,
			       .groups = 1 };
		for (int a = 0; a < 2; a++) {
			w.in[a] = in.shape.dims[2 + a];
			w.out[a] = out.shape.dims[2 + a];
			w.kernel[a] = 3;
			w.stride[a] = w.dilation[a] = 1;
		}
		float *want = test_nan_floats(n_out);
		k_conv_ref(&w, in.data, filters, bias, want);
		assert_close(out.data, want, n_out, sizes[i][0]);
		free(want), free(in.data), free(out.data);
	}
	impl->release(&L);
	cr_assert_null(L.state);
	free(filters), free(bias);
	st_params_clear(&p);
}

/* ------------------------------------------------------------------------
 * Timing (not a test): STRATA_PERF=1 strata-unit --filter 'k_nn/perf*'
 * ------------------------------------------------------------------------ */

static double
now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int
compare_doubles(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Median milliseconds of a convolution over `runs` runs after 3 warm-ups. */
static double
time_conv(const k_window *w, const float *x, const float *filters, float *y, const st_exec_ctx *ctx, int slots)
{
	size_t bytes = k_conv_scratch_bytes(w, slots);
	unsigned char *scratch = test_scratch_new(bytes);
	double times[31];
	int runs = 31;
	for (int i = 0; i < 3 + runs; i++) {
		double t0 = now();
		k_conv(w, x, filters, NULL, y, scratch, slots, ctx);
		if (i >= 3)
			times[i - 3] = (now() - t0) * 1e3;
	}
	test_scratch_free(scratch, bytes, "timed conv");
	qsort(times, (size_t)runs, sizeof times[0], compare_doubles);
	return times[runs / 2];
}

Test(k_nn, perf_conv3x3_64x56x56)
{
	if (getenv("STRATA_PERF") == NULL)
		cr_skip_test("timing only: set STRATA_PERF=1");
	k_gemm_init();
	k_window w = window2d(1, 64, 64, 1, 56, 56, 3, 1, 1);
	test_rng r = { 99 };
	float *x = test_random_floats(&r, 64 * 56 * 56), *filters = test_random_floats(&r, 64 * 64 * 9);
	float *y = test_nan_floats(64 * 56 * 56);
	double one = time_conv(&w, x, filters, y, NULL, 1);
	st_exec_ctx two = { .n_threads = 2, .parallel_for = test_threads_run };
	double both = time_conv(&w, x, filters, y, &two, 2);
	double gflop = 2.0 * 64 * 64 * 9 * 56 * 56 * 1e-9;
	fprintf(stderr,
	        "conv 64->64 3x3 pad 1 on 1x64x56x56: %.3f ms on 1 thread (%.1f GFLOP/s), %.3f ms on 2 "
	        "threads (%.1f GFLOP/s); PyTorch 1 thread: 2.09 ms\n",
	        one, gflop / one * 1e3, both, gflop / both * 1e3);
	free(x), free(filters), free(y);
}

/* The pointwise convolution on channels-last tensors against its reference
 * (the fully connected product, in double), at every SIMD level, serially
 * and on threads, with relu and clip applied as the tiles store and another
 * activation after (the bound scaled by the unclamped results): shapes
 * around every tile size, MobileNetV2's, and one deeper than a depth block
 * of every level. */
Test(k_nn, pointwise_nhwc_matches_reference)
{
	test_rng r = { 0x70717731u };
	int64_t shapes[][3] = {
		{ 1, 1, 1 },      { 7, 5, 3 },       { 49, 960, 160 }, { 49, 160, 960 }, { 196, 384, 64 },
		{ 196, 64, 384 }, { 784, 192, 32 },  { 784, 32, 192 }, { 169, 512, 1000 }, { 50, 17, 65 },
		{ 97, 300, 24 },  { 3136, 24, 144 }, { 15, 1, 33 },     { 2, 1000, 2 },  { 61, 1300, 40 },
	};
	const k_post posts[] = {
		{ .on = false },
		{ .on = true, .act = K_ACT_RELU },
		{ .on = true, .act = K_ACT_CLIP, .a = -0.2f, .b = 0.3f },
		{ .on = true, .act = K_ACT_LEAKY_RELU, .a = 0.25f },
	};
	k_isa before = k_cpu_isa();
	k_isa levels[K_ISA_COUNT];
	int n_levels = test_isa_levels(levels);
	for (int l = 0; l < n_levels; l++) {
		cr_assert_eq(k_cpu_isa_force(levels[l]), 0);
		for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
			int64_t p = shapes[i][0], cin = shapes[i][1], cout = shapes[i][2];
			float *x = test_random_floats(&r, p * cin), *w = test_random_floats(&r, cout * cin);
			float *b = test_random_floats(&r, cout);
			float *want = malloc(sizeof *want * (size_t)(p * cout)), *got = malloc(sizeof *got * (size_t)(p * cout));
			size_t pb = k_pointwise_nhwc_packed_bytes(p, cin, cout);
			void *packed = aligned_alloc(64, (pb + 63) / 64 * 64);
			cr_assert(want && got && packed);
			k_pointwise_nhwc_pack(p, cin, cout, w, packed);
			for (size_t k = 0; k < sizeof posts / sizeof posts[0]; k++) {
				k_pointwise_nhwc_ref(p, cin, cout, x, w, i % 2 ? b : NULL, want);
				double scale = test_max_abs(want, p * cout);
				if (posts[k].on)
					k_activation(posts[k].act, posts[k].a, posts[k].b, want, p * cout);
				for (int threads = 1; threads <= 3; threads += 2) {
					st_exec_ctx ctx = { .n_threads = threads, .parallel_for = test_threads_run };
					size_t sb = k_pointwise_nhwc_scratch_bytes(p, cin, cout, threads);
					unsigned char *scratch = test_scratch_new(sb);
					memset(got, 0x7f, sizeof *got * (size_t)(p * cout));
					k_pointwise_nhwc(p, cin, cout, x, packed, i % 2 ? b : NULL, got, scratch, threads, &posts[k],
					                 threads > 1 ? &ctx : NULL);
					char what[160], why[256];
					snprintf(what, sizeof what, "%s, %lld positions, %lld -> %lld, post %zu, %d thread(s)",
					         k_cpu_isa_name(levels[l]), (long long)p, (long long)cin, (long long)cout, k, threads);
					test_scratch_free(scratch, sb, what);
					cr_assert(test_allclose_scaled(got, want, p * cout, 1e-5, scale, why, sizeof why), "%s: %s", what,
					          why);
				}
			}
			free(x), free(w), free(b), free(want), free(got), free(packed);
		}
	}
	k_cpu_isa_force(before);
}

/* The pointwise convolution with float16 storage is the float32 one on the
 * widened input, narrowed, to the bit: at every level, on 1 to 3 threads
 * (blocks split unevenly), with the activations, from one block to many;
 * the scratch it asks for is enough. */
Test(k_nn, pointwise_nhwc_half_is_narrowed_float)
{
	test_rng r = { 0x68616c66u };
	int64_t shapes[][3] = {
		{ 1, 1, 1 },     { 7, 5, 3 },       { 49, 960, 160 }, { 196, 64, 384 }, { 97, 300, 24 },
		{ 3136, 24, 144 }, { 12544, 16, 96 }, { 50, 17, 65 },  { 2, 1000, 2 },
	};
	const k_post posts[] = {
		{ .on = false },
		{ .on = true, .act = K_ACT_CLIP, .a = 0.0f, .b = 0.25f },
		{ .on = true, .act = K_ACT_LEAKY_RELU, .a = 0.25f },
	};
	k_isa before = k_cpu_isa();
	k_isa levels[K_ISA_COUNT];
	int n_levels = test_isa_levels(levels);
	for (int l = 0; l < n_levels; l++) {
		cr_assert_eq(k_cpu_isa_force(levels[l]), 0);
		for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
			int64_t p = shapes[i][0], cin = shapes[i][1], cout = shapes[i][2];
			float *x = test_random_floats(&r, p * cin), *w = test_random_floats(&r, cout * cin);
			float *b = test_random_floats(&r, cout), *y = malloc(sizeof *y * (size_t)(p * cout));
			uint16_t *xh = malloc(sizeof *xh * (size_t)(p * cin)), *want = malloc(sizeof *want * (size_t)(p * cout));
			uint16_t *got = malloc(sizeof *got * (size_t)(p * cout));
			size_t pb = k_pointwise_nhwc_packed_bytes(p, cin, cout);
			void *packed = aligned_alloc(64, (pb + 63) / 64 * 64);
			cr_assert(y && xh && want && got && packed);
			/* Inputs a half holds exactly: the float kernel reads what the
			 * half one widens. */
			k_float_to_half_array(x, xh, p * cin);
			k_half_to_float_array(xh, x, p * cin);
			k_pointwise_nhwc_pack(p, cin, cout, w, packed);
			for (size_t k = 0; k < sizeof posts / sizeof posts[0]; k++) {
				const float *bias = (i + k) % 2 ? b : NULL;
				size_t fb = k_pointwise_nhwc_scratch_bytes(p, cin, cout, 1);
				unsigned char *fs = test_scratch_new(fb);
				k_pointwise_nhwc(p, cin, cout, x, packed, bias, y, fs, 1, &posts[k], NULL);
				test_scratch_free(fs, fb, "float32 product");
				k_float_to_half_array(y, want, p * cout);
				for (int threads = 1; threads <= 3; threads++) {
					st_exec_ctx ctx = { .n_threads = threads,
						            .parallel_for = threads == 3 ? test_pieces_run : test_threads_run };
					size_t sb = k_pointwise_nhwc_half_scratch_bytes(p, cin, cout, threads);
					unsigned char *scratch = test_scratch_new(sb);
					memset(got, 0x7f, sizeof *got * (size_t)(p * cout));
					k_pointwise_nhwc_half(p, cin, cout, xh, packed, bias, got, scratch, threads, &posts[k],
					                      threads > 1 ? &ctx : NULL);
					char what[160];
					snprintf(what, sizeof what, "%s, %lld positions, %lld -> %lld, post %zu, %d thread(s)",
					         k_cpu_isa_name(levels[l]), (long long)p, (long long)cin, (long long)cout, k, threads);
					test_scratch_free(scratch, sb, what);
					for (int64_t e = 0; e < p * cout; e++)
						cr_assert_eq(got[e], want[e], "%s: element %lld is 0x%04x, the narrowed float 0x%04x", what,
						             (long long)e, got[e], want[e]);
				}
			}
			free(x), free(w), free(b), free(y), free(xh), free(want), free(got), free(packed);
		}
	}
	k_cpu_isa_force(before);
}
