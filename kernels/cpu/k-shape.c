/* Data movement by element size: copies, fills, concatenation and split,
 * transposes, slices, pads, space_to_depth and depth_to_space. */
#include "config.h"

#include <string.h>

#include "k-tensor.h"

/* ---- copies and fills ---- */

typedef struct copy_job {
	char *dst;
	const char *src;
} copy_job;

static void
copy_range(void *arg, int64_t begin, int64_t end)
{
	copy_job *j = arg;
	memcpy(j->dst + begin, j->src + begin, (size_t)(end - begin));
}

void
k_copy(void *dst, const void *src, size_t bytes, const st_exec_ctx *ctx)
{
	if (dst == src || bytes == 0)
		return;
	copy_job j = { dst, src };
	k_parallel(ctx, (int64_t)bytes, 4 * K_GRAIN, copy_range, &j);
}

typedef struct fill_job {
	char *dst;
	const void *value;
	size_t elem;
} fill_job;

/* Sets elements [begin, end) by doubling the filled prefix with memcpy. */
static void
fill_range(void *arg, int64_t begin, int64_t end)
{
	fill_job *j = arg;
	char *p = j->dst + begin * (int64_t)j->elem;
	size_t total = (size_t)(end - begin) * j->elem;
	if (total == 0)
		return;
	memcpy(p, j->value, j->elem);
	size_t done = j->elem;
	while (done < total) {
		size_t n = done < total - done ? done : total - done;
		memcpy(p + done, p, n);
		done += n;
	}
}

void
k_fill(void *dst, int64_t n, const void *value, size_t elem, const st_exec_ctx *ctx)
{
	fill_job j = { dst, value, elem };
	k_parallel(ctx, n, K_GRAIN, fill_range, &j);
}

/* ---- strided gathers ----
 *
 * Transpose, slice, space_to_depth and depth_to_space all write a dense
 * output whose element at index (o_0, …, o_r-1) is the input element at
 * base + Σ o_k·stride_k (strides in elements, possibly negative). One engine
 * does them all: it drops axes of size 1, merges axes that are contiguous
 * in both tensors, then copies whole rows, tiles of a 2-D transpose, or
 * single elements. */

typedef struct gather {
	int rank;
	int64_t dims[2 * ST_MAX_RANK];
	int64_t strides[2 * ST_MAX_RANK]; /* of the input, per output axis */
	const char *in;                   /* the element at output index 0 */
	char *out;
	size_t elem;
} gather;

/* Drops size-1 axes and merges neighbours the input walks contiguously. */
static void
gather_simplify(gather *g)
{
	int r = 0;
	for (int k = 0; k < g->rank; k++) {
		if (g->dims[k] == 1)
			continue;
		if (r > 0 && g->strides[r - 1] == g->strides[k] * g->dims[k]) {
			g->dims[r - 1] *= g->dims[k];
			g->strides[r - 1] = g->strides[k];
			continue;
		}
		g->dims[r] = g->dims[k];
		g->strides[r] = g->strides[k];
		r++;
	}
	g->rank = r;
}

/* Copies count elements of size elem from a stride (in elements) to dense. */
static void
copy_strided(char *restrict out, const char *restrict in, int64_t stride, int64_t count, size_t elem)
{
	switch (elem) {
	case 1:
		for (int64_t i = 0; i < count; i++)
			out[i] = in[i * stride];
		break;
	case 2: {
		uint16_t *o = (uint16_t *)(void *)out;
		for (int64_t i = 0; i < count; i++)
			memcpy(&o[i], in + i * stride * 2, 2);
		break;
	}
	case 4: {
		uint32_t *o = (uint32_t *)(void *)out;
		for (int64_t i = 0; i < count; i++)
			memcpy(&o[i], in + i * stride * 4, 4);
		break;
	}
	case 8: {
		uint64_t *o = (uint64_t *)(void *)out;
		for (int64_t i = 0; i < count; i++)
			memcpy(&o[i], in + i * stride * 8, 8);
		break;
	}
	default:
		for (int64_t i = 0; i < count; i++)
			memcpy(out + (size_t)i * elem, in + i * stride * (int64_t)elem, elem);
		break;
	}
}

