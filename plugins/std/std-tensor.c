/* Graph inputs and outputs, constants, and layers that combine or pass on whole tensors. */
#include "config.h"

#include <math.h>
#include <stdio.h>

#include "std.h"

static const char *const dtype_names[] = { "float32", "float16", "int64", "int32", "int8", "uint8", "bool", NULL };

/*
 * Checks that a fill value can be stored in dtype t; writes what is
 * accepted to why when it cannot. Integer types take whole numbers in their
 * range and bool takes 0 or 1, so the file and the run agree on the value.
 */
static bool
value_fits(st_dtype t, double v, char *why, size_t size)
{
	static const struct {
		double lo, hi;
		bool whole;
		const char *text;
	} limits[ST_DTYPE_COUNT] = {
		[ST_DTYPE_FLOAT32] = { -3.4028234663852886e38, 3.4028234663852886e38, false,
		                       "a number of magnitude at most 3.4e38" },
		[ST_DTYPE_FLOAT16] = { -65504, 65504, false, "a number of magnitude at most 65504" },
		[ST_DTYPE_INT64] = { -9223372036854775808.0, 9223372036854774784.0, true,
		                     "a whole number within the int64 range" },
		[ST_DTYPE_INT32] = { -2147483648.0, 2147483647.0, true,
		                     "a whole number from -2147483648 to 2147483647" },
		[ST_DTYPE_INT8] = { -128, 127, true, "a whole number from -128 to 127" },
		[ST_DTYPE_UINT8] = { 0, 255, true, "a whole number from 0 to 255" },
		[ST_DTYPE_BOOL] = { 0, 1, true, "0 or 1" },
	};
	if (v >= limits[t].lo && v <= limits[t].hi && (!limits[t].whole || v == floor(v)))
		return true;
	snprintf(why, size, "%s", limits[t].text);
	return false;
}

/*
 * Broadcasts b into acc by numpy's rules (align from the last axis; sizes
 * must be equal or one of them 1). Returns 0, or the 1-based position from
 * the end of the first axis that does not broadcast, leaving acc unchanged.
 */
static int
broadcast_into(st_shape *acc, const st_shape *b)
{
	st_shape out = *acc;
	out.rank = acc->rank > b->rank ? acc->rank : b->rank;
	for (int k = 1; k <= out.rank; k++) {
		int64_t x = k <= acc->rank ? acc->dims[acc->rank - k] : 1;
		int64_t y = k <= b->rank ? b->dims[b->rank - k] : 1;
		if (x != y && x != 1 && y != 1)
			return k;
		out.dims[out.rank - k] = x == 1 ? y : x;
	}
	*acc = out;
	return 0;
}

/* The size at position k from the end of s, 1 when s has fewer axes. */
static int64_t
dim_from_end(const st_shape *s, int k)
{
	return k <= s->rank ? s->dims[s->rank - k] : 1;
}

/* ---- input, output, constant ---- */

enum { INPUT_DIMS, INPUT_BATCH, INPUT_DTYPE, INPUT_IMAGE_SCALE, INPUT_IMAGE_MEAN, INPUT_IMAGE_STD, INPUT_IMAGE_RESIZE };
static const char *const resize_modes[] = { "none", "stretch", "crop", NULL };

