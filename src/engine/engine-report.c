/* Inference reports: statistics of timing samples, the canonical JSON text
 * of a report (docs/report-format.md), and a strict reader for it. */
#include "config.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "st-report.h"

/* ---- statistics ---- */

static int
compare_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The nearest-rank percentile of n sorted samples: the value at index
 * ceil(pct / 100 * n) - 1, in integers so that no rounding moves it. */
static double
nearest_rank(const double *sorted, int n, int pct)
{
	long rank = ((long)pct * n + 99) / 100;
	if (rank < 1)
		rank = 1;
	return sorted[rank - 1];
}

void
st_report_times_from(st_report_times *t, double *samples, int n)
{
	memset(t, 0, sizeof *t);
	if (samples == NULL || n <= 0)
		return;
	qsort(samples, (size_t)n, sizeof *samples, compare_double);
	double sum = 0;
	for (int i = 0; i < n; i++)
		sum += samples[i];
	t->count = n;
	t->mean = sum / n;
	t->median = n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
	t->min = samples[0];
	t->max = samples[n - 1];
	t->p90 = nearest_rank(samples, n, 90);
	t->p95 = nearest_rank(samples, n, 95);
	t->p99 = nearest_rank(samples, n, 99);
	double squares = 0;
	for (int i = 0; i < n; i++)
		squares += (samples[i] - t->mean) * (samples[i] - t->mean);
	t->stddev = sqrt(squares / n);
}

/* ---- writing ---- */

/* A string, or null for NULL. */
static void
add_string(cJSON *obj, const char *key, const char *s)
{
	if (s != NULL)
		cJSON_AddStringToObject(obj, key, s);
	else
		cJSON_AddNullToObject(obj, key);
}

/* A hardware counter: null when unavailable (negative), never a false 0. */
static void
add_counter(cJSON *obj, const char *key, double v)
{
	if (v < 0 || !isfinite(v))
		cJSON_AddNullToObject(obj, key);
	else
		cJSON_AddNumberToObject(obj, key, v);
}

static cJSON *
times_json(const st_report_times *t)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "count", t->count);
	cJSON_AddNumberToObject(o, "mean", t->mean);
	cJSON_AddNumberToObject(o, "median", t->median);
	cJSON_AddNumberToObject(o, "min", t->min);
	cJSON_AddNumberToObject(o, "max", t->max);
	cJSON_AddNumberToObject(o, "p90", t->p90);
	cJSON_AddNumberToObject(o, "p95", t->p95);
	cJSON_AddNumberToObject(o, "p99", t->p99);
	cJSON_AddNumberToObject(o, "stddev", t->stddev);
	return o;
}

/* Layer indices, slowest first; ties keep execution order. */
static const st_report *sort_report;

static int
compare_slowest(const void *a, const void *b)
{
	int i = *(const int *)a, j = *(const int *)b;
	double x = sort_report->layers[i].time.mean, y = sort_report->layers[j].time.mean;
	if (x != y)
		return x < y ? 1 : -1;
	return (i > j) - (i < j);
}

int *
st_report_slowest(const st_report *r)
{
	int *order = st_xcalloc((size_t)(r->n_layers ? r->n_layers : 1), sizeof *order);
	for (int i = 0; i < r->n_layers; i++)
		order[i] = i;
	sort_report = r;
	qsort(order, (size_t)r->n_layers, sizeof *order, compare_slowest);
	sort_report = NULL;
	return order;
}

const st_report_layer *
st_report_find_layer(const st_report *r, const char *name, const char *type)
{
	for (int i = 0; i < r->n_layers; i++) {
		if (strcmp(r->layers[i].name, name) == 0 && strcmp(r->layers[i].type, type) == 0)
			return &r->layers[i];
	}
	return NULL;
}

static int
compare_type_total(const void *a, const void *b)
{
	const st_report_type *x = a, *y = b;
	if (x->time != y->time)
		return x->time < y->time ? 1 : -1;
	return (x->first > y->first) - (x->first < y->first);
}

