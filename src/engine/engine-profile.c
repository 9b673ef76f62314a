/* Profiling: the time of every step of a run when asked for (a clock read
 * before and after each step, nothing otherwise), and a profiled series of
 * runs turned into a report's layer table: times, FLOPs and bytes moved,
 * achieved rates, and the memory each layer allocates, frees and keeps;
 * the summary and the file name of a report about a run. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "engine-internal.h"
#include "st-report.h"

void
st_plan_set_profiling(st_plan *p, bool on)
{
	p->profiling = on;
	if (!on) {
		free(p->step_seconds);
		p->step_seconds = NULL;
		p->n_step_seconds = 0;
	}
}

const double *
st_plan_step_seconds(const st_plan *p)
{
	return p->profiling && p->n_step_seconds == p->n_steps ? p->step_seconds : NULL;
}

/* Makes room for the step times of the plan as it is now (a re-plan for
 * new input sizes may change the number of steps). */
void
plan_profile_reserve(st_plan *p)
{
	if (!p->profiling || p->n_step_seconds == p->n_steps)
		return;
	free(p->step_seconds);
	p->step_seconds = st_xcalloc((size_t)(p->n_steps ? p->n_steps : 1), sizeof *p->step_seconds);
	p->n_step_seconds = p->n_steps;
}

/* The tensors step i writes, into ids (room for ST_MAX_OUTPUTS + 1). */
static int
step_outputs(const st_plan *p, int i, int *ids)
{
	const plan_step *s = &p->steps[i];
	switch (s->kind) {
	case ST_STEP_LAYER:
		for (int k = 0; k < s->n_out; k++)
			ids[k] = s->out[k];
		return s->n_out;
	case ST_STEP_CONVERT:
		ids[0] = s->dst;
		return 1;
	default:
		ids[0] = s->slot->out_tensor[0];
		return ids[0] >= 0 ? 1 : 0;
	}
}

/* Bytes step i reads and writes, weights included. */
static double
step_bytes(const st_plan *p, int i)
{
	const plan_step *s = &p->steps[i];
	double b = 0;
	if (s->kind == ST_STEP_CONVERT)
		return (double)p->tensors[s->src].bytes + (double)p->tensors[s->dst].bytes;
	if (s->kind != ST_STEP_LAYER || s->elided)
		return 0;
	for (int k = 0; k < s->n_in; k++)
		if (s->in[k] >= 0)
			b += (double)p->tensors[s->in[k]].bytes;
	for (int k = 0; k < s->n_out; k++)
		b += (double)p->tensors[s->out[k]].bytes;
	for (int w = 0; w < s->slot->n_weights; w++)
		b += (double)st_shape_elements(&s->slot->weight_desc[w].shape) * 4.0;
	return b;
}

/* Whether tensor id is the first written of its parent's parts. */
static bool
first_part(const st_plan *p, int id)
{
	const plan_tensor *t = &p->tensors[id];
	for (int j = 0; j < p->n_tensors; j++) {
		const plan_tensor *o = &p->tensors[j];
		if (j != id && o->parent == t->parent && (o->first < t->first || (o->first == t->first && j < id)))
			return false;
	}
	return true;
}

/* Memory of step i: what it allocates (its outputs), frees (tensors read
 * for the last time) and keeps to the end (inputs and outputs of the
 * network), and what is live after it. */
