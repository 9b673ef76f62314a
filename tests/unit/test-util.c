/* Unit tests: strings, the hash map, names, files. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers.h"

Test(util, buf_grows_and_hands_over)
{
	st_buf b;
	st_buf_init(&b);
	for (int i = 0; i < 1000; i++)
		st_buf_printf(&b, "%d,", i);
	cr_assert_eq(b.len, strlen(b.data));
	cr_assert(strncmp(b.data, "0,1,2,", 6) == 0);
	char *s = st_buf_take(&b);
	cr_assert_null(b.data);
	cr_assert(strstr(s, "999,") != NULL);
	free(s);
	s = st_buf_take(&b);
	cr_assert_str_eq(s, "");
	free(s);
}

Test(util, map_put_get_remove_and_grow)
{
	st_map m;
	st_map_init(&m);
	char keys[3000][16];
	for (int i = 0; i < 3000; i++) {
		snprintf(keys[i], sizeof keys[i], "k%d", i);
		cr_assert_null(st_map_put(&m, keys[i], (void *)(intptr_t)(i + 1)));
	}
	cr_assert_eq(m.count, 3000);
	for (int i = 0; i < 3000; i += 2)
		cr_assert_eq((intptr_t)st_map_remove(&m, keys[i]), i + 1);
	for (int i = 0; i < 3000; i++) {
		intptr_t v = (intptr_t)st_map_get(&m, keys[i]);
		cr_assert_eq(v, i % 2 ? i + 1 : 0, "key %s", keys[i]);
	}
	/* Re-inserting over tombstones keeps lookups right. */
	for (int i = 0; i < 3000; i += 2)
		st_map_put(&m, keys[i], (void *)(intptr_t)7);
	cr_assert_eq((intptr_t)st_map_get(&m, "k10"), 7);
	cr_assert_eq((intptr_t)st_map_put(&m, "k11", (void *)(intptr_t)9), 12);
	cr_assert_eq(m.count, 3000);
	st_map_free(&m);
}

Test(util, layer_names_are_c_identifiers)
{
	cr_assert(st_is_identifier("conv_1"));
	cr_assert(st_is_identifier("_x9"));
	cr_assert_not(st_is_identifier(""));
	cr_assert_not(st_is_identifier("1conv"));
	cr_assert_not(st_is_identifier("conv-1"));
	cr_assert_not(st_is_identifier("a.b"));
	cr_assert_not(st_is_identifier("int"));
	cr_assert_not(st_is_identifier("while"));
	cr_assert_str_eq(st_name_problem("int"), "a name cannot be a C keyword");
	cr_assert_str_eq(st_name_problem("9a"), "a name must start with a letter or '_'");
	cr_assert_str_eq(st_name_problem("a b"), "a name may contain only letters, digits and '_'");
}

Test(util, edit_distance)
{
	cr_assert_eq(st_edit_distance("stride", "strdie"), 2);
	cr_assert_eq(st_edit_distance("", "abc"), 3);
	cr_assert_eq(st_edit_distance("kernel", "kernel"), 0);
	cr_assert_eq(st_edit_distance("conv", "convolution"), 7);
}

Test(util, atomic_write_replaces_and_keeps_mode)
{
	char dir[] = "/tmp/strata-test-XXXXXX";
	cr_assert_not_null(mkdtemp(dir));
	char *path = st_xasprintf("%s/model.json", dir);
	char err[256];
	cr_assert_eq(st_write_file_atomic(path, "one", 3, err, sizeof err), 0);
	chmod(path, 0600);
	cr_assert_eq(st_write_file_atomic(path, "two!", 4, err, sizeof err), 0);
	size_t len;
	char *text = st_read_file(path, &len);
	cr_assert_str_eq(text, "two!");
	struct stat st;
	stat(path, &st);
	cr_assert_eq(st.st_mode & 0777, 0600);
	free(text);
	/* A folder that does not exist: a clear error, nothing written. */
	char *bad = st_xasprintf("%s/missing/model.json", dir);
	cr_assert_eq(st_write_file_atomic(bad, "x", 1, err, sizeof err), -1);
	cr_assert(strstr(err, "cannot create a temporary file beside") != NULL, "%s", err);
	unlink(path);
	rmdir(dir);
	free(bad);
	free(path);
}

Test(util, read_file_errors)
{
	errno = 0;
	cr_assert_null(st_read_file("/nonexistent/strata", NULL));
	cr_assert_eq(errno, ENOENT);
	cr_assert_null(st_read_file("/tmp", NULL));
	cr_assert_eq(errno, EISDIR);
}

Test(util, diag_counts_and_caps)
{
	st_diag d;
	st_diag_init(&d);
	d.max_errors = 3;
	for (int i = 0; i < 5; i++)
		st_diag_add(&d, ST_SEVERITY_ERROR, "f.json", i + 1, 2, "problem %d", i);
	st_diag_add(&d, ST_SEVERITY_WARNING, NULL, 0, 0, "careful");
	cr_assert_eq(d.errors, 5);
	cr_assert_eq(d.warnings, 1);
	cr_assert_eq(d.count, 4);
	cr_assert_str_eq(d.items[0].text, "problem 0");
	cr_assert_eq(d.items[2].line, 3);
	st_diag_free(&d);
}

Test(util, map_removals_do_not_grow_the_table)
{
	st_map m;
	st_map_init(&m);
	static char keys[2][16];
	/* A rename-like pattern: one live name, replaced a million times. */
	for (int i = 0; i < 1000000; i++) {
		char *k = keys[i % 2];
		snprintf(k, sizeof keys[0], "n%d", i);
		if (i > 0)
			st_map_remove(&m, keys[(i + 1) % 2]);
		st_map_put(&m, k, k);
	}
	cr_assert_eq(m.count, 1);
	cr_assert_leq(m.cap, 64, "capacity %zu for one live entry", m.cap);
	st_map_free(&m);
}
