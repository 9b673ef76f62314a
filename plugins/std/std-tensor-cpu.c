/* CPU implementations of std-tensor.c's layers: constant, identity,
 * dropout, softmax, elementwise, linear_blend, concatenation and split. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "k-nchwc.h"
#include "k-tensor.h"
#include "std.h"

#define NCHW ST_LAYOUT_BIT(ST_LAYOUT_NCHW)
#define BIT(t) ST_DTYPE_BIT(ST_DTYPE_##t)

static int64_t
tensor_bytes(const st_tensor *t)
{
	return k_elements(&t->shape) * (int64_t)k_dtype_size(t->shape.dtype);
}

/* Fails unless input 0 has dtype t (the host converts to what the
 * implementation declares, so this guards the contract). */
static int
require_dtype(st_exec_layer *L, const st_host_api *api, const st_tensor *x, st_dtype t)
{
	if (x->shape.dtype == t)
		return 0;
	api->fail(L, "%s runs on %s tensors here, but got %s", L->desc->name, api->dtype_name(t),
	          api->dtype_name(x->shape.dtype));
	return -1;
}

/* ---- constant ---- */

static int
constant_prepare(st_exec_layer *L, const st_host_api *api)
{
	const st_tensor *values = L->n_weights > 0 ? &L->weights[0] : NULL;
	st_tensor *out = &L->outputs[0];
	if (values == NULL || values->data == NULL)
		return 0;
	int64_t n = k_elements(&out->shape);
	char have[SHAPE_TEXT], want[SHAPE_TEXT];
	if (k_elements(&values->shape) != n) {
		api->fail(L, "values holds %s but the constant is %s",
		          std_shape_text(api, &values->shape, have), std_shape_text(api, &out->shape, want));
		return -1;
	}
	/* Weights come as float32; each value must survive the trip into the
	 * constant's dtype, or the file and the run would disagree. */
	if (values->shape.dtype == ST_DTYPE_FLOAT32) {
		const float *v = values->data;
		for (int64_t i = 0; i < n; i++) {
			if (!k_float_fits(v[i], out->shape.dtype)) {
				api->fail(L, "values element %lld is %.9g, which dtype %s cannot hold",
				          (long long)i, (double)v[i], api->dtype_name(out->shape.dtype));
				return -1;
			}
		}
	}
	return 0;
}

static int
constant_run(st_exec_layer *L, const st_exec_ctx *ctx)
{
	const st_tensor *values = L->n_weights > 0 ? &L->weights[0] : NULL;
	st_tensor *out = &L->outputs[0];
	int64_t n = k_elements(&out->shape);
	if (values != NULL && values->data != NULL) {
		k_convert(values->data, values->shape.dtype, out->data, out->shape.dtype, n);
		return 0;
	}
	uint64_t element = 0;
	k_scalar(L->params[CONSTANT_VALUE].f, out->shape.dtype, &element);
	k_fill(out->data, n, &element, k_dtype_size(out->shape.dtype), ctx);
	return 0;
}

/* ---- identity, dropout: a copy, or nothing when the host shares the buffer ---- */

static int
copy_run(st_exec_layer *L, const st_exec_ctx *ctx)
{
	k_copy(L->outputs[0].data, L->inputs[0].data, (size_t)tensor_bytes(&L->inputs[0]), ctx);
	return 0;
}

/* ---- softmax ---- */

/* The input as [outer, len, inner] around the softmax axis. */
static void
around_axis(const st_shape *s, int axis, int64_t *outer, int64_t *len, int64_t *inner)
{
	*outer = *inner = 1;
	for (int k = 0; k < axis; k++)
		*outer *= s->dims[k];
	*len = s->dims[axis];
	for (int k = axis + 1; k < s->rank; k++)
		*inner *= s->dims[k];
}

static int
softmax_prepare(st_exec_layer *L, const st_host_api *api)
{
	const st_tensor *x = &L->inputs[0];
	if (require_dtype(L, api, x, ST_DTYPE_FLOAT32) != 0)
		return -1;
	if (std_axis(L->params[SOFTMAX_AXIS].i, x->shape.rank) < 0) {
		api->fail(L, "axis %lld is out of range for rank %d", (long long)L->params[SOFTMAX_AXIS].i,
		          x->shape.rank);
		return -1;
	}
	return 0;
}

