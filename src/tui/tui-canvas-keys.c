/* Editing on the canvas: moving the cursor and glyphs, connecting terminals,
 * deleting, renaming, duplicating, selecting, and the mouse. Every change
 * is a ':' command, so it is undoable and journaled like any other. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "tui-app.h"

static bool
is_selected(const st_app *app, const st_layer *l)
{
	for (int i = 0; i < app->canvas.n_selected; i++) {
		if (app->canvas.selected[i] == l)
			return true;
	}
	return false;
}

static void
toggle_selected(st_app *app, const st_layer *l)
{
	st_canvas *c = &app->canvas;
	for (int i = 0; i < c->n_selected; i++) {
		if (c->selected[i] == l) {
			memmove(&c->selected[i], &c->selected[i + 1], sizeof *c->selected * (size_t)(c->n_selected - i - 1));
			c->n_selected--;
			return;
		}
	}
	c->selected = st_xreallocarray(c->selected, (size_t)c->n_selected + 1, sizeof *c->selected);
	c->selected[c->n_selected++] = l;
}

/* The layers an action applies to: the selection, or the cursor alone. */
static int
targets(const st_app *app, const st_layer ***out)
{
	static const st_layer *one[1];
	if (app->canvas.n_selected > 0) {
		*out = app->canvas.selected;
		return app->canvas.n_selected;
	}
	if (app->canvas.cursor == NULL)
		return 0;
	one[0] = app->canvas.cursor;
	*out = one;
	return 1;
}

static void
move_targets(st_app *app, int dx, int dy)
{
	const st_layer **t;
	int n = targets(app, &t);
	if (n == 0)
		return;
	char **argv = st_xcalloc((size_t)(1 + 3 * n), sizeof *argv);
	argv[0] = st_xstrdup("move");
	for (int i = 0; i < n; i++) {
		argv[1 + 3 * i] = st_xstrdup(t[i]->name);
		argv[2 + 3 * i] = st_xasprintf("%d", t[i]->x + dx);
		argv[3 + 3 * i] = st_xasprintf("%d", t[i]->y + dy);
	}
	st_app_exec_words(app, argv, 1 + 3 * n);
	if (app->canvas.cursor) {
		st_rect r = app->panel_rect[ST_PANEL_CANVAS];
		st_canvas_reveal(&app->canvas, app->canvas.cursor, r.w - 2, r.h - 2);
	}
}

static void
delete_targets(st_app *app)
{
	const st_layer **t;
	int n = targets(app, &t);
	if (n == 0)
		return;
	char **argv = st_xcalloc((size_t)(1 + n), sizeof *argv);
	argv[0] = st_xstrdup("delete");
	for (int i = 0; i < n; i++)
		argv[1 + i] = st_xstrdup(t[i]->name);
	/* The cursor moves to a neighbour that stays. */
	st_graph *g = st_app_graph(app);
	const st_layer *next = NULL;
	for (int i = 0; i < g->n_layers && next == NULL; i++) {
		if (!is_selected(app, g->layers[i]) && g->layers[i] != app->canvas.cursor)
			next = g->layers[i];
	}
	if (st_app_exec_words(app, argv, 1 + n) == 0) {
		st_app_focus_layer(app, next);
		st_app_message(app, ST_SEVERITY_INFO, "deleted %d layer%s (u undoes)", n, n == 1 ? "" : "s");
	}
}

static void
rename_done(st_app *app, const char *text, void *arg)
{
	(void)arg;
	const st_layer *l = app->canvas.cursor;
	if (l == NULL || text[0] == '\0' || strcmp(text, l->name) == 0)
		return;
	char **argv = st_xcalloc(3, sizeof *argv);
	argv[0] = st_xstrdup("rename");
	argv[1] = st_xstrdup(l->name);
	argv[2] = st_xstrdup(text);
	char *old = st_xstrdup(l->name);
	if (st_app_exec_words(app, argv, 3) == 0)
		st_app_message(app, ST_SEVERITY_INFO, "renamed %s to %s", old, text);
	free(old);
}

/* ---- connecting ---- */

static int
output_count(const st_layer *l)
{
	if (l->outputs_known)
		return l->n_outputs;
	return l->type ? l->type->desc->n_outputs : 0;
}

static void
connect_now(st_app *app, const st_layer *dst, int input)
{
	st_canvas *c = &app->canvas;
	char **argv = st_xcalloc(3, sizeof *argv);
	argv[0] = st_xstrdup("connect");
	argv[1] = st_xasprintf("%s.%d", c->connect_from->name, c->connect_output);
	argv[2] = input >= 0 ? st_xasprintf("%s.%d", dst->name, input) : st_xstrdup(dst->name);
	if (st_app_exec_words(app, argv, 3) == 0)
		st_app_message(app, ST_SEVERITY_INFO, "linked %s.%d to %s", c->connect_from->name,
		               c->connect_output, dst->name);
	c->connect_from = NULL;
	c->connect_output = -1;
	c->terminal = -1;
}

