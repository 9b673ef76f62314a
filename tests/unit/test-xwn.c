/* Unit tests: the XWN transform and pruning, and the XWN collection's
 * layers, against every vector of docs/xwn.md (tests/data/xwn/
 * xwn_vectors.json): weights bit for bit, convolution outputs within 1e-5. */
#include "config.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "k-xwn.h"

/* The vectors file, parsed once. */
static const cJSON *
vectors(const char *group, const char *name)
{
	static cJSON *root;
	if (root == NULL) {
		const char *top = getenv("top_srcdir");
		char path[4096];
		snprintf(path, sizeof path, "%s/tests/data/xwn/xwn_vectors.json", top ? top : ".");
		FILE *f = fopen(path, "rb");
		cr_assert_not_null(f, "cannot open %s (top_srcdir unset?)", path);
		fseek(f, 0, SEEK_END);
		long n = ftell(f);
		fseek(f, 0, SEEK_SET);
		char *text = malloc((size_t)n + 1);
		cr_assert_eq(fread(text, 1, (size_t)n, f), (size_t)n);
		text[n] = '\0';
		fclose(f);
		root = cJSON_Parse(text);
		free(text);
		cr_assert_not_null(root);
	}
	const cJSON *g = cJSON_GetObjectItemCaseSensitive(root, group);
	cr_assert_not_null(g, "no group %s", group);
	const cJSON *v = name ? cJSON_GetObjectItemCaseSensitive(g, name) : g;
	cr_assert_not_null(v, "no vector %s.%s", group, name);
	return v;
}

/* Flattens nested arrays of numbers in C order into out; returns the count. */
static int
flatten(const cJSON *v, float *out, int room)
{
	if (cJSON_IsNumber(v)) {
		cr_assert(room >= 1);
		out[0] = (float)v->valuedouble;
		return 1;
	}
	int n = 0;
	const cJSON *e;
	cJSON_ArrayForEach(e, v)
		n += flatten(e, out + n, room - n);
	return n;
}

#define ROOM 4096
static float *
array(const cJSON *v, int *count)
{
	float *a = calloc(ROOM, sizeof *a);
	int n = flatten(v, a, ROOM);
	if (count)
		*count = n;
	return a;
}

/* From a (kh, kw, I, O) array to the convolution layout [O][I][kh][kw]. */
static void
hwio_to_oihw(const float *hwio, int kh, int kw, int in, int out, float *oihw)
{
	for (int h = 0; h < kh; h++)
		for (int w = 0; w < kw; w++)
			for (int i = 0; i < in; i++)
				for (int o = 0; o < out; o++)
					oihw[((o * in + i) * kh + h) * kw + w] = hwio[((h * kw + w) * in + i) * out + o];
}

static void
assert_bits(const float *got, const float *want, int n, const char *what)
{
	for (int i = 0; i < n; i++)
		cr_assert(got[i] == want[i] && signbit(got[i]) == signbit(want[i]),
		          "%s[%d] = %.9g, expected %.9g", what, i, got[i], want[i]);
}

static const k_xwn_settings transform4 = { .transform = true, .bit = 4, .max_scale = 4.0f, .prun_weight = 0.5f };

/* ---- the transform ---- */

Test(xwn, numpy_example_transform_and_pruning_bit_for_bit)
{
	float *hwio = array(vectors("numpy_example", "kernel_hwio"), NULL);
	float w[18], y[18], want[18];
	hwio_to_oihw(hwio, 3, 3, 2, 1, w);
	float *t = array(vectors("numpy_example", "transform"), NULL);
	float *idx = array(vectors("numpy_example", "idx"), NULL);
	hwio_to_oihw(t, 3, 3, 2, 1, want);
	k_xwn_stats st;
	cr_assert_eq(k_xwn_apply(w, y, 1, 2, 9, false, &transform4, &st), 0);
	assert_bits(y, want, 18, "transform");
	/* The level histogram counts the reference's indices. */
	int64_t hist[8] = { 0 };
	for (int i = 0; i < 18; i++)
		hist[(int)idx[i]]++;
	cr_assert_eq(st.levels, 8);
	cr_assert_eq(st.slices, 2);
	cr_assert_eq(st.pruned, 0);
	for (int k = 0; k < 8; k++)
		cr_assert_eq(st.level_count[k], hist[k], "level %d: %ld, expected %ld", k, (long)st.level_count[k],
		             (long)hist[k]);

	float *tp = array(vectors("numpy_example", "transform_pruning"), NULL);
	hwio_to_oihw(tp, 3, 3, 2, 1, want);
	k_xwn_settings both = transform4;
	both.pruning = true;
	cr_assert_eq(k_xwn_apply(w, y, 1, 2, 9, false, &both, &st), 0);
	assert_bits(y, want, 18, "transform+pruning");
	cr_assert_eq(st.pruned, 1);
	/* In place gives the same. */
	cr_assert_eq(k_xwn_apply(w, w, 1, 2, 9, false, &both, NULL), 0);
	assert_bits(w, want, 18, "in place");
	free(hwio);
	free(t);
	free(idx);
	free(tp);
}

