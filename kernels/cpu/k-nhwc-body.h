/*
 * The loops of k-nhwc.c, written once with GCC vector extensions and
 * compiled once per SIMD level. k-nhwc.c defines
 *   VL                  floats per vector: 16, 8 or 4
 *   SUF                 the level's name suffix
 *   K_TARGET            the attributes that select its instruction set (may be empty)
 *   NH_FMA(a, b, c)     a * b + c
 *   NH_CLAMP(v, lo, hi) k_clamp lane by lane (v < lo ? lo : v, then v > hi ? hi : v)
 *   NH_MASK, NH_MASK_OF(n)  the lanes a last block of n < VL channels keeps
 *   NH_LOAD_PART(p, m), NH_STORE_PART(p, v, m)  loads and stores of those
 *                       lanes alone, touching no other float (loaded: the
 *                       others are 0)
 *   NH_ROW_GROUP        outputs a 3 x 3 stride-1 group of one row sums at once
 *   NH_PAIR_GROUP       outputs of each of two rows a 3 x 3 group of two
 *                       rows sums at once (the sums, the nine weights and a
 *                       row's inputs should fit the level's registers: the
 *                       sizes are the fastest measured)
 * and, before the first inclusion, nh_args, nh_pool_args, NH_POOL_BLOCK and
 * NH_STRIP_FLOATS.
 *
 * A vector is VL consecutive channels of one position; the tensors are
 * channels last, so the next position is C floats on. A depthwise output
 * vector is the sum of one input vector per tap times that tap's weight
 * vector. Each task is an output row (or two): every block of channels
 * walks it, several outputs at a time, each sum a chain of its own.
 */

#define NN3(a, b) a##_##b
#define NN2(a, b) NN3(a, b)
#define NN(name) NN2(name, SUF)

typedef float NN(vec) __attribute__((vector_size(VL * sizeof(float))));
typedef int32_t NN(ivec) __attribute__((vector_size(VL * sizeof(int32_t))));
/* Half a vector, as floats and as doubles (a register each). */
typedef float NN(half) __attribute__((vector_size(VL / 2 * sizeof(float))));
typedef double NN(dhalf) __attribute__((vector_size(VL / 2 * sizeof(double))));
#define VEC NN(vec)
#define IVEC NN(ivec)
#define HALF NN(half)
#define DHALF NN(dhalf)
#if VL == 16
#define NH_LO(v) __builtin_shufflevector((v), (v), 0, 1, 2, 3, 4, 5, 6, 7)
#define NH_HI(v) __builtin_shufflevector((v), (v), 8, 9, 10, 11, 12, 13, 14, 15)
#define NH_JOIN(a, b) __builtin_shufflevector((a), (b), 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
#elif VL == 8
#define NH_LO(v) __builtin_shufflevector((v), (v), 0, 1, 2, 3)
#define NH_HI(v) __builtin_shufflevector((v), (v), 4, 5, 6, 7)
#define NH_JOIN(a, b) __builtin_shufflevector((a), (b), 0, 1, 2, 3, 4, 5, 6, 7)
#elif VL == 4
#define NH_LO(v) __builtin_shufflevector((v), (v), 0, 1)
#define NH_HI(v) __builtin_shufflevector((v), (v), 2, 3)
#define NH_JOIN(a, b) __builtin_shufflevector((a), (b), 0, 1, 2, 3)
#else
#error "VL must be 16, 8 or 4"
#endif
/* Loops over registers (outputs of a group, taps of a 3 x 3 filter) are
 * unrolled for their values to stay in registers; -O2 alone does not. Not
 * in a clang build with AddressSanitizer (the fuzzing build), where the
 * instrumented, unrolled and inlined bodies take clang many minutes (as
 * k-dwconv-body.h found): there the loops stay loops. */
#if defined(__clang__) && defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NH_NO_UNROLL 1
#endif
#endif
#ifdef NH_NO_UNROLL
#define FN static K_TARGET
#define UNROLL
#else
#define FN static inline __attribute__((always_inline)) K_TARGET
#define UNROLL _Pragma("GCC unroll 32")
#endif

/* The most outputs of a row one group sums: at stride 2 it reads 2 p + 1
 * input vectors of a row. */
#define NH_GROUP_MOST 8

FN VEC
NN(load)(const float *p)
{
	VEC v;
	memcpy(&v, p, sizeof v);
	return v;
}

FN void
NN(store)(float *p, VEC v)
{
	memcpy(p, &v, sizeof v);
}

