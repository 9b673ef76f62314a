/* strata report html: the page itself, built as text from loaded reports. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report-html.h"

/* The first line of every page, and the tag that marks it as ours. */
#define PAGE_START "<!DOCTYPE html>\n"
#define GENERATOR_TAG "<meta name=\"generator\" content=\"strata report html"

/* Chart geometry, in CSS pixels. */
#define CHART_WIDTH 960
#define LABEL_WIDTH 230    /* the layer or type names left of the bars */
#define VALUE_WIDTH 90     /* the numbers right of the bars */
#define BAR_HEIGHT 12
#define ROW_GAP 6
#define PLOT_HEIGHT 220    /* line charts and histograms */
#define PLOT_LEFT 80       /* room for the y axis' labels */
#define LABEL_CHARS 34     /* longer names are cut, whole in the tooltip */
#define HISTOGRAM_BINS 24

/* One colour per report, the same in every chart and table; chosen to stay
 * apart for the common kinds of colour blindness. */
static const char *const palette[] = { "#2b6cb0", "#dd6b20", "#2f855a", "#b83280", "#6b46c1", "#975a16" };
#define N_PALETTE (int)(sizeof palette / sizeof palette[0])

const char *
cli_report_html_colour(int k)
{
	return palette[(k % N_PALETTE + N_PALETTE) % N_PALETTE];
}

bool
cli_report_html_is_ours(const char *text, size_t len)
{
	size_t start = strlen(PAGE_START), tag = strlen(GENERATOR_TAG);
	if (len < start || memcmp(text, PAGE_START, start) != 0)
		return false;
	/* The tag is in the head, well inside the first kilobyte. */
	size_t end = len < 1024 ? len : 1024;
	for (size_t i = start; i + tag <= end; i++) {
		if (memcmp(text + i, GENERATOR_TAG, tag) == 0)
			return true;
	}
	return false;
}

/* ---- text ---- */

/* Text for element content and quoted attributes: the five characters
 * that could end either are written as references. */
static void
put_text(st_buf *out, const char *s)
{
	for (const char *p = s ? s : ""; *p; p++) {
		switch (*p) {
		case '&': st_buf_puts(out, "&amp;"); break;
		case '<': st_buf_puts(out, "&lt;"); break;
		case '>': st_buf_puts(out, "&gt;"); break;
		case '"': st_buf_puts(out, "&quot;"); break;
		case '\'': st_buf_puts(out, "&#39;"); break;
		default: st_buf_putc(out, *p);
		}
	}
}

/* Like put_text, or "-" for a missing or empty string. */
static void
put_text_or_dash(st_buf *out, const char *s)
{
	put_text(out, s != NULL && *s ? s : "-");
}

/* At most max characters of s (counting UTF-8 sequences as one), with an
 * ellipsis when cut; for chart labels, which do not wrap. */
static void
put_short(st_buf *out, const char *s, int max)
{
	int chars = 0;
	const char *p = s ? s : "";
	for (; *p; p++) {
		if ((*p & 0xC0) != 0x80 && ++chars > max)
			break;
	}
	if (*p == '\0') {
		put_text(out, s);
		return;
	}
	char *cut = st_xstrndup(s, (size_t)(p - s));
	/* Leave room for the ellipsis: drop the last whole character. */
	size_t n = strlen(cut);
	while (n > 0 && (cut[n - 1] & 0xC0) == 0x80)
		n--;
	if (n > 0)
		n--;
	cut[n] = '\0';
	put_text(out, cut);
	st_buf_puts(out, "…");
	free(cut);
}

/* Numbers from a file may be anything; charts treat the strange ones as 0. */
static double
sane(double v)
{
	return isfinite(v) && v > 0 ? v : 0;
}

static void
put_ms(st_buf *out, double v)
{
	st_buf_printf(out, "%.3f", v);
}

static void
put_bytes(st_buf *out, double v)
{
	char b[32];
	cli_human_bytes(v, b, sizeof b);
	st_buf_puts(out, b);
}

/* A hardware counter, or n/a when it was not measured (-1), never a false 0. */
static void
put_counter(st_buf *out, double v)
{
	if (v >= 0)
		st_buf_printf(out, "%.0f", v);
	else
		st_buf_puts(out, "<span class=\"na\">n/a</span>");
}

/* The difference of value from base, in ms and percent. */
static void
put_difference(st_buf *out, double value, double base)
{
	double d = value - base;
	const char *cls = d > 0 ? "slower" : d < 0 ? "faster" : "same";
	st_buf_printf(out, "<td class=\"%s\">%+.3f</td><td class=\"%s\">", cls, d, cls);
	if (base > 0)
		st_buf_printf(out, "%+.1f%%", d / base * 100);
	st_buf_puts(out, "</td>");
}

/* The report's tag, its letter as in compare: A, B, ... */
static void
put_tag(st_buf *out, int k)
{
	if (k < 26)
		st_buf_printf(out, "%c", 'A' + k);
	else
		st_buf_printf(out, "%d", k + 1);
}

