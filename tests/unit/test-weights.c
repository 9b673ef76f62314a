/* Unit tests: the weights folder (mapping, conversion, shape checks, missing
 * files) and seeded random weights. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers.h"
#include "st-io.h"

/* Writes <dir>/<name> holding data of shape (dtype in shape). */
static void
put(const char *dir, const char *name, st_shape s, const void *data)
{
	char *path = st_xasprintf("%s/%s", dir, name), err[512];
	cr_assert_eq(st_npy_write(path, &s, data, err, sizeof err), 0, "%s", err);
	free(path);
}

/* Writes raw bytes as <dir>/<name>. */
static void
put_raw(const char *dir, const char *name, const char *data, size_t len)
{
	char *path = st_xasprintf("%s/%s", dir, name), err[512];
	cr_assert_eq(st_write_file_atomic(path, data, len, err, sizeof err), 0, "%s", err);
	free(path);
}

static st_shape
shape4(int64_t a, int64_t b, int64_t c, int64_t d)
{
	return (st_shape){ .dtype = ST_DTYPE_FLOAT32, .rank = 4, .dims = { a, b, c, d } };
}

static st_shape
shape1(st_dtype t, int64_t n)
{
	return (st_shape){ .dtype = t, .rank = 1, .dims = { n } };
}

Test(weights, open_refuses_missing_folders_and_files)
{
	char err[512];
	cr_assert_null(st_weights_open("/nonexistent/weights", err, sizeof err));
	cr_assert_str_eq(err, "weights folder /nonexistent/weights: No such file or directory");
	char *dir = test_temp_dir("weights");
	put_raw(dir, "file", "x", 1);
	char *file = st_xasprintf("%s/file", dir), want[600];
	cr_assert_null(st_weights_open(file, err, sizeof err));
	snprintf(want, sizeof want, "weights folder %s is not a folder", file);
	cr_assert_str_eq(err, want);
	st_weights *w = st_weights_open(dir, err, sizeof err);
	cr_assert_not_null(w, "%s", err);
	cr_assert_str_eq(st_weights_dir(w), dir);
	st_weights_close(w);
	st_weights_close(NULL);
	free(file);
	test_remove_dir(dir);
}

Test(weights, file_names_are_layer_underscore_weight)
{
	char err[256];
	st_weights *w = st_weights_open("/tmp", err, sizeof err);
	char *p = st_weights_path(w, "conv1", "weights");
	cr_assert_str_eq(p, "/tmp/conv1_weights.npy");
	free(p);
	st_weights_close(w);
	w = st_weights_open("/tmp/", err, sizeof err);
	p = st_weights_path(w, "bn1", "variance");
	cr_assert_str_eq(p, "/tmp/bn1_variance.npy");
	free(p);

	/* Names cannot reach outside the folder. */
	st_npy a;
	st_shape s = shape1(ST_DTYPE_FLOAT32, 1);
	cr_assert_eq(st_weights_load(w, "../etc/x", "weights", &s, false, &a, err, sizeof err), -1);
	cr_assert_str_eq(err, "'../etc/x' and 'weights' do not make a weights file name");
	cr_assert_eq(st_weights_load(w, "conv1", "", &s, true, &a, err, sizeof err), -1);
	st_weights_close(w);
}

Test(weights, float32_files_are_used_in_place)
{
	char *dir = test_temp_dir("weights"), err[512];
	float v[6] = { 1, 2, 3, 4, 5, 6 };
	put(dir, "conv1_weights.npy", shape4(2, 3, 1, 1), v);
	st_weights *w = st_weights_open(dir, err, sizeof err);
	st_npy a;
	st_shape want = shape4(2, 3, 1, 1);
	cr_assert_eq(st_weights_load(w, "conv1", "weights", &want, false, &a, err, sizeof err), 0, "%s", err);
	cr_assert_not_null(a.map, "float32 weights stay memory-mapped");
	cr_assert_null(a.owned);
	cr_assert_eq(a.type, ST_NPY_F4);
	cr_assert_eq((uintptr_t)a.data % 64, 0);
	cr_assert(memcmp(a.data, v, sizeof v) == 0);
	st_npy_free(&a);
	st_weights_close(w);
	test_remove_dir(dir);
}

