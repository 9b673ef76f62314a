/* The vector loops of k-pool.c (2-D pooling windows, whole-plane pooling),
 * written once and compiled once per instruction set. k-pool.c defines
 *   PB_NAME(x)     x with the variant's suffix
 *   PB_TARGET      the function attribute that selects the instruction set
 *   PB_LANES       floats per vector: 8 or 4
 *   PB_MAX(x, m)   lane by lane x > m ? x : m (so a NaN in x leaves m)
 *   PB_LOAD_PART(p, n, fill)  a vector of p[0 .. n) then fill, for
 *                  0 < n < PB_LANES, reading nothing past p[n - 1]
 *   PB_STORE_PART(p, v, n)  stores lanes [0, n) of v at p, 0 < n < PB_LANES
 *   PB_SHUFFLE_EVENS(a, b)  (optional, 8 lanes) lanes 0, 2, .. of a then b
 * and, before the first inclusion, the argument structures the loops read
 * (pool_fast_args, global_args), taps() and PB_ROW_MAX. */

#define PB_VEC PB_NAME(vec)
#define PB_FN static inline __attribute__((always_inline)) PB_TARGET
#define L PB_LANES

typedef float PB_VEC __attribute__((vector_size(PB_LANES * sizeof(float))));

#if PB_LANES == 8 && defined(PB_SHUFFLE_EVENS)
#define PB_EVENS(a, b) PB_SHUFFLE_EVENS(a, b)
#elif PB_LANES == 8
#define PB_EVENS(a, b) __builtin_shufflevector(a, b, 0, 2, 4, 6, 8, 10, 12, 14)
#elif PB_LANES == 4
#define PB_EVENS(a, b) __builtin_shufflevector(a, b, 0, 2, 4, 6)
#else
#error "PB_LANES must be 8 or 4"
#endif

PB_FN PB_VEC
PB_NAME(load)(const float *p)
{
	PB_VEC v;
	memcpy(&v, p, sizeof v);
	return v;
}

PB_FN void
PB_NAME(store)(float *p, PB_VEC v)
{
	memcpy(p, &v, sizeof v);
}

PB_FN PB_VEC
PB_NAME(splat)(float x)
{
	PB_VEC zero = { 0 };
	return x - zero;
}

/* The same test as PB_MAX on one float, for the tails. */
PB_FN float
PB_NAME(max1)(float x, float m)
{
	return x > m ? x : m;
}

/* Lane i is p[i * stride] for stride 1 or 2. */
PB_FN PB_VEC
PB_NAME(load_step)(const float *p, int64_t stride)
{
	if (stride == 1)
		return PB_NAME(load)(p);
	return PB_EVENS(PB_NAME(load)(p), PB_NAME(load)(p + L));
}

/*
 * Reduces input rows src[0 .. rows) (n floats each, `pitch` apart) into
 * dst, position by position: the largest (NaN skipped, as the reference
 * does) or the sum. No rows gives the empty value (-FLT_MAX or 0).
 */
PB_FN void
PB_NAME(reduce_column)(const float *src, int64_t pitch, int64_t rows, int64_t n, bool max, float *dst)
{
	float empty = max ? -FLT_MAX : 0.0f;
	int64_t j = 0;
	if (rows == 0) {
		for (; j < n; j++)
			dst[j] = empty;
		return;
	}
	/* The common kernel heights get loops of their own, whose loads do not
	 * wait on a loop over the rows. */
	if (rows == 3) {
		const float *s0 = src, *s1 = src + pitch, *s2 = src + 2 * pitch;
		for (; j + L <= n; j += L) {
			PB_VEC v0 = PB_NAME(load)(s0 + j), v1 = PB_NAME(load)(s1 + j), v2 = PB_NAME(load)(s2 + j);
			PB_VEC acc = max ? PB_MAX(v2, PB_MAX(v1, PB_MAX(v0, PB_NAME(splat)(empty)))) : v0 + v1 + v2;
			PB_NAME(store)(dst + j, acc);
		}
	} else if (rows == 2) {
		const float *s0 = src, *s1 = src + pitch;
		for (; j + L <= n; j += L) {
			PB_VEC v0 = PB_NAME(load)(s0 + j), v1 = PB_NAME(load)(s1 + j);
			PB_VEC acc = max ? PB_MAX(v1, PB_MAX(v0, PB_NAME(splat)(empty))) : v0 + v1;
			PB_NAME(store)(dst + j, acc);
		}
	}
	for (; j + L <= n; j += L) {
		PB_VEC acc = PB_NAME(splat)(empty);
		for (int64_t r = 0; r < rows; r++) {
			PB_VEC v = PB_NAME(load)(src + r * pitch + j);
			acc = max ? PB_MAX(v, acc) : acc + v;
		}
		PB_NAME(store)(dst + j, acc);
	}
	/* The last few columns in one vector whose dead lanes hold the empty
	 * value: stored whole, they are what the buffer holds past the row. */
	if (j < n) {
		PB_VEC acc = PB_NAME(splat)(empty);
		for (int64_t r = 0; r < rows; r++) {
			PB_VEC v = PB_LOAD_PART(src + r * pitch + j, n - j, empty);
			acc = max ? PB_MAX(v, acc) : acc + v;
		}
		PB_NAME(store)(dst + j, acc);
	}
}

