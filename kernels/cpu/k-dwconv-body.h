/* The loops of the direct convolutions in k-dwconv.c, written once and
 * compiled once per instruction set: k-dwconv.c includes this file for each
 * variant after defining
 *   DW_NAME(x)        x with the variant's suffix
 *   DW_TARGET         the function attribute that selects the instruction set
 *   DW_LANES          floats per vector: 16, 8 or 4
 *   DW_FMA(a, b, c)   a * b + c on vectors (one rounding where the set has FMA)
 *   DW_FEW_OUTPUTS    output channels the few-channel kernel keeps in registers
 *   DW_FEW_BLOCKS     and vectors of outputs of each (2 or 3): outputs x
 *                     blocks sums, blocks loads and outputs broadcasts a tap
 *   DW_MASKED_LOADS   512 or 256 for the AVX-512 or AVX2 masked loads, 0 for none
 * and the shared types (dw_rows, dw_args, few_plan, few_args). */

#define DW_VEC DW_NAME(vec)
#define L DW_LANES
/* Loops over registers (vectors of a block, output channels) must be
 * unrolled for their sums to stay in registers; -O2 alone does not. Not in
 * a clang build with AddressSanitizer (the fuzzing build), where the
 * unrolled and inlined bodies, instrumented, took clang over 15 minutes
 * and 3.5 GB for this file; there the loops stay loops, and clang may
 * leave the helper functions out of line. */
#if defined(__clang__) && defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DW_NO_UNROLL 1
#endif
#endif
#ifdef DW_NO_UNROLL
#define DW_UNROLL
#define DW_FN static DW_TARGET
#else
#define DW_UNROLL _Pragma("GCC unroll 16")
#define DW_FN static inline __attribute__((always_inline)) DW_TARGET
#endif

typedef float DW_VEC __attribute__((vector_size(DW_LANES * sizeof(float))));

/* Lane shuffles of two vectors a, b: DW_EVENS and DW_ODDS, the even or odd
 * lanes of a then b; DW_EVENS_ODDS, the even lanes of a then the odd lanes
 * of b; DW_NEXT1 and DW_NEXT2, the vector that starts 1 or 2 floats into a
 * and continues into b; DW_NEXT_LAST, lanes 1 .. L - 1 of a, then the last
 * lane of b. */
#if DW_LANES == 16
#define DW_EVENS(a, b) \
	__builtin_shufflevector(a, b, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30)
#define DW_ODDS(a, b) \
	__builtin_shufflevector(a, b, 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31)
#define DW_EVENS_ODDS(a, b) \
	__builtin_shufflevector(a, b, 0, 2, 4, 6, 8, 10, 12, 14, 17, 19, 21, 23, 25, 27, 29, 31)
#define DW_NEXT_LAST(a, b) \
	__builtin_shufflevector(a, b, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 31)
#define DW_NEXT1(a, b) __builtin_shufflevector(a, b, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)
#define DW_NEXT2(a, b) __builtin_shufflevector(a, b, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17)
#elif DW_LANES == 8
#define DW_EVENS(a, b) __builtin_shufflevector(a, b, 0, 2, 4, 6, 8, 10, 12, 14)
#define DW_ODDS(a, b) __builtin_shufflevector(a, b, 1, 3, 5, 7, 9, 11, 13, 15)
#define DW_EVENS_ODDS(a, b) __builtin_shufflevector(a, b, 0, 2, 4, 6, 9, 11, 13, 15)
#define DW_NEXT_LAST(a, b) __builtin_shufflevector(a, b, 1, 2, 3, 4, 5, 6, 7, 15)
#define DW_NEXT1(a, b) __builtin_shufflevector(a, b, 1, 2, 3, 4, 5, 6, 7, 8)
#define DW_NEXT2(a, b) __builtin_shufflevector(a, b, 2, 3, 4, 5, 6, 7, 8, 9)
#elif DW_LANES == 4
#define DW_EVENS(a, b) __builtin_shufflevector(a, b, 0, 2, 4, 6)
#define DW_ODDS(a, b) __builtin_shufflevector(a, b, 1, 3, 5, 7)
#define DW_EVENS_ODDS(a, b) __builtin_shufflevector(a, b, 0, 2, 5, 7)
#define DW_NEXT_LAST(a, b) __builtin_shufflevector(a, b, 1, 2, 3, 7)
#define DW_NEXT1(a, b) __builtin_shufflevector(a, b, 1, 2, 3, 4)
#define DW_NEXT2(a, b) __builtin_shufflevector(a, b, 2, 3, 4, 5)
#else
#error "DW_LANES must be 16, 8 or 4"
#endif

DW_FN DW_VEC
DW_NAME(load)(const float *p)
{
	DW_VEC v;
	memcpy(&v, p, sizeof v);
	return v;
}

DW_FN void
DW_NAME(store)(float *p, DW_VEC v)
{
	memcpy(p, &v, sizeof v);
}

/* x in every lane. (x - 0 is x exactly, -0 included, so the compiler drops
 * the subtraction and broadcasts; 0 + x would turn -0 into +0 and stay.) */
DW_FN DW_VEC
DW_NAME(splat)(float x)
{
	DW_VEC zero = { 0 };
	return x - zero;
}

/* Lane j is p[j * step]. At step 2 the second vector starts a float early,
 * so that nothing past p[2 L - 2] is read. */
DW_FN DW_VEC
DW_NAME(load_every)(const float *p, int64_t step)
{
	if (step == 1)
		return DW_NAME(load)(p);
	if (step == 2)
		return DW_EVENS_ODDS(DW_NAME(load)(p), DW_NAME(load)(p + L - 1));
	float lanes[L];
	for (int j = 0; j < L; j++)
		lanes[j] = p[j * step];
	return DW_NAME(load)(lanes);
}

/* Which lanes of a vector that starts at row[index] lie inside [0, width):
 * the loads at the ends of a row may start before it or run past it. */
#if DW_MASKED_LOADS == 512
typedef __mmask16 DW_NAME(mask);
#elif DW_MASKED_LOADS == 256
typedef int DW_NAME(mask) __attribute__((vector_size(32)));
#else
typedef struct DW_NAME(mask) {
	int lo, hi;
} DW_NAME(mask);
#endif

DW_FN DW_NAME(mask)
DW_NAME(mask_of)(int64_t index, int64_t width)
{
	int64_t lo = index < 0 ? -index : 0, hi = width - index;
	lo = lo < L ? lo : L;
	hi = hi < lo ? lo : hi > L ? L : hi;
#if DW_MASKED_LOADS == 512
	return (__mmask16)(((1u << hi) - 1) & ~((1u << lo) - 1));
#elif DW_MASKED_LOADS == 256
	DW_NAME(mask) lane = { 0, 1, 2, 3, 4, 5, 6, 7 };
	return (lane >= (int)lo) & (lane < (int)hi);
#else
	return (DW_NAME(mask)){ (int)lo, (int)hi };
#endif
}

