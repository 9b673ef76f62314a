/* Model files: JSON in, a graph out, with errors that name the file, line,
 * column, JSON path and field; and the graph back to canonical JSON. */
#include "config.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "st-core.h"

#define POS_LIMIT 1000000 /* canvas coordinates stay within +-this */

typedef struct loader {
	const char *file;
	st_json_doc doc;
	st_diag *diag;
	const st_registry *registry;
	st_graph *graph;
	bool newer_minor; /* written by a newer minor version: keep unknown fields */
	int errors;
} loader;

/* Reports a problem at node (at its key when at_key and it has one), with its JSON path. */
static void
report_at(loader *ld, bool at_key, st_severity sev, const cJSON *node, const st_json_path *path,
          const char *fmt, va_list ap)
{
	int line, col;
	if (at_key)
		st_json_key_position(&ld->doc, node, &line, &col);
	else
		st_json_position(&ld->doc, node, &line, &col);
	char *text = st_xvasprintf(fmt, ap);
	st_buf where;
	st_buf_init(&where);
	st_json_path_text(path, &where);
	if (where.len)
		st_diag_add(ld->diag, sev, ld->file, line, col, "%s (at %s)", text, where.data);
	else
		st_diag_add(ld->diag, sev, ld->file, line, col, "%s", text);
	st_buf_free(&where);
	free(text);
	if (sev == ST_SEVERITY_ERROR)
		ld->errors++;
}