static void
step_memory(const st_plan *p, int i, int64_t *allocated, int64_t *freed, int64_t *persistent, int64_t *live)
{
	int ids[ST_MAX_OUTPUTS + 1];
	int n = step_outputs(p, i, ids);
	*allocated = *freed = *persistent = *live = 0;
	for (int k = 0; k < n; k++) {
		if (ids[k] < 0)
			continue;
		/* A part of a concatenation's output (written in place) allocates
		 * that output where the first part is written, and the output is
		 * no allocation at the concatenation. */
		const plan_tensor *t = &p->tensors[ids[k]];
		if (t->parent >= 0) {
			if (!first_part(p, ids[k]))
				continue;
			t = &p->tensors[t->parent];
		} else if (p->steps[i].kind == ST_STEP_LAYER && p->steps[i].elided) {
			continue;
		}
		*allocated += (int64_t)t->bytes;
		if (t->pinned)
			*persistent += (int64_t)t->bytes;
	}
	for (int t = 0; t < p->n_tensors; t++) {
		const plan_tensor *pt = &p->tensors[t];
		if (pt->pinned || pt->parent >= 0)
			continue;
		if (pt->last == i)
			*freed += (int64_t)pt->bytes;
		if (pt->first <= i && pt->last > i)
			*live += (int64_t)pt->bytes;
	}
	/* Network inputs and outputs, from the step that writes them on. */
	for (int s = 0; s <= i; s++) {
		n = step_outputs(p, s, ids);
		for (int k = 0; k < n; k++)
			if (ids[k] >= 0 && p->tensors[ids[k]].pinned)
				*live += (int64_t)p->tensors[ids[k]].bytes;
	}
}

/* Layers on the longest path from an input to each layer of the graph. */
static int *
distances(const st_plan *p)
{
	const st_graph *g = p->graph;
	int *d = st_xcalloc((size_t)(g->n_layers ? g->n_layers : 1), sizeof *d);
	/* Slots are in execution order: every input comes before its reader. */
	for (int i = 0; i < p->n_slots; i++) {
		const st_layer *l = p->slots[i].layer;
		int best = -1;
		for (int k = 0; k < l->n_inputs; k++) {
			const st_layer *src = l->inputs[k].layer;
			if (src != NULL && src->index >= 0 && d[src->index] > best)
				best = d[src->index];
		}
		d[l->index] = best + 1;
	}
	return d;
}

static char *
shape_text(const st_shape *s)
{
	char buf[160];
	st_shape_format(s, buf, sizeof buf);
	return st_xstrdup(buf);
}

/* Opens the counters on the plan's threads, as STRATA_COUNTERS says: unset
 * or "hardware" the CPU's, "software" the kernel's stand-ins (to test the
 * plumbing), "off" none. Fills r->counters_note with why some or all are
 * missing, or what the software ones count. */
static void
open_counters(st_plan *p, st_report *r)
{
	const char *mode = getenv("STRATA_COUNTERS");
	free(r->counters_note);
	r->counters_note = NULL;
	if (mode != NULL && strcmp(mode, "off") == 0) {
		r->counters_note = st_xstrdup("not measured: STRATA_COUNTERS=off");
		return;
	}
	if (p->dev != NULL) {
		r->counters_note = st_xasprintf("not measured: the steps run on %s (the %s backend)",
		                                p->dev_info.name, p->backend);
		return;
	}
	bool software = mode != NULL && strcmp(mode, "software") == 0;
	int *tids = st_xmalloc(sizeof *tids * (size_t)st_pool_threads(p->pool));
	int n = st_pool_thread_ids(p->pool, tids);
	char why[320];
	p->counters = st_counters_open(tids, n, software, why, sizeof why);
	free(tids);
	if (software && p->counters != NULL)
		r->counters_note = st_xasprintf("software stand-ins (STRATA_COUNTERS=software): \"cycles\" holds "
		                                "task-clock nanoseconds, \"instructions\" context switches and "
		                                "\"cache_misses\" page faults%s%s",
		                                why[0] ? "; " : "", why);
	else if (why[0] != '\0')
		r->counters_note = st_xstrdup(why);
	if (p->counters != NULL)
		p->step_counters = st_xcalloc((size_t)(p->n_steps ? p->n_steps : 1) * ST_N_COUNTERS,
		                              sizeof *p->step_counters);
}

static void
close_counters(st_plan *p)
{
	st_counters_close(p->counters);
	p->counters = NULL;
	free(p->step_counters);
	p->step_counters = NULL;
}

