/* Unit tests: the editor's views as the screen model shows them: the title
 * line, palette, parameter form, type-check list, help, command line, quit
 * question, small terminals and the ASCII tier, driven by keys and commands
 * without a terminal. */
#include "config.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"
#include "tui-helpers.h"

/* ---- an application over a copy of an example, in a private home ---- */

/* The folder of the running test: home, config, state and the model. */
static char *test_dir;

static void
private_home(void)
{
	test_dir = tui_test_home("tui-app");
}

/* The model file of the test: a copy of examples/EXAMPLE, or none yet when
 * example is NULL (a new model). Caller frees. */
static char *
model_path(const char *example)
{
	char *model = st_xasprintf("%s/model.strata.json", test_dir);
	if (example == NULL)
		return model;
	char *src = st_xasprintf("%s/examples/%s", getenv("top_srcdir"), example);
	size_t len;
	char *text = st_read_file(src, &len);
	cr_assert_not_null(text, "cannot read %s (is top_srcdir set?)", src);
	char err[256];
	cr_assert_eq(st_write_file_atomic(model, text, len, err, sizeof err), 0, "%s", err);
	free(text);
	free(src);
	return model;
}

static st_app *
open_app(const char *example, int w, int h)
{
	private_home();
	char *model = model_path(example);
	st_app *app = tui_app_on(model, w, h);
	free(model);
	return app;
}

/* The 10-layer classifier: data, conv1, pool1, conv2, pool2, fc1, drop, fc2, prob, out. */
static st_app *
open_cnn(int w, int h)
{
	return open_app("cnn_classifier.strata.json", w, h);
}

static void
close_app(st_app *app)
{
	st_app_free(app);
	test_remove_dir(test_dir);
	test_dir = NULL;
}

/* ---- keys and screens ---- */

/* Text of row y of the last frame; caller frees. */
static char *
row(st_app *app, int y)
{
	return st_screen_row_text(app->screen, 0, y, app->screen->w);
}

/* Text of a panel's inside (without its border), rows joined by newlines,
 * trailing spaces kept; caller frees. */
static char *
panel(st_app *app, st_panel p)
{
	st_rect r = app->panel_rect[p];
	st_buf b;
	st_buf_init(&b);
	for (int y = r.y + 1; y < r.y + r.h - 1; y++) {
		char *line = st_screen_row_text(app->screen, r.x + 1, y, r.w - 2);
		st_buf_printf(&b, "%s\n", line);
		free(line);
	}
	return b.data ? b.data : st_xstrdup("");
}

#define assert_has(text, needle)                                                                  \
	cr_assert_not_null(strstr((text), (needle)), "'%s' not found in:\n%s", (needle), (text))
#define assert_lacks(text, needle)                                                                \
	cr_assert_null(strstr((text), (needle)), "'%s' unexpectedly found in:\n%s", (needle), (text))

/* Asserts that a fresh frame shows needle somewhere. */
static void
assert_frame_has(st_app *app, const char *needle)
{
	char *s = tui_frame(app);
	assert_has(s, needle);
	free(s);
}

static void
assert_frame_lacks(st_app *app, const char *needle)
{
	char *s = tui_frame(app);
	assert_lacks(s, needle);
	free(s);
}

static st_layer *
layer(st_app *app, const char *name)
{
	st_layer *l = st_graph_find(st_app_graph(app), name);
	cr_assert_not_null(l, "no layer %s", name);
	return l;
}

/* A layer's integer parameter as the graph holds it. */
static int64_t
int_param(st_app *app, const char *name, const char *param)
{
	st_layer *l = layer(app, name);
	int p = st_params_find(l->type->desc->params, l->type->desc->n_params, param);
	cr_assert(p >= 0, "%s has no parameter %s", name, param);
	return l->params.values[p].i;
}

/* Puts the parameter form's highlight on a parameter of the current layer. */
static void
params_go_to(st_app *app, const char *param)
{
	const st_layer *l = st_app_current(app);
	cr_assert_not_null(l);
	int p = st_params_find(l->type->desc->params, l->type->desc->n_params, param);
	cr_assert(p >= 0, "%s has no parameter %s", l->name, param);
	tui_press(app, "3");
	cr_assert_eq(app->focus, ST_PANEL_PARAMS);
	for (int i = 0; i < p; i++)
		tui_press(app, "j");
	cr_assert_eq(app->params.row, p);
}

/* Whether every byte of the screen is ASCII. */
static void
assert_ascii(st_app *app, const char *what)
{
	char *s = tui_frame(app);
	for (const char *p = s; *p; p++)
		cr_assert((unsigned char)*p < 0x80, "%s: byte 0x%02x at offset %td in:\n%s", what, (unsigned char)*p,
		          p - s, s);
	free(s);
}

/* ---- the title line ---- */

