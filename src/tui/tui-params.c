/* The parameter form: the current layer's parameters (or the selection's
 * common ones, or the network's), its activation and coefficients, edited
 * with type-aware fields; every change is a ':' command. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "tui-app.h"

typedef enum row_kind {
	ROW_PARAM,      /* a layer parameter: index */
	ROW_ACTIVATION, /* the activation's type */
	ROW_COEF,       /* an activation coefficient: index */
	ROW_NETWORK     /* a network setting: index */
} row_kind;

typedef struct row {
	row_kind kind;
	int index;
} row;

/* The layers being edited: the selection when it holds several layers of
 * one type, else the cursor. */
static int
edited(st_app *app, st_layer ***out)
{
	static st_layer *one[1];
	st_canvas *c = &app->canvas;
	if (c->n_selected > 1) {
		const st_layer_type *t = c->selected[0]->type;
		bool same = t != NULL;
		for (int i = 1; same && i < c->n_selected; i++)
			same = c->selected[i]->type == t;
		if (same) {
			*out = (st_layer **)c->selected;
			return c->n_selected;
		}
	}
	if (c->cursor == NULL)
		return 0;
	one[0] = (st_layer *)c->cursor;
	*out = one;
	return 1;
}

static int
build_rows(st_app *app, row *out, int max)
{
	st_layer **ls;
	int n = 0, count = edited(app, &ls);
	if (count == 0) {
		for (int i = 0; i < ST_NET_COUNT && n < max; i++)
			out[n++] = (row){ ROW_NETWORK, i };
		return n;
	}
	const st_layer *l = ls[0];
	if (l->type == NULL)
		return 0;
	for (int i = 0; i < l->type->desc->n_params && n < max; i++)
		out[n++] = (row){ ROW_PARAM, i };
	if ((l->type->desc->flags & ST_LAYER_ACTIVATION) && n < max) {
		out[n++] = (row){ ROW_ACTIVATION, 0 };
		if (count == 1 && l->act.type != NULL) {
			for (int i = 0; i < l->act.type->desc->n_params && n < max; i++)
				out[n++] = (row){ ROW_COEF, i };
		}
	}
	return n;
}

/* A row's label, description and current value text. */
static void
describe(st_app *app, const row *r, const char **label, const st_param_desc **desc, st_buf *value,
         bool *is_default)
{
	st_layer **ls;
	edited(app, &ls);
	*desc = NULL;
	*is_default = false;
	switch (r->kind) {
	case ROW_NETWORK: {
		st_graph *g = st_app_graph(app);
		*desc = &st_network_params[r->index];
		*label = (*desc)->name;
		st_value_to_text(*desc, &g->network.values[r->index], value);
		*is_default = !g->network.set[r->index];
		break;
	}
	case ROW_PARAM: {
		const st_layer *l = ls[0];
		*desc = &l->type->desc->params[r->index];
		*label = (*desc)->name;
		st_value_to_text(*desc, &l->params.values[r->index], value);
		*is_default = !l->params.set[r->index];
		/* Several layers: show when they disagree. */
		int count = edited(app, &ls);
		for (int i = 1; i < count; i++) {
			if (!st_value_equal(&ls[i]->params.values[r->index], &l->params.values[r->index])) {
				st_buf_reset(value);
				st_buf_puts(value, "(differs)");
				break;
			}
		}
		break;
	}
	case ROW_ACTIVATION:
		*label = "activation";
		st_buf_puts(value, ls[0]->act.type_name ? ls[0]->act.type_name : "none");
		break;
	case ROW_COEF: {
		const st_layer *l = ls[0];
		*desc = &l->act.type->desc->params[r->index];
		*label = (*desc)->name;
		st_value_to_text(*desc, &l->act.coef.values[r->index], value);
		*is_default = !l->act.coef.set[r->index];
		break;
	}
	}
}

