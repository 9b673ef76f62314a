/* CPU implementations of the normalisation and dense layers: batch,
 * instance and layer normalisation, fully connected and matrix multiply
 * (NCHW). */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>

#include "k-nn.h"
#include "std.h"

/* STRATA_KERNELS=reference runs the reference kernels instead of the fast
 * ones, to tell a fast-path bug from a problem of the model. */
static bool
reference_wanted(void)
{
	const char *v = getenv("STRATA_KERNELS");
	return v != NULL && strcmp(v, "reference") == 0;
}

/* What prepare works out once and run uses. */
typedef struct norm_state {
	bool reference;
	int64_t n, c, inner;  /* the input as N x C x inner */
	int64_t features, outputs; /* fully connected: K and num_output */
	int64_t rows, size;   /* layer normalisation: rows of size elements */
	int64_t folded;       /* channels in a and b */
	float *a, *b;         /* batch normalisation folded into y = a * x + b */
	k_matmul_dims matmul;
	int slots;            /* scratch regions prepared for */
	/* Fully connected: the weights packed for our SGEMM (NULL when
	 * OpenBLAS serves the shape), from this binding and data. */
	void *packed;
	size_t packed_bytes;
	uint64_t generation;
	const void *source;
} norm_state;

static norm_state *
state_of(st_exec_layer *L)
{
	if (L->state == NULL) {
		L->state = calloc(1, sizeof(norm_state));
		if (L->state == NULL)
			abort();
	}
	return L->state;
}

static void
norm_release(st_exec_layer *L)
{
	norm_state *s = L->state;
	if (s != NULL) {
		free(s->a);
		free(s->b);
		free(s->packed);
	}
	free(s);
	L->state = NULL;
}

/* Checks the FP32 NCHW input and output of a layer whose input has at
 * least `least` dimensions and fills n, c and inner (the product of the
 * dimensions after C). */
static int
float_tensors(st_exec_layer *L, const st_host_api *api, int least, norm_state *s)
{
	if (L->n_inputs < 1 || L->n_outputs < 1) {
		api->fail(L, "%s needs an input and an output", L->desc->name);
		return -1;
	}
	const st_shape *in = &L->inputs[0].shape, *out = &L->outputs[0].shape;
	if (in->dtype != ST_DTYPE_FLOAT32 || out->dtype != ST_DTYPE_FLOAT32) {
		api->fail(L, "the CPU %s computes in float32, but its input is %s and its output %s",
		          L->desc->name, api->dtype_name(in->dtype), api->dtype_name(out->dtype));
		return -1;
	}
	if (L->inputs[0].layout != ST_LAYOUT_NCHW || L->outputs[0].layout != ST_LAYOUT_NCHW) {
		api->fail(L, "the CPU %s needs NCHW tensors", L->desc->name);
		return -1;
	}
	if (in->rank < least) {
		char text[SHAPE_TEXT];
		api->fail(L, "input %s has rank %d, but %s needs %d or more", std_shape_text(api, in, text),
		          in->rank, L->desc->name, least);
		return -1;
	}
	s->n = in->dims[0];
	s->c = in->dims[1];
	s->inner = 1;
	for (int i = 2; i < in->rank; i++)
		s->inner *= in->dims[i];
	return 0;
}

/* Checks that the output has the input's shape. */
static int
same_shape(st_exec_layer *L, const st_host_api *api)
{
	const st_shape *in = &L->inputs[0].shape, *out = &L->outputs[0].shape;
	bool same = in->rank == out->rank;
	for (int i = 0; same && i < in->rank; i++)
		same = in->dims[i] == out->dims[i];
	if (same)
		return 0;
	char a[SHAPE_TEXT], b[SHAPE_TEXT];
	api->fail(L, "output %s differs from input %s", std_shape_text(api, out, a),
	          std_shape_text(api, in, b));
	return -1;
}

/* Checks per-channel weights: count tensors named by names, C values each. */
static int
channel_weights(st_exec_layer *L, const st_host_api *api, const char *const *names, int count, int64_t c)
{
	if (L->n_weights != count) {
		api->fail(L, "expected %d weight tensors, got %d", count, L->n_weights);
		return -1;
	}
	for (int i = 0; i < count; i++) {
		if (std_check_weight(L, api, i, names[i], 1, &c) != 0)
			return -1;
	}
	return 0;
}

/* ---- batch normalisation ---- */

enum { BN_SCALE, BN_BIAS, BN_MEAN, BN_VARIANCE };

