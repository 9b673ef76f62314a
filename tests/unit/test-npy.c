/* Unit tests: .npy reading, writing and conversion, against files numpy
 * wrote (tests/data/npy, made by tests/data/npy/make.py) and headers built
 * by hand. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers.h"
#include "st-io.h"

/* The path of a committed fixture; caller frees. */
static char *
fixture(const char *name)
{
	const char *top = getenv("top_srcdir");
	cr_assert_not_null(top, "top_srcdir is not set (run through make check)");
	return st_xasprintf("%s/tests/data/npy/%s", top, name);
}

static void
read_fixture(const char *name, st_npy *a)
{
	char *path = fixture(name), err[512];
	cr_assert_eq(st_npy_read(path, a, err, sizeof err), 0, "%s: %s", name, err);
	free(path);
}

/* A .npy file in memory: magic, version, header length, the header padded
 * as numpy pads it, then n data bytes. Caller frees. */
static char *
make_npy(int major, int minor, const char *header, const void *data, size_t n, size_t *len)
{
	size_t prefix = major == 1 ? 10 : 12, h = strlen(header);
	size_t padded = h + 1;
	while ((prefix + padded) % 64 != 0)
		padded++;
	*len = prefix + padded + n;
	char *b = st_xmalloc(*len);
	memcpy(b, "\x93NUMPY", 6);
	b[6] = (char)major;
	b[7] = (char)minor;
	for (size_t i = 0; i < prefix - 8; i++)
		b[8 + i] = (char)((padded >> (8 * i)) & 0xff);
	memcpy(b + prefix, header, h);
	memset(b + prefix + h, ' ', padded - h - 1);
	b[prefix + padded - 1] = '\n';
	if (n > 0)
		memcpy(b + prefix + padded, data, n);
	return b;
}

/* Parses a hand-made file and returns st_npy_parse's status; the message
 * lands in err. buf must outlive a. */
static int
parse_text(int major, const char *header, const void *data, size_t n, char **buf, st_npy *a, char *err,
           size_t size)
{
	size_t len;
	*buf = make_npy(major, 0, header, data, n, &len);
	return st_npy_parse(*buf, len, a, err, size);
}

/* Asserts that a hand-made header is refused with exactly message. */
static void
assert_refused(const char *header, size_t data_bytes, const char *message)
{
	char *data = st_xcalloc(1, data_bytes + 1), *buf, err[512] = "";
	st_npy a;
	cr_assert_eq(parse_text(1, header, data, data_bytes, &buf, &a, err, sizeof err), -1,
	             "accepted: %s", header);
	cr_assert_str_eq(err, message, "header %s", header);
	cr_assert_null(a.data);
	free(buf);
	free(data);
}

static void
assert_dims(const st_npy *a, int rank, const int64_t *dims)
{
	cr_assert_eq(a->rank, rank);
	int64_t count = 1;
	for (int i = 0; i < rank; i++) {
		cr_assert_eq(a->dims[i], dims[i], "dim %d: %lld, expected %lld", i, (long long)a->dims[i],
		             (long long)dims[i]);
		count *= dims[i];
	}
	cr_assert_eq(a->count, count);
}

/* ---- writing and reading back ---- */

/* Element bytes that are valid for the dtype (bool holds only 0 and 1). */
static void
fill_pattern(st_dtype t, void *data, int64_t n)
{
	unsigned char *b = data;
	int size = st_dtype_size(t);
	for (int64_t i = 0; i < n * size; i++)
		b[i] = (unsigned char)(i * 37 + 11);
	if (t == ST_DTYPE_BOOL) {
		for (int64_t i = 0; i < n; i++)
			b[i] = (unsigned char)(i % 3 == 0);
	}
	if (t == ST_DTYPE_FLOAT32 || t == ST_DTYPE_FLOAT16) {
		/* Keep floats ordinary numbers so that any comparison is plain. */
		for (int64_t i = 0; i < n; i++) {
			if (t == ST_DTYPE_FLOAT32) {
				float f = (float)i * 0.75f - 3.0f;
				memcpy(b + i * 4, &f, 4);
			} else {
				uint16_t h = st_float_to_half((float)i * 0.5f - 2.0f);
				memcpy(b + i * 2, &h, 2);
			}
		}
	}
}

