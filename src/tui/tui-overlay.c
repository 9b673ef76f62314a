/* Overlays: the ':' command line with completion and history, prompts,
 * questions, the key help, F10 menus, the layer documentation browser and
 * the collections manager. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tui-app.h"

/* ---- the menus: data the menu bar, its items and their commands come from ---- */

typedef struct menu_item {
	const char *label;
	const char *command; /* a ':' command; NULL opens the command line */
} menu_item;

typedef struct menu {
	const char *title;
	menu_item items[9];
} menu;

static const menu menus[] = {
	{ "File", { { "Save", "w" }, { "Save and quit", "wq" }, { "Quit", "q" }, { "Quit without saving", "q!" } } },
	{ "Edit",
	  { { "Undo", "undo" },
	    { "Redo", "redo" },
	    { "Lay out the graph", "layout" },
	    { "Import ONNX model...", "import " },
	    { "Command line...", NULL },
	    { "Expand the selected layer", "expand" } } },
	{ "View",
	  { { "Tensor shapes on links", "toggle shapes" },
	    { "Background grid", "toggle grid" },
	    { "Minimap", "toggle minimap" },
	    { "Heat overlay (report times)", "heat" },
	    { "Theme: dark", "theme dark" },
	    { "Theme: light", "theme light" },
	    { "Theme: high contrast", "theme high-contrast" },
	    { "Theme: 16 colours", "theme 16-colour" } } },
	{ "Tools",
	  { { "Manage collections", "plugins" },
	    { "Open report...", "report " },
	    { "Compare reports...", "compare " },
	    { "Analysis mode", "analyze" },
	    { "Profiling dashboard", "dashboard" } } },
	{ "Help", { { "Key bindings", "keys" }, { "Layer documentation", "docs" } } },
};
#define N_MENUS ((int)(sizeof menus / sizeof menus[0]))

static int
menu_items(int m)
{
	int n = 0;
	while (n < 9 && menus[m].items[n].label)
		n++;
	return n;
}

/* ---- completion ---- */

typedef struct candidates {
	char **items;
	int n;
} candidates;

static void
offer(candidates *c, const char *word, const char *candidate)
{
	if (strncmp(candidate, word, strlen(word)) != 0)
		return;
	for (int i = 0; i < c->n; i++) {
		if (strcmp(c->items[i], candidate) == 0)
			return;
	}
	c->items = st_xreallocarray(c->items, (size_t)c->n + 1, sizeof *c->items);
	c->items[c->n++] = st_xstrdup(candidate);
}

static bool
takes_layer(const char *cmd)
{
	static const char *const names[] = { "connect", "c", "disconnect", "dc", "delete", "rm", "rename",
		                             "mv", "set", "unset", "activation", "act", "move", "minimize",
		                             "show", "duplicate", "dup", "find", "goto", NULL };
	for (int i = 0; names[i]; i++) {
		if (strcmp(cmd, names[i]) == 0)
			return true;
	}
	return false;
}

