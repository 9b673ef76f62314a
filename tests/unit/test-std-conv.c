/* Unit tests: std-conv (convolution, deconvolution, pooling, global pooling). */
#include "config.h"

#include <string.h>

#include "helpers.h"

/* Asserts a failed reshape whose messages contain text. */
#define assert_error(res, text)                                                                  \
	do {                                                                                     \
		cr_assert_neq((res).rc, 0, "expected an error mentioning '%s'", (text));         \
		cr_assert(strstr((res).messages, (text)) != NULL, "expected '%s' in:\n%s", (text), \
		          (res).messages);                                                       \
	} while (0)

/* Asserts that weight i of a reshape has this name and shape. */
static void
assert_weight(const test_result *res, int i, const char *name, const char *shape)
{
	cr_assert_lt(i, res->r.n_weights, "only %d weights declared", res->r.n_weights);
	cr_assert_str_eq(res->r.weights[i].name, name);
	cr_assert_not(res->r.weights[i].optional, "weight %s should not be optional", name);
	assert_shape(res->r.weights[i].shape, shape);
}

static int
run_one(const char *type, const char *params, const char *input, test_result *res)
{
	return test_reshape(type, params, 1, (const char *[]){ input }, res);
}

/* ---- convolution ---- */

Test(std_conv, conv2d_same_keeps_size)
{
	test_result res;
	cr_assert_eq(run_one("convolution", "num_output=16 kernel=3x3 padding=same", "1x3x32x32", &res), 0,
	             "%s", res.messages);
	assert_shape(res.outputs[0], "1x16x32x32");
	cr_assert_eq(res.r.n_weights, 2);
	assert_weight(&res, 0, "weights", "16x3x3x3");
	assert_weight(&res, 1, "bias", "16");
}

Test(std_conv, conv1d_explicit)
{
	test_result res;
	/* floor((100 + 2 + 2 - 5) / 2) + 1 = floor(99 / 2) + 1 = 50. */
	cr_assert_eq(run_one("conv", "num_output=8 kernel=5 stride=2 pads=2", "2x4x100", &res), 0, "%s",
	             res.messages);
	assert_shape(res.outputs[0], "2x8x50");
	assert_weight(&res, 0, "weights", "8x4x5");
}

Test(std_conv, conv3d_per_axis_stride)
{
	test_result res;
	/* D: (8 + 2 - 3) / 1 + 1 = 8; H and W: floor((16 + 2 - 3) / 2) + 1 = 8. */
	cr_assert_eq(run_one("convolution", "num_output=4 kernel=3x3x3 stride=[1,2,2] pads=1", "1x2x8x16x16",
	                     &res),
	             0, "%s", res.messages);
	assert_shape(res.outputs[0], "1x4x8x8x8");
	assert_weight(&res, 0, "weights", "4x2x3x3x3");
}

Test(std_conv, asymmetric_pads_onnx_order)
{
	test_result res;
	/* Begins H=0 W=1, ends H=2 W=3. H: 10 + 0 + 2 - 3 + 1 = 10; W: 10 + 1 + 3 - 3 + 1 = 12. */
	cr_assert_eq(run_one("convolution", "kernel=3 pads=[0,1,2,3]", "1x1x10x10", &res), 0, "%s",
	             res.messages);
	assert_shape(res.outputs[0], "1x1x10x12");
	/* One value per axis pads both sides: H: 10 + 4 - 3 + 1 = 12; W: 10 + 0 - 3 + 1 = 8. */
	cr_assert_eq(run_one("convolution", "kernel=3 pads=[2,0]", "1x1x10x10", &res), 0, "%s", res.messages);
	assert_shape(res.outputs[0], "1x1x12x8");
}

