/* The palette: every layer type and block the loaded plugins provide,
 * grouped by category, name or collection, filtered by typing; adds at the
 * cursor (a block as its chain of layers). */
#include "config.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tui-app.h"

/* One row: a group heading, a layer type or a block. */
typedef struct row {
	const char *heading; /* NULL for a type or a block */
	const st_layer_type *type;
	const st_block_type *block;
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

static const char *
block_group(const st_app *app, const st_block_type *b)
{
	if (app->palette.group == 2)
		return b->plugin->name;
	return b->desc->category ? b->desc->category : "Blocks";
}

/* What a row adds, by name. */
static const char *
row_name(const row *r)
{
	return r->block ? r->block->desc->name : r->type->desc->name;
}

/* The group a row (not a heading) belongs to. */
static const char *
row_group(const st_app *app, const row *r)
{
	return r->block ? block_group(app, r->block) : group_of(app, r->type);
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

static bool
block_matches(const st_block_type *b, const char *filter)
{
	const st_block_desc *d = b->desc;
	if (contains(d->name, filter) || contains(d->display_name, filter))
		return true;
	for (int k = 0; d->aliases && d->aliases[k]; k++) {
		if (contains(d->aliases[k], filter))
			return true;
	}
	return false;
}

/* How well a name answers the filter: 0 the name itself, 1 its start, 2
 * somewhere else (also for a match by display name or alias). */
static int
rank(const char *name, const char *filter)
{
	size_t n = strlen(filter);
	if (strncasecmp(name, filter, n) != 0)
		return 2;
	return name[n] == '\0' ? 0 : 1;
}

/* The filter qsort compares by (one at a time: the palette is single-threaded). */
static const char *sort_filter;

static int
compare_rows(const void *a, const void *b)
{
	const char *x = row_name(a), *y = row_name(b);
	int rx = rank(x, sort_filter), ry = rank(y, sort_filter);
	if (rx != ry)
		return rx - ry;
	return strcmp(x, y);
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
	int n_entries = r->n_types + r->n_blocks;
	/* Every type and block, in registration order: types, then blocks. */
	row *entries = st_xcalloc((size_t)(n_entries + 1), sizeof *entries);
	for (int i = 0; i < r->n_types; i++)
		entries[i].type = r->types[i];
	for (int i = 0; i < r->n_blocks; i++)
		entries[r->n_types + i].block = r->blocks[i];
	row *out = st_xcalloc((size_t)(2 * n_entries + 1), sizeof *out);
	int n = 0;
	const char *filter = app->palette.filter.text;
	if (filter[0] != '\0' || app->palette.group == 1) {
		/* Filtered or by name: one sorted list. */
		for (int i = 0; i < n_entries; i++) {
			const row *e = &entries[i];
			if (e->block ? block_matches(e->block, filter) : matches(e->type, filter))
				out[n++] = *e;
		}
		/* The closest names first, so that Enter adds what was typed. */
		sort_filter = filter;
		qsort(out, (size_t)n, sizeof *out, compare_rows);
		sort_filter = NULL;
		free(entries);
		*count = n;
		return out;
	}
	/* Grouped, in the order groups first appear. */
	for (int i = 0; i < n_entries; i++) {
		const char *g = row_group(app, &entries[i]);
		bool seen = false;
		for (int j = 0; j < n && !seen; j++)
			seen = out[j].heading && strcmp(out[j].heading, g) == 0;
		if (seen)
			continue;
		out[n++].heading = g;
		bool collapsed = is_collapsed(app, g);
		for (int j = 0; j < n_entries && !collapsed; j++) {
			if (strcmp(row_group(app, &entries[j]), g) == 0)
				out[n++] = entries[j];
		}
	}
	free(entries);
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
			st_screen_text_fit(s, r.x + 2, y, row_name(&list[i]), style, r.w - 2);
		}
	}
	if (n == 0)
		st_screen_text_fit(s, r.x, y, "no layer type matches", st_app_style(app, ST_ROLE_DIM), r.w);
	free(list);
}

/* Where a new layer goes: below the canvas cursor, or at the view's top. */
static void
place_below_cursor(st_app *app, int *x, int *y)
{
	const st_layer *from = app->canvas.cursor;
	if (from != NULL) {
		st_rect r;
		st_glyph_rect(from, &r);
		*x = from->x;
		*y = from->y + r.h + 3;
	} else {
		*x = app->canvas.scroll_x + 2;
		*y = app->canvas.scroll_y + 1;
	}
}

/* Links the cursor's output 0 to added's input 0 when both have one; true
 * when it did. */
static bool
link_from_cursor(st_app *app, const st_layer *from, st_layer *added)
{
	int from_outputs = from ? (from->outputs_known ? from->n_outputs : from->type ? from->type->desc->n_outputs : 0) : 0;
	if (from == NULL || from_outputs == 0 || added->type == NULL || added->type->desc->n_inputs == 0)
		return false;
	char *link = st_xasprintf("connect %s.0 %s.0", from->name, added->name);
	int rc = st_app_command(app, link);
	free(link);
	return rc == 0;
}

