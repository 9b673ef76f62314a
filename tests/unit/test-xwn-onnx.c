/* Unit tests: XWN layers through ONNX. The export bakes the transformed
 * weights (bit for bit k_xwn_apply's) and writes the cascade as its parts
 * with a metadata entry per layer; the import restores the layers, with the
 * transform off unless the full-precision weights came along; a damaged or
 * disagreeing entry gives a warning naming its key and the plain import. */
#include "config.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "k-xwn.h"
#include "st-export.h"
#include "st-io.h"
#include "st-onnx.h"

/* Two branches: 2-D (a grouped XWN convolution with an activation, a
 * transposed one, a strided cascade with a bias) and 1-D (an XWN
 * convolution whose settings change nothing, a pruning-only cascade of
 * three stages with uneven pads). */
static const char model_text[] =
	"{\"format\": \"strata-model\", \"version\": 1, \"network\": {\"name\": \"xwn\"}, \"layers\": ["
	"{\"name\": \"in\", \"type\": \"input\", \"params\": {\"dims\": [4, 9, 9]}},"
	"{\"name\": \"c1\", \"type\": \"xwn_convolution\", \"params\": {\"num_output\": 6, \"kernel\": [3, 3], "
	" \"padding\": \"same\", \"bias\": true, \"groups\": 2, \"use_transform\": true, \"bit\": 4, "
	" \"use_pruning\": true, \"prun_weight\": 1.2}, \"activation\": {\"type\": \"relu\"}, \"inputs\": [\"in.0\"]},"
	"{\"name\": \"d1\", \"type\": \"xwn_deconvolution\", \"params\": {\"num_output\": 5, \"kernel\": [2, 2], "
	" \"stride\": [2, 2], \"use_transform\": true, \"bit\": 3, \"max_scale\": 2, \"use_pruning\": true}, "
	" \"inputs\": [\"c1.0\"]},"
	"{\"name\": \"k1\", \"type\": \"xwn_cascade_convolution\", \"params\": {\"num_output\": 7, \"kernel_size\": 5, "
	" \"stride\": [2], \"pads\": [1], \"bias\": true, \"use_transform\": true, \"bit\": 4, \"use_pruning\": true}, "
	" \"activation\": {\"type\": \"leaky_relu\"}, \"inputs\": [\"d1.0\"]},"
	"{\"name\": \"out\", \"type\": \"output\", \"inputs\": [\"k1.0\"]},"
	"{\"name\": \"in1\", \"type\": \"input\", \"params\": {\"dims\": [3, 10]}},"
	"{\"name\": \"c3\", \"type\": \"xwn_convolution\", \"params\": {\"num_output\": 3, \"kernel\": [3], "
	" \"padding\": \"same\"}, \"inputs\": [\"in1.0\"]},"
	"{\"name\": \"k2\", \"type\": \"xwn_cascade_convolution\", \"params\": {\"num_output\": 4, \"kernel_size\": 7, "
	" \"mid_channels\": 2, \"pads\": [0, 1], \"use_pruning\": true, \"prun_weight\": 0.9}, \"inputs\": [\"c3.0\"]},"
	"{\"name\": \"out1\", \"type\": \"output\", \"inputs\": [\"k2.0\"]}]}";

/* The weights every XWN layer transforms: layer, weight, transposed. */
static const struct {
	const char *layer, *weight;
	bool transposed;
} transformed[] = {
	{ "c1", "weights", false },           { "d1", "weights", true },
	{ "k1", "stage0_weights", false },    { "k1", "stage1_weights", false },
	{ "k1", "pointwise_weights", false }, { "c3", "weights", false },
	{ "k2", "stage0_weights", false },    { "k2", "stage1_weights", false },
	{ "k2", "stage2_weights", false },    { "k2", "pointwise_weights", false },
};
#define N_TRANSFORMED (sizeof transformed / sizeof transformed[0])

static st_graph *
load_model(const st_registry *r)
{
	st_diag d;
	st_diag_init(&d);
	st_graph *g = st_model_parse(model_text, strlen(model_text), "xwn.strata.json", r, &d);
	cr_assert_not_null(g);
	st_diag_free(&d);
	st_graph_check(g);
	cr_assert_eq(g->errors, 0, "the test model has type errors");
	return g;
}

/* Writes seeded random weights for every weight the check declared. */
static void
write_weights(const st_graph *g, const char *dir)
{
	for (int i = 0; i < g->n_layers; i++) {
		const st_layer *l = g->layers[i];
		for (int w = 0; w < l->n_weights; w++) {
			st_shape s = l->weights[w].shape;
			s.dtype = ST_DTYPE_FLOAT32;
			int64_t n = st_shape_elements(&s);
			float *v = malloc(sizeof *v * (size_t)n);
			st_weights_random(v, n, n / s.dims[0], st_weights_random_seed(l->name, l->weights[w].name, 11));
			char *path = st_xasprintf("%s/%s_%s.npy", dir, l->name, l->weights[w].name);
			char err[256];
			cr_assert_eq(st_npy_write(path, &s, v, err, sizeof err), 0, "%s", err);
			free(path);
			free(v);
		}
	}
}

