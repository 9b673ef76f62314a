/* Unit tests: the type checker, full and incremental. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "helpers.h"

static st_graph *
parse(const char *json)
{
	st_diag d;
	st_diag_init(&d);
	st_graph *g = st_model_parse(json, strlen(json), "t.json", test_registry(), &d);
	if (g == NULL)
		st_diag_print(&d, stderr);
	cr_assert_not_null(g);
	st_diag_free(&d);
	return g;
}

static const char *
first_message(const st_graph *g, const char *layer)
{
	const st_layer *l = st_graph_find(g, layer);
	cr_assert_not_null(l);
	return l->n_messages ? l->messages[0].text : "";
}

Test(check, unconnected_mandatory_inputs)
{
	st_session *s = test_session("add input data; add identity a; add output out");
	st_graph *g = st_session_graph(s);
	st_graph_check(g);
	cr_assert_str_eq(first_message(g, "a"), "These mandatory inputs are not connected: 0");
	cr_assert_str_eq(first_message(g, "out"), "These mandatory inputs are not connected: 0");
	cr_assert_eq(g->errors, 2);
	cr_assert_eq(test_run(s, "connect data a; connect a out"), 0);
	cr_assert_eq(g->errors, 0, "the incremental check after each command clears them");
	st_session_free(s);
}

Test(check, unknown_types_are_kept_with_an_error)
{
	st_graph *g = parse("{\"format\": \"strata-model\", \"version\": 1, \"layers\": ["
	                    "{\"name\": \"data\", \"type\": \"input\"},"
	                    "{\"name\": \"m\", \"type\": \"identiy\", \"params\": {\"k\": [1, 2]},"
	                    " \"inputs\": [\"data.0\"]},"
	                    "{\"name\": \"n\", \"type\": \"identity\", \"inputs\": [\"m.0\"]}]}");
	st_graph_check(g);
	cr_assert_str_eq(first_message(g, "m"),
	                 "unknown layer type 'identiy': no loaded plugin provides it (did you mean 'identity'?)");
	cr_assert_eq(st_graph_find(g, "n")->n_messages, 0, "no cascade of errors downstream");
	cr_assert_not(st_graph_find(g, "n")->outputs_known);
	char *text = st_model_serialize(g);
	cr_assert(strstr(text, "\"type\": \"identiy\"") != NULL, "the layer is kept");
	cr_assert(strstr(text, "\"params\": {\"k\": [1, 2]}") != NULL, "with its parameters");
	free(text);
	st_graph_free(g);
}

Test(check, duplicate_names_and_invalid_names)
{
	st_graph *g = parse("{\"format\": \"strata-model\", \"version\": 1, \"layers\": ["
	                    "{\"name\": \"x\", \"type\": \"input\"},"
	                    "{\"name\": \"x\", \"type\": \"input\"},"
	                    "{\"name\": \"bad name\", \"type\": \"input\"}]}");
	st_graph_check(g);
	cr_assert_str_eq(g->layers[0]->messages[0].text, "the name 'x' is used by more than one layer");
	cr_assert_str_eq(g->layers[1]->messages[0].text, "the name 'x' is used by more than one layer");
	cr_assert_str_eq(g->layers[2]->messages[0].text,
	                 "invalid name 'bad name': a name may contain only letters, digits and '_'");
	cr_assert_eq(g->errors, 3);
	st_graph_free(g);
}

Test(check, cycles_from_a_file)
{
	st_graph *g = parse("{\"format\": \"strata-model\", \"version\": 1, \"layers\": ["
	                    "{\"name\": \"data\", \"type\": \"input\"},"
	                    "{\"name\": \"a\", \"type\": \"identity\", \"inputs\": [\"b.0\"]},"
	                    "{\"name\": \"b\", \"type\": \"identity\", \"inputs\": [\"a.0\"]},"
	                    "{\"name\": \"c\", \"type\": \"identity\", \"inputs\": [\"data.0\"]}]}");
	st_graph_check(g);
	cr_assert(strstr(first_message(g, "a"), "cycle") != NULL);
	cr_assert(strstr(first_message(g, "b"), "cycle") != NULL);
	cr_assert_eq(st_graph_find(g, "c")->n_messages, 0);
	cr_assert_eq(g->n_cycle, 2);
	st_graph_free(g);
}

Test(check, activation_rules)
{
	st_session *s = test_session("add input data; add identity a; connect data a");
	char err[256];
	char *on_input[] = { "activation", "data", "relu" };
	cr_assert_eq(st_session_exec(s, 3, on_input, err, sizeof err), -1);
	cr_assert_str_eq(err, "input layers take no activation");
	char *unknown[] = { "activation", "a", "swoosh" };
	cr_assert_eq(st_session_exec(s, 3, unknown, err, sizeof err), -1);
	cr_assert(strstr(err, "unknown activation 'swoosh'") != NULL, "%s", err);
	st_session_free(s);
}

/* A chain data -> l1 -> ... -> l10 -> out, and a side branch data -> side. */
Test(check, incremental_visits_only_downstream)
{
	st_buf b;
	st_buf_init(&b);
	st_buf_puts(&b, "add input data; add identity side; connect data side; add identity l1;"
	                "connect data l1;");
	for (int i = 2; i <= 10; i++)
		st_buf_printf(&b, "add identity l%d; connect l%d l%d;", i, i - 1, i);
	st_buf_puts(&b, "add output out; connect l10 out");
	st_session *s = test_session(b.data);
	st_buf_free(&b);
	st_graph *g = st_session_graph(s);
	st_graph_check(g);
	cr_assert(g->stats.full);
	cr_assert_eq(g->stats.visited, 13);

	/* A shape change at l5's input flows to l5..l10 and out: 7 layers, not the side branch. */
	st_layer *l5 = st_graph_find(g, "l5");
	st_layer *side = st_graph_find(g, "side");
	cr_assert_eq(test_run(s, "set data dims 3x8x8"), 0);
	cr_assert_not(g->stats.full);
	cr_assert_eq(g->stats.visited, 13, "the input feeds everything: all visited");

	/* An edit that changes no shape stops at the layer itself. */
	cr_assert_eq(test_run(s, "activation l5 relu"), 0);
	cr_assert_not(g->stats.full);
	cr_assert_eq(g->stats.visited, 1, "only l5 is re-checked");
	cr_assert_eq(l5->n_messages, 0);

	/* Disconnecting l5 invalidates l5 and makes everything after it unknown. */
	cr_assert_eq(test_run(s, "disconnect l5"), 0);
	cr_assert_not(g->stats.full);
	cr_assert_eq(g->stats.visited, 7, "l5..l10 and out");
	cr_assert_eq(g->errors, 1);
	cr_assert_not(st_graph_find(g, "l9")->outputs_known);
	cr_assert(st_graph_find(g, "l4")->outputs_known, "upstream untouched");
	cr_assert(side->outputs_known);
	st_session_free(s);
}

