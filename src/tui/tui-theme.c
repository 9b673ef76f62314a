/* Themes: semantic colour roles read from themes/NAME.theme files, the
 * built-in default, and bringing colours down to what a terminal shows. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "st-tui.h"

const char *const st_role_names[ST_ROLE_COUNT] = {
	[ST_ROLE_TEXT] = "text",
	[ST_ROLE_DIM] = "dim",
	[ST_ROLE_BORDER] = "border",
	[ST_ROLE_BORDER_FOCUS] = "border_focus",
	[ST_ROLE_TITLE] = "title",
	[ST_ROLE_SELECTED] = "selected",
	[ST_ROLE_CURSOR] = "cursor",
	[ST_ROLE_HINT_KEY] = "hint_key",
	[ST_ROLE_HINT_TEXT] = "hint_text",
	[ST_ROLE_STATUS] = "status",
	[ST_ROLE_ERROR] = "error",
	[ST_ROLE_WARNING] = "warning",
	[ST_ROLE_INFO] = "info",
	[ST_ROLE_GLYPH] = "glyph",
	[ST_ROLE_GLYPH_BORDER] = "glyph_border",
	[ST_ROLE_GLYPH_NAME] = "glyph_name",
	[ST_ROLE_GLYPH_SELECTED] = "glyph_selected",
	[ST_ROLE_TERMINAL] = "terminal",
	[ST_ROLE_LINK] = "link",
	[ST_ROLE_LINK_IN] = "link_in",
	[ST_ROLE_LINK_OUT] = "link_out",
	[ST_ROLE_SHAPE] = "shape",
	[ST_ROLE_GRID] = "grid",
	[ST_ROLE_MENU] = "menu",
	[ST_ROLE_MENU_SELECTED] = "menu_selected",
	[ST_ROLE_INPUT] = "input",
	[ST_ROLE_BAR] = "bar",
	[ST_ROLE_SERIES_1] = "series_1",
	[ST_ROLE_SERIES_2] = "series_2",
	[ST_ROLE_SERIES_3] = "series_3",
	[ST_ROLE_SERIES_4] = "series_4",
	[ST_ROLE_SERIES_5] = "series_5",
	[ST_ROLE_SERIES_6] = "series_6",
	[ST_ROLE_HEAT_1] = "heat_1",
	[ST_ROLE_HEAT_2] = "heat_2",
	[ST_ROLE_HEAT_3] = "heat_3",
	[ST_ROLE_HEAT_4] = "heat_4",
};

/* ---- the built-in theme: the same as themes/dark.theme (a test checks) ---- */

#define RGB(v) ST_COLOR_RGB(((v) >> 16) & 0xff, ((v) >> 8) & 0xff, (v) & 0xff)
#define FG(v, a) { RGB(v), ST_COLOR_DEFAULT, (a) }
#define FGBG(f, b, a) { RGB(f), RGB(b), (a) }

static const st_color default_background = RGB(0x1d2027);