Test(weights, other_types_convert_to_float32)
{
	char *dir = test_temp_dir("weights"), err[512];
	double f8[3] = { 0.1, -2, 1e-3 };
	/* float64 has no st_dtype: write it by hand. */
	const char *header = "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }";
	size_t h = strlen(header), padded = h + 1;
	while ((10 + padded) % 64)
		padded++;
	char *buf = st_xcalloc(1, 10 + padded + sizeof f8);
	memcpy(buf, "\x93NUMPY\x01\x00", 8);
	buf[8] = (char)padded;
	memcpy(buf + 10, header, h);
	memset(buf + 10 + h, ' ', padded - h - 1);
	buf[9 + padded] = '\n';
	memcpy(buf + 10 + padded, f8, sizeof f8);
	put_raw(dir, "a_weights.npy", buf, 10 + padded + sizeof f8);
	free(buf);
	uint16_t f2[3] = { st_float_to_half(0.5f), st_float_to_half(-1), 0 };
	put(dir, "a_bias.npy", shape1(ST_DTYPE_FLOAT16, 3), f2);
	int64_t i8[3] = { 1, -2, 3 };
	put(dir, "a_mean.npy", shape1(ST_DTYPE_INT64, 3), i8);
	uint8_t u1[3] = { 0, 128, 255 };
	put(dir, "a_scale.npy", shape1(ST_DTYPE_UINT8, 3), u1);

	st_weights *w = st_weights_open(dir, err, sizeof err);
	st_shape s = shape1(ST_DTYPE_FLOAT32, 3);
	const struct {
		const char *weight;
		float want[3];
	} cases[] = {
		{ "weights", { 0.1f, -2, 1e-3f } },
		{ "bias", { 0.5f, -1, 0 } },
		{ "mean", { 1, -2, 3 } },
		{ "scale", { 0, 128, 255 } },
	};
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		st_npy a;
		cr_assert_eq(st_weights_load(w, "a", cases[k].weight, &s, false, &a, err, sizeof err), 0, "%s", err);
		cr_assert_eq(a.type, ST_NPY_F4);
		cr_assert_null(a.map, "the mapping is released after conversion");
		cr_assert_eq((uintptr_t)a.data % 64, 0);
		for (int i = 0; i < 3; i++)
			cr_assert_eq(((const float *)a.data)[i], cases[k].want[i], "%s[%d]", cases[k].weight, i);
		st_npy_free(&a);
	}

	/* A constant's values take its own dtype. */
	st_shape ints = shape1(ST_DTYPE_INT32, 3);
	st_npy a;
	cr_assert_eq(st_weights_load(w, "a", "mean", &ints, false, &a, err, sizeof err), 0, "%s", err);
	cr_assert(memcmp(a.data, (int32_t[]){ 1, -2, 3 }, 12) == 0);
	st_npy_free(&a);
	char want[600];
	cr_assert_eq(st_weights_load(w, "a", "weights", &ints, false, &a, err, sizeof err), -1);
	snprintf(want, sizeof want,
	         "%s/a_weights.npy: element 0 (0.10000000000000001) is not a whole number, which int32 needs "
	         "(converting <f8 to int32)",
	         dir);
	cr_assert_str_eq(err, want);
	cr_assert_null(a.data);
	st_weights_close(w);
	test_remove_dir(dir);
}

Test(weights, shape_mismatches_name_the_file_and_both_shapes)
{
	char *dir = test_temp_dir("weights"), err[512], want[600];
	float *v = st_xcalloc(64 * 3 * 3 * 3, sizeof *v);
	put(dir, "conv1_weights.npy", shape4(64, 3, 3, 3), v);
	put(dir, "conv1_bias.npy", (st_shape){ .rank = 2, .dims = { 1, 64 } }, v);
	st_weights *w = st_weights_open(dir, err, sizeof err);
	st_npy a;
	st_shape s = shape4(64, 3, 7, 7);
	cr_assert_eq(st_weights_load(w, "conv1", "weights", &s, false, &a, err, sizeof err), -1);
	snprintf(want, sizeof want, "%s/conv1_weights.npy: expected 64x3x7x7, found 64x3x3x3", dir);
	cr_assert_str_eq(err, want);
	cr_assert_null(a.data);
	cr_assert_null(a.map);

	s = shape1(ST_DTYPE_FLOAT32, 64);
	cr_assert_eq(st_weights_load(w, "conv1", "bias", &s, false, &a, err, sizeof err), -1);
	snprintf(want, sizeof want, "%s/conv1_bias.npy: expected 64, found 1x64", dir);
	cr_assert_str_eq(err, want);

	st_shape scalar = { .dtype = ST_DTYPE_FLOAT32, .rank = 0 };
	cr_assert_eq(st_weights_load(w, "conv1", "bias", &scalar, false, &a, err, sizeof err), -1);
	snprintf(want, sizeof want, "%s/conv1_bias.npy: expected scalar, found 1x64", dir);
	cr_assert_str_eq(err, want);
	free(v);
	st_weights_close(w);
	test_remove_dir(dir);
}