Test(npy, round_trip_every_dtype_and_rank)
{
	char *dir = test_temp_dir("npy");
	for (int t = 0; t < ST_DTYPE_COUNT; t++) {
		for (int rank = 0; rank <= ST_MAX_RANK; rank++) {
			st_shape s = { .dtype = (st_dtype)t, .rank = rank };
			for (int i = 0; i < rank; i++)
				s.dims[i] = i % 3 + 1 + (i == rank - 1);
			int64_t n = st_shape_elements(&s);
			size_t bytes = (size_t)st_shape_bytes(&s);
			void *data = st_xmalloc(bytes + 1);
			fill_pattern(s.dtype, data, n);

			char *buf, err[512];
			size_t len;
			cr_assert_eq(st_npy_encode(&s, data, &buf, &len, err, sizeof err), 0, "%s", err);
			cr_assert_eq((len - bytes) % 64, 0, "data does not start on a 64-byte boundary");
			st_npy a;
			cr_assert_eq(st_npy_parse(buf, len, &a, err, sizeof err), 0, "%s rank %d: %s",
			             st_dtype_name(s.dtype), rank, err);
			cr_assert_eq(st_npy_type_dtype(a.type), t);
			cr_assert_eq(a.version, 1);
			assert_dims(&a, rank, s.dims);
			cr_assert_eq(a.bytes, bytes);
			cr_assert(memcmp(a.data, data, bytes) == 0, "%s rank %d: data differs",
			          st_dtype_name(s.dtype), rank);
			free(buf);

			char *path = st_xasprintf("%s/%s-%d.npy", dir, st_dtype_name(s.dtype), rank);
			cr_assert_eq(st_npy_write(path, &s, data, err, sizeof err), 0, "%s", err);
			cr_assert_eq(st_npy_read(path, &a, err, sizeof err), 0, "%s", err);
			cr_assert_not_null(a.map, "a file is used in place");
			cr_assert_eq(st_npy_type_dtype(a.type), t);
			assert_dims(&a, rank, s.dims);
			cr_assert(memcmp(a.data, data, bytes) == 0);
			st_npy_free(&a);
			cr_assert_null(a.data);
			free(path);
			free(data);
		}
	}
	test_remove_dir(dir);
}

Test(npy, writes_headers_as_numpy_does)
{
	const struct {
		int rank;
		int64_t dims[2];
		const char *header;
	} cases[] = {
		{ 2, { 2, 3 }, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" },
		{ 1, { 3 }, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }" },
		{ 0, { 0 }, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }" },
	};
	float data[6] = { 0 };
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		st_shape s = { .dtype = ST_DTYPE_FLOAT32, .rank = cases[k].rank };
		memcpy(s.dims, cases[k].dims, sizeof cases[k].dims);
		char *buf, err[256];
		size_t len;
		cr_assert_eq(st_npy_encode(&s, data, &buf, &len, err, sizeof err), 0);
		size_t h = strlen(cases[k].header);
		cr_assert(memcmp(buf, "\x93NUMPY\x01\x00", 8) == 0);
		size_t header_len = (size_t)(unsigned char)buf[8] | (size_t)(unsigned char)buf[9] << 8;
		cr_assert_eq((10 + header_len) % 64, 0);
		cr_assert(memcmp(buf + 10, cases[k].header, h) == 0, "header %.*s", (int)header_len, buf + 10);
		for (size_t i = 10 + h; i < 9 + header_len; i++)
			cr_assert_eq(buf[i], ' ');
		cr_assert_eq(buf[9 + header_len], '\n');
		free(buf);
	}

	/* Types a .npy file cannot say are refused, not guessed. */
	st_shape bad = { .dtype = ST_DTYPE_COUNT, .rank = 1, .dims = { 1 } };
	char *buf, err[256];
	size_t len;
	cr_assert_eq(st_npy_encode(&bad, data, &buf, &len, err, sizeof err), -1);
	st_shape negative = { .dtype = ST_DTYPE_FLOAT32, .rank = 1, .dims = { -1 } };
	cr_assert_eq(st_npy_encode(&negative, data, &buf, &len, err, sizeof err), -1);
}

Test(npy, write_is_atomic_and_reports_failures)
{
	char *dir = test_temp_dir("npy"), err[512];
	st_shape s = { .dtype = ST_DTYPE_INT32, .rank = 1, .dims = { 2 } };
	int32_t v[2] = { 7, -7 };
	char *missing = st_xasprintf("%s/no/such/dir/x.npy", dir);
	cr_assert_eq(st_npy_write(missing, &s, v, err, sizeof err), -1);
	cr_assert(strstr(err, "no/such/dir") != NULL, "%s", err);
	char *path = st_xasprintf("%s/x.npy", dir);
	cr_assert_eq(st_npy_write(path, &s, v, err, sizeof err), 0);
	st_npy a;
	cr_assert_eq(st_npy_read(path, &a, err, sizeof err), 0);
	cr_assert_eq(((const int32_t *)a.data)[1], -7);
	st_npy_free(&a);
	free(missing);
	free(path);
	test_remove_dir(dir);
}

/* ---- files numpy wrote ---- */