static const st_style default_roles[ST_ROLE_COUNT] = {
	[ST_ROLE_TEXT] = FG(0xc8ccd4, 0),
	[ST_ROLE_DIM] = FG(0x7c8491, 0),
	[ST_ROLE_BORDER] = FG(0x454b57, 0),
	[ST_ROLE_BORDER_FOCUS] = FG(0x82aaff, ST_ATTR_BOLD),
	[ST_ROLE_TITLE] = FG(0xc8ccd4, ST_ATTR_BOLD),
	[ST_ROLE_SELECTED] = FGBG(0xeef0f4, 0x323846, ST_ATTR_BOLD),
	[ST_ROLE_CURSOR] = FGBG(0x1d2027, 0x82aaff, 0),
	[ST_ROLE_HINT_KEY] = FG(0xe5c07b, ST_ATTR_BOLD),
	[ST_ROLE_HINT_TEXT] = FG(0x8b929e, 0),
	[ST_ROLE_STATUS] = FGBG(0xc8ccd4, 0x2a2e37, 0),
	[ST_ROLE_ERROR] = FG(0xef6b73, ST_ATTR_BOLD),
	[ST_ROLE_WARNING] = FG(0xe5c07b, ST_ATTR_BOLD),
	[ST_ROLE_INFO] = FG(0x61afef, 0),
	[ST_ROLE_GLYPH] = FG(0xb4bac4, 0),
	[ST_ROLE_GLYPH_BORDER] = FG(0x5c6370, 0),
	[ST_ROLE_GLYPH_NAME] = FG(0xe6e9ef, ST_ATTR_BOLD),
	[ST_ROLE_GLYPH_SELECTED] = FG(0x82aaff, ST_ATTR_BOLD),
	[ST_ROLE_TERMINAL] = FG(0x98c379, 0),
	[ST_ROLE_LINK] = FG(0x7f8794, 0),
	[ST_ROLE_LINK_IN] = FG(0xe5c07b, 0),
	[ST_ROLE_LINK_OUT] = FG(0x61afef, 0),
	[ST_ROLE_SHAPE] = FG(0x7c8491, ST_ATTR_ITALIC),
	[ST_ROLE_GRID] = FG(0x2c313a, 0),
	[ST_ROLE_MENU] = FGBG(0xc8ccd4, 0x2a2e37, 0),
	[ST_ROLE_MENU_SELECTED] = FGBG(0x1d2027, 0x82aaff, ST_ATTR_BOLD),
	[ST_ROLE_INPUT] = FGBG(0xeef0f4, 0x3a4050, 0),
	[ST_ROLE_BAR] = FG(0x61afef, 0),
	[ST_ROLE_SERIES_1] = FG(0xe5c07b, 0),
	[ST_ROLE_SERIES_2] = FG(0xc678dd, 0),
	[ST_ROLE_SERIES_3] = FG(0x98c379, 0),
	[ST_ROLE_SERIES_4] = FG(0xe06c75, 0),
	[ST_ROLE_SERIES_5] = FG(0x56b6c2, 0),
	[ST_ROLE_SERIES_6] = FG(0xd19a66, 0),
	[ST_ROLE_HEAT_1] = FG(0x61afef, 0),
	[ST_ROLE_HEAT_2] = FG(0xe5c07b, 0),
	[ST_ROLE_HEAT_3] = FG(0xd19a66, ST_ATTR_BOLD),
	[ST_ROLE_HEAT_4] = FG(0xef6b73, ST_ATTR_BOLD),
};

st_theme *
st_theme_default(void)
{
	st_theme *t = st_xcalloc(1, sizeof *t);
	t->name = st_xstrdup("dark");
	memcpy(t->roles, default_roles, sizeof t->roles);
	t->background = default_background;
	return t;
}

void
st_theme_free(st_theme *t)
{
	if (t == NULL)
		return;
	free(t->name);
	free(t);
}

/* ---- colours ---- */

static const char *const ansi_names[16] = {
	"black", "red", "green", "yellow", "blue", "magenta", "cyan", "white",
	"bright-black", "bright-red", "bright-green", "bright-yellow",
	"bright-blue", "bright-magenta", "bright-cyan", "bright-white",
};

