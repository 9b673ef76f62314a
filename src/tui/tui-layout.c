/* Automatic layered layout of a graph (Sugiyama style) and the count of
 * overlapping glyphs. Cycles are broken, layers are ranked by longest path
 * from the inputs, long links get a chain of one-column dummy nodes, link
 * crossings are reduced by median sweeps with transposition, and columns
 * come from weighted-median placement under the no-overlap constraints. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "st-tui.h"

#define RANK_ROWS 8           /* from one rank of glyphs to the next: 5 rows and 3 for links */
#define GAP_GLYPHS 4          /* columns between two glyphs */
#define GAP_LANE 2            /* columns between a long link's lane and anything else */
#define ORDER_ITERATIONS 24   /* median sweeps at most */
#define ORDER_PATIENCE 4      /* sweeps without improvement before stopping */
#define TRANSPOSE_PASSES 8    /* adjacent-swap passes per rank and sweep */
#define PLACE_SWEEPS 10       /* column placement sweeps */
#define PORT_SCALE 65536      /* position keys: position * PORT_SCALE + terminal column */
#define MEDIAN_RANK_MAX 2000  /* wider ranks are placed by weighted mean */

/* Edge weights of the column placement: straight chains of real layers
 * first, then long links' lanes, then where a long link starts or ends. */
#define WEIGHT_REAL 16
#define WEIGHT_BRANCH 8       /* out of a fork or into a merge, where links jog anyway */
#define WEIGHT_LANE 8
#define WEIGHT_END 4
#define WEIGHT_FREE 1         /* a node without neighbours stays where it is */

/* An edge between adjacent ranks, from its upper node down to its lower one. */
typedef struct ledge {
	int up, down;
	int up_off, down_off; /* terminal columns relative to each node's column */
	int align_off;        /* the column of the lower node placement lines up */
	int weight;
} ledge;

typedef struct layout {
	int n_real, n;        /* real nodes are the graph's layers; dummies follow */
	int cap;
	int *rank, *width, *x, *pos;
	int *through;         /* a real node's output column, relative to its own */
	int n_ranks;
	int *rank_start;      /* order[rank_start[r] .. rank_start[r + 1]) is rank r */
	int *order;
	ledge *edges;
	int n_edges, cap_edges;
	int *up_start, *up_list;     /* edges whose lower node is v */
	int *down_start, *down_list; /* edges whose upper node is v */
} layout;

/* A link of the graph, before layering. */
typedef struct link {
	int from, to;
	int out_off, in_off;
	bool reversed;
} link;

static void
add_node(layout *L, int rank, int width)
{
	if (L->n == L->cap) {
		L->cap = L->cap ? 2 * L->cap : 64;
		L->rank = st_xreallocarray(L->rank, (size_t)L->cap, sizeof *L->rank);
		L->width = st_xreallocarray(L->width, (size_t)L->cap, sizeof *L->width);
	}
	L->rank[L->n] = rank;
	L->width[L->n] = width;
	L->n++;
}

static void
add_edge(layout *L, int up, int down, int up_off, int down_off, int weight)
{
	if (L->n_edges == L->cap_edges) {
		L->cap_edges = L->cap_edges ? 2 * L->cap_edges : 64;
		L->edges = st_xreallocarray(L->edges, (size_t)L->cap_edges, sizeof *L->edges);
	}
	L->edges[L->n_edges++] = (ledge){ up, down, up_off, down_off, down_off, weight };
}

static bool
in_graph(const st_graph *g, const st_layer *l)
{
	return l != NULL && l->index >= 0 && l->index < g->n_layers && g->layers[l->index] == l;
}

/* The graph's links with their terminal columns; self-links are left out. */
static link *
collect_links(const st_graph *g, const int *left, int *count)
{
	int cap = 0, n = 0;
	for (int i = 0; i < g->n_layers; i++)
		cap += g->layers[i]->n_inputs;
	link *links = st_xmalloc((size_t)(cap + 1) * sizeof *links);
	for (int ci = 0; ci < g->n_layers; ci++) {
		const st_layer *c = g->layers[ci];
		for (int k = 0; k < c->n_inputs; k++) {
			const st_port *p = &c->inputs[k];
			if (!in_graph(g, p->layer) || p->layer == c || p->output < 0)
				continue;
			int pi = p->layer->index;
			links[n++] = (link){ pi, ci, st_glyph_output_x(p->layer, p->output) - left[pi],
			                     st_glyph_input_x(c, k) - left[ci], false };
		}
	}
	*count = n;
	return links;
}

