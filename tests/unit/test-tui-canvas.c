/* Unit tests: the canvas's glyph geometry and parameter summaries, drawing
 * against expected dumps in both glyph tiers, clipping and scrolling, hit
 * tests, spatial navigation, link and terminal highlighting. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "st-tui.h"

/* ---- a test type outside the summary table, warning when alpha is 2 ---- */

static const char *const probe_modes[] = { "x", "y", NULL };
static const st_param_desc probe_params[] = {
	{ .name = "alpha", .kind = ST_PARAM_INT, .default_value = "1", .doc = "A number." },
	{ .name = "beta", .kind = ST_PARAM_FLOAT, .default_value = "0.5", .doc = "Another." },
	{ .name = "gamma", .kind = ST_PARAM_ENUM, .default_value = "x", .enum_values = probe_modes,
	  .doc = "A choice." },
};
static const st_port_desc probe_in[] = { { "input", ST_PORT_OPTIONAL, "Anything." } };
static const st_port_desc probe_out[] = { { "output", 0, "The input." } };

static int
probe_reshape(st_reshape *r, const st_host_api *api)
{
	if (r->params[0].i == 2)
		api->message(r, ST_SEVERITY_WARNING, "alpha is 2");
	if (r->inputs[0] != NULL)
		r->outputs[0] = *r->inputs[0];
	else
		r->outputs[0] = (st_shape){ .dtype = ST_DTYPE_FLOAT32, .rank = 1, .dims = { 4 } };
	return 0;
}

static const st_layer_desc probe_desc = {
	.name = "probe_test", .summary = "a probe for the canvas tests", .category = "Tests",
	.inputs = probe_in, .n_inputs = 1, .outputs = probe_out, .n_outputs = 1,
	.params = probe_params, .n_params = 3, .reshape = probe_reshape,
};

static int
probe_entry(const st_host_api *api, st_plugin_ctx *ctx)
{
	static const st_plugin_info info = { "canvas_tests", "Strata", "canvas tests", "1" };
	api->declare(ctx, &info);
	return api->register_layer(ctx, &probe_desc);
}

static const st_registry *
canvas_registry(void)
{
	static st_registry *r;
	if (r == NULL) {
		r = st_registry_new();
		st_registry_load_default(r);
		cr_assert(st_registry_load_builtin(r, "canvas tests", probe_entry)->loaded);
		cr_assert_not_null(st_registry_find_layer(r, "convolution"), "std is not on STRATA_PLUGIN_PATH");
	}
	return r;
}

/* A session over a new graph after script, type-checked. */
static st_session *
canvas_session(const char *script)
{
	st_session *s = st_session_new(st_graph_new(canvas_registry()), NULL);
	st_diag d;
	st_diag_init(&d);
	int rc = st_session_run_script(s, script, "test", &d);
	cr_assert(rc == 0, "test script failed: %s", d.count ? d.items[0].text : "?");
	st_diag_free(&d);
	st_graph_check(st_session_graph(s));
	return s;
}

/* Each role with its own foreground, so that a cell tells its role. */
static const st_theme *
test_theme(void)
{
	static st_theme t;
	for (int i = 0; i < ST_ROLE_COUNT; i++)
		t.roles[i] = (st_style){ ST_COLOR_INDEX(16 + i), ST_COLOR_DEFAULT, 0 };
	t.roles[ST_ROLE_GLYPH].bg = ST_COLOR_INDEX(236);
	return &t;
}

static int
cell_role(st_screen *s, int x, int y)
{
	st_cell *c = st_screen_at(s, x, y);
	cr_assert_not_null(c);
	return (int)(c->style.fg & 0xff) - 16;
}

static const char *
cell_text(st_screen *s, int x, int y)
{
	st_cell *c = st_screen_at(s, x, y);
	cr_assert_not_null(c);
	return c->ch;
}

static st_canvas
plain_canvas(void)
{
	return (st_canvas){ .connect_output = -1, .terminal = -1 };
}

static st_layer *
layer(st_session *s, const char *name)
{
	st_layer *l = st_graph_find(st_session_graph(s), name);
	cr_assert_not_null(l, "no layer %s", name);
	return l;
}

/* Compares the screen with tests/data/tui/NAME; on a difference writes what
 * was drawn to $TMPDIR/strata-NAME for a look (and for updating the file). */
static void
assert_dump(const st_screen *s, const char *name)
{
	char *got = st_screen_dump(s);
	char *path = st_xasprintf("%s/tests/data/tui/%s", getenv("top_srcdir"), name);
	size_t len;
	char *want = st_read_file(path, &len);
	if (want == NULL || strcmp(got, want) != 0) {
		const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
		char *out = st_xasprintf("%s/strata-%s", tmp, name);
		FILE *f = fopen(out, "w");
		if (f != NULL) {
			fputs(got, f);
			fclose(f);
		}
		cr_assert_fail("the canvas differs from %s (drawn: %s):\n%s", path, out, got);
	}
	free(want);
	free(path);
	free(got);
}

