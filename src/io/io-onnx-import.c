/* ONNX import: walks the graph's nodes in order and builds standard layers
 * for the operators Strata maps, keeps everything it can compute at import
 * (initializers, Constant nodes, arithmetic on them, the shapes the type
 * checker knows) as constants, attaches activations to the layer before
 * them, and keeps any other operator as an onnx_operator placeholder. */
#include "config.h"

#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io-onnx-internal.h"

/* ---- constants known at import ---- */




bool
is_float_type(int32_t t)
{
	return t == ST_ONNX_FLOAT || t == ST_ONNX_DOUBLE || t == ST_ONNX_FLOAT16 || t == ST_ONNX_BFLOAT16;
}

void
cten_free(cten *c)
{
	if (c == NULL)
		return;
	free(c->f);
	free(c->i);
	free(c);
}


/* Whether dims (none negative) describe at most FOLD_LIMIT elements. */
bool
dims_ok(int rank, const int64_t *dims)
{
	int64_t n = 1;
	for (int k = 0; k < rank; k++) {
		if (dims[k] < 0)
			return false;
		if (dims[k] == 0)
			return true;
		if (n > FOLD_LIMIT / dims[k])
			return false;
		n *= dims[k];
	}
	return true;
}

cten *
cten_new(int32_t type, int rank, const int64_t *dims)
{
	cten *c = st_xcalloc(1, sizeof *c);
	c->type = type;
	c->rank = rank;
	c->count = 1;
	for (int k = 0; k < rank; k++) {
		c->dims[k] = dims[k];
		c->count *= dims[k];
	}
	if (is_float_type(type))
		c->f = st_xcalloc((size_t)(c->count ? c->count : 1), sizeof *c->f);
	else
		c->i = st_xcalloc((size_t)(c->count ? c->count : 1), sizeof *c->i);
	return c;
}

/* A copy of c with new dims (same count). */
cten *
cten_reshaped(const cten *c, const int64_t *dims, int r)
{
	cten *o = cten_new(c->type, r, dims);
	if (o->count != c->count) {
		cten_free(o);
		return NULL;
	}
	if (c->f)
		memcpy(o->f, c->f, (size_t)c->count * sizeof *o->f);
	else
		memcpy(o->i, c->i, (size_t)c->count * sizeof *o->i);
	return o;
}

static double
bf16_to_double(uint16_t v)
{
	uint32_t bits = (uint32_t)v << 16;
	float f;
	memcpy(&f, &bits, sizeof f);
	return f;
}

static int cten_decode_into(cten *c, char *why, size_t size);

/* Decodes src's values into c->f or c->i. Returns 0, or -1 with why (and
 * nothing decoded, so that a second try fails the same way). */
int
cten_decode(cten *c, char *why, size_t size)
{
	if (c->f != NULL || c->i != NULL)
		return 0;
	if (cten_decode_into(c, why, size) == 0)
		return 0;
	free(c->f);
	free(c->i);
	c->f = NULL;
	c->i = NULL;
	return -1;
}

static int
cten_decode_into(cten *c, char *why, size_t size)
{
	if (c->f != NULL || c->i != NULL)
		return 0;
	const st_onnx_tensor *t = c->src;
	size_t n = (size_t)c->count;
	bool fl = is_float_type(c->type);
	int esize = st_onnx_data_type_size(c->type);
	bool raw = t->raw_data.data != NULL || t->external != NULL;
	const void *data = NULL;
	size_t len;
	/* The data must be there before anything is allocated for it. */
	if (raw && st_onnx_tensor_bytes(t, &data, &len, why, size) != 0)
		return -1;
	if (!raw) {
		size_t have;
		switch (c->type) {
		case ST_ONNX_FLOAT: have = t->n_float_data; break;
		case ST_ONNX_DOUBLE: have = t->n_double_data; break;
		case ST_ONNX_INT64: have = t->n_int64_data; break;
		case ST_ONNX_UINT32: case ST_ONNX_UINT64: have = t->n_uint64_data; break;
		default: have = t->n_int32_data; break;
		}
		if (have != n) {
			snprintf(why, size, "tensor '%.*s' holds %zu values for dims of %zu elements",
			         (int)t->name.len, t->name.data ? t->name.data : "", have, n);
			return -1;
		}
	}
	if (fl)
		c->f = st_xcalloc(n ? n : 1, sizeof *c->f);
	else
		c->i = st_xcalloc(n ? n : 1, sizeof *c->i);
	if (raw) {
		const uint8_t *p = data;
		for (size_t k = 0; k < n; k++, p += esize) {
			switch (c->type) {
			case ST_ONNX_FLOAT: { float v; memcpy(&v, p, 4); c->f[k] = v; break; }
			case ST_ONNX_DOUBLE: memcpy(&c->f[k], p, 8); break;
			case ST_ONNX_FLOAT16: c->f[k] = st_half_to_float((uint16_t)(p[0] | p[1] << 8)); break;
			case ST_ONNX_BFLOAT16: c->f[k] = bf16_to_double((uint16_t)(p[0] | p[1] << 8)); break;
			case ST_ONNX_INT8: c->i[k] = (int8_t)p[0]; break;
			case ST_ONNX_UINT8: case ST_ONNX_BOOL: c->i[k] = p[0]; break;
			case ST_ONNX_INT16: { int16_t v; memcpy(&v, p, 2); c->i[k] = v; break; }
			case ST_ONNX_UINT16: { uint16_t v; memcpy(&v, p, 2); c->i[k] = v; break; }
			case ST_ONNX_INT32: { int32_t v; memcpy(&v, p, 4); c->i[k] = v; break; }
			case ST_ONNX_UINT32: { uint32_t v; memcpy(&v, p, 4); c->i[k] = v; break; }
			case ST_ONNX_INT64: memcpy(&c->i[k], p, 8); break;
			case ST_ONNX_UINT64: { uint64_t v; memcpy(&v, p, 8); c->i[k] = (int64_t)v; break; }
			default:
				snprintf(why, size, "tensor of type %s is not supported", st_onnx_data_type_name(c->type));
				return -1;
			}
		}
		return 0;
	}
	size_t have = 0;
	switch (c->type) {
	case ST_ONNX_FLOAT:
		have = t->n_float_data;
		for (size_t k = 0; k < n && k < have; k++)
			c->f[k] = t->float_data[k];
		break;
	case ST_ONNX_DOUBLE:
		have = t->n_double_data;
		for (size_t k = 0; k < n && k < have; k++)
			c->f[k] = t->double_data[k];
		break;
	case ST_ONNX_INT64:
		have = t->n_int64_data;
		for (size_t k = 0; k < n && k < have; k++)
			c->i[k] = t->int64_data[k];
		break;
	case ST_ONNX_UINT32: case ST_ONNX_UINT64:
		have = t->n_uint64_data;
		for (size_t k = 0; k < n && k < have; k++)
			c->i[k] = (int64_t)t->uint64_data[k];
		break;
	case ST_ONNX_FLOAT16: case ST_ONNX_BFLOAT16:
		have = t->n_int32_data;
		for (size_t k = 0; k < n && k < have; k++) {
			uint16_t bits = (uint16_t)t->int32_data[k];
			c->f[k] = c->type == ST_ONNX_FLOAT16 ? st_half_to_float(bits) : bf16_to_double(bits);
		}
		break;
	case ST_ONNX_INT32: case ST_ONNX_INT16: case ST_ONNX_INT8: case ST_ONNX_UINT16:
	case ST_ONNX_UINT8: case ST_ONNX_BOOL:
		have = t->n_int32_data;
		for (size_t k = 0; k < n && k < have; k++)
			c->i[k] = t->int32_data[k];
		break;
	default:
		snprintf(why, size, "tensor of type %s is not supported", st_onnx_data_type_name(c->type));
		return -1;
	}
	if (have != n) {
		snprintf(why, size, "tensor '%.*s' holds %zu values for dims of %zu elements",
		         (int)t->name.len, t->name.data ? t->name.data : "", have, n);
		return -1;
	}
	return 0;
}

/* A constant over an ONNX tensor (borrowed; it must outlive the import). */
cten *
cten_from_tensor(const st_onnx_tensor *t, char *why, size_t size)
{
	if (!t->has_data_type || st_onnx_data_type_size(t->data_type) == 0) {
		snprintf(why, size, "tensor '%.*s' has data type %s, which Strata cannot hold",
		         (int)t->name.len, t->name.data ? t->name.data : "",
		         st_onnx_data_type_name(t->has_data_type ? t->data_type : 0));
		return NULL;
	}
	if (t->n_dims > ST_MAX_RANK) {
		snprintf(why, size, "tensor '%.*s' has rank %zu; at most %d is supported", (int)t->name.len,
		         t->name.data ? t->name.data : "", t->n_dims, ST_MAX_RANK);
		return NULL;
	}
	cten *c = st_xcalloc(1, sizeof *c);
	c->type = t->data_type;
	c->rank = (int)t->n_dims;
	for (int k = 0; k < c->rank; k++)
		c->dims[k] = t->dims[k];
	c->count = t->count;
	c->src = t;
	if (c->count > ((int64_t)1 << 40)) {
		snprintf(why, size, "tensor '%.*s' is too large", (int)t->name.len, t->name.data ? t->name.data : "");
		free(c);
		return NULL;
	}
	return c;
}

double
cget(const cten *c, int64_t k)
{
	return c->f ? c->f[k] : (double)c->i[k];
}

int64_t
cgeti(const cten *c, int64_t k)
{
	if (c->i)
		return c->i[k];
	double v = c->f[k];
	if (!(v >= -9.2e18 && v <= 9.2e18))
		return v > 0 ? INT64_MAX : INT64_MIN;
	return (int64_t)v;
}

void cset(cten *c, int64_t k, double v);

/* Stores an integer, wrapped to what the type holds. */
void
cseti(cten *c, int64_t k, int64_t v)
{
	if (c->f != NULL) {
		cset(c, k, (double)v);
		return;
	}
	switch (c->type) {
	case ST_ONNX_INT8: v = (int8_t)v; break;
	case ST_ONNX_UINT8: v = (uint8_t)v; break;
	case ST_ONNX_INT16: v = (int16_t)v; break;
	case ST_ONNX_UINT16: v = (uint16_t)v; break;
	case ST_ONNX_INT32: v = (int32_t)v; break;
	case ST_ONNX_UINT32: v = (uint32_t)v; break;
	case ST_ONNX_BOOL: v = v != 0; break;
	default: break;
	}
	c->i[k] = v;
}