st_report_type *
st_report_by_type(const st_report *r, int *n)
{
	st_report_type *t = st_xcalloc((size_t)(r->n_layers ? r->n_layers : 1), sizeof *t);
	*n = 0;
	double total = 0;
	for (int i = 0; i < r->n_layers; i++) {
		const char *type = r->layers[i].type ? r->layers[i].type : "";
		int k = 0;
		while (k < *n && strcmp(t[k].type, type) != 0)
			k++;
		if (k == *n)
			t[(*n)++] = (st_report_type){ .type = type, .first = i };
		t[k].count++;
		t[k].time += r->layers[i].time.mean;
		total += r->layers[i].time.mean;
	}
	qsort(t, (size_t)*n, sizeof *t, compare_type_total);
	for (int k = 0; k < *n; k++)
		t[k].share = total > 0 ? t[k].time / total : 0;
	return t;
}

/* by_type: one entry per layer type, by total time, then first appearance. */
static cJSON *
by_type_json(const st_report *r)
{
	int n;
	st_report_type *t = st_report_by_type(r, &n);
	cJSON *a = cJSON_CreateArray();
	for (int k = 0; k < n; k++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "type", t[k].type);
		cJSON_AddNumberToObject(o, "count", t[k].count);
		cJSON_AddNumberToObject(o, "time_ms", t[k].time);
		cJSON_AddNumberToObject(o, "share", t[k].share);
		cJSON_AddItemToArray(a, o);
	}
	free(t);
	return a;
}

static cJSON *
slowest_json(const st_report *r)
{
	int *order = st_report_slowest(r);
	cJSON *a = cJSON_CreateArray();
	for (int i = 0; i < r->n_layers && i < 10; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(r->layers[order[i]].name ? r->layers[order[i]].name : ""));
	free(order);
	return a;
}

/* A list of samples in run order, or nothing when there are none. Five
 * significant digits are more than a clock read resolves, and keep a long
 * series short (rounding again gives the same digits, so the text stays
 * canonical through a read and a write). */
static void
add_samples(cJSON *o, const char *key, const double *v, int n)
{
	if (v == NULL || n <= 0)
		return;
	cJSON *a = cJSON_CreateArray();
	for (int i = 0; i < n; i++) {
		char digits[32];
		snprintf(digits, sizeof digits, "%.5g", v[i]);
		cJSON_AddItemToArray(a, cJSON_CreateNumber(strtod(digits, NULL)));
	}
	cJSON_AddItemToObject(o, key, a);
}

static cJSON *
layer_json(const st_report_layer *l)
{
	cJSON *o = cJSON_CreateObject();
	add_string(o, "name", l->name ? l->name : "");
	add_string(o, "type", l->type ? l->type : "");
	add_string(o, "output", l->output);
	cJSON_AddNumberToObject(o, "distance", l->distance);
	cJSON_AddItemToObject(o, "time_ms", times_json(&l->time));
	cJSON_AddNumberToObject(o, "share", l->share);
	cJSON_AddNumberToObject(o, "flops", l->flops);
	cJSON_AddNumberToObject(o, "bytes", l->bytes);
	cJSON_AddNumberToObject(o, "gflops", l->gflops);
	cJSON_AddNumberToObject(o, "gbs", l->gbs);
	cJSON *m = cJSON_CreateObject();
	cJSON_AddNumberToObject(m, "allocated", (double)l->mem_allocated);
	cJSON_AddNumberToObject(m, "freed", (double)l->mem_freed);
	cJSON_AddNumberToObject(m, "live", (double)l->mem_live);
	cJSON_AddNumberToObject(m, "persistent", (double)l->mem_persistent);
	cJSON_AddItemToObject(o, "memory", m);
	cJSON *c = cJSON_CreateObject();
	add_counter(c, "cycles", l->cycles);
	add_counter(c, "instructions", l->instructions);
	add_counter(c, "cache_misses", l->cache_misses);
	cJSON_AddItemToObject(o, "counters", c);
	add_samples(o, "samples_ms", l->samples, l->n_samples);
	return o;
}

