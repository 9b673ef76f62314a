/* The live profiling dashboard: the samples its worker collects, the worker
 * itself (tui-runner.c) and the full-screen view (tui-dashboard.c). Private
 * to src/tui. */
#ifndef TUI_DASHBOARD_H
#define TUI_DASHBOARD_H

#include <stdbool.h>
#include <stdint.h>

#include "st-engine.h"
#include "tui-app.h"

/* How many recent iterations each series keeps for sparklines and the
 * window's statistics. */
#define ST_DASH_WINDOW 256

/* ---- types ---- */

/* A ring buffer of the last `capacity` values of a series. */
typedef struct st_ring {
	double *values;
	int capacity, count, next; /* next: where the next value goes */
} st_ring;

/* Statistics of the values a ring holds; count 0 means none (shown as N/A). */
typedef struct st_window_stats {
	int count;
	double min, mean, max, p99;
} st_window_stats;

typedef enum st_dash_phase {
	ST_DASH_STARTING, /* compiling, binding weights, setting inputs */
	ST_DASH_RUNNING,
	ST_DASH_PAUSED,
	ST_DASH_FAILED    /* the message says why; nothing runs */
} st_dash_phase;

/* One row of the layer table: a plan step (a layer or a conversion). */
typedef struct st_dash_row {
	char *name, *type;
	st_ring ms;          /* its recent times */
} st_dash_row;

/* What the dashboard shows. The worker writes it under the runner's lock;
 * drawing only reads it, under the same lock. */
typedef struct st_dash_data {
	st_dash_phase phase;
	char *message;       /* why it failed, or what it is doing while starting (lines); or NULL */
	char *note;          /* shown while running: random weights, a format that failed; or NULL */
	st_dash_row *rows;
	int n_rows;
	st_ring latency;     /* ms per inference */
	st_ring throughput;  /* inferences per second, from the wall time between iterations */
	long iterations;     /* since the dashboard opened */
	/* The plan, valid once compiled is set. */
	bool compiled;
	int threads;
	st_tensor_format format;
	const char *backend; /* static text */
	size_t arena_bytes, peak_bytes;
	int64_t batch;
	/* The last snapshot: its file, or why it failed; NULL before any. */
	char *snapshot;
	bool snapshot_failed, snapshot_busy;
} st_dash_data;

/* How rows are ordered. */
typedef enum st_dash_sort {
	ST_DASH_SORT_ORDER, /* execution order */
	ST_DASH_SORT_TIME,  /* mean time, slowest first */
	ST_DASH_SORT_NAME,
	ST_DASH_SORT_COUNT
} st_dash_sort;

/* The view's own state (the UI thread's alone). */
typedef struct st_dash_view {
	st_dash_sort sort;
	int top;             /* first row shown */
} st_dash_view;

typedef struct st_runner st_runner;

/* What the worker runs: everything copied or owned, so that it shares
 * nothing with the editing session. */
typedef struct st_runner_setup {
	st_graph *graph;     /* a private copy; the runner frees it */
	char *model;         /* the model file, for reports (NULL: unsaved); the runner frees it */
	char *weights_dir;   /* the model's weights folder, or NULL; the runner frees it */
	char *weights_note;  /* why there is none, or NULL; the runner frees it */
	int threads;         /* 0: every core */
	int format;          /* an st_tensor_format, or -1 for the network's */
} st_runner_setup;

/* ---- tui-dashboard.c: rings, statistics, the data model and the view ---- */

/* An empty ring of capacity values; free with st_ring_free. */
void st_ring_init(st_ring *r, int capacity);
void st_ring_free(st_ring *r);
void st_ring_clear(st_ring *r);
void st_ring_push(st_ring *r, double v);
/* The i-th value kept, from the oldest (0) to the newest (count - 1). */
double st_ring_at(const st_ring *r, int i);
/* Min, mean, max and the nearest-rank 99th percentile of the values kept. */
void st_ring_stats(const st_ring *r, st_window_stats *s);

