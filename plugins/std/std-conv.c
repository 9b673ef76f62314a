/* Sliding-window layers: convolution, deconvolution, pooling and global pooling. */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>

#include "std.h"

/* Images are N x C followed by 1, 2 or 3 spatial axes. */
#define MAX_SPATIAL 3
#define LIST_TEXT 160

/* By enum std_padding_mode and enum std_pooling_mode (std.h). */
static const char *const padding_modes[] = { "explicit", "same", "same_lower", "valid", NULL };

static const char *const pooling_modes[] = { "max", "avg", NULL };

/* Where the window parameters sit in one type's parameter table. */
typedef struct window_params {
	int kernel, stride, dilation, padding, pads;
} window_params;

/* A sliding window over every spatial axis of one input, and what it gives. */
typedef struct window_geometry {
	int spatial; /* number of spatial axes */
	int64_t kernel[MAX_SPATIAL];
	int64_t stride[MAX_SPATIAL];
	int64_t dilation[MAX_SPATIAL];
	int64_t extent[MAX_SPATIAL]; /* (kernel - 1) * dilation + 1 input elements */
	int64_t pad_begin[MAX_SPATIAL];
	int64_t pad_end[MAX_SPATIAL];
	int64_t out[MAX_SPATIAL];
} window_geometry;

/* Writes a list parameter as "[3, 3]" for messages. */
static void
format_list(const st_value *v, char *buf, size_t size)
{
	size_t used = 0;
	for (int i = 0; i < v->count; i++) {
		int w = snprintf(buf + used, size - used, "%s%" PRId64, i ? ", " : "[", v->ints[i]);
		if (w < 0 || (size_t)w >= size - used)
			return;
		used += (size_t)w;
	}
	snprintf(buf + used, size - used, "%s]", v->count ? "" : "[");
}

/* Checks that the input is a floating-point N x C x spatial image and
 * returns its number of spatial axes, or -1 after reporting why not. */
static int
image_spatial_axes(st_reshape *r, const st_host_api *api, const st_shape *in)
{
	/* Messages are formatted only when needed: this runs for every layer. */
	char text[SHAPE_TEXT];
	if (in->rank < 3 || in->rank > 2 + MAX_SPATIAL) {
		api->shape_format(in, text, sizeof text);
		api->message(r, ST_SEVERITY_ERROR,
		             "input %s has rank %d, but %s needs an image N x C x W, N x C x H x W "
		             "or N x C x D x H x W (rank 3 to 5)",
		             text, in->rank, r->desc->name);
		return -1;
	}
	if (std_require_float(r, api, in) != 0)
		return -1;
	/* A window cannot be placed on an axis that has no elements. */
	for (int i = 2; i < in->rank; i++) {
		if (in->dims[i] < 1) {
			api->shape_format(in, text, sizeof text);
			api->message(r, ST_SEVERITY_ERROR, "input %s has an empty spatial axis %d", text, i - 2);
			return -1;
		}
	}
	return in->rank - 2;
}

/*
 * Expands a list parameter given either as one value for every spatial axis
 * or as one value per axis into out[0..spatial-1]. Values below minimum are
 * refused too, although the host already enforces the declared minimum, so
 * that a stride of 0 can never reach a division.
 */
static int
per_axis_values(st_reshape *r, const st_host_api *api, int param, int spatial, const st_shape *in,
                int64_t minimum, int64_t *out)
{
	const st_value *v = &r->params[param];
	const char *name = r->desc->params[param].name;
	char list[LIST_TEXT], text[SHAPE_TEXT];
	if (v->count != 1 && v->count != spatial) {
		format_list(v, list, sizeof list);
		api->shape_format(in, text, sizeof text);
		api->message(r, ST_SEVERITY_ERROR,
		             "%s %s has %d values, but input %s has %d spatial ax%s: give one value for "
		             "all axes or one per axis",
		             name, list, v->count, text, spatial, spatial == 1 ? "is" : "es");
		return -1;
	}
	for (int i = 0; i < spatial; i++) {
		out[i] = v->ints[v->count == 1 ? 0 : i];
		if (out[i] < minimum) {
			format_list(v, list, sizeof list);
			api->message(r, ST_SEVERITY_ERROR, "%s %s must hold values of at least %" PRId64, name,
			             list, minimum);
			return -1;
		}
	}
	return 0;
}