/* Lane j is row[index + j] where the mask has it, else 0. Masked loads read
 * nothing under a cleared lane. */
DW_FN DW_VEC
DW_NAME(load_masked)(const float *row, int64_t index, DW_NAME(mask) keep)
{
#if DW_MASKED_LOADS
	/* The address of lane 0, formed as an integer: it may lie before the row. */
	const float *at = (const float *)((uintptr_t)row + (uintptr_t)index * sizeof(float));
#endif
#if DW_MASKED_LOADS == 512
	return _mm512_maskz_loadu_ps(keep, at);
#elif DW_MASKED_LOADS == 256
	return _mm256_maskload_ps(at, (__m256i)keep);
#else
	float lanes[L] = { 0 };
	for (int j = keep.lo; j < keep.hi; j++)
		lanes[j] = row[index + j];
	return DW_NAME(load)(lanes);
#endif
}

/* Lane j is row[index + j], or 0 where index + j falls outside [0, width). */
DW_FN DW_VEC
DW_NAME(load_inside)(const float *row, int64_t index, int64_t width)
{
	return DW_NAME(load_masked)(row, index, DW_NAME(mask_of)(index, width));
}

/* Lane j is row[index + j * step], 0 outside the row. */
DW_FN DW_VEC
DW_NAME(load_every_inside)(const float *row, int64_t index, int64_t step, int64_t width)
{
	if (step == 1)
		return DW_NAME(load_inside)(row, index, width);
	if (step == 2)
		return DW_EVENS_ODDS(DW_NAME(load_inside)(row, index, width),
		                     DW_NAME(load_inside)(row, index + L - 1, width));
	float lanes[L];
	for (int j = 0; j < L; j++) {
		int64_t i = index + j * step;
		lanes[j] = i >= 0 && i < width ? row[i] : 0.0f;
	}
	return DW_NAME(load)(lanes);
}

/* A tap's input vector: inside the row (no checks), or at an end of it. */
DW_FN DW_VEC
DW_NAME(tap)(const float *row, int64_t index, int64_t step, int64_t width, bool edge)
{
	if (edge)
		return DW_NAME(load_every_inside)(row, index, step, width);
	return DW_NAME(load_every)(row + index, step);
}

/* Stores `blocks` vectors, or the first `keep` lanes of one. */
DW_FN void
DW_NAME(store_blocks)(float *out, const DW_VEC *v, int blocks, int64_t keep)
{
	if (keep < L) {
		float lanes[L];
		DW_NAME(store)(lanes, v[0]);
		memcpy(out, lanes, (size_t)keep * sizeof *out);
		return;
	}
	DW_UNROLL
	for (int b = 0; b < blocks; b++)
		DW_NAME(store)(out + b * L, v[b]);
}

/* 2 L floats from src: the even ones to dst, the odd ones to dst[phase]. */
DW_FN void
DW_NAME(deinterleave)(const float *src, float *dst, int64_t phase)
{
	DW_VEC a = DW_NAME(load)(src), b = DW_NAME(load)(src + L);
	DW_NAME(store)(dst, DW_EVENS(a, b));
	DW_NAME(store)(dst + phase, DW_ODDS(a, b));
}

/* Writes input row src (width floats) as a padded row of `floats` floats,
 * `left` zeros before it; with phase > 0 as its even padded columns, then
 * its odd ones from dst[phase]. */
DW_FN void
DW_NAME(padded_row)(const float *src, int64_t width, int64_t left, int64_t floats, int64_t phase, float *dst)
{
	if (phase == 0) {
		memset(dst, 0, (size_t)left * sizeof *dst);
		memcpy(dst + left, src, (size_t)width * sizeof *dst);
		memset(dst + left + width, 0, (size_t)(floats - left - width) * sizeof *dst);
		return;
	}
	/* Padded column col = iw + left goes to float col / 2 of phase col % 2;
	 * 2 L input floats from an even column give L of each. */
	memset(dst, 0, (size_t)floats * sizeof *dst);
	int64_t iw = 0;
	for (; (iw + left) % 2 != 0 && iw < width; iw++)
		dst[phase + (iw + left) / 2] = src[iw];
	for (; iw + 2 * L <= width; iw += 2 * L)
		DW_NAME(deinterleave)(src + iw, dst + (iw + left) / 2, phase);
	/* The rest in one step that overlaps the last (from an even column
	 * still), where the row is long enough; at most one float is left. */
	int64_t back = width - 2 * L - (width + left) % 2;
	if (iw < width && back >= 0) {
		DW_NAME(deinterleave)(src + back, dst + (back + left) / 2, phase);
		iw = back + 2 * L;
	}
	for (; iw < width; iw++)
		dst[(iw + left) % 2 * phase + (iw + left) / 2] = src[iw];
}

/* ---- depthwise: one input channel per output plane ---- */

/* Taps of one block whose masks are worked out before the rows are walked
 * (more are masked load by load). */
#define DW_MASKED_TAPS 16

/* Adds input row i's taps into acc (see dw_block). */
DW_FN void
DW_NAME(dw_block_row)(const dw_rows *r, int i, int64_t start, int64_t width, int blocks, bool edge, bool masked,
                      const DW_NAME(mask) (*masks)[2], int64_t taps, int64_t step, int64_t dilation, DW_VEC *acc)
{
	const float *row = r->in[i], *t = r->taps[i];
	for (int64_t k = 0; k < taps; k++) {
		DW_VEC w = DW_NAME(splat)(t[k]);
		if (masked) {
			int64_t at = start + k * dilation;
			DW_VEC x = DW_NAME(load_masked)(row, at, masks[k][0]);
			if (step == 2)
				x = DW_EVENS_ODDS(x, DW_NAME(load_masked)(row, at + L - 1, masks[k][1]));
			acc[0] = DW_FMA(w, x, acc[0]);
			continue;
		}
		DW_UNROLL
		for (int b = 0; b < blocks; b++)
			acc[b] = DW_FMA(w, DW_NAME(tap)(row, start + k * dilation + b * L * step, step, width, edge), acc[b]);
	}
}

/*
 * `blocks` vectors of consecutive outputs of one row from ow on: the sums
 * stay in registers while every input row's taps are added, each weight
 * read once for all the vectors. Output ow reads tap k of a row at
 * ow * step - pad + k * dilation; with `edge` the loads may reach past
 * either end of the rows (one vector then), and at stride 1 or 2 each tap's
 * masks are the same for every row.
 */
