/* strata import: an ONNX model in, a Strata model and its weights out.
 * Weights are written into a fresh folder beside the target and moved into
 * place only when everything worked, so a failed import leaves the user's
 * files as they were. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "st-onnx.h"
#ifdef ST_HAVE_TUI
#include "st-tui.h"
#endif

/* "dir/name.onnx" -> "name.strata.json"; caller frees. */
static char *
default_model_path(const char *onnx)
{
	const char *base = strrchr(onnx, '/');
	base = base ? base + 1 : onnx;
	size_t n = strlen(base);
	if (n > 5 && strcmp(base + n - 5, ".onnx") == 0)
		n -= 5;
	if (n == 0)
		return st_xstrdup("model.strata.json");
	return st_xasprintf("%.*s.strata.json", (int)n, base);
}

/* "dir/name.strata.json" -> "dir/name-weights"; caller frees. */
static char *
default_weights_path(const char *model)
{
	const char *base = strrchr(model, '/');
	base = base ? base + 1 : model;
	const char *dot = strchr(base, '.');
	size_t stem = dot && dot > base ? (size_t)(dot - model) : strlen(model);
	return st_xasprintf("%.*s-weights", (int)stem, model);
}

/* Removes a folder of plain files (what the importer writes). */
static void
remove_flat_dir(const char *dir)
{
	DIR *d = opendir(dir);
	if (d != NULL) {
		struct dirent *e;
		while ((e = readdir(d)) != NULL) {
			if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
				continue;
			char *p = st_xasprintf("%s/%s", dir, e->d_name);
			unlink(p);
			free(p);
		}
		closedir(d);
	}
	rmdir(dir);
}

static bool
dir_has_files(const char *dir)
{
	DIR *d = opendir(dir);
	if (d == NULL)
		return false;
	struct dirent *e;
	bool any = false;
	while (!any && (e = readdir(d)) != NULL)
		any = strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
	closedir(d);
	return any;
}

/* The weights setting to write: the folder relative to the model's own
 * folder when it lies inside it, else its absolute path. Caller frees. */
static char *
weights_setting(const char *model, const char *weights, bool *outside)
{
	char *mdir = st_xstrdup(model);
	char *slash = strrchr(mdir, '/');
	if (slash != NULL)
		*slash = '\0';
	else
		strcpy(mdir, ".");
	char rm[PATH_MAX], rw[PATH_MAX];
	char *out;
	if (realpath(mdir, rm) != NULL && realpath(weights, rw) != NULL) {
		size_t n = strlen(rm);
		if (strncmp(rw, rm, n) == 0 && rw[n] == '/') {
			*outside = false;
			out = st_xstrdup(rw + n + 1);
		} else {
			*outside = true;
			out = st_xstrdup(rw);
		}
	} else {
		*outside = true;
		out = st_xstrdup(weights);
	}
	free(mdir);
	return out;
}

#ifdef ST_HAVE_TUI
static void
lay_out(st_graph *g)
{
	int *xy = st_layout_graph(g);
	for (int i = 0; i < g->n_layers; i++) {
		g->layers[i]->x = xy[2 * i];
		g->layers[i]->y = xy[2 * i + 1];
	}
	free(xy);
}
#endif