/* ---- geometry ---- */

Test(tui_canvas, glyph_sizes_follow_their_text)
{
	st_session *s = canvas_session("add identity a 4 6; add identity abcdefghijklmnopqrst 0 0;"
	                               "add identity an_extremely_long_layer_name_that_will_not_fit 0 20");
	st_rect r;
	st_glyph_rect(layer(s, "a"), &r);
	cr_assert_eq(r.x, 4);
	cr_assert_eq(r.y, 6);
	cr_assert_eq(r.w, ST_GLYPH_WIDTH_MIN, "short text keeps the minimum width");
	cr_assert_eq(r.h, 5, "borders, name, type and summary");
	st_glyph_rect(layer(s, "abcdefghijklmnopqrst"), &r);
	cr_assert_eq(r.w, 20 + 2 + 4, "the name, room for its mark, and padding");
	st_glyph_rect(layer(s, "an_extremely_long_layer_name_that_will_not_fit"), &r);
	cr_assert_eq(r.w, 28, "text widens a glyph up to a cap");
	cr_assert_eq(test_run(s, "minimize a"), 0);
	st_glyph_rect(layer(s, "a"), &r);
	cr_assert_eq(r.h, 3, "a minimised glyph is its name between borders");
	cr_assert_eq(r.w, ST_GLYPH_WIDTH_MIN);
	st_session_free(s);
}

Test(tui_canvas, terminals_spread_along_the_edges)
{
	st_session *s = canvas_session("add input a; add input b; add input c; add concatenation cat 0 8;"
	                               "connect a cat; connect b cat; connect c cat; add identity one 40 0;"
	                               "connect a one");
	const st_layer *cat = layer(s, "cat"), *one = layer(s, "one");
	st_rect r;
	st_glyph_rect(cat, &r);
	cr_assert_eq(st_layer_terminal_count(cat), 4, "an infinite input shows one free terminal more");
	int prev = r.x;
	for (int i = 0; i < 4; i++) {
		int x = st_glyph_input_x(cat, i);
		cr_assert(x >= prev + 2, "terminal %d at %d crowds the one before (%d)", i, x, prev);
		cr_assert(x < r.x + r.w - 1, "terminal %d is on the corner", i);
		prev = x;
	}
	st_glyph_rect(one, &r);
	cr_assert_eq(st_glyph_input_x(one, 0), r.x + (r.w - 1) / 2, "one terminal sits in the middle");
	cr_assert_eq(st_glyph_output_x(one, 0), r.x + (r.w - 1) / 2);
	st_session_free(s);
}

Test(tui_canvas, many_terminals_widen_the_glyph)
{
	st_buf b;
	st_buf_init(&b);
	st_buf_puts(&b, "add input src; add concatenation cat 0 8");
	for (int i = 0; i < 20; i++)
		st_buf_puts(&b, "; connect src cat");
	st_session *s = canvas_session(b.data);
	const st_layer *cat = layer(s, "cat");
	st_rect r;
	st_glyph_rect(cat, &r);
	cr_assert_eq(st_layer_terminal_count(cat), 21);
	cr_assert_eq(r.w, 2 * 21 + 3, "terminals keep a border cell between them, past the text cap");
	for (int i = 1; i < 21; i++)
		cr_assert(st_glyph_input_x(cat, i) - st_glyph_input_x(cat, i - 1) >= 2);
	st_buf_free(&b);
	st_session_free(s);
}

/* ---- summaries ---- */

/* The summary line (the glyph's fourth row) of layer name, drawn alone. */
static char *
summary_of(st_session *s, const char *name, bool ascii)
{
	const st_graph *g = st_session_graph(s);
	st_layer *l = layer(s, name);
	st_screen *scr = st_screen_new(40, 8);
	scr->ascii = ascii;
	st_canvas c = plain_canvas();
	c.scroll_x = l->x;
	c.scroll_y = l->y;
	st_canvas_draw(scr, (st_rect){ 0, 0, 40, 8 }, g, &c, test_theme());
	st_rect r;
	st_glyph_rect(l, &r);
	char *row = st_screen_row_text(scr, 2, 3, r.w - 4);
	size_t n = strlen(row);
	while (n > 0 && row[n - 1] == ' ')
		row[--n] = '\0';
	st_screen_free(scr);
	return row;
}

static void
assert_summary(st_session *s, const char *name, bool ascii, const char *want)
{
	char *got = summary_of(s, name, ascii);
	cr_assert_str_eq(got, want, "%s: summary '%s', expected '%s'", name, got, want);
	free(got);
}

