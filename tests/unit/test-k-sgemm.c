/* Unit tests: our SGEMM (kernels/cpu/k-sgemm.h) against the loops that sum
 * in double, at every SIMD level this machine has, the choice of level
 * (kernels/cpu/k-cpu.h), and the convolutions on it that run with the
 * product's roles swapped (k-conv-gemm.c) against k_conv_ref. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "k-helpers.h"

#include "k-conv-gemm.h"
#include "k-cpu.h"
#include "k-nn.h"
#include "k-sgemm.h"

/* ---- helpers ---- */


/* Their kernels, narrow, few-rows and 24-column variants included. */
static int
kernels(const k_gemm_kernel **out)
{
	k_isa have[K_ISA_COUNT];
	int n = 0, count = test_isa_levels(have);
	for (int l = 0; l < count; l++) {
		const k_gemm_kernel *kr = k_gemm_kernel_of(have[l]);
		out[n++] = kr;
		if (kr->narrow)
			out[n++] = kr->narrow;
		if (kr->few_rows)
			out[n++] = kr->few_rows;
		if (kr->cols24)
			out[n++] = kr->cols24;
	}
	return n;
}

/* ---- the level ---- */

Test(k_sgemm, isa_names)
{
	for (int i = 0; i < K_ISA_COUNT; i++) {
		k_isa back;
		cr_assert_eq(k_cpu_isa_parse(k_cpu_isa_name((k_isa)i), &back), 0);
		cr_assert_eq(back, (k_isa)i);
	}
	k_isa isa = K_ISA_AVX2;
	cr_assert_eq(k_cpu_isa_parse("sse9", &isa), -1);
	cr_assert_eq(isa, K_ISA_AVX2);
	cr_assert(k_cpu_isa_supported(K_ISA_PORTABLE));
	cr_assert(k_cpu_isa_supported(k_cpu_isa_best()));
	cr_assert(k_cpu_isa_supported(k_cpu_isa()));
}

/* Forcing a level: those the machine has are taken (and their kernel is
 * the one used), the others refused without changing the choice. */
Test(k_sgemm, isa_force)
{
	k_isa before = k_cpu_isa();
	for (int i = 0; i < K_ISA_COUNT; i++) {
		k_isa isa = (k_isa)i, now = k_cpu_isa();
		if (k_cpu_isa_supported(isa)) {
			cr_assert_eq(k_cpu_isa_force(isa), 0);
			cr_assert_eq(k_cpu_isa(), isa);
			cr_assert_eq(k_gemm_kernel_now()->isa, isa);
			cr_assert_not_null(k_gemm_kernel_of(isa));
		} else {
			cr_assert_eq(k_cpu_isa_force(isa), -1);
			cr_assert_eq(k_cpu_isa(), now);
		}
	}
	cr_assert_eq(k_cpu_isa_force(before), 0);
}

Test(k_sgemm, kernel_tables_are_sane)
{
	const k_gemm_kernel *all[4 * K_ISA_COUNT];
	int n = kernels(all);
	for (int i = 0; i < n; i++) {
		const k_gemm_kernel *kr = all[i];
		cr_assert(k_cpu_isa_supported(kr->isa));
		cr_assert_eq(k_gemm_kernel_by_width(kr->isa, kr->nr), kr);
		cr_assert(kr->mr >= 1 && kr->nr >= 1 && kr->mr * kr->nr <= K_GEMM_MAX_TILE);
		cr_assert(kr->kc >= 1 && kr->nc % kr->nr == 0 && kr->mc % kr->mr == 0);
		if (kr->narrow)
			cr_assert(kr->narrow->nr < kr->nr && kr->narrow->isa == kr->isa && kr->narrow->narrow == NULL);
		if (kr->few_rows)
			cr_assert(kr->few_rows->mr < kr->mr && kr->few_rows->isa == kr->isa &&
			          kr->few_rows->few_rows == NULL && kr->few_rows->narrow == NULL);
		if (kr->cols24)
			cr_assert(kr->cols24->nr == 24 && kr->cols24->isa == kr->isa && kr->cols24->cols24 == NULL);
	}
	/* The narrow variant is taken only for few columns. */
	const k_gemm_kernel *kr = k_gemm_kernel_of(k_cpu_isa_best());
	cr_assert_eq(k_gemm_kernel_for(kr->isa, 512, 3136), kr);
	if (kr->narrow)
		cr_assert_eq(k_gemm_kernel_for(kr->isa, 512, 49), kr->narrow);
}

/* ---- products ---- */

