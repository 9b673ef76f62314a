/* The channel inspector: a layer's output (or its weights, a kernel
 * picture per output channel) as a page of channel thumbnails rendered by
 * st_grid_render and drawn as chafa symbols, or one channel zoomed with its
 * statistics. Pure over its state: the view copies the tensor in. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui-analysis.h"

/* A thumbnail takes at least this many cells. */
#define THUMB_COLS 10
#define THUMB_ROWS 5

int
st_an_draw_wrapped(st_screen *s, int x, int y, int w, int max_lines, const char *text, const st_style *style)
{
	int lines = 0;
	while (*text && lines < max_lines) {
		/* The longest run of whole words that fits (or the rest, cut). */
		size_t fit = 0;
		for (size_t i = 0;; i++) {
			if (text[i] == ' ' || text[i] == '\0') {
				char *part = st_xstrndup(text, i);
				bool fits = st_text_width(part) <= w;
				free(part);
				if (!fits)
					break;
				fit = i;
				if (text[i] == '\0')
					break;
			}
		}
		if (fit == 0 || lines == max_lines - 1)
			fit = strlen(text);
		char *line = st_xstrndup(text, fit);
		st_screen_text_fit(s, x, y + lines, line, style, w);
		free(line);
		lines++;
		text += fit;
		while (*text == ' ')
			text++;
	}
	return lines;
}

void
st_inspector_init(st_inspector *in)
{
	memset(in, 0, sizeof *in);
	in->row = -1;
	in->runs = -1;
	in->data_row = -1;
	in->colormap = ST_COLORMAP_GRAY;
	in->page_size = 1;
	in->columns = 1;
}

void
st_inspector_free(st_inspector *in)
{
	free(in->data);
	in->data = NULL;
	free(in->pixels);
	in->pixels = NULL;
}

/* FNV-1a over the picture and where it goes: the pixels are made again
 * only when something changed. */
