/* strata run: inference on a model, with weights and inputs from files,
 * timing over iterations, outputs to files or a summary. */
#include "config.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "st-engine.h"
#include "st-io.h"
#include "st-report.h"

static volatile sig_atomic_t interrupted;

static void
on_interrupt(int sig)
{
	(void)sig;
	interrupted = 1;
}

static int
write_output(st_plan *plan, int o, const char *path, char *err, size_t size)
{
	const st_shape *s = st_plan_output_shape(plan, o);
	int64_t bytes = st_shape_bytes(s);
	void *data = st_xmalloc((size_t)(bytes > 0 ? bytes : 1));
	st_plan_get_output(plan, o, data);
	int rc;
	if (cli_has_suffix(path, ".png")) {
		if (s->dtype != ST_DTYPE_FLOAT32 || s->rank != 4 || s->dims[0] != 1 ||
		    (s->dims[1] != 1 && s->dims[1] != 3)) {
			char text[128];
			st_shape_format(s, text, sizeof text);
			snprintf(err, size, "%s: output '%s' is %s; a PNG needs 1x1xHxW or 1x3xHxW floats", path,
			         st_plan_output_name(plan, o), text);
			rc = -1;
		} else {
			rc = st_image_write_png(path, data, (int)s->dims[1], (int)s->dims[2], (int)s->dims[3], err,
			                        size);
		}
	} else {
		rc = st_npy_write(path, s, data, err, size);
	}
	free(data);
	return rc;
}

/* A few lines about an output: its shape, range and, for scores, the top 5. */
static void
summarize_output(st_plan *plan, int o, cJSON *json)
{
	const st_shape *s = st_plan_output_shape(plan, o);
	int64_t n = st_shape_elements(s);
	char text[128];
	st_shape_format(s, text, sizeof text);
	if (s->dtype != ST_DTYPE_FLOAT32) {
		if (json == NULL)
			printf("output %s: %s %s\n", st_plan_output_name(plan, o), st_dtype_name(s->dtype), text);
		return;
	}
	float *x = st_xmalloc(sizeof *x * (size_t)(n ? n : 1));
	st_plan_get_output(plan, o, x);
	double lo = INFINITY, hi = -INFINITY, sum = 0;
	int64_t nan = 0;
	for (int64_t i = 0; i < n; i++) {
		if (isnan(x[i])) {
			nan++;
			continue;
		}
		lo = fmin(lo, x[i]);
		hi = fmax(hi, x[i]);
		sum += x[i];
	}
	double mean = n > nan ? sum / (double)(n - nan) : NAN;
	/* Scores of one sample over classes: name the best ones. */
	int top[5], n_top = 0;
	if (s->rank == 2 && s->dims[0] == 1 && s->dims[1] >= 2) {
		for (int k = 0; k < 5 && k < s->dims[1]; k++) {
			int best = -1;
			for (int64_t i = 0; i < s->dims[1]; i++) {
				bool used = false;
				for (int j = 0; j < n_top; j++)
					used |= top[j] == i;
				if (!used && !isnan(x[i]) && (best < 0 || x[i] > x[best]))
					best = (int)i;
			}
			if (best < 0)
				break;
			top[n_top++] = best;
		}
	}
	if (json != NULL) {
		cJSON *out = cJSON_CreateObject();
		cJSON_AddStringToObject(out, "name", st_plan_output_name(plan, o));
		cJSON_AddStringToObject(out, "shape", text);
		cJSON_AddNumberToObject(out, "min", lo);
		cJSON_AddNumberToObject(out, "max", hi);
		cJSON_AddNumberToObject(out, "mean", mean);
		cJSON_AddNumberToObject(out, "nan", (double)nan);
		cJSON *t = cJSON_AddArrayToObject(out, "top");
		for (int k = 0; k < n_top; k++) {
			cJSON *e = cJSON_CreateObject();
			cJSON_AddNumberToObject(e, "index", top[k]);
			cJSON_AddNumberToObject(e, "value", x[top[k]]);
			cJSON_AddItemToArray(t, e);
		}
		cJSON_AddItemToArray(json, out);
	} else {
		printf("output %s: %s, min %.6g, max %.6g, mean %.6g%s\n", st_plan_output_name(plan, o), text, lo,
		       hi, mean, nan ? " (has NaN)" : "");
		if (n_top > 0) {
			printf("  top %d:", n_top);
			for (int k = 0; k < n_top; k++)
				printf(" %d (%.4g)", top[k], x[top[k]]);
			printf("\n");
		}
	}
	free(x);
}

