/* Fusion inside the plan, without a rule language: a batch normalisation
 * folded into the convolution before it, and an elementwise add and
 * activations applied to the convolution's output right after it runs,
 * while that output is still warm in the caches. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "engine-internal.h"
#include "k-nchwc.h"
#include "k-nn.h"
#include "k-tensor.h"

/* ---- deciding ---- */

bool
plan_fusion_enabled(const st_plan *p)
{
	if (p->opt.no_fusion || p->opt.keep_outputs)
		return false; /* inspection wants every layer's own output */
	if (p->dev != NULL)
		return false; /* the host's epilogue and folding work on host memory */
	const char *v = getenv("STRATA_FUSE");
	return v == NULL || strcmp(v, "0") != 0;
}

int
plan_slot_of(const st_plan *p, const st_layer *l)
{
	for (int i = 0; i < p->n_slots; i++) {
		if (p->slots[i].layer == l)
			return i;
	}
	return -1;
}

static bool
has_type(const layer_slot *slot, const char *name)
{
	return slot->impl != NULL && strcmp(slot->layer->type->desc->name, name) == 0;
}

static int
param_index(const layer_slot *slot, const char *name, st_param_kind kind)
{
	const st_layer_desc *desc = slot->layer->type->desc;
	int k = st_params_find(desc->params, desc->n_params, name);
	return k >= 0 && desc->params[k].kind == kind ? k : -1;
}

/* Whether slot is an elementwise add of exactly two linked inputs. */
static bool
is_plain_add(const layer_slot *slot)
{
	if (!has_type(slot, "elementwise") || slot->layer->n_inputs != 2)
		return false;
	int k = param_index(slot, "operation", ST_PARAM_ENUM);
	if (k < 0)
		return false;
	const st_param_desc *pd = &slot->layer->type->desc->params[k];
	int64_t v = slot->params[k].i;
	return v >= 0 && pd->enum_values != NULL && strcmp(pd->enum_values[v], "add") == 0;
}

/* Whether the batch norm in bn can fold into the convolution in conv:
 * the weights a fold reads are the ones the std types declare. */
static bool
can_fold(const layer_slot *conv, const layer_slot *bn)
{
	static const char *const bn_names[] = { "scale", "bias", "mean", "variance" };
	if (bn->n_weights != 4 || conv->n_weights < 1 || conv->n_weights > 2)
		return false;
	for (int w = 0; w < 4; w++) {
		if (strcmp(bn->weight_desc[w].name, bn_names[w]) != 0 || bn->weight_desc[w].shape.rank != 1)
			return false;
	}
	const st_shape *filter = &conv->weight_desc[0].shape;
	int64_t channels = conv->outputs[0].rank >= 2 ? conv->outputs[0].dims[1] : -1;
	if (filter->rank < 2 || filter->dims[0] != channels ||
	    bn->weight_desc[0].shape.dims[0] != channels)
		return false;
	int bias = param_index(conv, "bias", ST_PARAM_BOOL);
	if (bias < 0 || conv->n_weights != (conv->params[bias].b ? 2 : 1))
		return false;
	return param_index(bn, "epsilon", ST_PARAM_FLOAT) >= 0;
}

void
plan_fold_free(layer_slot *slot)
{
	free(slot->fold_filter);
	free(slot->fold_bias);
	free(slot->fold_params);
	slot->fold_filter = slot->fold_bias = NULL;
	slot->fold_params = NULL;
	slot->fold_filter_count = slot->fold_channels = 0;
	slot->fold_generation = 0;
	slot->fold_from = -1;
}

/* Sets up conv to run with bn folded in: parameters with the bias on (a
 * shallow copy: the lists and strings stay the plan's own, in
 * conv->params) and weights pointing at the folded copies, which
 * plan_fold_weights fills once weights are bound. */
static void
fold_into(layer_slot *conv, int bn_index)
{
	int n = conv->layer->type->desc->n_params;
	if (conv->fold_params == NULL)
		conv->fold_params = st_xcalloc((size_t)(n ? n : 1), sizeof *conv->fold_params);
	memcpy(conv->fold_params, conv->params, sizeof *conv->params * (size_t)n);
	conv->fold_params[param_index(conv, "bias", ST_PARAM_BOOL)].b = true;
	conv->fuse_bn = bn_index;
}

