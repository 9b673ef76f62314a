/* The XWN collection's blocks (the DDesigner API's ConvBlock, TConvBlock,
 * CascadeConvBlock and FCBlock) and the expansion of a cascade convolution
 * into its parts (plugin ABI 2.3). */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "xwn.h"

/* ---- the cascade's expansion ---- */

/* A list parameter as `set` reads it: "[1, 2]". */
static void
dims_text(const st_value *v, char *buf, size_t size)
{
	size_t used = 0;
	used += (size_t)snprintf(buf, size, "[");
	for (int i = 0; i < v->count && used < size; i++)
		used += (size_t)snprintf(buf + used, size - used, "%s%" PRId64, i ? ", " : "", v->ints[i]);
	if (used < size)
		snprintf(buf + used, size - used, "]");
}

/* Sets the XWN set of a part from the cascade's own (they share it); values
 * at the set's defaults are left to them, so the model stays short. */
static void
set_xwn(st_expansion *e, const st_host_api *api, const char *part, const st_value *params)
{
	const st_value *x = params + CASCADE_XWN_SET;
	/* XWN_SET's defaults (xwn.c). */
	const struct {
		bool transform, pruning;
		int64_t bit;
		double max_scale, prun_weight;
	} d = { false, false, 4, 4.0, 0.5 };
	char text[64];
	if (x[XWN_USE_TRANSFORM].b != d.transform)
		api->expand_set(e, part, "use_transform", x[XWN_USE_TRANSFORM].b ? "true" : "false");
	if (x[XWN_BIT].i != d.bit) {
		snprintf(text, sizeof text, "%" PRId64, x[XWN_BIT].i);
		api->expand_set(e, part, "bit", text);
	}
	if (x[XWN_MAX_SCALE].f != d.max_scale) {
		snprintf(text, sizeof text, "%.17g", x[XWN_MAX_SCALE].f);
		api->expand_set(e, part, "max_scale", text);
	}
	if (x[XWN_USE_PRUNING].b != d.pruning)
		api->expand_set(e, part, "use_pruning", x[XWN_USE_PRUNING].b ? "true" : "false");
	if (x[XWN_PRUN_WEIGHT].f != d.prun_weight) {
		snprintf(text, sizeof text, "%.17g", x[XWN_PRUN_WEIGHT].f);
		api->expand_set(e, part, "prun_weight", text);
	}
}

/*
 * stage0 ... stage<n-1> (3-tap XWN convolutions, stride 1, pad 1, no bias,
 * chained), concat (their outputs along channels; left out for one stage)
 * and pointwise (the 1 x 1 XWN convolution with the layer's stride, pads
 * and bias). Part names follow the cascade's weight names, so the parts
 * read the files the layer read.
 */
static int
cascade_expand(st_expansion *e, const st_host_api *api)
{
	const st_value *p = e->params;
	int64_t kernel_size = p[CASCADE_KERNEL_SIZE].i;
	if (kernel_size < 3) {
		api->expand_fail(e, "kernel_size %" PRId64 " is below 3, so there is no stage to expand into",
		                 kernel_size);
		return -1;
	}
	int n = xwn_cascade_stages(kernel_size);
	const st_shape *in = e->n_inputs > 0 ? e->inputs[0] : NULL;
	int64_t mid = p[CASCADE_MID_CHANNELS].i;
	if (mid <= 0) {
		if (in == NULL || in->rank < 2) {
			api->expand_fail(e,
			                 "the stages' channels come from the input's (mid_channels is 0), and the "
			                 "input shape of '%s' is not known: link its input, or set mid_channels",
			                 e->layer_name);
			return -1;
		}
		mid = xwn_cascade_mid(p, in->dims[1]);
		if (mid < 1) {
			api->expand_fail(e,
			                 "the stages would have no channels (%" PRId64 " input channels times "
			                 "channel_ratio %g); set mid_channels",
			                 in->dims[1], p[CASCADE_CHANNEL_RATIO].f);
			return -1;
		}
	}
	char text[160], part[32], previous[32];
	for (int j = 0; j < n; j++) {
		snprintf(part, sizeof part, "stage%d", j);
		api->expand_part(e, part, "xwn_convolution", 0, j);
		snprintf(text, sizeof text, "%" PRId64, mid);
		api->expand_set(e, part, "num_output", text);
		api->expand_set(e, part, "kernel", "3");
		api->expand_set(e, part, "stride", "1");
		api->expand_set(e, part, "pads", "1");
		api->expand_set(e, part, "bias", "false");
		set_xwn(e, api, part, p);
		api->expand_link(e, part, 0, j == 0 ? NULL : previous, 0);
		snprintf(previous, sizeof previous, "%s", part);
	}
	const char *into_pointwise = "stage0";
	if (n > 1) {
		api->expand_part(e, "concat", "concatenation", 0, n);
		api->expand_set(e, "concat", "axis", "1");
		for (int j = 0; j < n; j++) {
			snprintf(part, sizeof part, "stage%d", j);
			api->expand_link(e, "concat", j, part, 0);
		}
		into_pointwise = "concat";
	}
	int row = n > 1 ? n + 1 : n;
	api->expand_part(e, "pointwise", "xwn_convolution", 0, row);
	snprintf(text, sizeof text, "%" PRId64, p[CASCADE_NUM_OUTPUT].i);
	api->expand_set(e, "pointwise", "num_output", text);
	api->expand_set(e, "pointwise", "kernel", "1");
	dims_text(&p[CASCADE_STRIDE], text, sizeof text);
	api->expand_set(e, "pointwise", "stride", text);
	dims_text(&p[CASCADE_PADS], text, sizeof text);
	api->expand_set(e, "pointwise", "pads", text);
	api->expand_set(e, "pointwise", "bias", p[CASCADE_BIAS].b ? "true" : "false");
	set_xwn(e, api, "pointwise", p);
	api->expand_link(e, "pointwise", 0, into_pointwise, 0);
	return api->expand_output(e, "pointwise", 0);
}