Test(xwn, edge_cases_bit_0_to_5_scales_tie_and_zero_slice)
{
	float *in = array(vectors("edge_cases", "input"), NULL);
	static const struct {
		const char *name;
		int bit;
		float max_scale;
	} cases[] = {
		{ "bit0", 0, 4 }, { "bit1", 1, 4 }, { "bit2", 2, 4 }, { "bit3", 3, 4 }, { "bit4", 4, 4 },
		{ "bit5", 5, 4 }, { "bit4_max2", 4, 2 }, { "bit4_max3", 4, 3 },
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		float *want = array(vectors("edge_cases", cases[c].name), NULL), y[4];
		k_xwn_settings s = { .transform = true, .bit = cases[c].bit, .max_scale = cases[c].max_scale };
		cr_assert_eq(k_xwn_apply(in, y, 1, 1, 4, false, &s, NULL), 0);
		assert_bits(y, want, 4, cases[c].name);
		free(want);
	}
	float tie[2] = { 1.5f, 0.5f }, y[3];
	float *want = array(vectors("edge_cases", "tie_bit4_max4"), NULL);
	cr_assert_eq(k_xwn_apply(tie, y, 1, 1, 2, false, &transform4, NULL), 0);
	assert_bits(y, want, 2, "tie");
	cr_assert_eq(y[0], 2.0f, "the tie goes to the larger level");
	free(want);
	float zero[3] = { 0, -0.0f, 0 };
	want = array(vectors("edge_cases", "zero_group"), NULL);
	cr_assert_eq(k_xwn_apply(zero, y, 1, 1, 3, false, &transform4, NULL), 0);
	for (int i = 0; i < 3; i++)
		cr_assert_eq(y[i], want[i]);
	free(want);
	free(in);
	/* Bits beyond the supported range are refused, not guessed. */
	k_xwn_settings big = transform4;
	big.bit = K_XWN_MAX_BIT + 1;
	cr_assert_eq(k_xwn_apply(tie, y, 1, 1, 2, false, &big, NULL), -1);
}

Test(xwn, pruning_table_with_the_strict_comparison)
{
	float *hwio = array(vectors("pruning", "kernel_hwio"), NULL);
	float w[12];
	hwio_to_oihw(hwio, 1, 2, 3, 2, w);
	static const char *const pw[] = { "pw0.5", "pw1.0", "pw2.0" };
	static const float weights[] = { 0.5f, 1.0f, 2.0f };
	for (int c = 0; c < 3; c++) {
		const cJSON *v = vectors("pruning", pw[c]);
		float *mask = array(cJSON_GetObjectItem(v, "mask"), NULL);   /* I x O */
		float *opt = array(cJSON_GetObjectItem(v, "opt_hwio"), NULL);
		float want[12], y[12];
		hwio_to_oihw(opt, 1, 2, 3, 2, want);
		k_xwn_settings s = transform4;
		s.pruning = true;
		s.prun_weight = weights[c];
		k_xwn_stats st;
		cr_assert_eq(k_xwn_apply(w, y, 2, 3, 2, false, &s, &st), 0);
		assert_bits(y, want, 12, pw[c]);
		int pruned = 0;
		for (int i = 0; i < 3; i++) {
			for (int o = 0; o < 2; o++) {
				bool zero = y[(o * 3 + i) * 2] == 0 && y[(o * 3 + i) * 2 + 1] == 0;
				cr_assert_eq(zero, mask[i * 2 + o] == 0, "%s: slice i%d o%d", pw[c], i, o);
				pruned += mask[i * 2 + o] == 0;
			}
		}
		cr_assert_eq(st.pruned, pruned);
		free(mask);
		free(opt);
	}
	/* The same numbers read as a transposed kernel (h, w, O=3, I=2): our
	 * deconvolution layout is [I][O][taps]. */
	const cJSON *v = vectors("pruning", "as_tconv_pw1.0");
	float *mask = array(cJSON_GetObjectItem(v, "mask_IO"), NULL);
	float *opt = array(cJSON_GetObjectItem(v, "opt_hwOI"), NULL);
	float t[12], y[12], want[12];
	for (int i = 0; i < 2; i++)
		for (int o = 0; o < 3; o++)
			for (int k = 0; k < 2; k++) {
				t[(i * 3 + o) * 2 + k] = hwio[(k * 3 + o) * 2 + i];
				want[(i * 3 + o) * 2 + k] = opt[(k * 3 + o) * 2 + i];
			}
	k_xwn_settings s = transform4;
	s.pruning = true;
	s.prun_weight = 1.0f;
	cr_assert_eq(k_xwn_apply(t, y, 2, 3, 2, true, &s, NULL), 0);
	assert_bits(y, want, 12, "transposed");
	for (int i = 0; i < 2; i++)
		for (int o = 0; o < 3; o++)
			cr_assert_eq(y[(i * 3 + o) * 2] == 0, mask[i * 3 + o] == 0, "transposed slice i%d o%d", i, o);
	free(mask);
	free(opt);
	free(hwio);
}

