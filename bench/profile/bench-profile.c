/* bench/profile: what profiling costs. The same plan runs with the
 * per-step clock off and on, in alternating batches so that both see the
 * same machine state; prints each median and their ratio (target <= 1.05).
 *   bench-profile MODEL [RUNS] [THREADS] */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "st-engine.h"

static int
compare(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double
median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, compare);
	return v[n / 2];
}

int
main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: bench-profile MODEL [RUNS] [THREADS]\n");
		return 2;
	}
	int runs = argc > 2 ? atoi(argv[2]) : 40, threads = argc > 3 ? atoi(argv[3]) : 1;
	if (runs < 4)
		runs = 4;
	st_registry *r = st_registry_new();
	st_registry_load_default(r);
	st_diag d;
	st_diag_init(&d);
	st_graph *g = st_model_load(argv[1], r, &d);
	if (g == NULL) {
		st_diag_print(&d, stderr);
		return 2;
	}
	st_graph_check(g);
	st_plan_options opt = { .format = -1, .threads = threads };
	st_plan *p = st_plan_compile(g, &opt, &d);
	if (p == NULL || st_plan_bind_random_weights(p, 1, &d) != 0) {
		st_diag_print(&d, stderr);
		return 2;
	}
	for (int i = 0; i < st_plan_input_count(p); i++) {
		st_shape s = *st_plan_input_shape(p, i);
		s.dtype = ST_DTYPE_FLOAT32;
		int64_t n = st_shape_elements(&s);
		float *data = st_xcalloc((size_t)n, sizeof *data);
		for (int64_t k = 0; k < n; k++)
			data[k] = (float)((k * 7919) % 255) / 255.0f;
		st_tensor t = { .data = data, .shape = s, .layout = ST_LAYOUT_NCHW };
		if (st_plan_set_input(p, i, &t, &d) != 0) {
			st_diag_print(&d, stderr);
			return 2;
		}
		free(data);
	}
	double *off = st_xcalloc((size_t)runs, sizeof *off), *on = st_xcalloc((size_t)runs, sizeof *on);
	for (int w = 0; w < 3; w++)
		st_plan_run(p, &d);
	/* Batches of 2 runs each way, alternating. */
	for (int k = 0; k < runs; k += 2) {
		for (int pass = 0; pass < 2; pass++) {
			st_plan_set_profiling(p, pass == 1);
			for (int j = k; j < k + 2 && j < runs; j++) {
				double t0 = st_now();
				st_plan_run(p, &d);
				(pass ? on : off)[j] = (st_now() - t0) * 1e3;
			}
		}
	}
	double m_off = median(off, runs), m_on = median(on, runs);
	printf("%-28s %7s %12s %13s %7s\n", "model", "threads", "plain (ms)", "profiled (ms)", "ratio");
	const char *base = strrchr(argv[1], '/');
	printf("%-28s %7d %12.3f %13.3f %7.3f\n", base ? base + 1 : argv[1], st_plan_threads(p), m_off, m_on,
	       m_on / m_off);
	free(off);
	free(on);
	st_plan_free(p);
	st_graph_free(g);
	st_registry_free(r);
	st_diag_free(&d);
	return 0;
}
