/* Loading backend modules: the search path, and every way a module can
 * fail to be usable (tests/backends/fake-backend.c builds the fakes).
 * Criterion runs each test in its own process, so each starts with
 * nothing loaded. */
#include "config.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "st-backend.h"
#include "st-core.h"

/* Points $STRATA_BACKEND_PATH at the fakes' build folder (then extra). */
static void
use_fakes(const char *extra)
{
	const char *top = getenv("top_builddir");
	cr_assert(top != NULL, "top_builddir is not set: run through make check");
	char path[4096];
	snprintf(path, sizeof path, "%s/tests/backends/.libs%s%s", top, extra ? ":" : "", extra ? extra : "");
	setenv("STRATA_BACKEND_PATH", path, 1);
}

Test(backend, loads_a_module_and_lists_its_devices)
{
	use_fakes(NULL);
	char why[1024] = "";
	const st_backend_module *m = st_backend_load("fake", why, sizeof why);
	cr_assert(m != NULL, "%s", why);
	cr_assert_str_eq(m->name, "fake");
	cr_assert_eq(m->device_count(why, sizeof why), 2);
	st_backend_device d;
	cr_assert_eq(m->device_info(1, &d, why, sizeof why), 0);
	cr_assert_str_eq(d.name, "Fake GPU 1");
	cr_assert_eq(d.memory_bytes, (uint64_t)2 << 30);
	/* The same table the second time: loaded once. */
	cr_assert_eq(st_backend_load("fake", why, sizeof why), m);
	st_backend_device first;
	cr_assert_eq(st_backend_ready("fake", &first, why, sizeof why), 0, "%s", why);
	cr_assert_str_eq(first.name, "Fake GPU 0");
	cr_assert_eq(first.arch_major, 9);
}

Test(backend, a_module_without_devices_says_why)
{
	use_fakes(NULL);
	char why[1024] = "";
	cr_assert(st_backend_load("nodev", why, sizeof why) != NULL, "%s", why);
	cr_assert_eq(st_backend_ready("nodev", NULL, why, sizeof why), -1);
	cr_assert_str_eq(why, "the nodev backend is unavailable: no fake device is plugged in");
}

Test(backend, another_abi_is_refused)
{
	use_fakes(NULL);
	char why[1024] = "";
	cr_assert_null(st_backend_load("oldabi", why, sizeof why));
	cr_assert(strstr(why, "strata-oldabi.so was built for backend ABI 99") != NULL, "%s", why);
	cr_assert_eq(st_backend_ready("oldabi", NULL, why, sizeof why), -1);
	cr_assert(strstr(why, "the oldabi backend is unavailable: ") == why, "%s", why);
}

Test(backend, a_module_without_its_entry_point_is_refused)
{
	use_fakes(NULL);
	char why[1024] = "";
	cr_assert_null(st_backend_load("noentry", why, sizeof why));
	cr_assert(strstr(why, "is not a Strata backend module (no st_backend_module_get)") != NULL, "%s", why);
}

Test(backend, a_missing_module_names_the_folders_searched)
{
	setenv("STRATA_BACKEND_PATH", "/nonexistent/one:/nonexistent/two", 1);
	char why[1024] = "";
	cr_assert_null(st_backend_load("nothere", why, sizeof why));
	cr_assert(strstr(why, "no strata-nothere.so in /nonexistent/one:/nonexistent/two") == why, "%s", why);
}

Test(backend, garbage_named_like_a_module_is_not_loaded)
{
	char dir[] = "/tmp/strata-backend-XXXXXX";
	cr_assert(mkdtemp(dir) != NULL);
	char file[256];
	snprintf(file, sizeof file, "%s/strata-junk.so", dir);
	FILE *f = fopen(file, "wb");
	cr_assert(f != NULL);
	fputs("\x7f" "ELF but not really, just bytes\n", f);
	fclose(f);
	setenv("STRATA_BACKEND_PATH", dir, 1);
	char why[1024] = "";
	cr_assert_null(st_backend_load("junk", why, sizeof why));
	cr_assert(strstr(why, "the junk backend's module cannot be loaded: ") == why, "%s", why);
	cr_assert(strstr(why, file) != NULL, "the reason names the file: %s", why);
	unlink(file);
	rmdir(dir);
}