char *
st_report_serialize(const st_report *r)
{
	cJSON *root = cJSON_CreateObject();
	cJSON_AddStringToObject(root, "format", ST_REPORT_FORMAT);
	char version[32];
	snprintf(version, sizeof version, "%d.%d", ST_REPORT_MAJOR, ST_REPORT_MINOR);
	cJSON_AddStringToObject(root, "version", version);

	cJSON *s = cJSON_CreateObject();
	add_string(s, "model", r->model);
	add_string(s, "network", r->network);
	add_string(s, "network_version", r->network_version);
	add_string(s, "strata_version", r->strata_version);
	add_string(s, "date", r->date);
	add_string(s, "backend", r->backend);
	add_string(s, "device", r->device);
	add_string(s, "format", r->format);
	cJSON_AddNumberToObject(s, "threads", r->threads);
	cJSON_AddNumberToObject(s, "iterations", r->iterations);
	cJSON_AddNumberToObject(s, "warmup", r->warmup);
	cJSON_AddNumberToObject(s, "batch", (double)r->batch);
	cJSON_AddItemToObject(s, "latency_ms", times_json(&r->latency));
	add_samples(s, "latency_samples_ms", r->latency_samples, r->n_latency_samples);
	cJSON_AddNumberToObject(s, "throughput", r->throughput);
	cJSON_AddNumberToObject(s, "peak_bytes", (double)r->peak_bytes);
	add_string(s, "peak_layer", r->peak_layer);
	cJSON_AddItemToObject(root, "summary", s);

	cJSON *p = cJSON_CreateObject();
	cJSON_AddNumberToObject(p, "iterations", r->profile_iterations);
	if (r->counters_note != NULL)
		add_string(p, "counters_note", r->counters_note);
	cJSON *layers = cJSON_CreateArray();
	for (int i = 0; i < r->n_layers; i++)
		cJSON_AddItemToArray(layers, layer_json(&r->layers[i]));
	cJSON_AddItemToObject(p, "layers", layers);
	cJSON *skipped = cJSON_CreateArray();
	for (int i = 0; i < r->n_skipped; i++)
		cJSON_AddItemToArray(skipped, cJSON_CreateString(r->skipped[i] ? r->skipped[i] : ""));
	cJSON_AddItemToObject(p, "skipped", skipped);
	cJSON_AddItemToObject(root, "profile", p);

	cJSON_AddItemToObject(root, "by_type", by_type_json(r));
	cJSON_AddItemToObject(root, "slowest", slowest_json(r));

	return st_json_document_text(root);
}

int
st_report_save(const st_report *r, const char *path, char *err, size_t err_size)
{
	char *text = st_report_serialize(r);
	int rc = st_write_file_atomic(path, text, strlen(text), err, err_size);
	free(text);
	return rc;
}

/* ---- reading ---- */

typedef struct reader {
	const char *file;
	st_json_doc doc;
	st_diag *diag;
	bool newer_minor; /* written by a newer minor version: unknown fields are ignored */
	int errors;
} reader;

