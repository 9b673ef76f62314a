/* Analysis mode's worker: a thread that compiles a private copy of the
 * model with every layer's output kept, and runs it once each time an
 * input changes (a file opened, a video frame stepped), reading the files
 * itself so the UI never waits on them. Results are published under a lock
 * and the UI is woken through a pipe; the UI copies layer outputs out of
 * the plan only while the worker says the run is done, so the two never
 * touch the plan at once. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tui-analysis.h"

/* A request for one input: the file wanted (NULL: random) and the frame. */
typedef struct input_request {
	char *file;
	int64_t frame;
} input_request;

/* What the worker has loaded for one input. */
typedef struct input_state {
	char *file;          /* loaded from; NULL: random */
	st_video *video;
	int64_t frame;       /* the video's frame in tensor */
	st_tensor tensor;
	bool loaded;
} input_state;

struct st_analyzer {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t changed;
	int pipe[2];
	st_an_data data;          /* under lock */

	/* Requests, under lock: asked bumps with each, done is what ran last. */
	bool stop;
	long asked, done;
	input_request *requests;  /* data.n_inputs of them, once compiled */
	/* Runtime option changes waiting for the next run, in order. */
	struct option_change {
		int row;
		char *param, *value;
	} *changes;
	int n_changes;
	volatile sig_atomic_t cancel;

	/* The worker's alone. */
	st_runner_setup setup;
	st_plan *plan;
	input_state *inputs;
};

static void
wake(st_analyzer *a)
{
	ssize_t n = write(a->pipe[1], "!", 1);
	(void)n; /* a full pipe already holds a wake-up */
}

static void
set_phase(st_analyzer *a, st_an_phase phase, const char *message)
{
	pthread_mutex_lock(&a->lock);
	a->data.phase = phase;
	st_dash_set_text(&a->data.message, message);
	pthread_mutex_unlock(&a->lock);
	wake(a);
}

/* ---- pictures ---- */

float *
st_an_picture_of(const float *data, const st_shape *shape, int *height, int *width, char *how, size_t how_size)
{
	if (shape->rank < 1)
		return NULL;
	int64_t h = shape->rank >= 2 ? shape->dims[shape->rank - 2] : 1;
	int64_t w = shape->dims[shape->rank - 1];
	int64_t c = shape->rank >= 3 ? shape->dims[shape->rank - 3] : 1;
	if (h <= 0 || w <= 0 || c <= 0 || h > 16384 || w > 16384)
		return NULL;
	int shown = c == 3 ? 3 : 1;
	size_t plane = (size_t)h * (size_t)w;
	/* One range over the channels shown, so colours keep their balance. */
	float lo = INFINITY, hi = -INFINITY;
	for (int k = 0; k < shown; k++) {
		for (size_t i = 0; i < plane; i++) {
			float v = data[(size_t)k * plane + i];
			if (isfinite(v)) {
				lo = v < lo ? v : lo;
				hi = v > hi ? v : hi;
			}
		}
	}
	float span = hi > lo ? hi - lo : 1;
	if (!(lo <= hi))
		lo = 0;
	float *planes = st_xmalloc(sizeof *planes * plane * 3);
	for (int k = 0; k < 3; k++) {
		const float *src = data + (size_t)(shown == 3 ? k : 0) * plane;
		for (size_t i = 0; i < plane; i++)
			planes[(size_t)k * plane + i] = isfinite(src[i]) ? (src[i] - lo) / span : 0;
	}
	*height = (int)h;
	*width = (int)w;
	snprintf(how, how_size, "%s", c == 1 ? "grey" : c == 3 ? "channels as RGB" : "channel 0 as grey");
	return planes;
}

