/* Helpers the subcommands share: loading, number formatting, JSON output. */
#include "config.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "st-report.h"

st_registry *
cli_registry_quiet(void)
{
	st_registry *r = st_registry_new();
	/* The user's settings count here as in the editor: plugins disabled
	 * there stay out, extra folders come in. A broken config.json is said
	 * and then ignored. */
	st_config cfg;
	st_diag d;
	st_diag_init(&d);
	if (st_config_load(&cfg, &d) != 0) {
		st_diag_print(&d, stderr);
		fprintf(stderr, "strata: note: the settings above are ignored\n");
	}
	st_diag_free(&d);
	for (int i = 0; i < cfg.n_disabled_plugins; i++)
		st_registry_disable(r, cfg.disabled_plugins[i]);
	st_registry_load_default(r);
	for (int i = 0; i < cfg.n_plugin_paths; i++)
		st_registry_load_dir(r, cfg.plugin_paths[i]);
	st_config_clear(&cfg);
	return r;
}

st_registry *
cli_registry(void)
{
	st_registry *r = cli_registry_quiet();
	if (r->n_types == 0) {
		char *search = st_registry_search_path();
		fprintf(stderr, "strata: note: no plugin is loaded (searched %s); see strata plugins\n",
		        search);
		free(search);
	}
	return r;
}

st_graph *
cli_load_model(const st_registry *r, const char *path)
{
	st_diag d;
	st_diag_init(&d);
	st_graph *g = st_model_load(path, r, &d);
	st_diag_print(&d, stderr);
	st_diag_free(&d);
	return g;
}

void
cli_human_count(double v, char *buf, int size)
{
	static const char *const units[] = { "", " k", " M", " G", " T", " P" };
	int u = 0;
	while (v >= 1000 && u < 5) {
		v /= 1000;
		u++;
	}
	if (u == 0)
		snprintf(buf, (size_t)size, "%.0f", v);
	else
		snprintf(buf, (size_t)size, "%.*f%s", v < 10 ? 2 : v < 100 ? 1 : 0, v, units[u]);
}

void
cli_human_bytes(double v, char *buf, int size)
{
	st_human_bytes(v, buf, size);
}

void
cli_print_json(cJSON *root)
{
	char *text = cJSON_Print(root);
	if (text != NULL) {
		fputs(text, stdout);
		fputc('\n', stdout);
		cJSON_free(text);
	}
	cJSON_Delete(root);
}

int
cli_load_reports(const cli_args *a, int n, st_report *reports)
{
	st_diag d;
	st_diag_init(&d);
	int rc = st_report_load_many((const char *const *)&a->argv[1], n, reports, &d) == 0 ? EXIT_OK : EXIT_USAGE;
	st_diag_print(&d, stderr);
	st_diag_free(&d);
	return rc;
}
