/* Benchmark of the canvas: time of the automatic layout, link crossings and
 * glyph overlaps after it against two naive placements measured in the same
 * run (the model's own positions, and one column in topological order), and
 * the time to draw one 200x60 frame at several scroll positions, on model
 * files and on generated ResNet-like models; then, on the generated models,
 * the whole editor: time to the first frame and per keystroke (pan, select,
 * edit a parameter).
 *   bench-tui [--sizes N,N,...] [MODEL.strata.json ...]
 * bench/tui/run passes the examples and 100, 1,000 and 10,000 layers. */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "st-tui.h"
#include "tui-app.h"

#define FRAME_W 200
#define FRAME_H 60
#define FRAME_REPEAT 5

/*
 * A ResNet-like model: blocks of conv+bn (relu attached), conv+bn and an
 * element-wise add of the block's input; every 8th block widens the
 * channels, with a 1x1 projection convolution on the shortcut beside the
 * main path, as ResNet's downsampling blocks have.
 */
static char *
generate(int target, int *n_layers)
{
	st_buf b;
	st_buf_init(&b);
	st_buf_puts(&b, "{\"format\": \"strata-model\", \"version\": 1,\n"
	                "\"network\": {\"name\": \"bench\"},\n\"layers\": [\n"
	                "{\"name\": \"data\", \"type\": \"input\", \"params\": {\"dims\": [64, 56, 56]}}");
	int n = 1, block = 0, channels = 64;
	char prev[64] = "data", shortcut[64];
	while (n + 7 <= target) {
		int out = channels;
		snprintf(shortcut, sizeof shortcut, "%s", prev);
		if (block % 8 == 7) {
			out = channels + 16;
			st_buf_printf(&b, ",\n{\"name\": \"proj%d\", \"type\": \"convolution\", \"params\": "
			                  "{\"num_output\": %d, \"kernel\": [1]}, \"inputs\": [\"%s.0\"]}",
			              block, out, prev);
			snprintf(shortcut, sizeof shortcut, "proj%d", block);
			n++;
		}
		st_buf_printf(&b, ",\n{\"name\": \"c%da\", \"type\": \"convolution\", \"params\": "
		                  "{\"num_output\": %d, \"kernel\": [3], \"padding\": \"same\"}, \"inputs\": [\"%s.0\"]}"
		                  ",\n{\"name\": \"b%da\", \"type\": \"batch_normalization\", \"activation\": "
		                  "{\"type\": \"relu\"}, \"inputs\": [\"c%da.0\"]}"
		                  ",\n{\"name\": \"c%db\", \"type\": \"convolution\", \"params\": "
		                  "{\"num_output\": %d, \"kernel\": [3], \"padding\": \"same\"}, \"inputs\": [\"b%da.0\"]}"
		                  ",\n{\"name\": \"b%db\", \"type\": \"batch_normalization\", \"inputs\": [\"c%db.0\"]}"
		                  ",\n{\"name\": \"add%d\", \"type\": \"elementwise\", \"activation\": {\"type\": "
		                  "\"relu\"}, \"inputs\": [\"b%db.0\", \"%s.0\"]}",
		              block, out, prev, block, block, block, out, block, block, block, block, block,
		              shortcut);
		n += 5;
		channels = out;
		snprintf(prev, sizeof prev, "add%d", block);
		block++;
	}
	st_buf_printf(&b, ",\n{\"name\": \"out\", \"type\": \"output\", \"inputs\": [\"%s.0\"]}\n]}\n", prev);
	n++;
	*n_layers = n;
	return st_buf_take(&b);
}

/* Distinct styles per role, as a theme would give. */
static void
bench_theme(st_theme *t)
{
	memset(t, 0, sizeof *t);
	t->name = "bench";
	for (int i = 0; i < ST_ROLE_COUNT; i++)
		t->roles[i] = (st_style){ ST_COLOR_INDEX(i + 1), ST_COLOR_DEFAULT, 0 };
}

