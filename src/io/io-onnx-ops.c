/* ONNX import, the operator mappings: what each operator Strata maps
 * becomes (layers, parameters, weights, attached activations), and what is
 * computed at import instead (constants, shape arithmetic). */
#include "config.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io-onnx-internal.h"

/* ---- activations ---- */

static cten *scalar_const(int32_t type, double v);
static int eltwise_const(imp *I, const char *op, st_port a, cten *c, st_port *out);
static void alias_out(imp *I, size_t k, val *v);

int
set_act_param(imp *I, st_layer *l, const char *name, double v)
{
	const st_activation_desc *d = l->act.type->desc;
	int idx = st_params_find(d->params, d->n_params, name);
	if (idx < 0)
		return -1;
	st_buf b;
	st_buf_init(&b);
	if (d->params[idx].kind == ST_PARAM_ENUM)
		st_buf_puts(&b, v != 0 ? "tanh" : "none");
	else
		st_format_double(v, &b);
	st_value nv;
	char why[256];
	int rc = st_value_from_text(&d->params[idx], b.data, &nv, why, sizeof why);
	st_buf_free(&b);
	if (rc != 0) {
		node_msg(I, ST_SEVERITY_ERROR, "activation %s cannot take %s = %g: %s", d->name, name, v, why);
		return -1;
	}
	st_value_clear(&l->act.coef.values[idx]);
	l->act.coef.values[idx] = nv;
	l->act.coef.set[idx] = true;
	return 0;
}

static void
attach(imp *I, st_layer *l, const char *act)
{
	const st_activation_type *t = st_registry_find_activation(I->r, act);
	st_params_clear(&l->act.coef);
	free(l->act.type_name);
	l->act.type_name = st_xstrdup(act);
	l->act.type = t;
	if (t != NULL)
		st_params_init(&l->act.coef, t->desc->params, t->desc->n_params, t->defaults);
	else
		st_params_init(&l->act.coef, NULL, 0, NULL);
	st_graph_touch(I->graph, l);
}

/* The layer an activation on input 0 can attach to (it allows one, has
 * none yet, and nothing else reads the value), or NULL. */
static st_layer *
attach_target(imp *I)
{
	val *v = in_val(I, 0);
	if (v == NULL || v->port.layer == NULL || v->port.output != 0 || v->uses != 1 || v->graph_output)
		return NULL;
	st_layer *l = v->port.layer;
	if (l->type == NULL || !(l->type->desc->flags & ST_LAYER_ACTIVATION) || l->act.type_name != NULL)
		return NULL;
	if (st_registry_find_activation(I->r, "relu") == NULL)
		return NULL;
	return l;
}

/* Attaches act to the layer before, or makes an identity layer for it.
 * *out is the layer carrying it. */
int
activation(imp *I, const char *act, st_layer **out)
{
	if (st_registry_find_activation(I->r, act) == NULL)
		return unsupported(I, "no loaded plugin provides the activation %s", act);
	st_layer *l = attach_target(I);
	if (l != NULL) {
		attach(I, l, act);
		set_out_port(I, 0, l, 0);
		I->n_folded++;
		*out = l;
		return 0;
	}
	int rc = unary_layer(I, "identity", &l);
	if (rc != 0)
		return rc;
	attach(I, l, act);
	*out = l;
	return 0;
}

typedef struct act_map {
	const char *op, *act;
	int since;
	const char *p1;
	double d1;
	const char *p2;
	double d2;
} act_map;

static const act_map act_maps[] = {
	{ "Relu", "relu", 1, NULL, 0, NULL, 0 },
	{ "LeakyRelu", "leaky_relu", 1, "alpha", 0.01, NULL, 0 },
	{ "Elu", "elu", 1, "alpha", 1.0, NULL, 0 },
	{ "Selu", "selu", 1, "alpha", 1.67326319217681884765625, "gamma", 1.05070102214813232421875 },
	{ "Sigmoid", "sigmoid", 1, NULL, 0, NULL, 0 },
	{ "Tanh", "tanh", 1, NULL, 0, NULL, 0 },
	{ "Softplus", "softplus", 1, NULL, 0, NULL, 0 },
	{ "HardSigmoid", "hard_sigmoid", 1, "alpha", 0.2, "beta", 0.5 },
	{ "HardSwish", "hard_swish", 14, NULL, 0, NULL, 0 },
	{ "Mish", "mish", 18, NULL, 0, NULL, 0 },
	{ "Gelu", "gelu", 20, NULL, 0, NULL, 0 },
};

static int
map_act(imp *I, const act_map *a)
{
	const st_shape *s;
	st_shape tmp;
	if ((s = in_shape(I, 0, &tmp)) != NULL && s->dtype != ST_DTYPE_FLOAT32 && s->dtype != ST_DTYPE_FLOAT16)
		return unsupported(I, "%s runs on float tensors here, not %s", a->op, st_dtype_name(s->dtype));
	st_layer *l;
	int rc = activation(I, a->act, &l);
	if (rc != 0)
		return rc;
	if (a->p1 && set_act_param(I, l, a->p1, attr_f(I, a->p1, a->d1)) != 0)
		return -1;
	if (a->p2 && set_act_param(I, l, a->p2, attr_f(I, a->p2, a->d2)) != 0)
		return -1;
	if (strcmp(a->op, "Gelu") == 0) {
		char buf[32];
		const char *ap = attr_s(I, "approximate", "none", buf, sizeof buf);
		if (set_act_param(I, l, "approximate", strcmp(ap, "tanh") == 0) != 0)
			return -1;
	}
	return 0;
}

static int
map_clip(imp *I)
{
	double lo = -FLT_MAX, hi = FLT_MAX;
	if (I->opset < 11) {
		lo = attr_f(I, "min", lo);
		hi = attr_f(I, "max", hi);
	} else {
		for (size_t k = 1; k <= 2; k++) {
			if (!has_input(I, k))
				continue;
			cten *c = in_const(I, k);
			if (c == NULL || c->count != 1)
				return unsupported(I, "its %s bound is not a known scalar", k == 1 ? "min" : "max");
			if (k == 1)
				lo = cget(c, 0);
			else
				hi = cget(c, 0);
		}
	}
	const st_shape *s;
	st_shape tmp;
	if ((s = in_shape(I, 0, &tmp)) != NULL && s->dtype != ST_DTYPE_FLOAT32 && s->dtype != ST_DTYPE_FLOAT16) {
		/* Integers: max with the lower bound, then min with the upper. */
		int32_t t = onnx_of(s->dtype);
		st_port p;
		int rc = in_port(I, 0, &p);
		if (rc != 0)
			return rc;
		double tlo = lo, thi = hi;
		cten *probe = scalar_const(t, 0);
		cset(probe, 0, lo);
		tlo = cget(probe, 0);
		cset(probe, 0, hi);
		thi = cget(probe, 0);
		cten_free(probe);
		bool clamp_lo = lo > -FLT_MAX && tlo == lo, clamp_hi = hi < FLT_MAX && thi == hi;
		if ((lo > -FLT_MAX && !clamp_lo) || (hi < FLT_MAX && !clamp_hi))
			return unsupported(I, "its bounds do not fit %s", st_dtype_name(s->dtype));
		if (clamp_lo && (rc = eltwise_const(I, "max", p, scalar_const(t, lo), &p)) != 0)
			return rc;
		if (clamp_hi && (rc = eltwise_const(I, "min", p, scalar_const(t, hi), &p)) != 0)
			return rc;
		if (!clamp_lo && !clamp_hi) {
			alias_out(I, 0, in_val(I, 0));
			return 0;
		}
		set_out_port(I, 0, p.layer, p.output);
		return 0;
	}
	st_layer *l;
	int rc = activation(I, "clip", &l);
	if (rc != 0)
		return rc;
	return set_act_param(I, l, "min", lo) != 0 || set_act_param(I, l, "max", hi) != 0 ? -1 : 0;
}

/* ---- element-wise ---- */

static int
eltwise_layer(imp *I, const char *op, const st_port *ports, int n, st_layer **out)
{
	st_layer *l = node_layer(I, "elementwise");
	if (set_param(I, l, "operation", "%s", op) != 0)
		return -1;
	for (int k = 0; k < n; k++)
		link_in(I, l, k, ports[k]);
	*out = l;
	return 0;
}

/* Broadcast shape of a and b (numpy rules); -1 when they do not broadcast. */
static int
broadcast(const int64_t *a, int ra, const int64_t *b, int rb, int64_t *out)
{
	int r = ra > rb ? ra : rb;
	for (int k = 0; k < r; k++) {
		int64_t x = k < r - ra ? 1 : a[k - (r - ra)], y = k < r - rb ? 1 : b[k - (r - rb)];
		if (x != y && x != 1 && y != 1)
			return -1;
		out[k] = x == 1 ? y : x;
	}
	return r;
}

static int64_t
bcast_index(const cten *c, int r, const int64_t *idx)
{
	int64_t off = 0;
	for (int k = 0; k < c->rank; k++) {
		int64_t i = idx[r - c->rank + k];
		off = off * c->dims[k] + (c->dims[k] == 1 ? 0 : i);
	}
	return off;
}

static double
binop(const char *op, double a, double b, bool integer)
{
	if (strcmp(op, "add") == 0)
		return a + b;
	if (strcmp(op, "sub") == 0)
		return a - b;
	if (strcmp(op, "mul") == 0)
		return a * b;
	if (strcmp(op, "div") == 0) {
		if (integer)
			return b == 0 ? 0 : trunc(a / b);
		return a / b;
	}
	if (strcmp(op, "max") == 0)
		return a > b || isnan(a) ? a : b;
	if (strcmp(op, "min") == 0)
		return a < b || isnan(a) ? a : b;
	if (strcmp(op, "pow") == 0)
		return pow(a, b);
	if (strcmp(op, "equal") == 0)
		return a == b;
	return 0;
}