Test(tui_app, title_names_the_file_and_counts_layers)
{
	st_app *app = open_cnn(120, 40);
	st_app_draw(app);
	char *title = row(app, 0);
	assert_has(title, "model.strata.json");
	assert_has(title, "EDIT ─ 10 layers");
	assert_has(title, "fp32-nchw");
	assert_lacks(title, "[+]");
	assert_lacks(title, "error");
	assert_lacks(title, "[read-only]");
	free(title);
	close_app(app);
}

Test(tui_app, title_marks_an_edit_and_counts_errors)
{
	st_app *app = open_cnn(120, 40);
	/* Unlinking conv1's mandatory input is one edit and one error. */
	cr_assert_eq(st_app_command(app, "disconnect conv1"), 0);
	st_app_draw(app);
	char *title = row(app, 0);
	assert_has(title, "model.strata.json [+]");
	assert_has(title, "EDIT ─ 10 layers, 1 error");
	free(title);
	/* Undone, the model is as read: no mark, no error. */
	cr_assert_eq(st_app_command(app, "undo"), 0);
	st_app_draw(app);
	title = row(app, 0);
	assert_lacks(title, "[+]");
	assert_lacks(title, "error");
	assert_has(title, "EDIT ─ 10 layers");
	free(title);
	close_app(app);
}

Test(tui_app, title_says_read_only_when_another_strata_has_the_model)
{
	private_home();
	char *model = model_path("cnn_classifier.strata.json");
	st_app *first = tui_app_on(model, 120, 40);
	/* The lock now names this process; make it name a live other one. */
	char *dir = st_xasprintf("%s/state/strata/journal", test_dir);
	DIR *d = opendir(dir);
	cr_assert_not_null(d, "no journal folder %s", dir);
	char *lock = NULL;
	for (struct dirent *e; (e = readdir(d)) != NULL;) {
		size_t n = strlen(e->d_name);
		if (n > 5 && strcmp(e->d_name + n - 5, ".lock") == 0)
			lock = st_xasprintf("%s/%s", dir, e->d_name);
	}
	closedir(d);
	cr_assert_not_null(lock, "no lock file in %s", dir);
	char *pid = st_xasprintf("%ld\n", (long)getppid());
	char err[256];
	cr_assert_eq(st_write_file_atomic(lock, pid, strlen(pid), err, sizeof err), 0, "%s", err);

	st_app *second = tui_app_on(model, 120, 40);
	cr_assert(second->read_only);
	cr_assert_eq(second->overlay, ST_OVERLAY_CONFIRM);
	assert_frame_has(second, "is open in another Strata");
	tui_press(second, "r");
	cr_assert_eq(second->overlay, ST_OVERLAY_NONE);
	st_app_draw(second);
	char *title = row(second, 0);
	assert_has(title, "model.strata.json [read-only]");
	free(title);
	st_app_free(second);

	free(pid);
	free(lock);
	free(dir);
	free(model);
	close_app(first);
}

/* ---- the palette ---- */

Test(tui_app, palette_lists_types_by_category)
{
	st_app *app = open_cnn(120, 40);
	tui_press(app, "1");
	cr_assert_eq(app->focus, ST_PANEL_PALETTE);
	st_app_draw(app);
	char *p = panel(app, ST_PANEL_PALETTE);
	/* Headings with their types indented below them. */
	assert_has(p, "▾ Input/Output");
	assert_has(p, "\n  input ");
	assert_has(p, "▾ Pooling");
	char *heading = strstr(p, "▾ Pooling"), *pooling = strstr(p, "\n  pooling ");
	cr_assert(heading != NULL && pooling != NULL && pooling > heading, "pooling is not under its heading:\n%s", p);
	free(p);
	close_app(app);
}

Test(tui_app, palette_filter_shows_only_matching_types)
{
	st_app *app = open_cnn(120, 40);
	tui_press(app, "1");
	tui_type(app, "pool");
	cr_assert(app->palette.typing);
	cr_assert_str_eq(app->palette.filter.text, "pool");
	st_app_draw(app);
	char *p = panel(app, ST_PANEL_PALETTE);
	assert_has(p, "/ pool");
	assert_has(p, "  pooling");
	assert_has(p, "  global_pooling");
	assert_lacks(p, "convolution");
	assert_lacks(p, "Input/Output");
	free(p);
	/* Nothing matches: said so. */
	tui_type(app, "zzz");
	assert_frame_has(app, "no layer type matches");
	/* Esc drops the filter: every group is back. */
	tui_press(app, "<Esc>");
	cr_assert(!app->palette.typing);
	st_app_draw(app);
	p = panel(app, ST_PANEL_PALETTE);
	assert_has(p, "convolution");
	assert_has(p, "Input/Output");
	free(p);
	close_app(app);
}

