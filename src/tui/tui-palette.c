/* The palette: every layer type the loaded plugins provide, grouped by
 * category, name or collection, filtered by typing; adds at the cursor. */
#include "config.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "tui-app.h"

/* One row: a group heading or a layer type. */
typedef struct row {
	const char *heading; /* NULL for a type */
	const st_layer_type *type;
} row;

static const char *
category_of(const st_layer_type *t)
{
	return t->desc->category ? t->desc->category : "General";
}

static const char *
group_of(const st_app *app, const st_layer_type *t)
{
	return app->palette.group == 2 ? t->plugin->name : category_of(t);
}

/* Case-insensitive substring search. */
static bool
contains(const char *hay, const char *needle)
{
	if (hay == NULL)
		return false;
	size_t n = strlen(needle);
	for (const char *p = hay; *p; p++) {
		size_t i = 0;
		while (i < n && p[i] && tolower((unsigned char)p[i]) == tolower((unsigned char)needle[i]))
			i++;
		if (i == n)
			return true;
	}
	return n == 0;
}

static bool
matches(const st_layer_type *t, const char *filter)
{
	const st_layer_desc *d = t->desc;
	if (contains(d->name, filter) || contains(d->display_name, filter))
		return true;
	for (int k = 0; d->aliases && d->aliases[k]; k++) {
		if (contains(d->aliases[k], filter))
			return true;
	}
	return false;
}

static int
compare_types(const void *a, const void *b)
{
	const st_layer_type *x = *(const st_layer_type *const *)a, *y = *(const st_layer_type *const *)b;
	return strcmp(x->desc->name, y->desc->name);
}

/* The rows shown now; caller frees. */
/* Folded groups are kept by name, so folding one never moves another. */
static bool
is_collapsed(const st_app *app, const char *group)
{
	for (int i = 0; i < app->palette.n_collapsed; i++) {
		if (strcmp(app->palette.collapsed[i], group) == 0)
			return true;
	}
	return false;
}

static void
toggle_collapsed(st_app *app, const char *group)
{
	for (int i = 0; i < app->palette.n_collapsed; i++) {
		if (strcmp(app->palette.collapsed[i], group) == 0) {
			free(app->palette.collapsed[i]);
			app->palette.collapsed[i] = app->palette.collapsed[--app->palette.n_collapsed];
			return;
		}
	}
	app->palette.collapsed = st_xreallocarray(app->palette.collapsed, (size_t)app->palette.n_collapsed + 1,
	                                          sizeof *app->palette.collapsed);
	app->palette.collapsed[app->palette.n_collapsed++] = st_xstrdup(group);
}

void
st_palette_unfold(st_app *app)
{
	for (int i = 0; i < app->palette.n_collapsed; i++)
		free(app->palette.collapsed[i]);
	free(app->palette.collapsed);
	app->palette.collapsed = NULL;
	app->palette.n_collapsed = 0;
}

static row *
rows(const st_app *app, int *count)
{
	const st_registry *r = app->registry;
	row *out = st_xcalloc((size_t)(2 * r->n_types + 1), sizeof *out);
	int n = 0;
	const char *filter = app->palette.filter.text;
	if (filter[0] != '\0' || app->palette.group == 1) {
		/* Filtered or by name: one sorted list. */
		const st_layer_type **types = st_xcalloc((size_t)(r->n_types + 1), sizeof *types);
		int k = 0;
		for (int i = 0; i < r->n_types; i++) {
			if (matches(r->types[i], filter))
				types[k++] = r->types[i];
		}
		qsort(types, (size_t)k, sizeof *types, compare_types);
		for (int i = 0; i < k; i++)
			out[n++].type = types[i];
		free(types);
		*count = n;
		return out;
	}
	/* Grouped, in the order groups first appear. */
	for (int i = 0; i < r->n_types; i++) {
		const char *g = group_of(app, r->types[i]);
		bool seen = false;
		for (int j = 0; j < n && !seen; j++)
			seen = out[j].heading && strcmp(out[j].heading, g) == 0;
		if (seen)
			continue;
		out[n++].heading = g;
		bool collapsed = is_collapsed(app, g);
		for (int j = 0; j < r->n_types && !collapsed; j++) {
			if (strcmp(group_of(app, r->types[j]), g) == 0)
				out[n++].type = r->types[j];
		}
	}
	*count = n;
	return out;
}

