/* NumPy .npy files: format versions 1.0 to 3.0, C order, little-endian.
 * Files are memory-mapped and used in place when their type is the one
 * wanted; anything the format allows but Strata cannot use exactly is
 * refused with the reason. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "st-io.h"

static const struct {
	const char *descr;
	int size;
} npy_types[] = {
	[ST_NPY_F2] = { "<f2", 2 }, [ST_NPY_F4] = { "<f4", 4 }, [ST_NPY_F8] = { "<f8", 8 },
	[ST_NPY_I1] = { "|i1", 1 }, [ST_NPY_U1] = { "|u1", 1 }, [ST_NPY_I2] = { "<i2", 2 },
	[ST_NPY_U2] = { "<u2", 2 }, [ST_NPY_I4] = { "<i4", 4 }, [ST_NPY_U4] = { "<u4", 4 },
	[ST_NPY_I8] = { "<i8", 8 }, [ST_NPY_U8] = { "<u8", 8 }, [ST_NPY_B1] = { "|b1", 1 },
};
#define N_TYPES ((int)(sizeof npy_types / sizeof npy_types[0]))

const char *
st_npy_type_name(st_npy_type t)
{
	return (unsigned)t < (unsigned)N_TYPES ? npy_types[t].descr : "?";
}

int
st_npy_type_dtype(st_npy_type t)
{
	switch (t) {
	case ST_NPY_F2:
		return ST_DTYPE_FLOAT16;
	case ST_NPY_F4:
		return ST_DTYPE_FLOAT32;
	case ST_NPY_I1:
		return ST_DTYPE_INT8;
	case ST_NPY_U1:
		return ST_DTYPE_UINT8;
	case ST_NPY_I4:
		return ST_DTYPE_INT32;
	case ST_NPY_I8:
		return ST_DTYPE_INT64;
	case ST_NPY_B1:
		return ST_DTYPE_BOOL;
	default:
		return -1;
	}
}

static int
fail(char *err, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int
fail(char *err, size_t size, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, size, fmt, ap);
	va_end(ap);
	return -1;
}

/* ---- the header: a Python dict literal ---- */

typedef struct header {
	const char *p, *end;
} header;

static void
skip_space(header *h)
{
	while (h->p < h->end && (*h->p == ' ' || *h->p == '\t' || *h->p == '\n' || *h->p == '\r'))
		h->p++;
}

static bool
take(header *h, char c)
{
	skip_space(h);
	if (h->p < h->end && *h->p == c) {
		h->p++;
		return true;
	}
	return false;
}

/* A quoted string ('...' or "..."), copied into buf. */
static bool
read_string(header *h, char *buf, size_t size)
{
	skip_space(h);
	if (h->p >= h->end || (*h->p != '\'' && *h->p != '"'))
		return false;
	char q = *h->p++;
	size_t n = 0;
	while (h->p < h->end && *h->p != q) {
		if (n + 1 < size)
			buf[n++] = *h->p;
		h->p++;
	}
	buf[n] = '\0';
	if (h->p >= h->end)
		return false;
	h->p++;
	return true;
}

static bool
read_word(header *h, char *buf, size_t size)
{
	skip_space(h);
	size_t n = 0;
	while (h->p < h->end && ((*h->p >= 'a' && *h->p <= 'z') || (*h->p >= 'A' && *h->p <= 'Z'))) {
		if (n + 1 < size)
			buf[n++] = *h->p;
		h->p++;
	}
	buf[n] = '\0';
	return n > 0;
}

