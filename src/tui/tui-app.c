/* The editor application's services: ':' commands (the session's edit
 * commands plus the editor's own), messages, questions, saving and quitting
 * safely, and the start-up checks (journal, lock, file changed on disk). */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "st-onnx.h"
#include "tui-app.h"
#include "tui-analysis.h"
#include "tui-dashboard.h"

/* The editor's own commands, beside the session's st_commands. */
const st_app_command_desc st_app_commands[] = {
	{ "w", "[FILE]", "save (write) the model" },
	{ "q", "", "quit; asks when there are unsaved changes" },
	{ "q!", "", "quit without saving" },
	{ "wq", "", "save and quit" },
	{ "x", "", "save when changed, and quit" },
	{ "e!", "", "reload the model from disk, dropping unsaved edits" },
	{ "import", "FILE.onnx [MODEL]", "import an ONNX model into MODEL and its weights folder, and open it" },
	{ "layout", "", "lay the graph out automatically (one undoable edit)" },
	{ "toggle", "shapes|grid|minimap", "show or hide tensor shapes, the grid or the minimap" },
	{ "theme", "[NAME]", "switch to a theme, or list them" },
	{ "find", "LAYER", "select a layer by name and bring it into view" },
	{ "docs", "[TYPE]", "the documentation of a layer type" },
	{ "plugins", "", "the loaded plugins (collections)" },
	{ "keys", "", "every key binding" },
	{ "report", "[FILE]", "an inference report: the newest of this model, or FILE" },
	{ "compare", "FILE FILE...", "inference reports side by side, against the first" },
	{ "heat", "", "colour the canvas by the open report's layer times, or stop" },
	{ "dashboard", "", "live profiling: run the model continuously, per-layer times and history" },
	{ "analyze", "", "analysis mode: run the model on chosen inputs and look at every layer's channels" },
	{ "input", "[LAYER] FILE", "feed an input layer from a PNG, JPEG, .npy or video file (analysis mode)" },
	{ "graphics", "[symbols|sixel|kitty]", "how pictures are drawn; only symbols exist in this build" },
	{ "edit", "", "back to editing from any view" },
	{ "expand", "[LAYER]", "replace the layer (the selected one) by its parts, as the edit command expand" },
};
const int st_n_app_commands = (int)(sizeof st_app_commands / sizeof st_app_commands[0]);

const st_style *
st_app_style(const st_app *app, st_role role)
{
	return &app->theme->roles[role];
}

st_graph *
st_app_graph(st_app *app)
{
	return st_session_graph(app->session);
}

st_layer *
st_app_current(st_app *app)
{
	return (st_layer *)app->canvas.cursor;
}

void
st_app_message(st_app *app, st_severity sev, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(app->status, sizeof app->status, fmt, ap);
	va_end(ap);
	app->status_severity = sev;
	app->status_set = true;
}

void
st_app_focus_layer(st_app *app, const st_layer *l)
{
	app->canvas.cursor = l;
	app->canvas.terminal = -1;
	app->multi_select = false;
	app->params.editing = false;
	free(app->canvas.selected);
	app->canvas.selected = NULL;
	app->canvas.n_selected = 0;
	if (l != NULL) {
		app->canvas.selected = st_xmalloc(sizeof *app->canvas.selected);
		app->canvas.selected[0] = l;
		app->canvas.n_selected = 1;
		st_rect r = app->panel_rect[ST_PANEL_CANVAS];
		st_canvas_reveal(&app->canvas, l, r.w - 2, r.h - 2);
	}
	app->params.row = app->params.top = 0;
}

void
st_app_confirm(st_app *app, const char *question, const char *choices, const char *const *labels,
               st_confirm_fn done, void *arg)
{
	if (app->overlay == ST_OVERLAY_CONFIRM) {
		if (app->n_queued == 4) {
			/* No room to wait: the choice that loses nothing. */
			if (done)
				done(app, choices[strlen(choices) - 1], arg);
			return;
		}
		int q = app->n_queued++;
		app->queued[q].question = st_xstrdup(question);
		snprintf(app->queued[q].choices, sizeof app->queued[q].choices, "%s", choices);
		for (int i = 0; i < 4; i++)
			snprintf(app->queued[q].labels[i], sizeof app->queued[q].labels[i], "%s",
			         labels && i < (int)strlen(choices) ? labels[i] : "");
		app->queued[q].done = done;
		app->queued[q].arg = arg;
		return;
	}
	snprintf(app->confirm_question, sizeof app->confirm_question, "%s", question);
	snprintf(app->confirm_choices, sizeof app->confirm_choices, "%s", choices);
	for (int i = 0; i < 4; i++)
		snprintf(app->confirm_labels[i], sizeof app->confirm_labels[i], "%s",
		         labels && i < (int)strlen(choices) ? labels[i] : "");
	app->confirm_done = done;
	app->confirm_arg = arg;
	app->overlay = ST_OVERLAY_CONFIRM;
}