/* An image's pixels as three planes from 0 to 1; caller frees. */
static float *
planes_of_image(const st_image *img)
{
	size_t n = (size_t)img->width * (size_t)img->height;
	float *p = st_xmalloc(sizeof *p * n * 3);
	for (size_t i = 0; i < n; i++) {
		const uint8_t *px = img->pixels + i * (size_t)img->channels;
		bool colour = img->channels >= 3;
		for (int k = 0; k < 3; k++)
			p[(size_t)k * n + i] = (float)px[colour ? k : 0] / 255.0f;
	}
	return p;
}

static const char *
base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

/* "×1/255", "×0.5 −0.5 ÷0.25": the image conversion in a few symbols. */
static void
conversion_text(const st_layer *l, const st_image *img, const st_shape *want, char *out, size_t size)
{
	double scale;
	const double *mean, *std;
	int n_mean, n_std;
	out[0] = '\0';
	if (st_input_image_params(l, &scale, &mean, &n_mean, &std, &n_std) != 0)
		return;
	int n = 0;
	const st_layer_desc *d = l->type->desc;
	int ir = st_params_find(d->params, d->n_params, "image_resize");
	if (ir >= 0 && l->params.values[ir].i > 0 && (img->width != want->dims[3] || img->height != want->dims[2]))
		n = snprintf(out, size, " %s to %lldx%lld", l->params.values[ir].i == 2 ? "cropped" : "stretched",
		             (long long)want->dims[3], (long long)want->dims[2]);
	n += fabs(scale * 255.0 - 1.0) < 1e-6 ? snprintf(out + n, size - (size_t)n, " ×1/255")
	                                      : snprintf(out + n, size - (size_t)n, " ×%g", scale);
	for (int i = 0; i < n_mean && n > 0 && (size_t)n < size; i++) {
		if (mean[i] != 0) {
			n += snprintf(out + n, size - (size_t)n, " −mean %g%s", mean[0], n_mean > 1 ? "…" : "");
			break;
		}
	}
	for (int i = 0; i < n_std && n > 0 && (size_t)n < size; i++) {
		if (std[i] != 1) {
			snprintf(out + n, size - (size_t)n, " ÷std %g%s", std[0], n_std > 1 ? "…" : "");
			break;
		}
	}
}

/* ---- loading inputs ---- */

static void
close_input(input_state *in)
{
	free(in->file);
	in->file = NULL;
	if (in->video != NULL)
		st_video_close(in->video);
	in->video = NULL;
	free(in->tensor.data);
	memset(&in->tensor, 0, sizeof in->tensor);
	in->loaded = false;
}

/* What loading one input gives the UI. */
typedef struct loaded {
	char *description;
	bool failed;
	float *planes;
	int height, width;
	int64_t frame, frames;
	double fps;
	st_input_kind kind;
} loaded;

/* Loads input i as req says into a->inputs[i] and describes it in out.
 * Returns 0, or -1 (out->description says why). */
