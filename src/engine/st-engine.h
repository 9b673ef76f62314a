/* The engine: a type-checked graph compiled into a plan (order, formats,
 * conversions, memory), bound to weights, and executed on a backend. */
#ifndef ST_ENGINE_H
#define ST_ENGINE_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "st-core.h"

typedef struct st_plan st_plan;
typedef struct st_pool st_pool;

typedef struct st_plan_options {
	int format;          /* an st_tensor_format, or -1 for the network's default */
	int threads;         /* worker threads; 0 = every core */
	const char *backend; /* "cpu" (NULL = "cpu") */
	/* Set from a signal handler to stop a run between layers. */
	volatile sig_atomic_t *cancel;
	/* Every layer's outputs stay readable after a run (st_plan_get_layer_output),
	 * at the cost of no memory reuse between them: for inspecting layers. */
	bool keep_outputs;
	/* No fusion: every layer runs its own step (batch norms are not folded
	 * into convolutions, adds and activations not applied right after
	 * them). STRATA_FUSE=0 in the environment does the same. */
	bool no_fusion;
	/* Every step in the format's layout. Otherwise, in an fp32-nchw plan,
	 * implementations that choose (ST_IMPL_CHOOSES_LAYOUT) may run their
	 * layers channels last, and the tensors between such layers stay so;
	 * inputs and outputs are NCHW either way. STRATA_LAYOUTS=fixed in the
	 * environment does the same. */
	bool fixed_layouts;
	/* Alignment of every tensor in the activation arena, and of the arena:
	 * a power of two from 64 (0 = 64). A device backend asks for what its
	 * libraries want (256 bytes for cuDNN). */
	size_t arena_align;
	/* On a device backend, float32 layers may compute in TF32 (tensor
	 * cores, 10-bit mantissa): faster, less exact. Off by default. */
	bool allow_tf32;
	/* On a device backend, convolutions time their candidate algorithms
	 * once per shape and keep the fastest in the algorithm cache
	 * (docs/cuda.md) instead of taking the library's heuristic choice. */
	bool measure_algorithms;
} st_plan_options;

/* What a plan step is. */
typedef enum st_step_kind {
	ST_STEP_LAYER,   /* a layer's implementation */
	ST_STEP_CONVERT, /* a dtype or layout conversion the plan inserted */
	ST_STEP_FEED     /* an input layer: data the caller set */
} st_step_kind;

/* A read-only view of one step, for listings and reports. */
typedef struct st_step_info {
	st_step_kind kind;
	const st_layer *layer; /* the layer it belongs to (a conversion's consumer or producer) */
	const char *what;      /* "convolution", or "fp16-nhwc -> fp32-nchw" */
	st_tensor_format format; /* the format its float tensors have */
	size_t scratch_bytes;
} st_step_info;

/* ---- engine-plan.c ---- */

/* Compiles a graph that type-checks without errors. The graph must outlive
 * the plan and not change while it exists. Returns NULL with the reasons in
 * d (a layer without an implementation for the backend, a type error).
 * Caller frees with st_plan_free. */
st_plan *st_plan_compile(const st_graph *g, const st_plan_options *opt, st_diag *d);
void st_plan_free(st_plan *p);

int st_plan_step_count(const st_plan *p);
void st_plan_step(const st_plan *p, int i, st_step_info *out);
/* Bytes of the activation arena, and the lower bound: the most bytes live at
 * one time in the largest set of simultaneously live tensors. */
size_t st_plan_arena_bytes(const st_plan *p);
size_t st_plan_live_bound(const st_plan *p);
size_t st_plan_scratch_bytes(const st_plan *p);
size_t st_plan_arena_align(const st_plan *p);
/* Where one of the plan's tensors lies in the arena, and the steps it
 * lives through: written by step first_step (0 for inputs), last read by
 * step last_step. A part (a concatenation's input written in place into
 * its output) lies inside its whole at any offset. */