/* Reads explicit pads: one value for all sides, one per axis for both of its
 * sides, or all begins followed by all ends as ONNX orders them. */
static int
explicit_pads(st_reshape *r, const st_host_api *api, int param, const st_shape *in,
              window_geometry *g)
{
	const st_value *v = &r->params[param];
	int n = g->spatial;
	if (v->count != 1 && v->count != n && v->count != 2 * n) {
		char list[LIST_TEXT], text[SHAPE_TEXT];
		format_list(v, list, sizeof list);
		api->shape_format(in, text, sizeof text);
		api->message(r, ST_SEVERITY_ERROR,
		             "pads %s has %d values, but input %s has %d spatial ax%s: give 1, %d or %d "
		             "values (all begins, then all ends)",
		             list, v->count, text, n, n == 1 ? "is" : "es", n, 2 * n);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		if (v->count == 2 * n) {
			g->pad_begin[i] = v->ints[i];
			g->pad_end[i] = v->ints[n + i];
		} else {
			g->pad_begin[i] = g->pad_end[i] = v->ints[v->count == 1 ? 0 : i];
		}
		if (g->pad_begin[i] < 0 || g->pad_end[i] < 0) {
			api->message(r, ST_SEVERITY_ERROR, "pads must not be negative");
			return -1;
		}
	}
	return 0;
}

/*
 * Reads kernel, stride, dilation and (for explicit padding) pads for an
 * image input, and computes each window's extent. Returns -1 after reporting.
 */
static int
window_read(st_reshape *r, const st_host_api *api, const st_shape *in, const window_params *p,
            window_geometry *g)
{
	*g = (window_geometry){ 0 };
	g->spatial = image_spatial_axes(r, api, in);
	if (g->spatial < 0)
		return -1;
	if (per_axis_values(r, api, p->kernel, g->spatial, in, 1, g->kernel) != 0 ||
	    per_axis_values(r, api, p->stride, g->spatial, in, 1, g->stride) != 0 ||
	    per_axis_values(r, api, p->dilation, g->spatial, in, 1, g->dilation) != 0)
		return -1;
	int padding = (int)r->params[p->padding].i;
	if (padding == PADDING_EXPLICIT) {
		if (explicit_pads(r, api, p->pads, in, g) != 0)
			return -1;
	} else {
		/* The pads list does not apply; say so when it asks for padding. */
		const st_value *pads = &r->params[p->pads];
		for (int i = 0; i < pads->count; i++) {
			if (pads->ints[i] != 0) {
				char list[LIST_TEXT];
				format_list(pads, list, sizeof list);
				api->message(r, ST_SEVERITY_WARNING, "pads %s is ignored because padding is %s",
				             list, padding_modes[padding]);
				break;
			}
		}
	}
	for (int i = 0; i < g->spatial; i++) {
		g->extent[i] = std_add(std_mul(g->kernel[i] - 1, g->dilation[i]), 1);
		if (g->extent[i] < 0) {
			api->message(r, ST_SEVERITY_ERROR,
			             "kernel %" PRId64 " with dilation %" PRId64 " on spatial axis %d is too large",
			             g->kernel[i], g->dilation[i], i);
			return -1;
		}
	}
	return 0;
}

/*
 * Computes the output size of a sliding window (convolution or pooling) on
 * every spatial axis, filling the pads for the same and valid modes.
 * ceil_mode rounds the window count up as pooling may.
 */
