/* The CUDA backend module (strata-cuda.so): what the host asks of it before
 * a plan runs there. Which driver, which device, whether this build's code
 * runs on that device. Loaded with dlopen by src/backend/backend.c, so that
 * strata itself links nothing of CUDA. */
#include "config.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda-module.h"
#include "kc.h"

#ifndef ST_CUDA_VERSION
#define ST_CUDA_VERSION "?"
#endif
#ifndef ST_CUDNN_VERSION
#define ST_CUDNN_VERSION "?"
#endif
#ifndef ST_CUDA_ARCH_TEXT
#define ST_CUDA_ARCH_TEXT "?"
#endif

/* The driver API's version call, looked up in libcuda.so.1 so that the
 * module loads (and says why it cannot run) without a driver. */
typedef int (*driver_version_fn)(int *version);

/* The answer of device_count, worked out once. */
static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static int probe_count;
static char probe_why[768];

/* The driver's CUDA version (12040 for 12.4), 0 when there is no driver,
 * with dlerror's text in why. */
static int
driver_version(char *why, size_t why_size)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		const char *e = dlerror();
		snprintf(why, why_size, "%s", e ? e : "libcuda.so.1 not found");
		return 0;
	}
	void *sym = dlsym(h, "cuDriverGetVersion");
	int v = 0;
	if (sym != NULL) {
		driver_version_fn get;
		memcpy(&get, &sym, sizeof get);
		if (get(&v) != 0)
			v = 0;
	}
	/* The runtime opens the driver again; this handle is not needed. */
	dlclose(h);
	if (v == 0)
		snprintf(why, why_size, "libcuda.so.1 gives no version");
	return v;
}

/* Runs this build's conversion kernels on the current device on a small
 * odd-sized image and checks the results on the host: catches a device the
 * build has no code for, and a driver that cannot run its PTX. Returns 0,
 * or -1 with why. */
static int
self_check(const struct cudaDeviceProp *prop, char *why, size_t why_size)
{
	enum { C = 3, P = 37, N = C * P };
	float x[N], y[N], t[N];
	for (int i = 0; i < N; i++)
		x[i] = (float)i * 0.25f - 7.0f; /* exact in binary16 */
	/* One allocation for the six buffers: three of floats, three of halves. */
	void *base = NULL;
	cudaError_t e = cudaMalloc(&base, 3 * sizeof x + 3 * N * sizeof(uint16_t));
	float *dx = NULL, *dy = NULL, *dt = NULL;
	uint16_t *dh = NULL, *du = NULL, *dv = NULL;
	if (e == cudaSuccess) {
		dx = base, dy = dx + N, dt = dy + N;
		dh = (uint16_t *)(dt + N), du = dh + N, dv = du + N;
	}
	const char *call = "cudaMalloc";
	if (e == cudaSuccess) {
		call = "cudaMemcpy";
		e = cudaMemcpy(dx, x, sizeof x, cudaMemcpyHostToDevice);
	}
	/* x -> half -> channels last -> NCHW -> float must give x back, and x
	 * channels last in float must be its transpose. */
	if (e == cudaSuccess) {
		call = "kc_float_to_half";
		e = (cudaError_t)kc_float_to_half(dx, dh, N, 0);
	}
	if (e == cudaSuccess) {
		call = "kc_nchw_to_nhwc";
		e = (cudaError_t)kc_nchw_to_nhwc(dh, du, 1, C, P, 2, 0);
	}
	if (e == cudaSuccess) {
		call = "kc_nhwc_to_nchw";
		e = (cudaError_t)kc_nhwc_to_nchw(du, dv, 1, C, P, 2, 0);
	}
	if (e == cudaSuccess) {
		call = "kc_half_to_float";
		e = (cudaError_t)kc_half_to_float(dv, dy, N, 0);
	}
	if (e == cudaSuccess) {
		call = "kc_nchw_to_nhwc";
		e = (cudaError_t)kc_nchw_to_nhwc(dx, dt, 1, C, P, 4, 0);
	}
	if (e == cudaSuccess) {
		call = "cudaDeviceSynchronize";
		e = cudaDeviceSynchronize();
	}
	if (e == cudaSuccess) {
		call = "cudaMemcpy";
		e = cudaMemcpy(y, dy, sizeof y, cudaMemcpyDeviceToHost);
	}
	if (e == cudaSuccess)
		e = cudaMemcpy(t, dt, sizeof t, cudaMemcpyDeviceToHost);
	cudaFree(base);
	if (e == cudaErrorNoKernelImageForDevice || e == cudaErrorInvalidKernelImage) {
		snprintf(why, why_size,
		         "this build carries code for %s, which %s (sm_%d%d) cannot run: configure strata "
		         "--with-cuda-arch=%d%d on this machine",
		         ST_CUDA_ARCH_TEXT, prop->name, prop->major, prop->minor, prop->major, prop->minor);
		return -1;
	}
	if (e == cudaErrorUnsupportedPtxVersion) {
		snprintf(why, why_size, "the NVIDIA driver is too old to compile this build's PTX (%s) for %s: update it",
		         ST_CUDA_ARCH_TEXT, prop->name);
		return -1;
	}
	if (e != cudaSuccess) {
		snprintf(why, why_size, "the self-check on %s failed in %s: %s (%s)", prop->name, call,
		         cudaGetErrorString(e), cudaGetErrorName(e));
		return -1;
	}
	for (int c = 0; c < C; c++) {
		for (int p = 0; p < P; p++) {
			if (y[c * P + p] != x[c * P + p] || t[p * C + c] != x[c * P + p]) {
				snprintf(why, why_size,
				         "the self-check on %s computed wrong values (channel %d, position %d): "
				         "the device or its driver is faulty",
				         prop->name, c, p);
				return -1;
			}
		}
	}
	return 0;
}

