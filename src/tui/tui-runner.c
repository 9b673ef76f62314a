/* The dashboard's worker: a thread that compiles a private copy of the
 * model, binds weights and random inputs, and runs the plan over and over
 * with profiling, publishing every iteration under a lock and waking the
 * UI through a pipe. It touches nothing of the editing session. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "st-report.h"
#include "tui-dashboard.h"

/* The UI hears of new samples at most this often (seconds); of state
 * changes at once. */
#define WAKE_INTERVAL 0.25
/* A snapshot times about this many seconds of inference, within bounds. */
#define SNAPSHOT_SECONDS 1.0
#define SNAPSHOT_MIN 5
#define SNAPSHOT_MAX 200

struct st_runner {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t changed;   /* a request arrived (for a paused worker) */
	int pipe[2];              /* the worker writes, the UI polls */
	st_dash_data data;        /* under lock */

	/* Requests, under lock. */
	bool stop, paused, snapshot;
	bool settings_changed;
	int threads, format;      /* asked for */
	/* Set with the requests; the engine reads it between layers. */
	volatile sig_atomic_t cancel;

	/* The worker's alone: what to run, and the plan running it. */
	st_runner_setup setup;
	st_plan *plan;
	double last_wake;
};

static void
wake(st_runner *r)
{
	ssize_t n = write(r->pipe[1], "!", 1);
	(void)n; /* a full pipe already holds a wake-up */
}

/* Wakes the UI unless it heard from us very recently. */
static void
wake_throttled(st_runner *r)
{
	double now = st_now();
	if (now - r->last_wake >= WAKE_INTERVAL) {
		r->last_wake = now;
		wake(r);
	}
}

char *
st_runner_diag_text(const st_diag *d, const char *fallback)
{
	if (d->count == 0)
		return st_xstrdup(fallback);
	st_buf b;
	st_buf_init(&b);
	for (int i = 0; i < d->count; i++)
		st_buf_printf(&b, "%s%s", i ? "\n" : "", d->items[i].text);
	return st_buf_take(&b);
}

/* Under lock: a new phase and message, and the UI told. */
static void
set_phase(st_runner *r, st_dash_phase phase, const char *message)
{
	pthread_mutex_lock(&r->lock);
	r->data.phase = phase;
	st_dash_set_text(&r->data.message, message);
	pthread_mutex_unlock(&r->lock);
	wake(r);
}

/* Compiles the plan for threads and format, binds weights (random ones
 * when the model's cannot be bound) and random inputs. Returns 0, or -1
 * with the reason in *why (caller frees). */
static int
build(st_runner *r, int threads, int format, char **why, char **note)
{
	st_diag d;
	st_diag_init(&d);
	st_plan_options opt = { .format = format, .threads = threads, .backend = "cpu", .cancel = &r->cancel };
	set_phase(r, ST_DASH_STARTING, "compiling the plan");
	r->plan = st_plan_compile(r->setup.graph, &opt, &d);
	if (r->plan == NULL) {
		*why = st_runner_diag_text(&d, "the plan could not be compiled");
		st_diag_free(&d);
		return -1;
	}
	st_diag_free(&d);
	set_phase(r, ST_DASH_STARTING, "binding weights");
	if (st_runner_bind_weights(r->plan, &r->setup, note, why) != 0)
		return -1;
	for (int i = 0; i < st_plan_input_count(r->plan); i++) {
		st_tensor t;
		st_tensor_random(st_plan_input_shape(r->plan, i), 1000003u * (uint64_t)(i + 1), &t);
		st_diag_init(&d);
		int rc = st_plan_set_input(r->plan, i, &t, &d);
		free(t.data);
		if (rc != 0) {
			*why = st_runner_diag_text(&d, "an input could not be set");
			st_diag_free(&d);
			return -1;
		}
		st_diag_free(&d);
	}
	st_plan_set_profiling(r->plan, true);
	return 0;
}

