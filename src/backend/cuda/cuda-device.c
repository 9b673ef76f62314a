/* The CUDA backend module's devices (backend ABI 1.1): memory, one stream
 * with the cuDNN and cuBLAS handles bound to it, conversions with the
 * kernels of kernels/cuda, events for timing, and CUDA graphs for runs
 * recorded once and replayed. Every call is checked; a failure is kept as
 * a sentence naming the call, for dev->error. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda-module.h"
#include "kc.h"

typedef struct cuda_device {
	st_device pub;
	st_cuda_native native;
	void **allocs;        /* device memory handed out, freed at close */
	int n_allocs, cap_allocs;
	int host_allocs;      /* page-locked buffers handed out */
	cudaEvent_t *events;
	int n_events;
	cudaGraph_t graph;
	cudaGraphExec_t exec;
	bool capturing;
	char error[512];
} cuda_device;

static cuda_device *
dev_of(st_device *d)
{
	return (cuda_device *)d;
}

/* Keeps "call: what went wrong (cudaErrorName)" for dev->error and
 * returns -1. */
static int
fail(cuda_device *c, cudaError_t e, const char *fmt, ...)
{
	char call[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(call, sizeof call, fmt, ap);
	va_end(ap);
	snprintf(c->error, sizeof c->error, "%s: %s (%s)", call, cudaGetErrorString(e), cudaGetErrorName(e));
	return -1;
}

static const char *
dev_error(const st_device *d)
{
	return ((const cuda_device *)d)->error;
}

static void
size_text(size_t bytes, char *buf, size_t size)
{
	if (bytes >= ((size_t)1 << 30))
		snprintf(buf, size, "%.1f GiB", (double)bytes / (double)((size_t)1 << 30));
	else if (bytes >= ((size_t)1 << 20))
		snprintf(buf, size, "%.1f MiB", (double)bytes / (double)((size_t)1 << 20));
	else
		snprintf(buf, size, "%zu bytes", bytes);
}

/* Makes the device current on the calling thread (plans may run on threads
 * other than the one that opened them). */
static int
use(cuda_device *c)
{
	cudaError_t e = cudaSetDevice(c->native.device);
	return e == cudaSuccess ? 0 : fail(c, e, "cudaSetDevice(%d)", c->native.device);
}

static void *
dev_alloc(st_device *d, size_t bytes)
{
	cuda_device *c = dev_of(d);
	if (use(c) != 0)
		return NULL;
	void *ptr = NULL;
	cudaError_t e = cudaMalloc(&ptr, bytes ? bytes : 256);
	if (e != cudaSuccess) {
		char size[32];
		size_text(bytes, size, sizeof size);
		size_t free_b = 0, total = 0;
		if (cudaMemGetInfo(&free_b, &total) == cudaSuccess) {
			char f[32];
			size_text(free_b, f, sizeof f);
			fail(c, e, "cudaMalloc of %s (%s free)", size, f);
		} else {
			fail(c, e, "cudaMalloc of %s", size);
		}
		cudaGetLastError(); /* out of memory is not sticky: clear it */
		return NULL;
	}
	if (c->n_allocs == c->cap_allocs) {
		int cap = c->cap_allocs ? 2 * c->cap_allocs : 32;
		void **grown = realloc(c->allocs, sizeof *grown * (size_t)cap);
		if (grown == NULL) {
			cudaFree(ptr);
			snprintf(c->error, sizeof c->error, "out of host memory");
			return NULL;
		}
		c->allocs = grown;
		c->cap_allocs = cap;
	}
	c->allocs[c->n_allocs++] = ptr;
	return ptr;
}

static void
dev_free(st_device *d, void *ptr)
{
	cuda_device *c = dev_of(d);
	for (int i = 0; i < c->n_allocs; i++) {
		if (c->allocs[i] == ptr) {
			c->allocs[i] = c->allocs[--c->n_allocs];
			use(c);
			cudaError_t e = cudaFree(ptr);
			if (e != cudaSuccess)
				fail(c, e, "cudaFree");
			return;
		}
	}
	snprintf(c->error, sizeof c->error, "cudaFree of %p: not memory of this device", ptr);
}

static int
copy(st_device *d, void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind)
{
	cuda_device *c = dev_of(d);
	if (bytes == 0)
		return 0;
	cudaError_t e = cudaMemcpyAsync(dst, src, bytes, kind, c->native.stream);
	if (e != cudaSuccess)
		return fail(c, e, "cudaMemcpyAsync of %zu bytes %s", bytes,
		            kind == cudaMemcpyHostToDevice ? "to the device" : "from the device");
	return 0;
}

static int
upload(st_device *d, void *dst, const void *src, size_t bytes)
{
	return copy(d, dst, src, bytes, cudaMemcpyHostToDevice);
}

static int
download(st_device *d, void *dst, const void *src, size_t bytes)
{
	return copy(d, dst, src, bytes, cudaMemcpyDeviceToHost);
}

static int
dev_sync(st_device *d)
{
	cuda_device *c = dev_of(d);
	cudaError_t e = cudaStreamSynchronize(c->native.stream);
	if (e != cudaSuccess)
		return fail(c, e, "cudaStreamSynchronize (an earlier launch or copy failed)");
	e = cudaGetLastError();
	if (e != cudaSuccess)
		return fail(c, e, "a kernel launch");
	return 0;
}

static void
drop_graph(cuda_device *c)
{
	if (c->exec != NULL)
		cudaGraphExecDestroy(c->exec);
	if (c->graph != NULL)
		cudaGraphDestroy(c->graph);
	c->exec = NULL;
	c->graph = NULL;
}

void
cuda_dev_close(st_device *d)
{
	cuda_device *c = dev_of(d);
	use(c);
	if (c->capturing) {
		cudaGraph_t g = NULL;
		cudaStreamEndCapture(c->native.stream, &g);
		if (g != NULL)
			cudaGraphDestroy(g);
	}
	cudaStreamSynchronize(c->native.stream);
	drop_graph(c);
	for (int i = 0; i < c->n_events; i++)
		cudaEventDestroy(c->events[i]);
	free(c->events);
	for (int i = 0; i < c->n_allocs; i++)
		cudaFree(c->allocs[i]);
	free(c->allocs);
	if (c->native.cublas_lt != NULL)
		cublasLtDestroy(c->native.cublas_lt);
	if (c->native.cublas != NULL)
		cublasDestroy(c->native.cublas);
	if (c->native.cudnn != NULL)
		cudnnDestroy(c->native.cudnn);
	if (c->native.stream != NULL)
		cudaStreamDestroy(c->native.stream);
	free(c);
}

st_device *
cuda_device_open(int index, unsigned flags, char *why, size_t why_size)
{
	bool allow_tf32 = (flags & ST_DEVICE_ALLOW_TF32) != 0;
	cuda_device *c = calloc(1, sizeof *c);
	if (c == NULL) {
		snprintf(why, why_size, "out of host memory");
		return NULL;
	}
	c->native.device = index;
	c->pub = (st_device){ .backend = "cuda", .index = index, .native = &c->native, .allow_tf32 = allow_tf32,
		              .measure_algorithms = (flags & ST_DEVICE_MEASURE) != 0,
		              .alloc = dev_alloc, .free_mem = dev_free, .upload = upload, .download = download,
		              .sync = dev_sync, .error = dev_error };
	struct cudaDeviceProp prop;
	cudaError_t e = cudaSetDevice(index);
	if (e == cudaSuccess)
		e = cudaGetDeviceProperties(&prop, index);
	if (e == cudaSuccess)
		e = cudaStreamCreateWithFlags(&c->native.stream, cudaStreamNonBlocking);
	if (e != cudaSuccess) {
		fail(c, e, "opening CUDA device %d", index);
		goto failed;
	}
	c->native.arch = 10 * prop.major + prop.minor;
	cudnnStatus_t ds = cudnnCreate(&c->native.cudnn);
	if (ds == CUDNN_STATUS_SUCCESS)
		ds = cudnnSetStream(c->native.cudnn, c->native.stream);
	if (ds != CUDNN_STATUS_SUCCESS) {
		snprintf(c->error, sizeof c->error, "cudnnCreate: %s", cudnnGetErrorString(ds));
		goto failed;
	}
	cublasStatus_t bs = cublasCreate(&c->native.cublas);
	if (bs == CUBLAS_STATUS_SUCCESS)
		bs = cublasSetStream(c->native.cublas, c->native.stream);
	/* FP32 stays FP32 unless the user allows TF32 (the default mode never
	 * narrows a float32 product to TF32). */
	if (bs == CUBLAS_STATUS_SUCCESS)
		bs = cublasSetMathMode(c->native.cublas, allow_tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH);
	if (bs == CUBLAS_STATUS_SUCCESS)
		bs = cublasLtCreate(&c->native.cublas_lt);
	if (bs != CUBLAS_STATUS_SUCCESS) {
		snprintf(c->error, sizeof c->error, "cublasCreate: %s", cublasGetStatusString(bs));
		goto failed;
	}
	return &c->pub;
failed:
	snprintf(why, why_size, "%s", c->error);
	cuda_dev_close(&c->pub);
	return NULL;
}

void *
cuda_host_alloc(st_device *d, size_t bytes)
{
	cuda_device *c = dev_of(d);
	void *ptr = NULL;
	cudaError_t e = cudaMallocHost(&ptr, bytes ? bytes : 256);
	if (e != cudaSuccess) {
		char size[32];
		size_text(bytes, size, sizeof size);
		fail(c, e, "cudaMallocHost of %s", size);
		cudaGetLastError();
		return NULL;
	}
	c->host_allocs++;
	return ptr;
}

void
cuda_host_free(st_device *d, void *ptr)
{
	cuda_device *c = dev_of(d);
	if (ptr == NULL)
		return;
	cudaError_t e = cudaFreeHost(ptr);
	if (e != cudaSuccess)
		fail(c, e, "cudaFreeHost");
	c->host_allocs--;
}

static int64_t
elements(const st_shape *s)
{
	int64_t n = 1;
	for (int i = 0; i < s->rank; i++)
		n *= s->dims[i];
	return n;
}

/* The dtype of n values from x to y (float32 and float16; the same is a copy). */
static int
convert_dtype(cuda_device *c, const void *x, st_dtype a, void *y, st_dtype b, int64_t n)
{
	cudaStream_t s = c->native.stream;
	int e;
	if (a == b) {
		size_t bytes = (size_t)n * (a == ST_DTYPE_FLOAT16 ? 2u : 4u);
		e = bytes ? cudaMemcpyAsync(y, x, bytes, cudaMemcpyDeviceToDevice, s) : cudaSuccess;
	} else if (a == ST_DTYPE_FLOAT32) {
		e = kc_float_to_half(x, y, n, s);
	} else {
		e = kc_half_to_float(x, y, n, s);
	}
	return e == cudaSuccess ? 0 : fail(c, (cudaError_t)e, "converting %lld values to %s", (long long)n,
	                                    b == ST_DTYPE_FLOAT16 ? "float16" : "float32");
}

static int
convert_layout(cuda_device *c, const void *x, st_layout from, void *y, const st_shape *s, int elem)
{
	int64_t batch = s->dims[0], channels = s->dims[1], positions = 1;
	for (int i = 2; i < s->rank; i++)
		positions *= s->dims[i];
	int e = from == ST_LAYOUT_NCHW ? kc_nchw_to_nhwc(x, y, batch, channels, positions, elem, c->native.stream)
	                               : kc_nhwc_to_nchw(x, y, batch, channels, positions, elem, c->native.stream);
	return e == cudaSuccess ? 0 : fail(c, (cudaError_t)e, "transposing a %lldx%lldx%lld tensor", (long long)batch,
	                                    (long long)channels, (long long)positions);
}

int
cuda_convert(st_device *d, const st_tensor *src, st_tensor *dst, void *tmp)
{
	cuda_device *c = dev_of(d);
	st_dtype a = src->shape.dtype, b = dst->shape.dtype;
	for (int k = 0; k < 2; k++) {
		const st_tensor *t = k ? dst : src;
		if ((t->shape.dtype != ST_DTYPE_FLOAT32 && t->shape.dtype != ST_DTYPE_FLOAT16) ||
		    (t->shape.rank >= 3 && t->layout != ST_LAYOUT_NCHW && t->layout != ST_LAYOUT_NHWC)) {
			snprintf(c->error, sizeof c->error,
			         "the cuda backend converts float32 and float16 tensors, NCHW or NHWC, only");
			return -1;
		}
	}
	int64_t n = elements(&src->shape);
	if (src->layout == dst->layout || src->shape.rank < 3)
		return convert_dtype(c, src->data, a, dst->data, b, n);
	if (a == b)
		return convert_layout(c, src->data, src->layout, dst->data, &src->shape, a == ST_DTYPE_FLOAT16 ? 2 : 4);
	if (a == ST_DTYPE_FLOAT32) {
		/* The layout in float32 (into tmp), then narrowed. */
		if (convert_layout(c, src->data, src->layout, tmp, &src->shape, 4) != 0)
			return -1;
		return convert_dtype(c, tmp, a, dst->data, b, n);
	}
	/* Widened first (into tmp), then the layout in float32. */
	if (convert_dtype(c, src->data, a, tmp, b, n) != 0)
		return -1;
	return convert_layout(c, tmp, src->layout, dst->data, &src->shape, 4);
}

int
cuda_timers(st_device *d, int n)
{
	cuda_device *c = dev_of(d);
	if (n <= c->n_events)
		return 0;
	cudaEvent_t *grown = realloc(c->events, sizeof *grown * (size_t)n);
	if (grown == NULL) {
		snprintf(c->error, sizeof c->error, "out of host memory");
		return -1;
	}
	c->events = grown;
	for (; c->n_events < n; c->n_events++) {
		cudaError_t e = cudaEventCreate(&c->events[c->n_events]);
		if (e != cudaSuccess)
			return fail(c, e, "cudaEventCreate");
	}
	return 0;
}

int
cuda_mark(st_device *d, int i)
{
	cuda_device *c = dev_of(d);
	if (i < 0 || i >= c->n_events) {
		snprintf(c->error, sizeof c->error, "cudaEventRecord: no event %d", i);
		return -1;
	}
	cudaError_t e = cudaEventRecord(c->events[i], c->native.stream);
	return e == cudaSuccess ? 0 : fail(c, e, "cudaEventRecord");
}

int
cuda_elapsed(st_device *d, int a, int b, double *seconds)
{
	cuda_device *c = dev_of(d);
	if (a < 0 || b < 0 || a >= c->n_events || b >= c->n_events) {
		snprintf(c->error, sizeof c->error, "cudaEventElapsedTime: no events %d and %d", a, b);
		return -1;
	}
	float ms = 0;
	cudaError_t e = cudaEventElapsedTime(&ms, c->events[a], c->events[b]);
	if (e != cudaSuccess)
		return fail(c, e, "cudaEventElapsedTime");
	*seconds = (double)ms * 1e-3;
	return 0;
}

int
cuda_record_begin(st_device *d)
{
	cuda_device *c = dev_of(d);
	drop_graph(c);
	cudaError_t e = cudaStreamBeginCapture(c->native.stream, cudaStreamCaptureModeThreadLocal);
	if (e != cudaSuccess)
		return fail(c, e, "cudaStreamBeginCapture");
	c->capturing = true;
	return 0;
}

int
cuda_record_end(st_device *d)
{
	cuda_device *c = dev_of(d);
	c->capturing = false;
	cudaError_t e = cudaStreamEndCapture(c->native.stream, &c->graph);
	if (e != cudaSuccess) {
		c->graph = NULL;
		return fail(c, e, "cudaStreamEndCapture (a call the capture cannot record)");
	}
	e = cudaGraphInstantiate(&c->exec, c->graph, 0);
	if (e != cudaSuccess) {
		c->exec = NULL;
		return fail(c, e, "cudaGraphInstantiate");
	}
	return 0;
}

int
cuda_replay(st_device *d)
{
	cuda_device *c = dev_of(d);
	if (c->exec == NULL) {
		snprintf(c->error, sizeof c->error, "cudaGraphLaunch: nothing was recorded");
		return -1;
	}
	cudaError_t e = cudaGraphLaunch(c->exec, c->native.stream);
	return e == cudaSuccess ? 0 : fail(c, e, "cudaGraphLaunch");
}
