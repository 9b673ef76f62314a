/* Unit tests: channel grids: colour maps, statistics, how shapes read as
 * pictures, the layout of a grid pixel by pixel, and pictures drawn as
 * terminal symbols against a stored reference. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "st-io.h"
#ifdef ST_HAVE_TUI
#include "st-tui.h"
#endif

static st_shape
shape4(int64_t n, int64_t c, int64_t h, int64_t w)
{
	st_shape s = { .rank = 4, .dtype = ST_DTYPE_FLOAT32 };
	s.dims[0] = n;
	s.dims[1] = c;
	s.dims[2] = h;
	s.dims[3] = w;
	return s;
}

/* The colour of pixel (x, y) of a grid. */
static void
pixel(const st_grid *g, int x, int y, float rgb[3])
{
	for (int k = 0; k < 3; k++)
		rgb[k] = g->planes[(size_t)k * g->height * g->width + (size_t)y * g->width + x];
}

static void
assert_rgb(const float got[3], const float want[3], const char *what)
{
	for (int k = 0; k < 3; k++)
		cr_assert_float_eq(got[k], want[k], 1e-6, "%s: component %d is %g, not %g", what, k, got[k], want[k]);
}

Test(grid, colormaps_by_name_and_ends)
{
	cr_assert_eq(st_colormap_find("viridis"), ST_COLORMAP_VIRIDIS);
	cr_assert_eq(st_colormap_find("jet"), -1);
	cr_assert_str_eq(st_colormap_name(ST_COLORMAP_DIVERGING), "diverging");
	float c[3];
	st_colormap_rgb(ST_COLORMAP_GRAY, 0.25, c);
	assert_rgb(c, (float[]){ 0.25f, 0.25f, 0.25f }, "gray 0.25");
	st_colormap_rgb(ST_COLORMAP_GRAY, 7, c);
	assert_rgb(c, (float[]){ 1, 1, 1 }, "clamped above");
	st_colormap_rgb(ST_COLORMAP_GRAY, NAN, c);
	assert_rgb(c, (float[]){ 0, 0, 0 }, "NaN is the low end");
	/* Viridis grows brighter from end to end. */
	float lo[3], hi[3];
	st_colormap_rgb(ST_COLORMAP_VIRIDIS, 0, lo);
	st_colormap_rgb(ST_COLORMAP_VIRIDIS, 1, hi);
	cr_assert_lt(lo[0] + lo[1] + lo[2], hi[0] + hi[1] + hi[2]);
	/* The diverging map is symmetric in brightness around its grey middle. */
	st_colormap_rgb(ST_COLORMAP_DIVERGING, 0.5, c);
	assert_rgb(c, (float[]){ 0.865f, 0.865f, 0.865f }, "diverging middle");
}

Test(grid, statistics_skip_nan_and_inf)
{
	float v[] = { 1, 2, 3, NAN, INFINITY, -INFINITY, 6 };
	st_channel_stats s;
	st_channel_stats_of(v, 7, &s);
	cr_assert_eq(s.count, 4);
	cr_assert_eq(s.nan, 1);
	cr_assert_eq(s.inf, 2);
	cr_assert_eq(s.min, 1);
	cr_assert_eq(s.max, 6);
	cr_assert_float_eq(s.mean, 3.0, 1e-12);
	cr_assert_float_eq(s.std, sqrt(3.5), 1e-12);
	float none[] = { NAN };
	st_channel_stats_of(none, 1, &s);
	cr_assert(s.count == 0 && s.min == 0 && s.max == 0 && s.nan == 1);
}

Test(grid, shapes_as_pictures)
{
	int64_t c, h, w;
	st_shape s = shape4(2, 16, 7, 5);
	st_grid_geometry(&s, &c, &h, &w);
	cr_assert(c == 16 && h == 7 && w == 5);
	s = (st_shape){ .rank = 3, .dims = { 1, 4, 30 } };
	st_grid_geometry(&s, &c, &h, &w);
	cr_assert(c == 4 && h == 1 && w == 30);
	s = (st_shape){ .rank = 2, .dims = { 1, 10 } };
	st_grid_geometry(&s, &c, &h, &w);
	cr_assert(c == 1 && h == 1 && w == 10);
}

