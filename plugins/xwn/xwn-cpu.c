/* CPU implementations of the XWN collection. The transform happens in
 * prepare, when the weights have been bound (once per binding: see
 * st_exec_layer.weights_generation); run is then a plain convolution on the
 * transformed copy, through std's own convolution code. */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "k-nn.h"
#include "xwn.h"

static bool
reference_wanted(void)
{
	const char *v = getenv("STRATA_KERNELS");
	return v != NULL && strcmp(v, "reference") == 0;
}

static bool
same_settings(const k_xwn_settings *a, const k_xwn_settings *b)
{
	return a->transform == b->transform && a->bit == b->bit && a->max_scale == b->max_scale &&
	       a->pruning == b->pruning && a->prun_weight == b->prun_weight;
}

/*
 * The transformed copy of weight tensor index ([A][B][taps...], the layout
 * of k_xwn_apply) into *copy (reallocated; caller frees), with its figures
 * added to total. Returns 0, or -1 after api->fail.
 */
static int
transform_weight(st_exec_layer *L, const st_host_api *api, int index, bool transposed,
                 const k_xwn_settings *set, float **copy, k_xwn_stats *total)
{
	const st_tensor *t = &L->weights[index];
	if (index >= L->n_weights || t->data == NULL || t->shape.rank < 3 ||
	    t->shape.dtype != ST_DTYPE_FLOAT32) {
		api->fail(L, "weight tensor %d is missing or not float32 of rank 3 or more", index);
		return -1;
	}
	int64_t taps = 1;
	for (int i = 2; i < t->shape.rank; i++)
		taps *= t->shape.dims[i];
	int64_t n = t->shape.dims[0] * t->shape.dims[1] * taps;
	float *buf = realloc(*copy, sizeof *buf * (size_t)(n > 0 ? n : 1));
	if (buf == NULL) {
		api->fail(L, "out of memory for the transformed weights (%" PRId64 " floats)", n);
		return -1;
	}
	*copy = buf;
	k_xwn_stats stats;
	int (*apply)(const float *, float *, int64_t, int64_t, int64_t, bool, const k_xwn_settings *, k_xwn_stats *) =
		reference_wanted() ? k_xwn_apply_ref : k_xwn_apply;
	if (apply(t->data, buf, t->shape.dims[0], t->shape.dims[1], taps, transposed, set, &stats) != 0) {
		api->fail(L, "the XWN transform failed (out of memory, or bit %d above %d)", set->bit,
		          K_XWN_MAX_BIT);
		return -1;
	}
	total->slices += stats.slices;
	total->pruned += stats.pruned;
	total->weights += stats.weights;
	total->levels = stats.levels;
	for (int k = 0; k < K_XWN_MAX_LEVELS; k++)
		total->level_count[k] += stats.level_count[k];
	return 0;
}

/* The layer's state, zeroed at the first prepare and kept after; NULL
 * after api->fail when out of memory. */
static void *
state_of(st_exec_layer *L, const st_host_api *api, size_t size)
{
	if (L->state == NULL) {
		L->state = calloc(1, size);
		if (L->state == NULL)
			api->fail(L, "out of memory");
	}
	return L->state;
}

/* The status line after a run: what the transform did. */
static void
report_status(st_exec_layer *L, const st_exec_ctx *ctx, const k_xwn_settings *set, const k_xwn_stats *st)
{
	if (!k_xwn_active(set) || !ST_HOST_HAS(ctx->api, status))
		return;
	char transform[48] = "";
	if (set->transform && set->bit >= 1)
		snprintf(transform, sizeof transform, "%d-bit XWN", set->bit);
	if (set->pruning)
		ctx->api->status(L, ST_SEVERITY_INFO, "%s%s%.1f%% of %" PRId64 " slices pruned", transform,
		                 *transform ? ", " : "", st->slices ? 100.0 * (double)st->pruned / (double)st->slices : 0.0,
		                 st->slices);
	else
		ctx->api->status(L, ST_SEVERITY_INFO, "%s weights", transform);
}

/* ---- XWN convolution and transposed convolution ---- */

typedef struct conv_state {
	void *inner;          /* std's convolution state */
	bool transposed;
	uint64_t generation;  /* of the weights transformed */
	const void *source;   /* the bound data transformed */
	k_xwn_settings set;
	float *weights;       /* the transformed filter; NULL when the settings change nothing */
	st_tensor view[ST_MAX_WEIGHTS]; /* the weights std's code sees */
	/* The weights_generation std's code sees: a new one whenever the view
	 * changes, so that it packs the transformed filter again even when the
	 * copy landed at the same address. */
	uint64_t view_generation;
	k_xwn_stats stats;
} conv_state;