void
st_params_draw(st_app *app, st_screen *s, st_rect r, bool focused)
{
	st_layer **ls;
	int count = edited(app, &ls);
	int y = r.y;
	const st_style *text = st_app_style(app, ST_ROLE_TEXT), *dim = st_app_style(app, ST_ROLE_DIM);
	if (count == 0) {
		st_screen_text_fit(s, r.x, y++, "network", st_app_style(app, ST_ROLE_TITLE), r.w);
	} else if (count == 1) {
		char head[256];
		snprintf(head, sizeof head, "%s %s %s", ls[0]->name, st_glyph_text(s, ST_G_DOT), ls[0]->type_name);
		st_screen_text_fit(s, r.x, y++, head, st_app_style(app, ST_ROLE_TITLE), r.w);
		if (ls[0]->type == NULL) {
			st_screen_text_fit(s, r.x, y, "unknown type: no plugin provides it", st_app_style(app, ST_ROLE_ERROR),
			                   r.w);
			return;
		}
	} else {
		char head[128];
		snprintf(head, sizeof head, "%d %s layers", count, ls[0]->type_name);
		st_screen_text_fit(s, r.x, y++, head, st_app_style(app, ST_ROLE_TITLE), r.w);
	}
	row rows[128];
	int n = build_rows(app, rows, 128);
	if (app->params.row >= n)
		app->params.row = n > 0 ? n - 1 : 0;
	int label_w = r.w / 2 > 16 ? 16 : r.w / 2;
	int room = r.y + r.h - y - 3; /* keep lines for the layer's shape and size */
	if (room < 1)
		room = r.y + r.h - y;
	/* An XWN layer's figures go above those lines while three rows of the
	 * form still show. */
	int figures = count == 1 ? st_params_xwn_height(ls[0]) : 0;
	if (room - figures < 3)
		figures = 0;
	room -= figures;
	if (app->params.row < app->params.top)
		app->params.top = app->params.row;
	if (app->params.row >= app->params.top + room)
		app->params.top = app->params.row - room + 1;
	for (int i = app->params.top; i < n && y < r.y + r.h && i - app->params.top < room; i++, y++) {
		const char *label;
		const st_param_desc *desc;
		st_buf value;
		st_buf_init(&value);
		bool is_default;
		describe(app, &rows[i], &label, &desc, &value, &is_default);
		bool here = i == app->params.row && focused;
		const st_style *st = here ? st_app_style(app, ST_ROLE_SELECTED) : text;
		st_screen_fill(s, (st_rect){ r.x, y, r.w, 1 }, " ", st);
		int indent = rows[i].kind == ROW_COEF ? 2 : 0;
		st_screen_text_fit(s, r.x + indent, y, label, st, label_w - indent);
		int vx = r.x + label_w + 1, vw = r.w - label_w - 1;
		if (here && app->params.editing) {
			st_field_draw(&app->params.edit, s, vx, y, vw, st_app_style(app, ST_ROLE_INPUT),
			              st_app_style(app, ST_ROLE_CURSOR), true);
		} else if (desc && desc->kind == ST_PARAM_BOOL && value.data) {
			st_screen_glyph(s, vx, y, strcmp(value.data, "true") == 0 ? ST_G_CHECK_ON : ST_G_CHECK_OFF, st);
		} else {
			st_screen_text_fit(s, vx, y, value.data ? value.data : "", is_default && !here ? dim : st, vw);
		}
		st_buf_free(&value);
	}
	if (figures > 0) {
		int fy = r.y + r.h - 2 - figures;
		st_params_xwn_draw(app, s, (st_rect){ r.x, fy, r.w, figures }, ls[0]);
		y = fy + figures;
	}
	/* Below the form: what the type checker says of the layer. */
	if (count == 1 && y < r.y + r.h) {
		y = r.y + r.h - 2 > y ? r.y + r.h - 2 : y;
		const st_layer *l = ls[0];
		st_buf b;
		st_buf_init(&b);
		if (l->outputs_known) {
			st_buf_puts(&b, "output ");
			for (int i = 0; i < l->n_outputs; i++) {
				char shape[128];
				st_shape_format(&l->outputs[i], shape, sizeof shape);
				st_buf_printf(&b, "%s%s", i ? ", " : "", shape);
			}
		} else {
			st_buf_puts(&b, "output unknown");
		}
		st_screen_text_fit(s, r.x, y++, b.data, dim, r.w);
		st_buf_reset(&b);
		if (y < r.y + r.h) {
			double f = (double)l->flops;
			const char *unit = f >= 1e9 ? "G" : f >= 1e6 ? "M" : f >= 1e3 ? "k" : "";
			double scale = f >= 1e9 ? 1e9 : f >= 1e6 ? 1e6 : f >= 1e3 ? 1e3 : 1;
			st_buf_printf(&b, "params %lld %s %.3g %sFLOP", (long long)st_layer_param_count(l),
			              st_glyph_text(s, ST_G_DOT), f / scale, unit);
			st_screen_text_fit(s, r.x, y, b.data, dim, r.w);
		}
		st_buf_free(&b);
	}
}

