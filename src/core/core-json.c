/* JSON through cJSON, plus what cJSON lacks: where each value sits in the
 * text (so errors found after parsing can name line and column), and a
 * canonical writer (stable key order and layout, so saving is repeatable). */
#include "config.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "st-core.h"

/* node -> offsets of its value and key in the text, open addressing on the
 * pointer. One entry holds both so that a lookup touches one cache line. */
typedef struct position {
	const cJSON *node;
	uint32_t value;
	uint32_t key; /* where its key starts, for object members; else the value */
} position;

typedef struct position_table {
	position *slots;
	size_t count, cap;
	/* The last offset turned into line and column: the loader asks in text
	 * order, so counting on from here keeps loading linear. */
	size_t cursor;
	int cursor_line, cursor_col;
} position_table;

static size_t
pointer_hash(const void *p)
{
	uintptr_t x = (uintptr_t)p;
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return (size_t)x;
}

static void table_put(position_table *t, const cJSON *node, size_t offset, size_t key_offset);

static void
table_grow(position_table *t)
{
	position_table old = *t;
	t->cap = old.cap ? old.cap * 2 : 256;
	t->count = 0;
	t->slots = st_xcalloc(t->cap, sizeof *t->slots);
	for (size_t i = 0; i < old.cap; i++) {
		if (old.slots[i].node != NULL)
			table_put(t, old.slots[i].node, old.slots[i].value, old.slots[i].key);
	}
	free(old.slots);
}

static void
table_put(position_table *t, const cJSON *node, size_t offset, size_t key_offset)
{
	if ((t->count + 1) * 4 > t->cap * 3)
		table_grow(t);
	size_t mask = t->cap - 1, i = pointer_hash(node) & mask;
	while (t->slots[i].node != NULL && t->slots[i].node != node)
		i = (i + 1) & mask;
	if (t->slots[i].node == NULL)
		t->count++;
	t->slots[i].node = node;
	t->slots[i].value = (uint32_t)offset;
	t->slots[i].key = (uint32_t)key_offset;
}

static bool
table_get(const position_table *t, const cJSON *node, size_t *offset, bool key)
{
	if (t == NULL || t->cap == 0)
		return false;
	size_t mask = t->cap - 1, i = pointer_hash(node) & mask;
	while (t->slots[i].node != NULL) {
		if (t->slots[i].node == node) {
			*offset = key ? t->slots[i].key : t->slots[i].value;
			return true;
		}
		i = (i + 1) & mask;
	}
	return false;
}

/* ---- walking the text beside the parsed tree ---- */

typedef struct walker {
	const char *text, *end;
	position_table *table;
} walker;

/* cJSON skips every byte up to 0x20 as white space; so must the walker. */
static bool
is_space(char c)
{
	return (unsigned char)c <= 0x20;
}

static const char *
skip_ws(const walker *w, const char *p)
{
	while (p < w->end && is_space(*p))
		p++;
	return p;
}

static const char *
skip_string(const walker *w, const char *p)
{
	p++; /* the opening quote */
	while (p < w->end && *p != '"') {
		if (*p == '\\' && p + 1 < w->end)
			p++;
		p++;
	}
	return p < w->end ? p + 1 : p;
}

static const char *
skip_scalar(const walker *w, const char *p)
{
	while (p < w->end && *p != ',' && *p != ']' && *p != '}' && !is_space(*p))
		p++;
	return p;
}

/* Records where node starts and returns the text just after it. The text
 * is known to be valid JSON here: cJSON accepted it. */
static const char *
walk(walker *w, const cJSON *node, const char *p, const char *key)
{
	p = skip_ws(w, p);
	size_t at = (size_t)(p - w->text);
	table_put(w->table, node, at, key ? (size_t)(key - w->text) : at);
	if (p >= w->end)
		return p;
	if (cJSON_IsObject(node)) {
		p++;
		for (const cJSON *c = node->child; c; c = c->next) {
			const char *member_key = p = skip_ws(w, p);
			p = skip_string(w, p);
			p = skip_ws(w, p);
			p++; /* ':' */
			p = walk(w, c, p, member_key);
			p = skip_ws(w, p);
			if (p < w->end && *p == ',')
				p++;
		}
		p = skip_ws(w, p);
		return p < w->end ? p + 1 : p;
	}
	if (cJSON_IsArray(node)) {
		p++;
		for (const cJSON *c = node->child; c; c = c->next) {
			p = walk(w, c, p, NULL);
			p = skip_ws(w, p);
			if (p < w->end && *p == ',')
				p++;
		}
		p = skip_ws(w, p);
		return p < w->end ? p + 1 : p;
	}
	if (cJSON_IsString(node))
		return skip_string(w, p);
	return skip_scalar(w, p);
}