int
cli_cmd_import(const cli_args *a)
{
	const char *onnx = a->argv[0];
	bool force = cli_flag(a, "force"), verbose = cli_flag(a, "verbose");
	char *model = cli_value(a, "output") ? st_xstrdup(cli_value(a, "output")) : default_model_path(onnx);
	char *weights = cli_value(a, "weights-out") ? st_xstrdup(cli_value(a, "weights-out"))
	                                            : default_weights_path(model);
	int64_t default_dim = 1;
	int rc = EXIT_OK;
	char *tmp_weights = NULL;
	st_registry *r = NULL;
	st_onnx_model m = { 0 };
	st_onnx_import imp = { 0 };
	st_diag d;
	st_diag_init(&d);
	if (cli_value(a, "default-dim")) {
		char *end;
		errno = 0;
		long long v = strtoll(cli_value(a, "default-dim"), &end, 10);
		if (errno || *end || v < 1 || v > INT32_MAX) {
			fprintf(stderr, "strata import: --default-dim must be a whole number from 1, not '%s'\n",
			        cli_value(a, "default-dim"));
			rc = EXIT_USAGE;
			goto out;
		}
		default_dim = v;
	}
	if (!force && access(model, F_OK) == 0) {
		fprintf(stderr, "strata import: %s exists; use --force to replace it, or -o to write elsewhere\n", model);
		rc = EXIT_USAGE;
		goto out;
	}
	if (!force && dir_has_files(weights)) {
		fprintf(stderr,
		        "strata import: the weights folder %s already holds files; use --force to replace it, or "
		        "--weights-out to write elsewhere\n",
		        weights);
		rc = EXIT_USAGE;
		goto out;
	}
	char err[1024];
	if (st_onnx_open(onnx, &m, err, sizeof err) != 0) {
		fprintf(stderr, "strata import: %s\n", err);
		rc = EXIT_USAGE;
		goto out;
	}
	tmp_weights = st_xasprintf("%s.importing-%ld", weights, (long)getpid());
	r = cli_registry();
	st_onnx_import_options opt = { .weights_dir = tmp_weights, .default_dim = default_dim };
	int irc = st_onnx_import_model(&m, r, &opt, &imp, &d);
	for (int i = 0; i < d.count; i++) {
		const st_diag_item *it = &d.items[i];
		if (it->severity == ST_SEVERITY_INFO && !verbose)
			continue;
		fprintf(stderr, "%s: %s: %s\n", onnx, st_severity_name(it->severity), it->text);
	}
	if (irc != 0) {
		fprintf(stderr, "strata import: %s was not imported; nothing was written\n", onnx);
		rc = d.errors > 0 ? EXIT_USAGE : EXIT_PROBLEM;
		goto out;
	}
	st_graph *g = imp.graph;
#ifdef ST_HAVE_TUI
	lay_out(g);
#endif
	/* Move the weights into place, then point the model at them. */
	struct stat sb;
	char *old = NULL;
	if (stat(weights, &sb) == 0) {
		old = st_xasprintf("%s.replaced-%ld", weights, (long)getpid());
		if (rename(weights, old) != 0) {
			fprintf(stderr, "strata import: cannot move the old %s aside: %s\n", weights, strerror(errno));
			free(old);
			rc = EXIT_RUNTIME;
			goto out;
		}
	}
	if (rename(tmp_weights, weights) != 0) {
		fprintf(stderr, "strata import: cannot create %s: %s\n", weights, strerror(errno));
		if (old != NULL)
			(void)rename(old, weights);
		free(old);
		rc = EXIT_RUNTIME;
		goto out;
	}
	bool outside;
	char *setting = weights_setting(model, weights, &outside);
	st_value_clear(&g->network.values[ST_NET_WEIGHTS]);
	g->network.values[ST_NET_WEIGHTS].kind = ST_PARAM_STRING;
	g->network.values[ST_NET_WEIGHTS].s = setting;
	g->network.set[ST_NET_WEIGHTS] = true;
	if (st_model_save(g, model, err, sizeof err) != 0) {
		fprintf(stderr, "strata import: %s\n", err);
		/* Put the old weights back; the new ones go. */
		remove_flat_dir(weights);
		if (old != NULL)
			(void)rename(old, weights);
		free(old);
		rc = EXIT_RUNTIME;
		goto out;
	}
	if (old != NULL)
		remove_flat_dir(old);
	free(old);
	printf("imported %s (opset %d): %d layers", onnx, imp.opset, g->n_layers);
	if (imp.n_folded > 0)
		printf(", %d nodes folded", imp.n_folded);
	printf("\nwrote %s and %s/\n", model, weights);
	if (outside)
		printf("note: %s lies outside the model's folder: 'strata run' needs -w %s or --allow-outside-paths\n",
		       weights, weights);
	if (imp.n_placeholders > 0)
		printf("%d operator%s ha%s no Strata layer and %s kept as onnx_operator layers; 'strata check %s' names "
		       "them\n",
		       imp.n_placeholders, imp.n_placeholders == 1 ? "" : "s", imp.n_placeholders == 1 ? "s" : "ve",
		       imp.n_placeholders == 1 ? "is" : "are", model);
	else if (g->errors > 0)
		printf("the model has %d type-check error%s; 'strata check %s' lists them\n", g->errors,
		       g->errors == 1 ? "" : "s", model);
out:
	if (tmp_weights != NULL)
		remove_flat_dir(tmp_weights);
	free(tmp_weights);
	st_onnx_import_free(&imp);
	st_onnx_free(&m);
	if (r != NULL)
		st_registry_free(r);
	st_diag_free(&d);
	free(model);
	free(weights);
	return rc;
}