static int
load_input(st_analyzer *a, int i, const input_request *req, loaded *out)
{
	input_state *in = &a->inputs[i];
	const st_shape *want = st_plan_input_shape(a->plan, i);
	const st_layer *l = st_graph_find(a->setup.graph, st_plan_input_name(a->plan, i));
	char shape[64], err[512];
	st_shape_format(want, shape, sizeof shape);
	memset(out, 0, sizeof *out);
	out->frames = -1;
	bool same_file = in->loaded && ((req->file == NULL && in->file == NULL) ||
	                                (req->file != NULL && in->file != NULL && strcmp(req->file, in->file) == 0));
	if (same_file && in->video == NULL)
		return 1; /* nothing to do */
	if (!same_file) {
		close_input(in);
		in->file = req->file ? st_xstrdup(req->file) : NULL;
	}
	free(in->tensor.data);
	memset(&in->tensor, 0, sizeof in->tensor);
	in->loaded = true;
	if (req->file == NULL) {
		uint64_t seed = 1000003u * (uint64_t)(i + 1);
		st_tensor_random(want, seed, &in->tensor);
		char how[64] = "";
		if (want->dtype == ST_DTYPE_FLOAT32)
			out->planes = st_an_picture_of(in->tensor.data, want, &out->height, &out->width, how, sizeof how);
		out->description = st_xasprintf("no file: random data, seed %llu → %s%s%s", (unsigned long long)seed, shape,
		                                how[0] ? ", shown " : "", how);
		out->kind = ST_INPUT_NPY;
		return 0;
	}
	out->kind = st_input_kind_of(req->file);
	if (out->kind == ST_INPUT_NPY) {
		if (st_input_from_npy(req->file, want, &in->tensor, err, sizeof err) != 0)
			goto failed;
		/* The picture from the array as float32; the network gets it as it is. */
		st_npy npy;
		char how[64] = "";
		if (st_npy_read(req->file, &npy, err, sizeof err) == 0) {
			if (st_npy_convert(&npy, ST_DTYPE_FLOAT32, err, sizeof err) == 0) {
				st_shape s = { .rank = npy.rank, .dtype = ST_DTYPE_FLOAT32 };
				memcpy(s.dims, npy.dims, sizeof npy.dims[0] * (size_t)npy.rank);
				out->planes = st_an_picture_of(npy.data, &s, &out->height, &out->width, how, sizeof how);
			}
			st_npy_free(&npy);
		}
		char got[64];
		st_shape_format(&in->tensor.shape, got, sizeof got);
		out->description = st_xasprintf("%s %s → passed as it is%s%s", base_name(req->file), got,
		                                how[0] ? ", shown " : "", how);
		return 0;
	}
	st_image img;
	memset(&img, 0, sizeof img);
	if (out->kind == ST_INPUT_VIDEO) {
		if (in->video == NULL && (in->video = st_video_open(req->file, err, sizeof err)) == NULL)
			goto failed;
		int64_t frames = st_video_frame_count(in->video);
		int64_t want_frame = req->frame < 0 ? 0 : req->frame;
		if (frames > 0 && want_frame >= frames)
			want_frame = frames - 1;
		int rc;
		char why[384];
		if (want_frame == st_video_position(in->video) + 1)
			rc = st_video_next(in->video, &img, why, sizeof why);
		else
			rc = st_video_seek(in->video, want_frame, &img, why, sizeof why);
		if (rc == 1)
			snprintf(err, sizeof err, "%s: the video ends before frame %lld", req->file, (long long)want_frame);
		else if (rc != 0)
			snprintf(err, sizeof err, "%s: %s", req->file, why);
		if (rc != 0)
			goto failed;
		in->frame = st_video_position(in->video);
		out->frame = in->frame;
		out->frames = frames;
		out->fps = st_video_fps(in->video);
	} else if (st_image_read(req->file, &img, err, sizeof err) != 0) {
		goto failed;
	}
	int rc = st_input_from_image(l, want, &img, &in->tensor, err, sizeof err);
	if (rc == 0) {
		static const char *const kinds[] = { "", "grey", "grey+alpha", "RGB", "RGBA" };
		char conv[128];
		conversion_text(l, &img, want, conv, sizeof conv);
		out->planes = planes_of_image(&img);
		out->height = img.height;
		out->width = img.width;
		out->description = st_xasprintf("%s %dx%d %s → %s%s", base_name(req->file), img.width, img.height,
		                                kinds[img.channels >= 1 && img.channels <= 4 ? img.channels : 0], shape,
		                                conv);
	}
	st_image_free(&img);
	if (rc != 0)
		goto failed;
	return 0;
failed:
	free(in->tensor.data);
	memset(&in->tensor, 0, sizeof in->tensor);
	in->loaded = false; /* tried again with the next request */
	out->description = st_xstrdup(err);
	out->failed = true;
	return -1;
}

/* ---- running ---- */

static int
row_of(const st_an_data *d, const st_layer *l)
{
	for (int r = 0; r < d->n_rows; r++)
		if (d->rows[r].layer == l)
			return r;
	return -1;
}

