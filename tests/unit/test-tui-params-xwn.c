/* Unit tests: an XWN layer's figures under its parameter form, as the
 * screen model shows them: settings, pruned slices and the level
 * histogram from the model's weights folder, computed again only when the
 * settings or the weight files change, and what shows without weights. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "st-io.h"
#include "tui-helpers.h"

static char *test_dir;

/* The fixed Conv2D example of docs/xwn.md, then a plain convolution; its
 * weights folder is "w" beside it when weights is true. Returns the model
 * file; caller frees. */
static char *
write_model(bool weights)
{
	test_dir = tui_test_home("tui-xwn");
	char *model = st_xasprintf("%s/model.strata.json", test_dir);
	char *text = st_xasprintf(
		"{\"format\": \"strata-model\", \"version\": 1, \"network\": {\"name\": \"fixed\", \"weights\": \"%s\"},\n"
		" \"layers\": [\n"
		"  {\"name\": \"data\", \"type\": \"input\", \"params\": {\"dims\": [1, 5, 5]}},\n"
		"  {\"name\": \"conv\", \"type\": \"xwn_convolution\", \"params\": {\"num_output\": 2, \"kernel\": [2, 2],\n"
		"   \"bias\": false, \"use_transform\": true}, \"inputs\": [\"data.0\"]},\n"
		"  {\"name\": \"plain\", \"type\": \"convolution\", \"params\": {\"num_output\": 1, \"kernel\": [1, 1]},\n"
		"   \"inputs\": [\"conv.0\"]},\n"
		"  {\"name\": \"out\", \"type\": \"output\", \"inputs\": [\"plain.0\"]}]}\n",
		weights ? "w" : "");
	char err[256];
	cr_assert_eq(st_write_file_atomic(model, text, strlen(text), err, sizeof err), 0, "%s", err);
	free(text);
	if (weights) {
		char *dir = st_xasprintf("%s/w", test_dir);
		cr_assert_eq(st_make_dirs(dir, err, sizeof err), 0, "%s", err);
		free(dir);
	}
	return model;
}

static void
write_kernel(const float *k)
{
	char *path = st_xasprintf("%s/w/conv_weights.npy", test_dir);
	st_shape s = { .dtype = ST_DTYPE_FLOAT32, .rank = 4, .dims = { 2, 1, 2, 2 } };
	char err[256];
	cr_assert_eq(st_npy_write(path, &s, k, err, sizeof err), 0, "%s", err);
	free(path);
}

/* The parameter panel's inside, rows joined by newlines; caller frees. */
static char *
params_panel(st_app *app)
{
	st_app_draw(app);
	st_rect r = app->panel_rect[ST_PANEL_PARAMS];
	st_buf b;
	st_buf_init(&b);
	for (int y = r.y + 1; y < r.y + r.h - 1; y++) {
		char *line = st_screen_row_text(app->screen, r.x + 1, y, r.w - 2);
		st_buf_printf(&b, "%s\n", line);
		free(line);
	}
	return st_buf_take(&b);
}

#define assert_has(text, needle)                                                                  \
	cr_assert_not_null(strstr((text), (needle)), "'%s' not found in:\n%s", (needle), (text))
#define assert_lacks(text, needle)                                                                \
	cr_assert_null(strstr((text), (needle)), "'%s' unexpectedly found in:\n%s", (needle), (text))

static void
close_app(st_app *app)
{
	st_app_free(app);
	test_remove_dir(test_dir);
	test_dir = NULL;
}

static const float fixed_kernel[8] = { 2, 3, 0, 1, 0.1f, 0.2f, 0.3f, 0.4f };