/* Folds a binary op over two known tensors; NULL when they do not broadcast. */
static cten *
fold_binary(const char *op, const cten *a, const cten *b)
{
	int64_t dims[ST_MAX_RANK];
	int r = broadcast(a->dims, a->rank, b->dims, b->rank, dims);
	if (r < 0)
		return NULL;
	if (!dims_ok(r, dims))
		return NULL;
	cten *c = cten_new(strcmp(op, "equal") == 0 ? ST_ONNX_BOOL : a->type, r, dims);
	int64_t idx[ST_MAX_RANK] = { 0 };
	bool integer = c->i != NULL && a->i != NULL;
	for (int64_t k = 0; k < c->count; k++) {
		int64_t rem = k;
		for (int j = r - 1; j >= 0; j--) {
			idx[j] = rem % dims[j];
			rem /= dims[j];
		}
		int64_t ia = bcast_index(a, r, idx), ib = bcast_index(b, r, idx);
		if (integer && a->i && b->i && strcmp(op, "div") != 0 && strcmp(op, "pow") != 0) {
			int64_t x = a->i[ia], y = b->i[ib], v = 0;
			if (strcmp(op, "add") == 0) v = (int64_t)((uint64_t)x + (uint64_t)y);
			else if (strcmp(op, "sub") == 0) v = (int64_t)((uint64_t)x - (uint64_t)y);
			else if (strcmp(op, "mul") == 0) v = (int64_t)((uint64_t)x * (uint64_t)y);
			else if (strcmp(op, "max") == 0) v = x > y ? x : y;
			else if (strcmp(op, "min") == 0) v = x < y ? x : y;
			else if (strcmp(op, "equal") == 0) v = x == y;
			cseti(c, k, v);
		} else {
			cset(c, k, binop(op, cget(a, ia), cget(b, ib), integer));
		}
	}
	return c;
}

static bool
all_known(imp *I)
{
	/* Every input given (an omitted one means nothing here) and known. */
	for (size_t k = 0; k < I->node->n_inputs; k++) {
		if (in_const(I, k) == NULL)
			return false;
	}
	return I->node->n_inputs > 0;
}

/* Legacy broadcast (opset < 7, broadcast=1): B's dims line up with A's
 * from axis on. Returns the dims to give B, or 0 when nothing changes. */
static int
legacy_dims(imp *I, int ra, const int64_t *bd, int rb, int64_t *out)
{
	if (I->opset >= 7 || attr_i(I, "broadcast", 0) == 0)
		return 0;
	int64_t axis = attr_i(I, "axis", -1);
	if (axis < 0)
		axis = ra - rb;
	if (axis < 0 || axis + rb > ra)
		return 0;
	int n = 0;
	for (int k = 0; k < rb; k++)
		out[n++] = bd[k];
	for (int64_t k = axis + rb; k < ra; k++)
		out[n++] = 1;
	return n;
}

static int
map_eltwise(imp *I, const char *op)
{
	size_t n = I->node->n_inputs;
	if (n == 0)
		return unsupported(I, "it has no inputs");
	if (all_known(I)) {
		cten *acc = NULL;
		for (size_t k = 0; k < n; k++) {
			cten *c = in_const(I, k);
			if (acc == NULL) {
				acc = cten_reshaped(c, c->dims, c->rank);
				continue;
			}
			cten *b = c, *tmpb = NULL;
			int64_t ld[ST_MAX_RANK];
			int lr = legacy_dims(I, acc->rank, c->dims, c->rank, ld);
			if (lr > 0) {
				tmpb = st_xcalloc(1, sizeof *tmpb);
				*tmpb = *c;
				tmpb->rank = lr;
				memcpy(tmpb->dims, ld, sizeof ld);
				b = tmpb;
			}
			cten *r = fold_binary(op, acc, b);
			free(tmpb);
			cten_free(acc);
			if (r == NULL)
				return unsupported(I, "its constant inputs do not broadcast, or the result is too large "
				                      "to compute at import");
			acc = r;
		}
		set_out_const(I, 0, acc);
		I->n_folded++;
		return 0;
	}
	if (n == 1) {
		val *x = in_val(I, 0);
		if (x == NULL)
			return in_port(I, 0, &(st_port){ 0 });
		set_out_port(I, 0, x->port.layer, x->port.output);
		I->n_folded++;
		return 0;
	}
	st_port ports[ST_MAX_OUTPUTS];
	if (n > ST_MAX_OUTPUTS)
		return unsupported(I, "it has %zu inputs; at most %d are supported", n, ST_MAX_OUTPUTS);
	for (size_t k = 0; k < n; k++) {
		int rc = in_port(I, k, &ports[k]);
		if (rc != 0)
			return rc;
	}
	/* Legacy broadcast of input 1 along an axis: reshape it first. */
	if (n == 2 && I->opset < 7 && attr_i(I, "broadcast", 0) != 0) {
		st_shape ta, tb;
		const st_shape *a = in_shape(I, 0, &ta), *b = in_shape(I, 1, &tb);
		int64_t ld[ST_MAX_RANK];
		int lr = a && b ? legacy_dims(I, a->rank, b->dims, b->rank, ld) : 0;
		if (lr > b->rank) {
			char hint[160];
			st_layer *rs = add_layer(I, "reshape", node_hint(I, hint, sizeof hint));
			if (set_dims(I, rs, "shape", ld, lr) != 0)
				return -1;
			link_in(I, rs, 0, ports[1]);
			ports[1] = (st_port){ rs, 0 };
		}
	}
	st_layer *l;
	if (eltwise_layer(I, op, ports, (int)n, &l) != 0)
		return -1;
	set_out_port(I, 0, l, 0);
	return 0;
}

/* ---- convolution and pooling ---- */

/* "explicit", "same", "same_lower" or "valid" from auto_pad; NULL when unknown. */
static const char *
padding_mode(imp *I)
{
	char buf[32];
	const char *ap = attr_s(I, "auto_pad", "NOTSET", buf, sizeof buf);
	if (strcmp(ap, "NOTSET") == 0 || ap[0] == '\0')
		return "explicit";
	if (strcmp(ap, "SAME_UPPER") == 0)
		return "same";
	if (strcmp(ap, "SAME_LOWER") == 0)
		return "same_lower";
	if (strcmp(ap, "VALID") == 0)
		return "valid";
	return NULL;
}

/* Reads a per-axis ints attribute: n values, or def when absent. */
static int
axis_ints(imp *I, const char *name, int n, int64_t def, int64_t *out)
{
	int64_t v[2 * ST_MAX_RANK];
	int got = attr_ints(I, name, v, 2 * ST_MAX_RANK);
	if (got < 0) {
		for (int k = 0; k < n; k++)
			out[k] = def;
		return 0;
	}
	if (got != n)
		return unsupported(I, "attribute %s has %d values where %d are expected", name, got, n);
	memcpy(out, v, (size_t)n * sizeof *v);
	return 0;
}

static int
window_params(imp *I, st_layer *l, int sp, const int64_t *kernel, const int64_t *strides,
              const int64_t *pads, const int64_t *dil, const char *mode)
{
	return set_dims(I, l, "kernel", kernel, sp) || set_dims(I, l, "stride", strides, sp) ||
	       set_dims(I, l, "dilation", dil, sp) || set_param(I, l, "padding", "%s", mode) ||
	       set_dims(I, l, "pads", pads, 2 * sp) ? -1 : 0;
}

int
conv_layer(imp *I, bool transposed, const char *type, const char *hint, const float *weights, st_layer **out)
{
	cten *W = in_const(I, 1);
	if (W == NULL)
		return unsupported(I, "its weights (input 1) are not constant");
	cten *B = NULL;
	if (has_input(I, 2) && (B = in_const(I, 2)) == NULL)
		return unsupported(I, "its bias (input 2) is not constant");
	if (W->rank < 3 || W->rank > 5)
		return unsupported(I, "weights of rank %d: only 1-D, 2-D and 3-D convolutions are supported", W->rank);
	int sp = W->rank - 2;
	int64_t group = attr_i(I, "group", 1);
	if (group < 1) {
		node_msg(I, ST_SEVERITY_ERROR, "group %" PRId64 " must be at least 1", group);
		return -1;
	}
	int64_t num_output = transposed ? W->dims[1] * group : W->dims[0];
	int64_t kernel[ST_MAX_RANK], strides[ST_MAX_RANK], dil[ST_MAX_RANK], pads[2 * ST_MAX_RANK];
	int64_t opad[ST_MAX_RANK];
	int rc;
	if ((rc = axis_ints(I, "kernel_shape", sp, 0, kernel)) != 0 || (rc = axis_ints(I, "strides", sp, 1, strides)) != 0 ||
	    (rc = axis_ints(I, "dilations", sp, 1, dil)) != 0 || (rc = axis_ints(I, "pads", 2 * sp, 0, pads)) != 0 ||
	    (rc = axis_ints(I, "output_padding", sp, 0, opad)) != 0)
		return rc;
	for (int k = 0; k < sp; k++) {
		if (kernel[k] == 0)
			kernel[k] = W->dims[2 + k];
		if (kernel[k] != W->dims[2 + k])
			return unsupported(I, "kernel_shape disagrees with the weights' dims");
	}
	const char *mode = padding_mode(I);
	if (mode == NULL)
		return unsupported(I, "its auto_pad is not one ONNX defines");
	if (B != NULL && B->count != num_output) {
		node_msg(I, ST_SEVERITY_ERROR, "bias has %" PRId64 " values for %" PRId64 " output channels", B->count,
		         num_output);
		return -1;
	}
	int64_t oshape[ST_MAX_RANK];
	int n_oshape = transposed ? attr_ints(I, "output_shape", oshape, ST_MAX_RANK) : -1;
	if (n_oshape > 0) {
		st_shape tmp;
		const st_shape *s = in_shape(I, 0, &tmp);
		if (s == NULL || s->rank != sp + 2)
			return unsupported(I, "output_shape needs the input's shape");
		if (n_oshape == sp + 2)
			memmove(oshape, oshape + 2, (size_t)sp * sizeof *oshape);
		else if (n_oshape != sp)
			return unsupported(I, "output_shape has %d values for %d spatial axes", n_oshape, sp);
		bool upper = strcmp(mode, "same") == 0;
		for (int k = 0; k < sp; k++) {
			int64_t total = strides[k] * (s->dims[2 + k] - 1) + opad[k] + (kernel[k] - 1) * dil[k] + 1 - oshape[k];
			if (total < 0) {
				opad[k] += -total;
				pads[k] = pads[sp + k] = 0;
			} else if (upper) {
				pads[k] = total / 2;
				pads[sp + k] = total - total / 2;
			} else {
				pads[k] = total - total / 2;
				pads[sp + k] = total / 2;
			}
		}
		mode = "explicit";
	}
	st_port p;
	if ((rc = in_port(I, 0, &p)) != 0)
		return rc;
	char buf[160];
	st_layer *l = add_layer(I, type ? type : transposed ? "deconvolution" : "convolution",
	                        hint ? hint : node_hint(I, buf, sizeof buf));
	link_in(I, l, 0, p);
	set_out_port(I, 0, l, 0);
	if (set_param(I, l, "num_output", "%" PRId64, num_output) || window_params(I, l, sp, kernel, strides, pads, dil, mode) ||
	    set_param(I, l, "groups", "%" PRId64, group) || set_param(I, l, "bias", "%s", B ? "true" : "false") ||
	    (transposed && set_dims(I, l, "output_padding", opad, sp)))
		return -1;
	if (weights != NULL ? write_floats(I, l, "weights", weights, W->rank, W->dims) != 0
	                    : write_weight(I, l, "weights", W, W->rank, W->dims) != 0)
		return -1;
	if (B != NULL && write_weight(I, l, "bias", B, 1, &num_output) != 0)
		return -1;
	*out = l;
	return 0;
}