/* CSR lists of the links leaving each node, in link order. */
static void
out_lists(int n, const link *links, int n_links, int **start, int **list)
{
	*start = st_xcalloc((size_t)n + 1, sizeof **start);
	*list = st_xmalloc((size_t)(n_links + 1) * sizeof **list);
	for (int i = 0; i < n_links; i++)
		(*start)[links[i].from + 1]++;
	for (int v = 0; v < n; v++)
		(*start)[v + 1] += (*start)[v];
	int *fill = st_xmalloc((size_t)(n + 1) * sizeof *fill);
	memcpy(fill, *start, (size_t)(n + 1) * sizeof *fill);
	for (int i = 0; i < n_links; i++)
		(*list)[fill[links[i].from]++] = i;
	free(fill);
}

/* Reverses the links that close cycles: the back links of a depth-first
 * search started from the sources, then from the rest in graph order. */
static void
break_cycles(int n, link *links, int n_links)
{
	int *start, *list;
	out_lists(n, links, n_links, &start, &list);
	int *in_degree = st_xcalloc((size_t)n + 1, sizeof *in_degree);
	for (int i = 0; i < n_links; i++)
		in_degree[links[i].to]++;
	unsigned char *colour = st_xcalloc((size_t)n + 1, 1); /* 0 new, 1 on the stack, 2 done */
	int *stack = st_xmalloc((size_t)(n + 1) * sizeof *stack);
	int *next = st_xmalloc((size_t)(n + 1) * sizeof *next);
	for (int pass = 0; pass < 2; pass++) {
		for (int root = 0; root < n; root++) {
			if (colour[root] || (pass == 0 && in_degree[root] > 0))
				continue;
			int depth = 0;
			stack[depth++] = root;
			next[root] = start[root];
			colour[root] = 1;
			while (depth > 0) {
				int v = stack[depth - 1];
				if (next[v] == start[v + 1]) {
					colour[v] = 2;
					depth--;
					continue;
				}
				link *e = &links[list[next[v]++]];
				if (colour[e->to] == 1) {
					e->reversed = true;
				} else if (colour[e->to] == 0) {
					colour[e->to] = 1;
					next[e->to] = start[e->to];
					stack[depth++] = e->to;
				}
			}
		}
	}
	free(start);
	free(list);
	free(in_degree);
	free(colour);
	free(stack);
	free(next);
}

/* Ranks by longest path from the sources (Kahn's order), then sources that
 * are not network inputs moved down next to their first consumer. */
static void
rank_nodes(const st_graph *g, layout *L, const link *links, int n_links)
{
	int n = L->n_real;
	int *indeg = st_xcalloc((size_t)n + 1, sizeof *indeg);
	int *start = st_xcalloc((size_t)n + 1, sizeof *start);
	int *list = st_xmalloc((size_t)(n_links + 1) * sizeof *list);
	for (int i = 0; i < n_links; i++) {
		int up = links[i].reversed ? links[i].to : links[i].from;
		int down = links[i].reversed ? links[i].from : links[i].to;
		indeg[down]++;
		start[up + 1]++;
	}
	for (int v = 0; v < n; v++)
		start[v + 1] += start[v];
	int *fill = st_xmalloc((size_t)(n + 1) * sizeof *fill);
	memcpy(fill, start, (size_t)(n + 1) * sizeof *fill);
	for (int i = 0; i < n_links; i++) {
		int up = links[i].reversed ? links[i].to : links[i].from;
		list[fill[up]++] = i;
	}
	bool *source = st_xcalloc((size_t)n + 1, sizeof *source);
	int *queue = st_xmalloc((size_t)(n + 1) * sizeof *queue);
	int head = 0, tail = 0;
	for (int v = 0; v < n; v++) {
		L->rank[v] = 0;
		if (indeg[v] == 0) {
			queue[tail++] = v;
			source[v] = true;
		}
	}
	while (head < tail) {
		int v = queue[head++];
		for (int k = start[v]; k < start[v + 1]; k++) {
			const link *e = &links[list[k]];
			int down = e->reversed ? e->from : e->to;
			if (L->rank[down] < L->rank[v] + 1)
				L->rank[down] = L->rank[v] + 1;
			if (--indeg[down] == 0)
				queue[tail++] = down;
		}
	}
	for (int v = 0; v < n; v++) {
		const st_layer_type *t = g->layers[v]->type;
		if (!source[v] || start[v] == start[v + 1] ||
		    (t != NULL && (t->desc->flags & ST_LAYER_GRAPH_INPUT)))
			continue;
		int lowest = -1;
		for (int k = start[v]; k < start[v + 1]; k++) {
			const link *e = &links[list[k]];
			int r = L->rank[e->reversed ? e->from : e->to];
			if (lowest < 0 || r < lowest)
				lowest = r;
		}
		if (lowest - 1 > L->rank[v])
			L->rank[v] = lowest - 1;
	}
	free(indeg);
	free(start);
	free(list);
	free(fill);
	free(source);
	free(queue);
}