/* Under lock: row r's runtime options and their values in the plan. */
static void
publish_options(st_analyzer *a, st_an_row *row)
{
	const st_layer *l = row->layer;
	const st_value *values = st_plan_layer_params(a->plan, l);
	if (values == NULL || l->type == NULL)
		return;
	const st_layer_desc *desc = l->type->desc;
	if (row->options == NULL) {
		for (int k = 0; k < desc->n_params; k++)
			row->n_options += st_param_runtime_name(&desc->params[k]) != NULL;
		if (row->n_options == 0)
			return;
		row->options = st_xcalloc((size_t)row->n_options, sizeof *row->options);
		int o = 0;
		for (int k = 0; k < desc->n_params; k++) {
			if (st_param_runtime_name(&desc->params[k]) != NULL)
				row->options[o++].desc = &desc->params[k];
		}
	}
	for (int o = 0; o < row->n_options; o++) {
		int k = (int)(row->options[o].desc - desc->params);
		st_buf text;
		st_buf_init(&text);
		st_value_to_text(row->options[o].desc, &values[k], &text);
		snprintf(row->options[o].value, sizeof row->options[o].value, "%s", text.data ? text.data : "");
		st_buf_free(&text);
	}
}

/* Under lock: the rows and inputs of the plan just compiled. */
static void
publish_plan(st_analyzer *a, const char *note)
{
	st_an_data *d = &a->data;
	int n = st_plan_step_count(a->plan);
	d->rows = st_xcalloc((size_t)(n ? n : 1), sizeof *d->rows);
	for (int i = 0; i < n; i++) {
		st_step_info info;
		st_plan_step(a->plan, i, &info);
		if (info.kind == ST_STEP_CONVERT || row_of(d, info.layer) >= 0)
			continue;
		st_an_row *row = &d->rows[d->n_rows++];
		row->name = st_xstrdup(info.layer->name);
		row->type = st_xstrdup(info.kind == ST_STEP_FEED ? "input" : info.layer->type_name);
		row->layer = info.layer;
		row->ms = -1;
		st_shape ws;
		row->has_weights = st_plan_layer_weight(a->plan, info.layer, "weights", &ws) != NULL;
	}
	/* Layers without a step of their own (outputs) follow, in the graph's order. */
	const st_graph *g = a->setup.graph;
	d->rows = st_xreallocarray(d->rows, (size_t)(d->n_rows + g->n_layers + 1), sizeof *d->rows);
	for (int i = 0; i < g->n_layers; i++) {
		if (row_of(d, g->layers[i]) >= 0)
			continue;
		st_an_row *row = &d->rows[d->n_rows++];
		memset(row, 0, sizeof *row);
		row->name = st_xstrdup(g->layers[i]->name);
		row->type = st_xstrdup(g->layers[i]->type_name);
		row->layer = g->layers[i];
		row->ms = -1;
	}
	for (int r = 0; r < d->n_rows; r++) {
		const st_layer *l = d->rows[r].layer;
		d->rows[r].inputs = st_xcalloc((size_t)(l->n_inputs ? l->n_inputs : 1), sizeof *d->rows[r].inputs);
		for (int k = 0; k < l->n_inputs; k++) {
			int from = l->inputs[k].layer ? row_of(d, l->inputs[k].layer) : -1;
			if (from >= 0)
				d->rows[r].inputs[d->rows[r].n_inputs++] = from;
		}
	}
	d->n_inputs = st_plan_input_count(a->plan);
	d->inputs = st_xcalloc((size_t)(d->n_inputs ? d->n_inputs : 1), sizeof *d->inputs);
	a->requests = st_xcalloc((size_t)(d->n_inputs ? d->n_inputs : 1), sizeof *a->requests);
	for (int i = 0; i < d->n_inputs; i++) {
		d->inputs[i].name = st_xstrdup(st_plan_input_name(a->plan, i));
		d->inputs[i].frames = -1;
	}
	d->format = st_plan_format(a->plan);
	st_dash_set_text(&d->note, note);
	for (int r = 0; r < d->n_rows; r++)
		publish_options(a, &d->rows[r]);
}

