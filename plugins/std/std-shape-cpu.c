/* CPU implementations of std-shape.c's layers: resize, pad, slice, reshape,
 * flatten, transpose, space_to_depth and depth_to_space. */
#include "config.h"

#include <stdlib.h>

#include "k-tensor.h"
#include "std.h"

#define NCHW ST_LAYOUT_BIT(ST_LAYOUT_NCHW)

static size_t
elem_size(const st_tensor *t)
{
	return k_dtype_size(t->shape.dtype);
}

/* ---- resize ---- */

static int
resize_prepare(st_exec_layer *L, const st_host_api *api)
{
	const st_shape *in = &L->inputs[0].shape, *out = &L->outputs[0].shape;
	k_resize_desc d;
	if (std_resize_desc(L, api, &d) != 0)
		return -1;
	if (d.mode != K_RESIZE_NEAREST && in->dtype != ST_DTYPE_FLOAT32 && in->dtype != ST_DTYPE_FLOAT16) {
		api->fail(L, "mode linear and cubic need float32 or float16, not %s", api->dtype_name(in->dtype));
		return -1;
	}
	/* The plan holds the taps of every output index: rebuild it for these shapes. */
	free(L->state);
	L->state = malloc(k_resize_plan_bytes(&d, in, out));
	if (L->state == NULL) {
		api->fail(L, "out of memory for the resize tables");
		return -1;
	}
	const k_resize_plan *plan = k_resize_plan_init(L->state, &d, in, out);
	/* The kernel's rows, then for float16 the input and output widened to
	 * float32 (interpolation computes in float32). */
	L->scratch_bytes = (k_resize_scratch_bytes(plan) + 63) / 64 * 64;
	if (d.mode != K_RESIZE_NEAREST && in->dtype == ST_DTYPE_FLOAT16)
		L->scratch_bytes += (size_t)(k_elements(in) + k_elements(out)) * sizeof(float);
	return 0;
}

static int
resize_run(st_exec_layer *L, const st_exec_ctx *ctx)
{
	const k_resize_plan *plan = L->state;
	const st_tensor *in = &L->inputs[0];
	st_tensor *out = &L->outputs[0];
	void *rows = L->scratch;
	if (plan->desc.mode == K_RESIZE_NEAREST || in->shape.dtype == ST_DTYPE_FLOAT32) {
		k_resize(plan, in->data, out->data, elem_size(in), rows, ctx);
		return 0;
	}
	/* float16: widen, interpolate, round back (FP32 accumulation). */
	int64_t n_in = k_elements(&in->shape), n_out = k_elements(&out->shape);
	float *wide_in = (float *)(void *)((char *)L->scratch + (k_resize_scratch_bytes(plan) + 63) / 64 * 64);
	float *wide_out = wide_in + n_in;
	k_half_to_float_array(in->data, wide_in, n_in);
	k_resize(plan, wide_in, wide_out, sizeof(float), rows, ctx);
	k_float_to_half_array(wide_out, out->data, n_out);
	return 0;
}

static void
free_state(st_exec_layer *L)
{
	free(L->state);
	L->state = NULL;
}

/* ---- pad ---- */

/* Pads before each axis, by the layout of the pads list (as reshape reads it). */
static void
pad_begin(const st_exec_layer *L, int64_t *begin)
{
	const st_value *pads = &L->params[PAD_PADS];
	int rank = L->inputs[0].shape.rank;
	for (int k = 0; k < rank; k++)
		begin[k] = 0;
	if (pads->count == 2 * rank) {
		for (int k = 0; k < rank; k++)
			begin[k] = pads->ints[k];
	} else if (rank >= 3 && pads->count == 2 * (rank - 2)) {
		for (int k = 2; k < rank; k++)
			begin[k] = pads->ints[k - 2];
	} else if (pads->count == 1) {
		for (int k = 2; k < rank; k++)
			begin[k] = pads->ints[0];
	}
}

static const k_pad_mode pad_modes[] = {
	[PAD_CONSTANT] = K_PAD_CONSTANT, [PAD_REFLECT] = K_PAD_REFLECT, [PAD_EDGE] = K_PAD_EDGE,
};

