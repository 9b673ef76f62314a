/* std-cuda: element-wise operations, batch normalisation, fully connected
 * layers (cuBLAS), global pooling, softmax, concatenation, resize, and the
 * layers that copy (identity, dropout, flatten, reshape), on the cuda
 * backend. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "k-tensor.h"
#include "std-cuda.h"

#define FLOATS (ST_DTYPE_BIT(ST_DTYPE_FLOAT32) | ST_DTYPE_BIT(ST_DTYPE_FLOAT16))
#define NCHW ST_LAYOUT_BIT(ST_LAYOUT_NCHW)
#define BOTH (ST_LAYOUT_BIT(ST_LAYOUT_NCHW) | ST_LAYOUT_BIT(ST_LAYOUT_NHWC))

/* Fails unless L's inputs (those linked) and outputs are float32 or
 * float16, all alike. */
static int
float_tensors(st_exec_layer *L)
{
	st_dtype t = L->outputs[0].shape.dtype;
	for (int i = 0; i < L->n_inputs + L->n_outputs; i++) {
		const st_tensor *x = i < L->n_inputs ? &L->inputs[i] : &L->outputs[i - L->n_inputs];
		if (x->data == NULL && i < L->n_inputs)
			continue;
		if ((x->shape.dtype != ST_DTYPE_FLOAT32 && x->shape.dtype != ST_DTYPE_FLOAT16) || x->shape.dtype != t) {
			scu_host->fail(L, "the cuda %s takes float32 or float16 tensors, all of one type", L->desc->name);
			return -1;
		}
	}
	return 0;
}

/* Batch, channels and positions of an image tensor (N x C x ...), for
 * per-channel kernels. */
static void
image_dims(const st_shape *s, int64_t *batch, int64_t *channels, int64_t *positions)
{
	*batch = s->rank > 0 ? s->dims[0] : 1;
	*channels = s->rank > 1 ? s->dims[1] : 1;
	*positions = 1;
	for (int i = 2; i < s->rank; i++)
		*positions *= s->dims[i];
}

static bool
channels_last(const st_tensor *t)
{
	return t->layout == ST_LAYOUT_NHWC && t->shape.rank >= 3;
}

/* ---- copies: identity, dropout (inference), flatten, reshape ---- */

static int
copy_prepare(st_exec_layer *L, const st_host_api *api)
{
	(void)api;
	if (float_tensors(L) != 0)
		return -1;
	if (scu_elements(&L->inputs[0].shape) != scu_elements(&L->outputs[0].shape)) {
		scu_host->fail(L, "input and output hold different numbers of values");
		return -1;
	}
	return 0;
}

static int
copy_run(st_exec_layer *L, const st_exec_ctx *ctx)
{
	(void)ctx;
	const st_tensor *x = &L->inputs[0];
	size_t bytes = (size_t)scu_elements(&x->shape) * (scu_half(x) ? 2u : 4u);
	if (L->outputs[0].data == x->data || bytes == 0)
		return 0;
	return scu_cuda(L,
	                cudaMemcpyAsync(L->outputs[0].data, x->data, bytes, cudaMemcpyDeviceToDevice,
	                                scu_native(L)->stream),
	                "cudaMemcpyAsync");
}

/* ---- elementwise ---- */

static const kc_binary binary_of[] = {
	[OP_ADD] = KC_ADD, [OP_SUB] = KC_SUB, [OP_MUL] = KC_MUL, [OP_DIV] = KC_DIV, [OP_MAX] = KC_MAX, [OP_MIN] = KC_MIN,
};

static bool
same_as_output(const st_exec_layer *L, int i)
{
	st_shape s = std_eltwise_operand_shape(L, i);
	const st_shape *out = &L->outputs[0].shape;
	return s.rank == out->rank && memcmp(s.dims, out->dims, sizeof s.dims[0] * (size_t)out->rank) == 0;
}

static bool
all_same(const st_exec_layer *L)
{
	for (int i = 0; i < L->n_inputs; i++) {
		if (!same_as_output(L, i))
			return false;
	}
	return true;
}