static int
softmax_run(st_exec_layer *L, const st_exec_ctx *ctx)
{
	const st_tensor *x = &L->inputs[0];
	int axis = std_axis(L->params[SOFTMAX_AXIS].i, x->shape.rank);
	int64_t outer, len, inner;
	around_axis(&x->shape, axis, &outer, &len, &inner);
	k_softmax(x->data, L->outputs[0].data, outer, len, inner, ctx);
	return 0;
}

/* ---- elementwise ---- */

/* The operations in the descriptor's order, as kernels name them. */
static const char *const eltwise_names[] = { "add", "sub", "mul", "div", "max", "min" };
static const k_op eltwise_ops[] = {
	[OP_ADD] = K_OP_ADD, [OP_SUB] = K_OP_SUB, [OP_MUL] = K_OP_MUL,
	[OP_DIV] = K_OP_DIV, [OP_MAX] = K_OP_MAX, [OP_MIN] = K_OP_MIN,
};

/* Whether every input of L comes blocked (ST_LAYOUT_NCHW16C). */
static bool
inputs_blocked(const st_exec_layer *L)
{
	for (int i = 0; i < L->n_inputs; i++) {
		if (L->inputs[i].layout != ST_LAYOUT_NCHW16C)
			return false;
	}
	return true;
}

/* Whether every input of L has the output's floating-point image shape:
 * then the operation runs element by element whatever the layout (blocked,
 * channels last), and on float16 widened block by block. */
static bool
eltwise_same_images(const st_exec_layer *L)
{
	const st_shape *out = &L->outputs[0].shape;
	if (!(out->dtype == ST_DTYPE_FLOAT32 || out->dtype == ST_DTYPE_FLOAT16) || out->rank < 3 || L->n_inputs < 1)
		return false;
	for (int i = 0; i < L->n_inputs; i++) {
		st_shape s = std_eltwise_operand_shape(L, i);
		if (s.rank != out->rank || s.dtype != out->dtype ||
		    memcmp(s.dims, out->dims, sizeof s.dims[0] * (size_t)out->rank) != 0)
			return false;
	}
	return true;
}

/* Whether every input of L comes in layout. */
static bool
inputs_in(const st_exec_layer *L, st_layout layout)
{
	for (int i = 0; i < L->n_inputs; i++) {
		if (L->inputs[i].layout != layout)
			return false;
	}
	return true;
}

/* Blocked (float32) or channels last where every input comes so, with the
 * output's shape; NCHW otherwise. */
static st_layout
eltwise_choose_layout(const st_exec_layer *L)
{
	if (!eltwise_same_images(L))
		return ST_LAYOUT_NCHW;
	if (inputs_blocked(L) && L->outputs[0].shape.dtype == ST_DTYPE_FLOAT32)
		return ST_LAYOUT_NCHW16C;
	return inputs_in(L, ST_LAYOUT_NHWC) && L->outputs[0].shape.rank == 4 ? ST_LAYOUT_NHWC : ST_LAYOUT_NCHW;
}

/* Float16 for operands of one shape, float32 (converted around) for
 * broadcasts. */
static st_dtype
eltwise_choose_dtype(const st_exec_layer *L, st_layout layout)
{
	return layout != ST_LAYOUT_NCHW16C && eltwise_same_images(L) ? ST_DTYPE_FLOAT16 : ST_DTYPE_FLOAT32;
}

static int
eltwise_prepare(st_exec_layer *L, const st_host_api *api)
{
	int op = (int)L->params[ELTWISE_OPERATION].i;
	st_dtype t = L->outputs[0].shape.dtype;
	bool same = eltwise_same_images(L);
	if (t == ST_DTYPE_FLOAT16 && !same) {
		api->fail(L, "on float16 tensors the CPU elementwise layer takes operands of the output's shape only");
		return -1;
	}
	if (L->outputs[0].layout == ST_LAYOUT_NHWC && !same) {
		api->fail(L, "channels last the CPU elementwise layer takes operands of the output's shape only");
		return -1;
	}
	if (t != ST_DTYPE_FLOAT16 && !k_binary_supports(eltwise_ops[op], t)) {
		api->fail(L, "operation %s is not implemented for %s tensors", eltwise_names[op],
		          api->dtype_name(t));
		return -1;
	}
	for (int i = 0; i < L->n_inputs; i++) {
		if (L->inputs[i].data == NULL || L->inputs[i].shape.dtype != t) {
			api->fail(L, "input %d is missing or not %s", i, api->dtype_name(t));
			return -1;
		}
	}
	if (L->outputs[0].layout == ST_LAYOUT_NCHW16C) {
		if (!inputs_blocked(L) || !same || t != ST_DTYPE_FLOAT32) {
			api->fail(L, "on NCHW16C tensors the CPU elementwise layer takes float32 images of the output's "
			             "shape only, all blocked");
			return -1;
		}
	}
	return 0;
}

