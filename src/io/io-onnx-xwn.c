/* ONNX import of XWN layers: the metadata_props entries "strata.xwn.<layer>"
 * that strata export onnx writes (docs/onnx.md, "XWN layers") are checked
 * against the graph, and the Conv, ConvTranspose or cascade nodes they name
 * become the XWN layer again. An entry that cannot be trusted is reported
 * with its key and its nodes import as the plain operators they are. */
#include "config.h"

#include <assert.h>
#include <cjson/cJSON.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io-onnx-internal.h"
#include "k-xwn.h"

#define KEY_PREFIX "strata.xwn."
/* Most stages a cascade entry may list (a layer holds far fewer). */
#define MAX_STAGES 64
/* The XWN set and a cascade's parameters. */
#define MAX_SETTINGS 16
/* A node an entry being read has claimed (xwn_plan.at). */
#define TAKEN INT_MIN

typedef enum entry_kind { ENTRY_CONV, ENTRY_DECONV, ENTRY_CASCADE } entry_kind;

/* One parameter value from the metadata, checked against the type's schema. */
typedef struct setting {
	int index;      /* in the layer type's parameters */
	st_value value;
} setting;

/* One weight of the layer: where the graph has it, and the full-precision
 * values when the file keeps them. */
typedef struct xwn_weight {
	char name[32];                /* stage0_weights, pointwise_weights, weights */
	const st_onnx_tensor *graph;  /* the initializer the node reads */
	bool transposed;
	float *source;                /* checked full-precision values, or NULL */
} xwn_weight;

typedef struct xwn_entry {
	char *key;                    /* printable, for messages */
	char *layer;                  /* the layer's name in the key */
	entry_kind kind;
	const st_layer_type *type;
	setting settings[MAX_SETTINGS];
	int n_settings;
	k_xwn_settings xwn;
	size_t *parts;                /* node indices: the conv; or stages, concat, pointwise */
	int n_parts;
	xwn_weight *weights;          /* conv: weights; cascade: stage0..n-1, pointwise */
	int n_weights;
	bool has_source;              /* every transformed weight has checked source values */
	bool usable;
} xwn_entry;

typedef struct xwn_plan {
	xwn_entry *entries;
	int n_entries;
	int *at;                      /* per node: 0, entry + 1 where imported, -(entry + 1) for a part,
	                               * TAKEN while an entry is read */
	st_map nodes;                 /* node name -> index + 1 (SIZE_MAX: the name is not unique) */
	char **names;
	size_t n_names;
} xwn_plan;

/* ---- messages ---- */

/* A printable copy of metadata text for messages (at most 120 bytes). */
static char *
printable(st_onnx_str s)
{
	size_t n = s.len < 120 ? s.len : 120;
	char *out = st_xmalloc(n + 4);
	for (size_t k = 0; k < n; k++) {
		unsigned char c = (unsigned char)s.data[k];
		out[k] = c >= 0x20 && c < 0x7f && c != '"' ? (char)c : '?';
	}
	strcpy(out + n, s.len > n ? "..." : "");
	return out;
}