/* Under lock: rows and plan facts for the plan just built. */
static void
publish_plan(st_runner *r, const char *note)
{
	int n = st_plan_step_count(r->plan), rows = 0;
	const char **names = st_xcalloc((size_t)(n ? n : 1), sizeof *names);
	const char **types = st_xcalloc((size_t)(n ? n : 1), sizeof *types);
	char **owned = st_xcalloc((size_t)(n ? n : 1), sizeof *owned);
	for (int i = 0; i < n; i++) {
		st_step_info info;
		st_plan_step(r->plan, i, &info);
		if (info.kind == ST_STEP_FEED)
			continue;
		if (info.kind == ST_STEP_CONVERT) {
			owned[rows] = st_xasprintf("%s (convert)", info.layer->name);
			names[rows] = owned[rows];
			types[rows] = "convert";
		} else {
			names[rows] = info.layer->name;
			types[rows] = info.what;
		}
		rows++;
	}
	pthread_mutex_lock(&r->lock);
	st_dash_data_set_rows(&r->data, rows, names, types);
	st_ring_clear(&r->data.latency);
	st_ring_clear(&r->data.throughput);
	r->data.compiled = true;
	r->data.threads = st_plan_threads(r->plan);
	r->data.format = st_plan_format(r->plan);
	r->data.backend = "cpu";
	r->data.arena_bytes = st_plan_arena_bytes(r->plan);
	r->data.peak_bytes = st_plan_live_bound(r->plan);
	r->data.batch = st_plan_batch(r->plan);
	st_dash_set_text(&r->data.note, note);
	r->data.phase = r->paused ? ST_DASH_PAUSED : ST_DASH_RUNNING;
	st_dash_set_text(&r->data.message, NULL);
	pthread_mutex_unlock(&r->lock);
	for (int i = 0; i < rows; i++)
		free(owned[i]);
	free(owned);
	free(names);
	free(types);
	wake(r);
}

/* Times the plan without the profiler's clock reads, then profiles it, and
 * writes the report where `strata run` would. Returns the report's path,
 * or NULL with the reason in *why; caller frees either. */
static char *
take_snapshot(st_runner *r, double mean_ms, char **why)
{
	int n = mean_ms > 0 ? (int)(SNAPSHOT_SECONDS * 1e3 / mean_ms) : SNAPSHOT_MIN;
	n = n < SNAPSHOT_MIN ? SNAPSHOT_MIN : n > SNAPSHOT_MAX ? SNAPSHOT_MAX : n;
	st_report rep;
	memset(&rep, 0, sizeof rep);
	time_t now = time(NULL);
	st_report_describe_plan(&rep, r->setup.model ? r->setup.model : "", r->plan, "cpu", now);
	st_diag d;
	st_diag_init(&d);
	st_plan_set_profiling(r->plan, false);
	double *ms = st_xcalloc((size_t)n, sizeof *ms);
	int rc = 0;
	for (int k = 0; k < n && rc == 0; k++) {
		double t0 = st_now();
		rc = st_plan_run(r->plan, &d);
		ms[k] = (st_now() - t0) * 1e3;
	}
	if (rc == 0) {
		rep.latency_samples = st_xmalloc(sizeof *ms * (size_t)n);
		memcpy(rep.latency_samples, ms, sizeof *ms * (size_t)n);
		rep.n_latency_samples = n;
		st_report_times_from(&rep.latency, ms, n);
		rep.iterations = n;
		rep.throughput = rep.latency.mean > 0 ? (double)rep.batch / (rep.latency.mean / 1e3) : 0;
		rc = st_plan_profile(r->plan, n, &rep, &d);
	}
	free(ms);
	st_plan_set_profiling(r->plan, true);
	char *path = NULL;
	if (rc == 1) {
		*why = st_xstrdup("the snapshot was interrupted");
	} else if (rc != 0) {
		*why = st_runner_diag_text(&d, "the run failed");
	} else {
		char *dir = st_report_default_dir(r->setup.model);
		char err[512];
		if (st_report_save_in(&rep, dir, now, &path, err, sizeof err) != 0)
			*why = st_xstrdup(err);
		free(dir);
	}
	st_diag_free(&d);
	st_report_free(&rep);
	return path;
}

/* Waits, under lock, until the user asks for something. */
static void
wait_for_request(st_runner *r)
{
	while (!r->stop && !r->settings_changed && !r->snapshot)
		pthread_cond_wait(&r->changed, &r->lock);
}

char *
st_runner_type_errors(const st_graph *g)
{
	int n;
	st_graph_message *m = st_graph_messages(g, &n);
	st_buf b;
	st_buf_init(&b);
	st_buf_printf(&b, "%d type error%s; fix %s in the editor:", g->errors, g->errors == 1 ? "" : "s",
	              g->errors == 1 ? "it" : "them");
	for (int i = 0; i < n; i++) {
		if (m[i].severity == ST_SEVERITY_ERROR)
			st_buf_printf(&b, "\n%s: %s", m[i].layer ? m[i].layer->name : "network", m[i].text);
	}
	free(m);
	return st_buf_take(&b);
}

