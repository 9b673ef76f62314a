/* Unit tests: the report view, the comparison of reports and the heat
 * overlay, as the screen model shows them, driven by keys and commands
 * over hand-made reports (tests/data/report). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "st-report.h"
#include "tui-helpers.h"

static char *test_dir;

static void
private_home(void)
{
	test_dir = tui_test_home("tui-report");
}

/* A file of tests/data/report; caller frees. */
static char *
fixture(const char *name)
{
	return st_xasprintf("%s/tests/data/report/%s", getenv("top_srcdir"), name);
}

/* Copies src to dst, making dst's folder. */
static void
copy_file(const char *src, const char *dst)
{
	size_t len;
	char *text = st_read_file(src, &len);
	cr_assert_not_null(text, "cannot read %s", src);
	char *dir = st_xstrdup(dst);
	*strrchr(dir, '/') = '\0';
	char err[256];
	cr_assert_eq(st_make_dirs(dir, err, sizeof err), 0, "%s", err);
	cr_assert_eq(st_write_file_atomic(dst, text, len, err, sizeof err), 0, "%s", err);
	free(dir);
	free(text);
}

/* The editor on a copy of the cnn_classifier example (model file
 * cnn.strata.json, so its reports live in state/strata/reports/cnn). */
static st_app *
open_app(int w, int h)
{
	private_home();
	char *src = st_xasprintf("%s/examples/cnn_classifier.strata.json", getenv("top_srcdir"));
	char *model = st_xasprintf("%s/cnn.strata.json", test_dir);
	copy_file(src, model);
	st_tui_options opt = { .model = model, .theme = NULL, .ascii = -1, .colors = -1 };
	st_diag d;
	st_diag_init(&d);
	st_app *app = st_app_new(&opt, &d);
	cr_assert_not_null(app, "st_app_new: %s", d.count ? d.items[0].text : "?");
	st_diag_free(&d);
	app->screen = st_screen_new(w, h);
	free(model);
	free(src);
	return app;
}

static void
close_app(st_app *app)
{
	st_app_free(app);
	test_remove_dir(test_dir);
	test_dir = NULL;
}

/* Runs a ':' command as typed. */
static void
command(st_app *app, const char *line)
{
	tui_press(app, ":");
	tui_type(app, line);
	tui_press(app, "<Enter>");
}

#define assert_has(text, needle)                                                                  \
	cr_assert_not_null(strstr((text), (needle)), "'%s' not found in:\n%s", (needle), (text))
#define assert_lacks(text, needle)                                                                \
	cr_assert_null(strstr((text), (needle)), "'%s' unexpectedly found in:\n%s", (needle), (text))

/* The screen row (0-based) where needle first shows, or -1. */
static int
row_of(st_app *app, const char *needle)
{
	for (int y = 0; y < app->screen->h; y++) {
		char *line = st_screen_row_text(app->screen, 0, y, app->screen->w);
		bool found = strstr(line, needle) != NULL;
		free(line);
		if (found)
			return y;
	}
	return -1;
}

/* The row of the table that starts with name (after a baseline's number),
 * or -1. */
static int
layer_row(st_app *app, const char *name)
{
	size_t n = strlen(name);
	for (int y = 1; y < app->screen->h - 1; y++) {
		char *line = st_screen_row_text(app->screen, 0, y, app->screen->w);
		const char *p = line;
		while (*p == ' ')
			p++;
		if (*p >= '1' && *p <= '9' && p[1] == ' ') {
			for (p++; *p == ' '; p++)
				;
		}
		bool found = strncmp(p, name, n) == 0 && (p[n] == ' ' || p[n] == '\0');
		free(line);
		if (found)
			return y;
	}
	return -1;
}

/* The cell where needle first shows on screen; fails when it does not. */
static const st_cell *
cell_of(st_app *app, const char *needle)
{
	for (int y = 0; y < app->screen->h; y++) {
		char *line = st_screen_row_text(app->screen, 0, y, app->screen->w);
		char *at = strstr(line, needle);
		if (at != NULL) {
			/* Columns before it, counted in characters of the row's text. */
			*at = '\0';
			int x = st_text_width(line);
			free(line);
			return st_screen_at(app->screen, x, y);
		}
		free(line);
	}
	cr_assert_fail("'%s' is not on the screen", needle);
	return NULL;
}