void
st_app_next_question(st_app *app)
{
	if (app->overlay != ST_OVERLAY_NONE || app->n_queued == 0 || app->quit)
		return;
	char *question = app->queued[0].question;
	char copies[4][64];
	const char *labels[4];
	for (int i = 0; i < 4; i++) {
		memcpy(copies[i], app->queued[0].labels[i], sizeof copies[i]);
		labels[i] = copies[i];
	}
	char choices[16];
	snprintf(choices, sizeof choices, "%s", app->queued[0].choices);
	st_confirm_fn done = app->queued[0].done;
	void *arg = app->queued[0].arg;
	app->n_queued--;
	memmove(&app->queued[0], &app->queued[1], sizeof app->queued[0] * (size_t)app->n_queued);
	st_app_confirm(app, question, choices, labels, done, arg);
	free(question);
}

void
st_app_prompt(st_app *app, const char *question, const char *initial, st_prompt_fn done, void *arg)
{
	snprintf(app->prompt_question, sizeof app->prompt_question, "%s", question);
	st_field_set(&app->prompt, initial);
	app->prompt_done = done;
	app->prompt_arg = arg;
	app->overlay = ST_OVERLAY_PROMPT;
}

void
st_app_pick(st_app *app, const char *title, const char *const *items, int n, int current, st_prompt_fn done,
            void *arg)
{
	st_app_pick_close(app);
	snprintf(app->pick_title, sizeof app->pick_title, "%s", title);
	app->pick_items = st_xcalloc((size_t)(n > 0 ? n : 1), sizeof *app->pick_items);
	for (int i = 0; i < n; i++)
		app->pick_items[i] = st_xstrdup(items[i]);
	app->n_pick_items = n;
	app->pick_row = current >= 0 && current < n ? current : 0;
	app->pick_top = 0;
	app->pick_done = done;
	app->pick_arg = arg;
	app->overlay = ST_OVERLAY_PICK;
}

void
st_app_pick_close(st_app *app)
{
	for (int i = 0; i < app->n_pick_items; i++)
		free(app->pick_items[i]);
	free(app->pick_items);
	app->pick_items = NULL;
	app->n_pick_items = 0;
	if (app->overlay == ST_OVERLAY_PICK)
		app->overlay = ST_OVERLAY_NONE;
}

/* ---- the file on disk ---- */

static long long
disk_time(const struct stat *st)
{
	return (long long)st->st_mtim.tv_sec * 1000000000LL + st->st_mtim.tv_nsec;
}

static void
remember_disk(st_app *app)
{
	struct stat st;
	if (app->path != NULL && stat(app->path, &st) == 0) {
		app->disk_mtime = disk_time(&st);
		app->disk_size = (long long)st.st_size;
		app->disk_ino = (unsigned long long)st.st_ino;
	} else {
		app->disk_mtime = 0;
		app->disk_size = -1;
	}
	app->disk_warned = false;
}

bool
st_app_disk_changed(st_app *app)
{
	struct stat st;
	if (app->path == NULL || stat(app->path, &st) != 0)
		return false;
	/* A save by another program replaces the file (a new inode) or at least
	 * touches it; times in nanoseconds catch two saves in one second. */
	return disk_time(&st) != app->disk_mtime || (long long)st.st_size != app->disk_size ||
	       (unsigned long long)st.st_ino != app->disk_ino;
}

static void start_journal(st_app *app);

/* After "save as": the journal and its lock follow the model to its new
 * file, and the session is read-only only if another Strata has that one. */
static void
follow_path(st_app *app)
{
	if (app->journal != NULL)
		st_journal_close(app->journal, true); /* this session's edits are saved */
	long other = 0;
	char err[512];
	app->journal = st_journal_open(app->path, &other, err, sizeof err);
	app->journal_started = false;
	app->read_only = app->journal == NULL && other != 0;
	if (app->journal != NULL)
		start_journal(app);
	else if (!app->read_only)
		st_app_message(app, ST_SEVERITY_WARNING, "no journal, so a crash would lose edits: %s", err);
	st_session_set_journal(app->session, app->journal);
}