Test(std_conv, same_modes_with_stride)
{
	test_result res;
	/* ceil(7 / 2) = 4 and ceil(8 / 2) = 4, whichever side gets the odd pad. */
	cr_assert_eq(run_one("convolution", "kernel=3 stride=2 padding=same", "1x1x7x8", &res), 0, "%s",
	             res.messages);
	assert_shape(res.outputs[0], "1x1x4x4");
	cr_assert_eq(run_one("convolution", "kernel=3 stride=2 padding=same_lower", "1x1x7x8", &res), 0,
	             "%s", res.messages);
	assert_shape(res.outputs[0], "1x1x4x4");
	/* An even kernel needs odd total padding (1); the size still stays 5. */
	cr_assert_eq(run_one("convolution", "kernel=2 padding=same_lower", "1x1x5", &res), 0, "%s",
	             res.messages);
	assert_shape(res.outputs[0], "1x1x5");
}

Test(std_conv, valid_ignores_pads_with_warning)
{
	test_result res;
	/* 10 - 3 + 1 = 8: the pads of 5 are not applied. */
	cr_assert_eq(run_one("convolution", "kernel=3 padding=valid pads=5", "1x1x10x10", &res), 0, "%s",
	             res.messages);
	assert_shape(res.outputs[0], "1x1x8x8");
	cr_assert(strstr(res.messages, "warning: pads [5] is ignored because padding is valid") != NULL,
	          "%s", res.messages);
}

Test(std_conv, stride_and_dilation)
{
	test_result res;
	/* Extent (3 - 1) * 2 + 1 = 5; floor((15 + 2 - 5) / 2) + 1 = 7. */
	cr_assert_eq(run_one("convolution", "kernel=3 dilation=2 stride=2 pads=1", "1x1x15x15", &res), 0,
	             "%s", res.messages);
	assert_shape(res.outputs[0], "1x1x7x7");
	/* Per-axis dilation: H extent 3 gives 18, W extent (3 - 1) * 3 + 1 = 7 gives 14. */
	cr_assert_eq(run_one("convolution", "kernel=3 dilation=[1,3]", "1x1x20x20", &res), 0, "%s",
	             res.messages);
	assert_shape(res.outputs[0], "1x1x18x14");
}

Test(std_conv, groups_weights_and_flops)
{
	test_result res;
	cr_assert_eq(run_one("convolution", "num_output=8 groups=2 kernel=1", "1x4x5x5", &res), 0, "%s",
	             res.messages);
	assert_shape(res.outputs[0], "1x8x5x5");
	assert_weight(&res, 0, "weights", "8x2x1x1");
	/* 2 * 8 * 25 * (4 / 2) * 1 = 800 multiply-adds' flops, plus 8 * 25 = 200 bias adds. */
	cr_assert_eq(res.r.flops, 1000.0, "flops %g", res.r.flops);
}

Test(std_conv, depthwise)
{
	test_result res;
	cr_assert_eq(run_one("convolution", "num_output=32 groups=32 kernel=3 padding=same bias=false",
	                     "1x32x14x14", &res),
	             0, "%s", res.messages);
	assert_shape(res.outputs[0], "1x32x14x14");
	cr_assert_eq(res.r.n_weights, 1, "bias=false declares no bias");
	assert_weight(&res, 0, "weights", "32x1x3x3");
	/* 2 * 32 * 196 * 1 * 9, no bias. */
	cr_assert_eq(res.r.flops, 112896.0, "flops %g", res.r.flops);
}

Test(std_conv, resnet_stem_flops)
{
	test_result res;
	/* floor((224 + 6 - 7) / 2) + 1 = 112. */
	cr_assert_eq(run_one("convolution", "num_output=64 kernel=7 stride=2 pads=3", "1x3x224x224", &res),
	             0, "%s", res.messages);
	assert_shape(res.outputs[0], "1x64x112x112");
	/* 2 * 64 * 112 * 112 * 3 * 49 = 236027904, plus 64 * 112 * 112 = 802816. */
	cr_assert_eq(res.r.flops, 236830720.0, "flops %.0f", res.r.flops);
}

