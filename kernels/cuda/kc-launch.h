/* Launch sizes shared by the element-wise kernels of kernels/cuda (used
 * from .cu files only). */
#ifndef KC_LAUNCH_H
#define KC_LAUNCH_H

#include <stdint.h>

/* Threads per block of the element-wise kernels, and most blocks of one
 * launch (each thread then loops over the rest). */
#define KC_THREADS 256
#define KC_MAX_BLOCKS 65535

/* Blocks for n elements: one per KC_THREADS, 1 to KC_MAX_BLOCKS. */
static inline unsigned
kc_blocks_for(int64_t n)
{
	int64_t b = (n + KC_THREADS - 1) / KC_THREADS;
	return (unsigned)(b < 1 ? 1 : b > KC_MAX_BLOCKS ? KC_MAX_BLOCKS : b);
}

#endif
