/* Normalisation and dense layers: batch, instance and layer normalisation,
 * fully connected and matrix multiplication. */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>

#include "std.h"

/* Checks the input's rank against the least the layer needs; what names the
 * dimensions expected, for the message. */
static int
require_rank(st_reshape *r, const st_host_api *api, const st_shape *in, int least, const char *what)
{
	if (in->rank >= least)
		return 0;
	char text[SHAPE_TEXT];
	api->shape_format(in, text, sizeof text);
	api->message(r, ST_SEVERITY_ERROR, "input %s has rank %d, but %s needs %s (rank %d or more)", text,
	             in->rank, r->desc->name, what, least);
	return -1;
}

static double
element_count(const st_shape *s)
{
	double n = 1;
	for (int i = 0; i < s->rank; i++)
		n *= (double)s->dims[i];
	return n;
}

static const char *const epsilon_doc =
	"Added to the variance before its square root, so that a constant channel does not divide by "
	"zero.";

/* ---- batch normalisation ---- */

static const st_param_desc batch_normalization_params[] = {
	[BATCH_NORM_EPSILON] = { .name = "epsilon", .kind = ST_PARAM_FLOAT, .default_value = "1e-05",
	                         .flags = ST_PARAM_HAS_MIN, .min = 0, .doc = epsilon_doc },
};

static int
batch_normalization_reshape(st_reshape *r, const st_host_api *api)
{
	const st_shape *in = r->inputs[0];
	if (require_rank(r, api, in, 2, "N x C x ...") != 0 || std_require_float(r, api, in) != 0)
		return -1;
	r->outputs[0] = *in;
	/* Each channel has its own statistics and affine transform. */
	static const char *const names[] = { "scale", "bias", "mean", "variance" };
	for (int i = 0; i < STD_COUNT(names); i++) {
		if (std_declare_weight(r, api, names[i], 1, &in->dims[1]) != 0)
			return -1;
	}
	/* At inference the four tensors fold into one multiply-add per element. */
	r->flops = 2.0 * element_count(in);
	return 0;
}

/* ---- instance normalisation ---- */

static const st_param_desc instance_normalization_params[] = {
	[INSTANCE_NORM_EPSILON] = { .name = "epsilon", .kind = ST_PARAM_FLOAT, .default_value = "1e-05",
	                            .flags = ST_PARAM_HAS_MIN, .min = 0, .doc = epsilon_doc },
};

static int
instance_normalization_reshape(st_reshape *r, const st_host_api *api)
{
	const st_shape *in = r->inputs[0];
	if (require_rank(r, api, in, 3, "N x C x spatial") != 0 || std_require_float(r, api, in) != 0)
		return -1;
	r->outputs[0] = *in;
	if (std_declare_weight(r, api, "scale", 1, &in->dims[1]) != 0 ||
	    std_declare_weight(r, api, "bias", 1, &in->dims[1]) != 0)
		return -1;
	/* Statistics are computed at run time: mean and variance passes, then
	 * a subtract, a divide and a multiply-add per element, about five. */
	r->flops = 5.0 * element_count(in);
	return 0;
}

/* ---- layer normalisation ---- */

static const st_param_desc layer_normalization_params[] = {
	[LAYER_NORM_AXIS] = { .name = "axis", .kind = ST_PARAM_INT, .default_value = "-1",
	                      .doc = "First of the axes normalised together: the statistics are taken over "
	                             "this axis and every one after it; negative values count from the "
	                             "last axis." },
	[LAYER_NORM_EPSILON] = { .name = "epsilon", .kind = ST_PARAM_FLOAT, .default_value = "1e-05",
	                         .flags = ST_PARAM_HAS_MIN, .min = 0, .doc = epsilon_doc },
	[LAYER_NORM_BIAS] = { .name = "bias", .kind = ST_PARAM_BOOL, .default_value = "true",
	                      .doc = "Whether a learned bias is added after the scale (ONNX input B)." },
};

