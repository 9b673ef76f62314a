/* CPU implementations of the sliding-window layers: convolution,
 * deconvolution, pooling and global pooling, FP32 in NCHW (and the other
 * layouts where said); 1x1 and depthwise convolutions channels last also
 * on FP16 tensors, computing in FP32. */
#include "config.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>

#include "k-cpu.h"
#include "k-nchwc.h"
#include "k-nhwc.h"
#include "k-nn.h"
#include "std.h"

/* What prepare works out once and run uses. */
typedef struct window_state {
	k_window w;
	int slots;      /* scratch regions prepared for, one per thread at most */
	bool reference; /* STRATA_KERNELS=reference: the plain loops */
	k_pool_mode pool_mode;
	bool count_include_pad;
	/* Convolution filters packed for the SGEMM (k_conv_pack), or NULL: made
	 * when weights are bound, kept while the window stays the same (the
	 * packed form depends on the input size too: small images take the
	 * swapped product, Winograd its tile size). */
	void *packed;
	size_t packed_bytes;
	uint64_t generation;  /* L->weights_generation they were packed from */
	const void *source;   /* and the data */
	bool packed_nhwc;     /* and for which layout */
	bool packed_blocked;
	k_window packed_for;  /* and which window */
	/* An attached relu or clip, applied by the kernels as they write the
	 * output (ST_IMPL_FUSES_RELU_CLIP); off for other activations, which
	 * the host applies. */
	k_post post;
	/* Channels last (std_conv_choose_layout): the pointwise product or the
	 * depthwise loops of k-nhwc.h, with packed filters for them. */
	bool nhwc;
	/* Channels last on float16 tensors (std_conv_choose_dtype): the same
	 * kernels' float16 forms, which widen and narrow in cache. */
	bool half;
	/* Channels blocked by sixteen (ST_LAYOUT_NCHW16C): k_conv_nchwc with
	 * filters packed for it, k_pool_nchwc, k_global_pool_nchwc. */
	bool blocked;
	/* A pooling computed after the convolution (L->pool, ABI 2.5): its
	 * window and kind; band by band with the first-layer kernel
	 * (k_conv_pool_direct) where that fits, else the convolution into the
	 * scratch (unpooled_floats of it, then the convolution's own) and the
	 * pooling from there. */
	bool pooled;
	bool pool_banded;
	k_window pool;
	size_t unpooled_floats;
} window_state;

/* STRATA_KERNELS=reference runs the reference kernels instead of the fast
 * ones, to tell a fast-path bug from a problem of the model. */
static bool
reference_wanted(void)
{
	const char *v = getenv("STRATA_KERNELS");
	return v != NULL && strcmp(v, "reference") == 0;
}

/* The layer's state, allocated at the first prepare and kept after. */
static window_state *
state_of(st_exec_layer *L)
{
	if (L->state == NULL) {
		L->state = calloc(1, sizeof(window_state));
		if (L->state == NULL)
			abort();
	}
	return L->state;
}

void
std_window_release(st_exec_layer *L)
{
	window_state *s = L->state;
	if (s != NULL)
		free(s->packed);
	free(s);
	L->state = NULL;
}

/* Whether w is a 1x1, stride-1, unpadded convolution without groups. */
static bool
pointwise(const k_window *w)
{
	if (w->groups != 1)
		return false;
	for (int i = 0; i < w->spatial; i++) {
		if (w->kernel[i] != 1 || w->stride[i] != 1 || w->pad_begin[i] != 0 || w->pad_end[i] != 0)
			return false;
	}
	return true;
}

/* Positions of w's output: batch x spatial. */
static int64_t
positions(const k_window *w)
{
	int64_t n = w->batch;
	for (int i = 0; i < w->spatial; i++)
		n *= w->out[i];
	return n;
}

/* Bytes of the filters packed for s's path. */
static size_t
conv_packed_bytes(const window_state *s, const k_window *w)
{
	if (s->reference)
		return 0;
	if (s->blocked)
		return k_conv_nchwc_packed_floats(w) * sizeof(float);
	if (s->nhwc && pointwise(w))
		return k_pointwise_nhwc_packed_bytes(positions(w), w->in_channels, w->out_channels);
	if (s->nhwc)
		return k_dwconv_nhwc_packed_floats(w) * sizeof(float);
	return k_conv_packed_bytes(w);
}

/* Whether a and b are the same window, member by member. */
static bool
same_window(const k_window *a, const k_window *b)
{
	if (a->spatial != b->spatial || a->batch != b->batch || a->in_channels != b->in_channels ||
	    a->out_channels != b->out_channels || a->groups != b->groups)
		return false;
	for (int i = 0; i < a->spatial; i++) {
		if (a->in[i] != b->in[i] || a->out[i] != b->out[i] || a->kernel[i] != b->kernel[i] ||
		    a->stride[i] != b->stride[i] || a->dilation[i] != b->dilation[i] ||
		    a->pad_begin[i] != b->pad_begin[i] || a->pad_end[i] != b->pad_end[i])
			return false;
	}
	return true;
}

/*
 * Packs the filters for w unless those packed last are still right: same
 * binding (weights_generation, 0 meaning "always pack"), same data, same
 * layout, same window, same size (which also changes with the SIMD
 * level). Returns 0, or -1 after api->fail.
 */
