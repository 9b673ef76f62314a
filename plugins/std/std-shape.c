/* Layers that move data without arithmetic on it (and resize): the output shape is the point. */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "std.h"

/* Room for a DIMS list of up to 2·ST_MAX_RANK values, "[a, b, ...]". */
#define LIST_TEXT 400

/* Formats a DIMS value as "[2, -1]", since shapes cannot show -1 or a list's brackets. */
static const char *
list_text(const st_value *v, char *buf)
{
	int used = snprintf(buf, LIST_TEXT, "[");
	for (int i = 0; i < v->count && used < LIST_TEXT; i++)
		used += snprintf(buf + used, (size_t)(LIST_TEXT - used), "%s%" PRId64, i ? ", " : "", v->ints[i]);
	if (used < LIST_TEXT)
		snprintf(buf + used, (size_t)(LIST_TEXT - used), "]");
	return buf;
}

/* ---- resize ---- */

static const char *const resize_modes[] = { "nearest", "linear", "cubic", NULL };
static const char *const coordinate_modes[] = { "half_pixel", "half_pixel_symmetric", "pytorch_half_pixel",
	                                        "align_corners", "asymmetric", "tf_half_pixel_for_nn", NULL };
static const char *const nearest_modes[] = { "round_prefer_floor", "round_prefer_ceil", "floor", "ceil", NULL };

static const st_param_desc resize_params[] = {
	[RESIZE_MODE] = { .name = "mode", .kind = ST_PARAM_ENUM, .default_value = "nearest",
	                  .enum_values = resize_modes,
	                  .doc = "Interpolation: nearest neighbour, linear (bilinear on images) or cubic "
	                         "(bicubic on images)." },
	[RESIZE_SCALES] = { .name = "scales", .kind = ST_PARAM_FLOATS, .default_value = "[2.0]",
	                    .min_count = 0, .max_count = ST_MAX_RANK,
	                    .doc = "Factors greater than 0: one for every spatial axis (2 and up), one per "
	                           "spatial axis, or one per axis. Output size is floor(size · scale)." },
	[RESIZE_SIZES] = { .name = "sizes", .kind = ST_PARAM_DIMS, .default_value = "[]",
	                   .flags = ST_PARAM_HAS_MIN, .min = 1, .min_count = 0, .max_count = ST_MAX_RANK,
	                   .doc = "Output sizes, counted like scales; when not empty they are used and "
	                          "scales is ignored." },
	[RESIZE_COORDINATES] = { .name = "coordinate_transformation_mode", .kind = ST_PARAM_ENUM,
	                         .default_value = "half_pixel", .enum_values = coordinate_modes,
	                         .doc = "How an output coordinate maps back onto the input, as in ONNX "
	                                "Resize; half_pixel matches PyTorch with align_corners=False." },
	[RESIZE_NEAREST_MODE] = { .name = "nearest_mode", .kind = ST_PARAM_ENUM,
	                          .default_value = "round_prefer_floor", .enum_values = nearest_modes,
	                          .doc = "How mode nearest rounds a mapped coordinate to an input index; "
	                                 "other modes ignore it." },
	[RESIZE_CUBIC_A] = { .name = "cubic_coeff_a", .kind = ST_PARAM_FLOAT, .default_value = "-0.75",
	                     .doc = "Coefficient a of the cubic kernel (mode cubic only): -0.75 as in "
	                            "PyTorch, -0.5 as in TensorFlow." },
	[RESIZE_EXCLUDE_OUTSIDE] = { .name = "exclude_outside", .kind = ST_PARAM_BOOL, .default_value = "false",
	                             .doc = "With mode cubic, give zero weight to taps outside the input "
	                                    "and renormalise the others." },
};

/*
 * Works out which axes a list of count values covers: 1 value or rank − 2
 * values cover the spatial axes (2 and up) when there are any, rank values
 * cover every axis. Returns the first covered axis, or -1 after reporting.
 */
