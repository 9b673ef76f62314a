/* Unit tests: std-shape (resize, pad, slice, reshape, flatten, transpose, space/depth). */
#include "config.h"

#include <string.h>

#include "helpers.h"

#define SHAPES(...) ((const char *const[]){ __VA_ARGS__ })

/* Asserts that the messages hold text, showing them when they do not. */
#define assert_message(res, text)                                                             \
	cr_assert(strstr((res).messages, (text)) != NULL, "expected \"%s\" in:\n%s", (text),   \
	          (res).messages)

/* Runs a one-input layer and asserts it succeeds with the expected output. */
#define assert_reshapes(type, params, in, expected)                                           \
	do {                                                                                  \
		test_result res_;                                                             \
		cr_assert_eq(test_reshape((type), (params), 1, SHAPES(in), &res_), 0,         \
		             "%s %s on %s failed:\n%s", (type), (params), (in), res_.messages); \
		cr_assert_eq(res_.n_outputs, 1);                                              \
		assert_shape(res_.outputs[0], (expected));                                    \
	} while (0)

/* Runs a one-input layer and asserts it fails with text among the messages. */
#define assert_refuses(type, params, in, text)                                                \
	do {                                                                                  \
		test_result res_;                                                             \
		cr_assert_neq(test_reshape((type), (params), 1, SHAPES(in), &res_), 0,        \
		              "%s %s on %s was accepted", (type), (params), (in));            \
		assert_message(res_, (text));                                                 \
	} while (0)

Test(std_shape, descriptors_complete)
{
	static const struct {
		const char *name, *alias, *category;
	} expected[] = {
		{ "resize", "upsample", "Upsampling" }, { "pad", NULL, "Shape" },
		{ "slice", NULL, "Shape" },             { "reshape", NULL, "Shape" },
		{ "flatten", NULL, "Shape" },           { "transpose", NULL, "Shape" },
		{ "space_to_depth", "s2d", "Shape" },   { "depth_to_space", "d2s", "Shape" },
	};
	const st_registry *reg = test_registry();
	for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++) {
		const st_layer_type *t = st_registry_find_layer(reg, expected[i].name);
		cr_assert(t != NULL, "no layer type %s", expected[i].name);
		const st_layer_desc *d = t->desc;
		if (expected[i].alias)
			cr_assert_eq(st_registry_find_layer(reg, expected[i].alias), t, "alias %s", expected[i].alias);
		cr_assert_str_eq(d->category, expected[i].category);
		cr_assert_eq(d->flags & ST_LAYER_ACTIVATION, 0, "%s takes no activation", d->name);
		cr_assert(d->display_name && d->summary && d->inputs[0].doc && d->outputs[0].doc);
		for (int k = 0; k < d->n_params; k++)
			cr_assert(d->params[k].doc && strlen(d->params[k].doc) > 20, "%s.%s has no real doc",
			          d->name, d->params[k].name);
	}
}

/* ---- resize ---- */

Test(std_shape, resize_default_doubles_spatial)
{
	test_result res;
	cr_assert_eq(test_reshape("resize", "", 1, SHAPES("1x3x8x8"), &res), 0, "%s", res.messages);
	assert_shape(res.outputs[0], "1x3x16x16");
	cr_assert_eq(res.r.flops, 0);
	assert_reshapes("upsample", "mode=nearest", "uint8:1x3x8x8", "uint8:1x3x16x16");
}

Test(std_shape, resize_scales)
{
	assert_reshapes("resize", "scales=[2,3]", "1x3x8x8", "1x3x16x24");
	/* floor(9 · 0.5) = 4. */
	assert_reshapes("resize", "scales=[1,1,0.5,0.5]", "1x3x9x9", "1x3x4x4");
	assert_reshapes("resize", "scales=[1,2,1,1]", "1x3x9x9", "1x6x9x9");
	assert_reshapes("resize", "scales=[1.5]", "2x4x5x6x7", "2x4x7x9x10");
	assert_reshapes("resize", "scales=[2]", "1x3x8", "1x3x16");
	assert_reshapes("resize", "scales=[1,2]", "1x3", "1x6");
}