/* The float32 values of dir/layer_weight.npy (caller frees) and their count. */
static float *
read_weight(const char *dir, const char *layer, const char *weight, int64_t *count)
{
	char *path = st_xasprintf("%s/%s_%s.npy", dir, layer, weight);
	st_npy a;
	char err[256];
	cr_assert_eq(st_npy_read(path, &a, err, sizeof err), 0, "%s", err);
	cr_assert_eq(a.type, ST_NPY_F4, "%s is not float32", path);
	float *v = malloc(a.bytes ? a.bytes : 1);
	memcpy(v, a.data, a.bytes);
	*count = a.count;
	st_npy_free(&a);
	free(path);
	return v;
}

/* An exported model, decoded (it points into bytes). */
typedef struct exported {
	st_buf bytes;
	st_onnx_model m;
} exported;

static void
export_model(st_graph *g, const char *weights, const st_export_onnx_options *opt, exported *e)
{
	st_buf_init(&e->bytes);
	st_diag d;
	st_diag_init(&d);
	int rc = st_export_onnx(g, weights, opt, &e->bytes, &d);
	cr_assert_eq(rc, ST_EXPORT_OK, "export failed: %s", d.count ? d.items[0].text : "(no message)");
	st_diag_free(&d);
	char err[256];
	cr_assert_eq(st_onnx_parse(e->bytes.data, e->bytes.len, &e->m, err, sizeof err), 0, "%s", err);
}

static void
exported_free(exported *e)
{
	st_onnx_free(&e->m);
	st_buf_free(&e->bytes);
}

static const st_onnx_tensor *
initializer(const st_onnx_model *m, const char *name)
{
	for (size_t k = 0; k < m->graph->n_initializers; k++) {
		if (st_onnx_str_eq(m->graph->initializers[k].name, name))
			return &m->graph->initializers[k];
	}
	return NULL;
}

static const st_onnx_node *
node_named(const st_onnx_model *m, const char *name)
{
	for (size_t k = 0; k < m->graph->n_nodes; k++) {
		if (st_onnx_str_eq(m->graph->nodes[k].name, name))
			return &m->graph->nodes[k];
	}
	return NULL;
}

static st_onnx_entry *
metadata(const st_onnx_model *m, const char *key)
{
	for (size_t k = 0; k < m->n_metadata_props; k++) {
		if (st_onnx_str_eq(m->metadata_props[k].key, key))
			return &m->metadata_props[k];
	}
	return NULL;
}

/* The entry or initializer, or the test stops. */
static st_onnx_entry *
must_metadata(const st_onnx_model *m, const char *key)
{
	st_onnx_entry *e = metadata(m, key);
	if (e == NULL) {
		cr_log_error("no metadata entry %s", key);
		abort();
	}
	return e;
}

static const st_onnx_tensor *
must_initializer(const st_onnx_model *m, const char *name)
{
	const st_onnx_tensor *t = initializer(m, name);
	if (t == NULL) {
		cr_log_error("no initializer %s", name);
		abort();
	}
	return t;
}

static const st_value *
param_of(const st_layer *l, const char *name)
{
	cr_assert_not_null(l->type, "layer '%s' has no type", l->name);
	int i = st_params_find(l->type->desc->params, l->type->desc->n_params, name);
	cr_assert_geq(i, 0, "layer '%s' has no parameter %s", l->name, name);
	return &l->params.values[i];
}

static k_xwn_settings
settings_of(const st_layer *l)
{
	return (k_xwn_settings){ .transform = param_of(l, "use_transform")->b, .bit = (int)param_of(l, "bit")->i,
		                 .max_scale = (float)param_of(l, "max_scale")->f,
		                 .pruning = param_of(l, "use_pruning")->b,
		                 .prun_weight = (float)param_of(l, "prun_weight")->f };
}

/* What k_xwn_apply makes of dir's weight (caller frees). */
static float *
expected_weight(const st_graph *g, const char *dir, int which, int64_t *count)
{
	const st_layer *l = st_graph_find(g, transformed[which].layer);
	float *w = read_weight(dir, l->name, transformed[which].weight, count);
	const st_weight_desc *wd = NULL;
	for (int k = 0; k < l->n_weights; k++) {
		if (strcmp(l->weights[k].name, transformed[which].weight) == 0)
			wd = &l->weights[k];
	}
	cr_assert_not_null(wd);
	int64_t taps = *count / (wd->shape.dims[0] * wd->shape.dims[1]);
	k_xwn_settings s = settings_of(l);
	cr_assert_eq(k_xwn_apply(w, w, wd->shape.dims[0], wd->shape.dims[1], taps, transformed[which].transposed, &s,
	                         NULL),
	             0);
	return w;
}

