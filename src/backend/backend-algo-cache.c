/* The algorithm-choice cache: cuDNN choices by key for each (device,
 * library) pair, read strictly (a damaged file is refused whole and never
 * overwritten) and written canonically, so that the file diffs well. */
#include "config.h"

#include <assert.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "st-algo-cache.h"

/*
 * The file (docs/cuda.md):
 *
 *   {
 *     "format": "strata-algo-cache",
 *     "version": 1,
 *     "devices": [
 *       {
 *         "device": "NVIDIA H100 80GB HBM3",
 *         "library": "cudnn 9.10.2 cuda 13.0",
 *         "entries": [
 *           {"key": "conv-fwd fp16 ...", "algo": 1, "math": 0, "workspace": 4096, "ms": 0.0123}
 *         ]
 *       }
 *     ]
 *   }
 *
 * Every field is required and no other is allowed: the cache is rebuilt by
 * measuring, so a file this version does not fully understand is refused
 * rather than half read and then overwritten.
 */

/* Errors beyond this many are counted but not described (nor located,
 * which may mean counting lines from the start again). */
#define REPORT_LIMIT 50

typedef struct entry {
	char *key;
	st_algo_entry value;
	int seq; /* position in the file while reading, for messages */
} entry;

/* The entries of one (device, library) pair, sorted by key. */
typedef struct group {
	char *device, *library;
	entry *entries;
	int count, cap;
	int seq;
} group;

/* Groups sorted by device, then library. */
typedef struct group_set {
	group *groups;
	int count, cap;
	int total; /* entries over all groups */
} group_set;

struct st_algo_cache {
	char *device, *library;
	group_set set;
	char *failed_file; /* the file the last load refused, or NULL */
};

/* ---- sorted sets ---- */

static int
compare_pair(const char *device_a, const char *library_a, const char *device_b, const char *library_b)
{
	int c = strcmp(device_a, device_b);
	return c != 0 ? c : strcmp(library_a, library_b);
}

static int
compare_groups(const void *a, const void *b)
{
	const group *x = a, *y = b;
	int c = compare_pair(x->device, x->library, y->device, y->library);
	return c != 0 ? c : (x->seq > y->seq) - (x->seq < y->seq);
}

static int
compare_entries(const void *a, const void *b)
{
	const entry *x = a, *y = b;
	int c = strcmp(x->key, y->key);
	return c != 0 ? c : (x->seq > y->seq) - (x->seq < y->seq);
}

static void
group_clear(group *g)
{
	for (int i = 0; i < g->count; i++)
		free(g->entries[i].key);
	free(g->entries);
	free(g->device);
	free(g->library);
	memset(g, 0, sizeof *g);
}

static void
set_clear(group_set *s)
{
	for (int i = 0; i < s->count; i++)
		group_clear(&s->groups[i]);
	free(s->groups);
	memset(s, 0, sizeof *s);
}

/* Binary search: the group of the pair, or NULL with its place in *at. */
static group *
set_find(const group_set *s, const char *device, const char *library, int *at)
{
	int lo = 0, hi = s->count;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		int c = compare_pair(device, library, s->groups[mid].device, s->groups[mid].library);
		if (c == 0) {
			if (at != NULL)
				*at = mid;
			return &s->groups[mid];
		}
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (at != NULL)
		*at = lo;
	return NULL;
}

static entry *
group_find(const group *g, const char *key, int *at)
{
	int lo = 0, hi = g->count;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		int c = strcmp(key, g->entries[mid].key);
		if (c == 0) {
			if (at != NULL)
				*at = mid;
			return &g->entries[mid];
		}
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (at != NULL)
		*at = lo;
	return NULL;
}

static void
group_append(group *g, char *key, const st_algo_entry *value, int seq)
{
	if (g->count == g->cap) {
		g->cap = g->cap ? g->cap * 2 : 16;
		g->entries = st_xreallocarray(g->entries, (size_t)g->cap, sizeof *g->entries);
	}
	g->entries[g->count++] = (entry){ .key = key, .value = *value, .seq = seq };
}

