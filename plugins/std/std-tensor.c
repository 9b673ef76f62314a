/* Graph inputs and outputs, and tensor-level layers. */
#include "config.h"

#include "std.h"

static const char *const dtype_names[] = { "float32", "float16", "int64", "int32", "int8", "uint8", "bool", NULL };

enum { INPUT_DIMS, INPUT_BATCH, INPUT_DTYPE };

static const st_param_desc input_params[] = {
	[INPUT_DIMS] = { .name = "dims", .kind = ST_PARAM_DIMS, .default_value = "[3, 224, 224]",
	                 .flags = ST_PARAM_HAS_MIN, .min = 0, .min_count = 0, .max_count = ST_MAX_RANK - 1,
	                 .doc = "Dimensions of one sample, without the batch: C, H, W for an image." },
	[INPUT_BATCH] = { .name = "batch", .kind = ST_PARAM_INT, .default_value = "1",
	                  .flags = ST_PARAM_HAS_MIN, .min = 1,
	                  .doc = "Batch size N, the leading dimension of the tensor." },
	[INPUT_DTYPE] = { .name = "dtype", .kind = ST_PARAM_ENUM, .default_value = "float32",
	                  .enum_values = dtype_names, .doc = "Element type of the tensor fed in." },
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

static int
identity_reshape(st_reshape *r, const st_host_api *api)
{
	(void)api;
	r->outputs[0] = *r->inputs[0];
	return 0;
}

static const st_port_desc one_input[] = { { "input", 0, "The tensor to pass on." } };
static const st_port_desc one_output[] = { { "output", 0, "The result." } };
static const char *const input_aliases[] = { "in", NULL };
static const char *const output_aliases[] = { "out", NULL };

const st_layer_desc std_tensor_layers[] = {
	{ .name = "input", .display_name = "Input", .category = "Input/Output", .aliases = input_aliases,
	  .summary = "A network input, fed at run time.", .outputs = one_output, .n_outputs = 1,
	  .params = input_params, .n_params = STD_COUNT(input_params), .flags = ST_LAYER_GRAPH_INPUT,
	  .reshape = input_reshape },
	{ .name = "output", .display_name = "Output", .category = "Input/Output", .aliases = output_aliases,
	  .summary = "A network output.", .inputs = one_input, .n_inputs = 1,
	  .flags = ST_LAYER_GRAPH_OUTPUT, .reshape = output_reshape },
	{ .name = "identity", .display_name = "Identity", .category = "General",
	  .summary = "Passes its input on unchanged (an activation may be attached).",
	  .inputs = one_input, .n_inputs = 1, .outputs = one_output, .n_outputs = 1,
	  .flags = ST_LAYER_ACTIVATION, .reshape = identity_reshape },
};
const int std_tensor_layer_count = STD_COUNT(std_tensor_layers);
