/* libFuzzer target for the model loader: parse, type-check, save, and check
 * that what was saved loads again and saves to the same text. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "st-core.h"

int st_plugin_entry(const st_host_api *api, st_plugin_ctx *ctx);
/* tests/fuzz/xwn-builtin.c: the XWN collection, for its parameter set. */
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
	st_diag d;
	st_diag_init(&d);
	st_graph *g = st_model_parse((const char *)data, size, "fuzz.json", registry(), &d);
	st_diag_free(&d);
	if (g == NULL)
		return 0;
	st_graph_check(g);
	int n;
	free(st_graph_messages(g, &n));
	char *first = st_model_serialize(g);

	/* What Strata writes, Strata must read back, and write the same way. */
	st_diag_init(&d);
	st_graph *again = st_model_parse(first, strlen(first), "saved.json", registry(), &d);
	if (again == NULL) {
		fprintf(stderr, "a saved model does not load again:\n%s\n", first);
		st_diag_print(&d, stderr);
		abort();
	}
	st_diag_free(&d);
	char *second = st_model_serialize(again);
	if (strcmp(first, second) != 0) {
		fprintf(stderr, "saving is not stable:\n--- first\n%s\n--- second\n%s\n", first, second);
		abort();
	}
	/* An incremental check after touching every layer must agree with the full one. */
	st_graph_check(again);
	for (int i = 0; i < again->n_layers; i++)
		st_graph_touch(again, again->layers[i]);
	int errors = again->errors;
	st_graph_check_incremental(again);
	if (again->errors != errors) {
		fprintf(stderr, "incremental check disagrees: %d errors, full check %d\n", again->errors,
		        errors);
		abort();
	}
	free(first);
	free(second);
	st_graph_free(again);
	st_graph_free(g);
	return 0;
}