/*
 * How colours come down to a terminal with fewer of them.
 *
 * - The terminal's default colour stays the default at every depth.
 * - True colour: unchanged.
 * - 256 colours: indexed colours are kept; an RGB colour becomes the nearest
 *   entry of xterm's 6x6x6 cube (levels 0, 95, 135, 175, 215, 255; indices
 *   16-231) or of its grey ramp (8, 18, ..., 238; indices 232-255) by the
 *   "redmean" weighted RGB distance, a cheap approximation of perceived
 *   difference. Indices 0-15 are never chosen for RGB colours, since
 *   terminals change them with their palette.
 * - 16 and 8 colours: indices below the depth are kept; any other colour
 *   (RGB, or an index through its xterm RGB value) keeps its hue rather than
 *   its nearest distance, which on so few colours turns greys cyan and
 *   yellows white. A colour with little chroma (max - min below 24, or
 *   below a quarter of max) is a grey: by lightness (max + min) / 2 it is
 *   black below 64, then bright black below 178, white below 242, bright
 *   white above; with 8 colours, black below 64 and white above. Any other
 *   colour takes the ANSI hue nearest its HSV hue (red 0, yellow 60, green
 *   120, cyan 180, blue 240, magenta 300 degrees), bright with 16 colours
 *   when it is light (max above 240, or above 200 with min above 80).
 * - Monochrome: everything becomes the default.
 *
 * tui-term.c adds two rules of its own: a coloured background that comes
 * down to the screen's background shows as reverse video (so selections
 * survive monochrome), and text whose colour comes down to its background's
 * takes black or white.
 */
static const uint8_t ansi_rgb[16][3] = {
	{ 0, 0, 0 },       { 205, 0, 0 },     { 0, 205, 0 },     { 205, 205, 0 },
	{ 0, 0, 238 },     { 205, 0, 205 },   { 0, 205, 205 },   { 229, 229, 229 },
	{ 127, 127, 127 }, { 255, 0, 0 },     { 0, 255, 0 },     { 255, 255, 0 },
	{ 92, 92, 255 },   { 255, 0, 255 },   { 0, 255, 255 },   { 255, 255, 255 },
};

static const uint8_t cube_levels[6] = { 0, 95, 135, 175, 215, 255 };

static void
index_rgb(int i, int rgb[3])
{
	if (i < 16) {
		for (int k = 0; k < 3; k++)
			rgb[k] = ansi_rgb[i][k];
	} else if (i < 232) {
		i -= 16;
		rgb[0] = cube_levels[i / 36];
		rgb[1] = cube_levels[(i / 6) % 6];
		rgb[2] = cube_levels[i % 6];
	} else {
		rgb[0] = rgb[1] = rgb[2] = 8 + 10 * (i - 232);
	}
}

static long
distance(const int a[3], const int b[3])
{
	long rmean = (a[0] + b[0]) / 2;
	long dr = a[0] - b[0], dg = a[1] - b[1], db = a[2] - b[2];
	return (((512 + rmean) * dr * dr) >> 8) + 4 * dg * dg + (((767 - rmean) * db * db) >> 8);
}

/* The index in [from, to) nearest to rgb; the lowest index on a tie. */
static int
nearest(const int rgb[3], int from, int to)
{
	int best = from;
	long best_d = -1;
	for (int i = from; i < to; i++) {
		int c[3];
		index_rgb(i, c);
		long dist = distance(rgb, c);
		if (best_d < 0 || dist < best_d) {
			best_d = dist;
			best = i;
		}
	}
	return best;
}

/* The ANSI colour (below n, 8 or 16) that keeps rgb's hue and lightness. */
static int
ansi_by_hue(const int rgb[3], int n)
{
	int r = rgb[0], g = rgb[1], b = rgb[2];
	int max = r > g ? (r > b ? r : b) : (g > b ? g : b);
	int min = r < g ? (r < b ? r : b) : (g < b ? g : b);
	int chroma = max - min, light = (max + min) / 2;
	if (chroma < 24 || chroma * 4 < max) {
		if (n == 8)
			return light < 64 ? 0 : 7;
		return light < 64 ? 0 : light < 178 ? 8 : light < 242 ? 7 : 15;
	}
	int hue;
	if (max == r)
		hue = 60 * (g - b) / chroma;
	else if (max == g)
		hue = 120 + 60 * (b - r) / chroma;
	else
		hue = 240 + 60 * (r - g) / chroma;
	if (hue < 0)
		hue += 360;
	static const int by_sector[6] = { 1, 3, 2, 6, 4, 5 }; /* red yellow green cyan blue magenta */
	int index = by_sector[((hue + 30) / 60) % 6];
	if (n == 16 && (max > 240 || (max > 200 && min > 80)))
		index += 8;
	return index;
}

