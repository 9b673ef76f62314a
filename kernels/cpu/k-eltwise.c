/* Element-wise arithmetic with numpy broadcasting, the linear blend, and
 * softmax along an axis. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "k-tensor.h"

/* Loops handle this many elements per step, loads before stores, so the
 * compiler turns each step into vector instructions even at -O2 and even
 * when the output is the first operand. */
#define BLOCK 8

bool
k_binary_supports(k_op op, st_dtype t)
{
	switch (t) {
	case ST_DTYPE_FLOAT32:
		return (unsigned)op < K_OP_COUNT;
	case ST_DTYPE_INT64:
	case ST_DTYPE_INT32:
	case ST_DTYPE_INT8:
	case ST_DTYPE_UINT8:
		return (unsigned)op < K_OP_COUNT && op != K_OP_DIV;
	default:
		return false;
	}
}

/* ---- the reference ---- */

static float
op_float(k_op op, float x, float y)
{
	switch (op) {
	case K_OP_ADD:
		return x + y;
	case K_OP_SUB:
		return x - y;
	case K_OP_MUL:
		return x * y;
	case K_OP_DIV:
		return x / y;
	case K_OP_MAX:
		return isnan(x) || isnan(y) ? NAN : x > y ? x : y;
	default:
		return isnan(x) || isnan(y) ? NAN : x < y ? x : y;
	}
}

/* Integer ops in 64-bit two's complement; storing the result in a narrower
 * type keeps the low bits, which is the wrapped result there too. */
static int64_t
op_int(k_op op, int64_t x, int64_t y)
{
	switch (op) {
	case K_OP_ADD:
		return (int64_t)((uint64_t)x + (uint64_t)y);
	case K_OP_SUB:
		return (int64_t)((uint64_t)x - (uint64_t)y);
	case K_OP_MUL:
		return (int64_t)((uint64_t)x * (uint64_t)y);
	case K_OP_MAX:
		return x > y ? x : y;
	default:
		return x < y ? x : y;
	}
}

static int64_t
get_int(const void *p, st_dtype t, int64_t i)
{
	switch (t) {
	case ST_DTYPE_INT64:
		return ((const int64_t *)p)[i];
	case ST_DTYPE_INT32:
		return ((const int32_t *)p)[i];
	case ST_DTYPE_INT8:
		return ((const int8_t *)p)[i];
	default:
		return ((const uint8_t *)p)[i];
	}
}

static void
set_int(void *p, st_dtype t, int64_t i, int64_t v)
{
	uint64_t u = (uint64_t)v; /* the low bits, whatever the sign */
	switch (t) {
	case ST_DTYPE_INT64:
		((int64_t *)p)[i] = v;
		break;
	case ST_DTYPE_INT32: {
		uint32_t w = (uint32_t)u;
		memcpy((int32_t *)p + i, &w, sizeof w);
		break;
	}
	case ST_DTYPE_INT8: {
		uint8_t w = (uint8_t)u;
		memcpy((int8_t *)p + i, &w, sizeof w);
		break;
	}
	default:
		((uint8_t *)p)[i] = (uint8_t)u;
		break;
	}
}

/* The offset in a tensor of shape s broadcast to out of out's index idx. */
static int64_t
broadcast_offset(const st_shape *s, const st_shape *out, const int64_t *idx)
{
	int64_t off = 0, stride = 1;
	for (int k = s->rank - 1; k >= 0; k--) {
		int64_t i = idx[out->rank - s->rank + k];
		if (s->dims[k] != 1)
			off += i * stride;
		stride *= s->dims[k];
	}
	return off;
}

static void
unravel(int64_t i, const st_shape *s, int64_t *idx)
{
	for (int k = s->rank - 1; k >= 0; k--) {
		idx[k] = i % s->dims[k];
		i /= s->dims[k];
	}
}

void
k_binary_ref(k_op op, st_dtype t, void *out, const st_shape *out_shape, const void *a,
             const st_shape *a_shape, const void *b, const st_shape *b_shape)
{
	int64_t n = k_elements(out_shape), idx[ST_MAX_RANK];
	for (int64_t i = 0; i < n; i++) {
		unravel(i, out_shape, idx);
		int64_t ia = broadcast_offset(a_shape, out_shape, idx);
		int64_t ib = broadcast_offset(b_shape, out_shape, idx);
		if (t == ST_DTYPE_FLOAT32)
			((float *)out)[i] = op_float(op, ((const float *)a)[ia], ((const float *)b)[ib]);
		else
			set_int(out, t, i, op_int(op, get_int(a, t, ia), get_int(b, t, ib)));
	}
}