Test(xwn, pruning_without_transform_keeps_the_values)
{
	float w[4] = { 1, -1, 0.1f, 0.1f }, y[4];
	k_xwn_settings s = { .pruning = true, .prun_weight = 0.5f, .bit = 4, .max_scale = 4 };
	/* One output, two input slices: mags 1 and 0.1, edge 0.275. */
	cr_assert_eq(k_xwn_apply(w, y, 1, 2, 2, false, &s, NULL), 0);
	cr_assert_eq(y[0], 1);
	cr_assert_eq(y[1], -1);
	cr_assert_eq(y[2], 0);
	cr_assert_eq(y[3], 0);
}

/* ---- the layers ---- */

static st_tensor
tensor(float *data, const char *shape)
{
	return (st_tensor){ .data = data, .shape = test_shape(shape), .layout = ST_LAYOUT_NCHW };
}

/* |got - want| <= 1e-5 for every element. */
static void
assert_near(const float *got, const float *want, int n, const char *what)
{
	for (int i = 0; i < n; i++)
		cr_assert(fabsf(got[i] - want[i]) <= 1e-5f, "%s[%d] = %.8g, expected %.8g", what, i, got[i],
		          want[i]);
}

/* Runs a layer of the collection on one input; returns the output (freed
 * with the result). */
static const float *
run_layer(const char *type, const char *params, float *x, const char *shape, int n_weights,
          const st_tensor *weights, test_layer *out)
{
	st_tensor in = tensor(x, shape);
	test_layer_run(type, params, 1, &in, n_weights, weights, out);
	cr_assert_eq(out->rc, 0, "%s: %s", type, out->messages);
	return out->outputs[0].data;
}

Test(xwn, fixed_conv2d_plain_and_xwn)
{
	float *x = array(vectors("conv2d_fixed", "x_nhwc"), NULL); /* one channel: NCHW alike */
	float *k = array(vectors("conv2d_fixed", "kernel_hwio"), NULL);
	float *kx = array(vectors("conv2d_fixed", "kernel_xwn_hwio"), NULL);
	float *plain = array(vectors("conv2d_fixed", "out_plain_nhwc"), NULL);
	float *xwn = array(vectors("conv2d_fixed", "out_xwn_nhwc"), NULL);
	float w[8], wx[8], y[8], want_plain[32], want_xwn[32];
	hwio_to_oihw(k, 2, 2, 1, 2, w);
	hwio_to_oihw(kx, 2, 2, 1, 2, wx);
	cr_assert_eq(k_xwn_apply(w, y, 2, 1, 4, false, &transform4, NULL), 0);
	assert_bits(y, wx, 8, "kernel");
	for (int p = 0; p < 16; p++)
		for (int c = 0; c < 2; c++) {
			want_plain[c * 16 + p] = plain[p * 2 + c];
			want_xwn[c * 16 + p] = xwn[p * 2 + c];
		}
	st_tensor weights[] = { tensor(w, "2x1x2x2") };
	test_layer a, b;
	assert_near(run_layer("xwn_convolution", "num_output=2 kernel=2 bias=false", x, "1x1x5x5", 1, weights, &a),
	            want_plain, 32, "plain");
	assert_near(run_layer("xwn_convolution", "num_output=2 kernel=2 bias=false use_transform=true", x,
	                      "1x1x5x5", 1, weights, &b),
	            want_xwn, 32, "xwn");
	/* The bound weights are read, never written. */
	cr_assert_eq(w[0], 2.0f);
	test_layer_free(&a);
	test_layer_free(&b);
	free(x);
	free(k);
	free(kx);
	free(plain);
	free(xwn);
}

