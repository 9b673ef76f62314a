/* Inference reports: what one profiled run measured, kept as a versioned
 * JSON file (.strata-report.json, docs/report-format.md) that the CLI, the
 * TUI and comparisons read back. */
#ifndef ST_REPORT_H
#define ST_REPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "st-core.h"

#define ST_REPORT_FORMAT "strata-report"
#define ST_REPORT_MAJOR 1
#define ST_REPORT_MINOR 1

/* The most per-iteration samples a report keeps of one series (the first
 * ones, in run order); statistics still use every sample. */
#define ST_REPORT_MAX_SAMPLES 1000

/* Statistics of a series of times, in milliseconds. */
typedef struct st_report_times {
	int count;               /* samples; 0: not measured */
	double mean, median, min, max, p90, p95, p99, stddev;
} st_report_times;

/* One layer of the layer table (a plan step of kind layer). */
typedef struct st_report_layer {
	char *name;
	char *type;
	char *output;            /* output shape as text, "1x64x56x56" */
	int distance;            /* layers on the longest path from an input */
	st_report_times time;    /* per iteration, ms */
	double share;            /* of the summed layer times, 0 to 1 */
	double flops;            /* one inference */
	double bytes;            /* moved: inputs read, outputs written, weights read */
	double gflops, gbs;      /* achieved: flops / mean time, bytes / mean time */
	/* Memory, bytes: allocated when the layer ran, freed after it, live
	 * after it, and persistent (allocated and never freed before the end). */
	int64_t mem_allocated, mem_freed, mem_live, mem_persistent;
	/* Hardware counters per iteration, or -1 when unavailable. */
	double cycles, instructions, cache_misses;
	/* The profiled iterations' times (ms) in run order, for sparklines;
	 * NULL and 0 when the report has none (format 1.0). */
	double *samples;
	int n_samples;
} st_report_layer;

typedef struct st_report {
	int major, minor;        /* format version it was read as */
	/* Network summary. */
	char *model;             /* model file as given */
	char *network;           /* network name */
	char *network_version;
	char *strata_version;
	char *date;              /* ISO 8601, UTC */
	char *backend;           /* "cpu" */
	char *device;            /* "x86_64, 2 cores" */
	char *format;            /* "fp32-nchw" */
	int threads;
	int iterations, warmup;
	st_report_times latency; /* headline: the unprofiled timing run */
	double *latency_samples; /* its iterations (ms) in run order, or NULL (format 1.0) */
	int n_latency_samples;
	double throughput;       /* inferences per second (batch / mean) */
	int64_t batch;
	int64_t peak_bytes;      /* activation memory at the peak */
	char *peak_layer;        /* where the peak happens, or NULL */
	/* The profiled run. */
	int profile_iterations;
	st_report_layer *layers; /* in execution order */
	int n_layers;
	char **skipped;          /* layers that ran no step (inputs, outputs, fused), or NULL */
	int n_skipped;
	/* Why hardware counters are missing ("perf_event_open: ..."), or NULL
	 * when they were measured or not asked for. */
	char *counters_note;
} st_report;

/* engine-report.c */
/* Computes mean, median, percentiles (nearest rank), min, max and standard
 * deviation of n samples (ms); samples is reordered. */
void st_report_times_from(st_report_times *t, double *samples, int n);
/* The canonical JSON text of a report; caller frees. */
char *st_report_serialize(const st_report *r);
/* Writes the report atomically. */
int st_report_save(const st_report *r, const char *path, char *err, size_t err_size);
/* Reads a report; errors name file:line:col and the field. Returns 0, or -1
 * (r is then empty). Free with st_report_free either way. */
int st_report_parse(const char *text, size_t len, const char *file, st_report *r, st_diag *d);
int st_report_load(const char *path, st_report *r, st_diag *d);
void st_report_free(st_report *r);
/* Loads n reports into reports[0..n) (zeroed first), stopping at the first
 * that cannot be read. Returns 0, or -1 with the reasons in d; free each
 * with st_report_free either way. */
int st_report_load_many(const char *const *paths, int n, st_report *reports, st_diag *d);

/* The layer of r with this name and type (how reports are matched), or NULL. */
const st_report_layer *st_report_find_layer(const st_report *r, const char *name, const char *type);
/* r's layer indices, slowest mean time first, ties in execution order.
 * Caller frees. */
int *st_report_slowest(const st_report *r);

/* The time of one layer type: how many layers, their summed mean time and
 * its share of all layers' time. */
typedef struct st_report_type {
	const char *type;        /* r's own string */
	int first;               /* its first layer */
	int count;
	double time, share;
} st_report_type;
/* r's layer types, the largest total first (ties in order of first
 * appearance), *n of them. Valid while r is; caller frees the array. */
st_report_type *st_report_by_type(const st_report *r, int *n);

/* Appends a sparkline of v[0..n) in at most cells characters: one of
 * ▁▂▃▄▅▆▇█ per cell (with ascii, one of _.-=+*#@), scaled from lo (lowest
 * bar) to hi (highest); lo >= hi scales from the series' own least to
 * greatest. More samples than cells: each cell shows the mean of its run
 * of samples. Returns the cells written (0 for no samples). */
int st_report_sparkline(st_buf *out, const double *v, int n, int cells, double lo, double hi, bool ascii);

#endif