/* Under lock: shapes and times of the run just finished. */
static void
publish_run(st_analyzer *a, double seconds)
{
	st_an_data *d = &a->data;
	for (int r = 0; r < d->n_rows; r++) {
		const st_shape *s = st_plan_layer_shape(a->plan, d->rows[r].layer, 0);
		if (s != NULL)
			st_shape_format(s, d->rows[r].shape, sizeof d->rows[r].shape);
		d->rows[r].ms = -1;
		st_severity sev = ST_SEVERITY_INFO;
		const char *status = st_plan_layer_status(a->plan, d->rows[r].layer, &sev);
		snprintf(d->rows[r].status, sizeof d->rows[r].status, "%s", status ? status : "");
		d->rows[r].status_severity = sev;
		publish_options(a, &d->rows[r]); /* triggers are back to false */
	}
	const double *secs = st_plan_step_seconds(a->plan);
	int n = st_plan_step_count(a->plan);
	for (int i = 0; i < n && secs != NULL; i++) {
		st_step_info info;
		st_plan_step(a->plan, i, &info);
		int r = row_of(d, info.layer);
		if (r >= 0 && info.kind != ST_STEP_CONVERT)
			d->rows[r].ms = (d->rows[r].ms < 0 ? 0 : d->rows[r].ms) + secs[i] * 1e3;
	}
	d->seconds = seconds;
	d->runs++;
	d->phase = ST_AN_DONE;
	st_dash_set_text(&d->message, NULL);
}

/* Loads the inputs asked for, sets them and runs; the phase says how it
 * ended. */
static void
run_once(st_analyzer *a, input_request *reqs, int n)
{
	bool failed = false;
	for (int i = 0; i < n; i++) {
		loaded out;
		int rc = load_input(a, i, &reqs[i], &out);
		if (rc == 1)
			continue;
		failed = failed || rc != 0;
		pthread_mutex_lock(&a->lock);
		st_an_input *pub = &a->data.inputs[i];
		st_dash_set_text(&pub->file, reqs[i].file);
		free(pub->description);
		pub->description = out.description;
		pub->failed = out.failed;
		pub->kind = out.kind;
		free(pub->planes);
		pub->planes = out.planes;
		pub->height = out.height;
		pub->width = out.width;
		pub->frame = out.frame;
		pub->frames = out.frames;
		pub->fps = out.fps;
		pthread_mutex_unlock(&a->lock);
	}
	if (failed) {
		set_phase(a, ST_AN_FAILED, "an input could not be read: see the Model Input window");
		return;
	}
	st_diag d;
	st_diag_init(&d);
	for (int i = 0; i < n; i++) {
		if (st_plan_set_input(a->plan, i, &a->inputs[i].tensor, &d) != 0) {
			char *why = st_runner_diag_text(&d, "an input could not be set");
			st_diag_free(&d);
			set_phase(a, ST_AN_FAILED, why);
			free(why);
			return;
		}
	}
	st_diag_free(&d);
	st_diag_init(&d);
	double t0 = st_now();
	int rc = st_plan_run(a->plan, &d);
	double t1 = st_now();
	if (rc == 0) {
		pthread_mutex_lock(&a->lock);
		publish_run(a, t1 - t0);
		pthread_mutex_unlock(&a->lock);
		wake(a);
	} else if (rc == 1) {
		set_phase(a, ST_AN_CANCELLED, "cancelled");
	} else {
		char *why = st_runner_diag_text(&d, "the run failed");
		set_phase(a, ST_AN_FAILED, why);
		free(why);
	}
	st_diag_free(&d);
}

/* Sets the runtime options asked for on the plan (the worker's, while the
 * phase is RUNNING) and frees the list; the last refusal is published. */
