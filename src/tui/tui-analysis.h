/* Analysis mode: the worker that runs a private copy of the model once per
 * change of input and keeps every layer's output (tui-analyzer.c), and the
 * full-screen view of model inputs, network overview and channel inspector
 * (tui-analysis.c, tui-inspector.c). Private to src/tui. */
#ifndef TUI_ANALYSIS_H
#define TUI_ANALYSIS_H

#include <stdbool.h>
#include <stdint.h>

#include "st-engine.h"
#include "st-io.h"
#include "tui-app.h"
#include "tui-dashboard.h"

/* ---- types ---- */

typedef enum st_an_phase {
	ST_AN_STARTING,  /* compiling, binding weights */
	ST_AN_RUNNING,   /* reading inputs and running */
	ST_AN_DONE,      /* every layer's output of the last run is readable */
	ST_AN_CANCELLED,
	ST_AN_FAILED     /* the message says why */
} st_an_phase;

/* A runtime option of a layer (ST_PARAM_RUNTIME, TRIGGER or LABEL) and
 * its value in the plan, as text. */
typedef struct st_an_option {
	const st_param_desc *desc; /* the registry's */
	char value[128];
} st_an_option;

/* A layer of the plan, in execution order. */
typedef struct st_an_row {
	char *name, *type;
	char shape[64];        /* its first output's shape; "" when unknown */
	double ms;             /* its time in the last run; < 0 when unknown */
	int *inputs;           /* the rows that feed it */
	int n_inputs;
	bool has_weights;
	const st_layer *layer; /* in the worker's copy of the graph */
	char status[256];      /* its status line from the last run (api->status), or "" */
	st_severity status_severity;
	st_an_option *options; /* its runtime options, or NULL */
	int n_options;
} st_an_row;

/* An input layer and what feeds it. */
typedef struct st_an_input {
	char *name;
	char *file;            /* NULL: seeded random data */
	st_input_kind kind;
	char *description;     /* the conversion applied, or why the file failed */
	bool failed;
	float *planes;         /* the picture: 3 planes of height x width, 0 to 1; or NULL */
	int height, width;
	int64_t frame, frames; /* video: the frame shown and how many (-1: unknown) */
	double fps;
} st_an_input;

/* What the worker publishes; written under its lock, read under it. */
typedef struct st_an_data {
	st_an_phase phase;
	char *message;         /* why it failed, or what it does while starting; or NULL */
	char *note;            /* random weights; or NULL */
	st_an_row *rows;
	int n_rows;
	st_an_input *inputs;
	int n_inputs;
	double seconds;        /* the last finished run's time */
	long runs;             /* finished runs */
	st_tensor_format format;
	char *option_error;    /* why the last runtime option change was refused, or NULL */
} st_an_data;

typedef struct st_analyzer st_analyzer;

/* ---- tui-analyzer.c: the worker ---- */

/* Starts a worker on setup (whose contents it takes over and frees even on
 * failure): it compiles the graph with every output kept on the CPU backend
 * in the network's format, binds weights (random ones when the model's
 * cannot be), and runs once with random inputs, then again whenever an
 * input changes. NULL with the reason in err when no thread can start.
 * Caller stops and frees it with st_analyzer_stop. */
st_analyzer *st_analyzer_start(st_runner_setup *setup, char *err, size_t err_size);
/* Asks the worker to stop (between layers), joins it and frees it all. */
void st_analyzer_stop(st_analyzer *a);
/* Readable when the worker has news; st_analyzer_drain empties it. */
int st_analyzer_fd(const st_analyzer *a);
void st_analyzer_drain(st_analyzer *a);
/* The data, locked: hold it briefly, then unlock. */
const st_an_data *st_analyzer_lock(st_analyzer *a);
void st_analyzer_unlock(st_analyzer *a);
/* Feeds input i from a file (copied; NULL: random data) from its first
 * frame, and runs again. */
void st_analyzer_set_file(st_analyzer *a, int input, const char *path);
/* Shows frame of input i's video (clamped to the video) and runs again. */
void st_analyzer_set_frame(st_analyzer *a, int input, int64_t frame);
/* Sets runtime option param of row's layer to value (text, as the edit
 * command set takes it) before the next run, and runs again; a refusal is
 * published in option_error. */
void st_analyzer_set_runtime(st_analyzer *a, int row, const char *param, const char *value);
/* Interrupts the run in progress (between layers). */
void st_analyzer_cancel(st_analyzer *a);
/* A copy of row's output 0 (weights false) or of its "weights" (true) as
 * float32 NCHW, with its shape. Returns 0, or -1 with the reason in err (no
 * finished run, no such weights). Caller frees *data. */
