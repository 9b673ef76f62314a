/* Shapes, data types and parameter values: parsing from model files and
 * command text, checking against a schema, and writing them back. */
#include "config.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "st-core.h"

/* Integers in model files must survive a trip through a double. */
#define JSON_INT_LIMIT 9007199254740992.0 /* 2^53 */

static const struct {
	const char *name;
	int size;
} dtypes[ST_DTYPE_COUNT] = {
	[ST_DTYPE_FLOAT32] = { "float32", 4 }, [ST_DTYPE_FLOAT16] = { "float16", 2 },
	[ST_DTYPE_INT64] = { "int64", 8 },     [ST_DTYPE_INT32] = { "int32", 4 },
	[ST_DTYPE_INT8] = { "int8", 1 },       [ST_DTYPE_UINT8] = { "uint8", 1 },
	[ST_DTYPE_BOOL] = { "bool", 1 },
};

const char *
st_dtype_name(st_dtype t)
{
	return (unsigned)t < ST_DTYPE_COUNT ? dtypes[t].name : "invalid";
}

int
st_dtype_parse(const char *s)
{
	for (int i = 0; i < ST_DTYPE_COUNT; i++) {
		if (strcmp(s, dtypes[i].name) == 0)
			return i;
	}
	return -1;
}

int
st_dtype_size(st_dtype t)
{
	return (unsigned)t < ST_DTYPE_COUNT ? dtypes[t].size : 0;
}

int64_t
st_shape_elements(const st_shape *s)
{
	int64_t n = 1;
	for (int i = 0; i < s->rank; i++) {
		int64_t d = s->dims[i];
		if (d < 0)
			return -1;
		if (d != 0 && n > INT64_MAX / d)
			return -1;
		n *= d;
	}
	return n;
}

int64_t
st_shape_bytes(const st_shape *s)
{
	int64_t n = st_shape_elements(s);
	int size = st_dtype_size(s->dtype);
	if (n < 0 || n > INT64_MAX / (size ? size : 1))
		return -1;
	return n * size;
}

int64_t
st_layout_elements(const st_shape *s, st_layout l)
{
	if (l != ST_LAYOUT_NCHW16C || s->rank < 3)
		return st_shape_elements(s);
	st_shape padded = *s;
	if (padded.dims[1] < 0 || padded.dims[1] > INT64_MAX - ST_LAYOUT_BLOCK)
		return -1;
	padded.dims[1] = (padded.dims[1] + ST_LAYOUT_BLOCK - 1) / ST_LAYOUT_BLOCK * ST_LAYOUT_BLOCK;
	return st_shape_elements(&padded);
}

int64_t
st_layout_bytes(const st_shape *s, st_layout l)
{
	int64_t n = st_layout_elements(s, l);
	int size = st_dtype_size(s->dtype);
	if (n < 0 || n > INT64_MAX / (size ? size : 1))
		return -1;
	return n * size;
}

bool
st_shape_equal(const st_shape *a, const st_shape *b)
{
	if (a->dtype != b->dtype || a->rank != b->rank)
		return false;
	for (int i = 0; i < a->rank; i++) {
		if (a->dims[i] != b->dims[i])
			return false;
	}
	return true;
}

int
st_shape_format(const st_shape *s, char *buf, int size)
{
	st_buf b;
	st_buf_init(&b);
	if (s->rank == 0)
		st_buf_puts(&b, "scalar");
	for (int i = 0; i < s->rank; i++)
		st_buf_printf(&b, "%s%" PRId64, i ? "x" : "", s->dims[i]);
	int n = (int)b.len;
	if (size > 0)
		snprintf(buf, (size_t)size, "%s", b.data);
	st_buf_free(&b);
	return n;
}

float
st_half_to_float(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff, bits;
	if (exp == 0x1f) {
		bits = sign | 0x7f800000u | (mant << 13); /* infinity or NaN */
	} else if (exp != 0) {
		bits = sign | ((exp + 112) << 23) | (mant << 13);
	} else if (mant == 0) {
		bits = sign;
	} else {
		/* A subnormal half is a normal float: shift the mantissa up. */
		int e = -1;
		do {
			e++;
			mant <<= 1;
		} while (!(mant & 0x400));
		bits = sign | ((uint32_t)(112 - e) << 23) | ((mant & 0x3ff) << 13);
	}
	float f;
	memcpy(&f, &bits, sizeof f);
	return f;
}

