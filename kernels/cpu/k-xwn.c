/* The XWN weight transform and pruning (k-xwn.h). The arithmetic follows
 * the reference step for step so that results agree bit for bit: float32
 * throughout, sums in index order, divisions last. */
#include "config.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "k-nn.h"
#include "k-xwn.h"

/*
 * How a weight finds its level, fast and exactly.
 *
 * The levels of a slice are c[k] = (max_scale * 2^-k) * mag for k in [0, n),
 * each rounded once as the reference rounds it. They fall with k, so the
 * distances |aw - c[k]| to a magnitude aw = |w| fall while c[k] > aw and
 * rise from the first level j at or below it: the first nearest level, the
 * one a scan with a strict < finds (ties go to the larger level), is j-1 or
 * j. When every max_scale * 2^-k is a normal number and so are both ends of
 * the slice's levels, n-1 binades apart with one significand, each level is
 * exactly c[0] * 2^-k: the levels are "exact" and are made from c[0]'s
 * exponent and significand. Then c[k] <= aw exactly when c[k]'s exponent is
 * below aw's, or equal with a significand no larger, so j needs no search,
 * and since each level is twice the next the distances before j-1 fall
 * strictly, so no earlier level can tie with j-1. Zero and subnormal
 * magnitudes fall out right (their exponent 0 is below every level); inf
 * and NaN take level 0, as every distance is then inf or NaN and none is
 * smaller than the first. Slices whose levels are not exact (a zero,
 * subnormal or huge magnitude, many levels) keep the levels in a table and
 * search it.
 */

/* One slice's levels: all n in c when not exact; c[0] always. */
typedef struct slice_levels {
	float c[K_XWN_MAX_LEVELS];
	int n;
	bool exact;
	int32_t top_exponent;      /* c[0]'s biased exponent */
	uint32_t significand;      /* c[0]'s significand bits */
} slice_levels;

static uint32_t
float_bits(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	return u;
}

static float
bits_float(uint32_t u)
{
	float f;
	memcpy(&f, &u, sizeof f);
	return f;
}

/* Whether levels with these ends are exact (see above); scales_exact says
 * that every max_scale * 2^-k is normal. exact_block tests the same lane by
 * lane. */
static bool
ends_exact(bool scales_exact, uint32_t top, uint32_t bottom, int n)
{
	int32_t top_exponent = (int32_t)(top >> 23 & 0xff), bottom_exponent = (int32_t)(bottom >> 23 & 0xff);
	return scales_exact && top_exponent != 0xff && bottom_exponent != 0 && (top & 0x80000000u) == 0 &&
	       bottom_exponent == top_exponent - (n - 1) && (bottom & 0x7fffff) == (top & 0x7fffff);
}

static void
levels_of(slice_levels *L, const float *scale, bool scales_exact, int n, float mag)
{
	L->n = n;
	L->c[0] = scale[0] * mag;
	uint32_t top = float_bits(L->c[0]);
	L->top_exponent = (int32_t)(top >> 23 & 0xff);
	L->significand = top & 0x7fffff;
	L->exact = ends_exact(scales_exact, top, float_bits(scale[n - 1] * mag), n);
	if (!L->exact) {
		for (int k = 1; k < n; k++)
			L->c[k] = scale[k] * mag;
	}
}

/* Level k of exact levels: c[0]'s significand, its exponent minus k. */
static uint32_t
exact_level_bits(const slice_levels *L, int32_t k)
{
	return (uint32_t)(L->top_exponent - k) << 23 | L->significand;
}

