/* Activations, bias, batch normalisation folded to scale and shift,
 * element-wise operations with broadcasting, softmax and global pooling on
 * the device (kc.h). Values are loaded as float32 from float32 or float16
 * tensors, computed in float32, and stored back in the tensor's type. */
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>

#include "kc-launch.h"
#include "kc.h"


__device__ static inline float
load(const void *p, int half, int64_t i)
{
	return half ? __half2float(((const __half *)p)[i]) : ((const float *)p)[i];
}

__device__ static inline void
store(void *p, int half, int64_t i, float v)
{
	if (half)
		((__half *)p)[i] = __float2half_rn(v);
	else
		((float *)p)[i] = v;
}

__device__ static inline float
activate(float x, kc_act act)
{
	switch (act.kind) {
	case KC_ACT_NONE:
		return x;
	case KC_ACT_RELU:
		return x > 0.0f ? x : 0.0f;
	case KC_ACT_LEAKY_RELU:
		return x >= 0.0f ? x : act.a * x;
	case KC_ACT_ELU:
		return x >= 0.0f ? x : act.a * expm1f(x);
	case KC_ACT_SELU:
		return act.b * (x > 0.0f ? x : act.a * expm1f(x));
	case KC_ACT_SIGMOID:
		return 1.0f / (1.0f + expf(-x));
	case KC_ACT_TANH:
		return tanhf(x);
	case KC_ACT_SOFTPLUS:
		return x > 20.0f ? x : log1pf(expf(x));
	case KC_ACT_HARD_SIGMOID:
		return fminf(1.0f, fmaxf(0.0f, act.a * x + act.b));
	case KC_ACT_HARD_SWISH:
		return x * fminf(1.0f, fmaxf(0.0f, x / 6.0f + 0.5f));
	case KC_ACT_SILU:
		return x / (1.0f + expf(-x));
	case KC_ACT_GELU:
		return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
	case KC_ACT_GELU_TANH:
		return 0.5f * x * (1.0f + tanhf(0.79788456080286536f * (x + 0.044715f * x * x * x)));
	case KC_ACT_MISH:
		return x * tanhf(x > 20.0f ? x : log1pf(expf(x)));
	case KC_ACT_CLIP:
		return fminf(act.b, fmaxf(act.a, x));
	}
	return x;
}

/* The channel of element i of batch images of channels x positions. */
__device__ static inline int64_t
channel_of(int64_t i, int nhwc, int64_t channels, int64_t positions)
{
	return nhwc ? i % channels : i / positions % channels;
}

__global__ void
scale_shift_act(const void *x, void *y, int half, int nhwc, int64_t n, int64_t channels, int64_t positions,
                const float *scale, const float *shift, kc_act act)
{
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
		float v = load(x, half, i);
		if (scale != NULL || shift != NULL) {
			int64_t c = channel_of(i, nhwc, channels, positions);
			if (scale != NULL)
				v *= scale[c];
			if (shift != NULL)
				v += shift[c];
		}
		store(y, half, i, activate(v, act));
	}
}

extern "C" int
kc_scale_shift_act(const void *x, void *y, int half, int nhwc, int64_t batch, int64_t channels, int64_t positions,
                   const float *scale, const float *shift, kc_act act, cudaStream_t stream)
{
	int64_t n = batch * channels * positions;
	if (n <= 0)
		return cudaSuccess;
	scale_shift_act<<<kc_blocks_for(n), KC_THREADS, 0, stream>>>(x, y, half, nhwc, n, channels, positions, scale,
	                                                          shift, act);
	return (int)cudaGetLastError();
}

extern "C" int
kc_bias_act(const void *x, void *y, int half, int nhwc, int64_t batch, int64_t channels, int64_t positions,
            const float *bias, kc_act act, cudaStream_t stream)
{
	return kc_scale_shift_act(x, y, half, nhwc, batch, channels, positions, NULL, bias, act, stream);
}

/* The output's dimensions and both operands' strides, by value. */
typedef struct eltwise_geometry {
	int rank;
	int64_t out[KC_MAX_DIMS], a[KC_MAX_DIMS], b[KC_MAX_DIMS];
} eltwise_geometry;

