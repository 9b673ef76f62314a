/* ONNX export: a checked Strata graph translated into an ONNX ModelProto,
 * one table entry per standard layer type, weights as raw initializers. */
#include "config.h"

#include <assert.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "k-xwn.h"
#include "st-export.h"
#include "st-io.h"
#include "st-onnx.h"

#define MAX_ATTRS 16
#define MAX_SPATIAL 3

/* Everything the model under construction points to is owned here and
 * released by exporter_free once the model is encoded. */
typedef struct exporter {
	st_graph *g;
	const st_export_onnx_options *opt;
	int opset;
	const char *file;
	st_diag *d;
	st_weights *weights;
	int status;             /* the worst ST_EXPORT_* so far */
	void **owned;
	size_t n_owned, cap_owned;
	st_map names;           /* tensor names in use (keys in owned) */
	st_map node_names;      /* node names in use: ONNX Runtime wants them unique */
	const char ***ports;    /* per layer index: the tensor of each output */
	int *n_ports;
	st_onnx_node *nodes;
	size_t n_nodes, cap_nodes;
	st_onnx_tensor *inits;
	size_t n_inits, cap_inits;
	st_onnx_value_info *inputs, *outputs;
	size_t n_inputs, cap_inputs, n_outputs, cap_outputs;
	st_onnx_opset *opsets;
	size_t n_opsets, cap_opsets;
	st_onnx_model *holders; /* placeholders' parsed attributes */
	size_t n_holders;
	st_onnx_entry *metadata;  /* metadata_props: what re-import restores XWN layers from */
	size_t n_metadata, cap_metadata;
} exporter;

typedef int (*emit_fn)(exporter *ex, const st_layer *l);

/* ---- memory and names ---- */

static void *
keep(exporter *ex, void *p)
{
	if (ex->n_owned == ex->cap_owned) {
		ex->cap_owned = ex->cap_owned ? 2 * ex->cap_owned : 64;
		ex->owned = st_xreallocarray(ex->owned, ex->cap_owned, sizeof *ex->owned);
	}
	ex->owned[ex->n_owned++] = p;
	return p;
}

static void *
alloc(exporter *ex, size_t n, size_t size)
{
	return keep(ex, st_xcalloc(n ? n : 1, size));
}

static const char *
text(exporter *ex, const char *s)
{
	return keep(ex, st_xstrdup(s));
}

static st_onnx_str
str(exporter *ex, const char *s)
{
	const char *copy = text(ex, s);
	return (st_onnx_str){ copy, strlen(copy) };
}

/* Grows a graph-level array by one element and returns it zeroed. */
static void *
grow(void **array, size_t *n, size_t *cap, size_t size)
{
	if (*n == *cap) {
		*cap = *cap ? 2 * *cap : 16;
		*array = st_xreallocarray(*array, *cap, size);
	}
	char *item = (char *)*array + size * (*n)++;
	memset(item, 0, size);
	return item;
}

/* A tensor name not used yet: base itself, or base~2, base~3... */
static const char *
fresh_name(exporter *ex, const char *base)
{
	char *name = st_xstrdup(base);
	for (int k = 2; st_map_get(&ex->names, name) != NULL; k++) {
		free(name);
		name = st_xasprintf("%s~%d", base, k);
	}
	keep(ex, name);
	st_map_put(&ex->names, name, name);
	return name;
}

static const char *
derived_name(exporter *ex, const st_layer *l, const char *suffix)
{
	char *base = st_xasprintf("%s/%s", l->name, suffix);
	const char *name = fresh_name(ex, base);
	free(base);
	return name;
}

/* ---- messages ---- */

