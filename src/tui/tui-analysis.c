/* Analysis mode over the application: the Model Input window (a picture of
 * each input and the conversion applied, video play/step/seek), the
 * Network Overview (layers in execution order, the selection's input and
 * output links marked), the Channel Inspector beside it, and the status
 * line of the worker's runs. Keys come from the "analysis." actions. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tui-analysis.h"

/* Frames per second a video plays at when it does not say. */
#define DEFAULT_FPS 10.0

struct st_analysis {
	st_analyzer *worker;
	st_inspector inspector;
	int selected, top;     /* the overview's highlighted row and first shown */
	/* The runtime options panel: whether it has the keys, the option under
	 * its cursor (counting every layer's options in row order) and the
	 * first line shown. */
	bool options_focus;
	int option_at, option_top;
	int input;             /* the input shown in the Model Input window */
	bool playing;
	double next_frame;     /* when the playing video wants its next frame (st_now) */
	long max_frames;       /* STRATA_MAX_FRAMES: frames to play before quitting; 0 none */
	long played;
	/* A file asked for before the plan named its inputs: layer (NULL: the
	 * first) and path, handed over once it does. */
	char *pending_layer, *pending_file;
};

const char *const st_analysis_hints[] = { "analysis.inspect", "analysis.page_down", "analysis.zoom",
	                                  "analysis.weights", "analysis.colormap", "analysis.export",
	                                  "analysis.open", "analysis.play", "analysis.options", "analysis.cancel",
	                                  "analysis.back", "global.help", NULL };

/* ---- opening and closing ---- */

int
st_analysis_open(st_app *app)
{
	if (app->analysis != NULL) {
		app->view = ST_VIEW_ANALYSIS;
		return 0;
	}
	st_runner_setup setup;
	char why[640];
	if (st_runner_setup_of(app, &setup, why, sizeof why) != 0) {
		st_app_message(app, ST_SEVERITY_ERROR, "analyze: %s", why);
		return -1;
	}
	char err[256];
	st_analyzer *worker = st_analyzer_start(&setup, err, sizeof err);
	if (worker == NULL) {
		st_app_message(app, ST_SEVERITY_ERROR, "%s", err);
		return -1;
	}
	st_analysis *an = st_xcalloc(1, sizeof *an);
	an->worker = worker;
	st_inspector_init(&an->inspector);
	const char *max = getenv("STRATA_MAX_FRAMES");
	an->max_frames = max != NULL ? strtol(max, NULL, 10) : 0;
	app->analysis = an;
	app->view = ST_VIEW_ANALYSIS;
	app->overlay = ST_OVERLAY_NONE;
	return 0;
}

void
st_analysis_close(st_app *app)
{
	st_analysis *an = app->analysis;
	if (an == NULL)
		return;
	st_analyzer_stop(an->worker);
	st_inspector_free(&an->inspector);
	free(an->pending_layer);
	free(an->pending_file);
	bool pixels = an->inspector.graphics != ST_GRAPHICS_SYMBOLS;
	free(an);
	app->analysis = NULL;
	if (app->view == ST_VIEW_ANALYSIS)
		app->view = ST_VIEW_EDIT;
	if (pixels)
		app->redraw_all = true; /* every cell over the picture again */
}

bool
st_analysis_kitty(const st_app *app)
{
	return app->analysis != NULL && app->view == ST_VIEW_ANALYSIS &&
	       app->analysis->inspector.graphics == ST_GRAPHICS_KITTY && app->analysis->inspector.pixels != NULL;
}

int
st_analysis_fd(const st_app *app)
{
	return app->analysis != NULL ? st_analyzer_fd(app->analysis->worker) : -1;
}

void
st_analysis_drain(st_app *app)
{
	if (app->analysis != NULL)
		st_analyzer_drain(app->analysis->worker);
}

st_inspector *
st_analysis_inspector(st_app *app)
{
	return app->analysis != NULL ? &app->analysis->inspector : NULL;
}

