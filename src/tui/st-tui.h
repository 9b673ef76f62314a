/* The TUI: a screen model views draw into, themes, key maps, configuration,
 * the views themselves, and the application that ties them to a session. */
#ifndef ST_TUI_H
#define ST_TUI_H

#include <stdbool.h>
#include <stdint.h>

#include "st-core.h"

/* ------------------------------------------------------------------------
 * Types
 * ------------------------------------------------------------------------ */

/* A colour: the terminal's default, an indexed colour (0-255) or 24-bit RGB. */
typedef uint32_t st_color;
#define ST_COLOR_DEFAULT 0u
#define ST_COLOR_INDEX(i) (0x01000000u | ((uint32_t)(i) & 0xffu))
#define ST_COLOR_RGB(r, g, b) (0x02000000u | ((uint32_t)(r) << 16) | ((uint32_t)(g) << 8) | (uint32_t)(b))
#define ST_COLOR_KIND(c) ((c) >> 24)   /* 0 default, 1 index, 2 rgb */

/* Attributes of a cell. */
#define ST_ATTR_BOLD 0x1u
#define ST_ATTR_DIM 0x2u
#define ST_ATTR_ITALIC 0x4u
#define ST_ATTR_UNDERLINE 0x8u
#define ST_ATTR_REVERSE 0x10u

typedef struct st_style {
	st_color fg, bg;
	uint16_t attrs;
} st_style;

/* One character cell. ch is one grapheme in UTF-8; a wide character takes
 * two cells, the second holding "" (width 0). */
typedef struct st_cell {
	char ch[8];
	uint8_t width;
	st_style style;
} st_cell;

typedef struct st_rect {
	int x, y, w, h;
} st_rect;

/* Named glyphs with a UTF-8 and an ASCII form, chosen by the screen's tier. */
typedef enum st_glyph {
	ST_G_HLINE, ST_G_VLINE, ST_G_TL, ST_G_TR, ST_G_BL, ST_G_BR, /* box: ─ │ ┌ ┐ └ ┘ */
	ST_G_TEE_DOWN, ST_G_TEE_UP, ST_G_TEE_RIGHT, ST_G_TEE_LEFT, ST_G_CROSS, /* ┬ ┴ ├ ┤ ┼ */
	ST_G_ARROW_DOWN,  /* an input terminal: ▽ / v */
	ST_G_OUTPUT,      /* an output terminal: ● / o */
	ST_G_ERROR,       /* ✖ / x */
	ST_G_WARNING,     /* ⚠ / ! */
	ST_G_INFO,        /* ℹ / i */
	ST_G_CHECK_ON,    /* ☑ / [x] */
	ST_G_CHECK_OFF,   /* ☐ / [ ] */
	ST_G_TRIANGLE_RIGHT, /* ▸ / > (a closed group) */
	ST_G_TRIANGLE_DOWN,  /* ▾ / v (an open group) */
	ST_G_MINIMISED,   /* ▪ / # */
	ST_G_DOT,         /* · / . */
	ST_G_TIMES,       /* × / x (3×3) */
	ST_G_ELLIPSIS,    /* … / ... */
	ST_G_COUNT
} st_glyph;

/* A grid of cells; drawing clips to clip. */
typedef struct st_screen {
	int w, h;
	st_cell *cells;
	bool ascii;      /* the ASCII glyph tier */
	st_rect clip;
} st_screen;