/* Blocked tensors (ST_LAYOUT_NCHW16C) of one shape: the operation over
 * every element, the lanes past the channels included, which are then set
 * to zero again (0 / 0 is not). */
static void
eltwise_blocked(st_exec_layer *L, k_op op, const st_exec_ctx *ctx)
{
	st_tensor *out = &L->outputs[0];
	int64_t plane = 1, blocks = (out->shape.dims[1] + ST_LAYOUT_BLOCK - 1) / ST_LAYOUT_BLOCK;
	for (int i = 2; i < out->shape.rank; i++)
		plane *= out->shape.dims[i];
	st_shape flat = { .dtype = ST_DTYPE_FLOAT32, .rank = 1,
		          .dims = { out->shape.dims[0] * blocks * plane * ST_LAYOUT_BLOCK } };
	if (L->n_inputs == 1) {
		k_copy(out->data, L->inputs[0].data, (size_t)flat.dims[0] * sizeof(float), ctx);
		return;
	}
	k_binary(op, ST_DTYPE_FLOAT32, out->data, &flat, L->inputs[0].data, &flat, L->inputs[1].data, &flat, ctx);
	for (int i = 2; i < L->n_inputs; i++)
		k_binary(op, ST_DTYPE_FLOAT32, out->data, &flat, out->data, &flat, L->inputs[i].data, &flat, ctx);
	k_nchwc_zero_tail(out->shape.dims[0], out->shape.dims[1], plane, out->data);
}

static int
eltwise_run(st_exec_layer *L, const st_exec_ctx *ctx)
{
	st_tensor *out = &L->outputs[0];
	st_dtype t = out->shape.dtype;
	k_op op = eltwise_ops[L->params[ELTWISE_OPERATION].i];
	if (out->layout == ST_LAYOUT_NCHW16C) {
		eltwise_blocked(L, op, ctx);
		return 0;
	}
	if (L->n_inputs == 1) {
		k_copy(out->data, L->inputs[0].data, (size_t)tensor_bytes(out), ctx);
		return 0;
	}
	if (t == ST_DTYPE_FLOAT16) {
		int64_t n = tensor_bytes(out) / 2;
		k_binary_half(op, out->data, L->inputs[0].data, L->inputs[1].data, n, ctx);
		for (int i = 2; i < L->n_inputs; i++)
			k_binary_half(op, out->data, out->data, L->inputs[i].data, n, ctx);
		return 0;
	}
	/* Fold from the first input to the last; after the first step the
	 * running result lives in the output, which has the full shape. */
	st_shape a = std_eltwise_operand_shape(L, 0), b = std_eltwise_operand_shape(L, 1);
	k_binary(op, t, out->data, &out->shape, L->inputs[0].data, &a, L->inputs[1].data, &b, ctx);
	for (int i = 2; i < L->n_inputs; i++) {
		b = std_eltwise_operand_shape(L, i);
		k_binary(op, t, out->data, &out->shape, out->data, &out->shape, L->inputs[i].data, &b, ctx);
	}
	return 0;
}

/* ---- linear_blend ---- */

static int
blend_prepare(st_exec_layer *L, const st_host_api *api)
{
	if (require_dtype(L, api, &L->inputs[0], ST_DTYPE_FLOAT32) != 0 ||
	    require_dtype(L, api, &L->inputs[1], ST_DTYPE_FLOAT32) != 0)
		return -1;
	return 0;
}

static int
blend_run(st_exec_layer *L, const st_exec_ctx *ctx)
{
	st_tensor *out = &L->outputs[0];
	k_linear_blend((float)L->params[BLEND_ALPHA].f, out->data, &out->shape, L->inputs[0].data,
	               &L->inputs[0].shape, L->inputs[1].data, &L->inputs[1].shape, ctx);
	return 0;
}

/* ---- concatenation and split ---- */

/* Most parts a blocked or channels-last concatenation takes (views of
 * them on the stack). */
#define CONCAT_BLOCKED_PARTS 64

/* Whether the concatenation of L's inputs along axis can run on blocked
 * tensors (ST_LAYOUT_NCHW16C): float32 images, along the channels of
 * whole blocks (each part a multiple of 16), or along the samples. */