Test(weights, missing_files_name_the_path_unless_optional)
{
	char *dir = test_temp_dir("weights"), err[512] = "", want[600];
	st_weights *w = st_weights_open(dir, err, sizeof err);
	st_npy a;
	st_shape s = shape1(ST_DTYPE_FLOAT32, 64);
	cr_assert_eq(st_weights_load(w, "conv1", "bias", &s, false, &a, err, sizeof err), -1);
	snprintf(want, sizeof want, "%s/conv1_bias.npy: no such file (layer 'conv1' needs its 'bias' weight, 64)", dir);
	cr_assert_str_eq(err, want);

	err[0] = '\0';
	cr_assert_eq(st_weights_load(w, "conv1", "bias", &s, true, &a, err, sizeof err), 1);
	cr_assert_null(a.data);
	cr_assert_eq(a.count, 0);
	cr_assert_str_eq(err, "", "an absent optional weight is no error");
	st_npy_free(&a);
	st_weights_close(w);
	test_remove_dir(dir);
}

Test(weights, damaged_files_name_the_path)
{
	char *dir = test_temp_dir("weights"), err[512], want[800];
	float v[4] = { 0 };
	put(dir, "fc_weights.npy", shape1(ST_DTYPE_FLOAT32, 4), v);
	char *path = st_xasprintf("%s/fc_weights.npy", dir);
	cr_assert_eq(truncate(path, 128 + 12), 0);
	st_weights *w = st_weights_open(dir, err, sizeof err);
	st_npy a;
	st_shape s = shape1(ST_DTYPE_FLOAT32, 4);
	cr_assert_eq(st_weights_load(w, "fc", "weights", &s, true, &a, err, sizeof err), -1);
	snprintf(want, sizeof want, "%s: truncated: the header says 4 of <f4 (16 bytes of data), the file holds 12", path);
	cr_assert_str_eq(err, want);

	/* A folder where the file should be is not "missing". */
	char *sub = st_xasprintf("%s/fc_bias.npy", dir);
	cr_assert_eq(mkdir(sub, 0755), 0);
	cr_assert_eq(st_weights_load(w, "fc", "bias", &s, true, &a, err, sizeof err), -1);
	snprintf(want, sizeof want, "%s is not a regular file", sub);
	cr_assert_str_eq(err, want);
	free(sub);
	free(path);
	st_weights_close(w);
	test_remove_dir(dir);
}

Test(weights, data_aligned_less_than_64_bytes_is_copied)
{
	/* Older numpy padded headers to 16 bytes: data at offset 80. */
	char *dir = test_temp_dir("weights"), err[512];
	const char *header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
	size_t h = strlen(header), padded = 70;
	char buf[80 + 8];
	memcpy(buf, "\x93NUMPY\x01\x00", 8);
	buf[8] = (char)padded;
	buf[9] = 0;
	memcpy(buf + 10, header, h);
	memset(buf + 10 + h, ' ', padded - h - 1);
	buf[79] = '\n';
	const float v[2] = { 2.5f, -1 };
	memcpy(buf + 80, v, sizeof v);
	put_raw(dir, "x_weights.npy", buf, sizeof buf);
	st_weights *w = st_weights_open(dir, err, sizeof err);
	st_npy a;
	st_shape s = shape1(ST_DTYPE_FLOAT32, 2);
	cr_assert_eq(st_weights_load(w, "x", "weights", &s, false, &a, err, sizeof err), 0, "%s", err);
	cr_assert_eq((uintptr_t)a.data % 64, 0);
	cr_assert_null(a.map);
	cr_assert(memcmp(a.data, v, sizeof v) == 0);
	st_npy_free(&a);
	st_weights_close(w);
	test_remove_dir(dir);
}

/* ---- random weights ---- */