/* Candidates for word number `index` of a command line whose words are argv. */
static void
complete(st_app *app, char **argv, int index, const char *word, candidates *c)
{
	st_graph *g = st_app_graph(app);
	if (index == 0) {
		for (int i = 0; i < st_n_commands; i++)
			offer(c, word, st_commands[i].name);
		for (int i = 0; i < st_n_app_commands; i++)
			offer(c, word, st_app_commands[i].name);
		return;
	}
	const char *cmd = argv[0];
	if ((strcmp(cmd, "add") == 0 || strcmp(cmd, "a") == 0 || strcmp(cmd, "docs") == 0) && index == 1) {
		for (int i = 0; i < app->registry->n_types; i++)
			offer(c, word, app->registry->types[i]->desc->name);
	} else if ((strcmp(cmd, "set") == 0 || strcmp(cmd, "unset") == 0) && index == 2) {
		st_layer *l = st_graph_find(g, argv[1]);
		for (int i = 0; l && l->type && i < l->type->desc->n_params; i++)
			offer(c, word, l->type->desc->params[i].name);
	} else if ((strcmp(cmd, "set") == 0) && index == 3) {
		st_layer *l = st_graph_find(g, argv[1]);
		int p = l && l->type ? st_params_find(l->type->desc->params, l->type->desc->n_params, argv[2]) : -1;
		if (p >= 0 && l->type->desc->params[p].kind == ST_PARAM_ENUM) {
			for (int i = 0; l->type->desc->params[p].enum_values[i]; i++)
				offer(c, word, l->type->desc->params[p].enum_values[i]);
		} else if (p >= 0 && l->type->desc->params[p].kind == ST_PARAM_BOOL) {
			offer(c, word, "true");
			offer(c, word, "false");
		}
	} else if ((strcmp(cmd, "activation") == 0 || strcmp(cmd, "act") == 0) && index == 2) {
		offer(c, word, "none");
		for (int i = 0; i < app->registry->n_activations; i++)
			offer(c, word, app->registry->activations[i]->desc->name);
	} else if ((strcmp(cmd, "network") == 0 || strcmp(cmd, "net") == 0) && index == 1) {
		for (int i = 0; i < ST_NET_COUNT; i++)
			offer(c, word, st_network_params[i].name);
	} else if (strcmp(cmd, "toggle") == 0 && index == 1) {
		offer(c, word, "shapes");
		offer(c, word, "grid");
		offer(c, word, "minimap");
	} else if (strcmp(cmd, "theme") == 0 && index == 1) {
		int n;
		char **names = st_theme_list(&n);
		for (int i = 0; i < n; i++) {
			offer(c, word, names[i]);
			free(names[i]);
		}
		free(names);
	} else if (strcmp(cmd, "help") == 0 && index == 1) {
		for (int i = 0; i < st_n_commands; i++)
			offer(c, word, st_commands[i].name);
	} else if (takes_layer(cmd) || (strcmp(cmd, "connect") == 0 && index <= 2)) {
		for (int i = 0; i < g->n_layers; i++)
			offer(c, word, g->layers[i]->name);
	}
}

/* Tab on the command line: completes the last word, or lists the choices. */
static void
tab_complete(st_app *app)
{
	st_field *f = &app->command;
	char line[sizeof f->text];
	snprintf(line, sizeof line, "%.*s", f->cursor, f->text);
	bool fresh = f->cursor == 0 || line[f->cursor - 1] == ' ';
	char **argv;
	int argc;
	char err[128];
	if (st_split_words(line, &argv, &argc, err, sizeof err) != 0)
		return;
	int index = fresh ? argc : argc - 1;
	const char *word = fresh || argc == 0 ? "" : argv[argc - 1];
	candidates c = { 0 };
	complete(app, argv, index, word, &c);
	if (c.n == 1) {
		/* The whole word, and a space to go on with the next. */
		char *rest = st_xasprintf("%s ", c.items[0] + strlen(word));
		st_key k = { .kind = ST_KEY_PASTE, .text = rest };
		st_field_key(f, &k);
		free(rest);
	} else if (c.n > 1) {
		/* The common prefix, and the choices in the status line. */
		size_t common = strlen(c.items[0]);
		for (int i = 1; i < c.n; i++) {
			size_t k = 0;
			while (k < common && c.items[i][k] == c.items[0][k])
				k++;
			common = k;
		}
		if (common > strlen(word)) {
			char *rest = st_xstrndup(c.items[0] + strlen(word), common - strlen(word));
			st_key k = { .kind = ST_KEY_PASTE, .text = rest };
			st_field_key(f, &k);
			free(rest);
		}
		st_buf b;
		st_buf_init(&b);
		for (int i = 0; i < c.n && b.len < 300; i++)
			st_buf_printf(&b, "%s%s", i ? "  " : "", c.items[i]);
		st_app_message(app, ST_SEVERITY_INFO, "%s", b.data);
		st_buf_free(&b);
	}
	for (int i = 0; i < c.n; i++)
		free(c.items[i]);
	free(c.items);
	for (int i = 0; i < argc; i++)
		free(argv[i]);
	free(argv);
}

/* ---- the documentation browser ---- */

static char *
read_docs(const char *type)
{
	const char *dirs[] = { ST_DATA_DIR "/layers", ST_SOURCE_DIR "/docs/layers" };
	for (int i = 0; i < 2; i++) {
		char *path = st_xasprintf("%s/%s.md", dirs[i], type);
		char *text = st_read_file(path, NULL);
		free(path);
		if (text != NULL)
			return text;
	}
	return NULL;
}

/* The lines of the page, wrapped to width, markup comments dropped; caller
 * frees each and the array. */
