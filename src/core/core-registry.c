/* The layer registry: plugins register layer types and activations here, and
 * everything else looks them up by name. Also runs reshape functions. */
#include "config.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core-edit.h"
#include "st-algo-cache.h"
#include "st-core.h"
#include "st-io.h"

/* What one call of a plugin's entry point registers; committed only when the
 * plugin as a whole is accepted. */
struct st_plugin_ctx {
	st_registry *registry;
	st_plugin *plugin;
	bool declared;
	char *refusal;
	st_layer_type **types;
	int n_types;
	st_activation_type **acts;
	int n_acts;
	st_impl *impls;
	int n_impls;
	st_activation_impl_entry *act_impls;
	int n_act_impls;
	st_block_type **blocks;
	int n_blocks;
	st_expansion_type *expansions;
	int n_expansions;
};

static void
plugin_note(st_plugin *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
plugin_note(st_plugin *p, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	p->notes = st_xreallocarray(p->notes, (size_t)p->n_notes + 1, sizeof *p->notes);
	p->notes[p->n_notes++] = st_xvasprintf(fmt, ap);
	va_end(ap);
}

static void
defaults_free(st_value *defaults, int n)
{
	for (int i = 0; defaults && i < n; i++)
		st_value_clear(&defaults[i]);
	free(defaults);
}

/* Runtime options (ABI 2.1) must be scalars the engine can change between
 * runs in place; triggers are booleans and labels are text. Returns 0, or -1
 * with the reason in err. */
static int
check_runtime_flags(const st_param_desc *p, char *err, size_t size)
{
	unsigned f = p->flags;
	if (!(f & (ST_PARAM_RUNTIME | ST_PARAM_TRIGGER | ST_PARAM_LABEL)))
		return 0;
	if (p->kind == ST_PARAM_DIMS || p->kind == ST_PARAM_FLOATS) {
		snprintf(err, size,
		         "parameter '%s' is a runtime option of kind %s, but runtime options must be "
		         "scalars (bool, int, float, enum or string)",
		         p->name, st_param_kind_name(p->kind));
		return -1;
	}
	if ((f & ST_PARAM_TRIGGER) && (f & ST_PARAM_LABEL)) {
		snprintf(err, size, "parameter '%s' cannot be both a trigger and a label", p->name);
		return -1;
	}
	if ((f & ST_PARAM_TRIGGER) && p->kind != ST_PARAM_BOOL) {
		snprintf(err, size, "parameter '%s' is a trigger, which must be a bool, not %s", p->name,
		         st_param_kind_name(p->kind));
		return -1;
	}
	if ((f & ST_PARAM_LABEL) && p->kind != ST_PARAM_STRING) {
		snprintf(err, size, "parameter '%s' is a label, which must be a string, not %s", p->name,
		         st_param_kind_name(p->kind));
		return -1;
	}
	return 0;
}

/*
 * Checks a parameter table and parses its defaults. Returns the defaults
 * (caller frees with defaults_free) or NULL with a reason in err.
 */
static st_value *
check_params(const st_param_desc *params, int n, char *err, size_t size)
{
	if (n < 0 || (n > 0 && params == NULL)) {
		snprintf(err, size, "its parameter table is missing");
		return NULL;
	}
	st_value *defaults = st_xcalloc((size_t)(n ? n : 1), sizeof *defaults);
	for (int i = 0; i < n; i++) {
		const st_param_desc *p = &params[i];
		if (p->name == NULL || !st_is_identifier(p->name)) {
			snprintf(err, size, "parameter %d has no valid name", i);
			goto bad;
		}
		for (int j = 0; j < i; j++) {
			if (strcmp(params[j].name, p->name) == 0) {
				snprintf(err, size, "parameter '%s' is declared twice", p->name);
				goto bad;
			}
		}
		if ((unsigned)p->kind > ST_PARAM_FLOATS) {
			snprintf(err, size, "parameter '%s' has an unknown kind", p->name);
			goto bad;
		}
		if (p->kind == ST_PARAM_ENUM && (p->enum_values == NULL || p->enum_values[0] == NULL)) {
			snprintf(err, size, "enum parameter '%s' lists no values", p->name);
			goto bad;
		}
		if (p->doc == NULL || p->doc[0] == '\0') {
			snprintf(err, size, "parameter '%s' has no documentation", p->name);
			goto bad;
		}
		if (p->default_value == NULL) {
			snprintf(err, size, "parameter '%s' has no default", p->name);
			goto bad;
		}
		if (check_runtime_flags(p, err, size) != 0)
			goto bad;
		char why[256];
		if (st_value_from_text(p, p->default_value, &defaults[i], why, sizeof why) != 0) {
			snprintf(err, size, "the default of parameter '%s' %s", p->name, why);
			goto bad;
		}
	}
	return defaults;
bad:
	defaults_free(defaults, n);
	return NULL;
}

/* Type names and aliases are identifiers; unlike layer names they may be C
 * keywords ("const" is the constant layer's alias). */
static bool
valid_type_name(const char *s)
{
	const char *why = st_name_problem(s);
	return why == NULL || strcmp(why, "a name cannot be a C keyword") == 0;
}

static bool
name_taken(const st_plugin_ctx *ctx, const char *name)
{
	if (st_map_get(&ctx->registry->type_names, name) != NULL)
		return true;
	for (int i = 0; i < ctx->n_types; i++) {
		const st_layer_desc *d = ctx->types[i]->desc;
		if (strcmp(d->name, name) == 0)
			return true;
		for (int k = 0; d->aliases && d->aliases[k]; k++) {
			if (strcmp(d->aliases[k], name) == 0)
				return true;
		}
	}
	return false;
}

static const char *
owner_of(const st_plugin_ctx *ctx, const char *name)
{
	const st_layer_type *t = st_map_get(&ctx->registry->type_names, name);
	if (t != NULL && t->plugin->name != NULL)
		return t->plugin->name;
	return ctx->plugin->name ? ctx->plugin->name : "this plugin";
}

static int
host_declare(st_plugin_ctx *ctx, const st_plugin_info *info)
{
	st_plugin *p = ctx->plugin;
	if (ctx->declared) {
		plugin_note(p, "declared itself twice; the second declaration is ignored");
		return -1;
	}
	if (info == NULL || info->name == NULL || !st_is_identifier(info->name)) {
		free(ctx->refusal);
		ctx->refusal = st_xstrdup("its declaration has no valid name (a C identifier)");
		return -1;
	}
	for (int i = 0; i < ctx->registry->n_plugins; i++) {
		st_plugin *other = ctx->registry->plugins[i];
		if (other != p && other->loaded && other->name && strcmp(other->name, info->name) == 0) {
			free(ctx->refusal);
			ctx->refusal = st_xasprintf("a plugin named '%s' is already loaded from %s",
			                            info->name, other->path);
			return -1;
		}
	}
	p->name = st_xstrdup(info->name);
	p->author = st_xstrdup(info->author ? info->author : "");
	p->description = st_xstrdup(info->description ? info->description : "");
	p->version = st_xstrdup(info->version ? info->version : "");
	ctx->declared = true;
	return 0;
}

static int
host_register_layer(st_plugin_ctx *ctx, const st_layer_desc *d)
{
	st_plugin *p = ctx->plugin;
	char err[512];
	if (!ctx->declared) {
		plugin_note(p, "a layer type was registered before the plugin declared itself");
		return -1;
	}
	if (d == NULL || d->name == NULL || !valid_type_name(d->name)) {
		plugin_note(p, "a layer type without a valid name was refused");
		return -1;
	}
	if (name_taken(ctx, d->name)) {
		plugin_note(p, "layer type '%s' refused: the name is already provided by plugin '%s'",
		            d->name, owner_of(ctx, d->name));
		return -1;
	}
	if (d->reshape == NULL) {
		plugin_note(p, "layer type '%s' refused: it has no reshape function", d->name);
		return -1;
	}
	if (d->n_inputs < 0 || (d->n_inputs > 0 && d->inputs == NULL) || d->n_outputs < 0 ||
	    d->n_outputs > ST_MAX_OUTPUTS || (d->n_outputs > 0 && d->outputs == NULL)) {
		plugin_note(p, "layer type '%s' refused: its input or output table is invalid", d->name);
		return -1;
	}
	for (int i = 0; i + 1 < d->n_inputs; i++) {
		if (d->inputs[i].flags & ST_PORT_INFINITE) {
			plugin_note(p, "layer type '%s' refused: only its last input may be infinite", d->name);
			return -1;
		}
	}
	st_value *defaults = check_params(d->params, d->n_params, err, sizeof err);
	if (defaults == NULL) {
		plugin_note(p, "layer type '%s' refused: %s", d->name, err);
		return -1;
	}
	/* Aliases that are invalid or taken (by any name or alias so far, or
	 * repeated here) are left out, with a note; the commit skips them too. */
	for (int k = 0; d->aliases && d->aliases[k]; k++) {
		const char *a = d->aliases[k];
		bool clash = !valid_type_name(a) || strcmp(a, d->name) == 0 || name_taken(ctx, a);
		for (int j = 0; !clash && j < k; j++)
			clash = strcmp(d->aliases[j], a) == 0;
		if (clash)
			plugin_note(p, "alias '%s' of '%s' is invalid or already taken; it is ignored", a,
			            d->name);
	}
	st_layer_type *t = st_xcalloc(1, sizeof *t);
	t->desc = d;
	t->plugin = p;
	t->defaults = defaults;
	ctx->types = st_xreallocarray(ctx->types, (size_t)ctx->n_types + 1, sizeof *ctx->types);
	ctx->types[ctx->n_types++] = t;
	return 0;
}

static int
host_register_activation(st_plugin_ctx *ctx, const st_activation_desc *d)
{
	st_plugin *p = ctx->plugin;
	char err[512];
	if (!ctx->declared) {
		plugin_note(p, "an activation was registered before the plugin declared itself");
		return -1;
	}
	if (d == NULL || d->name == NULL || !st_is_identifier(d->name) || strcmp(d->name, "none") == 0) {
		plugin_note(p, "an activation without a valid name was refused");
		return -1;
	}
	bool taken = st_map_get(&ctx->registry->activation_names, d->name) != NULL;
	for (int i = 0; i < ctx->n_acts && !taken; i++)
		taken = strcmp(ctx->acts[i]->desc->name, d->name) == 0;
	if (taken) {
		plugin_note(p, "activation '%s' refused: the name is already taken", d->name);
		return -1;
	}
	st_value *defaults = check_params(d->params, d->n_params, err, sizeof err);
	if (defaults == NULL) {
		plugin_note(p, "activation '%s' refused: %s", d->name, err);
		return -1;
	}
	st_activation_type *a = st_xcalloc(1, sizeof *a);
	a->desc = d;
	a->plugin = p;
	a->defaults = defaults;
	ctx->acts = st_xreallocarray(ctx->acts, (size_t)ctx->n_acts + 1, sizeof *ctx->acts);
	ctx->acts[ctx->n_acts++] = a;
	return 0;
}

static int
host_register_impl(st_plugin_ctx *ctx, const st_impl_desc *d)
{
	st_plugin *p = ctx->plugin;
	if (!ctx->declared) {
		plugin_note(p, "an implementation was registered before the plugin declared itself");
		return -1;
	}
	if (d == NULL || d->layer == NULL || d->backend == NULL || d->run == NULL || d->layouts == 0) {
		plugin_note(p, "an implementation without a layer type, backend, layouts or run function "
		               "was refused");
		return -1;
	}
	if ((d->flags & ST_IMPL_CHOOSES_LAYOUT) && d->choose_layout == NULL) {
		plugin_note(p, "the %s implementation of '%s' refused: it says it chooses layouts but has no "
		               "choose_layout", d->backend, d->layer);
		return -1;
	}
	if ((d->flags & ST_IMPL_CHOOSES_DTYPE) && d->choose_dtype == NULL) {
		plugin_note(p, "the %s implementation of '%s' refused: it says it chooses float types but has no "
		               "choose_dtype", d->backend, d->layer);
		return -1;
	}
	bool taken = st_registry_find_impl(ctx->registry, d->layer, d->backend) != NULL;
	for (int i = 0; i < ctx->n_impls && !taken; i++)
		taken = strcmp(ctx->impls[i].desc->layer, d->layer) == 0 &&
		        strcmp(ctx->impls[i].desc->backend, d->backend) == 0;
	if (taken) {
		plugin_note(p, "the %s implementation of '%s' refused: one is already registered", d->backend,
		            d->layer);
		return -1;
	}
	ctx->impls = st_xreallocarray(ctx->impls, (size_t)ctx->n_impls + 1, sizeof *ctx->impls);
	ctx->impls[ctx->n_impls].desc = d;
	ctx->impls[ctx->n_impls].plugin = p;
	ctx->n_impls++;
	return 0;
}

static int
host_register_activation_impl(st_plugin_ctx *ctx, const st_activation_impl *d)
{
	st_plugin *p = ctx->plugin;
	if (!ctx->declared || d == NULL || d->activation == NULL || d->apply == NULL) {
		plugin_note(p, "an activation implementation without a name or function was refused");
		return -1;
	}
	bool taken = st_registry_find_activation_impl(ctx->registry, d->activation) != NULL;
	for (int i = 0; i < ctx->n_act_impls && !taken; i++)
		taken = strcmp(ctx->act_impls[i].desc->activation, d->activation) == 0;
	if (taken) {
		plugin_note(p, "the implementation of activation '%s' refused: one is already registered",
		            d->activation);
		return -1;
	}
	ctx->act_impls = st_xreallocarray(ctx->act_impls, (size_t)ctx->n_act_impls + 1,
	                                  sizeof *ctx->act_impls);
	ctx->act_impls[ctx->n_act_impls].desc = d;
	ctx->act_impls[ctx->n_act_impls].plugin = p;
	ctx->n_act_impls++;
	return 0;
}

/* ---- expansions and blocks (ABI 2.3) ---- */

static int
host_register_expansion(st_plugin_ctx *ctx, const char *layer_type, st_expand_fn expand)
{
	st_plugin *p = ctx->plugin;
	if (!ctx->declared) {
		plugin_note(p, "an expansion was registered before the plugin declared itself");
		return -1;
	}
	if (layer_type == NULL || !valid_type_name(layer_type) || expand == NULL) {
		plugin_note(p, "an expansion without a valid layer type name or function was refused");
		return -1;
	}
	bool taken = false;
	for (int i = 0; i < ctx->registry->n_expansions && !taken; i++)
		taken = strcmp(ctx->registry->expansions[i].layer, layer_type) == 0;
	for (int i = 0; i < ctx->n_expansions && !taken; i++)
		taken = strcmp(ctx->expansions[i].layer, layer_type) == 0;
	if (taken) {
		plugin_note(p, "the expansion of '%s' refused: one is already registered", layer_type);
		return -1;
	}
	ctx->expansions = st_xreallocarray(ctx->expansions, (size_t)ctx->n_expansions + 1,
	                                   sizeof *ctx->expansions);
	ctx->expansions[ctx->n_expansions++] = (st_expansion_type){ st_xstrdup(layer_type), expand, p };
	return 0;
}

static bool
block_name_taken(const st_plugin_ctx *ctx, const char *name)
{
	for (int pass = 0; pass < 2; pass++) {
		st_block_type *const *list = pass ? ctx->blocks : ctx->registry->blocks;
		int n = pass ? ctx->n_blocks : ctx->registry->n_blocks;
		for (int i = 0; i < n; i++) {
			const st_block_desc *d = list[i]->desc;
			if (strcmp(d->name, name) == 0)
				return true;
			for (int k = 0; d->aliases && d->aliases[k]; k++) {
				if (strcmp(d->aliases[k], name) == 0)
					return true;
			}
		}
	}
	return false;
}

/* Checks one part of a block; returns 0 or -1 with the reason in err. */
static int
check_block_part(const st_block_desc *d, int i, char *err, size_t size)
{
	const st_block_part *part = &d->parts[i];
	if (part->role == NULL || !st_is_identifier(part->role)) {
		snprintf(err, size, "part %d has no valid role (an identifier such as \"conv\")", i);
		return -1;
	}
	for (int j = 0; j < i; j++) {
		if (strcmp(d->parts[j].role, part->role) == 0) {
			snprintf(err, size, "the role '%s' is given to two parts", part->role);
			return -1;
		}
	}
	if (part->layer_type == NULL || !valid_type_name(part->layer_type)) {
		snprintf(err, size, "part '%s' has no valid layer type name", part->role);
		return -1;
	}
	for (int k = 0; part->params && part->params[k]; k += 2) {
		if (!st_is_identifier(part->params[k]) || part->params[k + 1] == NULL) {
			snprintf(err, size, "the defaults of part '%s' must be name, value pairs ending in NULL",
			         part->role);
			return -1;
		}
	}
	if (part->activation != NULL && !st_is_identifier(part->activation)) {
		snprintf(err, size, "part '%s' has an invalid activation name", part->role);
		return -1;
	}
	if (part->reserved[0] != NULL || part->reserved[1] != NULL) {
		snprintf(err, size, "part '%s' fills reserved members this Strata does not know", part->role);
		return -1;
	}
	return 0;
}

static int
host_register_block(st_plugin_ctx *ctx, const st_block_desc *d)
{
	st_plugin *p = ctx->plugin;
	char err[256];
	if (!ctx->declared) {
		plugin_note(p, "a block was registered before the plugin declared itself");
		return -1;
	}
	if (d == NULL || d->name == NULL || !st_is_identifier(d->name)) {
		plugin_note(p, "a block without a valid name was refused");
		return -1;
	}
	if (block_name_taken(ctx, d->name)) {
		plugin_note(p, "block '%s' refused: the name is already taken", d->name);
		return -1;
	}
	if (d->summary == NULL || d->parts == NULL || d->n_parts < 1 || d->n_parts > ST_BLOCK_MAX_PARTS) {
		plugin_note(p, "block '%s' refused: it needs a summary and 1 to %d parts", d->name,
		            ST_BLOCK_MAX_PARTS);
		return -1;
	}
	for (int i = 0; i < 4; i++) {
		if (d->reserved[i] != NULL) {
			plugin_note(p, "block '%s' refused: it fills reserved members this Strata does not know",
			            d->name);
			return -1;
		}
	}
	for (int i = 0; i < d->n_parts; i++) {
		if (check_block_part(d, i, err, sizeof err) != 0) {
			plugin_note(p, "block '%s' refused: %s", d->name, err);
			return -1;
		}
	}
	int n_order = 0;
	for (; d->order && d->order[n_order]; n_order++) {
		bool known = false, again = false;
		for (int i = 0; i < d->n_parts; i++)
			known = known || strcmp(d->parts[i].role, d->order[n_order]) == 0;
		for (int k = 0; k < n_order; k++)
			again = again || strcmp(d->order[k], d->order[n_order]) == 0;
		if (!known || again) {
			plugin_note(p, "block '%s' refused: its order names '%s', %s", d->name, d->order[n_order],
			            known ? "twice" : "which is no part's role");
			return -1;
		}
	}
	if (n_order == 0) {
		plugin_note(p, "block '%s' refused: its default order is empty", d->name);
		return -1;
	}
	for (int k = 0; d->aliases && d->aliases[k]; k++) {
		if (!st_is_identifier(d->aliases[k]) || block_name_taken(ctx, d->aliases[k]))
			plugin_note(p, "alias '%s' of block '%s' is invalid or already taken; it is ignored",
			            d->aliases[k], d->name);
	}
	st_block_type *b = st_xcalloc(1, sizeof *b);
	b->desc = d;
	b->plugin = p;
	ctx->blocks = st_xreallocarray(ctx->blocks, (size_t)ctx->n_blocks + 1, sizeof *ctx->blocks);
	ctx->blocks[ctx->n_blocks++] = b;
	return 0;
}

static void
host_fail(st_exec_layer *L, const char *fmt, ...)
{
	st_exec_report *rep = L ? L->host_private : NULL;
	if (rep == NULL || rep->failed)
		return; /* the first reason is the one that counts */
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(rep->text, sizeof rep->text, fmt, ap);
	va_end(ap);
	rep->failed = true;
}

static void
host_status(st_exec_layer *L, st_severity severity, const char *fmt, ...)
{
	st_exec_report *rep = L ? L->host_private : NULL;
	if (rep == NULL || fmt == NULL)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(rep->status, sizeof rep->status, fmt, ap);
	va_end(ap);
	rep->status_severity = (unsigned)severity > ST_SEVERITY_INFO ? ST_SEVERITY_ERROR : severity;
	rep->has_status = true;
}

/* The plugin ABI numbers the maps itself, so that st-plugin.h needs no
 * other header; these keep the two numberings one. */
_Static_assert(ST_HOST_COLORMAP_GRAY == (int)ST_COLORMAP_GRAY, "colour map numbering");
_Static_assert(ST_HOST_COLORMAP_VIRIDIS == (int)ST_COLORMAP_VIRIDIS, "colour map numbering");
_Static_assert(ST_HOST_COLORMAP_HEAT == (int)ST_COLORMAP_HEAT, "colour map numbering");
_Static_assert(ST_HOST_COLORMAP_DIVERGING == (int)ST_COLORMAP_DIVERGING, "colour map numbering");

static void
host_colormap_rgb(int map, double t, float rgb[3])
{
	st_colormap_rgb((unsigned)map < ST_COLORMAP_COUNT ? (st_colormap)map : ST_COLORMAP_GRAY, t, rgb);
}

static void
host_refuse(st_plugin_ctx *ctx, const char *reason)
{
	free(ctx->refusal);
	ctx->refusal = st_xstrdup(reason ? reason : "the plugin refused to load");
}

/* Reshape-time state behind st_reshape.host_private. */
typedef struct reshape_state {
	st_message *messages;
	int n_messages;
	bool error;
} reshape_state;

static void
state_add(reshape_state *st, st_severity sev, char *text)
{
	st->messages = st_xreallocarray(st->messages, (size_t)st->n_messages + 1, sizeof *st->messages);
	st->messages[st->n_messages].severity = sev;
	st->messages[st->n_messages].text = text;
	st->n_messages++;
	if (sev == ST_SEVERITY_ERROR)
		st->error = true;
}

static void
host_message(st_reshape *r, st_severity sev, const char *fmt, ...)
{
	reshape_state *st = r->host_private;
	if (st == NULL)
		return;
	if ((unsigned)sev > ST_SEVERITY_INFO)
		sev = ST_SEVERITY_ERROR;
	if (st->n_messages >= 32) {
		/* Past the cap messages are dropped, but an error still counts. */
		if (sev == ST_SEVERITY_ERROR)
			st->error = true;
		return;
	}
	va_list ap;
	va_start(ap, fmt);
	state_add(st, sev, st_xvasprintf(fmt, ap));
	va_end(ap);
}

static int
host_add_weight(st_reshape *r, const char *name, const st_shape *shape, bool optional)
{
	if (name == NULL || shape == NULL || strlen(name) >= ST_WEIGHT_NAME_MAX || !st_is_identifier(name)) {
		host_message(r, ST_SEVERITY_ERROR, "the plugin declared a weight without a valid name");
		return -1;
	}
	if (r->n_weights >= ST_MAX_WEIGHTS) {
		host_message(r, ST_SEVERITY_ERROR, "the plugin declared more than %d weights (at '%s')",
		             ST_MAX_WEIGHTS, name);
		return -1;
	}
	bool bad = shape->rank < 0 || shape->rank > ST_MAX_RANK;
	for (int i = 0; !bad && i < shape->rank; i++)
		bad = shape->dims[i] < 0;
	if (bad || st_shape_bytes(shape) < 0) {
		host_message(r, ST_SEVERITY_ERROR, "weight '%s' has an invalid or too large shape", name);
		return -1;
	}
	st_weight_desc *w = &r->weights[r->n_weights++];
	snprintf(w->name, sizeof w->name, "%s", name);
	w->shape = *shape;
	w->optional = optional;
	return 0;
}

const st_host_api st_host = {
	.abi_version = ST_PLUGIN_ABI_VERSION,
	.size = sizeof(st_host_api),
	.declare = host_declare,
	.register_layer = host_register_layer,
	.register_activation = host_register_activation,
	.refuse = host_refuse,
	.message = host_message,
	.add_weight = host_add_weight,
	.dtype_name = st_dtype_name,
	.shape_elements = st_shape_elements,
	.shape_format = st_shape_format,
	.register_impl = host_register_impl,
	.register_activation_impl = host_register_activation_impl,
	.fail = host_fail,
	.half_to_float = st_half_to_float,
	.float_to_half = st_float_to_half,
	.status = host_status,
	.colormap_rgb = host_colormap_rgb,
	.abi_minor = ST_PLUGIN_ABI_MINOR,
	.register_expansion = host_register_expansion,
	.register_block = host_register_block,
	.expand_part = expand_host_part,
	.expand_set = expand_host_set,
	.expand_activation = expand_host_activation,
	.expand_link = expand_host_link,
	.expand_output = expand_host_output,
	.expand_fail = expand_host_fail,
	.algo_find = st_algo_host_find,
	.algo_keep = st_algo_host_keep,
};

/* ---- registry ---- */

st_registry *
st_registry_new(void)
{
	st_registry *r = st_xcalloc(1, sizeof *r);
	st_map_init(&r->type_names);
	st_map_init(&r->activation_names);
	return r;
}

static void
plugin_free(st_plugin *p)
{
	free(p->path);
	free(p->name);
	free(p->author);
	free(p->description);
	free(p->version);
	free(p->refusal);
	for (int i = 0; i < p->n_notes; i++)
		free(p->notes[i]);
	free(p->notes);
	free(p);
}

void
st_registry_free(st_registry *r)
{
	if (r == NULL)
		return;
	for (int i = 0; i < r->n_types; i++) {
		defaults_free(r->types[i]->defaults, r->types[i]->desc->n_params);
		free(r->types[i]);
	}
	for (int i = 0; i < r->n_activations; i++) {
		defaults_free(r->activations[i]->defaults, r->activations[i]->desc->n_params);
		free(r->activations[i]);
	}
	for (int i = 0; i < r->n_blocks; i++)
		free(r->blocks[i]);
	free(r->blocks);
	for (int i = 0; i < r->n_expansions; i++)
		free(r->expansions[i].layer);
	free(r->expansions);
	free(r->types);
	free(r->activations);
	free(r->impls);
	free(r->activation_impls);
	st_map_free(&r->type_names);
	st_map_free(&r->activation_names);
	for (int i = 0; i < r->n_plugins; i++) {
		/* Sanitizer builds keep plugins mapped so that leak reports can name them. */
#ifndef ST_KEEP_PLUGINS_LOADED
		if (r->plugins[i]->handle)
			dlclose(r->plugins[i]->handle);
#endif
		plugin_free(r->plugins[i]);
	}
	free(r->plugins);
	for (int i = 0; i < r->n_disabled; i++)
		free(r->disabled[i]);
	free(r->disabled);
	for (int i = 0; i < r->n_deferred; i++)
		free(r->deferred[i]);
	free(r->deferred);
	free(r);
}

void
st_registry_disable(st_registry *r, const char *name)
{
	r->disabled = st_xreallocarray(r->disabled, (size_t)r->n_disabled + 1, sizeof *r->disabled);
	r->disabled[r->n_disabled++] = st_xstrdup(name);
}

static bool
is_disabled(const st_registry *r, const char *name)
{
	for (int i = 0; name && i < r->n_disabled; i++) {
		if (strcmp(r->disabled[i], name) == 0)
			return true;
	}
	return false;
}

static st_plugin *
plugin_add(st_registry *r, const char *path)
{
	st_plugin *p = st_xcalloc(1, sizeof *p);
	p->path = st_xstrdup(path);
	r->plugins = st_xreallocarray(r->plugins, (size_t)r->n_plugins + 1, sizeof *r->plugins);
	r->plugins[r->n_plugins++] = p;
	return p;
}

static void
ctx_discard(st_plugin_ctx *ctx)
{
	for (int i = 0; i < ctx->n_types; i++) {
		defaults_free(ctx->types[i]->defaults, ctx->types[i]->desc->n_params);
		free(ctx->types[i]);
	}
	for (int i = 0; i < ctx->n_acts; i++) {
		defaults_free(ctx->acts[i]->defaults, ctx->acts[i]->desc->n_params);
		free(ctx->acts[i]);
	}
	for (int i = 0; i < ctx->n_blocks; i++)
		free(ctx->blocks[i]);
	for (int i = 0; i < ctx->n_expansions; i++)
		free(ctx->expansions[i].layer);
	free(ctx->blocks);
	free(ctx->expansions);
	free(ctx->types);
	free(ctx->acts);
	free(ctx->impls);
	free(ctx->act_impls);
	free(ctx->refusal);
}

static _Thread_local const st_plugin *running;

const st_plugin *
st_plugin_current(void)
{
	return running;
}

const st_plugin *
st_plugin_enter(const st_plugin *p)
{
	const st_plugin *before = running;
	running = p;
	return before;
}

void
st_plugin_leave(const st_plugin *previous)
{
	running = previous;
}

/* Runs an entry point and commits what it registered, or records why not. */
static void
run_entry(st_registry *r, st_plugin *p, st_plugin_entry_fn entry)
{
	st_plugin_ctx ctx = { .registry = r, .plugin = p };
	const st_plugin *was = st_plugin_enter(p);
	int rc = entry(&st_host, &ctx);
	st_plugin_leave(was);
	if (rc != 0 || !ctx.declared || ctx.refusal) {
		if (ctx.refusal)
			p->refusal = st_xstrdup(ctx.refusal);
		else if (!ctx.declared)
			p->refusal = st_xstrdup("it never declared itself (api->declare)");
		else
			p->refusal = st_xstrdup("its entry point reported a failure");
		ctx_discard(&ctx);
		p->loaded = false;
		return;
	}
	if (is_disabled(r, p->name)) {
		p->refusal = st_xstrdup("disabled in the settings (disabled_plugins in config.json)");
		p->disabled = true;
		ctx_discard(&ctx);
		p->loaded = false;
		return;
	}
	r->types = st_xreallocarray(r->types, (size_t)(r->n_types + ctx.n_types), sizeof *r->types);
	for (int i = 0; i < ctx.n_types; i++) {
		st_layer_type *t = ctx.types[i];
		r->types[r->n_types++] = t;
		st_map_put(&r->type_names, t->desc->name, t);
		for (int k = 0; t->desc->aliases && t->desc->aliases[k]; k++) {
			const char *a = t->desc->aliases[k];
			if (valid_type_name(a) && st_map_get(&r->type_names, a) == NULL)
				st_map_put(&r->type_names, a, t);
		}
	}
	r->activations = st_xreallocarray(r->activations, (size_t)(r->n_activations + ctx.n_acts),
	                                  sizeof *r->activations);
	for (int i = 0; i < ctx.n_acts; i++) {
		r->activations[r->n_activations++] = ctx.acts[i];
		st_map_put(&r->activation_names, ctx.acts[i]->desc->name, ctx.acts[i]);
	}
	r->impls = st_xreallocarray(r->impls, (size_t)(r->n_impls + ctx.n_impls), sizeof *r->impls);
	for (int i = 0; i < ctx.n_impls; i++)
		r->impls[r->n_impls++] = ctx.impls[i];
	r->activation_impls = st_xreallocarray(r->activation_impls,
	                                       (size_t)(r->n_activation_impls + ctx.n_act_impls),
	                                       sizeof *r->activation_impls);
	for (int i = 0; i < ctx.n_act_impls; i++)
		r->activation_impls[r->n_activation_impls++] = ctx.act_impls[i];
	r->blocks = st_xreallocarray(r->blocks, (size_t)(r->n_blocks + ctx.n_blocks), sizeof *r->blocks);
	for (int i = 0; i < ctx.n_blocks; i++)
		r->blocks[r->n_blocks++] = ctx.blocks[i];
	r->expansions = st_xreallocarray(r->expansions, (size_t)(r->n_expansions + ctx.n_expansions),
	                                 sizeof *r->expansions);
	for (int i = 0; i < ctx.n_expansions; i++)
		r->expansions[r->n_expansions++] = ctx.expansions[i];
	p->n_layers = ctx.n_types;
	p->n_activations = ctx.n_acts;
	p->n_impls = ctx.n_impls;
	p->n_blocks = ctx.n_blocks;
	p->n_expansions = ctx.n_expansions;
	p->loaded = true;
	free(ctx.blocks);
	free(ctx.expansions);
	free(ctx.types);
	free(ctx.acts);
	free(ctx.impls);
	free(ctx.act_impls);
	free(ctx.refusal);
}

st_plugin *
st_registry_load_builtin(st_registry *r, const char *origin, st_plugin_entry_fn entry)
{
	st_plugin *p = plugin_add(r, origin);
	run_entry(r, p, entry);
	return p;
}

st_plugin *
st_registry_load_file(st_registry *r, const char *path)
{
	st_plugin *p = plugin_add(r, path);
	if (is_disabled(r, path)) {
		/* Named by its file: one that crashed before it could say its name. */
		p->refusal = st_xstrdup("disabled in the settings (disabled_plugins in config.json)");
		p->disabled = true;
		return p;
	}
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		const char *e = dlerror();
		p->refusal = st_xasprintf("cannot be opened: %s", e ? e : "unknown error");
		return p;
	}
	dlerror();
	const uint32_t *abi = dlsym(h, ST_PLUGIN_ABI_SYMBOL);
	if (abi == NULL) {
		p->refusal = st_xstrdup("not a Strata plugin: it has no symbol " ST_PLUGIN_ABI_SYMBOL);
		dlclose(h);
		return p;
	}
	if (*abi != ST_PLUGIN_ABI_VERSION) {
		p->refusal = st_xasprintf("built for plugin ABI %u, but this Strata uses ABI %u; rebuild it",
		                          (unsigned)*abi, ST_PLUGIN_ABI_VERSION);
		dlclose(h);
		return p;
	}
	st_plugin_entry_fn entry;
	void *sym = dlsym(h, ST_PLUGIN_ENTRY_SYMBOL);
	if (sym == NULL) {
		p->refusal = st_xstrdup("it has no entry point " ST_PLUGIN_ENTRY_SYMBOL);
		dlclose(h);
		return p;
	}
	memcpy(&entry, &sym, sizeof entry);
	run_entry(r, p, entry);
	if (!p->loaded)
		dlclose(h);
	else
		p->handle = h;
	return p;
}