typedef struct replace_arg {
	const st_layer *dst;
	int input;
} replace_arg;

static void
replace_answer(st_app *app, char choice, void *arg)
{
	replace_arg *r = arg;
	if (choice == 'y')
		connect_now(app, r->dst, r->input);
	else {
		app->canvas.connect_from = NULL;
		app->canvas.connect_output = -1;
		st_app_message(app, ST_SEVERITY_INFO, "not linked");
	}
	free(r);
}

/* Links the chosen output to dst: the input under the terminal cursor, or
 * the first free one; a taken input is replaced only after asking. */
static void
finish_connect(st_app *app, const st_layer *dst, int input)
{
	if (dst == app->canvas.connect_from) {
		st_app_message(app, ST_SEVERITY_ERROR, "a layer cannot feed itself");
		return;
	}
	if (input < 0) {
		/* No input chosen: the first free one; when every one is taken,
		 * the only one (to replace, after asking), or the user picks. */
		int n = st_layer_terminal_count(dst);
		for (int i = 0; i < n && input < 0; i++) {
			if (i >= dst->n_inputs || dst->inputs[i].layer == NULL)
				input = i;
		}
		if (input < 0 && n == 1) {
			input = 0;
		} else if (input < 0) {
			st_app_message(app, ST_SEVERITY_ERROR,
			               "every input of %s is linked: t picks the one to replace, then Enter", dst->name);
			return;
		}
	}
	if (input >= 0 && input < dst->n_inputs && dst->inputs[input].layer != NULL) {
		char q[256];
		snprintf(q, sizeof q, "Input %d of %s is linked to %s.%d. Replace that link?", input, dst->name,
		         dst->inputs[input].layer->name, dst->inputs[input].output);
		replace_arg *r = st_xmalloc(sizeof *r);
		r->dst = dst;
		r->input = input;
		static const char *const labels[] = { "replace", "keep it" };
		st_app_confirm(app, q, "yn", labels, replace_answer, r);
		return;
	}
	connect_now(app, dst, input);
}

/* Whether a glyph of rect r would touch any layer's glyph (one cell of
 * air around each). */
static bool
spot_taken(const st_graph *g, st_rect r)
{
	for (int i = 0; i < g->n_layers; i++) {
		st_rect o;
		st_glyph_rect(g->layers[i], &o);
		if (r.x - 1 < o.x + o.w && o.x - 1 < r.x + r.w && r.y - 1 < o.y + o.h && o.y - 1 < r.y + r.h)
			return true;
	}
	return false;
}

/* Where a copy of l can go: to its right, level with it, past any glyphs
 * already there. */
static void
free_spot_beside(const st_graph *g, const st_layer *l, int *x, int *y)
{
	st_rect r;
	st_glyph_rect(l, &r);
	r.x += r.w + 4;
	for (int tries = 0; tries < 1000 && spot_taken(g, r); tries++)
		r.x += 4;
	*x = r.x;
	*y = r.y;
}

/* An input or output layer linked to the first free terminal of the cursor. */
static void
add_terminal_layer(st_app *app, bool input)
{
	const st_layer *l = app->canvas.cursor;
	if (l == NULL)
		return;
	int terminal = -1;
	if (input) {
		for (int i = 0; i < st_layer_terminal_count(l) && terminal < 0; i++) {
			if (i >= l->n_inputs || l->inputs[i].layer == NULL)
				terminal = i;
		}
	} else {
		terminal = output_count(l) > 0 ? 0 : -1;
	}
	if (terminal < 0) {
		st_app_message(app, ST_SEVERITY_ERROR, "%s has no free %s terminal", l->name, input ? "input" : "output");
		return;
	}
	st_graph *g = st_app_graph(app);
	const st_layer_type *type = st_registry_find_layer(g->registry, input ? "input" : "output");
	if (type == NULL) {
		st_app_message(app, ST_SEVERITY_ERROR, "no plugin provides %s layers", input ? "input" : "output");
		return;
	}
	char *name = st_graph_generate_name(g, type, type->desc->name);
	st_rect r;
	st_glyph_rect(l, &r);
	char *cmd = st_xasprintf("add %s %s %d %d", type->desc->name, name, l->x, input ? l->y - 8 : l->y + r.h + 3);
	if (st_app_command(app, cmd) == 0) {
		char *link = input ? st_xasprintf("connect %s %s.%d", name, l->name, terminal)
		                   : st_xasprintf("connect %s.%d %s", l->name, terminal, name);
		if (st_app_command(app, link) == 0)
			st_app_message(app, ST_SEVERITY_INFO, "added %s, linked %s %s (u undoes the link, then the layer)",
			               name, input ? "to" : "from", l->name);
		free(link);
		st_app_focus_layer(app, g->layers[g->n_layers - 1]);
	}
	free(cmd);
	free(name);
}

