/* The report view (one inference report: its summary, the layer table,
 * metric charts with baselines, memory), the comparison of reports, and
 * the heat overlay they lend the canvas. */
#include "config.h"

#include <dirent.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "st-engine.h"
#include "st-report.h"
#include "tui-app.h"

#define MAX_BASELINES 6  /* one colour each: ST_ROLE_SERIES_1 .. 6 */
#define MAX_COMPARED 6   /* the same colours, one per report */

enum { TAB_LAYERS, TAB_METRICS, TAB_MEMORY, N_TABS };
static const char *const tab_names[N_TABS] = { "Layers", "Metrics", "Memory" };

/* The columns `s` steps through, in that order. */
typedef enum sort_key { SORT_ORDER, SORT_TIME, SORT_NAME, SORT_TYPE, SORT_OUTPUT, N_SORTS } sort_key;
static const char *const sort_names[N_SORTS] = { "order", "time", "name", "type", "output" };

struct st_report_view {
	char *path;                /* the file, or NULL for a report given in memory */
	st_report report;
	int tab;
	int selected;              /* index into report.layers; -1 when there are none */
	int top;                   /* the first row of the table shown */
	int chart_top;             /* the first line of the metric charts shown */
	sort_key sort;
	bool reversed;             /* against the column's own order: times largest first, text from A */
	bool relative;             /* times as shares of the total */
	bool typing;               /* the filter takes the keys */
	st_field filter;
	int baselines[MAX_BASELINES]; /* layer indices, in the order they were marked */
	int n_baselines;
	int page;                  /* rows of the table on the last frame, for PageUp/PageDown */
};

enum { CMP_SORT_ORDER, CMP_SORT_DIFFERENCE, CMP_SORT_NAME, N_CMP_SORTS };
static const char *const compare_sort_names[N_CMP_SORTS] = { "order", "difference", "name" };

struct st_compare_view {
	int n;                     /* reports */
	char **paths;
	st_report *reports;
	int base;
	int tab;                   /* TAB_LAYERS or TAB_METRICS */
	int sort;
	int selected;              /* index into rows */
	int top;
	int chart_top;             /* the first line of the metric charts shown */
	int page;                  /* lines of the body on the last frame */
	/* Layers matched by name and type: row r holds, for report j, the
	 * index of its layer in match[r * n + j], or -1. Base order first. */
	int *match;
	int n_rows;
};

/* ---- formatting ---- */

/* A count with an SI prefix: "2.26 M". */
static void
format_si(double v, const char *unit, char *buf, size_t size)
{
	static const char *const prefixes[] = { "", "k", "M", "G", "T", "P" };
	int p = 0;
	double a = v < 0 ? -v : v;
	while (a >= 1000 && p < 5) {
		a /= 1000;
		v /= 1000;
		p++;
	}
	if (p == 0)
		snprintf(buf, size, "%.0f %s", v, unit);
	else
		snprintf(buf, size, "%.2f %s%s", v, prefixes[p], unit);
}

/* Bytes in binary units: "58.6 KiB". */
static void
format_bytes(double v, char *buf, size_t size)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	int u = 0;
	while ((v >= 1024 || v <= -1024) && u < 4) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, size, "%.0f B", v);
	else
		snprintf(buf, size, "%.1f %s", v, units[u]);
}

/* Whether needle occurs in hay, ignoring ASCII case. */
static bool
contains_nocase(const char *hay, const char *needle)
{
	size_t n = strlen(needle);
	for (const char *p = hay; p != NULL && *p; p++) {
		if (strncasecmp(p, needle, n) == 0)
			return true;
	}
	return n == 0;
}

/* ---- the metrics a layer has: one table drives the charts of both views ---- */

typedef enum metric_format { FORMAT_MS, FORMAT_FLOPS, FORMAT_BYTES, FORMAT_RATE, FORMAT_COUNT } metric_format;

typedef struct metric_desc {
	const char *label;
	size_t offset;         /* of the value in st_report_layer */
	bool int64;            /* an int64_t, else a double */
	metric_format format;
	const char *unit;      /* for FORMAT_RATE */
} metric_desc;

#define LAYER_FIELD(f) offsetof(st_report_layer, f)
static const metric_desc metrics[] = {
	{ "time mean", LAYER_FIELD(time.mean), false, FORMAT_MS, NULL },
	{ "time median", LAYER_FIELD(time.median), false, FORMAT_MS, NULL },
	{ "time min", LAYER_FIELD(time.min), false, FORMAT_MS, NULL },
	{ "time max", LAYER_FIELD(time.max), false, FORMAT_MS, NULL },
	{ "time p90", LAYER_FIELD(time.p90), false, FORMAT_MS, NULL },
	{ "time p99", LAYER_FIELD(time.p99), false, FORMAT_MS, NULL },
	{ "time stddev", LAYER_FIELD(time.stddev), false, FORMAT_MS, NULL },
	{ "FLOPs", LAYER_FIELD(flops), false, FORMAT_FLOPS, NULL },
	{ "bytes moved", LAYER_FIELD(bytes), false, FORMAT_BYTES, NULL },
	{ "compute", LAYER_FIELD(gflops), false, FORMAT_RATE, "GFLOP/s" },
	{ "bandwidth", LAYER_FIELD(gbs), false, FORMAT_RATE, "GB/s" },
	{ "cycles", LAYER_FIELD(cycles), false, FORMAT_COUNT, NULL },
	{ "instructions", LAYER_FIELD(instructions), false, FORMAT_COUNT, NULL },
	{ "cache misses", LAYER_FIELD(cache_misses), false, FORMAT_COUNT, NULL },
	{ "memory allocated", LAYER_FIELD(mem_allocated), true, FORMAT_BYTES, NULL },
	{ "memory freed", LAYER_FIELD(mem_freed), true, FORMAT_BYTES, NULL },
	{ "memory live", LAYER_FIELD(mem_live), true, FORMAT_BYTES, NULL },
	{ "memory persistent", LAYER_FIELD(mem_persistent), true, FORMAT_BYTES, NULL },
};
#define N_METRICS ((int)(sizeof metrics / sizeof metrics[0]))

/* A metric of layer l; false when it was not measured (a counter of -1,
 * times of no samples). */
static bool
metric_value(const metric_desc *m, const st_report_layer *l, double *out)
{
	const char *base = (const char *)l;
	if (m->int64) {
		int64_t v;
		memcpy(&v, base + m->offset, sizeof v);
		*out = (double)v;
	} else {
		memcpy(out, base + m->offset, sizeof *out);
	}
	if (m->format == FORMAT_COUNT && *out < 0)
		return false;
	if (m->format == FORMAT_MS && l->time.count == 0)
		return false;
	return true;
}

static void
metric_text(const metric_desc *m, double v, char *buf, size_t size)
{
	switch (m->format) {
	case FORMAT_MS:
		snprintf(buf, size, "%.3f ms", v);
		break;
	case FORMAT_FLOPS:
		format_si(v, "FLOP", buf, size);
		break;
	case FORMAT_BYTES:
		format_bytes(v, buf, size);
		break;
	case FORMAT_RATE:
		snprintf(buf, size, "%.3f %s", v, m->unit);
		break;
	case FORMAT_COUNT:
		format_si(v, "", buf, size);
		break;
	}
}

/* ---- bars and sparklines ---- */

/* A horizontal bar of fraction (0 to 1) of w columns, in eighths of a cell
 * (or '#' in ASCII). Returns the columns drawn. */
static int
draw_bar(st_screen *s, int x, int y, int w, double fraction, const st_style *style)
{
	static const char *const eighths[] = { "", "▏", "▎", "▍", "▌", "▋", "▊", "▉" };
	if (w <= 0 || !(fraction > 0))
		return 0;
	if (fraction > 1)
		fraction = 1;
	int units = (int)(fraction * w * 8 + 0.5);
	if (units < 1)
		units = 1; /* a value that is not zero always shows */
	int full = units / 8, rest = units % 8, at = 0;
	for (; at < full; at++)
		st_screen_text(s, x + at, y, s->ascii ? "#" : "█", style, 1);
	if (rest > 0 && at < w) {
		st_screen_text(s, x + at, y, s->ascii ? (rest >= 4 ? "#" : "=") : eighths[rest], style, 1);
		at++;
	}
	return at;
}

