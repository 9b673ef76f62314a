/* Reads and writes ONNX protobuf files without a protobuf library: every
 * length is checked against the end of its message, arrays are sized by a
 * first counting pass, and bytes stay in the caller's buffer or mapping. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "st-onnx.h"

/* Subgraphs (If, Loop, Scan bodies) may nest; deeper than this is refused. */
#define MAX_GRAPH_DEPTH 32

struct st_onnx_mapping {
	char *path;
	void *data;
	size_t len;
};

/* ---- decoding state ---- */

typedef struct dec {
	const uint8_t *base, *limit; /* the whole input */
	st_onnx_model *m;
	char *err;
	size_t err_size;
	char path[512];
	size_t path_len;
	int depth;
} dec;

typedef struct pb_field {
	uint32_t num;
	int wt;
	uint64_t v;                   /* wire types 0, 1, 5 */
	const uint8_t *data;          /* wire type 2 */
	size_t len;
	const uint8_t *start, *end;   /* the whole field, key included */
} pb_field;

static int
fail(dec *d, const uint8_t *at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int
fail(dec *d, const uint8_t *at, const char *fmt, ...)
{
	char what[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	snprintf(d->err, d->err_size, "%s: %s at byte %zu", d->path_len ? d->path : "model", what,
	         (size_t)(at - d->base));
	return -1;
}

/* Appends ".name" or ".name[index]" (index < 0: none) to the path; returns
 * the length to restore with pop. */
static size_t
push(dec *d, const char *name, long index)
{
	size_t mark = d->path_len;
	size_t room = sizeof d->path - mark;
	int n = index >= 0 ? snprintf(d->path + mark, room, "%s%s[%ld]", mark ? "." : "", name, index)
	                   : snprintf(d->path + mark, room, "%s%s", mark ? "." : "", name);
	if (n > 0)
		d->path_len = (size_t)n < room ? mark + (size_t)n : sizeof d->path - 1;
	return mark;
}

static void
pop(dec *d, size_t mark)
{
	d->path_len = mark;
	d->path[mark] = '\0';
}

/* A zeroed array of n elements that the model frees; NULL when n is 0. */
static void *
dalloc(st_onnx_model *m, size_t n, size_t size)
{
	if (n == 0)
		return NULL;
	void *p = st_xcalloc(n, size);
	if (m->n_allocs == m->cap_allocs) {
		m->cap_allocs = m->cap_allocs ? m->cap_allocs * 2 : 64;
		m->allocs = st_xreallocarray(m->allocs, m->cap_allocs, sizeof *m->allocs);
	}
	m->allocs[m->n_allocs++] = p;
	return p;
}

static int
varint(dec *d, const uint8_t **pp, const uint8_t *end, uint64_t *out)
{
	const uint8_t *p = *pp;
	uint64_t v = 0;
	for (int i = 0; i < 10; i++) {
		if (p >= end)
			return fail(d, *pp, "varint cut short by the end of %s",
			            end == d->limit ? "the file" : "its message");
		uint8_t b = *p++;
		if (i == 9 && b > 1)
			return fail(d, *pp, "varint over 64 bits");
		v |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80)) {
			*pp = p;
			*out = v;
			return 0;
		}
	}
	return fail(d, *pp, "varint longer than 10 bytes");
}

