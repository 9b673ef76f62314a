/* Unit tests: model files in and out, every load error path, atomic saving. */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers.h"

/* Loads text that must fail; checks the first error's position and text. */
static void
expect_error_len(const char *text, size_t len, int line, int col, const char *message)
{
	st_diag d;
	st_diag_init(&d);
	st_graph *g = st_model_parse(text, len, "m.json", test_registry(), &d);
	cr_assert_null(g, "loading should fail: %s", text);
	cr_assert(d.errors > 0);
	const st_diag_item *e = &d.items[0];
	for (int i = 0; i < d.count; i++) {
		if (d.items[i].severity == ST_SEVERITY_ERROR) {
			e = &d.items[i];
			break;
		}
	}
	cr_assert_str_eq(e->file, "m.json");
	cr_assert_str_eq(e->text, message, "\n got: %s\nwant: %s", e->text, message);
	cr_assert_eq(e->line, line, "line %d, expected %d (%s)", e->line, line, e->text);
	cr_assert_eq(e->col, col, "column %d, expected %d (%s)", e->col, col, e->text);
	st_diag_free(&d);
}

static void
expect_error(const char *text, int line, int col, const char *message)
{
	expect_error_len(text, strlen(text), line, col, message);
}

#define HEAD "{\"format\": \"strata-model\", \"version\": 1,\n"

Test(model, syntax_errors_name_line_and_column)
{
	expect_error("{\"format\": \"strata-model\",\n  \"version\": 1,,\n}", 2, 17, "invalid JSON near '\"version\": 1,,'");
	expect_error("", 1, 1, "the file is empty: expected a JSON object");
	expect_error("{\"format\": \"strata-model\", \"layers\": [", 1, 39,
	             "unexpected end of the text: a string, list or object is not closed");
	expect_error("{\"a\": 1} x", 1, 10, "unexpected text after the end of the JSON value");
	expect_error_len("{\"a\"\0: 1}", 9, 1, 5, "binary data (a NUL byte): this is not a JSON text");
}

Test(model, top_level_errors)
{
	expect_error("[1, 2]", 1, 1, "a model file holds one JSON object with \"format\": \"strata-model\"");
	expect_error("{\"layers\": []}", 1, 1,
	             "not a Strata model: the field \"format\" must be \"strata-model\" (at format)");
	expect_error("{\"format\": \"onnx\"}", 1, 12,
	             "not a Strata model: the field \"format\" must be \"strata-model\" (at format)");
	expect_error("{\"format\": \"strata-model\"}", 1, 1,
	             "the field \"version\" must be the format version, such as 1 or \"1.0\" (at version)");
	expect_error("{\"format\": \"strata-model\", \"version\": \"2.0\", \"layers\": []}", 1, 39,
	             "this model uses format version 2.0, written by a newer Strata; this one reads version 1 (at version)");
	expect_error(HEAD "\"layer\": []}", 2, 1,
	             "unknown field 'layer' in the model (did you mean 'layers'?) (at layer)");
	expect_error(HEAD "\"network\": {}}", 1, 1, "the model has no \"layers\" list (at layers)");
	expect_error(HEAD "\"layers\": {}}", 2, 11, "\"layers\" must be a list of layer objects (at layers)");
	expect_error(HEAD "\"layers\": [], \"layers\": []}", 2, 15, "field 'layers' is given twice (at layers)");
}

Test(model, versions_are_parsed_strictly)
{
	const char *bad[] = { "\"1.4294967296\"", "\"1.\"", "\"x1.0\"", "\"1.0 \"", "1.5", "-1" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char *text = st_xasprintf("{\"format\": \"strata-model\", \"version\": %s, \"layers\": []}",
		                          bad[i]);
		expect_error(text, 1, 39,
		             "the field \"version\" must be the format version, such as 1 or \"1.0\" (at version)");
		free(text);
	}
}

Test(model, any_control_byte_is_white_space_for_positions)
{
	/* cJSON skips every byte up to 0x20; positions must stay right after one. */
	expect_error("{\"format\": \"strata-model\",\f\v \"version\": 1,\n  \"network\": 3, \"layers\": []}", 2,
	             14, "'network' must be an object (at network)");
}

