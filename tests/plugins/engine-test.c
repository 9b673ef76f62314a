/* Layer types with CPU implementations made for testing the engine: each
 * accepts only some formats, so that plans must convert around them. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "../backends/fake-device.h"
#include "st-plugin.h"

const uint32_t st_plugin_abi = ST_PLUGIN_ABI_VERSION;

static int
same_shape(st_reshape *r, const st_host_api *api)
{
	(void)api;
	r->outputs[0] = *r->inputs[0];
	return 0;
}

/* add_bias: y = x + b[c], with one weight "bias" of C values. */
static int
bias_reshape(st_reshape *r, const st_host_api *api)
{
	r->outputs[0] = *r->inputs[0];
	st_shape b = { .dtype = ST_DTYPE_FLOAT32, .rank = 1, .dims = { r->inputs[0]->dims[1] } };
	return api->add_weight(r, "bias", &b, false);
}

static int64_t
count(const st_shape *s)
{
	int64_t n = 1;
	for (int i = 0; i < s->rank; i++)
		n *= s->dims[i];
	return n;
}

static int
add_bias_run(st_exec_layer *L, const st_exec_ctx *ctx)
{
	(void)ctx;
	const st_tensor *x = &L->inputs[0];
	const float *b = L->weights[0].data;
	int64_t c = x->shape.dims[1], n = count(&x->shape), inner = n / (x->shape.dims[0] * c);
	const float *in = x->data;
	float *out = L->outputs[0].data;
	for (int64_t i = 0; i < n; i++)
		out[i] = in[i] + b[(i / inner) % c];
	return 0;
}

/* twice_nhwc: y = 2x, but only in NHWC; it checks that it got NHWC. */
static int
twice_run(st_exec_layer *L, const st_exec_ctx *ctx)
{
	if (L->inputs[0].shape.rank >= 3 && L->inputs[0].layout != ST_LAYOUT_NHWC) {
		ctx->api->fail(L, "twice_nhwc got a tensor that is not NHWC");
		return -1;
	}
	const float *in = L->inputs[0].data;
	float *out = L->outputs[0].data;
	for (int64_t i = 0; i < count(&L->inputs[0].shape); i++)
		out[i] = 2 * in[i];
	return 0;
}

/* half_copy: copies float16 data as it is; only float16. */
static int
half_copy_run(st_exec_layer *L, const st_exec_ctx *ctx)
{
	if (L->inputs[0].shape.dtype != ST_DTYPE_FLOAT16) {
		ctx->api->fail(L, "half_copy got %s", ctx->api->dtype_name(L->inputs[0].shape.dtype));
		return -1;
	}
	memcpy(L->outputs[0].data, L->inputs[0].data, (size_t)count(&L->inputs[0].shape) * 2);
	return 0;
}

/* slow_sum: sums over threads with parallel_for; scratch-checked. */
typedef struct sum_job {
	const float *in;
	float *out;
} sum_job;

static void
sum_range(void *arg, int64_t begin, int64_t end)
{
	sum_job *j = arg;
	for (int64_t i = begin; i < end; i++)
		j->out[i] = j->in[i] * 3.0f;
}

static int
triple_prepare(st_exec_layer *L, const st_host_api *api)
{
	(void)api;
	L->scratch_bytes = 4096;
	return 0;
}

static int
triple_run(st_exec_layer *L, const st_exec_ctx *ctx)
{
	memset(L->scratch, 0xab, 4096); /* scratch must really be there */
	sum_job j = { L->inputs[0].data, L->outputs[0].data };
	ctx->parallel_for(ctx, count(&L->inputs[0].shape), 7, sum_range, &j);
	return 0;
}

/* minus_three: y = x - 3, and flags ST_IMPL_FUSES_RELU_CLIP without
 * applying them: what comes out shows whether the host applied one. */
static int
minus_three_run(st_exec_layer *L, const st_exec_ctx *ctx)
{
	(void)ctx;
	const float *x = L->inputs[0].data;
	float *y = L->outputs[0].data;
	for (int64_t i = 0, n = count(&L->inputs[0].shape); i < n; i++)
		y[i] = x[i] - 3.0f;
	return 0;
}