/* The report of this run: the summary from the timed runs (times_s, in
 * run order), and when profiling the layer table from separate profiled
 * runs, so that the profiler's clock reads never enter the headline. *path
 * is the file. */
static int
write_report(const cli_args *a, st_plan *plan, const st_report_times *latency, const double *times_s, long warmup,
             const char *backend, bool profile, long profile_iterations, char **path)
{
	st_report r;
	memset(&r, 0, sizeof r);
	time_t now = time(NULL);
	st_report_describe_plan(&r, a->argv[0], plan, backend, now);
	r.iterations = latency->count;
	r.warmup = (int)warmup;
	r.latency = *latency;
	r.n_latency_samples = latency->count < ST_REPORT_MAX_SAMPLES ? latency->count : ST_REPORT_MAX_SAMPLES;
	r.latency_samples = st_xmalloc(sizeof *r.latency_samples * (size_t)(r.n_latency_samples + 1));
	for (int k = 0; k < r.n_latency_samples; k++)
		r.latency_samples[k] = times_s[k] * 1e3;
	r.throughput = r.latency.mean > 0 ? (double)r.batch / (r.latency.mean / 1e3) : 0;
	int rc = EXIT_OK;
	if (profile) {
		st_diag d;
		st_diag_init(&d);
		if (st_plan_profile(plan, (int)profile_iterations, &r, &d) != 0) {
			st_diag_print(&d, stderr);
			rc = EXIT_RUNTIME;
		}
		st_diag_free(&d);
	}
	char *dir = NULL;
	if (rc == EXIT_OK) {
		dir = cli_value(a, "report-dir") ? st_xstrdup(cli_value(a, "report-dir"))
		                                 : st_report_default_dir(a->argv[0]);
		/* A report the user asked for (a folder, a profile) that cannot be
		 * written fails the run; the default one only warns, so that a
		 * read-only home does not stop inference. */
		bool asked = cli_value(a, "report-dir") != NULL || profile;
		char err[512];
		if (st_report_save_in(&r, dir, now, path, err, sizeof err) != 0) {
			fprintf(stderr, "strata run: %s: %s\n", asked ? "no report" : "warning: no report", err);
			if (asked)
				rc = EXIT_RUNTIME;
		}
	}
	free(dir);
	st_report_free(&r);
	return rc;
}