/* Opens a fixture with :report FILE. */
static void
open_fixture(st_app *app, const char *name)
{
	char *path = fixture(name);
	char *line = st_xasprintf("report %s", path);
	command(app, line);
	free(line);
	free(path);
	cr_assert_eq(app->view, ST_VIEW_REPORT, "not in the report view: %s", app->status);
}

/* Asserts that the names show on screen in this order, top to bottom. */
static void
assert_order(st_app *app, const char *const *names, int n)
{
	st_app_draw(app);
	int last = -1;
	for (int i = 0; i < n; i++) {
		int y = layer_row(app, names[i]);
		cr_assert(y > last, "%s is on row %d, not below %s (row %d)", names[i], y, i ? names[i - 1] : "-", last);
		last = y;
	}
}

/* ---- opening ---- */

Test(tui_report, report_file_opens_in_the_report_view)
{
	st_app *app = open_app(120, 34);
	open_fixture(app, "small.strata-report.json");
	char *s = tui_frame(app);
	assert_has(s, "REPORT");
	assert_has(s, "small_cnn 1.2");
	assert_has(s, "latency 2.125 ms");
	assert_has(s, "1 Layers");
	assert_has(s, "2 Metrics");
	assert_has(s, "3 Memory");
	assert_has(s, "conv1");
	assert_has(s, "max_pool2d");
	assert_has(s, "1x16x28x28");
	assert_has(s, "0.800 ms");
	/* The view's keys are on the hint line (once the message is gone). */
	tui_press(app, "<C-l>");
	st_app_draw(app);
	char *hints = st_screen_row_text(app->screen, 0, app->screen->h - 1, app->screen->w);
	assert_has(hints, "s sort");
	assert_has(hints, "b baseline");
	assert_has(hints, "q close");
	free(hints);
	free(s);
	/* q goes back to editing, without quitting. */
	tui_press(app, "q");
	cr_assert_eq(app->view, ST_VIEW_EDIT);
	cr_assert(!app->quit);
	s = tui_frame(app);
	assert_has(s, "EDIT");
	assert_has(s, "2 Canvas");
	free(s);
	close_app(app);
}

Test(tui_report, without_a_file_the_newest_report_of_the_model_opens)
{
	st_app *app = open_app(120, 34);
	char *older = fixture("small.strata-report.json"), *newer = fixture("cnn.strata-report.json");
	char *dir = st_xasprintf("%s/state/strata/reports/cnn", test_dir);
	char *a = st_xasprintf("%s/20261130-040000.strata-report.json", dir);
	char *b = st_xasprintf("%s/20261130-040000-2.strata-report.json", dir);
	copy_file(newer, b);
	copy_file(older, a);
	command(app, "report");
	cr_assert_eq(app->view, ST_VIEW_REPORT, "%s", app->status);
	char *s = tui_frame(app);
	/* -2 is the second run of that second: the newer one. */
	assert_has(s, "cnn_classifier");
	assert_has(s, "20261130-040000-2.strata-report.json");
	free(s);
	free(older);
	free(newer);
	free(dir);
	free(a);
	free(b);
	close_app(app);
}

Test(tui_report, no_report_is_an_error_and_the_editor_stays)
{
	st_app *app = open_app(120, 34);
	command(app, "report");
	cr_assert_eq(app->view, ST_VIEW_EDIT);
	cr_assert(app->status_set);
	cr_assert_eq(app->status_severity, ST_SEVERITY_ERROR);
	cr_assert_not_null(strstr(app->status, "no reports in"), "%s", app->status);
	close_app(app);
}

Test(tui_report, a_bad_report_names_file_and_line_and_the_editor_stays_usable)
{
	st_app *app = open_app(120, 34);
	char *path = fixture("bad.strata-report.json");
	char *line = st_xasprintf("report %s", path);
	command(app, line);
	cr_assert_eq(app->view, ST_VIEW_EDIT);
	cr_assert_eq(app->status_severity, ST_SEVERITY_ERROR);
	char *where = st_xasprintf("bad.strata-report.json:13:");
	cr_assert_not_null(strstr(app->status, where), "%s", app->status);
	cr_assert_not_null(strstr(app->status, "threads"), "%s", app->status);
	char *s = tui_frame(app);
	assert_has(s, "bad.strata-report.json:13:");
	free(s);
	/* Editing goes on: a command still runs. */
	command(app, "add identity spare");
	cr_assert_not_null(st_graph_find(st_app_graph(app), "spare"), "%s", app->status);
	s = tui_frame(app);
	assert_has(s, "EDIT");
	assert_has(s, "11 layers");
	free(s);
	/* A missing file too. */
	command(app, "report /nonexistent/x.strata-report.json");
	cr_assert_eq(app->view, ST_VIEW_EDIT);
	cr_assert_eq(app->status_severity, ST_SEVERITY_ERROR);
	free(where);
	free(line);
	free(path);
	close_app(app);
}