static int
save_now(st_app *app, const char *path)
{
	char *argv[] = { (char *)"save", (char *)path };
	char err[512];
	if (app->read_only && path == NULL) {
		st_app_message(app, ST_SEVERITY_ERROR,
		               "opened read-only (another Strata has it): save under another name with :w FILE");
		return -1;
	}
	if (st_session_exec(app->session, path ? 2 : 1, argv, err, sizeof err) != 0) {
		st_app_message(app, ST_SEVERITY_ERROR, "not saved: %s", err);
		return -1;
	}
	if (path != NULL && (app->path == NULL || strcmp(path, app->path) != 0)) {
		free(app->path);
		app->path = st_xstrdup(path);
		follow_path(app);
	}
	remember_disk(app);
	st_app_message(app, ST_SEVERITY_INFO, "saved %s%s", app->path,
	               app->read_only ? " (another Strata has it open too: read-only here)" : "");
	return 0;
}

/* What the session's commands say ("added conv_2 (a copy of conv_1)")
 * goes to the hint line. */
static void
print_message(void *user, const char *text)
{
	st_app_message(user, ST_SEVERITY_INFO, "%s", text);
}

/* A model without positions (generated, imported) has every glyph on one
 * spot: lay it out, as a view of the model rather than an edit. */
static void
place_if_unplaced(st_graph *g)
{
	bool one_spot = g->n_layers > 1;
	for (int i = 1; i < g->n_layers && one_spot; i++)
		one_spot = g->layers[i]->x == g->layers[0]->x && g->layers[i]->y == g->layers[0]->y;
	if (!one_spot)
		return;
	int *xy = st_layout_graph(g);
	for (int i = 0; i < g->n_layers; i++) {
		g->layers[i]->x = xy[2 * i];
		g->layers[i]->y = xy[2 * i + 1];
	}
	free(xy);
}

/* Reads the model again from disk in place of this session's (its edits
 * and undo history go). On a file that no longer loads, nothing changes. */
static int
reload(st_app *app)
{
	if (app->path == NULL) {
		st_app_message(app, ST_SEVERITY_ERROR, "this model has never been saved: nothing to reload");
		return -1;
	}
	st_diag d;
	st_diag_init(&d);
	st_graph *g = st_model_load(app->path, app->registry, &d);
	if (g == NULL) {
		const st_diag_item *it = d.count ? &d.items[0] : NULL;
		if (it != NULL && it->line > 0)
			st_app_message(app, ST_SEVERITY_ERROR, "not reloaded: %s:%d:%d: %s", app->path, it->line, it->col,
			               it->text);
		else
			st_app_message(app, ST_SEVERITY_ERROR, "not reloaded: %s: %s", app->path,
			               it ? it->text : "cannot be read");
		st_diag_free(&d);
		return -1;
	}
	st_diag_free(&d);
	st_graph_check(g);
	place_if_unplaced(g);
	/* Nothing may point into the old graph once it is gone. */
	st_session *old = app->session;
	app->session = st_session_new(g, app->path);
	st_session_set_print(app->session, print_message, app);
	if (app->journal != NULL) {
		start_journal(app);
		st_session_set_journal(app->session, app->journal);
	}
	app->canvas.n_selected = 0;
	app->canvas.connect_from = NULL;
	app->canvas.connect_output = -1;
	app->canvas.terminal = -1;
	app->dragging = false;
	app->drag_hit = (st_canvas_hit){ NULL, -1, -1 };
	app->canvas.cursor = NULL;
	st_app_focus_layer(app, g->n_layers ? g->layers[0] : NULL);
	st_session_free(old);
	remember_disk(app);
	st_app_message(app, ST_SEVERITY_INFO, "reloaded %s from disk", app->path);
	return 0;
}

/* :import FILE.onnx [MODEL]: the ONNX model becomes MODEL (and its weights
 * folder beside it), which the editor then opens in place of this one. */
static int
import_onnx(st_app *app, int argc, char **argv)
{
	if (argc < 2 || argc > 3) {
		st_app_message(app, ST_SEVERITY_ERROR, "import takes FILE.onnx [MODEL]");
		return -1;
	}
	if (st_session_dirty(app->session)) {
		st_app_message(app, ST_SEVERITY_ERROR,
		               "this model has unsaved changes: save them (:w) or drop them (:e!) before importing");
		return -1;
	}
	char *model = argc == 3 ? st_xstrdup(argv[2]) : st_onnx_default_model_path(argv[1]);
	char *weights = st_onnx_default_weights_path(model);
	st_onnx_file_options fo = { .default_dim = 1, .place = place_if_unplaced };
	st_onnx_import_summary sum;
	st_diag d;
	st_diag_init(&d);
	int rc = st_onnx_import_file(argv[1], model, weights, app->registry, &fo, &sum, &d);
	if (rc != 0) {
		const char *why = "it cannot be read";
		for (int i = 0; i < d.count; i++) {
			if (d.items[i].severity == ST_SEVERITY_ERROR) {
				why = d.items[i].text;
				break;
			}
		}
		st_app_message(app, ST_SEVERITY_ERROR, "not imported: %s", why);
	} else {
		free(app->path);
		app->path = st_xstrdup(model);
		follow_path(app);
		rc = reload(app);
		if (rc == 0)
			st_app_message(app, sum.n_placeholders ? ST_SEVERITY_WARNING : ST_SEVERITY_INFO,
			               "imported %s into %s (weights in %s): %d layers%s", argv[1], model, weights, sum.n_layers,
			               sum.n_placeholders ? ", with operators Strata has no layer for (see the checks)" : "");
	}
	st_diag_free(&d);
	free(model);
	free(weights);
	return rc;
}

