/* Unit tests: plugin loading, refusals, the registry's lookups. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "helpers.h"

static char *
test_plugin(const char *name)
{
	const char *dir = getenv("TEST_PLUGIN_DIR");
	cr_assert_not_null(dir, "TEST_PLUGIN_DIR is not set (run through make check)");
	return st_xasprintf("%s/%s.so", dir, name);
}

/* A registry with std loaded first, as users have it. */
static st_registry *
registry_with_std(void)
{
	st_registry *r = st_registry_new();
	st_registry_load_default(r);
	cr_assert_not_null(st_registry_find_layer(r, "input"));
	return r;
}

Test(registry, std_loads_with_its_metadata)
{
	st_registry *r = registry_with_std();
	const st_layer_type *t = st_registry_find_layer(r, "identity");
	cr_assert_not_null(t);
	cr_assert_str_eq(t->plugin->name, "std");
	cr_assert_str_eq(t->plugin->version, PACKAGE_VERSION);
	cr_assert(t->plugin->loaded);
	cr_assert_eq(t->plugin->n_notes, 0, "std registers cleanly: %s",
	             t->plugin->n_notes ? t->plugin->notes[0] : "");
	/* Aliases find the same type. */
	cr_assert_eq(st_registry_find_layer(r, "in"), st_registry_find_layer(r, "input"));
	cr_assert_null(st_registry_find_layer(r, "no_such_layer"));
	cr_assert_str_eq(st_registry_suggest_layer(r, "identiy"), "identity");
	cr_assert_null(st_registry_suggest_layer(r, "qqqqqqqqq"));
	st_registry_free(r);
}

Test(registry, disabled_plugins_stay_listed_but_register_nothing)
{
	st_registry *r = st_registry_new();
	st_registry_disable(r, "std");
	st_registry_load_default(r);
	cr_assert_null(st_registry_find_layer(r, "input"));
	const st_plugin *std = NULL;
	for (int i = 0; i < r->n_plugins; i++) {
		if (r->plugins[i]->name && strcmp(r->plugins[i]->name, "std") == 0)
			std = r->plugins[i];
	}
	cr_assert_not_null(std, "a disabled plugin is still listed");
	cr_assert(std->disabled);
	cr_assert_not(std->loaded);
	cr_assert_eq(std->n_layers, 0);
	cr_assert(strstr(std->refusal, "disabled_plugins") != NULL, "%s", std->refusal);
	st_registry_free(r);
}

Test(registry, abi_mismatch_is_refused)
{
	st_registry *r = st_registry_new();
	char *path = test_plugin("bad-abi");
	st_plugin *p = st_registry_load_file(r, path);
	cr_assert_not(p->loaded);
	cr_assert(strstr(p->refusal, "built for plugin ABI 999") != NULL, "%s", p->refusal);
	cr_assert(strstr(p->refusal, "rebuild it") != NULL);
	free(path);
	st_registry_free(r);
}

Test(registry, missing_entry_point_is_refused)
{
	st_registry *r = st_registry_new();
	char *path = test_plugin("no-entry");
	st_plugin *p = st_registry_load_file(r, path);
	cr_assert_not(p->loaded);
	cr_assert_str_eq(p->refusal, "it has no entry point st_plugin_entry");
	free(path);
	st_registry_free(r);
}

Test(registry, not_a_plugin_and_missing_files)
{
	st_registry *r = st_registry_new();
	st_plugin *p = st_registry_load_file(r, "/nonexistent/plugin.so");
	cr_assert_not(p->loaded);
	cr_assert(strstr(p->refusal, "cannot be opened") != NULL);
	/* libc is a shared object, but not a Strata plugin. */
	p = st_registry_load_file(r, "libc.so.6");
	cr_assert_not(p->loaded);
	cr_assert(strstr(p->refusal, "not a Strata plugin") != NULL, "%s", p->refusal);
	cr_assert_eq(st_registry_load_dir(r, "/nonexistent"), 0);
	st_registry_free(r);
}

