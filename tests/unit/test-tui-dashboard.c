/* Unit tests: the profiling dashboard's ring buffers and window statistics,
 * the view drawn from fixed samples (UTF-8 and ASCII, sorting, N/A before
 * any sample, a broken model's message), and its worker on real models:
 * type errors shown, pause and resume, a snapshot report, a clean stop. */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"
#include "st-report.h"
#include "tui-dashboard.h"
#include "tui-helpers.h"

/* ---- rings and statistics ---- */

Test(tui_dashboard, ring_keeps_the_newest_values_in_order)
{
	st_ring r;
	st_ring_init(&r, 4);
	for (int i = 1; i <= 6; i++)
		st_ring_push(&r, i);
	cr_assert_eq(r.count, 4);
	for (int i = 0; i < 4; i++)
		cr_assert_float_eq(st_ring_at(&r, i), 3 + i, 1e-12, "value %d", i);
	st_ring_clear(&r);
	cr_assert_eq(r.count, 0);
	st_ring_push(&r, 9);
	cr_assert_float_eq(st_ring_at(&r, 0), 9, 1e-12);
	st_ring_free(&r);
}

Test(tui_dashboard, window_statistics_are_min_mean_max_and_nearest_rank_p99)
{
	st_ring r;
	st_ring_init(&r, 200);
	st_window_stats s;
	st_ring_stats(&r, &s);
	cr_assert_eq(s.count, 0, "no samples: not valid");
	/* 1..200 pushed in reverse: p99 is the 198th smallest. */
	for (int i = 200; i >= 1; i--)
		st_ring_push(&r, i);
	st_ring_stats(&r, &s);
	cr_assert_eq(s.count, 200);
	cr_assert_float_eq(s.min, 1, 1e-12);
	cr_assert_float_eq(s.max, 200, 1e-12);
	cr_assert_float_eq(s.mean, 100.5, 1e-12);
	cr_assert_float_eq(s.p99, 198, 1e-12);
	/* The ring is left in its order. */
	cr_assert_float_eq(st_ring_at(&r, 0), 200, 1e-12);
	st_ring_free(&r);
}

Test(tui_dashboard, pushing_counts_iterations_and_throughput)
{
	st_dash_data d;
	st_dash_data_init(&d);
	d.batch = 4;
	const char *names[] = { "a", "b" }, *types[] = { "convolution", "relu" };
	st_dash_data_set_rows(&d, 2, names, types);
	double rows[] = { 1.5, 0.5 };
	st_dash_data_push(&d, 2.0, rows, 0);     /* no interval yet: the total stands in */
	st_dash_data_push(&d, 2.0, rows, 0.004); /* 4 inferences in 4 ms */
	cr_assert_eq(d.iterations, 2);
	cr_assert_float_eq(st_ring_at(&d.throughput, 0), 2000, 1e-9);
	cr_assert_float_eq(st_ring_at(&d.throughput, 1), 1000, 1e-9);
	cr_assert_float_eq(st_ring_at(&d.rows[1].ms, 1), 0.5, 1e-12);
	st_dash_data_free(&d);
}

/* ---- drawing from fixed samples ---- */

/* Data as the worker would leave it: three rows (conv1 slowest), a few
 * iterations. */
static void
fixed_data(st_dash_data *d, int iterations)
{
	st_dash_data_init(d);
	const char *names[] = { "conv1", "relu1", "fc" }, *types[] = { "convolution", "relu", "fully_connected" };
	st_dash_data_set_rows(d, 3, names, types);
	d->phase = ST_DASH_RUNNING;
	d->compiled = true;
	d->threads = 2;
	d->format = ST_FORMAT_FP32_NCHW;
	d->arena_bytes = 3 * 1024 * 1024;
	d->peak_bytes = 2 * 1024 * 1024;
	d->batch = 1;
	for (int i = 0; i < iterations; i++) {
		/* conv1 grows from 1 to 4 ms; the others stay put. */
		double rows[] = { 1.0 + 3.0 * i / (iterations > 1 ? iterations - 1 : 1), 0.25, 1.0 };
		st_dash_data_push(d, rows[0] + rows[1] + rows[2], rows, 0.01);
	}
}

