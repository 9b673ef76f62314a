/* Helpers the kernel tests share (test-k-*.c): the SIMD levels to force in
 * turn, a convolution window's output sizes, and 2-D windows. */
#ifndef K_HELPERS_H
#define K_HELPERS_H

#include <stdbool.h>

#include "k-nn.h"

/* The SIMD levels this machine runs, lowest first, into out (room for
 * K_ISA_COUNT); returns how many. */
static inline int
test_isa_levels(k_isa *out)
{
	int n = 0;
	for (int i = 0; i < K_ISA_COUNT; i++) {
		if (k_cpu_isa_supported((k_isa)i))
			out[n++] = (k_isa)i;
	}
	return n;
}

/* Sets w's output sizes from its other fields by a convolution's rule;
 * false when the padded input is smaller than the filter on some axis. */
static inline bool
test_window_finish(k_window *w)
{
	for (int i = 0; i < w->spatial; i++) {
		int64_t extent = (w->kernel[i] - 1) * w->dilation[i] + 1;
		int64_t padded = w->in[i] + w->pad_begin[i] + w->pad_end[i];
		if (padded < extent)
			return false;
		w->out[i] = (padded - extent) / w->stride[i] + 1;
	}
	return true;
}

/* A 2-D window: n samples of c channels, h x wd, to oc channels in `groups`
 * groups, a k x k filter at stride s with pad on every side, dilation 1;
 * its output sizes as test_window_finish sets them (false as it says). */
static inline bool
test_window2d(k_window *w, int64_t n, int64_t c, int64_t oc, int64_t groups, int64_t h, int64_t wd, int64_t k,
              int64_t s, int64_t pad)
{
	*w = (k_window){ .spatial = 2, .batch = n, .in_channels = c, .out_channels = oc, .groups = groups };
	for (int i = 0; i < 2; i++) {
		w->in[i] = i ? wd : h;
		w->kernel[i] = k;
		w->stride[i] = s;
		w->dilation[i] = 1;
		w->pad_begin[i] = w->pad_end[i] = pad;
	}
	return test_window_finish(w);
}

/* NCHW (n x c x positions) to NHWC (n x positions x c), and back: the
 * plain loops the kernel tests check layouts against. */
static inline void
test_to_nhwc(int64_t n, int64_t c, int64_t positions, const float *src, float *dst)
{
	for (int64_t b = 0; b < n; b++)
		for (int64_t ch = 0; ch < c; ch++)
			for (int64_t q = 0; q < positions; q++)
				dst[(b * positions + q) * c + ch] = src[(b * c + ch) * positions + q];
}

static inline void
test_to_nchw(int64_t n, int64_t c, int64_t positions, const float *src, float *dst)
{
	for (int64_t b = 0; b < n; b++)
		for (int64_t ch = 0; ch < c; ch++)
			for (int64_t q = 0; q < positions; q++)
				dst[(b * c + ch) * positions + q] = src[(b * positions + q) * c + ch];
}

#endif
