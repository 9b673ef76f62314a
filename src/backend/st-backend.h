/* Backends other than the CPU: modules the engine loads with dlopen, so that
 * strata itself needs no GPU driver and runs on machines without one. */
#ifndef ST_BACKEND_H
#define ST_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "st-engine.h"
#include "st-plugin.h"

/*
 * A backend module is a shared object named strata-<backend>.so (the CUDA
 * one is strata-cuda.so, built when configure finds CUDA with cuDNN)
 * exporting
 *
 *   const st_backend_module *st_backend_module_get(void);
 *
 * which returns a static table. The host checks abi first and refuses a
 * module built for another version. Minor revisions only add members at
 * the end (a host reads those only when abi_minor says they are there).
 */
#define ST_BACKEND_ABI_VERSION 1u
#define ST_BACKEND_ABI_MINOR 1u

/* Flags of st_backend_module.open: st_device's allow_tf32 and
 * measure_algorithms. */
#define ST_DEVICE_ALLOW_TF32 0x1u
#define ST_DEVICE_MEASURE 0x2u

/* One device as the module sees it. */
typedef struct st_backend_device {
	char name[128];          /* "NVIDIA H100 80GB HBM3" */
	int arch_major;          /* compute capability, 9 and 0 for sm_90 */
	int arch_minor;
	uint64_t memory_bytes;   /* total device memory */
	int multiprocessors;
} st_backend_device;

typedef struct st_backend_module {
	uint32_t abi;        /* ST_BACKEND_ABI_VERSION */
	uint32_t abi_minor;  /* ST_BACKEND_ABI_MINOR it was built with */
	const char *name;    /* "cuda" */
	/* What it was built with: "CUDA 13.0, cuDNN 9.12.0, code for sm_90 + PTX compute_75". */
	const char *build;
	/*
	 * How many devices can be used now: >= 1, or -1 with the reason in why
	 * (no driver, a driver older than the module's runtime, no device, a
	 * device the module has no code for), written for a user to act on.
	 * May be called more than once; the answer is worked out once.
	 */
	int (*device_count)(char *why, size_t why_size);
	/* Device index (0 .. device_count - 1) into out. Returns 0, or -1 with why. */
	int (*device_info)(int index, st_backend_device *out, char *why, size_t why_size);
	/* The versions found at run time ("driver 13.0, runtime 13.0, cuDNN
	 * 9.12.0, cuBLAS 13.0.2"), or what could not be read, into out. */
	void (*versions)(char *out, size_t size);

	/* ---- ABI 1.1: running plans (read only when abi_minor >= 1) ---- */

	/* Opens device index for one plan: its memory, one stream, the
	 * libraries' handles, with ST_DEVICE_* flags. NULL with the reason in
	 * why. Freed by close, which frees whatever memory of it is left and
	 * drops the recording. */
	st_device *(*open)(int index, unsigned flags, char *why, size_t why_size);
	void (*close)(st_device *dev);
	/* Page-locked host memory the device copies from and to at full
	 * speed (inputs and outputs pass through it); NULL when none. */
	void *(*host_alloc)(st_device *dev, size_t bytes);
	void (*host_free)(st_device *dev, void *ptr);
	/* Enqueues the conversion of src into dst (device tensors of one
	 * logical shape; dtypes float32 or float16; layouts NCHW or NHWC, the
	 * same when the rank is under 3), with tmp (device memory of
	 * src's element count in float32) for a change of both. 0 or -1. */
	int (*convert)(st_device *dev, const st_tensor *src, st_tensor *dst, void *tmp);
	/* Timing: room for n marks, a mark i enqueued (the time the stream
	 * reaches it), and once synchronised the seconds from mark a to b. */
	int (*timers)(st_device *dev, int n);
	int (*mark)(st_device *dev, int i);
	int (*elapsed)(st_device *dev, int a, int b, double *seconds);
	/* Recording: what is enqueued between record_begin and record_end is
	 * kept, not executed (a CUDA graph); replay enqueues the recording
	 * (the last one made: record_begin drops the one before). */
	int (*record_begin)(st_device *dev);
	int (*record_end)(st_device *dev);
	int (*replay)(st_device *dev);
} st_backend_module;

/* The symbol a module exports. */
typedef const st_backend_module *(*st_backend_module_get_fn)(void);
#define ST_BACKEND_MODULE_SYMBOL "st_backend_module_get"

/* ---- backend.c: finding and loading modules ---- */

/* The folders searched for backend modules, colon-separated:
 * $STRATA_BACKEND_PATH, then the build tree's src/backend/<name>/.libs when
 * strata runs from its build tree, else the installed folder. Caller frees. */
char *st_backend_search_path(void);
/*
 * The module of backend name ("cuda"), loaded on first use and kept loaded
 * for the life of the process; NULL with the reason in why: this build has
 * no such backend, the module is not found (the folders searched named),
 * cannot be loaded (a library it needs is missing: the loader's message),
 * lacks the entry point, or was built for another ABI. The table belongs
 * to the module.
 */
const st_backend_module *st_backend_load(const char *name, char *why, size_t why_size);
/*
 * Whether backend name can run now: its module loads and it has a device.
 * Returns 0 with device 0 in dev (when not NULL), or -1 with the reason in
 * why ("the cuda backend is unavailable: no NVIDIA driver: ...").
 */
int st_backend_ready(const char *name, st_backend_device *dev, char *why, size_t why_size);
/* Whether this build was configured with backend name's module. */
int st_backend_built(const char *name);

/* ---- backend-capture.c: when a recorded run may be replayed ---- */

/*
 * A device backend records a plan's run once (a CUDA graph: every kernel
 * launch with its arguments) and replays the recording while nothing it
 * baked in has changed. What it baked in: */
typedef struct st_capture_key {
	st_plan_generations gen; /* steps and places, weights, runtime option values */
	const void *arena;       /* the device arena's base */
	const void *scratch;     /* the device scratch (workspaces) base */
	const void *staging;     /* the pinned host buffers inputs and outputs pass through */
	int device;
	bool profiling;          /* per-step timing events: such runs are not recorded */
	bool one_off;            /* a run that differs from the next (a trigger option is set) */
} st_capture_key;

typedef enum st_capture_action {
	ST_CAPTURE_EAGER,  /* launch every step as usual, record nothing */
	ST_CAPTURE_RECORD, /* launch the steps into a new recording, then replay it */
	ST_CAPTURE_REPLAY  /* replay the recording */
} st_capture_action;

/* What a backend remembers between runs. Zero it to start. */
typedef struct st_capture_state {
	bool recorded;        /* a recording exists, made under key */
	st_capture_key key;
	bool seen;            /* the last run (eager or not) was under last */
	st_capture_key last;
	uint64_t records;     /* recordings made so far (for reports and tests) */
} st_capture_state;

/* Why a recording made under was cannot be replayed under now, as a few
 * words for a log ("a runtime option changed"), or NULL when it can. */
const char *st_capture_stale(const st_capture_key *was, const st_capture_key *now);
/*
 * What the next run under now does, updating s: profiled and one-off runs
 * run eagerly; the first run under a new key runs eagerly too (it warms
 * the libraries up: lazy module loading and algorithm searches cannot
 * happen inside a recording); the second records; later ones replay while
 * st_capture_stale finds nothing. The caller drops its old recording when
 * told to record. why (may be NULL) gets the reason for a record or an
 * eager run after a recording existed, else "".
 */
st_capture_action st_capture_next(st_capture_state *s, const st_capture_key *now, const char **why);

#endif