/* plus_channel: y = x + its channel index, which depends on where the
 * channels lie; so a host that hands it NHWC data labelled NCHW, or the
 * other way round, gets a wrong answer. */
static int
plus_channel_run(st_exec_layer *L, const st_exec_ctx *ctx)
{
	(void)ctx;
	const st_shape *s = &L->inputs[0].shape;
	const float *x = L->inputs[0].data;
	float *y = L->outputs[0].data;
	int64_t n = count(s), channels = s->rank > 1 ? s->dims[1] : 1, plane = 1;
	for (int i = 2; i < s->rank; i++)
		plane *= s->dims[i];
	bool last = L->inputs[0].layout == ST_LAYOUT_NHWC && s->rank >= 3;
	if (L->outputs[0].layout != L->inputs[0].layout)
		return -1;
	for (int64_t i = 0; i < n; i++)
		y[i] = x[i] + (float)(last ? i % channels : i / plane % channels);
	return 0;
}

/* Its choice: the other layout than its input's, so that every step of a
 * chain of them converts; NCHW below rank 3. */
static st_layout
plus_channel_choose(const st_exec_layer *L)
{
	if (L->inputs[0].shape.rank < 3)
		return ST_LAYOUT_NCHW;
	return L->inputs[0].layout == ST_LAYOUT_NHWC ? ST_LAYOUT_NCHW : ST_LAYOUT_NHWC;
}

static int
refuse_prepare(st_exec_layer *L, const st_host_api *api)
{
	api->fail(L, "refuses %s inputs", "all");
	return -1;
}

static void
negate(const st_value *coef, float *x, int64_t n, const float *slope, int step)
{
	(void)coef;
	for (int64_t i = 0; i < n; i++)
		x[i] = -x[i] * (slope ? slope[step ? i : 0] : 1.0f);
}

static const st_port_desc one[] = { { "x", 0, "a tensor" } };

/* ---- the same layers on the "fake" device backend (fake-device.h) ----
 * Each run checks that what it was handed lies in device memory, and
 * launches a kernel whose arguments (pointers, shapes, option values) are
 * copied at launch, as a CUDA kernel's are: a recording replays them. */

/* The host's table, kept at load for binary16 conversions in kernels. */
static const st_host_api *host_api;

static const fake_native *
fake_of(const st_exec_layer *L)
{
	return L->ctx->device->native;
}

static size_t
tensor_bytes(const st_tensor *t)
{
	return (size_t)count(&t->shape) * (t->shape.dtype == ST_DTYPE_FLOAT16 ? 2u : 4u);
}

/* Fails L unless its inputs, outputs and weights are device memory. */
static int
on_device(st_exec_layer *L, const st_host_api *api)
{
	const fake_native *fn = fake_of(L);
	st_device *dev = L->ctx->device;
	for (int i = 0; i < L->n_inputs; i++) {
		if (L->inputs[i].data != NULL && !fn->owns(dev, L->inputs[i].data, tensor_bytes(&L->inputs[i])))
			return api->fail(L, "input %d is not in device memory", i), -1;
	}
	for (int i = 0; i < L->n_outputs; i++) {
		if (!fn->owns(dev, L->outputs[i].data, tensor_bytes(&L->outputs[i])))
			return api->fail(L, "output %d is not in device memory", i), -1;
	}
	for (int i = 0; i < L->n_weights; i++) {
		if (L->weights[i].data != NULL && !fn->owns(dev, L->weights[i].data, tensor_bytes(&L->weights[i])))
			return api->fail(L, "weight %d is not in device memory", i), -1;
	}
	return 0;
}

static float
fake_load(const st_tensor *t, int64_t i)
{
	return t->shape.dtype == ST_DTYPE_FLOAT16 ? host_api->half_to_float(((const uint16_t *)t->data)[i])
	                                         : ((const float *)t->data)[i];
}

static void
fake_store(const st_tensor *t, int64_t i, float v)
{
	if (t->shape.dtype == ST_DTYPE_FLOAT16)
		((uint16_t *)t->data)[i] = host_api->float_to_half(v);
	else
		((float *)t->data)[i] = v;
}

typedef struct bias_kernel_arg {
	st_tensor x, y;
	const float *bias;
	float scale, offset;
	const float *state; /* a device float added too, or NULL */
	bool relu;
} bias_kernel_arg;