/* Whether an implementation with these flags applies activation act
 * (coefficients params) itself: every one (ST_IMPL_FUSES_ACTIVATION), or a
 * relu or a clip (ST_IMPL_FUSES_RELU_CLIP). */
static bool
impl_applies(const st_activation_desc *act, const st_value *params, unsigned flags)
{
	if (act == NULL)
		return false;
	if (flags & ST_IMPL_FUSES_ACTIVATION)
		return true;
	return (flags & ST_IMPL_FUSES_RELU_CLIP) &&
	       (strcmp(act->name, "relu") == 0 || (strcmp(act->name, "clip") == 0 && params != NULL));
}

/* Whether the activation attached to slot `as` is none, or one an
 * implementation with these flags applies itself as it writes (not a
 * prelu's learned slopes, which the host applies). */
static bool
act_applied_by_impl(const layer_slot *as, unsigned flags)
{
	if (as->act_impl == NULL)
		return true;
	return as->slope == NULL && impl_applies(as->layer->act.type->desc, as->layer->act.coef.values, flags);
}

bool
plan_host_applies_act(const st_plan *p, const layer_slot *slot)
{
	if (slot->fuse_add >= 0)
		return true;
	const layer_slot *as = slot->fuse_act >= 0 ? &p->slots[slot->fuse_act] : slot;
	return !act_applied_by_impl(as, slot->impl->flags);
}

static bool may_compute_half(const st_plan *p, const layer_slot *conv);

/*
 * Whether the convolution in conv, whose fused chain ends at tail, can
 * compute the pooling in pool as well (ST_IMPL_FUSES_POOL): a pooling of
 * conv's own plugin, one input and output, no activation of its own, in an
 * NCHW plan, both computed in float32 (in a float16 plan too, where the
 * convolution cannot compute in float16), after at most an activation the
 * implementation applies itself (the host's would come after the pooling).
 */
static bool
pool_fusable(const st_plan *p, const layer_slot *conv, const layer_slot *tail, const layer_slot *pool)
{
	if (!(conv->impl->flags & ST_IMPL_FUSES_POOL) || !has_type(pool, "pooling") ||
	    pool->impl_plugin != conv->impl_plugin || pool->layer->n_inputs != 1 || pool->n_outputs != 1 ||
	    pool->act_impl != NULL || pool->fused_into >= 0)
		return false;
	if (p->layout != ST_LAYOUT_NCHW || may_compute_half(p, conv) ||
	    !(pool->impl->layouts & ST_LAYOUT_BIT(ST_LAYOUT_NCHW)) ||
	    !(pool->impl->dtypes & ST_DTYPE_BIT(ST_DTYPE_FLOAT32)) || conv->outputs[0].dtype != ST_DTYPE_FLOAT32)
		return false;
	const st_port *in = &pool->layer->inputs[0];
	if (in->layer != tail->layer || in->output != 0)
		return false;
	/* The activation of the chain: conv's own or the one fused last. */
	const layer_slot *as = conv->fuse_act >= 0 ? &p->slots[conv->fuse_act] : conv;
	return act_applied_by_impl(as, conv->impl->flags);
}

/*
 * Whether the convolution in conv may compute in float16 in plan p: a
 * float16 plan, an implementation that lists float16 and, if it chooses
 * per layer, says float16 for this one in some layout (asked as the plan
 * would ask, its inputs' shapes shown in float16).
 */