Test(tui_app, palette_enter_adds_the_filtered_type_as_the_current_layer)
{
	st_app *app = open_cnn(120, 40);
	st_graph *g = st_app_graph(app);
	tui_press(app, "1");
	tui_type(app, "global_poo");
	tui_press(app, "<Enter>");
	cr_assert_eq(g->n_layers, 11);
	st_layer *added = g->layers[10];
	cr_assert_str_eq(added->type_name, "global_pooling");
	cr_assert_eq(st_app_current(app), added);
	cr_assert_eq(app->focus, ST_PANEL_CANVAS);
	cr_assert_str_eq(app->palette.filter.text, "");
	char *s = tui_frame(app);
	assert_has(s, "EDIT ─ 11 layers");
	assert_has(s, "[+]");
	/* The parameter form follows the new layer. */
	char *head = st_xasprintf("%s · global_pooling", added->name);
	assert_has(s, head);
	free(head);
	free(s);
	close_app(app);
}

Test(tui_app, palette_a_adds_the_highlighted_type)
{
	st_app *app = open_cnn(120, 40);
	st_graph *g = st_app_graph(app);
	tui_press(app, "1");
	/* Row 0 is the first heading; the next row its first type. */
	tui_press(app, "j");
	st_app_draw(app);
	char *p = panel(app, ST_PANEL_PALETTE);
	char *second = strchr(p, '\n') + 1;
	cr_assert(strncmp(second, "  input ", 8) == 0, "the second row is not input:\n%s", p);
	free(p);
	tui_press(app, "a");
	cr_assert_eq(g->n_layers, 11);
	cr_assert_str_eq(g->layers[10]->type_name, "input");
	cr_assert_eq(st_app_current(app), g->layers[10]);
	assert_frame_has(app, "EDIT ─ 11 layers");
	close_app(app);
}

/* ---- the parameter form ---- */

Test(tui_app, params_show_the_current_layer)
{
	st_app *app = open_cnn(120, 40);
	cr_assert_eq(st_app_command(app, "find conv1"), 0);
	cr_assert_eq(st_app_current(app), layer(app, "conv1"));
	st_app_draw(app);
	char *p = panel(app, ST_PANEL_PARAMS);
	assert_has(p, "conv1 · convolution");
	assert_has(p, "num_output      16");
	assert_has(p, "kernel          3x3");
	assert_has(p, "padding         same");
	assert_has(p, "activation      relu");
	assert_has(p, "output 1x16x28x28");
	free(p);
	close_app(app);
}

Test(tui_app, params_refuse_an_invalid_value_with_the_reason)
{
	st_app *app = open_cnn(120, 40);
	st_app_command(app, "find conv1");
	params_go_to(app, "num_output");
	tui_press(app, "<Enter>");
	cr_assert(app->params.editing);
	cr_assert_str_eq(app->params.edit.text, "16");
	tui_press(app, "<C-u>");
	tui_type(app, "-4");
	tui_press(app, "<Enter>");
	/* Refused: the field stays open with the text, the graph as it was. */
	cr_assert(app->params.editing);
	cr_assert_str_eq(app->params.edit.text, "-4");
	cr_assert_eq(int_param(app, "conv1", "num_output"), 16);
	cr_assert(!st_session_dirty(app->session));
	char *s = tui_frame(app);
	char *hints = row(app, app->screen->h - 1);
	assert_has(hints, "num_output");
	assert_has(hints, "-4");
	free(hints);
	assert_lacks(s, "[+]");
	free(s);
	/* Esc leaves the field; the value shown is still the old one. */
	tui_press(app, "<Esc>");
	cr_assert(!app->params.editing);
	st_app_draw(app);
	char *p = panel(app, ST_PANEL_PARAMS);
	assert_has(p, "num_output      16");
	free(p);
	close_app(app);
}

Test(tui_app, params_apply_a_valid_value_and_undo_restores_it)
{
	st_app *app = open_cnn(120, 40);
	st_app_command(app, "find conv1");
	params_go_to(app, "num_output");
	tui_press(app, "e");
	tui_press(app, "<C-u>");
	tui_type(app, "24");
	tui_press(app, "<Enter>");
	cr_assert(!app->params.editing);
	cr_assert_eq(int_param(app, "conv1", "num_output"), 24);
	st_app_draw(app);
	char *p = panel(app, ST_PANEL_PARAMS);
	assert_has(p, "num_output      24");
	assert_has(p, "output 1x24x28x28");
	free(p);
	assert_frame_has(app, "24 k3 relu");
	assert_frame_has(app, "[+]");
	/* u from the form undoes the edit. */
	tui_press(app, "u");
	cr_assert_eq(int_param(app, "conv1", "num_output"), 16);
	st_app_draw(app);
	p = panel(app, ST_PANEL_PARAMS);
	assert_has(p, "num_output      16");
	free(p);
	assert_frame_has(app, "16 k3 relu");
	close_app(app);
}

