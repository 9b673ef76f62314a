/* std-cuda: convolution, transposed convolution and pooling on the cuda
 * backend, through cuDNN's legacy API (present in cuDNN 9, deprecated only
 * under CUDNN_WARN_DEPRECATED): 2-D images, NCHW or NHWC, float32 or
 * float16. */
#include "config.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "std-cuda.h"

/*
 * The most workspace an algorithm may ask for and still be taken first:
 * the heuristics' best algorithm above this gives way to the next one
 * under it. Where none is under it, the smallest that works is taken.
 */
#define CONV_WORKSPACE_LIMIT ((size_t)256 << 20)

/* cuDNN's scaling factors: float for float and half data alike. They are
 * read on the host during the call. */
static const float scale_one = 1.0f, scale_zero = 0.0f;

/* ---- shared by convolution and pooling ---- */

/*
 * Checks that L runs on a cuda device and that its input 0 and output 0
 * are float32 or float16 rank-4 images, alike in dtype and in layout
 * (NCHW or NHWC); what names the layer type in messages. 0, or -1 after
 * api->fail.
 */
static int
image_tensors(st_exec_layer *L, const st_host_api *api, const char *what)
{
	if (st_cuda_native_of(L->ctx) == NULL) {
		api->fail(L, "the cuda %s runs on a cuda device only", what);
		return -1;
	}
	const st_tensor *in = &L->inputs[0], *out = &L->outputs[0];
	st_dtype t = in->shape.dtype;
	if ((t != ST_DTYPE_FLOAT32 && t != ST_DTYPE_FLOAT16) || out->shape.dtype != t) {
		api->fail(L, "the cuda %s computes on float32 or float16 tensors alike, but its input is %s and its "
		             "output %s", what, api->dtype_name(t), api->dtype_name(out->shape.dtype));
		return -1;
	}
	if ((in->layout != ST_LAYOUT_NCHW && in->layout != ST_LAYOUT_NHWC) || out->layout != in->layout) {
		api->fail(L, "the cuda %s takes NCHW or NHWC tensors, the same for input and output", what);
		return -1;
	}
	if (in->shape.rank != 4 || out->shape.rank != 4) {
		api->fail(L, "the cuda %s takes 2-D images only for now", what);
		return -1;
	}
	return 0;
}

/* v as an int for cuDNN into *out; what names it in the message. 0, or -1
 * after api->fail. */
static int
to_int(st_exec_layer *L, const st_host_api *api, int64_t v, const char *what, int *out)
{
	if (v < 0 || v > INT_MAX) {
		api->fail(L, "%s %" PRId64 " is out of cuDNN's range (0 to %d)", what, v, INT_MAX);
		return -1;
	}
	*out = (int)v;
	return 0;
}

/*
 * Sets d to describe t (a rank-4 image whose dtype and layout
 * image_tensors checked): logical dimensions N, C, H, W, whichever the
 * layout; what names the tensor in messages. 0, or -1 after api->fail.
 */
static int
image_desc(st_exec_layer *L, const st_host_api *api, cudnnTensorDescriptor_t d, const st_tensor *t,
           const char *what)
{
	int dims[4];
	for (int i = 0; i < 4; i++) {
		if (to_int(L, api, t->shape.dims[i], what, &dims[i]) != 0)
			return -1;
	}
	cudnnTensorFormat_t format = t->layout == ST_LAYOUT_NHWC ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
	cudnnDataType_t type = scu_half(t) ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
	return scu_cudnn(L, cudnnSetTensor4dDescriptor(d, format, type, dims[0], dims[1], dims[2], dims[3]),
	                 "cudnnSetTensor4dDescriptor");
}

/* Creates *d unless it exists. 0, or -1 after api->fail. */
static int
tensor_desc_made(st_exec_layer *L, cudnnTensorDescriptor_t *d)
{
	if (*d != NULL)
		return 0;
	return scu_cudnn(L, cudnnCreateTensorDescriptor(d), "cudnnCreateTensorDescriptor");
}

/*
 * Whether L's input or output has no element (a batch of 0): run then
 * has nothing to do, and cuDNN, which refuses empty tensors, is not
 * asked.
 */
static bool
empty_images(const st_exec_layer *L)
{
	return scu_elements(&L->inputs[0].shape) == 0 || scu_elements(&L->outputs[0].shape) == 0;
}

/*
 * Fails unless cuDNN's output dimensions (got, N C H W) are L's output
 * shape; w gives the pads for the message, what names the layer type and
 * why says what may cause a difference. 0, or -1 after api->fail.
 */
static int
output_matches(st_exec_layer *L, const st_host_api *api, const int got[4], const k_window *w, const char *what,
               const char *why)
{
	const int64_t *want = L->outputs[0].shape.dims;
	bool same = true;
	for (int i = 0; i < 4; i++)
		same = same && got[i] == want[i];
	if (same)
		return 0;
	api->fail(L, "cuDNN pads both ends of an axis alike, and with pads %" PRId64 ", %" PRId64 " (height) and %"
	             PRId64 ", %" PRId64 " (width) its %s computes an output of %dx%dx%dx%d where the layer has %"
	             PRId64 "x%" PRId64 "x%" PRId64 "x%" PRId64 " (%s)",
	          w->pad_begin[0], w->pad_end[0], w->pad_begin[1], w->pad_end[1], what, got[0], got[1], got[2],
	          got[3], want[0], want[1], want[2], want[3], why);
	return -1;
}

/* ---- convolution ---- */

