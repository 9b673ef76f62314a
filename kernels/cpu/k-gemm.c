/* Matrix products on the CPU: fully connected and numpy matmul on our own
 * SGEMM (k-sgemm.c) or OpenBLAS, whichever measured faster for the shape,
 * their reference loops, and the threading helpers the other kernels
 * share. */
#include "config.h"

#include <assert.h>
#include <limits.h>
#include <pthread.h>
#include <unistd.h>

#include <cblas.h>

#include "k-nn.h"
#include "k-sgemm.h"
#include "k-int.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define FB_X86 1
#else
#define FB_X86 0
#endif

/* ---- threads ---- */

void
k_parallel_for(const st_exec_ctx *ctx, int64_t n, int64_t grain, st_range_fn fn, void *arg)
{
	if (n <= 0)
		return;
	if (grain < 1)
		grain = 1;
	if (ctx == NULL || ctx->parallel_for == NULL || ctx->n_threads <= 1 || n <= grain)
		fn(arg, 0, n);
	else
		ctx->parallel_for(ctx, n, grain, fn, arg);
}

int64_t
k_slot_parts(const st_exec_ctx *ctx, int slots, int64_t blocks)
{
	int64_t threads = ctx && ctx->parallel_for ? ctx->n_threads : 1;
	return k_max64(1, k_min64(k_min64(threads, slots), blocks));
}

int
k_thread_slots(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	if (n < 1)
		return 1;
	return n > 64 ? 64 : (int)n;
}

/* OpenBLAS's pthread build (Debian's default) starts a server thread per
 * core when it is loaded, and each spins, yielding, for some 2^28 clock
 * ticks before it sleeps; setting one thread does not stop them. On two
 * cores that spinning took the second core from Strata's own worker:
 * MobileNetV2's first five runs on two threads took 13.7 ms against 4.1
 * after. Its fork handler's shutdown, exported though not declared, joins
 * them (they are made again if a caller ever asks OpenBLAS for more than
 * one thread); weak, so another BLAS or build simply lacks it. */
int blas_thread_shutdown_(void) __attribute__((weak));

static void
blas_single_thread(void)
{
	openblas_set_num_threads(1);
	if (blas_thread_shutdown_ != NULL)
		blas_thread_shutdown_();
}

void
k_gemm_init(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, blas_single_thread);
}

static k_gemm_impl forced = K_GEMM_AUTO;

void
k_gemm_force(k_gemm_impl impl)
{
	forced = impl;
}

k_gemm_impl
k_gemm_forced(void)
{
	return forced;
}

/* Whether every size fits the 32-bit integers of the BLAS interface (the
 * leading dimensions here are these sizes; offsets stay 64-bit). */
static bool
blas_fits(int64_t a, int64_t b, int64_t c)
{
	return a <= INT_MAX && b <= INT_MAX && c <= INT_MAX;
}

/* ---- fully connected ---- */

void
k_fully_connected_ref(int64_t n, int64_t k, int64_t m, const float *x, const float *w,
                      const float *bias, float *y)
{
	for (int64_t i = 0; i < n; i++) {
		for (int64_t j = 0; j < m; j++) {
			double sum = bias ? bias[j] : 0.0;
			for (int64_t t = 0; t < k; t++)
				sum += (double)x[i * k + t] * w[j * k + t];
			y[i * m + j] = (float)sum;
		}
	}
}