static int
map_conv(imp *I, bool transposed)
{
	st_layer *l;
	return conv_layer(I, transposed, NULL, NULL, NULL, &l);
}

static int
map_pool(imp *I, const char *mode_name)
{
	if (output_used(I, 1))
		return unsupported(I, "MaxPool's Indices output is not provided");
	st_shape tmp;
	const st_shape *s = in_shape(I, 0, &tmp);
	if (s == NULL)
		return unsupported(I, "its input's shape is not known");
	if (s->rank < 3 || s->rank > 5)
		return unsupported(I, "input of rank %d: only 1-D, 2-D and 3-D pooling is supported", s->rank);
	if (s->dtype != ST_DTYPE_FLOAT32 && s->dtype != ST_DTYPE_FLOAT16)
		return unsupported(I, "pooling runs on float tensors here, not %s", st_dtype_name(s->dtype));
	int sp = s->rank - 2;
	int64_t kernel[ST_MAX_RANK], strides[ST_MAX_RANK], dil[ST_MAX_RANK], pads[2 * ST_MAX_RANK];
	int rc;
	if (attr_ints(I, "kernel_shape", kernel, ST_MAX_RANK) != sp)
		return unsupported(I, "kernel_shape must have one value per spatial axis");
	if ((rc = axis_ints(I, "strides", sp, 1, strides)) != 0 || (rc = axis_ints(I, "dilations", sp, 1, dil)) != 0 ||
	    (rc = axis_ints(I, "pads", 2 * sp, 0, pads)) != 0)
		return rc;
	const char *mode = padding_mode(I);
	if (mode == NULL)
		return unsupported(I, "its auto_pad is not one ONNX defines");
	st_layer *l;
	if ((rc = unary_layer(I, "pooling", &l)) != 0)
		return rc;
	if (set_param(I, l, "mode", "%s", mode_name) || window_params(I, l, sp, kernel, strides, pads, dil, mode) ||
	    set_param(I, l, "ceil_mode", "%s", attr_i(I, "ceil_mode", 0) ? "true" : "false") ||
	    set_param(I, l, "count_include_pad", "%s", attr_i(I, "count_include_pad", 0) ? "true" : "false"))
		return -1;
	return 0;
}

static int
map_global_pool(imp *I, const char *mode)
{
	st_layer *l;
	int rc = unary_layer(I, "global_pooling", &l);
	if (rc != 0)
		return rc;
	return set_param(I, l, "mode", "%s", mode);
}

/* ReduceMean/ReduceMax over every spatial axis with keepdims: global pooling. */
static int
map_reduce(imp *I, const char *mode)
{
	st_shape tmp;
	const st_shape *s = in_shape(I, 0, &tmp);
	if (s == NULL || s->rank < 3)
		return unsupported(I, "only a reduction over every spatial axis of an image is supported");
	int64_t axes[ST_MAX_RANK];
	int n = ints_attr_or_input(I, "axes", 18, 1, axes, ST_MAX_RANK);
	if (n != s->rank - 2 || attr_i(I, "keepdims", 1) != 1)
		return unsupported(I, "only a reduction over every spatial axis, keeping them, is supported");
	bool seen[ST_MAX_RANK] = { false };
	for (int k = 0; k < n; k++) {
		int64_t a = axes[k] < 0 ? axes[k] + s->rank : axes[k];
		if (a < 2 || a >= s->rank || seen[a])
			return unsupported(I, "only a reduction over every spatial axis is supported");
		seen[a] = true;
	}
	return map_global_pool(I, mode);
}

/* ---- normalisation ---- */

static int
map_batchnorm(imp *I)
{
	if (output_used(I, 1) || output_used(I, 2) || output_used(I, 3) || output_used(I, 4))
		return unsupported(I, "training-mode outputs (running mean and variance) are not provided");
	if (attr_i(I, "training_mode", 0) != 0)
		return unsupported(I, "training mode is not supported");
	if (attr(I, "spatial") != NULL && attr_i(I, "spatial", 1) == 0)
		return unsupported(I, "spatial=0 (per-element statistics) is not supported");
	cten *p[4];
	for (size_t k = 0; k < 4; k++) {
		if ((p[k] = in_const(I, k + 1)) == NULL)
			return unsupported(I, "its scale, bias, mean and variance must be constant");
	}
	int64_t c = p[0]->count;
	for (int k = 1; k < 4; k++) {
		if (p[k]->count != c) {
			node_msg(I, ST_SEVERITY_ERROR, "scale, bias, mean and variance differ in size");
			return -1;
		}
	}
	st_layer *l;
	int rc = unary_layer(I, "batch_normalization", &l);
	if (rc != 0)
		return rc;
	static const char *const names[] = { "scale", "bias", "mean", "variance" };
	if (set_double(I, l, "epsilon", (float)attr_f(I, "epsilon", 1e-5)) != 0)
		return -1;
	for (int k = 0; k < 4; k++) {
		if (write_weight(I, l, names[k], p[k], 1, &c) != 0)
			return -1;
	}
	return 0;
}

static int
map_instnorm(imp *I)
{
	cten *sc = in_const(I, 1), *b = in_const(I, 2);
	if (sc == NULL || b == NULL)
		return unsupported(I, "its scale and bias must be constant");
	int64_t c = sc->count;
	st_layer *l;
	int rc = unary_layer(I, "instance_normalization", &l);
	if (rc != 0)
		return rc;
	if (set_double(I, l, "epsilon", (float)attr_f(I, "epsilon", 1e-5)) != 0 ||
	    write_weight(I, l, "scale", sc, 1, &c) != 0 || write_weight(I, l, "bias", b, 1, &c) != 0)
		return -1;
	return 0;
}

static int norm_axis(int64_t axis, int rank);

/* c broadcast (numpy rules) to dims, as float32 (caller frees); fill when c
 * is NULL; NULL when c does not broadcast to them. */
static float *
broadcast_to(imp *I, cten *c, const int64_t *dims, int rank, float fill)
{
	int64_t n = 1;
	for (int k = 0; k < rank; k++)
		n *= dims[k];
	float *out = st_xmalloc((size_t)(n ? n : 1) * sizeof *out);
	if (c == NULL) {
		for (int64_t k = 0; k < n; k++)
			out[k] = fill;
		return out;
	}
	if (c->rank > rank || cten_decode(c, I->why, sizeof I->why) != 0) {
		free(out);
		return NULL;
	}
	for (int k = 0; k < c->rank; k++) {
		int64_t cd = c->dims[k], want = dims[rank - c->rank + k];
		if (cd != 1 && cd != want) {
			free(out);
			return NULL;
		}
	}
	int64_t idx[ST_MAX_RANK];
	for (int64_t k = 0; k < n; k++) {
		int64_t rem = k;
		for (int j = rank - 1; j >= 0; j--) {
			idx[j] = rem % dims[j];
			rem /= dims[j];
		}
		out[k] = (float)cget(c, bcast_index(c, rank, idx));
	}
	return out;
}

/* A layer_normalization layer on input 0 of the node, over the axes from
 * axis on, with scale gamma and bias beta (NULL: 1 and none). */
int
layer_norm_layer(imp *I, int64_t axis, double eps, cten *gamma, cten *beta)
{
	if (st_registry_find_layer(I->r, "layer_normalization") == NULL)
		return unsupported(I, "no loaded plugin provides layer_normalization");
	st_shape tmp;
	const st_shape *s = in_shape(I, 0, &tmp);
	if (s == NULL)
		return unsupported(I, "its input's shape is not known");
	if (s->dtype != ST_DTYPE_FLOAT32 && s->dtype != ST_DTYPE_FLOAT16)
		return unsupported(I, "layer normalization runs on float tensors here");
	int a = norm_axis(axis, s->rank);
	if (a < 0)
		return unsupported(I, "axis %" PRId64 " is out of range for rank %d", axis, s->rank);
	int nr = s->rank - a;
	int64_t nd[ST_MAX_RANK];
	for (int k = 0; k < nr; k++)
		nd[k] = s->dims[a + k];
	float *gv = broadcast_to(I, gamma, nd, nr, 1.0f);
	float *bv = beta != NULL ? broadcast_to(I, beta, nd, nr, 0.0f) : NULL;
	if (gv == NULL || (beta != NULL && bv == NULL)) {
		free(gv);
		free(bv);
		return unsupported(I, "its scale or bias does not broadcast to the normalised axes");
	}
	st_layer *l;
	int rc = unary_layer(I, "layer_normalization", &l);
	if (rc == 0)
		rc = set_param(I, l, "axis", "%d", a - s->rank) || set_double(I, l, "epsilon", (float)eps) ||
		     set_param(I, l, "bias", "%s", bv ? "true" : "false") || write_floats(I, l, "scale", gv, nr, nd) ||
		     (bv && write_floats(I, l, "bias", bv, nr, nd)) ? -1 : 0;
	free(gv);
	free(bv);
	return rc;
}