static int
conv_pack(st_exec_layer *L, const st_host_api *api, window_state *s, const k_window *w)
{
	size_t bytes = conv_packed_bytes(s, w);
	if (bytes == 0) {
		free(s->packed);
		s->packed = NULL;
		s->packed_bytes = 0;
		return 0;
	}
	const void *data = L->weights[0].data;
	if (s->packed != NULL && bytes == s->packed_bytes && L->weights_generation != 0 &&
	    L->weights_generation == s->generation && data == s->source && s->packed_nhwc == s->nhwc &&
	    s->packed_blocked == s->blocked &&
	    same_window(&s->packed_for, w))
		return 0;
	if (bytes != s->packed_bytes || s->packed == NULL) {
		free(s->packed);
		s->packed = aligned_alloc(64, (bytes + 63) / 64 * 64);
		s->packed_bytes = s->packed ? bytes : 0;
		if (s->packed == NULL) {
			api->fail(L, "out of memory for the packed filters (%zu bytes)", bytes);
			return -1;
		}
	}
	if (s->blocked)
		k_conv_nchwc_pack(w, data, s->packed);
	else if (s->nhwc && pointwise(w))
		k_pointwise_nhwc_pack(positions(w), w->in_channels, w->out_channels, data, s->packed);
	else if (s->nhwc)
		k_dwconv_nhwc_pack(w, data, s->packed);
	else
		k_conv_pack(w, data, s->packed);
	s->generation = L->weights_generation;
	s->source = data;
	s->packed_nhwc = s->nhwc;
	s->packed_blocked = s->blocked;
	s->packed_for = *w;
	return 0;
}

#define NCHW_ONLY ST_LAYOUT_BIT(ST_LAYOUT_NCHW)
#define ANY_LAYOUT (ST_LAYOUT_BIT(ST_LAYOUT_NCHW) | ST_LAYOUT_BIT(ST_LAYOUT_NHWC) | ST_LAYOUT_BIT(ST_LAYOUT_NCHW16C))

/* Checks that input 0 and output 0 are FP32 images of rank 3 to 5 in one
 * of layouts (ST_LAYOUT_BIT()s), both alike, channels-last ones of rank 4
 * (with half_ok, FP16 ones too), and returns the number of spatial axes,
 * or -1 after api->fail. */
static int
image_tensors_in(st_exec_layer *L, const st_host_api *api, unsigned layouts, bool half_ok)
{
	if (L->n_inputs < 1 || L->n_outputs < 1) {
		api->fail(L, "%s needs one input and one output", L->desc->name);
		return -1;
	}
	const st_shape *in = &L->inputs[0].shape, *out = &L->outputs[0].shape;
	bool half = half_ok && in->dtype == ST_DTYPE_FLOAT16 && out->dtype == ST_DTYPE_FLOAT16 &&
	            L->inputs[0].layout == ST_LAYOUT_NHWC;
	if (!half && (in->dtype != ST_DTYPE_FLOAT32 || out->dtype != ST_DTYPE_FLOAT32)) {
		api->fail(L, "the CPU %s computes in float32, but its input is %s and its output %s",
		          L->desc->name, api->dtype_name(in->dtype), api->dtype_name(out->dtype));
		return -1;
	}
	st_layout layout = L->inputs[0].layout;
	bool ok = layout == L->outputs[0].layout && (unsigned)layout < ST_LAYOUT_COUNT &&
	          (layouts & ST_LAYOUT_BIT(layout)) && (layout != ST_LAYOUT_NHWC || in->rank == 4);
	if (!ok) {
		api->fail(L, "the CPU %s needs NCHW tensors%s", L->desc->name,
		          layouts != NCHW_ONLY ? ", or NHWC ones of rank 4 or NCHW16C ones, alike for input and output"
		                               : "");
		return -1;
	}
	if (in->rank < 3 || in->rank > 2 + K_MAX_SPATIAL || out->rank != in->rank) {
		char a[SHAPE_TEXT], b[SHAPE_TEXT];
		api->fail(L, "input %s and output %s are not both images of rank 3 to 5",
		          std_shape_text(api, in, a), std_shape_text(api, out, b));
		return -1;
	}
	return in->rank - 2;
}

static int
image_tensors(st_exec_layer *L, const st_host_api *api)
{
	return image_tensors_in(L, api, NCHW_ONLY, false);
}

/* A list parameter as one value per spatial axis (one value for all axes,
 * or one per axis), each at least minimum. */
static int
per_axis(st_exec_layer *L, const st_host_api *api, int param, int spatial, int64_t minimum, int64_t *out)
{
	const st_value *v = &L->params[param];
	const char *name = L->desc->params[param].name;
	if (v->count != 1 && v->count != spatial) {
		api->fail(L, "%s has %d values for %d spatial axes", name, v->count, spatial);
		return -1;
	}
	for (int i = 0; i < spatial; i++) {
		out[i] = v->ints[v->count == 1 ? 0 : i];
		if (out[i] < minimum) {
			api->fail(L, "%s must hold values of at least %" PRId64, name, minimum);
			return -1;
		}
	}
	return 0;
}

/* Parameter positions of one type's window. */
typedef struct window_params {
	int kernel, stride, dilation, padding, pads;
} window_params;

/* Reads kernel, stride, dilation and explicit pads into w for the input's
 * spatial axes, as the type's reshape reads them (std-conv.c). */