static void fail(reader *rd, bool at_key, const cJSON *node, const st_json_path *path, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* Reports an error at node (at its key when at_key), with its JSON path. */
static void
fail(reader *rd, bool at_key, const cJSON *node, const st_json_path *path, const char *fmt, ...)
{
	int line, col;
	if (at_key)
		st_json_key_position(&rd->doc, node, &line, &col);
	else
		st_json_position(&rd->doc, node, &line, &col);
	va_list ap;
	va_start(ap, fmt);
	char *text = st_xvasprintf(fmt, ap);
	va_end(ap);
	st_buf where;
	st_buf_init(&where);
	st_json_path_text(path, &where);
	if (where.len)
		st_diag_add(rd->diag, ST_SEVERITY_ERROR, rd->file, line, col, "%s (at %s)", text, where.data);
	else
		st_diag_add(rd->diag, ST_SEVERITY_ERROR, rd->file, line, col, "%s", text);
	st_buf_free(&where);
	free(text);
	rd->errors++;
}

/* Checks obj's keys: each known at most once, unknown ones refused unless
 * the file is of a newer minor version. */
static void
check_fields(reader *rd, const cJSON *obj, const st_json_path *path, const char *const *known, int n_known)
{
	for (const cJSON *c = obj->child; c; c = c->next) {
		st_json_path here = { path, c->string, 0 };
		for (const cJSON *b = obj->child; b != c; b = b->next) {
			if (strcmp(b->string, c->string) == 0) {
				fail(rd, true, c, &here, "the field \"%s\" is given twice", c->string);
				break;
			}
		}
		bool ok = false;
		for (int i = 0; i < n_known && !ok; i++)
			ok = strcmp(known[i], c->string) == 0;
		if (!ok && !rd->newer_minor)
			fail(rd, true, c, &here, "unknown field \"%s\"", c->string);
	}
}

/* The member key of obj, or NULL with an error when it is missing. */
static const cJSON *
member(reader *rd, const cJSON *obj, const st_json_path *path, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	if (v == NULL) {
		st_json_path here = { path, key, 0 };
		fail(rd, false, obj, &here, "the field \"%s\" is missing", key);
	}
	return v;
}

/* An object member that must itself be an object; NULL after an error. */
static const cJSON *
object_member(reader *rd, const cJSON *obj, const st_json_path *path, const char *key)
{
	const cJSON *v = member(rd, obj, path, key);
	if (v != NULL && !cJSON_IsObject(v)) {
		fail(rd, false, v, &(st_json_path){ path, key, 0 }, "\"%s\" must be an object", key);
		return NULL;
	}
	return v;
}

/* Integers stored as doubles stay exact up to 2^53. */
#define EXACT_LIMIT 9007199254740992.0

enum { NUMBER, INTEGER };

/* A finite, non-negative number (an integer of at most max when kind is
 * INTEGER); with nullable, null reads as -1. Returns false after an error. */
static bool
number_member(reader *rd, const cJSON *obj, const st_json_path *path, const char *key, int kind, double max,
              bool nullable, double *out)
{
	const cJSON *v = member(rd, obj, path, key);
	st_json_path here = { path, key, 0 };
	if (v == NULL)
		return false;
	if (nullable && cJSON_IsNull(v)) {
		*out = -1;
		return true;
	}
	if (!cJSON_IsNumber(v)) {
		fail(rd, false, v, &here, "\"%s\" must be a %s%s", key, kind == INTEGER ? "whole number" : "number",
		     nullable ? " or null" : "");
		return false;
	}
	double x = v->valuedouble;
	if (!isfinite(x)) {
		fail(rd, false, v, &here, "\"%s\" is too large", key);
		return false;
	}
	if (x < 0) {
		fail(rd, false, v, &here, "\"%s\" must not be negative", key);
		return false;
	}
	if (kind == INTEGER && x != floor(x)) {
		fail(rd, false, v, &here, "\"%s\" must be a whole number", key);
		return false;
	}
	if (x > max) {
		fail(rd, false, v, &here, "\"%s\" is too large", key);
		return false;
	}
	*out = x;
	return true;
}

static void
int_member(reader *rd, const cJSON *obj, const st_json_path *path, const char *key, int *out)
{
	double x;
	if (number_member(rd, obj, path, key, INTEGER, 2147483647.0, false, &x))
		*out = (int)x;
}

static void
int64_member(reader *rd, const cJSON *obj, const st_json_path *path, const char *key, int64_t *out)
{
	double x;
	if (number_member(rd, obj, path, key, INTEGER, EXACT_LIMIT, false, &x))
		*out = (int64_t)x;
}

static void
double_member(reader *rd, const cJSON *obj, const st_json_path *path, const char *key, double *out)
{
	double x;
	if (number_member(rd, obj, path, key, NUMBER, HUGE_VAL, false, &x))
		*out = x;
}

/* A string (or null when nullable, read as NULL); caller's struct owns it. */
static void
string_member(reader *rd, const cJSON *obj, const st_json_path *path, const char *key, bool nullable, char **out)
{
	const cJSON *v = member(rd, obj, path, key);
	if (v == NULL)
		return;
	if (nullable && cJSON_IsNull(v))
		return;
	if (!cJSON_IsString(v)) {
		fail(rd, false, v, &(st_json_path){ path, key, 0 }, "\"%s\" must be a string%s", key,
		     nullable ? " or null" : "");
		return;
	}
	*out = st_xstrdup(v->valuestring);
}

/* An optional list of samples (finite, not negative); *v is the caller's
 * struct's to free. */
static void
read_samples(reader *rd, const cJSON *obj, const st_json_path *path, const char *key, double **v, int *n)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(obj, key);
	if (a == NULL)
		return;
	st_json_path here = { path, key, 0 };
	if (!cJSON_IsArray(a)) {
		fail(rd, false, a, &here, "\"%s\" must be a list of times in milliseconds", key);
		return;
	}
	int count = cJSON_GetArraySize(a);
	*v = st_xcalloc((size_t)(count ? count : 1), sizeof **v);
	*n = 0;
	int i = 0;
	for (const cJSON *x = a->child; x; x = x->next, i++) {
		if (!cJSON_IsNumber(x) || !isfinite(x->valuedouble) || x->valuedouble < 0) {
			fail(rd, false, x, &(st_json_path){ &here, NULL, i },
			     "a sample must be a time in milliseconds: a finite number, not negative");
			continue;
		}
		(*v)[(*n)++] = x->valuedouble;
	}
}

