/* The XWN weight transform and pruning of the DDesigner API's accelerator-
 * friendly convolutions (docs/xwn.md): pure functions over FP32 weights. */
#ifndef K_XWN_H
#define K_XWN_H

#include <stdbool.h>
#include <stdint.h>

/* Most bits a transform may use: 2^(8-1) = 128 magnitude levels. */
#define K_XWN_MAX_BIT 8
#define K_XWN_MAX_LEVELS (1 << (K_XWN_MAX_BIT - 1))

/* The one XWN parameter set every XWN-capable layer carries. */
typedef struct k_xwn_settings {
	bool transform;    /* use_transform */
	int bit;           /* 0 or less: bypass; 1: sign * mean; n >= 2: 2^(n-1) levels */
	float max_scale;   /* the largest level, as a multiple of the slice's mean magnitude */
	bool pruning;      /* use_pruning */
	float prun_weight; /* slices below prun_weight * the output channel's mean are zeroed */
} k_xwn_settings;

/* What a transform did, for reports (xwn compare, the parameter panel). */
typedef struct k_xwn_stats {
	int64_t slices;  /* (input, output channel) kernel slices */
	int64_t pruned;  /* of them, zeroed by pruning */
	int64_t weights; /* weights transformed (all, pruned ones included) */
	int levels;      /* level indices in use: 2^(bit-1), 1 for bit 1, 0 without transform */
	/* Weights of kept slices per level index: level k is max_scale * 2^-k
	 * times the slice's mean magnitude (index 0 is the largest). */
	int64_t level_count[K_XWN_MAX_LEVELS];
} k_xwn_stats;

/*
 * Applies the transform and pruning to one weight tensor laid out as
 * [A][B][T]: A x B kernel slices of T taps each, taps in row-major order.
 * A convolution's weights (O x I/groups x taps) are read with
 * transposed = false: a is the output channel, b the input channel. A
 * transposed convolution's (I x O/groups x taps) with transposed = true: a
 * is the input channel, b the output channel. Either way the pruning edge
 * of an output channel is the mean of its slices' magnitudes over the input
 * channels, as the reference does (groups are not special-cased).
 *
 * Every sum is a sequential float32 sum in index order, the ties go to the
 * larger level and the pruning comparison is a strict <, so the result is
 * bit for bit the reference's. w and out may be the same buffer. stats may
 * be NULL. Returns 0, or -1 when out of memory (out is then untouched) or
 * the settings are out of range (bit above K_XWN_MAX_BIT).
 */
int k_xwn_apply(const float *w, float *out, int64_t a, int64_t b, int64_t taps, bool transposed,
                const k_xwn_settings *s, k_xwn_stats *stats);

/* The same as the pseudo-code of docs/xwn.md says it, with nothing clever
 * (a full scan of the levels, values as sign * max_scale * 2^-k * mag):
 * what k_xwn_apply, which finds levels from the bits of the magnitudes, is
 * tested against bit for bit. STRATA_KERNELS=reference makes the XWN
 * collection use it. */
int k_xwn_apply_ref(const float *w, float *out, int64_t a, int64_t b, int64_t taps, bool transposed,
                    const k_xwn_settings *s, k_xwn_stats *stats);

/* Whether the settings change any weight at all. */
static inline bool
k_xwn_active(const k_xwn_settings *s)
{
	return (s->transform && s->bit >= 1) || s->pruning;
}

#endif
