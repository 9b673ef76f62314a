/* Small utilities shared by every module: allocation, strings, a hash map,
 * diagnostics, names and safe file writing. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "st-core.h"

static void
out_of_memory(size_t size)
{
	fprintf(stderr, "strata: out of memory (asked for %zu bytes)\n", size);
	abort();
}

void *
st_xmalloc(size_t size)
{
	void *p = malloc(size ? size : 1);
	if (p == NULL)
		out_of_memory(size);
	return p;
}

void *
st_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (p == NULL)
		out_of_memory(n * size);
	return p;
}

void *
st_xrealloc(void *p, size_t size)
{
	p = realloc(p, size ? size : 1);
	if (p == NULL)
		out_of_memory(size);
	return p;
}

void *
st_xreallocarray(void *p, size_t n, size_t size)
{
	if (size != 0 && n > SIZE_MAX / size)
		out_of_memory(SIZE_MAX);
	return st_xrealloc(p, n * size);
}

char *
st_xstrdup(const char *s)
{
	return st_xstrndup(s, strlen(s));
}

char *
st_xstrndup(const char *s, size_t n)
{
	char *p = st_xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *
st_xvasprintf(const char *fmt, va_list ap)
{
	va_list aq;
	va_copy(aq, ap);
	int n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	if (n < 0)
		n = 0;
	char *p = st_xmalloc((size_t)n + 1);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	return p;
}

char *
st_xasprintf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *p = st_xvasprintf(fmt, ap);
	va_end(ap);
	return p;
}

/* ---- st_buf ---- */

void
st_buf_init(st_buf *b)
{
	b->data = NULL;
	b->len = b->cap = 0;
}

void
st_buf_free(st_buf *b)
{
	free(b->data);
	st_buf_init(b);
}

void
st_buf_reset(st_buf *b)
{
	b->len = 0;
	if (b->data != NULL)
		b->data[0] = '\0';
}

static void
buf_reserve(st_buf *b, size_t extra)
{
	if (b->len + extra + 1 <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 64;
	while (cap < b->len + extra + 1)
		cap *= 2;
	b->data = st_xrealloc(b->data, cap);
	b->cap = cap;
}

void
st_buf_add(st_buf *b, const char *s, size_t n)
{
	buf_reserve(b, n);
	memcpy(b->data + b->len, s, n);
	b->len += n;
	b->data[b->len] = '\0';
}

void
st_buf_puts(st_buf *b, const char *s)
{
	st_buf_add(b, s, strlen(s));
}

void
st_buf_putc(st_buf *b, char c)
{
	st_buf_add(b, &c, 1);
}

void
st_buf_printf(st_buf *b, const char *fmt, ...)
{
	va_list ap, aq;
	va_start(ap, fmt);
	va_copy(aq, ap);
	int n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	if (n > 0) {
		buf_reserve(b, (size_t)n);
		vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
		b->len += (size_t)n;
	}
	va_end(ap);
}

char *
st_buf_take(st_buf *b)
{
	char *s = b->data ? b->data : st_xstrdup("");
	st_buf_init(b);
	return s;
}

/* ---- st_map: open addressing with linear probing ---- */

#define TOMBSTONE ((const char *)&tombstone_marker)
static const char tombstone_marker;

static uint64_t
hash_string(const char *s)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ull;
	}
	return h;
}

void
st_map_init(st_map *m)
{
	memset(m, 0, sizeof *m);
}

void
st_map_free(st_map *m)
{
	free(m->keys);
	free(m->values);
	st_map_init(m);
}

static size_t
map_slot(const st_map *m, const char *key, bool *found)
{
	size_t mask = m->cap - 1, i = hash_string(key) & mask, first_free = SIZE_MAX;
	for (;;) {
		const char *k = m->keys[i];
		if (k == NULL) {
			*found = false;
			return first_free != SIZE_MAX ? first_free : i;
		}
		if (k == TOMBSTONE) {
			if (first_free == SIZE_MAX)
				first_free = i;
		} else if (strcmp(k, key) == 0) {
			*found = true;
			return i;
		}
		i = (i + 1) & mask;
	}
}

static void
map_grow(st_map *m)
{
	st_map old = *m;
	/* Sized by the live entries only: rehashing also drops the tombstones,
	 * so many removals do not make the table grow. */
	m->cap = 16;
	while ((old.count + 1) * 2 >= m->cap)
		m->cap *= 2;
	m->keys = st_xcalloc(m->cap, sizeof *m->keys);
	m->values = st_xcalloc(m->cap, sizeof *m->values);
	m->count = m->tombstones = 0;
	for (size_t i = 0; i < old.cap; i++) {
		if (old.keys[i] != NULL && old.keys[i] != TOMBSTONE)
			st_map_put(m, old.keys[i], old.values[i]);
	}
	free(old.keys);
	free(old.values);
}

void *
st_map_get(const st_map *m, const char *key)
{
	if (m->count == 0)
		return NULL;
	bool found;
	size_t i = map_slot(m, key, &found);
	return found ? m->values[i] : NULL;
}