/* x in every lane. (x - 0 is x exactly, -0 included.) */
FN VEC
NN(splat)(float x)
{
	VEC zero = { 0 };
	return x - zero;
}

/* on ? a : b, lane by lane. */
FN VEC
NN(select)(IVEC on, VEC a, VEC b)
{
	return (VEC)((on & (IVEC)a) | (~on & (IVEC)b));
}

#ifdef NH_PORTABLE
FN VEC
NN(load_part)(const float *p, int n)
{
	VEC v = { 0 };
	for (int l = 0; l < n; l++)
		v[l] = p[l];
	return v;
}

FN VEC
NN(clamp)(VEC v, VEC lo, VEC hi)
{
	v = NN(select)(v < lo, lo, v);
	return NN(select)(v > hi, hi, v);
}
#endif

/* A block's channels at p: a whole vector, or in the last block, when it
 * is short (tail), the lanes m keeps. */
FN VEC
NN(get)(const float *p, bool tail, NH_MASK m)
{
	if (tail)
		return NH_LOAD_PART(p, m);
	return NN(load)(p);
}

/* The bias of the channels from c, or zeros. */
FN VEC
NN(bias)(const nh_args *a, int64_t c, bool tail, NH_MASK m)
{
	return a->bias != NULL ? NN(get)(a->bias + c, tail, m) : NN(splat)(0.0f);
}

/* Stores a finished output vector, clamped first for a relu or clip. */
FN void
NN(put)(const nh_args *a, float *p, VEC v, bool tail, NH_MASK m)
{
	if (a->clamp)
		v = NH_CLAMP(v, NN(splat)(a->floor), NN(splat)(a->ceil));
	if (tail)
		NH_STORE_PART(p, v, m);
	else
		NN(store)(p, v);
}

/* ---- 3 x 3, column dilation 1, column stride 1 or 2 ---- */

/*
 * Outputs ow .. ow + p - 1 of a row, all of whose taps lie inside the
 * input rows, for the channels from c: nr input rows in[r] with their
 * filter rows' weights w[r]. Each input vector is loaded once for the p
 * sums that read it.
 */
FN void
NN(three_group)(const nh_args *a, const float *const *in, const VEC (*w)[3], int nr, int p, int sw, int64_t ow,
                int64_t c, VEC bias, bool tail, NH_MASK m, float *out)
{
	int64_t cs = a->c;
	VEC acc[NH_GROUP_MOST];
	UNROLL
	for (int j = 0; j < p; j++)
		acc[j] = bias;
	UNROLL
	for (int r = 0; r < nr; r++) {
		const float *src = in[r] + (ow * sw - a->pw) * cs + c;
		VEC x[2 * NH_GROUP_MOST + 1];
		UNROLL
		for (int i = 0; i < (p - 1) * sw + 3; i++)
			x[i] = NN(get)(src + i * cs, tail, m);
		UNROLL
		for (int k = 0; k < 3; k++) {
			UNROLL
			for (int j = 0; j < p; j++)
				acc[j] = NH_FMA(w[r][k], x[j * sw + k], acc[j]);
		}
	}
	UNROLL
	for (int j = 0; j < p; j++)
		NN(put)(a, out + (ow + j) * cs + c, acc[j], tail, m);
}

/* Output ow where some taps fall outside the input row: those are left out. */
FN void
NN(three_edge)(const nh_args *a, const float *const *in, const VEC (*w)[3], int nr, int sw, int64_t ow,
               int64_t c, VEC bias, bool tail, NH_MASK m, float *out)
{
	int64_t cs = a->c, iw0 = ow * sw - a->pw;
	VEC acc = bias;
	UNROLL
	for (int r = 0; r < nr; r++) {
		UNROLL
		for (int k = 0; k < 3; k++) {
			int64_t iw = iw0 + k;
			if (iw >= 0 && iw < a->w)
				acc = NH_FMA(w[r][k], NN(get)(in[r] + iw * cs + c, tail, m), acc);
		}
	}
	NN(put)(a, out + ow * cs + c, acc, tail, m);
}

/* One output row for one block of channels: the outputs before lo and from
 * hi one by one with their taps checked, those between in groups. */