Test(std_conv, dtypes)
{
	test_result res;
	cr_assert_eq(run_one("convolution", "num_output=2", "float16:1x3x8x8", &res), 0, "%s", res.messages);
	assert_shape(res.outputs[0], "float16:1x2x6x6");
	/* Weights stay FP32 whatever the input. */
	assert_weight(&res, 0, "weights", "2x3x3x3");
	run_one("convolution", "num_output=2", "int64:1x3x8x8", &res);
	assert_error(res, "input 1x3x8x8 is int64, but convolution needs float32 or float16");
}

Test(std_conv, error_input_rank)
{
	test_result res;
	run_one("convolution", "", "1x3", &res);
	assert_error(res, "input 1x3 has rank 2");
	run_one("convolution", "", "1x1x2x2x2x2", &res);
	assert_error(res, "input 1x1x2x2x2x2 has rank 6");
	cr_assert_eq(res.n_outputs, 0);
}

Test(std_conv, error_value_counts)
{
	test_result res;
	run_one("convolution", "kernel=3x3", "1x3x32", &res);
	assert_error(res, "kernel [3, 3] has 2 values, but input 1x3x32 has 1 spatial axis: give one value");
	run_one("convolution", "stride=1x2", "1x3x8x8x8", &res);
	assert_error(res, "stride [1, 2] has 2 values");
	run_one("convolution", "dilation=[1,1,1]", "1x3x8x8", &res);
	assert_error(res, "dilation [1, 1, 1] has 3 values");
	run_one("convolution", "pads=[1,1,1]", "1x3x8x8", &res);
	assert_error(res, "pads [1, 1, 1] has 3 values, but input 1x3x8x8 has 2 spatial axes: give 1, 2 or 4");
	/* The same pads are fine where they are ignored. */
	cr_assert_eq(run_one("convolution", "pads=[1,1,1] padding=same", "1x3x8x8", &res), 0, "%s",
	             res.messages);
}

Test(std_conv, error_groups)
{
	test_result res;
	run_one("convolution", "num_output=4 groups=2", "1x3x8x8", &res);
	assert_error(res, "input 1x3x8x8 has 3 channels, which groups 2 does not divide");
	run_one("convolution", "num_output=3 groups=2", "1x4x8x8", &res);
	assert_error(res, "num_output 3 is not divisible by groups 2");
}

Test(std_conv, error_kernel_larger_than_padded_input)
{
	test_result res;
	run_one("convolution", "kernel=5", "1x1x4x4", &res);
	assert_error(res, "kernel 5 with dilation 1 spans 5, more than the padded input 4");
	/* Extent (3 - 1) * 3 + 1 = 7 > 6 ... */
	run_one("convolution", "kernel=3 dilation=3", "1x1x6x6", &res);
	assert_error(res, "spans 7, more than the padded input 6");
	/* ... but with one pad each side 8 >= 7 leaves (8 - 7) / 1 + 1 = 2. */
	cr_assert_eq(run_one("convolution", "kernel=3 dilation=3 pads=1", "1x1x6x6", &res), 0, "%s",
	             res.messages);
	assert_shape(res.outputs[0], "1x1x2x2");
}

Test(std_conv, error_overflow)
{
	test_result res;
	/* 2^53 outputs x 64 x 64 positions is 2^65 elements. */
	run_one("convolution", "num_output=9007199254740992 kernel=1", "1x1x64x64", &res);
	assert_error(res, "would hold more elements than memory can address");
}

Test(std_conv, error_empty_spatial_axis)
{
	test_result res;
	run_one("convolution", "kernel=1", "1x1x0x4", &res);
	assert_error(res, "empty spatial axis 0");
}

/* ---- deconvolution ---- */

Test(std_conv, deconv_upsample_weights_flops)
{
	test_result res;
	/* 2 * (8 - 1) + 0 + 4 - 1 - 1 = 16. */
	cr_assert_eq(run_one("deconvolution", "num_output=16 kernel=4 stride=2 pads=1", "1x32x8x8", &res), 0,
	             "%s", res.messages);
	assert_shape(res.outputs[0], "1x16x16x16");
	/* ONNX ConvTranspose layout: input channels first. */
	assert_weight(&res, 0, "weights", "32x16x4x4");
	assert_weight(&res, 1, "bias", "16");
	/* 2 * 32 * 64 * 16 * 16 = 1048576, plus 16 * 16 * 16 = 4096 bias adds. */
	cr_assert_eq(res.r.flops, 1052672.0, "flops %.0f", res.r.flops);
}

