/* Plans on a backend other than the CPU: the arena, scratch and weights in
 * the device's memory, inputs and outputs through page-locked staging,
 * conversions on the device, and runs recorded once and replayed
 * (st_capture_next) while nothing they baked in has changed. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "engine-internal.h"

/* cuDNN and cuBLAS want their operands on 256-byte boundaries. */
#define DEVICE_ALIGN 256

static size_t
round_up(size_t n, size_t a)
{
	return (n + a - 1) / a * a;
}

/* Bytes of t's data as it lies in memory. */
static size_t
data_bytes(const st_tensor *t)
{
	int64_t n = st_layout_elements(&t->shape, t->layout) * st_dtype_size(t->shape.dtype);
	return n > 0 ? (size_t)n : 0;
}

int
plan_device_open(st_plan *p, st_diag *d)
{
	char why[1024];
	if (st_backend_ready(p->backend, &p->dev_info, why, sizeof why) != 0) {
		st_diag_add(d, ST_SEVERITY_ERROR, NULL, 0, 0, "%s", why);
		return -1;
	}
	const st_backend_module *mod = st_backend_load(p->backend, why, sizeof why);
	if (mod == NULL || mod->abi_minor < 1) {
		st_diag_add(d, ST_SEVERITY_ERROR, NULL, 0, 0,
		            "the %s backend's module cannot run plans: it was built for backend ABI %u.%u, and "
		            "running needs %u.1 or later (rebuild it with this strata)",
		            p->backend, mod ? mod->abi : 0, mod ? mod->abi_minor : 0, ST_BACKEND_ABI_VERSION);
		return -1;
	}
	if (mod->open == NULL) {
		st_diag_add(d, ST_SEVERITY_ERROR, NULL, 0, 0,
		            "the %s backend found a device, but its module in this version of strata runs no plans "
		            "(--backend cpu)",
		            p->backend);
		return -1;
	}
	unsigned flags = (p->opt.allow_tf32 ? ST_DEVICE_ALLOW_TF32 : 0) |
	                 (p->opt.measure_algorithms ? ST_DEVICE_MEASURE : 0);
	st_device *dev = mod->open(0, flags, why, sizeof why);
	if (dev == NULL) {
		st_diag_add(d, ST_SEVERITY_ERROR, NULL, 0, 0, "the %s backend cannot open %s: %s", p->backend,
		            p->dev_info.name, why);
		return -1;
	}
	p->mod = mod;
	p->dev = dev;
	if (p->align < DEVICE_ALIGN)
		p->align = DEVICE_ALIGN;
	return 0;
}

void *
plan_device_alloc(st_plan *p, size_t bytes, const char *what, st_diag *d)
{
	void *ptr = p->dev->alloc(p->dev, bytes ? bytes : DEVICE_ALIGN);
	if (ptr == NULL)
		st_diag_add(d, ST_SEVERITY_ERROR, NULL, 0, 0, "%s (%zu bytes) does not fit on %s: %s", what, bytes,
		            p->dev_info.name, p->dev->error(p->dev));
	return ptr;
}

void
plan_device_free(st_plan *p, void *ptr)
{
	if (ptr != NULL)
		p->dev->free_mem(p->dev, ptr);
}

void
plan_device_close(st_plan *p)
{
	if (p->dev == NULL)
		return;
	for (int s = 0; s < p->n_slots; s++) {
		plan_device_free(p, p->slots[s].dev_weight_mem);
		p->slots[s].dev_weight_mem = NULL;
	}
	plan_device_free(p, p->arena);
	plan_device_free(p, p->scratch);
	p->arena = p->scratch = NULL;
	if (p->staging != NULL)
		p->mod->host_free(p->dev, p->staging);
	free(p->host_scratch);
	free(p->stage_offset);
	p->mod->close(p->dev);
	p->dev = NULL;
}

int
plan_device_check(const st_plan *p, st_diag *d)
{
	int failures = 0;
	for (int i = 0; i < p->n_steps; i++) {
		const plan_step *s = &p->steps[i];
		if (s->kind != ST_STEP_LAYER || s->act_slot == NULL || !plan_host_applies_act(p, s->slot))
			continue;
		st_diag_add(d, ST_SEVERITY_ERROR, NULL, 0, 0,
		            "layer '%s': the %s implementation of %s does not apply its activation %s itself, and "
		            "the host applies none on the %s backend (detach the activation, or run on the cpu "
		            "backend)",
		            s->slot->layer->name, p->backend, s->slot->layer->type->desc->name,
		            s->act_slot->layer->act.type->desc->name, p->backend);
		failures++;
	}
	return failures ? -1 : 0;
}