uint16_t
st_float_to_half(float f)
{
	uint32_t x;
	memcpy(&x, &f, sizeof x);
	uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
	uint32_t abs = x & 0x7fffffffu;
	if (abs > 0x7f800000u)
		return sign | 0x7e00; /* NaN stays NaN */
	if (abs >= 0x477ff000u)
		return sign | 0x7c00; /* rounds to infinity */
	if (abs < 0x38800000u) {
		/* Subnormal or zero: add the bits as a float with the half's scale. */
		float a;
		memcpy(&a, &abs, sizeof a);
		a = a * 16777216.0f; /* 2^24: the value in units of the smallest subnormal */
		uint32_t m = (uint32_t)a;
		float rest = a - (float)m;
		if (rest > 0.5f || (rest == 0.5f && (m & 1)))
			m++;
		return sign | (uint16_t)m;
	}
	/* Normal: drop 13 mantissa bits with round-to-nearest-even. */
	uint32_t rounded = abs - 0x38000000u; /* rebias 127 -> 15 */
	rounded += 0x0fff + ((rounded >> 13) & 1);
	return sign | (uint16_t)(rounded >> 13);
}

const char *
st_param_kind_name(st_param_kind k)
{
	static const char *const names[] = { "int", "float", "bool", "enum", "string", "dims", "floats" };
	return (unsigned)k < sizeof names / sizeof names[0] ? names[k] : "invalid";
}

/* ---- values ---- */

void
st_value_clear(st_value *v)
{
	switch (v->kind) {
	case ST_PARAM_STRING:
		free((char *)v->s);
		break;
	case ST_PARAM_DIMS:
		free((int64_t *)v->ints);
		break;
	case ST_PARAM_FLOATS:
		free((double *)v->floats);
		break;
	default:
		break;
	}
	st_param_kind kind = v->kind;
	memset(v, 0, sizeof *v);
	v->kind = kind;
}

void
st_value_copy(st_value *dst, const st_value *src)
{
	*dst = *src;
	switch (src->kind) {
	case ST_PARAM_STRING:
		dst->s = st_xstrdup(src->s ? src->s : "");
		break;
	case ST_PARAM_DIMS: {
		int64_t *p = st_xmalloc(sizeof *p * (size_t)(src->count ? src->count : 1));
		if (src->count)
			memcpy(p, src->ints, sizeof *p * (size_t)src->count);
		dst->ints = p;
		break;
	}
	case ST_PARAM_FLOATS: {
		double *p = st_xmalloc(sizeof *p * (size_t)(src->count ? src->count : 1));
		if (src->count)
			memcpy(p, src->floats, sizeof *p * (size_t)src->count);
		dst->floats = p;
		break;
	}
	default:
		break;
	}
}

bool
st_value_equal(const st_value *a, const st_value *b)
{
	if (a->kind != b->kind)
		return false;
	switch (a->kind) {
	case ST_PARAM_INT:
	case ST_PARAM_ENUM:
		return a->i == b->i;
	case ST_PARAM_FLOAT:
		return a->f == b->f;
	case ST_PARAM_BOOL:
		return a->b == b->b;
	case ST_PARAM_STRING:
		return strcmp(a->s ? a->s : "", b->s ? b->s : "") == 0;
	case ST_PARAM_DIMS:
		return a->count == b->count &&
		       (a->count == 0 || memcmp(a->ints, b->ints, sizeof *a->ints * (size_t)a->count) == 0);
	case ST_PARAM_FLOATS:
		if (a->count != b->count)
			return false;
		for (int i = 0; i < a->count; i++) {
			if (a->floats[i] != b->floats[i])
				return false;
		}
		return true;
	}
	return false;
}