static void
assert_bytes(const st_onnx_tensor *t, const float *want, int64_t count, const char *what)
{
	cr_assert_not_null(t, "no initializer for %s", what);
	cr_assert_eq(t->data_type, ST_ONNX_FLOAT, "%s is not FLOAT", what);
	cr_assert_eq(t->raw_data.len, (size_t)count * 4, "%s has %zu bytes for %lld values", what, t->raw_data.len,
	             (long long)count);
	cr_assert_eq(memcmp(t->raw_data.data, want, (size_t)count * 4), 0, "%s differs from k_xwn_apply's output", what);
}

/* The import of m over r, weights into dir; d collects the messages. */
static int
import_model(const st_onnx_model *m, const st_registry *r, const char *dir, st_onnx_import *imp, st_diag *d)
{
	st_onnx_import_options opt = { .weights_dir = dir };
	st_diag_init(d);
	return st_onnx_import_model(m, r, &opt, imp, d);
}

static bool
said(const st_diag *d, st_severity sev, const char *text)
{
	for (int k = 0; k < d->count; k++) {
		if (d->items[k].severity == sev && strstr(d->items[k].text, text) != NULL)
			return true;
	}
	return false;
}

/* One message of severity sev holds both texts. */
static bool
said_both(const st_diag *d, st_severity sev, const char *a, const char *b)
{
	for (int k = 0; k < d->count; k++) {
		if (d->items[k].severity == sev && strstr(d->items[k].text, a) != NULL && strstr(d->items[k].text, b) != NULL)
			return true;
	}
	return false;
}

static void
print_diag(const st_diag *d)
{
	for (int k = 0; k < d->count; k++)
		cr_log_info("%s: %s", st_severity_name(d->items[k].severity), d->items[k].text);
}

static const char *
type_of(const st_graph *g, const char *layer)
{
	const st_layer *l = st_graph_find(g, layer);
	return l == NULL ? "(none)" : l->type_name;
}

/* ---- export ---- */

Test(xwn_onnx, export_bakes_the_transformed_weights_bit_for_bit)
{
	st_graph *g = load_model(test_registry());
	char *dir = test_temp_dir("xwn-onnx");
	write_weights(g, dir);
	st_export_onnx_options opt = { .file = "xwn.strata.json" };
	exported e;
	export_model(g, dir, &opt, &e);
	for (size_t k = 0; k < N_TRANSFORMED; k++) {
		int64_t n;
		float *want = expected_weight(g, dir, (int)k, &n);
		char *name = st_xasprintf("%s_%s", transformed[k].layer, transformed[k].weight);
		assert_bytes(initializer(&e.m, name), want, n, name);
		/* Without --xwn-source-weights the full-precision ones stay home. */
		char *source = st_xasprintf("%s.xwn_source", name);
		cr_assert_null(initializer(&e.m, source), "%s was written", source);
		free(source);
		free(name);
		free(want);
	}
	/* Biases are not transformed. */
	int64_t n;
	float *bias = read_weight(dir, "k1", "pointwise_bias", &n);
	assert_bytes(initializer(&e.m, "k1_pointwise_bias"), bias, n, "k1_pointwise_bias");
	free(bias);
	/* The pruning did zero whole slices somewhere. */
	const st_onnx_tensor *t = must_initializer(&e.m, "c1_weights");
	/* raw_data lies in the protobuf buffer, not aligned for floats. */
	float v[6 * 2 * 9];
	cr_assert_eq(t->raw_data.len, sizeof v);
	memcpy(v, t->raw_data.data, sizeof v);
	int zero_slices = 0;
	for (int s = 0; s < 6 * 2; s++) {
		bool zero = true;
		for (int k = 0; k < 9; k++)
			zero &= v[s * 9 + k] == 0.0f;
		zero_slices += zero;
	}
	cr_assert_gt(zero_slices, 0, "prun_weight 1.2 pruned nothing");
	exported_free(&e);
	test_remove_dir(dir);
	st_graph_free(g);
}