/* A problem with a value: reported where the value starts. */
static void
report(loader *ld, st_severity sev, const cJSON *node, const st_json_path *path, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static void
report(loader *ld, st_severity sev, const cJSON *node, const st_json_path *path, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	report_at(ld, false, sev, node, path, fmt, ap);
	va_end(ap);
}

/* A problem with a field itself (unknown, repeated): reported at its key. */
static void
report_key(loader *ld, const cJSON *node, const st_json_path *path, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void
report_key(loader *ld, const cJSON *node, const st_json_path *path, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	report_at(ld, true, ST_SEVERITY_ERROR, node, path, fmt, ap);
	va_end(ap);
}

/* Finds the closest of names[0..n) to name, for "did you mean". */
static const char *
closest(const char *name, const char *const *names, int n)
{
	const char *best = NULL;
	int limit = (int)strlen(name) / 3 + 1;
	if (limit > 3)
		limit = 3;
	for (int i = 0; i < n; i++) {
		int d = st_edit_distance(name, names[i]);
		if (d <= limit) {
			limit = d - 1;
			best = names[i];
		}
	}
	return best;
}

/* Handles a field the schema does not know: kept for newer files, an error otherwise. */
static void
unknown_field(loader *ld, const cJSON *item, const st_json_path *path, const char *where, cJSON **keep,
              const char *const *known, int n_known)
{
	if (ld->newer_minor) {
		if (*keep == NULL)
			*keep = cJSON_CreateObject();
		cJSON_AddItemToObject(*keep, item->string, cJSON_Duplicate(item, 1));
		return;
	}
	const char *hint = closest(item->string, known, n_known);
	if (hint)
		report_key(ld, item, path, "unknown field '%s' in %s (did you mean '%s'?)",
		       item->string, where, hint);
	else
		report_key(ld, item, path, "unknown field '%s' in %s", item->string, where);
}

/* Whether an earlier member of parent has the same key as item. */
static bool
seen_before(const cJSON *parent, const cJSON *item)
{
	for (const cJSON *c = parent->child; c && c != item; c = c->next) {
		if (c->string && strcmp(c->string, item->string) == 0)
			return true;
	}
	return false;
}

/* A block-style setting ("transform": 4, "pruning": null) in a parameter
 * object: stored as the canonical parameters it stands for. */
static void
load_block_style(loader *ld, const cJSON *obj, const cJSON *item, const st_json_path *ipath,
                 const char *owner, const char *schema_name, const st_param_desc *descs, int n_descs,
                 st_params *params)
{
	for (const cJSON *other = obj->child; other; other = other->next) {
		if (other->string != NULL && st_block_style_covers(item->string, other->string)) {
			report_key(ld, item, ipath,
			           "%s: both '%s' and '%s' are given; '%s' stands for use_%s and %s, so give "
			           "one form or the other",
			           owner, item->string, other->string, item->string, item->string,
			           strcmp(item->string, "transform") == 0 ? "bit" : "prun_weight");
			return;
		}
	}
	st_block_setting set;
	char why[512];
	int rc = st_block_style_resolve(descs, n_descs, item->string, item, NULL, &set, why, sizeof why);
	if (rc == -2) {
		report_key(ld, item, ipath, "%s: %s has no parameter '%s': it %s", owner, schema_name,
		           item->string, why);
		return;
	}
	if (rc != 0) {
		report(ld, ST_SEVERITY_ERROR, item, ipath, "%s: parameter '%s' %s", owner, item->string, why);
		return;
	}
	for (int i = 0; i < set.count; i++) {
		st_value_clear(&params->values[set.index[i]]);
		params->values[set.index[i]] = set.values[i];
		params->set[set.index[i]] = true;
	}
}

/* Parses one parameter object against a schema into params. */
static void
load_params(loader *ld, const cJSON *obj, const st_json_path *path, const char *owner,
            const char *schema_name, const st_param_desc *descs, int n_descs, st_params *params,
            bool schema_known)
{
	if (!cJSON_IsObject(obj)) {
		report(ld, ST_SEVERITY_ERROR, obj, path, "%s: '%s' must be an object of name: value pairs",
		       owner, obj->string ? obj->string : "params");
		return;
	}
	const char **names = st_xcalloc((size_t)(n_descs ? n_descs : 1), sizeof *names);
	for (int i = 0; i < n_descs; i++)
		names[i] = descs[i].name;
	for (const cJSON *item = obj->child; item; item = item->next) {
		st_json_path here = { path, item->string, 0 };
		const st_json_path *ipath = &here;
		if (seen_before(obj, item)) {
			report_key(ld, item, ipath, "%s: parameter '%s' is given twice", owner,
			       item->string);
			continue;
		}
		int idx = schema_known ? st_params_find(descs, n_descs, item->string) : -1;
		if (idx < 0 && schema_known && st_block_style_index(item->string) >= 0 &&
		    (st_params_have_xwn_set(descs, n_descs) || !ld->newer_minor)) {
			load_block_style(ld, obj, item, ipath, owner, schema_name, descs, n_descs, params);
			continue;
		}
		if (idx < 0) {
			if (!schema_known || ld->newer_minor) {
				if (params->unknown == NULL)
					params->unknown = cJSON_CreateObject();
				cJSON_AddItemToObject(params->unknown, item->string, cJSON_Duplicate(item, 1));
			} else {
				const char *hint = closest(item->string, names, n_descs);
				if (hint)
					report_key(ld, item, ipath,
					       "%s: %s has no parameter '%s' (did you mean '%s'?)", owner, schema_name,
					       item->string, hint);
				else
					report_key(ld, item, ipath, "%s: %s has no parameter '%s'",
					       owner, schema_name, item->string);
			}
			continue;
		}
		char why[256];
		st_value v;
		if (st_value_from_json(&descs[idx], item, &v, why, sizeof why) != 0) {
			report(ld, ST_SEVERITY_ERROR, item, ipath, "%s: parameter '%s' %s", owner, item->string,
			       why);
		} else {
			st_value_clear(&params->values[idx]);
			params->values[idx] = v;
			params->set[idx] = true;
		}
	}
	free(names);
}

static void
load_network(loader *ld, const cJSON *net)
{
	static const char *const known[] = { "name", "version", "description", "tensor_format", "weights", "profiling" };
	if (!cJSON_IsObject(net)) {
		st_json_path here = { NULL, "network", 0 };
		report(ld, ST_SEVERITY_ERROR, net, &here, "'network' must be an object");
		return;
	}
	st_graph *g = ld->graph;
	for (const cJSON *item = net->child; item; item = item->next) {
		st_json_path net_path = { NULL, "network", 0 }, here = { &net_path, item->string, 0 };
		const st_json_path *path = &here;
		int idx = st_params_find(st_network_params, ST_NET_COUNT, item->string);
		if (seen_before(net, item)) {
			report_key(ld, item, path, "field '%s' is given twice", item->string);
		} else if (idx < 0) {
			unknown_field(ld, item, path, "network", &g->network_extra, known, ST_NET_COUNT);
		} else {
			char why[256];
			st_value v;
			if (st_value_from_json(&st_network_params[idx], item, &v, why, sizeof why) != 0) {
				report(ld, ST_SEVERITY_ERROR, item, path, "network: '%s' %s", item->string, why);
			} else {
				st_value_clear(&g->network.values[idx]);
				g->network.values[idx] = v;
				g->network.set[idx] = true;
			}
		}
	}
}

static void
load_activation(loader *ld, st_layer *l, const cJSON *act, const st_json_path *path, const char *owner)
{
	const cJSON *type = NULL;
	if (cJSON_IsString(act)) {
		type = act; /* "activation": "relu" is short for {"type": "relu"} */
	} else if (cJSON_IsObject(act)) {
		type = cJSON_GetObjectItemCaseSensitive(act, "type");
		if (!cJSON_IsString(type)) {
			report(ld, ST_SEVERITY_ERROR, type ? type : act, path,
			       "%s: the activation needs a \"type\" string, such as \"relu\"", owner);
			return;
		}
	} else if (cJSON_IsNull(act)) {
		return;
	} else {
		report(ld, ST_SEVERITY_ERROR, act, path,
		       "%s: 'activation' must be an object such as {\"type\": \"relu\"}", owner);
		return;
	}
	if (strcmp(type->valuestring, "none") == 0)
		return;
	l->act.type_name = st_xstrdup(type->valuestring);
	l->act.type = st_registry_find_activation(ld->registry, type->valuestring);
	const st_activation_desc *d = l->act.type ? l->act.type->desc : NULL;
	if (d != NULL)
		st_params_init(&l->act.coef, d->params, d->n_params, l->act.type->defaults);
	else
		st_params_init(&l->act.coef, NULL, 0, NULL);
	if (!cJSON_IsObject(act))
		return;
	for (const cJSON *item = act->child; item; item = item->next) {
		if (strcmp(item->string, "type") == 0)
			continue;
		st_json_path here = { path, item->string, 0 };
		const st_json_path *ipath = &here;
		int idx = d ? st_params_find(d->params, d->n_params, item->string) : -1;
		if (seen_before(act, item)) {
			report_key(ld, item, ipath, "%s: '%s' is given twice", owner, item->string);
		} else if (idx < 0 && d != NULL && !ld->newer_minor) {
			const char **names = st_xcalloc((size_t)d->n_params + 1, sizeof *names);
			for (int i = 0; i < d->n_params; i++)
				names[i] = d->params[i].name;
			const char *hint = closest(item->string, names, d->n_params);
			report_key(ld, item, ipath,
			       "%s: activation %s has no coefficient '%s'%s%s%s", owner, d->name, item->string,
			       hint ? " (did you mean '" : "", hint ? hint : "", hint ? "'?)" : "");
			free(names);
		} else if (idx < 0) {
			if (l->act.coef.unknown == NULL)
				l->act.coef.unknown = cJSON_CreateObject();
			cJSON_AddItemToObject(l->act.coef.unknown, item->string, cJSON_Duplicate(item, 1));
		} else {
			char why[256];
			st_value v;
			if (st_value_from_json(&d->params[idx], item, &v, why, sizeof why) != 0) {
				report(ld, ST_SEVERITY_ERROR, item, ipath, "%s: activation coefficient '%s' %s",
				       owner, item->string, why);
			} else {
				st_value_clear(&l->act.coef.values[idx]);
				l->act.coef.values[idx] = v;
				l->act.coef.set[idx] = true;
			}
		}
	}
}

/* Splits "layer.3" into name and output; a missing ".N" means output 0. */
static bool
parse_reference(const char *ref, char **name, int *output)
{
	const char *dot = strrchr(ref, '.');
	*output = 0;
	if (dot != NULL && dot[1] != '\0' && strspn(dot + 1, "0123456789") == strlen(dot + 1)) {
		if (strlen(dot + 1) > 4)
			return false;
		*output = atoi(dot + 1);
		*name = st_xstrndup(ref, (size_t)(dot - ref));
	} else {
		*name = st_xstrdup(ref);
	}
	return **name != '\0';
}

/* Layer fields that links resolve after every layer exists. */
typedef struct pending_inputs {
	st_layer *layer;
	const cJSON *inputs;
	int index;
} pending_inputs;

static st_layer *
load_layer(loader *ld, const cJSON *obj, int index, pending_inputs *pending)
{
	static const char *const known[] = { "name", "type", "params", "activation", "inputs", "pos",
		                             "minimized" };
	st_json_path layers_path = { NULL, "layers", 0 }, here_layer = { &layers_path, NULL, index };
	const st_json_path *path = &here_layer;
	if (!cJSON_IsObject(obj)) {
		report(ld, ST_SEVERITY_ERROR, obj, path, "each layer must be an object with a name and a type");
		return NULL;
	}
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(obj, "name");
	const cJSON *type = cJSON_GetObjectItemCaseSensitive(obj, "type");
	if (!cJSON_IsString(name)) {
		report(ld, ST_SEVERITY_ERROR, name ? name : obj, path,
		       name ? "layer %d: 'name' must be a string" : "layer %d has no 'name'", index);
		return NULL;
	}
	if (name->valuestring[0] == '\0') {
		report(ld, ST_SEVERITY_ERROR, name, path, "layer %d: 'name' must not be empty", index);
		return NULL;
	}
	char owner[200];
	snprintf(owner, sizeof owner, "layer '%.150s'", name->valuestring);
	if (!cJSON_IsString(type) || type->valuestring[0] == '\0') {
		report(ld, ST_SEVERITY_ERROR, type ? type : obj, path,
		       type ? "%s: 'type' must be a layer type name" : "%s has no 'type'", owner);
		return NULL;
	}
	st_layer *l = st_layer_new(ld->registry, type->valuestring, name->valuestring);
	int line, col;
	st_json_position(&ld->doc, obj, &line, &col);
	l->src_line = line;
	l->src_col = col;
	const st_layer_desc *d = l->type ? l->type->desc : NULL;
	for (const cJSON *item = obj->child; item; item = item->next) {
		st_json_path here = { path, item->string, 0 };
		const st_json_path *ipath = &here;
		if (seen_before(obj, item)) {
			report_key(ld, item, ipath, "%s: field '%s' is given twice", owner,
			       item->string);
		} else if (strcmp(item->string, "name") == 0 || strcmp(item->string, "type") == 0) {
			/* read above */
		} else if (strcmp(item->string, "params") == 0) {
			load_params(ld, item, ipath, owner, l->type_name, d ? d->params : NULL,
			            d ? d->n_params : 0, &l->params, d != NULL);
		} else if (strcmp(item->string, "activation") == 0) {
			load_activation(ld, l, item, ipath, owner);
		} else if (strcmp(item->string, "inputs") == 0) {
			if (!cJSON_IsArray(item))
				report(ld, ST_SEVERITY_ERROR, item, ipath,
				       "%s: 'inputs' must be a list such as [\"data.0\"]", owner);
			else {
				pending->layer = l;
				pending->inputs = item;
				pending->index = index;
			}
		} else if (strcmp(item->string, "pos") == 0) {
			const cJSON *x = cJSON_GetArrayItem(item, 0), *y = cJSON_GetArrayItem(item, 1);
			if (!cJSON_IsArray(item) || cJSON_GetArraySize(item) != 2 || !cJSON_IsNumber(x) ||
			    !cJSON_IsNumber(y) || x->valuedouble != floor(x->valuedouble) ||
			    y->valuedouble != floor(y->valuedouble) || fabs(x->valuedouble) > POS_LIMIT ||
			    fabs(y->valuedouble) > POS_LIMIT)
				report(ld, ST_SEVERITY_ERROR, item, ipath,
				       "%s: 'pos' must be two integers [x, y] within +-%d", owner, POS_LIMIT);
			else {
				l->x = (int)x->valuedouble;
				l->y = (int)y->valuedouble;
			}
		} else if (strcmp(item->string, "minimized") == 0) {
			if (!cJSON_IsBool(item))
				report(ld, ST_SEVERITY_ERROR, item, ipath, "%s: 'minimized' must be true or false",
				       owner);
			else
				l->minimized = cJSON_IsTrue(item);
		} else {
			char where[220];
			snprintf(where, sizeof where, "%s", owner);
			unknown_field(ld, item, ipath, where, &l->extra, known,
			              (int)(sizeof known / sizeof known[0]));
		}
	}
	return l;
}

static void
resolve_inputs(loader *ld, const pending_inputs *p)
{
	st_layer *l = p->layer;
	char owner[200];
	snprintf(owner, sizeof owner, "layer '%.150s'", l->name);
	int n = cJSON_GetArraySize(p->inputs);
	const st_layer_desc *d = l->type ? l->type->desc : NULL;
	bool infinite = d && d->n_inputs > 0 && (d->inputs[d->n_inputs - 1].flags & ST_PORT_INFINITE);
	st_json_path layers_path = { NULL, "layers", 0 }, layer_path = { &layers_path, NULL, p->index };
	st_json_path inputs_path = { &layer_path, "inputs", 0 };
	if (d != NULL && !infinite && n > d->n_inputs) {
		report(ld, ST_SEVERITY_ERROR, p->inputs, &inputs_path, "%s has %d inputs, but %s takes %d", owner, n,
		       d->name, d->n_inputs);
		return;
	}
	if (n > 4096) {
		report(ld, ST_SEVERITY_ERROR, p->inputs, &inputs_path, "%s has more than 4096 inputs", owner);
		return;
	}
	int i = 0;
	for (const cJSON *ref = p->inputs->child; ref; ref = ref->next, i++) {
		st_json_path here = { &inputs_path, NULL, i };
		const st_json_path *path = &here;
		if (cJSON_IsNull(ref)) {
			if (i >= l->n_inputs) {
				/* Keep an unlinked terminal of an unknown type or an infinite input. */
				l->inputs = st_xreallocarray(l->inputs, (size_t)i + 1, sizeof *l->inputs);
				memset(&l->inputs[l->n_inputs], 0, sizeof *l->inputs * (size_t)(i + 1 - l->n_inputs));
				l->n_inputs = i + 1;
			}
			continue;
		}
		char *name = NULL;
		int output;
		if (!cJSON_IsString(ref) || !parse_reference(ref->valuestring, &name, &output)) {
			free(name);
			report(ld, ST_SEVERITY_ERROR, ref, path,
			       "%s: input %d must be \"layer.output\" (such as \"data.0\") or null", owner, i);
			continue;
		}
		st_layer *src = st_graph_find(ld->graph, name);
		if (src == NULL) {
			const char *hint = NULL;
			int best = (int)strlen(name) / 3 + 1;
			for (int k = 0; k < ld->graph->n_layers && best > 0; k++) {
				int dist = st_edit_distance(name, ld->graph->layers[k]->name);
				if (dist <= best) {
					best = dist - 1;
					hint = ld->graph->layers[k]->name;
				}
			}
			report(ld, ST_SEVERITY_ERROR, ref, path,
			       "%s: input %d refers to '%s', which is not a layer of this model%s%s%s", owner, i,
			       name, hint ? " (did you mean '" : "", hint ? hint : "", hint ? "'?)" : "");
		} else {
			st_port port = { src, output };
			st_graph_set_input(ld->graph, l, i, port);
		}
		free(name);
	}
	/* Holes and trailing nulls of an infinite terminal are kept as written. */
	if (n > l->n_inputs) {
		l->inputs = st_xreallocarray(l->inputs, (size_t)n, sizeof *l->inputs);
		memset(&l->inputs[l->n_inputs], 0, sizeof *l->inputs * (size_t)(n - l->n_inputs));
		l->n_inputs = n;
	}
}

static bool
parse_version(const cJSON *v, int *major, int *minor)
{
	if (cJSON_IsNumber(v)) {
		double x = v->valuedouble;
		if (x != floor(x) || x < 0 || x > 1000)
			return false;
		*major = (int)x;
		*minor = 0;
		return true;
	}
	if (cJSON_IsString(v)) {
		const char *s = v->valuestring;
		char *end;
		if (*s < '0' || *s > '9')
			return false;
		long a = strtol(s, &end, 10);
		if (*end != '.' || end[1] < '0' || end[1] > '9' || a > 1000)
			return false;
		long b = strtol(end + 1, &end, 10);
		if (*end != '\0' || b > 1000000)
			return false;
		*major = (int)a;
		*minor = (int)b;
		return true;
	}
	return false;
}

st_graph *
st_model_parse(const char *text, size_t len, const char *file, const st_registry *r, st_diag *d)
{
	static const char *const known[] = { "format", "version", "network", "layers" };
	loader ld = { .file = file, .diag = d, .registry = r };
	if (st_json_parse(&ld.doc, text, len, file, d) != 0)
		return NULL;
	const cJSON *root = ld.doc.root;
	if (!cJSON_IsObject(root)) {
		report(&ld, ST_SEVERITY_ERROR, root, NULL,
		       "a model file holds one JSON object with \"format\": \"" ST_MODEL_FORMAT "\"");
		st_json_doc_free(&ld.doc);
		return NULL;
	}
	const cJSON *format = cJSON_GetObjectItemCaseSensitive(root, "format");
	if (!cJSON_IsString(format) || strcmp(format->valuestring, ST_MODEL_FORMAT) != 0) {
		report(&ld, ST_SEVERITY_ERROR, format ? format : root, &(st_json_path){ NULL, "format", 0 },
		       "not a Strata model: the field \"format\" must be \"" ST_MODEL_FORMAT "\"");
		st_json_doc_free(&ld.doc);
		return NULL;
	}
	const cJSON *version = cJSON_GetObjectItemCaseSensitive(root, "version");
	int major, minor;
	if (version == NULL || !parse_version(version, &major, &minor)) {
		report(&ld, ST_SEVERITY_ERROR, version ? version : root, &(st_json_path){ NULL, "version", 0 },
		       "the field \"version\" must be the format version, such as 1 or \"1.0\"");
		st_json_doc_free(&ld.doc);
		return NULL;
	}
	if (major != ST_MODEL_MAJOR) {
		report(&ld, ST_SEVERITY_ERROR, version, &(st_json_path){ NULL, "version", 0 },
		       major > ST_MODEL_MAJOR
		           ? "this model uses format version %d.%d, written by a newer Strata; this one reads version %d"
		           : "this model uses format version %d.%d, which this Strata cannot read (it reads version %d)",
		       major, minor, ST_MODEL_MAJOR);
		st_json_doc_free(&ld.doc);
		return NULL;
	}
	ld.newer_minor = minor > ST_MODEL_MINOR;
	if (ld.newer_minor)
		report(&ld, ST_SEVERITY_WARNING, version, &(st_json_path){ NULL, "version", 0 },
		       "written by a newer Strata (format %d.%d); fields this one does not know are kept as they are",
		       major, minor);

	st_graph *g = ld.graph = st_graph_new(r);
	g->file_major = major;
	g->file_minor = minor;
	const cJSON *layers = NULL;
	for (const cJSON *item = root->child; item; item = item->next) {
		if (seen_before(root, item)) {
			report_key(&ld, item, &(st_json_path){ NULL, item->string, 0 }, "field '%s' is given twice",
			       item->string);
		} else if (strcmp(item->string, "format") == 0 || strcmp(item->string, "version") == 0) {
			/* read above */
		} else if (strcmp(item->string, "network") == 0) {
			load_network(&ld, item);
		} else if (strcmp(item->string, "layers") == 0) {
			layers = item;
		} else {
			unknown_field(&ld, item, &(st_json_path){ NULL, item->string, 0 }, "the model", &g->extra, known, 4);
		}
	}
	if (layers == NULL) {
		report(&ld, ST_SEVERITY_ERROR, root, &(st_json_path){ NULL, "layers", 0 }, "the model has no \"layers\" list");
	} else if (!cJSON_IsArray(layers)) {
		report(&ld, ST_SEVERITY_ERROR, layers, &(st_json_path){ NULL, "layers", 0 }, "\"layers\" must be a list of layer objects");
	} else {
		int n = cJSON_GetArraySize(layers);
		pending_inputs *pending = st_xcalloc((size_t)(n ? n : 1), sizeof *pending);
		int i = 0;
		for (const cJSON *obj = layers->child; obj; obj = obj->next, i++) {
			st_layer *l = load_layer(&ld, obj, i, &pending[i]);
			if (l != NULL)
				st_graph_insert(g, l, -1);
		}
		for (i = 0; i < n; i++) {
			if (pending[i].layer != NULL)
				resolve_inputs(&ld, &pending[i]);
		}
		free(pending);
	}
	st_json_doc_free(&ld.doc);
	if (ld.errors > 0) {
		st_graph_free(g);
		return NULL;
	}
	return g;
}

st_graph *
st_model_load(const char *path, const st_registry *r, st_diag *d)
{
	size_t len;
	char *text = st_read_file(path, &len);
	if (text == NULL) {
		st_diag_add(d, ST_SEVERITY_ERROR, path, 0, 0, "cannot read the model: %s", strerror(errno));
		return NULL;
	}
	st_graph *g = st_model_parse(text, len, path, r, d);
	free(text);
	return g;
}

/* ---- writing ---- */

static cJSON *
raw_value(const st_param_desc *desc, const st_value *v)
{
	st_buf b;
	st_buf_init(&b);
	st_value_to_json(desc, v, &b);
	cJSON *raw = cJSON_CreateRaw(b.data);
	st_buf_free(&b);
	return raw;
}

/* Adds the set parameters in schema order, then the unknown ones as read. */
static void
add_params(cJSON *obj, const char *key, const st_param_desc *descs, const st_params *p)
{
	cJSON *params = cJSON_CreateObject();
	for (int i = 0; i < p->count; i++) {
		if (p->set[i])
			cJSON_AddItemToObject(params, descs[i].name, raw_value(&descs[i], &p->values[i]));
	}
	for (const cJSON *u = p->unknown ? p->unknown->child : NULL; u; u = u->next)
		cJSON_AddItemToObject(params, u->string, cJSON_Duplicate(u, 1));
	if (key == NULL) {
		/* Merge into obj itself (activation coefficients sit beside "type"). */
		while (params->child) {
			cJSON *c = cJSON_DetachItemViaPointer(params, params->child);
			cJSON_AddItemToObject(obj, c->string, c);
		}
		cJSON_Delete(params);
	} else if (params->child) {
		cJSON_AddItemToObject(obj, key, params);
	} else {
		cJSON_Delete(params);
	}
}

static void
add_extra(cJSON *obj, const cJSON *extra)
{
	for (const cJSON *e = extra ? extra->child : NULL; e; e = e->next)
		cJSON_AddItemToObject(obj, e->string, cJSON_Duplicate(e, 1));
}

static cJSON *
layer_json(const st_layer *l)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "name", l->name);
	cJSON_AddStringToObject(o, "type", l->type_name);
	add_params(o, "params", l->type ? l->type->desc->params : NULL, &l->params);
	if (l->act.type_name != NULL) {
		cJSON *a = cJSON_CreateObject();
		cJSON_AddStringToObject(a, "type", l->act.type_name);
		add_params(a, NULL, l->act.type ? l->act.type->desc->params : NULL, &l->act.coef);
		add_extra(a, l->act.extra);
		cJSON_AddItemToObject(o, "activation", a);
	}
	if (l->n_inputs > 0) {
		cJSON *in = cJSON_CreateArray();
		for (int i = 0; i < l->n_inputs; i++) {
			st_port p = l->inputs[i];
			if (p.layer == NULL) {
				cJSON_AddItemToArray(in, cJSON_CreateNull());
			} else {
				char *ref = st_xasprintf("%s.%d", p.layer->name, p.output);
				cJSON_AddItemToArray(in, cJSON_CreateString(ref));
				free(ref);
			}
		}
		cJSON_AddItemToObject(o, "inputs", in);
	}
	cJSON *pos = cJSON_CreateArray();
	cJSON_AddItemToArray(pos, cJSON_CreateNumber(l->x));
	cJSON_AddItemToArray(pos, cJSON_CreateNumber(l->y));
	cJSON_AddItemToObject(o, "pos", pos);
	if (l->minimized)
		cJSON_AddTrueToObject(o, "minimized");
	add_extra(o, l->extra);
	return o;
}

