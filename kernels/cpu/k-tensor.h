/* CPU kernels for element-wise, data-movement and shape operations,
 * activations, and dtype and layout conversions. */
#ifndef K_TENSOR_H
#define K_TENSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "st-plugin.h"

/*
 * Conventions shared by every kernel here:
 *
 * - Tensors are dense and row-major in the order their st_shape lists the
 *   axes (NCHW for images). Kernels over buffers read only the dims and rank
 *   of a shape and take the element type as an argument (a dtype, or an
 *   element size in bytes for those that only move data); concatenation and
 *   split take st_tensors and read it from their shapes.
 * - Kernels neither allocate nor fail: callers check shapes and parameters
 *   first (the std plugin's prepare functions do). Scratch memory, where a
 *   kernel needs any, is the caller's and its size comes from a *_bytes
 *   function.
 * - A kernel that takes a ctx splits its work over ctx->parallel_for when
 *   there is enough of it; ctx NULL runs everything on the calling thread.
 * - A kernel named *_ref is the plain reference version of the kernel of
 *   the same name without the suffix; the unit tests check the fast one
 *   against it. References are written for clarity, not speed.
 * - Outputs never overlap inputs unless a kernel says so.
 */

/* Runs fn over [0, n) on ctx's threads in ranges of at least grain items,
 * or on the calling thread when ctx is NULL, single-threaded or n small. */
static inline void
k_parallel(const st_exec_ctx *ctx, int64_t n, int64_t grain, st_range_fn fn, void *arg)
{
	if (n <= 0)
		return;
	if (ctx != NULL && ctx->n_threads > 1 && ctx->parallel_for != NULL && n > grain)
		ctx->parallel_for(ctx, n, grain, fn, arg);
	else
		fn(arg, 0, n);
}

/* Work below this many elements (or bytes, for copies) stays on one thread. */
#define K_GRAIN 32768

/* ------------------------------------------------------------------------
 * k-convert.c: dtypes, float16, layouts
 * ------------------------------------------------------------------------ */

/* Bytes per element: 4, 2, 8, 4, 1, 1, 1. */
size_t k_dtype_size(st_dtype t);
/* Elements of a shape (1 for rank 0); the shape must have been checked. */
int64_t k_elements(const st_shape *s);

/* IEEE binary16 <-> binary32. half_to_float is exact for every pattern;
 * float_to_half rounds to nearest even, overflows to infinity and keeps a
 * NaN a NaN (quiet, with the top of its payload, as x86's F16C does). Both
 * agree bit for bit with the F16C instructions. */
float k_half_to_float(uint16_t h);
uint16_t k_float_to_half(float f);
/* Arrays of them: F16C when the CPU has it (checked once), the portable
 * code otherwise. */
void k_half_to_float_array(const uint16_t *src, float *dst, int64_t n);
void k_float_to_half_array(const float *src, uint16_t *dst, int64_t n);
/* Whether the F16C paths may run on this CPU. */
bool k_have_f16c(void);
/* The two paths by name, for tests: the _f16c ones only when k_have_f16c(). */
void k_half_to_float_portable(const uint16_t *src, float *dst, int64_t n);
void k_float_to_half_portable(const float *src, uint16_t *dst, int64_t n);
void k_half_to_float_f16c(const uint16_t *src, float *dst, int64_t n);
void k_float_to_half_f16c(const float *src, uint16_t *dst, int64_t n);

/*
 * Converts n elements between any two dtypes. Floats to integers truncate
 * toward zero and saturate at the type's range (NaN gives 0); anything to
 * bool gives 1 for non-zero (NaN included), 0 otherwise; integers to float16
 * go through float32. Same dtype copies. src and dst must not overlap.
 */
void k_convert(const void *src, st_dtype from, void *dst, st_dtype to, int64_t n);
/* Writes v as one element of dtype t at out (k_dtype_size(t) bytes),
 * converted as k_convert converts a float (integers exactly when v is a
 * whole number in range). */
