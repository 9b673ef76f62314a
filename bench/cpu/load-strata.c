/* bench/cpu/load-strata: what loading a model costs Strata, and how much
 * resident memory running it adds. Times the model file to a bound plan
 * (load, check, compile, bind: weights mapped and packed), faults in every
 * bound weight, resets the kernel's peak-RSS mark, then runs the plan;
 * prints one JSON line: that time in ms, and in KiB the resident set
 * before loading and once ready, the peak while loading and the peak while
 * running.
 *   load-strata MODEL WEIGHTS_DIR|--random-weights THREADS [RUNS]
 *
 * With --serve it is Strata's side of bench.py's race instead: it loads
 * the model, runs it once and WARMUP more times, prints {"ready": true},
 * then for each line "N [LEAD_MS]" read from stdin runs it untimed until
 * LEAD_MS milliseconds have passed (none without it), then N times, and
 * prints {"ms": [...]}, the time of each timed run, until stdin ends; so
 * that the engines take turns run by run and a busy spell of the machine
 * falls on all of them alike.
 *   load-strata --serve MODEL WEIGHTS_DIR|--random-weights THREADS WARMUP */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "st-engine.h"

/* A "VmRSS:"-style line of /proc/self/status in KiB, or -1 where there is
 * no such file (not Linux). */
static long
status_kib(const char *key)
{
	FILE *f = fopen("/proc/self/status", "r");
	if (f == NULL)
		return -1;
	char line[256];
	long value = -1;
	size_t n = strlen(key);
	while (fgets(line, sizeof line, f) != NULL) {
		if (strncmp(line, key, n) == 0 && line[n] == ':') {
			value = strtol(line + n + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	return value;
}

/* Writing 5 to clear_refs resets VmHWM to the present RSS (Linux 4.0 on),
 * so that the peak read later belongs to the runs alone. */
static int
reset_peak(void)
{
	FILE *f = fopen("/proc/self/clear_refs", "w");
	if (f == NULL)
		return -1;
	int ok = fputs("5", f) >= 0;
	return fclose(f) == 0 && ok ? 0 : -1;
}

/* Reads one float per page of every weight the plan has bound, so that a
 * memory-mapped weights file is resident before the baseline is taken and
 * the runs' growth is activations and scratch, not weights. */
static float
touch_weights(const st_plan *p, const st_graph *g)
{
	float sum = 0;
	for (int i = 0; i < g->n_layers; i++) {
		const st_layer *l = g->layers[i];
		for (int w = 0; w < l->n_weights; w++) {
			st_shape shape;
			const float *data = st_plan_layer_weight(p, l, l->weights[w].name, &shape);
			if (data == NULL)
				continue;
			int64_t n = st_shape_elements(&shape);
			for (int64_t k = 0; k < n; k += 1024)
				sum += data[k];
		}
	}
	return sum;
}

/* Bursts of runs on request (above); 0 when stdin ends, 3 when a run fails. */
static int
serve(st_plan *p, st_diag *d, int warmup)
{
	for (int k = 0; k <= warmup; k++) {
		if (st_plan_run(p, d) != 0) {
			st_diag_print(d, stderr);
			return 3;
		}
	}
	printf("{\"ready\": true}\n");
	fflush(stdout);
	char line[64];
	while (fgets(line, sizeof line, stdin) != NULL) {
		char *rest;
		int n = (int)strtol(line, &rest, 10);
		double lead_ms = strtod(rest, NULL), lead0 = st_now();
		while ((st_now() - lead0) * 1e3 < lead_ms) {
			if (st_plan_run(p, d) != 0) {
				st_diag_print(d, stderr);
				return 3;
			}
		}
		printf("{\"ms\": [");
		for (int k = 0; k < n; k++) {
			double t0 = st_now();
			if (st_plan_run(p, d) != 0) {
				st_diag_print(d, stderr);
				return 3;
			}
			printf("%s%.4f", k ? ", " : "", (st_now() - t0) * 1e3);
		}
		printf("]}\n");
		fflush(stdout);
	}
	return 0;
}

int
main(int argc, char **argv)
{
	bool serving = argc > 1 && strcmp(argv[1], "--serve") == 0;
	if (serving) {
		argv++;
		argc--;
	}
	if (argc < 4 || (serving && argc < 5)) {
		fprintf(stderr, "usage: load-strata MODEL WEIGHTS_DIR|--random-weights THREADS [RUNS]\n"
		                "       load-strata --serve MODEL WEIGHTS_DIR|--random-weights THREADS WARMUP\n");
		return 2;
	}
	int threads = atoi(argv[3]), runs = argc > 4 ? atoi(argv[4]) : 3;
	int warmup = serving ? atoi(argv[4]) : 0; /* with --serve that place is WARMUP */
	if (runs < 1)
		runs = 1;
	st_registry *r = st_registry_new();
	st_registry_load_default(r);
	st_diag d;
	st_diag_init(&d);
	long before = status_kib("VmRSS");
	double t0 = st_now();
	st_graph *g = st_model_load(argv[1], r, &d);
	if (g == NULL) {
		st_diag_print(&d, stderr);
		return 2;
	}
	st_graph_check(g);
	st_plan_options opt = { .format = -1, .threads = threads };
	st_plan *p = st_plan_compile(g, &opt, &d);
	int bound = p == NULL ? -1
	            : strcmp(argv[2], "--random-weights") == 0 ? st_plan_bind_random_weights(p, 0, &d)
	                                                       : st_plan_bind_weights(p, argv[2], &d);
	if (bound != 0) {
		st_diag_print(&d, stderr);
		return 2;
	}
	double load_ms = (st_now() - t0) * 1e3;
	for (int i = 0; i < st_plan_input_count(p); i++) {
		st_shape shape = *st_plan_input_shape(p, i);
		shape.dtype = ST_DTYPE_FLOAT32;
		st_tensor t;
		st_tensor_random(&shape, (uint64_t)i, &t);
		int status = st_plan_set_input(p, i, &t, &d);
		free(t.data);
		if (status != 0) {
			st_diag_print(&d, stderr);
			return 2;
		}
	}
	if (serving) {
		int rc = serve(p, &d, warmup);
		st_plan_free(p);
		st_graph_free(g);
		st_registry_free(r);
		st_diag_free(&d);
		return rc;
	}
	volatile float sink = touch_weights(p, g);
	(void)sink;
	long peak_load = status_kib("VmHWM");
	int reset = reset_peak();
	long loaded = status_kib("VmRSS");
	for (int k = 0; k < runs; k++) {
		if (st_plan_run(p, &d) != 0) {
			st_diag_print(&d, stderr);
			return 3;
		}
	}
	long peak_run = status_kib("VmHWM");
	/* peak_reset false: the mark could not be reset, and peak_run may be a
	 * peak from loading. */
	printf("{\"load_ms\": %.3f, \"rss_before_load_kib\": %ld, \"rss_loaded_kib\": %ld, "
	       "\"peak_load_kib\": %ld, \"peak_run_kib\": %ld, \"peak_reset\": %s, \"arena_bytes\": %zu, "
	       "\"runs\": %d}\n",
	       load_ms, before, loaded, peak_load, peak_run, reset == 0 ? "true" : "false", st_plan_arena_bytes(p),
	       runs);
	st_plan_free(p);
	st_graph_free(g);
	st_registry_free(r);
	st_diag_free(&d);
	return 0;
}
