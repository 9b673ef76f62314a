/* strata new: write an empty model. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* A network name from a file name: "models/My Net.strata.json" -> "My_Net". */
static char *
name_from_path(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	char *name = st_xstrdup(base);
	char *dot = strchr(name, '.');
	if (dot != NULL)
		*dot = '\0';
	for (char *p = name; *p; p++) {
		if (!isalnum((unsigned char)*p) && *p != '_')
			*p = '_';
	}
	if (*name == '\0') {
		free(name);
		name = st_xstrdup("untitled");
	}
	return name;
}

int
cli_cmd_new(const cli_args *a)
{
	const char *path = a->argv[0];
	if (!cli_flag(a, "force") && access(path, F_OK) == 0) {
		fprintf(stderr, "strata new: %s exists; use --force to replace it\n", path);
		return EXIT_USAGE;
	}
	st_registry *r = st_registry_new(); /* an empty model needs no layer types */
	st_graph *g = st_graph_new(r);
	char *name = cli_value(a, "name") ? st_xstrdup(cli_value(a, "name")) : name_from_path(path);
	st_value_clear(&g->network.values[ST_NET_NAME]);
	g->network.values[ST_NET_NAME].kind = ST_PARAM_STRING;
	g->network.values[ST_NET_NAME].s = name;
	g->network.set[ST_NET_NAME] = true;
	char err[512];
	int rc = EXIT_OK;
	if (st_model_save(g, path, err, sizeof err) != 0) {
		fprintf(stderr, "strata new: %s\n", err);
		rc = EXIT_RUNTIME;
	} else {
		printf("created %s\n", path);
	}
	st_graph_free(g);
	st_registry_free(r);
	return rc;
}