static void
set_reserve(group_set *s)
{
	if (s->count == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 4;
		s->groups = st_xreallocarray(s->groups, (size_t)s->cap, sizeof *s->groups);
	}
}

/* Adds a group at the end, taking device and library. */
static group *
set_append(group_set *s, char *device, char *library, int seq)
{
	set_reserve(s);
	group *g = &s->groups[s->count++];
	*g = (group){ .device = device, .library = library, .seq = seq };
	return g;
}

/* The group of the pair, made (empty, in its sorted place) if need be. */
static group *
set_get(group_set *s, const char *device, const char *library)
{
	int at;
	group *g = set_find(s, device, library, &at);
	if (g != NULL)
		return g;
	set_reserve(s);
	memmove(&s->groups[at + 1], &s->groups[at], (size_t)(s->count - at) * sizeof *s->groups);
	s->count++;
	s->groups[at] = (group){ .device = st_xstrdup(device), .library = st_xstrdup(library) };
	return &s->groups[at];
}

/* ---- reading ---- */

typedef struct reader {
	st_json_doc doc;
	const char *file;
	st_diag *d;
	int errors;
} reader;

static void
report_at(reader *r, bool at_key, const cJSON *node, const st_json_path *path, const char *fmt, va_list ap)
{
	if (++r->errors > REPORT_LIMIT)
		return;
	int line, col;
	if (at_key)
		st_json_key_position(&r->doc, node, &line, &col);
	else
		st_json_position(&r->doc, node, &line, &col);
	char *text = st_xvasprintf(fmt, ap);
	st_buf where;
	st_buf_init(&where);
	st_json_path_text(path, &where);
	if (where.len > 0)
		st_diag_add(r->d, ST_SEVERITY_ERROR, r->file, line, col, "%s (at %s)", text, where.data);
	else
		st_diag_add(r->d, ST_SEVERITY_ERROR, r->file, line, col, "%s", text);
	st_buf_free(&where);
	free(text);
}

/* A problem with a value: reported where the value starts. */
static void
report(reader *r, const cJSON *node, const st_json_path *path, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void
report(reader *r, const cJSON *node, const st_json_path *path, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	report_at(r, false, node, path, fmt, ap);
	va_end(ap);
}

/* A problem with a field itself (unknown, repeated): reported at its key. */
static void
report_key(reader *r, const cJSON *node, const st_json_path *path, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void
report_key(reader *r, const cJSON *node, const st_json_path *path, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	report_at(r, true, node, path, fmt, ap);
	va_end(ap);
}

/* The shortest "%g" text of v that reads back exactly (in the C
 * library's locale, like the reading). */
static void
shortest(double v, char *buf, size_t size)
{
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, size, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
}

/* What a value is, for "got ..." in messages. */
static void
describe(const cJSON *v, char *buf, size_t size)
{
	if (cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble) && fabs(v->valuedouble) < 0x1p53)
		snprintf(buf, size, "%.0f", v->valuedouble);
	else if (cJSON_IsNumber(v))
		shortest(v->valuedouble, buf, size);
	else if (cJSON_IsString(v))
		snprintf(buf, size, "a string");
	else if (cJSON_IsBool(v))
		snprintf(buf, size, "%s", cJSON_IsTrue(v) ? "true" : "false");
	else if (cJSON_IsNull(v))
		snprintf(buf, size, "null");
	else if (cJSON_IsArray(v))
		snprintf(buf, size, "a list");
	else
		snprintf(buf, size, "an object");
}

/*
 * Sorts an object's members onto the names it must have: found[i] is the
 * member called names[i], NULL when missing. Unknown, repeated and missing
 * members are errors. Returns false after any error.
 */
static bool
read_members(reader *r, const cJSON *obj, const st_json_path *path, const char *what,
             const char *const *names, const cJSON **found, int n)
{
	int before = r->errors;
	for (int i = 0; i < n; i++)
		found[i] = NULL;
	for (const cJSON *m = obj->child; m != NULL; m = m->next) {
		st_json_path here = { path, m->string, 0 };
		int i = 0;
		while (i < n && strcmp(m->string, names[i]) != 0)
			i++;
		if (i == n)
			report_key(r, m, &here, "unknown field '%s' in %s", m->string, what);
		else if (found[i] != NULL)
			report_key(r, m, &here, "field '%s' is given twice", m->string);
		else
			found[i] = m;
	}
	for (int i = 0; i < n; i++) {
		if (found[i] == NULL)
			report(r, obj, path, "%s has no field '%s'", what, names[i]);
	}
	return r->errors == before;
}

/* A device or library name, or a key: a non-empty string of at most limit
 * bytes. */
static bool
read_text(reader *r, const cJSON *v, const st_json_path *path, size_t limit)
{
	if (!cJSON_IsString(v)) {
		char got[64];
		describe(v, got, sizeof got);
		report(r, v, path, "'%s' must be a string, got %s", path->key, got);
		return false;
	}
	size_t n = strlen(v->valuestring);
	if (n == 0 || n > limit) {
		report(r, v, path, "'%s' must be 1 to %zu bytes long, got %zu", path->key, limit, n);
		return false;
	}
	return true;
}

/* A whole number in [lo, hi]. */
static bool
read_integer(reader *r, const cJSON *v, const st_json_path *path, double lo, double hi, const char *what)
{
	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble != floor(v->valuedouble) ||
	    v->valuedouble < lo || v->valuedouble > hi) {
		char got[64];
		describe(v, got, sizeof got);
		report(r, v, path, "'%s' must be %s from %.0f to %.0f, got %s", path->key, what, lo, hi, got);
		return false;
	}
	return true;
}

