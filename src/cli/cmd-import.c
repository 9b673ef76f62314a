/* strata import: an ONNX model in, a Strata model and its weights out. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "st-onnx.h"
#ifdef ST_HAVE_TUI
#include "st-tui.h"
#endif

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
	st_onnx_file_options fo = { .default_dim = 1, .force = cli_flag(a, "force") };
#ifdef ST_HAVE_TUI
	fo.place = lay_out;
#endif
	if (cli_value(a, "default-dim")) {
		char *end;
		errno = 0;
		long long v = strtoll(cli_value(a, "default-dim"), &end, 10);
		if (errno || *end || v < 1 || v > INT32_MAX) {
			fprintf(stderr, "strata import: --default-dim must be a whole number from 1, not '%s'\n",
			        cli_value(a, "default-dim"));
			return EXIT_USAGE;
		}
		fo.default_dim = v;
	}
	/* --dim NAME=SIZE, for each named dimension the user sizes. */
	const char **dims;
	int n_dims = cli_values(a, "dim", &dims);
	char **names = st_xcalloc((size_t)(n_dims ? n_dims : 1), sizeof *names);
	int64_t *sizes = st_xcalloc((size_t)(n_dims ? n_dims : 1), sizeof *sizes);
	for (int i = 0; i < n_dims; i++) {
		const char *eq = strchr(dims[i], '=');
		char *end = NULL;
		long long v = eq ? strtoll(eq + 1, &end, 10) : 0;
		if (eq == NULL || eq == dims[i] || eq[1] == '\0' || *end != '\0' || v < 1 || v > INT32_MAX) {
			fprintf(stderr, "strata import: --dim takes NAME=SIZE with a size from 1, such as N=1, not '%s'\n",
			        dims[i]);
			for (int j = 0; j < i; j++)
				free(names[j]);
			free(names);
			free(sizes);
			return EXIT_USAGE;
		}
		names[i] = st_xstrndup(dims[i], (size_t)(eq - dims[i]));
		sizes[i] = v;
	}
	/* --shape NAME=1x3x640x640, a whole input's shape. */
	const char **shape_args;
	int n_shapes = cli_values(a, "shape", &shape_args);
	char **shape_names = st_xcalloc((size_t)(n_shapes ? n_shapes : 1), sizeof *shape_names);
	st_shape *shapes = st_xcalloc((size_t)(n_shapes ? n_shapes : 1), sizeof *shapes);
	for (int i = 0; i < n_shapes; i++) {
		const char *eq = strrchr(shape_args[i], '=');
		const char *p = eq ? eq + 1 : "";
		int rank = 0;
		bool ok = eq != NULL && eq != shape_args[i] && *p != '\0';
		while (ok && *p) {
			char *end;
			long long v = strtoll(p, &end, 10);
			if (end == p || v < 1 || v > INT32_MAX || rank == ST_MAX_RANK || (*end != 'x' && *end != '\0') ||
			    (*end == 'x' && end[1] == '\0')) {
				ok = false;
				break;
			}
			shapes[i].dims[rank++] = v;
			p = *end ? end + 1 : end;
		}
		if (!ok) {
			fprintf(stderr,
			        "strata import: --shape takes NAME=DIMS with sizes from 1, such as x=1x3x224x224, not '%s'\n",
			        shape_args[i]);
			for (int j = 0; j < i; j++)
				free(shape_names[j]);
			free(shape_names);
			free(shapes);
			for (int j = 0; j < n_dims; j++)
				free(names[j]);
			free(names);
			free(sizes);
			return EXIT_USAGE;
		}
		shapes[i].rank = rank;
		shape_names[i] = st_xstrndup(shape_args[i], (size_t)(eq - shape_args[i]));
	}
	fo.n_shapes = n_shapes;
	fo.shape_names = (const char *const *)shape_names;
	fo.shapes = shapes;
	fo.n_dims = n_dims;
	fo.dim_names = (const char *const *)names;
	fo.dim_values = sizes;
	char *model = cli_value(a, "output") ? st_xstrdup(cli_value(a, "output")) : st_onnx_default_model_path(onnx);
	char *weights = cli_value(a, "weights-out") ? st_xstrdup(cli_value(a, "weights-out"))
	                                            : st_onnx_default_weights_path(model);
	st_registry *r = cli_registry();
	st_diag d;
	st_diag_init(&d);
	st_onnx_import_summary sum;
	int irc = st_onnx_import_file(onnx, model, weights, r, &fo, &sum, &d);
	bool verbose = cli_flag(a, "verbose");
	for (int i = 0; i < d.count; i++) {
		const st_diag_item *it = &d.items[i];
		if (it->severity == ST_SEVERITY_INFO && !verbose)
			continue;
		fprintf(stderr, "%s: %s: %s\n", onnx, st_severity_name(it->severity), it->text);
	}
	int rc = EXIT_OK;
	if (irc != 0) {
		fprintf(stderr, "strata import: %s was not imported; nothing was written\n", onnx);
		rc = irc == -2 ? EXIT_USAGE : EXIT_PROBLEM;
	} else {
		printf("imported %s (opset %d): %d layers", onnx, sum.opset, sum.n_layers);
		if (sum.n_folded > 0)
			printf(", %d nodes folded", sum.n_folded);
		printf("\nwrote %s and %s/\n", model, weights);
		if (sum.n_xwn > 0) {
			printf("%d XWN layer%s restored from the file's metadata", sum.n_xwn, sum.n_xwn == 1 ? "" : "s");
			if (sum.n_xwn_transformed > 0)
				printf("; %d with use_transform and use_pruning off, as the file holds %s weights already "
				       "transformed (export with --xwn-source-weights to keep the full-precision ones)",
				       sum.n_xwn_transformed, sum.n_xwn_transformed == 1 ? "its" : "their");
			printf("\n");
		}
		if (sum.weights_outside)
			printf("note: %s lies outside the model's folder: 'strata run' needs -w %s or "
			       "--allow-outside-paths\n",
			       weights, weights);
		if (sum.n_placeholders > 0)
			printf("%d operator%s ha%s no Strata layer and %s kept as onnx_operator layer%s; 'strata check %s' "
			       "names them\n",
			       sum.n_placeholders, sum.n_placeholders == 1 ? "" : "s", sum.n_placeholders == 1 ? "s" : "ve",
			       sum.n_placeholders == 1 ? "is" : "are", sum.n_placeholders == 1 ? "" : "s", model);
		else if (sum.errors > 0)
			printf("the model has %d type-check error%s; 'strata check %s' lists them\n", sum.errors,
			       sum.errors == 1 ? "" : "s", model);
	}
	st_diag_free(&d);
	st_registry_free(r);
	for (int i = 0; i < n_dims; i++)
		free(names[i]);
	free(names);
	free(sizes);
	for (int i = 0; i < n_shapes; i++)
		free(shape_names[i]);
	free(shape_names);
	free(shapes);
	free(model);
	free(weights);
	return rc;
}