/* ---- the layer table ---- */

Test(tui_report, sorting_by_a_column_changes_the_row_order)
{
	st_app *app = open_app(120, 34);
	open_fixture(app, "small.strata-report.json");
	static const char *const run_order[] = { "conv1", "relu1", "pool1", "flatten", "fc,\"head\"" };
	assert_order(app, run_order, 5);
	tui_press(app, "s"); /* time, largest first */
	static const char *const by_time[] = { "conv1", "pool1", "fc,\"head\"", "relu1", "flatten" };
	assert_order(app, by_time, 5);
	char *s = tui_frame(app);
	assert_has(s, "time ▼");
	assert_has(s, "sort time");
	free(s);
	tui_press(app, "S"); /* reversed */
	static const char *const by_time_up[] = { "flatten", "relu1", "fc,\"head\"", "pool1", "conv1" };
	assert_order(app, by_time_up, 5);
	tui_press(app, "s"); /* name */
	static const char *const by_name[] = { "conv1", "fc,\"head\"", "flatten", "pool1", "relu1" };
	assert_order(app, by_name, 5);
	tui_press(app, "s"); /* type */
	static const char *const by_type[] = { "conv1", "fc,\"head\"", "flatten", "pool1", "relu1" };
	assert_order(app, by_type, 5); /* conv2d dense flatten max_pool2d relu */
	tui_press(app, "s"); /* output */
	tui_press(app, "s"); /* back to the order of the run */
	assert_order(app, run_order, 5);
	close_app(app);
}

Test(tui_report, times_switch_between_absolute_and_relative)
{
	st_app *app = open_app(120, 34);
	open_fixture(app, "small.strata-report.json");
	char *s = tui_frame(app);
	assert_has(s, "0.800 ms");
	assert_lacks(s, "40.0%");
	free(s);
	tui_press(app, "r");
	s = tui_frame(app);
	assert_has(s, "40.0%");
	assert_has(s, "15.0%");
	assert_has(s, "share");
	assert_lacks(s, "0.800 ms");
	free(s);
	tui_press(app, "%");
	s = tui_frame(app);
	assert_has(s, "0.800 ms");
	free(s);
	close_app(app);
}

Test(tui_report, typing_after_slash_filters_the_layers)
{
	st_app *app = open_app(120, 34);
	open_fixture(app, "small.strata-report.json");
	tui_press(app, "/");
	tui_type(app, "pool");
	char *s = tui_frame(app);
	assert_has(s, "pool1");
	assert_lacks(s, "relu1");
	cr_assert_eq(layer_row(app, "conv1"), -1);
	free(s);
	/* Enter keeps the filter; the keys are the view's again. */
	tui_press(app, "<Enter>");
	tui_press(app, "r");
	s = tui_frame(app);
	assert_has(s, "30.0%");
	assert_lacks(s, "relu1");
	assert_has(s, "/pool");
	free(s);
	/* A type matches too; Esc while typing drops the filter. */
	tui_press(app, "/");
	tui_press(app, "<C-u>");
	tui_type(app, "RELU");
	s = tui_frame(app);
	assert_has(s, "relu1");
	assert_lacks(s, "pool1");
	free(s);
	tui_press(app, "<Esc>");
	s = tui_frame(app);
	assert_has(s, "pool1");
	assert_has(s, "relu1");
	free(s);
	/* A filter nothing matches says so. */
	tui_press(app, "/");
	tui_type(app, "zzz");
	s = tui_frame(app);
	assert_has(s, "No layer matches the filter.");
	free(s);
	close_app(app);
}

/* ---- baselines and metric charts ---- */