/* Runs the plan until the user stops the dashboard (returns true) or
 * changes the settings (false, with the new ones in *threads, *format). */
static bool
run_plan(st_runner *r, int *threads, int *format)
{
	double last_end = 0;
	bool rebuild = false, leave = false;
	while (!rebuild && !leave) {
		pthread_mutex_lock(&r->lock);
		if (r->paused && !r->stop && !r->settings_changed && !r->snapshot) {
			r->data.phase = ST_DASH_PAUSED;
			wake(r);
			while (r->paused && !r->stop && !r->settings_changed && !r->snapshot)
				pthread_cond_wait(&r->changed, &r->lock);
			last_end = 0; /* the pause is no part of the throughput */
		}
		leave = r->stop;
		if (r->settings_changed && !leave) {
			rebuild = true;
			*threads = r->threads;
			*format = r->format;
			r->settings_changed = false;
		}
		bool snapshot = r->snapshot && !leave && !rebuild;
		r->snapshot = false;
		r->cancel = 0;
		if (!leave && !rebuild)
			r->data.phase = r->paused ? ST_DASH_PAUSED : ST_DASH_RUNNING;
		bool paused = r->paused;
		st_window_stats lat = { 0 };
		if (snapshot) {
			r->data.snapshot_busy = true;
			st_ring_stats(&r->data.latency, &lat);
		}
		pthread_mutex_unlock(&r->lock);
		if (leave || rebuild)
			break;
		if (snapshot) {
			wake(r);
			char *why = NULL;
			char *path = take_snapshot(r, lat.count ? lat.mean : 0, &why);
			pthread_mutex_lock(&r->lock);
			r->data.snapshot_busy = false;
			r->data.snapshot_failed = path == NULL;
			st_dash_set_text(&r->data.snapshot, path ? path : why);
			pthread_mutex_unlock(&r->lock);
			free(path);
			free(why);
			wake(r);
			last_end = 0;
			continue;
		}
		if (paused)
			continue; /* it waits above */
		st_diag d;
		st_diag_init(&d);
		double t0 = st_now();
		int rc = st_plan_run(r->plan, &d);
		double t1 = st_now();
		if (rc == 1) {
			st_diag_free(&d);
			continue; /* cancelled: the requests are looked at above */
		}
		if (rc != 0) {
			char *why = st_runner_diag_text(&d, "the run failed");
			st_diag_free(&d);
			set_phase(r, ST_DASH_FAILED, why);
			free(why);
			pthread_mutex_lock(&r->lock);
			wait_for_request(r);
			leave = r->stop;
			rebuild = r->settings_changed;
			*threads = r->threads;
			*format = r->format;
			r->settings_changed = false;
			r->snapshot = false;
			r->cancel = 0;
			pthread_mutex_unlock(&r->lock);
			break;
		}
		st_diag_free(&d);
		const double *secs = st_plan_step_seconds(r->plan);
		int n = st_plan_step_count(r->plan);
		pthread_mutex_lock(&r->lock);
		double *row_ms = st_xcalloc((size_t)(r->data.n_rows ? r->data.n_rows : 1), sizeof *row_ms);
		int row = 0;
		for (int i = 0; i < n && secs != NULL; i++) {
			st_step_info info;
			st_plan_step(r->plan, i, &info);
			if (info.kind != ST_STEP_FEED && row < r->data.n_rows)
				row_ms[row++] = secs[i] * 1e3;
		}
		st_dash_data_push(&r->data, (t1 - t0) * 1e3, row_ms, last_end > 0 ? t1 - last_end : 0);
		pthread_mutex_unlock(&r->lock);
		free(row_ms);
		last_end = t1;
		wake_throttled(r);
	}
	return leave;
}