Test(tui_canvas, summaries_show_the_key_parameters)
{
	st_session *s = canvas_session(
		"add convolution conv 0 0; set conv num_output 64; set conv kernel 3x3; set conv stride 2;"
		"act conv relu;"
		"add convolution wide 0 10; set wide kernel 3x1; set wide stride 1; set wide groups 4;"
		"add pooling pool 0 20;"
		"add concatenation cat 0 30;"
		"add resize up 0 40; set up mode nearest;"
		"add resize fixed 0 50; set fixed sizes [64, 64];"
		"add input data 0 60; set data dims 3x224x224;"
		"add batch_normalization bn 0 70; act bn relu;"
		"add batch_normalization plain 0 80;"
		"add elementwise sum 0 90; set sum operation max;"
		"add probe_test probe 0 100; set probe gamma y; set probe beta 0.25;"
		"add probe_test quiet 0 110;"
		"add convolution busy 0 120; set busy num_output 1024; set busy kernel 3x1;"
		"set busy stride 2x1; set busy dilation 2; set busy groups 32; act busy leaky_relu;"
		"add onnx_operator nms 0 130; set nms op_type NonMaxSuppression;"
		"add onnx_operator custom 0 140; set custom op_type Grid; set custom domain com.example");
	assert_summary(s, "conv", false, "64 k3 s2 relu");
	assert_summary(s, "wide", false, "1 k3×1 g4");
	assert_summary(s, "wide", true, "1 k3x1 g4");
	assert_summary(s, "pool", false, "max k2 s2");
	assert_summary(s, "cat", false, "axis 1");
	assert_summary(s, "up", false, "×2 nearest");
	assert_summary(s, "up", true, "x2 nearest");
	assert_summary(s, "fixed", false, "to 64×64 nearest");
	assert_summary(s, "data", false, "3×224×224");
	assert_summary(s, "bn", false, "relu");
	assert_summary(s, "plain", false, "");
	assert_summary(s, "sum", false, "max");
	/* A type the table does not know: its first two explicitly set parameters. */
	assert_summary(s, "probe", false, "beta=0.25 gamma=y");
	assert_summary(s, "quiet", false, "");
	/* Too long: parameters go from the end; the first one and the activation stay. */
	assert_summary(s, "busy", false, "1024 k3×1 leaky_relu");
	/* A placeholder shows the operator it keeps, and its domain when not ONNX's. */
	assert_summary(s, "nms", false, "NonMaxSuppression");
	assert_summary(s, "custom", false, "com.example Grid");
	st_session_free(s);
}

/* ---- drawing ---- */

/* A small graph with a fan-out, a fan-in with an error, a link that skips a
 * rank, a warning and a minimised glyph. */
static const char small_graph[] =
	"add input data 2 0; set data dims 3x32x32;"
	"add convolution conv1 2 8; set conv1 num_output 16; set conv1 kernel 3; set conv1 stride 2;"
	"set conv1 padding same; act conv1 relu;"
	"add pooling pool 24 8;"
	"add elementwise sum 8 16;"
	"add output out 8 24;"
	"add probe_test odd 40 16; set odd alpha 2; minimize odd;"
	"add probe_test late 40 24;"
	"connect data conv1; connect data pool; connect conv1 sum; connect pool sum; connect sum out;"
	"connect pool odd; connect data late";

static st_screen *
draw_small(bool ascii, const st_canvas *c, int w, int h)
{
	st_session *s = canvas_session(small_graph);
	st_screen *scr = st_screen_new(w, h);
	scr->ascii = ascii;
	st_canvas_draw(scr, (st_rect){ 0, 0, w, h }, st_session_graph(s), c, test_theme());
	st_session_free(s);
	return scr;
}

Test(tui_canvas, small_graph_utf8)
{
	st_canvas c = plain_canvas();
	c.show_shapes = true;
	st_screen *scr = draw_small(false, &c, 64, 30);
	assert_dump(scr, "canvas-small-utf8.txt");
	st_screen_free(scr);
}

Test(tui_canvas, small_graph_ascii)
{
	st_canvas c = plain_canvas();
	c.show_shapes = true;
	st_screen *scr = draw_small(true, &c, 64, 30);
	assert_dump(scr, "canvas-small-ascii.txt");
	st_screen_free(scr);
}