/* Why the entry is set aside; its nodes import plainly. Returns -1. */
static int
reject(imp *I, xwn_entry *e, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int
reject(imp *I, xwn_entry *e, const char *fmt, ...)
{
	char text[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof text, fmt, ap);
	va_end(ap);
	st_diag_add(I->d, ST_SEVERITY_WARNING, NULL, 0, 0,
	            "metadata_props \"%s\": %s; the nodes import as plain operators (Conv, ConvTranspose, Concat)",
	            e->key, text);
	e->usable = false;
	return -1;
}

/* ---- the graph ---- */

/* The node an entry names by field what: found, unique, not taken. */
static int
entry_node(imp *I, xwn_entry *e, const cJSON *name, const char *what, size_t *index)
{
	xwn_plan *P = I->xwn;
	if (!cJSON_IsString(name))
		return reject(I, e, "\"%s\" is missing or not a node name", what);
	size_t v = (size_t)st_map_get(&P->nodes, name->valuestring);
	if (v == SIZE_MAX)
		return reject(I, e, "%s node \"%.100s\" is not the only node of that name", what, name->valuestring);
	if (v == 0)
		return reject(I, e, "%s node \"%.100s\" is not in the graph", what, name->valuestring);
	if (P->at[v - 1] != 0)
		return reject(I, e, "%s node \"%.100s\" is already named by an entry", what, name->valuestring);
	*index = v - 1;
	return 0;
}

static const st_onnx_attribute *
node_attr(const st_onnx_node *n, const char *name)
{
	for (size_t k = 0; k < n->n_attributes; k++) {
		if (st_onnx_str_eq(n->attributes[k].name, name))
			return &n->attributes[k];
	}
	return NULL;
}

/* An ints attribute equals want (count values); absent, it reads as def. */
static bool
ints_are(const st_onnx_node *n, const char *name, const int64_t *want, int count, int64_t def)
{
	const st_onnx_attribute *a = node_attr(n, name);
	for (int k = 0; k < count; k++) {
		int64_t v = a == NULL ? def : (size_t)k < a->n_ints ? a->ints[k] : -1;
		if (v != want[k])
			return false;
	}
	return a == NULL || a->n_ints == (size_t)count;
}

/* An int attribute equals want; absent, it reads as def. */
static bool
int_is(const st_onnx_node *n, const char *name, int64_t want, int64_t def)
{
	const st_onnx_attribute *a = node_attr(n, name);
	return (a == NULL ? def : a->i) == want;
}

static bool
same_str(st_onnx_str a, st_onnx_str b)
{
	return a.len == b.len && (a.len == 0 || memcmp(a.data, b.data, a.len) == 0);
}

/* The initializer input k of node n reads, or NULL. */
static const st_onnx_tensor *
initializer_input(imp *I, const st_onnx_node *n, size_t k)
{
	if (k >= n->n_inputs || n->inputs[k].len == 0)
		return NULL;
	val *v = find_val(I, n->inputs[k]);
	return v != NULL && v->c != NULL ? v->c->src : NULL;
}

/* A default-domain node of type op, checked for an entry. */
static int
node_is(imp *I, xwn_entry *e, size_t index, const char *op, const char *what)
{
	const st_onnx_node *n = &I->g->nodes[index];
	bool default_domain = n->domain.len == 0 || st_onnx_str_eq(n->domain, "ai.onnx");
	if (!st_onnx_str_eq(n->op_type, op) || !default_domain)
		return reject(I, e, "%s node \"%.*s\" is a %.*s, not a %s", what, (int)n->name.len, n->name.data,
		              (int)n->op_type.len, n->op_type.data ? n->op_type.data : "", op);
	if (n->n_outputs < 1 || n->outputs[0].len == 0)
		return reject(I, e, "%s node \"%.*s\" has no output", what, (int)n->name.len, n->name.data);
	return 0;
}

/* Output 0 of node index is read only by readers nodes and is no graph output. */
static bool
used_only_inside(imp *I, size_t index, int readers)
{
	val *v = find_val(I, I->g->nodes[index].outputs[0]);
	return v != NULL && v->uses == readers && !v->graph_output;
}

/* ---- values ---- */

/* The values of a float tensor as float32 (caller frees), or NULL with why. */
static float *
tensor_floats(const st_onnx_tensor *t, char *why, size_t size)
{
	/* Float32 bytes go straight across, without doubles in between. */
	const void *data;
	size_t len;
	if (t->has_data_type && t->data_type == ST_ONNX_FLOAT && (t->raw_data.data != NULL || t->external != NULL) &&
	    st_onnx_tensor_bytes(t, &data, &len, why, size) == 0) {
		float *out = st_xmalloc(len ? len : 1);
		memcpy(out, data, len);
		return out;
	}
	cten *c = cten_from_tensor(t, why, size);
	if (c == NULL)
		return NULL;
	if (!is_float_type(c->type) || cten_decode(c, why, size) != 0) {
		if (!is_float_type(c->type))
			snprintf(why, size, "it holds %s, not floats", st_onnx_data_type_name(c->type));
		cten_free(c);
		return NULL;
	}
	float *out = st_xmalloc(sizeof *out * (size_t)(c->count ? c->count : 1));
	for (int64_t k = 0; k < c->count; k++)
		out[k] = (float)cget(c, k);
	cten_free(c);
	return out;
}

static bool
same_dims(const st_onnx_tensor *a, const st_onnx_tensor *b)
{
	if (a->n_dims != b->n_dims)
		return false;
	for (size_t k = 0; k < a->n_dims; k++) {
		if (a->dims[k] != b->dims[k])
			return false;
	}
	return true;
}

/*
 * Checks the full-precision values src of weight w: float32, the graph
 * weight's dims, and transformed with the entry's settings exactly the
 * values the graph computes with (FLOAT16 graphs: after rounding). Keeps
 * them in w->source. Returns 0, or -1 with why.
 */
static int
check_source(const xwn_entry *e, xwn_weight *w, const st_onnx_tensor *src, char *why, size_t size)
{
	const st_onnx_tensor *g = w->graph;
	if (!src->has_data_type || src->data_type != ST_ONNX_FLOAT) {
		snprintf(why, size, "it is not FLOAT");
		return -1;
	}
	if (!same_dims(src, g) || g->n_dims < 3) {
		snprintf(why, size, "its dims differ from those of the weights the node reads");
		return -1;
	}
	float *full = tensor_floats(src, why, size);
	if (full == NULL)
		return -1;
	float *used = tensor_floats(g, why, size);
	if (used == NULL) {
		free(full);
		return -1;
	}
	int64_t taps = 1;
	for (size_t k = 2; k < g->n_dims; k++)
		taps *= g->dims[k];
	float *t = st_xmalloc(sizeof *t * (size_t)(g->count ? g->count : 1));
	int rc = k_xwn_apply(full, t, g->dims[0], g->dims[1], taps, w->transposed, &e->xwn, NULL);
	bool half = g->data_type == ST_ONNX_FLOAT16;
	for (int64_t k = 0; rc == 0 && k < g->count; k++) {
		uint32_t a, b;
		if (half) {
			a = st_float_to_half(t[k]);
			b = st_float_to_half(used[k]);
		} else {
			memcpy(&a, &t[k], sizeof a);
			memcpy(&b, &used[k], sizeof b);
		}
		if (a != b) {
			snprintf(why, size, "transformed with the entry's settings, value %" PRId64 " is %.9g, but the graph "
			         "computes with %.9g", k, (double)t[k], (double)used[k]);
			rc = -1;
		}
	}
	if (rc != 0 && why[0] == '\0')
		snprintf(why, size, "the XWN transform failed");
	free(t);
	free(used);
	if (rc != 0) {
		free(full);
		return -1;
	}
	w->source = full;
	return 0;
}

/* ---- reading an entry ---- */

/* Reads the members of object o into settings of e's type; names lists
 * the members wanted (all of them required). */
static int
read_settings(imp *I, xwn_entry *e, const cJSON *o, const char *field, const char *const *names)
{
	if (!cJSON_IsObject(o))
		return reject(I, e, "\"%s\" is missing or not an object", field);
	const st_layer_desc *d = e->type->desc;
	for (const cJSON *m = o->child; m != NULL; m = m->next) {
		bool known = false;
		for (int k = 0; names[k] != NULL && !known; k++)
			known = strcmp(m->string, names[k]) == 0;
		if (!known)
			return reject(I, e, "\"%s\" has a setting \"%.60s\" that %s does not have", field, m->string, d->name);
	}
	for (int k = 0; names[k] != NULL; k++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, names[k]);
		int index = st_params_find(d->params, d->n_params, names[k]);
		if (index < 0)
			return reject(I, e, "the loaded %s has no parameter %s", d->name, names[k]);
		if (v == NULL)
			return reject(I, e, "\"%s\" lacks %s", field, names[k]);
		setting *s = &e->settings[e->n_settings];
		char why[256];
		if (st_value_from_json(&d->params[index], v, &s->value, why, sizeof why) != 0)
			return reject(I, e, "%s.%s %s", field, names[k], why);
		s->index = index;
		e->n_settings++;
	}
	return 0;
}