Test(npy, reads_what_numpy_writes_for_every_type)
{
	st_npy a;
	read_fixture("f4.npy", &a);
	cr_assert_eq(a.type, ST_NPY_F4);
	assert_dims(&a, 2, (int64_t[]){ 2, 3 });
	const float *f = a.data;
	for (int i = 0; i < 6; i++)
		cr_assert_eq(f[i], (float)(i - 2) / 4);
	cr_assert_eq((uintptr_t)a.data % 64, 0, "numpy aligns data to 64 bytes");
	st_npy_free(&a);

	read_fixture("f2.npy", &a);
	cr_assert_eq(a.type, ST_NPY_F2);
	const uint16_t *h = a.data;
	cr_assert_eq(st_half_to_float(h[0]), 0.5f);
	cr_assert_eq(st_half_to_float(h[1]), -2.0f);
	cr_assert_eq(h[2], 0x7bff); /* 65504, the largest half */
	cr_assert_eq(h[3], 0x0001); /* 6e-08 rounds to the smallest subnormal */
	st_npy_free(&a);

	read_fixture("i1.npy", &a);
	cr_assert_eq(a.type, ST_NPY_I1);
	cr_assert(memcmp(a.data, (int8_t[]){ -128, -1, 0, 127 }, 4) == 0);
	st_npy_free(&a);

	read_fixture("u1.npy", &a);
	cr_assert_eq(a.type, ST_NPY_U1);
	assert_dims(&a, 3, (int64_t[]){ 2, 2, 2 });
	cr_assert_eq(((const uint8_t *)a.data)[7], 252);
	st_npy_free(&a);

	read_fixture("i2.npy", &a);
	cr_assert_eq(a.type, ST_NPY_I2);
	cr_assert(memcmp(a.data, (int16_t[]){ -32768, 7, 32767 }, 6) == 0);
	st_npy_free(&a);

	read_fixture("u2.npy", &a);
	cr_assert_eq(a.type, ST_NPY_U2);
	cr_assert(memcmp(a.data, (uint16_t[]){ 0, 65535 }, 4) == 0);
	st_npy_free(&a);

	read_fixture("i4.npy", &a);
	cr_assert_eq(a.type, ST_NPY_I4);
	cr_assert(memcmp(a.data, (int32_t[]){ INT32_MIN, 5, INT32_MAX }, 12) == 0);
	st_npy_free(&a);

	read_fixture("u4.npy", &a);
	cr_assert_eq(a.type, ST_NPY_U4);
	cr_assert(memcmp(a.data, (uint32_t[]){ 0, UINT32_MAX }, 8) == 0);
	st_npy_free(&a);

	read_fixture("i8.npy", &a);
	cr_assert_eq(a.type, ST_NPY_I8);
	cr_assert(memcmp(a.data, (int64_t[]){ INT64_MIN, -1, (1LL << 53) + 1, INT64_MAX }, 32) == 0);
	st_npy_free(&a);

	read_fixture("u8.npy", &a);
	cr_assert_eq(a.type, ST_NPY_U8);
	cr_assert(memcmp(a.data, (uint64_t[]){ 0, INT64_MAX, 1ULL << 63, UINT64_MAX }, 32) == 0);
	st_npy_free(&a);

	read_fixture("b1.npy", &a);
	cr_assert_eq(a.type, ST_NPY_B1);
	cr_assert(memcmp(a.data, (uint8_t[]){ 1, 0, 1 }, 3) == 0);
	st_npy_free(&a);

	read_fixture("f8.npy", &a);
	cr_assert_eq(a.type, ST_NPY_F8);
	cr_assert_eq(((const double *)a.data)[0], 0.1);
	st_npy_free(&a);
}

Test(npy, reads_scalars_empty_arrays_and_rank_8)
{
	st_npy a;
	read_fixture("scalar.npy", &a);
	cr_assert_eq(a.rank, 0);
	cr_assert_eq(a.count, 1);
	cr_assert_eq(*(const float *)a.data, 3.5f);
	st_npy_free(&a);

	read_fixture("empty.npy", &a);
	assert_dims(&a, 2, (int64_t[]){ 0, 3 });
	cr_assert_eq(a.bytes, 0);
	cr_assert_eq(st_npy_convert(&a, ST_DTYPE_INT8, NULL, 0), 0, "an empty array converts");
	cr_assert_eq(a.type, ST_NPY_I1);
	st_npy_free(&a);

	read_fixture("rank8.npy", &a);
	assert_dims(&a, 8, (int64_t[]){ 1, 2, 1, 2, 1, 1, 2, 1 });
	cr_assert_eq(((const float *)a.data)[7], 7.0f);
	st_npy_free(&a);
}

Test(npy, versions_2_and_3_and_a_header_above_64k)
{
	const char *names[] = { "v2.npy", "v3.npy" };
	for (int k = 0; k < 2; k++) {
		st_npy a;
		read_fixture(names[k], &a);
		cr_assert_eq(a.version, k + 2);
		assert_dims(&a, 1, (int64_t[]){ 4 });
		cr_assert_eq(((const float *)a.data)[3], 3.0f);
		st_npy_free(&a);
	}
	st_npy a;
	read_fixture("big_header.npy", &a);
	cr_assert_eq(a.version, 2);
	assert_dims(&a, 1, (int64_t[]){ 2 });
	cr_assert_eq(((const float *)a.data)[0], 1.5f);
	cr_assert_eq(((const float *)a.data)[1], -2.0f);
	st_npy_free(&a);
}