/*
 * Which products go to our SGEMM (K_GEMM_AUTO), by bench-gemm --classes
 * --cpu-time on the 2-vCPU Zen 4: medians of 21, ours against OpenBLAS
 * 0.3.21 as these kernels call it, alternating in one process; ms, one
 * thread (two threads):
 *
 *   fully connected   1 x 512 -> 1000    0.083 vs 0.030 (0.050 vs 0.022)  OpenBLAS (sgemv)
 *                     2 x 512 -> 1000    0.081 vs 0.135 (0.053 vs 0.023)  OpenBLAS
 *                     4 x 512 -> 1000    0.095 vs 0.145 (0.066 vs 0.122)  ours
 *                     8 x 512 -> 1000    0.075 vs 0.183 (0.059 vs 0.144)  ours
 *                    32 x 2048 -> 1000   1.32  vs 2.61  (0.88  vs 1.83)   ours
 *                   128 x 1024 -> 1024   2.77  vs 3.49                    ours
 *                    16 x 64 -> 10       0.0022 vs 0.0012                 OpenBLAS
 *                     1 x 4096 -> 4096   4.03  vs 2.98                    OpenBLAS (sgemv)
 *   matmul        8 x 64x64 . 64x64      0.050 vs 0.037 (0.029 vs 0.019)  OpenBLAS
 *                12 x 197x64 . 64x197    0.72  vs 0.67  (0.47  vs 0.42)   OpenBLAS
 *                12 x 197x197 . 197x64   0.73  vs 0.63  (0.41  vs 0.33)   OpenBLAS
 *                 1 x 3136x64 . 64x64    0.30  vs 0.27                    OpenBLAS
 *                 256^3, 1024^3          1.02x, 1.00x                     even
 *                 1 x 1x512 . 512x512    0.068 vs 0.011                   OpenBLAS (sgemv)
 *
 * A fully connected layer's weights are packed once at prepare, and
 * OpenBLAS multiplies by a transposed matrix slowly once it leaves its
 * small-matrix kernels (2 x 512 -> 1000 takes it 4 times as long as the
 * same in two halves, which is why it wins there on two threads); that is
 * where ours wins, from 4 rows (half a register tile). A matmul packs both
 * operands at every run, and OpenBLAS's small-matrix kernels, which pack
 * nothing, win the small ones; the large ones are even, so matmul stays on
 * OpenBLAS. Tiny products stay on OpenBLAS too; fully connected layers of 1
 * to 3 rows have loops of their own (below).
 */
#define FC_MIN_ROWS 4
#define FC_MIN_WORK 32768.0 /* multiply-adds */

/*
 * Below FC_MIN_ROWS rows the product reads each weight once for at most
 * three multiply-adds, so it is bound by reading the weights: the loops of
 * k-fc-body.h stream them and take those shapes from OpenBLAS. On one row
 * they read weights from memory (as in a network) some 20% faster than its
 * sgemv and weights in the caches as fast; on 2 and 3 rows, where OpenBLAS
 * runs sgemm with a transposed operand, 3 to 4 times as fast (bench/pool;
 * docs/performance.md, "Pooling and fully connected").
 * Forcing OpenBLAS still gives it those shapes, for tests and benchmarks.
 */
static bool
fc_few_rows(int64_t n, int64_t k)
{
	return n >= 1 && n < FC_MIN_ROWS && k > 0 && forced != K_GEMM_OPENBLAS;
}

static bool
fc_own(int64_t n, int64_t k, int64_t m)
{
	if (fc_few_rows(n, k))
		return false;
	if (forced != K_GEMM_AUTO)
		return forced == K_GEMM_OWN;
	return n >= FC_MIN_ROWS && (double)n * (double)k * (double)m >= FC_MIN_WORK;
}

/* ---- few rows: the vector loops, once per instruction set ---- */




typedef struct fc_rows_args {
	int64_t n, k, m;
	const float *x, *w, *bias;
	float *y;
} fc_rows_args;

#define FB_CAT2(a, b) a##_##b
#define FB_CAT(a, b) FB_CAT2(a, b)
#define FB_NAME(x) FB_CAT(x, FB_SUFFIX)

#if FB_X86 && defined(K_HAVE_AVX2)
#define FB_SUFFIX avx2
#define FB_TARGET __attribute__((target("avx2,fma")))
#define FB_LANES 8
#define FB_FMA(a, b, c) ((vec_avx2)_mm256_fmadd_ps((__m256)(a), (__m256)(b), (__m256)(c)))
#include "k-fc-body.h"
#undef FB_SUFFIX
#undef FB_TARGET
#undef FB_LANES
#undef FB_FMA
#endif

#define FB_SUFFIX portable
#define FB_TARGET
#define FB_LANES 4
#define FB_FMA(a, b, c) ((a) * (b) + (c))
#include "k-fc-body.h"
#undef FB_SUFFIX
#undef FB_TARGET
#undef FB_LANES
#undef FB_FMA

/* Indexed by k_isa; a level this build lacks has no entry. The AVX-512
 * level runs the AVX2 loops: with 16 lanes, 3 rows x 1280 -> 1000 took 0.17
 * ms against 0.10 and one row 0.032 against 0.028 on the Zen 4 machines
 * (bench/pool), which split 512-bit operations in two. */
static const st_range_fn fc_rows_variants[K_ISA_COUNT] = {
	[K_ISA_PORTABLE] = fc_rows_portable,
#if FB_X86 && defined(K_HAVE_AVX2)
	[K_ISA_AVX2] = fc_rows_avx2,
#if defined(K_HAVE_AVX512)
	[K_ISA_AVX512] = fc_rows_avx2,
#endif
#endif
};