/* Channels last only when every operand has the output's shape. */
static st_layout
eltwise_choose_layout(const st_exec_layer *L)
{
	if (!all_same(L))
		return ST_LAYOUT_NCHW;
	for (int i = 0; i < L->n_inputs; i++) {
		if (L->inputs[i].layout != ST_LAYOUT_NHWC)
			return ST_LAYOUT_NCHW;
	}
	return L->outputs[0].shape.rank == 4 ? ST_LAYOUT_NHWC : ST_LAYOUT_NCHW;
}

static int
eltwise_prepare(st_exec_layer *L, const st_host_api *api)
{
	(void)api;
	kc_act act;
	if (float_tensors(L) != 0 || scu_act_of(L, &act) != 0)
		return -1;
	if (L->n_inputs < 1 || L->outputs[0].shape.rank > KC_MAX_DIMS) {
		scu_host->fail(L, "the cuda elementwise layer takes one or more operands of rank %d or less", KC_MAX_DIMS);
		return -1;
	}
	if (channels_last(&L->outputs[0]) && !all_same(L)) {
		scu_host->fail(L, "channels last the cuda elementwise layer takes operands of the output's shape only");
		return -1;
	}
	return 0;
}

/* Element strides of operand s broadcast to out's rank (0 along broadcast axes). */
static void
broadcast_strides(const st_shape *s, const st_shape *out, int64_t *strides)
{
	int64_t step = 1;
	for (int d = out->rank - 1; d >= 0; d--) {
		int k = d - (out->rank - s->rank);
		int64_t size = k >= 0 ? s->dims[k] : 1;
		strides[d] = size == 1 ? 0 : step;
		step *= size;
	}
}

static int
eltwise_run(st_exec_layer *L, const st_exec_ctx *ctx)
{
	(void)ctx;
	cudaStream_t stream = scu_native(L)->stream;
	st_tensor *y = &L->outputs[0];
	kc_act act, none = { .kind = KC_ACT_NONE };
	if (scu_act_of(L, &act) != 0)
		return -1;
	int half = scu_half(y);
	if (L->n_inputs == 1) {
		const st_shape *s = &y->shape;
		return scu_cuda(L, (cudaError_t)kc_bias_act(L->inputs[0].data, y->data, half, 0, 1, 1, scu_elements(s),
		                                            NULL, act, stream),
		                "kc_bias_act");
	}
	/* Each operand read through strides over the output's dimensions (0
	 * where it is broadcast); channels last only when every shape is the
	 * output's, where those strides walk memory in order either way. The
	 * first step reads input 0, the later ones the output so far. */
	int rank = y->shape.rank;
	int64_t dims[KC_MAX_DIMS], sa[KC_MAX_DIMS], sb[KC_MAX_DIMS], sy[KC_MAX_DIMS];
	memcpy(dims, y->shape.dims, sizeof dims[0] * (size_t)rank);
	broadcast_strides(&y->shape, &y->shape, sy);
	int op = (int)L->params[ELTWISE_OPERATION].i;
	for (int i = 1; i < L->n_inputs; i++) {
		const void *a = i == 1 ? L->inputs[0].data : y->data;
		st_shape as = i == 1 ? std_eltwise_operand_shape(L, 0) : y->shape, bs = std_eltwise_operand_shape(L, i);
		if (i == 1)
			broadcast_strides(&as, &y->shape, sa);
		else
			memcpy(sa, sy, sizeof sa[0] * (size_t)rank);
		broadcast_strides(&bs, &y->shape, sb);
		int e = kc_eltwise(a, L->inputs[i].data, y->data, half, rank, dims, sa, sb, binary_of[op],
		                   i == L->n_inputs - 1 ? act : none, stream);
		if (scu_cuda(L, (cudaError_t)e, "kc_eltwise") != 0)
			return -1;
	}
	return 0;
}

/* ---- batch normalisation: folded on the device into a scale and shift ---- */