static const st_param_desc input_params[] = {
	[INPUT_DIMS] = { .name = "dims", .kind = ST_PARAM_DIMS, .default_value = "[3, 224, 224]",
	                 .flags = ST_PARAM_HAS_MIN, .min = 0, .min_count = 0, .max_count = ST_MAX_RANK - 1,
	                 .doc = "Dimensions of one sample, without the batch: C, H, W for an image." },
	[INPUT_BATCH] = { .name = "batch", .kind = ST_PARAM_INT, .default_value = "1",
	                  .flags = ST_PARAM_HAS_MIN, .min = 1,
	                  .doc = "Batch size N, the leading dimension of the tensor." },
	[INPUT_DTYPE] = { .name = "dtype", .kind = ST_PARAM_ENUM, .default_value = "float32",
	                  .enum_values = dtype_names, .doc = "Element type of the tensor fed in." },
	[INPUT_IMAGE_SCALE] = { .name = "image_scale", .kind = ST_PARAM_FLOAT,
	                        .default_value = "0.00392156862745098",
	                        .doc = "For PNG or JPEG inputs: each 0-255 pixel value is multiplied by this "
	                               "first (1/255 maps pixels to 0-1)." },
	[INPUT_IMAGE_MEAN] = { .name = "image_mean", .kind = ST_PARAM_FLOATS, .default_value = "[0.0]",
	                       .min_count = 1, .max_count = 64,
	                       .doc = "For image inputs: subtracted after scaling, one value for every "
	                              "channel or one per channel (such as [0.485, 0.456, 0.406])." },
	[INPUT_IMAGE_STD] = { .name = "image_std", .kind = ST_PARAM_FLOATS, .default_value = "[1.0]",
	                      .flags = ST_PARAM_HAS_MIN, .min = 1e-12, .min_count = 1, .max_count = 64,
	                      .doc = "For image inputs: the scaled, shifted value is divided by this, one "
	                             "value for every channel or one per channel." },
	[INPUT_IMAGE_RESIZE] = { .name = "image_resize", .kind = ST_PARAM_ENUM, .default_value = "none",
	                         .enum_values = resize_modes,
	                         .doc = "For image and video inputs of another size than H x W: none refuses "
	                                "them, stretch resizes to H x W (bilinear), crop scales the shorter "
	                                "side to fit and keeps the centre." },
};

static int
input_reshape(st_reshape *r, const st_host_api *api)
{
	(void)api;
	const st_value *dims = &r->params[INPUT_DIMS];
	st_shape *out = &r->outputs[0];
	out->dtype = (st_dtype)r->params[INPUT_DTYPE].i;
	out->rank = dims->count + 1;
	out->dims[0] = r->params[INPUT_BATCH].i;
	for (int i = 0; i < dims->count; i++)
		out->dims[i + 1] = dims->ints[i];
	return 0;
}

static int
output_reshape(st_reshape *r, const st_host_api *api)
{
	(void)r;
	(void)api;
	return 0;
}

static const st_param_desc constant_params[] = {
	[CONSTANT_DIMS] = { .name = "dims", .kind = ST_PARAM_DIMS, .default_value = "[]",
	                    .flags = ST_PARAM_HAS_MIN, .min = 0, .min_count = 0, .max_count = ST_MAX_RANK,
	                    .doc = "Full shape of the tensor, batch included if it has one; "
	                           "empty for a scalar." },
	[CONSTANT_DTYPE] = { .name = "dtype", .kind = ST_PARAM_ENUM, .default_value = "float32",
	                     .enum_values = dtype_names, .doc = "Element type of the tensor." },
	[CONSTANT_VALUE] = { .name = "value", .kind = ST_PARAM_FLOAT, .default_value = "0",
	                     .doc = "Value of every element when the weights folder has no "
	                            "layerName_values.npy; it must fit the dtype." },
};

static int
constant_reshape(st_reshape *r, const st_host_api *api)
{
	const st_value *dims = &r->params[CONSTANT_DIMS];
	st_shape *out = &r->outputs[0];
	out->dtype = (st_dtype)r->params[CONSTANT_DTYPE].i;
	out->rank = dims->count;
	int64_t n = 1;
	for (int i = 0; i < dims->count; i++) {
		out->dims[i] = dims->ints[i];
		n = std_mul(n, dims->ints[i]);
	}
	char buf[SHAPE_TEXT], why[96];
	if (n < 0) {
		api->message(r, ST_SEVERITY_ERROR, "dims %s hold more elements than memory can address",
		             std_shape_text(api, out, buf));
		return -1;
	}
	double value = r->params[CONSTANT_VALUE].f;
	if (!value_fits(out->dtype, value, why, sizeof why)) {
		api->message(r, ST_SEVERITY_ERROR, "value %g does not fit dtype %s: it must be %s", value,
		             api->dtype_name(out->dtype), why);
		return -1;
	}
	api->add_weight(r, "values", out, true);
	return 0;
}

/* ---- onnx_operator: an ONNX operator Strata has no layer for ---- */

enum { ONNX_OP_TYPE, ONNX_OP_DOMAIN, ONNX_OP_OPSET, ONNX_OP_ATTRIBUTES, ONNX_OP_OUTPUTS };