static int
window_read(st_exec_layer *L, const st_host_api *api, const window_params *p, int spatial, k_window *w)
{
	const st_shape *in = &L->inputs[0].shape;
	*w = (k_window){ .spatial = spatial, .batch = in->dims[0], .in_channels = in->dims[1],
	                 .out_channels = L->outputs[0].shape.dims[1], .groups = 1 };
	for (int i = 0; i < spatial; i++) {
		w->in[i] = in->dims[2 + i];
		w->out[i] = L->outputs[0].shape.dims[2 + i];
	}
	if (per_axis(L, api, p->kernel, spatial, 1, w->kernel) != 0 ||
	    per_axis(L, api, p->stride, spatial, 1, w->stride) != 0 ||
	    per_axis(L, api, p->dilation, spatial, 1, w->dilation) != 0)
		return -1;
	if (L->params[p->padding].i != PADDING_EXPLICIT)
		return 0;
	const st_value *pads = &L->params[p->pads];
	if (pads->count != 1 && pads->count != spatial && pads->count != 2 * spatial) {
		api->fail(L, "pads has %d values for %d spatial axes", pads->count, spatial);
		return -1;
	}
	for (int i = 0; i < spatial; i++) {
		if (pads->count == 2 * spatial) {
			w->pad_begin[i] = pads->ints[i];
			w->pad_end[i] = pads->ints[spatial + i];
		} else {
			w->pad_begin[i] = w->pad_end[i] = pads->ints[pads->count == 1 ? 0 : i];
		}
		if (w->pad_begin[i] < 0 || w->pad_end[i] < 0) {
			api->fail(L, "pads must not be negative");
			return -1;
		}
	}
	return 0;
}

/* The extent (kernel - 1) * dilation + 1 of axis i, or -1 on overflow. */
static int64_t
extent(const k_window *w, int i)
{
	if (w->dilation[i] != 0 && w->kernel[i] - 1 > (INT64_MAX - 1) / w->dilation[i])
		return -1;
	return (w->kernel[i] - 1) * w->dilation[i] + 1;
}

/* Fails unless the output size computed here is the one reshape gave. */
static int
check_output(st_exec_layer *L, const st_host_api *api, int i, int64_t computed)
{
	if (computed == L->outputs[0].shape.dims[2 + i])
		return 0;
	api->fail(L, "spatial axis %d: the kernel computes %" PRId64 " outputs, but the output has %" PRId64,
	          i, computed, L->outputs[0].shape.dims[2 + i]);
	return -1;
}

/*
 * Pads and output sizes of a convolution or pooling, by the rule of
 * window_output_sizes in std-conv.c: same modes give ceil(size / stride)
 * outputs with the odd padding at the end (same) or the beginning
 * (same_lower); ceil_mode drops a last window that starts in the right
 * padding.
 */
static int
window_sizes(st_exec_layer *L, const st_host_api *api, int padding, bool ceil_mode, k_window *w)
{
	for (int i = 0; i < w->spatial; i++) {
		int64_t size = w->in[i], stride = w->stride[i], span = extent(w, i), out;
		if (span < 0) {
			api->fail(L, "the kernel of spatial axis %d is too large", i);
			return -1;
		}
		if (padding == PADDING_SAME || padding == PADDING_SAME_LOWER) {
			out = size / stride + (size % stride != 0);
			int64_t needed = (out - 1) * stride + span;
			int64_t total = needed > size ? needed - size : 0;
			int64_t smaller = total / 2, larger = total - smaller;
			w->pad_begin[i] = padding == PADDING_SAME ? smaller : larger;
			w->pad_end[i] = padding == PADDING_SAME ? larger : smaller;
		} else {
			if (padding == PADDING_VALID)
				w->pad_begin[i] = w->pad_end[i] = 0;
			int64_t padded = size + w->pad_begin[i] + w->pad_end[i];
			if (span > padded) {
				api->fail(L, "on spatial axis %d the window spans more than the padded input", i);
				return -1;
			}
			out = (padded - span) / stride + 1;
			if (ceil_mode && (padded - span) % stride != 0) {
				out++;
				if ((out - 1) * stride >= size + w->pad_begin[i])
					out--;
			}
		}
		if (check_output(L, api, i, out) != 0)
			return -1;
	}
	return 0;
}

/* Fails unless the output's channels are the num_output parameter's (at
 * position param). */
static int
num_output_matches(st_exec_layer *L, const st_host_api *api, int64_t channels, int param)
{
	if (channels == L->params[param].i)
		return 0;
	api->fail(L, "the output has %" PRId64 " channels, but num_output is %" PRId64, channels, L->params[param].i);
	return -1;
}

/* Checks groups, the filter and (when the bias parameter is on) the bias:
 * filters are first_dim x second_dim x kernel.... */
static int
check_filters(st_exec_layer *L, const st_host_api *api, const k_window *w, int64_t first_dim,
              int64_t second_dim, bool bias)
{
	if (w->groups < 1 || w->in_channels % w->groups != 0 || w->out_channels % w->groups != 0) {
		api->fail(L, "groups %" PRId64 " does not divide the %" PRId64 " input and %" PRId64
		          " output channels", w->groups, w->in_channels, w->out_channels);
		return -1;
	}
	int64_t dims[2 + K_MAX_SPATIAL] = { first_dim, second_dim };
	for (int i = 0; i < w->spatial; i++)
		dims[2 + i] = w->kernel[i];
	if (L->n_weights != (bias ? 2 : 1)) {
		api->fail(L, "expected %d weight tensors, got %d", bias ? 2 : 1, L->n_weights);
		return -1;
	}
	if (std_check_weight(L, api, 0, "filter", 2 + w->spatial, dims) != 0)
		return -1;
	return bias ? std_check_weight(L, api, 1, "bias", 1, &w->out_channels) : 0;
}

/* ---- convolution ---- */

static const window_params conv_window = {
	.kernel = CONV_KERNEL, .stride = CONV_STRIDE, .dilation = CONV_DILATION,
	.padding = CONV_PADDING, .pads = CONV_PADS,
};

