/* Convolution on channel-blocked tensors (NCHW16c, k-nchwc.c): sixteen
 * channels of one position lie together, so a kernel broadcasts one input
 * value against a vector of sixteen output channels' weights and stores
 * whole 64-byte vectors, reading every operand in order. k_conv runs it
 * inside NCHW layers where it was measured faster (k_conv_blocked_chosen,
 * below), converting in its scratch, and on the blocked tensors of plans
 * (ST_LAYOUT_NCHW16C), where layers in a row pass them on unconverted. */
#ifndef K_NCHWC_H
#define K_NCHWC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "k-nn.h"

/* Channels of a block. */
#define K_NCHWC_BLOCK 16

/*
 * Layout: an N x C x H x W tensor is N x ceil(C / 16) x H x W x 16, the
 * channels past C zero. k_nchwc_floats gives its floats; the conversions
 * copy from and to plain NCHW (the caller owns both buffers; they must not
 * overlap), on ctx's threads (NULL: the caller's), block by block.
 */
int64_t k_nchwc_floats(int64_t n, int64_t c, int64_t h, int64_t w);
void k_nchwc_from_nchw(int64_t n, int64_t c, int64_t h, int64_t w, const float *src, float *dst,
                       const st_exec_ctx *ctx);
void k_nchwc_to_nchw(int64_t n, int64_t c, int64_t h, int64_t w, const float *src, float *dst, const st_exec_ctx *ctx);
/* Sets the lanes past channel c of blocked tensor y (n samples of plane
 * positions) to zero, as the layout wants them after an operation that
 * need not keep them so. */
void k_nchwc_zero_tail(int64_t n, int64_t c, int64_t plane, float *y);
/* The same between blocked and channels-last tensors (N x plane x C), plane
 * being the positions of a sample. */
void k_nchwc_from_nhwc(int64_t n, int64_t c, int64_t plane, const float *src, float *dst, const st_exec_ctx *ctx);
void k_nchwc_to_nhwc(int64_t n, int64_t c, int64_t plane, const float *src, float *dst, const st_exec_ctx *ctx);

/* Whether k_conv_nchwc runs window w: 2-D, one group, sizes >= 1, any
 * kernel, stride, dilation and padding >= 0. */
bool k_conv_nchwc_fits(const k_window *w);

/*
 * The filters (the layer's O x C x kh x kw weights) packed once:
 * k_conv_nchwc_packed_floats floats of 64-byte aligned memory the caller
 * owns, laid out as [O / 64][C / 16][kh][kw][16 inputs][64 outputs], zero
 * past O and C. Independent of the SIMD level.
 */
size_t k_conv_nchwc_packed_floats(const k_window *w);
void k_conv_nchwc_pack(const k_window *w, const float *weights, float *packed);

/*
 * y (blocked, N x O x OH x OW) = x (blocked, N x C x H x W) convolved with
 * the packed filters, + bias (O values, or NULL), clamped to [lo, hi] when
 * clamp (k_clamp's comparisons). A register tile is 7 neighbouring outputs
 * of one row by 64 output channels (28 sums); threads split samples, groups
 * of 64 output channels and output rows, and the bits do not depend on
 * their number. A thread runs its rows over a slice of the input channels
 * (128 KiB of filters) before the next slice, keeping partial sums in y, so
 * that filters coming from memory come once; it prefetches the next slice
 * meanwhile. The blocked channels of y past O are written as zero.
 */
void k_conv_nchwc(const k_window *w, const float *x, const float *packed, const float *bias, bool clamp,
                  float lo, float hi, float *y, const st_exec_ctx *ctx);
/* For benchmarks: the bytes of a slice of filters (128 KiB). The bits of
 * the result do not depend on it. Not while kernels run. */
extern size_t k_nchwc_slice_bytes;

/*
 * (k-conv.c) Whether k_conv_packed runs window w on the blocked kernel at
 * level isa, converting its NCHW input and output in the scratch: where it
 * was measured faster (docs/performance.md) unless Winograd is forced
 * (k_winograd_force), or where k_conv_blocked_force says so. For tests and
 * benchmarks: -1 lets the rule decide (the default), 0 turns the blocked
 * path off, 1 takes it wherever it fits. Not while kernels run. Without a
 * call, STRATA_BLOCKED (off or on) does the same.
 */
bool k_conv_blocked_chosen(const k_window *w, k_isa isa);
void k_conv_blocked_force(int on);

/*
 * (k-conv.c) Whether a plan that lets layers choose their layout runs
 * window w on blocked tensors at level isa, its input coming blocked
 * (in_blocked) or not: where k_conv_nchwc fits and AVX-512 runs, those
 * k_conv_blocked_chosen takes from NCHW input, and from blocked input also
 * 1x1 and strided layers and any on planes of 14x14 or less (the
 * conversions are what a chain of them saves).
 * k_conv_blocked_force and STRATA_BLOCKED decide as for
 * k_conv_blocked_chosen, at any level.
 */
bool k_conv_blocked_layout(const k_window *w, k_isa isa, bool in_blocked);

/*
 * (k-pool.c) Pooling on blocked tensors: window w (any spatial rank up to
 * 3, channels in and out alike) over x into y, both N x ceil(C / 16) x
 * spatial x 16, as k_pool_ref computes it (max exactly, averages summed
 * in float in the order of the taps); the lanes past C of y zero. And
 * whole planes of size positions (global pooling): y is N x ceil(C / 16) x
 * 16. On ctx's threads (NULL: the caller's).
 */
void k_pool_nchwc(const k_window *w, k_pool_mode mode, bool count_include_pad, const float *x, float *y,
                  const st_exec_ctx *ctx);
void k_global_pool_nchwc(int64_t n, int64_t c, int64_t size, k_pool_mode mode, const float *x, float *y,
                         const st_exec_ctx *ctx);

#endif