/* The level of magnitude bits abs_bits among exact levels. */
static int32_t
exact_level_of(const slice_levels *L, uint32_t abs_bits)
{
	int32_t exponent = (int32_t)(abs_bits >> 23), n = L->n;
	int32_t j = L->top_exponent - exponent + (L->significand > (abs_bits & 0x7fffff));
	j = j < 0 ? 0 : j > n ? n : j;
	j = exponent == 0xff ? 0 : j;
	int32_t lo = j > 0 ? j - 1 : 0, hi = j < n ? j : n - 1;
	float aw = bits_float(abs_bits);
	float d_lo = fabsf(aw - bits_float(exact_level_bits(L, lo)));
	float d_hi = fabsf(aw - bits_float(exact_level_bits(L, hi)));
	return d_hi < d_lo ? hi : lo;
}

/* The level of aw among stored levels that fall with k (NaN levels, from
 * inf * 0, only at the end): j by bisection, then j-1 or j, and the first
 * of any equal distances before j-1 (levels that rounded alike). */
static int
level_of(const slice_levels *L, float aw)
{
	int lo = 0, hi = L->n;
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (L->c[mid] > aw)
			lo = mid + 1;
		else
			hi = mid;
	}
	int n = L->n, j = lo;
	if (j == 0)
		return 0;
	float below = fabsf(aw - L->c[j - 1]);
	if (j < n && fabsf(aw - L->c[j]) < below)
		return j;
	int k = j - 1;
	while (k > 0 && fabsf(aw - L->c[k - 1]) == below)
		k--;
	return k;
}

/* A plain scan from the largest level, stopping at the first distance
 * larger than the best: for levels that need not fall with k (a negative
 * or non-finite max_scale, outside the parameter's range). */
static int
level_scan(const slice_levels *L, float aw)
{
	float best_d = INFINITY;
	int best = 0;
	for (int k = 0; k < L->n; k++) {
		float d = fabsf(aw - L->c[k]);
		if (d < best_d) {
			best_d = d;
			best = k;
		} else if (d > best_d) {
			break;
		}
	}
	return best;
}

/* What a transform of bit >= 2 needs to know, shared by its parts. */
typedef struct level_set {
	int n;                              /* levels */
	float scale[K_XWN_MAX_LEVELS];      /* max_scale * 2^-k */
	bool ordered;                       /* the levels fall with k: 0 <= max_scale <= FLT_MAX */
	bool scales_exact;                  /* and every scale is normal */
	int64_t *counts;                    /* weights of kept slices per level, or NULL */
} level_set;

/* The transformed weights of one slice of taps weights t into y, without
 * exact_block: its value is sign * level * (1 or 0 when pruned), as in the
 * reference, the sign exact. */
static void
slice_general(const level_set *S, const float *t, float *y, int64_t taps, float mag, bool kept)
{
	slice_levels L;
	levels_of(&L, S->scale, S->scales_exact, S->n, mag);
	float scale = kept ? 1.0f : 0.0f;
	for (int64_t k = 0; k < taps; k++) {
		float v = t[k], sign = v >= 0.0f ? 1.0f : -1.0f;
		float aw = fabsf(v);
		int level = L.exact ? exact_level_of(&L, float_bits(aw)) : S->ordered ? level_of(&L, aw)
		                                                                      : level_scan(&L, aw);
		float c = L.exact ? bits_float(exact_level_bits(&L, level)) : L.c[level];
		y[k] = sign * c * scale;
		if (S->counts != NULL && kept)
			S->counts[level]++;
	}
}

/* Eight int32 lanes, beside k_v8. */
typedef int32_t k_i8 __attribute__((vector_size(32)));
typedef uint32_t k_u8 __attribute__((vector_size(32)));
#define K_I8_SPLAT(x) ((k_i8){ (x), (x), (x), (x), (x), (x), (x), (x) })
#define K_U8_SPLAT(x) ((k_u8){ (x), (x), (x), (x), (x), (x), (x), (x) })

/* Most levels exact_block counts in vector lanes; beyond, lane by lane.
 * The lanes count in 4-bit fields, levels 0-7 in one int32 per lane and
 * 8-15 in another (a shift, two masks and two adds per eight weights),
 * emptied every FIELD_ROUNDS vectors before a field can overflow. */