static int
layer_normalization_reshape(st_reshape *r, const st_host_api *api)
{
	const st_shape *in = r->inputs[0];
	if (require_rank(r, api, in, 1, "at least one axis to normalise") != 0 ||
	    std_require_float(r, api, in) != 0)
		return -1;
	int64_t axis = r->params[LAYER_NORM_AXIS].i;
	int first = std_axis(axis, in->rank);
	if (first < 0) {
		char text[SHAPE_TEXT];
		api->message(r, ST_SEVERITY_ERROR,
		             "axis %" PRId64 " is out of range for input %s: it must be from %d to %d", axis,
		             std_shape_text(api, in, text), -in->rank, in->rank - 1);
		return -1;
	}
	r->outputs[0] = *in;
	/* Scale and bias cover the normalised axes, one value per element of a row. */
	int rank = in->rank - first;
	if (std_declare_weight(r, api, "scale", rank, &in->dims[first]) != 0 ||
	    (r->params[LAYER_NORM_BIAS].b && std_declare_weight(r, api, "bias", rank, &in->dims[first]) != 0))
		return -1;
	/* As instance normalisation: two passes for the statistics, then a
	 * subtract, a divide and a multiply-add; one less without the bias. */
	r->flops = (r->params[LAYER_NORM_BIAS].b ? 5.0 : 4.0) * element_count(in);
	return 0;
}

/* ---- fully connected ---- */

static const st_param_desc fully_connected_params[] = {
	[FC_NUM_OUTPUT] = { .name = "num_output", .kind = ST_PARAM_INT, .default_value = "1",
	                    .flags = ST_PARAM_HAS_MIN, .min = 1,
	                    .doc = "Number of outputs per sample, that is of rows in the weight matrix." },
	[FC_BIAS] = { .name = "bias", .kind = ST_PARAM_BOOL, .default_value = "true",
	              .doc = "Whether a learned bias is added to every output." },
};

static int
fully_connected_reshape(st_reshape *r, const st_host_api *api)
{
	const st_shape *in = r->inputs[0];
	int64_t num_output = r->params[FC_NUM_OUTPUT].i;
	bool bias = r->params[FC_BIAS].b;
	if (require_rank(r, api, in, 2, "a batch dimension and at least one feature dimension") != 0 ||
	    std_require_float(r, api, in) != 0)
		return -1;
	/* Everything after the batch dimension is flattened into K features. */
	int64_t features = 1;
	for (int i = 1; i < in->rank; i++)
		features = std_mul(features, in->dims[i]);
	if (features < 0) {
		char text[SHAPE_TEXT];
		api->shape_format(in, text, sizeof text);
		api->message(r, ST_SEVERITY_ERROR, "input %s has more features per sample than fit in 64 bits",
		             text);
		return -1;
	}
	st_shape *out = &r->outputs[0];
	*out = (st_shape){ .dtype = in->dtype, .rank = 2, .dims = { in->dims[0], num_output } };
	if (std_check_size(r, api, out, "output") != 0)
		return -1;
	int64_t weight_dims[2] = { num_output, features };
	if (std_declare_weight(r, api, "weights", 2, weight_dims) != 0)
		return -1;
	if (bias && std_declare_weight(r, api, "bias", 1, &num_output) != 0)
		return -1;
	double outputs = (double)in->dims[0] * (double)num_output;
	r->flops = 2.0 * outputs * (double)features + (bias ? outputs : 0);
	return 0;
}

/* ---- matrix multiply ---- */

/* True for the types ONNX MatMul computes in that Strata has. */
static bool
matmul_dtype(st_dtype t)
{
	return t == ST_DTYPE_FLOAT32 || t == ST_DTYPE_FLOAT16 || t == ST_DTYPE_INT32 || t == ST_DTYPE_INT64;
}