static void
apply_changes(st_analyzer *a, struct option_change *changes, int n)
{
	char *refused = NULL;
	for (int i = 0; i < n; i++) {
		char err[320];
		const st_layer *l = NULL;
		pthread_mutex_lock(&a->lock);
		if (changes[i].row >= 0 && changes[i].row < a->data.n_rows)
			l = a->data.rows[changes[i].row].layer;
		pthread_mutex_unlock(&a->lock);
		if (l == NULL) {
			free(refused);
			refused = st_xstrdup("that layer is not in the plan");
		} else if (st_plan_set_runtime(a->plan, l, changes[i].param, changes[i].value, err, sizeof err) != 0) {
			free(refused);
			refused = st_xasprintf("%s: %s", l->name, err);
		}
		free(changes[i].param);
		free(changes[i].value);
	}
	free(changes);
	pthread_mutex_lock(&a->lock);
	if (n > 0) {
		free(a->data.option_error);
		a->data.option_error = refused;
		refused = NULL;
		for (int r = 0; r < a->data.n_rows; r++)
			publish_options(a, &a->data.rows[r]);
	}
	pthread_mutex_unlock(&a->lock);
	free(refused);
}

/* Compiles and binds; on failure the phase says why. Returns 0 or -1. */
static int
build(st_analyzer *a)
{
	st_graph_check(a->setup.graph);
	if (a->setup.graph->errors > 0 || a->setup.graph->n_layers == 0) {
		char *why = a->setup.graph->n_layers == 0 ? st_xstrdup("the model is empty: add layers first")
		                                          : st_runner_type_errors(a->setup.graph);
		set_phase(a, ST_AN_FAILED, why);
		free(why);
		return -1;
	}
	set_phase(a, ST_AN_STARTING, "compiling the plan");
	st_diag d;
	st_diag_init(&d);
	st_plan_options opt = { .format = -1, .threads = a->setup.threads, .backend = "cpu", .cancel = &a->cancel,
		                .keep_outputs = true };
	a->plan = st_plan_compile(a->setup.graph, &opt, &d);
	if (a->plan == NULL) {
		char *why = st_runner_diag_text(&d, "the plan could not be compiled");
		st_diag_free(&d);
		set_phase(a, ST_AN_FAILED, why);
		free(why);
		return -1;
	}
	st_diag_free(&d);
	set_phase(a, ST_AN_STARTING, "binding weights");
	char *note = NULL, *why = NULL;
	if (st_runner_bind_weights(a->plan, &a->setup, &note, &why) != 0) {
		set_phase(a, ST_AN_FAILED, why);
		free(why);
		free(note);
		return -1;
	}
	st_plan_set_profiling(a->plan, true);
	a->inputs = st_xcalloc((size_t)(st_plan_input_count(a->plan) + 1), sizeof *a->inputs);
	pthread_mutex_lock(&a->lock);
	publish_plan(a, note);
	a->asked++; /* the first run, on random data */
	pthread_mutex_unlock(&a->lock);
	free(note);
	return 0;
}

static void *
worker(void *arg)
{
	st_analyzer *a = arg;
	bool ok = build(a) == 0;
	for (;;) {
		pthread_mutex_lock(&a->lock);
		while (!a->stop && (!ok || a->asked == a->done))
			pthread_cond_wait(&a->changed, &a->lock);
		if (a->stop) {
			pthread_mutex_unlock(&a->lock);
			break;
		}
		/* The requests as they stand; later ones wait for the next run. */
		long asked = a->asked;
		int n = a->data.n_inputs;
		input_request *reqs = st_xcalloc((size_t)(n ? n : 1), sizeof *reqs);
		for (int i = 0; i < n; i++) {
			reqs[i].file = a->requests[i].file ? st_xstrdup(a->requests[i].file) : NULL;
			reqs[i].frame = a->requests[i].frame;
		}
		struct option_change *changes = a->changes;
		int n_changes = a->n_changes;
		a->changes = NULL;
		a->n_changes = 0;
		a->cancel = 0;
		/* From here the UI leaves the plan alone. */
		a->data.phase = ST_AN_RUNNING;
		st_dash_set_text(&a->data.message, NULL);
		pthread_mutex_unlock(&a->lock);
		wake(a);
		apply_changes(a, changes, n_changes);
		run_once(a, reqs, n);
		for (int i = 0; i < n; i++)
			free(reqs[i].file);
		free(reqs);
		pthread_mutex_lock(&a->lock);
		a->done = asked;
		pthread_mutex_unlock(&a->lock);
	}
	return NULL;
}