/* Rows of the last axis, contiguous or strided in the input. */
static void
gather_rows(void *arg, int64_t begin, int64_t end)
{
	const gather *g = arg;
	int last = g->rank - 1;
	int64_t len = g->dims[last], stride = g->strides[last];
	size_t elem = g->elem;
	int64_t idx[2 * ST_MAX_RANK];
	int64_t row = begin, off = 0;
	for (int k = last - 1; k >= 0; k--) {
		idx[k] = row % g->dims[k];
		off += idx[k] * g->strides[k];
		row /= g->dims[k];
	}
	for (int64_t r = begin; r < end; r++) {
		char *o = g->out + (size_t)(r * len) * elem;
		const char *i = g->in + off * (int64_t)elem;
		if (stride == 1)
			memcpy(o, i, (size_t)len * elem);
		else
			copy_strided(o, i, stride, len, elem);
		/* Next row: bump the innermost outer index, carrying. */
		for (int k = last - 1; k >= 0; k--) {
			off += g->strides[k];
			if (++idx[k] < g->dims[k])
				break;
			off -= idx[k] * g->strides[k];
			idx[k] = 0;
		}
	}
}

#define TILE 32

/* A 2-D transpose inside a gather: axis a is the one the input walks with
 * stride 1, the output's last axis walks the input with a larger stride.
 * Work items are (outer index, tile of a) pairs. */
typedef struct tiled {
	const gather *g;
	int a;               /* the contiguous input axis, before the last */
	int64_t tiles;       /* tiles along a */
	int64_t out_stride_a; /* output elements between neighbours along a */
} tiled;

static void
gather_tiles(void *arg, int64_t begin, int64_t end)
{
	const tiled *t = arg;
	const gather *g = t->g;
	int last = g->rank - 1, a = t->a;
	size_t elem = g->elem;
	int64_t len = g->dims[last], stride = g->strides[last];
	for (int64_t item = begin; item < end; item++) {
		int64_t outer = item / t->tiles, tile = item % t->tiles;
		/* Offsets of the other axes (not a, not last) from the outer index,
		 * in the input and in the output. */
		int64_t in_off = 0, out_off = 0, rest = outer, out_stride = len;
		for (int k = last - 1; k >= 0; k--) {
			if (k == a) {
				out_stride *= g->dims[k];
				continue;
			}
			int64_t i = rest % g->dims[k];
			rest /= g->dims[k];
			in_off += i * g->strides[k];
			out_off += i * out_stride;
			out_stride *= g->dims[k];
		}
		int64_t a0 = tile * TILE, a1 = a0 + TILE < g->dims[a] ? a0 + TILE : g->dims[a];
		for (int64_t b0 = 0; b0 < len; b0 += TILE) {
			int64_t b1 = b0 + TILE < len ? b0 + TILE : len;
			for (int64_t i = a0; i < a1; i++) {
				char *o = g->out + (size_t)(out_off + i * t->out_stride_a + b0) * elem;
				const char *s = g->in + (in_off + i + b0 * stride) * (int64_t)elem;
				copy_strided(o, s, stride, b1 - b0, elem);
			}
		}
	}
}

static void
gather_run(gather *g, const st_exec_ctx *ctx)
{
	gather_simplify(g);
	if (g->rank == 0) {
		memcpy(g->out, g->in, g->elem);
		return;
	}
	int last = g->rank - 1;
	int64_t rows = 1;
	for (int k = 0; k < last; k++)
		rows *= g->dims[k];
	int64_t len = g->dims[last];
	int64_t grain = K_GRAIN / (len > 0 ? len : 1) + 1;
	/* An output row that walks the input with a stride while another axis
	 * is contiguous there: copy in tiles so both sides stay in cache. */
	int a = -1;
	if (g->strides[last] != 1 && len >= 8) {
		for (int k = last - 1; k >= 0; k--) {
			if (g->strides[k] == 1 && g->dims[k] >= 8) {
				a = k;
				break;
			}
		}
	}
	if (a < 0) {
		k_parallel(ctx, rows, grain, gather_rows, g);
		return;
	}
	tiled t = { .g = g, .a = a, .tiles = (g->dims[a] + TILE - 1) / TILE };
	t.out_stride_a = len;
	for (int k = last - 1; k > a; k--)
		t.out_stride_a *= g->dims[k];
	int64_t outer = rows / g->dims[a];
	k_parallel(ctx, outer * t.tiles, K_GRAIN / (TILE * len) + 1, gather_tiles, &t);
}

