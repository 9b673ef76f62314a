/* CPU kernels for convolution, pooling, normalisation and matrix products:
 * pure functions over FP32 (and, for matmul, integer) buffers in NCHW order. */
#ifndef K_NN_H
#define K_NN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "k-cpu.h"
#include "k-tensor.h"
#include "st-plugin.h"

/*
 * Every op comes as a plain reference (`k_<op>_ref`: direct loops,
 * accumulating in double, serial) and, where speed matters, a fast version
 * (`k_<op>`) that the tests check against it.
 *
 * Threads: fast kernels take the executing context (NULL runs serially on
 * the calling thread) and split their work with ctx->parallel_for. Kernels
 * that need scratch are given `slots`, the most threads prepared for: a run
 * uses min(slots, ctx->n_threads) threads, cuts its work into at most that
 * many chunks, and chunk c only ever writes scratch region c, so no two
 * threads share a scratch buffer however the pool splits the range (on the
 * project's Zen 4 machines, rewriting a buffer that another core has just
 * read costs several times the copy itself). The same slots must be given
 * to the *_scratch_bytes function (at prepare) and to the kernel (at run);
 * the scratch is sized for any thread count up to slots.
 */

#define K_MAX_SPATIAL 3

/*
 * The geometry of a convolution, deconvolution or pooling over 1 to 3
 * spatial axes; arrays hold `spatial` values, outermost axis first.
 * For a convolution or pooling, output o of an axis reads inputs
 * o * stride - pad_begin + k * dilation for k in [0, kernel). For a
 * deconvolution (transposed convolution), input i of an axis adds into
 * outputs i * stride - pad_begin + k * dilation; pad_begin is what is cropped
 * from the start of the full output and may be negative (the output then
 * starts before it, with bias only there).
 */
typedef struct k_window {
	int spatial;            /* 1 to 3 */
	int64_t batch;          /* N */
	int64_t in_channels;    /* C of the input */
	int64_t out_channels;   /* C of the output (pooling: the same as in_channels) */
	int64_t groups;         /* 1 for pooling */
	int64_t in[K_MAX_SPATIAL];
	int64_t out[K_MAX_SPATIAL];
	int64_t kernel[K_MAX_SPATIAL];
	int64_t stride[K_MAX_SPATIAL];
	int64_t dilation[K_MAX_SPATIAL];
	int64_t pad_begin[K_MAX_SPATIAL];
	int64_t pad_end[K_MAX_SPATIAL]; /* pooling with count_include_pad only */
} k_window;

/*
 * A k_window seen as three spatial axes, missing outer axes being of size 1
 * (a 2-D window has depth 1, a 1-D one depth and height 1), with the sizes
 * the kernels index by. Filled by k_geometry_expand (k-conv.c).
 */
typedef struct k_geometry {
	int64_t batch, in_channels, out_channels, groups;
	int64_t in_per_group, out_per_group;
	int64_t in[3], out[3], kernel[3], stride[3], dilation[3];
	int64_t pad[3], pad_end[3];            /* pad is k_window.pad_begin */
	int64_t in_size, out_size, kernel_size; /* elements of one plane or filter tap set */
} k_geometry;

void k_geometry_expand(const k_window *w, k_geometry *g);

/*
 * SIMD for the kernel files. k_v8 is eight floats: one AVX register, or two
 * SSE ones. Loads and stores go through memcpy (unaligned); they are macros
 * because passing such vectors to functions would depend on the
 * instruction set. K_SIMD_CLONES compiles a hot function twice, for AVX2
 * with FMA and for the baseline, and the loader picks one at start-up.
 */
typedef float k_v8 __attribute__((vector_size(32)));
#define K_V8_SPLAT(x) ((k_v8){ (x), (x), (x), (x), (x), (x), (x), (x) })
#define K_V8_LOAD(v, p) memcpy(&(v), (p), sizeof(k_v8))
#define K_V8_STORE(p, v) memcpy((p), &(v), sizeof(k_v8))
#if defined(__x86_64__) && defined(__GNUC__) && defined(__linux__)
#define K_SIMD_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define K_SIMD_CLONES
#endif

/* Runs fn over [0, n) with ctx->parallel_for, or directly when ctx is NULL
 * or has one thread. */
void k_parallel_for(const st_exec_ctx *ctx, int64_t n, int64_t grain, st_range_fn fn, void *arg);

/* The number of scratch slots worth preparing for: the processors online,
 * at least 1 and at most 64. */
int k_thread_slots(void);
/* How many parts work of `blocks` blocks splits into for ctx's threads,
 * each part with its own of slots scratch regions: the fewest of threads,
 * slots and blocks, at least 1. */