/* A coloured chip with the report's tag. */
static void
put_chip(st_buf *out, int k)
{
	st_buf_printf(out, "<span class=\"chip\" style=\"background:%s\">", cli_report_html_colour(k));
	put_tag(out, k);
	st_buf_puts(out, "</span>");
}

/* ---- charts ---- */

static void
svg_start(st_buf *out, const char *title, int height)
{
	st_buf_puts(out, "<h3>");
	put_text(out, title);
	st_buf_puts(out, "</h3>\n");
	st_buf_printf(out, "<figure><svg class=\"chart\" role=\"img\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">",
	              CHART_WIDTH, height, CHART_WIDTH, height);
	st_buf_puts(out, "<title>");
	put_text(out, title);
	st_buf_puts(out, "</title>");
}

static void
svg_end(st_buf *out, const char *caption)
{
	st_buf_puts(out, "</svg><figcaption>");
	put_text(out, caption);
	st_buf_puts(out, "</figcaption></figure>\n");
}

/* One horizontal bar of report k at row position y, scaled against max;
 * value_text follows it. */
static void
svg_bar(st_buf *out, int k, double y, double value, double max, const char *value_text)
{
	double span = CHART_WIDTH - LABEL_WIDTH - VALUE_WIDTH;
	double w = max > 0 ? sane(value) / max * span : 0;
	if (w > 0 && w < 1)
		w = 1; /* a sliver stays visible */
	st_buf_printf(out, "<rect x=\"%d\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" fill=\"%s\"/>", LABEL_WIDTH, y, w,
	              BAR_HEIGHT, cli_report_html_colour(k));
	st_buf_printf(out, "<text class=\"value\" x=\"%.1f\" y=\"%.1f\">", LABEL_WIDTH + w + 4, y + BAR_HEIGHT - 2);
	put_text(out, value_text);
	st_buf_puts(out, "</text>");
}

/* The label of a row of bars, cut to fit, whole in its tooltip. */
static void
svg_row_label(st_buf *out, double y, const char *name, const char *detail)
{
	st_buf_printf(out, "<text class=\"label\" x=\"%d\" y=\"%.1f\"><title>", LABEL_WIDTH - 6, y);
	put_text(out, name);
	if (detail != NULL) {
		st_buf_puts(out, " (");
		put_text(out, detail);
		st_buf_puts(out, ")");
	}
	st_buf_puts(out, "</title>");
	put_short(out, name, LABEL_CHARS);
	st_buf_puts(out, "</text>");
}

/* The base's slowest layers, each with a bar per report that has it. */
static void
chart_layer_times(st_buf *out, const st_report *reports, int n, int base, int top)
{
	const st_report *b = &reports[base];
	if (b->n_layers == 0)
		return;
	int *order = st_report_slowest(b);
	int rows = top < b->n_layers ? top : b->n_layers;
	double max = 0;
	for (int row = 0; row < rows; row++) {
		const st_report_layer *l = &b->layers[order[row]];
		for (int k = 0; k < n; k++) {
			const st_report_layer *x = st_report_find_layer(&reports[k], l->name, l->type);
			if (x != NULL && sane(x->time.mean) > max)
				max = sane(x->time.mean);
		}
	}
	int row_height = n * BAR_HEIGHT + ROW_GAP;
	char title[96];
	snprintf(title, sizeof title, "Time per layer: the %d slowest, in ms", rows);
	svg_start(out, title, rows * row_height + ROW_GAP);
	for (int row = 0; row < rows; row++) {
		const st_report_layer *l = &b->layers[order[row]];
		double y = ROW_GAP + row * row_height;
		svg_row_label(out, y + n * BAR_HEIGHT / 2.0 + 4, l->name, l->type);
		for (int k = 0; k < n; k++) {
			const st_report_layer *x = st_report_find_layer(&reports[k], l->name, l->type);
			if (x == NULL)
				continue;
			char text[64];
			snprintf(text, sizeof text, "%.3f ms", x->time.mean);
			svg_bar(out, k, y + k * BAR_HEIGHT, x->time.mean, max, text);
		}
	}
	svg_end(out, n > 1 ? "Mean time per iteration of the base's slowest layers, a bar for each report that has "
	                     "the layer (matched by name and type)."
	                   : "Mean time per iteration of the slowest layers.");
	free(order);
}

/* A layer type with its share of the time in each report. */
typedef struct type_row {
	const char *type;
	double *share; /* per report */
} type_row;

static int sorting_base;

/* The largest share in the base first; ties by name, so the order is fixed. */
static int
compare_type_rows(const void *a, const void *b)
{
	const type_row *x = a, *y = b;
	double sx = x->share[sorting_base], sy = y->share[sorting_base];
	if (sx != sy)
		return sx < sy ? 1 : -1;
	return strcmp(x->type, y->type);
}