static bool
may_compute_half(const st_plan *p, const layer_slot *conv)
{
	const st_impl_desc *impl = conv->impl;
	if (p->float_dtype == ST_DTYPE_FLOAT32 || !(impl->dtypes & ST_DTYPE_BIT(ST_DTYPE_FLOAT16)))
		return false;
	if (!(impl->flags & ST_IMPL_CHOOSES_DTYPE))
		return true;
	const st_layer *l = conv->layer;
	int n_in = l->n_inputs, n_out = conv->n_outputs;
	st_tensor *ins = st_xcalloc((size_t)(n_in ? n_in : 1), sizeof *ins);
	st_tensor *outs = st_xcalloc((size_t)(n_out ? n_out : 1), sizeof *outs);
	for (int k = 0; k < n_in; k++) {
		int src = l->inputs[k].layer ? plan_slot_of(p, l->inputs[k].layer) : -1;
		if (src >= 0)
			ins[k].shape = p->slots[src].outputs[l->inputs[k].output];
		if (ins[k].shape.dtype == ST_DTYPE_FLOAT32)
			ins[k].shape.dtype = ST_DTYPE_FLOAT16;
	}
	for (int k = 0; k < n_out; k++) {
		outs[k].shape = conv->outputs[k];
		if (outs[k].shape.dtype == ST_DTYPE_FLOAT32)
			outs[k].shape.dtype = ST_DTYPE_FLOAT16;
	}
	st_exec_layer L = { .name = l->name, .desc = l->type->desc, .params = conv->params, .n_inputs = n_in,
		            .inputs = ins, .n_outputs = n_out, .outputs = outs, .n_weights = conv->n_weights,
		            .weights = conv->weights, .act = l->act.type ? l->act.type->desc : NULL,
		            .act_params = l->act.type ? l->act.coef.values : NULL };
	bool half = false;
	const st_layout layouts[] = { ST_LAYOUT_NHWC, ST_LAYOUT_NCHW };
	for (int i = 0; i < 2 && !half; i++) {
		if (!(impl->layouts & ST_LAYOUT_BIT(layouts[i])))
			continue;
		for (int k = 0; k < n_in; k++)
			ins[k].layout = layouts[i];
		for (int k = 0; k < n_out; k++)
			outs[k].layout = layouts[i];
		half = impl->choose_dtype(&L, layouts[i]) == ST_DTYPE_FLOAT16;
	}
	free(ins);
	free(outs);
	return half;
}

void
plan_fuse(st_plan *p)
{
	for (int s = 0; s < p->n_slots; s++) {
		layer_slot *slot = &p->slots[s];
		slot->fused_into = slot->fuse_bn = slot->fuse_add = slot->fuse_act = slot->fuse_pool = -1;
		slot->fuse_add_other = -1;
	}
	if (!plan_fusion_enabled(p))
		return;
	/* Readers of each slot's output 0, and the last of them: a layer is
	 * fused only into the one producer it is the sole reader of (an
	 * output used twice must stay whole for its other reader). */
	int *readers = st_xcalloc((size_t)(p->n_slots ? p->n_slots : 1), sizeof *readers);
	int *reader = st_xcalloc((size_t)(p->n_slots ? p->n_slots : 1), sizeof *reader);
	for (int s = 0; s < p->n_slots; s++) {
		const st_layer *l = p->slots[s].layer;
		for (int k = 0; k < l->n_inputs; k++) {
			if (l->inputs[k].layer == NULL)
				continue;
			int src = plan_slot_of(p, l->inputs[k].layer);
			if (src < 0)
				continue;
			if (l->inputs[k].output != 0)
				readers[src] += 2; /* another output of a multi-output layer: leave it */
			else
				readers[src]++;
			reader[src] = s;
		}
	}
	for (int s = 0; s < p->n_slots; s++) {
		layer_slot *conv = &p->slots[s];
		if (!has_type(conv, "convolution") || conv->n_outputs != 1)
			continue;
		if (!(conv->impl->dtypes & ST_DTYPE_BIT(ST_DTYPE_FLOAT32)))
			continue;
		/* A convolution that may compute in float16 takes a batch norm
		 * (folded into its weights) and an activation it applies itself,
		 * nothing the host's epilogue would add in float32. */
		bool half = may_compute_half(p, conv);
		int tail = s; /* the last layer this step computes so far */
		/* An activation of its own comes before anything else: nothing
		 * folds or adds in after it, but a pooling may follow. */
		bool own_act = conv->act_impl != NULL;
		if (!own_act && readers[tail] == 1) {
			layer_slot *bn = &p->slots[reader[tail]];
			if (has_type(bn, "batch_normalization") && bn->n_outputs == 1 &&
			    st_shape_equal(&bn->outputs[0], &conv->outputs[0]) && can_fold(conv, bn)) {
				fold_into(conv, reader[tail]);
				bn->fused_into = s;
				tail = reader[tail];
			}
		}
		if (!half && !own_act && p->slots[tail].act_impl == NULL && readers[tail] == 1) {
			int a = reader[tail];
			layer_slot *add = &p->slots[a];
			const st_layer *al = add->layer;
			int mine = al->inputs[0].layer == p->slots[tail].layer ? 0 : 1;
			int other = 1 - mine;
			const st_port *op = &al->inputs[other];
			int producer = is_plain_add(add) && op->layer != NULL ? plan_slot_of(p, op->layer) : -1;
			/* The other operand must be ready when the convolution runs,
			 * and no broadcasting: the epilogue adds element by element. */
			if (producer >= 0 && producer < s && add->fused_into < 0 && add->n_outputs == 1 &&
			    st_shape_equal(&p->slots[producer].outputs[op->output], &add->outputs[0]) &&
			    st_shape_equal(&add->outputs[0], &p->slots[tail].outputs[0])) {
				conv->fuse_add = a;
				conv->fuse_add_other = other;
				add->fused_into = s;
				tail = a;
			}
		}
		/* A standalone activation (an identity layer carrying one). */
		if (!own_act && p->slots[tail].act_impl == NULL && readers[tail] == 1) {
			layer_slot *id = &p->slots[reader[tail]];
			if (has_type(id, "identity") && id->act_impl != NULL && id->layer->n_inputs == 1 &&
			    id->n_outputs == 1 && st_shape_equal(&id->outputs[0], &p->slots[tail].outputs[0]) &&
			    (!half || act_applied_by_impl(id, conv->impl->flags))) {
				id->fused_into = s;
				tail = reader[tail];
			}
		}
		if (tail != s && p->slots[tail].act_impl != NULL)
			conv->fuse_act = tail;
		/* A pooling after it all, which the implementation computes. */
		if (readers[tail] == 1 && conv->fuse_add < 0 && pool_fusable(p, conv, &p->slots[tail],
		                                                             &p->slots[reader[tail]])) {
			conv->fuse_pool = reader[tail];
			p->slots[reader[tail]].fused_into = s;
		}
	}
	free(readers);
	free(reader);
}