/*
 * numpy matmul: a vector a is read as a 1 x K row and b as a K x 1 column,
 * the dimension added being dropped again from the result; the dimensions
 * before the last two are batch dimensions, broadcast against each other.
 */
static int
matrix_multiply_reshape(st_reshape *r, const st_host_api *api)
{
	const st_shape *a = r->inputs[0], *b = r->inputs[1];
	char a_text[SHAPE_TEXT], b_text[SHAPE_TEXT];
	api->shape_format(a, a_text, sizeof a_text);
	api->shape_format(b, b_text, sizeof b_text);
	if (a->rank < 1 || b->rank < 1) {
		api->message(r, ST_SEVERITY_ERROR,
		             "a is %s and b is %s, but matrix_multiply needs a vector or matrix for both "
		             "(rank 1 or more)",
		             a_text, b_text);
		return -1;
	}
	if (a->dtype != b->dtype) {
		api->message(r, ST_SEVERITY_ERROR, "a is %s but b is %s: both inputs need the same type",
		             api->dtype_name(a->dtype), api->dtype_name(b->dtype));
		return -1;
	}
	if (!matmul_dtype(a->dtype)) {
		api->message(r, ST_SEVERITY_ERROR,
		             "the inputs are %s, but matrix_multiply needs float32, float16, int32 or int64",
		             api->dtype_name(a->dtype));
		return -1;
	}
	bool a_vector = a->rank == 1, b_vector = b->rank == 1;
	int64_t rows = a_vector ? 1 : a->dims[a->rank - 2];
	int64_t inner_a = a->dims[a->rank - 1];
	int64_t inner_b = b_vector ? b->dims[0] : b->dims[b->rank - 2];
	int64_t columns = b_vector ? 1 : b->dims[b->rank - 1];
	if (inner_a != inner_b) {
		api->message(r, ST_SEVERITY_ERROR,
		             "a is %s, b is %s: the inner dimensions %" PRId64 " and %" PRId64 " differ",
		             a_text, b_text, inner_a, inner_b);
		return -1;
	}

	/* Batch dimensions line up from the right; a missing one counts as 1. */
	int a_batch = a_vector ? 0 : a->rank - 2, b_batch = b_vector ? 0 : b->rank - 2;
	int batch_rank = a_batch > b_batch ? a_batch : b_batch;
	st_shape *out = &r->outputs[0];
	*out = (st_shape){ .dtype = a->dtype };
	double batch = 1;
	for (int i = 0; i < batch_rank; i++) {
		int ai = i - (batch_rank - a_batch), bi = i - (batch_rank - b_batch);
		int64_t da = ai >= 0 ? a->dims[ai] : 1, db = bi >= 0 ? b->dims[bi] : 1;
		if (da != db && da != 1 && db != 1) {
			api->message(r, ST_SEVERITY_ERROR,
			             "a is %s, b is %s: the batch dimensions %" PRId64 " and %" PRId64
			             " do not broadcast (they must be equal, or one of them 1)",
			             a_text, b_text, da, db);
			return -1;
		}
		out->dims[out->rank++] = da == 1 ? db : da;
		batch *= (double)out->dims[out->rank - 1];
	}
	if (!a_vector)
		out->dims[out->rank++] = rows;
	if (!b_vector)
		out->dims[out->rank++] = columns;
	if (std_check_size(r, api, out, "output") != 0)
		return -1;
	r->flops = 2.0 * batch * (double)rows * (double)inner_a * (double)columns;
	return 0;
}

/* ---- the table ---- */