static char **
docs_lines(const char *text, int width, int *count)
{
	char **out = NULL;
	int n = 0;
	const char *p = text;
	while (*p) {
		const char *end = strchr(p, '\n');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		char *line = st_xstrndup(p, len);
		p += len + (end ? 1 : 0);
		if (strncmp(line, "<!--", 4) == 0) {
			free(line);
			continue;
		}
		/* Wrap at spaces (by bytes: close enough for prose, exact for ASCII). */
		char *rest = line;
		do {
			size_t take = strlen(rest);
			if ((int)take > width && width > 8) {
				take = (size_t)width;
				while (take > 0 && rest[take] != ' ')
					take--;
				if (take == 0)
					take = (size_t)width;
			}
			out = st_xreallocarray(out, (size_t)n + 1, sizeof *out);
			out[n++] = st_xstrndup(rest, take);
			rest += take;
			while (*rest == ' ')
				rest++;
		} while (*rest);
		free(line);
	}
	*count = n;
	return out;
}

/* ---- drawing ---- */

static st_rect
centred(const st_screen *s, int w, int h)
{
	if (w > s->w - 2)
		w = s->w - 2;
	if (h > s->h - 2)
		h = s->h - 2;
	return (st_rect){ (s->w - w) / 2, (s->h - h) / 2, w, h };
}

static void
window(st_app *app, st_screen *s, st_rect r, const char *title)
{
	const st_style *menu_style = st_app_style(app, ST_ROLE_MENU);
	st_screen_fill(s, r, " ", menu_style);
	st_screen_box(s, r, st_app_style(app, ST_ROLE_BORDER_FOCUS), title, st_app_style(app, ST_ROLE_BORDER_FOCUS));
}

static void
draw_help(st_app *app, st_screen *s)
{
	st_rect r = centred(s, 84, s->h - 4);
	window(app, s, r, "Key bindings (Esc closes; ~/.config/strata/keys.conf changes them)");
	st_rect old = st_screen_set_clip(s, (st_rect){ r.x + 1, r.y + 1, r.w - 2, r.h - 2 });
	int y = r.y + 1 - app->help_top;
	const char *group = "";
	for (int a = 0; a < app->keymap.n_actions; a++) {
		const st_action *act = &app->keymap.actions[a];
		const char *dot = strchr(act->name, '.');
		if (dot && (strlen(group) != (size_t)(dot - act->name) || strncmp(group, act->name, (size_t)(dot - act->name)) != 0)) {
			static char current[32];
			snprintf(current, sizeof current, "%.*s", (int)(dot - act->name), act->name);
			group = current;
			y++;
			st_screen_text(s, r.x + 2, y++, group, st_app_style(app, ST_ROLE_TITLE), -1);
		}
		st_buf keys;
		st_buf_init(&keys);
		for (char **k = app->keymap.keys[a]; k && *k; k++)
			st_buf_printf(&keys, "%s%s", k == app->keymap.keys[a] ? "" : " ", *k);
		st_screen_text_fit(s, r.x + 4, y, keys.data ? keys.data : "", st_app_style(app, ST_ROLE_HINT_KEY), 18);
		st_screen_text_fit(s, r.x + 23, y, act->help, st_app_style(app, ST_ROLE_MENU), r.w - 25);
		y++;
		st_buf_free(&keys);
	}
	y++;
	st_screen_text(s, r.x + 2, y++, "commands (:)", st_app_style(app, ST_ROLE_TITLE), -1);
	for (int i = 0; i < st_n_app_commands; i++, y++) {
		char head[64];
		snprintf(head, sizeof head, "%s %s", st_app_commands[i].name, st_app_commands[i].usage);
		st_screen_text_fit(s, r.x + 4, y, head, st_app_style(app, ST_ROLE_HINT_KEY), 26);
		st_screen_text_fit(s, r.x + 31, y, st_app_commands[i].help, st_app_style(app, ST_ROLE_MENU), r.w - 33);
	}
	for (int i = 0; i < st_n_commands; i++, y++) {
		char head[64];
		snprintf(head, sizeof head, "%s %s", st_commands[i].name, st_commands[i].usage);
		st_screen_text_fit(s, r.x + 4, y, head, st_app_style(app, ST_ROLE_HINT_KEY), 26);
		st_screen_text_fit(s, r.x + 31, y, st_commands[i].help, st_app_style(app, ST_ROLE_MENU), r.w - 33);
	}
	st_screen_set_clip(s, old);
}

/* The first key bound to the action that runs a menu item's command (the
 * command line's for the item without one), or NULL. Borrowed. */