/* The incremental result must equal a fresh full check after any edit. */
static void
assert_same_as_full(st_graph *g)
{
	char *text = st_model_serialize(g);
	st_graph *fresh = parse(text);
	st_graph_check(fresh);
	cr_assert_eq(fresh->n_layers, g->n_layers);
	cr_assert_eq(fresh->errors, g->errors, "errors: full %d, incremental %d\n%s", fresh->errors,
	             g->errors, text);
	cr_assert_eq(fresh->warnings, g->warnings);
	for (int i = 0; i < g->n_layers; i++) {
		const st_layer *a = g->layers[i], *b = fresh->layers[i];
		cr_assert_str_eq(a->name, b->name);
		cr_assert_eq(a->outputs_known, b->outputs_known, "layer %s", a->name);
		cr_assert_eq(a->n_outputs, b->n_outputs);
		for (int k = 0; k < a->n_outputs; k++)
			cr_assert(st_shape_equal(&a->outputs[k], &b->outputs[k]), "layer %s", a->name);
		cr_assert_eq(a->n_messages, b->n_messages, "layer %s", a->name);
		for (int k = 0; k < a->n_messages; k++)
			cr_assert_str_eq(a->messages[k].text, b->messages[k].text);
	}
	st_graph_free(fresh);
	free(text);
}