static void
chart_type_shares(st_buf *out, const st_report *reports, int n, int base)
{
	int cap = 0;
	for (int k = 0; k < n; k++)
		cap += reports[k].n_layers;
	if (cap == 0)
		return;
	type_row *t = st_xcalloc((size_t)cap, sizeof *t);
	int n_types = 0;
	for (int step = 0; step < n; step++) {
		int k = step == 0 ? base : step <= base ? step - 1 : step;
		const st_report *r = &reports[k];
		double total = 0;
		for (int i = 0; i < r->n_layers; i++)
			total += sane(r->layers[i].time.mean);
		for (int i = 0; i < r->n_layers; i++) {
			int j = 0;
			while (j < n_types && strcmp(t[j].type, r->layers[i].type) != 0)
				j++;
			if (j == n_types) {
				t[j].type = r->layers[i].type;
				t[j].share = st_xcalloc((size_t)n, sizeof *t[j].share);
				n_types++;
			}
			if (total > 0)
				t[j].share[k] += sane(r->layers[i].time.mean) / total;
		}
	}
	sorting_base = base;
	qsort(t, (size_t)n_types, sizeof *t, compare_type_rows);
	double max = 0;
	for (int j = 0; j < n_types; j++) {
		for (int k = 0; k < n; k++)
			max = t[j].share[k] > max ? t[j].share[k] : max;
	}
	int row_height = n * BAR_HEIGHT + ROW_GAP;
	svg_start(out, "Share of the layer time by layer type", n_types * row_height + ROW_GAP);
	for (int j = 0; j < n_types; j++) {
		double y = ROW_GAP + j * row_height;
		svg_row_label(out, y + n * BAR_HEIGHT / 2.0 + 4, t[j].type, NULL);
		for (int k = 0; k < n; k++) {
			char text[32];
			snprintf(text, sizeof text, "%.1f%%", t[j].share[k] * 100);
			svg_bar(out, k, y + k * BAR_HEIGHT, t[j].share[k], max, text);
		}
	}
	svg_end(out, "Each type's summed mean time as a share of all layers' time, per report.");
	for (int j = 0; j < n_types; j++)
		free(t[j].share);
	free(t);
}

/* The y axis of a plot from 0 to max: three grid lines with labels. */
static void
svg_y_axis(st_buf *out, double max, bool bytes)
{
	for (int i = 0; i <= 2; i++) {
		double v = max * i / 2, y = 10 + PLOT_HEIGHT - PLOT_HEIGHT * i / 2.0;
		st_buf_printf(out, "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>", PLOT_LEFT, y,
		              CHART_WIDTH - 10, y);
		st_buf_printf(out, "<text class=\"label\" x=\"%d\" y=\"%.1f\">", PLOT_LEFT - 6, y + 4);
		if (bytes)
			put_bytes(out, v);
		else
			st_buf_printf(out, "%.3f ms", v);
		st_buf_puts(out, "</text>");
	}
}

/* A line through values[0..count-1], spread over the plot's width as if
 * there were count_max of them; with area, the region under it shaded. */
static void
svg_series(st_buf *out, int k, const double *values, int count, int count_max, double max, bool area)
{
	double span = CHART_WIDTH - 10 - PLOT_LEFT;
	double step = count_max > 1 ? span / (count_max - 1) : 0;
	st_buf points;
	st_buf_init(&points);
	for (int i = 0; i < count; i++) {
		double v = sane(values[i]);
		double x = PLOT_LEFT + (count_max > 1 ? step * i : span / 2);
		double y = 10 + PLOT_HEIGHT - (max > 0 ? v / max * PLOT_HEIGHT : 0);
		st_buf_printf(&points, "%s%.1f,%.1f", i ? " " : "", x, y);
	}
	const char *c = cli_report_html_colour(k);
	if (area && count > 0) {
		double x_last = PLOT_LEFT + (count_max > 1 ? step * (count - 1) : span / 2);
		double x_first = PLOT_LEFT + (count_max > 1 ? 0 : span / 2);
		st_buf_printf(out, "<polygon fill=\"%s\" fill-opacity=\"0.15\" points=\"%.1f,%d %s %.1f,%d\"/>", c, x_first,
		              10 + PLOT_HEIGHT, points.data, x_last, 10 + PLOT_HEIGHT);
	}
	if (count > 0)
		st_buf_printf(out, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"%s\"/>", c,
		              points.data);
	st_buf_free(&points);
}

/* Activation memory live after each layer, a line per report. */
static void
chart_memory(st_buf *out, const st_report *reports, int n)
{
	int count_max = 0;
	double max = 0;
	for (int k = 0; k < n; k++) {
		const st_report *r = &reports[k];
		count_max = r->n_layers > count_max ? r->n_layers : count_max;
		for (int i = 0; i < r->n_layers; i++)
			max = sane((double)r->layers[i].mem_live) > max ? sane((double)r->layers[i].mem_live) : max;
	}
	if (count_max == 0)
		return;
	svg_start(out, "Activation memory live after each layer", PLOT_HEIGHT + 40);
	svg_y_axis(out, max, true);
	for (int k = 0; k < n; k++) {
		const st_report *r = &reports[k];
		/* The series takes doubles; memory is counted in whole bytes. */
		double *live = st_xcalloc((size_t)(r->n_layers ? r->n_layers : 1), sizeof *live);
		for (int i = 0; i < r->n_layers; i++)
			live[i] = (double)r->layers[i].mem_live;
		if (r->n_layers > 1)
			svg_series(out, k, live, r->n_layers, count_max, max, true);
		free(live);
	}
	st_buf_printf(out, "<text class=\"axis\" x=\"%d\" y=\"%d\">layer 1</text>", PLOT_LEFT, PLOT_HEIGHT + 30);
	st_buf_printf(out, "<text class=\"axis end\" x=\"%d\" y=\"%d\">layer %d</text>", CHART_WIDTH - 10,
	              PLOT_HEIGHT + 30, count_max);
	svg_end(out, "Bytes of activation memory in use after each layer, in execution order.");
}