static int
covered_axes(st_reshape *r, const st_host_api *api, const char *what, int count, const st_shape *in)
{
	char a[SHAPE_TEXT];
	int rank = in->rank;
	if (rank >= 3 && (count == 1 || count == rank - 2))
		return 2;
	if (count == rank)
		return 0;
	if (rank == 3)
		api->message(r, ST_SEVERITY_ERROR,
		             "%s has %d values, but input %s (rank 3) takes 1 for its spatial axis (2) or 3 "
		             "for every axis",
		             what, count, std_shape_text(api, in, a));
	else if (rank > 3)
		api->message(r, ST_SEVERITY_ERROR,
		             "%s has %d values, but input %s (rank %d) takes 1 or %d for its spatial axes (2 "
		             "and up), or %d for every axis",
		             what, count, std_shape_text(api, in, a), rank, rank - 2, rank);
	else
		api->message(r, ST_SEVERITY_ERROR,
		             "%s has %d values, but input %s has rank %d and no spatial axes (2 and up): "
		             "give %d values, one per axis",
		             what, count, std_shape_text(api, in, a), rank, rank);
	return -1;
}

static int
resize_reshape(st_reshape *r, const st_host_api *api)
{
	const st_shape *in = r->inputs[0];
	const st_value *scales = &r->params[RESIZE_SCALES];
	const st_value *sizes = &r->params[RESIZE_SIZES];
	int mode = (int)r->params[RESIZE_MODE].i;
	char a[SHAPE_TEXT];
	if (in->rank == 0) {
		api->message(r, ST_SEVERITY_ERROR, "resize needs an input of rank 1 or more, got a scalar");
		return -1;
	}
	/* Interpolating integers would need a rounding rule ONNX leaves to runtimes. */
	if (mode != RESIZE_NEAREST && !std_is_float(in->dtype)) {
		api->message(r, ST_SEVERITY_ERROR,
		             "mode %s needs a float input (float32 or float16), not %s; mode nearest takes "
		             "any dtype",
		             resize_modes[mode], api->dtype_name(in->dtype));
		return -1;
	}
	bool by_size = sizes->count > 0;
	int count = by_size ? sizes->count : scales->count;
	if (count == 0) {
		api->message(r, ST_SEVERITY_ERROR, "scales and sizes are both empty: give one of them");
		return -1;
	}
	int first = covered_axes(r, api, by_size ? "sizes" : "scales", count, in);
	if (first < 0)
		return -1;
	st_shape out = *in;
	for (int k = first; k < in->rank; k++) {
		int i = count == 1 ? 0 : k - first;
		if (by_size) {
			out.dims[k] = sizes->ints[i];
			if (out.dims[k] < 1) {
				api->message(r, ST_SEVERITY_ERROR,
				             "sizes item %d is %lld: sizes must be at least 1", i,
				             (long long)out.dims[k]);
				return -1;
			}
			continue;
		}
		double scale = scales->floats[i];
		if (!(scale > 0)) {
			api->message(r, ST_SEVERITY_ERROR,
			             "scales item %d is %g: scales must be greater than 0", i, scale);
			return -1;
		}
		double size = floor((double)in->dims[k] * scale);
		if (size >= 9.2e18) {
			api->message(r, ST_SEVERITY_ERROR,
			             "scale %g makes axis %d of %s larger than an int64 holds", scale, k,
			             std_shape_text(api, in, a));
			return -1;
		}
		out.dims[k] = (int64_t)size;
		if (out.dims[k] == 0) {
			api->message(r, ST_SEVERITY_ERROR,
			             "scale %g makes axis %d of %s empty: floor(%lld · %g) = 0", scale, k,
			             std_shape_text(api, in, a), (long long)in->dims[k], scale);
			return -1;
		}
	}
	int64_t elements = api->shape_elements(&out);
	if (elements < 0) {
		api->message(r, ST_SEVERITY_ERROR,
		             "the output would hold more elements than memory can address");
		return -1;
	}
	/* ONNX divides by (output size − 1) there, so a size of 1 has no defined mapping. */
	if (r->params[RESIZE_COORDINATES].i == COORD_ALIGN_CORNERS) {
		for (int k = first; k < in->rank; k++) {
			if (out.dims[k] == 1 && in->dims[k] != 1) {
				api->message(r, ST_SEVERITY_WARNING,
				             "align_corners with an output size of 1 on axis %d is undefined in "
				             "ONNX; runtimes differ",
				             k);
				break;
			}
		}
	}
	/* Spatial axes are interpolated; batch and channel axes only when resized. */
	int interpolated = 0;
	for (int k = 0; k < in->rank; k++) {
		if (k >= 2 || out.dims[k] != in->dims[k])
			interpolated++;
	}
	if (mode == RESIZE_LINEAR)
		r->flops = (double)elements * pow(2, interpolated) * 2;
	else if (mode == RESIZE_CUBIC)
		r->flops = (double)elements * pow(4, interpolated) * 2;
	r->outputs[0] = out;
	return 0;
}