FN void
NN(three_row)(const nh_args *a, const float *const *in, const VEC (*w)[3], int nr, int sw, int64_t c, VEC bias,
              bool tail, NH_MASK m, float *out)
{
	int64_t ow = 0;
	for (; ow < a->lo; ow++)
		NN(three_edge)(a, in, w, nr, sw, ow, c, bias, tail, m, out);
	if (sw == 1) {
		for (; ow + NH_ROW_GROUP <= a->hi; ow += NH_ROW_GROUP)
			NN(three_group)(a, in, w, nr, NH_ROW_GROUP, sw, ow, c, bias, tail, m, out);
	}
	for (; ow + 4 <= a->hi; ow += 4)
		NN(three_group)(a, in, w, nr, 4, sw, ow, c, bias, tail, m, out);
	for (; ow + 2 <= a->hi; ow += 2)
		NN(three_group)(a, in, w, nr, 2, sw, ow, c, bias, tail, m, out);
	for (; ow < a->hi; ow++)
		NN(three_group)(a, in, w, nr, 1, sw, ow, c, bias, tail, m, out);
	for (; ow < a->ow; ow++)
		NN(three_edge)(a, in, w, nr, sw, ow, c, bias, tail, m, out);
}

/*
 * Two output rows at once (3 x 3, row stride sh 1 or 2, all taps' rows
 * inside): input rows in[0 .. sh + 2], the first row's taps reading rows
 * 0 .. 2 and the second's rows sh .. sh + 2, so that the rows they share
 * are loaded once for both. Each sum adds its taps in the same order as
 * three_group.
 */
FN void
NN(pair_group)(const nh_args *a, const float *const *in, const VEC (*w)[3], int sh, int p, int sw, int64_t ow,
               int64_t c, VEC bias, bool tail, NH_MASK m, float *out0, float *out1)
{
	int64_t cs = a->c;
	VEC acc0[NH_GROUP_MOST], acc1[NH_GROUP_MOST];
	UNROLL
	for (int j = 0; j < p; j++)
		acc0[j] = acc1[j] = bias;
	UNROLL
	for (int i = 0; i < sh + 3; i++) {
		const float *src = in[i] + (ow * sw - a->pw) * cs + c;
		VEC x[2 * NH_GROUP_MOST + 1];
		UNROLL
		for (int q = 0; q < (p - 1) * sw + 3; q++)
			x[q] = NN(get)(src + q * cs, tail, m);
		UNROLL
		for (int k = 0; k < 3; k++) {
			UNROLL
			for (int j = 0; j < p; j++) {
				if (i < 3)
					acc0[j] = NH_FMA(w[i][k], x[j * sw + k], acc0[j]);
				if (i >= sh)
					acc1[j] = NH_FMA(w[i - sh][k], x[j * sw + k], acc1[j]);
			}
		}
	}
	UNROLL
	for (int j = 0; j < p; j++) {
		NN(put)(a, out0 + (ow + j) * cs + c, acc0[j], tail, m);
		NN(put)(a, out1 + (ow + j) * cs + c, acc1[j], tail, m);
	}
}

FN void
NN(pair_row)(const nh_args *a, const float *const *in, const VEC (*w)[3], int sh, int sw, int64_t c, VEC bias,
             bool tail, NH_MASK m, float *out0, float *out1)
{
	int64_t ow = 0;
	for (; ow < a->lo; ow++) {
		NN(three_edge)(a, in, w, 3, sw, ow, c, bias, tail, m, out0);
		NN(three_edge)(a, in + sh, w, 3, sw, ow, c, bias, tail, m, out1);
	}
	for (; ow + NH_PAIR_GROUP <= a->hi; ow += NH_PAIR_GROUP)
		NN(pair_group)(a, in, w, sh, NH_PAIR_GROUP, sw, ow, c, bias, tail, m, out0, out1);
	for (; ow + 2 <= a->hi; ow += 2)
		NN(pair_group)(a, in, w, sh, 2, sw, ow, c, bias, tail, m, out0, out1);
	for (; ow < a->hi; ow++)
		NN(pair_group)(a, in, w, sh, 1, sw, ow, c, bias, tail, m, out0, out1);
	for (; ow < a->ow; ow++) {
		NN(three_edge)(a, in, w, 3, sw, ow, c, bias, tail, m, out0);
		NN(three_edge)(a, in + sh, w, 3, sw, ow, c, bias, tail, m, out1);
	}
}

/* Output row out0 and the next for the channels from c, every tap's row
 * inside the plane: input rows from row0. */
