/* The type checker: shapes flow from the inputs through every layer's
 * reshape. A full check orders the whole graph; an incremental one re-checks
 * the layers an edit touched and walks downstream only while shapes change. */
#include "config.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "st-core.h"

static void
count_messages(st_graph *g, const st_layer *l, int sign)
{
	for (int i = 0; i < l->n_messages; i++) {
		switch (l->messages[i].severity) {
		case ST_SEVERITY_ERROR:
			g->errors += sign;
			break;
		case ST_SEVERITY_WARNING:
			g->warnings += sign;
			break;
		default:
			g->infos += sign;
			break;
		}
	}
}

static void
add_message(st_layer *l, st_severity sev, char *text)
{
	l->messages = st_xreallocarray(l->messages, (size_t)l->n_messages + 1, sizeof *l->messages);
	l->messages[l->n_messages].severity = sev;
	l->messages[l->n_messages].text = text;
	l->n_messages++;
}

static void
reset_messages(st_graph *g, st_layer *l)
{
	count_messages(g, l, -1);
	for (int i = 0; i < l->n_messages; i++)
		free(l->messages[i].text);
	free(l->messages);
	l->messages = NULL;
	l->n_messages = 0;
}

static void
set_outputs(st_layer *l, bool known, int n, const st_shape *shapes)
{
	l->outputs_known = known;
	l->n_outputs = known ? n : 0;
	if (known && n > 0) {
		l->outputs = st_xreallocarray(l->outputs, (size_t)n, sizeof *l->outputs);
		memcpy(l->outputs, shapes, sizeof *shapes * (size_t)n);
	}
}

/* The checks every layer gets whatever its type: name, activation, params. */
static void
check_common(const st_graph *g, st_layer *l)
{
	const char *why = st_name_problem(l->name);
	if (why != NULL)
		add_message(l, ST_SEVERITY_ERROR, st_xasprintf("invalid name '%s': %s", l->name, why));
	if (l->state & ST_LAYER_DUPLICATE)
		add_message(l, ST_SEVERITY_ERROR,
		            st_xasprintf("the name '%s' is used by more than one layer", l->name));
	if (l->type == NULL) {
		const char *hint = st_registry_suggest_layer(g->registry, l->type_name);
		add_message(l, ST_SEVERITY_ERROR,
		            hint ? st_xasprintf("unknown layer type '%s': no loaded plugin provides it "
		                                "(did you mean '%s'?)",
		                                l->type_name, hint)
		                 : st_xasprintf("unknown layer type '%s': no loaded plugin provides it; "
		                                "the layer is kept as it is",
		                                l->type_name));
		return;
	}
	if (l->params.unknown != NULL) {
		for (const cJSON *p = l->params.unknown->child; p; p = p->next)
			add_message(l, ST_SEVERITY_WARNING,
			            st_xasprintf("parameter '%s' is unknown to %s here; it is kept but not used",
			                         p->string, l->type_name));
	}
	if (l->act.type_name != NULL) {
		if (!(l->type->desc->flags & ST_LAYER_ACTIVATION))
			add_message(l, ST_SEVERITY_ERROR,
			            st_xasprintf("%s layers take no activation, but '%s' is attached",
			                         l->type_name, l->act.type_name));
		else if (l->act.type == NULL)
			add_message(l, ST_SEVERITY_ERROR,
			            st_xasprintf("unknown activation '%s': no loaded plugin provides it",
			                         l->act.type_name));
		if (l->act.coef.unknown != NULL) {
			for (const cJSON *p = l->act.coef.unknown->child; p; p = p->next)
				add_message(l, ST_SEVERITY_WARNING,
				            st_xasprintf("activation %s has no coefficient '%s'; it is kept but not used",
				                         l->act.type_name, p->string));
		}
	}
}