/* ---- folding ---- */

void
plan_fold_weights(st_plan *p)
{
	for (int s = 0; s < p->n_slots; s++) {
		layer_slot *conv = &p->slots[s];
		if (conv->fuse_bn < 0)
			continue;
		const layer_slot *bn = &p->slots[conv->fuse_bn];
		const st_shape *fshape = &conv->weight_desc[0].shape;
		int64_t channels = fshape->dims[0];
		int64_t count = st_shape_elements(fshape);
		if (conv->fold_generation == p->weights_generation && conv->fold_from == conv->fuse_bn &&
		    conv->fold_filter_count == count && conv->fold_channels == channels)
			continue; /* a re-plan for new input sizes: the same weights */
		/* Same sizes keep the same buffers, so the convolution's packed
		 * copy is redone only because the generation moved. */
		if (conv->fold_filter_count != count || conv->fold_channels != channels) {
			free(conv->fold_filter);
			free(conv->fold_bias);
			conv->fold_filter = st_xmalloc(sizeof(float) * (size_t)(count ? count : 1));
			conv->fold_bias = st_xmalloc(sizeof(float) * (size_t)(channels ? channels : 1));
			conv->fold_filter_count = count;
			conv->fold_channels = channels;
		}
		const float *w[4];
		for (int k = 0; k < 4; k++)
			w[k] = bn->weights[k].data;
		float eps = (float)bn->params[param_index(bn, "epsilon", ST_PARAM_FLOAT)].f;
		/* y = a * conv(x) + b per channel, the batch norm layer's own fold. */
		float *a = st_xmalloc(sizeof(float) * (size_t)(channels ? channels : 1));
		float *b = st_xmalloc(sizeof(float) * (size_t)(channels ? channels : 1));
		k_batch_norm_fold(channels, w[0], w[1], w[2], w[3], eps, a, b);
		const float *filter = conv->weights[0].data;
		const float *bias = conv->n_weights == 2 ? conv->weights[1].data : NULL;
		int64_t per = channels ? count / channels : 0;
		for (int64_t c = 0; c < channels; c++) {
			for (int64_t i = 0; i < per; i++)
				conv->fold_filter[c * per + i] = a[c] * filter[c * per + i];
			conv->fold_bias[c] = bias != NULL ? a[c] * bias[c] + b[c] : b[c];
		}
		free(a);
		free(b);
		st_tensor *t = conv->fold_weights;
		t[0] = (st_tensor){ .data = conv->fold_filter, .shape = *fshape, .layout = ST_LAYOUT_NCHW };
		t[0].shape.dtype = ST_DTYPE_FLOAT32;
		t[1] = (st_tensor){ .data = conv->fold_bias,
			            .shape = { .dtype = ST_DTYPE_FLOAT32, .rank = 1, .dims = { channels } },
			            .layout = ST_LAYOUT_NCHW };
		conv->fold_generation = p->weights_generation;
		conv->fold_from = conv->fuse_bn;
	}
}

