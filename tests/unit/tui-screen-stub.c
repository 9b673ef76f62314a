/* Test-only stand-in for tui-screen.c: the screen functions the canvas and
 * its tests use, written to the contract in st-tui.h, so that the canvas can
 * be tested before the real screen model lands. Linked into the unit-test
 * binary and bench/tui only (Makefile.am: TUI_SCREEN_STUB); the real
 * tui-screen.c replaces it. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "st-tui.h"

static const char *const glyph_utf8[ST_G_COUNT] = {
	[ST_G_HLINE] = "─", [ST_G_VLINE] = "│", [ST_G_TL] = "┌", [ST_G_TR] = "┐",
	[ST_G_BL] = "└", [ST_G_BR] = "┘", [ST_G_TEE_DOWN] = "┬", [ST_G_TEE_UP] = "┴",
	[ST_G_TEE_RIGHT] = "├", [ST_G_TEE_LEFT] = "┤", [ST_G_CROSS] = "┼",
	[ST_G_ARROW_DOWN] = "▽", [ST_G_OUTPUT] = "●", [ST_G_ERROR] = "✖", [ST_G_WARNING] = "⚠",
	[ST_G_INFO] = "ℹ", [ST_G_CHECK_ON] = "☑", [ST_G_CHECK_OFF] = "☐",
	[ST_G_TRIANGLE_RIGHT] = "▸", [ST_G_TRIANGLE_DOWN] = "▾", [ST_G_MINIMISED] = "▪",
	[ST_G_DOT] = "·", [ST_G_TIMES] = "×", [ST_G_ELLIPSIS] = "…",
};

static const char *const glyph_ascii[ST_G_COUNT] = {
	[ST_G_HLINE] = "-", [ST_G_VLINE] = "|", [ST_G_TL] = "+", [ST_G_TR] = "+",
	[ST_G_BL] = "+", [ST_G_BR] = "+", [ST_G_TEE_DOWN] = "+", [ST_G_TEE_UP] = "+",
	[ST_G_TEE_RIGHT] = "+", [ST_G_TEE_LEFT] = "+", [ST_G_CROSS] = "+",
	[ST_G_ARROW_DOWN] = "v", [ST_G_OUTPUT] = "o", [ST_G_ERROR] = "x", [ST_G_WARNING] = "!",
	[ST_G_INFO] = "i", [ST_G_CHECK_ON] = "[x]", [ST_G_CHECK_OFF] = "[ ]",
	[ST_G_TRIANGLE_RIGHT] = ">", [ST_G_TRIANGLE_DOWN] = "v", [ST_G_MINIMISED] = "#",
	[ST_G_DOT] = ".", [ST_G_TIMES] = "x", [ST_G_ELLIPSIS] = "...",
};

/* Decodes one UTF-8 sequence; returns its length (1 for an invalid byte,
 * with *cp set to U+FFFD). */
static int
decode(const char *p, unsigned *cp)
{
	const unsigned char *u = (const unsigned char *)p;
	int n;
	unsigned c;
	if (u[0] < 0x80) {
		*cp = u[0];
		return 1;
	} else if ((u[0] & 0xe0) == 0xc0) {
		n = 2;
		c = u[0] & 0x1f;
	} else if ((u[0] & 0xf0) == 0xe0) {
		n = 3;
		c = u[0] & 0x0f;
	} else if ((u[0] & 0xf8) == 0xf0) {
		n = 4;
		c = u[0] & 0x07;
	} else {
		*cp = 0xfffd;
		return 1;
	}
	for (int i = 1; i < n; i++) {
		if ((u[i] & 0xc0) != 0x80) {
			*cp = 0xfffd;
			return 1;
		}
		c = (c << 6) | (u[i] & 0x3f);
	}
	*cp = c;
	return n;
}

/* Columns of one code point: a small table of the wide and combining ranges
 * a stand-in needs. */