/* L as std's convolution code sees it: the transformed filter, its state. */
static st_exec_layer
inner_layer(const st_exec_layer *L, conv_state *s)
{
	st_exec_layer in = *L;
	in.weights = s->view;
	in.state = s->inner;
	return in;
}

static int
conv_prepare_as(st_exec_layer *L, const st_host_api *api, bool transposed)
{
	conv_state *s = state_of(L, api, sizeof *s);
	if (s == NULL)
		return -1;
	k_xwn_settings set = xwn_settings_of(L->params, transposed ? XWN_DECONV_SET : XWN_CONV_SET);
	if (L->n_weights < 1 || L->n_weights > ST_MAX_WEIGHTS) {
		api->fail(L, "expected the filter weights");
		return -1;
	}
	bool fresh = L->weights_generation == 0 || L->weights_generation != s->generation ||
	             L->weights[0].data != s->source || !same_settings(&set, &s->set) ||
	             transposed != s->transposed;
	if (fresh) {
		s->generation = 0;
		s->set = set;
		s->transposed = transposed;
		memset(&s->stats, 0, sizeof s->stats);
		if (k_xwn_active(&set)) {
			if (transform_weight(L, api, 0, transposed, &set, &s->weights, &s->stats) != 0)
				return -1;
		} else {
			free(s->weights);
			s->weights = NULL;
		}
		s->generation = L->weights_generation;
		s->source = L->weights[0].data;
		s->view_generation++;
	}
	for (int i = 0; i < L->n_weights; i++)
		s->view[i] = L->weights[i];
	if (s->weights != NULL)
		s->view[0].data = s->weights;
	st_exec_layer in = inner_layer(L, s);
	in.weights_generation = s->view_generation;
	int rc = transposed ? std_deconv_prepare(&in, api) : std_conv_prepare(&in, api);
	s->inner = in.state;
	L->scratch_bytes = in.scratch_bytes;
	return rc;
}

static int
xwn_conv_prepare(st_exec_layer *L, const st_host_api *api)
{
	return conv_prepare_as(L, api, false);
}

static int
xwn_deconv_prepare(st_exec_layer *L, const st_host_api *api)
{
	return conv_prepare_as(L, api, true);
}

static int
xwn_conv_run(st_exec_layer *L, const st_exec_ctx *ctx)
{
	conv_state *s = L->state;
	st_exec_layer in = inner_layer(L, s);
	int rc = s->transposed ? std_deconv_run(&in, ctx) : std_conv_run(&in, ctx);
	report_status(L, ctx, &s->set, &s->stats);
	return rc;
}

static void
xwn_conv_release(st_exec_layer *L)
{
	conv_state *s = L->state;
	if (s == NULL)
		return;
	st_exec_layer in = *L;
	in.state = s->inner;
	std_window_release(&in);
	free(s->weights);
	free(s);
	L->state = NULL;
}

/* ---- cascade convolution ---- */

typedef struct cascade_state {
	int n;                 /* stages */
	int slots;
	bool reference;
	int64_t mid, cat_channels, plane, in_channels;
	k_window first, next, pointwise;
	size_t cat_bytes;      /* the concatenation, at the start of the scratch */
	uint64_t generation;
	const void *source[ST_MAX_WEIGHTS];
	k_xwn_settings set;
	float *copy[ST_MAX_WEIGHTS]; /* transformed parts; NULL when untouched */
	const float *weights[ST_MAX_WEIGHTS]; /* what run uses: copies or the bound data */
	k_xwn_stats stats;
} cascade_state;

static void
cascade_release(st_exec_layer *L)
{
	cascade_state *s = L->state;
	if (s == NULL)
		return;
	for (int i = 0; i < ST_MAX_WEIGHTS; i++)
		free(s->copy[i]);
	free(s);
	L->state = NULL;
}

/* A 3-tap stage (3 x 3 in 2-D) with stride 1 and padding 1 of one sample. */
static k_window
stage_window(const st_shape *in, int64_t in_channels, int64_t mid)
{
	k_window w = { .spatial = in->rank - 2, .batch = 1, .in_channels = in_channels,
	               .out_channels = mid, .groups = 1 };
	for (int i = 0; i < w.spatial; i++) {
		w.in[i] = w.out[i] = in->dims[2 + i];
		w.kernel[i] = 3;
		w.stride[i] = w.dilation[i] = 1;
		w.pad_begin[i] = w.pad_end[i] = 1;
	}
	return w;
}