/* A shape tuple: (), (3,), (2, 3) or (2, 3,). */
static int
read_shape(header *h, st_npy *out, char *err, size_t size)
{
	if (!take(h, '('))
		return fail(err, size, "the header's 'shape' is not a tuple");
	out->rank = 0;
	out->count = 1;
	memset(out->dims, 0, sizeof out->dims);
	/* The product of the non-zero sizes must fit too: later code computes
	 * strides from them even when another size is 0. */
	int64_t nonzero = 1;
	for (;;) {
		skip_space(h);
		if (take(h, ')'))
			return 0;
		if (h->p >= h->end || *h->p < '0' || *h->p > '9')
			return fail(err, size, "the header's 'shape' holds something other than sizes");
		int64_t v = 0;
		while (h->p < h->end && *h->p >= '0' && *h->p <= '9') {
			if (v > (INT64_MAX - 9) / 10)
				return fail(err, size, "a size in the header's 'shape' is too large");
			v = v * 10 + (*h->p++ - '0');
		}
		/* Python 2 wrote longs as 3L. */
		if (h->p < h->end && *h->p == 'L')
			h->p++;
		if (out->rank == ST_MAX_RANK)
			return fail(err, size, "the array has more than %d dimensions", ST_MAX_RANK);
		out->dims[out->rank++] = v;
		if (v != 0 && nonzero > INT64_MAX / v)
			return fail(err, size, "the array's element count overflows");
		if (v != 0)
			nonzero *= v;
		out->count *= v;
		if (!take(h, ',')) {
			if (take(h, ')'))
				return 0;
			return fail(err, size, "the header's 'shape' is not a tuple of sizes");
		}
	}
}

static int
parse_header(const char *text, size_t len, st_npy *out, char *err, size_t size)
{
	header h = { text, text + len };
	bool have_descr = false, have_order = false, have_shape = false;
	if (!take(&h, '{'))
		return fail(err, size, "the header is not a Python dict");
	for (;;) {
		if (take(&h, '}'))
			break;
		char key[32];
		if (!read_string(&h, key, sizeof key) || !take(&h, ':'))
			return fail(err, size, "the header is not a Python dict of quoted keys");
		bool *seen = strcmp(key, "descr") == 0 ? &have_descr
		             : strcmp(key, "fortran_order") == 0 ? &have_order
		             : strcmp(key, "shape") == 0 ? &have_shape
		                                         : NULL;
		if (seen != NULL && *seen)
			return fail(err, size, "the header repeats the key '%s'", key);
		if (strcmp(key, "descr") == 0) {
			char descr[64];
			skip_space(&h);
			if (h.p < h.end && (*h.p == '[' || *h.p == '('))
				return fail(err, size, "structured arrays (record dtypes) are not supported");
			if (!read_string(&h, descr, sizeof descr))
				return fail(err, size, "the header's 'descr' is not a string");
			/* '=' is native order, little-endian on the machines Strata runs on. */
			if (descr[0] == '=')
				descr[0] = '<';
			/* Byte-sized types have no order; numpy writes '|' but any prefix means the same. */
			bool one_byte = strcmp(descr + 1, "i1") == 0 || strcmp(descr + 1, "u1") == 0 ||
			                strcmp(descr + 1, "b1") == 0;
			if ((descr[0] == '<' || descr[0] == '>') && one_byte)
				descr[0] = '|';
			if (descr[0] != '\0' && (descr[0] == 'O' || descr[1] == 'O'))
				return fail(err, size, "an array of Python objects cannot be read; save numbers");
			if (descr[0] == '>')
				return fail(err, size,
				            "big-endian data ('%s'); save it little-endian, e.g. with "
				            "a.astype('<%s')",
				            descr, descr + 1);
			int found = -1;
			for (int i = 0; i < N_TYPES; i++) {
				if (strcmp(descr, npy_types[i].descr) == 0)
					found = i;
			}
			if (found < 0)
				return fail(err, size,
				            "unsupported element type '%s' (supported: float16/32/64, "
				            "integers of 8 to 64 bits, bool)",
				            descr);
			out->type = (st_npy_type)found;
			have_descr = true;
		} else if (strcmp(key, "fortran_order") == 0) {
			char word[16];
			if (!read_word(&h, word, sizeof word) ||
			    (strcmp(word, "True") != 0 && strcmp(word, "False") != 0))
				return fail(err, size, "the header's 'fortran_order' is not True or False");
			if (strcmp(word, "True") == 0)
				return fail(err, size,
				            "Fortran-ordered data; save it in C order, e.g. with "
				            "np.ascontiguousarray(a)");
			have_order = true;
		} else if (strcmp(key, "shape") == 0) {
			if (read_shape(&h, out, err, size) != 0)
				return -1;
			have_shape = true;
		} else {
			return fail(err, size, "the header has an unknown key '%s'", key);
		}
		if (!take(&h, ',')) {
			if (take(&h, '}'))
				break;
			return fail(err, size, "the header is not a well-formed dict");
		}
	}
	/* numpy pads the dict with spaces and a new line; anything else is damage. */
	while (h.p < h.end && (*h.p == ' ' || *h.p == '\t' || *h.p == '\n' || *h.p == '\r' || *h.p == '\0'))
		h.p++;
	if (h.p < h.end)
		return fail(err, size, "the header has text after its dict");
	if (!have_descr || !have_order || !have_shape)
		return fail(err, size, "the header lacks '%s'",
		            !have_descr ? "descr" : !have_order ? "fortran_order" : "shape");
	return 0;
}