FN void
NN(pair_block)(const nh_args *a, const float *row0, int64_t c, bool tail, NH_MASK m, float *out0, float *out1)
{
	VEC bias = NN(bias)(a, c, tail, m);
	const float *in[5];
	VEC w[3][3];
	UNROLL
	for (int r = 0; r < 5; r++)
		in[r] = row0 + (r < 3 + a->sh ? r : 0) * a->w * a->c;
	UNROLL
	for (int r = 0; r < 3; r++) {
		UNROLL
		for (int k = 0; k < 3; k++)
			w[r][k] = NN(load)(a->packed + (r * 3 + k) * a->cp + c);
	}
	const VEC (*taps)[3] = (const VEC (*)[3])w;
	if (a->sh == 1 && a->sw == 1)
		NN(pair_row)(a, in, taps, 1, 1, c, bias, tail, m, out0, out1);
	else if (a->sh == 1)
		NN(pair_row)(a, in, taps, 1, 2, c, bias, tail, m, out0, out1);
	else if (a->sw == 1)
		NN(pair_row)(a, in, taps, 2, 1, c, bias, tail, m, out0, out1);
	else
		NN(pair_row)(a, in, taps, 2, 2, c, bias, tail, m, out0, out1);
}

/* The row with the filter rows kh0 .. kh0 + nr - 1 (nr 1 to 3), whose input
 * rows start at row0, a row dilation apart: the weights go to registers,
 * and the row is walked with nr and the stride known to the compiler. */
FN void
NN(three_block)(const nh_args *a, const float *row0, int64_t kh0, int64_t nr, int64_t c, VEC bias, bool tail,
                NH_MASK m, float *out)
{
	const float *in[3];
	VEC w[3][3];
	UNROLL
	for (int r = 0; r < 3; r++) {
		in[r] = r < nr ? row0 + r * a->dh * a->w * a->c : row0;
		UNROLL
		for (int k = 0; k < 3; k++)
			w[r][k] = r < nr ? NN(load)(a->packed + ((kh0 + r) * 3 + k) * a->cp + c) : NN(splat)(0.0f);
	}
	const float *const *rows = in;
	const VEC (*taps)[3] = (const VEC (*)[3])w;
	switch (nr * 2 + (a->sw == 2)) {
	case 2:
		NN(three_row)(a, rows, taps, 1, 1, c, bias, tail, m, out);
		break;
	case 3:
		NN(three_row)(a, rows, taps, 1, 2, c, bias, tail, m, out);
		break;
	case 4:
		NN(three_row)(a, rows, taps, 2, 1, c, bias, tail, m, out);
		break;
	case 5:
		NN(three_row)(a, rows, taps, 2, 2, c, bias, tail, m, out);
		break;
	case 6:
		NN(three_row)(a, rows, taps, 3, 1, c, bias, tail, m, out);
		break;
	default:
		NN(three_row)(a, rows, taps, 3, 2, c, bias, tail, m, out);
		break;
	}
}

/* ---- any filter, reading the input in place ---- */

/*
 * Outputs ow .. ow + p - 1 of a row for the channels from c, with the
 * filter rows kh0 .. kh0 + nr - 1 (input rows from row0, a row dilation
 * apart) and the filter columns [k0, k1), which every one of the outputs
 * reads from inside the input row. The weights are loaded tap by tap.
 */
FN void
NN(any_group)(const nh_args *a, const float *row0, int64_t kh0, int64_t nr, int64_t k0, int64_t k1, int p,
              int64_t ow, int64_t c, VEC bias, bool tail, NH_MASK m, float *out)
{
	int64_t cs = a->c, step = a->sw * cs, row_step = a->dh * a->w * cs;
	VEC acc[NH_GROUP_MOST];
	UNROLL
	for (int j = 0; j < p; j++)
		acc[j] = bias;
	const float *src = row0 + (ow * a->sw - a->pw) * cs + c;
	const float *wt = a->packed + kh0 * a->kw * a->cp + c;
	for (int64_t r = 0; r < nr; r++, src += row_step, wt += a->kw * a->cp) {
		for (int64_t k = k0; k < k1; k++) {
			VEC wk = NN(load)(wt + k * a->cp);
			const float *s = src + k * a->dw * cs;
			UNROLL
			for (int j = 0; j < p; j++)
				acc[j] = NH_FMA(wk, NN(get)(s + j * step, tail, m), acc[j]);
		}
	}
	UNROLL
	for (int j = 0; j < p; j++)
		NN(put)(a, out + (ow + j) * cs + c, acc[j], tail, m);
}

