/* Unit tests: blocks and expansion in the editor: the palette's Blocks
 * category, a block inserted at the cursor as its chain of layers, its
 * description on F2, and a layer expanded by key and by :expand, all on the
 * screen model without a terminal. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "tui-helpers.h"

static char *home;

/* The editor on a model written from text, in a private home. */
static st_app *
open_model(const char *text, int w, int h)
{
	home = tui_test_home("tui-blocks");
	char *model = st_xasprintf("%s/model.strata.json", home);
	char err[256];
	cr_assert_eq(st_write_file_atomic(model, text, strlen(text), err, sizeof err), 0, "%s", err);
	st_app *app = tui_app_on(model, w, h);
	free(model);
	return app;
}

static void
close_app(st_app *app)
{
	st_app_free(app);
	test_remove_dir(home);
	home = NULL;
}

/* A panel's inside, rows joined by newlines; caller frees. */
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

#define assert_has(text, needle) \
	cr_assert_not_null(strstr((text), (needle)), "'%s' not found in:\n%s", (needle), (text))

static st_layer *
layer(st_app *app, const char *name)
{
	st_layer *l = st_graph_find(st_app_graph(app), name);
	cr_assert_not_null(l, "no layer %s", name);
	return l;
}

static const char *const small_model =
	"{\"format\": \"strata-model\", \"version\": 1, \"layers\": ["
	"{\"name\": \"data\", \"type\": \"input\", \"params\": {\"dims\": [4, 8, 8]}, \"pos\": [2, 1]},"
	"{\"name\": \"casc\", \"type\": \"xwn_cascade_convolution\", \"params\": {\"num_output\": 6, "
	"\"kernel_size\": 5, \"transform\": 4}, \"activation\": \"relu\", \"inputs\": [\"data.0\"], \"pos\": [2, 9]},"
	"{\"name\": \"out\", \"type\": \"output\", \"inputs\": [\"casc.0\"], \"pos\": [2, 17]}]}";

Test(tui_blocks, the_palette_lists_the_blocks_under_their_own_heading)
{
	/* Tall enough for every group unfolded. */
	st_app *app = open_model(small_model, 120, 120);
	tui_press(app, "1");
	st_app_draw(app);
	char *p = panel(app, ST_PANEL_PALETTE);
	char *heading = strstr(p, "▾ Blocks");
	cr_assert_not_null(heading, "no Blocks heading:\n%s", p);
	static const char *const blocks[] = { "conv_block_1d", "conv_block_2d", "tconv_block_2d",
		                              "cascade_block_1d", "cascade_block_2d", "fc_block" };
	for (size_t i = 0; i < sizeof blocks / sizeof blocks[0]; i++) {
		char *row = st_xasprintf("\n  %s ", blocks[i]);
		char *at = strstr(p, row);
		cr_assert(at != NULL && at > heading, "%s is not under Blocks:\n%s", blocks[i], p);
		free(row);
	}
	free(p);
	/* Filtering finds them by name and by the API's name. */
	tui_type(app, "Conv2DB");
	st_app_draw(app);
	p = panel(app, ST_PANEL_PALETTE);
	assert_has(p, "  conv_block_2d");
	cr_assert_null(strstr(p, "fc_block"), "%s", p);
	free(p);
	close_app(app);
}

Test(tui_blocks, enter_inserts_the_block_below_the_cursor_linked_from_it)
{
	st_app *app = open_model(small_model, 120, 40);
	st_graph *g = st_app_graph(app);
	st_app_focus_layer(app, layer(app, "data"));
	int before = g->n_layers;
	tui_press(app, "1");
	tui_type(app, "conv_block_2d");
	tui_press(app, "<Enter>");
	cr_assert_eq(g->n_layers, before + 4);
	st_layer *conv = layer(app, "conv_block_2d_1_conv");
	cr_assert_eq(st_app_current(app), conv);
	cr_assert_eq(app->focus, ST_PANEL_CANVAS);
	cr_assert(conv->n_inputs > 0 && conv->inputs[0].layer == layer(app, "data"));
	cr_assert_eq(layer(app, "conv_block_2d_1_dropout")->inputs[0].layer, layer(app, "conv_block_2d_1_act"));
	cr_assert_gt(conv->y, layer(app, "data")->y);
	/* The hint says how to choose other parts. */
	cr_assert(strstr(app->status, ":add-block conv_block_2d NAME order=conv,bn,act,dropout") != NULL, "%s",
	          app->status);
	char *s = tui_frame(app);
	assert_has(s, "conv_block_2d_1_conv");
	free(s);
	/* Two undos: the link, then the block as a whole. */
	tui_press(app, "u");
	tui_press(app, "u");
	cr_assert_eq(g->n_layers, before);
	close_app(app);
}