DW_FN void
DW_NAME(dw_block)(const dw_args *a, const dw_rows *r, int64_t ow, float bias, int blocks, bool edge,
                  int64_t keep, int64_t taps, int64_t step, int64_t dilation, float *out)
{
	int64_t width = a->g.in[2], start = ow * step - a->g.pad[2];
	/* Two sums per vector, for even and odd input rows: twice the chains
	 * of dependent multiply-adds in flight. */
	DW_VEC even[4], odd[4];
	DW_UNROLL
	for (int b = 0; b < blocks; b++) {
		even[b] = DW_NAME(splat)(bias);
		odd[b] = DW_NAME(splat)(0.0f);
	}
	DW_NAME(mask) masks[DW_MASKED_TAPS][2];
	bool masked = edge && step <= 2 && taps <= DW_MASKED_TAPS;
	if (masked) {
		for (int64_t k = 0; k < taps; k++) {
			masks[k][0] = DW_NAME(mask_of)(start + k * dilation, width);
			masks[k][1] = DW_NAME(mask_of)(start + k * dilation + L - 1, width);
		}
		blocks = 1;
	}
	int i = 0;
	for (; i + 1 < r->count; i += 2) {
		DW_NAME(dw_block_row)(r, i, start, width, blocks, edge, masked, masks, taps, step, dilation, even);
		DW_NAME(dw_block_row)(r, i + 1, start, width, blocks, edge, masked, masks, taps, step, dilation, odd);
	}
	if (i < r->count)
		DW_NAME(dw_block_row)(r, i, start, width, blocks, edge, masked, masks, taps, step, dilation, even);
	DW_UNROLL
	for (int b = 0; b < blocks; b++)
		even[b] += odd[b];
	DW_NAME(store_blocks)(out + ow, even, blocks, keep);
}

/*
 * 3 x 3 with all three rows inside: the nine weights stay in registers.
 * rows[0..2] are the input rows of the output row; with `pair` (stride 1)
 * rows[1..3] give the next output row at once, each input vector loaded
 * serving both.
 */
DW_FN void
DW_NAME(dw3_block)(const dw_args *a, const float *const *rows, const DW_VEC *w, int64_t ow, float bias,
                   int blocks, bool edge, int64_t keep, int64_t step, bool pair, float *out0, float *out1)
{
	int64_t width = a->g.in[2], start = ow * step - a->g.pad[2];
	DW_VEC a0[2], a1[2];
	DW_UNROLL
	for (int b = 0; b < blocks; b++)
		a0[b] = a1[b] = DW_NAME(splat)(bias);
	DW_UNROLL
	for (int i = 0; i < 4; i++) {
		if (i == 3 && !pair)
			break;
		DW_VEC x[2][3];
		if (step == 2 && blocks == 1) {
			/* Floats s .. s + 2 L of the row: the even ones are tap 0, the
			 * odd ones tap 1, the even ones from s + 2 tap 2 (its last lane
			 * from a third vector that ends at s + 2 L). */
			DW_VEC lo = DW_NAME(tap)(rows[i], start, 1, width, edge);
			DW_VEC hi = DW_NAME(tap)(rows[i], start + L, 1, width, edge);
			DW_VEC end = DW_NAME(tap)(rows[i], start + L + 1, 1, width, edge);
			x[0][0] = DW_EVENS(lo, hi);
			x[0][1] = DW_ODDS(lo, hi);
			x[0][2] = DW_NEXT_LAST(x[0][0], end);
		} else if (step == 1 && !edge && blocks == 2) {
			/* The taps of the first block from its vector and the next
			 * one: lane shifts instead of unaligned loads. */
			const float *src = rows[i] + start;
			x[0][0] = DW_NAME(load)(src);
			x[1][0] = DW_NAME(load)(src + L);
			x[0][1] = DW_NEXT1(x[0][0], x[1][0]);
			x[0][2] = DW_NEXT2(x[0][0], x[1][0]);
			x[1][1] = DW_NAME(load)(src + L + 1);
			x[1][2] = DW_NAME(load)(src + L + 2);
		} else {
			DW_UNROLL
			for (int k = 0; k < 3; k++) {
				DW_UNROLL
				for (int b = 0; b < blocks; b++)
					x[b][k] = DW_NAME(tap)(rows[i], start + k + b * L * step, step, width, edge);
			}
		}
		DW_UNROLL
		for (int k = 0; k < 3; k++) {
			DW_UNROLL
			for (int b = 0; b < blocks; b++) {
				if (i < 3)
					a0[b] = DW_FMA(w[i * 3 + k], x[b][k], a0[b]);
				if (pair && i > 0)
					a1[b] = DW_FMA(w[(i - 1) * 3 + k], x[b][k], a1[b]);
			}
		}
	}
	DW_NAME(store_blocks)(out0 + ow, a0, blocks, keep);
	if (pair)
		DW_NAME(store_blocks)(out1 + ow, a1, blocks, keep);
}

/*
 * One output row (two with `pair`) in vectors: blocks with checked loads
 * over the outputs before lo, whole blocks without checks over [lo, hi),
 * checked blocks again to the end, the last one overlapping the one before
 * it (it writes the same values again); a row narrower than a vector goes
 * through a buffer. With `three`, the 3 x 3 loops and the weights w, else
 * the general loops and r.
 */
DW_FN void
DW_NAME(dw_row)(const dw_args *a, const dw_rows *r, const float *const *rows, const DW_VEC *w, bool three,
                float bias, int64_t taps, int64_t step, int64_t dilation, bool pair, float *out0, float *out1)
{
	int64_t width = a->g.out[2], lo = a->lo, hi = a->hi, ow = 0;
#define DW_ROW_BLOCK(at, blocks, edge, keep)                                                               \
	do {                                                                                                   \
		if (three)                                                                                         \
			DW_NAME(dw3_block)(a, rows, w, at, bias, blocks, edge, keep, step, pair, out0, out1);         \
		else                                                                                               \
			DW_NAME(dw_block)(a, r, at, bias, blocks, edge, keep, taps, step, dilation, out0);            \
	} while (0)
	if (width < L) {
		DW_ROW_BLOCK(0, 1, true, width);
		return;
	}
	for (; ow < lo; ow += L)
		DW_ROW_BLOCK(ow < width - L ? ow : width - L, 1, true, L);
	for (; ow + 4 * L <= hi && !three; ow += 4 * L)
		DW_ROW_BLOCK(ow, 4, false, L);
	/* (The 3 x 3 loops at stride 2 go one vector at a time.) */
	for (; ow + 2 * L <= hi && !(three && step == 2); ow += 2 * L)
		DW_ROW_BLOCK(ow, 2, false, L);
	for (; ow + L <= hi; ow += L)
		DW_ROW_BLOCK(ow, 1, false, L);
	for (; ow < width; ow += L)
		DW_ROW_BLOCK(ow < width - L ? ow : width - L, 1, true, L);
#undef DW_ROW_BLOCK
}

