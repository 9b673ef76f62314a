/* Unit tests: inference reports: statistics, the canonical text read back
 * and written the same, and the reader's refusals with their positions. */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"
#include "st-report.h"

/* A small report with two layers, the second without hardware counters. */
static void
sample_report(st_report *r)
{
	memset(r, 0, sizeof *r);
	r->model = st_xstrdup("net.strata.json");
	r->network = st_xstrdup("net");
	r->network_version = st_xstrdup("1.0");
	r->strata_version = st_xstrdup("0.3.0");
	r->date = st_xstrdup("2026-11-30T04:00:00Z");
	r->backend = st_xstrdup("cpu");
	r->device = st_xstrdup("x86_64, 2 cores");
	r->format = st_xstrdup("fp32-nchw");
	r->threads = 2;
	r->iterations = 10;
	r->warmup = 1;
	r->batch = 1;
	double lat[] = { 1.5, 1.25, 2.0, 1.75 };
	r->n_latency_samples = 4;
	r->latency_samples = st_xmalloc(sizeof lat);
	memcpy(r->latency_samples, lat, sizeof lat);
	st_report_times_from(&r->latency, lat, 4);
	r->throughput = 1 / r->latency.mean * 1000;
	r->peak_bytes = 4096;
	r->peak_layer = st_xstrdup("conv, \"1\"");
	r->profile_iterations = 5;
	r->n_layers = 2;
	r->layers = st_xcalloc(2, sizeof *r->layers);
	const char *names[] = { "conv, \"1\"", "relu\n1" };
	for (int i = 0; i < 2; i++) {
		st_report_layer *l = &r->layers[i];
		l->name = st_xstrdup(names[i]);
		l->type = st_xstrdup(i ? "relu" : "conv2d");
		l->output = i ? NULL : st_xstrdup("1x8x4x4");
		l->distance = i + 1;
		double t[] = { 0.1 * (i + 1), 0.3 / 7, 1e-9, 0.2 };
		st_report_times_from(&l->time, t, 4);
		l->share = i ? 2.0 / 3 : 1.0 / 3;
		l->flops = 1234567.0;
		l->bytes = 8192;
		l->gflops = l->flops / l->time.mean / 1e6;
		l->gbs = l->bytes / l->time.mean / 1e6;
		l->mem_allocated = 512;
		l->mem_freed = i * 512;
		l->mem_live = 4096 - i * 512;
		l->mem_persistent = 0;
		l->cycles = i ? -1 : 123456789.0;
		l->instructions = i ? -1 : 0.5;
		l->cache_misses = i ? -1 : 0;
		/* The first layer keeps its iterations; the second has none (1.0). */
		if (i == 0) {
			l->n_samples = 3;
			l->samples = st_xmalloc(3 * sizeof *l->samples);
			l->samples[0] = 0.1;
			l->samples[1] = 1.0 / 3; /* kept to five digits */
			l->samples[2] = 0;
		}
	}
	r->counters_note = st_xstrdup("perf_event_open: cache misses: not here");
	r->n_skipped = 1;
	r->skipped = st_xcalloc(1, sizeof *r->skipped);
	r->skipped[0] = st_xstrdup("input");
}

Test(report, percentiles_nearest_rank)
{
	double s[20];
	for (int i = 0; i < 20; i++)
		s[i] = 20 - i; /* 20 .. 1, unsorted on purpose */
	st_report_times t;
	st_report_times_from(&t, s, 20);
	cr_assert_eq(t.count, 20);
	cr_assert_float_eq(t.mean, 10.5, 1e-12);
	cr_assert_float_eq(t.median, 10.5, 1e-12);
	cr_assert_eq(t.min, 1);
	cr_assert_eq(t.max, 20);
	cr_assert_eq(t.p90, 18); /* ceil(0.90 * 20) - 1 = 17 */
	cr_assert_eq(t.p95, 19); /* ceil(0.95 * 20) - 1 = 18 */
	cr_assert_eq(t.p99, 20); /* ceil(0.99 * 20) - 1 = 19 */
	cr_assert_float_eq(t.stddev, 5.766281297335398, 1e-12);

	double odd[] = { 3, 1, 2 };
	st_report_times_from(&t, odd, 3);
	cr_assert_eq(t.median, 2);
	cr_assert_eq(t.p90, 3);
	cr_assert_float_eq(t.stddev, 0.816496580927726, 1e-12);

	double one[] = { 4.25 };
	st_report_times_from(&t, one, 1);
	cr_assert(t.count == 1 && t.mean == 4.25 && t.p99 == 4.25 && t.stddev == 0);

	st_report_times_from(&t, NULL, 0);
	cr_assert_eq(t.count, 0);
	cr_assert_eq(t.mean, 0);
}

