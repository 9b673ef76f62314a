/* The edit command `add-block`: a block (plugin ABI 2.3) inserted as a
 * chain of ordinary layers, in the order the user gives (the DDesigner
 * API's `order` list), with settings routed to the part they belong to. One
 * undoable step; a failure changes nothing.
 *
 * When templates exist, the same description will make a template instance
 * instead; the syntax stays. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core-edit.h"

/* One NAME=VALUE of the command, routed to a part. */
typedef struct setting {
	int part;          /* index into the block's parts */
	char *key;         /* owned: the key as given */
	const char *param; /* in key: the part's parameter; "activation" attaches one */
	const char *value;
} setting;

typedef struct request {
	const st_block_desc *block;
	int order[ST_BLOCK_MAX_PARTS]; /* part indexes, in chain order */
	int n_order;
	setting *settings;
	int n_settings;
	char *name;                    /* the instance: parts are <name>_<role> */
	bool placed;
	long x, y;
} request;

static int
role_index(const st_block_desc *b, const char *role, size_t len)
{
	for (int i = 0; i < b->n_parts; i++) {
		if (strlen(b->parts[i].role) == len && strncasecmp(b->parts[i].role, role, len) == 0)
			return i;
	}
	return -1;
}

static void
list_roles(const st_block_desc *b, st_buf *out)
{
	for (int i = 0; i < b->n_parts; i++)
		st_buf_printf(out, "%s%s", i ? ", " : "", b->parts[i].role);
}

static bool
in_order(const request *rq, int part)
{
	for (int k = 0; k < rq->n_order; k++) {
		if (rq->order[k] == part)
			return true;
	}
	return false;
}

static void
order_text(const request *rq, st_buf *out)
{
	for (int k = 0; k < rq->n_order; k++)
		st_buf_printf(out, "%s%s", k ? "," : "", rq->block->parts[rq->order[k]].role);
}

/* order=ROLE,ROLE...: which parts, chained in that order (roles in any case,
 * as the API writes them: CONV,BN,ACT). */
static int
parse_order(request *rq, const char *text, char *err, size_t size)
{
	const st_block_desc *b = rq->block;
	rq->n_order = 0;
	for (const char *p = text;;) {
		size_t len = strcspn(p, ",");
		int i = role_index(b, p, len);
		if (i < 0) {
			st_buf roles;
			st_buf_init(&roles);
			list_roles(b, &roles);
			snprintf(err, size, "order: '%.*s' is not a part of %s; its parts are %s", (int)len, p, b->name,
			         roles.data);
			st_buf_free(&roles);
			return -1;
		}
		if (in_order(rq, i)) {
			snprintf(err, size, "order: the part '%s' is named twice", b->parts[i].role);
			return -1;
		}
		rq->order[rq->n_order++] = i;
		if (p[len] == '\0')
			break;
		p += len + 1;
	}
	return 0;
}

/* Whether part i of the block takes param (its own, a block-style setting,
 * or "activation"); parts of types no plugin provides take nothing. */
static bool
part_takes(const st_registry *r, const st_block_part *part, const char *param)
{
	const st_layer_type *t = st_registry_find_layer(r, part->layer_type);
	if (t == NULL)
		return false;
	const st_layer_desc *d = t->desc;
	if (strcmp(param, "activation") == 0)
		return (d->flags & ST_LAYER_ACTIVATION) != 0;
	if (st_params_find(d->params, d->n_params, param) >= 0)
		return true;
	return st_block_style_index(param) >= 0 && st_params_have_xwn_set(d->params, d->n_params);
}

/* Routes KEY=VALUE: "role.param", or "param" alone when one part present
 * takes it; "activation" alone goes to the part with a default activation. */