static void
probe(void)
{
	char why[512] = "";
	probe_count = -1;
	int driver = driver_version(why, sizeof why);
	if (driver == 0) {
		snprintf(probe_why, sizeof probe_why,
		         "no NVIDIA driver: %s (install the driver, or run with --backend cpu)", why);
		return;
	}
	if (driver / 1000 < CUDART_VERSION / 1000) {
		snprintf(probe_why, sizeof probe_why,
		         "the NVIDIA driver supports CUDA %d.%d, older than the CUDA %d.%d this build uses: update "
		         "the driver",
		         driver / 1000, driver % 1000 / 10, CUDART_VERSION / 1000, CUDART_VERSION % 1000 / 10);
		return;
	}
	size_t cudnn = cudnnGetVersion();
	if (cudnn / 10000 != CUDNN_MAJOR) {
		snprintf(probe_why, sizeof probe_why,
		         "cuDNN %zu.%zu.%zu was loaded, but this build needs cuDNN %d: put cuDNN %d on the "
		         "library path",
		         cudnn / 10000, cudnn % 10000 / 100, cudnn % 100, CUDNN_MAJOR, CUDNN_MAJOR);
		return;
	}
	int n = 0;
	cudaError_t e = cudaGetDeviceCount(&n);
	if (e == cudaErrorNoDevice || (e == cudaSuccess && n == 0)) {
		const char *visible = getenv("CUDA_VISIBLE_DEVICES");
		snprintf(probe_why, sizeof probe_why, "no CUDA device is visible%s%s%s", visible ? " (CUDA_VISIBLE_DEVICES=" : "",
		         visible ? visible : "", visible ? ")" : "");
		return;
	}
	if (e == cudaErrorInsufficientDriver) {
		snprintf(probe_why, sizeof probe_why, "the NVIDIA driver (CUDA %d.%d) is too old for this build's CUDA %d.%d",
		         driver / 1000, driver % 1000 / 10, CUDART_VERSION / 1000, CUDART_VERSION % 1000 / 10);
		return;
	}
	if (e != cudaSuccess) {
		snprintf(probe_why, sizeof probe_why, "cudaGetDeviceCount failed: %s (%s)", cudaGetErrorString(e),
		         cudaGetErrorName(e));
		return;
	}
	struct cudaDeviceProp prop;
	e = cudaGetDeviceProperties(&prop, 0);
	if (e == cudaSuccess)
		e = cudaSetDevice(0);
	if (e != cudaSuccess) {
		snprintf(probe_why, sizeof probe_why, "device 0 cannot be used: %s (%s)", cudaGetErrorString(e),
		         cudaGetErrorName(e));
		return;
	}
	if (self_check(&prop, probe_why, sizeof probe_why) != 0)
		return;
	probe_count = n;
}