Test(report, percentiles_hundred)
{
	double s[100];
	for (int i = 0; i < 100; i++)
		s[i] = i + 1;
	st_report_times t;
	st_report_times_from(&t, s, 100);
	cr_assert_eq(t.p90, 90);
	cr_assert_eq(t.p95, 95);
	cr_assert_eq(t.p99, 99);
	cr_assert_eq(t.median, 50.5);
}

Test(report, serialize_parse_serialize)
{
	st_report r;
	sample_report(&r);
	char *first = st_report_serialize(&r);
	st_diag d;
	st_diag_init(&d);
	st_report back;
	int rc = st_report_parse(first, strlen(first), "a.json", &back, &d);
	if (rc != 0)
		st_diag_print(&d, stderr);
	cr_assert_eq(rc, 0);
	cr_assert_eq(back.major, 1);
	cr_assert_eq(back.n_layers, 2);
	cr_assert_str_eq(back.layers[0].name, "conv, \"1\"");
	cr_assert_null(back.layers[1].output);
	cr_assert_eq(back.layers[1].cycles, -1);
	cr_assert_eq(back.layers[0].cache_misses, 0);
	cr_assert_eq(back.layers[0].time.mean, r.layers[0].time.mean);
	cr_assert_eq(back.layers[1].share, 2.0 / 3);
	cr_assert_eq(back.n_latency_samples, 4);
	cr_assert_eq(back.latency_samples[0], 1.5);
	cr_assert_eq(back.latency_samples[3], 1.75);
	cr_assert_eq(back.layers[0].n_samples, 3);
	cr_assert_eq(back.layers[0].samples[1], 0.33333);
	cr_assert_eq(back.layers[1].n_samples, 0);
	cr_assert_null(back.layers[1].samples);
	cr_assert_str_eq(back.counters_note, "perf_event_open: cache misses: not here");
	char *second = st_report_serialize(&back);
	cr_assert_str_eq(first, second);
	cr_assert_not_null(strstr(first, "\"samples_ms\": [0.1, 0.33333, 0]"), "%s", first);
	cr_assert_not_null(strstr(first, "\"latency_samples_ms\": [1.5, 1.25, 2, 1.75]"));
	/* Unavailable counters are null, never 0. */
	cr_assert_not_null(strstr(first, "\"cycles\": null"));
	cr_assert_not_null(strstr(first, "\"format\": \"strata-report\""));
	cr_assert_not_null(strstr(first, "\"slowest\": [\"relu\\n1\", \"conv, \\\"1\\\"\"]"));
	free(first);
	free(second);
	st_report_free(&r);
	st_report_free(&back);
	st_diag_free(&d);
}

/* Parses text and returns the first message as "file:line:col: text"; the
 * parse must fail. Caller frees. */
static char *
first_error(const char *text)
{
	st_diag d;
	st_diag_init(&d);
	st_report r;
	cr_assert_neq(st_report_parse(text, strlen(text), "r.json", &r, &d), 0, "accepted:\n%s", text);
	cr_assert_eq(r.n_layers, 0);
	cr_assert_gt(d.count, 0);
	char *msg = st_xasprintf("%s:%d:%d: %s", d.items[0].file, d.items[0].line, d.items[0].col, d.items[0].text);
	st_report_free(&r);
	st_diag_free(&d);
	return msg;
}