void
k_linear_blend_ref(float alpha, float *out, const st_shape *out_shape, const float *a,
                   const st_shape *a_shape, const float *b, const st_shape *b_shape)
{
	int64_t n = k_elements(out_shape), idx[ST_MAX_RANK];
	float beta = (float)(1.0 - (double)alpha);
	for (int64_t i = 0; i < n; i++) {
		unravel(i, out_shape, idx);
		out[i] = alpha * a[broadcast_offset(a_shape, out_shape, idx)] +
		         beta * b[broadcast_offset(b_shape, out_shape, idx)];
	}
}

/* ---- the fast path: broadcasting by rows ---- */

/*
 * The operands, as strides over the output's axes (0 where an operand is
 * broadcast), with size-1 axes dropped and neighbouring axes merged where
 * both operands walk them contiguously. The innermost stride of each
 * operand is then 1 or 0, and runs of the innermost axis go to a loop
 * specialised for that pair of strides.
 */
typedef struct bcast {
	int rank;
	int64_t dims[ST_MAX_RANK];
	int64_t sa[ST_MAX_RANK], sb[ST_MAX_RANK];
} bcast;

static void
operand_strides(const st_shape *s, const st_shape *out, int64_t *strides)
{
	int64_t stride = 1;
	for (int k = out->rank - 1; k >= 0; k--) {
		int ks = k - (out->rank - s->rank);
		if (ks < 0 || s->dims[ks] == 1) {
			strides[k] = 0;
		} else {
			strides[k] = stride;
			stride *= s->dims[ks];
		}
	}
}

static void
bcast_init(bcast *bc, const st_shape *out, const st_shape *a, const st_shape *b)
{
	int64_t sa[ST_MAX_RANK], sb[ST_MAX_RANK];
	operand_strides(a, out, sa);
	operand_strides(b, out, sb);
	int r = 0;
	for (int k = 0; k < out->rank; k++) {
		if (out->dims[k] == 1)
			continue;
		if (r > 0 && bc->sa[r - 1] == sa[k] * out->dims[k] && bc->sb[r - 1] == sb[k] * out->dims[k]) {
			bc->dims[r - 1] *= out->dims[k];
			bc->sa[r - 1] = sa[k];
			bc->sb[r - 1] = sb[k];
			continue;
		}
		bc->dims[r] = out->dims[k];
		bc->sa[r] = sa[k];
		bc->sb[r] = sb[k];
		r++;
	}
	if (r == 0) {
		/* A single element. */
		bc->dims[0] = 1;
		bc->sa[0] = bc->sb[0] = 1;
		r = 1;
	}
	bc->rank = r;
}

/* One loop over a run: o[i] = EXPR(x, y) with x from a (stride SA), y from b
 * (stride SB), SA and SB constant 0 or 1. */
#define RUN(T, SA, SB, EXPR)                                                      \
	do {                                                                      \
		int64_t i_ = 0;                                                   \
		for (; i_ + BLOCK <= n; i_ += BLOCK) {                            \
			T xa_[BLOCK], yb_[BLOCK];                                 \
			for (int j_ = 0; j_ < BLOCK; j_++) {                      \
				xa_[j_] = a[(i_ + j_) * (SA)];                    \
				yb_[j_] = b[(i_ + j_) * (SB)];                    \
			}                                                         \
			for (int j_ = 0; j_ < BLOCK; j_++) {                      \
				T x = xa_[j_], y = yb_[j_];                       \
				o[i_ + j_] = (EXPR);                              \
			}                                                         \
		}                                                                 \
		for (; i_ < n; i_++) {                                            \
			T x = a[i_ * (SA)], y = b[i_ * (SB)];                     \
			o[i_] = (EXPR);                                           \
		}                                                                 \
	} while (0)

/* The four stride pairs of one expression. */
#define RUNS(T, EXPR)                                \
	do {                                         \
		if (sa && sb)                        \
			RUN(T, 1, 1, EXPR);          \
		else if (sa)                         \
			RUN(T, 1, 0, EXPR);          \
		else if (sb)                         \
			RUN(T, 0, 1, EXPR);          \
		else                                 \
			RUN(T, 0, 0, EXPR);          \
	} while (0)