/* y = relu?(scale * x + offset + bias[c] + *state), in either layout and dtype. */
static void
bias_kernel(const void *arg)
{
	const bias_kernel_arg *a = arg;
	const st_shape *s = &a->x.shape;
	int64_t n = count(s), c = s->rank > 1 ? s->dims[1] : 1, plane = 1;
	for (int i = 2; i < s->rank; i++)
		plane *= s->dims[i];
	bool last = a->x.layout == ST_LAYOUT_NHWC && s->rank >= 3;
	for (int64_t i = 0; i < n; i++) {
		int64_t ch = last ? i % c : i / plane % c;
		float v = a->scale * fake_load(&a->x, i) + a->offset;
		if (a->bias != NULL)
			v += a->bias[ch];
		if (a->state != NULL)
			v += *a->state;
		if (a->relu && v < 0)
			v = 0;
		fake_store(&a->y, i, v);
	}
}

static int
fake_add_bias_prepare(st_exec_layer *L, const st_host_api *api)
{
	if (L->act != NULL && strcmp(L->act->name, "relu") != 0)
		return api->fail(L, "fake add_bias applies relu only, not %s", L->act->name), -1;
	return 0;
}

static int
fake_add_bias_run(st_exec_layer *L, const st_exec_ctx *ctx)
{
	if (on_device(L, ctx->api) != 0)
		return -1;
	bias_kernel_arg a = { .x = L->inputs[0], .y = L->outputs[0], .bias = L->weights[0].data, .scale = 1,
		              .relu = L->act != NULL };
	return fake_of(L)->launch(ctx->device, bias_kernel, &a, sizeof a);
}

static int
fake_triple_run(st_exec_layer *L, const st_exec_ctx *ctx)
{
	if (on_device(L, ctx->api) != 0)
		return -1;
	if (!fake_of(L)->owns(ctx->device, L->scratch, L->scratch_bytes))
		return ctx->api->fail(L, "the scratch is not in device memory"), -1;
	bias_kernel_arg a = { .x = L->inputs[0], .y = L->outputs[0], .scale = 3 };
	return fake_of(L)->launch(ctx->device, bias_kernel, &a, sizeof a);
}

/* scale_rt: y = factor * x + 0.25, factor a runtime option read at launch;
 * on the fake device the 0.25 comes from state prepare keeps in device
 * memory (freed by release). */
static int
scale_rt_cpu_run(st_exec_layer *L, const st_exec_ctx *ctx)
{
	(void)ctx;
	const float *x = L->inputs[0].data;
	float *y = L->outputs[0].data;
	float f = (float)L->params[0].f;
	for (int64_t i = 0, n = count(&L->inputs[0].shape); i < n; i++)
		y[i] = f * x[i] + 0.25f;
	return 0;
}

static int
fake_scale_rt_prepare(st_exec_layer *L, const st_host_api *api)
{
	/* The algorithm cache, as a cuDNN implementation uses it: a choice
	 * per configuration, "measured" (made up) once and kept. A cache that
	 * cannot keep it (a damaged file) leaves the choice to this run. */
	char key[64];
	snprintf(key, sizeof key, "scale_rt %lld", (long long)count(&L->inputs[0].shape));
	st_algo_choice c;
	if (api->algo_find(L, key, &c) != 0) {
		c = (st_algo_choice){ .algo = 7, .math = 1, .workspace = 256, .ms = 0.5 };
		(void)api->algo_keep(L, key, &c);
	} else if (c.algo != 7 || c.math != 1 || c.workspace != 256) {
		return api->fail(L, "the algorithm cache gave algo %d, math %d, workspace %llu", c.algo, c.math,
		                 (unsigned long long)c.workspace), -1;
	}
	if (L->state != NULL)
		return 0;
	st_device *dev = L->ctx->device;
	static const float quarter = 0.25f;
	float *state = dev->alloc(dev, sizeof quarter);
	if (state == NULL)
		return api->fail(L, "%s", dev->error(dev)), -1;
	L->state = state;
	/* quarter is static: it outlives the stream's copy. */
	if (dev->upload(dev, state, &quarter, sizeof quarter) != 0)
		return api->fail(L, "%s", dev->error(dev)), -1;
	return 0;
}