static uint64_t
load_le(const uint8_t *p, int n)
{
	uint64_t v = 0;
	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* Reads the next field: 1, 0 at the end, -1 on error. */
static int
next_field(dec *d, const uint8_t **pp, const uint8_t *end, pb_field *f)
{
	const uint8_t *p = *pp;
	if (p >= end)
		return 0;
	f->start = p;
	f->v = 0;
	f->data = NULL;
	f->len = 0;
	uint64_t key;
	if (varint(d, &p, end, &key) != 0)
		return -1;
	if (key >> 3 == 0 || key >> 3 > 0x1fffffff)
		return fail(d, f->start, "field number %" PRIu64 " is invalid", key >> 3);
	f->num = (uint32_t)(key >> 3);
	f->wt = (int)(key & 7);
	switch (f->wt) {
	case 0:
		if (varint(d, &p, end, &f->v) != 0)
			return -1;
		break;
	case 1:
	case 5: {
		int n = f->wt == 1 ? 8 : 4;
		if (end - p < n)
			return fail(d, p, "field %u: %d-byte value past the end of %s", f->num, n,
			            end == d->limit ? "the file" : "its message");
		f->v = load_le(p, n);
		p += n;
		break;
	}
	case 2: {
		uint64_t len;
		const uint8_t *at = p;
		if (varint(d, &p, end, &len) != 0)
			return -1;
		if (len > (uint64_t)(end - p))
			return fail(d, at, "field %u: length %" PRIu64 " past the end of %s", f->num, len,
			            end == d->limit ? "the file" : "its message");
		f->data = p;
		f->len = (size_t)len;
		p += len;
		break;
	}
	case 3:
	case 4:
		return fail(d, f->start, "field %u uses the group wire type %d, which ONNX never uses",
		            f->num, f->wt);
	default:
		return fail(d, f->start, "field %u has the invalid wire type %d", f->num, f->wt);
	}
	f->end = p;
	*pp = p;
	return 1;
}

static int
want(dec *d, const pb_field *f, int wt, const char *name)
{
	if (f->wt == wt)
		return 0;
	return fail(d, f->start, "field %u (%s) has wire type %d, expected %d", f->num, name, f->wt, wt);
}

static st_onnx_str
str_of(const pb_field *f)
{
	/* A present empty string still points somewhere. */
	return (st_onnx_str){ (const char *)(f->len ? f->data : f->end), f->len };
}

/* Counts the elements a repeated numeric field adds, packed or not
 * (elem_wt: 0 varint, 5 fixed32, 1 fixed64). */
static int
rep_count(dec *d, const pb_field *f, int elem_wt, const char *name, size_t *count)
{
	if (f->wt == elem_wt) {
		(*count)++;
		return 0;
	}
	if (f->wt != 2)
		return want(d, f, elem_wt, name);
	if (elem_wt == 0) {
		for (size_t i = 0; i < f->len; i++)
			*count += !(f->data[i] & 0x80);
		return 0;
	}
	size_t size = elem_wt == 5 ? 4 : 8;
	if (f->len % size != 0)
		return fail(d, f->start, "packed %s: %zu bytes is not a whole number of %zu-byte values",
		            name, f->len, size);
	*count += f->len / size;
	return 0;
}

/* Adds the values of a repeated numeric field to arr (as raw 64-bit
 * values, or 32-bit ones when size is 4), never past cap. */
static int
rep_fill(dec *d, const pb_field *f, int elem_wt, void *arr, size_t size, size_t *n, size_t cap)
{
	bool packed = f->wt == 2;
	/* f->data is NULL unless packed, and NULL + 0 is undefined. */
	const uint8_t *p = f->data, *end = packed ? f->data + f->len : NULL;
	while (packed ? p < end : true) {
		uint64_t v;
		if (!packed) {
			v = f->v;
		} else if (elem_wt == 0) {
			if (varint(d, &p, end, &v) != 0)
				return -1;
		} else {
			int k = elem_wt == 5 ? 4 : 8;
			v = load_le(p, k);
			p += k;
		}
		if (*n >= cap)
			return fail(d, f->start, "more values than counted");
		if (size == 4) {
			uint32_t w = (uint32_t)v;
			memcpy((uint8_t *)arr + *n * 4, &w, 4);
		} else {
			memcpy((uint8_t *)arr + *n * 8, &v, 8);
		}
		(*n)++;
		if (!packed)
			break;
	}
	return 0;
}

static void
add_extra(st_onnx_extras *ex, const pb_field *f)
{
	ex->items[ex->count++] = (st_onnx_extra){ f->num, f->start, (size_t)(f->end - f->start) };
}

static int32_t
as_int32(uint64_t v)
{
	uint32_t w = (uint32_t)v;
	int32_t r;
	memcpy(&r, &w, sizeof r);
	return r;
}

static float
as_float(uint64_t v)
{
	uint32_t w = (uint32_t)v;
	float r;
	memcpy(&r, &w, sizeof r);
	return r;
}

/* Each message is read twice: the first pass checks the fields and counts
 * the repeated ones, the second allocates exactly and fills. */
#define EACH_FIELD(q, p, end, f, r) for (const uint8_t *q = (p); ((r) = next_field(d, &q, (end), &(f))) > 0;)

#define SUB(name, index, call)                                 \
	do {                                                   \
		size_t mark_ = push(d, (name), (long)(index)); \
		int rc_ = (call);                              \
		pop(d, mark_);                                 \
		if (rc_ != 0)                                  \
			return -1;                             \
	} while (0)

static int parse_graph(dec *d, const uint8_t *p, const uint8_t *end, st_onnx_graph *g);
static int parse_tensor(dec *d, const uint8_t *p, const uint8_t *end, st_onnx_tensor *t);

static int
parse_entry(dec *d, const uint8_t *p, const uint8_t *end, st_onnx_entry *e)
{
	pb_field f;
	int r;
	size_t n_ex = 0;
	EACH_FIELD(q, p, end, f, r) n_ex += f.num > 2;
	if (r < 0)
		return -1;
	e->extras.items = dalloc(d->m, n_ex, sizeof(st_onnx_extra));
	EACH_FIELD(q, p, end, f, r) {
		if (f.num == 1 || f.num == 2) {
			if (want(d, &f, 2, f.num == 1 ? "key" : "value") != 0)
				return -1;
			*(f.num == 1 ? &e->key : &e->value) = str_of(&f);
		} else {
			add_extra(&e->extras, &f);
		}
	}
	return r;
}

static int
parse_opset(dec *d, const uint8_t *p, const uint8_t *end, st_onnx_opset *o)
{
	pb_field f;
	int r;
	size_t n_ex = 0;
	EACH_FIELD(q, p, end, f, r) n_ex += f.num > 2;
	if (r < 0)
		return -1;
	o->extras.items = dalloc(d->m, n_ex, sizeof(st_onnx_extra));
	EACH_FIELD(q, p, end, f, r) {
		if (f.num == 1) {
			if (want(d, &f, 2, "domain") != 0)
				return -1;
			o->domain = str_of(&f);
		} else if (f.num == 2) {
			if (want(d, &f, 0, "version") != 0)
				return -1;
			o->has_version = true;
			o->version = (int64_t)f.v;
		} else {
			add_extra(&o->extras, &f);
		}
	}
	return r;
}

static int
parse_dim(dec *d, const uint8_t *p, const uint8_t *end, st_onnx_dim *dim)
{
	pb_field f;
	int r;
	size_t n_ex = 0;
	EACH_FIELD(q, p, end, f, r) n_ex += f.num > 3;
	if (r < 0)
		return -1;
	dim->extras.items = dalloc(d->m, n_ex, sizeof(st_onnx_extra));
	EACH_FIELD(q, p, end, f, r) {
		switch (f.num) {
		case 1:
			if (want(d, &f, 0, "dim_value") != 0)
				return -1;
			/* Some exporters (Paddle's) write -1 for a size they do not
			 * know: it is kept as written, and readers treat any value
			 * below 0 as unknown. dim_value and dim_param are a oneof:
			 * the last one wins. */
			dim->has_value = true;
			dim->value = (int64_t)f.v;
			dim->param = (st_onnx_str){ NULL, 0 };
			break;
		case 2:
			if (want(d, &f, 2, "dim_param") != 0)
				return -1;
			dim->param = str_of(&f);
			dim->has_value = false;
			dim->value = 0;
			break;
		case 3:
			if (want(d, &f, 2, "denotation") != 0)
				return -1;
			dim->denotation = str_of(&f);
			break;
		default:
			add_extra(&dim->extras, &f);
		}
	}
	return r;
}

static int
parse_shape(dec *d, const uint8_t *p, const uint8_t *end, st_onnx_type *t)
{
	pb_field f;
	int r;
	size_t n_dims = 0, n_ex = 0;
	EACH_FIELD(q, p, end, f, r) {
		if (f.num == 1) {
			if (want(d, &f, 2, "dim") != 0)
				return -1;
			n_dims++;
		} else {
			n_ex++;
		}
	}
	if (r < 0)
		return -1;
	/* A shape given twice: the last one wins. */
	t->has_shape = true;
	t->n_dims = 0;
	t->dims = dalloc(d->m, n_dims, sizeof *t->dims);
	t->shape_extras = (st_onnx_extras){ dalloc(d->m, n_ex, sizeof(st_onnx_extra)), 0 };
	EACH_FIELD(q, p, end, f, r) {
		if (f.num == 1) {
			SUB("dim", t->n_dims, parse_dim(d, f.data, f.data + f.len, &t->dims[t->n_dims]));
			t->n_dims++;
		} else {
			add_extra(&t->shape_extras, &f);
		}
	}
	return r;
}

static int
parse_type_tensor(dec *d, const uint8_t *p, const uint8_t *end, st_onnx_type *t)
{
	pb_field f;
	int r;
	size_t n_ex = 0;
	EACH_FIELD(q, p, end, f, r) n_ex += f.num > 2;
	if (r < 0)
		return -1;
	t->kind = ST_ONNX_TYPE_TENSOR;
	t->tensor_extras = (st_onnx_extras){ dalloc(d->m, n_ex, sizeof(st_onnx_extra)), 0 };
	EACH_FIELD(q, p, end, f, r) {
		if (f.num == 1) {
			if (want(d, &f, 0, "elem_type") != 0)
				return -1;
			t->has_elem_type = true;
			t->elem_type = as_int32(f.v);
		} else if (f.num == 2) {
			if (want(d, &f, 2, "shape") != 0)
				return -1;
			SUB("shape", -1, parse_shape(d, f.data, f.data + f.len, t));
		} else {
			add_extra(&t->tensor_extras, &f);
		}
	}
	return r;
}

static int
parse_type(dec *d, const uint8_t *p, const uint8_t *end, st_onnx_type *t)
{
	pb_field f;
	int r;
	size_t n_ex = 0;
	EACH_FIELD(q, p, end, f, r) n_ex += f.num != 1 && f.num != 6;
	if (r < 0)
		return -1;
	t->extras.items = dalloc(d->m, n_ex, sizeof(st_onnx_extra));
	bool other = false;
	EACH_FIELD(q, p, end, f, r) {
		if (f.num == 1) {
			if (want(d, &f, 2, "tensor_type") != 0)
				return -1;
			SUB("tensor_type", -1, parse_type_tensor(d, f.data, f.data + f.len, t));
		} else if (f.num == 6) {
			if (want(d, &f, 2, "denotation") != 0)
				return -1;
			t->denotation = str_of(&f);
		} else {
			/* sequence 4, map 5, opaque 7, sparse tensor 8, optional 9 */
			if (f.num == 4 || f.num == 5 || (f.num >= 7 && f.num <= 9))
				other = true;
			add_extra(&t->extras, &f);
		}
	}
	/* The kind does not depend on the order of the fields, so that what
	 * the writer emits reads back the same (a tensor_type wins). */
	if (t->kind != ST_ONNX_TYPE_TENSOR && other)
		t->kind = ST_ONNX_TYPE_OTHER;
	return r;
}

static int
parse_value_info(dec *d, const uint8_t *p, const uint8_t *end, st_onnx_value_info *v)
{
	pb_field f;
	int r;
	size_t n_ex = 0;
	EACH_FIELD(q, p, end, f, r) n_ex += f.num > 3;
	if (r < 0)
		return -1;
	v->extras.items = dalloc(d->m, n_ex, sizeof(st_onnx_extra));
	EACH_FIELD(q, p, end, f, r) {
		switch (f.num) {
		case 1:
			if (want(d, &f, 2, "name") != 0)
				return -1;
			v->name = str_of(&f);
			break;
		case 2:
			if (want(d, &f, 2, "type") != 0)
				return -1;
			memset(&v->type, 0, sizeof v->type);
			v->has_type = true;
			SUB("type", -1, parse_type(d, f.data, f.data + f.len, &v->type));
			break;
		case 3:
			if (want(d, &f, 2, "doc_string") != 0)
				return -1;
			v->doc_string = str_of(&f);
			break;
		default:
			add_extra(&v->extras, &f);
		}
	}
	return r;
}

static int
parse_tensor(dec *d, const uint8_t *p, const uint8_t *end, st_onnx_tensor *t)
{
	pb_field f;
	int r;
	size_t n_dims = 0, n_f = 0, n_i32 = 0, n_s = 0, n_i64 = 0, n_d = 0, n_u64 = 0, n_ext = 0, n_ex = 0;
	EACH_FIELD(q, p, end, f, r) {
		int rc = 0;
		switch (f.num) {
		case 1: rc = rep_count(d, &f, 0, "dims", &n_dims); break;
		case 2: rc = want(d, &f, 0, "data_type"); break;
		case 4: rc = rep_count(d, &f, 5, "float_data", &n_f); break;
		case 5: rc = rep_count(d, &f, 0, "int32_data", &n_i32); break;
		case 6: rc = want(d, &f, 2, "string_data"); n_s++; break;
		case 7: rc = rep_count(d, &f, 0, "int64_data", &n_i64); break;
		case 8: rc = want(d, &f, 2, "name"); break;
		case 9: rc = want(d, &f, 2, "raw_data"); break;
		case 10: rc = rep_count(d, &f, 1, "double_data", &n_d); break;
		case 11: rc = rep_count(d, &f, 0, "uint64_data", &n_u64); break;
		case 12: rc = want(d, &f, 2, "doc_string"); break;
		case 13: rc = want(d, &f, 2, "external_data"); n_ext++; break;
		case 14: rc = want(d, &f, 0, "data_location"); break;
		default: n_ex++;
		}
		if (rc != 0)
			return -1;
	}
	if (r < 0)
		return -1;
	st_onnx_model *m = d->m;
	t->dims = dalloc(m, n_dims, sizeof *t->dims);
	t->float_data = dalloc(m, n_f, sizeof *t->float_data);
	t->int32_data = dalloc(m, n_i32, sizeof *t->int32_data);
	t->string_data = dalloc(m, n_s, sizeof *t->string_data);
	t->int64_data = dalloc(m, n_i64, sizeof *t->int64_data);
	t->double_data = dalloc(m, n_d, sizeof *t->double_data);
	t->uint64_data = dalloc(m, n_u64, sizeof *t->uint64_data);
	t->external_data = dalloc(m, n_ext, sizeof *t->external_data);
	t->extras.items = dalloc(m, n_ex, sizeof(st_onnx_extra));
	EACH_FIELD(q, p, end, f, r) {
		int rc = 0;
		switch (f.num) {
		case 1: rc = rep_fill(d, &f, 0, t->dims, 8, &t->n_dims, n_dims); break;
		case 2:
			t->has_data_type = true;
			t->data_type = as_int32(f.v);
			break;
		case 4: rc = rep_fill(d, &f, 5, t->float_data, 4, &t->n_float_data, n_f); break;
		case 5:
			/* int32 values travel as sign-extended varints; the low 32 bits are the value. */
			rc = rep_fill(d, &f, 0, t->int32_data, 4, &t->n_int32_data, n_i32);
			break;
		case 6: t->string_data[t->n_string_data++] = str_of(&f); break;
		case 7: rc = rep_fill(d, &f, 0, t->int64_data, 8, &t->n_int64_data, n_i64); break;
		case 8: t->name = str_of(&f); break;
		case 9: t->raw_data = str_of(&f); break;
		case 10: rc = rep_fill(d, &f, 1, t->double_data, 8, &t->n_double_data, n_d); break;
		case 11: rc = rep_fill(d, &f, 0, t->uint64_data, 8, &t->n_uint64_data, n_u64); break;
		case 12: t->doc_string = str_of(&f); break;
		case 13:
			SUB("external_data", t->n_external_data,
			    parse_entry(d, f.data, f.data + f.len, &t->external_data[t->n_external_data]));
			t->n_external_data++;
			break;
		case 14:
			t->has_data_location = true;
			t->data_location = as_int32(f.v);
			break;
		default:
			add_extra(&t->extras, &f);
		}
		if (rc != 0)
			return -1;
	}
	if (r < 0)
		return -1;
	/* Sizes: no negative dim, and a product that fits. */
	int64_t count = 1;
	for (size_t i = 0; i < t->n_dims; i++) {
		if (t->dims[i] < 0)
			return fail(d, p, "dims[%zu] is %" PRId64 ", below 0", i, t->dims[i]);
		if (t->dims[i] != 0 && count > INT64_MAX / t->dims[i])
			return fail(d, p, "the dims' product overflows 64 bits at dims[%zu]", i);
		count *= t->dims[i];
	}
	t->count = count;
	return 0;
}

static int
parse_attribute(dec *d, const uint8_t *p, const uint8_t *end, st_onnx_attribute *a)
{
	pb_field f;
	int r;
	size_t n_fl = 0, n_in = 0, n_s = 0, n_t = 0, n_g = 0, n_ex = 0;
	EACH_FIELD(q, p, end, f, r) {
		int rc = 0;
		switch (f.num) {
		case 1: rc = want(d, &f, 2, "name"); break;
		case 2: rc = want(d, &f, 5, "f"); break;
		case 3: rc = want(d, &f, 0, "i"); break;
		case 4: rc = want(d, &f, 2, "s"); break;
		case 5: rc = want(d, &f, 2, "t"); break;
		case 6: rc = want(d, &f, 2, "g"); break;
		case 7: rc = rep_count(d, &f, 5, "floats", &n_fl); break;
		case 8: rc = rep_count(d, &f, 0, "ints", &n_in); break;
		case 9: rc = want(d, &f, 2, "strings"); n_s++; break;
		case 10: rc = want(d, &f, 2, "tensors"); n_t++; break;
		case 11: rc = want(d, &f, 2, "graphs"); n_g++; break;
		case 13: rc = want(d, &f, 2, "doc_string"); break;
		case 20: rc = want(d, &f, 0, "type"); break;
		case 21: rc = want(d, &f, 2, "ref_attr_name"); break;
		default: n_ex++;
		}
		if (rc != 0)
			return -1;
	}
	if (r < 0)
		return -1;
	st_onnx_model *m = d->m;
	a->floats = dalloc(m, n_fl, sizeof *a->floats);
	a->ints = dalloc(m, n_in, sizeof *a->ints);
	a->strings = dalloc(m, n_s, sizeof *a->strings);
	a->tensors = dalloc(m, n_t, sizeof *a->tensors);
	a->graphs = dalloc(m, n_g, sizeof *a->graphs);
	a->extras.items = dalloc(m, n_ex, sizeof(st_onnx_extra));
	EACH_FIELD(q, p, end, f, r) {
		int rc = 0;
		switch (f.num) {
		case 1: a->name = str_of(&f); break;
		case 2:
			a->has_f = true;
			a->f = as_float(f.v);
			break;
		case 3:
			a->has_i = true;
			a->i = (int64_t)f.v;
			break;
		case 4: a->s = str_of(&f); break;
		case 5:
			a->t = dalloc(m, 1, sizeof *a->t);
			SUB("t", -1, parse_tensor(d, f.data, f.data + f.len, a->t));
			break;
		case 6:
			a->g = dalloc(m, 1, sizeof *a->g);
			SUB("g", -1, parse_graph(d, f.data, f.data + f.len, a->g));
			break;
		case 7: rc = rep_fill(d, &f, 5, a->floats, 4, &a->n_floats, n_fl); break;
		case 8: rc = rep_fill(d, &f, 0, a->ints, 8, &a->n_ints, n_in); break;
		case 9: a->strings[a->n_strings++] = str_of(&f); break;
		case 10:
			SUB("tensors", a->n_tensors, parse_tensor(d, f.data, f.data + f.len, &a->tensors[a->n_tensors]));
			a->n_tensors++;
			break;
		case 11:
			SUB("graphs", a->n_graphs, parse_graph(d, f.data, f.data + f.len, &a->graphs[a->n_graphs]));
			a->n_graphs++;
			break;
		case 13: a->doc_string = str_of(&f); break;
		case 20:
			a->has_type = true;
			a->type = as_int32(f.v);
			break;
		case 21: a->ref_attr_name = str_of(&f); break;
		default:
			add_extra(&a->extras, &f);
		}
		if (rc != 0)
			return -1;
	}
	return r;
}

static int
parse_node(dec *d, const uint8_t *p, const uint8_t *end, st_onnx_node *n)
{
	pb_field f;
	int r;
	size_t n_in = 0, n_out = 0, n_attr = 0, n_ex = 0;
	EACH_FIELD(q, p, end, f, r) {
		static const char *const names[] = { NULL, "input", "output", "name", "op_type",
		                                      "attribute", "doc_string", "domain" };
		if (f.num >= 1 && f.num <= 7 && want(d, &f, 2, names[f.num]) != 0)
			return -1;
		n_in += f.num == 1;
		n_out += f.num == 2;
		n_attr += f.num == 5;
		n_ex += f.num > 7;
	}
	if (r < 0)
		return -1;
	n->inputs = dalloc(d->m, n_in, sizeof *n->inputs);
	n->outputs = dalloc(d->m, n_out, sizeof *n->outputs);
	n->attributes = dalloc(d->m, n_attr, sizeof *n->attributes);
	n->extras.items = dalloc(d->m, n_ex, sizeof(st_onnx_extra));
	EACH_FIELD(q, p, end, f, r) {
		switch (f.num) {
		case 1: n->inputs[n->n_inputs++] = str_of(&f); break;
		case 2: n->outputs[n->n_outputs++] = str_of(&f); break;
		case 3: n->name = str_of(&f); break;
		case 4: n->op_type = str_of(&f); break;
		case 5:
			SUB("attribute", n->n_attributes,
			    parse_attribute(d, f.data, f.data + f.len, &n->attributes[n->n_attributes]));
			n->n_attributes++;
			break;
		case 6: n->doc_string = str_of(&f); break;
		case 7: n->domain = str_of(&f); break;
		default: add_extra(&n->extras, &f);
		}
	}
	return r;
}

static int
parse_graph(dec *d, const uint8_t *p, const uint8_t *end, st_onnx_graph *g)
{
	if (d->depth >= MAX_GRAPH_DEPTH)
		return fail(d, p, "subgraphs nested deeper than %d levels", MAX_GRAPH_DEPTH);
	pb_field f;
	int r;
	size_t n_node = 0, n_init = 0, n_in = 0, n_out = 0, n_vi = 0, n_ex = 0;
	EACH_FIELD(q, p, end, f, r) {
		static const char *const names[] = { NULL, "node", "name", NULL, NULL, "initializer", NULL,
		                                     NULL, NULL, NULL, "doc_string", "input", "output",
		                                     "value_info" };
		if (f.num <= 13 && names[f.num] != NULL && want(d, &f, 2, names[f.num]) != 0)
			return -1;
		n_node += f.num == 1;
		n_init += f.num == 5;
		n_in += f.num == 11;
		n_out += f.num == 12;
		n_vi += f.num == 13;
		n_ex += f.num > 13 || (f.num <= 13 && names[f.num] == NULL);
	}
	if (r < 0)
		return -1;
	st_onnx_model *m = d->m;
	g->nodes = dalloc(m, n_node, sizeof *g->nodes);
	g->initializers = dalloc(m, n_init, sizeof *g->initializers);
	g->inputs = dalloc(m, n_in, sizeof *g->inputs);
	g->outputs = dalloc(m, n_out, sizeof *g->outputs);
	g->value_info = dalloc(m, n_vi, sizeof *g->value_info);
	g->extras.items = dalloc(m, n_ex, sizeof(st_onnx_extra));
	d->depth++;
	EACH_FIELD(q, p, end, f, r) {
		switch (f.num) {
		case 1:
			SUB("node", g->n_nodes, parse_node(d, f.data, f.data + f.len, &g->nodes[g->n_nodes]));
			g->n_nodes++;
			break;
		case 2: g->name = str_of(&f); break;
		case 5:
			SUB("initializer", g->n_initializers,
			    parse_tensor(d, f.data, f.data + f.len, &g->initializers[g->n_initializers]));
			g->n_initializers++;
			break;
		case 10: g->doc_string = str_of(&f); break;
		case 11:
			SUB("input", g->n_inputs, parse_value_info(d, f.data, f.data + f.len, &g->inputs[g->n_inputs]));
			g->n_inputs++;
			break;
		case 12:
			SUB("output", g->n_outputs,
			    parse_value_info(d, f.data, f.data + f.len, &g->outputs[g->n_outputs]));
			g->n_outputs++;
			break;
		case 13:
			SUB("value_info", g->n_value_info,
			    parse_value_info(d, f.data, f.data + f.len, &g->value_info[g->n_value_info]));
			g->n_value_info++;
			break;
		default: add_extra(&g->extras, &f);
		}
	}
	d->depth--;
	return r;
}

static int
parse_model(dec *d, const uint8_t *p, const uint8_t *end, st_onnx_model *m)
{
	pb_field f;
	int r;
	size_t n_op = 0, n_meta = 0, n_ex = 0;
	EACH_FIELD(q, p, end, f, r) {
		static const char *const names[] = { NULL, "ir_version", "producer_name", "producer_version",
		                                     "domain", "model_version", "doc_string", "graph",
		                                     "opset_import" };
		int rc = 0;
		if (f.num == 1 || f.num == 5)
			rc = want(d, &f, 0, names[f.num]);
		else if (f.num >= 2 && f.num <= 8)
			rc = want(d, &f, 2, names[f.num]);
		else if (f.num == 14)
			rc = want(d, &f, 2, "metadata_props");
		if (rc != 0)
			return -1;
		n_op += f.num == 8;
		n_meta += f.num == 14;
		n_ex += f.num > 8 && f.num != 14;
	}
	if (r < 0)
		return -1;
	m->opsets = dalloc(m, n_op, sizeof *m->opsets);
	m->metadata_props = dalloc(m, n_meta, sizeof *m->metadata_props);
	m->extras.items = dalloc(m, n_ex, sizeof(st_onnx_extra));
	EACH_FIELD(q, p, end, f, r) {
		switch (f.num) {
		case 1:
			m->has_ir_version = true;
			m->ir_version = (int64_t)f.v;
			break;
		case 2: m->producer_name = str_of(&f); break;
		case 3: m->producer_version = str_of(&f); break;
		case 4: m->domain = str_of(&f); break;
		case 5:
			m->has_model_version = true;
			m->model_version = (int64_t)f.v;
			break;
		case 6: m->doc_string = str_of(&f); break;
		case 7:
			m->graph = dalloc(m, 1, sizeof *m->graph);
			SUB("graph", -1, parse_graph(d, f.data, f.data + f.len, m->graph));
			break;
		case 8:
			SUB("opset_import", m->n_opsets, parse_opset(d, f.data, f.data + f.len, &m->opsets[m->n_opsets]));
			m->n_opsets++;
			break;
		case 14:
			SUB("metadata_props", m->n_metadata_props,
			    parse_entry(d, f.data, f.data + f.len, &m->metadata_props[m->n_metadata_props]));
			m->n_metadata_props++;
			break;
		default: add_extra(&m->extras, &f);
		}
	}
	return r;
}

static void
model_release(st_onnx_model *m)
{
	for (size_t i = 0; i < m->n_allocs; i++)
		free(m->allocs[i]);
	free(m->allocs);
	for (size_t i = 0; i < m->n_maps; i++) {
		if (m->maps[i].data != NULL)
			munmap(m->maps[i].data, m->maps[i].len);
		free(m->maps[i].path);
	}
	free(m->maps);
	memset(m, 0, sizeof *m);
}

void
st_onnx_free(st_onnx_model *model)
{
	if (model != NULL)
		model_release(model);
}

/* Parses into a model that may already hold mappings (st_onnx_open). */
static int
parse_into(const void *data, size_t len, st_onnx_model *model, char *err, size_t err_size)
{
	dec d = { .base = data, .limit = (const uint8_t *)data + len, .m = model, .err = err,
	          .err_size = err_size };
	if (len > 0 && parse_model(&d, data, (const uint8_t *)data + len, model) != 0) {
		/* Keep the mappings for st_onnx_free; drop the half-built model. */
		st_onnx_model keep = { .maps = model->maps, .n_maps = model->n_maps };
		model->maps = NULL;
		model->n_maps = 0;
		model_release(model);
		*model = keep;
		return -1;
	}
	return 0;
}

int
st_onnx_parse(const void *data, size_t len, st_onnx_model *model, char *err, size_t err_size)
{
	memset(model, 0, sizeof *model);
	return parse_into(len ? data : "", len, model, err, err_size);
}

/* ---- files and external data ---- */

/* Maps path read-only and adds it to the model's mappings. */
static struct st_onnx_mapping *
map_file(st_onnx_model *m, const char *path, char *err, size_t err_size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, err_size, "%s: %s", path, strerror(errno));
		return NULL;
	}
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, err_size, "%s: not a regular file", path);
		close(fd);
		return NULL;
	}
	void *data = NULL;
	size_t len = (size_t)st.st_size;
	if (len > 0) {
		data = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
		if (data == MAP_FAILED) {
			snprintf(err, err_size, "%s: %s", path, strerror(errno));
			close(fd);
			return NULL;
		}
	}
	close(fd);
	m->maps = st_xreallocarray(m->maps, m->n_maps + 1, sizeof *m->maps);
	struct st_onnx_mapping *map = &m->maps[m->n_maps++];
	*map = (struct st_onnx_mapping){ st_xstrdup(path), data, len };
	return map;
}