Test(tui_app, params_show_the_network_without_a_layer)
{
	/* A new model: no layer, so the form is the network's. */
	st_app *app = open_app(NULL, 120, 40);
	cr_assert_null(st_app_current(app));
	st_app_draw(app);
	char *title = row(app, 0);
	assert_has(title, "EDIT ─ 0 layers");
	free(title);
	char *p = panel(app, ST_PANEL_PARAMS);
	assert_has(p, "network");
	assert_has(p, "name ");
	assert_has(p, "version ");
	assert_has(p, "tensor_format   fp32-nchw");
	assert_has(p, "weights ");
	free(p);
	/* Edited from the form like a layer's parameter. */
	tui_press(app, "3");
	int at = st_params_find(st_network_params, ST_NET_COUNT, "name");
	cr_assert(at >= 0);
	for (int i = 0; i < at; i++)
		tui_press(app, "j");
	tui_press(app, "<Enter>");
	tui_press(app, "<C-u>");
	tui_type(app, "tiny");
	tui_press(app, "<Enter>");
	st_app_draw(app);
	p = panel(app, ST_PANEL_PARAMS);
	assert_has(p, "tiny");
	free(p);
	close_app(app);
}

Test(tui_app, params_show_the_common_parameters_of_a_selection)
{
	st_app *app = open_cnn(120, 40);
	st_app_command(app, "find conv1");
	/* The selection set directly, as the canvas holds it: this is about the
	 * form, not about how the canvas builds a selection. */
	st_canvas *c = &app->canvas;
	c->selected = st_xreallocarray(c->selected, 2, sizeof *c->selected);
	c->selected[0] = layer(app, "conv1");
	c->selected[1] = layer(app, "conv2");
	c->n_selected = 2;
	st_app_draw(app);
	char *p = panel(app, ST_PANEL_PARAMS);
	assert_has(p, "2 convolution layers");
	assert_has(p, "num_output      (differs)");
	assert_has(p, "kernel          3x3");
	free(p);
	/* An edit of the form goes to both. */
	params_go_to(app, "num_output");
	tui_press(app, "<Enter>");
	cr_assert_str_eq(app->params.edit.text, "");
	tui_type(app, "8");
	tui_press(app, "<Enter>");
	cr_assert_eq(int_param(app, "conv1", "num_output"), 8);
	cr_assert_eq(int_param(app, "conv2", "num_output"), 8);
	st_app_draw(app);
	p = panel(app, ST_PANEL_PARAMS);
	assert_has(p, "num_output      8");
	free(p);
	close_app(app);
}

/* ---- the type-check list ---- */

Test(tui_app, check_list_shows_errors_and_enter_selects_the_layer)
{
	st_app *app = open_cnn(120, 40);
	st_app_draw(app);
	char *p = panel(app, ST_PANEL_CHECK);
	assert_has(p, "no problems");
	free(p);
	st_app_command(app, "disconnect conv1");
	cr_assert_neq(st_app_current(app), layer(app, "conv1"));
	st_app_draw(app);
	p = panel(app, ST_PANEL_CHECK);
	assert_has(p, "✖ conv1");
	assert_has(p, "mandatory inputs are not connected");
	free(p);
	tui_press(app, "4");
	cr_assert_eq(app->focus, ST_PANEL_CHECK);
	tui_press(app, "<Enter>");
	cr_assert_eq(st_app_current(app), layer(app, "conv1"));
	cr_assert_eq(app->focus, ST_PANEL_CANVAS);
	st_app_draw(app);
	p = panel(app, ST_PANEL_PARAMS);
	assert_has(p, "conv1 · convolution");
	free(p);
	close_app(app);
}

/* ---- overlays ---- */

Test(tui_app, help_lists_bindings_and_esc_closes_it)
{
	st_app *app = open_cnn(120, 40);
	tui_press(app, "?");
	cr_assert_eq(app->overlay, ST_OVERLAY_HELP);
	char *s = tui_frame(app);
	assert_has(s, "Key bindings");
	assert_has(s, "<C-s>");
	assert_has(s, "save the model");
	assert_has(s, "canvas");
	free(s);
	tui_press(app, "<Esc>");
	cr_assert_eq(app->overlay, ST_OVERLAY_NONE);
	assert_frame_lacks(app, "Key bindings");
	close_app(app);
}