int
st_plan_profile(st_plan *p, int iterations, st_report *r, st_diag *d)
{
	if (iterations < 1)
		iterations = 1;
	bool was = p->profiling;
	st_plan_set_profiling(p, true);
	plan_profile_reserve(p);
	open_counters(p, r);
	int n = p->n_steps;
	double *samples = st_xcalloc((size_t)n * (size_t)iterations + 1, sizeof *samples);
	/* Per step and event: the sum over iterations, or -1 once a read failed. */
	double *counts = st_xcalloc((size_t)n * ST_N_COUNTERS + 1, sizeof *counts);
	int rc = 0;
	for (int it = 0; it < iterations && rc == 0; it++) {
		rc = st_plan_run(p, d);
		if (rc != 0)
			break;
		for (int i = 0; i < n; i++) {
			samples[(size_t)i * (size_t)iterations + (size_t)it] = p->step_seconds[i] * 1e3;
			for (int e = 0; e < ST_N_COUNTERS; e++) {
				double *sum = &counts[i * ST_N_COUNTERS + e];
				double x = p->counters != NULL ? p->step_counters[i * ST_N_COUNTERS + e] : -1;
				*sum = *sum < 0 || x < 0 ? -1 : *sum + x;
			}
		}
	}
	close_counters(p);
	if (!was)
		st_plan_set_profiling(p, false);
	if (rc != 0) {
		free(samples);
		free(counts);
		return rc;
	}
	int *dist = distances(p);
	r->profile_iterations = iterations;
	r->layers = st_xcalloc((size_t)(n ? n : 1), sizeof *r->layers);
	r->n_layers = 0;
	double total = 0;
	int64_t peak = -1;
	const char *peak_layer = NULL;
	bool *ran = st_xcalloc((size_t)(p->graph->n_layers ? p->graph->n_layers : 1), sizeof *ran);
	for (int i = 0; i < n; i++) {
		const plan_step *s = &p->steps[i];
		int64_t alloc, freed, persistent, live;
		step_memory(p, i, &alloc, &freed, &persistent, &live);
		if (live > peak) {
			peak = live;
			peak_layer = s->slot->layer->name;
		}
		if (s->kind == ST_STEP_FEED)
			continue;
		const st_layer *l = s->slot->layer;
		st_report_layer *row = &r->layers[r->n_layers++];
		if (s->kind == ST_STEP_CONVERT) {
			row->name = st_xasprintf("%s (convert)", l->name);
			row->type = st_xstrdup("convert");
			row->output = shape_text(&p->tensors[s->dst].t.shape);
		} else {
			ran[l->index] = true;
			row->name = st_xstrdup(l->name);
			row->type = st_xstrdup(l->type->desc->name);
			row->output = shape_text(&p->tensors[s->out[0]].t.shape);
			row->flops = l->flops;
			/* Layers fused into this step are computed in its time. */
			int mine = (int)(s->slot - p->slots);
			for (int k = 0; k < p->n_slots; k++) {
				if (p->slots[k].fused_into == mine)
					row->flops += p->slots[k].layer->flops;
			}
		}
		row->distance = dist[l->index];
		/* The first iterations in run order for sparklines, before the
		 * statistics sort them. */
		double *mine = &samples[(size_t)i * (size_t)iterations];
		row->n_samples = iterations < ST_REPORT_MAX_SAMPLES ? iterations : ST_REPORT_MAX_SAMPLES;
		row->samples = st_xmalloc(sizeof *row->samples * (size_t)row->n_samples);
		memcpy(row->samples, mine, sizeof *row->samples * (size_t)row->n_samples);
		st_report_times_from(&row->time, mine, iterations);
		row->bytes = step_bytes(p, i);
		double secs = row->time.mean / 1e3;
		row->gflops = secs > 0 ? row->flops / secs / 1e9 : 0;
		row->gbs = secs > 0 ? row->bytes / secs / 1e9 : 0;
		row->mem_allocated = alloc;
		row->mem_freed = freed;
		row->mem_live = live;
		row->mem_persistent = persistent;
		double *c = &counts[i * ST_N_COUNTERS];
		row->cycles = c[ST_COUNTER_CYCLES] < 0 ? -1 : c[ST_COUNTER_CYCLES] / iterations;
		row->instructions = c[ST_COUNTER_INSTRUCTIONS] < 0 ? -1 : c[ST_COUNTER_INSTRUCTIONS] / iterations;
		row->cache_misses = c[ST_COUNTER_CACHE_MISSES] < 0 ? -1 : c[ST_COUNTER_CACHE_MISSES] / iterations;
		total += row->time.mean;
	}
	for (int i = 0; i < r->n_layers; i++)
		r->layers[i].share = total > 0 ? r->layers[i].time.mean / total : 0;
	r->peak_bytes = peak < 0 ? 0 : peak;
	free(r->peak_layer);
	r->peak_layer = peak_layer ? st_xstrdup(peak_layer) : NULL;
	/* Layers without a step of their own: inputs, outputs, fused ones. */
	const st_graph *g = p->graph;
	r->skipped = st_xcalloc((size_t)(g->n_layers ? g->n_layers : 1), sizeof *r->skipped);
	for (int i = 0; i < g->n_layers; i++) {
		if (!ran[i])
			r->skipped[r->n_skipped++] = st_xstrdup(g->layers[i]->name);
	}
	free(ran);
	free(dist);
	free(samples);
	free(counts);
	return 0;
}

