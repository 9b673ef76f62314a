/* std-cuda: the std layers on the cuda backend (plugin std-cuda.so, loaded
 * only when a plan runs there: src/core/core-registry.c defers *-cuda.so).
 * Layer types come from std; this plugin registers implementations only.
 * Every CUDA, cuDNN and cuBLAS call is checked, and a failure names the
 * call (api->fail, which the host prefixes with the layer's name). */
#ifndef STD_CUDA_H
#define STD_CUDA_H

#include <stdbool.h>
#include <stdint.h>

#include "k-nn.h"
#include "kc.h"
#include "st-plugin-cuda.h"
#include "std.h"

/* The host's table, kept by the entry point (kernels' half conversions,
 * names of dtypes in messages). */
extern const st_host_api *scu_host;

/* ---- std-cuda.c: shared helpers ---- */

/* L's CUDA handles (its ctx is a cuda device's). */
const st_cuda_native *scu_native(const st_exec_layer *L);
/* 0 when the call succeeded; otherwise api->fail("call: error text") and -1. */
int scu_cuda(st_exec_layer *L, cudaError_t e, const char *call);
int scu_cudnn(st_exec_layer *L, cudnnStatus_t s, const char *call);
int scu_cublas(st_exec_layer *L, cublasStatus_t s, const char *call);
/* L's attached activation as a kc_act (KC_ACT_NONE without one); -1 after
 * api->fail for one the kernels lack (prelu). */
int scu_act_of(st_exec_layer *L, kc_act *out);
/* Whether t is float16 (else float32; implementations take no other). */
bool scu_half(const st_tensor *t);
/* Elements of a shape. */
int64_t scu_elements(const st_shape *s);
/* Device memory of bytes for L's state, freed with scu_free; NULL after
 * api->fail. */
void *scu_alloc(st_exec_layer *L, size_t bytes);
void scu_free(const st_exec_layer *L, void *ptr);
/*
 * A float32 NCHW-style filter (out x in x taps, on the device) as the
 * convolution computes with it: converted to float16 when half, and to
 * out x taps x in (channels last, KRSC) when nhwc. Written to dst (device
 * memory of out * in * taps elements of the target type); tmp holds
 * out * in * taps float32 values when both change. Enqueued on L's stream.
 */
int scu_filter_to(st_exec_layer *L, const float *src, void *dst, void *tmp, int64_t out, int64_t in, int64_t taps,
                  bool half, bool nhwc);

/* ---- the implementation tables ---- */
extern const st_impl_desc scu_conv_impls[]; /* std-cuda-conv.c: convolution, pooling */
extern const int scu_conv_impl_count;
extern const st_impl_desc scu_tensor_impls[]; /* std-cuda-tensor.c: element-wise, norms, shapes */
extern const int scu_tensor_impl_count;

#endif