static void
read_times(reader *rd, const cJSON *obj, const st_json_path *path, const char *key, st_report_times *t)
{
	static const char *const known[] = { "count", "mean", "median", "min", "max", "p90", "p95", "p99", "stddev" };
	const cJSON *o = object_member(rd, obj, path, key);
	if (o == NULL)
		return;
	st_json_path here = { path, key, 0 };
	check_fields(rd, o, &here, known, 9);
	int_member(rd, o, &here, "count", &t->count);
	double_member(rd, o, &here, "mean", &t->mean);
	double_member(rd, o, &here, "median", &t->median);
	double_member(rd, o, &here, "min", &t->min);
	double_member(rd, o, &here, "max", &t->max);
	double_member(rd, o, &here, "p90", &t->p90);
	double_member(rd, o, &here, "p95", &t->p95);
	double_member(rd, o, &here, "p99", &t->p99);
	double_member(rd, o, &here, "stddev", &t->stddev);
}

static void
read_summary(reader *rd, const cJSON *s, st_report *r)
{
	static const char *const known[] = { "model", "network", "network_version", "strata_version", "date",
		                             "backend", "device", "format", "threads", "iterations", "warmup",
		                             "batch", "latency_ms", "latency_samples_ms", "throughput", "peak_bytes",
		                             "peak_layer" };
	st_json_path path = { NULL, "summary", 0 };
	check_fields(rd, s, &path, known, (int)(sizeof known / sizeof known[0]));
	string_member(rd, s, &path, "model", true, &r->model);
	string_member(rd, s, &path, "network", true, &r->network);
	string_member(rd, s, &path, "network_version", true, &r->network_version);
	string_member(rd, s, &path, "strata_version", true, &r->strata_version);
	string_member(rd, s, &path, "date", true, &r->date);
	string_member(rd, s, &path, "backend", true, &r->backend);
	string_member(rd, s, &path, "device", true, &r->device);
	string_member(rd, s, &path, "format", true, &r->format);
	int_member(rd, s, &path, "threads", &r->threads);
	int_member(rd, s, &path, "iterations", &r->iterations);
	int_member(rd, s, &path, "warmup", &r->warmup);
	int64_member(rd, s, &path, "batch", &r->batch);
	read_times(rd, s, &path, "latency_ms", &r->latency);
	read_samples(rd, s, &path, "latency_samples_ms", &r->latency_samples, &r->n_latency_samples);
	double_member(rd, s, &path, "throughput", &r->throughput);
	int64_member(rd, s, &path, "peak_bytes", &r->peak_bytes);
	string_member(rd, s, &path, "peak_layer", true, &r->peak_layer);
}

static void
read_layer(reader *rd, const cJSON *o, const st_json_path *path, st_report_layer *l)
{
	static const char *const known[] = { "name", "type", "output", "distance", "time_ms", "share", "flops",
		                             "bytes", "gflops", "gbs", "memory", "counters", "samples_ms" };
	static const char *const memory_known[] = { "allocated", "freed", "live", "persistent" };
	static const char *const counters_known[] = { "cycles", "instructions", "cache_misses" };
	l->cycles = l->instructions = l->cache_misses = -1;
	if (!cJSON_IsObject(o)) {
		fail(rd, false, o, path, "a layer must be an object");
		return;
	}
	check_fields(rd, o, path, known, (int)(sizeof known / sizeof known[0]));
	string_member(rd, o, path, "name", false, &l->name);
	string_member(rd, o, path, "type", false, &l->type);
	string_member(rd, o, path, "output", true, &l->output);
	int_member(rd, o, path, "distance", &l->distance);
	read_times(rd, o, path, "time_ms", &l->time);
	double share;
	if (number_member(rd, o, path, "share", NUMBER, 1.0, false, &share))
		l->share = share;
	double_member(rd, o, path, "flops", &l->flops);
	double_member(rd, o, path, "bytes", &l->bytes);
	double_member(rd, o, path, "gflops", &l->gflops);
	double_member(rd, o, path, "gbs", &l->gbs);
	const cJSON *m = object_member(rd, o, path, "memory");
	if (m != NULL) {
		st_json_path here = { path, "memory", 0 };
		check_fields(rd, m, &here, memory_known, 4);
		int64_member(rd, m, &here, "allocated", &l->mem_allocated);
		int64_member(rd, m, &here, "freed", &l->mem_freed);
		int64_member(rd, m, &here, "live", &l->mem_live);
		int64_member(rd, m, &here, "persistent", &l->mem_persistent);
	}
	const cJSON *c = object_member(rd, o, path, "counters");
	if (c != NULL) {
		st_json_path here = { path, "counters", 0 };
		check_fields(rd, c, &here, counters_known, 3);
		double x;
		if (number_member(rd, c, &here, "cycles", NUMBER, HUGE_VAL, true, &x))
			l->cycles = x;
		if (number_member(rd, c, &here, "instructions", NUMBER, HUGE_VAL, true, &x))
			l->instructions = x;
		if (number_member(rd, c, &here, "cache_misses", NUMBER, HUGE_VAL, true, &x))
			l->cache_misses = x;
	}
	read_samples(rd, o, path, "samples_ms", &l->samples, &l->n_samples);
}

