/* The live profiling dashboard: ring buffers and their statistics, the data
 * the worker publishes, the full-screen view drawn from it (per-layer times
 * with share bars and sparklines, latency and throughput history), and its
 * keys: pause, threads, format, backend, sort, snapshot, back. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "st-report.h"
#include "tui-dashboard.h"

/* ---- rings and statistics ---- */

void
st_ring_init(st_ring *r, int capacity)
{
	r->capacity = capacity > 0 ? capacity : 1;
	r->values = st_xcalloc((size_t)r->capacity, sizeof *r->values);
	r->count = r->next = 0;
}

void
st_ring_free(st_ring *r)
{
	free(r->values);
	r->values = NULL;
	r->capacity = r->count = r->next = 0;
}

void
st_ring_clear(st_ring *r)
{
	r->count = r->next = 0;
}

void
st_ring_push(st_ring *r, double v)
{
	r->values[r->next] = v;
	r->next = (r->next + 1) % r->capacity;
	if (r->count < r->capacity)
		r->count++;
}

double
st_ring_at(const st_ring *r, int i)
{
	int oldest = (r->next - r->count + r->capacity) % r->capacity;
	return r->values[(oldest + i) % r->capacity];
}

static int
compare_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

void
st_ring_stats(const st_ring *r, st_window_stats *s)
{
	memset(s, 0, sizeof *s);
	if (r->count == 0)
		return;
	double *sorted = st_xmalloc(sizeof *sorted * (size_t)r->count);
	double sum = 0;
	for (int i = 0; i < r->count; i++) {
		sorted[i] = st_ring_at(r, i);
		sum += sorted[i];
	}
	qsort(sorted, (size_t)r->count, sizeof *sorted, compare_double);
	s->count = r->count;
	s->min = sorted[0];
	s->max = sorted[r->count - 1];
	s->mean = sum / r->count;
	/* Nearest rank: the value at ceil(0.99 n) - 1. */
	long rank = (99L * r->count + 99) / 100;
	s->p99 = sorted[rank - 1];
	free(sorted);
}

/* ---- the data ---- */

void
st_dash_data_init(st_dash_data *d)
{
	memset(d, 0, sizeof *d);
	st_ring_init(&d->latency, ST_DASH_WINDOW);
	st_ring_init(&d->throughput, ST_DASH_WINDOW);
	d->backend = "cpu";
}

static void
free_rows(st_dash_data *d)
{
	for (int i = 0; i < d->n_rows; i++) {
		free(d->rows[i].name);
		free(d->rows[i].type);
		st_ring_free(&d->rows[i].ms);
	}
	free(d->rows);
	d->rows = NULL;
	d->n_rows = 0;
}

void
st_dash_data_free(st_dash_data *d)
{
	free_rows(d);
	st_ring_free(&d->latency);
	st_ring_free(&d->throughput);
	free(d->message);
	free(d->note);
	free(d->snapshot);
	memset(d, 0, sizeof *d);
}

void
st_dash_data_set_rows(st_dash_data *d, int n, const char *const *names, const char *const *types)
{
	free_rows(d);
	d->rows = st_xcalloc((size_t)(n > 0 ? n : 1), sizeof *d->rows);
	d->n_rows = n;
	for (int i = 0; i < n; i++) {
		d->rows[i].name = st_xstrdup(names[i]);
		d->rows[i].type = st_xstrdup(types[i]);
		st_ring_init(&d->rows[i].ms, ST_DASH_WINDOW);
	}
}

void
st_dash_data_push(st_dash_data *d, double total_ms, const double *row_ms, double interval_s)
{
	for (int i = 0; i < d->n_rows; i++)
		st_ring_push(&d->rows[i].ms, row_ms[i]);
	st_ring_push(&d->latency, total_ms);
	double secs = interval_s > 0 ? interval_s : total_ms / 1e3;
	if (secs > 0)
		st_ring_push(&d->throughput, (double)(d->batch > 0 ? d->batch : 1) / secs);
	d->iterations++;
}

void
st_dash_set_text(char **field, const char *text)
{
	free(*field);
	*field = text ? st_xstrdup(text) : NULL;
}

/* ---- drawing ---- */