/* The k_post for L's attached activation: relu, or clip with its min and
 * max, as std-activation-cpu.c computes them. */
static k_post
conv_post(const st_exec_layer *L)
{
	k_post post = { 0 };
	if (L->act == NULL)
		return post;
	if (strcmp(L->act->name, "relu") == 0) {
		post = (k_post){ .on = true, .act = K_ACT_RELU };
	} else if (strcmp(L->act->name, "clip") == 0 && L->act_params != NULL) {
		post = (k_post){ .on = true, .act = K_ACT_CLIP, .a = (float)L->act_params[CLIP_MIN].f,
			         .b = (float)L->act_params[CLIP_MAX].f };
	}
	return post;
}

static int pool_window_of(st_exec_layer *L, const st_host_api *api, window_state *s);

/* Elements of L's output 0 (a shape prepare has checked). */
static int64_t
output_elements(const st_exec_layer *L)
{
	int64_t n = 1;
	for (int i = 0; i < L->outputs[0].shape.rank; i++)
		n *= L->outputs[0].shape.dims[i];
	return n;
}

/* The pooling the host gave L to compute after it (ABI 2.5), or NULL; an
 * earlier host's st_exec_layer has no such member. */
static const st_exec_layer *
fused_pool(const st_exec_layer *L, const st_host_api *api)
{
	if (api->size < offsetof(st_host_api, abi_minor) + sizeof api->abi_minor || api->abi_minor < 5)
		return NULL;
	return L->pool;
}

/* Prepares the pooling after L's convolution (window s->w): its window in
 * s->pool, and the scratch the two need. */
static int
conv_pool_prepare(st_exec_layer *L, const st_host_api *api, window_state *s)
{
	st_exec_layer *P = (st_exec_layer *)fused_pool(L, api); /* only read, and failed through */
	window_state ps = { 0 };
	if (pool_window_of(P, api, &ps) != 0)
		return -1;
	s->pooled = true;
	s->pool = ps.w;
	s->pool_mode = ps.pool_mode;
	s->count_include_pad = ps.count_include_pad;
	s->pool_banded = !s->reference && !s->nhwc && s->packed == NULL &&
	                 k_conv_pool_fits(&s->w, &s->pool, s->pool_mode);
	if (s->pool_banded) {
		L->scratch_bytes = k_conv_pool_scratch_bytes(&s->w, &s->pool, s->slots);
		return 0;
	}
	/* Whole cache lines, so that the convolution's scratch after it stays
	 * 64-byte aligned. */
	s->unpooled_floats = (size_t)(output_elements(L) + 15) / 16 * 16;
	L->scratch_bytes += s->unpooled_floats * sizeof(float);
	return 0;
}

int
std_conv_prepare(st_exec_layer *L, const st_host_api *api)
{
	k_window w;
	int spatial = image_tensors_in(L, api, ANY_LAYOUT, true);
	if (spatial < 0 || window_read(L, api, &conv_window, spatial, &w) != 0)
		return -1;
	w.groups = L->params[CONV_GROUPS].i;
	if (num_output_matches(L, api, w.out_channels, CONV_NUM_OUTPUT) != 0 ||
	    window_sizes(L, api, (int)L->params[CONV_PADDING].i, false, &w) != 0 ||
	    check_filters(L, api, &w, w.out_channels, w.in_channels / (w.groups ? w.groups : 1),
	                  L->params[CONV_BIAS].b) != 0)
		return -1;
	window_state *s = state_of(L);
	s->w = w;
	s->reference = reference_wanted();
	s->slots = k_thread_slots();
	s->post = conv_post(L);
	s->nhwc = L->inputs[0].layout == ST_LAYOUT_NHWC;
	s->blocked = L->inputs[0].layout == ST_LAYOUT_NCHW16C;
	s->half = L->inputs[0].shape.dtype == ST_DTYPE_FLOAT16;
	if (s->nhwc && (s->reference || !(pointwise(&w) || k_dwconv_nhwc_fits(&w)))) {
		api->fail(L, "the CPU convolution runs channels last only 1x1 and depthwise layers, with the fast "
		             "kernels");
		return -1;
	}
	if (s->half && fused_pool(L, api) != NULL) {
		api->fail(L, "the CPU convolution computes a pooling after it only in float32");
		return -1;
	}
	if (s->blocked && (s->reference || !k_conv_nchwc_fits(&w) || fused_pool(L, api) != NULL)) {
		api->fail(L, "the CPU convolution runs NCHW16C tensors only with the fast kernels, in 2-D without "
		             "groups, and without a pooling after it");
		return -1;
	}
	k_gemm_init();
	if (conv_pack(L, api, s, &w) != 0)
		return -1;
	if (s->reference || s->blocked)
		L->scratch_bytes = 0;
	else if (s->nhwc && s->half)
		L->scratch_bytes = pointwise(&w) ? k_pointwise_nhwc_half_scratch_bytes(positions(&w), w.in_channels,
		                                                                       w.out_channels, s->slots)
		                                 : k_dwconv_nhwc_half_scratch_bytes(&w, s->slots);
	else if (s->nhwc)
		L->scratch_bytes = pointwise(&w) ? k_pointwise_nhwc_scratch_bytes(positions(&w), w.in_channels,
		                                                                  w.out_channels, s->slots)
		                                 : 0;
	else if (s->packed)
		L->scratch_bytes = k_conv_packed_scratch_bytes(&w, s->slots);
	else
		L->scratch_bytes = k_conv_scratch_bytes(&w, s->slots);
	s->pooled = s->pool_banded = false;
	s->unpooled_floats = 0;
	if (fused_pool(L, api) != NULL)
		return conv_pool_prepare(L, api, s);
	return 0;
}

