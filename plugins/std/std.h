/* The standard layer collection: shared declarations and small helpers. */
#ifndef STD_H
#define STD_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "st-plugin.h"

/* Each file of the collection exports one table of layer types. */
extern const st_layer_desc std_conv_layers[];   /* std-conv.c */
extern const int std_conv_layer_count;
extern const st_layer_desc std_norm_layers[];   /* std-norm.c */
extern const int std_norm_layer_count;
extern const st_layer_desc std_tensor_layers[]; /* std-tensor.c */
extern const int std_tensor_layer_count;
extern const st_layer_desc std_shape_layers[];  /* std-shape.c */
extern const int std_shape_layer_count;
extern const st_activation_desc std_activations[]; /* std-activation.c */
extern const int std_activation_count;

/* The CPU implementations, one table per file (ABI 2). */
extern const st_impl_desc std_conv_impls[];       /* std-conv-cpu.c: conv, deconv, pooling */
extern const int std_conv_impl_count;
extern const st_impl_desc std_norm_impls[];       /* std-norm-cpu.c: norms, fc, matmul */
extern const int std_norm_impl_count;
extern const st_impl_desc std_tensor_impls[];     /* std-tensor-cpu.c */
extern const int std_tensor_impl_count;
extern const st_impl_desc std_shape_impls[];      /* std-shape-cpu.c */
extern const int std_shape_impl_count;
extern const st_activation_impl std_activation_impls[]; /* std-activation-cpu.c */
extern const int std_activation_impl_count;

/*
 * Parameter positions and enum values the CPU implementations read, kept
 * here so the descriptors (which define the parameter tables in this
 * order) and the implementations share them. An enum value is the index of
 * its text in the descriptor's enum_values list.
 */

/* std-conv.c and std-norm.c: sliding-window and dense layers. */
enum std_padding_mode { PADDING_EXPLICIT, PADDING_SAME, PADDING_SAME_LOWER, PADDING_VALID };
enum std_pooling_mode { POOLING_MAX, POOLING_AVG };
enum {
	CONV_NUM_OUTPUT,
	CONV_KERNEL,
	CONV_STRIDE,
	CONV_PADDING,
	CONV_PADS,
	CONV_DILATION,
	CONV_GROUPS,
	CONV_BIAS
};
enum {
	DECONV_NUM_OUTPUT,
	DECONV_KERNEL,
	DECONV_STRIDE,
	DECONV_PADDING,
	DECONV_PADS,
	DECONV_OUTPUT_PADDING,
	DECONV_DILATION,
	DECONV_GROUPS,
	DECONV_BIAS
};
enum {
	POOL_MODE,
	POOL_KERNEL,
	POOL_STRIDE,
	POOL_PADDING,
	POOL_PADS,
	POOL_DILATION,
	POOL_CEIL_MODE,
	POOL_COUNT_INCLUDE_PAD
};
enum { GLOBAL_POOL_MODE };
enum { BATCH_NORM_EPSILON };
enum { INSTANCE_NORM_EPSILON };
enum { LAYER_NORM_AXIS, LAYER_NORM_EPSILON, LAYER_NORM_BIAS };
enum { FC_NUM_OUTPUT, FC_BIAS };

/* std-tensor.c */
enum { CONSTANT_DIMS, CONSTANT_DTYPE, CONSTANT_VALUE };
enum { SOFTMAX_AXIS };
enum { ELTWISE_OPERATION, ELTWISE_BROADCAST };
enum { OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MAX, OP_MIN };  /* operation */
enum { BROADCAST_NUMPY, BROADCAST_CHANNEL };               /* broadcast */
enum { BLEND_ALPHA };
enum { CONCAT_AXIS };
enum { SPLIT_AXIS, SPLIT_SPLIT, SPLIT_NUM_OUTPUTS };

/* std-shape.c */
enum { RESIZE_MODE, RESIZE_SCALES, RESIZE_SIZES, RESIZE_COORDINATES, RESIZE_NEAREST_MODE,
       RESIZE_CUBIC_A, RESIZE_EXCLUDE_OUTSIDE };
enum { RESIZE_NEAREST, RESIZE_LINEAR, RESIZE_CUBIC };     /* mode */
enum { COORD_HALF_PIXEL, COORD_HALF_PIXEL_SYMMETRIC, COORD_PYTORCH_HALF_PIXEL, COORD_ALIGN_CORNERS,
       COORD_ASYMMETRIC };                                 /* coordinate_transformation_mode */
enum { NEAREST_ROUND_PREFER_FLOOR, NEAREST_ROUND_PREFER_CEIL, NEAREST_FLOOR,
       NEAREST_CEIL };                                     /* nearest_mode */
enum { PAD_MODE, PAD_PADS, PAD_VALUE };
enum { PAD_CONSTANT, PAD_REFLECT, PAD_EDGE };              /* mode */
enum { SLICE_STARTS, SLICE_ENDS, SLICE_AXES, SLICE_STEPS };
enum { TRANSPOSE_PERM };
enum { BLOCK_SIZE, D2S_MODE };                             /* space_to_depth has only the first */
enum { D2S_DCR, D2S_CRD };                                 /* mode */