/* What prepare works out for a convolution, and run uses. */
typedef struct conv_state {
	k_window w;
	bool half; /* float16 tensors (else float32) */
	bool nhwc; /* channels last (else NCHW) */
	bool empty; /* nothing to compute (empty_images) */
	/* Descriptors, created at the first prepare, set again at each and
	 * destroyed by release. */
	cudnnTensorDescriptor_t x_desc, y_desc, bias_desc;
	cudnnFilterDescriptor_t w_desc;
	cudnnConvolutionDescriptor_t conv_desc;
	cudnnActivationDescriptor_t act_desc;
	cudnnConvolutionFwdAlgo_t algo;
	/* A transposed convolution (deconvolution): cuDNN's backward data,
	 * whose "x" is the layer's output and "y" its input, with this
	 * algorithm; the filter is K = input channels by output channels per
	 * group. */
	bool deconv;
	cudnnConvolutionBwdDataAlgo_t bwd_algo;
	size_t workspace; /* bytes of L->scratch the algorithm uses */
	/* cudnnConvolutionBiasActivationForward computes bias and activation
	 * (float32 with a bias, and a relu or no activation); else
	 * cudnnConvolutionForward, then kc_bias_act where there is either. */
	bool fused;
	/*
	 * The filter as cuDNN takes it: float16 and/or KRSC, in device memory
	 * of the state (scu_alloc, freed by release), converted from
	 * weights[0] when weights were bound (generation, source) or the form
	 * changed. NULL for float32 NCHW, which uses weights[0] as it is.
	 */
	void *filter;
	size_t filter_bytes;
	uint64_t generation;
	const void *source;
	bool filter_half, filter_nhwc;
} conv_state;

/* The layer's convolution state, allocated at the first prepare (freed
 * by conv_release). */
static conv_state *
conv_state_of(st_exec_layer *L)
{
	if (L->state == NULL) {
		L->state = calloc(1, sizeof(conv_state));
		if (L->state == NULL)
			abort();
	}
	return L->state;
}

/* Frees a convolution's device memory, descriptors and state. */
static void
conv_release(st_exec_layer *L)
{
	conv_state *s = L->state;
	if (s == NULL)
		return;
	scu_free(L, s->filter);
	/* Destroying cannot usefully fail: the statuses are not looked at. */
	if (s->x_desc != NULL)
		(void)cudnnDestroyTensorDescriptor(s->x_desc);
	if (s->y_desc != NULL)
		(void)cudnnDestroyTensorDescriptor(s->y_desc);
	if (s->bias_desc != NULL)
		(void)cudnnDestroyTensorDescriptor(s->bias_desc);
	if (s->w_desc != NULL)
		(void)cudnnDestroyFilterDescriptor(s->w_desc);
	if (s->conv_desc != NULL)
		(void)cudnnDestroyConvolutionDescriptor(s->conv_desc);
	if (s->act_desc != NULL)
		(void)cudnnDestroyActivationDescriptor(s->act_desc);
	free(s);
	L->state = NULL;
}

/* Creates the descriptors s lacks. 0, or -1 after api->fail. */
static int
conv_descs_made(st_exec_layer *L, conv_state *s)
{
	if (tensor_desc_made(L, &s->x_desc) != 0 || tensor_desc_made(L, &s->y_desc) != 0 ||
	    tensor_desc_made(L, &s->bias_desc) != 0)
		return -1;
	if (s->w_desc == NULL &&
	    scu_cudnn(L, cudnnCreateFilterDescriptor(&s->w_desc), "cudnnCreateFilterDescriptor") != 0)
		return -1;
	if (s->conv_desc == NULL &&
	    scu_cudnn(L, cudnnCreateConvolutionDescriptor(&s->conv_desc), "cudnnCreateConvolutionDescriptor") != 0)
		return -1;
	if (s->act_desc == NULL &&
	    scu_cudnn(L, cudnnCreateActivationDescriptor(&s->act_desc), "cudnnCreateActivationDescriptor") != 0)
		return -1;
	return 0;
}

/*
 * The math type of s's convolution. Float16 runs on tensor cores
 * (accumulating in float32). Float32 with CUDNN_DEFAULT_MATH may run in
 * TF32 on Ampere and later, so strict float32 asks for CUDNN_FMA_MATH;
 * with --allow-tf32, CUDNN_TENSOR_OP_MATH permits TF32 (not
 * CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION, which may also narrow to
 * float16).
 */
static cudnnMathType_t
conv_math(const st_exec_layer *L, const conv_state *s)
{
	if (s->half)
		return CUDNN_TENSOR_OP_MATH;
	return L->ctx->device->allow_tf32 ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH;
}

/* Sets s's input, output, filter, convolution and bias descriptors for L
 * (window s->w). 0, or -1 after api->fail. */
