/* Compiling a graph into a plan: execution order, an implementation per
 * layer, the format of every tensor and the conversions between formats,
 * tensor lifetimes, and an arena that reuses memory between them. */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "engine-internal.h"
#include "st-backend.h"

/* Alignment of tensors in the arena unless the options ask for more. */
#define ALIGN 64

/* n rounded up to the plan's tensor alignment (a power of two). */
static size_t
align_up(const st_plan *p, size_t n)
{
	return (n + p->align - 1) & ~(p->align - 1);
}

bool
format_is_fp16(st_tensor_format f)
{
	return f == ST_FORMAT_FP16_NCHW || f == ST_FORMAT_FP16_NHWC;
}

st_layout
format_layout(st_tensor_format f)
{
	return f == ST_FORMAT_FP32_NHWC || f == ST_FORMAT_FP16_NHWC ? ST_LAYOUT_NHWC : ST_LAYOUT_NCHW;
}

static st_tensor_format
format_of(st_dtype float_dtype, st_layout layout)
{
	bool half = float_dtype == ST_DTYPE_FLOAT16;
	if (layout == ST_LAYOUT_NCHW16C)
		return ST_FORMAT_FP32_NCHW16C;
	if (layout == ST_LAYOUT_NHWC)
		return half ? ST_FORMAT_FP16_NHWC : ST_FORMAT_FP32_NHWC;
	return half ? ST_FORMAT_FP16_NCHW : ST_FORMAT_FP32_NCHW;
}

static bool
is_float(st_dtype t)
{
	return t == ST_DTYPE_FLOAT32 || t == ST_DTYPE_FLOAT16;
}

static int
compare_topo(const void *a, const void *b)
{
	const st_layer *x = *(const st_layer *const *)a, *y = *(const st_layer *const *)b;
	return (x->topo > y->topo) - (x->topo < y->topo);
}

/* ---- shapes ---- */