static void
read_entry(reader *r, group *g, const cJSON *obj, const st_json_path *path, int seq, int *total)
{
	static const char *const names[] = { "key", "algo", "math", "workspace", "ms" };
	enum { KEY, ALGO, MATH, WORKSPACE, MS, N_FIELDS };
	if (!cJSON_IsObject(obj)) {
		report(r, obj, path, "an entry must be an object with \"key\", \"algo\", \"math\", "
		                     "\"workspace\" and \"ms\"");
		return;
	}
	const cJSON *f[N_FIELDS];
	if (!read_members(r, obj, path, "an entry", names, f, N_FIELDS))
		return;
	st_json_path p[N_FIELDS];
	for (int i = 0; i < N_FIELDS; i++)
		p[i] = (st_json_path){ path, names[i], 0 };
	bool ok = read_text(r, f[KEY], &p[KEY], ST_ALGO_CACHE_MAX_KEY);
	ok &= read_integer(r, f[ALGO], &p[ALGO], INT_MIN, INT_MAX, "an integer");
	ok &= read_integer(r, f[MATH], &p[MATH], INT_MIN, INT_MAX, "an integer");
	ok &= read_integer(r, f[WORKSPACE], &p[WORKSPACE], 0, (double)ST_ALGO_CACHE_MAX_WORKSPACE,
	                   "a whole number of bytes");
	if (!cJSON_IsNumber(f[MS]) || !isfinite(f[MS]->valuedouble)) {
		char got[64];
		describe(f[MS], got, sizeof got);
		report(r, f[MS], &p[MS], "'ms' must be a finite number of milliseconds (negative: unknown), got %s",
		       got);
		ok = false;
	}
	if (!ok)
		return;
	st_algo_entry e = {
		.algo = (int)f[ALGO]->valuedouble,
		.math = (int)f[MATH]->valuedouble,
		.workspace = (uint64_t)f[WORKSPACE]->valuedouble,
		.ms = f[MS]->valuedouble,
	};
	group_append(g, st_xstrdup(f[KEY]->valuestring), &e, seq);
	(*total)++;
}

