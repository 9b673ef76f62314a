/* Unit tests: graph edits, links in both directions, names, terminals. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "helpers.h"

/* std plus the test plugin with an infinite input (stack_test). */
static st_registry *
registry_with_good(void)
{
	st_registry *r = st_registry_new();
	st_registry_load_default(r);
	char *path = st_xasprintf("%s/good.so", getenv("TEST_PLUGIN_DIR"));
	cr_assert(st_registry_load_file(r, path)->loaded);
	free(path);
	return r;
}

/* Every link appears once on each side. */
static void
assert_links_consistent(const st_graph *g)
{
	int forward = 0, backward = 0;
	for (int i = 0; i < g->n_layers; i++) {
		const st_layer *l = g->layers[i];
		cr_assert_eq(l->index, i);
		cr_assert_eq(st_graph_find(g, l->name) != NULL, true);
		for (int k = 0; k < l->n_inputs; k++) {
			st_port p = l->inputs[k];
			if (p.layer == NULL)
				continue;
			forward++;
			bool found = false;
			for (int c = 0; c < p.layer->n_consumers; c++)
				found |= p.layer->consumers[c].layer == l && p.layer->consumers[c].input == k;
			cr_assert(found, "%s.%d is missing from %s's consumers", l->name, k, p.layer->name);
		}
		backward += l->n_consumers;
	}
	cr_assert_eq(forward, backward);
}

Test(graph, generated_names_count_up)
{
	st_session *s = test_session("add input; add identity; add identity; add in");
	st_graph *g = st_session_graph(s);
	cr_assert_eq(g->n_layers, 4);
	cr_assert_str_eq(g->layers[0]->name, "in_1", "the first alias is the prefix");
	cr_assert_str_eq(g->layers[1]->name, "identity_1");
	cr_assert_str_eq(g->layers[2]->name, "identity_2");
	cr_assert_str_eq(g->layers[3]->name, "in_2");
	cr_assert_eq(test_run(s, "delete identity_1; add identity"), 0);
	cr_assert_str_eq(g->layers[3]->name, "identity_1", "a freed name is reused");
	st_session_free(s);
}

Test(graph, links_both_ways_and_delete)
{
	st_session *s = test_session("add input data; add identity a; add identity b; add output out;"
	                             "connect data a; connect a b; connect b.0 out.0; connect a out.0");
	st_graph *g = st_session_graph(s);
	st_layer *a = st_graph_find(g, "a"), *out = st_graph_find(g, "out");
	cr_assert_eq(out->inputs[0].layer, a, "connecting an input again replaces its link");
	cr_assert_eq(a->n_consumers, 2);
	assert_links_consistent(g);
	cr_assert_eq(test_run(s, "delete a"), 0);
	cr_assert_null(st_graph_find(g, "a"));
	cr_assert_null(st_graph_find(g, "b")->inputs[0].layer);
	cr_assert_null(out->inputs[0].layer);
	assert_links_consistent(g);
	cr_assert_eq(test_run(s, "undo"), 0);
	a = st_graph_find(g, "a");
	cr_assert_not_null(a);
	cr_assert_eq(st_graph_find(g, "b")->inputs[0].layer, a, "undo restores every link");
	cr_assert_eq(out->inputs[0].layer, a);
	cr_assert_eq(a->index, 1, "undo restores the position");
	assert_links_consistent(g);
	st_session_free(s);
}

Test(graph, renames_are_checked)
{
	st_session *s = test_session("add input data; add identity a; connect data a");
	st_graph *g = st_session_graph(s);
	char err[256];
	char *bad[] = { "rename", "a", "9lives" };
	cr_assert_eq(st_session_exec(s, 3, bad, err, sizeof err), -1);
	cr_assert_str_eq(err, "'9lives' cannot be a layer name: a name must start with a letter or '_'");
	char *taken[] = { "rename", "a", "data" };
	cr_assert_eq(st_session_exec(s, 3, taken, err, sizeof err), -1);
	cr_assert_str_eq(err, "the name 'data' is taken by another layer");
	char *keyword[] = { "rename", "a", "float" };
	cr_assert_eq(st_session_exec(s, 3, keyword, err, sizeof err), -1);
	cr_assert(strstr(err, "C keyword") != NULL);
	cr_assert_eq(test_run(s, "rename data pixels"), 0);
	cr_assert_null(st_graph_find(g, "data"));
	cr_assert_str_eq(st_graph_find(g, "a")->inputs[0].layer->name, "pixels", "links follow");
	char *text = st_model_serialize(g);
	cr_assert(strstr(text, "\"inputs\": [\"pixels.0\"]") != NULL, "%s", text);
	free(text);
	st_session_free(s);
}