static int
window_output_sizes(st_reshape *r, const st_host_api *api, const st_shape *in, int padding,
                    bool ceil_mode, window_geometry *g)
{
	for (int i = 0; i < g->spatial; i++) {
		int64_t size = in->dims[2 + i], stride = g->stride[i], extent = g->extent[i];
		if (padding == PADDING_SAME || padding == PADDING_SAME_LOWER) {
			/* ONNX SAME_UPPER and SAME_LOWER: ceil(size / stride) outputs, with
			 * just enough padding for the last window to fit. */
			int64_t out = size / stride + (size % stride != 0);
			int64_t needed = std_add((out - 1) * stride, extent);
			if (needed < 0) {
				api->message(r, ST_SEVERITY_ERROR, "the padding of spatial axis %d overflows", i);
				return -1;
			}
			int64_t total = needed > size ? needed - size : 0;
			int64_t smaller = total / 2, larger = total - smaller;
			g->pad_begin[i] = padding == PADDING_SAME ? smaller : larger;
			g->pad_end[i] = padding == PADDING_SAME ? larger : smaller;
			g->out[i] = out;
			continue;
		}
		if (padding == PADDING_VALID)
			g->pad_begin[i] = g->pad_end[i] = 0;
		int64_t padded = std_add(std_add(size, g->pad_begin[i]), g->pad_end[i]);
		if (padded < 0) {
			api->message(r, ST_SEVERITY_ERROR, "the padded size of spatial axis %d overflows", i);
			return -1;
		}
		if (extent > padded) {
			api->message(r, ST_SEVERITY_ERROR,
			             "on spatial axis %d the kernel %" PRId64 " with dilation %" PRId64
			             " spans %" PRId64 ", more than the padded input %" PRId64 " (size %" PRId64
			             " + pads %" PRId64 " and %" PRId64 "): the output would be empty",
			             i, g->kernel[i], g->dilation[i], extent, padded, size, g->pad_begin[i],
			             g->pad_end[i]);
			return -1;
		}
		int64_t span = padded - extent;
		int64_t out = span / stride + 1;
		if (ceil_mode) {
			if (span % stride != 0)
				out++;
			/* As in ONNX and PyTorch, a last window that would start in the
			 * right padding is dropped. An overflowing start lies there too. */
			int64_t start = std_mul(out - 1, stride);
			if (start < 0 || start >= size + g->pad_begin[i])
				out--;
		}
		g->out[i] = out;
	}
	return 0;
}

/* Checks that groups divides both channel counts; names the one it does not. */
static int
check_groups(st_reshape *r, const st_host_api *api, const st_shape *in, int64_t num_output, int64_t groups)
{
	char text[SHAPE_TEXT];
	if (groups < 1) {
		api->message(r, ST_SEVERITY_ERROR, "groups %" PRId64 " must be at least 1", groups);
		return -1;
	}
	if (in->dims[1] % groups != 0) {
		api->shape_format(in, text, sizeof text);
		api->message(r, ST_SEVERITY_ERROR,
		             "input %s has %" PRId64 " channels, which groups %" PRId64 " does not divide",
		             text, in->dims[1], groups);
		return -1;
	}
	if (num_output % groups != 0) {
		api->message(r, ST_SEVERITY_ERROR, "num_output %" PRId64 " is not divisible by groups %" PRId64,
		             num_output, groups);
		return -1;
	}
	return 0;
}

/* The output shape N x channels x out..., checked for size. */
static int
window_output_shape(st_reshape *r, const st_host_api *api, const st_shape *in, int64_t channels,
                    const window_geometry *g)
{
	st_shape *out = &r->outputs[0];
	out->dtype = in->dtype;
	out->rank = in->rank;
	out->dims[0] = in->dims[0];
	out->dims[1] = channels;
	for (int i = 0; i < g->spatial; i++)
		out->dims[2 + i] = g->out[i];
	return std_check_size(r, api, out, "output");
}

static double
product(const int64_t *values, int n)
{
	double p = 1;
	for (int i = 0; i < n; i++)
		p *= (double)values[i];
	return p;
}

/* ---- convolution ---- */

#define NUM_OUTPUT_PARAM(doc_text)                                                               \
	{ .name = "num_output", .kind = ST_PARAM_INT, .default_value = "1", .flags = ST_PARAM_HAS_MIN, \
	  .min = 1, .doc = doc_text }
#define KERNEL_PARAM(default_text)                                                               \
	{ .name = "kernel", .kind = ST_PARAM_DIMS, .default_value = default_text,                      \
	  .flags = ST_PARAM_HAS_MIN, .min = 1, .min_count = 1, .max_count = MAX_SPATIAL,               \
	  .doc = "Window size: one value for every spatial axis, or one per axis such as [3, 3]." }
#define STRIDE_PARAM(default_text)                                                               \
	{ .name = "stride", .kind = ST_PARAM_DIMS, .default_value = default_text,                      \
	  .flags = ST_PARAM_HAS_MIN, .min = 1, .min_count = 1, .max_count = MAX_SPATIAL,               \
	  .doc = "Step between neighbouring window positions: one value for every spatial axis, or "    \
	         "one per axis." }
