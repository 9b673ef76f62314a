/* The terminal: curses shows the screen model, writing only the cells that
 * changed; colour depth and colour pairs; and putting the terminal back the
 * way it was on any exit, crashes included. Keys are read by libtermkey
 * (the input side), never by curses.
 *
 * How the input side fits: st_term_open leaves the terminal in raw mode
 * (no echo, no signals from ^C/^Z/^\, no XON/XOFF so that ^S and ^Q reach
 * the program, no CR/NL translation), keypad off and curses' typeahead check
 * off. libtermkey then reads standard input with TERMKEY_FLAG_NOTERMIOS and
 * sends the keypad-transmit sequence itself (termkey_start); mouse and
 * bracketed-paste modes are the input side's to switch on, and st_term_close
 * switches them off again with everything else. ncurses installs handlers
 * for SIGINT, SIGTERM, SIGTSTP and SIGWINCH where none is set; the program
 * installs its own after st_term_open, and on SIGWINCH calls st_term_size,
 * which resizes curses. Suspending (^Z as a key) is st_term_close,
 * raise(SIGTSTP), then st_term_open again on SIGCONT.
 */
#include "config.h"

#include <curses.h>
#include <term.h>

#include <errno.h>
#include <fcntl.h>
#include <langinfo.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>
#include <wchar.h>

#include "st-tui.h"

/* Colour numbers of one pair, and the pair curses knows them as. */
typedef struct pair_slot {
	int fg, bg; /* colour numbers; -1 for the terminal's default */
	int pair;   /* 0: empty slot */
} pair_slot;

/* A colour brought down to the terminal, remembered. */
typedef struct colour_slot {
	st_color color;
	int number;
	bool used;
} colour_slot;

#define COLOUR_CACHE 1024

static struct {
	volatile sig_atomic_t open;
	SCREEN *screen;
	int fd;                    /* the terminal: standard output */
	struct termios saved;      /* its modes before st_term_open */
	bool have_saved;
	st_color_depth depth;
	bool utf8;                 /* the locale writes UTF-8 */
	int pair_limit;             /* COLOR_PAIRS */

	st_cell *prev;             /* what the last flush showed */
	int prev_w, prev_h;
	bool full;                 /* the next flush writes every cell */
	bool clear;                /* ... after clearing the terminal */
	st_color last_background;
	size_t last_bytes;

	pair_slot *pairs;          /* open addressing over (fg, bg) */
	int pairs_cap, next_pair;
	colour_slot colours[COLOUR_CACHE];

	char leave[768];           /* bytes that put the terminal back */
	size_t leave_len;
	int leave_rows;            /* the size leave was made for */
} term = { .fd = STDOUT_FILENO };

/* ---- putting the terminal back ---- */

/* Appends a terminfo string without its padding ("$<5>"), if it fits. */
static void
leave_add(const char *s)
{
	if (s == NULL || s == (const char *)-1)
		return;
	for (const char *p = s; *p; p++) {
		if (p[0] == '$' && p[1] == '<') {
			const char *e = strchr(p, '>');
			if (e != NULL) {
				p = e;
				continue;
			}
		}
		if (term.leave_len + 1 < sizeof term.leave)
			term.leave[term.leave_len++] = *p;
	}
}

static char *
cap(const char *name)
{
	return tigetstr(name);
}

/* Builds the bytes st_term_close writes, ahead of time, since a crash
 * handler must not allocate or call into curses. */
static void
build_leave(int rows)
{
	term.leave_len = 0;
	term.leave_rows = rows;
	leave_add("\030"); /* CAN: ends an escape sequence cut off by a crash */
	leave_add(cap("sgr0"));
	char *cup = cap("cup");
	if (cup != NULL && cup != (char *)-1 && rows > 0)
		leave_add(tiparm(cup, rows - 1, 0));
	leave_add(cap("rmcup"));
	leave_add(cap("cnorm"));
	leave_add(cap("rmkx"));
	/* Mouse reporting (X10, button, any-event; UTF-8, SGR and urxvt
	 * encodings) and bracketed paste, whoever turned them on; terminals
	 * ignore modes they do not know. */
	leave_add("\033[?1000l\033[?1002l\033[?1003l\033[?1005l\033[?1006l\033[?1015l\033[?2004l");
}