Test(tui_canvas, marks_for_errors_warnings_and_minimised_glyphs)
{
	st_session *s = canvas_session(small_graph);
	const st_graph *g = st_session_graph(s);
	st_screen *scr = st_screen_new(64, 30);
	st_canvas c = plain_canvas();
	st_canvas_draw(scr, (st_rect){ 0, 0, 64, 30 }, g, &c, test_theme());
	st_rect r;
	st_glyph_rect(layer(s, "sum"), &r);
	cr_assert(layer(s, "sum")->n_messages > 0, "sum adds 16 channels to 3");
	cr_assert_str_eq(cell_text(scr, r.x + r.w - 3, r.y + 1), "✖");
	cr_assert_eq(cell_role(scr, r.x + r.w - 3, r.y + 1), ST_ROLE_ERROR);
	st_glyph_rect(layer(s, "odd"), &r);
	cr_assert_eq(r.h, 3);
	cr_assert_str_eq(cell_text(scr, r.x + r.w - 3, r.y + 1), "⚠");
	cr_assert_eq(cell_role(scr, r.x + r.w - 3, r.y + 1), ST_ROLE_WARNING);
	cr_assert_str_eq(cell_text(scr, r.x + 2 + 3 + 1, r.y + 1), "▪", "the minimised mark follows the name");
	cr_assert_eq(cell_role(scr, r.x + 2, r.y + 1), ST_ROLE_GLYPH_NAME);
	cr_assert(st_screen_at(scr, r.x + 2, r.y + 1)->style.attrs & ST_ATTR_BOLD, "names are bold");
	st_glyph_rect(layer(s, "conv1"), &r);
	cr_assert_eq(cell_role(scr, r.x, r.y), ST_ROLE_GLYPH_BORDER);
	cr_assert_eq(cell_role(scr, st_glyph_input_x(layer(s, "conv1"), 0), r.y), ST_ROLE_TERMINAL);
	cr_assert_eq(st_screen_at(scr, r.x + 5, r.y + 2)->style.bg, ST_COLOR_INDEX(236),
	             "text on a glyph keeps the glyph's background");
	st_screen_free(scr);
	st_session_free(s);
}

Test(tui_canvas, cursor_and_selection_borders_and_link_roles)
{
	st_session *s = canvas_session(small_graph);
	const st_graph *g = st_session_graph(s);
	const st_layer *conv1 = layer(s, "conv1"), *pool = layer(s, "pool");
	const st_layer *selected[] = { pool, conv1 };
	st_canvas c = plain_canvas();
	c.cursor = conv1;
	c.selected = selected;
	c.n_selected = 2;
	st_screen *scr = st_screen_new(64, 30);
	st_canvas_draw(scr, (st_rect){ 0, 0, 64, 30 }, g, &c, test_theme());
	st_rect r;
	st_glyph_rect(conv1, &r);
	cr_assert_eq(cell_role(scr, r.x, r.y), ST_ROLE_CURSOR);
	int in_x = st_glyph_input_x(conv1, 0), out_x = st_glyph_output_x(conv1, 0);
	cr_assert_eq(cell_role(scr, in_x, r.y - 1), ST_ROLE_LINK_IN, "the link into the cursor's layer");
	cr_assert_eq(cell_role(scr, out_x, r.y + r.h), ST_ROLE_LINK_OUT, "the link out of it");
	st_glyph_rect(pool, &r);
	cr_assert_eq(cell_role(scr, r.x, r.y), ST_ROLE_GLYPH_SELECTED);
	cr_assert_eq(cell_role(scr, st_glyph_output_x(pool, 0), r.y + r.h), ST_ROLE_LINK,
	             "other links keep the plain role");
	st_screen_free(scr);
	st_session_free(s);
}

Test(tui_canvas, connecting_highlights_valid_inputs)
{
	st_session *s = canvas_session(small_graph);
	const st_graph *g = st_session_graph(s);
	st_canvas c = plain_canvas();
	c.connect_from = layer(s, "pool");
	c.connect_output = 0;
	c.cursor = layer(s, "late");
	c.terminal = 0;
	st_screen *scr = st_screen_new(64, 30);
	st_canvas_draw(scr, (st_rect){ 0, 0, 64, 30 }, g, &c, test_theme());
	const st_layer *sum = layer(s, "sum"), *conv1 = layer(s, "conv1"), *late = layer(s, "late");
	const st_layer *pool = layer(s, "pool");
	cr_assert_eq(cell_role(scr, st_glyph_input_x(sum, 2), sum->y), ST_ROLE_LINK_OUT,
	             "a free input downstream takes the link");
	cr_assert(st_screen_at(scr, st_glyph_input_x(sum, 2), sum->y)->style.attrs & ST_ATTR_BOLD);
	cr_assert_eq(cell_role(scr, st_glyph_input_x(sum, 0), sum->y), ST_ROLE_WARNING,
	             "a taken input can be replaced, after a question");
	cr_assert_eq(cell_role(scr, st_glyph_input_x(conv1, 0), conv1->y), ST_ROLE_WARNING);
	cr_assert_eq(cell_role(scr, st_glyph_input_x(pool, 0), pool->y), ST_ROLE_DIM,
	             "a layer cannot feed itself");
	cr_assert_eq(cell_role(scr, st_glyph_input_x(late, 0), late->y), ST_ROLE_CURSOR,
	             "the terminal under the cursor");
	st_rect r;
	st_glyph_rect(pool, &r);
	cr_assert_eq(cell_role(scr, st_glyph_output_x(pool, 0), r.y + r.h - 1), ST_ROLE_LINK_OUT);
	cr_assert(st_screen_at(scr, st_glyph_output_x(pool, 0), r.y + r.h - 1)->style.attrs & ST_ATTR_REVERSE,
	          "the output being connected");
	st_screen_free(scr);

	/* Feeding data from sum would close a cycle. */
	c.connect_from = sum;
	c.cursor = NULL;
	scr = st_screen_new(64, 30);
	st_canvas_draw(scr, (st_rect){ 0, 0, 64, 30 }, g, &c, test_theme());
	cr_assert_eq(cell_role(scr, st_glyph_input_x(conv1, 0), conv1->y), ST_ROLE_DIM);
	st_screen_free(scr);
	st_session_free(s);
}