Test(npy, versions_by_hand)
{
	const float v[2] = { 1.25f, -8 };
	for (int major = 1; major <= 3; major++) {
		char *buf, err[256];
		st_npy a;
		cr_assert_eq(parse_text(major, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", v,
		                        sizeof v, &buf, &a, err, sizeof err),
		             0, "version %d: %s", major, err);
		cr_assert_eq(a.version, major);
		cr_assert_eq(((const float *)a.data)[1], -8.0f);
		cr_assert_eq(((const char *)a.data - buf) % 64, 0, "data after the padded header");
		free(buf);
	}
	/* Keys in any order, double quotes, no trailing comma, tabs. */
	char *buf, err[256];
	st_npy a;
	cr_assert_eq(parse_text(1, "{\"shape\":(2,),\t\"fortran_order\" : False, \"descr\":'<f4'}", v, sizeof v,
	                        &buf, &a, err, sizeof err),
	             0, "%s", err);
	cr_assert_eq(a.type, ST_NPY_F4);
	free(buf);
}

Test(npy, byte_order_prefixes)
{
	const struct {
		const char *descr;
		st_npy_type type;
	} ok[] = {
		{ "=f4", ST_NPY_F4 }, { "<f4", ST_NPY_F4 }, { "=f8", ST_NPY_F8 }, { "=i8", ST_NPY_I8 },
		{ "|u1", ST_NPY_U1 }, { "<u1", ST_NPY_U1 }, { ">u1", ST_NPY_U1 }, { "=u1", ST_NPY_U1 },
		{ "|i1", ST_NPY_I1 }, { ">i1", ST_NPY_I1 }, { "|b1", ST_NPY_B1 }, { ">b1", ST_NPY_B1 },
		{ "<f2", ST_NPY_F2 }, { "=u2", ST_NPY_U2 }, { "<u4", ST_NPY_U4 }, { "<u8", ST_NPY_U8 },
	};
	unsigned char data[8] = { 0 };
	for (size_t k = 0; k < sizeof ok / sizeof ok[0]; k++) {
		char header[128], *buf, err[256];
		snprintf(header, sizeof header, "{'descr': '%s', 'fortran_order': False, 'shape': (1,), }",
		         ok[k].descr);
		st_npy a;
		cr_assert_eq(parse_text(1, header, data, sizeof data, &buf, &a, err, sizeof err), 0, "%s: %s",
		             ok[k].descr, err);
		cr_assert_eq(a.type, ok[k].type, "%s", ok[k].descr);
		free(buf);
	}
	cr_assert_str_eq(st_npy_type_name(ST_NPY_U1), "|u1");
	cr_assert_str_eq(st_npy_type_name(ST_NPY_F8), "<f8");
	cr_assert_eq(st_npy_type_dtype(ST_NPY_F8), -1);
	cr_assert_eq(st_npy_type_dtype(ST_NPY_U2), -1);
}

Test(npy, python_2_longs)
{
	st_npy a;
	read_fixture("python2.npy", &a);
	assert_dims(&a, 2, (int64_t[]){ 2, 3 });
	cr_assert_eq(((const float *)a.data)[5], 5.0f);
	st_npy_free(&a);

	char *buf, err[256];
	float v[4] = { 0 };
	cr_assert_eq(parse_text(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4L,), }", v, sizeof v,
	                        &buf, &a, err, sizeof err),
	             0, "%s", err);
	assert_dims(&a, 1, (int64_t[]){ 4 });
	free(buf);
}

/* ---- refusals ---- */