#define PADDING_PARAM                                                                            \
	{ .name = "padding", .kind = ST_PARAM_ENUM, .default_value = "explicit",                       \
	  .enum_values = padding_modes,                                                                \
	  .doc = "How the input is padded: explicit uses pads; same gives ceil(size / stride) "        \
	         "outputs with any odd padding at the end, same_lower puts it at the beginning; "       \
	         "valid pads nothing." }
#define PADS_PARAM                                                                               \
	{ .name = "pads", .kind = ST_PARAM_DIMS, .default_value = "[0]", .flags = ST_PARAM_HAS_MIN,    \
	  .min = 0, .min_count = 1, .max_count = 2 * MAX_SPATIAL,                                      \
	  .doc = "Padding added in explicit mode: one value for all sides, one per axis for both "     \
	         "its sides, or all begins then all ends (ONNX order)." }
#define DILATION_PARAM                                                                           \
	{ .name = "dilation", .kind = ST_PARAM_DIMS, .default_value = "[1]", .flags = ST_PARAM_HAS_MIN, \
	  .min = 1, .min_count = 1, .max_count = MAX_SPATIAL,                                          \
	  .doc = "Spacing between the taps of the window; 1 is a dense window. One value for every "    \
	         "spatial axis, or one per axis." }

const st_param_desc std_convolution_params[] = {
	[CONV_NUM_OUTPUT] = NUM_OUTPUT_PARAM("Number of output channels, that is of filters learned."),
	[CONV_KERNEL] = KERNEL_PARAM("[3]"),
	[CONV_STRIDE] = STRIDE_PARAM("[1]"),
	[CONV_PADDING] = PADDING_PARAM,
	[CONV_PADS] = PADS_PARAM,
	[CONV_DILATION] = DILATION_PARAM,
	[CONV_GROUPS] = { .name = "groups", .kind = ST_PARAM_INT, .default_value = "1",
	                  .flags = ST_PARAM_HAS_MIN, .min = 1,
	                  .doc = "Number of channel groups: each group of outputs sees only its own group "
	                         "of inputs. Equal to the input channels for a depthwise convolution." },
	[CONV_BIAS] = { .name = "bias", .kind = ST_PARAM_BOOL, .default_value = "true",
	                .doc = "Whether a learned bias is added to every output channel." },
};

static const window_params convolution_window = {
	.kernel = CONV_KERNEL, .stride = CONV_STRIDE, .dilation = CONV_DILATION,
	.padding = CONV_PADDING, .pads = CONV_PADS,
};

int
std_convolution_reshape(st_reshape *r, const st_host_api *api)
{
	const st_shape *in = r->inputs[0];
	int64_t num_output = r->params[CONV_NUM_OUTPUT].i, groups = r->params[CONV_GROUPS].i;
	bool bias = r->params[CONV_BIAS].b;
	int padding = (int)r->params[CONV_PADDING].i;
	window_geometry g;
	if (window_read(r, api, in, &convolution_window, &g) != 0 ||
	    check_groups(r, api, in, num_output, groups) != 0 ||
	    window_output_sizes(r, api, in, padding, false, &g) != 0 ||
	    window_output_shape(r, api, in, num_output, &g) != 0)
		return -1;

	int64_t channels_per_group = in->dims[1] / groups;
	int64_t weight_dims[2 + MAX_SPATIAL] = { num_output, channels_per_group };
	for (int i = 0; i < g.spatial; i++)
		weight_dims[2 + i] = g.kernel[i];
	if (std_declare_weight(r, api, "weights", 2 + g.spatial, weight_dims) != 0)
		return -1;
	if (bias && std_declare_weight(r, api, "bias", 1, &num_output) != 0)
		return -1;

	double outputs = (double)in->dims[0] * (double)num_output * product(g.out, g.spatial);
	r->flops = 2.0 * outputs * (double)channels_per_group * product(g.kernel, g.spatial);
	if (bias)
		r->flops += outputs;
	return 0;
}

/* ---- deconvolution ---- */