typedef struct st_tensor_place {
	size_t offset, bytes;
	int first_step, last_step;
	bool part;
} st_tensor_place;
int st_plan_tensor_count(const st_plan *p);
void st_plan_tensor_place(const st_plan *p, int i, st_tensor_place *out);
/* Counters of what a run depends on beyond the input values, for a backend
 * that records a run once and replays it (a CUDA graph): each grows when
 * its part changes, so a recording made under other counts is stale. */
typedef struct st_plan_generations {
	uint64_t build;   /* steps, shapes and tensor places (a new input size re-plans) */
	uint64_t weights; /* weights bound */
	uint64_t runtime; /* values of runtime options, a trigger going back to false included */
} st_plan_generations;
void st_plan_generations_of(const st_plan *p, st_plan_generations *out);
st_tensor_format st_plan_format(const st_plan *p);
int st_plan_threads(const st_plan *p);
/* Appends a human listing of the plan: steps, conversions, memory. */
void st_plan_describe(const st_plan *p, st_buf *out);

/* ---- engine-run.c ---- */

/* Weights from a folder of layerName_weightType.npy files (memory-mapped).
 * Every missing or mismatched file is reported; returns -1 if any. */
int st_plan_bind_weights(st_plan *p, const char *dir, st_diag *d);
/* Deterministic random weights (uniform in +-1/sqrt(fan-in), per tensor
 * seeded by its names and seed): for profiling untrained designs. */
int st_plan_bind_random_weights(st_plan *p, uint64_t seed, st_diag *d);

int st_plan_input_count(const st_plan *p);
const char *st_plan_input_name(const st_plan *p, int i);
/* Index of the input layer called name, or -1. */
int st_plan_input_index(const st_plan *p, const char *name);
/* The shape (and dtype) the input takes now. */
const st_shape *st_plan_input_shape(const st_plan *p, int i);
/* The batch size: the first input's leading dimension (1 without inputs). */
int64_t st_plan_batch(const st_plan *p);
/* Deterministic uniform [0, 1) float32 data of a shape, from a seed (the
 * random weights' generator, shifted), for inputs without data. Caller
 * frees t->data. */
void st_tensor_random(const st_shape *shape, uint64_t seed, st_tensor *t);
/* Copies t (NCHW, any dtype convertible to the input's) into input i, once
 * weights are bound. A different shape re-plans for it (dynamic sizes);
 * weights stay bound. */
int st_plan_set_input(st_plan *p, int i, const st_tensor *t, st_diag *d);

/* Runs every step once. Returns 0, -1 on failure (reason in d), or 1 when
 * cancelled through the options' flag. */
int st_plan_run(st_plan *p, st_diag *d);

int st_plan_output_count(const st_plan *p);
const char *st_plan_output_name(const st_plan *p, int i);
/* The output's shape; dtype float32 for float outputs, whatever the format. */
const st_shape *st_plan_output_shape(const st_plan *p, int i);
/* Copies output i into out (NCHW; float outputs as float32). */
void st_plan_get_output(const st_plan *p, int i, void *out);
/* The shape of layer l's output k in this plan (float as float32), or NULL
 * when l is not in the plan (an output layer) or has no output k. */
const st_shape *st_plan_layer_shape(const st_plan *p, const st_layer *l, int k);
/* Copies layer l's output k from the last run into out (NCHW, float as
 * float32, st_plan_layer_shape's size). Returns 0, or -1 when the plan does
 * not keep it (compiled without keep_outputs; inputs and the network's
 * outputs are always kept) or no run has finished since the plan changed. */
int st_plan_get_layer_output(const st_plan *p, const st_layer *l, int k, void *out);
/* Layer l's bound weight called name (FP32 NCHW, read-only; its shape into
 * *shape), or NULL when l has no such weight, or none bound (an optional
 * weight without a file). Valid until the plan is freed or bound again. */
const float *st_plan_layer_weight(const st_plan *p, const st_layer *l, const char *name, st_shape *shape);

