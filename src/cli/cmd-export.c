/* strata export: a model written out for other tools (ONNX). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "st-export.h"

static int
parse_number(const char *text, const char *what, long lo, long hi, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(text, &end, 10);
	if (errno || end == text || *end || v < lo || v > hi) {
		fprintf(stderr, "strata export: %s must be an integer from %ld to %ld, not '%s'\n", what, lo, hi, text);
		return -1;
	}
	*out = v;
	return 0;
}

/* True when both paths name the same existing file. */
static bool
same_file(const char *a, const char *b)
{
	struct stat x, y;
	return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

int
cli_cmd_export(const cli_args *a)
{
	const char *format = a->argv[0], *path = a->argv[1], *output = cli_value(a, "output");
	if (strcmp(format, "onnx") != 0) {
		fprintf(stderr, "strata export: unknown format '%s'; the formats are: onnx\n", format);
		return EXIT_USAGE;
	}
	if (output == NULL) {
		fprintf(stderr, "strata export: say where to write the ONNX file with -o FILE\n");
		return EXIT_USAGE;
	}
	if (strcmp(output, path) == 0 || same_file(output, path)) {
		fprintf(stderr, "strata export: -o %s is the model itself; write the ONNX file elsewhere\n", output);
		return EXIT_USAGE;
	}
	st_export_onnx_options opt = { .opset = ST_EXPORT_ONNX_DEFAULT_OPSET, .file = path };
	long v;
	if (cli_value(a, "opset")) {
		if (parse_number(cli_value(a, "opset"), "--opset", 0, 1000000, &v) != 0)
			return EXIT_USAGE;
		if (st_export_onnx_ir_version((int)v) < 0) {
			fprintf(stderr,
			        "strata export: opset %ld is not supported: give --opset %d to %d (default %d); "
			        "older opsets lack the operators' current forms (Softmax's axis, Split's sizes)\n",
			        v, ST_EXPORT_ONNX_MIN_OPSET, ST_EXPORT_ONNX_MAX_OPSET, ST_EXPORT_ONNX_DEFAULT_OPSET);
			return EXIT_USAGE;
		}
		opt.opset = (int)v;
	}
	if (cli_value(a, "seed")) {
		if (parse_number(cli_value(a, "seed"), "--seed", 0, 2147483647L, &v) != 0)
			return EXIT_USAGE;
		opt.seed = (uint64_t)v;
	}
	opt.random_weights = cli_flag(a, "random-weights");
	opt.fp16 = cli_flag(a, "fp16");
	opt.no_tensor_sizes = cli_flag(a, "no-tensor-sizes");
	opt.allow_placeholders = cli_flag(a, "allow-placeholders");
	opt.xwn_source_weights = cli_flag(a, "xwn-source-weights");
	if (opt.random_weights && cli_value(a, "weights")) {
		fprintf(stderr, "strata export: give --weights or --random-weights, not both\n");
		return EXIT_USAGE;
	}

	st_registry *r = cli_registry();
	st_graph *g = cli_load_model(r, path);
	if (g == NULL) {
		st_registry_free(r);
		return EXIT_USAGE;
	}
	int rc = EXIT_OK;
	char *dir = NULL;
	if (!opt.random_weights && (rc = cli_weights_dir(a, "export", path, g, &dir)) != EXIT_OK)
		goto out;
	st_diag d;
	st_diag_init(&d);
	int status = st_export_onnx_file(g, dir, &opt, output, &d);
	st_diag_print(&d, stderr);
	st_diag_free(&d);
	if (status == ST_EXPORT_REFUSED) {
		fprintf(stderr, "strata export: %s was not exported; nothing was written\n", path);
		rc = EXIT_PROBLEM;
	} else if (status == ST_EXPORT_UNREADABLE) {
		fprintf(stderr, "strata export: %s was not exported; nothing was written\n", path);
		rc = EXIT_USAGE;
	}
out:
	free(dir);
	st_graph_free(g);
	st_registry_free(r);
	return rc;
}
