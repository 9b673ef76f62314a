/* strata plugins: what loaded, what was refused and why. */
#include "config.h"

#include <cjson/cJSON.h>
#include <stdlib.h>

#include "cli.h"

int
cli_cmd_plugins(const cli_args *a)
{
	st_registry *r = cli_registry_quiet(); /* no note when nothing loads: the list says so */
	char *path = st_registry_search_path();
	if (cli_flag(a, "json")) {
		cJSON *root = cJSON_CreateObject();
		cJSON_AddStringToObject(root, "search_path", path);
		cJSON *list = cJSON_AddArrayToObject(root, "plugins");
		for (int i = 0; i < r->n_plugins; i++) {
			const st_plugin *p = r->plugins[i];
			cJSON *o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "path", p->path);
			if (p->name)
				cJSON_AddStringToObject(o, "name", p->name);
			if (p->version)
				cJSON_AddStringToObject(o, "version", p->version);
			if (p->author)
				cJSON_AddStringToObject(o, "author", p->author);
			if (p->description)
				cJSON_AddStringToObject(o, "description", p->description);
			cJSON_AddBoolToObject(o, "loaded", p->loaded);
			if (p->refusal)
				cJSON_AddStringToObject(o, "refused", p->refusal);
			cJSON_AddNumberToObject(o, "layer_types", p->n_layers);
			cJSON_AddNumberToObject(o, "activations", p->n_activations);
			cJSON *notes = cJSON_AddArrayToObject(o, "notes");
			for (int k = 0; k < p->n_notes; k++)
				cJSON_AddItemToArray(notes, cJSON_CreateString(p->notes[k]));
			cJSON_AddItemToArray(list, o);
		}
		cJSON *deferred = cJSON_AddArrayToObject(root, "deferred");
		for (int i = 0; i < r->n_deferred; i++) {
			cJSON *o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "path", r->deferred[i]);
			cJSON_AddStringToObject(o, "backend", st_registry_deferred_backend(r->deferred[i]));
			cJSON_AddItemToArray(deferred, o);
		}
		cli_print_json(root);
	} else {
		printf("search path: %s\n", path);
		if (r->n_plugins == 0)
			printf("no plugins found\n");
		for (int i = 0; i < r->n_plugins; i++) {
			const st_plugin *p = r->plugins[i];
			if (p->loaded) {
				printf("\n%s %s  (%s)\n  %s\n  by %s\n  %d layer type%s, %d activation%s\n", p->name,
				       p->version, p->path, p->description, p->author, p->n_layers,
				       p->n_layers == 1 ? "" : "s", p->n_activations, p->n_activations == 1 ? "" : "s");
			} else {
				printf("\nrefused: %s\n  %s\n", p->path, p->refusal ? p->refusal : "unknown reason");
			}
			for (int k = 0; k < p->n_notes; k++)
				printf("  note: %s\n", p->notes[k]);
		}
		for (int i = 0; i < r->n_deferred; i++)
			printf("\nnot loaded until a plan runs on the %s backend: %s\n",
			       st_registry_deferred_backend(r->deferred[i]), r->deferred[i]);
	}
	free(path);
	st_registry_free(r);
	return EXIT_OK;
}