/* Adds a layer of type below the canvas cursor, linked to it when that fits. */
static void
add_type(st_app *app, const st_layer_type *type)
{
	st_graph *g = st_app_graph(app);
	const st_layer *from = app->canvas.cursor;
	int x, y;
	place_below_cursor(app, &x, &y);
	char *cmd = st_xasprintf("add %s %d %d", type->desc->name, x, y);
	int rc = st_app_command(app, cmd);
	free(cmd);
	if (rc != 0)
		return;
	st_layer *added = g->layers[g->n_layers - 1];
	if (link_from_cursor(app, from, added))
		st_app_message(app, ST_SEVERITY_INFO, "added %s, linked from %s (u undoes the link, then the layer)",
		               added->name, from->name);
	else
		st_app_message(app, ST_SEVERITY_INFO, "added %s", added->name);
	app->focus = ST_PANEL_CANVAS;
	st_app_focus_layer(app, added);
}

/* Adds a block's chain (every part, in its default order) below the canvas
 * cursor, linked from it when that fits; the hint says how to choose the
 * parts instead. */
static void
add_block(st_app *app, const st_block_type *block)
{
	st_graph *g = st_app_graph(app);
	const st_layer *from = app->canvas.cursor;
	int x, y, before = g->n_layers, parts = 0;
	place_below_cursor(app, &x, &y);
	while (block->desc->order[parts])
		parts++;
	/* A column of glyphs: beside whatever already lies in its way. */
	st_rect column = { x, y, 26, parts * 8 };
	for (bool moved = true; moved;) {
		moved = false;
		for (int i = 0; i < g->n_layers; i++) {
			st_rect r;
			st_glyph_rect(g->layers[i], &r);
			if (r.x < column.x + column.w && column.x < r.x + r.w && r.y < column.y + column.h &&
			    column.y < r.y + r.h) {
				column.x = r.x + r.w + 4;
				moved = true;
			}
		}
	}
	x = column.x;
	char *cmd = st_xasprintf("add-block %s %d %d", block->desc->name, x, y);
	int rc = st_app_command(app, cmd);
	free(cmd);
	if (rc != 0 || g->n_layers <= before)
		return;
	st_layer *first = g->layers[before];
	st_buf order;
	st_buf_init(&order);
	for (int k = 0; block->desc->order[k]; k++)
		st_buf_printf(&order, "%s%s", k ? "," : "", block->desc->order[k]);
	bool linked = link_from_cursor(app, from, first);
	st_app_message(app, ST_SEVERITY_INFO, "added %s%s%s; parts and order: :add-block %s NAME order=%s",
	               block->desc->name, linked ? " from " : "", linked ? from->name : "", block->desc->name,
	               order.data);
	st_buf_free(&order);
	app->focus = ST_PANEL_CANVAS;
	st_app_focus_layer(app, first);
}

/* Adds what a row stands for. */
static void
add_row(st_app *app, const row *r)
{
	if (r->block != NULL)
		add_block(app, r->block);
	else
		add_type(app, r->type);
}

/* The documentation of a row: a type's page, or a block's description. */
static void
show_docs(st_app *app, const row *r)
{
	if (r->block == NULL) {
		char *cmd = st_xasprintf("docs %s", r->type->desc->name);
		st_app_command(app, cmd);
		free(cmd);
		return;
	}
	app->overlay = ST_OVERLAY_DOCS;
	app->docs_top = 0;
	free(app->docs_type);
	app->docs_type = st_xstrdup(r->block->desc->name);
	free(app->docs_text);
	app->docs_text = st_block_describe(app->registry, r->block);
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
			/* Enter adds the highlighted type or block, or the first one
			 * listed (under the heading the highlight is on). */
			const row *t = here && !here->heading ? here : NULL;
			for (int i = app->palette.row; i < n && t == NULL; i++)
				t = list[i].heading ? NULL : &list[i];
			if (t != NULL)
				add_row(app, t);
			else
				st_app_message(app, ST_SEVERITY_INFO, "no layer type or block to add: type part of its name");
			st_field_set(&app->palette.filter, "");
		} else if (strcmp(k->name, "<Up>") == 0 || strcmp(k->name, "<Down>") == 0) {
			app->palette.row += k->name[1] == 'U' ? -1 : 1;
		} else if (k->name[0] == '<' && st_keymap_lookup(&app->keymap, k->name, "palette.docs") >= 0) {
			/* The page of the highlighted type, or of the first one listed. */
			const row *t = here && !here->heading ? here : NULL;
			for (int i = 0; i < n && t == NULL; i++)
				t = list[i].heading ? NULL : &list[i];
			if (t != NULL)
				show_docs(app, t);
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
		if (here && !here->heading)
			add_row(app, here);
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
		if (here && !here->heading)
			show_docs(app, here);
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
