/* Plans on a device backend, without a GPU: the "fake" module
 * (tests/backends/fake-backend.c) gives device memory the host can check
 * and a stream that runs only at sync, and the engine-test plugin has a
 * few layers for it. Every result is compared with the same plan on the
 * CPU; the fake's totals show what the engine asked of the device. */
#include "config.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../backends/fake-device.h"
#include "helpers.h"
#include "st-backend.h"
#include "st-engine.h"

static st_registry *
registry(void)
{
	static st_registry *r;
	if (r == NULL) {
		r = st_registry_new();
		st_registry_load_default(r);
		char *path = st_xasprintf("%s/engine-test.so", getenv("TEST_PLUGIN_DIR"));
		st_plugin *pl = st_registry_load_file(r, path);
		cr_assert(pl->loaded, "%s: %s", path, pl->refusal ? pl->refusal : "?");
		free(path);
	}
	return r;
}

/* The fake module on the backend path, and its totals. */
static const fake_totals *
fake(void)
{
	const char *top = getenv("top_builddir");
	cr_assert(top != NULL, "top_builddir is not set: run through make check");
	char dir[4096], path[4200];
	snprintf(dir, sizeof dir, "%s/tests/backends/.libs", top);
	setenv("STRATA_BACKEND_PATH", dir, 1);
	char why[1024];
	cr_assert_not_null(st_backend_load("fake", why, sizeof why), "%s", why);
	snprintf(path, sizeof path, "%s/strata-fake.so", dir);
	void *h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
	cr_assert_not_null(h, "%s", dlerror());
	fake_backend_totals_fn get = (fake_backend_totals_fn)(uintptr_t)dlsym(h, "fake_backend_totals");
	cr_assert_not_null(get);
	return get();
}

static st_session *
model(const char *script)
{
	st_session *s = st_session_new(st_graph_new(registry()), NULL);
	st_diag d;
	st_diag_init(&d);
	int rc = st_session_run_script(s, script, "test", &d);
	cr_assert_eq(rc, 0, "%s", d.count ? d.items[0].text : "");
	st_diag_free(&d);
	st_graph_check(st_session_graph(s));
	cr_assert_eq(st_session_graph(s)->errors, 0);
	return s;
}

static st_plan *
compile_on(st_session *s, const char *backend, int format, bool keep)
{
	st_plan_options opt = { .format = format, .threads = 1, .backend = backend, .keep_outputs = keep };
	st_diag d;
	st_diag_init(&d);
	st_plan *p = st_plan_compile(st_session_graph(s), &opt, &d);
	cr_assert_not_null(p, "%s: %s", backend, d.count ? d.items[0].text : "");
	st_diag_free(&d);
	st_diag_init(&d);
	cr_assert_eq(st_plan_bind_random_weights(p, 7, &d), 0, "%s", d.count ? d.items[0].text : "");
	st_diag_free(&d);
	return p;
}

/* Feeds x[i] = sin(i + phase) to input 0 (values of both signs). */
static void
feed(st_plan *p, const st_shape *shape, float phase)
{
	int64_t n = st_shape_elements(shape);
	float *x = malloc(sizeof *x * (size_t)n);
	for (int64_t i = 0; i < n; i++)
		x[i] = sinf((float)i + phase);
	st_tensor t = { .data = x, .shape = *shape, .layout = ST_LAYOUT_NCHW };
	st_diag d;
	st_diag_init(&d);
	cr_assert_eq(st_plan_set_input(p, 0, &t, &d), 0, "%s", d.count ? d.items[0].text : "");
	st_diag_free(&d);
	free(x);
}

/* Runs p and returns output 0 (caller frees). */
static float *
run(st_plan *p, int64_t *n)
{
	st_diag d;
	st_diag_init(&d);
	cr_assert_eq(st_plan_run(p, &d), 0, "%s", d.count ? d.items[0].text : "");
	st_diag_free(&d);
	*n = st_shape_elements(st_plan_output_shape(p, 0));
	float *y = malloc(sizeof *y * (size_t)*n);
	st_plan_get_output(p, 0, y);
	return y;
}

#define assert_close(got, want, n, rtol) assert_close_at(got, want, n, rtol, __LINE__)

static void
assert_close_at(const float *got, const float *want, int64_t n, double rtol, int line)
{
	for (int64_t i = 0; i < n; i++)
		cr_assert(fabs(got[i] - want[i]) <= rtol * (1 + fabs(want[i])),
		          "line %d: element %lld: %g, expected %g (%lld elements)", line, (long long)i, got[i],
		          want[i], (long long)n);
}