const st_param_desc std_deconvolution_params[] = {
	[DECONV_NUM_OUTPUT] = NUM_OUTPUT_PARAM("Number of output channels."),
	[DECONV_KERNEL] = KERNEL_PARAM("[3]"),
	[DECONV_STRIDE] = STRIDE_PARAM("[1]"),
	[DECONV_PADDING] = { .name = "padding", .kind = ST_PARAM_ENUM, .default_value = "explicit",
	                     .enum_values = padding_modes,
	                     .doc = "How the output is cropped: explicit removes pads; same and same_lower "
	                            "give exactly size * stride outputs; valid removes nothing." },
	[DECONV_PADS] = { .name = "pads", .kind = ST_PARAM_DIMS, .default_value = "[0]",
	                  .flags = ST_PARAM_HAS_MIN, .min = 0, .min_count = 1, .max_count = 2 * MAX_SPATIAL,
	                  .doc = "Elements removed from the full output for explicit padding: one value for "
	                         "all sides, one per axis for both its sides, or all begins then all ends." },
	[DECONV_OUTPUT_PADDING] = { .name = "output_padding", .kind = ST_PARAM_DIMS, .default_value = "[0]",
	                            .flags = ST_PARAM_HAS_MIN, .min = 0, .min_count = 1,
	                            .max_count = MAX_SPATIAL,
	                            .doc = "Extra outputs added at the end of each spatial axis, to pick "
	                                   "one of the sizes a strided convolution maps to the same input "
	                                   "size. Each must be smaller than the stride or the dilation." },
	[DECONV_DILATION] = DILATION_PARAM,
	[DECONV_GROUPS] = { .name = "groups", .kind = ST_PARAM_INT, .default_value = "1",
	                    .flags = ST_PARAM_HAS_MIN, .min = 1,
	                    .doc = "Number of channel groups: each group of outputs is computed from its "
	                           "own group of inputs." },
	[DECONV_BIAS] = { .name = "bias", .kind = ST_PARAM_BOOL, .default_value = "true",
	                  .doc = "Whether a learned bias is added to every output channel." },
};

static const window_params deconvolution_window = {
	.kernel = DECONV_KERNEL, .stride = DECONV_STRIDE, .dilation = DECONV_DILATION,
	.padding = DECONV_PADDING, .pads = DECONV_PADS,
};

/*
 * Output sizes of a transposed convolution (ONNX ConvTranspose without
 * output_shape): stride * (size - 1) + output_padding + extent - pads, or
 * size * stride for the same modes.
 */
static int
transposed_output_sizes(st_reshape *r, const st_host_api *api, const st_shape *in, int padding,
                        const int64_t *output_padding, window_geometry *g)
{
	for (int i = 0; i < g->spatial; i++) {
		int64_t size = in->dims[2 + i], stride = g->stride[i];
		if (output_padding[i] >= stride && output_padding[i] >= g->dilation[i]) {
			api->message(r, ST_SEVERITY_ERROR,
			             "output_padding %" PRId64 " on spatial axis %d must be smaller than the "
			             "stride %" PRId64 " or the dilation %" PRId64,
			             output_padding[i], i, stride, g->dilation[i]);
			return -1;
		}
		if (padding == PADDING_SAME || padding == PADDING_SAME_LOWER) {
			g->out[i] = std_mul(size, stride);
			if (g->out[i] < 0) {
				api->message(r, ST_SEVERITY_ERROR, "the output size of spatial axis %d overflows", i);
				return -1;
			}
			/* When the kernel span and output_padding fall short of the
			 * stride, size * stride exceeds the computed result, which would
			 * need negative padding; ONNX Runtime gives the computed size. */
			if (g->extent[i] < stride && output_padding[i] < stride - g->extent[i]) {
				int64_t computed = g->out[i] - (stride - g->extent[i] - output_padding[i]);
				api->message(r, ST_SEVERITY_WARNING,
				             "on spatial axis %d the kernel span %" PRId64 " plus output_padding %" PRId64
				             " is smaller than the stride %" PRId64 ": padding %s gives %" PRId64
				             " outputs, more than the %" PRId64 " the deconvolution computes "
				             "(ONNX Runtime gives %" PRId64 ")",
				             i, g->extent[i], output_padding[i], stride, padding_modes[padding],
				             g->out[i], computed, computed);
			}
			continue;
		}
		if (padding == PADDING_VALID)
			g->pad_begin[i] = g->pad_end[i] = 0;
		int64_t full = std_add(std_add(std_mul(stride, size - 1), output_padding[i]), g->extent[i]);
		int64_t cropped = std_add(g->pad_begin[i], g->pad_end[i]);
		if (full < 0 || cropped < 0) {
			api->message(r, ST_SEVERITY_ERROR, "the output size of spatial axis %d overflows", i);
			return -1;
		}
		if (cropped >= full) {
			api->message(r, ST_SEVERITY_ERROR,
			             "on spatial axis %d pads %" PRId64 " and %" PRId64 " remove all %" PRId64
			             " elements of the full output: the output would be empty",
			             i, g->pad_begin[i], g->pad_end[i], full);
			return -1;
		}
		g->out[i] = full - cropped;
	}
	return 0;
}