/* Checks one layer; returns true when its outputs changed. */
static bool
check_layer(st_graph *g, st_layer *l, bool in_cycle)
{
	bool was_known = l->outputs_known;
	int old_n = l->n_outputs;
	st_shape old[ST_MAX_OUTPUTS];
	if (was_known && old_n > 0)
		memcpy(old, l->outputs, sizeof *old * (size_t)old_n);

	reset_messages(g, l);
	l->n_weights = 0;
	l->flops = 0;
	check_common(g, l);

	bool known = false;
	st_shape shapes[ST_MAX_OUTPUTS];
	int n_out = 0;
	if (in_cycle) {
		add_message(l, ST_SEVERITY_ERROR,
		            st_xstrdup("part of a cycle, or downstream of one: links must not loop back"));
	} else if (l->type != NULL) {
		const st_shape *stack_in[16];
		const st_shape **in = l->n_inputs <= 16 ? stack_in
		                                        : st_xmalloc(sizeof *in * (size_t)l->n_inputs);
		bool blocked = false;
		for (int i = 0; i < l->n_inputs; i++) {
			st_port p = l->inputs[i];
			in[i] = NULL;
			if (p.layer == NULL)
				continue;
			if (!p.layer->outputs_known) {
				blocked = true; /* its producer already carries the error */
			} else if (p.output < 0 || p.output >= p.layer->n_outputs) {
				add_message(l, ST_SEVERITY_ERROR,
				            st_xasprintf("input %d is linked to %s.%d, but '%s' has %d output%s", i,
				                         p.layer->name, p.output, p.layer->name, p.layer->n_outputs,
				                         p.layer->n_outputs == 1 ? "" : "s"));
				blocked = true;
			} else {
				in[i] = &p.layer->outputs[p.output];
			}
		}
		if (!blocked) {
			st_reshape r;
			st_message *msgs;
			int n_msgs;
			int rc = st_reshape_run(l->type, l->name, l->params.values, l->n_inputs, in, shapes, &r,
			                        &msgs, &n_msgs);
			for (int i = 0; i < n_msgs; i++)
				add_message(l, msgs[i].severity, msgs[i].text);
			free(msgs);
			if (rc == 0) {
				known = true;
				n_out = r.n_outputs;
				l->flops = r.flops;
				l->n_weights = r.n_weights;
				if (r.n_weights > 0) {
					l->weights = st_xreallocarray(l->weights, (size_t)r.n_weights, sizeof *l->weights);
					memcpy(l->weights, r.weights, sizeof *r.weights * (size_t)r.n_weights);
				}
			}
		}
		if (in != stack_in)
			free(in);
	}
	set_outputs(l, known, n_out, shapes);
	count_messages(g, l, +1);
	l->state &= ~ST_LAYER_DIRTY;

	if (known != was_known || n_out != old_n)
		return true;
	for (int i = 0; known && i < n_out; i++) {
		if (!st_shape_equal(&old[i], &l->outputs[i]))
			return true;
	}
	return false;
}

static void
drop_dirty(st_graph *g)
{
	for (int i = 0; i < g->n_dirty; i++) {
		g->dirty[i]->state &= ~ST_LAYER_DIRTY;
		st_layer_unref(g->dirty[i]);
	}
	g->n_dirty = 0;
}