Test(std_shape, resize_sizes)
{
	assert_reshapes("resize", "sizes=[32,16]", "1x3x8x8", "1x3x32x16");
	assert_reshapes("resize", "sizes=[10]", "1x3x8x8", "1x3x10x10");
	assert_reshapes("resize", "sizes=[1,3,5,7]", "1x3x8x8", "1x3x5x7");
	/* sizes wins over scales. */
	assert_reshapes("resize", "scales=[4] sizes=[3,3]", "1x3x8x8", "1x3x3x3");
}

Test(std_shape, resize_flops)
{
	test_result res;
	/* 1x3x16x16 = 768 outputs; bilinear reads 2² taps, bicubic 4². */
	cr_assert_eq(test_reshape("resize", "mode=linear", 1, SHAPES("1x3x8x8"), &res), 0, "%s", res.messages);
	cr_assert_float_eq(res.r.flops, 768.0 * 4 * 2, 1e-6);
	cr_assert_eq(test_reshape("resize", "mode=cubic", 1, SHAPES("1x3x8x8"), &res), 0);
	cr_assert_float_eq(res.r.flops, 768.0 * 16 * 2, 1e-6);
	cr_assert_eq(test_reshape("resize", "mode=linear scales=[1,1,2,2]", 1, SHAPES("1x3x8x8"), &res), 0);
	cr_assert_float_eq(res.r.flops, 768.0 * 4 * 2, 1e-6);
}

Test(std_shape, resize_errors)
{
	assert_refuses("resize", "scales=[2,2,2]", "1x3x8x8", "scales has 3 values, but input 1x3x8x8 (rank 4) takes 1 or 2");
	assert_refuses("resize", "sizes=[4,4,4]", "1x3x8x8", "sizes has 3 values");
	assert_refuses("resize", "scales=[2]", "1x3", "no spatial axes");
	assert_refuses("resize", "scales=[0]", "1x3x8x8", "scales item 0 is 0: scales must be greater than 0");
	assert_refuses("resize", "scales=[2,-1]", "1x3x8x8", "scales item 1 is -1");
	assert_refuses("resize", "scales=[0.1]", "1x3x8x8", "floor(8 · 0.1) = 0");
	assert_refuses("resize", "scales=[]", "1x3x8x8", "both empty");
	assert_refuses("resize", "mode=linear", "int64:1x3x8x8", "mode linear needs a float input");
	assert_refuses("resize", "", "scalar", "rank 1 or more");
	assert_refuses("resize", "scales=[1e18]", "1x3x100x100", "larger than an int64 holds");
	assert_refuses("resize", "scales=[1e9]", "1x3x8x8", "more elements than memory can address");
}

/* ---- pad ---- */

Test(std_shape, pad_forms)
{
	assert_reshapes("pad", "", "1x3x8x8", "1x3x8x8");
	assert_reshapes("pad", "pads=[1]", "1x3x8x8", "1x3x10x10");
	/* Spatial form: H gets 1 + 3, W gets 2 + 4. */
	assert_reshapes("pad", "pads=[1,2,3,4]", "1x3x8x8", "1x3x12x14");
	assert_reshapes("pad", "pads=[0,1,0,0,0,2,0,0]", "int8:1x3x8x8", "int8:1x6x8x8");
	assert_reshapes("pad", "pads=[2,3]", "5", "10");
	assert_reshapes("pad", "pads=[1,0,0,1]", "1x1", "2x2");
}

Test(std_shape, pad_negative_crops)
{
	assert_reshapes("pad", "pads=[-1,-2,0,0]", "1x3x8x8", "1x3x7x6");
	assert_reshapes("pad", "pads=[-8,2,0,0]", "1x3x8x8", "1x3x0x10");
	assert_refuses("pad", "pads=[-5,0,-4,0]", "1x3x8x8", "remove 9 elements, but the axis has 8");
}

Test(std_shape, pad_reflect_and_edge_limits)
{
	assert_reshapes("pad", "mode=reflect pads=[7]", "1x3x8x8", "1x3x22x22");
	assert_refuses("pad", "mode=reflect pads=[8]", "1x3x8x8", "mode reflect needs pads smaller than the size");
	/* Cropping 2 leaves 6 to mirror: a pad of 6 is too much. */
	assert_refuses("pad", "mode=reflect pads=[-2,0,6,0]", "1x3x8x8", "axis 2 has size 6");
	assert_reshapes("pad", "mode=edge pads=[20]", "1x3x1x1", "1x3x41x41");
	assert_refuses("pad", "mode=edge pads=[1]", "1x3x0x4", "mode edge cannot pad axis 2");
	assert_reshapes("pad", "mode=constant pads=[1]", "1x3x0x4", "1x3x2x6");
}