/* Latency of each timed iteration in run order, when the reports kept them. */
static void
chart_latency_runs(st_buf *out, const st_report *reports, int n)
{
	int count_max = 0;
	double max = 0;
	for (int k = 0; k < n; k++) {
		const st_report *r = &reports[k];
		if (r->latency_samples == NULL)
			continue;
		count_max = r->n_latency_samples > count_max ? r->n_latency_samples : count_max;
		for (int i = 0; i < r->n_latency_samples; i++)
			max = sane(r->latency_samples[i]) > max ? sane(r->latency_samples[i]) : max;
	}
	if (count_max < 2)
		return;
	svg_start(out, "Latency of each timed iteration", PLOT_HEIGHT + 40);
	svg_y_axis(out, max, false);
	for (int k = 0; k < n; k++) {
		const st_report *r = &reports[k];
		if (r->latency_samples != NULL && r->n_latency_samples > 1)
			svg_series(out, k, r->latency_samples, r->n_latency_samples, count_max, max, false);
	}
	st_buf_printf(out, "<text class=\"axis\" x=\"%d\" y=\"%d\">iteration 1</text>", PLOT_LEFT, PLOT_HEIGHT + 30);
	st_buf_printf(out, "<text class=\"axis end\" x=\"%d\" y=\"%d\">iteration %d</text>", CHART_WIDTH - 10,
	              PLOT_HEIGHT + 30, count_max);
	svg_end(out, "Milliseconds per inference of the timed (unprofiled) run, in run order: warm-up effects "
	             "and outliers show here.");
}

/* How the latencies spread: a histogram, the reports' bars side by side. */
static void
chart_latency_histogram(st_buf *out, const st_report *reports, int n)
{
	double lo = INFINITY, hi = -INFINITY;
	for (int k = 0; k < n; k++) {
		const st_report *r = &reports[k];
		for (int i = 0; r->latency_samples != NULL && i < r->n_latency_samples; i++) {
			double v = r->latency_samples[i];
			if (!isfinite(v))
				continue;
			lo = v < lo ? v : lo;
			hi = v > hi ? v : hi;
		}
	}
	if (!(lo <= hi))
		return;
	if (hi - lo < 1e-9)
		hi = lo + 1e-3; /* all the same: one bar */
	int *counts = st_xcalloc((size_t)(n * HISTOGRAM_BINS), sizeof *counts);
	int max = 0;
	for (int k = 0; k < n; k++) {
		const st_report *r = &reports[k];
		for (int i = 0; r->latency_samples != NULL && i < r->n_latency_samples; i++) {
			double v = r->latency_samples[i];
			if (!isfinite(v))
				continue;
			int bin = (int)((v - lo) / (hi - lo) * HISTOGRAM_BINS);
			bin = bin >= HISTOGRAM_BINS ? HISTOGRAM_BINS - 1 : bin < 0 ? 0 : bin;
			int *c = &counts[k * HISTOGRAM_BINS + bin];
			if (++*c > max)
				max = *c;
		}
	}
	svg_start(out, "Latency histogram", PLOT_HEIGHT + 40);
	for (int i = 0; i <= 2; i++) {
		double y = 10 + PLOT_HEIGHT - PLOT_HEIGHT * i / 2.0;
		st_buf_printf(out, "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>", PLOT_LEFT, y,
		              CHART_WIDTH - 10, y);
		st_buf_printf(out, "<text class=\"label\" x=\"%d\" y=\"%.1f\">%.0f runs</text>", PLOT_LEFT - 6, y + 4,
		              max * i / 2.0);
	}
	double bin_width = (CHART_WIDTH - 10 - PLOT_LEFT) / (double)HISTOGRAM_BINS;
	double bar = (bin_width - 2) / n;
	for (int b = 0; b < HISTOGRAM_BINS; b++) {
		for (int k = 0; k < n; k++) {
			int c = counts[k * HISTOGRAM_BINS + b];
			if (c == 0)
				continue;
			double h = (double)c / max * PLOT_HEIGHT;
			st_buf_printf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\">",
			              PLOT_LEFT + b * bin_width + 1 + k * bar, 10 + PLOT_HEIGHT - h, bar, h,
			              cli_report_html_colour(k));
			st_buf_printf(out, "<title>%d runs from %.3f ms</title></rect>", c, lo + (hi - lo) * b / HISTOGRAM_BINS);
		}
	}
	st_buf_printf(out, "<text class=\"axis\" x=\"%d\" y=\"%d\">%.3f ms</text>", PLOT_LEFT, PLOT_HEIGHT + 30, lo);
	st_buf_printf(out, "<text class=\"axis end\" x=\"%d\" y=\"%d\">%.3f ms</text>", CHART_WIDTH - 10,
	              PLOT_HEIGHT + 30, hi);
	svg_end(out, "How many timed iterations took how long.");
	free(counts);
}