Test(tui_app, command_line_set_changes_the_glyph)
{
	st_app *app = open_cnn(120, 40);
	assert_frame_has(app, "16 k3 relu");
	tui_press(app, ":");
	cr_assert_eq(app->overlay, ST_OVERLAY_COMMAND);
	tui_type(app, "set conv1 num_output 20");
	st_app_draw(app);
	char *bottom = row(app, app->screen->h - 1);
	assert_has(bottom, ":set conv1 num_output 20");
	free(bottom);
	tui_press(app, "<Enter>");
	cr_assert_eq(app->overlay, ST_OVERLAY_NONE);
	cr_assert_eq(int_param(app, "conv1", "num_output"), 20);
	char *s = tui_frame(app);
	assert_has(s, "20 k3 relu");
	assert_lacks(s, "16 k3 relu");
	free(s);
	/* :undo through the command line. */
	tui_press(app, ":");
	tui_type(app, "undo");
	tui_press(app, "<Enter>");
	cr_assert_eq(int_param(app, "conv1", "num_output"), 16);
	assert_frame_has(app, "16 k3 relu");
	close_app(app);
}

Test(tui_app, command_line_reports_an_unknown_command)
{
	st_app *app = open_cnn(120, 40);
	cr_assert_eq(st_app_command(app, "frobnicate conv1"), -1);
	st_app_draw(app);
	char *bottom = row(app, app->screen->h - 1);
	assert_has(bottom, "unknown command 'frobnicate'");
	free(bottom);
	/* A near miss gets a suggestion. */
	cr_assert_eq(st_app_command(app, "delte conv1"), -1);
	st_app_draw(app);
	bottom = row(app, app->screen->h - 1);
	assert_has(bottom, "did you mean 'delete'");
	free(bottom);
	cr_assert_eq(st_app_graph(app)->n_layers, 10);
	close_app(app);
}

Test(tui_app, command_line_tab_completes_commands_and_layers)
{
	st_app *app = open_cnn(120, 40);
	tui_press(app, ":");
	tui_type(app, "dupl");
	tui_press(app, "<Tab>");
	cr_assert_str_eq(app->command.text, "duplicate ");
	/* Several layers match: the common part, and the choices above the line. */
	tui_type(app, "co");
	tui_press(app, "<Tab>");
	cr_assert_str_eq(app->command.text, "duplicate conv");
	char *s = tui_frame(app);
	char *choices = row(app, app->screen->h - 2), *line = row(app, app->screen->h - 1);
	assert_has(choices, "conv1  conv2");
	assert_has(line, ":duplicate conv");
	free(choices);
	free(line);
	free(s);
	tui_type(app, "2");
	tui_press(app, "<Tab>");
	cr_assert_str_eq(app->command.text, "duplicate conv2 ");
	tui_press(app, "<Enter>");
	cr_assert_eq(st_app_graph(app)->n_layers, 11);
	close_app(app);
}

Test(tui_app, quit_with_unsaved_changes_asks_first)
{
	st_app *app = open_cnn(120, 40);
	st_app_command(app, "set conv1 num_output 20");
	tui_press(app, "q");
	cr_assert(!app->quit);
	cr_assert_eq(app->overlay, ST_OVERLAY_CONFIRM);
	char *s = tui_frame(app);
	assert_has(s, "Save the changes before quitting?");
	assert_has(s, "y save and quit");
	assert_has(s, "n quit without saving");
	assert_has(s, "c cancel");
	free(s);
	/* Esc is the last choice: cancel. */
	tui_press(app, "<Esc>");
	cr_assert(!app->quit);
	cr_assert_eq(app->overlay, ST_OVERLAY_NONE);
	assert_frame_lacks(app, "Save the changes");
	tui_press(app, "q");
	tui_press(app, "n");
	cr_assert(app->quit);
	close_app(app);
}

Test(tui_app, quit_without_changes_does_not_ask)
{
	st_app *app = open_cnn(120, 40);
	tui_press(app, "q");
	cr_assert(app->quit);
	cr_assert_eq(app->overlay, ST_OVERLAY_NONE);
	close_app(app);
}

/* ---- sizes and glyph tiers ---- */

/* Every view the tests reach, drawn once each; check runs after each frame. */
static void
every_view(st_app *app, void (*check)(st_app *app, const char *what))
{
	check(app, "canvas");
	st_app_command(app, "disconnect conv1");
	check(app, "canvas with an error");
	tui_press(app, "1");
	check(app, "palette");
	tui_type(app, "conv");
	check(app, "palette filtered");
	tui_press(app, "<Esc>");
	st_app_command(app, "find conv1");
	tui_press(app, "3");
	check(app, "parameters");
	tui_press(app, "<Enter>");
	check(app, "parameter editing");
	tui_press(app, "<Esc>");
	tui_press(app, "4");
	check(app, "type check");
	tui_press(app, "?");
	check(app, "help");
	tui_press(app, "<Esc>");
	tui_press(app, "<F10>");
	check(app, "menu");
	tui_press(app, "<Esc>");
	tui_press(app, ":");
	tui_type(app, "find c");
	tui_press(app, "<Tab>");
	check(app, "command line");
	tui_press(app, "<Esc>");
	tui_press(app, "q");
	check(app, "quit question");
	tui_press(app, "c");
	st_app_focus_layer(app, NULL);
	check(app, "network");
}

