/* The editor application: its state, the panels around the canvas, and
 * what panels may ask of it. Private to src/tui. */
#ifndef TUI_APP_H
#define TUI_APP_H

#include <stdbool.h>

#include "st-tui.h"

typedef enum st_panel {
	ST_PANEL_PALETTE,
	ST_PANEL_CANVAS,
	ST_PANEL_PARAMS,
	ST_PANEL_CHECK,
	ST_PANEL_COUNT
} st_panel;

/* Overlays drawn over the panels; at most one takes keys at a time. */
typedef enum st_overlay {
	ST_OVERLAY_NONE,
	ST_OVERLAY_COMMAND,  /* the ':' line */
	ST_OVERLAY_PROMPT,   /* a one-line question with an edit field (rename, find) */
	ST_OVERLAY_CONFIRM,  /* a question with lettered choices */
	ST_OVERLAY_HELP,     /* every binding */
	ST_OVERLAY_MENU,     /* F10 menus */
	ST_OVERLAY_DOCS,     /* the layer documentation browser */
	ST_OVERLAY_PLUGINS,  /* the collections manager */
	ST_OVERLAY_PICK      /* a list to choose one value from (enumerations) */
} st_overlay;

/* A one-line text field with a cursor and history (command line, prompts,
 * parameter editing). */
typedef struct st_field {
	char text[512];
	int cursor;          /* byte offset */
	char **history;
	int n_history, history_at;
} st_field;

/* What fills the screen between the title and the hint line: the panels
 * of the editor, or a view of its own (tui-report.c). */
typedef enum st_view {
	ST_VIEW_EDIT,
	ST_VIEW_REPORT,      /* one inference report (:report) */
	ST_VIEW_COMPARE,     /* reports side by side (:compare) */
	ST_VIEW_DASHBOARD,   /* live profiling (:dashboard, tui-dashboard.c) */
	ST_VIEW_ANALYSIS     /* inputs, layer outputs and channels (:analyze, tui-analysis.c) */
} st_view;

/* The views' own state, private to their files. */
typedef struct st_report_view st_report_view;
typedef struct st_compare_view st_compare_view;
typedef struct st_dashboard st_dashboard;
typedef struct st_analysis st_analysis;
typedef struct st_xwn_panel st_xwn_panel;

typedef struct st_app st_app;

/* The editor's own ':' commands, beside the session's st_commands (for
 * completion and help). */
typedef struct st_app_command_desc {
	const char *name, *usage, *help;
} st_app_command_desc;
extern const st_app_command_desc st_app_commands[];
extern const int st_n_app_commands;

/* What a confirm dialog runs when a choice is made (choice is its letter). */
typedef void (*st_confirm_fn)(st_app *app, char choice, void *arg);
typedef void (*st_prompt_fn)(st_app *app, const char *text, void *arg);

struct st_app {
	/* The model. */
	st_registry *registry;
	st_session *session;
	char *path;               /* the model file */
	st_journal *journal;      /* NULL when read-only or unavailable */
	bool journal_started;     /* it holds this session's edits (else an earlier one's) */
	char *pending_script;     /* an earlier session's edits while the question is open */
	char *crashed_plugin;     /* the plugin that crashed the last session, kept off in this one */
	bool read_only;
	long long disk_mtime, disk_size; /* the file as last read or written (ns, bytes) */
	unsigned long long disk_ino;
	bool disk_warned;                /* the user was told it changed since */
	bool multi_select;               /* Space was pressed: moving keeps the selection */

	/* Looks and keys. */
	st_config config;
	st_theme *theme;
	st_keymap keymap;
	st_screen *screen;

	/* Panels. */
	st_panel focus;
	st_rect panel_rect[ST_PANEL_COUNT];
	st_canvas canvas;
	struct {
		st_field filter;
		bool typing;           /* the filter takes the keys */
		int row, top;          /* the highlighted entry and the first shown */
		int group;             /* 0 category, 1 name, 2 collection */
		char **collapsed;      /* names of the folded groups (owned) */
		int n_collapsed;
	} palette;
	struct {
		int row, top;
		bool editing;
		st_field edit;
	} params;
	st_xwn_panel *xwn_panel;   /* an XWN layer's figures under the form (tui-params-xwn.c), or NULL */
	struct {
		int row, top;
	} check;