/* std-activation.c: coefficient positions of the activations that have any. */
enum { LEAKY_RELU_ALPHA };
enum { PRELU_ALPHA };
enum { ELU_ALPHA };
enum { SELU_ALPHA, SELU_GAMMA };
enum { HARD_SIGMOID_ALPHA, HARD_SIGMOID_BETA };
enum { GELU_APPROXIMATE };
enum { GELU_NONE, GELU_TANH };                             /* approximate */
enum { CLIP_MIN, CLIP_MAX };

/*
 * The convolutions' reshape and CPU functions, shared with collections that
 * extend a convolution's parameter table (plugins/xwn builds these files
 * in too): they read the parameters by the CONV_* and DECONV_* positions,
 * so a table that starts with the same parameters in the same order may
 * use them.
 */
extern const st_param_desc std_convolution_params[CONV_BIAS + 1];     /* std-conv.c */
extern const st_param_desc std_deconvolution_params[DECONV_BIAS + 1];
int std_convolution_reshape(st_reshape *r, const st_host_api *api);
int std_deconvolution_reshape(st_reshape *r, const st_host_api *api);
int std_conv_prepare(st_exec_layer *L, const st_host_api *api);        /* std-conv-cpu.c */
int std_conv_run(st_exec_layer *L, const st_exec_ctx *ctx);
st_layout std_conv_choose_layout(const st_exec_layer *L);
st_dtype std_conv_choose_dtype(const st_exec_layer *L, st_layout layout);
int std_deconv_prepare(st_exec_layer *L, const st_host_api *api);
int std_deconv_run(st_exec_layer *L, const st_exec_ctx *ctx);
void std_window_release(st_exec_layer *L);
struct k_window;
/* The window (kernel, stride, dilation, pads, groups) of convolution or
 * pooling layer L, its output sizes and filters checked as the CPU's
 * prepare checks them, for implementations on other backends (std-cuda).
 * 0, or -1 after api->fail. */
int std_conv_window(st_exec_layer *L, const st_host_api *api, struct k_window *w);
int std_pool_window(st_exec_layer *L, const st_host_api *api, struct k_window *w);
/* The same for a transposed convolution: pad_begin and pad_end are what is
 * cropped from its full output (negative where outputs no input reaches
 * are added). */
int std_deconv_window(st_exec_layer *L, const st_host_api *api, struct k_window *w);

/* The entry point; also callable directly when the collection is linked in. */
/* std-common.c, for the CPU's implementations and other backends'. */
/* The factor each axis of a resize uses in ONNX's coordinate mapping: the
 * given scale where scales set the size, out/in (in float32, as ONNX
 * Runtime divides) where sizes did, 1 on axes the list does not cover. */
void std_resize_scales(const st_exec_layer *L, float *scales);
struct k_resize_desc;
/* What resize layer L does (modes and scales), for the CPU's kernels and
 * other backends' tables; fails when input and output differ in rank or
 * dtype or an empty input axis would have to grow. 0, or -1 after
 * api->fail. */
int std_resize_desc(st_exec_layer *L, const st_host_api *api, struct k_resize_desc *d);
/* The shape elementwise operand i broadcasts with: under broadcast channel
 * a per-channel vector ([C], [1,C], [N,C]) lines up with axis 1 of input 0,
 * as [1 or N, C, 1, ...] of input 0's rank; numpy rules then agree. */
st_shape std_eltwise_operand_shape(const st_exec_layer *L, int i);

int st_plugin_entry(const st_host_api *api, st_plugin_ctx *ctx);

#define STD_COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* Room for a shape in messages: eight dimensions of up to 20 characters. */
#define SHAPE_TEXT 200

/* std-common.c: helpers every file of the collection uses. */

/* Formats s into buf (SHAPE_TEXT bytes) and returns buf, for argument lists. */
const char *std_shape_text(const st_host_api *api, const st_shape *s, char *buf);
/* Whether t is float32 or float16. */
bool std_is_float(st_dtype t);
/* Reports (and returns -1) unless the input is float32 or float16. */
int std_require_float(st_reshape *r, const st_host_api *api, const st_shape *in);
/* Reports (and returns -1) when s, or its size as FP32 bytes, overflows 64 bits;
 * what names the tensor in the message. */
int std_check_size(st_reshape *r, const st_host_api *api, const st_shape *s, const char *what);
/* In prepare: fails (api->fail, -1) unless weight index is present and holds
 * float32 of the given dims; what names it in the message. */
int std_check_weight(st_exec_layer *L, const st_host_api *api, int index, const char *what, int rank,
                     const int64_t *dims);
/* Declares a required FP32 weight tensor of the given dimensions. */
int std_declare_weight(st_reshape *r, const st_host_api *api, const char *name, int rank,
                       const int64_t *dims);

/* a * b, or -1 when either is negative or the product overflows. */
static inline int64_t
std_mul(int64_t a, int64_t b)
{
	if (a < 0 || b < 0)
		return -1;
	if (a != 0 && b > INT64_MAX / a)
		return -1;
	return a * b;
}

/* a + b for non-negative a and b, or -1 on overflow. */
static inline int64_t
std_add(int64_t a, int64_t b)
{
	if (a < 0 || b < 0 || a > INT64_MAX - b)
		return -1;
	return a + b;
}

/* Normalises an axis in [-rank, rank) to [0, rank); -1 when out of range. */
static inline int
std_axis(int64_t axis, int rank)
{
	if (axis < -rank || axis >= rank)
		return -1;
	return (int)(axis < 0 ? axis + rank : axis);
}

#endif