static const st_param_desc onnx_op_params[] = {
	[ONNX_OP_TYPE] = { .name = "op_type", .kind = ST_PARAM_STRING, .default_value = "",
	                   .doc = "The ONNX operator's type, such as NonMaxSuppression." },
	[ONNX_OP_DOMAIN] = { .name = "domain", .kind = ST_PARAM_STRING, .default_value = "",
	                     .doc = "The operator's domain; empty is the default domain ai.onnx." },
	[ONNX_OP_OPSET] = { .name = "opset", .kind = ST_PARAM_INT, .default_value = "0",
	                    .flags = ST_PARAM_HAS_MIN, .min = 0,
	                    .doc = "Version of the domain the model imported (0: not known)." },
	[ONNX_OP_ATTRIBUTES] = { .name = "attributes", .kind = ST_PARAM_STRING, .default_value = "",
	                         .doc = "The node's attributes as ONNX wrote them (protobuf, in "
	                                "base64), written back unchanged on export." },
	[ONNX_OP_OUTPUTS] = { .name = "num_outputs", .kind = ST_PARAM_INT, .default_value = "1",
	                      .flags = ST_PARAM_HAS_MIN | ST_PARAM_HAS_MAX, .min = 1,
	                      .max = ST_MAX_OUTPUTS, .doc = "Number of outputs the operator has." },
};

static int
onnx_op_reshape(st_reshape *r, const st_host_api *api)
{
	const char *op = r->params[ONNX_OP_TYPE].s;
	const char *domain = r->params[ONNX_OP_DOMAIN].s;
	r->n_outputs = (int)r->params[ONNX_OP_OUTPUTS].i;
	api->message(r, ST_SEVERITY_ERROR,
	             "ONNX operator %s%s%s has no Strata layer: it is kept so the model exports back "
	             "unchanged, but nothing after it can be checked or run",
	             domain[0] ? domain : "", domain[0] ? "." : "", op[0] ? op : "(unnamed)");
	return -1;
}

/* ---- identity, dropout, softmax ---- */

static int
identity_reshape(st_reshape *r, const st_host_api *api)
{
	(void)api;
	r->outputs[0] = *r->inputs[0];
	return 0;
}

enum { DROPOUT_RATIO };

static const st_param_desc dropout_params[] = {
	[DROPOUT_RATIO] = { .name = "ratio", .kind = ST_PARAM_FLOAT, .default_value = "0.5",
	                    .flags = ST_PARAM_HAS_MIN | ST_PARAM_HAS_MAX, .min = 0, .max = 1,
	                    .doc = "Fraction of elements zeroed while training, below 1; inference "
	                           "ignores it and passes the input on unchanged." },
};

static int
dropout_reshape(st_reshape *r, const st_host_api *api)
{
	double ratio = r->params[DROPOUT_RATIO].f;
	if (!(ratio >= 0 && ratio < 1)) {
		api->message(r, ST_SEVERITY_ERROR,
		             "ratio %g is out of range: it must be at least 0 and below 1 (1 would drop "
		             "every element)",
		             ratio);
		return -1;
	}
	r->outputs[0] = *r->inputs[0];
	return 0;
}

static const st_param_desc softmax_params[] = {
	[SOFTMAX_AXIS] = { .name = "axis", .kind = ST_PARAM_INT, .default_value = "-1",
	                   .doc = "Axis along which the exponentials are normalised to sum to 1; "
	                          "negative values count from the last axis." },
};

static int
softmax_reshape(st_reshape *r, const st_host_api *api)
{
	const st_shape *in = r->inputs[0];
	char buf[SHAPE_TEXT];
	if (!std_is_float(in->dtype)) {
		api->message(r, ST_SEVERITY_ERROR, "softmax needs a float input (float32 or float16), got %s",
		             api->dtype_name(in->dtype));
		return -1;
	}
	if (in->rank == 0) {
		api->message(r, ST_SEVERITY_ERROR, "softmax needs an input of rank 1 or more, got a scalar");
		return -1;
	}
	int64_t axis = r->params[SOFTMAX_AXIS].i;
	if (std_axis(axis, in->rank) < 0) {
		api->message(r, ST_SEVERITY_ERROR,
		             "axis %lld is out of range for input %s: it must be from %d to %d",
		             (long long)axis, std_shape_text(api, in, buf), -in->rank, in->rank - 1);
		return -1;
	}
	r->outputs[0] = *in;
	r->flops = 5.0 * (double)api->shape_elements(in);
	return 0;
}