int
std_conv_run(st_exec_layer *L, const st_exec_ctx *ctx)
{
	const window_state *s = L->state;
	const float *bias = L->params[CONV_BIAS].b ? L->weights[1].data : NULL;
	if (s->pool_banded) {
		k_conv_pool_direct(&s->w, &s->pool, L->inputs[0].data, L->weights[0].data, bias, L->pool->outputs[0].data,
		                   L->scratch, s->slots, &s->post, ctx);
		return 0;
	}
	/* With a fused pooling the convolution's output goes to the scratch,
	 * and its own scratch after it. */
	float *out = s->pooled ? L->scratch : L->outputs[0].data;
	void *scratch = s->pooled ? (float *)L->scratch + s->unpooled_floats : L->scratch;
	if (s->reference) {
		k_conv_ref(&s->w, L->inputs[0].data, L->weights[0].data, bias, out);
		k_post_planes(&s->post, out, output_elements(L), 0, 1);
	} else if (s->blocked) {
		float lo = 0.0f, hi = 0.0f;
		bool clamp = k_post_clamp(&s->post, &lo, &hi);
		k_conv_nchwc(&s->w, L->inputs[0].data, s->packed, bias, clamp, lo, hi, out, ctx);
	} else if (s->half && pointwise(&s->w)) {
		k_pointwise_nhwc_half(positions(&s->w), s->w.in_channels, s->w.out_channels, L->inputs[0].data, s->packed,
		                      bias, L->outputs[0].data, scratch, s->slots, &s->post, ctx);
	} else if (s->half) {
		k_dwconv_nhwc_half(&s->w, L->inputs[0].data, s->packed, bias, L->outputs[0].data, &s->post, scratch,
		                   s->slots, ctx);
	} else if (s->nhwc && pointwise(&s->w)) {
		k_pointwise_nhwc(positions(&s->w), s->w.in_channels, s->w.out_channels, L->inputs[0].data, s->packed,
		                 bias, out, scratch, s->slots, &s->post, ctx);
	} else if (s->nhwc) {
		k_dwconv_nhwc(&s->w, L->inputs[0].data, s->packed, bias, out, &s->post, ctx);
	} else {
		k_conv_packed_post(&s->w, L->inputs[0].data, L->weights[0].data, s->packed, bias, out, scratch, s->slots,
		                   &s->post, ctx);
	}
	if (s->pooled) {
		if (s->reference)
			k_pool_ref(&s->pool, s->pool_mode, s->count_include_pad, out, L->pool->outputs[0].data);
		else
			k_pool(&s->pool, s->pool_mode, s->count_include_pad, out, L->pool->outputs[0].data, ctx);
	}
	return 0;
}

/* api->fail for the layout choice, which only asks: no message. */
static void
quiet_fail(st_exec_layer *L, const char *fmt, ...)
{
	(void)L;
	(void)fmt;
}

/* The 2-D window of the convolution a layout or dtype choice is asked
 * about (a view: shapes, no data); false where it has none. */
static bool
view_window(const st_exec_layer *L, k_window *w)
{
	static const st_host_api quiet = { .fail = quiet_fail };
	st_exec_layer *view = (st_exec_layer *)L; /* window_read and window_sizes only read it */
	if (window_read(view, &quiet, &conv_window, 2, w) != 0 ||
	    window_sizes(view, &quiet, (int)L->params[CONV_PADDING].i, false, w) != 0)
		return false;
	w->groups = L->params[CONV_GROUPS].i;
	return true;
}

/*
 * The layout a convolution runs in (ST_IMPL_CHOOSES_LAYOUT): blocked where
 * k_conv_blocked_layout says (dense layers from blocked input, and those
 * the blocked kernel runs faster); channels last for depthwise layers, and
 * for 1x1 layers that get their input channels last already, so a chain of
 * them stays so; NCHW for everything else (the Winograd and direct paths
 * are NCHW) and with the reference loops. Depthwise layers went channels
 * last only on planes of at most 28 x 28 until issue 10's session 12: on a
 * Zen 4 the larger ones tied (docs/performance.md, "Channels last"), on a
 * Zen 3 with AVX2 MobileNetV2 ran 1.15x (one thread) and 1.2x (two) faster
 * with its 112 x 112 and 56 x 56 blocks channels last too.
 */
st_layout
std_conv_choose_layout(const st_exec_layer *L)
{
	if (reference_wanted() || L->n_inputs < 1 || L->n_outputs < 1)
		return ST_LAYOUT_NCHW;
	const st_shape *in = &L->inputs[0].shape;
	bool half = in->dtype == ST_DTYPE_FLOAT16;
	if (in->rank != 4 || !(in->dtype == ST_DTYPE_FLOAT32 || half) || L->outputs[0].shape.rank != 4)
		return ST_LAYOUT_NCHW;
	k_window w;
	if (!view_window(L, &w))
		return ST_LAYOUT_NCHW;
	bool nhwc_in = L->inputs[0].layout == ST_LAYOUT_NHWC;
	/* Float16 is computed channels last only: there for every layer that
	 * can, NCHW (in float32, std_conv_choose_dtype) for the others. */
	if (half)
		return pointwise(&w) || k_dwconv_nhwc_fits(&w) ? ST_LAYOUT_NHWC : ST_LAYOUT_NCHW;
	if (nhwc_in && (pointwise(&w) || k_dwconv_nhwc_fits(&w)))
		return ST_LAYOUT_NHWC;
	if (k_conv_blocked_layout(&w, k_cpu_isa(), L->inputs[0].layout == ST_LAYOUT_NCHW16C))
		return ST_LAYOUT_NCHW16C;
	if (pointwise(&w))
		return nhwc_in ? ST_LAYOUT_NHWC : ST_LAYOUT_NCHW;
	if (k_dwconv_nhwc_fits(&w))
		return ST_LAYOUT_NHWC;
	return ST_LAYOUT_NCHW;
}