#define LANE_COUNTED_LEVELS 16
#define FIELD_ROUNDS 15

/*
 * The transform of count weights w (a multiple of 8) with exact levels,
 * eight at a time: mag and keep hold each weight's slice magnitude and
 * keep mask (-1 kept, 0 pruned). The same steps as exact_level_of, lane by
 * lane; the value is the level with the weight's sign bit (set where w < 0
 * or is NaN, as sign * level), only the sign in a pruned slice (the level
 * is finite, so times 0 leaves the sign). A lane whose levels are not exact
 * is left as it was (y = w) for the caller to redo; returns whether any is.
 * Counts kept weights per level into S->counts.
 */
K_SIMD_CLONES static bool
exact_block(const level_set *S, const float *w, float *y, const float *mag, const int32_t *keep,
            int64_t count)
{
	int n = S->n;
	const k_v8 top_scale = K_V8_SPLAT(S->scale[0]), last_scale = K_V8_SPLAT(S->scale[n - 1]);
	const k_u8 exponent_mask = K_U8_SPLAT(0xffu), significand_mask = K_U8_SPLAT(0x7fffffu),
	           abs_mask = K_U8_SPLAT(0x7fffffffu), sign_bit = K_U8_SPLAT(0x80000000u);
	const k_i8 zero = K_I8_SPLAT(0), levels = K_I8_SPLAT(n), last = K_I8_SPLAT(n - 1),
	           no_exponent = K_I8_SPLAT(0xff), one = K_I8_SPLAT(1);
	k_i8 inexact = zero;
	k_i8 lane_counts[LANE_COUNTED_LEVELS];
	for (int k = 0; k < LANE_COUNTED_LEVELS; k++)
		lane_counts[k] = zero;
	bool lanes_count = S->counts != NULL && n <= LANE_COUNTED_LEVELS;
	k_u8 low_fields = K_U8_SPLAT(0u), high_fields = K_U8_SPLAT(0u);
	int rounds = 0;
	for (int64_t i = 0; i < count; i += 8) {
		k_v8 v, m;
		k_i8 kept;
		K_V8_LOAD(v, w + i);
		K_V8_LOAD(m, mag + i);
		memcpy(&kept, keep + i, sizeof kept);
		k_v8 c0 = top_scale * m, cl = last_scale * m;
		k_u8 top_bits = (k_u8)c0, last_bits = (k_u8)cl;
		k_i8 top = (k_i8)(top_bits >> 23 & exponent_mask);
		k_i8 bottom = (k_i8)(last_bits >> 23 & exponent_mask);
		k_u8 significand = top_bits & significand_mask;
		/* The magnitude is not negative, so neither is c0 (NaN has
		 * exponent 0xff). */
		k_i8 exact = (top != no_exponent) & (bottom != zero) & (bottom == top - last) &
		             ((k_i8)(last_bits & significand_mask) == (k_i8)significand);
		k_u8 a = (k_u8)v & abs_mask;
		k_i8 exponent = (k_i8)(a >> 23);
		/* A true comparison is -1, so subtracting it adds one. */
		k_i8 j = top - exponent - ((k_i8)significand > (k_i8)(a & significand_mask));
		j &= ~(j < zero);
		k_i8 over = j > levels;
		j = (j & ~over) | (levels & over);
		j &= ~(exponent == no_exponent);
		k_i8 lo = j - one;
		lo &= ~(lo < zero);
		k_i8 hi_over = j > last;
		k_i8 hi = (j & ~hi_over) | (last & hi_over);
		k_v8 aw = (k_v8)a;
		k_v8 c_lo = (k_v8)((k_u8)(top - lo) << 23 | significand);
		k_v8 c_hi = (k_v8)((k_u8)(top - hi) << 23 | significand);
		k_v8 d_lo = (k_v8)((k_u8)(aw - c_lo) & abs_mask), d_hi = (k_v8)((k_u8)(aw - c_hi) & abs_mask);
		k_i8 take_hi = d_hi < d_lo;
		k_i8 level = (hi & take_hi) | (lo & ~take_hi);
		k_u8 negative = (k_u8)~(v >= K_V8_SPLAT(0.0f)) & sign_bit;
		k_u8 value = (((k_u8)(top - level) << 23 | significand) & (k_u8)kept) | negative;
		k_u8 out = (value & (k_u8)exact) | ((k_u8)v & ~(k_u8)exact);
		K_V8_STORE(y + i, out);
		inexact |= ~exact;
		if (lanes_count) {
			/* level means something in exact lanes only: 0 elsewhere
			 * keeps the shift in range. No comparison here: GCC 12 fails
			 * on some with target_clones over -march=native. */
			k_i8 counted = kept & exact, lane_level = level & exact, upper = lane_level >> 3;
			k_u8 field = K_U8_SPLAT(1u) << (k_u8)((lane_level & K_I8_SPLAT(7)) << 2);
			low_fields += field & (k_u8)(counted & (upper - one));
			high_fields += field & (k_u8)(counted & -upper);
			if (++rounds == FIELD_ROUNDS || i + 8 >= count) {
				for (int k = 0; k < n; k++) {
					k_u8 fields = k < 8 ? low_fields : high_fields;
					lane_counts[k] += (k_i8)(fields >> (k_u8)K_I8_SPLAT(4 * (k & 7)) & K_U8_SPLAT(0xfu));
				}
				low_fields = high_fields = K_U8_SPLAT(0u);
				rounds = 0;
			}
		} else if (S->counts != NULL) {
			for (int l = 0; l < 8; l++) {
				if (kept[l] & exact[l])
					S->counts[level[l]]++;
			}
		}
	}
	if (lanes_count) {
		for (int k = 0; k < n; k++) {
			for (int l = 0; l < 8; l++)
				S->counts[k] += lane_counts[k][l];
		}
	}
	int32_t any = 0;
	for (int l = 0; l < 8; l++)
		any |= inexact[l];
	return any != 0;
}