Test(backend, a_broken_module_earlier_on_the_path_gives_way_to_a_good_one)
{
	char dir[] = "/tmp/strata-backend-XXXXXX";
	cr_assert(mkdtemp(dir) != NULL);
	char file[256];
	snprintf(file, sizeof file, "%s/strata-fake.so", dir);
	FILE *f = fopen(file, "wb");
	cr_assert(f != NULL);
	fputs("not a shared object", f);
	fclose(f);
	const char *top = getenv("top_builddir");
	cr_assert(top != NULL);
	char path[4096];
	snprintf(path, sizeof path, "%s:%s/tests/backends/.libs", dir, top);
	setenv("STRATA_BACKEND_PATH", path, 1);
	char why[1024] = "";
	const st_backend_module *m = st_backend_load("fake", why, sizeof why);
	cr_assert(m != NULL, "%s", why);
	cr_assert_str_eq(m->build, "fake build");
	unlink(file);
	rmdir(dir);
}

Test(backend, names_that_are_paths_are_refused)
{
	use_fakes(NULL);
	char why[1024] = "";
	cr_assert_null(st_backend_load("../fake", why, sizeof why));
	cr_assert_str_eq(why, "'../fake' is not a backend name");
	cr_assert_null(st_backend_load("", why, sizeof why));
	cr_assert_null(st_backend_load("FAKE", why, sizeof why));
}

Test(backend, the_search_path_starts_with_the_environment)
{
	setenv("STRATA_BACKEND_PATH", "/a:/b", 1);
	char *path = st_backend_search_path();
	cr_assert(strncmp(path, "/a:/b:", 6) == 0, "%s", path);
	/* Then one more folder: the installed one (the tests do not run
	 * from the build tree's top). */
	cr_assert(strchr(path + 6, ':') == NULL, "%s", path);
	free(path);
}

/* The CUDA module, where this build has one: it loads on any machine, and
 * either finds a device or says why not in words a user can act on. */
Test(backend, the_cuda_module_loads_and_explains_itself)
{
	if (!st_backend_built("cuda")) {
		const char *top = getenv("top_builddir");
		cr_assert(top != NULL);
		setenv("STRATA_BACKEND_PATH", "/nonexistent", 1);
		char why[1024] = "";
		cr_assert_null(st_backend_load("cuda", why, sizeof why));
		cr_assert(strstr(why, "this build of strata has no CUDA backend") == why, "%s", why);
		return;
	}
	const char *top = getenv("top_builddir");
	cr_assert(top != NULL);
	char path[4096];
	snprintf(path, sizeof path, "%s/src/backend/cuda/.libs", top);
	setenv("STRATA_BACKEND_PATH", path, 1);
	char why[1024] = "";
	const st_backend_module *m = st_backend_load("cuda", why, sizeof why);
	cr_assert(m != NULL, "%s", why);
	cr_assert(strstr(m->build, "CUDA ") == m->build, "%s", m->build);
	char versions[256];
	m->versions(versions, sizeof versions);
	cr_assert(strstr(versions, "cuDNN 9.") != NULL, "%s", versions);
	int n = m->device_count(why, sizeof why);
	if (n < 1) {
		cr_assert(strstr(why, "NVIDIA driver") != NULL || strstr(why, "CUDA device") != NULL ||
		                  strstr(why, "cannot run") != NULL,
		          "an unexplained failure: %s", why);
		cr_log_info("no CUDA device here: %s", why);
	} else {
		st_backend_device d;
		cr_assert_eq(m->device_info(0, &d, why, sizeof why), 0, "%s", why);
		cr_assert(d.name[0] != '\0');
		cr_assert(d.arch_major >= 7, "sm_%d%d", d.arch_major, d.arch_minor);
	}
}

/* ---- when a recorded run may be replayed (backend-capture.c) ---- */

static st_capture_key
key(uint64_t build, uint64_t weights, uint64_t runtime)
{
	static char arena[1], scratch[1], staging[1];
	st_capture_key k = { .gen = { build, weights, runtime }, .arena = arena, .scratch = scratch,
		             .staging = staging, .device = 0 };
	return k;
}