/* Rounds a computed value to what the type holds. */
void
cset(cten *c, int64_t k, double v)
{
	if (c->f != NULL) {
		if (c->type == ST_ONNX_FLOAT)
			v = (float)v;
		else if (c->type == ST_ONNX_FLOAT16)
			v = st_half_to_float(st_float_to_half((float)v));
		c->f[k] = v;
		return;
	}
	cseti(c, k, v >= 9.2e18 ? INT64_MAX : v <= -9.2e18 ? INT64_MIN : (int64_t)v);
}


int32_t
onnx_of(st_dtype t)
{
	static const int32_t map[] = { ST_ONNX_FLOAT, ST_ONNX_FLOAT16, ST_ONNX_INT64, ST_ONNX_INT32,
		                       ST_ONNX_INT8, ST_ONNX_UINT8, ST_ONNX_BOOL };
	return (unsigned)t < ST_DTYPE_COUNT ? map[t] : ST_ONNX_UNDEFINED;
}

/* ---- messages ---- */

void
node_msg(imp *I, st_severity sev, const char *fmt, ...)
{
	char text[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof text, fmt, ap);
	va_end(ap);
	if (I->node != NULL) {
		const st_onnx_node *n = I->node;
		st_diag_add(I->d, sev, NULL, 0, 0, "graph.node[%zu] \"%.*s\" (%.*s): %s", I->node_index,
		            (int)n->name.len, n->name.data ? n->name.data : "", (int)n->op_type.len,
		            n->op_type.data ? n->op_type.data : "", text);
	} else {
		st_diag_add(I->d, sev, NULL, 0, 0, "%s", text);
	}
	if (sev == ST_SEVERITY_ERROR)
		I->errors++;
}

/* Records why the node cannot be mapped; returns 1 (keep it as a placeholder). */
int
unsupported(imp *I, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(I->why, sizeof I->why, fmt, ap);
	va_end(ap);
	return 1;
}

/* ---- values ---- */

val *
find_val(imp *I, st_onnx_str name)
{
	char key[256];
	if (name.data == NULL || name.len == 0)
		return NULL;
	if (name.len < sizeof key) {
		memcpy(key, name.data, name.len);
		key[name.len] = '\0';
		return st_map_get(&I->vals, key);
	}
	char *k = st_onnx_str_dup(name);
	val *v = st_map_get(&I->vals, k);
	free(k);
	return v;
}

/* The value called name, made when new. */
val *
get_val(imp *I, st_onnx_str name)
{
	val *v = find_val(I, name);
	if (v != NULL)
		return v;
	v = st_xcalloc(1, sizeof *v);
	v->name = st_onnx_str_dup(name);
	st_map_put(&I->vals, v->name, v);
	if (I->n_all == I->cap_all) {
		I->cap_all = I->cap_all ? I->cap_all * 2 : 64;
		I->all = st_xreallocarray(I->all, (size_t)I->cap_all, sizeof *I->all);
	}
	I->all[I->n_all++] = v;
	return v;
}

/* Input k of the current node, or NULL when absent or omitted. */
val *
in_val(imp *I, size_t k)
{
	if (k >= I->node->n_inputs || I->node->inputs[k].len == 0)
		return NULL;
	return find_val(I, I->node->inputs[k]);
}

bool
has_input(imp *I, size_t k)
{
	return k < I->node->n_inputs && I->node->inputs[k].len > 0;
}

bool
output_used(imp *I, size_t k)
{
	if (k >= I->node->n_outputs || I->node->outputs[k].len == 0)
		return false;
	val *v = find_val(I, I->node->outputs[k]);
	return v != NULL && (v->uses > 0 || v->graph_output);
}

/* Makes output k of the current node the known constant c (taken). */
void
set_out_const(imp *I, size_t k, cten *c)
{
	if (k >= I->node->n_outputs || I->node->outputs[k].len == 0) {
		cten_free(c);
		return;
	}
	val *v = get_val(I, I->node->outputs[k]);
	cten_free(v->c);
	v->c = c;
	v->port = (st_port){ NULL, 0 };
}

void
set_out_port(imp *I, size_t k, st_layer *l, int port)
{
	if (k >= I->node->n_outputs || I->node->outputs[k].len == 0)
		return;
	val *v = get_val(I, I->node->outputs[k]);
	v->port = (st_port){ l, port };
}

/* The constant behind input k (decoded), or NULL when it is not known. */
cten *
in_const(imp *I, size_t k)
{
	val *v = in_val(I, k);
	if (v == NULL || v->c == NULL)
		return NULL;
	if (cten_decode(v->c, I->why, sizeof I->why) != 0)
		return NULL;
	return v->c;
}

/* ---- attributes ---- */

const st_onnx_attribute *
attr(imp *I, const char *name)
{
	for (size_t k = 0; k < I->node->n_attributes; k++) {
		if (st_onnx_str_eq(I->node->attributes[k].name, name))
			return &I->node->attributes[k];
	}
	return NULL;
}

int64_t
attr_i(imp *I, const char *name, int64_t def)
{
	const st_onnx_attribute *a = attr(I, name);
	return a && a->has_i ? a->i : def;
}

double
attr_f(imp *I, const char *name, double def)
{
	const st_onnx_attribute *a = attr(I, name);
	if (a == NULL)
		return def;
	if (a->has_f)
		return a->f;
	if (a->has_i)
		return (double)a->i;
	return def;
}

/* The string attribute into buf ("" default when absent). */
const char *
attr_s(imp *I, const char *name, const char *def, char *buf, size_t size)
{
	const st_onnx_attribute *a = attr(I, name);
	if (a == NULL || a->s.data == NULL)
		return def;
	snprintf(buf, size, "%.*s", (int)a->s.len, a->s.data);
	return buf;
}

/* The ints attribute: its count (or -1 when absent), values into out. */
int
attr_ints(imp *I, const char *name, int64_t *out, int cap)
{
	const st_onnx_attribute *a = attr(I, name);
	if (a == NULL)
		return -1;
	int n = (int)(a->n_ints < (size_t)cap ? a->n_ints : (size_t)cap);
	for (int k = 0; k < n; k++)
		out[k] = a->ints[k];
	return a->n_ints > (size_t)cap ? cap + 1 : n;
}

/* ---- layers ---- */

static char *sanitize(const char *hint);

/* A layer name from hint: only letters, digits and '_', not starting with
 * a digit, unique in the graph. Caller frees. */
static char *
layer_name(imp *I, const char *hint)
{
	char *base = sanitize(hint);
	if (st_graph_find(I->graph, base) == NULL)
		return base;
	for (int k = 1;; k++) {
		char *p = st_xasprintf("%s_%d", base, k);
		if (st_graph_find(I->graph, p) == NULL) {
			free(base);
			return p;
		}
		free(p);
	}
}

/* hint made a valid layer name; caller frees. */
static char *
sanitize(const char *hint)
{
	st_buf b;
	st_buf_init(&b);
	for (const char *p = hint; *p && b.len < 100; p++) {
		char c = *p;
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
		st_buf_putc(&b, ok ? c : '_');
	}
	if (b.data == NULL)
		st_buf_puts(&b, ""); /* so that take gives a string */
	char *base = st_buf_take(&b);
	if (base[0] == '\0' || (base[0] >= '0' && base[0] <= '9') || st_name_problem(base) != NULL) {
		char *p = st_xasprintf("t_%s", base);
		free(base);
		base = p;
	}
	if (st_name_problem(base) != NULL) {
		free(base);
		base = st_xstrdup("layer");
	}
	return base;
}

/* The name hint of the current node: its name, else its first output. */
const char *
node_hint(imp *I, char *buf, size_t size)
{
	const st_onnx_node *n = I->node;
	st_onnx_str s = n->name.len ? n->name : n->n_outputs ? n->outputs[0] : n->op_type;
	snprintf(buf, size, "%.*s", (int)s.len, s.data ? s.data : "node");
	return buf;
}

st_layer *
add_layer(imp *I, const char *type, const char *hint)
{
	char *name = layer_name(I, hint);
	st_layer *l = st_layer_new(I->r, type, name);
	free(name);
	st_graph_insert(I->graph, l, I->graph->n_layers);
	return l;
}

st_layer *
node_layer(imp *I, const char *type)
{
	char hint[160];
	return add_layer(I, type, node_hint(I, hint, sizeof hint));
}

/* Sets a parameter from its text form ("3", "[1, 2]", "true", "max"). */
int
set_param(imp *I, st_layer *l, const char *name, const char *fmt, ...)
{
	char text[4096];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof text, fmt, ap);
	va_end(ap);
	const st_layer_desc *d = l->type->desc;
	int idx = st_params_find(d->params, d->n_params, name);
	if (idx < 0) {
		node_msg(I, ST_SEVERITY_ERROR, "internal: layer type %s has no parameter %s", d->name, name);
		return -1;
	}
	st_value v;
	char why[256];
	if (st_value_from_text(&d->params[idx], text, &v, why, sizeof why) != 0) {
		node_msg(I, ST_SEVERITY_ERROR, "parameter %s of layer '%s' cannot be %s: %s", name, l->name, text, why);
		return -1;
	}
	st_value_clear(&l->params.values[idx]);
	l->params.values[idx] = v;
	l->params.set[idx] = true;
	st_graph_touch(I->graph, l);
	return 0;
}

static void
list_text(st_buf *b, const int64_t *v, int n)
{
	st_buf_putc(b, '[');
	for (int k = 0; k < n; k++)
		st_buf_printf(b, "%s%" PRId64, k ? ", " : "", v[k]);
	st_buf_putc(b, ']');
}

int
set_dims(imp *I, st_layer *l, const char *name, const int64_t *v, int n)
{
	st_buf b;
	st_buf_init(&b);
	list_text(&b, v, n);
	int rc = set_param(I, l, name, "%s", b.data);
	st_buf_free(&b);
	return rc;
}

int
set_floats(imp *I, st_layer *l, const char *name, const double *v, int n)
{
	st_buf b;
	st_buf_init(&b);
	st_buf_putc(&b, '[');
	for (int k = 0; k < n; k++) {
		if (k)
			st_buf_puts(&b, ", ");
		st_format_double(v[k], &b);
	}
	st_buf_putc(&b, ']');
	int rc = set_param(I, l, name, "%s", b.data);
	st_buf_free(&b);
	return rc;
}