/* ---- depthwise 3 x 3 at stride 2 both ways ---- */

/*
 * `rows` output rows (a constant where it is called) times `blocks`
 * vectors from column ow; rows[j] is input row j of the 2 rows + 1 they
 * read, NULL above or below the input (it adds nothing). Output ow of a row
 * reads input columns 2 ow - left + 0, 1, 2: from the 2 L floats that start
 * at the first, the even ones are tap 0 and the odd ones tap 1, and tap 2
 * is tap 0 moved on by one lane, the next vector's first lane shifted in.
 * So each input row costs two loads and three lane shuffles per vector,
 * shared by the output rows that read it, and the rows x blocks sums are
 * independent chains of multiply-adds. With `edge` the loads may reach
 * past either end of the row (zeros there).
 */
DW_FN void
DW_NAME(dw3s2_block)(const dw_args *a, const float *const *rows_in, const DW_VEC *w, float bias, int rows,
                     int blocks, bool edge, int64_t ow, int64_t keep, float *out)
{
	int64_t width = a->g.in[2], out_w = a->g.out[2], start = 2 * ow - a->g.pad[2];
	DW_VEC acc[DW3S2_ROWS][2];
	DW_UNROLL
	for (int r = 0; r < rows; r++) {
		DW_UNROLL
		for (int b = 0; b < blocks; b++)
			acc[r][b] = DW_NAME(splat)(bias);
	}
	/* The masks of an edge block's loads are the same for every row. */
	DW_NAME(mask) masks[2][2];
	if (edge) {
		DW_UNROLL
		for (int b = 0; b < blocks; b++) {
			masks[b][0] = DW_NAME(mask_of)(start + 2 * b * L, width);
			masks[b][1] = DW_NAME(mask_of)(start + 2 * b * L + L, width);
		}
	}
	DW_UNROLL
	for (int j = 0; j < 2 * rows + 1; j++) {
		const float *row = rows_in[j];
		if (row == NULL)
			continue;
		DW_VEC even[3], odd[2];
		DW_UNROLL
		for (int b = 0; b < blocks; b++) {
			int64_t at = start + 2 * b * L;
			DW_VEC lo = edge ? DW_NAME(load_masked)(row, at, masks[b][0]) : DW_NAME(load)(row + at);
			DW_VEC hi = edge ? DW_NAME(load_masked)(row, at + L, masks[b][1]) : DW_NAME(load)(row + at + L);
			even[b] = DW_EVENS(lo, hi);
			odd[b] = DW_ODDS(lo, hi);
		}
		int64_t last = start + 2 * blocks * L;
		even[blocks] = DW_NAME(splat)(!edge || (last >= 0 && last < width) ? row[last] : 0.0f);
		DW_UNROLL
		for (int b = 0; b < blocks; b++) {
			DW_VEC next = DW_NEXT1(even[b], even[b + 1]);
			DW_UNROLL
			for (int r = 0; r < rows; r++) {
				int k = j - 2 * r; /* the filter row input row j is to output row r */
				if (k < 0 || k > 2)
					continue;
				acc[r][b] = DW_FMA(w[3 * k], even[b], acc[r][b]);
				acc[r][b] = DW_FMA(w[3 * k + 1], odd[b], acc[r][b]);
				acc[r][b] = DW_FMA(w[3 * k + 2], next, acc[r][b]);
			}
		}
	}
	DW_UNROLL
	for (int r = 0; r < rows; r++)
		DW_NAME(store_blocks)(out + r * out_w + ow, acc[r], blocks, keep);
}

/* `rows` output rows, in vectors: checked blocks where the loads reach
 * past an end of the input row, the last block overlapping the one before
 * it; a row narrower than a vector stores part of one. */
DW_FN void
DW_NAME(dw3s2_rows)(const dw_args *a, const float *const *rows_in, const DW_VEC *w, float bias, int rows,
                    float *out)
{
	int64_t width = a->g.in[2], out_w = a->g.out[2], left = a->g.pad[2], ow = 0;
#define DW3S2_BLOCK(at, blocks, keep)                                                                      \
	do {                                                                                                   \
		int64_t first_ = 2 * (at) - left, end_ = first_ + 2 * (blocks) * L;                               \
		if (first_ < 0 || end_ >= width)                                                                   \
			DW_NAME(dw3s2_block)(a, rows_in, w, bias, rows, blocks, true, at, keep, out);                 \
		else                                                                                               \
			DW_NAME(dw3s2_block)(a, rows_in, w, bias, rows, blocks, false, at, keep, out);                \
	} while (0)
	if (out_w < L) {
		DW_NAME(dw3s2_block)(a, rows_in, w, bias, rows, 1, true, 0, out_w, out);
		return;
	}
	for (; ow + 2 * L <= out_w; ow += 2 * L)
		DW3S2_BLOCK(ow, 2, L);
	for (; ow < out_w; ow += L)
		DW3S2_BLOCK(ow < out_w - L ? ow : out_w - L, 1, L);
#undef DW3S2_BLOCK
}

/* One output plane of a 3 x 3 depthwise convolution at stride 2 both ways
 * (dw_args.kind, flat), DW3S2_ROWS output rows at a time. */
DW_FN void
DW_NAME(dw3s2_plane)(const dw_args *a, const float *in, const float *filter, float bias, float *plane)
{
	const k_geometry *g = &a->g;
	int64_t out_h = g->out[1];
	DW_VEC w[9];
	DW_UNROLL
	for (int i = 0; i < 9; i++)
		w[i] = DW_NAME(splat)(filter[i]);
	for (int64_t oh = 0; oh < out_h; oh += DW3S2_ROWS) {
		int rows = out_h - oh < DW3S2_ROWS ? (int)(out_h - oh) : DW3S2_ROWS;
		const float *rows_in[2 * DW3S2_ROWS + 1];
		for (int64_t j = 0; j < 2 * rows + 1; j++) {
			int64_t ih = 2 * oh - g->pad[1] + j;
			rows_in[j] = ih >= 0 && ih < g->in[1] ? in + ih * g->in[2] : NULL;
		}
		float *out = plane + oh * g->out[2];
		/* Constant row counts, so that the sums stay in registers. */
		if (rows == 4)
			DW_NAME(dw3s2_rows)(a, rows_in, w, bias, 4, out);
		else if (rows == 3)
			DW_NAME(dw3s2_rows)(a, rows_in, w, bias, 3, out);
		else if (rows == 2)
			DW_NAME(dw3s2_rows)(a, rows_in, w, bias, 2, out);
		else
			DW_NAME(dw3s2_rows)(a, rows_in, w, bias, 1, out);
	}
}