static const char *
item_key(const st_app *app, const menu_item *item)
{
	for (int a = 0; a < app->keymap.n_actions; a++) {
		const char *cmd = app->keymap.actions[a].command;
		bool same = item->command != NULL ? cmd != NULL && strcmp(cmd, item->command) == 0
		                                  : strcmp(app->keymap.actions[a].name, "global.command") == 0;
		if (same && app->keymap.keys[a] != NULL && app->keymap.keys[a][0] != NULL)
			return app->keymap.keys[a][0];
	}
	return NULL;
}

bool
st_menu_mnemonic(st_app *app, const st_key *k)
{
	/* <M-f> for File: Alt and a menu's initial. */
	if (k->kind != ST_KEY_KEY || strncmp(k->name, "<M-", 3) != 0 || k->name[3] == '\0' ||
	    strcmp(k->name + 4, ">") != 0)
		return false;
	for (int m = 0; m < N_MENUS; m++) {
		if (tolower((unsigned char)menus[m].title[0]) == tolower((unsigned char)k->name[3])) {
			app->overlay = ST_OVERLAY_MENU;
			app->menu_index = m;
			app->menu_item = 0;
			return true;
		}
	}
	return false;
}

static void
draw_menu(st_app *app, st_screen *s)
{
	const st_style *bar = st_app_style(app, ST_ROLE_MENU), *sel = st_app_style(app, ST_ROLE_MENU_SELECTED);
	st_screen_fill(s, (st_rect){ 0, 0, s->w, 1 }, " ", bar);
	int x = 1, open_x = 1;
	for (int m = 0; m < N_MENUS; m++) {
		char label[32];
		snprintf(label, sizeof label, " %s ", menus[m].title);
		if (m == app->menu_index)
			open_x = x;
		x += st_screen_text(s, x, 0, label, m == app->menu_index ? sel : bar, -1);
	}
	int n = menu_items(app->menu_index), w = 36;
	st_rect r = { open_x, 1, w, n + 2 };
	window(app, s, r, NULL);
	for (int i = 0; i < n; i++) {
		const menu_item *item = &menus[app->menu_index].items[i];
		const st_style *st = i == app->menu_item ? sel : bar;
		st_screen_fill(s, (st_rect){ r.x + 1, r.y + 1 + i, w - 2, 1 }, " ", st);
		/* The item's key, as the key map binds it, on the right. */
		const char *key = item_key(app, item);
		int kw = key != NULL ? st_text_width(key) : 0;
		if (kw > 0 && kw < w - 8)
			st_screen_text(s, r.x + w - 2 - kw, r.y + 1 + i, key, st, kw);
		st_screen_text_fit(s, r.x + 2, r.y + 1 + i, item->label, st, w - 5 - kw);
	}
}

static void
draw_docs(st_app *app, st_screen *s)
{
	const char *type = app->docs_type;
	if (type == NULL && app->canvas.cursor)
		type = app->canvas.cursor->type_name;
	if (app->docs_text == NULL) {
		char *text = type ? read_docs(type) : NULL;
		app->docs_text = text ? text
		                      : st_xasprintf("No documentation found for '%s'.\n\nLayer pages live in docs/layers "
		                                     "(installed under %s/layers).",
		                                     type ? type : "(no layer selected)", ST_DATA_DIR);
	}
	st_rect r = centred(s, 90, s->h - 2);
	char title[96];
	snprintf(title, sizeof title, "%s (Esc closes, j/k scroll)", type ? type : "documentation");
	window(app, s, r, title);
	int n;
	char **lines = docs_lines(app->docs_text, r.w - 4, &n);
	if (app->docs_top > n - 1)
		app->docs_top = n > 0 ? n - 1 : 0;
	for (int i = app->docs_top, y = r.y + 1; i < n && y < r.y + r.h - 1; i++, y++) {
		bool heading = lines[i][0] == '#';
		st_screen_text_fit(s, r.x + 2, y, lines[i], st_app_style(app, heading ? ST_ROLE_TITLE : ST_ROLE_MENU),
		                   r.w - 4);
	}
	for (int i = 0; i < n; i++)
		free(lines[i]);
	free(lines);
}

static bool
plugin_disabled(const st_app *app, const char *name)
{
	for (int i = 0; name && i < app->config.n_disabled_plugins; i++) {
		if (strcmp(app->config.disabled_plugins[i], name) == 0)
			return true;
	}
	return false;
}