static int
conv_set_descs(st_exec_layer *L, const st_host_api *api, conv_state *s)
{
	const k_window *w = &s->w;
	cudnnDataType_t type = s->half ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
	int k, c, kh, kw, groups, pad[2], stride[2], dilation[2], channels;
	if (image_desc(L, api, s->x_desc, &L->inputs[0], "an input dimension") != 0 ||
	    image_desc(L, api, s->y_desc, &L->outputs[0], "an output dimension") != 0 ||
	    to_int(L, api, w->out_channels, "num_output", &k) != 0 ||
	    to_int(L, api, w->in_channels / w->groups, "the input channels per group", &c) != 0 ||
	    to_int(L, api, w->kernel[0], "the kernel height", &kh) != 0 ||
	    to_int(L, api, w->kernel[1], "the kernel width", &kw) != 0 ||
	    to_int(L, api, w->groups, "groups", &groups) != 0 ||
	    to_int(L, api, w->out_channels, "the output channels", &channels) != 0)
		return -1;
	for (int i = 0; i < 2; i++) {
		/* cuDNN pads both ends by pad_begin. A differing pad_end only
		 * decides the output size (checked below against the layer's),
		 * as the padding adds zeros either way. */
		if (to_int(L, api, w->pad_begin[i], "a pad", &pad[i]) != 0 ||
		    to_int(L, api, w->stride[i], "a stride", &stride[i]) != 0 ||
		    to_int(L, api, w->dilation[i], "a dilation", &dilation[i]) != 0)
			return -1;
	}
	/* Filters are K x C/groups x R x S whichever the layout: KCRS for NCHW,
	 * KRSC for NHWC (as scu_filter_to writes them). */
	cudnnTensorFormat_t format = s->nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
	if (scu_cudnn(L, cudnnSetFilter4dDescriptor(s->w_desc, type, format, k, c, kh, kw),
	              "cudnnSetFilter4dDescriptor") != 0 ||
	    scu_cudnn(L, cudnnSetConvolution2dDescriptor(s->conv_desc, pad[0], pad[1], stride[0], stride[1],
	                                                 dilation[0], dilation[1], CUDNN_CROSS_CORRELATION,
	                                                 CUDNN_DATA_FLOAT),
	              "cudnnSetConvolution2dDescriptor") != 0 ||
	    scu_cudnn(L, cudnnSetConvolutionGroupCount(s->conv_desc, groups), "cudnnSetConvolutionGroupCount") != 0 ||
	    scu_cudnn(L, cudnnSetConvolutionMathType(s->conv_desc, conv_math(L, s)), "cudnnSetConvolutionMathType") != 0)
		return -1;
	/* The bias, float32, one per output channel (used by the fused call). */
	if (scu_cudnn(L, cudnnSetTensor4dDescriptor(s->bias_desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, channels, 1, 1),
	              "cudnnSetTensor4dDescriptor (bias)") != 0)
		return -1;
	int got[4];
	if (scu_cudnn(L, cudnnGetConvolution2dForwardOutputDim(s->conv_desc, s->x_desc, s->w_desc, &got[0], &got[1],
	                                                       &got[2], &got[3]),
	              "cudnnGetConvolution2dForwardOutputDim") != 0)
		return -1;
	return output_matches(L, api, got, w, "convolution", "pads that differ at the two ends of an axis");
}

/*
 * Converts weights[0] (float32 K x C/groups x R x S, device memory) into
 * s->filter as s's dtype and layout want it, unless the filter there is
 * still right: same binding (weights_generation, 0 meaning "always
 * convert"), same data, same form. Float32 NCHW needs no copy. 0, or -1
 * after api->fail.
 */
static int
conv_filter(st_exec_layer *L, conv_state *s)
{
	const k_window *w = &s->w;
	int64_t out = s->deconv ? w->in_channels : w->out_channels;
	int64_t in = s->deconv ? w->out_channels / w->groups : w->in_channels / w->groups;
	int64_t taps = w->kernel[0] * w->kernel[1];
	if (!s->half && !s->nhwc) {
		scu_free(L, s->filter);
		s->filter = NULL;
		s->filter_bytes = 0;
		return 0;
	}
	size_t bytes = (size_t)(out * in * taps) * (s->half ? sizeof(uint16_t) : sizeof(float));
	const void *source = L->weights[0].data;
	if (s->filter != NULL && s->filter_bytes == bytes && L->weights_generation != 0 &&
	    L->weights_generation == s->generation && source == s->source && s->filter_half == s->half &&
	    s->filter_nhwc == s->nhwc)
		return 0;
	if (s->filter == NULL || s->filter_bytes != bytes) {
		scu_free(L, s->filter);
		s->filter_bytes = 0;
		s->filter = scu_alloc(L, bytes);
		if (s->filter == NULL)
			return -1;
		s->filter_bytes = bytes;
	}
	/* Float16 channels last converts in two steps through float32 KRSC. */
	void *tmp = NULL;
	if (s->half && s->nhwc) {
		tmp = scu_alloc(L, (size_t)(out * in * taps) * sizeof(float));
		if (tmp == NULL)
			return -1;
	}
	s->generation = 0; /* until the conversion is enqueued */
	int r = scu_filter_to(L, source, s->filter, tmp, out, in, taps, s->half, s->nhwc);
	if (tmp != NULL) {
		/* The conversion must be done with tmp before it is freed. */
		st_device *dev = L->ctx->device;
		if (dev->sync(dev) != 0) {
			if (r == 0)
				scu_host->fail(L, "the filter's conversion: %s", dev->error(dev));
			r = -1;
		}
		scu_free(L, tmp);
	}
	if (r != 0)
		return -1;
	s->generation = L->weights_generation;
	s->source = source;
	s->filter_half = s->half;
	s->filter_nhwc = s->nhwc;
	return 0;
}

/*
 * Whether an algorithm the heuristics propose with math type m keeps s's
 * precision: strict float32 takes none that uses tensor cores (TF32), and
 * nothing takes one that narrows float32 to float16.
 */