/* Sorts a group's entries and reports keys given twice, at the later one. */
static void
check_keys(reader *r, group *g, const cJSON *entries, const st_json_path *path)
{
	if (g->count > 1) /* qsort may not be given NULL, even for nothing */
		qsort(g->entries, (size_t)g->count, sizeof *g->entries, compare_entries);
	int first_of_run = 0;
	for (int i = 1; i < g->count; i++) {
		if (strcmp(g->entries[i - 1].key, g->entries[i].key) != 0) {
			first_of_run = i;
			continue;
		}
		if (r->errors >= REPORT_LIMIT) {
			r->errors++;
			continue;
		}
		const cJSON *first = cJSON_GetArrayItem(entries, g->entries[first_of_run].seq);
		const cJSON *again = cJSON_GetArrayItem(entries, g->entries[i].seq);
		int line, col;
		st_json_position(&r->doc, first, &line, &col);
		st_json_path at = { path, NULL, g->entries[i].seq }, key = { &at, "key", 0 };
		report(r, cJSON_GetObjectItemCaseSensitive(again, "key"), &key,
		       "the key \"%s\" is given twice for this device and library (first at line %d, column %d)",
		       g->entries[i].key, line, col);
	}
}

static void
read_group(reader *r, group_set *s, const cJSON *obj, const st_json_path *path, int seq)
{
	static const char *const names[] = { "device", "library", "entries" };
	enum { DEVICE, LIBRARY, ENTRIES, N_FIELDS };
	if (!cJSON_IsObject(obj)) {
		report(r, obj, path, "a device must be an object with \"device\", \"library\" and \"entries\"");
		return;
	}
	const cJSON *f[N_FIELDS];
	if (!read_members(r, obj, path, "a device", names, f, N_FIELDS))
		return;
	st_json_path p[N_FIELDS];
	for (int i = 0; i < N_FIELDS; i++)
		p[i] = (st_json_path){ path, names[i], 0 };
	bool ok = read_text(r, f[DEVICE], &p[DEVICE], ST_ALGO_CACHE_MAX_NAME);
	ok &= read_text(r, f[LIBRARY], &p[LIBRARY], ST_ALGO_CACHE_MAX_NAME);
	if (!cJSON_IsArray(f[ENTRIES])) {
		report(r, f[ENTRIES], &p[ENTRIES], "'entries' must be a list of entries");
		ok = false;
	}
	if (!ok)
		return;
	group *g = set_append(s, st_xstrdup(f[DEVICE]->valuestring), st_xstrdup(f[LIBRARY]->valuestring), seq);
	int i = 0;
	for (const cJSON *e = f[ENTRIES]->child; e != NULL; e = e->next, i++) {
		st_json_path here = { &p[ENTRIES], NULL, i };
		if (s->total >= ST_ALGO_CACHE_MAX_ENTRIES) {
			report(r, e, &here, "the file holds more than %d entries; an algorithm cache is smaller",
			       ST_ALGO_CACHE_MAX_ENTRIES);
			return;
		}
		read_entry(r, g, e, &here, i, &s->total);
	}
	check_keys(r, g, f[ENTRIES], &p[ENTRIES]);
}

/* Sorts the groups and reports pairs given twice, at the later one. */
static void
check_pairs(reader *r, group_set *s, const cJSON *devices)
{
	if (s->count > 1)
		qsort(s->groups, (size_t)s->count, sizeof *s->groups, compare_groups);
	const st_json_path top = { NULL, "devices", 0 };
	int first_of_run = 0;
	for (int i = 1; i < s->count; i++) {
		const group *a = &s->groups[first_of_run], *b = &s->groups[i];
		if (compare_pair(a->device, a->library, b->device, b->library) != 0) {
			first_of_run = i;
			continue;
		}
		if (r->errors >= REPORT_LIMIT) {
			r->errors++;
			continue;
		}
		int line, col;
		st_json_position(&r->doc, cJSON_GetArrayItem(devices, a->seq), &line, &col);
		st_json_path at = { &top, NULL, b->seq };
		report(r, cJSON_GetArrayItem(devices, b->seq), &at,
		       "the device \"%s\" with library \"%s\" is given twice (first at line %d, column %d)",
		       b->device, b->library, line, col);
	}
}