/* Graph columns and bars in eighths of a cell. */
static const char *const column_utf8[8] = { "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█" };
static const char *const bar_utf8[8] = { "▏", "▎", "▍", "▌", "▋", "▊", "▉", "█" };

static const st_style *
role(const st_theme *t, st_role r)
{
	return &t->roles[r];
}

/* Milliseconds with three significant-ish digits, or N/A. */
static void
format_ms(char *buf, size_t size, bool valid, double ms)
{
	if (!valid)
		snprintf(buf, size, "N/A");
	else if (ms >= 100)
		snprintf(buf, size, "%.0f", ms);
	else if (ms >= 10)
		snprintf(buf, size, "%.1f", ms);
	else if (ms >= 1)
		snprintf(buf, size, "%.2f", ms);
	else
		snprintf(buf, size, "%.3f", ms);
}

/* A one-row sparkline of the last w values of ring, scaled 0..max, right
 * aligned (the newest at the right edge); the glyphs are the reports'. */
static void
draw_sparkline(st_screen *s, int x, int y, int w, const st_ring *ring, const st_style *style)
{
	int n = ring->count < w ? ring->count : w;
	if (n <= 0)
		return;
	double *v = st_xmalloc(sizeof *v * (size_t)n), max = 0;
	for (int k = 0; k < n; k++) {
		v[k] = st_ring_at(ring, ring->count - n + k);
		max = v[k] > max ? v[k] : max;
	}
	st_buf b;
	st_buf_init(&b);
	st_report_sparkline(&b, v, n, n, 0, max, s->ascii);
	st_screen_text(s, x + w - n, y, b.data ? b.data : "", style, n);
	st_buf_free(&b);
	free(v);
}

/* A graph h rows high of the last w values, scaled 0..max, in eighths of a
 * cell per row (UTF-8) or whole cells (ASCII). */
static void
draw_graph(st_screen *s, st_rect r, const st_ring *ring, const st_style *style)
{
	if (r.w <= 0 || r.h <= 0)
		return;
	int n = ring->count < r.w ? ring->count : r.w;
	double max = 0;
	for (int i = ring->count - n; i < ring->count; i++)
		max = st_ring_at(ring, i) > max ? st_ring_at(ring, i) : max;
	for (int k = 0; k < n; k++) {
		double v = st_ring_at(ring, ring->count - n + k);
		int eighths = max > 0 ? (int)(v / max * r.h * 8 + 0.5) : 0;
		if (eighths < 1)
			eighths = 1; /* a sample is never invisible */
		for (int row = 0; row < r.h; row++) {
			int fill = eighths - row * 8;
			if (fill <= 0)
				break;
			const char *ch = s->ascii ? (fill >= 8 ? "#" : ".") : column_utf8[(fill > 8 ? 8 : fill) - 1];
			st_screen_text(s, r.x + r.w - n + k, r.y + r.h - 1 - row, ch, style, 1);
		}
	}
}

/* A bar of share (0 to 1) in w cells. */
static void
draw_bar(st_screen *s, int x, int y, int w, double share, const st_style *style)
{
	int eighths = (int)(share * w * 8 + 0.5);
	for (int c = 0; c < w && eighths > 0; c++, eighths -= 8) {
		const char *ch = s->ascii ? (eighths >= 4 ? "#" : "") : bar_utf8[(eighths > 8 ? 8 : eighths) - 1];
		if (*ch)
			st_screen_text(s, x + c, y, ch, style, 1);
	}
}

/* A box with the statistics of a series on its first line and its history
 * below. unit follows each number ("ms", "/s"). */