/* ---- pad ---- */

static const char *const pad_modes[] = { "constant", "reflect", "edge", NULL };

static const st_param_desc pad_params[] = {
	[PAD_MODE] = { .name = "mode", .kind = ST_PARAM_ENUM, .default_value = "constant",
	               .enum_values = pad_modes,
	               .doc = "What fills the new border: value (constant), a mirror image without the "
	                      "edge element (reflect), or copies of the edge element (edge)." },
	[PAD_PADS] = { .name = "pads", .kind = ST_PARAM_DIMS, .default_value = "[0]", .min_count = 1,
	               .max_count = 2 * ST_MAX_RANK,
	               .doc = "Elements added (negative: removed) at each side, all starts then all ends "
	                      "as in ONNX: 2·rank values, 2·(rank − 2) for the spatial axes, or one for "
	                      "every spatial side." },
	[PAD_VALUE] = { .name = "value", .kind = ST_PARAM_FLOAT, .default_value = "0",
	                .doc = "Fill value of mode constant; for integer tensors it must be a whole "
	                       "number the dtype holds." },
};

/* Checks that a constant fill value can be stored in dtype t. */
static bool
fill_fits(st_dtype t, double v)
{
	switch (t) {
	case ST_DTYPE_FLOAT32:
		return fabs(v) <= 3.4028234663852886e38;
	case ST_DTYPE_FLOAT16:
		return fabs(v) <= 65504;
	case ST_DTYPE_INT64:
		return v == floor(v) && v >= -9223372036854775808.0 && v < 9223372036854775808.0;
	case ST_DTYPE_INT32:
		return v == floor(v) && v >= -2147483648.0 && v <= 2147483647.0;
	case ST_DTYPE_INT8:
		return v == floor(v) && v >= -128 && v <= 127;
	case ST_DTYPE_UINT8:
		return v == floor(v) && v >= 0 && v <= 255;
	case ST_DTYPE_BOOL:
		return v == 0 || v == 1;
	default:
		return false;
	}
}

static int
pad_reshape(st_reshape *r, const st_host_api *api)
{
	const st_shape *in = r->inputs[0];
	const st_value *pads = &r->params[PAD_PADS];
	int mode = (int)r->params[PAD_MODE].i;
	int rank = in->rank;
	char a[SHAPE_TEXT], l[LIST_TEXT];
	int64_t begin[ST_MAX_RANK] = { 0 }, end[ST_MAX_RANK] = { 0 };
	if (pads->count == 2 * rank) {
		for (int k = 0; k < rank; k++) {
			begin[k] = pads->ints[k];
			end[k] = pads->ints[rank + k];
		}
	} else if (rank >= 3 && pads->count == 2 * (rank - 2)) {
		for (int k = 2; k < rank; k++) {
			begin[k] = pads->ints[k - 2];
			end[k] = pads->ints[rank - 2 + k - 2];
		}
	} else if (pads->count == 1 && (rank >= 3 || pads->ints[0] == 0)) {
		for (int k = 2; k < rank; k++)
			begin[k] = end[k] = pads->ints[0];
	} else {
		if (rank >= 3)
			api->message(r, ST_SEVERITY_ERROR,
			             "pads %s has %d values, but input %s (rank %d) takes %d (every axis), %d "
			             "(spatial axes) or 1 (every spatial side)",
			             list_text(pads, l), pads->count, std_shape_text(api, in, a), rank, 2 * rank,
			             2 * (rank - 2));
		else
			api->message(r, ST_SEVERITY_ERROR,
			             "pads %s has %d values, but input %s has rank %d and no spatial axes (2 "
			             "and up): give %d values, all starts then all ends",
			             list_text(pads, l), pads->count, std_shape_text(api, in, a), rank, 2 * rank);
		return -1;
	}
	double value = r->params[PAD_VALUE].f;
	if (mode == PAD_CONSTANT && !fill_fits(in->dtype, value)) {
		api->message(r, ST_SEVERITY_ERROR, "value %g cannot be stored in the input's dtype %s", value,
		             api->dtype_name(in->dtype));
		return -1;
	}
	st_shape out = *in;
	for (int k = 0; k < rank; k++) {
		int64_t d = in->dims[k], b = begin[k], e = end[k];
		/* Negative pads crop first; reflect and edge then work on what is left. */
		int64_t kept = d + (b < 0 ? b : 0) + (e < 0 ? e : 0);
		if (kept < 0) {
			api->message(r, ST_SEVERITY_ERROR,
			             "pads on axis %d (%lld at the start, %lld at the end) remove %lld elements, "
			             "but the axis has %lld: the output size would be negative",
			             k, (long long)b, (long long)e, (long long)(d - kept), (long long)d);
			return -1;
		}
		int64_t size = std_add(std_add(kept, b > 0 ? b : 0), e > 0 ? e : 0);
		if (size < 0) {
			api->message(r, ST_SEVERITY_ERROR,
			             "pads on axis %d make it larger than an int64 holds", k);
			return -1;
		}
		if (mode == PAD_REFLECT && ((b > 0 && b >= kept) || (e > 0 && e >= kept))) {
			api->message(r, ST_SEVERITY_ERROR,
			             "mode reflect needs pads smaller than the size they mirror: axis %d has "
			             "size %lld but pads %lld at the start and %lld at the end",
			             k, (long long)kept, (long long)b, (long long)e);
			return -1;
		}
		if (mode == PAD_EDGE && kept == 0 && (b > 0 || e > 0)) {
			api->message(r, ST_SEVERITY_ERROR,
			             "mode edge cannot pad axis %d: it is empty, so there is no edge to copy",
			             k);
			return -1;
		}
		out.dims[k] = size;
	}
	r->outputs[0] = out;
	return 0;
}