/* Draws d on a w x h screen and returns its text; caller frees. */
static char *
draw(const st_dash_data *d, const st_dash_view *v, int w, int h, bool ascii)
{
	st_screen *s = st_screen_new(w, h);
	s->ascii = ascii;
	st_theme *t = st_theme_default();
	st_dash_draw(s, (st_rect){ 0, 0, w, h }, d, v, t);
	char *text = st_screen_dump(s);
	st_theme_free(t);
	st_screen_free(s);
	return text;
}

/* The screen line holding needle, as a copy (caller frees), or NULL. */
static char *
line_with(const char *text, const char *needle)
{
	const char *at = strstr(text, needle);
	if (at == NULL)
		return NULL;
	const char *start = at;
	while (start > text && start[-1] != '\n')
		start--;
	const char *end = strchr(at, '\n');
	return st_xstrndup(start, end ? (size_t)(end - start) : strlen(start));
}

Test(tui_dashboard, draws_status_series_and_layer_rows)
{
	st_dash_data d;
	fixed_data(&d, 8);
	st_dash_view v = { ST_DASH_SORT_ORDER, 0 };
	char *text = draw(&d, &v, 120, 34, false);
	cr_assert(strstr(text, "RUNNING  iteration 8 · backend cpu · fp32-nchw · 2 threads · batch 1 · "
	                       "arena 3.00 MiB, peak 2.00 MiB") != NULL, "%s", text);
	cr_assert(strstr(text, "Latency") && strstr(text, "Throughput (inferences/s)"), "%s", text);
	/* The last latency is 4 + 0.25 + 1; the window's minimum 2.25. */
	cr_assert(strstr(text, "last 5.25 ms  min 2.25  mean 3.75  p99 5.25  (8)"), "%s", text);
	cr_assert(strstr(text, "last 100 /s  min 100  mean 100  p99 100  (8)"), "%s", text);
	char *conv = line_with(text, "conv1");
	cr_assert_not_null(conv);
	/* last 4 ms, mean 2.5 of 2.5 + 0.25 + 1 = 66.7 %, a bar, a rising sparkline. */
	cr_assert(strstr(conv, "convolution") && strstr(conv, "4.00") && strstr(conv, "2.50") &&
	          strstr(conv, "66.7%"), "%s", conv);
	cr_assert(strstr(conv, "██") != NULL, "a share bar: %s", conv);
	cr_assert(strstr(conv, "▃▄▄▅▆▇▇█ │") != NULL, "the sparkline rises to the right: %s", conv);
	char *fc = line_with(text, "fully_conn");
	cr_assert(strstr(fc, "26.7%") && strstr(fc, "████████"), "a flat series is a full line: %s", fc);
	free(fc);
	free(conv);
	free(text);
	st_dash_data_free(&d);
}

Test(tui_dashboard, ascii_tier_draws_only_ascii)
{
	st_dash_data d;
	fixed_data(&d, 8);
	st_dash_view v = { ST_DASH_SORT_ORDER, 0 };
	char *text = draw(&d, &v, 100, 30, true);
	for (const unsigned char *p = (const unsigned char *)text; *p; p++)
		cr_assert(*p < 0x80, "a byte outside ASCII at %d:\n%s", (int)((const char *)p - text), text);
	char *conv = line_with(text, "conv1");
	cr_assert(strstr(conv, "########") != NULL && strstr(conv, "-==+*##@ |") != NULL, "%s", conv);
	free(conv);
	free(text);
	st_dash_data_free(&d);
}

Test(tui_dashboard, rows_sort_by_time_and_name)
{
	st_dash_data d;
	fixed_data(&d, 4);
	st_dash_view v = { ST_DASH_SORT_TIME, 0 };
	char *text = draw(&d, &v, 120, 34, false);
	const char *conv = strstr(text, "│ conv1"), *fc = strstr(text, "│ fc"), *relu = strstr(text, "│ relu1");
	cr_assert(conv && fc && relu && conv < fc && fc < relu, "slowest first:\n%s", text);
	cr_assert(strstr(text, "Layers (3, by time)") != NULL, "%s", text);
	free(text);
	v.sort = ST_DASH_SORT_NAME;
	text = draw(&d, &v, 120, 34, false);
	conv = strstr(text, "│ conv1");
	fc = strstr(text, "│ fc");
	relu = strstr(text, "│ relu1");
	cr_assert(conv < fc && fc < relu, "by name:\n%s", text);
	free(text);
	st_dash_data_free(&d);
}