typedef struct placement {
	int64_t crossings, overlaps;
	int w, h; /* the bounding box */
} placement;

static void
measure(const st_graph *g, placement *p)
{
	p->crossings = st_layout_crossings(g);
	p->overlaps = st_layout_overlaps(g);
	int x0 = 0, y0 = 0, x1 = 0, y1 = 0;
	for (int i = 0; i < g->n_layers; i++) {
		st_rect r;
		st_glyph_rect(g->layers[i], &r);
		if (i == 0 || r.x < x0)
			x0 = r.x;
		if (i == 0 || r.y < y0)
			y0 = r.y;
		if (i == 0 || r.x + r.w > x1)
			x1 = r.x + r.w;
		if (i == 0 || r.y + r.h > y1)
			y1 = r.y + r.h;
	}
	p->w = x1 - x0;
	p->h = y1 - y0;
}

static void
save_positions(const st_graph *g, int *pos)
{
	for (int i = 0; i < g->n_layers; i++) {
		pos[2 * i] = g->layers[i]->x;
		pos[2 * i + 1] = g->layers[i]->y;
	}
}

static void
apply_positions(st_graph *g, const int *pos)
{
	for (int i = 0; i < g->n_layers; i++) {
		g->layers[i]->x = pos[2 * i];
		g->layers[i]->y = pos[2 * i + 1];
	}
}

/* One column, 8 rows apart, in topological order (Kahn's, graph order among equals). */
static void
column_positions(const st_graph *g, int *pos)
{
	int n = g->n_layers, head = 0, tail = 0;
	int *indeg = st_xcalloc((size_t)n + 1, sizeof *indeg), *queue = st_xmalloc((size_t)(n + 1) * sizeof *queue);
	for (int i = 0; i < n; i++) {
		const st_layer *l = g->layers[i];
		for (int k = 0; k < l->n_inputs; k++)
			indeg[i] += l->inputs[k].layer != NULL;
	}
	for (int i = 0; i < n; i++) {
		if (indeg[i] == 0)
			queue[tail++] = i;
	}
	while (head < tail) {
		const st_layer *l = g->layers[queue[head++]];
		for (int c = 0; c < l->n_consumers; c++) {
			if (--indeg[l->consumers[c].layer->index] == 0)
				queue[tail++] = l->consumers[c].layer->index;
		}
	}
	for (int i = 0; i < n; i++) {
		if (indeg[i] > 0)
			queue[tail++] = i; /* in a cycle */
	}
	for (int k = 0; k < n; k++) {
		pos[2 * queue[k]] = 0;
		pos[2 * queue[k] + 1] = 8 * k;
	}
	free(indeg);
	free(queue);
}

/* Milliseconds per frame of 200x60, average and worst over scroll positions
 * at the top, the middle and the bottom of the graph, with the cursor on a
 * layer there, shapes on links and the minimap on. */
static void
time_frames(const st_graph *g, const placement *p, double *avg, double *worst)
{
	st_screen *s = st_screen_new(FRAME_W, FRAME_H);
	st_theme theme;
	bench_theme(&theme);
	int min_x = 0, min_y = 0;
	for (int i = 0; i < g->n_layers; i++) {
		if (i == 0 || g->layers[i]->x < min_x)
			min_x = g->layers[i]->x;
		if (i == 0 || g->layers[i]->y < min_y)
			min_y = g->layers[i]->y;
	}
	int ys[3] = { min_y, min_y + p->h / 2 - FRAME_H / 2, min_y + p->h - FRAME_H };
	double total = 0;
	int frames = 0;
	*worst = 0;
	for (int k = 0; k < 3; k++) {
		st_canvas c = { .scroll_x = min_x, .scroll_y = ys[k], .show_shapes = true, .show_minimap = true,
			        .connect_output = -1, .terminal = -1 };
		/* The cursor on the layer nearest the view's centre. */
		int best = -1;
		for (int i = 0; i < g->n_layers; i++) {
			int d = abs(g->layers[i]->y - (ys[k] + FRAME_H / 2));
			if (best < 0 || d < abs(g->layers[best]->y - (ys[k] + FRAME_H / 2)))
				best = i;
		}
		const st_layer *cursor = best >= 0 ? g->layers[best] : NULL;
		c.cursor = cursor;
		c.selected = &cursor;
		c.n_selected = cursor != NULL;
		for (int r = 0; r < FRAME_REPEAT; r++) {
			double t0 = st_now();
			st_canvas_draw(s, (st_rect){ 0, 0, FRAME_W, FRAME_H }, g, &c, &theme);
			double dt = (st_now() - t0) * 1e3;
			total += dt;
			frames++;
			if (dt > *worst)
				*worst = dt;
		}
	}
	*avg = total / frames;
	st_screen_free(s);
}