Test(registry, a_refusing_plugin_leaves_nothing_behind)
{
	st_registry *r = st_registry_new();
	char *path = test_plugin("refuses");
	st_plugin *p = st_registry_load_file(r, path);
	cr_assert_not(p->loaded);
	cr_assert_str_eq(p->refusal, "needs a device this machine does not have");
	cr_assert_null(st_registry_find_layer(r, "refused_layer"));
	cr_assert_eq(r->n_types, 0);
	free(path);
	st_registry_free(r);
}

Test(registry, duplicate_and_bad_types_are_refused_one_by_one)
{
	st_registry *r = registry_with_std();
	const st_layer_type *identity = st_registry_find_layer(r, "identity");
	const st_layer_type *conv = st_registry_find_layer(r, "convolution");
	char *path = test_plugin("dup-std");
	st_plugin *p = st_registry_load_file(r, path);
	cr_assert(p->loaded, "the rest of a plugin still loads");
	cr_assert_not_null(st_registry_find_layer(r, "dup_ok"));
	cr_assert_null(st_registry_find_layer(r, "bad_default"));
	bool saw_default = false, saw_clash = false;
	for (int i = 0; i < p->n_notes; i++) {
		saw_default |= strstr(p->notes[i], "'bad_default' refused: the default of parameter 'k' "
		                                   "must be a positive integer, got -3") != NULL;
		saw_clash |= strstr(p->notes[i], "'convolution' refused: the name is already provided by "
		                                 "plugin 'std'") != NULL;
	}
	bool saw_alias = false;
	for (int i = 0; i < p->n_notes; i++)
		saw_alias |= strstr(p->notes[i], "alias 'dup_alias' of 'dup_ok2' is invalid or already taken") != NULL;
	cr_assert(saw_default, "bad default reported");
	cr_assert(saw_clash, "clash with std reported");
	cr_assert(saw_alias, "an alias two types share is reported");
	cr_assert_str_eq(st_registry_find_layer(r, "dup_alias")->desc->name, "dup_ok", "the first keeps it");
	cr_assert_eq(st_registry_find_layer(r, "convolution"), conv, "std keeps its types");
	cr_assert_eq(st_registry_find_layer(r, "identity"), identity);
	free(path);
	st_registry_free(r);
}

Test(registry, the_same_plugin_twice_is_refused)
{
	st_registry *r = st_registry_new();
	char *path = test_plugin("good");
	cr_assert(st_registry_load_file(r, path)->loaded);
	st_plugin *again = st_registry_load_file(r, path);
	cr_assert_not(again->loaded);
	cr_assert(strstr(again->refusal, "a plugin named 'good' is already loaded from") != NULL,
	          "%s", again->refusal);
	cr_assert_eq(r->n_types, 1);
	free(path);
	st_registry_free(r);
}

Test(registry, search_path_starts_with_the_environment)
{
	setenv("STRATA_PLUGIN_PATH", "/a:/b", 1);
	char *path = st_registry_search_path();
	cr_assert(strncmp(path, "/a:/b:", 6) == 0, "%s", path);
	cr_assert(strstr(path, "/.local/lib/strata/plugins") != NULL);
	free(path);
}

Test(registry, plugins_breaking_the_weight_limit_are_caught)
{
	st_registry *r = registry_with_std();
	char *path = test_plugin("dup-std");
	cr_assert(st_registry_load_file(r, path)->loaded);
	st_shape in = test_shape("1x2");
	const st_shape *ins[] = { &in };
	st_shape outs[ST_MAX_OUTPUTS];
	st_reshape res;
	st_message *m;
	int n;
	cr_assert_eq(st_reshape_run(st_registry_find_layer(r, "too_many_weights"), "x", NULL, 1, ins, outs,
	                            &res, &m, &n),
	             -1);
	cr_assert_str_eq(m[0].text, "the plugin gave 99 weights (at most 8)");
	cr_assert_eq(res.n_weights, 0);
	for (int i = 0; i < n; i++)
		free(m[i].text);
	free(m);
	free(path);
	st_registry_free(r);
}