static int
parse(const void *buf, size_t len, st_npy *out, char *err, size_t size)
{
	const unsigned char *b = buf;
	if (len < 6 || memcmp(b, "\x93NUMPY", 6) != 0)
		return fail(err, size, "not a NumPy .npy file (no \\x93NUMPY magic)");
	if (len < 8)
		return fail(err, size, "truncated: the file ends inside its header");
	int major = b[6], minor = b[7];
	if ((major != 1 && major != 2 && major != 3) || minor != 0)
		return fail(err, size, "format version %d.%d is not one of 1.0, 2.0, 3.0", major, minor);
	/* 1.0 has a 2-byte header length; 2.0 and 3.0 (UTF-8 header) a 4-byte one. */
	size_t start = major == 1 ? 10 : 12;
	if (len < start)
		return fail(err, size, "truncated: the file ends inside its header");
	size_t header_len = (size_t)b[8] | (size_t)b[9] << 8;
	if (major > 1)
		header_len |= (size_t)b[10] << 16 | (size_t)b[11] << 24;
	out->version = major;
	if (header_len > len - start)
		return fail(err, size, "truncated: the file ends inside its header");
	if (parse_header((const char *)b + start, header_len, out, err, size) != 0)
		return -1;
	int item = npy_types[out->type].size;
	if (out->count > (int64_t)(SIZE_MAX / 2) / item)
		return fail(err, size, "the array's size in bytes overflows");
	size_t need = (size_t)out->count * (size_t)item, have = len - start - header_len;
	if (have < need) {
		char shape[200];
		st_shape s = { .rank = out->rank };
		memcpy(s.dims, out->dims, sizeof s.dims);
		st_shape_format(&s, shape, sizeof shape);
		return fail(err, size,
		            "truncated: the header says %s of %s (%zu bytes of data), the file holds %zu",
		            shape, npy_types[out->type].descr, need, have);
	}
	out->data = b + start + header_len;
	out->bytes = need;
	return 0;
}

int
st_npy_parse(const void *buf, size_t len, st_npy *out, char *err, size_t size)
{
	memset(out, 0, sizeof *out);
	if (parse(buf, len, out, err, size) != 0) {
		memset(out, 0, sizeof *out);
		return -1;
	}
	return 0;
}

int
st_npy_read(const char *path, st_npy *out, char *err, size_t size)
{
	memset(out, 0, sizeof *out);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail(err, size, "cannot open %s: %s", path, strerror(errno));
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return fail(err, size, "%s is not a regular file", path);
	}
	size_t len = (size_t)st.st_size;
	void *map = NULL;
	if (len > 0) {
		map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
		if (map == MAP_FAILED) {
			int e = errno;
			close(fd);
			return fail(err, size, "cannot map %s: %s", path, strerror(e));
		}
	}
	close(fd);
	char why[400];
	if (st_npy_parse(map ? map : "", len, out, why, sizeof why) != 0) {
		if (map)
			munmap(map, len);
		return fail(err, size, "%s: %s", path, why);
	}
	int item = npy_types[out->type].size;
	if ((uintptr_t)out->data % (uintptr_t)item != 0) {
		/* numpy aligns data to 64 bytes; other writers may not, and the
		 * kernels read elements in place. */
		void *copy = st_xmalloc(out->bytes ? out->bytes : 1);
		memcpy(copy, out->data, out->bytes);
		munmap(map, len);
		out->owned = copy;
		out->data = copy;
		return 0;
	}
	out->map = map;
	out->map_len = len;
	return 0;
}