Test(weights, random_values_are_the_same_everywhere)
{
	/* Pinned: computed by an independent splitmix64 in Python. */
	float v[4];
	st_weights_random(v, 4, 9, 42);
	const float want[4] = { 0x1.49d10ep-3f, -0x1.d055eep-3f, -0x1.2e4882p-3f, -0x1.a9769ap-4f };
	for (int i = 0; i < 4; i++)
		cr_assert_eq(v[i], want[i], "value %d is %a", i, (double)v[i]);
	float u[3];
	st_weights_random(u, 3, 0, 0);
	const float want0[3] = { 0x1.8882a2p-1f, -0x1.187618p-3f, -0x1.e4ee8ap-1f };
	for (int i = 0; i < 3; i++)
		cr_assert_eq(u[i], want0[i], "value %d is %a", i, (double)u[i]);

	/* The same seed, the same values; a prefix of a longer run is the shorter run. */
	float a[1000], b[1000];
	st_weights_random(a, 1000, 27, 7);
	st_weights_random(b, 1000, 27, 7);
	cr_assert(memcmp(a, b, sizeof a) == 0);
	st_weights_random(b, 10, 27, 7);
	cr_assert(memcmp(a, b, 10 * sizeof *a) == 0);
	st_weights_random(b, 1000, 27, 8);
	cr_assert(memcmp(a, b, sizeof a) != 0);
}

Test(weights, random_values_are_uniform_within_the_bound)
{
	enum { N = 200000 };
	float *v = st_xmalloc(N * sizeof *v);
	const int64_t fan_ins[] = { 1, 9, 576, 0, -3 };
	for (size_t k = 0; k < sizeof fan_ins / sizeof fan_ins[0]; k++) {
		double bound = fan_ins[k] > 0 ? 1 / sqrt((double)fan_ins[k]) : 1;
		st_weights_random(v, N, fan_ins[k], 1000 + k);
		double sum = 0, sq = 0, lo = INFINITY, hi = -INFINITY;
		int buckets[10] = { 0 };
		for (int i = 0; i < N; i++) {
			cr_assert(fabsf(v[i]) <= (float)bound, "value %g beyond %g", (double)v[i], bound);
			sum += v[i];
			sq += (double)v[i] * v[i];
			lo = fmin(lo, v[i]);
			hi = fmax(hi, v[i]);
			int b = (int)((v[i] / bound + 1) / 2 * 10);
			buckets[b < 0 ? 0 : b > 9 ? 9 : b]++;
		}
		double mean = sum / N, var = sq / N - mean * mean;
		cr_assert(fabs(mean) < 0.01 * bound, "mean %g", mean);
		cr_assert(fabs(var / (bound * bound) - 1.0 / 3) < 0.01, "variance %g of %g", var, bound * bound / 3);
		cr_assert(lo < -0.999 * bound && hi > 0.999 * bound);
		for (int b = 0; b < 10; b++)
			cr_assert(abs(buckets[b] - N / 10) < N / 100, "bucket %d holds %d", b, buckets[b]);
	}
	free(v);
}

Test(weights, seeds_come_from_names_and_the_run_seed)
{
	/* Pinned: FNV-1a of "conv1\0weights" xor splitmix64(run seed). */
	cr_assert_eq(st_weights_random_seed("conv1", "weights", 0), 0xddb210838b0bc128u);
	cr_assert_eq(st_weights_random_seed("conv1", "weights", 1234), 0x849e4ea1df0e105cu);
	cr_assert_eq(st_weights_random_seed("conv1", "weights", 1234), st_weights_random_seed("conv1", "weights", 1234));
	cr_assert_neq(st_weights_random_seed("conv1", "weights", 1), st_weights_random_seed("conv1", "weights", 2));
	cr_assert_neq(st_weights_random_seed("conv1", "bias", 1), st_weights_random_seed("conv1", "weights", 1));
	cr_assert_neq(st_weights_random_seed("conv2", "weights", 1), st_weights_random_seed("conv1", "weights", 1));
	/* The separator keeps "a_b" + "c" apart from "a" + "b_c". */
	cr_assert_neq(st_weights_random_seed("a_b", "c", 5), st_weights_random_seed("a", "b_c", 5));
	cr_assert_neq(st_weights_random_seed("ab", "c", 5), st_weights_random_seed("a", "bc", 5));
}
