/* Unit tests: analysis mode in the screen model: switching to it and back,
 * the overview in execution order with the selection's links marked, the
 * inspector's grid, paging, zoom statistics with exact numbers for a known
 * tensor, weights, PNG export, inputs from .npy, PNG and video files, and a
 * broken model's errors; its worker leaves no thread behind. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers.h"
#include "tui-analysis.h"
#include "tui-helpers.h"

static char *test_dir;

/* Writes text to test_dir/name; returns the path (caller frees). */
static char *
write_in_test_dir(const char *name, const char *text)
{
	char *path = st_xasprintf("%s/%s", test_dir, name);
	char err[256];
	cr_assert_eq(st_write_file_atomic(path, text, strlen(text), err, sizeof err), 0, "%s", err);
	return path;
}

/* The Fashion-MNIST example, copied with its weights folder linked. */
static st_app *
open_fashion(int w, int h)
{
	test_dir = tui_test_home("tui-analysis");
	const char *top = getenv("top_srcdir");
	char *src = st_xasprintf("%s/examples/fashion_mnist/fashion_mnist.strata.json", top);
	size_t len;
	char *text = st_read_file(src, &len);
	cr_assert_not_null(text, "cannot read %s (is top_srcdir set?)", src);
	char *model = write_in_test_dir("fashion.strata.json", text);
	/* The weights folder, copied: a link out of the model's folder is refused. */
	char *dir = st_xasprintf("%s/weights", test_dir);
	cr_assert_eq(mkdir(dir, 0700), 0);
	static const char *const files[] = { "conv1_weights", "conv1_bias", "conv2_weights", "conv2_bias",
		                             "fc1_weights", "fc1_bias", "fc2_weights", "fc2_bias" };
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		char *from = st_xasprintf("%s/examples/fashion_mnist/weights/%s.npy", top, files[i]);
		char *to = st_xasprintf("%s/%s.npy", dir, files[i]);
		size_t n;
		char *bytes = st_read_file(from, &n);
		cr_assert_not_null(bytes, "%s", from);
		char err[256];
		cr_assert_eq(st_write_file_atomic(to, bytes, n, err, sizeof err), 0, "%s", err);
		free(bytes);
		free(from);
		free(to);
	}
	st_app *app = tui_app_on(model, w, h);
	free(dir);
	free(text);
	free(src);
	free(model);
	return app;
}

/* The editor on a model written from json into a fresh test folder, with
 * ramp.npy beside it: a float32 tensor of shape holding 0, 1, 2, ... */
static st_app *
open_with_ramp(const char *file, const char *json, st_shape shape, int w, int h)
{
	test_dir = tui_test_home("tui-analysis");
	char *model = write_in_test_dir(file, json);
	int64_t n = st_shape_elements(&shape);
	float *ramp = st_xmalloc(sizeof *ramp * (size_t)n);
	for (int64_t i = 0; i < n; i++)
		ramp[i] = (float)i;
	char *npy = st_xasprintf("%s/ramp.npy", test_dir);
	char err[256];
	cr_assert_eq(st_npy_write(npy, &shape, ramp, err, sizeof err), 0, "%s", err);
	free(npy);
	free(ramp);
	st_app *app = tui_app_on(model, w, h);
	free(model);
	return app;
}

/* A model that passes a 4x3x5 input through, and a ramp for it: channel c
 * holds 15c .. 15c+14. */
static st_app *
open_pass(int w, int h)
{
	st_shape s = { .rank = 4, .dims = { 1, 4, 3, 5 }, .dtype = ST_DTYPE_FLOAT32 };
	return open_with_ramp(
		"pass.strata.json",
		"{\"format\": \"strata-model\", \"version\": 1, \"layers\": ["
		"{\"name\": \"data\", \"type\": \"input\", \"params\": {\"dims\": [4, 3, 5]}},"
		"{\"name\": \"same\", \"type\": \"elementwise\", \"params\": {\"operation\": \"max\"}, \"inputs\": [\"data\", \"data\"]},"
		"{\"name\": \"out\", \"type\": \"output\", \"inputs\": [\"same\"]}]}",
		s, w, h);
}

static void
close_app(st_app *app)
{
	st_app_free(app);
	test_remove_dir(test_dir);
	test_dir = NULL;
}