/* A small line of one layer's per-iteration times, for its table row. */
static void
sparkline(st_buf *out, int k, const double *samples, int count)
{
	if (samples == NULL || count < 2) {
		st_buf_puts(out, "<td></td>");
		return;
	}
	double lo = INFINITY, hi = -INFINITY;
	for (int i = 0; i < count; i++) {
		lo = sane(samples[i]) < lo ? sane(samples[i]) : lo;
		hi = sane(samples[i]) > hi ? sane(samples[i]) : hi;
	}
	st_buf_printf(out, "<td><svg class=\"spark\" width=\"100\" height=\"18\" viewBox=\"0 0 100 18\">"
	                   "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.2\" points=\"",
	              cli_report_html_colour(k));
	for (int i = 0; i < count; i++) {
		double y = hi > lo ? 16 - (sane(samples[i]) - lo) / (hi - lo) * 14 : 9;
		st_buf_printf(out, "%s%.1f,%.1f", i ? " " : "", 1 + 98.0 * i / (count - 1), y);
	}
	st_buf_puts(out, "\"/></svg></td>");
}

/* ---- tables ---- */

/* The network summary, a column per report. */
static void
table_summary(st_buf *out, const st_report *reports, const char *const *labels, int n)
{
	st_buf_puts(out, "<table class=\"summary\"><thead><tr><th></th>");
	for (int k = 0; k < n; k++) {
		st_buf_puts(out, "<th>");
		put_chip(out, k);
		st_buf_puts(out, " ");
		put_text(out, labels[k]);
		st_buf_puts(out, "</th>");
	}
	st_buf_puts(out, "</tr></thead><tbody>\n");
	static const char *const text_rows[] = { "model", "network", "version", "date", "backend", "device", "format",
	                                         "strata" };
	for (int row = 0; row < 8; row++) {
		st_buf_printf(out, "<tr><th>%s</th>", text_rows[row]);
		for (int k = 0; k < n; k++) {
			const st_report *r = &reports[k];
			const char *v[] = { r->model, r->network, r->network_version, r->date, r->backend, r->device, r->format,
				            r->strata_version };
			st_buf_puts(out, "<td>");
			put_text_or_dash(out, v[row]);
			st_buf_puts(out, "</td>");
		}
		st_buf_puts(out, "</tr>\n");
	}
	st_buf_puts(out, "<tr><th>threads</th>");
	for (int k = 0; k < n; k++)
		st_buf_printf(out, "<td>%d</td>", reports[k].threads);
	st_buf_puts(out, "</tr>\n<tr><th>iterations</th>");
	for (int k = 0; k < n; k++)
		st_buf_printf(out, "<td>%d (warm-up %d, batch %lld, profiled %d)</td>", reports[k].iterations,
		              reports[k].warmup, (long long)reports[k].batch, reports[k].profile_iterations);
	st_buf_puts(out, "</tr>\n");
	static const char *const latency_rows[] = { "mean", "median", "p90", "p95", "p99", "min", "max", "stddev" };
	for (int row = 0; row < 8; row++) {
		st_buf_printf(out, "<tr><th>latency %s</th>", latency_rows[row]);
		for (int k = 0; k < n; k++) {
			const st_report_times *t = &reports[k].latency;
			double v[] = { t->mean, t->median, t->p90, t->p95, t->p99, t->min, t->max, t->stddev };
			if (t->count > 0)
				st_buf_printf(out, "<td class=\"num\">%.3f ms</td>", v[row]);
			else
				st_buf_puts(out, "<td class=\"na\">not measured</td>");
		}
		st_buf_puts(out, "</tr>\n");
	}
	st_buf_puts(out, "<tr><th>throughput</th>");
	for (int k = 0; k < n; k++) {
		if (reports[k].latency.count > 0)
			st_buf_printf(out, "<td class=\"num\">%.1f inferences/s</td>", reports[k].throughput);
		else
			st_buf_puts(out, "<td class=\"na\">not measured</td>");
	}
	st_buf_puts(out, "</tr>\n<tr><th>peak memory</th>");
	for (int k = 0; k < n; k++) {
		st_buf_puts(out, "<td>");
		put_bytes(out, (double)reports[k].peak_bytes);
		if (reports[k].peak_layer != NULL) {
			st_buf_puts(out, " after ");
			put_text(out, reports[k].peak_layer);
		}
		st_buf_puts(out, "</td>");
	}
	st_buf_puts(out, "</tr>\n</tbody></table>\n");
}