static int
run_graph(const char *label, st_graph *g)
{
	st_graph_check(g);
	int n = g->n_layers, links = 0;
	for (int i = 0; i < n; i++) {
		for (int k = 0; k < g->layers[i]->n_inputs; k++)
			links += g->layers[i]->inputs[k].layer != NULL;
	}
	int *own = st_xmalloc((size_t)(2 * n + 1) * sizeof *own);
	int *column = st_xmalloc((size_t)(2 * n + 1) * sizeof *column);
	save_positions(g, own);
	column_positions(g, column);
	placement p_own, p_column, p_layout;
	measure(g, &p_own);
	apply_positions(g, column);
	measure(g, &p_column);
	double layout_ms = 1e9;
	int *laid = NULL;
	int reps = n > 5000 ? 1 : 3;
	for (int r = 0; r < reps; r++) {
		double t0 = st_now();
		int *pos = st_layout_graph(g);
		double dt = (st_now() - t0) * 1e3;
		layout_ms = dt < layout_ms ? dt : layout_ms;
		if (laid != NULL && memcmp(laid, pos, (size_t)(2 * n) * sizeof *pos) != 0) {
			fprintf(stderr, "bench-tui: %s: the layout differs between runs\n", label);
			return -1;
		}
		free(laid);
		laid = pos;
	}
	apply_positions(g, laid);
	measure(g, &p_layout);
	double draw_avg, draw_worst;
	time_frames(g, &p_layout, &draw_avg, &draw_worst);
	char size[32];
	snprintf(size, sizeof size, "%dx%d", p_layout.w, p_layout.h);
	printf("%-20s %6d %6d %8.2f  %7" PRId64 " %7" PRId64 " %7" PRId64 "  %7" PRId64 " %7" PRId64 " %9" PRId64
	       "  %12s  %6.2f %6.2f\n",
	       label, n, links, layout_ms, p_layout.crossings, p_column.crossings, p_own.crossings,
	       p_layout.overlaps, p_column.overlaps, p_own.overlaps, size, draw_avg, draw_worst);
	fflush(stdout);
	free(own);
	free(column);
	free(laid);
	return 0;
}

/* ---- the whole editor: first frame and keystrokes ---- */

#define KEY_REPEAT 40

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* One keystroke as the editor gets it: a key (or a ':' command line),
 * then the frame drawn. Milliseconds. */
static double
keystroke(st_app *app, const char *key, const char *command)
{
	double t0 = st_now();
	if (command != NULL) {
		if (st_app_command(app, command) != 0) {
			/* A command that fails would time nothing worth knowing. */
			fprintf(stderr, "bench-tui: ':%s' failed: %s\n", command, app->status);
			exit(1);
		}
	} else {
		st_key k = { .kind = ST_KEY_KEY };
		snprintf(k.name, sizeof k.name, "%s", key);
		st_app_key(app, &k);
	}
	st_app_draw(app);
	return (st_now() - t0) * 1e3;
}