/* ---- a report's summary and where it goes ---- */

void
st_report_describe_plan(st_report *r, const char *model, const st_plan *p, const char *backend, time_t when)
{
	const st_graph *g = p->graph;
	const char *name = g->network.values[ST_NET_NAME].s, *version = g->network.values[ST_NET_VERSION].s;
	r->major = ST_REPORT_MAJOR;
	r->minor = ST_REPORT_MINOR;
	r->model = st_xstrdup(model ? model : "");
	r->network = st_xstrdup(name ? name : "");
	r->network_version = st_xstrdup(version ? version : "");
	r->strata_version = st_xstrdup(PACKAGE_VERSION);
	struct tm tm;
	gmtime_r(&when, &tm);
	char date[32];
	strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
	r->date = st_xstrdup(date);
	r->backend = st_xstrdup(backend ? backend : "cpu");
	struct utsname un;
	if (p->dev != NULL)
		r->device = st_xasprintf("%s (compute capability %d.%d, %.1f GiB)", p->dev_info.name,
		                         p->dev_info.arch_major, p->dev_info.arch_minor,
		                         (double)p->dev_info.memory_bytes / (1024.0 * 1024.0 * 1024.0));
	else
		r->device = st_xasprintf("%s, %d cores, %s", uname(&un) == 0 ? un.machine : "unknown",
		                         st_cpu_count(), st_cpu_simd());
	r->format = st_xstrdup(st_tensor_format_name(st_plan_format(p)));
	r->threads = st_plan_threads(p);
	r->batch = st_plan_batch(p);
}

char *
st_report_default_dir(const char *model)
{
	const char *base = "unsaved";
	size_t n = strlen(base);
	if (model != NULL) {
		base = strrchr(model, '/');
		base = base ? base + 1 : model;
		n = strlen(base);
		if (n > 12 && strcmp(base + n - 12, ".strata.json") == 0)
			n -= 12;
		else if (n > 5 && strcmp(base + n - 5, ".json") == 0)
			n -= 5;
	}
	char *state = st_state_dir();
	char *dir = st_xasprintf("%s/reports/%.*s", state, (int)n, base);
	free(state);
	return dir;
}

/* A report file in dir that does not exist yet; caller frees. */
static char *
new_report_file(const char *dir, time_t when)
{
	struct tm tm;
	gmtime_r(&when, &tm);
	char stamp[32];
	strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
	for (int k = 1;; k++) {
		char *path = k == 1 ? st_xasprintf("%s/%s.strata-report.json", dir, stamp)
		                    : st_xasprintf("%s/%s-%d.strata-report.json", dir, stamp, k);
		if (access(path, F_OK) != 0)
			return path;
		free(path);
	}
}

int
st_report_save_in(const st_report *r, const char *dir, time_t when, char **path, char *err, size_t err_size)
{
	*path = NULL;
	if (st_make_dirs(dir, err, err_size) != 0)
		return -1;
	*path = new_report_file(dir, when);
	if (st_report_save(r, *path, err, err_size) != 0) {
		free(*path);
		*path = NULL;
		return -1;
	}
	return 0;
}
