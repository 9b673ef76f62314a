/* The analysis collection's entry point and layer descriptors: parameters,
 * terminals, shapes. Runtime options never change a shape, so no reshape
 * here reads one. */
#include "config.h"

#include "analysis.h"

const uint32_t st_plugin_abi = ST_PLUGIN_ABI_VERSION;

static const st_plugin_info info = {
	.name = "analysis",
	.author = "The Strata developers",
	.description = "Layers for looking inside a network while it runs: channel selection, "
	               "normalisation, thresholds, colour maps, differences and statistics, "
	               "steered by runtime options.",
	.version = PACKAGE_VERSION,
};

#define RUNTIME ST_PARAM_RUNTIME

/* ---- shared shape rules ---- */

static int
require_float(st_reshape *r, const st_host_api *api, const st_shape *s, const char *what)
{
	if (s->dtype == ST_DTYPE_FLOAT32 || s->dtype == ST_DTYPE_FLOAT16)
		return 0;
	api->message(r, ST_SEVERITY_ERROR, "%s needs a float tensor (float32 or float16) as %s, not %s",
	             r->desc->name, what, api->dtype_name(s->dtype));
	return -1;
}

/* Layers that look at channels need N x C x ... */
static int
require_channels(st_reshape *r, const st_host_api *api, const st_shape *s)
{
	if (s->rank >= 2)
		return 0;
	api->message(r, ST_SEVERITY_ERROR,
	             "%s needs a tensor with a channel axis (rank 2 or more: N x C x ...), not rank %d",
	             r->desc->name, s->rank);
	return -1;
}

static double
elements(const st_host_api *api, const st_shape *s)
{
	int64_t n = api->shape_elements(s);
	return n > 0 ? (double)n : 0;
}

/* Output 0 is input 0, for the layers that compute element by element. */
static int
same_shape_reshape(st_reshape *r, const st_host_api *api, double flops_per_element)
{
	const st_shape *in = r->inputs[0];
	if (require_float(r, api, in, "input") != 0)
		return -1;
	r->outputs[0] = *in;
	r->flops = flops_per_element * elements(api, in);
	return 0;
}

/* ---- channel_select ---- */

static const st_param_desc select_params[] = {
	[SELECT_FIRST] = { .name = "first", .kind = ST_PARAM_INT, .default_value = "0",
	                   .flags = RUNTIME | ST_PARAM_HAS_MIN, .min = 0,
	                   .doc = "The first channel passed on (runtime option); past the end it is "
	                          "moved back so that count channels still fit." },
	[SELECT_COUNT] = { .name = "count", .kind = ST_PARAM_INT, .default_value = "1",
	                   .flags = ST_PARAM_HAS_MIN, .min = 1,
	                   .doc = "How many consecutive channels are passed on; it sets the output "
	                          "shape, so it is not a runtime option." },
};

static int
select_reshape(st_reshape *r, const st_host_api *api)
{
	const st_shape *in = r->inputs[0];
	if (require_float(r, api, in, "input") != 0 || require_channels(r, api, in) != 0)
		return -1;
	int64_t count = r->params[SELECT_COUNT].i;
	if (count > in->dims[1]) {
		api->message(r, ST_SEVERITY_ERROR, "count %lld is more than the input's %lld channels",
		             (long long)count, (long long)in->dims[1]);
		return -1;
	}
	r->outputs[0] = *in;
	r->outputs[0].dims[1] = count;
	return 0;
}

/* ---- normalize ---- */

static const char *const normalize_modes[] = { "min_max", "mean_std", "scale_shift", NULL };
static const char *const normalize_over[] = { "tensor", "channel", NULL };