static const char chain[] = "add input data; set data dims 3x4x5; add add_bias b; connect data b;"
                            "add scale_rt s; connect b s; add triple t; connect s t;"
                            "add add_bias b2; activation b2 relu; connect t b2; add output out; connect b2 out";

/* One run of the chain on the CPU and on the fake device, in format. */
static void
same_as_cpu(int format, double rtol)
{
	const fake_totals *tot = fake();
	st_session *s = model(chain);
	st_plan *cpu = compile_on(s, "cpu", ST_FORMAT_FP32_NCHW, false);
	st_plan *dev = compile_on(s, "fake", format, false);
	const st_shape *shape = st_plan_input_shape(cpu, 0);
	feed(cpu, shape, 0);
	feed(dev, shape, 0);
	int64_t n, m;
	float *want = run(cpu, &n), *got = run(dev, &m);
	cr_assert_eq(n, m);
	cr_assert_eq(n, 60);
	assert_close(got, want, n, rtol);
	bool negative = false, zero = false;
	for (int64_t i = 0; i < n; i++)
		negative |= want[i] < 0, zero |= want[i] == 0;
	cr_assert(!negative && zero, "the relu applied on the device");
	free(want);
	free(got);
	st_plan_free(dev);
	st_plan_free(cpu);
	st_session_free(s);
	cr_assert_eq(tot->opened, tot->closed);
	cr_assert_eq(tot->live_allocs, 0, "device memory left: %ld allocations", tot->live_allocs);
	cr_assert_eq(tot->live_host, 0);
	cr_assert_eq(tot->failures, 0, "%s", tot->last_error);
}

Test(device, a_plan_on_the_device_computes_as_on_the_cpu)
{
	same_as_cpu(ST_FORMAT_FP32_NCHW, 1e-6);
}

Test(device, fp16_nhwc_converts_on_the_device)
{
	same_as_cpu(ST_FORMAT_FP16_NHWC, 1e-2);
	/* The conversions are steps of the plan, run by the module. */
	st_session *s = model(chain);
	st_plan *p = compile_on(s, "fake", ST_FORMAT_FP16_NHWC, false);
	int conversions = 0;
	for (int i = 0; i < st_plan_step_count(p); i++) {
		st_step_info info;
		st_plan_step(p, i, &info);
		conversions += info.kind == ST_STEP_CONVERT;
	}
	cr_assert_geq(conversions, 2, "%d conversions", conversions);
	cr_assert_eq(st_plan_arena_align(p), 256);
	st_plan_free(p);
	st_session_free(s);
}

Test(device, runs_are_recorded_once_and_replayed)
{
	const fake_totals *tot = fake();
	st_session *s = model(chain);
	st_plan *cpu = compile_on(s, "cpu", ST_FORMAT_FP32_NCHW, false);
	st_plan *dev = compile_on(s, "fake", ST_FORMAT_FP32_NCHW, false);
	const st_shape *shape = st_plan_input_shape(cpu, 0);
	int64_t n;
	/* Run 1 eager, run 2 records and replays, runs 3 and 4 replay: each
	 * with new input values, which a replay must read. */
	for (int r = 0; r < 4; r++) {
		feed(cpu, shape, (float)r);
		feed(dev, shape, (float)r);
		long launches = tot->launches;
		float *want = run(cpu, &n), *got = run(dev, &n);
		assert_close(got, want, n, 1e-6);
		free(want);
		free(got);
		cr_assert_eq(tot->records, r == 0 ? 0 : 1, "run %d: %ld recordings", r, tot->records);
		cr_assert_eq(tot->replays, r == 0 ? 0 : r, "run %d: %ld replays", r, tot->replays);
		if (r >= 2)
			cr_assert_eq(tot->launches, launches, "a replay launches nothing anew");
	}
	/* A runtime option is baked into the recording: a new value records again. */
	const st_graph *g = st_session_graph(s);
	const st_layer *sl = st_graph_find(g, "s");
	char err[256];
	cr_assert_eq(st_plan_set_runtime(cpu, sl, "factor", "-1.5", err, sizeof err), 0, "%s", err);
	cr_assert_eq(st_plan_set_runtime(dev, sl, "factor", "-1.5", err, sizeof err), 0, "%s", err);
	float *want = run(cpu, &n), *got = run(dev, &n);
	assert_close(got, want, n, 1e-6);
	free(want);
	free(got);
	cr_assert_eq(tot->records, 2);
	/* A new input size re-plans: eager first, then recorded again. */
	st_shape bigger = *shape;
	bigger.dims[2] = 6;
	for (int r = 0; r < 3; r++) {
		feed(cpu, &bigger, 0.5f);
		feed(dev, &bigger, 0.5f);
		want = run(cpu, &n);
		got = run(dev, &n);
		cr_assert_eq(n, 3 * 6 * 5, "%lld", (long long)n);
		assert_close(got, want, n, 1e-6);
		free(want);
		free(got);
	}
	cr_assert_eq(tot->records, 3);
	st_plan_free(dev);
	st_plan_free(cpu);
	st_session_free(s);
	cr_assert_eq(tot->live_allocs, 0);
	cr_assert_eq(tot->failures, 0, "%s", tot->last_error);
}