int
std_deconvolution_reshape(st_reshape *r, const st_host_api *api)
{
	const st_shape *in = r->inputs[0];
	int64_t num_output = r->params[DECONV_NUM_OUTPUT].i, groups = r->params[DECONV_GROUPS].i;
	bool bias = r->params[DECONV_BIAS].b;
	int padding = (int)r->params[DECONV_PADDING].i;
	int64_t output_padding[MAX_SPATIAL];
	window_geometry g;
	if (window_read(r, api, in, &deconvolution_window, &g) != 0 ||
	    per_axis_values(r, api, DECONV_OUTPUT_PADDING, g.spatial, in, 0, output_padding) != 0 ||
	    check_groups(r, api, in, num_output, groups) != 0 ||
	    transposed_output_sizes(r, api, in, padding, output_padding, &g) != 0 ||
	    window_output_shape(r, api, in, num_output, &g) != 0)
		return -1;

	/* ONNX ConvTranspose keeps the input channels first in its weights. */
	int64_t outputs_per_group = num_output / groups;
	int64_t weight_dims[2 + MAX_SPATIAL] = { in->dims[1], outputs_per_group };
	for (int i = 0; i < g.spatial; i++)
		weight_dims[2 + i] = g.kernel[i];
	if (std_declare_weight(r, api, "weights", 2 + g.spatial, weight_dims) != 0)
		return -1;
	if (bias && std_declare_weight(r, api, "bias", 1, &num_output) != 0)
		return -1;

	/* Every input element is scattered through the kernel of each output
	 * channel of its group. */
	double inputs = (double)in->dims[0] * (double)in->dims[1] * product(in->dims + 2, g.spatial);
	r->flops = 2.0 * inputs * (double)outputs_per_group * product(g.kernel, g.spatial);
	if (bias)
		r->flops += (double)in->dims[0] * (double)num_output * product(g.out, g.spatial);
	return 0;
}

/* ---- pooling ---- */

static const st_param_desc pooling_params[] = {
	[POOL_MODE] = { .name = "mode", .kind = ST_PARAM_ENUM, .default_value = "max",
	                .enum_values = pooling_modes,
	                .doc = "What a window gives: its largest element (max) or its mean (avg)." },
	[POOL_KERNEL] = KERNEL_PARAM("[2]"),
	[POOL_STRIDE] = STRIDE_PARAM("[2]"),
	[POOL_PADDING] = PADDING_PARAM,
	[POOL_PADS] = PADS_PARAM,
	[POOL_DILATION] = DILATION_PARAM,
	[POOL_CEIL_MODE] = { .name = "ceil_mode", .kind = ST_PARAM_BOOL, .default_value = "false",
	                     .doc = "Round the number of windows up instead of down, so that a partial "
	                            "last window is kept when it starts inside the input or left padding." },
	[POOL_COUNT_INCLUDE_PAD] = { .name = "count_include_pad", .kind = ST_PARAM_BOOL,
	                             .default_value = "false",
	                             .doc = "For avg: divide by the whole window, padding included, instead "
	                                    "of by the input elements it covers. Shapes do not change." },
};

static const window_params pooling_window = {
	.kernel = POOL_KERNEL, .stride = POOL_STRIDE, .dilation = POOL_DILATION,
	.padding = POOL_PADDING, .pads = POOL_PADS,
};

