/* Helpers the kernel tests share (test-k-*.c): the SIMD levels to force in
 * turn, and a convolution window's output sizes. */
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

#endif
