/* libFuzzer target for config.json: parsing never crashes, refused text
 * leaves the defaults, and what parses is saved, loads again the same, and
 * saves to the same text (unknown fields included). */
#include "config.h"

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "st-core.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *config_path;

/* Saving goes to a folder of its own, in memory where there is one. */
static void
set_up(void)
{
	if (config_path != NULL)
		return;
	char template[] = "/dev/shm/strata-fuzz-config-XXXXXX";
	char *dir = mkdtemp(template);
	if (dir == NULL) {
		char other[] = "/tmp/strata-fuzz-config-XXXXXX";
		dir = mkdtemp(other);
		if (dir == NULL)
			abort();
		setenv("XDG_CONFIG_HOME", dir, 1);
	} else {
		setenv("XDG_CONFIG_HOME", dir, 1);
	}
	config_path = st_xasprintf("%s/strata/config.json", getenv("XDG_CONFIG_HOME"));
}

static void
check_sane(const st_config *cfg)
{
	bool ok = cfg->ascii >= -1 && cfg->ascii <= 1 &&
	          (cfg->colors == -1 || cfg->colors == 0 || cfg->colors == 8 || cfg->colors == 16 ||
	           cfg->colors == 256 || cfg->colors == 16777216) &&
	          (cfg->theme == NULL || cfg->theme[0] != '\0') && cfg->n_disabled_plugins >= 0 &&
	          cfg->n_plugin_paths >= 0 && (cfg->unknown == NULL || cJSON_IsObject(cfg->unknown));
	for (int i = 0; ok && i < cfg->n_disabled_plugins; i++)
		ok = cfg->disabled_plugins[i] != NULL;
	for (int i = 0; ok && i < cfg->n_plugin_paths; i++)
		ok = cfg->plugin_paths[i] != NULL;
	if (!ok) {
		fprintf(stderr, "a parsed configuration is not sane\n");
		abort();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	set_up();
	st_config cfg;
	st_diag d;
	st_diag_init(&d);
	int rc = st_config_parse((const char *)data, size, "fuzz.json", &cfg, &d);
	if (rc != 0) {
		if (d.errors == 0 || cfg.theme != NULL || cfg.unknown != NULL || cfg.ascii != -1 ||
		    cfg.colors != -1 || cfg.n_plugin_paths != 0 || cfg.n_disabled_plugins != 0) {
			fprintf(stderr, "a refused configuration left settings behind\n");
			abort();
		}
		st_diag_free(&d);
		return 0;
	}
	check_sane(&cfg);
	st_diag_free(&d);

	/* What Strata writes, it reads back the same, and writes the same way. */
	char err[512];
	if (st_config_save(&cfg, err, sizeof err) != 0) {
		fprintf(stderr, "cannot save: %s\n", err);
		abort();
	}
	size_t len;
	char *first = st_read_file(config_path, &len);
	st_config again;
	st_diag_init(&d);
	if (first == NULL || st_config_load(&again, &d) != 0) {
		fprintf(stderr, "a saved configuration does not load again:\n%s\n", first ? first : "");
		st_diag_print(&d, stderr);
		abort();
	}
	bool same = again.ascii == cfg.ascii && again.colors == cfg.colors &&
	            again.show_grid == cfg.show_grid && again.show_shapes == cfg.show_shapes &&
	            (again.theme == NULL) == (cfg.theme == NULL) &&
	            (cfg.theme == NULL || strcmp(again.theme, cfg.theme) == 0) &&
	            again.n_disabled_plugins == cfg.n_disabled_plugins &&
	            again.n_plugin_paths == cfg.n_plugin_paths &&
	            (again.unknown == NULL) == (cfg.unknown == NULL || cfg.unknown->child == NULL);
	if (!same) {
		fprintf(stderr, "the configuration changed on saving:\n%s\n", first);
		abort();
	}
	if (st_config_save(&again, err, sizeof err) != 0)
		abort();
	char *second = st_read_file(config_path, &len);
	if (second == NULL || strcmp(first, second) != 0) {
		fprintf(stderr, "saving is not stable:\n--- first\n%s\n--- second\n%s\n", first,
		        second ? second : "");
		abort();
	}
	free(first);
	free(second);
	st_config_clear(&again);
	st_config_clear(&cfg);
	st_diag_free(&d);
	return 0;
}