static void
draws_whole_frame(st_app *app, const char *what)
{
	char *s = tui_frame(app);
	char *title = row(app, 0);
	cr_assert(strstr(title, "strata") != NULL || app->overlay == ST_OVERLAY_MENU, "%s: no title:\n%s", what, s);
	free(title);
	assert_lacks(s, "The terminal is");
	free(s);
}

Test(tui_app, everything_draws_at_80x24)
{
	st_app *app = open_cnn(80, 24);
	every_view(app, draws_whole_frame);
	/* At this width the palette only shows while it has the focus. */
	tui_press(app, "2");
	st_app_draw(app);
	cr_assert_eq(app->panel_rect[ST_PANEL_PALETTE].w, 0);
	tui_press(app, "1");
	st_app_draw(app);
	cr_assert_gt(app->panel_rect[ST_PANEL_PALETTE].w, 0);
	close_app(app);
}

Test(tui_app, a_small_terminal_says_the_size_needed)
{
	st_app *app = open_cnn(50, 12);
	char *s = tui_frame(app);
	assert_has(s, "The terminal is 50x12; Strata needs 60x16.");
	assert_has(s, "Enlarge it, or press q to quit.");
	free(s);
	/* Big enough again: the editor is back. */
	st_screen_resize(app->screen, 60, 16);
	s = tui_frame(app);
	assert_lacks(s, "The terminal is");
	assert_has(s, "strata");
	assert_has(s, "2 Canvas");
	free(s);
	close_app(app);
}

Test(tui_app, ascii_tier_writes_only_ascii)
{
	st_app *app = open_cnn(120, 40);
	app->screen->ascii = true;
	every_view(app, assert_ascii);
	close_app(app);
}

Test(tui_app, ascii_tier_at_80x24)
{
	st_app *app = open_cnn(80, 24);
	app->screen->ascii = true;
	every_view(app, assert_ascii);
	close_app(app);
}

/* ---- selecting several, docs from the palette, the file on disk ---- */

Test(tui_app, space_picks_several_layers_as_the_cursor_moves)
{
	st_app *app = open_cnn(120, 40);
	st_app_command(app, "find conv1");
	tui_press(app, "2");
	tui_press(app, "<Space>");
	cr_assert_eq(app->canvas.n_selected, 1, "the first Space keeps the layer selected");
	tui_press(app, "j");
	tui_press(app, "j");
	cr_assert_eq(app->canvas.n_selected, 1, "moving keeps the selection while picking");
	cr_assert_str_eq(st_app_current(app)->name, "conv2");
	tui_press(app, "<Space>");
	cr_assert_eq(app->canvas.n_selected, 2);
	st_app_draw(app);
	char *p = panel(app, ST_PANEL_PARAMS);
	assert_has(p, "2 convolution layers");
	free(p);
	/* Space again takes the cursor's layer out; Esc ends picking. */
	tui_press(app, "<Space>");
	cr_assert_eq(app->canvas.n_selected, 1);
	tui_press(app, "<Esc>");
	cr_assert_eq(app->canvas.n_selected, 0);
	tui_press(app, "k");
	cr_assert_eq(app->canvas.n_selected, 1, "after Esc the selection follows the cursor again");
	cr_assert_str_eq(app->canvas.selected[0]->name, st_app_current(app)->name);
	close_app(app);
}

Test(tui_app, f2_in_the_palette_opens_the_highlighted_types_page)
{
	st_app *app = open_cnn(120, 40);
	tui_press(app, "1");
	tui_type(app, "global");
	tui_press(app, "<F2>");
	cr_assert_eq(app->overlay, ST_OVERLAY_DOCS);
	assert_frame_has(app, "global_pooling");
	tui_press(app, "<Esc>");
	cr_assert_eq(app->overlay, ST_OVERLAY_NONE);
	tui_press(app, "<Esc>"); /* the filter */
	/* ? stays the help screen everywhere but in a text field. */
	tui_press(app, "?");
	cr_assert_eq(app->overlay, ST_OVERLAY_HELP);
	close_app(app);
}

