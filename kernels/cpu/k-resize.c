/* ONNX Resize: nearest (four rounding modes), linear and cubic on any number
 * of axes, with every coordinate transformation but tf_crop_and_resize. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "k-tensor.h"

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
		/* Clamp into the input, then split between the two neighbours; at the
		 * last index both taps are the same element. */
		float xc = x < 0 ? 0 : x > (float)(in_len - 1) ? (float)(in_len - 1) : x;
		int64_t i0 = (int64_t)xc;
		if (i0 > in_len - 1)
			i0 = in_len - 1;
		int64_t i1 = i0 + 1 < in_len ? i0 + 1 : in_len - 1;
		index[0] = i0;
		index[1] = i1;
		if (i0 == i1) {
			weight[0] = weight[1] = 0.5f;
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

/* out[x] += w · Σ_t weight[x][t] · row[index[x][t]] along the last axis. */
static void
interpolate_row(float *out, const float *row, const k_resize_axis *ax, int64_t len, float w)
{
	if (ax->identity) {
		for (int64_t x = 0; x < len; x++)
			out[x] += w * row[x];
		return;
	}
	const int64_t *ix = ax->index;
	const float *wt = ax->weight;
	if (ax->taps == 2) {
		for (int64_t x = 0; x < len; x++)
			out[x] += w * (wt[2 * x] * row[ix[2 * x]] + wt[2 * x + 1] * row[ix[2 * x + 1]]);
		return;
	}
	for (int64_t x = 0; x < len; x++) {
		const int64_t *i4 = ix + 4 * x;
		const float *w4 = wt + 4 * x;
		out[x] += w * (w4[0] * row[i4[0]] + w4[1] * row[i4[1]] + w4[2] * row[i4[2]] +
		               w4[3] * row[i4[3]]);
	}
}

/* Linear and cubic: each output row is a weighted sum over the taps of the
 * outer axes (identity axes contribute one tap) of input rows, each
 * interpolated along the last axis. */
static void
resize_interp_rows(void *arg, int64_t begin, int64_t end)
{
	const resize_job *j = arg;
	const k_resize_plan *p = j->p;
	int r = p->out.rank, last = r - 1;
	int64_t len = p->out.dims[last];
	for (int64_t row = begin; row < end; row++) {
		/* Per outer axis: where its taps start, and how many count. */
		int64_t o_idx[ST_MAX_RANK], rest = row, base = 0;
		int moving[ST_MAX_RANK], n_moving = 0;
		for (int k = last - 1; k >= 0; k--) {
			o_idx[k] = rest % p->out.dims[k];
			rest /= p->out.dims[k];
			if (p->axis[k].identity)
				base += o_idx[k] * j->in_strides[k];
			else
				moving[n_moving++] = k;
		}
		float *o = (float *)(void *)j->out + row * len;
		memset(o, 0, (size_t)len * sizeof *o);
		int taps = p->axis[last].taps;
		int pick[ST_MAX_RANK] = { 0 };
		for (;;) {
			int64_t src = base;
			float w = 1;
			for (int m = 0; m < n_moving; m++) {
				const k_resize_axis *ax = &p->axis[moving[m]];
				int64_t t = o_idx[moving[m]] * taps + pick[m];
				src += ax->index[t] * j->in_strides[moving[m]];
				w *= ax->weight[t];
			}
			if (w != 0)
				interpolate_row(o, (const float *)(const void *)j->in + src, &p->axis[last], len, w);
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
k_resize(const k_resize_plan *p, const void *in, void *out, size_t elem, const st_exec_ctx *ctx)
{
	int r = p->out.rank;
	int64_t n = k_elements(&p->out);
	if (n == 0)
		return;
	resize_job j = { .p = p, .in = in, .out = out, .elem = elem };
	int64_t stride = 1;
	for (int k = r - 1; k >= 0; k--) {
		j.in_strides[k] = stride;
		stride *= p->in.dims[k];
	}
	int64_t len = p->out.dims[r - 1], rows = n / len;
	int64_t grain = K_GRAIN / (len * mode_taps(p->desc.mode)) + 1;
	if (p->desc.mode == K_RESIZE_NEAREST)
		k_parallel(ctx, rows, grain, resize_nearest_rows, &j);
	else
		k_parallel(ctx, rows, grain, resize_interp_rows, &j);
}
