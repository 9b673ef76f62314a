/* The node-graph canvas: glyph geometry, one-line parameter summaries, link
 * routing, drawing into the screen model, hit testing and spatial navigation. */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "st-tui.h"

#define GLYPH_WIDTH_MAX 28          /* a glyph grows for its text up to this */
#define GLYPH_HEIGHT 5              /* borders, name, type, summary */
#define GLYPH_HEIGHT_MINIMISED 3    /* borders, name */
#define SUMMARY_COLS_MAX (GLYPH_WIDTH_MAX - 4)
#define MINIMAP_W 20                /* the minimap's inside, in cells */
#define MINIMAP_H 6
#define ROW_CHOICES 4               /* rows a horizontal link segment may try */
#define SCAN_MAX 256                /* glyphs or segments one link weighs at most (bounded work) */
#define CLAIM_ROWS 64               /* rows per bucket of the index of long links' columns */
#define CLAIM_BUCKETS 64            /* buckets one query or claim walks at most */

/* ------------------------------------------------------------------------
 * One-line parameter summaries
 * ------------------------------------------------------------------------ */

/* How a summary shows one parameter. */
typedef enum summary_kind {
	SUM_VALUE, /* as it is; lists joined with the times sign */
	SUM_DIMS,  /* one number when every element is the same ("k3"), else joined */
	SUM_SCALE  /* resize factors: the times sign and the factors other than 1 ("×2") */
} summary_kind;

#define SUM_SKIP_DEFAULT 0x1u /* left out when equal to the type's default */
#define SUM_SKIP_ONES 0x2u    /* left out when every element is 1 */
#define SUM_SKIP_EMPTY 0x4u   /* left out when the list or string is empty */
#define SUM_ALTERNATIVE 0x8u  /* left out when the item before it was shown */

typedef struct summary_item {
	const char *param;
	summary_kind kind;
	const char *prefix;
	unsigned flags;
} summary_item;

#define SUMMARY_ITEMS 5

typedef struct summary_rule {
	const char *type;
	summary_item items[SUMMARY_ITEMS];
} summary_rule;

#define CONV_ITEMS                                                                              \
	{ { "num_output", SUM_VALUE, "", 0 }, { "kernel", SUM_DIMS, "k", 0 },                   \
	  { "stride", SUM_DIMS, "s", SUM_SKIP_ONES }, { "dilation", SUM_DIMS, "d", SUM_SKIP_ONES }, \
	  { "groups", SUM_VALUE, "g", SUM_SKIP_DEFAULT } }
#define AXIS_ITEMS { { "axis", SUM_VALUE, "axis ", 0 } }
#define EPSILON_ITEMS { { "epsilon", SUM_VALUE, "eps ", SUM_SKIP_DEFAULT } }

/* The standard types, sorted by name for bsearch; other types show their
 * first two explicitly set parameters. The activation is added to all. */
static const summary_rule summary_rules[] = {
	{ .type = "batch_normalization", .items = EPSILON_ITEMS },
	{ .type = "concatenation", .items = AXIS_ITEMS },
	{ .type = "constant", .items = { { "dims", SUM_VALUE, "", SUM_SKIP_EMPTY },
	                                 { "value", SUM_VALUE, "= ", SUM_SKIP_DEFAULT } } },
	{ .type = "convolution", .items = CONV_ITEMS },
	{ .type = "deconvolution", .items = CONV_ITEMS },
	{ .type = "depth_to_space", .items = { { "block_size", SUM_VALUE, "block ", 0 },
	                                       { "mode", SUM_VALUE, "", SUM_SKIP_DEFAULT } } },
	{ .type = "dropout", .items = { { "ratio", SUM_VALUE, "p ", 0 } } },
	{ .type = "elementwise", .items = { { "operation", SUM_VALUE, "", 0 } } },
	{ .type = "flatten", .items = AXIS_ITEMS },
	{ .type = "fully_connected", .items = { { "num_output", SUM_VALUE, "", 0 } } },
	{ .type = "global_pooling", .items = { { "mode", SUM_VALUE, "", 0 } } },
	{ .type = "input", .items = { { "dims", SUM_VALUE, "", 0 },
	                              { "dtype", SUM_VALUE, "", SUM_SKIP_DEFAULT } } },
	{ .type = "instance_normalization", .items = EPSILON_ITEMS },
	{ .type = "layer_normalization", .items = { { "axis", SUM_VALUE, "axis ", SUM_SKIP_DEFAULT },
	                                            { "epsilon", SUM_VALUE, "eps ", SUM_SKIP_DEFAULT } } },
	{ .type = "linear_blend", .items = { { "alpha", SUM_VALUE, "alpha ", 0 } } },
	{ .type = "onnx_operator", .items = { { "domain", SUM_VALUE, "", SUM_SKIP_EMPTY },
	                                      { "op_type", SUM_VALUE, "", 0 } } },
	{ .type = "pad", .items = { { "mode", SUM_VALUE, "", 0 }, { "pads", SUM_DIMS, "", 0 } } },
	{ .type = "pooling", .items = { { "mode", SUM_VALUE, "", 0 }, { "kernel", SUM_DIMS, "k", 0 },
	                                { "stride", SUM_DIMS, "s", SUM_SKIP_ONES } } },
	{ .type = "reshape", .items = { { "shape", SUM_VALUE, "", 0 } } },
	{ .type = "resize", .items = { { "sizes", SUM_VALUE, "to ", SUM_SKIP_EMPTY },
	                               { "scales", SUM_SCALE, "", SUM_ALTERNATIVE | SUM_SKIP_EMPTY },
	                               { "mode", SUM_VALUE, "", 0 } } },
	{ .type = "slice", .items = { { "axes", SUM_VALUE, "axes ", SUM_SKIP_EMPTY } } },
	{ .type = "softmax", .items = AXIS_ITEMS },
	{ .type = "space_to_depth", .items = { { "block_size", SUM_VALUE, "block ", 0 } } },
	{ .type = "split", .items = AXIS_ITEMS },
	{ .type = "transpose", .items = { { "perm", SUM_VALUE, "perm ", SUM_SKIP_EMPTY } } },
};

static int
rule_compare(const void *key, const void *elem)
{
	return strcmp((const char *)key, ((const summary_rule *)elem)->type);
}

/* A bounded text buffer that never overflows and always stays terminated. */
typedef struct text_out {
	char *p;
	int len, size;
} text_out;