	/* Overlays. */
	st_overlay overlay;
	st_field command;
	st_field prompt;
	char prompt_question[160];
	st_prompt_fn prompt_done;
	void *prompt_arg;
	char confirm_question[320];
	char confirm_choices[16];  /* letters, e.g. "ync" */
	char confirm_labels[4][64];
	st_confirm_fn confirm_done;
	void *confirm_arg;
	/* Questions asked while another is open wait here, in order. */
	struct {
		char *question;
		char choices[16];
		char labels[4][64];
		st_confirm_fn done;
		void *arg;
	} queued[4];
	int n_queued;
	int help_top;
	int menu_index, menu_item;
	int docs_top;
	char *docs_type;           /* the layer type whose page is shown, NULL: the current layer's */
	char *docs_text;           /* the page's text once read, or NULL */
	int plugins_row;
	char pick_title[160];
	char **pick_items;         /* owned while the list is open */
	int n_pick_items, pick_row, pick_top;
	st_prompt_fn pick_done;
	void *pick_arg;
	/* A mouse drag on the canvas: where it started and what it holds. */
	bool dragging;
	int drag_x, drag_y;
	st_canvas_hit drag_hit;

	/* Views other than editing (tui-report.c). */
	st_view view;
	st_report_view *report;    /* the open report, kept while editing for :heat; or NULL */
	st_compare_view *compare;  /* the open comparison, or NULL */
	st_heat heat;              /* the heat table; canvas.heat points here while it shows */
	st_dashboard *dashboard;   /* while the dashboard is open (its worker runs), or NULL */
	st_analysis *analysis;     /* while analysis mode is open (its worker waits or runs), or NULL */

	/* The status line: the last message and how it ended. */
	char status[320];
	st_severity status_severity;
	bool status_set;

	bool quit;
	bool redraw_all;           /* repaint every cell on the next flush */
};

/* ---- tui-app.c: what panels and overlays may call ---- */

/* The application for opt: config, theme, keys, plugins, the model (a new
 * one when the file does not exist), the journal and lock, with any
 * start-up question already open. NULL when the model cannot be read
 * (reasons in d). Caller frees with st_app_free. */
st_app *st_app_new(const st_tui_options *opt, st_diag *d);
void st_app_free(st_app *app);
/* Whether the file changed on disk since it was read or written. */
bool st_app_disk_changed(st_app *app);

/* Runs a ':' command line (edit commands and the editor's own: w, q, wq,
 * layout, theme, ...); reports failures in the status line. Returns 0 or -1. */
int st_app_command(st_app *app, const char *line);
/* The same for a command given as words. */
int st_app_exec(st_app *app, int argc, char **argv);
/* The same with words made by st_xstrdup and friends, freed (each and the
 * array) once run. */
