/* libFuzzer target for the ONNX importer: whatever the protobuf reader
 * accepts is imported (no weights written), and an imported graph must
 * save to a model that loads again with the same layers. The std and XWN
 * collections are built in, so that XWN metadata entries are restored. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "st-onnx.h"

int st_plugin_entry(const st_host_api *api, st_plugin_ctx *ctx);
int xwn_builtin_entry(const st_host_api *api, st_plugin_ctx *ctx);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static st_registry *
registry(void)
{
	static st_registry *r;
	if (r == NULL) {
		r = st_registry_new();
		st_registry_load_builtin(r, "(built in)", st_plugin_entry);
		st_registry_load_builtin(r, "(built in xwn)", xwn_builtin_entry);
	}
	return r;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	st_onnx_model m;
	char err[1024];
	if (st_onnx_parse(data, size, &m, err, sizeof err) != 0) {
		st_onnx_free(&m);
		return 0;
	}
	st_diag d;
	st_diag_init(&d);
	st_onnx_import imp;
	st_onnx_import_options opt = { .default_dim = 2 };
	int rc = st_onnx_import_model(&m, registry(), &opt, &imp, &d);
	if (rc != 0 && d.errors == 0) {
		fprintf(stderr, "an import failed without an error message\n");
		abort();
	}
	if (rc == 0) {
		char *text = st_model_serialize(imp.graph);
		st_diag d2;
		st_diag_init(&d2);
		st_graph *again = st_model_parse(text, strlen(text), "imported.json", registry(), &d2);
		if (again == NULL || again->n_layers != imp.graph->n_layers) {
			fprintf(stderr, "an imported model does not load again:\n%s\n", text);
			st_diag_print(&d2, stderr);
			abort();
		}
		st_graph_free(again);
		st_diag_free(&d2);
		free(text);
	}
	st_onnx_import_free(&imp);
	st_diag_free(&d);
	st_onnx_free(&m);
	return 0;
}
