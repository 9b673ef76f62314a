/* Pictures in the terminal: an RGB image turned by libchafa into coloured
 * symbols (block and half-block characters with a foreground and a
 * background colour per cell), copied into the screen model, so that they
 * work in every terminal, inside tmux and over SSH. Only calls that
 * Debian 12's chafa 1.12 has are used. */
#include "config.h"

#include <chafa.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "st-tui.h"

/* The canvas mode for a colour depth; colours come back as 0xRRGGBB in
 * truecolor and as palette indices in the indexed modes. */
static ChafaCanvasMode
canvas_mode(st_color_depth depth)
{
	switch (depth) {
	case ST_DEPTH_TRUE:
		return CHAFA_CANVAS_MODE_TRUECOLOR;
	case ST_DEPTH_256:
		return CHAFA_CANVAS_MODE_INDEXED_240; /* the cube and greys: the first 16 follow the theme */
	case ST_DEPTH_16:
		return CHAFA_CANVAS_MODE_INDEXED_16;
	case ST_DEPTH_8:
		return CHAFA_CANVAS_MODE_INDEXED_8;
	default:
		return CHAFA_CANVAS_MODE_FGBG;
	}
}

void
st_picture_fit(int height, int width, int max_cols, int max_rows, int *cols, int *rows)
{
	if (height <= 0 || width <= 0 || max_cols <= 0 || max_rows <= 0) {
		*cols = *rows = 0;
		return;
	}
	/* A cell is about twice as high as wide: a square picture takes twice
	 * as many columns as rows. */
	double aspect = 2.0 * (double)width / (double)height;
	if ((double)max_cols > (double)max_rows * aspect) {
		*rows = max_rows;
		*cols = (int)((double)max_rows * aspect + 0.5);
	} else {
		*cols = max_cols;
		*rows = (int)((double)max_cols / aspect + 0.5);
	}
	*cols = *cols < 1 ? 1 : *cols;
	*rows = *rows < 1 ? 1 : *rows;
}

/* RGB8 pixels of three float planes (0 to 1); caller frees. */
static uint8_t *
rgb8_of(const float *planes, int height, int width)
{
	size_t n = (size_t)height * (size_t)width;
	uint8_t *px = st_xmalloc(n * 3);
	for (size_t i = 0; i < n; i++) {
		for (int k = 0; k < 3; k++) {
			float v = planes[(size_t)k * n + i];
			v = v > 0 ? (v < 1 ? v : 1) : 0; /* NaN is 0 */
			px[i * 3 + (size_t)k] = (uint8_t)(v * 255.0f + 0.5f);
		}
	}
	return px;
}

/* A chafa canvas of cols x rows holding the picture; caller frees with
 * chafa_canvas_unref. */
static ChafaCanvas *
make_canvas(const float *planes, int height, int width, int cols, int rows, st_color_depth depth, bool ascii)
{
	ChafaSymbolMap *map = chafa_symbol_map_new();
	chafa_symbol_map_add_by_tags(map, ascii ? CHAFA_SYMBOL_TAG_ASCII
	                                        : (ChafaSymbolTags)(CHAFA_SYMBOL_TAG_BLOCK | CHAFA_SYMBOL_TAG_SPACE));
	ChafaCanvasConfig *config = chafa_canvas_config_new();
	chafa_canvas_config_set_geometry(config, cols, rows);
	chafa_canvas_config_set_canvas_mode(config, canvas_mode(depth));
	chafa_canvas_config_set_pixel_mode(config, CHAFA_PIXEL_MODE_SYMBOLS);
	chafa_canvas_config_set_symbol_map(config, map);
	/* No dithering: the same picture gives the same cells every time. */
	chafa_canvas_config_set_dither_mode(config, CHAFA_DITHER_MODE_NONE);
	ChafaCanvas *canvas = chafa_canvas_new(config);
	uint8_t *px = rgb8_of(planes, height, width);
	chafa_canvas_draw_all_pixels(canvas, CHAFA_PIXEL_RGB8, px, width, height, width * 3);
	free(px);
	chafa_canvas_config_unref(config);
	chafa_symbol_map_unref(map);
	return canvas;
}

/* Our colour for a colour chafa gave. Chafa 1.12 gives packed RGB in
 * every mode (in the indexed ones, the palette entry's own RGB), and -1
 * where the cell keeps the terminal's colour; st_color_downgrade turns
 * that back into the index the canvas mode picked. */
static st_color
color_of(gint c, st_color_depth depth)
{
	if (c < 0 || depth == ST_DEPTH_MONO)
		return ST_COLOR_DEFAULT;
	return st_color_downgrade(ST_COLOR_RGB((c >> 16) & 0xff, (c >> 8) & 0xff, c & 0xff), depth);
}

void
st_picture_draw(st_screen *s, int x, int y, int cols, int rows, const float *planes, int height, int width,
                st_color_depth depth, bool ascii)
{
	if (cols <= 0 || rows <= 0 || height <= 0 || width <= 0)
		return;
	ChafaCanvas *canvas = make_canvas(planes, height, width, cols, rows, depth, ascii);
	for (int r = 0; r < rows; r++) {
		for (int c = 0; c < cols; c++) {
			gunichar ch = chafa_canvas_get_char_at(canvas, c, r);
			gint fg = -1, bg = -1;
			chafa_canvas_get_colors_at(canvas, c, r, &fg, &bg);
			char text[8] = { 0 };
			int n = g_unichar_to_utf8(ch ? ch : ' ', text);
			text[n] = '\0';
			st_style style = { .fg = color_of(fg, depth), .bg = color_of(bg, depth) };
			st_screen_text(s, x + c, y + r, text, &style, 1);
		}
	}
	chafa_canvas_unref(canvas);
}