Test(std_conv, deconv_output_padding)
{
	test_result res;
	/* 2 * (7 - 1) + 1 + 3 - 1 - 1 = 14. */
	cr_assert_eq(run_one("deconv", "num_output=4 kernel=3 stride=2 pads=1 output_padding=1", "1x8x7x7",
	                     &res),
	             0, "%s", res.messages);
	assert_shape(res.outputs[0], "1x4x14x14");
	/* Per axis: H 2 * 6 + 0 + 3 - 2 = 13, W 14. */
	cr_assert_eq(run_one("deconv", "num_output=4 kernel=3 stride=2 pads=1 output_padding=[0,1]",
	                     "1x8x7x7", &res),
	             0, "%s", res.messages);
	assert_shape(res.outputs[0], "1x4x13x14");
	/* Smaller than the dilation is enough: 1 * 4 + 2 + (3 - 1) * 3 + 1 = 13. */
	cr_assert_eq(run_one("deconv", "kernel=3 dilation=3 output_padding=2", "1x1x5", &res), 0, "%s",
	             res.messages);
	assert_shape(res.outputs[0], "1x1x13");
	run_one("deconv", "kernel=3 stride=2 output_padding=2", "1x1x5", &res);
	assert_error(res, "output_padding 2 on spatial axis 0 must be smaller than the stride 2 or the dilation 1");
}

Test(std_conv, deconv_same_and_valid)
{
	test_result res;
	/* same: size * stride, whatever output_padding and kernel. */
	cr_assert_eq(run_one("conv_transpose", "num_output=2 kernel=3 stride=2 padding=same output_padding=1",
	                     "1x8x5x10", &res),
	             0, "%s", res.messages);
	assert_shape(res.outputs[0], "1x2x10x20");
	cr_assert_eq(run_one("deconvolution", "kernel=2 stride=[3] padding=same_lower", "1x1x4", &res), 0,
	             "%s", res.messages);
	assert_shape(res.outputs[0], "1x1x12");
	/* Kernel 1 and stride 2: same still gives 5 * 2 = 10, one more than the
	 * 2 * 4 + 1 = 9 computed, and a warning says so. */
	cr_assert_eq(run_one("deconvolution", "kernel=1 stride=2 padding=same", "1x1x5", &res), 0, "%s",
	             res.messages);
	assert_shape(res.outputs[0], "1x1x10");
	cr_assert(strstr(res.messages, "warning: on spatial axis 0 the kernel span 1 plus output_padding 0 "
	                               "is smaller than the stride 2: padding same gives 10 outputs, "
	                               "more than the 9") != NULL,
	          "%s", res.messages);
	/* valid: 2 * (5 - 1) + 3 = 11, pads ignored. */
	cr_assert_eq(run_one("deconvolution", "kernel=3 stride=2 padding=valid pads=1", "1x1x5", &res), 0,
	             "%s", res.messages);
	assert_shape(res.outputs[0], "1x1x11");
}

Test(std_conv, deconv_groups_and_3d)
{
	test_result res;
	/* 1 * (4 - 1) + 3 = 6. */
	cr_assert_eq(run_one("deconvolution", "num_output=6 groups=3", "1x9x4", &res), 0, "%s", res.messages);
	assert_shape(res.outputs[0], "1x6x6");
	assert_weight(&res, 0, "weights", "9x2x3");
	/* D: 2 * 1 + 2 = 4; H, W: 2 * 3 + 2 = 8. */
	cr_assert_eq(run_one("deconvolution", "kernel=2 stride=2 num_output=3", "2x5x2x4x4", &res), 0, "%s",
	             res.messages);
	assert_shape(res.outputs[0], "2x3x4x8x8");
	assert_weight(&res, 0, "weights", "5x3x2x2x2");
}