static int
batch_norm_prepare(st_exec_layer *L, const st_host_api *api)
{
	static const char *const names[] = { "scale", "bias", "mean", "variance" };
	norm_state *s = state_of(L);
	if (float_tensors(L, api, 2, s) != 0 || same_shape(L, api) != 0 ||
	    channel_weights(L, api, names, 4, s->c) != 0)
		return -1;
	s->reference = reference_wanted();
	/* Folding is cheap, so it is redone in case the weights were rebound. */
	if (s->folded != s->c) {
		free(s->a);
		free(s->b);
		s->a = malloc((size_t)(s->c ? s->c : 1) * sizeof(float));
		s->b = malloc((size_t)(s->c ? s->c : 1) * sizeof(float));
		if (s->a == NULL || s->b == NULL)
			abort();
		s->folded = s->c;
	}
	const st_tensor *w = L->weights;
	k_batch_norm_fold(s->c, w[BN_SCALE].data, w[BN_BIAS].data, w[BN_MEAN].data, w[BN_VARIANCE].data,
	                  (float)L->params[BATCH_NORM_EPSILON].f, s->a, s->b);
	L->scratch_bytes = 0;
	return 0;
}

static int
batch_norm_run(st_exec_layer *L, const st_exec_ctx *ctx)
{
	const norm_state *s = L->state;
	const st_tensor *w = L->weights;
	if (s->reference)
		k_batch_norm_ref(s->n, s->c, s->inner, L->inputs[0].data, w[BN_SCALE].data, w[BN_BIAS].data,
		                 w[BN_MEAN].data, w[BN_VARIANCE].data, (float)L->params[BATCH_NORM_EPSILON].f,
		                 L->outputs[0].data);
	else
		k_channel_affine(s->n, s->c, s->inner, L->inputs[0].data, s->a, s->b, L->outputs[0].data, ctx);
	return 0;
}

/* ---- instance normalisation ---- */

static int
instance_norm_prepare(st_exec_layer *L, const st_host_api *api)
{
	static const char *const names[] = { "scale", "bias" };
	norm_state *s = state_of(L);
	if (float_tensors(L, api, 3, s) != 0 || same_shape(L, api) != 0 ||
	    channel_weights(L, api, names, 2, s->c) != 0)
		return -1;
	s->reference = reference_wanted();
	L->scratch_bytes = 0;
	return 0;
}

static int
instance_norm_run(st_exec_layer *L, const st_exec_ctx *ctx)
{
	const norm_state *s = L->state;
	float epsilon = (float)L->params[INSTANCE_NORM_EPSILON].f;
	if (s->reference)
		k_instance_norm_ref(s->n, s->c, s->inner, L->inputs[0].data, L->weights[0].data,
		                    L->weights[1].data, epsilon, L->outputs[0].data);
	else
		k_instance_norm(s->n, s->c, s->inner, L->inputs[0].data, L->weights[0].data,
		                L->weights[1].data, epsilon, L->outputs[0].data, ctx);
	return 0;
}

/* ---- layer normalisation ---- */

static int
layer_norm_prepare(st_exec_layer *L, const st_host_api *api)
{
	norm_state *s = state_of(L);
	if (float_tensors(L, api, 1, s) != 0 || same_shape(L, api) != 0)
		return -1;
	const st_shape *in = &L->inputs[0].shape;
	int first = std_axis(L->params[LAYER_NORM_AXIS].i, in->rank);
	if (first < 0) {
		char text[SHAPE_TEXT];
		api->fail(L, "axis %" PRId64 " is out of range for input %s", L->params[LAYER_NORM_AXIS].i,
		          std_shape_text(api, in, text));
		return -1;
	}
	/* The input is rows x size: the axes before axis, and those from it on. */
	s->rows = 1;
	s->size = 1;
	for (int i = 0; i < in->rank; i++) {
		if (i < first)
			s->rows *= in->dims[i];
		else
			s->size *= in->dims[i];
	}
	bool bias = L->params[LAYER_NORM_BIAS].b;
	if (L->n_weights != (bias ? 2 : 1)) {
		api->fail(L, "expected %d weight tensors, got %d", bias ? 2 : 1, L->n_weights);
		return -1;
	}
	int rank = in->rank - first;
	if (std_check_weight(L, api, 0, "scale", rank, &in->dims[first]) != 0 ||
	    (bias && std_check_weight(L, api, 1, "bias", rank, &in->dims[first]) != 0))
		return -1;
	s->reference = reference_wanted();
	L->scratch_bytes = 0;
	return 0;
}