/* Runs the command that sets row r to text on every edited layer. */
static int
apply(st_app *app, const row *r, const char *text)
{
	st_layer **ls;
	int count = edited(app, &ls);
	int rc = 0;
	if (r->kind == ROW_NETWORK) {
		char *argv[] = { (char *)"network", (char *)st_network_params[r->index].name, (char *)text };
		return st_app_exec(app, 3, argv);
	}
	if ((r->kind == ROW_PARAM || r->kind == ROW_ACTIVATION) && count > 0) {
		/* Every selected layer in one "set a,b,c ..." or "activation a,b,c
		 * ...": one edit, one undo. */
		st_buf names;
		st_buf_init(&names);
		bool plain = true;
		for (int i = 0; i < count; i++) {
			plain = plain && strchr(ls[i]->name, ',') == NULL;
			st_buf_printf(&names, "%s%s", i ? "," : "", ls[i]->name);
		}
		if (plain && r->kind == ROW_PARAM) {
			char *argv[] = { (char *)"set", names.data, (char *)ls[0]->type->desc->params[r->index].name,
				         (char *)text };
			rc = st_app_exec(app, 4, argv);
		} else if (plain) {
			char *argv[] = { (char *)"activation", names.data, (char *)(text[0] ? text : "none") };
			rc = st_app_exec(app, 3, argv);
		}
		st_buf_free(&names);
		if (plain)
			return rc;
	}
	for (int i = 0; i < count && rc == 0; i++) {
		st_layer *l = ls[i];
		if (r->kind == ROW_PARAM) {
			char *argv[] = { (char *)"set", l->name, (char *)l->type->desc->params[r->index].name, (char *)text };
			rc = st_app_exec(app, 4, argv);
		} else if (r->kind == ROW_ACTIVATION) {
			char *argv[] = { (char *)"activation", l->name, (char *)(text[0] ? text : "none") };
			rc = st_app_exec(app, 3, argv);
		} else if (r->kind == ROW_COEF && l->act.type != NULL) {
			char *coef = st_xasprintf("%s=%s", l->act.type->desc->params[r->index].name, text);
			char *argv[] = { (char *)"activation", l->name, (char *)l->act.type->desc->name, coef };
			rc = st_app_exec(app, 4, argv);
			free(coef);
		}
	}
	return rc;
}

/* The answer of the list opened by open_picker: applied to the row still
 * highlighted (the list is modal, so it is the same row). */
static void
picked(st_app *app, const char *text, void *arg)
{
	(void)arg;
	row rows[128];
	int n = build_rows(app, rows, 128);
	if (app->params.row < n)
		apply(app, &rows[app->params.row], text);
}

/* Enumerations, booleans and the activation are chosen from a list rather
 * than typed. Returns whether a list was opened. */
static bool
open_picker(st_app *app, const row *r, const char *label, const st_param_desc *desc, const char *current)
{
	const char **items = NULL;
	int n = 0, at = -1;
	if (r->kind == ROW_ACTIVATION) {
		const st_registry *reg = app->registry;
		items = st_xcalloc((size_t)reg->n_activations + 1, sizeof *items);
		items[n++] = "none";
		for (int i = 0; i < reg->n_activations; i++)
			items[n++] = reg->activations[i]->desc->name;
	} else if (desc != NULL && desc->kind == ST_PARAM_ENUM) {
		while (desc->enum_values[n])
			n++;
		items = st_xcalloc((size_t)n + 1, sizeof *items);
		for (int i = 0; i < n; i++)
			items[i] = desc->enum_values[i];
	} else if (desc != NULL && desc->kind == ST_PARAM_BOOL) {
		static const char *const both[] = { "false", "true" };
		items = st_xcalloc(2, sizeof *items);
		items[0] = both[0];
		items[1] = both[1];
		n = 2;
	} else {
		return false;
	}
	for (int i = 0; i < n && current != NULL; i++) {
		if (strcmp(items[i], current) == 0)
			at = i;
	}
	char *title = st_xasprintf("%s (Enter chooses, Esc keeps it)", label);
	st_app_pick(app, title, items, n, at, picked, NULL);
	free(title);
	free(items);
	return true;
}