/* A setting read_settings has read (it requires every one it reads). */
static const st_value *
setting_of(const xwn_entry *e, const char *name)
{
	const st_layer_desc *d = e->type->desc;
	for (int k = 0; k < e->n_settings; k++) {
		if (strcmp(d->params[e->settings[k].index].name, name) == 0)
			return &e->settings[k].value;
	}
	assert(!"a setting read_settings requires is missing");
	abort();
}

static const char *const xwn_names[] = { "use_transform", "bit", "max_scale", "use_pruning", "prun_weight", NULL };
static const char *const cascade_names[] = { "num_output", "kernel_size", "stride", "pads", "mid_channels",
	                                     "channel_ratio", "bias", NULL };

/* A Conv or ConvTranspose entry: one node, its weights an initializer. */
static int
read_conv(imp *I, xwn_entry *e, const cJSON *root)
{
	bool transposed = e->kind == ENTRY_DECONV;
	e->parts = st_xcalloc(1, sizeof *e->parts);
	if (entry_node(I, e, cJSON_GetObjectItemCaseSensitive(root, "node"), "its", &e->parts[0]) != 0)
		return -1;
	e->n_parts = 1;
	if (node_is(I, e, e->parts[0], transposed ? "ConvTranspose" : "Conv", "its") != 0)
		return -1;
	const st_onnx_node *n = &I->g->nodes[e->parts[0]];
	e->weights = st_xcalloc(1, sizeof *e->weights);
	e->n_weights = 1;
	xwn_weight *w = &e->weights[0];
	snprintf(w->name, sizeof w->name, "weights");
	w->transposed = transposed;
	w->graph = initializer_input(I, n, 1);
	if (w->graph == NULL || w->graph->n_dims < 3 || w->graph->n_dims > 5)
		return reject(I, e, "node \"%.*s\" does not read its weights from an initializer of rank 3 to 5",
		              (int)n->name.len, n->name.data);
	return 0;
}