/* Runs a ':' command and waits for the run it starts. */
static void
command_and_wait(st_app *app, const char *line)
{
	cr_assert_eq(st_app_command(app, line), 0, "%s: %s", line, app->status);
	/* The request is taken once the worker looks; a finished old run may
	 * still show, so wait for the phase to leave DONE first when it can. */
	cr_assert(st_analysis_wait(app, 20), "no run finished after %s", line);
}

/* Waits until the frame holds text (the worker finishing), up to 20 s. */
static char *
frame_with(st_app *app, const char *text)
{
	double until = st_now() + 20;
	for (;;) {
		st_analysis_tick(app); /* as the main loop does before each frame */
		char *f = tui_frame(app);
		if (strstr(f, text) != NULL || st_now() > until)
			return f;
		free(f);
		st_analysis_wait(app, 0.05);
	}
}

/* Moves the overview's selection to the row named name. */
static void
select_row(st_app *app, const char *name)
{
	for (int i = 0; i < 20; i++)
		tui_press(app, "k");
	for (int i = 0; i < 20; i++) {
		char *f = tui_frame(app);
		char *row = NULL;
		/* The selected row is the one drawn in the selected style. */
		for (int y = 0; y < app->screen->h && row == NULL; y++) {
			for (int x = 0; x < app->screen->w / 2; x++) {
				st_cell *c = st_screen_at(app->screen, x, y);
				if (c != NULL && memcmp(&c->style, st_app_style(app, ST_ROLE_SELECTED), sizeof c->style) == 0) {
					row = st_screen_row_text(app->screen, x, y, app->screen->w / 2 - x);
					break;
				}
			}
		}
		free(f);
		char want[64];
		snprintf(want, sizeof want, " %s ", name);
		bool here = row != NULL && strstr(row, want) != NULL;
		free(row);
		if (here)
			return;
		tui_press(app, "j");
	}
	cr_assert_fail("no row %s in the overview", name);
}

/* Cells in the inspector's area (right of column x0, rows y0..y1) that are not blank. */
static int
drawn_cells(st_app *app, int x0, int y0, int y1)
{
	int n = 0;
	for (int y = y0; y <= y1; y++)
		for (int x = x0; x < app->screen->w - 1; x++) {
			st_cell *c = st_screen_at(app->screen, x, y);
			n += c != NULL && strcmp(c->ch, " ") != 0 && c->ch[0] != '\0';
		}
	return n;
}

Test(tui_analysis, analyze_switches_the_view_and_esc_goes_back)
{
	int before = tui_thread_count();
	st_app *app = open_fashion(120, 40);
	command_and_wait(app, "analyze");
	cr_assert_eq(app->view, ST_VIEW_ANALYSIS);
	char *f = frame_with(app, "DONE  run 1");
	cr_assert(strstr(f, "ANALYSIS ─") != NULL, "%s", f);
	cr_assert(strstr(f, "Model Input · pixels") != NULL, "%s", f);
	cr_assert(strstr(f, "Network Overview") != NULL, "%s", f);
	cr_assert(strstr(f, "DONE  run 1 in ") != NULL, "%s", f);
	cr_assert(strstr(f, "no file: random data") != NULL, "%s", f);
	cr_assert(strstr(f, "symbols, monochrome") != NULL, "the graphics mode is shown: %s", f);
	/* Execution order. */
	const char *order[] = { "pixels", "conv1", "pool1", "conv2", "pool2", "fc1", "fc2", "logits" };
	const char *at = f;
	for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
		char want[32];
		snprintf(want, sizeof want, " %s ", order[i]);
		const char *p = strstr(at, want);
		cr_assert_not_null(p, "%s not after the layer before it:\n%s", order[i], f);
		at = p;
	}
	cr_assert(strstr(f, "1x16x28x28") != NULL, "conv1's shape: %s", f);
	cr_assert(strstr(f, " ms") != NULL, "times: %s", f);
	free(f);
	int during = tui_thread_count();
	cr_assert_gt(during, before, "no worker thread");
	tui_press(app, "<Esc>");
	f = tui_frame(app);
	cr_assert_eq(app->view, ST_VIEW_EDIT);
	cr_assert_null(app->analysis);
	cr_assert(strstr(f, "EDIT ─") != NULL, "%s", f);
	free(f);
	/* libchafa keeps a pool of its own; the worker is gone. */
	cr_assert_lt(tui_thread_count(), during, "the worker was left running");
	/* The key and :edit work too. */
	tui_press(app, "A");
	cr_assert_eq(app->view, ST_VIEW_ANALYSIS);
	cr_assert_eq(st_app_command(app, "edit"), 0);
	cr_assert_eq(app->view, ST_VIEW_EDIT);
	close_app(app);
}

