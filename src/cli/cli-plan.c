/* A model made ready to run from the options strata run and strata inspect
 * share: loaded and type-checked, compiled for --format, --threads and
 * --backend, bound to --weights (or the model's own folder, or
 * --random-weights) and fed from --input files (NumPy, PNG, JPEG, or one
 * frame of a video) or --random-input. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "st-backend.h"
#include "st-io.h"

int
cli_parse_count(const char *cmd, const char *text, const char *what, long lo, long hi, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(text, &end, 10);
	if (errno || end == text || *end || v < lo || v > hi) {
		fprintf(stderr, "strata %s: %s must be an integer from %ld to %ld, not '%s'\n", cmd, what, lo, hi, text);
		return -1;
	}
	*out = v;
	return 0;
}

void
cli_split_binding(const char *arg, char **name, const char **path)
{
	const char *eq = strchr(arg, '=');
	/* A path may hold '=' too: only a valid identifier before it is a name. */
	if (eq != NULL) {
		char *n = st_xstrndup(arg, (size_t)(eq - arg));
		if (st_is_identifier(n)) {
			*name = n;
			*path = eq + 1;
			return;
		}
		free(n);
	}
	*name = NULL;
	*path = arg;
}

bool
cli_has_suffix(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && strcasecmp(s + a - b, suffix) == 0;
}

/* Frame --frame (default 0) of a video as an image; free with st_image_free. */
static int
read_frame(const cli_args *a, const char *path, st_image *img, char *err, size_t size)
{
	long frame = 0;
	const char *text = cli_value(a, "frame");
	if (text != NULL) {
		char *end;
		errno = 0;
		frame = strtol(text, &end, 10);
		if (*text == '\0' || *end != '\0' || errno || frame < 0) {
			snprintf(err, size, "--frame takes a frame number from 0, not '%s'", text);
			return -1;
		}
	}
	st_video *v = st_video_open(path, err, size);
	if (v == NULL)
		return -1;
	char why[384];
	int rc = st_video_seek(v, frame, img, why, sizeof why);
	if (rc == 1)
		snprintf(err, size, "%s: the video ends before frame %ld (it has %lld)", path, frame,
		         (long long)st_video_position(v) + 1);
	else if (rc != 0)
		snprintf(err, size, "%s: %s", path, why);
	st_video_close(v);
	return rc == 0 ? 0 : -1;
}

/* Reads one input file into a tensor for input i; caller frees t->data. */
static int
read_input(const cli_args *a, st_plan *plan, const st_graph *g, int i, const char *path, st_tensor *t,
           char *err, size_t size)
{
	const st_shape *want = st_plan_input_shape(plan, i);
	memset(t, 0, sizeof *t);
	st_input_kind kind = st_input_kind_of(path);
	if (kind == ST_INPUT_NPY)
		return st_input_from_npy(path, want, t, err, size);
	/* Otherwise an image, scaled as the input layer says. */
	const st_layer *l = st_graph_find(g, st_plan_input_name(plan, i));
	double scale;
	const double *mean, *std;
	int n_mean, n_std;
	if (want->rank != 4 || st_input_image_params(l, &scale, &mean, &n_mean, &std, &n_std) != 0) {
		snprintf(err, size, "%s: input '%s' is not an N x C x H x W image input; give a .npy file", path,
		         st_plan_input_name(plan, i));
		return -1;
	}
	st_image img;
	if (kind == ST_INPUT_VIDEO ? read_frame(a, path, &img, err, size) != 0 : st_image_read(path, &img, err, size) != 0)
		return -1;
	int rc = st_input_from_image(l, want, &img, t, err, size);
	st_image_free(&img);
	return rc;
}