/* A sparkline of n samples in at most w columns (st_report_sparkline). */
static void
draw_sparkline(st_screen *s, int x, int y, int w, const double *v, int n, const st_style *style)
{
	st_buf line;
	st_buf_init(&line);
	int cols = st_report_sparkline(&line, v, n, w, 0, 0, s->ascii);
	if (cols > 0)
		st_screen_text(s, x, y, line.data, style, cols);
	st_buf_free(&line);
}

/* ---- charts: one metric, one bar per series ---- */

/* A series of a chart: a layer (NULL: not in that report), its colour and
 * the tag that names it without colour ("1" .. "6", or a space). */
typedef struct series {
	const st_report_layer *layer;
	st_role role;
	char tag;
} series;

#define CHART_W 38

/* Draws metric m for n series at (x, y), w columns wide, one line for the
 * label and one per series; lines outside [clip_y0, clip_y1) are left out. */
static void
draw_chart(st_app *app, st_screen *s, int x, int y, int w, const metric_desc *m, const series *sv, int n)
{
	st_screen_text_fit(s, x, y, m->label, st_app_style(app, ST_ROLE_TITLE), w);
	double largest = 0, values[MAX_BASELINES + 1];
	bool valid[MAX_BASELINES + 1];
	for (int i = 0; i < n; i++) {
		valid[i] = sv[i].layer != NULL && metric_value(m, sv[i].layer, &values[i]);
		if (valid[i] && values[i] > largest)
			largest = values[i];
	}
	int value_w = 13, bar_w = w - 2 - value_w - 1;
	for (int i = 0; i < n; i++) {
		int row = y + 1 + i;
		const st_style *st = st_app_style(app, sv[i].role);
		char tag[2] = { sv[i].tag, '\0' };
		st_screen_text(s, x, row, tag, st, 1);
		char text[48];
		if (sv[i].layer == NULL)
			snprintf(text, sizeof text, "not in report");
		else if (!valid[i])
			snprintf(text, sizeof text, "unavailable");
		else
			metric_text(m, values[i], text, sizeof text);
		if (valid[i] && largest > 0 && bar_w > 0)
			draw_bar(s, x + 2, row, bar_w, values[i] / largest, st);
		int tw = st_text_width(text);
		const st_style *ts = st_app_style(app, valid[i] ? ST_ROLE_TEXT : ST_ROLE_DIM);
		st_screen_text_fit(s, x + w - (tw < value_w ? tw : value_w), row, text, ts, value_w);
	}
}

/* Every metric as a chart, in a grid of columns CHART_W wide, scrolled by
 * *top lines, in r. */
static void
draw_charts(st_app *app, st_screen *s, st_rect r, const series *sv, int n, int *top)
{
	int cols = r.w / (CHART_W + 2);
	if (cols < 1)
		cols = 1;
	int cw = cols == 1 ? r.w - 1 : CHART_W;
	int chart_h = n + 2;
	int lines = (N_METRICS + cols - 1) / cols * chart_h;
	if (*top > lines - r.h)
		*top = lines - r.h;
	if (*top < 0)
		*top = 0;
	st_rect old = st_screen_set_clip(s, r);
	for (int i = 0; i < N_METRICS; i++) {
		int x = r.x + (i % cols) * (CHART_W + 2), y = r.y + (i / cols) * chart_h - *top;
		if (y + chart_h <= r.y || y >= r.y + r.h)
			continue;
		draw_chart(app, s, x, y, cw, &metrics[i], sv, n);
	}
	st_screen_set_clip(s, old);
}

/* ---- the layer rows of the report view: filtered and sorted ---- */

typedef struct row_ref {
	const st_report_layer *layer;
	int index;
	sort_key key;
	bool descending;
} row_ref;

static int
compare_rows(const void *pa, const void *pb)
{
	const row_ref *a = pa, *b = pb;
	int c = 0;
	switch (a->key) {
	case SORT_ORDER:
		break;
	case SORT_TIME:
		c = (a->layer->time.mean > b->layer->time.mean) - (a->layer->time.mean < b->layer->time.mean);
		break;
	case SORT_NAME:
		c = strcmp(a->layer->name ? a->layer->name : "", b->layer->name ? b->layer->name : "");
		break;
	case SORT_TYPE:
		c = strcmp(a->layer->type ? a->layer->type : "", b->layer->type ? b->layer->type : "");
		break;
	case SORT_OUTPUT:
		c = strcmp(a->layer->output ? a->layer->output : "", b->layer->output ? b->layer->output : "");
		break;
	case N_SORTS:
		break;
	}
	if (c == 0)
		c = (a->index > b->index) - (a->index < b->index);
	return a->descending ? -c : c;
}

/* Whether the table runs from the largest value down: times read best
 * largest first, text from A; S turns either round. */
static bool
descending(const st_report_view *v)
{
	return (v->sort == SORT_TIME) != v->reversed;
}

/* The layers the table shows, as indices into report.layers, in the order
 * shown; caller frees. */
static int *
shown_rows(const st_report_view *v, int *count)
{
	const st_report *r = &v->report;
	row_ref *refs = st_xcalloc((size_t)r->n_layers + 1, sizeof *refs);
	int n = 0;
	for (int i = 0; i < r->n_layers; i++) {
		const st_report_layer *l = &r->layers[i];
		if (v->filter.text[0] && !contains_nocase(l->name, v->filter.text) &&
		    !contains_nocase(l->type, v->filter.text))
			continue;
		refs[n++] = (row_ref){ l, i, v->sort, descending(v) };
	}
	st_sort(refs, (size_t)n, sizeof *refs, compare_rows);
	int *rows = st_xcalloc((size_t)n + 1, sizeof *rows);
	for (int i = 0; i < n; i++)
		rows[i] = refs[i].index;
	free(refs);
	*count = n;
	return rows;
}

/* The baseline number (0-based) of layer index i, or -1. */
static int
baseline_of(const st_report_view *v, int i)
{
	for (int b = 0; b < v->n_baselines; b++) {
		if (v->baselines[b] == i)
			return b;
	}
	return -1;
}

/* ---- opening reports ---- */

static void
report_view_free(st_report_view *v)
{
	if (v == NULL)
		return;
	st_report_free(&v->report);
	st_field_free(&v->filter);
	free(v->path);
	free(v);
}

static void
compare_view_free(st_compare_view *c)
{
	if (c == NULL)
		return;
	for (int i = 0; i < c->n; i++) {
		st_report_free(&c->reports[i]);
		free(c->paths[i]);
	}
	free(c->reports);
	free(c->paths);
	free(c->match);
	free(c);
}

static void
heat_clear(st_heat *h)
{
	for (int i = 0; i < h->n; i++)
		free(h->names[i]);
	free(h->names);
	free(h->shares);
	*h = (st_heat){ NULL, NULL, 0 };
}

/* Fills the heat table from report r; returns how many of the graph's
 * layers it names. */
static int
heat_fill(st_app *app, const st_report *r)
{
	heat_clear(&app->heat);
	st_heat *h = &app->heat;
	h->names = st_xcalloc((size_t)r->n_layers + 1, sizeof *h->names);
	h->shares = st_xcalloc((size_t)r->n_layers + 1, sizeof *h->shares);
	int matched = 0;
	for (int i = 0; i < r->n_layers; i++) {
		h->names[h->n] = st_xstrdup(r->layers[i].name ? r->layers[i].name : "");
		h->shares[h->n] = r->layers[i].share;
		matched += st_graph_find(st_app_graph(app), h->names[h->n]) != NULL;
		h->n++;
	}
	return matched;
}