/* ---- the UI's side ---- */

static void
free_data(st_an_data *d)
{
	for (int r = 0; r < d->n_rows; r++) {
		free(d->rows[r].name);
		free(d->rows[r].type);
		free(d->rows[r].inputs);
		free(d->rows[r].options);
	}
	free(d->rows);
	for (int i = 0; i < d->n_inputs; i++) {
		free(d->inputs[i].name);
		free(d->inputs[i].file);
		free(d->inputs[i].description);
		free(d->inputs[i].planes);
	}
	free(d->inputs);
	free(d->message);
	free(d->note);
	free(d->option_error);
	memset(d, 0, sizeof *d);
}

static void
free_analyzer(st_analyzer *a)
{
	int n = a->data.n_inputs;
	for (int i = 0; a->requests != NULL && i < n; i++)
		free(a->requests[i].file);
	free(a->requests);
	for (int i = 0; i < a->n_changes; i++) {
		free(a->changes[i].param);
		free(a->changes[i].value);
	}
	free(a->changes);
	for (int i = 0; a->inputs != NULL && i < n; i++)
		close_input(&a->inputs[i]);
	free(a->inputs);
	st_plan_free(a->plan);
	st_runner_setup_free(&a->setup);
	free_data(&a->data);
	pthread_cond_destroy(&a->changed);
	pthread_mutex_destroy(&a->lock);
	if (a->pipe[0] >= 0)
		close(a->pipe[0]);
	if (a->pipe[1] >= 0)
		close(a->pipe[1]);
	free(a);
}

st_analyzer *
st_analyzer_start(st_runner_setup *setup, char *err, size_t err_size)
{
	st_analyzer *a = st_xcalloc(1, sizeof *a);
	a->setup = *setup;
	memset(setup, 0, sizeof *setup);
	pthread_mutex_init(&a->lock, NULL);
	pthread_cond_init(&a->changed, NULL);
	int rc = 0;
	if (pipe(a->pipe) != 0) {
		rc = errno;
		a->pipe[0] = a->pipe[1] = -1;
	} else {
		for (int i = 0; i < 2; i++) {
			fcntl(a->pipe[i], F_SETFL, O_NONBLOCK);
			fcntl(a->pipe[i], F_SETFD, FD_CLOEXEC);
		}
		/* The worker leaves signals to the UI thread, whose poll they wake. */
		sigset_t all, old;
		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, &old);
		rc = pthread_create(&a->thread, NULL, worker, a);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	if (rc != 0) {
		snprintf(err, err_size, "the analysis worker cannot start: %s", strerror(rc));
		free_analyzer(a);
		return NULL;
	}
	return a;
}

void
st_analyzer_stop(st_analyzer *a)
{
	if (a == NULL)
		return;
	pthread_mutex_lock(&a->lock);
	a->stop = true;
	a->cancel = 1;
	pthread_cond_broadcast(&a->changed);
	pthread_mutex_unlock(&a->lock);
	pthread_join(a->thread, NULL);
	free_analyzer(a);
}

int
st_analyzer_fd(const st_analyzer *a)
{
	return a->pipe[0];
}

void
st_analyzer_drain(st_analyzer *a)
{
	char buf[64];
	while (read(a->pipe[0], buf, sizeof buf) > 0)
		;
}