/* ---- elementwise and linear_blend ---- */

static const char *const operation_names[] = { "add", "sub", "mul", "div", "max", "min", NULL };
static const char *const broadcast_names[] = { "numpy", "channel", NULL };

static const st_param_desc eltwise_params[] = {
	[ELTWISE_OPERATION] = { .name = "operation", .kind = ST_PARAM_ENUM, .default_value = "add",
	                        .enum_values = operation_names,
	                        .doc = "What combines the inputs, folded from the first to the last: "
	                               "sum, difference, product, quotient, maximum or minimum." },
	[ELTWISE_BROADCAST] = { .name = "broadcast", .kind = ST_PARAM_ENUM, .default_value = "numpy",
	                        .enum_values = broadcast_names,
	                        .doc = "numpy: shapes broadcast against each other from the last axis. "
	                               "channel: input 0 sets the shape and the others are per-channel "
	                               "vectors ([C], [1,C], [N,C] or [1,C,1,…,1])." },
};

/* True when s is a per-channel vector for x under broadcast channel. */
static bool
is_channel_vector(const st_shape *s, const st_shape *x)
{
	int64_t c = x->dims[1];
	if (s->rank == 1)
		return s->dims[0] == c;
	if (s->rank == 2)
		return s->dims[1] == c && (s->dims[0] == 1 || s->dims[0] == x->dims[0]);
	if (s->rank != x->rank || s->dims[0] != 1 || s->dims[1] != c)
		return false;
	for (int k = 2; k < s->rank; k++) {
		if (s->dims[k] != 1)
			return false;
	}
	return true;
}

/* Reports the first pair of inputs that do not broadcast; in[0..i] are all set. */
static void
report_broadcast(st_reshape *r, const st_host_api *api, const st_shape *const *in, int i, int k,
                 const st_shape *acc)
{
	/* The clashing size came from some earlier input: name that one. */
	int j = 0;
	while (j < i && dim_from_end(in[j], k) != dim_from_end(acc, k))
		j++;
	char a[SHAPE_TEXT], b[SHAPE_TEXT];
	api->message(r, ST_SEVERITY_ERROR,
	             "input %d (%s) does not broadcast with input %d (%s): sizes %lld and %lld meet at "
	             "axis -%d, and broadcasting needs them equal or one of them 1",
	             i, std_shape_text(api, in[i], a), j, std_shape_text(api, in[j], b),
	             (long long)dim_from_end(in[i], k), (long long)dim_from_end(in[j], k), k);
}

/* Checks that every input is linked; the host reports holes, this guards the pointers. */
static bool
all_linked(st_reshape *r, const st_host_api *api)
{
	for (int i = 0; i < r->n_inputs; i++) {
		if (r->inputs[i] == NULL) {
			api->message(r, ST_SEVERITY_ERROR, "input %d is not connected", i);
			return false;
		}
	}
	if (r->n_inputs < 1) {
		api->message(r, ST_SEVERITY_ERROR, "it needs at least one input");
		return false;
	}
	return true;
}

/* Checks that all inputs share input 0's dtype. */
static bool
same_dtype(st_reshape *r, const st_host_api *api)
{
	const st_shape *const *in = r->inputs;
	for (int i = 1; i < r->n_inputs; i++) {
		if (in[i]->dtype != in[0]->dtype) {
			api->message(r, ST_SEVERITY_ERROR,
			             "input %d is %s but input 0 is %s: all inputs must have the same dtype", i,
			             api->dtype_name(in[i]->dtype), api->dtype_name(in[0]->dtype));
			return false;
		}
	}
	return true;
}