static bool
parse_size(st_onnx_str s, uint64_t *out)
{
	if (s.data == NULL || s.len == 0 || s.len > 19)
		return false;
	uint64_t v = 0;
	for (size_t i = 0; i < s.len; i++) {
		if (s.data[i] < '0' || s.data[i] > '9')
			return false;
		v = v * 10 + (uint64_t)(s.data[i] - '0');
	}
	*out = v;
	return true;
}

typedef struct resolver {
	st_onnx_model *m;
	const char *model_path;
	char *err;
	size_t err_size;
	char path[512];
} resolver;

static int resolve_graph(resolver *rs, st_onnx_graph *g, const char *where, int depth);

static int
resolve_tensor(resolver *rs, st_onnx_tensor *t, const char *where)
{
	if (!t->has_data_location || t->data_location != 1)
		return 0;
	st_onnx_str location = { NULL, 0 }, offset = { NULL, 0 }, length = { NULL, 0 };
	for (size_t i = 0; i < t->n_external_data; i++) {
		const st_onnx_entry *e = &t->external_data[i];
		if (st_onnx_str_eq(e->key, "location"))
			location = e->value;
		else if (st_onnx_str_eq(e->key, "offset"))
			offset = e->value;
		else if (st_onnx_str_eq(e->key, "length"))
			length = e->value;
	}
	char why[512];
	if (location.data == NULL || location.len == 0) {
		snprintf(rs->err, rs->err_size, "%s: external data without a location", where);
		return -1;
	}
	char *written = st_onnx_str_dup(location);
	if (strlen(written) != location.len) {
		snprintf(rs->err, rs->err_size, "%s: the external data location holds a NUL byte", where);
		free(written);
		return -1;
	}
	char *path = st_model_path(rs->model_path, written, false, why, sizeof why);
	if (path == NULL) {
		snprintf(rs->err, rs->err_size, "%s: external data: %s", where, why);
		free(written);
		return -1;
	}
	struct st_onnx_mapping *map = NULL;
	for (size_t i = 1; i < rs->m->n_maps; i++)
		if (strcmp(rs->m->maps[i].path, path) == 0)
			map = &rs->m->maps[i];
	if (map == NULL)
		map = map_file(rs->m, path, why, sizeof why);
	free(path);
	if (map == NULL) {
		snprintf(rs->err, rs->err_size, "%s: external data '%s': %s", where, written, why);
		free(written);
		return -1;
	}
	uint64_t off = 0, len;
	if (offset.data != NULL && !parse_size(offset, &off)) {
		snprintf(rs->err, rs->err_size, "%s: external data offset '%.*s' is not a number", where,
		         (int)(offset.len > 40 ? 40 : offset.len), offset.data);
		free(written);
		return -1;
	}
	if (length.data != NULL && !parse_size(length, &len)) {
		snprintf(rs->err, rs->err_size, "%s: external data length '%.*s' is not a number", where,
		         (int)(length.len > 40 ? 40 : length.len), length.data);
		free(written);
		return -1;
	}
	if (off > map->len || (length.data != NULL && len > map->len - off)) {
		snprintf(rs->err, rs->err_size,
		         "%s: external data '%s': offset %" PRIu64 " and length %" PRIu64
		         " reach past its end (%zu bytes)",
		         where, written, off, length.data != NULL ? len : 0, map->len);
		free(written);
		return -1;
	}
	free(written);
	if (length.data == NULL)
		len = map->len - off;
	t->external = (const uint8_t *)map->data + off;
	t->external_len = (size_t)len;
	if (t->external == NULL)
		t->external = (const uint8_t *)"";
	return 0;
}

