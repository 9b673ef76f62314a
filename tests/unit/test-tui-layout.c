/* Unit tests: the automatic layered layout (no overlaps, few crossings,
 * straight chains, determinism, cycles) and the overlap count. The time
 * budget for 10,000 layers is bench/tui's to check, not the tests'. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "st-tui.h"

static void
apply(st_graph *g, const int *pos)
{
	for (int i = 0; i < g->n_layers; i++) {
		g->layers[i]->x = pos[2 * i];
		g->layers[i]->y = pos[2 * i + 1];
	}
}

static void
lay_out(st_graph *g)
{
	int *pos = st_layout_graph(g);
	apply(g, pos);
	free(pos);
}

/* One column in graph order, 8 rows apart: the naive placement. */
static void
one_column(st_graph *g)
{
	for (int i = 0; i < g->n_layers; i++) {
		g->layers[i]->x = 0;
		g->layers[i]->y = 8 * i;
	}
}

static st_graph *
load_example(const char *name)
{
	char *path = st_xasprintf("%s/examples/%s", getenv("top_srcdir"), name);
	st_diag d;
	st_diag_init(&d);
	st_graph *g = st_model_load(path, test_registry(), &d);
	cr_assert_not_null(g, "%s: %s", path, d.count ? d.items[0].text : "?");
	st_diag_free(&d);
	free(path);
	st_graph_check(g);
	return g;
}

/* Every position on a rank row, and every link going down a rank or more. */
static void
assert_layered(const st_graph *g)
{
	for (int i = 0; i < g->n_layers; i++) {
		const st_layer *l = g->layers[i];
		cr_assert_eq(l->y % 8, 0, "%s at row %d, between ranks", l->name, l->y);
		cr_assert(l->x >= 0, "%s at column %d", l->name, l->x);
		for (int k = 0; k < l->n_inputs; k++) {
			const st_layer *p = l->inputs[k].layer;
			if (p != NULL)
				cr_assert(p->y < l->y, "%s (row %d) feeds %s (row %d) from below", p->name, p->y,
				          l->name, l->y);
		}
	}
}

Test(tui_layout, examples_lie_in_ranks_without_overlaps)
{
	static const struct {
		const char *file;
		int max_crossings;
	} examples[] = {
		{ "cnn_classifier.strata.json", 0 },
		{ "resnet18.strata.json", 0 },
		{ "unet_small.strata.json", 1 },
		{ "fashion_mnist/fashion_mnist.strata.json", 0 },
	};
	for (size_t e = 0; e < sizeof examples / sizeof examples[0]; e++) {
		st_graph *g = load_example(examples[e].file);
		one_column(g);
		int64_t naive = st_layout_crossings(g);
		lay_out(g);
		cr_assert_eq(st_layout_overlaps(g), 0, "%s: glyphs overlap", examples[e].file);
		int64_t c = st_layout_crossings(g);
		cr_assert(c <= examples[e].max_crossings, "%s: %ld crossings", examples[e].file, (long)c);
		cr_assert(c <= naive, "%s: %ld crossings, one column has %ld", examples[e].file, (long)c,
		          (long)naive);
		assert_layered(g);
		st_graph_free(g);
	}
}

/* Links from a layer with one consumer into a layer with one link are vertical. */
static void
assert_chains_straight(const st_graph *g)
{
	for (int i = 0; i < g->n_layers; i++) {
		const st_layer *l = g->layers[i];
		int linked = 0;
		for (int k = 0; k < l->n_inputs; k++)
			linked += l->inputs[k].layer != NULL;
		for (int k = 0; k < l->n_inputs; k++) {
			const st_layer *p = l->inputs[k].layer;
			if (p == NULL || linked != 1 || p->n_consumers != 1)
				continue;
			cr_assert_eq(st_glyph_output_x(p, l->inputs[k].output), st_glyph_input_x(l, k),
			             "%s -> %s is not straight", p->name, l->name);
		}
	}
}

Test(tui_layout, chains_run_straight)
{
	const char *files[] = { "cnn_classifier.strata.json", "resnet18.strata.json",
		                "unet_small.strata.json", "fashion_mnist/fashion_mnist.strata.json" };
	for (int e = 0; e < 4; e++) {
		st_graph *g = load_example(files[e]);
		lay_out(g);
		assert_chains_straight(g);
		st_graph_free(g);
	}
}

Test(tui_layout, the_main_path_of_a_residual_network_stays_in_one_column)
{
	st_graph *g = load_example("resnet18.strata.json");
	lay_out(g);
	/* Every add's output, and the stem's, in one column: no drift to one side. */
	int column = st_glyph_output_x(st_graph_find(g, "pool1"), 0);
	for (int i = 0; i < g->n_layers; i++) {
		const st_layer *l = g->layers[i];
		if (strstr(l->name, "_add") != NULL)
			cr_assert_eq(st_glyph_output_x(l, 0), column, "%s drifted", l->name);
	}
	st_graph_free(g);
}