static int
eltwise_reshape(st_reshape *r, const st_host_api *api)
{
	if (!all_linked(r, api) || !same_dtype(r, api))
		return -1;
	const st_shape *const *in = r->inputs;
	int n = r->n_inputs;
	int op = (int)r->params[ELTWISE_OPERATION].i;
	st_dtype dtype = in[0]->dtype;
	char a[SHAPE_TEXT], b[SHAPE_TEXT];
	if (dtype == ST_DTYPE_BOOL) {
		api->message(r, ST_SEVERITY_ERROR, "operation %s needs numeric inputs, not bool",
		             operation_names[op]);
		return -1;
	}
	/* Integer division rounds negative quotients differently across runtimes. */
	if (op == OP_DIV && !std_is_float(dtype)) {
		api->message(r, ST_SEVERITY_ERROR,
		             "operation div needs float inputs (float32 or float16), not %s: integer "
		             "division is not rounded the same way by every runtime",
		             api->dtype_name(dtype));
		return -1;
	}
	if (n == 1)
		api->message(r, ST_SEVERITY_INFO, "only one input: the layer passes it on");

	st_shape out = *in[0];
	if (r->params[ELTWISE_BROADCAST].i == BROADCAST_CHANNEL) {
		if (in[0]->rank < 2) {
			api->message(r, ST_SEVERITY_ERROR,
			             "broadcast channel needs input 0 of rank 2 or more (N, C, …), got %s",
			             std_shape_text(api, in[0], a));
			return -1;
		}
		for (int i = 1; i < n; i++) {
			if (!is_channel_vector(in[i], in[0])) {
				api->message(r, ST_SEVERITY_ERROR,
				             "input %d is %s, not a per-channel vector for input 0 (%s): with "
				             "broadcast channel it must be [C], [1,C], [N,C] or [1,C,1,…,1] of "
				             "input 0's rank, with C = %lld",
				             i, std_shape_text(api, in[i], a), std_shape_text(api, in[0], b),
				             (long long)in[0]->dims[1]);
				return -1;
			}
		}
	} else {
		for (int i = 1; i < n; i++) {
			int k = broadcast_into(&out, in[i]);
			if (k != 0) {
				report_broadcast(r, api, in, i, k, &out);
				return -1;
			}
		}
	}
	r->outputs[0] = out;
	r->flops = (double)api->shape_elements(&out) * (n - 1);
	return 0;
}

static const st_param_desc blend_params[] = {
	[BLEND_ALPHA] = { .name = "alpha", .kind = ST_PARAM_FLOAT, .default_value = "0.5",
	                  .flags = ST_PARAM_HAS_MIN | ST_PARAM_HAS_MAX, .min = 0, .max = 1,
	                  .doc = "Weight of input a; input b gets 1 − alpha." },
};

static int
blend_reshape(st_reshape *r, const st_host_api *api)
{
	const st_shape *const *in = r->inputs;
	char a[SHAPE_TEXT], b[SHAPE_TEXT];
	if (in[0]->dtype != in[1]->dtype) {
		api->message(r, ST_SEVERITY_ERROR,
		             "input b is %s but input a is %s: both must have the same dtype",
		             api->dtype_name(in[1]->dtype), api->dtype_name(in[0]->dtype));
		return -1;
	}
	/* alpha·a is not an integer, so integer tensors would need a rounding rule. */
	if (!std_is_float(in[0]->dtype)) {
		api->message(r, ST_SEVERITY_ERROR,
		             "linear_blend needs float inputs (float32 or float16), not %s",
		             api->dtype_name(in[0]->dtype));
		return -1;
	}
	st_shape out = *in[0];
	int k = broadcast_into(&out, in[1]);
	if (k != 0) {
		api->message(r, ST_SEVERITY_ERROR,
		             "input b (%s) does not broadcast with input a (%s): sizes %lld and %lld meet at "
		             "axis -%d, and broadcasting needs them equal or one of them 1",
		             std_shape_text(api, in[1], b), std_shape_text(api, in[0], a),
		             (long long)dim_from_end(in[1], k), (long long)dim_from_end(in[0], k), k);
		return -1;
	}
	r->outputs[0] = out;
	r->flops = 3.0 * (double)api->shape_elements(&out);
	return 0;
}

/* ---- concatenation and split ---- */

static const st_param_desc concat_params[] = {
	[CONCAT_AXIS] = { .name = "axis", .kind = ST_PARAM_INT, .default_value = "1",
	                  .doc = "Axis along which the inputs are joined (1 is channels for N, C, H, W); "
	                         "negative values count from the last axis." },
};