Test(model, network_errors)
{
	expect_error(HEAD "\"network\": {\"tensor_format\": \"fp8\"}, \"layers\": []}", 2, 30,
	             "network: 'tensor_format' must be \"fp32-nchw\", \"fp32-nhwc\", \"fp16-nchw\" or "
	             "\"fp16-nhwc\", got \"fp8\" (at network.tensor_format)");
	expect_error(HEAD "\"network\": {\"nmae\": \"x\"}, \"layers\": []}", 2, 13,
	             "unknown field 'nmae' in network (did you mean 'name'?) (at network.nmae)");
	expect_error(HEAD "\"network\": 3, \"layers\": []}", 2, 12, "'network' must be an object (at network)");
}

Test(model, layer_errors)
{
	expect_error(HEAD "\"layers\": [3]}", 2, 12,
	             "each layer must be an object with a name and a type (at layers[0])");
	expect_error(HEAD "\"layers\": [{\"type\": \"input\"}]}", 2, 12, "layer 0 has no 'name' (at layers[0])");
	expect_error(HEAD "\"layers\": [{\"name\": \"d\"}]}", 2, 12, "layer 'd' has no 'type' (at layers[0])");
	expect_error(HEAD "\"layers\": [\n  {\"name\": \"data\", \"type\": \"input\",\n"
	                  "   \"params\": {\"batch\": -2}}]}",
	             4, 24,
	             "layer 'data': parameter 'batch' must be a positive integer, got -2 (at layers[0].params.batch)");
	expect_error(HEAD "\"layers\": [{\"name\": \"data\", \"type\": \"input\", \"params\": {\"dimz\": [1]}}]}",
	             2, 57,
	             "layer 'data': input has no parameter 'dimz' (did you mean 'dims'?) (at layers[0].params.dimz)");
	expect_error(HEAD "\"layers\": [{\"name\": \"d\", \"type\": \"input\", \"params\": [1]}]}", 2, 53,
	             "layer 'd': 'params' must be an object of name: value pairs (at layers[0].params)");
	expect_error(HEAD "\"layers\": [{\"name\": \"d\", \"type\": \"input\", \"pos\": [1]}]}", 2, 50,
	             "layer 'd': 'pos' must be two integers [x, y] within +-1000000 (at layers[0].pos)");
	expect_error(HEAD "\"layers\": [{\"name\": \"d\", \"type\": \"input\", \"minimized\": 1}]}", 2, 56,
	             "layer 'd': 'minimized' must be true or false (at layers[0].minimized)");
	expect_error(HEAD "\"layers\": [{\"name\": \"d\", \"type\": \"input\", \"colour\": 1}]}", 2, 43,
	             "unknown field 'colour' in layer 'd' (at layers[0].colour)");
	expect_error(HEAD "\"layers\": [{\"name\": \"d\", \"type\": \"input\", \"name\": \"e\"}]}", 2, 43,
	             "layer 'd': field 'name' is given twice (at layers[0].name)");
}

Test(model, link_errors)
{
	expect_error(HEAD "\"layers\": [{\"name\": \"data\", \"type\": \"input\"},\n"
	                  "{\"name\": \"a\", \"type\": \"identity\", \"inputs\": [\"dta.0\"]}]}",
	             3, 46,
	             "layer 'a': input 0 refers to 'dta', which is not a layer of this model (did you mean 'data'?) "
	             "(at layers[1].inputs[0])");
	expect_error(HEAD "\"layers\": [{\"name\": \"data\", \"type\": \"input\"},\n"
	                  "{\"name\": \"a\", \"type\": \"identity\", \"inputs\": [\"data.0\", \"data.0\"]}]}",
	             3, 45, "layer 'a' has 2 inputs, but identity takes 1 (at layers[1].inputs)");
	expect_error(HEAD "\"layers\": [{\"name\": \"data\", \"type\": \"input\"},\n"
	                  "{\"name\": \"a\", \"type\": \"identity\", \"inputs\": [7]}]}",
	             3, 46,
	             "layer 'a': input 0 must be \"layer.output\" (such as \"data.0\") or null (at layers[1].inputs[0])");
	expect_error(HEAD "\"layers\": [{\"name\": \"data\", \"type\": \"input\"},\n"
	                  "{\"name\": \"a\", \"type\": \"identity\", \"inputs\": \"data.0\"}]}",
	             3, 45, "layer 'a': 'inputs' must be a list such as [\"data.0\"] (at layers[1].inputs)");
}