Test(device, profiled_runs_are_timed_on_the_device_and_not_recorded)
{
	const fake_totals *tot = fake();
	st_session *s = model(chain);
	st_plan *p = compile_on(s, "fake", ST_FORMAT_FP16_NHWC, false);
	feed(p, st_plan_input_shape(p, 0), 0);
	st_plan_set_profiling(p, true);
	int64_t n;
	for (int r = 0; r < 3; r++)
		free(run(p, &n));
	cr_assert_eq(tot->records, 0);
	const double *sec = st_plan_step_seconds(p);
	cr_assert_not_null(sec);
	for (int i = 0; i < st_plan_step_count(p); i++)
		cr_assert(sec[i] >= 0 && sec[i] < 10, "step %d: %g s", i, sec[i]);
	st_plan_set_profiling(p, false);
	free(run(p, &n));
	free(run(p, &n));
	cr_assert_eq(tot->records, 1);
	st_plan_free(p);
	st_session_free(s);
	cr_assert_eq(tot->failures, 0, "%s", tot->last_error);
}

Test(device, kept_layer_outputs_come_back_from_the_device)
{
	fake();
	st_session *s = model(chain);
	st_plan *cpu = compile_on(s, "cpu", ST_FORMAT_FP32_NCHW, true);
	st_plan *dev = compile_on(s, "fake", ST_FORMAT_FP16_NHWC, true);
	feed(cpu, st_plan_input_shape(cpu, 0), 0);
	feed(dev, st_plan_input_shape(dev, 0), 0);
	int64_t n;
	free(run(cpu, &n));
	free(run(dev, &n));
	const st_layer *t = st_graph_find(st_session_graph(s), "t");
	float want[60], got[60];
	cr_assert_eq(st_plan_get_layer_output(cpu, t, 0, want), 0);
	cr_assert_eq(st_plan_get_layer_output(dev, t, 0, got), 0);
	assert_close(got, want, 60, 1e-2);
	st_plan_free(dev);
	st_plan_free(cpu);
	st_session_free(s);
}

Test(device, an_activation_the_implementation_does_not_apply_is_refused)
{
	fake();
	st_session *s = model("add input data; set data dims 1x2x3x3; add triple t; activation t negate_test;"
	                      "connect data t; add output out; connect t out");
	st_plan_options opt = { .format = ST_FORMAT_FP32_NCHW, .threads = 1, .backend = "fake" };
	st_diag d;
	st_diag_init(&d);
	cr_assert_null(st_plan_compile(st_session_graph(s), &opt, &d));
	cr_assert_geq(d.count, 1);
	cr_assert(strstr(d.items[0].text, "layer 't'") && strstr(d.items[0].text, "negate_test"), "%s",
	          d.items[0].text);
	st_diag_free(&d);
	st_session_free(s);
}

Test(device, a_plan_too_large_for_the_device_is_an_error)
{
	const fake_totals *tot = fake();
	st_session *s = model("add input data; set data dims 4x2x65536x65536; add triple t; connect data t;"
	                      "add output out; connect t out");
	st_plan_options opt = { .format = ST_FORMAT_FP32_NCHW, .threads = 1, .backend = "fake" };
	st_diag d;
	st_diag_init(&d);
	cr_assert_null(st_plan_compile(st_session_graph(s), &opt, &d));
	cr_assert(d.count >= 1 && strstr(d.items[0].text, "does not fit on Fake GPU 0") &&
	              strstr(d.items[0].text, "out of memory"),
	          "%s", d.count ? d.items[0].text : "");
	st_diag_free(&d);
	st_session_free(s);
	cr_assert_eq(tot->opened, tot->closed);
	cr_assert_eq(tot->live_allocs, 0);
}