static void
overwrite_answer(st_app *app, char choice, void *arg)
{
	bool then_quit = arg != NULL;
	if (choice == 'o') {
		if (save_now(app, NULL) == 0 && then_quit)
			app->quit = true;
	} else if (choice == 'r')
		reload(app);
	else
		st_app_message(app, ST_SEVERITY_INFO, "not saved; :w FILE saves this version under another name");
}

/* Saves, first asking when someone else changed the file since (1: asked;
 * with then_quit, overwriting also quits). */
static int
save_then(st_app *app, const char *path, bool then_quit)
{
	if (path == NULL && st_app_disk_changed(app)) {
		static const char *const labels[] = { "overwrite it with this version",
			                              "reload theirs, dropping these edits", "cancel" };
		st_app_confirm(app, "The model changed on disk since it was opened. Overwrite it with this version?",
		               "orc", labels, overwrite_answer, then_quit ? app : NULL);
		return 1;
	}
	return save_now(app, path);
}

static int
save(st_app *app, const char *path)
{
	return save_then(app, path, false);
}

static void
quit_answer(st_app *app, char choice, void *arg)
{
	(void)arg;
	if (choice == 'y') {
		if (save_then(app, NULL, true) == 0)
			app->quit = true;
	} else if (choice == 'n') {
		/* Leaving without saving is a choice: the journal goes too. */
		if (app->journal != NULL) {
			st_journal_close(app->journal, true);
			app->journal = NULL;
			st_session_set_journal(app->session, NULL);
		}
		app->quit = true;
	}
}

static void
quit(st_app *app, bool force)
{
	if (force || !st_session_dirty(app->session)) {
		if (force && app->journal != NULL) {
			st_journal_close(app->journal, true);
			app->journal = NULL;
			st_session_set_journal(app->session, NULL);
		}
		app->quit = true;
		return;
	}
	static const char *const labels[] = { "save and quit", "quit without saving", "cancel" };
	st_app_confirm(app, "Save the changes before quitting?", "ync", labels, quit_answer, NULL);
}

/* ---- commands ---- */

static void
place_all(st_app *app)
{
	st_graph *g = st_app_graph(app);
	int *xy = st_layout_graph(g);
	/* One "move" with every layer: the whole layout undoes in one step. */
	int argc = 1 + 3 * g->n_layers;
	char **argv = st_xcalloc((size_t)argc + 1, sizeof *argv);
	argv[0] = st_xstrdup("move");
	for (int i = 0; i < g->n_layers; i++) {
		argv[1 + 3 * i] = st_xstrdup(g->layers[i]->name);
		argv[2 + 3 * i] = st_xasprintf("%d", xy[2 * i]);
		argv[3 + 3 * i] = st_xasprintf("%d", xy[2 * i + 1]);
	}
	if (g->n_layers > 0) {
		st_app_exec_words(app, argv, argc);
	} else {
		free(argv[0]);
		free(argv);
	}
	free(xy);
	st_app_message(app, ST_SEVERITY_INFO, "laid out %d layers", g->n_layers);
}

static int session_exec(st_app *app, int argc, char **argv);

int
st_app_expand(st_app *app, const st_layer *l)
{
	if (l == NULL) {
		st_app_message(app, ST_SEVERITY_ERROR, "select the layer to expand on the canvas, or name it: :expand LAYER");
		return -1;
	}
	/* The parts take the layer's place in the model's order. */
	int index = l->index;
	st_graph *g = st_app_graph(app);
	int before = g->n_layers;
	char *words[] = { st_xstrdup("expand"), st_xstrdup(l->name) };
	int rc = session_exec(app, 2, words);
	free(words[0]);
	free(words[1]);
	if (rc != 0)
		return -1;
	st_app_message(app, ST_SEVERITY_INFO, "expanded into %d layers (u undoes it)", g->n_layers - before + 1);
	app->focus = ST_PANEL_CANVAS;
	st_app_focus_layer(app, index < g->n_layers ? g->layers[index] : NULL);
	return 0;
}