/* Expands a cascade's stride (1 or sp values) or pads (1, sp or 2 sp) as
 * the pointwise Conv's attribute; false when the count does not fit. */
static bool
expand(const st_value *v, int sp, bool pads, int64_t *out)
{
	if (v->count != 1 && v->count != sp && !(pads && v->count == 2 * sp))
		return false;
	for (int k = 0; k < sp; k++) {
		if (v->count == 2 * sp) {
			out[k] = v->ints[k];
			out[sp + k] = v->ints[sp + k];
		} else {
			out[k] = v->ints[v->count == 1 ? 0 : k];
			if (pads)
				out[sp + k] = out[k];
		}
	}
	return true;
}

/* A cascade entry: the stages, the Concat and the pointwise Conv, chained
 * as the layer computes, each read by the next part only. */
static int
read_cascade(imp *I, xwn_entry *e, const cJSON *root)
{
	const cJSON *stages = cJSON_GetObjectItemCaseSensitive(root, "stages");
	int n = cJSON_IsArray(stages) ? cJSON_GetArraySize(stages) : 0;
	if (n < 1 || n > MAX_STAGES)
		return reject(I, e, "\"stages\" is not a list of 1 to %d node names", MAX_STAGES);
	int64_t kernel_size = setting_of(e, "kernel_size")->i;
	if (kernel_size / 2 != n)
		return reject(I, e, "kernel_size %" PRId64 " means %" PRId64 " stages, but \"stages\" names %d", kernel_size,
		              kernel_size / 2, n);
	e->parts = st_xcalloc((size_t)n + 2, sizeof *e->parts);
	e->weights = st_xcalloc((size_t)n + 1, sizeof *e->weights);
	const cJSON *s = stages->child;
	for (int j = 0; j < n; j++, s = s->next) {
		char what[32];
		snprintf(what, sizeof what, "stage %d", j);
		if (entry_node(I, e, s, what, &e->parts[j]) != 0)
			return -1;
		/* Taken now, so that a name listed twice is caught. */
		I->xwn->at[e->parts[j]] = TAKEN;
		e->n_parts++;
	}
	if (entry_node(I, e, cJSON_GetObjectItemCaseSensitive(root, "concat"), "concat", &e->parts[n]) != 0)
		return -1;
	I->xwn->at[e->parts[n]] = TAKEN;
	e->n_parts++;
	if (entry_node(I, e, cJSON_GetObjectItemCaseSensitive(root, "pointwise"), "pointwise", &e->parts[n + 1]) != 0)
		return -1;
	e->n_parts++;

	/* The stages: 3-tap Conv, stride 1, pads 1, no bias, chained. */
	int sp = 0;
	int64_t mid = 0, in_channels = 0;
	for (int j = 0; j < n; j++) {
		char what[32];
		snprintf(what, sizeof what, "stage %d", j);
		if (node_is(I, e, e->parts[j], "Conv", what) != 0)
			return -1;
		const st_onnx_node *c = &I->g->nodes[e->parts[j]];
		xwn_weight *w = &e->weights[j];
		snprintf(w->name, sizeof w->name, "stage%d_weights", j);
		w->graph = initializer_input(I, c, 1);
		if (w->graph == NULL || w->graph->n_dims < 3 || w->graph->n_dims > 5)
			return reject(I, e, "%s does not read its weights from an initializer of rank 3 to 5", what);
		if (j == 0) {
			sp = (int)w->graph->n_dims - 2;
			mid = w->graph->dims[0];
			in_channels = w->graph->dims[1];
		}
		int64_t three[3] = { 3, 3, 3 }, ones[6] = { 1, 1, 1, 1, 1, 1 };
		bool shape_ok = (int)w->graph->n_dims == sp + 2 && w->graph->dims[0] == mid &&
		                w->graph->dims[1] == (j == 0 ? in_channels : mid);
		for (int k = 0; k < sp && shape_ok; k++)
			shape_ok = w->graph->dims[2 + k] == 3;
		if (!shape_ok)
			return reject(I, e, "the weights of %s are not %" PRId64 " x %" PRId64 " x 3-tap", what, mid,
			              j == 0 ? in_channels : mid);
		if (c->n_inputs > 2 && c->inputs[2].len > 0)
			return reject(I, e, "%s has a bias; cascade stages have none", what);
		const st_onnx_attribute *pad = node_attr(c, "auto_pad");
		if ((pad != NULL && pad->s.len > 0 && !st_onnx_str_eq(pad->s, "NOTSET")) || !ints_are(c, "kernel_shape", three, sp, 3) ||
		    !ints_are(c, "strides", ones, sp, 1) || !ints_are(c, "dilations", ones, sp, 1) ||
		    !ints_are(c, "pads", ones, 2 * sp, 0) || !int_is(c, "group", 1, 1))
			return reject(I, e, "%s is not a 3-tap convolution with stride 1, pads 1 and one group", what);
		if (j > 0 && !same_str(c->inputs[0], I->g->nodes[e->parts[j - 1]].outputs[0]))
			return reject(I, e, "%s does not read the output of stage %d", what, j - 1);
		if (!used_only_inside(I, e->parts[j], j < n - 1 ? 2 : 1))
			return reject(I, e, "the output of %s is not read by exactly the cascade's next part%s", what,
			              j < n - 1 ? "s" : "");
	}
	int64_t want_mid = setting_of(e, "mid_channels")->i;
	if (want_mid == 0) {
		double m = (double)in_channels * setting_of(e, "channel_ratio")->f;
		want_mid = m >= 9.0e18 ? -1 : (int64_t)m;
	}
	if (mid != want_mid)
		return reject(I, e, "the stages have %" PRId64 " channels, but mid_channels and channel_ratio give %" PRId64,
		              mid, want_mid);

	/* The Concat of every stage's output, in order, along channels. */
	size_t cat = e->parts[n];
	if (node_is(I, e, cat, "Concat", "concat") != 0)
		return -1;
	const st_onnx_node *c = &I->g->nodes[cat];
	const st_onnx_attribute *axis = node_attr(c, "axis");
	bool inputs_ok = c->n_inputs == (size_t)n && axis != NULL && (axis->i == 1 || axis->i == -(sp + 1));
	for (int j = 0; j < n && inputs_ok; j++)
		inputs_ok = same_str(c->inputs[j], I->g->nodes[e->parts[j]].outputs[0]);
	if (!inputs_ok)
		return reject(I, e, "the concat node does not join the %d stage outputs along channels", n);
	if (!used_only_inside(I, cat, 1))
		return reject(I, e, "the concat's output is not read by exactly the pointwise node");

	/* The pointwise Conv: the layer's num_output, stride, pads and bias. */
	size_t pw = e->parts[n + 1];
	if (node_is(I, e, pw, "Conv", "pointwise") != 0)
		return -1;
	c = &I->g->nodes[pw];
	xwn_weight *w = &e->weights[n];
	snprintf(w->name, sizeof w->name, "pointwise_weights");
	w->graph = initializer_input(I, c, 1);
	if (!same_str(c->inputs[0], I->g->nodes[cat].outputs[0]))
		return reject(I, e, "the pointwise node does not read the concat's output");
	int64_t num_output = setting_of(e, "num_output")->i;
	bool shape_ok = w->graph != NULL && (int)w->graph->n_dims == sp + 2 && w->graph->dims[0] == num_output &&
	                w->graph->dims[1] == mid * n;
	for (int k = 0; shape_ok && k < sp; k++)
		shape_ok = w->graph->dims[2 + k] == 1;
	if (!shape_ok)
		return reject(I, e, "the pointwise weights are not an initializer of %" PRId64 " x %" PRId64 " x 1", num_output,
		              mid * n);
	bool bias = setting_of(e, "bias")->b;
	bool has_bias = c->n_inputs > 2 && c->inputs[2].len > 0;
	const st_onnx_tensor *b = has_bias ? initializer_input(I, c, 2) : NULL;
	if (bias != has_bias || (bias && (b == NULL || b->n_dims != 1 || b->dims[0] != num_output)))
		return reject(I, e, "bias is %s, but the pointwise node %s", bias ? "true" : "false",
		              has_bias ? "has a bias input" : "has none");
	int64_t stride[3], pads[6], ones[3] = { 1, 1, 1 };
	if (!expand(setting_of(e, "stride"), sp, false, stride) || !expand(setting_of(e, "pads"), sp, true, pads))
		return reject(I, e, "stride or pads do not fit %d spatial axes", sp);
	const st_onnx_attribute *pad = node_attr(c, "auto_pad");
	if ((pad != NULL && pad->s.len > 0 && !st_onnx_str_eq(pad->s, "NOTSET")) || !ints_are(c, "kernel_shape", ones, sp, 1) ||
	    !ints_are(c, "dilations", ones, sp, 1) || !int_is(c, "group", 1, 1))
		return reject(I, e, "the pointwise node is not a 1-tap convolution with one group");
	if (!ints_are(c, "strides", stride, sp, 1) || !ints_are(c, "pads", pads, 2 * sp, 0))
		return reject(I, e, "the pointwise node's strides or pads differ from the entry's stride and pads");
	e->n_weights = n + 1;
	return 0;
}