Test(npy, refuses_what_is_not_npy_or_is_cut_short)
{
	char err[512];
	st_npy a;
	cr_assert_eq(st_npy_parse("PK\x03\x04 not numpy", 15, &a, err, sizeof err), -1);
	cr_assert_str_eq(err, "not a NumPy .npy file (no \\x93NUMPY magic)");
	cr_assert_eq(st_npy_parse("", 0, &a, err, sizeof err), -1);
	cr_assert_str_eq(err, "not a NumPy .npy file (no \\x93NUMPY magic)");

	/* Cut inside the fixed prefix, and inside the header text. */
	char *buf;
	size_t len;
	buf = make_npy(1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", NULL, 0, &len);
	const size_t cuts[] = { 7, 8, 9, 10, 40, len - 1 };
	for (size_t k = 0; k < sizeof cuts / sizeof cuts[0]; k++) {
		cr_assert_eq(st_npy_parse(buf, cuts[k], &a, err, sizeof err), -1, "cut at %zu", cuts[k]);
		cr_assert_str_eq(err, "truncated: the file ends inside its header", "cut at %zu", cuts[k]);
	}
	free(buf);
	buf = make_npy(2, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", NULL, 0, &len);
	cr_assert_eq(st_npy_parse(buf, 11, &a, err, sizeof err), -1);
	cr_assert_str_eq(err, "truncated: the file ends inside its header");
	free(buf);

	/* Cut inside the data: the message says what was promised. */
	float v[6] = { 0 };
	buf = make_npy(1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", v, sizeof v, &len);
	cr_assert_eq(st_npy_parse(buf, len - 4, &a, err, sizeof err), -1);
	cr_assert_str_eq(err, "truncated: the header says 2x3 of <f4 (24 bytes of data), the file holds 20");
	cr_assert_eq(a.rank, 0, "a refused array is left empty");
	free(buf);
}

Test(npy, refuses_other_versions)
{
	char *buf, err[256];
	size_t len;
	st_npy a;
	const int versions[][2] = { { 4, 0 }, { 0, 0 }, { 1, 1 }, { 255, 0 } };
	for (int k = 0; k < 4; k++) {
		buf = make_npy(1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }", "\0\0\0\0", 4,
		               &len);
		buf[6] = (char)versions[k][0];
		buf[7] = (char)versions[k][1];
		cr_assert_eq(st_npy_parse(buf, len, &a, err, sizeof err), -1);
		char want[128];
		snprintf(want, sizeof want, "format version %d.%d is not one of 1.0, 2.0, 3.0", versions[k][0],
		         versions[k][1]);
		cr_assert_str_eq(err, want);
		free(buf);
	}
}

Test(npy, refuses_what_numpy_can_write_but_strata_cannot_use)
{
	const struct {
		const char *file, *message;
	} cases[] = {
		{ "fortran.npy", "Fortran-ordered data; save it in C order, e.g. with np.ascontiguousarray(a)" },
		{ "big_endian.npy", "big-endian data ('>f4'); save it little-endian, e.g. with a.astype('<f4')" },
		{ "object.npy", "an array of Python objects cannot be read; save numbers" },
		{ "structured.npy", "structured arrays (record dtypes) are not supported" },
	};
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		char *path = fixture(cases[k].file), err[512], want[1024];
		st_npy a;
		cr_assert_eq(st_npy_read(path, &a, err, sizeof err), -1, "%s was accepted", cases[k].file);
		snprintf(want, sizeof want, "%s: %s", path, cases[k].message);
		cr_assert_str_eq(err, want);
		cr_assert_null(a.map);
		free(path);
	}
}

Test(npy, refuses_bad_headers)
{
	assert_refused("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 1, 1, 1, 1, 1, 1, 1), }", 4,
	               "the array has more than 8 dimensions");
	assert_refused("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'extra': 1, }", 8,
	               "the header has an unknown key 'extra'");
	assert_refused("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }", 0,
	               "a size in the header's 'shape' is too large");
	assert_refused("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", 0,
	               "the array's element count overflows");
	assert_refused("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 4294967296, 4294967296), }", 0,
	               "the array's element count overflows");
	assert_refused("{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904,), }", 0,
	               "the array's size in bytes overflows");
	assert_refused("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }", 0,
	               "the header's 'shape' holds something other than sizes");
	assert_refused("{'descr': '<f4', 'fortran_order': False, 'shape': 3, }", 0,
	               "the header's 'shape' is not a tuple");
	assert_refused("{'descr': '<f4', 'fortran_order': False, 'shape': (3 4), }", 0,
	               "the header's 'shape' is not a tuple of sizes");
	assert_refused("{'descr': '<f4', 'shape': (1,), }", 4, "the header lacks 'fortran_order'");
	assert_refused("{'fortran_order': False, 'shape': (1,), }", 4, "the header lacks 'descr'");
	assert_refused("{'descr': '<f4', 'fortran_order': False}", 4, "the header lacks 'shape'");
	assert_refused("{'descr': '<f4', 'fortran_order': 0, 'shape': (1,)}", 4,
	               "the header's 'fortran_order' is not True or False");
	assert_refused("{'descr': '<c8', 'fortran_order': False, 'shape': (1,)}", 8,
	               "unsupported element type '<c8' (supported: float16/32/64, integers of 8 to 64 bits, bool)");
	assert_refused("{'descr': '<U3', 'fortran_order': False, 'shape': (1,)}", 12,
	               "unsupported element type '<U3' (supported: float16/32/64, integers of 8 to 64 bits, bool)");
	assert_refused("{'descr': '>i8', 'fortran_order': False, 'shape': (1,)}", 8,
	               "big-endian data ('>i8'); save it little-endian, e.g. with a.astype('<i8')");
	assert_refused("{'descr': '|O', 'fortran_order': False, 'shape': (1,)}", 8,
	               "an array of Python objects cannot be read; save numbers");
	assert_refused("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,)}", 4,
	               "structured arrays (record dtypes) are not supported");
	assert_refused("{'descr': 3, 'fortran_order': False, 'shape': (1,)}", 4,
	               "the header's 'descr' is not a string");
	assert_refused("['descr', '<f4']", 4, "the header is not a Python dict");
	assert_refused("{descr: '<f4'}", 4, "the header is not a Python dict of quoted keys");
	assert_refused("{'descr': '<f4' 'fortran_order': False}", 4, "the header is not a well-formed dict");
	assert_refused("{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} junk", 4,
	               "the header has text after its dict");
	assert_refused("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2), 'shape': (2,)}", 8,
	               "the header repeats the key 'shape'");
	assert_refused("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}", 4,
	               "the header repeats the key 'descr'");
	assert_refused("{'descr': '<f4', 'fortran_order': False, 'shape': (1,)", 4,
	               "the header is not a well-formed dict");
}

Test(npy, read_reports_files_it_cannot_use)
{
	char err[512];
	st_npy a;
	cr_assert_eq(st_npy_read("/nonexistent/x.npy", &a, err, sizeof err), -1);
	cr_assert_str_eq(err, "cannot open /nonexistent/x.npy: No such file or directory");
	char *dir = test_temp_dir("npy");
	cr_assert_eq(st_npy_read(dir, &a, err, sizeof err), -1);
	cr_assert(strstr(err, "is not a regular file") != NULL, "%s", err);
	char *empty = st_xasprintf("%s/empty.npy", dir);
	cr_assert_eq(st_write_file_atomic(empty, "", 0, err, sizeof err), 0);
	cr_assert_eq(st_npy_read(empty, &a, err, sizeof err), -1);
	char want[600];
	snprintf(want, sizeof want, "%s: not a NumPy .npy file (no \\x93NUMPY magic)", empty);
	cr_assert_str_eq(err, want);
	free(empty);
	test_remove_dir(dir);
}

Test(npy, unaligned_data_is_copied_to_aligned_memory)
{
	/* A writer that does not pad: the data starts at an odd offset. */
	const char *header = "{'descr':'<f4','fortran_order':False,'shape':(3,)}\n";
	size_t h = strlen(header);
	float v[3] = { 1, 2, 3 };
	size_t len = 10 + h + sizeof v;
	char *buf = st_xmalloc(len);
	memcpy(buf, "\x93NUMPY\x01\x00", 8);
	buf[8] = (char)h;
	buf[9] = 0;
	memcpy(buf + 10, header, h);
	memcpy(buf + 10 + h, v, sizeof v);
	cr_assert_neq((10 + h) % 4, 0);
	char *dir = test_temp_dir("npy"), err[512];
	char *path = st_xasprintf("%s/odd.npy", dir);
	cr_assert_eq(st_write_file_atomic(path, buf, len, err, sizeof err), 0);
	st_npy a;
	cr_assert_eq(st_npy_read(path, &a, err, sizeof err), 0, "%s", err);
	cr_assert_eq((uintptr_t)a.data % 4, 0);
	cr_assert_null(a.map);
	cr_assert(memcmp(a.data, v, sizeof v) == 0);
	st_npy_free(&a);
	free(path);
	free(buf);
	test_remove_dir(dir);
}

/* ---- conversions ---- */

/* Converts fixture from to dtype and compares the bits with fixture want,
 * which numpy converted. */
static void
assert_converts_like_numpy(const char *from, st_dtype dtype, const char *want)
{
	st_npy a, b;
	char err[512];
	read_fixture(from, &a);
	read_fixture(want, &b);
	cr_assert_eq(st_npy_convert(&a, dtype, err, sizeof err), 0, "%s: %s", from, err);
	cr_assert_eq(a.count, b.count);
	cr_assert_eq(a.type, b.type);
	int size = st_dtype_size(dtype);
	for (int64_t i = 0; i < a.count; i++) {
		const unsigned char *x = (const unsigned char *)a.data + i * size,
		                    *y = (const unsigned char *)b.data + i * size;
		cr_assert(memcmp(x, y, (size_t)size) == 0, "%s to %s: element %lld differs from numpy's", from,
		          st_dtype_name(dtype), (long long)i);
	}
	st_npy_free(&a);
	st_npy_free(&b);
}

Test(npy, float64_converts_exactly_as_numpy_casts)
{
	assert_converts_like_numpy("f8.npy", ST_DTYPE_FLOAT32, "f8_as_f4.npy");
	assert_converts_like_numpy("f8.npy", ST_DTYPE_FLOAT16, "f8_as_f2.npy");

	/* Values whose float32 is known by heart. */
	st_npy a;
	char err[256];
	read_fixture("f8.npy", &a);
	cr_assert_eq(st_npy_convert(&a, ST_DTYPE_FLOAT32, err, sizeof err), 0);
	const float *f = a.data;
	cr_assert_eq(f[0], 0.1f);
	cr_assert_eq(f[1], -2.5f);
	cr_assert_eq(f[2], 1e-8f);
	cr_assert(isinf(f[3]) && f[3] > 0, "1e300 becomes inf");
	cr_assert(f[4] == 0 && signbit(f[4]), "-1e-300 becomes -0");
	cr_assert_null(a.map, "the mapping is released once converted");
	cr_assert_eq((uintptr_t)a.data % 64, 0);
	st_npy_free(&a);
}

Test(npy, integers_convert_to_float32_as_numpy_casts)
{
	assert_converts_like_numpy("i8_big.npy", ST_DTYPE_FLOAT32, "i8_big_as_f4.npy");
	assert_converts_like_numpy("u8_big.npy", ST_DTYPE_FLOAT32, "u8_big_as_f4.npy");

	const struct {
		const char *file;
		float want[4];
		int n;
	} cases[] = {
		{ "i1.npy", { -128, -1, 0, 127 }, 4 },    { "u1.npy", { 0, 36, 72, 108 }, 4 },
		{ "i2.npy", { -32768, 7, 32767 }, 3 },    { "u2.npy", { 0, 65535 }, 2 },
		{ "i4.npy", { -2147483648.0f, 5, 2147483648.0f }, 3 },
		{ "u4.npy", { 0, 4294967296.0f }, 2 },    { "b1.npy", { 1, 0, 1 }, 3 },
		{ "f2.npy", { 0.5f, -2, 65504, 5.9604645e-08f }, 4 },
	};
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		st_npy a;
		char err[256];
		read_fixture(cases[k].file, &a);
		cr_assert_eq(st_npy_convert(&a, ST_DTYPE_FLOAT32, err, sizeof err), 0, "%s", err);
		cr_assert_eq(a.type, ST_NPY_F4);
		for (int i = 0; i < cases[k].n; i++)
			cr_assert_eq(((const float *)a.data)[i], cases[k].want[i], "%s[%d]", cases[k].file, i);
		st_npy_free(&a);
	}
}