static void
draw_plugins(st_app *app, st_screen *s)
{
	st_rect r = centred(s, 90, s->h - 4);
	window(app, s, r, "Collections (Space enables or disables at the next start; a adds a folder; Esc closes)");
	const st_registry *reg = app->registry;
	int y = r.y + 1;
	/* The extra folders from the config, on the window's last line. */
	int bottom = r.y + r.h - 1;
	if (r.h > 4) {
		bottom--;
		st_buf b;
		st_buf_init(&b);
		st_buf_puts(&b, app->config.n_plugin_paths ? "extra folders:" : "extra folders: none (a adds one)");
		for (int i = 0; i < app->config.n_plugin_paths; i++) {
			st_buf_puts(&b, " ");
			st_buf_puts(&b, app->config.plugin_paths[i]);
		}
		st_screen_text_fit(s, r.x + 2, bottom, b.data, st_app_style(app, ST_ROLE_DIM), r.w - 4);
		st_buf_free(&b);
	}
	for (int i = 0; i < reg->n_plugins && y < bottom; i++) {
		const st_plugin *p = reg->plugins[i];
		bool here = i == app->plugins_row;
		const st_style *st = st_app_style(app, here ? ST_ROLE_MENU_SELECTED : ST_ROLE_MENU);
		st_screen_fill(s, (st_rect){ r.x + 1, y, r.w - 2, 1 }, " ", st);
		bool off = plugin_disabled(app, p->name);
		int x = r.x + 2 + st_screen_glyph(s, r.x + 2, y, p->loaded && !off ? ST_G_CHECK_ON : ST_G_CHECK_OFF, st);
		char head[256];
		if (p->loaded)
			snprintf(head, sizeof head, " %s %s: %d layer type%s, %d activation%s%s", p->name, p->version,
			         p->n_layers, p->n_layers == 1 ? "" : "s", p->n_activations,
			         p->n_activations == 1 ? "" : "s", off ? " (disabled from the next start)" : "");
		else if (p->disabled)
			snprintf(head, sizeof head, " %s %s: disabled%s", p->name, p->version ? p->version : "",
			         off ? "" : " (enabled from the next start)");
		else
			snprintf(head, sizeof head, " %s: refused: %s", p->path, p->refusal ? p->refusal : "?");
		st_screen_text_fit(s, x, y++, head, st, r.x + r.w - 1 - x);
		if (p->loaded && y < bottom) {
			char line[512];
			snprintf(line, sizeof line, "%s %s by %s %s %s", p->description, st_glyph_text(s, ST_G_DOT), p->author,
			         st_glyph_text(s, ST_G_DOT), p->path);
			st_screen_text_fit(s, r.x + 6, y++, line, st_app_style(app, ST_ROLE_DIM), r.w - 8);
		}
	}
}

static void
draw_bottom_field(st_app *app, st_screen *s, const char *prefix, const st_field *f)
{
	int y = s->h - 1;
	const st_style *st = st_app_style(app, ST_ROLE_MENU);
	st_screen_fill(s, (st_rect){ 0, y, s->w, 1 }, " ", st);
	int x = st_screen_text(s, 0, y, prefix, st_app_style(app, ST_ROLE_HINT_KEY), -1);
	st_field_draw(f, s, x, y, s->w - x, st, st_app_style(app, ST_ROLE_CURSOR), true);
}

static void
draw_pick(st_app *app, st_screen *s)
{
	int w = st_text_width(app->pick_title) + 6;
	for (int i = 0; i < app->n_pick_items; i++) {
		int iw = st_text_width(app->pick_items[i]) + 6;
		if (iw > w)
			w = iw;
	}
	if (w < 30)
		w = 30;
	if (w > s->w - 4)
		w = s->w - 4;
	int rows = app->n_pick_items < s->h - 6 ? app->n_pick_items : s->h - 6;
	if (rows < 1)
		rows = 1;
	/* The highlighted item stays in view. */
	st_scroll_keep(&app->pick_top, app->pick_row, rows, app->n_pick_items);
	st_rect r = centred(s, w, rows + 2);
	window(app, s, r, app->pick_title);
	for (int i = 0; i < rows && app->pick_top + i < app->n_pick_items; i++) {
		int at = app->pick_top + i;
		const st_style *st = st_app_style(app, at == app->pick_row ? ST_ROLE_MENU_SELECTED : ST_ROLE_MENU);
		st_screen_fill(s, (st_rect){ r.x + 1, r.y + 1 + i, w - 2, 1 }, " ", st);
		st_screen_text_fit(s, r.x + 2, r.y + 1 + i, app->pick_items[at], st, w - 4);
	}
}