/* Every layer with every measurement. */
static void
table_layers(st_buf *out, const st_report *r, int k)
{
	bool samples = false;
	for (int i = 0; i < r->n_layers; i++)
		samples = samples || (r->layers[i].samples != NULL && r->layers[i].n_samples > 1);
	st_buf_puts(out, "<table class=\"layers\"><thead><tr><th>#</th><th>layer</th><th>type</th><th>output</th>"
	                 "<th>distance</th><th>mean ms</th><th>min ms</th><th>max ms</th><th>stddev ms</th>"
	                 "<th>share</th><th>GFLOP/s</th><th>GB/s</th><th>allocated</th><th>freed</th><th>live</th>"
	                 "<th>persistent</th><th>cycles</th><th>instructions</th><th>cache misses</th>");
	if (samples)
		st_buf_puts(out, "<th>per iteration</th>");
	st_buf_puts(out, "</tr></thead><tbody>\n");
	for (int i = 0; i < r->n_layers; i++) {
		const st_report_layer *l = &r->layers[i];
		st_buf_printf(out, "<tr><td class=\"num\">%d</td><td>", i + 1);
		put_text(out, l->name);
		st_buf_puts(out, "</td><td>");
		put_text(out, l->type);
		st_buf_puts(out, "</td><td>");
		put_text_or_dash(out, l->output);
		st_buf_printf(out, "</td><td class=\"num\">%d</td><td class=\"num\">", l->distance);
		put_ms(out, l->time.mean);
		st_buf_puts(out, "</td><td class=\"num\">");
		put_ms(out, l->time.min);
		st_buf_puts(out, "</td><td class=\"num\">");
		put_ms(out, l->time.max);
		st_buf_puts(out, "</td><td class=\"num\">");
		put_ms(out, l->time.stddev);
		st_buf_printf(out, "</td><td class=\"num\"><span class=\"bar\" style=\"width:%.0fpx;background:%s\"></span>"
		                   "%.1f%%</td>",
		              sane(l->share) > 1 ? 50 : sane(l->share) * 50, cli_report_html_colour(k), l->share * 100);
		st_buf_printf(out, "<td class=\"num\">%.2f</td><td class=\"num\">%.2f</td>", l->gflops, l->gbs);
		const int64_t mem[] = { l->mem_allocated, l->mem_freed, l->mem_live, l->mem_persistent };
		for (int m = 0; m < 4; m++) {
			st_buf_puts(out, "<td class=\"num\">");
			put_bytes(out, (double)mem[m]);
			st_buf_puts(out, "</td>");
		}
		const double counters[] = { l->cycles, l->instructions, l->cache_misses };
		for (int c = 0; c < 3; c++) {
			st_buf_puts(out, "<td class=\"num\">");
			put_counter(out, counters[c]);
			st_buf_puts(out, "</td>");
		}
		if (samples)
			sparkline(out, k, l->samples, l->n_samples);
		st_buf_puts(out, "</tr>\n");
	}
	st_buf_puts(out, "</tbody></table>\n");
	if (r->counters_note != NULL) {
		st_buf_puts(out, "<p class=\"note\">Hardware counters: ");
		put_text(out, r->counters_note);
		st_buf_puts(out, "</p>\n");
	}
}

static void
table_memory(st_buf *out, const st_report *r)
{
	st_buf_puts(out, "<table class=\"memory\"><thead><tr><th>#</th><th>layer</th><th>allocated</th><th>freed</th>"
	                 "<th>live after</th><th>persistent</th></tr></thead><tbody>\n");
	for (int i = 0; i < r->n_layers; i++) {
		const st_report_layer *l = &r->layers[i];
		bool peak = r->peak_layer != NULL && strcmp(r->peak_layer, l->name) == 0;
		st_buf_printf(out, "<tr%s><td class=\"num\">%d</td><td>", peak ? " class=\"peak\"" : "", i + 1);
		put_text(out, l->name);
		st_buf_puts(out, "</td>");
		const int64_t mem[] = { l->mem_allocated, l->mem_freed, l->mem_live, l->mem_persistent };
		for (int m = 0; m < 4; m++) {
			st_buf_puts(out, "<td class=\"num\">");
			put_bytes(out, (double)mem[m]);
			st_buf_puts(out, "</td>");
		}
		st_buf_puts(out, "</tr>\n");
	}
	st_buf_puts(out, "</tbody></table>\n<p>Peak ");
	put_bytes(out, (double)r->peak_bytes);
	if (r->peak_layer != NULL) {
		st_buf_puts(out, " after ");
		put_text(out, r->peak_layer);
	}
	st_buf_puts(out, ".</p>\n");
}

static void
table_slowest(st_buf *out, const st_report *r, int top)
{
	int *order = st_report_slowest(r);
	int rows = top < r->n_layers ? top : r->n_layers;
	st_buf_puts(out, "<table class=\"slowest\"><thead><tr><th>rank</th><th>#</th><th>layer</th><th>type</th>"
	                 "<th>mean ms</th><th>share</th><th>cumulative</th></tr></thead><tbody>\n");
	double cumulative = 0;
	for (int row = 0; row < rows; row++) {
		const st_report_layer *l = &r->layers[order[row]];
		cumulative += sane(l->share);
		st_buf_printf(out, "<tr><td class=\"num\">%d</td><td class=\"num\">%d</td><td>", row + 1, order[row] + 1);
		put_text(out, l->name);
		st_buf_puts(out, "</td><td>");
		put_text(out, l->type);
		st_buf_puts(out, "</td><td class=\"num\">");
		put_ms(out, l->time.mean);
		st_buf_printf(out, "</td><td class=\"num\">%.1f%%</td><td class=\"num\">%.1f%%</td></tr>\n", l->share * 100,
		              cumulative * 100);
	}
	st_buf_puts(out, "</tbody></table>\n");
	free(order);
}

