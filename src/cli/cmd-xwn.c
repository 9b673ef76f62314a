/* strata xwn: the XWN collection's tools. 'compare' runs a model as it is
 * and again with the XWN transform and pruning off, and shows per XWN layer
 * what the transform does and how far its output moves; 'export-weights'
 * writes the weights as the layers run with them, a weights folder for the
 * same model with XWN off (docs/xwn.md). */
#include "config.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <langinfo.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "st-engine.h"
#include "st-io.h"
#include "st-report.h"

#define MANIFEST "xwn-settings.json"

static volatile sig_atomic_t interrupted;

static void
on_interrupt(int sig)
{
	(void)sig;
	interrupted = 1;
}

/* Options that belong to one subcommand only. */
static const struct {
	const char *option, *subcommand;
} only_for[] = {
	{ "input", "compare" },           { "threads", "compare" },        { "ascii", "compare" },
	{ "output", "export-weights" },   { "force", "export-weights" },
};

/* Whether the terminal's character set draws the sparkline's blocks. */
static bool
utf8_locale(void)
{
	setlocale(LC_CTYPE, "");
	const char *set = nl_langinfo(CODESET);
	return set != NULL && (strcmp(set, "UTF-8") == 0 || strcmp(set, "utf8") == 0);
}

static int
count_xwn_layers(const st_graph *g)
{
	int n = 0;
	for (int i = 0; i < g->n_layers; i++)
		n += st_xwn_layer(g->layers[i]);
	return n;
}

static int
no_xwn_layers(const char *sub, const char *model)
{
	fprintf(stderr,
	        "strata xwn %s: %s has no XWN layers (layers whose type has use_transform, bit, max_scale, "
	        "use_pruning and prun_weight, such as xwn_convolution): nothing to %s\n",
	        sub, model, strcmp(sub, "compare") == 0 ? "compare" : "export");
	return EXIT_PROBLEM;
}

/* --seed, checked (0 when absent). */
static int
seed_of(const cli_args *a, const char *cmd, uint64_t *seed)
{
	long v = 0;
	if (cli_value(a, "seed") && cli_parse_count(cmd, cli_value(a, "seed"), "--seed", 0, 2147483647L, &v) != 0)
		return -1;
	*seed = (uint64_t)v;
	return 0;
}

/* Binds the weights the options name: --random-weights, --weights or the
 * model's own folder. Returns EXIT_OK or the status to end with. */
static int
bind_weights(const cli_args *a, const char *cmd, const char *model, const st_graph *g, st_plan *plan)
{
	uint64_t seed;
	if (seed_of(a, cmd, &seed) != 0)
		return EXIT_USAGE;
	st_diag d;
	st_diag_init(&d);
	int bound;
	if (cli_flag(a, "random-weights")) {
		bound = st_plan_bind_random_weights(plan, seed, &d);
	} else {
		char *dir;
		int rc = cli_weights_dir(a, cmd, model, g, &dir);
		if (rc != EXIT_OK) {
			st_diag_free(&d);
			return rc;
		}
		bound = st_plan_bind_weights(plan, dir, &d);
		free(dir);
	}
	st_diag_print(&d, stderr);
	st_diag_free(&d);
	return bound == 0 ? EXIT_OK : EXIT_USAGE;
}

/* Where the weights came from, for the reader. Caller frees. */
static char *
weights_source(const cli_args *a, const char *model, const st_graph *g)
{
	uint64_t seed = 0;
	if (cli_flag(a, "random-weights")) {
		(void)seed_of(a, "xwn", &seed);
		return st_xasprintf("random (seed %" PRIu64 ")", seed);
	}
	if (cli_value(a, "weights"))
		return st_xstrdup(cli_value(a, "weights"));
	char why[256];
	const char *written = g->network.values[ST_NET_WEIGHTS].s;
	char *dir = written[0] ? st_model_path(model, written, true, why, sizeof why) : NULL;
	return dir ? dir : st_xstrdup("none");
}

/* The shortest decimal that reads back as f, as a double: 0.8, not
 * 0.800000011920929 (the settings are float32, as the transform uses them). */
