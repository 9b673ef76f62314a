/* The figures of an XWN layer under its parameters: the settings in words,
 * the kernel slices pruned and a sparkline of the level indices chosen,
 * computed from the model's weights folder (docs/xwn.md). They are kept
 * between frames and computed again only when the layer, its settings,
 * its weights' shapes or the weight files themselves change. */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "st-engine.h"
#include "st-report.h"
#include "tui-app.h"

/* One weight file as last seen: enough to notice it was replaced. */
typedef struct file_stamp {
	st_shape shape;
	bool present;
	long long mtime_ns, size;
	unsigned long long ino;
} file_stamp;

/* What the figures were computed from, and the figures. */
struct st_xwn_panel {
	const st_layer *layer;
	char *name;                 /* the layer's name then */
	st_xwn_settings settings;
	char *dir;                  /* the weights folder, or NULL */
	int n_stamps;
	file_stamp stamps[ST_MAX_WEIGHTS];
	bool valid;                 /* figures hold; else why says what is missing */
	st_xwn_figures figures;
	char why[320];
	int computed;               /* times the figures were computed */
};

/* The weights folder as strata run finds it: the network's setting, inside
 * the model's folder. NULL with the reason in why. Caller frees. */
static char *
weights_dir(st_app *app, char *why, size_t size)
{
	const char *written = st_app_graph(app)->network.values[ST_NET_WEIGHTS].s;
	if (written == NULL || written[0] == '\0') {
		snprintf(why, size, "no weights folder: set the network's weights (:network weights DIR)");
		return NULL;
	}
	if (app->path == NULL) {
		snprintf(why, size, "save the model to find its weights folder");
		return NULL;
	}
	char err[256];
	char *dir = st_model_path(app->path, written, false, err, sizeof err);
	if (dir == NULL)
		snprintf(why, size, "weights folder: %s", err);
	return dir;
}

/* The stamps of l's transformed weights in dir now. */
static int
stamps_of(const st_layer *l, const char *dir, file_stamp *out)
{
	int n = 0;
	for (int i = 0; i < l->n_weights && n < ST_MAX_WEIGHTS; i++) {
		if (!st_xwn_weight_transformed(&l->weights[i].shape))
			continue;
		file_stamp *f = &out[n++];
		memset(f, 0, sizeof *f);
		f->shape = l->weights[i].shape;
		if (dir == NULL)
			continue;
		char *path = st_xasprintf("%s/%s_%s.npy", dir, l->name, l->weights[i].name);
		struct stat sb;
		if (stat(path, &sb) == 0) {
			f->present = true;
			f->mtime_ns = (long long)sb.st_mtim.tv_sec * 1000000000LL + sb.st_mtim.tv_nsec;
			f->size = (long long)sb.st_size;
			f->ino = (unsigned long long)sb.st_ino;
		}
		free(path);
	}
	return n;
}

static bool
same_settings(const st_xwn_settings *a, const st_xwn_settings *b)
{
	return a->transform == b->transform && a->bit == b->bit && a->max_scale == b->max_scale &&
	       a->pruning == b->pruning && a->prun_weight == b->prun_weight;
}

static bool
same_stamps(const file_stamp *a, const file_stamp *b, int n)
{
	for (int i = 0; i < n; i++) {
		if (!st_shape_equal(&a[i].shape, &b[i].shape) || a[i].present != b[i].present ||
		    a[i].mtime_ns != b[i].mtime_ns || a[i].size != b[i].size || a[i].ino != b[i].ino)
			return false;
	}
	return true;
}

/* Brings the figures up to date for l, computing them only when something
 * they depend on changed. */
static st_xwn_panel *
refresh(st_app *app, const st_layer *l)
{
	st_xwn_panel *p = app->xwn_panel;
	if (p == NULL)
		p = app->xwn_panel = st_xcalloc(1, sizeof *p);
	char why[320] = "";
	char *dir = weights_dir(app, why, sizeof why);
	st_xwn_settings s;
	st_xwn_settings_of(l, NULL, &s);
	file_stamp now[ST_MAX_WEIGHTS];
	int n = stamps_of(l, dir, now);
	bool same = p->computed > 0 && p->layer == l && p->name != NULL && strcmp(p->name, l->name) == 0 &&
	            same_settings(&p->settings, &s) && n == p->n_stamps && same_stamps(now, p->stamps, n) &&
	            ((dir == NULL && p->dir == NULL) || (dir != NULL && p->dir != NULL && strcmp(dir, p->dir) == 0));
	if (same) {
		free(dir);
		return p;
	}
	free(p->name);
	free(p->dir);
	p->layer = l;
	p->name = st_xstrdup(l->name);
	p->settings = s;
	p->dir = dir;
	p->n_stamps = n;
	memcpy(p->stamps, now, sizeof now[0] * (size_t)n);
	p->computed++;
	p->valid = false;
	if (dir == NULL) {
		snprintf(p->why, sizeof p->why, "%s", why);
	} else if (st_xwn_figures_from_dir(l, dir, &p->figures, p->why, sizeof p->why) == 0) {
		p->valid = true;
		p->why[0] = '\0';
	} else {
		/* The panel is narrow: files by their names within the folder. */
		char *at = strstr(p->why, dir);
		size_t len = strlen(dir);
		if (at != NULL && at[len] == '/')
			memmove(at, at + len + 1, strlen(at + len + 1) + 1);
	}
	return p;
}

