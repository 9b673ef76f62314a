/* Running a plan: weights bound once, inputs copied in (re-planning when
 * their size changes), every step executed, outputs copied out. */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine-internal.h"
#include "k-nchwc.h"
#include "k-tensor.h"

/* ---- conversions between dtypes and layouts ---- */

/* Moves src's elements (logical shape, dtype alike on both sides: float32
 * where either layout is blocked) from layout a at from to layout b at to. */
static void
relayout(const void *from, st_layout a, void *to, st_layout b, const st_shape *shape, const st_exec_ctx *ctx)
{
	if (a == ST_LAYOUT_NCHW16C || b == ST_LAYOUT_NCHW16C) {
		int64_t n = shape->dims[0], c = shape->dims[1], plane = 1;
		for (int i = 2; i < shape->rank; i++)
			plane *= shape->dims[i];
		if (a == ST_LAYOUT_NCHW16C && b == ST_LAYOUT_NCHW)
			k_nchwc_to_nchw(n, c, plane, 1, from, to, ctx);
		else if (a == ST_LAYOUT_NCHW16C)
			k_nchwc_to_nhwc(n, c, plane, from, to, ctx);
		else if (a == ST_LAYOUT_NCHW)
			k_nchwc_from_nchw(n, c, plane, 1, from, to, ctx);
		else
			k_nchwc_from_nhwc(n, c, plane, from, to, ctx);
		return;
	}
	size_t elem = (size_t)st_dtype_size(shape->dtype);
	if (b == ST_LAYOUT_NHWC)
		k_nchw_to_nhwc(from, to, shape, elem, ctx);
	else
		k_nhwc_to_nchw(from, to, shape, elem, ctx);
}

void
convert_tensor(const st_tensor *src, st_tensor *dst, void *tmp, const st_exec_ctx *ctx)
{
	bool same_layout = src->layout == dst->layout || src->shape.rank < 3;
	st_dtype a = src->shape.dtype, b = dst->shape.dtype;
	if (same_layout) {
		k_convert(src->data, a, dst->data, b, st_layout_elements(&src->shape, src->layout));
		return;
	}
	int64_t n = st_shape_elements(&src->shape);
	st_shape logical = src->shape;
	if (a == b) {
		relayout(src->data, src->layout, dst->data, dst->layout, &logical, ctx);
	} else if (src->layout == ST_LAYOUT_NCHW16C || st_dtype_size(a) == 4) {
		/* The layout moves four-byte elements (blocked tensors are
		 * float32), the fast transposes' kind: first (into tmp), then the
		 * dtype. */
		relayout(src->data, src->layout, tmp, dst->layout, &logical, ctx);
		k_convert(tmp, a, dst->data, b, n);
	} else {
		/* The dtype first (into tmp; float16 to float32, whose layout
		 * moves fast), then the layout. */
		k_convert(src->data, a, tmp, b, n);
		logical.dtype = b;
		relayout(tmp, src->layout, dst->data, dst->layout, &logical, ctx);
	}
}

/* ---- weights ---- */