/* Output ow alone, its filter columns outside the input row left out. */
FN void
NN(any_edge)(const nh_args *a, const float *row0, int64_t kh0, int64_t nr, int64_t ow, int64_t c, VEC bias,
             bool tail, NH_MASK m, float *out)
{
	int64_t left = ow * a->sw - a->pw;
	int64_t k0 = k_clamp64(k_div_up(-left, a->dw), 0, a->kw);
	int64_t k1 = k_clamp64(k_div_down(a->w - 1 - left, a->dw) + 1, k0, a->kw);
	NN(any_group)(a, row0, kh0, nr, k0, k1, 1, ow, c, bias, tail, m, out);
}

/* One output row for one block of channels, any filter: as three_row. */
FN void
NN(any_row)(const nh_args *a, const float *row0, int64_t kh0, int64_t nr, int64_t c, VEC bias, bool tail,
            NH_MASK m, float *out)
{
	int64_t ow = 0;
	for (; ow < a->lo; ow++)
		NN(any_edge)(a, row0, kh0, nr, ow, c, bias, tail, m, out);
	for (; ow + 8 <= a->hi; ow += 8)
		NN(any_group)(a, row0, kh0, nr, 0, a->kw, 8, ow, c, bias, tail, m, out);
	for (; ow + 4 <= a->hi; ow += 4)
		NN(any_group)(a, row0, kh0, nr, 0, a->kw, 4, ow, c, bias, tail, m, out);
	for (; ow < a->hi; ow++)
		NN(any_group)(a, row0, kh0, nr, 0, a->kw, 1, ow, c, bias, tail, m, out);
	for (; ow < a->ow; ow++)
		NN(any_edge)(a, row0, kh0, nr, ow, c, bias, tail, m, out);
}

/* ---- the strip: for channel counts whose rows of positions alias ---- */

/*
 * With C a multiple of 256, positions lie a multiple of 1 KiB apart: the
 * inputs a group reads in place fall in a few sets of the L1 cache and
 * alias the stores of the outputs (512 channels ran at 40 % of the speed
 * of 496 or 528). For those, each thread walks its rows once per block of
 * VL channels, copying the input rows they read, for that block, into a
 * strip on its stack: `ring` rows (the rows one output row spans) of
 * `cols` positions, input row ih in strip row ih mod ring, input column iw
 * at position pw + iw, the padding columns 0 (padded taps then add w * 0,
 * as the NCHW kernels' padded copies do). The loops read it as consecutive
 * vectors with no bounds to check, and a row is copied once per block. C
 * being a multiple of VL, no block is short.
 */

/* Zeros the padding columns of every strip row. */
FN void
NN(strip_pad)(const nh_args *a, float *strip)
{
	int64_t left = k_min64(a->pw, a->cols), right = k_min64(a->pw + a->copy, a->cols);
	for (int64_t r = 0; r < a->ring; r++) {
		float *row = strip + r * a->cols * VL;
		memset(row, 0, (size_t)(left * VL) * sizeof *row);
		memset(row + right * VL, 0, (size_t)((a->cols - right) * VL) * sizeof *row);
	}
}

/* Copies input row src (at the block's first channel) into strip row dst. */
FN void
NN(strip_fill)(const nh_args *a, const float *src, float *dst)
{
	dst += a->pw * VL;
	for (int64_t iw = 0; iw < a->copy; iw++)
		NN(store)(dst + iw * VL, NN(load)(src + iw * a->c));
}

/* As three_group, from the strip rows in[r]. */
FN void
NN(strip_three_group)(const nh_args *a, const float *const *in, const VEC (*w)[3], int nr, int p, int sw,
                      int64_t ow, VEC bias, float *out)
{
	int64_t cs = a->c;
	VEC acc[NH_GROUP_MOST];
	UNROLL
	for (int j = 0; j < p; j++)
		acc[j] = bias;
	UNROLL
	for (int r = 0; r < nr; r++) {
		const float *src = in[r] + ow * sw * VL;
		VEC x[2 * NH_GROUP_MOST + 1];
		UNROLL
		for (int i = 0; i < (p - 1) * sw + 3; i++)
			x[i] = NN(load)(src + i * VL);
		UNROLL
		for (int k = 0; k < 3; k++) {
			UNROLL
			for (int j = 0; j < p; j++)
				acc[j] = NH_FMA(w[r][k], x[j * sw + k], acc[j]);
		}
	}
	UNROLL
	for (int j = 0; j < p; j++)
		NN(put)(a, out + (ow + j) * cs, acc[j], false, NH_MASK_OF(VL));
}