/*
 * Float16 (ST_IMPL_CHOOSES_DTYPE) for the layers run channels last with
 * the fast kernels: 1x1 and depthwise 2-D convolutions, which widen and
 * narrow in cache; float32 for the rest, which the host converts around.
 */
st_dtype
std_conv_choose_dtype(const st_exec_layer *L, st_layout layout)
{
	if (layout != ST_LAYOUT_NHWC || reference_wanted() || L->n_inputs < 1 || L->n_outputs < 1 ||
	    L->inputs[0].shape.rank != 4 || L->outputs[0].shape.rank != 4)
		return ST_DTYPE_FLOAT32;
	k_window w;
	if (!view_window(L, &w))
		return ST_DTYPE_FLOAT32;
	return pointwise(&w) || k_dwconv_nhwc_fits(&w) ? ST_DTYPE_FLOAT16 : ST_DTYPE_FLOAT32;
}

/* ---- deconvolution ---- */

static const window_params deconv_window = {
	.kernel = DECONV_KERNEL, .stride = DECONV_STRIDE, .dilation = DECONV_DILATION,
	.padding = DECONV_PADDING, .pads = DECONV_PADS,
};

/*
 * What is cropped from the full output of a transposed convolution, by the
 * rule of transposed_output_sizes in std-conv.c: explicit and valid pads as
 * given; the same modes give size * stride outputs and crop the rest as a
 * convolution pads (the odd one at the end for same, at the beginning for
 * same_lower), which is what ONNX Runtime does. When the full output is
 * shorter than size * stride the crop is negative: the missing outputs,
 * which no input reaches, hold the bias.
 */
static int
deconv_sizes(st_exec_layer *L, const st_host_api *api, int padding, const int64_t *output_padding,
             k_window *w)
{
	for (int i = 0; i < w->spatial; i++) {
		int64_t size = w->in[i], stride = w->stride[i], span = extent(w, i), out;
		if (span < 0) {
			api->fail(L, "the kernel of spatial axis %d is too large", i);
			return -1;
		}
		int64_t full = stride * (size - 1) + output_padding[i] + span;
		if (padding == PADDING_SAME || padding == PADDING_SAME_LOWER) {
			out = size * stride;
			int64_t total = full - out;
			int64_t smaller = total / 2, larger = total - smaller;
			w->pad_begin[i] = padding == PADDING_SAME ? smaller : larger;
			w->pad_end[i] = padding == PADDING_SAME ? larger : smaller;
		} else {
			if (padding == PADDING_VALID)
				w->pad_begin[i] = w->pad_end[i] = 0;
			out = full - w->pad_begin[i] - w->pad_end[i];
		}
		if (check_output(L, api, i, out) != 0)
			return -1;
	}
	return 0;
}

int
std_deconv_prepare(st_exec_layer *L, const st_host_api *api)
{
	k_window w;
	int64_t output_padding[K_MAX_SPATIAL];
	int spatial = image_tensors(L, api);
	if (spatial < 0 || window_read(L, api, &deconv_window, spatial, &w) != 0 ||
	    per_axis(L, api, DECONV_OUTPUT_PADDING, spatial, 0, output_padding) != 0)
		return -1;
	w.groups = L->params[DECONV_GROUPS].i;
	if (num_output_matches(L, api, w.out_channels, DECONV_NUM_OUTPUT) != 0 ||
	    deconv_sizes(L, api, (int)L->params[DECONV_PADDING].i, output_padding, &w) != 0 ||
	    check_filters(L, api, &w, w.in_channels, w.out_channels / (w.groups ? w.groups : 1),
	                  L->params[DECONV_BIAS].b) != 0)
		return -1;
	window_state *s = state_of(L);
	s->w = w;
	s->reference = reference_wanted();
	s->slots = k_thread_slots();
	L->scratch_bytes = s->reference ? 0 : k_deconv_scratch_bytes(&w, s->slots);
	k_gemm_init();
	return 0;
}

int
std_deconv_run(st_exec_layer *L, const st_exec_ctx *ctx)
{
	const window_state *s = L->state;
	const float *bias = L->params[DECONV_BIAS].b ? L->weights[1].data : NULL;
	if (s->reference)
		k_deconv_ref(&s->w, L->inputs[0].data, L->weights[0].data, bias, L->outputs[0].data);
	else
		k_deconv(&s->w, L->inputs[0].data, L->weights[0].data, bias, L->outputs[0].data, L->scratch,
		         s->slots, ctx);
	return 0;
}

/* ---- pooling ---- */

static const window_params pool_window = {
	.kernel = POOL_KERNEL, .stride = POOL_STRIDE, .dilation = POOL_DILATION,
	.padding = POOL_PADDING, .pads = POOL_PADS,
};

