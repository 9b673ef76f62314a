/* The edit command `expand`: a layer replaced by the ordinary layers its
 * type's expansion (plugin ABI 2.3) describes, links and activation moved
 * over, all as one undoable step. Also the host's side of api->expand_*. */
#include "config.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core-edit.h"

#define MAX_PARTS 256
#define MAX_PART_LINKS 4096

/* A link into a part: from another part, or from the layer's input. */
typedef struct part_link {
	int input;
	int from;   /* index of an earlier part, or -1: the layer's input terminal `output` */
	int output;
} part_link;

/* A part as the plugin described it. */
typedef struct part {
	char *suffix;
	const st_layer_type *type;
	int column, row;
	char **set_names, **set_values;
	int n_sets;
	char *activation;
	part_link *links;
	int n_links;
} part;

/* What one expansion call collects, behind st_expansion.host_private. */
typedef struct expand_state {
	const st_registry *registry;
	const char *layer_name;
	const char *plugin;  /* the expansion's, for messages */
	int n_layer_inputs;
	part *parts;
	int n_parts;
	struct {
		int part, output;
	} outputs[ST_MAX_OUTPUTS];
	int n_outputs;
	bool failed;
	char reason[512];
} expand_state;

static void
state_fail(expand_state *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
state_fail(expand_state *st, const char *fmt, ...)
{
	if (st->failed)
		return; /* the first reason is the one that counts */
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(st->reason, sizeof st->reason, fmt, ap);
	va_end(ap);
	st->failed = true;
}

static expand_state *
state_of(st_expansion *e)
{
	return e != NULL ? e->host_private : NULL;
}

static int
find_part(expand_state *st, const char *suffix)
{
	for (int i = 0; suffix != NULL && i < st->n_parts; i++) {
		if (strcmp(st->parts[i].suffix, suffix) == 0)
			return i;
	}
	return -1;
}

/* The part named suffix, or -1 after recording why not (what names the call). */
static int
known_part(expand_state *st, const char *suffix, const char *what)
{
	int i = find_part(st, suffix);
	if (i < 0)
		state_fail(st, "the plugin's %s names the part '%s', which it has not described", what,
		           suffix ? suffix : "(null)");
	return i;
}

int
expand_host_part(st_expansion *e, const char *suffix, const char *layer_type, int column, int row)
{
	expand_state *st = state_of(e);
	if (st == NULL || st->failed)
		return -1;
	if (suffix == NULL || !st_is_identifier(suffix)) {
		state_fail(st, "the plugin described a part without a valid name (an identifier)");
		return -1;
	}
	if (find_part(st, suffix) >= 0) {
		state_fail(st, "the plugin described the part '%s' twice", suffix);
		return -1;
	}
	if (st->n_parts == MAX_PARTS) {
		state_fail(st, "the plugin described more than %d parts", MAX_PARTS);
		return -1;
	}
	const st_layer_type *type = layer_type ? st_registry_find_layer(st->registry, layer_type) : NULL;
	if (type == NULL) {
		state_fail(st, "part '%s' needs the layer type '%s', which no loaded plugin provides", suffix,
		           layer_type ? layer_type : "(null)");
		return -1;
	}
	if (column < -1000 || column > 1000 || row < -1000 || row > 1000) {
		state_fail(st, "part '%s' is placed too far away (column %d, row %d)", suffix, column, row);
		return -1;
	}
	st->parts = st_xreallocarray(st->parts, (size_t)st->n_parts + 1, sizeof *st->parts);
	st->parts[st->n_parts++] = (part){ .suffix = st_xstrdup(suffix), .type = type, .column = column, .row = row };
	return 0;
}

int
expand_host_set(st_expansion *e, const char *suffix, const char *param, const char *value)
{
	expand_state *st = state_of(e);
	if (st == NULL || st->failed)
		return -1;
	int i = known_part(st, suffix, "setting");
	if (i < 0)
		return -1;
	if (param == NULL || value == NULL) {
		state_fail(st, "the plugin set a parameter of part '%s' without a name or value", suffix);
		return -1;
	}
	part *p = &st->parts[i];
	if (p->n_sets == 256) {
		state_fail(st, "the plugin set too many parameters of part '%s'", suffix);
		return -1;
	}
	p->set_names = st_xreallocarray(p->set_names, (size_t)p->n_sets + 1, sizeof *p->set_names);
	p->set_values = st_xreallocarray(p->set_values, (size_t)p->n_sets + 1, sizeof *p->set_values);
	p->set_names[p->n_sets] = st_xstrdup(param);
	p->set_values[p->n_sets] = st_xstrdup(value);
	p->n_sets++;
	return 0;
}

int
expand_host_activation(st_expansion *e, const char *suffix, const char *activation)
{
	expand_state *st = state_of(e);
	if (st == NULL || st->failed)
		return -1;
	int i = known_part(st, suffix, "activation");
	if (i < 0)
		return -1;
	if (activation == NULL) {
		state_fail(st, "the plugin attached an activation without a name to part '%s'", suffix);
		return -1;
	}
	free(st->parts[i].activation);
	st->parts[i].activation = st_xstrdup(activation);
	return 0;
}

int
expand_host_link(st_expansion *e, const char *suffix, int input, const char *from, int output)
{
	expand_state *st = state_of(e);
	if (st == NULL || st->failed)
		return -1;
	int i = known_part(st, suffix, "link");
	if (i < 0)
		return -1;
	int src = -1;
	if (from != NULL) {
		src = known_part(st, from, "link");
		if (src < 0)
			return -1;
		/* Links run from earlier parts to later ones, so the parts can
		 * never form a cycle. */
		if (src >= i) {
			state_fail(st, "part '%s' is linked from '%s', which is not described before it", suffix, from);
			return -1;
		}
		if (output < 0 || output >= ST_MAX_OUTPUTS) {
			state_fail(st, "part '%s' is linked from output %d of '%s'", suffix, output, from);
			return -1;
		}
	} else if (output < 0 || output >= st->n_layer_inputs) {
		state_fail(st, "part '%s' is linked from input %d of '%s', which has %d", suffix, output,
		           st->layer_name, st->n_layer_inputs);
		return -1;
	}
	part *p = &st->parts[i];
	if (input < 0 || input >= 4096 || p->n_links == MAX_PART_LINKS) {
		state_fail(st, "part '%s' is linked at input %d", suffix, input);
		return -1;
	}
	p->links = st_xreallocarray(p->links, (size_t)p->n_links + 1, sizeof *p->links);
	p->links[p->n_links++] = (part_link){ input, src, output };
	return 0;
}

int
expand_host_output(st_expansion *e, const char *suffix, int output)
{
	expand_state *st = state_of(e);
	if (st == NULL || st->failed)
		return -1;
	int i = known_part(st, suffix, "output");
	if (i < 0)
		return -1;
	if (st->n_outputs == ST_MAX_OUTPUTS || output < 0 || output >= ST_MAX_OUTPUTS) {
		state_fail(st, "the plugin named too many outputs, or output %d of '%s'", output, suffix);
		return -1;
	}
	st->outputs[st->n_outputs].part = i;
	st->outputs[st->n_outputs].output = output;
	st->n_outputs++;
	return 0;
}

void
expand_host_fail(st_expansion *e, const char *fmt, ...)
{
	expand_state *st = state_of(e);
	if (st == NULL || st->failed || fmt == NULL)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(st->reason, sizeof st->reason, fmt, ap);
	va_end(ap);
	st->failed = true;
}

static void
state_free(expand_state *st)
{
	for (int i = 0; i < st->n_parts; i++) {
		part *p = &st->parts[i];
		free(p->suffix);
		for (int k = 0; k < p->n_sets; k++) {
			free(p->set_names[k]);
			free(p->set_values[k]);
		}
		free(p->set_names);
		free(p->set_values);
		free(p->activation);
		free(p->links);
	}
	free(st->parts);
}

/* Outputs the layer has now: declared, or found by the last check. */
static int
layer_outputs(const st_layer *l)
{
	if (l->type->desc->flags & ST_LAYER_VARIABLE_OUTPUTS)
		return l->outputs_known ? l->n_outputs : 0;
	return l->type->desc->n_outputs;
}

/* Whether input terminal `input` exists on a layer of type d. */
static bool
has_input(const st_layer_desc *d, int input)
{
	bool infinite = d->n_inputs > 0 && (d->inputs[d->n_inputs - 1].flags & ST_PORT_INFINITE);
	return input < d->n_inputs || (infinite && input >= 0);
}

/* Builds the parts into the graph in place of l, within the running
 * command. Returns 0, or -1 with the reason in err (the command then
 * undoes whatever was done). */
static int
build(st_session *s, st_layer *l, expand_state *st, char *err, size_t size)
{
	st_graph *g = st_session_graph(s);
	int n = st->n_parts;
	char **names = st_xcalloc((size_t)n, sizeof *names);
	st_layer **made = st_xcalloc((size_t)n, sizeof *made);
	int rc = -1;

	/* What the layer is linked to, before it goes. */
	int n_in = l->n_inputs;
	st_port *sources = st_xcalloc((size_t)(n_in ? n_in : 1), sizeof *sources);
	for (int i = 0; i < n_in; i++)
		sources[i] = l->inputs[i];
	int n_cons = l->n_consumers;
	st_consumer *consumers = st_xcalloc((size_t)(n_cons ? n_cons : 1), sizeof *consumers);
	int *from_output = st_xcalloc((size_t)(n_cons ? n_cons : 1), sizeof *from_output);
	for (int i = 0; i < n_cons; i++) {
		consumers[i] = l->consumers[i];
		const st_layer *c = consumers[i].layer;
		from_output[i] = c->inputs[consumers[i].input].output;
		if (from_output[i] >= st->n_outputs) {
			snprintf(err, size, "cannot expand '%s': '%s' reads its output %d, which the expansion does not give",
			         l->name, c->name, from_output[i]);
			goto out;
		}
	}
	for (int i = 0; i < n; i++) {
		names[i] = st_xasprintf("%s_%s", l->name, st->parts[i].suffix);
		if (edit_check_name(s, names[i], err, size) != 0) {
			char why[512];
			snprintf(why, sizeof why, "cannot expand '%s': %s; rename that layer first", l->name, err);
			snprintf(err, size, "%s", why);
			goto out;
		}
	}
	int output_part = st->outputs[0].part;
	if (l->act.type_name != NULL) {
		const part *op = &st->parts[output_part];
		if (!(op->type->desc->flags & ST_LAYER_ACTIVATION) || op->activation != NULL) {
			snprintf(err, size,
			         "cannot expand '%s': its activation %s has no place on the part '%s' (%s), which %s",
			         l->name, l->act.type_name, names[output_part], op->type->desc->name,
			         op->activation ? "has an activation of its own" : "takes none");
			goto out;
		}
	}

	int index = l->index, top = l->y, x0 = l->x, y0 = l->y, max_row = 0;
	st_layer_ref(l);
	edit_delete(s, l);
	for (int i = 0; i < n; i++) {
		const part *p = &st->parts[i];
		made[i] = st_layer_new(g->registry, p->type->desc->name, names[i]);
		made[i]->x = x0 + p->column * EDIT_COLUMN_STEP;
		made[i]->y = y0 + p->row * EDIT_ROW_STEP;
		if (p->row > max_row)
			max_row = p->row;
		edit_insert(s, made[i], index + i);
	}
	for (int i = 0; i < n; i++) {
		const part *p = &st->parts[i];
		for (int k = 0; k < p->n_sets; k++) {
			if (edit_set_text(s, made[i], p->set_names[k], p->set_values[k], err, size) != 0)
				goto expansion_bug;
		}
		if (p->activation != NULL && edit_attach(s, made[i], p->activation, err, size) != 0)
			goto expansion_bug;
		for (int k = 0; k < p->n_links; k++) {
			const part_link *ln = &p->links[k];
			/* Terminals of an infinite input fill in order. */
			if (!has_input(p->type->desc, ln->input) ||
			    (ln->input >= p->type->desc->n_inputs && ln->input > made[i]->n_inputs)) {
				snprintf(err, size, "%s has no input %d to link", p->type->desc->name, ln->input);
				goto expansion_bug;
			}
			st_port src = ln->from >= 0 ? (st_port){ made[ln->from], ln->output }
			                            : ln->output < n_in ? sources[ln->output] : (st_port){ NULL, 0 };
			if (src.layer != NULL)
				edit_link(s, made[i], ln->input, src);
		}
	}
	for (int i = 0; i < n_cons; i++) {
		int k = from_output[i];
		edit_link(s, consumers[i].layer, consumers[i].input,
		          (st_port){ made[st->outputs[k].part], st->outputs[k].output });
	}
	if (l->act.type_name != NULL)
		edit_set_activation(s, made[output_part], &l->act);
	/* The parts take max_row more rows of glyphs than the layer did: what
	 * lay below it moves down as much, keeping its shape. */
	if (max_row > 0) {
		for (int i = 0; i < g->n_layers; i++) {
			st_layer *o = g->layers[i];
			bool ours = false;
			for (int k = 0; k < n && !ours; k++)
				ours = o == made[k];
			if (!ours && o->y > top)
				edit_move(s, o, o->x, o->y + max_row * EDIT_ROW_STEP);
		}
	}
	st_buf list;
	st_buf_init(&list);
	for (int i = 0; i < n; i++)
		st_buf_printf(&list, "%s%s", i ? ", " : "", names[i]);
	edit_say(s, "expanded %s into %d layers: %s", l->name, n, list.data);
	st_buf_free(&list);
	st_layer_unref(l);
	rc = 0;
	goto out;

expansion_bug: {
	/* What the plugin described does not fit the parts' types: a plugin
	 * bug, said as such. */
	char why[512];
	snprintf(why, sizeof why, "cannot expand '%s': its expansion (plugin %s) describes parts that do not fit: %s",
	         l->name, st->plugin, err);
	snprintf(err, size, "%s", why);
	st_layer_unref(l);
}
out:
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
	free(made);
	free(sources);
	free(consumers);
	free(from_output);
	return rc;
}

int
cmd_expand(st_session *s, int argc, char **argv, char *err, size_t size)
{
	(void)argc;
	st_layer *l = edit_find_layer(s, argv[1], err, size);
	if (l == NULL)
		return -1;
	st_graph *g = st_session_graph(s);
	if (l->type == NULL) {
		snprintf(err, size, "'%s' has the unknown type '%s' and cannot be expanded", l->name, l->type_name);
		return -1;
	}
	const st_expansion_type *x = st_registry_find_expansion(g->registry, l->type->desc->name);
	if (x == NULL) {
		snprintf(err, size, "'%s' cannot be expanded: no loaded plugin describes the parts of %s layers",
		         l->name, l->type->desc->name);
		return -1;
	}
	/* The expansion may depend on input shapes: they come from the checker. */
	st_graph_check_incremental(g);
	const st_shape **inputs = st_xcalloc((size_t)(l->n_inputs ? l->n_inputs : 1), sizeof *inputs);
	for (int i = 0; i < l->n_inputs; i++) {
		st_port p = l->inputs[i];
		if (p.layer != NULL && p.layer->outputs_known && p.output < p.layer->n_outputs)
			inputs[i] = &p.layer->outputs[p.output];
	}
	expand_state st = { .registry = g->registry,
		            .layer_name = l->name,
		            .plugin = x->plugin->name ? x->plugin->name : "?",
		            .n_layer_inputs = l->n_inputs };
	st_expansion e = {
		.layer_name = l->name,
		.desc = l->type->desc,
		.params = l->params.values,
		.n_inputs = l->n_inputs,
		.inputs = inputs,
		.host_private = &st,
	};
	const st_plugin *was = st_plugin_enter(x->plugin);
	int rc = x->expand(&e, &st_host);
	st_plugin_leave(was);
	free(inputs);
	if (rc != 0 || st.failed || st.n_parts == 0 || st.n_outputs < layer_outputs(l)) {
		if (st.failed)
			snprintf(err, size, "cannot expand '%s': %s", l->name, st.reason);
		else if (rc != 0)
			snprintf(err, size, "cannot expand '%s': its expansion failed without saying why", l->name);
		else
			snprintf(err, size, "cannot expand '%s': its expansion describes %s", l->name,
			         st.n_parts == 0 ? "no parts" : "fewer outputs than the layer has");
		state_free(&st);
		return -1;
	}
	rc = build(s, l, &st, err, size);
	state_free(&st);
	return rc;
}