Test(xwn_onnx, export_writes_the_cascade_as_its_parts)
{
	st_graph *g = load_model(test_registry());
	st_export_onnx_options opt = { .random_weights = true, .seed = 5 };
	exported e;
	export_model(g, NULL, &opt, &e);
	const st_onnx_node *s0 = node_named(&e.m, "k1_stage0"), *s1 = node_named(&e.m, "k1_stage1");
	const st_onnx_node *cat = node_named(&e.m, "k1_concat"), *pw = node_named(&e.m, "k1_pointwise");
	cr_assert(s0 && s1 && cat && pw, "a part of k1 is missing");
	cr_assert(st_onnx_str_eq(s0->op_type, "Conv") && st_onnx_str_eq(cat->op_type, "Concat") &&
	          st_onnx_str_eq(pw->op_type, "Conv"));
	cr_assert(st_onnx_str_eq(s0->inputs[0], "d1") && s0->n_inputs == 2);
	cr_assert(st_onnx_str_eq(s1->inputs[0], "k1_stage0"));
	cr_assert(cat->n_inputs == 2 && st_onnx_str_eq(cat->inputs[0], "k1_stage0") &&
	          st_onnx_str_eq(cat->inputs[1], "k1_stage1"));
	cr_assert(pw->n_inputs == 3 && st_onnx_str_eq(pw->inputs[0], "k1_concat") &&
	          st_onnx_str_eq(pw->inputs[2], "k1_pointwise_bias"));
	/* The activation follows the pointwise part. */
	cr_assert(st_onnx_str_eq(pw->outputs[0], "k1/pre_activation"));
	const st_onnx_node *act = node_named(&e.m, "k1/LeakyRelu");
	cr_assert(act != NULL && st_onnx_str_eq(act->outputs[0], "k1"));
	for (size_t k = 0; k < pw->n_attributes; k++) {
		const st_onnx_attribute *a = &pw->attributes[k];
		if (st_onnx_str_eq(a->name, "strides"))
			cr_assert(a->n_ints == 2 && a->ints[0] == 2 && a->ints[1] == 2);
		if (st_onnx_str_eq(a->name, "pads"))
			cr_assert(a->n_ints == 4 && a->ints[0] == 1 && a->ints[3] == 1);
		if (st_onnx_str_eq(a->name, "kernel_shape"))
			cr_assert(a->n_ints == 2 && a->ints[0] == 1);
	}
	for (size_t k = 0; k < s1->n_attributes; k++) {
		const st_onnx_attribute *a = &s1->attributes[k];
		if (st_onnx_str_eq(a->name, "pads"))
			cr_assert(a->n_ints == 4 && a->ints[0] == 1 && a->ints[2] == 1);
		if (st_onnx_str_eq(a->name, "kernel_shape"))
			cr_assert(a->n_ints == 2 && a->ints[0] == 3 && a->ints[1] == 3);
	}
	/* The 1-D one: three stages, pads 0 before and 1 after. */
	const st_onnx_node *pw2 = node_named(&e.m, "k2_pointwise");
	cr_assert_not_null(node_named(&e.m, "k2_stage2"));
	for (size_t k = 0; k < pw2->n_attributes; k++) {
		const st_onnx_attribute *a = &pw2->attributes[k];
		if (st_onnx_str_eq(a->name, "pads"))
			cr_assert(a->n_ints == 2 && a->ints[0] == 0 && a->ints[1] == 1);
	}
	/* Random weights are the engine's, transformed. */
	float w[2 * 5 * 9];
	st_weights_random(w, 90, 45, st_weights_random_seed("k1", "stage0_weights", 5));
	k_xwn_settings s = { .transform = true, .bit = 4, .max_scale = 4, .pruning = true, .prun_weight = 0.5f };
	cr_assert_eq(k_xwn_apply(w, w, 2, 5, 9, false, &s, NULL), 0);
	assert_bytes(initializer(&e.m, "k1_stage0_weights"), w, 90, "k1_stage0_weights");
	exported_free(&e);
	st_graph_free(g);
}

