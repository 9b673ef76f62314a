/* The XWN collection's layer types and entry point: XWN convolution and
 * transposed convolution (the standard ones plus the XWN parameter set) and
 * the cascade convolution. The transform itself is kernels/cpu/k-xwn.c. */
#include "config.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>

#include "xwn.h"

const uint32_t st_plugin_abi = ST_PLUGIN_ABI_VERSION;

static const st_plugin_info info = {
	.name = "xwn",
	.author = "The Strata developers",
	.description = "The DDesigner API's accelerator-friendly layers: XWN convolutions and transposed "
	               "convolutions (power-of-two weight levels, pruning), cascade convolutions (which "
	               "expand into their parts) and the API's blocks (ConvBlock, TConvBlock, "
	               "CascadeConvBlock, FCBlock).",
	.version = PACKAGE_VERSION,
};

/* ---- the XWN parameter set ---- */

#define XWN_SET                                                                                    \
	{ .name = "use_transform", .kind = ST_PARAM_BOOL, .default_value = "false",                    \
	  .doc = "Replace every weight, at bind time, by its sign times one of 2^(bit-1) power-of-two "  \
	         "levels of its kernel slice's mean magnitude (the XWN transform)." },                 \
	{ .name = "bit", .kind = ST_PARAM_INT, .default_value = "4",                                   \
	  .flags = ST_PARAM_HAS_MIN | ST_PARAM_HAS_MAX, .min = 0, .max = K_XWN_MAX_BIT,                 \
	  .doc = "Bits of a transformed weight: one for the sign, bit-1 for the level index (4: eight "  \
	         "levels). 1 keeps the sign only (binary weights); 0 turns the transform off." },      \
	{ .name = "max_scale", .kind = ST_PARAM_FLOAT, .default_value = "4",                           \
	  .flags = ST_PARAM_HAS_MIN | ST_PARAM_HAS_MAX, .min = 0, .max = 1e6,                          \
	  .doc = "The largest level as a multiple of the slice's mean magnitude; the others halve "      \
	         "from it." },                                                                           \
	{ .name = "use_pruning", .kind = ST_PARAM_BOOL, .default_value = "false",                      \
	  .doc = "Zero every kernel slice whose mean magnitude is below prun_weight times the mean of "  \
	         "its output channel's slices." },                                                       \
	{ .name = "prun_weight", .kind = ST_PARAM_FLOAT, .default_value = "0.5",                       \
	  .flags = ST_PARAM_HAS_MIN | ST_PARAM_HAS_MAX, .min = 0, .max = 1e6,                          \
	  .doc = "The pruning edge as a fraction of the output channel's mean slice magnitude." }

static const st_param_desc xwn_set[XWN_N_PARAMS] = { XWN_SET };

/* Filled at load: std's convolution parameters, then the XWN set. */
static st_param_desc conv_params[XWN_CONV_SET + XWN_N_PARAMS];
static st_param_desc deconv_params[XWN_DECONV_SET + XWN_N_PARAMS];

/* ---- the cascade convolution ---- */

static const st_param_desc cascade_params[] = {
	[CASCADE_NUM_OUTPUT] = { .name = "num_output", .kind = ST_PARAM_INT, .default_value = "1",
	                         .flags = ST_PARAM_HAS_MIN, .min = 1,
	                         .doc = "Output channels of the final pointwise convolution." },
	[CASCADE_KERNEL_SIZE] = { .name = "kernel_size", .kind = ST_PARAM_INT, .default_value = "5",
	                          .flags = ST_PARAM_HAS_MIN, .min = 1,
	                          .doc = "The large kernel the cascade stands for: kernel_size / 2 chained "
	                                 "3-tap stages (3 x 3 in 2-D), so 5 gives two stages and 7 three. "
	                                 "At least 3." },
	[CASCADE_STRIDE] = { .name = "stride", .kind = ST_PARAM_DIMS, .default_value = "[1]",
	                     .flags = ST_PARAM_HAS_MIN, .min = 1, .min_count = 1, .max_count = 3,
	                     .doc = "Stride of the pointwise convolution: one value for every spatial axis, "
	                            "or one per axis. The stages always step by 1." },
	[CASCADE_PADS] = { .name = "pads", .kind = ST_PARAM_DIMS, .default_value = "[0]",
	                   .flags = ST_PARAM_HAS_MIN, .min = 0, .min_count = 1, .max_count = 6,
	                   .doc = "Zero padding of the pointwise convolution (the reference's padding): one "
	                          "value for all sides, one per axis, or all begins then all ends. The "
	                          "stages always pad by 1, keeping the size." },
	[CASCADE_MID_CHANNELS] = { .name = "mid_channels", .kind = ST_PARAM_INT, .default_value = "0",
	                           .flags = ST_PARAM_HAS_MIN, .min = 0,
	                           .doc = "Channels of every stage; 0 takes the input channels times "
	                                  "channel_ratio, truncated." },
	[CASCADE_CHANNEL_RATIO] = { .name = "channel_ratio", .kind = ST_PARAM_FLOAT, .default_value = "0.5",
	                            .flags = ST_PARAM_HAS_MIN | ST_PARAM_HAS_MAX, .min = 0, .max = 64,
	                            .doc = "Stage channels as a fraction of the input channels, when "
	                                   "mid_channels is 0." },
	[CASCADE_BIAS] = { .name = "bias", .kind = ST_PARAM_BOOL, .default_value = "false",
	                   .doc = "Whether the pointwise convolution adds a learned bias (the stages have "
	                          "none)." },
	XWN_SET,
};

