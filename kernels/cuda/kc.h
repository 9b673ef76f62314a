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

#ifdef __cplusplus
}
#endif

#endif