static void
draw_series(st_screen *s, st_rect r, const char *title, const st_ring *ring, const char *unit, bool ms,
            const st_theme *t)
{
	if (r.w < 12 || r.h < 3)
		return;
	st_screen_box(s, r, role(t, ST_ROLE_BORDER), title, role(t, ST_ROLE_TITLE));
	st_window_stats st;
	st_ring_stats(ring, &st);
	char last[24], lo[24], mean[24], p99[24];
	bool valid = st.count > 0;
	double newest = valid ? st_ring_at(ring, ring->count - 1) : 0;
	if (ms) {
		format_ms(last, sizeof last, valid, newest);
		format_ms(lo, sizeof lo, valid, st.min);
		format_ms(mean, sizeof mean, valid, st.mean);
		format_ms(p99, sizeof p99, valid, st.p99);
	} else {
		const char *fmt = st.mean >= 100 ? "%.0f" : "%.1f";
		snprintf(last, sizeof last, valid ? fmt : "N/A", newest);
		snprintf(lo, sizeof lo, valid ? fmt : "N/A", st.min);
		snprintf(mean, sizeof mean, valid ? fmt : "N/A", st.mean);
		snprintf(p99, sizeof p99, valid ? fmt : "N/A", st.p99);
	}
	char line[160];
	snprintf(line, sizeof line, "last %s %s  min %s  mean %s  p99 %s  (%d)", last, unit, lo, mean, p99, st.count);
	st_screen_text_fit(s, r.x + 2, r.y + 1, line, role(t, ST_ROLE_TEXT), r.w - 4);
	draw_graph(s, (st_rect){ r.x + 1, r.y + 2, r.w - 2, r.h - 3 }, ring, role(t, ST_ROLE_INFO));
}

/* What rows are sorted by. */
typedef struct row_key {
	int index;
	double mean;
	const char *name;
	st_dash_sort sort;
} row_key;

static int
compare_rows(const void *pa, const void *pb)
{
	const row_key *a = pa, *b = pb;
	if (a->sort == ST_DASH_SORT_TIME && a->mean != b->mean)
		return a->mean < b->mean ? 1 : -1;
	if (a->sort == ST_DASH_SORT_NAME) {
		int c = strcmp(a->name, b->name);
		if (c != 0)
			return c;
	}
	return (a->index > b->index) - (a->index < b->index);
}

/* Row indices in the order of sort (means per row); caller frees. */
static int *
row_order(const st_dash_data *d, st_dash_sort sort, const double *means)
{
	row_key *keys = st_xcalloc((size_t)(d->n_rows ? d->n_rows : 1), sizeof *keys);
	for (int i = 0; i < d->n_rows; i++)
		keys[i] = (row_key){ i, means[i], d->rows[i].name, sort };
	st_sort(keys, (size_t)d->n_rows, sizeof *keys, compare_rows);
	int *order = st_xcalloc((size_t)(d->n_rows ? d->n_rows : 1), sizeof *order);
	for (int i = 0; i < d->n_rows; i++)
		order[i] = keys[i].index;
	free(keys);
	return order;
}

static const char *const sort_names[ST_DASH_SORT_COUNT] = { "execution order", "time", "name" };