/* One report's own section: its tables. */
static void
section_report(st_buf *out, const st_report *r, const char *label, int k, int top)
{
	st_buf_printf(out, "<section id=\"report-%d\"><h2 style=\"border-color:%s\">", k, cli_report_html_colour(k));
	put_chip(out, k);
	st_buf_puts(out, " ");
	put_text(out, label);
	st_buf_puts(out, "</h2>\n");
	if (r->n_layers == 0) {
		st_buf_puts(out, "<p class=\"na\">No layer table: the run was not profiled (strata run --profile).</p>\n");
	} else {
		st_buf_printf(out, "<h3>Layers</h3>\n<p>%d layers in execution order, profiled over %d iterations.</p>\n",
		              r->n_layers, r->profile_iterations);
		table_layers(out, r, k);
		st_buf_puts(out, "<h3>Slowest layers</h3>\n");
		table_slowest(out, r, top);
		st_buf_puts(out, "<h3>Memory</h3>\n");
		table_memory(out, r);
	}
	st_buf_puts(out, "<h3>Skipped layers</h3>\n");
	if (r->n_skipped == 0) {
		st_buf_puts(out, "<p>None.</p>\n");
	} else {
		st_buf_puts(out, "<p>No step of their own (inputs, outputs, fused layers):</p>\n<ul class=\"skipped\">");
		for (int i = 0; i < r->n_skipped; i++) {
			st_buf_puts(out, "<li>");
			put_text(out, r->skipped[i]);
			st_buf_puts(out, "</li>");
		}
		st_buf_puts(out, "</ul>\n");
	}
	st_buf_puts(out, "</section>\n");
}

/* Latency and every layer, each report against the base. */
static void
section_comparison(st_buf *out, const st_report *reports, int n, int base)
{
	const st_report *b = &reports[base];
	st_buf_puts(out, "<section id=\"comparison\"><h2>Comparison</h2>\n<p>Differences against ");
	put_chip(out, base);
	st_buf_puts(out, " (the base); positive is slower.</p>\n<h3>Latency</h3>\n<table class=\"compare\"><thead><tr><th></th>");
	for (int k = 0; k < n; k++) {
		st_buf_puts(out, k == base ? "<th>" : "<th colspan=\"3\">");
		put_chip(out, k);
		st_buf_puts(out, "</th>");
	}
	st_buf_puts(out, "</tr></thead><tbody>\n");
	static const char *const rows[] = { "mean", "median", "p90", "p95", "p99", "min", "max" };
	for (int row = 0; row < 7; row++) {
		st_buf_printf(out, "<tr><th>%s ms</th>", rows[row]);
		for (int k = 0; k < n; k++) {
			const st_report_times *t = &reports[k].latency, *bt = &b->latency;
			double v[] = { t->mean, t->median, t->p90, t->p95, t->p99, t->min, t->max };
			double bv[] = { bt->mean, bt->median, bt->p90, bt->p95, bt->p99, bt->min, bt->max };
			st_buf_printf(out, "<td class=\"num\">%.3f</td>", v[row]);
			if (k != base)
				put_difference(out, v[row], bv[row]);
		}
		st_buf_puts(out, "</tr>\n");
	}
	st_buf_puts(out, "</tbody></table>\n<h3>Layers</h3>\n<p>Matched by name and type: the base's layers in its "
	                 "order, then those only the others have; - where a report lacks the layer.</p>\n"
	                 "<table class=\"compare\"><thead><tr><th>layer</th><th>type</th>");
	for (int k = 0; k < n; k++) {
		st_buf_puts(out, k == base ? "<th>" : "<th colspan=\"3\">");
		put_chip(out, k);
		st_buf_puts(out, k == base ? " ms</th>" : " ms, difference, %</th>");
	}
	st_buf_puts(out, "</tr></thead><tbody>\n");
	int cap = 0;
	for (int k = 0; k < n; k++)
		cap += reports[k].n_layers;
	const st_report_layer **seen = st_xcalloc((size_t)(cap ? cap : 1), sizeof *seen);
	int n_seen = 0;
	for (int step = 0; step < n; step++) {
		const st_report *src = &reports[step == 0 ? base : step <= base ? step - 1 : step];
		for (int i = 0; i < src->n_layers; i++) {
			const st_report_layer *l = &src->layers[i];
			bool done = false;
			for (int j = 0; j < n_seen && !done; j++)
				done = strcmp(seen[j]->name, l->name) == 0 && strcmp(seen[j]->type, l->type) == 0;
			if (done)
				continue;
			seen[n_seen++] = l;
			st_buf_puts(out, "<tr><td>");
			put_text(out, l->name);
			st_buf_puts(out, "</td><td>");
			put_text(out, l->type);
			st_buf_puts(out, "</td>");
			const st_report_layer *bl = st_report_find_layer(b, l->name, l->type);
			for (int k = 0; k < n; k++) {
				const st_report_layer *x = st_report_find_layer(&reports[k], l->name, l->type);
				if (x == NULL)
					st_buf_puts(out, k == base ? "<td class=\"na\">-</td>" : "<td class=\"na\">-</td><td></td><td></td>");
				else {
					st_buf_printf(out, "<td class=\"num\">%.3f</td>", x->time.mean);
					if (k != base && bl != NULL)
						put_difference(out, x->time.mean, bl->time.mean);
					else if (k != base)
						st_buf_puts(out, "<td></td><td></td>");
				}
			}
			st_buf_puts(out, "</tr>\n");
		}
	}
	free(seen);
	st_buf_puts(out, "</tbody></table>\n</section>\n");
}