/* A plane of a 3 x 3 depthwise convolution, stride 1 or 2 along the rows
 * (constant here, so that each gets its own loops). */
DW_FN void
DW_NAME(dw3_plane)(const dw_args *a, const float *in, const float *filter, float bias, float *plane,
                   int64_t step)
{
	const k_geometry *g = &a->g;
	int64_t width = g->in[2], out_width = g->out[2];
	DW_VEC w[9];
	DW_UNROLL
	for (int i = 0; i < 9; i++)
		w[i] = DW_NAME(splat)(filter[i]);
	for (int64_t od = 0; od < g->out[0]; od++) {
		for (int64_t oh = 0; oh < g->out[1]; oh++) {
			float *out = plane + (od * g->out[1] + oh) * out_width;
			int64_t id = od * g->stride[0] - g->pad[0], ih = oh * g->stride[1] - g->pad[1];
			if (id < 0 || id >= g->in[0] || ih < 0 || ih + 2 >= g->in[1]) {
				/* Some taps above or below the input: the general loops. */
				dw_rows r;
				dw_rows_make(g, in, filter, od, oh, &r);
				DW_NAME(dw_row)(a, &r, NULL, NULL, false, bias, 3, step, 1, false, out, NULL);
				continue;
			}
			const float *first = in + (id * g->in[1] + ih) * width;
			const float *rows[4] = { first, first + width, first + 2 * width, first + 3 * width };
			if (step == 1 && g->stride[1] == 1 && oh + 1 < g->out[1] && ih + 3 < g->in[1]) {
				DW_NAME(dw_row)(a, NULL, rows, w, true, bias, 3, 1, 1, true, out, out + out_width);
				oh++;
			} else {
				DW_NAME(dw_row)(a, NULL, rows, w, true, bias, 3, step, 1, false, out, NULL);
			}
		}
	}
}

/* One output plane of a depthwise convolution. */
DW_FN void
DW_NAME(dw_plane)(const dw_args *a, const float *in, const float *filter, float bias, float *plane)
{
	const k_geometry *g = &a->g;
	if (a->kind == DW_3X3_STRIDE1) {
		DW_NAME(dw3_plane)(a, in, filter, bias, plane, 1);
		return;
	}
	if (a->kind == DW_3X3_STRIDE2 && a->split) {
		DW_NAME(dw3s2_plane)(a, in, filter, bias, plane);
		return;
	}
	if (a->kind == DW_3X3_STRIDE2) {
		DW_NAME(dw3_plane)(a, in, filter, bias, plane, 2);
		return;
	}
	int64_t taps = g->kernel[2], step = g->stride[2], dilation = g->dilation[2];
	for (int64_t od = 0; od < g->out[0]; od++) {
		for (int64_t oh = 0; oh < g->out[1]; oh++) {
			float *out = plane + (od * g->out[1] + oh) * g->out[2];
			dw_rows r;
			dw_rows_make(g, in, filter, od, oh, &r);
			if (step == 1)
				DW_NAME(dw_row)(a, &r, NULL, NULL, false, bias, taps, 1, dilation, false, out, NULL);
			else if (step == 2)
				DW_NAME(dw_row)(a, &r, NULL, NULL, false, bias, taps, 2, dilation, false, out, NULL);
			else
				DW_NAME(dw_row)(a, &r, NULL, NULL, false, bias, taps, step, dilation, false, out, NULL);
		}
	}
}

/* Copies one input plane into slot as dw_args.copy describes. */
DW_FN void
DW_NAME(dw_fill)(const dw_args *a, const float *in, float *slot)
{
	const k_geometry *g = &a->g;
	int64_t cols = a->copy.in[2];
	for (int64_t j = 0; j < a->copy.in[1]; j++) {
		float *dst = slot + j * cols;
		int64_t ih = j - g->pad[1];
		if (ih < 0 || ih >= g->in[1])
			memset(dst, 0, (size_t)cols * sizeof *dst);
		else
			DW_NAME(padded_row)(in + ih * g->in[2], g->in[2], g->pad[2], cols, a->phase, dst);
	}
}

/* Adds tap k of copied input row i (at src; at stride 2 split in phases
 * `phase` floats apart) to the sums of the output rows it reaches (see
 * dw_copied_block). */
DW_FN void
DW_NAME(copied_fma)(const float *src, int i, int64_t k, const float *filter, int blocks, int64_t taps,
                    int64_t rows, bool pair, int64_t shift, int64_t step, int64_t dilation, int64_t phase,
                    DW_VEC (*acc)[2])
{
	int64_t col = k * dilation;
	const float *at = step == 1 ? src + col : src + (col & 1) * phase + (col >> 1);
	DW_UNROLL
	for (int b = 0; b < blocks; b++) {
		DW_VEC x = DW_NAME(load)(at + b * L);
		if (i < rows)
			acc[b][0] = DW_FMA(DW_NAME(splat)(filter[i * taps + k]), x, acc[b][0]);
		if (pair && i >= shift)
			acc[b][1] = DW_FMA(DW_NAME(splat)(filter[(i - shift) * taps + k]), x, acc[b][1]);
	}
}

/*
 * `blocks` vectors of output row oh from ow on, and with `pair` of row
 * oh + 1 (vertical dilation 1: input row i + stride of the first is row i
 * of the second, so each vector loaded serves both), from a padded copy of
 * the input plane: every load lies inside it. (Forming the taps from
 * aligned vectors with permutations was slower on Zen 4 than these
 * unaligned loads: the permutations compete with the multiply-adds.)
 */
DW_FN void
DW_NAME(dw_copied_block)(const dw_args *c, const float *slot, const float *filter, int64_t oh, int64_t ow,
                         float bias, int blocks, bool pair, int64_t keep, int64_t taps, int64_t step,
                         int64_t dilation, float *out0, float *out1)
{
	const k_geometry *g = &c->g;
	int64_t rows = g->kernel[1], shift = g->stride[1], phase = c->phase;
	DW_VEC acc[2][2]; /* [block][output row] */
	DW_UNROLL
	for (int b = 0; b < blocks; b++)
		acc[b][0] = acc[b][1] = DW_NAME(splat)(bias);
	for (int64_t i = 0; i < rows + (pair ? shift : 0); i++) {
		const float *src = slot + (oh * shift + i * g->dilation[1]) * g->in[2] + ow;
		if (taps == 3) {
			DW_UNROLL
			for (int64_t k = 0; k < 3; k++)
				DW_NAME(copied_fma)(src, (int)i, k, filter, blocks, 3, rows, pair, shift, step, dilation, phase, acc);
		} else if (taps == 5) {
			DW_UNROLL
			for (int64_t k = 0; k < 5; k++)
				DW_NAME(copied_fma)(src, (int)i, k, filter, blocks, 5, rows, pair, shift, step, dilation, phase, acc);
		} else if (taps == 7) {
			DW_UNROLL
			for (int64_t k = 0; k < 7; k++)
				DW_NAME(copied_fma)(src, (int)i, k, filter, blocks, 7, rows, pair, shift, step, dilation, phase, acc);
		} else {
			for (int64_t k = 0; k < taps; k++)
				DW_NAME(copied_fma)(src, (int)i, k, filter, blocks, taps, rows, pair, shift, step, dilation, phase,
				                    acc);
		}
	}
	DW_VEC first[2], second[2];
	DW_UNROLL
	for (int b = 0; b < blocks; b++) {
		first[b] = acc[b][0];
		second[b] = acc[b][1];
	}
	DW_NAME(store_blocks)(out0 + ow, first, blocks, keep);
	if (pair)
		DW_NAME(store_blocks)(out1 + ow, second, blocks, keep);
}