static void
draw_layers(st_screen *s, st_rect r, const st_dash_data *d, const st_dash_view *v, const st_theme *t)
{
	if (r.w < 20 || r.h < 3)
		return;
	char title[96];
	snprintf(title, sizeof title, "Layers (%d, by %s)", d->n_rows, sort_names[v->sort]);
	st_screen_box(s, r, role(t, ST_ROLE_BORDER), title, role(t, ST_ROLE_TITLE));
	st_rect in = { r.x + 1, r.y + 1, r.w - 2, r.h - 2 };
	st_rect old = st_screen_set_clip(s, in);
	/* Columns: name, type, last, mean, share with its bar, then the sparkline. */
	int name_w = in.w >= 100 ? 24 : in.w >= 80 ? 18 : 14, type_w = in.w >= 80 ? 14 : 10;
	int x_type = in.x + 1 + name_w + 1, x_last = x_type + type_w + 1, x_mean = x_last + 9, x_share = x_mean + 9;
	int bar_w = in.w >= 90 ? 12 : 6, x_bar = x_share + 7, x_spark = x_bar + bar_w + 2;
	int spark_w = in.x + in.w - 1 - x_spark;
	const st_style *head = role(t, ST_ROLE_DIM);
	st_screen_text(s, in.x + 1, in.y, "layer", head, name_w);
	st_screen_text(s, x_type, in.y, "type", head, type_w);
	st_screen_text(s, x_last, in.y, "last ms", head, 8);
	st_screen_text(s, x_mean, in.y, "mean ms", head, 8);
	st_screen_text(s, x_share, in.y, "share", head, 6);
	if (spark_w >= 6)
		st_screen_text(s, x_spark, in.y, "recent", head, spark_w);
	double *means = st_xcalloc((size_t)(d->n_rows ? d->n_rows : 1), sizeof *means);
	double total = 0;
	for (int i = 0; i < d->n_rows; i++) {
		st_window_stats st;
		st_ring_stats(&d->rows[i].ms, &st);
		means[i] = st.mean;
		total += st.mean;
	}
	int *order = row_order(d, v->sort, means);
	int shown = in.h - 1;
	for (int k = 0; k < shown && v->top + k < d->n_rows; k++) {
		int i = order[v->top + k], y = in.y + 1 + k;
		const st_dash_row *row = &d->rows[i];
		bool valid = row->ms.count > 0;
		char last[24], mean[24], share[16];
		format_ms(last, sizeof last, valid, valid ? st_ring_at(&row->ms, row->ms.count - 1) : 0);
		format_ms(mean, sizeof mean, valid, means[i]);
		double part = total > 0 ? means[i] / total : 0;
		snprintf(share, sizeof share, valid ? "%4.1f%%" : "N/A", part * 100);
		st_screen_text_fit(s, in.x + 1, y, row->name, role(t, ST_ROLE_TEXT), name_w);
		st_screen_text_fit(s, x_type, y, row->type, role(t, ST_ROLE_DIM), type_w);
		st_screen_text(s, x_last + 7 - st_text_width(last), y, last, role(t, ST_ROLE_TEXT), 8);
		st_screen_text(s, x_mean + 7 - st_text_width(mean), y, mean, role(t, ST_ROLE_TEXT), 8);
		st_screen_text(s, x_share, y, share, role(t, ST_ROLE_TEXT), 6);
		if (valid)
			draw_bar(s, x_bar, y, bar_w, part, role(t, ST_ROLE_WARNING));
		if (spark_w >= 6)
			draw_sparkline(s, x_spark, y, spark_w, &row->ms, role(t, ST_ROLE_INFO));
	}
	if (d->n_rows > shown) {
		char more[48];
		snprintf(more, sizeof more, " %d-%d of %d ", v->top + 1,
		         v->top + shown < d->n_rows ? v->top + shown : d->n_rows, d->n_rows);
		st_screen_set_clip(s, old);
		st_screen_text(s, r.x + r.w - 2 - st_text_width(more), r.y + r.h - 1, more, role(t, ST_ROLE_DIM), -1);
		old = st_screen_set_clip(s, in);
	}
	free(order);
	free(means);
	st_screen_set_clip(s, old);
}

/* Lines of text (split at '\n') from row y on, in style; returns the next row. */
static int
draw_lines(st_screen *s, int x, int y, int w, int last_row, const char *text, const st_style *style)
{
	const char *p = text;
	while (p != NULL && *p && y <= last_row) {
		const char *end = strchr(p, '\n');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		char *line = st_xstrndup(p, n);
		st_screen_text_fit(s, x, y++, line, style, w);
		free(line);
		p = end ? end + 1 : NULL;
	}
	return y;
}