Test(model, activation_errors)
{
	expect_error(HEAD "\"layers\": [{\"name\": \"d\", \"type\": \"identity\", \"activation\": {\"alpha\": 1}}]}",
	             2, 60, "layer 'd': the activation needs a \"type\" string, such as \"relu\" (at layers[0].activation)");
	expect_error(HEAD "\"layers\": [{\"name\": \"d\", \"type\": \"identity\", \"activation\": 5}]}", 2, 60,
	             "layer 'd': 'activation' must be an object such as {\"type\": \"relu\"} (at layers[0].activation)");
}

Test(model, many_errors_are_all_reported)
{
	const char *text = HEAD "\"layers\": [{\"name\": \"a\", \"type\": \"input\", \"params\": {\"batch\": 0}},"
	                        "{\"name\": \"b\", \"type\": \"input\", \"params\": {\"batch\": -1}},"
	                        "{\"name\": \"c\", \"type\": \"input\", \"params\": {\"dtype\": \"f64\"}}]}";
	st_diag d;
	st_diag_init(&d);
	cr_assert_null(st_model_parse(text, strlen(text), "m.json", test_registry(), &d));
	cr_assert_eq(d.errors, 3);
	st_diag_free(&d);
}

static const char canonical[] =
	"{\n"
	"  \"format\": \"strata-model\",\n"
	"  \"version\": 1,\n"
	"  \"network\": {\n"
	"    \"name\": \"tiny\",\n"
	"    \"version\": \"2.1\",\n"
	"    \"description\": \"a \\\"small\\\" model\\nwith two lines\",\n"
	"    \"tensor_format\": \"fp16-nhwc\",\n"
	"    \"weights\": \"tiny-weights\"\n"
	"  },\n"
	"  \"layers\": [\n"
	"    {\n"
	"      \"name\": \"data\",\n"
	"      \"type\": \"input\",\n"
	"      \"params\": {\"dims\": [3, 32, 32], \"batch\": 4},\n"
	"      \"pos\": [2, 1]\n"
	"    },\n"
	"    {\n"
	"      \"name\": \"a\",\n"
	"      \"type\": \"identity\",\n"
	"      \"activation\": {\"type\": \"leaky_relu\", \"alpha\": 0.1},\n"
	"      \"inputs\": [\"data.0\"],\n"
	"      \"pos\": [2, 6],\n"
	"      \"minimized\": true\n"
	"    },\n"
	"    {\n"
	"      \"name\": \"mystery\",\n"
	"      \"type\": \"from_a_missing_plugin\",\n"
	"      \"params\": {\n"
	"        \"z\": {\"deep\": [1, 2]},\n"
	"        \"a\": \"text\"\n"
	"      },\n"
	"      \"inputs\": [\"a.0\", null, \"data.0\"],\n"
	"      \"pos\": [-4, 9]\n"
	"    },\n"
	"    {\"name\": \"out\", \"type\": \"output\", \"inputs\": [\"mystery.2\"], \"pos\": [2, 11]}\n"
	"  ]\n"
	"}\n";

Test(model, canonical_files_round_trip_byte_for_byte)
{
	st_diag d;
	st_diag_init(&d);
	st_graph *g = st_model_parse(canonical, strlen(canonical), "c.json", test_registry(), &d);
	cr_assert_not_null(g, "%s", d.count ? d.items[0].text : "");
	char *again = st_model_serialize(g);
	cr_assert_str_eq(again, canonical);
	free(again);
	st_graph_free(g);
	st_diag_free(&d);
}