Test(device, a_backend_without_a_device_says_why)
{
	fake();
	st_session *s = model(chain);
	st_plan_options opt = { .format = ST_FORMAT_FP32_NCHW, .threads = 1, .backend = "nodev" };
	st_diag d;
	st_diag_init(&d);
	cr_assert_null(st_plan_compile(st_session_graph(s), &opt, &d));
	cr_assert(d.count >= 1 && strstr(d.items[0].text, "no fake device is plugged in"), "%s",
	          d.count ? d.items[0].text : "");
	st_diag_free(&d);
	st_session_free(s);
}

/* Reads a whole file (caller frees), or NULL. */
static char *
slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL)
		return NULL;
	char *text = calloc(1, 1 << 16);
	size_t n = fread(text, 1, (1 << 16) - 1, f);
	text[n] = '\0';
	fclose(f);
	return text;
}

/* api->algo_find and algo_keep: a choice made on the device is kept in the
 * user's cache file, under the device's name and the module's versions,
 * and found by the next plan; a damaged file is left as it is. */
Test(device, algorithm_choices_are_kept_per_device)
{
	fake();
	char dir[] = "/tmp/strata-algo-XXXXXX";
	cr_assert_not_null(mkdtemp(dir));
	setenv("XDG_CACHE_HOME", dir, 1);
	char *file = st_xasprintf("%s/strata/cudnn-algos.json", dir);
	st_session *s = model(chain);
	st_plan *p = compile_on(s, "fake", ST_FORMAT_FP32_NCHW, false);
	char *text = slurp(file);
	cr_assert_not_null(text, "no cache file %s", file);
	cr_assert(strstr(text, "Fake GPU 0") && strstr(text, "fake 1.0") && strstr(text, "scale_rt 60"), "%s", text);
	free(text);
	st_plan_free(p);
	st_session_free(s);
	char *cmd = st_xasprintf("rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
	free(cmd);
	free(file);
}

/* Writes text to XDG_CACHE_HOME's algorithm cache in a new folder, whose
 * name goes to dir (PATH_MAX); returns the file (caller frees). */
static char *
cache_with(const char *text, char *dir)
{
	strcpy(dir, "/tmp/strata-algo-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	setenv("XDG_CACHE_HOME", dir, 1);
	char *sub = st_xasprintf("%s/strata", dir);
	cr_assert_eq(mkdir(sub, 0700), 0);
	free(sub);
	char *file = st_xasprintf("%s/strata/cudnn-algos.json", dir);
	FILE *f = fopen(file, "w");
	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
	return file;
}

static void
remove_dir(const char *dir)
{
	char *cmd = st_xasprintf("rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
	free(cmd);
}

/* A choice in the file is what the implementation gets (the engine-test
 * plugin refuses any but its own, so the run fails naming it). */
Test(device, a_kept_choice_is_read_from_the_file)
{
	fake();
	char dir[64];
	char *file = cache_with("{\"format\": \"strata-algo-cache\", \"version\": 1, \"devices\": [{\"device\": "
	                        "\"Fake GPU 0\", \"library\": \"fake 1.0\", \"entries\": [{\"key\": \"scale_rt 60\", "
	                        "\"algo\": 9, \"math\": 1, \"workspace\": 256, \"ms\": 0.25}]}]}\n",
	                        dir);
	st_session *s = model(chain);
	st_plan_options opt = { .format = ST_FORMAT_FP32_NCHW, .threads = 1, .backend = "fake" };
	st_diag d;
	st_diag_init(&d);
	st_plan *p = st_plan_compile(st_session_graph(s), &opt, &d);
	cr_assert_not_null(p);
	cr_assert_neq(st_plan_bind_random_weights(p, 7, &d), 0);
	cr_assert(d.count >= 1 && strstr(d.items[d.count - 1].text, "the algorithm cache gave algo 9"), "%s",
	          d.count ? d.items[d.count - 1].text : "");
	st_diag_free(&d);
	st_plan_free(p);
	st_session_free(s);
	remove_dir(dir);
	free(file);
}

/* A damaged file is neither used nor overwritten; plans still run. */
Test(device, a_damaged_cache_file_is_left_alone)
{
	fake();
	char dir[64];
	char *file = cache_with("{ not json", dir);
	st_session *s = model(chain);
	st_plan *p = compile_on(s, "fake", ST_FORMAT_FP32_NCHW, false);
	feed(p, st_plan_input_shape(p, 0), 0);
	int64_t n;
	free(run(p, &n));
	st_plan_free(p);
	char *text = slurp(file);
	cr_assert_str_eq(text, "{ not json");
	free(text);
	st_session_free(s);
	remove_dir(dir);
	free(file);
}
