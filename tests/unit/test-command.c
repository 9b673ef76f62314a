/* Unit tests: edit commands, scripts, undo and redo. */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"

static int
run_diag(st_session *s, const char *script, st_diag *d)
{
	st_diag_init(d);
	return st_session_run_script(s, script, "script", d);
}

static void
expect_script_error(const char *setup, const char *script, int line, int col, const char *text)
{
	st_session *s = test_session(setup);
	st_diag d;
	cr_assert_eq(run_diag(s, script, &d), -1, "%s should fail", script);
	cr_assert_eq(d.count, 1);
	cr_assert_str_eq(d.items[0].file, "script");
	cr_assert_str_eq(d.items[0].text, text, "\n got: %s\nwant: %s", d.items[0].text, text);
	cr_assert_eq(d.items[0].line, line);
	cr_assert_eq(d.items[0].col, col);
	st_diag_free(&d);
	st_session_free(s);
}

Test(command, script_syntax)
{
	st_session *s = test_session("# a comment\nadd input data ; add identity 'a'\n\n"
	                             "add identity \"b\" # trailing comment\n connect data a;connect a b");
	st_graph *g = st_session_graph(s);
	cr_assert_eq(g->n_layers, 3);
	cr_assert_eq(st_graph_find(g, "b")->inputs[0].layer, st_graph_find(g, "a"));
	cr_assert_eq(test_run(s, "network description \"two words; and a semicolon\""), 0);
	cr_assert_str_eq(g->network.values[ST_NET_DESCRIPTION].s, "two words; and a semicolon");
	st_session_free(s);
}

Test(command, errors_carry_their_position)
{
	expect_script_error("add input data", "add identity a\n  connect dta a", 2, 3,
	                    "connect: 'dta' is not a layer of this model (did you mean 'data'?)");
	expect_script_error("", "add identity a; set a kernel 3", 1, 17,
	                    "set: identity layers have no parameters");
	expect_script_error("add input data", "set data batch -2", 1, 1,
	                    "set: layer 'data': parameter 'batch' must be a positive integer, got -2");
	expect_script_error("", "ad input", 1, 1, "ad: unknown command 'ad' (did you mean 'add'?); 'help' lists them");
	expect_script_error("", "add convolutoin_x", 1, 1,
	                    "add: unknown layer type 'convolutoin_x'; 'strata layers' lists them");
	expect_script_error("", "add input 'unclosed", 1, 11, "a quoted word is not closed");
	expect_script_error("", "connect a", 1, 1, "connect: usage: connect SRC[.OUT] DST[.IN]");
	expect_script_error("add input data", "set data dims [1, x]", 1, 1,
	                    "set: layer 'data': parameter 'dims' must be a list of integers, got \"[1, x]\"");
	expect_script_error("", "save", 1, 1, "save: the model has no file yet: save FILE");
	expect_script_error("", "undo", 1, 1, "undo: nothing to undo");
}

Test(command, a_failing_script_stops_and_keeps_earlier_edits)
{
	st_session *s = test_session("");
	cr_assert_eq(test_run(s, "add input data; add identity a; connect nowhere a; add identity b"), -1);
	st_graph *g = st_session_graph(s);
	cr_assert_eq(g->n_layers, 2, "stopped at the failing command");
	cr_assert_eq(st_session_undo_depth(s), 2, "the failed command left no undo step");
	st_session_free(s);
}

Test(command, undo_redo_restore_the_exact_model)
{
	st_session *s = test_session("add input data; add identity a; connect data a; add output out;"
	                             "connect a out");
	st_graph *g = st_session_graph(s);
	char *before = st_model_serialize(g);
	int depth = st_session_undo_depth(s);
	cr_assert_eq(test_run(s, "set data dims 1x28x28; set data batch 8; activation a leaky_relu alpha=0.2;"
	                    "rename a act; move act 10 -3; minimize act; network name lenet; "
	                    "network tensor_format fp16-nhwc; add identity extra; connect act extra;"
	                    "delete out; unset data batch"),
	             0);
	char *after = st_model_serialize(g);
	cr_assert_str_neq(before, after);
	cr_assert_eq(st_session_undo_depth(s), depth + 12);
	cr_assert_eq(test_run(s, "undo 12"), 0);
	char *undone = st_model_serialize(g);
	cr_assert_str_eq(undone, before);
	cr_assert_eq(test_run(s, "redo 12"), 0);
	char *redone = st_model_serialize(g);
	cr_assert_str_eq(redone, after);
	cr_assert_eq(test_run(s, "undo; add identity z"), 0);
	cr_assert_eq(st_session_redo_depth(s), 0, "a new edit clears redo");
	free(before);
	free(after);
	free(undone);
	free(redone);
	st_session_free(s);
}