/* Runtime options (ST_PARAM_RUNTIME, ABI 2.1). A plan keeps its own copy
 * of every layer's parameters, taken at st_plan_compile; implementations
 * read that copy. st_plan_set_runtime parses value_text as the edit command
 * `set` would ("0.5", "true", "viridis") and stores it in the plan's copy:
 * the next st_plan_run uses it, with no type check and no re-plan. The
 * graph keeps its own value (the caller updates it through the usual
 * commands). Returns 0, or -1 with a reason in err: l not in the plan, no
 * such parameter, a parameter that is not a runtime option (changing it
 * needs a new check and plan), a label (read-only), or a value the
 * parameter's schema refuses. Not while the plan runs. Trigger options
 * (ST_PARAM_TRIGGER) go back to false when a run ends. */
int st_plan_set_runtime(st_plan *p, const st_layer *l, const char *param, const char *value_text, char *err,
                        size_t err_size);
/* The plan's parameter values of layer l (by its type's parameter order),
 * or NULL when l is not in the plan. Owned by the plan; valid until the
 * next st_plan_set_runtime or st_plan_free. */
const st_value *st_plan_layer_params(const st_plan *p, const st_layer *l);
/* The status line layer l's implementation gave in the last run
 * (api->status), its severity into *severity (when not NULL), or NULL when
 * it gave none. Cleared when a run starts. Owned by the plan; valid until
 * the next run or st_plan_free. */
const char *st_plan_layer_status(const st_plan *p, const st_layer *l, st_severity *severity);

/* ---- engine-profile.c ---- */

typedef struct st_report st_report;

/* Times every step of each run from now on (on), or stops (off). Off, a
 * run reads no clock. */
void st_plan_set_profiling(st_plan *p, bool on);
/* Seconds each step took in the last run (st_plan_step_count of them), or
 * NULL when profiling is off or no run happened since the plan changed. */
const double *st_plan_step_seconds(const st_plan *p);
/* Runs the plan iterations times with profiling and fills r's layer table
 * (one row per layer or conversion step, in execution order), skipped
 * layers, peak memory and profile_iterations; the caller fills the summary
 * and frees r with st_report_free. Returns st_plan_run's result. */
int st_plan_profile(st_plan *p, int iterations, st_report *r, st_diag *d);
/* Fills the summary of a report about a run of p made at when: format
 * version, model (the file as given), network name and version, Strata's
 * version, date, backend, device, format, threads and batch. The strings
 * belong to r (st_report_free frees them). */
void st_report_describe_plan(st_report *r, const char *model, const st_plan *p, const char *backend,
                             time_t when);
/* Where reports of the model file go unless told otherwise:
 * $XDG_STATE_HOME/strata/reports/<its name without .strata.json>
 * ("unsaved" for NULL). Caller frees. */
char *st_report_default_dir(const char *model);
/* Saves r in dir (made when missing) under a free name for a report made
 * at when: DATE-TIME.strata-report.json, with -2, -3... when two share a
 * second. Returns 0 with the file in *path (caller frees), or -1 with the
 * reason in err and *path NULL. */
int st_report_save_in(const st_report *r, const char *dir, time_t when, char **path, char *err,
                      size_t err_size);

/* ---- engine-counters.c ---- */

/* Hardware counters of a set of threads: cycles, instructions and cache
 * misses, in user space, through perf_event_open. */
#define ST_N_COUNTERS 3
enum { ST_COUNTER_CYCLES, ST_COUNTER_INSTRUCTIONS, ST_COUNTER_CACHE_MISSES };
typedef struct st_counters st_counters;
/* Opens the counters on n threads (kernel thread ids); software: count
 * task-clock ns, context switches and page faults instead (for tests, on
 * machines without hardware counters). NULL when none can be opened, with
 * the reason in why; an event missing while others work also leaves a
 * reason there. Caller frees with st_counters_close. */
