/* Unit tests: every reference case under tests/reference (ONNX Runtime and
 * numpy results) through the whole engine, in every tensor format: FP32
 * agrees within rtol 1e-5 and FP16 within 1e-2 (ARCHITECTURE.md). */
#include "config.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "helpers.h"
#include "st-engine.h"
#include "st-io.h"

/* Runs one case folder in one format; returns false with why. */
static bool
run_case(const char *dir, st_tensor_format format, char *why, size_t size)
{
	char *path = st_xasprintf("%s/model.strata.json", dir);
	st_diag d;
	st_diag_init(&d);
	st_graph *g = st_model_load(path, test_registry(), &d);
	free(path);
	if (g == NULL) {
		snprintf(why, size, "load: %s", d.count ? d.items[0].text : "?");
		st_diag_free(&d);
		return false;
	}
	st_graph_check(g);
	st_plan_options opt = { .format = (int)format, .threads = 2 };
	st_plan *p = st_plan_compile(g, &opt, &d);
	bool ok = p != NULL;
	if (!ok)
		snprintf(why, size, "compile: %s", d.count ? d.items[0].text : "?");
	char *weights = st_xasprintf("%s/weights", dir);
	struct stat st;
	if (ok && st_plan_bind_weights(p, stat(weights, &st) == 0 ? weights : NULL, &d) != 0) {
		snprintf(why, size, "weights: %s", d.count ? d.items[d.count - 1].text : "?");
		ok = false;
	}
	free(weights);
	for (int i = 0; ok && i < st_plan_input_count(p); i++) {
		char *file = st_xasprintf("%s/input_%s.npy", dir, st_plan_input_name(p, i));
		st_npy a;
		char err[256];
		if (st_npy_read(file, &a, err, sizeof err) != 0) {
			snprintf(why, size, "%s", err);
			ok = false;
		} else {
			st_tensor t = { .data = (void *)a.data, .layout = ST_LAYOUT_NCHW };
			t.shape.rank = a.rank;
			memcpy(t.shape.dims, a.dims, sizeof a.dims);
			int dtype = st_npy_type_dtype(a.type);
			t.shape.dtype = dtype >= 0 ? (st_dtype)dtype : ST_DTYPE_FLOAT32;
			if (dtype < 0 || st_plan_set_input(p, i, &t, &d) != 0) {
				snprintf(why, size, "input %s: %s", st_plan_input_name(p, i),
				         d.count ? d.items[d.count - 1].text : "unusable dtype");
				ok = false;
			}
			st_npy_free(&a);
		}
		free(file);
	}
	if (ok && st_plan_run(p, &d) != 0) {
		snprintf(why, size, "run: %s", d.count ? d.items[d.count - 1].text : "?");
		ok = false;
	}
	bool half = format == ST_FORMAT_FP16_NCHW || format == ST_FORMAT_FP16_NHWC;
	for (int o = 0; ok && o < st_plan_output_count(p); o++) {
		char *file = st_xasprintf("%s/expected_%s.npy", dir, st_plan_output_name(p, o));
		st_npy want;
		char err[256];
		if (st_npy_read(file, &want, err, sizeof err) != 0) {
			snprintf(why, size, "%s", err);
			ok = false;
			free(file);
			break;
		}
		/* A reference computed in float16 carries its rounding: FP16 tolerance. */
		bool fp16_reference = want.type == ST_NPY_F2;
		const st_shape *s = st_plan_output_shape(p, o);
		int64_t n = st_shape_elements(s);
		if (n != want.count) {
			snprintf(why, size, "output %s has %lld elements, expected %lld", st_plan_output_name(p, o),
			         (long long)n, (long long)want.count);
			ok = false;
		} else if (s->dtype == ST_DTYPE_FLOAT32) {
			float *got = st_xmalloc(sizeof *got * (size_t)(n ? n : 1));
			st_plan_get_output(p, o, got);
			if (st_npy_convert(&want, ST_DTYPE_FLOAT32, err, sizeof err) != 0) {
				snprintf(why, size, "%s", err);
				ok = false;
			} else if (!test_allclose(got, want.data, n, half || fp16_reference ? 1e-2 : 1e-5, why, size)) {
				ok = false;
			}
			free(got);
		} else {
			/* Integers and booleans agree exactly. */
			int64_t bytes = st_shape_bytes(s);
			void *got = st_xmalloc((size_t)(bytes > 0 ? bytes : 1));
			st_plan_get_output(p, o, got);
			if (st_npy_convert(&want, s->dtype, err, sizeof err) != 0 ||
			    memcmp(got, want.data, (size_t)bytes) != 0) {
				snprintf(why, size, "output %s differs (%s)", st_plan_output_name(p, o), st_dtype_name(s->dtype));
				ok = false;
			}
			free(got);
		}
		st_npy_free(&want);
		free(file);
	}
	st_diag_free(&d);
	st_plan_free(p);
	st_graph_free(g);
	return ok;
}