Test(xwn, fixed_conv1d_and_transposed_conv1d)
{
	float *x = array(vectors("conv1d_fixed", "x_ncl"), NULL);
	float *w = array(vectors("conv1d_fixed", "w_oik"), NULL);
	float *wx = array(vectors("conv1d_fixed", "w_xwn_oik"), NULL);
	float y[6];
	cr_assert_eq(k_xwn_apply(w, y, 1, 3, 2, false, &transform4, NULL), 0);
	assert_bits(y, wx, 6, "conv1d weights");
	st_tensor weights[] = { tensor(w, "1x3x2") };
	static const char *const names[] = { "out_plain", "out_xwn" };
	static const char *const params[] = { "num_output=1 kernel=2 bias=false",
		                              "num_output=1 kernel=2 bias=false use_transform=true" };
	for (int c = 0; c < 2; c++) {
		float *want = array(vectors("conv1d_fixed", names[c]), NULL);
		test_layer r;
		assert_near(run_layer("xwn_convolution", params[c], x, "2x3x5", 1, weights, &r), want, 8, names[c]);
		test_layer_free(&r);
		free(want);
	}
	free(w);
	free(wx);

	/* The transposed kernel (I, O, k) holds the same six numbers and the
	 * same (input, output) slices, so its XWN weights are the same. */
	w = array(vectors("tconv1d_fixed", "w_iok"), NULL);
	wx = array(vectors("tconv1d_fixed", "w_xwn_iok"), NULL);
	cr_assert_eq(k_xwn_apply(w, y, 3, 1, 2, true, &transform4, NULL), 0);
	assert_bits(y, wx, 6, "tconv1d weights");
	st_tensor tweights[] = { tensor(w, "3x1x2") };
	static const char *const tparams[] = { "num_output=1 kernel=2 bias=false",
		                               "num_output=1 kernel=2 bias=false use_transform=true" };
	for (int c = 0; c < 2; c++) {
		float *want = array(vectors("tconv1d_fixed", names[c]), NULL);
		test_layer r;
		assert_near(run_layer("xwn_deconvolution", tparams[c], x, "2x3x5", 1, tweights, &r), want, 12,
		            names[c]);
		test_layer_free(&r);
		free(want);
	}
	free(w);
	free(wx);
	free(x);
}

/* The cascade vectors: stage weights (ws, a list), pointwise wp. */
static void
cascade_case(const char *group, const char *params, const char *shape, int stages, int out_count)
{
	float *x = array(vectors(group, "x"), NULL);
	const cJSON *ws = vectors(group, "ws");
	cr_assert_eq(cJSON_GetArraySize(ws), stages);
	st_tensor weights[8];
	float *parts[8];
	for (int j = 0; j < stages; j++) {
		const cJSON *wj = cJSON_GetArrayItem(ws, j);
		parts[j] = array(wj, NULL);
		/* (mid, in, 3[, 3]) from the nesting. */
		st_shape s = { .dtype = ST_DTYPE_FLOAT32 };
		for (const cJSON *e = wj; cJSON_IsArray(e); e = cJSON_GetArrayItem(e, 0))
			s.dims[s.rank++] = cJSON_GetArraySize(e);
		weights[j] = (st_tensor){ .data = parts[j], .shape = s, .layout = ST_LAYOUT_NCHW };
	}
	const cJSON *wp = vectors(group, "wp");
	parts[stages] = array(wp, NULL);
	st_shape s = { .dtype = ST_DTYPE_FLOAT32 };
	for (const cJSON *e = wp; cJSON_IsArray(e); e = cJSON_GetArrayItem(e, 0))
		s.dims[s.rank++] = cJSON_GetArraySize(e);
	weights[stages] = (st_tensor){ .data = parts[stages], .shape = s, .layout = ST_LAYOUT_NCHW };
	static const char *const names[] = { "out_plain", "out_xwn" };
	for (int c = 0; c < 2; c++) {
		char p[256];
		snprintf(p, sizeof p, "%s%s", params, c ? " use_transform=true" : "");
		float *want = array(vectors(group, names[c]), NULL);
		test_layer r;
		const float *got = run_layer("xwn_cascade_convolution", p, x, shape, stages + 1, weights, &r);
		assert_near(got, want, out_count, names[c]);
		test_layer_free(&r);
		free(want);
	}
	for (int j = 0; j <= stages; j++)
		free(parts[j]);
	free(x);
}