/* Weights per exact_block call, about: its lane counts stay far from
 * overflow, and the spread magnitudes and masks stay in the first-level
 * cache. */
#define BLOCK 1024

/* Slices per exact_block call: a multiple of 8, so that the block's
 * weights are too, whatever taps is. */
static int64_t
block_slices(int64_t taps)
{
	return taps <= BLOCK / 8 ? BLOCK / taps / 8 * 8 : 8;
}

/*
 * The transform of bit >= 2 for every slice: in blocks of whole slices
 * through exact_block when the scales allow it, the slice magnitudes and
 * keep masks spread per weight into spread_mag and spread_keep
 * (block_slices(taps) * taps each; a slice of one tap needs no spreading);
 * the slices of a block that exact_block left alone (levels not exact),
 * and the last slices short of 8, through slice_general.
 */
static void
transform_slices(const level_set *S, const float *w, float *out, int64_t slices, int64_t taps,
                 const float *mag, const int32_t *keep, float *spread_mag, int32_t *spread_keep)
{
	int64_t j = 0, group = block_slices(taps);
	while (S->scales_exact && j + 8 <= slices) {
		int64_t count = slices - j < group ? (slices - j) / 8 * 8 : group;
		const float *block_mag = mag + j;
		const int32_t *block_keep = keep + j;
		if (taps > 1) {
			for (int64_t s = 0; s < count; s++) {
				for (int64_t k = 0; k < taps; k++) {
					spread_mag[s * taps + k] = mag[j + s];
					spread_keep[s * taps + k] = keep[j + s];
				}
			}
			block_mag = spread_mag;
			block_keep = spread_keep;
		}
		if (exact_block(S, w + j * taps, out + j * taps, block_mag, block_keep, count * taps)) {
			/* Their weights are as they were, even where out is w. */
			for (int64_t s = j; s < j + count; s++) {
				slice_levels L;
				levels_of(&L, S->scale, S->scales_exact, S->n, mag[s]);
				if (!L.exact)
					slice_general(S, w + s * taps, out + s * taps, taps, mag[s], keep[s]);
			}
		}
		j += count;
	}
	for (; j < slices; j++)
		slice_general(S, w + j * taps, out + j * taps, taps, mag[j], keep[j]);
}