static int
map_layernorm(imp *I)
{
	if (output_used(I, 1) || output_used(I, 2))
		return unsupported(I, "its Mean and InvStdDev outputs are not provided");
	cten *gamma = in_const(I, 1), *beta = NULL;
	if (gamma == NULL)
		return unsupported(I, "its scale must be constant");
	if (has_input(I, 2) && (beta = in_const(I, 2)) == NULL)
		return unsupported(I, "its bias must be constant");
	return layer_norm_layer(I, attr_i(I, "axis", -1), attr_f(I, "epsilon", 1e-5), gamma, beta);
}

/* ---- matrices ---- */

static cten *
scalar_const(int32_t type, double v)
{
	cten *c = cten_new(type, 0, NULL);
	cset(c, 0, v);
	return c;
}

/* A layer combining port a with the known tensor c by op. Takes c. */
static int
eltwise_const(imp *I, const char *op, st_port a, cten *c, st_port *out)
{
	val *tmp = st_xcalloc(1, sizeof *tmp);
	char hint[200];
	snprintf(hint, sizeof hint, "%s_%s", node_hint(I, (char[160]){ 0 }, 160), op);
	tmp->name = st_xstrdup(hint);
	tmp->c = c;
	st_port cp;
	int rc = const_port(I, tmp, &cp);
	cten_free(tmp->c);
	free(tmp->name);
	free(tmp);
	if (rc != 0)
		return rc;
	st_port ports[2] = { a, cp };
	st_layer *l;
	if (eltwise_layer(I, op, ports, 2, &l) != 0)
		return -1;
	*out = (st_port){ l, 0 };
	return 0;
}

static int
transpose_layer(imp *I, st_port in, const int64_t *perm, int n, st_port *out)
{
	char hint[160];
	st_layer *l = add_layer(I, "transpose", node_hint(I, hint, sizeof hint));
	if (set_dims(I, l, "perm", perm, n) != 0)
		return -1;
	link_in(I, l, 0, in);
	*out = (st_port){ l, 0 };
	return 0;
}

/* A fully connected layer on port a with weights w (n x k, taken). */
static int
fc_layer(imp *I, st_port a, float *w, int64_t n, int64_t k, const float *bias, st_layer **out)
{
	st_layer *l = node_layer(I, "fully_connected");
	link_in(I, l, 0, a);
	int64_t wd[2] = { n, k };
	int rc = set_param(I, l, "num_output", "%" PRId64, n) ||
	         set_param(I, l, "bias", "%s", bias ? "true" : "false") ||
	         write_floats(I, l, "weights", w, 2, wd) ||
	         (bias && write_floats(I, l, "bias", bias, 1, &n)) ? -1 : 0;
	free(w);
	*out = l;
	return rc;
}

static int
map_gemm(imp *I)
{
	double alpha = attr_f(I, "alpha", 1.0), beta = attr_f(I, "beta", 1.0);
	bool ta = attr_i(I, "transA", 0) != 0, tb = attr_i(I, "transB", 0) != 0;
	cten *B = in_const(I, 1), *C = has_input(I, 2) ? in_const(I, 2) : NULL;
	bool has_c = has_input(I, 2) && beta != 0;
	st_shape tmp;
	const st_shape *as = in_shape(I, 0, &tmp);
	if (as == NULL || as->rank != 2)
		return unsupported(I, "input A must be a matrix of known shape");
	if (as->dtype != ST_DTYPE_FLOAT32 && as->dtype != ST_DTYPE_FLOAT16)
		return unsupported(I, "Gemm runs on float tensors here");
	int64_t M = ta ? as->dims[1] : as->dims[0], K = ta ? as->dims[0] : as->dims[1];
	st_port a;
	int rc = in_port(I, 0, &a);
	if (rc != 0)
		return rc;
	/* Flatten(axis 1) then Gemm is one fully connected layer, which
	 * flattens by itself: the flatten layer goes once the FC is made. */
	st_layer *flatten = NULL;
	val *av = in_val(I, 0);
	if (B != NULL && !ta && av->port.layer == a.layer && av->uses == 1 && !av->graph_output &&
	    strcmp(a.layer->type_name, "flatten") == 0 && a.layer->inputs[0].layer != NULL) {
		int ai = st_params_find(a.layer->type->desc->params, a.layer->type->desc->n_params, "axis");
		if (ai >= 0 && a.layer->params.values[ai].i == 1) {
			flatten = a.layer;
			a = flatten->inputs[0];
		}
	}
	if (ta && transpose_layer(I, a, (const int64_t[]){ 1, 0 }, 2, &a) != 0)
		return -1;
	st_port y;
	if (B != NULL) {
		if (B->rank != 2 || (tb ? B->dims[1] : B->dims[0]) != K) {
			node_msg(I, ST_SEVERITY_ERROR, "B's shape does not match A's");
			return -1;
		}
		int64_t N = tb ? B->dims[0] : B->dims[1];
		float *w = st_xmalloc((size_t)(N * K > 0 ? N * K : 1) * sizeof *w);
		for (int64_t n = 0; n < N; n++)
			for (int64_t k = 0; k < K; k++)
				w[n * K + k] = (float)(alpha * (tb ? cget(B, n * K + k) : cget(B, k * N + n)));
		/* A bias that is one value per column folds into the layer. */
		float *bias = NULL;
		if (has_c && C != NULL) {
			int64_t cd[2] = { 1, 1 };
			for (int j = 0; j < C->rank; j++)
				cd[2 - C->rank + j] = C->dims[j];
			if (C->rank <= 2 && cd[0] == 1 && (cd[1] == N || cd[1] == 1)) {
				bias = st_xmalloc((size_t)N * sizeof *bias);
				for (int64_t n = 0; n < N; n++)
					bias[n] = (float)(beta * cget(C, cd[1] == 1 ? 0 : n));
			}
		}
		st_layer *l;
		rc = fc_layer(I, a, w, N, K, bias, &l);
		bool folded = bias != NULL;
		free(bias);
		if (rc != 0)
			return -1;
		if (flatten != NULL) {
			av->port = (st_port){ NULL, 0 };
			st_graph_set_input(I->graph, flatten, 0, (st_port){ NULL, 0 });
			st_graph_remove(I->graph, flatten);
			I->n_folded++;
		}
		y = (st_port){ l, 0 };
		if (has_c && !folded) {
			st_port c;
			if ((rc = in_port(I, 2, &c)) != 0)
				return rc;
			if (beta != 1 && (rc = eltwise_const(I, "mul", c, scalar_const(ST_ONNX_FLOAT, beta), &c)) != 0)
				return rc;
			st_layer *add;
			if (eltwise_layer(I, "add", (st_port[]){ y, c }, 2, &add) != 0)
				return -1;
			y = (st_port){ add, 0 };
		}
		(void)M;
	} else {
		st_port b;
		if ((rc = in_port(I, 1, &b)) != 0)
			return rc;
		if (tb && transpose_layer(I, b, (const int64_t[]){ 1, 0 }, 2, &b) != 0)
			return -1;
		st_layer *mm = node_layer(I, "matrix_multiply");
		link_in(I, mm, 0, a);
		link_in(I, mm, 1, b);
		y = (st_port){ mm, 0 };
		if (alpha != 1 && (rc = eltwise_const(I, "mul", y, scalar_const(ST_ONNX_FLOAT, alpha), &y)) != 0)
			return rc;
		if (has_c) {
			st_port c;
			if ((rc = in_port(I, 2, &c)) != 0)
				return rc;
			if (beta != 1 && (rc = eltwise_const(I, "mul", c, scalar_const(ST_ONNX_FLOAT, beta), &c)) != 0)
				return rc;
			st_layer *add;
			if (eltwise_layer(I, "add", (st_port[]){ y, c }, 2, &add) != 0)
				return -1;
			y = (st_port){ add, 0 };
		}
	}
	set_out_port(I, 0, y.layer, y.output);
	return 0;
}

static int
map_matmul(imp *I)
{
	cten *B = in_const(I, 1);
	st_shape tmp;
	const st_shape *as = in_shape(I, 0, &tmp);
	st_port a;
	int rc;
	if (B != NULL && B->rank == 2 && as != NULL && as->rank == 2 && as->dims[1] == B->dims[0] &&
	    (as->dtype == ST_DTYPE_FLOAT32 || as->dtype == ST_DTYPE_FLOAT16)) {
		int64_t K = B->dims[0], N = B->dims[1];
		if ((rc = in_port(I, 0, &a)) != 0)
			return rc;
		float *w = st_xmalloc((size_t)(N * K > 0 ? N * K : 1) * sizeof *w);
		for (int64_t n = 0; n < N; n++)
			for (int64_t k = 0; k < K; k++)
				w[n * K + k] = (float)cget(B, k * N + n);
		st_layer *l;
		if (fc_layer(I, a, w, N, K, NULL, &l) != 0)
			return -1;
		set_out_port(I, 0, l, 0);
		return 0;
	}
	st_port b;
	if ((rc = in_port(I, 0, &a)) != 0 || (rc = in_port(I, 1, &b)) != 0)
		return rc;
	st_layer *l = node_layer(I, "matrix_multiply");
	link_in(I, l, 0, a);
	link_in(I, l, 1, b);
	set_out_port(I, 0, l, 0);
	return 0;
}