typedef struct span_ref {
	int span, link;
} span_ref;

static int
compare_span_ref(const void *a, const void *b)
{
	const span_ref *p = a, *q = b;
	if (p->span != q->span)
		return p->span < q->span ? -1 : 1;
	return (p->link > q->link) - (p->link < q->link);
}

/* Edges between adjacent ranks: links of one rank become edges, longer ones
 * chains through dummy nodes, shortest first while the dummy budget lasts
 * (links past it keep no lane, which only pathological graphs reach). */
static void
make_edges(layout *L, const link *links, int n_links)
{
	span_ref *refs = st_xmalloc((size_t)(n_links + 1) * sizeof *refs);
	for (int i = 0; i < n_links; i++) {
		int up = links[i].reversed ? links[i].to : links[i].from;
		int down = links[i].reversed ? links[i].from : links[i].to;
		refs[i] = (span_ref){ L->rank[down] - L->rank[up], i };
	}
	st_sort(refs, (size_t)n_links, sizeof *refs, compare_span_ref);
	int64_t budget = 8 * (int64_t)L->n_real + 4096;
	for (int k = 0; k < n_links; k++) {
		const link *e = &links[refs[k].link];
		int up = e->reversed ? e->to : e->from, down = e->reversed ? e->from : e->to;
		int up_off = e->reversed ? e->in_off : e->out_off;
		int down_off = e->reversed ? e->out_off : e->in_off;
		int span = refs[k].span;
		if (span < 1)
			continue;
		if (span == 1) {
			add_edge(L, up, down, up_off, down_off, WEIGHT_REAL);
			continue;
		}
		if (span - 1 > budget)
			continue;
		budget -= span - 1;
		int prev = up, prev_off = up_off;
		for (int r = L->rank[up] + 1; r < L->rank[down]; r++) {
			add_node(L, r, 1);
			int d = L->n - 1;
			add_edge(L, prev, d, prev_off, 0, prev == up ? WEIGHT_END : WEIGHT_LANE);
			prev = d;
			prev_off = 0;
		}
		add_edge(L, prev, down, 0, down_off, WEIGHT_END);
	}
	free(refs);
}