static int
concat_reshape(st_reshape *r, const st_host_api *api)
{
	if (!all_linked(r, api) || !same_dtype(r, api))
		return -1;
	const st_shape *const *in = r->inputs;
	char a[SHAPE_TEXT], b[SHAPE_TEXT];
	int rank = in[0]->rank;
	if (rank == 0) {
		api->message(r, ST_SEVERITY_ERROR, "input 0 is a scalar: concatenation needs rank 1 or more");
		return -1;
	}
	int64_t axis_param = r->params[CONCAT_AXIS].i;
	int axis = std_axis(axis_param, rank);
	if (axis < 0) {
		api->message(r, ST_SEVERITY_ERROR,
		             "axis %lld is out of range for input 0 (%s): it must be from %d to %d",
		             (long long)axis_param, std_shape_text(api, in[0], a), -rank, rank - 1);
		return -1;
	}
	if (r->n_inputs == 1)
		api->message(r, ST_SEVERITY_INFO, "only one input: the layer passes it on");
	st_shape out = *in[0];
	for (int i = 1; i < r->n_inputs; i++) {
		if (in[i]->rank != rank) {
			api->message(r, ST_SEVERITY_ERROR,
			             "input %d is %s (rank %d) but input 0 is %s (rank %d): ranks must match",
			             i, std_shape_text(api, in[i], a), in[i]->rank, std_shape_text(api, in[0], b), rank);
			return -1;
		}
		for (int k = 0; k < rank; k++) {
			if (k != axis && in[i]->dims[k] != in[0]->dims[k]) {
				api->message(r, ST_SEVERITY_ERROR,
				             "input %d is %s but input 0 is %s: dim %d differs (%lld vs %lld)",
				             i, std_shape_text(api, in[i], a), std_shape_text(api, in[0], b), k,
				             (long long)in[i]->dims[k], (long long)in[0]->dims[k]);
				return -1;
			}
		}
		out.dims[axis] = std_add(out.dims[axis], in[i]->dims[axis]);
		if (out.dims[axis] < 0) {
			api->message(r, ST_SEVERITY_ERROR,
			             "the sizes along axis %d add up to more than an int64 holds", axis);
			return -1;
		}
	}
	r->outputs[0] = out;
	return 0;
}

static const st_param_desc split_params[] = {
	[SPLIT_AXIS] = { .name = "axis", .kind = ST_PARAM_INT, .default_value = "1",
	                 .doc = "Axis to cut along; negative values count from the last axis." },
	[SPLIT_SPLIT] = { .name = "split", .kind = ST_PARAM_DIMS, .default_value = "[]",
	                  .flags = ST_PARAM_HAS_MIN, .min = 0, .min_count = 0, .max_count = ST_MAX_OUTPUTS,
	                  .doc = "Size of each part along the axis, one output per value; they must add "
	                         "up to the input's size there. Empty: use num_outputs." },
	[SPLIT_NUM_OUTPUTS] = { .name = "num_outputs", .kind = ST_PARAM_INT, .default_value = "2",
	                        .flags = ST_PARAM_HAS_MIN | ST_PARAM_HAS_MAX, .min = 1, .max = ST_MAX_OUTPUTS,
	                        .doc = "Number of equal parts when split is empty; when the size does "
	                               "not divide, each part gets the size rounded up and the last one "
	                               "what is left." },
};