Test(tui_analysis, selection_marks_input_and_output_links)
{
	st_app *app = open_fashion(120, 40);
	command_and_wait(app, "analyze");
	free(frame_with(app, "DONE"));
	select_row(app, "conv1");
	char *f = tui_frame(app);
	cr_assert(strstr(f, "▲ scaled") != NULL, "the input link: %s", f);
	cr_assert(strstr(f, "▼ pool1") != NULL, "the output link: %s", f);
	/* The marked rows carry the link colours. */
	bool in_role = false, out_role = false;
	for (int y = 0; y < app->screen->h; y++) {
		char *row = st_screen_row_text(app->screen, 0, y, 48);
		st_cell *c = st_screen_at(app->screen, 3, y);
		if (strstr(row, "▲ scaled"))
			in_role = memcmp(&c->style, st_app_style(app, ST_ROLE_LINK_IN), sizeof c->style) == 0;
		if (strstr(row, "▼ pool1"))
			out_role = memcmp(&c->style, st_app_style(app, ST_ROLE_LINK_OUT), sizeof c->style) == 0;
		free(row);
	}
	cr_assert(in_role, "link-in colour");
	cr_assert(out_role, "link-out colour");
	free(f);
	close_app(app);
}

Test(tui_analysis, inspector_draws_pages_zooms_and_shows_weights)
{
	st_app *app = open_fashion(80, 24);
	command_and_wait(app, "analyze");
	char *png = st_xasprintf("%s/examples/fashion_mnist/inputs/sneaker.png", getenv("top_srcdir"));
	char *cmd = st_xasprintf("input pixels %s", png);
	command_and_wait(app, cmd);
	char *f = frame_with(app, "sneaker.png 28x28 grey");
	cr_assert(strstr(f, "sneaker.png 28x28 grey") != NULL && strstr(f, "1x1x28x28 ×1") != NULL, "%s", f);
	free(f);
	select_row(app, "conv1");
	tui_press(app, "<Enter>");
	f = frame_with(app, "conv1 output · channels 0-");
	cr_assert(strstr(f, "conv1 output · channels 0-") != NULL, "%s", f);
	cr_assert(strstr(f, " of 16 · page 1/") != NULL, "%s", f);
	st_inspector *in = st_analysis_inspector(app);
	cr_assert_lt(in->page_size, 16, "a small screen pages: %d", in->page_size);
	int x0 = 32; /* the inspector starts at two fifths of the width */
	cr_assert_gt(drawn_cells(app, x0 + 1, 3, app->screen->h - 5), 100, "the grid is drawn:\n%s", f);
	free(f);
	tui_press(app, "<PageDown>");
	f = tui_frame(app);
	char want[64];
	snprintf(want, sizeof want, "channels %d-", in->page_size);
	cr_assert(strstr(f, want) != NULL && strstr(f, "page 2/") != NULL, "%s", f);
	free(f);
	tui_press(app, "<PageUp>");
	tui_press(app, "z");
	f = tui_frame(app);
	cr_assert(strstr(f, "conv1 output · zoom") != NULL, "%s", f);
	cr_assert(strstr(f, "channel 0/16 28x28  min ") != NULL, "%s", f);
	cr_assert(strstr(f, "std ") != NULL, "the statistics wrap onto a second line: %s", f);
	cr_assert(strstr(f, "NaN 0  Inf 0") != NULL, "%s", f);
	free(f);
	tui_press(app, "z");
	tui_press(app, "w");
	f = frame_with(app, "conv1 weights");
	cr_assert(strstr(f, "conv1 weights · channels 0-") != NULL && strstr(f, "of 16") != NULL, "%s", f);
	cr_assert_eq(in->shape.rank, 4);
	cr_assert_eq(in->shape.dims[0], 16);
	free(f);
	tui_press(app, "m");
	f = tui_frame(app);
	cr_assert(strstr(f, "viridis") != NULL, "%s", f);
	free(f);
	free(cmd);
	free(png);
	close_app(app);
}