/* Add(fully_connected without bias, per-output vector): the bias folds in. */
static int
fold_fc_bias(imp *I)
{
	if (I->node->n_inputs != 2)
		return 1;
	for (int side = 0; side < 2; side++) {
		val *x = in_val(I, (size_t)side);
		cten *c = in_const(I, (size_t)(1 - side));
		if (x == NULL || c == NULL || x->port.layer == NULL || x->uses != 1 || x->graph_output)
			continue;
		st_layer *l = x->port.layer;
		if (strcmp(l->type_name, "fully_connected") != 0 || l->act.type_name != NULL)
			continue;
		int bi = st_params_find(l->type->desc->params, l->type->desc->n_params, "bias");
		int ni = st_params_find(l->type->desc->params, l->type->desc->n_params, "num_output");
		if (bi < 0 || ni < 0 || l->params.values[bi].b)
			continue;
		int64_t n = l->params.values[ni].i;
		if (c->count != n || (c->rank == 2 && c->dims[0] != 1) || c->rank > 2 || !is_float_type(c->type))
			continue;
		if (set_param(I, l, "bias", "true") != 0 || write_weight(I, l, "bias", c, 1, &n) != 0)
			return -1;
		set_out_port(I, 0, l, 0);
		I->n_folded++;
		return 0;
	}
	return 1;
}

/* ---- shapes and data movement ---- */

static int
norm_axis(int64_t axis, int rank)
{
	if (axis < 0)
		axis += rank;
	return axis < 0 || axis >= rank ? -1 : (int)axis;
}

static cten *
fold_concat(imp *I, int64_t axis)
{
	cten *first = in_const(I, 0);
	int r = first->rank;
	int ax = norm_axis(axis, r);
	if (ax < 0)
		return NULL;
	int64_t dims[ST_MAX_RANK];
	memcpy(dims, first->dims, sizeof dims);
	dims[ax] = 0;
	for (size_t k = 0; k < I->node->n_inputs; k++) {
		cten *c = in_const(I, k);
		if (c == NULL || c->rank != r)
			return NULL;
		dims[ax] += c->dims[ax];
	}
	cten *out = cten_new(first->type, r, dims);
	int64_t outer = 1, inner = 1;
	for (int j = 0; j < ax; j++)
		outer *= dims[j];
	for (int j = ax + 1; j < r; j++)
		inner *= dims[j];
	int64_t at = 0;
	for (int64_t o = 0; o < outer; o++) {
		for (size_t k = 0; k < I->node->n_inputs; k++) {
			cten *c = in_const(I, k);
			int64_t n = c->dims[ax] * inner;
			for (int64_t j = 0; j < n; j++) {
				if (out->i)
					out->i[at++] = cgeti(c, o * n + j);
				else
					out->f[at++] = cget(c, o * n + j);
			}
		}
	}
	return out;
}

static int
map_concat(imp *I)
{
	int64_t axis = attr_i(I, "axis", I->opset < 4 ? 1 : 0);
	if (all_known(I) && I->node->n_inputs > 0) {
		cten *c = fold_concat(I, axis);
		if (c == NULL) {
			node_msg(I, ST_SEVERITY_ERROR, "its constant inputs cannot be joined along axis %" PRId64, axis);
			return -1;
		}
		set_out_const(I, 0, c);
		I->n_folded++;
		return 0;
	}
	st_layer *l = node_layer(I, "concatenation");
	if (set_param(I, l, "axis", "%" PRId64, axis) != 0)
		return -1;
	int t = 0;
	for (size_t k = 0; k < I->node->n_inputs; k++) {
		if (!has_input(I, k))
			continue;
		st_port p;
		int rc = in_port(I, k, &p);
		if (rc != 0)
			return rc;
		link_in(I, l, t++, p);
	}
	set_out_port(I, 0, l, 0);
	return 0;
}

/* A reshape layer from port to the full shape dims. */
static int
reshape_layer(imp *I, st_port in, const int64_t *dims, int n, bool allowzero, st_port *out)
{
	char hint[160];
	st_layer *l = add_layer(I, "reshape", node_hint(I, hint, sizeof hint));
	if (set_dims(I, l, "shape", dims, n) != 0 || (allowzero && set_param(I, l, "allowzero", "true") != 0))
		return -1;
	link_in(I, l, 0, in);
	*out = (st_port){ l, 0 };
	return 0;
}

static int
map_softmax(imp *I)
{
	int64_t axis = attr_i(I, "axis", I->opset >= 13 ? -1 : 1);
	st_shape tmp;
	const st_shape *s = in_shape(I, 0, &tmp);
	st_port p;
	int rc;
	if (I->opset >= 13 || (s != NULL && norm_axis(axis, s->rank) == s->rank - 1)) {
		st_layer *l;
		if ((rc = unary_layer(I, "softmax", &l)) != 0)
			return rc;
		return set_param(I, l, "axis", "%" PRId64, I->opset >= 13 ? axis : -1);
	}
	if (s == NULL || norm_axis(axis, s->rank) < 0)
		return unsupported(I, "the input's shape is not known");
	/* Opsets 1-12 normalise over every axis from axis on: flatten, then back. */
	if ((rc = in_port(I, 0, &p)) != 0)
		return rc;
	st_layer *f = node_layer(I, "flatten");
	if (set_param(I, f, "axis", "%d", norm_axis(axis, s->rank)) != 0)
		return -1;
	link_in(I, f, 0, p);
	st_layer *sm = node_layer(I, "softmax");
	link_in(I, sm, 0, (st_port){ f, 0 });
	st_port out;
	if (reshape_layer(I, (st_port){ sm, 0 }, s->dims, s->rank, false, &out) != 0)
		return -1;
	set_out_port(I, 0, out.layer, out.output);
	return 0;
}

/* Row-major strides of dims. */
static void
strides_of(const int64_t *dims, int r, int64_t *st)
{
	int64_t acc = 1;
	for (int k = r - 1; k >= 0; k--) {
		st[k] = acc;
		acc *= dims[k];
	}
}

/* Resolves a Reshape shape (0 copies, -1 infers) against in; -1 on error. */
static int
resolve_shape(const int64_t *in, int rin, const int64_t *want, int n, bool allowzero, int64_t *out)
{
	int64_t total = 1, known = 1;
	int infer = -1;
	for (int k = 0; k < rin; k++)
		total *= in[k];
	for (int k = 0; k < n; k++) {
		int64_t v = want[k];
		if (v == 0 && !allowzero) {
			if (k >= rin)
				return -1;
			v = in[k];
		}
		if (v == -1) {
			if (infer >= 0)
				return -1;
			infer = k;
			continue;
		}
		if (v < 0)
			return -1;
		out[k] = v;
		known *= v;
	}
	if (infer >= 0) {
		if (known == 0 || total % known != 0)
			return -1;
		out[infer] = total / known;
	} else if (known != total) {
		return -1;
	}
	return 0;
}

static int
map_reshape(imp *I)
{
	int64_t want[ST_MAX_RANK + 1];
	int n = ints_attr_or_input(I, "shape", 5, 1, want, ST_MAX_RANK + 1);
	if (n == -2)
		return unsupported(I, "its shape input is not known at import");
	if (n < 0 || n > ST_MAX_RANK)
		return unsupported(I, "its shape must have 0 to %d values", ST_MAX_RANK);
	bool allowzero = attr_i(I, "allowzero", 0) != 0;
	cten *x = in_const(I, 0);
	if (x != NULL) {
		int64_t dims[ST_MAX_RANK];
		cten *o = NULL;
		if (resolve_shape(x->dims, x->rank, want, n, allowzero, dims) == 0)
			o = cten_reshaped(x, dims, n);
		if (o == NULL) {
			node_msg(I, ST_SEVERITY_ERROR, "its constant input cannot take that shape");
			return -1;
		}
		set_out_const(I, 0, o);
		I->n_folded++;
		return 0;
	}
	st_layer *l;
	int rc = unary_layer(I, "reshape", &l);
	if (rc != 0)
		return rc;
	return set_dims(I, l, "shape", want, n) || (allowzero && set_param(I, l, "allowzero", "true")) ? -1 : 0;
}

static int
map_flatten(imp *I)
{
	int64_t axis = attr_i(I, "axis", 1);
	cten *x = in_const(I, 0);
	if (x != NULL) {
		int64_t a = axis < 0 ? axis + x->rank : axis, d[2] = { 1, 1 };
		for (int k = 0; k < x->rank; k++)
			d[k < a ? 0 : 1] *= x->dims[k];
		set_out_const(I, 0, cten_reshaped(x, d, 2));
		I->n_folded++;
		return 0;
	}
	st_layer *l;
	int rc = unary_layer(I, "flatten", &l);
	return rc ? rc : set_param(I, l, "axis", "%" PRId64, axis);
}

static int
map_transpose(imp *I)
{
	int64_t perm[ST_MAX_RANK];
	int n = attr_ints(I, "perm", perm, ST_MAX_RANK);
	cten *x = in_const(I, 0);
	if (x != NULL) {
		int r = x->rank;
		if (n < 0) {
			for (int k = 0; k < r; k++)
				perm[k] = r - 1 - k;
			n = r;
		}
		if (n != r)
			return unsupported(I, "perm has %d values for rank %d", n, r);
		int64_t dims[ST_MAX_RANK], sin[ST_MAX_RANK], idx[ST_MAX_RANK];
		for (int k = 0; k < r; k++) {
			if (perm[k] < 0 || perm[k] >= r)
				return unsupported(I, "perm is not a permutation");
			dims[k] = x->dims[perm[k]];
		}
		strides_of(x->dims, r, sin);
		cten *o = cten_new(x->type, r, dims);
		for (int64_t k = 0; k < o->count; k++) {
			int64_t rem = k, off = 0;
			for (int j = r - 1; j >= 0; j--) {
				idx[j] = rem % dims[j];
				rem /= dims[j];
			}
			for (int j = 0; j < r; j++)
				off += idx[j] * sin[perm[j]];
			if (o->f)
				o->f[k] = x->f[off];
			else
				o->i[k] = x->i[off];
		}
		set_out_const(I, 0, o);
		I->n_folded++;
		return 0;
	}
	st_layer *l;
	int rc = unary_layer(I, "transpose", &l);
	if (rc != 0)
		return rc;
	return n > 0 ? set_dims(I, l, "perm", perm, n) : 0;
}