Test(model, newer_minor_versions_keep_unknown_fields)
{
	const char *text = "{\"format\": \"strata-model\", \"version\": \"1.4\", \"future\": {\"x\": 1},"
	                   "\"network\": {\"name\": \"n\", \"colour\": \"red\"},"
	                   "\"layers\": [{\"name\": \"data\", \"type\": \"input\", \"params\": {\"later\": 2},"
	                   "\"shading\": \"soft\"}]}";
	st_diag d;
	st_diag_init(&d);
	st_graph *g = st_model_parse(text, strlen(text), "n.json", test_registry(), &d);
	cr_assert_not_null(g);
	cr_assert_eq(d.warnings, 1);
	cr_assert(strstr(d.items[0].text, "written by a newer Strata (format 1.4)") != NULL);
	char *out = st_model_serialize(g);
	cr_assert(strstr(out, "\"version\": \"1.4\"") != NULL, "%s", out);
	cr_assert(strstr(out, "\"future\": {\"x\": 1}") != NULL);
	cr_assert(strstr(out, "\"colour\": \"red\"") != NULL);
	cr_assert(strstr(out, "\"later\": 2") != NULL);
	cr_assert(strstr(out, "\"shading\": \"soft\"") != NULL);
	st_graph_check(g);
	cr_assert_eq(g->warnings, 1, "the unknown parameter is a warning");
	free(out);
	st_graph_free(g);
	st_diag_free(&d);
}

Test(model, layer_positions_and_shorthands)
{
	const char *text = HEAD "\"layers\": [\n  {\"name\": \"data\", \"type\": \"in\"},\n"
	                        "  {\"name\": \"a\", \"type\": \"identity\", \"activation\": \"relu\", \"inputs\": [\"data\"]}]}";
	st_diag d;
	st_diag_init(&d);
	st_graph *g = st_model_parse(text, strlen(text), "p.json", test_registry(), &d);
	cr_assert_not_null(g);
	cr_assert_eq(g->layers[1]->src_line, 4);
	cr_assert_eq(g->layers[1]->src_col, 3);
	cr_assert_str_eq(g->layers[0]->type_name, "input", "aliases are stored as the type's name");
	char *out = st_model_serialize(g);
	cr_assert(strstr(out, "\"inputs\": [\"data.0\"]") != NULL);
	cr_assert(strstr(out, "\"activation\": {\"type\": \"relu\"}") != NULL);
	free(out);
	st_graph_free(g);
	st_diag_free(&d);
}

Test(model, a_failed_save_leaves_the_old_file)
{
	char dir[] = "/tmp/strata-save-XXXXXX";
	cr_assert_not_null(mkdtemp(dir));
	char *path = st_xasprintf("%s/m.strata.json", dir);
	st_graph *g = st_graph_new(test_registry());
	char err[512];
	cr_assert_eq(st_model_save(g, path, err, sizeof err), 0);
	char *before = st_read_file(path, NULL);
	/* Replace the folder's write permission by a file in the way of the temporary:
	 * saving into a path whose folder is a file must fail cleanly. */
	char *blocked = st_xasprintf("%s/m.strata.json/x.json", dir);
	cr_assert_eq(st_model_save(g, blocked, err, sizeof err), -1);
	cr_assert(strstr(err, "cannot create a temporary file") != NULL, "%s", err);
	char *after = st_read_file(path, NULL);
	cr_assert_str_eq(before, after);
	/* No temporary files are left behind. */
	char *cmd = st_xasprintf("test $(ls -A %s | wc -l) -eq 1", dir);
	cr_assert_eq(system(cmd), 0);
	unlink(path);
	rmdir(dir);
	free(cmd);
	free(before);
	free(after);
	free(blocked);
	free(path);
	st_graph_free(g);
}

Test(model, missing_files)
{
	st_diag d;
	st_diag_init(&d);
	cr_assert_null(st_model_load("/nonexistent/model.json", test_registry(), &d));
	cr_assert_str_eq(d.items[0].text, "cannot read the model: No such file or directory");
	st_diag_free(&d);
}