/*
 * Each slice's mean magnitude: a sequential float32 sum of its taps' |w| in
 * order, then the division, eight slices at a time (one slice per lane, so
 * each lane's sum keeps the reference's order).
 */
K_SIMD_CLONES static void
magnitudes(const float *w, int64_t slices, int64_t taps, float *mag)
{
	const k_u8 abs_mask = K_U8_SPLAT(0x7fffffffu);
	const k_v8 divisor = K_V8_SPLAT((float)taps);
	int64_t j = 0;
	for (; j + 8 <= slices; j += 8) {
		k_v8 sum = K_V8_SPLAT(0.0f);
		for (int64_t k = 0; k < taps; k++) {
			k_v8 x;
			if (taps == 1) {
				K_V8_LOAD(x, w + j);
			} else {
				const float *t = w + j * taps + k;
				x = (k_v8){ t[0], t[taps], t[2 * taps], t[3 * taps], t[4 * taps], t[5 * taps], t[6 * taps],
				            t[7 * taps] };
			}
			sum += (k_v8)((k_u8)x & abs_mask);
		}
		k_v8 m = sum / divisor;
		K_V8_STORE(mag + j, m);
	}
	for (; j < slices; j++) {
		const float *t = w + j * taps;
		float sum = 0.0f;
		for (int64_t k = 0; k < taps; k++)
			sum += fabsf(t[k]);
		mag[j] = sum / (float)taps;
	}
}

/*
 * Pruning of a rows x cols block of slice magnitudes, slice (r, c) at
 * r * cols + c: a convolution's output channels by its inputs, or a
 * transposed one's inputs by its outputs (then transposed). The edge of an
 * output is prun_weight times the mean of its slices' magnitudes over the
 * inputs (a sequential sum in input order, then the division, then the
 * product), eight outputs at a time, one per lane, so that each sum keeps
 * its order; a slice below its output's edge (strictly) is pruned: its
 * keep mask becomes 0 (-1 is kept). edge has room for every output.
 * Returns the number of slices pruned.
 */
K_SIMD_CLONES static int64_t
prune(const float *mag, int64_t rows, int64_t cols, bool transposed, float prun_weight, float *edge,
      int32_t *keep)
{
	int64_t outs = transposed ? cols : rows, ins = transposed ? rows : cols;
	/* Steps between consecutive inputs of one output, and between outputs. */
	int64_t in_step = transposed ? cols : 1, out_step = transposed ? 1 : cols;
	const k_v8 count = K_V8_SPLAT((float)ins), weight = K_V8_SPLAT(prun_weight);
	int64_t o = 0;
	for (; o + 8 <= outs; o += 8) {
		k_v8 sum = K_V8_SPLAT(0.0f);
		for (int64_t i = 0; i < ins; i++) {
			const float *m = mag + i * in_step + o * out_step;
			k_v8 x;
			if (transposed) {
				K_V8_LOAD(x, m);
			} else {
				x = (k_v8){ m[0], m[cols], m[2 * cols], m[3 * cols], m[4 * cols], m[5 * cols], m[6 * cols],
				            m[7 * cols] };
			}
			sum += x;
		}
		k_v8 e = sum / count * weight;
		K_V8_STORE(edge + o, e);
	}
	for (; o < outs; o++) {
		float sum = 0.0f;
		for (int64_t i = 0; i < ins; i++)
			sum += mag[i * in_step + o * out_step];
		edge[o] = sum / (float)ins * prun_weight;
	}
	int64_t pruned = 0;
	k_i8 lanes_pruned = K_I8_SPLAT(0);
	for (int64_t r = 0; r < rows; r++) {
		const float *m = mag + r * cols;
		int32_t *k = keep + r * cols;
		int64_t c = 0;
		for (; c + 8 <= cols; c += 8) {
			k_v8 x, e;
			if (transposed)
				K_V8_LOAD(e, edge + c);
			else
				e = K_V8_SPLAT(edge[r]);
			K_V8_LOAD(x, m + c);
			k_i8 below = x < e, kept = ~below;
			memcpy(k + c, &kept, sizeof kept);
			lanes_pruned -= below;
		}
		for (; c < cols; c++) {
			bool below = m[c] < edge[transposed ? c : r];
			k[c] = below ? 0 : -1;
			pruned += below;
		}
	}
	for (int l = 0; l < 8; l++)
		pruned += lanes_pruned[l];
	return pruned;
}