Test(command, set_forms_and_activation_coefficients)
{
	st_session *s = test_session("add input data; add identity a; connect data a");
	st_graph *g = st_session_graph(s);
	st_layer *data = st_graph_find(g, "data");
	cr_assert_eq(test_run(s, "set data dims [3, 64, 32]"), 0);
	cr_assert_eq(data->params.values[0].count, 3);
	cr_assert_eq(data->params.values[0].ints[1], 64);
	cr_assert_eq(test_run(s, "set data dims 1x2"), 0);
	cr_assert_eq(data->params.values[0].count, 2);
	cr_assert(data->params.set[0]);
	cr_assert_eq(test_run(s, "unset data dims"), 0);
	cr_assert_not(data->params.set[0]);
	cr_assert_eq(data->params.values[0].count, 3, "back to the default [3, 224, 224]");
	st_diag d;
	cr_assert_eq(run_diag(s, "activation a leaky_relu beta=1", &d), -1);
	cr_assert_str_eq(d.items[0].text,
	                 "activation: activation leaky_relu has no coefficient 'beta'; it has: alpha");
	st_diag_free(&d);
	cr_assert_eq(test_run(s, "activation a none"), 0);
	cr_assert_null(st_graph_find(g, "a")->act.type_name);
	st_session_free(s);
}

static void
collect(void *user, const char *text)
{
	st_buf *b = user;
	st_buf_printf(b, "%s\n", text);
}

Test(command, check_list_show_and_help_print)
{
	st_session *s = test_session("add input data; add identity a");
	st_buf out;
	st_buf_init(&out);
	st_session_set_print(s, collect, &out);
	cr_assert_eq(test_run(s, "check; list; show data; help; help connect"), 0);
	cr_assert(strstr(out.data, "error: a: These mandatory inputs are not connected: 0") != NULL, "%s",
	          out.data);
	cr_assert(strstr(out.data, "1 error, 0 warnings") != NULL);
	cr_assert(strstr(out.data, "1x3x224x224") != NULL);
	cr_assert(strstr(out.data, "batch") != NULL);
	cr_assert(strstr(out.data, "connect SRC[.OUT] DST[.IN]") != NULL);
	cr_assert_eq(st_session_undo_depth(s), 2, "printing commands leave no undo step");
	st_buf_free(&out);
	st_session_free(s);
}

Test(command, dirty_tracks_saves)
{
	char dir[] = "/tmp/strata-cmd-XXXXXX";
	cr_assert_not_null(mkdtemp(dir));
	char *path = st_xasprintf("%s/m.json", dir);
	st_session *s = test_session("");
	cr_assert_not(st_session_dirty(s));
	cr_assert_eq(test_run(s, "add input data"), 0);
	cr_assert(st_session_dirty(s));
	char *save = st_xasprintf("save %s", path);
	cr_assert_eq(test_run(s, save), 0);
	cr_assert_not(st_session_dirty(s));
	cr_assert_str_eq(st_session_path(s), path);
	cr_assert_eq(test_run(s, "add identity a"), 0);
	cr_assert(st_session_dirty(s));
	cr_assert_eq(test_run(s, "undo"), 0);
	cr_assert_not(st_session_dirty(s), "undoing back to the saved state is clean");
	st_diag d;
	st_diag_init(&d);
	st_graph *g = st_model_load(path, test_registry(), &d);
	cr_assert_not_null(g);
	cr_assert_eq(g->n_layers, 1);
	st_graph_free(g);
	st_diag_free(&d);
	unlink(path);
	rmdir(dir);
	free(save);
	free(path);
	st_session_free(s);
}