static int
map_slice(imp *I)
{
	int64_t starts[ST_MAX_RANK + 1], ends[ST_MAX_RANK + 1], axes[ST_MAX_RANK + 1], steps[ST_MAX_RANK + 1];
	int ns = ints_attr_or_input(I, "starts", 10, 1, starts, ST_MAX_RANK + 1);
	int ne = ints_attr_or_input(I, "ends", 10, 2, ends, ST_MAX_RANK + 1);
	int na = ints_attr_or_input(I, "axes", 10, 3, axes, ST_MAX_RANK + 1);
	int nst = I->opset >= 10 ? ints_attr_or_input(I, "steps", 10, 4, steps, ST_MAX_RANK + 1) : -1;
	if (ns == -2 || ne == -2 || na == -2 || nst == -2)
		return unsupported(I, "its starts, ends, axes and steps must be known at import");
	if (ns < 0 || ns != ne || ns > ST_MAX_RANK || (na >= 0 && na != ns) || (nst >= 0 && nst != ns))
		return unsupported(I, "starts, ends, axes and steps differ in length");
	cten *x = in_const(I, 0);
	if (x != NULL && x->rank == 1 && ns == 1 && (na < 0 || axes[0] == 0 || axes[0] == -1)) {
		int64_t n = x->dims[0], st = nst > 0 ? steps[0] : 1, b = starts[0], e = ends[0];
		if (st == 0)
			return unsupported(I, "a step of 0");
		if (b < 0)
			b += n;
		if (e < 0)
			e += n;
		if (st > 0) {
			b = b < 0 ? 0 : b > n ? n : b;
			e = e < 0 ? 0 : e > n ? n : e;
		} else {
			b = b < 0 ? -1 : b > n - 1 ? n - 1 : b;
			e = e < -1 ? -1 : e > n - 1 ? n - 1 : e;
		}
		int64_t cnt = st > 0 ? (e > b ? (e - b + st - 1) / st : 0) : (b > e ? (b - e - st - 1) / -st : 0);
		cten *o = cten_new(x->type, 1, &cnt);
		for (int64_t k = 0; k < cnt; k++) {
			if (o->f)
				o->f[k] = x->f[b + k * st];
			else
				o->i[k] = x->i[b + k * st];
		}
		set_out_const(I, 0, o);
		I->n_folded++;
		return 0;
	}
	st_layer *l;
	int rc = unary_layer(I, "slice", &l);
	if (rc != 0)
		return rc;
	return set_dims(I, l, "starts", starts, ns) || set_dims(I, l, "ends", ends, ne) ||
	       (na >= 0 && set_dims(I, l, "axes", axes, na)) || (nst >= 0 && set_dims(I, l, "steps", steps, nst)) ? -1 : 0;
}

static int
map_pad(imp *I)
{
	char buf[32];
	const char *mode = attr_s(I, "mode", "constant", buf, sizeof buf);
	if (strcmp(mode, "constant") != 0 && strcmp(mode, "reflect") != 0 && strcmp(mode, "edge") != 0)
		return unsupported(I, "pad mode %s is not supported", mode);
	st_shape tmp;
	const st_shape *s = in_shape(I, 0, &tmp);
	if (s == NULL)
		return unsupported(I, "its input's shape is not known");
	int r = s->rank;
	int64_t pads[2 * ST_MAX_RANK + 1];
	int np = ints_attr_or_input(I, I->opset < 2 ? "paddings" : "pads", 11, 1, pads, 2 * ST_MAX_RANK + 1);
	if (np == -2)
		return unsupported(I, "its pads must be known at import");
	double value = 0;
	if (I->opset < 11) {
		value = attr_f(I, "value", 0);
	} else if (has_input(I, 2)) {
		cten *v = in_const(I, 2);
		if (v == NULL || v->count != 1)
			return unsupported(I, "its constant_value must be a known scalar");
		value = cget(v, 0);
	}
	int64_t axes[ST_MAX_RANK + 1];
	int na = I->opset >= 18 && has_input(I, 3) ? ints_attr_or_input(I, "axes", 18, 3, axes, ST_MAX_RANK + 1) : -1;
	if (na == -2)
		return unsupported(I, "its axes must be known at import");
	int64_t full[2 * ST_MAX_RANK] = { 0 };
	if (na >= 0) {
		if (np != 2 * na)
			return unsupported(I, "pads must have two values per axis");
		for (int k = 0; k < na; k++) {
			int a = norm_axis(axes[k], r);
			if (a < 0)
				return unsupported(I, "axis %" PRId64 " is out of range", axes[k]);
			full[a] = pads[k];
			full[r + a] = pads[na + k];
		}
	} else {
		if (np != 2 * r)
			return unsupported(I, "pads has %d values for rank %d", np, r);
		memcpy(full, pads, (size_t)np * sizeof *pads);
	}
	st_layer *l;
	int rc = unary_layer(I, "pad", &l);
	if (rc != 0)
		return rc;
	return set_param(I, l, "mode", "%s", mode) || set_dims(I, l, "pads", full, 2 * r) ||
	       set_double(I, l, "value", value) ? -1 : 0;
}

static int
map_split(imp *I)
{
	int64_t axis = attr_i(I, "axis", 0);
	int64_t split[ST_MAX_OUTPUTS + 1];
	int n = ints_attr_or_input(I, "split", 13, 1, split, ST_MAX_OUTPUTS + 1);
	if (n == -2)
		return unsupported(I, "its split sizes must be known at import");
	if (n > ST_MAX_OUTPUTS || I->node->n_outputs > ST_MAX_OUTPUTS)
		return unsupported(I, "more than %d parts", ST_MAX_OUTPUTS);
	st_layer *l;
	int rc = unary_layer(I, "split", &l);
	if (rc != 0)
		return rc;
	if (set_param(I, l, "axis", "%" PRId64, axis) != 0)
		return -1;
	if (n >= 0 ? set_dims(I, l, "split", split, n) != 0
	           : set_param(I, l, "num_outputs", "%" PRId64,
	                       attr(I, "num_outputs") ? attr_i(I, "num_outputs", 2) : (int64_t)I->node->n_outputs) != 0)
		return -1;
	for (size_t k = 0; k < I->node->n_outputs; k++)
		set_out_port(I, k, l, (int)k);
	return 0;
}

static int
resize_common(imp *I, const char *mode, const char *coord, const char *nearest, cten *scales, cten *sizes)
{
	st_shape tmp;
	const st_shape *s = in_shape(I, 0, &tmp);
	if (s == NULL)
		return unsupported(I, "its input's shape is not known");
	st_layer *l;
	int rc = unary_layer(I, "resize", &l);
	if (rc != 0)
		return rc;
	if (set_param(I, l, "mode", "%s", mode) || set_param(I, l, "coordinate_transformation_mode", "%s", coord) ||
	    set_param(I, l, "nearest_mode", "%s", nearest))
		return -1;
	if (sizes != NULL && sizes->count > 0) {
		int64_t v[ST_MAX_RANK];
		for (int k = 0; k < sizes->count && k < ST_MAX_RANK; k++)
			v[k] = cgeti(sizes, k);
		if (set_dims(I, l, "sizes", v, (int)sizes->count) != 0)
			return -1;
	} else if (scales != NULL) {
		double v[ST_MAX_RANK];
		for (int k = 0; k < scales->count && k < ST_MAX_RANK; k++)
			v[k] = (float)cget(scales, k);
		if (set_floats(I, l, "scales", v, (int)scales->count) != 0)
			return -1;
	}
	return 0;
}

static int
map_resize(imp *I)
{
	char b1[40], b2[40], b3[40];
	const char *mode = attr_s(I, "mode", "nearest", b1, sizeof b1);
	if (strcmp(mode, "bilinear") == 0)
		mode = "linear";
	const char *coord = attr_s(I, "coordinate_transformation_mode", I->opset >= 11 ? "half_pixel" : "asymmetric",
	                           b2, sizeof b2);
	const char *nearest = attr_s(I, "nearest_mode", I->opset >= 11 ? "round_prefer_floor" : "floor", b3, sizeof b3);
	if (strcmp(mode, "nearest") != 0 && strcmp(mode, "linear") != 0 && strcmp(mode, "cubic") != 0)
		return unsupported(I, "mode %s is not supported", mode);
	static const char *const coords[] = { "half_pixel", "half_pixel_symmetric", "pytorch_half_pixel",
		                              "align_corners", "asymmetric", "tf_half_pixel_for_nn", NULL };
	bool ok = false;
	for (int k = 0; coords[k]; k++)
		ok = ok || strcmp(coord, coords[k]) == 0;
	if (!ok)
		return unsupported(I, "coordinate_transformation_mode %s is not supported", coord);
	if (attr_i(I, "antialias", 0) != 0)
		return unsupported(I, "antialias is not supported");
	if (attr(I, "axes") != NULL)
		return unsupported(I, "the axes attribute is not supported");
	char b4[40];
	if (strcmp(attr_s(I, "keep_aspect_ratio_policy", "stretch", b4, sizeof b4), "stretch") != 0)
		return unsupported(I, "keep_aspect_ratio_policy other than stretch is not supported");
	cten *scales = NULL, *sizes = NULL;
	size_t si = I->opset >= 11 ? 2 : 1;
	if (has_input(I, si) && (scales = in_const(I, si)) == NULL)
		return unsupported(I, "its scales must be known at import");
	if (I->opset >= 11 && has_input(I, 3) && (sizes = in_const(I, 3)) == NULL)
		return unsupported(I, "its sizes must be known at import");
	if ((scales == NULL || scales->count == 0) && (sizes == NULL || sizes->count == 0))
		return unsupported(I, "neither scales nor sizes is given");
	int rc = resize_common(I, mode, coord, nearest, scales, sizes);
	if (rc != 0)
		return rc;
	st_layer *l = get_val(I, I->node->outputs[0])->port.layer;
	if (strcmp(mode, "cubic") == 0 &&
	    (set_double(I, l, "cubic_coeff_a", (float)attr_f(I, "cubic_coeff_a", -0.75)) != 0 ||
	     set_param(I, l, "exclude_outside", "%s", attr_i(I, "exclude_outside", 0) ? "true" : "false") != 0))
		return -1;
	return 0;
}