int
cli_cmd_run(const cli_args *a)
{
	const char *path = a->argv[0];
	bool json = cli_flag(a, "json");
	long iterations = 1, warmup = -1, profile_iterations = 10;
	if (cli_value(a, "profile-iterations") &&
	    cli_parse_count("run", cli_value(a, "profile-iterations"), "--profile-iterations", 1, 100000,
	                    &profile_iterations) != 0)
		return EXIT_USAGE;
	if (cli_flag(a, "no-report") && (cli_value(a, "report-dir") || cli_flag(a, "profile"))) {
		fprintf(stderr, "strata run: --no-report writes no report: --report-dir and --profile need one\n");
		return EXIT_USAGE;
	}
	if (cli_flag(a, "profile") && cli_flag(a, "no-profile")) {
		fprintf(stderr, "strata run: --profile and --no-profile contradict each other\n");
		return EXIT_USAGE;
	}
	if ((cli_value(a, "iterations") &&
	     cli_parse_count("run", cli_value(a, "iterations"), "--iterations", 1, 1000000, &iterations) != 0) ||
	    (cli_value(a, "warmup") &&
	     cli_parse_count("run", cli_value(a, "warmup"), "--warmup", 0, 1000000, &warmup) != 0))
		return EXIT_USAGE;
	if (warmup < 0)
		warmup = iterations > 1 ? 1 : 0;
	const char *backend = cli_value(a, "backend") ? cli_value(a, "backend") : "cpu";
	if (strcmp(backend, "cpu") == 0 && st_cpu_simd_note() != NULL)
		fprintf(stderr, "strata run: %s\n", st_cpu_simd_note());
	cli_plan cp;
	int rc = cli_plan_prepare(a, "run", false, &interrupted, &cp);
	st_graph *g = cp.graph;
	st_plan *plan = cp.plan;
	st_diag d;
	const char **bindings;
	if (rc != EXIT_OK)
		goto out;
	if (cli_flag(a, "show-plan")) {
		st_buf b;
		st_buf_init(&b);
		st_plan_describe(plan, &b);
		fputs(b.data, stdout);
		st_buf_free(&b);
	}


	/* Runs: warm-ups, then timed iterations; Ctrl-C stops between layers. */
	struct sigaction sa = { .sa_handler = on_interrupt }, old_int;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	double *times = st_xcalloc((size_t)iterations, sizeof *times);
	long done = 0;
	bool tty = isatty(STDERR_FILENO) && !json;
	double started = st_now();
	for (long k = 0; k < warmup + iterations; k++) {
		st_diag_init(&d);
		double t0 = st_now();
		int status = st_plan_run(plan, &d);
		double t1 = st_now();
		st_diag_print(&d, stderr);
		st_diag_free(&d);
		if (status == 1) {
			fprintf(stderr, "%sstrata run: interrupted after %ld of %ld runs\n", tty ? "\r" : "", done,
			        iterations);
			rc = EXIT_RUNTIME;
			break;
		}
		if (status != 0) {
			rc = EXIT_RUNTIME;
			break;
		}
		if (k >= warmup)
			times[done++] = t1 - t0;
		if (tty && t1 - started > 1.0 && warmup + iterations > 1)
			fprintf(stderr, "\rrun %ld/%ld, last %.1f ms ", k + 1, warmup + iterations, (t1 - t0) * 1e3);
	}
	if (tty && st_now() - started > 1.0 && warmup + iterations > 1)
		fprintf(stderr, "\r%40s\r", "");
	sigaction(SIGINT, &old_int, NULL);

	if (rc == EXIT_OK) {
		const char **outs;
		int n_outs = cli_values(a, "output", &outs);
		for (int k = 0; k < n_outs && rc == EXIT_OK; k++) {
			char *name;
			const char *file;
			cli_split_binding(outs[k], &name, &file);
			int o = -1;
			for (int j = 0; j < st_plan_output_count(plan); j++) {
				if (name ? strcmp(name, st_plan_output_name(plan, j)) == 0 : st_plan_output_count(plan) == 1)
					o = j;
			}
			char err[512];
			if (o < 0) {
				fprintf(stderr, name ? "strata run: the model has no output layer '%s'\n"
				                     : "strata run: the model has several outputs: name one, as in "
				                       "--output NAME=FILE%s\n",
				        name ? name : "");
				rc = EXIT_USAGE;
			} else if (write_output(plan, o, file, err, sizeof err) != 0) {
				fprintf(stderr, "strata run: %s\n", err);
				rc = EXIT_RUNTIME;
			}
			free(name);
		}
	}
	/* The timed runs' statistics, once, for the output and the report;
	 * times_from leaves ms sorted. */
	char *report_path = NULL;
	st_report_times lat;
	double *ms = st_xmalloc(sizeof *ms * (size_t)(done ? done : 1));
	for (long k = 0; k < done; k++)
		ms[k] = times[k] * 1e3;
	st_report_times_from(&lat, ms, (int)done);
	/* The model's "profiling" setting asks for --profile; --no-profile and
	 * --no-report turn it off. */
	bool profile = cli_flag(a, "profile") ||
	               (g->network.values[ST_NET_PROFILING].b && !cli_flag(a, "no-profile"));
	if (rc == EXIT_OK && done > 0 && !cli_flag(a, "no-report"))
		rc = write_report(a, plan, &lat, times, warmup, backend, profile, profile_iterations, &report_path);
	if (rc == EXIT_OK && done > 0) {
		double mean = lat.mean / 1e3, median = ms[done / 2] / 1e3;
		if (json) {
			cJSON *root = cJSON_CreateObject();
			cJSON_AddStringToObject(root, "model", path);
			cJSON_AddStringToObject(root, "backend", backend);
			cJSON_AddStringToObject(root, "format", st_tensor_format_name(st_plan_format(plan)));
			cJSON_AddNumberToObject(root, "threads", st_plan_threads(plan));
			if (strcmp(backend, "cpu") == 0)
				cJSON_AddStringToObject(root, "simd", st_cpu_simd());
			cJSON_AddNumberToObject(root, "iterations", (double)done);
			cJSON_AddNumberToObject(root, "warmup", (double)warmup);
			cJSON_AddNumberToObject(root, "mean_ms", mean * 1e3);
			cJSON_AddNumberToObject(root, "median_ms", median * 1e3);
			cJSON_AddNumberToObject(root, "min_ms", lat.min);
			cJSON_AddNumberToObject(root, "max_ms", lat.max);
			cJSON_AddNumberToObject(root, "p90_ms", lat.p90);
			cJSON_AddNumberToObject(root, "p95_ms", lat.p95);
			cJSON_AddNumberToObject(root, "p99_ms", lat.p99);
			cJSON_AddNumberToObject(root, "throughput", mean > 0 ? (double)st_plan_batch(plan) / mean : 0);
			if (report_path != NULL)
				cJSON_AddStringToObject(root, "report", report_path);
			cJSON_AddNumberToObject(root, "arena_bytes", (double)st_plan_arena_bytes(plan));
			cJSON_AddNumberToObject(root, "live_bound_bytes", (double)st_plan_live_bound(plan));
			cJSON *outs = cJSON_AddArrayToObject(root, "outputs");
			for (int o = 0; o < st_plan_output_count(plan); o++)
				summarize_output(plan, o, outs);
			cli_print_json(root);
		} else {
			for (int o = 0; o < st_plan_output_count(plan) && !cli_values(a, "output", &bindings); o++)
				summarize_output(plan, o, NULL);
			char arena[32], bound_text[32];
			cli_human_bytes((double)st_plan_arena_bytes(plan), arena, sizeof arena);
			cli_human_bytes((double)st_plan_live_bound(plan), bound_text, sizeof bound_text);
			if (done == 1)
				printf("run: %.2f ms", mean * 1e3);
			else
				printf("%ld runs after %ld warm-up%s: mean %.2f ms, median %.2f, p90 %.2f, p99 %.2f, min "
				       "%.2f, max %.2f",
				       done, warmup, warmup == 1 ? "" : "s", mean * 1e3, median * 1e3, lat.p90, lat.p99,
				       lat.min, lat.max);
			printf(" · %s · %s · %d thread%s%s%s · activations %s (bound %s)\n",
			       st_tensor_format_name(st_plan_format(plan)), backend, st_plan_threads(plan),
			       st_plan_threads(plan) == 1 ? "" : "s", strcmp(backend, "cpu") == 0 ? " · " : "",
			       strcmp(backend, "cpu") == 0 ? st_cpu_simd() : "", arena, bound_text);
			if (report_path != NULL)
				printf("report: %s\n", report_path);
		}
	}
	free(ms);
	free(report_path);
	free(times);
out:
	cli_plan_free(&cp);
	return rc;
}