int
set_double(imp *I, st_layer *l, const char *name, double v)
{
	st_buf b;
	st_buf_init(&b);
	st_format_double(v, &b);
	int rc = set_param(I, l, name, "%s", b.data);
	st_buf_free(&b);
	return rc;
}

void
link_in(imp *I, st_layer *l, int input, st_port src)
{
	st_graph_set_input(I->graph, l, input, src);
}

/* ---- weights files ---- */

static int
write_npy(imp *I, const char *layer, const char *weight, st_dtype dtype, int rank, const int64_t *dims,
          const void *data)
{
	if (I->opt->weights_dir == NULL)
		return 0;
	st_shape s = { .dtype = dtype, .rank = rank };
	for (int k = 0; k < rank; k++)
		s.dims[k] = dims[k];
	char *path = st_xasprintf("%s/%s_%s.npy", I->opt->weights_dir, layer, weight);
	char err[512];
	int rc = st_npy_write(path, &s, data, err, sizeof err);
	if (rc != 0)
		node_msg(I, ST_SEVERITY_ERROR, "cannot write %s: %s", path, err);
	free(path);
	return rc;
}

/* The constant's values as float32 (caller frees), for weights. */
static float *
cten_floats(imp *I, cten *c)
{
	/* Weights in float32 bytes go straight across, without the doubles. */
	const void *data;
	size_t len;
	if (c->f == NULL && c->src != NULL && c->type == ST_ONNX_FLOAT &&
	    (c->src->raw_data.data != NULL || c->src->external != NULL) &&
	    st_onnx_tensor_bytes(c->src, &data, &len, I->why, sizeof I->why) == 0) {
		float *out = st_xmalloc(len ? len : 1);
		memcpy(out, data, len);
		return out;
	}
	if (cten_decode(c, I->why, sizeof I->why) != 0) {
		node_msg(I, ST_SEVERITY_ERROR, "%s", I->why);
		return NULL;
	}
	float *out = st_xmalloc((size_t)(c->count ? c->count : 1) * sizeof *out);
	for (int64_t k = 0; k < c->count; k++)
		out[k] = (float)cget(c, k);
	return out;
}

/* Writes c as a float32 weight with the given dims (count must match). */
int
write_weight(imp *I, st_layer *l, const char *weight, cten *c, int rank, const int64_t *dims)
{
	float *v = cten_floats(I, c);
	if (v == NULL)
		return -1;
	int rc = write_npy(I, l->name, weight, ST_DTYPE_FLOAT32, rank, dims, v);
	free(v);
	return rc;
}

int
write_floats(imp *I, st_layer *l, const char *weight, const float *v, int rank, const int64_t *dims)
{
	return write_npy(I, l->name, weight, ST_DTYPE_FLOAT32, rank, dims, v);
}

/* ---- shapes ---- */

/* The shape of a value: a constant's dims, or the type checker's result
 * for a layer output. NULL when not known (an error upstream). */
static const st_shape *
shape_of(imp *I, val *v, st_shape *tmp)
{
	if (v == NULL)
		return NULL;
	if (v->c != NULL) {
		memset(tmp, 0, sizeof *tmp);
		int t = st_onnx_dtype(v->c->type);
		tmp->dtype = t < 0 ? ST_DTYPE_FLOAT32 : (st_dtype)t;
		tmp->rank = v->c->rank;
		memcpy(tmp->dims, v->c->dims, sizeof tmp->dims);
		return tmp;
	}
	st_layer *l = v->port.layer;
	if (l == NULL)
		return NULL;
	if (l->state & ST_LAYER_DIRTY || !I->graph->checked)
		st_graph_check_incremental(I->graph);
	if (!l->outputs_known || v->port.output >= l->n_outputs)
		return NULL;
	*tmp = l->outputs[v->port.output]; /* a copy: a later check may move the array */
	return tmp;
}

const st_shape *
in_shape(imp *I, size_t k, st_shape *tmp)
{
	return shape_of(I, in_val(I, k), tmp);
}

/* ---- runtime operands ---- */

/* Values of c in dtype t as bytes (caller frees). */
static void *
cten_bytes(const cten *c, st_dtype t)
{
	int es = st_dtype_size(t);
	uint8_t *out = st_xcalloc((size_t)(c->count ? c->count : 1), (size_t)es);
	for (int64_t k = 0; k < c->count; k++) {
		void *p = out + k * es;
		switch (t) {
		case ST_DTYPE_FLOAT32: { float v = (float)cget(c, k); memcpy(p, &v, 4); break; }
		case ST_DTYPE_FLOAT16: { uint16_t v = st_float_to_half((float)cget(c, k)); memcpy(p, &v, 2); break; }
		case ST_DTYPE_INT64: { int64_t v = cgeti(c, k); memcpy(p, &v, 8); break; }
		case ST_DTYPE_INT32: { int32_t v = (int32_t)cgeti(c, k); memcpy(p, &v, 4); break; }
		case ST_DTYPE_INT8: *(int8_t *)p = (int8_t)cgeti(c, k); break;
		case ST_DTYPE_UINT8: case ST_DTYPE_BOOL: *(uint8_t *)p = (uint8_t)cgeti(c, k); break;
		default: break;
		}
	}
	return out;
}

/* The port a constant feeds from: a constant layer, made once. */
int
const_port(imp *I, val *v, st_port *out)
{
	if (v->const_layer != NULL) {
		*out = (st_port){ v->const_layer, 0 };
		return 0;
	}
	cten *c = v->c;
	int t = st_onnx_dtype(c->type);
	if (t < 0)
		return unsupported(I, "constant '%s' has type %s, which Strata layers do not compute in", v->name,
		                   st_onnx_data_type_name(c->type));
	if (cten_decode(c, I->why, sizeof I->why) != 0) {
		node_msg(I, ST_SEVERITY_ERROR, "%s", I->why);
		return -1;
	}
	st_layer *l = add_layer(I, "constant", v->name);
	if (set_dims(I, l, "dims", c->dims, c->rank) != 0 ||
	    set_param(I, l, "dtype", "%s", st_dtype_name((st_dtype)t)) != 0)
		return -1;
	bool same = c->count > 0;
	for (int64_t k = 1; k < c->count && same; k++)
		same = cget(c, k) == cget(c, 0);
	if (same && fabs(cget(c, 0)) < 9e15 && !isnan(cget(c, 0))) {
		if (set_double(I, l, "value", cget(c, 0)) != 0)
			return -1;
	} else {
		void *bytes = cten_bytes(c, (st_dtype)t);
		int rc = write_npy(I, l->name, "values", (st_dtype)t, c->rank, c->dims, bytes);
		free(bytes);
		if (rc != 0)
			return -1;
	}
	v->const_layer = l;
	*out = (st_port){ l, 0 };
	return 0;
}

/* The port input k is read from at run time. Returns 0, 1 (unsupported),
 * -1 (error). */
int
in_port(imp *I, size_t k, st_port *out)
{
	val *v = in_val(I, k);
	if (v == NULL) {
		node_msg(I, ST_SEVERITY_ERROR, "input %zu ('%.*s') is not produced by any node, initializer or graph input",
		         k, k < I->node->n_inputs ? (int)I->node->inputs[k].len : 0,
		         k < I->node->n_inputs && I->node->inputs[k].data ? I->node->inputs[k].data : "");
		return -1;
	}
	if (v->port.layer != NULL) {
		*out = v->port;
		return 0;
	}
	if (v->c != NULL)
		return const_port(I, v, out);
	node_msg(I, ST_SEVERITY_ERROR, "input '%s' has no value", v->name);
	return -1;
}

/* A new layer of type reading input 0 of the node, output 0 bound to it. */
int
unary_layer(imp *I, const char *type, st_layer **out)
{
	st_port p;
	int rc = in_port(I, 0, &p);
	if (rc != 0)
		return rc;
	st_layer *l = node_layer(I, type);
	link_in(I, l, 0, p);
	set_out_port(I, 0, l, 0);
	*out = l;
	return 0;
}

/* Reads an ints attribute or input (from opset `since` on, input k) as a
 * list; returns its count, -1 when absent, -2 when the input is not known. */
int
ints_attr_or_input(imp *I, const char *name, int since, size_t k, int64_t *out, int cap)
{
	if (I->opset < since)
		return attr_ints(I, name, out, cap);
	if (!has_input(I, k))
		return -1;
	cten *c = in_const(I, k);
	if (c == NULL)
		return -2;
	int n = (int)(c->count < cap ? c->count : cap);
	for (int j = 0; j < n; j++)
		out[j] = cgeti(c, j);
	return c->count > cap ? cap + 1 : n;
}

/* The version of domain the model imports (0 when it does not). */
static int
domain_version(const st_onnx_model *m, st_onnx_str domain)
{
	bool def = domain.len == 0 || st_onnx_str_eq(domain, "ai.onnx");
	for (size_t k = 0; k < m->n_opsets; k++) {
		const st_onnx_opset *o = &m->opsets[k];
		bool odef = o->domain.len == 0 || st_onnx_str_eq(o->domain, "ai.onnx");
		if ((def && odef) || (!def && o->domain.len == domain.len && domain.len > 0 &&
		                      memcmp(o->domain.data, domain.data, domain.len) == 0))
			return o->has_version ? (int)o->version : 0;
	}
	return 0;
}

/* Keeps the node as an onnx_operator layer: its inputs linked (constants
 * through constant layers), its attributes serialized. */
static int
placeholder(imp *I)
{
	st_layer *l = node_layer(I, "onnx_operator");
	if (l->type == NULL) {
		node_msg(I, ST_SEVERITY_ERROR, "%s, and no loaded plugin provides onnx_operator placeholders", I->why);
		return -1;
	}
	char *op = st_onnx_str_dup(I->node->op_type), *dom = st_onnx_str_dup(I->node->domain);
	st_buf attrs;
	st_buf_init(&attrs);
	st_onnx_encode_attributes(I->node, &attrs);
	char *b64 = st_base64_encode(attrs.data ? attrs.data : "", attrs.len);
	int n_out = I->node->n_outputs ? (int)I->node->n_outputs : 1;
	int rc = set_param(I, l, "op_type", "%s", op) || set_param(I, l, "domain", "%s", dom) ||
	         set_param(I, l, "opset", "%d", domain_version(I->m, I->node->domain)) ||
	         set_param(I, l, "attributes", "%s", b64) ||
	         set_param(I, l, "num_outputs", "%d", n_out > ST_MAX_OUTPUTS ? ST_MAX_OUTPUTS : n_out) ? -1 : 0;
	free(op);
	free(dom);
	free(b64);
	st_buf_free(&attrs);
	if (rc != 0)
		return -1;
	for (size_t k = 0; k < I->node->n_inputs; k++) {
		if (!has_input(I, k))
			continue;
		st_port p;
		val *v = in_val(I, k);
		if (v != NULL && v->c != NULL && v->port.layer == NULL && st_onnx_dtype(v->c->type) < 0)
			continue; /* a constant no layer can hold: left unlinked */
		if (v == NULL || (v->port.layer == NULL && v->c == NULL)) {
			node_msg(I, ST_SEVERITY_ERROR, "input %zu has no value", k);
			return -1;
		}
		if ((rc = in_port(I, k, &p)) < 0)
			return -1;
		if (rc == 0)
			link_in(I, l, (int)k, p);
	}
	for (size_t k = 0; k < I->node->n_outputs && k < ST_MAX_OUTPUTS; k++)
		set_out_port(I, k, l, (int)k);
	I->n_placeholders++;
	return 0;
}