/* The window of pooling layer L (its shapes checked) and its kind, into s. */
static int
pool_window_of(st_exec_layer *L, const st_host_api *api, window_state *s)
{
	k_window w;
	int spatial = image_tensors_in(L, api, NCHW_ONLY | ST_LAYOUT_BIT(ST_LAYOUT_NCHW16C), false);
	if (spatial < 0 || window_read(L, api, &pool_window, spatial, &w) != 0)
		return -1;
	if (w.out_channels != w.in_channels) {
		api->fail(L, "the output has %" PRId64 " channels, the input %" PRId64, w.out_channels,
		          w.in_channels);
		return -1;
	}
	if (window_sizes(L, api, (int)L->params[POOL_PADDING].i, L->params[POOL_CEIL_MODE].b, &w) != 0)
		return -1;
	s->w = w;
	s->pool_mode = L->params[POOL_MODE].i == POOLING_MAX ? K_POOL_MAX : K_POOL_AVG;
	s->count_include_pad = L->params[POOL_COUNT_INCLUDE_PAD].b;
	return 0;
}

static int
pool_prepare(st_exec_layer *L, const st_host_api *api)
{
	window_state *s = state_of(L);
	if (pool_window_of(L, api, s) != 0)
		return -1;
	s->reference = reference_wanted();
	s->blocked = L->inputs[0].layout == ST_LAYOUT_NCHW16C;
	if (s->blocked && s->reference) {
		api->fail(L, "the reference pooling runs NCHW tensors only");
		return -1;
	}
	L->scratch_bytes = 0;
	return 0;
}

static int
pool_run(st_exec_layer *L, const st_exec_ctx *ctx)
{
	const window_state *s = L->state;
	if (s->blocked)
		k_pool_nchwc(&s->w, s->pool_mode, s->count_include_pad, L->inputs[0].data, L->outputs[0].data, ctx);
	else if (s->reference)
		k_pool_ref(&s->w, s->pool_mode, s->count_include_pad, L->inputs[0].data, L->outputs[0].data);
	else
		k_pool(&s->w, s->pool_mode, s->count_include_pad, L->inputs[0].data, L->outputs[0].data, ctx);
	return 0;
}

/* ---- global pooling ---- */

static int
global_pool_prepare(st_exec_layer *L, const st_host_api *api)
{
	int spatial = image_tensors_in(L, api, ANY_LAYOUT, false);
	if (spatial < 0)
		return -1;
	const st_shape *in = &L->inputs[0].shape, *out = &L->outputs[0].shape;
	for (int i = 0; i < 2 + spatial; i++) {
		if (out->dims[i] != (i < 2 ? in->dims[i] : 1)) {
			char a[SHAPE_TEXT], b[SHAPE_TEXT];
			api->fail(L, "output %s does not fit input %s", std_shape_text(api, out, a),
			          std_shape_text(api, in, b));
			return -1;
		}
	}
	window_state *s = state_of(L);
	s->w = (k_window){ .spatial = spatial, .batch = in->dims[0], .in_channels = in->dims[1] };
	for (int i = 0; i < spatial; i++)
		s->w.in[i] = in->dims[2 + i];
	s->reference = reference_wanted();
	s->pool_mode = L->params[GLOBAL_POOL_MODE].i == POOLING_MAX ? K_POOL_MAX : K_POOL_AVG;
	s->nhwc = L->inputs[0].layout == ST_LAYOUT_NHWC;
	s->blocked = L->inputs[0].layout == ST_LAYOUT_NCHW16C;
	if (s->blocked && s->reference) {
		api->fail(L, "the reference global pooling runs NCHW tensors only");
		return -1;
	}
	L->scratch_bytes = 0;
	return 0;
}

static int
global_pool_run(st_exec_layer *L, const st_exec_ctx *ctx)
{
	const window_state *s = L->state;
	int64_t planes = s->w.batch * s->w.in_channels, size = 1;
	for (int i = 0; i < s->w.spatial; i++)
		size *= s->w.in[i];
	if (s->blocked) {
		/* N x C/16 x size x 16 in, N x C/16 x 16 out. */
		k_global_pool_nchwc(s->w.batch, s->w.in_channels, size, s->pool_mode, L->inputs[0].data,
		                    L->outputs[0].data, ctx);
	} else if (s->nhwc) {
		/* Channels last: N x H x W x C in memory (the shape stays N x C x
		 * H x W), and the output's 1 x 1 planes lie as in NCHW. */
		const st_shape *in = &L->inputs[0].shape;
		k_global_pool_nhwc(in->dims[0], in->dims[2] * in->dims[3], in->dims[1], s->pool_mode,
		                   L->inputs[0].data, L->outputs[0].data, ctx);
	} else if (s->reference)
		k_global_pool_ref(planes, size, s->pool_mode, L->inputs[0].data, L->outputs[0].data);
	else
		k_global_pool(planes, size, s->pool_mode, L->inputs[0].data, L->outputs[0].data, ctx);
	return 0;
}

/* Global pooling follows its input: channels last or blocked where it
 * comes so. */
static st_layout
global_pool_choose_layout(const st_exec_layer *L)
{
	const st_tensor *in = &L->inputs[0];
	if (in->shape.dtype != ST_DTYPE_FLOAT32 || reference_wanted())
		return ST_LAYOUT_NCHW;
	if (in->layout == ST_LAYOUT_NHWC && in->shape.rank == 4)
		return ST_LAYOUT_NHWC;
	if (in->layout == ST_LAYOUT_NCHW16C && in->shape.rank >= 3 && in->shape.rank <= 2 + K_MAX_SPATIAL)
		return ST_LAYOUT_NCHW16C;
	return ST_LAYOUT_NCHW;
}