int64_t k_slot_parts(const st_exec_ctx *ctx, int slots, int64_t blocks);

/* ---- k-gemm.c: BLAS set-up, fully connected, matrix multiply ---- */

/* Makes OpenBLAS single-threaded, once per process: our pool splits the
 * work and OpenBLAS threads would only compete with it. */
void k_gemm_init(void);

/* Which SGEMM the products use: by default each kernel picks per shape as
 * measured (k-gemm.c, bench/gemm); tests and benchmarks may force one. */
typedef enum k_gemm_impl { K_GEMM_AUTO, K_GEMM_OWN, K_GEMM_OPENBLAS } k_gemm_impl;
/* Set it before sizing scratch or packing, never while kernels run. */
void k_gemm_force(k_gemm_impl impl);
k_gemm_impl k_gemm_forced(void);

/* y (n x m) = x (n x k) * w^T (w is m x k, row-major) + bias (m values, or NULL). */
void k_fully_connected_ref(int64_t n, int64_t k, int64_t m, const float *x, const float *w,
                           const float *bias, float *y);
/*
 * The fast version takes w packed once beforehand (at prepare) where our
 * SGEMM serves the shape: packed_bytes is 0 where it does not (pass packed
 * NULL; OpenBLAS reads w as it is), and the scratch is then 0 too. The
 * packing is for the SIMD level in use and records it.
 */
size_t k_fully_connected_packed_bytes(int64_t n, int64_t k, int64_t m);
void k_fully_connected_pack(int64_t n, int64_t k, int64_t m, const float *w, void *packed);
size_t k_fully_connected_scratch_bytes(int64_t n, int64_t k, int64_t m, int slots);
void k_fully_connected(int64_t n, int64_t k, int64_t m, const float *x, const float *w, const void *packed,
                       const float *bias, float *y, void *scratch, int slots, const st_exec_ctx *ctx);

/*
 * A numpy matmul: for each of `batch` output matrices (the broadcast batch
 * dimensions flattened, row-major), out (m x n) = a (m x k) * b (k x n).
 * a_offset[i] and b_offset[i] are the element offsets of batch i's operand
 * matrices, filled by k_matmul_offsets; a vector operand is a 1 x k or k x 1
 * matrix and adds nothing to the offsets.
 */
typedef struct k_matmul_dims {
	int64_t batch, m, k, n;
	int batch_rank;                   /* broadcast batch dimensions */
	int64_t batch_dims[ST_MAX_RANK];
	int64_t a_strides[ST_MAX_RANK];   /* per batch dimension; 0 where a is broadcast */
	int64_t b_strides[ST_MAX_RANK];
} k_matmul_dims;

/* Fills *g from the operand shapes (ranks 1 and up, already checked by
 * reshape to broadcast); returns 0, or -1 when they do not match. */
int k_matmul_dims_make(const st_shape *a, const st_shape *b, k_matmul_dims *g);
/* Element offsets of batch entry i's a and b matrices. */
void k_matmul_offsets(const k_matmul_dims *g, int64_t i, int64_t *a_offset, int64_t *b_offset);
void k_matmul_ref(const k_matmul_dims *g, const float *a, const float *b, float *out);
/* Scratch for k_matmul with up to `slots` threads (0 where OpenBLAS serves
 * the shape). */
size_t k_matmul_scratch_bytes(const k_matmul_dims *g, int slots);
void k_matmul(const k_matmul_dims *g, const float *a, const float *b, float *out, void *scratch, int slots,
              const st_exec_ctx *ctx);
/* Integer products wrap around on overflow, as two's-complement machines do. */
void k_matmul_i32(const k_matmul_dims *g, const int32_t *a, const int32_t *b, int32_t *out,
                  const st_exec_ctx *ctx);
void k_matmul_i64(const k_matmul_dims *g, const int64_t *a, const int64_t *b, int64_t *out,
                  const st_exec_ctx *ctx);

/* ---- k-conv.c: convolution and deconvolution ---- */

/* Convolution (ONNX Conv): x is N x C x in..., weights out_channels x
 * C/groups x kernel..., bias out_channels values or NULL, y N x out_channels
 * x out.... */
void k_conv_ref(const k_window *g, const float *x, const float *weights, const float *bias, float *y);
size_t k_conv_scratch_bytes(const k_window *g, int slots);
void k_conv(const k_window *g, const float *x, const float *weights, const float *bias, float *y,
            void *scratch, int slots, const st_exec_ctx *ctx);