static int
bind_slot_weights(layer_slot *slot, st_weights *dir, bool random, uint64_t seed, st_diag *d)
{
	const st_layer *l = slot->layer;
	int failures = 0;
	for (int w = 0; w < slot->n_weights; w++) {
		const st_weight_desc *wd = &slot->weight_desc[w];
		st_npy_free(&slot->weight_files[w]);
		free(slot->weight_random[w]);
		slot->weight_random[w] = NULL;
		st_tensor *t = &slot->weights[w];
		memset(t, 0, sizeof *t);
		t->shape = wd->shape;
		t->shape.dtype = ST_DTYPE_FLOAT32;
		t->layout = ST_LAYOUT_NCHW;
		if (random) {
			int64_t n = st_shape_elements(&t->shape);
			/* Fan-in: everything but the leading (output) dimension. */
			int64_t fan_in = t->shape.rank > 1 ? n / (t->shape.dims[0] ? t->shape.dims[0] : 1) : 0;
			float *data = st_xmalloc(sizeof *data * (size_t)(n ? n : 1));
			st_weights_random(data, n, fan_in, st_weights_random_seed(l->name, wd->name, seed));
			/* Normalisation statistics need sensible values, not noise. */
			if (strcmp(wd->name, "variance") == 0 || strcmp(wd->name, "scale") == 0) {
				for (int64_t i = 0; i < n; i++)
					data[i] = 1.0f + 0.1f * data[i];
			}
			slot->weight_random[w] = data;
			t->data = data;
			continue;
		}
		if (dir == NULL)
			continue; /* optional, and no folder to look in */
		char err[512];
		int rc = st_weights_load(dir, l->name, wd->name, &t->shape, wd->optional, &slot->weight_files[w],
		                         err, sizeof err);
		if (rc < 0) {
			st_diag_add(d, ST_SEVERITY_ERROR, NULL, 0, 0, "layer '%s': %s", l->name, err);
			failures++;
		} else if (rc == 0) {
			t->data = (void *)slot->weight_files[w].data;
		}
	}
	/* prelu reads an optional per-channel slope beside the layer's weights. */
	slot->slope = NULL;
	if (!random && dir != NULL && l->act.type != NULL && strcmp(l->act.type->desc->name, "prelu") == 0 &&
	    slot->n_outputs > 0 && slot->outputs[0].rank >= 2) {
		st_shape want = { .dtype = ST_DTYPE_FLOAT32, .rank = 1, .dims = { slot->outputs[0].dims[1] } };
		char err[512];
		st_npy_free(&slot->slope_file);
		int rc = st_weights_load(dir, l->name, "prelu_slope", &want, true, &slot->slope_file, err,
		                         sizeof err);
		if (rc < 0) {
			st_diag_add(d, ST_SEVERITY_ERROR, NULL, 0, 0, "layer '%s': %s", l->name, err);
			failures++;
		} else if (rc == 0) {
			slot->slope = slot->slope_file.data;
			slot->slope_count = want.dims[0];
		}
	}
	return failures ? -1 : 0;
}

static int
bind(st_plan *p, const char *dir_path, bool random, uint64_t seed, st_diag *d)
{
	st_weights *dir = NULL;
	if (!random && dir_path != NULL && *dir_path != '\0') {
		char err[512];
		dir = st_weights_open(dir_path, err, sizeof err);
		if (dir == NULL) {
			st_diag_add(d, ST_SEVERITY_ERROR, NULL, 0, 0, "%s", err);
			return -1;
		}
	} else if (!random) {
		/* Without a folder only optional weights (constants' values) can be absent. */
		for (int s = 0; s < p->n_slots; s++) {
			for (int w = 0; w < p->slots[s].n_weights; w++) {
				if (!p->slots[s].weight_desc[w].optional) {
					st_diag_add(d, ST_SEVERITY_ERROR, NULL, 0, 0,
					            "the model has weights but no weights folder: give one (strata run "
					            "--weights DIR, or the network's 'weights' setting) or use random "
					            "weights");
					return -1;
				}
			}
		}
	}
	int failures = 0;
	for (int s = 0; s < p->n_slots; s++) {
		if (bind_slot_weights(&p->slots[s], dir, random, seed, d) != 0)
			failures++;
	}
	st_weights_close(dir);
	if (failures > 0)
		return -1;
	p->weights_bound = true;
	p->weights_generation++;
	return plan_prepare(p, d);
}

int
st_plan_bind_weights(st_plan *p, const char *dir, st_diag *d)
{
	return bind(p, dir, false, 0, d);
}

int
st_plan_bind_random_weights(st_plan *p, uint64_t seed, st_diag *d)
{
	return bind(p, NULL, true, seed, d);
}

/* ---- inputs and outputs ---- */

int
st_plan_input_count(const st_plan *p)
{
	return p->n_inputs;
}

const char *
st_plan_input_name(const st_plan *p, int i)
{
	return p->slots[p->input_slots[i]].layer->name;
}

int
st_plan_input_index(const st_plan *p, const char *name)
{
	for (int i = 0; i < p->n_inputs; i++) {
		if (strcmp(st_plan_input_name(p, i), name) == 0)
			return i;
	}
	return -1;
}

const st_shape *
st_plan_input_shape(const st_plan *p, int i)
{
	return &p->input_shapes[i];
}

int64_t
st_plan_batch(const st_plan *p)
{
	if (p->n_inputs == 0)
		return 1;
	const st_shape *s = &p->input_shapes[0];
	return s->rank > 0 ? s->dims[0] : 1;
}