Test(std_shape, pad_errors)
{
	assert_refuses("pad", "pads=[1,2,3]", "1x3x8x8", "pads [1, 2, 3] has 3 values, but input 1x3x8x8 (rank 4) takes 8");
	assert_refuses("pad", "pads=[1]", "1x3", "no spatial axes");
	assert_refuses("pad", "value=0.5 pads=[1]", "int64:1x3x8x8", "value 0.5 cannot be stored");
	assert_reshapes("pad", "value=-3 pads=[1]", "int64:1x3x8x8", "int64:1x3x10x10");
}

/* ---- slice ---- */

Test(std_shape, slice_basic)
{
	assert_reshapes("slice", "starts=[2] ends=[6] axes=[2]", "1x3x8x8", "1x3x4x8");
	assert_reshapes("slice", "starts=[0,1] ends=[5,10]", "int32:10x20", "int32:5x9");
	assert_reshapes("slice", "starts=[2,0] ends=[6,7] axes=[-1,2] steps=[2,3]", "1x3x8x8", "1x3x3x2");
}

Test(std_shape, slice_negative_steps_and_clamping)
{
	/* From the last element back past the first: all 10. */
	assert_reshapes("slice", "starts=[-1] ends=[-2147483648] steps=[-1]", "10", "10");
	assert_reshapes("slice", "starts=[1] ends=[2147483647]", "10", "9");
	/* 8, 5, 2. */
	assert_reshapes("slice", "starts=[8] ends=[1] steps=[-3]", "10", "3");
	/* 5, 3, 1: the end clamps to -1 when walking backwards. */
	assert_reshapes("slice", "starts=[5] ends=[-20] steps=[-2]", "10", "3");
	assert_reshapes("slice", "starts=[20] ends=[30]", "10", "0");
	assert_reshapes("slice", "starts=[3] ends=[1]", "10", "0");
	/* ONNX clamps the start to 0 and the end to -1: one element. */
	assert_reshapes("slice", "starts=[-20] ends=[-15] steps=[-1]", "10", "1");
	assert_reshapes("slice", "starts=[0] ends=[10] steps=[-1]", "0", "0");
}

Test(std_shape, slice_errors)
{
	assert_refuses("slice", "", "10", "starts and ends are required");
	assert_refuses("slice", "starts=[0]", "10", "starts and ends are required");
	assert_refuses("slice", "starts=[0,0] ends=[1]", "10x10", "starts [0, 0] and ends [1] differ in length (2 vs 1)");
	assert_refuses("slice", "starts=[0] ends=[1] steps=[0]", "10", "steps item 0 is 0");
	assert_refuses("slice", "starts=[0,0] ends=[1,1] axes=[1,-3]", "1x3x8x8", "names axis 1 twice (items 0 and 1)");
	assert_refuses("slice", "starts=[0] ends=[1] axes=[4]", "1x3x8x8", "axes [4] names axis 4, out of range for input 1x3x8x8");
	assert_refuses("slice", "starts=[0,0,0] ends=[1,1,1]", "5x5", "starts has 3 values, but input 5x5 has only 2 axes");
	assert_refuses("slice", "starts=[0,0] ends=[1,1] axes=[0]", "1x3x8x8", "axes [0] and starts [0, 0] differ in length (1 vs 2)");
}

/* ---- reshape ---- */

Test(std_shape, reshape_zero_and_infer)
{
	assert_reshapes("reshape", "", "2x3x4", "24");
	assert_reshapes("reshape", "shape=[0,-1]", "2x3x4", "2x12");
	assert_reshapes("reshape", "shape=[4,0,2]", "2x3x4", "4x3x2");
	assert_reshapes("reshape", "shape=[-1,2,2]", "int8:2x3x4", "int8:6x2x2");
	assert_reshapes("reshape", "shape=[]", "1x1", "scalar");
}