static int
route(request *rq, const st_registry *r, const char *key, size_t key_len, const char *value, char *err,
      size_t size)
{
	const st_block_desc *b = rq->block;
	char *name = st_xstrndup(key, key_len);
	const char *dot = strchr(name, '.');
	int target = -1;
	const char *param = name;
	int rc = -1;
	if (dot != NULL) {
		target = role_index(b, name, (size_t)(dot - name));
		param = dot + 1;
		if (target < 0) {
			st_buf roles;
			st_buf_init(&roles);
			list_roles(b, &roles);
			snprintf(err, size, "%s: '%.*s' is not a part of %s; its parts are %s", name, (int)(dot - name),
			         name, b->name, roles.data);
			st_buf_free(&roles);
			goto out;
		}
		if (!part_takes(r, &b->parts[target], param)) {
			snprintf(err, size, "%s: the part '%s' (%s) has no parameter '%s'", name, b->parts[target].role,
			         b->parts[target].layer_type, param);
			goto out;
		}
	} else {
		int present = 0, absent = -1;
		bool by_default = strcmp(param, "activation") == 0;
		st_buf which;
		st_buf_init(&which);
		for (int i = 0; i < b->n_parts; i++) {
			bool takes = by_default ? b->parts[i].activation != NULL : part_takes(r, &b->parts[i], param);
			if (!takes)
				continue;
			if (!in_order(rq, i)) {
				absent = i;
				continue;
			}
			st_buf_printf(&which, "%s%s.%s", present ? " or " : "", b->parts[i].role, param);
			present++;
			target = i;
		}
		if (present > 1) {
			snprintf(err, size, "'%s' could be %s: name the part", param, which.data);
			st_buf_free(&which);
			goto out;
		}
		st_buf_free(&which);
		if (present == 0) {
			if (absent >= 0) {
				st_buf order;
				st_buf_init(&order);
				order_text(rq, &order);
				snprintf(err, size, "'%s' belongs to the part '%s', which the order %s leaves out", param,
				         b->parts[absent].role, order.data);
				st_buf_free(&order);
			} else {
				st_buf parts;
				st_buf_init(&parts);
				for (int i = 0; i < b->n_parts; i++)
					st_buf_printf(&parts, "%s%s (%s)", i ? ", " : "", b->parts[i].role,
					              b->parts[i].layer_type);
				snprintf(err, size, "no part of %s takes '%s'%s; its parts: %s", b->name, param,
				         st_block_style_index(param) >= 0 ? " (it needs the XWN parameter set)" : "",
				         parts.data);
				st_buf_free(&parts);
			}
			goto out;
		}
	}
	if (!in_order(rq, target)) {
		st_buf order;
		st_buf_init(&order);
		order_text(rq, &order);
		snprintf(err, size, "%.*s: the part '%s' is not in the order %s; add it there or leave this out",
		         (int)key_len, key, b->parts[target].role, order.data);
		st_buf_free(&order);
		goto out;
	}
	rq->settings = st_xreallocarray(rq->settings, (size_t)rq->n_settings + 1, sizeof *rq->settings);
	rq->settings[rq->n_settings++] = (setting){ target, name, param, value };
	name = NULL;
	rc = 0;
out:
	free(name);
	return rc;
}

static bool
is_integer(const char *s, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < -1000000 || v > 1000000)
		return false;
	*out = v;
	return true;
}

static void
request_free(request *rq)
{
	for (int i = 0; i < rq->n_settings; i++)
		free(rq->settings[i].key);
	free(rq->settings);
	free(rq->name);
}

/* Whether every part name of instance `name` is free. */
static bool
names_free(st_session *s, const request *rq, const char *name, char *err, size_t size)
{
	for (int k = 0; k < rq->n_order; k++) {
		char *part = st_xasprintf("%s_%s", name, rq->block->parts[rq->order[k]].role);
		int rc = edit_check_name(s, part, err, size);
		free(part);
		if (rc != 0)
			return false;
	}
	return true;
}

