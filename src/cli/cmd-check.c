/* strata check: type-check a model and print what the checker found. */
#include "config.h"

#include <cjson/cJSON.h>
#include <stdlib.h>

#include "cli.h"

int
cli_cmd_check(const cli_args *a)
{
	const char *path = a->argv[0];
	bool json = cli_flag(a, "json"), quiet = cli_flag(a, "quiet");
	st_registry *r = cli_registry();
	st_diag d;
	st_diag_init(&d);
	st_graph *g = st_model_load(path, r, &d);
	if (g == NULL) {
		if (json) {
			cJSON *root = cJSON_CreateObject();
			cJSON_AddStringToObject(root, "file", path);
			cJSON_AddBoolToObject(root, "ok", 0);
			cJSON_AddBoolToObject(root, "loaded", 0);
			cJSON *errs = cJSON_AddArrayToObject(root, "load_errors");
			for (int i = 0; i < d.count; i++) {
				cJSON *e = cJSON_CreateObject();
				cJSON_AddStringToObject(e, "severity", st_severity_name(d.items[i].severity));
				cJSON_AddNumberToObject(e, "line", d.items[i].line);
				cJSON_AddNumberToObject(e, "column", d.items[i].col);
				cJSON_AddStringToObject(e, "text", d.items[i].text);
				cJSON_AddItemToArray(errs, e);
			}
			cli_print_json(root);
		} else if (!quiet) {
			st_diag_print(&d, stderr);
		}
		st_diag_free(&d);
		st_registry_free(r);
		return EXIT_USAGE;
	}
	if (!json && !quiet)
		st_diag_print(&d, stderr); /* warnings from loading */
	st_diag_free(&d);
	st_graph_check(g);
	int n;
	st_graph_message *m = st_graph_messages(g, &n);
	if (json) {
		cJSON *root = cJSON_CreateObject();
		cJSON_AddStringToObject(root, "file", path);
		cJSON_AddBoolToObject(root, "ok", g->errors == 0);
		cJSON_AddBoolToObject(root, "loaded", 1);
		cJSON_AddNumberToObject(root, "layers", g->n_layers);
		cJSON_AddNumberToObject(root, "errors", g->errors);
		cJSON_AddNumberToObject(root, "warnings", g->warnings);
		cJSON *list = cJSON_AddArrayToObject(root, "messages");
		for (int i = 0; i < n; i++) {
			cJSON *e = cJSON_CreateObject();
			cJSON_AddStringToObject(e, "layer", m[i].layer->name);
			cJSON_AddStringToObject(e, "severity", st_severity_name(m[i].severity));
			cJSON_AddStringToObject(e, "text", m[i].text);
			cJSON_AddNumberToObject(e, "line", m[i].layer->src_line);
			cJSON_AddNumberToObject(e, "column", m[i].layer->src_col);
			cJSON_AddItemToArray(list, e);
		}
		cli_print_json(root);
	} else if (!quiet) {
		for (int i = 0; i < n; i++) {
			const st_layer *l = m[i].layer;
			if (l->src_line > 0)
				printf("%s:%d:%d: ", path, l->src_line, l->src_col);
			else
				printf("%s: ", path);
			printf("%s: layer '%s': %s\n", st_severity_name(m[i].severity), l->name, m[i].text);
		}
		printf("%s: %d layer%s, %d error%s, %d warning%s\n", path, g->n_layers,
		       g->n_layers == 1 ? "" : "s", g->errors, g->errors == 1 ? "" : "s", g->warnings,
		       g->warnings == 1 ? "" : "s");
	}
	free(m);
	int rc = g->errors > 0 ? EXIT_PROBLEM : EXIT_OK;
	st_graph_free(g);
	st_registry_free(r);
	return rc;
}