void
st_tensor_random(const st_shape *shape, uint64_t seed, st_tensor *t)
{
	int64_t n = st_shape_elements(shape);
	memset(t, 0, sizeof *t);
	t->shape = *shape;
	t->shape.dtype = ST_DTYPE_FLOAT32;
	t->layout = ST_LAYOUT_NCHW;
	float *x = st_xmalloc(sizeof *x * (size_t)(n > 0 ? n : 1));
	/* The same generator as random weights, shifted from +-1 to 0..1. */
	st_weights_random(x, n, 0, seed);
	for (int64_t k = 0; k < n; k++)
		x[k] = 0.5f + 0.5f * x[k];
	t->data = x;
}

int
st_plan_set_input(st_plan *p, int i, const st_tensor *t, st_diag *d)
{
	const char *name = st_plan_input_name(p, i);
	if (!p->weights_bound) {
		st_diag_add(d, ST_SEVERITY_ERROR, NULL, 0, 0, "bind weights (or random weights) before setting inputs");
		return -1;
	}
	st_shape want = p->input_shapes[i];
	bool same_dims = want.rank == t->shape.rank;
	for (int k = 0; same_dims && k < want.rank; k++)
		same_dims = want.dims[k] == t->shape.dims[k];
	if (!same_dims) {
		/* A new size: shapes flow again; weights and packed state stay. */
		if (want.rank != t->shape.rank) {
			char a[128], b[128];
			st_shape_format(&want, a, sizeof a);
			st_shape_format(&t->shape, b, sizeof b);
			st_diag_add(d, ST_SEVERITY_ERROR, NULL, 0, 0,
			            "input '%s' takes %s (rank %d); the data given is %s (rank %d)", name, a,
			            want.rank, b, t->shape.rank);
			return -1;
		}
		st_shape old = p->input_shapes[i];
		memcpy(p->input_shapes[i].dims, t->shape.dims, sizeof t->shape.dims);
		if (plan_reshape(p, d) != 0 || plan_build(p, d) != 0) {
			p->input_shapes[i] = old;
			st_diag_add(d, ST_SEVERITY_ERROR, NULL, 0, 0, "input '%s': the model cannot take this size",
			            name);
			/* Back to the size that worked. */
			st_diag scratch;
			st_diag_init(&scratch);
			if (plan_reshape(p, &scratch) == 0)
				plan_build(p, &scratch);
			st_diag_free(&scratch);
			return -1;
		}
	}
	bool int_in = !(t->shape.dtype == ST_DTYPE_FLOAT32 || t->shape.dtype == ST_DTYPE_FLOAT16);
	bool int_want = !(want.dtype == ST_DTYPE_FLOAT32 || want.dtype == ST_DTYPE_FLOAT16);
	if (int_want && !int_in) {
		st_diag_add(d, ST_SEVERITY_ERROR, NULL, 0, 0, "input '%s' takes %s; floating-point data was given",
		            name, st_dtype_name(want.dtype));
		return -1;
	}
	if (p->dev != NULL) {
		if (plan_device_set_input(p, i, t, d) != 0)
			return -1;
		p->inputs_set = true;
		return 0;
	}
	plan_tensor *dst = &p->tensors[p->slots[p->input_slots[i]].out_tensor[0]];
	st_tensor src = *t;
	src.layout = ST_LAYOUT_NCHW;
	convert_tensor(&src, &dst->t, p->scratch, &p->ctx);
	p->inputs_set = true;
	return 0;
}

int
st_plan_output_count(const st_plan *p)
{
	return p->n_outputs;
}

const char *
st_plan_output_name(const st_plan *p, int i)
{
	return p->slots[p->output_slots[i]].layer->name;
}

const st_shape *
st_plan_output_shape(const st_plan *p, int i)
{
	return &p->output_shapes[i];
}

void
st_plan_get_output(const st_plan *p, int i, void *out)
{
	if (p->dev != NULL) {
		plan_device_get_output(p, i, out);
		return;
	}
	const plan_tensor *src = &p->tensors[p->output_tensor[i]];
	st_tensor dst = { .data = out, .shape = p->output_shapes[i], .layout = ST_LAYOUT_NCHW };
	convert_tensor(&src->t, &dst, p->scratch, &p->ctx);
}