/* Counts lines and characters from (start, l, c) up to offset. */
static void
count_line_col(const char *text, size_t start, size_t offset, int *line, int *col)
{
	int l = *line, c = *col;
	for (size_t i = start; i < offset; i++) {
		if (text[i] == '\n') {
			l++;
			c = 1;
		} else if (((unsigned char)text[i] & 0xC0) != 0x80) {
			c++; /* count characters, not UTF-8 continuation bytes */
		}
	}
	*line = l;
	*col = c;
}

static void
offset_to_line_col(const char *text, size_t len, size_t offset, int *line, int *col)
{
	*line = *col = 1;
	count_line_col(text, 0, offset > len ? len : offset, line, col);
}

/* Whether the text ends inside a string or with a list or object open: then
 * the problem is a truncated file, whatever cJSON points at. */
static bool
unclosed(const char *text, size_t len)
{
	int depth = 0;
	bool in_string = false, any = false;
	for (size_t i = 0; i < len; i++) {
		char c = text[i];
		if (in_string) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_string = false;
			continue;
		}
		if (c == '"')
			in_string = true;
		else if (c == '{' || c == '[')
			depth++;
		else if ((c == '}' || c == ']') && depth > 0)
			depth--;
		if (c != ' ' && c != '\n' && c != '\r' && c != '\t')
			any = true;
	}
	return in_string || depth > 0 || !any;
}

int
st_json_parse(st_json_doc *doc, const char *text, size_t len, const char *file, st_diag *d)
{
	memset(doc, 0, sizeof *doc);
	doc->text = text;
	doc->len = len;
	if (len >= UINT32_MAX) {
		st_diag_add(d, ST_SEVERITY_ERROR, file, 0, 0, "the text is 4 GiB or larger; model files must be smaller");
		return -1;
	}
	if (memchr(text, '\0', len) != NULL) {
		size_t off = (size_t)((const char *)memchr(text, '\0', len) - text);
		int line, col;
		offset_to_line_col(text, len, off, &line, &col);
		st_diag_add(d, ST_SEVERITY_ERROR, file, line, col,
		            "binary data (a NUL byte): this is not a JSON text");
		return -1;
	}
	size_t start = 0;
	if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
		start = 3; /* a UTF-8 byte-order mark */
	const char *end = NULL;
	cJSON *root = cJSON_ParseWithLengthOpts(text + start, len - start, &end, 0);
	if (root == NULL) {
		const char *at = cJSON_GetErrorPtr();
		if (at == NULL || at < text || at > text + len)
			at = text + len;
		bool truncated = unclosed(text, len);
		if (truncated)
			at = text + len; /* point at where the text stops */
		int line, col;
		offset_to_line_col(text, len, (size_t)(at - text), &line, &col);
		if (truncated) {
			st_diag_add(d, ST_SEVERITY_ERROR, file, line, col,
			            len == 0 ? "the file is empty: expected a JSON object"
			                     : "unexpected end of the text: a string, list or object is not closed");
		} else {
			/* Show the text around the error, within its line. */
			const char *from = at, *to = at;
			while (from > text && from[-1] != '\n' && at - from < 20)
				from--;
			while (to < text + len && *to != '\n' && *to != '\r' && to - at < 12)
				to++;
			while (from < to && (*from == ' ' || *from == '\t'))
				from++;
			st_diag_add(d, ST_SEVERITY_ERROR, file, line, col, "invalid JSON near '%.*s'",
			            (int)(to - from), from);
		}
		return -1;
	}
	if (end != NULL) {
		const char *q = end;
		while (q < text + len && (*q == ' ' || *q == '\n' || *q == '\r' || *q == '\t'))
			q++;
		if (q < text + len) {
			int line, col;
			offset_to_line_col(text, len, (size_t)(q - text), &line, &col);
			st_diag_add(d, ST_SEVERITY_ERROR, file, line, col,
			            "unexpected text after the end of the JSON value");
			cJSON_Delete(root);
			return -1;
		}
	}
	position_table *t = st_xcalloc(1, sizeof *t);
	t->cursor_line = t->cursor_col = 1;
	walker w = { .text = text, .end = text + len, .table = t };
	walk(&w, root, text + start, NULL);
	doc->root = root;
	doc->positions = t;
	return 0;
}

void
st_json_doc_free(st_json_doc *doc)
{
	position_table *t = doc->positions;
	if (t != NULL) {
		free(t->slots);
		free(t);
	}
	cJSON_Delete(doc->root);
	memset(doc, 0, sizeof *doc);
}

static void
position_of(const st_json_doc *doc, const cJSON *node, bool key, int *line, int *col)
{
	size_t off;
	*line = *col = 0;
	position_table *t = doc ? doc->positions : NULL;
	if (node == NULL || t == NULL || !table_get(t, node, &off, key))
		return;
	if (off > doc->len)
		off = doc->len;
	if (off < t->cursor) {
		t->cursor = 0;
		t->cursor_line = t->cursor_col = 1;
	}
	count_line_col(doc->text, t->cursor, off, &t->cursor_line, &t->cursor_col);
	t->cursor = off;
	*line = t->cursor_line;
	*col = t->cursor_col;
}