Test(tui_canvas, the_cursor_terminal_counts_inputs_then_outputs)
{
	st_session *s = canvas_session("add input a 0 0; add split b 0 8; connect a b; set b num_outputs 3");
	const st_graph *g = st_session_graph(s);
	const st_layer *b = layer(s, "b");
	cr_assert_eq(b->n_outputs, 3);
	st_canvas c = plain_canvas();
	c.cursor = b;
	c.terminal = 1 + 2; /* one input, then output 2 */
	st_screen *scr = st_screen_new(40, 16);
	st_canvas_draw(scr, (st_rect){ 0, 0, 40, 16 }, g, &c, test_theme());
	st_rect r;
	st_glyph_rect(b, &r);
	cr_assert_eq(cell_role(scr, st_glyph_output_x(b, 2), r.y + r.h - 1), ST_ROLE_CURSOR);
	cr_assert_eq(cell_role(scr, st_glyph_output_x(b, 1), r.y + r.h - 1), ST_ROLE_TERMINAL);
	cr_assert_eq(cell_role(scr, st_glyph_input_x(b, 0), r.y), ST_ROLE_TERMINAL);
	st_screen_free(scr);
	st_session_free(s);
}

Test(tui_canvas, draws_only_inside_the_area_and_the_clip)
{
	st_session *s = canvas_session(small_graph);
	const st_graph *g = st_session_graph(s);
	st_screen *scr = st_screen_new(80, 40);
	st_style mark = { ST_COLOR_INDEX(1), ST_COLOR_DEFAULT, 0 };
	st_screen_fill(scr, (st_rect){ 0, 0, 80, 40 }, "#", &mark);
	st_canvas c = plain_canvas();
	c.show_grid = true;
	c.show_shapes = true;
	c.scroll_x = -3;
	c.scroll_y = 2;
	st_rect area = { 7, 5, 30, 14 };
	st_canvas_draw(scr, area, g, &c, test_theme());
	int drawn = 0;
	for (int y = 0; y < 40; y++) {
		for (int x = 0; x < 80; x++) {
			bool inside = x >= area.x && x < area.x + area.w && y >= area.y && y < area.y + area.h;
			bool untouched = strcmp(cell_text(scr, x, y), "#") == 0 &&
			                 st_style_equal(&st_screen_at(scr, x, y)->style, &mark);
			if (!inside)
				cr_assert(untouched, "cell %d,%d outside the area was drawn", x, y);
			else
				drawn += !untouched;
		}
	}
	cr_assert_eq(drawn, area.w * area.h, "the canvas owns every cell of its area");
	cr_assert_eq(scr->clip.x, 0, "the clip is given back");
	cr_assert_eq(scr->clip.w, 80);

	/* A caller's clip narrower than the area holds too. */
	st_screen_fill(scr, (st_rect){ 0, 0, 80, 40 }, "#", &mark);
	st_screen_set_clip(scr, (st_rect){ 0, 0, 20, 40 });
	st_canvas_draw(scr, area, g, &c, test_theme());
	for (int y = 0; y < 40; y++) {
		for (int x = 20; x < 80; x++)
			cr_assert_str_eq(cell_text(scr, x, y), "#", "cell %d,%d is outside the clip", x, y);
	}
	st_screen_free(scr);
	st_session_free(s);
}

