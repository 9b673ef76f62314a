/* ONNX Resize: nearest (four rounding modes), linear and cubic on any number
 * of axes, with every coordinate transformation but tf_crop_and_resize. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "k-tensor.h"

/* Elements per loop step; see k-eltwise.c. */
#define BLOCK 8

/*
 * Where output index x of an axis lies in the input (ONNX Resize's
 * coordinate_transformation_mode), in float32 as ONNX Runtime computes it,
 * so nearest rounding flips at exactly the same places. An axis whose scale
 * is 1 maps onto itself, as there.
 */
static float
coordinate(k_coord_mode mode, float x, float scale, float out_len, float in_len)
{
	if (scale == 1.0f)
		return x;
	switch (mode) {
	case K_COORD_HALF_PIXEL_SYMMETRIC: {
		/* Centres the sampled range when floor() shortened the output. */
		float output_width = scale * in_len;
		float adjustment = out_len / output_width;
		float center = in_len / 2;
		float offset = center * (1 - adjustment);
		return (float)((double)offset + ((double)x + 0.5) / (double)scale - 0.5);
	}
	case K_COORD_PYTORCH_HALF_PIXEL:
		return out_len > 1 ? (x + 0.5f) / scale - 0.5f : 0.0f;
	case K_COORD_ALIGN_CORNERS:
		return out_len == 1 ? 0.0f : x * (in_len - 1) / (out_len - 1);
	case K_COORD_ASYMMETRIC:
		return x / scale;
	case K_COORD_TF_HALF_PIXEL_FOR_NN:
		return (x + 0.5f) / scale;
	default: /* half_pixel */
		return (x + 0.5f) / scale - 0.5f;
	}
}

/* The input index nearest_mode picks for coordinate x, before clamping. */
static int64_t
nearest_index(k_nearest_mode mode, float x)
{
	switch (mode) {
	case K_NEAREST_ROUND_PREFER_CEIL:
		return (int64_t)roundf(x); /* halves away from zero: up, for x >= 0 */
	case K_NEAREST_FLOOR:
		return (int64_t)floorf(x);
	case K_NEAREST_CEIL:
		return (int64_t)ceilf(x);
	default: /* round_prefer_floor */
		if (x == (float)(int64_t)x + 0.5f)
			return (int64_t)floorf(x);
		return (int64_t)roundf(x);
	}
}

static int64_t
clamp_index(int64_t i, int64_t len)
{
	return i < 0 ? 0 : i >= len ? len - 1 : i;
}

/* The cubic convolution kernel's weights for taps at floor(x) − 1 … + 2,
 * with s = x − floor(x) (Keys, as in ONNX). */
static void
cubic_weights(double s, double a, float *w)
{
	double s1 = s + 1, t = 1 - s, t1 = 2 - s;
	w[0] = (float)(((a * s1 - 5 * a) * s1 + 8 * a) * s1 - 4 * a);
	w[1] = (float)(((a + 2) * s - (a + 3)) * s * s + 1);
	w[2] = (float)(((a + 2) * t - (a + 3)) * t * t + 1);
	w[3] = (float)(((a * t1 - 5 * a) * t1 + 8 * a) * t1 - 4 * a);
}

static int
mode_taps(k_resize_mode mode)
{
	return mode == K_RESIZE_NEAREST ? 1 : mode == K_RESIZE_LINEAR ? 2 : 4;
}

/* The taps of output index o on axis k: input indices (inside the input)
 * and their weights. */
static void
axis_taps(const k_resize_desc *d, int64_t in_len, int64_t out_len, float scale, int64_t o,
          int64_t *index, float *weight)
{
	float x = coordinate(d->coord, (float)o, scale, (float)out_len, (float)in_len);
	switch (d->mode) {
	case K_RESIZE_NEAREST:
		index[0] = clamp_index(nearest_index(d->nearest, x), in_len);
		weight[0] = 1;
		break;
	case K_RESIZE_LINEAR: {
		/* Clamp into the input, then split between the two neighbours. At the
		 * last index both taps are the same element (ONNX Runtime weighs it
		 * ½ + ½); one tap of weight 1 is the same value and lets an axis that
		 * does not move be seen as the identity. */
		float xc = x < 0 ? 0 : x > (float)(in_len - 1) ? (float)(in_len - 1) : x;
		int64_t i0 = (int64_t)xc;
		if (i0 > in_len - 1)
			i0 = in_len - 1;
		int64_t i1 = i0 + 1 < in_len ? i0 + 1 : in_len - 1;
		index[0] = i0;
		index[1] = i1;
		if (i0 == i1) {
			weight[0] = 1;
			weight[1] = 0;
		} else {
			weight[0] = fabsf(xc - (float)i1);
			weight[1] = fabsf(xc - (float)i0);
		}
		break;
	}
	default: {
		float xf = floorf(x);
		int64_t base = (int64_t)xf;
		cubic_weights((double)(x - xf), (double)d->cubic_a, weight);
		float sum = 0;
		for (int j = 0; j < 4; j++) {
			int64_t i = base - 1 + j;
			if (d->exclude_outside && (i < 0 || i >= in_len))
				weight[j] = 0;
			sum += weight[j];
			index[j] = clamp_index(i, in_len);
		}
		if (d->exclude_outside && sum != 0) {
			for (int j = 0; j < 4; j++)
				weight[j] /= sum;
		}
		break;
	}
	}
}