Test(tui_report, baselines_are_added_drawn_beside_the_layer_and_cleared)
{
	st_app *app = open_app(120, 34);
	open_fixture(app, "small.strata-report.json");
	tui_press(app, "j"); /* relu1 */
	tui_press(app, "b");
	cr_assert_not_null(strstr(app->status, "baseline 1: relu1"), "%s", app->status);
	tui_press(app, "j"); /* pool1 */
	tui_press(app, "b");
	cr_assert_not_null(strstr(app->status, "baseline 2: pool1"), "%s", app->status);
	char *s = tui_frame(app);
	assert_has(s, "2 baselines");
	free(s);
	/* The table marks them with their number, in their colour. */
	st_app_draw(app);
	int y = layer_row(app, "relu1");
	const st_cell *tag = st_screen_at(app->screen, 0, y);
	cr_assert_str_eq(tag->ch, "1");
	cr_assert(st_style_equal(&tag->style, st_app_style(app, ST_ROLE_SERIES_1)));
	y = layer_row(app, "pool1");
	tag = st_screen_at(app->screen, 0, y);
	cr_assert_str_eq(tag->ch, "2");
	cr_assert_eq(tag->style.fg, st_app_style(app, ST_ROLE_SERIES_2)->fg);
	/* The metrics of the selected layer (conv1), with both baselines. */
	tui_press(app, "g");
	tui_press(app, "2");
	s = tui_frame(app);
	assert_has(s, "conv1 · conv2d · 1x16x28x28");
	assert_has(s, "1 relu1");
	assert_has(s, "2 pool1");
	assert_has(s, "time mean");
	assert_has(s, "0.800 ms");
	assert_has(s, "0.200 ms");
	assert_has(s, "0.600 ms");
	assert_has(s, "FLOPs");
	assert_has(s, "2.26 MFLOP");
	assert_has(s, "compute");
	assert_has(s, "2.822 GFLOP/s");
	assert_has(s, "bandwidth");
	free(s);
	/* conv1's bar is the longest: a full block row in the bar colour. */
	const st_cell *bar = cell_of(app, "██████");
	cr_assert_eq(bar->style.fg, st_app_style(app, ST_ROLE_BAR)->fg);
	/* A baseline's bars are in its colour, tagged with its number. */
	y = row_of(app, "0.200 ms");
	tag = st_screen_at(app->screen, 1, y);
	cr_assert_str_eq(tag->ch, "1");
	cr_assert_eq(tag->style.fg, st_app_style(app, ST_ROLE_SERIES_1)->fg);
	cr_assert_eq(st_screen_at(app->screen, 3, y)->style.fg, st_app_style(app, ST_ROLE_SERIES_1)->fg);
	/* B clears them. */
	tui_press(app, "B");
	s = tui_frame(app);
	assert_has(s, "0 baselines");
	assert_lacks(s, "1 relu1");
	assert_has(s, "b marks baselines");
	free(s);
	/* b on a baseline unmarks it. */
	tui_press(app, "1");
	tui_press(app, "b");
	tui_press(app, "b");
	cr_assert_not_null(strstr(app->status, "no longer a baseline"), "%s", app->status);
	close_app(app);
}

Test(tui_report, counters_that_were_not_measured_read_unavailable)
{
	st_app *app = open_app(120, 60);
	open_fixture(app, "small.strata-report.json");
	tui_press(app, "G"); /* fc,"head": no counters */
	tui_press(app, "2");
	char *s = tui_frame(app);
	assert_has(s, "cycles");
	assert_has(s, "unavailable");
	free(s);
	close_app(app);
}

Test(tui_report, the_memory_tab_lists_each_layers_memory)
{
	st_app *app = open_app(120, 34);
	open_fixture(app, "small.strata-report.json");
	tui_press(app, "3");
	char *s = tui_frame(app);
	assert_has(s, "allocated");
	assert_has(s, "persistent");
	assert_has(s, "49.0 KiB"); /* conv1 allocates 50176 bytes */
	assert_has(s, "1.0 MiB");
	assert_has(s, "peak 1.0 MiB after conv1");
	free(s);
	/* Tab steps through the tabs and back round. */
	tui_press(app, "<Tab>");
	s = tui_frame(app);
	assert_has(s, "1x16x28x28");
	free(s);
	close_app(app);
}