static int
compare_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int
st_registry_load_dir(st_registry *r, const char *dir)
{
	DIR *d = opendir(dir);
	if (d == NULL)
		return 0;
	char **names = NULL;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		size_t len = strlen(e->d_name);
		if (len > 3 && strcmp(e->d_name + len - 3, ".so") == 0 && e->d_name[0] != '.') {
			names = st_xreallocarray(names, (size_t)n + 1, sizeof *names);
			names[n++] = st_xstrdup(e->d_name);
		}
	}
	closedir(d);
	qsort(names, (size_t)n, sizeof *names, compare_names);
	for (int i = 0; i < n; i++) {
		char *path = st_xasprintf("%s/%s", dir, names[i]);
		if (st_registry_deferred_backend(path) != NULL) {
			r->deferred = st_xreallocarray(r->deferred, (size_t)r->n_deferred + 1, sizeof *r->deferred);
			r->deferred[r->n_deferred++] = path;
		} else {
			st_registry_load_file(r, path);
			free(path);
		}
		free(names[i]);
	}
	free(names);
	return n;
}

const char *
st_registry_deferred_backend(const char *path)
{
	static const char *const backends[] = { "cuda" };
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	size_t len = strlen(base);
	for (size_t i = 0; i < sizeof backends / sizeof backends[0]; i++) {
		size_t b = strlen(backends[i]);
		if (len > b + 4 && base[len - b - 4] == '-' && strncmp(base + len - b - 3, backends[i], b) == 0 &&
		    strcmp(base + len - 3, ".so") == 0)
			return backends[i];
	}
	return NULL;
}