enum {
	A_TRANSPOSED = 1 << 0,  /* a column-major A */
	B_TRANSPOSED = 1 << 1,
	PADDED = 1 << 2,        /* leading dimensions longer than the rows */
	ACCUMULATE = 1 << 3,
	ROW_BIAS = 1 << 4,
	COL_BIAS = 1 << 5,
	A_PACKED = 1 << 6,      /* packed beforehand */
	B_PACKED = 1 << 7,
	A_IN_PLACE = 1 << 8,    /* A read where it lies (row-major A only) */
	CLAMP = 1 << 9,         /* results clamped as they are stored */
	FLAG_ALL = (1 << 10) - 1,
};

typedef struct run_way {
	const char *name;
	st_exec_ctx ctx;
	bool parallel;
	int slots;
} run_way;

static const run_way ways[] = {
	{ "k_sgemm", { 0 }, false, 1 },
	{ "parallel, 1 slot", { .n_threads = 2, .parallel_for = test_threads_run }, true, 1 },
	{ "parallel, 2 threads", { .n_threads = 2, .parallel_for = test_threads_run }, true, 2 },
	{ "parallel, 3 threads of 4 slots", { .n_threads = 3, .parallel_for = test_threads_run }, true, 4 },
};

/* One product with the given layout flags, every way, against the
 * reference; C's padding must come back untouched. */
static void
check_product(const k_gemm_kernel *kr, test_rng *r, int64_t m, int64_t n, int64_t k, int flags)
{
	int64_t pad = flags & PADDED ? 3 : 0;
	int64_t lda = (flags & A_TRANSPOSED ? m : k) + pad, ldb = (flags & B_TRANSPOSED ? k : n) + pad;
	int64_t ldc = n + pad;
	float *a = test_random_floats(r, (flags & A_TRANSPOSED ? k : m) * lda);
	float *b = test_random_floats(r, (flags & B_TRANSPOSED ? n : k) * ldb);
	float *c0 = test_random_floats(r, m * ldc), *rb = test_random_floats(r, m), *cb = test_random_floats(r, n);
	k_sgemm_op op = {
		.m = m, .n = n, .k = k, .ldc = ldc, .accumulate = flags & ACCUMULATE,
		.a = flags & A_TRANSPOSED ? (k_matrix){ a, 1, lda } : (k_matrix){ a, lda, 1 },
		.b = flags & B_TRANSPOSED ? (k_matrix){ b, 1, ldb } : (k_matrix){ b, ldb, 1 },
		.row_bias = flags & ROW_BIAS ? rb : NULL, .col_bias = flags & COL_BIAS ? cb : NULL,
		.a_in_place = (flags & A_IN_PLACE) && !(flags & A_TRANSPOSED),
		.clamp = flags & CLAMP, .lo = -0.3f, .hi = 0.4f,
	};
	size_t c_bytes = sizeof(float) * (size_t)(m * ldc > 0 ? m * ldc : 1);
	float *want = malloc(c_bytes);
	/* The error bound scales with the unclamped results. */
	memcpy(want, c0, sizeof *want * (size_t)(m * ldc));
	op.c = want;
	op.clamp = false;
	k_sgemm_ref(&op);
	double scale = test_max_abs(want, m * ldc);
	op.clamp = flags & CLAMP;
	memcpy(want, c0, sizeof *want * (size_t)(m * ldc));
	k_sgemm_ref(&op);
	float *pa = NULL, *pb = NULL;
	if (flags & A_PACKED) {
		pa = aligned_alloc(64, k_sgemm_packed_a_bytes(kr, m, k) + 64);
		k_sgemm_pack_a(kr, m, k, op.a, pa);
		op.a_packed = pa;
		op.a = (k_matrix){ NULL, 0, 0 };
	}
	if (flags & B_PACKED) {
		pb = aligned_alloc(64, k_sgemm_packed_b_bytes(kr, k, n) + 64);
		k_sgemm_pack_b(kr, k, n, op.b, pb);
		op.b_packed = pb;
		op.b = (k_matrix){ NULL, 0, 0 };
	}
	for (size_t w = 0; w < sizeof ways / sizeof ways[0]; w++) {
		float *got = malloc(c_bytes);
		memcpy(got, c0, sizeof *got * (size_t)(m * ldc));
		op.c = got;
		size_t bytes = ways[w].parallel ? k_sgemm_parallel_scratch_bytes(kr, &op, ways[w].slots)
		                                : k_sgemm_scratch_bytes(kr, &op);
		unsigned char *scratch = test_scratch_new(bytes);
		if (ways[w].parallel)
			k_sgemm_parallel(kr, &op, scratch, ways[w].slots, &ways[w].ctx);
		else
			k_sgemm(kr, &op, scratch);
		char what[256], why[256];
		snprintf(what, sizeof what, "%s %lldx%lldx%lld flags 0x%x, %s", k_cpu_isa_name(kr->isa), (long long)m,
		         (long long)n, (long long)k, (unsigned)flags, ways[w].name);
		test_scratch_free(scratch, bytes, what);
		cr_assert(test_allclose_scaled(got, want, m * ldc, 1e-5, scale, why, sizeof why), "%s: %s", what, why);
		for (int64_t i = 0; i < m; i++) {
			for (int64_t j = n; j < ldc; j++)
				cr_assert_eq(got[i * ldc + j], c0[i * ldc + j], "%s: wrote C's padding", what);
		}
		free(got);
	}
	free(a), free(b), free(c0), free(rb), free(cb), free(want), free(pa), free(pb);
}

