/* The ONNX backend conformance runner: every test of Debian's
 * libonnx-testdata (suites node, pytorch-converted, pytorch-operator, simple)
 * imported, type-checked, compiled, run on the CPU and compared with its
 * expected outputs, against a manifest that says what each test should do.
 * How to run it and keep the manifest true: tests/conformance/README.md. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "st-backend.h"
#include "st-core.h"
#include "st-engine.h"
#include "st-onnx.h"

#define DEFAULT_DATA "/usr/share/libonnx-testdata/data"
#define RTOL 1e-3
#define ATOL 1e-7
/* The tolerances in use: RTOL and ATOL, or 1e-2 both in a float16 format. */
static double tol_rel = RTOL, tol_abs = ATOL;

static const char *const suite_names[] = { "node", "pytorch-converted", "pytorch-operator", "simple" };
#define N_SUITES ((int)(sizeof suite_names / sizeof suite_names[0]))

/* ------------------------------------------------------------------------
 * The manifest
 * ------------------------------------------------------------------------ */

typedef enum expect {
	EXPECT_PASS,
	EXPECT_SKIP,   /* unsupported: the runner still runs it, so a pass is noticed */
	EXPECT_XFAIL,  /* a documented difference */
	EXPECT_COUNT
} expect;

static const char *const expect_names[EXPECT_COUNT] = { "pass", "skip", "xfail" };

typedef struct entry {
	char *suite, *test;
	expect status;
	char *reason;   /* "" for pass */
	int line;       /* in the manifest file */
	bool found;     /* the data folder has it */
} entry;

typedef struct manifest {
	char *path;
	char *header;   /* the comment lines before the first entry, kept on rewrite */
	entry *items;
	int count, cap;
	st_map index;   /* "suite/test" -> entry index + 1 */
	char **keys;    /* owned keys of index */
} manifest;

static int
suite_number(const char *s)
{
	for (int i = 0; i < N_SUITES; i++)
		if (strcmp(s, suite_names[i]) == 0)
			return i;
	return -1;
}

static void
manifest_free(manifest *m)
{
	for (int i = 0; i < m->count; i++) {
		free(m->items[i].suite);
		free(m->items[i].test);
		free(m->items[i].reason);
		free(m->keys[i]);
	}
	free(m->items);
	free(m->keys);
	free(m->header);
	free(m->path);
	st_map_free(&m->index);
}

static entry *
manifest_find(const manifest *m, const char *suite, const char *test)
{
	char *key = st_xasprintf("%s/%s", suite, test);
	intptr_t i = (intptr_t)st_map_get(&m->index, key);
	free(key);
	return i > 0 ? &m->items[i - 1] : NULL;
}

/* Reads the manifest: one test per line, "suite<TAB>test<TAB>status[<TAB>reason]",
 * '#' comments and blank lines ignored. Returns 0, or -1 after printing
 * "file:line: reason" on stderr. */
static int
manifest_load(manifest *m, const char *path)
{
	memset(m, 0, sizeof *m);
	st_map_init(&m->index);
	m->path = st_xstrdup(path);
	size_t len;
	char *text = st_read_file(path, &len);
	if (text == NULL) {
		fprintf(stderr, "%s: cannot read the manifest: %s\n", path, strerror(errno));
		return -1;
	}
	st_buf header;
	st_buf_init(&header);
	int rc = 0, lineno = 0;
	char *p = text, *end = text + len;
	while (p < end && rc == 0) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		char *stop = nl ? nl : end;
		lineno++;
		char *line = st_xstrndup(p, (size_t)(stop - p));
		p = nl ? nl + 1 : end;
		size_t n = strlen(line);
		if (n > 0 && line[n - 1] == '\r')
			line[--n] = '\0';
		if (n == 0 || line[0] == '#') {
			if (m->count == 0)
				st_buf_printf(&header, "%s\n", line);
			free(line);
			continue;
		}
		char *fields[5] = { 0 };
		int nf = 0;
		for (char *f = line; nf < 5;) {
			fields[nf++] = f;
			char *tab = strchr(f, '\t');
			if (tab == NULL)
				break;
			*tab = '\0';
			f = tab + 1;
		}
		const char *problem = NULL;
		char buf[256];
		int suite = nf >= 1 ? suite_number(fields[0]) : -1;
		int status = -1;
		for (int s = 0; nf >= 3 && s < EXPECT_COUNT; s++)
			if (strcmp(fields[2], expect_names[s]) == 0)
				status = s;
		if (nf < 3 || nf > 4) {
			snprintf(buf, sizeof buf, "expected 3 or 4 tab-separated fields (suite, test, status, "
			         "reason), found %s%d", nf > 4 ? "more than " : "", nf > 4 ? 4 : nf);
			problem = buf;
		} else if (suite < 0) {
			snprintf(buf, sizeof buf, "unknown suite '%.60s' (node, pytorch-converted, "
			         "pytorch-operator or simple)", fields[0]);
			problem = buf;
		} else if (fields[1][0] == '\0' || fields[1][0] == '.' || strchr(fields[1], '/') != NULL) {
			snprintf(buf, sizeof buf, "'%.60s' is not a test folder name", fields[1]);
			problem = buf;
		} else if (status < 0) {
			snprintf(buf, sizeof buf, "unknown status '%.60s' (pass, skip or xfail)", fields[2]);
			problem = buf;
		} else if (status != EXPECT_PASS && (nf < 4 || fields[3][0] == '\0')) {
			snprintf(buf, sizeof buf, "status %s needs a reason in the fourth field", fields[2]);
			problem = buf;
		} else {
			entry *dup = manifest_find(m, fields[0], fields[1]);
			if (dup != NULL) {
				snprintf(buf, sizeof buf, "%s/%.60s is listed twice (first on line %d)", fields[0],
				         fields[1], dup->line);
				problem = buf;
			}
		}
		if (problem != NULL) {
			fprintf(stderr, "%s:%d: %s\n", path, lineno, problem);
			rc = -1;
		} else {
			if (m->count == m->cap) {
				m->cap = m->cap ? 2 * m->cap : 256;
				m->items = st_xreallocarray(m->items, (size_t)m->cap, sizeof *m->items);
				m->keys = st_xreallocarray(m->keys, (size_t)m->cap, sizeof *m->keys);
			}
			entry *e = &m->items[m->count];
			e->suite = st_xstrdup(fields[0]);
			e->test = st_xstrdup(fields[1]);
			e->status = (expect)status;
			e->reason = st_xstrdup(nf == 4 ? fields[3] : "");
			e->line = lineno;
			e->found = false;
			m->keys[m->count] = st_xasprintf("%s/%s", e->suite, e->test);
			m->count++;
			st_map_put(&m->index, m->keys[m->count - 1], (void *)(intptr_t)m->count);
		}
		free(line);
	}
	free(text);
	m->header = st_buf_take(&header);
	return rc;
}