FN void
NN(strip_three_row)(const nh_args *a, const float *const *in, const VEC (*w)[3], int nr, int sw, VEC bias,
                    float *out)
{
	int64_t ow = 0;
	if (sw == 1) {
		for (; ow + NH_ROW_GROUP <= a->ow; ow += NH_ROW_GROUP)
			NN(strip_three_group)(a, in, w, nr, NH_ROW_GROUP, sw, ow, bias, out);
	}
	for (; ow + 4 <= a->ow; ow += 4)
		NN(strip_three_group)(a, in, w, nr, 4, sw, ow, bias, out);
	for (; ow + 2 <= a->ow; ow += 2)
		NN(strip_three_group)(a, in, w, nr, 2, sw, ow, bias, out);
	for (; ow < a->ow; ow++)
		NN(strip_three_group)(a, in, w, nr, 1, sw, ow, bias, out);
}

/* One output row from the strip rows in[0 .. nr - 1], 3 x 3, the filter
 * rows from kh0: as three_block. */
FN void
NN(strip_three)(const nh_args *a, const float *const *in, int64_t kh0, int64_t nr, int64_t c, VEC bias, float *out)
{
	VEC w[3][3];
	UNROLL
	for (int r = 0; r < 3; r++) {
		UNROLL
		for (int k = 0; k < 3; k++)
			w[r][k] = r < nr ? NN(load)(a->packed + ((kh0 + r) * 3 + k) * a->cp + c) : NN(splat)(0.0f);
	}
	const VEC (*taps)[3] = (const VEC (*)[3])w;
	switch (nr * 2 + (a->sw == 2)) {
	case 2:
		NN(strip_three_row)(a, in, taps, 1, 1, bias, out);
		break;
	case 3:
		NN(strip_three_row)(a, in, taps, 1, 2, bias, out);
		break;
	case 4:
		NN(strip_three_row)(a, in, taps, 2, 1, bias, out);
		break;
	case 5:
		NN(strip_three_row)(a, in, taps, 2, 2, bias, out);
		break;
	case 6:
		NN(strip_three_row)(a, in, taps, 3, 1, bias, out);
		break;
	default:
		NN(strip_three_row)(a, in, taps, 3, 2, bias, out);
		break;
	}
}

/* Outputs ow .. ow + p - 1 of a row from the strip, any filter: the filter
 * rows kh0 .. kh0 + nr - 1, reading input rows first, first + dh, ...;
 * the weights are loaded tap by tap. */
FN void
NN(strip_group)(const nh_args *a, const float *strip, int64_t first, int64_t kh0, int64_t nr, int p, int64_t ow,
                int64_t c, VEC bias, float *out)
{
	VEC acc[NH_GROUP_MOST];
	UNROLL
	for (int j = 0; j < p; j++)
		acc[j] = bias;
	int64_t step = a->sw * VL, at = first % a->ring;
	for (int64_t r = 0; r < nr; r++) {
		const float *src = strip + at * a->cols * VL + ow * step;
		const float *wt = a->packed + (kh0 + r) * a->kw * a->cp + c;
		for (int64_t k = 0; k < a->kw; k++) {
			VEC wk = NN(load)(wt + k * a->cp);
			const float *s = src + k * a->dw * VL;
			UNROLL
			for (int j = 0; j < p; j++)
				acc[j] = NH_FMA(wk, NN(load)(s + j * step), acc[j]);
		}
		at = at + a->dh >= a->ring ? at + a->dh - a->ring : at + a->dh;
	}
	UNROLL
	for (int j = 0; j < p; j++)
		NN(put)(a, out + (ow + j) * a->c, acc[j], false, NH_MASK_OF(VL));
}

/* The filter rows [kh0, kh0 + nr) of output row oh that read input rows
 * inside the plane, and the input row of filter row 0. */
FN void
NN(rows_of)(const nh_args *a, int64_t oh, int64_t *kh0, int64_t *nr, int64_t *top)
{
	*top = oh * a->sh - a->ph;
	*kh0 = k_clamp64(k_div_up(-*top, a->dh), 0, a->kh);
	*nr = k_clamp64(k_div_down(a->h - 1 - *top, a->dh) + 1, *kh0, a->kh) - *kh0;
}

/* Output rows [t0, t1) of batch x rows for the channels from c, through
 * the strip. */