int
st_registry_load_backend(st_registry *r, const char *backend)
{
	int loaded = 0;
	for (int i = 0; i < r->n_deferred; i++) {
		const char *b = st_registry_deferred_backend(r->deferred[i]);
		if (b == NULL || strcmp(b, backend) != 0)
			continue;
		st_registry_load_file(r, r->deferred[i]);
		loaded++;
		/* Loaded (or refused, which the plugin list shows): never again. */
		free(r->deferred[i]);
		r->deferred[i--] = r->deferred[--r->n_deferred];
	}
	return loaded;
}

/* The folder holding this program, or NULL; caller frees. */
static char *
program_dir(void)
{
	char buf[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	char *slash = strrchr(buf, '/');
	if (slash == NULL)
		return NULL;
	*slash = '\0';
	return st_xstrdup(buf);
}

bool
st_running_from_build_tree(void)
{
	char *dir = program_dir();
	if (dir == NULL)
		return false;
	char build[PATH_MAX];
	bool yes = realpath(ST_BUILD_DIR, build) != NULL && strcmp(dir, build) == 0;
	free(dir);
	return yes;
}

/* Appends each build-tree plugin folder (plugins/<name>/.libs) to path. */
static void
add_build_tree_dirs(st_buf *path)
{
	char *base = st_xasprintf("%s/plugins", ST_BUILD_DIR);
	DIR *d = opendir(base);
	if (d != NULL) {
		char **names = NULL;
		int n = 0;
		struct dirent *e;
		while ((e = readdir(d)) != NULL) {
			if (e->d_name[0] == '.')
				continue;
			names = st_xreallocarray(names, (size_t)n + 1, sizeof *names);
			names[n++] = st_xstrdup(e->d_name);
		}
		closedir(d);
		qsort(names, (size_t)n, sizeof *names, compare_names);
		for (int i = 0; i < n; i++) {
			char *libs = st_xasprintf("%s/%s/.libs", base, names[i]);
			struct stat st;
			if (stat(libs, &st) == 0 && S_ISDIR(st.st_mode))
				st_buf_printf(path, "%s%s", path->len ? ":" : "", libs);
			free(libs);
			free(names[i]);
		}
		free(names);
	}
	free(base);
}

char *
st_registry_search_path(void)
{
	st_buf path;
	st_buf_init(&path);
	const char *env = getenv("STRATA_PLUGIN_PATH");
	if (env != NULL && *env)
		st_buf_puts(&path, env);
	const char *home = getenv("HOME");
	if (home != NULL && *home)
		st_buf_printf(&path, "%s%s/.local/lib/strata/plugins", path.len ? ":" : "", home);
	if (st_running_from_build_tree())
		add_build_tree_dirs(&path);
	else
		st_buf_printf(&path, "%s%s", path.len ? ":" : "", ST_PLUGIN_DIR);
	return st_buf_take(&path);
}

void
st_registry_load_default(st_registry *r)
{
	char *path = st_registry_search_path();
	char *save = NULL;
	/* A folder named twice (by $STRATA_PLUGIN_PATH and the build tree, say)
	 * is searched once, so its plugins are not refused as duplicates. */
	char **seen = NULL;
	int n_seen = 0;
	for (char *dir = strtok_r(path, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		char real[PATH_MAX];
		const char *key = realpath(dir, real) ? real : dir;
		bool again = false;
		for (int i = 0; i < n_seen && !again; i++)
			again = strcmp(seen[i], key) == 0;
		if (again)
			continue;
		seen = st_xreallocarray(seen, (size_t)n_seen + 1, sizeof *seen);
		seen[n_seen++] = st_xstrdup(key);
		st_registry_load_dir(r, dir);
	}
	for (int i = 0; i < n_seen; i++)
		free(seen[i]);
	free(seen);
	free(path);
}

const st_layer_type *
st_registry_find_layer(const st_registry *r, const char *name)
{
	return st_map_get(&r->type_names, name);
}

const st_activation_type *
st_registry_find_activation(const st_registry *r, const char *name)
{
	return st_map_get(&r->activation_names, name);
}

const st_impl_desc *
st_registry_find_impl(const st_registry *r, const char *layer, const char *backend)
{
	/* Few enough to search: a type has at most one per backend. */
	for (int i = 0; i < r->n_impls; i++) {
		const st_impl_desc *d = r->impls[i].desc;
		if (strcmp(d->layer, layer) == 0 && strcmp(d->backend, backend) == 0)
			return d;
	}
	return NULL;
}

const st_activation_impl *
st_registry_find_activation_impl(const st_registry *r, const char *name)
{
	for (int i = 0; i < r->n_activation_impls; i++) {
		if (strcmp(r->activation_impls[i].desc->activation, name) == 0)
			return r->activation_impls[i].desc;
	}
	return NULL;
}

const char *
st_registry_suggest_layer(const st_registry *r, const char *name)
{
	const char *best = NULL;
	int best_d = (int)strlen(name) / 3 + 1;
	if (best_d > 3)
		best_d = 3;
	for (int i = 0; i < r->n_types; i++) {
		const st_layer_desc *d = r->types[i]->desc;
		int dist = st_edit_distance(name, d->name);
		if (dist <= best_d) {
			best_d = dist - 1;
			best = d->name;
		}
		for (int k = 0; d->aliases && d->aliases[k]; k++) {
			dist = st_edit_distance(name, d->aliases[k]);
			if (dist <= best_d) {
				best_d = dist - 1;
				best = d->name;
			}
		}
	}
	return best;
}

const st_block_type *
st_registry_find_block(const st_registry *r, const char *name)
{
	for (int i = 0; i < r->n_blocks; i++) {
		const st_block_desc *d = r->blocks[i]->desc;
		if (strcmp(d->name, name) == 0)
			return r->blocks[i];
	}
	for (int i = 0; i < r->n_blocks; i++) {
		const st_block_desc *d = r->blocks[i]->desc;
		for (int k = 0; d->aliases && d->aliases[k]; k++) {
			if (strcmp(d->aliases[k], name) == 0)
				return r->blocks[i];
		}
		if (d->display_name != NULL && strcasecmp(d->display_name, name) == 0)
			return r->blocks[i];
	}
	return NULL;
}

const st_expansion_type *
st_registry_find_expansion(const st_registry *r, const char *layer_type)
{
	const st_layer_type *t = st_registry_find_layer(r, layer_type);
	const char *name = t != NULL ? t->desc->name : layer_type;
	for (int i = 0; i < r->n_expansions; i++) {
		if (strcmp(r->expansions[i].layer, name) == 0)
			return &r->expansions[i];
	}
	return NULL;
}

/* ---- running reshape ---- */

static bool
port_mandatory(const st_layer_desc *d, int i)
{
	if (i < d->n_inputs)
		return !(d->inputs[i].flags & ST_PORT_OPTIONAL);
	/* An extra terminal of an infinite input is there only while linked, so
	 * an unlinked one is a hole in the middle, which must be filled. */
	return d->n_inputs > 0 && (d->inputs[d->n_inputs - 1].flags & ST_PORT_INFINITE);
}

int
st_reshape_run(const st_layer_type *type, const char *layer_name, const st_value *params,
               int n_inputs, const st_shape *const *inputs, st_shape *outputs, st_reshape *r,
               st_message **messages, int *n_messages)
{
	const st_layer_desc *d = type->desc;
	reshape_state st = { 0 };
	/* Terminals the caller left off the end are unlinked: the plugin may read
	 * inputs[i] for every declared input and find NULL there. */
	const st_shape **padded = NULL;
	if (n_inputs < d->n_inputs) {
		padded = st_xcalloc((size_t)d->n_inputs, sizeof *padded);
		for (int i = 0; i < n_inputs; i++)
			padded[i] = inputs[i];
		inputs = padded;
		n_inputs = d->n_inputs;
	}
	memset(r, 0, sizeof *r);
	r->layer_name = layer_name;
	r->desc = d;
	r->n_inputs = n_inputs;
	r->inputs = inputs;
	r->params = params;
	r->n_outputs = d->n_outputs;
	r->outputs = outputs;
	r->host_private = &st;
	memset(outputs, 0, sizeof *outputs * ST_MAX_OUTPUTS);
	int rc = 0;

	bool last_infinite = d->n_inputs > 0 && (d->inputs[d->n_inputs - 1].flags & ST_PORT_INFINITE);
	if (n_inputs > d->n_inputs && !last_infinite) {
		state_add(&st, ST_SEVERITY_ERROR,
		          st_xasprintf("has %d inputs linked, but %s takes %d", n_inputs, d->name, d->n_inputs));
		rc = -1;
	}
	st_buf missing;
	st_buf_init(&missing);
	for (int i = 0; i < n_inputs || i < d->n_inputs; i++) {
		if ((i >= n_inputs || inputs[i] == NULL) && port_mandatory(d, i))
			st_buf_printf(&missing, "%s%d", missing.len ? ", " : "", i);
	}
	if (missing.len) {
		state_add(&st, ST_SEVERITY_ERROR,
		          st_xasprintf("These mandatory inputs are not connected: %s", missing.data));
		rc = -1;
	}
	st_buf_free(&missing);

	if (rc == 0) {
		const st_plugin *was = st_plugin_enter(type->plugin);
		rc = d->reshape(r, &st_host) == 0 ? 0 : -1;
		st_plugin_leave(was);
		if (rc != 0 && !st.error)
			state_add(&st, ST_SEVERITY_ERROR, st_xstrdup("its output shape cannot be computed"));
	}
	if (rc == 0) {
		int limit = (d->flags & ST_LAYER_VARIABLE_OUTPUTS) ? ST_MAX_OUTPUTS : d->n_outputs;
		if (r->n_weights < 0 || r->n_weights > ST_MAX_WEIGHTS) {
			state_add(&st, ST_SEVERITY_ERROR,
			          st_xasprintf("the plugin gave %d weights (at most %d)", r->n_weights,
			                       ST_MAX_WEIGHTS));
			rc = -1;
		} else if (r->n_outputs < 0 || r->n_outputs > limit) {
			state_add(&st, ST_SEVERITY_ERROR,
			          st_xasprintf("the plugin gave %d outputs (at most %d)", r->n_outputs, limit));
			rc = -1;
		}
		for (int i = 0; rc == 0 && i < r->n_outputs; i++) {
			const st_shape *s = &outputs[i];
			bool bad = s->rank < 0 || s->rank > ST_MAX_RANK || (unsigned)s->dtype >= ST_DTYPE_COUNT;
			for (int k = 0; !bad && k < s->rank; k++)
				bad = s->dims[k] < 0;
			if (!bad && st_shape_bytes(s) < 0) {
				state_add(&st, ST_SEVERITY_ERROR,
				          st_xasprintf("output %d would hold more elements than memory can address", i));
				rc = -1;
			} else if (bad) {
				state_add(&st, ST_SEVERITY_ERROR,
				          st_xasprintf("the plugin computed an invalid shape for output %d", i));
				rc = -1;
			}
		}
	}
	if (rc != 0) {
		r->n_outputs = 0;
		r->n_weights = 0;
	}
	r->host_private = NULL;
	r->inputs = NULL; /* padded belongs to this call */
	free(padded);
	*messages = st.messages;
	*n_messages = st.n_messages;
	return rc;
}
