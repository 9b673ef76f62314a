/* The "fake" backend's device (tests/backends/fake-backend.c): device
 * memory is host memory the module hands out and keeps track of, and the
 * stream is a queue run at sync, so a host that reads results before
 * synchronising, passes host memory where device memory belongs, or
 * replays a stale recording gets wrong answers or errors. Layer
 * implementations for backend "fake" (tests/plugins/engine-test.c) launch
 * their work through the native table. */
#ifndef FAKE_DEVICE_H
#define FAKE_DEVICE_H

#include <stdbool.h>
#include <stddef.h>

#include "st-plugin.h"

/* Work a kernel does when the stream reaches it, on a copy of its arguments. */
typedef void (*fake_kernel)(const void *arg);

typedef struct fake_native {
	/* Enqueues fn with a copy of arg (arg_bytes): run at the next sync,
	 * or kept while a recording is made. 0, or -1 (error() says why). */
	int (*launch)(st_device *dev, fake_kernel fn, const void *arg, size_t arg_bytes);
	/* Whether [ptr, ptr + bytes) lies in one allocation of dev's memory. */
	bool (*owns)(const st_device *dev, const void *ptr, size_t bytes);
} fake_native;

/* What every device the module opened did, for tests; the module exports
 * fake_backend_totals (looked up with dlsym). */
typedef struct fake_totals {
	long opened, closed;
	long live_allocs;     /* device allocations not yet freed */
	long live_host;       /* page-locked host allocations not yet freed */
	long launches;        /* kernels enqueued directly (not by replays) */
	long executed;        /* kernels run */
	long records, replays;
	long syncs;
	long failures;        /* calls refused (host pointers, bad sizes) */
	char last_error[256];
} fake_totals;
typedef const fake_totals *(*fake_backend_totals_fn)(void);

#endif