Test(graph, cycles_are_refused)
{
	st_session *s = test_session("add input data; add identity a; add identity b; connect data a;"
	                             "connect a b");
	char err[256];
	char *loop[] = { "connect", "b", "a.0" };
	cr_assert_eq(st_session_exec(s, 3, loop, err, sizeof err), -1);
	cr_assert_str_eq(err, "linking b to a would close a cycle");
	char *self[] = { "connect", "a", "a" };
	cr_assert_eq(st_session_exec(s, 3, self, err, sizeof err), -1);
	st_session_free(s);
}

Test(graph, infinite_terminals_grow_and_shrink)
{
	st_registry *r = registry_with_good();
	st_session *s = st_session_new(st_graph_new(r), NULL);
	cr_assert_eq(test_run(s, "add input x; add input y; add stack_test st; connect x st; connect y st;"
	                    "connect x st"),
	             0);
	st_layer *st = st_graph_find(st_session_graph(s), "st");
	cr_assert_eq(st->n_inputs, 3);
	cr_assert_eq(st_layer_terminal_count(st), 4, "a free terminal follows the last link");
	cr_assert_eq(test_run(s, "disconnect st.2"), 0);
	cr_assert_eq(st->n_inputs, 2, "a trailing empty terminal goes away");
	cr_assert_eq(test_run(s, "disconnect st.0"), 0);
	cr_assert_eq(st->n_inputs, 2, "a hole in the middle stays");
	cr_assert(st_layer_input_mandatory(st, 0));
	st_graph_check(st_session_graph(s));
	cr_assert_str_eq(st->messages[0].text, "These mandatory inputs are not connected: 0");
	char err[256];
	char *gap[] = { "connect", "x", "st.5" };
	cr_assert_eq(st_session_exec(s, 3, gap, err, sizeof err), -1);
	cr_assert_str_eq(err, "connect to input 2 of 'st' first (terminals fill in order)");
	st_session_free(s);
	st_registry_free(r);
}

Test(graph, connect_checks_terminal_numbers)
{
	st_session *s = test_session("add input data; add identity a; add output out");
	char err[256];
	char *no_out[] = { "connect", "out", "a" };
	cr_assert_eq(st_session_exec(s, 3, no_out, err, sizeof err), -1);
	cr_assert_str_eq(err, "'out' has no outputs");
	char *bad_in[] = { "connect", "data", "a.1" };
	cr_assert_eq(st_session_exec(s, 3, bad_in, err, sizeof err), -1);
	cr_assert_str_eq(err, "'a' (identity) has 1 input (0 to 0), not 1");
	char *bad_src[] = { "connect", "data.3", "a" };
	cr_assert_eq(st_session_exec(s, 3, bad_src, err, sizeof err), -1);
	cr_assert_str_eq(err, "'data' has 1 output (0 to 0), not 3");
	char *typo[] = { "connect", "dta", "a" };
	cr_assert_eq(st_session_exec(s, 3, typo, err, sizeof err), -1);
	cr_assert_str_eq(err, "'dta' is not a layer of this model (did you mean 'data'?)");
	char *full[] = { "connect", "data", "a" };
	cr_assert_eq(st_session_exec(s, 3, full, err, sizeof err), 0);
	cr_assert_eq(st_session_exec(s, 3, full, err, sizeof err), -1);
	cr_assert_str_eq(err, "every input of 'a' is linked; name one, as in a.0");
	st_session_free(s);
}