/* Sizes at the edges of the register tile and of the cache blocks, sizes
 * of 1, primes, and depths long enough for several blocks. */
Test(k_sgemm, edges_match_reference)
{
	test_rng r = { 0x51ed2701u };
	const k_gemm_kernel *all[4 * K_ISA_COUNT];
	int count = kernels(all);
	for (int l = 0; l < count; l++) {
		const k_gemm_kernel *kr = all[l];
		int64_t mr = kr->mr, nr = kr->nr;
		int64_t shapes[][3] = {
			{ 1, 1, 1 }, { 1, 1, 777 }, { 1, 97, 3 }, { 61, 1, 5 }, { mr, nr, 1 },
			{ mr + 1, nr + 1, 7 }, { 2 * mr - 1, 3 * nr + 5, kr->kc + 1 }, { 97, 61, 2 * kr->kc + 3 },
			{ kr->mc + mr + 3, 2, 9 }, { 5, kr->nc + nr + 1, 11 }, { 13, 29, 4099 }, { 3, 5, 0 },
		};
		for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
			for (int f = 0; f < 4; f++) {
				int flags = (int)test_pick(&r, 0, FLAG_ALL);
				check_product(kr, &r, shapes[s][0], shapes[s][1], shapes[s][2], flags);
			}
		}
	}
}

Test(k_sgemm, random_shapes_match_reference)
{
	test_rng r = { 0x9e3779b97f4a7c15u };
	const k_gemm_kernel *all[4 * K_ISA_COUNT];
	int count = kernels(all);
	for (int l = 0; l < count; l++) {
		const k_gemm_kernel *kr = all[l];
		for (int i = 0; i < 40; i++) {
			int64_t m = test_pick(&r, 1, 70), n = test_pick(&r, 1, 150), k = test_pick(&r, 1, 900);
			check_product(kr, &r, m, n, k, (int)test_pick(&r, 0, FLAG_ALL));
		}
	}
}

/* Every flag on its own, and all together, on one awkward shape. */
Test(k_sgemm, each_flag)
{
	test_rng r = { 77 };
	const k_gemm_kernel *all[4 * K_ISA_COUNT];
	int count = kernels(all);
	for (int l = 0; l < count; l++) {
		const k_gemm_kernel *kr = all[l];
		for (int bit = 0; bit <= 10; bit++)
			check_product(kr, &r, 23, 53, 131, bit == 10 ? FLAG_ALL : 1 << bit);
	}
}

/* The level in use is the one k_sgemm_parallel's callers get: the kernels
 * of k_conv and k_matmul follow a forced level. */
Test(k_sgemm, kernel_now_follows_force)
{
	k_isa have[K_ISA_COUNT];
	int count = test_isa_levels(have);
	for (int l = 0; l < count; l++) {
		cr_assert_eq(k_cpu_isa_force(have[l]), 0);
		cr_assert_eq(k_gemm_kernel_now(), k_gemm_kernel_of(have[l]));
	}
}

/* ---- convolutions with positions as rows ---- */

/* One convolution through k_conv_gemm under swap mode `mode`, its filters
 * as they are and packed beforehand, every way of running, against
 * k_conv_ref. */