/* A device backend's plugins (std-cuda.so) are found but loaded only when
 * a plan runs there: a machine without the backend's libraries loads
 * nothing that needs them. */
Test(registry, device_backend_plugins_wait_for_their_backend)
{
	cr_assert_str_eq(st_registry_deferred_backend("/x/std-cuda.so"), "cuda");
	cr_assert_str_eq(st_registry_deferred_backend("mine-cuda.so"), "cuda");
	cr_assert_null(st_registry_deferred_backend("/x/cuda.so"));
	cr_assert_null(st_registry_deferred_backend("/x/-cuda.so"));
	cr_assert_null(st_registry_deferred_backend("/x/stdcuda.so"));
	cr_assert_null(st_registry_deferred_backend("/x/std-cuda.so.bak"));
	cr_assert_null(st_registry_deferred_backend("/x-cuda.so/std.so"));
	cr_assert_null(st_registry_deferred_backend("/x/engine-test.so"));

	char dir[] = "/tmp/strata-deferred-XXXXXX";
	cr_assert_not_null(mkdtemp(dir));
	char *good = test_plugin("good");
	char *cmd = st_xasprintf("cp '%s' '%s/mine-cuda.so'", good, dir);
	cr_assert_eq(system(cmd), 0);
	st_registry *r = st_registry_new();
	cr_assert_eq(st_registry_load_dir(r, dir), 1);
	cr_assert_eq(r->n_plugins, 0, "nothing loaded yet");
	cr_assert_eq(r->n_deferred, 1);
	cr_assert(strstr(r->deferred[0], "/mine-cuda.so") != NULL);
	cr_assert_eq(st_registry_load_backend(r, "fake"), 0);
	cr_assert_eq(st_registry_load_backend(r, "cuda"), 1);
	cr_assert_eq(r->n_plugins, 1);
	cr_assert(r->plugins[0]->loaded, "%s", r->plugins[0]->refusal ? r->plugins[0]->refusal : "");
	cr_assert_eq(r->n_deferred, 0);
	cr_assert_eq(st_registry_load_backend(r, "cuda"), 0, "loaded once");
	st_registry_free(r);
	free(cmd);
	cmd = st_xasprintf("rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
	free(cmd);
	free(good);
}

#ifdef ST_HAVE_CUDA
/* std-cuda loads on any machine with the CUDA libraries (no GPU needed)
 * and registers implementations the registry accepts, for std's types. */
Test(registry, std_cuda_registers_its_implementations)
{
	const char *top = getenv("top_builddir");
	cr_assert_not_null(top, "top_builddir is not set (run through make check)");
	st_registry *r = registry_with_std();
	char *path = st_xasprintf("%s/plugins/std-cuda/.libs/std-cuda.so", top);
	st_plugin *p = st_registry_load_file(r, path);
	cr_assert(p->loaded, "%s: %s", path, p->refusal ? p->refusal : "");
	cr_assert_eq(p->n_notes, 0, "%s", p->n_notes ? p->notes[0] : "");
	cr_assert_eq(p->n_layers, 0, "implementations only");
	static const char *const types[] = { "convolution", "pooling", "fully_connected", "batch_normalization",
		                             "elementwise", "global_pooling", "softmax", "flatten", "reshape",
		                             "identity", "dropout", "concatenation", "deconvolution", "resize" };
	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
		cr_assert_not_null(st_registry_find_impl(r, types[i], "cuda"), "%s", types[i]);
	cr_assert_eq(p->n_impls, (int)(sizeof types / sizeof types[0]));
	free(path);
	st_registry_free(r);
}
#endif