static bool
editor_command(st_app *app, int argc, char **argv, int *rc)
{
	const char *c = argv[0];
	*rc = 0;
	if (strcmp(c, "w") == 0 || strcmp(c, "write") == 0 || strcmp(c, "save") == 0) {
		*rc = save(app, argc > 1 ? argv[1] : NULL) < 0 ? -1 : 0;
	} else if (strcmp(c, "q") == 0 || strcmp(c, "quit") == 0) {
		quit(app, false);
	} else if (strcmp(c, "q!") == 0) {
		quit(app, true);
	} else if (strcmp(c, "wq") == 0) {
		if (save_then(app, NULL, true) == 0)
			app->quit = true;
	} else if (strcmp(c, "x") == 0) {
		if (!st_session_dirty(app->session) || save_then(app, NULL, true) == 0)
			app->quit = true;
	} else if (strcmp(c, "e!") == 0) {
		*rc = reload(app);
	} else if (strcmp(c, "import") == 0) {
		*rc = import_onnx(app, argc, argv);
	} else if (strcmp(c, "layout") == 0) {
		place_all(app);
	} else if (strcmp(c, "toggle") == 0) {
		bool *flag = NULL;
		if (argc == 2 && strcmp(argv[1], "shapes") == 0)
			flag = &app->canvas.show_shapes;
		else if (argc == 2 && strcmp(argv[1], "grid") == 0)
			flag = &app->canvas.show_grid;
		else if (argc == 2 && strcmp(argv[1], "minimap") == 0)
			flag = &app->canvas.show_minimap;
		if (flag == NULL) {
			st_app_message(app, ST_SEVERITY_ERROR, "toggle takes shapes, grid or minimap");
			*rc = -1;
		} else {
			*flag = !*flag;
			st_app_message(app, ST_SEVERITY_INFO, "%s %s", argv[1], *flag ? "shown" : "hidden");
		}
	} else if (strcmp(c, "theme") == 0) {
		if (argc < 2) {
			int n;
			char **names = st_theme_list(&n);
			st_buf b;
			st_buf_init(&b);
			for (int i = 0; i < n; i++) {
				st_buf_printf(&b, "%s%s", i ? ", " : "", names[i]);
				free(names[i]);
			}
			free(names);
			st_app_message(app, ST_SEVERITY_INFO, "themes: %s", b.data ? b.data : "(none)");
			st_buf_free(&b);
		} else {
			st_diag d;
			st_diag_init(&d);
			st_theme *t = st_theme_load(argv[1], &d);
			if (t == NULL) {
				st_app_message(app, ST_SEVERITY_ERROR, "%s", d.count ? d.items[0].text : "no such theme");
				*rc = -1;
			} else {
				st_theme_free(app->theme);
				app->theme = t;
				app->redraw_all = true;
				st_app_message(app, ST_SEVERITY_INFO, "theme %s", argv[1]);
			}
			st_diag_free(&d);
		}
	} else if (strcmp(c, "find") == 0 || strcmp(c, "goto") == 0) {
		st_layer *l = argc > 1 ? st_graph_find(st_app_graph(app), argv[1]) : NULL;
		if (l == NULL) {
			st_app_message(app, ST_SEVERITY_ERROR, "no layer '%s'", argc > 1 ? argv[1] : "");
			*rc = -1;
		} else {
			app->focus = ST_PANEL_CANVAS;
			st_app_focus_layer(app, l);
		}
	} else if (strcmp(c, "expand") == 0 && argc <= 2) {
		const st_layer *l = argc == 1 ? st_app_current(app) : st_graph_find(st_app_graph(app), argv[1]);
		if (argc == 2 && l == NULL)
			return false; /* the session says what is wrong with the name */
		*rc = st_app_expand(app, l);
	} else if (strcmp(c, "docs") == 0) {
		app->overlay = ST_OVERLAY_DOCS;
		app->docs_top = 0;
		free(app->docs_type);
		app->docs_type = argc > 1 ? st_xstrdup(argv[1]) : NULL;
		/* A block has no page: its description stands in. */
		const st_block_type *b = argc > 1 ? st_registry_find_block(app->registry, argv[1]) : NULL;
		if (b != NULL && st_registry_find_layer(app->registry, argv[1]) == NULL) {
			free(app->docs_text);
			app->docs_text = st_block_describe(app->registry, b);
		}
	} else if (strcmp(c, "plugins") == 0) {
		app->overlay = ST_OVERLAY_PLUGINS;
		app->plugins_row = 0;
	} else if (strcmp(c, "report") == 0) {
		if (argc > 2) {
			st_app_message(app, ST_SEVERITY_ERROR, "report takes one file at most (compare takes several)");
			*rc = -1;
		} else {
			*rc = st_report_open(app, argc > 1 ? argv[1] : NULL);
		}
	} else if (strcmp(c, "compare") == 0) {
		if (argc < 3) {
			st_app_message(app, ST_SEVERITY_ERROR, "compare takes two reports or more: compare FILE FILE...");
			*rc = -1;
		} else {
			*rc = st_compare_open(app, argc - 1, argv + 1);
		}
	} else if (strcmp(c, "heat") == 0) {
		*rc = st_heat_toggle(app);
	} else if (strcmp(c, "dashboard") == 0) {
		*rc = st_dashboard_open(app);
	} else if (strcmp(c, "analyze") == 0 || strcmp(c, "analyse") == 0) {
		*rc = st_analysis_open(app);
	} else if (strcmp(c, "input") == 0) {
		*rc = st_analysis_input(app, argc, argv);
	} else if (strcmp(c, "graphics") == 0) {
		*rc = st_analysis_graphics(app, argc > 1 ? argv[1] : NULL);
	} else if (strcmp(c, "edit") == 0 && argc == 1) {
		/* Leaving a view stops its worker (the main loop sees to it). */
		app->view = ST_VIEW_EDIT;
		*rc = 0;
	} else if (strcmp(c, "keys") == 0 || strcmp(c, "help") == 0) {
		if (strcmp(c, "help") == 0 && argc > 1)
			return false; /* the session's help COMMAND */
		app->overlay = ST_OVERLAY_HELP;
		app->help_top = 0;
	} else {
		return false;
	}
	return true;
}