/* One output row from its reduced row buffer: whole vectors of outputs,
 * the last one partly stored (the buffer holds all that its loads reach).
 * An average scales output ow by scale[ow] (its columns) * row_scale. */
PB_FN void
PB_NAME(pool_row)(const float *buf, int64_t out_w, int64_t kw, int64_t sw, bool max, const float *scale,
                  float row_scale, float *row)
{
	PB_VEC rs = PB_NAME(splat)(row_scale);
	for (int64_t ow = 0; ow < out_w; ow += L) {
		const float *at = buf + ow * sw;
		PB_VEC v = PB_NAME(load_step)(at, sw);
		for (int64_t k = 1; k < kw; k++) {
			PB_VEC u = PB_NAME(load_step)(at + k, sw);
			v = max ? PB_MAX(u, v) : v + u;
		}
		if (!max)
			v *= PB_NAME(load)(scale + ow) * rs;
		if (ow + L <= out_w)
			PB_NAME(store)(row + ow, v);
		else
			PB_STORE_PART(row + ow, v, out_w - ow);
	}
}

/*
 * Planes [p0, p1) of a 2-D (or 1-D) pooling with no dilation and a column
 * stride of 1 or 2. Per output row, the input rows its windows cover are
 * reduced into the middle of a row buffer whose ends hold the empty value
 * where the padding lies, so that every window then reduces kernel-width
 * neighbours of that buffer with no bounds to check. A group of output rows
 * is reduced before the windows read it: reading a row straight after its
 * stores, at other offsets, stalls on store forwarding and cost more than
 * the rest of the work.
 */
static PB_TARGET void
PB_NAME(pool_planes)(void *arg, int64_t p0, int64_t p1)
{
	const pool_fast_args *a = arg;
	const k_geometry *g = &a->g;
	bool max = a->mode == K_POOL_MAX;
	float empty = max ? -FLT_MAX : 0.0f;
	int64_t in_w = g->in[2], out_w = g->out[2], kw = g->kernel[2], sw = g->stride[2];
	int64_t pad = g->pad[2];
	float bufs[PB_GROUP_FLOATS], scale[PB_ROW_MAX + L], row_scales[PB_GROUP_ROWS];
	/* Everything the windows, the vector loads past the last one and the
	 * last vector of reduce_column reach, rounded to whole vectors. */
	int64_t reach = sw * out_w + kw + 2 * L;
	if (reach < pad + in_w + L)
		reach = pad + in_w + L;
	reach = (reach + L - 1) / L * L;
	int64_t group = PB_GROUP_FLOATS / reach;
	group = group > PB_GROUP_ROWS ? PB_GROUP_ROWS : group;
	for (int64_t r = 0; r < group; r++) {
		float *buf = bufs + r * reach;
		for (int64_t i = 0; i < pad; i++)
			buf[i] = empty;
		for (int64_t i = pad + in_w; i < reach; i++)
			buf[i] = empty;
	}
	/* An average divides by the taps counted on each axis (taps() of k-pool.c). */
	if (!max) {
		for (int64_t ow = 0; ow < out_w; ow++) {
			tap_range r = taps(g, 2, ow);
			int64_t count = a->count_include_pad ? r.padded : r.hi - r.lo;
			scale[ow] = count ? 1.0f / (float)count : 0.0f;
		}
		for (int64_t ow = out_w; ow < out_w + L; ow++)
			scale[ow] = 0;
	}
	/* Rows [h_lo, h_hi) have all their taps in the input; only the others
	 * need taps(), whose divisions would cost more than a small row. */
	int64_t kh = g->kernel[1], h_lo = (g->pad[1] + g->stride[1] - 1) / g->stride[1];
	int64_t h_hi = g->in[1] + g->pad[1] - kh < 0 ? 0 : (g->in[1] + g->pad[1] - kh) / g->stride[1] + 1;
	h_hi = h_hi < g->out[1] ? h_hi : g->out[1];
	const tap_range full = { 0, kh, kh };
	for (int64_t plane = p0; plane < p1; plane++) {
		const float *in = a->x + plane * a->x_plane;
		float *out = a->y + plane * a->y_plane;
		for (int64_t oh0 = 0; oh0 < g->out[1]; oh0 += group) {
			int64_t oh1 = oh0 + group < g->out[1] ? oh0 + group : g->out[1];
			for (int64_t oh = oh0; oh < oh1; oh++) {
				tap_range rh = oh >= h_lo && oh < h_hi ? full : taps(g, 1, oh);
				int64_t ih0 = oh * g->stride[1] - g->pad[1] + rh.lo;
				/* Two calls, so that each inlined copy knows its mode. */
				float *dst = bufs + (oh - oh0) * reach + pad;
				if (max)
					PB_NAME(reduce_column)(in + ih0 * in_w, in_w, rh.hi - rh.lo, in_w, true, dst);
				else
					PB_NAME(reduce_column)(in + ih0 * in_w, in_w, rh.hi - rh.lo, in_w, false, dst);
				int64_t count = a->count_include_pad ? rh.padded : rh.hi - rh.lo;
				row_scales[oh - oh0] = count ? 1.0f / (float)count : 0.0f;
			}
			/* The common windows get copies with their sizes fixed, which
			 * the compiler unrolls. */
			for (int64_t oh = oh0; oh < oh1; oh++) {
				const float *buf = bufs + (oh - oh0) * reach;
				float *row = out + oh * out_w, rs = row_scales[oh - oh0];
				if (max && kw == 3 && sw == 2)
					PB_NAME(pool_row)(buf, out_w, 3, 2, true, scale, rs, row);
				else if (max && kw == 2 && sw == 2)
					PB_NAME(pool_row)(buf, out_w, 2, 2, true, scale, rs, row);
				else if (max && kw == 3 && sw == 1)
					PB_NAME(pool_row)(buf, out_w, 3, 1, true, scale, rs, row);
				else if (max)
					PB_NAME(pool_row)(buf, out_w, kw, sw, true, scale, rs, row);
				else if (kw == 3 && sw == 2)
					PB_NAME(pool_row)(buf, out_w, 3, 2, false, scale, rs, row);
				else if (kw == 2 && sw == 2)
					PB_NAME(pool_row)(buf, out_w, 2, 2, false, scale, rs, row);
				else if (kw == 3 && sw == 1)
					PB_NAME(pool_row)(buf, out_w, 3, 1, false, scale, rs, row);
				else
					PB_NAME(pool_row)(buf, out_w, kw, sw, false, scale, rs, row);
			}
		}
	}
}