static double
short_float(float f)
{
	for (int digits = 6; digits < 9; digits++) {
		char text[32];
		snprintf(text, sizeof text, "%.*g", digits, (double)f);
		double v = strtod(text, NULL);
		if ((float)v == f)
			return v;
	}
	return (double)f;
}

static void
settings_json(cJSON *obj, const st_xwn_settings *s)
{
	cJSON *o = cJSON_AddObjectToObject(obj, "settings");
	cJSON_AddBoolToObject(o, "use_transform", s->transform);
	cJSON_AddNumberToObject(o, "bit", s->bit);
	cJSON_AddNumberToObject(o, "max_scale", short_float(s->max_scale));
	cJSON_AddBoolToObject(o, "use_pruning", s->pruning);
	cJSON_AddNumberToObject(o, "prun_weight", short_float(s->prun_weight));
}

/* part / whole, 0 when whole is 0. */
static double
share(int64_t part, int64_t whole)
{
	return whole > 0 ? (double)part / (double)whole : 0;
}

static void
figures_json(cJSON *obj, const st_xwn_figures *f)
{
	cJSON_AddBoolToObject(obj, "active", f->active);
	cJSON_AddBoolToObject(obj, "transposed", f->transposed);
	cJSON_AddNumberToObject(obj, "slices", (double)f->slices);
	cJSON_AddNumberToObject(obj, "pruned", (double)f->pruned);
	cJSON_AddNumberToObject(obj, "pruned_share", share(f->pruned, f->slices));
	cJSON_AddNumberToObject(obj, "weights", (double)f->weights);
	cJSON_AddNumberToObject(obj, "levels", f->levels);
	cJSON *counts = cJSON_AddArrayToObject(obj, "level_counts");
	for (int k = 0; k < f->levels; k++)
		cJSON_AddItemToArray(counts, cJSON_CreateNumber((double)f->level_count[k]));
	cJSON *parts = cJSON_AddArrayToObject(obj, "parts");
	for (int i = 0; i < f->n_parts; i++) {
		cJSON *p = cJSON_CreateObject();
		char shape[128];
		st_shape_format(&f->parts[i].shape, shape, sizeof shape);
		cJSON_AddStringToObject(p, "weight", f->parts[i].name);
		cJSON_AddStringToObject(p, "shape", shape);
		cJSON_AddNumberToObject(p, "slices", (double)f->parts[i].slices);
		cJSON_AddNumberToObject(p, "pruned", (double)f->parts[i].pruned);
		cJSON_AddItemToArray(parts, p);
	}
}

/* The level histogram as a sparkline and counts ("0:3 1:12 ..."): every
 * level up to 16, only the used ones beyond. */
static void
levels_text(const st_xwn_figures *f, bool ascii, st_buf *out)
{
	if (f->levels == 0) {
		st_buf_puts(out, "no transform");
		return;
	}
	double v[ST_XWN_MAX_LEVELS];
	double most = 0;
	for (int k = 0; k < f->levels; k++) {
		v[k] = (double)f->level_count[k];
		most = v[k] > most ? v[k] : most;
	}
	st_report_sparkline(out, v, f->levels, f->levels < 32 ? f->levels : 32, 0, most > 0 ? most : 1, ascii);
	for (int k = 0; k < f->levels; k++) {
		if (f->levels <= 16 || f->level_count[k] > 0)
			st_buf_printf(out, " %d:%" PRId64, k, f->level_count[k]);
	}
	if (f->levels > 16)
		st_buf_puts(out, " (the others 0)");
}

static void
difference_text(double max_abs, double rel, st_buf *out)
{
	st_buf_printf(out, "max |diff| %.6g, relative L2 %.6g", max_abs, rel);
}

/* The difference of layer l's output k (or network output o when l is
 * NULL) between the two plans. Returns 0, or -1 when they cannot be
 * compared (*why says so). */