Test(command, every_command_has_help)
{
	for (int i = 0; i < st_n_commands; i++) {
		cr_assert(st_commands[i].help && strlen(st_commands[i].help) > 10, "%s", st_commands[i].name);
		cr_assert_not_null(st_commands[i].usage);
		cr_assert_eq(st_command_find(st_commands[i].name), &st_commands[i]);
		if (st_commands[i].alias)
			cr_assert_eq(st_command_find(st_commands[i].alias), &st_commands[i]);
	}
}

static char *
load_serialize(const char *json, st_session **out)
{
	st_diag d;
	st_diag_init(&d);
	st_graph *g = st_model_parse(json, strlen(json), "t.json", test_registry(), &d);
	cr_assert_not_null(g);
	st_diag_free(&d);
	st_graph_check(g);
	*out = st_session_new(g, NULL);
	return st_model_serialize(g);
}

Test(command, undo_restores_unlinked_terminals_exactly)
{
	st_session *s;
	char *before = load_serialize(
		"{\"format\": \"strata-model\", \"version\": 1, \"layers\": ["
		"{\"name\": \"a\", \"type\": \"input\"}, {\"name\": \"b\", \"type\": \"input\"},"
		"{\"name\": \"c\", \"type\": \"concatenation\", \"inputs\": [\"a.0\", null, null]},"
		"{\"name\": \"u\", \"type\": \"mystery\"}]}",
		&s);
	st_graph *g = st_session_graph(s);
	int errors = g->errors;
	cr_assert_eq(test_run(s, "connect b c.1; connect a u.5; disconnect c.0"), 0);
	cr_assert_eq(test_run(s, "undo 3"), 0);
	char *after = st_model_serialize(g);
	cr_assert_str_eq(after, before);
	cr_assert_eq(g->errors, errors, "the check result is restored too");
	cr_assert_eq(test_run(s, "redo 3; undo 3"), 0);
	char *again = st_model_serialize(g);
	cr_assert_str_eq(again, before);
	free(before);
	free(after);
	free(again);
	st_session_free(s);
}

Test(command, renaming_updates_messages_downstream)
{
	st_session *s;
	char *text = load_serialize("{\"format\": \"strata-model\", \"version\": 1, \"layers\": ["
	                            "{\"name\": \"data\", \"type\": \"input\"},"
	                            "{\"name\": \"b\", \"type\": \"identity\", \"inputs\": [\"data.3\"]}]}",
	                            &s);
	st_graph *g = st_session_graph(s);
	cr_assert_eq(test_run(s, "rename data zz"), 0);
	cr_assert_str_eq(st_graph_find(g, "b")->messages[0].text,
	                 "input 0 is linked to zz.3, but 'zz' has 1 output");
	free(text);
	st_session_free(s);
}

Test(command, dropping_old_history_keeps_unsaved_changes_visible)
{
	char dir[] = "/tmp/strata-hist-XXXXXX";
	cr_assert_not_null(mkdtemp(dir));
	char *save = st_xasprintf("add input a; save %s/m.json", dir);
	st_session *s = test_session(save);
	cr_assert_not(st_session_dirty(s));
	st_buf b;
	st_buf_init(&b);
	for (int i = 1; i <= 10001; i++)
		st_buf_printf(&b, "move a %d 0\n", i);
	cr_assert_eq(test_run(s, b.data), 0);
	cr_assert_eq(test_run(s, "undo 10000"), 0);
	cr_assert_eq(st_graph_find(st_session_graph(s), "a")->x, 1);
	cr_assert(st_session_dirty(s), "the saved state is gone from the history: still dirty");
	char *path = st_xasprintf("%s/m.json", dir);
	unlink(path);
	rmdir(dir);
	free(path);
	free(save);
	st_buf_free(&b);
	st_session_free(s);
}