/* Undoes a node's partial mapping: layers made since mark go, and values
 * that pointed at them forget them. */
void
rollback(imp *I, int mark)
{
	while (I->graph->n_layers > mark) {
		st_layer *l = I->graph->layers[I->graph->n_layers - 1];
		for (int k = 0; k < I->n_all; k++) {
			if (I->all[k]->port.layer == l)
				I->all[k]->port = (st_port){ NULL, 0 };
			if (I->all[k]->const_layer == l)
				I->all[k]->const_layer = NULL;
		}
		while (l->n_consumers > 0) {
			st_consumer c = l->consumers[l->n_consumers - 1];
			st_graph_set_input(I->graph, c.layer, c.input, (st_port){ NULL, 0 });
		}
		for (int i = 0; i < l->n_inputs; i++)
			st_graph_set_input(I->graph, l, i, (st_port){ NULL, 0 });
		st_graph_remove(I->graph, l);
	}
	for (size_t k = 0; k < I->node->n_outputs; k++) {
		val *v = find_val(I, I->node->outputs[k]);
		if (v != NULL) {
			v->port = (st_port){ NULL, 0 };
			cten_free(v->c);
			v->c = NULL;
		}
	}
}

/* ---- the graph's edges: inputs, initializers, outputs ---- */

static const st_onnx_tensor *
known_value(imp *I, st_onnx_str name)
{
	for (int k = 0; k < I->opt->n_known; k++) {
		if (st_onnx_str_eq(name, I->opt->known_names[k]))
			return I->opt->known_values[k];
	}
	return NULL;
}

static bool
is_initializer(const st_onnx_graph *g, st_onnx_str name)
{
	for (size_t k = 0; k < g->n_initializers; k++) {
		if (g->initializers[k].name.len == name.len &&
		    (name.len == 0 || memcmp(g->initializers[k].name.data, name.data, name.len) == 0))
			return true;
	}
	return false;
}

/* Whether a graph input is read only where a constant is wanted: as an
 * operand that an operator takes at import (shape, pads, weights). */
static bool
needed_only_as_constant(imp *I, st_onnx_str name)
{
	static const struct {
		const char *op;
		unsigned runtime; /* bit k: input k is read at run time */
	} ops[] = {
		{ "Conv", 1 }, { "ConvTranspose", 1 }, { "BatchNormalization", 1 }, { "InstanceNormalization", 1 },
		{ "Reshape", 1 }, { "Slice", 1 }, { "Pad", 1 }, { "Resize", 1 }, { "Upsample", 1 },
		{ "Split", 1 }, { "Clip", 1 }, { "Dropout", 1 }, { "PRelu", 1 }, { "Gemm", 1 },
		{ "Unsqueeze", 1 }, { "Squeeze", 1 }, { "ReduceMean", 1 }, { "ReduceMax", 1 },
		{ "ConstantOfShape", 0 },
	};
	bool used = false;
	for (size_t n = 0; n < I->g->n_nodes; n++) {
		const st_onnx_node *nd = &I->g->nodes[n];
		for (size_t k = 0; k < nd->n_inputs; k++) {
			if (nd->inputs[k].len != name.len || memcmp(nd->inputs[k].data, name.data, name.len) != 0)
				continue;
			used = true;
			unsigned runtime = ~0u;
			for (size_t j = 0; j < sizeof ops / sizeof *ops; j++) {
				if (st_onnx_str_eq(nd->op_type, ops[j].op))
					runtime = ops[j].runtime;
			}
			if (k < 32 && (runtime >> k & 1u))
				return false;
		}
	}
	for (size_t k = 0; k < I->g->n_outputs; k++) {
		st_onnx_str o = I->g->outputs[k].name;
		if (o.len == name.len && memcmp(o.data, name.data, name.len) == 0)
			return false;
	}
	return used;
}

/* The size the caller gave a named dimension ("N=1"), or -1. */
static int64_t
named_dim(imp *I, st_onnx_str name)
{
	for (int k = 0; k < I->opt->n_dims; k++) {
		if (st_onnx_str_eq(name, I->opt->dim_names[k]))
			return I->opt->dim_values[k];
	}
	return -1;
}

static int
add_graph_input(imp *I, const st_onnx_value_info *vi, int index)
{
	char *name = st_onnx_str_dup(vi->name);
	const st_onnx_tensor *known = known_value(I, vi->name);
	val *v = get_val(I, vi->name);
	/* A known value no input layer can hold (rank 0, an empty axis) is a
	 * constant too. */
	bool unfeedable = known != NULL && known->n_dims <= ST_MAX_RANK && (known->n_dims == 0 || known->count == 0);
	if (known != NULL && (unfeedable || needed_only_as_constant(I, vi->name))) {
		cten *c = cten_from_tensor(known, I->why, sizeof I->why);
		if (c == NULL) {
			st_diag_add(I->d, ST_SEVERITY_ERROR, NULL, 0, 0, "graph.input[%d] '%s': %s", index, name, I->why);
			free(name);
			I->errors++;
			return -1;
		}
		v->c = c;
		free(name);
		return 0;
	}
	if (!vi->has_type || vi->type.kind != ST_ONNX_TYPE_TENSOR) {
		st_diag_add(I->d, ST_SEVERITY_ERROR, NULL, 0, 0,
		            "graph.input[%d] '%s' is not a tensor (sequence, map or optional values are not supported)",
		            index, name);
		free(name);
		I->errors++;
		return -1;
	}
	const st_onnx_type *t = &vi->type;
	int dt = t->has_elem_type ? st_onnx_dtype(t->elem_type) : ST_DTYPE_FLOAT32;
	if (dt < 0) {
		st_diag_add(I->d, ST_SEVERITY_ERROR, NULL, 0, 0, "graph.input[%d] '%s' has type %s, which Strata cannot feed",
		            index, name, st_onnx_data_type_name(t->elem_type));
		free(name);
		I->errors++;
		return -1;
	}
	int64_t dims[ST_MAX_RANK];
	int rank;
	const st_shape *fixed = NULL;
	for (int k = 0; k < I->opt->n_shapes; k++) {
		if (st_onnx_str_eq(vi->name, I->opt->shape_names[k]))
			fixed = &I->opt->shapes[k];
	}
	if (fixed != NULL) {
		if (t->has_shape && t->n_dims != (size_t)fixed->rank) {
			st_diag_add(I->d, ST_SEVERITY_ERROR, NULL, 0, 0,
			            "graph.input[%d] '%s' has %zu axes; the shape fixed for it has %d", index, name,
			            t->n_dims, fixed->rank);
			free(name);
			I->errors++;
			return -1;
		}
		for (int k = 0; k < fixed->rank && t->has_shape; k++) {
			const st_onnx_dim *dm = &t->dims[k];
			if (dm->has_value && dm->value >= 0 && dm->value != fixed->dims[k])
				st_diag_add(I->d, ST_SEVERITY_WARNING, NULL, 0, 0,
				            "graph.input[%d] '%s': dimension %d is %" PRId64 " in the file, %" PRId64
				            " as fixed",
				            index, name, k, dm->value, fixed->dims[k]);
		}
		rank = fixed->rank;
		memcpy(dims, fixed->dims, sizeof dims);
	} else if (known != NULL && known->n_dims <= ST_MAX_RANK) {
		rank = (int)known->n_dims;
		for (int k = 0; k < rank; k++)
			dims[k] = known->dims[k];
	} else if (t->has_shape && t->n_dims <= ST_MAX_RANK) {
		rank = (int)t->n_dims;
		int64_t def = I->opt->default_dim > 0 ? I->opt->default_dim : 1;
		for (int k = 0; k < rank; k++) {
			const st_onnx_dim *dm = &t->dims[k];
			int64_t given = dm->has_value && dm->value >= 0 ? dm->value : -1;
			if (given < 0 && dm->param.len > 0)
				given = named_dim(I, dm->param);
			dims[k] = given >= 0 ? given : def;
			if (given < 0)
				st_diag_add(I->d, ST_SEVERITY_INFO, NULL, 0, 0,
				            "graph.input[%d] '%s': dimension %d%s%.*s%s is set to %" PRId64, index, name, k,
				            dm->param.len ? " ('" : "", (int)dm->param.len, dm->param.data ? dm->param.data : "",
				            dm->param.len ? "')" : "", def);
		}
	} else {
		st_diag_add(I->d, ST_SEVERITY_ERROR, NULL, 0, 0, "graph.input[%d] '%s' has no shape (or rank above %d)",
		            index, name, ST_MAX_RANK);
		free(name);
		I->errors++;
		return -1;
	}
	if (rank == 0 || dims[0] < 1) {
		st_diag_add(I->d, ST_SEVERITY_ERROR, NULL, 0, 0,
		            "graph.input[%d] '%s': Strata's inputs have a batch axis of at least 1 (this one has rank %d)",
		            index, name, rank);
		free(name);
		I->errors++;
		return -1;
	}
	st_layer *l = add_layer(I, "input", name);
	free(name);
	if (set_dims(I, l, "dims", dims + 1, rank - 1) != 0 || set_param(I, l, "batch", "%" PRId64, dims[0]) != 0 ||
	    set_param(I, l, "dtype", "%s", st_dtype_name((st_dtype)dt)) != 0)
		return -1;
	v->port = (st_port){ l, 0 };
	return 0;
}