static void
run_float(k_op op, float *o, const float *a, int64_t sa, const float *b, int64_t sb, int64_t n)
{
	switch (op) {
	case K_OP_ADD:
		RUNS(float, x + y);
		break;
	case K_OP_SUB:
		RUNS(float, x - y);
		break;
	case K_OP_MUL:
		RUNS(float, x * y);
		break;
	case K_OP_DIV:
		RUNS(float, x / y);
		break;
	case K_OP_MAX: /* a NaN in x wins by the test, a NaN in y by falling through */
		RUNS(float, (x > y || x != x) ? x : y);
		break;
	default:
		RUNS(float, (x < y || x != x) ? x : y);
		break;
	}
}

/* Integer loops: add, sub and mul wrap around through the unsigned type U. */
#define INT_RUNNER(NAME, T, U)                                                                  \
	static void NAME(k_op op, T *o, const T *a, int64_t sa, const T *b, int64_t sb, int64_t n) \
	{                                                                                       \
		switch (op) {                                                                   \
		case K_OP_ADD:                                                                  \
			RUNS(T, (T)(U)((U)x + (U)y));                                           \
			break;                                                                  \
		case K_OP_SUB:                                                                  \
			RUNS(T, (T)(U)((U)x - (U)y));                                           \
			break;                                                                  \
		case K_OP_MUL:                                                                  \
			RUNS(T, (T)(U)((U)x * (U)y));                                           \
			break;                                                                  \
		case K_OP_MAX:                                                                  \
			RUNS(T, x > y ? x : y);                                                 \
			break;                                                                  \
		default:                                                                        \
			RUNS(T, x < y ? x : y);                                                 \
			break;                                                                  \
		}                                                                               \
	}

INT_RUNNER(run_i64, int64_t, uint64_t)
INT_RUNNER(run_i32, int32_t, uint32_t)
INT_RUNNER(run_i8, int8_t, uint8_t)
INT_RUNNER(run_u8, uint8_t, unsigned)

static void
run_blend(float alpha, float beta, float *o, const float *a, int64_t sa, const float *b, int64_t sb,
          int64_t n)
{
	RUNS(float, alpha * x + beta * y);
}

typedef struct binary_job {
	bcast bc;
	bool blend;
	k_op op;
	st_dtype t;
	size_t elem;
	float alpha, beta;
	char *out;
	const char *a, *b;
} binary_job;

/* A run of n elements at output element o, operand elements ia and ib. */
static void
binary_run(const binary_job *j, int64_t o, int64_t ia, int64_t ib, int64_t n)
{
	int last = j->bc.rank - 1;
	int64_t sa = j->bc.sa[last], sb = j->bc.sb[last];
	void *po = j->out + o * (int64_t)j->elem;
	const void *pa = j->a + ia * (int64_t)j->elem, *pb = j->b + ib * (int64_t)j->elem;
	if (j->blend) {
		run_blend(j->alpha, j->beta, po, pa, sa, pb, sb, n);
		return;
	}
	switch (j->t) {
	case ST_DTYPE_FLOAT32:
		run_float(j->op, po, pa, sa, pb, sb, n);
		break;
	case ST_DTYPE_INT64:
		run_i64(j->op, po, pa, sa, pb, sb, n);
		break;
	case ST_DTYPE_INT32:
		run_i32(j->op, po, pa, sa, pb, sb, n);
		break;
	case ST_DTYPE_INT8:
		run_i8(j->op, po, pa, sa, pb, sb, n);
		break;
	default:
		run_u8(j->op, po, pa, sa, pb, sb, n);
		break;
	}
}

/* Output elements [begin, end), row piece by row piece. */
static void
binary_range(void *arg, int64_t begin, int64_t end)
{
	const binary_job *j = arg;
	const bcast *bc = &j->bc;
	int last = bc->rank - 1;
	int64_t len = bc->dims[last];
	int64_t idx[ST_MAX_RANK], rest = begin, ia = 0, ib = 0;
	for (int k = last; k >= 0; k--) {
		idx[k] = rest % bc->dims[k];
		rest /= bc->dims[k];
		ia += idx[k] * bc->sa[k];
		ib += idx[k] * bc->sb[k];
	}
	int64_t o = begin;
	while (o < end) {
		int64_t n = len - idx[last];
		if (n > end - o)
			n = end - o;
		binary_run(j, o, ia, ib, n);
		o += n;
		/* Start of the next row: carry into the outer axes. */
		ia += n * bc->sa[last];
		ib += n * bc->sb[last];
		idx[last] += n;
		for (int k = last; k > 0 && idx[k] == bc->dims[k]; k--) {
			ia += bc->sa[k - 1] - bc->dims[k] * bc->sa[k];
			ib += bc->sb[k - 1] - bc->dims[k] * bc->sb[k];
			idx[k] = 0;
			idx[k - 1]++;
		}
	}
}