static void *
worker(void *arg)
{
	st_runner *r = arg;
	st_graph_check(r->setup.graph);
	if (r->setup.graph->errors > 0 || r->setup.graph->n_layers == 0) {
		char *why = r->setup.graph->n_layers == 0 ? st_xstrdup("the model is empty: add layers first")
		                                          : st_runner_type_errors(r->setup.graph);
		set_phase(r, ST_DASH_FAILED, why);
		free(why);
		pthread_mutex_lock(&r->lock);
		while (!r->stop)
			pthread_cond_wait(&r->changed, &r->lock);
		pthread_mutex_unlock(&r->lock);
		return NULL;
	}
	pthread_mutex_lock(&r->lock);
	int threads = r->threads, format = r->format;
	pthread_mutex_unlock(&r->lock);
	/* The settings of the last plan that ran, to go back to. */
	bool have_good = false;
	int good_threads = threads, good_format = format;
	char *fallback_note = NULL;
	for (;;) {
		char *why = NULL, *note = NULL;
		if (build(r, threads, format, &why, &note) != 0) {
			st_plan_free(r->plan);
			r->plan = NULL;
			pthread_mutex_lock(&r->lock);
			bool stop = r->stop;
			pthread_mutex_unlock(&r->lock);
			if (stop) {
				free(why);
				free(note);
				break;
			}
			if (have_good && (threads != good_threads || format != good_format)) {
				/* Say what failed and run with what worked. */
				free(fallback_note);
				fallback_note = st_xasprintf("%s with %d thread%s failed, back to the last that ran: %s",
				                             format >= 0 ? st_tensor_format_name((st_tensor_format)format)
				                                         : "the network's format",
				                             threads, threads == 1 ? "" : "s", why);
				threads = good_threads;
				format = good_format;
				pthread_mutex_lock(&r->lock);
				r->threads = threads;
				r->format = format;
				pthread_mutex_unlock(&r->lock);
				free(why);
				free(note);
				continue;
			}
			set_phase(r, ST_DASH_FAILED, why);
			free(why);
			free(note);
			/* Another format or thread count may work: wait for one. */
			pthread_mutex_lock(&r->lock);
			r->snapshot = false;
			wait_for_request(r);
			bool leave = r->stop;
			threads = r->threads;
			format = r->format;
			r->settings_changed = false;
			r->cancel = 0;
			pthread_mutex_unlock(&r->lock);
			if (leave)
				break;
			continue;
		}
		have_good = true;
		good_threads = threads;
		good_format = format;
		if (fallback_note != NULL) {
			char *both = note ? st_xasprintf("%s; %s", fallback_note, note) : st_xstrdup(fallback_note);
			free(note);
			note = both;
			free(fallback_note);
			fallback_note = NULL;
		}
		publish_plan(r, note);
		free(note);
		bool leave = run_plan(r, &threads, &format);
		st_plan_free(r->plan);
		r->plan = NULL;
		if (leave)
			break;
	}
	free(fallback_note);
	return NULL;
}

int
st_runner_bind_weights(st_plan *plan, const st_runner_setup *setup, char **note, char **why)
{
	st_diag d;
	st_diag_init(&d);
	*note = NULL;
	if (st_plan_bind_weights(plan, setup->weights_dir, &d) != 0) {
		/* Untrained designs are worth running too: random weights, said so. */
		*note = st_xasprintf("random weights: %s",
		                     setup->weights_note ? setup->weights_note : d.count ? d.items[0].text : "none bound");
		st_diag_free(&d);
		st_diag_init(&d);
		if (st_plan_bind_random_weights(plan, 0, &d) != 0) {
			*why = st_runner_diag_text(&d, "weights could not be bound");
			st_diag_free(&d);
			return -1;
		}
	}
	st_diag_free(&d);
	return 0;
}

int
st_runner_setup_of(st_app *app, st_runner_setup *setup, char *err, size_t err_size)
{
	memset(setup, 0, sizeof *setup);
	/* A private copy of the model: a worker never sees the session's graph. */
	st_graph *g = st_app_graph(app);
	char *text = st_model_serialize(g);
	st_diag d;
	st_diag_init(&d);
	st_graph *copy = st_model_parse(text, strlen(text), app->path ? app->path : "(new model)", app->registry, &d);
	free(text);
	if (copy == NULL) {
		snprintf(err, err_size, "the model cannot be copied: %s", d.count ? d.items[0].text : "?");
		st_diag_free(&d);
		return -1;
	}
	st_diag_free(&d);
	setup->graph = copy;
	setup->format = -1;
	setup->model = app->path ? st_xstrdup(app->path) : NULL;
	/* The weights folder as `strata run` finds it: the network's setting,
	 * inside the model's folder. */
	const char *written = g->network.values[ST_NET_WEIGHTS].s;
	if (written == NULL || written[0] == '\0') {
		setup->weights_note = st_xstrdup("the model names no weights folder");
	} else if (app->path == NULL) {
		setup->weights_note = st_xstrdup("the model is not saved yet, so its weights folder cannot be found");
	} else {
		char why[512];
		setup->weights_dir = st_model_path(app->path, written, false, why, sizeof why);
		if (setup->weights_dir == NULL)
			setup->weights_note = st_xasprintf("the weights folder %s", why);
	}
	return 0;
}