/* Median and worst of KEY_REPEAT keystrokes alternating between two keys
 * (or two commands), so the view keeps changing. */
static void
time_keys(st_app *app, const char *a, const char *b, bool commands, double *median, double *worst)
{
	double t[KEY_REPEAT];
	for (int i = 0; i < KEY_REPEAT; i++) {
		const char *k = i % 2 ? b : a;
		t[i] = keystroke(app, commands ? NULL : k, commands ? k : NULL);
	}
	qsort(t, KEY_REPEAT, sizeof t[0], cmp_double);
	*median = t[KEY_REPEAT / 2];
	*worst = t[KEY_REPEAT - 1];
}

/* The editor on a model file in a scratch folder: the time from nothing to
 * the first 200x60 frame (read, type-check, lay out when the model has no
 * positions, draw), then per keystroke: pan, move the selection, and edit a
 * parameter (a command, with the type check it sets off). Writing the frame
 * to a terminal is not in these times; tests/cli/tui-bytes.sh counts its
 * bytes. Returns nonzero on failure. */
static int
run_session(const char *label, const char *text, const char *layer, double *first_out, double *edit_out)
{
	char dir[] = "/tmp/strata-bench-XXXXXX";
	if (mkdtemp(dir) == NULL) {
		perror("bench-tui: mkdtemp");
		return 1;
	}
	/* Nothing of the user's: settings and journals in the scratch folder. */
	setenv("XDG_CONFIG_HOME", dir, 1);
	setenv("XDG_STATE_HOME", dir, 1);
	char *path = st_xasprintf("%s/model.strata.json", dir);
	FILE *f = fopen(path, "w");
	if (f == NULL || fputs(text, f) == EOF || fclose(f) != 0) {
		perror("bench-tui: writing the model");
		free(path);
		return 1;
	}
	st_tui_options opt = { .model = path, .ascii = -1, .colors = -1 };
	st_diag d;
	st_diag_init(&d);
	double t0 = st_now();
	st_app *app = st_app_new(&opt, &d);
	if (app == NULL) {
		st_diag_print(&d, stderr);
		st_diag_free(&d);
		free(path);
		return 1;
	}
	app->screen = st_screen_new(FRAME_W, FRAME_H);
	st_app_draw(app);
	double first = (st_now() - t0) * 1e3;
	st_diag_free(&d);

	double pan_m, pan_w, sel_m, sel_w, edit_m, edit_w;
	time_keys(app, "<C-Right>", "<C-Left>", false, &pan_m, &pan_w);
	time_keys(app, "j", "k", false, &sel_m, &sel_w);
	char set_a[128], set_b[128];
	snprintf(set_a, sizeof set_a, "set %s num_output 48", layer);
	snprintf(set_b, sizeof set_b, "set %s num_output 32", layer);
	time_keys(app, set_a, set_b, true, &edit_m, &edit_w);
	int layers = st_app_graph(app)->n_layers;
	printf("%-20s %6d  %8.1f  %6.2f %6.2f  %6.2f %6.2f  %6.2f %6.2f  %6.2f\n", label, layers, first, pan_m,
	       pan_w, sel_m, sel_w, edit_m, edit_w, first / 150.0);
	*first_out = first;
	*edit_out = edit_m > pan_m ? (edit_m > sel_m ? edit_m : sel_m) : (pan_m > sel_m ? pan_m : sel_m);
	st_app_free(app);
	/* The scratch folder: the model, the journal and the lock. */
	char *cmd = st_xasprintf("rm -rf '%s'", dir);
	int rc = system(cmd);
	(void)rc;
	free(cmd);
	free(path);
	return 0;
}