/* Reads a whole file's text into s (empty before). Returns 0, or -1 with
 * errors in d. */
static int
read_document(const char *text, size_t len, const char *file, group_set *s, st_diag *d)
{
	static const char *const names[] = { "format", "version", "devices" };
	enum { TOP_FORMAT, TOP_VERSION, TOP_DEVICES, N_TOP };
	if (len > ST_ALGO_CACHE_MAX_BYTES) {
		st_diag_add(d, ST_SEVERITY_ERROR, file, 0, 0,
		            "the file is %zu bytes; an algorithm cache is at most %u bytes", len,
		            ST_ALGO_CACHE_MAX_BYTES);
		return -1;
	}
	reader r = { .file = file, .d = d };
	if (st_json_parse(&r.doc, text, len, file, d) != 0)
		return -1;
	const cJSON *root = r.doc.root;
	const st_json_path p[N_TOP] = { { NULL, "format", 0 }, { NULL, "version", 0 },
		                           { NULL, "devices", 0 } };
	const cJSON *format = cJSON_IsObject(root) ? cJSON_GetObjectItemCaseSensitive(root, "format") : NULL;
	const cJSON *version = cJSON_IsObject(root) ? cJSON_GetObjectItemCaseSensitive(root, "version") : NULL;
	if (!cJSON_IsString(format) || strcmp(format->valuestring, ST_ALGO_CACHE_FORMAT) != 0) {
		report(&r, format != NULL ? format : root, &p[TOP_FORMAT],
		       "not an algorithm cache: the field \"format\" must be \"" ST_ALGO_CACHE_FORMAT "\"");
	} else if (!cJSON_IsNumber(version) || version->valuedouble != floor(version->valuedouble) ||
	           version->valuedouble < 1) {
		report(&r, version != NULL ? version : root, &p[TOP_VERSION],
		       "the field \"version\" must be the format version, %d", ST_ALGO_CACHE_VERSION);
	} else if (version->valuedouble > ST_ALGO_CACHE_VERSION) {
		report(&r, version, &p[TOP_VERSION],
		       "this algorithm cache has format version %.0f, written by a newer Strata; this one reads "
		       "version %d",
		       fmin(version->valuedouble, 1e9), ST_ALGO_CACHE_VERSION);
	} else {
		/* The devices are read even after a problem with another field,
		 * so that one pass names every problem. */
		const cJSON *f[N_TOP];
		read_members(&r, root, NULL, "the algorithm cache", names, f, N_TOP);
		if (f[TOP_DEVICES] != NULL) {
			if (!cJSON_IsArray(f[TOP_DEVICES])) {
				report(&r, f[TOP_DEVICES], &p[TOP_DEVICES], "'devices' must be a list of devices");
			} else {
				int i = 0;
				for (const cJSON *g = f[TOP_DEVICES]->child; g != NULL; g = g->next, i++) {
					st_json_path here = { &p[TOP_DEVICES], NULL, i };
					read_group(&r, s, g, &here, i);
					if (s->total >= ST_ALGO_CACHE_MAX_ENTRIES && r.errors > 0)
						break;
				}
				check_pairs(&r, s, f[TOP_DEVICES]);
			}
		}
	}
	st_json_doc_free(&r.doc);
	if (r.errors > REPORT_LIMIT)
		st_diag_add(d, ST_SEVERITY_ERROR, file, 0, 0, "%d more errors", r.errors - REPORT_LIMIT);
	if (r.errors > 0) {
		set_clear(s);
		return -1;
	}
	return 0;
}

/* Reads the file at path into s (empty before): a missing file leaves it
 * empty. Returns 0, or -1 with errors in d. */