void
st_views_free(st_app *app)
{
	report_view_free(app->report);
	compare_view_free(app->compare);
	app->report = NULL;
	app->compare = NULL;
	heat_clear(&app->heat);
	app->canvas.heat = NULL;
	app->view = ST_VIEW_EDIT;
}

/* Says why a report could not be read: the reader's first message, with
 * its file:line:column. */
static void
report_error(st_app *app, const char *path, const st_diag *d)
{
	if (d->count == 0) {
		st_app_message(app, ST_SEVERITY_ERROR, "%s: not a report", path);
		return;
	}
	const st_diag_item *it = &d->items[0];
	const char *file = it->file != NULL ? it->file : path;
	if (it->line > 0)
		st_app_message(app, ST_SEVERITY_ERROR, "%s:%d:%d: %s", file, it->line, it->col, it->text);
	else
		st_app_message(app, ST_SEVERITY_ERROR, "%s: %s", file, it->text);
}

/* Reads a report into r; on failure says why and returns -1 (r is freed). */
static int
load_report(st_app *app, const char *path, st_report *r)
{
	st_diag d;
	st_diag_init(&d);
	int rc = st_report_load(path, r, &d);
	if (rc != 0) {
		report_error(app, path, &d);
		st_report_free(r);
	}
	st_diag_free(&d);
	return rc;
}

/* The folder strata run writes the model's reports to, or NULL for a
 * model without a file. Caller frees. */
static char *
reports_dir(const st_app *app)
{
	return app->path != NULL ? st_report_default_dir(app->path) : NULL;
}

#define REPORT_SUFFIX ".strata-report.json"

/* The order of report files by the run they are of: strata run names them
 * DATE-TIME.strata-report.json, then DATE-TIME-2..., for runs in one
 * second. Other names come before those, by name. */
static int
compare_report_names(const void *pa, const void *pb)
{
	const char *a = *(const char *const *)pa, *b = *(const char *const *)pb;
	size_t la = strcspn(a, "."), lb = strcspn(b, ".");
	/* The stamp is 15 characters; what follows it is "-N" or nothing. */
	bool sa = la >= 15 && a[8] == '-', sb = lb >= 15 && b[8] == '-';
	if (sa != sb)
		return sa ? 1 : -1;
	if (!sa)
		return strcmp(a, b);
	int c = strncmp(a, b, 15);
	if (c != 0)
		return c;
	long na = la > 16 ? strtol(a + 16, NULL, 10) : 1, nb = lb > 16 ? strtol(b + 16, NULL, 10) : 1;
	return (na > nb) - (na < nb);
}

/* The report files in dir, oldest run first; caller frees each and the array. */
static char **
list_reports(const char *dir, int *count)
{
	char **names = NULL;
	int n = 0;
	DIR *dp = opendir(dir);
	struct dirent *e;
	while (dp != NULL && (e = readdir(dp)) != NULL) {
		size_t len = strlen(e->d_name), sl = strlen(REPORT_SUFFIX);
		if (len <= sl || strcmp(e->d_name + len - sl, REPORT_SUFFIX) != 0)
			continue;
		names = st_xreallocarray(names, (size_t)n + 1, sizeof *names);
		names[n++] = st_xstrdup(e->d_name);
	}
	if (dp != NULL)
		closedir(dp);
	st_sort(names, (size_t)n, sizeof *names, compare_report_names);
	*count = n;
	return names;
}