static int
run_sessions(const char *sizes)
{
	printf("\nthe whole editor, 200x60 (ms): first frame, then per keystroke median and worst of %d\n",
	       KEY_REPEAT);
	printf("%-20s %6s  %8s  %13s  %13s  %13s  %6s\n", "model", "layers", "first", "---- pan ----",
	       "--- select --", "- edit param ", "/150ms");
	int rc = 0;
	double first_1k = -1, key_1k = -1;
	for (const char *p = sizes; p != NULL && *p;) {
		int target = atoi(p);
		int n;
		char *text = generate(target, &n);
		char label[64];
		snprintf(label, sizeof label, "resnet-like %d", target);
		double first = -1, key = -1;
		rc |= run_session(label, text, "c0a", &first, &key);
		if (target == 1000)
			first_1k = first, key_1k = key;
		free(text);
		p = strchr(p, ',');
		if (p)
			p++;
	}
	if (first_1k >= 0)
		printf("at 1,000 layers: first frame %.1f ms (target < 150: %s), slowest keystroke median %.2f ms "
		       "(target < 16: %s)\n",
		       first_1k, first_1k < 150 ? "met" : "MISSED", key_1k, key_1k < 16 ? "met" : "MISSED");
	return rc;
}

int
main(int argc, char **argv)
{
	st_registry *r = st_registry_new();
	st_registry_load_default(r);
	if (st_registry_find_layer(r, "convolution") == NULL) {
		fprintf(stderr, "bench-tui: the std plugin is not on STRATA_PLUGIN_PATH\n");
		return 2;
	}
	printf("%-20s %6s %6s %8s  %-23s  %-25s  %12s  %13s\n", "", "", "", "layout",
	       "------ crossings ------", "------- overlaps --------", "laid out", "draw ms/frame");
	printf("%-20s %6s %6s %8s  %7s %7s %7s  %7s %7s %9s  %12s  %6s %6s\n", "model", "layers", "links",
	       "ms", "layout", "column", "own", "layout", "column", "own", "w x h", "avg", "worst");
	int rc = 0;
	char *sizes = NULL;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--sizes") == 0 && i + 1 < argc) {
			sizes = argv[++i];
			continue;
		}
		st_diag d;
		st_diag_init(&d);
		st_graph *g = st_model_load(argv[i], r, &d);
		if (g == NULL) {
			st_diag_print(&d, stderr);
			rc = 1;
		} else {
			const char *base = strrchr(argv[i], '/');
			char label[64];
			snprintf(label, sizeof label, "%s", base ? base + 1 : argv[i]);
			char *dot = strstr(label, ".strata.json");
			if (dot)
				*dot = '\0';
			rc |= run_graph(label, g) != 0;
			st_graph_free(g);
		}
		st_diag_free(&d);
	}
	for (char *p = sizes; p != NULL && *p;) {
		int target = atoi(p);
		int n;
		char *text = generate(target, &n);
		st_diag d;
		st_diag_init(&d);
		st_graph *g = st_model_parse(text, strlen(text), "generated", r, &d);
		if (g == NULL) {
			st_diag_print(&d, stderr);
			rc = 1;
		} else {
			char label[64];
			snprintf(label, sizeof label, "resnet-like %d", target);
			rc |= run_graph(label, g) != 0;
			st_graph_free(g);
		}
		st_diag_free(&d);
		free(text);
		p = strchr(p, ',');
		if (p)
			p++;
	}
	printf("\ncrossings of the links as the canvas routes them, and pairs of overlapping glyphs:\n"
	       "after st_layout_graph (layout), in one column in topological order 8 rows apart\n"
	       "(column), and at the model's own positions (own: the examples were saved laid out;\n"
	       "generated models have no positions, so all their glyphs sit at 0,0).\n"
	       "draw: one %dx%d frame at the top, middle and bottom of the laid-out graph, with\n"
	       "shapes, the minimap and a cursor; layout: the best of 3 runs (1 above 5,000 layers).\n",
	       FRAME_W, FRAME_H);
	if (sizes != NULL)
		rc |= run_sessions(sizes);
	st_registry_free(r);
	return rc;
}