static int
split_reshape(st_reshape *r, const st_host_api *api)
{
	const st_shape *in = r->inputs[0];
	char a[SHAPE_TEXT];
	if (in->rank == 0) {
		api->message(r, ST_SEVERITY_ERROR, "the input is a scalar: split needs rank 1 or more");
		return -1;
	}
	int64_t axis_param = r->params[SPLIT_AXIS].i;
	int axis = std_axis(axis_param, in->rank);
	if (axis < 0) {
		api->message(r, ST_SEVERITY_ERROR,
		             "axis %lld is out of range for input %s: it must be from %d to %d",
		             (long long)axis_param, std_shape_text(api, in, a), -in->rank, in->rank - 1);
		return -1;
	}
	int64_t dim = in->dims[axis];
	const st_value *split = &r->params[SPLIT_SPLIT];
	int64_t sizes[ST_MAX_OUTPUTS];
	int n;
	if (split->count > 0) {
		n = split->count;
		int64_t sum = 0;
		for (int i = 0; i < n; i++) {
			sizes[i] = split->ints[i];
			sum = std_add(sum, sizes[i]);
		}
		if (sum != dim) {
			if (sum < 0)
				api->message(r, ST_SEVERITY_ERROR,
				             "split sizes add up to more than an int64 holds");
			else
				api->message(r, ST_SEVERITY_ERROR,
				             "split sizes add up to %lld, but dim %d of the input (%s) is %lld",
				             (long long)sum, axis, std_shape_text(api, in, a), (long long)dim);
			return -1;
		}
	} else {
		n = (int)r->params[SPLIT_NUM_OUTPUTS].i;
		/* ONNX 18: every part is ceil(dim / n) and the last takes the rest. */
		int64_t part = dim / n + (dim % n != 0);
		int64_t last = dim - part * (n - 1);
		if (last < 0) {
			api->message(r, ST_SEVERITY_ERROR,
			             "num_outputs %d does not fit dim %d of the input (%s), which is %lld: parts "
			             "of %lld (rounded up) leave %lld for the last one",
			             n, axis, std_shape_text(api, in, a), (long long)dim, (long long)part,
			             (long long)last);
			return -1;
		}
		if (last == 0 && dim > 0)
			api->message(r, ST_SEVERITY_WARNING,
			             "num_outputs %d on a size of %lld leaves the last output empty", n,
			             (long long)dim);
		for (int i = 0; i < n; i++)
			sizes[i] = i + 1 < n ? part : last;
	}
	for (int i = 0; i < n; i++) {
		r->outputs[i] = *in;
		r->outputs[i].dims[axis] = sizes[i];
	}
	r->n_outputs = n;
	return 0;
}

/* ---- the table ---- */

static const st_port_desc input_outputs[] = { { "output", 0, "The tensor fed at run time." } };
static const st_port_desc output_inputs[] = { { "input", 0, "The tensor the network hands back." } };
static const st_port_desc constant_outputs[] = { { "output", 0, "The constant tensor." } };
static const st_port_desc pass_inputs[] = { { "input", 0, "The tensor to pass on." } };
static const st_port_desc pass_outputs[] = { { "output", 0, "The input, unchanged (activation applied if any)." } };
static const st_port_desc dropout_outputs[] = { { "output", 0, "The input, unchanged at inference." } };
static const st_port_desc softmax_inputs[] = { { "input", 0, "Scores (logits) of any rank from 1." } };
static const st_port_desc softmax_outputs[] = { { "output", 0, "Probabilities that sum to 1 along the axis." } };
static const st_port_desc eltwise_inputs[] = {
	{ "input", ST_PORT_INFINITE, "Operands, combined in terminal order; a new terminal appears for each link." },
};
static const st_port_desc eltwise_outputs[] = { { "output", 0, "The combined tensor, of the broadcast shape." } };
static const st_port_desc blend_inputs[] = {
	{ "a", 0, "The tensor weighted by alpha." },
	{ "b", 0, "The tensor weighted by 1 − alpha." },
};
static const st_port_desc blend_outputs[] = { { "output", 0, "alpha·a + (1 − alpha)·b, of the broadcast shape." } };
static const st_port_desc concat_inputs[] = {
	{ "input", ST_PORT_INFINITE, "Tensors to join, in order; a new terminal appears for each link." },
};
static const st_port_desc concat_outputs[] = { { "output", 0, "The inputs joined along the axis." } };
static const st_port_desc split_inputs[] = { { "input", 0, "The tensor to cut." } };
static const st_port_desc split_outputs[] = { { "output", 0, "One part per output, in order along the axis." } };

static const st_port_desc onnx_op_inputs[] = {
	{ "input", ST_PORT_INFINITE | ST_PORT_OPTIONAL, "The operator's inputs, in ONNX order." },
};
static const st_port_desc onnx_op_outputs[] = { { "output", 0, "The operator's outputs, in ONNX order." } };

static const char *const input_aliases[] = { "in", NULL };
static const char *const output_aliases[] = { "out", NULL };
static const char *const constant_aliases[] = { "const", NULL };
static const char *const eltwise_aliases[] = { "eltwise", NULL };
static const char *const blend_aliases[] = { "blend", NULL };
static const char *const concat_aliases[] = { "concat", NULL };