st_color
st_color_downgrade(st_color c, st_color_depth depth)
{
	unsigned kind = ST_COLOR_KIND(c);
	if (kind == 0 || kind > 2 || depth == ST_DEPTH_MONO)
		return ST_COLOR_DEFAULT;
	if (depth == ST_DEPTH_TRUE)
		return c;
	int index = kind == 1 ? (int)(c & 0xffu) : -1;
	int limit = depth == ST_DEPTH_256 ? 256 : depth == ST_DEPTH_16 ? 16 : 8;
	if (index >= 0 && index < limit)
		return ST_COLOR_INDEX(index);
	int rgb[3];
	if (index >= 0) {
		index_rgb(index, rgb);
	} else {
		rgb[0] = (int)((c >> 16) & 0xffu);
		rgb[1] = (int)((c >> 8) & 0xffu);
		rgb[2] = (int)(c & 0xffu);
	}
	if (depth == ST_DEPTH_256)
		return ST_COLOR_INDEX(nearest(rgb, 16, 256));
	return ST_COLOR_INDEX(ansi_by_hue(rgb, limit));
}

/* ---- parsing ---- */

/* One whitespace-separated word of a line, and the column it starts at. */
typedef struct word {
	const char *s;
	int len, col;
} word;

static bool
word_is(const word *w, const char *s)
{
	return (size_t)w->len == strlen(s) && strncasecmp(w->s, s, (size_t)w->len) == 0;
}

static int
hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Whether w is "#" and six hex digits. */
static bool
is_hex_colour(const char *s, int len)
{
	if (len != 7 || s[0] != '#')
		return false;
	for (int i = 1; i < 7; i++)
		if (hex_digit(s[i]) < 0)
			return false;
	return true;
}

typedef enum colour_result { COLOUR_OK, COLOUR_NOT, COLOUR_BAD } colour_result;

/* Parses a colour word; COLOUR_NOT when it is not one at all, COLOUR_BAD
 * (with a reason in why) when it is one but out of range. */
static colour_result
parse_colour(const word *w, st_color *out, char *why, size_t why_size)
{
	if (word_is(w, "default")) {
		*out = ST_COLOR_DEFAULT;
		return COLOUR_OK;
	}
	if (w->s[0] == '#') {
		if (!is_hex_colour(w->s, w->len)) {
			char q[64];
			st_quote_snippet(w->s, (size_t)(w->len), q, sizeof q);
			snprintf(why, why_size, "'%s' is not a colour: write #RRGGBB with six hex digits", q);
			return COLOUR_BAD;
		}
		unsigned v = 0;
		for (int i = 1; i < 7; i++)
			v = v * 16 + (unsigned)hex_digit(w->s[i]);
		*out = ST_COLOR_RGB((v >> 16) & 0xff, (v >> 8) & 0xff, v & 0xff);
		return COLOUR_OK;
	}
	if (w->s[0] >= '0' && w->s[0] <= '9') {
		long v = 0;
		for (int i = 0; i < w->len; i++) {
			if (w->s[i] < '0' || w->s[i] > '9')
				return COLOUR_NOT;
			if (v < 1000)
				v = v * 10 + (w->s[i] - '0');
		}
		if (v > 255) {
			char q[64];
			st_quote_snippet(w->s, (size_t)(w->len), q, sizeof q);
			snprintf(why, why_size, "colour index %s is not between 0 and 255", q);
			return COLOUR_BAD;
		}
		*out = ST_COLOR_INDEX(v);
		return COLOUR_OK;
	}
	for (int i = 0; i < 16; i++) {
		if (word_is(w, ansi_names[i])) {
			*out = ST_COLOR_INDEX(i);
			return COLOUR_OK;
		}
	}
	return COLOUR_NOT;
}