static bool
conv_math_allowed(const st_exec_layer *L, const conv_state *s, cudnnMathType_t m)
{
	if (m == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION)
		return s->half;
	if (m == CUDNN_TENSOR_OP_MATH)
		return s->half || L->ctx->device->allow_tf32;
	return true;
}

/*
 * The algorithm cache's key of s's configuration (kind "fwd" or "bwd-data"):
 * every shape and setting an algorithm's choice depends on, as text.
 */
static void
conv_key(const st_exec_layer *L, const conv_state *s, const char *kind, char *key, size_t size)
{
	const k_window *w = &s->w;
	const int64_t *x = L->inputs[0].shape.dims, *y = L->outputs[0].shape.dims;
	snprintf(key, size,
	         "%s x%" PRId64 "x%" PRId64 "x%" PRId64 "x%" PRId64 " y%" PRId64 "x%" PRId64 "x%" PRId64 "x%" PRId64
	         " k%" PRId64 "x%" PRId64 " pad%" PRId64 ",%" PRId64 " stride%" PRId64 ",%" PRId64
	         " dilation%" PRId64 ",%" PRId64 " groups%" PRId64 " %s %s math%d",
	         kind, x[0], x[1], x[2], x[3], y[0], y[1], y[2], y[3], w->kernel[0], w->kernel[1], w->pad_begin[0],
	         w->pad_begin[1], w->stride[0], w->stride[1], w->dilation[0], w->dilation[1], w->groups,
	         s->half ? "f16" : "f32", s->nhwc ? "nhwc" : "nchw", (int)conv_math(L, s));
}

/* A workspace for a measured search: as much as CONV_WORKSPACE_LIMIT, or
 * less where the device has less free (NULL and 0 when none). Freed with
 * scu_free; cudnnFind* times only algorithms that fit. */
static void *
search_workspace(st_exec_layer *L, size_t *bytes)
{
	size_t free_bytes = 0, total = 0;
	*bytes = CONV_WORKSPACE_LIMIT;
	if (cudaMemGetInfo(&free_bytes, &total) == cudaSuccess && free_bytes / 2 < *bytes)
		*bytes = free_bytes / 2;
	st_device *dev = L->ctx->device;
	void *ws = *bytes ? dev->alloc(dev, *bytes) : NULL;
	if (ws == NULL)
		*bytes = 0;
	return ws;
}

/* One algorithm cuDNN offers, forward or backward data alike. */
typedef struct candidate {
	int algo;
	cudnnStatus_t status;
	cudnnMathType_t math;
	size_t memory; /* workspace bytes (measured searches) */
	float time;    /* milliseconds (measured searches) */
} candidate;

/* Most algorithms of either direction. */
#define MAX_CANDIDATES (CUDNN_CONVOLUTION_FWD_ALGO_COUNT + CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT)

/* The workspace algo needs for s's convolution (forward, or backward data
 * for a deconvolution). */
static cudnnStatus_t
workspace_of(st_exec_layer *L, const conv_state *s, int algo, size_t *bytes)
{
	cudnnHandle_t h = scu_native(L)->cudnn;
	if (s->deconv)
		return cudnnGetConvolutionBackwardDataWorkspaceSize(h, s->w_desc, s->y_desc, s->conv_desc, s->x_desc,
		                                                    (cudnnConvolutionBwdDataAlgo_t)algo, bytes);
	return cudnnGetConvolutionForwardWorkspaceSize(h, s->x_desc, s->w_desc, s->conv_desc, s->y_desc,
	                                               (cudnnConvolutionFwdAlgo_t)algo, bytes);
}

static void
set_algo(conv_state *s, int algo, size_t workspace)
{
	if (s->deconv)
		s->bwd_algo = (cudnnConvolutionBwdDataAlgo_t)algo;
	else
		s->algo = (cudnnConvolutionFwdAlgo_t)algo;
	s->workspace = workspace;
}

/*
 * The algorithms cuDNN offers for s into out (*n of them), best first:
 * its heuristics' order, or (measure) the order of the times it measured
 * on the layer's own buffers (cudnnFind...AlgorithmEx, which writes the
 * output: harmless before any run). 0, or -1 after api->fail.
 */
static int
candidates_of(st_exec_layer *L, const conv_state *s, bool measure, candidate *out, int *n)
{
	cudnnHandle_t h = scu_native(L)->cudnn;
	const void *filter = s->filter != NULL ? s->filter : L->weights[0].data;
	const void *x = L->inputs[0].data;
	void *y = L->outputs[0].data;
	size_t ws_bytes = 0;
	void *ws = measure ? search_workspace(L, &ws_bytes) : NULL;
	int returned = 0;
	cudnnStatus_t st;
	const char *call;
	*n = 0;
	if (!s->deconv) {
		cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
		int count = CUDNN_CONVOLUTION_FWD_ALGO_COUNT;
		if (measure) {
			call = "cudnnFindConvolutionForwardAlgorithmEx";
			st = cudnnFindConvolutionForwardAlgorithmEx(h, s->x_desc, x, s->w_desc, filter, s->conv_desc, s->y_desc,
			                                            y, count, &returned, perf, ws, ws_bytes);
		} else {
			call = "cudnnGetConvolutionForwardAlgorithm_v7";
			st = cudnnGetConvolutionForwardAlgorithm_v7(h, s->x_desc, s->w_desc, s->conv_desc, s->y_desc, count,
			                                            &returned, perf);
		}
		for (int i = 0; st == CUDNN_STATUS_SUCCESS && i < returned && i < count; i++)
			out[(*n)++] = (candidate){ (int)perf[i].algo, perf[i].status, perf[i].mathType, perf[i].memory,
				                   perf[i].time };
	} else {
		/* cuDNN's "x" is the layer's output and "y" its input. */
		cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
		int count = CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT;
		if (measure) {
			call = "cudnnFindConvolutionBackwardDataAlgorithmEx";
			st = cudnnFindConvolutionBackwardDataAlgorithmEx(h, s->w_desc, filter, s->y_desc, x, s->conv_desc,
			                                                 s->x_desc, y, count, &returned, perf, ws, ws_bytes);
		} else {
			call = "cudnnGetConvolutionBackwardDataAlgorithm_v7";
			st = cudnnGetConvolutionBackwardDataAlgorithm_v7(h, s->w_desc, s->y_desc, s->conv_desc, s->x_desc,
			                                                 count, &returned, perf);
		}
		for (int i = 0; st == CUDNN_STATUS_SUCCESS && i < returned && i < count; i++)
			out[(*n)++] = (candidate){ (int)perf[i].algo, perf[i].status, perf[i].mathType, perf[i].memory,
				                   perf[i].time };
	}
	scu_free(L, ws);
	return scu_cudnn(L, st, call);
}