/* Pooling too: blocked where its input comes blocked. */
static st_layout
pool_choose_layout(const st_exec_layer *L)
{
	const st_tensor *in = &L->inputs[0];
	if (in->layout == ST_LAYOUT_NCHW16C && in->shape.dtype == ST_DTYPE_FLOAT32 && in->shape.rank >= 3 &&
	    in->shape.rank <= 2 + K_MAX_SPATIAL && !reference_wanted())
		return ST_LAYOUT_NCHW16C;
	return ST_LAYOUT_NCHW;
}

/* ---- the table ---- */

#define CPU_FP32_NCHW .backend = "cpu", .layouts = ST_LAYOUT_BIT(ST_LAYOUT_NCHW), \
	.dtypes = ST_DTYPE_BIT(ST_DTYPE_FLOAT32)

const st_impl_desc std_conv_impls[] = {
	{ .layer = "convolution", .backend = "cpu", .layouts = ANY_LAYOUT,
	  .dtypes = ST_DTYPE_BIT(ST_DTYPE_FLOAT32) | ST_DTYPE_BIT(ST_DTYPE_FLOAT16),
	  .flags = ST_IMPL_FUSES_RELU_CLIP | ST_IMPL_CHOOSES_LAYOUT | ST_IMPL_FUSES_POOL | ST_IMPL_CHOOSES_DTYPE,
	  .prepare = std_conv_prepare, .run = std_conv_run, .release = std_window_release,
	  .choose_layout = std_conv_choose_layout, .choose_dtype = std_conv_choose_dtype },
	{ .layer = "deconvolution", CPU_FP32_NCHW, .prepare = std_deconv_prepare, .run = std_deconv_run,
	  .release = std_window_release },
	{ .layer = "pooling", .backend = "cpu", .layouts = NCHW_ONLY | ST_LAYOUT_BIT(ST_LAYOUT_NCHW16C),
	  .dtypes = ST_DTYPE_BIT(ST_DTYPE_FLOAT32), .flags = ST_IMPL_CHOOSES_LAYOUT, .prepare = pool_prepare,
	  .run = pool_run, .release = std_window_release, .choose_layout = pool_choose_layout },
	{ .layer = "global_pooling", .backend = "cpu", .layouts = ANY_LAYOUT,
	  .dtypes = ST_DTYPE_BIT(ST_DTYPE_FLOAT32), .flags = ST_IMPL_CHOOSES_LAYOUT, .prepare = global_pool_prepare,
	  .run = global_pool_run, .release = std_window_release, .choose_layout = global_pool_choose_layout },
};
const int std_conv_impl_count = STD_COUNT(std_conv_impls);

/* ---- windows for other backends' implementations (std-cuda) ---- */

/* Spatial axes of L's image input and output (rank 3 to 5, alike), or -1
 * after api->fail; no dtype or layout rule (the caller has its own). */
static int
image_rank(st_exec_layer *L, const st_host_api *api)
{
	if (L->n_inputs < 1 || L->n_outputs < 1) {
		api->fail(L, "%s needs one input and one output", L->desc->name);
		return -1;
	}
	const st_shape *in = &L->inputs[0].shape, *out = &L->outputs[0].shape;
	if (in->rank < 3 || in->rank > 2 + K_MAX_SPATIAL || out->rank != in->rank) {
		char a[SHAPE_TEXT], b[SHAPE_TEXT];
		api->fail(L, "input %s and output %s are not both images of rank 3 to 5",
		          std_shape_text(api, in, a), std_shape_text(api, out, b));
		return -1;
	}
	return in->rank - 2;
}

int
std_conv_window(st_exec_layer *L, const st_host_api *api, k_window *w)
{
	int spatial = image_rank(L, api);
	if (spatial < 0 || window_read(L, api, &conv_window, spatial, w) != 0)
		return -1;
	w->groups = L->params[CONV_GROUPS].i;
	if (num_output_matches(L, api, w->out_channels, CONV_NUM_OUTPUT) != 0 ||
	    window_sizes(L, api, (int)L->params[CONV_PADDING].i, false, w) != 0 ||
	    check_filters(L, api, w, w->out_channels, w->in_channels / (w->groups ? w->groups : 1),
	                  L->params[CONV_BIAS].b) != 0)
		return -1;
	return 0;
}

int
std_pool_window(st_exec_layer *L, const st_host_api *api, k_window *w)
{
	int spatial = image_rank(L, api);
	if (spatial < 0 || window_read(L, api, &pool_window, spatial, w) != 0)
		return -1;
	if (w->out_channels != w->in_channels) {
		api->fail(L, "the output has %" PRId64 " channels, the input %" PRId64, w->out_channels,
		          w->in_channels);
		return -1;
	}
	return window_sizes(L, api, (int)L->params[POOL_PADDING].i, L->params[POOL_CEIL_MODE].b, w);
}

int
std_deconv_window(st_exec_layer *L, const st_host_api *api, k_window *w)
{
	int64_t output_padding[K_MAX_SPATIAL];
	int spatial = image_rank(L, api);
	if (spatial < 0 || window_read(L, api, &deconv_window, spatial, w) != 0 ||
	    per_axis(L, api, DECONV_OUTPUT_PADDING, spatial, 0, output_padding) != 0)
		return -1;
	w->groups = L->params[DECONV_GROUPS].i;
	if (num_output_matches(L, api, w->out_channels, DECONV_NUM_OUTPUT) != 0 ||
	    deconv_sizes(L, api, (int)L->params[DECONV_PADDING].i, output_padding, w) != 0 ||
	    check_filters(L, api, w, w->in_channels, w->out_channels / (w->groups ? w->groups : 1),
	                  L->params[DECONV_BIAS].b) != 0)
		return -1;
	return 0;
}