/* ---- generated graphs ---- */

static uint32_t rng_state;

static uint32_t
rng(void)
{
	rng_state = rng_state * 1664525u + 1013904223u;
	return rng_state >> 8;
}

/*
 * A random DAG of n layers in topological order: an input, then identity,
 * element-wise, concatenation and split layers fed mostly by the few layers
 * before them, sometimes by any earlier one; a tenth minimised.
 */
static st_graph *
random_dag(uint32_t seed, int n)
{
	static const char *const types[] = { "identity", "elementwise", "concatenation", "split" };
	const st_registry *r = test_registry();
	st_graph *g = st_graph_new(r);
	rng_state = seed;
	for (int i = 0; i < n; i++) {
		const char *type = i == 0 ? "input" : types[rng() % 4];
		char name[32];
		snprintf(name, sizeof name, "n%d", i);
		st_layer *l = st_layer_new(r, type, name);
		st_graph_insert(g, l, g->n_layers);
		if (i == 0)
			continue;
		bool single = strcmp(type, "identity") == 0 || strcmp(type, "split") == 0;
		int links = single ? 1 : 1 + (int)(rng() % 3);
		for (int k = 0; k < links; k++) {
			int back = rng() % 8 == 0 ? (int)(rng() % (uint32_t)i) : (int)(rng() % (uint32_t)(i < 4 ? i : 4));
			st_layer *p = g->layers[i - 1 - back];
			int out = strcmp(p->type_name, "split") == 0 ? (int)(rng() % 2) : 0;
			st_graph_set_input(g, l, k, (st_port){ p, out });
		}
		l->minimized = rng() % 10 == 0;
	}
	st_graph_check(g);
	return g;
}

Test(tui_layout, random_graphs_without_overlaps_and_with_fewer_crossings)
{
	int64_t ours = 0, naive = 0;
	for (uint32_t seed = 1; seed <= 40; seed++) {
		int n = 5 + (int)(seed * 37 % 150);
		st_graph *g = random_dag(seed, n);
		one_column(g);
		int64_t c0 = st_layout_crossings(g);
		lay_out(g);
		cr_assert_eq(st_layout_overlaps(g), 0, "seed %u (%d layers): glyphs overlap", seed, n);
		assert_layered(g);
		int64_t c = st_layout_crossings(g);
		cr_assert(c <= c0 + c0 / 4 + 2, "seed %u (%d layers): %ld crossings, one column %ld", seed, n,
		          (long)c, (long)c0);
		ours += c;
		naive += c0;
		st_graph_free(g);
	}
	cr_assert(ours * 10 < naive * 7, "%ld crossings in all, one column has %ld", (long)ours, (long)naive);
}

Test(tui_layout, deterministic)
{
	st_graph *a = random_dag(7, 120), *b = random_dag(7, 120);
	int *pa = st_layout_graph(a), *pa2 = st_layout_graph(a), *pb = st_layout_graph(b);
	cr_assert_arr_eq(pa, pa2, sizeof(int) * 2 * 120, "the same graph twice");
	cr_assert_arr_eq(pa, pb, sizeof(int) * 2 * 120, "an identical graph");
	/* Where the layers stand before does not matter. */
	for (int i = 0; i < b->n_layers; i++) {
		b->layers[i]->x = (int)(rng() % 1000);
		b->layers[i]->y = (int)(rng() % 1000);
	}
	int *pc = st_layout_graph(b);
	cr_assert_arr_eq(pa, pc, sizeof(int) * 2 * 120, "a graph placed elsewhere");
	free(pa);
	free(pa2);
	free(pb);
	free(pc);
	st_graph_free(a);
	st_graph_free(b);
}

Test(tui_layout, cycles_are_broken_not_fatal)
{
	const st_registry *r = test_registry();
	st_graph *g = st_graph_new(r);
	const char *names[] = { "in", "a", "b", "c", "d", "self" };
	const char *types[] = { "input", "elementwise", "identity", "identity", "identity", "elementwise" };
	st_layer *l[6];
	for (int i = 0; i < 6; i++) {
		l[i] = st_layer_new(r, types[i], names[i]);
		st_graph_insert(g, l[i], i);
	}
	/* in -> a -> b -> c -> a (a cycle), c -> d, self -> self. */
	st_graph_set_input(g, l[1], 0, (st_port){ l[0], 0 });
	st_graph_set_input(g, l[2], 0, (st_port){ l[1], 0 });
	st_graph_set_input(g, l[3], 0, (st_port){ l[2], 0 });
	st_graph_set_input(g, l[1], 1, (st_port){ l[3], 0 });
	st_graph_set_input(g, l[4], 0, (st_port){ l[3], 0 });
	st_graph_set_input(g, l[5], 0, (st_port){ l[5], 0 });
	st_graph_check(g);
	lay_out(g);
	cr_assert_eq(st_layout_overlaps(g), 0);
	cr_assert(l[0]->y < l[1]->y && l[1]->y < l[2]->y && l[2]->y < l[3]->y && l[3]->y < l[4]->y,
	          "the cycle is opened at the link that closes it");
	/* Drawing a graph with cycles routes the climbing link around. */
	st_layout_crossings(g);
	st_graph_free(g);
}