/*
 * Chooses s's algorithm: the one kept in the algorithm cache for this
 * configuration when it still applies; else, with measure_algorithms, the
 * fastest measured that keeps the precision (and keeps it in the cache);
 * else the heuristics' first that succeeds, keeps the precision and needs
 * at most CONV_WORKSPACE_LIMIT bytes of workspace, failing that the one of
 * them needing the least. 0, or -1 after api->fail.
 */
static int
conv_algorithm(st_exec_layer *L, const st_host_api *api, conv_state *s)
{
	char key[512];
	conv_key(L, s, s->deconv ? "bwd-data" : "fwd", key, sizeof key);
	int count = s->deconv ? CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT : CUDNN_CONVOLUTION_FWD_ALGO_COUNT;
	st_algo_choice kept;
	size_t bytes = 0;
	if (ST_HOST_HAS(api, algo_find) && api->algo_find(L, key, &kept) == 0 && kept.algo >= 0 && kept.algo < count &&
	    workspace_of(L, s, kept.algo, &bytes) == CUDNN_STATUS_SUCCESS) {
		set_algo(s, kept.algo, bytes);
		return 0;
	}
	bool measure = L->ctx->device->measure_algorithms && ST_HOST_HAS(api, algo_keep);
	candidate c[MAX_CANDIDATES];
	int n;
	if (candidates_of(L, s, measure, c, &n) != 0)
		return -1;
	int best = -1;
	size_t best_bytes = 0;
	for (int i = 0; i < n; i++) {
		if (c[i].status != CUDNN_STATUS_SUCCESS || !conv_math_allowed(L, s, c[i].math))
			continue;
		bytes = c[i].memory;
		if (!measure && workspace_of(L, s, c[i].algo, &bytes) != CUDNN_STATUS_SUCCESS)
			continue;
		if (measure || bytes <= CONV_WORKSPACE_LIMIT) {
			best = i;
			best_bytes = bytes;
			break;
		}
		if (best < 0 || bytes < best_bytes) {
			best = i;
			best_bytes = bytes;
		}
	}
	if (best < 0) {
		api->fail(L, "cuDNN offers no algorithm (of %d) that runs this %s in %s%s", n,
		          s->deconv ? "deconvolution" : "convolution", s->half ? "float16" : "float32",
		          s->half || L->ctx->device->allow_tf32 ? "" : " without TF32");
		return -1;
	}
	set_algo(s, c[best].algo, best_bytes);
	if (measure) {
		st_algo_choice choice = { .algo = c[best].algo, .math = (int)c[best].math, .workspace = best_bytes,
			                  .ms = c[best].time };
		(void)api->algo_keep(L, key, &choice);
	}
	return 0;
}

/*
 * Decides whether run makes one cudnnConvolutionBiasActivationForward
 * call: on float32 tensors (where the bias, float32, is in the output's
 * type) with a bias and a relu, or a bias and no activation, which cuDNN
 * runs with CUDNN_ACTIVATION_IDENTITY only by the algorithm
 * IMPLICIT_PRECOMP_GEMM. Sets the activation descriptor for it. 0, or -1
 * after api->fail.
 */
static int
conv_fusion(st_exec_layer *L, conv_state *s, const kc_act *act)
{
	bool bias = L->params[CONV_BIAS].b;
	s->fused = false;
	if (s->half || !bias)
		return 0;
	cudnnActivationMode_t mode;
	if (act->kind == KC_ACT_RELU)
		mode = CUDNN_ACTIVATION_RELU;
	else if (act->kind == KC_ACT_NONE && s->algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM)
		mode = CUDNN_ACTIVATION_IDENTITY;
	else
		return 0;
	/* NaN stays NaN through the relu, as in the CPU's (x < 0 ? 0 : x). */
	if (scu_cudnn(L, cudnnSetActivationDescriptor(s->act_desc, mode, CUDNN_PROPAGATE_NAN, 0.0),
	              "cudnnSetActivationDescriptor") != 0)
		return -1;
	s->fused = true;
	return 0;
}

/*
 * Sets s's descriptors for the transposed convolution L: cuDNN's "x" is
 * L's output and "y" its input, the filter K = input channels by output
 * channels per group. cuDNN pads both ends alike, so the crop must be the
 * same at both ends of each axis (explicit symmetric pads, or same modes
 * with an even total). 0, or -1 after api->fail.
 */