static int
codepoint_width(unsigned c)
{
	if (c == 0)
		return 0;
	if ((c >= 0x300 && c <= 0x36f) || c == 0x200d || (c >= 0xfe00 && c <= 0xfe0f))
		return 0;
	if ((c >= 0x1100 && c <= 0x115f) || (c >= 0x2e80 && c <= 0xa4cf) ||
	    (c >= 0xac00 && c <= 0xd7a3) || (c >= 0xf900 && c <= 0xfaff) ||
	    (c >= 0xfe30 && c <= 0xfe4f) || (c >= 0xff00 && c <= 0xff60) ||
	    (c >= 0xffe0 && c <= 0xffe6) || (c >= 0x1f300 && c <= 0x1f64f) ||
	    (c >= 0x1f900 && c <= 0x1f9ff) || (c >= 0x20000 && c <= 0x3fffd))
		return 2;
	return 1;
}

static void
blank(st_cell *c, const st_style *style)
{
	memset(c, 0, sizeof *c);
	c->ch[0] = ' ';
	c->width = 1;
	if (style)
		c->style = *style;
}

st_screen *
st_screen_new(int w, int h)
{
	st_screen *s = st_xcalloc(1, sizeof *s);
	s->w = w;
	s->h = h;
	s->cells = st_xcalloc((size_t)(w * h > 0 ? w * h : 1), sizeof *s->cells);
	for (int i = 0; i < w * h; i++)
		blank(&s->cells[i], NULL);
	s->clip = (st_rect){ 0, 0, w, h };
	return s;
}

void
st_screen_free(st_screen *s)
{
	if (s == NULL)
		return;
	free(s->cells);
	free(s);
}

void
st_screen_clear(st_screen *s, const st_style *style)
{
	for (int i = 0; i < s->w * s->h; i++)
		blank(&s->cells[i], style);
}

st_cell *
st_screen_at(st_screen *s, int x, int y)
{
	if (x < 0 || y < 0 || x >= s->w || y >= s->h)
		return NULL;
	return &s->cells[y * s->w + x];
}

st_rect
st_screen_set_clip(st_screen *s, st_rect clip)
{
	st_rect old = s->clip;
	int x0 = clip.x > 0 ? clip.x : 0, y0 = clip.y > 0 ? clip.y : 0;
	int x1 = clip.x + clip.w < s->w ? clip.x + clip.w : s->w;
	int y1 = clip.y + clip.h < s->h ? clip.y + clip.h : s->h;
	s->clip = (st_rect){ x0, y0, x1 > x0 ? x1 - x0 : 0, y1 > y0 ? y1 - y0 : 0 };
	return old;
}

static bool
in_clip(const st_screen *s, int x, int y)
{
	return x >= s->clip.x && y >= s->clip.y && x < s->clip.x + s->clip.w &&
	       y < s->clip.y + s->clip.h;
}

/* Puts one grapheme of the given width at (x, y) when it fits in the clip. */
static void
put(st_screen *s, int x, int y, const char *ch, int len, int width, const st_style *style)
{
	if (!in_clip(s, x, y) || (width == 2 && !in_clip(s, x + 1, y)))
		return;
	st_cell *c = &s->cells[y * s->w + x];
	/* Writing over half of a wide character blanks its other half. */
	if (c->width == 0 && x > 0)
		blank(&s->cells[y * s->w + x - 1], &s->cells[y * s->w + x - 1].style);
	if (c->width == 2 && x + 1 < s->w)
		blank(&s->cells[y * s->w + x + 1], &s->cells[y * s->w + x + 1].style);
	memset(c->ch, 0, sizeof c->ch);
	memcpy(c->ch, ch, (size_t)(len < 7 ? len : 7));
	c->width = (uint8_t)width;
	c->style = *style;
	if (width == 2) {
		st_cell *d = &s->cells[y * s->w + x + 1];
		memset(d->ch, 0, sizeof d->ch);
		d->width = 0;
		d->style = *style;
	}
}

int
st_screen_text(st_screen *s, int x, int y, const char *utf8, const st_style *style, int max_cols)
{
	if (max_cols < 0)
		max_cols = s->clip.x + s->clip.w - x;
	int col = 0;
	for (const char *p = utf8; *p;) {
		unsigned cp;
		int n = decode(p, &cp);
		const char *ch = p;
		if (cp == 0xfffd && n == 1) {
			ch = s->ascii ? "?" : "\xef\xbf\xbd";
			n = s->ascii ? 1 : 3;
		}
		int w = codepoint_width(cp);
		p += (ch == p) ? n : 1;
		if (w == 0)
			continue;
		if (col + w > max_cols)
			break;
		put(s, x + col, y, ch, n, w, style);
		col += w;
	}
	return col;
}