int
st_app_exec(st_app *app, int argc, char **argv)
{
	if (argc == 0)
		return 0;
	int rc;
	if (editor_command(app, argc, argv, &rc))
		return rc;
	return session_exec(app, argc, argv);
}

/* Runs an edit command of the session, then drops what it took away from
 * the canvas's hands. */
static int
session_exec(st_app *app, int argc, char **argv)
{
	char err[1024];
	if (st_session_exec(app->session, argc, argv, err, sizeof err) != 0) {
		st_app_message(app, ST_SEVERITY_ERROR, "%s: %s", argv[0], err);
		return -1;
	}
	/* A layer that went away (delete, undo of an add) cannot stay under
	 * the cursor, in the selection or as the source of a link being made:
	 * the next edit may free it. */
	st_graph *g = st_app_graph(app);
	if (app->canvas.cursor != NULL && ((const st_layer *)app->canvas.cursor)->graph != g)
		st_app_focus_layer(app, g->n_layers ? g->layers[g->n_layers - 1] : NULL);
	if (app->canvas.connect_from != NULL && app->canvas.connect_from->graph != g) {
		app->canvas.connect_from = NULL;
		app->canvas.connect_output = -1;
		app->canvas.terminal = -1;
	}
	if (app->drag_hit.layer != NULL && app->drag_hit.layer->graph != g)
		app->drag_hit = (st_canvas_hit){ NULL, -1, -1 };
	int keep = 0;
	for (int i = 0; i < app->canvas.n_selected; i++) {
		if (app->canvas.selected[i]->graph == g)
			app->canvas.selected[keep++] = app->canvas.selected[i];
	}
	app->canvas.n_selected = keep;
	return 0;
}

int
st_app_command(st_app *app, const char *line)
{
	char **argv;
	int argc;
	char err[256];
	if (st_split_words(line, &argv, &argc, err, sizeof err) != 0) {
		st_app_message(app, ST_SEVERITY_ERROR, "%s", err);
		return -1;
	}
	return st_app_exec_words(app, argv, argc);
}

int
st_app_exec_words(st_app *app, char **argv, int argc)
{
	int rc = st_app_exec(app, argc, argv);
	for (int i = 0; i < argc; i++)
		free(argv[i]);
	free(argv);
	return rc;
}

/* ---- start and end ---- */

/* From here on the journal holds this session's edits (and what an
 * earlier one left is gone). */
static void
start_journal(st_app *app)
{
	if (app->journal == NULL)
		return;
	char err[256];
	if (st_journal_start(app->journal, err, sizeof err) != 0)
		st_app_message(app, ST_SEVERITY_WARNING, "the journal cannot be written, so a crash would lose "
		                                         "edits: %s", err);
	app->journal_started = true;
}