const st_an_data *
st_analyzer_lock(st_analyzer *a)
{
	pthread_mutex_lock(&a->lock);
	return &a->data;
}

void
st_analyzer_unlock(st_analyzer *a)
{
	pthread_mutex_unlock(&a->lock);
}

void
st_analyzer_set_file(st_analyzer *a, int input, const char *path)
{
	pthread_mutex_lock(&a->lock);
	if (input >= 0 && input < a->data.n_inputs && a->requests != NULL) {
		st_dash_set_text(&a->requests[input].file, path);
		a->requests[input].frame = 0;
		a->asked++;
		pthread_cond_broadcast(&a->changed);
	}
	pthread_mutex_unlock(&a->lock);
}

void
st_analyzer_set_frame(st_analyzer *a, int input, int64_t frame)
{
	pthread_mutex_lock(&a->lock);
	if (input >= 0 && input < a->data.n_inputs && a->requests != NULL) {
		int64_t frames = a->data.inputs[input].frames;
		frame = frame < 0 ? 0 : frame;
		if (frames > 0 && frame >= frames)
			frame = frames - 1;
		a->requests[input].frame = frame;
		a->asked++;
		pthread_cond_broadcast(&a->changed);
	}
	pthread_mutex_unlock(&a->lock);
}

void
st_analyzer_set_runtime(st_analyzer *a, int row, const char *param, const char *value)
{
	pthread_mutex_lock(&a->lock);
	a->changes = st_xreallocarray(a->changes, (size_t)a->n_changes + 1, sizeof *a->changes);
	a->changes[a->n_changes++] = (struct option_change){ row, st_xstrdup(param), st_xstrdup(value) };
	a->asked++;
	pthread_cond_broadcast(&a->changed);
	pthread_mutex_unlock(&a->lock);
}

void
st_analyzer_cancel(st_analyzer *a)
{
	pthread_mutex_lock(&a->lock);
	a->cancel = 1;
	pthread_mutex_unlock(&a->lock);
}

int
st_analyzer_tensor(st_analyzer *a, int row, bool weights, float **data, st_shape *shape, char *err,
                   size_t err_size)
{
	*data = NULL;
	int rc = -1;
	pthread_mutex_lock(&a->lock);
	const st_an_data *d = &a->data;
	if (row < 0 || row >= d->n_rows) {
		snprintf(err, err_size, "no layer");
	} else if (d->phase != ST_AN_DONE) {
		snprintf(err, err_size, "%s", d->phase == ST_AN_RUNNING || d->phase == ST_AN_STARTING
		                                  ? "running…"
		                                  : "no finished run: see the status line");
	} else if (weights) {
		const float *w = st_plan_layer_weight(a->plan, d->rows[row].layer, "weights", shape);
		if (w == NULL) {
			snprintf(err, err_size, "%s has no weights", d->rows[row].name);
		} else {
			int64_t n = st_shape_elements(shape);
			*data = st_xmalloc(sizeof **data * (size_t)(n > 0 ? n : 1));
			memcpy(*data, w, sizeof **data * (size_t)n);
			rc = 0;
		}
	} else {
		const st_shape *s = st_plan_layer_shape(a->plan, d->rows[row].layer, 0);
		if (s == NULL || s->dtype != ST_DTYPE_FLOAT32) {
			snprintf(err, err_size, "%s has no float output to show", d->rows[row].name);
		} else {
			*shape = *s;
			int64_t n = st_shape_elements(s);
			*data = st_xmalloc(sizeof **data * (size_t)(n > 0 ? n : 1));
			if (st_plan_get_layer_output(a->plan, d->rows[row].layer, 0, *data) != 0) {
				free(*data);
				*data = NULL;
				snprintf(err, err_size, "the output of %s is not kept", d->rows[row].name);
			} else {
				rc = 0;
			}
		}
	}
	pthread_mutex_unlock(&a->lock);
	return rc;
}