/* Slices per part of a convolution's weights (whole output channels),
 * about: the magnitudes and keep flags of a part stay in the caches and in
 * one small allocation, and its weights are still cached when they are
 * transformed. */
#define PART_SLICES 8192

int
k_xwn_apply(const float *w, float *out, int64_t a, int64_t b, int64_t taps, bool transposed,
            const k_xwn_settings *s, k_xwn_stats *stats)
{
	if (s->bit > K_XWN_MAX_BIT || a < 0 || b < 0 || taps < 0)
		return -1;
	int64_t slices = a * b;
	bool transform = s->transform && s->bit >= 1;
	int levels = !transform ? 0 : s->bit == 1 ? 1 : 1 << (s->bit - 1);
	if (stats != NULL) {
		memset(stats, 0, sizeof *stats);
		stats->slices = slices;
		stats->weights = slices * taps;
		stats->levels = levels;
	}
	if (slices == 0 || taps == 0)
		return 0;
	/* A convolution goes in parts of whole output channels (rows of b
	 * slices), as pruning needs only the output channel's own slices, at
	 * least 8 of them for prune's lanes; a transposed one at once, as each
	 * output's slices span every row. */
	int64_t part_rows = transposed ? a : (PART_SLICES / b + 7) / 8 * 8;
	if (part_rows < 8)
		part_rows = 8;
	if (part_rows > a)
		part_rows = a;
	size_t part = (size_t)(part_rows * b);
	float *mag = malloc(sizeof *mag * part);
	int32_t *keep = malloc(sizeof *keep * part);
	float *edge = malloc(sizeof *edge * (size_t)(transposed ? b : part_rows));
	/* exact_block's spread inputs, for a transform of bit >= 2. */
	size_t room = levels >= 2 ? (size_t)(block_slices(taps) * taps) : 1;
	float *spread_mag = malloc(sizeof *spread_mag * room);
	int32_t *spread_keep = malloc(sizeof *spread_keep * room);
	int rc = mag == NULL || keep == NULL || edge == NULL || spread_mag == NULL || spread_keep == NULL ? -1 : 0;
	level_set S = { .n = levels, .counts = stats != NULL ? stats->level_count : NULL };
	if (levels >= 2) {
		/* max_scale * 2^-k once; a level is this times the slice's mag,
		 * rounded once, as the reference's (max_scale * 2^-k) * mag. */
		for (int k = 0; k < levels; k++)
			S.scale[k] = s->max_scale * ldexpf(1.0f, -k);
		S.ordered = s->max_scale >= 0.0f && s->max_scale <= FLT_MAX;
		S.scales_exact = S.ordered && isnormal(S.scale[levels - 1]);
	}
	for (int64_t row = 0; rc == 0 && row < a; row += part_rows) {
		int64_t rows = a - row < part_rows ? a - row : part_rows, n = rows * b;
		const float *pw = w + row * b * taps;
		float *py = out + row * b * taps;
		/* Each slice's mean magnitude, from the weights as given (out,
		 * when it is w, has not been written here yet). */
		magnitudes(pw, n, taps, mag);
		memset(keep, 0xff, sizeof *keep * (size_t)n); /* -1: kept */
		if (s->pruning) {
			int64_t pruned = prune(mag, rows, b, transposed, s->prun_weight, edge, keep);
			if (stats != NULL)
				stats->pruned += pruned;
		}
		if (levels >= 2) {
			transform_slices(&S, pw, py, n, taps, mag, keep, spread_mag, spread_keep);
			continue;
		}
		for (int64_t j = 0; j < n; j++) {
			const float *t = pw + j * taps;
			float *y = py + j * taps, m = mag[j];
			/* A pruned slice is the transformed one times 0, as in the
			 * reference: negative weights give -0. */
			float scale = keep[j] ? 1.0f : 0.0f;
			for (int64_t k = 0; k < taps; k++) {
				float v = t[k], sign = v >= 0.0f ? 1.0f : -1.0f;
				y[k] = (transform ? sign * m : v) * scale;
			}
			if (transform && stats != NULL && keep[j])
				stats->level_count[0] += taps;
		}
	}
	free(mag);
	free(keep);
	free(edge);
	free(spread_mag);
	free(spread_keep);
	return rc;
}