Test(tui_analysis, zoom_statistics_of_a_known_tensor_and_export)
{
	st_app *app = open_pass(120, 40);
	command_and_wait(app, "analyze");
	char *cmd = st_xasprintf("input data %s/ramp.npy", test_dir);
	command_and_wait(app, cmd);
	free(cmd);
	char *f = frame_with(app, "ramp.npy 1x4x3x5 → passed as it is");
	cr_assert(strstr(f, "ramp.npy 1x4x3x5 → passed as it is, shown") != NULL, "%s", f);
	free(f);
	select_row(app, "same");
	tui_press(app, "<Enter>");
	tui_press(app, "z");
	tui_press(app, "l");
	f = frame_with(app, "channel 1/4");
	cr_assert(strstr(f, "channel 1/4 3x5  min 15  max 29  mean 22  std 4.32049  NaN 0  Inf 0") != NULL, "%s", f);
	free(f);
	/* The zoomed channel to a PNG: 5 wide, 3 high. */
	tui_press(app, "e");
	cr_assert_eq(app->overlay, ST_OVERLAY_PROMPT);
	char *png = st_xasprintf("%s/one.png", test_dir);
	tui_press(app, "<C-u>");
	tui_type(app, png);
	tui_press(app, "<Enter>");
	st_image img;
	char err[256];
	cr_assert_eq(st_image_read(png, &img, err, sizeof err), 0, "%s (%s)", err, app->status);
	cr_assert_eq(img.width, 5);
	cr_assert_eq(img.height, 3);
	st_image_free(&img);
	/* The page to a PNG: four 3x5 pictures in a grid with gaps. */
	tui_press(app, "z");
	st_grid g;
	cr_assert_eq(st_inspector_render(st_analysis_inspector(app), &g, err, sizeof err), 0, "%s", err);
	tui_press(app, "e");
	tui_press(app, "<C-u>");
	tui_type(app, png);
	tui_press(app, "<Enter>");
	cr_assert_eq(st_image_read(png, &img, err, sizeof err), 0, "%s", err);
	cr_assert_eq(img.width, g.width);
	cr_assert_eq(img.height, g.height);
	cr_assert_gt(img.width, 5);
	st_image_free(&img);
	st_grid_free(&g);
	free(png);
	/* This layer has no weights: said so. */
	tui_press(app, "w");
	f = tui_frame(app);
	cr_assert(strstr(f, "same has no weights") != NULL, "%s", f);
	free(f);
	/* An input layer that does not exist. */
	cr_assert_eq(st_app_command(app, "input nothing x.png"), -1);
	cr_assert(strstr(app->status, "no input layer 'nothing'") != NULL, "%s", app->status);
	close_app(app);
}

Test(tui_analysis, a_video_input_steps_frames)
{
	if (!st_video_available())
		cr_skip_test("this build reads no video");
	test_dir = tui_test_home("tui-analysis");
	char *model = write_in_test_dir(
		"video.strata.json",
		"{\"format\": \"strata-model\", \"version\": 1, \"layers\": ["
		"{\"name\": \"clip\", \"type\": \"input\", \"params\": {\"dims\": [3, 24, 32]}},"
		"{\"name\": \"pool\", \"type\": \"pooling\", \"params\": {\"kernel\": [2, 2], \"stride\": [2, 2]}, \"inputs\": [\"clip\"]},"
		"{\"name\": \"out\", \"type\": \"output\", \"inputs\": [\"pool\"]}]}");
	st_app *app = tui_app_on(model, 120, 40);
	free(model);
	char *cmd = st_xasprintf("input %s/tests/data/video/tiny.avi", getenv("top_srcdir"));
	command_and_wait(app, cmd);
	free(cmd);
	char *f = frame_with(app, "frame 0/11");
	cr_assert(strstr(f, "tiny.avi 32x24 RGB → 1x3x24x32") != NULL, "%s", f);
	cr_assert(strstr(f, "frame 0/11 · paused") != NULL, "%s", f);
	free(f);
	tui_press(app, ".");
	f = frame_with(app, "frame 1/11");
	cr_assert(strstr(f, "frame 1/11") != NULL, "%s", f);
	free(f);
	tui_press(app, "<gt>");
	f = frame_with(app, "frame 11/11");
	cr_assert(strstr(f, "frame 11/11") != NULL, "seeking past the end stops at the last frame: %s", f);
	free(f);
	tui_press(app, "<lt>");
	f = frame_with(app, "frame 1/11");
	cr_assert(strstr(f, "frame 1/11") != NULL, "%s", f);
	free(f);
	close_app(app);
}