Test(std_shape, reshape_allowzero)
{
	assert_reshapes("reshape", "shape=[0,3] allowzero=true", "0x3", "0x3");
	assert_reshapes("reshape", "shape=[3,0] allowzero=true", "0x3", "3x0");
	assert_refuses("reshape", "shape=[0,3] allowzero=true", "2x3", "cannot reshape 2x3 (6 elements) to 0x3 (0 elements)");
	assert_refuses("reshape", "shape=[0,-1] allowzero=true", "0x3", "cannot hold both 0 and -1");
}

Test(std_shape, reshape_errors)
{
	assert_refuses("reshape", "shape=[2,5]", "1x3x4x4", "cannot reshape 1x3x4x4 (48 elements) to 2x5 (10 elements)");
	assert_refuses("reshape", "shape=[4,-1]", "2x3", "cannot reshape 2x3 (6 elements) to [4, -1]");
	assert_refuses("reshape", "shape=[-1,-1]", "2x3", "has -1 twice");
	assert_refuses("reshape", "shape=[2,3,0]", "2x3", "shape item 2 is 0");
	assert_refuses("reshape", "shape=[0,-1]", "0x3x2", "no size for the -1");
}

/* ---- flatten ---- */

Test(std_shape, flatten_axes)
{
	assert_reshapes("flatten", "", "2x3x4x5", "2x60");
	assert_reshapes("flatten", "axis=0", "2x3x4x5", "1x120");
	assert_reshapes("flatten", "axis=4", "2x3x4x5", "120x1");
	assert_reshapes("flatten", "axis=-1", "uint8:2x3x4x5", "uint8:24x5");
	assert_reshapes("flatten", "axis=-4", "2x3x4x5", "1x120");
	assert_reshapes("flatten", "axis=0", "scalar", "1x1");
}

Test(std_shape, flatten_errors)
{
	assert_refuses("flatten", "axis=5", "2x3x4x5", "axis 5 is out of range for input 2x3x4x5: it must be from -4 to 4");
	assert_refuses("flatten", "axis=-5", "2x3x4x5", "axis -5 is out of range");
	/* The whole holds 0 elements, but the inner part alone overflows. */
	assert_refuses("flatten", "axis=1", "0x4294967296x4294967296", "larger than an int64 holds");
}

/* ---- transpose ---- */

Test(std_shape, transpose_perms)
{
	assert_reshapes("transpose", "", "1x2x3", "3x2x1");
	assert_reshapes("transpose", "perm=[0,2,3,1]", "bool:1x3x8x9", "bool:1x8x9x3");
	assert_reshapes("transpose", "", "scalar", "scalar");
}

Test(std_shape, transpose_errors)
{
	assert_refuses("transpose", "perm=[0,1]", "1x3x8x8", "perm [0, 1] has 2 values, but input 1x3x8x8 has rank 4");
	assert_refuses("transpose", "perm=[0,1,2,4]", "1x3x8x8", "item 3 is 4");
	assert_refuses("transpose", "perm=[0,-1,2,3]", "1x3x8x8", "item 1 is -1");
	assert_refuses("transpose", "perm=[0,1,1,2]", "1x3x8x8", "axis 1 appears twice (items 1 and 2)");
}

/* ---- space_to_depth, depth_to_space ---- */

Test(std_shape, space_to_depth)
{
	assert_reshapes("space_to_depth", "", "1x3x8x8", "1x12x4x4");
	assert_reshapes("s2d", "block_size=4", "2x3x8x4", "2x48x2x1");
	assert_reshapes("s2d", "block_size=1", "1x3x7x7", "1x3x7x7");
	assert_refuses("s2d", "", "1x3x7x8", "H (7) of input 1x3x7x8 is not a multiple of block_size 2");
	assert_refuses("s2d", "", "1x3x8x9", "W (9)");
	assert_refuses("s2d", "", "3x8x8", "needs a 4-D input");
}

Test(std_shape, depth_to_space)
{
	assert_reshapes("depth_to_space", "", "1x12x4x4", "1x3x8x8");
	assert_reshapes("d2s", "mode=CRD block_size=3", "int8:1x18x2x5", "int8:1x2x6x15");
	assert_refuses("d2s", "", "1x10x4x4", "C (10) of input 1x10x4x4 is not a multiple of block_size² (4)");
	assert_refuses("d2s", "", "1x12x4", "needs a 4-D input");
	assert_refuses("d2s", "block_size=4294967296", "1x12x4x4", "squared is larger than an int64 holds");
}