static size_t
round_up(size_t n)
{
	return (n + 63) / 64 * 64;
}

static int
cascade_prepare(st_exec_layer *L, const st_host_api *api)
{
	if (L->n_inputs < 1 || L->n_outputs < 1) {
		api->fail(L, "a cascade convolution needs one input and one output");
		return -1;
	}
	const st_shape *in = &L->inputs[0].shape, *out = &L->outputs[0].shape;
	if (in->dtype != ST_DTYPE_FLOAT32 || out->dtype != ST_DTYPE_FLOAT32 ||
	    L->inputs[0].layout != ST_LAYOUT_NCHW || L->outputs[0].layout != ST_LAYOUT_NCHW ||
	    in->rank < 3 || in->rank > 5 || out->rank != in->rank) {
		api->fail(L, "the CPU cascade convolution needs float32 NCHW images of rank 3 to 5");
		return -1;
	}
	cascade_state *s = state_of(L, api, sizeof *s);
	if (s == NULL)
		return -1;
	int spatial = in->rank - 2;
	int n = xwn_cascade_stages(L->params[CASCADE_KERNEL_SIZE].i);
	bool bias = L->params[CASCADE_BIAS].b;
	int64_t mid = xwn_cascade_mid(L->params, in->dims[1]);
	if (n < 1 || n + 1 + bias > L->n_weights || mid < 1) {
		api->fail(L, "the cascade has %d stages of %" PRId64 " channels and %d weight tensors", n, mid,
		          L->n_weights);
		return -1;
	}
	/* The parts' weights, as reshape declared them. */
	int64_t dims[5];
	for (int j = 0; j < n; j++) {
		char what[32];
		snprintf(what, sizeof what, "stage %d", j);
		dims[0] = mid;
		dims[1] = j == 0 ? in->dims[1] : mid;
		for (int i = 0; i < spatial; i++)
			dims[2 + i] = 3;
		if (std_check_weight(L, api, j, what, 2 + spatial, dims) != 0)
			return -1;
	}
	dims[0] = out->dims[1];
	dims[1] = mid * n;
	for (int i = 0; i < spatial; i++)
		dims[2 + i] = 1;
	if (std_check_weight(L, api, n, "pointwise", 2 + spatial, dims) != 0 ||
	    (bias && std_check_weight(L, api, n + 1, "pointwise bias", 1, &out->dims[1]) != 0))
		return -1;

	/* The pointwise convolution: the layer's stride and pads. */
	const st_value *stride = &L->params[CASCADE_STRIDE], *pads = &L->params[CASCADE_PADS];
	if ((stride->count != 1 && stride->count != spatial) ||
	    (pads->count != 1 && pads->count != spatial && pads->count != 2 * spatial)) {
		api->fail(L, "stride or pads do not fit %d spatial axes", spatial);
		return -1;
	}
	k_window pw = { .spatial = spatial, .batch = in->dims[0], .in_channels = mid * n,
	                .out_channels = out->dims[1], .groups = 1 };
	for (int i = 0; i < spatial; i++) {
		pw.in[i] = in->dims[2 + i];
		pw.out[i] = out->dims[2 + i];
		pw.kernel[i] = pw.dilation[i] = 1;
		pw.stride[i] = stride->ints[stride->count == 1 ? 0 : i];
		pw.pad_begin[i] = pads->ints[pads->count == 2 * spatial ? i : pads->count == 1 ? 0 : i];
		pw.pad_end[i] = pads->ints[pads->count == 2 * spatial ? spatial + i : pads->count == 1 ? 0 : i];
		int64_t computed = (pw.in[i] + pw.pad_begin[i] + pw.pad_end[i] - 1) / pw.stride[i] + 1;
		if (pw.stride[i] < 1 || computed != pw.out[i]) {
			api->fail(L, "spatial axis %d: the pointwise convolution computes %" PRId64
			          " outputs, but the output has %" PRId64, i, computed, pw.out[i]);
			return -1;
		}
	}
	s->n = n;
	s->mid = mid;
	s->in_channels = in->dims[1];
	s->cat_channels = mid * n;
	s->plane = 1;
	for (int i = 0; i < spatial; i++)
		s->plane *= in->dims[2 + i];
	s->first = stage_window(in, in->dims[1], mid);
	s->next = stage_window(in, mid, mid);
	s->pointwise = pw;
	s->reference = reference_wanted();
	s->slots = k_thread_slots();
	s->cat_bytes = round_up(sizeof(float) * (size_t)(in->dims[0] * s->cat_channels * s->plane));
	size_t conv = 0;
	if (!s->reference) {
		size_t a = k_conv_scratch_bytes(&s->first, s->slots), b = k_conv_scratch_bytes(&s->next, s->slots),
		       c = k_conv_scratch_bytes(&s->pointwise, s->slots);
		conv = a > b ? a : b;
		conv = conv > c ? conv : c;
	}
	L->scratch_bytes = s->cat_bytes + conv;
	k_gemm_init();

	/* The transform, once per binding. */
	k_xwn_settings set = xwn_settings_of(L->params, CASCADE_XWN_SET);
	bool fresh = L->weights_generation == 0 || L->weights_generation != s->generation ||
	             !same_settings(&set, &s->set);
	for (int j = 0; j <= n + bias && !fresh; j++)
		fresh = L->weights[j].data != s->source[j];
	if (fresh) {
		s->generation = 0;
		s->set = set;
		memset(&s->stats, 0, sizeof s->stats);
		for (int j = 0; j < ST_MAX_WEIGHTS; j++) {
			s->source[j] = j < L->n_weights ? L->weights[j].data : NULL;
			s->weights[j] = j < L->n_weights ? L->weights[j].data : NULL;
		}
		for (int j = 0; j <= n; j++) {
			if (!k_xwn_active(&set)) {
				free(s->copy[j]);
				s->copy[j] = NULL;
				continue;
			}
			if (transform_weight(L, api, j, false, &set, &s->copy[j], &s->stats) != 0)
				return -1;
			s->weights[j] = s->copy[j];
		}
		s->generation = L->weights_generation;
	}
	return 0;
}