static int
resolve_attribute(resolver *rs, st_onnx_attribute *a, const char *where, int depth)
{
	char *sub;
	int rc = 0;
	if (a->t != NULL) {
		sub = st_xasprintf("%s.t", where);
		rc = resolve_tensor(rs, a->t, sub);
		free(sub);
	}
	if (rc == 0 && a->g != NULL) {
		sub = st_xasprintf("%s.g", where);
		rc = resolve_graph(rs, a->g, sub, depth + 1);
		free(sub);
	}
	for (size_t i = 0; rc == 0 && i < a->n_tensors; i++) {
		sub = st_xasprintf("%s.tensors[%zu]", where, i);
		rc = resolve_tensor(rs, &a->tensors[i], sub);
		free(sub);
	}
	for (size_t i = 0; rc == 0 && i < a->n_graphs; i++) {
		sub = st_xasprintf("%s.graphs[%zu]", where, i);
		rc = resolve_graph(rs, &a->graphs[i], sub, depth + 1);
		free(sub);
	}
	return rc;
}

static int
resolve_graph(resolver *rs, st_onnx_graph *g, const char *where, int depth)
{
	int rc = 0;
	if (depth > MAX_GRAPH_DEPTH)
		return 0; /* the parser refused deeper ones already */
	for (size_t i = 0; rc == 0 && i < g->n_initializers; i++) {
		char *sub = st_xasprintf("%s.initializer[%zu]", where, i);
		rc = resolve_tensor(rs, &g->initializers[i], sub);
		free(sub);
	}
	for (size_t i = 0; rc == 0 && i < g->n_nodes; i++)
		for (size_t j = 0; rc == 0 && j < g->nodes[i].n_attributes; j++) {
			char *sub = st_xasprintf("%s.node[%zu].attribute[%zu]", where, i, j);
			rc = resolve_attribute(rs, &g->nodes[i].attributes[j], sub, depth);
			free(sub);
		}
	return rc;
}