int st_analyzer_tensor(st_analyzer *a, int row, bool weights, float **data, st_shape *shape, char *err,
                       size_t err_size);

/* A tensor as a picture: 1 or 3 channels as grey or RGB, otherwise channel 0
 * grey, scaled from its smallest to its largest value. Returns the planes
 * (3 of *height x *width; caller frees) and says which channels in how
 * (at most how_size bytes); NULL when the shape has no picture. */
float *st_an_picture_of(const float *data, const st_shape *shape, int *height, int *width, char *how,
                        size_t how_size);

/* ---- tui-inspector.c: the channel inspector ---- */

/* Draws text over at most max_lines lines of w columns from (x, y), broken
 * at spaces (the last line cut); returns the lines used. */
int st_an_draw_wrapped(st_screen *s, int x, int y, int w, int max_lines, const char *text, const st_style *style);

/* What the inspector shows; the UI thread's alone. */
typedef struct st_inspector {
	int row;               /* the layer shown, -1 for none */
	bool weights;          /* its weights, one kernel picture per output channel */
	bool zoom;             /* one channel large, with statistics */
	bool shared_range;     /* one value range for the whole page */
	st_colormap colormap;
	int64_t channel;       /* the channel under the cursor; its page is shown */
	int page_size, columns;/* from the last drawing */
	/* The tensor shown, copied after each run. */
	float *data;
	st_shape shape;
	long runs;             /* the run it came from; -1: none */
	int data_row;
	bool data_weights;
	char error[320];       /* why there is no tensor */
	/* Pixels (sixel or kitty) instead of symbols: the picture's escape
	 * sequences for the cells at (pixel_x, pixel_y), which the frame
	 * leaves blank, and whether they changed since last written. */
	st_graphics graphics;
	char *pixels;
	int pixel_x, pixel_y;
	uint64_t pixel_hash;
	bool pixels_new;
} st_inspector;

void st_inspector_init(st_inspector *in);
void st_inspector_free(st_inspector *in);
/* Forgets the tensor so that the next drawing copies it again. */
void st_inspector_invalidate(st_inspector *in);
/* How many pictures the tensor gives (channels, or output channels of the
 * weights). */
int64_t st_inspector_channels(const st_inspector *in);
/* Renders what the inspector shows now (the page, or the zoomed channel) as
 * a grid. Returns 0, or -1 with the reason in err; free with st_grid_free. */
int st_inspector_render(st_inspector *in, st_grid *g, char *err, size_t err_size);
/* The zoomed channel's statistics line into out. */
void st_inspector_stats_line(const st_inspector *in, char *out, size_t size);
/* Draws into r, whose first row is the title; depth and ascii as the
 * screen draws pictures; mode names the graphics in use. */
void st_inspector_draw(st_inspector *in, st_screen *s, st_rect r, const st_theme *theme, const char *layer,
                       const char *mode, st_color_depth depth, bool ascii, bool focused);

/* ---- tui-analysis.c: the view over the application ---- */

/* :analyze: copies the model, starts the worker and shows the view. */
int st_analysis_open(st_app *app);
/* Stops the worker and goes back to editing. */
void st_analysis_close(st_app *app);
void st_analysis_draw(st_app *app, st_screen *s, st_rect r);
bool st_analysis_key(st_app *app, const st_key *k);
/* :input [LAYER] FILE: feeds an input layer (the one in view without
 * LAYER) from a file; opens analysis mode first when needed. */
int st_analysis_input(st_app *app, int argc, char **argv);
/* :graphics symbols|sixel|kitty: how the inspector draws pictures; pixels
 * are allowed where the terminal is not known to have them, with a
 * warning that says so. */
int st_analysis_graphics(st_app *app, const char *mode);
/* After a frame has reached the terminal: the inspector's picture in
 * pixels to write after it (cursor saved, moved, restored), when it
 * changed or full is set (the frame repainted every cell); NULL when there
 * is nothing to write. Caller frees. */
char *st_analysis_pixels(st_app *app, bool full);
/* Whether kitty images of the inspector are meant to be on the screen. */
bool st_analysis_kitty(const st_app *app);
/* The worker's descriptor (-1 when closed) and draining it. */
int st_analysis_fd(const st_app *app);
void st_analysis_drain(st_app *app);
/* Milliseconds until a playing video wants its next frame (-1: none), and
 * the clock's work: the next frame asked for once it is due. */
int st_analysis_timeout(const st_app *app);
void st_analysis_tick(st_app *app);
/* Waits up to seconds for the worker to finish a run (tests). True when it did. */
bool st_analysis_wait(st_app *app, double seconds);
/* The view's state, for tests. */
st_inspector *st_analysis_inspector(st_app *app);
extern const char *const st_analysis_hints[];

#endif
