/* Unit tests: config.json, with unknown fields kept, errors with positions,
 * atomic saving and the XDG folders. */
#include "config.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers.h"
#include "st-core.h"

static void
assert_defaults(const st_config *cfg)
{
	cr_assert_null(cfg->theme);
	cr_assert_eq(cfg->ascii, -1);
	cr_assert_eq(cfg->colors, -1);
	cr_assert_not(cfg->show_shapes);
	cr_assert_not(cfg->show_grid);
	cr_assert_eq(cfg->n_disabled_plugins, 0);
	cr_assert_eq(cfg->n_plugin_paths, 0);
	cr_assert_null(cfg->unknown);
}

static const char full[] =
	"{\n"
	"  \"theme\": \"light\",\n"
	"  \"future_option\": {\"a\": [1, 2, {\"b\": null}]},\n"
	"  \"ascii\": true,\n"
	"  \"colors\": 256,\n"
	"  \"show_shapes\": true,\n"
	"  \"show_grid\": false,\n"
	"  \"disabled_plugins\": [\"xwn\", \"extra\"],\n"
	"  \"plugin_paths\": [\"/opt/strata/plugins\"],\n"
	"  \"zz_last\": \"kept\"\n"
	"}\n";

Test(config, defaults)
{
	st_config cfg;
	st_config_defaults(&cfg);
	assert_defaults(&cfg);
	st_config_clear(&cfg);
	st_config_clear(&cfg); /* twice is harmless */
	assert_defaults(&cfg);
}

Test(config, parses_every_field_and_keeps_unknown_ones)
{
	st_config cfg;
	st_diag d;
	st_diag_init(&d);
	cr_assert_eq(st_config_parse(full, strlen(full), "config.json", &cfg, &d), 0);
	cr_assert_eq(d.count, 0);
	cr_assert_str_eq(cfg.theme, "light");
	cr_assert_eq(cfg.ascii, 1);
	cr_assert_eq(cfg.colors, 256);
	cr_assert(cfg.show_shapes);
	cr_assert_not(cfg.show_grid);
	cr_assert_eq(cfg.n_disabled_plugins, 2);
	cr_assert_str_eq(cfg.disabled_plugins[1], "extra");
	cr_assert_eq(cfg.n_plugin_paths, 1);
	cr_assert_str_eq(cfg.plugin_paths[0], "/opt/strata/plugins");
	cr_assert_not_null(cfg.unknown);
	cr_assert_eq(cJSON_GetArraySize(cfg.unknown), 2);
	cr_assert_str_eq(cfg.unknown->child->string, "future_option");
	cr_assert_str_eq(cfg.unknown->child->next->string, "zz_last");
	st_config_clear(&cfg);
	assert_defaults(&cfg);
	st_diag_free(&d);

	/* The other spellings. */
	static const char other[] = "{\"theme\": null, \"ascii\": \"auto\", \"colors\": \"truecolor\"}";
	st_diag_init(&d);
	cr_assert_eq(st_config_parse(other, strlen(other), "c", &cfg, &d), 0);
	cr_assert_null(cfg.theme);
	cr_assert_eq(cfg.ascii, -1);
	cr_assert_eq(cfg.colors, 16777216);
	st_config_clear(&cfg);
	static const char more[] = "{\"ascii\": false, \"colors\": 0}";
	cr_assert_eq(st_config_parse(more, strlen(more), "c", &cfg, &d), 0);
	cr_assert_eq(cfg.ascii, 0);
	cr_assert_eq(cfg.colors, 0);
	st_config_clear(&cfg);
	static const char colors24[] = "{\"colors\": \"24bit\"}";
	cr_assert_eq(st_config_parse(colors24, strlen(colors24), "c", &cfg, &d), 0);
	cr_assert_eq(cfg.colors, 16777216);
	st_config_clear(&cfg);
	/* An empty file changes nothing. */
	cr_assert_eq(st_config_parse(" \n\t\r\n", 5, "c", &cfg, &d), 0);
	assert_defaults(&cfg);
	cr_assert_eq(st_config_parse("", 0, "c", &cfg, &d), 0);
	cr_assert_eq(d.count, 0);
	st_diag_free(&d);
}

/* Asserts that text fails with an error at line:col holding part, and
 * that cfg then holds the defaults. */