void
st_npy_free(st_npy *a)
{
	if (a->map)
		munmap(a->map, a->map_len);
	free(a->owned);
	memset(a, 0, sizeof *a);
}

/* ---- conversion ---- */

/* Reads element i as a double: exact for every type but 64-bit integers
 * beyond 2^53, which the callers treat apart. */
static double
element(const st_npy *a, int64_t i)
{
	const unsigned char *p = (const unsigned char *)a->data + i * npy_types[a->type].size;
	switch (a->type) {
	case ST_NPY_F2: {
		uint16_t h;
		memcpy(&h, p, 2);
		return st_half_to_float(h);
	}
	case ST_NPY_F4: {
		float f;
		memcpy(&f, p, 4);
		return f;
	}
	case ST_NPY_F8: {
		double d;
		memcpy(&d, p, 8);
		return d;
	}
	case ST_NPY_I1:
		return (int8_t)p[0];
	case ST_NPY_U1:
	case ST_NPY_B1:
		return p[0];
	case ST_NPY_I2: {
		int16_t v;
		memcpy(&v, p, 2);
		return v;
	}
	case ST_NPY_U2: {
		uint16_t v;
		memcpy(&v, p, 2);
		return v;
	}
	case ST_NPY_I4: {
		int32_t v;
		memcpy(&v, p, 4);
		return v;
	}
	case ST_NPY_U4: {
		uint32_t v;
		memcpy(&v, p, 4);
		return v;
	}
	case ST_NPY_I8: {
		int64_t v;
		memcpy(&v, p, 8);
		return (double)v;
	}
	case ST_NPY_U8: {
		uint64_t v;
		memcpy(&v, p, 8);
		return (double)v;
	}
	}
	return 0;
}

/*
 * IEEE binary16 from a double with one rounding (to nearest, ties to even),
 * as numpy's astype(np.float16) does; going through float first would round
 * twice and sometimes land one step off.
 */
static uint16_t
double_to_half(double d)
{
	uint16_t sign = signbit(d) ? 0x8000 : 0;
	double a = fabs(d);
	if (isnan(d))
		return sign | 0x7e00;
	if (a >= 65520.0) /* halfway between 65504 and 2^16 rounds to even: infinity */
		return sign | 0x7c00;
	if (a < 6.103515625e-05) /* below 2^-14: a subnormal in units of 2^-24 */
		return sign | (uint16_t)nearbyint(a * 16777216.0);
	int e;
	frexp(a, &e); /* a = f * 2^e, f in [0.5, 1) */
	e -= 1;       /* a = 1.m * 2^e, e in [-14, 15] */
	double m = nearbyint(ldexp(a, 10 - e)); /* 1024 to 2048, exact before rounding */
	if (m >= 2048.0) {
		m = 1024.0;
		e++;
	}
	return sign | (uint16_t)((e + 15) << 10) | (uint16_t)((int)m - 1024);
}

/*
 * A 64-bit integer as the nearest float (ties to even), rounded in integer
 * arithmetic: a plain cast is right on the hardware, but emulators such as
 * valgrind go through double and round twice.
 */
static float
integer_to_float(uint64_t magnitude, bool negative)
{
	float f;
	if (magnitude < (1u << 24)) {
		f = (float)magnitude;
	} else {
		int shift = 64 - __builtin_clzll(magnitude) - 24;
		uint64_t keep = magnitude >> shift, rest = magnitude & ((UINT64_C(1) << shift) - 1),
		         half = UINT64_C(1) << (shift - 1);
		if (rest > half || (rest == half && (keep & 1)))
			keep++; /* 2^24 at most: still exact */
		f = ldexpf((float)keep, shift);
	}
	return negative ? -f : f;
}