static int
read_path(const char *path, group_set *s, st_diag *d)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 0;
		st_diag_add(d, ST_SEVERITY_ERROR, path, 0, 0, "cannot read the algorithm cache: %s", strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		st_diag_add(d, ST_SEVERITY_ERROR, path, 0, 0, "the algorithm cache is not a regular file");
		return -1;
	}
	if (st.st_size > (off_t)ST_ALGO_CACHE_MAX_BYTES) {
		st_diag_add(d, ST_SEVERITY_ERROR, path, 0, 0,
		            "the file is %jd bytes; an algorithm cache is at most %u bytes", (intmax_t)st.st_size,
		            ST_ALGO_CACHE_MAX_BYTES);
		return -1;
	}
	size_t len;
	char *text = st_read_file(path, &len);
	if (text == NULL) {
		if (errno == ENOENT)
			return 0; /* gone since stat */
		st_diag_add(d, ST_SEVERITY_ERROR, path, 0, 0, "cannot read the algorithm cache: %s", strerror(errno));
		return -1;
	}
	int rc = read_document(text, len, path, s, d);
	free(text);
	return rc;
}

/* ---- the cache ---- */

st_algo_cache *
st_algo_cache_new(const char *device, const char *library)
{
	assert(device != NULL && device[0] != '\0' && strlen(device) <= ST_ALGO_CACHE_MAX_NAME);
	assert(library != NULL && library[0] != '\0' && strlen(library) <= ST_ALGO_CACHE_MAX_NAME);
	st_algo_cache *c = st_xcalloc(1, sizeof *c);
	c->device = st_xstrdup(device);
	c->library = st_xstrdup(library);
	return c;
}

void
st_algo_cache_free(st_algo_cache *c)
{
	if (c == NULL)
		return;
	set_clear(&c->set);
	free(c->device);
	free(c->library);
	free(c->failed_file);
	free(c);
}

/* Takes what a load read (or nothing, after a failure) as c's contents. */
static int
loaded(st_algo_cache *c, int rc, group_set *s, const char *file, st_diag *d)
{
	set_clear(&c->set);
	free(c->failed_file);
	c->failed_file = NULL;
	if (rc != 0) {
		c->failed_file = st_xstrdup(file);
		st_diag_add(d, ST_SEVERITY_INFO, file, 0, 0,
		            "the algorithm cache is not used and this file is left as it is; delete it to start "
		            "a new one");
		return -1;
	}
	c->set = *s;
	return 0;
}

int
st_algo_cache_load(st_algo_cache *c, const char *path, st_diag *d)
{
	group_set s = { 0 };
	int rc = read_path(path, &s, d);
	return loaded(c, rc, &s, path, d);
}

int
st_algo_cache_parse(st_algo_cache *c, const char *text, size_t len, const char *file, st_diag *d)
{
	group_set s = { 0 };
	int rc = read_document(text, len, file, &s, d);
	return loaded(c, rc, &s, file, d);
}

bool
st_algo_cache_failed(const st_algo_cache *c)
{
	return c->failed_file != NULL;
}

const st_algo_entry *
st_algo_cache_find(const st_algo_cache *c, const char *key)
{
	const group *g = set_find(&c->set, c->device, c->library, NULL);
	if (g == NULL)
		return NULL;
	const entry *e = group_find(g, key, NULL);
	return e != NULL ? &e->value : NULL;
}

int
st_algo_cache_put(st_algo_cache *c, const char *key, const st_algo_entry *e)
{
	size_t n = strlen(key);
	if (n == 0 || n > ST_ALGO_CACHE_MAX_KEY || e->workspace > ST_ALGO_CACHE_MAX_WORKSPACE || !isfinite(e->ms))
		return -1;
	group *g = set_find(&c->set, c->device, c->library, NULL);
	int at = 0;
	entry *old = g != NULL ? group_find(g, key, &at) : NULL;
	if (old != NULL) {
		old->value = *e;
		return 0;
	}
	if (c->set.total >= ST_ALGO_CACHE_MAX_ENTRIES)
		return -1;
	if (g == NULL) {
		g = set_get(&c->set, c->device, c->library);
		at = 0;
	}
	group_append(g, st_xstrdup(key), e, 0);
	entry added = g->entries[g->count - 1];
	memmove(&g->entries[at + 1], &g->entries[at], (size_t)(g->count - 1 - at) * sizeof *g->entries);
	g->entries[at] = added;
	c->set.total++;
	return 0;
}