static void text_printf(text_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
text_printf(text_out *o, const char *fmt, ...)
{
	if (o->len >= o->size - 1)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(o->p + o->len, (size_t)(o->size - o->len), fmt, ap);
	va_end(ap);
	if (n > 0)
		o->len = n < o->size - o->len ? o->len + n : o->size - 1;
}

/* Plain copies and integers skip printf: summaries are made for every
 * glyph of every frame. */
static void
text_puts(text_out *o, const char *s)
{
	size_t n = strlen(s);
	size_t room = o->len < o->size - 1 ? (size_t)(o->size - 1 - o->len) : 0;
	if (n > room)
		n = room;
	memcpy(o->p + o->len, s, n);
	o->len += (int)n;
	o->p[o->len] = '\0';
}

static void
text_int(text_out *o, int64_t v)
{
	char digits[24];
	int n = 0;
	uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	do {
		digits[n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u > 0);
	char text[26];
	int k = 0;
	if (v < 0)
		text[k++] = '-';
	while (n > 0)
		text[k++] = digits[--n];
	text[k] = '\0';
	text_puts(o, text);
}

/* Display columns of text: byte count for ASCII, the screen's measure otherwise. */
static int
text_cols(const char *s)
{
	for (const char *p = s; *p; p++) {
		if ((unsigned char)*p >= 0x80)
			return st_text_width(s);
	}
	return (int)strlen(s);
}

static void
format_list_int(text_out *o, const st_value *v, const char *times)
{
	if (v->count == 0) {
		text_puts(o, "[]");
		return;
	}
	for (int i = 0; i < v->count; i++) {
		if (i > 0)
			text_puts(o, times);
		text_int(o, v->ints[i]);
	}
}

static void
format_value(text_out *o, const st_param_desc *d, const st_value *v, summary_kind kind,
             const char *times)
{
	switch (v->kind) {
	case ST_PARAM_INT:
		text_int(o, v->i);
		break;
	case ST_PARAM_FLOAT:
		text_printf(o, "%g", v->f);
		break;
	case ST_PARAM_BOOL:
		text_puts(o, v->b ? "true" : "false");
		break;
	case ST_PARAM_ENUM: {
		int n = 0;
		while (d->enum_values && d->enum_values[n])
			n++;
		text_puts(o, v->i >= 0 && v->i < n ? d->enum_values[v->i] : "?");
		break;
	}
	case ST_PARAM_STRING:
		text_puts(o, v->s ? v->s : "");
		break;
	case ST_PARAM_DIMS: {
		bool same = v->count > 0;
		for (int i = 1; i < v->count; i++)
			same &= v->ints[i] == v->ints[0];
		if (kind == SUM_DIMS && same)
			text_int(o, v->ints[0]);
		else
			format_list_int(o, v, times);
		break;
	}
	case ST_PARAM_FLOATS:
		if (kind == SUM_SCALE) {
			/* Factors of 1 (batch, channels) say nothing; equal ones show once. */
			text_puts(o, times);
			int shown = 0;
			double first = 0;
			bool same = true;
			for (int i = 0; i < v->count; i++) {
				if (v->floats[i] == 1.0)
					continue;
				if (shown == 0)
					first = v->floats[i];
				same &= v->floats[i] == first;
				shown++;
			}
			if (shown == 0) {
				text_puts(o, "1");
			} else if (same) {
				text_printf(o, "%g", first);
			} else {
				shown = 0;
				for (int i = 0; i < v->count; i++) {
					if (v->floats[i] != 1.0)
						text_printf(o, "%s%g", shown++ ? times : "", v->floats[i]);
				}
			}
		} else if (v->count == 0) {
			text_puts(o, "[]");
		} else {
			for (int i = 0; i < v->count; i++)
				text_printf(o, "%s%g", i ? times : "", v->floats[i]);
		}
		break;
	}
}

static bool
value_all_ones(const st_value *v)
{
	if (v->kind != ST_PARAM_DIMS || v->count == 0)
		return false;
	for (int i = 0; i < v->count; i++) {
		if (v->ints[i] != 1)
			return false;
	}
	return true;
}

static bool
value_empty(const st_value *v)
{
	if (v->kind == ST_PARAM_DIMS || v->kind == ST_PARAM_FLOATS)
		return v->count == 0;
	if (v->kind == ST_PARAM_STRING)
		return v->s == NULL || v->s[0] == '\0';
	return false;
}

#define SUMMARY_PARTS 8
#define SUMMARY_PART_SIZE 64

/*
 * The summary line of a layer ("64 k3 s2 relu"): its key parameters by the
 * table above, then its activation, with the last parameters left out while
 * the line is wider than a glyph shows. times is the multiplication sign of
 * the screen's tier (both are one column). Returns the columns of buf.
 */
static int
layer_summary(const st_layer *l, const char *times, char *buf, int size)
{
	char parts[SUMMARY_PARTS][SUMMARY_PART_SIZE];
	int cols[SUMMARY_PARTS], n = 0;
	const st_layer_type *t = l->type;
	const summary_rule *rule = NULL;
	if (t != NULL)
		rule = bsearch(t->desc->name, summary_rules, sizeof summary_rules / sizeof summary_rules[0],
		               sizeof summary_rules[0], rule_compare);
	if (rule != NULL) {
		bool shown_before = false;
		for (int k = 0; k < SUMMARY_ITEMS && rule->items[k].param != NULL; k++) {
			const summary_item *it = &rule->items[k];
			int p = st_params_find(t->desc->params, t->desc->n_params, it->param);
			if (p < 0 || p >= l->params.count) {
				shown_before = false;
				continue;
			}
			const st_value *v = &l->params.values[p];
			bool skip = ((it->flags & SUM_SKIP_DEFAULT) && t->defaults != NULL &&
			             st_value_equal(v, &t->defaults[p])) ||
			            ((it->flags & SUM_SKIP_ONES) && value_all_ones(v)) ||
			            ((it->flags & SUM_SKIP_EMPTY) && value_empty(v)) ||
			            ((it->flags & SUM_ALTERNATIVE) && shown_before);
			shown_before = !skip;
			if (skip)
				continue;
			text_out o = { parts[n], 0, SUMMARY_PART_SIZE };
			parts[n][0] = '\0';
			text_puts(&o, it->prefix);
			format_value(&o, &t->desc->params[p], v, it->kind, times);
			n++;
		}
	} else if (t != NULL) {
		for (int p = 0; p < l->params.count && p < t->desc->n_params && n < 2; p++) {
			if (l->params.set == NULL || !l->params.set[p])
				continue;
			text_out o = { parts[n], 0, SUMMARY_PART_SIZE };
			parts[n][0] = '\0';
			text_puts(&o, t->desc->params[p].name);
			text_puts(&o, "=");
			format_value(&o, &t->desc->params[p], &l->params.values[p], SUM_VALUE, times);
			n++;
		}
	}
	bool act = l->act.type_name != NULL && n < SUMMARY_PARTS;
	if (act) {
		snprintf(parts[n], SUMMARY_PART_SIZE, "%s", l->act.type_name);
		n++;
	}
	int total = -1;
	for (int i = 0; i < n; i++) {
		cols[i] = text_cols(parts[i]);
		total += cols[i] + 1;
	}
	/* Shorten from the end, keeping the first parameter and the activation. */
	while (total > SUMMARY_COLS_MAX && n - (act ? 1 : 0) > 1) {
		int drop = n - (act ? 2 : 1);
		total -= cols[drop] + 1;
		memmove(parts[drop], parts[drop + 1], (size_t)(n - drop - 1) * SUMMARY_PART_SIZE);
		memmove(&cols[drop], &cols[drop + 1], (size_t)(n - drop - 1) * sizeof cols[0]);
		n--;
	}
	text_out o = { buf, 0, size };
	buf[0] = '\0';
	for (int i = 0; i < n; i++) {
		if (i > 0)
			text_puts(&o, " ");
		text_puts(&o, parts[i]);
	}
	return total < 0 ? 0 : total;
}

/* The type line: the registered name, or the name as written when unknown. */
static const char *
layer_type_text(const st_layer *l)
{
	return l->type != NULL ? l->type->desc->name : l->type_name ? l->type_name : "?";
}

/* ------------------------------------------------------------------------
 * Glyph geometry
 * ------------------------------------------------------------------------ */

typedef struct glyph_geo {
	st_rect r;
	int n_in, n_out; /* terminals on the top and bottom edges */
} glyph_geo;

/* Output terminals: from the last check, else the type's count, and never
 * fewer than the links leaving the layer need. */
static int
output_count(const st_layer *l)
{
	int n = 0;
	if (l->outputs_known)
		n = l->n_outputs;
	else if (l->type != NULL)
		n = l->type->desc->n_outputs;
	for (int i = 0; i < l->n_consumers; i++) {
		const st_consumer *c = &l->consumers[i];
		if (c->layer != NULL && c->input >= 0 && c->input < c->layer->n_inputs &&
		    c->layer->inputs[c->input].output + 1 > n)
			n = c->layer->inputs[c->input].output + 1;
	}
	return n;
}

static int
max_int(int a, int b)
{
	return a > b ? a : b;
}

static int
min_int(int a, int b)
{
	return a < b ? a : b;
}

static void
glyph_geometry(const st_layer *l, glyph_geo *g)
{
	g->n_in = st_layer_terminal_count(l);
	g->n_out = output_count(l);
	int name = text_cols(l->name ? l->name : "");
	int w;
	if (l->minimized) {
		/* " name ▪" and room for the mark. */
		w = name + 8;
	} else {
		char summary[SUMMARY_PARTS * SUMMARY_PART_SIZE];
		int type = text_cols(layer_type_text(l));
		int sum = layer_summary(l, "x", summary, sizeof summary);
		w = max_int(max_int(name + 2, type), sum) + 4;
	}
	if (w < ST_GLYPH_WIDTH_MIN)
		w = ST_GLYPH_WIDTH_MIN;
	if (w > GLYPH_WIDTH_MAX)
		w = GLYPH_WIDTH_MAX;
	/* Terminals keep at least one cell of border between them. */
	int terminals = max_int(g->n_in, g->n_out);
	if (w < 2 * terminals + 3)
		w = 2 * terminals + 3;
	g->r = (st_rect){ l->x, l->y, w, l->minimized ? GLYPH_HEIGHT_MINIMISED : GLYPH_HEIGHT };
}

/* Column of terminal i of n spread evenly along an edge of r, never on a corner. */
static int
terminal_x(const st_rect *r, int i, int n)
{
	if (n < i + 1)
		n = i + 1;
	return r->x + (int)(((int64_t)(i + 1) * (r->w - 1)) / (n + 1));
}

void
st_glyph_rect(const st_layer *l, st_rect *r)
{
	glyph_geo g;
	glyph_geometry(l, &g);
	*r = g.r;
}

int
st_glyph_input_x(const st_layer *l, int i)
{
	glyph_geo g;
	glyph_geometry(l, &g);
	return terminal_x(&g.r, i, g.n_in);
}

int
st_glyph_output_x(const st_layer *l, int o)
{
	glyph_geo g;
	glyph_geometry(l, &g);
	return terminal_x(&g.r, o, g.n_out);
}

/* ------------------------------------------------------------------------
 * Link routing
 *
 * A link leaves an output terminal downwards and enters an input terminal
 * from above, in five orthogonal segments: down from the output to row r1,
 * across to column vx, down (or up) to row r2, across to the input's column,
 * down into the input. A link with free rows between its ends and nothing in
 * the way takes one row (r1 == r2); one that would run through glyphs takes
 * a free column vx beside them; one that climbs (a cycle, or a hand-placed
 * consumer above its producer) goes around both. Routes are computed for
 * the whole graph, so that no route depends on where the view is.
 * ------------------------------------------------------------------------ */

typedef struct link_route {
	int producer, output;   /* layer index and output terminal */
	int consumer, input;
	int64_t net;            /* links of one output share segments */
	int ox, sy;             /* first cell below the output terminal */
	int ix, ey;             /* last cell above the input terminal */
	int vx, r1, r2;
	int lo1, hi1, lo2, hi2; /* rows the two horizontals may take */
	bool simple, around;
	bool hidden;            /* the terminals touch: nothing to draw */
} link_route;

typedef struct span {
	int a, b;
} span;

/* A vertical segment given to a link, which others keep clear of. */
typedef struct claim {
	int x, y0, y1;
	int64_t net;
} claim;

/* A horizontal segment placed on a row. */
typedef struct placed {
	int x0, x1;
	int64_t net;
} placed;

/* An int -> list of ints map: open addressing over the keys, each key's
 * values chained through next (newest first). */
typedef struct multimap {
	int *keys, *heads; /* heads[h] -2: empty slot */
	int cap, used;
	int *next, *values;
	int n, cap_items;
} multimap;

static void
multimap_init(multimap *mm)
{
	memset(mm, 0, sizeof *mm);
	mm->cap = 64;
	mm->keys = st_xcalloc((size_t)mm->cap, sizeof *mm->keys);
	mm->heads = st_xmalloc((size_t)mm->cap * sizeof *mm->heads);
	for (int i = 0; i < mm->cap; i++)
		mm->heads[i] = -2;
}

static void
multimap_free(multimap *mm)
{
	free(mm->keys);
	free(mm->heads);
	free(mm->next);
	free(mm->values);
}

static unsigned
multimap_find(const multimap *mm, int key)
{
	unsigned h = ((unsigned)key * 2654435761u) & (unsigned)(mm->cap - 1);
	while (mm->heads[h] != -2 && mm->keys[h] != key)
		h = (h + 1) & (unsigned)(mm->cap - 1);
	return h;
}

/* The first item of key's list, or -1; items continue through mm->next. */
static int
multimap_first(const multimap *mm, int key)
{
	unsigned h = multimap_find(mm, key);
	return mm->heads[h] == -2 ? -1 : mm->heads[h];
}

static void
multimap_add(multimap *mm, int key, int value)
{
	if (2 * (mm->used + 1) > mm->cap) {
		multimap old = *mm;
		mm->cap *= 2;
		mm->used = 0;
		mm->keys = st_xcalloc((size_t)mm->cap, sizeof *mm->keys);
		mm->heads = st_xmalloc((size_t)mm->cap * sizeof *mm->heads);
		for (int i = 0; i < mm->cap; i++)
			mm->heads[i] = -2;
		for (int i = 0; i < old.cap; i++) {
			if (old.heads[i] == -2)
				continue;
			unsigned h = multimap_find(mm, old.keys[i]);
			mm->keys[h] = old.keys[i];
			mm->heads[h] = old.heads[i];
			mm->used++;
		}
		free(old.keys);
		free(old.heads);
	}
	unsigned h = multimap_find(mm, key);
	if (mm->heads[h] == -2) {
		mm->keys[h] = key;
		mm->heads[h] = -1;
		mm->used++;
	}
	if (mm->n == mm->cap_items) {
		mm->cap_items = mm->cap_items ? 2 * mm->cap_items : 64;
		mm->next = st_xreallocarray(mm->next, (size_t)mm->cap_items, sizeof *mm->next);
		mm->values = st_xreallocarray(mm->values, (size_t)mm->cap_items, sizeof *mm->values);
	}
	mm->values[mm->n] = value;
	mm->next[mm->n] = mm->heads[h];
	mm->heads[h] = mm->n++;
}

typedef struct canvas_model {
	const st_graph *g;
	int n;
	glyph_geo *geo;   /* per layer */
	int *by_y;        /* layer indices by row, then index */
	link_route *routes;
	int n_routes;
	/* Scratch. */
	span *spans;
	int n_spans, cap_spans;
	claim *claims;
	int n_claims, cap_claims;
	multimap claim_rows;  /* CLAIM_ROWS-row bucket -> claims crossing it */
	int *wide_claims;     /* claims over more than CLAIM_BUCKETS buckets */
	int n_wide, cap_wide;
} canvas_model;

static int
compare_by_y(const void *a, const void *b, void *arg)
{
	const glyph_geo *geo = arg;
	int i = *(const int *)a, j = *(const int *)b;
	if (geo[i].r.y != geo[j].r.y)
		return geo[i].r.y < geo[j].r.y ? -1 : 1;
	return (i > j) - (i < j);
}

/* The first entry of by_y whose row is at least y. */
static int
first_at_row(const canvas_model *m, int y)
{
	int lo = 0, hi = m->n;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (m->geo[m->by_y[mid]].r.y < y)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void
push_span(canvas_model *m, int a, int b)
{
	if (m->n_spans == m->cap_spans) {
		m->cap_spans = m->cap_spans ? 2 * m->cap_spans : 64;
		m->spans = st_xreallocarray(m->spans, (size_t)m->cap_spans, sizeof *m->spans);
	}
	m->spans[m->n_spans++] = (span){ a, b };
}

static int
compare_span(const void *a, const void *b)
{
	const span *p = a, *q = b;
	if (p->a != q->a)
		return p->a < q->a ? -1 : 1;
	return (p->b > q->b) - (p->b < q->b);
}

/* Where a walk over the glyphs that overlap rows from y0 down starts in
 * by_y: no glyph is taller than GLYPH_HEIGHT. */
static int
rows_begin(const canvas_model *m, int y0)
{
	return first_at_row(m, y0 - GLYPH_HEIGHT + 1);
}

/*
 * Whether link rt can take one row between its ends without running through
 * another glyph; sets the rows it may take (the first run of free rows).
 */
static bool
route_simple(canvas_model *m, link_route *rt)
{
	int a = rt->sy, b = rt->ey;
	int x0 = min_int(rt->ox, rt->ix), x1 = max_int(rt->ox, rt->ix);
	int first_blocked_below_output = b + 1, last_blocked_above_input = a - 1, seen = 0;
	m->n_spans = 0;
	for (int k = rows_begin(m, a); k < m->n && m->geo[m->by_y[k]].r.y <= b; k++) {
		int gi = m->by_y[k];
		const st_rect *r = &m->geo[gi].r;
		if (r->y + r->h - 1 < a || gi == rt->producer || gi == rt->consumer)
			continue;
		int gy0 = max_int(r->y, a), gy1 = min_int(r->y + r->h - 1, b);
		if (r->x <= rt->ox && rt->ox < r->x + r->w && gy0 < first_blocked_below_output)
			first_blocked_below_output = gy0;
		if (r->x <= rt->ix && rt->ix < r->x + r->w && gy1 > last_blocked_above_input)
			last_blocked_above_input = gy1;
		if (r->x <= x1 && x0 < r->x + r->w)
			push_span(m, gy0, gy1);
		if (++seen > SCAN_MAX)
			return false;
	}
	int lo = last_blocked_above_input + 1, hi = first_blocked_below_output - 1;
	if (rt->ox == rt->ix) {
		/* One straight line: any glyph on the column is in the way. */
		if (first_blocked_below_output <= b)
			return false;
		rt->lo1 = rt->hi1 = rt->lo2 = rt->hi2 = a;
		return true;
	}
	if (lo > hi)
		return false;
	st_sort(m->spans, (size_t)m->n_spans, sizeof *m->spans, compare_span);
	int row = lo, k = 0;
	for (; k < m->n_spans && row <= hi; k++) {
		if (m->spans[k].a > row)
			break;
		if (m->spans[k].b >= row)
			row = m->spans[k].b + 1;
	}
	if (row > hi)
		return false;
	int end = hi;
	if (k < m->n_spans && m->spans[k].a - 1 < end)
		end = m->spans[k].a - 1;
	rt->lo1 = rt->lo2 = row;
	rt->hi1 = rt->hi2 = end;
	return true;
}

static int
bucket_of(int y)
{
	return y >= 0 ? y / CLAIM_ROWS : -((-y + CLAIM_ROWS - 1) / CLAIM_ROWS);
}

/* Blocks the columns beside claim i when it is another output's and meets rows [y0, y1]. */
static void
claim_span(canvas_model *m, int i, int y0, int y1, int64_t net)
{
	const claim *c = &m->claims[i];
	if (c->net != net && c->y0 <= y1 && y0 <= c->y1)
		push_span(m, c->x - 1, c->x + 1);
}

/*
 * A column for the vertical of a long link from column ox to column ix,
 * with one free cell between it and any glyph overlapping rows [y0, y1]
 * (skip_a and skip_b excepted) and any vertical claimed there by another
 * output's links: of the free columns beside the blocked runs, the one
 * that makes the link's horizontals shortest, then the one nearest ox,
 * then the one on the right.
 */
static int
free_column(canvas_model *m, int y0, int y1, int skip_a, int skip_b, int64_t net, int ox, int ix)
{
	m->n_spans = 0;
	for (int k = rows_begin(m, y0); k < m->n && m->geo[m->by_y[k]].r.y <= y1; k++) {
		int gi = m->by_y[k];
		const st_rect *r = &m->geo[gi].r;
		if (r->y + r->h - 1 >= y0 && gi != skip_a && gi != skip_b)
			push_span(m, r->x - 1, r->x + r->w);
		if (m->n_spans > SCAN_MAX)
			break;
	}
	if (m->n_spans > SCAN_MAX)
		return ox;
	int b0 = bucket_of(y0), b1 = bucket_of(y1);
	if (b1 - b0 >= CLAIM_BUCKETS) {
		for (int i = 0; i < m->n_claims; i++)
			claim_span(m, i, y0, y1, net);
	} else {
		for (int b = b0; b <= b1; b++) {
			for (int k = multimap_first(&m->claim_rows, b); k >= 0; k = m->claim_rows.next[k])
				claim_span(m, m->claim_rows.values[k], y0, y1, net);
		}
		for (int i = 0; i < m->n_wide; i++)
			claim_span(m, m->wide_claims[i], y0, y1, net);
	}
	st_sort(m->spans, (size_t)m->n_spans, sizeof *m->spans, compare_span);
	/* Merge the runs that touch, then weigh the columns around them. */
	int runs = 0;
	for (int i = 0; i < m->n_spans; i++) {
		if (runs > 0 && m->spans[i].a <= m->spans[runs - 1].b + 1) {
			if (m->spans[i].b > m->spans[runs - 1].b)
				m->spans[runs - 1].b = m->spans[i].b;
		} else {
			m->spans[runs++] = m->spans[i];
		}
	}
	int best = ox;
	int64_t best_cost = -1;
	for (int i = -1; i < 2 * runs + 1; i++) {
		int x = i < 0 ? ox : i == 2 * runs ? ix : i % 2 == 0 ? m->spans[i / 2].a - 1 : m->spans[i / 2].b + 1;
		bool blocked = false;
		for (int k = 0; k < runs && !blocked; k++)
			blocked = m->spans[k].a <= x && x <= m->spans[k].b;
		if (blocked)
			continue;
		int64_t cost = (((int64_t)abs(x - ox) + abs(ix - x)) * 1048576 + abs(x - ox)) * 2 + (x < ox);
		if (best_cost < 0 || cost < best_cost) {
			best = x;
			best_cost = cost;
		}
	}
	return best;
}

static void
add_claim(canvas_model *m, int x, int y0, int y1, int64_t net)
{
	if (m->n_claims == m->cap_claims) {
		m->cap_claims = m->cap_claims ? 2 * m->cap_claims : 64;
		m->claims = st_xreallocarray(m->claims, (size_t)m->cap_claims, sizeof *m->claims);
	}
	claim c = { x, min_int(y0, y1), max_int(y0, y1), net };
	m->claims[m->n_claims] = c;
	int b0 = bucket_of(c.y0), b1 = bucket_of(c.y1);
	if (b1 - b0 >= CLAIM_BUCKETS) {
		if (m->n_wide == m->cap_wide) {
			m->cap_wide = m->cap_wide ? 2 * m->cap_wide : 16;
			m->wide_claims = st_xreallocarray(m->wide_claims, (size_t)m->cap_wide, sizeof *m->wide_claims);
		}
		m->wide_claims[m->n_wide++] = m->n_claims;
	} else {
		for (int b = b0; b <= b1; b++)
			multimap_add(&m->claim_rows, b, m->n_claims);
	}
	m->n_claims++;
}

/* Long links get their columns shortest first, so that nested ones nest. */
static int
compare_long(const void *a, const void *b, void *arg)
{
	const link_route *routes = arg;
	const link_route *p = &routes[*(const int *)a], *q = &routes[*(const int *)b];
	int sp = abs(p->ey - p->sy), sq = abs(q->ey - q->sy);
	if (sp != sq)
		return sp < sq ? -1 : 1;
	return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

typedef struct hseg {
	int lo, hi;      /* rows it may take */
	int x0, x1;
	int from, to;    /* columns where it comes down to its row and leaves it downwards */
	int64_t net;
	int route;
	int which;       /* 1: row r1, 2: row r2 */
	bool prefer_high;
	int row;
} hseg;

static int
compare_hseg(const void *a, const void *b)
{
	const hseg *p = a, *q = b;
	if (p->lo != q->lo)
		return p->lo < q->lo ? -1 : 1;
	if (p->hi != q->hi)
		return p->hi < q->hi ? -1 : 1;
	if (p->x0 != q->x0)
		return p->x0 < q->x0 ? -1 : 1;
	if (p->x1 != q->x1)
		return p->x1 < q->x1 ? -1 : 1;
	if (p->route != q->route)
		return p->route < q->route ? -1 : 1;
	return (p->which > q->which) - (p->which < q->which);
}

/* Whether two horizontals of different outputs would touch on one row. */
static bool
hsegs_meet(const hseg *p, const hseg *q)
{
	return p->net != q->net && p->x0 <= q->x1 + 1 && q->x0 - 1 <= p->x1;
}

/* Crossings that putting p on a row above q's causes: p's leg down from its
 * row through q's horizontal, and q's leg down to its row through p's. */
static int
above_cost(const hseg *p, const hseg *q)
{
	if (!hsegs_meet(p, q))
		return 0;
	return (q->x0 < p->to && p->to < q->x1) + (p->x0 < q->from && q->from < p->x1);
}

#define CHANNEL_ORDER_MAX 128 /* horizontals of one channel ordered by their crossings */

/* Orders the horizontals of one channel from the top row down, each time
 * taking the one whose place above all the rest crosses least. */
static void
order_channel(hseg *segs, int k, int *order)
{
	for (int i = 0; i < k; i++)
		order[i] = i;
	if (k < 2 || k > CHANNEL_ORDER_MAX)
		return;
	int *sums = st_xcalloc((size_t)k, sizeof *sums);
	bool *done = st_xcalloc((size_t)k, sizeof *done);
	for (int i = 0; i < k; i++) {
		for (int j = 0; j < k; j++) {
			if (i != j)
				sums[i] += above_cost(&segs[i], &segs[j]);
		}
	}
	for (int n = 0; n < k; n++) {
		int best = -1;
		for (int i = 0; i < k; i++) {
			if (!done[i] && (best < 0 || sums[i] < sums[best]))
				best = i;
		}
		order[n] = best;
		done[best] = true;
		for (int i = 0; i < k; i++) {
			if (!done[i])
				sums[i] -= above_cost(&segs[i], &segs[best]);
		}
	}
	free(sums);
	free(done);
}

/* Rows -> horizontals already placed there. */
typedef struct row_table {
	multimap rows;  /* row -> indices into items */
	placed *items;
	int n_items, cap_items;
} row_table;

/* Whether no other output's horizontal on row touches [x0, x1]; past
 * SCAN_MAX of them (a layer feeding thousands) the row counts as free. */
static bool
row_free(const row_table *t, int row, int x0, int x1, int64_t net)
{
	int seen = 0;
	for (int k = multimap_first(&t->rows, row); k >= 0 && seen++ < SCAN_MAX; k = t->rows.next[k]) {
		const placed *p = &t->items[t->rows.values[k]];
		if (p->net != net && p->x0 <= x1 + 1 && x0 - 1 <= p->x1)
			return false;
	}
	return true;
}

static void
row_place(row_table *t, int row, int x0, int x1, int64_t net)
{
	if (t->n_items == t->cap_items) {
		t->cap_items = t->cap_items ? 2 * t->cap_items : 64;
		t->items = st_xreallocarray(t->items, (size_t)t->cap_items, sizeof *t->items);
	}
	t->items[t->n_items] = (placed){ x0, x1, net };
	multimap_add(&t->rows, row, t->n_items++);
}

/*
 * Gives each horizontal segment a row in its range. Segments with the same
 * range form a channel, ordered top-down so that their legs cross as little
 * as they can; each then takes the first row past those of the channel's
 * segments above it that it would touch, where no other output's segment
 * lies (from the bottom up for segments that prefer the lowest row).
 */
static void
assign_rows(canvas_model *m)
{
	hseg *segs = st_xcalloc((size_t)(2 * m->n_routes + 1), sizeof *segs);
	int n = 0;
	for (int i = 0; i < m->n_routes; i++) {
		link_route *rt = &m->routes[i];
		if (rt->hidden)
			continue;
		rt->r1 = rt->lo1;
		rt->r2 = rt->simple ? rt->r1 : rt->hi2;
		int ax = rt->simple ? rt->ix : rt->vx;
		if (ax != rt->ox)
			segs[n++] = (hseg){ rt->lo1, rt->hi1, min_int(rt->ox, ax), max_int(rt->ox, ax), rt->ox, ax,
			                    rt->net, i, 1, false, 0 };
		if (!rt->simple && rt->vx != rt->ix)
			segs[n++] = (hseg){ rt->lo2, rt->hi2, min_int(rt->vx, rt->ix), max_int(rt->vx, rt->ix),
			                    rt->vx, rt->ix, rt->net, i, 2, true, 0 };
	}
	st_sort(segs, (size_t)n, sizeof *segs, compare_hseg);
	row_table t = { 0 };
	multimap_init(&t.rows);
	int *order = st_xmalloc((size_t)(n + 1) * sizeof *order);
	for (int a = 0; a < n;) {
		int b = a;
		while (b < n && segs[b].lo == segs[a].lo && segs[b].hi == segs[a].hi)
			b++;
		int k = b - a;
		hseg *ch = segs + a;
		order_channel(ch, k, order);
		bool up = ch[0].prefer_high;
		for (int j = 0; j < k; j++) {
			hseg *s = &ch[order[up ? k - 1 - j : j]];
			/* Past the rows of the segments placed before it that it touches. */
			int row = up ? s->hi : s->lo;
			for (int i = 0; i < j && k <= CHANNEL_ORDER_MAX; i++) {
				const hseg *q = &ch[order[up ? k - 1 - i : i]];
				if (hsegs_meet(s, q))
					row = up ? min_int(row, q->row - 1) : max_int(row, q->row + 1);
			}
			row = max_int(s->lo, min_int(s->hi, row));
			int tries = ROW_CHOICES;
			for (int r = row; tries-- > 0 && r >= s->lo && r <= s->hi; r += up ? -1 : 1) {
				if (row_free(&t, r, s->x0, s->x1, s->net)) {
					row = r;
					break;
				}
			}
			s->row = row;
			row_place(&t, row, s->x0, s->x1, s->net);
			link_route *rt = &m->routes[s->route];
			if (s->which == 1) {
				rt->r1 = row;
				if (rt->simple)
					rt->r2 = row;
			} else {
				rt->r2 = row;
			}
		}
		a = b;
	}
	multimap_free(&t.rows);
	free(t.items);
	free(order);
	free(segs);
}

static bool
layer_in_graph(const st_graph *g, const st_layer *l)
{
	return l != NULL && l->index >= 0 && l->index < g->n_layers && g->layers[l->index] == l;
}

static void
route_links(canvas_model *m)
{
	const st_graph *g = m->g;
	int cap = 0;
	for (int i = 0; i < g->n_layers; i++)
		cap += g->layers[i]->n_inputs;
	m->routes = st_xcalloc((size_t)(cap + 1), sizeof *m->routes);
	int *longs = st_xmalloc((size_t)(cap + 1) * sizeof *longs);
	int n_long = 0;
	for (int ci = 0; ci < g->n_layers; ci++) {
		const st_layer *c = g->layers[ci];
		for (int k = 0; k < c->n_inputs; k++) {
			const st_port *p = &c->inputs[k];
			if (!layer_in_graph(g, p->layer) || p->output < 0)
				continue;
			int pi = p->layer->index;
			const glyph_geo *pg = &m->geo[pi], *cg = &m->geo[ci];
			link_route *rt = &m->routes[m->n_routes];
			*rt = (link_route){ .producer = pi, .output = p->output, .consumer = ci, .input = k };
			rt->net = (int64_t)pi << 32 | (uint32_t)p->output;
			rt->ox = terminal_x(&pg->r, p->output, pg->n_out);
			rt->sy = pg->r.y + pg->r.h;
			rt->ix = terminal_x(&cg->r, k, cg->n_in);
			rt->ey = cg->r.y - 1;
			bool stacked = pg->r.x < cg->r.x + cg->r.w && cg->r.x < pg->r.x + pg->r.w;
			bool overlap = stacked && pg->r.y < cg->r.y + cg->r.h && cg->r.y < pg->r.y + pg->r.h;
			/* Touching or overlapping glyphs leave no room for a link. */
			if (pi != ci && ((rt->ey == rt->sy - 1 && stacked) || overlap)) {
				rt->hidden = true;
			} else if (pi != ci && rt->ey >= rt->sy && route_simple(m, rt)) {
				rt->simple = true;
			} else {
				rt->around = pi == ci || rt->ey < rt->sy;
				longs[n_long++] = m->n_routes;
			}
			m->n_routes++;
		}
	}
	qsort_r(longs, (size_t)n_long, sizeof *longs, compare_long, m->routes);
	for (int i = 0; i < n_long; i++) {
		link_route *rt = &m->routes[longs[i]];
		if (rt->around) {
			int y0 = min_int(rt->sy, rt->ey), y1 = max_int(rt->sy, rt->ey);
			rt->vx = free_column(m, y0, y1, -1, -1, rt->net, rt->ox, rt->ix);
			rt->lo1 = rt->hi1 = rt->sy;
			rt->lo2 = rt->hi2 = rt->ey;
		} else {
			rt->vx = free_column(m, rt->sy, rt->ey, rt->producer, rt->consumer, rt->net, rt->ox,
			                     rt->ix);
			int mid = rt->sy + (rt->ey - rt->sy) / 2;
			rt->lo1 = rt->sy;
			rt->hi1 = min_int(rt->sy + 2, mid);
			rt->lo2 = max_int(rt->ey - 2, mid);
			rt->hi2 = rt->ey;
		}
		add_claim(m, rt->vx, rt->sy, rt->ey, rt->net);
	}
	free(longs);
	assign_rows(m);
}

/* Every glyph's geometry and every link's route. */
static void
model_init(canvas_model *m, const st_graph *g)
{
	memset(m, 0, sizeof *m);
	m->g = g;
	m->n = g->n_layers;
	m->geo = st_xcalloc((size_t)(m->n + 1), sizeof *m->geo);
	m->by_y = st_xmalloc((size_t)(m->n + 1) * sizeof *m->by_y);
	multimap_init(&m->claim_rows);
	for (int i = 0; i < m->n; i++) {
		glyph_geometry(g->layers[i], &m->geo[i]);
		m->by_y[i] = i;
	}
	qsort_r(m->by_y, (size_t)m->n, sizeof *m->by_y, compare_by_y, m->geo);
	route_links(m);
}

static void
model_free(canvas_model *m)
{
	free(m->geo);
	free(m->by_y);
	free(m->routes);
	free(m->spans);
	free(m->claims);
	free(m->wide_claims);
	multimap_free(&m->claim_rows);
}

/* ------------------------------------------------------------------------
 * Crossings of the routed links (for bench/tui and the layout tests)
 * ------------------------------------------------------------------------ */

typedef struct seg {
	int fixed;     /* the column of a vertical, the row of a horizontal */
	int a, b;      /* its extent along the other axis, a <= b */
	int64_t net;
} seg;

static void
push_seg(seg **v, int *n, int *cap, int fixed, int a, int b, int64_t net)
{
	if (a == b)
		return;
	if (*n == *cap) {
		*cap = *cap ? 2 * *cap : 256;
		*v = st_xreallocarray(*v, (size_t)*cap, sizeof **v);
	}
	(*v)[(*n)++] = (seg){ fixed, min_int(a, b), max_int(a, b), net };
}

/* Segments of each route; verticals include the terminal cells at their ends. */
static void
route_segments(const canvas_model *m, seg **hs, int *nh, seg **vs, int *nv)
{
	int cap_h = 0, cap_v = 0;
	*hs = *vs = NULL;
	*nh = *nv = 0;
	for (int i = 0; i < m->n_routes; i++) {
		const link_route *rt = &m->routes[i];
		if (rt->hidden)
			continue;
		int vx = rt->simple ? rt->ix : rt->vx;
		push_seg(vs, nv, &cap_v, rt->ox, rt->sy - 1, rt->r1, rt->net);
		push_seg(hs, nh, &cap_h, rt->r1, rt->ox, vx, rt->net);
		push_seg(vs, nv, &cap_v, vx, rt->r1, rt->r2, rt->net);
		push_seg(hs, nh, &cap_h, rt->r2, vx, rt->ix, rt->net);
		push_seg(vs, nv, &cap_v, rt->ix, rt->r2, rt->ey + 1, rt->net);
	}
}

typedef struct sweep_event {
	int x;
	int kind;   /* 0 add a horizontal, 1 query a vertical, 2 remove a horizontal */
	int index;
} sweep_event;

static int
compare_event(const void *a, const void *b)
{
	const sweep_event *p = a, *q = b;
	if (p->x != q->x)
		return p->x < q->x ? -1 : 1;
	if (p->kind != q->kind)
		return p->kind < q->kind ? -1 : 1;
	return (p->index > q->index) - (p->index < q->index);
}


static int
compare_seg_net(const void *a, const void *b)
{
	const seg *p = a, *q = b;
	return (p->net > q->net) - (p->net < q->net);
}

/* Proper crossings of verticals with horizontals, both strictly inside: a
 * sweep over columns with the horizontals alive there counted by row. */
static int64_t
count_crossings(seg *hs, int nh, seg *vs, int nv)
{
	if (nh == 0 || nv == 0)
		return 0;
	int64_t total = 0;
	int *rows = st_xmalloc((size_t)nh * sizeof *rows);
	for (int i = 0; i < nh; i++)
		rows[i] = hs[i].fixed;
	int nr = st_unique_sorted(rows, nh);
	sweep_event *ev = st_xmalloc((size_t)(2 * nh + nv) * sizeof *ev);
	int ne = 0;
	for (int i = 0; i < nh; i++) {
		if (hs[i].b - hs[i].a < 2)
			continue;
		ev[ne++] = (sweep_event){ hs[i].a + 1, 0, i };
		ev[ne++] = (sweep_event){ hs[i].b - 1, 2, i };
	}
	for (int i = 0; i < nv; i++)
		ev[ne++] = (sweep_event){ vs[i].fixed, 1, i };
	st_sort(ev, (size_t)ne, sizeof *ev, compare_event);
	int *tree = st_xcalloc((size_t)nr + 1, sizeof *tree);
	for (int i = 0; i < ne; i++) {
		if (ev[i].kind == 1) {
			const seg *v = &vs[ev[i].index];
			/* Rows strictly between v->a and v->b. */
			int lo = st_upper_bound(rows, nr, v->a), hi = st_lower_bound(rows, nr, v->b);
			if (hi > lo)
				total += st_fenwick_prefix(tree, hi) - st_fenwick_prefix(tree, lo);
		} else {
			int r = st_lower_bound(rows, nr, hs[ev[i].index].fixed);
			st_fenwick_add(tree, nr, r, ev[i].kind == 0 ? 1 : -1);
		}
	}
	free(tree);
	free(ev);
	free(rows);
	return total;
}

int64_t
st_layout_crossings(const st_graph *g)
{
	canvas_model m;
	model_init(&m, g);
	seg *hs, *vs;
	int nh, nv;
	route_segments(&m, &hs, &nh, &vs, &nv);
	int64_t total = count_crossings(hs, nh, vs, nv);
	/* The links of one output meet where they part: those meetings are not crossings. */
	st_sort(hs, (size_t)nh, sizeof *hs, compare_seg_net);
	st_sort(vs, (size_t)nv, sizeof *vs, compare_seg_net);
	for (int i = 0, j = 0; i < nh;) {
		int i1 = i;
		while (i1 < nh && hs[i1].net == hs[i].net)
			i1++;
		while (j < nv && vs[j].net < hs[i].net)
			j++;
		int j1 = j;
		while (j1 < nv && vs[j1].net == hs[i].net)
			j1++;
		total -= count_crossings(hs + i, i1 - i, vs + j, j1 - j);
		i = i1;
		j = j1;
	}
	free(hs);
	free(vs);
	model_free(&m);
	return total;
}

/* ------------------------------------------------------------------------
 * Drawing
 * ------------------------------------------------------------------------ */

/* What the frame knows about each cell of the view. */
#define CELL_UP 0x1u
#define CELL_DOWN 0x2u
#define CELL_LEFT 0x4u
#define CELL_RIGHT 0x8u
#define CELL_LINES 0xfu
#define CELL_ROLE_SHIFT 4      /* 2 bits: 1 link, 2 out of the cursor, 3 into it */
#define CELL_ROLE_MASK 0x30u
#define CELL_GLYPH 0x40u
#define CELL_LABEL 0x80u

static const st_glyph line_glyphs[16] = {
	[CELL_UP] = ST_G_VLINE, [CELL_DOWN] = ST_G_VLINE, [CELL_UP | CELL_DOWN] = ST_G_VLINE,
	[CELL_LEFT] = ST_G_HLINE, [CELL_RIGHT] = ST_G_HLINE, [CELL_LEFT | CELL_RIGHT] = ST_G_HLINE,
	[CELL_DOWN | CELL_RIGHT] = ST_G_TL, [CELL_DOWN | CELL_LEFT] = ST_G_TR,
	[CELL_UP | CELL_RIGHT] = ST_G_BL, [CELL_UP | CELL_LEFT] = ST_G_BR,
	[CELL_UP | CELL_DOWN | CELL_RIGHT] = ST_G_TEE_RIGHT,
	[CELL_UP | CELL_DOWN | CELL_LEFT] = ST_G_TEE_LEFT,
	[CELL_LEFT | CELL_RIGHT | CELL_DOWN] = ST_G_TEE_DOWN,
	[CELL_LEFT | CELL_RIGHT | CELL_UP] = ST_G_TEE_UP,
	[CELL_LINES] = ST_G_CROSS,
};

static const st_role link_roles[4] = { ST_ROLE_LINK, ST_ROLE_LINK, ST_ROLE_LINK_OUT, ST_ROLE_LINK_IN };

typedef struct frame {
	st_screen *s;
	st_rect area;
	const st_graph *g;
	const st_canvas *c;
	const st_theme *theme;
	int vx, vy, vw, vh;     /* the view in model coordinates */
	uint16_t *cells;        /* vw x vh */
	canvas_model m;
} frame;

static uint16_t *
frame_cell(frame *f, int x, int y)
{
	if (x < f->vx || y < f->vy || x >= f->vx + f->vw || y >= f->vy + f->vh)
		return NULL;
	return &f->cells[(y - f->vy) * f->vw + (x - f->vx)];
}

/* Sets line bits along column x from lo to hi (lo < hi, model rows), in the
 * cells from draw_lo to draw_hi only. */
static void
raster_vertical(frame *f, int x, int lo, int hi, int draw_lo, int draw_hi, unsigned role)
{
	if (x < f->vx || x >= f->vx + f->vw || lo >= hi)
		return;
	int a = max_int(max_int(lo, draw_lo), f->vy), b = min_int(min_int(hi, draw_hi), f->vy + f->vh - 1);
	for (int y = a; y <= b; y++) {
		uint16_t *c = &f->cells[(y - f->vy) * f->vw + (x - f->vx)];
		unsigned bits = (y > lo ? CELL_UP : 0) | (y < hi ? CELL_DOWN : 0);
		if (((*c & CELL_ROLE_MASK) >> CELL_ROLE_SHIFT) < role)
			*c = (uint16_t)((*c & ~CELL_ROLE_MASK) | (role << CELL_ROLE_SHIFT));
		*c |= (uint16_t)bits;
	}
}

static void
raster_horizontal(frame *f, int y, int x0, int x1, unsigned role)
{
	int lo = min_int(x0, x1), hi = max_int(x0, x1);
	if (y < f->vy || y >= f->vy + f->vh || lo == hi)
		return;
	int a = max_int(lo, f->vx), b = min_int(hi, f->vx + f->vw - 1);
	for (int x = a; x <= b; x++) {
		uint16_t *c = &f->cells[(y - f->vy) * f->vw + (x - f->vx)];
		unsigned bits = (x > lo ? CELL_LEFT : 0) | (x < hi ? CELL_RIGHT : 0);
		if (((*c & CELL_ROLE_MASK) >> CELL_ROLE_SHIFT) < role)
			*c = (uint16_t)((*c & ~CELL_ROLE_MASK) | (role << CELL_ROLE_SHIFT));
		*c |= (uint16_t)bits;
	}
}

static void
raster_route(frame *f, const link_route *rt)
{
	const st_layer *cursor = f->c->cursor;
	unsigned role = 1;
	if (cursor != NULL && f->g->layers[rt->consumer] == cursor)
		role = 3;
	else if (cursor != NULL && f->g->layers[rt->producer] == cursor)
		role = 2;
	int vx = rt->simple ? rt->ix : rt->vx;
	int x0 = min_int(min_int(rt->ox, rt->ix), vx), x1 = max_int(max_int(rt->ox, rt->ix), vx);
	int y0 = min_int(min_int(rt->sy, rt->ey), min_int(rt->r1, rt->r2));
	int y1 = max_int(max_int(rt->sy, rt->ey), max_int(rt->r1, rt->r2));
	if (x1 < f->vx || x0 >= f->vx + f->vw || y1 < f->vy || y0 >= f->vy + f->vh)
		return;
	raster_vertical(f, rt->ox, rt->sy - 1, rt->r1, rt->sy, rt->r1, role);
	raster_horizontal(f, rt->r1, rt->ox, vx, role);
	raster_vertical(f, vx, min_int(rt->r1, rt->r2), max_int(rt->r1, rt->r2), INT32_MIN, INT32_MAX, role);
	raster_horizontal(f, rt->r2, vx, rt->ix, role);
	raster_vertical(f, rt->ix, rt->r2, rt->ey + 1, rt->r2, rt->ey, role);
}

static st_style
role_style(const frame *f, st_role role)
{
	return f->theme->roles[role];
}

/* A role's colours over the glyph's background, unless the role has its own. */
static st_style
on_glyph(const frame *f, st_role role)
{
	st_style s = f->theme->roles[role];
	if (ST_COLOR_KIND(s.bg) == 0)
		s.bg = f->theme->roles[ST_ROLE_GLYPH].bg;
	return s;
}

static int
screen_x(const frame *f, int x)
{
	return f->area.x + x - f->c->scroll_x;
}

static int
screen_y(const frame *f, int y)
{
	return f->area.y + y - f->c->scroll_y;
}

static void
draw_grid(frame *f)
{
	st_style style = role_style(f, ST_ROLE_GRID);
	int y = f->vy + ((f->vy % 2) + 2) % 2;
	for (; y < f->vy + f->vh; y += 2) {
		int x = f->vx + (4 - ((f->vx % 4) + 4) % 4) % 4;
		for (; x < f->vx + f->vw; x += 4)
			st_screen_glyph(f->s, screen_x(f, x), screen_y(f, y), ST_G_DOT, &style);
	}
}

static void
draw_lines(frame *f)
{
	for (int y = 0; y < f->vh; y++) {
		for (int x = 0; x < f->vw; x++) {
			uint16_t c = f->cells[y * f->vw + x];
			if ((c & CELL_LINES) == 0 || (c & CELL_GLYPH))
				continue;
			st_style style = role_style(f, link_roles[(c & CELL_ROLE_MASK) >> CELL_ROLE_SHIFT]);
			st_screen_glyph(f->s, f->area.x + x, f->area.y + y, line_glyphs[c & CELL_LINES], &style);
		}
	}
}

/* Whether cells [x, x + w) of row y are free for text, with a free cell on
 * each side; cells outside the view count as free. */
static bool
cells_free(frame *f, int x, int y, int w)
{
	for (int i = x - 1; i <= x + w; i++) {
		uint16_t *c = frame_cell(f, i, y);
		if (c != NULL && (*c & (CELL_LINES | CELL_GLYPH | CELL_LABEL)))
			return false;
	}
	return true;
}

static void
shape_text(const frame *f, const st_shape *shape, char *buf, int size)
{
	char plain[160];
	st_shape_format(shape, plain, sizeof plain);
	text_out o = { buf, 0, size };
	buf[0] = '\0';
	const char *times = st_glyph_text(f->s, ST_G_TIMES);
	for (const char *p = plain; *p; p++) {
		if (*p == 'x')
			text_puts(&o, times);
		else
			text_printf(&o, "%c", *p);
	}
	if (shape->dtype != ST_DTYPE_FLOAT32)
		text_printf(&o, " %s", st_dtype_name(shape->dtype));
}

typedef struct net_ref {
	int64_t net;
	int route;
} net_ref;

static int
compare_net_ref(const void *a, const void *b)
{
	const net_ref *p = a, *q = b;
	if (p->net != q->net)
		return p->net < q->net ? -1 : 1;
	return (p->route > q->route) - (p->route < q->route);
}

/* Tensor shapes beside the first vertical of each output's links, where
 * there is room: right of it, left of it, or past the end of its first
 * horizontal. */
static void
draw_shapes(frame *f)
{
	const canvas_model *m = &f->m;
	net_ref *refs = st_xmalloc((size_t)(m->n_routes + 1) * sizeof *refs);
	int n = 0;
	for (int i = 0; i < m->n_routes; i++) {
		const link_route *rt = &m->routes[i];
		const st_layer *p = f->g->layers[rt->producer];
		if (rt->hidden || !p->outputs_known || rt->output >= p->n_outputs)
			continue;
		/* Only stems near the view can show a label. */
		if (rt->sy > f->vy + f->vh || rt->sy + 3 < f->vy || rt->ox < f->vx - 40 ||
		    rt->ox > f->vx + f->vw + 40)
			continue;
		refs[n++] = (net_ref){ rt->net, i };
	}
	st_sort(refs, (size_t)n, sizeof *refs, compare_net_ref);
	st_style style = role_style(f, ST_ROLE_SHAPE);
	for (int i = 0; i < n;) {
		int j = i;
		int stem_end = INT32_MIN;
		for (; j < n && refs[j].net == refs[i].net; j++) {
			const link_route *rt = &m->routes[refs[j].route];
			int end = rt->simple && rt->ox == rt->ix ? rt->ey : rt->r1;
			if (end > stem_end)
				stem_end = end;
		}
		const link_route *rt = &m->routes[refs[i].route];
		const st_layer *p = f->g->layers[rt->producer];
		char text[256];
		shape_text(f, &p->outputs[rt->output], text, sizeof text);
		int w = text_cols(text);
		int last = min_int(stem_end, rt->sy + 2);
		bool done = false;
		for (int y = rt->sy; y <= last && !done; y++) {
			/* The run of line cells through the stem on this row. */
			int xl = rt->ox, xr = rt->ox;
			uint16_t *c;
			while ((c = frame_cell(f, xr + 1, y)) != NULL && (*c & CELL_LINES))
				xr++;
			while ((c = frame_cell(f, xl - 1, y)) != NULL && (*c & CELL_LINES))
				xl--;
			int candidates[2] = { xr + 2, xl - 1 - w };
			for (int k = 0; k < 2 && !done; k++) {
				int x = candidates[k];
				if (!cells_free(f, x, y, w))
					continue;
				st_screen_text(f->s, screen_x(f, x), screen_y(f, y), text, &style, w);
				for (int cx = x; cx < x + w; cx++) {
					if ((c = frame_cell(f, cx, y)) != NULL)
						*c |= CELL_LABEL;
				}
				done = true;
			}
		}
		i = j;
	}
	free(refs);
}

/* The worst severity among a layer's messages: 0 error, 1 warning, -1 none. */
static int
layer_mark(const st_layer *l)
{
	int mark = -1;
	for (int i = 0; i < l->n_messages; i++) {
		if (l->messages[i].severity == ST_SEVERITY_ERROR)
			return 0;
		if (l->messages[i].severity == ST_SEVERITY_WARNING)
			mark = 1;
	}
	return mark;
}

/* Whether linking the output being connected into l is allowed. */
static bool
connect_target(const frame *f, const st_layer *l)
{
	const st_canvas *c = f->c;
	return l != c->connect_from && !st_graph_would_cycle(f->g, c->connect_from, l);
}

/* The style of one terminal. The cursor's terminal (st_canvas.terminal)
 * counts the inputs first, then the outputs: n_in + o is output o. While
 * connecting, the output being linked, the inputs that may take it (free,
 * or taken and replaceable) and those that may not stand apart. */
static st_style
terminal_style(const frame *f, const st_layer *l, int n_in, int index, bool input, bool target)
{
	const st_canvas *c = f->c;
	if (c->cursor == l && c->terminal >= 0 && c->terminal == (input ? index : n_in + index))
		return on_glyph(f, ST_ROLE_CURSOR);
	if (c->connect_from != NULL && c->connect_output >= 0) {
		if (!input) {
			if (l == c->connect_from && index == c->connect_output) {
				st_style s = on_glyph(f, ST_ROLE_LINK_OUT);
				s.attrs |= ST_ATTR_REVERSE;
				return s;
			}
			return on_glyph(f, ST_ROLE_DIM);
		}
		if (!target)
			return on_glyph(f, ST_ROLE_DIM);
		/* A taken input can be re-linked, after the question the editor asks. */
		if (index < l->n_inputs && l->inputs[index].layer != NULL)
			return on_glyph(f, ST_ROLE_WARNING);
		st_style s = on_glyph(f, ST_ROLE_LINK_OUT);
		s.attrs |= ST_ATTR_BOLD;
		return s;
	}
	return on_glyph(f, ST_ROLE_TERMINAL);
}

enum { GLYPH_PLAIN, GLYPH_SELECTED, GLYPH_CURSOR };

/* ---- the heat overlay ---- */

int
st_heat_step(double share, double largest)
{
	if (!(largest > 0) || !(share > 0))
		return 0;
	int step = (int)(share / largest * ST_HEAT_STEPS);
	return step >= ST_HEAT_STEPS ? ST_HEAT_STEPS - 1 : step < 0 ? 0 : step;
}

/* A layer's share of time in the heat table, or -1 when the table has no
 * layer of that name. */
static double
heat_share(const st_heat *h, const char *name)
{
	for (int i = 0; name != NULL && i < h->n; i++) {
		if (strcmp(h->names[i], name) == 0)
			return h->shares[i];
	}
	return -1;
}

static double
heat_largest(const st_heat *h)
{
	double largest = 0;
	for (int i = 0; i < h->n; i++)
		largest = h->shares[i] > largest ? h->shares[i] : largest;
	return largest;
}

/* The legend in the canvas's top-right corner: each step's colour, a
 * block and the range of shares it stands for. */
static void
draw_heat_legend(frame *f)
{
	const st_heat *h = f->c->heat;
	double largest = heat_largest(h);
	enum { LEGEND_W = 19 };
	if (f->area.w < LEGEND_W + 4 || f->area.h < ST_HEAT_STEPS + 4)
		return;
	st_rect box = { f->area.x + f->area.w - LEGEND_W - 1, f->area.y, LEGEND_W, ST_HEAT_STEPS + 2 };
	st_style border = role_style(f, ST_ROLE_BORDER), text = role_style(f, ST_ROLE_TEXT);
	st_screen_fill(f->s, box, " ", &text);
	st_screen_box(f->s, box, &border, "heat", &text);
	for (int k = ST_HEAT_STEPS - 1, y = box.y + 1; k >= 0; k--, y++) {
		st_style st = role_style(f, (st_role)(ST_ROLE_HEAT_1 + k));
		st_screen_text(f->s, box.x + 2, y, f->s->ascii ? "##" : "██", &st, 2);
		char range[32];
		if (k == ST_HEAT_STEPS - 1)
			snprintf(range, sizeof range, "%s%.0f%% of time", f->s->ascii ? ">=" : "≥",
			         100 * largest * k / ST_HEAT_STEPS);
		else
			snprintf(range, sizeof range, "%.0f-%.0f%%", 100 * largest * k / ST_HEAT_STEPS,
			         100 * largest * (k + 1) / ST_HEAT_STEPS);
		st_screen_text_fit(f->s, box.x + 5, y, range, &text, LEGEND_W - 6);
	}
}

static void
draw_glyph(frame *f, int li, int state)
{
	const st_layer *l = f->g->layers[li];
	const glyph_geo *gg = &f->m.geo[li];
	st_screen *s = f->s;
	int x = screen_x(f, gg->r.x), y = screen_y(f, gg->r.y), w = gg->r.w, h = gg->r.h;
	st_style body = role_style(f, ST_ROLE_GLYPH);
	st_style border = on_glyph(f, state == GLYPH_CURSOR     ? ST_ROLE_CURSOR
	                              : state == GLYPH_SELECTED ? ST_ROLE_GLYPH_SELECTED
	                                                        : ST_ROLE_GLYPH_BORDER);
	/* With the heat overlay the border takes the ramp's colour (the cursor
	 * keeps its own) and the share is written on the glyph, so that colour
	 * is never the only sign of it. */
	double share = f->c->heat != NULL ? heat_share(f->c->heat, l->name) : -1;
	char heat_tag[16] = "";
	st_style heat_style = border;
	if (share >= 0) {
		st_role ramp = (st_role)(ST_ROLE_HEAT_1 + st_heat_step(share, heat_largest(f->c->heat)));
		heat_style = on_glyph(f, ramp);
		if (state != GLYPH_CURSOR)
			border = heat_style;
		snprintf(heat_tag, sizeof heat_tag, "%.0f%%", 100 * share);
	}
	int tag_w = heat_tag[0] ? (int)strlen(heat_tag) + 1 : 0;
	st_screen_fill(s, (st_rect){ x + 1, y + 1, w - 2, h - 2 }, " ", &body);
	for (int i = 1; i < w - 1; i++) {
		st_screen_glyph(s, x + i, y, ST_G_HLINE, &border);
		st_screen_glyph(s, x + i, y + h - 1, ST_G_HLINE, &border);
	}
	for (int i = 1; i < h - 1; i++) {
		st_screen_glyph(s, x, y + i, ST_G_VLINE, &border);
		st_screen_glyph(s, x + w - 1, y + i, ST_G_VLINE, &border);
	}
	st_screen_glyph(s, x, y, ST_G_TL, &border);
	st_screen_glyph(s, x + w - 1, y, ST_G_TR, &border);
	st_screen_glyph(s, x, y + h - 1, ST_G_BL, &border);
	st_screen_glyph(s, x + w - 1, y + h - 1, ST_G_BR, &border);

	bool target = f->c->connect_from != NULL && f->c->connect_output >= 0 && connect_target(f, l);
	for (int i = 0; i < gg->n_in; i++) {
		st_style ts = terminal_style(f, l, gg->n_in, i, true, target);
		st_screen_glyph(s, screen_x(f, terminal_x(&gg->r, i, gg->n_in)), y, ST_G_ARROW_DOWN, &ts);
	}
	for (int o = 0; o < gg->n_out; o++) {
		st_style ts = terminal_style(f, l, gg->n_in, o, false, target);
		st_screen_glyph(s, screen_x(f, terminal_x(&gg->r, o, gg->n_out)), y + h - 1, ST_G_OUTPUT, &ts);
	}

	st_style name = on_glyph(f, ST_ROLE_GLYPH_NAME);
	name.attrs |= ST_ATTR_BOLD;
	const char *text = l->name ? l->name : "";
	if (l->minimized) {
		int n = st_screen_text_fit(s, x + 2, y + 1, text, &name, w - 8 - tag_w);
		st_style dim = on_glyph(f, ST_ROLE_DIM);
		st_screen_glyph(s, x + 3 + n, y + 1, ST_G_MINIMISED, &dim);
	} else {
		st_screen_text_fit(s, x + 2, y + 1, text, &name, w - 6 - tag_w);
		st_style type = on_glyph(f, l->type != NULL ? ST_ROLE_DIM : ST_ROLE_ERROR);
		st_screen_text_fit(s, x + 2, y + 2, layer_type_text(l), &type, w - 4);
		char summary[SUMMARY_PARTS * SUMMARY_PART_SIZE];
		layer_summary(l, st_glyph_text(s, ST_G_TIMES), summary, sizeof summary);
		st_screen_text_fit(s, x + 2, y + 3, summary, &body, w - 4);
	}
	int mark = layer_mark(l);
	if (mark >= 0) {
		st_style ms = on_glyph(f, mark == 0 ? ST_ROLE_ERROR : ST_ROLE_WARNING);
		ms.attrs |= ST_ATTR_BOLD;
		st_screen_glyph(s, x + w - 3, y + 1, mark == 0 ? ST_G_ERROR : ST_G_WARNING, &ms);
	}
	if (heat_tag[0]) {
		heat_style.attrs |= ST_ATTR_BOLD;
		int right = mark >= 0 ? x + w - 4 : x + w - 2;
		st_screen_text(s, right - (int)strlen(heat_tag), y + 1, heat_tag, &heat_style, -1);
	}
}

static bool
rect_meets_view(const frame *f, const st_rect *r)
{
	return r->x < f->vx + f->vw && f->vx < r->x + r->w && r->y < f->vy + f->vh && f->vy < r->y + r->h;
}

static bool
is_selected(const st_canvas *c, const st_layer *l)
{
	for (int i = 0; i < c->n_selected; i++) {
		if (c->selected[i] == l)
			return true;
	}
	return false;
}

/* The minimap's box on the screen, or false when the area is too small. */
static bool
minimap_box(const st_canvas *c, st_rect area, st_rect *box)
{
	if (!c->show_minimap || area.w < 2 * (MINIMAP_W + 2) || area.h < 2 * (MINIMAP_H + 2))
		return false;
	*box = (st_rect){ area.x + area.w - MINIMAP_W - 2, area.y + area.h - MINIMAP_H - 2, MINIMAP_W + 2,
		          MINIMAP_H + 2 };
	return true;
}

/* Cell of the minimap for model coordinate v of [lo, lo + size). */
static int
minimap_cell(int64_t v, int64_t lo, int64_t size, int cells)
{
	int64_t k = (v - lo) * cells / size;
	return (int)(k < 0 ? 0 : k >= cells ? cells - 1 : k);
}

static void
draw_minimap(frame *f)
{
	st_rect box;
	if (!minimap_box(f->c, f->area, &box))
		return;
	st_style border = role_style(f, ST_ROLE_BORDER), text = role_style(f, ST_ROLE_TEXT);
	st_style view = role_style(f, ST_ROLE_SELECTED), mark = role_style(f, ST_ROLE_GLYPH_BORDER);
	st_style cursor = role_style(f, ST_ROLE_CURSOR);
	st_screen_fill(f->s, (st_rect){ box.x + 1, box.y + 1, MINIMAP_W, MINIMAP_H }, " ", &text);
	st_screen_box(f->s, box, &border, NULL, NULL);
	/* The graph's bounds, with the view included so that it always shows. */
	int64_t x0 = f->vx, y0 = f->vy, x1 = f->vx + f->vw, y1 = f->vy + f->vh;
	for (int i = 0; i < f->m.n; i++) {
		const st_rect *r = &f->m.geo[i].r;
		x0 = r->x < x0 ? r->x : x0;
		y0 = r->y < y0 ? r->y : y0;
		x1 = r->x + r->w > x1 ? r->x + r->w : x1;
		y1 = r->y + r->h > y1 ? r->y + r->h : y1;
	}
	int64_t w = x1 - x0, h = y1 - y0;
	unsigned char occupied[MINIMAP_H][MINIMAP_W];
	memset(occupied, 0, sizeof occupied);
	for (int i = 0; i < f->m.n; i++) {
		const st_rect *r = &f->m.geo[i].r;
		int cx0 = minimap_cell(r->x, x0, w, MINIMAP_W), cx1 = minimap_cell(r->x + r->w - 1, x0, w, MINIMAP_W);
		int cy0 = minimap_cell(r->y, y0, h, MINIMAP_H), cy1 = minimap_cell(r->y + r->h - 1, y0, h, MINIMAP_H);
		unsigned char v = f->g->layers[i] == f->c->cursor ? 2 : 1;
		for (int cy = cy0; cy <= cy1; cy++) {
			for (int cx = cx0; cx <= cx1; cx++) {
				if (occupied[cy][cx] < v)
					occupied[cy][cx] = v;
			}
		}
	}
	int vx0 = minimap_cell(f->vx, x0, w, MINIMAP_W), vx1 = minimap_cell(f->vx + f->vw - 1, x0, w, MINIMAP_W);
	int vy0 = minimap_cell(f->vy, y0, h, MINIMAP_H), vy1 = minimap_cell(f->vy + f->vh - 1, y0, h, MINIMAP_H);
	for (int cy = 0; cy < MINIMAP_H; cy++) {
		for (int cx = 0; cx < MINIMAP_W; cx++) {
			bool in_view = cx >= vx0 && cx <= vx1 && cy >= vy0 && cy <= vy1;
			int sx = box.x + 1 + cx, sy = box.y + 1 + cy;
			if (occupied[cy][cx] == 2) {
				st_screen_glyph(f->s, sx, sy, ST_G_MINIMISED, &cursor);
			} else if (occupied[cy][cx] == 1) {
				st_screen_glyph(f->s, sx, sy, ST_G_MINIMISED, in_view ? &view : &mark);
			} else if (in_view) {
				/* Dots, so that the view shows without colour too. */
				st_screen_glyph(f->s, sx, sy, ST_G_DOT, &view);
			}
		}
	}
}

static st_rect
rect_intersect(st_rect a, st_rect b)
{
	int x0 = max_int(a.x, b.x), y0 = max_int(a.y, b.y);
	int x1 = min_int(a.x + a.w, b.x + b.w), y1 = min_int(a.y + a.h, b.y + b.h);
	return (st_rect){ x0, y0, x1 > x0 ? x1 - x0 : 0, y1 > y0 ? y1 - y0 : 0 };
}

void
st_canvas_draw(st_screen *s, st_rect area, const st_graph *g, const st_canvas *c,
               const st_theme *theme)
{
	if (area.w <= 0 || area.h <= 0)
		return;
	st_rect old = st_screen_set_clip(s, rect_intersect(area, s->clip));
	st_style background = theme->roles[ST_ROLE_TEXT];
	st_screen_fill(s, area, " ", &background);

	frame f = { .s = s, .area = area, .g = g, .c = c, .theme = theme };
	f.vx = c->scroll_x;
	f.vy = c->scroll_y;
	f.vw = area.w;
	f.vh = area.h;
	f.cells = st_xcalloc((size_t)area.w * (size_t)area.h, sizeof *f.cells);
	model_init(&f.m, g);

	if (c->show_grid)
		draw_grid(&f);
	for (int i = 0; i < f.m.n_routes; i++) {
		if (!f.m.routes[i].hidden)
			raster_route(&f, &f.m.routes[i]);
	}
	int *visible = st_xmalloc((size_t)(f.m.n + 1) * sizeof *visible);
	int n_visible = 0;
	for (int i = 0; i < f.m.n; i++) {
		const st_rect *r = &f.m.geo[i].r;
		if (!rect_meets_view(&f, r))
			continue;
		visible[n_visible++] = i;
		for (int y = max_int(r->y, f.vy); y < min_int(r->y + r->h, f.vy + f.vh); y++) {
			for (int x = max_int(r->x, f.vx); x < min_int(r->x + r->w, f.vx + f.vw); x++)
				f.cells[(y - f.vy) * f.vw + (x - f.vx)] |= CELL_GLYPH;
		}
	}
	draw_lines(&f);
	if (c->show_shapes)
		draw_shapes(&f);
	/* Selected glyphs, then the cursor's, lie on top of the others. */
	for (int pass = GLYPH_PLAIN; pass <= GLYPH_CURSOR; pass++) {
		for (int k = 0; k < n_visible; k++) {
			const st_layer *l = g->layers[visible[k]];
			int state = l == c->cursor ? GLYPH_CURSOR : is_selected(c, l) ? GLYPH_SELECTED : GLYPH_PLAIN;
			if (state == pass)
				draw_glyph(&f, visible[k], state);
		}
	}
	draw_minimap(&f);
	if (c->heat != NULL)
		draw_heat_legend(&f);
	free(visible);
	free(f.cells);
	model_free(&f.m);
	st_screen_set_clip(s, old);
}

/* ------------------------------------------------------------------------
 * Hit testing and navigation
 * ------------------------------------------------------------------------ */

static bool
rect_contains(const st_rect *r, int x, int y)
{
	return x >= r->x && y >= r->y && x < r->x + r->w && y < r->y + r->h;
}

static void
hit_layer(const st_layer *l, const glyph_geo *gg, int mx, int my, st_canvas_hit *hit)
{
	hit->layer = l;
	hit->input = hit->output = -1;
	if (my == gg->r.y) {
		for (int i = 0; i < gg->n_in; i++) {
			if (terminal_x(&gg->r, i, gg->n_in) == mx)
				hit->input = i;
		}
	} else if (my == gg->r.y + gg->r.h - 1) {
		for (int o = 0; o < gg->n_out; o++) {
			if (terminal_x(&gg->r, o, gg->n_out) == mx)
				hit->output = o;
		}
	}
}

bool
st_canvas_hit_test(const st_graph *g, const st_canvas *c, st_rect area, int x, int y,
                   st_canvas_hit *hit)
{
	hit->layer = NULL;
	hit->input = hit->output = -1;
	st_rect box;
	if (!rect_contains(&area, x, y) || (minimap_box(c, area, &box) && rect_contains(&box, x, y)))
		return false;
	int mx = x - area.x + c->scroll_x, my = y - area.y + c->scroll_y;
	glyph_geo gg;
	/* The same stacking as drawing: the cursor's glyph, the selection, the rest. */
	if (c->cursor != NULL && layer_in_graph(g, c->cursor)) {
		glyph_geometry(c->cursor, &gg);
		if (rect_contains(&gg.r, mx, my)) {
			hit_layer(c->cursor, &gg, mx, my, hit);
			return true;
		}
	}
	for (int i = c->n_selected - 1; i >= 0; i--) {
		const st_layer *l = c->selected[i];
		if (l == c->cursor || !layer_in_graph(g, l))
			continue;
		glyph_geometry(l, &gg);
		if (rect_contains(&gg.r, mx, my)) {
			hit_layer(l, &gg, mx, my, hit);
			return true;
		}
	}
	for (int i = g->n_layers - 1; i >= 0; i--) {
		const st_layer *l = g->layers[i];
		/* A cheap test first: no glyph is taller than GLYPH_HEIGHT. */
		if (my < l->y || my >= l->y + GLYPH_HEIGHT || mx < l->x)
			continue;
		glyph_geometry(l, &gg);
		if (rect_contains(&gg.r, mx, my)) {
			hit_layer(l, &gg, mx, my, hit);
			return true;
		}
	}
	return false;
}

void
st_canvas_reveal(st_canvas *c, const st_layer *l, int w, int h)
{
	st_rect r;
	st_glyph_rect(l, &r);
	/* A margin around the glyph, when the view has room for it. */
	int mx = r.w + 4 <= w ? 2 : 0, my = r.h + 2 <= h ? 1 : 0;
	if (r.w + 2 * mx > w || r.x - mx < c->scroll_x)
		c->scroll_x = r.x - mx;
	else if (r.x + r.w + mx > c->scroll_x + w)
		c->scroll_x = r.x + r.w + mx - w;
	if (r.h + 2 * my > h || r.y - my < c->scroll_y)
		c->scroll_y = r.y - my;
	else if (r.y + r.h + my > c->scroll_y + h)
		c->scroll_y = r.y + r.h + my - h;
}

const st_layer *
st_canvas_neighbour(const st_graph *g, const st_layer *from, int dx, int dy)
{
	if (from == NULL || (dx == 0 && dy == 0))
		return NULL;
	st_rect r;
	st_glyph_rect(from, &r);
	/* Cells are about twice as tall as wide: distances count rows double. */
	double fx = r.x + r.w / 2.0, fy = (r.y + r.h / 2.0) * 2.0;
	double len = sqrt((double)(dx * dx + dy * dy));
	double ux = dx / len, uy = dy / len;
	const st_layer *best = NULL, *fallback = NULL;
	double best_d = 0, best_off = 0, fallback_score = 0;
	for (int i = 0; i < g->n_layers; i++) {
		const st_layer *l = g->layers[i];
		if (l == from)
			continue;
		st_glyph_rect(l, &r);
		double vx = r.x + r.w / 2.0 - fx, vy = (r.y + r.h / 2.0) * 2.0 - fy;
		double along = vx * ux + vy * uy, off = fabs(vx * uy - vy * ux);
		if (along <= 0)
			continue;
		double d = sqrt(vx * vx + vy * vy);
		if (off < along) {
			/* Within 45 degrees of the direction. */
			if (best == NULL || d < best_d || (d == best_d && off < best_off)) {
				best = l;
				best_d = d;
				best_off = off;
			}
		} else {
			/* Otherwise ahead of it at all: taken only when the cone is empty. */
			double score = d + 2 * off;
			if (fallback == NULL || score < fallback_score) {
				fallback = l;
				fallback_score = score;
			}
		}
	}
	return best != NULL ? best : fallback;
}