static int
layer_norm_run(st_exec_layer *L, const st_exec_ctx *ctx)
{
	const norm_state *s = L->state;
	float epsilon = (float)L->params[LAYER_NORM_EPSILON].f;
	const float *bias = L->params[LAYER_NORM_BIAS].b ? L->weights[1].data : NULL;
	if (s->reference)
		k_layer_norm_ref(s->rows, s->size, L->inputs[0].data, L->weights[0].data, bias, epsilon,
		                 L->outputs[0].data);
	else
		k_layer_norm(s->rows, s->size, L->inputs[0].data, L->weights[0].data, bias, epsilon,
		             L->outputs[0].data, ctx);
	return 0;
}

/* ---- fully connected ---- */

static int
fc_prepare(st_exec_layer *L, const st_host_api *api)
{
	norm_state *s = state_of(L);
	if (float_tensors(L, api, 2, s) != 0)
		return -1;
	/* Every dimension after N is one feature axis. */
	s->features = s->c * s->inner;
	s->outputs = L->params[FC_NUM_OUTPUT].i;
	const st_shape *out = &L->outputs[0].shape;
	if (out->rank != 2 || out->dims[0] != s->n || out->dims[1] != s->outputs) {
		char text[SHAPE_TEXT];
		api->fail(L, "output %s is not N x num_output (%" PRId64 " x %" PRId64 ")",
		          std_shape_text(api, out, text), s->n, s->outputs);
		return -1;
	}
	bool bias = L->params[FC_BIAS].b;
	if (L->n_weights != (bias ? 2 : 1)) {
		api->fail(L, "expected %d weight tensors, got %d", bias ? 2 : 1, L->n_weights);
		return -1;
	}
	int64_t dims[2] = { s->outputs, s->features };
	if (std_check_weight(L, api, 0, "weight matrix", 2, dims) != 0 ||
	    (bias && std_check_weight(L, api, 1, "bias", 1, &s->outputs) != 0))
		return -1;
	s->reference = reference_wanted();
	s->slots = k_thread_slots();
	k_gemm_init();
	/* Packed again only for new weights (or a new shape, or SIMD level:
	 * both change the size). */
	size_t bytes = s->reference ? 0 : k_fully_connected_packed_bytes(s->n, s->features, s->outputs);
	const void *data = L->weights[0].data;
	if (bytes == 0) {
		free(s->packed);
		s->packed = NULL;
		s->packed_bytes = 0;
	} else if (s->packed == NULL || bytes != s->packed_bytes || L->weights_generation == 0 ||
	           L->weights_generation != s->generation || data != s->source) {
		if (bytes != s->packed_bytes || s->packed == NULL) {
			free(s->packed);
			s->packed = aligned_alloc(64, (bytes + 63) / 64 * 64);
			s->packed_bytes = s->packed ? bytes : 0;
			if (s->packed == NULL) {
				api->fail(L, "out of memory for the packed weights (%zu bytes)", bytes);
				return -1;
			}
		}
		k_fully_connected_pack(s->n, s->features, s->outputs, data, s->packed);
		s->generation = L->weights_generation;
		s->source = data;
	}
	L->scratch_bytes = s->packed ? k_fully_connected_scratch_bytes(s->n, s->features, s->outputs, s->slots) : 0;
	return 0;
}

static int
fc_run(st_exec_layer *L, const st_exec_ctx *ctx)
{
	const norm_state *s = L->state;
	const float *bias = L->params[FC_BIAS].b ? L->weights[1].data : NULL;
	if (s->reference)
		k_fully_connected_ref(s->n, s->features, s->outputs, L->inputs[0].data, L->weights[0].data,
		                      bias, L->outputs[0].data);
	else
		k_fully_connected(s->n, s->features, s->outputs, L->inputs[0].data, L->weights[0].data, s->packed,
		                  bias, L->outputs[0].data, L->scratch, s->slots, ctx);
	return 0;
}

/* ---- matrix multiply ---- */

