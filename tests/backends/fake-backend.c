/* Backend modules for the loader's tests (tests/unit/test-backend.c), one
 * source built several ways: FAKE_NAME names it; FAKE_DEVICES devices (0:
 * it says why there are none); FAKE_ABI another ABI version; FAKE_NO_ENTRY
 * leaves out the entry point. Each also runs plans on a fake device whose
 * memory is host memory and whose stream runs at sync (fake-device.h). */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fake-device.h"
#include "st-backend.h"

#ifndef FAKE_ABI
#define FAKE_ABI ST_BACKEND_ABI_VERSION
#endif

const st_backend_module *st_backend_module_get(void);
int fake_backend_marker(void);

static int
device_count(char *why, size_t why_size)
{
	if (FAKE_DEVICES == 0) {
		snprintf(why, why_size, "no fake device is plugged in");
		return -1;
	}
	return FAKE_DEVICES;
}

static int
device_info(int index, st_backend_device *out, char *why, size_t why_size)
{
	if (index < 0 || index >= FAKE_DEVICES) {
		snprintf(why, why_size, "no fake device %d", index);
		return -1;
	}
	memset(out, 0, sizeof *out);
	snprintf(out->name, sizeof out->name, "Fake GPU %d", index);
	out->arch_major = 9;
	out->arch_minor = index;
	out->memory_bytes = (uint64_t)(index + 1) << 30;
	out->multiprocessors = 132;
	return 0;
}

static void
versions(char *out, size_t size)
{
	snprintf(out, size, "fake 1.0");
}

/* ---- the fake device ---- */

const fake_totals *fake_backend_totals(void);

static fake_totals totals;

typedef struct fake_op {
	fake_kernel fn;
	void *arg;
	size_t bytes;
} fake_op;

typedef struct fake_list {
	fake_op *ops;
	int n, cap;
} fake_list;

typedef struct fake_alloc {
	char *ptr;
	size_t bytes;
} fake_alloc;

typedef struct fake_device {
	st_device pub;
	fake_native native;
	fake_alloc *allocs;
	int n_allocs;
	fake_list queue;     /* enqueued, run at sync */
	fake_list recording; /* the last recording */
	bool recording_now;
	double *marks;
	int n_marks;
	char error[256];
} fake_device;

static int
fail(fake_device *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(f->error, sizeof f->error, fmt, ap);
	va_end(ap);
	snprintf(totals.last_error, sizeof totals.last_error, "%s", f->error);
	totals.failures++;
	return -1;
}

static void
list_clear(fake_list *l)
{
	for (int i = 0; i < l->n; i++)
		free(l->ops[i].arg);
	free(l->ops);
	memset(l, 0, sizeof *l);
}

static void
list_push(fake_list *l, fake_kernel fn, const void *arg, size_t bytes)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 16;
		l->ops = realloc(l->ops, sizeof *l->ops * (size_t)l->cap);
		if (l->ops == NULL)
			abort();
	}
	void *copy = malloc(bytes ? bytes : 1);
	if (copy == NULL)
		abort();
	memcpy(copy, arg, bytes);
	l->ops[l->n++] = (fake_op){ fn, copy, bytes };
}

static bool
owns(const st_device *dev, const void *ptr, size_t bytes)
{
	const fake_device *f = (const fake_device *)dev;
	const char *p = ptr;
	for (int i = 0; p != NULL && i < f->n_allocs; i++) {
		if (p >= f->allocs[i].ptr && p + bytes <= f->allocs[i].ptr + f->allocs[i].bytes)
			return true;
	}
	return false;
}

static int
enqueue(fake_device *f, fake_kernel fn, const void *arg, size_t bytes)
{
	list_push(f->recording_now ? &f->recording : &f->queue, fn, arg, bytes);
	return 0;
}

static int
launch(st_device *dev, fake_kernel fn, const void *arg, size_t bytes)
{
	totals.launches++;
	return enqueue((fake_device *)dev, fn, arg, bytes);
}