static int
pad_prepare(st_exec_layer *L, const st_host_api *api)
{
	const st_shape *in = &L->inputs[0].shape, *out = &L->outputs[0].shape;
	int64_t begin[ST_MAX_RANK];
	pad_begin(L, begin);
	int mode = (int)L->params[PAD_MODE].i;
	for (int k = 0; k < in->rank; k++) {
		int64_t end = out->dims[k] - in->dims[k] - begin[k];
		int64_t kept = in->dims[k] + (begin[k] < 0 ? begin[k] : 0) + (end < 0 ? end : 0);
		bool grows = begin[k] > 0 || end > 0;
		bool mirrors = (begin[k] > 0 && begin[k] >= kept) || (end > 0 && end >= kept);
		if (kept < 0 || (mode == PAD_REFLECT && mirrors) || (mode == PAD_EDGE && kept == 0 && grows)) {
			api->fail(L, "pads on axis %d do not fit its size %lld", k, (long long)in->dims[k]);
			return -1;
		}
	}
	return 0;
}

static int
pad_run(st_exec_layer *L, const st_exec_ctx *ctx)
{
	const st_tensor *in = &L->inputs[0];
	st_tensor *out = &L->outputs[0];
	int64_t begin[ST_MAX_RANK];
	pad_begin(L, begin);
	uint64_t fill = 0;
	k_scalar(L->params[PAD_VALUE].f, in->shape.dtype, &fill);
	k_pad(in->data, &in->shape, begin, pad_modes[L->params[PAD_MODE].i], &fill, out->data, &out->shape,
	      elem_size(in), ctx);
	return 0;
}

/* ---- slice ---- */

/* The first index read and the step on every axis, by ONNX Slice's
 * clamping (the same rules reshape sized the output with). */
static void
slice_walk(const st_exec_layer *L, int64_t *start, int64_t *step)
{
	const st_shape *in = &L->inputs[0].shape;
	const st_value *starts = &L->params[SLICE_STARTS], *axes = &L->params[SLICE_AXES];
	const st_value *steps = &L->params[SLICE_STEPS];
	for (int k = 0; k < in->rank; k++) {
		start[k] = 0;
		step[k] = 1;
	}
	for (int i = 0; i < starts->count; i++) {
		int axis = std_axis(axes->count ? axes->ints[i] : i, in->rank);
		int64_t d = in->dims[axis], s = starts->ints[i], st = steps->count ? steps->ints[i] : 1;
		if (s < 0)
			s += d;
		if (st > 0)
			s = s < 0 ? 0 : s > d ? d : s;
		else
			s = s < 0 ? 0 : s > d - 1 ? d - 1 : s;
		start[axis] = s;
		step[axis] = st;
	}
}

static int
slice_prepare(st_exec_layer *L, const st_host_api *api)
{
	const st_shape *in = &L->inputs[0].shape;
	const st_value *starts = &L->params[SLICE_STARTS], *axes = &L->params[SLICE_AXES];
	const st_value *steps = &L->params[SLICE_STEPS];
	for (int i = 0; i < starts->count; i++) {
		if (std_axis(axes->count ? axes->ints[i] : i, in->rank) < 0 ||
		    (steps->count && steps->ints[i] == 0)) {
			api->fail(L, "starts item %d names no axis of the input, or has step 0", i);
			return -1;
		}
	}
	return 0;
}

static int
slice_run(st_exec_layer *L, const st_exec_ctx *ctx)
{
	const st_tensor *in = &L->inputs[0];
	st_tensor *out = &L->outputs[0];
	int64_t start[ST_MAX_RANK], step[ST_MAX_RANK];
	slice_walk(L, start, step);
	k_slice(in->data, &in->shape, start, step, out->data, &out->shape, elem_size(in), ctx);
	return 0;
}

/* ---- reshape, flatten: the bytes stay as they are ---- */

static int
copy_run(st_exec_layer *L, const st_exec_ctx *ctx)
{
	const st_tensor *in = &L->inputs[0];
	k_copy(L->outputs[0].data, in->data, (size_t)k_elements(&in->shape) * elem_size(in), ctx);
	return 0;
}