Test(tui_canvas, scrolling_shifts_the_picture)
{
	st_session *s = canvas_session(small_graph);
	const st_graph *g = st_session_graph(s);
	st_canvas c = plain_canvas();
	st_screen *whole = st_screen_new(70, 34);
	st_canvas_draw(whole, (st_rect){ 0, 0, 70, 34 }, g, &c, test_theme());
	c.scroll_x = 5;
	c.scroll_y = 9;
	st_screen *part = st_screen_new(40, 20);
	st_canvas_draw(part, (st_rect){ 0, 0, 40, 20 }, g, &c, test_theme());
	for (int y = 0; y < 20; y++) {
		for (int x = 0; x < 40; x++) {
			st_cell *a = st_screen_at(part, x, y), *b = st_screen_at(whole, x + 5, y + 9);
			cr_assert_str_eq(a->ch, b->ch, "cell %d,%d: '%s', unscrolled '%s'", x, y, a->ch, b->ch);
			cr_assert(st_style_equal(&a->style, &b->style), "cell %d,%d changed style", x, y);
		}
	}
	st_screen_free(whole);
	st_screen_free(part);
	st_session_free(s);
}

Test(tui_canvas, links_show_between_ends_out_of_view)
{
	st_session *s = canvas_session("add input a 0 0; add input side 30 0; add identity b 0 60; connect a b;"
	                               "add identity c 30 60; connect side c");
	const st_graph *g = st_session_graph(s);
	st_canvas c = plain_canvas();
	c.scroll_y = 20;
	st_screen *scr = st_screen_new(60, 20);
	st_canvas_draw(scr, (st_rect){ 0, 0, 60, 20 }, g, &c, test_theme());
	int x = st_glyph_output_x(layer(s, "a"), 0);
	for (int y = 0; y < 20; y++) {
		cr_assert_str_eq(cell_text(scr, x, y), "│", "row %d of a link whose ends are out of view", y);
		cr_assert_eq(cell_role(scr, x, y), ST_ROLE_LINK);
	}
	st_screen_free(scr);
	st_session_free(s);
}

Test(tui_canvas, a_link_around_a_glyph_in_its_way)
{
	st_session *s = canvas_session("add input a 4 0; add identity block 4 8; add identity b 4 16;"
	                               "connect a b");
	const st_graph *g = st_session_graph(s);
	st_canvas c = plain_canvas();
	st_screen *scr = st_screen_new(40, 22);
	st_canvas_draw(scr, (st_rect){ 0, 0, 40, 22 }, g, &c, test_theme());
	st_rect r;
	st_glyph_rect(layer(s, "block"), &r);
	/* The link keeps a free column beside the glyph between its ends. */
	int left = 0, right = 0;
	for (int y = r.y; y < r.y + r.h; y++) {
		left += strcmp(cell_text(scr, r.x - 2, y), "│") == 0;
		right += strcmp(cell_text(scr, r.x + r.w + 1, y), "│") == 0;
		cr_assert_str_eq(cell_text(scr, r.x - 1, y), " ", "a free column between glyph and link");
		cr_assert_str_eq(cell_text(scr, r.x + r.w, y), " ");
	}
	cr_assert(left == r.h || right == r.h, "the link passes beside the glyph in its way");
	cr_assert_eq(st_layout_crossings(g), 0);
	st_screen_free(scr);
	st_session_free(s);
}

Test(tui_canvas, grid_dots_under_everything)
{
	st_session *s = canvas_session("add identity a 8 4");
	const st_graph *g = st_session_graph(s);
	st_canvas c = plain_canvas();
	c.show_grid = true;
	c.scroll_x = 1;
	c.scroll_y = 1;
	st_screen *scr = st_screen_new(40, 16);
	st_canvas_draw(scr, (st_rect){ 0, 0, 40, 16 }, g, &c, test_theme());
	/* Model cell (4, 2) is screen cell (3, 1); (5, 2) has no dot. */
	cr_assert_str_eq(cell_text(scr, 3, 1), "·");
	cr_assert_eq(cell_role(scr, 3, 1), ST_ROLE_GRID);
	cr_assert_str_eq(cell_text(scr, 4, 1), " ");
	cr_assert_str_eq(cell_text(scr, 3, 2), " ");
	/* Inside the glyph at model (8..23, 4..8) there are none: (12, 6) is screen (11, 5). */
	cr_assert_str_neq(cell_text(scr, 11, 5), "·");
	st_screen_free(scr);
	st_session_free(s);
}