/* Planes [p0, p1) of a whole-plane pooling. Sums run in float vectors over
 * blocks of a few thousand elements and in double across blocks, which
 * keeps the rounding of long planes near the reference's. */
static PB_TARGET void
PB_NAME(global_planes)(void *arg, int64_t p0, int64_t p1)
{
	const global_args *a = arg;
	int64_t size = a->size;
	bool max = a->mode == K_POOL_MAX;
	for (int64_t p = p0; p < p1; p++) {
		const float *x = a->x + p * size;
		if (max) {
			PB_VEC m0 = PB_NAME(splat)(-FLT_MAX), m1 = m0;
			int64_t i = 0;
			for (; i + 2 * L <= size; i += 2 * L) {
				m0 = PB_MAX(PB_NAME(load)(x + i), m0);
				m1 = PB_MAX(PB_NAME(load)(x + i + L), m1);
			}
			m0 = PB_MAX(m1, m0);
			float best = -FLT_MAX;
			for (int j = 0; j < L; j++)
				best = PB_NAME(max1)(m0[j], best);
			for (; i < size; i++)
				best = PB_NAME(max1)(x[i], best);
			a->y[p] = best;
			continue;
		}
		double total = 0;
		for (int64_t b0 = 0; b0 < size; b0 += 4096) {
			int64_t b1 = b0 + 4096 < size ? b0 + 4096 : size, i = b0;
			PB_VEC s0 = { 0 }, s1 = { 0 }, s2 = { 0 }, s3 = { 0 };
			for (; i + 4 * L <= b1; i += 4 * L) {
				s0 += PB_NAME(load)(x + i);
				s1 += PB_NAME(load)(x + i + L);
				s2 += PB_NAME(load)(x + i + 2 * L);
				s3 += PB_NAME(load)(x + i + 3 * L);
			}
			for (; i + L <= b1; i += L)
				s0 += PB_NAME(load)(x + i);
			s0 += s1 + s2 + s3;
			float block = 0;
			for (int j = 0; j < L; j++)
				block += s0[j];
			for (; i < b1; i++)
				block += x[i];
			total += block;
		}
		a->y[p] = size ? (float)(total / (double)size) : 0.0f;
	}
}

#undef PB_VEC
#undef PB_FN
#undef L
#undef PB_EVENS