/* ---- the reference ---- */

void
k_resize_ref(const k_resize_desc *d, const void *in, const st_shape *in_shape, void *out,
             const st_shape *out_shape, size_t elem)
{
	int r = in_shape->rank, taps = mode_taps(d->mode);
	int64_t in_strides[ST_MAX_RANK], stride = 1;
	for (int k = r - 1; k >= 0; k--) {
		in_strides[k] = stride;
		stride *= in_shape->dims[k];
	}
	int64_t n = k_elements(out_shape);
	for (int64_t o = 0; o < n; o++) {
		int64_t index[ST_MAX_RANK][4], rest = o;
		float weight[ST_MAX_RANK][4];
		for (int k = r - 1; k >= 0; k--) {
			int64_t ok = rest % out_shape->dims[k];
			rest /= out_shape->dims[k];
			axis_taps(d, in_shape->dims[k], out_shape->dims[k], d->scales[k], ok, index[k], weight[k]);
		}
		if (d->mode == K_RESIZE_NEAREST) {
			int64_t src = 0;
			for (int k = 0; k < r; k++)
				src += index[k][0] * in_strides[k];
			memcpy((char *)out + (size_t)o * elem, (const char *)in + (size_t)src * elem, elem);
			continue;
		}
		/* Every combination of taps, one per axis: the weighted sum of the
		 * taps^rank input elements around the point. */
		int64_t combos = 1;
		for (int k = 0; k < r; k++)
			combos *= taps;
		double sum = 0;
		for (int64_t c = 0; c < combos; c++) {
			int64_t pick = c, src = 0;
			double w = 1;
			for (int k = r - 1; k >= 0; k--) {
				int j = (int)(pick % taps);
				pick /= taps;
				src += index[k][j] * in_strides[k];
				w *= weight[k][j];
			}
			sum += w * ((const float *)in)[src];
		}
		((float *)out)[o] = (float)sum;
	}
}

/* ---- the plan ---- */

size_t
k_resize_plan_bytes(const k_resize_desc *d, const st_shape *in, const st_shape *out)
{
	(void)in;
	size_t taps = (size_t)mode_taps(d->mode), per = 0;
	for (int k = 0; k < out->rank; k++)
		per += (size_t)out->dims[k] * taps;
	size_t head = (sizeof(k_resize_plan) + 7) / 8 * 8;
	return head + per * sizeof(int64_t) + per * sizeof(float);
}

k_resize_plan *
k_resize_plan_init(void *memory, const k_resize_desc *d, const st_shape *in, const st_shape *out)
{
	k_resize_plan *p = memory;
	memset(p, 0, sizeof *p);
	p->desc = *d;
	p->in = *in;
	p->out = *out;
	int taps = mode_taps(d->mode);
	size_t per = 0;
	for (int k = 0; k < out->rank; k++)
		per += (size_t)out->dims[k] * (size_t)taps;
	int64_t *index = (int64_t *)(void *)((char *)memory + (sizeof(k_resize_plan) + 7) / 8 * 8);
	float *weight = (float *)(void *)(index + per);
	for (int k = 0; k < out->rank; k++) {
		k_resize_axis *a = &p->axis[k];
		a->taps = taps;
		a->index = index;
		a->weight = weight;
		a->identity = in->dims[k] == out->dims[k];
		for (int64_t o = 0; o < out->dims[k]; o++) {
			int64_t *ix = index + o * taps;
			float *w = weight + o * taps;
			axis_taps(d, in->dims[k], out->dims[k], d->scales[k], o, ix, w);
			/* Identity means the tap at o carries everything. */
			for (int j = 0; j < taps; j++) {
				if (w[j] != 0 && !(ix[j] == o && w[j] == 1))
					a->identity = false;
			}
		}
		index += out->dims[k] * taps;
		weight += out->dims[k] * taps;
	}
	return p;
}