/* Uploads slot's weights bound at the plan's current binding. */
static int
upload_weights(st_plan *p, layer_slot *slot, st_diag *d)
{
	plan_device_free(p, slot->dev_weight_mem);
	slot->dev_weight_mem = NULL;
	size_t total = 0;
	for (int w = 0; w < slot->n_weights; w++) {
		if (slot->weights[w].data != NULL)
			total += round_up(data_bytes(&slot->weights[w]), DEVICE_ALIGN);
	}
	if (total > 0) {
		char what[300];
		snprintf(what, sizeof what, "the weights of layer '%s'", slot->layer->name);
		slot->dev_weight_mem = plan_device_alloc(p, total, what, d);
		if (slot->dev_weight_mem == NULL)
			return -1;
	}
	size_t at = 0;
	for (int w = 0; w < slot->n_weights; w++) {
		slot->dev_weights[w] = slot->weights[w];
		if (slot->weights[w].data == NULL)
			continue;
		size_t bytes = data_bytes(&slot->weights[w]);
		slot->dev_weights[w].data = (char *)slot->dev_weight_mem + at;
		if (p->dev->upload(p->dev, slot->dev_weights[w].data, slot->weights[w].data, bytes) != 0) {
			st_diag_add(d, ST_SEVERITY_ERROR, NULL, 0, 0, "layer '%s': uploading weight '%s': %s",
			            slot->layer->name, slot->weight_desc[w].name, p->dev->error(p->dev));
			return -1;
		}
		at += round_up(bytes, DEVICE_ALIGN);
	}
	return 0;
}

int
plan_device_weights(st_plan *p, st_diag *d)
{
	int failures = 0;
	bool uploaded = false;
	for (int s = 0; s < p->n_slots; s++) {
		layer_slot *slot = &p->slots[s];
		if (slot->slope != NULL) {
			st_diag_add(d, ST_SEVERITY_ERROR, NULL, 0, 0,
			            "layer '%s': prelu with learned per-channel slopes runs on the cpu backend only",
			            slot->layer->name);
			failures++;
			continue;
		}
		if (slot->impl == NULL || slot->dev_generation == p->weights_generation)
			continue;
		if (upload_weights(p, slot, d) != 0)
			return -1;
		slot->dev_generation = p->weights_generation;
		uploaded = true;
	}
	if (failures > 0)
		return -1;
	/* The host's weights may go (a new binding) once the copies are made. */
	if (uploaded && p->dev->sync(p->dev) != 0) {
		st_diag_add(d, ST_SEVERITY_ERROR, NULL, 0, 0, "uploading the weights to %s: %s", p->dev_info.name,
		            p->dev->error(p->dev));
		return -1;
	}
	return 0;
}

int
plan_device_stage(st_plan *p, st_diag *d)
{
	/* Staging: each input's bytes, then each output's, as the plan holds them. */
	free(p->stage_offset);
	p->stage_offset = st_xcalloc((size_t)(p->n_inputs + p->n_outputs + 1), sizeof *p->stage_offset);
	size_t at = 0;
	for (int i = 0; i < p->n_inputs; i++) {
		p->stage_offset[i] = at;
		at += round_up(data_bytes(&p->tensors[p->slots[p->input_slots[i]].out_tensor[0]].t), DEVICE_ALIGN);
	}
	for (int o = 0; o < p->n_outputs; o++) {
		p->stage_offset[p->n_inputs + o] = at;
		at += round_up(data_bytes(&p->tensors[p->output_tensor[o]].t), DEVICE_ALIGN);
	}
	if (at > p->staging_capacity || p->staging == NULL) {
		if (p->staging != NULL)
			p->mod->host_free(p->dev, p->staging);
		p->staging = p->mod->host_alloc(p->dev, at ? at : DEVICE_ALIGN);
		p->staging_capacity = p->staging ? at : 0;
		if (p->staging == NULL) {
			st_diag_add(d, ST_SEVERITY_ERROR, NULL, 0, 0,
			            "no page-locked host memory for the inputs and outputs (%zu bytes): %s", at,
			            p->dev->error(p->dev));
			return -1;
		}
	}
	if (p->scratch_bytes > p->host_scratch_capacity) {
		free(p->host_scratch);
		p->host_scratch = st_xmalloc(p->scratch_bytes);
		p->host_scratch_capacity = p->scratch_bytes;
	}
	return 0;
}

int
plan_device_set_input(st_plan *p, int i, const st_tensor *t, st_diag *d)
{
	plan_tensor *dst = &p->tensors[p->slots[p->input_slots[i]].out_tensor[0]];
	st_tensor src = *t, stage = dst->t;
	src.layout = ST_LAYOUT_NCHW;
	stage.data = (char *)p->staging + p->stage_offset[i];
	convert_tensor(&src, &stage, p->host_scratch, &p->ctx);
	/* The staging is written again by the next call: the copy finishes first. */
	if (p->dev->upload(p->dev, dst->t.data, stage.data, data_bytes(&stage)) != 0 || p->dev->sync(p->dev) != 0) {
		st_diag_add(d, ST_SEVERITY_ERROR, NULL, 0, 0, "input '%s': copying it to %s: %s",
		            st_plan_input_name(p, i), p->dev_info.name, p->dev->error(p->dev));
		return -1;
	}
	return 0;
}

/* Enqueues every step (timing marks around each when profiling). Returns
 * 0, -1 with the reason in d, or 1 when cancelled. */