static bool
concat_blockable(const st_exec_layer *L, int axis)
{
	for (int i = 0; i < L->n_inputs; i++) {
		const st_shape *s = &L->inputs[i].shape;
		if (s->dtype != ST_DTYPE_FLOAT32 || s->rank < 3 || (axis == 1 && s->dims[1] % ST_LAYOUT_BLOCK != 0))
			return false;
	}
	return (axis == 0 || axis == 1) && L->n_inputs <= CONCAT_BLOCKED_PARTS;
}

/* Whether the concatenation can run channels last: images of rank 4
 * joined along the samples or the channels. */
static bool
concat_nhwc_fits(const st_exec_layer *L, int axis)
{
	for (int i = 0; i < L->n_inputs; i++) {
		if (L->inputs[i].shape.rank != 4)
			return false;
	}
	return (axis == 0 || axis == 1) && L->outputs[0].shape.rank == 4 && L->n_inputs <= CONCAT_BLOCKED_PARTS;
}

/* Blocked where every input comes blocked and whole blocks join; channels
 * last where some input comes so and none blocked (the others are
 * converted, as the layers after would convert the whole); NCHW
 * otherwise. */
static st_layout
concat_choose_layout(const st_exec_layer *L)
{
	int axis = std_axis(L->params[CONCAT_AXIS].i, L->outputs[0].shape.rank);
	if (L->n_inputs > 0 && inputs_blocked(L) && concat_blockable(L, axis))
		return ST_LAYOUT_NCHW16C;
	int nhwc = 0, blocked = 0;
	for (int i = 0; i < L->n_inputs; i++) {
		nhwc += L->inputs[i].layout == ST_LAYOUT_NHWC;
		blocked += L->inputs[i].layout == ST_LAYOUT_NCHW16C;
	}
	return nhwc > 0 && blocked == 0 && concat_nhwc_fits(L, axis) ? ST_LAYOUT_NHWC : ST_LAYOUT_NCHW;
}

/* A channels-last image N x C x H x W is, in memory, the matrix (N H W) x
 * C, or N x (H W C) for a join along the samples: the view k_concat joins
 * along axis 1 or 0 of. */
static st_tensor
nhwc_view(const st_tensor *t, int axis)
{
	const int64_t *d = t->shape.dims;
	st_tensor v = { .data = t->data, .layout = ST_LAYOUT_NCHW };
	v.shape = (st_shape){ .dtype = t->shape.dtype, .rank = 2 };
	v.shape.dims[0] = axis == 1 ? d[0] * d[2] * d[3] : d[0];
	v.shape.dims[1] = axis == 1 ? d[1] : d[1] * d[2] * d[3];
	return v;
}

/* A blocked tensor of shape N x C x spatial... is, in memory, the NCHW
 * tensor N x ceil(C / 16) x (spatial... x 16). */
static st_tensor
blocks_view(const st_tensor *t)
{
	int64_t blocks = (t->shape.dims[1] + ST_LAYOUT_BLOCK - 1) / ST_LAYOUT_BLOCK;
	st_tensor v = { .data = t->data, .layout = ST_LAYOUT_NCHW };
	v.shape = (st_shape){ .dtype = t->shape.dtype, .rank = 3, .dims = { t->shape.dims[0], blocks, ST_LAYOUT_BLOCK } };
	for (int i = 2; i < t->shape.rank; i++)
		v.shape.dims[2] *= t->shape.dims[i];
	return v;
}

static int
concat_run(st_exec_layer *L, const st_exec_ctx *ctx)
{
	st_tensor *out = &L->outputs[0];
	int axis = std_axis(L->params[CONCAT_AXIS].i, out->shape.rank);
	if (out->layout != ST_LAYOUT_NCHW16C && out->layout != ST_LAYOUT_NHWC) {
		k_concat(L->inputs, L->n_inputs, axis, out, ctx);
		return 0;
	}
	bool nhwc = out->layout == ST_LAYOUT_NHWC;
	st_tensor parts[CONCAT_BLOCKED_PARTS], whole = nhwc ? nhwc_view(out, axis) : blocks_view(out);
	for (int i = 0; i < L->n_inputs; i++)
		parts[i] = nhwc ? nhwc_view(&L->inputs[i], axis) : blocks_view(&L->inputs[i]);
	k_concat(parts, L->n_inputs, nhwc ? (axis == 1) : axis, &whole, ctx);
	return 0;
}

static int
axis_prepare(st_exec_layer *L, const st_host_api *api, int64_t axis, int rank)
{
	if (std_axis(axis, rank) >= 0)
		return 0;
	api->fail(L, "axis %lld is out of range for rank %d", (long long)axis, rank);
	return -1;
}