/* The dense strides (in elements) of a shape. */
static void
dense_strides(const st_shape *s, int64_t *strides)
{
	int64_t st = 1;
	for (int k = s->rank - 1; k >= 0; k--) {
		strides[k] = st;
		st *= s->dims[k];
	}
}

/* Splits a dense output index into its multi-index over dims. */
static void
unravel(int64_t i, int rank, const int64_t *dims, int64_t *idx)
{
	for (int k = rank - 1; k >= 0; k--) {
		idx[k] = i % dims[k];
		i /= dims[k];
	}
}

/* ---- transpose ---- */

void
k_transpose_ref(const void *in, const st_shape *in_shape, const int *perm, void *out, size_t elem)
{
	int r = in_shape->rank;
	int64_t in_strides[ST_MAX_RANK], out_dims[ST_MAX_RANK], idx[ST_MAX_RANK];
	dense_strides(in_shape, in_strides);
	for (int k = 0; k < r; k++)
		out_dims[k] = in_shape->dims[perm[k]];
	int64_t n = k_elements(in_shape);
	for (int64_t i = 0; i < n; i++) {
		unravel(i, r, out_dims, idx);
		int64_t src = 0;
		for (int k = 0; k < r; k++)
			src += idx[k] * in_strides[perm[k]];
		memcpy((char *)out + (size_t)i * elem, (const char *)in + (size_t)src * elem, elem);
	}
}

void
k_transpose(const void *in, const st_shape *in_shape, const int *perm, void *out, size_t elem,
            const st_exec_ctx *ctx)
{
	if (k_elements(in_shape) == 0)
		return;
	int64_t in_strides[ST_MAX_RANK];
	dense_strides(in_shape, in_strides);
	gather g = { .rank = in_shape->rank, .in = in, .out = out, .elem = elem };
	for (int k = 0; k < g.rank; k++) {
		g.dims[k] = in_shape->dims[perm[k]];
		g.strides[k] = in_strides[perm[k]];
	}
	gather_run(&g, ctx);
}

/* ---- slice ---- */

void
k_slice_ref(const void *in, const st_shape *in_shape, const int64_t *start, const int64_t *step,
            void *out, const st_shape *out_shape, size_t elem)
{
	int r = in_shape->rank;
	int64_t in_strides[ST_MAX_RANK], idx[ST_MAX_RANK];
	dense_strides(in_shape, in_strides);
	int64_t n = k_elements(out_shape);
	for (int64_t i = 0; i < n; i++) {
		unravel(i, r, out_shape->dims, idx);
		int64_t src = 0;
		for (int k = 0; k < r; k++)
			src += (start[k] + idx[k] * step[k]) * in_strides[k];
		memcpy((char *)out + (size_t)i * elem, (const char *)in + (size_t)src * elem, elem);
	}
}

void
k_slice(const void *in, const st_shape *in_shape, const int64_t *start, const int64_t *step,
        void *out, const st_shape *out_shape, size_t elem, const st_exec_ctx *ctx)
{
	if (k_elements(out_shape) == 0)
		return;
	int64_t in_strides[ST_MAX_RANK], base = 0;
	dense_strides(in_shape, in_strides);
	gather g = { .rank = in_shape->rank, .out = out, .elem = elem };
	for (int k = 0; k < g.rank; k++) {
		g.dims[k] = out_shape->dims[k];
		g.strides[k] = step[k] * in_strides[k];
		base += start[k] * in_strides[k];
	}
	g.in = (const char *)in + base * (int64_t)elem;
	gather_run(&g, ctx);
}

