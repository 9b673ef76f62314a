/* Edit commands: every change to a graph is a transaction of small invertible
 * operations, recorded for undo and redo. The CLI's `strata edit`, and later
 * the TUI's keys and ':' line, all go through the command table here. */
#include "config.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "core-edit.h"

#define HISTORY_LIMIT 10000

typedef enum op_kind {
	OP_INSERT,   /* layer enters the graph at index */
	OP_REMOVE,   /* layer leaves the graph from index */
	OP_LINK,     /* input `index` of layer: before -> after */
	OP_PARAM,    /* parameter `index` of layer */
	OP_NETWORK,  /* network parameter `index` */
	OP_ACT,      /* the attached activation */
	OP_RENAME,
	OP_MOVE,
	OP_MINIMIZE
} op_kind;

typedef struct op {
	op_kind kind;
	st_layer *layer; /* holds a reference */
	int index;
	st_port before, after;          /* OP_LINK; hold references */
	int n_before, n_after;          /* OP_LINK: terminals present before and after */
	st_value v_before, v_after;     /* OP_PARAM, OP_NETWORK */
	bool set_before, set_after;
	st_layer_act act_before, act_after; /* OP_ACT */
	char *s_before, *s_after;       /* OP_RENAME */
	int x0, y0, x1, y1;             /* OP_MOVE */
	bool b0, b1;                    /* OP_MINIMIZE */
} op;

typedef struct txn {
	op *ops;
	int n, cap;
	unsigned long id;
} txn;

struct st_session {
	st_graph *graph;
	char *path;
	txn *undo;
	int n_undo, cap_undo;
	txn *redo;
	int n_redo, cap_redo;
	txn current;           /* being built by a running command */
	unsigned long next_id;
	unsigned long saved_id; /* id of the newest undo step at the last save */
	st_print_fn print;
	void *print_user;
	st_journal *journal;   /* borrowed, or NULL */
	char journal_error[256];
};

/* ---- activations as values ---- */

static void
act_clear(st_layer_act *a)
{
	free(a->type_name);
	st_params_clear(&a->coef);
	cJSON_Delete(a->extra);
	memset(a, 0, sizeof *a);
}

static void
act_copy(st_layer_act *dst, const st_layer_act *src)
{
	memset(dst, 0, sizeof *dst);
	dst->type_name = src->type_name ? st_xstrdup(src->type_name) : NULL;
	dst->type = src->type;
	st_params_copy(&dst->coef, &src->coef);
	dst->extra = src->extra ? cJSON_Duplicate(src->extra, 1) : NULL;
}

/* ---- operations ---- */

static void
port_ref(st_port p)
{
	if (p.layer)
		st_layer_ref(p.layer);
}

static void
port_unref(st_port p)
{
	if (p.layer)
		st_layer_unref(p.layer);
}

static void
op_free(op *o)
{
	st_layer_unref(o->layer);
	switch (o->kind) {
	case OP_LINK:
		port_unref(o->before);
		port_unref(o->after);
		break;
	case OP_PARAM:
	case OP_NETWORK:
		st_value_clear(&o->v_before);
		st_value_clear(&o->v_after);
		break;
	case OP_ACT:
		act_clear(&o->act_before);
		act_clear(&o->act_after);
		break;
	case OP_RENAME:
		free(o->s_before);
		free(o->s_after);
		break;
	default:
		break;
	}
}

static void
op_apply(st_graph *g, op *o, bool forward)
{
	st_layer *l = o->layer;
	switch (o->kind) {
	case OP_INSERT:
	case OP_REMOVE:
		if ((o->kind == OP_INSERT) == forward)
			st_graph_insert(g, l, o->index);
		else
			st_graph_remove(g, l);
		break;
	case OP_LINK:
		st_graph_set_input(g, l, o->index, forward ? o->after : o->before);
		/* Unlinked terminals come and go with links (infinite inputs, unknown
		 * types); put back exactly as many as there were. */
		st_graph_set_terminal_count(g, l, forward ? o->n_after : o->n_before);
		break;
	case OP_PARAM:
	case OP_NETWORK: {
		st_params *p = o->kind == OP_PARAM ? &l->params : &g->network;
		st_value_clear(&p->values[o->index]);
		st_value_copy(&p->values[o->index], forward ? &o->v_after : &o->v_before);
		p->set[o->index] = forward ? o->set_after : o->set_before;
		if (o->kind == OP_PARAM)
			st_graph_touch(g, l);
		break;
	}
	case OP_ACT:
		act_clear(&l->act);
		act_copy(&l->act, forward ? &o->act_after : &o->act_before);
		st_graph_touch(g, l);
		break;
	case OP_RENAME:
		st_graph_rename(g, l, forward ? o->s_after : o->s_before);
		break;
	case OP_MOVE:
		l->x = forward ? o->x1 : o->x0;
		l->y = forward ? o->y1 : o->y0;
		break;
	case OP_MINIMIZE:
		l->minimized = forward ? o->b1 : o->b0;
		break;
	}
}

/* Applies o now and records it in the transaction being built. */
static void
record(st_session *s, op *o)
{
	txn *t = &s->current;
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 8;
		t->ops = st_xreallocarray(t->ops, (size_t)t->cap, sizeof *t->ops);
	}
	if (o->layer)
		st_layer_ref(o->layer);
	op_apply(s->graph, o, true);
	t->ops[t->n++] = *o;
}

static void
txn_free(txn *t)
{
	for (int i = 0; i < t->n; i++)
		op_free(&t->ops[i]);
	free(t->ops);
	memset(t, 0, sizeof *t);
}

static void
txn_apply(st_graph *g, txn *t, bool forward)
{
	if (forward) {
		for (int i = 0; i < t->n; i++)
			op_apply(g, &t->ops[i], true);
	} else {
		for (int i = t->n - 1; i >= 0; i--)
			op_apply(g, &t->ops[i], false);
	}
}

static void
stack_push(txn **stack, int *n, int *cap, txn t)
{
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		*stack = st_xreallocarray(*stack, (size_t)*cap, sizeof **stack);
	}
	(*stack)[(*n)++] = t;
}