/* ---- slice ---- */

static const st_param_desc slice_params[] = {
	[SLICE_STARTS] = { .name = "starts", .kind = ST_PARAM_DIMS, .default_value = "[]",
	                   .max_count = ST_MAX_RANK,
	                   .doc = "First index taken on each sliced axis; negative values count from the "
	                          "end. Required." },
	[SLICE_ENDS] = { .name = "ends", .kind = ST_PARAM_DIMS, .default_value = "[]",
	                 .max_count = ST_MAX_RANK,
	                 .doc = "Index where each slice stops (excluded); out-of-range values are clamped, "
	                        "so 2147483647 means to the end (-2147483648 with a negative step). Required." },
	[SLICE_AXES] = { .name = "axes", .kind = ST_PARAM_DIMS, .default_value = "[]",
	                 .max_count = ST_MAX_RANK,
	                 .doc = "Axes that starts and ends refer to, each at most once; empty means "
	                        "0, 1, 2, … in order." },
	[SLICE_STEPS] = { .name = "steps", .kind = ST_PARAM_DIMS, .default_value = "[]",
	                  .max_count = ST_MAX_RANK,
	                  .doc = "Stride on each sliced axis, not 0; negative steps walk backwards. Empty "
	                         "means 1 everywhere." },
};

static int64_t
clamp(int64_t v, int64_t lo, int64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

static int
slice_reshape(st_reshape *r, const st_host_api *api)
{
	const st_shape *in = r->inputs[0];
	const st_value *starts = &r->params[SLICE_STARTS];
	const st_value *ends = &r->params[SLICE_ENDS];
	const st_value *axes = &r->params[SLICE_AXES];
	const st_value *steps = &r->params[SLICE_STEPS];
	char a[SHAPE_TEXT], l1[LIST_TEXT], l2[LIST_TEXT];
	int n = starts->count;
	if (n == 0 || ends->count == 0) {
		api->message(r, ST_SEVERITY_ERROR,
		             "starts and ends are required: give one value of each per sliced axis");
		return -1;
	}
	if (ends->count != n) {
		api->message(r, ST_SEVERITY_ERROR, "starts %s and ends %s differ in length (%d vs %d)",
		             list_text(starts, l1), list_text(ends, l2), n, ends->count);
		return -1;
	}
	if (axes->count != 0 && axes->count != n) {
		api->message(r, ST_SEVERITY_ERROR, "axes %s and starts %s differ in length (%d vs %d)",
		             list_text(axes, l1), list_text(starts, l2), axes->count, n);
		return -1;
	}
	if (steps->count != 0 && steps->count != n) {
		api->message(r, ST_SEVERITY_ERROR, "steps %s and starts %s differ in length (%d vs %d)",
		             list_text(steps, l1), list_text(starts, l2), steps->count, n);
		return -1;
	}
	st_shape out = *in;
	int item_of_axis[ST_MAX_RANK];
	for (int k = 0; k < ST_MAX_RANK; k++)
		item_of_axis[k] = -1;
	for (int i = 0; i < n; i++) {
		int64_t axis_param = axes->count ? axes->ints[i] : i;
		int axis = std_axis(axis_param, in->rank);
		if (axis < 0) {
			if (axes->count)
				api->message(r, ST_SEVERITY_ERROR,
				             "axes %s names axis %lld, out of range for input %s: axes must be "
				             "from %d to %d",
				             list_text(axes, l1), (long long)axis_param, std_shape_text(api, in, a),
				             -in->rank, in->rank - 1);
			else
				api->message(r, ST_SEVERITY_ERROR,
				             "starts has %d values, but input %s has only %d axes; give axes to "
				             "say which ones",
				             n, std_shape_text(api, in, a), in->rank);
			return -1;
		}
		if (item_of_axis[axis] >= 0) {
			api->message(r, ST_SEVERITY_ERROR, "axes %s names axis %d twice (items %d and %d)",
			             list_text(axes, l1), axis, item_of_axis[axis], i);
			return -1;
		}
		item_of_axis[axis] = i;
		int64_t step = steps->count ? steps->ints[i] : 1;
		if (step == 0) {
			api->message(r, ST_SEVERITY_ERROR, "steps item %d is 0: steps must not be 0", i);
			return -1;
		}
		/* ONNX's rules: negative indices count from the end, then both are clamped
		 * to the range a walk in the step's direction can reach. Values stay within
		 * ±2^53 (model-file integers), so the sums cannot overflow. */
		int64_t d = in->dims[axis];
		int64_t s = starts->ints[i], e = ends->ints[i];
		if (s < 0)
			s += d;
		if (e < 0)
			e += d;
		int64_t len;
		if (step > 0) {
			s = clamp(s, 0, d);
			e = clamp(e, 0, d);
			len = e > s ? (e - s + step - 1) / step : 0;
		} else {
			s = clamp(s, 0, d - 1);
			e = clamp(e, -1, d - 1);
			len = s > e && d > 0 ? (s - e + (-step) - 1) / (-step) : 0;
		}
		out.dims[axis] = len;
	}
	r->outputs[0] = out;
	return 0;
}

/* ---- reshape, flatten, transpose ---- */

enum { RESHAPE_SHAPE, RESHAPE_ALLOWZERO };

static const st_param_desc reshape_params[] = {
	[RESHAPE_SHAPE] = { .name = "shape", .kind = ST_PARAM_DIMS, .default_value = "[-1]",
	                    .flags = ST_PARAM_HAS_MIN, .min = -1, .min_count = 0, .max_count = ST_MAX_RANK,
	                    .doc = "The new shape, batch included: 0 copies the input's size at that "
	                           "position, -1 (at most once) takes whatever size makes the counts match." },
	[RESHAPE_ALLOWZERO] = { .name = "allowzero", .kind = ST_PARAM_BOOL, .default_value = "false",
	                        .doc = "When true, 0 in shape means an empty axis instead of a copy of the "
	                               "input's size (ONNX allowzero=1)." },
};

static int
reshape_reshape(st_reshape *r, const st_host_api *api)
{
	const st_shape *in = r->inputs[0];
	const st_value *shape = &r->params[RESHAPE_SHAPE];
	bool allowzero = r->params[RESHAPE_ALLOWZERO].b;
	char a[SHAPE_TEXT], l[LIST_TEXT];
	st_shape out = { .dtype = in->dtype, .rank = shape->count };
	int infer = -1;
	bool has_zero = false;
	int64_t known = 1;
	for (int i = 0; i < shape->count; i++) {
		int64_t v = shape->ints[i];
		if (v == -1) {
			if (infer >= 0) {
				api->message(r, ST_SEVERITY_ERROR,
				             "shape %s has -1 twice (items %d and %d): only one size can be inferred",
				             list_text(shape, l), infer, i);
				return -1;
			}
			infer = i;
			continue;
		}
		if (v == 0 && !allowzero) {
			if (i >= in->rank) {
				api->message(r, ST_SEVERITY_ERROR,
				             "shape item %d is 0, which copies the input's size there, but input %s has "
				             "rank %d",
				             i, std_shape_text(api, in, a), in->rank);
				return -1;
			}
			v = in->dims[i];
		} else if (v == 0) {
			has_zero = true;
		}
		out.dims[i] = v;
		known = std_mul(known, v);
		if (known < 0) {
			api->message(r, ST_SEVERITY_ERROR,
			             "shape %s holds more elements than an int64 counts",
			             list_text(shape, l));
			return -1;
		}
	}
	if (allowzero && has_zero && infer >= 0) {
		api->message(r, ST_SEVERITY_ERROR,
		             "with allowzero, shape %s cannot hold both 0 and -1: the -1 could be any size",
		             list_text(shape, l));
		return -1;
	}
	int64_t elements = api->shape_elements(in);
	if (infer >= 0) {
		if (known == 0 || elements % known != 0) {
			api->message(r, ST_SEVERITY_ERROR,
			             "cannot reshape %s (%lld elements) to %s: no size for the -1 makes the "
			             "counts match",
			             std_shape_text(api, in, a), (long long)elements, list_text(shape, l));
			return -1;
		}
		out.dims[infer] = elements / known;
	} else if (known != elements) {
		char b[SHAPE_TEXT];
		api->message(r, ST_SEVERITY_ERROR, "cannot reshape %s (%lld elements) to %s (%lld elements)",
		             std_shape_text(api, in, a), (long long)elements, std_shape_text(api, &out, b), (long long)known);
		return -1;
	}
	r->outputs[0] = out;
	return 0;
}

enum { FLATTEN_AXIS };

static const st_param_desc flatten_params[] = {
	[FLATTEN_AXIS] = { .name = "axis", .kind = ST_PARAM_INT, .default_value = "1",
	                   .doc = "Axes before it multiply into the first output dim, the others into "
	                          "the second; from -rank to rank." },
};

static int
flatten_reshape(st_reshape *r, const st_host_api *api)
{
	const st_shape *in = r->inputs[0];
	int64_t axis = r->params[FLATTEN_AXIS].i;
	char a[SHAPE_TEXT];
	if (axis < -in->rank || axis > in->rank) {
		api->message(r, ST_SEVERITY_ERROR,
		             "axis %lld is out of range for input %s: it must be from %d to %d",
		             (long long)axis, std_shape_text(api, in, a), -in->rank, in->rank);
		return -1;
	}
	if (axis < 0)
		axis += in->rank;
	/* Each part can overflow alone when the other holds a 0. */
	int64_t outer = 1, inner = 1;
	for (int k = 0; k < in->rank; k++) {
		if (k < axis)
			outer = std_mul(outer, in->dims[k]);
		else
			inner = std_mul(inner, in->dims[k]);
	}
	if (outer < 0 || inner < 0) {
		api->message(r, ST_SEVERITY_ERROR,
		             "flattening %s at axis %lld gives a size larger than an int64 holds",
		             std_shape_text(api, in, a), (long long)axis);
		return -1;
	}
	st_shape *out = &r->outputs[0];
	*out = (st_shape){ .dtype = in->dtype, .rank = 2, .dims = { outer, inner } };
	return 0;
}

static const st_param_desc transpose_params[] = {
	[TRANSPOSE_PERM] = { .name = "perm", .kind = ST_PARAM_DIMS, .default_value = "[]",
	                     .min_count = 0, .max_count = ST_MAX_RANK,
	                     .doc = "Output axis i is input axis perm[i]; a permutation of 0 … rank − 1. "
	                            "Empty reverses the axes." },
};

static int
transpose_reshape(st_reshape *r, const st_host_api *api)
{
	const st_shape *in = r->inputs[0];
	const st_value *perm = &r->params[TRANSPOSE_PERM];
	char a[SHAPE_TEXT], l[LIST_TEXT];
	st_shape out = *in;
	if (perm->count == 0) {
		for (int k = 0; k < in->rank; k++)
			out.dims[k] = in->dims[in->rank - 1 - k];
		r->outputs[0] = out;
		return 0;
	}
	if (perm->count != in->rank) {
		api->message(r, ST_SEVERITY_ERROR, "perm %s has %d values, but input %s has rank %d",
		             list_text(perm, l), perm->count, std_shape_text(api, in, a), in->rank);
		return -1;
	}
	int item_of_axis[ST_MAX_RANK];
	for (int k = 0; k < ST_MAX_RANK; k++)
		item_of_axis[k] = -1;
	for (int i = 0; i < perm->count; i++) {
		int64_t p = perm->ints[i];
		if (p < 0 || p >= in->rank) {
			api->message(r, ST_SEVERITY_ERROR,
			             "perm %s item %d is %lld: axes of input %s go from 0 to %d",
			             list_text(perm, l), i, (long long)p, std_shape_text(api, in, a), in->rank - 1);
			return -1;
		}
		if (item_of_axis[p] >= 0) {
			api->message(r, ST_SEVERITY_ERROR,
			             "perm %s is not a permutation: axis %lld appears twice (items %d and %d)",
			             list_text(perm, l), (long long)p, item_of_axis[p], i);
			return -1;
		}
		item_of_axis[p] = i;
		out.dims[i] = in->dims[p];
	}
	r->outputs[0] = out;
	return 0;
}

/* ---- space_to_depth, depth_to_space ---- */

static const char *const d2s_modes[] = { "DCR", "CRD", NULL };

static const st_param_desc s2d_params[] = {
	[BLOCK_SIZE] = { .name = "block_size", .kind = ST_PARAM_INT, .default_value = "2",
	                 .flags = ST_PARAM_HAS_MIN, .min = 1,
	                 .doc = "Side b of the square blocks moved into channels; H and W must be "
	                        "multiples of it." },
};

static const st_param_desc d2s_params[] = {
	[BLOCK_SIZE] = { .name = "block_size", .kind = ST_PARAM_INT, .default_value = "2",
	                 .flags = ST_PARAM_HAS_MIN, .min = 1,
	                 .doc = "Side b of the square blocks built from channels; C must be a multiple "
	                        "of b²." },
	[D2S_MODE] = { .name = "mode", .kind = ST_PARAM_ENUM, .default_value = "DCR",
	               .enum_values = d2s_modes,
	               .doc = "Channel order: DCR (depth-column-row, ONNX's default) or CRD "
	                      "(column-row-depth, as PyTorch's PixelShuffle)." },
};

/* Checks the 4-D input of space_to_depth and depth_to_space. */
static bool
is_4d(st_reshape *r, const st_host_api *api, const st_shape *in)
{
	char a[SHAPE_TEXT];
	if (in->rank == 4)
		return true;
	api->message(r, ST_SEVERITY_ERROR, "%s needs a 4-D input (N, C, H, W), got %s", r->desc->name,
	             std_shape_text(api, in, a));
	return false;
}

static int
s2d_reshape(st_reshape *r, const st_host_api *api)
{
	const st_shape *in = r->inputs[0];
	int64_t b = r->params[BLOCK_SIZE].i;
	char a[SHAPE_TEXT];
	if (!is_4d(r, api, in))
		return -1;
	for (int k = 2; k < 4; k++) {
		if (in->dims[k] % b != 0) {
			api->message(r, ST_SEVERITY_ERROR,
			             "%s (%lld) of input %s is not a multiple of block_size %lld",
			             k == 2 ? "H" : "W", (long long)in->dims[k], std_shape_text(api, in, a), (long long)b);
			return -1;
		}
	}
	int64_t c = std_mul(in->dims[1], std_mul(b, b));
	if (c < 0) {
		api->message(r, ST_SEVERITY_ERROR, "C · block_size² is larger than an int64 holds");
		return -1;
	}
	st_shape out = *in;
	out.dims[1] = c;
	out.dims[2] = in->dims[2] / b;
	out.dims[3] = in->dims[3] / b;
	r->outputs[0] = out;
	return 0;
}

static int
d2s_reshape(st_reshape *r, const st_host_api *api)
{
	const st_shape *in = r->inputs[0];
	int64_t b = r->params[BLOCK_SIZE].i;
	char a[SHAPE_TEXT];
	if (!is_4d(r, api, in))
		return -1;
	int64_t b2 = std_mul(b, b);
	if (b2 < 0) {
		api->message(r, ST_SEVERITY_ERROR, "block_size %lld squared is larger than an int64 holds",
		             (long long)b);
		return -1;
	}
	if (in->dims[1] % b2 != 0) {
		api->message(r, ST_SEVERITY_ERROR,
		             "C (%lld) of input %s is not a multiple of block_size² (%lld)",
		             (long long)in->dims[1], std_shape_text(api, in, a), (long long)b2);
		return -1;
	}
	int64_t h = std_mul(in->dims[2], b), w = std_mul(in->dims[3], b);
	if (h < 0 || w < 0) {
		api->message(r, ST_SEVERITY_ERROR,
		             "H or W times block_size %lld is larger than an int64 holds",
		             (long long)b);
		return -1;
	}
	st_shape out = *in;
	out.dims[1] = in->dims[1] / b2;
	out.dims[2] = h;
	out.dims[3] = w;
	r->outputs[0] = out;
	return 0;
}

/* ---- the table ---- */

static const st_port_desc data_input[] = { { "input", 0, "The tensor to rearrange." } };
static const st_port_desc resize_inputs[] = { { "input", 0, "The tensor to resize, N, C, then spatial axes." } };
static const st_port_desc resize_outputs[] = { { "output", 0, "The resized tensor." } };
static const st_port_desc pad_outputs[] = { { "output", 0, "The input with its border grown or cropped." } };
static const st_port_desc slice_outputs[] = { { "output", 0, "The selected elements." } };
static const st_port_desc reshape_outputs[] = { { "output", 0, "The same elements, in the new shape." } };
static const st_port_desc flatten_outputs[] = { { "output", 0, "A 2-D tensor with the same elements." } };
static const st_port_desc transpose_outputs[] = { { "output", 0, "The input with its axes reordered." } };
static const st_port_desc s2d_inputs[] = { { "input", 0, "An N, C, H, W tensor." } };
static const st_port_desc s2d_outputs[] = { { "output", 0, "N, C·b², H/b, W/b." } };
static const st_port_desc d2s_outputs[] = { { "output", 0, "N, C/b², H·b, W·b." } };

static const char *const resize_aliases[] = { "upsample", NULL };
static const char *const s2d_aliases[] = { "s2d", NULL };
static const char *const d2s_aliases[] = { "d2s", NULL };

const st_layer_desc std_shape_layers[] = {
	{ .name = "resize", .display_name = "Resize", .category = "Upsampling", .aliases = resize_aliases,
	  .summary = "Scales spatial axes by factors or to sizes: nearest, linear or cubic.",
	  .inputs = resize_inputs, .n_inputs = 1, .outputs = resize_outputs, .n_outputs = 1,
	  .params = resize_params, .n_params = STD_COUNT(resize_params), .reshape = resize_reshape },
	{ .name = "pad", .display_name = "Pad", .category = "Shape",
	  .summary = "Grows (or crops) each axis at both ends: constant, reflect or edge.",
	  .inputs = data_input, .n_inputs = 1, .outputs = pad_outputs, .n_outputs = 1,
	  .params = pad_params, .n_params = STD_COUNT(pad_params), .reshape = pad_reshape },
	{ .name = "slice", .display_name = "Slice", .category = "Shape",
	  .summary = "Takes a strided range of indices on chosen axes.", .inputs = data_input,
	  .n_inputs = 1, .outputs = slice_outputs, .n_outputs = 1, .params = slice_params,
	  .n_params = STD_COUNT(slice_params), .reshape = slice_reshape },
	{ .name = "reshape", .display_name = "Reshape", .category = "Shape",
	  .summary = "Gives the same elements a new shape.", .inputs = data_input, .n_inputs = 1,
	  .outputs = reshape_outputs, .n_outputs = 1, .params = reshape_params,
	  .n_params = STD_COUNT(reshape_params), .reshape = reshape_reshape },
	{ .name = "flatten", .display_name = "Flatten", .category = "Shape",
	  .summary = "Folds the input into 2-D: axes before axis, and the rest.", .inputs = data_input,
	  .n_inputs = 1, .outputs = flatten_outputs, .n_outputs = 1, .params = flatten_params,
	  .n_params = STD_COUNT(flatten_params), .reshape = flatten_reshape },
	{ .name = "transpose", .display_name = "Transpose", .category = "Shape",
	  .summary = "Reorders the axes by a permutation.", .inputs = data_input, .n_inputs = 1,
	  .outputs = transpose_outputs, .n_outputs = 1, .params = transpose_params,
	  .n_params = STD_COUNT(transpose_params), .reshape = transpose_reshape },
	{ .name = "space_to_depth", .display_name = "Space to depth", .category = "Shape",
	  .aliases = s2d_aliases, .summary = "Moves b×b spatial blocks into channels.",
	  .inputs = s2d_inputs, .n_inputs = 1, .outputs = s2d_outputs, .n_outputs = 1,
	  .params = s2d_params, .n_params = STD_COUNT(s2d_params), .reshape = s2d_reshape },
	{ .name = "depth_to_space", .display_name = "Depth to space", .category = "Shape",
	  .aliases = d2s_aliases, .summary = "Moves channels into b×b spatial blocks (pixel shuffle).",
	  .inputs = s2d_inputs, .n_inputs = 1, .outputs = d2s_outputs, .n_outputs = 1,
	  .params = d2s_params, .n_params = STD_COUNT(d2s_params), .reshape = d2s_reshape },
};
const int std_shape_layer_count = STD_COUNT(std_shape_layers);