/* Output row oh (and oh + 1 with `pair`) from a padded copy, in vectors:
 * the last one overlaps the one before it. */
DW_FN void
DW_NAME(dw_copied_row)(const dw_args *c, const float *slot, const float *filter, int64_t oh, float bias,
                       bool pair, int64_t taps, int64_t step, int64_t dilation, float *out0)
{
	int64_t width = c->g.out[2], ow = 0;
	float *out1 = out0 + width;
#define DW_COPIED_BLOCK(at, blocks, keep)                                                                  \
	DW_NAME(dw_copied_block)(c, slot, filter, oh, at, bias, blocks, pair, keep, taps, step, dilation, out0, out1)
	if (width < L) {
		DW_COPIED_BLOCK(0, 1, width);
		return;
	}
	for (; ow + 2 * L <= width; ow += 2 * L)
		DW_COPIED_BLOCK(ow, 2, L);
	for (; ow < width; ow += L)
		DW_COPIED_BLOCK(ow < width - L ? ow : width - L, 1, L);
#undef DW_COPIED_BLOCK
}

/* One output plane from a padded copy of its input plane (dw_args); c is
 * dw_args with the copy's geometry. */
DW_FN void
DW_NAME(dw_plane_copied)(const dw_args *c, const float *slot, const float *filter, float bias, float *plane)
{
	const k_geometry *g = &c->g;
	int64_t taps = g->kernel[2], step = g->stride[2], dilation = g->dilation[2];
	bool pairs = g->stride[1] <= 2 && g->dilation[1] == 1;
	for (int64_t oh = 0; oh < g->out[1]; oh++) {
		float *out = plane + oh * g->out[2];
		bool pair = pairs && oh + 1 < g->out[1];
		/* The common sizes with constants, so that their loops unroll. */
#define DW_COPIED_ROW(taps_, step_) DW_NAME(dw_copied_row)(c, slot, filter, oh, bias, pair, taps_, step_, dilation, out)
		if (taps == 3 && step == 1)
			DW_COPIED_ROW(3, 1);
		else if (taps == 3 && step == 2)
			DW_COPIED_ROW(3, 2);
		else if (taps == 5 && step == 1)
			DW_COPIED_ROW(5, 1);
		else if (taps == 5 && step == 2)
			DW_COPIED_ROW(5, 2);
		else if (taps == 7 && step == 1)
			DW_COPIED_ROW(7, 1);
		else if (taps == 7 && step == 2)
			DW_COPIED_ROW(7, 2);
		else if (step == 1)
			DW_COPIED_ROW(taps, 1);
		else
			DW_COPIED_ROW(taps, 2);
#undef DW_COPIED_ROW
		oh += pair ? 1 : 0;
	}
}

/* Copies a plane for the narrow loops (dw_args): each copied row in whole
 * vectors from its start (the part past the row is written again with the
 * next; past the last row it is zeros), the rows of padding as zeros. */
DW_FN void
DW_NAME(dw_fill_narrow)(const dw_args *a, const float *in, float *slot)
{
	const k_geometry *g = &a->g;
	int64_t cols = a->copy.in[2], left = g->pad[2], width = g->in[2];
	DW_VEC zero = DW_NAME(splat)(0.0f);
	for (int64_t j = 0; j < a->copy.in[1]; j++) {
		int64_t ih = j - g->pad[1];
		float *dst = slot + j * cols;
		for (int64_t col = 0; col < cols; col += L) {
			if (ih < 0 || ih >= g->in[1])
				DW_NAME(store)(dst + col, zero);
			else
				DW_NAME(store)(dst + col, DW_NAME(load_inside)(in + ih * width, col - left, width));
		}
	}
}

/* An output plane by the narrow loops (dw_args), from its copy in slot: a
 * stretch of whole rows at a time in vectors into a buffer, then each row
 * into the plane with one vector store, in order (the store's tail is
 * written again by the next row); the last rows go float by float. */
DW_FN void
DW_NAME(dw_plane_narrow)(const dw_args *c, const float *slot, const float *filter, float bias, float *plane)
{
	const k_geometry *g = &c->g;
	int64_t cols = c->copy.in[2], out_rows = g->out[1], out_cols = g->out[2];
	int64_t taps = g->kernel[1] * g->kernel[2];
	int64_t offset[DW_NARROW_TAPS];
	for (int64_t kh = 0, t = 0; kh < g->kernel[1]; kh++) {
		for (int64_t kw = 0; kw < g->kernel[2]; kw++, t++)
			offset[t] = kh * g->dilation[1] * cols + kw * g->dilation[2];
	}
	enum { CHUNK = 32 * L };
	float buffer[CHUNK + 4 * L];
	int64_t rows_at_once = CHUNK / cols > 0 ? CHUNK / cols : 1;
	for (int64_t r0 = 0; r0 < out_rows; r0 += rows_at_once) {
		int64_t r1 = r0 + rows_at_once < out_rows ? r0 + rows_at_once : out_rows;
		/* Up to a whole vector from the last row's start: what is read back. */
		int64_t q0 = r0 * cols, q1 = (r1 - 1) * cols + (out_cols > L ? out_cols : L);
		for (int64_t q = q0; q < q1; q += 2 * L) {
			/* Two vectors at a time: two chains of multiply-adds. */
			DW_VEC acc0 = DW_NAME(splat)(bias), acc1 = acc0;
			const float *src = slot + q;
			for (int64_t t = 0; t < taps; t++) {
				DW_VEC w = DW_NAME(splat)(filter[t]);
				acc0 = DW_FMA(w, DW_NAME(load)(src + offset[t]), acc0);
				acc1 = DW_FMA(w, DW_NAME(load)(src + offset[t] + L), acc1);
			}
			DW_NAME(store)(buffer + (q - q0), acc0);
			DW_NAME(store)(buffer + (q - q0) + L, acc1);
		}
		for (int64_t oh = r0; oh < r1; oh++) {
			const float *row = buffer + (oh - r0) * cols;
			float *out = plane + oh * out_cols;
			if (out_cols <= L && (oh * out_cols + L <= out_rows * out_cols))
				DW_NAME(store)(out, DW_NAME(load)(row));
			else
				memcpy(out, row, (size_t)out_cols * sizeof *out);
		}
	}
}