/* The im2col and GEMM path alone, also for windows k_conv runs with the
 * direct loops of k-dwconv.c (benchmarks compare the two). */
size_t k_conv_im2col_scratch_bytes(const k_window *g, int slots);
void k_conv_im2col(const k_window *g, const float *x, const float *weights, const float *bias, float *y,
                   void *scratch, int slots, const st_exec_ctx *ctx);

/*
 * The same with the filters packed once beforehand (at prepare): bytes of
 * the packed form, 0 when the convolution takes its weights as they are
 * (then pass packed NULL; k_conv_pack writes nothing); the packing, into
 * 64-byte aligned memory, for the SIMD level in use (the packed form
 * records it); and the scratch a run
 * with them needs, which is less than without. The weights are still
 * passed: paths that do not use the packed form read them.
 */
size_t k_conv_packed_bytes(const k_window *g);
void k_conv_pack(const k_window *g, const float *weights, void *packed);
size_t k_conv_packed_scratch_bytes(const k_window *g, int slots);

/*
 * An activation a convolution applies to its own output: each thread runs
 * it over the part it has just written, while that is still in cache,
 * rather than the host making a pass over the whole output afterwards. It
 * is k_activation on the same values, so the result is the same to the
 * bit. on false (or a NULL k_post): none.
 */
typedef struct k_post {
	bool on;
	k_act act;
	float a, b; /* k_activation's coefficients */
} k_post;

/* Whether post is a relu or a clip, which the GEMM tiles apply as they
 * store (k_tile's clamp to [*lo, *hi]); false for none or another. */
static inline bool
k_post_clamp(const k_post *post, float *lo, float *hi)
{
	if (post == NULL || !post->on)
		return false;
	if (post->act == K_ACT_RELU) {
		*lo = 0.0f, *hi = __builtin_inff();
		return true;
	}
	if (post->act == K_ACT_CLIP) {
		*lo = post->a, *hi = post->b;
		return true;
	}
	return false;
}

/* k_post over planes [p0, p1) of an output whose planes hold plane_size
 * elements each, and over channels [c0, c1) x positions [q0, q1) of one
 * sample's output. */
void k_post_planes(const k_post *post, float *y, int64_t plane_size, int64_t p0, int64_t p1);
void k_post_block(const k_post *post, float *y, int64_t plane_size, int64_t c0, int64_t c1, int64_t q0,
                  int64_t q1);

void k_conv_packed(const k_window *g, const float *x, const float *weights, const void *packed,
                   const float *bias, float *y, void *scratch, int slots, const st_exec_ctx *ctx);
/* The same followed by post (NULL: none). */
void k_conv_packed_post(const k_window *g, const float *x, const float *weights, const void *packed,
                        const float *bias, float *y, void *scratch, int slots, const k_post *post,
                        const st_exec_ctx *ctx);

/* Deconvolution (ONNX ConvTranspose): weights are C x out_channels/groups x
 * kernel...; the other buffers as for k_conv. */
void k_deconv_ref(const k_window *g, const float *x, const float *weights, const float *bias, float *y);
size_t k_deconv_scratch_bytes(const k_window *g, int slots);
void k_deconv(const k_window *g, const float *x, const float *weights, const float *bias, float *y,
              void *scratch, int slots, const st_exec_ctx *ctx);

/*
 * (k-gemm.c) A 1x1, stride-1, unpadded convolution on channels-last
 * tensors: for each of `positions` positions (batch x spatial) y's cout
 * channels are w (cout x cin, as the layer stores its filter) times x's cin
 * channels, plus bias (cout values or NULL), then post (relu and clip as
 * the tiles store them, other activations over y after). The filters are
 * packed once at prepare, for the SIMD level in use and `positions`, into
 * 64-byte aligned memory the caller owns; the scratch is for any thread
 * count up to slots. The reference is the plain fully connected product.
 */
size_t k_pointwise_nhwc_packed_bytes(int64_t positions, int64_t cin, int64_t cout);
void k_pointwise_nhwc_pack(int64_t positions, int64_t cin, int64_t cout, const float *w, void *packed);
size_t k_pointwise_nhwc_scratch_bytes(int64_t positions, int64_t cin, int64_t cout, int slots);
void k_pointwise_nhwc(int64_t positions, int64_t cin, int64_t cout, const float *x, const void *packed,
                      const float *bias, float *y, void *scratch, int slots, const k_post *post,
                      const st_exec_ctx *ctx);
void k_pointwise_nhwc_ref(int64_t positions, int64_t cin, int64_t cout, const float *x, const float *w,
                          const float *bias, float *y);