/* Semantic colour roles a theme assigns (STYLE.md: themes as roles). */
typedef enum st_role {
	ST_ROLE_TEXT,          /* ordinary text on the background */
	ST_ROLE_DIM,           /* secondary text */
	ST_ROLE_BORDER,        /* panel borders */
	ST_ROLE_BORDER_FOCUS,  /* the focused panel's border and title */
	ST_ROLE_TITLE,         /* panel titles */
	ST_ROLE_SELECTED,      /* the selected row or item */
	ST_ROLE_CURSOR,        /* the canvas cursor */
	ST_ROLE_HINT_KEY,      /* a key in the hint line: "a" of "a add" */
	ST_ROLE_HINT_TEXT,
	ST_ROLE_STATUS,        /* the status bar */
	ST_ROLE_ERROR,
	ST_ROLE_WARNING,
	ST_ROLE_INFO,
	ST_ROLE_GLYPH,         /* a layer glyph's body */
	ST_ROLE_GLYPH_BORDER,
	ST_ROLE_GLYPH_NAME,
	ST_ROLE_GLYPH_SELECTED, /* a selected glyph's border */
	ST_ROLE_TERMINAL,      /* input and output terminals */
	ST_ROLE_LINK,
	ST_ROLE_LINK_IN,       /* links into the selected layer (yellow by default) */
	ST_ROLE_LINK_OUT,      /* links out of it (blue by default) */
	ST_ROLE_SHAPE,         /* tensor shapes on links */
	ST_ROLE_GRID,
	ST_ROLE_MENU,          /* menus, dialogs and the command line */
	ST_ROLE_MENU_SELECTED,
	ST_ROLE_INPUT,         /* an edit field */
	/* Reports (tui-report.c) and the heat overlay. */
	ST_ROLE_BAR,           /* bars and sparklines of the layer in view */
	ST_ROLE_SERIES_1,      /* baselines and compared reports, one colour each */
	ST_ROLE_SERIES_2,
	ST_ROLE_SERIES_3,
	ST_ROLE_SERIES_4,
	ST_ROLE_SERIES_5,
	ST_ROLE_SERIES_6,
	ST_ROLE_HEAT_1,        /* the heat ramp, from the smallest share of time ... */
	ST_ROLE_HEAT_2,
	ST_ROLE_HEAT_3,
	ST_ROLE_HEAT_4,        /* ... to the largest */
	ST_ROLE_COUNT
} st_role;

/* How many colours the terminal shows. */
typedef enum st_color_depth {
	ST_DEPTH_MONO,
	ST_DEPTH_8,
	ST_DEPTH_16,
	ST_DEPTH_256,
	ST_DEPTH_TRUE
} st_color_depth;

typedef struct st_theme {
	char *name;
	st_style roles[ST_ROLE_COUNT];
	st_color background; /* the screen's background */
} st_theme;

/* A key as the application sees it: a normalised name such as "a", "A",
 * "<C-s>", "<M-x>", "<S-Up>", "<Enter>", "<F10>", "<Space>", "<Esc>", or a
 * mouse event. */
typedef enum st_key_kind {
	ST_KEY_KEY,
	ST_KEY_MOUSE_PRESS,
	ST_KEY_MOUSE_DRAG,
	ST_KEY_MOUSE_RELEASE,
	ST_KEY_WHEEL_UP,
	ST_KEY_WHEEL_DOWN,
	ST_KEY_PASTE       /* bracketed paste: text holds it */
} st_key_kind;

typedef struct st_key {
	st_key_kind kind;
	char name[32];  /* for ST_KEY_KEY */
	int x, y;       /* for mouse events, 0-based screen cells */
	int button;     /* 1 left, 2 middle, 3 right */
	char *text;     /* for ST_KEY_PASTE; owned by whoever made the key */
} st_key;

/* One action of the key map: what a set of keys does, where. */
typedef struct st_action {
	const char *name;      /* "canvas.add", "global.save" */
	const char *keys;      /* default keys, space separated: "a <C-a>" */
	const char *help;      /* one line for the hint line and the help screen */
	const char *command;   /* the ':' command it runs, or NULL for built-in behaviour */
} st_action;

/* Key bindings: action index -> keys, from the defaults and the user's file. */
typedef struct st_keymap {
	int n_actions;
	const st_action *actions;
	char ***keys;     /* keys[a] is a NULL-terminated list of key names */
} st_keymap;

/* How the editor starts (strata MODEL, strata edit MODEL). */
typedef struct st_tui_options {
	const char *model;  /* the model file; created on the first save when missing */
	const char *theme;  /* --theme, or NULL for the config's */
	int ascii;          /* --ascii: 1; -1 from the config and the locale */
	int colors;         /* --colors N, or -1 detected */
} st_tui_options;

/* Runs the editor until the user quits. Returns a process exit code: 0 when
 * the user quit, 128 + N after signal N (SIGTERM, SIGHUP), 1 when the
 * terminal went away, 2 when the model cannot be opened. */
int st_tui_main(const st_tui_options *opt);