Test(xwn_onnx, export_metadata_names_the_type_settings_and_nodes)
{
	st_graph *g = load_model(test_registry());
	st_export_onnx_options opt = { .random_weights = true, .xwn_source_weights = true };
	exported e;
	export_model(g, NULL, &opt, &e);
	cr_assert_eq(e.m.n_metadata_props, 5, "%zu entries", e.m.n_metadata_props);
	st_onnx_entry *c1 = must_metadata(&e.m, "strata.xwn.c1");
	cr_assert_not_null(c1);
	cJSON *v = cJSON_ParseWithLength(c1->value.data, c1->value.len);
	cr_assert_not_null(v);
	cr_assert_eq(cJSON_GetObjectItem(v, "version")->valuedouble, 1);
	cr_assert_str_eq(cJSON_GetObjectItem(v, "type")->valuestring, "xwn_convolution");
	cr_assert_str_eq(cJSON_GetObjectItem(v, "node")->valuestring, "c1");
	const cJSON *x = cJSON_GetObjectItem(v, "xwn");
	cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(x, "use_transform")) && cJSON_IsTrue(cJSON_GetObjectItem(x, "use_pruning")));
	cr_assert_eq(cJSON_GetObjectItem(x, "bit")->valuedouble, 4);
	cr_assert_eq(cJSON_GetObjectItem(x, "max_scale")->valuedouble, 4);
	cr_assert_eq(cJSON_GetObjectItem(x, "prun_weight")->valuedouble, 1.2);
	const char *source = cJSON_GetObjectItem(cJSON_GetObjectItem(v, "source"), "weights")->valuestring;
	cr_assert_str_eq(source, "c1_weights.xwn_source");
	const st_onnx_tensor *t = initializer(&e.m, source);
	cr_assert(t != NULL && t->data_type == ST_ONNX_FLOAT && t->n_dims == 4);
	cJSON_Delete(v);

	st_onnx_entry *k1 = must_metadata(&e.m, "strata.xwn.k1");
	v = cJSON_ParseWithLength(k1->value.data, k1->value.len);
	cr_assert_str_eq(cJSON_GetObjectItem(v, "type")->valuestring, "xwn_cascade_convolution");
	const cJSON *stages = cJSON_GetObjectItem(v, "stages");
	cr_assert_eq(cJSON_GetArraySize(stages), 2);
	cr_assert_str_eq(cJSON_GetArrayItem(stages, 1)->valuestring, "k1_stage1");
	cr_assert_str_eq(cJSON_GetObjectItem(v, "concat")->valuestring, "k1_concat");
	cr_assert_str_eq(cJSON_GetObjectItem(v, "pointwise")->valuestring, "k1_pointwise");
	const cJSON *p = cJSON_GetObjectItem(v, "params");
	cr_assert_eq(cJSON_GetObjectItem(p, "kernel_size")->valuedouble, 5);
	cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(p, "bias")));
	cr_assert_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(p, "stride"), 0)->valuedouble, 2);
	const cJSON *src = cJSON_GetObjectItem(v, "source");
	cr_assert_eq(cJSON_GetArraySize(src), 3, "stage0, stage1 and pointwise weights");
	cr_assert_str_eq(cJSON_GetObjectItem(src, "pointwise_weights")->valuestring, "k1_pointwise_weights.xwn_source");
	cJSON_Delete(v);

	/* Settings that change nothing need no full-precision copy. */
	st_onnx_entry *c3 = must_metadata(&e.m, "strata.xwn.c3");
	v = cJSON_ParseWithLength(c3->value.data, c3->value.len);
	cr_assert_null(cJSON_GetObjectItem(v, "source"));
	cr_assert_null(initializer(&e.m, "c3_weights.xwn_source"));
	cJSON_Delete(v);
	exported_free(&e);
	st_graph_free(g);
}

/* ---- import ---- */