int
st_algo_cache_count(const st_algo_cache *c)
{
	const group *g = set_find(&c->set, c->device, c->library, NULL);
	return g != NULL ? g->count : 0;
}

/* ---- writing ---- */

/* Appends ms as a JSON number, in the shortest form that reads back
 * exactly. Not st_format_double: printf and strtod follow LC_NUMERIC (the
 * editor sets the user's locale), so the number is found in the locale's
 * form and its decimal separator, whatever it is, becomes JSON's point. */
static void
write_ms(st_buf *b, double ms)
{
	char tmp[48];
	shortest(ms, tmp, sizeof tmp);
	bool real = false, separator = false; /* real: a point or an exponent */
	for (const char *p = tmp; *p != '\0'; p++) {
		if ((*p >= '0' && *p <= '9') || *p == '-' || *p == '+' || *p == 'e') {
			st_buf_putc(b, *p);
			real |= *p == 'e';
			separator = false;
		} else if (!separator) {
			st_buf_putc(b, '.');
			real = separator = true;
		}
	}
	if (!real)
		st_buf_puts(b, ".0");
}

char *
st_algo_cache_text(const st_algo_cache *c)
{
	st_buf b;
	st_buf_init(&b);
	st_buf_puts(&b, "{\n  \"format\": \"" ST_ALGO_CACHE_FORMAT "\",\n");
	st_buf_printf(&b, "  \"version\": %d,\n", ST_ALGO_CACHE_VERSION);
	st_buf_puts(&b, "  \"devices\": [");
	bool first_group = true;
	for (int i = 0; i < c->set.count; i++) {
		const group *g = &c->set.groups[i];
		if (g->count == 0)
			continue;
		st_buf_puts(&b, first_group ? "\n" : ",\n");
		first_group = false;
		st_buf_puts(&b, "    {\n      \"device\": ");
		st_json_write_string(&b, g->device);
		st_buf_puts(&b, ",\n      \"library\": ");
		st_json_write_string(&b, g->library);
		st_buf_puts(&b, ",\n      \"entries\": [\n");
		for (int j = 0; j < g->count; j++) {
			const entry *e = &g->entries[j];
			st_buf_puts(&b, "        {\"key\": ");
			st_json_write_string(&b, e->key);
			st_buf_printf(&b, ", \"algo\": %d, \"math\": %d, \"workspace\": %" PRIu64 ", \"ms\": ",
			              e->value.algo, e->value.math, e->value.workspace);
			write_ms(&b, e->value.ms);
			st_buf_puts(&b, j + 1 < g->count ? "},\n" : "}\n");
		}
		st_buf_puts(&b, "      ]\n    }");
	}
	st_buf_puts(&b, first_group ? "]\n}\n" : "\n  ]\n}\n");
	return st_buf_take(&b);
}

/* Moves an entry into the merged group. */
static void
take_entry(group *out, entry *e, group_set *s)
{
	group_append(out, e->key, &e->value, 0);
	e->key = NULL;
	s->total++;
}

/*
 * Merges two groups of one pair into out, taking their keys: on a key both
 * have, mine wins when mine_wins, else theirs. Entries past the limit on
 * the whole set are dropped (theirs first).
 */
static void
merge_group(group *out, group *mine, group *theirs, bool mine_wins, group_set *s)
{
	int i = 0, j = 0;
	while (i < mine->count || j < theirs->count) {
		int c = i == mine->count ? 1 : j == theirs->count ? -1 : strcmp(mine->entries[i].key, theirs->entries[j].key);
		entry *m = c <= 0 ? &mine->entries[i++] : NULL;
		entry *t = c >= 0 ? &theirs->entries[j++] : NULL;
		entry *pick = m != NULL && t != NULL ? (mine_wins ? m : t) : m != NULL ? m : t;
		if (s->total < ST_ALGO_CACHE_MAX_ENTRIES)
			take_entry(out, pick, s);
	}
}