typedef struct bn_state {
	float *ab;               /* a[C] then b[C] */
	int64_t channels;
	uint64_t generation;
	const void *source;
} bn_state;

static void
bn_release(st_exec_layer *L)
{
	bn_state *s = L->state;
	if (s == NULL)
		return;
	scu_free(L, s->ab);
	free(s);
	L->state = NULL;
}

static int
bn_prepare(st_exec_layer *L, const st_host_api *api)
{
	kc_act act;
	if (float_tensors(L) != 0 || scu_act_of(L, &act) != 0)
		return -1;
	int64_t n, c, positions;
	image_dims(&L->inputs[0].shape, &n, &c, &positions);
	if (L->n_weights != 4) {
		api->fail(L, "expected 4 weight tensors (scale, bias, mean, variance), got %d", L->n_weights);
		return -1;
	}
	for (int w = 0; w < 4; w++) {
		if (L->weights[w].data == NULL || scu_elements(&L->weights[w].shape) != c) {
			api->fail(L, "weight %d does not have %lld values", w, (long long)c);
			return -1;
		}
	}
	bn_state *s = L->state;
	if (s == NULL) {
		s = calloc(1, sizeof *s);
		if (s == NULL)
			abort();
		L->state = s;
	}
	if (s->ab != NULL && s->channels == c && L->weights_generation != 0 && s->generation == L->weights_generation &&
	    s->source == L->weights[0].data)
		return 0;
	if (s->ab == NULL || s->channels != c) {
		scu_free(L, s->ab);
		s->ab = scu_alloc(L, (size_t)(2 * c) * sizeof(float));
		if (s->ab == NULL)
			return -1;
		s->channels = c;
	}
	int e = kc_batch_norm_fold(L->weights[0].data, L->weights[1].data, L->weights[2].data, L->weights[3].data,
	                           (float)L->params[BATCH_NORM_EPSILON].f, s->ab, s->ab + c, c, scu_native(L)->stream);
	if (scu_cuda(L, (cudaError_t)e, "kc_batch_norm_fold") != 0)
		return -1;
	s->generation = L->weights_generation;
	s->source = L->weights[0].data;
	return 0;
}

static int
bn_run(st_exec_layer *L, const st_exec_ctx *ctx)
{
	(void)ctx;
	const bn_state *s = L->state;
	kc_act act;
	if (scu_act_of(L, &act) != 0)
		return -1;
	int64_t n, c, positions;
	image_dims(&L->inputs[0].shape, &n, &c, &positions);
	int e = kc_scale_shift_act(L->inputs[0].data, L->outputs[0].data, scu_half(&L->outputs[0]),
	                           channels_last(&L->inputs[0]), n, c, positions, s->ab, s->ab + c, act,
	                           scu_native(L)->stream);
	return scu_cuda(L, (cudaError_t)e, "kc_scale_shift_act");
}

/* ---- fully connected: y = x W^T + b with cuBLAS ---- */

typedef struct fc_state {
	void *half_weights;      /* the matrix in float16, for float16 layers */
	uint64_t generation;
	const void *source;
	int64_t n, features, outputs;
} fc_state;

static void
fc_release(st_exec_layer *L)
{
	fc_state *s = L->state;
	if (s == NULL)
		return;
	scu_free(L, s->half_weights);
	free(s);
	L->state = NULL;
}