static void
restore_answer(st_app *app, char choice, void *arg)
{
	char *script = arg;
	app->pending_script = NULL;
	if (choice == 'q') {
		/* Nothing decided: the edits wait in the journal for the next start. */
		free(script);
		app->quit = true;
		return;
	}
	start_journal(app);
	if (choice == 'r') {
		st_diag d;
		st_diag_init(&d);
		int rc = st_session_run_script(app->session, script, "journal", &d);
		if (rc != 0)
			st_app_message(app, ST_SEVERITY_ERROR, "restoring stopped: %s",
			               d.count ? d.items[0].text : "?");
		else
			st_app_message(app, ST_SEVERITY_INFO, "restored the unsaved edits; :w saves them");
		st_diag_free(&d);
		st_graph *g = st_app_graph(app);
		st_app_focus_layer(app, g->n_layers ? g->layers[0] : NULL);
	} else {
		st_app_message(app, ST_SEVERITY_INFO, "the unsaved edits were discarded");
	}
	free(script);
}

static void
lock_answer(st_app *app, char choice, void *arg)
{
	(void)arg;
	if (choice == 'q') {
		app->quit = true;
	} else if (choice == 'e') {
		/* Editing anyway: this session keeps no journal, as the other one does. */
		app->read_only = false;
		st_app_message(app, ST_SEVERITY_WARNING,
		               "editing while another Strata has the model open: the last save wins");
	} else {
		st_app_message(app, ST_SEVERITY_INFO, "read-only: :w FILE saves a copy under another name");
	}
}

/* What the crash handler of the last session left (tui-main.c): the
 * plugin's name, its file and the signal, a line each; the report is
 * removed once read. NULL when there is none. Caller frees. */
static char *
take_crash_report(void)
{
	char *path = st_state_file("crashed-plugin");
	if (path == NULL)
		return NULL;
	char *text = st_read_file(path, NULL);
	if (text != NULL)
		unlink(path);
	free(path);
	if (text != NULL && (text[0] == '\0' || text[0] == '\n')) {
		free(text);
		return NULL;
	}
	return text;
}

static void
crash_answer(st_app *app, char choice, void *arg)
{
	(void)arg;
	if (choice != 'd') {
		st_app_message(app, ST_SEVERITY_INFO, "%s loads again from the next start", app->crashed_plugin);
		return;
	}
	st_config *cfg = &app->config;
	cfg->disabled_plugins = st_xreallocarray(cfg->disabled_plugins, (size_t)cfg->n_disabled_plugins + 1,
	                                         sizeof *cfg->disabled_plugins);
	cfg->disabled_plugins[cfg->n_disabled_plugins++] = st_xstrdup(app->crashed_plugin);
	char err[256];
	if (st_config_save(cfg, err, sizeof err) != 0)
		st_app_message(app, ST_SEVERITY_ERROR, "%s", err);
	else
		st_app_message(app, ST_SEVERITY_INFO, "%s is disabled (F3 enables it again)", app->crashed_plugin);
}