/* Formats a shape for messages. */
static const char *
shape_text(const st_host_api *api, const st_shape *s, char *buf)
{
	api->shape_format(s, buf, SHAPE_TEXT);
	return buf;
}

/* Stride or pads as one value per spatial axis (pads: begin and end). */
static int
per_axis(st_reshape *r, const st_host_api *api, int param, int spatial, int64_t *begin, int64_t *end)
{
	const st_value *v = &r->params[param];
	bool pads = end != NULL;
	if (v->count != 1 && v->count != spatial && !(pads && v->count == 2 * spatial)) {
		api->message(r, ST_SEVERITY_ERROR,
		             "%s has %d values, but the input has %d spatial ax%s: give one value for all "
		             "axes, one per axis%s",
		             r->desc->params[param].name, v->count, spatial, spatial == 1 ? "is" : "es",
		             pads ? ", or all begins then all ends" : "");
		return -1;
	}
	for (int i = 0; i < spatial; i++) {
		if (v->count == 2 * spatial) {
			begin[i] = v->ints[i];
			end[i] = v->ints[spatial + i];
		} else {
			begin[i] = v->ints[v->count == 1 ? 0 : i];
			if (end != NULL)
				end[i] = begin[i];
		}
	}
	return 0;
}

static int
cascade_reshape(st_reshape *r, const st_host_api *api)
{
	const st_shape *in = r->inputs[0];
	char text[SHAPE_TEXT];
	if (in->rank < 3 || in->rank > 5) {
		api->message(r, ST_SEVERITY_ERROR,
		             "input %s has rank %d, but a cascade convolution needs an image N x C x W, "
		             "N x C x H x W or N x C x D x H x W (rank 3 to 5)",
		             shape_text(api, in, text), in->rank);
		return -1;
	}
	if (std_require_float(r, api, in) != 0)
		return -1;
	int spatial = in->rank - 2;
	int64_t kernel_size = r->params[CASCADE_KERNEL_SIZE].i;
	int64_t num_output = r->params[CASCADE_NUM_OUTPUT].i;
	if (kernel_size < 3) {
		api->message(r, ST_SEVERITY_ERROR,
		             "kernel_size %" PRId64 " is too small: a cascade needs at least 3 (one 3-tap stage)",
		             kernel_size);
		return -1;
	}
	bool bias = r->params[CASCADE_BIAS].b;
	int max_stages = CASCADE_MAX_STAGES + (bias ? 0 : 1);
	if (kernel_size / 2 > max_stages) {
		api->message(r, ST_SEVERITY_ERROR,
		             "kernel_size %" PRId64 " needs %" PRId64 " stages, more than the %d one layer "
		             "holds%s: expand the cascade into its parts for a larger kernel",
		             kernel_size, kernel_size / 2, max_stages, bias ? " with a bias" : "");
		return -1;
	}
	int n = xwn_cascade_stages(kernel_size);
	if (kernel_size % 2 == 0)
		api->message(r, ST_SEVERITY_INFO,
		             "kernel_size %" PRId64 " is even: the cascade has %d stages and sees %d taps per "
		             "axis, as kernel_size %" PRId64 " would",
		             kernel_size, n, 2 * n + 1, kernel_size + 1);
	int64_t channels = in->dims[1];
	int64_t mid = xwn_cascade_mid(r->params, channels);
	if (mid < 1) {
		api->message(r, ST_SEVERITY_ERROR,
		             "the stages would have no channels: %" PRId64 " input channels times channel_ratio "
		             "%g is below 1; set mid_channels or a larger channel_ratio",
		             channels, r->params[CASCADE_CHANNEL_RATIO].f);
		return -1;
	}
	int64_t stride[3], pad_begin[3], pad_end[3];
	if (per_axis(r, api, CASCADE_STRIDE, spatial, stride, NULL) != 0 ||
	    per_axis(r, api, CASCADE_PADS, spatial, pad_begin, pad_end) != 0)
		return -1;
	st_shape *out = &r->outputs[0];
	*out = *in;
	out->dims[1] = num_output;
	double plane = 1, out_plane = 1;
	for (int i = 0; i < spatial; i++) {
		int64_t padded = std_add(std_add(in->dims[2 + i], pad_begin[i]), pad_end[i]);
		if (padded < 1 || stride[i] < 1) {
			api->message(r, ST_SEVERITY_ERROR, "spatial axis %d of input %s is empty or overflows", i,
			             shape_text(api, in, text));
			return -1;
		}
		out->dims[2 + i] = (padded - 1) / stride[i] + 1;
		plane *= (double)in->dims[2 + i];
		out_plane *= (double)out->dims[2 + i];
	}
	if (std_check_size(r, api, out, "output") != 0)
		return -1;

	/* Weights, named per part: stage<j>_weights, pointwise_weights and
	 * pointwise_bias, which are the files of the expanded parts too. */
	double taps = 1;
	int64_t dims[5];
	for (int j = 0; j < n; j++) {
		char name[ST_WEIGHT_NAME_MAX];
		snprintf(name, sizeof name, "stage%d_weights", j);
		dims[0] = mid;
		dims[1] = j == 0 ? channels : mid;
		for (int i = 0; i < spatial; i++)
			dims[2 + i] = 3;
		if (std_declare_weight(r, api, name, 2 + spatial, dims) != 0)
			return -1;
	}
	for (int i = 0; i < spatial; i++)
		taps *= 3;
	dims[0] = num_output;
	dims[1] = std_mul(mid, n);
	for (int i = 0; i < spatial; i++)
		dims[2 + i] = 1;
	if (dims[1] < 0 || std_declare_weight(r, api, "pointwise_weights", 2 + spatial, dims) != 0)
		return -1;
	if (bias && std_declare_weight(r, api, "pointwise_bias", 1, &num_output) != 0)
		return -1;
	double batch = (double)in->dims[0];
	r->flops = 2.0 * batch * plane * taps * (double)mid * ((double)channels + (double)(n - 1) * (double)mid);
	r->flops += 2.0 * batch * out_plane * (double)num_output * (double)mid * n;
	if (bias)
		r->flops += batch * out_plane * (double)num_output;
	return 0;
}