void k_scalar(double v, st_dtype t, void *out);
/* Whether a float32 value converts to dtype t without loss (a whole number
 * in range for integer types, 0 or 1 for bool, in range for float16). */
bool k_float_fits(float v, st_dtype t);

/*
 * Layout transposes of a tensor with logical shape (N, C, spatial...) of rank
 * 3 or more: NCHW storage to NHWC storage (channels last) and back. elem is
 * the element size in bytes. shape is the logical shape in both directions.
 */
void k_nchw_to_nhwc(const void *src, void *dst, const st_shape *shape, size_t elem,
                    const st_exec_ctx *ctx);
void k_nhwc_to_nchw(const void *src, void *dst, const st_shape *shape, size_t elem,
                    const st_exec_ctx *ctx);

/* ------------------------------------------------------------------------
 * k-eltwise.c: element-wise arithmetic, linear blend, softmax
 * ------------------------------------------------------------------------ */

/* Binary operations, in the order of the elementwise layer's operation enum. */
typedef enum k_op {
	K_OP_ADD,
	K_OP_SUB,
	K_OP_MUL,
	K_OP_DIV,
	K_OP_MAX,
	K_OP_MIN,
	K_OP_COUNT
} k_op;

/*
 * Whether k_binary computes op in dtype t: every op on float32; add, sub,
 * mul, max and min on int64, int32, int8 and uint8 (wrapping around on
 * overflow, as two's complement hardware and numpy do). Integer division is
 * not offered: runtimes disagree on rounding negative quotients.
 */
bool k_binary_supports(k_op op, st_dtype t);

/*
 * out = a op b element by element, a and b broadcast to out's shape by
 * numpy's rules (aligned at the last axis; sizes equal or 1; a missing
 * leading axis counts as 1). Max and min propagate NaN. out may be a itself
 * when a has out's shape (for folding several inputs); b must not overlap
 * out.
 */
void k_binary(k_op op, st_dtype t, void *out, const st_shape *out_shape, const void *a,
              const st_shape *a_shape, const void *b, const st_shape *b_shape,
              const st_exec_ctx *ctx);
void k_binary_ref(k_op op, st_dtype t, void *out, const st_shape *out_shape, const void *a,
                  const st_shape *a_shape, const void *b, const st_shape *b_shape);

/* out = a op b on n float16 values of one shape (out may be a), each
 * widened, computed in float32 as k_binary does and narrowed (round to
 * nearest even). */
void k_binary_half(k_op op, uint16_t *out, const uint16_t *a, const uint16_t *b, int64_t n,
                   const st_exec_ctx *ctx);

/* out = alpha·a + (1 − alpha)·b in float32, broadcast as k_binary. */
void k_linear_blend(float alpha, float *out, const st_shape *out_shape, const float *a,
                    const st_shape *a_shape, const float *b, const st_shape *b_shape,
                    const st_exec_ctx *ctx);
void k_linear_blend_ref(float alpha, float *out, const st_shape *out_shape, const float *a,
                        const st_shape *a_shape, const float *b, const st_shape *b_shape);

/*
 * Softmax of x viewed as [outer, len, inner] along the middle axis:
 * exp(x − max) / Σ exp(x − max), so large inputs cannot overflow. A NaN
 * or +inf anywhere in a row makes the whole row NaN (exp(inf − inf)).
 * y may be x.
 */
void k_softmax(const float *x, float *y, int64_t outer, int64_t len, int64_t inner,
               const st_exec_ctx *ctx);
void k_softmax_ref(const float *x, float *y, int64_t outer, int64_t len, int64_t inner);

/* ------------------------------------------------------------------------
 * k-shape.c: data movement, by element size
 * ------------------------------------------------------------------------ */

/* Copies bytes (nothing when dst == src). */
void k_copy(void *dst, const void *src, size_t bytes, const st_exec_ctx *ctx);
/* Sets n elements of elem bytes each to the element at value. */
void k_fill(void *dst, int64_t n, const void *value, size_t elem, const st_exec_ctx *ctx);