/* The few-row product over blocks of eight output columns; a block per
 * task would be too little work, so a task carries some 64 k multiply-adds. */
static void
fc_rows_run(int64_t n, int64_t k, int64_t m, const float *x, const float *w, const float *bias, float *y,
            const st_exec_ctx *ctx)
{
	k_isa isa = k_cpu_isa();
	st_range_fn fn = fc_rows_variants[isa] ? fc_rows_variants[isa] : fc_rows_portable;
	fc_rows_args a = { n, k, m, x, w, bias, y };
	int64_t blocks = (m + 7) / 8, work = 8 * n * k;
	k_parallel_for(ctx, blocks, work >= 65536 ? 1 : (65536 + work - 1) / work, fn, &a);
}

static bool
matmul_own(const k_matmul_dims *g)
{
	return forced == K_GEMM_OWN && g->batch > 0 && g->m > 0 && g->n > 0;
}

/* The header of a packed weight matrix: which kernel packed it, for what. */
typedef struct fc_packed_head {
	uint32_t magic;
	int32_t isa;
	int64_t nr; /* which of the level's kernels */
	int64_t k, m;
	int64_t reserved[4];
} fc_packed_head;
_Static_assert(sizeof(fc_packed_head) == 64, "the packed weights start 64 bytes in");
#define FC_MAGIC 0x4b434650u /* "PFCK" */

/* The product y = x . w^T as our SGEMM sees it: A is x, B is w^T, packed. */
static k_sgemm_op
fc_op(int64_t n, int64_t k, int64_t m, const float *x, const float *packed_w, const float *bias, float *y)
{
	return (k_sgemm_op){ .m = n, .n = m, .k = k, .a = { x, k, 1 }, .b_packed = packed_w, .c = y, .ldc = m,
		             .col_bias = bias };
}

size_t
k_fully_connected_packed_bytes(int64_t n, int64_t k, int64_t m)
{
	if (n <= 0 || m <= 0 || !fc_own(n, k, m))
		return 0;
	return sizeof(fc_packed_head) + k_sgemm_packed_b_bytes(k_gemm_kernel_for(k_cpu_isa(), n, m), k, m);
}

/* w (m x k) packed as B = w^T for kernel kr, behind its header. */
static void
pack_weights(const k_gemm_kernel *kr, int64_t k, int64_t m, const float *w, void *packed)
{
	fc_packed_head *h = packed;
	*h = (fc_packed_head){ .magic = FC_MAGIC, .isa = (int32_t)kr->isa, .nr = kr->nr, .k = k, .m = m };
	k_matrix wt = { w, 1, k }; /* w^T: element (t, j) is w[j * k + t] */
	k_sgemm_pack_b(kr, k, m, wt, (float *)(h + 1));
}

/* Scratch of the product of n rows (read in place, or packed per call) by
 * packed weights on kernel kr. */
static size_t
product_scratch(const k_gemm_kernel *kr, int64_t n, int64_t k, int64_t m, bool in_place, int slots)
{
	static const float placeholder;
	k_sgemm_op op = fc_op(n, k, m, NULL, &placeholder, NULL, NULL);
	op.a_in_place = in_place;
	return k_sgemm_parallel_scratch_bytes(kr, &op, slots);
}

void
k_fully_connected_pack(int64_t n, int64_t k, int64_t m, const float *w, void *packed)
{
	pack_weights(k_gemm_kernel_for(k_cpu_isa(), n, m), k, m, w, packed);
}

size_t
k_fully_connected_scratch_bytes(int64_t n, int64_t k, int64_t m, int slots)
{
	if (k_fully_connected_packed_bytes(n, k, m) == 0)
		return 0;
	return product_scratch(k_gemm_kernel_for(k_cpu_isa(), n, m), n, k, m, false, slots);
}

typedef struct fc_args {
	int64_t n, k, m;
	const float *x, *w, *bias;
	float *y;
} fc_args;

/* Outputs [j0, j1) of every sample: a slice of the weight rows. */
static void
fc_range(void *arg, int64_t j0, int64_t j1)
{
	const fc_args *a = arg;
	int cols = (int)(j1 - j0), k = (int)a->k, m = (int)a->m;
	if (a->n == 1)
		cblas_sgemv(CblasRowMajor, CblasNoTrans, cols, k, 1.0f, a->w + j0 * a->k, k, a->x, 1, 0.0f,
		            a->y + j0, 1);
	else
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)a->n, cols, k, 1.0f, a->x, k,
		            a->w + j0 * a->k, k, 0.0f, a->y + j0, m);
	if (a->bias == NULL)
		return;
	for (int64_t i = 0; i < a->n; i++) {
		float *row = a->y + i * a->m;
		for (int64_t j = j0; j < j1; j++)
			row[j] += a->bias[j];
	}
}