/* ------------------------------------------------------------------------
 * Test data: .pb tensors as Strata tensors
 * ------------------------------------------------------------------------ */


/* One test's tensor file: its bytes (the tensor points into them) and
 * its values as a Strata tensor. */
typedef struct pb_value {
	char *path;
	char *file;           /* the serialized TensorProto */
	st_onnx_tensor tensor;
	st_tensor value;      /* data owned (malloc) */
} pb_value;

static void
pb_value_free(pb_value *v)
{
	free(v->path);
	free(v->file);
	free(v->value.data);
	memset(v, 0, sizeof *v);
}

/* Copies the tensor's values out of raw_data or the typed fields into a
 * Strata tensor whose data the caller frees. Returns 0, or -1 with why. */
static int
tensor_values(const st_onnx_tensor *t, st_tensor *out, char *why, size_t size)
{
	int32_t type = t->has_data_type ? t->data_type : ST_ONNX_UNDEFINED;
	int dtype = st_onnx_dtype(type);
	if (dtype < 0) {
		snprintf(why, size, "dtype %s not supported", st_onnx_data_type_name(type));
		return -1;
	}
	if (t->n_dims > ST_MAX_RANK) {
		snprintf(why, size, "rank %zu is above Strata's %d", t->n_dims, ST_MAX_RANK);
		return -1;
	}
	memset(out, 0, sizeof *out);
	out->layout = ST_LAYOUT_NCHW;
	out->shape.dtype = (st_dtype)dtype;
	out->shape.rank = (int)t->n_dims;
	for (size_t i = 0; i < t->n_dims; i++)
		out->shape.dims[i] = t->dims[i];
	int64_t count = st_shape_elements(&out->shape);
	if (count < 0) {
		snprintf(why, size, "the dims overflow");
		return -1;
	}
	size_t elem = (size_t)st_dtype_size(out->shape.dtype);
	size_t bytes = (size_t)count * elem;
	out->data = st_xmalloc(bytes ? bytes : 1);
	const void *raw;
	size_t raw_len;
	char err[256];
	if (st_onnx_tensor_bytes(t, &raw, &raw_len, err, sizeof err) == 0) {
		memcpy(out->data, raw, bytes);
		return 0;
	}
	/* Typed fields: float_data, int64_data, or int32_data for the narrow types. */
	size_t have = type == ST_ONNX_FLOAT ? t->n_float_data
	              : type == ST_ONNX_INT64 ? t->n_int64_data : t->n_int32_data;
	if (have != (size_t)count || t->raw_data.data != NULL) {
		snprintf(why, size, "%s", err);
		free(out->data);
		out->data = NULL;
		return -1;
	}
	for (int64_t i = 0; i < count; i++) {
		uint8_t *dst = (uint8_t *)out->data + (size_t)i * elem;
		if (type == ST_ONNX_FLOAT) {
			memcpy(dst, &t->float_data[i], 4);
		} else if (type == ST_ONNX_INT64) {
			memcpy(dst, &t->int64_data[i], 8);
		} else if (type == ST_ONNX_INT32) {
			memcpy(dst, &t->int32_data[i], 4);
		} else if (type == ST_ONNX_FLOAT16) {
			uint16_t h = (uint16_t)t->int32_data[i];
			memcpy(dst, &h, 2);
		} else {
			*dst = (uint8_t)t->int32_data[i];
		}
	}
	return 0;
}

/* Reads and decodes one .pb file into v. Returns 0, or -1 with why. */
static int
pb_value_read(const char *path, st_onnx_model *holder, pb_value *v, char *why, size_t size)
{
	memset(v, 0, sizeof *v);
	v->path = st_xstrdup(path);
	size_t len;
	v->file = st_read_file(path, &len);
	if (v->file == NULL) {
		snprintf(why, size, "%s: %s", path, strerror(errno));
		return -1;
	}
	char err[256];
	if (st_onnx_parse_tensor(v->file, len, holder, &v->tensor, err, sizeof err) != 0) {
		snprintf(why, size, "%s: %s", strrchr(path, '/') + 1, err);
		return -1;
	}
	if (tensor_values(&v->tensor, &v->value, err, sizeof err) != 0) {
		snprintf(why, size, "%s: %s", strrchr(path, '/') + 1, err);
		return -1;
	}
	return 0;
}

/* Number of files test_data_set_0/<prefix>_0.pb, _1.pb, ... in a row. */
static int
count_files(const char *dir, const char *prefix)
{
	int n = 0;
	for (;;) {
		char *path = st_xasprintf("%s/test_data_set_0/%s_%d.pb", dir, prefix, n);
		struct stat st;
		bool there = stat(path, &st) == 0;
		free(path);
		if (!there)
			return n;
		n++;
	}
}

/* ------------------------------------------------------------------------
 * Comparing
 * ------------------------------------------------------------------------ */

static double
element(const st_tensor *t, int64_t i)
{
	const void *p = (const uint8_t *)t->data + (size_t)i * (size_t)st_dtype_size(t->shape.dtype);
	switch (t->shape.dtype) {
	case ST_DTYPE_FLOAT32: { float f; memcpy(&f, p, 4); return f; }
	case ST_DTYPE_FLOAT16: { uint16_t h; memcpy(&h, p, 2); return st_half_to_float(h); }
	case ST_DTYPE_INT64: { int64_t v; memcpy(&v, p, 8); return (double)v; }
	case ST_DTYPE_INT32: { int32_t v; memcpy(&v, p, 4); return v; }
	case ST_DTYPE_INT8: return *(const int8_t *)p;
	case ST_DTYPE_UINT8:
	case ST_DTYPE_BOOL: return *(const uint8_t *)p;
	default: return 0;
	}
}