Test(tui_analysis, a_broken_model_shows_its_errors)
{
	test_dir = tui_test_home("tui-analysis");
	char *model = write_in_test_dir(
		"broken.strata.json",
		"{\"format\": \"strata-model\", \"version\": 1, \"layers\": ["
		"{\"name\": \"data\", \"type\": \"input\", \"params\": {\"dims\": [3, 8, 8]}},"
		"{\"name\": \"p\", \"type\": \"pooling\", \"inputs\": [\"data\"]},"
		"{\"name\": \"e\", \"type\": \"eltwise\", \"inputs\": [\"data\", \"p\"]}]}");
	st_app *app = tui_app_on(model, 120, 40);
	free(model);
	command_and_wait(app, "analyze");
	char *f = frame_with(app, "The model cannot run:");
	cr_assert(strstr(f, "The model cannot run:") != NULL, "%s", f);
	cr_assert(strstr(f, "1 type error; fix it in the editor:") != NULL, "%s", f);
	cr_assert(strstr(f, "FAILED  1 type error") != NULL, "%s", f);
	free(f);
	close_app(app);
}

Test(tui_analysis, sixel_and_kitty_pixels_go_over_blank_cells)
{
	st_app *app = open_pass(120, 40);
	cr_assert_eq(st_app_command(app, "graphics"), 0);
	cr_assert(strstr(app->status, "graphics: symbols") != NULL, "%s", app->status);
	cr_assert_eq(st_app_command(app, "graphics sixel"), -1, "needs analysis mode");
	command_and_wait(app, "analyze");
	char *cmd = st_xasprintf("input data %s/ramp.npy", test_dir);
	command_and_wait(app, cmd);
	free(cmd);
	select_row(app, "same");
	tui_press(app, "<Enter>");
	char *f = frame_with(app, "same output · channels");
	free(f);
	cr_assert_null(st_analysis_pixels(app, true), "symbols need no pixels");
	/* Sixel, though TERM does not say so: allowed, with a warning. */
	setenv("TERM", "xterm-256color", 1);
	unsetenv("TMUX");
	cr_assert_eq(st_app_command(app, "graphics sixel"), 0);
	cr_assert(strstr(app->status, "sixel pixels as asked, though TERM=xterm-256color has no sixel") != NULL, "%s",
	          app->status);
	f = tui_frame(app);
	/* The inspector (the right three fifths) draws no block symbols. */
	const st_screen *scr = app->screen;
	for (int y = 0; y < scr->h; y++) {
		for (int x = scr->w * 2 / 5 + 1; x < scr->w; x++) {
			const unsigned char *ch = (const unsigned char *)scr->cells[y * scr->w + x].ch;
			cr_assert(!(ch[0] == 0xe2 && ch[1] == 0x96 && ch[2] >= 0x80 && ch[2] <= 0x9f),
			          "a block symbol at %d,%d under the picture:\n%s", x, y, f);
		}
	}
	free(f);
	char *px = st_analysis_pixels(app, false);
	cr_assert_not_null(px);
	cr_assert(strncmp(px, "\0337\033[", 4) == 0 && strstr(px, "\033P") != NULL && strstr(px, "\0338") != NULL);
	free(px);
	/* Nothing changed: nothing to write, unless the frame repainted everything. */
	free(tui_frame(app));
	cr_assert_null(st_analysis_pixels(app, false));
	px = st_analysis_pixels(app, true);
	cr_assert_not_null(px);
	free(px);
	/* Another colour map is another picture. */
	tui_press(app, "m");
	free(tui_frame(app));
	px = st_analysis_pixels(app, false);
	cr_assert_not_null(px);
	free(px);
	/* Kitty drops its earlier images first. */
	cr_assert_eq(st_app_command(app, "graphics kitty"), 0);
	free(tui_frame(app));
	px = st_analysis_pixels(app, false);
	cr_assert(px != NULL && strstr(px, "\033_Ga=d\033\\") != NULL && strstr(px, "\033_G") != NULL);
	free(px);
	cr_assert(st_analysis_kitty(app));
	cr_assert_eq(st_app_command(app, "graphics symbols"), 0);
	cr_assert(!st_analysis_kitty(app));
	cr_assert(app->redraw_all, "symbols again repaint every cell");
	cr_assert_eq(st_app_command(app, "graphics braille"), -1);
	close_app(app);
}