void
st_json_position(const st_json_doc *doc, const cJSON *node, int *line, int *col)
{
	position_of(doc, node, false, line, col);
}

void
st_json_key_position(const st_json_doc *doc, const cJSON *node, int *line, int *col)
{
	position_of(doc, node, true, line, col);
}

/* ---- canonical writing ---- */

void
st_json_write_string(st_buf *out, const char *s)
{
	st_buf_putc(out, '"');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"':
			st_buf_puts(out, "\\\"");
			break;
		case '\\':
			st_buf_puts(out, "\\\\");
			break;
		case '\n':
			st_buf_puts(out, "\\n");
			break;
		case '\t':
			st_buf_puts(out, "\\t");
			break;
		case '\r':
			st_buf_puts(out, "\\r");
			break;
		case '\b':
			st_buf_puts(out, "\\b");
			break;
		case '\f':
			st_buf_puts(out, "\\f");
			break;
		default:
			if (*p < 0x20)
				st_buf_printf(out, "\\u%04x", *p);
			else
				st_buf_putc(out, (char)*p);
		}
	}
	st_buf_putc(out, '"');
}

static void
write_number(st_buf *out, double v)
{
	if (isfinite(v) && v == floor(v) && fabs(v) < 9007199254740992.0)
		st_buf_printf(out, "%.0f", v);
	else if (isfinite(v))
		st_format_double(v, out);
	else
		st_buf_puts(out, "null"); /* JSON has no infinities */
}

static void
indent_to(st_buf *out, int indent)
{
	for (int i = 0; i < indent; i++)
		st_buf_puts(out, "  ");
}

static bool
is_container(const cJSON *v)
{
	return cJSON_IsObject(v) || cJSON_IsArray(v);
}

/* Writes v on one line. */
static void
write_inline(st_buf *out, const cJSON *v)
{
	if (cJSON_IsObject(v) || cJSON_IsArray(v)) {
		bool obj = cJSON_IsObject(v);
		st_buf_putc(out, obj ? '{' : '[');
		for (const cJSON *c = v->child; c; c = c->next) {
			if (c != v->child)
				st_buf_puts(out, ", ");
			if (obj) {
				st_json_write_string(out, c->string);
				st_buf_puts(out, ": ");
			}
			write_inline(out, c);
		}
		st_buf_putc(out, obj ? '}' : ']');
	} else if (cJSON_IsRaw(v)) {
		st_buf_puts(out, v->valuestring);
	} else if (cJSON_IsString(v)) {
		st_json_write_string(out, v->valuestring);
	} else if (cJSON_IsNumber(v)) {
		write_number(out, v->valuedouble);
	} else if (cJSON_IsTrue(v)) {
		st_buf_puts(out, "true");
	} else if (cJSON_IsFalse(v)) {
		st_buf_puts(out, "false");
	} else {
		st_buf_puts(out, "null");
	}
}

/* Short containers of scalars (and of short lists) stay on one line. */
static bool
fits_inline(const cJSON *v)
{
	if (!is_container(v))
		return true;
	st_buf tmp;
	st_buf_init(&tmp);
	for (const cJSON *c = v->child; c; c = c->next) {
		if (cJSON_IsObject(c) || (cJSON_IsArray(c) && !fits_inline(c) ) ) {
			st_buf_free(&tmp);
			return false;
		}
		if (cJSON_IsArray(c)) {
			for (const cJSON *e = c->child; e; e = e->next) {
				if (is_container(e)) {
					st_buf_free(&tmp);
					return false;
				}
			}
		}
	}
	write_inline(&tmp, v);
	bool ok = tmp.len <= 96;
	st_buf_free(&tmp);
	return ok;
}

void
st_json_write_value(st_buf *out, const cJSON *v, int indent)
{
	if (!is_container(v) || v->child == NULL || fits_inline(v)) {
		write_inline(out, v);
		return;
	}
	bool obj = cJSON_IsObject(v);
	st_buf_puts(out, obj ? "{\n" : "[\n");
	for (const cJSON *c = v->child; c; c = c->next) {
		indent_to(out, indent + 1);
		if (obj) {
			st_json_write_string(out, c->string);
			st_buf_puts(out, ": ");
		}
		st_json_write_value(out, c, indent + 1);
		st_buf_puts(out, c->next ? ",\n" : "\n");
	}
	indent_to(out, indent);
	st_buf_putc(out, obj ? '}' : ']');
}

void
st_json_path_text(const st_json_path *p, st_buf *out)
{
	if (p == NULL)
		return;
	st_json_path_text(p->up, out);
	if (p->key != NULL)
		st_buf_printf(out, "%s%s", p->up ? "." : "", p->key);
	else
		st_buf_printf(out, "[%d]", p->index);
}

char *
st_json_document_text(cJSON *root)
{
	st_buf out;
	st_buf_init(&out);
	st_json_write_value(&out, root, 0);
	st_buf_putc(&out, '\n');
	cJSON_Delete(root);
	return st_buf_take(&out);
}