Test(grid, layout_pixel_by_pixel)
{
	/* Four channels of 2x3: channel c holds c*6 .. c*6+5, so with one
	 * shared range 0..23 every value has its own grey. */
	float v[24];
	for (int i = 0; i < 24; i++)
		v[i] = (float)i;
	st_shape s = shape4(1, 4, 2, 3);
	st_grid_options o = { .columns = 2, .scale = 1, .gap = 1, .colormap = ST_COLORMAP_GRAY,
		              .shared_range = true };
	st_grid g;
	char err[256];
	cr_assert_eq(st_grid_render(v, &s, 0, &o, &g, err, sizeof err), 0, "%s", err);
	/* 2 columns of 3 + 3 gaps; 2 rows of 2 + 3 gaps. */
	cr_assert_eq(g.width, 9);
	cr_assert_eq(g.height, 7);
	cr_assert(g.rows == 2 && g.columns == 2 && g.count == 4);
	float c[3];
	pixel(&g, 0, 0, c);
	assert_rgb(c, (float[]){ 0.18f, 0.18f, 0.18f }, "gap");
	pixel(&g, 1, 1, c);
	assert_rgb(c, (float[]){ 0, 0, 0 }, "channel 0, value 0");
	pixel(&g, 3, 2, c);
	float x = 5.0f / 23.0f;
	assert_rgb(c, (float[]){ x, x, x }, "channel 0, value 5");
	/* Channel 3 starts at row 1, column 1: x = 1 + 3 + 1, y = 1 + 2 + 1. */
	pixel(&g, 5, 4, c);
	x = 18.0f / 23.0f;
	assert_rgb(c, (float[]){ x, x, x }, "channel 3, value 18");
	pixel(&g, 7, 5, c);
	assert_rgb(c, (float[]){ 1, 1, 1 }, "channel 3, value 23");
	st_grid_free(&g);

	/* Each channel its own range, zoomed twice, channels 1 and 2 only. */
	o = (st_grid_options){ .first = 1, .count = 2, .columns = 0, .scale = 2, .gap = 0,
		               .colormap = ST_COLORMAP_GRAY };
	cr_assert_eq(st_grid_render(v, &s, 0, &o, &g, err, sizeof err), 0, "%s", err);
	cr_assert(g.first == 1 && g.count == 2);
	cr_assert_eq(g.cell_width, 6);
	cr_assert_eq(g.cell_height, 4);
	pixel(&g, 0, 0, c);
	assert_rgb(c, (float[]){ 0, 0, 0 }, "channel 1's least");
	pixel(&g, 5, 3, c);
	assert_rgb(c, (float[]){ 1, 1, 1 }, "channel 1's greatest, zoomed");
	st_grid_free(&g);
}

Test(grid, nan_and_errors)
{
	float v[4] = { 0, NAN, 1, 2 };
	st_shape s = shape4(1, 1, 2, 2);
	st_grid_options o = { .scale = 1, .gap = 0, .colormap = ST_COLORMAP_VIRIDIS };
	st_grid g;
	char err[256];
	cr_assert_eq(st_grid_render(v, &s, 0, &o, &g, err, sizeof err), 0, "%s", err);
	float c[3];
	pixel(&g, 1, 0, c);
	assert_rgb(c, (float[]){ 1, 0, 1 }, "NaN is magenta");
	st_grid_free(&g);
	cr_assert_eq(st_grid_render(v, &s, 1, &o, &g, err, sizeof err), -1);
	cr_assert_str_eq(err, "sample 1 is outside the batch of 1");
	o.first = 3;
	cr_assert_eq(st_grid_render(v, &s, 0, &o, &g, err, sizeof err), -1);
	cr_assert_str_eq(err, "channel 3 is outside the 1 channels");
	/* A grid too large to draw is refused, not allocated. */
	st_shape big = shape4(1, 4, 40000, 40000);
	o = (st_grid_options){ .scale = 1 };
	cr_assert_eq(st_grid_render(v, &big, 0, &o, &g, err, sizeof err), -1);
	cr_assert(strstr(err, "show fewer channels or a smaller zoom") != NULL, "%s", err);
}

#ifdef ST_HAVE_TUI
Test(grid, picture_fits_its_area)
{
	int c, r;
	st_picture_fit(100, 100, 80, 20, &c, &r);
	cr_assert(c == 40 && r == 20, "%dx%d", c, r);
	st_picture_fit(100, 400, 80, 20, &c, &r);
	cr_assert(c == 80 && r == 10, "%dx%d", c, r);
	st_picture_fit(0, 10, 80, 20, &c, &r);
	cr_assert(c == 0 && r == 0);
}

/* The symbols of a fixed picture at a fixed size and colour mode against
 * the reference in tests/data/grid/ (chafa 1.12, as Debian 12 ships). */
static void
check_symbols(st_color_depth depth, bool ascii, const char *reference)
{
	/* A 16x16 picture: a grey ramp left to right, a red square top left. */
	float planes[3 * 256];
	for (int y = 0; y < 16; y++) {
		for (int x = 0; x < 16; x++) {
			float v = (float)x / 15.0f;
			bool red = x < 6 && y < 6;
			planes[y * 16 + x] = red ? 1.0f : v;
			planes[256 + y * 16 + x] = red ? 0.0f : v;
			planes[512 + y * 16 + x] = red ? 0.0f : v;
		}
	}
	char *text = st_picture_text(planes, 16, 16, 16, 8, depth, ascii);
	char *path = st_xasprintf("%s/tests/data/grid/%s", getenv("top_srcdir"), reference);
	size_t len;
	char *want = st_read_file(path, &len);
	if (want == NULL || strcmp(want, text) != 0) {
		/* STRATA_UPDATE_REFERENCES=1 writes the reference (then review it). */
		if (getenv("STRATA_UPDATE_REFERENCES") != NULL) {
			char err[256];
			cr_assert_eq(st_write_file_atomic(path, text, strlen(text), err, sizeof err), 0, "%s", err);
		} else {
			cr_assert_fail("%s differs from the symbols drawn now:\n%s", path, text);
		}
	}
	free(want);
	free(path);
	free(text);
}

Test(grid, symbols_against_references)
{
	check_symbols(ST_DEPTH_TRUE, false, "symbols-truecolor.txt");
	check_symbols(ST_DEPTH_256, false, "symbols-256.txt");
	check_symbols(ST_DEPTH_16, true, "symbols-16-ascii.txt");
}
#endif