/* ---- the mouse ---- */

static bool
mouse(st_app *app, const st_key *k)
{
	st_graph *g = st_app_graph(app);
	st_canvas *c = &app->canvas;
	st_rect area = app->panel_rect[ST_PANEL_CANVAS];
	area = (st_rect){ area.x + 1, area.y + 1, area.w - 2, area.h - 2 };
	if (k->kind == ST_KEY_WHEEL_UP || k->kind == ST_KEY_WHEEL_DOWN) {
		c->scroll_y += k->kind == ST_KEY_WHEEL_UP ? -3 : 3;
		return true;
	}
	st_canvas_hit hit = { NULL, -1, -1 };
	bool on = st_canvas_hit_test(g, c, area, k->x, k->y, &hit);
	if (k->kind == ST_KEY_MOUSE_PRESS) {
		app->dragging = true;
		app->drag_x = k->x;
		app->drag_y = k->y;
		app->drag_hit = hit;
		if (on) {
			st_app_focus_layer(app, hit.layer);
			if (hit.output >= 0) {
				c->connect_from = hit.layer;
				c->connect_output = hit.output;
			}
		}
		return true;
	}
	if (k->kind == ST_KEY_MOUSE_RELEASE && app->dragging) {
		app->dragging = false;
		if (c->connect_output >= 0 && app->drag_hit.output >= 0) {
			/* A drag from an output ends on a glyph or one of its inputs. */
			if (on && hit.layer != c->connect_from)
				finish_connect(app, hit.layer, hit.input);
			else {
				c->connect_from = NULL;
				c->connect_output = -1;
			}
		} else if (app->drag_hit.layer != NULL && (k->x != app->drag_x || k->y != app->drag_y)) {
			/* A glyph dragged by its body moves by the distance dragged. */
			move_targets(app, k->x - app->drag_x, k->y - app->drag_y);
		}
		return true;
	}
	return k->kind == ST_KEY_MOUSE_DRAG;
}

/* ---- keys ---- */