bool
st_analysis_wait(st_app *app, double seconds)
{
	if (app->analysis == NULL)
		return false;
	double until = st_now() + seconds;
	while (st_now() < until) {
		const st_an_data *d = st_analyzer_lock(app->analysis->worker);
		bool done = d->phase == ST_AN_DONE || d->phase == ST_AN_FAILED || d->phase == ST_AN_CANCELLED;
		st_analyzer_unlock(app->analysis->worker);
		if (done)
			return true;
		struct timespec ts = { 0, 5 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	return false;
}

/* ---- graphics ---- */

/* "symbols, 256 colours": how pictures are drawn on this terminal. */
static void
graphics_mode(const st_screen *s, char *out, size_t size)
{
	static const char *const depths[] = { [ST_DEPTH_MONO] = "monochrome", [ST_DEPTH_8] = "8 colours",
		                              [ST_DEPTH_16] = "16 colours", [ST_DEPTH_256] = "256 colours",
		                              [ST_DEPTH_TRUE] = "true colour" };
	st_color_depth d = st_term_depth();
	snprintf(out, size, "%s, %s", s->ascii ? "ASCII symbols" : "symbols", depths[d]);
}

int
st_analysis_graphics(st_app *app, const char *mode)
{
	st_analysis *an = app->analysis;
	char why[256];
	st_graphics can = st_graphics_detect(why, sizeof why);
	if (mode == NULL) {
		char m[64];
		if (an != NULL && an->inspector.graphics != ST_GRAPHICS_SYMBOLS)
			snprintf(m, sizeof m, "%s pixels", st_graphics_name(an->inspector.graphics));
		else
			graphics_mode(app->screen, m, sizeof m);
		st_app_message(app, ST_SEVERITY_INFO, "graphics: %s; this terminal: %s (:graphics symbols|sixel|kitty)",
		               m, why);
		return 0;
	}
	int g = st_graphics_find(mode);
	if (g < 0) {
		st_app_message(app, ST_SEVERITY_ERROR, "graphics takes symbols, sixel or kitty, not '%s'", mode);
		return -1;
	}
	if (an == NULL) {
		st_app_message(app, ST_SEVERITY_ERROR, "graphics: open analysis mode first (:analyze)");
		return -1;
	}
	an->inspector.graphics = (st_graphics)g;
	free(an->inspector.pixels);
	an->inspector.pixels = NULL;
	app->redraw_all = true; /* no picture of the old kind stays behind */
	if (g == ST_GRAPHICS_SYMBOLS)
		st_app_message(app, ST_SEVERITY_INFO, "graphics: symbols");
	else if ((int)can != g)
		st_app_message(app, ST_SEVERITY_WARNING,
		               "graphics: %s pixels as asked, though %s; :graphics symbols goes back", mode, why);
	else
		st_app_message(app, ST_SEVERITY_INFO, "graphics: %s pixels (%s)", mode, why);
	return 0;
}

char *
st_analysis_pixels(st_app *app, bool full)
{
	st_analysis *an = app->analysis;
	if (an == NULL || app->view != ST_VIEW_ANALYSIS)
		return NULL;
	st_inspector *in = &an->inspector;
	if (in->graphics == ST_GRAPHICS_SYMBOLS || in->pixels == NULL || in->row < 0 || (!in->pixels_new && !full))
		return NULL;
	in->pixels_new = false;
	/* Kitty keeps earlier images until told: drop them first. */
	return st_xasprintf("\0337%s\033[%d;%dH%s\0338", in->graphics == ST_GRAPHICS_KITTY ? "\033_Ga=d\033\\" : "",
	                    in->pixel_y + 1, in->pixel_x + 1, in->pixels);
}

/* ---- inputs ---- */

static void
open_input_file(st_app *app, const char *text, void *arg)
{
	(void)arg;
	st_analysis *an = app->analysis;
	if (an == NULL || text[0] == '\0')
		return;
	an->playing = false;
	st_analyzer_set_file(an->worker, an->input, text);
}

int
st_analysis_input(st_app *app, int argc, char **argv)
{
	if (argc < 2 || argc > 3) {
		st_app_message(app, ST_SEVERITY_ERROR, "input takes a file, or an input layer and a file: input [LAYER] FILE");
		return -1;
	}
	if (app->analysis == NULL && st_analysis_open(app) != 0)
		return -1;
	st_analysis *an = app->analysis;
	app->view = ST_VIEW_ANALYSIS;
	int input = an->input;
	const st_an_data *d = st_analyzer_lock(an->worker);
	bool named = d->n_inputs > 0 || d->phase == ST_AN_FAILED;
	st_analyzer_unlock(an->worker);
	if (!named) {
		/* Still compiling: the file goes to the worker once the inputs are known. */
		st_dash_set_text(&an->pending_layer, argc == 3 ? argv[1] : NULL);
		st_dash_set_text(&an->pending_file, argv[argc - 1]);
		return 0;
	}
	if (argc == 3) {
		input = -1;
		d = st_analyzer_lock(an->worker);
		for (int i = 0; i < d->n_inputs; i++)
			if (strcmp(d->inputs[i].name, argv[1]) == 0)
				input = i;
		int n = d->n_inputs;
		st_analyzer_unlock(an->worker);
		if (input < 0) {
			st_app_message(app, ST_SEVERITY_ERROR, "input: no input layer '%s'%s", argv[1],
			               n == 0 ? " (the plan is not compiled yet, or failed)" : "");
			return -1;
		}
		an->input = input;
	}
	an->playing = false;
	st_analyzer_set_file(an->worker, input, argv[argc - 1]);
	return 0;
}

/* Asks for frame `frame` of the input in view (a video). */
static void
show_frame(st_analysis *an, int64_t frame)
{
	st_analyzer_set_frame(an->worker, an->input, frame);
}

int
st_analysis_timeout(const st_app *app)
{
	const st_analysis *an = app->analysis;
	if (an == NULL || !an->playing)
		return -1;
	double left = an->next_frame - st_now();
	return left <= 0 ? 0 : (int)(left * 1e3) + 1;
}

/* Hands a file asked for while compiling to the worker, once it can be. */
static void
hand_over_pending(st_app *app)
{
	st_analysis *an = app->analysis;
	const st_an_data *d = st_analyzer_lock(an->worker);
	bool named = d->n_inputs > 0 || d->phase == ST_AN_FAILED;
	st_analyzer_unlock(an->worker);
	if (!named)
		return;
	char *argv[3] = { (char *)"input", an->pending_layer, an->pending_file };
	an->pending_layer = an->pending_file = NULL;
	if (argv[1] != NULL)
		st_analysis_input(app, 3, argv);
	else
		st_analysis_input(app, 2, (char *[]){ argv[0], argv[2] });
	free(argv[1]);
	free(argv[2]);
}

void
st_analysis_tick(st_app *app)
{
	st_analysis *an = app->analysis;
	if (an != NULL && an->pending_file != NULL)
		hand_over_pending(app);
	if (an == NULL || !an->playing || st_now() < an->next_frame)
		return;
	const st_an_data *d = st_analyzer_lock(an->worker);
	bool busy = d->phase == ST_AN_RUNNING || d->phase == ST_AN_STARTING;
	int64_t frame = 0, frames = -1;
	double fps = DEFAULT_FPS;
	if (an->input < d->n_inputs) {
		frame = d->inputs[an->input].frame;
		frames = d->inputs[an->input].frames;
		if (d->inputs[an->input].fps >= 1 && d->inputs[an->input].fps <= 120)
			fps = d->inputs[an->input].fps;
	}
	st_analyzer_unlock(an->worker);
	double now = st_now();
	if (busy) {
		/* The run is slower than the video: this frame is dropped. */
		an->next_frame = now + 1.0 / fps;
		return;
	}
	/* Frames that went by while the last run took longer than one frame. */
	int64_t step = 1 + (int64_t)((now - an->next_frame) * fps);
	if (frames > 0 && frame + step >= frames) {
		step = frames - 1 - frame;
		an->playing = false;
		st_app_message(app, ST_SEVERITY_INFO, "the end of the video");
	}
	if (step > 0)
		show_frame(an, frame + step);
	an->next_frame = now + 1.0 / fps;
	an->played++;
	if (an->max_frames > 0 && an->played >= an->max_frames) {
		an->playing = false;
		st_app_command(app, "q");
	}
}

/* ---- drawing ---- */

/* The input, overview and inspector rectangles, and the status row: a
 * column on the left (input above, overview below) and the inspector on
 * the right. Pure. */
static void
layout(st_rect r, st_rect *input, st_rect *overview, st_rect *inspector, int *status_y)
{
	int h = r.h - 1;
	int left = r.w * 2 / 5;
	left = left < 30 ? (r.w < 60 ? r.w / 2 : 30) : left;
	int in_h = h * 2 / 5 < 8 ? (h < 16 ? h / 2 : 8) : h * 2 / 5;
	*input = (st_rect){ r.x, r.y, left, in_h };
	*overview = (st_rect){ r.x, r.y + in_h, left, h - in_h };
	*inspector = (st_rect){ r.x + left, r.y, r.w - left, h };
	*status_y = r.y + h;
}

static void
draw_input(st_analysis *an, const st_an_data *d, st_screen *s, st_rect r, const st_theme *theme)
{
	char title[160];
	const st_an_input *in = an->input < d->n_inputs ? &d->inputs[an->input] : NULL;
	if (in != NULL && d->n_inputs > 1)
		snprintf(title, sizeof title, "Model Input · %s (%d/%d)", in->name, an->input + 1, d->n_inputs);
	else
		snprintf(title, sizeof title, "Model Input%s%s", in ? " · " : "", in ? in->name : "");
	st_screen_box(s, r, &theme->roles[ST_ROLE_BORDER], title, &theme->roles[ST_ROLE_TITLE]);
	st_rect c = { r.x + 1, r.y + 1, r.w - 2, r.h - 2 };
	if (c.w < 4 || c.h < 2)
		return;
	if (in == NULL) {
		st_screen_text_fit(s, c.x, c.y, d->n_rows ? "the model has no inputs" : "waiting for the plan",
		                   &theme->roles[ST_ROLE_DIM], c.w);
		return;
	}
	int y = c.y;
	y += st_an_draw_wrapped(s, c.x, y, c.w, 3, in->description ? in->description : "loading…",
	                  &theme->roles[in->failed ? ST_ROLE_ERROR : ST_ROLE_TEXT]);
	if (in->kind == ST_INPUT_VIDEO && !in->failed) {
		char line[128];
		snprintf(line, sizeof line, "frame %lld/%lld · %s · %.3g fps", (long long)in->frame,
		         (long long)(in->frames > 0 ? in->frames - 1 : in->frame), an->playing ? "playing" : "paused",
		         in->fps);
		st_screen_text_fit(s, c.x, y++, line, &theme->roles[ST_ROLE_INFO], c.w);
	}
	if (in->planes != NULL && c.y + c.h - y > 0) {
		int cols, rows;
		st_picture_fit(in->height, in->width, c.w, c.y + c.h - y, &cols, &rows);
		st_picture_draw(s, c.x, y, cols, rows, in->planes, in->height, in->width, st_term_depth(), s->ascii);
	}
}

/* Whether row b feeds row a directly. */
static bool
feeds(const st_an_data *d, int a, int b)
{
	for (int k = 0; k < d->rows[a].n_inputs; k++)
		if (d->rows[a].inputs[k] == b)
			return true;
	return false;
}

static void
draw_overview(st_analysis *an, const st_an_data *d, st_screen *s, st_rect r, const st_theme *theme)
{
	st_screen_box(s, r, &theme->roles[ST_ROLE_BORDER_FOCUS],
	              "Network Overview", &theme->roles[ST_ROLE_TITLE]);
	st_rect c = { r.x + 1, r.y + 1, r.w - 2, r.h - 2 };
	if (c.w < 4 || c.h < 1)
		return;
	if (d->n_rows == 0) {
		/* A model that cannot run says why here, a line each. */
		const char *m = d->message ? d->message : "compiling…";
		int y = c.y;
		if (d->phase == ST_AN_FAILED)
			st_screen_text_fit(s, c.x, y++, "The model cannot run:", &theme->roles[ST_ROLE_ERROR], c.w);
		while (*m && y < c.y + c.h) {
			const char *e = strchr(m, '\n');
			size_t n = e ? (size_t)(e - m) : strlen(m);
			char *line = st_xstrndup(m, n);
			st_screen_text_fit(s, c.x, y++, line, &theme->roles[ST_ROLE_TEXT], c.w);
			free(line);
			m += n + (e != NULL);
		}
		return;
	}
	if (an->selected >= d->n_rows)
		an->selected = d->n_rows - 1;
	st_scroll_keep(&an->top, an->selected, c.h, d->n_rows);
	for (int i = an->top; i < d->n_rows && i - an->top < c.h; i++) {
		const st_an_row *row = &d->rows[i];
		int y = c.y + i - an->top;
		bool in_link = feeds(d, an->selected, i), out_link = feeds(d, i, an->selected);
		st_role role = i == an->selected ? ST_ROLE_SELECTED
		               : in_link         ? ST_ROLE_LINK_IN
		               : out_link        ? ST_ROLE_LINK_OUT
		                                 : ST_ROLE_TEXT;
		const char *mark = i == an->inspector.row ? (s->ascii ? "*" : "◆")
		                   : in_link              ? (s->ascii ? "^" : "▲")
		                   : out_link             ? (s->ascii ? "v" : "▼")
		                                          : " ";
		char time[32] = "";
		if (row->ms >= 0)
			snprintf(time, sizeof time, "%.2f ms", row->ms);
		char line[512];
		/* Narrow, the type gives way to the time; a status line follows. */
		if (c.w >= 46)
			snprintf(line, sizeof line, "%s %-10s %-11s %-13s %-9s %s", mark, row->name, row->type, row->shape, time,
			         row->status);
		else
			snprintf(line, sizeof line, "%s %-10s %-13s %-9s %s", mark, row->name, row->shape, time, row->status);
		if (row->status[0] != '\0' && i != an->selected && row->status_severity != ST_SEVERITY_INFO)
			role = row->status_severity == ST_SEVERITY_ERROR ? ST_ROLE_ERROR : ST_ROLE_WARNING;
		if (i == an->selected)
			st_screen_fill(s, (st_rect){ c.x, y, c.w, 1 }, " ", &theme->roles[role]);
		st_screen_text_fit(s, c.x, y, line, &theme->roles[role], c.w);
	}
}

/* ---- runtime options ---- */

/* Every layer's runtime options in row order: the total, and where option
 * number at is (*row, *option); false when there is no such option. */
static int
count_options(const st_an_data *d)
{
	int n = 0;
	for (int r = 0; r < d->n_rows; r++)
		n += d->rows[r].n_options;
	return n;
}

static bool
find_option(const st_an_data *d, int at, int *row, int *option)
{
	for (int r = 0; r < d->n_rows; r++) {
		if (at < d->rows[r].n_options) {
			*row = r;
			*option = at;
			return true;
		}
		at -= d->rows[r].n_options;
	}
	return false;
}

/* How an option is changed, shown beside its value. */
static const char *
option_hint(const st_param_desc *p)
{
	if (p->flags & ST_PARAM_LABEL)
		return "";
	if (p->flags & ST_PARAM_TRIGGER)
		return "Enter fires";
	if (p->kind == ST_PARAM_BOOL)
		return "Enter toggles";
	if (p->kind == ST_PARAM_ENUM)
		return "[ ] or Enter";
	if (p->kind == ST_PARAM_STRING)
		return "Enter edits";
	return "[ ] steps, Enter";
}

/* The Runtime Options panel: each layer's options under its name, grouped. */
static void
draw_options(st_analysis *an, const st_an_data *d, st_screen *s, st_rect r, const st_theme *theme)
{
	st_screen_box(s, r, &theme->roles[an->options_focus ? ST_ROLE_BORDER_FOCUS : ST_ROLE_BORDER],
	              "Runtime Options", &theme->roles[ST_ROLE_TITLE]);
	st_rect c = { r.x + 1, r.y + 1, r.w - 2, r.h - 2 };
	if (c.w < 4 || c.h < 1)
		return;
	int total = count_options(d);
	an->option_at = an->option_at >= total ? total - 1 : an->option_at < 0 ? 0 : an->option_at;
	/* Lines: a heading per layer with options, then one per option. */
	int n_lines = 0, cursor_line = 0, at = 0;
	for (int row = 0; row < d->n_rows; row++) {
		if (d->rows[row].n_options == 0)
			continue;
		n_lines++;
		for (int o = 0; o < d->rows[row].n_options; o++, at++, n_lines++)
			cursor_line = at == an->option_at ? n_lines : cursor_line;
	}
	st_scroll_keep(&an->option_top, cursor_line, c.h, n_lines);
	int line = 0;
	at = 0;
	for (int row = 0; row < d->n_rows; row++) {
		const st_an_row *rw = &d->rows[row];
		if (rw->n_options == 0)
			continue;
		int y = c.y + line - an->option_top;
		if (line >= an->option_top && y < c.y + c.h)
			st_screen_text_fit(s, c.x, y, rw->name, &theme->roles[ST_ROLE_TITLE], c.w);
		line++;
		for (int o = 0; o < rw->n_options; o++, at++, line++) {
			y = c.y + line - an->option_top;
			if (line < an->option_top || y >= c.y + c.h)
				continue;
			const st_an_option *opt = &rw->options[o];
			bool here = at == an->option_at;
			st_role role = here && an->options_focus ? ST_ROLE_SELECTED
			               : (opt->desc->flags & ST_PARAM_LABEL) ? ST_ROLE_DIM
			                                                     : ST_ROLE_TEXT;
			char text[320];
			const char *value = opt->value;
			if (opt->desc->flags & ST_PARAM_TRIGGER)
				value = s->ascii ? "[ fire ]" : "[ ▶ fire ]";
			else if (opt->desc->kind == ST_PARAM_BOOL)
				value = strcmp(opt->value, "true") == 0 ? (s->ascii ? "[x]" : "☑") : (s->ascii ? "[ ]" : "☐");
			snprintf(text, sizeof text, "  %-14s %-16s %s", opt->desc->name, value,
			         here && an->options_focus ? option_hint(opt->desc) : "");
			if (here && an->options_focus)
				st_screen_fill(s, (st_rect){ c.x, y, c.w, 1 }, " ", &theme->roles[role]);
			st_screen_text_fit(s, c.x, y, text, &theme->roles[role], c.w);
		}
	}
}

/* Applies value to option number at: to the running plan at once, and to
 * the model (an undoable edit) unless it is a trigger. */
static void
set_option(st_app *app, int at, const char *value)
{
	st_analysis *an = app->analysis;
	const st_an_data *d = st_analyzer_lock(an->worker);
	int row, o;
	if (!find_option(d, at, &row, &o)) {
		st_analyzer_unlock(an->worker);
		return;
	}
	char *layer = st_xstrdup(d->rows[row].name);
	const st_param_desc *p = d->rows[row].options[o].desc;
	st_analyzer_unlock(an->worker);
	if (p->flags & ST_PARAM_LABEL) {
		st_app_message(app, ST_SEVERITY_INFO, "%s.%s is a label: the layer sets it", layer, p->name);
		free(layer);
		return;
	}
	st_analyzer_set_runtime(an->worker, row, p->name, value);
	if (!(p->flags & ST_PARAM_TRIGGER)) {
		char **argv = st_xcalloc(4, sizeof *argv);
		argv[0] = st_xstrdup("set");
		argv[1] = st_xstrdup(layer);
		argv[2] = st_xstrdup(p->name);
		argv[3] = st_xstrdup(value);
		st_app_exec_words(app, argv, 4);
	}
	free(layer);
}

static void
option_typed(st_app *app, const char *text, void *arg)
{
	if (app->analysis != NULL)
		set_option(app, (int)(intptr_t)arg, text);
}

/* Enter on an option: toggle, fire, pick or type its value. */
static void
activate_option(st_app *app)
{
	st_analysis *an = app->analysis;
	const st_an_data *d = st_analyzer_lock(an->worker);
	int row, o;
	if (!find_option(d, an->option_at, &row, &o)) {
		st_analyzer_unlock(an->worker);
		st_app_message(app, ST_SEVERITY_INFO, "no layer of this model has runtime options");
		return;
	}
	const st_an_option opt = d->rows[row].options[o];
	char question[160];
	snprintf(question, sizeof question, "%s.%s:", d->rows[row].name, opt.desc->name);
	st_analyzer_unlock(an->worker);
	void *arg = (void *)(intptr_t)an->option_at;
	if (opt.desc->flags & ST_PARAM_TRIGGER)
		set_option(app, an->option_at, "true");
	else if (opt.desc->kind == ST_PARAM_BOOL)
		set_option(app, an->option_at, strcmp(opt.value, "true") == 0 ? "false" : "true");
	else if (opt.desc->flags & ST_PARAM_LABEL)
		set_option(app, an->option_at, opt.value);
	else if (opt.desc->kind == ST_PARAM_ENUM) {
		int n = 0, current = 0;
		while (opt.desc->enum_values[n] != NULL) {
			current = strcmp(opt.desc->enum_values[n], opt.value) == 0 ? n : current;
			n++;
		}
		st_app_pick(app, question, opt.desc->enum_values, n, current, option_typed, arg);
	} else
		st_app_prompt(app, question, opt.value, option_typed, arg);
}

/* [ and ]: a number a step down or up (within its bounds), a choice the
 * previous or next. */
static void
step_option(st_app *app, int direction)
{
	st_analysis *an = app->analysis;
	const st_an_data *d = st_analyzer_lock(an->worker);
	int row, o;
	if (!find_option(d, an->option_at, &row, &o)) {
		st_analyzer_unlock(an->worker);
		return;
	}
	const st_an_option opt = d->rows[row].options[o];
	st_analyzer_unlock(an->worker);
	const st_param_desc *p = opt.desc;
	char value[128] = "";
	if (p->flags & (ST_PARAM_LABEL | ST_PARAM_TRIGGER))
		return;
	if (p->kind == ST_PARAM_ENUM) {
		int n = 0, current = 0;
		while (p->enum_values[n] != NULL) {
			current = strcmp(p->enum_values[n], opt.value) == 0 ? n : current;
			n++;
		}
		snprintf(value, sizeof value, "%s", p->enum_values[(current + direction + n) % n]);
	} else if (p->kind == ST_PARAM_INT || p->kind == ST_PARAM_FLOAT) {
		double v = strtod(opt.value, NULL) + direction * st_param_step(p);
		if ((p->flags & ST_PARAM_HAS_MIN) && v < p->min)
			v = p->min;
		if ((p->flags & ST_PARAM_HAS_MAX) && v > p->max)
			v = p->max;
		if (p->kind == ST_PARAM_INT)
			snprintf(value, sizeof value, "%lld", (long long)v);
		else
			snprintf(value, sizeof value, "%.6g", v);
	} else if (p->kind == ST_PARAM_BOOL) {
		snprintf(value, sizeof value, "%s", direction > 0 ? "true" : "false");
	} else {
		return;
	}
	set_option(app, an->option_at, value);
}

/* Copies the inspected layer's tensor after each finished run. */
static void
refresh_inspector(st_analysis *an)
{
	st_inspector *in = &an->inspector;
	if (in->row < 0)
		return;
	const st_an_data *d = st_analyzer_lock(an->worker);
	long runs = d->runs;
	bool done = d->phase == ST_AN_DONE;
	st_analyzer_unlock(an->worker);
	if (in->data != NULL && in->runs == runs && in->data_row == in->row && in->data_weights == in->weights)
		return;
	if (!done && in->data != NULL && in->data_row == in->row && in->data_weights == in->weights)
		return; /* the last run's tensor stays until the next is done */
	free(in->data);
	in->data = NULL;
	in->error[0] = '\0';
	if (st_analyzer_tensor(an->worker, in->row, in->weights, &in->data, &in->shape, in->error, sizeof in->error) ==
	    0) {
		in->runs = runs;
		in->data_row = in->row;
		in->data_weights = in->weights;
	}
}

static void
draw_status(st_analysis *an, const st_an_data *d, st_screen *s, int x, int y, int w, const st_theme *theme)
{
	char line[512];
	st_role role = ST_ROLE_INFO;
	switch (d->phase) {
	case ST_AN_STARTING:
		snprintf(line, sizeof line, "STARTING  %s", d->message ? d->message : "");
		break;
	case ST_AN_RUNNING:
		snprintf(line, sizeof line, "RUNNING  run %ld · c cancels", d->runs + 1);
		break;
	case ST_AN_DONE:
		snprintf(line, sizeof line, "DONE  run %ld in %.3f ms · cpu · %s%s%s", d->runs, d->seconds * 1e3,
		         st_tensor_format_name(d->format), d->note ? " · " : "", d->note ? d->note : "");
		if (d->option_error != NULL) {
			snprintf(line, sizeof line, "REFUSED  %s", d->option_error);
			role = ST_ROLE_WARNING;
		}
		break;
	case ST_AN_CANCELLED:
		snprintf(line, sizeof line, "CANCELLED  the outputs shown are from run %ld", d->runs);
		role = ST_ROLE_WARNING;
		break;
	default: {
		const char *m = d->message ? d->message : "";
		const char *e = strchr(m, '\n');
		snprintf(line, sizeof line, "FAILED  %.*s", e ? (int)(e - m) : (int)strlen(m), m);
		role = ST_ROLE_ERROR;
		break;
	}
	}
	(void)an;
	st_screen_text_fit(s, x, y, line, &theme->roles[role], w);
}

void
st_analysis_draw(st_app *app, st_screen *s, st_rect r)
{
	st_analysis *an = app->analysis;
	if (an == NULL)
		return;
	st_rect input, overview, inspector;
	int status_y;
	layout(r, &input, &overview, &inspector, &status_y);
	refresh_inspector(an);
	const st_an_data *d = st_analyzer_lock(an->worker);
	draw_input(an, d, s, input, app->theme);
	/* With runtime options, their panel takes the overview's lower part. */
	int total = count_options(d);
	if (total > 0 && overview.h >= 8) {
		int lines = total;
		for (int row = 0; row < d->n_rows; row++)
			lines += d->rows[row].n_options > 0;
		int h = lines + 2 < overview.h / 2 ? lines + 2 : overview.h / 2;
		st_rect options = { overview.x, overview.y + overview.h - h, overview.w, h };
		overview.h -= h;
		draw_options(an, d, s, options, app->theme);
	} else {
		an->options_focus = false;
	}
	draw_overview(an, d, s, overview, app->theme);
	const char *layer = an->inspector.row >= 0 && an->inspector.row < d->n_rows ? d->rows[an->inspector.row].name
	                                                                             : NULL;
	char *name = layer ? st_xstrdup(layer) : NULL;
	draw_status(an, d, s, r.x + 1, status_y, r.w - 2, app->theme);
	st_analyzer_unlock(an->worker);
	char mode[64];
	if (an->inspector.graphics != ST_GRAPHICS_SYMBOLS)
		snprintf(mode, sizeof mode, "%s pixels", st_graphics_name(an->inspector.graphics));
	else
		graphics_mode(s, mode, sizeof mode);
	if (name == NULL) {
		char title[128];
		snprintf(title, sizeof title, "Channel Inspector · %s", mode);
		st_screen_box(s, inspector, st_app_style(app, ST_ROLE_BORDER), title, st_app_style(app, ST_ROLE_TITLE));
		st_screen_text_fit(s, inspector.x + 1, inspector.y + 1,
		                   "Enter on a layer shows its channels; :graphics says how pictures are drawn",
		                   st_app_style(app, ST_ROLE_DIM), inspector.w - 2);
	} else {
		st_inspector_draw(&an->inspector, s, inspector, app->theme, name, mode, st_term_depth(), s->ascii, false);
	}
	free(name);
}

/* ---- keys ---- */

static void
export_done(st_app *app, const char *text, void *arg)
{
	(void)arg;
	st_analysis *an = app->analysis;
	if (an == NULL || text[0] == '\0')
		return;
	st_grid g;
	char err[512];
	if (st_inspector_render(&an->inspector, &g, err, sizeof err) != 0) {
		st_app_message(app, ST_SEVERITY_ERROR, "export: %s", err);
		return;
	}
	if (st_image_write_png(text, g.planes, 3, g.height, g.width, err, sizeof err) != 0)
		st_app_message(app, ST_SEVERITY_ERROR, "export: %s", err);
	else
		st_app_message(app, ST_SEVERITY_INFO, "exported %dx%d to %s", g.width, g.height, text);
	st_grid_free(&g);
}

/* The input in view's frame and whether it is a video. */
static bool
current_video(st_analysis *an, int64_t *frame)
{
	const st_an_data *d = st_analyzer_lock(an->worker);
	bool video = an->input < d->n_inputs && d->inputs[an->input].kind == ST_INPUT_VIDEO &&
	             !d->inputs[an->input].failed && d->inputs[an->input].file != NULL;
	*frame = video ? d->inputs[an->input].frame : 0;
	st_analyzer_unlock(an->worker);
	return video;
}

/* Moves the channel cursor by delta, within the tensor. */
static void
move_channel(st_inspector *in, int64_t delta)
{
	int64_t n = st_inspector_channels(in);
	int64_t c = in->channel + delta;
	in->channel = c >= n ? (n > 0 ? n - 1 : 0) : c < 0 ? 0 : c;
}

bool
st_analysis_key(st_app *app, const st_key *k)
{
	st_analysis *an = app->analysis;
	if (an == NULL || k->kind != ST_KEY_KEY)
		return false;
	int a = st_keymap_lookup(&app->keymap, k->name, "analysis.");
	if (a < 0)
		return false;
	const char *n = app->keymap.actions[a].name + strlen("analysis.");
	st_inspector *in = &an->inspector;
	/* Keys act on the newest tensor, even before a frame has shown it. */
	refresh_inspector(an);
	const st_an_data *d = st_analyzer_lock(an->worker);
	int n_rows = d->n_rows, n_inputs = d->n_inputs;
	bool row_weights = an->selected < n_rows && d->rows[an->selected].has_weights;
	st_analyzer_unlock(an->worker);
	int64_t frame;
	if (strcmp(n, "options") == 0) {
		d = st_analyzer_lock(an->worker);
		int total = count_options(d);
		st_analyzer_unlock(an->worker);
		an->options_focus = total > 0 && !an->options_focus;
		if (total == 0)
			st_app_message(app, ST_SEVERITY_INFO, "no layer of this model has runtime options");
	} else if (strcmp(n, "increase") == 0 || strcmp(n, "decrease") == 0) {
		if (an->options_focus)
			step_option(app, n[0] == 'i' ? 1 : -1);
	} else if (an->options_focus && (strcmp(n, "up") == 0 || strcmp(n, "down") == 0)) {
		d = st_analyzer_lock(an->worker);
		int total = count_options(d);
		st_analyzer_unlock(an->worker);
		int want = an->option_at + (n[0] == 'u' ? -1 : 1);
		an->option_at = want < 0 ? 0 : want >= total ? (total > 0 ? total - 1 : 0) : want;
	} else if (an->options_focus && strcmp(n, "inspect") == 0) {
		activate_option(app);
	} else if (strcmp(n, "back") == 0) {
		st_analysis_close(app);
	} else if (strcmp(n, "up") == 0 || strcmp(n, "down") == 0) {
		int want = an->selected + (n[0] == 'u' ? -1 : 1);
		an->selected = want < 0 ? 0 : want >= n_rows ? (n_rows > 0 ? n_rows - 1 : 0) : want;
	} else if (strcmp(n, "inspect") == 0) {
		if (an->selected < n_rows) {
			if (in->row != an->selected)
				in->channel = 0;
			in->row = an->selected;
			if (in->weights && !row_weights)
				in->weights = false;
			st_inspector_invalidate(in);
		}
	} else if (strcmp(n, "page_up") == 0 || strcmp(n, "page_down") == 0) {
		int64_t size = in->page_size > 0 ? in->page_size : 1;
		int64_t first = in->channel / size * size + (n[5] == 'u' ? -size : size);
		int64_t count = st_inspector_channels(in);
		if (first >= 0 && first < count)
			in->channel = first;
	} else if (strcmp(n, "previous_channel") == 0) {
		move_channel(in, -1);
	} else if (strcmp(n, "next_channel") == 0) {
		move_channel(in, 1);
	} else if (strcmp(n, "zoom") == 0) {
		in->zoom = !in->zoom;
	} else if (strcmp(n, "weights") == 0) {
		in->weights = !in->weights;
		in->channel = 0;
		st_inspector_invalidate(in);
	} else if (strcmp(n, "colormap") == 0) {
		in->colormap = (st_colormap)((in->colormap + 1) % ST_COLORMAP_COUNT);
		st_app_message(app, ST_SEVERITY_INFO, "colour map %s", st_colormap_name(in->colormap));
	} else if (strcmp(n, "range") == 0) {
		in->shared_range = !in->shared_range;
		st_app_message(app, ST_SEVERITY_INFO, "%s", in->shared_range ? "one value range for the page"
		                                                             : "each channel its own value range");
	} else if (strcmp(n, "export") == 0) {
		if (in->data == NULL) {
			st_app_message(app, ST_SEVERITY_ERROR, "export: Enter on a layer first");
		} else {
			char initial[256];
			const st_an_data *dd = st_analyzer_lock(an->worker);
			const char *layer = in->row < dd->n_rows ? dd->rows[in->row].name : "layer";
			if (in->zoom)
				snprintf(initial, sizeof initial, "%s-%s-%lld.png", layer, in->weights ? "weights" : "channel",
				         (long long)in->channel);
			else
				snprintf(initial, sizeof initial, "%s-%s.png", layer, in->weights ? "weights" : "grid");
			st_analyzer_unlock(an->worker);
			st_app_prompt(app, "Export PNG to:", initial, export_done, NULL);
		}
	} else if (strcmp(n, "open") == 0) {
		if (n_inputs == 0)
			st_app_message(app, ST_SEVERITY_ERROR, "the model has no inputs to open a file for");
		else
			st_app_prompt(app, "Input file (PNG, JPEG, .npy, video):", "", open_input_file, NULL);
	} else if (strcmp(n, "next_input") == 0) {
		an->input = n_inputs > 0 ? (an->input + 1) % n_inputs : 0;
		an->playing = false;
	} else if (strcmp(n, "random") == 0) {
		an->playing = false;
		st_analyzer_set_file(an->worker, an->input, NULL);
	} else if (strcmp(n, "play") == 0) {
		if (!current_video(an, &frame)) {
			st_app_message(app, ST_SEVERITY_INFO, "the input shown is not a video");
		} else {
			an->playing = !an->playing;
			an->next_frame = st_now();
		}
	} else if (strcmp(n, "step") == 0 || strcmp(n, "step_back") == 0 || strcmp(n, "seek_forward") == 0 ||
	           strcmp(n, "seek_back") == 0) {
		if (!current_video(an, &frame)) {
			st_app_message(app, ST_SEVERITY_INFO, "the input shown is not a video");
		} else {
			int64_t delta = strcmp(n, "step") == 0 ? 1 : strcmp(n, "step_back") == 0 ? -1
			                : strcmp(n, "seek_forward") == 0 ? 10 : -10;
			an->playing = false;
			show_frame(an, frame + delta);
		}
	} else if (strcmp(n, "cancel") == 0) {
		an->playing = false;
		st_analyzer_cancel(an->worker);
	} else {
		return false;
	}
	return true;
}