static int
fc_prepare(st_exec_layer *L, const st_host_api *api)
{
	kc_act act;
	if (float_tensors(L) != 0 || scu_act_of(L, &act) != 0)
		return -1;
	fc_state *s = L->state;
	if (s == NULL) {
		s = calloc(1, sizeof *s);
		if (s == NULL)
			abort();
		L->state = s;
	}
	const st_shape *in = &L->inputs[0].shape, *out = &L->outputs[0].shape;
	s->n = in->dims[0];
	s->features = scu_elements(in) / (s->n ? s->n : 1);
	s->outputs = L->params[FC_NUM_OUTPUT].i;
	if (out->rank != 2 || out->dims[0] != s->n || out->dims[1] != s->outputs) {
		api->fail(L, "the output is not N x num_output");
		return -1;
	}
	bool bias = L->params[FC_BIAS].b;
	if (L->n_weights != (bias ? 2 : 1) || scu_elements(&L->weights[0].shape) != s->outputs * s->features ||
	    (bias && scu_elements(&L->weights[1].shape) != s->outputs)) {
		api->fail(L, "the weights are not num_output x features%s", bias ? " and num_output biases" : "");
		return -1;
	}
	if (s->features > INT32_MAX || s->outputs > INT32_MAX || s->n > INT32_MAX) {
		api->fail(L, "cuBLAS takes matrices of fewer than 2^31 rows and columns");
		return -1;
	}
	if (!scu_half(&L->outputs[0])) {
		scu_free(L, s->half_weights);
		s->half_weights = NULL;
		return 0;
	}
	if (s->half_weights != NULL && L->weights_generation != 0 && s->generation == L->weights_generation &&
	    s->source == L->weights[0].data)
		return 0;
	scu_free(L, s->half_weights);
	s->half_weights = scu_alloc(L, (size_t)(s->outputs * s->features) * 2u);
	if (s->half_weights == NULL)
		return -1;
	int e = kc_float_to_half(L->weights[0].data, s->half_weights, s->outputs * s->features, scu_native(L)->stream);
	if (scu_cuda(L, (cudaError_t)e, "kc_float_to_half (weights)") != 0)
		return -1;
	s->generation = L->weights_generation;
	s->source = L->weights[0].data;
	return 0;
}