/* "[1,0,2]": where flat index i lies in shape s. */
static void
format_index(const st_shape *s, int64_t i, char *buf, size_t size)
{
	int64_t at[ST_MAX_RANK];
	for (int d = s->rank - 1; d >= 0; d--) {
		at[d] = s->dims[d] ? i % s->dims[d] : 0;
		i = s->dims[d] ? i / s->dims[d] : 0;
	}
	size_t n = (size_t)snprintf(buf, size, "[");
	for (int d = 0; d < s->rank && n < size; d++)
		n += (size_t)snprintf(buf + n, size - n, "%s%lld", d ? "," : "", (long long)at[d]);
	if (n < size)
		snprintf(buf + n, size - n, "]");
}

static bool
float_agrees(double got, double want)
{
	if (isnan(want) || isnan(got))
		return isnan(want) && isnan(got);
	if (isinf(want) || isinf(got))
		return got == want;
	return fabs(got - want) <= tol_abs + tol_rel * fabs(want);
}

/* Compares plan output k with the expected tensor. Returns true when they
 * agree; otherwise why says how they differ. */
static bool
compare_output(const st_plan *p, int k, const char *name, const st_tensor *want, bool verbose,
               char *why, size_t size)
{
	const st_shape *s = st_plan_output_shape(p, k);
	bool want_float = want->shape.dtype == ST_DTYPE_FLOAT32 || want->shape.dtype == ST_DTYPE_FLOAT16;
	st_dtype got_dtype = s->dtype;
	if (want_float ? got_dtype != ST_DTYPE_FLOAT32 : got_dtype != want->shape.dtype) {
		snprintf(why, size, "output %s: dtype %s, expected %s", name, st_dtype_name(got_dtype),
		         st_dtype_name(want->shape.dtype));
		return false;
	}
	st_shape gs = *s, ws = want->shape;
	gs.dtype = ws.dtype = ST_DTYPE_FLOAT32;
	if (!st_shape_equal(&gs, &ws)) {
		char a[128], b[128];
		st_shape_format(s, a, sizeof a);
		st_shape_format(&want->shape, b, sizeof b);
		snprintf(why, size, "output %s: shape %s, expected %s", name, a, b);
		return false;
	}
	int64_t n = st_shape_elements(s);
	int64_t bytes = st_shape_bytes(s);
	st_tensor got = { .shape = *s, .layout = ST_LAYOUT_NCHW };
	got.data = st_xmalloc(bytes > 0 ? (size_t)bytes : 1);
	st_plan_get_output(p, k, got.data);
	int64_t bad = 0, first = -1;
	double worst = 0;
	for (int64_t i = 0; i < n; i++) {
		double g = element(&got, i), w = element(want, i);
		bool ok = want_float ? float_agrees(g, w) : g == w;
		if (!ok) {
			if (first < 0)
				first = i;
			bad++;
		}
		if (want_float && !isnan(g) && !isnan(w) && !isinf(w) && fabs(g - w) > worst)
			worst = fabs(g - w);
	}
	if (verbose)
		printf("  output %s (%s %lld values): max |diff| %g\n", name, st_dtype_name(want->shape.dtype),
		       (long long)n, worst);
	bool ok = bad == 0;
	if (!ok) {
		char at[128];
		format_index(s, first, at, sizeof at);
		snprintf(why, size, "output %s: %lld of %lld values differ, first at %s: got %.9g, expected "
		         "%.9g%s%.3g", name, (long long)bad, (long long)n, at, element(&got, first),
		         element(want, first), want_float ? " (max |diff| " : "", want_float ? worst : 0.0);
		if (want_float)
			strncat(why, ")", size - strlen(why) - 1);
	}
	free(got.data);
	return ok;
}

/* ------------------------------------------------------------------------
 * One test
 * ------------------------------------------------------------------------ */

/* What a test did, from best to worst. */
typedef enum outcome {
	OUT_PASS,
	OUT_UNSUPPORTED, /* a feature Strata does not have: the reason says which */
	OUT_REFUSED,     /* import, type check, compile or binding failed */
	OUT_WRONG,       /* it ran, but failed or computed something else */
	OUT_CRASHED,     /* died or timed out (only seen by the parent) */
	OUT_NO_IMPL      /* a layer has no implementation on the backend asked for (--backend) */
} outcome;

static bool
graph_has_initializer(const st_onnx_graph *g, st_onnx_str name)
{
	for (size_t i = 0; i < g->n_initializers; i++)
		if (g->initializers[i].name.len == name.len &&
		    memcmp(g->initializers[i].name.data, name.data, name.len) == 0)
			return true;
	return false;
}

static const st_onnx_attribute *
node_attribute(const st_onnx_node *n, const char *name)
{
	for (size_t i = 0; i < n->n_attributes; i++)
		if (st_onnx_str_eq(n->attributes[i].name, name))
			return &n->attributes[i];
	return NULL;
}

static bool
has_output(const st_onnx_node *n, size_t i)
{
	return n->n_outputs > i && n->outputs[i].len > 0;
}

/* The first element of the tensor called name among the initializers and
 * the test's values, or NAN when it is not known. */
static double
known_scalar(const st_onnx_graph *g, st_onnx_str name, const pb_value *ins, const st_onnx_str *in_names,
             int n_ins)
{
	for (int i = 0; i < n_ins; i++)
		if (in_names[i].len == name.len && memcmp(in_names[i].data, name.data, name.len) == 0 &&
		    ins[i].value.data != NULL && st_shape_elements(&ins[i].value.shape) > 0)
			return element(&ins[i].value, 0);
	for (size_t i = 0; i < g->n_initializers; i++) {
		const st_onnx_tensor *t = &g->initializers[i];
		if (t->name.len != name.len || memcmp(t->name.data, name.data, name.len) != 0)
			continue;
		st_tensor v;
		char why[128];
		if (tensor_values(t, &v, why, sizeof why) != 0)
			return NAN;
		double x = st_shape_elements(&v.shape) > 0 ? element(&v, 0) : NAN;
		free(v.data);
		return x;
	}
	return NAN;
}

/* A feature of the model that Strata leaves out on purpose, which explains
 * a failure better than the failure's own message; NULL when none. */