void
st_palette_draw(st_app *app, st_screen *s, st_rect r, bool focused)
{
	int y = r.y;
	if (app->palette.typing || app->palette.filter.text[0]) {
		st_screen_text(s, r.x, y, "/", st_app_style(app, ST_ROLE_HINT_KEY), 1);
		st_field_draw(&app->palette.filter, s, r.x + 2, y, r.w - 2, st_app_style(app, ST_ROLE_INPUT),
		              st_app_style(app, ST_ROLE_CURSOR), focused && app->palette.typing);
		y++;
	}
	int n;
	row *list = rows(app, &n);
	if (app->palette.row >= n)
		app->palette.row = n > 0 ? n - 1 : 0;
	int height = r.y + r.h - y;
	if (height > 0)
		st_scroll_keep(&app->palette.top, app->palette.row, height, n);
	for (int i = app->palette.top; i < n && y < r.y + r.h; i++, y++) {
		bool here = i == app->palette.row;
		const st_style *style = here && focused ? st_app_style(app, ST_ROLE_SELECTED)
		                                        : st_app_style(app, list[i].heading ? ST_ROLE_TITLE : ST_ROLE_TEXT);
		st_screen_fill(s, (st_rect){ r.x, y, r.w, 1 }, " ", style);
		if (list[i].heading) {
			bool collapsed = is_collapsed(app, list[i].heading);
			int x = r.x + st_screen_glyph(s, r.x, y, collapsed ? ST_G_TRIANGLE_RIGHT : ST_G_TRIANGLE_DOWN, style);
			st_screen_text_fit(s, x + 1, y, list[i].heading, style, r.w - (x + 1 - r.x));
		} else {
			st_screen_text_fit(s, r.x + 2, y, list[i].type->desc->name, style, r.w - 2);
		}
	}
	if (n == 0)
		st_screen_text_fit(s, r.x, y, "no layer type matches", st_app_style(app, ST_ROLE_DIM), r.w);
	free(list);
}

/* Adds a layer of type below the canvas cursor, linked to it when that fits. */
static void
add_type(st_app *app, const st_layer_type *type)
{
	st_graph *g = st_app_graph(app);
	const st_layer *from = app->canvas.cursor;
	int x, y;
	if (from != NULL) {
		st_rect r;
		st_glyph_rect(from, &r);
		x = from->x;
		y = from->y + r.h + 3;
	} else {
		x = app->canvas.scroll_x + 2;
		y = app->canvas.scroll_y + 1;
	}
	char *cmd = st_xasprintf("add %s %d %d", type->desc->name, x, y);
	int rc = st_app_command(app, cmd);
	free(cmd);
	if (rc != 0)
		return;
	st_layer *added = g->layers[g->n_layers - 1];
	int from_outputs = from ? (from->outputs_known ? from->n_outputs : from->type ? from->type->desc->n_outputs : 0) : 0;
	if (from != NULL && from_outputs > 0 && type->desc->n_inputs > 0) {
		char *link = st_xasprintf("connect %s.0 %s.0", from->name, added->name);
		st_app_command(app, link);
		free(link);
		st_app_message(app, ST_SEVERITY_INFO, "added %s, linked from %s (u undoes the link, then the layer)",
		               added->name, from->name);
	} else {
		st_app_message(app, ST_SEVERITY_INFO, "added %s", added->name);
	}
	app->focus = ST_PANEL_CANVAS;
	st_app_focus_layer(app, added);
}

