/* The graph: layers, their links in both directions, names, and the marks
 * the type checker needs to re-check only what an edit touched. */
#include "config.h"

#include <assert.h>
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "st-core.h"

st_layer *
st_layer_new(const st_registry *registry, const char *type_name, const char *name)
{
	st_layer *l = st_xcalloc(1, sizeof *l);
	l->type = registry ? st_registry_find_layer(registry, type_name) : NULL;
	l->type_name = st_xstrdup(l->type ? l->type->desc->name : type_name);
	l->name = st_xstrdup(name);
	if (l->type != NULL) {
		const st_layer_desc *d = l->type->desc;
		st_params_init(&l->params, d->params, d->n_params, l->type->defaults);
		l->n_inputs = d->n_inputs;
	} else {
		st_params_init(&l->params, NULL, 0, NULL);
	}
	l->inputs = st_xcalloc((size_t)(l->n_inputs ? l->n_inputs : 1), sizeof *l->inputs);
	l->index = -1;
	return l;
}

void
st_layer_ref(st_layer *l)
{
	l->refs++;
}

static void
clear_messages(st_layer *l)
{
	for (int i = 0; i < l->n_messages; i++)
		free(l->messages[i].text);
	free(l->messages);
	l->messages = NULL;
	l->n_messages = 0;
}

void
st_layer_unref(st_layer *l)
{
	if (l == NULL || --l->refs > 0)
		return;
	free(l->name);
	free(l->type_name);
	st_params_clear(&l->params);
	free(l->act.type_name);
	st_params_clear(&l->act.coef);
	cJSON_Delete(l->act.extra);
	free(l->inputs);
	free(l->consumers);
	cJSON_Delete(l->extra);
	free(l->outputs);
	free(l->weights);
	clear_messages(l);
	free(l);
}

st_graph *
st_graph_new(const st_registry *registry)
{
	st_graph *g = st_xcalloc(1, sizeof *g);
	g->registry = registry;
	g->file_major = ST_MODEL_MAJOR;
	g->file_minor = ST_MODEL_MINOR;
	st_params_init(&g->network, st_network_params, ST_NET_COUNT, st_network_defaults());
	st_map_init(&g->names);
	return g;
}

void
st_graph_free(st_graph *g)
{
	if (g == NULL)
		return;
	for (int i = 0; i < g->n_layers; i++) {
		g->layers[i]->graph = NULL;
		g->layers[i]->index = -1;
		st_layer_unref(g->layers[i]);
	}
	for (int i = 0; i < g->n_dirty; i++)
		st_layer_unref(g->dirty[i]);
	free(g->dirty);
	free(g->layers);
	st_map_free(&g->names);
	st_params_clear(&g->network);
	cJSON_Delete(g->network_extra);
	cJSON_Delete(g->extra);
	free(g);
}

st_layer *
st_graph_find(const st_graph *g, const char *name)
{
	return st_map_get(&g->names, name);
}

void
st_graph_touch(st_graph *g, st_layer *l)
{
	if (l->state & ST_LAYER_DIRTY)
		return;
	l->state |= ST_LAYER_DIRTY;
	st_layer_ref(l);
	if (g->n_dirty == g->cap_dirty) {
		g->cap_dirty = g->cap_dirty ? g->cap_dirty * 2 : 16;
		g->dirty = st_xreallocarray(g->dirty, (size_t)g->cap_dirty, sizeof *g->dirty);
	}
	g->dirty[g->n_dirty++] = l;
}

void
st_graph_index_names(st_graph *g)
{
	st_map_free(&g->names);
	st_map_init(&g->names);
	for (int i = 0; i < g->n_layers; i++) {
		st_layer *l = g->layers[i];
		unsigned was = l->state & ST_LAYER_DUPLICATE;
		l->state &= ~ST_LAYER_DUPLICATE;
		st_layer *first = st_map_get(&g->names, l->name);
		if (first == NULL) {
			st_map_put(&g->names, l->name, l);
		} else {
			first->state |= ST_LAYER_DUPLICATE;
			l->state |= ST_LAYER_DUPLICATE;
		}
		if (was != (l->state & ST_LAYER_DUPLICATE))
			st_graph_touch(g, l);
	}
	/* A first holder newly marked above was visited before its mark changed. */
	for (int i = 0; i < g->n_layers; i++) {
		st_layer *l = g->layers[i];
		if ((l->state & ST_LAYER_DUPLICATE) && !(l->state & ST_LAYER_DIRTY))
			st_graph_touch(g, l);
	}
	g->names_dirty = false;
}