int
st_screen_text_fit(st_screen *s, int x, int y, const char *utf8, const st_style *style, int max_cols)
{
	if (max_cols < 0)
		max_cols = s->clip.x + s->clip.w - x;
	if (st_text_width(utf8) <= max_cols)
		return st_screen_text(s, x, y, utf8, style, max_cols);
	const char *dots = st_glyph_text(s, ST_G_ELLIPSIS);
	int dw = st_text_width(dots);
	if (max_cols < dw)
		return 0;
	int n = st_screen_text(s, x, y, utf8, style, max_cols - dw);
	return n + st_screen_text(s, x + n, y, dots, style, dw);
}

int
st_screen_printf(st_screen *s, int x, int y, const st_style *style, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *text = st_xvasprintf(fmt, ap);
	va_end(ap);
	int n = st_screen_text(s, x, y, text, style, -1);
	free(text);
	return n;
}

const char *
st_glyph_text(const st_screen *s, st_glyph g)
{
	return s->ascii ? glyph_ascii[g] : glyph_utf8[g];
}

int
st_screen_glyph(st_screen *s, int x, int y, st_glyph g, const st_style *style)
{
	return st_screen_text(s, x, y, st_glyph_text(s, g), style, -1);
}

void
st_screen_fill(st_screen *s, st_rect r, const char *ch, const st_style *style)
{
	for (int y = r.y; y < r.y + r.h; y++) {
		for (int x = r.x; x < r.x + r.w; x++)
			st_screen_text(s, x, y, ch, style, 1);
	}
}

void
st_screen_box(st_screen *s, st_rect r, const st_style *border, const char *title,
              const st_style *title_style)
{
	if (r.w < 2 || r.h < 2)
		return;
	for (int x = r.x + 1; x < r.x + r.w - 1; x++) {
		st_screen_glyph(s, x, r.y, ST_G_HLINE, border);
		st_screen_glyph(s, x, r.y + r.h - 1, ST_G_HLINE, border);
	}
	for (int y = r.y + 1; y < r.y + r.h - 1; y++) {
		st_screen_glyph(s, r.x, y, ST_G_VLINE, border);
		st_screen_glyph(s, r.x + r.w - 1, y, ST_G_VLINE, border);
	}
	st_screen_glyph(s, r.x, r.y, ST_G_TL, border);
	st_screen_glyph(s, r.x + r.w - 1, r.y, ST_G_TR, border);
	st_screen_glyph(s, r.x, r.y + r.h - 1, ST_G_BL, border);
	st_screen_glyph(s, r.x + r.w - 1, r.y + r.h - 1, ST_G_BR, border);
	if (title)
		st_screen_text_fit(s, r.x + 1, r.y, title, title_style ? title_style : border, r.w - 2);
}

int
st_text_width(const char *utf8)
{
	int w = 0;
	for (const char *p = utf8; *p;) {
		unsigned cp;
		p += decode(p, &cp);
		w += codepoint_width(cp);
	}
	return w;
}

char *
st_screen_row_text(const st_screen *s, int x, int y, int w)
{
	st_buf b;
	st_buf_init(&b);
	st_buf_puts(&b, "");
	for (int i = x; i < x + w && i < s->w; i++) {
		if (i < 0 || y < 0 || y >= s->h)
			continue;
		const st_cell *c = &s->cells[y * s->w + i];
		if (c->width > 0)
			st_buf_puts(&b, c->ch);
	}
	return st_buf_take(&b);
}

char *
st_screen_dump(const st_screen *s)
{
	st_buf b;
	st_buf_init(&b);
	st_buf_puts(&b, "");
	for (int y = 0; y < s->h; y++) {
		char *row = st_screen_row_text(s, 0, y, s->w);
		size_t n = strlen(row);
		while (n > 0 && row[n - 1] == ' ')
			n--;
		st_buf_add(&b, row, n);
		st_buf_putc(&b, '\n');
		free(row);
	}
	return st_buf_take(&b);
}

bool
st_style_equal(const st_style *a, const st_style *b)
{
	return a->fg == b->fg && a->bg == b->bg && a->attrs == b->attrs;
}