void
st_overlay_draw(st_app *app, st_screen *s)
{
	switch (app->overlay) {
	case ST_OVERLAY_PICK:
		draw_pick(app, s);
		break;
	case ST_OVERLAY_NONE:
		break;
	case ST_OVERLAY_COMMAND:
		/* The choices from Tab stay visible just above the line. */
		if (app->status_set) {
			st_screen_fill(s, (st_rect){ 0, s->h - 2, s->w, 1 }, " ", st_app_style(app, ST_ROLE_STATUS));
			st_screen_text_fit(s, 1, s->h - 2, app->status, st_app_style(app, ST_ROLE_STATUS), s->w - 2);
		}
		draw_bottom_field(app, s, ":", &app->command);
		break;
	case ST_OVERLAY_PROMPT: {
		char prefix[200];
		snprintf(prefix, sizeof prefix, "%s ", app->prompt_question);
		draw_bottom_field(app, s, prefix, &app->prompt);
		break;
	}
	case ST_OVERLAY_CONFIRM: {
		int n = (int)strlen(app->confirm_choices);
		int w = st_text_width(app->confirm_question) + 4;
		if (w < 40)
			w = 40;
		if (w > s->w - 4)
			w = s->w - 4;
		/* The question wraps inside the box. */
		char **lines;
		int n_lines;
		lines = docs_lines(app->confirm_question, w - 4, &n_lines);
		st_rect r = centred(s, w, n_lines + n + 4);
		window(app, s, r, "Strata");
		for (int i = 0; i < n_lines; i++) {
			st_screen_text_fit(s, r.x + 2, r.y + 1 + i, lines[i], st_app_style(app, ST_ROLE_MENU), w - 4);
			free(lines[i]);
		}
		free(lines);
		for (int i = 0; i < n; i++) {
			char key[4] = { app->confirm_choices[i], 0 };
			int y = r.y + 2 + n_lines + i;
			int x = r.x + 4 + st_screen_text(s, r.x + 4, y, key, st_app_style(app, ST_ROLE_HINT_KEY), -1);
			st_screen_text_fit(s, x + 1, y, app->confirm_labels[i], st_app_style(app, ST_ROLE_MENU), w - 8);
		}
		break;
	}
	case ST_OVERLAY_HELP:
		draw_help(app, s);
		break;
	case ST_OVERLAY_MENU:
		draw_menu(app, s);
		break;
	case ST_OVERLAY_DOCS:
		draw_docs(app, s);
		break;
	case ST_OVERLAY_PLUGINS:
		draw_plugins(app, s);
		break;
	}
}

/* ---- keys ---- */

static bool
is(const st_key *k, const char *name)
{
	return k->kind == ST_KEY_KEY && strcmp(k->name, name) == 0;
}

static void
toggle_plugin(st_app *app)
{
	const st_registry *reg = app->registry;
	if (app->plugins_row >= reg->n_plugins || !reg->plugins[app->plugins_row]->name ||
	    (!reg->plugins[app->plugins_row]->loaded && !reg->plugins[app->plugins_row]->disabled))
		return;
	const char *name = reg->plugins[app->plugins_row]->name;
	st_config *cfg = &app->config;
	for (int i = 0; i < cfg->n_disabled_plugins; i++) {
		if (strcmp(cfg->disabled_plugins[i], name) == 0) {
			free(cfg->disabled_plugins[i]);
			memmove(&cfg->disabled_plugins[i], &cfg->disabled_plugins[i + 1],
			        sizeof *cfg->disabled_plugins * (size_t)(cfg->n_disabled_plugins - i - 1));
			cfg->n_disabled_plugins--;
			goto save;
		}
	}
	cfg->disabled_plugins = st_xreallocarray(cfg->disabled_plugins, (size_t)cfg->n_disabled_plugins + 1,
	                                         sizeof *cfg->disabled_plugins);
	cfg->disabled_plugins[cfg->n_disabled_plugins++] = st_xstrdup(name);
save:;
	char err[256];
	if (st_config_save(cfg, err, sizeof err) != 0)
		st_app_message(app, ST_SEVERITY_ERROR, "%s", err);
	else
		st_app_message(app, ST_SEVERITY_INFO, "%s %s from the next start", name,
		               plugin_disabled(app, name) ? "disabled" : "enabled");
}

static void add_folder(st_app *app, const char *text);

/* The answer to "Plugin folder to add:": load it now and keep it in the
 * config for the next starts. */