/* Reads the metadata entry m into e; returns 0 when the layer can be restored. */
static int
read_entry(imp *I, xwn_entry *e, const st_onnx_entry *m)
{
	e->key = printable(m->key);
	e->usable = true;
	size_t prefix = strlen(KEY_PREFIX);
	st_onnx_str name = { m->key.data + prefix, m->key.len - prefix };
	e->layer = st_onnx_str_dup(name);
	if (name.len == 0 || strlen(e->layer) != name.len)
		return reject(I, e, "the key names no layer");
	cJSON *root = cJSON_ParseWithLength(m->value.data ? m->value.data : "", m->value.len);
	int rc = -1;
	const cJSON *version = cJSON_GetObjectItemCaseSensitive(root, "version");
	const cJSON *type = cJSON_GetObjectItemCaseSensitive(root, "type");
	static const char *const types[] = { "xwn_convolution", "xwn_deconvolution", "xwn_cascade_convolution" };
	int kind = -1;
	for (int k = 0; k < 3 && cJSON_IsString(type); k++) {
		if (strcmp(type->valuestring, types[k]) == 0)
			kind = k;
	}
	if (!cJSON_IsObject(root))
		reject(I, e, "the value is not a JSON object");
	else if (!cJSON_IsNumber(version) || version->valuedouble != 1)
		reject(I, e, "\"version\" is not 1 (a newer Strata wrote it?)");
	else if (kind < 0)
		reject(I, e, "\"type\" is not xwn_convolution, xwn_deconvolution or xwn_cascade_convolution");
	else if ((e->type = st_registry_find_layer(I->r, types[kind])) == NULL)
		reject(I, e, "no loaded plugin provides %s (the xwn collection)", types[kind]);
	else
		rc = 0;
	if (rc == 0) {
		e->kind = (entry_kind)kind;
		rc = read_settings(I, e, cJSON_GetObjectItemCaseSensitive(root, "xwn"), "xwn", xwn_names);
	}
	if (rc == 0 && e->kind == ENTRY_CASCADE)
		rc = read_settings(I, e, cJSON_GetObjectItemCaseSensitive(root, "params"), "params", cascade_names);
	if (rc == 0) {
		e->xwn = (k_xwn_settings){
			.transform = setting_of(e, "use_transform")->b,
			.bit = (int)setting_of(e, "bit")->i,
			.max_scale = (float)setting_of(e, "max_scale")->f,
			.pruning = setting_of(e, "use_pruning")->b,
			.prun_weight = (float)setting_of(e, "prun_weight")->f,
		};
		rc = e->kind == ENTRY_CASCADE ? read_cascade(I, e, root) : read_conv(I, e, root);
	}
	/* The full-precision weights: all of them checked, or none used. */
	const cJSON *source = cJSON_GetObjectItemCaseSensitive(root, "source");
	if (rc == 0 && source != NULL && k_xwn_active(&e->xwn)) {
		char why[300] = "";
		const char *failed = NULL;
		for (int k = 0; k < e->n_weights && failed == NULL; k++) {
			xwn_weight *w = &e->weights[k];
			const cJSON *s = cJSON_IsObject(source) ? cJSON_GetObjectItemCaseSensitive(source, w->name) : NULL;
			val *v = cJSON_IsString(s) ? find_val(I, (st_onnx_str){ s->valuestring, strlen(s->valuestring) }) : NULL;
			if (!cJSON_IsString(s))
				snprintf(why, sizeof why, "it names no initializer");
			else if (v == NULL || v->c == NULL || v->c->src == NULL)
				snprintf(why, sizeof why, "initializer \"%.100s\" is not in the graph", s->valuestring);
			if (why[0] != '\0' || check_source(e, w, v->c->src, why, sizeof why) != 0)
				failed = w->name;
		}
		if (failed != NULL) {
			st_diag_add(I->d, ST_SEVERITY_WARNING, NULL, 0, 0,
			            "metadata_props \"%s\": the full-precision %s cannot be used (%s); layer '%s' is "
			            "restored with the transformed weights the graph computes with",
			            e->key, failed, why, e->layer);
			for (int k = 0; k < e->n_weights; k++) {
				free(e->weights[k].source);
				e->weights[k].source = NULL;
			}
		} else {
			e->has_source = true;
		}
	}
	cJSON_Delete(root);
	return rc;
}

