/* Winograd convolution for 3x3 stride-1 layers on the CPU (k-winograd.c):
 * the filters transformed once into SGEMM panels, per block of output
 * tiles an input transform, one product per tile frequency, and an output
 * transform that adds the bias. */
#ifndef K_WINOGRAD_H
#define K_WINOGRAD_H

#include <stdbool.h>
#include <stddef.h>

#include "k-cpu.h"
#include "k-nn.h"

/* Whether the window is one Winograd can run at all: 2-D, 3x3, stride 1,
 * dilation 1, one group, any padding. */
bool k_winograd_fits(const k_window *w);

/* The output tile size k_conv_packed uses for the window at level isa: 2
 * for F(2x2,3x3), 4 for F(4x4,3x3), or 0 where the other paths were
 * measured faster (or k_winograd_force says so). */
int k_winograd_chosen(const k_window *w, k_isa isa);

/* For tests and benchmarks: -1 lets k_winograd_chosen decide (the
 * default), 0 turns Winograd off, 2 or 4 forces that tile size wherever
 * the window fits. Not while kernels run. Without a call, the environment
 * variable STRATA_WINOGRAD (off, 2 or 4) does the same. */
void k_winograd_force(int m);
/* Whether a tile size is forced (by either) and window w fits: then the
 * channel-blocked path (k_conv_blocked_chosen) stands aside. */
bool k_winograd_forced_on(const k_window *w);
/* For benchmarks: whether threads that share out the output channels of a
 * small plane share out its input transform first (true, the default). */
extern bool k_winograd_share_input;
/* For benchmarks: whether the tiles' blocks are sized so that threads get
 * even shares of them (true, the default), or as large as the cache allows. */
extern bool k_winograd_balance;

/* The filters transformed for tile size m (2 or 4) and level isa, as SGEMM
 * panels after a small header recording both: bytes, and the packing into
 * 64-byte aligned memory the caller owns. */
size_t k_winograd_packed_bytes(const k_window *w, int m, k_isa isa);
void k_winograd_pack(const k_window *w, int m, k_isa isa, const float *weights, void *packed);

/* Whether packed was made by k_winograd_pack (rather than the GEMM paths'
 * packing). */
bool k_winograd_is_packed(const void *packed);

/* Scratch a run with these filters needs for up to `slots` threads. */
size_t k_winograd_scratch_bytes(const k_window *w, int m, k_isa isa, int slots);

/* The convolution with filters from k_winograd_pack; bias may be NULL. */
void k_winograd(const k_window *w, const void *packed, const float *x, const float *bias, float *y, void *scratch,
                int slots, const st_exec_ctx *ctx);
/* The same, each task applying post (NULL: none) to the tiles it wrote. */
void k_winograd_post(const k_window *w, const void *packed, const float *x, const float *bias, float *y,
                     void *scratch, int slots, const k_post *post, const st_exec_ctx *ctx);

#endif