static void
add_consumer(st_layer *src, st_layer *dst, int input)
{
	if (src->n_consumers == src->cap_consumers) {
		src->cap_consumers = src->cap_consumers ? src->cap_consumers * 2 : 4;
		src->consumers = st_xreallocarray(src->consumers, (size_t)src->cap_consumers,
		                                  sizeof *src->consumers);
	}
	src->consumers[src->n_consumers].layer = dst;
	src->consumers[src->n_consumers].input = input;
	src->n_consumers++;
}

static void
remove_consumer(st_layer *src, st_layer *dst, int input)
{
	for (int i = src->n_consumers - 1; i >= 0; i--) {
		if (src->consumers[i].layer == dst && src->consumers[i].input == input) {
			memmove(&src->consumers[i], &src->consumers[i + 1],
			        sizeof *src->consumers * (size_t)(src->n_consumers - i - 1));
			src->n_consumers--;
			return;
		}
	}
	assert(!"link missing from its source's consumer list");
}

void
st_graph_insert(st_graph *g, st_layer *l, int index)
{
	assert(l->graph == NULL);
	if (index < 0 || index > g->n_layers)
		index = g->n_layers;
	if (g->n_layers == g->cap_layers) {
		g->cap_layers = g->cap_layers ? g->cap_layers * 2 : 16;
		g->layers = st_xreallocarray(g->layers, (size_t)g->cap_layers, sizeof *g->layers);
	}
	memmove(&g->layers[index + 1], &g->layers[index], sizeof *g->layers * (size_t)(g->n_layers - index));
	g->layers[index] = l;
	g->n_layers++;
	for (int i = index; i < g->n_layers; i++)
		g->layers[i]->index = i;
	l->graph = g;
	st_layer_ref(l);
	st_layer *first = st_map_get(&g->names, l->name);
	if (first == NULL)
		st_map_put(&g->names, l->name, l);
	else
		g->names_dirty = true;
	/* A layer without links can go last in any order; links fix it up. */
	l->topo = g->next_topo++;
	for (int i = 0; i < l->n_inputs; i++) {
		if (l->inputs[i].layer != NULL) {
			add_consumer(l->inputs[i].layer, l, i);
			g->order_dirty = true;
		}
	}
	st_graph_touch(g, l);
}

void
st_graph_remove(st_graph *g, st_layer *l)
{
	assert(l->graph == g);
	assert(l->n_consumers == 0);
	for (int i = 0; i < l->n_inputs; i++) {
		if (l->inputs[i].layer != NULL)
			remove_consumer(l->inputs[i].layer, l, i);
	}
	memmove(&g->layers[l->index], &g->layers[l->index + 1],
	        sizeof *g->layers * (size_t)(g->n_layers - l->index - 1));
	g->n_layers--;
	for (int i = l->index; i < g->n_layers; i++)
		g->layers[i]->index = i;
	if (st_map_get(&g->names, l->name) == l)
		st_map_remove(&g->names, l->name);
	if (l->state & ST_LAYER_DUPLICATE)
		g->names_dirty = true;
	/* Its messages leave the totals with it. */
	for (int i = 0; i < l->n_messages; i++) {
		if (l->messages[i].severity == ST_SEVERITY_ERROR)
			g->errors--;
		else if (l->messages[i].severity == ST_SEVERITY_WARNING)
			g->warnings--;
		else
			g->infos--;
	}
	clear_messages(l);
	l->outputs_known = false;
	l->n_outputs = 0;
	l->graph = NULL;
	l->index = -1;
	if (g->names_dirty)
		st_graph_index_names(g);
	st_layer_unref(l);
}

/* Whether the last input terminal of l's type repeats. */
static bool
last_infinite(const st_layer *l)
{
	if (l->type == NULL)
		return false;
	const st_layer_desc *d = l->type->desc;
	return d->n_inputs > 0 && (d->inputs[d->n_inputs - 1].flags & ST_PORT_INFINITE);
}

st_port
st_graph_set_input(st_graph *g, st_layer *dst, int input, st_port src)
{
	assert(input >= 0);
	st_port none = { NULL, 0 };
	if (input >= dst->n_inputs) {
		if (src.layer == NULL)
			return none;
		dst->inputs = st_xreallocarray(dst->inputs, (size_t)input + 1, sizeof *dst->inputs);
		memset(&dst->inputs[dst->n_inputs], 0, sizeof *dst->inputs * (size_t)(input + 1 - dst->n_inputs));
		dst->n_inputs = input + 1;
	}
	st_port old = dst->inputs[input];
	if (old.layer != NULL && dst->graph == g)
		remove_consumer(old.layer, dst, input);
	dst->inputs[input] = src;
	if (src.layer != NULL && dst->graph == g) {
		add_consumer(src.layer, dst, input);
		if (src.layer->topo >= dst->topo)
			g->order_dirty = true;
	}
	/* Trailing unlinked copies of an infinite terminal disappear. */
	if (last_infinite(dst)) {
		int base = dst->type->desc->n_inputs;
		while (dst->n_inputs > base && dst->inputs[dst->n_inputs - 1].layer == NULL)
			dst->n_inputs--;
	}
	st_graph_touch(g, dst);
	return old;
}