static const struct {
	const char *name;
	uint16_t attr;
} attr_names[] = {
	{ "bold", ST_ATTR_BOLD },
	{ "dim", ST_ATTR_DIM },
	{ "italic", ST_ATTR_ITALIC },
	{ "underline", ST_ATTR_UNDERLINE },
	{ "reverse", ST_ATTR_REVERSE },
};

/* The closest of the colour names and attributes to w, for "did you mean". */
static const char *
suggest_word(const word *w)
{
	char q[64];
	st_quote_snippet(w->s, (size_t)(w->len), q, sizeof q);
	for (char *p = q; *p; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	const char *best = NULL;
	int best_d = 3;
	for (int i = 0; i < 16; i++) {
		int dist = st_edit_distance(q, ansi_names[i]);
		if (dist < best_d) {
			best_d = dist;
			best = ansi_names[i];
		}
	}
	for (size_t i = 0; i < sizeof attr_names / sizeof attr_names[0]; i++) {
		int dist = st_edit_distance(q, attr_names[i].name);
		if (dist < best_d) {
			best_d = dist;
			best = attr_names[i].name;
		}
	}
	return best;
}

/* Splits [s, end) into words; returns how many (at most max). */
static int
split_words(const char *s, const char *end, int col0, word *out, int max)
{
	int n = 0;
	const char *p = s;
	while (p < end && n < max) {
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (p >= end)
			break;
		const char *w = p;
		while (p < end && *p != ' ' && *p != '\t')
			p++;
		out[n++] = (word){ w, (int)(p - w), col0 + (int)(w - s) };
	}
	return n;
}

typedef struct parse_ctx {
	const char *file;
	st_diag *d;
	int line;
	int errors;
} parse_ctx;

static void
parse_error(parse_ctx *c, int col, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void
parse_error(parse_ctx *c, int col, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	st_diag_vadd(c->d, ST_SEVERITY_ERROR, c->file, c->line, col, fmt, ap);
	va_end(ap);
	c->errors++;
}

/* Parses "FG [on BG] [attributes]" (words w[0..n)); returns false after
 * reporting an error. */
static bool
parse_style(parse_ctx *c, const word *w, int n, const char *role, st_style *out)
{
	st_style st = { ST_COLOR_DEFAULT, ST_COLOR_DEFAULT, 0 };
	bool have_fg = false, have_bg = false, have_attr = false;
	char why[160];
	for (int i = 0; i < n; i++) {
		char q[64];
		st_quote_snippet(w[i].s, (size_t)(w[i].len), q, sizeof q);
		if (word_is(&w[i], "on")) {
			if (have_bg) {
				parse_error(c, w[i].col, "'%s' has two background colours", role);
				return false;
			}
			if (i + 1 >= n) {
				parse_error(c, w[i].col, "'on' needs a background colour after it");
				return false;
			}
			i++;
			st_quote_snippet(w[i].s, (size_t)(w[i].len), q, sizeof q);
			colour_result r = parse_colour(&w[i], &st.bg, why, sizeof why);
			if (r == COLOUR_BAD) {
				parse_error(c, w[i].col, "%s", why);
				return false;
			}
			if (r == COLOUR_NOT) {
				const char *hint = suggest_word(&w[i]);
				parse_error(c, w[i].col,
				            "'%s' is not a colour (#RRGGBB, 0-255, a colour name or default)%s%s%s",
				            q, hint ? "; did you mean '" : "", hint ? hint : "", hint ? "'?" : "");
				return false;
			}
			have_bg = true;
			continue;
		}
		bool is_attr = false;
		for (size_t a = 0; a < sizeof attr_names / sizeof attr_names[0]; a++) {
			if (word_is(&w[i], attr_names[a].name)) {
				st.attrs |= attr_names[a].attr;
				is_attr = true;
			}
		}
		if (is_attr) {
			have_attr = true;
			continue;
		}
		st_color col;
		colour_result r = parse_colour(&w[i], &col, why, sizeof why);
		if (r == COLOUR_BAD) {
			parse_error(c, w[i].col, "%s", why);
			return false;
		}
		if (r == COLOUR_OK) {
			if (have_fg || have_bg || have_attr) {
				parse_error(c, w[i].col,
				            "colour '%s' is out of place: write '%s = FG on BG' with attributes last",
				            q, role);
				return false;
			}
			st.fg = col;
			have_fg = true;
			continue;
		}
		const char *hint = suggest_word(&w[i]);
		parse_error(c, w[i].col,
		            "'%s' is neither a colour (#RRGGBB, 0-255, a colour name or default) nor an "
		            "attribute (bold, dim, italic, underline, reverse)%s%s%s",
		            q, hint ? "; did you mean '" : "", hint ? hint : "", hint ? "'?" : "");
		return false;
	}
	*out = st;
	return true;
}

/* The name of a theme file: its base name without ".theme". */
static char *
name_from_file(const char *file)
{
	if (file == NULL)
		return st_xstrdup("custom");
	const char *base = strrchr(file, '/');
	base = base ? base + 1 : file;
	size_t n = strlen(base);
	if (n > 6 && strcmp(base + n - 6, ".theme") == 0)
		n -= 6;
	return st_xstrndup(base, n);
}

st_theme *
st_theme_parse(const char *text, size_t len, const char *file, st_diag *d)
{
	st_theme *t = st_theme_default();
	free(t->name);
	t->name = name_from_file(file);
	parse_ctx c = { .file = file, .d = d };
	int set_on[ST_ROLE_COUNT + 1] = { 0 }; /* the line each role was set on; the last is the background */
	const char *end = text + len;
	const char *nul = memchr(text, '\0', len);
	if (nul != NULL) {
		int col = 1;
		c.line = 1;
		for (const char *p = text; p < nul; p++) {
			col = *p == '\n' ? 1 : col + 1;
			c.line += *p == '\n';
		}
		parse_error(&c, col, "binary data (a NUL byte): this is not a theme file");
		st_theme_free(t);
		return NULL;
	}
	const char *p = text;
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		if (eol == NULL)
			eol = end;
		const char *line = p;
		p = eol < end ? eol + 1 : end;
		c.line++;
		const char *stop = eol;
		if (stop > line && stop[-1] == '\r')
			stop--;
		const char *b = line;
		while (b < stop && (*b == ' ' || *b == '\t'))
			b++;
		if (b == stop || *b == '#')
			continue;
		/* After a value, a comment is a '#' standing alone between blanks
		 * ("text = red  # main text"); "#RRGGBB" is a colour. */
		for (const char *q = b; q < stop; q++) {
			if (*q == '#' && (q[-1] == ' ' || q[-1] == '\t') &&
			    (q + 1 == stop || q[1] == ' ' || q[1] == '\t' || q[1] == '#')) {
				stop = q;
				break;
			}
		}
		const char *eq = memchr(b, '=', (size_t)(stop - b));
		if (eq == NULL) {
			char q[64];
			st_quote_snippet(b, (size_t)(stop - b), q, sizeof q);
			parse_error(&c, (int)(b - line) + 1, "expected 'role = colour ...', got '%s'", q);
			continue;
		}
		const char *ke = eq;
		while (ke > b && (ke[-1] == ' ' || ke[-1] == '\t'))
			ke--;
		char key[64];
		st_quote_snippet(b, (size_t)(ke - b), key, sizeof key);
		word w[16];
		int n = split_words(eq + 1, stop, (int)(eq + 1 - line) + 1, w, 16);
		if (n == 16) {
			parse_error(&c, w[15].col, "too many words for one role");
			continue;
		}
		int role = -1;
		if (ke - b == 10 && strncmp(b, "background", 10) == 0) {
			role = ST_ROLE_COUNT;
		} else {
			for (int r = 0; r < ST_ROLE_COUNT; r++) {
				if ((size_t)(ke - b) == strlen(st_role_names[r]) &&
				    strncmp(b, st_role_names[r], (size_t)(ke - b)) == 0)
					role = r;
			}
		}
		if (role < 0) {
			const char *best = NULL;
			int best_d = 4;
			for (int r = 0; r < ST_ROLE_COUNT; r++) {
				int dist = st_edit_distance(key, st_role_names[r]);
				if (dist < best_d) {
					best_d = dist;
					best = st_role_names[r];
				}
			}
			if (b == ke)
				parse_error(&c, (int)(b - line) + 1, "a role name is missing before '='");
			else if (best != NULL)
				parse_error(&c, (int)(b - line) + 1, "unknown role '%s'; did you mean '%s'?", key, best);
			else
				parse_error(&c, (int)(b - line) + 1, "unknown role '%s'", key);
			continue;
		}
		if (set_on[role] != 0)
			st_diag_add(d, ST_SEVERITY_WARNING, file, c.line, (int)(b - line) + 1,
			            "'%s' is set again (first on line %d); the last one counts", key,
			            set_on[role]);
		if (role == ST_ROLE_COUNT) {
			char why[160];
			st_color bg;
			colour_result r = n == 1 ? parse_colour(&w[0], &bg, why, sizeof why) : COLOUR_NOT;
			if (r == COLOUR_BAD) {
				parse_error(&c, w[0].col, "%s", why);
				continue;
			}
			if (r == COLOUR_NOT) {
				parse_error(&c, n > 0 ? w[0].col : (int)(eq - line) + 1,
				            "'background' takes one colour (#RRGGBB, 0-255, a colour name or default)");
				continue;
			}
			t->background = bg;
		} else {
			st_style st;
			if (n == 0) {
				parse_error(&c, (int)(eq - line) + 1,
				            "'%s' has no colour: write '%s = FG [on BG] [bold] ...'", key, key);
				continue;
			}
			if (!parse_style(&c, w, n, st_role_names[role], &st))
				continue;
			t->roles[role] = st;
		}
		set_on[role] = c.line;
	}
	if (c.errors > 0) {
		st_theme_free(t);
		return NULL;
	}
	return t;
}

/* ---- finding themes ---- */

/* The folders themes are looked for in, most important first, into dirs;
 * caller frees each. Returns how many. */
static int
theme_dirs(char *dirs[3])
{
	int n = 0;
	char *config = st_config_dir();
	if (config != NULL) {
		dirs[n++] = st_xasprintf("%s/themes", config);
		free(config);
	}
	dirs[n++] = st_xstrdup(ST_THEME_DIR);
	dirs[n++] = st_xstrdup(ST_SOURCE_DIR "/themes");
	return n;
}

/* Theme names are file names without a folder or a leading dot. */
static bool
valid_theme_name(const char *name)
{
	if (name[0] == '\0' || name[0] == '.' || strlen(name) > 64)
		return false;
	for (const char *p = name; *p; p++) {
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		      *p == '-' || *p == '_' || *p == '.'))
			return false;
	}
	return true;
}