static int
add_graph_output(imp *I, size_t index, char **layer)
{
	const st_onnx_value_info *vi = &I->g->outputs[index];
	val *v = find_val(I, vi->name);
	char *name = st_onnx_str_dup(vi->name);
	if (v == NULL || (v->port.layer == NULL && v->c == NULL)) {
		st_diag_add(I->d, ST_SEVERITY_ERROR, NULL, 0, 0,
		            "graph.output[%zu] '%s' is not produced by any node, initializer or input", index, name);
		free(name);
		I->errors++;
		return -1;
	}
	st_port p = v->port;
	if (p.layer == NULL) {
		I->node = NULL;
		int rc = const_port(I, v, &p);
		if (rc != 0) {
			if (rc > 0)
				st_diag_add(I->d, ST_SEVERITY_ERROR, NULL, 0, 0, "graph.output[%zu] '%s': %s", index, name, I->why);
			free(name);
			I->errors++;
			return -1;
		}
	}
	/* The output layer takes the ONNX name; a layer already called that
	 * (say, the one producing it) keeps it, and the output gets "_out". */
	char *base = sanitize(name);
	char *hint = st_graph_find(I->graph, base) ? st_xasprintf("%s_out", base) : st_xstrdup(base);
	free(base);
	st_layer *l = add_layer(I, "output", hint);
	free(hint);
	free(name);
	link_in(I, l, 0, p);
	*layer = st_xstrdup(l->name);
	return 0;
}

/* Orders the nodes so that each comes after what it reads (ONNX requires
 * it, but files are not always right). Returns the order (caller frees),
 * or NULL after reporting a cycle. */
static size_t *
node_order(imp *I)
{
	const st_onnx_graph *g = I->g;
	size_t n = g->n_nodes;
	size_t *order = st_xmalloc((n ? n : 1) * sizeof *order);
	st_map producer;
	st_map_init(&producer);
	char **keys = st_xcalloc(n ? n : 1, sizeof *keys);
	size_t n_keys = 0;
	/* Producer of every output name (node index + 1). */
	size_t total_out = 0;
	for (size_t k = 0; k < n; k++)
		total_out += g->nodes[k].n_outputs;
	keys = st_xreallocarray(keys, total_out ? total_out : 1, sizeof *keys);
	for (size_t k = 0; k < n; k++) {
		for (size_t j = 0; j < g->nodes[k].n_outputs; j++) {
			if (g->nodes[k].outputs[j].len == 0)
				continue;
			keys[n_keys] = st_onnx_str_dup(g->nodes[k].outputs[j]);
			if (st_map_get(&producer, keys[n_keys]) == NULL)
				st_map_put(&producer, keys[n_keys], (void *)(k + 1));
			n_keys++;
		}
	}
	int *pending = st_xcalloc(n ? n : 1, sizeof *pending);
	size_t *adj_start = st_xcalloc(n + 1, sizeof *adj_start);
	size_t n_edges = 0;
	for (size_t k = 0; k < n; k++)
		n_edges += g->nodes[k].n_inputs;
	size_t *edge_from = st_xmalloc((n_edges ? n_edges : 1) * sizeof *edge_from);
	size_t *edge_to = st_xmalloc((n_edges ? n_edges : 1) * sizeof *edge_to);
	size_t e = 0;
	for (size_t k = 0; k < n; k++) {
		for (size_t j = 0; j < g->nodes[k].n_inputs; j++) {
			if (g->nodes[k].inputs[j].len == 0)
				continue;
			char *name = st_onnx_str_dup(g->nodes[k].inputs[j]);
			size_t p = (size_t)st_map_get(&producer, name);
			free(name);
			if (p == 0)
				continue;
			edge_from[e] = p - 1;
			edge_to[e] = k;
			e++;
			pending[k]++;
			adj_start[p - 1 + 1]++;
		}
	}
	for (size_t k = 0; k < n; k++)
		adj_start[k + 1] += adj_start[k];
	size_t *adj = st_xmalloc((e ? e : 1) * sizeof *adj), *fill = st_xcalloc(n ? n : 1, sizeof *fill);
	for (size_t k = 0; k < e; k++)
		adj[adj_start[edge_from[k]] + fill[edge_from[k]]++] = edge_to[k];
	/* Kahn's algorithm, taking the lowest index ready first keeps file order. */
	size_t head = 0, count = 0;
	size_t *ready = st_xmalloc((n ? n : 1) * sizeof *ready);
	size_t n_ready = 0;
	for (size_t k = 0; k < n; k++)
		if (pending[k] == 0)
			ready[n_ready++] = k;
	while (head < n_ready) {
		size_t k = ready[head++];
		order[count++] = k;
		for (size_t j = adj_start[k]; j < adj_start[k + 1]; j++)
			if (--pending[adj[j]] == 0)
				ready[n_ready++] = adj[j];
	}
	if (count < n) {
		for (size_t k = 0; k < n; k++) {
			if (pending[k] > 0) {
				const st_onnx_node *nd = &g->nodes[k];
				st_diag_add(I->d, ST_SEVERITY_ERROR, NULL, 0, 0,
				            "graph.node[%zu] \"%.*s\" (%.*s) is part of a cycle: it reads its own output through "
				            "other nodes",
				            k, (int)nd->name.len, nd->name.data ? nd->name.data : "", (int)nd->op_type.len,
				            nd->op_type.data ? nd->op_type.data : "");
				I->errors++;
				break;
			}
		}
		free(order);
		order = NULL;
	}
	free(ready);
	free(adj);
	free(fill);
	free(edge_from);
	free(edge_to);
	free(adj_start);
	free(pending);
	for (size_t k = 0; k < n_keys; k++)
		free(keys[k]);
	free(keys);
	st_map_free(&producer);
	return order;
}

/* ---- the import ---- */

static void
set_network(st_graph *g, int index, const char *text)
{
	st_value v;
	char why[128];
	if (st_value_from_text(&st_network_params[index], text, &v, why, sizeof why) != 0)
		return;
	st_value_clear(&g->network.values[index]);
	g->network.values[index] = v;
	g->network.set[index] = true;
}

/* ---- operator patterns that are one Strata activation or layer ---- */

/* A group of nodes that together compute x·sigmoid(x) and the like, found
 * before the import: the group is made at its last node, the others skip. */
typedef struct fusion {
	const char *act;         /* the activation, or NULL for a layer */
	const char *layer;       /* linear_blend or layer_normalization, when act is NULL */
	bool gelu_tanh;
	st_onnx_str x, b;        /* operands (b: linear_blend's second) */
	double alpha;            /* linear_blend's weight of x */
	int64_t axis;            /* layer_normalization: first normalised axis (negative) */
	double eps;
	st_onnx_str gamma, beta; /* layer_normalization: its scale and bias, when folded in */
	size_t last;             /* the node whose output is the group's */
} fusion;

typedef struct patterns {
	const st_onnx_graph *g;
	st_map consumers;        /* value name -> (consumer count) */
	st_map producer;         /* value name -> node index + 1 */
	st_map first_consumer;   /* value name -> index + 1 of the first node reading it */
	char **keys;
	size_t n_keys, cap_keys;
} patterns;

static char *
pat_key(patterns *P, st_onnx_str s)
{
	char *k = st_onnx_str_dup(s);
	if (P->n_keys == P->cap_keys) {
		P->cap_keys = P->cap_keys ? 2 * P->cap_keys : 64;
		P->keys = st_xreallocarray(P->keys, P->cap_keys, sizeof *P->keys);
	}
	P->keys[P->n_keys++] = k;
	return k;
}

static size_t
pat_count(patterns *P, st_onnx_str s)
{
	char *k = st_onnx_str_dup(s);
	size_t n = (size_t)st_map_get(&P->consumers, k);
	free(k);
	return n;
}

/* The node producing s, or NULL. */
static const st_onnx_node *
pat_producer(patterns *P, st_onnx_str s, size_t *index)
{
	char *k = st_onnx_str_dup(s);
	size_t n = (size_t)st_map_get(&P->producer, k);
	free(k);
	if (n == 0)
		return NULL;
	if (index != NULL)
		*index = n - 1;
	return &P->g->nodes[n - 1];
}

static bool
str_same(st_onnx_str a, st_onnx_str b)
{
	return a.len == b.len && a.len > 0 && memcmp(a.data, b.data, a.len) == 0;
}

static bool
is_op(const st_onnx_node *n, const char *op, size_t n_in)
{
	return n != NULL && st_onnx_str_eq(n->op_type, op) && n->n_inputs == n_in && n->n_outputs >= 1 &&
	       (n->domain.len == 0 || st_onnx_str_eq(n->domain, "ai.onnx"));
}

/* The scalar value of s when it is an initializer or a Constant's output. */
static bool
pat_scalar(imp *I, patterns *P, st_onnx_str s, double *v)
{
	val *known = find_val(I, s);
	if (known != NULL && known->c != NULL) {
		if (known->c->count != 1 || cten_decode(known->c, I->why, sizeof I->why) != 0)
			return false;
		*v = cget(known->c, 0);
		return true;
	}
	const st_onnx_node *c = pat_producer(P, s, NULL);
	if (c == NULL || !is_op(c, "Constant", 0) || c->n_attributes != 1 || c->attributes[0].t == NULL)
		return false;
	cten *t = cten_from_tensor(c->attributes[0].t, I->why, sizeof I->why);
	bool ok = t != NULL && t->count == 1 && cten_decode(t, I->why, sizeof I->why) == 0;
	if (ok)
		*v = cget(t, 0);
	cten_free(t);
	return ok;
}

/* Node n's other operand than s (binary n). */
static bool
other_operand(const st_onnx_node *n, st_onnx_str s, st_onnx_str *other)
{
	if (str_same(n->inputs[0], s)) {
		*other = n->inputs[1];
		return true;
	}
	if (str_same(n->inputs[1], s)) {
		*other = n->inputs[0];
		return true;
	}
	return false;
}

/* The one node reading s, when it is op and nothing else reads s. */
static const st_onnx_node *
sole(patterns *P, st_onnx_str s, const char *op, size_t n_in, size_t *index)
{
	if (pat_count(P, s) != 1)
		return NULL;
	char *k = st_onnx_str_dup(s);
	size_t first = (size_t)st_map_get(&P->first_consumer, k);
	free(k);
	if (first == 0 || !is_op(&P->g->nodes[first - 1], op, n_in))
		return NULL;
	*index = first - 1;
	return &P->g->nodes[first - 1];
}

static bool
near(double a, double b)
{
	return fabs(a - b) <= 1e-5 * fabs(b) + 1e-7;
}