Test(xwn, cascade_2d_vectors)
{
	cascade_case("cascade2d", "num_output=6 kernel_size=7", "1x4x6x6", 3, 216);
}

Test(xwn, cascade_1d_vectors)
{
	cascade_case("cascade1d", "num_output=3 kernel_size=5", "1x4x8", 2, 24);
}

Test(xwn, cascade_shapes_weights_and_errors)
{
	test_result r;
	static const char *const in[] = { "1x16x7x7" };
	cr_assert_eq(test_reshape("xwn_cascade_convolution", "num_output=32 kernel_size=7", 1, in, &r), 0,
	             "%s", r.messages);
	assert_shape(r.outputs[0], "1x32x7x7");
	cr_assert_eq(r.r.n_weights, 4);
	cr_assert_str_eq(r.r.weights[0].name, "stage0_weights");
	assert_shape(r.r.weights[0].shape, "8x16x3x3");
	assert_shape(r.r.weights[2].shape, "8x8x3x3");
	cr_assert_str_eq(r.r.weights[3].name, "pointwise_weights");
	assert_shape(r.r.weights[3].shape, "32x24x1x1");
	/* Stride and pads belong to the pointwise convolution. */
	cr_assert_eq(test_reshape("xwn_cascade_convolution",
	                          "num_output=4 kernel_size=5 stride=2 pads=1 bias=true mid_channels=3", 1, in, &r),
	             0, "%s", r.messages);
	assert_shape(r.outputs[0], "1x4x5x5");
	cr_assert_str_eq(r.r.weights[3].name, "pointwise_bias");
	assert_shape(r.r.weights[0].shape, "3x16x3x3");
	/* Too small a kernel is a type error, naming the rule. */
	cr_assert_eq(test_reshape("xwn_cascade_convolution", "kernel_size=2", 1, in, &r), -1);
	cr_assert(strstr(r.messages, "at least 3") != NULL, "%s", r.messages);
	cr_assert_eq(test_reshape("xwn_cascade_convolution", "kernel_size=17", 1, in, &r), -1);
	cr_assert(strstr(r.messages, "expand") != NULL, "%s", r.messages);
	static const char *const one[] = { "1x1x7x7" };
	cr_assert_eq(test_reshape("xwn_cascade_convolution", "kernel_size=3", 1, one, &r), -1);
	cr_assert(strstr(r.messages, "mid_channels") != NULL, "%s", r.messages);
	cr_assert_eq(test_reshape("xwn_cascade_convolution", "kernel_size=4", 1, in, &r), 0);
	cr_assert(strstr(r.messages, "even") != NULL, "%s", r.messages);
}

Test(xwn, grouped_convolution_prunes_per_output_channel)
{
	/* Depthwise: one input slice per output channel, so pruning at
	 * prun_weight <= 1 never removes one (docs/xwn.md). */
	float w[2 * 1 * 4] = { 1, 1, 1, 1, 0.01f, 0.01f, 0.01f, 0.01f }, x[2 * 4] = { 1, 1, 1, 1, 1, 1, 1, 1 };
	st_tensor weights[] = { tensor(w, "2x1x2x2") };
	test_layer r;
	const float *y = run_layer("xwn_convolution",
	                           "num_output=2 kernel=2 groups=2 bias=false use_pruning=true prun_weight=1",
	                           x, "1x2x2x2", 1, weights, &r);
	cr_assert_float_eq(y[0], 4.0f, 1e-6);
	cr_assert_float_eq(y[1], 0.04f, 1e-6);
	test_layer_free(&r);
}

/* ---- in a plan: the transform follows the weights bound ---- */

#include "st-engine.h"