void
st_dash_draw(st_screen *s, st_rect r, const st_dash_data *d, const st_dash_view *v, const st_theme *t)
{
	if (r.w < 20 || r.h < 4)
		return;
	st_rect old = st_screen_set_clip(s, r);
	int y = r.y, last_row = r.y + r.h - 1;
	/* The status line: what runs, how, and how far. */
	static const char *const phases[] = { "STARTING", "RUNNING", "PAUSED", "FAILED" };
	static const st_role phase_roles[] = { ST_ROLE_WARNING, ST_ROLE_INFO, ST_ROLE_WARNING, ST_ROLE_ERROR };
	int x = r.x + 1;
	x += st_screen_text(s, x, y, phases[d->phase], role(t, phase_roles[d->phase]), -1);
	char line[320];
	if (d->compiled) {
		char arena[32], peak[32];
		st_human_bytes((double)d->arena_bytes, arena, sizeof arena);
		st_human_bytes((double)d->peak_bytes, peak, sizeof peak);
		snprintf(line, sizeof line, "  iteration %ld %s backend %s %s %s %s %d thread%s %s batch %lld %s arena %s, peak %s",
		         d->iterations, st_glyph_text(s, ST_G_DOT), d->backend, st_glyph_text(s, ST_G_DOT),
		         st_tensor_format_name(d->format), st_glyph_text(s, ST_G_DOT), d->threads,
		         d->threads == 1 ? "" : "s", st_glyph_text(s, ST_G_DOT), (long long)d->batch,
		         st_glyph_text(s, ST_G_DOT), arena, peak);
	} else {
		snprintf(line, sizeof line, "  iteration %ld", d->iterations);
	}
	st_screen_text_fit(s, x, y, line, role(t, ST_ROLE_TEXT), r.x + r.w - x);
	y++;
	if (d->phase == ST_DASH_FAILED) {
		y++;
		st_screen_text_fit(s, r.x + 1, y++, "The model cannot run:", role(t, ST_ROLE_ERROR), r.w - 2);
		y = draw_lines(s, r.x + 3, y, r.w - 4, last_row - 2, d->message ? d->message : "(no reason given)",
		               role(t, ST_ROLE_ERROR));
		st_screen_text_fit(s, r.x + 1, y + 1,
		                   "Esc goes back to editing; f and +/- try another format or thread count.",
		                   role(t, ST_ROLE_DIM), r.w - 2);
		st_screen_set_clip(s, old);
		return;
	}
	if (d->phase == ST_DASH_STARTING && d->message != NULL) {
		snprintf(line, sizeof line, "%s%s", d->message, st_glyph_text(s, ST_G_ELLIPSIS));
		st_screen_text_fit(s, r.x + 1, y, line, role(t, ST_ROLE_WARNING), r.w - 2);
	} else if (d->note != NULL) {
		st_screen_text_fit(s, r.x + 1, y, d->note, role(t, ST_ROLE_WARNING), r.w - 2);
	}
	y++;
	if (d->snapshot_busy || d->snapshot != NULL) {
		if (d->snapshot_busy)
			snprintf(line, sizeof line, "snapshot: profiling%s", st_glyph_text(s, ST_G_ELLIPSIS));
		else
			snprintf(line, sizeof line, "snapshot %s: %s", d->snapshot_failed ? "failed" : "saved", d->snapshot);
		st_screen_text_fit(s, r.x + 1, y, line, role(t, d->snapshot_failed ? ST_ROLE_ERROR : ST_ROLE_INFO),
		                   r.w - 2);
	}
	y++;
	/* History: latency and throughput side by side, then the layers. */
	int rest = last_row - y + 1;
	int graph_h = rest / 3;
	graph_h = graph_h < 5 ? 5 : graph_h > 10 ? 10 : graph_h;
	if (rest - graph_h < 4)
		graph_h = rest - 4;
	if (graph_h >= 3) {
		int half = r.w / 2;
		draw_series(s, (st_rect){ r.x, y, half, graph_h }, "Latency", &d->latency, "ms", true, t);
		draw_series(s, (st_rect){ r.x + half, y, r.w - half, graph_h }, "Throughput (inferences/s)",
		            &d->throughput, "/s", false, t);
		y += graph_h;
	}
	draw_layers(s, (st_rect){ r.x, y, r.w, last_row - y + 1 }, d, v, t);
	st_screen_set_clip(s, old);
}

/* ---- over the application ---- */

struct st_dashboard {
	st_runner *runner;
	st_dash_view view;
};

int
st_dashboard_open(st_app *app)
{
	if (app->dashboard != NULL) {
		app->view = ST_VIEW_DASHBOARD;
		return 0;
	}
	st_runner_setup setup;
	char why[640];
	if (st_runner_setup_of(app, &setup, why, sizeof why) != 0) {
		st_app_message(app, ST_SEVERITY_ERROR, "dashboard: %s", why);
		return -1;
	}
	setup.threads = 0;
	char err[256];
	st_runner *runner = st_runner_start(&setup, err, sizeof err);
	if (runner == NULL) {
		st_app_message(app, ST_SEVERITY_ERROR, "%s", err);
		return -1;
	}
	app->dashboard = st_xcalloc(1, sizeof *app->dashboard);
	app->dashboard->runner = runner;
	app->view = ST_VIEW_DASHBOARD;
	app->overlay = ST_OVERLAY_NONE;
	return 0;
}

void
st_dashboard_close(st_app *app)
{
	if (app->dashboard == NULL)
		return;
	st_runner_stop(app->dashboard->runner);
	free(app->dashboard);
	app->dashboard = NULL;
	if (app->view == ST_VIEW_DASHBOARD)
		app->view = ST_VIEW_EDIT;
}