static int
fail(exporter *ex, int status, const st_layer *l, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int
fail(exporter *ex, int status, const st_layer *l, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = st_xvasprintf(fmt, ap);
	va_end(ap);
	if (l != NULL)
		st_diag_add(ex->d, ST_SEVERITY_ERROR, ex->file, l->src_line, l->src_col, "layer '%s': %s", l->name,
		            msg);
	else
		st_diag_add(ex->d, ST_SEVERITY_ERROR, ex->file, 0, 0, "%s", msg);
	free(msg);
	if (status > ex->status)
		ex->status = status;
	return -1;
}

/* ---- types and tensors ---- */

static int32_t
onnx_type(const exporter *ex, st_dtype t)
{
	switch (t) {
	case ST_DTYPE_FLOAT32:
		return ex->opt->fp16 ? ST_ONNX_FLOAT16 : ST_ONNX_FLOAT;
	case ST_DTYPE_FLOAT16:
		return ST_ONNX_FLOAT16;
	case ST_DTYPE_INT64:
		return ST_ONNX_INT64;
	case ST_DTYPE_INT32:
		return ST_ONNX_INT32;
	case ST_DTYPE_INT8:
		return ST_ONNX_INT8;
	case ST_DTYPE_UINT8:
		return ST_ONNX_UINT8;
	case ST_DTYPE_BOOL:
		return ST_ONNX_BOOL;
	default:
		return ST_ONNX_UNDEFINED;
	}
}

/* The floating-point type a layer computes in: that of its first output
 * when the check knew it, else the export's default. */
static int32_t
float_type(const exporter *ex, const st_layer *l)
{
	if (l->outputs_known && l->n_outputs > 0 && l->outputs[0].dtype == ST_DTYPE_FLOAT16)
		return ST_ONNX_FLOAT16;
	return ex->opt->fp16 ? ST_ONNX_FLOAT16 : ST_ONNX_FLOAT;
}

/* Little-endian bytes of n floats as FLOAT or FLOAT16; the exporter owns them. */
static uint8_t *
float_bytes(exporter *ex, int32_t type, const float *v, int64_t n, size_t *len)
{
	size_t elem = type == ST_ONNX_FLOAT16 ? 2 : 4;
	uint8_t *raw = alloc(ex, (size_t)n * elem, 1);
	for (int64_t i = 0; i < n; i++) {
		uint32_t bits;
		if (type == ST_ONNX_FLOAT16) {
			bits = st_float_to_half(v[i]);
		} else {
			memcpy(&bits, &v[i], sizeof bits);
		}
		for (size_t b = 0; b < elem; b++)
			raw[(size_t)i * elem + b] = (uint8_t)(bits >> (8 * b));
	}
	*len = (size_t)n * elem;
	return raw;
}

/* Adds an initializer holding raw (owned by the exporter) and returns its name. */
static const char *
add_init(exporter *ex, const char *base, int32_t type, const int64_t *dims, int rank, const uint8_t *raw,
         size_t len)
{
	const char *name = fresh_name(ex, base);
	st_onnx_tensor *t = grow((void **)&ex->inits, &ex->n_inits, &ex->cap_inits, sizeof *t);
	t->dims = alloc(ex, (size_t)rank, sizeof *t->dims);
	if (rank > 0)
		memcpy(t->dims, dims, sizeof *dims * (size_t)rank);
	t->n_dims = (size_t)rank;
	t->has_data_type = true;
	t->data_type = type;
	t->name = (st_onnx_str){ name, strlen(name) };
	t->raw_data = (st_onnx_str){ raw ? (const char *)raw : "", len };
	return name;
}

static const char *
init_floats(exporter *ex, const char *base, int32_t type, const int64_t *dims, int rank, const float *v,
            int64_t n)
{
	size_t len;
	uint8_t *raw = float_bytes(ex, type, v, n, &len);
	return add_init(ex, base, type, dims, rank, raw, len);
}

static const char *
init_scalar(exporter *ex, const char *base, int32_t type, double value)
{
	float v = (float)value;
	return init_floats(ex, base, type, NULL, 0, &v, 1);
}

/* A 1-D int64 initializer. */
static const char *
init_ints(exporter *ex, const char *base, const int64_t *v, int n)
{
	uint8_t *raw = alloc(ex, (size_t)n * 8, 1);
	for (int i = 0; i < n; i++) {
		for (int b = 0; b < 8; b++)
			raw[i * 8 + b] = (uint8_t)((uint64_t)v[i] >> (8 * b));
	}
	int64_t dim = n;
	return add_init(ex, base, ST_ONNX_INT64, &dim, 1, raw, (size_t)n * 8);
}

/* ---- nodes ---- */

/* Adds a node; an input name NULL stands for an omitted optional input.
 * Returns its index (attributes go on through it). */
static size_t
add_node(exporter *ex, const char *op, const char *name, const char *const *in, int n_in,
         const char *const *out, int n_out)
{
	/* Node names are unique too: base, base~2, ... */
	const char *base = name;
	char *unique = st_xstrdup(base);
	for (int k = 2; st_map_get(&ex->node_names, unique) != NULL; k++) {
		free(unique);
		unique = st_xasprintf("%s~%d", base, k);
	}
	name = keep(ex, unique);
	st_map_put(&ex->node_names, name, (void *)name);
	st_onnx_node *n = grow((void **)&ex->nodes, &ex->n_nodes, &ex->cap_nodes, sizeof *n);
	n->op_type = str(ex, op);
	n->name = (st_onnx_str){ name, strlen(name) };
	n->inputs = alloc(ex, (size_t)n_in, sizeof *n->inputs);
	for (int i = 0; i < n_in; i++)
		n->inputs[i] = in[i] ? (st_onnx_str){ in[i], strlen(in[i]) } : (st_onnx_str){ "", 0 };
	n->n_inputs = (size_t)n_in;
	n->outputs = alloc(ex, (size_t)n_out, sizeof *n->outputs);
	for (int i = 0; i < n_out; i++)
		n->outputs[i] = (st_onnx_str){ out[i], strlen(out[i]) };
	n->n_outputs = (size_t)n_out;
	n->attributes = alloc(ex, MAX_ATTRS, sizeof *n->attributes);
	return ex->n_nodes - 1;
}

/* A node with one output, named after the layer (plus a suffix for helpers). */
static size_t
node1(exporter *ex, const char *op, const st_layer *l, const char *const *in, int n_in, const char *out)
{
	return add_node(ex, op, text(ex, l->name), in, n_in, &out, 1);
}

static st_onnx_attribute *
attr(exporter *ex, size_t node, const char *name, int32_t type)
{
	st_onnx_node *n = &ex->nodes[node];
	assert(n->n_attributes < MAX_ATTRS);
	st_onnx_attribute *a = &n->attributes[n->n_attributes++];
	a->name = str(ex, name);
	a->has_type = true;
	a->type = type;
	return a;
}

static void
attr_int(exporter *ex, size_t node, const char *name, int64_t v)
{
	st_onnx_attribute *a = attr(ex, node, name, ST_ONNX_ATTR_INT);
	a->has_i = true;
	a->i = v;
}

static void
attr_float(exporter *ex, size_t node, const char *name, double v)
{
	st_onnx_attribute *a = attr(ex, node, name, ST_ONNX_ATTR_FLOAT);
	a->has_f = true;
	a->f = (float)v;
}

static void
attr_string(exporter *ex, size_t node, const char *name, const char *v)
{
	st_onnx_attribute *a = attr(ex, node, name, ST_ONNX_ATTR_STRING);
	a->s = str(ex, v);
}

static void
attr_ints(exporter *ex, size_t node, const char *name, const int64_t *v, int n)
{
	st_onnx_attribute *a = attr(ex, node, name, ST_ONNX_ATTR_INTS);
	a->ints = alloc(ex, (size_t)n, sizeof *a->ints);
	memcpy(a->ints, v, sizeof *v * (size_t)n);
	a->n_ints = (size_t)n;
}

static void
attr_floats(exporter *ex, size_t node, const char *name, const double *v, int n)
{
	st_onnx_attribute *a = attr(ex, node, name, ST_ONNX_ATTR_FLOATS);
	a->floats = alloc(ex, (size_t)n, sizeof *a->floats);
	for (int i = 0; i < n; i++)
		a->floats[i] = (float)v[i];
	a->n_floats = (size_t)n;
}

/* ---- layers: parameters, inputs, shapes ---- */

static const st_value *
param(const st_layer *l, const char *name)
{
	const st_layer_desc *d = l->type->desc;
	int i = st_params_find(d->params, d->n_params, name);
	assert(i >= 0);
	return &l->params.values[i];
}

static const char *
param_enum(const st_layer *l, const char *name)
{
	const st_layer_desc *d = l->type->desc;
	int i = st_params_find(d->params, d->n_params, name);
	assert(i >= 0 && d->params[i].kind == ST_PARAM_ENUM);
	return d->params[i].enum_values[l->params.values[i].i];
}

static const char *
input_name(const exporter *ex, const st_layer *l, int i)
{
	if (i >= l->n_inputs || l->inputs[i].layer == NULL)
		return NULL;
	const st_port *p = &l->inputs[i];
	assert(p->output >= 0 && p->output < ex->n_ports[p->layer->index]);
	return ex->ports[p->layer->index][p->output];
}

/* The checked shape of input i, or NULL when the check could not know it
 * (after a placeholder). */
static const st_shape *
input_shape(const st_layer *l, int i)
{
	if (i >= l->n_inputs || l->inputs[i].layer == NULL)
		return NULL;
	const st_port *p = &l->inputs[i];
	if (!p->layer->outputs_known || p->output >= p->layer->n_outputs)
		return NULL;
	return &p->layer->outputs[p->output];
}

static int
need_shape(exporter *ex, const st_layer *l, const st_shape *s)
{
	if (s != NULL && l->outputs_known)
		return 0;
	return fail(ex, ST_EXPORT_REFUSED, l,
	            "its shapes are unknown (it follows a placeholder operator), and %s needs them to be exported",
	            l->type->desc->name);
}

/* ---- weights ---- */

static const st_weight_desc *
find_weight(const st_layer *l, const char *name)
{
	for (int w = 0; w < l->n_weights; w++) {
		if (strcmp(l->weights[w].name, name) == 0)
			return &l->weights[w];
	}
	return NULL;
}

/*
 * The float32 values of weight wname of l, into *shape and a buffer the
 * caller frees. Random weights are made exactly as the engine makes them,
 * so that an export runs like strata run. Returns NULL after reporting.
 */
static float *
load_weight(exporter *ex, const st_layer *l, const char *wname, st_shape *shape)
{
	const st_weight_desc *wd = find_weight(l, wname);
	if (wd == NULL) {
		fail(ex, ST_EXPORT_REFUSED, l, "the type check declared no '%s' weights", wname);
		return NULL;
	}
	*shape = wd->shape;
	shape->dtype = ST_DTYPE_FLOAT32;
	int64_t n = st_shape_elements(shape);
	if (ex->opt->random_weights) {
		float *data = st_xmalloc(sizeof *data * (size_t)(n ? n : 1));
		int64_t fan_in = shape->rank > 1 ? n / (shape->dims[0] ? shape->dims[0] : 1) : 0;
		st_weights_random(data, n, fan_in, st_weights_random_seed(l->name, wname, ex->opt->seed));
		if (strcmp(wname, "variance") == 0 || strcmp(wname, "scale") == 0) {
			for (int64_t i = 0; i < n; i++)
				data[i] = 1.0f + 0.1f * data[i];
		}
		return data;
	}
	if (ex->weights == NULL) {
		fail(ex, ST_EXPORT_UNREADABLE, l,
		     "needs its '%s' weights, but there is no weights folder: give one (--weights DIR, or the "
		     "network's 'weights' setting) or use random weights",
		     wname);
		return NULL;
	}
	st_npy a;
	char err[600];
	if (st_weights_load(ex->weights, l->name, wname, shape, false, &a, err, sizeof err) != 0) {
		fail(ex, ST_EXPORT_UNREADABLE, l, "%s", err);
		return NULL;
	}
	float *data = st_xmalloc(sizeof *data * (size_t)(n ? n : 1));
	memcpy(data, a.data, sizeof *data * (size_t)n);
	st_npy_free(&a);
	return data;
}

/*
 * One float32 weight of l as an initializer of type, optionally given other
 * dims (the same element count). Returns the initializer's name, or NULL
 * after reporting.
 */
static const char *
weight(exporter *ex, const st_layer *l, const char *wname, int32_t type, const int64_t *dims, int rank)
{
	st_shape shape;
	float *data = load_weight(ex, l, wname, &shape);
	if (data == NULL)
		return NULL;
	if (dims == NULL) {
		dims = shape.dims;
		rank = shape.rank;
	}
	char *base = st_xasprintf("%s_%s", l->name, wname);
	const char *name = init_floats(ex, base, type, dims, rank, data, st_shape_elements(&shape));
	free(base);
	free(data);
	return name;
}

/* ---- graph inputs and outputs ---- */

static void
value_info(exporter *ex, st_onnx_value_info *v, const char *name, const st_shape *s)
{
	v->name = (st_onnx_str){ name, strlen(name) };
	v->has_type = true;
	v->type.kind = ST_ONNX_TYPE_TENSOR;
	v->type.has_elem_type = true;
	v->type.elem_type = onnx_type(ex, s->dtype);
	v->type.has_shape = true;
	v->type.dims = alloc(ex, (size_t)s->rank, sizeof *v->type.dims);
	v->type.n_dims = (size_t)s->rank;
	for (int k = 0; k < s->rank; k++) {
		st_onnx_dim *dim = &v->type.dims[k];
		if (ex->opt->no_tensor_sizes) {
			char *p = st_xasprintf("%s_dim%d", name, k);
			dim->param = str(ex, p);
			free(p);
		} else {
			dim->has_value = true;
			dim->value = s->dims[k];
		}
	}
}

/* ---- activations ---- */

static const char *
scalar_for(exporter *ex, const st_layer *l, const char *what, double v)
{
	char *base = st_xasprintf("%s/%s", l->name, what);
	const char *name = init_scalar(ex, base, float_type(ex, l), v);
	free(base);
	return name;
}

static double
coef(const st_layer *l, const char *name)
{
	const st_activation_desc *d = l->act.type->desc;
	int i = st_params_find(d->params, d->n_params, name);
	assert(i >= 0);
	return l->act.coef.values[i].f;
}

static const char *
coef_enum(const st_layer *l, const char *name)
{
	const st_activation_desc *d = l->act.type->desc;
	int i = st_params_find(d->params, d->n_params, name);
	assert(i >= 0);
	return d->params[i].enum_values[l->act.coef.values[i].i];
}

/* A helper node of l, for its activation or an operator written out in
 * smaller ones: op(a, b) -> a fresh tensor, or out when given. */
static const char *
act_node(exporter *ex, const st_layer *l, const char *op, const char *a, const char *b, const char *out)
{
	const char *in[2] = { a, b };
	if (out == NULL)
		out = derived_name(ex, l, op);
	char *node_name = st_xasprintf("%s/%s", l->name, op);
	add_node(ex, op, keep(ex, node_name), in, b ? 2 : 1, &out, 1);
	return out;
}

static int
emit_activation(exporter *ex, const st_layer *l, const char *x, const char *out)
{
	const char *act = l->act.type_name;
	size_t n;
	if (strcmp(act, "relu") == 0 || strcmp(act, "sigmoid") == 0 || strcmp(act, "tanh") == 0 ||
	    strcmp(act, "softplus") == 0) {
		static const char *const ops[][2] = {
			{ "relu", "Relu" }, { "sigmoid", "Sigmoid" }, { "tanh", "Tanh" }, { "softplus", "Softplus" }
		};
		for (size_t k = 0; k < 4; k++) {
			if (strcmp(act, ops[k][0]) == 0)
				act_node(ex, l, ops[k][1], x, NULL, out);
		}
	} else if (strcmp(act, "leaky_relu") == 0 || strcmp(act, "elu") == 0) {
		act_node(ex, l, act[0] == 'l' ? "LeakyRelu" : "Elu", x, NULL, out);
		attr_float(ex, ex->n_nodes - 1, "alpha", coef(l, "alpha"));
	} else if (strcmp(act, "selu") == 0) {
		act_node(ex, l, "Selu", x, NULL, out);
		n = ex->n_nodes - 1;
		attr_float(ex, n, "alpha", coef(l, "alpha"));
		attr_float(ex, n, "gamma", coef(l, "gamma"));
	} else if (strcmp(act, "hard_sigmoid") == 0) {
		act_node(ex, l, "HardSigmoid", x, NULL, out);
		n = ex->n_nodes - 1;
		attr_float(ex, n, "alpha", coef(l, "alpha"));
		attr_float(ex, n, "beta", coef(l, "beta"));
	} else if (strcmp(act, "hard_swish") == 0) {
		if (ex->opset >= 14) {
			act_node(ex, l, "HardSwish", x, NULL, out);
		} else {
			const char *h = act_node(ex, l, "HardSigmoid", x, NULL, NULL);
			n = ex->n_nodes - 1;
			attr_float(ex, n, "alpha", 1.0 / 6);
			attr_float(ex, n, "beta", 0.5);
			act_node(ex, l, "Mul", x, h, out);
		}
	} else if (strcmp(act, "silu") == 0) {
		act_node(ex, l, "Mul", x, act_node(ex, l, "Sigmoid", x, NULL, NULL), out);
	} else if (strcmp(act, "mish") == 0) {
		const char *t = act_node(ex, l, "Tanh", act_node(ex, l, "Softplus", x, NULL, NULL), NULL, NULL);
		act_node(ex, l, "Mul", x, t, out);
	} else if (strcmp(act, "gelu") == 0) {
		bool tanh_form = strcmp(coef_enum(l, "approximate"), "tanh") == 0;
		if (ex->opset >= 20) {
			act_node(ex, l, "Gelu", x, NULL, out);
			attr_string(ex, ex->n_nodes - 1, "approximate", tanh_form ? "tanh" : "none");
		} else if (!tanh_form) {
			/* 0.5 x (1 + erf(x / sqrt 2)) */
			const char *e = act_node(ex, l, "Erf", act_node(ex, l, "Div", x, scalar_for(ex, l, "sqrt2", sqrt(2.0)), NULL),
			                         NULL, NULL);
			const char *u = act_node(ex, l, "Add", e, scalar_for(ex, l, "one", 1.0), NULL);
			const char *v = act_node(ex, l, "Mul", x, u, NULL);
			act_node(ex, l, "Mul", v, scalar_for(ex, l, "half", 0.5), out);
		} else {
			/* 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))) */
			const char *x3 = act_node(ex, l, "Mul", act_node(ex, l, "Mul", x, x, NULL), x, NULL);
			const char *a = act_node(ex, l, "Mul", x3, scalar_for(ex, l, "c", 0.044715), NULL);
			const char *b = act_node(ex, l, "Add", x, a, NULL);
			const char *c = act_node(ex, l, "Mul", b, scalar_for(ex, l, "k", sqrt(2.0 / 3.14159265358979323846)), NULL);
			const char *u = act_node(ex, l, "Add", act_node(ex, l, "Tanh", c, NULL, NULL),
			                         scalar_for(ex, l, "one", 1.0), NULL);
			const char *v = act_node(ex, l, "Mul", x, u, NULL);
			act_node(ex, l, "Mul", v, scalar_for(ex, l, "half", 0.5), out);
		}
	} else if (strcmp(act, "clip") == 0) {
		const char *in[3] = { x, scalar_for(ex, l, "min", coef(l, "min")), scalar_for(ex, l, "max", coef(l, "max")) };
		char *node_name = st_xasprintf("%s/Clip", l->name);
		add_node(ex, "Clip", keep(ex, node_name), in, 3, &out, 1);
	} else if (strcmp(act, "prelu") == 0) {
		/* Learned per-channel slopes beside the weights, else alpha for all. */
		const char *slope = NULL;
		const st_shape *s = l->outputs_known && l->n_outputs > 0 ? &l->outputs[0] : NULL;
		if (!ex->opt->random_weights && ex->weights != NULL && s != NULL && s->rank >= 2) {
			st_shape want = { .dtype = ST_DTYPE_FLOAT32, .rank = 1, .dims = { s->dims[1] } };
			st_npy a;
			char err[600];
			int rc = st_weights_load(ex->weights, l->name, "prelu_slope", &want, true, &a, err, sizeof err);
			if (rc < 0)
				return fail(ex, ST_EXPORT_UNREADABLE, l, "%s", err);
			if (rc == 0) {
				int64_t dims[ST_MAX_RANK] = { s->dims[1] };
				for (int k = 1; k < s->rank - 1; k++)
					dims[k] = 1;
				char *base = st_xasprintf("%s_prelu_slope", l->name);
				slope = init_floats(ex, base, float_type(ex, l), dims, s->rank - 1, a.data, a.count);
				free(base);
				st_npy_free(&a);
			}
		}
		if (slope == NULL)
			slope = scalar_for(ex, l, "slope", coef(l, "alpha"));
		act_node(ex, l, "PRelu", x, slope, out);
	} else {
		return fail(ex, ST_EXPORT_REFUSED, l, "activation '%s' has no ONNX form in this exporter", act);
	}
	return 0;
}

/* ---- the layer types ---- */

/* Where a layer's main operator writes: its first output, or a temporary
 * that the attached activation reads. */
static const char *
main_output(exporter *ex, const st_layer *l)
{
	if (l->act.type_name != NULL)
		return derived_name(ex, l, "pre_activation");
	return ex->ports[l->index][0];
}

static int
finish(exporter *ex, const st_layer *l, const char *main_out)
{
	if (l->act.type_name == NULL)
		return 0;
	return emit_activation(ex, l, main_out, ex->ports[l->index][0]);
}

/* A layer that is one operator over its inputs in order. */
static int
simple(exporter *ex, const st_layer *l, const char *op, size_t *node)
{
	const char *in[64];
	int n = 0;
	for (int i = 0; i < l->n_inputs && n < 64; i++)
		in[n++] = input_name(ex, l, i);
	const char *out = main_output(ex, l);
	*node = node1(ex, op, l, in, n, out);
	return finish(ex, l, out);
}

static int
emit_input(exporter *ex, const st_layer *l)
{
	if (need_shape(ex, l, l->outputs_known ? &l->outputs[0] : NULL) != 0)
		return -1;
	st_onnx_value_info *v = grow((void **)&ex->inputs, &ex->n_inputs, &ex->cap_inputs, sizeof *v);
	value_info(ex, v, ex->ports[l->index][0], &l->outputs[0]);
	return 0;
}

static int
emit_output(exporter *ex, const st_layer *l)
{
	const st_shape *s = input_shape(l, 0);
	const char *x = input_name(ex, l, 0);
	if (x == NULL)
		return fail(ex, ST_EXPORT_REFUSED, l, "its input is not connected");
	node1(ex, "Identity", l, &x, 1, ex->ports[l->index][0]);
	st_onnx_value_info *v = grow((void **)&ex->outputs, &ex->n_outputs, &ex->cap_outputs, sizeof *v);
	if (s != NULL) {
		value_info(ex, v, ex->ports[l->index][0], s);
	} else {
		/* After a placeholder only the name is known. */
		const char *name = ex->ports[l->index][0];
		v->name = (st_onnx_str){ name, strlen(name) };
	}
	return 0;
}

static int
emit_identity(exporter *ex, const st_layer *l)
{
	size_t n;
	return simple(ex, l, "Identity", &n);
}

/* Dropout keeps its ratio (as an input, opset 12 on), so that an import
 * brings the layer back; at inference it passes its input on. */
static int
emit_dropout(exporter *ex, const st_layer *l)
{
	char *base = st_xasprintf("%s/ratio", l->name);
	const char *in[2] = { input_name(ex, l, 0), init_scalar(ex, base, ST_ONNX_FLOAT, param(l, "ratio")->f) };
	free(base);
	const char *out = main_output(ex, l);
	node1(ex, "Dropout", l, in, 2, out);
	return finish(ex, l, out);
}

static int
emit_constant(exporter *ex, const st_layer *l)
{
	if (need_shape(ex, l, l->outputs_known ? &l->outputs[0] : NULL) != 0)
		return -1;
	const st_shape *s = &l->outputs[0];
	int32_t type = onnx_type(ex, s->dtype);
	int64_t n = st_shape_elements(s);
	const char *name = ex->ports[l->index][0];
	const char *made = NULL;
	double value = param(l, "value")->f;
	bool is_float = s->dtype == ST_DTYPE_FLOAT32 || s->dtype == ST_DTYPE_FLOAT16;
	st_npy a;
	int rc = 1;
	memset(&a, 0, sizeof a);
	if (ex->opt->random_weights && is_float) {
		float *data = st_xmalloc(sizeof *data * (size_t)(n ? n : 1));
		int64_t fan_in = s->rank > 1 ? n / (s->dims[0] ? s->dims[0] : 1) : 0;
		st_weights_random(data, n, fan_in, st_weights_random_seed(l->name, "values", ex->opt->seed));
		made = init_floats(ex, name, type, s->dims, s->rank, data, n);
		free(data);
	} else {
		if (!ex->opt->random_weights && ex->weights != NULL) {
			char err[600];
			st_shape want = *s;
			rc = st_weights_load(ex->weights, l->name, "values", &want, true, &a, err, sizeof err);
			if (rc < 0)
				return fail(ex, ST_EXPORT_UNREADABLE, l, "%s", err);
		}
		if (is_float) {
			float *data = st_xmalloc(sizeof *data * (size_t)(n ? n : 1));
			for (int64_t i = 0; i < n; i++) {
				if (rc != 0)
					data[i] = (float)value;
				else if (s->dtype == ST_DTYPE_FLOAT16)
					data[i] = st_half_to_float(((const uint16_t *)a.data)[i]);
				else
					data[i] = ((const float *)a.data)[i];
			}
			made = init_floats(ex, name, type, s->dims, s->rank, data, n);
			free(data);
		} else {
			int size = st_dtype_size(s->dtype);
			uint8_t *raw = alloc(ex, (size_t)(n * size), 1);
			for (int64_t i = 0; i < n; i++) {
				int64_t v = (int64_t)value;
				if (rc == 0) {
					const void *p = (const uint8_t *)a.data + i * size;
					switch (s->dtype) {
					case ST_DTYPE_INT64: v = *(const int64_t *)p; break;
					case ST_DTYPE_INT32: v = *(const int32_t *)p; break;
					case ST_DTYPE_INT8: v = *(const int8_t *)p; break;
					default: v = *(const uint8_t *)p; break;
					}
				}
				for (int b = 0; b < size; b++)
					raw[i * size + b] = (uint8_t)((uint64_t)v >> (8 * b));
			}
			made = add_init(ex, name, type, s->dims, s->rank, raw, (size_t)(n * size));
		}
	}
	st_npy_free(&a);
	/* The layer's own name was reserved for this tensor. */
	assert(made != NULL);
	(void)made;
	ex->inits[ex->n_inits - 1].name = (st_onnx_str){ name, strlen(name) };
	return 0;
}

/* Explicit pads (all begins, then all ends) from a pads parameter of 1, n or 2n values. */
static void
expand_pads(const st_value *v, int n, int64_t *pads)
{
	for (int i = 0; i < n; i++) {
		if (v->count == 2 * n) {
			pads[i] = v->ints[i];
			pads[n + i] = v->ints[n + i];
		} else {
			pads[i] = pads[n + i] = v->ints[v->count == 1 ? 0 : i];
		}
	}
}

static void
per_axis(const st_value *v, int n, int64_t *out)
{
	for (int i = 0; i < n; i++)
		out[i] = v->ints[v->count == 1 ? 0 : i];
}

/* Kernel, strides, dilations and pads of a window layer as ONNX wants them;
 * the same modes become the explicit pads Strata computes. */
static int
window_attributes(exporter *ex, const st_layer *l, size_t node, bool transposed, bool dilations)
{
	const st_shape *in = input_shape(l, 0);
	if (need_shape(ex, l, in) != 0)
		return -1;
	int n = in->rank - 2;
	int64_t kernel[MAX_SPATIAL], stride[MAX_SPATIAL], dilation[MAX_SPATIAL], pads[2 * MAX_SPATIAL];
	int64_t output_padding[MAX_SPATIAL] = { 0 };
	per_axis(param(l, "kernel"), n, kernel);
	per_axis(param(l, "stride"), n, stride);
	per_axis(param(l, "dilation"), n, dilation);
	if (transposed)
		per_axis(param(l, "output_padding"), n, output_padding);
	const char *padding = param_enum(l, "padding");
	bool same = strncmp(padding, "same", 4) == 0, lower = strcmp(padding, "same_lower") == 0;
	if (strcmp(padding, "explicit") == 0)
		expand_pads(param(l, "pads"), n, pads);
	for (int i = 0; i < n; i++) {
		int64_t size = in->dims[2 + i], extent = (kernel[i] - 1) * dilation[i] + 1, total = 0;
		if (strcmp(padding, "valid") == 0) {
			pads[i] = pads[n + i] = 0;
			continue;
		}
		if (!same)
			continue;
		if (transposed) {
			total = stride[i] * (size - 1) + output_padding[i] + extent - size * stride[i];
		} else {
			int64_t out = size / stride[i] + (size % stride[i] != 0);
			total = (out - 1) * stride[i] + extent - size;
			if (total < 0)
				total = 0;
		}
		int64_t smaller = total / 2, larger = total - smaller;
		pads[i] = lower ? larger : smaller;
		pads[n + i] = lower ? smaller : larger;
	}
	attr_ints(ex, node, "kernel_shape", kernel, n);
	attr_ints(ex, node, "strides", stride, n);
	if (dilations)
		attr_ints(ex, node, "dilations", dilation, n);
	attr_ints(ex, node, "pads", pads, 2 * n);
	if (transposed)
		attr_ints(ex, node, "output_padding", output_padding, n);
	return 0;
}

/* The Conv or ConvTranspose node of a (de)convolution layer with weights
 * w; its index goes to *node. The caller finishes the layer. */
static int
conv_node(exporter *ex, const st_layer *l, const char *op, const char *w, size_t *node)
{
	const char *in[3] = { input_name(ex, l, 0), w, NULL };
	bool bias = param(l, "bias")->b;
	if (bias && (in[2] = weight(ex, l, "bias", float_type(ex, l), NULL, 0)) == NULL)
		return -1;
	const char *out = main_output(ex, l);
	size_t n = node1(ex, op, l, in, bias ? 3 : 2, out);
	attr_int(ex, n, "group", param(l, "groups")->i);
	*node = n;
	return window_attributes(ex, l, n, op[4] == 'T', true);
}

static int
emit_conv(exporter *ex, const st_layer *l, const char *op)
{
	if (need_shape(ex, l, input_shape(l, 0)) != 0)
		return -1;
	const char *w = weight(ex, l, "weights", float_type(ex, l), NULL, 0);
	size_t n;
	if (w == NULL || conv_node(ex, l, op, w, &n) != 0)
		return -1;
	return finish(ex, l, ex->nodes[n].outputs[0].data);
}

static int
emit_convolution(exporter *ex, const st_layer *l)
{
	return emit_conv(ex, l, "Conv");
}

static int
emit_deconvolution(exporter *ex, const st_layer *l)
{
	return emit_conv(ex, l, "ConvTranspose");
}

/* ---- XWN layers ----
 *
 * The graph computes with the weights the layer computes with: the XWN
 * transform and pruning are applied here (k_xwn_apply, as the plugin does at
 * bind time) and the results written as the initializers. A metadata_props
 * entry "strata.xwn.<layer>" (docs/onnx.md, "XWN layers") names the Strata
 * type, its settings and its nodes, so that an import restores the layer;
 * with --xwn-source-weights the full-precision weights go along as unused
 * initializers "<layer>_<weight>.xwn_source". */

static k_xwn_settings
xwn_settings(const st_layer *l)
{
	return (k_xwn_settings){
		.transform = param(l, "use_transform")->b,
		.bit = (int)param(l, "bit")->i,
		.max_scale = (float)param(l, "max_scale")->f,
		.pruning = param(l, "use_pruning")->b,
		.prun_weight = (float)param(l, "prun_weight")->f,
	};
}

/*
 * Weight wname of an XWN layer as an initializer holding the transformed
 * (and pruned) values. transposed: the weights are I x O/g x taps (a
 * transposed convolution's). With --xwn-source-weights, and when the
 * settings change anything, the full-precision values become a FLOAT
 * initializer too, its name added to source under the key wname. Returns
 * the initializer's name, or NULL after reporting.
 */
static const char *
xwn_weight(exporter *ex, const st_layer *l, const char *wname, bool transposed, cJSON *source)
{
	st_shape shape;
	float *w = load_weight(ex, l, wname, &shape);
	if (w == NULL)
		return NULL;
	if (shape.rank < 3) {
		free(w);
		fail(ex, ST_EXPORT_REFUSED, l, "its '%s' weights have rank %d; the XWN transform needs 3 or more", wname,
		     shape.rank);
		return NULL;
	}
	int64_t n = st_shape_elements(&shape), taps = 1;
	for (int k = 2; k < shape.rank; k++)
		taps *= shape.dims[k];
	k_xwn_settings set = xwn_settings(l);
	float *t = st_xmalloc(sizeof *t * (size_t)(n ? n : 1));
	if (k_xwn_apply(w, t, shape.dims[0], shape.dims[1], taps, transposed, &set, NULL) != 0) {
		free(w);
		free(t);
		fail(ex, ST_EXPORT_REFUSED, l, "the XWN transform of its '%s' weights failed (bit %d above %d, or out of "
		     "memory)", wname, set.bit, K_XWN_MAX_BIT);
		return NULL;
	}
	char *base = st_xasprintf("%s_%s", l->name, wname);
	const char *name = init_floats(ex, base, float_type(ex, l), shape.dims, shape.rank, t, n);
	free(base);
	if (ex->opt->xwn_source_weights && k_xwn_active(&set)) {
		/* Always float32, also under --fp16: the round trip is exact. */
		base = st_xasprintf("%s_%s.xwn_source", l->name, wname);
		const char *kept = init_floats(ex, base, ST_ONNX_FLOAT, shape.dims, shape.rank, w, n);
		cJSON_AddStringToObject(source, wname, kept);
		free(base);
	}
	free(w);
	free(t);
	return name;
}

/* The named parameters of l as a JSON object, in their canonical form. */
static cJSON *
params_json(const st_layer *l, const char *const *names)
{
	const st_layer_desc *d = l->type->desc;
	cJSON *o = cJSON_CreateObject();
	for (int k = 0; names[k] != NULL; k++) {
		int i = st_params_find(d->params, d->n_params, names[k]);
		assert(i >= 0);
		st_buf b;
		st_buf_init(&b);
		st_value_to_json(&d->params[i], &l->params.values[i], &b);
		cJSON *v = cJSON_ParseWithLength(b.data ? b.data : "", b.len);
		st_buf_free(&b);
		assert(v != NULL);
		cJSON_AddItemToObject(o, names[k], v);
	}
	return o;
}

static const char *const xwn_set_names[] = { "use_transform", "bit", "max_scale", "use_pruning", "prun_weight",
	                                     NULL };

/* The metadata entry of an XWN layer: its fields and nodes are in info,
 * which this function takes over and completes. */
static void
xwn_metadata(exporter *ex, const st_layer *l, cJSON *info, cJSON *source)
{
	cJSON *v = cJSON_CreateObject();
	cJSON_AddNumberToObject(v, "version", 1);
	cJSON_AddStringToObject(v, "type", l->type->desc->name);
	cJSON *item = info->child;
	while (item != NULL) {
		cJSON *next = item->next;
		cJSON_AddItemToObject(v, item->string, cJSON_DetachItemViaPointer(info, item));
		item = next;
	}
	cJSON_Delete(info);
	cJSON_AddItemToObject(v, "xwn", params_json(l, xwn_set_names));
	if (source->child != NULL)
		cJSON_AddItemToObject(v, "source", source);
	else
		cJSON_Delete(source);
	char *printed = cJSON_PrintUnformatted(v);
	cJSON_Delete(v);
	st_onnx_entry *e = grow((void **)&ex->metadata, &ex->n_metadata, &ex->cap_metadata, sizeof *e);
	char *key = st_xasprintf("strata.xwn.%s", l->name);
	e->key = (st_onnx_str){ keep(ex, key), strlen(key) };
	e->value = str(ex, printed);
	cJSON_free(printed);
}

/* xwn_convolution and xwn_deconvolution: Conv and ConvTranspose. */
static int
emit_xwn_conv(exporter *ex, const st_layer *l, const char *op)
{
	if (need_shape(ex, l, input_shape(l, 0)) != 0)
		return -1;
	cJSON *source = cJSON_CreateObject();
	const char *w = xwn_weight(ex, l, "weights", op[4] == 'T', source);
	size_t n;
	if (w == NULL || conv_node(ex, l, op, w, &n) != 0) {
		cJSON_Delete(source);
		return -1;
	}
	cJSON *info = cJSON_CreateObject();
	st_onnx_str name = ex->nodes[n].name;
	cJSON_AddStringToObject(info, "node", name.data);
	xwn_metadata(ex, l, info, source);
	return finish(ex, l, ex->nodes[n].outputs[0].data);
}

static int
emit_xwn_convolution(exporter *ex, const st_layer *l)
{
	return emit_xwn_conv(ex, l, "Conv");
}

static int
emit_xwn_deconvolution(exporter *ex, const st_layer *l)
{
	return emit_xwn_conv(ex, l, "ConvTranspose");
}

/* A Conv node of a written-out layer: named name, reading x and weights
 * w (and bias b, or NULL) into out, with explicit window attributes. */
static size_t
part_conv(exporter *ex, const char *name, const char *x, const char *w, const char *b, const char *out, int spatial,
          const int64_t *kernel, const int64_t *stride, const int64_t *pads)
{
	const char *in[3] = { x, w, b };
	size_t n = add_node(ex, "Conv", name, in, b ? 3 : 2, &out, 1);
	int64_t ones[MAX_SPATIAL] = { 1, 1, 1 };
	attr_int(ex, n, "group", 1);
	attr_ints(ex, n, "kernel_shape", kernel, spatial);
	attr_ints(ex, n, "strides", stride, spatial);
	attr_ints(ex, n, "dilations", ones, spatial);
	attr_ints(ex, n, "pads", pads, 2 * spatial);
	return n;
}

/*
 * xwn_cascade_convolution as its parts: kernel_size / 2 chained 3-tap Conv
 * nodes "<layer>_stage<j>" (stride 1, pads 1, no bias), a Concat
 * "<layer>_concat" of all their outputs along channels, and the pointwise
 * Conv "<layer>_pointwise" with the layer's stride, pads and bias. The
 * initializers are named after the layer's weights, which are also the
 * files of the expanded parts: <layer>_stage0_weights, ...
 */
static int
emit_xwn_cascade(exporter *ex, const st_layer *l)
{
	const st_shape *in = input_shape(l, 0);
	if (need_shape(ex, l, in) != 0)
		return -1;
	int spatial = in->rank - 2;
	if (spatial < 1 || spatial > MAX_SPATIAL)
		return fail(ex, ST_EXPORT_REFUSED, l, "a cascade of %d spatial axes cannot be exported", spatial);
	int stages = (int)(param(l, "kernel_size")->i / 2);
	bool bias = param(l, "bias")->b;
	int32_t type = float_type(ex, l);
	int64_t three[MAX_SPATIAL] = { 3, 3, 3 }, one[MAX_SPATIAL] = { 1, 1, 1 };
	int64_t same_pads[2 * MAX_SPATIAL] = { 1, 1, 1, 1, 1, 1 };
	cJSON *source = cJSON_CreateObject(), *info = cJSON_CreateObject();
	cJSON *stage_nodes = cJSON_AddArrayToObject(info, "stages");
	const char **outs = alloc(ex, (size_t)stages, sizeof *outs);
	const char *x = input_name(ex, l, 0);
	int rc = 0;
	for (int j = 0; j < stages && rc == 0; j++) {
		char wname[32];
		snprintf(wname, sizeof wname, "stage%d_weights", j);
		const char *w = xwn_weight(ex, l, wname, false, source);
		if (w == NULL) {
			rc = -1;
			break;
		}
		char *part = st_xasprintf("%s_stage%d", l->name, j);
		outs[j] = fresh_name(ex, part);
		size_t n = part_conv(ex, keep(ex, part), j == 0 ? x : outs[j - 1], w, NULL, outs[j], spatial, three, one,
		                     same_pads);
		cJSON_AddItemToArray(stage_nodes, cJSON_CreateString(ex->nodes[n].name.data));
	}
	const char *w = rc == 0 ? xwn_weight(ex, l, "pointwise_weights", false, source) : NULL;
	const char *b = w != NULL && bias ? weight(ex, l, "pointwise_bias", type, NULL, 0) : NULL;
	if (w == NULL || (bias && b == NULL)) {
		cJSON_Delete(source);
		cJSON_Delete(info);
		return -1;
	}
	char *part = st_xasprintf("%s_concat", l->name);
	const char *cat = fresh_name(ex, part);
	size_t n = add_node(ex, "Concat", keep(ex, part), outs, stages, &cat, 1);
	attr_int(ex, n, "axis", 1);
	cJSON_AddStringToObject(info, "concat", ex->nodes[n].name.data);
	int64_t stride[MAX_SPATIAL], pads[2 * MAX_SPATIAL];
	per_axis(param(l, "stride"), spatial, stride);
	expand_pads(param(l, "pads"), spatial, pads);
	const char *out = main_output(ex, l);
	part = st_xasprintf("%s_pointwise", l->name);
	n = part_conv(ex, keep(ex, part), cat, w, b, out, spatial, one, stride, pads);
	cJSON_AddStringToObject(info, "pointwise", ex->nodes[n].name.data);
	static const char *const cascade_names[] = { "num_output", "kernel_size", "stride", "pads", "mid_channels",
		                                     "channel_ratio", "bias", NULL };
	cJSON_AddItemToObject(info, "params", params_json(l, cascade_names));
	xwn_metadata(ex, l, info, source);
	return finish(ex, l, out);
}

static int
emit_pooling(exporter *ex, const st_layer *l)
{
	bool max = strcmp(param_enum(l, "mode"), "max") == 0;
	const st_value *dil = param(l, "dilation");
	bool dilated = false;
	for (int i = 0; i < dil->count; i++)
		dilated |= dil->ints[i] != 1;
	if (!max && dilated && ex->opset < 19)
		return fail(ex, ST_EXPORT_REFUSED, l,
		            "AveragePool takes dilations from opset 19 only; export with --opset 19 or more");
	size_t n;
	const char *x = input_name(ex, l, 0);
	const char *out = main_output(ex, l);
	n = node1(ex, max ? "MaxPool" : "AveragePool", l, &x, 1, out);
	if (window_attributes(ex, l, n, false, max || dilated) != 0)
		return -1;
	attr_int(ex, n, "ceil_mode", param(l, "ceil_mode")->b);
	if (!max)
		attr_int(ex, n, "count_include_pad", param(l, "count_include_pad")->b);
	return finish(ex, l, out);
}

static int
emit_global_pooling(exporter *ex, const st_layer *l)
{
	size_t n;
	return simple(ex, l, strcmp(param_enum(l, "mode"), "max") == 0 ? "GlobalMaxPool" : "GlobalAveragePool",
	              &n);
}

static int
emit_normalization(exporter *ex, const st_layer *l, bool batch)
{
	if (need_shape(ex, l, input_shape(l, 0)) != 0)
		return -1;
	int32_t type = float_type(ex, l);
	static const char *const names[] = { "scale", "bias", "mean", "variance" };
	const char *in[5] = { input_name(ex, l, 0) };
	int count = batch ? 4 : 2;
	for (int i = 0; i < count; i++) {
		if ((in[1 + i] = weight(ex, l, names[i], type, NULL, 0)) == NULL)
			return -1;
	}
	const char *out = main_output(ex, l);
	size_t n = node1(ex, batch ? "BatchNormalization" : "InstanceNormalization", l, in, 1 + count, out);
	attr_float(ex, n, "epsilon", param(l, "epsilon")->f);
	return finish(ex, l, out);
}

static int
emit_batch_normalization(exporter *ex, const st_layer *l)
{
	return emit_normalization(ex, l, true);
}

static int
emit_instance_normalization(exporter *ex, const st_layer *l)
{
	return emit_normalization(ex, l, false);
}

/*
 * LayerNormalization from opset 17. Before, its definition is written out:
 * mean = ReduceMean(x), d = x - mean, variance = ReduceMean(d * d),
 * y = d / Sqrt(variance + epsilon) * scale + bias, the reductions over the
 * normalised axes (an attribute of ReduceMean until opset 18).
 */
static int
emit_layer_normalization(exporter *ex, const st_layer *l)
{
	const st_shape *s = input_shape(l, 0);
	if (need_shape(ex, l, s) != 0)
		return -1;
	int32_t type = float_type(ex, l);
	bool has_bias = param(l, "bias")->b;
	int64_t axis = param(l, "axis")->i;
	double epsilon = param(l, "epsilon")->f;
	const char *x = input_name(ex, l, 0);
	const char *scale = weight(ex, l, "scale", type, NULL, 0);
	const char *bias = has_bias && scale != NULL ? weight(ex, l, "bias", type, NULL, 0) : NULL;
	if (scale == NULL || (has_bias && bias == NULL))
		return -1;
	const char *out = main_output(ex, l);
	if (ex->opset >= 17) {
		const char *in[3] = { x, scale, bias };
		size_t n = node1(ex, "LayerNormalization", l, in, has_bias ? 3 : 2, out);
		attr_int(ex, n, "axis", axis);
		attr_float(ex, n, "epsilon", epsilon);
		return finish(ex, l, out);
	}
	assert(ex->opset < 18);
	int64_t axes[ST_MAX_RANK];
	int n_axes = 0;
	/* Counted from the end (-2, -1), as PyTorch writes them: the importer
	 * knows the pattern by that, whatever the rank. */
	for (int64_t k = axis < 0 ? axis + s->rank : axis; k < s->rank; k++)
		axes[n_axes++] = k - s->rank;
	const char *mean = act_node(ex, l, "ReduceMean", x, NULL, NULL);
	attr_ints(ex, ex->n_nodes - 1, "axes", axes, n_axes);
	const char *d = act_node(ex, l, "Sub", x, mean, NULL);
	const char *variance = act_node(ex, l, "ReduceMean", act_node(ex, l, "Mul", d, d, NULL), NULL, NULL);
	attr_ints(ex, ex->n_nodes - 1, "axes", axes, n_axes);
	const char *shifted = act_node(ex, l, "Add", variance, scalar_for(ex, l, "epsilon", epsilon), NULL);
	const char *deviation = act_node(ex, l, "Sqrt", shifted, NULL, NULL);
	const char *normalised = act_node(ex, l, "Div", d, deviation, NULL);
	if (has_bias)
		act_node(ex, l, "Add", act_node(ex, l, "Mul", normalised, scale, NULL), bias, out);
	else
		act_node(ex, l, "Mul", normalised, scale, out);
	return finish(ex, l, out);
}

static int
emit_fully_connected(exporter *ex, const st_layer *l)
{
	if (need_shape(ex, l, input_shape(l, 0)) != 0)
		return -1;
	int32_t type = float_type(ex, l);
	bool bias = param(l, "bias")->b;
	const char *in[3] = { NULL, weight(ex, l, "weights", type, NULL, 0), NULL };
	if (bias)
		in[2] = weight(ex, l, "bias", type, NULL, 0);
	if (in[1] == NULL || (bias && in[2] == NULL))
		return -1;
	const char *x = input_name(ex, l, 0);
	in[0] = derived_name(ex, l, "flat");
	char *flat_node = st_xasprintf("%s/Flatten", l->name);
	size_t n = add_node(ex, "Flatten", keep(ex, flat_node), &x, 1, &in[0], 1);
	attr_int(ex, n, "axis", 1);
	const char *out = main_output(ex, l);
	n = node1(ex, "Gemm", l, in, bias ? 3 : 2, out);
	attr_int(ex, n, "transB", 1);
	return finish(ex, l, out);
}

static int
emit_matrix_multiply(exporter *ex, const st_layer *l)
{
	size_t n;
	return simple(ex, l, "MatMul", &n);
}

static int
emit_elementwise(exporter *ex, const st_layer *l)
{
	static const char *const ops[][2] = { { "add", "Add" }, { "sub", "Sub" }, { "mul", "Mul" },
		                              { "div", "Div" }, { "max", "Max" }, { "min", "Min" } };
	const char *operation = param_enum(l, "operation"), *op = NULL;
	for (size_t k = 0; k < 6; k++) {
		if (strcmp(operation, ops[k][0]) == 0)
			op = ops[k][1];
	}
	if (op == NULL)
		return fail(ex, ST_EXPORT_REFUSED, l, "operation '%s' has no ONNX operator", operation);
	int count = l->n_inputs;
	const char **in = st_xcalloc((size_t)(count ? count : 1), sizeof *in);
	bool channel = strcmp(param_enum(l, "broadcast"), "channel") == 0;
	const st_shape *x = input_shape(l, 0);
	for (int i = 0; i < count; i++) {
		in[i] = input_name(ex, l, i);
		const st_shape *s = input_shape(l, i);
		if (!channel || i == 0 || in[i] == NULL)
			continue;
		if (x == NULL || s == NULL) {
			free(in);
			return need_shape(ex, l, NULL);
		}
		if (s->rank == x->rank)
			continue;
		/* A [C] or [N, C] vector becomes [1 or N, C, 1, ...] to broadcast over the image. */
		int64_t shape[ST_MAX_RANK];
		shape[0] = s->rank == 1 ? 1 : s->dims[0];
		shape[1] = x->dims[1];
		for (int k = 2; k < x->rank; k++)
			shape[k] = 1;
		char *base = st_xasprintf("%s/shape%d", l->name, i);
		const char *reshape_in[2] = { in[i], init_ints(ex, base, shape, x->rank) };
		free(base);
		const char *reshaped = derived_name(ex, l, "channel_vector");
		char *node_name = st_xasprintf("%s/Reshape%d", l->name, i);
		add_node(ex, "Reshape", keep(ex, node_name), reshape_in, 2, &reshaped, 1);
		in[i] = reshaped;
	}
	const char *out = main_output(ex, l);
	if (count == 1) {
		node1(ex, "Identity", l, in, 1, out);
	} else if (op[0] == 'M' && op[1] != 'u') {
		node1(ex, op, l, in, count, out);
	} else {
		/* Binary operators fold from the first input to the last. */
		const char *acc = in[0];
		for (int i = 1; i < count; i++) {
			const char *pair[2] = { acc, in[i] };
			const char *to = i == count - 1 ? out : derived_name(ex, l, "partial");
			if (i == count - 1) {
				node1(ex, op, l, pair, 2, to);
			} else {
				char *node_name = st_xasprintf("%s/%s%d", l->name, op, i);
				add_node(ex, op, keep(ex, node_name), pair, 2, &to, 1);
			}
			acc = to;
		}
	}
	free(in);
	return finish(ex, l, out);
}

static int
emit_linear_blend(exporter *ex, const st_layer *l)
{
	double alpha = param(l, "alpha")->f;
	const char *a = act_node(ex, l, "Mul", input_name(ex, l, 0), scalar_for(ex, l, "alpha", alpha), NULL);
	const char *b = act_node(ex, l, "Mul", input_name(ex, l, 1), scalar_for(ex, l, "one_minus_alpha", 1.0 - alpha),
	                         NULL);
	const char *in[2] = { a, b };
	const char *out = main_output(ex, l);
	node1(ex, "Add", l, in, 2, out);
	return finish(ex, l, out);
}

/* One operator with the layer's axis as its axis attribute. */
static int
with_axis(exporter *ex, const st_layer *l, const char *op)
{
	size_t n;
	int rc = simple(ex, l, op, &n);
	attr_int(ex, n, "axis", param(l, "axis")->i);
	return rc;
}

static int
emit_softmax(exporter *ex, const st_layer *l)
{
	return with_axis(ex, l, "Softmax");
}

static int
emit_concatenation(exporter *ex, const st_layer *l)
{
	return with_axis(ex, l, "Concat");
}

static int
emit_split(exporter *ex, const st_layer *l)
{
	const st_shape *in = input_shape(l, 0);
	if (need_shape(ex, l, in) != 0)
		return -1;
	int64_t axis = param(l, "axis")->i;
	if (axis < 0)
		axis += in->rank;
	/* The sizes the check gave each output, whichever parameter set them. */
	int64_t sizes[ST_MAX_OUTPUTS];
	for (int k = 0; k < l->n_outputs; k++)
		sizes[k] = l->outputs[k].dims[axis];
	char *base = st_xasprintf("%s/split", l->name);
	const char *inputs[2] = { input_name(ex, l, 0), init_ints(ex, base, sizes, l->n_outputs) };
	free(base);
	size_t n = add_node(ex, "Split", text(ex, l->name), inputs, 2, ex->ports[l->index], l->n_outputs);
	attr_int(ex, n, "axis", axis);
	return 0;
}

static int
emit_pad(exporter *ex, const st_layer *l)
{
	const st_shape *in = input_shape(l, 0);
	if (need_shape(ex, l, in) != 0)
		return -1;
	const st_value *v = param(l, "pads");
	int rank = in->rank;
	int64_t pads[2 * ST_MAX_RANK] = { 0 };
	if (v->count == 2 * rank) {
		memcpy(pads, v->ints, sizeof *pads * (size_t)(2 * rank));
	} else if (rank >= 3 && v->count == 2 * (rank - 2)) {
		for (int k = 2; k < rank; k++) {
			pads[k] = v->ints[k - 2];
			pads[rank + k] = v->ints[rank - 2 + k - 2];
		}
	} else {
		for (int k = 2; k < rank; k++)
			pads[k] = pads[rank + k] = v->ints[0];
	}
	const char *mode = param_enum(l, "mode");
	char *base = st_xasprintf("%s/pads", l->name);
	const char *inputs[3] = { input_name(ex, l, 0), init_ints(ex, base, pads, 2 * rank), NULL };
	free(base);
	int n_in = 2;
	if (strcmp(mode, "constant") == 0) {
		int32_t type = onnx_type(ex, in->dtype);
		double value = param(l, "value")->f;
		if (type == ST_ONNX_FLOAT || type == ST_ONNX_FLOAT16) {
			inputs[n_in++] = scalar_for(ex, l, "value", value);
		} else {
			int size = st_dtype_size(in->dtype);
			uint8_t *raw = alloc(ex, (size_t)size, 1);
			for (int b = 0; b < size; b++)
				raw[b] = (uint8_t)((uint64_t)(int64_t)value >> (8 * b));
			char *vb = st_xasprintf("%s/value", l->name);
			inputs[n_in++] = add_init(ex, vb, type, NULL, 0, raw, (size_t)size);
			free(vb);
		}
	}
	const char *out = main_output(ex, l);
	size_t n = node1(ex, "Pad", l, inputs, n_in, out);
	attr_string(ex, n, "mode", mode);
	return finish(ex, l, out);
}

static int
emit_slice(exporter *ex, const st_layer *l)
{
	const st_value *starts = param(l, "starts"), *ends = param(l, "ends");
	const st_value *axes = param(l, "axes"), *steps = param(l, "steps");
	int n = starts->count;
	int64_t default_axes[ST_MAX_RANK], default_steps[ST_MAX_RANK];
	for (int i = 0; i < n && i < ST_MAX_RANK; i++) {
		default_axes[i] = i;
		default_steps[i] = 1;
	}
	static const char *const what[] = { "starts", "ends", "axes", "steps" };
	const int64_t *lists[4] = { starts->ints, ends->ints, axes->count ? axes->ints : default_axes,
		                    steps->count ? steps->ints : default_steps };
	const char *in[5] = { input_name(ex, l, 0) };
	for (int k = 0; k < 4; k++) {
		char *base = st_xasprintf("%s/%s", l->name, what[k]);
		in[1 + k] = init_ints(ex, base, lists[k], n);
		free(base);
	}
	const char *out = main_output(ex, l);
	node1(ex, "Slice", l, in, 5, out);
	return finish(ex, l, out);
}

static int
emit_reshape(exporter *ex, const st_layer *l)
{
	const st_value *shape = param(l, "shape");
	bool allowzero = param(l, "allowzero")->b;
	const int64_t *dims = shape->ints;
	int rank = shape->count;
	if (allowzero && ex->opset < 14) {
		/* Without the attribute a 0 copies the input's size: write the sizes the check found. */
		if (need_shape(ex, l, input_shape(l, 0)) != 0)
			return -1;
		dims = l->outputs[0].dims;
		rank = l->outputs[0].rank;
	}
	char *base = st_xasprintf("%s/shape", l->name);
	const char *in[2] = { input_name(ex, l, 0), init_ints(ex, base, dims, rank) };
	free(base);
	const char *out = main_output(ex, l);
	size_t n = node1(ex, "Reshape", l, in, 2, out);
	if (ex->opset >= 14)
		attr_int(ex, n, "allowzero", allowzero);
	return finish(ex, l, out);
}

static int
emit_flatten(exporter *ex, const st_layer *l)
{
	return with_axis(ex, l, "Flatten");
}

static int
emit_transpose(exporter *ex, const st_layer *l)
{
	size_t n;
	int rc = simple(ex, l, "Transpose", &n);
	const st_value *perm = param(l, "perm");
	if (perm->count > 0)
		attr_ints(ex, n, "perm", perm->ints, perm->count);
	return rc;
}

static int
emit_space_to_depth(exporter *ex, const st_layer *l)
{
	size_t n;
	int rc = simple(ex, l, "SpaceToDepth", &n);
	attr_int(ex, n, "blocksize", param(l, "block_size")->i);
	return rc;
}

static int
emit_depth_to_space(exporter *ex, const st_layer *l)
{
	size_t n;
	int rc = simple(ex, l, "DepthToSpace", &n);
	attr_int(ex, n, "blocksize", param(l, "block_size")->i);
	attr_string(ex, n, "mode", param_enum(l, "mode"));
	return rc;
}

static int
emit_resize(exporter *ex, const st_layer *l)
{
	const st_shape *in = input_shape(l, 0);
	if (need_shape(ex, l, in) != 0)
		return -1;
	const char *coordinates = param_enum(l, "coordinate_transformation_mode");
	if (strcmp(coordinates, "half_pixel_symmetric") == 0 && ex->opset < 19)
		return fail(ex, ST_EXPORT_REFUSED, l,
		            "coordinate_transformation_mode half_pixel_symmetric needs opset 19 or more (--opset 19)");
	const st_value *scales = param(l, "scales"), *sizes = param(l, "sizes");
	bool by_size = sizes->count > 0;
	int count = by_size ? sizes->count : scales->count, rank = in->rank;
	int first = rank >= 3 && (count == 1 || count == rank - 2) ? 2 : 0;
	const char *inputs[4] = { input_name(ex, l, 0), NULL, NULL, NULL };
	char *base = st_xasprintf("%s/%s", l->name, by_size ? "sizes" : "scales");
	if (by_size) {
		int64_t full[ST_MAX_RANK];
		for (int k = 0; k < rank; k++)
			full[k] = k < first ? in->dims[k] : sizes->ints[count == 1 ? 0 : k - first];
		inputs[3] = init_ints(ex, base, full, rank);
	} else {
		float full[ST_MAX_RANK];
		for (int k = 0; k < rank; k++)
			full[k] = k < first ? 1.0f : (float)scales->floats[count == 1 ? 0 : k - first];
		int64_t dim = rank;
		inputs[2] = init_floats(ex, base, ST_ONNX_FLOAT, &dim, 1, full, rank);
	}
	free(base);
	/* roi is the empty name: no input. */
	const char *out = main_output(ex, l);
	size_t n = node1(ex, "Resize", l, inputs, by_size ? 4 : 3, out);
	attr_string(ex, n, "mode", param_enum(l, "mode"));
	attr_string(ex, n, "coordinate_transformation_mode", coordinates);
	attr_string(ex, n, "nearest_mode", param_enum(l, "nearest_mode"));
	attr_float(ex, n, "cubic_coeff_a", param(l, "cubic_coeff_a")->f);
	attr_int(ex, n, "exclude_outside", param(l, "exclude_outside")->b);
	return finish(ex, l, out);
}

static void
add_opset(exporter *ex, const char *domain, int64_t version)
{
	for (size_t i = 0; i < ex->n_opsets; i++) {
		if (st_onnx_str_eq(ex->opsets[i].domain, domain)) {
			if (version > ex->opsets[i].version)
				ex->opsets[i].version = version;
			return;
		}
	}
	st_onnx_opset *o = grow((void **)&ex->opsets, &ex->n_opsets, &ex->cap_opsets, sizeof *o);
	o->domain = str(ex, domain);
	o->has_version = true;
	o->version = version;
}

static const char **
layer_inputs(exporter *ex, const st_layer *l, int extra, int *n)
{
	const char **in = alloc(ex, (size_t)(l->n_inputs + extra), sizeof *in);
	for (int i = 0; i < l->n_inputs; i++)
		in[i] = input_name(ex, l, i);
	*n = l->n_inputs;
	return in;
}

/* onnx_operator: the node it was imported from, written back unchanged. */
static int
emit_onnx_operator(exporter *ex, const st_layer *l)
{
	const char *op = param(l, "op_type")->s, *domain = param(l, "domain")->s;
	if (op[0] == '\0')
		return fail(ex, ST_EXPORT_REFUSED, l, "placeholder without an op_type");
	bool default_domain = domain[0] == '\0' || strcmp(domain, "ai.onnx") == 0;
	if (!default_domain && !ex->opt->allow_placeholders)
		return fail(ex, ST_EXPORT_REFUSED, l,
		            "placeholder operator %s.%s is in a domain other than ONNX's; allow it with "
		            "--allow-placeholders",
		            domain, op);
	int n_in;
	const char **in = layer_inputs(ex, l, 0, &n_in);
	size_t n = add_node(ex, op, text(ex, l->name), in, n_in, ex->ports[l->index], ex->n_ports[l->index]);
	st_onnx_node *node = &ex->nodes[n];
	if (!default_domain) {
		node->domain = str(ex, domain);
		add_opset(ex, domain, param(l, "opset")->i > 0 ? param(l, "opset")->i : 1);
	}
	const char *b64 = param(l, "attributes")->s;
	if (b64[0] != '\0') {
		uint8_t *bytes;
		size_t len;
		if (st_base64_decode(b64, &bytes, &len) != 0)
			return fail(ex, ST_EXPORT_REFUSED, l, "its attributes are not base64");
		keep(ex, bytes);
		ex->holders = st_xreallocarray(ex->holders, ex->n_holders + 1, sizeof *ex->holders);
		st_onnx_model *holder = &ex->holders[ex->n_holders++];
		memset(holder, 0, sizeof *holder);
		st_onnx_node parsed;
		memset(&parsed, 0, sizeof parsed);
		char err[256];
		if (st_onnx_parse_attributes(bytes, len, holder, &parsed, err, sizeof err) != 0)
			return fail(ex, ST_EXPORT_REFUSED, l, "its attributes cannot be read: %s", err);
		node->attributes = parsed.attributes;
		node->n_attributes = parsed.n_attributes;
	}
	return 0;
}

/* A layer type with no ONNX operator: an ai.strata node with the
 * parameters as attributes and the weights as extra inputs. */
static int
emit_custom(exporter *ex, const st_layer *l)
{
	if (!ex->opt->allow_placeholders)
		return fail(ex, ST_EXPORT_REFUSED, l,
		            "layer type '%s' has no ONNX operator; export it as an ai.strata placeholder with "
		            "--allow-placeholders",
		            l->type_name);
	int n_in;
	const char **in = layer_inputs(ex, l, l->n_weights, &n_in);
	for (int w = 0; w < l->n_weights; w++) {
		if ((in[n_in++] = weight(ex, l, l->weights[w].name, float_type(ex, l), NULL, 0)) == NULL)
			return -1;
	}
	size_t n = add_node(ex, l->type->desc->name, text(ex, l->name), in, n_in, ex->ports[l->index],
	                    ex->n_ports[l->index]);
	ex->nodes[n].domain = str(ex, "ai.strata");
	add_opset(ex, "ai.strata", 1);
	const st_layer_desc *d = l->type->desc;
	for (int i = 0; i < d->n_params && i < MAX_ATTRS; i++) {
		const st_value *v = &l->params.values[i];
		const char *name = d->params[i].name;
		switch (d->params[i].kind) {
		case ST_PARAM_INT:
			attr_int(ex, n, name, v->i);
			break;
		case ST_PARAM_BOOL:
			attr_int(ex, n, name, v->b);
			break;
		case ST_PARAM_FLOAT:
			attr_float(ex, n, name, v->f);
			break;
		case ST_PARAM_ENUM:
			attr_string(ex, n, name, d->params[i].enum_values[v->i]);
			break;
		case ST_PARAM_STRING:
			attr_string(ex, n, name, v->s);
			break;
		case ST_PARAM_DIMS:
			attr_ints(ex, n, name, v->ints, v->count);
			break;
		case ST_PARAM_FLOATS:
			attr_floats(ex, n, name, v->floats, v->count);
			break;
		}
	}
	return 0;
}

static const struct {
	const char *type;
	emit_fn emit;
} emitters[] = {
	{ "input", emit_input },
	{ "output", emit_output },
	{ "constant", emit_constant },
	{ "identity", emit_identity },
	{ "dropout", emit_dropout },
	{ "convolution", emit_convolution },
	{ "deconvolution", emit_deconvolution },
	{ "xwn_convolution", emit_xwn_convolution },
	{ "xwn_deconvolution", emit_xwn_deconvolution },
	{ "xwn_cascade_convolution", emit_xwn_cascade },
	{ "pooling", emit_pooling },
	{ "global_pooling", emit_global_pooling },
	{ "batch_normalization", emit_batch_normalization },
	{ "instance_normalization", emit_instance_normalization },
	{ "layer_normalization", emit_layer_normalization },
	{ "fully_connected", emit_fully_connected },
	{ "matrix_multiply", emit_matrix_multiply },
	{ "elementwise", emit_elementwise },
	{ "linear_blend", emit_linear_blend },
	{ "softmax", emit_softmax },
	{ "concatenation", emit_concatenation },
	{ "split", emit_split },
	{ "pad", emit_pad },
	{ "slice", emit_slice },
	{ "reshape", emit_reshape },
	{ "flatten", emit_flatten },
	{ "transpose", emit_transpose },
	{ "space_to_depth", emit_space_to_depth },
	{ "depth_to_space", emit_depth_to_space },
	{ "resize", emit_resize },
	{ "onnx_operator", emit_onnx_operator },
};

/* ---- the whole graph ---- */

int
st_export_onnx_ir_version(int opset)
{
	if (opset < ST_EXPORT_ONNX_MIN_OPSET || opset > ST_EXPORT_ONNX_MAX_OPSET)
		return -1;
	/* The ONNX versioning table: the IR version that introduced each opset. */
	if (opset <= 14)
		return 7;
	if (opset <= 18)
		return 8;
	if (opset <= 20)
		return 9;
	return 10;
}

static bool
is_placeholder(const st_layer *l)
{
	return l->type != NULL && strcmp(l->type->desc->name, "onnx_operator") == 0;
}

/* Refuses a graph with type errors, except the one every placeholder carries. */
static int
check_errors(exporter *ex)
{
	int n;
	st_graph_message *m = st_graph_messages(ex->g, &n);
	int errors = 0;
	for (int i = 0; i < n; i++) {
		if (m[i].severity != ST_SEVERITY_ERROR || is_placeholder(m[i].layer))
			continue;
		errors++;
		fail(ex, ST_EXPORT_REFUSED, m[i].layer, "%s", m[i].text);
	}
	free(m);
	if (errors > 0)
		st_diag_add(ex->d, ST_SEVERITY_ERROR, ex->file, 0, 0,
		            "the model has %d type error%s; fix %s before exporting", errors, errors == 1 ? "" : "s",
		            errors == 1 ? "it" : "them");
	return errors ? -1 : 0;
}

static int
compare_topo(const void *a, const void *b)
{
	const st_layer *x = *(const st_layer *const *)a, *y = *(const st_layer *const *)b;
	return (x->topo > y->topo) - (x->topo < y->topo);
}

/* Names every output of every layer: "L" for the first, "L:k" for the
 * others, made unique where names collide. */
static void
name_ports(exporter *ex)
{
	st_graph *g = ex->g;
	ex->ports = st_xcalloc((size_t)(g->n_layers ? g->n_layers : 1), sizeof *ex->ports);
	ex->n_ports = st_xcalloc((size_t)(g->n_layers ? g->n_layers : 1), sizeof *ex->n_ports);
	for (int i = 0; i < g->n_layers; i++) {
		const st_layer *l = g->layers[i];
		int n = l->outputs_known ? l->n_outputs : 1;
		if (is_placeholder(l))
			n = (int)param(l, "num_outputs")->i;
		for (int c = 0; c < l->n_consumers; c++) {
			const st_layer *user = l->consumers[c].layer;
			const st_port *p = &user->inputs[l->consumers[c].input];
			if (p->output + 1 > n)
				n = p->output + 1;
		}
		if (n < 1)
			n = 1;
		ex->n_ports[i] = n;
		ex->ports[i] = alloc(ex, (size_t)n, sizeof **ex->ports);
	}
	/* First names go first so that a layer keeps its own name. */
	for (int i = 0; i < g->n_layers; i++)
		ex->ports[i][0] = fresh_name(ex, g->layers[i]->name);
	for (int i = 0; i < g->n_layers; i++) {
		for (int k = 1; k < ex->n_ports[i]; k++) {
			char *base = st_xasprintf("%s:%d", g->layers[i]->name, k);
			ex->ports[i][k] = fresh_name(ex, base);
			free(base);
		}
	}
}

static void
exporter_free(exporter *ex)
{
	for (size_t i = 0; i < ex->n_holders; i++)
		st_onnx_free(&ex->holders[i]);
	free(ex->holders);
	for (size_t i = 0; i < ex->n_owned; i++)
		free(ex->owned[i]);
	free(ex->owned);
	st_map_free(&ex->names);
	st_map_free(&ex->node_names);
	free(ex->ports);
	free(ex->n_ports);
	free(ex->nodes);
	free(ex->inits);
	free(ex->inputs);
	free(ex->outputs);
	free(ex->opsets);
	free(ex->metadata);
	st_weights_close(ex->weights);
}

static int
build(exporter *ex, st_onnx_model *m, st_onnx_graph *graph)
{
	st_graph *g = ex->g;
	if (ex->opset < ST_EXPORT_ONNX_MIN_OPSET || ex->opset > ST_EXPORT_ONNX_MAX_OPSET)
		return fail(ex, ST_EXPORT_REFUSED, NULL,
		            "opset %d is not supported: the exporter writes opsets %d to %d (default %d)", ex->opset,
		            ST_EXPORT_ONNX_MIN_OPSET, ST_EXPORT_ONNX_MAX_OPSET, ST_EXPORT_ONNX_DEFAULT_OPSET);
	st_graph_check(g);
	if (check_errors(ex) != 0)
		return -1;
	name_ports(ex);
	add_opset(ex, "", ex->opset);

	st_layer **order = st_xmalloc(sizeof *order * (size_t)(g->n_layers ? g->n_layers : 1));
	memcpy(order, g->layers, sizeof *order * (size_t)g->n_layers);
	qsort(order, (size_t)g->n_layers, sizeof *order, compare_topo);
	for (int i = 0; i < g->n_layers; i++) {
		const st_layer *l = order[i];
		emit_fn emit = emit_custom;
		for (size_t k = 0; k < sizeof emitters / sizeof emitters[0]; k++) {
			if (strcmp(l->type->desc->name, emitters[k].type) == 0)
				emit = emitters[k].emit;
		}
		emit(ex, l);
	}
	free(order);
	if (ex->status != ST_EXPORT_OK)
		return -1;
	if (ex->n_inputs == 0 || ex->n_outputs == 0)
		return fail(ex, ST_EXPORT_REFUSED, NULL, "the model needs at least one input and one output layer");

	const char *net_name = g->network.values[ST_NET_NAME].s;
	graph->name = str(ex, net_name && net_name[0] ? net_name : "strata");
	graph->nodes = ex->nodes;
	graph->n_nodes = ex->n_nodes;
	graph->initializers = ex->inits;
	graph->n_initializers = ex->n_inits;
	graph->inputs = ex->inputs;
	graph->n_inputs = ex->n_inputs;
	graph->outputs = ex->outputs;
	graph->n_outputs = ex->n_outputs;
	m->has_ir_version = true;
	m->ir_version = st_export_onnx_ir_version(ex->opset);
	m->producer_name = str(ex, "strata");
	m->producer_version = str(ex, PACKAGE_VERSION);
	const char *description = g->network.values[ST_NET_DESCRIPTION].s;
	if (description && description[0])
		m->doc_string = str(ex, description);
	m->graph = graph;
	m->opsets = ex->opsets;
	m->n_opsets = ex->n_opsets;
	m->metadata_props = ex->metadata;
	m->n_metadata_props = ex->n_metadata;
	return 0;
}

int
st_export_onnx(st_graph *g, const char *weights_dir, const st_export_onnx_options *opt, st_buf *out,
               st_diag *d)
{
	exporter ex;
	memset(&ex, 0, sizeof ex);
	ex.g = g;
	ex.opt = opt;
	ex.opset = opt->opset ? opt->opset : ST_EXPORT_ONNX_DEFAULT_OPSET;
	ex.file = opt->file;
	ex.d = d;
	st_map_init(&ex.names);
	st_map_init(&ex.node_names);
	if (!opt->random_weights && weights_dir != NULL && weights_dir[0] != '\0') {
		char err[600];
		ex.weights = st_weights_open(weights_dir, err, sizeof err);
		if (ex.weights == NULL) {
			fail(&ex, ST_EXPORT_UNREADABLE, NULL, "%s", err);
			exporter_free(&ex);
			return ST_EXPORT_UNREADABLE;
		}
	}
	st_onnx_model m;
	st_onnx_graph graph;
	memset(&m, 0, sizeof m);
	memset(&graph, 0, sizeof graph);
	int rc = build(&ex, &m, &graph);
	if (rc == 0)
		st_onnx_encode(&m, out);
	int status = rc == 0 ? ST_EXPORT_OK : ex.status ? ex.status : ST_EXPORT_REFUSED;
	exporter_free(&ex);
	return status;
}

int
st_export_onnx_file(st_graph *g, const char *weights_dir, const st_export_onnx_options *opt, const char *path,
                    st_diag *d)
{
	st_buf b;
	st_buf_init(&b);
	int rc = st_export_onnx(g, weights_dir, opt, &b, d);
	if (rc == ST_EXPORT_OK) {
		char err[600];
		if (st_write_file_atomic(path, b.data ? b.data : "", b.len, err, sizeof err) != 0) {
			st_diag_add(d, ST_SEVERITY_ERROR, NULL, 0, 0, "%s", err);
			rc = ST_EXPORT_UNREADABLE;
		}
	}
	st_buf_free(&b);
	return rc;
}