Test(check, incremental_equals_full_over_random_edits)
{
	st_session *s = test_session("add input data");
	st_graph *g = st_session_graph(s);
	unsigned seed = 12345;
	char script[256];
	for (int step = 0; step < 400; step++) {
		seed = seed * 1103515245u + 12345u;
		unsigned pick = (seed >> 16) % 8;
		int n = g->n_layers;
		const char *a = g->layers[(seed >> 8) % (unsigned)n]->name;
		const char *c = g->layers[(seed >> 20) % (unsigned)n]->name;
		switch (pick) {
		case 0:
		case 1:
			snprintf(script, sizeof script, "add identity");
			break;
		case 2:
			snprintf(script, sizeof script, "add input");
			break;
		case 3:
		case 4:
			snprintf(script, sizeof script, "connect %s %s.0", a, c);
			break;
		case 5:
			snprintf(script, sizeof script, "disconnect %s", a);
			break;
		case 6:
			snprintf(script, sizeof script, n > 3 ? "delete %s" : "undo", a);
			break;
		default:
			snprintf(script, sizeof script, "set %s dims %ux%u", a, 1 + (seed >> 4) % 4,
			         1 + (seed >> 12) % 3);
			break;
		}
		test_run(s, script); /* failures (cycles, wrong types) are part of the test */
		assert_same_as_full(g);
	}
	st_session_free(s);
}

/* A plugin whose reshape returns nonsense is reported and its layer marked
 * invalid, in process; layers below it wait for a valid input. */
Test(check, a_plugin_that_reshapes_nonsense_is_reported_and_contained)
{
	st_registry *r = st_registry_new();
	st_registry_load_default(r);
	char *path = st_xasprintf("%s/hostile.so", getenv("TEST_PLUGIN_DIR"));
	cr_assert(st_registry_load_file(r, path)->loaded);
	free(path);
	static const struct {
		const char *type, *message;
	} cases[] = {
		{ "negative_dims", "the plugin computed an invalid shape for output 0" },
		{ "huge_rank", "the plugin computed an invalid shape for output 0" },
		{ "absurd_dims", "output 0 would hold more elements than memory can address" },
		{ "many_outputs", "the plugin gave 1000 outputs (at most 1)" },
		{ "many_weights", "the plugin gave -3 weights" },
		{ "silent_failure", "its output shape cannot be computed" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		st_session *s = st_session_new(st_graph_new(r), NULL);
		char *script = st_xasprintf("add input data; set data dims 3x8x8; add %s h; add identity after;"
		                            "connect data h; connect h after",
		                            cases[i].type);
		cr_assert_eq(test_run(s, script), 0, "%s", script);
		free(script);
		st_graph *g = st_session_graph(s);
		st_graph_check(g);
		st_layer *h = st_graph_find(g, "h");
		cr_assert(!h->outputs_known, "%s: the layer is invalid", cases[i].type);
		cr_assert_eq(h->n_outputs, 0);
		bool found = false;
		for (int m = 0; m < h->n_messages; m++)
			found |= h->messages[m].severity == ST_SEVERITY_ERROR &&
			         strstr(h->messages[m].text, cases[i].message) != NULL;
		cr_assert(found, "%s: no error '%s' (%d messages, first: %s)", cases[i].type, cases[i].message,
		          h->n_messages, h->n_messages ? h->messages[0].text : "none");
		cr_assert(g->errors >= 1);
		cr_assert(!st_graph_find(g, "after")->outputs_known, "below it nothing is computed from nonsense");
		st_session_free(s);
	}
	st_registry_free(r);
}