/* ---- the plan ---- */

void
xwn_plan_read(imp *I, const int *role)
{
	const st_onnx_model *m = I->m;
	size_t prefix = strlen(KEY_PREFIX);
	int count = 0;
	for (size_t k = 0; k < m->n_metadata_props; k++) {
		st_onnx_str key = m->metadata_props[k].key;
		count += key.len >= prefix && memcmp(key.data, KEY_PREFIX, prefix) == 0;
	}
	if (count == 0)
		return;
	xwn_plan *P = st_xcalloc(1, sizeof *P);
	I->xwn = P;
	P->entries = st_xcalloc((size_t)count, sizeof *P->entries);
	P->at = st_xcalloc(I->g->n_nodes ? I->g->n_nodes : 1, sizeof *P->at);
	P->names = st_xcalloc(I->g->n_nodes ? I->g->n_nodes : 1, sizeof *P->names);
	st_map_init(&P->nodes);
	for (size_t k = 0; k < I->g->n_nodes; k++) {
		st_onnx_str name = I->g->nodes[k].name;
		if (name.len == 0)
			continue;
		char *key = st_onnx_str_dup(name);
		P->names[P->n_names++] = key;
		st_map_put(&P->nodes, key, st_map_get(&P->nodes, key) ? (void *)SIZE_MAX : (void *)(k + 1));
	}
	for (size_t k = 0; k < m->n_metadata_props; k++) {
		const st_onnx_entry *md = &m->metadata_props[k];
		if (md->key.len < prefix || memcmp(md->key.data, KEY_PREFIX, prefix) != 0)
			continue;
		int index = P->n_entries++;
		xwn_entry *e = &P->entries[index];
		if (read_entry(I, e, md) == 0) {
			for (int j = 0; j < e->n_parts && e->usable; j++) {
				if (role[e->parts[j]] != 0)
					reject(I, e, "its nodes are part of another pattern");
			}
		}
		/* The nodes claimed while reading become the entry's, or go back. */
		for (size_t j = 0; j < I->g->n_nodes; j++) {
			if (P->at[j] == TAKEN)
				P->at[j] = 0;
		}
		if (!e->usable)
			continue;
		for (int j = 0; j < e->n_parts; j++)
			P->at[e->parts[j]] = j == e->n_parts - 1 ? index + 1 : -(index + 1);
	}
}