static int
pooling_reshape(st_reshape *r, const st_host_api *api)
{
	const st_shape *in = r->inputs[0];
	int padding = (int)r->params[POOL_PADDING].i;
	window_geometry g;
	if (window_read(r, api, in, &pooling_window, &g) != 0 ||
	    window_output_sizes(r, api, in, padding, r->params[POOL_CEIL_MODE].b, &g) != 0 ||
	    window_output_shape(r, api, in, in->dims[1], &g) != 0)
		return -1;
	r->flops = (double)in->dims[0] * (double)in->dims[1] * product(g.out, g.spatial) *
	           product(g.kernel, g.spatial);
	return 0;
}

/* ---- global pooling ---- */

static const st_param_desc global_pooling_params[] = {
	[GLOBAL_POOL_MODE] = { .name = "mode", .kind = ST_PARAM_ENUM, .default_value = "avg",
	                       .enum_values = pooling_modes,
	                       .doc = "What each channel gives: the largest element (max) or the mean (avg) "
	                              "over all its spatial positions." },
};

static int
global_pooling_reshape(st_reshape *r, const st_host_api *api)
{
	const st_shape *in = r->inputs[0];
	int spatial = image_spatial_axes(r, api, in);
	if (spatial < 0)
		return -1;
	st_shape *out = &r->outputs[0];
	*out = *in;
	for (int i = 0; i < spatial; i++)
		out->dims[2 + i] = 1;
	r->flops = (double)in->dims[0] * (double)in->dims[1] * product(in->dims + 2, spatial);
	return 0;
}

/* ---- the table ---- */

static const st_port_desc image_input[] = {
	{ "input", 0, "An image N x C x W, N x C x H x W or N x C x D x H x W, float32 or float16." },
};
static const st_port_desc convolution_output[] = {
	{ "output", 0, "N x num_output x the output spatial sizes, of the input's type." },
};
static const st_port_desc pooling_output[] = {
	{ "output", 0, "N x C x the output spatial sizes, of the input's type." },
};
static const st_port_desc global_pooling_output[] = {
	{ "output", 0, "N x C x 1 x ... x 1, with the input's rank and type." },
};

static const char *const convolution_aliases[] = { "conv", NULL };
static const char *const deconvolution_aliases[] = { "deconv", "conv_transpose", NULL };
static const char *const pooling_aliases[] = { "pool", NULL };
static const char *const global_pooling_aliases[] = { "gpool", NULL };

const st_layer_desc std_conv_layers[] = {
	{ .name = "convolution", .display_name = "Convolution", .category = "General",
	  .aliases = convolution_aliases,
	  .summary = "1-D, 2-D or 3-D convolution with stride, padding, dilation and groups (ONNX Conv).",
	  .inputs = image_input, .n_inputs = 1, .outputs = convolution_output, .n_outputs = 1,
	  .params = std_convolution_params, .n_params = STD_COUNT(std_convolution_params),
	  .flags = ST_LAYER_ACTIVATION, .reshape = std_convolution_reshape },
	{ .name = "deconvolution", .display_name = "Deconvolution", .category = "General",
	  .aliases = deconvolution_aliases,
	  .summary = "Transposed convolution that upsamples by its stride (ONNX ConvTranspose).",
	  .inputs = image_input, .n_inputs = 1, .outputs = convolution_output, .n_outputs = 1,
	  .params = std_deconvolution_params, .n_params = STD_COUNT(std_deconvolution_params),
	  .flags = ST_LAYER_ACTIVATION, .reshape = std_deconvolution_reshape },
	{ .name = "pooling", .display_name = "Pooling", .category = "Pooling", .aliases = pooling_aliases,
	  .summary = "Max or average over sliding windows (ONNX MaxPool, AveragePool).",
	  .inputs = image_input, .n_inputs = 1, .outputs = pooling_output, .n_outputs = 1,
	  .params = pooling_params, .n_params = STD_COUNT(pooling_params), .reshape = pooling_reshape },
	{ .name = "global_pooling", .display_name = "Global pooling", .category = "Pooling",
	  .aliases = global_pooling_aliases,
	  .summary = "Max or average over all spatial positions of each channel (ONNX GlobalMaxPool, "
	             "GlobalAveragePool).",
	  .inputs = image_input, .n_inputs = 1, .outputs = global_pooling_output, .n_outputs = 1,
	  .params = global_pooling_params, .n_params = STD_COUNT(global_pooling_params),
	  .reshape = global_pooling_reshape },
};
const int std_conv_layer_count = STD_COUNT(std_conv_layers);