/* The sample report's canonical text with from (which must occur) replaced by to. Caller frees. */
static char *
sample_with(const char *from, const char *to)
{
	st_report r;
	sample_report(&r);
	char *text = st_report_serialize(&r);
	st_report_free(&r);
	char *at = strstr(text, from);
	cr_assert_not_null(at, "'%s' is not in the sample", from);
	char *out = st_xasprintf("%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
	free(text);
	return out;
}

static void
assert_error(const char *text, const char *expected)
{
	char *msg = first_error(text);
	cr_assert_str_eq(msg, expected);
	free(msg);
}

Test(report, bad_json_position)
{
	assert_error("{\n  \"format\": \"strata-report\",\n  \"version\": \"1.0\",,\n}\n",
	             "r.json:3:21: invalid JSON near '\"version\": \"1.0\",,'");
	assert_error("{\n  \"format\": \"strata-report\",\n  \"summary\": {",
	             "r.json:3:15: unexpected end of the text: a string, list or object is not closed");
}

Test(report, wrong_type_names_the_path)
{
	char *text = sample_with("\"name\": \"relu\\n1\"", "\"name\": 7");
	char *msg = first_error(text);
	cr_assert(strstr(msg, ": \"name\" must be a string (at profile.layers[1].name)") != NULL, "%s", msg);
	free(msg);
	free(text);
	text = sample_with("\"threads\": 2", "\"threads\": \"two\"");
	assert_error(text, "r.json:13:16: \"threads\" must be a whole number (at summary.threads)");
	free(text);
}

Test(report, newer_major_refused)
{
	char *text = sample_with("\"version\": \"1.1\"", "\"version\": \"2.1\"");
	assert_error(text, "r.json:3:14: this report uses format version 2.1, written by a newer Strata; "
	                   "this one reads version 1 (at version)");
	free(text);
}

Test(report, newer_minor_accepted)
{
	char *text = sample_with("\"version\": \"1.1\"", "\"version\": \"1.7\", \"extra\": {\"x\": [1]}");
	st_diag d;
	st_diag_init(&d);
	st_report r;
	cr_assert_eq(st_report_parse(text, strlen(text), "r.json", &r, &d), 0);
	cr_assert_eq(r.minor, 7);
	st_report_free(&r);
	st_diag_free(&d);
	free(text);
	/* The same unknown field in a file of this version is refused. */
	text = sample_with("\"version\": \"1.1\"", "\"version\": \"1.1\", \"extra\": 1");
	char *msg = first_error(text);
	cr_assert(strstr(msg, "unknown field \"extra\" (at extra)") != NULL, "%s", msg);
	free(msg);
	free(text);
}

Test(report, bad_samples_refused)
{
	char *text = sample_with("\"samples_ms\": [0.1, 0.33333, 0]", "\"samples_ms\": [0.1, -1]");
	char *msg = first_error(text);
	cr_assert(strstr(msg, "a sample must be a time in milliseconds: a finite number, not negative (at "
	                      "profile.layers[0].samples_ms[1])") != NULL,
	          "%s", msg);
	free(msg);
	free(text);
	text = sample_with("\"latency_samples_ms\": [1.5, 1.25, 2, 1.75]", "\"latency_samples_ms\": 3");
	msg = first_error(text);
	cr_assert(strstr(msg, "\"latency_samples_ms\" must be a list of times in milliseconds (at "
	                      "summary.latency_samples_ms)") != NULL,
	          "%s", msg);
	free(msg);
	free(text);
}

Test(report, version_1_0_without_samples)
{
	/* A report of format 1.0 has no samples and no note: it reads with none. */
	st_report r;
	sample_report(&r);
	free(r.latency_samples);
	r.latency_samples = NULL;
	r.n_latency_samples = 0;
	free(r.layers[0].samples);
	r.layers[0].samples = NULL;
	r.layers[0].n_samples = 0;
	free(r.counters_note);
	r.counters_note = NULL;
	char *text = st_report_serialize(&r);
	st_report_free(&r);
	cr_assert_null(strstr(text, "samples"));
	cr_assert_null(strstr(text, "counters_note"));
	char *at = strstr(text, "\"version\": \"1.1\"");
	cr_assert_not_null(at);
	at[strlen("\"version\": \"1.")] = '0';
	st_diag d;
	st_diag_init(&d);
	cr_assert_eq(st_report_parse(text, strlen(text), "old.json", &r, &d), 0);
	cr_assert_eq(r.minor, 0);
	cr_assert_eq(r.n_latency_samples, 0);
	cr_assert_eq(r.layers[0].n_samples, 0);
	cr_assert_null(r.counters_note);
	st_report_free(&r);
	st_diag_free(&d);
	free(text);
}

Test(report, sparkline)
{
	st_buf b;
	st_buf_init(&b);
	const double v[] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	cr_assert_eq(st_report_sparkline(&b, v, 8, 20, 0, 0, false), 8);
	cr_assert_str_eq(b.data, "▁▂▃▄▅▆▇█");
	st_buf_reset(&b);
	cr_assert_eq(st_report_sparkline(&b, v, 8, 20, 0, 0, true), 8);
	cr_assert_str_eq(b.data, "_.-=+*#@");
	/* Eight samples in four cells: each the mean of two. */
	st_buf_reset(&b);
	cr_assert_eq(st_report_sparkline(&b, v, 8, 4, 0, 0, true), 4);
	cr_assert_str_eq(b.data, ".=*@");
	/* A fixed scale: everything at or below lo is the lowest bar. */
	st_buf_reset(&b);
	st_report_sparkline(&b, v, 8, 8, 4, 8, true);
	cr_assert_str_eq(b.data, "____-+*@");
	/* A flat series is the lowest bar; no samples, nothing. */
	st_buf_reset(&b);
	const double flat[] = { 2, 2, 2 };
	st_report_sparkline(&b, flat, 3, 10, 0, 0, false);
	cr_assert_str_eq(b.data, "▁▁▁");
	cr_assert_eq(st_report_sparkline(&b, NULL, 0, 10, 0, 0, false), 0);
	st_buf_free(&b);
}

Test(report, negative_time_refused)
{
	char *text = sample_with("\"mean\": 0.", "\"mean\": -0.");
	char *msg = first_error(text);
	cr_assert(strstr(msg, ": \"mean\" must not be negative (at profile.layers[0].time_ms.mean)") != NULL, "%s",
	          msg);
	free(msg);
	free(text);
}

Test(report, missing_field_and_wrong_format)
{
	char *text = sample_with("\"throughput\"", "\"throughput_x\"");
	char *msg = first_error(text);
	cr_assert(strstr(msg, "unknown field \"throughput_x\" (at summary.throughput_x)") != NULL, "%s", msg);
	free(msg);
	free(text);
	assert_error("{\"format\": \"strata-report\", \"version\": \"1.0\", \"summary\": {}}",
	             "r.json:1:58: the field \"model\" is missing (at summary.model)");
	assert_error("{\"format\": \"strata\", \"version\": \"1.0\"}",
	             "r.json:1:12: not a Strata report: the field \"format\" must be \"strata-report\" (at format)");
	assert_error("[1]", "r.json:1:1: a report holds one JSON object with \"format\": \"strata-report\"");
}

Test(report, save_and_load)
{
	st_report r;
	sample_report(&r);
	char path[] = "/tmp/strata-report-XXXXXX";
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	close(fd);
	char err[256];
	cr_assert_eq(st_report_save(&r, path, err, sizeof err), 0, "%s", err);
	st_diag d;
	st_diag_init(&d);
	st_report back;
	cr_assert_eq(st_report_load(path, &back, &d), 0);
	cr_assert_str_eq(back.network, "net");
	unlink(path);
	st_report_free(&back);
	cr_assert_neq(st_report_load(path, &back, &d), 0);
	cr_assert(strstr(d.items[d.count - 1].text, "cannot read the report") != NULL);
	st_report_free(&back);
	st_report_free(&r);
	st_diag_free(&d);
}