Test(tui_params_xwn, figures_follow_settings_and_weight_files_only)
{
	char *model = write_model(true);
	write_kernel(fixed_kernel);
	st_app *app = tui_app_on(model, 120, 40);
	free(model);
	cr_assert_eq(st_app_command(app, "find conv"), 0);
	char *p = params_panel(app);
	assert_has(p, "XWN 4-bit, max_scale 4");
	assert_has(p, "pruning off (2 slices)");
	/* Levels 1, 2, 3 and 7 hold 2, 3, 2 and 1 weights: level 2 is 3/8. */
	assert_has(p, "levels ");
	assert_has(p, " k2 38%");
	assert_has(p, "8 weights in 1 tensor");
	assert_has(p, "diff: strata xwn compare");
	assert_has(p, "output 1x2x4x4");
	free(p);
	cr_assert_eq(st_params_xwn_computed(app), 1);

	/* Frames alone compute nothing. */
	for (int i = 0; i < 3; i++)
		st_app_draw(app);
	cr_assert_eq(st_params_xwn_computed(app), 1);

	/* A setting does; pruning at twice the mean zeroes both slices. */
	cr_assert_eq(st_app_command(app, "set conv use_pruning true"), 0);
	cr_assert_eq(st_app_command(app, "set conv prun_weight 2"), 0);
	p = params_panel(app);
	assert_has(p, "pruning 2: 2/2 (100.0%)");
	assert_has(p, "(all pruned)");
	free(p);
	cr_assert_eq(st_params_xwn_computed(app), 2);
	/* An edit elsewhere leaves the figures alone. */
	cr_assert_eq(st_app_command(app, "set plain num_output 3"), 0);
	st_app_draw(app);
	cr_assert_eq(st_params_xwn_computed(app), 2);

	/* So does a replaced weight file: every slice now has the same
	 * magnitudes, and with pruning at the mean none is pruned. */
	cr_assert_eq(st_app_command(app, "set conv prun_weight 1"), 0);
	st_app_draw(app);
	cr_assert_eq(st_params_xwn_computed(app), 3);
	static const float even[8] = { 1, -1, 1, -1, 1, 1, -1, -1 };
	write_kernel(even);
	p = params_panel(app);
	cr_assert_eq(st_params_xwn_computed(app), 4);
	assert_has(p, "pruning 1: 0/2 (0.0%)");
	/* Every weight equals its slice's mean magnitude: level 2 (max_scale/4). */
	assert_has(p, " k2 100%");
	free(p);

	/* Transform off: no levels to show. */
	cr_assert_eq(st_app_command(app, "set conv use_transform false"), 0);
	p = params_panel(app);
	assert_has(p, "XWN transform off");
	assert_has(p, "levels (no transform)");
	free(p);

	/* Another layer shows no figures. */
	cr_assert_eq(st_app_command(app, "find plain"), 0);
	p = params_panel(app);
	assert_lacks(p, "XWN");
	assert_lacks(p, "levels");
	free(p);
	close_app(app);
}

Test(tui_params_xwn, without_weights_the_panel_says_where_they_come_from)
{
	char *model = write_model(false);
	st_app *app = tui_app_on(model, 120, 40);
	free(model);
	cr_assert_eq(st_app_command(app, "find conv"), 0);
	char *p = params_panel(app);
	assert_has(p, "XWN 4-bit, max_scale 4");
	assert_has(p, "no weights folder");
	assert_lacks(p, "levels");
	free(p);

	/* A folder named but missing its file: the file is named. */
	cr_assert_eq(st_app_command(app, "network weights w"), 0);
	char err[256];
	char *dir = st_xasprintf("%s/w", test_dir);
	cr_assert_eq(st_make_dirs(dir, err, sizeof err), 0, "%s", err);
	free(dir);
	p = params_panel(app);
	assert_has(p, "conv_weights.npy");
	free(p);
	/* Written: the figures appear. */
	write_kernel(fixed_kernel);
	p = params_panel(app);
	assert_has(p, "pruning off (2 slices)");
	free(p);

	/* A small terminal keeps the form first and leaves the figures out. */
	st_screen_resize(app->screen, 80, 16);
	p = params_panel(app);
	assert_lacks(p, "pruning off");
	free(p);
	close_app(app);
}