static int
matmul_prepare(st_exec_layer *L, const st_host_api *api)
{
	if (L->n_inputs < 2 || L->n_outputs < 1) {
		api->fail(L, "matrix_multiply needs inputs a and b and an output");
		return -1;
	}
	const st_shape *a = &L->inputs[0].shape, *b = &L->inputs[1].shape, *out = &L->outputs[0].shape;
	st_dtype t = a->dtype;
	if (t != ST_DTYPE_FLOAT32 && t != ST_DTYPE_INT32 && t != ST_DTYPE_INT64) {
		api->fail(L, "the CPU matrix_multiply computes in float32, int32 or int64, not %s",
		          api->dtype_name(t));
		return -1;
	}
	if (b->dtype != t || out->dtype != t) {
		api->fail(L, "a is %s, b %s and the output %s: all three must have one type",
		          api->dtype_name(t), api->dtype_name(b->dtype), api->dtype_name(out->dtype));
		return -1;
	}
	for (int i = 0; i < 2; i++) {
		if (L->inputs[i].layout != ST_LAYOUT_NCHW || L->outputs[0].layout != ST_LAYOUT_NCHW) {
			api->fail(L, "the CPU matrix_multiply needs NCHW tensors");
			return -1;
		}
	}
	norm_state *s = state_of(L);
	char at[SHAPE_TEXT], bt[SHAPE_TEXT];
	if (k_matmul_dims_make(a, b, &s->matmul) != 0) {
		api->fail(L, "a %s and b %s cannot be multiplied", std_shape_text(api, a, at),
		          std_shape_text(api, b, bt));
		return -1;
	}
	int64_t elements = s->matmul.batch * s->matmul.m * s->matmul.n, count = 1;
	for (int i = 0; i < out->rank; i++)
		count *= out->dims[i];
	if (count != elements) {
		char ot[SHAPE_TEXT];
		api->fail(L, "output %s does not hold the product of a %s and b %s",
		          std_shape_text(api, out, ot), std_shape_text(api, a, at), std_shape_text(api, b, bt));
		return -1;
	}
	s->reference = reference_wanted();
	s->slots = k_thread_slots();
	L->scratch_bytes = s->reference || t != ST_DTYPE_FLOAT32 ? 0 : k_matmul_scratch_bytes(&s->matmul, s->slots);
	k_gemm_init();
	return 0;
}

static int
matmul_run(st_exec_layer *L, const st_exec_ctx *ctx)
{
	const norm_state *s = L->state;
	const void *a = L->inputs[0].data, *b = L->inputs[1].data;
	void *out = L->outputs[0].data;
	switch (L->inputs[0].shape.dtype) {
	case ST_DTYPE_INT32:
		k_matmul_i32(&s->matmul, a, b, out, ctx);
		break;
	case ST_DTYPE_INT64:
		k_matmul_i64(&s->matmul, a, b, out, ctx);
		break;
	default:
		if (s->reference)
			k_matmul_ref(&s->matmul, a, b, out);
		else
			k_matmul(&s->matmul, a, b, out, L->scratch, s->slots, ctx);
		break;
	}
	return 0;
}

/* ---- the table ---- */

#define CPU_NCHW .backend = "cpu", .layouts = ST_LAYOUT_BIT(ST_LAYOUT_NCHW)
#define FP32 ST_DTYPE_BIT(ST_DTYPE_FLOAT32)

const st_impl_desc std_norm_impls[] = {
	{ .layer = "batch_normalization", CPU_NCHW, .dtypes = FP32, .flags = ST_IMPL_IN_PLACE,
	  .prepare = batch_norm_prepare, .run = batch_norm_run, .release = norm_release },
	{ .layer = "instance_normalization", CPU_NCHW, .dtypes = FP32, .flags = ST_IMPL_IN_PLACE,
	  .prepare = instance_norm_prepare, .run = instance_norm_run, .release = norm_release },
	{ .layer = "layer_normalization", CPU_NCHW, .dtypes = FP32, .flags = ST_IMPL_IN_PLACE,
	  .prepare = layer_norm_prepare, .run = layer_norm_run, .release = norm_release },
	{ .layer = "fully_connected", CPU_NCHW, .dtypes = FP32, .prepare = fc_prepare, .run = fc_run,
	  .release = norm_release },
	/* Integer products are computed as they are; float16 is widened by the host. */
	{ .layer = "matrix_multiply", CPU_NCHW,
	  .dtypes = FP32 | ST_DTYPE_BIT(ST_DTYPE_INT32) | ST_DTYPE_BIT(ST_DTYPE_INT64),
	  .prepare = matmul_prepare, .run = matmul_run, .release = norm_release },
};
const int std_norm_impl_count = STD_COUNT(std_norm_impls);