/* Ends the running command: keep its transaction, or undo it on failure. */
static void
commit(st_session *s, bool ok)
{
	txn t = s->current;
	memset(&s->current, 0, sizeof s->current);
	if (!ok || t.n == 0) {
		txn_apply(s->graph, &t, false);
		txn_free(&t);
		return;
	}
	t.id = ++s->next_id;
	for (int i = 0; i < s->n_redo; i++)
		txn_free(&s->redo[i]);
	s->n_redo = 0;
	if (s->n_undo == HISTORY_LIMIT) {
		/* The empty history now stands for the state after the dropped step. */
		if (s->saved_id == s->undo[0].id)
			s->saved_id = 0;
		else if (s->saved_id == 0)
			s->saved_id = ULONG_MAX; /* the saved state can no longer be reached */
		txn_free(&s->undo[0]);
		memmove(&s->undo[0], &s->undo[1], sizeof *s->undo * (size_t)(s->n_undo - 1));
		s->n_undo--;
	}
	stack_push(&s->undo, &s->n_undo, &s->cap_undo, t);
}

/* ---- op builders ---- */

static void
do_link(st_session *s, st_layer *dst, int input, st_port src)
{
	op o = { .kind = OP_LINK, .layer = dst, .index = input, .after = src };
	o.before = input < dst->n_inputs ? dst->inputs[input] : (st_port){ NULL, 0 };
	o.n_before = dst->n_inputs;
	/* What linking leaves, found by doing it: record() applies it again. */
	st_graph_set_input(s->graph, dst, input, src);
	o.n_after = dst->n_inputs;
	st_graph_set_input(s->graph, dst, input, o.before);
	st_graph_set_terminal_count(s->graph, dst, o.n_before);
	port_ref(o.before);
	port_ref(o.after);
	record(s, &o);
}

static void
do_param(st_session *s, st_layer *l, int index, const st_value *v, bool set)
{
	op o = { .kind = l ? OP_PARAM : OP_NETWORK, .layer = l, .index = index, .set_after = set };
	const st_params *p = l ? &l->params : &s->graph->network;
	st_value_copy(&o.v_before, &p->values[index]);
	o.set_before = p->set[index];
	st_value_copy(&o.v_after, v);
	record(s, &o);
}

/* Disconnects everything around l, then takes it out of the graph. */
static void
do_delete(st_session *s, st_layer *l)
{
	while (l->n_consumers > 0) {
		st_consumer c = l->consumers[l->n_consumers - 1];
		do_link(s, c.layer, c.input, (st_port){ NULL, 0 });
	}
	for (int i = l->n_inputs - 1; i >= 0; i--) {
		if (i < l->n_inputs && l->inputs[i].layer != NULL)
			do_link(s, l, i, (st_port){ NULL, 0 });
	}
	op o = { .kind = OP_REMOVE, .layer = l, .index = l->index };
	record(s, &o);
}

/* ---- argument helpers ---- */

static st_layer *
find_layer(st_session *s, const char *name, char *err, size_t size)
{
	st_layer *l = st_graph_find(s->graph, name);
	if (l != NULL)
		return l;
	const char *hint = NULL;
	int best = (int)strlen(name) / 3 + 1;
	for (int i = 0; i < s->graph->n_layers && best > 0; i++) {
		int d = st_edit_distance(name, s->graph->layers[i]->name);
		if (d <= best) {
			best = d - 1;
			hint = s->graph->layers[i]->name;
		}
	}
	if (hint)
		snprintf(err, size, "'%s' is not a layer of this model (did you mean '%s'?)", name, hint);
	else
		snprintf(err, size, "'%s' is not a layer of this model", name);
	return NULL;
}