static void *
dev_alloc(st_device *dev, size_t bytes)
{
	fake_device *f = (fake_device *)dev;
	if (bytes > ((size_t)1 << 34)) {
		fail(f, "fakeMalloc of %zu bytes: out of memory", bytes);
		return NULL;
	}
	size_t rounded = (bytes + 255) / 256 * 256;
	char *ptr = aligned_alloc(256, rounded ? rounded : 256);
	if (ptr == NULL) {
		fail(f, "fakeMalloc of %zu bytes: out of memory", bytes);
		return NULL;
	}
	/* Fresh device memory holds garbage. */
	memset(ptr, 0x7f, rounded ? rounded : 256);
	f->allocs = realloc(f->allocs, sizeof *f->allocs * (size_t)(f->n_allocs + 1));
	if (f->allocs == NULL)
		abort();
	f->allocs[f->n_allocs++] = (fake_alloc){ ptr, bytes };
	totals.live_allocs++;
	return ptr;
}

static void
dev_free(st_device *dev, void *ptr)
{
	fake_device *f = (fake_device *)dev;
	for (int i = 0; i < f->n_allocs; i++) {
		if (f->allocs[i].ptr == ptr) {
			free(ptr);
			f->allocs[i] = f->allocs[--f->n_allocs];
			totals.live_allocs--;
			return;
		}
	}
	fail(f, "fakeFree of %p: not device memory", ptr);
}

typedef struct copy_arg {
	void *dst;
	const void *src;
	size_t bytes;
} copy_arg;

static void
copy_kernel(const void *a)
{
	const copy_arg *c = a;
	memcpy(c->dst, c->src, c->bytes);
}

static int
upload(st_device *dev, void *dst, const void *src, size_t bytes)
{
	fake_device *f = (fake_device *)dev;
	if (!owns(dev, dst, bytes))
		return fail(f, "fakeMemcpy host to device: the destination is not %zu bytes of device memory", bytes);
	if (owns(dev, src, bytes))
		return fail(f, "fakeMemcpy host to device: the source is device memory");
	copy_arg c = { dst, src, bytes };
	return enqueue(f, copy_kernel, &c, sizeof c);
}

static int
download(st_device *dev, void *dst, const void *src, size_t bytes)
{
	fake_device *f = (fake_device *)dev;
	if (!owns(dev, src, bytes))
		return fail(f, "fakeMemcpy device to host: the source is not %zu bytes of device memory", bytes);
	if (owns(dev, dst, bytes))
		return fail(f, "fakeMemcpy device to host: the destination is device memory");
	copy_arg c = { dst, src, bytes };
	return enqueue(f, copy_kernel, &c, sizeof c);
}

static int
dev_sync(st_device *dev)
{
	fake_device *f = (fake_device *)dev;
	totals.syncs++;
	if (f->recording_now)
		return fail(f, "fakeStreamSynchronize while recording");
	/* Kernels may not enqueue more; run what is there, in order. */
	for (int i = 0; i < f->queue.n; i++) {
		f->queue.ops[i].fn(f->queue.ops[i].arg);
		totals.executed++;
	}
	list_clear(&f->queue);
	return 0;
}

static const char *
dev_error(const st_device *dev)
{
	return ((const fake_device *)dev)->error;
}

static st_device *
dev_open(int index, unsigned flags, char *why, size_t why_size)
{
	if (index < 0 || index >= FAKE_DEVICES) {
		snprintf(why, why_size, "no fake device %d", index);
		return NULL;
	}
	fake_device *f = calloc(1, sizeof *f);
	if (f == NULL)
		abort();
	f->native = (fake_native){ .launch = launch, .owns = owns };
	f->pub = (st_device){ .backend = FAKE_NAME, .index = index, .native = &f->native,
		              .allow_tf32 = (flags & ST_DEVICE_ALLOW_TF32) != 0,
		              .measure_algorithms = (flags & ST_DEVICE_MEASURE) != 0, .alloc = dev_alloc, .free_mem = dev_free,
		              .upload = upload, .download = download, .sync = dev_sync, .error = dev_error };
	totals.opened++;
	return &f->pub;
}

static void
dev_close(st_device *dev)
{
	fake_device *f = (fake_device *)dev;
	list_clear(&f->queue);
	list_clear(&f->recording);
	for (int i = 0; i < f->n_allocs; i++)
		free(f->allocs[i].ptr);
	free(f->allocs);
	free(f->marks);
	free(f);
	totals.closed++;
}