/* A report in memory with per-run samples (format 1.1): sparklines. */
static void
take_with_samples(st_app *app)
{
	char *path = fixture("small.strata-report.json");
	st_report r;
	st_diag d;
	st_diag_init(&d);
	cr_assert_eq(st_report_load(path, &r, &d), 0);
	st_diag_free(&d);
	for (int i = 0; i < r.n_layers; i++) {
		r.layers[i].n_samples = 16;
		r.layers[i].samples = st_xcalloc(16, sizeof *r.layers[i].samples);
		for (int k = 0; k < 16; k++)
			r.layers[i].samples[k] = k; /* a steady climb */
	}
	r.n_latency_samples = 8;
	r.latency_samples = st_xcalloc(8, sizeof *r.latency_samples);
	for (int k = 0; k < 8; k++)
		r.latency_samples[k] = 8 - k;
	st_report_take(app, &r, path);
	free(path);
}

Test(tui_report, samples_draw_sparklines_and_none_without_them)
{
	st_app *app = open_app(120, 34);
	open_fixture(app, "small.strata-report.json");
	char *s = tui_frame(app);
	assert_lacks(s, "per run");
	assert_lacks(s, "▁");
	free(s);
	take_with_samples(app);
	s = tui_frame(app);
	assert_has(s, "per run");
	assert_has(s, "▁▁▂▂▃▃▄▄▅▅▆▆▇▇██");
	assert_has(s, "█▇▆▅▄▃▂▁"); /* the latency, falling */
	free(s);
	close_app(app);
}

Test(tui_report, ascii_screens_get_ascii_bars_and_sparklines)
{
	st_app *app = open_app(120, 34);
	app->screen->ascii = true;
	open_fixture(app, "small.strata-report.json");
	take_with_samples(app);
	char *s = tui_frame(app);
	assert_has(s, "__..--==++**##@@");
	assert_has(s, "######");
	assert_has(s, "time");
	assert_lacks(s, "█");
	assert_lacks(s, "▁");
	assert_lacks(s, "·");
	free(s);
	tui_press(app, "s");
	s = tui_frame(app);
	assert_has(s, "time v");
	free(s);
	close_app(app);
}

/* ---- comparing ---- */

Test(tui_report, compare_shows_differences_against_the_base)
{
	st_app *app = open_app(120, 34);
	char *a = fixture("small.strata-report.json"), *b = fixture("other.strata-report.json");
	char *line = st_xasprintf("compare %s %s", a, b);
	command(app, line);
	cr_assert_eq(app->view, ST_VIEW_COMPARE, "%s", app->status);
	char *s = tui_frame(app);
	assert_has(s, "COMPARE");
	/* The summaries: average time, and the difference of the second. */
	assert_has(s, "1 small.strata-report.json");
	assert_has(s, "average 2.125 ms");
	assert_has(s, "base");
	assert_has(s, "2 other.strata-report.json");
	assert_has(s, "average 1.700 ms · -0.425 ms (-20.0%)");
	/* Layers matched by name and type: time, difference, percentage. */
	assert_has(s, "0.600 -0.200 -25.0%");
	assert_has(s, "0.250 +0.050 +25.0%");
	assert_has(s, "absent"); /* flatten is not in the second, extra not in the first */
	free(s);
	/* Each report in its own colour. */
	cr_assert_eq(cell_of(app, "2 other.strata-report.json")->style.fg, st_app_style(app, ST_ROLE_SERIES_2)->fg);
	cr_assert_eq(cell_of(app, "1 small.strata-report.json")->style.fg, st_app_style(app, ST_ROLE_SERIES_1)->fg);
	/* Sorted by difference: the largest change first. */
	tui_press(app, "s");
	static const char *const by_diff[] = { "conv1", "relu1" };
	assert_order(app, by_diff, 2);
	/* The metrics side by side. */
	tui_press(app, "2");
	s = tui_frame(app);
	assert_has(s, "time mean");
	assert_has(s, "0.800 ms");
	assert_has(s, "0.600 ms");
	free(s);
	/* Another base from the list: the arithmetic turns round. */
	tui_press(app, "1");
	tui_press(app, "b");
	cr_assert_eq(app->overlay, ST_OVERLAY_PICK);
	tui_press(app, "j");
	tui_press(app, "<Enter>");
	cr_assert_eq(app->compare != NULL, true);
	s = tui_frame(app);
	assert_has(s, "0.800 +0.200 +33.3%");
	assert_has(s, "average 2.125 ms · +0.425 ms (+25.0%)");
	assert_has(s, "base 2");
	free(s);
	tui_press(app, "<Esc>");
	cr_assert_eq(app->view, ST_VIEW_EDIT);
	free(line);
	free(a);
	free(b);
	close_app(app);
}