__global__ void
eltwise(const void *a, const void *b, void *y, int half, int64_t n, eltwise_geometry g, kc_binary op, kc_act act)
{
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
		int64_t rest = i, ia = 0, ib = 0;
		for (int d = g.rank - 1; d >= 0; d--) {
			int64_t k = rest % g.out[d];
			rest /= g.out[d];
			ia += k * g.a[d];
			ib += k * g.b[d];
		}
		float u = load(a, half, ia), v = load(b, half, ib), r;
		switch (op) {
		case KC_ADD:
			r = u + v;
			break;
		case KC_SUB:
			r = u - v;
			break;
		case KC_MUL:
			r = u * v;
			break;
		case KC_DIV:
			r = u / v;
			break;
		case KC_MAX:
			r = fmaxf(u, v);
			break;
		default:
			r = fminf(u, v);
			break;
		}
		store(y, half, i, activate(r, act));
	}
}

extern "C" int
kc_eltwise(const void *a, const void *b, void *y, int half, int rank, const int64_t *out, const int64_t *a_strides,
           const int64_t *b_strides, kc_binary op, kc_act act, cudaStream_t stream)
{
	if (rank < 0 || rank > KC_MAX_DIMS)
		return (int)cudaErrorInvalidValue;
	eltwise_geometry g;
	g.rank = rank;
	int64_t n = 1;
	for (int d = 0; d < rank; d++) {
		g.out[d] = out[d];
		g.a[d] = a_strides[d];
		g.b[d] = b_strides[d];
		n *= out[d];
	}
	if (n <= 0)
		return cudaSuccess;
	eltwise<<<kc_blocks_for(n), KC_THREADS, 0, stream>>>(a, b, y, half, n, g, op, act);
	return (int)cudaGetLastError();
}

/* One block per (outer, inner) row: the maximum, then the sum of
 * exponentials, reduced in shared memory. */
__global__ void
softmax(const void *x, void *y, int half, int64_t outer, int64_t axis, int64_t inner)
{
	__shared__ float part[KC_THREADS];
	for (int64_t row = blockIdx.x; row < outer * inner; row += gridDim.x) {
		int64_t o = row / inner, in = row % inner;
		int64_t base = o * axis * inner + in;
		float m = -INFINITY;
		for (int64_t k = threadIdx.x; k < axis; k += blockDim.x)
			m = fmaxf(m, load(x, half, base + k * inner));
		part[threadIdx.x] = m;
		__syncthreads();
		for (int s = blockDim.x / 2; s > 0; s /= 2) {
			if ((int)threadIdx.x < s)
				part[threadIdx.x] = fmaxf(part[threadIdx.x], part[threadIdx.x + s]);
			__syncthreads();
		}
		m = part[0];
		__syncthreads();
		float sum = 0.0f;
		for (int64_t k = threadIdx.x; k < axis; k += blockDim.x)
			sum += expf(load(x, half, base + k * inner) - m);
		part[threadIdx.x] = sum;
		__syncthreads();
		for (int s = blockDim.x / 2; s > 0; s /= 2) {
			if ((int)threadIdx.x < s)
				part[threadIdx.x] += part[threadIdx.x + s];
			__syncthreads();
		}
		sum = part[0];
		__syncthreads();
		for (int64_t k = threadIdx.x; k < axis; k += blockDim.x)
			store(y, half, base + k * inner, expf(load(x, half, base + k * inner) - m) / sum);
	}
}

extern "C" int
kc_softmax(const void *x, void *y, int half, int64_t outer, int64_t axis, int64_t inner, cudaStream_t stream)
{
	int64_t rows = outer * inner;
	if (rows <= 0 || axis <= 0)
		return cudaSuccess;
	unsigned blocks = (unsigned)(rows > KC_MAX_BLOCKS ? KC_MAX_BLOCKS : rows);
	softmax<<<blocks, KC_THREADS, 0, stream>>>(x, y, half, outer, axis, inner);
	return (int)cudaGetLastError();
}