void *
st_map_put(st_map *m, const char *key, void *value)
{
	if ((m->count + m->tombstones + 1) * 4 >= m->cap * 3)
		map_grow(m);
	bool found;
	size_t i = map_slot(m, key, &found);
	if (found) {
		void *old = m->values[i];
		m->keys[i] = key;
		m->values[i] = value;
		return old;
	}
	if (m->keys[i] == TOMBSTONE)
		m->tombstones--;
	m->keys[i] = key;
	m->values[i] = value;
	m->count++;
	return NULL;
}

void *
st_map_remove(st_map *m, const char *key)
{
	if (m->count == 0)
		return NULL;
	bool found;
	size_t i = map_slot(m, key, &found);
	if (!found)
		return NULL;
	void *old = m->values[i];
	m->keys[i] = TOMBSTONE;
	m->values[i] = NULL;
	m->count--;
	m->tombstones++;
	return old;
}

/* ---- diagnostics ---- */

void
st_diag_init(st_diag *d)
{
	memset(d, 0, sizeof *d);
}

void
st_diag_free(st_diag *d)
{
	for (int i = 0; i < d->count; i++) {
		free(d->items[i].file);
		free(d->items[i].text);
	}
	free(d->items);
	st_diag_init(d);
}

void
st_diag_vadd(st_diag *d, st_severity sev, const char *file, int line, int col,
             const char *fmt, va_list ap)
{
	if (d == NULL)
		return;
	int limit = d->max_errors > 0 ? d->max_errors : 50;
	if (sev == ST_SEVERITY_ERROR) {
		d->errors++;
		if (d->errors > limit)
			return;
	} else if (sev == ST_SEVERITY_WARNING) {
		d->warnings++;
	}
	if (d->count == d->cap) {
		d->cap = d->cap ? d->cap * 2 : 8;
		d->items = st_xreallocarray(d->items, (size_t)d->cap, sizeof *d->items);
	}
	st_diag_item *it = &d->items[d->count++];
	it->severity = sev;
	it->file = file ? st_xstrdup(file) : NULL;
	it->line = line;
	it->col = col;
	it->text = st_xvasprintf(fmt, ap);
}

void
st_diag_add(st_diag *d, st_severity sev, const char *file, int line, int col,
            const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	st_diag_vadd(d, sev, file, line, col, fmt, ap);
	va_end(ap);
}

const char *
st_severity_name(st_severity s)
{
	switch (s) {
	case ST_SEVERITY_ERROR:
		return "error";
	case ST_SEVERITY_WARNING:
		return "warning";
	default:
		return "info";
	}
}

void
st_diag_print(const st_diag *d, FILE *out)
{
	for (int i = 0; i < d->count; i++) {
		const st_diag_item *it = &d->items[i];
		if (it->file != NULL) {
			fputs(it->file, out);
			if (it->line > 0)
				fprintf(out, ":%d:%d", it->line, it->col);
			fputs(": ", out);
		}
		fprintf(out, "%s: %s\n", st_severity_name(it->severity), it->text);
	}
	int limit = d->max_errors > 0 ? d->max_errors : 50;
	if (d->errors > limit)
		fprintf(out, "(%d more errors not shown)\n", d->errors - limit);
}

/* ---- names ---- */

static const char *const c_keywords[] = {
	"auto", "break", "case", "char", "const", "continue", "default", "do", "double",
	"else", "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long",
	"register", "restrict", "return", "short", "signed", "sizeof", "static", "struct",
	"switch", "typedef", "union", "unsigned", "void", "volatile", "while", "_Alignas",
	"_Alignof", "_Atomic", "_Bool", "_Complex", "_Generic", "_Imaginary", "_Noreturn",
	"_Static_assert", "_Thread_local", NULL
};

static bool
is_ident_char(char c, bool first)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_')
		return true;
	return !first && c >= '0' && c <= '9';
}

const char *
st_name_problem(const char *s)
{
	if (s == NULL || *s == '\0')
		return "a name cannot be empty";
	if (strlen(s) > 128)
		return "a name is at most 128 characters";
	if (!is_ident_char(s[0], true))
		return "a name must start with a letter or '_'";
	for (const char *p = s + 1; *p; p++) {
		if (!is_ident_char(*p, false))
			return "a name may contain only letters, digits and '_'";
	}
	for (int i = 0; c_keywords[i]; i++) {
		if (strcmp(s, c_keywords[i]) == 0)
			return "a name cannot be a C keyword";
	}
	return NULL;
}

bool
st_is_identifier(const char *s)
{
	return st_name_problem(s) == NULL;
}