void
k_fully_connected(int64_t n, int64_t k, int64_t m, const float *x, const float *w, const void *packed,
                  const float *bias, float *y, void *scratch, int slots, const st_exec_ctx *ctx)
{
	if (n <= 0 || m <= 0)
		return;
	if (packed != NULL) {
		const fc_packed_head *h = packed;
		assert(h->magic == FC_MAGIC && h->k == k && h->m == m);
		k_sgemm_op op = fc_op(n, k, m, x, (const float *)(h + 1), bias, y);
		k_sgemm_parallel(k_gemm_kernel_by_width((k_isa)h->isa, (int)h->nr), &op, scratch, slots, ctx);
		return;
	}
	if (fc_few_rows(n, k)) {
		fc_rows_run(n, k, m, x, w, bias, y, ctx);
		return;
	}
	if (k == 0 || !blas_fits(n, k, m)) {
		k_fully_connected_ref(n, k, m, x, w, bias, y);
		return;
	}
	fc_args a = { n, k, m, x, w, bias, y };
	/* Each piece should carry some 64 k multiply-adds to be worth a thread. */
	int64_t work = n * k, grain = 16;
	if (grain * work < 65536)
		grain = (65536 + work - 1) / work;
	k_parallel_for(ctx, m, grain, fc_range, &a);
}

/* ---- pointwise convolution, channels last ---- */

/* Which tiles an NHWC pointwise product of positions x cout takes: of the
 * level's kernels (main, narrow, few rows, 24 columns, 5 rows), the one whose
 * tiles waste least, the main one unless another saves more than a
 * twentieth. */
static const k_gemm_kernel *
pw_kernel(k_isa isa, int64_t positions, int64_t cout)
{
	const k_gemm_kernel *main_kr = k_gemm_kernel_of(isa);
	if (main_kr == NULL)
		main_kr = &k_gemm_kernel_portable;
	const k_gemm_kernel *best = main_kr;
	double best_use = 0.0;
	const k_gemm_kernel *all[5] = { main_kr, main_kr->narrow, main_kr->few_rows, main_kr->cols24, main_kr->rows5 };
	for (int i = 0; i < 5; i++) {
		const k_gemm_kernel *kr = all[i];
		if (kr == NULL)
			continue;
		double use = (double)positions * (double)cout /
		             ((double)k_round_up(positions, kr->mr) * (double)k_round_up(cout, kr->nr));
		if (i == 0 || use > 1.05 * best_use) {
			best = kr;
			best_use = use;
		}
	}
	return best;
}

/* The kernel to run weights packed by k_pointwise_nhwc_pack on: pw_kernel's
 * choice for the product, as at packing (panels depend on nr alone, so a
 * variant of the same width shares them), else the level's kernel of the
 * header's width. */
static const k_gemm_kernel *
pw_packed_kernel(const fc_packed_head *h, int64_t positions, int64_t cout)
{
	const k_gemm_kernel *kr = pw_kernel((k_isa)h->isa, positions, cout);
	return kr->nr == h->nr ? kr : k_gemm_kernel_by_width((k_isa)h->isa, (int)h->nr);
}

size_t
k_pointwise_nhwc_packed_bytes(int64_t positions, int64_t cin, int64_t cout)
{
	if (positions <= 0 || cout <= 0 || cin < 0)
		return 0;
	return sizeof(fc_packed_head) + k_sgemm_packed_b_bytes(pw_kernel(k_cpu_isa(), positions, cout), cin, cout);
}

void
k_pointwise_nhwc_pack(int64_t positions, int64_t cin, int64_t cout, const float *w, void *packed)
{
	pack_weights(pw_kernel(k_cpu_isa(), positions, cout), cin, cout, w, packed);
}

size_t
k_pointwise_nhwc_scratch_bytes(int64_t positions, int64_t cin, int64_t cout, int slots)
{
	if (positions <= 0 || cout <= 0 || cin < 0)
		return 0;
	return product_scratch(pw_kernel(k_cpu_isa(), positions, cout), positions, cin, cout, true, slots);
}