Test(tui_app, a_model_changed_on_disk_is_noticed_and_reloaded)
{
	private_home();
	char *model = model_path("cnn_classifier.strata.json");
	st_app *app = tui_app_on(model, 120, 40);
	st_app_command(app, "set conv1 num_output 12");
	cr_assert(!st_app_disk_changed(app));
	/* Someone else's save: a new file renamed over the model. */
	size_t len;
	char *text = st_read_file(model, &len);
	char *at = strstr(text, "\"num_output\": 32");
	cr_assert_not_null(at);
	memcpy(at, "\"num_output\": 40", 16);
	char err[256];
	cr_assert_eq(st_write_file_atomic(model, text, len, err, sizeof err), 0, "%s", err);
	free(text);
	cr_assert(st_app_disk_changed(app));
	/* Saving asks; cancelling leaves their file alone. */
	cr_assert_eq(st_app_command(app, "w"), 0);
	cr_assert_eq(app->overlay, ST_OVERLAY_CONFIRM);
	tui_press(app, "c");
	text = st_read_file(model, &len);
	assert_has(text, "\"num_output\": 40");
	free(text);
	/* :e! takes theirs, and the edit and its undo go. */
	cr_assert_eq(st_app_command(app, "e!"), 0);
	cr_assert_eq(int_param(app, "conv2", "num_output"), 40);
	cr_assert_eq(int_param(app, "conv1", "num_output"), 16);
	cr_assert(!st_session_dirty(app->session));
	cr_assert_eq(st_session_undo_depth(app->session), 0);
	cr_assert(!st_app_disk_changed(app));
	cr_assert_not_null(st_app_current(app));
	assert_frame_has(app, "reloaded");
	/* A file that no longer loads is not taken. */
	char junk[] = "{ not json";
	cr_assert_eq(st_write_file_atomic(model, junk, sizeof junk - 1, err, sizeof err), 0, "%s", err);
	cr_assert_eq(st_app_command(app, "e!"), -1);
	cr_assert_eq(int_param(app, "conv2", "num_output"), 40);
	assert_frame_has(app, "not reloaded");
	free(model);
	close_app(app);
}

/* The value of a layer's parameter as text. Caller frees. */
static char *
param_text(st_app *app, const char *name, const char *param)
{
	st_layer *l = layer(app, name);
	int p = st_params_find(l->type->desc->params, l->type->desc->n_params, param);
	cr_assert(p >= 0);
	st_buf b;
	st_buf_init(&b);
	st_value_to_text(&l->type->desc->params[p], &l->params.values[p], &b);
	return b.data ? b.data : st_xstrdup("");
}

Test(tui_app, enumerations_and_the_activation_are_picked_from_a_list)
{
	st_app *app = open_cnn(120, 40);
	st_app_command(app, "find conv1");
	params_go_to(app, "padding");
	tui_press(app, "<Enter>");
	cr_assert_eq(app->overlay, ST_OVERLAY_PICK);
	char *s = tui_frame(app);
	assert_has(s, "padding (Enter chooses, Esc keeps it)");
	assert_has(s, "same_lower");
	assert_has(s, "valid");
	free(s);
	cr_assert_str_eq(app->pick_items[app->pick_row], "same", "the list opens on the current value");
	/* Esc keeps the value; a letter jumps, Enter chooses. */
	tui_press(app, "<Esc>");
	cr_assert_eq(app->overlay, ST_OVERLAY_NONE);
	tui_press(app, "<Enter>");
	tui_press(app, "v");
	tui_press(app, "<Enter>");
	cr_assert_eq(app->overlay, ST_OVERLAY_NONE);
	char *v = param_text(app, "conv1", "padding");
	cr_assert_str_eq(v, "valid");
	free(v);
	tui_press(app, "u");
	v = param_text(app, "conv1", "padding");
	cr_assert_str_eq(v, "same");
	free(v);
	/* The activation: none and every loaded one. */
	tui_press(app, "2");
	st_app_command(app, "find conv1");
	tui_press(app, "3");
	for (int i = 0; i < 30; i++)
		tui_press(app, "j"); /* to the last row: relu has no coefficients */
	tui_press(app, "<Enter>");
	cr_assert_eq(app->overlay, ST_OVERLAY_PICK, "the last row is the activation");
	cr_assert_str_eq(app->pick_items[0], "none");
	cr_assert_str_eq(app->pick_items[app->pick_row], "relu");
	tui_press(app, "<Home>");
	tui_press(app, "<Enter>");
	cr_assert_null(layer(app, "conv1")->act.type_name, "none takes the activation away");
	close_app(app);
}

/* ---- what a review found ---- */

Test(tui_app, a_link_being_made_from_a_layer_that_goes_away_is_dropped)
{
	private_home();
	char *model = model_path(NULL);
	st_app *app = tui_app_on(model, 120, 40);
	free(model);
	cr_assert_eq(st_app_command(app, "add input a"), 0);
	cr_assert_eq(st_app_command(app, "add identity b"), 0);
	cr_assert_eq(st_app_command(app, "add identity c"), 0);
	st_app_command(app, "find c");
	tui_press(app, "c");
	cr_assert_not_null(app->canvas.connect_from);
	tui_press(app, "u"); /* undoes the add of c, the source */
	cr_assert_null(app->canvas.connect_from);
	cr_assert_eq(app->canvas.connect_output, -1);
	/* A new edit frees c; nothing may read it after. */
	tui_press(app, "J");
	tui_press(app, "<Tab>");
	tui_press(app, "<Enter>");
	close_app(app);
}