/* A threshold over a 1x4x5 ramp (0 .. 19) and statistics after it, both
 * with runtime options. */
static st_app *
open_options(int w, int h)
{
	st_shape s = { .rank = 4, .dims = { 1, 1, 4, 5 }, .dtype = ST_DTYPE_FLOAT32 };
	return open_with_ramp(
		"options.strata.json",
		"{\"format\": \"strata-model\", \"version\": 1, \"layers\": ["
		"{\"name\": \"data\", \"type\": \"input\", \"params\": {\"dims\": [1, 4, 5]}},"
		"{\"name\": \"mask\", \"type\": \"threshold\", \"params\": {\"level\": 5.0}, \"inputs\": [\"data\"]},"
		"{\"name\": \"stats\", \"type\": \"statistics\", \"inputs\": [\"mask\"]},"
		"{\"name\": \"out\", \"type\": \"output\", \"inputs\": [\"stats\"]}]}",
		s, w, h);
}

Test(tui_analysis, runtime_options_rerun_the_network_and_update_the_views)
{
	st_app *app = open_options(140, 44);
	cr_assert_not_null(st_registry_find_layer(app->registry, "threshold"), "analysis is not on STRATA_PLUGIN_PATH");
	command_and_wait(app, "analyze");
	char *cmd = st_xasprintf("input data %s/ramp.npy", test_dir);
	command_and_wait(app, cmd);
	free(cmd);
	/* The mask of values above 5: 14 ones of 20. */
	select_row(app, "mask");
	tui_press(app, "<Enter>");
	tui_press(app, "z");
	char *f = frame_with(app, "mean 0.7 ");
	cr_assert(strstr(f, "min 0  max 1  mean 0.7 ") != NULL, "%s", f);
	/* The panel groups the options under their layers. */
	cr_assert(strstr(f, "Runtime Options") != NULL, "%s", f);
	cr_assert(strstr(f, "  level          5.0 ") != NULL, "%s", f);
	cr_assert(strstr(f, "  reset          [ ▶ fire ]") != NULL, "%s", f);
	/* The statistics layer's status line shows in the overview. */
	cr_assert(strstr(f, "statistics  1x1x4x5") != NULL && strstr(f, " ms   min") != NULL, "%s", f);
	free(f);
	/* Tab to the options; Enter on level asks for a value: above 9.5, half pass. */
	tui_press(app, "<Tab>");
	tui_press(app, "<Enter>");
	cr_assert_eq(app->overlay, ST_OVERLAY_PROMPT);
	tui_press(app, "<C-u>");
	tui_type(app, "9.5");
	tui_press(app, "<Enter>");
	f = frame_with(app, "mean 0.5 ");
	cr_assert(strstr(f, "min 0  max 1  mean 0.5 ") != NULL, "%s", f);
	cr_assert(strstr(f, "  level          9.5 ") != NULL, "%s", f);
	free(f);
	/* The model keeps the value (an undoable edit). */
	const st_layer *mask = st_graph_find(st_app_graph(app), "mask");
	int level = st_params_find(mask->type->desc->params, mask->type->desc->n_params, "level");
	cr_assert_float_eq(mask->params.values[level].f, 9.5, 1e-12);
	/* ] steps up by the option's step (0.2): 10 values still pass. */
	tui_press(app, "]");
	f = frame_with(app, "  level          9.7 ");
	cr_assert(strstr(f, "mean 0.5 ") != NULL, "%s", f);
	free(f);
	/* invert toggles with Enter: now 10 of 20 at or below 9.7. */
	tui_press(app, "j");
	tui_press(app, "j");
	tui_press(app, "<Enter>");
	f = frame_with(app, "  invert         ☑");
	free(f);
	/* A value the schema refuses is said so, and nothing changes. */
	tui_press(app, "k");
	tui_press(app, "k");
	tui_press(app, "<Enter>");
	tui_press(app, "<C-u>");
	tui_type(app, "99");
	tui_press(app, "<Enter>");
	f = frame_with(app, "REFUSED");
	cr_assert(strstr(f, "REFUSED  mask:") != NULL, "%s", f);
	free(f);
	close_app(app);
}