static void *
host_alloc(st_device *dev, size_t bytes)
{
	(void)dev;
	void *ptr = malloc(bytes ? bytes : 1);
	if (ptr != NULL)
		totals.live_host++;
	return ptr;
}

static void
host_free(st_device *dev, void *ptr)
{
	(void)dev;
	free(ptr);
	totals.live_host--;
}

/* binary16 by hand: the module links nothing of strata. */
static float
half_to_float(uint16_t h)
{
	int e = (h >> 10) & 31, m = h & 1023;
	float v = e == 0 ? ldexpf((float)m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexpf((float)(m | 1024), e - 25);
	return (h & 0x8000) ? -v : v;
}

static uint16_t
float_to_half(float x)
{
	uint16_t sign = signbit(x) ? 0x8000 : 0;
	float a = fabsf(x);
	if (isnan(x))
		return 0x7e00;
	if (a >= 65520.0f)
		return sign | 0x7c00;
	if (a < ldexpf(1.0f, -14)) {
		/* subnormal: units of 2^-24, rounded to nearest even */
		return sign | (uint16_t)nearbyintf(ldexpf(a, 24));
	}
	int e;
	float fr = frexpf(a, &e); /* a = fr * 2^e, fr in [0.5, 1) */
	float m = nearbyintf(ldexpf(fr, 11)); /* 1024 .. 2048 */
	if (m >= 2048.0f) {
		m = 1024.0f;
		e++;
	}
	if (e + 14 >= 31)
		return sign | 0x7c00;
	return sign | (uint16_t)((e + 14) << 10) | (uint16_t)((int)m - 1024);
}

typedef struct convert_arg {
	st_tensor src, dst;
} convert_arg;

static float
load(const st_tensor *t, int64_t i)
{
	return t->shape.dtype == ST_DTYPE_FLOAT16 ? half_to_float(((const uint16_t *)t->data)[i])
	                                         : ((const float *)t->data)[i];
}

static void
store(st_tensor *t, int64_t i, float v)
{
	if (t->shape.dtype == ST_DTYPE_FLOAT16)
		((uint16_t *)t->data)[i] = float_to_half(v);
	else
		((float *)t->data)[i] = v;
}

/* Index of logical element (n, c, rest) in a tensor of layout l. */
static int64_t
at(st_layout l, int64_t n, int64_t c, int64_t r, int64_t channels, int64_t plane)
{
	return l == ST_LAYOUT_NHWC ? (n * plane + r) * channels + c : (n * channels + c) * plane + r;
}

static void
convert_kernel(const void *a)
{
	const convert_arg *c = a;
	const st_shape *s = &c->src.shape;
	int64_t n = s->rank > 0 ? s->dims[0] : 1, ch = s->rank > 1 ? s->dims[1] : 1, plane = 1;
	for (int i = 2; i < s->rank; i++)
		plane *= s->dims[i];
	st_tensor dst = c->dst;
	for (int64_t b = 0; b < n; b++)
		for (int64_t k = 0; k < ch; k++)
			for (int64_t r = 0; r < plane; r++)
				store(&dst, at(dst.layout, b, k, r, ch, plane),
				      load(&c->src, at(c->src.layout, b, k, r, ch, plane)));
}

static size_t
tensor_bytes(const st_tensor *t)
{
	size_t n = t->shape.dtype == ST_DTYPE_FLOAT16 ? 2 : 4;
	for (int i = 0; i < t->shape.rank; i++)
		n *= (size_t)t->shape.dims[i];
	return n;
}

static int
convert(st_device *dev, const st_tensor *src, st_tensor *dst, void *tmp)
{
	fake_device *f = (fake_device *)dev;
	(void)tmp;
	for (int k = 0; k < 2; k++) {
		const st_tensor *t = k ? dst : src;
		if (t->shape.dtype != ST_DTYPE_FLOAT32 && t->shape.dtype != ST_DTYPE_FLOAT16)
			return fail(f, "fakeConvert: dtype %d is not a float", (int)t->shape.dtype);
		if (t->layout != ST_LAYOUT_NCHW && t->layout != ST_LAYOUT_NHWC)
			return fail(f, "fakeConvert: layout %d", (int)t->layout);
		if (!owns(dev, t->data, tensor_bytes(t)))
			return fail(f, "fakeConvert: the %s is not device memory", k ? "destination" : "source");
	}
	if (src->shape.rank != dst->shape.rank)
		return fail(f, "fakeConvert: ranks %d and %d", src->shape.rank, dst->shape.rank);
	for (int i = 0; i < src->shape.rank; i++) {
		if (src->shape.dims[i] != dst->shape.dims[i])
			return fail(f, "fakeConvert: shapes differ in dimension %d", i);
	}
	convert_arg c = { *src, *dst };
	return enqueue(f, convert_kernel, &c, sizeof c);
}

static int
timers(st_device *dev, int n)
{
	fake_device *f = (fake_device *)dev;
	free(f->marks);
	f->marks = calloc((size_t)(n > 0 ? n : 1), sizeof *f->marks);
	f->n_marks = n;
	for (int i = 0; i < n; i++)
		f->marks[i] = -1;
	return 0;
}

typedef struct mark_arg {
	double *where;
} mark_arg;

static void
mark_kernel(const void *a)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	*((const mark_arg *)a)->where = (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int
mark(st_device *dev, int i)
{
	fake_device *f = (fake_device *)dev;
	if (i < 0 || i >= f->n_marks)
		return fail(f, "fakeEventRecord: no mark %d (%d reserved)", i, f->n_marks);
	if (f->recording_now)
		return fail(f, "fakeEventRecord: timing marks inside a recording");
	mark_arg m = { &f->marks[i] };
	return enqueue(f, mark_kernel, &m, sizeof m);
}

static int
elapsed(st_device *dev, int a, int b, double *seconds)
{
	fake_device *f = (fake_device *)dev;
	if (a < 0 || b < 0 || a >= f->n_marks || b >= f->n_marks || f->marks[a] < 0 || f->marks[b] < 0)
		return fail(f, "fakeEventElapsedTime: marks %d and %d were not reached", a, b);
	*seconds = f->marks[b] - f->marks[a];
	return 0;
}

static int
record_begin(st_device *dev)
{
	fake_device *f = (fake_device *)dev;
	if (f->recording_now)
		return fail(f, "fakeStreamBeginCapture: already recording");
	list_clear(&f->recording);
	f->recording_now = true;
	return 0;
}

static int
record_end(st_device *dev)
{
	fake_device *f = (fake_device *)dev;
	if (!f->recording_now)
		return fail(f, "fakeStreamEndCapture: not recording");
	f->recording_now = false;
	totals.records++;
	return 0;
}

static int
replay(st_device *dev)
{
	fake_device *f = (fake_device *)dev;
	if (f->recording_now)
		return fail(f, "fakeGraphLaunch while recording");
	if (totals.records == 0 || f->recording.n == 0)
		return fail(f, "fakeGraphLaunch: nothing was recorded");
	totals.replays++;
	for (int i = 0; i < f->recording.n; i++)
		list_push(&f->queue, f->recording.ops[i].fn, f->recording.ops[i].arg, f->recording.ops[i].bytes);
	return 0;
}

const fake_totals *
fake_backend_totals(void)
{
	return &totals;
}

static const st_backend_module module = {
	.abi = FAKE_ABI,
	.abi_minor = ST_BACKEND_ABI_MINOR,
	.name = FAKE_NAME,
	.build = "fake build",
	.device_count = device_count,
	.device_info = device_info,
	.versions = versions,
	.open = dev_open,
	.close = dev_close,
	.host_alloc = host_alloc,
	.host_free = host_free,
	.convert = convert,
	.timers = timers,
	.mark = mark,
	.elapsed = elapsed,
	.record_begin = record_begin,
	.record_end = record_end,
	.replay = replay,
};

#ifndef FAKE_NO_ENTRY
const st_backend_module *
st_backend_module_get(void)
{
	return &module;
}
#endif

/* Something to export when the entry point is left out. */
int
fake_backend_marker(void)
{
	return (int)module.abi;
}