Test(xwn_onnx, import_restores_the_layers_with_the_transform_off)
{
	st_graph *g = load_model(test_registry());
	char *dir = test_temp_dir("xwn-onnx"), *back = test_temp_dir("xwn-onnx-back");
	write_weights(g, dir);
	st_export_onnx_options opt = { 0 };
	exported e;
	export_model(g, dir, &opt, &e);
	st_onnx_import imp;
	st_diag d;
	int rc = import_model(&e.m, test_registry(), back, &imp, &d);
	print_diag(&d);
	cr_assert_eq(rc, 0);
	cr_assert_eq(d.warnings, 0);
	cr_assert_eq(imp.n_xwn, 5);
	cr_assert_eq(imp.n_xwn_transformed, 4, "c3 changes nothing, so it keeps its settings");
	st_graph *r = imp.graph;
	cr_assert_eq(r->errors, 0);
	cr_assert_str_eq(type_of(r, "c1"), "xwn_convolution");
	cr_assert_str_eq(type_of(r, "d1"), "xwn_deconvolution");
	cr_assert_str_eq(type_of(r, "k1"), "xwn_cascade_convolution");
	cr_assert_str_eq(type_of(r, "k2"), "xwn_cascade_convolution");
	cr_assert_null(st_graph_find(r, "k1_stage0"), "the cascade's parts became layers");
	cr_assert_str_eq(st_graph_find(r, "c1")->act.type_name, "relu");
	cr_assert_str_eq(st_graph_find(r, "k1")->act.type_name, "leaky_relu");
	static const char *const names[] = { "c1", "d1", "k1", "c3", "k2" };
	for (int k = 0; k < 5; k++) {
		const st_layer *was = st_graph_find(g, names[k]), *now = st_graph_find(r, names[k]);
		k_xwn_settings a = settings_of(was), b = settings_of(now);
		bool active = k_xwn_active(&a);
		cr_assert_eq(b.transform, active ? false : a.transform, "%s use_transform", names[k]);
		cr_assert_eq(b.pruning, active ? false : a.pruning, "%s use_pruning", names[k]);
		cr_assert(b.bit == a.bit && b.max_scale == a.max_scale && b.prun_weight == a.prun_weight, "%s kept settings",
		          names[k]);
	}
	/* The cascade's own parameters come back as they were. */
	static const char *const cascade[] = { "num_output", "kernel_size", "stride", "pads", "mid_channels",
		                               "channel_ratio", "bias" };
	for (int k = 0; k < 7; k++) {
		cr_assert(st_value_equal(param_of(st_graph_find(g, "k1"), cascade[k]),
		                         param_of(st_graph_find(r, "k1"), cascade[k])),
		          "k1 %s", cascade[k]);
		cr_assert(st_value_equal(param_of(st_graph_find(g, "k2"), cascade[k]),
		                         param_of(st_graph_find(r, "k2"), cascade[k])),
		          "k2 %s", cascade[k]);
	}
	cr_assert(said(&d, ST_SEVERITY_INFO, "layer 'c1' is xwn_convolution again (metadata_props \"strata.xwn.c1\"), "
	                                      "with use_transform and use_pruning off"));
	cr_assert(said(&d, ST_SEVERITY_INFO, "--xwn-source-weights"));
	/* The weights written are the transformed ones the file holds. */
	for (size_t k = 0; k < N_TRANSFORMED; k++) {
		int64_t n, m;
		float *want = expected_weight(g, dir, (int)k, &n);
		float *got = read_weight(back, transformed[k].layer, transformed[k].weight, &m);
		cr_assert(n == m && memcmp(want, got, (size_t)n * 4) == 0, "%s_%s", transformed[k].layer,
		          transformed[k].weight);
		free(want);
		free(got);
	}
	st_onnx_import_free(&imp);
	st_diag_free(&d);
	exported_free(&e);
	test_remove_dir(dir);
	test_remove_dir(back);
	st_graph_free(g);
}

Test(xwn_onnx, source_weights_make_a_lossless_round_trip)
{
	st_graph *g = load_model(test_registry());
	char *dir = test_temp_dir("xwn-onnx"), *back = test_temp_dir("xwn-onnx-back");
	write_weights(g, dir);
	st_export_onnx_options opt = { .xwn_source_weights = true };
	exported e;
	export_model(g, dir, &opt, &e);
	st_onnx_import imp;
	st_diag d;
	int rc = import_model(&e.m, test_registry(), back, &imp, &d);
	print_diag(&d);
	cr_assert_eq(rc, 0);
	cr_assert_eq(d.warnings, 0);
	cr_assert_eq(imp.n_xwn, 5);
	cr_assert_eq(imp.n_xwn_transformed, 0);
	cr_assert(said(&d, ST_SEVERITY_INFO, "layer 'k1' is xwn_cascade_convolution again (metadata_props "
	                                      "\"strata.xwn.k1\"), with its full-precision weights"));
	st_graph *r = imp.graph;
	static const char *const names[] = { "c1", "d1", "k1", "c3", "k2" };
	static const char *const xwn[] = { "use_transform", "bit", "max_scale", "use_pruning", "prun_weight" };
	for (int k = 0; k < 5; k++) {
		cr_assert_str_eq(type_of(r, names[k]), type_of(g, names[k]));
		for (int j = 0; j < 5; j++)
			cr_assert(st_value_equal(param_of(st_graph_find(g, names[k]), xwn[j]),
			                         param_of(st_graph_find(r, names[k]), xwn[j])),
			          "%s %s", names[k], xwn[j]);
	}
	/* Every weights file comes back as it was. */
	for (int i = 0; i < g->n_layers; i++) {
		const st_layer *l = g->layers[i];
		for (int w = 0; w < l->n_weights; w++) {
			int64_t n, m;
			float *a = read_weight(dir, l->name, l->weights[w].name, &n);
			float *b = read_weight(back, l->name, l->weights[w].name, &m);
			cr_assert(n == m && memcmp(a, b, (size_t)n * 4) == 0, "%s_%s changed", l->name, l->weights[w].name);
			free(a);
			free(b);
		}
	}
	/* And exporting the import again writes the same initializers. */
	st_graph_check(r);
	exported again;
	export_model(r, back, &opt, &again);
	cr_assert_eq(again.m.graph->n_initializers, e.m.graph->n_initializers);
	for (size_t k = 0; k < e.m.graph->n_initializers; k++) {
		const st_onnx_tensor *a = &e.m.graph->initializers[k];
		char *name = st_onnx_str_dup(a->name);
		const st_onnx_tensor *b = initializer(&again.m, name);
		cr_assert(b != NULL && b->raw_data.len == a->raw_data.len &&
		          memcmp(a->raw_data.data, b->raw_data.data, a->raw_data.len) == 0,
		          "initializer %s differs after the round trip", name);
		free(name);
	}
	exported_free(&again);
	st_onnx_import_free(&imp);
	st_diag_free(&d);
	exported_free(&e);
	test_remove_dir(dir);
	test_remove_dir(back);
	st_graph_free(g);
}