Test(npy, integers_convert_to_float16)
{
	st_npy a;
	char err[256];
	read_fixture("i8.npy", &a);
	cr_assert_eq(st_npy_convert(&a, ST_DTYPE_FLOAT16, err, sizeof err), 0, "%s", err);
	cr_assert_eq(a.type, ST_NPY_F2);
	cr_assert(memcmp(a.data, (uint16_t[]){ 0xfc00, 0xbc00, 0x7c00, 0x7c00 }, 8) == 0, "-inf, -1, inf, inf");
	st_npy_free(&a);
	read_fixture("u1.npy", &a);
	cr_assert_eq(st_npy_convert(&a, ST_DTYPE_FLOAT16, err, sizeof err), 0, "%s", err);
	for (int i = 0; i < 8; i++)
		cr_assert_eq(st_half_to_float(((const uint16_t *)a.data)[i]), (float)(36 * i));
	st_npy_free(&a);
}

Test(npy, converting_to_the_same_type_keeps_the_mapping)
{
	st_npy a;
	read_fixture("f4.npy", &a);
	const void *before = a.data;
	cr_assert_eq(st_npy_convert(&a, ST_DTYPE_FLOAT32, NULL, 0), 0);
	cr_assert_eq(a.data, before);
	cr_assert_not_null(a.map);
	st_npy_free(&a);
}