/*
 * The cache's contents merged with what the file holds: for c's own pair
 * c's entries win, for the others the file's (another process may have
 * measured them since c was loaded). Takes both sets' keys; both are
 * cleared.
 */
static void
merge_sets(const st_algo_cache *c, group_set *mine, group_set *theirs, group_set *out)
{
	memset(out, 0, sizeof *out);
	group empty = { 0 };
	int i = 0, j = 0;
	while (i < mine->count || j < theirs->count) {
		int cmp = i == mine->count   ? 1
		          : j == theirs->count ? -1
		                               : compare_pair(mine->groups[i].device, mine->groups[i].library,
		                                              theirs->groups[j].device, theirs->groups[j].library);
		group *m = cmp <= 0 ? &mine->groups[i++] : &empty;
		group *t = cmp >= 0 ? &theirs->groups[j++] : &empty;
		const group *named = m != &empty ? m : t;
		bool own = compare_pair(named->device, named->library, c->device, c->library) == 0;
		group *g = set_append(out, st_xstrdup(named->device), st_xstrdup(named->library), 0);
		merge_group(g, m, t, own, out);
	}
	set_clear(mine);
	set_clear(theirs);
}

int
st_algo_cache_save(st_algo_cache *c, const char *path, char *err, size_t err_size)
{
	if (c->failed_file != NULL) {
		snprintf(err, err_size,
		         "the algorithm cache %s could not be read, so it was left as it was and nothing was saved; "
		         "delete it to start a new cache",
		         c->failed_file);
		return -1;
	}
	/* What other processes saved since this one loaded. */
	group_set disk = { 0 };
	st_diag d;
	st_diag_init(&d);
	if (read_path(path, &disk, &d) != 0) {
		const st_diag_item *it = &d.items[0];
		char where[32] = "";
		if (it->line > 0)
			snprintf(where, sizeof where, " at line %d, column %d", it->line, it->col);
		snprintf(err, err_size,
		         "the algorithm cache %s can no longer be read (%s%s), so it was left as it was and nothing "
		         "was saved; delete it to start a new cache",
		         path, it->text, where);
		st_diag_free(&d);
		return -1;
	}
	st_diag_free(&d);

	group_set mine = { 0 }, merged;
	/* A copy of c's set, so that c stays as it was when writing fails. */
	for (int i = 0; i < c->set.count; i++) {
		const group *src = &c->set.groups[i];
		group *g = set_append(&mine, st_xstrdup(src->device), st_xstrdup(src->library), 0);
		for (int k = 0; k < src->count; k++)
			group_append(g, st_xstrdup(src->entries[k].key), &src->entries[k].value, 0);
		mine.total += src->count;
	}
	merge_sets(c, &mine, &disk, &merged);
	st_algo_cache view = { .device = c->device, .library = c->library, .set = merged };
	char *text = st_algo_cache_text(&view);
	size_t len = strlen(text);
	int rc = 0;
	if (len > ST_ALGO_CACHE_MAX_BYTES) {
		snprintf(err, err_size,
		         "the algorithm cache would be %zu bytes, over the %u a cache may have; %s was left as it was",
		         len, ST_ALGO_CACHE_MAX_BYTES, path);
		rc = -1;
	}
	char *dir = st_xstrdup(path);
	char *slash = strrchr(dir, '/');
	if (rc == 0 && slash != NULL && slash != dir) {
		*slash = '\0';
		rc = st_make_dirs(dir, err, err_size);
	}
	free(dir);
	if (rc == 0)
		rc = st_write_file_atomic(path, text, len, err, err_size);
	free(text);
	if (rc != 0) {
		set_clear(&merged);
		return -1;
	}
	set_clear(&c->set);
	c->set = merged;
	return 0;
}

char *
st_algo_cache_default_path(void)
{
	char *dir = st_cache_dir();
	if (dir == NULL)
		return NULL;
	char *path = st_xasprintf("%s/" ST_ALGO_CACHE_FILE, dir);
	free(dir);
	return path;
}