static const char *
unsupported_feature(const st_onnx_graph *g, const pb_value *ins, const st_onnx_str *in_names, int n_ins)
{
	for (size_t i = 0; i < g->n_nodes; i++) {
		const st_onnx_node *n = &g->nodes[i];
		if (st_onnx_str_eq(n->op_type, "Dropout")) {
			bool training = false;
			double ratio = 0.5;
			const st_onnx_attribute *a = node_attribute(n, "ratio");
			if (a != NULL && a->has_f)
				ratio = a->f;
			if (n->n_inputs > 1 && n->inputs[1].len > 0)
				ratio = known_scalar(g, n->inputs[1], ins, in_names, n_ins);
			if (n->n_inputs > 2 && n->inputs[2].len > 0) {
				double mode = known_scalar(g, n->inputs[2], ins, in_names, n_ins);
				training = isnan(mode) || mode != 0;
			}
			a = node_attribute(n, "is_test");
			if (a != NULL && a->has_i && a->i == 0)
				training = true;
			if (training && !(ratio == 0))
				return "training-mode dropout is random";
			if (has_output(n, 1))
				return "Dropout mask output";
		} else if (st_onnx_str_eq(n->op_type, "BatchNormalization")) {
			const st_onnx_attribute *a = node_attribute(n, "training_mode");
			if (has_output(n, 1) || has_output(n, 2) || (a != NULL && a->has_i && a->i != 0))
				return "training-mode outputs (BatchNormalization running stats)";
		} else if (st_onnx_str_eq(n->op_type, "MaxPool")) {
			if (has_output(n, 1))
				return "MaxPool Indices output";
		}
	}
	return NULL;
}

/* Appends item to a list separated by sep unless it is there already. */
static void
add_once(st_buf *list, int *n, const char *item, const char *sep)
{
	char *hay = st_xasprintf("%s%s%s", sep, list->data ? list->data : "", sep);
	char *needle = st_xasprintf("%s%s%s", sep, item, sep);
	if (strstr(hay, needle) == NULL) {
		st_buf_printf(list, "%s%s", *n ? sep : "", item);
		(*n)++;
	}
	free(hay);
	free(needle);
}

/* Why the importer kept nodes as onnx_operator placeholders, from its
 * notes ("graph.node[3] "n" (Abs): kept as an onnx_operator layer: op Abs
 * has no Strata layer"): "op X has no Strata layer", "ops X, Y have no
 * Strata layer", or the importer's own reason for an operator Strata maps
 * only in part ("MaxPool: pooling runs on float tensors here, not uint8").
 * NULL when nothing was kept; caller frees. */
static char *
placeholder_reason(const st_onnx_import *imp, const st_diag *d)
{
	static const char marker[] = "): kept as an onnx_operator layer: ";
	st_buf ops, others;
	st_buf_init(&ops);
	st_buf_init(&others);
	int n_ops = 0, n_others = 0;
	for (int i = 0; imp->n_placeholders > 0 && i < d->count; i++) {
		const char *text = d->items[i].text;
		const char *at = strstr(text, marker);
		if (at == NULL)
			continue;
		const char *open = at;
		while (open > text && *open != '(')
			open--;
		char *op = st_xstrndup(open + 1, (size_t)(at - open - 1));
		const char *why = at + strlen(marker);
		char *plain = st_xasprintf("op %s has no Strata layer", op);
		if (strcmp(why, plain) == 0) {
			add_once(&ops, &n_ops, op, ", ");
		} else {
			char *item = st_xasprintf("%s: %s", op, why);
			add_once(&others, &n_others, item, "; ");
			free(item);
		}
		free(plain);
		free(op);
	}
	/* Placeholders without a note still count. */
	for (int i = 0; n_ops + n_others == 0 && imp->graph != NULL && i < imp->graph->n_layers; i++) {
		const st_layer *l = imp->graph->layers[i];
		if (strcmp(l->type_name, "onnx_operator") != 0 || l->type == NULL)
			continue;
		int pt = st_params_find(l->type->desc->params, l->type->desc->n_params, "op_type");
		add_once(&ops, &n_ops, pt >= 0 && l->params.values[pt].s ? l->params.values[pt].s : "?", ", ");
	}
	char *why = NULL;
	if (n_ops + n_others > 0) {
		st_buf all;
		st_buf_init(&all);
		if (n_ops > 0)
			st_buf_printf(&all, "%s %s %s no Strata layer", n_ops > 1 ? "ops" : "op", ops.data,
			              n_ops > 1 ? "have" : "has");
		if (n_others > 0)
			st_buf_printf(&all, "%s%s", n_ops ? "; " : "", others.data);
		why = st_buf_take(&all);
	}
	st_buf_free(&ops);
	st_buf_free(&others);
	return why;
}

/* The first error of a diagnostic list, or fallback. */
static const char *
first_error(const st_diag *d, const char *fallback)
{
	for (int i = 0; i < d->count; i++)
		if (d->items[i].severity == ST_SEVERITY_ERROR)
			return d->items[i].text;
	return d->count ? d->items[d->count - 1].text : fallback;
}

typedef struct run_options {
	const st_registry *registry;
	int threads;
	bool verbose;
	const char *backend; /* "cpu", or another backend (--backend) */
	int format;          /* an st_tensor_format, or -1 for the model's */
} run_options;

/* Runs the test in folder dir with weights going to the empty folder
 * weights. Returns the outcome, with a reason in why for all but a pass. */