int st_app_exec_words(st_app *app, char **argv, int argc);
/* Shows a message in the status line. */
void st_app_message(st_app *app, st_severity sev, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
st_graph *st_app_graph(st_app *app);
/* The layer the panels follow: the canvas cursor, or NULL. */
st_layer *st_app_current(st_app *app);
/* Selects and reveals a layer on the canvas. */
void st_app_focus_layer(st_app *app, const st_layer *l);
/* Replaces l by its parts (the edit command expand) and selects the first
 * part; l NULL says to select a layer first. Returns 0 or -1. */
int st_app_expand(st_app *app, const st_layer *l);
/* Opens a question with lettered choices ("y" "n" ...), labels[i] for
 * choices[i]; Esc takes the last one. While another question is open it
 * waits its turn (up to four wait; a fifth is answered with its last
 * choice at once). */
void st_app_confirm(st_app *app, const char *question, const char *choices,
                    const char *const *labels, st_confirm_fn done, void *arg);
/* Opens the question that waited longest, if any and none is open. */
void st_app_next_question(st_app *app);
/* Opens a one-line prompt with initial text. */
void st_app_prompt(st_app *app, const char *question, const char *initial, st_prompt_fn done, void *arg);
/* Opens a list of n items (copied) with item current highlighted; Enter
 * calls done with the chosen one, Esc closes it without a call. */
void st_app_pick(st_app *app, const char *title, const char *const *items, int n, int current,
                 st_prompt_fn done, void *arg);
void st_app_pick_close(st_app *app);
/* The style of a role in the current theme. */
const st_style *st_app_style(const st_app *app, st_role role);

/* ---- tui-field.c: one-line text fields ---- */

void st_field_set(st_field *f, const char *text);
/* Handles an editing key (characters, <BS>, <Del>, <Left>, <Right>, <Home>,
 * <End>, <C-u>, <C-w>, <Up>/<Down> through history, paste); true when used. */
bool st_field_key(st_field *f, const st_key *k);
void st_field_remember(st_field *f);
void st_field_free(st_field *f);
/* Draws the field at (x, y) in w columns, showing the cursor when focused. */
void st_field_draw(const st_field *f, st_screen *s, int x, int y, int w, const st_style *style,
                   const st_style *cursor, bool focused);

/* ---- the panels (tui-palette.c, tui-params.c, tui-check.c) and overlays
 * (tui-overlay.c): each draws into its rectangle and handles keys, returning
 * true when it used the key. ---- */

void st_palette_draw(st_app *app, st_screen *s, st_rect r, bool focused);
bool st_palette_key(st_app *app, const st_key *k);
/* Opens every folded group of the palette (and frees what kept them). */
void st_palette_unfold(st_app *app);
void st_params_draw(st_app *app, st_screen *s, st_rect r, bool focused);
bool st_params_key(st_app *app, const st_key *k);
/* tui-params-xwn.c: an XWN layer's figures under its form. Lines they
 * take for layer l (0 when l is not an XWN layer). */
int st_params_xwn_height(const st_layer *l);
/* Draws them in r from the model's weights folder, computing them again
 * only when l, its settings, its weights' shapes or files changed. */
void st_params_xwn_draw(st_app *app, st_screen *s, st_rect r, const st_layer *l);
/* How many times the figures were computed (for tests). */
int st_params_xwn_computed(const st_app *app);
void st_params_xwn_free(st_app *app);
void st_check_draw(st_app *app, st_screen *s, st_rect r, bool focused);
bool st_check_key(st_app *app, const st_key *k);
void st_overlay_draw(st_app *app, st_screen *s);
bool st_overlay_key(st_app *app, const st_key *k);
/* Alt and a menu's initial (<M-f>) opens that menu; false for other keys. */
bool st_menu_mnemonic(st_app *app, const st_key *k);

/* ---- tui-report.c: the report and comparison views, and the heat overlay ---- */

struct st_report;
/* :report [FILE]: opens FILE, or the newest report of the model in the
 * state folder, in the report view. Failures go to the status line with
 * file:line:column, and the editor stays as it was. Returns 0 or -1. */
int st_report_open(st_app *app, const char *path);
/* Shows report r (read from path, which may be NULL) in the report view;
 * the app takes r's contents and frees them with st_report_free. */
void st_report_take(st_app *app, struct st_report *r, const char *path);
/* :compare FILE FILE...: opens the reports side by side, the first as the
 * base. Returns 0, or -1 with a message when one cannot be read. */
int st_compare_open(st_app *app, int n, char **paths);
/* :heat: shows or hides the heat overlay on the canvas from the open
 * report (the newest one is opened when there is none). Returns 0 or -1. */
int st_heat_toggle(st_app *app);
/* Draws the view in r and handles its keys (true when used). */
void st_view_draw(st_app *app, st_screen *s, st_rect r);
bool st_view_key(st_app *app, const st_key *k);
/* The actions whose keys the hint line shows in the current view. */
const char *const *st_view_hints(const st_app *app);
/* Frees the views' state and the heat table (at the end). */
void st_views_free(st_app *app);

/* ---- tui-canvas-keys.c: editing on the canvas ---- */

bool st_canvas_key(st_app *app, const st_key *k);

/* ---- tui-main.c ---- */

/* Lays out the panels for the screen's size (pure; tested at many sizes). */
void st_app_layout(st_app *app, int w, int h);
/* Draws a whole frame into app->screen. */
void st_app_draw(st_app *app);
/* Handles one key or mouse event. */
void st_app_key(st_app *app, const st_key *k);

#endif
