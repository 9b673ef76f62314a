/* CPU kernels on channels-last (NHWC) tensors (k-nhwc.c): depthwise
 * convolution and global pooling, with the channels in the vector lanes. */
#ifndef K_NHWC_H
#define K_NHWC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "k-nn.h"

/*
 * Tensors here are N x H x W x C (channels contiguous); filters stay in the
 * layer's NCHW order until packed. The fast kernels run at the SIMD level
 * k_cpu_isa() chose (k-cpu.h), take their threads from ctx (NULL: serial),
 * allocate nothing, and give the same bits whatever the thread count.
 */

/* Whether k_dwconv_nhwc runs window w: 2-D, groups == in_channels ==
 * out_channels >= 1 (one filter per channel), batch >= 1, sizes >= 1,
 * any kernel size, stride and dilation, padding >= 0. */
bool k_dwconv_nhwc_fits(const k_window *w);

/*
 * The filters packed once (at prepare): k_dwconv_nhwc_packed_floats gives
 * the floats of the packed form; k_dwconv_nhwc_pack fills it from filter,
 * the layer's C x 1 x kh x kw weights as stored (NCHW order). packed is
 * [kh][kw][C'] (taps major, channels contiguous), C' being C rounded up to
 * 16 with zeros, so that full-vector loads past C stay inside; it is
 * 64-byte aligned memory the caller owns, and does not depend on the SIMD
 * level.
 */
size_t k_dwconv_nhwc_packed_floats(const k_window *w);
void k_dwconv_nhwc_pack(const k_window *w, const float *filter, float *packed);

/*
 * y (N x OH x OW x C) = the depthwise convolution of x (N x H x W x C)
 * with the packed filters, + bias (C values, or NULL), then post (NULL or
 * !post->on: none). A relu or clip is applied in registers comparison for
 * comparison as k_clamp (k-sgemm.h) does, bit-identical to k_activation on
 * the unfused output; any other activation is k_activation on each output
 * row once stored. Threads split batch x output rows. The caller owns all
 * buffers; y must not overlap x. (With C a multiple of 256 a tap in the
 * padding adds weight x 0, as the NCHW direct kernels' padded copies do,
 * rather than nothing: the same unless a weight is infinite or NaN.)
 */
void k_dwconv_nhwc(const k_window *w, const float *x, const float *packed, const float *bias, float *y,
                   const k_post *post, const st_exec_ctx *ctx);

/*
 * The same convolution with float16 storage and float32 arithmetic: x and
 * y hold IEEE half values. Bands of output rows are computed from their
 * input rows widened into the scratch (in cache) and narrowed into y
 * (round to nearest even), so y is k_dwconv_nhwc of the widened x,
 * narrowed, to the bit. Threads take bands; the scratch is for any thread
 * count up to slots, 64-byte aligned, the caller's.
 */
size_t k_dwconv_nhwc_half_scratch_bytes(const k_window *w, int slots);
void k_dwconv_nhwc_half(const k_window *w, const uint16_t *x, const float *packed, const float *bias, uint16_t *y,
                        const k_post *post, void *scratch, int slots, const st_exec_ctx *ctx);

/* What k_dwconv_nhwc is checked against: plain loops summing in double in
 * k_conv_ref's order (bias, then taps row by row), with the unpacked NCHW
 * filter (C x 1 x kh x kw) and the same NHWC x and y. Serial, no post. */
void k_dwconv_nhwc_ref(const k_window *w, const float *x, const float *filter, const float *bias, float *y);

/*
 * Global pooling, channels last: x is batch x positions x channels, y is
 * batch x channels. Average: the sum of each channel in double, in position
 * order, divided by positions (0 when there are none) — k_global_pool_ref's
 * arithmetic, so its bits. Max: as k_global_pool (k-pool.c), each value
 * replacing the best so far only when greater, from -FLT_MAX: a NaN is
 * passed over (a channel of NaNs alone gives -FLT_MAX) and of equal values
 * the first stays. Threads split blocks of channels. The caller owns x and
 * y.
 */
void k_global_pool_nhwc(int64_t batch, int64_t positions, int64_t channels, k_pool_mode mode, const float *x,
                        float *y, const st_exec_ctx *ctx);

#endif