/* ---- the table ---- */

static const st_port_desc image_input[] = {
	{ "input", 0, "An image N x C x W, N x C x H x W or N x C x D x H x W, float32 or float16." },
};
static const st_port_desc conv_output[] = {
	{ "output", 0, "N x num_output x the output spatial sizes, of the input's type." },
};

static const char *const xwn_conv_aliases[] = { "xwn_conv", NULL };
static const char *const xwn_deconv_aliases[] = { "xwn_deconv", "xwn_conv_transpose", NULL };
static const char *const cascade_aliases[] = { "cascade_conv", "cascade", NULL };

st_layer_desc xwn_layers[] = {
	{ .name = "xwn_convolution", .display_name = "XWN convolution", .category = "XWN",
	  .aliases = xwn_conv_aliases,
	  .summary = "Convolution whose weights are XWN-transformed and pruned at bind time (DDesigner "
	             "API Conv1d/Conv2d).",
	  .doc = "A convolution with the parameters of the standard one, plus the XWN set. When "
	         "use_transform is on, each weight becomes its sign times one of 2^(bit-1) levels "
	         "max_scale, max_scale/2, max_scale/4... times the mean magnitude of its kernel slice "
	         "(the taps that join one input channel to one output channel): the nearest level, the "
	         "larger on a tie. When use_pruning is on, a slice whose mean magnitude falls below "
	         "prun_weight times the mean over its output channel's slices is zeroed. Both work on the "
	         "stored full-precision weights once, when they are bound, and the layer then runs as a "
	         "plain convolution. The DDesigner API's block-style transform=N (null: off) and "
	         "pruning=F (null: off) are accepted as use_transform with bit=N and use_pruning with "
	         "prun_weight=F.",
	  .inputs = image_input, .n_inputs = 1, .outputs = conv_output, .n_outputs = 1,
	  .params = conv_params, .n_params = XWN_CONV_SET + XWN_N_PARAMS,
	  .flags = ST_LAYER_ACTIVATION, .reshape = std_convolution_reshape },
	{ .name = "xwn_deconvolution", .display_name = "XWN transposed convolution", .category = "XWN",
	  .aliases = xwn_deconv_aliases,
	  .summary = "Transposed convolution with XWN-transformed and pruned weights (DDesigner API "
	             "ConvTranspose1d/2d).",
	  .doc = "A transposed convolution with the parameters of the standard deconvolution, plus the "
	         "XWN set (see xwn_convolution). Its weights are input channels x output channels per "
	         "group x kernel; a slice is still the taps joining one input channel to one output "
	         "channel, and pruning compares the slices of each output channel.",
	  .inputs = image_input, .n_inputs = 1, .outputs = conv_output, .n_outputs = 1,
	  .params = deconv_params, .n_params = XWN_DECONV_SET + XWN_N_PARAMS,
	  .flags = ST_LAYER_ACTIVATION, .reshape = std_deconvolution_reshape },
	{ .name = "xwn_cascade_convolution", .display_name = "Cascade convolution", .category = "XWN",
	  .aliases = cascade_aliases,
	  .summary = "A large kernel as chained 3-tap XWN stages, concatenated, then a pointwise "
	             "convolution (DDesigner API CascadeConv1d/2d).",
	  .doc = "Stands for a kernel_size convolution at a fraction of its cost. kernel_size / 2 stages "
	         "of 3-tap (3 x 3 in 2-D) convolutions with stride 1, padding 1 and no bias are chained: "
	         "the first maps the input channels to mid_channels, the others mid to mid. The outputs of "
	         "all stages are concatenated along channels (first stage first), and a 1 x 1 convolution "
	         "maps them to num_output with the layer's stride, pads and bias. Every part is an XWN "
	         "convolution with the layer's XWN set. Its weights are named per part: "
	         "<layer>_stage0_weights.npy ... and <layer>_pointwise_weights.npy (and _pointwise_bias), "
	         "which are also the files of the parts when the layer is expanded.",
	  .inputs = image_input, .n_inputs = 1, .outputs = conv_output, .n_outputs = 1,
	  .params = cascade_params, .n_params = STD_COUNT(cascade_params),
	  .flags = ST_LAYER_ACTIVATION, .reshape = cascade_reshape },
};
const int xwn_layer_count = STD_COUNT(xwn_layers);