static const st_port_desc norm_input[] = {
	{ "input", 0, "N x C x ..., float32 or float16; statistics are kept per channel C." },
};
static const st_port_desc instance_input[] = {
	{ "input", 0, "N x C x spatial (rank 3 or more), float32 or float16." },
};
static const st_port_desc layer_input[] = {
	{ "input", 0, "Any tensor of rank 1 or more, float32 or float16; axes from axis on are normalised." },
};
static const st_port_desc same_output[] = {
	{ "output", 0, "The normalised tensor, of the input's shape and type." },
};
static const st_port_desc fc_input[] = {
	{ "input", 0, "N x ..., float32 or float16; all dimensions after N are flattened into K." },
};
static const st_port_desc fc_output[] = {
	{ "output", 0, "N x num_output, of the input's type." },
};
static const st_port_desc matmul_inputs[] = {
	{ "a", 0, "The left operand: ... x M x K, or a vector of K." },
	{ "b", 0, "The right operand: ... x K x N, or a vector of K; of a's type." },
};
static const st_port_desc matmul_output[] = {
	{ "output", 0, "Broadcast batch dimensions x M x N, without M or N for vector operands." },
};

static const char *const batch_normalization_aliases[] = { "bn", "batchnorm", NULL };
static const char *const instance_normalization_aliases[] = { "instnorm", NULL };
static const char *const layer_normalization_aliases[] = { "layernorm", NULL };
static const char *const fully_connected_aliases[] = { "fc", "dense", NULL };
static const char *const matrix_multiply_aliases[] = { "matmul", NULL };

const st_layer_desc std_norm_layers[] = {
	{ .name = "batch_normalization", .display_name = "Batch normalization", .category = "Normalization",
	  .aliases = batch_normalization_aliases,
	  .summary = "Normalises each channel with stored mean and variance, then scales and shifts it.",
	  .inputs = norm_input, .n_inputs = 1, .outputs = same_output, .n_outputs = 1,
	  .params = batch_normalization_params, .n_params = STD_COUNT(batch_normalization_params),
	  .flags = ST_LAYER_ACTIVATION, .reshape = batch_normalization_reshape },
	{ .name = "instance_normalization", .display_name = "Instance normalization",
	  .category = "Normalization", .aliases = instance_normalization_aliases,
	  .summary = "Normalises each channel of each sample over its spatial positions, then scales and "
	             "shifts it.",
	  .inputs = instance_input, .n_inputs = 1, .outputs = same_output, .n_outputs = 1,
	  .params = instance_normalization_params, .n_params = STD_COUNT(instance_normalization_params),
	  .flags = ST_LAYER_ACTIVATION, .reshape = instance_normalization_reshape },
	{ .name = "layer_normalization", .display_name = "Layer normalization", .category = "Normalization",
	  .aliases = layer_normalization_aliases,
	  .summary = "Normalises each sample over its last axes (from axis on), then scales and shifts it "
	             "element by element.",
	  .inputs = layer_input, .n_inputs = 1, .outputs = same_output, .n_outputs = 1,
	  .params = layer_normalization_params, .n_params = STD_COUNT(layer_normalization_params),
	  .flags = ST_LAYER_ACTIVATION, .reshape = layer_normalization_reshape },
	{ .name = "fully_connected", .display_name = "Fully connected", .category = "General",
	  .aliases = fully_connected_aliases,
	  .summary = "Flattens each sample and multiplies it by a learned matrix (ONNX Gemm).",
	  .inputs = fc_input, .n_inputs = 1, .outputs = fc_output, .n_outputs = 1,
	  .params = fully_connected_params, .n_params = STD_COUNT(fully_connected_params),
	  .flags = ST_LAYER_ACTIVATION, .reshape = fully_connected_reshape },
	{ .name = "matrix_multiply", .display_name = "Matrix multiply", .category = "General",
	  .aliases = matrix_multiply_aliases,
	  .summary = "Multiplies two tensors as numpy matmul does, broadcasting batch dimensions.",
	  .inputs = matmul_inputs, .n_inputs = 2, .outputs = matmul_output, .n_outputs = 1,
	  .flags = ST_LAYER_ACTIVATION, .reshape = matrix_multiply_reshape },
};
const int std_norm_layer_count = STD_COUNT(std_norm_layers);