static st_session *
xwn_model(const char *script)
{
	st_session *s = st_session_new(st_graph_new(test_registry()), NULL);
	st_diag d;
	st_diag_init(&d);
	cr_assert_eq(st_session_run_script(s, script, "test", &d), 0, "%s", d.count ? d.items[0].text : "");
	st_diag_free(&d);
	st_graph_check(st_session_graph(s));
	cr_assert_eq(st_session_graph(s)->errors, 0, "the model has type errors");
	return s;
}

/* Binds random weights of seed (or keeps them when seed is 0), feeds x of
 * shape and runs; the output into y (room for 4096 values). Returns its
 * number of values. */
static int64_t
bind_run(st_plan *p, uint64_t seed, const float *x, const char *shape, float *y)
{
	st_diag d;
	st_diag_init(&d);
	if (seed != 0)
		cr_assert_eq(st_plan_bind_random_weights(p, seed, &d), 0, "%s", d.count ? d.items[0].text : "");
	st_tensor t = { .data = (void *)x, .shape = test_shape(shape), .layout = ST_LAYOUT_NCHW };
	cr_assert_eq(st_plan_set_input(p, 0, &t, &d), 0, "%s", d.count ? d.items[0].text : "");
	cr_assert_eq(st_plan_run(p, &d), 0, "%s", d.count ? d.items[0].text : "");
	int64_t n = st_shape_elements(st_plan_output_shape(p, 0));
	cr_assert(n > 0 && n <= 4096);
	st_plan_get_output(p, 0, y);
	st_diag_free(&d);
	return n;
}

static st_plan *
xwn_plan(st_session *s, int format)
{
	st_plan_options opt = { .format = format, .threads = 1 };
	st_diag d;
	st_diag_init(&d);
	st_plan *p = st_plan_compile(st_session_graph(s), &opt, &d);
	cr_assert_not_null(p, "%s", d.count ? d.items[0].text : "");
	st_diag_free(&d);
	return p;
}

Test(xwn, rebinding_redoes_the_transform_and_a_replan_keeps_it)
{
	static const char *const scripts[] = {
		"add input data; set data dims 2x5x5; add xwn_convolution c; set c num_output 3; "
		"set c use_transform true; set c use_pruning true; connect data c; add output out; connect c out",
		"add input data; set data dims 2x5x5; add xwn_cascade_convolution c; set c num_output 3; "
		"set c kernel_size 5; set c mid_channels 2; set c use_transform true; connect data c; "
		"add output out; connect c out",
		"add input data; set data dims 2x5x5; add xwn_deconvolution c; set c num_output 3; "
		"set c stride 2; set c use_transform true; set c use_pruning true; connect data c; "
		"add output out; connect c out",
	};
	float x[2 * 6 * 6];
	for (int i = 0; i < 72; i++)
		x[i] = (float)((i * 7) % 11) / 11.0f - 0.4f;
	for (size_t c = 0; c < sizeof scripts / sizeof scripts[0]; c++) {
		st_session *s = xwn_model(scripts[c]);
		st_plan *p = xwn_plan(s, -1), *q = xwn_plan(s, -1), *h = xwn_plan(s, ST_FORMAT_FP16_NCHW);
		static float a1[4096], a2[4096], b2[4096], h2[4096];
		/* Seeds 1 then 2 on one plan: random weights of the same size often
		 * land at the address just freed, which must not fool it. */
		int64_t n = bind_run(p, 1, x, "1x2x5x5", a1);
		cr_assert_eq(bind_run(p, 2, x, "1x2x5x5", a2), n);
		cr_assert_eq(bind_run(q, 2, x, "1x2x5x5", b2), n);
		cr_assert(memcmp(a1, a2, sizeof *a1 * (size_t)n) != 0, "case %zu: the weights made no difference", c);
		cr_assert(memcmp(a2, b2, sizeof *a2 * (size_t)n) == 0, "case %zu: a stale transform after rebinding", c);
		/* New input sizes re-plan with the weights kept. */
		int64_t m = bind_run(p, 0, x, "1x2x6x6", a2);
		cr_assert(m > n);
		cr_assert_eq(bind_run(q, 0, x, "1x2x6x6", b2), m);
		cr_assert(memcmp(a2, b2, sizeof *a2 * (size_t)m) == 0, "case %zu: wrong after a re-plan", c);
		/* FP16: the engine converts around the float32 implementation. */
		cr_assert_eq(bind_run(h, 2, x, "1x2x6x6", h2), m);
		char why[256];
		cr_assert(test_allclose(h2, b2, m, 1e-2, why, sizeof why), "case %zu fp16: %s", c, why);
		st_plan_free(h);
		st_plan_free(p);
		st_plan_free(q);
		st_session_free(s);
	}
}