int
st_params_xwn_height(const st_layer *l)
{
	return st_xwn_layer(l) ? 5 : 0;
}

/* Text wrapped at w columns into at most two lines at y (one when lines
 * is 1), the last cut with an ellipsis. */
static void
two_lines(st_screen *s, int x, int y, int w, int lines, const char *text, const st_style *style)
{
	int n = (int)strlen(text), cut = n;
	if (st_text_width(text) > w) {
		/* Break at the last space that leaves the first line within w. */
		cut = -1;
		for (int i = 0; i < n; i++) {
			if (text[i] == ' ') {
				char *head = st_xstrndup(text, (size_t)i);
				if (st_text_width(head) <= w)
					cut = i;
				free(head);
			}
		}
		if (cut < 0)
			cut = n;
	}
	char *first = st_xstrndup(text, (size_t)cut);
	st_screen_text_fit(s, x, y, first, style, w);
	free(first);
	if (cut < n && lines > 1)
		st_screen_text_fit(s, x, y + 1, text + cut + 1, style, w);
}

void
st_params_xwn_draw(st_app *app, st_screen *s, st_rect r, const st_layer *l)
{
	if (!st_xwn_layer(l) || r.h < 1 || r.w < 4)
		return;
	const st_style *dim = st_app_style(app, ST_ROLE_DIM), *text = st_app_style(app, ST_ROLE_TEXT);
	int y = r.y, end = r.y + r.h;
	st_buf b;
	st_buf_init(&b);
	st_xwn_settings set;
	st_xwn_settings_of(l, NULL, &set);
	/* The transform on the title line, pruning on the next, so that each
	 * fits the panel's width. */
	if (set.transform && set.bit == 1)
		st_buf_puts(&b, "XWN 1-bit (sign, mean)");
	else if (set.transform && set.bit >= 2)
		st_buf_printf(&b, "XWN %d-bit, max_scale %g", set.bit, (double)set.max_scale);
	else
		st_buf_puts(&b, "XWN transform off");
	st_screen_text_fit(s, r.x, y++, b.data, st_app_style(app, ST_ROLE_TITLE), r.w);
	st_buf_reset(&b);
	if (!l->outputs_known) {
		if (y < end)
			two_lines(s, r.x, y, r.w, end - y, "figures once the layer type-checks", dim);
		st_buf_free(&b);
		return;
	}
	const st_xwn_panel *p = refresh(app, l);
	if (!p->valid) {
		if (y < end)
			two_lines(s, r.x, y, r.w, end - y, p->why, dim);
		st_buf_free(&b);
		return;
	}
	const st_xwn_figures *f = &p->figures;
	if (y < end) {
		if (set.pruning)
			st_buf_printf(&b, "pruning %g: %" PRId64 "/%" PRId64 " (%.1f%%)", (double)set.prun_weight, f->pruned,
			              f->slices, f->slices > 0 ? 100.0 * (double)f->pruned / (double)f->slices : 0.0);
		else
			st_buf_printf(&b, "pruning off (%" PRId64 " slices)", f->slices);
		st_screen_text_fit(s, r.x, y++, b.data, text, r.w);
		st_buf_reset(&b);
	}
	if (y < end) {
		int x = r.x + st_screen_text(s, r.x, y, "levels ", text, r.w);
		if (f->levels == 0) {
			st_screen_text_fit(s, x, y, "(no transform)", dim, r.x + r.w - x);
		} else {
			double v[ST_XWN_MAX_LEVELS], most = 0;
			for (int k = 0; k < f->levels; k++) {
				v[k] = (double)f->level_count[k];
				most = v[k] > most ? v[k] : most;
			}
			int room = r.x + r.w - x;
			st_report_sparkline(&b, v, f->levels, f->levels < room ? f->levels : room, 0, most > 0 ? most : 1,
			                    s->ascii);
			x += st_screen_text(s, x, y, b.data, st_app_style(app, ST_ROLE_BAR), room);
			/* The busiest level, when it fits: "k2 41%". */
			int top = 0;
			for (int k = 1; k < f->levels; k++)
				top = f->level_count[k] > f->level_count[top] ? k : top;
			int64_t kept = 0;
			for (int k = 0; k < f->levels; k++)
				kept += f->level_count[k];
			st_buf_reset(&b);
			if (kept > 0)
				st_buf_printf(&b, " k%d %.0f%%", top, 100.0 * (double)f->level_count[top] / (double)kept);
			else
				st_buf_puts(&b, " (all pruned)");
			if (st_text_width(b.data) <= r.x + r.w - x)
				st_screen_text(s, x, y, b.data, dim, r.x + r.w - x);
		}
		y++;
		st_buf_reset(&b);
	}
	if (y < end) {
		st_buf_printf(&b, "%" PRId64 " weights in %d tensor%s", f->weights, f->n_parts, f->n_parts == 1 ? "" : "s");
		st_screen_text_fit(s, r.x, y++, b.data, dim, r.w);
	}
	if (y < end)
		st_screen_text_fit(s, r.x, y, "diff: strata xwn compare", dim, r.w);
	st_buf_free(&b);
}

int
st_params_xwn_computed(const st_app *app)
{
	return app->xwn_panel != NULL ? app->xwn_panel->computed : 0;
}

void
st_params_xwn_free(st_app *app)
{
	st_xwn_panel *p = app->xwn_panel;
	if (p == NULL)
		return;
	free(p->name);
	free(p->dir);
	free(p);
	app->xwn_panel = NULL;
}