Test(tui_canvas, minimap_in_the_corner)
{
	st_session *s = canvas_session(small_graph);
	const st_graph *g = st_session_graph(s);
	st_canvas c = plain_canvas();
	c.show_minimap = true;
	c.cursor = layer(s, "data");
	st_screen *scr = st_screen_new(100, 40);
	st_rect area = { 0, 0, 100, 40 };
	st_canvas_draw(scr, area, g, &c, test_theme());
	/* A 22x8 box in the bottom-right corner. */
	cr_assert_str_eq(cell_text(scr, 78, 32), "┌");
	cr_assert_str_eq(cell_text(scr, 99, 39), "┘");
	int glyphs = 0, view = 0, cursor = 0;
	for (int y = 33; y < 39; y++) {
		for (int x = 79; x < 99; x++) {
			glyphs += strcmp(cell_text(scr, x, y), "▪") == 0;
			view += cell_role(scr, x, y) == ST_ROLE_SELECTED;
			cursor += cell_role(scr, x, y) == ST_ROLE_CURSOR;
		}
	}
	cr_assert(glyphs > 0, "the glyphs show in the minimap");
	cr_assert(view > 0, "so does the view");
	cr_assert(cursor > 0, "and the cursor's glyph");
	st_canvas_hit hit;
	cr_assert_not(st_canvas_hit_test(g, &c, area, 90, 35, &hit), "clicks on the minimap hit no glyph");
	st_screen_free(scr);
	st_session_free(s);
}

Test(tui_canvas, shapes_label_links)
{
	st_canvas c = plain_canvas();
	c.show_shapes = true;
	st_screen *scr = draw_small(false, &c, 64, 30);
	char *dump = st_screen_dump(scr);
	cr_assert_not_null(strstr(dump, "1×3×32×32"), "the input's shape is on its links:\n%s", dump);
	cr_assert_not_null(strstr(dump, "1×3×16×16"), "and the pooling's");
	free(dump);
	st_screen_free(scr);
	c.show_shapes = false;
	scr = draw_small(false, &c, 64, 30);
	dump = st_screen_dump(scr);
	cr_assert_null(strstr(dump, "1×3×32×32"));
	free(dump);
	st_screen_free(scr);
}

/* ---- hit tests and navigation ---- */

Test(tui_canvas, hit_tests_find_glyphs_and_terminals)
{
	st_session *s = canvas_session(small_graph);
	const st_graph *g = st_session_graph(s);
	st_canvas c = plain_canvas();
	c.scroll_x = -2;
	c.scroll_y = 1;
	st_rect area = { 3, 2, 60, 30 };
	const st_layer *sum = layer(s, "sum");
	st_rect r;
	st_glyph_rect(sum, &r);
	/* Model (x, y) is screen (x - scroll_x + area.x, y - scroll_y + area.y). */
#define SX(x) ((x) + 2 + 3)
#define SY(y) ((y) - 1 + 2)
	st_canvas_hit hit;
	cr_assert(st_canvas_hit_test(g, &c, area, SX(r.x + 3), SY(r.y + 2), &hit));
	cr_assert_eq(hit.layer, sum);
	cr_assert_eq(hit.input, -1);
	cr_assert_eq(hit.output, -1);
	cr_assert(st_canvas_hit_test(g, &c, area, SX(st_glyph_input_x(sum, 1)), SY(r.y), &hit));
	cr_assert_eq(hit.layer, sum);
	cr_assert_eq(hit.input, 1);
	cr_assert(st_canvas_hit_test(g, &c, area, SX(st_glyph_output_x(sum, 0)), SY(r.y + r.h - 1), &hit));
	cr_assert_eq(hit.output, 0);
	cr_assert_eq(hit.input, -1);
	cr_assert(st_canvas_hit_test(g, &c, area, SX(r.x), SY(r.y), &hit), "the corner is the glyph's");
	cr_assert_eq(hit.input, -1);
	cr_assert_not(st_canvas_hit_test(g, &c, area, SX(r.x + r.w), SY(r.y), &hit), "just right of it");
	cr_assert_null(hit.layer);
	cr_assert_not(st_canvas_hit_test(g, &c, area, 1, 1, &hit), "outside the area");
#undef SX
#undef SY
	st_session_free(s);
}

Test(tui_canvas, hit_tests_prefer_the_glyph_drawn_on_top)
{
	st_session *s = canvas_session("add identity a 0 0; add identity b 4 1");
	const st_graph *g = st_session_graph(s);
	st_canvas c = plain_canvas();
	st_rect area = { 0, 0, 40, 10 };
	st_canvas_hit hit;
	cr_assert(st_canvas_hit_test(g, &c, area, 6, 2, &hit));
	cr_assert_eq(hit.layer, layer(s, "b"), "later layers lie on top");
	c.cursor = layer(s, "a");
	cr_assert(st_canvas_hit_test(g, &c, area, 6, 2, &hit));
	cr_assert_eq(hit.layer, layer(s, "a"), "the cursor's glyph lies on top of all");
	st_session_free(s);
}