/* The next value of an enumeration (or the activation list), or a flipped boolean. */
static void
step_value(st_app *app, const row *r)
{
	const char *label;
	const st_param_desc *desc;
	st_buf value;
	st_buf_init(&value);
	bool is_default;
	describe(app, r, &label, &desc, &value, &is_default);
	if (r->kind == ROW_ACTIVATION) {
		const st_registry *reg = app->registry;
		int at = -1;
		for (int i = 0; i < reg->n_activations; i++) {
			if (value.data && strcmp(reg->activations[i]->desc->name, value.data) == 0)
				at = i;
		}
		const char *next = at + 1 < reg->n_activations ? reg->activations[at + 1]->desc->name : "none";
		apply(app, r, next);
	} else if (desc && desc->kind == ST_PARAM_BOOL) {
		apply(app, r, value.data && strcmp(value.data, "true") == 0 ? "false" : "true");
	} else if (desc && desc->kind == ST_PARAM_ENUM) {
		int at = 0;
		for (int i = 0; desc->enum_values[i]; i++) {
			if (value.data && strcmp(desc->enum_values[i], value.data) == 0)
				at = i;
		}
		const char *next = desc->enum_values[at + 1] ? desc->enum_values[at + 1] : desc->enum_values[0];
		apply(app, r, next);
	} else {
		st_app_message(app, ST_SEVERITY_INFO, "Enter edits %s", label);
	}
	st_buf_free(&value);
}

bool
st_params_key(st_app *app, const st_key *k)
{
	row rows[128];
	int n = build_rows(app, rows, 128);
	if (n == 0)
		return false;
	if (app->params.row >= n)
		app->params.row = n - 1;
	row *here = &rows[app->params.row];
	if (k->kind == ST_KEY_MOUSE_PRESS) {
		app->params.editing = false; /* a click elsewhere leaves the value as it was */
		int i = app->params.top + k->y - (app->panel_rect[ST_PANEL_PARAMS].y + 2);
		if (i >= 0 && i < n)
			app->params.row = i;
		return true;
	}
	if (app->params.editing) {
		if (strcmp(k->name, "<Esc>") == 0) {
			app->params.editing = false;
		} else if (strcmp(k->name, "<Enter>") == 0) {
			/* A refused value stays in the field, with the reason below. */
			if (apply(app, here, app->params.edit.text) == 0)
				app->params.editing = false;
		} else {
			return st_field_key(&app->params.edit, k);
		}
		return true;
	}
	int a = st_keymap_lookup(&app->keymap, k->name, "params.");
	const char *name = a >= 0 ? app->keymap.actions[a].name + strlen("params.") : "";
	if (strcmp(name, "up") == 0) {
		if (app->params.row > 0)
			app->params.row--;
	} else if (strcmp(name, "down") == 0) {
		if (app->params.row + 1 < n)
			app->params.row++;
	} else if (strcmp(name, "edit") == 0) {
		const char *label;
		const st_param_desc *desc;
		st_buf value;
		st_buf_init(&value);
		bool is_default;
		describe(app, here, &label, &desc, &value, &is_default);
		if (open_picker(app, here, label, desc, value.data)) {
			st_buf_free(&value);
			return true;
		}
		if (value.len >= sizeof app->params.edit.text) {
			st_app_message(app, ST_SEVERITY_ERROR, "%s is too long to edit here: use the command line (:)",
			               label);
			st_buf_free(&value);
			return true;
		}
		st_field_set(&app->params.edit, value.data && strcmp(value.data, "(differs)") != 0 ? value.data : "");
		st_buf_free(&value);
		app->params.editing = true;
		if (desc)
			st_app_message(app, ST_SEVERITY_INFO, "%s: %s", label, desc->doc);
	} else if (strcmp(name, "toggle") == 0) {
		step_value(app, here);
	} else if (strcmp(name, "reset") == 0) {
		st_layer **ls;
		int count = edited(app, &ls);
		for (int i = 0; i < count && here->kind == ROW_PARAM; i++) {
			char *argv[] = { (char *)"unset", ls[i]->name, (char *)ls[i]->type->desc->params[here->index].name };
			st_app_exec(app, 3, argv);
		}
		if (here->kind == ROW_ACTIVATION)
			apply(app, here, "none");
		else if (here->kind != ROW_PARAM)
			st_app_message(app, ST_SEVERITY_INFO, "no default to return to here: Enter edits the value");
	} else {
		return false;
	}
	return true;
}