static int
output_difference(st_plan *as_set, st_plan *plain, const st_layer *l, const st_layer *pl, int o, st_shape *shape,
                  double *max_abs, double *rel, const char **why)
{
	const st_shape *a, *b;
	int j = -1;
	if (l != NULL) {
		a = st_plan_layer_shape(as_set, l, o);
		b = st_plan_layer_shape(plain, pl, o);
	} else {
		for (int i = 0; i < st_plan_output_count(plain); i++) {
			if (strcmp(st_plan_output_name(plain, i), st_plan_output_name(as_set, o)) == 0)
				j = i;
		}
		a = st_plan_output_shape(as_set, o);
		b = j >= 0 ? st_plan_output_shape(plain, j) : NULL;
	}
	if (a == NULL || b == NULL || !st_shape_equal(a, b)) {
		*why = "not comparable (not kept, or the shapes differ)";
		return -1;
	}
	*shape = *a;
	int64_t n = st_shape_elements(a);
	int64_t bytes = st_shape_bytes(a);
	char *x = st_xmalloc((size_t)(bytes > 0 ? bytes : 1)), *y = st_xmalloc((size_t)(bytes > 0 ? bytes : 1));
	int rc = 0;
	if (l != NULL) {
		if (st_plan_get_layer_output(as_set, l, o, x) != 0 || st_plan_get_layer_output(plain, pl, o, y) != 0) {
			*why = "not kept by the plan";
			rc = -1;
		}
	} else {
		st_plan_get_output(as_set, o, x);
		st_plan_get_output(plain, j, y);
	}
	if (rc == 0 && a->dtype == ST_DTYPE_FLOAT32) {
		st_xwn_difference((const float *)x, (const float *)y, n, max_abs, rel);
	} else if (rc == 0) {
		/* Integers and booleans agree exactly or not at all. */
		bool same = memcmp(x, y, (size_t)bytes) == 0;
		*max_abs = same ? 0 : NAN;
		*rel = same ? 0 : NAN;
	}
	free(x);
	free(y);
	return rc;
}

/* ---- compare ---- */