/* ---- the reference ---- */

int
k_xwn_apply_ref(const float *w, float *out, int64_t a, int64_t b, int64_t taps, bool transposed,
                const k_xwn_settings *s, k_xwn_stats *stats)
{
	if (s->bit > K_XWN_MAX_BIT || a < 0 || b < 0 || taps < 0)
		return -1;
	int64_t slices = a * b;
	bool transform = s->transform && s->bit >= 1;
	int levels = !transform ? 0 : s->bit == 1 ? 1 : 1 << (s->bit - 1);
	k_xwn_stats st = { .slices = slices, .weights = slices * taps, .levels = levels };
	float *mag = malloc(sizeof *mag * (size_t)(slices ? slices : 1));
	bool *keep = malloc(sizeof *keep * (size_t)(slices ? slices : 1));
	if (mag == NULL || keep == NULL) {
		free(mag);
		free(keep);
		return -1;
	}
	for (int64_t j = 0; j < slices; j++) {
		float sum = 0.0f;
		for (int64_t t = 0; t < taps; t++)
			sum += fabsf(w[j * taps + t]);
		mag[j] = sum / (float)taps;
		keep[j] = true;
	}
	int64_t outs = transposed ? b : a, ins = transposed ? a : b;
	for (int64_t o = 0; s->pruning && o < outs; o++) {
		float sum = 0.0f;
		for (int64_t i = 0; i < ins; i++)
			sum += mag[transposed ? i * b + o : o * b + i];
		float edge = sum / (float)ins * s->prun_weight;
		for (int64_t i = 0; i < ins; i++) {
			int64_t j = transposed ? i * b + o : o * b + i;
			keep[j] = !(mag[j] < edge);
			st.pruned += !keep[j];
		}
	}
	for (int64_t j = 0; j < slices && taps > 0; j++) {
		for (int64_t t = 0; t < taps; t++) {
			float v = w[j * taps + t], sign = v >= 0.0f ? 1.0f : -1.0f, y = v;
			int best = 0;
			if (levels == 1) {
				y = sign * mag[j];
			} else if (levels > 1) {
				float best_d = INFINITY;
				for (int k = 0; k < levels; k++) {
					float d = fabsf(fabsf(v) - s->max_scale * ldexpf(1.0f, -k) * mag[j]);
					if (d < best_d) {
						best_d = d;
						best = k;
					}
				}
				y = sign * s->max_scale * ldexpf(1.0f, -best) * mag[j];
			}
			out[j * taps + t] = y * (keep[j] ? 1.0f : 0.0f);
			if (levels > 0 && keep[j])
				st.level_count[best]++;
		}
	}
	free(mag);
	free(keep);
	if (stats != NULL)
		*stats = st;
	return 0;
}