static st_theme *
load_file(const char *path, st_diag *d)
{
	size_t len;
	char *text = st_read_file(path, &len);
	if (text == NULL) {
		st_diag_add(d, ST_SEVERITY_ERROR, path, 0, 0, "cannot read the theme: %s", strerror(errno));
		return NULL;
	}
	st_theme *t = st_theme_parse(text, len, path, d);
	free(text);
	return t;
}

st_theme *
st_theme_load(const char *name, st_diag *d)
{
	if (name == NULL || name[0] == '\0')
		name = "dark";
	/* A name with a slash is a file of its own: --theme ./mine.theme. */
	if (strchr(name, '/') != NULL)
		return load_file(name, d);
	if (!valid_theme_name(name)) {
		st_diag_add(d, ST_SEVERITY_ERROR, NULL, 0, 0,
		            "'%s' is not a theme name (letters, digits, '-', '_' and '.')", name);
		return NULL;
	}
	char *dirs[3];
	int n_dirs = theme_dirs(dirs);
	st_theme *t = NULL;
	bool found = false;
	for (int i = 0; i < n_dirs && !found; i++) {
		char *path = st_xasprintf("%s/%s.theme", dirs[i], name);
		size_t len;
		char *text = st_read_file(path, &len);
		if (text != NULL) {
			found = true;
			t = st_theme_parse(text, len, path, d);
			free(text);
		} else if (errno != ENOENT && errno != ENOTDIR) {
			found = true;
			st_diag_add(d, ST_SEVERITY_ERROR, path, 0, 0, "cannot read the theme: %s",
			            strerror(errno));
		}
		free(path);
	}
	if (!found && strcmp(name, "dark") == 0) {
		/* The default needs no file. */
		t = st_theme_default();
		found = true;
	}
	if (!found) {
		int n;
		char **names = st_theme_list(&n);
		st_buf known;
		st_buf_init(&known);
		const char *best = NULL;
		int best_d = 4;
		for (int i = 0; i < n; i++) {
			st_buf_printf(&known, "%s%s", i ? ", " : "", names[i]);
			int dist = st_edit_distance(name, names[i]);
			if (dist < best_d) {
				best_d = dist;
				best = names[i];
			}
		}
		if (best != NULL)
			st_diag_add(d, ST_SEVERITY_ERROR, NULL, 0, 0,
			            "no theme called '%s'; did you mean '%s'? (themes: %s)", name, best,
			            known.data);
		else
			st_diag_add(d, ST_SEVERITY_ERROR, NULL, 0, 0,
			            "no theme called '%s' in %s, %s or %s (themes: %s)", name,
			            dirs[0], n_dirs > 1 ? dirs[1] : "", n_dirs > 2 ? dirs[2] : "", known.data);
		st_buf_free(&known);
		for (int i = 0; i < n; i++)
			free(names[i]);
		free(names);
	}
	for (int i = 0; i < n_dirs; i++)
		free(dirs[i]);
	return t;
}