static outcome
run_test(const char *dir, const char *weights, const run_options *ro, char *why, size_t size)
{
	outcome result = OUT_REFUSED;
	st_onnx_model model, holder;
	memset(&holder, 0, sizeof holder);
	st_diag d;
	st_diag_init(&d);
	st_onnx_import imp;
	memset(&imp, 0, sizeof imp);
	st_plan *plan = NULL;
	pb_value *ins = NULL, *outs = NULL;
	st_onnx_str *in_names = NULL;
	char **names = NULL;
	const st_onnx_tensor **known = NULL;
	int n_in_files = 0, n_out_files = 0, n_ins = 0;
	const char *feature = NULL;
	char err[512];

	char *path = st_xasprintf("%s/model.onnx", dir);
	int rc = st_onnx_open(path, &model, err, sizeof err);
	free(path);
	if (rc != 0) {
		snprintf(why, size, "model.onnx: %s", err);
		goto done;
	}
	const st_onnx_graph *g = model.graph;
	if (g == NULL) {
		snprintf(why, size, "model.onnx has no graph");
		goto done;
	}

	/* Graph inputs that are not initializers take input_<i>.pb in order. */
	in_names = st_xcalloc(g->n_inputs + 1, sizeof *in_names);
	for (size_t i = 0; i < g->n_inputs; i++)
		if (!graph_has_initializer(g, g->inputs[i].name))
			in_names[n_ins++] = g->inputs[i].name;
	for (size_t i = 0; i < g->n_inputs + g->n_outputs; i++) {
		const st_onnx_value_info *v = i < g->n_inputs ? &g->inputs[i] : &g->outputs[i - g->n_inputs];
		if (i < g->n_inputs && graph_has_initializer(g, v->name))
			continue;
		if (v->has_type && v->type.kind == ST_ONNX_TYPE_OTHER) {
			result = OUT_UNSUPPORTED;
			snprintf(why, size, "Optional/Sequence values");
			goto done;
		}
	}
	st_buf bad;
	st_buf_init(&bad);
	int n_bad = 0;
	for (size_t i = 0; i < g->n_inputs + g->n_outputs; i++) {
		const st_onnx_value_info *v = i < g->n_inputs ? &g->inputs[i] : &g->outputs[i - g->n_inputs];
		if (!v->has_type || v->type.kind != ST_ONNX_TYPE_TENSOR || !v->type.has_elem_type ||
		    st_onnx_dtype(v->type.elem_type) >= 0 || (i < g->n_inputs && graph_has_initializer(g, v->name)))
			continue;
		const char *tn = st_onnx_data_type_name(v->type.elem_type);
		if (bad.data == NULL || strstr(bad.data, tn) == NULL) {
			st_buf_printf(&bad, "%s%s", n_bad ? ", " : "", tn);
			n_bad++;
		}
	}
	if (n_bad > 0) {
		result = OUT_UNSUPPORTED;
		snprintf(why, size, "dtype%s %s not supported", n_bad > 1 ? "s" : "", bad.data);
		st_buf_free(&bad);
		goto done;
	}
	st_buf_free(&bad);

	n_in_files = count_files(dir, "input");
	n_out_files = count_files(dir, "output");
	if (n_in_files > n_ins) {
		snprintf(why, size, "%d input files for %d graph inputs", n_in_files, n_ins);
		goto done;
	}
	if (n_out_files != (int)g->n_outputs) {
		snprintf(why, size, "%d output files for %zu graph outputs", n_out_files, g->n_outputs);
		goto done;
	}
	ins = st_xcalloc((size_t)n_in_files + 1, sizeof *ins);
	outs = st_xcalloc((size_t)n_out_files + 1, sizeof *outs);
	for (int i = 0; i < n_in_files + n_out_files; i++) {
		bool in = i < n_in_files;
		char *file = st_xasprintf("%s/test_data_set_0/%s_%d.pb", dir, in ? "input" : "output",
		                          in ? i : i - n_in_files);
		rc = pb_value_read(file, &holder, in ? &ins[i] : &outs[i - n_in_files], err, sizeof err);
		free(file);
		if (rc != 0) {
			/* A dtype Strata lacks, only in the test data. */
			result = strstr(err, "not supported") ? OUT_UNSUPPORTED : OUT_REFUSED;
			snprintf(why, size, "%s", err);
			goto done;
		}
	}
	feature = unsupported_feature(g, ins, in_names, n_in_files);

	/* Import with every test input known, so that shapes and the like
	 * can be frozen; the rest become input layers. */
	names = st_xcalloc((size_t)n_in_files + 1, sizeof *names);
	known = st_xcalloc((size_t)n_in_files + 1, sizeof *known);
	for (int i = 0; i < n_in_files; i++) {
		names[i] = st_onnx_str_dup(in_names[i]);
		known[i] = &ins[i].tensor;
	}
	st_onnx_import_options opt = {
		.weights_dir = weights, .n_known = n_in_files,
		.known_names = (const char *const *)names, .known_values = known,
	};
	rc = st_onnx_import_model(&model, ro->registry, &opt, &imp, &d);
	if (ro->verbose && d.count > 0) {
		printf("  import:\n");
		st_diag_print(&d, stdout);
	}
	char *ops = placeholder_reason(&imp, &d);
	if (ops != NULL) {
		result = OUT_UNSUPPORTED;
		snprintf(why, size, "%s", ops);
		free(ops);
		goto done;
	}
	if (rc != 0 || imp.graph == NULL) {
		snprintf(why, size, "import: %s", first_error(&d, "failed without a message"));
		goto done;
	}
	if (imp.n_inputs != n_ins || imp.n_outputs != (int)g->n_outputs) {
		snprintf(why, size, "import: %d inputs and %d outputs for the graph's %d and %zu",
		         imp.n_inputs, imp.n_outputs, n_ins, g->n_outputs);
		goto done;
	}

	st_graph_check(imp.graph);
	if (imp.graph->errors > 0) {
		int count;
		st_graph_message *msgs = st_graph_messages(imp.graph, &count);
		for (int i = 0; i < count; i++) {
			if (msgs[i].severity != ST_SEVERITY_ERROR)
				continue;
			if (ro->verbose)
				printf("  check: %s: %s\n", msgs[i].layer->name, msgs[i].text);
			else
				break;
		}
		for (int i = 0; i < count; i++) {
			if (msgs[i].severity == ST_SEVERITY_ERROR) {
				snprintf(why, size, "type check: layer %s: %s", msgs[i].layer->name, msgs[i].text);
				break;
			}
		}
		free(msgs);
		goto done;
	}

	st_plan_options popt = { .format = ro->format, .threads = ro->threads, .backend = ro->backend };
	st_diag_free(&d);
	st_diag_init(&d);
	plan = st_plan_compile(imp.graph, &popt, &d);
	if (plan == NULL) {
		snprintf(why, size, "compile: %s", first_error(&d, "failed without a message"));
		/* On another backend, a layer it lacks is a gap, not a failure. */
		if (strcmp(ro->backend, "cpu") != 0 && strstr(why, "no loaded plugin implements") != NULL) {
			result = OUT_NO_IMPL;
			feature = NULL;
			goto done;
		}
		goto done;
	}
	if (st_plan_bind_weights(plan, weights, &d) != 0) {
		snprintf(why, size, "weights: %s", first_error(&d, "failed without a message"));
		goto done;
	}
	for (int i = 0; i < n_ins; i++) {
		const char *layer = imp.input_layers[i];
		if (layer == NULL)
			continue;
		if (i >= n_in_files) {
			snprintf(why, size, "graph input %.*s has no test data", (int)in_names[i].len,
			         in_names[i].data);
			goto done;
		}
		int k = st_plan_input_index(plan, layer);
		if (k < 0) {
			snprintf(why, size, "input layer %s is not in the plan", layer);
			goto done;
		}
		if (st_plan_set_input(plan, k, &ins[i].value, &d) != 0) {
			snprintf(why, size, "input %s: %s", layer, first_error(&d, "refused"));
			goto done;
		}
	}
	result = OUT_WRONG;
	if (st_plan_run(plan, &d) != 0) {
		snprintf(why, size, "run: %s", first_error(&d, "failed without a message"));
		goto done;
	}
	bool all = true;
	for (int o = 0; o < n_out_files; o++) {
		const char *layer = imp.output_layers[o];
		int k = -1;
		for (int j = 0; layer != NULL && j < st_plan_output_count(plan); j++)
			if (strcmp(st_plan_output_name(plan, j), layer) == 0)
				k = j;
		char oname[128];
		snprintf(oname, sizeof oname, "%.*s", (int)g->outputs[o].name.len, g->outputs[o].name.data);
		if (k < 0) {
			snprintf(why, size, "output %s: no plan output %s", oname, layer ? layer : "(none)");
			all = false;
			break;
		}
		if (!compare_output(plan, k, oname, &outs[o].value, ro->verbose, err, sizeof err)) {
			if (all)
				snprintf(why, size, "%s", err);
			all = false;
			if (!ro->verbose)
				break;
		}
	}
	if (all)
		result = OUT_PASS;

done:
	/* A failure that a deliberately missing feature explains is that. */
	if (result != OUT_PASS && result != OUT_UNSUPPORTED && result != OUT_NO_IMPL && feature != NULL) {
		result = OUT_UNSUPPORTED;
		snprintf(why, size, "%s", feature);
	}
	st_plan_free(plan);
	st_onnx_import_free(&imp);
	st_diag_free(&d);
	for (int i = 0; i < n_in_files && ins; i++)
		pb_value_free(&ins[i]);
	for (int i = 0; i < n_out_files && outs; i++)
		pb_value_free(&outs[i]);
	for (int i = 0; i < n_in_files && names; i++)
		free(names[i]);
	free(names);
	free(known);
	free(ins);
	free(outs);
	free(in_names);
	st_onnx_free(&holder);
	st_onnx_free(&model);
	return result;
}