/* ---- the epilogue ---- */

/* Floats one block of the epilogue touches: the output and the other
 * operand together stay within a 32 KiB L1 data cache. */
#define EPILOGUE_BLOCK 2048

typedef struct epilogue_job {
	float *x;
	const float *other;  /* added first, or NULL */
	const st_activation_impl *act; /* then applied, or NULL */
	const st_value *coef;
	int64_t per_channel; /* with slope: elements per (sample, channel) run, NCHW */
	int64_t channels;
	const float *slope;
} epilogue_job;

static void
epilogue_range(void *arg, int64_t begin, int64_t end)
{
	const epilogue_job *j = arg;
	/* Block by block, so that the activation reads what the add just
	 * wrote from L1 rather than making a second pass over the output. */
	for (int64_t at = begin; at < end; at += EPILOGUE_BLOCK) {
		int64_t n = end - at < EPILOGUE_BLOCK ? end - at : EPILOGUE_BLOCK;
		if (j->other != NULL) {
			st_shape s = { .dtype = ST_DTYPE_FLOAT32, .rank = 1, .dims = { n } };
			k_binary(K_OP_ADD, ST_DTYPE_FLOAT32, j->x + at, &s, j->x + at, &s, j->other + at, &s, NULL);
		}
		if (j->act != NULL)
			j->act->apply(j->coef, j->x + at, n, NULL, 0);
	}
}

/* Channel runs for per-channel slopes: [begin, end) counts runs of one
 * channel of one sample. */
static void
slope_range(void *arg, int64_t begin, int64_t end)
{
	const epilogue_job *j = arg;
	for (int64_t r = begin; r < end; r++)
		j->act->apply(j->coef, j->x + r * j->per_channel, j->per_channel, &j->slope[r % j->channels], 0);
}

/* Sets the lanes past the channels of blocked tensor t (ST_LAYOUT_NCHW16C)
 * to zero again. */
static void
zero_block_lanes(const st_tensor *t)
{
	int64_t plane = 1;
	for (int i = 2; i < t->shape.rank; i++)
		plane *= t->shape.dims[i];
	k_nchwc_zero_tail(t->shape.dims[0], t->shape.dims[1], plane, t->data);
}

/* Whether step s's implementation applies the activation it was given
 * itself: every one (ST_IMPL_FUSES_ACTIVATION), or a relu or a clip
 * (ST_IMPL_FUSES_RELU_CLIP). A step with an add to make first is given
 * none (plan_steps). */
static bool
impl_applies_act(const plan_step *s)
{
	return impl_applies(s->L.act, s->L.act_params, s->slot->impl->flags);
}

void
plan_epilogue(st_plan *p, plan_step *s)
{
	const layer_slot *as = s->act_slot;
	/* An implementation that applies the activation itself does, unless an
	 * add must come first. */
	bool act = as != NULL && (s->epi_other >= 0 || !impl_applies_act(s));
	if (s->epi_other < 0 && !act)
		return;
	st_tensor *out = &s->out_view[0];
	bool blocked = out->layout == ST_LAYOUT_NCHW16C && out->shape.rank >= 3;
	int64_t n = st_layout_elements(&out->shape, out->layout);
	epilogue_job j = { .x = out->data };
	if (s->epi_other >= 0)
		j.other = p->tensors[s->epi_other].t.data;
	bool slope = act && as->slope != NULL && out->shape.rank >= 2;
	if (act && !slope) {
		j.act = as->act_impl;
		j.coef = as->layer->act.coef.values;
	}
	if (j.other != NULL || j.act != NULL)
		p->ctx.parallel_for(&p->ctx, n, 16384, epilogue_range, &j);
	if (!slope) {
		/* The activation of zero need not be zero: the lanes past the
		 * channels of a blocked tensor are zero again. */
		if (blocked && j.act != NULL)
			zero_block_lanes(out);
		return;
	}
	/* prelu with learned per-channel slopes, after the add. */
	j.other = NULL;
	j.act = as->act_impl;
	j.coef = as->layer->act.coef.values;
	j.channels = out->shape.dims[1];
	j.slope = as->slope;
	if (j.channels == 0 || n == 0)
		return;
	if (blocked) {
		/* Sixteen channels a position, those of the last block live. */
		int64_t blocks = (j.channels + ST_LAYOUT_BLOCK - 1) / ST_LAYOUT_BLOCK;
		int64_t runs = n / ST_LAYOUT_BLOCK, plane = runs / (out->shape.dims[0] * blocks);
		for (int64_t r = 0; r < runs; r++) {
			int64_t cb = r / plane % blocks, live = j.channels - cb * ST_LAYOUT_BLOCK;
			j.act->apply(j.coef, j.x + r * ST_LAYOUT_BLOCK, live < ST_LAYOUT_BLOCK ? live : ST_LAYOUT_BLOCK,
			             j.slope + cb * ST_LAYOUT_BLOCK, 1);
		}
		return;
	}
	if (out->layout == ST_LAYOUT_NHWC && out->shape.rank >= 3) {
		/* Channels last: each pixel is one run over all channels. */
		for (int64_t px = 0; px < n / j.channels; px++)
			j.act->apply(j.coef, j.x + px * j.channels, j.channels, j.slope, 1);
		return;
	}
	j.per_channel = n / (out->shape.dims[0] * j.channels);
	p->ctx.parallel_for(&p->ctx, n / j.per_channel, 1, slope_range, &j);
}