Test(tui_app, folding_a_palette_group_leaves_the_others_as_they_were)
{
	st_app *app = open_cnn(120, 60);
	tui_press(app, "1");
	/* Fold Shape, then Input/Output above it: Shape stays folded. */
	st_app_draw(app);
	for (int i = 0; i < 40; i++) {
		char *p = panel(app, ST_PANEL_PALETTE);
		char *line = st_screen_row_text(app->screen, app->panel_rect[ST_PANEL_PALETTE].x + 1,
		                                app->panel_rect[ST_PANEL_PALETTE].y + 1 + app->palette.row -
		                                    app->palette.top,
		                                20);
		bool on_shape = strstr(line, "Shape") != NULL;
		free(line);
		free(p);
		if (on_shape)
			break;
		tui_press(app, "j");
		st_app_draw(app);
	}
	tui_press(app, "<Enter>");
	tui_press(app, "<Home>");
	for (int i = 0; i < 40; i++)
		tui_press(app, "k");
	tui_press(app, "<Enter>");
	st_app_draw(app);
	char *p = panel(app, ST_PANEL_PALETTE);
	assert_has(p, "▸ Input/Output");
	assert_has(p, "▸ Shape");
	assert_lacks(p, "concatenation");
	assert_has(p, "▾ Pooling");
	free(p);
	close_app(app);
}

Test(tui_app, save_by_its_long_name_and_save_as_keep_the_file_in_view)
{
	private_home();
	char *model = model_path("cnn_classifier.strata.json");
	st_app *app = tui_app_on(model, 120, 40);
	st_app_command(app, "set conv1 num_output 12");
	cr_assert_eq(st_app_command(app, "save"), 0);
	cr_assert(!st_app_disk_changed(app), "the editor's own save is not someone else's change");
	cr_assert(!st_session_dirty(app->session));
	char *other = st_xasprintf("%s/other.strata.json", test_dir);
	st_app_command(app, "set conv1 num_output 14");
	char *cmd = st_xasprintf("save %s", other);
	cr_assert_eq(st_app_command(app, cmd), 0);
	cr_assert_str_eq(app->path, other);
	assert_frame_has(app, "other.strata.json");
	cr_assert(!st_app_disk_changed(app));
	cr_assert_not_null(app->journal, "the journal follows the model to its new file");
	free(cmd);
	free(other);
	free(model);
	close_app(app);
}

Test(tui_app, save_and_quit_over_a_changed_file_quits_once_overwritten)
{
	private_home();
	char *model = model_path("cnn_classifier.strata.json");
	st_app *app = tui_app_on(model, 120, 40);
	st_app_command(app, "set conv1 num_output 12");
	char err[256];
	char text[] = "{\"format\": \"strata-model\", \"version\": 1, \"layers\": []}\n";
	cr_assert_eq(st_write_file_atomic(model, text, sizeof text - 1, err, sizeof err), 0, "%s", err);
	st_app_command(app, "wq");
	cr_assert_eq(app->overlay, ST_OVERLAY_CONFIRM);
	cr_assert(!app->quit);
	tui_press(app, "o");
	cr_assert(app->quit, "overwriting after :wq quits");
	size_t len;
	char *saved = st_read_file(model, &len);
	assert_has(saved, "\"num_output\": 12");
	free(saved);
	free(model);
	close_app(app);
}

Test(tui_app, the_restore_question_left_unanswered_keeps_the_edits)
{
	private_home();
	char *model = model_path("cnn_classifier.strata.json");
	/* A session that ends without saving (as SIGKILL would leave it). */
	st_app *app = tui_app_on(model, 120, 40);
	st_app_command(app, "set conv1 num_output 12");
	int n_pending = 0;
	bool changed;
	char *pending = st_journal_pending(model, &n_pending, &changed);
	cr_assert_not_null(pending);
	free(pending);
	st_app_free(app);
	/* The next one asks; Esc quits and keeps them; so does the end of the
	 * session with the question still open. */
	for (int round = 0; round < 2; round++) {
		app = tui_app_on(model, 120, 40);
		cr_assert_eq(app->overlay, ST_OVERLAY_CONFIRM);
		if (round == 0) {
			tui_press(app, "<Esc>");
			cr_assert(app->quit);
		}
		st_app_free(app);
		pending = st_journal_pending(model, &n_pending, &changed);
		cr_assert_not_null(pending, "round %d lost the edits", round);
		cr_assert_eq(n_pending, 1);
		free(pending);
	}
	app = tui_app_on(model, 120, 40);
	tui_press(app, "r");
	cr_assert_eq(int_param(app, "conv1", "num_output"), 12);
	free(model);
	close_app(app);
}
