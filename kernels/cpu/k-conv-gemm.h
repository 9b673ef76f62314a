/* Inside the convolution kernels: the paths on Strata's own SGEMM
 * (k-conv-gemm.c) as k-conv.c dispatches to them. */
#ifndef K_CONV_GEMM_H
#define K_CONV_GEMM_H

#include "k-nn.h"
#include "k-sgemm.h"

/* Whether the own-GEMM paths take this convolution (sizes within their
 * 32-bit offsets). */
bool k_conv_gemm_fits(const k_geometry *g);

/* Scratch for up to `slots` threads; `packed`: the weights come pre-packed
 * (otherwise each thread packs the filters it uses into its own slot). */
size_t k_conv_gemm_scratch_bytes(const k_geometry *g, int slots, bool packed);

/* The weights packed for the kernel in use now (a small header records
 * which; k_conv_gemm runs them with that kernel). */
size_t k_conv_gemm_packed_bytes(const k_geometry *g);
void k_conv_gemm_pack(const k_geometry *g, const float *weights, void *packed);

/*
 * Whether convolutions on small images run with the roles of the product
 * swapped (output positions as its rows): 0 where it measured faster (the
 * default), 1 wherever it can, -1 never. For tests and benchmarks; the
 * packing and the scratch size must be asked for under the same mode as
 * the run that uses them without pre-packed filters.
 */
void k_conv_gemm_force_swap(int mode);
/* Whether k_conv_gemm runs g with the roles swapped, at the level in use and
 * under the mode set now. */
bool k_conv_gemm_swaps(const k_geometry *g);

/* packed NULL: weights as they are. Applies post (NULL: none) to each
 * task's block of the output as the task ends, and returns true, where it
 * can; returns false and leaves post to the caller otherwise. */
bool k_conv_gemm(const k_geometry *g, const float *x, const float *weights, const void *packed,
                 const float *bias, float *y, void *scratch, int slots, const k_post *post,
                 const st_exec_ctx *ctx);

/*
 * Copies the receptive fields of output positions [p0, p1) of one group's
 * input channels into col: row r = (c, kd, kh, kw), `pitch` floats long,
 * holds for each position the input element that tap reads, or 0 in the
 * padding (k-conv.c).
 */
void k_im2col(const k_geometry *g, const float *x, int64_t p0, int64_t p1, int64_t pitch, float *col);

#endif