void
xwn_fill_tables(void)
{
	for (int i = 0; i < XWN_CONV_SET; i++)
		conv_params[i] = std_convolution_params[i];
	for (int i = 0; i < XWN_DECONV_SET; i++)
		deconv_params[i] = std_deconvolution_params[i];
	for (int i = 0; i < XWN_N_PARAMS; i++) {
		conv_params[XWN_CONV_SET + i] = xwn_set[i];
		deconv_params[XWN_DECONV_SET + i] = xwn_set[i];
	}
}

int
st_plugin_entry(const st_host_api *api, st_plugin_ctx *ctx)
{
	if (api->abi_version != ST_PLUGIN_ABI_VERSION)
		return -1;
	if (api->declare(ctx, &info) != 0)
		return -1;
	/* Transforms are redone when weights are bound again, which the host
	 * says through weights_generation from minor 2 on. */
	if (api->size < offsetof(st_host_api, abi_minor) + sizeof api->abi_minor || api->abi_minor < 2) {
		api->refuse(ctx, "the XWN collection needs a host of plugin ABI 2.2 or later");
		return -1;
	}
	xwn_fill_tables();
	for (int i = 0; i < xwn_layer_count; i++)
		api->register_layer(ctx, &xwn_layers[i]);
	for (int i = 0; i < xwn_impl_count; i++)
		api->register_impl(ctx, &xwn_impls[i]);
	xwn_register_blocks(api, ctx);
	return 0;
}