/* The style sheet: readable on screen and on paper, without web fonts. */
static const char style[] =
	"body{font:14px/1.4 system-ui,-apple-system,'Segoe UI',sans-serif;color:#1a202c;background:#fff;"
	"margin:24px;max-width:1400px}\n"
	"h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:32px 0 8px;border-bottom:3px solid #cbd5e0;"
	"padding-bottom:4px}h3{font-size:15px;margin:20px 0 6px}\n"
	"table{border-collapse:collapse;margin:6px 0 12px}th,td{border:1px solid #e2e8f0;padding:3px 8px;"
	"text-align:left;vertical-align:middle}thead th{background:#f7fafc;position:sticky;top:0}\n"
	"td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}\n"
	".summary th{white-space:nowrap}.na{color:#718096}.note{color:#4a5568}\n"
	".chip{display:inline-block;min-width:1.4em;padding:0 4px;border-radius:3px;color:#fff;font-weight:600;"
	"text-align:center}\n"
	".bar{display:inline-block;height:10px;margin-right:6px;vertical-align:middle}\n"
	"tr.peak td{background:#fffbea}.slower{color:#c53030;text-align:right}.faster{color:#2f855a;text-align:right}"
	".same{text-align:right}\n"
	"figure{margin:12px 0 20px}figcaption{color:#4a5568;font-size:13px}\n"
	"svg.chart{display:block;max-width:100%;height:auto}svg text{font-size:11px;fill:#2d3748}\n"
	"svg text.label{text-anchor:end}svg text.axis.end{text-anchor:end}svg line.grid{stroke:#e2e8f0}\n"
	"footer{margin-top:32px;color:#718096;font-size:12px}\n"
	"@media print{thead th{position:static}}\n";

char *
cli_report_html(const st_report *reports, const char *const *labels, int n, int base, int top)
{
	st_buf out;
	st_buf_init(&out);
	const st_report *b = &reports[base];
	st_buf_puts(&out, PAGE_START);
	st_buf_puts(&out, "<html lang=\"en\"><head><meta charset=\"utf-8\">\n");
	st_buf_puts(&out, GENERATOR_TAG " " PACKAGE_VERSION "\">\n");
	/* Nothing may be fetched or run: a page copied off a server stays inert. */
	st_buf_puts(&out, "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	                  "style-src 'unsafe-inline'\">\n");
	st_buf_puts(&out, "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>");
	put_text(&out, b->network != NULL && *b->network ? b->network : labels[base]);
	st_buf_puts(&out, n > 1 ? " - Strata report comparison" : " - Strata report");
	st_buf_printf(&out, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<header><h1>", style);
	put_text(&out, b->network != NULL && *b->network ? b->network : "Strata report");
	st_buf_puts(&out, "</h1>\n<p class=\"legend\">");
	for (int k = 0; k < n; k++) {
		st_buf_puts(&out, k ? " &nbsp; " : "");
		put_chip(&out, k);
		st_buf_puts(&out, " ");
		put_text(&out, labels[k]);
		if (n > 1 && k == base)
			st_buf_puts(&out, " (base)");
	}
	st_buf_puts(&out, "</p></header>\n<section id=\"summary\"><h2>Network summary</h2>\n");
	table_summary(&out, reports, labels, n);
	st_buf_puts(&out, "</section>\n<section id=\"charts\"><h2>Charts</h2>\n");
	chart_layer_times(&out, reports, n, base, top);
	chart_type_shares(&out, reports, n, base);
	chart_memory(&out, reports, n);
	chart_latency_runs(&out, reports, n);
	chart_latency_histogram(&out, reports, n);
	st_buf_puts(&out, "</section>\n");
	if (n > 1)
		section_comparison(&out, reports, n, base);
	for (int k = 0; k < n; k++)
		section_report(&out, &reports[k], labels[k], k, top);
	st_buf_puts(&out, "<footer id=\"end\">Written by strata report html " PACKAGE_VERSION
	                  " from .strata-report.json files (docs/report-format.md).</footer>\n</body>\n</html>\n");
	return st_buf_take(&out);
}