void
st_format_double(double v, st_buf *out)
{
	char tmp[40];
	if (!isfinite(v)) {
		st_buf_puts(out, isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf"));
		return;
	}
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(tmp, sizeof tmp, "%.*g", prec, v);
		if (strtod(tmp, NULL) == v)
			break;
	}
	st_buf_puts(out, tmp);
	if (strpbrk(tmp, ".en") == NULL)
		st_buf_puts(out, ".0");
}

/* Describes the accepted numbers as a noun phrase: "a positive integer",
 * "an integer from 1 to 8", "a number of at least 0.5". */
static void
describe_range(const st_param_desc *d, bool integer, char *buf, size_t size)
{
	const char *what = integer ? "integer" : "number";
	const char *article = integer ? "an" : "a";
	bool lo = d->flags & ST_PARAM_HAS_MIN, hi = d->flags & ST_PARAM_HAS_MAX;
	st_buf a, b;
	st_buf_init(&a);
	st_buf_init(&b);
	if (integer) {
		st_buf_printf(&a, "%.0f", d->min);
		st_buf_printf(&b, "%.0f", d->max);
	} else {
		st_format_double(d->min, &a);
		st_format_double(d->max, &b);
	}
	if (lo && hi)
		snprintf(buf, size, "%s %s from %s to %s", article, what, a.data, b.data);
	else if (lo && integer && d->min == 1)
		snprintf(buf, size, "a positive integer");
	else if (lo && d->min == 0)
		snprintf(buf, size, "a non-negative %s", what);
	else if (lo)
		snprintf(buf, size, "%s %s of at least %s", article, what, a.data);
	else if (hi)
		snprintf(buf, size, "%s %s of at most %s", article, what, b.data);
	else
		snprintf(buf, size, "%s %s", article, what);
	st_buf_free(&a);
	st_buf_free(&b);
}

static bool
in_range(const st_param_desc *d, double v)
{
	if ((d->flags & ST_PARAM_HAS_MIN) && v < d->min)
		return false;
	if ((d->flags & ST_PARAM_HAS_MAX) && v > d->max)
		return false;
	return true;
}

/* A short rendering of a JSON value for messages; caller frees. */
static char *
json_brief(const cJSON *j)
{
	if (j == NULL)
		return st_xstrdup("nothing");
	char *s = cJSON_PrintUnformatted(j);
	if (s == NULL)
		return st_xstrdup("?");
	if (strlen(s) > 40) {
		strcpy(s + 37, "...");
	}
	char *r = st_xstrdup(s);
	cJSON_free(s);
	return r;
}

static int
fail(char *err, size_t size, const char *expected, const cJSON *got)
{
	char *g = json_brief(got);
	snprintf(err, size, "must be %s, got %s", expected, g);
	free(g);
	return -1;
}

static bool
json_integer(const cJSON *j, int64_t *out)
{
	if (!cJSON_IsNumber(j))
		return false;
	double v = j->valuedouble;
	if (!isfinite(v) || v != floor(v) || fabs(v) > JSON_INT_LIMIT)
		return false;
	*out = (int64_t)v;
	return true;
}

static int
list_from_json(const st_param_desc *d, const cJSON *j, st_value *out, char *err, size_t size)
{
	bool ints = d->kind == ST_PARAM_DIMS;
	const char *expected = ints ? "a list of integers" : "a list of numbers";
	int n;
	const cJSON *first;
	if (cJSON_IsArray(j)) {
		n = cJSON_GetArraySize(j);
		first = j->child;
	} else if (cJSON_IsNumber(j)) {
		/* A single number stands for a list of one. */
		n = 1;
		first = j;
	} else
		return fail(err, size, expected, j);
	if (n < d->min_count || (d->max_count > 0 && n > d->max_count)) {
		if (d->max_count > 0 && d->min_count == d->max_count)
			snprintf(err, size, "must have %d value%s, got %d", d->min_count,
			         d->min_count == 1 ? "" : "s", n);
		else if (d->max_count > 0)
			snprintf(err, size, "must have %d to %d values, got %d", d->min_count, d->max_count, n);
		else
			snprintf(err, size, "must have at least %d value%s, got %d", d->min_count,
			         d->min_count == 1 ? "" : "s", n);
		return -1;
	}
	if (n > 4096) {
		snprintf(err, size, "must have at most 4096 values, got %d", n);
		return -1;
	}
	int64_t *iv = ints ? st_xmalloc(sizeof *iv * (size_t)(n ? n : 1)) : NULL;
	double *fv = ints ? NULL : st_xmalloc(sizeof *fv * (size_t)(n ? n : 1));
	const cJSON *e = first;
	for (int i = 0; i < n; i++, e = e->next) {
		double v;
		bool ok;
		if (ints) {
			int64_t x = 0;
			ok = json_integer(e, &x);
			iv[i] = x;
			v = (double)x;
		} else {
			ok = cJSON_IsNumber(e) && isfinite(e->valuedouble);
			v = ok ? e->valuedouble : 0;
			fv[i] = v;
		}
		if (!ok || !in_range(d, v)) {
			char range[96], *g = json_brief(e);
			describe_range(d, ints, range, sizeof range);
			snprintf(err, size, "must be %s; item %d must be %s, got %s", expected, i, range, g);
			free(g);
			free(iv);
			free(fv);
			return -1;
		}
	}
	out->kind = d->kind;
	out->count = n;
	if (ints)
		out->ints = iv;
	else
		out->floats = fv;
	return 0;
}