void
k_pointwise_nhwc(int64_t positions, int64_t cin, int64_t cout, const float *x, const void *packed,
                 const float *bias, float *y, void *scratch, int slots, const k_post *post,
                 const st_exec_ctx *ctx)
{
	if (positions <= 0 || cout <= 0)
		return;
	const fc_packed_head *h = packed;
	assert(h->magic == FC_MAGIC && h->k == cin && h->m == cout);
	k_sgemm_op op = fc_op(positions, cin, cout, x, (const float *)(h + 1), bias, y);
	op.clamp = k_post_clamp(post, &op.lo, &op.hi);
	op.a_in_place = true;
	k_sgemm_parallel(pw_packed_kernel(h, positions, cout), &op, scratch, slots, ctx);
	if (post != NULL && post->on && !op.clamp)
		k_activation(post->act, post->a, post->b, y, positions * cout);
}

void
k_pointwise_nhwc_ref(int64_t positions, int64_t cin, int64_t cout, const float *x, const float *w,
                     const float *bias, float *y)
{
	k_fully_connected_ref(positions, cin, cout, x, w, bias, y);
}

/* ---- pointwise, float16 storage ---- */

/* Floats of one block's widened input and float32 output together: 128
 * KiB, which stays in L2 between the widening, the product and the
 * narrowing. */
#define PW_HALF_FLOATS 32768

/* Positions of one block: a multiple of the tile's rows, within the
 * budget, and no more than an even share of slots threads. */
static int64_t
pw_half_rows(const k_gemm_kernel *kr, int64_t positions, int64_t cin, int64_t cout, int slots)
{
	int64_t mr = kr->mr;
	int64_t rows = PW_HALF_FLOATS / (cin + cout > 0 ? cin + cout : 1) / mr * mr;
	int64_t share = k_round_up(k_div_up(positions, slots > 1 ? slots : 1), mr);
	return k_max64(mr, k_min64(rows, share));
}

/* One slot's scratch: the widened block, its output, the product's own. */
static void
pw_half_layout(const k_gemm_kernel *kr, int64_t rows, int64_t cin, int64_t cout, size_t *in_floats,
               size_t *out_floats, size_t *gemm_bytes)
{
	static const float placeholder;
	*in_floats = k_line_floats(rows * cin);
	*out_floats = k_line_floats(rows * cout);
	k_sgemm_op op = fc_op(rows, cin, cout, NULL, &placeholder, NULL, NULL);
	op.a_in_place = true;
	*gemm_bytes = k_line_floats((int64_t)(k_sgemm_scratch_bytes(kr, &op) / sizeof(float)) + 1) * sizeof(float);
}

size_t
k_pointwise_nhwc_half_scratch_bytes(int64_t positions, int64_t cin, int64_t cout, int slots)
{
	if (positions <= 0 || cout <= 0 || cin < 0)
		return 0;
	const k_gemm_kernel *kr = pw_kernel(k_cpu_isa(), positions, cout);
	size_t in, out, gemm;
	pw_half_layout(kr, pw_half_rows(kr, positions, cin, cout, slots), cin, cout, &in, &out, &gemm);
	return ((in + out) * sizeof(float) + gemm) * (size_t)(slots > 1 ? slots : 1);
}

typedef struct pw_half_args {
	const k_gemm_kernel *kr;
	int64_t positions, cin, cout, rows, blocks, parts;
	const uint16_t *x;
	const float *b_packed, *bias;
	uint16_t *y;
	char *scratch;
	size_t in_floats, out_floats, slot_bytes;
	const k_post *post;
} pw_half_args;

static void
pw_half_parts(void *arg, int64_t c0, int64_t c1)
{
	const pw_half_args *p = arg;
	for (int64_t c = c0; c < c1; c++) {
		float *xa = (float *)(void *)(p->scratch + (size_t)c * p->slot_bytes);
		float *ya = xa + p->in_floats;
		void *gemm = ya + p->out_floats;
		for (int64_t b = c * p->blocks / p->parts; b < (c + 1) * p->blocks / p->parts; b++) {
			int64_t p0 = b * p->rows, n = k_min64(p->rows, p->positions - p0);
			k_half_to_float_array(p->x + p0 * p->cin, xa, n * p->cin);
			k_sgemm_op op = fc_op(n, p->cin, p->cout, xa, p->b_packed, p->bias, ya);
			op.clamp = k_post_clamp(p->post, &op.lo, &op.hi);
			op.a_in_place = true;
			k_sgemm_block(p->kr, &op, 0, n, 0, p->cout, gemm);
			if (p->post != NULL && p->post->on && !op.clamp)
				k_activation(p->post->act, p->post->a, p->post->b, ya, n * p->cout);
			k_float_to_half_array(ya, p->y + p0 * p->cout, n * p->cout);
		}
	}
}