/*
 * The same product with float16 storage and float32 arithmetic: x and y
 * hold IEEE half values, the filters are packed as for k_pointwise_nhwc.
 * Blocks of positions are widened into the scratch (in cache), multiplied
 * there by the same tiles and narrowed (round to nearest even) into y, so
 * y is k_pointwise_nhwc of the widened x, narrowed, to the bit. Threads
 * take blocks of positions; the scratch is for any thread count up to
 * slots.
 */
size_t k_pointwise_nhwc_half_scratch_bytes(int64_t positions, int64_t cin, int64_t cout, int slots);
void k_pointwise_nhwc_half(int64_t positions, int64_t cin, int64_t cout, const uint16_t *x, const void *packed,
                           const float *bias, uint16_t *y, void *scratch, int slots, const k_post *post,
                           const st_exec_ctx *ctx);

/* ---- k-dwconv.c: direct convolutions ---- */

/*
 * Two kinds of convolution run as direct loops rather than im2col and GEMM,
 * whose matrices they would make too thin: depthwise ones (one input channel
 * per group; k_conv takes them here up to 15 outputs per group), and a
 * network's first layer (one group of at most 4 input channels, 2-D or 1-D,
 * stride 1 or 2). k_conv sends them here by the rule of k_conv_direct_chosen
 * (docs/performance.md has the measurements behind it); any window
 * k_conv_direct_fits takes can be run.
 *
 * The loops are compiled for AVX-512, for AVX2 with FMA and for the baseline
 * instruction set; k_conv uses the level k_cpu_isa() chose (k-cpu.h).
 */
typedef enum k_direct_kind { K_DIRECT_NONE, K_DIRECT_DEPTHWISE, K_DIRECT_FEW_CHANNELS } k_direct_kind;

/* Which direct kernel can run the window, and which one k_conv runs it with
 * (K_DIRECT_NONE where im2col and GEMM were measured faster). */
k_direct_kind k_conv_direct_fits(const k_window *g);
k_direct_kind k_conv_direct_chosen(const k_window *g);
/* Scratch for any thread count up to slots, as for k_conv: a padded copy of
 * the input per thread (none for depthwise loops that read it in place). */
size_t k_conv_direct_scratch_bytes(const k_window *g, int slots);
/* A convolution k_conv_direct_fits takes, as k_conv computes it. */
void k_conv_direct(const k_window *g, const float *x, const float *weights, const float *bias, float *y,
                   void *scratch, int slots, const st_exec_ctx *ctx);
/* The same at one SIMD level (for tests and benchmarks); returns false,
 * computing nothing, when this CPU or build lacks that level or no direct
 * kernel fits. */
bool k_conv_direct_with(k_isa isa, const k_window *g, const float *x, const float *weights, const float *bias,
                        float *y, void *scratch, int slots, const st_exec_ctx *ctx);
/* Both followed by post (k_post, above; NULL: none), plane by plane or
 * band by band as they are computed. */
void k_conv_direct_post(const k_window *g, const float *x, const float *weights, const float *bias, float *y,
                        void *scratch, int slots, const k_post *post, const st_exec_ctx *ctx);
bool k_conv_direct_post_with(k_isa isa, const k_window *g, const float *x, const float *weights,
                             const float *bias, float *y, void *scratch, int slots, const k_post *post,
                             const st_exec_ctx *ctx);

/* ---- k-pool.c: pooling ---- */

typedef enum k_pool_mode { K_POOL_MAX, K_POOL_AVG } k_pool_mode;

/*
 * Max or average pooling (ONNX MaxPool, AveragePool). An average divides by
 * the taps that fall inside the input, or with count_include_pad by those
 * inside the padded input [-pad_begin, in + pad_end) (a ceil_mode window
 * running past that is cut there, as ONNX Runtime and PyTorch do). A window
 * with no input element gives -FLT_MAX (max, as ONNX Runtime) or 0 (avg).
 */
void k_pool_ref(const k_window *g, k_pool_mode mode, bool count_include_pad, const float *x, float *y);
void k_pool(const k_window *g, k_pool_mode mode, bool count_include_pad, const float *x, float *y,
            const st_exec_ctx *ctx);
/* k_pool's two paths, for tests and benchmarks: the vector loops at one
 * SIMD level, which return false (computing nothing) when this CPU or build
 * lacks the level or the window is not one they take (2-D or 1-D, no
 * dilation, column stride 1 or 2, rows up to 2048); and the general loops,
 * which take any window. */
bool k_pool_with(k_isa isa, const k_window *g, k_pool_mode mode, bool count_include_pad, const float *x,
                 float *y, const st_exec_ctx *ctx);