st_counters *st_counters_open(const int *tids, int n, bool software, char *why, size_t why_size);
/* Counts so far, summed over the threads; -1 for an unavailable event.
 * Returns 0, or -1 when a read fails. */
int st_counters_read(const st_counters *c, double out[ST_N_COUNTERS]);
bool st_counters_available(const st_counters *c, int event);
void st_counters_close(st_counters *c);

/* ---- engine-xwn.c: the figures of XWN layers (docs/xwn.md) ---- */

/* Most level indices a transform has: 2^(8-1), for bit 8. */
#define ST_XWN_MAX_LEVELS 128

/* The XWN parameter set of one layer. */
typedef struct st_xwn_settings {
	bool transform;    /* use_transform */
	int bit;           /* 0: no transform; 1: sign times the mean; n: 2^(n-1) levels */
	float max_scale;   /* the largest level, as a multiple of a slice's mean magnitude */
	bool pruning;      /* use_pruning */
	float prun_weight; /* the pruning edge, as a fraction of an output channel's mean */
} st_xwn_settings;

/* What the transform does to one weight tensor of a layer. */
typedef struct st_xwn_part {
	char name[ST_WEIGHT_NAME_MAX]; /* the weight ("weights", "stage0_weights") */
	st_shape shape;
	int64_t slices;                /* kernel slices: (output, input channel) pairs */
	int64_t pruned;                /* of them, zeroed by pruning */
} st_xwn_part;

/* The figures of an XWN layer for its settings and full-precision weights. */
typedef struct st_xwn_figures {
	st_xwn_settings settings;
	bool active;       /* the settings change any weight */
	bool transposed;   /* weights are input channels first (a transposed convolution) */
	int n_parts;       /* weight tensors transformed */
	st_xwn_part parts[ST_MAX_WEIGHTS];
	int64_t slices, pruned, weights; /* over every part */
	int levels;        /* level indices in use: 2^(bit-1), 1 for bit 1, 0 without transform */
	/* Weights of kept slices at each level index k, the level being
	 * max_scale * 2^-k times the slice's mean magnitude (0 is the largest). */
	int64_t level_count[ST_XWN_MAX_LEVELS];
} st_xwn_figures;

/* Whether l's type carries the XWN parameter set (use_transform, bit,
 * max_scale, use_pruning, prun_weight, found by name), whatever its
 * collection. */
bool st_xwn_layer(const st_layer *l);
/* Whether l's weights are laid out input channels first (I x O/groups x
 * taps), as the transposed convolution's are. */
bool st_xwn_transposed(const st_layer *l);
/* Whether a weight of this shape is one the transform touches: rank 3 or
 * more (filters), not biases. */
bool st_xwn_weight_transformed(const st_shape *shape);
/* l's settings from params (by its type's parameter order; NULL: the
 * graph's values). Returns 0, or -1 when l is not an XWN layer. */
int st_xwn_settings_of(const st_layer *l, const st_value *params, st_xwn_settings *out);
/* "4-bit, max_scale 4, pruning 0.5", "transform and pruning off": the
 * settings in a few words, appended to out. */
void st_xwn_settings_text(const st_xwn_settings *s, st_buf *out);
/* The figures of XWN layer l from p's bound full-precision weights and
 * p's parameter values. Returns 0, or -1 with a reason in err (not an XWN
 * layer, not in the plan, no weights bound, settings out of range). */
int st_xwn_figures_from_plan(const st_plan *p, const st_layer *l, st_xwn_figures *out, char *err,
                             size_t err_size);
/* The same without a plan: the weights read from the folder dir (as
 * strata run binds them), l's weights and settings from the graph's last
 * type check. Returns 0, or -1 with a reason naming the file in err. */
int st_xwn_figures_from_dir(const st_layer *l, const char *dir, st_xwn_figures *out, char *err,
                            size_t err_size);
