/* Unit tests: the HTML page of strata report html: escaping of names from
 * files, the charts drawn only when their data is there, the comparison,
 * and the mark that lets a later run replace the page. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "report-html.h"

#define HOSTILE "<script>alert(1)</script>&\"'"
#define HOSTILE_ESCAPED "&lt;script&gt;alert(1)&lt;/script&gt;&amp;&quot;&#39;"

/* Two layers, the second named HOSTILE and without hardware counters;
 * scale multiplies every time. */
static void
make_report(st_report *r, double scale)
{
	memset(r, 0, sizeof *r);
	r->model = st_xstrdup("net.strata.json");
	r->network = st_xstrdup("net");
	r->date = st_xstrdup("2026-11-30T04:00:00Z");
	r->backend = st_xstrdup("cpu");
	r->format = st_xstrdup("fp32-nchw");
	r->threads = 2;
	r->iterations = 4;
	r->batch = 1;
	double lat[] = { 1.5 * scale, 1.25 * scale, 2.0 * scale, 1.75 * scale };
	st_report_times_from(&r->latency, lat, 4);
	r->throughput = 1000 / r->latency.mean;
	r->peak_bytes = 4096;
	r->peak_layer = st_xstrdup("conv");
	r->profile_iterations = 3;
	r->n_layers = 2;
	r->layers = st_xcalloc(2, sizeof *r->layers);
	const char *names[] = { "conv", HOSTILE };
	for (int i = 0; i < 2; i++) {
		st_report_layer *l = &r->layers[i];
		l->name = st_xstrdup(names[i]);
		l->type = st_xstrdup(i ? "relu" : "conv2d");
		double t[] = { (i + 1) * scale, (i + 1) * scale, (i + 1) * scale };
		st_report_times_from(&l->time, t, 3);
		l->share = i ? 2.0 / 3 : 1.0 / 3;
		l->mem_live = 4096 - i * 1024;
		l->cycles = l->instructions = l->cache_misses = i ? -1 : 1000;
	}
	r->n_skipped = 1;
	r->skipped = st_xcalloc(1, sizeof *r->skipped);
	r->skipped[0] = st_xstrdup("in<put>");
}

static int
count(const char *text, const char *what)
{
	int n = 0;
	for (const char *p = strstr(text, what); p != NULL; p = strstr(p + 1, what))
		n++;
	return n;
}

Test(report_html, escapes_names_from_files)
{
	st_report r;
	make_report(&r, 1);
	const char *labels[] = { "a&b<c>.strata-report.json" };
	char *page = cli_report_html(&r, labels, 1, 0, 20);
	cr_assert(strstr(page, HOSTILE_ESCAPED) != NULL);
	cr_assert(strstr(page, "in&lt;put&gt;") != NULL);
	cr_assert(strstr(page, "a&amp;b&lt;c&gt;.strata-report.json") != NULL);
	cr_assert_null(strstr(page, "<script"));
	cr_assert_null(strstr(page, "alert(1)</"));
	free(page);
	st_report_free(&r);
}

Test(report_html, charts_only_with_their_data)
{
	st_report r;
	make_report(&r, 1);
	const char *labels[] = { "a.strata-report.json" };
	/* Layer times, shares by type, memory; no samples, no latency charts. */
	char *page = cli_report_html(&r, labels, 1, 0, 20);
	cr_assert_eq(count(page, "<svg class=\"chart\""), 3);
	cr_assert_eq(count(page, "<svg class=\"spark\""), 0);
	cr_assert_null(strstr(page, "Latency histogram"));
	cr_assert(strstr(page, "<span class=\"na\">n/a</span>") != NULL);
	free(page);

	r.n_latency_samples = 4;
	r.latency_samples = st_xcalloc(4, sizeof *r.latency_samples);
	for (int i = 0; i < 4; i++)
		r.latency_samples[i] = 1 + i * 0.25;
	for (int i = 0; i < 2; i++) {
		r.layers[i].n_samples = 3;
		r.layers[i].samples = st_xcalloc(3, sizeof *r.layers[i].samples);
		for (int j = 0; j < 3; j++)
			r.layers[i].samples[j] = i + j * 0.1;
	}
	page = cli_report_html(&r, labels, 1, 0, 20);
	cr_assert_eq(count(page, "<svg class=\"chart\""), 5);
	cr_assert_eq(count(page, "<svg class=\"spark\""), 2);
	cr_assert(strstr(page, "Latency histogram") != NULL);
	free(page);

	/* A report without a layer table still gets its summary. */
	st_report_free(&r);
	make_report(&r, 1);
	for (int i = 0; i < r.n_layers; i++) {
		free(r.layers[i].name);
		free(r.layers[i].type);
	}
	r.n_layers = 0;
	page = cli_report_html(&r, labels, 1, 0, 20);
	cr_assert_eq(count(page, "<svg class=\"chart\""), 0);
	cr_assert(strstr(page, "No layer table") != NULL);
	free(page);
	st_report_free(&r);
}

Test(report_html, compares_against_the_base)
{
	st_report r[2];
	make_report(&r[0], 1);
	make_report(&r[1], 1.5);
	const char *labels[] = { "a.strata-report.json", "b.strata-report.json" };
	char *page = cli_report_html(r, labels, 2, 0, 1);
	cr_assert(strstr(page, "id=\"comparison\"") != NULL);
	/* conv: 1 ms against 1.5 ms. */
	cr_assert(strstr(page, "<td class=\"slower\">+0.500</td><td class=\"slower\">+50.0%</td>") != NULL);
	cr_assert(strstr(page, cli_report_html_colour(0)) != NULL);
	cr_assert(strstr(page, cli_report_html_colour(1)) != NULL);
	/* --top 1: the slowest layer only, a bar for each report. */
	cr_assert(strstr(page, "the 1 slowest") != NULL);
	free(page);
	page = cli_report_html(r, labels, 2, 1, 20);
	cr_assert(strstr(page, "<td class=\"faster\">-0.500</td><td class=\"faster\">-33.3%</td>") != NULL);
	free(page);
	st_report_free(&r[0]);
	st_report_free(&r[1]);
	cr_assert_str_neq(cli_report_html_colour(0), cli_report_html_colour(1));
}

Test(report_html, knows_its_own_pages)
{
	st_report r;
	make_report(&r, 1);
	const char *labels[] = { "a.strata-report.json" };
	char *page = cli_report_html(&r, labels, 1, 0, 20);
	cr_assert(cli_report_html_is_ours(page, strlen(page)));
	cr_assert(cli_report_html_is_ours(page, 1024));
	free(page);
	st_report_free(&r);
	const char *other = "<!DOCTYPE html>\n<html><head><title>mine</title></head></html>\n";
	cr_assert_not(cli_report_html_is_ours(other, strlen(other)));
	cr_assert_not(cli_report_html_is_ours("", 0));
	const char *late = "notes\n<!DOCTYPE html>\n<meta name=\"generator\" content=\"strata report html\">";
	cr_assert_not(cli_report_html_is_ours(late, strlen(late)));
}