static void
conv(const cascade_state *s, const k_window *w, const float *x, const float *weights, const float *bias,
     float *y, void *scratch, const st_exec_ctx *ctx)
{
	if (s->reference)
		k_conv_ref(w, x, weights, bias, y);
	else
		k_conv(w, x, weights, bias, y, scratch, s->slots, ctx);
}

static int
cascade_run(st_exec_layer *L, const st_exec_ctx *ctx)
{
	const cascade_state *s = L->state;
	float *cat = L->scratch;
	void *scratch = (char *)L->scratch + s->cat_bytes;
	const float *x = L->inputs[0].data;
	int64_t plane = s->plane, batch = L->inputs[0].shape.dims[0];
	/* Stage j of sample b writes channels [j * mid, (j + 1) * mid) of the
	 * sample's concatenation, and stage j + 1 reads them from there. */
	for (int64_t b = 0; b < batch; b++) {
		float *c = cat + b * s->cat_channels * plane;
		conv(s, &s->first, x + b * s->in_channels * plane, s->weights[0], NULL, c, scratch, ctx);
		for (int j = 1; j < s->n; j++)
			conv(s, &s->next, c + (j - 1) * s->mid * plane, s->weights[j], NULL, c + j * s->mid * plane,
			     scratch, ctx);
	}
	const float *bias = L->params[CASCADE_BIAS].b ? s->weights[s->n + 1] : NULL;
	conv(s, &s->pointwise, cat, s->weights[s->n], bias, L->outputs[0].data, scratch, ctx);
	report_status(L, ctx, &s->set, &s->stats);
	return 0;
}

#define CPU_FP32_NCHW .backend = "cpu", .layouts = ST_LAYOUT_BIT(ST_LAYOUT_NCHW), \
	.dtypes = ST_DTYPE_BIT(ST_DTYPE_FLOAT32)

const st_impl_desc xwn_impls[] = {
	/* std_conv_run applies an attached relu or clip (ST_IMPL_FUSES_RELU_CLIP). */
	{ .layer = "xwn_convolution", CPU_FP32_NCHW, .flags = ST_IMPL_FUSES_RELU_CLIP, .prepare = xwn_conv_prepare,
	  .run = xwn_conv_run, .release = xwn_conv_release },
	{ .layer = "xwn_deconvolution", CPU_FP32_NCHW, .prepare = xwn_deconv_prepare, .run = xwn_conv_run,
	  .release = xwn_conv_release },
	{ .layer = "xwn_cascade_convolution", CPU_FP32_NCHW, .prepare = cascade_prepare,
	  .run = cascade_run, .release = cascade_release },
};
const int xwn_impl_count = STD_COUNT(xwn_impls);