static int
fake_scale_rt_run(st_exec_layer *L, const st_exec_ctx *ctx)
{
	if (on_device(L, ctx->api) != 0)
		return -1;
	bias_kernel_arg a = { .x = L->inputs[0], .y = L->outputs[0], .scale = (float)L->params[0].f,
		              .state = L->state };
	return fake_of(L)->launch(ctx->device, bias_kernel, &a, sizeof a);
}

static void
fake_scale_rt_release(st_exec_layer *L)
{
	L->ctx->device->free_mem(L->ctx->device, L->state);
	L->state = NULL;
}

static const st_param_desc scale_rt_params[] = {
	{ .name = "factor", .kind = ST_PARAM_FLOAT, .default_value = "2", .flags = ST_PARAM_RUNTIME,
	  .doc = "what x is multiplied by" },
};

static const st_layer_desc types[] = {
	{ .name = "add_bias", .summary = "x + bias", .inputs = one, .n_inputs = 1, .outputs = one,
	  .n_outputs = 1, .flags = ST_LAYER_ACTIVATION, .reshape = bias_reshape },
	{ .name = "twice_nhwc", .summary = "2x", .inputs = one, .n_inputs = 1, .outputs = one,
	  .n_outputs = 1, .reshape = same_shape },
	{ .name = "half_copy", .summary = "copy", .inputs = one, .n_inputs = 1, .outputs = one,
	  .n_outputs = 1, .reshape = same_shape },
	{ .name = "triple", .summary = "3x", .inputs = one, .n_inputs = 1, .outputs = one,
	  .n_outputs = 1, .flags = ST_LAYER_ACTIVATION, .reshape = same_shape },
	{ .name = "refuser", .summary = "never runs", .inputs = one, .n_inputs = 1, .outputs = one,
	  .n_outputs = 1, .reshape = same_shape },
	{ .name = "minus_three", .summary = "x - 3", .inputs = one, .n_inputs = 1, .outputs = one,
	  .n_outputs = 1, .flags = ST_LAYER_ACTIVATION, .reshape = same_shape },
	{ .name = "no_impl", .summary = "has no implementation", .inputs = one, .n_inputs = 1,
	  .outputs = one, .n_outputs = 1, .reshape = same_shape },
	{ .name = "plus_channel", .summary = "x + its channel index", .inputs = one, .n_inputs = 1,
	  .outputs = one, .n_outputs = 1, .reshape = same_shape },
	{ .name = "scale_rt", .summary = "factor * x + 0.25", .inputs = one, .n_inputs = 1, .outputs = one,
	  .n_outputs = 1, .params = scale_rt_params, .n_params = 1, .reshape = same_shape },
};
static const st_impl_desc impls[] = {
	{ .layer = "add_bias", .backend = "cpu", .layouts = ST_LAYOUT_BIT(ST_LAYOUT_NCHW),
	  .dtypes = ST_DTYPE_BIT(ST_DTYPE_FLOAT32), .run = add_bias_run },
	{ .layer = "twice_nhwc", .backend = "cpu", .layouts = ST_LAYOUT_BIT(ST_LAYOUT_NHWC),
	  .dtypes = ST_DTYPE_BIT(ST_DTYPE_FLOAT32), .run = twice_run },
	{ .layer = "half_copy", .backend = "cpu", .layouts = ST_LAYOUT_BIT(ST_LAYOUT_NCHW),
	  .dtypes = ST_DTYPE_BIT(ST_DTYPE_FLOAT16), .run = half_copy_run },
	{ .layer = "triple", .backend = "cpu",
	  .layouts = ST_LAYOUT_BIT(ST_LAYOUT_NCHW) | ST_LAYOUT_BIT(ST_LAYOUT_NHWC),
	  .dtypes = ST_DTYPE_BIT(ST_DTYPE_FLOAT32), .prepare = triple_prepare, .run = triple_run },
	{ .layer = "minus_three", .backend = "cpu", .layouts = ST_LAYOUT_BIT(ST_LAYOUT_NCHW),
	  .dtypes = ST_DTYPE_BIT(ST_DTYPE_FLOAT32), .flags = ST_IMPL_FUSES_RELU_CLIP, .run = minus_three_run },
	{ .layer = "refuser", .backend = "cpu", .layouts = ST_LAYOUT_BIT(ST_LAYOUT_NCHW),
	  .dtypes = ST_DTYPE_BIT(ST_DTYPE_FLOAT32), .prepare = refuse_prepare, .run = twice_run },
	{ .layer = "plus_channel", .backend = "cpu",
	  .layouts = ST_LAYOUT_BIT(ST_LAYOUT_NCHW) | ST_LAYOUT_BIT(ST_LAYOUT_NHWC),
	  .dtypes = ST_DTYPE_BIT(ST_DTYPE_FLOAT32), .flags = ST_IMPL_CHOOSES_LAYOUT, .run = plus_channel_run,
	  .choose_layout = plus_channel_choose },
	/* Says it chooses but cannot: refused (no_impl stays without one). */
	{ .layer = "no_impl", .backend = "cpu", .layouts = ST_LAYOUT_BIT(ST_LAYOUT_NCHW),
	  .dtypes = ST_DTYPE_BIT(ST_DTYPE_FLOAT32), .flags = ST_IMPL_CHOOSES_LAYOUT, .run = twice_run },
	{ .layer = "no_impl", .backend = "cpu", .layouts = ST_LAYOUT_BIT(ST_LAYOUT_NCHW),
	  .dtypes = ST_DTYPE_BIT(ST_DTYPE_FLOAT32) | ST_DTYPE_BIT(ST_DTYPE_FLOAT16), .flags = ST_IMPL_CHOOSES_DTYPE,
	  .run = twice_run },
	{ .layer = "scale_rt", .backend = "cpu", .layouts = ST_LAYOUT_BIT(ST_LAYOUT_NCHW),
	  .dtypes = ST_DTYPE_BIT(ST_DTYPE_FLOAT32), .run = scale_rt_cpu_run },
	/* The fake device: add_bias in any layout and float type, applying
	 * relu itself; triple with scratch; scale_rt with device state. */
	{ .layer = "add_bias", .backend = "fake",
	  .layouts = ST_LAYOUT_BIT(ST_LAYOUT_NCHW) | ST_LAYOUT_BIT(ST_LAYOUT_NHWC),
	  .dtypes = ST_DTYPE_BIT(ST_DTYPE_FLOAT32) | ST_DTYPE_BIT(ST_DTYPE_FLOAT16),
	  .flags = ST_IMPL_FUSES_RELU_CLIP, .prepare = fake_add_bias_prepare, .run = fake_add_bias_run },
	{ .layer = "triple", .backend = "fake", .layouts = ST_LAYOUT_BIT(ST_LAYOUT_NCHW),
	  .dtypes = ST_DTYPE_BIT(ST_DTYPE_FLOAT32), .prepare = triple_prepare, .run = fake_triple_run },
	{ .layer = "scale_rt", .backend = "fake", .layouts = ST_LAYOUT_BIT(ST_LAYOUT_NCHW),
	  .dtypes = ST_DTYPE_BIT(ST_DTYPE_FLOAT32), .prepare = fake_scale_rt_prepare, .run = fake_scale_rt_run,
	  .release = fake_scale_rt_release },
};
static const st_param_desc no_params[1];
static const st_activation_desc negate_desc = { .name = "negate_test", .summary = "-x (tests)",
	                                        .params = no_params, .n_params = 0 };
static const st_activation_impl negate_impl = { .activation = "negate_test", .apply = negate };
static const st_plugin_info info = { "engine_test", "tests", "layers for engine tests", "1.0" };

int st_plugin_entry(const st_host_api *api, st_plugin_ctx *ctx);

int
st_plugin_entry(const st_host_api *api, st_plugin_ctx *ctx)
{
	host_api = api;
	api->declare(ctx, &info);
	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
		api->register_layer(ctx, &types[i]);
	for (size_t i = 0; i < sizeof impls / sizeof impls[0]; i++)
		api->register_impl(ctx, &impls[i]);
	api->register_activation(ctx, &negate_desc);
	api->register_activation_impl(ctx, &negate_impl);
	return 0;
}