/* Empty data; free with st_dash_data_free. */
void st_dash_data_init(st_dash_data *d);
void st_dash_data_free(st_dash_data *d);
/* Replaces the rows with n new ones named and typed as given (copied). */
void st_dash_data_set_rows(st_dash_data *d, int n, const char *const *names, const char *const *types);
/* Records one iteration: its total, each row's time (n_rows of them), and
 * the wall seconds since the previous one ended (<= 0: unknown, the total
 * stands in for it). */
void st_dash_data_push(st_dash_data *d, double total_ms, const double *row_ms, double interval_s);
/* Replaces a text field (message, note, snapshot) with a copy of text (NULL clears). */
void st_dash_set_text(char **field, const char *text);

/* Draws the dashboard into r (pure: from d and v alone). */
void st_dash_draw(st_screen *s, st_rect r, const st_dash_data *d, const st_dash_view *v, const st_theme *theme);

/* The dashboard over the application: opening copies the model and starts
 * the worker; closing stops and joins it. */
int st_dashboard_open(st_app *app);
void st_dashboard_close(st_app *app);
void st_dashboard_draw(st_app *app, st_screen *s, st_rect r);
/* Handles a key of the dashboard's own; false for others. */
bool st_dashboard_key(st_app *app, const st_key *k);
/* The descriptor that becomes readable when the worker has news, or -1. */
int st_dashboard_fd(const st_app *app);
/* Empties it (the next frame shows the news). */
void st_dashboard_drain(st_app *app);
/* The actions the hint line shows while it is open (NULL-terminated). */
extern const char *const st_dashboard_hints[];

/* ---- tui-runner.c: the worker, and what other workers share with it ---- */

/* A setup from the application's model: a private copy of its graph, its
 * file, and its weights folder or why there is none; format -1 and threads
 * 0. Returns 0, or -1 with the reason in err. The caller hands it to a
 * worker, or frees its contents with st_runner_setup_free. */
int st_runner_setup_of(st_app *app, st_runner_setup *setup, char *err, size_t err_size);
void st_runner_setup_free(st_runner_setup *setup);
/* Binds setup's weights to plan, or random ones when they cannot be bound
 * (*note then says why; else NULL). Returns 0, or -1 with the reason in
 * *why. Caller frees *note and *why. */
int st_runner_bind_weights(st_plan *plan, const st_runner_setup *setup, char **note, char **why);
/* Every diagnostic's text, a line each (fallback when there is none);
 * caller frees. */
char *st_runner_diag_text(const st_diag *d, const char *fallback);
/* Why graph g does not type-check, a line per error; caller frees. */
char *st_runner_type_errors(const st_graph *g);


/* Starts a worker thread on setup (whose contents it takes over, and frees
 * even on failure) that compiles, binds weights, sets random inputs and
 * runs the plan again and again with profiling, publishing each iteration.
 * NULL with the reason in err when no thread can start. Caller stops and
 * frees it with st_runner_stop. */
st_runner *st_runner_start(st_runner_setup *setup, char *err, size_t err_size);
/* Asks the worker to stop (between layers), joins it and frees everything. */
void st_runner_stop(st_runner *r);
int st_runner_fd(const st_runner *r);
void st_runner_drain(st_runner *r);
/* The data, locked: hold it briefly (drawing), then unlock. */
const st_dash_data *st_runner_lock(st_runner *r);
void st_runner_unlock(st_runner *r);
void st_runner_pause(st_runner *r, bool paused);
bool st_runner_paused(st_runner *r);
/* A new thread count (0: every core) or format (-1: the network's): the
 * worker recompiles, and goes back to the last good settings when that fails. */
void st_runner_set_threads(st_runner *r, int threads);
void st_runner_set_format(st_runner *r, int format);
/* The settings asked for last. */
void st_runner_settings(st_runner *r, int *threads, int *format);
/* Profiles the plan into a report in the model's reports folder, as
 * `strata run --profile` writes them; the data's snapshot says where. */
void st_runner_snapshot(st_runner *r);

#endif