static void
check_swapped_conv(test_rng *r, const k_window *w, int mode)
{
	k_geometry g;
	k_geometry_expand(w, &g);
	int64_t n_in = g.batch * g.in_channels * g.in_size, n_out = g.batch * g.out_channels * g.out_size;
	float *x = test_random_floats(r, n_in), *filters = test_random_floats(r, g.out_channels * g.in_per_group * g.kernel_size);
	float *bias = test_pick(r, 0, 1) ? test_random_floats(r, g.out_channels) : NULL;
	float *want = malloc((size_t)n_out * sizeof *want);
	k_conv_ref(w, x, filters, bias, want);
	k_conv_gemm_force_swap(mode);
	size_t packed_bytes = k_conv_gemm_packed_bytes(&g);
	void *packed = aligned_alloc(64, (packed_bytes + 63) / 64 * 64);
	k_conv_gemm_pack(&g, filters, packed);
	for (size_t v = 0; v < sizeof ways / sizeof ways[0]; v++) {
		for (int pre = 0; pre < 2; pre++) {
			size_t bytes = k_conv_gemm_scratch_bytes(&g, ways[v].slots, pre);
			unsigned char *scratch = test_scratch_new(bytes);
			float *got = malloc((size_t)n_out * sizeof *got);
			for (int64_t i = 0; i < n_out; i++)
				got[i] = NAN;
			k_conv_gemm(&g, x, filters, pre ? packed : NULL, bias, got, scratch, ways[v].slots, NULL,
			            ways[v].parallel ? &ways[v].ctx : NULL);
			char what[256], why[256];
			snprintf(what, sizeof what,
			         "%s swap %d: %lld x %lld -> %lld, %lldx%lld, kernel %lldx%lld stride %lld,%lld "
			         "pad %lld,%lld dilation %lld, %s%s",
			         k_cpu_isa_name(k_cpu_isa()), mode, (long long)g.batch, (long long)g.in_channels,
			         (long long)g.out_channels, (long long)g.in[1], (long long)g.in[2], (long long)g.kernel[1],
			         (long long)g.kernel[2], (long long)g.stride[1], (long long)g.stride[2], (long long)g.pad[1],
			         (long long)g.pad[2], (long long)g.dilation[1], ways[v].name, pre ? ", packed" : "");
			test_scratch_free(scratch, bytes, what);
			cr_assert(test_allclose(got, want, n_out, 1e-5, why, sizeof why), "%s: %s", what, why);
			free(got);
		}
	}
	k_conv_gemm_force_swap(0);
	free(packed), free(x), free(filters), free(bias), free(want);
}

/* A 2-D window on a small image with random sizes; pads at most the
 * kernel's extent less one, as the models have. */
static k_window
small_window(test_rng *r)
{
	k_window w = { .spatial = 2, .batch = test_pick(r, 1, 2), .in_channels = test_pick(r, 1, 40), .groups = 1 };
	w.out_channels = test_pick(r, 1, 150);
	for (int i = 0; i < 2; i++) {
		for (;;) {
			w.in[i] = test_pick(r, 1, 19);
			w.kernel[i] = test_pick(r, 1, 4);
			w.stride[i] = test_pick(r, 1, 3);
			w.dilation[i] = test_pick(r, 1, 2);
			int64_t extent = (w.kernel[i] - 1) * w.dilation[i] + 1;
			w.pad_begin[i] = test_pick(r, 0, extent - 1);
			w.pad_end[i] = test_pick(r, 0, extent - 1);
			int64_t padded = w.in[i] + w.pad_begin[i] + w.pad_end[i];
			if (padded < extent)
				continue;
			w.out[i] = (padded - extent) / w.stride[i] + 1;
			break;
		}
	}
	return w;
}

static k_window
square_window(int64_t c, int64_t oc, int64_t hw, int64_t kernel, int64_t stride, int64_t pad)
{
	k_window w = { .spatial = 2, .batch = 1, .in_channels = c, .out_channels = oc, .groups = 1 };
	for (int i = 0; i < 2; i++) {
		w.in[i] = hw;
		w.kernel[i] = kernel;
		w.stride[i] = stride;
		w.dilation[i] = 1;
		w.pad_begin[i] = w.pad_end[i] = pad;
		w.out[i] = (hw + 2 * pad - kernel) / stride + 1;
	}
	return w;
}

/* Random small convolutions with the roles swapped wherever they can be,
 * at every level (the few-rows tile where a level has one). */
Test(k_sgemm, swapped_conv_random_match_reference)
{
	test_rng r = { 0x7f4a7c159e3779b9u };
	k_isa have[K_ISA_COUNT];
	int count = test_isa_levels(have);
	for (int l = 0; l < count; l++) {
		cr_assert_eq(k_cpu_isa_force(have[l]), 0);
		for (int i = 0; i < 25; i++) {
			k_window w = small_window(&r);
			check_swapped_conv(&r, &w, 1);
		}
	}
	k_cpu_isa_force(k_cpu_isa_best());
}