static int
deconv_set_descs(st_exec_layer *L, const st_host_api *api, conv_state *s)
{
	const k_window *w = &s->w;
	cudnnDataType_t type = s->half ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
	int k, c, kh, kw, groups, pad[2], stride[2], dilation[2], channels;
	if (image_desc(L, api, s->x_desc, &L->outputs[0], "an output dimension") != 0 ||
	    image_desc(L, api, s->y_desc, &L->inputs[0], "an input dimension") != 0 ||
	    to_int(L, api, w->in_channels, "the input channels", &k) != 0 ||
	    to_int(L, api, w->out_channels / w->groups, "the output channels per group", &c) != 0 ||
	    to_int(L, api, w->kernel[0], "the kernel height", &kh) != 0 ||
	    to_int(L, api, w->kernel[1], "the kernel width", &kw) != 0 ||
	    to_int(L, api, w->groups, "groups", &groups) != 0 ||
	    to_int(L, api, w->out_channels, "num_output", &channels) != 0)
		return -1;
	for (int i = 0; i < 2; i++) {
		if (w->pad_begin[i] != w->pad_end[i]) {
			api->fail(L, "spatial axis %d crops %" PRId64 " at the beginning and %" PRId64 " at the end; the "
			             "cuda deconvolution crops both ends alike only",
			          i, w->pad_begin[i], w->pad_end[i]);
			return -1;
		}
		if (to_int(L, api, w->pad_begin[i], "a pad", &pad[i]) != 0 ||
		    to_int(L, api, w->stride[i], "a stride", &stride[i]) != 0 ||
		    to_int(L, api, w->dilation[i], "a dilation", &dilation[i]) != 0)
			return -1;
	}
	cudnnTensorFormat_t format = s->nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
	if (scu_cudnn(L, cudnnSetFilter4dDescriptor(s->w_desc, type, format, k, c, kh, kw),
	              "cudnnSetFilter4dDescriptor") != 0 ||
	    scu_cudnn(L, cudnnSetConvolution2dDescriptor(s->conv_desc, pad[0], pad[1], stride[0], stride[1],
	                                                 dilation[0], dilation[1], CUDNN_CROSS_CORRELATION,
	                                                 CUDNN_DATA_FLOAT),
	              "cudnnSetConvolution2dDescriptor") != 0 ||
	    scu_cudnn(L, cudnnSetConvolutionGroupCount(s->conv_desc, groups), "cudnnSetConvolutionGroupCount") != 0 ||
	    scu_cudnn(L, cudnnSetConvolutionMathType(s->conv_desc, conv_math(L, s)), "cudnnSetConvolutionMathType") != 0)
		return -1;
	/* The convolution this one transposes must map the output back onto
	 * the input's size (output_padding below the stride disappears in the
	 * division). */
	int got[4];
	if (scu_cudnn(L, cudnnGetConvolution2dForwardOutputDim(s->conv_desc, s->x_desc, s->w_desc, &got[0], &got[1],
	                                                       &got[2], &got[3]),
	              "cudnnGetConvolution2dForwardOutputDim") != 0)
		return -1;
	const int64_t *in = L->inputs[0].shape.dims;
	if (got[0] != in[0] || got[1] != in[1] || got[2] != in[2] || got[3] != in[3]) {
		api->fail(L, "cuDNN cannot transpose this convolution (its output would map back to %dx%dx%dx%d, not "
		             "the input's %" PRId64 "x%" PRId64 "x%" PRId64 "x%" PRId64 "): output_padding must be less "
		             "than the stride",
		          got[0], got[1], got[2], got[3], in[0], in[1], in[2], in[3]);
		return -1;
	}
	return 0;
}

/* Adds bias (float32 per output channel, or NULL) and applies L's
 * activation in place on its output, after a cuDNN call that left both
 * undone (kc_bias_act; nothing when there is neither). */
static int
bias_act(st_exec_layer *L, const conv_state *s, const float *bias)
{
	kc_act act;
	if (scu_act_of(L, &act) != 0)
		return -1;
	if (bias == NULL && act.kind == KC_ACT_NONE)
		return 0;
	void *y = L->outputs[0].data;
	const int64_t *dims = L->outputs[0].shape.dims;
	return scu_cuda(L, (cudaError_t)kc_bias_act(y, y, s->half, s->nhwc, dims[0], dims[1], dims[2] * dims[3], bias,
	                                            act, scu_native(L)->stream),
	                "kc_bias_act");
}

/*
 * What convolutions and transposed convolutions prepare alike: the window
 * (deconv: of a transposed one), the tensors' checks, the state, its
 * descriptors, the filter in the form cuDNN takes and the algorithm (a
 * convolution also decides on the fused call). 0, or -1 after api->fail.
 */
static int
prepare_as(st_exec_layer *L, const st_host_api *api, bool deconv)
{
	k_window w;
	/* The window first: it checks that there are an input and an output. */
	if ((deconv ? std_deconv_window(L, api, &w) : std_conv_window(L, api, &w)) != 0 ||
	    image_tensors(L, api, deconv ? "deconvolution" : "convolution") != 0)
		return -1;
	kc_act act;
	if (scu_act_of(L, &act) != 0)
		return -1;
	conv_state *s = conv_state_of(L);
	s->w = w;
	s->deconv = deconv;
	s->half = scu_half(&L->inputs[0]);
	s->nhwc = L->inputs[0].layout == ST_LAYOUT_NHWC;
	s->empty = empty_images(L);
	s->fused = false;
	s->workspace = 0;
	L->scratch_bytes = 0;
	if (s->empty)
		return 0;
	if (conv_descs_made(L, s) != 0 || (deconv ? deconv_set_descs(L, api, s) : conv_set_descs(L, api, s)) != 0 ||
	    conv_filter(L, s) != 0 || conv_algorithm(L, api, s) != 0 || (!deconv && conv_fusion(L, s, &act) != 0))
		return -1;
	L->scratch_bytes = s->workspace;
	return 0;
}