void
k_pointwise_nhwc_half(int64_t positions, int64_t cin, int64_t cout, const uint16_t *x, const void *packed,
                      const float *bias, uint16_t *y, void *scratch, int slots, const k_post *post,
                      const st_exec_ctx *ctx)
{
	if (positions <= 0 || cout <= 0)
		return;
	const fc_packed_head *h = packed;
	assert(h->magic == FC_MAGIC && h->k == cin && h->m == cout);
	const k_gemm_kernel *kr = pw_packed_kernel(h, positions, cout);
	pw_half_args a = { .kr = kr, .positions = positions, .cin = cin, .cout = cout, .x = x,
		           .b_packed = (const float *)(h + 1), .bias = bias, .y = y, .scratch = scratch,
		           .post = post };
	size_t gemm;
	/* The block size k_pointwise_nhwc_half_scratch_bytes sized the slots
	 * for (the kernel packed then is the one in the header). */
	a.rows = pw_half_rows(kr, positions, cin, cout, slots);
	pw_half_layout(kr, a.rows, cin, cout, &a.in_floats, &a.out_floats, &gemm);
	a.slot_bytes = (a.in_floats + a.out_floats) * sizeof(float) + gemm;
	a.blocks = k_div_up(positions, a.rows);
	a.parts = k_slot_parts(ctx, slots, a.blocks);
	k_parallel_for(ctx, a.parts, 1, pw_half_parts, &a);
}

/* ---- matrix multiply ---- */

int
k_matmul_dims_make(const st_shape *a, const st_shape *b, k_matmul_dims *g)
{
	*g = (k_matmul_dims){ 0 };
	if (a->rank < 1 || b->rank < 1)
		return -1;
	bool a_vector = a->rank == 1, b_vector = b->rank == 1;
	g->m = a_vector ? 1 : a->dims[a->rank - 2];
	g->k = a->dims[a->rank - 1];
	g->n = b_vector ? 1 : b->dims[b->rank - 1];
	if ((b_vector ? b->dims[0] : b->dims[b->rank - 2]) != g->k)
		return -1;
	int a_batch = a_vector ? 0 : a->rank - 2, b_batch = b_vector ? 0 : b->rank - 2;
	g->batch_rank = a_batch > b_batch ? a_batch : b_batch;
	/* Element strides of the batch dimensions, right-aligned as numpy does. */
	int64_t a_stride = g->m * g->k, b_stride = g->k * g->n;
	g->batch = 1;
	for (int i = g->batch_rank - 1; i >= 0; i--) {
		int ai = i - (g->batch_rank - a_batch), bi = i - (g->batch_rank - b_batch);
		int64_t da = ai >= 0 ? a->dims[ai] : 1, db = bi >= 0 ? b->dims[bi] : 1;
		if (da != db && da != 1 && db != 1)
			return -1;
		g->batch_dims[i] = da == 1 ? db : da;
		g->a_strides[i] = da == 1 ? 0 : a_stride;
		g->b_strides[i] = db == 1 ? 0 : b_stride;
		a_stride *= da;
		b_stride *= db;
		g->batch *= g->batch_dims[i];
	}
	return 0;
}

void
k_matmul_offsets(const k_matmul_dims *g, int64_t i, int64_t *a_offset, int64_t *b_offset)
{
	int64_t ao = 0, bo = 0;
	for (int d = g->batch_rank - 1; d >= 0; d--) {
		int64_t index = i % g->batch_dims[d];
		i /= g->batch_dims[d];
		ao += index * g->a_strides[d];
		bo += index * g->b_strides[d];
	}
	*a_offset = ao;
	*b_offset = bo;
}

void
k_matmul_ref(const k_matmul_dims *g, const float *a, const float *b, float *out)
{
	for (int64_t i = 0; i < g->batch; i++) {
		int64_t ao, bo;
		k_matmul_offsets(g, i, &ao, &bo);
		const float *A = a + ao, *B = b + bo;
		float *C = out + i * g->m * g->n;
		for (int64_t r = 0; r < g->m; r++) {
			for (int64_t c = 0; c < g->n; c++) {
				double sum = 0;
				for (int64_t t = 0; t < g->k; t++)
					sum += (double)A[r * g->k + t] * B[t * g->n + c];
				C[r * g->n + c] = (float)sum;
			}
		}
	}
}

typedef struct matmul_args {
	const k_matmul_dims *g;
	const void *a, *b;
	void *out;
	int64_t col_blocks, col_block; /* columns of each output cut into blocks */
} matmul_args;