static void
binary_start(binary_job *j, const st_shape *out_shape, const st_shape *a_shape,
             const st_shape *b_shape, const st_exec_ctx *ctx)
{
	int64_t n = k_elements(out_shape);
	if (n == 0)
		return;
	bcast_init(&j->bc, out_shape, a_shape, b_shape);
	k_parallel(ctx, n, K_GRAIN, binary_range, j);
}

void
k_binary(k_op op, st_dtype t, void *out, const st_shape *out_shape, const void *a,
         const st_shape *a_shape, const void *b, const st_shape *b_shape, const st_exec_ctx *ctx)
{
	binary_job j = { .op = op, .t = t, .elem = k_dtype_size(t), .out = out, .a = a, .b = b };
	binary_start(&j, out_shape, a_shape, b_shape, ctx);
}

/* ---- float16 storage ---- */

/* Elements widened at a time, on the stack: three blocks of 6 KiB. */
#define HALF_BLOCK 1536

typedef struct half_job {
	k_op op;
	uint16_t *out;
	const uint16_t *a, *b;
	int64_t n;
} half_job;

static void
half_range(void *arg, int64_t i0, int64_t i1)
{
	const half_job *j = arg;
	float x[HALF_BLOCK], y[HALF_BLOCK];
	for (int64_t i = i0; i < i1; i += HALF_BLOCK) {
		int64_t n = i1 - i < HALF_BLOCK ? i1 - i : HALF_BLOCK;
		k_half_to_float_array(j->a + i, x, n);
		k_half_to_float_array(j->b + i, y, n);
		/* One loop per operation, for the compiler to vectorise. */
		switch (j->op) {
		case K_OP_ADD:
			for (int64_t k = 0; k < n; k++)
				x[k] += y[k];
			break;
		case K_OP_SUB:
			for (int64_t k = 0; k < n; k++)
				x[k] -= y[k];
			break;
		case K_OP_MUL:
			for (int64_t k = 0; k < n; k++)
				x[k] *= y[k];
			break;
		default:
			for (int64_t k = 0; k < n; k++)
				x[k] = op_float(j->op, x[k], y[k]);
			break;
		}
		k_float_to_half_array(x, j->out + i, n);
	}
}

void
k_binary_half(k_op op, uint16_t *out, const uint16_t *a, const uint16_t *b, int64_t n, const st_exec_ctx *ctx)
{
	if (n <= 0)
		return;
	half_job j = { op, out, a, b, n };
	k_parallel(ctx, n, K_GRAIN, half_range, &j);
}

void
k_linear_blend(float alpha, float *out, const st_shape *out_shape, const float *a,
               const st_shape *a_shape, const float *b, const st_shape *b_shape,
               const st_exec_ctx *ctx)
{
	binary_job j = { .blend = true, .alpha = alpha, .beta = (float)(1.0 - (double)alpha),
		         .t = ST_DTYPE_FLOAT32, .elem = 4, .out = (char *)out, .a = (const char *)a,
		         .b = (const char *)b };
	binary_start(&j, out_shape, a_shape, b_shape, ctx);
}

/* ---- softmax ---- */

void
k_softmax_ref(const float *x, float *y, int64_t outer, int64_t len, int64_t inner)
{
	for (int64_t o = 0; o < outer; o++) {
		for (int64_t i = 0; i < inner; i++) {
			const float *xs = x + o * len * inner + i;
			float *ys = y + o * len * inner + i;
			double max = -INFINITY, sum = 0;
			for (int64_t k = 0; k < len; k++)
				max = fmax(max, xs[k * inner]);
			for (int64_t k = 0; k < len; k++)
				sum += exp((double)xs[k * inner] - max);
			for (int64_t k = 0; k < len; k++)
				ys[k * inner] = (float)(exp((double)xs[k * inner] - max) / sum);
		}
	}
}

/* Columns of the inner axis handled together, with their max and sum on the stack. */
#define SOFTMAX_COLUMNS 256

typedef struct softmax_job {
	const float *x;
	float *y;
	int64_t len, inner, chunks;
} softmax_job;