static int
enqueue_steps(st_plan *p, bool cancellable, st_diag *d)
{
	st_device *dev = p->dev;
	for (int i = 0; i < p->n_steps; i++) {
		if (cancellable && p->opt.cancel != NULL && *p->opt.cancel)
			return 1;
		plan_step *s = &p->steps[i];
		if (p->profiling && p->mod->mark(dev, i) != 0)
			goto device_failed;
		if (s->kind == ST_STEP_CONVERT) {
			if (p->mod->convert(dev, &p->tensors[s->src].t, &p->tensors[s->dst].t, p->scratch) != 0) {
				st_diag_add(d, ST_SEVERITY_ERROR, NULL, 0, 0, "converting %s for layer '%s': %s", s->what,
				            s->slot->layer->name, dev->error(dev));
				return -1;
			}
		} else if (s->kind == ST_STEP_LAYER && !s->elided && plan_run_layer(p, s, d) != 0) {
			return -1;
		}
	}
	if (p->profiling && p->mod->mark(dev, p->n_steps) != 0)
		goto device_failed;
	return 0;
device_failed:
	st_diag_add(d, ST_SEVERITY_ERROR, NULL, 0, 0, "timing the steps on %s: %s", p->dev_info.name,
	            dev->error(dev));
	return -1;
}

int
plan_device_run(st_plan *p, st_diag *d)
{
	st_device *dev = p->dev;
	st_capture_key key = { .arena = p->arena, .scratch = p->scratch, .staging = p->staging,
		               .device = dev->index, .profiling = p->profiling,
		               .one_off = plan_triggers(p, false) };
	st_plan_generations_of(p, &key.gen);
	const char *why = NULL;
	st_capture_action action = st_capture_next(&p->capture, &key, &why);
	if (p->profiling && p->mod->timers(dev, p->n_steps + 1) != 0) {
		st_diag_add(d, ST_SEVERITY_ERROR, NULL, 0, 0, "timing the steps on %s: %s", p->dev_info.name,
		            dev->error(dev));
		return -1;
	}
	int rc = 0;
	if (action == ST_CAPTURE_EAGER) {
		rc = enqueue_steps(p, true, d);
	} else if (action == ST_CAPTURE_RECORD) {
		if (p->opt.cancel != NULL && *p->opt.cancel)
			rc = 1;
		else if (p->mod->record_begin(dev) != 0)
			rc = -2;
		else {
			rc = enqueue_steps(p, false, d);
			if (p->mod->record_end(dev) != 0 && rc == 0)
				rc = -2;
			if (rc == 0 && p->mod->replay(dev) != 0)
				rc = -2;
		}
	} else {
		if (p->opt.cancel != NULL && *p->opt.cancel)
			rc = 1;
		else if (p->mod->replay(dev) != 0)
			rc = -2;
	}
	/* The outputs come back to the staging, which st_plan_get_output reads. */
	for (int o = 0; rc == 0 && o < p->n_outputs; o++) {
		const st_tensor *t = &p->tensors[p->output_tensor[o]].t;
		if (dev->download(dev, (char *)p->staging + p->stage_offset[p->n_inputs + o], t->data, data_bytes(t)) != 0)
			rc = -2;
	}
	if (dev->sync(dev) != 0 && rc == 0)
		rc = -2;
	if (rc == -2)
		st_diag_add(d, ST_SEVERITY_ERROR, NULL, 0, 0, "running on %s: %s", p->dev_info.name, dev->error(dev));
	if (rc != 0) {
		/* Whatever was recorded may be incomplete: start again eagerly. */
		memset(&p->capture, 0, sizeof p->capture);
		return rc < 0 ? -1 : 1;
	}
	for (int i = 0; p->profiling && i < p->n_steps; i++) {
		double sec = 0;
		if (p->mod->elapsed(dev, i, i + 1, &sec) != 0) {
			st_diag_add(d, ST_SEVERITY_ERROR, NULL, 0, 0, "timing the steps on %s: %s", p->dev_info.name,
			            dev->error(dev));
			return -1;
		}
		p->step_seconds[i] = sec;
	}
	return 0;
}

void
plan_device_get_output(const st_plan *p, int i, void *out)
{
	const plan_tensor *src = &p->tensors[p->output_tensor[i]];
	st_tensor staged = src->t;
	staged.data = (char *)p->staging + p->stage_offset[p->n_inputs + i];
	st_tensor dst = { .data = out, .shape = p->output_shapes[i], .layout = ST_LAYOUT_NCHW };
	convert_tensor(&staged, &dst, p->host_scratch, &p->ctx);
}

int
plan_device_layer_output(const st_plan *p, const plan_tensor *src, const st_shape *shape, void *out)
{
	size_t bytes = data_bytes(&src->t);
	st_tensor staged = src->t;
	staged.data = st_xmalloc(bytes ? bytes : 1);
	if (p->dev->download(p->dev, staged.data, src->t.data, bytes) != 0 || p->dev->sync(p->dev) != 0) {
		free(staged.data);
		return -1;
	}
	st_tensor dst = { .data = out, .shape = *shape, .layout = ST_LAYOUT_NCHW };
	convert_tensor(&staged, &dst, p->host_scratch, &p->ctx);
	free(staged.data);
	return 0;
}