Test(tui_layout, empty_single_and_unlinked)
{
	const st_registry *r = test_registry();
	st_graph *g = st_graph_new(r);
	int *pos = st_layout_graph(g);
	cr_assert_not_null(pos, "an empty graph still gets an array to free");
	free(pos);
	cr_assert_eq(st_layout_overlaps(g), 0);
	cr_assert_eq(st_layout_crossings(g), 0);
	st_layer *one = st_layer_new(r, "identity", "one");
	one->x = 50;
	one->y = 70;
	st_graph_insert(g, one, 0);
	lay_out(g);
	cr_assert_eq(one->x, 0);
	cr_assert_eq(one->y, 0);
	for (int i = 0; i < 4; i++) {
		char name[16];
		snprintf(name, sizeof name, "free%d", i);
		st_graph_insert(g, st_layer_new(r, "identity", name), g->n_layers);
	}
	lay_out(g);
	cr_assert_eq(st_layout_overlaps(g), 0);
	/* Unlinked layers share the first rank, four columns apart. */
	for (int i = 1; i < g->n_layers; i++) {
		st_rect prev;
		st_glyph_rect(g->layers[i - 1], &prev);
		cr_assert_eq(g->layers[i]->y, 0);
		cr_assert_eq(g->layers[i]->x, prev.x + prev.w + 4);
	}
	st_graph_free(g);
}

Test(tui_layout, sources_sit_just_above_their_consumer)
{
	st_session *s = test_session("add input data; add identity a; add identity b; add identity c;"
	                             "add constant k; set k dims 1; add elementwise sum;"
	                             "connect data a; connect a b; connect b c; connect c sum; connect k sum");
	st_graph *g = st_session_graph(s);
	lay_out(g);
	cr_assert_eq(st_graph_find(g, "data")->y, 0, "network inputs stay on top");
	cr_assert_eq(st_graph_find(g, "k")->y, st_graph_find(g, "sum")->y - 8,
	             "a constant sits next to its consumer, not on top");
	cr_assert_eq(st_layout_overlaps(g), 0);
	st_session_free(s);
}

Test(tui_layout, overlaps_count_pairs)
{
	/* Identity glyphs here are 16 x 5. */
	st_session *s = test_session("add identity a 0 0; add identity b 0 0; add identity c 0 0;"
	                             "add identity d 16 0; add identity e 0 5");
	st_graph *g = st_session_graph(s);
	cr_assert_eq(st_layout_overlaps(g), 3, "a, b and c on one spot; d and e only touch them");
	cr_assert_eq(test_run(s, "move b 15 4; move c 100 100"), 0);
	cr_assert_eq(st_layout_overlaps(g), 3, "b covers a corner cell of a, and parts of d and e");
	cr_assert_eq(test_run(s, "move b 200 200"), 0);
	cr_assert_eq(st_layout_overlaps(g), 0);
	st_session_free(s);
}

Test(tui_layout, search_helpers_agree_with_a_plain_scan)
{
	int v[] = { 7, 3, 3, 9, 1, 7, 7 };
	int n = st_unique_sorted(v, 7);
	cr_assert_eq(n, 4);
	int want[] = { 1, 3, 7, 9 };
	for (int i = 0; i < n; i++)
		cr_assert_eq(v[i], want[i]);
	for (int x = 0; x <= 10; x++) {
		int lower = 0, upper = 0;
		while (lower < n && v[lower] < x)
			lower++;
		while (upper < n && v[upper] <= x)
			upper++;
		cr_assert_eq(st_lower_bound(v, n, x), lower, "x=%d", x);
		cr_assert_eq(st_upper_bound(v, n, x), upper, "x=%d", x);
	}
	/* Prefix sums after point updates, against a plain array. */
	int tree[9] = { 0 }, plain[8] = { 0 };
	int adds[][2] = { { 0, 2 }, { 7, 5 }, { 3, -1 }, { 3, 4 }, { 5, 1 } };
	for (size_t k = 0; k < sizeof adds / sizeof adds[0]; k++) {
		st_fenwick_add(tree, 8, adds[k][0], adds[k][1]);
		plain[adds[k][0]] += adds[k][1];
		int64_t sum = 0;
		for (int i = 0; i <= 8; i++) {
			cr_assert_eq(st_fenwick_prefix(tree, i), sum, "prefix %d after %zu adds", i, k + 1);
			if (i < 8)
				sum += plain[i];
		}
	}
	st_sort(NULL, 0, sizeof(int), st_compare_int); /* an empty array is fine */
}