Test(tui_dashboard, no_samples_show_na_never_zero)
{
	st_dash_data d;
	fixed_data(&d, 0);
	st_dash_view v = { ST_DASH_SORT_ORDER, 0 };
	char *text = draw(&d, &v, 120, 34, false);
	cr_assert(strstr(text, "last N/A ms  min N/A  mean N/A  p99 N/A  (0)") != NULL, "%s", text);
	char *conv = line_with(text, "conv1");
	cr_assert(strstr(conv, "N/A") != NULL && strstr(conv, "0.000") == NULL, "%s", conv);
	free(conv);
	free(text);
	st_dash_data_free(&d);
}

Test(tui_dashboard, a_broken_model_shows_its_reasons)
{
	st_dash_data d;
	st_dash_data_init(&d);
	d.phase = ST_DASH_FAILED;
	st_dash_set_text(&d.message, "1 type error; fix it in the editor:\ne: input 1 does not broadcast");
	st_dash_view v = { ST_DASH_SORT_ORDER, 0 };
	char *text = draw(&d, &v, 100, 30, false);
	cr_assert(strstr(text, "FAILED") && strstr(text, "The model cannot run:"), "%s", text);
	cr_assert(strstr(text, "   1 type error; fix it in the editor:\n   e: input 1 does not broadcast"), "%s", text);
	cr_assert(strstr(text, "Esc goes back to editing") != NULL, "%s", text);
	cr_assert(strstr(text, "Latency") == NULL, "no graphs without a plan:\n%s", text);
	free(text);
	st_dash_data_free(&d);
}

Test(tui_dashboard, tiny_areas_draw_without_harm)
{
	st_dash_data d;
	fixed_data(&d, 5);
	st_dash_view v = { ST_DASH_SORT_ORDER, 0 };
	for (int w = 1; w < 70; w += 7) {
		for (int h = 1; h < 24; h += 3)
			free(draw(&d, &v, w, h, w % 2 == 0));
	}
	st_dash_data_free(&d);
}

/* ---- the worker ---- */

/* A graph of its own from an edit script (the worker frees it). */
static st_graph *
graph_of(const char *script)
{
	st_session *s = test_session(script);
	char *text = st_model_serialize(st_session_graph(s));
	st_diag d;
	st_diag_init(&d);
	st_graph *g = st_model_parse(text, strlen(text), "test", test_registry(), &d);
	cr_assert_not_null(g, "%s", d.count ? d.items[0].text : "?");
	st_diag_free(&d);
	free(text);
	st_session_free(s);
	return g;
}

static st_runner *
start(const char *script)
{
	st_runner_setup setup = { .graph = graph_of(script), .threads = 1, .format = -1 };
	char err[256];
	st_runner *r = st_runner_start(&setup, err, sizeof err);
	cr_assert_not_null(r, "%s", err);
	return r;
}

/* Two steps: the leaky relu, which the host applies after the convolution,
 * keeps the pooling from being computed with it. */
static const char *const small_model =
	"add input data; set data dims 3x8x8; add convolution c; set c num_output 4; set c kernel 3x3;"
	"activation c leaky_relu; connect data c; add pooling p; connect c p; add output out; connect p out";

/* What a condition on the data reads. */
typedef bool (*data_test)(const st_dash_data *d, long arg);