void
st_dashboard_draw(st_app *app, st_screen *s, st_rect r)
{
	if (app->dashboard == NULL)
		return;
	const st_dash_data *d = st_runner_lock(app->dashboard->runner);
	/* Rows may have changed (a recompile): keep the first shown in range. */
	st_dash_view *v = &app->dashboard->view;
	if (v->top > d->n_rows - 1)
		v->top = d->n_rows > 0 ? d->n_rows - 1 : 0;
	st_dash_draw(s, r, d, v, app->theme);
	st_runner_unlock(app->dashboard->runner);
}

int
st_dashboard_fd(const st_app *app)
{
	return app->dashboard != NULL ? st_runner_fd(app->dashboard->runner) : -1;
}

void
st_dashboard_drain(st_app *app)
{
	if (app->dashboard != NULL)
		st_runner_drain(app->dashboard->runner);
}

const char *const st_dashboard_hints[] = { "dashboard.pause", "dashboard.more_threads", "dashboard.fewer_threads",
	                                   "dashboard.format", "dashboard.sort", "dashboard.snapshot",
	                                   "dashboard.backend", "dashboard.back", "global.help", NULL };

/* The backend list: only the CPU one exists in this build. */
static void
backend_chosen(st_app *app, const char *text, void *arg)
{
	(void)arg;
	st_app_message(app, ST_SEVERITY_INFO, "backend %s", text);
}

bool
st_dashboard_key(st_app *app, const st_key *k)
{
	st_dashboard *dash = app->dashboard;
	if (dash == NULL || k->kind != ST_KEY_KEY)
		return false;
	int a = st_keymap_lookup(&app->keymap, k->name, "dashboard.");
	if (a < 0)
		return false;
	const char *n = app->keymap.actions[a].name + strlen("dashboard.");
	st_runner *r = dash->runner;
	int threads, format;
	st_runner_settings(r, &threads, &format);
	const st_dash_data *d = st_runner_lock(r);
	int actual_threads = d->compiled ? d->threads : st_cpu_count();
	int actual_format = d->compiled ? (int)d->format : 0;
	int n_rows = d->n_rows;
	st_runner_unlock(r);
	if (strcmp(n, "back") == 0) {
		st_dashboard_close(app);
	} else if (strcmp(n, "pause") == 0) {
		bool paused = !st_runner_paused(r);
		st_runner_pause(r, paused);
		st_app_message(app, ST_SEVERITY_INFO, paused ? "paused" : "running");
	} else if (strcmp(n, "more_threads") == 0 || strcmp(n, "fewer_threads") == 0) {
		int now = threads > 0 ? threads : actual_threads;
		int most = 4 * st_cpu_count();
		int want = now + (n[0] == 'm' ? 1 : -1);
		want = want < 1 ? 1 : want > most ? most : want;
		if (want != now)
			st_runner_set_threads(r, want);
		st_app_message(app, ST_SEVERITY_INFO, "%d thread%s", want, want == 1 ? "" : "s");
	} else if (strcmp(n, "format") == 0) {
		int now = format >= 0 ? format : actual_format;
		int want = (now + 1) % 4;
		st_runner_set_format(r, want);
		st_app_message(app, ST_SEVERITY_INFO, "format %s", st_tensor_format_name((st_tensor_format)want));
	} else if (strcmp(n, "sort") == 0) {
		dash->view.sort = (st_dash_sort)((dash->view.sort + 1) % ST_DASH_SORT_COUNT);
		dash->view.top = 0;
	} else if (strcmp(n, "down") == 0) {
		if (dash->view.top + 1 < n_rows)
			dash->view.top++;
	} else if (strcmp(n, "up") == 0) {
		if (dash->view.top > 0)
			dash->view.top--;
	} else if (strcmp(n, "snapshot") == 0) {
		st_runner_snapshot(r);
	} else if (strcmp(n, "backend") == 0) {
		static const char *const backends[] = { "cpu" };
		st_app_pick(app, "Backend (only cpu is in this build)", backends, 1, 0, backend_chosen, NULL);
	} else {
		return false;
	}
	return true;
}