static void
add_folder_done(st_app *app, const char *text, void *arg)
{
	(void)arg;
	if (text[0] == '\0') {
		app->overlay = ST_OVERLAY_PLUGINS;
		return;
	}
	/* ~/ is the home folder, as in a shell. */
	char *expanded = NULL;
	if (strncmp(text, "~/", 2) == 0 && getenv("HOME") != NULL)
		text = expanded = st_xasprintf("%s%s", getenv("HOME"), text + 1);
	add_folder(app, text);
	free(expanded);
	app->overlay = ST_OVERLAY_PLUGINS;
}

static void
add_folder(st_app *app, const char *text)
{
	struct stat st;
	if (stat(text, &st) != 0 || !S_ISDIR(st.st_mode)) {
		st_app_message(app, ST_SEVERITY_ERROR, "%s: %s", text,
		               stat(text, &st) != 0 ? strerror(errno) : "not a folder");
		return;
	}
	st_config *cfg = &app->config;
	for (int i = 0; i < cfg->n_plugin_paths; i++) {
		if (strcmp(cfg->plugin_paths[i], text) == 0) {
			st_app_message(app, ST_SEVERITY_INFO, "%s is already an extra plugin folder", text);
			return;
		}
	}
	int before = app->registry->n_plugins;
	int tried = st_registry_load_dir(app->registry, text);
	cfg->plugin_paths = st_xreallocarray(cfg->plugin_paths, (size_t)cfg->n_plugin_paths + 1,
	                                     sizeof *cfg->plugin_paths);
	cfg->plugin_paths[cfg->n_plugin_paths++] = st_xstrdup(text);
	char err[256];
	if (st_config_save(cfg, err, sizeof err) != 0)
		st_app_message(app, ST_SEVERITY_ERROR, "%s", err);
	else
		st_app_message(app, ST_SEVERITY_INFO, "%s: %d plugin file%s, %d listed; kept in the settings", text,
		               tried, tried == 1 ? "" : "s", app->registry->n_plugins - before);
}

static bool
scroll_keys(const st_key *k, int *top)
{
	if (is(k, "j") || is(k, "<Down>"))
		(*top)++;
	else if (is(k, "k") || is(k, "<Up>"))
		(*top)--;
	else if (is(k, "<PageDown>") || is(k, "<Space>"))
		*top += 10;
	else if (is(k, "<PageUp>"))
		*top -= 10;
	else if (is(k, "g") || is(k, "<Home>"))
		*top = 0;
	else
		return false;
	if (*top < 0)
		*top = 0;
	return true;
}

