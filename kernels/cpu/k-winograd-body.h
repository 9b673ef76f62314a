/*
 * The input and output transforms of k-winograd.c, written once and
 * compiled per SIMD level: k-winograd.c defines VL (lanes), SUF (the
 * level's name suffix), K_TARGET (function attributes, may be empty) and
 * STORE_PART(dst, v, n) (the first n lanes of v to dst), then includes
 * this file. Lanes are neighbouring tiles of one tile row, so every load is
 * a plain unaligned vector load from the phase rows or the product buffer.
 */

#define WN3(a, b) a##_##b
#define WN2(a, b) WN3(a, b)
#define WN(name) WN2(name, SUF)

typedef float WN(vec) __attribute__((vector_size(VL * 4)));
#define VEC WN(vec)
#define LOADV(v, p) memcpy(&(v), (p), sizeof(VEC))

typedef int WN(ivec) __attribute__((vector_size(VL * 4)));
#define IVEC WN(ivec)
/* Lanes of a and b picked by constant indices into their concatenation:
 * GCC's __builtin_shuffle takes them as a vector, clang's
 * __builtin_shufflevector as constants. */
#ifndef WSHUF
#if defined(__clang__)
#define WSHUF(a, b, ...) __builtin_shufflevector((a), (b), __VA_ARGS__)
#else
#define WSHUF(a, b, ...) __builtin_shuffle((a), (b), (IVEC){ __VA_ARGS__ })
#endif
#endif

/*
 * One input row iy of a plane split into its m column phases (phase k at
 * dst + k * rowlen holds at u the column m * u + k - pad, zero outside the
 * plane): the row is first copied with its padding into line, then split
 * with whole-vector shuffles.
 */
K_TARGET static inline __attribute__((always_inline)) void
WN(phase_row)(const wplan *p, const float *in, int64_t iy, float *dst, float *line, int m)
{
	const k_geometry *g = &p->g;
	int64_t rowlen = p->rowlen, w = g->in[2], pl = g->pad[2];
	if (iy < 0 || iy >= g->in[1]) {
		memset(dst, 0, (size_t)(m * rowlen) * sizeof *dst);
		return;
	}
	memset(line, 0, (size_t)pl * sizeof *line);
	memcpy(line + pl, in + iy * w, (size_t)w * sizeof *line);
	memset(line + pl + w, 0, (size_t)(m * rowlen - pl - w) * sizeof *line);
	for (int64_t u = 0; u < rowlen; u += VL) {
		const float *src = line + m * u;
		VEC a, b;
		LOADV(a, src);
		LOADV(b, src + VL);
		VEC e = WSHUF(a, b, EVENS), o = WSHUF(a, b, ODDS);
		if (m == 2) {
			memcpy(dst + u, &e, sizeof e);
			memcpy(dst + rowlen + u, &o, sizeof o);
		} else {
			VEC c, d;
			LOADV(c, src + 2 * VL);
			LOADV(d, src + 3 * VL);
			VEC e2 = WSHUF(c, d, EVENS), o2 = WSHUF(c, d, ODDS);
			VEC ph0 = WSHUF(e, e2, EVENS), ph2 = WSHUF(e, e2, ODDS);
			VEC ph1 = WSHUF(o, o2, EVENS), ph3 = WSHUF(o, o2, ODDS);
			memcpy(dst + u, &ph0, sizeof ph0);
			memcpy(dst + rowlen + u, &ph1, sizeof ph1);
			memcpy(dst + 2 * rowlen + u, &ph2, sizeof ph2);
			memcpy(dst + 3 * rowlen + u, &ph3, sizeof ph3);
		}
	}
}

/*
 * dst[i * ds] = sum over k of t[i][k] * src[k * ss], for the constant
 * matrix t (rows x cols). Always inlined with constant tables, so that the
 * zero entries vanish and the ones become plain additions.
 */