static void
store_float(unsigned char *o, st_dtype dtype, double v)
{
	if (dtype == ST_DTYPE_FLOAT32) {
		float f = (float)v;
		memcpy(o, &f, 4);
	} else {
		uint16_t h = double_to_half(v);
		memcpy(o, &h, 2);
	}
}

static void
store_int(unsigned char *o, st_dtype dtype, int64_t v)
{
	switch (dtype) {
	case ST_DTYPE_INT64:
		memcpy(o, &v, 8);
		break;
	case ST_DTYPE_INT32: {
		int32_t w = (int32_t)v;
		memcpy(o, &w, 4);
		break;
	}
	default: /* int8, uint8, bool */
		o[0] = (unsigned char)(v & 0xff);
		break;
	}
}

int
st_npy_convert(st_npy *a, st_dtype dtype, char *err, size_t size)
{
	if (st_npy_type_dtype(a->type) == (int)dtype)
		return 0;
	int out_size = st_dtype_size(dtype);
	if (out_size == 0)
		return fail(err, size, "cannot convert to an unknown type");
	if (a->count > (int64_t)(SIZE_MAX / 2) / out_size)
		return fail(err, size, "the array's size in bytes overflows");
	bool float_out = dtype == ST_DTYPE_FLOAT32 || dtype == ST_DTYPE_FLOAT16;
	int64_t lo = 0, hi = 0;
	switch (dtype) {
	case ST_DTYPE_INT64:
		lo = INT64_MIN;
		hi = INT64_MAX;
		break;
	case ST_DTYPE_INT32:
		lo = INT32_MIN;
		hi = INT32_MAX;
		break;
	case ST_DTYPE_INT8:
		lo = INT8_MIN;
		hi = INT8_MAX;
		break;
	case ST_DTYPE_UINT8:
		hi = UINT8_MAX;
		break;
	case ST_DTYPE_BOOL:
		hi = 1;
		break;
	default:
		break;
	}
	/* 64-byte aligned, like every buffer a kernel reads. */
	void *mem = NULL;
	if (posix_memalign(&mem, 64, (size_t)(a->count ? a->count : 1) * (size_t)out_size) != 0)
		return fail(err, size, "out of memory converting %" PRId64 " elements", a->count);
	unsigned char *out = mem;
	for (int64_t i = 0; i < a->count; i++) {
		unsigned char *o = out + i * out_size;
		if (a->type == ST_NPY_I8 || a->type == ST_NPY_U8) {
			/* 64-bit integers are compared and converted as integers, not
			 * through a double that cannot hold them all. */
			uint64_t u;
			memcpy(&u, (const unsigned char *)a->data + i * 8, 8);
			bool is_signed = a->type == ST_NPY_I8;
			int64_t v = (int64_t)u;
			if (dtype == ST_DTYPE_FLOAT32) {
				/* One rounding, straight from the integer. */
				bool negative = is_signed && v < 0;
				float f = integer_to_float(negative ? 0 - u : u, negative);
				memcpy(o, &f, 4);
				continue;
			}
			if (dtype == ST_DTYPE_FLOAT16) {
				/* Exact as a double up to 2^53, and infinity long before. */
				store_float(o, dtype, is_signed ? (double)v : (double)u);
				continue;
			}
			if ((!is_signed && u > (uint64_t)INT64_MAX) || v < lo || v > hi) {
				free(out);
				if (is_signed)
					return fail(err, size,
					            "element %" PRId64 " (%" PRId64 ") is out of the range of %s (%" PRId64
					            " to %" PRId64 ")",
					            i, v, st_dtype_name(dtype), lo, hi);
				return fail(err, size,
				            "element %" PRId64 " (%" PRIu64 ") is out of the range of %s (%" PRId64 " to %" PRId64
				            ")",
				            i, u, st_dtype_name(dtype), lo, hi);
			}
			store_int(o, dtype, v);
			continue;
		}
		double v = element(a, i);
		if (float_out) {
			store_float(o, dtype, v);
			continue;
		}
		if (isnan(v)) {
			free(out);
			return fail(err, size, "element %" PRId64 " is NaN, which %s cannot hold", i,
			            st_dtype_name(dtype));
		}
		if (v != floor(v) && !isinf(v)) {
			free(out);
			return fail(err, size, "element %" PRId64 " (%.17g) is not a whole number, which %s needs",
			            i, v, st_dtype_name(dtype));
		}
		/* (double)hi rounds up to 2^63 for int64, hence >= there. */
		if (v < (double)lo || (dtype == ST_DTYPE_INT64 ? v >= 9223372036854775808.0 : v > (double)hi)) {
			free(out);
			return fail(err, size,
			            "element %" PRId64 " (%.17g) is out of the range of %s (%" PRId64 " to %" PRId64 ")", i,
			            v, st_dtype_name(dtype), lo, hi);
		}
		store_int(o, dtype, (int64_t)v);
	}
	/* The converted copy replaces the file's mapping, which is no longer needed. */
	if (a->map)
		munmap(a->map, a->map_len);
	a->map = NULL;
	a->map_len = 0;
	free(a->owned);
	a->owned = out;
	a->data = out;
	a->bytes = (size_t)a->count * (size_t)out_size;
	for (int i = 0; i < N_TYPES; i++) {
		if (st_npy_type_dtype((st_npy_type)i) == (int)dtype)
			a->type = (st_npy_type)i;
	}
	return 0;
}