/* The slot of layer l, or NULL when l has none in this plan. */
static const layer_slot *
find_slot(const st_plan *p, const st_layer *l)
{
	for (int s = 0; s < p->n_slots; s++) {
		if (p->slots[s].layer == l)
			return &p->slots[s];
	}
	return NULL;
}

const st_shape *
st_plan_layer_shape(const st_plan *p, const st_layer *l, int k)
{
	const layer_slot *slot = find_slot(p, l);
	if (slot == NULL || k < 0 || k >= slot->n_outputs || slot->out_tensor[k] < 0)
		return NULL;
	return &slot->outputs[k];
}

int
st_plan_get_layer_output(const st_plan *p, const st_layer *l, int k, void *out)
{
	const layer_slot *slot = find_slot(p, l);
	if (slot == NULL || k < 0 || k >= slot->n_outputs || slot->out_tensor[k] < 0 || !p->ran)
		return -1;
	const plan_tensor *src = &p->tensors[slot->out_tensor[k]];
	if (!src->pinned)
		return -1;
	st_tensor dst = { .data = out, .shape = slot->outputs[k], .layout = ST_LAYOUT_NCHW };
	if (dst.shape.dtype == ST_DTYPE_FLOAT16)
		dst.shape.dtype = ST_DTYPE_FLOAT32;
	if (p->dev != NULL)
		return plan_device_layer_output(p, src, &dst.shape, out);
	convert_tensor(&src->t, &dst, p->scratch, &p->ctx);
	return 0;
}

const float *
st_plan_layer_weight(const st_plan *p, const st_layer *l, const char *name, st_shape *shape)
{
	const layer_slot *slot = find_slot(p, l);
	if (slot == NULL || !p->weights_bound)
		return NULL;
	for (int w = 0; w < slot->n_weights; w++) {
		if (strcmp(slot->weight_desc[w].name, name) == 0 && slot->weights[w].data != NULL) {
			*shape = slot->weights[w].shape;
			return slot->weights[w].data;
		}
	}
	return NULL;
}

/* ---- running ---- */

bool
plan_triggers(st_plan *p, bool release)
{
	bool any = false;
	for (int s = 0; s < p->n_slots; s++) {
		const st_layer_desc *desc = p->slots[s].layer->type->desc;
		for (int k = 0; k < desc->n_params; k++) {
			if ((desc->params[k].flags & ST_PARAM_TRIGGER) && desc->params[k].kind == ST_PARAM_BOOL &&
			    p->slots[s].params[k].b) {
				any = true;
				if (release) {
					p->slots[s].params[k].b = false;
					p->runtime_generation++;
				}
			}
		}
	}
	return any;
}

int
plan_run_layer(st_plan *p, plan_step *s, st_diag *d)
{
	s->report.failed = false;
	const st_plugin *was = st_plugin_enter(s->slot->impl_plugin);
	int failed = s->slot->impl->run(&s->L, &p->ctx);
	st_plugin_leave(was);
	if (failed == 0)
		return 0;
	st_diag_add(d, ST_SEVERITY_ERROR, NULL, 0, 0, "layer '%s': %s", s->slot->layer->name,
	            s->report.failed ? s->report.text : "its implementation failed");
	return -1;
}

static int run_steps(st_plan *p, st_diag *d);

int
st_plan_run(st_plan *p, st_diag *d)
{
	if (!p->weights_bound) {
		st_diag_add(d, ST_SEVERITY_ERROR, NULL, 0, 0, "bind weights (or random weights) before running");
		return -1;
	}
	if (p->n_inputs > 0 && !p->inputs_set) {
		st_diag_add(d, ST_SEVERITY_ERROR, NULL, 0, 0, "set the inputs before running");
		return -1;
	}
	plan_profile_reserve(p);
	/* Status lines describe one run: the last run's go now. */
	for (int i = 0; i < p->n_steps; i++)
		p->steps[i].report.has_status = false;
	int rc = p->dev != NULL ? plan_device_run(p, d) : run_steps(p, d);
	/* A pressed trigger was seen by this run (or lost with it): release it. */
	plan_triggers(p, true);
	if (rc == 0)
		p->ran = true;
	return rc;
}