Test(command, connecting_to_a_layer_without_inputs)
{
	st_session *s = test_session("add input d; add identity i");
	st_diag d;
	cr_assert_eq(run_diag(s, "connect i d", &d), -1);
	cr_assert_str_eq(d.items[0].text, "connect: 'd' (input) has no inputs");
	st_diag_free(&d);
	st_session_free(s);
}

Test(command, duplicate_copies_parameters_and_takes_a_name_and_a_place)
{
	st_session *s = test_session("add input data 0 0; add convolution c 10 20; set c num_output 24;"
	                             "activation c relu; connect data c");
	st_graph *g = st_session_graph(s);
	cr_assert_eq(test_run(s, "duplicate c"), 0);
	cr_assert_eq(g->n_layers, 3);
	st_layer *copy = g->layers[2];
	cr_assert_str_neq(copy->name, "c");
	cr_assert_eq(copy->x, 14);
	cr_assert_eq(copy->y, 22);
	cr_assert_eq(copy->inputs == NULL || copy->inputs[0].layer == NULL, true, "the copy is unlinked");
	cr_assert_str_eq(copy->act.type_name, "relu");
	cr_assert_eq(test_run(s, "duplicate c twin 40 -3"), 0);
	st_layer *twin = st_graph_find(g, "twin");
	cr_assert_not_null(twin);
	cr_assert_eq(twin->x, 40);
	cr_assert_eq(twin->y, -3);
	cr_assert_eq(test_run(s, "duplicate c 7 8"), 0);
	cr_assert_eq(g->layers[g->n_layers - 1]->x, 7);
	cr_assert_eq(test_run(s, "duplicate c twin"), -1, "names stay unique");
	cr_assert_eq(test_run(s, "duplicate c other x 8"), -1);
	cr_assert_eq(test_run(s, "duplicate nowhere"), -1);
	/* One undo takes one copy away. */
	int n = g->n_layers;
	cr_assert_eq(st_session_undo(s), 0);
	cr_assert_eq(g->n_layers, n - 1);
	st_session_free(s);
}

Test(command, set_takes_several_layers_as_one_edit)
{
	st_session *s = test_session("add input data 0 0; add convolution a; add convolution b; add convolution c;"
	                             "connect data a; connect data b; connect data c");
	st_graph *g = st_session_graph(s);
	int depth = st_session_undo_depth(s);
	cr_assert_eq(test_run(s, "set a,b,c num_output 24"), 0);
	cr_assert_eq(st_session_undo_depth(s), depth + 1, "one edit");
	const char *names[] = { "a", "b", "c" };
	for (int i = 0; i < 3; i++) {
		st_layer *l = st_graph_find(g, names[i]);
		int p = st_params_find(l->type->desc->params, l->type->desc->n_params, "num_output");
		cr_assert_eq(l->params.values[p].i, 24, "%s", names[i]);
	}
	/* One bad name or value changes nothing. */
	cr_assert_eq(test_run(s, "set a,nope,c num_output 8"), -1);
	cr_assert_eq(test_run(s, "set a,b num_output -1"), -1);
	st_layer *a = st_graph_find(g, "a");
	int p = st_params_find(a->type->desc->params, a->type->desc->n_params, "num_output");
	cr_assert_eq(a->params.values[p].i, 24);
	cr_assert_eq(st_session_undo(s), 0);
	cr_assert_eq(st_graph_find(g, "c")->params.values[p].i, st_graph_find(g, "b")->params.values[p].i);
	cr_assert_neq(a->params.values[p].i, 24, "one undo takes all three back");
	/* Activations likewise. */
	depth = st_session_undo_depth(s);
	cr_assert_eq(test_run(s, "activation a,b,c leaky_relu alpha=0.2"), 0);
	cr_assert_eq(st_session_undo_depth(s), depth + 1);
	cr_assert_str_eq(st_graph_find(g, "c")->act.type_name, "leaky_relu");
	cr_assert_eq(test_run(s, "activation a,b nosuch"), -1);
	cr_assert_eq(test_run(s, "activation a,b,c none"), 0);
	cr_assert_null(st_graph_find(g, "b")->act.type_name);
	st_session_free(s);
}