/* Chunk c of the planes with scratch slot c: each input plane is copied
 * once, then every output plane that reads it is computed. */
static DW_TARGET void
DW_NAME(dw_chunks)(void *arg, int64_t c0, int64_t c1)
{
	const dw_args *a = arg;
	const k_geometry *g = &a->g;
	dw_args copied = *a;
	copied.g = a->copy;
	copied.lo = 0;
	copied.hi = g->out[2];
	int64_t planes = g->batch * g->out_channels;
	for (int64_t c = c0; c < c1; c++) {
		float *slot = a->scratch + (size_t)c * a->slot_floats;
		const float *filled = NULL;
		/* What the narrow loops read past the copy: zeros, which the fills
		 * leave as they are. */
		if (a->narrow)
			memset(slot + a->copy.in_size, 0, DW_NARROW_SLACK * sizeof *slot);
		for (int64_t t = c * planes / a->chunks; t < (c + 1) * planes / a->chunks; t++) {
			int64_t n = t / g->out_channels, oc = t % g->out_channels;
			const float *in = a->x + (n * g->in_channels + oc / g->out_per_group) * g->in_size;
			if (in != filled) {
				if (a->narrow)
					DW_NAME(dw_fill_narrow)(a, in, slot);
				else
					DW_NAME(dw_fill)(a, in, slot);
				filled = in;
			}
			const float *filter = a->weights + oc * g->kernel_size;
			float bias = a->bias ? a->bias[oc] : 0.0f, *plane = a->y + t * g->out_size;
			if (a->narrow)
				DW_NAME(dw_plane_narrow)(&copied, slot, filter, bias, plane);
			else
				DW_NAME(dw_plane_copied)(&copied, slot, filter, bias, plane);
			k_post_planes(a->post, a->y, g->out_size, t, t + 1);
		}
	}
}

/* Planes [t0, t1) of the batch: t = n x out_channels + oc. */
static DW_TARGET void
DW_NAME(dw_planes)(void *arg, int64_t t0, int64_t t1)
{
	const dw_args *a = arg;
	const k_geometry *g = &a->g;
	for (int64_t t = t0; t < t1; t++) {
		int64_t n = t / g->out_channels, oc = t % g->out_channels;
		int64_t group = oc / g->out_per_group;
		DW_NAME(dw_plane)(a, a->x + (n * g->in_channels + group) * g->in_size, a->weights + oc * g->kernel_size,
		                  a->bias ? a->bias[oc] : 0.0f, a->y + t * g->out_size);
		k_post_planes(a->post, a->y, g->out_size, t, t + 1);
	}
}

/* ---- few input channels, many outputs: the first layer of a network ---- */

/*
 * `outs` output channels from oc0 times `blocks` vectors of outputs from
 * column ow of band row `row`: block b's vector lies in_bstride floats of
 * the band and out_bstride floats of out after block 0's (L and L for
 * consecutive outputs of one row; the next output row's for the ends of
 * rows, computed together). Each input vector loaded is multiplied by the
 * weight of every output channel. With `partial` (1 to L - 1), only that
 * many outputs of each block are stored.
 */
DW_FN void
DW_NAME(few_block)(const few_plan *p, const float *band, const float *weights, const float *bias,
                   int64_t oc0, int outs, int blocks, int64_t row, int64_t ow, int64_t in_bstride,
                   int64_t out_bstride, int64_t partial, float *out)
{
	const k_geometry *g = &p->g;
	int64_t filter = g->in_per_group * g->kernel_size;
	DW_VEC acc[DW_FEW_OUTPUTS][DW_FEW_BLOCKS];
	DW_UNROLL
	for (int o = 0; o < outs; o++) {
		DW_UNROLL
		for (int b = 0; b < blocks; b++)
			acc[o][b] = DW_NAME(splat)(bias ? bias[oc0 + o] : 0.0f);
	}
	/* Taps in the filters' order (input channel, row, column): the band's
	 * offsets of each tap's first input (few_offsets) beside its weights. */
	const float *w0 = weights + oc0 * filter;
	const int32_t *offs = (const int32_t *)(band + p->band_floats);
	const float *base = band + row * g->stride[1] * p->row_floats + ow;
	for (int64_t t = 0; t < p->taps; t++) {
		const float *at = base + offs[t];
		DW_VEC x[DW_FEW_BLOCKS];
		DW_UNROLL
		for (int b = 0; b < blocks; b++)
			x[b] = DW_NAME(load)(at + b * in_bstride);
		DW_UNROLL
		for (int o = 0; o < outs; o++) {
			DW_VEC w = DW_NAME(splat)(w0[o * filter + t]);
			DW_UNROLL
			for (int b = 0; b < blocks; b++)
				acc[o][b] = DW_FMA(w, x[b], acc[o][b]);
		}
	}
	DW_UNROLL
	for (int o = 0; o < outs; o++) {
		float *dst = out + (oc0 + o) * p->out_plane + ow;
		DW_UNROLL
		for (int b = 0; b < blocks; b++) {
			if (partial) {
				float lanes[L];
				DW_NAME(store)(lanes, acc[o][b]);
				memcpy(dst + b * out_bstride, lanes, (size_t)partial * sizeof *dst);
			} else {
				DW_NAME(store)(dst + b * out_bstride, acc[o][b]);
			}
		}
	}
}

/* Copies the input rows of output rows [oh0, oh1) of one sample (in: its
 * first channel) into band, padded with zeros around them; at stride 2 the
 * even padded columns first, then the odd ones. */
DW_FN void
DW_NAME(few_fill)(const few_plan *p, const float *in, int64_t oh0, int64_t oh1, float *band)
{
	const k_geometry *g = &p->g;
	int64_t rows = few_band_rows(g, oh1 - oh0), left = g->pad[2], width = g->in[2];
	for (int64_t c = 0; c < g->in_channels; c++) {
		for (int64_t j = 0; j < rows; j++) {
			float *dst = band + (c * p->band_rows + j) * p->row_floats;
			int64_t ih = oh0 * g->stride[1] - g->pad[1] + j;
			if (ih < 0 || ih >= g->in[1]) {
				memset(dst, 0, (size_t)p->row_floats * sizeof *dst);
				continue;
			}
			DW_NAME(padded_row)(in + (c * g->in[1] + ih) * width, width, left, p->row_floats, p->phase, dst);
		}
	}
}