static int
run_steps(st_plan *p, st_diag *d)
{
	for (int i = 0; i < p->n_steps; i++) {
		if (p->opt.cancel != NULL && *p->opt.cancel)
			return 1;
		plan_step *s = &p->steps[i];
		/* Counters are read outside the timed part, so that the reads
		 * never add to a step's time. */
		double before[ST_N_COUNTERS];
		if (p->counters != NULL)
			st_counters_read(p->counters, before);
		double t0 = p->profiling ? st_now() : 0;
		switch (s->kind) {
		case ST_STEP_FEED:
			break;
		case ST_STEP_CONVERT:
			convert_tensor(&p->tensors[s->src].t, &p->tensors[s->dst].t, p->scratch, &p->ctx);
			break;
		case ST_STEP_LAYER:
			if (s->elided)
				break;
			if (plan_run_layer(p, s, d) != 0)
				return -1;
			plan_epilogue(p, s);
			break;
		}
		if (p->profiling)
			p->step_seconds[i] = st_now() - t0;
		if (p->counters != NULL) {
			double after[ST_N_COUNTERS];
			bool ok = st_counters_read(p->counters, after) == 0;
			for (int e = 0; e < ST_N_COUNTERS; e++)
				p->step_counters[i * ST_N_COUNTERS + e] =
				    ok && before[e] >= 0 && after[e] >= before[e] ? after[e] - before[e] : -1;
		}
	}
	return 0;
}

/* ---- runtime options and status lines ---- */

/* The slot of layer l, for changing it; NULL when l has none in this plan. */
static layer_slot *
find_slot_mutable(st_plan *p, const st_layer *l)
{
	for (int s = 0; s < p->n_slots; s++) {
		if (p->slots[s].layer == l)
			return &p->slots[s];
	}
	return NULL;
}

int
st_plan_set_runtime(st_plan *p, const st_layer *l, const char *param, const char *value_text, char *err,
                    size_t err_size)
{
	layer_slot *slot = find_slot_mutable(p, l);
	if (slot == NULL) {
		snprintf(err, err_size, "layer '%s' is not part of the compiled plan", l ? l->name : "(null)");
		return -1;
	}
	const st_layer_desc *desc = l->type->desc;
	int k = param ? st_params_find(desc->params, desc->n_params, param) : -1;
	if (k < 0) {
		snprintf(err, err_size, "layer '%s' (%s) has no parameter '%s'", l->name, desc->name,
		         param ? param : "(null)");
		return -1;
	}
	const st_param_desc *pd = &desc->params[k];
	if (!(pd->flags & (ST_PARAM_RUNTIME | ST_PARAM_TRIGGER | ST_PARAM_LABEL))) {
		snprintf(err, err_size,
		         "parameter '%s' of layer '%s' is not a runtime option: changing it needs a new "
		         "type check and plan",
		         param, l->name);
		return -1;
	}
	if (pd->flags & ST_PARAM_LABEL) {
		snprintf(err, err_size, "parameter '%s' of layer '%s' is a label: it is read-only", param, l->name);
		return -1;
	}
	st_value v;
	char why[256];
	if (st_value_from_text(pd, value_text ? value_text : "", &v, why, sizeof why) != 0) {
		snprintf(err, err_size, "parameter '%s' of layer '%s' %s", param, l->name, why);
		return -1;
	}
	/* The plan owns its copies: the old string goes, the new one stays
	 * valid until the next change or st_plan_free. */
	st_value_clear(&slot->params[k]);
	slot->params[k] = v;
	p->runtime_generation++;
	return 0;
}

const st_value *
st_plan_layer_params(const st_plan *p, const st_layer *l)
{
	const layer_slot *slot = find_slot(p, l);
	return slot ? slot->params : NULL;
}

const char *
st_plan_layer_status(const st_plan *p, const st_layer *l, st_severity *severity)
{
	for (int i = 0; i < p->n_steps; i++) {
		const plan_step *s = &p->steps[i];
		if (s->kind != ST_STEP_LAYER || s->slot->layer != l || !s->report.has_status)
			continue;
		if (severity != NULL)
			*severity = s->report.status_severity;
		return s->report.status;
	}
	return NULL;
}