/* ---- space_to_depth, depth_to_space ---- */

void
k_space_to_depth(const void *in, const st_shape *in_shape, int64_t block, void *out, size_t elem,
                 const st_exec_ctx *ctx)
{
	int64_t n = in_shape->dims[0], c = in_shape->dims[1], h = in_shape->dims[2], w = in_shape->dims[3];
	if (n * c * h * w == 0)
		return;
	/* ONNX: reshape to (N, C, H/b, b, W/b, b), transpose to
	 * (N, b, b, C, H/b, W/b). */
	gather g = {
		.rank = 6,
		.dims = { n, block, block, c, h / block, w / block },
		.strides = { c * h * w, w, 1, h * w, block * w, block },
		.in = in, .out = out, .elem = elem,
	};
	gather_run(&g, ctx);
}

void
k_depth_to_space(const void *in, const st_shape *in_shape, int64_t block, bool crd, void *out,
                 size_t elem, const st_exec_ctx *ctx)
{
	int64_t n = in_shape->dims[0], c = in_shape->dims[1], h = in_shape->dims[2], w = in_shape->dims[3];
	if (n * c * h * w == 0)
		return;
	int64_t oc = c / (block * block), hw = h * w;
	/* Output (N, C/b², H, b, W, b). DCR reads channel (b1·b + b2)·C' + c',
	 * CRD reads channel c'·b² + b1·b + b2. */
	gather g = {
		.rank = 6,
		.dims = { n, oc, h, block, w, block },
		.in = in, .out = out, .elem = elem,
	};
	int64_t s_c = crd ? block * block * hw : hw;
	int64_t s_b1 = crd ? block * hw : block * oc * hw;
	int64_t s_b2 = crd ? hw : oc * hw;
	int64_t strides[6] = { c * hw, s_c, w, s_b1, 1, s_b2 };
	memcpy(g.strides, strides, sizeof strides);
	gather_run(&g, ctx);
}

/* ---- concatenation and split ---- */

/* Work items are (outer index, part) pairs: one part's block of bytes
 * within one outer index of the joined tensor. */
typedef struct concat_job {
	char *joined;            /* the concatenated tensor */
	const st_tensor *parts;
	int n, axis;
	bool split;              /* copy from joined into the parts */
	int64_t inner;           /* bytes per index along the axis */
	int64_t joined_block;    /* bytes of one outer index of the joined tensor */
} concat_job;

static void
concat_range(void *arg, int64_t begin, int64_t end)
{
	const concat_job *j = arg;
	int i = (int)(begin % j->n);
	int64_t outer = begin / j->n, offset = 0;
	for (int k = 0; k < i; k++)
		offset += j->parts[k].shape.dims[j->axis] * j->inner;
	for (int64_t item = begin; item < end; item++) {
		const st_tensor *part = &j->parts[i];
		int64_t block = part->shape.dims[j->axis] * j->inner;
		char *whole = j->joined + outer * j->joined_block + offset;
		char *piece = (char *)part->data + outer * block;
		if (j->split)
			memcpy(piece, whole, (size_t)block);
		else
			memcpy(whole, piece, (size_t)block);
		offset += block;
		if (++i == j->n) {
			i = 0;
			offset = 0;
			outer++;
		}
	}
}

/* Sets up a concatenation or split of whole; returns the outer count. */
static int64_t
concat_setup(concat_job *j, const st_tensor *whole, int axis, int n)
{
	const st_shape *s = &whole->shape;
	int64_t outer = 1;
	j->inner = (int64_t)k_dtype_size(s->dtype);
	for (int k = 0; k < axis; k++)
		outer *= s->dims[k];
	for (int k = axis + 1; k < s->rank; k++)
		j->inner *= s->dims[k];
	j->n = n;
	j->axis = axis;
	j->joined = whole->data;
	j->joined_block = s->dims[axis] * j->inner;
	return outer;
}