int
st_value_from_json(const st_param_desc *d, const cJSON *j, st_value *out, char *err, size_t size)
{
	char range[96];
	memset(out, 0, sizeof *out);
	out->kind = d->kind;
	switch (d->kind) {
	case ST_PARAM_INT: {
		int64_t v;
		describe_range(d, true, range, sizeof range);
		if (!json_integer(j, &v) || !in_range(d, (double)v))
			return fail(err, size, range, j);
		out->i = v;
		return 0;
	}
	case ST_PARAM_FLOAT:
		describe_range(d, false, range, sizeof range);
		if (!cJSON_IsNumber(j) || !isfinite(j->valuedouble) || !in_range(d, j->valuedouble))
			return fail(err, size, range, j);
		out->f = j->valuedouble;
		return 0;
	case ST_PARAM_BOOL:
		if (!cJSON_IsBool(j))
			return fail(err, size, "true or false", j);
		out->b = cJSON_IsTrue(j);
		return 0;
	case ST_PARAM_ENUM: {
		st_buf list;
		st_buf_init(&list);
		for (int i = 0; d->enum_values && d->enum_values[i]; i++) {
			if (cJSON_IsString(j) && strcmp(j->valuestring, d->enum_values[i]) == 0) {
				st_buf_free(&list);
				out->i = i;
				return 0;
			}
			st_buf_printf(&list, "%s\"%s\"", i ? (d->enum_values[i + 1] ? ", " : " or ") : "",
			              d->enum_values[i]);
		}
		fail(err, size, list.data ? list.data : "(no values)", j);
		st_buf_free(&list);
		return -1;
	}
	case ST_PARAM_STRING:
		if (!cJSON_IsString(j))
			return fail(err, size, "a string", j);
		out->s = st_xstrdup(j->valuestring);
		return 0;
	case ST_PARAM_DIMS:
	case ST_PARAM_FLOATS:
		return list_from_json(d, j, out, err, size);
	}
	snprintf(err, size, "has an unknown kind");
	return -1;
}

/* Turns "3x3", "3,3", "3 3" or "[3, 3]" into JSON list text; caller frees. */
static char *
list_text_to_json(const char *text)
{
	while (isspace((unsigned char)*text))
		text++;
	if (*text == '[')
		return st_xstrdup(text);
	st_buf b;
	st_buf_init(&b);
	st_buf_putc(&b, '[');
	bool need_sep = false;
	for (const char *p = text; *p; p++) {
		char c = *p;
		if (c == 'x' || c == 'X' || c == ',' || isspace((unsigned char)c)) {
			need_sep = true;
			continue;
		}
		if (need_sep && b.len > 1)
			st_buf_putc(&b, ',');
		need_sep = false;
		st_buf_putc(&b, c);
	}
	st_buf_putc(&b, ']');
	return st_buf_take(&b);
}