Test(tui_canvas, neighbours_in_each_direction)
{
	/* A 3x3 grid of glyphs 24 columns and 8 rows apart, and one far off. */
	st_session *s = canvas_session("add identity nw 0 0; add identity n 24 0; add identity ne 48 0;"
	                               "add identity w 0 8; add identity c 24 8; add identity e 48 8;"
	                               "add identity sw 0 16; add identity s 24 16; add identity se 48 16;"
	                               "add identity far 200 9");
	const st_graph *g = st_session_graph(s);
	const st_layer *c = layer(s, "c");
	cr_assert_eq(st_canvas_neighbour(g, c, 1, 0), layer(s, "e"));
	cr_assert_eq(st_canvas_neighbour(g, c, -1, 0), layer(s, "w"));
	cr_assert_eq(st_canvas_neighbour(g, c, 0, -1), layer(s, "n"));
	cr_assert_eq(st_canvas_neighbour(g, c, 0, 1), layer(s, "s"));
	cr_assert_eq(st_canvas_neighbour(g, c, 1, 1), layer(s, "se"));
	cr_assert_eq(st_canvas_neighbour(g, c, -1, -1), layer(s, "nw"));
	cr_assert_eq(st_canvas_neighbour(g, layer(s, "e"), 1, 0), layer(s, "far"),
	             "the nearest in the cone, however far");
	cr_assert_null(st_canvas_neighbour(g, layer(s, "far"), 1, 0), "nothing lies that way");
	cr_assert_eq(st_canvas_neighbour(g, layer(s, "ne"), 0, -1), NULL);
	cr_assert_null(st_canvas_neighbour(g, c, 0, 0));
	st_session_free(s);
}

Test(tui_canvas, neighbours_outside_the_cone_only_when_it_is_empty)
{
	/* b is below-right at a steep angle: not within 45 degrees of right. */
	st_session *s = canvas_session("add identity a 0 0; add identity b 10 20; add identity c 60 2");
	const st_graph *g = st_session_graph(s);
	cr_assert_eq(st_canvas_neighbour(g, layer(s, "a"), 1, 0), layer(s, "c"),
	             "the cone wins over a nearer glyph outside it");
	cr_assert_eq(test_run(s, "delete c"), 0);
	cr_assert_eq(st_canvas_neighbour(g, layer(s, "a"), 1, 0), layer(s, "b"),
	             "with the cone empty, the nearest glyph ahead");
	st_session_free(s);
}

Test(tui_canvas, reveal_scrolls_just_enough)
{
	st_session *s = canvas_session("add identity a 100 50");
	st_canvas c = plain_canvas();
	st_rect r;
	st_glyph_rect(layer(s, "a"), &r);
	st_canvas_reveal(&c, layer(s, "a"), 60, 20);
	cr_assert(r.x >= c.scroll_x && r.x + r.w <= c.scroll_x + 60, "visible across");
	cr_assert(r.y >= c.scroll_y && r.y + r.h <= c.scroll_y + 20, "visible down");
	cr_assert_eq(c.scroll_x, r.x + r.w + 2 - 60, "a margin of two columns on the near side");
	cr_assert_eq(c.scroll_y, r.y + r.h + 1 - 20);
	int sx = c.scroll_x, sy = c.scroll_y;
	st_canvas_reveal(&c, layer(s, "a"), 60, 20);
	cr_assert_eq(c.scroll_x, sx, "a visible glyph leaves the view alone");
	cr_assert_eq(c.scroll_y, sy);
	c.scroll_x = 500;
	c.scroll_y = 500;
	st_canvas_reveal(&c, layer(s, "a"), 60, 20);
	cr_assert_eq(c.scroll_x, r.x - 2);
	cr_assert_eq(c.scroll_y, r.y - 1);
	st_canvas_reveal(&c, layer(s, "a"), 10, 3);
	cr_assert_eq(c.scroll_x, r.x, "a view smaller than the glyph shows its corner");
	cr_assert_eq(c.scroll_y, r.y);
	st_session_free(s);
}

/* ---- crossings ---- */

Test(tui_canvas, crossings_count_links_that_cross)
{
	/* a feeds the right consumer and b the left one: their links cross once. */
	st_session *s = canvas_session("add input a 0 0; add input b 24 0; add identity x 8 10;"
	                               "add identity y 34 10; connect a y; connect b x");
	cr_assert_eq(st_layout_crossings(st_session_graph(s)), 1);
	cr_assert_eq(test_run(s, "connect a x.0; connect b y.0"), 0);
	cr_assert_eq(st_layout_crossings(st_session_graph(s)), 0);
	/* Links of one output branch without crossing each other. */
	cr_assert_eq(test_run(s, "add identity z 60 10; connect a z; connect a y.0"), 0);
	cr_assert_eq(st_layout_crossings(st_session_graph(s)), 0);
	st_session_free(s);
}