int
xwn_role(const imp *I, size_t index)
{
	if (I->xwn == NULL)
		return 0;
	int at = I->xwn->at[index];
	return at < 0 ? -1 : at;
}

void
xwn_plan_free(imp *I)
{
	xwn_plan *P = I->xwn;
	if (P == NULL)
		return;
	for (int k = 0; k < P->n_entries; k++) {
		xwn_entry *e = &P->entries[k];
		for (int j = 0; j < e->n_settings; j++)
			st_value_clear(&e->settings[j].value);
		for (int j = 0; j < e->n_weights; j++)
			free(e->weights[j].source);
		free(e->weights);
		free(e->parts);
		free(e->key);
		free(e->layer);
	}
	free(P->entries);
	free(P->at);
	for (size_t k = 0; k < P->n_names; k++)
		free(P->names[k]);
	free(P->names);
	st_map_free(&P->nodes);
	free(P);
	I->xwn = NULL;
}

/* ---- making the layer ---- */

/* The entry's settings on l; use_transform and use_pruning off when the
 * weights written are the transformed ones. */
static void
apply_settings(imp *I, const xwn_entry *e, st_layer *l, bool transformed_weights)
{
	const st_layer_desc *d = l->type->desc;
	for (int k = 0; k < e->n_settings; k++) {
		int index = e->settings[k].index;
		st_value_clear(&l->params.values[index]);
		st_value_copy(&l->params.values[index], &e->settings[k].value);
		const char *name = d->params[index].name;
		if (transformed_weights && (strcmp(name, "use_transform") == 0 || strcmp(name, "use_pruning") == 0))
			l->params.values[index].b = false;
		l->params.set[index] = true;
	}
	st_graph_touch(I->graph, l);
}