static void
assert_error(const char *text, int line, int col, const char *part)
{
	st_config cfg;
	st_diag d;
	st_diag_init(&d);
	cr_assert_eq(st_config_parse(text, strlen(text), "config.json", &cfg, &d), -1, "'%s' parsed", text);
	cr_assert(d.errors >= 1);
	cr_assert_str_eq(d.items[0].file, "config.json");
	cr_assert_eq(d.items[0].line, line, "'%s': line %d, expected %d", text, d.items[0].line, line);
	cr_assert_eq(d.items[0].col, col, "'%s': column %d, expected %d", text, d.items[0].col, col);
	cr_assert(strstr(d.items[0].text, part) != NULL, "'%s': message '%s' lacks '%s'", text,
	          d.items[0].text, part);
	assert_defaults(&cfg);
	st_config_clear(&cfg);
	st_diag_free(&d);
}

Test(config, errors_name_file_line_and_column)
{
	assert_error("{\n  \"theme\": 5\n}", 2, 12, "'theme' must be a theme name or null");
	assert_error("{\"theme\": \"\"}", 1, 11, "'theme' must be a theme name");
	assert_error("{\"ascii\": \"yes\"}", 1, 11, "'ascii' must be \"auto\", true or false");
	assert_error("{\"colors\": 12}", 1, 12, "'colors' must be");
	assert_error("{\"colors\": \"many\"}", 1, 12, "'colors' must be");
	assert_error("{\"show_grid\": \"no\"}", 1, 15, "'show_grid' must be true or false");
	assert_error("{\"show_shapes\": 1}", 1, 17, "'show_shapes' must be true or false");
	assert_error("{\"disabled_plugins\": [\"a\",\n 1]}", 2, 2, "'disabled_plugins' must hold only strings");
	assert_error("{\"plugin_paths\": \"/opt\"}", 1, 18, "'plugin_paths' must be a list of strings");
	assert_error("[1, 2]", 1, 1, "must be a JSON object");
	assert_error("{\"theme\": \"dark\",}", 1, 18, "invalid JSON");
	assert_error("{\"theme\": \"dark\"", 1, 17, "not closed");
	assert_error("{\"theme\": \"dark\"} x", 1, 19, "after the end");
	/* A good field before a bad one is not kept either. */
	assert_error("{\"theme\": \"light\", \"ascii\": 3}", 1, 29, "'ascii'");
}

Test(config, a_field_given_twice_warns)
{
	static const char text[] = "{\"theme\": \"a\",\n \"theme\": \"b\", \"x\": 1, \"x\": 2}";
	st_config cfg;
	st_diag d;
	st_diag_init(&d);
	cr_assert_eq(st_config_parse(text, strlen(text), "c", &cfg, &d), 0);
	cr_assert_eq(d.warnings, 2);
	cr_assert_eq(d.items[0].line, 2);
	cr_assert_eq(d.items[0].col, 2);
	cr_assert_str_eq(cfg.theme, "b");
	cr_assert_eq(cJSON_GetArraySize(cfg.unknown), 1);
	cr_assert_eq(cJSON_GetObjectItem(cfg.unknown, "x")->valueint, 2);
	st_config_clear(&cfg);
	st_diag_free(&d);
}

Test(config, folders_follow_xdg)
{
	setenv("HOME", "/home/someone", 1);
	setenv("XDG_CONFIG_HOME", "/xdg/config", 1);
	setenv("XDG_STATE_HOME", "/xdg/state", 1);
	char *c = st_config_dir(), *s = st_state_dir();
	cr_assert_str_eq(c, "/xdg/config/strata");
	cr_assert_str_eq(s, "/xdg/state/strata");
	free(c);
	free(s);
	/* Relative values are ignored, as the XDG rules say. */
	setenv("XDG_CONFIG_HOME", "relative", 1);
	unsetenv("XDG_STATE_HOME");
	c = st_config_dir();
	s = st_state_dir();
	cr_assert_str_eq(c, "/home/someone/.config/strata");
	cr_assert_str_eq(s, "/home/someone/.local/state/strata");
	free(c);
	free(s);
}

