/* The editor's main loop: terminal and input set-up, signals, the panel
 * layout, drawing a frame, and routing each key to where it belongs. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <langinfo.h>
#include <locale.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <termkey.h>
#include <unistd.h>

#include "tui-app.h"
#include "tui-analysis.h"
#include "tui-dashboard.h"

/* Terminal modes the editor turns on, and off again at the end. */
#define MOUSE_ON "\033[?1000h\033[?1002h\033[?1006h\033[?2004h"
#define MOUSE_OFF "\033[?2004l\033[?1006l\033[?1002l\033[?1000l"

static int wake_pipe[2] = { -1, -1 };
/* got_hangup: the session must end (a signal, or the terminal's end);
 * got_signal: which signal, or 0 for the end of input. */
static volatile sig_atomic_t got_resize, got_hangup, got_signal;

static void
on_signal(int sig)
{
	if (sig == SIGWINCH) {
		got_resize = 1;
	} else {
		got_hangup = 1;
		got_signal = sig;
	}
	int saved = errno;
	if (wake_pipe[1] >= 0) {
		ssize_t n = write(wake_pipe[1], "!", 1);
		(void)n;
	}
	errno = saved;
}

/* Writes all of s to fd (a terminal: short writes continue). */
static void
write_all(int fd, const char *s)
{
	size_t n = strlen(s);
	while (n > 0) {
		ssize_t w = write(fd, s, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

/* Where a crash inside a plugin is reported for the next start (made
 * before any plugin runs: the handler may only write). */
static char crash_file[4096];

/* write(2) of a string, from a signal handler. */
static void
say(int fd, const char *s)
{
	size_t n = 0;
	while (s[n])
		n++;
	ssize_t w = write(fd, s, n);
	(void)w;
}

/* A crash must not leave the terminal unusable: restore it, then die as
 * usual. Inside a plugin, name it, on the terminal and in a report the
 * next start reads (tui-app.c) to keep the plugin off and ask. The journal
 * needs nothing: every edit was on disk before the next began. */
static void
on_crash(int sig)
{
	ssize_t n = write(STDOUT_FILENO, MOUSE_OFF, sizeof MOUSE_OFF - 1);
	(void)n;
	st_term_close();
	const st_plugin *p = st_plugin_current();
	if (p != NULL) {
		char num[16];
		int i = (int)sizeof num - 1;
		num[i] = '\0';
		for (int v = sig; v > 0 || i == (int)sizeof num - 1; v /= 10)
			num[--i] = (char)('0' + v % 10);
		const char *name = p->name ? p->name : p->path;
		say(STDERR_FILENO, "strata: the plugin ");
		say(STDERR_FILENO, name);
		say(STDERR_FILENO, " (");
		say(STDERR_FILENO, p->path);
		say(STDERR_FILENO, ") crashed with signal ");
		say(STDERR_FILENO, num + i);
		say(STDERR_FILENO, "; the edits are in the journal, and the next start offers to disable it\n");
		if (crash_file[0]) {
			int fd = open(crash_file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
			if (fd >= 0) {
				say(fd, name);
				say(fd, "\n");
				say(fd, p->path);
				say(fd, "\n");
				say(fd, num + i);
				say(fd, "\n");
				close(fd);
			}
		}
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

static void
install_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGWINCH, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* Before any plugin runs: loading them and checking the model does. */
static void
install_crash_handlers(void)
{
	char *report = st_state_file("crashed-plugin");
	if (report != NULL && strlen(report) < sizeof crash_file)
		memcpy(crash_file, report, strlen(report) + 1);
	free(report);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_crash;
	sa.sa_flags = SA_RESETHAND;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGFPE, &sa, NULL);
	sigaction(SIGILL, &sa, NULL);
	sigaction(SIGABRT, &sa, NULL);
}

/* ---- layout ---- */

/* Below this size the editor only asks for a bigger terminal. */
#define ST_MIN_COLS 60
#define ST_MIN_ROWS 16

void
st_app_layout(st_app *app, int w, int h)
{
	/* Row 0 is the title bar, the last row the hints; panels share the rest. */
	int top = 1, bottom = h - 1;
	int body = bottom - top;
	int check_h = body / 5;
	if (check_h < 4)
		check_h = 4;
	if (check_h > 10)
		check_h = 10;
	int main_h = body - check_h;
	int palette_w = w >= 120 ? 24 : w >= 100 ? 22 : 20;
	int params_w = w >= 120 ? 32 : w >= 100 ? 30 : 26;
	if (w < 90) {
		/* Narrow: the palette shows only while it has the focus. */
		palette_w = app->focus == ST_PANEL_PALETTE ? 20 : 0;
		params_w = w / 3;
	}
	int canvas_w = w - palette_w - params_w;
	app->panel_rect[ST_PANEL_PALETTE] = (st_rect){ 0, top, palette_w, main_h };
	app->panel_rect[ST_PANEL_CANVAS] = (st_rect){ palette_w, top, canvas_w, main_h };
	app->panel_rect[ST_PANEL_PARAMS] = (st_rect){ palette_w + canvas_w, top, params_w, main_h };
	app->panel_rect[ST_PANEL_CHECK] = (st_rect){ 0, top + main_h, w, check_h };
}

static st_rect
inner(st_rect r)
{
	return (st_rect){ r.x + 1, r.y + 1, r.w > 2 ? r.w - 2 : 0, r.h > 2 ? r.h - 2 : 0 };
}

/* ---- drawing ---- */

static void
draw_title(st_app *app, st_screen *s)
{
	const st_style *bar = st_app_style(app, ST_ROLE_STATUS);
	st_screen_fill(s, (st_rect){ 0, 0, s->w, 1 }, " ", bar);
	st_graph *g = st_app_graph(app);
	const char *file = app->path ? app->path : "(new model)";
	const char *slash = strrchr(file, '/');
	char left[512];
	snprintf(left, sizeof left, " strata %s %s%s%s %s %s cpu", st_glyph_text(s, ST_G_HLINE),
	         slash ? slash + 1 : file, st_session_dirty(app->session) ? " [+]" : "",
	         app->read_only ? " [read-only]" : "", st_glyph_text(s, ST_G_HLINE),
	         st_tensor_format_name((st_tensor_format)g->network.values[ST_NET_TENSOR_FORMAT].i));
	st_screen_text_fit(s, 0, 0, left, bar, s->w);
	char right[128];
	static const char *const modes[] = { [ST_VIEW_EDIT] = "EDIT", [ST_VIEW_REPORT] = "REPORT",
		                             [ST_VIEW_COMPARE] = "COMPARE", [ST_VIEW_DASHBOARD] = "DASHBOARD",
		                             [ST_VIEW_ANALYSIS] = "ANALYSIS" };
	int n = snprintf(right, sizeof right, "%s %s %d layer%s", modes[app->view], st_glyph_text(s, ST_G_HLINE),
	                 g->n_layers, g->n_layers == 1 ? "" : "s");
	if (g->errors > 0)
		n += snprintf(right + n, sizeof right - (size_t)n, ", %d error%s", g->errors, g->errors == 1 ? "" : "s");
	if (g->warnings > 0)
		n += snprintf(right + n, sizeof right - (size_t)n, ", %d warning%s", g->warnings,
		              g->warnings == 1 ? "" : "s");
	snprintf(right + n, sizeof right - (size_t)n, " ");
	int rw = st_text_width(right);
	if (rw < s->w - st_text_width(left))
		st_screen_text(s, s->w - rw, 0, right, g->errors ? st_app_style(app, ST_ROLE_ERROR) : bar, rw);
}

/* The hint line: the focused panel's most used keys (as the key map binds
 * them), or the last message. */
static const char *const hint_actions[ST_PANEL_COUNT][13] = {
	{ "palette.add", "palette.filter", "palette.group", "palette.docs", "global.canvas", "global.command",
	  "global.help", "global.quit" },
	{ "canvas.add", "canvas.connect", "canvas.edit", "canvas.delete", "canvas.rename", "global.layout",
	  "global.undo", "global.save", "global.command", "global.help", "global.quit" },
	{ "params.edit", "params.toggle", "params.reset", "global.canvas", "global.undo", "global.save",
	  "global.command", "global.help", "global.quit" },
	{ "check.jump", "global.canvas", "global.undo", "global.save", "global.command", "global.help",
	  "global.quit" },
};

static void
draw_hints(st_app *app, st_screen *s)
{
	int y = s->h - 1;
	st_screen_fill(s, (st_rect){ 0, y, s->w, 1 }, " ", st_app_style(app, ST_ROLE_HINT_TEXT));
	if (app->status_set) {
		st_role role = app->status_severity == ST_SEVERITY_ERROR     ? ST_ROLE_ERROR
		               : app->status_severity == ST_SEVERITY_WARNING ? ST_ROLE_WARNING
		                                                             : ST_ROLE_INFO;
		st_screen_text_fit(s, 1, y, app->status, st_app_style(app, role), s->w - 2);
		return;
	}
	const char *const *hints = app->view == ST_VIEW_DASHBOARD ? st_dashboard_hints
	                           : app->view == ST_VIEW_ANALYSIS ? st_analysis_hints
	                           : app->view != ST_VIEW_EDIT    ? st_view_hints(app)
	                                                          : hint_actions[app->focus];
	int x = 1;
	for (int h = 0; hints[h] != NULL; h++) {
		const char *name = hints[h];
		int a = -1;
		for (int i = 0; i < app->keymap.n_actions && a < 0; i++) {
			if (strcmp(app->keymap.actions[i].name, name) == 0)
				a = i;
		}
		char **keys = a >= 0 ? app->keymap.keys[a] : NULL;
		if (keys == NULL || keys[0] == NULL)
			continue; /* unbound by the user */
		/* The action's short name: the part after the dot. */
		const char *label = strchr(name, '.') + 1;
		int need = st_text_width(keys[0]) + 1 + st_text_width(label) + 2;
		if (x + need > s->w - 1)
			return;
		/* <Enter> reads better as Enter on a hint line. */
		char key[32];
		size_t kl = strlen(keys[0]);
		if (keys[0][0] == '<' && kl > 2 && kl < sizeof key && keys[0][kl - 1] == '>')
			snprintf(key, sizeof key, "%.*s", (int)kl - 2, keys[0] + 1);
		else
			snprintf(key, sizeof key, "%s", keys[0]);
		x += st_screen_text(s, x, y, key, st_app_style(app, ST_ROLE_HINT_KEY), -1);
		x += st_screen_text(s, x, y, " ", st_app_style(app, ST_ROLE_HINT_TEXT), -1);
		x += st_screen_text(s, x, y, label, st_app_style(app, ST_ROLE_HINT_TEXT), -1);
		x += 2;
	}
}

void
st_app_draw(st_app *app)
{
	st_screen *s = app->screen;
	st_style bg = { .fg = ST_COLOR_DEFAULT, .bg = app->theme->background };
	st_screen_clear(s, &bg);
	if (s->w < ST_MIN_COLS || s->h < ST_MIN_ROWS) {
		/* Too small to edit in: say so, and how big it needs to be. */
		char msg[96];
		snprintf(msg, sizeof msg, "The terminal is %dx%d; Strata needs %dx%d.", s->w, s->h, ST_MIN_COLS,
		         ST_MIN_ROWS);
		st_screen_text_fit(s, 0, s->h / 2 > 0 ? s->h / 2 - 1 : 0, msg, st_app_style(app, ST_ROLE_WARNING), s->w);
		st_screen_text_fit(s, 0, s->h / 2, "Enlarge it, or press q to quit.", st_app_style(app, ST_ROLE_DIM),
		                   s->w);
		return;
	}
	st_app_layout(app, s->w, s->h);
	if (app->view != ST_VIEW_EDIT) {
		/* A view takes everything between the title and the hint line. */
		st_rect r = { 0, 1, s->w, s->h - 2 };
		st_rect old = st_screen_set_clip(s, r);
		if (app->view == ST_VIEW_DASHBOARD)
			st_dashboard_draw(app, s, r);
		else if (app->view == ST_VIEW_ANALYSIS)
			st_analysis_draw(app, s, r);
		else
			st_view_draw(app, s, r);
		st_screen_set_clip(s, old);
		draw_title(app, s);
		draw_hints(app, s);
		st_overlay_draw(app, s);
		return;
	}
	static const char *const titles[ST_PANEL_COUNT] = { "1 Palette", "2 Canvas", "3 Parameters",
		                                            "4 Type check" };
	for (int p = 0; p < ST_PANEL_COUNT; p++) {
		st_rect r = app->panel_rect[p];
		if (r.w < 3 || r.h < 3)
			continue;
		bool focused = (int)app->focus == p;
		st_screen_box(s, r, st_app_style(app, focused ? ST_ROLE_BORDER_FOCUS : ST_ROLE_BORDER), titles[p],
		              st_app_style(app, focused ? ST_ROLE_BORDER_FOCUS : ST_ROLE_TITLE));
		st_rect in = inner(r);
		st_rect old = st_screen_set_clip(s, in);
		switch (p) {
		case ST_PANEL_PALETTE:
			st_palette_draw(app, s, in, focused);
			break;
		case ST_PANEL_CANVAS:
			st_canvas_draw(s, in, st_app_graph(app), &app->canvas, app->theme);
			break;
		case ST_PANEL_PARAMS:
			st_params_draw(app, s, in, focused);
			break;
		case ST_PANEL_CHECK:
			st_check_draw(app, s, in, focused);
			break;
		}
		st_screen_set_clip(s, old);
	}
	draw_title(app, s);
	draw_hints(app, s);
	st_overlay_draw(app, s);
}

/* ---- keys ---- */

static bool
panel_capturing(const st_app *app)
{
	/* A panel in the middle of typing gets every key first. */
	return (app->focus == ST_PANEL_PALETTE && app->palette.typing) ||
	       (app->focus == ST_PANEL_PARAMS && app->params.editing) ||
	       (app->focus == ST_PANEL_CANVAS && app->canvas.connect_output >= 0);
}

static bool
global_key(st_app *app, const st_key *k)
{
	int a = st_keymap_lookup(&app->keymap, k->name, "global.");
	if (a < 0)
		return false;
	const st_action *act = &app->keymap.actions[a];
	const char *n = act->name + strlen("global.");
	if (act->command != NULL) {
		st_app_command(app, act->command);
	} else if (strcmp(n, "command") == 0) {
		st_field_set(&app->command, "");
		app->overlay = ST_OVERLAY_COMMAND;
	} else if (strcmp(n, "help") == 0) {
		app->overlay = ST_OVERLAY_HELP;
		app->help_top = 0;
	} else if (strcmp(n, "menu") == 0) {
		app->overlay = ST_OVERLAY_MENU;
		app->menu_index = app->menu_item = 0;
	} else if (strcmp(n, "next_panel") == 0) {
		app->focus = (app->focus + 1) % ST_PANEL_COUNT;
	} else if (strcmp(n, "previous_panel") == 0) {
		app->focus = (app->focus + ST_PANEL_COUNT - 1) % ST_PANEL_COUNT;
	} else if (strcmp(n, "palette") == 0) {
		app->focus = ST_PANEL_PALETTE;
	} else if (strcmp(n, "canvas") == 0) {
		app->focus = ST_PANEL_CANVAS;
	} else if (strcmp(n, "params") == 0) {
		app->focus = ST_PANEL_PARAMS;
	} else if (strcmp(n, "check") == 0) {
		app->focus = ST_PANEL_CHECK;
	} else if (strcmp(n, "find") == 0) {
		st_field_set(&app->command, "find ");
		app->overlay = ST_OVERLAY_COMMAND;
	} else if (strcmp(n, "redraw") == 0) {
		app->redraw_all = true;
	} else if (strcmp(n, "docs") == 0) {
		/* In the palette, the highlighted type's page (palette.docs). */
		if (app->focus == ST_PANEL_PALETTE)
			return false;
		st_app_command(app, "docs");
	} else if (strcmp(n, "plugins") == 0) {
		st_app_command(app, "plugins");
	} else {
		return false;
	}
	return true;
}

/* Which panel a screen cell belongs to, or -1. */
static int
panel_at(const st_app *app, int x, int y)
{
	for (int p = 0; p < ST_PANEL_COUNT; p++) {
		st_rect r = app->panel_rect[p];
		if (x >= r.x && x < r.x + r.w && y >= r.y && y < r.y + r.h)
			return p;
	}
	return -1;
}

void
st_app_key(st_app *app, const st_key *k)
{
	/* A message stays until the next key. */
	app->status_set = false;
	if (app->overlay != ST_OVERLAY_NONE) {
		st_overlay_key(app, k);
		return;
	}
	if (app->view != ST_VIEW_EDIT) {
		/* The view first; of the editor's keys only those that make sense
		 * away from the model (the command line, help, menus, saving). */
		bool (*view_key)(st_app *, const st_key *) = app->view == ST_VIEW_DASHBOARD  ? st_dashboard_key
		                                             : app->view == ST_VIEW_ANALYSIS ? st_analysis_key
		                                                                             : st_view_key;
		if (k->kind != ST_KEY_KEY && k->kind != ST_KEY_PASTE) {
			view_key(app, k);
			return;
		}
		if (view_key(app, k))
			return;
		static const char *const allowed[] = { "global.command", "global.help", "global.menu",
			                               "global.redraw", "global.save", "global.quit", NULL };
		int a = st_keymap_lookup(&app->keymap, k->name, "global.");
		for (int i = 0; a >= 0 && allowed[i] != NULL; i++) {
			if (strcmp(app->keymap.actions[a].name, allowed[i]) == 0) {
				global_key(app, k);
				return;
			}
		}
		st_menu_mnemonic(app, k);
		return;
	}
	/* A drag begun on the canvas ends there, wherever the pointer is. */
	if (app->dragging && (k->kind == ST_KEY_MOUSE_DRAG || k->kind == ST_KEY_MOUSE_RELEASE)) {
		st_canvas_key(app, k);
		return;
	}
	if (k->kind != ST_KEY_KEY && k->kind != ST_KEY_PASTE) {
		int p = panel_at(app, k->x, k->y);
		if (p < 0)
			return;
		if (k->kind == ST_KEY_MOUSE_PRESS)
			app->focus = (st_panel)p;
		switch (p) {
		case ST_PANEL_PALETTE:
			st_palette_key(app, k);
			break;
		case ST_PANEL_CANVAS:
			st_canvas_key(app, k);
			break;
		case ST_PANEL_PARAMS:
			st_params_key(app, k);
			break;
		case ST_PANEL_CHECK:
			st_check_key(app, k);
			break;
		}
		return;
	}
	if (!panel_capturing(app) && global_key(app, k))
		return;
	bool used = false;
	switch (app->focus) {
	case ST_PANEL_PALETTE:
		used = st_palette_key(app, k);
		break;
	case ST_PANEL_CANVAS:
		used = st_canvas_key(app, k);
		break;
	case ST_PANEL_PARAMS:
		used = st_params_key(app, k);
		break;
	case ST_PANEL_CHECK:
		used = st_check_key(app, k);
		break;
	default:
		break;
	}
	if (!used && panel_capturing(app))
		used = global_key(app, k);
	if (!used)
		st_menu_mnemonic(app, k);
	/* A value half typed never lands on whatever the form shows later. */
	if (app->focus != ST_PANEL_PARAMS)
		app->params.editing = false;
}

/* ---- input ---- */

/* Turns a libtermkey key into ours; false for keys to ignore. */
static bool
translate(TermKey *tk, TermKeyKey *in, st_key *out)
{
	memset(out, 0, sizeof *out);
	if (in->type == TERMKEY_TYPE_MOUSE) {
		TermKeyMouseEvent ev;
		int button, line, col;
		if (termkey_interpret_mouse(tk, in, &ev, &button, &line, &col) != TERMKEY_RES_KEY)
			return false;
		out->x = col - 1;
		out->y = line - 1;
		out->button = button;
		if (ev == TERMKEY_MOUSE_PRESS && (button == 4 || button == 5))
			out->kind = button == 4 ? ST_KEY_WHEEL_UP : ST_KEY_WHEEL_DOWN;
		else if (ev == TERMKEY_MOUSE_PRESS)
			out->kind = ST_KEY_MOUSE_PRESS;
		else if (ev == TERMKEY_MOUSE_DRAG)
			out->kind = ST_KEY_MOUSE_DRAG;
		else if (ev == TERMKEY_MOUSE_RELEASE)
			out->kind = ST_KEY_MOUSE_RELEASE;
		else
			return false;
		return true;
	}
	char name[64];
	termkey_strfkey(tk, name, sizeof name, in, TERMKEY_FORMAT_VIM);
	out->kind = ST_KEY_KEY;
	if (!st_key_normalise(name, out->name, sizeof out->name)) {
		/* A key without a name we know: keep what fits, it binds to nothing. */
		memcpy(out->name, name, sizeof out->name - 1);
		out->name[sizeof out->name - 1] = '\0';
	}
	return true;
}

/* Whether a key is the CSI that starts (200) or ends (201) a bracketed paste. */
static int
paste_marker(TermKey *tk, TermKeyKey *key)
{
	if (key->type != TERMKEY_TYPE_UNKNOWN_CSI)
		return 0;
	long args[4];
	size_t n = 4;
	unsigned long cmd;
	if (termkey_interpret_csi(tk, key, args, &n, &cmd) != TERMKEY_RES_KEY || cmd != '~' || n < 1)
		return 0;
	return args[0] == 200 ? 1 : args[0] == 201 ? 2 : 0;
}

static void
resize(st_app *app)
{
	int w, h;
	st_term_size(&w, &h);
	if (w < 1)
		w = 80;
	if (h < 1)
		h = 24;
	st_screen_resize(app->screen, w, h);
	app->redraw_all = true;
}

int
st_tui_main(const st_tui_options *opt)
{
	setlocale(LC_ALL, "");
	/* Characters from the user's locale (UTF-8 for curses), but numbers
	 * as C writes them: models, reports and caches are JSON, and a
	 * decimal comma (de_DE and others) would make printf write "0,5". */
	setlocale(LC_NUMERIC, "C");
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		fprintf(stderr, "strata: the editor needs a terminal; for scripts use strata edit MODEL -c '...'\n");
		return 2;
	}
	install_crash_handlers();
	st_diag d;
	st_diag_init(&d);
	st_app *app = st_app_new(opt, &d);
	if (app == NULL) {
		st_diag_print(&d, stderr);
		st_diag_free(&d);
		return 2;
	}
	/* Problems with the config, keys or theme: the first shows once the
	 * screen is up, and all of them are printed again when Strata ends. */
	if (d.count > 0) {
		const st_diag_item *it = &d.items[0];
		char where[512] = "";
		if (it->file != NULL) {
			/* ~ for the home folder: the screen line is short. */
			const char *home = getenv("HOME");
			size_t hn = home != NULL ? strlen(home) : 0;
			bool under = hn > 1 && strncmp(it->file, home, hn) == 0 && it->file[hn] == '/';
			int n = snprintf(where, sizeof where, "%s%s", under ? "~" : "", it->file + (under ? hn : 0));
			if (it->line > 0 && n > 0 && (size_t)n < sizeof where)
				snprintf(where + n, sizeof where - (size_t)n, ":%d:%d", it->line, it->col);
		}
		if (d.count > 1)
			st_app_message(app, it->severity, "%d problems in the settings, printed when Strata ends; "
			               "the first: %s%s%s", d.count, where, where[0] ? ": " : "", it->text);
		else
			st_app_message(app, it->severity, "%s%s%s", where, where[0] ? ": " : "", it->text);
	}
	bool utf8 = strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
	int ascii = opt->ascii >= 0 ? opt->ascii : app->config.ascii >= 0 ? app->config.ascii : !utf8;
	/* Colours: a count (--colors, the config) names a depth; -1 detects. */
	int colors = opt->colors >= 0 ? opt->colors : app->config.colors;
	int depth = colors < 0      ? -1
	            : colors >= 16777216 ? (int)ST_DEPTH_TRUE
	            : colors >= 256      ? (int)ST_DEPTH_256
	            : colors >= 16       ? (int)ST_DEPTH_16
	            : colors >= 8        ? (int)ST_DEPTH_8
	                                 : (int)ST_DEPTH_MONO;
	char err[256];
	if (st_term_open(depth, err, sizeof err) != 0) {
		fprintf(stderr, "strata: %s\n", err);
		st_diag_print(&d, stderr);
		st_diag_free(&d);
		st_app_free(app);
		return 2;
	}
	if (err[0] != '\0') /* a note: a fallback terminal type, fewer colours */
		st_app_message(app, ST_SEVERITY_WARNING, "%s", err);
	if (pipe(wake_pipe) == 0) {
		fcntl(wake_pipe[0], F_SETFL, O_NONBLOCK);
		fcntl(wake_pipe[1], F_SETFL, O_NONBLOCK);
	}
	install_signals();
	TermKey *tk = termkey_new(STDIN_FILENO, TERMKEY_FLAG_NOTERMIOS | TERMKEY_FLAG_CTRLC |
	                                           TERMKEY_FLAG_SPACESYMBOL | (utf8 ? TERMKEY_FLAG_UTF8 : 0));
	/* A short Esc wait: lone Esc must feel instant, over SSH too. */
	if (tk != NULL)
		termkey_set_waittime(tk, 25);
	ssize_t nw = write(STDOUT_FILENO, MOUSE_ON, sizeof MOUSE_ON - 1);
	(void)nw;
	int w, h;
	st_term_size(&w, &h);
	app->screen = st_screen_new(w > 0 ? w : 80, h > 0 ? h : 24);
	app->screen->ascii = ascii;
	app->redraw_all = true;

	int input_failed = tk == NULL ? (errno ? errno : EINVAL) : 0;
	bool pasting = false;
	bool kitty_on_screen = false;
	st_buf paste;
	st_buf_init(&paste);
	while (!app->quit && !got_hangup && tk != NULL) {
		if (got_resize) {
			got_resize = 0;
			resize(app);
		}
		/* Someone else saved the model: say so once, before it matters. */
		if (!app->disk_warned && st_app_disk_changed(app)) {
			app->disk_warned = true;
			st_app_message(app, ST_SEVERITY_WARNING,
			               "%s changed on disk: :e! reloads it (dropping these edits); saving asks first",
			               app->path);
		}
		/* Whatever left the dashboard's view (a key, :report), its worker stops. */
		if (app->dashboard != NULL && app->view != ST_VIEW_DASHBOARD)
			st_dashboard_close(app);
		if (app->analysis != NULL && app->view != ST_VIEW_ANALYSIS)
			st_analysis_close(app);
		/* A playing video asks for its next frame when it is due. */
		st_analysis_tick(app);
		st_app_draw(app);
		bool full = app->redraw_all;
		if (app->redraw_all) {
			st_term_invalidate();
			app->redraw_all = false;
		}
		st_term_flush(app->screen, app->theme);
		/* The inspector's picture in pixels goes over the blank cells the
		 * frame left for it; kitty images stay until deleted. */
		char *pixels = st_analysis_pixels(app, full);
		if (pixels != NULL) {
			write_all(STDOUT_FILENO, pixels);
			kitty_on_screen = st_analysis_kitty(app);
			free(pixels);
		} else if (kitty_on_screen && !st_analysis_kitty(app)) {
			write_all(STDOUT_FILENO, "\033_Ga=d\033\\");
			kitty_on_screen = false;
		}

		/* Wait for input, a signal or libtermkey's Esc timeout. */
		/* The dashboard's worker wakes the loop with news (at most every
		 * 250 ms); the timeout is only a backstop. */
		int dash_fd = app->dashboard != NULL ? st_dashboard_fd(app) : st_analysis_fd(app);
		struct pollfd fds[3] = { { STDIN_FILENO, POLLIN, 0 }, { wake_pipe[0], POLLIN, 0 }, { dash_fd, POLLIN, 0 } };
		TermKeyKey key;
		TermKeyResult res = termkey_getkey(tk, &key);
		/* Idle, the model file is looked at every 2 s. */
		int timeout = dash_fd >= 0 ? 500 : app->path != NULL ? 2000 : -1;
		int frame_due = st_analysis_timeout(app);
		if (frame_due >= 0 && (timeout < 0 || frame_due < timeout))
			timeout = frame_due;
		if (res == TERMKEY_RES_AGAIN)
			timeout = termkey_get_waittime(tk);
		if (res == TERMKEY_RES_NONE || res == TERMKEY_RES_AGAIN) {
			int n = poll(fds, dash_fd >= 0 ? 3 : 2, timeout);
			if (dash_fd >= 0 && (fds[2].revents & POLLIN)) {
				st_dashboard_drain(app);
				st_analysis_drain(app);
			}
			if (n < 0 && errno != EINTR) {
				input_failed = errno;
				break;
			}
			if (fds[1].revents & POLLIN) {
				char buf[32];
				while (read(wake_pipe[0], buf, sizeof buf) > 0)
					;
			}
			if (n > 0 && (fds[0].revents & POLLIN))
				termkey_advisereadable(tk);
			else if (n == 0 && res == TERMKEY_RES_AGAIN)
				termkey_getkey_force(tk, &key), res = TERMKEY_RES_KEY;
			if (fds[0].revents & (POLLHUP | POLLERR))
				got_hangup = 1;
			if (res != TERMKEY_RES_KEY)
				res = termkey_getkey(tk, &key);
		}
		/* Handle every key already read before drawing again. */
		while (res == TERMKEY_RES_KEY) {
			int marker = paste_marker(tk, &key);
			if (marker == 1) {
				pasting = true;
				st_buf_reset(&paste);
			} else if (marker == 2 && pasting) {
				pasting = false;
				st_key k = { .kind = ST_KEY_PASTE, .text = paste.data ? paste.data : (char *)"" };
				st_app_key(app, &k);
			} else if (pasting) {
				/* Collect the pasted text as text, not keys. */
				if (key.type == TERMKEY_TYPE_UNICODE)
					st_buf_puts(&paste, key.utf8);
				else if (key.type == TERMKEY_TYPE_KEYSYM && key.code.sym == TERMKEY_SYM_ENTER)
					st_buf_putc(&paste, '\n');
				else if (key.type == TERMKEY_TYPE_KEYSYM && key.code.sym == TERMKEY_SYM_SPACE)
					st_buf_putc(&paste, ' ');
			} else {
				st_key k;
				if (translate(tk, &key, &k))
					st_app_key(app, &k);
			}
			if (app->quit)
				break;
			res = termkey_getkey(tk, &key);
		}
		if (res == TERMKEY_RES_EOF)
			got_hangup = 1;
	}
	st_buf_free(&paste);
	if (kitty_on_screen)
		write_all(STDOUT_FILENO, "\033_Ga=d\033\\");
	nw = write(STDOUT_FILENO, MOUSE_OFF, sizeof MOUSE_OFF - 1);
	(void)nw;
	if (tk != NULL)
		termkey_destroy(tk);
	st_term_close();
	st_diag_print(&d, stderr);
	st_diag_free(&d);
	int status = 0;
	if (input_failed) {
		fprintf(stderr, "strata: cannot read the keyboard: %s\n", strerror(input_failed));
		status = tk == NULL ? 2 : 1;
	} else if (got_hangup) {
		/* As a shell reports a signal's end: 128 + its number; 1 for lost input. */
		status = got_signal ? 128 + got_signal : 1;
		const char *why = got_signal == SIGTERM ? "strata: ended by SIGTERM"
		                  : got_signal == SIGINT ? "strata: interrupted"
		                                          : "strata: the terminal went away";
		if (st_session_dirty(app->session) && app->journal != NULL)
			fprintf(stderr, "%s; the unsaved edits are in the journal and will be offered when %s is opened again\n",
			        why, app->path ? app->path : "the model");
		else if (st_session_dirty(app->session))
			fprintf(stderr, "%s; the unsaved edits are lost (this session had no journal)\n", why);
		else
			fprintf(stderr, "%s\n", why);
	}
	st_app_free(app);
	return status;
}