static int
map_upsample(imp *I)
{
	char b1[40];
	const char *mode = attr_s(I, "mode", "nearest", b1, sizeof b1);
	if (strcmp(mode, "bilinear") == 0)
		mode = "linear";
	if (strcmp(mode, "nearest") != 0 && strcmp(mode, "linear") != 0)
		return unsupported(I, "mode %s is not supported", mode);
	cten *scales = NULL, *own = NULL;
	if (I->opset >= 9) {
		if ((scales = in_const(I, 1)) == NULL)
			return unsupported(I, "its scales must be known at import");
	} else {
		const st_onnx_attribute *a = attr(I, "scales");
		if (a == NULL || a->n_floats == 0)
			return unsupported(I, "it has no scales");
		int64_t n = (int64_t)a->n_floats;
		own = scales = cten_new(ST_ONNX_FLOAT, 1, &n);
		for (int64_t k = 0; k < n; k++)
			scales->f[k] = a->floats[k];
	}
	int rc = resize_common(I, mode, "asymmetric", "floor", scales, NULL);
	cten_free(own);
	return rc;
}

static int
map_blocks(imp *I, const char *type)
{
	int64_t b = attr_i(I, "blocksize", 0);
	if (b < 1)
		return unsupported(I, "blocksize is missing");
	char buf[16];
	const char *mode = attr_s(I, "mode", "DCR", buf, sizeof buf);
	st_layer *l;
	int rc = unary_layer(I, type, &l);
	if (rc != 0)
		return rc;
	if (set_param(I, l, "block_size", "%" PRId64, b) != 0)
		return -1;
	return strcmp(type, "depth_to_space") == 0 ? set_param(I, l, "mode", "%s", mode) : 0;
}

/* Output k of the node aliases the value v (no layer). */
static void
alias_out(imp *I, size_t k, val *v)
{
	if (v->c != NULL && v->port.layer == NULL) {
		if (cten_decode(v->c, I->why, sizeof I->why) == 0) {
			cten *c = cten_reshaped(v->c, v->c->dims, v->c->rank);
			set_out_const(I, k, c);
			return;
		}
	}
	set_out_port(I, k, v->port.layer, v->port.output);
}

static int
map_dropout(imp *I)
{
	double ratio = I->opset < 12 ? attr_f(I, "ratio", 0.5) : 0.5;
	bool training = false;
	if (I->opset >= 12) {
		if (has_input(I, 1)) {
			cten *r = in_const(I, 1);
			if (r == NULL || r->count != 1)
				return unsupported(I, "its ratio must be a known scalar");
			ratio = cget(r, 0);
		}
		if (has_input(I, 2)) {
			cten *t = in_const(I, 2);
			if (t == NULL || t->count != 1)
				return unsupported(I, "its training_mode must be known at import");
			training = cget(t, 0) != 0;
		}
	}
	if (training && ratio != 0)
		return unsupported(I, "training-mode dropout is random");
	val *x = in_val(I, 0);
	if (x == NULL)
		return in_port(I, 0, &(st_port){ 0 });
	if (output_used(I, 1)) {
		st_shape tmp;
		const st_shape *s = in_shape(I, 0, &tmp);
		if (s == NULL)
			return unsupported(I, "its mask output needs the input's shape");
		if (!dims_ok(s->rank, s->dims))
			return unsupported(I, "its mask output is too large to make at import");
		cten *mask = cten_new(ST_ONNX_BOOL, s->rank, s->dims);
		for (int64_t k = 0; k < mask->count; k++)
			mask->i[k] = 1;
		set_out_const(I, 1, mask);
	}
	if (x->c != NULL && x->port.layer == NULL) {
		alias_out(I, 0, x);
		I->n_folded++;
		return 0;
	}
	st_layer *l;
	int rc = unary_layer(I, "dropout", &l);
	if (rc != 0)
		return rc;
	return set_double(I, l, "ratio", ratio >= 0 && ratio < 1 ? (float)ratio : 0.5);
}

static int
map_identity(imp *I)
{
	val *x = in_val(I, 0);
	if (x == NULL)
		return in_port(I, 0, &(st_port){ 0 });
	alias_out(I, 0, x);
	I->n_folded++;
	return 0;
}

/* ---- values computed at import ---- */

static int
map_constant(imp *I)
{
	if (I->node->n_attributes != 1)
		return unsupported(I, "a Constant needs exactly one value attribute");
	const st_onnx_attribute *a = &I->node->attributes[0];
	cten *c = NULL;
	if (st_onnx_str_eq(a->name, "value") && a->t != NULL) {
		c = cten_from_tensor(a->t, I->why, sizeof I->why);
		if (c == NULL || cten_decode(c, I->why, sizeof I->why) != 0) {
			cten_free(c);
			return 1;
		}
		c->src = NULL;
	} else if (st_onnx_str_eq(a->name, "value_float") && a->has_f) {
		c = scalar_const(ST_ONNX_FLOAT, a->f);
	} else if (st_onnx_str_eq(a->name, "value_int") && a->has_i) {
		c = cten_new(ST_ONNX_INT64, 0, NULL);
		c->i[0] = a->i;
	} else if (st_onnx_str_eq(a->name, "value_floats")) {
		int64_t n = (int64_t)a->n_floats;
		c = cten_new(ST_ONNX_FLOAT, 1, &n);
		for (int64_t k = 0; k < n; k++)
			c->f[k] = a->floats[k];
	} else if (st_onnx_str_eq(a->name, "value_ints")) {
		int64_t n = (int64_t)a->n_ints;
		c = cten_new(ST_ONNX_INT64, 1, &n);
		for (int64_t k = 0; k < n; k++)
			c->i[k] = a->ints[k];
	} else {
		return unsupported(I, "Constant attribute %.*s is not supported", (int)a->name.len,
		                   a->name.data ? a->name.data : "");
	}
	set_out_const(I, 0, c);
	I->n_folded++;
	return 0;
}

static int
map_shape(imp *I)
{
	st_shape tmp;
	const st_shape *s = in_shape(I, 0, &tmp);
	if (s == NULL)
		return unsupported(I, "its input's shape is not known at import");
	int64_t start = attr_i(I, "start", 0), end = attr_i(I, "end", s->rank);
	if (start < 0)
		start += s->rank;
	if (end < 0)
		end += s->rank;
	start = start < 0 ? 0 : start > s->rank ? s->rank : start;
	end = end < start ? start : end > s->rank ? s->rank : end;
	int64_t n = end - start;
	cten *c = cten_new(ST_ONNX_INT64, 1, &n);
	for (int64_t k = 0; k < n; k++)
		c->i[k] = s->dims[start + k];
	set_out_const(I, 0, c);
	I->n_folded++;
	return 0;
}

static int
map_gather(imp *I)
{
	cten *x = in_const(I, 0), *ix = in_const(I, 1);
	if (x == NULL || ix == NULL)
		return unsupported(I, "Gather is supported on values known at import only");
	int ax = norm_axis(attr_i(I, "axis", 0), x->rank);
	if (ax < 0 || x->rank + ix->rank - 1 > ST_MAX_RANK)
		return unsupported(I, "its axis is out of range");
	int64_t dims[ST_MAX_RANK];
	int r = 0;
	for (int k = 0; k < ax; k++)
		dims[r++] = x->dims[k];
	for (int k = 0; k < ix->rank; k++)
		dims[r++] = ix->dims[k];
	for (int k = ax + 1; k < x->rank; k++)
		dims[r++] = x->dims[k];
	int64_t outer = 1, inner = 1, n = x->dims[ax];
	for (int k = 0; k < ax; k++)
		outer *= x->dims[k];
	for (int k = ax + 1; k < x->rank; k++)
		inner *= x->dims[k];
	if (!dims_ok(r, dims))
		return unsupported(I, "its result is too large to compute at import");
	cten *o = cten_new(x->type, r, dims);
	int64_t at = 0;
	for (int64_t a = 0; a < outer; a++) {
		for (int64_t j = 0; j < ix->count; j++) {
			int64_t i = cgeti(ix, j);
			if (i < 0)
				i += n;
			if (i < 0 || i >= n) {
				cten_free(o);
				node_msg(I, ST_SEVERITY_ERROR, "index %" PRId64 " is out of range", cgeti(ix, j));
				return -1;
			}
			for (int64_t k = 0; k < inner; k++, at++) {
				int64_t off = (a * n + i) * inner + k;
				if (o->f)
					o->f[at] = x->f[off];
				else
					o->i[at] = x->i[off];
			}
		}
	}
	set_out_const(I, 0, o);
	I->n_folded++;
	return 0;
}