/* Index of the slot holding layer l (slots are few; a map is not worth it). */
static int
slot_of(const st_plan *p, const st_layer *l)
{
	/* Slots follow execution order, and topo numbers are that order. */
	int lo = 0, hi = p->n_slots - 1;
	while (lo <= hi) {
		int mid = (lo + hi) / 2;
		if (p->slots[mid].layer == l)
			return mid;
		if (p->slots[mid].layer->topo < l->topo)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	for (int i = 0; i < p->n_slots; i++) {
		if (p->slots[i].layer == l)
			return i;
	}
	return -1;
}

int
plan_reshape(st_plan *p, st_diag *d)
{
	int input_no = 0;
	for (int s = 0; s < p->n_slots; s++) {
		layer_slot *slot = &p->slots[s];
		const st_layer *l = slot->layer;
		if (l->type->desc->flags & ST_LAYER_GRAPH_INPUT) {
			slot->n_outputs = 1;
			slot->outputs[0] = p->input_shapes[input_no++];
			continue;
		}
		const st_shape *in[256];
		if (l->n_inputs > 256) {
			st_diag_add(d, ST_SEVERITY_ERROR, NULL, 0, 0, "layer '%s' has more than 256 inputs", l->name);
			return -1;
		}
		for (int i = 0; i < l->n_inputs; i++) {
			st_port port = l->inputs[i];
			in[i] = NULL;
			if (port.layer != NULL) {
				int src = slot_of(p, port.layer);
				in[i] = &p->slots[src].outputs[port.output];
			}
		}
		st_reshape r;
		st_message *msgs;
		int n_msgs;
		st_shape outs[ST_MAX_OUTPUTS];
		int rc = st_reshape_run(l->type, l->name, l->params.values, l->n_inputs, in, outs, &r, &msgs,
		                        &n_msgs);
		for (int i = 0; i < n_msgs; i++) {
			if (msgs[i].severity == ST_SEVERITY_ERROR)
				st_diag_add(d, ST_SEVERITY_ERROR, NULL, 0, 0, "layer '%s': %s", l->name, msgs[i].text);
			free(msgs[i].text);
		}
		free(msgs);
		if (rc != 0)
			return -1;
		/* Weights stay bound across sizes, so their shapes must not move. */
		if (p->weights_bound) {
			bool same = r.n_weights == slot->n_weights;
			for (int i = 0; same && i < r.n_weights; i++)
				same = st_shape_equal(&r.weights[i].shape, &slot->weight_desc[i].shape);
			if (!same) {
				st_diag_add(d, ST_SEVERITY_ERROR, NULL, 0, 0,
				            "layer '%s': with these input sizes its weights would change shape; "
				            "the model cannot take them",
				            l->name);
				return -1;
			}
		}
		slot->n_weights = r.n_weights;
		memcpy(slot->weight_desc, r.weights, sizeof r.weights[0] * (size_t)r.n_weights);
		slot->n_outputs = r.n_outputs;
		memcpy(slot->outputs, outs, sizeof outs[0] * (size_t)r.n_outputs);
	}
	for (int o = 0; o < p->n_outputs; o++) {
		const st_layer *l = p->slots[p->output_slots[o]].layer;
		st_port port = l->inputs[0];
		st_shape s = p->slots[slot_of(p, port.layer)].outputs[port.output];
		if (s.dtype == ST_DTYPE_FLOAT16)
			s.dtype = ST_DTYPE_FLOAT32;
		p->output_shapes[o] = s;
	}
	return 0;
}

/* ---- building steps ---- */

static int
add_tensor(st_plan *p, const st_shape *shape, st_layout layout)
{
	p->tensors = st_xreallocarray(p->tensors, (size_t)p->n_tensors + 1, sizeof *p->tensors);
	plan_tensor *t = &p->tensors[p->n_tensors];
	memset(t, 0, sizeof *t);
	t->t.shape = *shape;
	/* Below rank 3 the layouts coincide; calling them NCHW avoids needless
	 * conversions. Only float32 tensors are blocked. */
	t->t.layout = shape->rank >= 3 ? layout : ST_LAYOUT_NCHW;
	if (layout == ST_LAYOUT_NCHW16C && shape->dtype != ST_DTYPE_FLOAT32)
		t->t.layout = ST_LAYOUT_NCHW;
	int64_t bytes = st_layout_bytes(shape, t->t.layout);
	t->bytes = bytes > 0 ? (size_t)bytes : 0;
	t->first = t->last = -1;
	t->parent = -1;
	return p->n_tensors++;
}

static plan_step *
add_step(st_plan *p, st_step_kind kind, layer_slot *slot)
{
	p->steps = st_xreallocarray(p->steps, (size_t)p->n_steps + 1, sizeof *p->steps);
	plan_step *s = &p->steps[p->n_steps++];
	memset(s, 0, sizeof *s);
	s->kind = kind;
	s->slot = slot;
	s->src = s->dst = -1;
	s->epi_other = -1;
	return s;
}

static void
touch(plan_tensor *t, int step)
{
	if (t->first < 0)
		t->first = step;
	if (step > t->last)
		t->last = step;
}

static const char *
short_format(st_dtype dtype, st_layout layout)
{
	static const char *const names[2][3] = { { "fp32-nchw", "fp32-nhwc", "fp32-nchw16c" },
		                                 { "fp16-nchw", "fp16-nhwc", "fp16-nchw16c" } };
	static const char *const plain[3] = { "nchw", "nhwc", "nchw16c" };
	if ((unsigned)layout >= ST_LAYOUT_COUNT)
		layout = ST_LAYOUT_NCHW;
	if (!is_float(dtype))
		return plain[layout];
	return names[dtype == ST_DTYPE_FLOAT16][layout];
}

/* A tensor id holding src converted to (dtype, layout), adding a conversion
 * step when it is not already in that form. cache remembers conversions made
 * for the current consumer's inputs. */
static int
converted(st_plan *p, int src, st_dtype dtype, st_layout layout, layer_slot *slot)
{
	plan_tensor *s = &p->tensors[src];
	if (s->t.shape.rank < 3 || (layout == ST_LAYOUT_NCHW16C && dtype != ST_DTYPE_FLOAT32))
		layout = ST_LAYOUT_NCHW;
	if (s->t.shape.dtype == dtype && s->t.layout == layout)
		return src;
	/* Reuse an earlier conversion of the same tensor to the same form. */
	for (int i = 0; i < p->n_steps; i++) {
		plan_step *c = &p->steps[i];
		if (c->kind == ST_STEP_CONVERT && c->src == src && p->tensors[c->dst].t.shape.dtype == dtype &&
		    p->tensors[c->dst].t.layout == layout)
			return c->dst;
	}
	st_shape shape = s->t.shape;
	shape.dtype = dtype;
	int dst = add_tensor(p, &shape, layout);
	plan_step *c = add_step(p, ST_STEP_CONVERT, slot);
	c->src = src;
	c->dst = dst;
	c->format = format_of(is_float(dtype) ? dtype : ST_DTYPE_FLOAT32, layout);
	const plan_tensor *from = &p->tensors[src];
	snprintf(c->what, sizeof c->what, "%s -> %s", short_format(from->t.shape.dtype, from->t.layout),
	         short_format(dtype, layout));
	return dst;
}

/* Whether every float tensor the layer of slot reads and writes can be
 * blocked: float32 of rank 3 or more (integer tensors stay as they are). */
static bool
blockable(const st_plan *p, const layer_slot *slot, const int *in)
{
	for (int k = 0; k < slot->layer->n_inputs; k++) {
		const st_shape *s = in[k] >= 0 ? &p->tensors[in[k]].t.shape : NULL;
		if (s != NULL && is_float(s->dtype) && s->rank < 3)
			return false;
	}
	for (int k = 0; k < slot->n_outputs; k++) {
		if (is_float(slot->outputs[k].dtype) && slot->outputs[k].rank < 3)
			return false;
	}
	return true;
}

/*
 * The view of the layer of slot that an implementation's choose_layout and
 * choose_dtype get: its inputs being tensors in[] (-1 for none), in layout
 * (or, for ST_LAYOUT_COUNT, the one each has), its floating-point inputs
 * and outputs in dtype; shapes, layouts, parameters and weights, no data.
 * ins and outs are the caller's, n_inputs and n_outputs long (at least 1).
 */
static st_exec_layer
layer_view(const st_plan *p, const layer_slot *slot, const int *in, st_dtype dtype, st_layout layout,
           st_tensor *ins, st_tensor *outs)
{
	const st_layer *l = slot->layer;
	int n_in = l->n_inputs, n_out = slot->n_outputs;
	for (int k = 0; k < n_in; k++) {
		ins[k] = (st_tensor){ 0 };
		if (in[k] >= 0) {
			ins[k].shape = p->tensors[in[k]].t.shape;
			ins[k].layout = layout == ST_LAYOUT_COUNT ? p->tensors[in[k]].t.layout : layout;
			if (is_float(ins[k].shape.dtype))
				ins[k].shape.dtype = dtype;
		}
	}
	for (int k = 0; k < n_out; k++) {
		outs[k] = (st_tensor){ .shape = slot->outputs[k], .layout = layout == ST_LAYOUT_COUNT ? 0 : layout };
		if (is_float(outs[k].shape.dtype))
			outs[k].shape.dtype = dtype;
	}
	st_exec_layer L = { .name = l->name, .desc = l->type->desc, .params = slot->params, .n_inputs = n_in,
		            .inputs = ins, .n_outputs = n_out, .outputs = outs, .n_weights = slot->n_weights,
		            .weights = slot->weights, .act = l->act.type ? l->act.type->desc : NULL,
		            .act_params = l->act.type ? l->act.coef.values : NULL, .ctx = &p->ctx };
	if (slot->fuse_bn >= 0) {
		L.params = slot->fold_params;
		L.n_weights = 2;
		L.weights = slot->fold_weights;
	}
	return L;
}

/*
 * The layout an implementation that chooses picks for the layer of slot,
 * its inputs being tensors in[] (-1 for none) converted to dtype where
 * they are floating-point; fallback where it picks one it did not declare.
 */
static st_layout
chosen_layout(const st_plan *p, const layer_slot *slot, const int *in, st_dtype dtype, st_layout fallback)
{
	int n_in = slot->layer->n_inputs, n_out = slot->n_outputs;
	st_tensor *ins = st_xcalloc((size_t)(n_in ? n_in : 1), sizeof *ins);
	st_tensor *outs = st_xcalloc((size_t)(n_out ? n_out : 1), sizeof *outs);
	st_exec_layer L = layer_view(p, slot, in, dtype, ST_LAYOUT_COUNT, ins, outs);
	st_layout got = slot->impl->choose_layout(&L);
	free(ins);
	free(outs);
	if (got < 0 || got >= ST_LAYOUT_COUNT || !(slot->impl->layouts & ST_LAYOUT_BIT(got)))
		return fallback;
	/* Blocked tensors are float32 images. */
	if (got == ST_LAYOUT_NCHW16C && (dtype != ST_DTYPE_FLOAT32 || !blockable(p, slot, in)))
		return fallback;
	return got;
}

/* Whether an implementation that chooses float types runs the layer of
 * slot in float16, in layout, its inputs being tensors in[]. */
static bool
chosen_half(const st_plan *p, const layer_slot *slot, const int *in, st_layout layout)
{
	int n_in = slot->layer->n_inputs, n_out = slot->n_outputs;
	st_tensor *ins = st_xcalloc((size_t)(n_in ? n_in : 1), sizeof *ins);
	st_tensor *outs = st_xcalloc((size_t)(n_out ? n_out : 1), sizeof *outs);
	st_exec_layer L = layer_view(p, slot, in, ST_DTYPE_FLOAT16, layout, ins, outs);
	st_dtype got = slot->impl->choose_dtype(&L, layout);
	free(ins);
	free(outs);
	return got == ST_DTYPE_FLOAT16;
}

/* The float dtype and layout a layer's implementation computes in. */
static int
step_format(const st_plan *p, const layer_slot *slot, st_dtype *dtype, st_layout *layout, st_diag *d)
{
	const st_impl_desc *impl = slot->impl;
	*layout = (impl->layouts & ST_LAYOUT_BIT(p->layout)) ? p->layout
	          : (impl->layouts & ST_LAYOUT_BIT(ST_LAYOUT_NCHW)) ? ST_LAYOUT_NCHW
	                                                            : ST_LAYOUT_NHWC;
	/* The host's epilogue (activations, a fused add) runs in float32. */
	bool epilogue = plan_host_applies_act(p, slot);
	if ((impl->dtypes & ST_DTYPE_BIT(p->float_dtype)) && !(epilogue && p->float_dtype == ST_DTYPE_FLOAT16))
		*dtype = p->float_dtype;
	else if (impl->dtypes & ST_DTYPE_BIT(ST_DTYPE_FLOAT32))
		*dtype = ST_DTYPE_FLOAT32;
	else if (impl->dtypes & ST_DTYPE_BIT(ST_DTYPE_FLOAT16))
		*dtype = ST_DTYPE_FLOAT16;
	else {
		/* An implementation for integers only: fine if no float reaches it. */
		*dtype = ST_DTYPE_FLOAT32;
	}
	(void)d;
	return 0;
}

void
plan_clear_steps(st_plan *p)
{
	for (int i = 0; i < p->n_steps; i++) {
		plan_step *s = &p->steps[i];
		free(s->in);
		free(s->out);
		free(s->in_view);
		free(s->out_view);
		free(s->pool_L);
		free(s->unpooled);
	}
	free(p->steps);
	free(p->tensors);
	free(p->output_tensor);
	p->steps = NULL;
	p->tensors = NULL;
	p->output_tensor = NULL;
	p->n_steps = p->n_tensors = 0;
}

/* Places tensors in the arena: largest first, each at the lowest offset
 * where it overlaps no tensor alive at the same time. */
static void
plan_memory(st_plan *p)
{
	int n = p->n_tensors;
	int *order = st_xmalloc(sizeof *order * (size_t)(n ? n : 1));
	for (int i = 0; i < n; i++)
		order[i] = i;
	/* Insertion sort by size, larger first; ties by creation order. */
	for (int i = 1; i < n; i++) {
		int v = order[i], j = i - 1;
		while (j >= 0 && p->tensors[order[j]].bytes < p->tensors[v].bytes) {
			order[j + 1] = order[j];
			j--;
		}
		order[j + 1] = v;
	}
	int *placed = st_xmalloc(sizeof *placed * (size_t)(n ? n : 1));
	int n_placed = 0;
	size_t top = 0;
	for (int k = 0; k < n; k++) {
		plan_tensor *t = &p->tensors[order[k]];
		if (t->parent >= 0)
			continue; /* placed with its parent, below */
		if (t->pinned)
			t->first = 0, t->last = p->n_steps;
		if (t->first < 0)
			t->first = t->last = 0; /* never touched: keep a place anyway */
		size_t offset = 0, size = align_up(p, t->bytes ? t->bytes : 1);
		/* Try the gaps between overlapping neighbours, in order of offset. */
		bool moved = true;
		while (moved) {
			moved = false;
			for (int i = 0; i < n_placed; i++) {
				const plan_tensor *o = &p->tensors[placed[i]];
				if (o->last < t->first || o->first > t->last)
					continue;
				size_t o_size = align_up(p, o->bytes ? o->bytes : 1);
				if (offset < o->offset + o_size && o->offset < offset + size) {
					offset = o->offset + o_size;
					moved = true;
				}
			}
		}
		t->offset = offset;
		placed[n_placed++] = order[k];
		if (offset + size > top)
			top = offset + size;
	}
	p->arena_bytes = top;
	for (int i = 0; i < n; i++) {
		plan_tensor *t = &p->tensors[i];
		if (t->parent >= 0)
			t->offset = p->tensors[t->parent].offset + t->parent_offset;
	}
	/* The lower bound: the most bytes alive at any one step. */
	size_t bound = 0;
	for (int s = 0; s <= p->n_steps; s++) {
		size_t live = 0;
		for (int i = 0; i < n; i++) {
			if (p->tensors[i].parent < 0 && p->tensors[i].first <= s && p->tensors[i].last >= s)
				live += align_up(p, p->tensors[i].bytes ? p->tensors[i].bytes : 1);
		}
		if (live > bound)
			bound = live;
	}
	p->live_bound = bound;
	free(order);
	free(placed);
}

/* Calls every implementation's prepare and sizes the scratch area. */
static int
prepare_all(st_plan *p, st_diag *d)
{
	size_t scratch = 0;
	for (int i = 0; i < p->n_steps; i++) {
		plan_step *s = &p->steps[i];
		if (s->kind != ST_STEP_LAYER)
			continue;
		layer_slot *slot = s->slot;
		s->L.state = slot->state;
		s->L.ctx = &p->ctx;
		s->L.scratch_bytes = 0;
		s->L.weights_generation = p->weights_generation;
		s->report.failed = false;
		if (slot->impl->prepare != NULL && slot->impl->prepare(&s->L, &st_host) != 0) {
			st_diag_add(d, ST_SEVERITY_ERROR, NULL, 0, 0, "layer '%s': %s", slot->layer->name,
			            s->report.failed ? s->report.text : "its implementation cannot run it");
			slot->state = s->L.state;
			return -1;
		}
		slot->state = s->L.state;
		slot->prepared_once = true;
		if (s->L.scratch_bytes > scratch)
			scratch = s->L.scratch_bytes;
	}
	/* Conversions that change dtype and layout at once stage through the
	 * scratch area in float32 (convert_tensor), as do inputs and outputs
	 * copied in and out. */
	for (int i = 0; i < p->n_tensors; i++) {
		size_t bytes = p->tensors[i].bytes * (p->tensors[i].t.shape.dtype == ST_DTYPE_FLOAT16 ? 2 : 1);
		if (bytes > scratch && p->tensors[i].t.shape.rank >= 3)
			scratch = bytes;
	}
	for (int o = 0; o < p->n_outputs; o++) {
		int64_t bytes = st_shape_bytes(&p->output_shapes[o]);
		if (bytes > 0 && (size_t)bytes > scratch)
			scratch = (size_t)bytes;
	}
	/* Kept layer outputs leave as float32 NCHW through the scratch too. */
	for (int i = 0; i < p->n_tensors && p->opt.keep_outputs; i++) {
		st_shape shape = p->tensors[i].t.shape;
		if (shape.dtype == ST_DTYPE_FLOAT16)
			shape.dtype = ST_DTYPE_FLOAT32;
		int64_t bytes = st_shape_bytes(&shape);
		if (bytes > 0 && (size_t)bytes > scratch)
			scratch = (size_t)bytes;
	}
	p->scratch_bytes = align_up(p, scratch);
	return 0;
}

/* (Re)allocates the arena and points every tensor and view at its memory:
 * prepare sees the shapes and buffers it will run on. */
static int
place_tensors(st_plan *p, st_diag *d)
{
	if (p->arena_bytes > p->arena_capacity) {
		if (p->dev != NULL) {
			plan_device_free(p, p->arena);
			p->arena_capacity = 0;
			p->arena = plan_device_alloc(p, p->arena_bytes, "the activation arena", d);
			if (p->arena == NULL)
				return -1;
		} else {
			free(p->arena);
			p->arena = aligned_alloc(p->align, p->arena_bytes);
			if (p->arena == NULL) {
				fprintf(stderr, "strata: out of memory (an arena of %zu bytes)\n", p->arena_bytes);
				abort();
			}
		}
		p->arena_capacity = p->arena_bytes;
	}
	for (int i = 0; i < p->n_tensors; i++)
		p->tensors[i].t.data = (char *)p->arena + p->tensors[i].offset;
	for (int i = 0; i < p->n_steps; i++) {
		plan_step *s = &p->steps[i];
		if (s->kind != ST_STEP_LAYER)
			continue;
		for (int k = 0; k < s->n_in; k++) {
			if (s->in[k] >= 0)
				s->in_view[k] = p->tensors[s->in[k]].t;
			else
				memset(&s->in_view[k], 0, sizeof s->in_view[k]);
		}
		for (int k = 0; k < s->n_out; k++)
			s->out_view[k] = p->tensors[s->out[k]].t;
	}
	return 0;
}

/* (Re)allocates the scratch area prepare asked for and hands it out. */
static int
place_scratch(st_plan *p, st_diag *d)
{
	if (p->scratch_bytes > p->scratch_capacity) {
		if (p->dev != NULL) {
			plan_device_free(p, p->scratch);
			p->scratch_capacity = 0;
			p->scratch = plan_device_alloc(p, p->scratch_bytes, "the scratch area", d);
			if (p->scratch == NULL)
				return -1;
		} else {
			free(p->scratch);
			p->scratch = aligned_alloc(p->align, p->scratch_bytes);
			if (p->scratch == NULL) {
				fprintf(stderr, "strata: out of memory (scratch of %zu bytes)\n", p->scratch_bytes);
				abort();
			}
		}
		p->scratch_capacity = p->scratch_bytes;
	}
	for (int i = 0; i < p->n_steps; i++) {
		if (p->steps[i].kind == ST_STEP_LAYER)
			p->steps[i].L.scratch = p->scratch;
	}
	return 0;
}

/* Step st computes the pooling in slot->fuse_pool too: the layer sees its
 * own output 0 as a shape without data, and the pooling's description
 * (ABI 2.5), whose output is the step's. */
static void
fuse_pool_view(st_plan *p, plan_step *st, st_layout layout)
{
	const layer_slot *ps = &p->slots[st->slot->fuse_pool];
	st->unpooled = st_xcalloc(1, sizeof *st->unpooled);
	*st->unpooled = (st_tensor){ .shape = st->slot->outputs[0], .layout = layout };
	st->L.outputs = st->unpooled;
	st_exec_layer *P = st->pool_L = st_xcalloc(1, sizeof *st->pool_L);
	P->name = ps->layer->name;
	P->desc = ps->layer->type->desc;
	P->params = ps->params;
	P->n_inputs = 1;
	P->inputs = st->unpooled;
	P->n_outputs = 1;
	P->outputs = st->out_view;
	st->L.pool = P;
}

/* The tensor's producing step, when a conversion made it; -1 otherwise. */
static int
converting_step(const st_plan *p, int t)
{
	for (int i = 0; i < p->n_steps; i++) {
		if (p->steps[i].kind == ST_STEP_CONVERT && p->steps[i].dst == t)
			return i;
	}
	return -1;
}

/* Whether layer step i runs channels last on its own: not in the plan's
 * layout, every input (and a fused add's operand) converted to it, and no
 * layer reading an output as it is (a graph output converts on the way
 * out). Such a step pays two conversions for what its layout gains: an
 * isolated depthwise convolution channels last in an NCHW plan took 2.5x
 * its NCHW time (bench/cpu's depthwise row, issue 10's session 12).
 * Blocked steps are left as chosen: the std convolution takes that layout
 * alone only where it was measured faster with its conversions counted
 * (k_conv_blocked_chosen). */
static bool
step_is_island(const st_plan *p, int i)
{
	const plan_step *s = &p->steps[i];
	if (s->kind != ST_STEP_LAYER || s->n_out < 1 || s->slot->fuse_pool >= 0)
		return false;
	st_layout layout = p->tensors[s->out[0]].t.layout;
	if (layout == p->layout || layout != ST_LAYOUT_NHWC)
		return false;
	bool inputs = false;
	for (int k = 0; k < s->n_in; k++) {
		if (s->in[k] < 0)
			continue;
		if (converting_step(p, s->in[k]) < 0)
			return false;
		inputs = true;
	}
	if (!inputs || (s->epi_other >= 0 && converting_step(p, s->epi_other) < 0))
		return false;
	for (int j = 0; j < p->n_steps; j++) {
		const plan_step *r = &p->steps[j];
		if (j == i || r->kind != ST_STEP_LAYER)
			continue;
		for (int k = 0; k < s->n_out; k++) {
			if (r->epi_other == s->out[k])
				return false;
			for (int m = 0; m < r->n_in; m++) {
				if (r->in[m] == s->out[k])
					return false;
			}
		}
	}
	return true;
}

static int build_steps(st_plan *p, st_diag *d);
static int finish_build(st_plan *p, st_diag *d);

/*
 * The plan's steps, tensors, memory and (with weights bound) prepared
 * layers. Where implementations choose layouts, the steps left channels
 * last islands (step_is_island) are built again in the plan's layout, the others asked
 * again (a choice may follow the input's layout, and so make a new
 * island): a few rounds, the last as it comes.
 */
int
plan_build(st_plan *p, st_diag *d)
{
	p->build_generation++;
	for (int s = 0; s < p->n_slots; s++)
		p->slots[s].layout_island = false;
	for (int round = 0;; round++) {
		if (build_steps(p, d) != 0)
			return -1;
		bool again = false;
		if (p->layouts_chosen && round < 4) {
			for (int i = 0; i < p->n_steps; i++) {
				if (step_is_island(p, i)) {
					p->steps[i].slot->layout_island = true;
					again = true;
				}
			}
		}
		if (!again)
			break;
	}
	return finish_build(p, d);
}

/* The steps and tensors of the plan (plan_build). */
static int
build_steps(st_plan *p, st_diag *d)
{
	plan_clear_steps(p);
	plan_fuse(p);
	for (int s = 0; s < p->n_slots; s++) {
		layer_slot *slot = &p->slots[s];
		const st_layer *l = slot->layer;
		unsigned flags = l->type->desc->flags;
		if (flags & ST_LAYER_GRAPH_OUTPUT)
			continue;
		if (slot->fused_into >= 0) {
			/* Computed by an earlier step, in place in its output. */
			slot->out_tensor[0] = p->slots[slot->fused_into].out_tensor[0];
			continue;
		}
		if (flags & ST_LAYER_GRAPH_INPUT) {
			/* Inputs arrive in the plan's format and stay for the whole run. */
			st_shape shape = slot->outputs[0];
			if (is_float(shape.dtype))
				shape.dtype = p->float_dtype;
			int t = add_tensor(p, &shape, p->layout);
			p->tensors[t].pinned = true;
			slot->out_tensor[0] = t;
			plan_step *st = add_step(p, ST_STEP_FEED, slot);
			st->format = p->format;
			continue;
		}
		st_dtype fdtype;
		st_layout layout;
		if (step_format(p, slot, &fdtype, &layout, d) != 0)
			return -1;
		const st_impl_desc *impl = slot->impl;
		int n_in = l->n_inputs, n_out = slot->n_outputs;
		int *in = st_xcalloc((size_t)(n_in ? n_in : 1), sizeof *in);
		for (int k = 0; k < n_in; k++) {
			st_port port = l->inputs[k];
			in[k] = port.layer == NULL ? -1 : p->slots[slot_of(p, port.layer)].out_tensor[port.output];
		}
		/* An implementation that chooses is asked, except in a plan kept
		 * NCHW: in one chosen by layer, and in a channels-last plan, where
		 * it says which layers it runs channels last (the others are
		 * converted around, as for implementations without NHWC). */
		bool asks = (impl->flags & ST_IMPL_CHOOSES_LAYOUT) && (p->layouts_chosen || p->layout != ST_LAYOUT_NCHW) &&
		            slot->fuse_pool < 0 && !slot->layout_island;
		st_layout natural_layout = layout;
		if (asks)
			layout = chosen_layout(p, slot, in, fdtype, layout);
		/* In float16 an implementation that chooses may keep a layer in
		 * float32, converted around; it is asked its layout again. */
		if (fdtype == ST_DTYPE_FLOAT16 && (impl->flags & ST_IMPL_CHOOSES_DTYPE) &&
		    (impl->dtypes & ST_DTYPE_BIT(ST_DTYPE_FLOAT32)) && !chosen_half(p, slot, in, layout)) {
			fdtype = ST_DTYPE_FLOAT32;
			layout = asks ? chosen_layout(p, slot, in, fdtype, natural_layout) : natural_layout;
		}
		for (int k = 0; k < n_in; k++) {
			if (in[k] < 0)
				continue;
			int src = in[k];
			st_dtype want = p->tensors[src].t.shape.dtype;
			if (is_float(want))
				want = fdtype;
			if (!(impl->dtypes & ST_DTYPE_BIT(want))) {
				st_diag_add(d, ST_SEVERITY_ERROR, NULL, 0, 0,
				            "layer '%s': the %s implementation of %s does not take %s tensors",
				            l->name, p->backend, l->type->desc->name, st_dtype_name(want));
				free(in);
				return -1;
			}
			in[k] = converted(p, src, want, layout, slot);
		}
		/* A fused add's other operand, in the form the output has. */
		int epi_other = -1;
		if (slot->fuse_add >= 0) {
			st_port port = p->slots[slot->fuse_add].layer->inputs[slot->fuse_add_other];
			int src = p->slots[slot_of(p, port.layer)].out_tensor[port.output];
			epi_other = converted(p, src, ST_DTYPE_FLOAT32, layout, slot);
		}
		plan_step *st = add_step(p, ST_STEP_LAYER, slot);
		st->epi_other = epi_other;
		st->format = format_of(fdtype, layout);
		st->n_in = n_in;
		st->in = in;
		st->n_out = n_out;
		st->out = st_xcalloc((size_t)(n_out ? n_out : 1), sizeof *st->out);
		for (int k = 0; k < n_out; k++) {
			/* With a fused pooling the step's output is the pooling's. */
			st_shape shape = k == 0 && slot->fuse_pool >= 0 ? p->slots[slot->fuse_pool].outputs[0]
			                                               : slot->outputs[k];
			if (is_float(shape.dtype))
				shape.dtype = fdtype;
			st->out[k] = add_tensor(p, &shape, layout);
		}
		int step_index = p->n_steps - 1;
		/* Outputs go on in the plan's format (or the layout chosen). In a
		 * float16 plan that is for float16 outputs: a layer kept in
		 * float32 leaves its output as it computed it, converted only
		 * for a reader that takes another form (never narrowed to be
		 * widened again). */
		for (int k = 0; k < n_out; k++) {
			/* converted() may move the steps: read this one by index each time. */
			int produced = p->steps[step_index].out[k];
			st_dtype natural = p->tensors[produced].t.shape.dtype;
			st_layout keep = p->layouts_chosen ? layout : p->layout;
			if (is_float(natural) && p->float_dtype == ST_DTYPE_FLOAT16 && natural == ST_DTYPE_FLOAT32)
				keep = layout;
			else if (is_float(natural))
				natural = p->float_dtype;
			slot->out_tensor[k] = converted(p, produced, natural, keep, slot);
		}
		st = &p->steps[step_index]; /* adding conversions may have moved the steps */
		st->in_view = st_xcalloc((size_t)(n_in ? n_in : 1), sizeof *st->in_view);
		st->out_view = st_xcalloc((size_t)(n_out ? n_out : 1), sizeof *st->out_view);
		st_exec_layer *L = &st->L;
		L->name = l->name;
		L->desc = l->type->desc;
		L->params = slot->params;
		L->n_inputs = n_in;
		L->inputs = st->in_view;
		L->n_outputs = n_out;
		L->outputs = st->out_view;
		L->n_weights = slot->n_weights;
		L->weights = p->dev != NULL ? slot->dev_weights : slot->weights;
		L->ctx = &p->ctx;
		L->act = l->act.type ? l->act.type->desc : NULL;
		L->act_params = l->act.type ? l->act.coef.values : NULL;
		L->state = slot->state;
		st->act_slot = slot->act_impl ? slot : NULL;
		if (slot->fuse_bn >= 0) {
			L->params = slot->fold_params;
			L->n_weights = 2;
			L->weights = slot->fold_weights;
		}
		if (slot->fuse_act >= 0) {
			const layer_slot *as = &p->slots[slot->fuse_act];
			st->act_slot = as;
			L->act = as->layer->act.type->desc;
			L->act_params = as->layer->act.coef.values;
		}
		/* The add comes before the activation: the engine applies both. */
		if (slot->fuse_add >= 0)
			L->act = NULL, L->act_params = NULL;
		if (slot->fuse_pool >= 0)
			fuse_pool_view(p, st, layout);
	}
	return 0;
}

/* Lifetimes, memory and preparation of the steps build_steps made. */
static int
finish_build(st_plan *p, st_diag *d)
{
	/* Lifetimes, now that every step has its place. */
	for (int i = 0; i < p->n_steps; i++) {
		plan_step *s = &p->steps[i];
		if (s->kind == ST_STEP_LAYER) {
			for (int k = 0; k < s->n_in; k++) {
				if (s->in[k] >= 0)
					touch(&p->tensors[s->in[k]], i);
			}
			for (int k = 0; k < s->n_out; k++)
				touch(&p->tensors[s->out[k]], i);
			if (s->epi_other >= 0)
				touch(&p->tensors[s->epi_other], i);
			/* report lives in the step, which may have moved while building */
			s->L.host_private = &s->report;
			if (s->pool_L)
				s->pool_L->host_private = &s->report;
		} else if (s->kind == ST_STEP_CONVERT) {
			touch(&p->tensors[s->src], i);
			touch(&p->tensors[s->dst], i);
		} else {
			touch(&p->tensors[s->slot->out_tensor[0]], i);
		}
	}
	p->output_tensor = st_xcalloc((size_t)(p->n_outputs ? p->n_outputs : 1), sizeof *p->output_tensor);
	for (int o = 0; o < p->n_outputs; o++) {
		const st_layer *l = p->slots[p->output_slots[o]].layer;
		st_port port = l->inputs[0];
		int t = p->slots[slot_of(p, port.layer)].out_tensor[port.output];
		p->tensors[t].pinned = true;
		p->output_tensor[o] = t;
	}
	/* For inspection, every layer's outputs stay whole to the end. */
	if (p->opt.keep_outputs) {
		for (int s = 0; s < p->n_slots; s++) {
			for (int k = 0; k < p->slots[s].n_outputs; k++) {
				int t = p->slots[s].out_tensor[k];
				if (t >= 0)
					p->tensors[t].pinned = true;
			}
		}
	}
	if (plan_fusion_enabled(p))
		plan_concat_in_place(p);
	p->ran = false;
	if (p->dev != NULL && plan_device_check(p, d) != 0)
		return -1;
	plan_memory(p);
	if (place_tensors(p, d) != 0)
		return -1;
	if (p->weights_bound)
		return plan_prepare(p, d);
	return 0;
}

int
plan_prepare(st_plan *p, st_diag *d)
{
	plan_fold_weights(p);
	if (p->dev != NULL && plan_device_weights(p, d) != 0)
		return -1;
	if (prepare_all(p, d) != 0)
		return -1;
	if (place_scratch(p, d) != 0)
		return -1;
	return p->dev != NULL ? plan_device_stage(p, d) : 0;
}

/* ---- compiling ---- */

st_plan *
st_plan_compile(const st_graph *g, const st_plan_options *opt, st_diag *d)
{
	if (!g->checked) {
		st_diag_add(d, ST_SEVERITY_ERROR, NULL, 0, 0, "the model was not type-checked");
		return NULL;
	}
	if (g->errors > 0) {
		st_diag_add(d, ST_SEVERITY_ERROR, NULL, 0, 0, "the model has %d type error%s; strata check lists them",
		            g->errors, g->errors == 1 ? "" : "s");
		return NULL;
	}
	st_plan *p = st_xcalloc(1, sizeof *p);
	p->graph = g;
	p->registry = g->registry;
	if (opt != NULL)
		p->opt = *opt;
	else
		p->opt.format = -1;
	p->backend = p->opt.backend ? p->opt.backend : "cpu";
	size_t align = p->opt.arena_align;
	if (align != 0 && (align < ALIGN || (align & (align - 1)) != 0 || align > 65536)) {
		st_diag_add(d, ST_SEVERITY_ERROR, NULL, 0, 0,
		            "arena alignment %zu: it must be a power of two from %d to 65536", align, ALIGN);
		free(p);
		return NULL;
	}
	p->align = align ? align : ALIGN;
	p->format = p->opt.format >= 0 ? (st_tensor_format)p->opt.format
	                               : (st_tensor_format)g->network.values[ST_NET_TENSOR_FORMAT].i;
	p->float_dtype = format_is_fp16(p->format) ? ST_DTYPE_FLOAT16 : ST_DTYPE_FLOAT32;
	p->layout = format_layout(p->format);
	const char *layouts = getenv("STRATA_LAYOUTS");
	p->layouts_chosen = p->format == ST_FORMAT_FP32_NCHW && !p->opt.fixed_layouts &&
	                    !(layouts != NULL && strcmp(layouts, "fixed") == 0);
	p->pool = st_pool_new(p->opt.threads);
	st_pool_context(p->pool, &p->ctx);
	if (strcmp(p->backend, "cpu") != 0) {
		/* The module says why it cannot run (no driver, no device). */
		if (plan_device_open(p, d) != 0) {
			st_plan_free(p);
			return NULL;
		}
		p->ctx.device = p->dev;
	}

	/* Execution order: the checker's topological order. */
	const st_layer **order = st_xmalloc(sizeof *order * (size_t)(g->n_layers ? g->n_layers : 1));
	for (int i = 0; i < g->n_layers; i++)
		order[i] = g->layers[i];
	qsort(order, (size_t)g->n_layers, sizeof *order, compare_topo);
	p->n_slots = g->n_layers;
	p->slots = st_xcalloc((size_t)(p->n_slots ? p->n_slots : 1), sizeof *p->slots);
	int failures = 0;
	for (int i = 0; i < g->n_layers; i++) {
		const st_layer *l = order[i];
		layer_slot *slot = &p->slots[i];
		slot->layer = l;
		slot->fold_from = -1;
		int n_params = l->type->desc->n_params;
		slot->params = st_xcalloc((size_t)(n_params ? n_params : 1), sizeof *slot->params);
		for (int k = 0; k < n_params; k++)
			st_value_copy(&slot->params[k], &l->params.values[k]);
		unsigned flags = l->type->desc->flags;
		if (flags & ST_LAYER_GRAPH_INPUT) {
			p->input_slots = st_xreallocarray(p->input_slots, (size_t)p->n_inputs + 1, sizeof(int));
			p->input_slots[p->n_inputs++] = i;
		} else if (flags & ST_LAYER_GRAPH_OUTPUT) {
			p->output_slots = st_xreallocarray(p->output_slots, (size_t)p->n_outputs + 1, sizeof(int));
			p->output_slots[p->n_outputs++] = i;
		} else {
			slot->impl = st_registry_find_impl(p->registry, l->type->desc->name, p->backend);
			for (int k = 0; slot->impl != NULL && k < p->registry->n_impls; k++) {
				if (p->registry->impls[k].desc == slot->impl)
					slot->impl_plugin = p->registry->impls[k].plugin;
			}
			if (slot->impl == NULL) {
				st_diag_add(d, ST_SEVERITY_ERROR, NULL, 0, 0,
				            "layer '%s': no loaded plugin implements %s on the %s backend", l->name,
				            l->type->desc->name, p->backend);
				failures++;
			}
		}
		if (l->act.type != NULL) {
			slot->act_impl = st_registry_find_activation_impl(p->registry, l->act.type->desc->name);
			if (slot->act_impl == NULL) {
				st_diag_add(d, ST_SEVERITY_ERROR, NULL, 0, 0,
				            "layer '%s': no loaded plugin computes the activation %s", l->name,
				            l->act.type->desc->name);
				failures++;
			}
		}
	}
	free(order);
	if (p->n_outputs == 0 && failures == 0)
		st_diag_add(d, ST_SEVERITY_WARNING, NULL, 0, 0,
		            "the model has no output layer: the run computes nothing anyone can read");
	p->input_shapes = st_xcalloc((size_t)(p->n_inputs ? p->n_inputs : 1), sizeof *p->input_shapes);
	for (int i = 0; i < p->n_inputs; i++)
		p->input_shapes[i] = p->slots[p->input_slots[i]].layer->outputs[0];
	p->output_shapes = st_xcalloc((size_t)(p->n_outputs ? p->n_outputs : 1), sizeof *p->output_shapes);
	if (failures > 0 || plan_reshape(p, d) != 0 || plan_build(p, d) != 0) {
		st_plan_free(p);
		return NULL;
	}
	return p;
}

void
st_plan_free(st_plan *p)
{
	if (p == NULL)
		return;
	free(p->step_seconds);
	for (int s = 0; s < p->n_slots; s++) {
		layer_slot *slot = &p->slots[s];
		if (slot->impl && slot->impl->release && slot->state) {
			st_exec_layer L = { .name = slot->layer->name, .desc = slot->layer->type->desc,
				            .params = slot->params, .state = slot->state, .ctx = &p->ctx };
			slot->impl->release(&L);
		}
		for (int k = 0; slot->params && k < slot->layer->type->desc->n_params; k++)
			st_value_clear(&slot->params[k]);
		free(slot->params);
		for (int w = 0; w < ST_MAX_WEIGHTS; w++) {
			st_npy_free(&slot->weight_files[w]);
			free(slot->weight_random[w]);
		}
		st_npy_free(&slot->slope_file);
		plan_fold_free(slot);
	}
	plan_clear_steps(p);
	/* The device's memory goes after the releases (implementations free
	 * their state there) and before the slots (which hold the weights'). */
	plan_device_close(p);
	free(p->slots);
	free(p->input_slots);
	free(p->input_shapes);
	free(p->output_slots);
	free(p->output_shapes);
	free(p->arena);
	free(p->scratch);
	st_pool_free(p->pool);
	free(p);
}

/* ---- what a plan tells ---- */

int
st_plan_step_count(const st_plan *p)
{
	return p->n_steps;
}

void
st_plan_step(const st_plan *p, int i, st_step_info *out)
{
	const plan_step *s = &p->steps[i];
	out->kind = s->kind;
	out->layer = s->slot ? s->slot->layer : NULL;
	out->format = s->format;
	out->scratch_bytes = s->kind == ST_STEP_LAYER ? s->L.scratch_bytes : 0;
	if (s->kind == ST_STEP_CONVERT)
		out->what = s->what;
	else
		out->what = s->slot->layer->type->desc->name;
}

size_t
st_plan_arena_bytes(const st_plan *p)
{
	return p->arena_bytes;
}

size_t
st_plan_live_bound(const st_plan *p)
{
	return p->live_bound;
}

int
st_plan_tensor_count(const st_plan *p)
{
	return p->n_tensors;
}

void
st_plan_tensor_place(const st_plan *p, int i, st_tensor_place *out)
{
	const plan_tensor *t = &p->tensors[i];
	out->offset = t->offset;
	out->bytes = t->bytes;
	out->first_step = t->first;
	out->last_step = t->last;
	out->part = t->parent >= 0;
}

size_t
st_plan_arena_align(const st_plan *p)
{
	return p->align;
}

void
st_plan_generations_of(const st_plan *p, st_plan_generations *out)
{
	out->build = p->build_generation;
	out->weights = p->weights_generation;
	out->runtime = p->runtime_generation;
}

size_t
st_plan_scratch_bytes(const st_plan *p)
{
	return p->scratch_bytes;
}

st_tensor_format
st_plan_format(const st_plan *p)
{
	return p->format;
}

int
st_plan_threads(const st_plan *p)
{
	return st_pool_threads(p->pool);
}

void
st_plan_describe(const st_plan *p, st_buf *out)
{
	int conversions = 0;
	for (int i = 0; i < p->n_steps; i++)
		conversions += p->steps[i].kind == ST_STEP_CONVERT;
	st_buf_printf(out, "plan: %d steps (%d conversions), format %s, backend %s, %d thread%s\n",
	              p->n_steps, conversions, st_tensor_format_name(p->format), p->backend,
	              st_pool_threads(p->pool), st_pool_threads(p->pool) == 1 ? "" : "s");
	for (int i = 0; i < p->n_steps; i++) {
		const plan_step *s = &p->steps[i];
		const char *name = s->slot->layer->name;
		switch (s->kind) {
		case ST_STEP_FEED:
			st_buf_printf(out, "  %3d  %-24s input, %s\n", i, name, st_tensor_format_name(s->format));
			break;
		case ST_STEP_CONVERT:
			st_buf_printf(out, "  %3d  %-24s convert %s\n", i, name, s->what);
			break;
		case ST_STEP_LAYER:
			st_buf_printf(out, "  %3d  %-24s %s, %s", i, name, s->slot->layer->type->desc->name,
			              st_tensor_format_name(s->format));
			if (s->slot->fuse_bn >= 0)
				st_buf_printf(out, " + %s folded", p->slots[s->slot->fuse_bn].layer->name);
			if (s->slot->fuse_add >= 0)
				st_buf_printf(out, " + %s", p->slots[s->slot->fuse_add].layer->name);
			if (s->act_slot)
				st_buf_printf(out, " + %s", s->act_slot->layer->act.type->desc->name);
			if (s->slot->fuse_pool >= 0)
				st_buf_printf(out, " + %s", p->slots[s->slot->fuse_pool].layer->name);
			if (s->elided)
				st_buf_printf(out, ", in place (its inputs wrote their parts)");
			if (s->L.scratch_bytes)
				st_buf_printf(out, ", scratch %zu B", s->L.scratch_bytes);
			st_buf_putc(out, '\n');
			break;
		}
	}
	st_buf_printf(out, "memory: arena %zu bytes for %d tensors (the live tensors never exceed %zu), "
	                   "scratch %zu bytes\n",
	              p->arena_bytes, p->n_tensors, p->live_bound, p->scratch_bytes);
}
