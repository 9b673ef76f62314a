/* The type-check list: the checker's messages, live; Enter selects the
 * layer a message is about. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "tui-app.h"

void
st_check_draw(st_app *app, st_screen *s, st_rect r, bool focused)
{
	int n;
	st_graph_message *m = st_graph_messages(st_app_graph(app), &n);
	if (n == 0) {
		st_screen_text_fit(s, r.x + 1, r.y, "no problems", st_app_style(app, ST_ROLE_DIM), r.w - 1);
		free(m);
		return;
	}
	if (app->check.row >= n)
		app->check.row = n - 1;
	if (app->check.row < app->check.top)
		app->check.top = app->check.row;
	if (app->check.row >= app->check.top + r.h)
		app->check.top = app->check.row - r.h + 1;
	int name_w = 8;
	for (int i = 0; i < n; i++) {
		int w = st_text_width(m[i].layer->name);
		if (w > name_w)
			name_w = w;
	}
	if (name_w > r.w / 3)
		name_w = r.w / 3;
	for (int i = app->check.top, y = r.y; i < n && y < r.y + r.h; i++, y++) {
		bool here = focused && i == app->check.row;
		st_role role = m[i].severity == ST_SEVERITY_ERROR     ? ST_ROLE_ERROR
		               : m[i].severity == ST_SEVERITY_WARNING ? ST_ROLE_WARNING
		                                                      : ST_ROLE_INFO;
		const st_style *text = here ? st_app_style(app, ST_ROLE_SELECTED) : st_app_style(app, ST_ROLE_TEXT);
		st_screen_fill(s, (st_rect){ r.x, y, r.w, 1 }, " ", text);
		st_glyph g = m[i].severity == ST_SEVERITY_ERROR ? ST_G_ERROR
		             : m[i].severity == ST_SEVERITY_WARNING ? ST_G_WARNING
		                                                    : ST_G_INFO;
		int x = r.x + 1;
		x += st_screen_glyph(s, x, y, g, here ? text : st_app_style(app, role));
		x++;
		st_screen_text_fit(s, x, y, m[i].layer->name, text, name_w);
		x += name_w + 2;
		st_screen_text_fit(s, x, y, m[i].text, text, r.x + r.w - x);
	}
	free(m);
}

bool
st_check_key(st_app *app, const st_key *k)
{
	int n;
	st_graph_message *m = st_graph_messages(st_app_graph(app), &n);
	bool used = true;
	if (k->kind == ST_KEY_MOUSE_PRESS) {
		int i = app->check.top + k->y - (app->panel_rect[ST_PANEL_CHECK].y + 1);
		if (i >= 0 && i < n)
			app->check.row = i;
		free(m);
		return true;
	}
	int a = st_keymap_lookup(&app->keymap, k->name, "check.");
	const char *name = a >= 0 ? app->keymap.actions[a].name + strlen("check.") : "";
	if (strcmp(name, "up") == 0) {
		if (app->check.row > 0)
			app->check.row--;
	} else if (strcmp(name, "down") == 0) {
		if (app->check.row + 1 < n)
			app->check.row++;
	} else if (strcmp(name, "jump") == 0 && app->check.row < n) {
		app->focus = ST_PANEL_CANVAS;
		st_app_focus_layer(app, m[app->check.row].layer);
	} else {
		used = false;
	}
	free(m);
	return used;
}