void
st_term_close(void)
{
	if (!term.open)
		return;
	term.open = 0;
	/* Only write() and tcsetattr(): both are safe in a signal handler. */
	const char *p = term.leave;
	size_t left = term.leave_len;
	while (left > 0) {
		ssize_t n = write(term.fd, p, left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		p += n;
		left -= (size_t)n;
	}
	if (term.have_saved)
		tcsetattr(term.fd, TCSANOW, &term.saved);
}

/* ---- opening ---- */

/* What terminfo says of a terminal type: -1 when it is unknown or cannot
 * place the cursor. */
static int
probe(const char *type, int *colors, bool *rgb)
{
	int status = 0;
	if (setupterm(type, term.fd, &status) != OK)
		return -1;
	char *cup = tigetstr("cup");
	*colors = tigetnum("colors");
	*rgb = tigetflag("RGB") > 0 || *colors >= 0x1000000;
	del_curterm(cur_term);
	return cup != NULL && cup != (char *)-1 ? 0 : -1;
}

static st_color_depth
depth_of(int colors, bool rgb)
{
	if (rgb)
		return ST_DEPTH_TRUE;
	if (colors >= 256)
		return ST_DEPTH_256;
	if (colors >= 16)
		return ST_DEPTH_16;
	if (colors >= 8)
		return ST_DEPTH_8;
	return ST_DEPTH_MONO;
}

/* Another terminfo entry of the same terminal with more colours, such as
 * xterm-direct or xterm-256color for xterm: "<TERM><suffix>", then the part
 * of TERM before its first '-' with the suffix. Fills type on success. */
static void
copy_name(char *dst, size_t size, const char *src)
{
	size_t n = strnlen(src, size - 1);
	memcpy(dst, src, n);
	dst[n] = '\0';
}

static bool
richer_entry(const char *name, const char *suffix, st_color_depth want, char *type, size_t size)
{
	char candidates[2][128];
	snprintf(candidates[0], sizeof candidates[0], "%s%s", name, suffix);
	size_t base = strcspn(name, "-");
	snprintf(candidates[1], sizeof candidates[1], "%.*s%s", (int)base, name, suffix);
	for (int i = 0; i < 2; i++) {
		int colors;
		bool rgb;
		if (probe(candidates[i], &colors, &rgb) == 0 && depth_of(colors, rgb) >= want) {
			copy_name(type, size, candidates[i]);
			return true;
		}
	}
	return false;
}

static void
reset_tables(void)
{
	free(term.pairs);
	term.pairs = NULL;
	term.pairs_cap = 0;
	term.next_pair = 1;
	memset(term.colours, 0, sizeof term.colours);
}

int
st_term_open(int depth, char *err, size_t err_size)
{
	if (err_size > 0)
		err[0] = '\0';
	if (term.open) {
		snprintf(err, err_size, "the terminal is already open");
		return -1;
	}
	if (!isatty(term.fd)) {
		snprintf(err, err_size, "standard output is not a terminal");
		return -1;
	}
	if (term.screen != NULL) {
		/* Opened before and closed (suspend and resume): start afresh. */
		delscreen(term.screen);
		term.screen = NULL;
	}

	/* The terminal type: $TERM, or a common one with a note when terminfo
	 * does not know it. */
	const char *env = getenv("TERM");
	char type[128];
	int colors = 0;
	bool rgb = false;
	if (env != NULL && env[0] != '\0' && strlen(env) < 100 && probe(env, &colors, &rgb) == 0) {
		copy_name(type, sizeof type, env);
	} else {
		static const char *const fallbacks[] = { "xterm-256color", "xterm", "vt100" };
		type[0] = '\0';
		for (size_t i = 0; i < sizeof fallbacks / sizeof fallbacks[0] && !type[0]; i++) {
			if (probe(fallbacks[i], &colors, &rgb) == 0)
				copy_name(type, sizeof type, fallbacks[i]);
		}
		if (!type[0]) {
			snprintf(err, err_size, "the terminal type '%s' is unknown and no fallback is installed",
			         env != NULL ? env : "");
			return -1;
		}
		snprintf(err, err_size, "the terminal type '%s' cannot place the cursor or is unknown; using %s",
		         env != NULL ? env : "", type);
	}

	/* The depth wanted: given, or from NO_COLOR, COLORTERM and terminfo. */
	st_color_depth want;
	const char *colorterm = getenv("COLORTERM");
	const char *no_color = getenv("NO_COLOR");
	if (depth >= (int)ST_DEPTH_MONO && depth <= (int)ST_DEPTH_TRUE)
		want = (st_color_depth)depth;
	else if (no_color != NULL && no_color[0] != '\0')
		want = ST_DEPTH_MONO;
	else if (colorterm != NULL && (strcmp(colorterm, "truecolor") == 0 || strcmp(colorterm, "24bit") == 0))
		want = ST_DEPTH_TRUE;
	else
		want = depth_of(colors, rgb);
	/* When more is wanted than this entry offers, the same terminal's
	 * direct-colour or 256-colour entry may offer it. */
	st_color_depth have = depth_of(colors, rgb);
	if (want > have) {
		char richer[128];
		if ((want == ST_DEPTH_TRUE && richer_entry(type, "-direct", ST_DEPTH_TRUE, richer, sizeof richer)) ||
		    (have < ST_DEPTH_256 &&
		     richer_entry(type, "-256color", ST_DEPTH_256, richer, sizeof richer)))
			copy_name(type, sizeof type, richer);
	}

	struct termios saved;
	term.have_saved = tcgetattr(term.fd, &saved) == 0;
	if (term.have_saved)
		term.saved = saved;
	term.screen = newterm(type, stdout, stdin);
	if (term.screen == NULL) {
		snprintf(err, err_size, "curses cannot start on the terminal type '%s'", type);
		return -1;
	}
	set_term(term.screen);
	raw();
	noecho();
	nonl();
	intrflush(stdscr, FALSE);
	keypad(stdscr, FALSE);
	typeahead(-1);
	leaveok(stdscr, TRUE);
	scrollok(stdscr, FALSE);
	curs_set(0);
	term.depth = ST_DEPTH_MONO;
	if (has_colors() && want != ST_DEPTH_MONO) {
		start_color();
		use_default_colors();
		st_color_depth got = depth_of(COLORS, tigetflag("RGB") > 0 || COLORS >= 0x1000000);
		term.depth = want < got ? want : got;
	}
	/* Asked for outright (not detected) and not given: say why. */
	bool asked = depth >= (int)ST_DEPTH_MONO && depth <= (int)ST_DEPTH_TRUE;
	if (asked && want > term.depth && !err[0] && err_size > 0) {
		static const char *const names[] = { "no", "8", "16", "256", "true" };
		snprintf(err, err_size,
		         "%s colour asked for, but the terminal type '%s' offers %s colour%s%s",
		         names[want], type, names[term.depth], term.depth == ST_DEPTH_8 || term.depth == ST_DEPTH_16 ||
		         term.depth == ST_DEPTH_256 ? "s" : "",
		         want == ST_DEPTH_TRUE ? " (a '-direct' terminfo entry, from ncurses-term, gives true colour)"
		                               : "");
	}
	term.pair_limit = COLOR_PAIRS;
	const char *codeset = nl_langinfo(CODESET);
	term.utf8 = codeset != NULL && (strcmp(codeset, "UTF-8") == 0 || strcmp(codeset, "utf8") == 0);

	free(term.prev);
	term.prev = NULL;
	term.prev_w = term.prev_h = 0;
	term.full = true;
	term.clear = false;
	term.last_bytes = 0;
	reset_tables();
	build_leave(LINES);
	term.open = 1;
	return 0;
}

st_color_depth
st_term_depth(void)
{
	return term.open ? term.depth : ST_DEPTH_MONO;
}

void
st_term_size(int *w, int *h)
{
	struct winsize ws;
	if (ioctl(term.fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 && ws.ws_row > 0) {
		*w = ws.ws_col;
		*h = ws.ws_row;
		if (term.open && (ws.ws_row != LINES || ws.ws_col != COLS)) {
			resizeterm(ws.ws_row, ws.ws_col);
			term.full = true;
			term.clear = true;
		}
		if (term.open && ws.ws_row != term.leave_rows)
			build_leave(ws.ws_row);
		return;
	}
	*w = term.open ? COLS : 80;
	*h = term.open ? LINES : 24;
}

void
st_term_invalidate(void)
{
	term.full = true;
	term.clear = true;
}

size_t
st_term_last_flush_bytes(void)
{
	return term.last_bytes;
}

/* ---- colours ---- */

/* xterm's RGB value of an indexed colour, as 0xRRGGBB. */
static int
index_rgb(int i)
{
	static const int ansi[16] = {
		0x000000, 0xcd0000, 0x00cd00, 0xcdcd00, 0x0000ee, 0xcd00cd, 0x00cdcd, 0xe5e5e5,
		0x7f7f7f, 0xff0000, 0x00ff00, 0xffff00, 0x5c5cff, 0xff00ff, 0x00ffff, 0xffffff,
	};
	static const int levels[6] = { 0, 95, 135, 175, 215, 255 };
	if (i < 16)
		return ansi[i];
	if (i < 232)
		return levels[(i - 16) / 36] << 16 | levels[((i - 16) / 6) % 6] << 8 | levels[(i - 16) % 6];
	int v = 8 + 10 * (i - 232);
	return v << 16 | v << 8 | v;
}

/* The colour number curses takes for c at the terminal's depth; -1 for the
 * default. In direct colour, numbers are 0xRRGGBB except that 0-7 mean the
 * ANSI colours: indexed colours past those take their xterm RGB value, and
 * RGB values below 8 move up to 8 (still black to the eye). */
static int
colour_number(st_color c)
{
	if (ST_COLOR_KIND(c) == 0 || term.depth == ST_DEPTH_MONO)
		return -1;
	colour_slot *slot = &term.colours[((c * 2654435761u) >> 22) & (COLOUR_CACHE - 1)];
	if (slot->used && slot->color == c)
		return slot->number;
	st_color d = st_color_downgrade(c, term.depth);
	int number;
	if (ST_COLOR_KIND(d) == 0) {
		number = -1;
	} else if (ST_COLOR_KIND(d) == 1) {
		number = (int)(d & 0xffu);
		if (term.depth == ST_DEPTH_TRUE && number >= 8)
			number = index_rgb(number);
	} else {
		number = (int)(d & 0xffffffu);
	}
	if (term.depth == ST_DEPTH_TRUE && ST_COLOR_KIND(d) != 0 && number < 8 &&
	    !(ST_COLOR_KIND(d) == 1 && (d & 0xffu) < 8))
		number = 8;
	slot->color = c;
	slot->number = number;
	slot->used = true;
	return number;
}

/* The pair for (fg, bg), defined on first use; -1 when the table is full
 * (the caller starts the frame again with an empty table). */
static int
pair_for(int fg, int bg)
{
	if (fg < 0 && bg < 0)
		return 0;
	if (term.pairs_cap == 0 || (term.next_pair + 1) * 2 > term.pairs_cap) {
		int cap = term.pairs_cap ? term.pairs_cap * 2 : 256;
		pair_slot *old = term.pairs;
		int old_cap = term.pairs_cap;
		term.pairs = st_xcalloc((size_t)cap, sizeof *term.pairs);
		term.pairs_cap = cap;
		for (int i = 0; i < old_cap; i++) {
			if (old[i].pair == 0)
				continue;
			unsigned h = ((unsigned)old[i].fg * 31u + (unsigned)old[i].bg) * 2654435761u;
			for (unsigned k = h & (unsigned)(cap - 1);; k = (k + 1) & (unsigned)(cap - 1)) {
				if (term.pairs[k].pair == 0) {
					term.pairs[k] = old[i];
					break;
				}
			}
		}
		free(old);
	}
	unsigned h = ((unsigned)fg * 31u + (unsigned)bg) * 2654435761u;
	for (unsigned k = h & (unsigned)(term.pairs_cap - 1);; k = (k + 1) & (unsigned)(term.pairs_cap - 1)) {
		pair_slot *s = &term.pairs[k];
		if (s->pair != 0 && s->fg == fg && s->bg == bg)
			return s->pair;
		if (s->pair == 0) {
			if (term.next_pair >= term.pair_limit)
				return -1;
			if (init_extended_pair(term.next_pair, fg, bg) == ERR)
				return 0;
			*s = (pair_slot){ fg, bg, term.next_pair++ };
			return s->pair;
		}
	}
}

/* Colours and attributes of a cell as curses shows them. A coloured
 * background (a selection, a status bar) that comes down to the screen's
 * own background, as every colour does in monochrome, shows as reverse
 * video instead; text whose colour comes down to its background's takes
 * black or white so that it stays readable. */
static void
cell_look(const st_cell *c, const st_theme *theme, int *fg, int *bg, attr_t *attrs)
{
	st_color cfg = c->style.fg;
	st_color cbg = c->style.bg == ST_COLOR_DEFAULT ? theme->background : c->style.bg;
	unsigned a = c->style.attrs;
	*fg = colour_number(cfg);
	*bg = colour_number(cbg);
	if (cbg != theme->background && *bg == colour_number(theme->background))
		a ^= ST_ATTR_REVERSE;
	else if (*fg == *bg && *fg >= 0 && cfg != cbg) {
		int dark = (int)(st_color_downgrade(cbg, ST_DEPTH_8) & 0xffu);
		*fg = dark == 0 || dark == 1 || dark == 4 || dark == 5 ? 7 : 0;
	}
	attr_t out = 0;
	if (a & ST_ATTR_BOLD)
		out |= A_BOLD;
	if (a & ST_ATTR_DIM)
		out |= A_DIM;
	if (a & ST_ATTR_ITALIC)
		out |= A_ITALIC;
	if (a & ST_ATTR_UNDERLINE)
		out |= A_UNDERLINE;
	if (a & ST_ATTR_REVERSE)
		out |= A_REVERSE;
	*attrs = out;
}

/* ---- flushing ---- */

/* Bytes this thread has written with write() and its kin so far, from
 * /proc/thread-self/io; -1 when the system does not tell. ncurses writes
 * its buffer with write() on the terminal's descriptor, not through a
 * stdio stream, so a wrapped FILE would see nothing: the kernel's count
 * around doupdate() is the bytes of the frame. */
static long long
bytes_written(void)
{
	int fd = open("/proc/thread-self/io", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	char buf[512];
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	const char *p = strstr(buf, "wchar:");
	return p != NULL ? strtoll(p + 6, NULL, 10) : -1;
}

static bool
cell_equal(const st_cell *a, const st_cell *b)
{
	return a->width == b->width && st_style_equal(&a->style, &b->style) &&
	       strncmp(a->ch, b->ch, sizeof a->ch) == 0;
}

/* Writes text (cols columns, 1 or 2) at (x, y). */
static void
put_text(int x, int y, const wchar_t *text, attr_t attrs, int pair)
{
	cchar_t cc;
	setcchar(&cc, text, attrs, 0, &pair);
	mvwadd_wch(stdscr, y, x, &cc);
}

/* Writes cell c at (x, y). Text the terminal cannot show, or whose width
 * the C library sees otherwise than the screen model, shows as '?' padded
 * to the cell's width, so that a row never shifts. */
static void
put_cell(int x, int y, const st_cell *c, attr_t attrs, int pair)
{
	wchar_t text[CCHARW_MAX + 1];
	int n = 0;
	bool ok = c->width == 1 || c->width == 2;
	const char *p = c->ch;
	size_t left = strnlen(c->ch, sizeof c->ch);
	mbstate_t state;
	memset(&state, 0, sizeof state);
	if (left == 0)
		ok = false;
	while (ok && left > 0 && n < CCHARW_MAX) {
		if (!term.utf8 && (unsigned char)*p >= 0x80) {
			ok = false;
			break;
		}
		size_t k = mbrtowc(&text[n], p, left, &state);
		if (k == 0 || k > left) {
			ok = false;
			break;
		}
		int w = wcwidth(text[n]);
		if ((n == 0 && w != c->width) || (n > 0 && w != 0))
			ok = false;
		p += k;
		left -= k;
		n++;
	}
	if (ok && left > 0)
		ok = false; /* more combining characters than curses holds */
	if (ok) {
		text[n] = L'\0';
		put_text(x, y, text, attrs, pair);
		return;
	}
	static const wchar_t question[] = L"?", blank[] = L" ";
	if (c->width == 0 || (left == 0 && n == 0 && c->width == 1 && c->ch[0] == '\0')) {
		put_text(x, y, blank, attrs, pair);
		return;
	}
	put_text(x, y, question, attrs, pair);
	if (c->width == 2)
		put_text(x + 1, y, blank, attrs, pair);
}

static const st_theme plain_theme = { .name = NULL, .background = ST_COLOR_DEFAULT };

void
st_term_flush(const st_screen *s, const st_theme *theme)
{
	if (!term.open || s == NULL)
		return;
	if (theme == NULL)
		theme = &plain_theme;
	if (theme->background != term.last_background) {
		term.last_background = theme->background;
		term.full = true;
	}
	if (term.prev == NULL || term.prev_w != s->w || term.prev_h != s->h) {
		free(term.prev);
		term.prev = st_xcalloc((size_t)s->w * (size_t)s->h + 1, sizeof *term.prev);
		term.prev_w = s->w;
		term.prev_h = s->h;
		term.full = true;
	}
	int w = s->w < COLS ? s->w : COLS, h = s->h < LINES ? s->h : LINES;
	long long before = bytes_written();
	if (term.clear)
		clearok(curscr, TRUE);
	bool full = term.full, restarted = false;
again:
	for (int y = 0; y < h; y++) {
		const st_cell *row = &s->cells[(size_t)y * (size_t)s->w];
		const st_cell *old = &term.prev[(size_t)y * (size_t)s->w];
		for (int x = 0; x < w; x++) {
			const st_cell *c = &row[x];
			bool changed = full || !cell_equal(c, &old[x]) ||
			               (c->width == 2 && x + 1 < s->w && !cell_equal(&row[x + 1], &old[x + 1]));
			if (!changed)
				continue;
			if (c->width == 0 && x > 0 && row[x - 1].width == 2)
				continue; /* written with its first half */
			int fg, bg;
			attr_t attrs;
			cell_look(c, theme, &fg, &bg, &attrs);
			int pair = pair_for(fg, bg);
			if (pair < 0) {
				/* Out of colour pairs: start the frame again with an empty
				 * table (once; after that, the default colours). */
				if (!restarted) {
					restarted = true;
					full = true;
					reset_tables();
					goto again;
				}
				pair = 0;
			}
			if (c->width == 2 && x + 1 >= COLS) {
				static const st_cell cut = { " ", 1, { 0, 0, 0 } };
				put_cell(x, y, &cut, attrs, pair);
			} else {
				put_cell(x, y, c, attrs, pair);
			}
		}
	}
	wnoutrefresh(stdscr);
	doupdate();
	memcpy(term.prev, s->cells, (size_t)s->w * (size_t)s->h * sizeof *s->cells);
	term.full = false;
	term.clear = false;
	long long after = bytes_written();
	term.last_bytes = before >= 0 && after >= before ? (size_t)(after - before) : 0;
}