/* Which convolutions the default swaps (k_conv_gemm_swaps): small images
 * wherever the tiles fill; on AVX2 up to 14 x 14, but stride-1 1x1 layers
 * only with at least 160 input and 128 output channels; on AVX-512 deep
 * products with many output channels up to 14 x 14, never thin or narrow
 * ones. */
Test(k_sgemm, swap_chosen_for_small_and_deep_products)
{
	struct {
		k_window w;
		bool swaps[K_ISA_COUNT]; /* by level */
	} cases[] = {
		{ square_window(512, 512, 7, 3, 1, 1), { [K_ISA_PORTABLE] = true, [K_ISA_AVX2] = true, [K_ISA_AVX512] = true } },
		{ square_window(512, 1000, 13, 1, 1, 0), { [K_ISA_AVX2] = true, [K_ISA_AVX512] = true } },
		{ square_window(1024, 256, 14, 1, 1, 0), { [K_ISA_AVX2] = true, [K_ISA_AVX512] = true } },
		{ square_window(32, 256, 14, 3, 1, 1), { [K_ISA_AVX2] = true, [K_ISA_AVX512] = true } },
		{ square_window(64, 256, 13, 1, 1, 0), { false } },                /* thin */
		{ square_window(512, 64, 13, 1, 1, 0), { false } },                /* 64 outputs */
		{ square_window(160, 960, 7, 1, 1, 0),
		  { [K_ISA_PORTABLE] = true, [K_ISA_AVX2] = true, [K_ISA_AVX512] = true } },
		{ square_window(128, 128, 14, 1, 1, 0), { false } },
		{ square_window(64, 256, 13, 3, 1, 1), { [K_ISA_AVX2] = true, [K_ISA_AVX512] = true } }, /* deep 3x3 */
		{ square_window(256, 512, 14, 1, 2, 0), /* 1x1 stride 2 */
		  { [K_ISA_PORTABLE] = true, [K_ISA_AVX2] = true, [K_ISA_AVX512] = true } },
		{ square_window(512, 512, 28, 1, 1, 0), { false } },               /* too many positions */
	};
	k_isa have[K_ISA_COUNT];
	int count = test_isa_levels(have);
	for (int l = 0; l < count; l++) {
		cr_assert_eq(k_cpu_isa_force(have[l]), 0);
		for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
			k_geometry g;
			k_geometry_expand(&cases[i].w, &g);
			bool want = cases[i].swaps[have[l]];
			cr_expect_eq(k_conv_gemm_swaps(&g), want, "%s case %zu: swaps %d", k_cpu_isa_name(have[l]), i,
			             !want);
		}
	}
	k_cpu_isa_force(k_cpu_isa_best());
}

/* The network shapes the swapped path is for (channels cut down where the
 * full ones would make a slow test), under every mode: forced, chosen as
 * the default chooses, and never. */
Test(k_sgemm, swapped_conv_network_shapes)
{
	test_rng r = { 1234 };
	k_window shapes[] = {
		square_window(96, 130, 7, 3, 1, 1),  /* a 7x7 3x3, channels off the tile */
		square_window(64, 128, 14, 3, 2, 1), /* 3x3/2 to 7x7 */
		square_window(64, 128, 14, 1, 2, 0), /* 1x1/2 projection */
		square_window(160, 96, 7, 1, 1, 0),  /* 1x1 at 7x7 */
		square_window(24, 80, 14, 1, 1, 0),  /* 1x1 at 14x14 */
		square_window(20, 70, 14, 3, 1, 1),  /* 3x3 at 14x14 */
		square_window(7, 5, 9, 3, 1, 1),     /* few of everything */
		square_window(256, 256, 13, 1, 1, 0), /* deep 1x1 at 13x13 (SqueezeNet's classifier) */
		square_window(32, 256, 14, 3, 1, 1), /* deep 3x3 at 14x14 */
	};
	k_isa have[K_ISA_COUNT];
	int count = test_isa_levels(have);
	for (int l = 0; l < count; l++) {
		cr_assert_eq(k_cpu_isa_force(have[l]), 0);
		for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
			for (int mode = -1; mode <= 1; mode++)
				check_swapped_conv(&r, &shapes[i], mode);
	}
	k_cpu_isa_force(k_cpu_isa_best());
}