Test(std_conv, deconv_errors)
{
	test_result res;
	/* The full output 1 * 0 + 0 + 1 = 1 loses 2 elements to the pads. */
	run_one("deconvolution", "kernel=1 pads=1", "1x1x1", &res);
	assert_error(res, "pads 1 and 1 remove all 1 elements of the full output");
	run_one("deconvolution", "num_output=4 groups=4", "1x6x3x3", &res);
	assert_error(res, "6 channels, which groups 4 does not divide");
	run_one("deconvolution", "num_output=5 groups=2", "1x6x3x3", &res);
	assert_error(res, "num_output 5 is not divisible by groups 2");
	run_one("deconvolution", "", "uint8:1x1x3x3", &res);
	assert_error(res, "is uint8, but deconvolution needs float32 or float16");
	run_one("deconvolution", "output_padding=[0,0]", "1x1x3", &res);
	assert_error(res, "output_padding [0, 0] has 2 values");
}

/* ---- pooling ---- */

Test(std_conv, pooling_defaults_and_flops)
{
	test_result res;
	cr_assert_eq(run_one("pooling", "", "1x64x112x112", &res), 0, "%s", res.messages);
	assert_shape(res.outputs[0], "1x64x56x56");
	cr_assert_eq(res.r.n_weights, 0);
	/* 64 * 56 * 56 windows of 4. */
	cr_assert_eq(res.r.flops, 802816.0, "flops %.0f", res.r.flops);
	cr_assert_eq(run_one("pool", "", "1x4x8x8x8", &res), 0, "%s", res.messages);
	assert_shape(res.outputs[0], "1x4x4x4x4");
	cr_assert_eq(run_one("pool", "kernel=3 stride=1", "2x3x10", &res), 0, "%s", res.messages);
	assert_shape(res.outputs[0], "2x3x8");
}

Test(std_conv, pooling_ceil_mode)
{
	test_result res;
	/* (5 - 2) / 2 = 1.5: floor gives 2 windows, ceil gives 3; the third starts at 4 < 5. */
	cr_assert_eq(run_one("pooling", "kernel=2 stride=2", "1x1x5", &res), 0, "%s", res.messages);
	assert_shape(res.outputs[0], "1x1x2");
	cr_assert_eq(run_one("pooling", "kernel=2 stride=2 ceil_mode=true", "1x1x5", &res), 0, "%s",
	             res.messages);
	assert_shape(res.outputs[0], "1x1x3");
}

Test(std_conv, pooling_ceil_mode_last_window_rule)
{
	test_result res;
	/*
	 * Size 6, kernel 3, stride 2, total padding 2: span 6 + 2 - 3 = 5, and
	 * ceil(5 / 2) + 1 = 4 windows starting at 0, 2, 4, 6 of the padded input.
	 * With pads [1, 1] the input covers padded positions 1..6, so the window
	 * at 6 starts inside it and is kept: 4. With pads [0, 2] the input covers
	 * 0..5 and the window at 6 would start in the right padding; ONNX drops
	 * it ((4 - 1) * 2 = 6 >= 6 + 0): 3.
	 */
	cr_assert_eq(run_one("pooling", "kernel=3 stride=2 pads=[1,1] ceil_mode=true", "1x1x6", &res), 0,
	             "%s", res.messages);
	assert_shape(res.outputs[0], "1x1x4");
	cr_assert_eq(run_one("pooling", "kernel=3 stride=2 pads=[0,2] ceil_mode=true", "1x1x6", &res), 0,
	             "%s", res.messages);
	assert_shape(res.outputs[0], "1x1x3");
	/* Size 4, kernel 2, stride 2, pads [0, 1]: ceil((5 - 2) / 2) + 1 = 3, but
	 * the third window starts at 4 >= 4 + 0, so 2 remain. */
	cr_assert_eq(run_one("pooling", "kernel=2 stride=2 pads=[0,1] ceil_mode=true", "1x1x4", &res), 0,
	             "%s", res.messages);
	assert_shape(res.outputs[0], "1x1x2");
}