Test(tui_report, compare_needs_two_readable_reports)
{
	st_app *app = open_app(120, 34);
	command(app, "compare x");
	cr_assert_eq(app->view, ST_VIEW_EDIT);
	cr_assert_not_null(strstr(app->status, "two reports"), "%s", app->status);
	char *a = fixture("small.strata-report.json"), *b = fixture("bad.strata-report.json");
	char *line = st_xasprintf("compare %s %s", a, b);
	command(app, line);
	cr_assert_eq(app->view, ST_VIEW_EDIT);
	cr_assert_not_null(strstr(app->status, "bad.strata-report.json:13:"), "%s", app->status);
	free(line);
	free(a);
	free(b);
	close_app(app);
}

Test(tui_report, c_in_the_report_view_compares_with_a_report_of_its_folder)
{
	st_app *app = open_app(120, 34);
	char *dir = st_xasprintf("%s/state/strata/reports/cnn", test_dir);
	char *a = st_xasprintf("%s/20261130-040000.strata-report.json", dir);
	char *b = st_xasprintf("%s/20261130-050000.strata-report.json", dir);
	char *fa = fixture("small.strata-report.json"), *fb = fixture("other.strata-report.json");
	copy_file(fa, a);
	copy_file(fb, b);
	command(app, "report");
	cr_assert_eq(app->view, ST_VIEW_REPORT, "%s", app->status);
	tui_press(app, "c");
	cr_assert_eq(app->overlay, ST_OVERLAY_PICK);
	cr_assert_eq(app->n_pick_items, 1);
	cr_assert_str_eq(app->pick_items[0], "20261130-040000.strata-report.json");
	tui_press(app, "<Enter>");
	cr_assert_eq(app->view, ST_VIEW_COMPARE, "%s", app->status);
	char *s = tui_frame(app);
	/* The open report is the base: the older one differs from it. */
	assert_has(s, "1 20261130-050000.strata-report.json");
	assert_has(s, "0.800 +0.200 +33.3%");
	free(s);
	free(fa);
	free(fb);
	free(a);
	free(b);
	free(dir);
	close_app(app);
}

/* ---- the heat overlay ---- */

/* Asserts that layer name's glyph on the canvas has the border colour of
 * role and shows its share as text on its first line. */
static void
assert_glyph_heat(st_app *app, const char *name, const char *share, st_role role)
{
	st_app_draw(app);
	const st_layer *l = st_graph_find(st_app_graph(app), name);
	cr_assert_not_null(l);
	st_rect g, panel = app->panel_rect[ST_PANEL_CANVAS];
	st_glyph_rect(l, &g);
	int x = panel.x + 1 + g.x - app->canvas.scroll_x, y = panel.y + 1 + g.y - app->canvas.scroll_y;
	const st_cell *corner = st_screen_at(app->screen, x, y);
	cr_assert_not_null(corner, "%s is off the screen", name);
	cr_assert_eq(corner->style.fg, st_app_style(app, role)->fg, "%s's border is not in %s", name,
	             st_role_names[role]);
	char *line = st_screen_row_text(app->screen, x, y + 1, g.w);
	assert_has(line, name);
	char *tag = st_xasprintf(" %s ", share);
	assert_has(line, tag);
	free(tag);
	free(line);
}

Test(tui_report, heat_colours_the_canvas_by_share_of_time_with_a_legend)
{
	st_app *app = open_app(120, 40);
	char *s = tui_frame(app);
	assert_lacks(s, "heat");
	free(s);
	/* :heat without a report opens the newest, and stays on the canvas. */
	char *src = fixture("cnn.strata-report.json");
	char *dst = st_xasprintf("%s/state/strata/reports/cnn/20261130-040000.strata-report.json", test_dir);
	copy_file(src, dst);
	command(app, "heat");
	cr_assert_eq(app->view, ST_VIEW_EDIT);
	cr_assert_not_null(app->canvas.heat);
	cr_assert_not_null(strstr(app->status, "8 of 10 layers"), "%s", app->status);
	s = tui_frame(app);
	assert_has(s, "heat");
	assert_has(s, "≥34% of time"); /* the top step: 3/4 of the largest share, 45% */
	assert_has(s, "0-11%");
	assert_has(s, "45%");
	free(s);
	/* conv1, the largest share, takes the top of the ramp; pool1 the
	 * bottom: the glyph's border and its share, written on it. */
	assert_glyph_heat(app, "conv1", "45%", ST_ROLE_HEAT_4);
	assert_glyph_heat(app, "conv2", "30%", ST_ROLE_HEAT_3);
	assert_glyph_heat(app, "pool1", "5%", ST_ROLE_HEAT_1);
	cr_assert_eq(st_heat_step(0.45, 0.45), ST_HEAT_STEPS - 1);
	cr_assert_eq(st_heat_step(0.3, 0.45), 2);
	cr_assert_eq(st_heat_step(0, 0.45), 0);
	/* Again: off. */
	command(app, "heat");
	cr_assert_null(app->canvas.heat);
	s = tui_frame(app);
	assert_lacks(s, "of time");
	free(s);
	free(src);
	free(dst);
	close_app(app);
}

