/* Helpers for the editor's unit tests (tui-helpers.h). */
#include "config.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>

#include "helpers.h"
#include "tui-helpers.h"

char *
tui_test_home(const char *what)
{
	char *dir = test_temp_dir(what);
	static const char *const vars[][2] = {
		{ "HOME", "home" }, { "XDG_CONFIG_HOME", "config" }, { "XDG_STATE_HOME", "state" }
	};
	for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
		char *sub = st_xasprintf("%s/%s", dir, vars[i][1]);
		setenv(vars[i][0], sub, 1);
		free(sub);
	}
	return dir;
}

void
tui_press(st_app *app, const char *name)
{
	st_key k = { .kind = ST_KEY_KEY };
	snprintf(k.name, sizeof k.name, "%s", name);
	st_app_key(app, &k);
}

void
tui_type(st_app *app, const char *text)
{
	for (const char *p = text; *p; p++) {
		char name[8];
		if (*p == ' ')
			snprintf(name, sizeof name, "<Space>");
		else if (*p == '<')
			snprintf(name, sizeof name, "<lt>");
		else
			snprintf(name, sizeof name, "%c", *p);
		tui_press(app, name);
	}
}

char *
tui_frame(st_app *app)
{
	st_app_draw(app);
	return st_screen_dump(app->screen);
}

st_app *
tui_app_on(const char *model, int w, int h)
{
	st_tui_options opt = { .model = model, .theme = NULL, .ascii = -1, .colors = -1 };
	st_diag d;
	st_diag_init(&d);
	st_app *app = st_app_new(&opt, &d);
	cr_assert_not_null(app, "st_app_new: %s", d.count ? d.items[0].text : "?");
	st_diag_free(&d);
	cr_assert_not_null(st_registry_find_layer(app->registry, "convolution"), "std is not on STRATA_PLUGIN_PATH");
	if (app->screen == NULL)
		app->screen = st_screen_new(w, h);
	return app;
}

int
tui_thread_count(void)
{
	DIR *dir = opendir("/proc/self/task");
	cr_assert_not_null(dir);
	int n = 0;
	for (struct dirent *e; (e = readdir(dir)) != NULL;)
		n += e->d_name[0] != '.';
	closedir(dir);
	return n;
}