/* ---- blocks ----
 *
 * Each is CONV + BN + ACT + DROPOUT in the API's default order. The conv
 * part carries the XWN set, so a block's transform=, pruning= and
 * max_scale= reach it. As in the API, the conv has no bias by default
 * (use_bias=False); everything else keeps its layer type's defaults. */

static const char *const conv1d_defaults[] = { "kernel", "[3]", "bias", "false", NULL };
static const char *const conv2d_defaults[] = { "kernel", "[3, 3]", "bias", "false", NULL };
static const char *const tconv2d_defaults[] = { "kernel", "[3, 3]", "bias", "false", NULL };
static const char *const no_bias[] = { "bias", "false", NULL };

#define BN_PART \
	{ .role = "bn", .layer_type = "batch_normalization", .doc = "Batch normalisation of the conv's output." }
#define ACT_PART                                                                                   \
	{ .role = "act", .layer_type = "identity", .activation = "relu",                              \
	  .doc = "The activation, attached to an identity layer (activation=TYPE changes it)." }
#define DROPOUT_PART \
	{ .role = "dropout", .layer_type = "dropout", .doc = "Dropout; passes its input on at inference." }

static const st_block_part conv1d_parts[] = {
	{ .role = "conv", .layer_type = "xwn_convolution", .params = conv1d_defaults,
	  .doc = "The 1-D XWN convolution." },
	BN_PART, ACT_PART, DROPOUT_PART,
};
static const st_block_part conv2d_parts[] = {
	{ .role = "conv", .layer_type = "xwn_convolution", .params = conv2d_defaults,
	  .doc = "The 2-D XWN convolution." },
	BN_PART, ACT_PART, DROPOUT_PART,
};
static const st_block_part tconv2d_parts[] = {
	{ .role = "tconv", .layer_type = "xwn_deconvolution", .params = tconv2d_defaults,
	  .doc = "The 2-D XWN transposed convolution." },
	BN_PART, ACT_PART, DROPOUT_PART,
};
static const st_block_part cascade_parts[] = {
	{ .role = "cascade", .layer_type = "xwn_cascade_convolution",
	  .doc = "The cascade convolution (it can be expanded in turn)." },
	BN_PART, ACT_PART, DROPOUT_PART,
};
static const st_block_part fc_parts[] = {
	{ .role = "fc", .layer_type = "fully_connected", .params = no_bias,
	  .doc = "A plain fully connected layer (no XWN: the API reserves it)." },
	BN_PART, ACT_PART, DROPOUT_PART,
};

static const char *const conv_order[] = { "conv", "bn", "act", "dropout", NULL };
static const char *const tconv_order[] = { "tconv", "bn", "act", "dropout", NULL };
static const char *const cascade_order[] = { "cascade", "bn", "act", "dropout", NULL };
static const char *const fc_order[] = { "fc", "bn", "act", "dropout", NULL };