K_TARGET static inline __attribute__((always_inline)) void
WN(apply)(const float *t, int rows, int cols, const VEC *src, int ss, VEC *dst, int ds)
{
	_Pragma("GCC unroll 8") for (int i = 0; i < rows; i++) {
		VEC s = { 0 };
		bool any = false;
		_Pragma("GCC unroll 8") for (int k = 0; k < cols; k++) {
			float c = t[i * cols + k];
			if (c == 0.0f)
				continue;
			VEC term = c == 1.0f ? src[k * ss] : c == -1.0f ? -src[k * ss] : src[k * ss] * c;
			s = any ? s + term : term;
			any = true;
		}
		dst[i * ds] = s;
	}
}

/* Transforms input channels [c0, c1) of tiles [b0, b1) of one sample (x:
 * its first input channel) into v, tile size m a constant after inlining. */
K_TARGET static inline __attribute__((always_inline)) void
WN(input_m)(const wplan *p, const float *x, int64_t b0, int64_t b1, int64_t c0, int64_t c1, float *v,
            float *phase, int m, const float *bt)
{
	const k_geometry *g = &p->g;
	int alpha = m + 2;
	int64_t tw = p->tw, cin = g->in_per_group, nr = p->nr, tr = p->tr, rowlen = p->rowlen;
	int64_t ty0 = b0 / tw, ty1 = (b1 - 1) / tw + 1;
	/* Each input row the block reads is split into phases once per channel
	 * (neighbouring tile rows share two); the line buffer follows them. */
	int64_t rows = m * (ty1 - ty0) + 2;
	float *line = phase + rows * m * rowlen;
	for (int64_t c = c0; c < c1; c++) {
		const float *in = x + c * g->in_size;
		for (int64_t r = 0; r < rows; r++)
			WN(phase_row)(p, in, m * ty0 - g->pad[1] + r, phase + r * m * rowlen, line, m);
		for (int64_t ty = ty0; ty < ty1; ty++) {
			int64_t tx0 = ty == ty0 ? b0 - ty * tw : 0;
			int64_t tx1 = ty == ty1 - 1 ? b1 - ty * tw : tw;
			const float *prow = phase + (ty - ty0) * m * m * rowlen;
			for (int64_t tx = tx0; tx < tx1;) {
				int64_t col = ty * tw + tx - b0, q = col / nr, j = col % nr;
				int n = (int)k_min64(k_min64(VL, tx1 - tx), nr - j);
				VEC d[6][6], t[6][6], u[6][6];
				_Pragma("GCC unroll 8") for (int r = 0; r < alpha; r++)
					_Pragma("GCC unroll 8") for (int k = 0; k < alpha; k++)
						LOADV(d[r][k], prow + (r * m + k % m) * rowlen + tx + k / m);
				_Pragma("GCC unroll 8") for (int k = 0; k < alpha; k++)
					WN(apply)(bt, alpha, alpha, &d[0][k], 6, &t[0][k], 6);
				_Pragma("GCC unroll 8") for (int i = 0; i < alpha; i++)
					WN(apply)(bt, alpha, alpha, &t[i][0], 1, &u[i][0], 1);
				float *dst = v + q * cin * nr + c * nr + j;
				_Pragma("GCC unroll 8") for (int i = 0; i < alpha; i++)
					_Pragma("GCC unroll 8") for (int k = 0; k < alpha; k++) {
						float *at = dst + (i * alpha + k) * cin * tr;
						if (n == VL)
							memcpy(at, &u[i][k], sizeof(VEC));
						else
							STORE_PART(at, u[i][k], n);
					}
				tx += n;
			}
		}
	}
}

K_TARGET static void
WN(input_block)(const wplan *p, const float *x, int64_t b0, int64_t b1, int64_t c0, int64_t c1, float *v,
                float *phase)
{
	if (p->m == 2)
		WN(input_m)(p, x, b0, b1, c0, c1, v, phase, 2, &wino_bt2[0][0]);
	else
		WN(input_m)(p, x, b0, b1, c0, c1, v, phase, 4, &wino_bt4[0][0]);
}

/* k_clamp on every lane: lo where v < lo, then hi where v > hi, so that a
 * NaN stays NaN and -0 stays -0, as k_activation's relu and clip do. */
K_TARGET static inline __attribute__((always_inline)) VEC
WN(clamp)(VEC v, VEC lo, VEC hi)
{
	IVEC below = v < lo;
	v = (VEC)((below & (IVEC)lo) | (~below & (IVEC)v));
	IVEC above = v > hi;
	return (VEC)((above & (IVEC)hi) | (~above & (IVEC)v));
}

