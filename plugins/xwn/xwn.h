/* The XWN collection: the DDesigner API's accelerator-friendly layers (XWN
 * convolutions, transposed convolutions and cascade convolutions).
 * Declarations shared by its files. */
#ifndef XWN_H
#define XWN_H

#include "k-xwn.h"
#include "std.h"

/*
 * Parameter positions. An XWN convolution's table is the standard
 * convolution's (CONV_* in std.h) followed by the XWN set, a transposed
 * one's the deconvolution's (DECONV_*) followed by it, so std's reshape
 * and CPU functions read them unchanged. XWN_* are offsets into the set.
 */
enum { XWN_USE_TRANSFORM, XWN_BIT, XWN_MAX_SCALE, XWN_USE_PRUNING, XWN_PRUN_WEIGHT, XWN_N_PARAMS };
#define XWN_CONV_SET (CONV_BIAS + 1)
#define XWN_DECONV_SET (DECONV_BIAS + 1)
enum {
	CASCADE_NUM_OUTPUT,
	CASCADE_KERNEL_SIZE,
	CASCADE_STRIDE,
	CASCADE_PADS,
	CASCADE_MID_CHANNELS,
	CASCADE_CHANNEL_RATIO,
	CASCADE_BIAS,
	CASCADE_XWN_SET /* the XWN set follows */
};

/* Cascade stages: weights stage0..stage<n-1>, pointwise, and the bias fit
 * the host's ST_MAX_WEIGHTS. */
#define CASCADE_MAX_STAGES (ST_MAX_WEIGHTS - 2)

/* xwn.c: the descriptors, filled at load. */
extern st_layer_desc xwn_layers[];
extern const int xwn_layer_count;
void xwn_fill_tables(void);

/* xwn-blocks.c: the cascade's expansion and the blocks (ABI 2.3; nothing
 * on an earlier host). */
void xwn_register_blocks(const st_host_api *api, st_plugin_ctx *ctx);

/* xwn-cpu.c */
extern const st_impl_desc xwn_impls[];
extern const int xwn_impl_count;

/* The XWN set of a layer whose set starts at parameter first. */
static inline k_xwn_settings
xwn_settings_of(const st_value *params, int first)
{
	return (k_xwn_settings){
		.transform = params[first + XWN_USE_TRANSFORM].b,
		.bit = (int)params[first + XWN_BIT].i,
		.max_scale = (float)params[first + XWN_MAX_SCALE].f,
		.pruning = params[first + XWN_USE_PRUNING].b,
		.prun_weight = (float)params[first + XWN_PRUN_WEIGHT].f,
	};
}

/* A cascade's geometry from its parameters and input channels: the number
 * of 3-tap stages and their channels. */
static inline int
xwn_cascade_stages(int64_t kernel_size)
{
	return (int)(kernel_size / 2);
}

static inline int64_t
xwn_cascade_mid(const st_value *params, int64_t in_channels)
{
	if (params[CASCADE_MID_CHANNELS].i > 0)
		return params[CASCADE_MID_CHANNELS].i;
	/* As the reference: int(in_channels * channel_ratio), truncated. */
	double mid = (double)in_channels * params[CASCADE_CHANNEL_RATIO].f;
	return mid >= 9.0e18 ? -1 : (int64_t)mid;
}

int st_plugin_entry(const st_host_api *api, st_plugin_ctx *ctx);

#endif