void
st_graph_set_terminal_count(st_graph *g, st_layer *l, int n)
{
	if (n < l->n_inputs) {
		/* Only unlinked terminals are ever cut. */
		while (l->n_inputs > n && l->inputs[l->n_inputs - 1].layer == NULL)
			l->n_inputs--;
	} else if (n > l->n_inputs) {
		l->inputs = st_xreallocarray(l->inputs, (size_t)n, sizeof *l->inputs);
		memset(&l->inputs[l->n_inputs], 0, sizeof *l->inputs * (size_t)(n - l->n_inputs));
		l->n_inputs = n;
	}
	st_graph_touch(g, l);
}

void
st_graph_rename(st_graph *g, st_layer *l, const char *name)
{
	if (st_map_get(&g->names, l->name) == l)
		st_map_remove(&g->names, l->name);
	bool was_duplicate = l->state & ST_LAYER_DUPLICATE;
	free(l->name);
	l->name = st_xstrdup(name);
	if (was_duplicate || st_map_get(&g->names, l->name) != NULL)
		st_graph_index_names(g);
	else
		st_map_put(&g->names, l->name, l);
	st_graph_touch(g, l);
	/* Messages downstream may quote the old name. */
	for (int i = 0; i < l->n_consumers; i++)
		st_graph_touch(g, l->consumers[i].layer);
}

bool
st_graph_would_cycle(const st_graph *g, const st_layer *src, const st_layer *dst)
{
	(void)g;
	if (src == dst)
		return true;
	/* Is src reachable downstream from dst? */
	st_layer **stack = NULL;
	int n = 0, cap = 0;
	bool found = false;
	st_layer **visited = NULL;
	int n_visited = 0;
	stack = st_xreallocarray(stack, (size_t)(cap = 16), sizeof *stack);
	stack[n++] = (st_layer *)dst;
	while (n > 0 && !found) {
		st_layer *l = stack[--n];
		if (l->state & ST_LAYER_MARK)
			continue;
		l->state |= ST_LAYER_MARK;
		visited = st_xreallocarray(visited, (size_t)n_visited + 1, sizeof *visited);
		visited[n_visited++] = l;
		for (int i = 0; i < l->n_consumers; i++) {
			st_layer *c = l->consumers[i].layer;
			if (c == src) {
				found = true;
				break;
			}
			if (!(c->state & ST_LAYER_MARK)) {
				if (n == cap)
					stack = st_xreallocarray(stack, (size_t)(cap *= 2), sizeof *stack);
				stack[n++] = c;
			}
		}
	}
	for (int i = 0; i < n_visited; i++)
		visited[i]->state &= ~ST_LAYER_MARK;
	free(visited);
	free(stack);
	return found;
}

char *
st_graph_generate_name(const st_graph *g, const st_layer_type *type, const char *type_name)
{
	const char *prefix = type_name;
	if (type != NULL)
		prefix = type->desc->aliases && type->desc->aliases[0] ? type->desc->aliases[0]
		                                                      : type->desc->name;
	if (!st_is_identifier(prefix))
		prefix = "layer";
	for (int n = 1;; n++) {
		char *name = st_xasprintf("%s_%d", prefix, n);
		if (st_graph_find(g, name) == NULL)
			return name;
		free(name);
	}
}

int
st_layer_terminal_count(const st_layer *l)
{
	if (l->type == NULL)
		return l->n_inputs;
	int n = l->n_inputs;
	if (last_infinite(l) && n > 0 && l->inputs[n - 1].layer != NULL)
		n++;
	return n;
}

bool
st_layer_input_mandatory(const st_layer *l, int input)
{
	if (l->type == NULL)
		return true;
	const st_layer_desc *d = l->type->desc;
	if (input < d->n_inputs)
		return !(d->inputs[input].flags & ST_PORT_OPTIONAL);
	return last_infinite(l) && input < l->n_inputs;
}

int64_t
st_layer_param_count(const st_layer *l)
{
	int64_t total = 0;
	for (int i = 0; i < l->n_weights; i++) {
		int64_t n = st_shape_elements(&l->weights[i].shape);
		if (n > 0)
			total = n > INT64_MAX - total ? INT64_MAX : total + n;
	}
	return total;
}