/* Writes weight w of l: the full-precision values when kept, else the graph's. */
static int
write_xwn_weight(imp *I, st_layer *l, const xwn_weight *w)
{
	int64_t dims[ST_MAX_RANK];
	for (size_t k = 0; k < w->graph->n_dims; k++)
		dims[k] = w->graph->dims[k];
	if (w->source != NULL)
		return write_floats(I, l, w->name, w->source, (int)w->graph->n_dims, dims);
	char why[300];
	float *v = tensor_floats(w->graph, why, sizeof why);
	if (v == NULL) {
		node_msg(I, ST_SEVERITY_ERROR, "weights '%.*s': %s", (int)w->graph->name.len, w->graph->name.data, why);
		return -1;
	}
	int rc = write_floats(I, l, w->name, v, (int)w->graph->n_dims, dims);
	free(v);
	return rc;
}

static int
restore_cascade(imp *I, const xwn_entry *e, st_layer **out)
{
	int n = e->n_weights - 1;
	const st_onnx_node *pointwise = I->node;
	/* The cascade reads what its first stage reads. */
	I->node = &I->g->nodes[e->parts[0]];
	st_port p;
	int rc = in_port(I, 0, &p);
	I->node = pointwise;
	if (rc != 0)
		return rc;
	st_layer *l = add_layer(I, e->type->desc->name, e->layer);
	link_in(I, l, 0, p);
	set_out_port(I, 0, l, 0);
	for (int j = 0; j <= n; j++) {
		if (write_xwn_weight(I, l, &e->weights[j]) != 0)
			return -1;
	}
	if (setting_of(e, "bias")->b) {
		const st_onnx_tensor *b = initializer_input(I, pointwise, 2);
		char why[300];
		float *v = tensor_floats(b, why, sizeof why);
		if (v == NULL)
			return unsupported(I, "its bias cannot be read: %s", why);
		int64_t dims[1] = { b->dims[0] };
		rc = write_floats(I, l, "pointwise_bias", v, 1, dims);
		free(v);
		if (rc != 0)
			return -1;
	}
	I->n_folded += n + 1;
	*out = l;
	return 0;
}

int
xwn_import(imp *I, int entry)
{
	const xwn_entry *e = &I->xwn->entries[entry];
	size_t last = e->parts[e->n_parts - 1];
	I->node_index = last;
	I->node = &I->g->nodes[last];
	I->why[0] = '\0';
	int mark = I->graph->n_layers;
	st_layer *l = NULL;
	bool transformed = k_xwn_active(&e->xwn) && !e->has_source;
	int rc;
	if (e->kind == ENTRY_CASCADE) {
		rc = restore_cascade(I, e, &l);
	} else {
		rc = conv_layer(I, e->kind == ENTRY_DECONV, e->type->desc->name, e->layer, e->weights[0].source, &l);
	}
	if (rc == 0) {
		apply_settings(I, e, l, transformed);
		I->n_xwn++;
		if (transformed) {
			I->n_xwn_transformed++;
			st_buf b;
			st_buf_init(&b);
			st_format_double(e->xwn.max_scale, &b);
			st_buf_puts(&b, ", prun_weight ");
			st_format_double(setting_of(e, "prun_weight")->f, &b);
			st_diag_add(I->d, ST_SEVERITY_INFO, NULL, 0, 0,
			            "layer '%s' is %s again (metadata_props \"%s\"), with use_transform and use_pruning "
			            "off: the file holds its weights already transformed, and transforming them again "
			            "would change them (bit %d, max_scale %s kept); export with --xwn-source-weights "
			            "for a lossless round trip",
			            l->name, e->type->desc->name, e->key, e->xwn.bit, b.data);
			st_buf_free(&b);
		} else {
			st_diag_add(I->d, ST_SEVERITY_INFO, NULL, 0, 0, "layer '%s' is %s again (metadata_props \"%s\")%s",
			            l->name, e->type->desc->name, e->key,
			            e->has_source ? ", with its full-precision weights" : "");
		}
		return 0;
	}
	if (rc < 0)
		return rc;
	/* Restoring failed where the plain operators may not: import those. */
	rollback(I, mark);
	st_diag_add(I->d, ST_SEVERITY_WARNING, NULL, 0, 0,
	            "metadata_props \"%s\": layer '%s' cannot be restored (%s); the nodes import as plain operators",
	            e->key, e->layer, I->why);
	for (int j = 0; j < e->n_parts && rc >= 0; j++)
		rc = import_plain(I, e->parts[j]);
	return rc < 0 ? -1 : 0;
}