/*
 * Concatenation of in[0..n) along axis into out: every part has out's shape
 * except along axis. split is the inverse: out[i] takes its size along
 * axis from the input, in order. Element sizes come from out's dtype.
 */
void k_concat(const st_tensor *in, int n, int axis, st_tensor *out, const st_exec_ctx *ctx);
void k_concat_ref(const st_tensor *in, int n, int axis, st_tensor *out);
void k_split(const st_tensor *in, int axis, st_tensor *out, int n, const st_exec_ctx *ctx);
void k_split_ref(const st_tensor *in, int axis, st_tensor *out, int n);

/* out = in with its axes permuted: output axis i is input axis perm[i]. */
void k_transpose(const void *in, const st_shape *in_shape, const int *perm, void *out, size_t elem,
                 const st_exec_ctx *ctx);
void k_transpose_ref(const void *in, const st_shape *in_shape, const int *perm, void *out,
                     size_t elem);

/*
 * Strided selection: out index o on axis k reads input index
 * start[k] + o·step[k] (step may be negative; every index read must lie
 * in the input, as Slice's clamping guarantees).
 */
void k_slice(const void *in, const st_shape *in_shape, const int64_t *start, const int64_t *step,
             void *out, const st_shape *out_shape, size_t elem, const st_exec_ctx *ctx);
void k_slice_ref(const void *in, const st_shape *in_shape, const int64_t *start,
                 const int64_t *step, void *out, const st_shape *out_shape, size_t elem);

typedef enum k_pad_mode {
	K_PAD_CONSTANT, /* the fill element */
	K_PAD_REFLECT,  /* mirrored without repeating the edge element */
	K_PAD_EDGE      /* copies of the edge element */
} k_pad_mode;

/*
 * Pads (and crops) every axis: begin[k] elements are added before axis k
 * (removed when negative), and out_shape says how large each axis becomes,
 * so the end pads are out − in − begin. Negative pads crop first; reflect
 * and edge then see only what is left, which must be larger than a reflect
 * pad and not empty for an edge pad. fill is one element, for constant.
 */
void k_pad(const void *in, const st_shape *in_shape, const int64_t *begin, k_pad_mode mode,
           const void *fill, void *out, const st_shape *out_shape, size_t elem,
           const st_exec_ctx *ctx);
void k_pad_ref(const void *in, const st_shape *in_shape, const int64_t *begin, k_pad_mode mode,
               const void *fill, void *out, const st_shape *out_shape, size_t elem);

/* ONNX SpaceToDepth on N, C, H, W: block×block tiles move into channels. */
void k_space_to_depth(const void *in, const st_shape *in_shape, int64_t block, void *out,
                      size_t elem, const st_exec_ctx *ctx);
/* ONNX DepthToSpace; crd selects mode CRD (PixelShuffle), else DCR. */
void k_depth_to_space(const void *in, const st_shape *in_shape, int64_t block, bool crd, void *out,
                      size_t elem, const st_exec_ctx *ctx);

/* ------------------------------------------------------------------------
 * k-resize.c: ONNX Resize (opset 13 to 19, without roi and antialias)
 * ------------------------------------------------------------------------ */

typedef enum k_resize_mode { K_RESIZE_NEAREST, K_RESIZE_LINEAR, K_RESIZE_CUBIC } k_resize_mode;
/* In the order of the resize layer's coordinate_transformation_mode enum. */
typedef enum k_coord_mode {
	K_COORD_HALF_PIXEL,
	K_COORD_HALF_PIXEL_SYMMETRIC,
	K_COORD_PYTORCH_HALF_PIXEL,
	K_COORD_ALIGN_CORNERS,
	K_COORD_ASYMMETRIC,
	K_COORD_TF_HALF_PIXEL_FOR_NN
} k_coord_mode;
/* In the order of the resize layer's nearest_mode enum. */
typedef enum k_nearest_mode {
	K_NEAREST_ROUND_PREFER_FLOOR,
	K_NEAREST_ROUND_PREFER_CEIL,
	K_NEAREST_FLOOR,
	K_NEAREST_CEIL
} k_nearest_mode;