void
st_runner_setup_free(st_runner_setup *setup)
{
	st_graph_free(setup->graph);
	free(setup->model);
	free(setup->weights_dir);
	free(setup->weights_note);
	memset(setup, 0, sizeof *setup);
}

/* Frees what a runner holds once its worker has ended (or never began). */
static void
free_runner(st_runner *r)
{
	st_plan_free(r->plan);
	st_runner_setup_free(&r->setup);
	st_dash_data_free(&r->data);
	pthread_cond_destroy(&r->changed);
	pthread_mutex_destroy(&r->lock);
	if (r->pipe[0] >= 0)
		close(r->pipe[0]);
	if (r->pipe[1] >= 0)
		close(r->pipe[1]);
	free(r);
}

st_runner *
st_runner_start(st_runner_setup *setup, char *err, size_t err_size)
{
	st_runner *r = st_xcalloc(1, sizeof *r);
	r->setup = *setup;
	r->threads = setup->threads;
	r->format = setup->format;
	memset(setup, 0, sizeof *setup);
	st_dash_data_init(&r->data);
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->changed, NULL);
	int rc = 0;
	if (pipe(r->pipe) != 0) {
		rc = errno;
		r->pipe[0] = r->pipe[1] = -1;
	} else {
		for (int i = 0; i < 2; i++) {
			fcntl(r->pipe[i], F_SETFL, O_NONBLOCK);
			fcntl(r->pipe[i], F_SETFD, FD_CLOEXEC);
		}
		/* The worker leaves signals to the UI thread, whose poll they wake. */
		sigset_t all, old;
		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, &old);
		rc = pthread_create(&r->thread, NULL, worker, r);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	if (rc != 0) {
		snprintf(err, err_size, "the dashboard's worker cannot start: %s", strerror(rc));
		free_runner(r);
		return NULL;
	}
	return r;
}

void
st_runner_stop(st_runner *r)
{
	if (r == NULL)
		return;
	pthread_mutex_lock(&r->lock);
	r->stop = true;
	r->cancel = 1;
	pthread_cond_broadcast(&r->changed);
	pthread_mutex_unlock(&r->lock);
	pthread_join(r->thread, NULL);
	free_runner(r);
}

int
st_runner_fd(const st_runner *r)
{
	return r->pipe[0];
}

void
st_runner_drain(st_runner *r)
{
	char buf[64];
	while (read(r->pipe[0], buf, sizeof buf) > 0)
		;
}

const st_dash_data *
st_runner_lock(st_runner *r)
{
	pthread_mutex_lock(&r->lock);
	return &r->data;
}

void
st_runner_unlock(st_runner *r)
{
	pthread_mutex_unlock(&r->lock);
}

/* Under lock: a request, and the worker woken from a pause or a run. */
static void
request(st_runner *r, bool interrupt)
{
	if (interrupt)
		r->cancel = 1;
	pthread_cond_broadcast(&r->changed);
	pthread_mutex_unlock(&r->lock);
}

void
st_runner_pause(st_runner *r, bool paused)
{
	pthread_mutex_lock(&r->lock);
	r->paused = paused;
	request(r, false);
}

bool
st_runner_paused(st_runner *r)
{
	pthread_mutex_lock(&r->lock);
	bool paused = r->paused;
	pthread_mutex_unlock(&r->lock);
	return paused;
}

void
st_runner_set_threads(st_runner *r, int threads)
{
	pthread_mutex_lock(&r->lock);
	r->threads = threads;
	r->settings_changed = true;
	request(r, true);
}

void
st_runner_set_format(st_runner *r, int format)
{
	pthread_mutex_lock(&r->lock);
	r->format = format;
	r->settings_changed = true;
	request(r, true);
}

void
st_runner_settings(st_runner *r, int *threads, int *format)
{
	pthread_mutex_lock(&r->lock);
	*threads = r->threads;
	*format = r->format;
	pthread_mutex_unlock(&r->lock);
}

void
st_runner_snapshot(st_runner *r)
{
	pthread_mutex_lock(&r->lock);
	if (!r->data.snapshot_busy)
		r->snapshot = true;
	request(r, false);
}
