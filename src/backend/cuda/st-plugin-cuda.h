/* What layer implementations for the cuda backend receive beside the plugin
 * ABI (st-plugin.h): st_exec_ctx.device->native points at this. Include it
 * from CUDA implementations only; it brings the CUDA, cuDNN and cuBLAS
 * headers. */
#ifndef ST_PLUGIN_CUDA_H
#define ST_PLUGIN_CUDA_H

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>
#include <string.h>

#include "st-plugin.h"

typedef struct st_cuda_native {
	int device;              /* the CUDA device index */
	int arch;                /* compute capability as 10 * major + minor: 90 for sm_90 */
	cudaStream_t stream;     /* every launch and copy of the plan goes here */
	cudnnHandle_t cudnn;     /* bound to stream */
	cublasHandle_t cublas;   /* bound to stream; TF32 only with --allow-tf32 */
	cublasLtHandle_t cublas_lt;
} st_cuda_native;

/* The native handles of ctx's device, or NULL when ctx runs on no CUDA device. */
static inline const st_cuda_native *
st_cuda_native_of(const st_exec_ctx *ctx)
{
	if (ctx == NULL || ctx->device == NULL || ctx->device->backend == NULL ||
	    strcmp(ctx->device->backend, "cuda") != 0)
		return NULL;
	return (const st_cuda_native *)ctx->device->native;
}

#endif