/*
 * What a resize does. scales[k] is the factor of axis k as ONNX uses it in
 * the coordinate mapping: the given scale when the output size came from
 * scales, out/in when it came from sizes (1 for untouched axes). Coordinates
 * are computed in float32 with ONNX Runtime's expressions, so nearest
 * rounding agrees with it even at ties.
 */
typedef struct k_resize_desc {
	k_resize_mode mode;
	k_coord_mode coord;
	k_nearest_mode nearest;
	float cubic_a;        /* cubic kernel coefficient, -0.75 in PyTorch */
	bool exclude_outside; /* cubic: drop taps outside the input, renormalise */
	float scales[ST_MAX_RANK];
} k_resize_desc;

/*
 * The mapping of one axis, precomputed: for output index o, taps input
 * indices index[o·taps + j] with weights weight[o·taps + j] (taps is 1 for
 * nearest, 2 linear, 4 cubic). A plan lives in caller memory of
 * k_resize_plan_bytes (which includes the struct).
 */
typedef struct k_resize_axis {
	int taps;
	bool identity; /* output index o reads input index o with weight 1 */
	int64_t *index;
	float *weight;
} k_resize_axis;

typedef struct k_resize_plan {
	k_resize_desc desc;
	st_shape in, out;
	k_resize_axis axis[ST_MAX_RANK];
} k_resize_plan;

size_t k_resize_plan_bytes(const k_resize_desc *d, const st_shape *in, const st_shape *out);
/* Fills a plan in memory (k_resize_plan_bytes of it, 8-byte aligned); returns it. */
k_resize_plan *k_resize_plan_init(void *memory, const k_resize_desc *d, const st_shape *in,
                                  const st_shape *out);
/* Scratch k_resize needs (0 for nearest, and when one pass suffices). */
size_t k_resize_scratch_bytes(const k_resize_plan *p);
/* Nearest moves elements of any size; linear and cubic need float32 (elem 4). */
void k_resize(const k_resize_plan *p, const void *in, void *out, size_t elem, void *scratch,
              const st_exec_ctx *ctx);
/* The reference: every output element from the definition, no tables. */
void k_resize_ref(const k_resize_desc *d, const void *in, const st_shape *in_shape, void *out,
                  const st_shape *out_shape, size_t elem);

/* ------------------------------------------------------------------------
 * k-activation.c: activations in place on float32
 * ------------------------------------------------------------------------ */

typedef enum k_act {
	K_ACT_RELU,
	K_ACT_LEAKY_RELU,  /* a: alpha; also prelu with one slope */
	K_ACT_ELU,         /* a: alpha */
	K_ACT_SELU,        /* a: alpha, b: gamma */
	K_ACT_SIGMOID,
	K_ACT_TANH,
	K_ACT_SOFTPLUS,
	K_ACT_HARD_SIGMOID, /* a: alpha, b: beta */
	K_ACT_HARD_SWISH,
	K_ACT_SILU,
	K_ACT_GELU,         /* erf */
	K_ACT_GELU_TANH,
	K_ACT_MISH,
	K_ACT_CLIP,         /* a: min, b: max */
	K_ACT_COUNT
} k_act;

/* Applies act with coefficients a and b to x[0..n) in place. */
void k_activation(k_act act, float a, float b, float *x, int64_t n);
void k_activation_ref(k_act act, float a, float b, float *x, int64_t n);
/* prelu with a slope per element: x[i] < 0 becomes slope[i]·x[i]. */
void k_prelu(float *x, int64_t n, const float *slope);
/* y[i] = e^(x[i] − shift) with the fast exp; returns Σ y[i]. y may be x. */
float k_exp_sum(const float *x, float *y, int64_t n, float shift);
/* y[i] = e^(x[i] − shift[i]) with the fast exp. y may be x. */
void k_exp_minus(const float *x, const float *shift, float *y, int64_t n);

#endif