/* Tasks are (batch entry, column block) pairs. */
static void
matmul_range(void *arg, int64_t t0, int64_t t1)
{
	const matmul_args *p = arg;
	const k_matmul_dims *g = p->g;
	for (int64_t t = t0; t < t1; t++) {
		int64_t i = t / p->col_blocks, j0 = (t % p->col_blocks) * p->col_block;
		int64_t j1 = j0 + p->col_block < g->n ? j0 + p->col_block : g->n;
		int64_t ao, bo;
		k_matmul_offsets(g, i, &ao, &bo);
		const float *A = (const float *)p->a + ao, *B = (const float *)p->b + bo;
		float *C = (float *)p->out + i * g->m * g->n;
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)g->m, (int)(j1 - j0), (int)g->k,
		            1.0f, A, (int)g->k, B + j0, (int)g->n, 0.0f, C + j0, (int)g->n);
	}
}

/* One product of the batch as our SGEMM sees it (the operands set later). */
static k_sgemm_op
matmul_op(const k_matmul_dims *g)
{
	return (k_sgemm_op){ .m = g->m, .n = g->n, .k = g->k, .a = { NULL, g->k, 1 }, .b = { NULL, g->n, 1 },
		             .ldc = g->n };
}

size_t
k_matmul_scratch_bytes(const k_matmul_dims *g, int slots)
{
	if (!matmul_own(g))
		return 0;
	k_sgemm_op op = matmul_op(g);
	return k_sgemm_parallel_scratch_bytes(k_gemm_kernel_for(k_cpu_isa(), g->m, g->n), &op, slots);
}

typedef struct own_matmul {
	const k_matmul_dims *g;
	const k_gemm_kernel *kr;
	const float *a, *b;
	float *out;
	char *scratch;
	size_t slot_bytes;
	int64_t parts;  /* pieces of each product: blocks of column (or row) panels */
	bool by_rows;
	int64_t chunks, tasks;
} own_matmul;

/* Chunk c of the (batch entry, piece) tasks, on scratch slot c. */
static void
own_matmul_chunks(void *arg, int64_t c0, int64_t c1)
{
	const own_matmul *p = arg;
	const k_matmul_dims *g = p->g;
	int64_t panels = p->by_rows ? (g->m + p->kr->mr - 1) / p->kr->mr : (g->n + p->kr->nr - 1) / p->kr->nr;
	for (int64_t c = c0; c < c1; c++) {
		void *slot = p->scratch + (size_t)c * p->slot_bytes;
		for (int64_t t = c * p->tasks / p->chunks; t < (c + 1) * p->tasks / p->chunks; t++) {
			int64_t i = t / p->parts, part = t % p->parts, ao, bo;
			k_matmul_offsets(g, i, &ao, &bo);
			k_sgemm_op op = matmul_op(g);
			op.a.data = p->a + ao;
			op.b.data = p->b + bo;
			op.c = p->out + i * g->m * g->n;
			int64_t q0 = part * panels / p->parts, q1 = (part + 1) * panels / p->parts;
			if (p->by_rows) {
				int64_t r1 = q1 * p->kr->mr < g->m ? q1 * p->kr->mr : g->m;
				k_sgemm_block(p->kr, &op, q0 * p->kr->mr, r1, 0, g->n, slot);
			} else {
				int64_t j1 = q1 * p->kr->nr < g->n ? q1 * p->kr->nr : g->n;
				k_sgemm_block(p->kr, &op, 0, g->m, q0 * p->kr->nr, j1, slot);
			}
		}
	}
}

/* Our SGEMM over the batch: each thread takes whole products while there
 * are enough, and pieces of them otherwise. */
static void
matmul_on_own(const k_matmul_dims *g, const float *a, const float *b, float *out, void *scratch, int slots,
              const st_exec_ctx *ctx)
{
	const k_gemm_kernel *kr = k_gemm_kernel_for(k_cpu_isa(), g->m, g->n);
	int threads = ctx && ctx->parallel_for ? ctx->n_threads : 1;
	if (threads > slots)
		threads = slots;
	if ((double)g->batch * (double)g->m * (double)g->n * (double)g->k < 262144.0)
		threads = 1;
	k_sgemm_op op = matmul_op(g);
	own_matmul p = { .g = g, .kr = kr, .a = a, .b = b, .out = out, .scratch = scratch, .parts = 1 };
	p.slot_bytes = k_sgemm_parallel_scratch_bytes(kr, &op, 1);
	if (g->batch < threads) {
		int64_t mp = (g->m + kr->mr - 1) / kr->mr, np = (g->n + kr->nr - 1) / kr->nr;
		int64_t want = (threads + g->batch - 1) / g->batch;
		p.by_rows = np < want && mp > np;
		int64_t panels = p.by_rows ? mp : np;
		p.parts = want < panels ? want : panels;
	}
	p.tasks = g->batch * p.parts;
	p.chunks = p.tasks < threads ? p.tasks : (threads < 1 ? 1 : threads);
	k_parallel_for(ctx, p.chunks, 1, own_matmul_chunks, &p);
}