/* Polls the data until test holds (true) or 10 s pass (false). */
static bool
wait_data(st_runner *r, data_test test, long arg)
{
	double until = st_now() + 10;
	while (st_now() < until) {
		const st_dash_data *d = st_runner_lock(r);
		bool ok = test(d, arg);
		st_runner_unlock(r);
		if (ok)
			return true;
		struct timespec ts = { 0, 5 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	return false;
}

static bool
failed(const st_dash_data *d, long arg)
{
	(void)arg;
	return d->phase == ST_DASH_FAILED;
}

static bool
iterations_past(const st_dash_data *d, long n)
{
	return d->iterations > n;
}

static bool
paused(const st_dash_data *d, long arg)
{
	(void)arg;
	return d->phase == ST_DASH_PAUSED;
}

static bool
snapshot_done(const st_dash_data *d, long arg)
{
	(void)arg;
	return d->snapshot != NULL && !d->snapshot_busy;
}

static long
iterations(st_runner *r)
{
	long n = st_runner_lock(r)->iterations;
	st_runner_unlock(r);
	return n;
}

Test(tui_dashboard, worker_shows_type_errors_instead_of_running)
{
	st_runner *r = start("add input data; set data dims 3x8x8; add pooling p; connect data p;"
	                     "add eltwise e; connect data e; connect p e");
	cr_assert(wait_data(r, failed, 0), "the worker never gave up");
	const st_dash_data *d = st_runner_lock(r);
	cr_assert_eq(d->iterations, 0);
	cr_assert(d->message && strstr(d->message, "1 type error") && strstr(d->message, "e: input 1"), "%s",
	          d->message ? d->message : "(none)");
	st_runner_unlock(r);
	st_runner_stop(r);
}

Test(tui_dashboard, worker_refuses_an_empty_model)
{
	st_runner *r = start("");
	cr_assert(wait_data(r, failed, 0), "an empty model ran");
	cr_assert_str_eq(st_runner_lock(r)->message, "the model is empty: add layers first");
	st_runner_unlock(r);
	st_runner_stop(r);
}

Test(tui_dashboard, worker_runs_pauses_resumes_and_stops_cleanly)
{
	/* The first pool stops OpenBLAS's own threads (k-gemm.c): make one
	 * before counting, so that only the runner's threads are compared. */
	st_pool_free(st_pool_new(1));
	int before = tui_thread_count();
	st_runner *r = start(small_model);
	cr_assert(wait_data(r, iterations_past, 3), "no iterations");
	const st_dash_data *d = st_runner_lock(r);
	cr_assert_eq(d->n_rows, 2, "the convolution and the pooling");
	cr_assert_str_eq(d->rows[0].name, "c");
	cr_assert_eq(d->threads, 1);
	cr_assert(d->note && strstr(d->note, "random weights"), "%s", d->note ? d->note : "(none)");
	st_runner_unlock(r);

	st_runner_pause(r, true);
	cr_assert(wait_data(r, paused, 0));
	long n = iterations(r);
	struct timespec ts = { 0, 200 * 1000 * 1000 };
	nanosleep(&ts, NULL);
	cr_assert_eq(iterations(r), n, "paused, yet it ran");
	st_runner_pause(r, false);
	cr_assert(wait_data(r, iterations_past, n + 3), "it did not resume");

	/* More threads: the worker recompiles and goes on counting. */
	st_runner_set_threads(r, 2);
	n = iterations(r);
	cr_assert(wait_data(r, iterations_past, n + 3));
	cr_assert_eq(st_runner_lock(r)->threads, 2);
	st_runner_unlock(r);
	st_runner_stop(r);
	cr_assert_eq(tui_thread_count(), before, "threads left behind");
}

Test(tui_dashboard, snapshot_writes_a_report_strata_reads)
{
	char *dir = test_temp_dir("dashboard");
	setenv("XDG_STATE_HOME", dir, 1);
	st_runner *r = start(small_model);
	cr_assert(wait_data(r, iterations_past, 3));
	st_runner_snapshot(r);
	cr_assert(wait_data(r, snapshot_done, 0), "no snapshot");
	const st_dash_data *d = st_runner_lock(r);
	cr_assert_not(d->snapshot_failed, "%s", d->snapshot);
	char *path = st_xstrdup(d->snapshot);
	st_runner_unlock(r);
	st_runner_stop(r);
	char *want = st_xasprintf("%s/strata/reports/unsaved/", dir);
	cr_assert(strncmp(path, want, strlen(want)) == 0, "%s is not in %s", path, want);
	st_report rep;
	st_diag diag;
	st_diag_init(&diag);
	cr_assert_eq(st_report_load(path, &rep, &diag), 0, "%s", diag.count ? diag.items[0].text : "?");
	cr_assert_str_eq(rep.backend, "cpu");
	cr_assert_eq(rep.threads, 1);
	cr_assert_eq(rep.n_layers, 2);
	cr_assert_gt(rep.latency.count, 0);
	cr_assert_gt(rep.throughput, 0);
	st_report_free(&rep);
	st_diag_free(&diag);
	free(want);
	free(path);
	test_remove_dir(dir);
}