Test(std_conv, pooling_count_include_pad_keeps_shape)
{
	test_result res;
	/* (5 + 2 - 3) / 1 + 1 = 5 either way. */
	cr_assert_eq(run_one("pooling", "mode=avg kernel=3 stride=1 pads=1 count_include_pad=true", "1x2x5x5",
	                     &res),
	             0, "%s", res.messages);
	assert_shape(res.outputs[0], "1x2x5x5");
	cr_assert_eq(run_one("pooling", "mode=avg kernel=3 stride=1 pads=1 count_include_pad=false",
	                     "1x2x5x5", &res),
	             0, "%s", res.messages);
	assert_shape(res.outputs[0], "1x2x5x5");
}

Test(std_conv, pooling_same_and_dilation)
{
	test_result res;
	/* ceil(7 / 2) = 4. */
	cr_assert_eq(run_one("pooling", "kernel=3 stride=2 padding=same", "1x1x7", &res), 0, "%s",
	             res.messages);
	assert_shape(res.outputs[0], "1x1x4");
	/* Extent (2 - 1) * 2 + 1 = 3: 5 - 3 + 1 = 3. */
	cr_assert_eq(run_one("pooling", "kernel=2 dilation=2 stride=1", "1x1x5", &res), 0, "%s",
	             res.messages);
	assert_shape(res.outputs[0], "1x1x3");
	cr_assert_eq(run_one("pooling", "", "float16:1x2x4x4", &res), 0, "%s", res.messages);
	assert_shape(res.outputs[0], "float16:1x2x2x2");
}

Test(std_conv, pooling_errors)
{
	test_result res;
	run_one("pooling", "kernel=3", "1x1x2", &res);
	assert_error(res, "spans 3, more than the padded input 2");
	run_one("pooling", "", "int64:1x1x4x4", &res);
	assert_error(res, "is int64, but pooling needs float32 or float16");
	run_one("pooling", "", "1x4", &res);
	assert_error(res, "has rank 2");
	run_one("pooling", "kernel=[2,2,2]", "1x1x4x4", &res);
	assert_error(res, "kernel [2, 2, 2] has 3 values");
}

Test(std_conv, pooling_has_no_activation)
{
	const st_layer_type *pool = st_registry_find_layer(test_registry(), "pooling");
	const st_layer_type *conv = st_registry_find_layer(test_registry(), "conv");
	cr_assert_not_null(pool);
	cr_assert_not_null(conv);
	cr_assert_not(pool->desc->flags & ST_LAYER_ACTIVATION);
	cr_assert(conv->desc->flags & ST_LAYER_ACTIVATION);
	cr_assert_str_eq(pool->desc->category, "Pooling");
	cr_assert_str_eq(conv->desc->category, "General");
}

/* ---- global pooling ---- */

Test(std_conv, global_pooling_ranks)
{
	test_result res;
	cr_assert_eq(run_one("global_pooling", "", "1x512x7x7", &res), 0, "%s", res.messages);
	assert_shape(res.outputs[0], "1x512x1x1");
	cr_assert_eq(res.r.flops, 25088.0, "flops %.0f", res.r.flops);
	cr_assert_eq(run_one("gpool", "mode=max", "2x8x10", &res), 0, "%s", res.messages);
	assert_shape(res.outputs[0], "2x8x1");
	cr_assert_eq(run_one("gpool", "", "float16:1x4x2x3x5", &res), 0, "%s", res.messages);
	assert_shape(res.outputs[0], "float16:1x4x1x1x1");
	run_one("gpool", "", "4x8", &res);
	assert_error(res, "input 4x8 has rank 2, but global_pooling needs an image");
	run_one("gpool", "", "int32:1x4x2x2", &res);
	assert_error(res, "is int32");
}