static int
compare(const cli_args *a, const char *model)
{
	const char *cmd = "xwn compare";
	bool json = cli_flag(a, "json");
	uint64_t seed;
	if (seed_of(a, cmd, &seed) != 0)
		return EXIT_USAGE;
	if (cli_flag(a, "random-weights") && cli_value(a, "weights")) {
		fprintf(stderr, "strata %s: give --weights or --random-weights, not both\n", cmd);
		return EXIT_USAGE;
	}
	cli_plan cp;
	st_graph *plain = NULL;
	st_plan *plain_plan = NULL;
	cJSON *root = NULL;
	st_buf b;
	st_buf_init(&b);
	int rc = cli_plan_prepare_model(a, cmd, model, true, true, &interrupted, &cp);
	if (rc != EXIT_OK)
		goto out;
	st_graph *g = cp.graph;
	int n_xwn = count_xwn_layers(g);
	if (n_xwn == 0) {
		rc = no_xwn_layers("compare", model);
		goto out;
	}

	/* The same network with every XWN layer's transform and pruning off,
	 * compiled alike, bound to the same weights and fed the same inputs. */
	st_diag d;
	st_diag_init(&d);
	int n_active;
	plain = st_xwn_graph_plain(g, model, &n_active, &d);
	if (plain != NULL) {
		st_plan_options opt = { .format = (int)st_plan_format(cp.plan), .threads = st_plan_threads(cp.plan),
			                .backend = "cpu", .cancel = &interrupted, .keep_outputs = true };
		plain_plan = st_plan_compile(plain, &opt, &d);
	}
	st_diag_print(&d, stderr);
	st_diag_free(&d);
	if (plain_plan == NULL) {
		rc = EXIT_RUNTIME;
		goto out;
	}
	if ((rc = bind_weights(a, cmd, model, plain, plain_plan)) != EXIT_OK)
		goto out;
	for (int i = 0; i < cp.n_fed && rc == EXIT_OK; i++) {
		int j = st_plan_input_index(plain_plan, st_plan_input_name(cp.plan, i));
		st_diag_init(&d);
		if (j < 0 || st_plan_set_input(plain_plan, j, &cp.fed[i], &d) != 0)
			rc = EXIT_RUNTIME;
		st_diag_print(&d, stderr);
		st_diag_free(&d);
	}
	if (rc != EXIT_OK)
		goto out;

	/* Both runs; Ctrl-C stops between layers. */
	struct sigaction sa = { .sa_handler = on_interrupt }, old_int;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	st_plan *plans[2] = { cp.plan, plain_plan };
	for (int k = 0; k < 2 && rc == EXIT_OK; k++) {
		st_diag_init(&d);
		int status = st_plan_run(plans[k], &d);
		st_diag_print(&d, stderr);
		st_diag_free(&d);
		if (status == 1)
			fprintf(stderr, "strata %s: interrupted\n", cmd);
		if (status != 0)
			rc = EXIT_RUNTIME;
	}
	sigaction(SIGINT, &old_int, NULL);
	if (rc != EXIT_OK)
		goto out;

	const char **given;
	int n_given = cli_values(a, "input", &given);
	char *source = weights_source(a, model, g);
	if (json) {
		root = cJSON_CreateObject();
		cJSON_AddStringToObject(root, "model", model);
		cJSON_AddStringToObject(root, "weights", source);
		cJSON_AddStringToObject(root, "inputs", n_given == 0 ? "random" : n_given < cp.n_fed ? "partly random" : "given");
		cJSON_AddNumberToObject(root, "seed", (double)seed);
		cJSON_AddNumberToObject(root, "xwn_layers", n_xwn);
		cJSON_AddNumberToObject(root, "active_layers", n_active);
	} else {
		printf("%s: %d XWN layer%s (%d with transform or pruning on), as set vs. with use_transform and "
		       "use_pruning off\n",
		       model, n_xwn, n_xwn == 1 ? "" : "s", n_active);
		printf("weights %s; inputs %s", source,
		       n_given == 0 ? "random" : n_given < cp.n_fed ? "as given, random for the others" : "as given");
		if (n_given < cp.n_fed)
			printf(" (seed %" PRIu64 ")", seed);
		printf("\n");
	}
	free(source);
	cJSON *layers = json ? cJSON_AddArrayToObject(root, "layers") : NULL;
	bool ascii = cli_flag(a, "ascii") || !utf8_locale();
	for (int i = 0; i < g->n_layers && rc == EXIT_OK; i++) {
		const st_layer *l = g->layers[i];
		if (!st_xwn_layer(l))
			continue;
		if (st_plan_layer_params(cp.plan, l) == NULL) {
			/* Nothing of it runs, so nothing to show. */
			if (!json)
				printf("\n%s (%s): not part of the compiled plan\n", l->name, l->type->desc->name);
			continue;
		}
		st_xwn_figures f;
		char err[512];
		if (st_xwn_figures_from_plan(cp.plan, l, &f, err, sizeof err) != 0) {
			fprintf(stderr, "strata %s: %s\n", cmd, err);
			rc = EXIT_RUNTIME;
			break;
		}
		const st_layer *pl = st_graph_find(plain, l->name);
		st_buf_reset(&b);
		st_xwn_settings_text(&f.settings, &b);
		cJSON *lj = NULL, *outs = NULL;
		if (json) {
			lj = cJSON_CreateObject();
			cJSON_AddStringToObject(lj, "name", l->name);
			cJSON_AddStringToObject(lj, "type", l->type->desc->name);
			settings_json(lj, &f.settings);
			cJSON_AddStringToObject(lj, "summary", b.data);
			outs = cJSON_AddArrayToObject(lj, "outputs");
		} else {
			printf("\n%s (%s): %s\n", l->name, l->type->desc->name, b.data);
		}
		for (int k = 0; k < l->n_outputs; k++) {
			st_shape shape;
			double max_abs, rel;
			const char *why;
			char text[128] = "?";
			int got = output_difference(cp.plan, plain_plan, l, pl, k, &shape, &max_abs, &rel, &why);
			if (got == 0)
				st_shape_format(&shape, text, sizeof text);
			if (json) {
				cJSON *o = cJSON_CreateObject();
				cJSON_AddNumberToObject(o, "index", k);
				if (got == 0) {
					cJSON_AddStringToObject(o, "shape", text);
					cJSON_AddNumberToObject(o, "max_abs", max_abs);
					cJSON_AddNumberToObject(o, "rel_l2", rel);
				} else {
					cJSON_AddStringToObject(o, "error", why);
				}
				cJSON_AddItemToArray(outs, o);
			} else {
				st_buf_reset(&b);
				if (got == 0)
					difference_text(max_abs, rel, &b);
				printf("  output %d %s: %s\n", k, text, got == 0 ? b.data : why);
			}
		}
		if (json) {
			figures_json(lj, &f);
			cJSON_AddItemToArray(layers, lj);
		} else {
			printf("  pruned %" PRId64 " of %" PRId64 " slices (%.1f%%), %" PRId64 " weights in %d tensor%s\n",
			       f.pruned, f.slices, 100 * share(f.pruned, f.slices), f.weights, f.n_parts,
			       f.n_parts == 1 ? "" : "s");
			st_buf_reset(&b);
			levels_text(&f, ascii, &b);
			printf("  levels %s\n", b.data);
		}
	}
	if (rc != EXIT_OK)
		goto out;
	cJSON *outs = json ? cJSON_AddArrayToObject(root, "outputs") : NULL;
	if (!json)
		printf("\n");
	for (int o = 0; o < st_plan_output_count(cp.plan); o++) {
		st_shape shape;
		double max_abs, rel;
		const char *why;
		char text[128] = "?";
		int got = output_difference(cp.plan, plain_plan, NULL, NULL, o, &shape, &max_abs, &rel, &why);
		if (got == 0)
			st_shape_format(&shape, text, sizeof text);
		if (json) {
			cJSON *e = cJSON_CreateObject();
			cJSON_AddStringToObject(e, "name", st_plan_output_name(cp.plan, o));
			if (got == 0) {
				cJSON_AddStringToObject(e, "shape", text);
				cJSON_AddNumberToObject(e, "max_abs", max_abs);
				cJSON_AddNumberToObject(e, "rel_l2", rel);
			} else {
				cJSON_AddStringToObject(e, "error", why);
			}
			cJSON_AddItemToArray(outs, e);
		} else {
			st_buf_reset(&b);
			if (got == 0)
				difference_text(max_abs, rel, &b);
			printf("network output %s %s: %s\n", st_plan_output_name(cp.plan, o), text, got == 0 ? b.data : why);
		}
	}
	if (json) {
		cli_print_json(root);
		root = NULL;
	}
out:
	cJSON_Delete(root);
	st_buf_free(&b);
	st_plan_free(plain_plan);
	st_graph_free(plain);
	cli_plan_free(&cp);
	return rc;
}