/* Marks the group's nodes (list) as skipped and its last one as the group. */
static void
add_fusion(imp *I, fusion *f, const size_t *nodes, int n, int *role, fusion **groups, int *n_groups)
{
	/* Only what the loaded plugins can make. */
	if ((f->act != NULL && st_registry_find_activation(I->r, f->act) == NULL) ||
	    (f->act == NULL && st_registry_find_layer(I->r, f->layer) == NULL))
		return;
	for (int k = 0; k < n; k++) {
		if (role[nodes[k]] != 0)
			return;
	}
	*groups = st_xreallocarray(*groups, (size_t)*n_groups + 1, sizeof **groups);
	f->last = nodes[n - 1];
	(*groups)[*n_groups] = *f;
	for (int k = 0; k < n - 1; k++)
		role[nodes[k]] = -1;
	role[nodes[n - 1]] = ++*n_groups;
	/* x is read once by the group's replacement. */
	val *x = find_val(I, f->x);
	if (x != NULL) {
		int inside = 0;
		for (int k = 0; k < n; k++) {
			const st_onnx_node *nd = &I->g->nodes[nodes[k]];
			for (size_t j = 0; j < nd->n_inputs; j++)
				inside += str_same(nd->inputs[j], f->x);
		}
		x->uses -= inside - 1;
	}
}

/* x·f(x): Mul reading x and the single output of the chain ending in t. */
static bool
times_x(patterns *P, st_onnx_str x, st_onnx_str t, size_t *mul)
{
	const st_onnx_node *m = sole(P, t, "Mul", 2, mul);
	st_onnx_str o;
	return m != NULL && other_operand(m, t, &o) && str_same(o, x);
}

/* The axes of a ReduceMean node (attribute, or input 1 from opset 18) when
 * they are the last ones, counted from the end (-2, -1), keepdims on: the
 * first of them, else 0. */
static int64_t
mean_axes(imp *I, const st_onnx_node *n)
{
	imp probe = *I;
	probe.node = n;
	if (attr_i(&probe, "keepdims", 1) != 1)
		return 0;
	int64_t axes[ST_MAX_RANK + 1];
	int na = ints_attr_or_input(&probe, "axes", 18, 1, axes, ST_MAX_RANK + 1);
	if (na < 1 || na > ST_MAX_RANK)
		return 0;
	for (int k = 0; k < na; k++) {
		if (axes[k] != -(int64_t)na + k)
			return 0;
	}
	return axes[0];
}

/* Every node reading s, into idx (at most cap); returns how many. */
static int
readers(patterns *P, st_onnx_str s, size_t *idx, int cap)
{
	int n = 0;
	for (size_t k = 0; k < P->g->n_nodes; k++) {
		const st_onnx_node *nd = &P->g->nodes[k];
		for (size_t j = 0; j < nd->n_inputs; j++) {
			if (str_same(nd->inputs[j], s)) {
				if (n < cap)
					idx[n] = k;
				n++;
				break;
			}
		}
	}
	return n;
}

/* Layer normalization written out, as PyTorch and Paddle export it:
 * m = ReduceMean(x); d = x − m; v = ReduceMean(d² or d·d); y = d / √(v + ε),
 * then optionally ·γ and +β with γ, β known. Fills f and the nodes (at,
 * room for 10) and returns their count, or 0. */
static int
layer_norm_pattern(imp *I, patterns *P, size_t head, const int *role, fusion *f, size_t *at)
{
	if (st_registry_find_layer(I->r, "layer_normalization") == NULL)
		return 0;
	const st_onnx_node *mean = &P->g->nodes[head];
	st_onnx_str x = mean->inputs[0], o;
	int64_t axis = mean_axes(I, mean);
	if (axis == 0)
		return 0;
	size_t n_at = 0, idx;
	at[n_at++] = head;
	const st_onnx_node *sub = sole(P, mean->outputs[0], "Sub", 2, &idx);
	if (sub == NULL || !str_same(sub->inputs[0], x) || !str_same(sub->inputs[1], mean->outputs[0]))
		return 0;
	at[n_at++] = idx;
	st_onnx_str d = sub->outputs[0];
	size_t r[3];
	if (readers(P, d, r, 3) != 2)
		return 0;
	const st_onnx_node *sq = NULL, *div = NULL;
	size_t sq_at = 0, div_at = 0;
	for (int k = 0; k < 2; k++) {
		const st_onnx_node *nd = &P->g->nodes[r[k]];
		double c;
		if ((is_op(nd, "Pow", 2) && str_same(nd->inputs[0], d) && pat_scalar(I, P, nd->inputs[1], &c) && c == 2) ||
		    (is_op(nd, "Mul", 2) && str_same(nd->inputs[0], d) && str_same(nd->inputs[1], d))) {
			sq = nd;
			sq_at = r[k];
		} else if (is_op(nd, "Div", 2) && str_same(nd->inputs[0], d)) {
			div = nd;
			div_at = r[k];
		}
	}
	/* d is read by these two nodes only (Mul(d, d) reads it twice). */
	if (sq == NULL || div == NULL || pat_count(P, d) != (str_same(sq->inputs[1], d) ? 3u : 2u))
		return 0;
	at[n_at++] = sq_at;
	const st_onnx_node *var;
	size_t var_at;
	if (pat_count(P, sq->outputs[0]) != 1 || readers(P, sq->outputs[0], &var_at, 1) != 1)
		return 0;
	var = &P->g->nodes[var_at];
	if (!st_onnx_str_eq(var->op_type, "ReduceMean") || !str_same(var->inputs[0], sq->outputs[0]) ||
	    mean_axes(I, var) != axis)
		return 0;
	at[n_at++] = var_at;
	double eps;
	const st_onnx_node *add = sole(P, var->outputs[0], "Add", 2, &idx);
	if (add == NULL || !other_operand(add, var->outputs[0], &o) || !pat_scalar(I, P, o, &eps) || eps < 0)
		return 0;
	at[n_at++] = idx;
	const st_onnx_node *sqrt_node = sole(P, add->outputs[0], "Sqrt", 1, &idx);
	if (sqrt_node == NULL)
		return 0;
	at[n_at++] = idx;
	if (pat_count(P, sqrt_node->outputs[0]) != 1 || !str_same(div->inputs[1], sqrt_node->outputs[0]))
		return 0;
	at[n_at++] = div_at;
	*f = (fusion){ .layer = "layer_normalization", .x = x, .axis = axis, .eps = eps };
	/* ·γ and +β, when they are known tensors. */
	st_onnx_str y = div->outputs[0];
	const st_onnx_node *mul = sole(P, y, "Mul", 2, &idx);
	val *g;
	if (mul != NULL && other_operand(mul, y, &o) && (g = find_val(I, o)) != NULL && g->c != NULL) {
		f->gamma = o;
		at[n_at++] = idx;
		y = mul->outputs[0];
		const st_onnx_node *badd = sole(P, y, "Add", 2, &idx);
		val *b;
		if (badd != NULL && other_operand(badd, y, &o) && (b = find_val(I, o)) != NULL && b->c != NULL) {
			f->beta = o;
			at[n_at++] = idx;
		}
	}
	/* Nodes in topological order end with the group's output: sort them. */
	for (size_t k = 1; k < n_at; k++)
		for (size_t j = k; j > 0 && at[j - 1] > at[j]; j--) {
			size_t t = at[j];
			at[j] = at[j - 1];
			at[j - 1] = t;
		}
	for (size_t k = 0; k < n_at; k++) {
		if (role[at[k]] != 0)
			return 0;
	}
	return (int)n_at;
}

/* Finds the groups; role[i] is 0 (a node of its own), -1 (inside a group)
 * or g + 1 (the last node of groups[g]). */