/*
 * Row i of the m x m outputs of VL tiles (r[k]: column k of each lane's
 * tile) plus add, clamped when asked, interleaved into m vectors that hold
 * the lanes' rows one after another: lane l's m values at l * m.
 */
K_TARGET static inline __attribute__((always_inline)) void
WN(row_out)(const VEC *r, int m, float add, bool clamp, VEC lo, VEC hi, VEC *iv)
{
	VEC z[4];
	_Pragma("GCC unroll 4") for (int k = 0; k < m; k++) {
		z[k] = r[k] + add;
		if (clamp)
			z[k] = WN(clamp)(z[k], lo, hi);
	}
	if (m == 2) {
		iv[0] = WSHUF(z[0], z[1], ILO);
		iv[1] = WSHUF(z[0], z[1], IHI);
	} else {
		VEC l02 = WSHUF(z[0], z[2], ILO), h02 = WSHUF(z[0], z[2], IHI);
		VEC l13 = WSHUF(z[1], z[3], ILO), h13 = WSHUF(z[1], z[3], IHI);
		iv[0] = WSHUF(l02, l13, ILO);
		iv[1] = WSHUF(l02, l13, IHI);
		iv[2] = WSHUF(h02, h13, ILO);
		iv[3] = WSHUF(h02, h13, IHI);
	}
}

/*
 * From the products of tiles [b0, b1) for output channels [m0, m1) (prod:
 * frequency f of channel o at f * p->mrows * tr + (o - m0) * tr), the
 * outputs of those tiles plus the bias, into y (the sample's first output
 * channel), cut at the plane's edges.
 */
K_TARGET static inline __attribute__((always_inline)) void
WN(output_m)(const wplan *p, const float *prod, int64_t b0, int64_t b1, int64_t m0, int64_t m1,
             const float *bias, float *y, int m, const float *at)
{
	const k_geometry *g = &p->g;
	int alpha = m + 2;
	int64_t tw = p->tw, tr = p->tr, fstride = p->mrows * tr, oh = g->out[1], ow = g->out[2];
	int64_t ty0 = b0 / tw, ty1 = (b1 - 1) / tw + 1;
	bool clamp = p->clamp;
	VEC lo = (VEC){ 0 } + p->lo, hi = (VEC){ 0 } + p->hi;
	for (int64_t o = m0; o < m1; o++) {
		const float *src = prod + (o - m0) * tr;
		float *out = y + o * g->out_size;
		float add = bias ? bias[o] : 0.0f;
		for (int64_t ty = ty0; ty < ty1; ty++) {
			int64_t tx0 = ty == ty0 ? b0 - ty * tw : 0;
			int64_t tx1 = ty == ty1 - 1 ? b1 - ty * tw : tw;
			for (int64_t tx = tx0; tx < tx1;) {
				int64_t col = ty * tw + tx - b0;
				int n = (int)k_min64(VL, tx1 - tx);
				VEC s[6][6], t[4][6], r[4][4];
				_Pragma("GCC unroll 8") for (int i = 0; i < alpha; i++)
					_Pragma("GCC unroll 8") for (int k = 0; k < alpha; k++)
						LOADV(s[i][k], src + (i * alpha + k) * fstride + col);
				_Pragma("GCC unroll 8") for (int k = 0; k < alpha; k++)
					WN(apply)(at, m, alpha, &s[0][k], 6, &t[0][k], 6);
				/* Lanes are tiles: output column m * (tx + u) + k, so the m
				 * vectors of a row interleave into m * VL floats. */
				int64_t cnt = k_min64(m * (int64_t)n, ow - m * tx);
				_Pragma("GCC unroll 4") for (int i = 0; i < m; i++) {
					WN(apply)(at, m, alpha, &t[i][0], 1, &r[i][0], 1);
					int64_t oy = m * ty + i;
					if (oy >= oh)
						break;
					VEC iv[4];
					WN(row_out)(r[i], m, add, clamp, lo, hi, iv);
					float *row = out + oy * ow + m * tx;
					_Pragma("GCC unroll 4") for (int v = 0; v < m; v++) {
						int64_t left = cnt - v * VL;
						if (left >= VL)
							memcpy(row + v * VL, &iv[v], sizeof(VEC));
						else if (left > 0)
							STORE_PART(row + v * VL, iv[v], (int)left);
					}
				}
				tx += n;
			}
		}
	}
}