int
st_edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 64 || lb > 64)
		return INT_MAX / 2;
	int row[65];
	for (size_t j = 0; j <= lb; j++)
		row[j] = (int)j;
	for (size_t i = 1; i <= la; i++) {
		int diag = row[0];
		row[0] = (int)i;
		for (size_t j = 1; j <= lb; j++) {
			int up = row[j];
			int cost = a[i - 1] == b[j - 1] ? 0 : 1;
			int best = diag + cost;
			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

/* ---- files ---- */

char *
st_read_file(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct stat st;
	if (fstat(fd, &st) != 0) {
		int e = errno;
		close(fd);
		errno = e;
		return NULL;
	}
	if (S_ISDIR(st.st_mode)) {
		close(fd);
		errno = EISDIR;
		return NULL;
	}
	size_t cap = st.st_size > 0 ? (size_t)st.st_size + 1 : 4096, n = 0;
	char *data = st_xmalloc(cap);
	for (;;) {
		if (n + 1 >= cap) {
			cap *= 2;
			data = st_xrealloc(data, cap);
		}
		ssize_t got = read(fd, data + n, cap - n - 1);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			free(data);
			close(fd);
			errno = e;
			return NULL;
		}
		if (got == 0)
			break;
		n += (size_t)got;
	}
	close(fd);
	data[n] = '\0';
	if (len != NULL)
		*len = n;
	return data;
}

static int
write_all(int fd, const char *data, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, data, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

int
st_write_file_atomic(const char *path, const char *data, size_t len, char *err, size_t err_size)
{
	/* The temporary lives beside the target so that rename stays on one file system. */
	char *tmp = st_xasprintf("%s.tmp-XXXXXX", path);
	int fd = mkstemp(tmp);
	if (fd < 0) {
		snprintf(err, err_size, "cannot create a temporary file beside %s: %s", path,
		         strerror(errno));
		free(tmp);
		return -1;
	}
	/* Keep the permissions of the file being replaced, or the usual 0644. */
	struct stat st;
	mode_t mode = 0644;
	if (stat(path, &st) == 0)
		mode = st.st_mode & 07777;
	else {
		mode_t mask = umask(0);
		umask(mask);
		mode = 0666 & ~mask;
	}
	(void)fchmod(fd, mode);
	if (write_all(fd, data, len) != 0 || fsync(fd) != 0) {
		snprintf(err, err_size, "cannot write %s: %s", path, strerror(errno));
		close(fd);
		unlink(tmp);
		free(tmp);
		return -1;
	}
	if (close(fd) != 0) {
		snprintf(err, err_size, "cannot write %s: %s", path, strerror(errno));
		unlink(tmp);
		free(tmp);
		return -1;
	}
	if (rename(tmp, path) != 0) {
		snprintf(err, err_size, "cannot replace %s: %s", path, strerror(errno));
		unlink(tmp);
		free(tmp);
		return -1;
	}
	free(tmp);
	/* Make the rename itself durable. */
	char *dir = st_xstrdup(path);
	char *slash = strrchr(dir, '/');
	if (slash == NULL)
		strcpy(dir, ".");
	else if (slash == dir)
		dir[1] = '\0';
	else
		*slash = '\0';
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		(void)fsync(dfd);
		close(dfd);
	}
	free(dir);
	return 0;
}

double
st_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void
st_human_bytes(double v, char *buf, int size)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	int u = 0;
	while (v >= 1024 && u < 5) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, (size_t)size, "%.0f B", v);
	else
		snprintf(buf, (size_t)size, "%.*f %s", v < 10 ? 2 : v < 100 ? 1 : 0, v, units[u]);
}

/* ---- paths written in models ---- */

char *
st_model_path(const char *model_path, const char *written, bool allow_outside, char *err, size_t err_size)
{
	if (written == NULL || written[0] == '\0') {
		snprintf(err, err_size, "the path is empty");
		return NULL;
	}
	if (written[0] == '/' && allow_outside)
		return st_xstrdup(written);
	if (written[0] == '/') {
		snprintf(err, err_size, "'%s' is an absolute path, which a model may not use", written);
		return NULL;
	}
	if (!allow_outside) {
		for (const char *p = written; *p;) {
			size_t n = strcspn(p, "/");
			if (n == 2 && p[0] == '.' && p[1] == '.') {
				snprintf(err, err_size, "'%s' climbs out of the model's folder with '..'", written);
				return NULL;
			}
			p += n + (p[n] == '/');
		}
	}
	const char *slash = strrchr(model_path, '/');
	char *dir = slash != NULL ? st_xstrndup(model_path, (size_t)(slash - model_path)) : st_xstrdup(".");
	if (dir[0] == '\0') {
		free(dir);
		dir = st_xstrdup("/");
	}
	char *path = st_xasprintf("%s/%s", dir, written);
	if (!allow_outside) {
		/* Where it exists, where it really is must be inside too. */
		char *real_dir = realpath(dir, NULL), *real = realpath(path, NULL);
		if (real_dir != NULL && real != NULL) {
			size_t n = strlen(real_dir);
			bool inside = strncmp(real, real_dir, n) == 0 &&
			              (real[n] == '/' || real[n] == '\0' || (n == 1 && real_dir[0] == '/'));
			if (!inside) {
				snprintf(err, err_size, "'%s' leads out of the model's folder through a symbolic link (to %s)",
				         written, real);
				free(path);
				path = NULL;
			}
		}
		free(real_dir);
		free(real);
	}
	free(dir);
	return path;
}