/* ---- entries that cannot be trusted ---- */

/* Replaces the first `from` in the entry's value by `to`; the text lives in
 * *keep (the caller frees it after the import). */
static void
edit_entry(st_onnx_entry *m, const char *from, const char *to, char **keep)
{
	char *value = st_onnx_str_dup(m->value);
	char *at = strstr(value, from);
	cr_assert_not_null(at, "'%s' is not in %s", from, value);
	*at = '\0';
	*keep = st_xasprintf("%s%s%s", value, to, at + strlen(from));
	free(value);
	m->value = (st_onnx_str){ *keep, strlen(*keep) };
}

Test(xwn_onnx, bad_entries_give_a_warning_and_the_plain_operators)
{
	static const struct {
		const char *key, *from, *to, *says;
	} cases[] = {
		{ "strata.xwn.c1", "{\"version\"", "{version", "the value is not a JSON object" },
		{ "strata.xwn.c1", "\"version\":1", "\"version\":2", "\"version\" is not 1" },
		{ "strata.xwn.c1", "\"node\":\"c1\"", "\"node\":\"nowhere\"", "its node \"nowhere\" is not in the graph" },
		{ "strata.xwn.c1", "\"node\":\"c1\"", "\"node\":\"d1\"", "is a ConvTranspose, not a Conv" },
		{ "strata.xwn.c1", "\"bit\":4", "\"bit\":9", "xwn.bit" },
		{ "strata.xwn.c1", "\"prun_weight\":1.2", "\"prun_weight\":-1", "xwn.prun_weight" },
		{ "strata.xwn.c1", "\"bit\":4,", "", "\"xwn\" lacks bit" },
		{ "strata.xwn.c1", "\"bit\":4", "\"bits\":4,\"bit\":4", "setting \"bits\"" },
		{ "strata.xwn.c1", "\"type\":\"xwn_convolution\"", "\"type\":\"xwn_dense\"", "\"type\" is not" },
		{ "strata.xwn.k1", "\"kernel_size\":5", "\"kernel_size\":7", "kernel_size 7 means 3 stages" },
		{ "strata.xwn.k1", "[\"k1_stage0\",\"k1_stage1\"]", "[\"k1_stage1\",\"k1_stage0\"]",
		  "the output of stage 0 is not read" },
		{ "strata.xwn.k1", "\"concat\":\"k1_concat\"", "\"concat\":\"k1_stage1\"", "is already named by an entry" },
		{ "strata.xwn.k1", "\"num_output\":7", "\"num_output\":8", "the pointwise weights are not" },
		{ "strata.xwn.k1", "\"stride\":[2]", "\"stride\":[1]", "strides or pads differ" },
		{ "strata.xwn.k1", "\"bias\":true", "\"bias\":false", "bias is false" },
		{ "strata.xwn.k1", "\"mid_channels\":0", "\"mid_channels\":3", "the stages have 2 channels" },
		{ "strata.xwn.k1", "\"pointwise\":\"k1_pointwise\"", "\"pointwise\":\"d1\"", "pointwise node \"d1\"" },
	};
	st_graph *g = load_model(test_registry());
	st_export_onnx_options opt = { .random_weights = true };
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		exported e;
		export_model(g, NULL, &opt, &e);
		char *keep;
		edit_entry(must_metadata(&e.m, cases[k].key), cases[k].from, cases[k].to, &keep);
		st_onnx_import imp;
		st_diag d;
		int rc = import_model(&e.m, test_registry(), NULL, &imp, &d);
		char *key = st_xasprintf("metadata_props \"%s\": ", cases[k].key);
		if (!said_both(&d, ST_SEVERITY_WARNING, key, cases[k].says))
			print_diag(&d);
		cr_assert_eq(rc, 0, "case %zu", k);
		cr_assert(said_both(&d, ST_SEVERITY_WARNING, key, cases[k].says), "case %zu: no warning naming the key "
		          "with '%s'", k, cases[k].says);
		cr_assert(said(&d, ST_SEVERITY_WARNING, "the nodes import as plain operators"), "case %zu", k);
		cr_assert_eq(imp.graph->errors, 0, "case %zu: the plain import has type errors", k);
		if (strcmp(cases[k].key, "strata.xwn.c1") == 0) {
			cr_assert_str_eq(type_of(imp.graph, "c1"), "convolution", "case %zu", k);
			cr_assert_str_eq(type_of(imp.graph, "d1"), "xwn_deconvolution", "case %zu: d1 is untouched", k);
		} else {
			cr_assert_null(st_graph_find(imp.graph, "k1"), "case %zu", k);
			cr_assert_str_eq(type_of(imp.graph, "k1_stage0"), "convolution", "case %zu", k);
			cr_assert_str_eq(type_of(imp.graph, "k1_concat"), "concatenation", "case %zu", k);
			cr_assert_str_eq(type_of(imp.graph, "k1_pointwise"), "convolution", "case %zu", k);
			cr_assert_str_eq(type_of(imp.graph, "k2"), "xwn_cascade_convolution", "case %zu: k2 is untouched", k);
		}
		free(key);
		st_onnx_import_free(&imp);
		st_diag_free(&d);
		free(keep);
		exported_free(&e);
	}
	st_graph_free(g);
}