int
st_value_from_text(const st_param_desc *d, const char *text, st_value *out, char *err, size_t size)
{
	memset(out, 0, sizeof *out);
	out->kind = d->kind;
	if (d->kind == ST_PARAM_STRING) {
		out->s = st_xstrdup(text);
		return 0;
	}
	if (d->kind == ST_PARAM_ENUM) {
		cJSON *s = cJSON_CreateString(text);
		int rc = st_value_from_json(d, s, out, err, size);
		cJSON_Delete(s);
		return rc;
	}
	if (d->kind == ST_PARAM_BOOL) {
		static const char *const yes[] = { "true", "on", "yes", "1", NULL };
		static const char *const no[] = { "false", "off", "no", "0", NULL };
		for (int i = 0; yes[i]; i++) {
			if (strcmp(text, yes[i]) == 0) {
				out->b = true;
				return 0;
			}
			if (strcmp(text, no[i]) == 0) {
				out->b = false;
				return 0;
			}
		}
		snprintf(err, size, "must be true or false, got %s", text);
		return -1;
	}
	char *json = (d->kind == ST_PARAM_DIMS || d->kind == ST_PARAM_FLOATS) ? list_text_to_json(text)
	                                                                      : st_xstrdup(text);
	/* The whole text must be the value: "16 junk" is not 16. */
	cJSON *j = cJSON_ParseWithOpts(json, NULL, 1);
	free(json);
	if (j == NULL) {
		/* Let the usual message describe what was expected. */
		j = cJSON_CreateString(text);
	}
	int rc = st_value_from_json(d, j, out, err, size);
	cJSON_Delete(j);
	return rc;
}

void
st_value_to_json(const st_param_desc *d, const st_value *v, st_buf *out)
{
	switch (v->kind) {
	case ST_PARAM_INT:
		st_buf_printf(out, "%" PRId64, v->i);
		break;
	case ST_PARAM_FLOAT:
		st_format_double(v->f, out);
		break;
	case ST_PARAM_BOOL:
		st_buf_puts(out, v->b ? "true" : "false");
		break;
	case ST_PARAM_ENUM:
		st_json_write_string(out, d->enum_values[v->i]);
		break;
	case ST_PARAM_STRING:
		st_json_write_string(out, v->s ? v->s : "");
		break;
	case ST_PARAM_DIMS:
	case ST_PARAM_FLOATS:
		st_buf_putc(out, '[');
		for (int i = 0; i < v->count; i++) {
			if (i)
				st_buf_puts(out, ", ");
			if (v->kind == ST_PARAM_DIMS)
				st_buf_printf(out, "%" PRId64, v->ints[i]);
			else
				st_format_double(v->floats[i], out);
		}
		st_buf_putc(out, ']');
		break;
	}
}

void
st_value_to_text(const st_param_desc *d, const st_value *v, st_buf *out)
{
	switch (v->kind) {
	case ST_PARAM_ENUM:
		st_buf_puts(out, d->enum_values[v->i]);
		break;
	case ST_PARAM_STRING:
		st_buf_puts(out, v->s ? v->s : "");
		break;
	case ST_PARAM_DIMS: {
		bool plain = v->count > 0;
		for (int i = 0; i < v->count; i++) {
			if (v->ints[i] < 0)
				plain = false;
		}
		if (!plain) {
			st_value_to_json(d, v, out);
			break;
		}
		for (int i = 0; i < v->count; i++)
			st_buf_printf(out, "%s%" PRId64, i ? "x" : "", v->ints[i]);
		break;
	}
	default:
		st_value_to_json(d, v, out);
		break;
	}
}

/* ---- runtime options ---- */

const char *
st_param_runtime_name(const st_param_desc *d)
{
	if (d->flags & ST_PARAM_TRIGGER)
		return "trigger";
	if (d->flags & ST_PARAM_LABEL)
		return "label";
	if (d->flags & ST_PARAM_RUNTIME)
		return "option";
	return NULL;
}

double
st_param_step(const st_param_desc *d)
{
	if (d->kind != ST_PARAM_FLOAT)
		return 1;
	bool bounded = (d->flags & ST_PARAM_HAS_MIN) && (d->flags & ST_PARAM_HAS_MAX) && d->max > d->min;
	return bounded ? (d->max - d->min) / 100 : 0.1;
}