/* ---- writing ---- */

static const char *
descr_of(st_dtype t)
{
	switch (t) {
	case ST_DTYPE_FLOAT32:
		return "<f4";
	case ST_DTYPE_FLOAT16:
		return "<f2";
	case ST_DTYPE_INT64:
		return "<i8";
	case ST_DTYPE_INT32:
		return "<i4";
	case ST_DTYPE_INT8:
		return "|i1";
	case ST_DTYPE_UINT8:
		return "|u1";
	case ST_DTYPE_BOOL:
		return "|b1";
	default:
		return NULL;
	}
}

int
st_npy_encode(const st_shape *shape, const void *data, char **out, size_t *len, char *err,
              size_t size)
{
	const char *descr = descr_of(shape->dtype);
	int64_t bytes = st_shape_bytes(shape);
	if (descr == NULL || bytes < 0)
		return fail(err, size, "cannot write a tensor of this type or size");
	st_buf h;
	st_buf_init(&h);
	st_buf_printf(&h, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
	for (int i = 0; i < shape->rank; i++)
		st_buf_printf(&h, "%s%" PRId64, i ? ", " : "", shape->dims[i]);
	/* As numpy writes it: (3,) for one dimension, (2, 3) for more. */
	st_buf_puts(&h, shape->rank == 1 ? ",), }" : "), }");
	/* Pad with spaces so that the data starts on a 64-byte boundary. */
	while ((10 + h.len + 1) % 64 != 0)
		st_buf_putc(&h, ' ');
	st_buf_putc(&h, '\n');
	if (h.len > 65535) {
		st_buf_free(&h);
		return fail(err, size, "the header is too long for format 1.0");
	}
	size_t total = 10 + h.len + (size_t)bytes;
	char *buf = st_xmalloc(total);
	memcpy(buf, "\x93NUMPY\x01\x00", 8);
	buf[8] = (char)(h.len & 0xff);
	buf[9] = (char)(h.len >> 8);
	memcpy(buf + 10, h.data, h.len);
	if (bytes > 0)
		memcpy(buf + 10 + h.len, data, (size_t)bytes);
	st_buf_free(&h);
	*out = buf;
	*len = total;
	return 0;
}

int
st_npy_write(const char *path, const st_shape *shape, const void *data, char *err, size_t size)
{
	char *buf;
	size_t len;
	if (st_npy_encode(shape, data, &buf, &len, err, size) != 0)
		return -1;
	int rc = st_write_file_atomic(path, buf, len, err, size);
	free(buf);
	return rc;
}