/* ---- the fast path: output rows from precomputed taps ---- */

typedef struct resize_job {
	const k_resize_plan *p;
	const char *in;
	char *out;
	size_t elem;
	int64_t in_strides[ST_MAX_RANK];
	float *rows;                      /* linear and cubic: rows interpolated along the last axis */
	int64_t row_strides[ST_MAX_RANK]; /* rows between neighbours along each outer axis */
} resize_job;

/* Copies count elements of size elem from in[index[o·taps]] to out[o]. */
static void
gather_row(char *out, const char *in, const int64_t *index, int taps, int64_t count, size_t elem)
{
	switch (elem) {
	case 1:
		for (int64_t o = 0; o < count; o++)
			out[o] = in[index[o * taps]];
		break;
	case 2:
		for (int64_t o = 0; o < count; o++)
			memcpy(out + o * 2, in + index[o * taps] * 2, 2);
		break;
	case 4:
		for (int64_t o = 0; o < count; o++)
			memcpy(out + o * 4, in + index[o * taps] * 4, 4);
		break;
	case 8:
		for (int64_t o = 0; o < count; o++)
			memcpy(out + o * 8, in + index[o * taps] * 8, 8);
		break;
	default:
		for (int64_t o = 0; o < count; o++)
			memcpy(out + (size_t)o * elem, in + (size_t)index[o * taps] * elem, elem);
		break;
	}
}

/* Nearest: every output row is one input row, gathered. Consecutive output
 * rows that read the same input row (upsampling) copy the previous one. */
static void
resize_nearest_rows(void *arg, int64_t begin, int64_t end)
{
	const resize_job *j = arg;
	const k_resize_plan *p = j->p;
	int r = p->out.rank, last = r - 1;
	int64_t len = p->out.dims[last];
	size_t row_bytes = (size_t)len * j->elem;
	const k_resize_axis *ax = &p->axis[last];
	int64_t prev = -1;
	for (int64_t row = begin; row < end; row++) {
		int64_t rest = row, src = 0;
		for (int k = last - 1; k >= 0; k--) {
			int64_t o = rest % p->out.dims[k];
			rest /= p->out.dims[k];
			src += p->axis[k].index[o] * j->in_strides[k];
		}
		char *o = j->out + (size_t)row * row_bytes;
		if (src == prev) {
			memcpy(o, o - row_bytes, row_bytes);
		} else {
			const char *irow = j->in + (size_t)src * j->elem;
			if (ax->identity)
				memcpy(o, irow, row_bytes);
			else
				gather_row(o, irow, ax->index, 1, len, j->elem);
		}
		prev = src;
	}
}

/*
 * Linear and cubic are separable, so they go in two passes. The first
 * interpolates every input row along the last axis into scratch (skipped
 * when that axis is unchanged); the second builds each output row as a
 * weighted sum of those rows over the taps of the outer axes, a loop of
 * contiguous multiply-adds (skipped when the outer axes are unchanged, in
 * which case the first pass writes the output directly).
 */

/* Whether any axis before the last moves. */
static bool
outer_moves(const k_resize_plan *p)
{
	for (int k = 0; k < p->out.rank - 1; k++) {
		if (!p->axis[k].identity)
			return true;
	}
	return false;
}

size_t
k_resize_scratch_bytes(const k_resize_plan *p)
{
	int last = p->out.rank - 1;
	if (p->desc.mode == K_RESIZE_NEAREST || p->axis[last].identity || !outer_moves(p))
		return 0;
	return (size_t)(k_elements(&p->in) / p->in.dims[last] * p->out.dims[last]) * sizeof(float);
}

/* Pass one: rows [begin, end) of the input, interpolated along the last axis. */
static void
resize_horizontal(void *arg, int64_t begin, int64_t end)
{
	const resize_job *j = arg;
	const k_resize_plan *p = j->p;
	int last = p->out.rank - 1;
	const k_resize_axis *ax = &p->axis[last];
	int64_t in_len = p->in.dims[last], len = p->out.dims[last];
	const int64_t *ix = ax->index;
	const float *wt = ax->weight;
	for (int64_t row = begin; row < end; row++) {
		const float *in = (const float *)(const void *)j->in + row * in_len;
		float *o = j->rows + row * len;
		if (ax->taps == 2) {
			for (int64_t x = 0; x < len; x++)
				o[x] = wt[2 * x] * in[ix[2 * x]] + wt[2 * x + 1] * in[ix[2 * x + 1]];
		} else {
			for (int64_t x = 0; x < len; x++) {
				const int64_t *i4 = ix + 4 * x;
				const float *w4 = wt + 4 * x;
				o[x] = w4[0] * in[i4[0]] + w4[1] * in[i4[1]] + w4[2] * in[i4[2]] + w4[3] * in[i4[3]];
			}
		}
	}
}