int
cli_weights_dir(const cli_args *a, const char *cmd, const char *model, const st_graph *g, char **dir)
{
	*dir = NULL;
	if (cli_value(a, "weights")) {
		*dir = st_xstrdup(cli_value(a, "weights"));
	} else if (g->network.values[ST_NET_WEIGHTS].s[0] != '\0') {
		/* The model's own setting stays inside the model's folder unless
		 * the user allows otherwise; --weights is the user's and is taken
		 * as given. */
		char why[512];
		*dir = st_model_path(model, g->network.values[ST_NET_WEIGHTS].s, cli_flag(a, "allow-outside-paths"),
		                     why, sizeof why);
		if (*dir == NULL) {
			fprintf(stderr,
			        "strata %s: %s: the weights folder %s; give one with --weights DIR, or allow it with "
			        "--allow-outside-paths\n",
			        cmd, model, why);
			return EXIT_USAGE;
		}
	}
	return EXIT_OK;
}

int
cli_plan_prepare(const cli_args *a, const char *cmd, bool keep_outputs, volatile sig_atomic_t *cancel, cli_plan *cp)
{
	return cli_plan_prepare_model(a, cmd, a->argv[0], keep_outputs, cli_flag(a, "random-input"), cancel, cp);
}

int
cli_plan_prepare_model(const cli_args *a, const char *cmd, const char *path, bool keep_outputs, bool random_inputs,
                       volatile sig_atomic_t *cancel, cli_plan *cp)
{
	memset(cp, 0, sizeof *cp);
	long threads = 0;
	if (cli_value(a, "threads") && cli_parse_count(cmd, cli_value(a, "threads"), "--threads", 1, 256, &threads) != 0)
		return EXIT_USAGE;
	int format = -1;
	if (cli_value(a, "format")) {
		for (int f = 0; f < 4; f++) {
			if (strcmp(cli_value(a, "format"), st_tensor_format_name((st_tensor_format)f)) == 0)
				format = f;
		}
		if (format < 0) {
			fprintf(stderr, "strata %s: --format takes fp32-nchw, fp32-nhwc, fp16-nchw or fp16-nhwc, not '%s'\n",
			        cmd, cli_value(a, "format"));
			return EXIT_USAGE;
		}
	}
	const char *backend = cli_value(a, "backend") ? cli_value(a, "backend") : "cpu";
	/* cpu, cuda, or the name of another backend module that loads. */
	char why[1024];
	if (strcmp(backend, "cpu") != 0 && strcmp(backend, "cuda") != 0 &&
	    (strchr(backend, '/') != NULL || st_backend_load(backend, why, sizeof why) == NULL)) {
		fprintf(stderr, "strata %s: --backend takes cpu or cuda, not '%s'\n", cmd, backend);
		return EXIT_USAGE;
	}
	uint64_t weight_seed = 0, input_seed = 0;
	bool random_weights = cli_flag(a, "random-weights");
	if (random_weights && cli_value(a, "weights")) {
		fprintf(stderr, "strata %s: give --weights or --random-weights, not both\n", cmd);
		return EXIT_USAGE;
	}
	if (cli_value(a, "seed")) {
		long v;
		if (cli_parse_count(cmd, cli_value(a, "seed"), "--seed", 0, 2147483647L, &v) != 0)
			return EXIT_USAGE;
		weight_seed = input_seed = (uint64_t)v;
	}

	st_registry *r = cp->registry = cli_registry();
	/* The backend's own plugins (std-cuda.so) load only when it can run. */
	if (strcmp(backend, "cpu") != 0 && st_backend_ready(backend, NULL, why, sizeof why) == 0)
		st_registry_load_backend(r, backend);
	st_graph *g = cp->graph = cli_load_model(r, path);
	if (g == NULL)
		return EXIT_USAGE;
	st_graph_check(g);
	int rc = EXIT_OK;
	st_plan *plan = NULL;
	if (g->errors > 0) {
		fprintf(stderr, "strata %s: %s has %d type error%s; strata check %s lists them\n", cmd, path, g->errors,
		        g->errors == 1 ? "" : "s", path);
		rc = EXIT_PROBLEM;
		goto out;
	}
	st_diag d;
	st_diag_init(&d);
	st_plan_options opt = { .format = format, .threads = (int)threads, .backend = backend, .cancel = cancel,
		                .keep_outputs = keep_outputs, .allow_tf32 = cli_flag(a, "allow-tf32"),
		                .measure_algorithms = cli_flag(a, "measure-algorithms") };
	plan = cp->plan = st_plan_compile(g, &opt, &d);
	st_diag_print(&d, stderr);
	st_diag_free(&d);
	if (plan == NULL) {
		rc = EXIT_RUNTIME;
		goto out;
	}
	/* Weights: the folder given, the model's own, or random. */
	st_diag_init(&d);
	int bound;
	if (random_weights) {
		bound = st_plan_bind_random_weights(plan, weight_seed, &d);
	} else {
		char *dir;
		if ((rc = cli_weights_dir(a, cmd, path, g, &dir)) != EXIT_OK) {
			st_diag_free(&d);
			goto out;
		}
		bound = st_plan_bind_weights(plan, dir, &d);
		free(dir);
	}
	st_diag_print(&d, stderr);
	st_diag_free(&d);
	if (bound != 0) {
		rc = EXIT_USAGE;
		goto out;
	}

	/* Inputs: named files, then random data where asked. */
	int n_inputs = st_plan_input_count(plan);
	st_tensor *fed = cp->fed = st_xcalloc((size_t)(n_inputs ? n_inputs : 1), sizeof *fed);
	bool *given = st_xcalloc((size_t)(n_inputs ? n_inputs : 1), sizeof *given);
	const char **bindings;
	int n_bindings = cli_values(a, "input", &bindings);
	cp->n_fed = n_inputs;
	for (int k = 0; k < n_bindings && rc == EXIT_OK; k++) {
		char *name;
		const char *file;
		cli_split_binding(bindings[k], &name, &file);
		int i = name ? st_plan_input_index(plan, name) : (n_inputs == 1 ? 0 : -1);
		if (i < 0) {
			if (name)
				fprintf(stderr, "strata %s: the model has no input layer '%s'\n", cmd, name);
			else
				fprintf(stderr, "strata %s: the model has %d inputs: name one, as in --input %s=%s\n", cmd,
				        n_inputs, n_inputs ? st_plan_input_name(plan, 0) : "NAME", file);
			rc = EXIT_USAGE;
		} else {
			char err[512];
			free(fed[i].data);
			if (read_input(a, plan, g, i, file, &fed[i], err, sizeof err) != 0) {
				fprintf(stderr, "strata %s: %s\n", cmd, err);
				rc = EXIT_USAGE;
			}
			given[i] = true;
		}
		free(name);
	}
	for (int i = 0; i < n_inputs && rc == EXIT_OK; i++) {
		if (given[i])
			continue;
		if (!random_inputs) {
			fprintf(stderr,
			        "strata %s: input '%s' needs data: --input %s=FILE (.npy, .png, .jpg or a video), or "
			        "--random-input\n",
			        cmd, st_plan_input_name(plan, i), st_plan_input_name(plan, i));
			rc = EXIT_USAGE;
			break;
		}
		st_tensor_random(st_plan_input_shape(plan, i), input_seed + 1000003u * (uint64_t)(i + 1), &fed[i]);
	}
	free(given);
	for (int i = 0; i < n_inputs && rc == EXIT_OK; i++) {
		st_diag_init(&d);
		if (st_plan_set_input(plan, i, &fed[i], &d) != 0)
			rc = EXIT_USAGE;
		st_diag_print(&d, stderr);
		st_diag_free(&d);
	}
out:
	return rc;

}

void
cli_plan_free(cli_plan *cp)
{
	for (int i = 0; i < cp->n_fed; i++)
		free(cp->fed[i].data);
	free(cp->fed);
	st_plan_free(cp->plan);
	st_graph_free(cp->graph);
	st_registry_free(cp->registry);
	memset(cp, 0, sizeof *cp);
}