void
k_concat_ref(const st_tensor *in, int n, int axis, st_tensor *out)
{
	(void)n;
	const st_shape *s = &out->shape;
	size_t elem = k_dtype_size(s->dtype);
	int64_t idx[ST_MAX_RANK];
	int64_t total = k_elements(s);
	for (int64_t o = 0; o < total; o++) {
		unravel(o, s->rank, s->dims, idx);
		/* Find the input that holds this index along axis. */
		int i = 0;
		while (idx[axis] >= in[i].shape.dims[axis]) {
			idx[axis] -= in[i].shape.dims[axis];
			i++;
		}
		int64_t strides[ST_MAX_RANK], src = 0;
		dense_strides(&in[i].shape, strides);
		for (int k = 0; k < s->rank; k++)
			src += idx[k] * strides[k];
		memcpy((char *)out->data + (size_t)o * elem, (const char *)in[i].data + (size_t)src * elem,
		       elem);
	}
}

void
k_concat(const st_tensor *in, int n, int axis, st_tensor *out, const st_exec_ctx *ctx)
{
	concat_job j = { .parts = in };
	int64_t outer = concat_setup(&j, out, axis, n);
	if (outer * j.joined_block == 0)
		return;
	k_parallel(ctx, outer * n, 4 * K_GRAIN / (j.joined_block / n + 1) + 1, concat_range, &j);
}

void
k_split_ref(const st_tensor *in, int axis, st_tensor *out, int n)
{
	const st_shape *s = &in->shape;
	size_t elem = k_dtype_size(s->dtype);
	int64_t idx[ST_MAX_RANK], in_strides[ST_MAX_RANK];
	dense_strides(s, in_strides);
	int64_t first = 0;
	for (int i = 0; i < n; i++) {
		const st_shape *part = &out[i].shape;
		int64_t count = k_elements(part);
		for (int64_t o = 0; o < count; o++) {
			unravel(o, s->rank, part->dims, idx);
			idx[axis] += first;
			int64_t src = 0;
			for (int k = 0; k < s->rank; k++)
				src += idx[k] * in_strides[k];
			memcpy((char *)out[i].data + (size_t)o * elem, (const char *)in->data + (size_t)src * elem,
			       elem);
		}
		first += part->dims[axis];
	}
}

void
k_split(const st_tensor *in, int axis, st_tensor *out, int n, const st_exec_ctx *ctx)
{
	concat_job j = { .parts = out, .split = true };
	int64_t outer = concat_setup(&j, in, axis, n);
	if (outer * j.joined_block == 0)
		return;
	k_parallel(ctx, outer * n, 4 * K_GRAIN / (j.joined_block / n + 1) + 1, concat_range, &j);
}

/* ---- pad ---- */

/* Where output index o of an axis reads: an input index, or -1 for the
 * fill value. lo is the pad before the axis (negative: cropped), kept the
 * size left after cropping. */
static int64_t
pad_source(int64_t o, int64_t lo, int64_t kept, k_pad_mode mode)
{
	int64_t crop = lo < 0 ? -lo : 0;
	int64_t t = o - (lo > 0 ? lo : 0); /* position within the kept range */
	if (t < 0 || t >= kept) {
		if (mode == K_PAD_CONSTANT)
			return -1;
		if (mode == K_PAD_EDGE)
			t = t < 0 ? 0 : kept - 1;
		else /* reflect: pads are smaller than kept, so one bounce suffices */
			t = t < 0 ? -t : 2 * (kept - 1) - t;
	}
	return crop + t;
}

/* The size of axis k left after cropping. */
static int64_t
pad_kept(const st_shape *in, const st_shape *out, const int64_t *begin, int k)
{
	int64_t lo = begin[k], hi = out->dims[k] - in->dims[k] - begin[k];
	return in->dims[k] + (lo < 0 ? lo : 0) + (hi < 0 ? hi : 0);
}