static int
compare_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Runs every case of an area in a format; reports each failure. */
static void
run_area(const char *area, st_tensor_format format)
{
	const char *top = getenv("top_srcdir");
	cr_assert_not_null(top, "top_srcdir is not set (run through make check)");
	char *base = st_xasprintf("%s/tests/reference/%s", top, area);
	DIR *dir = opendir(base);
	cr_assert_not_null(dir, "no reference folder %s", base);
	char **names = NULL;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(dir)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		char *model = st_xasprintf("%s/%s/model.strata.json", base, e->d_name);
		struct stat st;
		if (stat(model, &st) == 0) {
			names = st_xreallocarray(names, (size_t)n + 1, sizeof *names);
			names[n++] = st_xstrdup(e->d_name);
		}
		free(model);
	}
	closedir(dir);
	qsort(names, (size_t)n, sizeof *names, compare_names);
	cr_assert_gt(n, 10, "only %d cases in %s", n, base);
	int failures = 0;
	for (int i = 0; i < n; i++) {
		char *path = st_xasprintf("%s/%s", base, names[i]);
		char why[512];
		if (!run_case(path, format, why, sizeof why)) {
			cr_log_error("%s/%s in %s: %s", area, names[i], st_tensor_format_name(format), why);
			failures++;
		}
		free(path);
		free(names[i]);
	}
	free(names);
	free(base);
	cr_assert_eq(failures, 0, "%d of %d %s cases fail in %s", failures, n, area,
	             st_tensor_format_name(format));
}

Test(conformance, nn_fp32_nchw, .timeout = 600) { run_area("nn", ST_FORMAT_FP32_NCHW); }
Test(conformance, nn_fp32_nhwc, .timeout = 600) { run_area("nn", ST_FORMAT_FP32_NHWC); }
Test(conformance, nn_fp16_nchw, .timeout = 600) { run_area("nn", ST_FORMAT_FP16_NCHW); }
Test(conformance, nn_fp16_nhwc, .timeout = 600) { run_area("nn", ST_FORMAT_FP16_NHWC); }
Test(conformance, tensor_fp32_nchw, .timeout = 600) { run_area("tensor", ST_FORMAT_FP32_NCHW); }
Test(conformance, tensor_fp32_nhwc, .timeout = 600) { run_area("tensor", ST_FORMAT_FP32_NHWC); }
Test(conformance, tensor_fp16_nchw, .timeout = 600) { run_area("tensor", ST_FORMAT_FP16_NCHW); }
Test(conformance, tensor_fp16_nhwc, .timeout = 600) { run_area("tensor", ST_FORMAT_FP16_NHWC); }

/* Runs an example with seeded random weights and inputs in one format;
 * returns its first output as float32 (caller frees). */
static float *
run_example(const char *name, st_tensor_format format, int64_t *n)
{
	char *path = st_xasprintf("%s/examples/%s", getenv("top_srcdir"), name);
	st_diag d;
	st_diag_init(&d);
	st_graph *g = st_model_load(path, test_registry(), &d);
	cr_assert_not_null(g, "%s", d.count ? d.items[0].text : "");
	st_graph_check(g);
	st_plan_options opt = { .format = (int)format, .threads = 2 };
	st_plan *p = st_plan_compile(g, &opt, &d);
	cr_assert_not_null(p, "%s", d.count ? d.items[0].text : "");
	cr_assert_eq(st_plan_bind_random_weights(p, 11, &d), 0, "%s", d.count ? d.items[0].text : "");
	for (int i = 0; i < st_plan_input_count(p); i++) {
		const st_shape *s = st_plan_input_shape(p, i);
		int64_t count = st_shape_elements(s);
		float *x = st_xmalloc(sizeof *x * (size_t)count);
		st_weights_random(x, count, 0, 5 + (uint64_t)i);
		st_tensor t = { .data = x, .shape = *s };
		t.shape.dtype = ST_DTYPE_FLOAT32;
		cr_assert_eq(st_plan_set_input(p, i, &t, &d), 0);
		free(x);
	}
	cr_assert_eq(st_plan_run(p, &d), 0, "%s", d.count ? d.items[0].text : "");
	*n = st_shape_elements(st_plan_output_shape(p, 0));
	float *y = st_xmalloc(sizeof *y * (size_t)*n);
	st_plan_get_output(p, 0, y);
	st_diag_free(&d);
	st_plan_free(p);
	st_graph_free(g);
	free(path);
	return y;
}

static void
formats_agree(const char *example)
{
	int64_t n, m;
	float *base = run_example(example, ST_FORMAT_FP32_NCHW, &n);
	const st_tensor_format others[] = { ST_FORMAT_FP32_NHWC, ST_FORMAT_FP16_NCHW, ST_FORMAT_FP16_NHWC };
	for (int f = 0; f < 3; f++) {
		float *y = run_example(example, others[f], &m);
		cr_assert_eq(m, n);
		char why[256];
		bool half = others[f] != ST_FORMAT_FP32_NHWC;
		cr_assert(test_allclose(y, base, n, half ? 1e-2 : 1e-5, why, sizeof why), "%s in %s: %s", example,
		          st_tensor_format_name(others[f]), why);
		free(y);
	}
	free(base);
}

Test(conformance, cnn_classifier_formats_agree, .timeout = 600) { formats_agree("cnn_classifier.strata.json"); }
Test(conformance, resnet18_formats_agree, .timeout = 600) { formats_agree("resnet18.strata.json"); }
Test(conformance, unet_small_formats_agree, .timeout = 600) { formats_agree("unet_small.strata.json"); }
Test(conformance, fashion_mnist_formats_agree, .timeout = 600)
{
	formats_agree("fashion_mnist/fashion_mnist.strata.json");
}