static uint64_t
picture_hash(const st_grid *g, int x, int y, int cols, int rows, st_graphics mode)
{
	uint64_t h = 1469598103934665603ull;
	const int head[] = { g->height, g->width, x, y, cols, rows, (int)mode };
	const unsigned char *p = (const unsigned char *)head;
	for (size_t i = 0; i < sizeof head; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	p = (const unsigned char *)g->planes;
	for (size_t i = 0; i < sizeof *g->planes * 3 * (size_t)g->height * (size_t)g->width; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h;
}

void
st_inspector_invalidate(st_inspector *in)
{
	free(in->data);
	in->data = NULL;
	in->runs = -1;
}

/* The tensor as the grid reads it: weights O x I x kh x kw become O
 * pictures of (I*kh) x kw, each output channel's kernels stacked. */
static st_shape
grid_shape(const st_inspector *in)
{
	st_shape s = in->shape;
	if (!in->weights || s.rank < 2)
		return s;
	st_shape g = { .rank = 4, .dtype = s.dtype };
	g.dims[0] = 1;
	g.dims[1] = s.dims[0];
	int64_t h = 1;
	for (int k = 1; k < s.rank - 1; k++)
		h *= s.dims[k];
	g.dims[2] = h;
	g.dims[3] = s.dims[s.rank - 1];
	return g;
}

int64_t
st_inspector_channels(const st_inspector *in)
{
	if (in->data == NULL)
		return 0;
	st_shape g = grid_shape(in);
	int64_t c, h, w;
	st_grid_geometry(&g, &c, &h, &w);
	return c;
}

int
st_inspector_render(st_inspector *in, st_grid *g, char *err, size_t err_size)
{
	memset(g, 0, sizeof *g);
	if (in->data == NULL) {
		snprintf(err, err_size, "%s", in->error[0] ? in->error : "nothing to show");
		return -1;
	}
	int64_t channels = st_inspector_channels(in);
	if (in->channel >= channels)
		in->channel = channels > 0 ? channels - 1 : 0;
	int size = in->page_size > 0 ? in->page_size : 1;
	st_grid_options opt = { .colormap = in->colormap, .shared_range = in->shared_range, .gap = -1 };
	if (in->zoom) {
		opt.first = in->channel;
		opt.count = 1;
		opt.columns = 1;
		opt.gap = 0; /* the channel alone, as exported */
	} else {
		opt.first = in->channel / size * size;
		opt.count = size;
		if (opt.first + opt.count > channels)
			opt.count = channels - opt.first;
		opt.columns = in->columns < opt.count ? in->columns : (int)opt.count;
	}
	st_shape s = grid_shape(in);
	return st_grid_render(in->data, &s, 0, &opt, g, err, err_size);
}

void
st_inspector_stats_line(const st_inspector *in, char *out, size_t size)
{
	out[0] = '\0';
	if (in->data == NULL)
		return;
	st_shape s = grid_shape(in);
	int64_t c, h, w;
	st_grid_geometry(&s, &c, &h, &w);
	if (in->channel >= c)
		return;
	st_channel_stats st;
	st_channel_stats_of(in->data + in->channel * h * w, h * w, &st);
	snprintf(out, size, "channel %lld/%lld %lldx%lld  min %.6g  max %.6g  mean %.6g  std %.6g  NaN %lld  Inf %lld",
	         (long long)in->channel, (long long)c, (long long)h, (long long)w, st.min, st.max, st.mean, st.std,
	         (long long)st.nan, (long long)st.inf);
}

void
st_inspector_draw(st_inspector *in, st_screen *s, st_rect r, const st_theme *theme, const char *layer,
                  const char *mode, st_color_depth depth, bool ascii, bool focused)
{
	const st_style *text = &theme->roles[ST_ROLE_TEXT];
	const st_style *dim = &theme->roles[ST_ROLE_DIM];
	char title[128];
	snprintf(title, sizeof title, "Channel Inspector · %s", mode);
	st_screen_box(s, r, &theme->roles[focused ? ST_ROLE_BORDER_FOCUS : ST_ROLE_BORDER], title,
	              &theme->roles[ST_ROLE_TITLE]);
	st_rect in_r = { r.x + 1, r.y + 1, r.w - 2, r.h - 2 };
	if (in_r.w < 4 || in_r.h < 3)
		return;
	int64_t channels = st_inspector_channels(in);
	/* Thumbnails sized by the area: the page holds what fits. */
	int pic_h = in_r.h - 3;
	in->columns = in_r.w / THUMB_COLS > 0 ? in_r.w / THUMB_COLS : 1;
	int rows = pic_h / THUMB_ROWS > 0 ? pic_h / THUMB_ROWS : 1;
	in->page_size = in->columns * rows;
	char head[256];
	int size = in->page_size;
	if (in->data == NULL) {
		snprintf(head, sizeof head, "%s", layer ? layer : "no layer");
	} else if (in->zoom) {
		snprintf(head, sizeof head, "%s %s · zoom · %s%s", layer, in->weights ? "weights" : "output",
		         st_colormap_name(in->colormap), in->shared_range ? " · shared range" : "");
	} else {
		int64_t first = in->channel / size * size;
		int64_t last = first + size < channels ? first + size : channels;
		snprintf(head, sizeof head, "%s %s · channels %lld-%lld of %lld · page %lld/%lld · %s%s", layer,
		         in->weights ? "weights" : "output", (long long)first, (long long)(last - 1), (long long)channels,
		         (long long)(first / size + 1), (long long)((channels + size - 1) / size),
		         st_colormap_name(in->colormap), in->shared_range ? " · shared range" : "");
	}
	st_screen_text_fit(s, in_r.x, in_r.y, head, text, in_r.w);
	st_grid g;
	char err[320];
	if (st_inspector_render(in, &g, err, sizeof err) != 0) {
		st_screen_text_fit(s, in_r.x, in_r.y + 1, err, dim, in_r.w);
		return;
	}
	int cols, prows;
	st_picture_fit(g.height, g.width, in_r.w, pic_h, &cols, &prows);
	if (in->graphics == ST_GRAPHICS_SYMBOLS) {
		st_picture_draw(s, in_r.x, in_r.y + 1, cols, prows, g.planes, g.height, g.width, depth, ascii);
	} else {
		/* The cells stay blank; the pixels are written over them after the
		 * frame (st_analysis_pixels). */
		uint64_t h = picture_hash(&g, in_r.x, in_r.y + 1, cols, prows, in->graphics);
		if (in->pixels == NULL || h != in->pixel_hash) {
			free(in->pixels);
			in->pixels = st_picture_pixels(g.planes, g.height, g.width, cols, prows, 0, 0, in->graphics);
			in->pixel_hash = h;
			in->pixel_x = in_r.x;
			in->pixel_y = in_r.y + 1;
			in->pixels_new = true;
		}
	}
	st_grid_free(&g);
	char foot[256];
	if (in->zoom)
		st_inspector_stats_line(in, foot, sizeof foot);
	else
		snprintf(foot, sizeof foot, "cursor on channel %lld", (long long)in->channel);
	st_an_draw_wrapped(s, in_r.x, in_r.y + in_r.h - 2, in_r.w, 2, foot, in->zoom ? text : dim);
}