/* o[x] = w·t[x] (first) or o[x] += w·t[x], BLOCK at a time. */
static void
axpy(float *o, const float *t, float w, int64_t n, bool first)
{
	int64_t x = 0;
	for (; x + BLOCK <= n; x += BLOCK) {
		float a[BLOCK], b[BLOCK];
		for (int i = 0; i < BLOCK; i++) {
			a[i] = first ? 0.0f : o[x + i];
			b[i] = t[x + i];
		}
		for (int i = 0; i < BLOCK; i++)
			o[x + i] = a[i] + w * b[i];
	}
	for (; x < n; x++)
		o[x] = (first ? 0.0f : o[x]) + w * t[x];
}

/* Pass two: output rows [begin, end) from the rows of pass one. */
static void
resize_outer(void *arg, int64_t begin, int64_t end)
{
	const resize_job *j = arg;
	const k_resize_plan *p = j->p;
	int last = p->out.rank - 1;
	int64_t len = p->out.dims[last];
	for (int64_t row = begin; row < end; row++) {
		/* Identity axes fix their row; the moving ones enumerate their taps. */
		int64_t o_idx[ST_MAX_RANK], rest = row, base = 0;
		int moving[ST_MAX_RANK], n_moving = 0;
		for (int k = last - 1; k >= 0; k--) {
			o_idx[k] = rest % p->out.dims[k];
			rest /= p->out.dims[k];
			if (p->axis[k].identity)
				base += o_idx[k] * j->row_strides[k];
			else
				moving[n_moving++] = k;
		}
		float *o = (float *)(void *)j->out + row * len;
		int taps = p->axis[moving[0]].taps;
		int pick[ST_MAX_RANK] = { 0 };
		bool first = true;
		for (;;) {
			int64_t src = base;
			float w = 1;
			for (int m = 0; m < n_moving; m++) {
				const k_resize_axis *ax = &p->axis[moving[m]];
				int64_t t = o_idx[moving[m]] * taps + pick[m];
				src += ax->index[t] * j->row_strides[moving[m]];
				w *= ax->weight[t];
			}
			if (w != 0 || first) {
				axpy(o, j->rows + src * len, w, len, first);
				first = false;
			}
			/* Next combination of taps. */
			int m = 0;
			while (m < n_moving && ++pick[m] == taps)
				pick[m++] = 0;
			if (m == n_moving)
				break;
		}
	}
}

void
k_resize(const k_resize_plan *p, const void *in, void *out, size_t elem, void *scratch,
         const st_exec_ctx *ctx)
{
	int r = p->out.rank, last = r - 1;
	int64_t n = k_elements(&p->out);
	if (n == 0)
		return;
	resize_job j = { .p = p, .in = in, .out = out, .elem = elem };
	int64_t stride = 1;
	for (int k = r - 1; k >= 0; k--) {
		j.in_strides[k] = stride;
		stride *= p->in.dims[k];
	}
	int64_t len = p->out.dims[last], rows = n / len;
	if (p->desc.mode == K_RESIZE_NEAREST) {
		k_parallel(ctx, rows, K_GRAIN / len + 1, resize_nearest_rows, &j);
		return;
	}
	int64_t in_rows = k_elements(&p->in) / p->in.dims[last];
	if (!outer_moves(p)) {
		/* Only the last axis moves: one pass, straight into the output. */
		j.rows = out;
		k_parallel(ctx, in_rows, K_GRAIN / (len * p->axis[last].taps) + 1, resize_horizontal, &j);
		return;
	}
	if (p->axis[last].identity) {
		j.rows = (float *)(uintptr_t)in; /* read only: the input's rows as they are */
	} else {
		j.rows = scratch;
		k_parallel(ctx, in_rows, K_GRAIN / (len * p->axis[last].taps) + 1, resize_horizontal, &j);
	}
	/* Rows of pass one are indexed by the input's outer axes. */
	int64_t row_stride = 1;
	for (int k = last - 1; k >= 0; k--) {
		j.row_strides[k] = row_stride;
		row_stride *= p->in.dims[k];
	}
	k_parallel(ctx, rows, K_GRAIN / (len * 2) + 1, resize_outer, &j);
}