Test(config, save_and_load_round_trip_with_unknown_fields)
{
	char *home = test_temp_dir("config");
	char *xdg = st_xasprintf("%s/deep/er/config", home);
	setenv("XDG_CONFIG_HOME", xdg, 1);
	st_config cfg;
	st_diag d;
	st_diag_init(&d);

	/* No file: the defaults. */
	cr_assert_eq(st_config_load(&cfg, &d), 0);
	assert_defaults(&cfg);

	cr_assert_eq(st_config_parse(full, strlen(full), "config.json", &cfg, &d), 0);
	char err[256];
	cr_assert_eq(st_config_save(&cfg, err, sizeof err), 0, "%s", err);
	char *path = st_xasprintf("%s/strata/config.json", xdg);
	struct stat st;
	cr_assert_eq(stat(xdg, &st), 0, "the folders were not created");
	cr_assert_eq(st.st_mode & 0777, 0700);
	size_t len;
	char *first = st_read_file(path, &len);
	cr_assert_not_null(first);
	cr_assert(strstr(first, "\"future_option\": {") != NULL, "%s", first);
	cr_assert(strstr(first, "{\"b\": null}") != NULL, "%s", first);
	cr_assert(strstr(first, "\"zz_last\": \"kept\"") != NULL);
	cr_assert(strstr(first, "\"colors\": 256") != NULL);

	st_config again;
	cr_assert_eq(st_config_load(&again, &d), 0);
	cr_assert_eq(d.count, 0);
	cr_assert_str_eq(again.theme, "light");
	cr_assert_eq(again.ascii, 1);
	cr_assert_eq(again.colors, 256);
	cr_assert(again.show_shapes);
	cr_assert_eq(again.n_disabled_plugins, 2);
	cr_assert_str_eq(again.plugin_paths[0], "/opt/strata/plugins");
	cr_assert(cJSON_Compare(again.unknown, cfg.unknown, true));
	/* Saving what was loaded writes the same text. */
	cr_assert_eq(st_config_save(&again, err, sizeof err), 0);
	char *second = st_read_file(path, &len);
	cr_assert_str_eq(first, second);
	free(first);
	free(second);

	/* Changed settings are written back; defaults are written out too. */
	st_config_clear(&again);
	again.colors = 16777216;
	again.theme = st_xstrdup("16-colour");
	cr_assert_eq(st_config_save(&again, err, sizeof err), 0);
	first = st_read_file(path, &len);
	cr_assert(strstr(first, "\"colors\": \"truecolor\"") != NULL, "%s", first);
	cr_assert(strstr(first, "\"ascii\": \"auto\"") != NULL, "%s", first);
	cr_assert(strstr(first, "\"disabled_plugins\": []") != NULL, "%s", first);
	free(first);
	st_config_clear(&again);
	cr_assert_eq(st_config_load(&again, &d), 0);
	cr_assert_str_eq(again.theme, "16-colour");
	cr_assert_eq(again.colors, 16777216);
	st_config_clear(&again);

	/* A broken file is an error with its position, and the defaults. */
	cr_assert_eq(st_write_file_atomic(path, "{\n\"ascii\": 7}", 13, err, sizeof err), 0);
	cr_assert_eq(st_config_load(&again, &d), -1);
	cr_assert_str_eq(d.items[d.count - 1].file, path);
	cr_assert_eq(d.items[d.count - 1].line, 2);
	assert_defaults(&again);
	st_config_clear(&again);

	/* A folder where the file should be cannot be read. */
	cr_assert_eq(unlink(path), 0);
	cr_assert_eq(mkdir(path, 0700), 0);
	cr_assert_eq(st_config_load(&again, &d), -1);
	cr_assert(strstr(d.items[d.count - 1].text, "cannot read the configuration") != NULL);
	cr_assert_eq(rmdir(path), 0);

	st_config_clear(&cfg);
	st_diag_free(&d);
	free(path);
	free(xdg);
	test_remove_dir(home);
}

Test(config, save_reports_what_went_wrong)
{
	char *home = test_temp_dir("config-save");
	char *file = st_xasprintf("%s/a-file", home);
	char err[256];
	cr_assert_eq(st_write_file_atomic(file, "x", 1, err, sizeof err), 0);
	/* The config folder would have to be inside a file. */
	char *xdg = st_xasprintf("%s/sub", file);
	setenv("XDG_CONFIG_HOME", xdg, 1);
	st_config cfg;
	st_config_defaults(&cfg);
	cr_assert_eq(st_config_save(&cfg, err, sizeof err), -1);
	cr_assert(strstr(err, "cannot create the folder") != NULL, "%s", err);
	/* No home at all. */
	unsetenv("XDG_CONFIG_HOME");
	unsetenv("HOME");
	char *dir = st_config_dir();
	if (dir == NULL) {
		cr_assert_eq(st_config_save(&cfg, err, sizeof err), -1);
		cr_assert(strstr(err, "home folder") != NULL, "%s", err);
		st_diag d;
		st_diag_init(&d);
		cr_assert_eq(st_config_load(&cfg, &d), 0);
		st_diag_free(&d);
	}
	free(dir);
	free(xdg);
	free(file);
	test_remove_dir(home);
}