Test(tui_report, heat_in_ascii_keeps_its_text)
{
	st_app *app = open_app(120, 40);
	app->screen->ascii = true;
	open_fixture(app, "cnn.strata-report.json");
	tui_press(app, "H");
	cr_assert_eq(app->view, ST_VIEW_EDIT);
	cr_assert_not_null(app->canvas.heat);
	char *s = tui_frame(app);
	assert_has(s, "## >=34% of time");
	assert_has(s, "45%");
	assert_has(s, "30%");
	assert_lacks(s, "█");
	free(s);
	close_app(app);
}

Test(tui_report, heat_needs_a_report)
{
	st_app *app = open_app(120, 34);
	command(app, "heat");
	cr_assert_null(app->canvas.heat);
	cr_assert_eq(app->status_severity, ST_SEVERITY_ERROR);
	cr_assert_not_null(strstr(app->status, "no reports"), "%s", app->status);
	close_app(app);
}

/* ---- menus, help and the command line in a view ---- */

Test(tui_report, menus_command_line_and_help_work_in_the_view)
{
	st_app *app = open_app(120, 34);
	tui_press(app, "<F10>");
	tui_press(app, "t");
	char *s = tui_frame(app);
	assert_has(s, "Open report...");
	assert_has(s, "Compare reports...");
	free(s);
	tui_press(app, "<Esc>");
	tui_press(app, "<F10>");
	tui_press(app, "v");
	s = tui_frame(app);
	assert_has(s, "Heat overlay");
	free(s);
	tui_press(app, "<Esc>");
	open_fixture(app, "small.strata-report.json");
	tui_press(app, "?");
	cr_assert_eq(app->overlay, ST_OVERLAY_HELP);
	tui_press(app, "<Esc>");
	cr_assert_eq(app->view, ST_VIEW_REPORT);
	/* ':' works, and a command from it acts. */
	command(app, "toggle grid");
	cr_assert_eq(app->view, ST_VIEW_REPORT);
	cr_assert(app->canvas.show_grid);
	/* Keys of the editor do not reach the model from here. */
	int n = st_app_graph(app)->n_layers;
	tui_press(app, "d");
	tui_press(app, "u");
	cr_assert_eq(st_app_graph(app)->n_layers, n);
	cr_assert(!st_session_dirty(app->session));
	close_app(app);
}

Test(tui_report, the_view_fits_small_and_narrow_screens)
{
	static const int sizes[][2] = { { 60, 16 }, { 80, 24 }, { 100, 30 }, { 200, 50 } };
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		st_app *app = open_app(sizes[i][0], sizes[i][1]);
		open_fixture(app, "small.strata-report.json");
		take_with_samples(app);
		tui_press(app, "b");
		for (int tab = 0; tab < 3; tab++) {
			char *s = tui_frame(app);
			assert_has(s, "1 Layers");
			free(s);
			tui_press(app, "<Tab>");
		}
		char *a = fixture("small.strata-report.json"), *b = fixture("other.strata-report.json");
		char *line = st_xasprintf("compare %s %s %s", a, b, a);
		command(app, line);
		cr_assert_eq(app->view, ST_VIEW_COMPARE, "%s", app->status);
		char *s = tui_frame(app);
		assert_has(s, "3 small.strata-report.json");
		free(s);
		tui_press(app, "<Tab>");
		s = tui_frame(app);
		free(s);
		free(line);
		free(a);
		free(b);
		close_app(app);
	}
}