static int
conv_prepare(st_exec_layer *L, const st_host_api *api)
{
	return prepare_as(L, api, false);
}

/*
 * Enqueues the convolution on L's stream: the fused call, or the
 * convolution and then bias and activation in place on the output
 * (kc_bias_act, float32 bias, any activation scu_act_of knows). Where
 * cuDNN refuses the fused call for this configuration
 * (CUDNN_STATUS_NOT_SUPPORTED), the second way is taken, then and at
 * every later run.
 */
static int
conv_run(st_exec_layer *L, const st_exec_ctx *ctx)
{
	(void)ctx;
	conv_state *s = L->state;
	if (s->empty)
		return 0;
	const st_cuda_native *native = scu_native(L);
	const void *x = L->inputs[0].data;
	void *y = L->outputs[0].data;
	const void *filter = s->filter != NULL ? s->filter : L->weights[0].data;
	const float *bias = L->params[CONV_BIAS].b ? L->weights[1].data : NULL;
	void *workspace = s->workspace != 0 ? L->scratch : NULL;
	if (s->fused) {
		/* y = act(conv(x) + 0 * z + bias), with z the output itself. */
		cudnnStatus_t st = cudnnConvolutionBiasActivationForward(native->cudnn, &scale_one, s->x_desc, x, s->w_desc,
		                                                         filter, s->conv_desc, s->algo, workspace,
		                                                         s->workspace, &scale_zero, s->y_desc, y,
		                                                         s->bias_desc, bias, s->act_desc, s->y_desc, y);
		if (st != CUDNN_STATUS_NOT_SUPPORTED)
			return scu_cudnn(L, st, "cudnnConvolutionBiasActivationForward");
		/* Refused as it checked its arguments, before any work: the
		 * convolution, bias and activation in two steps, from now on. */
		s->fused = false;
	}
	if (scu_cudnn(L, cudnnConvolutionForward(native->cudnn, &scale_one, s->x_desc, x, s->w_desc, filter, s->conv_desc,
	                                         s->algo, workspace, s->workspace, &scale_zero, s->y_desc, y),
	              "cudnnConvolutionForward") != 0)
		return -1;
	return bias_act(L, s, bias);
}

/* ---- pooling ---- */

/* What prepare works out for a pooling, and run uses. */
typedef struct pool_state {
	bool empty; /* nothing to compute (empty_images) */
	/* Created at the first prepare, set again at each, destroyed by
	 * release. */
	cudnnTensorDescriptor_t x_desc, y_desc;
	cudnnPoolingDescriptor_t pool_desc;
} pool_state;

/* The layer's pooling state, allocated at the first prepare (freed by
 * pool_release). */
static pool_state *
pool_state_of(st_exec_layer *L)
{
	if (L->state == NULL) {
		L->state = calloc(1, sizeof(pool_state));
		if (L->state == NULL)
			abort();
	}
	return L->state;
}

/* Frees a pooling's descriptors and state. */
static void
pool_release(st_exec_layer *L)
{
	pool_state *s = L->state;
	if (s == NULL)
		return;
	if (s->x_desc != NULL)
		(void)cudnnDestroyTensorDescriptor(s->x_desc);
	if (s->y_desc != NULL)
		(void)cudnnDestroyTensorDescriptor(s->y_desc);
	if (s->pool_desc != NULL)
		(void)cudnnDestroyPoolingDescriptor(s->pool_desc);
	free(s);
	L->state = NULL;
}

/*
 * Fails unless cuDNN, padding both ends of each axis by pad_begin, pools
 * what L's window w does. cuDNN's windows start where w's do; a differing
 * pad_end changes only how many there are (output_matches checks that
 * afterwards) and, averaging with count_include_pad, the divisor of a
 * window reaching into the end padding: the CPU counts the taps within
 * pad_end (so a ceil_mode window counts fewer), cuDNN the whole window.
 * Those must agree: every window of w must lie within pad_end. Max and
 * count_exclude_pad average ignore the padding. 0, or -1 after api->fail.
 */
static int
pool_pads_fit(st_exec_layer *L, const st_host_api *api, const k_window *w, bool include_pad)
{
	for (int i = 0; i < 2; i++) {
		if (w->dilation[i] != 1) {
			api->fail(L, "the cuda pooling takes no dilation (cuDNN has none), but it is %" PRId64
			             " on axis %d", w->dilation[i], i);
			return -1;
		}
		if (!include_pad || w->pad_begin[i] == w->pad_end[i])
			continue;
		int64_t end = (w->out[i] - 1) * w->stride[i] - w->pad_begin[i] + w->kernel[i];
		if (end > w->in[i] + w->pad_end[i]) {
			api->fail(L, "the cuda pooling averages with count_include_pad over windows within the pads "
			             "only where they are alike at both ends (cuDNN's), but axis %d has pads %" PRId64
			             " and %" PRId64 " and its last window reaches past the end padding",
			          i, w->pad_begin[i], w->pad_end[i]);
			return -1;
		}
	}
	return 0;
}