st_app *
st_app_new(const st_tui_options *opt, st_diag *d)
{
	st_app *app = st_xcalloc(1, sizeof *app);
	st_config_defaults(&app->config);
	st_config_load(&app->config, d); /* a bad config is reported and ignored */
	const char *theme = opt->theme ? opt->theme : app->config.theme;
	app->theme = theme ? st_theme_load(theme, d) : st_theme_load("dark", d);
	if (app->theme == NULL)
		app->theme = st_theme_default();
	st_keymap_init(&app->keymap, st_actions, st_n_actions);
	st_keymap_load(&app->keymap, d);
	app->canvas.show_shapes = app->config.show_shapes;
	app->canvas.show_grid = app->config.show_grid;
	app->canvas.connect_output = -1;
	app->canvas.terminal = -1;
	app->focus = ST_PANEL_CANVAS;

	/* Plugins: the usual search path, extra folders, minus disabled ones,
	 * and minus one that crashed the last session (the user decides below
	 * whether for good). */
	app->registry = st_registry_new();
	for (int i = 0; i < app->config.n_disabled_plugins; i++)
		st_registry_disable(app->registry, app->config.disabled_plugins[i]);
	char *crashed = take_crash_report();
	char *crashed_file = NULL, *crashed_signal = NULL;
	if (crashed != NULL) {
		/* The report: the plugin's name (or file), its file, the signal. */
		crashed_file = strchr(crashed, '\n');
		if (crashed_file != NULL) {
			*crashed_file++ = '\0';
			crashed_signal = strchr(crashed_file, '\n');
			if (crashed_signal != NULL) {
				*crashed_signal++ = '\0';
				crashed_signal[strcspn(crashed_signal, "\n")] = '\0';
			}
		}
		st_registry_disable(app->registry, crashed);
		if (crashed_file != NULL && *crashed_file)
			st_registry_disable(app->registry, crashed_file);
	}
	st_registry_load_default(app->registry);
	for (int i = 0; i < app->config.n_plugin_paths; i++)
		st_registry_load_dir(app->registry, app->config.plugin_paths[i]);

	app->path = opt->model ? st_xstrdup(opt->model) : NULL;
	st_graph *g = NULL;
	struct stat st;
	bool exists = app->path && stat(app->path, &st) == 0;
	if (exists) {
		g = st_model_load(app->path, app->registry, d);
		if (g == NULL) {
			free(crashed);
			st_app_free(app);
			return NULL;
		}
	} else {
		g = st_graph_new(app->registry);
	}
	st_graph_check(g);
	place_if_unplaced(g);
	app->session = st_session_new(g, app->path);
	st_session_set_print(app->session, print_message, app);
	remember_disk(app);
	app->canvas.cursor = g->n_layers ? g->layers[0] : NULL;
	if (!exists && app->path)
		st_app_message(app, ST_SEVERITY_INFO, "new model %s: a to add layers, :w to save", app->path);

	if (crashed != NULL) {
		char *q = st_xasprintf("The last session ended in a crash inside the plugin %s (%s, signal %s). "
		                       "It is not loaded this time. Disable it for good?",
		                       crashed, crashed_file ? crashed_file : "?",
		                       crashed_signal && *crashed_signal ? crashed_signal : "?");
		static const char *const labels[] = { "disable it (kept in config.json)", "load it again next time" };
		app->crashed_plugin = st_xstrdup(crashed);
		st_app_confirm(app, q, "dk", labels, crash_answer, NULL);
		free(q);
		free(crashed);
	}

	/* Another Strata with this model, or edits a crash left behind. */
	if (app->path != NULL) {
		int pending_n = 0;
		bool changed = false;
		char *pending = st_journal_pending(app->path, &pending_n, &changed);
		long other = 0;
		char err[512];
		app->journal = st_journal_open(app->path, &other, err, sizeof err);
		if (app->journal == NULL && other != 0) {
			app->read_only = true;
			char *q = st_xasprintf("%s is open in another Strata (process %ld).", app->path, other);
			static const char *const labels[] = { "open read-only", "edit anyway", "quit" };
			st_app_confirm(app, q, "req", labels, lock_answer, NULL);
			free(q);
			free(pending);
		} else if (app->journal == NULL) {
			st_app_message(app, ST_SEVERITY_WARNING, "no journal, so a crash would lose edits: %s", err);
			free(pending);
		} else {
			st_session_set_journal(app->session, app->journal);
			if (pending != NULL) {
				char *q = st_xasprintf("A session that did not end cleanly left %d unsaved edit%s%s. "
				                       "Restore them?",
				                       pending_n, pending_n == 1 ? "" : "s",
				                       changed ? " (the file has changed on disk since)" : "");
				/* Esc takes the last choice: the one that loses nothing. */
				static const char *const labels[] = { "restore", "discard",
					                              "quit, keeping them for the next start" };
				app->pending_script = pending;
				st_app_confirm(app, q, "rdq", labels, restore_answer, pending);
				free(q);
			} else {
				start_journal(app);
			}
		}
	}
	return app;
}

void
st_app_free(st_app *app)
{
	if (app == NULL)
		return;
	st_dashboard_close(app); /* its worker stops before the model goes */
	st_analysis_close(app);
	/* A clean end: nothing to restore next time unless edits were left
	 * unsaved, or an earlier session's are still waiting for an answer. */
	if (app->journal != NULL)
		st_journal_close(app->journal, app->journal_started && !st_session_dirty(app->session));
	free(app->pending_script);
	free(app->crashed_plugin);
	for (int i = 0; i < app->n_queued; i++)
		free(app->queued[i].question);
	st_app_pick_close(app);
	st_views_free(app);
	st_session_free(app->session);
	st_registry_free(app->registry);
	st_theme_free(app->theme);
	st_keymap_clear(&app->keymap);
	st_config_clear(&app->config);
	st_screen_free(app->screen);
	st_field_free(&app->command);
	st_field_free(&app->prompt);
	st_field_free(&app->palette.filter);
	st_palette_unfold(app);
	st_field_free(&app->params.edit);
	st_params_xwn_free(app);
	free(app->canvas.selected);
	free(app->docs_text);
	free(app->docs_type);
	free(app->path);
	free(app);
}
