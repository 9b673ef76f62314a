/* CUDA kernels: one .cu per operation, each launched through a plain C
 * function that checks its launch. Every function takes device pointers and
 * a stream, queues its work and returns cudaSuccess or the launch's error
 * (as int, so that C callers need only cuda_runtime_api.h); errors of the
 * work itself show at the next synchronisation. */
#ifndef KC_H
#define KC_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- kc-convert.cu: precision and layout conversions ---- */

/* y[i] = x[i] rounded to the nearest IEEE binary16 (ties to even), for n
 * values; y holds the half values' bits. */
int kc_float_to_half(const float *x, uint16_t *y, int64_t n, cudaStream_t stream);
/* y[i] = x[i] widened exactly. */
int kc_half_to_float(const uint16_t *x, float *y, int64_t n, cudaStream_t stream);
/*
 * Layout conversions of batch images of channels x positions elements of
 * elem_size bytes (2 or 4): NCHW -> NHWC transposes each image's
 * channels x positions matrix, NHWC -> NCHW transposes it back. x and y
 * must not overlap.
 */
int kc_nchw_to_nhwc(const void *x, void *y, int64_t batch, int64_t channels, int64_t positions, int elem_size,
                    cudaStream_t stream);
int kc_nhwc_to_nchw(const void *x, void *y, int64_t batch, int64_t channels, int64_t positions, int elem_size,
                    cudaStream_t stream);

/* ---- kc-eltwise.cu: activations, bias, element-wise operations ----
 * Tensors are float32 (half 0) or IEEE binary16 bits (half 1); every
 * computation is in float32. */

typedef enum kc_act_kind {
	KC_ACT_NONE,
	KC_ACT_RELU,
	KC_ACT_LEAKY_RELU, /* a: alpha */
	KC_ACT_ELU,        /* a: alpha */
	KC_ACT_SELU,       /* a: alpha, b: gamma */
	KC_ACT_SIGMOID,
	KC_ACT_TANH,
	KC_ACT_SOFTPLUS,
	KC_ACT_HARD_SIGMOID, /* a: alpha, b: beta */
	KC_ACT_HARD_SWISH,
	KC_ACT_SILU,
	KC_ACT_GELU,       /* erf form */
	KC_ACT_GELU_TANH,  /* tanh approximation */
	KC_ACT_MISH,
	KC_ACT_CLIP        /* a: min, b: max */
} kc_act_kind;

typedef struct kc_act {
	kc_act_kind kind;
	float a, b;
} kc_act;

/*
 * y = act(x + bias[channel]) over batch images of channels x positions
 * values, channels last when nhwc; bias may be NULL (float32, device
 * memory). x and y may be the same buffer.
 */
int kc_bias_act(const void *x, void *y, int half, int nhwc, int64_t batch, int64_t channels, int64_t positions,
                const float *bias, kc_act act, cudaStream_t stream);
/*
 * y = act(scale[c] * x + shift[c]): batch normalisation folded into a
 * scale and shift per channel (float32, device memory).
 */
int kc_scale_shift_act(const void *x, void *y, int half, int nhwc, int64_t batch, int64_t channels,
                       int64_t positions, const float *scale, const float *shift, kc_act act, cudaStream_t stream);

/* Batch normalisation as a scale and shift per channel:
 * a = scale / sqrt(variance + epsilon), b = bias - mean * a (device memory). */
int kc_batch_norm_fold(const float *scale, const float *bias, const float *mean, const float *variance,
                       float epsilon, float *a, float *b, int64_t channels, cudaStream_t stream);

typedef enum kc_binary { KC_ADD, KC_SUB, KC_MUL, KC_DIV, KC_MAX, KC_MIN } kc_binary;

/* Most dimensions kc_eltwise broadcasts over. */
#define KC_MAX_DIMS 8

/*
 * y = act(a op b) with NumPy broadcasting: y has rank dims of out[];
 * a_strides and b_strides give each operand's element stride along each
 * output dimension (0 where it is broadcast). Strides, not shapes, so
 * that the caller decides layouts.
 */
int kc_eltwise(const void *a, const void *b, void *y, int half, int rank, const int64_t *out,
               const int64_t *a_strides, const int64_t *b_strides, kc_binary op, kc_act act, cudaStream_t stream);

/*
 * Resampling with per-axis tables (a resize's plan, made on the host):
 * output index o of axis d reads input indices index[off[d] + o * taps[d]
 * + j] with weights weight[same], j < taps[d]; the output value is the sum
 * over every combination of one tap per axis of the product of weights
 * times the input value there. Row-major tensors of rank dims, rank at
 * most KC_MAX_DIMS; index and weight are device memory.
 */
typedef struct kc_resample {
	int rank;
	int64_t in[KC_MAX_DIMS], out[KC_MAX_DIMS];
	int taps[KC_MAX_DIMS];
	int64_t off[KC_MAX_DIMS];
} kc_resample;
int kc_resize(const void *x, void *y, int half, const kc_resample *g, const int64_t *index, const float *weight,
              cudaStream_t stream);

/* Softmax over `axis` of a tensor seen as outer x axis x inner values. */
int kc_softmax(const void *x, void *y, int half, int64_t outer, int64_t axis, int64_t inner, cudaStream_t stream);

/* Global max or average pooling: batch images of channels x positions to
 * batch x channels (channels last in and out when nhwc). */
int kc_global_pool(const void *x, void *y, int half, int nhwc, int64_t batch, int64_t channels,
                   int64_t positions, int average, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