/* ---- export-weights ---- */

/* Whether path names the folder dir or lies inside it (both existing). */
static bool
within(const char *path, const char *dir)
{
	char rp[PATH_MAX], rd[PATH_MAX];
	if (realpath(path, rp) == NULL || realpath(dir, rd) == NULL)
		return false;
	size_t n = strlen(rd);
	if (strcmp(rd, "/") == 0)
		return true;
	return strncmp(rp, rd, n) == 0 && (rp[n] == '\0' || rp[n] == '/');
}

/* Whether a folder holds anything. */
static bool
has_entries(const char *dir)
{
	bool any = false;
	DIR *d = opendir(dir);
	if (d != NULL) {
		struct dirent *e;
		while (!any && (e = readdir(d)) != NULL)
			any = strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
		closedir(d);
	}
	return any;
}

/* Writes one weight file into dir and notes it in the manifest's list
 * files (when not NULL). Returns 0, or -1 after a message. */
static int
write_weight(const char *dir, const char *layer, const char *weight, const st_shape *shape, const void *data,
             bool transformed, cJSON *files)
{
	char *path = st_xasprintf("%s/%s_%s.npy", dir, layer, weight);
	char err[512];
	int rc = st_npy_write(path, shape, data, err, sizeof err);
	if (rc != 0)
		fprintf(stderr, "strata xwn export-weights: %s\n", err);
	free(path);
	if (rc == 0 && files != NULL) {
		cJSON *f = cJSON_CreateObject();
		char text[128];
		st_shape_format(shape, text, sizeof text);
		char *name = st_xasprintf("%s_%s.npy", layer, weight);
		cJSON_AddStringToObject(f, "file", name);
		cJSON_AddStringToObject(f, "weight", weight);
		cJSON_AddStringToObject(f, "shape", text);
		cJSON_AddBoolToObject(f, "transformed", transformed);
		cJSON_AddItemToArray(files, f);
		free(name);
	}
	return rc;
}

/* Copies prelu's optional per-channel slope of layer l from the source
 * folder, when there is one. Returns 0, or -1 after a message. */