int
st_onnx_open(const char *path, st_onnx_model *model, char *err, size_t err_size)
{
	memset(model, 0, sizeof *model);
	struct st_onnx_mapping *map = map_file(model, path, err, err_size);
	if (map == NULL)
		return -1;
	const void *data = map->data;
	size_t len = map->len;
	char why[512];
	if (parse_into(data != NULL ? data : "", len, model, why, sizeof why) != 0) {
		snprintf(err, err_size, "%s: %s", path, why);
		return -1;
	}
	resolver rs = { .m = model, .model_path = path, .err = why, .err_size = sizeof why };
	if (model->graph != NULL && resolve_graph(&rs, model->graph, "graph", 0) != 0) {
		snprintf(err, err_size, "%s: %s", path, why);
		return -1;
	}
	return 0;
}

/* ---- encoding ---- */

static void
put_varint(st_buf *b, uint64_t v)
{
	char tmp[10];
	size_t n = 0;
	do {
		tmp[n++] = (char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v != 0);
	st_buf_add(b, tmp, n);
}

static void
put_key(st_buf *b, uint32_t field, int wt)
{
	put_varint(b, (uint64_t)field << 3 | (uint64_t)wt);
}

static void
put_le(st_buf *b, uint64_t v, int n)
{
	char tmp[8];
	for (int i = 0; i < n; i++)
		tmp[i] = (char)(v >> (8 * i));
	st_buf_add(b, tmp, (size_t)n);
}

static void
put_str(st_buf *b, uint32_t field, st_onnx_str s)
{
	if (s.data == NULL)
		return;
	put_key(b, field, 2);
	put_varint(b, s.len);
	st_buf_add(b, s.data, s.len);
}

static void
put_int(st_buf *b, uint32_t field, bool has, int64_t v)
{
	if (!has)
		return;
	put_key(b, field, 0);
	put_varint(b, (uint64_t)v);
}

static void
put_float(st_buf *b, uint32_t field, float f)
{
	uint32_t w;
	memcpy(&w, &f, 4);
	put_key(b, field, 5);
	put_le(b, w, 4);
}

/* Starts a length-delimited field whose size is not known yet; end_len
 * inserts the length once the content is written. */
static size_t
begin_len(st_buf *b, uint32_t field)
{
	put_key(b, field, 2);
	return b->len;
}

static void
end_len(st_buf *b, size_t start)
{
	size_t len = b->len - start;
	char tmp[10];
	size_t n = 0;
	uint64_t v = len;
	do {
		tmp[n++] = (char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v != 0);
	st_buf_add(b, tmp, n); /* grows the buffer by n */
	memmove(b->data + start + n, b->data + start, len);
	memcpy(b->data + start, tmp, n);
}

/* Puts back the kept fields numbered below field (all when field is 0). */
static void
put_extras(st_buf *b, const st_onnx_extras *ex, size_t *i, uint32_t field)
{
	while (*i < ex->count && (field == 0 || ex->items[*i].field < field)) {
		st_buf_add(b, (const char *)ex->items[*i].data, ex->items[*i].len);
		(*i)++;
	}
}

static void encode_graph(st_buf *b, const st_onnx_graph *g);

static void
encode_entry(st_buf *b, const st_onnx_entry *e)
{
	size_t x = 0;
	put_str(b, 1, e->key);
	put_extras(b, &e->extras, &x, 2);
	put_str(b, 2, e->value);
	put_extras(b, &e->extras, &x, 0);
}

static void
encode_type(st_buf *b, const st_onnx_type *t)
{
	size_t x = 0;
	if (t->kind == ST_ONNX_TYPE_TENSOR) {
		size_t tx = 0, start = begin_len(b, 1);
		put_int(b, 1, t->has_elem_type, t->elem_type);
		put_extras(b, &t->tensor_extras, &tx, 2);
		if (t->has_shape) {
			size_t sx = 0, s = begin_len(b, 2);
			for (size_t i = 0; i < t->n_dims; i++) {
				const st_onnx_dim *dim = &t->dims[i];
				size_t dx = 0, ds = begin_len(b, 1);
				put_int(b, 1, dim->has_value, dim->value);
				put_extras(b, &dim->extras, &dx, 2);
				put_str(b, 2, dim->param);
				put_extras(b, &dim->extras, &dx, 3);
				put_str(b, 3, dim->denotation);
				put_extras(b, &dim->extras, &dx, 0);
				end_len(b, ds);
			}
			put_extras(b, &t->shape_extras, &sx, 0);
			end_len(b, s);
		}
		put_extras(b, &t->tensor_extras, &tx, 0);
		end_len(b, start);
	}
	put_extras(b, &t->extras, &x, 6);
	put_str(b, 6, t->denotation);
	put_extras(b, &t->extras, &x, 0);
}

static void
encode_value_info(st_buf *b, const st_onnx_value_info *v)
{
	size_t x = 0;
	put_str(b, 1, v->name);
	put_extras(b, &v->extras, &x, 2);
	if (v->has_type) {
		size_t s = begin_len(b, 2);
		encode_type(b, &v->type);
		end_len(b, s);
	}
	put_extras(b, &v->extras, &x, 3);
	put_str(b, 3, v->doc_string);
	put_extras(b, &v->extras, &x, 0);
}

static void
encode_packed_varints(st_buf *b, uint32_t field, const void *arr, size_t n, int kind)
{
	if (n == 0)
		return;
	size_t s = begin_len(b, field);
	for (size_t i = 0; i < n; i++) {
		uint64_t v;
		if (kind == 32) {
			int32_t w;
			memcpy(&w, (const char *)arr + i * 4, 4);
			v = (uint64_t)(int64_t)w;
		} else {
			memcpy(&v, (const char *)arr + i * 8, 8);
		}
		put_varint(b, v);
	}
	end_len(b, s);
}

static void
encode_tensor(st_buf *b, const st_onnx_tensor *t)
{
	size_t x = 0;
	for (size_t i = 0; i < t->n_dims; i++)
		put_int(b, 1, true, t->dims[i]);
	put_extras(b, &t->extras, &x, 2);
	put_int(b, 2, t->has_data_type, t->data_type);
	put_extras(b, &t->extras, &x, 4);
	if (t->n_float_data > 0) {
		put_key(b, 4, 2);
		put_varint(b, t->n_float_data * 4);
		for (size_t i = 0; i < t->n_float_data; i++) {
			uint32_t w;
			memcpy(&w, &t->float_data[i], 4);
			put_le(b, w, 4);
		}
	}
	encode_packed_varints(b, 5, t->int32_data, t->n_int32_data, 32);
	for (size_t i = 0; i < t->n_string_data; i++)
		put_str(b, 6, t->string_data[i]);
	encode_packed_varints(b, 7, t->int64_data, t->n_int64_data, 64);
	put_extras(b, &t->extras, &x, 8);
	put_str(b, 8, t->name);
	put_str(b, 9, t->raw_data);
	if (t->n_double_data > 0) {
		put_key(b, 10, 2);
		put_varint(b, t->n_double_data * 8);
		for (size_t i = 0; i < t->n_double_data; i++) {
			uint64_t w;
			memcpy(&w, &t->double_data[i], 8);
			put_le(b, w, 8);
		}
	}
	encode_packed_varints(b, 11, t->uint64_data, t->n_uint64_data, 64);
	put_extras(b, &t->extras, &x, 12);
	put_str(b, 12, t->doc_string);
	for (size_t i = 0; i < t->n_external_data; i++) {
		size_t s = begin_len(b, 13);
		encode_entry(b, &t->external_data[i]);
		end_len(b, s);
	}
	put_int(b, 14, t->has_data_location, t->data_location);
	put_extras(b, &t->extras, &x, 0);
}

static void
encode_attribute(st_buf *b, const st_onnx_attribute *a)
{
	size_t x = 0;
	put_str(b, 1, a->name);
	if (a->has_f)
		put_float(b, 2, a->f);
	put_int(b, 3, a->has_i, a->i);
	put_str(b, 4, a->s);
	if (a->t != NULL) {
		size_t s = begin_len(b, 5);
		encode_tensor(b, a->t);
		end_len(b, s);
	}
	if (a->g != NULL) {
		size_t s = begin_len(b, 6);
		encode_graph(b, a->g);
		end_len(b, s);
	}
	for (size_t i = 0; i < a->n_floats; i++)
		put_float(b, 7, a->floats[i]);
	for (size_t i = 0; i < a->n_ints; i++)
		put_int(b, 8, true, a->ints[i]);
	for (size_t i = 0; i < a->n_strings; i++)
		put_str(b, 9, a->strings[i]);
	for (size_t i = 0; i < a->n_tensors; i++) {
		size_t s = begin_len(b, 10);
		encode_tensor(b, &a->tensors[i]);
		end_len(b, s);
	}
	for (size_t i = 0; i < a->n_graphs; i++) {
		size_t s = begin_len(b, 11);
		encode_graph(b, &a->graphs[i]);
		end_len(b, s);
	}
	put_extras(b, &a->extras, &x, 13);
	put_str(b, 13, a->doc_string);
	put_extras(b, &a->extras, &x, 20);
	put_int(b, 20, a->has_type, a->type);
	put_str(b, 21, a->ref_attr_name);
	put_extras(b, &a->extras, &x, 0);
}

static void
encode_node(st_buf *b, const st_onnx_node *n)
{
	size_t x = 0;
	for (size_t i = 0; i < n->n_inputs; i++)
		put_str(b, 1, n->inputs[i]);
	for (size_t i = 0; i < n->n_outputs; i++)
		put_str(b, 2, n->outputs[i]);
	put_str(b, 3, n->name);
	put_str(b, 4, n->op_type);
	for (size_t i = 0; i < n->n_attributes; i++) {
		size_t s = begin_len(b, 5);
		encode_attribute(b, &n->attributes[i]);
		end_len(b, s);
	}
	put_str(b, 6, n->doc_string);
	put_str(b, 7, n->domain);
	put_extras(b, &n->extras, &x, 0);
}

static void
encode_value_infos(st_buf *b, uint32_t field, const st_onnx_value_info *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		size_t s = begin_len(b, field);
		encode_value_info(b, &v[i]);
		end_len(b, s);
	}
}

static void
encode_graph(st_buf *b, const st_onnx_graph *g)
{
	size_t x = 0;
	for (size_t i = 0; i < g->n_nodes; i++) {
		size_t s = begin_len(b, 1);
		encode_node(b, &g->nodes[i]);
		end_len(b, s);
	}
	put_str(b, 2, g->name);
	put_extras(b, &g->extras, &x, 5);
	for (size_t i = 0; i < g->n_initializers; i++) {
		size_t s = begin_len(b, 5);
		encode_tensor(b, &g->initializers[i]);
		end_len(b, s);
	}
	put_extras(b, &g->extras, &x, 10);
	put_str(b, 10, g->doc_string);
	encode_value_infos(b, 11, g->inputs, g->n_inputs);
	encode_value_infos(b, 12, g->outputs, g->n_outputs);
	encode_value_infos(b, 13, g->value_info, g->n_value_info);
	put_extras(b, &g->extras, &x, 0);
}

void
st_onnx_encode(const st_onnx_model *m, st_buf *b)
{
	size_t x = 0;
	put_int(b, 1, m->has_ir_version, m->ir_version);
	put_str(b, 2, m->producer_name);
	put_str(b, 3, m->producer_version);
	put_str(b, 4, m->domain);
	put_int(b, 5, m->has_model_version, m->model_version);
	put_str(b, 6, m->doc_string);
	if (m->graph != NULL) {
		size_t s = begin_len(b, 7);
		encode_graph(b, m->graph);
		end_len(b, s);
	}
	for (size_t i = 0; i < m->n_opsets; i++) {
		const st_onnx_opset *o = &m->opsets[i];
		size_t ox = 0, s = begin_len(b, 8);
		put_str(b, 1, o->domain);
		put_extras(b, &o->extras, &ox, 2);
		put_int(b, 2, o->has_version, o->version);
		put_extras(b, &o->extras, &ox, 0);
		end_len(b, s);
	}
	put_extras(b, &m->extras, &x, 14);
	for (size_t i = 0; i < m->n_metadata_props; i++) {
		size_t s = begin_len(b, 14);
		encode_entry(b, &m->metadata_props[i]);
		end_len(b, s);
	}
	put_extras(b, &m->extras, &x, 0);
}

int
st_onnx_write(const char *path, const st_onnx_model *model, char *err, size_t err_size)
{
	st_buf b;
	st_buf_init(&b);
	st_onnx_encode(model, &b);
	int rc = st_write_file_atomic(path, b.data != NULL ? b.data : "", b.len, err, err_size);
	st_buf_free(&b);
	return rc;
}

/* ---- helpers ---- */

static const struct {
	const char *name;
	int size;
} data_types[] = {
	[ST_ONNX_UNDEFINED] = { "UNDEFINED", 0 }, [ST_ONNX_FLOAT] = { "FLOAT", 4 },
	[ST_ONNX_UINT8] = { "UINT8", 1 },         [ST_ONNX_INT8] = { "INT8", 1 },
	[ST_ONNX_UINT16] = { "UINT16", 2 },       [ST_ONNX_INT16] = { "INT16", 2 },
	[ST_ONNX_INT32] = { "INT32", 4 },         [ST_ONNX_INT64] = { "INT64", 8 },
	[ST_ONNX_STRING] = { "STRING", 0 },       [ST_ONNX_BOOL] = { "BOOL", 1 },
	[ST_ONNX_FLOAT16] = { "FLOAT16", 2 },     [ST_ONNX_DOUBLE] = { "DOUBLE", 8 },
	[ST_ONNX_UINT32] = { "UINT32", 4 },       [ST_ONNX_UINT64] = { "UINT64", 8 },
	[ST_ONNX_COMPLEX64] = { "COMPLEX64", 8 }, [ST_ONNX_COMPLEX128] = { "COMPLEX128", 16 },
	[ST_ONNX_BFLOAT16] = { "BFLOAT16", 2 },
};

const char *
st_onnx_data_type_name(int32_t type)
{
	if (type < 0 || (size_t)type >= sizeof data_types / sizeof data_types[0])
		return "UNKNOWN";
	return data_types[type].name;
}

int
st_onnx_dtype(int32_t type)
{
	switch (type) {
	case ST_ONNX_FLOAT: return ST_DTYPE_FLOAT32;
	case ST_ONNX_FLOAT16: return ST_DTYPE_FLOAT16;
	case ST_ONNX_INT64: return ST_DTYPE_INT64;
	case ST_ONNX_INT32: return ST_DTYPE_INT32;
	case ST_ONNX_INT8: return ST_DTYPE_INT8;
	case ST_ONNX_UINT8: return ST_DTYPE_UINT8;
	case ST_ONNX_BOOL: return ST_DTYPE_BOOL;
	default: return -1;
	}
}

int
st_onnx_data_type_size(int32_t type)
{
	if (type < 0 || (size_t)type >= sizeof data_types / sizeof data_types[0])
		return 0;
	return data_types[type].size;
}

int
st_onnx_tensor_bytes(const st_onnx_tensor *t, const void **data, size_t *len, char *err, size_t err_size)
{
	const void *p;
	size_t n;
	if (t->has_data_location && t->data_location == 1) {
		if (t->external == NULL) {
			snprintf(err, err_size, "its external data is not resolved (the model was not opened from a file)");
			return -1;
		}
		p = t->external;
		n = t->external_len;
	} else if (t->raw_data.data != NULL) {
		p = t->raw_data.data;
		n = t->raw_data.len;
	} else {
		snprintf(err, err_size, "its values are in the typed fields, not raw_data");
		return -1;
	}
	int size = st_onnx_data_type_size(t->data_type);
	if (size == 0) {
		snprintf(err, err_size, "data type %s has no fixed element size", st_onnx_data_type_name(t->data_type));
		return -1;
	}
	if ((uint64_t)t->count > UINT64_MAX / (uint64_t)size || (uint64_t)t->count * (uint64_t)size != n) {
		snprintf(err, err_size, "it holds %zu bytes, but %" PRId64 " %s values need %" PRIu64, n, t->count,
		         st_onnx_data_type_name(t->data_type),
		         (uint64_t)t->count <= UINT64_MAX / (uint64_t)size ? (uint64_t)t->count * (uint64_t)size : UINT64_MAX);
		return -1;
	}
	*data = p;
	*len = n;
	return 0;
}

bool
st_onnx_str_eq(st_onnx_str s, const char *text)
{
	size_t n = strlen(text);
	return s.data != NULL && s.len == n && memcmp(s.data, text, n) == 0;
}

char *
st_onnx_str_dup(st_onnx_str s)
{
	return s.data != NULL ? st_xstrndup(s.data, s.len) : st_xstrdup("");
}

/* ---- single messages: test tensors, kept attributes ---- */

int
st_onnx_parse_tensor(const void *data, size_t len, st_onnx_model *holder, st_onnx_tensor *out,
                     char *err, size_t err_size)
{
	memset(out, 0, sizeof *out);
	const uint8_t *p = len ? data : (const uint8_t *)"";
	dec d = { .base = p, .limit = p + len, .m = holder, .err = err, .err_size = err_size };
	push(&d, "tensor", -1);
	if (parse_tensor(&d, p, p + len, out) != 0) {
		memset(out, 0, sizeof *out);
		return -1;
	}
	return 0;
}

void
st_onnx_encode_attributes(const st_onnx_node *n, st_buf *out)
{
	for (size_t i = 0; i < n->n_attributes; i++) {
		size_t s = begin_len(out, 5);
		encode_attribute(out, &n->attributes[i]);
		end_len(out, s);
	}
}

int
st_onnx_parse_attributes(const void *data, size_t len, st_onnx_model *holder, st_onnx_node *out,
                         char *err, size_t err_size)
{
	memset(out, 0, sizeof *out);
	const uint8_t *p = len ? data : (const uint8_t *)"";
	dec d = { .base = p, .limit = p + len, .m = holder, .err = err, .err_size = err_size };
	push(&d, "attributes", -1);
	st_onnx_node n = { 0 };
	if (parse_node(&d, p, p + len, &n) != 0)
		return -1;
	if (n.n_inputs || n.n_outputs || n.name.data || n.op_type.data || n.domain.data ||
	    n.doc_string.data || n.extras.count) {
		snprintf(err, err_size, "attributes: holds more than attributes");
		return -1;
	}
	out->attributes = n.attributes;
	out->n_attributes = n.n_attributes;
	return 0;
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *
st_base64_encode(const void *data, size_t len)
{
	const uint8_t *p = data;
	char *out = st_xmalloc((len + 2) / 3 * 4 + 1), *o = out;
	for (size_t i = 0; i < len; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16;
		if (i + 1 < len)
			v |= (uint32_t)p[i + 1] << 8;
		if (i + 2 < len)
			v |= p[i + 2];
		*o++ = b64[v >> 18 & 63];
		*o++ = b64[v >> 12 & 63];
		*o++ = i + 1 < len ? b64[v >> 6 & 63] : '=';
		*o++ = i + 2 < len ? b64[v & 63] : '=';
	}
	*o = '\0';
	return out;
}

int
st_base64_decode(const char *text, uint8_t **out, size_t *len)
{
	size_t n = strlen(text);
	*out = NULL;
	*len = 0;
	if (n % 4 != 0)
		return -1;
	uint8_t *buf = st_xmalloc(n / 4 * 3 + 1);
	size_t k = 0;
	for (size_t i = 0; i < n; i += 4) {
		uint32_t v = 0;
		int pad = 0;
		for (int j = 0; j < 4; j++) {
			char c = text[i + j];
			const char *at = c ? strchr(b64, c) : NULL;
			if (c == '=' && i + 4 == n && j >= 2 && (j == 3 || text[i + 3] == '=')) {
				pad++;
				v <<= 6;
				continue;
			}
			if (at == NULL || pad) {
				free(buf);
				return -1;
			}
			v = v << 6 | (uint32_t)(at - b64);
		}
		buf[k++] = (uint8_t)(v >> 16);
		if (pad < 2)
			buf[k++] = (uint8_t)(v >> 8);
		if (pad < 1)
			buf[k++] = (uint8_t)v;
	}
	*out = buf;
	*len = k;
	return 0;
}