Test(capture, warm_up_then_record_then_replay)
{
	st_capture_state s = { 0 };
	st_capture_key k = key(1, 1, 0);
	const char *why = "unset";
	cr_assert_eq(st_capture_next(&s, &k, &why), ST_CAPTURE_EAGER, "the first run warms up");
	cr_assert_str_eq(why, "");
	cr_assert_eq(st_capture_next(&s, &k, &why), ST_CAPTURE_RECORD);
	for (int i = 0; i < 5; i++)
		cr_assert_eq(st_capture_next(&s, &k, &why), ST_CAPTURE_REPLAY, "run %d", i);
	cr_assert_eq(s.records, 1);
}

Test(capture, each_change_is_named_and_rerecords)
{
	static const struct {
		const char *why;
		st_capture_action after; /* the first run after the change */
	} cases[] = {
		{ "a runtime option changed", ST_CAPTURE_RECORD },
		{ "weights were bound again", ST_CAPTURE_RECORD },
		{ "the plan was rebuilt (new input sizes)", ST_CAPTURE_EAGER },
		{ "the arena moved", ST_CAPTURE_RECORD },
		{ "another device", ST_CAPTURE_EAGER },
	};
	static char other_arena[1];
	for (int c = 0; c < 5; c++) {
		st_capture_state s = { 0 };
		st_capture_key k = key(1, 1, 0);
		st_capture_next(&s, &k, NULL);
		st_capture_next(&s, &k, NULL);
		cr_assert_eq(st_capture_next(&s, &k, NULL), ST_CAPTURE_REPLAY);
		switch (c) {
		case 0: k.gen.runtime++; break;
		case 1: k.gen.weights++; break;
		case 2: k.gen.build++; break;
		case 3: k.arena = other_arena; break;
		default: k.device = 1; break;
		}
		const char *why = NULL;
		cr_assert_eq(st_capture_next(&s, &k, &why), cases[c].after, "case %d", c);
		cr_assert_str_eq(why, cases[c].why);
		if (cases[c].after == ST_CAPTURE_EAGER)
			cr_assert_eq(st_capture_next(&s, &k, &why), ST_CAPTURE_RECORD, "case %d", c);
		cr_assert_eq(st_capture_next(&s, &k, &why), ST_CAPTURE_REPLAY, "case %d", c);
		cr_assert_eq(s.records, 2, "case %d", c);
	}
}

Test(capture, profiled_and_one_off_runs_are_never_recorded)
{
	st_capture_state s = { 0 };
	st_capture_key k = key(3, 1, 0);
	st_capture_next(&s, &k, NULL);
	cr_assert_eq(st_capture_next(&s, &k, NULL), ST_CAPTURE_RECORD);
	st_capture_key prof = k;
	prof.profiling = true;
	const char *why = NULL;
	cr_assert_eq(st_capture_next(&s, &prof, &why), ST_CAPTURE_EAGER);
	cr_assert_str_eq(why, "a profiled run");
	/* The recording survives a profiled run. */
	cr_assert_eq(st_capture_next(&s, &k, &why), ST_CAPTURE_REPLAY);
	/* A trigger: one eager run, then the option's reset (a runtime change)
	 * records again. */
	st_capture_key once = k;
	once.one_off = true;
	once.gen.runtime++;
	cr_assert_eq(st_capture_next(&s, &once, &why), ST_CAPTURE_EAGER);
	cr_assert_str_eq(why, "a one-off run");
	k.gen.runtime += 2;
	cr_assert_eq(st_capture_next(&s, &k, &why), ST_CAPTURE_RECORD);
	cr_assert_str_eq(why, "a runtime option changed");
	cr_assert_eq(s.records, 2);
}

Test(capture, stale_compares_everything_baked_in)
{
	st_capture_key a = key(1, 2, 3), b = a;
	cr_assert_null(st_capture_stale(&a, &b));
	static char elsewhere[1];
	b.scratch = elsewhere;
	cr_assert_str_eq(st_capture_stale(&a, &b), "the scratch area moved");
	b = a;
	b.staging = elsewhere;
	cr_assert_str_eq(st_capture_stale(&a, &b), "the staging buffers moved");
	/* Profiling and one-off are not baked into a recording. */
	b = a;
	b.profiling = true;
	b.one_off = true;
	cr_assert_null(st_capture_stale(&a, &b));
}