char *
st_block_describe(const st_registry *r, const st_block_type *b)
{
	const st_block_desc *d = b->desc;
	st_buf out;
	st_buf_init(&out);
	st_buf_printf(&out, "# %s (%s)\n\n%s\n", d->display_name ? d->display_name : d->name, d->name,
	              d->summary);
	if (d->doc != NULL)
		st_buf_printf(&out, "\n%s\n", d->doc);
	st_buf_puts(&out, "\n## Parts\n\n");
	for (int i = 0; i < d->n_parts; i++) {
		const st_block_part *p = &d->parts[i];
		st_buf_printf(&out, "- %s: %s", p->role, p->layer_type);
		if (st_registry_find_layer(r, p->layer_type) == NULL)
			st_buf_puts(&out, " (no loaded plugin provides it)");
		for (int k = 0; p->params && p->params[k]; k += 2)
			st_buf_printf(&out, "%s%s=%s", k ? " " : ", ", p->params[k], p->params[k + 1]);
		if (p->activation != NULL)
			st_buf_printf(&out, ", activation %s", p->activation);
		if (p->doc != NULL)
			st_buf_printf(&out, ". %s", p->doc);
		st_buf_putc(&out, '\n');
	}
	st_buf_puts(&out, "\nDefault order: ");
	for (int k = 0; d->order[k]; k++)
		st_buf_printf(&out, "%s%s", k ? "," : "", d->order[k]);
	st_buf_printf(&out, "\n\n## Adding it\n\nadd-block %s [NAME] [X Y] [order=ROLE,...] [[ROLE.]PARAM=VALUE...]\n\n"
	              "Each part becomes a layer NAME_ROLE, chained in the order given. A PARAM=VALUE goes "
	              "to the one part present that takes it (ROLE.PARAM names the part), activation=TYPE "
	              "to the part with an activation. Plugin: %s.\n",
	              d->name, b->plugin->name ? b->plugin->name : "?");
	return st_buf_take(&out);
}