bool
st_palette_key(st_app *app, const st_key *k)
{
	int n;
	row *list = rows(app, &n);
	bool used = true;
	const row *here = app->palette.row < n ? &list[app->palette.row] : NULL;
	if (k->kind == ST_KEY_MOUSE_PRESS) {
		st_rect r = app->panel_rect[ST_PANEL_PALETTE];
		int offset = (app->palette.typing || app->palette.filter.text[0]) ? 2 : 1;
		int i = app->palette.top + k->y - (r.y + offset);
		if (i >= 0 && i < n)
			app->palette.row = i;
		free(list);
		return true;
	}
	if (k->kind == ST_KEY_WHEEL_UP || k->kind == ST_KEY_WHEEL_DOWN) {
		app->palette.row += k->kind == ST_KEY_WHEEL_UP ? -3 : 3;
		if (app->palette.row < 0)
			app->palette.row = 0;
		free(list);
		return true;
	}
	if (app->palette.typing) {
		if (strcmp(k->name, "<Esc>") == 0) {
			app->palette.typing = false;
			st_field_set(&app->palette.filter, "");
		} else if (strcmp(k->name, "<Enter>") == 0) {
			app->palette.typing = false;
			/* Enter adds the highlighted type, or the first one listed
			 * (under the heading the highlight is on). */
			const st_layer_type *t = here && here->type ? here->type : NULL;
			for (int i = app->palette.row; i < n && t == NULL; i++)
				t = list[i].type;
			if (t != NULL)
				add_type(app, t);
			else
				st_app_message(app, ST_SEVERITY_INFO, "no layer type to add: type part of its name");
			st_field_set(&app->palette.filter, "");
		} else if (strcmp(k->name, "<Up>") == 0 || strcmp(k->name, "<Down>") == 0) {
			app->palette.row += k->name[1] == 'U' ? -1 : 1;
		} else if (k->name[0] == '<' && st_keymap_lookup(&app->keymap, k->name, "palette.docs") >= 0) {
			/* The page of the highlighted type, or of the first one listed. */
			const st_layer_type *t = here && here->type ? here->type : NULL;
			for (int i = 0; i < n && t == NULL; i++)
				t = list[i].type;
			if (t != NULL) {
				char *cmd = st_xasprintf("docs %s", t->desc->name);
				st_app_command(app, cmd);
				free(cmd);
			}
		} else if (st_field_key(&app->palette.filter, k)) {
			app->palette.row = 0;
		} else {
			used = false;
		}
		if (app->palette.row < 0)
			app->palette.row = 0;
		free(list);
		return used;
	}
	int a = st_keymap_lookup(&app->keymap, k->name, "palette.");
	const char *name = a >= 0 ? app->keymap.actions[a].name + strlen("palette.") : "";
	if (strcmp(name, "up") == 0) {
		if (app->palette.row > 0)
			app->palette.row--;
	} else if (strcmp(name, "down") == 0) {
		if (app->palette.row + 1 < n)
			app->palette.row++;
	} else if (strcmp(name, "add") == 0) {
		if (here && here->type)
			add_type(app, here->type);
		else if (here && here->heading)
			toggle_collapsed(app, here->heading);
	} else if (strcmp(name, "group") == 0) {
		app->palette.group = (app->palette.group + 1) % 3;
		app->palette.row = app->palette.top = 0;
		st_palette_unfold(app);
		static const char *const groups[] = { "category", "name", "collection" };
		st_app_message(app, ST_SEVERITY_INFO, "palette by %s", groups[app->palette.group]);
	} else if (strcmp(name, "filter") == 0) {
		app->palette.typing = true;
	} else if (strcmp(name, "docs") == 0) {
		if (here && here->type) {
			char *cmd = st_xasprintf("docs %s", here->type->desc->name);
			st_app_command(app, cmd);
			free(cmd);
		}
	} else if (k->kind == ST_KEY_KEY && k->name[0] != '<' && k->name[1] == '\0' && isalpha((unsigned char)k->name[0])) {
		/* Typing a letter starts filtering with it. */
		app->palette.typing = true;
		st_field_set(&app->palette.filter, k->name);
		app->palette.row = 0;
	} else {
		used = false;
	}
	free(list);
	return used;
}