const st_layer_desc std_tensor_layers[] = {
	{ .name = "input", .display_name = "Input", .category = "Input/Output", .aliases = input_aliases,
	  .summary = "A network input, fed at run time.", .outputs = input_outputs, .n_outputs = 1,
	  .params = input_params, .n_params = STD_COUNT(input_params), .flags = ST_LAYER_GRAPH_INPUT,
	  .reshape = input_reshape },
	{ .name = "output", .display_name = "Output", .category = "Input/Output", .aliases = output_aliases,
	  .summary = "A network output.", .inputs = output_inputs, .n_inputs = 1,
	  .flags = ST_LAYER_GRAPH_OUTPUT, .reshape = output_reshape },
	{ .name = "constant", .display_name = "Constant", .category = "Input/Output",
	  .aliases = constant_aliases,
	  .summary = "A fixed tensor: values from a weights file, or one fill value.",
	  .outputs = constant_outputs, .n_outputs = 1, .params = constant_params,
	  .n_params = STD_COUNT(constant_params), .reshape = constant_reshape },
	{ .name = "identity", .display_name = "Identity", .category = "General",
	  .summary = "Passes its input on unchanged (an activation may be attached).",
	  .inputs = pass_inputs, .n_inputs = 1, .outputs = pass_outputs, .n_outputs = 1,
	  .flags = ST_LAYER_ACTIVATION, .reshape = identity_reshape },
	{ .name = "dropout", .display_name = "Dropout", .category = "General",
	  .summary = "Zeroes random elements while training; passes its input on at inference.",
	  .inputs = pass_inputs, .n_inputs = 1, .outputs = dropout_outputs, .n_outputs = 1,
	  .params = dropout_params, .n_params = STD_COUNT(dropout_params), .reshape = dropout_reshape },
	{ .name = "softmax", .display_name = "Softmax", .category = "General",
	  .summary = "exp(x) normalised to sum to 1 along one axis.", .inputs = softmax_inputs,
	  .n_inputs = 1, .outputs = softmax_outputs, .n_outputs = 1, .params = softmax_params,
	  .n_params = STD_COUNT(softmax_params), .reshape = softmax_reshape },
	{ .name = "elementwise", .display_name = "Element-wise", .category = "Element-wise",
	  .aliases = eltwise_aliases,
	  .summary = "Adds, subtracts, multiplies, divides, or takes the max or min of its inputs.",
	  .inputs = eltwise_inputs, .n_inputs = 1, .outputs = eltwise_outputs, .n_outputs = 1,
	  .params = eltwise_params, .n_params = STD_COUNT(eltwise_params), .flags = ST_LAYER_ACTIVATION,
	  .reshape = eltwise_reshape },
	{ .name = "linear_blend", .display_name = "Linear blend", .category = "Element-wise",
	  .aliases = blend_aliases, .summary = "alpha·a + (1 − alpha)·b.", .inputs = blend_inputs,
	  .n_inputs = 2, .outputs = blend_outputs, .n_outputs = 1, .params = blend_params,
	  .n_params = STD_COUNT(blend_params), .flags = ST_LAYER_ACTIVATION, .reshape = blend_reshape },
	{ .name = "concatenation", .display_name = "Concatenation", .category = "Shape",
	  .aliases = concat_aliases, .summary = "Joins its inputs along one axis.",
	  .inputs = concat_inputs, .n_inputs = 1, .outputs = concat_outputs, .n_outputs = 1,
	  .params = concat_params, .n_params = STD_COUNT(concat_params), .flags = ST_LAYER_ACTIVATION,
	  .reshape = concat_reshape },
	{ .name = "split", .display_name = "Split", .category = "Shape",
	  .summary = "Cuts its input into parts along one axis, one output per part.",
	  .inputs = split_inputs, .n_inputs = 1, .outputs = split_outputs, .n_outputs = 1,
	  .params = split_params, .n_params = STD_COUNT(split_params),
	  .flags = ST_LAYER_VARIABLE_OUTPUTS, .reshape = split_reshape },
	{ .name = "onnx_operator", .display_name = "ONNX operator", .category = "General",
	  .summary = "An imported ONNX operator Strata has no layer for, kept for export.",
	  .inputs = onnx_op_inputs, .n_inputs = 1, .outputs = onnx_op_outputs, .n_outputs = 1,
	  .params = onnx_op_params, .n_params = STD_COUNT(onnx_op_params),
	  .flags = ST_LAYER_VARIABLE_OUTPUTS, .reshape = onnx_op_reshape },
};
const int std_tensor_layer_count = STD_COUNT(std_tensor_layers);