/* Weight name of XWN layer l as the layer runs with it: transformed and
 * pruned by the plan's settings when st_xwn_weight_transformed, else
 * unchanged. Returns 1 (transformed) or 0 (unchanged) with a copy in *out
 * (caller frees with free) and its shape in *shape; -1 with a reason in err
 * (not an XWN layer, no such weight bound, settings out of range). */
int st_xwn_transformed_weight(const st_plan *p, const st_layer *l, const char *name, float **out,
                              st_shape *shape, char *err, size_t err_size);
/* A copy of g with use_transform and use_pruning off on every XWN layer
 * (the other settings kept), type-checked: the same network without the
 * transform. file names the copy in messages; *n_changed (when not NULL)
 * gets how many layers had either on. NULL with the reasons in d when the
 * copy cannot be made. Caller frees with st_graph_free. */
st_graph *st_xwn_graph_plain(const st_graph *g, const char *file, int *n_changed, st_diag *d);
/* How far a is from b over n values: the largest |a - b| and ||a - b|| /
 * ||b|| (0 when both norms are 0, infinity when only b's is). NaN in either
 * gives NaN. */
void st_xwn_difference(const float *a, const float *b, int64_t n, double *max_abs, double *rel_l2);

/* ---- cpu-pool.c ---- */

/* A pool of n threads (the caller counts as one; n <= 0: every core).
 * Caller frees with st_pool_free. */
st_pool *st_pool_new(int n);
/* Stops helper threads that linked libraries start on their own (OpenBLAS's
 * servers spin for some 70 ms after it loads, on the cores the pool will
 * use; kernels/cpu/k-gemm.c). st_pool_new calls it; a program that will run
 * plans calls it first thing. Idempotent. */
void st_cpu_quiet(void);
void st_pool_free(st_pool *pool);
int st_pool_threads(const st_pool *pool);
/* The kernel thread ids of the pool's threads, the calling thread first
 * (it runs chunk 0), into tids (room for st_pool_threads). Returns how many. */
int st_pool_thread_ids(st_pool *pool, int *tids);
/* The execution context plugins receive, running on this pool. */
void st_pool_context(st_pool *pool, st_exec_ctx *ctx);
/* Number of cores this process may use. */
int st_cpu_count(void);
/* The SIMD level of the CPU kernels ("avx512", "avx2" or "portable": the
 * best this CPU has, or STRATA_ISA's), and why STRATA_ISA was not followed
 * (NULL when it was, or is unset), for front ends to show once. */
const char *st_cpu_simd(void);
const char *st_cpu_simd_note(void);

/* ---- engine-input.c: files as input tensors ---- */

typedef enum st_input_kind {
	ST_INPUT_NPY,    /* a NumPy array, passed as it is */
	ST_INPUT_IMAGE,  /* PNG or JPEG, converted by the input layer's parameters */
	ST_INPUT_VIDEO   /* frames converted as images (FFmpeg) */
} st_input_kind;

struct st_image;
/* What path holds: NumPy by its first bytes (or a .npy name when it cannot
 * be read), a video by its extension, otherwise an image. */
st_input_kind st_input_kind_of(const char *path);
/* A tensor for an input of shape want from a .npy file, converted to want's
 * dtype; a sample without the batch dimension gets a batch of one. Returns
 * 0, or -1 with a message; caller frees t->data. */
int st_input_from_npy(const char *path, const st_shape *want, st_tensor *t, char *err, size_t err_size);
/* Input layer l's image conversion: scale, then mean and std (one value or
 * one per channel); the arrays stay l's. Returns 0, or -1 when l has none. */
int st_input_image_params(const st_layer *l, double *scale, const double **mean, int *n_mean, const double **std,
                          int *n_std);
/* A tensor of shape want (N x C x H x W) for input layer l from an image,
 * converted by st_input_image_params and st_image_to_tensor. Returns 0, or
 * -1 with a message; caller frees t->data. */
int st_input_from_image(const st_layer *l, const st_shape *want, const struct st_image *img, st_tensor *t,
                        char *err, size_t err_size);

#endif