static int
pool_prepare(st_exec_layer *L, const st_host_api *api)
{
	k_window w;
	if (std_pool_window(L, api, &w) != 0 || image_tensors(L, api, "pooling") != 0)
		return -1;
	bool max = L->params[POOL_MODE].i == POOLING_MAX;
	bool include_pad = L->params[POOL_COUNT_INCLUDE_PAD].b;
	if (pool_pads_fit(L, api, &w, !max && include_pad) != 0)
		return -1;
	pool_state *s = pool_state_of(L);
	L->scratch_bytes = 0;
	s->empty = empty_images(L);
	if (s->empty)
		return 0;
	if (tensor_desc_made(L, &s->x_desc) != 0 || tensor_desc_made(L, &s->y_desc) != 0)
		return -1;
	if (s->pool_desc == NULL &&
	    scu_cudnn(L, cudnnCreatePoolingDescriptor(&s->pool_desc), "cudnnCreatePoolingDescriptor") != 0)
		return -1;
	int kernel[2], pad[2], stride[2];
	for (int i = 0; i < 2; i++) {
		if (to_int(L, api, w.kernel[i], "a kernel size", &kernel[i]) != 0 ||
		    to_int(L, api, w.pad_begin[i], "a pad", &pad[i]) != 0 ||
		    to_int(L, api, w.stride[i], "a stride", &stride[i]) != 0)
			return -1;
	}
	cudnnPoolingMode_t mode = max           ? CUDNN_POOLING_MAX
	                          : include_pad ? CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING
	                                        : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
	/* A NaN loses to any number, as in the CPU's (v > best). */
	if (image_desc(L, api, s->x_desc, &L->inputs[0], "an input dimension") != 0 ||
	    image_desc(L, api, s->y_desc, &L->outputs[0], "an output dimension") != 0 ||
	    scu_cudnn(L, cudnnSetPooling2dDescriptor(s->pool_desc, mode, CUDNN_NOT_PROPAGATE_NAN, kernel[0], kernel[1],
	                                             pad[0], pad[1], stride[0], stride[1]),
	              "cudnnSetPooling2dDescriptor") != 0)
		return -1;
	int got[4];
	if (scu_cudnn(L, cudnnGetPooling2dForwardOutputDim(s->pool_desc, s->x_desc, &got[0], &got[1], &got[2], &got[3]),
	              "cudnnGetPooling2dForwardOutputDim") != 0)
		return -1;
	return output_matches(L, api, got, &w, "pooling", "pads that differ at the two ends of an axis, or ceil_mode");
}

/* Enqueues the pooling on L's stream. */
static int
pool_run(st_exec_layer *L, const st_exec_ctx *ctx)
{
	(void)ctx;
	const pool_state *s = L->state;
	if (s->empty)
		return 0;
	return scu_cudnn(L, cudnnPoolingForward(scu_native(L)->cudnn, s->pool_desc, &scale_one, s->x_desc,
	                                        L->inputs[0].data, &scale_zero, s->y_desc, L->outputs[0].data),
	                 "cudnnPoolingForward");
}

#define CUDA_IMAGES .backend = "cuda", \
	.layouts = ST_LAYOUT_BIT(ST_LAYOUT_NCHW) | ST_LAYOUT_BIT(ST_LAYOUT_NHWC), \
	.dtypes = ST_DTYPE_BIT(ST_DTYPE_FLOAT32) | ST_DTYPE_BIT(ST_DTYPE_FLOAT16)

/* ---- transposed convolution (deconvolution): cuDNN's backward data ---- */

static int
deconv_prepare(st_exec_layer *L, const st_host_api *api)
{
	return prepare_as(L, api, true);
}

/* Enqueues the transposed convolution, then the bias and activation in
 * place on the output. */
static int
deconv_run(st_exec_layer *L, const st_exec_ctx *ctx)
{
	(void)ctx;
	conv_state *s = L->state;
	if (s->empty)
		return 0;
	const st_cuda_native *native = scu_native(L);
	const void *filter = s->filter != NULL ? s->filter : L->weights[0].data;
	void *workspace = s->workspace != 0 ? L->scratch : NULL;
	void *y = L->outputs[0].data;
	if (scu_cudnn(L, cudnnConvolutionBackwardData(native->cudnn, &scale_one, s->w_desc, filter, s->y_desc,
	                                              L->inputs[0].data, s->conv_desc, s->bwd_algo, workspace,
	                                              s->workspace, &scale_zero, s->x_desc, y),
	              "cudnnConvolutionBackwardData") != 0)
		return -1;
	return bias_act(L, s, L->params[DECONV_BIAS].b ? L->weights[1].data : NULL);
}

/* ---- the table ---- */

const st_impl_desc scu_conv_impls[] = {
	{ .layer = "convolution", CUDA_IMAGES, .flags = ST_IMPL_FUSES_ACTIVATION, .prepare = conv_prepare,
	  .run = conv_run, .release = conv_release },
	{ .layer = "pooling", CUDA_IMAGES, .prepare = pool_prepare, .run = pool_run, .release = pool_release },
	{ .layer = "deconvolution", CUDA_IMAGES, .flags = ST_IMPL_FUSES_ACTIVATION, .prepare = deconv_prepare,
	  .run = deconv_run, .release = conv_release },
};
const int scu_conv_impl_count = STD_COUNT(scu_conv_impls);