static K_TARGET void
NN(strip_block)(const nh_args *a, float *strip, int64_t t0, int64_t t1, int64_t c)
{
	VEC bias = NN(bias)(a, c, false, NH_MASK_OF(VL));
	int64_t have = -1, next = 0; /* rows of sample `have` below next are in the strip */
	int64_t n = t0 / a->oh, oh = t0 % a->oh;
	float *out = a->y + t0 * a->ow * a->c + c;
	for (int64_t t = t0; t < t1; t++, out += a->ow * a->c) {
		if (t > t0 && ++oh == a->oh)
			oh = 0, n++;
		int64_t kh0, nr, top;
		NN(rows_of)(a, oh, &kh0, &nr, &top);
		if (nr == 0) {
			for (int64_t ow = 0; ow < a->ow; ow++)
				NN(put)(a, out + ow * a->c, bias, false, NH_MASK_OF(VL));
			continue;
		}
		/* The input rows the filter spans, within the plane: both ends
		 * only grow from row to row (the first tap's row need not, with
		 * a dilation). */
		int64_t from = k_max64(top, 0), to = k_min64(top + a->ring - 1, a->h - 1);
		if (n != have) {
			have = n;
			next = from;
		}
		int64_t ih = k_max64(next, from), slot = ih % a->ring;
		for (; ih <= to; ih++, slot = slot + 1 == a->ring ? 0 : slot + 1)
			NN(strip_fill)(a, a->x + (n * a->h + ih) * a->w * a->c + c, strip + slot * a->cols * VL);
		next = k_max64(next, to + 1);
		int64_t first = top + kh0 * a->dh;
		if (a->three) {
			/* The strip rows of the filter rows (a dilation apart, round
			 * the ring). */
			const float *in[3];
			int64_t at = first % a->ring;
			for (int64_t r = 0; r < 3; r++) {
				in[r] = strip + at * a->cols * VL;
				if (r + 1 < nr)
					at = at + a->dh >= a->ring ? at + a->dh - a->ring : at + a->dh;
			}
			NN(strip_three)(a, in, kh0, nr, c, bias, out);
			continue;
		}
		int64_t ow = 0;
		for (; ow + 8 <= a->ow; ow += 8)
			NN(strip_group)(a, strip, first, kh0, nr, 8, ow, c, bias, out);
		for (; ow + 4 <= a->ow; ow += 4)
			NN(strip_group)(a, strip, first, kh0, nr, 4, ow, c, bias, out);
		for (; ow < a->ow; ow++)
			NN(strip_group)(a, strip, first, kh0, nr, 1, ow, c, bias, out);
	}
}

/* ---- the tasks ---- */

/* Channels c .. c + VL - 1 (fewer in a tail block) of one output row,
 * reading the input in place from row0, the first filter row's. */
FN void
NN(block)(const nh_args *a, const float *row0, int64_t kh0, int64_t nr, int64_t c, bool tail, NH_MASK m,
          float *out)
{
	VEC bias = NN(bias)(a, c, tail, m);
	if (nr == 0) {
		/* Every tap of the row falls in the padding: the bias alone. */
		for (int64_t ow = 0; ow < a->ow; ow++)
			NN(put)(a, out + ow * a->c + c, bias, tail, m);
	} else if (a->three) {
		NN(three_block)(a, row0, kh0, nr, c, bias, tail, m, out);
	} else {
		NN(any_row)(a, row0, kh0, nr, c, bias, tail, m, out);
	}
}

/* Output rows [t0, t1) of batch x rows, reading the input in place: each
 * row (or pair of rows) for every block of channels in turn. */
static K_TARGET void
NN(direct_rows)(const nh_args *a, int64_t t0, int64_t t1)
{
	for (int64_t t = t0; t < t1; t++) {
		int64_t n = t / a->oh, oh = t % a->oh, kh0, nr, top;
		NN(rows_of)(a, oh, &kh0, &nr, &top);
		float *out = a->y + (n * a->oh + oh) * a->ow * a->c;
		int64_t c = 0, rows = 1;
		if (a->pairs && t + 1 < t1 && oh + 1 < a->oh && top >= 0 && top + a->sh + 2 < a->h) {
			const float *row0 = a->x + (n * a->h + top) * a->w * a->c;
			float *next = out + a->ow * a->c;
			for (; c + VL <= a->c; c += VL)
				NN(pair_block)(a, row0, c, false, NH_MASK_OF(VL), out, next);
			if (c < a->c)
				NN(pair_block)(a, row0, c, true, NH_MASK_OF(a->c - c), out, next);
			rows = 2;
		}
		if (rows == 1) {
			const float *row0 = nr > 0 ? a->x + (n * a->h + top + kh0 * a->dh) * a->w * a->c : a->x;
			for (; c + VL <= a->c; c += VL)
				NN(block)(a, row0, kh0, nr, c, false, NH_MASK_OF(VL), out);
			if (c < a->c)
				NN(block)(a, row0, kh0, nr, c, true, NH_MASK_OF(a->c - c), out);
		}
		if (a->post != NULL)
			k_activation(a->post->act, a->post->a, a->post->b, out, rows * a->ow * a->c);
		t += rows - 1;
	}
}