/* Unsqueeze and Squeeze: constants fold, run-time tensors get a reshape. */
static int
map_squeeze(imp *I, bool unsqueeze)
{
	int64_t axes[ST_MAX_RANK + 1];
	int na = ints_attr_or_input(I, "axes", 13, 1, axes, ST_MAX_RANK + 1);
	if (na == -2)
		return unsupported(I, "its axes must be known at import");
	if (unsqueeze && na < 0)
		return unsupported(I, "Unsqueeze needs axes");
	st_shape tmp;
	const st_shape *s = in_shape(I, 0, &tmp);
	if (s == NULL)
		return unsupported(I, "its input's shape is not known");
	int64_t dims[ST_MAX_RANK];
	int r = 0;
	if (unsqueeze) {
		int out_rank = s->rank + na;
		if (out_rank > ST_MAX_RANK)
			return unsupported(I, "the result would have rank %d", out_rank);
		bool add[ST_MAX_RANK] = { false };
		for (int k = 0; k < na; k++) {
			int a = norm_axis(axes[k], out_rank);
			if (a < 0 || add[a])
				return unsupported(I, "axis %" PRId64 " is out of range or repeated", axes[k]);
			add[a] = true;
		}
		int j = 0;
		for (int k = 0; k < out_rank; k++)
			dims[r++] = add[k] ? 1 : s->dims[j++];
	} else {
		bool drop[ST_MAX_RANK] = { false };
		for (int k = 0; k < s->rank; k++)
			drop[k] = na < 0 && s->dims[k] == 1;
		for (int k = 0; k < na; k++) {
			int a = norm_axis(axes[k], s->rank);
			if (a < 0 || s->dims[a] != 1)
				return unsupported(I, "axis %" PRId64 " is out of range or not of size 1", axes[k]);
			drop[a] = true;
		}
		for (int k = 0; k < s->rank; k++)
			if (!drop[k])
				dims[r++] = s->dims[k];
	}
	cten *x = in_const(I, 0);
	if (x != NULL) {
		set_out_const(I, 0, cten_reshaped(x, dims, r));
		I->n_folded++;
		return 0;
	}
	st_port p, out;
	int rc = in_port(I, 0, &p);
	if (rc != 0)
		return rc;
	if (reshape_layer(I, p, dims, r, true, &out) != 0)
		return -1;
	set_out_port(I, 0, out.layer, out.output);
	return 0;
}

static int
map_cast(imp *I)
{
	int32_t to = (int32_t)attr_i(I, "to", 0);
	cten *x = in_const(I, 0);
	if (x != NULL) {
		if (st_onnx_data_type_size(to) == 0)
			return unsupported(I, "Cast to %s is not supported", st_onnx_data_type_name(to));
		cten *o = cten_new(to, x->rank, x->dims);
		for (int64_t k = 0; k < x->count; k++) {
			if (o->f != NULL)
				cset(o, k, cget(x, k));
			else if (to == ST_ONNX_BOOL)
				o->i[k] = cget(x, k) != 0;
			else
				cseti(o, k, x->i ? x->i[k] : cgeti(x, k));
		}
		set_out_const(I, 0, o);
		I->n_folded++;
		return 0;
	}
	st_shape tmp;
	const st_shape *s = in_shape(I, 0, &tmp);
	if (s != NULL && onnx_of(s->dtype) == to) {
		alias_out(I, 0, in_val(I, 0));
		I->n_folded++;
		return 0;
	}
	return unsupported(I, "Cast of a run-time tensor to %s is not supported", st_onnx_data_type_name(to));
}

static int
map_constant_of_shape(imp *I)
{
	cten *shape = in_const(I, 0);
	if (shape == NULL || shape->rank != 1 || shape->count > ST_MAX_RANK)
		return unsupported(I, "its shape must be known at import");
	int64_t dims[ST_MAX_RANK];
	for (int k = 0; k < shape->count; k++)
		dims[k] = cgeti(shape, k);
	int32_t type = ST_ONNX_FLOAT;
	double v = 0;
	const st_onnx_attribute *a = attr(I, "value");
	if (a != NULL && a->t != NULL) {
		cten *c = cten_from_tensor(a->t, I->why, sizeof I->why);
		if (c == NULL || cten_decode(c, I->why, sizeof I->why) != 0 || c->count != 1) {
			cten_free(c);
			return 1;
		}
		type = c->type;
		v = cget(c, 0);
		cten_free(c);
	}
	if (!dims_ok((int)shape->count, dims))
		return unsupported(I, "a constant of that shape is too large to make at import");
	cten *o = cten_new(type, (int)shape->count, dims);
	for (int64_t k = 0; k < o->count; k++)
		cset(o, k, v);
	set_out_const(I, 0, o);
	I->n_folded++;
	return 0;
}

/* PRelu: per-channel slopes (or one) become the prelu activation; other
 * broadcasts become max(x, 0) + slope * min(x, 0). */
static int
map_prelu(imp *I)
{
	cten *slope = in_const(I, 1);
	st_shape tmp;
	const st_shape *s = in_shape(I, 0, &tmp);
	if (s == NULL)
		return unsupported(I, "its input's shape is not known");
	if (s->dtype != ST_DTYPE_FLOAT32 && s->dtype != ST_DTYPE_FLOAT16)
		return unsupported(I, "PRelu runs on float tensors here");
	int64_t C = s->rank >= 2 ? s->dims[1] : 0;
	bool per_channel = false;
	if (slope != NULL && slope->count == C && C > 1 && s->rank >= 2) {
		/* [C] (legacy opsets) or [C, 1, ...] with rank - 1 dims. */
		if (I->opset < 7 && slope->rank == 1)
			per_channel = true;
		int lead = 0;
		while (lead < slope->rank && slope->dims[lead] == 1 && slope->rank - lead > s->rank - 1)
			lead++;
		if (slope->rank - lead == s->rank - 1 && slope->dims[lead] == C)
			per_channel = true;
	}
	int rc;
	if (slope != NULL && (slope->count == 1 || per_channel)) {
		st_layer *l;
		if ((rc = activation(I, "prelu", &l)) != 0)
			return rc;
		if (slope->count == 1)
			return set_act_param(I, l, "alpha", cget(slope, 0));
		return write_weight(I, l, "prelu_slope", slope, 1, &C);
	}
	st_port x, sp, mx, mn;
	if ((rc = in_port(I, 0, &x)) != 0 || (rc = in_port(I, 1, &sp)) != 0)
		return rc;
	if ((rc = eltwise_const(I, "max", x, scalar_const(onnx_of(s->dtype), 0), &mx)) != 0 ||
	    (rc = eltwise_const(I, "min", x, scalar_const(onnx_of(s->dtype), 0), &mn)) != 0)
		return rc;
	st_layer *mul, *add;
	if (eltwise_layer(I, "mul", (st_port[]){ mn, sp }, 2, &mul) != 0 ||
	    eltwise_layer(I, "add", (st_port[]){ mx, { mul, 0 } }, 2, &add) != 0)
		return -1;
	set_out_port(I, 0, add, 0);
	return 0;
}

/* ---- dispatch ---- */

int
map_node(imp *I)
{
	char op[64];
	snprintf(op, sizeof op, "%.*s", (int)I->node->op_type.len, I->node->op_type.data ? I->node->op_type.data : "");
	bool default_domain = I->node->domain.len == 0 || st_onnx_str_eq(I->node->domain, "ai.onnx");
	if (!default_domain)
		return unsupported(I, "operators of domain %.*s are not mapped", (int)I->node->domain.len,
		                   I->node->domain.data);
	for (size_t k = 0; k < sizeof act_maps / sizeof *act_maps; k++) {
		if (strcmp(op, act_maps[k].op) == 0) {
			if (I->opset < act_maps[k].since)
				return unsupported(I, "%s does not exist in opset %d", op, I->opset);
			return map_act(I, &act_maps[k]);
		}
	}
	static const struct {
		const char *op, *arg;
		int (*fn)(imp *, const char *);
	} with_arg[] = {
		{ "MaxPool", "max", map_pool },
		{ "AveragePool", "avg", map_pool },
		{ "GlobalAveragePool", "avg", map_global_pool },
		{ "GlobalMaxPool", "max", map_global_pool },
		{ "ReduceMean", "avg", map_reduce },
		{ "ReduceMax", "max", map_reduce },
		{ "Add", "add", map_eltwise },
		{ "Sum", "add", map_eltwise },
		{ "Sub", "sub", map_eltwise },
		{ "Mul", "mul", map_eltwise },
		{ "Div", "div", map_eltwise },
		{ "Max", "max", map_eltwise },
		{ "Min", "min", map_eltwise },
		{ "DepthToSpace", "depth_to_space", map_blocks },
		{ "SpaceToDepth", "space_to_depth", map_blocks },
	};
	for (size_t k = 0; k < sizeof with_arg / sizeof *with_arg; k++) {
		if (strcmp(op, with_arg[k].op) == 0) {
			if (strcmp(op, "Add") == 0 && !all_known(I)) {
				int rc = fold_fc_bias(I);
				if (rc <= 0)
					return rc;
			}
			return with_arg[k].fn(I, with_arg[k].arg);
		}
	}
	static const struct {
		const char *op;
		int (*fn)(imp *);
	} plain[] = {
		{ "BatchNormalization", map_batchnorm },
		{ "InstanceNormalization", map_instnorm },
		{ "LayerNormalization", map_layernorm },
		{ "Gemm", map_gemm },
		{ "MatMul", map_matmul },
		{ "Concat", map_concat },
		{ "Softmax", map_softmax },
		{ "Reshape", map_reshape },
		{ "Flatten", map_flatten },
		{ "Transpose", map_transpose },
		{ "Slice", map_slice },
		{ "Pad", map_pad },
		{ "Split", map_split },
		{ "Resize", map_resize },
		{ "Upsample", map_upsample },
		{ "Dropout", map_dropout },
		{ "Identity", map_identity },
		{ "Constant", map_constant },
		{ "Shape", map_shape },
		{ "Gather", map_gather },
		{ "Cast", map_cast },
		{ "ConstantOfShape", map_constant_of_shape },
		{ "PRelu", map_prelu },
		{ "Clip", map_clip },
	};
	for (size_t k = 0; k < sizeof plain / sizeof *plain; k++) {
		if (strcmp(op, plain[k].op) == 0)
			return plain[k].fn(I);
	}
	if (strcmp(op, "Conv") == 0)
		return map_conv(I, false);
	if (strcmp(op, "ConvTranspose") == 0)
		return map_conv(I, true);
	if (strcmp(op, "Unsqueeze") == 0)
		return map_squeeze(I, true);
	if (strcmp(op, "Squeeze") == 0)
		return map_squeeze(I, false);
	return unsupported(I, "op %s has no Strata layer", op);
}