static void
find_patterns(imp *I, int *role, fusion **groups, int *n_groups)
{
	patterns P = { .g = I->g };
	st_map_init(&P.consumers);
	st_map_init(&P.producer);
	st_map_init(&P.first_consumer);
	for (size_t k = 0; k < I->g->n_nodes; k++) {
		const st_onnx_node *n = &I->g->nodes[k];
		for (size_t j = 0; j < n->n_inputs; j++) {
			if (n->inputs[j].len == 0)
				continue;
			char *key = pat_key(&P, n->inputs[j]);
			size_t c = (size_t)st_map_get(&P.consumers, key);
			st_map_put(&P.consumers, key, (void *)(c + 1));
			if (c == 0)
				st_map_put(&P.first_consumer, key, (void *)(k + 1));
		}
		for (size_t j = 0; j < n->n_outputs; j++) {
			if (n->outputs[j].len > 0)
				st_map_put(&P.producer, pat_key(&P, n->outputs[j]), (void *)(k + 1));
		}
	}
	/* Graph outputs count as readers: a value the graph returns stays. */
	for (size_t k = 0; k < I->g->n_outputs; k++) {
		char *key = pat_key(&P, I->g->outputs[k].name);
		size_t c = (size_t)st_map_get(&P.consumers, key);
		st_map_put(&P.consumers, key, (void *)(c + 2));
	}
	for (size_t k = 0; k < I->g->n_nodes; k++) {
		const st_onnx_node *n = &I->g->nodes[k];
		if (role[k] != 0)
			continue;
		size_t at[10];
		fusion f = { 0 };
		double c;
		if (is_op(n, "Sigmoid", 1) && times_x(&P, n->inputs[0], n->outputs[0], &at[1])) {
			at[0] = k;
			f = (fusion){ .act = "silu", .x = n->inputs[0] };
			add_fusion(I, &f, at, 2, role, groups, n_groups);
		} else if (is_op(n, "HardSigmoid", 1) && near(attr_f(&(imp){ .node = n }, "alpha", 0.2), 1.0 / 6) &&
		           near(attr_f(&(imp){ .node = n }, "beta", 0.5), 0.5) &&
		           times_x(&P, n->inputs[0], n->outputs[0], &at[1])) {
			at[0] = k;
			f = (fusion){ .act = "hard_swish", .x = n->inputs[0] };
			add_fusion(I, &f, at, 2, role, groups, n_groups);
		} else if (is_op(n, "Softplus", 1)) {
			const st_onnx_node *t = sole(&P, n->outputs[0], "Tanh", 1, &at[1]);
			if (t != NULL && times_x(&P, n->inputs[0], t->outputs[0], &at[2])) {
				at[0] = k;
				f = (fusion){ .act = "mish", .x = n->inputs[0] };
				add_fusion(I, &f, at, 3, role, groups, n_groups);
			}
		} else if (is_op(n, "Div", 2) && pat_scalar(I, &P, n->inputs[1], &c) && near(c, sqrt(2.0))) {
			/* 0.5·x·(1 + erf(x / √2)), the 0.5 first or last. */
			st_onnx_str x = n->inputs[0], o;
			const st_onnx_node *e = sole(&P, n->outputs[0], "Erf", 1, &at[1]);
			const st_onnx_node *a = e ? sole(&P, e->outputs[0], "Add", 2, &at[2]) : NULL;
			if (a == NULL || !other_operand(a, e->outputs[0], &o) || !pat_scalar(I, &P, o, &c) || !near(c, 1))
				continue;
			const st_onnx_node *m1 = sole(&P, a->outputs[0], "Mul", 2, &at[3]);
			if (m1 == NULL || !other_operand(m1, a->outputs[0], &o))
				continue;
			const st_onnx_node *m2 = sole(&P, m1->outputs[0], "Mul", 2, &at[4]);
			st_onnx_str o2;
			if (m2 == NULL || !other_operand(m2, m1->outputs[0], &o2))
				continue;
			/* Mul(x, u) then Mul(·, 0.5), or Mul(x·0.5, u). */
			bool ok = str_same(o, x) && pat_scalar(I, &P, o2, &c) && near(c, 0.5);
			if (!ok)
				continue;
			at[0] = k;
			f = (fusion){ .act = "gelu", .x = x };
			add_fusion(I, &f, at, 5, role, groups, n_groups);
		} else if (is_op(n, "Mul", 2) && str_same(n->inputs[0], n->inputs[1])) {
			/* 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))) as the exporter writes it. */
			st_onnx_str x = n->inputs[0], o;
			const st_onnx_node *x3 = sole(&P, n->outputs[0], "Mul", 2, &at[1]);
			if (x3 == NULL || !other_operand(x3, n->outputs[0], &o) || !str_same(o, x))
				continue;
			const st_onnx_node *a = sole(&P, x3->outputs[0], "Mul", 2, &at[2]);
			if (a == NULL || !other_operand(a, x3->outputs[0], &o) || !pat_scalar(I, &P, o, &c) || !near(c, 0.044715))
				continue;
			const st_onnx_node *b = sole(&P, a->outputs[0], "Add", 2, &at[3]);
			if (b == NULL || !other_operand(b, a->outputs[0], &o) || !str_same(o, x))
				continue;
			const st_onnx_node *cc = sole(&P, b->outputs[0], "Mul", 2, &at[4]);
			if (cc == NULL || !other_operand(cc, b->outputs[0], &o) || !pat_scalar(I, &P, o, &c) ||
			    !near(c, sqrt(2.0 / 3.14159265358979323846)))
				continue;
			const st_onnx_node *t = sole(&P, cc->outputs[0], "Tanh", 1, &at[5]);
			const st_onnx_node *u = t ? sole(&P, t->outputs[0], "Add", 2, &at[6]) : NULL;
			if (u == NULL || !other_operand(u, t->outputs[0], &o) || !pat_scalar(I, &P, o, &c) || !near(c, 1))
				continue;
			const st_onnx_node *v = sole(&P, u->outputs[0], "Mul", 2, &at[7]);
			if (v == NULL || !other_operand(v, u->outputs[0], &o) || !str_same(o, x))
				continue;
			const st_onnx_node *h = sole(&P, v->outputs[0], "Mul", 2, &at[8]);
			if (h == NULL || !other_operand(h, v->outputs[0], &o) || !pat_scalar(I, &P, o, &c) || !near(c, 0.5))
				continue;
			at[0] = k;
			f = (fusion){ .act = "gelu", .gelu_tanh = true, .x = x };
			add_fusion(I, &f, at, 9, role, groups, n_groups);
		} else if (st_onnx_str_eq(n->op_type, "ReduceMean") && n->n_inputs >= 1 && n->n_outputs >= 1) {
			f = (fusion){ 0 };
			int n_at = layer_norm_pattern(I, &P, k, role, &f, at);
			if (n_at > 0)
				add_fusion(I, &f, at, n_at, role, groups, n_groups);
		} else if (is_op(n, "Add", 2)) {
			/* alpha·a + (1 − alpha)·b */
			size_t i1 = 0, i2 = 0;
			const st_onnx_node *m1 = pat_producer(&P, n->inputs[0], &i1), *m2 = pat_producer(&P, n->inputs[1], &i2);
			if (!is_op(m1, "Mul", 2) || !is_op(m2, "Mul", 2) || m1 == m2 || pat_count(&P, n->inputs[0]) != 1 ||
			    pat_count(&P, n->inputs[1]) != 1 || role[i1] != 0 || role[i2] != 0)
				continue;
			double c1, c2;
			int s1 = pat_scalar(I, &P, m1->inputs[1], &c1) ? 1 : pat_scalar(I, &P, m1->inputs[0], &c1) ? 0 : -1;
			int s2 = pat_scalar(I, &P, m2->inputs[1], &c2) ? 1 : pat_scalar(I, &P, m2->inputs[0], &c2) ? 0 : -1;
			if (s1 < 0 || s2 < 0 || !near(c1 + c2, 1) || c1 < 0 || c1 > 1)
				continue;
			size_t order[3] = { i1 < i2 ? i1 : i2, i1 < i2 ? i2 : i1, k };
			f = (fusion){ .layer = "linear_blend", .x = m1->inputs[1 - s1], .b = m2->inputs[1 - s2], .alpha = c1 };
			add_fusion(I, &f, order, 3, role, groups, n_groups);
		}
	}
	for (size_t k = 0; k < P.n_keys; k++)
		free(P.keys[k]);
	free(P.keys);
	st_map_free(&P.consumers);
	st_map_free(&P.producer);
	st_map_free(&P.first_consumer);
}

/* Makes a found group at its last node. */
static int
map_fusion(imp *I, const fusion *f)
{
	st_onnx_node node = *I->node;
	/* Exporters name a group's nodes after what they compute ("ln/Sqrt",
	 * "/encoder/norm/Div"): the layer takes the part before the last '/'. */
	for (size_t k = node.name.len; k > 1; k--) {
		if (node.name.data[k - 1] == '/') {
			node.name.len = k - 1;
			break;
		}
	}
	st_onnx_str in[2] = { f->x, f->b };
	node.inputs = in;
	node.n_inputs = f->act ? 1 : 2;
	node.n_attributes = 0;
	const st_onnx_node *real = I->node;
	I->node = &node;
	int rc;
	if (f->act != NULL) {
		st_layer *l;
		rc = activation(I, f->act, &l);
		if (rc == 0 && f->gelu_tanh)
			rc = set_act_param(I, l, "approximate", 1);
	} else if (strcmp(f->layer, "layer_normalization") == 0) {
		val *g = f->gamma.len ? find_val(I, f->gamma) : NULL, *b = f->beta.len ? find_val(I, f->beta) : NULL;
		rc = layer_norm_layer(I, f->axis, f->eps, g ? g->c : NULL, b ? b->c : NULL);
	} else {
		st_port a, b;
		rc = in_port(I, 0, &a);
		if (rc == 0)
			rc = in_port(I, 1, &b);
		if (rc == 0) {
			st_layer *l = node_layer(I, "linear_blend");
			link_in(I, l, 0, a);
			link_in(I, l, 1, b);
			set_out_port(I, 0, l, 0);
			rc = set_double(I, l, "alpha", (float)f->alpha);
		}
	}
	I->node = real;
	if (rc > 0) {
		node_msg(I, ST_SEVERITY_ERROR, "%s", I->why);
		rc = -1;
	}
	return rc;
}

/* Imports one node: as part of a found pattern (role, find_patterns), or
 * through its operator's mapping, or as a placeholder when it has none. */
static int
import_one(imp *I, size_t index, int role, const fusion *groups)
{
	I->node_index = index;
	I->node = &I->g->nodes[index];
	I->why[0] = '\0';
	if (role < 0) {
		I->n_folded++;
		return 0;
	}
	for (size_t k = 0; k < I->node->n_inputs && role == 0; k++) {
		if (!has_input(I, k))
			continue;
		val *v = in_val(I, k);
		if (v == NULL || (v->port.layer == NULL && v->c == NULL)) {
			node_msg(I, ST_SEVERITY_ERROR,
			         "input %zu '%.*s' is not produced by any node, initializer or graph input", k,
			         (int)I->node->inputs[k].len, I->node->inputs[k].data);
			return -1;
		}
	}
	if (I->node->op_type.len == 0) {
		node_msg(I, ST_SEVERITY_ERROR, "the node has no op_type");
		return -1;
	}
	int mark = I->graph->n_layers;
	int rc = role > 0 ? map_fusion(I, &groups[role - 1]) : map_node(I);
	if (rc > 0) {
		rollback(I, mark);
		node_msg(I, ST_SEVERITY_INFO, "kept as an onnx_operator layer: %s", I->why);
		rc = placeholder(I);
	}
	return rc;
}

int
import_plain(imp *I, size_t index)
{
	return import_one(I, index, 0, NULL);
}

static int
import_nodes(imp *I)
{
	size_t *order = node_order(I);
	if (order == NULL)
		return -1;
	int rc = 0;
	int *role = st_xcalloc(I->g->n_nodes ? I->g->n_nodes : 1, sizeof *role);
	fusion *groups = NULL;
	int n_groups = 0;
	find_patterns(I, role, &groups, &n_groups);
	/* XWN layers named in the metadata take their nodes over. */
	xwn_plan_read(I, role);
	for (size_t o = 0; o < I->g->n_nodes && rc == 0; o++) {
		int x = xwn_role(I, order[o]);
		if (x < 0)
			continue; /* a cascade's part: imported with the cascade's last node */
		rc = x > 0 ? xwn_import(I, x - 1) : import_one(I, order[o], role[order[o]], groups);
	}
	I->node = NULL;
	xwn_plan_free(I);
	free(order);
	free(role);
	free(groups);
	return rc;
}