Test(npy, whole_floats_and_small_integers_convert_to_integer_types)
{
	st_npy a;
	char err[256];
	read_fixture("f8_whole.npy", &a);
	cr_assert_eq(st_npy_convert(&a, ST_DTYPE_INT64, err, sizeof err), 0, "%s", err);
	cr_assert(memcmp(a.data, (int64_t[]){ 0, -3, 255, 1000000000000000 }, 32) == 0);
	st_npy_free(&a);

	read_fixture("u8.npy", &a);
	a.count = 2; /* 0 and 2^63 - 1 fit int64 exactly */
	cr_assert_eq(st_npy_convert(&a, ST_DTYPE_INT64, err, sizeof err), 0, "%s", err);
	cr_assert(memcmp(a.data, (int64_t[]){ 0, INT64_MAX }, 16) == 0);
	st_npy_free(&a);

	read_fixture("u1.npy", &a);
	cr_assert_eq(st_npy_convert(&a, ST_DTYPE_INT32, err, sizeof err), 0, "%s", err);
	cr_assert_eq(((const int32_t *)a.data)[7], 252);
	cr_assert_eq(st_npy_convert(&a, ST_DTYPE_UINT8, err, sizeof err), 0, "%s", err);
	cr_assert_eq(((const uint8_t *)a.data)[7], 252);
	st_npy_free(&a);

	read_fixture("b1.npy", &a);
	cr_assert_eq(st_npy_convert(&a, ST_DTYPE_INT8, err, sizeof err), 0);
	cr_assert_eq(st_npy_convert(&a, ST_DTYPE_BOOL, err, sizeof err), 0);
	cr_assert(memcmp(a.data, (uint8_t[]){ 1, 0, 1 }, 3) == 0);
	st_npy_free(&a);

	read_fixture("i8.npy", &a);
	a.count = 2; /* INT64_MIN and -1 */
	cr_assert_eq(st_npy_convert(&a, ST_DTYPE_INT64, err, sizeof err), 0);
	st_npy_free(&a);
}