static void
free_names(char **names, int n)
{
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* The newest report of the model; NULL with a message when there is none.
 * Caller frees. */
static char *
newest_report(st_app *app)
{
	char *dir = reports_dir(app);
	if (dir == NULL) {
		st_app_message(app, ST_SEVERITY_ERROR, "this model has no file, so no reports: :report FILE opens one");
		return NULL;
	}
	int n;
	char **names = list_reports(dir, &n);
	char *path = n > 0 ? st_xasprintf("%s/%s", dir, names[n - 1]) : NULL;
	if (path == NULL)
		st_app_message(app, ST_SEVERITY_ERROR, "no reports in %s: strata run --profile MODEL writes one", dir);
	free_names(names, n);
	free(dir);
	return path;
}

void
st_report_take(st_app *app, st_report *r, const char *path)
{
	report_view_free(app->report);
	st_report_view *v = st_xcalloc(1, sizeof *v);
	v->report = *r;
	memset(r, 0, sizeof *r);
	v->path = path ? st_xstrdup(path) : NULL;
	v->selected = v->report.n_layers > 0 ? 0 : -1;
	app->report = v;
	app->view = ST_VIEW_REPORT;
	/* A heat overlay that shows follows the report. */
	if (app->canvas.heat != NULL)
		heat_fill(app, &v->report);
}

int
st_report_open(st_app *app, const char *path)
{
	char *newest = path == NULL ? newest_report(app) : NULL;
	if (path == NULL && newest == NULL)
		return -1;
	const char *file = path ? path : newest;
	st_report r;
	memset(&r, 0, sizeof r);
	int rc = load_report(app, file, &r);
	if (rc == 0) {
		st_report_take(app, &r, file);
		st_app_message(app, ST_SEVERITY_INFO, "report %s", file);
	}
	free(newest);
	return rc;
}

/* ---- the comparison: opening and matching ---- */

/* Matches the layers of every report to the base's by name and type: the
 * base's layers in its order, then those only the others have. */
static void
compare_match(st_compare_view *c)
{
	free(c->match);
	c->match = NULL;
	c->n_rows = 0;
	int order[MAX_COMPARED];
	order[0] = c->base;
	for (int j = 0, k = 1; j < c->n; j++) {
		if (j != c->base)
			order[k++] = j;
	}
	for (int oi = 0; oi < c->n; oi++) {
		const st_report *r = &c->reports[order[oi]];
		for (int i = 0; i < r->n_layers; i++) {
			const st_report_layer *l = &r->layers[i];
			/* Already matched from an earlier report. */
			bool seen = false;
			for (int p = 0; p < oi && !seen; p++)
				seen = st_report_find_layer(&c->reports[order[p]], l->name, l->type) != NULL;
			if (seen)
				continue;
			c->match = st_xreallocarray(c->match, (size_t)(c->n_rows + 1) * (size_t)c->n, sizeof *c->match);
			for (int j = 0; j < c->n; j++) {
				const st_report_layer *m = st_report_find_layer(&c->reports[j], l->name, l->type);
				c->match[c->n_rows * c->n + j] = m ? (int)(m - c->reports[j].layers) : -1;
			}
			c->n_rows++;
		}
	}
	if (c->selected >= c->n_rows)
		c->selected = c->n_rows > 0 ? c->n_rows - 1 : 0;
}

/* The layer of report j on row r, or NULL. */
static const st_report_layer *
match_layer(const st_compare_view *c, int r, int j)
{
	int i = c->match[r * c->n + j];
	return i >= 0 ? &c->reports[j].layers[i] : NULL;
}

/* Any layer of row r (for its name and type). */
static const st_report_layer *
row_layer(const st_compare_view *c, int r)
{
	for (int j = 0; j < c->n; j++) {
		const st_report_layer *l = match_layer(c, r, j);
		if (l != NULL)
			return l;
	}
	return NULL;
}

int
st_compare_open(st_app *app, int n, char **paths)
{
	if (n > MAX_COMPARED) {
		st_app_message(app, ST_SEVERITY_ERROR, "compare takes at most %d reports (one colour each)",
		               MAX_COMPARED);
		return -1;
	}
	st_report *reports = st_xcalloc((size_t)n, sizeof *reports);
	for (int i = 0; i < n; i++) {
		if (load_report(app, paths[i], &reports[i]) != 0) {
			for (int k = 0; k < i; k++)
				st_report_free(&reports[k]);
			free(reports);
			return -1;
		}
	}
	compare_view_free(app->compare);
	st_compare_view *c = st_xcalloc(1, sizeof *c);
	c->n = n;
	c->reports = reports;
	c->paths = st_xcalloc((size_t)n, sizeof *c->paths);
	for (int i = 0; i < n; i++)
		c->paths[i] = st_xstrdup(paths[i]);
	compare_match(c);
	app->compare = c;
	app->view = ST_VIEW_COMPARE;
	st_app_message(app, ST_SEVERITY_INFO, "%d reports against %s; b chooses another base", n, paths[0]);
	return 0;
}

/* The file name of a path, for headings. */
static const char *
base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

/* ---- the heat overlay ---- */

int
st_heat_toggle(st_app *app)
{
	if (app->canvas.heat != NULL) {
		app->canvas.heat = NULL;
		heat_clear(&app->heat);
		st_app_message(app, ST_SEVERITY_INFO, "heat overlay off");
		return 0;
	}
	if (app->report == NULL) {
		/* No report open: the newest, without leaving the canvas. */
		char *path = newest_report(app);
		if (path == NULL)
			return -1;
		st_report r;
		memset(&r, 0, sizeof r);
		int rc = load_report(app, path, &r);
		if (rc == 0) {
			st_report_take(app, &r, path);
			app->view = ST_VIEW_EDIT;
		}
		free(path);
		if (rc != 0)
			return -1;
	}
	const st_report *r = &app->report->report;
	if (r->n_layers == 0) {
		st_app_message(app, ST_SEVERITY_ERROR, "the report has no layer times: strata run --profile MODEL "
		                                       "writes them");
		return -1;
	}
	int matched = heat_fill(app, r);
	app->canvas.heat = &app->heat;
	app->view = ST_VIEW_EDIT;
	st_app_message(app, ST_SEVERITY_INFO, "heat overlay: %d of %d layers from %s; :heat hides it", matched,
	               st_app_graph(app)->n_layers, app->report->path ? base_name(app->report->path) : "the report");
	return 0;
}

/* ---- drawing the report view ---- */

/* The summary: network, where and how it ran, and the headline numbers
 * (with the latency's sparkline when the report has its samples). Returns
 * the lines used. */
static int
draw_summary(st_app *app, st_screen *s, st_rect r, const st_report *rep, const char *path)
{
	const char *dot = st_glyph_text(s, ST_G_DOT);
	st_buf b;
	st_buf_init(&b);
	st_buf_printf(&b, " %s %s %s %s %s %s %s %s %s %d thread%s %s batch %lld", rep->network ? rep->network : "?",
	              rep->network_version ? rep->network_version : "", dot, rep->date ? rep->date : "(no date)", dot,
	              rep->backend ? rep->backend : "?", rep->device ? rep->device : "", dot,
	              rep->format ? rep->format : "?", rep->threads, rep->threads == 1 ? "" : "s", dot,
	              (long long)rep->batch);
	st_screen_text_fit(s, r.x, r.y, b.data, st_app_style(app, ST_ROLE_TITLE), r.w);
	st_buf_reset(&b);
	char peak[32];
	format_bytes((double)rep->peak_bytes, peak, sizeof peak);
	st_buf_printf(&b, " latency %.3f ms (median %.3f, p99 %.3f, %.3f to %.3f) %s %.1f/s %s peak %s%s%s %s",
	              rep->latency.mean, rep->latency.median, rep->latency.p99, rep->latency.min, rep->latency.max,
	              dot, rep->throughput, dot, peak, rep->peak_layer ? " after " : "",
	              rep->peak_layer ? rep->peak_layer : "", dot);
	st_buf_printf(&b, " %d runs, %d profiled", rep->iterations, rep->profile_iterations);
	int spark = rep->n_latency_samples > 0 && r.w > 60 ? 20 : 0;
	st_screen_text_fit(s, r.x, r.y + 1, b.data, st_app_style(app, ST_ROLE_TEXT), r.w - (spark ? spark + 2 : 0));
	if (spark)
		draw_sparkline(s, r.x + r.w - spark - 1, r.y + 1, spark, rep->latency_samples, rep->n_latency_samples,
		               st_app_style(app, ST_ROLE_BAR));
	if (path != NULL) {
		st_buf_reset(&b);
		st_buf_printf(&b, " %s", path);
		st_screen_text_fit(s, r.x, r.y + 2, b.data, st_app_style(app, ST_ROLE_DIM), r.w);
	}
	st_buf_free(&b);
	return path != NULL ? 3 : 2;
}

/* The tab bar; right of it, what the table is sorted and filtered by. */
static void
draw_tabs(st_app *app, st_screen *s, int x, int y, int w, int tab, int n_tabs, const char *const *names,
          const char *right)
{
	st_screen_fill(s, (st_rect){ x, y, w, 1 }, " ", st_app_style(app, ST_ROLE_STATUS));
	int at = x + 1;
	for (int t = 0; t < n_tabs; t++) {
		char label[32];
		snprintf(label, sizeof label, " %d %s ", t + 1, names[t]);
		at += st_screen_text(s, at, y, label, st_app_style(app, t == tab ? ST_ROLE_MENU_SELECTED : ST_ROLE_STATUS),
		                     -1);
		at++;
	}
	int rw = st_text_width(right);
	if (rw < x + w - at - 1)
		st_screen_text(s, x + w - rw - 1, y, right, st_app_style(app, ST_ROLE_STATUS), rw);
}

/* Column widths of the layer table for w columns. */
typedef struct table_layout {
	int mark, name, type, output, time, bar, spark;
} table_layout;

static int
clamp_int(int v, int lo, int hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

static table_layout
layer_table_layout(const st_report *rep, int w)
{
	int name = 4, type = 4, output = 6;
	bool samples = false;
	for (int i = 0; i < rep->n_layers; i++) {
		const st_report_layer *l = &rep->layers[i];
		name = l->name && st_text_width(l->name) > name ? st_text_width(l->name) : name;
		type = l->type && st_text_width(l->type) > type ? st_text_width(l->type) : type;
		output = l->output && st_text_width(l->output) > output ? st_text_width(l->output) : output;
		samples = samples || l->n_samples > 0;
	}
	table_layout t = { 2, clamp_int(name, 6, 24), clamp_int(type, 4, 16), clamp_int(output, 6, 18), 10, 0, 0 };
	/* Narrow screens lose the output column, then the type. */
	if (w - (t.mark + t.name + t.type + t.output + t.time + 5) < 10)
		t.output = 0;
	if (w - (t.mark + t.name + t.type + t.time + 4) < 10)
		t.type = 0;
	int rest = w - (t.mark + t.name + 1 + (t.type ? t.type + 1 : 0) + (t.output ? t.output + 1 : 0) + t.time + 1);
	if (samples && rest >= 20) {
		t.spark = rest / 3 > 24 ? 24 : rest / 3;
		rest -= t.spark + 1;
	}
	t.bar = rest > 0 ? rest : 0;
	return t;
}

static void
draw_layer_table(st_app *app, st_screen *s, st_rect r, st_report_view *v, const int *rows, int n)
{
	const st_report *rep = &v->report;
	table_layout t = layer_table_layout(rep, r.w);
	const st_style *head = st_app_style(app, ST_ROLE_TITLE);
	/* The header, with the sort column marked. */
	const char *up = s->ascii ? "^" : "▲", *down = s->ascii ? "v" : "▼";
	struct {
		const char *label;
		int w;
		sort_key key;
	} cols[] = {
		{ "layer", t.name, SORT_NAME },   { "type", t.type, SORT_TYPE }, { "output", t.output, SORT_OUTPUT },
		{ v->relative ? "share" : "time", t.time, SORT_TIME },
	};
	int x = r.x + t.mark;
	for (size_t c = 0; c < sizeof cols / sizeof cols[0]; c++) {
		if (cols[c].w == 0)
			continue;
		char label[48];
		snprintf(label, sizeof label, "%s%s%s", cols[c].label, v->sort == cols[c].key ? " " : "",
		         v->sort == cols[c].key ? (descending(v) ? down : up) : "");
		/* Numbers are right-aligned, and so is their heading. */
		int lw = st_text_width(label);
		int lx = cols[c].key == SORT_TIME && lw < cols[c].w ? x + cols[c].w - lw : x;
		st_screen_text_fit(s, lx, r.y, label, head, cols[c].w);
		x += cols[c].w + 1;
	}
	if (t.spark > 0)
		st_screen_text_fit(s, x + t.bar + 1, r.y, "per run", head, t.spark);

	int body = r.h - 1;
	v->page = body > 1 ? body : 1;
	int at = -1;
	for (int i = 0; i < n; i++)
		at = rows[i] == v->selected ? i : at;
	/* The selection stays in view (where the filter shows it). */
	st_scroll_keep(&v->top, at >= 0 ? at : v->top, body, n);
	double largest = 0;
	for (int i = 0; i < rep->n_layers; i++)
		largest = rep->layers[i].share > largest ? rep->layers[i].share : largest;
	for (int k = 0; k < body && v->top + k < n; k++) {
		int i = rows[v->top + k], y = r.y + 1 + k;
		const st_report_layer *l = &rep->layers[i];
		bool sel = i == v->selected;
		int b = baseline_of(v, i);
		const st_style *text = st_app_style(app, sel ? ST_ROLE_SELECTED : ST_ROLE_TEXT);
		if (sel)
			st_screen_fill(s, (st_rect){ r.x, y, r.w, 1 }, " ", text);
		if (b >= 0) {
			char tag[2] = { (char)('1' + b), '\0' };
			st_screen_text(s, r.x, y, tag, st_app_style(app, (st_role)(ST_ROLE_SERIES_1 + b)), 1);
		}
		x = r.x + t.mark;
		st_screen_text_fit(s, x, y, l->name ? l->name : "", text, t.name);
		x += t.name + 1;
		if (t.type) {
			st_screen_text_fit(s, x, y, l->type ? l->type : "", text, t.type);
			x += t.type + 1;
		}
		if (t.output) {
			st_screen_text_fit(s, x, y, l->output ? l->output : "", text, t.output);
			x += t.output + 1;
		}
		char time[32];
		if (v->relative)
			snprintf(time, sizeof time, "%.1f%%", 100 * l->share);
		else
			snprintf(time, sizeof time, "%.3f ms", l->time.mean);
		int tw = st_text_width(time);
		st_screen_text(s, x + t.time - tw, y, time, text, t.time);
		x += t.time + 1;
		const st_style *bar = st_app_style(app, b >= 0 ? (st_role)(ST_ROLE_SERIES_1 + b) : ST_ROLE_BAR);
		if (t.bar > 0 && largest > 0)
			draw_bar(s, x, y, t.bar, l->share / largest, bar);
		if (t.spark > 0)
			draw_sparkline(s, x + t.bar + 1, y, t.spark, l->samples, l->n_samples, bar);
	}
	if (n == 0)
		st_screen_text_fit(s, r.x + 2, r.y + 1, "No layer matches the filter.", st_app_style(app, ST_ROLE_DIM),
		                   r.w - 2);
}

static void
draw_memory_table(st_app *app, st_screen *s, st_rect r, st_report_view *v, const int *rows, int n)
{
	const st_report *rep = &v->report;
	table_layout t = layer_table_layout(rep, r.w);
	const st_style *head = st_app_style(app, ST_ROLE_TITLE);
	static const char *const labels[] = { "allocated", "freed", "live", "persistent" };
	int num = 11;
	int x = r.x + t.mark;
	st_screen_text_fit(s, x, r.y, "layer", head, t.name);
	x += t.name + 1;
	for (int c = 0; c < 4; c++, x += num + 1)
		st_screen_text(s, x + num - st_text_width(labels[c]), r.y, labels[c], head, num);
	int bar_w = r.x + r.w - x - 1;
	if (bar_w > 4)
		st_screen_text_fit(s, x, r.y, "live", head, bar_w);
	int64_t largest = 0;
	for (int i = 0; i < rep->n_layers; i++)
		largest = rep->layers[i].mem_live > largest ? rep->layers[i].mem_live : largest;
	int body = r.h - 1;
	v->page = body > 1 ? body : 1;
	int at = -1;
	for (int i = 0; i < n; i++)
		at = rows[i] == v->selected ? i : at;
	/* The selection stays in view (where the filter shows it). */
	st_scroll_keep(&v->top, at >= 0 ? at : v->top, body, n);
	for (int k = 0; k < body && v->top + k < n; k++) {
		int i = rows[v->top + k], y = r.y + 1 + k;
		const st_report_layer *l = &rep->layers[i];
		bool sel = i == v->selected;
		const st_style *text = st_app_style(app, sel ? ST_ROLE_SELECTED : ST_ROLE_TEXT);
		if (sel)
			st_screen_fill(s, (st_rect){ r.x, y, r.w, 1 }, " ", text);
		x = r.x + t.mark;
		st_screen_text_fit(s, x, y, l->name ? l->name : "", text, t.name);
		x += t.name + 1;
		int64_t values[4] = { l->mem_allocated, l->mem_freed, l->mem_live, l->mem_persistent };
		for (int c = 0; c < 4; c++, x += num + 1) {
			char b[32];
			format_bytes((double)values[c], b, sizeof b);
			st_screen_text(s, x + num - st_text_width(b), y, b, text, num);
		}
		if (bar_w > 4 && largest > 0)
			draw_bar(s, x, y, bar_w, (double)l->mem_live / (double)largest, st_app_style(app, ST_ROLE_BAR));
	}
}

static void
draw_report_metrics(st_app *app, st_screen *s, st_rect r, st_report_view *v)
{
	const st_report *rep = &v->report;
	if (v->selected < 0)
		return;
	series sv[MAX_BASELINES + 1];
	int n = 0;
	sv[n++] = (series){ &rep->layers[v->selected], ST_ROLE_BAR, ' ' };
	for (int b = 0; b < v->n_baselines; b++)
		sv[n++] = (series){ &rep->layers[v->baselines[b]], (st_role)(ST_ROLE_SERIES_1 + b), (char)('1' + b) };
	/* The legend: which tag and colour is which layer. */
	const st_report_layer *l = sv[0].layer;
	int x = r.x + 1;
	char head[256];
	snprintf(head, sizeof head, "%s %s %s %s %s", l->name ? l->name : "", st_glyph_text(s, ST_G_DOT),
	         l->type ? l->type : "", st_glyph_text(s, ST_G_DOT), l->output ? l->output : "");
	x += st_screen_text_fit(s, x, r.y, head, st_app_style(app, ST_ROLE_BAR), r.w - 2) + 2;
	for (int b = 0; b < v->n_baselines && x < r.x + r.w; b++) {
		char tag[160];
		snprintf(tag, sizeof tag, "%d %s", b + 1, rep->layers[v->baselines[b]].name);
		x += st_screen_text_fit(s, x, r.y, tag, st_app_style(app, (st_role)(ST_ROLE_SERIES_1 + b)),
		                        r.x + r.w - x) + 2;
	}
	if (v->n_baselines == 0)
		st_screen_text_fit(s, x, r.y, "(b marks baselines to compare with)", st_app_style(app, ST_ROLE_DIM),
		                   r.x + r.w - x);
	if (l->n_samples > 0 && r.h > 2) {
		st_screen_text(s, r.x + 1, r.y + 1, "per run ", st_app_style(app, ST_ROLE_DIM), -1);
		draw_sparkline(s, r.x + 9, r.y + 1, r.w - 10, l->samples, l->n_samples, st_app_style(app, ST_ROLE_BAR));
	}
	int skip = l->n_samples > 0 ? 3 : 2;
	draw_charts(app, s, (st_rect){ r.x + 1, r.y + skip, r.w - 1, r.h - skip }, sv, n, &v->chart_top);
	if (rep->counters_note != NULL && r.h > skip + 2) {
		char note[320];
		snprintf(note, sizeof note, "counters: %s", rep->counters_note);
		st_screen_text_fit(s, r.x + 1, r.y + r.h - 1, note, st_app_style(app, ST_ROLE_DIM), r.w - 2);
	}
}

static void
draw_report(st_app *app, st_screen *s, st_rect r)
{
	st_report_view *v = app->report;
	const st_report *rep = &v->report;
	int used = draw_summary(app, s, r, rep, v->path);
	char right[160];
	snprintf(right, sizeof right, "sort %s%s %s %s %s %d baseline%s ", sort_names[v->sort],
	         v->reversed ? " (reversed)" : "", st_glyph_text(s, ST_G_DOT), v->relative ? "relative" : "absolute",
	         st_glyph_text(s, ST_G_DOT), v->n_baselines, v->n_baselines == 1 ? "" : "s");
	draw_tabs(app, s, r.x, r.y + used, r.w, v->tab, N_TABS, tab_names, right);
	used++;
	bool filter_line = v->typing || v->filter.text[0];
	st_rect body = { r.x, r.y + used, r.w, r.h - used - (filter_line ? 1 : 0) };
	if (filter_line) {
		int y = r.y + r.h - 1;
		int x = st_screen_text(s, r.x, y, "/", st_app_style(app, ST_ROLE_HINT_KEY), -1);
		st_field_draw(&v->filter, s, r.x + x, y, r.w - x, st_app_style(app, v->typing ? ST_ROLE_INPUT : ST_ROLE_TEXT),
		              st_app_style(app, ST_ROLE_CURSOR), v->typing);
	}
	if (rep->n_layers == 0) {
		st_screen_text_fit(s, r.x + 2, body.y + 1,
		                   "This report has no layer table: strata run --profile MODEL measures each layer.",
		                   st_app_style(app, ST_ROLE_DIM), r.w - 4);
		return;
	}
	int n;
	int *rows = shown_rows(v, &n);
	/* A selection the filter hides moves to the first row shown. */
	bool visible = false;
	for (int i = 0; i < n; i++)
		visible = visible || rows[i] == v->selected;
	if (!visible && n > 0)
		v->selected = rows[0];
	st_rect old = st_screen_set_clip(s, body);
	if (v->tab == TAB_LAYERS)
		draw_layer_table(app, s, body, v, rows, n);
	else if (v->tab == TAB_MEMORY)
		draw_memory_table(app, s, body, v, rows, n);
	else
		draw_report_metrics(app, s, body, v);
	st_screen_set_clip(s, old);
	free(rows);
}

/* ---- drawing the comparison ---- */

static st_role
report_role(int j)
{
	return (st_role)(ST_ROLE_SERIES_1 + j % MAX_COMPARED);
}

/* The difference of b against a as "+0.120 +15.0%" (or without the
 * percentage when a is 0). */
static void
difference_text(double a, double b, char *buf, size_t size)
{
	if (a > 0)
		snprintf(buf, size, "%+.3f %+.1f%%", b - a, (b - a) / a * 100);
	else
		snprintf(buf, size, "%+.3f", b - a);
}

typedef struct cmp_ref {
	int row;
	double key;
	const char *name;
	int sort;
} cmp_ref;

static int
compare_cmp_refs(const void *pa, const void *pb)
{
	const cmp_ref *a = pa, *b = pb;
	int c = 0;
	if (a->sort == CMP_SORT_DIFFERENCE)
		c = (a->key < b->key) - (a->key > b->key); /* the largest change first */
	else if (a->sort == CMP_SORT_NAME)
		c = strcmp(a->name, b->name);
	return c != 0 ? c : (a->row > b->row) - (a->row < b->row);
}

/* The rows in the order shown; caller frees. */
static int *
compare_rows_shown(const st_compare_view *c)
{
	cmp_ref *refs = st_xcalloc((size_t)c->n_rows + 1, sizeof *refs);
	for (int r = 0; r < c->n_rows; r++) {
		const st_report_layer *l = row_layer(c, r), *base = match_layer(c, r, c->base);
		/* The difference: the largest change of any report against the base. */
		double key = 0;
		for (int j = 0; j < c->n; j++) {
			const st_report_layer *o = match_layer(c, r, j);
			if (base != NULL && o != NULL) {
				double d = o->time.mean - base->time.mean;
				key = (d < 0 ? -d : d) > key ? (d < 0 ? -d : d) : key;
			}
		}
		refs[r] = (cmp_ref){ r, key, l && l->name ? l->name : "", c->sort };
	}
	st_sort(refs, (size_t)c->n_rows, sizeof *refs, compare_cmp_refs);
	int *rows = st_xcalloc((size_t)c->n_rows + 1, sizeof *rows);
	for (int r = 0; r < c->n_rows; r++)
		rows[r] = refs[r].row;
	free(refs);
	return rows;
}

static void
draw_compare_summary(st_app *app, st_screen *s, st_rect r, const st_compare_view *c)
{
	const st_report *base = &c->reports[c->base];
	const char *dot = st_glyph_text(s, ST_G_DOT);
	for (int j = 0; j < c->n && j < r.h; j++) {
		const st_report *rep = &c->reports[j];
		char diff[64] = "base";
		double d = rep->latency.mean - base->latency.mean;
		if (j != c->base && base->latency.mean > 0)
			snprintf(diff, sizeof diff, "%+.3f ms (%+.1f%%)", d, d / base->latency.mean * 100);
		else if (j != c->base)
			snprintf(diff, sizeof diff, "%+.3f ms", d);
		char line[640];
		snprintf(line, sizeof line, "%d %s %s %s %s %s %s average %.3f ms %s %s", j + 1, base_name(c->paths[j]),
		         dot, rep->network ? rep->network : "?", dot, rep->format ? rep->format : "?", dot,
		         rep->latency.mean, dot, diff);
		st_screen_text_fit(s, r.x + 1, r.y + j, line, st_app_style(app, report_role(j)), r.w - 2);
	}
}

static void
draw_compare_table(st_app *app, st_screen *s, st_rect r, st_compare_view *c)
{
	int name_w = 6, type_w = 4;
	for (int row = 0; row < c->n_rows; row++) {
		const st_report_layer *l = row_layer(c, row);
		name_w = l->name && st_text_width(l->name) > name_w ? st_text_width(l->name) : name_w;
		type_w = l->type && st_text_width(l->type) > type_w ? st_text_width(l->type) : type_w;
	}
	name_w = clamp_int(name_w, 6, 22);
	type_w = clamp_int(type_w, 4, 14);
	const int base_w = 10, other_w = 26;
	const st_style *head = st_app_style(app, ST_ROLE_TITLE);
	st_screen_text_fit(s, r.x + 1, r.y, "layer", head, name_w);
	st_screen_text_fit(s, r.x + 2 + name_w, r.y, "type", head, type_w);
	int x0 = r.x + 3 + name_w + type_w;
	int x = x0;
	int order[MAX_COMPARED];
	order[0] = c->base;
	for (int j = 0, k = 1; j < c->n; j++) {
		if (j != c->base)
			order[k++] = j;
	}
	for (int k = 0; k < c->n; k++) {
		int j = order[k], w = k == 0 ? base_w : other_w;
		char label[96];
		snprintf(label, sizeof label, "%d %s", j + 1, k == 0 ? "base ms" : "ms, difference");
		st_screen_text_fit(s, x, r.y, label, st_app_style(app, report_role(j)), w);
		x += w + 1;
	}
	int body = r.h - 1;
	int *rows = compare_rows_shown(c);
	int at = 0;
	for (int i = 0; i < c->n_rows; i++)
		at = rows[i] == c->selected ? i : at;
	st_scroll_keep(&c->top, at, body, c->n_rows);
	for (int k = 0; k < body && c->top + k < c->n_rows; k++) {
		int row = rows[c->top + k], y = r.y + 1 + k;
		const st_report_layer *l = row_layer(c, row), *base = match_layer(c, row, c->base);
		bool sel = row == c->selected;
		const st_style *text = st_app_style(app, sel ? ST_ROLE_SELECTED : ST_ROLE_TEXT);
		if (sel)
			st_screen_fill(s, (st_rect){ r.x, y, r.w, 1 }, " ", text);
		st_screen_text_fit(s, r.x + 1, y, l->name ? l->name : "", text, name_w);
		st_screen_text_fit(s, r.x + 2 + name_w, y, l->type ? l->type : "", text, type_w);
		x = x0;
		for (int o = 0; o < c->n; o++) {
			int j = order[o], w = o == 0 ? base_w : other_w;
			const st_report_layer *m = match_layer(c, row, j);
			char cell[64];
			if (m == NULL)
				snprintf(cell, sizeof cell, "%s", "absent");
			else if (o == 0 || base == NULL)
				snprintf(cell, sizeof cell, "%.3f", m->time.mean);
			else {
				char d[48];
				difference_text(base->time.mean, m->time.mean, d, sizeof d);
				snprintf(cell, sizeof cell, "%.3f %s", m->time.mean, d);
			}
			st_screen_text_fit(s, x, y, cell, m == NULL ? st_app_style(app, ST_ROLE_DIM) : text, w);
			x += w + 1;
		}
	}
	free(rows);
}

static void
draw_compare(st_app *app, st_screen *s, st_rect r)
{
	st_compare_view *c = app->compare;
	draw_compare_summary(app, s, (st_rect){ r.x, r.y, r.w, c->n }, c);
	int y = r.y + c->n;
	char right[96];
	snprintf(right, sizeof right, "base %d %s sort %s ", c->base + 1, st_glyph_text(s, ST_G_DOT),
	         compare_sort_names[c->sort]);
	static const char *const names[] = { "Layers", "Metrics" };
	draw_tabs(app, s, r.x, y, r.w, c->tab, 2, names, right);
	st_rect body = { r.x, y + 1, r.w, r.y + r.h - y - 1 };
	c->page = body.h > 2 ? body.h - 1 : 1;
	if (c->n_rows == 0) {
		st_screen_text_fit(s, r.x + 2, body.y + 1, "These reports have no layer tables (strata run --profile).",
		                   st_app_style(app, ST_ROLE_DIM), r.w - 4);
		return;
	}
	st_rect old = st_screen_set_clip(s, body);
	if (c->tab == TAB_LAYERS) {
		draw_compare_table(app, s, body, c);
	} else {
		series sv[MAX_COMPARED];
		for (int j = 0; j < c->n; j++)
			sv[j] = (series){ match_layer(c, c->selected, j), report_role(j), (char)('1' + j) };
		const st_report_layer *l = row_layer(c, c->selected);
		char head[256];
		snprintf(head, sizeof head, "%s %s %s", l->name ? l->name : "", st_glyph_text(s, ST_G_DOT),
		         l->type ? l->type : "");
		st_screen_text_fit(s, body.x + 1, body.y, head, st_app_style(app, ST_ROLE_TITLE), body.w - 2);
		draw_charts(app, s, (st_rect){ body.x + 1, body.y + 2, body.w - 1, body.h - 2 }, sv, c->n, &c->chart_top);
	}
	st_screen_set_clip(s, old);
}

void
st_view_draw(st_app *app, st_screen *s, st_rect r)
{
	st_screen_fill(s, r, " ", st_app_style(app, ST_ROLE_TEXT));
	if (app->view == ST_VIEW_REPORT && app->report != NULL)
		draw_report(app, s, r);
	else if (app->view == ST_VIEW_COMPARE && app->compare != NULL)
		draw_compare(app, s, r);
}

/* ---- keys ---- */

static const char *const report_hints[] = { "report.sort", "report.relative", "report.filter", "report.baseline",
	                                    "report.clear", "report.next_tab", "report.compare", "report.heat",
	                                    "report.close", "global.command", "global.help", NULL };
static const char *const compare_hints[] = { "compare.base", "compare.add", "compare.sort", "compare.next_tab",
	                                     "compare.close", "global.command", "global.help", NULL };

const char *const *
st_view_hints(const st_app *app)
{
	return app->view == ST_VIEW_COMPARE ? compare_hints : report_hints;
}

/* Moves the selection by delta rows of the table as shown. */
static void
report_move(st_report_view *v, int delta, bool to_end)
{
	int n;
	int *rows = shown_rows(v, &n);
	int at = 0;
	for (int i = 0; i < n; i++)
		at = rows[i] == v->selected ? i : at;
	at = to_end ? (delta < 0 ? 0 : n - 1) : at + delta;
	at = at < 0 ? 0 : at >= n ? n - 1 : at;
	if (n > 0)
		v->selected = rows[at];
	free(rows);
}

static void
report_toggle_baseline(st_app *app, st_report_view *v)
{
	if (v->selected < 0)
		return;
	int b = baseline_of(v, v->selected);
	const char *name = v->report.layers[v->selected].name;
	if (b >= 0) {
		memmove(&v->baselines[b], &v->baselines[b + 1], (size_t)(v->n_baselines - b - 1) * sizeof v->baselines[0]);
		v->n_baselines--;
		st_app_message(app, ST_SEVERITY_INFO, "%s is no longer a baseline", name);
	} else if (v->n_baselines == MAX_BASELINES) {
		st_app_message(app, ST_SEVERITY_WARNING, "%d baselines at most: b on one unmarks it, B clears them",
		               MAX_BASELINES);
	} else {
		v->baselines[v->n_baselines++] = v->selected;
		st_app_message(app, ST_SEVERITY_INFO, "baseline %d: %s", v->n_baselines, name);
	}
}

/* The pick list of other reports: the chosen one joins a comparison. */
static void
compare_with_chosen(st_app *app, const char *choice, void *arg)
{
	(void)arg;
	if (app->report == NULL || app->report->path == NULL)
		return;
	const char *here = app->report->path;
	const char *slash = strrchr(here, '/');
	char *other = slash ? st_xasprintf("%.*s/%s", (int)(slash - here), here, choice) : st_xstrdup(choice);
	char *paths[2] = { app->report->path, other };
	st_compare_open(app, 2, paths);
	free(other);
}

static void
compare_with_typed(st_app *app, const char *text, void *arg)
{
	(void)arg;
	if (app->report == NULL || app->report->path == NULL || text[0] == '\0')
		return;
	char *paths[2] = { app->report->path, (char *)text };
	st_compare_open(app, 2, paths);
}

/* c in the report view: the other reports of its folder to choose from,
 * or a prompt for a file when it has none. */
static void
report_compare(st_app *app, st_report_view *v)
{
	if (v->path == NULL) {
		st_app_message(app, ST_SEVERITY_ERROR, "this report has no file to compare from; :compare FILE FILE");
		return;
	}
	const char *slash = strrchr(v->path, '/');
	char *dir = slash ? st_xstrndup(v->path, (size_t)(slash - v->path)) : st_xstrdup(".");
	int n;
	char **names = list_reports(dir, &n);
	const char **others = st_xcalloc((size_t)n + 1, sizeof *others);
	int k = 0;
	for (int i = n - 1; i >= 0; i--) {
		if (strcmp(names[i], base_name(v->path)) != 0)
			others[k++] = names[i];
	}
	if (k > 0) {
		st_app_pick(app, "Compare with (newest first)", others, k, 0, compare_with_chosen, NULL);
	} else {
		char *initial = st_xasprintf("%s/", dir);
		st_app_prompt(app, "Compare with the report:", initial, compare_with_typed, NULL);
		free(initial);
	}
	free(others);
	free_names(names, n);
	free(dir);
}

static bool
report_key(st_app *app, const st_key *k)
{
	st_report_view *v = app->report;
	if (v->typing) {
		if (k->kind == ST_KEY_KEY && strcmp(k->name, "<Enter>") == 0) {
			v->typing = false;
		} else if (k->kind == ST_KEY_KEY && strcmp(k->name, "<Esc>") == 0) {
			v->typing = false;
			st_field_set(&v->filter, "");
		} else {
			st_field_key(&v->filter, k);
		}
		return true;
	}
	if (k->kind == ST_KEY_WHEEL_UP || k->kind == ST_KEY_WHEEL_DOWN) {
		report_move(v, k->kind == ST_KEY_WHEEL_UP ? -1 : 1, false);
		return true;
	}
	if (k->kind != ST_KEY_KEY)
		return false;
	int a = st_keymap_lookup(&app->keymap, k->name, "report.");
	if (a < 0)
		return false;
	const char *n = app->keymap.actions[a].name + strlen("report.");
	if (strcmp(n, "up") == 0 || strcmp(n, "down") == 0) {
		report_move(v, n[0] == 'u' ? -1 : 1, false);
	} else if (strcmp(n, "page_up") == 0 || strcmp(n, "page_down") == 0) {
		int delta = n[5] == 'u' ? -v->page : v->page;
		if (v->tab == TAB_METRICS)
			v->chart_top += delta;
		else
			report_move(v, delta, false);
	} else if (strcmp(n, "first") == 0 || strcmp(n, "last") == 0) {
		report_move(v, n[0] == 'f' ? -1 : 1, true);
	} else if (strcmp(n, "next_tab") == 0) {
		v->tab = (v->tab + 1) % N_TABS;
	} else if (strcmp(n, "previous_tab") == 0) {
		v->tab = (v->tab + N_TABS - 1) % N_TABS;
	} else if (strcmp(n, "layers") == 0) {
		v->tab = TAB_LAYERS;
	} else if (strcmp(n, "metrics") == 0) {
		v->tab = TAB_METRICS;
	} else if (strcmp(n, "memory") == 0) {
		v->tab = TAB_MEMORY;
	} else if (strcmp(n, "sort") == 0) {
		v->sort = (v->sort + 1) % N_SORTS;
		v->reversed = false;
	} else if (strcmp(n, "reverse") == 0) {
		v->reversed = !v->reversed;
	} else if (strcmp(n, "relative") == 0) {
		v->relative = !v->relative;
	} else if (strcmp(n, "filter") == 0) {
		v->typing = true;
		v->tab = v->tab == TAB_METRICS ? TAB_LAYERS : v->tab;
	} else if (strcmp(n, "baseline") == 0) {
		report_toggle_baseline(app, v);
	} else if (strcmp(n, "clear") == 0) {
		v->n_baselines = 0;
		st_app_message(app, ST_SEVERITY_INFO, "baselines cleared");
	} else if (strcmp(n, "compare") == 0) {
		report_compare(app, v);
	} else if (strcmp(n, "heat") == 0) {
		if (app->canvas.heat != NULL)
			app->view = ST_VIEW_EDIT; /* already on: show it */
		else
			st_heat_toggle(app);
	} else if (strcmp(n, "close") == 0) {
		app->view = ST_VIEW_EDIT;
	} else {
		return false;
	}
	return true;
}

static void
base_chosen(st_app *app, const char *choice, void *arg)
{
	(void)arg;
	st_compare_view *c = app->compare;
	if (c == NULL)
		return;
	int j = atoi(choice) - 1;
	if (j < 0 || j >= c->n)
		return;
	c->base = j;
	compare_match(c);
	st_app_message(app, ST_SEVERITY_INFO, "base: %s", c->paths[j]);
}

static void
compare_add_typed(st_app *app, const char *text, void *arg)
{
	(void)arg;
	st_compare_view *c = app->compare;
	if (c == NULL || text[0] == '\0')
		return;
	if (c->n >= MAX_COMPARED) {
		st_app_message(app, ST_SEVERITY_ERROR, "compare takes at most %d reports (one colour each)",
		               MAX_COMPARED);
		return;
	}
	st_report r;
	memset(&r, 0, sizeof r);
	if (load_report(app, text, &r) != 0)
		return;
	c->reports = st_xreallocarray(c->reports, (size_t)c->n + 1, sizeof *c->reports);
	c->paths = st_xreallocarray(c->paths, (size_t)c->n + 1, sizeof *c->paths);
	c->reports[c->n] = r;
	c->paths[c->n] = st_xstrdup(text);
	c->n++;
	compare_match(c);
	st_app_message(app, ST_SEVERITY_INFO, "added %s", text);
}

static bool
compare_key(st_app *app, const st_key *k)
{
	st_compare_view *c = app->compare;
	const char *n = NULL;
	if (k->kind == ST_KEY_WHEEL_UP || k->kind == ST_KEY_WHEEL_DOWN) {
		n = k->kind == ST_KEY_WHEEL_UP ? "up" : "down";
	} else if (k->kind == ST_KEY_KEY) {
		int a = st_keymap_lookup(&app->keymap, k->name, "compare.");
		n = a >= 0 ? app->keymap.actions[a].name + strlen("compare.") : NULL;
	}
	if (n == NULL)
		return false;
	int *rows = compare_rows_shown(c);
	int at = 0;
	for (int i = 0; i < c->n_rows; i++)
		at = rows[i] == c->selected ? i : at;
	bool used = true;
	if (strcmp(n, "up") == 0) {
		c->selected = at > 0 ? rows[at - 1] : c->selected;
	} else if (strcmp(n, "down") == 0) {
		c->selected = at + 1 < c->n_rows ? rows[at + 1] : c->selected;
	} else if (strcmp(n, "page_up") == 0 || strcmp(n, "page_down") == 0) {
		int delta = n[5] == 'u' ? -c->page : c->page;
		if (c->tab == TAB_METRICS)
			c->chart_top += delta;
		else if (c->n_rows > 0)
			c->selected = rows[clamp_int(at + delta, 0, c->n_rows - 1)];
	} else if (strcmp(n, "first") == 0 || strcmp(n, "last") == 0) {
		if (c->n_rows > 0)
			c->selected = rows[n[0] == 'f' ? 0 : c->n_rows - 1];
	} else if (strcmp(n, "next_tab") == 0) {
		c->tab = c->tab == TAB_LAYERS ? TAB_METRICS : TAB_LAYERS;
	} else if (strcmp(n, "layers") == 0) {
		c->tab = TAB_LAYERS;
	} else if (strcmp(n, "metrics") == 0) {
		c->tab = TAB_METRICS;
	} else if (strcmp(n, "sort") == 0) {
		c->sort = (c->sort + 1) % N_CMP_SORTS;
	} else if (strcmp(n, "base") == 0) {
		char **items = st_xcalloc((size_t)c->n, sizeof *items);
		for (int j = 0; j < c->n; j++)
			items[j] = st_xasprintf("%d %s", j + 1, c->paths[j]);
		st_app_pick(app, "Base report", (const char *const *)items, c->n, c->base, base_chosen, NULL);
		free_names(items, c->n);
	} else if (strcmp(n, "add") == 0) {
		const char *last = c->paths[c->n - 1];
		const char *slash = strrchr(last, '/');
		char *initial = slash ? st_xasprintf("%.*s/", (int)(slash - last), last) : st_xstrdup("");
		st_app_prompt(app, "Add the report:", initial, compare_add_typed, NULL);
		free(initial);
	} else if (strcmp(n, "close") == 0) {
		app->view = ST_VIEW_EDIT;
	} else {
		used = false;
	}
	free(rows);
	return used;
}

bool
st_view_key(st_app *app, const st_key *k)
{
	if (app->view == ST_VIEW_REPORT && app->report != NULL)
		return report_key(app, k);
	if (app->view == ST_VIEW_COMPARE && app->compare != NULL)
		return compare_key(app, k);
	/* A view without its state: back to editing. */
	app->view = ST_VIEW_EDIT;
	return false;
}