static const st_param_desc normalize_params[] = {
	[NORMALIZE_MODE] = { .name = "mode", .kind = ST_PARAM_ENUM, .default_value = "min_max",
	                     .flags = RUNTIME, .enum_values = normalize_modes,
	                     .doc = "min_max maps the smallest value to 0 and the largest to 1; "
	                            "mean_std subtracts the mean and divides by the standard "
	                            "deviation; scale_shift computes x·scale + shift (runtime option)." },
	[NORMALIZE_OVER] = { .name = "over", .kind = ST_PARAM_ENUM, .default_value = "channel",
	                     .flags = RUNTIME, .enum_values = normalize_over,
	                     .doc = "Where min_max and mean_std take their statistics: each channel "
	                            "of each sample on its own, or each sample as a whole (runtime "
	                            "option)." },
	[NORMALIZE_SCALE] = { .name = "scale", .kind = ST_PARAM_FLOAT, .default_value = "1",
	                      .flags = RUNTIME | ST_PARAM_HAS_MIN | ST_PARAM_HAS_MAX, .min = -100,
	                      .max = 100, .doc = "The factor of scale_shift (runtime option)." },
	[NORMALIZE_SHIFT] = { .name = "shift", .kind = ST_PARAM_FLOAT, .default_value = "0",
	                      .flags = RUNTIME | ST_PARAM_HAS_MIN | ST_PARAM_HAS_MAX, .min = -100,
	                      .max = 100, .doc = "The offset of scale_shift (runtime option)." },
};

static int
normalize_reshape(st_reshape *r, const st_host_api *api)
{
	return same_shape_reshape(r, api, 4);
}

/* ---- threshold ---- */

static const char *const threshold_modes[] = { "binary", "to_zero", NULL };

static const st_param_desc threshold_params[] = {
	[THRESHOLD_LEVEL] = { .name = "level", .kind = ST_PARAM_FLOAT, .default_value = "0.5",
	                      .flags = RUNTIME | ST_PARAM_HAS_MIN | ST_PARAM_HAS_MAX, .min = -10,
	                      .max = 10, .doc = "Values above the level pass the test (runtime option)." },
	[THRESHOLD_MODE] = { .name = "mode", .kind = ST_PARAM_ENUM, .default_value = "binary",
	                     .flags = RUNTIME, .enum_values = threshold_modes,
	                     .doc = "binary gives 1 where a value passes and 0 elsewhere; to_zero keeps "
	                            "a passing value and gives 0 elsewhere (runtime option)." },
	[THRESHOLD_INVERT] = { .name = "invert", .kind = ST_PARAM_BOOL, .default_value = "false",
	                       .flags = RUNTIME,
	                       .doc = "Swaps the two sides: values at or below the level pass instead "
	                              "(runtime option)." },
};

static int
threshold_reshape(st_reshape *r, const st_host_api *api)
{
	return same_shape_reshape(r, api, 1);
}

/* ---- colormap ---- */

/* In the order of the host's maps (ST_HOST_COLORMAP_*), so a value's index
 * is the host's map number. */
static const char *const colormap_maps[] = { "gray", "viridis", "heat", "diverging", NULL };

static const st_param_desc colormap_params[] = {
	[COLORMAP_MAP] = { .name = "map", .kind = ST_PARAM_ENUM, .default_value = "viridis",
	                   .flags = RUNTIME, .enum_values = colormap_maps,
	                   .doc = "The colour map, as the channel inspector draws: gray, viridis, heat, "
	                          "or diverging (blue below the middle, red above) (runtime option)." },
	[COLORMAP_LOW] = { .name = "low", .kind = ST_PARAM_FLOAT, .default_value = "0",
	                   .flags = RUNTIME | ST_PARAM_HAS_MIN | ST_PARAM_HAS_MAX, .min = -100, .max = 100,
	                   .doc = "The value drawn with the map's first colour (runtime option)." },
	[COLORMAP_HIGH] = { .name = "high", .kind = ST_PARAM_FLOAT, .default_value = "1",
	                    .flags = RUNTIME | ST_PARAM_HAS_MIN | ST_PARAM_HAS_MAX, .min = -100, .max = 100,
	                    .doc = "The value drawn with the map's last colour (runtime option)." },
	[COLORMAP_AUTO_RANGE] = { .name = "auto_range", .kind = ST_PARAM_BOOL, .default_value = "false",
	                          .flags = RUNTIME,
	                          .doc = "Takes low and high from each sample's own smallest and largest "
	                                 "value instead (for diverging: -m and m, m the largest "
	                                 "magnitude) (runtime option)." },
};