/*
 * The same with the lanes running over consecutive tiles of the block
 * whatever row they are in (a block's tiles are consecutive columns of the
 * products), for planes of few tiles a row, where lanes along one row
 * would be mostly empty. The results go through a small buffer: each
 * lane's m x m outputs to its own tile.
 */
K_TARGET static inline __attribute__((always_inline)) void
WN(output_any_m)(const wplan *p, const float *prod, int64_t b0, int64_t b1, int64_t m0, int64_t m1,
                 const float *bias, float *y, int m, const float *at)
{
	const k_geometry *g = &p->g;
	int alpha = m + 2;
	int64_t tw = p->tw, tr = p->tr, fstride = p->mrows * tr, oh = g->out[1], ow = g->out[2];
	bool clamp = p->clamp;
	VEC lo = (VEC){ 0 } + p->lo, hi = (VEC){ 0 } + p->hi;
	/* One output row of every lane's tile: lane l's m values at l * m. */
	float flat[4 * VL];
	for (int64_t o = m0; o < m1; o++) {
		const float *src = prod + (o - m0) * tr;
		float *out = y + o * g->out_size;
		float add = bias ? bias[o] : 0.0f;
		for (int64_t col = 0; col < b1 - b0; col += VL) {
			int n = (int)k_min64(VL, b1 - b0 - col);
			VEC s[6][6], t[4][6], r[4][4];
			_Pragma("GCC unroll 8") for (int i = 0; i < alpha; i++)
				_Pragma("GCC unroll 8") for (int k = 0; k < alpha; k++)
					LOADV(s[i][k], src + (i * alpha + k) * fstride + col);
			_Pragma("GCC unroll 8") for (int k = 0; k < alpha; k++)
				WN(apply)(at, m, alpha, &s[0][k], 6, &t[0][k], 6);
			_Pragma("GCC unroll 4") for (int i = 0; i < m; i++) {
				WN(apply)(at, m, alpha, &t[i][0], 1, &r[i][0], 1);
				VEC iv[4];
				WN(row_out)(r[i], m, add, clamp, lo, hi, iv);
				_Pragma("GCC unroll 4") for (int v = 0; v < m; v++)
					memcpy(flat + v * VL, &iv[v], sizeof(VEC));
				for (int l = 0; l < n; l++) {
					int64_t b = b0 + col + l, ty = b / tw, tx = b % tw;
					if (m * ty + i >= oh)
						continue;
					float *row = out + (m * ty + i) * ow + m * tx;
					if (ow - m * tx >= m)
						memcpy(row, flat + l * m, (size_t)m * sizeof *row);
					else
						memcpy(row, flat + l * m, (size_t)(ow - m * tx) * sizeof *row);
				}
			}
		}
	}
}

K_TARGET __attribute__((unused)) static void
WN(output_any)(const wplan *p, const float *prod, int64_t b0, int64_t b1, int64_t m0, int64_t m1,
               const float *bias, float *y)
{
	if (p->m == 2)
		WN(output_any_m)(p, prod, b0, b1, m0, m1, bias, y, 2, &wino_at2[0][0]);
	else
		WN(output_any_m)(p, prod, b0, b1, m0, m1, bias, y, 4, &wino_at4[0][0]);
}

K_TARGET static void
WN(output_block)(const wplan *p, const float *prod, int64_t b0, int64_t b1, int64_t m0, int64_t m1,
                 const float *bias, float *y)
{
	if (p->m == 2)
		WN(output_m)(p, prod, b0, b1, m0, m1, bias, y, 2, &wino_at2[0][0]);
	else
		WN(output_m)(p, prod, b0, b1, m0, m1, bias, y, 4, &wino_at4[0][0]);
}

#undef VEC
#undef IVEC
#undef LOADV
#undef WN
#undef WN2
#undef WN3