int
st_onnx_import_model(const st_onnx_model *m, const st_registry *r, const st_onnx_import_options *opt,
               st_onnx_import *out, st_diag *d)
{
	static const st_onnx_import_options defaults = { 0 };
	memset(out, 0, sizeof *out);
	imp I = { .m = m, .g = m->graph, .opt = opt ? opt : &defaults, .r = r, .d = d };
	if (I.g == NULL) {
		st_diag_add(d, ST_SEVERITY_ERROR, NULL, 0, 0, "the model has no graph");
		return -1;
	}
	st_onnx_str def = { "", 0 };
	I.opset = domain_version(m, def);
	if (I.opset == 0)
		I.opset = 1;
	if (I.opt->weights_dir != NULL) {
		char err[512];
		if (st_make_dirs(I.opt->weights_dir, err, sizeof err) != 0) {
			st_diag_add(d, ST_SEVERITY_ERROR, NULL, 0, 0, "%s", err);
			return -1;
		}
	}
	st_map_init(&I.vals);
	I.graph = st_graph_new(r);
	out->graph = I.graph;
	out->opset = I.opset;
	int rc = 0;
	if (I.g->name.len > 0) {
		char *name = st_onnx_str_dup(I.g->name);
		set_network(I.graph, ST_NET_NAME, name);
		free(name);
	}
	if (m->doc_string.len > 0 || I.g->doc_string.len > 0) {
		char *doc = st_onnx_str_dup(I.g->doc_string.len ? I.g->doc_string : m->doc_string);
		set_network(I.graph, ST_NET_DESCRIPTION, doc);
		free(doc);
	}
	for (size_t k = 0; k < I.g->n_initializers && rc == 0; k++) {
		const st_onnx_tensor *t = &I.g->initializers[k];
		if (t->name.len == 0) {
			st_diag_add(d, ST_SEVERITY_ERROR, NULL, 0, 0, "graph.initializer[%zu] has no name", k);
			rc = -1;
			break;
		}
		cten *c = cten_from_tensor(t, I.why, sizeof I.why);
		if (c == NULL) {
			st_diag_add(d, ST_SEVERITY_WARNING, NULL, 0, 0, "graph.initializer[%zu]: %s", k, I.why);
			continue;
		}
		val *v = get_val(&I, t->name);
		cten_free(v->c);
		v->c = c;
	}
	/* Inputs that are not initializers (IR 3 lists initializers there too). */
	int n_inputs = 0;
	for (size_t k = 0; k < I.g->n_inputs; k++)
		n_inputs += !is_initializer(I.g, I.g->inputs[k].name);
	out->input_layers = st_xcalloc((size_t)(n_inputs ? n_inputs : 1), sizeof *out->input_layers);
	for (size_t k = 0; k < I.g->n_inputs && rc == 0; k++) {
		if (is_initializer(I.g, I.g->inputs[k].name))
			continue;
		int i = out->n_inputs++;
		rc = add_graph_input(&I, &I.g->inputs[k], (int)k);
		val *v = find_val(&I, I.g->inputs[k].name);
		if (rc == 0 && v != NULL && v->port.layer != NULL)
			out->input_layers[i] = st_xstrdup(v->port.layer->name);
	}
	for (size_t k = 0; k < I.g->n_nodes; k++) {
		for (size_t j = 0; j < I.g->nodes[k].n_inputs; j++) {
			if (I.g->nodes[k].inputs[j].len > 0)
				get_val(&I, I.g->nodes[k].inputs[j])->uses++;
		}
	}
	for (size_t k = 0; k < I.g->n_outputs; k++)
		get_val(&I, I.g->outputs[k].name)->graph_output = true;
	if (rc == 0)
		rc = import_nodes(&I);
	out->output_layers = st_xcalloc(I.g->n_outputs ? I.g->n_outputs : 1, sizeof *out->output_layers);
	for (size_t k = 0; k < I.g->n_outputs && rc == 0; k++) {
		rc = add_graph_output(&I, k, &out->output_layers[k]);
		out->n_outputs++;
	}
	if (rc == 0)
		st_graph_check(I.graph);
	out->n_placeholders = I.n_placeholders;
	out->n_folded = I.n_folded;
	out->n_xwn = I.n_xwn;
	out->n_xwn_transformed = I.n_xwn_transformed;
	for (int k = 0; k < I.n_all; k++) {
		cten_free(I.all[k]->c);
		free(I.all[k]->name);
		free(I.all[k]);
	}
	free(I.all);
	st_map_free(&I.vals);
	return rc == 0 && I.errors == 0 ? 0 : -1;
}

void
st_onnx_import_free(st_onnx_import *im)
{
	if (im == NULL)
		return;
	if (im->graph != NULL)
		st_graph_free(im->graph);
	for (int k = 0; k < im->n_inputs; k++)
		free(im->input_layers[k]);
	free(im->input_layers);
	for (int k = 0; k < im->n_outputs; k++)
		free(im->output_layers[k]);
	free(im->output_layers);
	memset(im, 0, sizeof *im);
}

/* ---- importing files ---- */

/* "dir/name.onnx" -> "name.strata.json"; caller frees. */
char *
st_onnx_default_model_path(const char *onnx)
{
	const char *base = strrchr(onnx, '/');
	base = base ? base + 1 : onnx;
	size_t n = strlen(base);
	if (n > 5 && strcmp(base + n - 5, ".onnx") == 0)
		n -= 5;
	if (n == 0)
		return st_xstrdup("model.strata.json");
	return st_xasprintf("%.*s.strata.json", (int)n, base);
}

/* "dir/name.strata.json" -> "dir/name-weights"; caller frees. */
char *
st_onnx_default_weights_path(const char *model)
{
	const char *base = strrchr(model, '/');
	base = base ? base + 1 : model;
	const char *dot = strchr(base, '.');
	size_t stem = dot && dot > base ? (size_t)(dot - model) : strlen(model);
	return st_xasprintf("%.*s-weights", (int)stem, model);
}

static bool
dir_has_files(const char *dir)
{
	DIR *d = opendir(dir);
	if (d == NULL)
		return false;
	struct dirent *e;
	bool any = false;
	while (!any && (e = readdir(d)) != NULL)
		any = strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
	closedir(d);
	return any;
}

/* The weights setting to write: the folder relative to the model's own
 * folder when it lies inside it, else its absolute path. Caller frees. */
static char *
weights_setting(const char *model, const char *weights, bool *outside)
{
	char *mdir = st_xstrdup(model);
	char *slash = strrchr(mdir, '/');
	if (slash != NULL)
		*slash = '\0';
	else
		strcpy(mdir, ".");
	char rm[PATH_MAX], rw[PATH_MAX];
	char *out;
	if (realpath(mdir, rm) != NULL && realpath(weights, rw) != NULL) {
		size_t n = strlen(rm);
		if (strncmp(rw, rm, n) == 0 && rw[n] == '/') {
			*outside = false;
			out = st_xstrdup(rw + n + 1);
		} else {
			*outside = true;
			out = st_xstrdup(rw);
		}
	} else {
		*outside = true;
		out = st_xstrdup(weights);
	}
	free(mdir);
	return out;
}

int
st_onnx_import_file(const char *onnx, const char *model, const char *weights, const st_registry *r,
                    const st_onnx_file_options *fo, st_onnx_import_summary *sum, st_diag *d)
{
	memset(sum, 0, sizeof *sum);
	char err[1024];
	if (!fo->force && access(model, F_OK) == 0) {
		st_diag_add(d, ST_SEVERITY_ERROR, NULL, 0, 0, "%s exists; replace it with --force, or write elsewhere", model);
		return -2;
	}
	if (!fo->force && dir_has_files(weights)) {
		st_diag_add(d, ST_SEVERITY_ERROR, NULL, 0, 0,
		            "the weights folder %s already holds files; replace it with --force, or write elsewhere", weights);
		return -2;
	}
	st_onnx_model m;
	if (st_onnx_open(onnx, &m, err, sizeof err) != 0) {
		st_diag_add(d, ST_SEVERITY_ERROR, NULL, 0, 0, "%s", err);
		st_onnx_free(&m);
		return -2;
	}
	char *tmp = st_xasprintf("%s.importing-%ld", weights, (long)getpid());
	st_onnx_import res;
	st_onnx_import_options opt = { .weights_dir = tmp, .default_dim = fo->default_dim, .n_dims = fo->n_dims,
		                       .dim_names = fo->dim_names, .dim_values = fo->dim_values,
		                       .n_shapes = fo->n_shapes, .shape_names = fo->shape_names,
		                       .shapes = fo->shapes };
	int rc = st_onnx_import_model(&m, r, &opt, &res, d) == 0 ? 0 : -1;
	st_graph *g = res.graph;
	char *old = NULL;
	struct stat sb;
	if (rc == 0 && fo->place != NULL)
		fo->place(g);
	/* Move the weights into place, then point the model at them. */
	if (rc == 0 && stat(weights, &sb) == 0) {
		old = st_xasprintf("%s.replaced-%ld", weights, (long)getpid());
		if (rename(weights, old) != 0) {
			st_diag_add(d, ST_SEVERITY_ERROR, NULL, 0, 0, "cannot move the old %s aside: %s", weights, strerror(errno));
			free(old);
			old = NULL;
			rc = -1;
		}
	}
	if (rc == 0 && rename(tmp, weights) != 0) {
		st_diag_add(d, ST_SEVERITY_ERROR, NULL, 0, 0, "cannot create %s: %s", weights, strerror(errno));
		if (old != NULL)
			(void)rename(old, weights);
		free(old);
		old = NULL;
		rc = -1;
	}
	if (rc == 0) {
		char *setting = weights_setting(model, weights, &sum->weights_outside);
		st_value_clear(&g->network.values[ST_NET_WEIGHTS]);
		g->network.values[ST_NET_WEIGHTS].kind = ST_PARAM_STRING;
		g->network.values[ST_NET_WEIGHTS].s = setting;
		g->network.set[ST_NET_WEIGHTS] = true;
		if (st_model_save(g, model, err, sizeof err) != 0) {
			st_diag_add(d, ST_SEVERITY_ERROR, NULL, 0, 0, "%s", err);
			/* Put the old weights back; the new ones go. */
			st_remove_dir(weights);
			if (old != NULL)
				(void)rename(old, weights);
			rc = -1;
		} else if (old != NULL) {
			st_remove_dir(old);
		}
		free(old);
	}
	if (rc == 0) {
		sum->n_layers = g->n_layers;
		sum->errors = g->errors;
		sum->opset = res.opset;
		sum->n_placeholders = res.n_placeholders;
		sum->n_folded = res.n_folded;
		sum->n_xwn = res.n_xwn;
		sum->n_xwn_transformed = res.n_xwn_transformed;
	}
	st_remove_dir(tmp);
	free(tmp);
	st_onnx_import_free(&res);
	st_onnx_free(&m);
	return rc;
}