static int
device_count(char *why, size_t why_size)
{
	pthread_once(&probe_once, probe);
	if (probe_count < 1)
		snprintf(why, why_size, "%s", probe_why);
	return probe_count;
}

static int
device_info(int index, st_backend_device *out, char *why, size_t why_size)
{
	if (device_count(why, why_size) < 1)
		return -1;
	if (index < 0 || index >= probe_count) {
		snprintf(why, why_size, "no CUDA device %d (there %s %d)", index, probe_count == 1 ? "is" : "are",
		         probe_count);
		return -1;
	}
	struct cudaDeviceProp prop;
	cudaError_t e = cudaGetDeviceProperties(&prop, index);
	if (e != cudaSuccess) {
		snprintf(why, why_size, "cudaGetDeviceProperties(%d) failed: %s", index, cudaGetErrorString(e));
		return -1;
	}
	memset(out, 0, sizeof *out);
	size_t len = strnlen(prop.name, sizeof prop.name);
	if (len >= sizeof out->name)
		len = sizeof out->name - 1;
	memcpy(out->name, prop.name, len);
	out->name[len] = '\0';
	out->arch_major = prop.major;
	out->arch_minor = prop.minor;
	out->memory_bytes = (uint64_t)prop.totalGlobalMem;
	out->multiprocessors = prop.multiProcessorCount;
	return 0;
}

static void
versions(char *out, size_t size)
{
	char why[256] = "";
	int driver = driver_version(why, sizeof why);
	int runtime = 0;
	if (cudaRuntimeGetVersion(&runtime) != cudaSuccess)
		runtime = 0;
	size_t cudnn = cudnnGetVersion();
	int major = 0, minor = 0, patch = 0;
	bool blas = cublasGetProperty(MAJOR_VERSION, &major) == CUBLAS_STATUS_SUCCESS &&
	            cublasGetProperty(MINOR_VERSION, &minor) == CUBLAS_STATUS_SUCCESS &&
	            cublasGetProperty(PATCH_LEVEL, &patch) == CUBLAS_STATUS_SUCCESS;
	char d[32] = "none", b[32] = "?";
	if (driver > 0)
		snprintf(d, sizeof d, "%d.%d", driver / 1000, driver % 1000 / 10);
	if (blas)
		snprintf(b, sizeof b, "%d.%d.%d", major, minor, patch);
	snprintf(out, size, "driver %s, runtime %d.%d, cuDNN %zu.%zu.%zu, cuBLAS %s", d, runtime / 1000,
	         runtime % 1000 / 10, cudnn / 10000, cudnn % 10000 / 100, cudnn % 100, b);
}

static st_device *
open_device(int index, unsigned flags, char *why, size_t why_size)
{
	if (device_count(why, why_size) < 1)
		return NULL;
	if (index < 0 || index >= probe_count) {
		snprintf(why, why_size, "no CUDA device %d (there %s %d)", index, probe_count == 1 ? "is" : "are",
		         probe_count);
		return NULL;
	}
	return cuda_device_open(index, flags, why, why_size);
}

static const st_backend_module module = {
	.abi = ST_BACKEND_ABI_VERSION,
	.abi_minor = ST_BACKEND_ABI_MINOR,
	.name = "cuda",
	.build = "CUDA " ST_CUDA_VERSION ", cuDNN " ST_CUDNN_VERSION ", code for " ST_CUDA_ARCH_TEXT,
	.device_count = device_count,
	.device_info = device_info,
	.versions = versions,
	.open = open_device,
	.close = cuda_dev_close,
	.host_alloc = cuda_host_alloc,
	.host_free = cuda_host_free,
	.convert = cuda_convert,
	.timers = cuda_timers,
	.mark = cuda_mark,
	.elapsed = cuda_elapsed,
	.record_begin = cuda_record_begin,
	.record_end = cuda_record_end,
	.replay = cuda_replay,
};

const st_backend_module *st_backend_module_get(void);

const st_backend_module *
st_backend_module_get(void)
{
	return &module;
}