/* Asserts that converting fixture file to dtype is refused with message and
 * leaves the array as it was. */
static void
assert_convert_refused(const char *file, st_dtype dtype, const char *message)
{
	st_npy a;
	char err[512];
	read_fixture(file, &a);
	st_npy before = a;
	cr_assert_eq(st_npy_convert(&a, dtype, err, sizeof err), -1, "%s to %s", file, st_dtype_name(dtype));
	cr_assert_str_eq(err, message);
	cr_assert(memcmp(&a, &before, sizeof a) == 0, "a refused conversion changes nothing");
	st_npy_free(&a);
}

Test(npy, refuses_conversions_that_lose_values)
{
	assert_convert_refused("f4.npy", ST_DTYPE_INT32,
	                       "element 0 (-0.5) is not a whole number, which int32 needs");
	assert_convert_refused("f8.npy", ST_DTYPE_INT64,
	                       "element 0 (0.10000000000000001) is not a whole number, which int64 needs");
	assert_convert_refused("f8_whole.npy", ST_DTYPE_UINT8,
	                       "element 1 (-3) is out of the range of uint8 (0 to 255)");
	assert_convert_refused("f8_whole.npy", ST_DTYPE_INT32,
	                       "element 3 (1000000000000000) is out of the range of int32 (-2147483648 to 2147483647)");
	assert_convert_refused("f8_whole.npy", ST_DTYPE_BOOL, "element 1 (-3) is out of the range of bool (0 to 1)");
	assert_convert_refused("u8.npy", ST_DTYPE_INT64,
	                       "element 2 (9223372036854775808) is out of the range of int64 "
	                       "(-9223372036854775808 to 9223372036854775807)");
	assert_convert_refused("i8.npy", ST_DTYPE_INT8,
	                       "element 0 (-9223372036854775808) is out of the range of int8 (-128 to 127)");
	assert_convert_refused("i2.npy", ST_DTYPE_INT8, "element 0 (-32768) is out of the range of int8 (-128 to 127)");
	assert_convert_refused("u4.npy", ST_DTYPE_INT32,
	                       "element 1 (4294967295) is out of the range of int32 (-2147483648 to 2147483647)");
	assert_convert_refused("i1.npy", ST_DTYPE_UINT8, "element 0 (-128) is out of the range of uint8 (0 to 255)");
	assert_convert_refused("f8.npy", ST_DTYPE_COUNT, "cannot convert to an unknown type");

	/* NaN and infinities. */
	double v[3] = { 1, NAN, INFINITY };
	char *buf, err[256];
	st_npy a;
	cr_assert_eq(parse_text(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", v, sizeof v, &buf,
	                        &a, err, sizeof err),
	             0);
	cr_assert_eq(st_npy_convert(&a, ST_DTYPE_INT32, err, sizeof err), -1);
	cr_assert_str_eq(err, "element 1 is NaN, which int32 cannot hold");
	a.data = v + 2;
	a.count = 1;
	cr_assert_eq(st_npy_convert(&a, ST_DTYPE_INT64, err, sizeof err), -1);
	cr_assert_str_eq(err, "element 0 (inf) is out of the range of int64 (-9223372036854775808 to 9223372036854775807)");
	/* 2^63 as a double is one past int64's range. */
	double edge = 9223372036854775808.0;
	a.data = &edge;
	cr_assert_eq(st_npy_convert(&a, ST_DTYPE_INT64, err, sizeof err), -1);
	free(buf);
}

/* ---- for tests/cli/npy.sh ---- */

/* Writes one file per dtype into $STRATA_NPY_EXPORT for the shell test to
 * load with numpy; does nothing otherwise. */
Test(npy, export_for_numpy)
{
	const char *dir = getenv("STRATA_NPY_EXPORT");
	if (dir == NULL)
		cr_skip_test("STRATA_NPY_EXPORT is not set (tests/cli/npy.sh sets it)");
	for (int t = 0; t < ST_DTYPE_COUNT; t++) {
		for (int rank = 0; rank <= 3; rank++) {
			st_shape s = { .dtype = (st_dtype)t, .rank = rank };
			for (int i = 0; i < rank; i++)
				s.dims[i] = i + 2;
			int64_t n = st_shape_elements(&s);
			void *data = st_xmalloc((size_t)st_shape_bytes(&s) + 1);
			fill_pattern(s.dtype, data, n);
			char *path = st_xasprintf("%s/%s-%d.npy", dir, st_dtype_name(s.dtype), rank), err[512];
			cr_assert_eq(st_npy_write(path, &s, data, err, sizeof err), 0, "%s", err);
			free(path);
			free(data);
		}
	}
}