static int
fc_run(st_exec_layer *L, const st_exec_ctx *ctx)
{
	const fc_state *s = L->state;
	const st_cuda_native *nat = scu_native(L);
	kc_act act;
	if (scu_act_of(L, &act) != 0)
		return -1;
	int m = (int)s->outputs, n = (int)s->n, k = (int)s->features;
	/* Column-major: y^T (outputs x n) = W (stored features x outputs, used
	 * transposed) times x^T (features x n). */
	cublasStatus_t st;
	if (s->half_weights == NULL) {
		const float one = 1.0f, zero = 0.0f;
		st = cublasSgemm(nat->cublas, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &one, L->weights[0].data, k,
		                 L->inputs[0].data, k, &zero, L->outputs[0].data, m);
		if (scu_cublas(L, st, "cublasSgemm") != 0)
			return -1;
	} else {
		const float one = 1.0f, zero = 0.0f;
		st = cublasGemmEx(nat->cublas, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &one, s->half_weights, CUDA_R_16F, k,
		                  L->inputs[0].data, CUDA_R_16F, k, &zero, L->outputs[0].data, CUDA_R_16F, m,
		                  CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
		if (scu_cublas(L, st, "cublasGemmEx (float16, float32 accumulation)") != 0)
			return -1;
	}
	const float *bias = L->params[FC_BIAS].b ? L->weights[1].data : NULL;
	if (bias == NULL && act.kind == KC_ACT_NONE)
		return 0;
	(void)ctx;
	/* The output is n x outputs: the outputs are its channels, last. */
	int e = kc_bias_act(L->outputs[0].data, L->outputs[0].data, scu_half(&L->outputs[0]), 1, s->n, s->outputs, 1,
	                    bias, act, nat->stream);
	return scu_cuda(L, (cudaError_t)e, "kc_bias_act");
}

/* ---- global pooling ---- */

static int
global_pool_prepare(st_exec_layer *L, const st_host_api *api)
{
	if (float_tensors(L) != 0)
		return -1;
	int64_t n, c, p;
	image_dims(&L->inputs[0].shape, &n, &c, &p);
	if (L->inputs[0].shape.rank < 3 || scu_elements(&L->outputs[0].shape) != n * c) {
		api->fail(L, "the output does not hold one value per image and channel");
		return -1;
	}
	return 0;
}

static int
global_pool_run(st_exec_layer *L, const st_exec_ctx *ctx)
{
	(void)ctx;
	int64_t n, c, p;
	image_dims(&L->inputs[0].shape, &n, &c, &p);
	/* N x C x 1 x 1 is laid out alike in either layout. */
	int e = kc_global_pool(L->inputs[0].data, L->outputs[0].data, scu_half(&L->inputs[0]),
	                       channels_last(&L->inputs[0]), n, c, p, L->params[GLOBAL_POOL_MODE].i != POOLING_MAX,
	                       scu_native(L)->stream);
	return scu_cuda(L, (cudaError_t)e, "kc_global_pool");
}

/* ---- softmax ---- */

static int
softmax_prepare(st_exec_layer *L, const st_host_api *api)
{
	if (float_tensors(L) != 0)
		return -1;
	if (std_axis(L->params[SOFTMAX_AXIS].i, L->inputs[0].shape.rank) < 0) {
		api->fail(L, "axis %lld is out of range for rank %d", (long long)L->params[SOFTMAX_AXIS].i,
		          L->inputs[0].shape.rank);
		return -1;
	}
	return 0;
}

static int
softmax_run(st_exec_layer *L, const st_exec_ctx *ctx)
{
	(void)ctx;
	const st_shape *s = &L->inputs[0].shape;
	int axis = std_axis(L->params[SOFTMAX_AXIS].i, s->rank);
	int64_t outer = 1, inner = 1;
	for (int i = 0; i < axis; i++)
		outer *= s->dims[i];
	for (int i = axis + 1; i < s->rank; i++)
		inner *= s->dims[i];
	int e = kc_softmax(L->inputs[0].data, L->outputs[0].data, scu_half(&L->inputs[0]), outer, s->dims[axis], inner,
	                   scu_native(L)->stream);
	return scu_cuda(L, (cudaError_t)e, "kc_softmax");
}

/* ---- concatenation: one strided copy per input ---- */

/* Whether the join can run channels last: images of rank 4 joined along
 * the samples or the channels. */
static bool
concat_nhwc_fits(const st_exec_layer *L, int axis)
{
	for (int i = 0; i < L->n_inputs; i++) {
		if (L->inputs[i].shape.rank != 4)
			return false;
	}
	return (axis == 0 || axis == 1) && L->outputs[0].shape.rank == 4;
}

static st_layout
concat_choose_layout(const st_exec_layer *L)
{
	int axis = std_axis(L->params[CONCAT_AXIS].i, L->outputs[0].shape.rank);
	for (int i = 0; i < L->n_inputs; i++) {
		if (L->inputs[i].layout == ST_LAYOUT_NHWC && concat_nhwc_fits(L, axis))
			return ST_LAYOUT_NHWC;
	}
	return ST_LAYOUT_NCHW;
}

/* t seen as rows x width elements in memory, joined with the others along
 * the width: the dimensions before the axis make the rows, the axis and
 * those after it the width (channels last, N H W rows of C for a join of
 * channels). */
static void
concat_rows(const st_tensor *t, int axis, int64_t *rows, int64_t *width)
{
	const st_shape *s = &t->shape;
	if (t->layout == ST_LAYOUT_NHWC && s->rank == 4 && axis == 1) {
		*rows = s->dims[0] * s->dims[2] * s->dims[3];
		*width = s->dims[1];
		return;
	}
	if (t->layout == ST_LAYOUT_NHWC && s->rank == 4) { /* axis 0: whole images */
		*rows = 1;
		*width = scu_elements(s);
		return;
	}
	*rows = 1;
	*width = 1;
	for (int i = 0; i < s->rank; i++) {
		if (i < axis)
			*rows *= s->dims[i];
		else
			*width *= s->dims[i];
	}
}

static int
concat_prepare(st_exec_layer *L, const st_host_api *api)
{
	if (float_tensors(L) != 0)
		return -1;
	const st_shape *out = &L->outputs[0].shape;
	int axis = std_axis(L->params[CONCAT_AXIS].i, out->rank);
	if (axis < 0) {
		api->fail(L, "axis %lld is out of range for rank %d", (long long)L->params[CONCAT_AXIS].i, out->rank);
		return -1;
	}
	if (L->outputs[0].layout == ST_LAYOUT_NHWC && !concat_nhwc_fits(L, axis)) {
		api->fail(L, "channels last the cuda concatenation joins images of rank 4 along the samples or the "
		             "channels only");
		return -1;
	}
	for (int i = 0; i < L->n_inputs; i++) {
		if (L->inputs[i].data == NULL || L->inputs[i].layout != L->outputs[0].layout) {
			api->fail(L, "input %d is missing or not in the output's layout", i);
			return -1;
		}
	}
	return 0;
}

static int
concat_run(st_exec_layer *L, const st_exec_ctx *ctx)
{
	(void)ctx;
	const st_tensor *out = &L->outputs[0];
	int axis = std_axis(L->params[CONCAT_AXIS].i, out->shape.rank);
	size_t elem = scu_half(out) ? 2u : 4u;
	int64_t rows, out_width;
	concat_rows(out, axis, &rows, &out_width);
	int64_t at = 0;
	for (int i = 0; i < L->n_inputs; i++) {
		int64_t r, width;
		concat_rows(&L->inputs[i], axis, &r, &width);
		if (r > 0 && width > 0) {
			cudaError_t e = cudaMemcpy2DAsync((char *)out->data + (size_t)at * elem, (size_t)out_width * elem,
			                                  L->inputs[i].data, (size_t)width * elem, (size_t)width * elem,
			                                  (size_t)r, cudaMemcpyDeviceToDevice, scu_native(L)->stream);
			if (scu_cuda(L, e, "cudaMemcpy2DAsync") != 0)
				return -1;
		}
		at += width;
	}
	return 0;
}

/* ---- resize: the CPU's tables (k_resize_plan), uploaded ---- */

typedef struct resize_state {
	kc_resample g;
	void *tables;       /* device: every axis's indices (int64), then weights (float) */
	int64_t n_taps;     /* entries of each */
} resize_state;

static void
resize_release(st_exec_layer *L)
{
	resize_state *s = L->state;
	if (s == NULL)
		return;
	scu_free(L, s->tables);
	free(s);
	L->state = NULL;
}

static int
resize_prepare(st_exec_layer *L, const st_host_api *api)
{
	if (float_tensors(L) != 0)
		return -1;
	const st_shape *in = &L->inputs[0].shape, *out = &L->outputs[0].shape;
	if (in->rank != out->rank || in->rank > KC_MAX_DIMS) {
		api->fail(L, "the cuda resize takes an input and output of one rank, at most %d", KC_MAX_DIMS);
		return -1;
	}
	k_resize_desc d;
	if (std_resize_desc(L, api, &d) != 0)
		return -1;
	void *memory = malloc(k_resize_plan_bytes(&d, in, out));
	if (memory == NULL)
		abort();
	const k_resize_plan *plan = k_resize_plan_init(memory, &d, in, out);
	/* The tables on the host: an axis that maps onto itself has one tap. */
	kc_resample g = { .rank = in->rank };
	int64_t total = 0;
	for (int k = 0; k < in->rank; k++) {
		g.in[k] = in->dims[k];
		g.out[k] = out->dims[k];
		g.taps[k] = plan->axis[k].identity ? 1 : plan->axis[k].taps;
		g.off[k] = total;
		total += out->dims[k] * g.taps[k];
	}
	size_t bytes = (size_t)total * (sizeof(int64_t) + sizeof(float));
	char *host = malloc(bytes ? bytes : 1);
	if (host == NULL)
		abort();
	int64_t *index = (int64_t *)(void *)host;
	float *weight = (float *)(void *)(index + total);
	for (int k = 0; k < in->rank; k++) {
		const k_resize_axis *a = &plan->axis[k];
		for (int64_t o = 0; o < out->dims[k]; o++) {
			for (int j = 0; j < g.taps[k]; j++) {
				int64_t t = g.off[k] + o * g.taps[k] + j;
				index[t] = a->identity ? o : a->index[o * a->taps + j];
				weight[t] = a->identity ? 1.0f : a->weight[o * a->taps + j];
			}
		}
	}
	free(memory);
	resize_state *s = L->state;
	if (s == NULL) {
		s = calloc(1, sizeof *s);
		if (s == NULL)
			abort();
		L->state = s;
	}
	scu_free(L, s->tables);
	s->tables = NULL;
	s->g = g;
	s->n_taps = total;
	int rc = 0;
	if (bytes > 0) {
		st_device *dev = L->ctx->device;
		s->tables = scu_alloc(L, bytes);
		/* The host tables go once the copy is done. */
		if (s->tables == NULL)
			rc = -1;
		else if (dev->upload(dev, s->tables, host, bytes) != 0 || dev->sync(dev) != 0) {
			api->fail(L, "uploading the resize tables: %s", dev->error(dev));
			rc = -1;
		}
	}
	free(host);
	return rc;
}

static int
resize_run(st_exec_layer *L, const st_exec_ctx *ctx)
{
	(void)ctx;
	const resize_state *s = L->state;
	if (s->tables == NULL)
		return 0;
	const int64_t *index = s->tables;
	const float *weight = (const float *)(const void *)(index + s->n_taps);
	int e = kc_resize(L->inputs[0].data, L->outputs[0].data, scu_half(&L->inputs[0]), &s->g, index, weight,
	                  scu_native(L)->stream);
	return scu_cuda(L, (cudaError_t)e, "kc_resize");
}

const st_impl_desc scu_tensor_impls[] = {
	{ .layer = "identity", .backend = "cuda", .layouts = BOTH, .dtypes = FLOATS, .prepare = copy_prepare,
	  .run = copy_run },
	{ .layer = "dropout", .backend = "cuda", .layouts = BOTH, .dtypes = FLOATS, .prepare = copy_prepare,
	  .run = copy_run },
	{ .layer = "flatten", .backend = "cuda", .layouts = NCHW, .dtypes = FLOATS, .prepare = copy_prepare,
	  .run = copy_run },
	{ .layer = "reshape", .backend = "cuda", .layouts = NCHW, .dtypes = FLOATS, .prepare = copy_prepare,
	  .run = copy_run },
	{ .layer = "elementwise", .backend = "cuda", .layouts = BOTH, .dtypes = FLOATS,
	  .flags = ST_IMPL_FUSES_ACTIVATION | ST_IMPL_CHOOSES_LAYOUT, .prepare = eltwise_prepare, .run = eltwise_run,
	  .choose_layout = eltwise_choose_layout },
	{ .layer = "batch_normalization", .backend = "cuda", .layouts = BOTH, .dtypes = FLOATS,
	  .flags = ST_IMPL_FUSES_ACTIVATION, .prepare = bn_prepare, .run = bn_run, .release = bn_release },
	{ .layer = "fully_connected", .backend = "cuda", .layouts = NCHW, .dtypes = FLOATS,
	  .flags = ST_IMPL_FUSES_ACTIVATION, .prepare = fc_prepare, .run = fc_run, .release = fc_release },
	{ .layer = "global_pooling", .backend = "cuda", .layouts = BOTH, .dtypes = FLOATS,
	  .prepare = global_pool_prepare, .run = global_pool_run },
	{ .layer = "softmax", .backend = "cuda", .layouts = NCHW, .dtypes = FLOATS, .prepare = softmax_prepare,
	  .run = softmax_run },
	{ .layer = "resize", .backend = "cuda", .layouts = NCHW, .dtypes = FLOATS, .prepare = resize_prepare,
	  .run = resize_run, .release = resize_release },
	{ .layer = "concatenation", .backend = "cuda", .layouts = BOTH, .dtypes = FLOATS,
	  .flags = ST_IMPL_CHOOSES_LAYOUT, .prepare = concat_prepare, .run = concat_run,
	  .choose_layout = concat_choose_layout },
};
const int scu_tensor_impl_count = (int)(sizeof scu_tensor_impls / sizeof scu_tensor_impls[0]);