/* ------------------------------------------------------------------------
 * Running tests apart, so that no test can take the runner down
 * ------------------------------------------------------------------------ */

/* Runs the test in a child process (unless no_fork), which reports through
 * a pipe; a crash or a timeout becomes OUT_CRASHED. */
static outcome
run_isolated(const char *dir, const char *weights, const run_options *ro, bool no_fork, int timeout,
             char *why, size_t size)
{
	mkdir(weights, 0700);
	outcome o;
	if (no_fork) {
		o = run_test(dir, weights, ro, why, size);
		st_remove_dir(weights);
		return o;
	}
	int fd[2];
	if (pipe(fd) != 0) {
		snprintf(why, size, "pipe: %s", strerror(errno));
		return OUT_CRASHED;
	}
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(why, size, "fork: %s", strerror(errno));
		close(fd[0]);
		close(fd[1]);
		return OUT_CRASHED;
	}
	if (pid == 0) {
		close(fd[0]);
		alarm((unsigned)timeout);
		char text[1024];
		text[0] = '\0';
		outcome r = run_test(dir, weights, ro, text, sizeof text);
		char msg[1100];
		int n = snprintf(msg, sizeof msg, "%d%s", (int)r, text);
		fflush(stdout);
		if (write(fd[1], msg, (size_t)n) != n)
			_exit(3);
		_exit(0);
	}
	close(fd[1]);
	char msg[1100];
	size_t got = 0;
	for (;;) {
		ssize_t n = read(fd[0], msg + got, sizeof msg - 1 - got);
		if (n > 0) {
			got += (size_t)n;
			if (got == sizeof msg - 1)
				break;
		} else if (n == 0 || errno != EINTR) {
			break;
		}
	}
	msg[got] = '\0';
	close(fd[0]);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
	}
	st_remove_dir(weights);
	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);
		if (sig == SIGALRM)
			snprintf(why, size, "timed out after %d s", timeout);
		else
			snprintf(why, size, "crashed: signal %d (%s)", sig, strsignal(sig));
		return OUT_CRASHED;
	}
	if (got == 0 || msg[0] < '0' || msg[0] > '0' + OUT_NO_IMPL || msg[0] == '0' + OUT_CRASHED || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0) {
		snprintf(why, size, "the test process exited with status %d without a result",
		         WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		return OUT_CRASHED;
	}
	size_t n = strlen(msg + 1) < size ? strlen(msg + 1) : size - 1;
	memcpy(why, msg + 1, n);
	why[n] = '\0';
	return (outcome)(msg[0] - '0');
}

/* ------------------------------------------------------------------------
 * The whole run
 * ------------------------------------------------------------------------ */

typedef struct counts {
	int passed, failed, skipped, xfailed;
} counts;