static int
copy_slope(const char *source, const st_layer *l, const char *dir, int *copied)
{
	if (source == NULL || l->act.type == NULL || strcmp(l->act.type->desc->name, "prelu") != 0 || !l->outputs_known ||
	    l->n_outputs < 1 || l->outputs[0].rank < 2)
		return 0;
	char err[512];
	st_weights *w = st_weights_open(source, err, sizeof err);
	if (w == NULL) {
		fprintf(stderr, "strata xwn export-weights: %s\n", err);
		return -1;
	}
	st_shape want = { .dtype = ST_DTYPE_FLOAT32, .rank = 1, .dims = { l->outputs[0].dims[1] } };
	st_npy a;
	int rc = st_weights_load(w, l->name, "prelu_slope", &want, true, &a, err, sizeof err);
	if (rc < 0)
		fprintf(stderr, "strata xwn export-weights: %s\n", err);
	if (rc == 0) {
		rc = write_weight(dir, l->name, "prelu_slope", &want, a.data, false, NULL);
		(*copied)++;
		st_npy_free(&a);
	}
	st_weights_close(w);
	return rc < 0 ? -1 : 0;
}

/* Writes every weight of plan (over g) into dir: XWN layers' as they run,
 * the others as bound, with the manifest. Prints what it wrote unless
 * quiet. Returns 0 with the manifest in *manifest, or -1 after a message. */
static int
write_folder(const st_graph *g, st_plan *plan, const char *model, const char *source, const char *source_text,
             const char *dir, bool quiet, cJSON **manifest)
{
	cJSON *root = cJSON_CreateObject();
	cJSON_AddStringToObject(root, "format", "strata-xwn-weights");
	cJSON_AddNumberToObject(root, "version", 1);
	cJSON_AddStringToObject(root, "model", model);
	cJSON_AddStringToObject(root, "source", source_text);
	cJSON_AddStringToObject(root, "note",
	                        "the XWN layers' weights are transformed and pruned: run the model with use_transform "
	                        "and use_pruning off on them (applying the transform twice changes the weights)");
	cJSON *layers = cJSON_AddArrayToObject(root, "layers");
	int copied = 0, transformed = 0;
	for (int i = 0; i < g->n_layers; i++) {
		const st_layer *l = g->layers[i];
		bool xwn = st_xwn_layer(l) && st_plan_layer_params(plan, l) != NULL;
		cJSON *lj = NULL, *files = NULL;
		st_xwn_figures f;
		char err[512];
		if (xwn) {
			if (st_xwn_figures_from_plan(plan, l, &f, err, sizeof err) != 0) {
				fprintf(stderr, "strata xwn export-weights: %s\n", err);
				goto fail;
			}
			lj = cJSON_CreateObject();
			cJSON_AddStringToObject(lj, "name", l->name);
			cJSON_AddStringToObject(lj, "type", l->type->desc->name);
			settings_json(lj, &f.settings);
			cJSON_AddBoolToObject(lj, "transposed", f.transposed);
			cJSON_AddNumberToObject(lj, "slices", (double)f.slices);
			cJSON_AddNumberToObject(lj, "pruned", (double)f.pruned);
			cJSON_AddNumberToObject(lj, "pruned_share", share(f.pruned, f.slices));
			files = cJSON_AddArrayToObject(lj, "files");
			cJSON_AddItemToArray(layers, lj);
		}
		for (int w = 0; w < l->n_weights; w++) {
			const char *name = l->weights[w].name;
			st_shape shape;
			const float *bound = st_plan_layer_weight(plan, l, name, &shape);
			if (bound == NULL)
				continue; /* an optional weight without a file */
			if (!xwn) {
				if (write_weight(dir, l->name, name, &shape, bound, false, NULL) != 0)
					goto fail;
				copied++;
				continue;
			}
			float *data;
			int changed = st_xwn_transformed_weight(plan, l, name, &data, &shape, err, sizeof err);
			if (changed < 0) {
				fprintf(stderr, "strata xwn export-weights: %s\n", err);
				goto fail;
			}
			int rc = write_weight(dir, l->name, name, &shape, data, changed == 1, files);
			free(data);
			if (rc != 0)
				goto fail;
			transformed += changed == 1;
			if (!quiet) {
				char text[128];
				st_shape_format(&shape, text, sizeof text);
				st_buf b;
				st_buf_init(&b);
				if (changed == 1)
					st_xwn_settings_text(&f.settings, &b);
				printf("%s_%s.npy  %s  %s\n", l->name, name, text,
				       changed == 1 ? b.data
				       : st_xwn_weight_transformed(&shape) ? "unchanged (transform and pruning off)"
				                                           : "copied");
				st_buf_free(&b);
			}
		}
		if (copy_slope(source, l, dir, &copied) != 0)
			goto fail;
		if (xwn && !quiet)
			printf("  %s: pruned %" PRId64 " of %" PRId64 " slices (%.1f%%)\n", l->name, f.pruned, f.slices,
			       100 * share(f.pruned, f.slices));
	}
	cJSON_AddNumberToObject(root, "transformed_files", transformed);
	cJSON_AddNumberToObject(root, "copied_files", copied);
	char *text = cJSON_Print(root);
	char *path = st_xasprintf("%s/%s", dir, MANIFEST);
	st_buf t;
	st_buf_init(&t);
	st_buf_printf(&t, "%s\n", text);
	char err[512];
	int rc = st_write_file_atomic(path, t.data, t.len, err, sizeof err);
	st_buf_free(&t);
	cJSON_free(text);
	free(path);
	if (rc != 0) {
		fprintf(stderr, "strata xwn export-weights: %s\n", err);
		goto fail;
	}
	if (!quiet)
		printf("%d other weight file%s copied unchanged; %s written\n", copied, copied == 1 ? "" : "s", MANIFEST);
	*manifest = root;
	return 0;
fail:
	cJSON_Delete(root);
	return -1;
}