void
k_matmul(const k_matmul_dims *g, const float *a, const float *b, float *out, void *scratch, int slots,
         const st_exec_ctx *ctx)
{
	if (g->batch == 0 || g->m == 0 || g->n == 0)
		return;
	if (matmul_own(g)) {
		matmul_on_own(g, a, b, out, scratch, slots, ctx);
		return;
	}
	if (g->k == 0 || !blas_fits(g->m, g->k, g->n)) {
		k_matmul_ref(g, a, b, out);
		return;
	}
	/* With fewer matrices than threads, the columns are shared out too. */
	int threads = ctx ? ctx->n_threads : 1;
	int64_t col_blocks = 1;
	if (g->batch < threads && g->n >= 32) {
		col_blocks = (threads + g->batch - 1) / g->batch;
		if (col_blocks > g->n / 16)
			col_blocks = g->n / 16;
	}
	int64_t col_block = (g->n + col_blocks - 1) / col_blocks;
	col_blocks = (g->n + col_block - 1) / col_block;
	matmul_args p = { g, a, b, out, col_blocks, col_block };
	int64_t work = g->m * g->k * col_block, grain = 1;
	if (work < 65536)
		grain = (65536 + work - 1) / work;
	k_parallel_for(ctx, g->batch * col_blocks, grain, matmul_range, &p);
}

/* Rows of every output matrix, as (batch entry, row) pairs; the sums are
 * formed in unsigned arithmetic so that overflow wraps instead of being
 * undefined. */
static void
matmul_i32_range(void *arg, int64_t t0, int64_t t1)
{
	const matmul_args *p = arg;
	const k_matmul_dims *g = p->g;
	for (int64_t t = t0; t < t1; t++) {
		int64_t i = t / g->m, r = t % g->m, ao, bo;
		k_matmul_offsets(g, i, &ao, &bo);
		const int32_t *A = (const int32_t *)p->a + ao + r * g->k, *B = (const int32_t *)p->b + bo;
		int32_t *C = (int32_t *)p->out + (i * g->m + r) * g->n;
		for (int64_t c = 0; c < g->n; c++) {
			uint32_t sum = 0;
			for (int64_t s = 0; s < g->k; s++)
				sum += (uint32_t)A[s] * (uint32_t)B[s * g->n + c];
			C[c] = (int32_t)sum;
		}
	}
}

static void
matmul_i64_range(void *arg, int64_t t0, int64_t t1)
{
	const matmul_args *p = arg;
	const k_matmul_dims *g = p->g;
	for (int64_t t = t0; t < t1; t++) {
		int64_t i = t / g->m, r = t % g->m, ao, bo;
		k_matmul_offsets(g, i, &ao, &bo);
		const int64_t *A = (const int64_t *)p->a + ao + r * g->k, *B = (const int64_t *)p->b + bo;
		int64_t *C = (int64_t *)p->out + (i * g->m + r) * g->n;
		for (int64_t c = 0; c < g->n; c++) {
			uint64_t sum = 0;
			for (int64_t s = 0; s < g->k; s++)
				sum += (uint64_t)A[s] * (uint64_t)B[s * g->n + c];
			C[c] = (int64_t)sum;
		}
	}
}

static int64_t
int_matmul_grain(const k_matmul_dims *g)
{
	int64_t work = g->k * g->n;
	return work >= 16384 ? 1 : (16384 + work - 1) / (work ? work : 1);
}

void
k_matmul_i32(const k_matmul_dims *g, const int32_t *a, const int32_t *b, int32_t *out,
             const st_exec_ctx *ctx)
{
	matmul_args p = { g, a, b, out, 1, 0 };
	k_parallel_for(ctx, g->batch * g->m, int_matmul_grain(g), matmul_i32_range, &p);
}

void
k_matmul_i64(const k_matmul_dims *g, const int64_t *a, const int64_t *b, int64_t *out,
             const st_exec_ctx *ctx)
{
	matmul_args p = { g, a, b, out, 1, 0 };
	k_parallel_for(ctx, g->batch * g->m, int_matmul_grain(g), matmul_i64_range, &p);
}