int
cmd_add_block(st_session *s, int argc, char **argv, char *err, size_t size)
{
	st_graph *g = st_session_graph(s);
	if (argc == 1) {
		/* Alone, it lists the blocks. */
		for (int i = 0; i < g->registry->n_blocks; i++) {
			const st_block_desc *d = g->registry->blocks[i]->desc;
			st_buf order;
			st_buf_init(&order);
			for (int k = 0; d->order[k]; k++)
				st_buf_printf(&order, "%s%s", k ? "," : "", d->order[k]);
			edit_say(s, "  %-24s %-32s %s", d->name, order.data, d->summary);
			st_buf_free(&order);
		}
		if (g->registry->n_blocks == 0)
			edit_say(s, "no loaded plugin has blocks");
		return 0;
	}
	const st_block_type *bt = st_registry_find_block(g->registry, argv[1]);
	if (bt == NULL) {
		st_buf names;
		st_buf_init(&names);
		for (int i = 0; i < g->registry->n_blocks; i++)
			st_buf_printf(&names, "%s%s", i ? ", " : "", g->registry->blocks[i]->desc->name);
		snprintf(err, size, "unknown block '%s'; %s%s", argv[1], names.len ? "known: " : "no loaded plugin has blocks",
		         names.len ? names.data : "");
		st_buf_free(&names);
		return -1;
	}
	request rq = { .block = bt->desc };
	int rc = -1;
	for (int k = 0; bt->desc->order[k]; k++)
		rq.order[rq.n_order++] = role_index(bt->desc, bt->desc->order[k], strlen(bt->desc->order[k]));

	/* BLOCK [NAME] [X Y] [KEY=VALUE...] */
	int i = 2;
	long v;
	if (i < argc && strchr(argv[i], '=') == NULL && !is_integer(argv[i], &v)) {
		const char *why = st_name_problem(argv[i]);
		if (why != NULL) {
			snprintf(err, size, "'%s' cannot name a block: %s", argv[i], why);
			goto out;
		}
		rq.name = st_xstrdup(argv[i++]);
	}
	if (i < argc && strchr(argv[i], '=') == NULL) {
		if (i + 1 >= argc || !is_integer(argv[i], &rq.x) || !is_integer(argv[i + 1], &rq.y)) {
			snprintf(err, size, "'%s' is neither a position X Y nor KEY=VALUE; usage: add-block %s",
			         argv[i], st_command_find("add-block")->usage);
			goto out;
		}
		rq.placed = true;
		i += 2;
	}
	/* order= first, since routing depends on which parts are present. */
	for (int k = i; k < argc; k++) {
		if (strncmp(argv[k], "order=", 6) == 0 && parse_order(&rq, argv[k] + 6, err, size) != 0)
			goto out;
	}
	for (int k = i; k < argc; k++) {
		const char *eq = strchr(argv[k], '=');
		if (eq == NULL || eq == argv[k]) {
			snprintf(err, size, "'%s' is not KEY=VALUE (such as num_output=16 or conv.kernel=3x3)", argv[k]);
			goto out;
		}
		if (strncmp(argv[k], "order=", 6) == 0)
			continue;
		if (route(&rq, g->registry, argv[k], (size_t)(eq - argv[k]), eq + 1, err, size) != 0)
			goto out;
	}
	for (int k = 0; k < rq.n_order; k++) {
		const st_block_part *p = &bt->desc->parts[rq.order[k]];
		if (st_registry_find_layer(g->registry, p->layer_type) == NULL) {
			snprintf(err, size, "block %s needs the layer type '%s' for its part '%s', which no loaded plugin provides",
			         bt->desc->name, p->layer_type, p->role);
			goto out;
		}
	}

	/* The instance name: given, or the block's name and the first number
	 * that leaves every part name free. */
	if (rq.name != NULL) {
		if (!names_free(s, &rq, rq.name, err, size))
			goto out;
	} else {
		for (int n = 1;; n++) {
			char *name = st_xasprintf("%s_%d", bt->desc->name, n);
			char why[256];
			if (names_free(s, &rq, name, why, sizeof why)) {
				rq.name = name;
				break;
			}
			free(name);
		}
	}
	if (!rq.placed) {
		/* Below the lowest layer, as add places one. */
		rq.x = 0;
		rq.y = 0;
		for (int k = 0; k < g->n_layers; k++) {
			if (g->layers[k]->y + EDIT_ROW_STEP > rq.y)
				rq.y = g->layers[k]->y + EDIT_ROW_STEP;
		}
	}

	st_layer *made[ST_BLOCK_MAX_PARTS];
	st_buf list;
	st_buf_init(&list);
	for (int k = 0; k < rq.n_order; k++) {
		const st_block_part *p = &bt->desc->parts[rq.order[k]];
		char *name = st_xasprintf("%s_%s", rq.name, p->role);
		made[k] = st_layer_new(g->registry, p->layer_type, name);
		made[k]->x = (int)rq.x;
		made[k]->y = (int)rq.y + k * EDIT_ROW_STEP;
		edit_insert(s, made[k], g->n_layers);
		st_buf_printf(&list, "%s%s", k ? ", " : "", name);
		free(name);
		char why[512];
		for (int d = 0; p->params && p->params[d]; d += 2) {
			if (edit_set_text(s, made[k], p->params[d], p->params[d + 1], why, sizeof why) != 0) {
				snprintf(err, size, "block %s (plugin %s) has a default its part '%s' refuses: %s",
				         bt->desc->name, bt->plugin->name ? bt->plugin->name : "?", p->role, why);
				st_buf_free(&list);
				goto out;
			}
		}
		if (p->activation != NULL && edit_attach(s, made[k], p->activation, why, sizeof why) != 0) {
			snprintf(err, size, "block %s (plugin %s): part '%s': %s", bt->desc->name,
			         bt->plugin->name ? bt->plugin->name : "?", p->role, why);
			st_buf_free(&list);
			goto out;
		}
		if (k > 0)
			edit_link(s, made[k], 0, (st_port){ made[k - 1], 0 });
	}
	/* The user's settings, in the order given. */
	for (int k = 0; k < rq.n_settings; k++) {
		const setting *st = &rq.settings[k];
		st_layer *l = NULL;
		for (int j = 0; j < rq.n_order; j++) {
			if (rq.order[j] == st->part)
				l = made[j];
		}
		int r = strcmp(st->param, "activation") == 0 ? edit_attach(s, l, st->value, err, size)
		                                              : edit_set_text(s, l, st->param, st->value, err, size);
		if (r != 0) {
			st_buf_free(&list);
			goto out;
		}
	}
	edit_say(s, "added %s (%s): %s", rq.name, bt->desc->name, list.data);
	st_buf_free(&list);
	rc = 0;
out:
	request_free(&rq);
	return rc;
}