/* ---- parameter sets ---- */

void
st_params_init(st_params *p, const st_param_desc *descs, int n, const st_value *defaults)
{
	(void)descs;
	p->count = n;
	p->values = st_xcalloc((size_t)(n ? n : 1), sizeof *p->values);
	p->set = st_xcalloc((size_t)(n ? n : 1), sizeof *p->set);
	p->unknown = NULL;
	for (int i = 0; i < n; i++)
		st_value_copy(&p->values[i], &defaults[i]);
}

void
st_params_clear(st_params *p)
{
	for (int i = 0; i < p->count; i++)
		st_value_clear(&p->values[i]);
	free(p->values);
	free(p->set);
	cJSON_Delete(p->unknown);
	memset(p, 0, sizeof *p);
}

void
st_params_copy(st_params *dst, const st_params *src)
{
	dst->count = src->count;
	dst->values = st_xcalloc((size_t)(src->count ? src->count : 1), sizeof *dst->values);
	dst->set = st_xcalloc((size_t)(src->count ? src->count : 1), sizeof *dst->set);
	for (int i = 0; i < src->count; i++) {
		st_value_copy(&dst->values[i], &src->values[i]);
		dst->set[i] = src->set[i];
	}
	dst->unknown = src->unknown ? cJSON_Duplicate(src->unknown, 1) : NULL;
}

int
st_params_find(const st_param_desc *descs, int n, const char *name)
{
	for (int i = 0; i < n; i++) {
		if (strcmp(descs[i].name, name) == 0)
			return i;
	}
	return -1;
}

/* ---- block-style settings ----
 *
 * The DDesigner API's blocks and cascade layers take transform=N|None and
 * pruning=F|None where its layers take use_transform, bit, use_pruning and
 * prun_weight. A parameter set that has the XWN set takes both forms; only
 * the canonical names are stored and saved. What qualifies is the set of
 * parameters, whatever the layer type is called.
 */

static const struct {
	const char *name;
	st_param_kind kind;
} xwn_set[] = {
	{ "use_transform", ST_PARAM_BOOL }, { "bit", ST_PARAM_INT }, { "max_scale", ST_PARAM_FLOAT },
	{ "use_pruning", ST_PARAM_BOOL },   { "prun_weight", ST_PARAM_FLOAT },
};

static const struct {
	const char *name;   /* the block-style name */
	const char *flag;   /* the switch it turns on or off */
	const char *value;  /* the parameter its number goes to */
	const char *number; /* what the number is, for messages */
} block_styles[] = {
	{ "transform", "use_transform", "bit", "a number of bits" },
	{ "pruning", "use_pruning", "prun_weight", "a pruning edge" },
};
#define N_BLOCK_STYLES ((int)(sizeof block_styles / sizeof block_styles[0]))

bool
st_params_have_xwn_set(const st_param_desc *descs, int n)
{
	for (size_t k = 0; k < sizeof xwn_set / sizeof xwn_set[0]; k++) {
		int i = st_params_find(descs, n, xwn_set[k].name);
		if (i < 0 || descs[i].kind != xwn_set[k].kind)
			return false;
	}
	return true;
}

int
st_block_style_index(const char *name)
{
	for (int i = 0; i < N_BLOCK_STYLES; i++) {
		if (strcmp(block_styles[i].name, name) == 0)
			return i;
	}
	return -1;
}

bool
st_block_style_covers(const char *name, const char *param)
{
	int k = st_block_style_index(name);
	return k >= 0 && (strcmp(block_styles[k].flag, param) == 0 || strcmp(block_styles[k].value, param) == 0);
}

const char *
st_block_style_meaning(const char *name)
{
	switch (st_block_style_index(name)) {
	case 0:
		return "transform=N turns use_transform on with bit N, null or none turns it off";
	case 1:
		return "pruning=F turns use_pruning on with prun_weight F, null or none turns it off";
	default:
		return NULL;
	}
}