/* ---- concatenations in place ---- */

/*
 * A concatenation along an axis with nothing but ones before it (channels
 * of one sample, NCHW) is its inputs one after the other: each input can
 * be written where it goes in the output, and the copy disappears. Taken
 * where every input is a tensor of its own (not a network input or
 * output, not kept for inspection, not already a part, not given twice),
 * in the output's dtype and layout, and every part starts on an arena
 * alignment (kernels may count on aligned tensors).
 */
static bool
concat_in_place(st_plan *p, plan_step *s)
{
	const layer_slot *slot = s->slot;
	if (!has_type(slot, "concatenation") || s->n_out != 1 || s->n_in < 1 || s->act_slot != NULL ||
	    s->epi_other >= 0)
		return false;
	int k_axis = param_index(slot, "axis", ST_PARAM_INT);
	plan_tensor *out = &p->tensors[s->out[0]];
	const st_shape *shape = &out->t.shape;
	if (k_axis < 0 || out->parent >= 0 || shape->rank < 1)
		return false;
	int64_t axis = slot->params[k_axis].i;
	if (axis < 0)
		axis += shape->rank;
	if (axis < 0 || axis >= shape->rank)
		return false;
	/* NHWC keeps channels last: a channel slice is not one run. Blocked
	 * tensors keep blocks of sixteen channels apart: a slice of whole
	 * blocks is one run (checked below, part by part). */
	if (out->t.layout == ST_LAYOUT_NHWC && axis > 0)
		return false;
	if (out->t.layout == ST_LAYOUT_NCHW16C && axis > 1)
		return false;
	for (int d = 0; d < axis; d++) {
		if (shape->dims[d] != 1)
			return false;
	}
	size_t at = 0;
	for (int k = 0; k < s->n_in; k++) {
		int id = s->in[k];
		if (id < 0 || id == s->out[0])
			return false;
		for (int j = 0; j < k; j++) {
			if (s->in[j] == id)
				return false;
		}
		const plan_tensor *t = &p->tensors[id];
		if (t->pinned || t->parent >= 0 || t->first < 0 || t->t.shape.dtype != shape->dtype ||
		    t->t.layout != out->t.layout || at % 64 != 0)
			return false;
		if (t->t.layout == ST_LAYOUT_NCHW16C && axis == 1 && t->t.shape.dims[1] % ST_LAYOUT_BLOCK != 0)
			return false;
		/* A tensor some other concatenation already made a parent. */
		for (int i = 0; i < p->n_tensors; i++) {
			if (p->tensors[i].parent == id)
				return false;
		}
		at += t->bytes;
	}
	if (at != out->bytes)
		return false;
	at = 0;
	for (int k = 0; k < s->n_in; k++) {
		plan_tensor *t = &p->tensors[s->in[k]];
		t->parent = s->out[0];
		t->parent_offset = at;
		at += t->bytes;
		/* The output's place is taken from the first part written until
		 * the last part is read. */
		if (t->first < out->first)
			out->first = t->first;
		if (t->last > out->last)
			out->last = t->last;
	}
	s->elided = true;
	return true;
}

void
plan_concat_in_place(st_plan *p)
{
	for (int i = 0; i < p->n_steps; i++) {
		plan_step *s = &p->steps[i];
		if (s->kind == ST_STEP_LAYER)
			concat_in_place(p, s);
	}
}