/* One block per (image, channel): max or mean over the positions. */
__global__ void
global_pool(const void *x, void *y, int half, int nhwc, int64_t batch, int64_t channels, int64_t positions,
            int average)
{
	__shared__ float part[KC_THREADS];
	for (int64_t row = blockIdx.x; row < batch * channels; row += gridDim.x) {
		int64_t b = row / channels, c = row % channels;
		float acc = average ? 0.0f : -INFINITY;
		for (int64_t p = threadIdx.x; p < positions; p += blockDim.x) {
			int64_t i = nhwc ? (b * positions + p) * channels + c : row * positions + p;
			float v = load(x, half, i);
			acc = average ? acc + v : fmaxf(acc, v);
		}
		part[threadIdx.x] = acc;
		__syncthreads();
		for (int s = blockDim.x / 2; s > 0; s /= 2) {
			if ((int)threadIdx.x < s)
				part[threadIdx.x] = average ? part[threadIdx.x] + part[threadIdx.x + s]
				                            : fmaxf(part[threadIdx.x], part[threadIdx.x + s]);
			__syncthreads();
		}
		if (threadIdx.x == 0)
			store(y, half, row, average ? part[0] / (float)positions : part[0]);
		__syncthreads();
	}
}

extern "C" int
kc_global_pool(const void *x, void *y, int half, int nhwc, int64_t batch, int64_t channels, int64_t positions,
               int average, cudaStream_t stream)
{
	int64_t rows = batch * channels;
	if (rows <= 0 || positions <= 0)
		return cudaSuccess;
	unsigned blocks = (unsigned)(rows > KC_MAX_BLOCKS ? KC_MAX_BLOCKS : rows);
	global_pool<<<blocks, KC_THREADS, 0, stream>>>(x, y, half, nhwc, batch, channels, positions, average);
	return (int)cudaGetLastError();
}

__global__ void
batch_norm_fold(const float *scale, const float *bias, const float *mean, const float *variance, float epsilon,
                float *a, float *b, int64_t channels)
{
	for (int64_t c = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; c < channels;
	     c += (int64_t)gridDim.x * blockDim.x) {
		double factor = (double)scale[c] / sqrt((double)variance[c] + (double)epsilon);
		a[c] = (float)factor;
		b[c] = (float)((double)bias[c] - (double)mean[c] * factor);
	}
}

extern "C" int
kc_batch_norm_fold(const float *scale, const float *bias, const float *mean, const float *variance, float epsilon,
                   float *a, float *b, int64_t channels, cudaStream_t stream)
{
	if (channels <= 0)
		return cudaSuccess;
	batch_norm_fold<<<kc_blocks_for(channels), KC_THREADS, 0, stream>>>(scale, bias, mean, variance, epsilon, a, b,
	                                                                 channels);
	return (int)cudaGetLastError();
}

__global__ void
resize(const void *x, void *y, int half, int64_t n, kc_resample g, const int64_t *index, const float *weight)
{
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
		int64_t o[KC_MAX_DIMS], rest = i;
		for (int d = g.rank - 1; d >= 0; d--) {
			o[d] = rest % g.out[d];
			rest /= g.out[d];
		}
		int combos = 1;
		for (int d = 0; d < g.rank; d++)
			combos *= g.taps[d];
		float acc = 0.0f;
		for (int c = 0; c < combos; c++) {
			int r = c;
			int64_t at = 0;
			float w = 1.0f;
			for (int d = g.rank - 1; d >= 0; d--) {
				int j = r % g.taps[d];
				r /= g.taps[d];
				int64_t t = g.off[d] + o[d] * g.taps[d] + j;
				int64_t stride = 1;
				for (int e = d + 1; e < g.rank; e++)
					stride *= g.in[e];
				at += index[t] * stride;
				w *= weight[t];
			}
			if (w != 0.0f)
				acc += w * load(x, half, at);
		}
		store(y, half, i, acc);
	}
}

extern "C" int
kc_resize(const void *x, void *y, int half, const kc_resample *g, const int64_t *index, const float *weight,
          cudaStream_t stream)
{
	if (g->rank < 0 || g->rank > KC_MAX_DIMS)
		return (int)cudaErrorInvalidValue;
	int64_t n = 1;
	for (int d = 0; d < g->rank; d++)
		n *= g->out[d];
	if (n <= 0)
		return cudaSuccess;
	resize<<<kc_blocks_for(n), KC_THREADS, 0, stream>>>(x, y, half, n, *g, index, weight);
	return (int)cudaGetLastError();
}