/* Output rows [t0, t1) of batch x rows. */
static K_TARGET void
NN(dw_rows)(void *arg, int64_t t0, int64_t t1)
{
	const nh_args *a = arg;
	if (!a->strip || a->ring * a->cols * VL > NH_STRIP_FLOATS) {
		NN(direct_rows)(a, t0, t1);
		return;
	}
	float strip[NH_STRIP_FLOATS] __attribute__((aligned(64)));
	NN(strip_pad)(a, strip);
	for (int64_t c = 0; c < a->c; c += VL)
		NN(strip_block)(a, strip, t0, t1, c);
	if (a->post != NULL)
		k_activation(a->post->act, a->post->a, a->post->b, a->y + t0 * a->ow * a->c, (t1 - t0) * a->ow * a->c);
}

/* ---- global pooling ---- */

/* nv vectors of channels from x's first (one in a tail block) pooled over
 * the positions, in position order, to y. */
FN void
NN(pool_vectors)(const nh_pool_args *a, const float *x, float *y, int nv, bool tail, NH_MASK m)
{
	int64_t cs = a->channels, q = a->positions;
	VEC out[4];
	if (a->max) {
		UNROLL
		for (int v = 0; v < nv; v++)
			out[v] = NN(splat)(-FLT_MAX);
		for (int64_t i = 0; i < q; i++) {
			UNROLL
			for (int v = 0; v < nv; v++) {
				VEC e = NN(get)(x + i * cs + v * VL, tail, m);
				out[v] = NN(select)(e > out[v], e, out[v]);
			}
		}
	} else {
		/* Each half in double registers: a vector of VL doubles would be
		 * wider than the level's registers, which GCC handles badly. */
		DHALF lo[4], hi[4];
		UNROLL
		for (int v = 0; v < nv; v++)
			lo[v] = hi[v] = (DHALF){ 0 };
		for (int64_t i = 0; i < q; i++) {
			UNROLL
			for (int v = 0; v < nv; v++) {
				VEC e = NN(get)(x + i * cs + v * VL, tail, m);
				lo[v] += __builtin_convertvector(NH_LO(e), DHALF);
				hi[v] += __builtin_convertvector(NH_HI(e), DHALF);
			}
		}
		UNROLL
		for (int v = 0; v < nv; v++) {
			HALF l = __builtin_convertvector(lo[v] / (double)q, HALF);
			HALF h = __builtin_convertvector(hi[v] / (double)q, HALF);
			out[v] = q > 0 ? NH_JOIN(l, h) : NN(splat)(0.0f);
		}
	}
	UNROLL
	for (int v = 0; v < nv; v++) {
		if (tail)
			NH_STORE_PART(y + v * VL, out[v], m);
		else
			NN(store)(y + v * VL, out[v]);
	}
}

/* Blocks [b0, b1) of NH_POOL_BLOCK channels, every sample. */
static K_TARGET void
NN(pool_blocks)(void *arg, int64_t b0, int64_t b1)
{
	const nh_pool_args *a = arg;
	for (int64_t b = b0; b < b1; b++) {
		int64_t c0 = b * NH_POOL_BLOCK, c1 = k_min64(c0 + NH_POOL_BLOCK, a->channels);
		for (int64_t n = 0; n < a->batch; n++) {
			const float *x = a->x + n * a->positions * a->channels;
			float *y = a->y + n * a->channels;
			int64_t c = c0;
			for (; c + 4 * VL <= c1; c += 4 * VL)
				NN(pool_vectors)(a, x + c, y + c, 4, false, NH_MASK_OF(VL));
			for (; c + VL <= c1; c += VL)
				NN(pool_vectors)(a, x + c, y + c, 1, false, NH_MASK_OF(VL));
			if (c < c1)
				NN(pool_vectors)(a, x + c, y + c, 1, true, NH_MASK_OF(c1 - c));
		}
	}
}

#undef NN3
#undef NN2
#undef NN
#undef VEC
#undef IVEC
#undef HALF
#undef DHALF
#undef NH_LO
#undef NH_HI
#undef NH_JOIN
#undef FN
#undef UNROLL
#undef NH_GROUP_MOST