Test(tui_blocks, f2_on_a_block_shows_its_parts_and_order)
{
	st_app *app = open_model(small_model, 120, 40);
	tui_press(app, "1");
	tui_type(app, "fc_block");
	tui_press(app, "<F2>");
	cr_assert_eq(app->overlay, ST_OVERLAY_DOCS);
	char *s = tui_frame(app);
	assert_has(s, "FCBlock (fc_block)");
	assert_has(s, "- fc: fully_connected");
	assert_has(s, "Default order: fc,bn,act,dropout");
	free(s);
	tui_press(app, "<Esc>");
	cr_assert_eq(app->overlay, ST_OVERLAY_NONE);
	/* :docs names a block as well as a layer type. */
	st_app_command(app, "docs conv_block_1d");
	s = tui_frame(app);
	assert_has(s, "Conv1DBlock (conv_block_1d)");
	free(s);
	close_app(app);
}

Test(tui_blocks, E_expands_the_selected_layer_and_u_puts_it_back)
{
	st_app *app = open_model(small_model, 120, 40);
	st_graph *g = st_app_graph(app);
	char *before = st_model_serialize(g);
	st_app_focus_layer(app, layer(app, "casc"));
	tui_press(app, "2");
	tui_press(app, "E");
	cr_assert_null(st_graph_find(g, "casc"), "%s", app->status);
	cr_assert_eq(st_app_current(app), layer(app, "casc_stage0"));
	cr_assert_str_eq(layer(app, "casc_pointwise")->act.type_name, "relu");
	cr_assert_eq(layer(app, "out")->inputs[0].layer, layer(app, "casc_pointwise"));
	char *s = tui_frame(app);
	assert_has(s, "casc_stage0");
	assert_has(s, "expanded into 4 layers");
	free(s);
	tui_press(app, "u");
	char *after = st_model_serialize(g);
	cr_assert_str_eq(after, before);
	free(after);
	free(before);
	close_app(app);
}

Test(tui_blocks, colon_expand_takes_the_selected_layer_or_a_name_and_says_what_is_wrong)
{
	st_app *app = open_model(small_model, 120, 40);
	st_graph *g = st_app_graph(app);
	st_app_focus_layer(app, NULL);
	cr_assert_neq(st_app_command(app, "expand"), 0);
	cr_assert(strstr(app->status, "select the layer to expand") != NULL, "%s", app->status);
	st_app_focus_layer(app, layer(app, "data"));
	cr_assert_neq(st_app_command(app, "expand"), 0);
	cr_assert(strstr(app->status, "no loaded plugin describes the parts of input layers") != NULL, "%s",
	          app->status);
	cr_assert_neq(st_app_command(app, "expand nothing"), 0);
	cr_assert(strstr(app->status, "'nothing' is not a layer") != NULL, "%s", app->status);
	cr_assert_eq(st_app_command(app, "expand casc"), 0);
	cr_assert_not_null(st_graph_find(g, "casc_concat"));
	cr_assert_eq(st_app_current(app), layer(app, "casc_stage0"));
	close_app(app);
}

Test(tui_blocks, the_edit_menu_expands_the_selected_layer_and_shows_the_key)
{
	st_app *app = open_model(small_model, 120, 40);
	st_app_focus_layer(app, layer(app, "casc"));
	tui_press(app, "<M-e>");
	cr_assert_eq(app->overlay, ST_OVERLAY_MENU);
	char *s = tui_frame(app);
	assert_has(s, "Expand the selected layer");
	free(s);
	/* Down to the item (the last), then Enter runs it. */
	for (int i = 0; i < 5; i++)
		tui_press(app, "<Down>");
	tui_press(app, "<Enter>");
	cr_assert_not_null(st_graph_find(st_app_graph(app), "casc_pointwise"), "%s", app->status);
	close_app(app);
}

Test(tui_blocks, help_lists_the_expand_key)
{
	st_app *app = open_model(small_model, 120, 60);
	tui_press(app, "?");
	cr_assert_eq(app->overlay, ST_OVERLAY_HELP);
	/* The canvas section may be below the first page: scroll through it. */
	bool found = false;
	for (int page = 0; page < 20 && !found; page++) {
		char *s = tui_frame(app);
		found = strstr(s, "expand the layer into its parts") != NULL;
		free(s);
		tui_press(app, "<PageDown>");
	}
	cr_assert(found, "the help does not list canvas.expand");
	close_app(app);
}