static int
concat_prepare(st_exec_layer *L, const st_host_api *api)
{
	if (axis_prepare(L, api, L->params[CONCAT_AXIS].i, L->outputs[0].shape.rank) != 0)
		return -1;
	int axis = std_axis(L->params[CONCAT_AXIS].i, L->outputs[0].shape.rank);
	if (L->outputs[0].layout == ST_LAYOUT_NHWC) {
		if (!inputs_in(L, ST_LAYOUT_NHWC) || !concat_nhwc_fits(L, axis)) {
			api->fail(L, "channels last the CPU concatenation joins at most %d images of rank 4, all channels "
			             "last, along the samples or the channels",
			          CONCAT_BLOCKED_PARTS);
			return -1;
		}
		return 0;
	}
	if (L->outputs[0].layout != ST_LAYOUT_NCHW16C)
		return 0;
	if (!inputs_blocked(L) || !concat_blockable(L, axis)) {
		api->fail(L, "on NCHW16C tensors the CPU concatenation joins at most %d float32 images, all "
		             "blocked, along the samples or along channels in multiples of 16",
		          CONCAT_BLOCKED_PARTS);
		return -1;
	}
	return 0;
}

static int
split_prepare(st_exec_layer *L, const st_host_api *api)
{
	return axis_prepare(L, api, L->params[SPLIT_AXIS].i, L->inputs[0].shape.rank);
}

static int
split_run(st_exec_layer *L, const st_exec_ctx *ctx)
{
	const st_tensor *in = &L->inputs[0];
	int axis = std_axis(L->params[SPLIT_AXIS].i, in->shape.rank);
	k_split(in, axis, L->outputs, L->n_outputs, ctx);
	return 0;
}

/* ---- the table ---- */

#define ARITHMETIC_TYPES (BIT(FLOAT32) | BIT(INT64) | BIT(INT32) | BIT(INT8) | BIT(UINT8))

const st_impl_desc std_tensor_impls[] = {
	{ .layer = "constant", .backend = "cpu", .layouts = NCHW, .dtypes = ST_DTYPE_BITS_ALL,
	  .prepare = constant_prepare, .run = constant_run },
	{ .layer = "identity", .backend = "cpu", .layouts = NCHW, .dtypes = ST_DTYPE_BITS_ALL,
	  .flags = ST_IMPL_IN_PLACE, .run = copy_run },
	{ .layer = "dropout", .backend = "cpu", .layouts = NCHW, .dtypes = ST_DTYPE_BITS_ALL,
	  .flags = ST_IMPL_IN_PLACE, .run = copy_run },
	{ .layer = "softmax", .backend = "cpu", .layouts = NCHW, .dtypes = BIT(FLOAT32),
	  .flags = ST_IMPL_IN_PLACE, .prepare = softmax_prepare, .run = softmax_run },
	{ .layer = "elementwise", .backend = "cpu",
	  .layouts = NCHW | ST_LAYOUT_BIT(ST_LAYOUT_NHWC) | ST_LAYOUT_BIT(ST_LAYOUT_NCHW16C),
	  .dtypes = ARITHMETIC_TYPES | BIT(FLOAT16), .flags = ST_IMPL_CHOOSES_LAYOUT | ST_IMPL_CHOOSES_DTYPE,
	  .prepare = eltwise_prepare, .run = eltwise_run, .choose_layout = eltwise_choose_layout,
	  .choose_dtype = eltwise_choose_dtype },
	{ .layer = "linear_blend", .backend = "cpu", .layouts = NCHW, .dtypes = BIT(FLOAT32),
	  .prepare = blend_prepare, .run = blend_run },
	{ .layer = "concatenation", .backend = "cpu",
	  .layouts = NCHW | ST_LAYOUT_BIT(ST_LAYOUT_NHWC) | ST_LAYOUT_BIT(ST_LAYOUT_NCHW16C),
	  .dtypes = ST_DTYPE_BITS_ALL, .flags = ST_IMPL_CHOOSES_LAYOUT, .prepare = concat_prepare,
	  .run = concat_run, .choose_layout = concat_choose_layout },
	{ .layer = "split", .backend = "cpu", .layouts = NCHW, .dtypes = ST_DTYPE_BITS_ALL,
	  .prepare = split_prepare, .run = split_run },
};
const int std_tensor_impl_count = STD_COUNT(std_tensor_impls);