Test(xwn_onnx, unusable_source_weights_leave_the_transformed_ones)
{
	st_graph *g = load_model(test_registry());
	st_export_onnx_options opt = { .random_weights = true, .xwn_source_weights = true };
	static const struct {
		const char *from, *to, *says;
	} cases[] = {
		{ "\"weights\":\"c1_weights.xwn_source\"", "\"weights\":\"gone\"", "initializer \"gone\" is not in the graph" },
		/* The transformed weights are no source of themselves. */
		{ "\"weights\":\"c1_weights.xwn_source\"", "\"weights\":\"c1_weights\"", "but the graph computes with" },
		{ "\"weights\":\"c1_weights.xwn_source\"", "\"weights\":\"c1_bias\"", "its dims differ" },
		{ "\"weights\":\"c1_weights.xwn_source\"", "\"weights\":7", "it names no initializer" },
	};
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		exported e;
		export_model(g, NULL, &opt, &e);
		char *keep;
		edit_entry(must_metadata(&e.m, "strata.xwn.c1"), cases[k].from, cases[k].to, &keep);
		st_onnx_import imp;
		st_diag d;
		cr_assert_eq(import_model(&e.m, test_registry(), NULL, &imp, &d), 0);
		cr_assert(said(&d, ST_SEVERITY_WARNING, "metadata_props \"strata.xwn.c1\": the full-precision weights cannot be "
		                                         "used"), "case %zu", k);
		if (!said(&d, ST_SEVERITY_WARNING, cases[k].says))
			print_diag(&d);
		cr_assert(said(&d, ST_SEVERITY_WARNING, cases[k].says), "case %zu", k);
		const st_layer *c1 = st_graph_find(imp.graph, "c1");
		cr_assert_str_eq(c1->type_name, "xwn_convolution");
		cr_assert(!param_of(c1, "use_transform")->b && !param_of(c1, "use_pruning")->b);
		cr_assert_eq(imp.n_xwn_transformed, 1, "only c1 lost its source");
		st_onnx_import_free(&imp);
		st_diag_free(&d);
		free(keep);
		exported_free(&e);
	}
	st_graph_free(g);
}

Test(xwn_onnx, without_the_xwn_plugin_the_nodes_import_plainly)
{
	st_graph *g = load_model(test_registry());
	st_export_onnx_options opt = { .random_weights = true };
	exported e;
	export_model(g, NULL, &opt, &e);
	st_registry *std_only = st_registry_new();
	const char *top = getenv("top_builddir");
	char *path = st_xasprintf("%s/plugins/std/.libs/std.so", top ? top : ".");
	st_registry_load_file(std_only, path);
	free(path);
	cr_assert_not_null(st_registry_find_layer(std_only, "convolution"));
	st_onnx_import imp;
	st_diag d;
	cr_assert_eq(import_model(&e.m, std_only, NULL, &imp, &d), 0);
	cr_assert(said(&d, ST_SEVERITY_WARNING, "metadata_props \"strata.xwn.c1\": no loaded plugin provides "
	                                         "xwn_convolution"));
	cr_assert(said(&d, ST_SEVERITY_WARNING, "metadata_props \"strata.xwn.k2\": no loaded plugin provides "
	                                         "xwn_cascade_convolution"));
	cr_assert_eq(imp.n_xwn, 0);
	cr_assert_str_eq(type_of(imp.graph, "c1"), "convolution");
	cr_assert_str_eq(type_of(imp.graph, "d1"), "deconvolution");
	cr_assert_str_eq(type_of(imp.graph, "k2_stage2"), "convolution");
	cr_assert_eq(imp.graph->errors, 0);
	st_onnx_import_free(&imp);
	st_diag_free(&d);
	exported_free(&e);
	st_registry_free(std_only);
	st_graph_free(g);
}