static void
read_profile(reader *rd, const cJSON *p, st_report *r)
{
	static const char *const known[] = { "iterations", "layers", "skipped", "counters_note" };
	st_json_path path = { NULL, "profile", 0 };
	check_fields(rd, p, &path, known, 4);
	if (cJSON_GetObjectItemCaseSensitive(p, "counters_note") != NULL)
		string_member(rd, p, &path, "counters_note", true, &r->counters_note);
	int_member(rd, p, &path, "iterations", &r->profile_iterations);
	const cJSON *layers = member(rd, p, &path, "layers");
	st_json_path lpath = { &path, "layers", 0 };
	if (layers != NULL && !cJSON_IsArray(layers)) {
		fail(rd, false, layers, &lpath, "\"layers\" must be a list of layer objects");
	} else if (layers != NULL) {
		int n = cJSON_GetArraySize(layers);
		r->layers = st_xcalloc((size_t)(n ? n : 1), sizeof *r->layers);
		int i = 0;
		for (const cJSON *o = layers->child; o; o = o->next, i++) {
			read_layer(rd, o, &(st_json_path){ &lpath, NULL, i }, &r->layers[i]);
			r->n_layers = i + 1;
		}
	}
	const cJSON *skipped = member(rd, p, &path, "skipped");
	st_json_path spath = { &path, "skipped", 0 };
	if (skipped != NULL && !cJSON_IsArray(skipped)) {
		fail(rd, false, skipped, &spath, "\"skipped\" must be a list of layer names");
	} else if (skipped != NULL) {
		int n = cJSON_GetArraySize(skipped);
		r->skipped = st_xcalloc((size_t)(n ? n : 1), sizeof *r->skipped);
		int i = 0;
		for (const cJSON *s = skipped->child; s; s = s->next, i++) {
			if (!cJSON_IsString(s)) {
				fail(rd, false, s, &(st_json_path){ &spath, NULL, i }, "a skipped layer must be a name (a string)");
				continue;
			}
			r->skipped[r->n_skipped++] = st_xstrdup(s->valuestring);
		}
	}
}

/* "M.m", both parts short runs of digits. */
static bool
parse_version(const char *s, int *major, int *minor)
{
	char *end;
	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	long a = strtol(s, &end, 10);
	if (*end != '.' || end[1] < '0' || end[1] > '9' || a > 1000000 || errno)
		return false;
	long b = strtol(end + 1, &end, 10);
	if (*end != '\0' || b > 1000000 || errno)
		return false;
	*major = (int)a;
	*minor = (int)b;
	return true;
}