/* ---- the fast transform against the reference, on random tensors ---- */

static uint64_t
next_random(uint64_t *state)
{
	*state = *state * 6364136223846793005ull + 1442695040888963407ull;
	return *state >> 33;
}

static bool
same_bits(const float *a, const float *b, int64_t n)
{
	for (int64_t i = 0; i < n; i++) {
		uint32_t x, y;
		memcpy(&x, &a[i], sizeof x);
		memcpy(&y, &b[i], sizeof y);
		if (x != y && !(isnan(a[i]) && isnan(b[i])))
			return false;
	}
	return true;
}

Test(xwn, fast_transform_equals_the_reference_bit_for_bit)
{
	/* Every kind of slice the fast path treats apart: taps 1 and many,
	 * levels exact or not (odd scales, tiny and huge magnitudes), ties and
	 * midpoints, zeros and -0, subnormals, inf and NaN, pruning, in place. */
	static const float scales[] = { 4, 4, 2, 3, 1, 0.5f, 7.3f, 1e-3f, 0, 1e6f, 1e-30f, 1e-38f };
	static const float bases[] = { 1, 1, 1e-3f, 1e3f, 1e-37f, 1e-40f, 1e30f };
	static const int tap_counts[] = { 1, 2, 3, 9, 25, 49 };
	static const float prun[] = { 0.5f, 0.3f, 1.0f, 2.0f, 0.0f };
	enum { RANDOM_ROOM = 24 * 24 * 49 };
	static float w[RANDOM_ROOM], fast[RANDOM_ROOM], ref[RANDOM_ROOM];
	uint64_t state = 11;
	for (int c = 0; c < 3000; c++) {
		int64_t a = 1 + (int64_t)(next_random(&state) % 24), b = 1 + (int64_t)(next_random(&state) % 24);
		int64_t taps = tap_counts[next_random(&state) % 6];
		bool transposed = next_random(&state) % 2;
		k_xwn_settings s = {
			.transform = next_random(&state) % 8 != 0,
			.bit = (int)(next_random(&state) % (K_XWN_MAX_BIT + 1)),
			.max_scale = scales[next_random(&state) % 12],
			.pruning = next_random(&state) % 2,
			.prun_weight = prun[next_random(&state) % 5],
		};
		int mode = (int)(next_random(&state) % 6);
		float base = bases[next_random(&state) % 7];
		int64_t n = a * b * taps;
		for (int64_t i = 0; i < n; i++) {
			uint64_t r = next_random(&state);
			float v = ((float)(r % 20001) / 10000.0f - 1.0f) * base;
			if (mode == 1 && r % 4 == 0)
				v = r % 8 == 0 ? -0.0f : 0.0f;
			else if (mode == 2)
				v = (float)((int)(r % 9) - 4) * 0.25f;
			else if (mode == 3 && r % 40 == 0)
				v = r % 80 == 0 ? INFINITY : NAN;
			else if (mode == 4)
				v = ldexpf(r % 2 ? 1.5f : -0.75f, (int)(r % 20) - 10);
			w[i] = v;
		}
		k_xwn_stats sf, sr;
		cr_assert_eq(k_xwn_apply_ref(w, ref, a, b, taps, transposed, &s, &sr), 0);
		if (c % 2) {
			memcpy(fast, w, sizeof *w * (size_t)n);
			cr_assert_eq(k_xwn_apply(fast, fast, a, b, taps, transposed, &s, &sf), 0);
		} else {
			cr_assert_eq(k_xwn_apply(w, fast, a, b, taps, transposed, &s, &sf), 0);
		}
		cr_assert(same_bits(fast, ref, n), "case %d: %ld x %ld x %ld, bit %d, max_scale %g, pruning %d (%g), mode %d",
		          c, (long)a, (long)b, (long)taps, s.bit, (double)s.max_scale, s.pruning, (double)s.prun_weight,
		          mode);
		cr_assert(sf.slices == sr.slices && sf.pruned == sr.pruned && sf.weights == sr.weights &&
		                  sf.levels == sr.levels &&
		                  memcmp(sf.level_count, sr.level_count, sizeof sf.level_count) == 0,
		          "case %d: the figures differ", c);
	}
}