/* ---- transpose ---- */

static void
transpose_perm(const st_exec_layer *L, int *perm)
{
	const st_value *p = &L->params[TRANSPOSE_PERM];
	int rank = L->inputs[0].shape.rank;
	for (int k = 0; k < rank; k++)
		perm[k] = p->count ? (int)p->ints[k] : rank - 1 - k;
}

static int
transpose_prepare(st_exec_layer *L, const st_host_api *api)
{
	const st_value *p = &L->params[TRANSPOSE_PERM];
	int rank = L->inputs[0].shape.rank;
	unsigned seen = 0;
	for (int k = 0; k < p->count; k++) {
		if (p->count != rank || p->ints[k] < 0 || p->ints[k] >= rank || (seen >> p->ints[k]) & 1u) {
			api->fail(L, "perm is not a permutation of the input's %d axes", rank);
			return -1;
		}
		seen |= 1u << p->ints[k];
	}
	return 0;
}

static int
transpose_run(st_exec_layer *L, const st_exec_ctx *ctx)
{
	const st_tensor *in = &L->inputs[0];
	int perm[ST_MAX_RANK];
	transpose_perm(L, perm);
	k_transpose(in->data, &in->shape, perm, L->outputs[0].data, elem_size(in), ctx);
	return 0;
}

/* ---- space_to_depth, depth_to_space ---- */

static int
block_prepare(st_exec_layer *L, const st_host_api *api)
{
	const st_shape *in = &L->inputs[0].shape;
	if (in->rank != 4) {
		api->fail(L, "%s needs a 4-D input", L->desc->name);
		return -1;
	}
	return 0;
}

static int
s2d_run(st_exec_layer *L, const st_exec_ctx *ctx)
{
	const st_tensor *in = &L->inputs[0];
	k_space_to_depth(in->data, &in->shape, L->params[BLOCK_SIZE].i, L->outputs[0].data, elem_size(in),
	                 ctx);
	return 0;
}

static int
d2s_run(st_exec_layer *L, const st_exec_ctx *ctx)
{
	const st_tensor *in = &L->inputs[0];
	k_depth_to_space(in->data, &in->shape, L->params[BLOCK_SIZE].i, L->params[D2S_MODE].i == D2S_CRD,
	                 L->outputs[0].data, elem_size(in), ctx);
	return 0;
}

/* ---- the table ---- */

const st_impl_desc std_shape_impls[] = {
	{ .layer = "resize", .backend = "cpu", .layouts = NCHW, .dtypes = ST_DTYPE_BITS_ALL,
	  .prepare = resize_prepare, .run = resize_run, .release = free_state },
	{ .layer = "pad", .backend = "cpu", .layouts = NCHW, .dtypes = ST_DTYPE_BITS_ALL,
	  .prepare = pad_prepare, .run = pad_run },
	{ .layer = "slice", .backend = "cpu", .layouts = NCHW, .dtypes = ST_DTYPE_BITS_ALL,
	  .prepare = slice_prepare, .run = slice_run },
	{ .layer = "reshape", .backend = "cpu", .layouts = NCHW, .dtypes = ST_DTYPE_BITS_ALL,
	  .flags = ST_IMPL_IN_PLACE, .run = copy_run },
	{ .layer = "flatten", .backend = "cpu", .layouts = NCHW, .dtypes = ST_DTYPE_BITS_ALL,
	  .flags = ST_IMPL_IN_PLACE, .run = copy_run },
	{ .layer = "transpose", .backend = "cpu", .layouts = NCHW, .dtypes = ST_DTYPE_BITS_ALL,
	  .prepare = transpose_prepare, .run = transpose_run },
	{ .layer = "space_to_depth", .backend = "cpu", .layouts = NCHW, .dtypes = ST_DTYPE_BITS_ALL,
	  .prepare = block_prepare, .run = s2d_run },
	{ .layer = "depth_to_space", .backend = "cpu", .layouts = NCHW, .dtypes = ST_DTYPE_BITS_ALL,
	  .prepare = block_prepare, .run = d2s_run },
};
const int std_shape_impl_count = STD_COUNT(std_shape_impls);