int
st_block_style_resolve(const st_param_desc *descs, int n, const char *name, const cJSON *json,
                       const char *text, st_block_setting *out, char *err, size_t size)
{
	int k = st_block_style_index(name);
	memset(out, 0, sizeof *out);
	if (k < 0 || !st_params_have_xwn_set(descs, n)) {
		snprintf(err, size,
		         "is a block-style setting (%s), which only layer types with the XWN parameter set "
		         "(use_transform, bit, max_scale, use_pruning, prun_weight) take",
		         k >= 0 ? st_block_style_meaning(name) : "unknown");
		return -2;
	}
	int flag = st_params_find(descs, n, block_styles[k].flag);
	int value = st_params_find(descs, n, block_styles[k].value);
	bool off;
	if (json != NULL)
		off = cJSON_IsNull(json);
	else
		off = strcmp(text, "none") == 0 || strcmp(text, "None") == 0 || strcmp(text, "null") == 0;
	out->index[0] = flag;
	out->values[0].kind = ST_PARAM_BOOL;
	out->values[0].b = !off;
	out->count = 1;
	if (off)
		return 0;
	char why[256];
	int rc = json != NULL ? st_value_from_json(&descs[value], json, &out->values[1], why, sizeof why)
	                      : st_value_from_text(&descs[value], text, &out->values[1], why, sizeof why);
	if (rc != 0) {
		char range[96];
		char *got = json != NULL ? json_brief(json) : st_xstrdup(text);
		describe_range(&descs[value], descs[value].kind == ST_PARAM_INT, range, sizeof range);
		snprintf(err, size, "must be %s, %s, or null (none) to turn %s off; got %s (%s)",
		         block_styles[k].number, range, block_styles[k].flag, got, st_block_style_meaning(name));
		free(got);
		st_value_clear(&out->values[1]);
		memset(out, 0, sizeof *out);
		return -1;
	}
	out->index[1] = value;
	out->count = 2;
	return 0;
}

void
st_block_setting_clear(st_block_setting *s)
{
	for (int i = 0; i < s->count; i++)
		st_value_clear(&s->values[i]);
	memset(s, 0, sizeof *s);
}

/* ---- the network's own parameters ---- */

static const char *const tensor_formats[] = { "fp32-nchw", "fp32-nhwc", "fp16-nchw", "fp16-nhwc", NULL };

const st_param_desc st_network_params[ST_NET_COUNT] = {
	[ST_NET_NAME] = { .name = "name", .kind = ST_PARAM_STRING, .default_value = "untitled",
	                  .doc = "The network's name; exports use it to name generated code." },
	[ST_NET_VERSION] = { .name = "version", .kind = ST_PARAM_STRING, .default_value = "1.0",
	                     .doc = "The model's own version, to tell iterations of a design apart." },
	[ST_NET_DESCRIPTION] = { .name = "description", .kind = ST_PARAM_STRING, .default_value = "",
	                         .doc = "Free text about the model." },
	[ST_NET_TENSOR_FORMAT] = { .name = "tensor_format", .kind = ST_PARAM_ENUM,
	                           .default_value = "fp32-nchw", .enum_values = tensor_formats,
	                           .doc = "Default precision and layout for inference runs." },
	[ST_NET_WEIGHTS] = { .name = "weights", .kind = ST_PARAM_STRING, .default_value = "",
	                     .doc = "Folder of layerName_weightType.npy files, relative to the model "
	                            "file; empty when the model has no weights yet." },
	[ST_NET_PROFILING] = { .name = "profiling", .kind = ST_PARAM_BOOL, .default_value = "false",
	                       .doc = "Profile every run: after the timing run, a separate profiled run "
	                              "measures each layer for the report." },
};

const char *
st_tensor_format_name(st_tensor_format f)
{
	if (f == ST_FORMAT_FP32_NCHW16C)
		return "fp32-nchw16c";
	return (unsigned)f < 4 ? tensor_formats[f] : "invalid";
}

const st_value *
st_network_defaults(void)
{
	static st_value defaults[ST_NET_COUNT];
	static bool ready;
	if (!ready) {
		for (int i = 0; i < ST_NET_COUNT; i++) {
			char err[128];
			int rc = st_value_from_text(&st_network_params[i], st_network_params[i].default_value,
			                            &defaults[i], err, sizeof err);
			(void)rc;
		}
		ready = true;
	}
	return defaults;
}