static int
compare_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char **
st_theme_list(int *n)
{
	char *dirs[3];
	int n_dirs = theme_dirs(dirs);
	int count = 0, cap = 8;
	char **names = st_xmalloc((size_t)cap * sizeof *names);
	names[count++] = st_xstrdup("dark");
	for (int i = 0; i < n_dirs; i++) {
		DIR *dir = opendir(dirs[i]);
		if (dir == NULL)
			continue;
		struct dirent *e;
		while ((e = readdir(dir)) != NULL) {
			size_t len = strlen(e->d_name);
			if (len <= 6 || strcmp(e->d_name + len - 6, ".theme") != 0)
				continue;
			char *name = st_xstrndup(e->d_name, len - 6);
			if (!valid_theme_name(name)) {
				free(name);
				continue;
			}
			if (count + 1 >= cap) {
				cap *= 2;
				names = st_xreallocarray(names, (size_t)cap, sizeof *names);
			}
			names[count++] = name;
		}
		closedir(dir);
		free(dirs[i]);
		dirs[i] = NULL;
	}
	for (int i = 0; i < n_dirs; i++)
		free(dirs[i]);
	qsort(names, (size_t)count, sizeof *names, compare_names);
	int out = 0;
	for (int i = 0; i < count; i++) {
		if (out > 0 && strcmp(names[out - 1], names[i]) == 0)
			free(names[i]);
		else
			names[out++] = names[i];
	}
	names[out] = NULL;
	*n = out;
	return names;
}