char *
st_picture_text(const float *planes, int height, int width, int cols, int rows, st_color_depth depth, bool ascii)
{
	if (cols <= 0 || rows <= 0 || height <= 0 || width <= 0)
		return st_xstrdup("");
	/* Drawn into a screen model of its own, then written with plain SGR
	 * sequences: the same cells the TUI shows. */
	st_screen *s = st_screen_new(cols, rows);
	st_picture_draw(s, 0, 0, cols, rows, planes, height, width, depth, ascii);
	st_buf out;
	st_buf_init(&out);
	for (int r = 0; r < rows; r++) {
		for (int c = 0; c < cols; c++) {
			const st_cell *cell = &s->cells[r * cols + c];
			st_color col[2] = { cell->style.fg, cell->style.bg };
			for (int k = 0; k < 2; k++) {
				int base = k ? 48 : 38;
				switch (ST_COLOR_KIND(col[k])) {
				case 2:
					st_buf_printf(&out, "\033[%d;2;%u;%u;%um", base, (col[k] >> 16) & 0xff, (col[k] >> 8) & 0xff,
					              col[k] & 0xff);
					break;
				case 1:
					st_buf_printf(&out, "\033[%d;5;%um", base, col[k] & 0xff);
					break;
				default:
					st_buf_printf(&out, "\033[%dm", base + 1);
					break;
				}
			}
			st_buf_puts(&out, cell->ch[0] ? cell->ch : " ");
		}
		st_buf_puts(&out, "\033[0m\n");
	}
	st_screen_free(s);
	return st_buf_take(&out);
}

/* ---- pixels: sixel and kitty ---- */

extern char **environ;

const char *
st_graphics_name(st_graphics g)
{
	return g == ST_GRAPHICS_SIXEL ? "sixel" : g == ST_GRAPHICS_KITTY ? "kitty" : "symbols";
}

int
st_graphics_find(const char *name)
{
	for (int g = ST_GRAPHICS_SYMBOLS; g <= ST_GRAPHICS_KITTY; g++) {
		if (strcmp(name, st_graphics_name((st_graphics)g)) == 0)
			return g;
	}
	return -1;
}

st_graphics
st_graphics_detect(char *why, size_t why_size)
{
	const char *term = getenv("TERM");
	if (getenv("TMUX") != NULL) {
		snprintf(why, why_size, "inside tmux, which passes no sixel or kitty graphics by default");
		return ST_GRAPHICS_SYMBOLS;
	}
	ChafaTermInfo *info = chafa_term_db_detect(chafa_term_db_get_default(), environ);
	st_graphics g = ST_GRAPHICS_SYMBOLS;
	if (info != NULL && chafa_term_info_have_seq(info, CHAFA_TERM_SEQ_BEGIN_KITTY_IMMEDIATE_IMAGE_V1))
		g = ST_GRAPHICS_KITTY;
	else if (info != NULL && chafa_term_info_have_seq(info, CHAFA_TERM_SEQ_BEGIN_SIXELS))
		g = ST_GRAPHICS_SIXEL;
	if (info != NULL)
		chafa_term_info_unref(info);
	if (g == ST_GRAPHICS_SYMBOLS)
		snprintf(why, why_size, "TERM=%s has no sixel or kitty graphics that Strata knows of", term ? term : "");
	else
		snprintf(why, why_size, "TERM=%s has %s graphics", term ? term : "", st_graphics_name(g));
	return g;
}

char *
st_picture_pixels(const float *planes, int height, int width, int cols, int rows, int cell_w, int cell_h,
                  st_graphics g)
{
	if (cols <= 0 || rows <= 0 || height <= 0 || width <= 0 || g == ST_GRAPHICS_SYMBOLS)
		return st_xstrdup("");
	ChafaCanvasConfig *config = chafa_canvas_config_new();
	chafa_canvas_config_set_geometry(config, cols, rows);
	chafa_canvas_config_set_cell_geometry(config, cell_w > 0 ? cell_w : 10, cell_h > 0 ? cell_h : 20);
	chafa_canvas_config_set_pixel_mode(config, g == ST_GRAPHICS_KITTY ? CHAFA_PIXEL_MODE_KITTY
	                                                                 : CHAFA_PIXEL_MODE_SIXELS);
	ChafaCanvas *canvas = chafa_canvas_new(config);
	uint8_t *px = rgb8_of(planes, height, width);
	chafa_canvas_draw_all_pixels(canvas, CHAFA_PIXEL_RGB8, px, width, height, width * 3);
	free(px);
	/* The fallback terminal has every sequence; the caller chose the mode. */
	GString *text = chafa_canvas_print(canvas, NULL);
	char *out = st_xstrndup(text->str, text->len);
	g_string_free(text, TRUE);
	chafa_canvas_unref(canvas);
	chafa_canvas_config_unref(config);
	return out;
}