static bool
parse_int_arg(const char *s, long lo, long hi, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end != '\0' || v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

/* "name.3" -> layer and index; no ".N" gives -1. */
static st_layer *
parse_port(st_session *s, const char *text, int *index, char *err, size_t size)
{
	char *copy = st_xstrdup(text);
	char *dot = strrchr(copy, '.');
	*index = -1;
	if (dot != NULL) {
		long v;
		if (!parse_int_arg(dot + 1, 0, 4095, &v)) {
			snprintf(err, size, "'%s' is not LAYER or LAYER.N with N a terminal number", text);
			free(copy);
			return NULL;
		}
		*index = (int)v;
		*dot = '\0';
	}
	st_layer *l = find_layer(s, copy, err, size);
	free(copy);
	return l;
}

/* Joins argv[from..argc) with single spaces; caller frees. */
static char *
join_args(int argc, char **argv, int from)
{
	st_buf b;
	st_buf_init(&b);
	for (int i = from; i < argc; i++) {
		if (i > from)
			st_buf_putc(&b, ' ');
		st_buf_puts(&b, argv[i]);
	}
	return st_buf_take(&b);
}

static int
check_new_name(st_session *s, const char *name, char *err, size_t size)
{
	const char *why = st_name_problem(name);
	if (why != NULL) {
		snprintf(err, size, "'%s' cannot be a layer name: %s", name, why);
		return -1;
	}
	if (st_graph_find(s->graph, name) != NULL) {
		snprintf(err, size, "the name '%s' is taken by another layer", name);
		return -1;
	}
	return 0;
}

static void
say(st_session *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
vsay(st_session *s, const char *fmt, va_list ap)
{
	if (s->print == NULL)
		return;
	char *text = st_xvasprintf(fmt, ap);
	s->print(s->print_user, text);
	free(text);
}

static void
say(st_session *s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsay(s, fmt, ap);
	va_end(ap);
}

/* Lists the names of a parameter table for an error message. */
static void
list_params(const st_param_desc *d, int n, st_buf *out)
{
	for (int i = 0; i < n; i++)
		st_buf_printf(out, "%s%s", i ? ", " : "", d[i].name);
}

/* ---- the toolkit of core-edit.h ---- */

st_layer *
edit_find_layer(st_session *s, const char *name, char *err, size_t size)
{
	return find_layer(s, name, err, size);
}

int
edit_check_name(st_session *s, const char *name, char *err, size_t size)
{
	return check_new_name(s, name, err, size);
}

void
edit_say(st_session *s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsay(s, fmt, ap);
	va_end(ap);
}

void
edit_insert(st_session *s, st_layer *l, int index)
{
	op o = { .kind = OP_INSERT, .layer = l, .index = index };
	record(s, &o);
}

void
edit_delete(st_session *s, st_layer *l)
{
	do_delete(s, l);
}

void
edit_link(st_session *s, st_layer *dst, int input, st_port src)
{
	do_link(s, dst, input, src);
}

void
edit_move(st_session *s, st_layer *l, int x, int y)
{
	if (l->x == x && l->y == y)
		return;
	op o = { .kind = OP_MOVE, .layer = l, .x0 = l->x, .y0 = l->y, .x1 = x, .y1 = y };
	record(s, &o);
}

void
edit_set_activation(st_session *s, st_layer *l, const st_layer_act *act)
{
	op o = { .kind = OP_ACT, .layer = l };
	act_copy(&o.act_before, &l->act);
	act_copy(&o.act_after, act);
	record(s, &o);
}

/* ---- the commands ---- */

static int
cmd_add(st_session *s, int argc, char **argv, char *err, size_t size)
{
	const st_layer_type *type = st_registry_find_layer(s->graph->registry, argv[1]);
	if (type == NULL) {
		const char *hint = st_registry_suggest_layer(s->graph->registry, argv[1]);
		snprintf(err, size, "unknown layer type '%s'%s%s%s; 'strata layers' lists them", argv[1],
		         hint ? " (did you mean '" : "", hint ? hint : "", hint ? "'?)" : "");
		return -1;
	}
	char *name;
	int next = 2;
	if (argc > 2 && !(argc == 4 && isdigit((unsigned char)argv[2][0])) &&
	    !(argc == 4 && argv[2][0] == '-')) {
		if (check_new_name(s, argv[2], err, size) != 0)
			return -1;
		name = st_xstrdup(argv[2]);
		next = 3;
	} else {
		name = st_graph_generate_name(s->graph, type, type->desc->name);
	}
	long x = 0, y = 0;
	if (argc - next == 2) {
		if (!parse_int_arg(argv[next], -1000000, 1000000, &x) ||
		    !parse_int_arg(argv[next + 1], -1000000, 1000000, &y)) {
			snprintf(err, size, "the position must be two integers X Y");
			free(name);
			return -1;
		}
	} else if (argc - next != 0) {
		snprintf(err, size, "usage: add TYPE [NAME] [X Y]");
		free(name);
		return -1;
	} else {
		/* Stack new layers below the lowest one. */
		for (int i = 0; i < s->graph->n_layers; i++) {
			if (s->graph->layers[i]->y + 5 > y)
				y = s->graph->layers[i]->y + 5;
		}
	}
	st_layer *l = st_layer_new(s->graph->registry, type->desc->name, name);
	l->x = (int)x;
	l->y = (int)y;
	op o = { .kind = OP_INSERT, .layer = l, .index = s->graph->n_layers };
	record(s, &o);
	say(s, "added %s (%s)", name, type->desc->name);
	free(name);
	return 0;
}

static int
cmd_delete(st_session *s, int argc, char **argv, char *err, size_t size)
{
	for (int i = 1; i < argc; i++) {
		st_layer *l = find_layer(s, argv[i], err, size);
		if (l == NULL)
			return -1;
		do_delete(s, l);
	}
	return 0;
}

/* Number of outputs a layer is known to have, or -1 when it is not known. */
static int
output_count(const st_layer *l)
{
	if (l->type == NULL)
		return -1;
	if (l->type->desc->flags & ST_LAYER_VARIABLE_OUTPUTS)
		return l->outputs_known ? l->n_outputs : -1;
	return l->type->desc->n_outputs;
}

static int
cmd_connect(st_session *s, int argc, char **argv, char *err, size_t size)
{
	(void)argc;
	int out, in;
	st_layer *src = parse_port(s, argv[1], &out, err, size);
	if (src == NULL)
		return -1;
	st_layer *dst = parse_port(s, argv[2], &in, err, size);
	if (dst == NULL)
		return -1;
	if (out < 0)
		out = 0;
	int n_out = output_count(src);
	if (n_out >= 0 && out >= n_out) {
		if (n_out == 0)
			snprintf(err, size, "'%s' has no outputs", src->name);
		else
			snprintf(err, size, "'%s' has %d output%s (0 to %d), not %d", src->name, n_out,
			         n_out == 1 ? "" : "s", n_out - 1, out);
		return -1;
	}
	const st_layer_desc *d = dst->type ? dst->type->desc : NULL;
	bool infinite = d && d->n_inputs > 0 && (d->inputs[d->n_inputs - 1].flags & ST_PORT_INFINITE);
	if (d != NULL && d->n_inputs == 0) {
		snprintf(err, size, "'%s' (%s) has no inputs", dst->name, d->name);
		return -1;
	}
	if (in < 0) {
		/* The first free terminal. */
		in = 0;
		while (in < dst->n_inputs && dst->inputs[in].layer != NULL)
			in++;
		if (d != NULL && !infinite && in >= d->n_inputs) {
			snprintf(err, size, "every input of '%s' is linked; name one, as in %s.0", dst->name,
			         dst->name);
			return -1;
		}
	}
	if (d != NULL && !infinite && in >= d->n_inputs) {
		if (d->n_inputs == 0)
			snprintf(err, size, "'%s' (%s) has no inputs", dst->name, d->name);
		else
			snprintf(err, size, "'%s' (%s) has %d input%s (0 to %d), not %d", dst->name, d->name,
			         d->n_inputs, d->n_inputs == 1 ? "" : "s", d->n_inputs - 1, in);
		return -1;
	}
	if (infinite && in > dst->n_inputs) {
		snprintf(err, size, "connect to input %d of '%s' first (terminals fill in order)",
		         dst->n_inputs, dst->name);
		return -1;
	}
	if (st_graph_would_cycle(s->graph, src, dst)) {
		snprintf(err, size, "linking %s to %s would close a cycle", src->name, dst->name);
		return -1;
	}
	do_link(s, dst, in, (st_port){ src, out });
	return 0;
}

static int
cmd_disconnect(st_session *s, int argc, char **argv, char *err, size_t size)
{
	(void)argc;
	int in;
	st_layer *dst = parse_port(s, argv[1], &in, err, size);
	if (dst == NULL)
		return -1;
	if (in < 0) {
		bool any = false;
		for (int i = dst->n_inputs - 1; i >= 0; i--) {
			if (i < dst->n_inputs && dst->inputs[i].layer != NULL) {
				do_link(s, dst, i, (st_port){ NULL, 0 });
				any = true;
			}
		}
		if (!any) {
			snprintf(err, size, "no input of '%s' is linked", dst->name);
			return -1;
		}
		return 0;
	}
	if (in >= dst->n_inputs || dst->inputs[in].layer == NULL) {
		snprintf(err, size, "input %d of '%s' is not linked", in, dst->name);
		return -1;
	}
	do_link(s, dst, in, (st_port){ NULL, 0 });
	return 0;
}

static int
find_param(st_layer *l, const char *name, char *err, size_t size)
{
	if (l->type == NULL) {
		snprintf(err, size, "'%s' has the unknown type '%s'; its parameters cannot be edited",
		         l->name, l->type_name);
		return -1;
	}
	const st_layer_desc *d = l->type->desc;
	int idx = st_params_find(d->params, d->n_params, name);
	if (idx < 0) {
		st_buf names;
		st_buf_init(&names);
		list_params(d->params, d->n_params, &names);
		if (d->n_params == 0)
			snprintf(err, size, "%s layers have no parameters", d->name);
		else
			snprintf(err, size, "%s has no parameter '%s'; it has: %s", d->name, name, names.data);
		st_buf_free(&names);
	}
	return idx;
}

/* Splits LAYER[,LAYER...] (a name that exists as written is one layer, even
 * with a comma) and runs one() on each, stopping at the first failure; the
 * caller's transaction makes it all or nothing. */
static int
each_layer(st_session *s, const char *list, int argc, char **argv, char *err, size_t size,
           int (*one)(st_session *, const char *, int, char **, char *, size_t))
{
	bool whole = st_graph_find(s->graph, list) != NULL;
	for (const char *p = list; *p;) {
		size_t n = whole ? strlen(p) : strcspn(p, ",");
		char *name = st_xstrndup(p, n);
		p += n + (p[n] == ',');
		int rc = one(s, name, argc, argv, err, size);
		free(name);
		if (rc != 0)
			return -1;
	}
	return 0;
}

/* A block-style setting (transform, pruning) on a layer: whether name is
 * one the layer's type does not have as a parameter of its own. */
static bool
block_style_for(const st_layer *l, const char *name)
{
	const st_layer_desc *d = l->type ? l->type->desc : NULL;
	return d != NULL && st_block_style_index(name) >= 0 && st_params_find(d->params, d->n_params, name) < 0;
}

int
edit_set_text(st_session *s, st_layer *l, const char *name, const char *text, char *err, size_t size)
{
	char why[512];
	if (block_style_for(l, name)) {
		const st_layer_desc *d = l->type->desc;
		st_block_setting set;
		int rc = st_block_style_resolve(d->params, d->n_params, name, NULL, text, &set, why, sizeof why);
		if (rc == -2) {
			snprintf(err, size, "layer '%s': %s has no parameter '%s': it %s", l->name, d->name, name, why);
			return -1;
		}
		if (rc != 0) {
			snprintf(err, size, "layer '%s': parameter '%s' %s", l->name, name, why);
			return -1;
		}
		for (int i = 0; i < set.count; i++)
			do_param(s, l, set.index[i], &set.values[i], true);
		st_block_setting_clear(&set);
		return 0;
	}
	int idx = find_param(l, name, err, size);
	if (idx < 0)
		return -1;
	st_value v;
	if (st_value_from_text(&l->type->desc->params[idx], text, &v, why, sizeof why) != 0) {
		snprintf(err, size, "layer '%s': parameter '%s' %s", l->name, name, why);
		return -1;
	}
	do_param(s, l, idx, &v, true);
	st_value_clear(&v);
	return 0;
}

static int
set_one(st_session *s, const char *name, int argc, char **argv, char *err, size_t size)
{
	st_layer *l = find_layer(s, name, err, size);
	if (l == NULL)
		return -1;
	char *text = join_args(argc, argv, 3);
	int rc = edit_set_text(s, l, argv[2], text, err, size);
	free(text);
	return rc;
}

/* LAYER may be several, "a,b,c": one edit (and one undo) for all; on a
 * failure nothing is changed. */
static int
cmd_set(st_session *s, int argc, char **argv, char *err, size_t size)
{
	return each_layer(s, argv[1], argc, argv, err, size, set_one);
}

static int
cmd_unset(st_session *s, int argc, char **argv, char *err, size_t size)
{
	(void)argc;
	st_layer *l = find_layer(s, argv[1], err, size);
	if (l == NULL)
		return -1;
	if (block_style_for(l, argv[2]) && st_params_have_xwn_set(l->type->desc->params, l->type->desc->n_params)) {
		/* "unset c1 transform" returns use_transform and bit to their defaults. */
		const st_layer_desc *d = l->type->desc;
		for (int i = 0; i < d->n_params; i++) {
			if (st_block_style_covers(argv[2], d->params[i].name))
				do_param(s, l, i, &l->type->defaults[i], false);
		}
		return 0;
	}
	int idx = find_param(l, argv[2], err, size);
	if (idx < 0)
		return -1;
	do_param(s, l, idx, &l->type->defaults[idx], false);
	return 0;
}

static int
activation_one(st_session *s, const char *name, int argc, char **argv, char *err, size_t size)
{
	st_layer *l = find_layer(s, name, err, size);
	if (l == NULL)
		return -1;
	op o = { .kind = OP_ACT, .layer = l };
	act_copy(&o.act_before, &l->act);
	if (strcmp(argv[2], "none") == 0) {
		if (argc > 3) {
			snprintf(err, size, "'none' takes no coefficients");
			act_clear(&o.act_before);
			return -1;
		}
		st_params_init(&o.act_after.coef, NULL, 0, NULL);
		record(s, &o);
		return 0;
	}
	if (l->type != NULL && !(l->type->desc->flags & ST_LAYER_ACTIVATION)) {
		snprintf(err, size, "%s layers take no activation", l->type->desc->name);
		act_clear(&o.act_before);
		return -1;
	}
	const st_activation_type *a = st_registry_find_activation(s->graph->registry, argv[2]);
	if (a == NULL) {
		st_buf names;
		st_buf_init(&names);
		const st_registry *r = s->graph->registry;
		for (int i = 0; i < r->n_activations; i++)
			st_buf_printf(&names, "%s%s", i ? ", " : "", r->activations[i]->desc->name);
		snprintf(err, size, "unknown activation '%s'; known: none%s%s", argv[2], names.len ? ", " : "",
		         names.len ? names.data : "");
		st_buf_free(&names);
		act_clear(&o.act_before);
		return -1;
	}
	o.act_after.type_name = st_xstrdup(a->desc->name);
	o.act_after.type = a;
	st_params_init(&o.act_after.coef, a->desc->params, a->desc->n_params, a->defaults);
	/* Keep coefficients already set when the activation stays the same. */
	if (l->act.type == a) {
		st_params_clear(&o.act_after.coef);
		st_params_copy(&o.act_after.coef, &l->act.coef);
	}
	for (int i = 3; i < argc; i++) {
		char *eq = strchr(argv[i], '=');
		if (eq == NULL) {
			snprintf(err, size, "coefficients are written NAME=VALUE, not '%s'", argv[i]);
			goto fail;
		}
		*eq = '\0';
		int idx = st_params_find(a->desc->params, a->desc->n_params, argv[i]);
		if (idx < 0) {
			st_buf names;
			st_buf_init(&names);
			list_params(a->desc->params, a->desc->n_params, &names);
			snprintf(err, size, "activation %s has no coefficient '%s'%s%s", a->desc->name, argv[i],
			         names.len ? "; it has: " : "", names.len ? names.data : "");
			st_buf_free(&names);
			*eq = '=';
			goto fail;
		}
		st_value v;
		char why[256];
		if (st_value_from_text(&a->desc->params[idx], eq + 1, &v, why, sizeof why) != 0) {
			snprintf(err, size, "activation coefficient '%s' %s", argv[i], why);
			*eq = '=';
			goto fail;
		}
		*eq = '=';
		st_value_clear(&o.act_after.coef.values[idx]);
		o.act_after.coef.values[idx] = v;
		o.act_after.coef.set[idx] = true;
	}
	record(s, &o);
	return 0;
fail:
	act_clear(&o.act_before);
	act_clear(&o.act_after);
	return -1;
}

static int
cmd_activation(st_session *s, int argc, char **argv, char *err, size_t size)
{
	return each_layer(s, argv[1], argc, argv, err, size, activation_one);
}

int
edit_attach(st_session *s, st_layer *l, const char *type, char *err, size_t size)
{
	char *argv[] = { "activation", l->name, (char *)type, NULL };
	return activation_one(s, l->name, 3, argv, err, size);
}

static int
cmd_duplicate(st_session *s, int argc, char **argv, char *err, size_t size)
{
	st_layer *from = find_layer(s, argv[1], err, size);
	if (from == NULL)
		return -1;
	if (from->type == NULL) {
		snprintf(err, size, "'%s' has the unknown type '%s' and cannot be duplicated", from->name,
		         from->type_name);
		return -1;
	}
	/* LAYER [NAME] [X Y]: a lone pair of numbers is the position. */
	int next = 2;
	bool named = argc == 3 || argc == 5;
	long x = from->x + 4, y = from->y + 2;
	if (named && check_new_name(s, argv[2], err, size) != 0)
		return -1;
	if (named)
		next = 3;
	if (argc - next == 2 && (!parse_int_arg(argv[next], -1000000, 1000000, &x) ||
	                         !parse_int_arg(argv[next + 1], -1000000, 1000000, &y))) {
		snprintf(err, size, "the position must be two integers X Y");
		return -1;
	}
	char *name = named ? st_xstrdup(argv[2]) : st_graph_generate_name(s->graph, from->type, from->type_name);
	/* The copy, unlinked, with the original's parameters and activation;
	 * without a position it sits just beside the original. */
	st_layer *l = st_layer_new(s->graph->registry, from->type_name, name);
	st_params_clear(&l->params);
	st_params_copy(&l->params, &from->params);
	act_clear(&l->act);
	act_copy(&l->act, &from->act);
	l->x = (int)x;
	l->y = (int)y;
	l->minimized = from->minimized;
	op o = { .kind = OP_INSERT, .layer = l, .index = s->graph->n_layers };
	record(s, &o);
	say(s, "added %s (a copy of %s)", name, from->name);
	free(name);
	return 0;
}

static int
cmd_rename(st_session *s, int argc, char **argv, char *err, size_t size)
{
	(void)argc;
	st_layer *l = find_layer(s, argv[1], err, size);
	if (l == NULL)
		return -1;
	if (strcmp(argv[1], argv[2]) == 0)
		return 0;
	if (check_new_name(s, argv[2], err, size) != 0)
		return -1;
	op o = { .kind = OP_RENAME, .layer = l, .s_before = st_xstrdup(l->name),
		 .s_after = st_xstrdup(argv[2]) };
	record(s, &o);
	return 0;
}

static int
cmd_move(st_session *s, int argc, char **argv, char *err, size_t size)
{
	/* LAYER X Y, repeated: several layers move as one edit (a layout). */
	if ((argc - 1) % 3 != 0) {
		snprintf(err, size, "usage: move LAYER X Y [LAYER X Y]...");
		return -1;
	}
	for (int i = 1; i < argc; i += 3) {
		st_layer *l = find_layer(s, argv[i], err, size);
		if (l == NULL)
			return -1;
		long x, y;
		if (!parse_int_arg(argv[i + 1], -1000000, 1000000, &x) ||
		    !parse_int_arg(argv[i + 2], -1000000, 1000000, &y)) {
			snprintf(err, size, "the position of '%s' must be two integers X Y within +-1000000", argv[i]);
			return -1;
		}
		if (l->x == x && l->y == y)
			continue;
		op o = { .kind = OP_MOVE, .layer = l, .x0 = l->x, .y0 = l->y, .x1 = (int)x, .y1 = (int)y };
		record(s, &o);
	}
	return 0;
}

static int
cmd_minimize(st_session *s, int argc, char **argv, char *err, size_t size)
{
	st_layer *l = find_layer(s, argv[1], err, size);
	if (l == NULL)
		return -1;
	bool to = !l->minimized;
	if (argc > 2) {
		if (strcmp(argv[2], "on") == 0 || strcmp(argv[2], "true") == 0)
			to = true;
		else if (strcmp(argv[2], "off") == 0 || strcmp(argv[2], "false") == 0)
			to = false;
		else {
			snprintf(err, size, "minimize takes on or off, not '%s'", argv[2]);
			return -1;
		}
	}
	op o = { .kind = OP_MINIMIZE, .layer = l, .b0 = l->minimized, .b1 = to };
	record(s, &o);
	return 0;
}

static int
cmd_network(st_session *s, int argc, char **argv, char *err, size_t size)
{
	int idx = st_params_find(st_network_params, ST_NET_COUNT, argv[1]);
	if (idx < 0) {
		st_buf names;
		st_buf_init(&names);
		list_params(st_network_params, ST_NET_COUNT, &names);
		snprintf(err, size, "the network has no setting '%s'; it has: %s", argv[1], names.data);
		st_buf_free(&names);
		return -1;
	}
	char *text = join_args(argc, argv, 2);
	st_value v;
	char why[256];
	int rc = st_value_from_text(&st_network_params[idx], text, &v, why, sizeof why);
	free(text);
	if (rc != 0) {
		snprintf(err, size, "network setting '%s' %s", argv[1], why);
		return -1;
	}
	do_param(s, NULL, idx, &v, true);
	st_value_clear(&v);
	return 0;
}

/* undo [N] and redo [N]: step runs one step and returns -1 when none is left. */
static int
repeat_step(st_session *s, int argc, char **argv, int (*step)(st_session *), const char *verb,
            char *err, size_t size)
{
	long n = 1;
	if (argc > 1 && !parse_int_arg(argv[1], 1, HISTORY_LIMIT, &n)) {
		snprintf(err, size, "the count must be a positive integer, not '%s'", argv[1]);
		return -1;
	}
	for (long i = 0; i < n; i++) {
		if (step(s) != 0) {
			if (i == 0) {
				snprintf(err, size, "nothing to %s", verb);
				return -1;
			}
			/* Fewer steps than asked for is not an error: the history is short. */
			break;
		}
	}
	return 0;
}

static int
cmd_undo(st_session *s, int argc, char **argv, char *err, size_t size)
{
	return repeat_step(s, argc, argv, st_session_undo, "undo", err, size);
}

static int
cmd_redo(st_session *s, int argc, char **argv, char *err, size_t size)
{
	return repeat_step(s, argc, argv, st_session_redo, "redo", err, size);
}

static int
cmd_save(st_session *s, int argc, char **argv, char *err, size_t size)
{
	const char *path = argc > 1 ? argv[1] : s->path;
	if (path == NULL) {
		snprintf(err, size, "the model has no file yet: save FILE");
		return -1;
	}
	char why[512];
	if (st_model_save(s->graph, path, why, sizeof why) != 0) {
		snprintf(err, size, "%s", why);
		return -1;
	}
	if (argc > 1) {
		free(s->path);
		s->path = st_xstrdup(path);
	}
	s->saved_id = s->n_undo ? s->undo[s->n_undo - 1].id : 0;
	/* What is on disk now needs no journal. */
	if (s->journal != NULL)
		st_journal_start(s->journal, s->journal_error, sizeof s->journal_error);
	say(s, "saved %s", path);
	return 0;
}

static int
cmd_check(st_session *s, int argc, char **argv, char *err, size_t size)
{
	(void)argc;
	(void)argv;
	(void)err;
	(void)size;
	st_graph_check_incremental(s->graph);
	int n;
	st_graph_message *m = st_graph_messages(s->graph, &n);
	for (int i = 0; i < n; i++)
		say(s, "%s: %s: %s", st_severity_name(m[i].severity), m[i].layer->name, m[i].text);
	free(m);
	say(s, "%d error%s, %d warning%s", s->graph->errors, s->graph->errors == 1 ? "" : "s",
	    s->graph->warnings, s->graph->warnings == 1 ? "" : "s");
	return 0;
}

static void
format_outputs(const st_layer *l, st_buf *b)
{
	if (!l->outputs_known) {
		st_buf_puts(b, "?");
		return;
	}
	for (int i = 0; i < l->n_outputs; i++) {
		char shape[256];
		st_shape_format(&l->outputs[i], shape, sizeof shape);
		st_buf_printf(b, "%s%s", i ? ", " : "", shape);
	}
	if (l->n_outputs == 0)
		st_buf_puts(b, "-");
}

static int
cmd_list(st_session *s, int argc, char **argv, char *err, size_t size)
{
	(void)argc;
	(void)argv;
	(void)err;
	(void)size;
	st_graph_check_incremental(s->graph);
	for (int i = 0; i < s->graph->n_layers; i++) {
		const st_layer *l = s->graph->layers[i];
		st_buf b;
		st_buf_init(&b);
		format_outputs(l, &b);
		say(s, "%-20s %-22s %s", l->name, l->type_name, b.data);
		st_buf_free(&b);
	}
	return 0;
}

static int
cmd_show(st_session *s, int argc, char **argv, char *err, size_t size)
{
	(void)argc;
	st_layer *l = find_layer(s, argv[1], err, size);
	if (l == NULL)
		return -1;
	st_graph_check_incremental(s->graph);
	say(s, "%s: %s at %d,%d%s", l->name, l->type_name, l->x, l->y, l->minimized ? " (minimized)" : "");
	if (l->type != NULL) {
		const st_layer_desc *d = l->type->desc;
		for (int i = 0; i < d->n_params; i++) {
			st_buf b;
			st_buf_init(&b);
			st_value_to_text(&d->params[i], &l->params.values[i], &b);
			say(s, "  %-22s %s%s", d->params[i].name, b.data, l->params.set[i] ? "" : "  (default)");
			st_buf_free(&b);
		}
	}
	if (l->act.type_name)
		say(s, "  activation             %s", l->act.type_name);
	for (int i = 0; i < l->n_inputs; i++) {
		st_port p = l->inputs[i];
		if (p.layer)
			say(s, "  input %d <- %s.%d", i, p.layer->name, p.output);
		else
			say(s, "  input %d    (not linked)", i);
	}
	st_buf b;
	st_buf_init(&b);
	format_outputs(l, &b);
	say(s, "  output                 %s", b.data);
	st_buf_free(&b);
	for (int i = 0; i < l->n_messages; i++)
		say(s, "  %s: %s", st_severity_name(l->messages[i].severity), l->messages[i].text);
	return 0;
}

static int
cmd_help(st_session *s, int argc, char **argv, char *err, size_t size)
{
	if (argc > 1) {
		const st_command *c = st_command_find(argv[1]);
		if (c == NULL) {
			snprintf(err, size, "no command '%s'; 'help' lists them", argv[1]);
			return -1;
		}
		say(s, "%s %s\n  %s%s%s", c->name, c->usage, c->help, c->alias ? "\n  alias: " : "",
		    c->alias ? c->alias : "");
		return 0;
	}
	for (int i = 0; i < st_n_commands; i++)
		say(s, "  %-11s %-30s %s", st_commands[i].name, st_commands[i].usage, st_commands[i].help);
	return 0;
}

/* The table; `strata edit --list-commands`, the man page and the TUI's ':'
 * completion are generated from it. */
const st_command st_commands[] = {
	{ "add", "a", "TYPE [NAME] [X Y]", "add a layer of TYPE (or its alias), named NAME or a generated name", 1, 4, cmd_add },
	{ "delete", "rm", "LAYER...", "delete layers and every link touching them", 1, -1, cmd_delete },
	{ "connect", "c", "SRC[.OUT] DST[.IN]", "link output OUT of SRC (default 0) to input IN of DST (default: the first free one)", 2, 2, cmd_connect },
	{ "disconnect", "dc", "DST[.IN]", "remove the link entering input IN of DST (all its inputs without .IN)", 1, 1, cmd_disconnect },
	{ "set", NULL, "LAYER[,LAYER...] PARAM VALUE", "set a parameter (of several layers at once): 32, 0.5, true, same, 3x3 or [3, 3]", 3, -1, cmd_set },
	{ "unset", NULL, "LAYER PARAM", "return a parameter to its default", 2, 2, cmd_unset },
	{ "activation", "act", "LAYER[,LAYER...] TYPE [COEF=VALUE...]", "attach an activation (or 'none') with its coefficients", 2, -1, cmd_activation },
	{ "expand", NULL, "LAYER", "replace a layer by the ordinary layers it is made of (a cascade convolution by its stages, concatenation and pointwise convolution), links and activation moved over", 1, 1, cmd_expand },
	{ "add-block", "ab", "BLOCK [NAME] [X Y] [order=ROLE,...] [[ROLE.]PARAM=VALUE...]", "add a block (conv_block_2d, fc_block...) as a chain of layers NAME_ROLE: order= picks and orders the parts, PARAM=VALUE goes to the part that takes it; alone, list the blocks", 0, -1, cmd_add_block },
	{ "duplicate", "dup", "LAYER [NAME] [X Y]", "add a copy of a layer with its parameters and activation, unlinked", 1, 4, cmd_duplicate },
	{ "rename", "mv", "LAYER NEW", "rename a layer; links follow it", 2, 2, cmd_rename },
	{ "move", NULL, "LAYER X Y [LAYER X Y]...", "place layers on the canvas (several move as one edit)", 3, -1, cmd_move },
	{ "minimize", NULL, "LAYER [on|off]", "show a layer as its name only, or in full again", 1, 2, cmd_minimize },
	{ "network", "net", "FIELD VALUE", "set a network setting: name, version, description, tensor_format, weights", 2, -1, cmd_network },
	{ "undo", "u", "[N]", "undo the last N edits (default 1)", 0, 1, cmd_undo },
	{ "redo", NULL, "[N]", "redo N undone edits (default 1)", 0, 1, cmd_redo },
	{ "save", "w", "[FILE]", "save the model, atomically; with FILE, save there from now on", 0, 1, cmd_save },
	{ "check", NULL, "", "type-check and print the messages", 0, 0, cmd_check },
	{ "list", "ls", "", "print every layer with its type and output shapes", 0, 0, cmd_list },
	{ "show", NULL, "LAYER", "print a layer's parameters, links, shapes and messages", 1, 1, cmd_show },
	{ "help", NULL, "[COMMAND]", "list the commands, or describe one", 0, 1, cmd_help },
};
const int st_n_commands = (int)(sizeof st_commands / sizeof st_commands[0]);

const st_command *
st_command_find(const char *name)
{
	for (int i = 0; i < st_n_commands; i++) {
		if (strcmp(st_commands[i].name, name) == 0 ||
		    (st_commands[i].alias && strcmp(st_commands[i].alias, name) == 0))
			return &st_commands[i];
	}
	return NULL;
}

/* Commands that change the graph; the others leave no undo step. */
static bool
is_edit(const st_command *c)
{
	return c->run != cmd_undo && c->run != cmd_redo && c->run != cmd_save && c->run != cmd_check &&
	       c->run != cmd_list && c->run != cmd_show && c->run != cmd_help;
}

/* ---- sessions ---- */

st_session *
st_session_new(st_graph *g, const char *path)
{
	st_session *s = st_xcalloc(1, sizeof *s);
	s->graph = g;
	s->path = path ? st_xstrdup(path) : NULL;
	return s;
}

void
st_session_free(st_session *s)
{
	if (s == NULL)
		return;
	for (int i = 0; i < s->n_undo; i++)
		txn_free(&s->undo[i]);
	for (int i = 0; i < s->n_redo; i++)
		txn_free(&s->redo[i]);
	free(s->undo);
	free(s->redo);
	st_graph_free(s->graph);
	free(s->path);
	free(s);
}

st_graph *
st_session_graph(st_session *s)
{
	return s->graph;
}

const char *
st_session_path(const st_session *s)
{
	return s->path;
}

bool
st_session_dirty(const st_session *s)
{
	unsigned long top = s->n_undo ? s->undo[s->n_undo - 1].id : 0;
	return top != s->saved_id;
}

void
st_session_set_print(st_session *s, st_print_fn fn, void *user)
{
	s->print = fn;
	s->print_user = user;
}

int
st_session_undo(st_session *s)
{
	if (s->n_undo == 0)
		return -1;
	txn t = s->undo[--s->n_undo];
	txn_apply(s->graph, &t, false);
	stack_push(&s->redo, &s->n_redo, &s->cap_redo, t);
	st_graph_check_incremental(s->graph);
	return 0;
}

int
st_session_redo(st_session *s)
{
	if (s->n_redo == 0)
		return -1;
	txn t = s->redo[--s->n_redo];
	txn_apply(s->graph, &t, true);
	stack_push(&s->undo, &s->n_undo, &s->cap_undo, t);
	st_graph_check_incremental(s->graph);
	return 0;
}

int
st_session_undo_depth(const st_session *s)
{
	return s->n_undo;
}

int
st_session_redo_depth(const st_session *s)
{
	return s->n_redo;
}

int
st_session_exec(st_session *s, int argc, char **argv, char *err, size_t size)
{
	if (argc < 1) {
		snprintf(err, size, "empty command");
		return -1;
	}
	const st_command *c = st_command_find(argv[0]);
	if (c == NULL) {
		const char *hint = NULL;
		int best = 2;
		for (int i = 0; i < st_n_commands; i++) {
			int d = st_edit_distance(argv[0], st_commands[i].name);
			if (d <= best) {
				best = d - 1;
				hint = st_commands[i].name;
			}
		}
		snprintf(err, size, "unknown command '%s'%s%s%s; 'help' lists them", argv[0],
		         hint ? " (did you mean '" : "", hint ? hint : "", hint ? "'?)" : "");
		return -1;
	}
	int n = argc - 1;
	if (n < c->min_args || (c->max_args >= 0 && n > c->max_args)) {
		snprintf(err, size, "usage: %s %s", c->name, c->usage);
		return -1;
	}
	err[0] = '\0';
	int rc;
	if (!is_edit(c)) {
		rc = c->run(s, argc, argv, err, size);
		/* Undo and redo change the model too: a restore must replay them. */
		if (rc == 0 && s->journal != NULL && (c->run == cmd_undo || c->run == cmd_redo))
			st_journal_append(s->journal, argc, argv, s->journal_error, sizeof s->journal_error);
		return rc;
	}
	int before = s->n_undo;
	unsigned long top = before ? s->undo[before - 1].id : 0;
	rc = c->run(s, argc, argv, err, size);
	commit(s, rc == 0);
	st_graph_check_incremental(s->graph);
	bool changed = s->n_undo != before || (s->n_undo && s->undo[s->n_undo - 1].id != top);
	if (rc == 0 && changed && s->journal != NULL)
		st_journal_append(s->journal, argc, argv, s->journal_error, sizeof s->journal_error);
	return rc;
}

void
st_session_set_journal(st_session *s, st_journal *j)
{
	s->journal = j;
}

/* ---- scripts ---- */

int
st_split_words(const char *text, char ***words, int *n, char *err, size_t size)
{
	st_buf b;
	char **out = NULL;
	int count = 0;
	const char *p = text;
	*words = NULL;
	*n = 0;
	for (;;) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\0')
			break;
		st_buf_init(&b);
		bool any = false;
		while (*p && *p != ' ' && *p != '\t') {
			if (*p == '"' || *p == '\'') {
				char q = *p++;
				any = true;
				while (*p && *p != q) {
					if (q == '"' && *p == '\\' && p[1])
						p++;
					st_buf_putc(&b, *p++);
				}
				if (*p != q) {
					snprintf(err, size, "a quoted word is not closed");
					st_buf_free(&b);
					for (int i = 0; i < count; i++)
						free(out[i]);
					free(out);
					return -1;
				}
				p++;
			} else {
				st_buf_putc(&b, *p++);
			}
		}
		out = st_xreallocarray(out, (size_t)count + 1, sizeof *out);
		out[count++] = any || b.data ? st_buf_take(&b) : st_xstrdup("");
	}
	*words = out;
	*n = count;
	return 0;
}

typedef struct word {
	char *text;
	int line, col;
} word;

int
st_session_run_script(st_session *s, const char *script, const char *origin, st_diag *d)
{
	const char *p = script;
	int line = 1, col = 1;
	word *words = NULL;
	int n = 0, cap = 0;
	int rc = 0;
	bool done = false;
	while (!done && rc == 0) {
		/* Read one command's words, up to ';', a new line or the end. */
		bool end_cmd = false;
		while (!end_cmd) {
			while (*p == ' ' || *p == '\t' || *p == '\r') {
				p++;
				col++;
			}
			if (*p == '\0') {
				end_cmd = done = true;
				break;
			}
			if (*p == ';' || *p == '\n') {
				if (*p == '\n') {
					line++;
					col = 1;
				} else {
					col++;
				}
				p++;
				end_cmd = true;
				break;
			}
			if (*p == '#') {
				while (*p && *p != '\n')
					p++;
				continue;
			}
			st_buf b;
			st_buf_init(&b);
			int wline = line, wcol = col;
			bool quoted_any = false;
			while (*p && *p != ' ' && *p != '\t' && *p != '\r' && *p != '\n' && *p != ';') {
				if (*p == '"' || *p == '\'') {
					char q = *p++;
					col++;
					quoted_any = true;
					while (*p && *p != q) {
						if (q == '"' && *p == '\\' && p[1]) {
							p++;
							col++;
						}
						if (*p == '\n') {
							line++;
							col = 0;
						}
						st_buf_putc(&b, *p++);
						col++;
					}
					if (*p != q) {
						st_diag_add(d, ST_SEVERITY_ERROR, origin, wline, wcol,
						            "a quoted word is not closed");
						st_buf_free(&b);
						rc = -1;
						goto out;
					}
					p++;
					col++;
				} else {
					st_buf_putc(&b, *p++);
					col++;
				}
			}
			if (n == cap) {
				cap = cap ? cap * 2 : 8;
				words = st_xreallocarray(words, (size_t)cap, sizeof *words);
			}
			words[n].text = quoted_any || b.data ? st_buf_take(&b) : st_xstrdup("");
			words[n].line = wline;
			words[n].col = wcol;
			n++;
		}
		if (n == 0)
			continue;
		char **argv = st_xmalloc(sizeof *argv * (size_t)(n + 1));
		for (int i = 0; i < n; i++)
			argv[i] = words[i].text;
		argv[n] = NULL;
		char err[1024];
		if (st_session_exec(s, n, argv, err, sizeof err) != 0) {
			st_diag_add(d, ST_SEVERITY_ERROR, origin, words[0].line, words[0].col, "%s: %s",
			            words[0].text, err);
			rc = -1;
		}
		free(argv);
		for (int i = 0; i < n; i++)
			free(words[i].text);
		n = 0;
	}
out:
	for (int i = 0; i < n; i++)
		free(words[i].text);
	free(words);
	return rc;
}