bool
st_overlay_key(st_app *app, const st_key *k)
{
	switch (app->overlay) {
	case ST_OVERLAY_NONE:
		return false;
	case ST_OVERLAY_COMMAND:
		if (is(k, "<Esc>")) {
			app->overlay = ST_OVERLAY_NONE;
		} else if (is(k, "<Enter>")) {
			app->overlay = ST_OVERLAY_NONE;
			st_field_remember(&app->command);
			char line[sizeof app->command.text];
			snprintf(line, sizeof line, "%s", app->command.text);
			st_app_command(app, line);
		} else if (is(k, "<Tab>")) {
			tab_complete(app);
		} else {
			st_field_key(&app->command, k);
		}
		return true;
	case ST_OVERLAY_PROMPT:
		if (is(k, "<Esc>")) {
			app->overlay = ST_OVERLAY_NONE;
		} else if (is(k, "<Enter>")) {
			app->overlay = ST_OVERLAY_NONE;
			char text[sizeof app->prompt.text];
			snprintf(text, sizeof text, "%s", app->prompt.text);
			if (app->prompt_done)
				app->prompt_done(app, text, app->prompt_arg);
		} else {
			st_field_key(&app->prompt, k);
		}
		return true;
	case ST_OVERLAY_CONFIRM: {
		char choice = 0;
		if (k->kind == ST_KEY_KEY && k->name[1] == '\0' && strchr(app->confirm_choices, tolower((unsigned char)k->name[0])))
			choice = (char)tolower((unsigned char)k->name[0]);
		else if (is(k, "<Enter>"))
			choice = app->confirm_choices[0];
		else if (is(k, "<Esc>"))
			choice = app->confirm_choices[strlen(app->confirm_choices) - 1];
		if (choice) {
			app->overlay = ST_OVERLAY_NONE;
			st_confirm_fn done = app->confirm_done;
			app->confirm_done = NULL;
			if (done)
				done(app, choice, app->confirm_arg);
			st_app_next_question(app);
		}
		return true;
	}
	case ST_OVERLAY_HELP:
		if (is(k, "<Esc>") || is(k, "q") || is(k, "?"))
			app->overlay = ST_OVERLAY_NONE;
		else
			scroll_keys(k, &app->help_top);
		return true;
	case ST_OVERLAY_DOCS:
		if (is(k, "<Esc>") || is(k, "q")) {
			app->overlay = ST_OVERLAY_NONE;
			free(app->docs_text);
			app->docs_text = NULL;
		} else {
			scroll_keys(k, &app->docs_top);
		}
		return true;
	case ST_OVERLAY_PICK: {
		int n = app->n_pick_items;
		if (is(k, "<Esc>") || is(k, "q")) {
			st_app_pick_close(app);
		} else if ((is(k, "<Down>") || is(k, "j")) && app->pick_row + 1 < n) {
			app->pick_row++;
		} else if ((is(k, "<Up>") || is(k, "k")) && app->pick_row > 0) {
			app->pick_row--;
		} else if (is(k, "<Home>")) {
			app->pick_row = 0;
		} else if (is(k, "<End>") && n > 0) {
			app->pick_row = n - 1;
		} else if (is(k, "<Enter>") || is(k, "<Space>")) {
			if (app->pick_row < n) {
				char *choice = st_xstrdup(app->pick_items[app->pick_row]);
				st_prompt_fn done = app->pick_done;
				void *arg = app->pick_arg;
				st_app_pick_close(app);
				if (done)
					done(app, choice, arg);
				free(choice);
			}
		} else if (k->kind == ST_KEY_KEY && k->name[0] != '<' && k->name[1] == '\0') {
			/* A letter: the next item starting with it. */
			for (int d = 1; d <= n; d++) {
				int at = (app->pick_row + d) % n;
				if (tolower((unsigned char)app->pick_items[at][0]) == tolower((unsigned char)k->name[0])) {
					app->pick_row = at;
					break;
				}
			}
		}
		return true;
	}
	case ST_OVERLAY_PLUGINS:
		if (is(k, "<Esc>") || is(k, "q"))
			app->overlay = ST_OVERLAY_NONE;
		else if (is(k, "j") || is(k, "<Down>")) {
			if (app->plugins_row + 1 < app->registry->n_plugins)
				app->plugins_row++;
		} else if (is(k, "k") || is(k, "<Up>")) {
			if (app->plugins_row > 0)
				app->plugins_row--;
		} else if (is(k, "<Space>")) {
			toggle_plugin(app);
		} else if (is(k, "a")) {
			st_app_prompt(app, "Plugin folder to add:", "", add_folder_done, NULL);
		}
		return true;
	case ST_OVERLAY_MENU: {
		int n = menu_items(app->menu_index);
		if (st_menu_mnemonic(app, k)) {
			/* Alt and an initial: that menu, from another one too. */
		} else if (is(k, "<Esc>") || is(k, "<F10>")) {
			app->overlay = ST_OVERLAY_NONE;
		} else if (is(k, "<Left>") || is(k, "h")) {
			app->menu_index = (app->menu_index + N_MENUS - 1) % N_MENUS;
			app->menu_item = 0;
		} else if (is(k, "<Right>") || is(k, "l")) {
			app->menu_index = (app->menu_index + 1) % N_MENUS;
			app->menu_item = 0;
		} else if (is(k, "<Down>") || is(k, "j")) {
			app->menu_item = (app->menu_item + 1) % n;
		} else if (is(k, "<Up>") || is(k, "k")) {
			app->menu_item = (app->menu_item + n - 1) % n;
		} else if (is(k, "<Enter>")) {
			const menu_item *item = &menus[app->menu_index].items[app->menu_item];
			app->overlay = ST_OVERLAY_NONE;
			size_t len = item->command ? strlen(item->command) : 0;
			if (len > 0 && item->command[len - 1] != ' ') {
				st_app_command(app, item->command);
			} else {
				/* "import ": the command line, started, for the rest. */
				st_field_set(&app->command, item->command ? item->command : "");
				app->overlay = ST_OVERLAY_COMMAND;
			}
		} else if (k->kind == ST_KEY_KEY && k->name[1] == '\0') {
			/* A menu's initial opens it: F10 then f for File. */
			for (int m = 0; m < N_MENUS; m++) {
				if (tolower((unsigned char)menus[m].title[0]) == tolower((unsigned char)k->name[0])) {
					app->menu_index = m;
					app->menu_item = 0;
				}
			}
		}
		return true;
	}
	}
	return false;
}