static const char *const conv1d_aliases[] = { "conv1d_block", NULL };
static const char *const conv2d_aliases[] = { "conv2d_block", NULL };
static const char *const tconv2d_aliases[] = { "tconv2d_block", NULL };
static const char *const cascade1d_aliases[] = { "cascade_conv_block_1d", "cascade_conv1d_block", NULL };
static const char *const cascade2d_aliases[] = { "cascade_conv_block_2d", "cascade_conv2d_block", NULL };
static const char *const fc_aliases[] = { "dense_block", NULL };

#define BLOCK_DOC                                                                                  \
	" The parts are chained in the order given (order=conv,bn,act,dropout by default; leave a "  \
	"role out to leave its part out). transform=N, pruning=F and max_scale=S reach the "           \
	"convolution's XWN set; activation=TYPE the activation."

static const st_block_desc xwn_blocks[] = {
	{ .name = "conv_block_1d", .display_name = "Conv1DBlock", .aliases = conv1d_aliases,
	  .summary = "1-D XWN convolution + batch normalisation + activation + dropout.",
	  .doc = "The DDesigner API's Conv1DBlock: an xwn_convolution on N x C x W, then "
	         "batch_normalization, an activation (relu) and dropout." BLOCK_DOC,
	  .parts = conv1d_parts, .n_parts = STD_COUNT(conv1d_parts), .order = conv_order },
	{ .name = "conv_block_2d", .display_name = "Conv2DBlock", .aliases = conv2d_aliases,
	  .summary = "2-D XWN convolution + batch normalisation + activation + dropout.",
	  .doc = "The DDesigner API's Conv2DBlock: an xwn_convolution on N x C x H x W, then "
	         "batch_normalization, an activation (relu) and dropout." BLOCK_DOC,
	  .parts = conv2d_parts, .n_parts = STD_COUNT(conv2d_parts), .order = conv_order },
	{ .name = "tconv_block_2d", .display_name = "TConv2DBlock", .aliases = tconv2d_aliases,
	  .summary = "2-D XWN transposed convolution + batch normalisation + activation + dropout.",
	  .doc = "The DDesigner API's TConv2DBlock: an xwn_deconvolution, then batch_normalization, an "
	         "activation (relu) and dropout. Its parts are tconv, bn, act and dropout.",
	  .parts = tconv2d_parts, .n_parts = STD_COUNT(tconv2d_parts), .order = tconv_order },
	{ .name = "cascade_block_1d", .display_name = "CascadeConv1DBlock", .aliases = cascade1d_aliases,
	  .summary = "1-D cascade convolution + batch normalisation + activation + dropout.",
	  .doc = "A CascadeConv1DBlock in the API's style: an xwn_cascade_convolution on N x C x W, then "
	         "batch_normalization, an activation (relu) and dropout. Its parts are cascade, bn, act "
	         "and dropout.",
	  .parts = cascade_parts, .n_parts = STD_COUNT(cascade_parts), .order = cascade_order },
	{ .name = "cascade_block_2d", .display_name = "CascadeConv2DBlock", .aliases = cascade2d_aliases,
	  .summary = "2-D cascade convolution + batch normalisation + activation + dropout.",
	  .doc = "A CascadeConv2DBlock in the API's style: an xwn_cascade_convolution on N x C x H x W, "
	         "then batch_normalization, an activation (relu) and dropout. Its parts are cascade, bn, "
	         "act and dropout.",
	  .parts = cascade_parts, .n_parts = STD_COUNT(cascade_parts), .order = cascade_order },
	{ .name = "fc_block", .display_name = "FCBlock", .aliases = fc_aliases,
	  .summary = "Fully connected + batch normalisation + activation + dropout (no XWN).",
	  .doc = "The DDesigner API's FCBlock: a plain fully_connected layer (the API has no XWN for it), "
	         "then batch_normalization, an activation (relu) and dropout. Its parts are fc, bn, act "
	         "and dropout.",
	  .parts = fc_parts, .n_parts = STD_COUNT(fc_parts), .order = fc_order },
};

void
xwn_register_blocks(const st_host_api *api, st_plugin_ctx *ctx)
{
	/* A host before ABI 2.3 has neither; the layers still work there. */
	if (!ST_HOST_HAS(api, register_expansion) || !ST_HOST_HAS(api, register_block))
		return;
	api->register_expansion(ctx, "xwn_cascade_convolution", cascade_expand);
	for (int i = 0; i < STD_COUNT(xwn_blocks); i++)
		api->register_block(ctx, &xwn_blocks[i]);
}