void k_pool_general(const k_window *g, k_pool_mode mode, bool count_include_pad, const float *x, float *y,
                    const st_exec_ctx *ctx);
/* k_pool on one thread over planes that lie x_plane and y_plane floats
 * apart (at least in_size and out_size of g): the same rows of every
 * channel of an image, say. */
void k_pool_strided(const k_window *g, k_pool_mode mode, bool count_include_pad, const float *x, int64_t x_plane,
                    float *y, int64_t y_plane);

/* ---- k-dwconv.c: a first layer and the max pooling after it ----
 *
 * Convolution w, with post applied to its output, and then `pool` (a
 * pooling over that output) in one pass, band by band: the convolution's
 * rows go to a buffer of a few rows in the scratch, which stays in L2, are
 * pooled from there, and the whole convolution output is never written.
 * k_conv_pool_fits: the first-layer kernel's convolutions (k_conv_direct_
 * chosen gives K_DIRECT_FEW_CHANNELS), 2-D, with a max pooling whose every
 * window holds an input row and column. y is the pooled output; the
 * scratch is k_conv_pool_scratch_bytes (0 where it does not fit). The
 * calls return false, computing nothing, where it does not fit (or this
 * CPU lacks isa).
 */
bool k_conv_pool_fits(const k_window *w, const k_window *pool, k_pool_mode mode);
size_t k_conv_pool_scratch_bytes(const k_window *w, const k_window *pool, int slots);
bool k_conv_pool_direct(const k_window *w, const k_window *pool, const float *x, const float *weights,
                        const float *bias, float *y, void *scratch, int slots, const k_post *post,
                        const st_exec_ctx *ctx);
bool k_conv_pool_direct_with(k_isa isa, const k_window *w, const k_window *pool, const float *x,
                             const float *weights, const float *bias, float *y, void *scratch, int slots,
                             const k_post *post, const st_exec_ctx *ctx);

/* Global pooling over planes of `size` elements: y[p] = max or mean of plane p. */
void k_global_pool_ref(int64_t planes, int64_t size, k_pool_mode mode, const float *x, float *y);
void k_global_pool(int64_t planes, int64_t size, k_pool_mode mode, const float *x, float *y,
                   const st_exec_ctx *ctx);
/* The same at one SIMD level; false (nothing computed) when this CPU or
 * build lacks it. */
bool k_global_pool_with(k_isa isa, int64_t planes, int64_t size, k_pool_mode mode, const float *x, float *y,
                        const st_exec_ctx *ctx);

/* ---- k-norm.c: normalisation ---- */

/* Batch normalisation at inference over N x C x inner elements:
 * y = (x - mean) / sqrt(variance + epsilon) * scale + bias. */
void k_batch_norm_ref(int64_t n, int64_t c, int64_t inner, const float *x, const float *scale,
                      const float *bias, const float *mean, const float *variance, float epsilon,
                      float *y);
/* Folds the four tensors into y = a * x + b per channel (a and b hold c values). */
void k_batch_norm_fold(int64_t c, const float *scale, const float *bias, const float *mean,
                       const float *variance, float epsilon, float *a, float *b);
/* y = a[c] * x + b[c] for each channel c of N x C x inner elements; y may be x. */
void k_channel_affine(int64_t n, int64_t c, int64_t inner, const float *x, const float *a,
                      const float *b, float *y, const st_exec_ctx *ctx);

/* Instance normalisation: each of the N x C planes of `inner` elements is
 * normalised by its own mean and biased variance, then scaled and shifted
 * per channel. */
void k_instance_norm_ref(int64_t n, int64_t c, int64_t inner, const float *x, const float *scale,
                         const float *bias, float epsilon, float *y);
void k_instance_norm(int64_t n, int64_t c, int64_t inner, const float *x, const float *scale,
                     const float *bias, float epsilon, float *y, const st_exec_ctx *ctx);

/* Layer normalisation: each of `rows` rows of `size` elements is normalised
 * by its own mean and biased variance, then scaled and shifted element by
 * element: y[r, j] = (x[r, j] - mean[r]) / sqrt(variance[r] + epsilon) *
 * scale[j] + bias[j], bias NULL for none. y may be x. */
void k_layer_norm_ref(int64_t rows, int64_t size, const float *x, const float *scale, const float *bias,
                      float epsilon, float *y);
void k_layer_norm(int64_t rows, int64_t size, const float *x, const float *scale, const float *bias,
                  float epsilon, float *y, const st_exec_ctx *ctx);

#endif