static int
compare_edge_up(const void *a, const void *b, void *arg)
{
	const ledge *edges = arg;
	const ledge *p = &edges[*(const int *)a], *q = &edges[*(const int *)b];
	if (p->up_off != q->up_off)
		return p->up_off < q->up_off ? -1 : 1;
	return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

/* Per node, its edges to the rank above and to the rank below; the ones
 * below sorted by terminal, the order a depth-first search follows. */
static void
adjacency(layout *L)
{
	int n = L->n;
	L->up_start = st_xcalloc((size_t)n + 1, sizeof *L->up_start);
	L->down_start = st_xcalloc((size_t)n + 1, sizeof *L->down_start);
	L->up_list = st_xmalloc((size_t)(L->n_edges + 1) * sizeof *L->up_list);
	L->down_list = st_xmalloc((size_t)(L->n_edges + 1) * sizeof *L->down_list);
	for (int i = 0; i < L->n_edges; i++) {
		L->up_start[L->edges[i].down + 1]++;
		L->down_start[L->edges[i].up + 1]++;
	}
	for (int v = 0; v < n; v++) {
		L->up_start[v + 1] += L->up_start[v];
		L->down_start[v + 1] += L->down_start[v];
	}
	int *fu = st_xmalloc((size_t)(n + 1) * sizeof *fu), *fd = st_xmalloc((size_t)(n + 1) * sizeof *fd);
	memcpy(fu, L->up_start, (size_t)(n + 1) * sizeof *fu);
	memcpy(fd, L->down_start, (size_t)(n + 1) * sizeof *fd);
	for (int i = 0; i < L->n_edges; i++) {
		L->up_list[fu[L->edges[i].down]++] = i;
		L->down_list[fd[L->edges[i].up]++] = i;
	}
	for (int v = 0; v < n; v++)
		qsort_r(L->down_list + L->down_start[v], (size_t)(L->down_start[v + 1] - L->down_start[v]),
		        sizeof *L->down_list, compare_edge_up, L->edges);
	free(fu);
	free(fd);
	/* A layer where several links meet (an add, a concatenation) lines up
	 * its output, not one of its inputs, with what comes in: the main path
	 * through it stays straight and the links jog where they meet, instead
	 * of every such layer pushing the rest of the graph sideways. */
	for (int i = 0; i < L->n_edges; i++) {
		ledge *e = &L->edges[i];
		bool merge = e->down < L->n_real && L->up_start[e->down + 1] - L->up_start[e->down] >= 2;
		bool fork = L->down_start[e->up + 1] - L->down_start[e->up] >= 2;
		if (merge)
			e->align_off = L->through[e->down];
		/* A straight chain matters more than a straight branch. */
		if (e->weight == WEIGHT_REAL && (merge || fork))
			e->weight = WEIGHT_BRANCH;
	}
}

/* The first order: nodes by rank in depth-first preorder from the sources,
 * which keeps branches together. */
static void
initial_order(layout *L)
{
	int n = L->n;
	L->n_ranks = 0;
	for (int v = 0; v < n; v++) {
		if (L->rank[v] + 1 > L->n_ranks)
			L->n_ranks = L->rank[v] + 1;
	}
	L->rank_start = st_xcalloc((size_t)L->n_ranks + 1, sizeof *L->rank_start);
	for (int v = 0; v < n; v++)
		L->rank_start[L->rank[v] + 1]++;
	for (int r = 0; r < L->n_ranks; r++)
		L->rank_start[r + 1] += L->rank_start[r];
	int *fill = st_xmalloc((size_t)(L->n_ranks + 1) * sizeof *fill);
	memcpy(fill, L->rank_start, (size_t)(L->n_ranks + 1) * sizeof *fill);
	L->order = st_xmalloc((size_t)(n + 1) * sizeof *L->order);
	L->pos = st_xmalloc((size_t)(n + 1) * sizeof *L->pos);
	bool *seen = st_xcalloc((size_t)n + 1, sizeof *seen);
	int *stack = st_xmalloc((size_t)(n + 1) * sizeof *stack);
	int *next = st_xmalloc((size_t)(n + 1) * sizeof *next);
	for (int pass = 0; pass < 2; pass++) {
		for (int root = 0; root < n; root++) {
			if (seen[root] || (pass == 0 && L->up_start[root] != L->up_start[root + 1]))
				continue;
			int depth = 0;
			stack[depth++] = root;
			seen[root] = true;
			next[root] = L->down_start[root];
			L->pos[root] = fill[L->rank[root]] - L->rank_start[L->rank[root]];
			L->order[fill[L->rank[root]]++] = root;
			while (depth > 0) {
				int v = stack[depth - 1];
				if (next[v] == L->down_start[v + 1]) {
					depth--;
					continue;
				}
				int w = L->edges[L->down_list[next[v]++]].down;
				if (seen[w])
					continue;
				seen[w] = true;
				next[w] = L->down_start[w];
				L->pos[w] = fill[L->rank[w]] - L->rank_start[L->rank[w]];
				L->order[fill[L->rank[w]]++] = w;
				stack[depth++] = w;
			}
		}
	}
	free(fill);
	free(seen);
	free(stack);
	free(next);
}

/* ---- crossing reduction ---- */

typedef struct key_pair {
	int64_t up, down;
} key_pair;

static int
compare_key_pair(const void *a, const void *b)
{
	const key_pair *p = a, *q = b;
	if (p->up != q->up)
		return p->up < q->up ? -1 : 1;
	return (p->down > q->down) - (p->down < q->down);
}

/* Pairs i < j with v[i] > v[j], by merge sort; tmp as long as v. */
static int64_t
inversions(int64_t *v, int64_t *tmp, int n)
{
	if (n < 2)
		return 0;
	int h = n / 2;
	int64_t c = inversions(v, tmp, h) + inversions(v + h, tmp, n - h);
	int i = 0, j = h, k = 0;
	while (i < h && j < n) {
		if (v[j] < v[i]) {
			c += h - i;
			tmp[k++] = v[j++];
		} else {
			tmp[k++] = v[i++];
		}
	}
	while (i < h)
		tmp[k++] = v[i++];
	while (j < n)
		tmp[k++] = v[j++];
	memcpy(v, tmp, (size_t)n * sizeof *v);
	return c;
}

static int64_t
edge_key(const layout *L, int node, int off)
{
	return (int64_t)L->pos[node] * PORT_SCALE + (off < PORT_SCALE ? off : PORT_SCALE - 1);
}

typedef struct scratch {
	key_pair *pairs;
	int64_t *keys, *tmp;
	double *values;
	int cap;
} scratch;

static void
scratch_reserve(scratch *s, int n)
{
	if (n <= s->cap)
		return;
	s->cap = n * 2;
	s->pairs = st_xreallocarray(s->pairs, (size_t)s->cap, sizeof *s->pairs);
	s->keys = st_xreallocarray(s->keys, (size_t)s->cap, sizeof *s->keys);
	s->tmp = st_xreallocarray(s->tmp, (size_t)s->cap, sizeof *s->tmp);
	s->values = st_xreallocarray(s->values, (size_t)s->cap, sizeof *s->values);
}

/* Crossings between rank r and rank r + 1, with terminals in place. */
static int64_t
rank_crossings(const layout *L, scratch *s, int r)
{
	int n = 0;
	for (int k = L->rank_start[r + 1]; k < L->rank_start[r + 2]; k++)
		n += L->up_start[L->order[k] + 1] - L->up_start[L->order[k]];
	scratch_reserve(s, n + 1);
	n = 0;
	for (int k = L->rank_start[r + 1]; k < L->rank_start[r + 2]; k++) {
		int v = L->order[k];
		for (int j = L->up_start[v]; j < L->up_start[v + 1]; j++) {
			const ledge *e = &L->edges[L->up_list[j]];
			s->pairs[n++] = (key_pair){ edge_key(L, e->up, e->up_off), edge_key(L, v, e->down_off) };
		}
	}
	st_sort(s->pairs, (size_t)n, sizeof *s->pairs, compare_key_pair);
	for (int i = 0; i < n; i++)
		s->keys[i] = s->pairs[i].down;
	return inversions(s->keys, s->tmp, n);
}

static int64_t
total_crossings(const layout *L, scratch *s)
{
	int64_t c = 0;
	for (int r = 0; r + 1 < L->n_ranks; r++)
		c += rank_crossings(L, s, r);
	return c;
}

/* Where v's neighbours in the rank above (up) or below sit, as a weighted
 * median of their terminal positions (Gansner et al.); -1 when it has none. */
static double
median_value(const layout *L, scratch *s, int v, bool up)
{
	int a = up ? L->up_start[v] : L->down_start[v], b = up ? L->up_start[v + 1] : L->down_start[v + 1];
	int n = b - a;
	if (n == 0)
		return -1;
	scratch_reserve(s, n + 1);
	for (int k = 0; k < n; k++) {
		const ledge *e = &L->edges[(up ? L->up_list : L->down_list)[a + k]];
		int u = up ? e->up : e->down, off = up ? e->up_off : e->down_off;
		s->values[k] = L->pos[u] + (off + 0.5) / (L->width[u] + 1.0);
	}
	double *p = s->values;
	for (int i = 1; i < n; i++) {
		double t = p[i];
		int j = i;
		for (; j > 0 && p[j - 1] > t; j--)
			p[j] = p[j - 1];
		p[j] = t;
	}
	int m = n / 2;
	if (n % 2 == 1)
		return p[m];
	if (n == 2)
		return (p[0] + p[1]) / 2;
	double left = p[m - 1] - p[0], right = p[n - 1] - p[m];
	if (left + right == 0)
		return (p[m - 1] + p[m]) / 2;
	return (p[m - 1] * right + p[m] * left) / (left + right);
}

typedef struct sort_item {
	double key;
	int tie;
	int node;
} sort_item;

static int
compare_sort_item(const void *a, const void *b)
{
	const sort_item *p = a, *q = b;
	if (p->key != q->key)
		return p->key < q->key ? -1 : 1;
	if (p->tie != q->tie)
		return p->tie < q->tie ? -1 : 1;
	return (p->node > q->node) - (p->node < q->node);
}

/* Reorders rank r by the medians of its neighbours above (up) or below;
 * nodes without such neighbours keep their places. */
static void
median_sort(layout *L, scratch *s, int r, bool up, bool flip_ties)
{
	int a = L->rank_start[r], n = L->rank_start[r + 1] - a;
	sort_item *items = st_xmalloc((size_t)(n + 1) * sizeof *items);
	bool *fixed = st_xcalloc((size_t)n + 1, sizeof *fixed);
	int m = 0;
	for (int k = 0; k < n; k++) {
		int v = L->order[a + k];
		double med = median_value(L, s, v, up);
		if (med < 0)
			fixed[k] = true;
		else
			items[m++] = (sort_item){ med, flip_ties ? -k : k, v };
	}
	st_sort(items, (size_t)m, sizeof *items, compare_sort_item);
	for (int k = 0, j = 0; k < n; k++) {
		if (!fixed[k])
			L->order[a + k] = items[j++].node;
	}
	for (int k = 0; k < n; k++)
		L->pos[L->order[a + k]] = k;
	free(items);
	free(fixed);
}

/* Crossings among the edges of v and w (v left of w) towards one side. */
static int64_t
pair_crossings(const layout *L, int v, int w, bool up)
{
	const int *start = up ? L->up_start : L->down_start, *list = up ? L->up_list : L->down_list;
	int64_t c = 0;
	for (int i = start[v]; i < start[v + 1]; i++) {
		const ledge *e = &L->edges[list[i]];
		int64_t kv = up ? edge_key(L, e->up, e->up_off) : edge_key(L, e->down, e->down_off);
		for (int j = start[w]; j < start[w + 1]; j++) {
			const ledge *f = &L->edges[list[j]];
			int64_t kw = up ? edge_key(L, f->up, f->up_off) : edge_key(L, f->down, f->down_off);
			c += kv > kw;
		}
	}
	return c;
}

/* Swaps neighbours in rank r while that removes crossings. */
static void
transpose(layout *L, int r)
{
	int a = L->rank_start[r], n = L->rank_start[r + 1] - a;
	for (int pass = 0; pass < TRANSPOSE_PASSES; pass++) {
		bool improved = false;
		for (int k = 0; k + 1 < n; k++) {
			int v = L->order[a + k], w = L->order[a + k + 1];
			int64_t keep = pair_crossings(L, v, w, true) + pair_crossings(L, v, w, false);
			int64_t swap = pair_crossings(L, w, v, true) + pair_crossings(L, w, v, false);
			if (swap < keep) {
				L->order[a + k] = w;
				L->order[a + k + 1] = v;
				L->pos[w] = k;
				L->pos[v] = k + 1;
				improved = true;
			}
		}
		if (!improved)
			break;
	}
}

static void
reduce_crossings(layout *L)
{
	scratch s = { 0 };
	int *best = st_xmalloc((size_t)(L->n + 1) * sizeof *best);
	memcpy(best, L->order, (size_t)L->n * sizeof *best);
	int64_t best_c = total_crossings(L, &s);
	int still = 0;
	for (int it = 0; it < ORDER_ITERATIONS && best_c > 0 && still < ORDER_PATIENCE; it++) {
		bool down = it % 2 == 0;
		bool flip = (it / 2) % 2 == 1;
		if (down) {
			for (int r = 1; r < L->n_ranks; r++)
				median_sort(L, &s, r, true, flip);
		} else {
			for (int r = L->n_ranks - 2; r >= 0; r--)
				median_sort(L, &s, r, false, flip);
		}
		for (int r = 0; r < L->n_ranks; r++)
			transpose(L, r);
		int64_t c = total_crossings(L, &s);
		if (c < best_c) {
			best_c = c;
			memcpy(best, L->order, (size_t)L->n * sizeof *best);
			still = 0;
		} else {
			still++;
		}
	}
	memcpy(L->order, best, (size_t)L->n * sizeof *best);
	for (int r = 0; r < L->n_ranks; r++) {
		for (int k = L->rank_start[r]; k < L->rank_start[r + 1]; k++)
			L->pos[L->order[k]] = k - L->rank_start[r];
	}
	free(best);
	free(s.pairs);
	free(s.keys);
	free(s.tmp);
	free(s.values);
}

/* ---- columns ---- */

typedef struct target {
	int64_t value;
	int64_t weight;
} target;

static int
compare_target(const void *a, const void *b)
{
	const target *p = a, *q = b;
	if (p->value != q->value)
		return p->value < q->value ? -1 : 1;
	return (p->weight > q->weight) - (p->weight < q->weight);
}

/* The lower weighted median of t[0..n) (sorted here). */
static int64_t
weighted_median(target *t, int n)
{
	st_sort(t, (size_t)n, sizeof *t, compare_target);
	int64_t total = 0, seen = 0;
	for (int i = 0; i < n; i++)
		total += t[i].weight;
	for (int i = 0; i < n; i++) {
		seen += t[i].weight;
		if (2 * seen >= total)
			return t[i].value;
	}
	return t[n - 1].value;
}

static int
gap(const layout *L, int v, int w)
{
	return v < L->n_real && w < L->n_real ? GAP_GLYPHS : GAP_LANE;
}

typedef struct block {
	int start, end;    /* members [start, end) of the rank */
	int64_t value;
} block;

/*
 * Places rank r: each node wants the column that makes its links to the
 * chosen neighbouring ranks straight (the weighted median over its links),
 * and the rank takes the columns closest to those in total weighted
 * distance that keep the order and the gaps: isotonic L1 regression by
 * pooling adjacent violators, over positions shifted by the gaps before
 * each node.
 */
static void
place_rank(layout *L, int r, bool use_up, bool use_down, target *t, int64_t *want,
           int64_t *weight, int64_t *shift, block *blocks, target *pool)
{
	int a = L->rank_start[r], n = L->rank_start[r + 1] - a;
	int64_t offset = 0;
	for (int k = 0; k < n; k++) {
		int v = L->order[a + k];
		if (k > 0) {
			int u = L->order[a + k - 1];
			offset += L->width[u] + gap(L, u, v);
		}
		shift[k] = offset;
		int m = 0;
		int64_t total = 0;
		if (use_up) {
			for (int j = L->up_start[v]; j < L->up_start[v + 1]; j++) {
				const ledge *e = &L->edges[L->up_list[j]];
				t[m++] = (target){ (int64_t)L->x[e->up] + e->up_off - e->align_off, e->weight };
				total += e->weight;
			}
		}
		if (use_down) {
			for (int j = L->down_start[v]; j < L->down_start[v + 1]; j++) {
				const ledge *e = &L->edges[L->down_list[j]];
				t[m++] = (target){ (int64_t)L->x[e->down] + e->align_off - e->up_off, e->weight };
				total += e->weight;
			}
		}
		want[k] = (m > 0 ? weighted_median(t, m) : L->x[v]) - offset;
		weight[k] = m > 0 ? total : WEIGHT_FREE;
	}
	int nb = 0;
	for (int k = 0; k < n; k++) {
		blocks[nb++] = (block){ k, k + 1, want[k] };
		while (nb > 1 && blocks[nb - 2].value > blocks[nb - 1].value) {
			block *p = &blocks[nb - 2];
			p->end = blocks[nb - 1].end;
			nb--;
			int size = p->end - p->start;
			if (n <= MEDIAN_RANK_MAX) {
				for (int i = 0; i < size; i++)
					pool[i] = (target){ want[p->start + i], weight[p->start + i] };
				p->value = weighted_median(pool, size);
			} else {
				int64_t sum = 0, total = 0;
				for (int i = p->start; i < p->end; i++) {
					sum += want[i] * weight[i];
					total += weight[i];
				}
				p->value = sum >= 0 ? (sum + total / 2) / total : -((-sum + total / 2) / total);
			}
		}
	}
	for (int b = 0; b < nb; b++) {
		for (int k = blocks[b].start; k < blocks[b].end; k++)
			L->x[L->order[a + k]] = (int)(blocks[b].value + shift[k]);
	}
}

static void
place_columns(layout *L)
{
	L->x = st_xcalloc((size_t)L->n + 1, sizeof *L->x);
	int widest = 1, most_edges = 1;
	for (int r = 0; r < L->n_ranks; r++) {
		int n = L->rank_start[r + 1] - L->rank_start[r];
		widest = n > widest ? n : widest;
		int x = 0;
		for (int k = L->rank_start[r]; k < L->rank_start[r + 1]; k++) {
			int v = L->order[k];
			if (k > L->rank_start[r])
				x += gap(L, L->order[k - 1], v);
			L->x[v] = x;
			x += L->width[v];
		}
	}
	for (int v = 0; v < L->n; v++) {
		int d = L->up_start[v + 1] - L->up_start[v] + L->down_start[v + 1] - L->down_start[v];
		most_edges = d > most_edges ? d : most_edges;
	}
	target *t = st_xmalloc((size_t)(most_edges + 1) * sizeof *t);
	target *pool = st_xmalloc((size_t)(widest + 1) * sizeof *pool);
	int64_t *want = st_xmalloc((size_t)(widest + 1) * sizeof *want);
	int64_t *weight = st_xmalloc((size_t)(widest + 1) * sizeof *weight);
	int64_t *shift = st_xmalloc((size_t)(widest + 1) * sizeof *shift);
	block *blocks = st_xmalloc((size_t)(widest + 1) * sizeof *blocks);
	int *before = st_xmalloc((size_t)(L->n + 1) * sizeof *before);
	/* Down from the top following the ranks above, up following the ranks
	 * below, then both ways with both neighbours until nothing moves. */
	for (int sweep = 0; sweep < PLACE_SWEEPS; sweep++) {
		memcpy(before, L->x, (size_t)L->n * sizeof *before);
		bool down = sweep % 2 == 0, both = sweep >= 2;
		if (down) {
			for (int r = sweep == 0 ? 1 : 0; r < L->n_ranks; r++)
				place_rank(L, r, true, both, t, want, weight, shift, blocks, pool);
		} else {
			for (int r = L->n_ranks - 2 + (both ? 1 : 0); r >= 0; r--)
				place_rank(L, r, both, true, t, want, weight, shift, blocks, pool);
		}
		if (sweep >= 2 && memcmp(before, L->x, (size_t)L->n * sizeof *before) == 0)
			break;
	}
	free(t);
	free(pool);
	free(want);
	free(weight);
	free(shift);
	free(blocks);
	free(before);
}

static void
layout_free(layout *L)
{
	free(L->rank);
	free(L->width);
	free(L->x);
	free(L->pos);
	free(L->through);
	free(L->rank_start);
	free(L->order);
	free(L->edges);
	free(L->up_start);
	free(L->up_list);
	free(L->down_start);
	free(L->down_list);
}

int *
st_layout_graph(const st_graph *g)
{
	int n = g->n_layers;
	int *result = st_xcalloc((size_t)(2 * n + 1), sizeof *result);
	if (n == 0)
		return result;
	layout L = { 0 };
	int *left = st_xmalloc((size_t)n * sizeof *left);
	L.through = st_xmalloc((size_t)n * sizeof *L.through);
	for (int i = 0; i < n; i++) {
		st_rect r;
		st_glyph_rect(g->layers[i], &r);
		add_node(&L, 0, r.w);
		left[i] = r.x;
		L.through[i] = st_glyph_output_x(g->layers[i], 0) - r.x;
	}
	L.n_real = n;
	int n_links;
	link *links = collect_links(g, left, &n_links);
	break_cycles(n, links, n_links);
	rank_nodes(g, &L, links, n_links);
	make_edges(&L, links, n_links);
	adjacency(&L);
	initial_order(&L);
	reduce_crossings(&L);
	place_columns(&L);
	int min_x = 0;
	for (int v = 0; v < L.n; v++) {
		if (v == 0 || L.x[v] < min_x)
			min_x = L.x[v];
	}
	for (int i = 0; i < n; i++) {
		result[2 * i] = L.x[i] - min_x;
		result[2 * i + 1] = L.rank[i] * RANK_ROWS;
	}
	free(links);
	free(left);
	layout_free(&L);
	return result;
}

/* ------------------------------------------------------------------------
 * Overlaps: a sweep over columns with the active glyphs' rows counted in two
 * Fenwick trees (their first rows and their ends).
 * ------------------------------------------------------------------------ */

typedef struct box_event {
	int x;
	int kind;   /* 0 a glyph ends (half-open: before any start there), 1 one starts */
	int index;
} box_event;

static int
compare_box_event(const void *a, const void *b)
{
	const box_event *p = a, *q = b;
	if (p->x != q->x)
		return p->x < q->x ? -1 : 1;
	if (p->kind != q->kind)
		return p->kind < q->kind ? -1 : 1;
	return (p->index > q->index) - (p->index < q->index);
}


int64_t
st_layout_overlaps(const st_graph *g)
{
	int n = g->n_layers;
	if (n < 2)
		return 0;
	st_rect *r = st_xmalloc((size_t)n * sizeof *r);
	int *tops = st_xmalloc((size_t)n * sizeof *tops), *ends = st_xmalloc((size_t)n * sizeof *ends);
	box_event *ev = st_xmalloc((size_t)(2 * n) * sizeof *ev);
	for (int i = 0; i < n; i++) {
		st_glyph_rect(g->layers[i], &r[i]);
		tops[i] = r[i].y;
		ends[i] = r[i].y + r[i].h;
		ev[2 * i] = (box_event){ r[i].x, 1, i };
		ev[2 * i + 1] = (box_event){ r[i].x + r[i].w, 0, i };
	}
	int nt = st_unique_sorted(tops, n), ne = st_unique_sorted(ends, n);
	int *top_tree = st_xcalloc((size_t)nt + 1, sizeof *top_tree);
	int *end_tree = st_xcalloc((size_t)ne + 1, sizeof *end_tree);
	st_sort(ev, (size_t)(2 * n), sizeof *ev, compare_box_event);
	int64_t overlaps = 0, active = 0;
	for (int k = 0; k < 2 * n; k++) {
		const st_rect *b = &r[ev[k].index];
		int ti = st_lower_bound(tops, nt, b->y), ei = st_lower_bound(ends, ne, b->y + b->h);
		if (ev[k].kind == 0) {
			st_fenwick_add(top_tree, nt, ti, -1);
			st_fenwick_add(end_tree, ne, ei, -1);
			active--;
			continue;
		}
		/* Active glyphs that neither end at or above this one's first row
		 * nor start at or below its end. */
		int64_t ended = st_fenwick_prefix(end_tree, st_lower_bound(ends, ne, b->y + 1));
		int64_t later = active - st_fenwick_prefix(top_tree, st_lower_bound(tops, nt, b->y + b->h));
		overlaps += active - ended - later;
		st_fenwick_add(top_tree, nt, ti, 1);
		st_fenwick_add(end_tree, ne, ei, 1);
		active++;
	}
	free(r);
	free(tops);
	free(ends);
	free(ev);
	free(top_tree);
	free(end_tree);
	return overlaps;
}