bool
st_canvas_key(st_app *app, const st_key *k)
{
	if (k->kind != ST_KEY_KEY)
		return mouse(app, k);
	st_graph *g = st_app_graph(app);
	st_canvas *c = &app->canvas;
	if (c->cursor == NULL && g->n_layers > 0)
		st_app_focus_layer(app, g->layers[0]);

	/* While connecting, Tab picks the source output and Enter links. */
	if (c->connect_output >= 0) {
		if (strcmp(k->name, "<Tab>") == 0) {
			int n = output_count(c->connect_from);
			c->connect_output = n > 0 ? (c->connect_output + 1) % n : 0;
			st_app_message(app, ST_SEVERITY_INFO, "connect from %s.%d", c->connect_from->name,
			               c->connect_output);
			return true;
		}
		if (strcmp(k->name, "<Enter>") == 0 || strcmp(k->name, "c") == 0) {
			if (c->cursor != NULL)
				finish_connect(app, c->cursor, c->terminal);
			return true;
		}
	}

	int a = st_keymap_lookup(&app->keymap, k->name, "canvas.");
	if (a < 0)
		return false;
	const char *n = app->keymap.actions[a].name + strlen("canvas.");
	static const struct {
		const char *name;
		int dx, dy;
	} steps[] = { { "left", -1, 0 }, { "right", 1, 0 }, { "up", 0, -1 }, { "down", 0, 1 } };
	for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
		if (strcmp(n, steps[i].name) == 0) {
			const st_layer *next = c->cursor ? st_canvas_neighbour(g, c->cursor, steps[i].dx, steps[i].dy) : NULL;
			if (next != NULL) {
				/* The selection follows the cursor until Space starts
				 * picking several (Esc ends that). */
				if (!app->multi_select && c->connect_output < 0)
					st_app_focus_layer(app, next);
				else {
					c->cursor = next;
					st_rect r = app->panel_rect[ST_PANEL_CANVAS];
					st_canvas_reveal(c, next, r.w - 2, r.h - 2);
				}
				c->terminal = -1;
			}
			return true;
		}
	}
	if (strncmp(n, "move_", 5) == 0) {
		const char *dir = n + 5;
		move_targets(app, strcmp(dir, "left") == 0 ? -2 : strcmp(dir, "right") == 0 ? 2 : 0,
		             strcmp(dir, "up") == 0 ? -1 : strcmp(dir, "down") == 0 ? 1 : 0);
	} else if (strncmp(n, "pan_", 4) == 0) {
		const char *dir = n + 4;
		c->scroll_x += strcmp(dir, "left") == 0 ? -8 : strcmp(dir, "right") == 0 ? 8 : 0;
		c->scroll_y += strcmp(dir, "up") == 0 ? -4 : strcmp(dir, "down") == 0 ? 4 : 0;
	} else if (strcmp(n, "add") == 0) {
		app->focus = ST_PANEL_PALETTE;
		app->palette.typing = true;
		st_field_set(&app->palette.filter, "");
		st_app_message(app, ST_SEVERITY_INFO, "type to filter, Enter adds the layer type");
	} else if (strcmp(n, "connect") == 0) {
		if (c->cursor == NULL || output_count(c->cursor) == 0) {
			st_app_message(app, ST_SEVERITY_ERROR, "choose a layer with an output first");
			return true;
		}
		c->connect_from = c->cursor;
		c->connect_output = 0;
		c->terminal = -1;
		st_app_message(app, ST_SEVERITY_INFO,
		               "connect from %s.0: go to the target, t picks its input, Enter links, Tab another "
		               "output, Esc cancels",
		               c->cursor->name);
	} else if (strcmp(n, "disconnect") == 0 && c->cursor != NULL) {
		char *cmd = c->terminal >= 0 && c->terminal < c->cursor->n_inputs
		                ? st_xasprintf("disconnect %s.%d", c->cursor->name, c->terminal)
		                : st_xasprintf("disconnect %s", c->cursor->name);
		st_app_command(app, cmd);
		free(cmd);
	} else if (strcmp(n, "delete") == 0) {
		delete_targets(app);
	} else if (strcmp(n, "rename") == 0 && c->cursor != NULL) {
		st_app_prompt(app, "Rename to:", c->cursor->name, rename_done, NULL);
	} else if (strcmp(n, "duplicate") == 0 && c->cursor != NULL) {
		int x, y;
		free_spot_beside(g, c->cursor, &x, &y);
		char *cmd = st_xasprintf("duplicate %s %d %d", c->cursor->name, x, y);
		if (st_app_command(app, cmd) == 0)
			st_app_focus_layer(app, g->layers[g->n_layers - 1]);
		free(cmd);
	} else if (strcmp(n, "minimize") == 0 && c->cursor != NULL) {
		char *cmd = st_xasprintf("minimize %s", c->cursor->name);
		st_app_command(app, cmd);
		free(cmd);
	} else if (strcmp(n, "select") == 0 && c->cursor != NULL) {
		/* The first Space keeps the layer under the cursor selected and
		 * starts picking; later ones add or take out the cursor's layer. */
		bool in = false;
		for (int i = 0; i < c->n_selected; i++)
			in = in || c->selected[i] == c->cursor;
		if (!app->multi_select) {
			app->multi_select = true;
			if (!in)
				toggle_selected(app, c->cursor);
		} else {
			toggle_selected(app, c->cursor);
		}
		st_app_message(app, ST_SEVERITY_INFO,
		               "%d selected: move and Space to pick more, Esc to clear; edits apply to all",
		               c->n_selected);
	} else if (strcmp(n, "select_none") == 0) {
		app->multi_select = false;
		c->connect_from = NULL;
		c->connect_output = -1;
		c->terminal = -1;
		free(c->selected);
		c->selected = NULL;
		c->n_selected = 0;
	} else if (strcmp(n, "edit") == 0) {
		app->focus = ST_PANEL_PARAMS;
	} else if (strcmp(n, "terminal") == 0 && c->cursor != NULL) {
		int n_in = st_layer_terminal_count(c->cursor);
		c->terminal = c->terminal + 1 < n_in ? c->terminal + 1 : -1;
		if (c->terminal >= 0)
			st_app_message(app, ST_SEVERITY_INFO, "input %d of %s", c->terminal, c->cursor->name);
	} else if (strcmp(n, "input_layer") == 0) {
		add_terminal_layer(app, true);
	} else if (strcmp(n, "output_layer") == 0) {
		add_terminal_layer(app, false);
	} else if (strcmp(n, "expand") == 0) {
		st_app_expand(app, c->cursor);
	} else {
		return false;
	}
	return true;
}
