/* std-cuda: the entry point and the helpers every implementation shares.
 * The plugin registers implementations of std's layer types on the cuda
 * backend, and no types of its own: std must be loaded (it always is). */
#include "config.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "std-cuda.h"

const st_host_api *scu_host;

const st_cuda_native *
scu_native(const st_exec_layer *L)
{
	return (const st_cuda_native *)L->ctx->device->native;
}

int
scu_cuda(st_exec_layer *L, cudaError_t e, const char *call)
{
	if (e == cudaSuccess)
		return 0;
	scu_host->fail(L, "%s: %s (%s)", call, cudaGetErrorString(e), cudaGetErrorName(e));
	return -1;
}

int
scu_cudnn(st_exec_layer *L, cudnnStatus_t s, const char *call)
{
	if (s == CUDNN_STATUS_SUCCESS)
		return 0;
	scu_host->fail(L, "%s: %s", call, cudnnGetErrorString(s));
	return -1;
}

int
scu_cublas(st_exec_layer *L, cublasStatus_t s, const char *call)
{
	if (s == CUBLAS_STATUS_SUCCESS)
		return 0;
	scu_host->fail(L, "%s: %s", call, cublasGetStatusString(s));
	return -1;
}

bool
scu_half(const st_tensor *t)
{
	return t->shape.dtype == ST_DTYPE_FLOAT16;
}

int64_t
scu_elements(const st_shape *s)
{
	int64_t n = 1;
	for (int i = 0; i < s->rank; i++)
		n *= s->dims[i];
	return n;
}

void *
scu_alloc(st_exec_layer *L, size_t bytes)
{
	st_device *dev = L->ctx->device;
	void *p = dev->alloc(dev, bytes);
	if (p == NULL)
		scu_host->fail(L, "%s", dev->error(dev));
	return p;
}

void
scu_free(const st_exec_layer *L, void *ptr)
{
	if (ptr != NULL)
		L->ctx->device->free_mem(L->ctx->device, ptr);
}

/* An activation's kernel code by its std name; its coefficients by std's
 * parameter order (std.h). */
static const struct {
	const char *name;
	kc_act_kind kind;
} act_names[] = {
	{ "relu", KC_ACT_RELU },       { "leaky_relu", KC_ACT_LEAKY_RELU },     { "elu", KC_ACT_ELU },
	{ "selu", KC_ACT_SELU },       { "sigmoid", KC_ACT_SIGMOID },           { "tanh", KC_ACT_TANH },
	{ "softplus", KC_ACT_SOFTPLUS }, { "hard_sigmoid", KC_ACT_HARD_SIGMOID }, { "hard_swish", KC_ACT_HARD_SWISH },
	{ "silu", KC_ACT_SILU },       { "gelu", KC_ACT_GELU },                 { "mish", KC_ACT_MISH },
	{ "clip", KC_ACT_CLIP },
};

int
scu_act_of(st_exec_layer *L, kc_act *out)
{
	*out = (kc_act){ .kind = KC_ACT_NONE };
	if (L->act == NULL)
		return 0;
	const st_value *v = L->act_params;
	for (size_t i = 0; i < sizeof act_names / sizeof act_names[0]; i++) {
		if (strcmp(L->act->name, act_names[i].name) != 0)
			continue;
		out->kind = act_names[i].kind;
		switch (out->kind) {
		case KC_ACT_LEAKY_RELU:
			out->a = (float)v[LEAKY_RELU_ALPHA].f;
			break;
		case KC_ACT_ELU:
			out->a = (float)v[ELU_ALPHA].f;
			break;
		case KC_ACT_SELU:
			out->a = (float)v[SELU_ALPHA].f;
			out->b = (float)v[SELU_GAMMA].f;
			break;
		case KC_ACT_HARD_SIGMOID:
			out->a = (float)v[HARD_SIGMOID_ALPHA].f;
			out->b = (float)v[HARD_SIGMOID_BETA].f;
			break;
		case KC_ACT_GELU:
			if (v[GELU_APPROXIMATE].i == GELU_TANH)
				out->kind = KC_ACT_GELU_TANH;
			break;
		case KC_ACT_CLIP:
			out->a = (float)v[CLIP_MIN].f;
			out->b = (float)v[CLIP_MAX].f;
			break;
		default:
			break;
		}
		return 0;
	}
	scu_host->fail(L, "the cuda backend has no kernel for the activation %s", L->act->name);
	return -1;
}

int
scu_filter_to(st_exec_layer *L, const float *src, void *dst, void *tmp, int64_t out, int64_t in, int64_t taps,
              bool half, bool nhwc)
{
	cudaStream_t s = scu_native(L)->stream;
	int64_t n = out * in * taps;
	if (!half && !nhwc)
		return scu_cuda(L, cudaMemcpyAsync(dst, src, (size_t)n * sizeof(float), cudaMemcpyDeviceToDevice, s),
		                "cudaMemcpyAsync (filter)");
	if (!nhwc)
		return scu_cuda(L, (cudaError_t)kc_float_to_half(src, dst, n, s), "kc_float_to_half (filter)");
	/* out x in x taps to out x taps x in: each filter's in x taps matrix
	 * transposed, as a batch of out images of in channels. */
	if (!half)
		return scu_cuda(L, (cudaError_t)kc_nchw_to_nhwc(src, dst, out, in, taps, 4, s), "kc_nchw_to_nhwc (filter)");
	if (scu_cuda(L, (cudaError_t)kc_nchw_to_nhwc(src, tmp, out, in, taps, 4, s), "kc_nchw_to_nhwc (filter)") != 0)
		return -1;
	return scu_cuda(L, (cudaError_t)kc_float_to_half(tmp, dst, n, s), "kc_float_to_half (filter)");
}

static const st_plugin_info info = {
	.name = "std_cuda",
	.author = "Strata",
	.description = "the std layers on NVIDIA GPUs: cuDNN, cuBLAS and Strata's CUDA kernels",
	.version = "1.0",
};

int st_plugin_entry(const st_host_api *api, st_plugin_ctx *ctx);
const uint32_t st_plugin_abi = ST_PLUGIN_ABI_VERSION;

int
st_plugin_entry(const st_host_api *api, st_plugin_ctx *ctx)
{
	scu_host = api;
	api->declare(ctx, &info);
	/* Devices came with minor 8: an earlier host cannot run these. */
	if (api->size < offsetof(st_host_api, abi_minor) + sizeof api->abi_minor || api->abi_minor < 8) {
		api->refuse(ctx, "std-cuda needs a strata with plugin ABI 2.8 or later (devices)");
		return -1;
	}
	for (int i = 0; i < scu_conv_impl_count; i++)
		api->register_impl(ctx, &scu_conv_impls[i]);
	for (int i = 0; i < scu_tensor_impl_count; i++)
		api->register_impl(ctx, &scu_tensor_impls[i]);
	return 0;
}