static int
export_weights(const cli_args *a, const char *model)
{
	const char *cmd = "xwn export-weights";
	const char *output = cli_value(a, "output");
	bool json = cli_flag(a, "json");
	if (output == NULL || *output == '\0') {
		fprintf(stderr, "strata %s: say where to write the weights folder with -o DIR\n", cmd);
		return EXIT_USAGE;
	}
	uint64_t seed;
	if (seed_of(a, cmd, &seed) != 0)
		return EXIT_USAGE;
	bool random = cli_flag(a, "random-weights");
	if (random && cli_value(a, "weights")) {
		fprintf(stderr, "strata %s: give --weights or --random-weights, not both\n", cmd);
		return EXIT_USAGE;
	}
	/* The folder's name without trailing slashes, so that the temporary
	 * beside it is not inside it. */
	char *dir = st_xstrdup(output);
	for (size_t n = strlen(dir); n > 1 && dir[n - 1] == '/'; n--)
		dir[n - 1] = '\0';
	struct stat sb;
	bool exists = stat(dir, &sb) == 0;
	int rc = EXIT_OK;
	st_registry *r = NULL;
	st_graph *g = NULL;
	st_plan *plan = NULL;
	char *source = NULL, *tmp = NULL, *old = NULL;
	cJSON *manifest = NULL;
	if (exists && !S_ISDIR(sb.st_mode)) {
		fprintf(stderr, "strata %s: -o %s is a file, not a folder\n", cmd, output);
		rc = EXIT_USAGE;
		goto out;
	}
	r = cli_registry();
	g = cli_load_model(r, model);
	if (g == NULL) {
		rc = EXIT_USAGE;
		goto out;
	}
	st_graph_check(g);
	if (g->errors > 0) {
		fprintf(stderr, "strata %s: %s has %d type error%s; strata check %s lists them\n", cmd, model, g->errors,
		        g->errors == 1 ? "" : "s", model);
		rc = EXIT_PROBLEM;
		goto out;
	}
	if (count_xwn_layers(g) == 0) {
		rc = no_xwn_layers("export-weights", model);
		goto out;
	}
	if (!random && (rc = cli_weights_dir(a, cmd, model, g, &source)) != EXIT_OK)
		goto out;
	/* Never onto the weights read, nor over a folder holding them or the model. */
	if (exists && source != NULL && within(source, dir)) {
		fprintf(stderr, "strata %s: -o %s %s the weights folder %s; write the exported weights elsewhere\n", cmd,
		        output, within(dir, source) ? "is" : "holds", source);
		rc = EXIT_USAGE;
		goto out;
	}
	if (exists && within(model, dir)) {
		fprintf(stderr, "strata %s: -o %s holds the model %s; write the exported weights elsewhere\n", cmd, output,
		        model);
		rc = EXIT_USAGE;
		goto out;
	}
	if (exists && has_entries(dir) && !cli_flag(a, "force")) {
		fprintf(stderr, "strata %s: %s already holds files; replace it with --force, or write elsewhere\n", cmd,
		        output);
		rc = EXIT_USAGE;
		goto out;
	}
	st_diag d;
	st_diag_init(&d);
	st_plan_options opt = { .format = -1, .threads = 1, .backend = "cpu" };
	plan = st_plan_compile(g, &opt, &d);
	st_diag_print(&d, stderr);
	st_diag_free(&d);
	if (plan == NULL) {
		rc = EXIT_RUNTIME;
		goto out;
	}
	if ((rc = bind_weights(a, cmd, model, g, plan)) != EXIT_OK)
		goto out;

	/* Everything goes into a new folder beside DIR, which then takes
	 * DIR's place: a reader sees the old folder or the whole new one. */
	char err[512];
	tmp = st_xasprintf("%s.exporting-%ld", dir, (long)getpid());
	st_remove_dir(tmp);
	if (mkdir(tmp, 0755) != 0) {
		fprintf(stderr, "strata %s: cannot create %s: %s\n", cmd, tmp, strerror(errno));
		free(tmp);
		tmp = NULL;
		rc = EXIT_RUNTIME;
		goto out;
	}
	char *source_text = weights_source(a, model, g);
	int written = write_folder(g, plan, model, source, source_text, tmp, json, &manifest);
	free(source_text);
	if (written != 0) {
		rc = EXIT_RUNTIME;
		goto out;
	}
	if (exists) {
		old = st_xasprintf("%s.replaced-%ld", dir, (long)getpid());
		if (rename(dir, old) != 0) {
			fprintf(stderr, "strata %s: cannot move the old %s aside: %s\n", cmd, output, strerror(errno));
			free(old);
			old = NULL;
			rc = EXIT_RUNTIME;
			goto out;
		}
	}
	if (rename(tmp, dir) != 0) {
		snprintf(err, sizeof err, "%s", strerror(errno));
		if (old != NULL && rename(old, dir) == 0) {
			free(old);
			old = NULL;
		}
		fprintf(stderr, "strata %s: cannot create %s: %s\n", cmd, output, err);
		rc = EXIT_RUNTIME;
		goto out;
	}
	free(tmp);
	tmp = NULL;
	if (old != NULL) {
		st_remove_dir(old);
		if (access(old, F_OK) == 0)
			fprintf(stderr, "strata %s: warning: the replaced folder %s holds subfolders and was kept\n", cmd, old);
	}
	if (json) {
		cJSON_AddStringToObject(manifest, "folder", dir);
		cli_print_json(manifest);
		manifest = NULL;
	} else {
		printf("weights for %s with XWN off written to %s\n", model, dir);
	}
out:
	if (tmp != NULL)
		st_remove_dir(tmp);
	free(tmp);
	free(old);
	cJSON_Delete(manifest);
	free(source);
	st_plan_free(plan);
	st_graph_free(g);
	st_registry_free(r);
	free(dir);
	return rc;
}

int
cli_cmd_xwn(const cli_args *a)
{
	const char *sub = a->argv[0], *model = a->argv[1];
	if (strcmp(sub, "compare") != 0 && strcmp(sub, "export-weights") != 0) {
		fprintf(stderr, "strata xwn: unknown tool '%s'; the tools are: compare, export-weights\n", sub);
		return EXIT_USAGE;
	}
	for (size_t i = 0; i < sizeof only_for / sizeof only_for[0]; i++) {
		const char **values;
		if (strcmp(only_for[i].subcommand, sub) != 0 &&
		    (cli_values(a, only_for[i].option, &values) > 0 || cli_flag(a, only_for[i].option))) {
			fprintf(stderr, "strata xwn %s: --%s belongs to strata xwn %s\n", sub, only_for[i].option,
			        only_for[i].subcommand);
			return EXIT_USAGE;
		}
	}
	return strcmp(sub, "compare") == 0 ? compare(a, model) : export_weights(a, model);
}