void
st_graph_check(st_graph *g)
{
	int n = g->n_layers;
	st_layer **order = st_xmalloc(sizeof *order * (size_t)(n ? n : 1));
	int *pending = st_xmalloc(sizeof *pending * (size_t)(n ? n : 1));

	/* Names first: duplicates become messages on every holder. Inserting a
	 * taken name marks the index dirty, so a clean one has no duplicates. */
	if (g->names_dirty)
		st_graph_index_names(g);

	/* Kahn's algorithm, taking ready layers in file order. */
	int head = 0, tail = 0;
	for (int i = 0; i < n; i++) {
		st_layer *l = g->layers[i];
		pending[i] = 0;
		for (int k = 0; k < l->n_inputs; k++) {
			if (l->inputs[k].layer != NULL)
				pending[i]++;
		}
		if (pending[i] == 0)
			order[tail++] = l;
	}
	while (head < tail) {
		st_layer *l = order[head++];
		for (int c = 0; c < l->n_consumers; c++) {
			st_layer *dst = l->consumers[c].layer;
			if (--pending[dst->index] == 0)
				order[tail++] = dst;
		}
	}
	int ordered = tail;
	/* What is left lies on a cycle or downstream of one. */
	for (int i = 0; i < n; i++) {
		if (pending[i] > 0)
			order[tail++] = g->layers[i];
	}
	g->n_cycle = n - ordered;

	g->stats.full = true;
	g->stats.visited = 0;
	g->stats.considered = n;
	for (int i = 0; i < n; i++) {
		order[i]->topo = i;
		check_layer(g, order[i], i >= ordered);
		g->stats.visited++;
	}
	g->next_topo = n;
	drop_dirty(g);
	g->order_dirty = false;
	g->checked = true;
	free(order);
	free(pending);
}

/* A binary min-heap of layers by topological number. */
typedef struct heap {
	st_layer **items;
	int n, cap;
} heap;

static void
heap_push(heap *h, st_layer *l)
{
	if (h->n == h->cap) {
		h->cap = h->cap ? h->cap * 2 : 32;
		h->items = st_xreallocarray(h->items, (size_t)h->cap, sizeof *h->items);
	}
	int i = h->n++;
	while (i > 0) {
		int parent = (i - 1) / 2;
		if (h->items[parent]->topo <= l->topo)
			break;
		h->items[i] = h->items[parent];
		i = parent;
	}
	h->items[i] = l;
}

static st_layer *
heap_pop(heap *h)
{
	st_layer *top = h->items[0], *last = h->items[--h->n];
	int i = 0;
	for (;;) {
		int c = 2 * i + 1;
		if (c >= h->n)
			break;
		if (c + 1 < h->n && h->items[c + 1]->topo < h->items[c]->topo)
			c++;
		if (h->items[c]->topo >= last->topo)
			break;
		h->items[i] = h->items[c];
		i = c;
	}
	if (h->n > 0)
		h->items[i] = last;
	return top;
}

void
st_graph_check_incremental(st_graph *g)
{
	if (!g->checked || g->order_dirty || g->names_dirty || g->n_cycle > 0) {
		st_graph_check(g);
		g->stats.full = true;
		return;
	}
	heap h = { 0 };
	for (int i = 0; i < g->n_dirty; i++) {
		st_layer *l = g->dirty[i];
		if (l->graph == g && !(l->state & ST_LAYER_QUEUED)) {
			l->state |= ST_LAYER_QUEUED;
			heap_push(&h, l);
		}
	}
	drop_dirty(g);
	g->stats.full = false;
	g->stats.visited = 0;
	g->stats.considered = 0;
	while (h.n > 0) {
		st_layer *l = heap_pop(&h);
		l->state &= ~ST_LAYER_QUEUED;
		g->stats.considered++;
		g->stats.visited++;
		if (!check_layer(g, l, false))
			continue;
		for (int c = 0; c < l->n_consumers; c++) {
			st_layer *dst = l->consumers[c].layer;
			if (!(dst->state & ST_LAYER_QUEUED)) {
				dst->state |= ST_LAYER_QUEUED;
				heap_push(&h, dst);
			}
		}
	}
	free(h.items);
}

st_graph_message *
st_graph_messages(const st_graph *g, int *count)
{
	int n = 0;
	for (int i = 0; i < g->n_layers; i++)
		n += g->layers[i]->n_messages;
	st_graph_message *out = st_xmalloc(sizeof *out * (size_t)(n ? n : 1));
	int k = 0;
	for (int i = 0; i < g->n_layers; i++) {
		const st_layer *l = g->layers[i];
		for (int m = 0; m < l->n_messages; m++) {
			out[k].layer = l;
			out[k].severity = l->messages[m].severity;
			out[k].text = l->messages[m].text;
			k++;
		}
	}
	*count = n;
	return out;
}