/* The columns of output row oh of channels [oc0, oc0 + outs) that whole
 * tiles of two or more vectors cover; returns where they end. */
DW_FN int64_t
DW_NAME(few_row)(const few_plan *p, const float *band, const float *weights, const float *bias, int64_t oc0,
                 int outs, int64_t oh, int64_t oh0, float *out)
{
	int64_t width = p->g.out[2], ow = 0;
	float *row = out + (oh - p->out_row0) * width;
#if DW_FEW_BLOCKS >= 3
	for (; ow + 3 * L <= width; ow += 3 * L)
		DW_NAME(few_block)(p, band, weights, bias, oc0, outs, 3, oh - oh0, ow, L, L, 0, row);
#endif
	for (; ow + 2 * L <= width; ow += 2 * L)
		DW_NAME(few_block)(p, band, weights, bias, oc0, outs, 2, oh - oh0, ow, L, L, 0, row);
	return ow;
}

/* The rest of rows [oh, oh + rows) from column ow on (the same for each),
 * a vector at a time, the rows' vectors in one tile: a row's single last
 * vector would otherwise be a tile of `outs` sums alone, too few to keep
 * the FMA units busy. */
DW_FN void
DW_NAME(few_ends)(const few_plan *p, const float *band, const float *weights, const float *bias, int64_t oc0,
                  int outs, int64_t oh, int rows, int64_t oh0, int64_t ow, float *out)
{
	const k_geometry *g = &p->g;
	int64_t width = g->out[2], in_bstride = g->stride[1] * p->row_floats;
	float *row = out + (oh - p->out_row0) * width;
	for (; ow < width; ow += L) {
		int64_t partial = width - ow < L ? width - ow : 0;
#if DW_FEW_BLOCKS >= 3
		if (rows == 3) {
			DW_NAME(few_block)(p, band, weights, bias, oc0, outs, 3, oh - oh0, ow, in_bstride, width,
			                   partial, row);
			continue;
		}
#endif
		if (rows == 2)
			DW_NAME(few_block)(p, band, weights, bias, oc0, outs, 2, oh - oh0, ow, in_bstride, width,
			                   partial, row);
		else
			DW_NAME(few_block)(p, band, weights, bias, oc0, outs, 1, oh - oh0, ow, in_bstride, width,
			                   partial, row);
	}
}

/* Output rows [oh0, oh1) of channels [oc0, oc0 + outs), DW_FEW_BLOCKS rows
 * at a time: each row's whole tiles, then the rows' ends together. */
DW_FN void
DW_NAME(few_channels)(const few_plan *p, const float *band, const float *weights, const float *bias,
                      int64_t oc0, int outs, int64_t oh0, int64_t oh1, float *out)
{
	for (int64_t oh = oh0; oh < oh1; oh += DW_FEW_BLOCKS) {
		int rows = (int)(oh1 - oh < DW_FEW_BLOCKS ? oh1 - oh : DW_FEW_BLOCKS);
		int64_t ow = 0;
		for (int r = 0; r < rows; r++)
			ow = DW_NAME(few_row)(p, band, weights, bias, oc0, outs, oh + r, oh0, out);
		DW_NAME(few_ends)(p, band, weights, bias, oc0, outs, oh, rows, oh0, ow, out);
	}
}

/* Output rows [oh0, oh1) of every output channel of one sample, from the
 * padded band that holds their input rows: DW_FEW_OUTPUTS channels at a
 * time, then 4, then one by one. */
DW_FN void
DW_NAME(few_rows)(const few_plan *p, const float *band, const float *weights, const float *bias,
                  int64_t oh0, int64_t oh1, float *out)
{
	int64_t channels = p->g.out_channels;
	for (int64_t oc0 = 0; oc0 < channels;) {
		int64_t left = channels - oc0;
		int outs = left >= DW_FEW_OUTPUTS ? DW_FEW_OUTPUTS : left >= 4 ? 4 : 1;
		if (outs == DW_FEW_OUTPUTS)
			DW_NAME(few_channels)(p, band, weights, bias, oc0, DW_FEW_OUTPUTS, oh0, oh1, out);
		else if (outs == 4)
			DW_NAME(few_channels)(p, band, weights, bias, oc0, 4, oh0, oh1, out);
		else
			DW_NAME(few_channels)(p, band, weights, bias, oc0, 1, oh0, oh1, out);
		oc0 += outs;
	}
}

/* Output rows [oh0, oh1) (at most p->band of them) of every channel of
 * one sample (in: its first input channel) into out, by way of the padded
 * input rows copied into band. */
static DW_TARGET void
DW_NAME(few_compute)(const few_plan *p, const float *in, const float *weights, const float *bias, int64_t oh0,
                     int64_t oh1, float *band, float *out)
{
	DW_NAME(few_fill)(p, in, oh0, oh1, band);
	few_offsets(p, (int32_t *)(band + p->band_floats));
	DW_NAME(few_rows)(p, band, weights, bias, oh0, oh1, out);
}

/* Chunks [c0, c1) of the tasks (sample, band of output rows), chunk c with
 * scratch slot c. */
static DW_TARGET void
DW_NAME(few_chunks)(void *arg, int64_t c0, int64_t c1)
{
	const few_args *a = arg;
	const few_plan *p = a->p;
	const k_geometry *g = &p->g;
	for (int64_t c = c0; c < c1; c++) {
		float *band = a->scratch + (size_t)c * p->slot_floats;
		int64_t t0 = c * p->tasks / a->chunks, t1 = (c + 1) * p->tasks / a->chunks;
		for (int64_t t = t0; t < t1; t++) {
			int64_t n = t / p->bands, oh0 = t % p->bands * p->band;
			int64_t oh1 = oh0 + p->band < g->out[1] ? oh0 + p->band : g->out[1];
			float *out = a->y + n * g->out_channels * g->out_size;
			DW_NAME(few_compute)(p, a->x + n * g->in_channels * g->in_size, a->weights, a->bias, oh0, oh1, band,
			                     out);
			/* Rows [oh0, oh1) of every channel: a flat window has depth 1. */
			k_post_block(a->post, out, g->out_size, 0, g->out_channels, oh0 * g->out[2], oh1 * g->out[2]);
		}
	}
}

#include "k-dwconv-lanes.h"

#undef DW_EVENS
#undef DW_NEXT1
#undef DW_ODDS
#undef DW_EVENS_ODDS
#undef DW_NEXT_LAST
#undef DW_NEXT2
#undef L
#undef DW_UNROLL
#undef DW_NO_UNROLL
#undef DW_FN
#undef DW_VEC