int
st_report_parse(const char *text, size_t len, const char *file, st_report *r, st_diag *d)
{
	static const char *const known[] = { "format", "version", "summary", "profile", "by_type", "slowest" };
	memset(r, 0, sizeof *r);
	reader rd = { .file = file, .diag = d };
	if (st_json_parse(&rd.doc, text, len, file, d) != 0)
		return -1;
	const cJSON *root = rd.doc.root;
	if (!cJSON_IsObject(root)) {
		fail(&rd, false, root, NULL, "a report holds one JSON object with \"format\": \"" ST_REPORT_FORMAT "\"");
		goto done;
	}
	const cJSON *format = cJSON_GetObjectItemCaseSensitive(root, "format");
	if (!cJSON_IsString(format) || strcmp(format->valuestring, ST_REPORT_FORMAT) != 0) {
		fail(&rd, false, format ? format : root, &(st_json_path){ NULL, "format", 0 },
		     "not a Strata report: the field \"format\" must be \"" ST_REPORT_FORMAT "\"");
		goto done;
	}
	const cJSON *version = cJSON_GetObjectItemCaseSensitive(root, "version");
	int major, minor;
	if (!cJSON_IsString(version) || !parse_version(version->valuestring, &major, &minor)) {
		fail(&rd, false, version ? version : root, &(st_json_path){ NULL, "version", 0 },
		     "the field \"version\" must be the format version as a string, such as \"1.0\"");
		goto done;
	}
	if (major != ST_REPORT_MAJOR) {
		fail(&rd, false, version, &(st_json_path){ NULL, "version", 0 },
		     major > ST_REPORT_MAJOR
		         ? "this report uses format version %d.%d, written by a newer Strata; this one reads version %d"
		         : "this report uses format version %d.%d, which this Strata cannot read (it reads version %d)",
		     major, minor, ST_REPORT_MAJOR);
		goto done;
	}
	r->major = major;
	r->minor = minor;
	rd.newer_minor = minor > ST_REPORT_MINOR;
	check_fields(&rd, root, NULL, known, (int)(sizeof known / sizeof known[0]));
	/* by_type and slowest are derived from the layers: the reader recomputes them. */
	const cJSON *summary = object_member(&rd, root, NULL, "summary");
	if (summary != NULL)
		read_summary(&rd, summary, r);
	const cJSON *profile = object_member(&rd, root, NULL, "profile");
	if (profile != NULL)
		read_profile(&rd, profile, r);
done:
	st_json_doc_free(&rd.doc);
	if (rd.errors > 0) {
		st_report_free(r);
		return -1;
	}
	return 0;
}

int
st_report_load(const char *path, st_report *r, st_diag *d)
{
	memset(r, 0, sizeof *r);
	size_t len;
	char *text = st_read_file(path, &len);
	if (text == NULL) {
		st_diag_add(d, ST_SEVERITY_ERROR, path, 0, 0, "cannot read the report: %s", strerror(errno));
		return -1;
	}
	int rc = st_report_parse(text, len, path, r, d);
	free(text);
	return rc;
}

int
st_report_sparkline(st_buf *out, const double *v, int n, int cells, double lo, double hi, bool ascii)
{
	static const char *const blocks[8] = { "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█" };
	static const char steps[8] = { '_', '.', '-', '=', '+', '*', '#', '@' };
	if (v == NULL || n <= 0 || cells <= 0)
		return 0;
	int m = n < cells ? n : cells;
	if (lo >= hi) {
		lo = HUGE_VAL;
		hi = -HUGE_VAL;
		for (int i = 0; i < n; i++) {
			lo = v[i] < lo ? v[i] : lo;
			hi = v[i] > hi ? v[i] : hi;
		}
	}
	for (int c = 0; c < m; c++) {
		/* Cell c covers samples [c*n/m, (c+1)*n/m). */
		int64_t b = (int64_t)c * n / m, e = (int64_t)(c + 1) * n / m;
		double sum = 0;
		for (int64_t i = b; i < e; i++)
			sum += v[i];
		double x = sum / (double)(e - b);
		int level = hi > lo ? (int)((x - lo) / (hi - lo) * 7 + 0.5) : 0;
		level = level < 0 ? 0 : level > 7 ? 7 : level;
		if (ascii)
			st_buf_putc(out, steps[level]);
		else
			st_buf_puts(out, blocks[level]);
	}
	return m;
}

int
st_report_load_many(const char *const *paths, int n, st_report *reports, st_diag *d)
{
	memset(reports, 0, sizeof *reports * (size_t)(n > 0 ? n : 0));
	for (int k = 0; k < n; k++) {
		if (st_report_load(paths[k], &reports[k], d) != 0)
			return -1;
	}
	return 0;
}

void
st_report_free(st_report *r)
{
	if (r == NULL)
		return;
	free(r->model);
	free(r->network);
	free(r->network_version);
	free(r->strata_version);
	free(r->date);
	free(r->backend);
	free(r->device);
	free(r->format);
	free(r->peak_layer);
	free(r->latency_samples);
	free(r->counters_note);
	for (int i = 0; i < r->n_layers; i++) {
		free(r->layers[i].name);
		free(r->layers[i].type);
		free(r->layers[i].output);
		free(r->layers[i].samples);
	}
	free(r->layers);
	for (int i = 0; i < r->n_skipped; i++)
		free(r->skipped[i]);
	free(r->skipped);
	memset(r, 0, sizeof *r);
}
