/* The user's settings: $XDG_CONFIG_HOME/strata/config.json, read with
 * positions for messages, fields this version does not know kept and written
 * back, saved atomically. */
#include "config.h"

#include <dirent.h>

#include <cjson/cJSON.h>
#include <errno.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "st-core.h"

/*
 * The file, with its defaults:
 *
 *   {
 *     "theme": null,              a theme name, null for the default
 *     "ascii": "auto",            "auto" (from the locale), true or false
 *     "colors": "auto",           "auto", 0, 8, 16, 256 or "truecolor"
 *     "show_shapes": false,       tensor shapes on links
 *     "show_grid": false,         the canvas grid
 *     "disabled_plugins": [],     plugin names not to load
 *     "plugin_paths": []          extra plugin folders
 *   }
 */

#define TRUE_COLOR_COUNT 16777216

void
st_config_defaults(st_config *cfg)
{
	memset(cfg, 0, sizeof *cfg);
	cfg->ascii = -1;
	cfg->colors = -1;
}

static void
free_list(char **list, int n)
{
	for (int i = 0; i < n; i++)
		free(list[i]);
	free(list);
}

void
st_config_clear(st_config *cfg)
{
	free(cfg->theme);
	free_list(cfg->disabled_plugins, cfg->n_disabled_plugins);
	free_list(cfg->plugin_paths, cfg->n_plugin_paths);
	cJSON_Delete(cfg->unknown);
	st_config_defaults(cfg);
}

/* $VAR when it is an absolute path (the XDG rule), else $HOME/fallback, else
 * the home folder from the password database; NULL when none is known. */
static char *
xdg_dir(const char *var, const char *fallback)
{
	const char *v = getenv(var);
	if (v != NULL && v[0] == '/')
		return st_xasprintf("%s/strata", v);
	const char *home = getenv("HOME");
	if (home == NULL || home[0] == '\0') {
		struct passwd *pw = getpwuid(getuid());
		home = pw != NULL ? pw->pw_dir : NULL;
	}
	if (home == NULL || home[0] == '\0')
		return NULL;
	return st_xasprintf("%s/%s/strata", home, fallback);
}

char *
st_config_dir(void)
{
	return xdg_dir("XDG_CONFIG_HOME", ".config");
}

char *
st_state_dir(void)
{
	return xdg_dir("XDG_STATE_HOME", ".local/state");
}

char *
st_cache_dir(void)
{
	return xdg_dir("XDG_CACHE_HOME", ".cache");
}

/* ---- reading ---- */

typedef struct reader {
	st_json_doc *doc;
	const char *file;
	st_diag *d;
	int errors;
} reader;