static int
colormap_reshape(st_reshape *r, const st_host_api *api)
{
	const st_shape *in = r->inputs[0];
	if (require_float(r, api, in, "input") != 0 || require_channels(r, api, in) != 0)
		return -1;
	if (in->dims[1] != 1) {
		api->message(r, ST_SEVERITY_ERROR,
		             "colormap takes one channel, but its input has %lld; put a channel_select "
		             "before it",
		             (long long)in->dims[1]);
		return -1;
	}
	r->outputs[0] = *in;
	r->outputs[0].dims[1] = 3;
	r->flops = 8 * elements(api, in);
	return 0;
}

/* ---- difference ---- */

static const char *const difference_modes[] = { "abs", "signed", "squared", NULL };

static const st_param_desc difference_params[] = {
	[DIFFERENCE_MODE] = { .name = "mode", .kind = ST_PARAM_ENUM, .default_value = "abs",
	                      .flags = RUNTIME, .enum_values = difference_modes,
	                      .doc = "abs gives |a − b|, signed gives a − b, squared gives (a − b)² "
	                             "(runtime option)." },
};

static int
difference_reshape(st_reshape *r, const st_host_api *api)
{
	const st_shape *a = r->inputs[0], *b = r->inputs[1];
	if (require_float(r, api, a, "input a") != 0 || require_float(r, api, b, "input b") != 0)
		return -1;
	bool same = a->rank == b->rank && a->dtype == b->dtype;
	for (int k = 0; same && k < a->rank; k++)
		same = a->dims[k] == b->dims[k];
	if (!same) {
		char ta[200], tb[200];
		api->shape_format(a, ta, sizeof ta);
		api->shape_format(b, tb, sizeof tb);
		api->message(r, ST_SEVERITY_ERROR,
		             "inputs a (%s %s) and b (%s %s) must have the same shape and dtype", ta,
		             api->dtype_name(a->dtype), tb, api->dtype_name(b->dtype));
		return -1;
	}
	r->outputs[0] = *a;
	r->flops = 2 * elements(api, a);
	return 0;
}

/* ---- statistics ---- */

static const st_param_desc statistics_params[] = {
	[STATISTICS_RESET] = { .name = "reset", .kind = ST_PARAM_BOOL, .default_value = "false",
	                       .flags = ST_PARAM_RUNTIME | ST_PARAM_TRIGGER,
	                       .doc = "A button: forgets the runs counted so far, starting again from "
	                              "the next one." },
	[STATISTICS_NOTE] = { .name = "note", .kind = ST_PARAM_STRING,
	                      .default_value = "Status: this run's values; 'runs' counts since the last reset.",
	                      .flags = ST_PARAM_RUNTIME | ST_PARAM_LABEL,
	                      .doc = "A label the editor shows beside the options: how to read the "
	                             "status line." },
};

static int
statistics_reshape(st_reshape *r, const st_host_api *api)
{
	return same_shape_reshape(r, api, 3);
}

/* ---- the table ---- */

static const st_port_desc one_input[] = { { "input", 0, "The tensor to look at." } };
static const st_port_desc difference_inputs[] = {
	{ "a", 0, "The first tensor." },
	{ "b", 0, "The tensor subtracted from a, of a's shape." },
};
static const st_port_desc select_outputs[] = { { "output", 0, "The chosen channels, count of them." } };
static const st_port_desc normalize_outputs[] = { { "output", 0, "The normalised tensor, of the input's shape." } };
static const st_port_desc threshold_outputs[] = { { "output", 0, "The thresholded tensor, of the input's shape." } };
static const st_port_desc colormap_outputs[] = { { "output", 0, "Three channels: red, green and blue, 0 to 1." } };
static const st_port_desc difference_outputs[] = { { "output", 0, "The difference, of the inputs' shape." } };
static const st_port_desc statistics_outputs[] = { { "output", 0, "The input, unchanged." } };

static const char *const select_aliases[] = { "channels", NULL };
static const char *const normalize_aliases[] = { "norm", NULL };
static const char *const colormap_aliases[] = { "heatmap", NULL };
static const char *const difference_aliases[] = { "diff", NULL };
static const char *const statistics_aliases[] = { "stats", NULL };

#define CATEGORY "Analysis"