char *
st_model_serialize(const st_graph *g)
{
	cJSON *root = cJSON_CreateObject();
	cJSON_AddStringToObject(root, "format", ST_MODEL_FORMAT);
	int major = ST_MODEL_MAJOR, minor = ST_MODEL_MINOR;
	if (g->file_major == major && g->file_minor > minor)
		minor = g->file_minor; /* its unknown fields are still in it */
	if (minor == 0) {
		cJSON_AddNumberToObject(root, "version", major);
	} else {
		char *v = st_xasprintf("%d.%d", major, minor);
		cJSON_AddStringToObject(root, "version", v);
		free(v);
	}
	cJSON *net = cJSON_CreateObject();
	for (int i = 0; i < ST_NET_COUNT; i++) {
		/* Off, "profiling" stays out of the file: models written before it
		 * existed keep their text when saved again. */
		if (i == ST_NET_PROFILING && !g->network.values[i].b && !g->network.set[i])
			continue;
		cJSON_AddItemToObject(net, st_network_params[i].name,
		                      raw_value(&st_network_params[i], &g->network.values[i]));
	}
	add_extra(net, g->network_extra);
	cJSON_AddItemToObject(root, "network", net);
	cJSON *layers = cJSON_CreateArray();
	for (int i = 0; i < g->n_layers; i++)
		cJSON_AddItemToArray(layers, layer_json(g->layers[i]));
	cJSON_AddItemToObject(root, "layers", layers);
	add_extra(root, g->extra);

	return st_json_document_text(root);
}

int
st_model_save(const st_graph *g, const char *path, char *err, size_t err_size)
{
	char *text = st_model_serialize(g);
	int rc = st_write_file_atomic(path, text, strlen(text), err, err_size);
	free(text);
	return rc;
}