static void
field_error(reader *r, const cJSON *node, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void
field_error(reader *r, const cJSON *node, const char *fmt, ...)
{
	int line, col;
	st_json_position(r->doc, node, &line, &col);
	va_list ap;
	va_start(ap, fmt);
	st_diag_vadd(r->d, ST_SEVERITY_ERROR, r->file, line, col, fmt, ap);
	va_end(ap);
	r->errors++;
}

static void
read_bool(reader *r, const cJSON *v, bool *out)
{
	if (!cJSON_IsBool(v)) {
		field_error(r, v, "'%s' must be true or false", v->string);
		return;
	}
	*out = cJSON_IsTrue(v);
}

static void
read_list(reader *r, const cJSON *v, char ***out, int *n)
{
	if (!cJSON_IsArray(v)) {
		field_error(r, v, "'%s' must be a list of strings", v->string);
		return;
	}
	for (const cJSON *e = v->child; e != NULL; e = e->next) {
		if (!cJSON_IsString(e)) {
			field_error(r, e, "'%s' must hold only strings", v->string);
			return;
		}
	}
	free_list(*out, *n);
	*n = cJSON_GetArraySize(v);
	*out = st_xcalloc((size_t)*n + 1, sizeof **out);
	int i = 0;
	for (const cJSON *e = v->child; e != NULL; e = e->next)
		(*out)[i++] = st_xstrdup(e->valuestring);
}

static void
read_field(reader *r, st_config *cfg, const cJSON *v)
{
	const char *key = v->string;
	if (strcmp(key, "theme") == 0) {
		if (cJSON_IsNull(v)) {
			free(cfg->theme);
			cfg->theme = NULL;
		} else if (cJSON_IsString(v) && v->valuestring[0] != '\0') {
			free(cfg->theme);
			cfg->theme = st_xstrdup(v->valuestring);
		} else {
			field_error(r, v, "'theme' must be a theme name or null");
		}
	} else if (strcmp(key, "ascii") == 0) {
		if (cJSON_IsString(v) && strcmp(v->valuestring, "auto") == 0)
			cfg->ascii = -1;
		else if (cJSON_IsBool(v))
			cfg->ascii = cJSON_IsTrue(v) ? 1 : 0;
		else
			field_error(r, v, "'ascii' must be \"auto\", true or false");
	} else if (strcmp(key, "colors") == 0) {
		if (cJSON_IsString(v) && strcmp(v->valuestring, "auto") == 0) {
			cfg->colors = -1;
		} else if (cJSON_IsString(v) && (strcmp(v->valuestring, "truecolor") == 0 ||
		                                 strcmp(v->valuestring, "24bit") == 0)) {
			cfg->colors = TRUE_COLOR_COUNT;
		} else if (cJSON_IsNumber(v) &&
		           (v->valuedouble == 0 || v->valuedouble == 8 || v->valuedouble == 16 ||
		            v->valuedouble == 256 || v->valuedouble == TRUE_COLOR_COUNT)) {
			cfg->colors = (int)v->valuedouble;
		} else {
			field_error(r, v, "'colors' must be \"auto\", 0, 8, 16, 256 or \"truecolor\"");
		}
	} else if (strcmp(key, "show_shapes") == 0) {
		read_bool(r, v, &cfg->show_shapes);
	} else if (strcmp(key, "show_grid") == 0) {
		read_bool(r, v, &cfg->show_grid);
	} else if (strcmp(key, "disabled_plugins") == 0) {
		read_list(r, v, &cfg->disabled_plugins, &cfg->n_disabled_plugins);
	} else if (strcmp(key, "plugin_paths") == 0) {
		read_list(r, v, &cfg->plugin_paths, &cfg->n_plugin_paths);
	} else {
		if (cfg->unknown == NULL)
			cfg->unknown = cJSON_CreateObject();
		cJSON_DeleteItemFromObjectCaseSensitive(cfg->unknown, key);
		cJSON_AddItemToObject(cfg->unknown, key, cJSON_Duplicate(v, true));
	}
}

int
st_config_parse(const char *text, size_t len, const char *file, st_config *cfg, st_diag *d)
{
	st_config_defaults(cfg);
	/* An empty file is a config with nothing changed. */
	size_t i = 0;
	while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r'))
		i++;
	if (i == len)
		return 0;
	st_json_doc doc;
	if (st_json_parse(&doc, text, len, file, d) != 0)
		return -1;
	reader r = { .doc = &doc, .file = file, .d = d };
	if (!cJSON_IsObject(doc.root)) {
		field_error(&r, doc.root, "the configuration must be a JSON object ({ ... })");
		st_json_doc_free(&doc);
		return -1;
	}
	for (const cJSON *v = doc.root->child; v != NULL; v = v->next) {
		for (const cJSON *w = doc.root->child; w != v; w = w->next) {
			if (strcmp(w->string, v->string) == 0) {
				int line, col;
				st_json_key_position(&doc, v, &line, &col);
				st_diag_add(d, ST_SEVERITY_WARNING, file, line, col,
				            "'%s' is given twice; the last one counts", v->string);
				break;
			}
		}
		read_field(&r, cfg, v);
	}
	st_json_doc_free(&doc);
	if (r.errors > 0) {
		st_config_clear(cfg);
		return -1;
	}
	return 0;
}

int
st_config_load(st_config *cfg, st_diag *d)
{
	st_config_defaults(cfg);
	char *path;
	size_t len;
	int rc;
	char *text = st_config_read("config.json", "the configuration", &path, &len, d, &rc);
	if (text != NULL) {
		rc = st_config_parse(text, len, path, cfg, d);
		free(text);
	}
	free(path);
	return rc;
}

char *
st_config_read(const char *name, const char *what, char **path, size_t *len, st_diag *d, int *rc)
{
	*rc = 0;
	*path = NULL;
	char *dir = st_config_dir();
	if (dir == NULL)
		return NULL; /* no home folder: nothing to read */
	*path = st_xasprintf("%s/%s", dir, name);
	free(dir);
	char *text = st_read_file(*path, len);
	if (text == NULL && errno != ENOENT && errno != ENOTDIR) {
		st_diag_add(d, ST_SEVERITY_ERROR, *path, 0, 0, "cannot read %s: %s", what, strerror(errno));
		*rc = -1;
	}
	return text;
}

/* ---- writing ---- */

static cJSON *
list_json(char **list, int n)
{
	cJSON *a = cJSON_CreateArray();
	for (int i = 0; i < n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(list[i]));
	return a;
}

/* The configuration as text, known fields first, then the unknown ones in
 * the order they were read; caller frees. */
static char *
config_text(const st_config *cfg)
{
	cJSON *root = cJSON_CreateObject();
	if (cfg->theme != NULL)
		cJSON_AddStringToObject(root, "theme", cfg->theme);
	else
		cJSON_AddNullToObject(root, "theme");
	if (cfg->ascii < 0)
		cJSON_AddStringToObject(root, "ascii", "auto");
	else
		cJSON_AddBoolToObject(root, "ascii", cfg->ascii != 0);
	if (cfg->colors < 0)
		cJSON_AddStringToObject(root, "colors", "auto");
	else if (cfg->colors >= TRUE_COLOR_COUNT)
		cJSON_AddStringToObject(root, "colors", "truecolor");
	else
		cJSON_AddNumberToObject(root, "colors", cfg->colors);
	cJSON_AddBoolToObject(root, "show_shapes", cfg->show_shapes);
	cJSON_AddBoolToObject(root, "show_grid", cfg->show_grid);
	cJSON_AddItemToObject(root, "disabled_plugins",
	                      list_json(cfg->disabled_plugins, cfg->n_disabled_plugins));
	cJSON_AddItemToObject(root, "plugin_paths", list_json(cfg->plugin_paths, cfg->n_plugin_paths));
	if (cfg->unknown != NULL) {
		for (const cJSON *v = cfg->unknown->child; v != NULL; v = v->next) {
			if (cJSON_GetObjectItemCaseSensitive(root, v->string) == NULL)
				cJSON_AddItemToObject(root, v->string, cJSON_Duplicate(v, true));
		}
	}
	st_buf b;
	st_buf_init(&b);
	st_json_write_value(&b, root, 0);
	st_buf_putc(&b, '\n');
	cJSON_Delete(root);
	return st_buf_take(&b);
}


char *
st_state_file(const char *name)
{
	char *dir = st_state_dir();
	if (dir == NULL)
		return NULL;
	char err[256];
	char *path = st_make_dirs(dir, err, sizeof err) == 0 ? st_xasprintf("%s/%s", dir, name) : NULL;
	free(dir);
	return path;
}

int
st_make_dirs(const char *path, char *err, size_t err_size)
{
	char *p = st_xstrdup(path);
	for (char *s = p + 1;; s++) {
		if (*s == '/' || *s == '\0') {
			char saved = *s;
			*s = '\0';
			if (mkdir(p, 0700) != 0 && errno != EEXIST) {
				snprintf(err, err_size, "cannot create the folder %s: %s", p, strerror(errno));
				free(p);
				return -1;
			}
			*s = saved;
			if (saved == '\0')
				break;
		}
	}
	free(p);
	return 0;
}

int
st_config_save(const st_config *cfg, char *err, size_t err_size)
{
	char *dir = st_config_dir();
	if (dir == NULL) {
		snprintf(err, err_size,
		         "cannot save the configuration: neither $XDG_CONFIG_HOME nor a home folder is set");
		return -1;
	}
	if (st_make_dirs(dir, err, err_size) != 0) {
		free(dir);
		return -1;
	}
	char *path = st_xasprintf("%s/config.json", dir);
	char *text = config_text(cfg);
	int rc = st_write_file_atomic(path, text, strlen(text), err, err_size);
	free(text);
	free(path);
	free(dir);
	return rc;
}

void
st_remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	if (d != NULL) {
		struct dirent *e;
		while ((e = readdir(d)) != NULL) {
			if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
				continue;
			char *p = st_xasprintf("%s/%s", dir, e->d_name);
			unlink(p);
			free(p);
		}
		closedir(d);
	}
	rmdir(dir);
}