/* ------------------------------------------------------------------------
 * tui-screen.c: the screen model
 * ------------------------------------------------------------------------ */

/* A w x h screen of blank cells; caller frees with st_screen_free. */
st_screen *st_screen_new(int w, int h);
void st_screen_free(st_screen *s);
/* Resizes, keeping what fits; new cells are blank. */
void st_screen_resize(st_screen *s, int w, int h);
/* Blanks every cell with style. */
void st_screen_clear(st_screen *s, const st_style *style);
/* The cell at (x, y), or NULL outside the screen. */
st_cell *st_screen_at(st_screen *s, int x, int y);
/* Sets the clip rectangle (intersected with the screen); returns the old one. */
st_rect st_screen_set_clip(st_screen *s, st_rect clip);
/* Writes UTF-8 text at (x, y), at most max_cols columns (-1: to the clip's
 * edge); wide characters take two columns, invalid bytes show as U+FFFD or
 * '?'. Returns the columns written. */
int st_screen_text(st_screen *s, int x, int y, const char *utf8, const st_style *style, int max_cols);
/* The same, ending with the ellipsis glyph when text does not fit. */
int st_screen_text_fit(st_screen *s, int x, int y, const char *utf8, const st_style *style, int max_cols);
/* printf-style text; returns the columns written. */
int st_screen_printf(st_screen *s, int x, int y, const st_style *style, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
/* Writes a named glyph (one or more columns in ASCII: [x] ...). */
int st_screen_glyph(st_screen *s, int x, int y, st_glyph g, const st_style *style);
/* The UTF-8 or ASCII text of a glyph for this screen. */
const char *st_glyph_text(const st_screen *s, st_glyph g);
/* Fills a rectangle with one character. */
void st_screen_fill(st_screen *s, st_rect r, const char *ch, const st_style *style);
/* Draws a box around r with an optional title on its top edge. */
void st_screen_box(st_screen *s, st_rect r, const st_style *border, const char *title,
                   const st_style *title_style);
/* Display width of UTF-8 text in columns. */
int st_text_width(const char *utf8);
/* Decodes the UTF-8 sequence at s (at most n bytes; a NUL ends it too):
 * the code point with its length in *len, or -1 with *len 1 for a byte
 * that starts no valid sequence (overlong forms, surrogates and values past
 * U+10FFFF included). */
int32_t st_utf8_decode(const unsigned char *s, size_t n, int *len);
/* n bytes of s as a message may quote them, in out: control characters and
 * invalid bytes as '?', cut after 40 bytes with "...". */
void st_quote_snippet(const char *s, size_t n, char *out, size_t size);
/* The screen as plain text, one line per row without trailing spaces;
 * caller frees (for tests and debugging). */
char *st_screen_dump(const st_screen *s);
/* The text of row y from column x, w columns; caller frees. */
char *st_screen_row_text(const st_screen *s, int x, int y, int w);
bool st_style_equal(const st_style *a, const st_style *b);

/* ------------------------------------------------------------------------
 * tui-theme.c: themes and colours
 * ------------------------------------------------------------------------ */

extern const char *const st_role_names[ST_ROLE_COUNT]; /* "text", "selected", ... */
/* Parses theme text ("role = fg [on bg] [bold] ..." lines); messages name
 * file and line in d. Returns NULL on errors; caller frees with st_theme_free. */
st_theme *st_theme_parse(const char *text, size_t len, const char *file, st_diag *d);
/* Finds a theme by name: $XDG_CONFIG_HOME/strata/themes/NAME.theme, then the
 * installed or source-tree themes folder. */
st_theme *st_theme_load(const char *name, st_diag *d);
/* The built-in fallback, usable without any file. */
st_theme *st_theme_default(void);
void st_theme_free(st_theme *t);
/* The nearest colour a terminal of the given depth can show. */
st_color st_color_downgrade(st_color c, st_color_depth depth);
/* Names of the themes that can be loaded; caller frees each and the array. */
char **st_theme_list(int *n);

/* ------------------------------------------------------------------------
 * tui-keymap.c (the settings themselves, config.json, are in core: st-core.h)
 * ------------------------------------------------------------------------ */


/* The actions of the application (tui-actions.c): the one table that key
 * bindings, the hint line, the help screen and menus come from. */
extern const st_action st_actions[];
extern const int st_n_actions;

/* Bindings from the defaults, then text of a keys file ("action = <C-s> s"
 * per line, '#' comments); unknown actions and bad key names are reported
 * with file:line. Caller frees with st_keymap_clear. */
int st_keymap_init(st_keymap *km, const st_action *actions, int n);
int st_keymap_parse(st_keymap *km, const char *text, size_t len, const char *file, st_diag *d);
/* Reads $XDG_CONFIG_HOME/strata/keys.conf when it exists. */
int st_keymap_load(st_keymap *km, st_diag *d);
void st_keymap_clear(st_keymap *km);
/* The action bound to key name whose name starts with prefix ("canvas."),
 * or -1. */
int st_keymap_lookup(const st_keymap *km, const char *key, const char *prefix);
/* Whether text is a valid key name; normalises it into out ("<c-S>" -> "<C-s>"... ). */
bool st_key_normalise(const char *text, char *out, size_t size);

/* ------------------------------------------------------------------------
 * tui-term.c: the terminal (curses output, colours)
 * ------------------------------------------------------------------------ */

/* Starts curses on the terminal (wide characters, no echo, raw keys left to
 * libtermkey). depth -1 detects the colour depth from the terminal and
 * $COLORTERM. Returns 0, or -1 with a reason. */
int st_term_open(int depth, char *err, size_t err_size);
/* Restores the terminal; safe to call twice and from a crash handler. */
void st_term_close(void);
st_color_depth st_term_depth(void);
/* The terminal's size in cells. */
void st_term_size(int *w, int *h);
/* Makes the terminal show screen s: only cells that differ from the last
 * flush are written (all of them after st_term_invalidate), in the theme's
 * colours brought down to the terminal's depth. */
void st_term_flush(const st_screen *s, const st_theme *theme);
/* The next flush repaints everything (resize, Ctrl-L, theme change). */
void st_term_invalidate(void);
/* Bytes written to the terminal by the last flush (for tests). */
size_t st_term_last_flush_bytes(void);

/* ------------------------------------------------------------------------
 * tui-layout.c and tui-canvas.c: the node-graph canvas
 * ------------------------------------------------------------------------ */

/* Glyph geometry in model coordinates (cells): a layer's box from its
 * position, size by its contents; terminals spread along the top (inputs)
 * and bottom (outputs) edges. */
#define ST_GLYPH_WIDTH_MIN 16
void st_glyph_rect(const st_layer *l, st_rect *r);
/* Column of input terminal i, or of output terminal o, in model coordinates. */
int st_glyph_input_x(const st_layer *l, int i);
int st_glyph_output_x(const st_layer *l, int o);

/* The heat overlay: each named layer's share of the run time (0 to 1), as
 * a report measured it; layers are matched by name. */
typedef struct st_heat {
	char **names;
	double *shares;
	int n;
} st_heat;
#define ST_HEAT_STEPS 4                /* ST_ROLE_HEAT_1 .. ST_ROLE_HEAT_4 */

/* Where the canvas looks and what it shows. */
typedef struct st_canvas {
	int scroll_x, scroll_y;        /* model coordinates at the view's top-left */
	const st_layer *cursor;        /* the focused layer, or NULL */
	const st_layer **selected;     /* the selection (cursor included when set) */
	int n_selected;
	bool show_shapes;              /* tensor shapes on links */
	bool show_grid;
	bool show_minimap;
	/* While connecting: the output chosen first, and the input under the cursor. */
	const st_layer *connect_from;
	int connect_output;            /* -1 when not connecting */
	int terminal;                  /* terminal index the cursor is on, -1 for the glyph */
	const st_heat *heat;           /* the heat overlay, or NULL when it is off */
} st_canvas;

/* The step of the heat ramp (0 to ST_HEAT_STEPS - 1) of a share of time,
 * against the largest share of the table. */
int st_heat_step(double share, double largest);

/* Draws the graph into area of s. */
void st_canvas_draw(st_screen *s, st_rect area, const st_graph *g, const st_canvas *c,
                    const st_theme *theme);
/* What is at screen cell (x, y) of the canvas area: a layer, and when on a
 * terminal, its input or output index (-1 otherwise). */
typedef struct st_canvas_hit {
	const st_layer *layer;
	int input, output;
} st_canvas_hit;
bool st_canvas_hit_test(const st_graph *g, const st_canvas *c, st_rect area, int x, int y,
                        st_canvas_hit *hit);
/* Scrolls so that layer l is visible in an area of the given size. */
void st_canvas_reveal(st_canvas *c, const st_layer *l, int w, int h);
/* The layer nearest to the cursor in a direction (dx, dy of -1/0/1), or NULL. */
const st_layer *st_canvas_neighbour(const st_graph *g, const st_layer *from, int dx, int dy);

/* Automatic layered layout: positions for every layer (x and y per layer,
 * in graph order) with no two glyphs overlapping and few link crossings.
 * Caller frees the array. */
int *st_layout_graph(const st_graph *g);
/* Link crossings of the graph as it is placed now (for bench/tui). */
int64_t st_layout_crossings(const st_graph *g);
/* Pairs of overlapping glyphs as placed now. */
int64_t st_layout_overlaps(const st_graph *g);

/* ---- tui-graphics.c: pictures as coloured symbols (libchafa) ---- */

/* The largest cols x rows within max_cols x max_rows that shows a picture
 * of height x width pixels undistorted (a cell is about twice as high as
 * wide); 0 x 0 for an empty picture or area. */
void st_picture_fit(int height, int width, int max_cols, int max_rows, int *cols, int *rows);
/* Draws a picture (three float planes of height x width, 0 to 1) into the
 * cols x rows cells at (x, y) as symbols with colours of the given depth
 * (ascii: ASCII symbols only). The same picture gives the same cells. */
void st_picture_draw(st_screen *s, int x, int y, int cols, int rows, const float *planes, int height, int width,
                     st_color_depth depth, bool ascii);
/* The same as text for a terminal: each row's cells with SGR colour
 * sequences, reset at the end of the line. Caller frees. */
char *st_picture_text(const float *planes, int height, int width, int cols, int rows, st_color_depth depth,
                      bool ascii);

/* How pictures reach the terminal: coloured symbols in cells (everywhere),
 * or pixels through sixel or kitty graphics where the terminal has them. */
typedef enum st_graphics { ST_GRAPHICS_SYMBOLS, ST_GRAPHICS_SIXEL, ST_GRAPHICS_KITTY } st_graphics;
const char *st_graphics_name(st_graphics g);
/* The mode called name, or -1. */
int st_graphics_find(const char *name);
/* What the terminal the environment names can show (chafa's terminal
 * database: TERM, KITTY_WINDOW_ID and friends): kitty, else sixel, else
 * symbols; symbols inside tmux, which passes neither unless configured to.
 * why says how it was decided (at most why_size bytes). */
st_graphics st_graphics_detect(char *why, size_t why_size);
/* The picture as sixel or kitty escape sequences covering cols x rows
 * cells (cell_w x cell_h pixels each; 0 for 10 x 20). Caller frees. */
char *st_picture_pixels(const float *planes, int height, int width, int cols, int rows, int cell_w, int cell_h,
                        st_graphics g);

/* ---- tui-search.c: sorting and searching the canvas and layout share ---- */

/* Moves *top, the first row a list of total rows shows in visible rows, so
 * that row is in view and no empty rows follow the last (never below 0). */
void st_scroll_keep(int *top, int row, int visible, int total);
/* qsort, which also takes an empty (even null) array. */
void st_sort(void *base, size_t n, size_t size, int (*compare)(const void *, const void *));
int st_compare_int(const void *a, const void *b);
/* The first index of sorted v[0..n) holding at least x (lower) or more than x (upper). */
int st_lower_bound(const int *v, int n, int x);
int st_upper_bound(const int *v, int n, int x);
/* Sorts v[0..n) and drops repeats; returns how many are left. */
int st_unique_sorted(int *v, int n);
/* A Fenwick tree over n entries: tree holds n + 1 ints, zeroed to start.
 * Adds d to entry i (0-based); the prefix is the sum of entries below i. */
void st_fenwick_add(int *tree, int n, int i, int d);
int64_t st_fenwick_prefix(const int *tree, int i);

#endif
