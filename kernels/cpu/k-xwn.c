/* The XWN weight transform and pruning (k-xwn.h). The arithmetic follows
 * the reference step for step so that results agree bit for bit: float32
 * throughout, sums in index order, divisions last. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "k-xwn.h"

/* The level index of magnitude |w| among max_scale * 2^-k * mag for k in
 * [0, n): the first (largest) level nearest to it. The distances fall and
 * then rise with k (the levels halve while |w| stays), so the search stops
 * at the first distance larger than the best; an equal one never replaces
 * it, which gives ties to the larger level. */
static int
level_of(float w, float mag, float max_scale, int n)
{
	float aw = fabsf(w), best_d = INFINITY;
	int best = 0;
	for (int k = 0; k < n; k++) {
		float c = max_scale * ldexpf(1.0f, -k) * mag;
		float d = fabsf(aw - c);
		if (d < best_d) {
			best_d = d;
			best = k;
		} else if (d > best_d) {
			break;
		}
	}
	return best;
}

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
	float *mag = malloc(sizeof *mag * (size_t)slices);
	unsigned char *keep = malloc((size_t)slices);
	if (mag == NULL || keep == NULL) {
		free(mag);
		free(keep);
		return -1;
	}
	/* Each slice's mean magnitude, from the weights as given. */
	for (int64_t j = 0; j < slices; j++) {
		const float *t = w + j * taps;
		float sum = 0.0f;
		for (int64_t k = 0; k < taps; k++)
			sum += fabsf(t[k]);
		mag[j] = sum / (float)taps;
	}
	memset(keep, 1, (size_t)slices);
	if (s->pruning) {
		/* Per output channel o, over its input channels i. */
		int64_t outs = transposed ? b : a, ins = transposed ? a : b;
		for (int64_t o = 0; o < outs; o++) {
			float sum = 0.0f;
			for (int64_t i = 0; i < ins; i++)
				sum += mag[transposed ? i * b + o : o * b + i];
			float edge = sum / (float)ins * s->prun_weight;
			for (int64_t i = 0; i < ins; i++) {
				int64_t j = transposed ? i * b + o : o * b + i;
				keep[j] = !(mag[j] < edge);
			}
		}
	}
	for (int64_t j = 0; j < slices; j++) {
		const float *t = w + j * taps;
		float *y = out + j * taps, m = mag[j];
		/* A pruned slice is the transformed one times 0, as in the
		 * reference: negative weights give -0. */
		float scale = keep[j] ? 1.0f : 0.0f;
		if (!keep[j] && stats != NULL)
			stats->pruned++;
		if (!transform) {
			for (int64_t k = 0; k < taps; k++)
				y[k] = t[k] * scale;
			continue;
		}
		for (int64_t k = 0; k < taps; k++) {
			float v = t[k], sign = v >= 0.0f ? 1.0f : -1.0f;
			int level = levels == 1 ? 0 : level_of(v, m, s->max_scale, levels);
			float value = levels == 1 ? sign * m : sign * s->max_scale * ldexpf(1.0f, -level) * m;
			y[k] = value * scale;
			if (stats != NULL && keep[j])
				stats->level_count[level]++;
		}
	}
	free(mag);
	free(keep);
	return 0;
}