/* The largest of n values, NaN aside, in BLOCK lanes. */
static float
row_max(const float *x, int64_t n)
{
	float lane[BLOCK];
	for (int j = 0; j < BLOCK; j++)
		lane[j] = -INFINITY;
	int64_t i = 0;
	for (; i + BLOCK <= n; i += BLOCK) {
		for (int j = 0; j < BLOCK; j++)
			lane[j] = x[i + j] > lane[j] ? x[i + j] : lane[j];
	}
	float max = -INFINITY;
	for (int j = 0; j < BLOCK; j++)
		max = lane[j] > max ? lane[j] : max;
	for (; i < n; i++)
		max = x[i] > max ? x[i] : max;
	return max;
}

/* y[i] *= s[i] (s a scalar when s_step is 0), BLOCK at a time. */
static void
scale(float *y, const float *s, int s_step, int64_t n)
{
	int64_t i = 0;
	for (; i + BLOCK <= n; i += BLOCK) {
		float v[BLOCK], f[BLOCK];
		for (int j = 0; j < BLOCK; j++) {
			v[j] = y[i + j];
			f[j] = s[(i + j) * s_step];
		}
		for (int j = 0; j < BLOCK; j++)
			y[i + j] = v[j] * f[j];
	}
	for (; i < n; i++)
		y[i] *= s[i * s_step];
}

/* Rows of a softmax over the last axis (inner 1). */
static void
softmax_rows(void *arg, int64_t begin, int64_t end)
{
	const softmax_job *j = arg;
	int64_t len = j->len;
	for (int64_t r = begin; r < end; r++) {
		const float *x = j->x + r * len;
		float *y = j->y + r * len;
		float sum = k_exp_sum(x, y, len, row_max(x, len));
		float inv = 1.0f / sum;
		scale(y, &inv, 0, len);
	}
}

/* (outer index, chunk of inner columns) items of a softmax over a middle axis. */
static void
softmax_columns(void *arg, int64_t begin, int64_t end)
{
	const softmax_job *j = arg;
	int64_t len = j->len, inner = j->inner;
	float max[SOFTMAX_COLUMNS], sum[SOFTMAX_COLUMNS];
	for (int64_t item = begin; item < end; item++) {
		int64_t o = item / j->chunks, c0 = (item % j->chunks) * SOFTMAX_COLUMNS;
		int64_t w = inner - c0 < SOFTMAX_COLUMNS ? inner - c0 : SOFTMAX_COLUMNS;
		const float *x = j->x + o * len * inner + c0;
		float *y = j->y + o * len * inner + c0;
		for (int64_t i = 0; i < w; i++) {
			max[i] = -INFINITY;
			sum[i] = 0;
		}
		for (int64_t k = 0; k < len; k++) {
			const float *xr = x + k * inner;
			int64_t i = 0;
			for (; i + BLOCK <= w; i += BLOCK) {
				for (int b = 0; b < BLOCK; b++)
					max[i + b] = xr[i + b] > max[i + b] ? xr[i + b] : max[i + b];
			}
			for (; i < w; i++)
				max[i] = xr[i] > max[i] ? xr[i] : max[i];
		}
		for (int64_t k = 0; k < len; k++) {
			float *yr = y + k * inner;
			k_exp_minus(x + k * inner, max, yr, w);
			int64_t i = 0;
			for (; i + BLOCK <= w; i += BLOCK) {
				for (int b = 0; b < BLOCK; b++)
					sum[i + b] += yr[i + b];
			}
			for (; i < w; i++)
				sum[i] += yr[i];
		}
		for (int64_t i = 0; i < w; i++)
			sum[i] = 1.0f / sum[i];
		for (int64_t k = 0; k < len; k++)
			scale(y + k * inner, sum, 1, w);
	}
}

void
k_softmax(const float *x, float *y, int64_t outer, int64_t len, int64_t inner, const st_exec_ctx *ctx)
{
	if (outer * len * inner == 0)
		return;
	softmax_job j = { .x = x, .y = y, .len = len, .inner = inner };
	if (inner == 1) {
		k_parallel(ctx, outer, K_GRAIN / len + 1, softmax_rows, &j);
		return;
	}
	j.chunks = (inner + SOFTMAX_COLUMNS - 1) / SOFTMAX_COLUMNS;
	int64_t per_item = len * (inner < SOFTMAX_COLUMNS ? inner : SOFTMAX_COLUMNS);
	k_parallel(ctx, outer * j.chunks, K_GRAIN / per_item + 1, softmax_columns, &j);
}
