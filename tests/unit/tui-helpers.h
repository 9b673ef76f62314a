/* Helpers for the editor's unit tests: a private home, keys pressed and
 * typed, and frames drawn into the screen model, all without a terminal. */
#ifndef TUI_HELPERS_H
#define TUI_HELPERS_H

#include "tui-app.h"

/* HOME, XDG_CONFIG_HOME and XDG_STATE_HOME in a fresh folder (what names
 * it), so that no user's config, keys, journal or reports take part.
 * Returns the folder; caller frees (and removes it with test_remove_dir). */
char *tui_test_home(const char *what);
/* One key by its name ("a", "<Enter>", "<C-s>"). */
void tui_press(st_app *app, const char *name);
/* Text one key at a time, as a terminal sends it. */
void tui_type(st_app *app, const char *text);
/* Draws a frame and returns the screen's text; caller frees. */
char *tui_frame(st_app *app);
/* The editor on a model file with a w x h screen, as st_tui_main makes it
 * (the standard plugin must load). Caller frees with st_app_free. */
st_app *tui_app_on(const char *model, int w, int h);
/* Threads of this process now. */
int tui_thread_count(void);

#endif