const st_layer_desc analysis_layers[] = {
	{ .name = "channel_select", .display_name = "Channel select", .category = CATEGORY,
	  .aliases = select_aliases, .summary = "Passes on count channels from a chosen first one.",
	  .doc = "Picks count consecutive channels of an N x C x ... tensor, starting at first. "
	         "first is a runtime option, so stepping through the channels needs no re-plan.",
	  .inputs = one_input, .n_inputs = 1, .outputs = select_outputs, .n_outputs = 1,
	  .params = select_params, .n_params = ANALYSIS_COUNT(select_params), .reshape = select_reshape },
	{ .name = "normalize", .display_name = "Normalize", .category = CATEGORY,
	  .aliases = normalize_aliases, .summary = "Rescales values: min-max to [0, 1], mean-std, or scale and shift.",
	  .doc = "Brings values into a range worth looking at: min_max to [0, 1], mean_std to zero "
	         "mean and unit deviation (per channel or per sample), or x·scale + shift.",
	  .inputs = one_input, .n_inputs = 1, .outputs = normalize_outputs, .n_outputs = 1,
	  .params = normalize_params, .n_params = ANALYSIS_COUNT(normalize_params),
	  .reshape = normalize_reshape },
	{ .name = "threshold", .display_name = "Threshold", .category = CATEGORY,
	  .summary = "Compares every value with a level: a mask, or the values above it.",
	  .doc = "Keeps what lies above a level: as a 0/1 mask (binary) or as the values themselves "
	         "with zero elsewhere (to_zero); invert keeps what lies at or below it instead.",
	  .inputs = one_input, .n_inputs = 1, .outputs = threshold_outputs, .n_outputs = 1,
	  .params = threshold_params, .n_params = ANALYSIS_COUNT(threshold_params),
	  .reshape = threshold_reshape },
	{ .name = "colormap", .display_name = "Colour map", .category = CATEGORY,
	  .aliases = colormap_aliases, .summary = "One channel in, three (RGB) out, through a colour map.",
	  .doc = "Draws a one-channel tensor in colour: each value is placed between low and high "
	         "and looked up in the colour map, giving red, green and blue channels from 0 to 1.",
	  .inputs = one_input, .n_inputs = 1, .outputs = colormap_outputs, .n_outputs = 1,
	  .params = colormap_params, .n_params = ANALYSIS_COUNT(colormap_params),
	  .reshape = colormap_reshape },
	{ .name = "difference", .display_name = "Difference", .category = CATEGORY,
	  .aliases = difference_aliases, .summary = "a − b of two same-shaped tensors: absolute, signed or squared.",
	  .doc = "Shows where two tensors differ (two branches, a layer before and after a change): "
	         "|a − b|, a − b or (a − b)², element by element.",
	  .inputs = difference_inputs, .n_inputs = 2, .outputs = difference_outputs, .n_outputs = 1,
	  .params = difference_params, .n_params = ANALYSIS_COUNT(difference_params),
	  .reshape = difference_reshape },
	{ .name = "statistics", .display_name = "Statistics", .category = CATEGORY,
	  .aliases = statistics_aliases, .summary = "Passes its input on and reports min, max, mean, std and NaNs.",
	  .doc = "Passes its input on unchanged and, after every run, reports the input's smallest "
	         "and largest value, mean, standard deviation and count of NaN and infinite values "
	         "as the layer's status line, with the runs counted since the last reset.",
	  .inputs = one_input, .n_inputs = 1, .outputs = statistics_outputs, .n_outputs = 1,
	  .params = statistics_params, .n_params = ANALYSIS_COUNT(statistics_params),
	  .reshape = statistics_reshape },
};
const int analysis_layer_count = ANALYSIS_COUNT(analysis_layers);

int
st_plugin_entry(const st_host_api *api, st_plugin_ctx *ctx)
{
	if (api->abi_version != ST_PLUGIN_ABI_VERSION)
		return -1;
	if (api->declare(ctx, &info) != 0)
		return -1;
	/* Runtime options, status lines and colour maps came with ABI 2.1. */
	if (!ST_HOST_HAS(api, status) || !ST_HOST_HAS(api, colormap_rgb)) {
		api->refuse(ctx, "needs plugin ABI 2.1 (runtime options and status lines); this Strata is older");
		return -1;
	}
	for (int i = 0; i < analysis_layer_count; i++)
		api->register_layer(ctx, &analysis_layers[i]);
	for (int i = 0; i < analysis_impl_count; i++)
		api->register_impl(ctx, &analysis_impls[i]);
	return 0;
}