void
k_pad_ref(const void *in, const st_shape *in_shape, const int64_t *begin, k_pad_mode mode,
          const void *fill, void *out, const st_shape *out_shape, size_t elem)
{
	int r = in_shape->rank;
	int64_t in_strides[ST_MAX_RANK], idx[ST_MAX_RANK], kept[ST_MAX_RANK];
	dense_strides(in_shape, in_strides);
	for (int k = 0; k < r; k++)
		kept[k] = pad_kept(in_shape, out_shape, begin, k);
	int64_t n = k_elements(out_shape);
	for (int64_t o = 0; o < n; o++) {
		unravel(o, r, out_shape->dims, idx);
		int64_t src = 0;
		bool filled = false;
		for (int k = 0; k < r; k++) {
			int64_t s = pad_source(idx[k], begin[k], kept[k], mode);
			if (s < 0)
				filled = true;
			src += s * in_strides[k];
		}
		memcpy((char *)out + (size_t)o * elem, filled ? fill : (const char *)in + (size_t)src * elem,
		       elem);
	}
}

typedef struct pad_job {
	const char *in;
	const st_shape *in_shape, *out_shape;
	const int64_t *begin;
	k_pad_mode mode;
	const void *fill;
	char *out;
	size_t elem;
	int64_t in_strides[ST_MAX_RANK];
	int64_t kept[ST_MAX_RANK];
} pad_job;

/* Output rows (every axis but the last) [begin, end). */
static void
pad_rows(void *arg, int64_t begin, int64_t end)
{
	const pad_job *j = arg;
	int r = j->out_shape->rank, last = r - 1;
	size_t elem = j->elem;
	int64_t len = j->out_shape->dims[last];
	int64_t lo = j->begin[last], kept = j->kept[last];
	int64_t crop = lo < 0 ? -lo : 0, left = lo > 0 ? lo : 0;
	int64_t mid_end = left + kept; /* output positions [left, mid_end) copy the kept run */
	int64_t idx[ST_MAX_RANK];
	for (int64_t row = begin; row < end; row++) {
		char *o = j->out + (size_t)(row * len) * elem;
		unravel(row, last, j->out_shape->dims, idx);
		int64_t src = 0;
		bool filled = false;
		for (int k = 0; k < last; k++) {
			int64_t s = pad_source(idx[k], j->begin[k], j->kept[k], j->mode);
			if (s < 0) {
				filled = true;
				break;
			}
			src += s * j->in_strides[k];
		}
		if (filled || kept == 0) {
			/* Only constant mode gets here with a non-empty row. */
			fill_job f = { o, j->fill, elem };
			fill_range(&f, 0, len);
			continue;
		}
		const char *irow = j->in + (size_t)src * elem;
		memcpy(o + (size_t)left * elem, irow + (size_t)crop * elem, (size_t)kept * elem);
		if (j->mode == K_PAD_CONSTANT) {
			fill_job f = { o, j->fill, elem };
			fill_range(&f, 0, left);
			fill_range(&f, mid_end, len);
			continue;
		}
		for (int64_t x = 0; x < left; x++)
			memcpy(o + (size_t)x * elem, irow + (size_t)pad_source(x, lo, kept, j->mode) * elem, elem);
		for (int64_t x = mid_end; x < len; x++)
			memcpy(o + (size_t)x * elem, irow + (size_t)pad_source(x, lo, kept, j->mode) * elem, elem);
	}
}

void
k_pad(const void *in, const st_shape *in_shape, const int64_t *begin, k_pad_mode mode,
      const void *fill, void *out, const st_shape *out_shape, size_t elem, const st_exec_ctx *ctx)
{
	int r = out_shape->rank;
	if (k_elements(out_shape) == 0)
		return;
	if (r == 0) {
		memcpy(out, in, elem);
		return;
	}
	pad_job j = { .in = in, .in_shape = in_shape, .out_shape = out_shape, .begin = begin,
		      .mode = mode, .fill = fill, .out = out, .elem = elem };
	dense_strides(in_shape, j.in_strides);
	for (int k = 0; k < r; k++)
		j.kept[k] = pad_kept(in_shape, out_shape, begin, k);
	int64_t rows = k_elements(out_shape) / out_shape->dims[r - 1];
	k_parallel(ctx, rows, K_GRAIN / out_shape->dims[r - 1] + 1, pad_rows, &j);
}