static int
compare_strings(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The test folders of a suite, sorted; caller frees each and the array.
 * Returns NULL (count 0) when the suite folder is missing. */
static char **
list_tests(const char *data, const char *suite, int *count)
{
	*count = 0;
	char *base = st_xasprintf("%s/%s", data, suite);
	DIR *dh = opendir(base);
	free(base);
	if (dh == NULL)
		return NULL;
	char **names = NULL;
	int cap = 0;
	struct dirent *e;
	while ((e = readdir(dh)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		if (*count == cap) {
			cap = cap ? 2 * cap : 256;
			names = st_xreallocarray(names, (size_t)cap, sizeof *names);
		}
		names[(*count)++] = st_xstrdup(e->d_name);
	}
	closedir(dh);
	if (*count > 1)
		qsort(names, (size_t)*count, sizeof *names, compare_strings);
	return names;
}

/* A reason fit for one manifest field: no tabs or line breaks. */
static char *
manifest_text(const char *s)
{
	char *t = st_xstrdup(s);
	for (char *p = t; *p; p++)
		if (*p == '\t' || *p == '\n' || *p == '\r')
			*p = ' ';
	return t;
}

/* A line of the manifest being rewritten. */
typedef struct new_line {
	int suite;
	char *test;
	char *text;     /* "suite\ttest\tstatus[\treason]" */
} new_line;

static int
compare_lines(const void *a, const void *b)
{
	const new_line *x = a, *y = b;
	if (x->suite != y->suite)
		return x->suite - y->suite;
	return strcmp(x->test, y->test);
}

static void
usage(FILE *out)
{
	fprintf(out,
	        "usage: onnx-conformance [--filter SUBSTRING] [--verbose] [--manifest FILE] [--data DIR]\n"
	        "                        [--write-manifest] [--threads N] [--timeout SECONDS] [--no-fork]\n"
	        "Runs the ONNX backend tests of libonnx-testdata through Strata's importer and CPU\n"
	        "engine, and checks each against the manifest (pass, skip or xfail).\n"
	        "  --filter S        only tests whose suite/test name contains S\n"
	        "  --verbose         importer notes, type-check errors and output errors of each test\n"
	        "  --manifest FILE   the manifest (default: the source tree's\n"
	        "                    tests/conformance/onnx-manifest.tsv)\n"
	        "  --data DIR        the test data (default " DEFAULT_DATA ")\n"
	        "  --write-manifest  rewrite the manifest from the results, keeping the reasons\n"
	        "                    of tests that still do not pass\n"
	        "  --threads N       engine threads per test (default 1)\n"
	        "  --timeout S       seconds one test may take (default 60)\n"
	        "  --no-fork         run tests in this process (for debuggers)\n"
	        "  --backend NAME    run on backend NAME (default cpu); a test with a layer the\n"
	        "                    backend does not implement is skipped; the tests then run in\n"
	        "                    this process (a device runtime does not survive fork)\n"
	        "  --format FORMAT   fp32-nchw, fp32-nhwc, fp16-nchw or fp16-nhwc (default: the\n"
	        "                    model's); float16 formats compare within 1e-2\n"
	        "The last line is \"N passed, N failed, N skipped\" (expected failures count as\n"
	        "skipped). Exit status: 0 all as the manifest says, 1 a difference, 2 bad usage or\n"
	        "manifest, 77 no test data (1 when STRATA_REQUIRE_REFERENCES=1).\n");
}

int
main(int argc, char **argv)
{
	const char *filter = NULL, *manifest_path = NULL, *data = DEFAULT_DATA;
	bool verbose = false, write_manifest = false, no_fork = false;
	int threads = 1, timeout = 60, format = -1;
	const char *backend = "cpu";
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		bool has_value = i + 1 < argc;
		if (strcmp(a, "--filter") == 0 && has_value) {
			filter = argv[++i];
		} else if (strcmp(a, "--manifest") == 0 && has_value) {
			manifest_path = argv[++i];
		} else if (strcmp(a, "--data") == 0 && has_value) {
			data = argv[++i];
		} else if (strcmp(a, "--threads") == 0 && has_value) {
			threads = atoi(argv[++i]);
		} else if (strcmp(a, "--timeout") == 0 && has_value) {
			timeout = atoi(argv[++i]);
			if (timeout < 1) {
				fprintf(stderr, "onnx-conformance: --timeout needs a positive number of seconds\n");
				return 2;
			}
		} else if (strcmp(a, "--verbose") == 0 || strcmp(a, "-v") == 0) {
			verbose = true;
		} else if (strcmp(a, "--write-manifest") == 0) {
			write_manifest = true;
		} else if (strcmp(a, "--no-fork") == 0) {
			no_fork = true;
		} else if (strcmp(a, "--backend") == 0 && has_value) {
			backend = argv[++i];
		} else if (strcmp(a, "--format") == 0 && has_value) {
			const char *f = argv[++i];
			for (int k = 0; k < 4; k++) {
				if (strcmp(f, st_tensor_format_name((st_tensor_format)k)) == 0)
					format = k;
			}
			if (format < 0) {
				fprintf(stderr, "onnx-conformance: --format takes fp32-nchw, fp32-nhwc, fp16-nchw or "
				                "fp16-nhwc, not '%s'\n", f);
				return 2;
			}
			if (f[2] == '1') /* fp16-... */
				tol_rel = tol_abs = 1e-2;
		} else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			usage(stdout);
			return 0;
		} else {
			fprintf(stderr, "onnx-conformance: unknown or incomplete option '%s'\n", a);
			usage(stderr);
			return 2;
		}
	}
	if (write_manifest && (strcmp(backend, "cpu") != 0 || format >= 0)) {
		fprintf(stderr, "onnx-conformance: the manifest describes the CPU backend in the model's format: "
		                "--write-manifest takes neither --backend nor --format\n");
		return 2;
	}
	char *default_manifest = st_xasprintf("%s/tests/conformance/onnx-manifest.tsv", ST_SOURCE_DIR);
	manifest m;
	if (manifest_load(&m, manifest_path ? manifest_path : default_manifest) != 0) {
		manifest_free(&m);
		free(default_manifest);
		return 2;
	}
	free(default_manifest);

	char *node_dir = st_xasprintf("%s/node", data);
	struct stat st;
	bool have_data = stat(node_dir, &st) == 0 && S_ISDIR(st.st_mode);
	free(node_dir);
	if (!have_data) {
		const char *req = getenv("STRATA_REQUIRE_REFERENCES");
		bool required = req != NULL && strcmp(req, "1") == 0;
		printf("onnx-conformance: no ONNX test data in %s (Debian's libonnx-testdata; ./bootstrap "
		       "installs it)%s\n", data, required ? ", and STRATA_REQUIRE_REFERENCES=1 requires it" : "");
		manifest_free(&m);
		return required ? 1 : 77;
	}

	st_registry *reg = st_registry_new();
	st_registry_load_default(reg);
	if (st_registry_find_layer(reg, "input") == NULL) {
		char *search = st_registry_search_path();
		fprintf(stderr, "onnx-conformance: no standard layers found on the plugin path %s "
		        "(set STRATA_PLUGIN_PATH)\n", search);
		free(search);
		st_registry_free(reg);
		manifest_free(&m);
		return 2;
	}

	if (strcmp(backend, "cpu") != 0) {
		char why[1024];
		if (st_backend_ready(backend, NULL, why, sizeof why) != 0) {
			fprintf(stderr, "onnx-conformance: %s\n", why);
			st_registry_free(reg);
			manifest_free(&m);
			return 2;
		}
		st_registry_load_backend(reg, backend);
		/* The probe above started the device's runtime in this process,
		 * which a forked child cannot use (CUDA does not survive fork):
		 * the tests run here, one after another, without a time limit. */
		no_fork = true;
	}
	char tmpl[4096];
	const char *tmpdir = getenv("TMPDIR");
	snprintf(tmpl, sizeof tmpl, "%s/strata-onnx-XXXXXX", tmpdir && tmpdir[0] ? tmpdir : "/tmp");
	if (mkdtemp(tmpl) == NULL) {
		fprintf(stderr, "onnx-conformance: cannot make a folder in %s: %s\n",
		        tmpdir && tmpdir[0] ? tmpdir : "/tmp", strerror(errno));
		st_registry_free(reg);
		manifest_free(&m);
		return 2;
	}
	char *weights = st_xasprintf("%s/weights", tmpl);

	run_options ro = { .registry = reg, .threads = threads, .verbose = verbose, .backend = backend,
		           .format = format };
	counts total = { 0 }, per[N_SUITES];
	memset(per, 0, sizeof per);
	new_line *lines = NULL;
	int n_lines = 0, cap_lines = 0, matched = 0, changed = 0;
	double t0 = st_now();

	for (int s = 0; s < N_SUITES; s++) {
		int n;
		char **tests = list_tests(data, suite_names[s], &n);
		for (int i = 0; i < n; i++) {
			char *full = st_xasprintf("%s/%s", suite_names[s], tests[i]);
			entry *e = manifest_find(&m, suite_names[s], tests[i]);
			if (e != NULL)
				e->found = true;
			bool selected = filter == NULL || strstr(full, filter) != NULL;
			char *line_text = NULL;
			if (selected) {
				matched++;
				char why[1024] = "";
				char *dir = st_xasprintf("%s/%s", data, full);
				if (verbose)
					printf("RUN %s\n", full);
				outcome o = run_isolated(dir, weights, &ro, no_fork, timeout, why, sizeof why);
				free(dir);
				counts *c = &per[s];
				if (e == NULL) {
					printf("FAIL %s: not in the manifest %s (%s: %s)\n", full, m.path,
					       o == OUT_PASS ? "it passes" : "it does not pass", o == OUT_PASS ? "add it" : why);
					c->failed++;
				} else if (e->status == EXPECT_PASS && o == OUT_NO_IMPL) {
					printf("SKIP %s: %s\n", full, why);
					c->skipped++;
				} else if (e->status == EXPECT_PASS) {
					if (o == OUT_PASS) {
						printf("PASS %s\n", full);
						c->passed++;
					} else {
						printf("FAIL %s: %s%s\n", full, o == OUT_UNSUPPORTED ? "expected to pass, unsupported: " : "", why);
						c->failed++;
					}
				} else if (o == OUT_PASS) {
					printf("UNEXPECTED PASS %s: marked %s (%s) in %s:%d\n", full,
					       expect_names[e->status], e->reason, m.path, e->line);
					c->failed++;
				} else if (e->status == EXPECT_SKIP) {
					printf("SKIP %s: %s\n", full, e->reason);
					if (verbose)
						printf("  (%s)\n", why);
					c->skipped++;
				} else {
					printf("XFAIL %s: %s\n", full, e->reason);
					if (verbose)
						printf("  (%s)\n", why);
					c->xfailed++;
				}
				fflush(stdout);
				/* The manifest line the results call for. */
				if (o == OUT_PASS) {
					line_text = st_xasprintf("%s\tpass", full);
				} else if (e != NULL && e->status != EXPECT_PASS) {
					line_text = st_xasprintf("%s\t%s\t%s", full, expect_names[e->status], e->reason);
				} else {
					char *r = manifest_text(why);
					line_text = st_xasprintf("%s\t%s\t%s", full,
					                         o == OUT_WRONG || o == OUT_CRASHED ? "xfail" : "skip", r);
					free(r);
				}
				if (e == NULL || (e->status == EXPECT_PASS) != (o == OUT_PASS))
					changed++;
			} else if (e != NULL) {
				line_text = e->status == EXPECT_PASS
				            ? st_xasprintf("%s\tpass", full)
				            : st_xasprintf("%s\t%s\t%s", full, expect_names[e->status], e->reason);
			}
			for (char *p = line_text; p && *p; p++)
				if (*p == '/') {
					*p = '\t';
					break;
				}
			if (line_text != NULL) {
				if (n_lines == cap_lines) {
					cap_lines = cap_lines ? 2 * cap_lines : 1024;
					lines = st_xreallocarray(lines, (size_t)cap_lines, sizeof *lines);
				}
				lines[n_lines++] = (new_line){ .suite = s, .test = st_xstrdup(tests[i]), .text = line_text };
			}
			free(full);
			free(tests[i]);
		}
		free(tests);
	}
	int missing = 0;
	for (int i = 0; i < m.count; i++) {
		entry *e = &m.items[i];
		char *full = st_xasprintf("%s/%s", e->suite, e->test);
		if (!e->found && (filter == NULL || strstr(full, filter) != NULL)) {
			printf("FAIL %s: listed in %s:%d but not found in %s\n", full, m.path, e->line, data);
			per[suite_number(e->suite)].failed++;
			matched++;
			missing++;
		}
		free(full);
	}
	rmdir(tmpl);
	free(weights);

	for (int s = 0; s < N_SUITES; s++) {
		printf("# %-18s %4d passed, %d failed, %d skipped, %d expected failures\n", suite_names[s],
		       per[s].passed, per[s].failed, per[s].skipped, per[s].xfailed);
		total.passed += per[s].passed;
		total.failed += per[s].failed;
		total.skipped += per[s].skipped + per[s].xfailed;
	}
	printf("# %.1f s\n", st_now() - t0);
	printf("%d passed, %d failed, %d skipped\n", total.passed, total.failed, total.skipped);
	fflush(stdout);

	int rc = total.failed > 0 ? 1 : 0;
	if (matched == 0 && filter != NULL) {
		fprintf(stderr, "onnx-conformance: no test matches --filter '%s'\n", filter);
		rc = 2;
	}
	if (write_manifest) {
		qsort(lines, (size_t)n_lines, sizeof *lines, compare_lines);
		st_buf out;
		st_buf_init(&out);
		st_buf_puts(&out, m.header);
		for (int i = 0; i < n_lines; i++)
			st_buf_printf(&out, "%s\n", lines[i].text);
		char err[512];
		if (st_write_file_atomic(m.path, out.data, out.len, err, sizeof err) != 0) {
			fprintf(stderr, "onnx-conformance: %s\n", err);
			rc = 2;
		} else {
			fprintf(stderr, "onnx-conformance: wrote %s: %d tests, %d changed between pass and not, "
			        "%d listed tests not found dropped; review the reasons of new skip and xfail lines\n",
			        m.path, n_lines, changed, missing);
			rc = 0;
		}
		st_buf_free(&out);
	}
	for (int i = 0; i < n_lines; i++) {
		free(lines[i].test);
		free(lines[i].text);
	}
	free(lines);
	st_registry_free(reg);
	manifest_free(&m);
	return rc;
}
