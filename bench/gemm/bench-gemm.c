/*
 * Strata's own SGEMM against OpenBLAS, and the convolutions on it against
 * the im2col + OpenBLAS path they replace, measured side by side in one
 * process (make bench-gemm; not part of make check). Both run on the
 * engine's thread pool: OpenBLAS single-threaded per chunk, as Strata's
 * kernels call it. Runs of the two alternate in short bursts, so a busy
 * machine slows both alike; each figure is a median.
 *
 * bench-gemm [--runs N] [--quick] [--resnet] [--small] [--classes] [--winograd] [--blocked] [--cold]
 *            [--cpu-time] [--isa LEVEL]
 *   --quick   leaves out 1024^3
 *   --resnet  adds every convolution shape of ResNet-18
 *   --small   channels-last 1x1 convolutions with and without the prefetch
 *             of the next block of filters, and with uneven column panels
 *             shared out whole or by tiles; convolutions on small images and
 *             with thin depth (ResNet-18,
 *             MobileNetV2): positions as the product's columns against
 *             positions as its rows (k_conv_gemm_force_swap), and the
 *             choice made by default
 *   --classes adds fully connected and matmul shape classes, ours and
 *             OpenBLAS through their kernels, and which one the rule picks
 *   --winograd  the 3x3 stride-1 shapes of ResNet-18 and SqueezeNet 1.1:
 *             the path k_conv_packed took before Winograd against F(2,3)
 *             and F(4,3), with their worst error against k_conv_ref
 *   --blocked ResNet-18's convolutions and two 1x1 ones as k_conv runs them
 *             (NCHW) without and with the channel-blocked kernel (k-nchwc.c,
 *             its conversions timed), and that kernel alone (a blocked plan)
 *             with two slice sizes
 *   --cold    every timed run after a 256 MiB sweep: filters come from
 *             memory, as they do in a whole network
 *   --cpu-time  one-thread figures in thread CPU time (for a busy machine)
 */
#include "config.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "k-conv-gemm.h"
#include "k-nn.h"
#include "k-sgemm.h"
#include "k-nchwc.h"
#include "k-winograd.h"
#include "st-engine.h"

/* FMA peak of one Zen 4 core measured by ../shared/research/perf-anchors.md
 * (16 independent chains, zmm or ymm alike). */
#define PEAK_PER_CORE 117.4

/* With --cpu-time, one-thread figures are the calling thread's CPU time,
 * which a busy machine does not inflate by preempting it (the work all
 * runs on that thread); two-thread figures are always wall time. */
static bool cpu_time;
static int timing_threads;

static double
now(void)
{
	struct timespec t;
	clock_gettime(cpu_time && timing_threads == 1 ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int
compare_doubles(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double
median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, compare_doubles);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void *
xalloc(size_t bytes)
{
	void *p = aligned_alloc(64, (bytes + 63) / 64 * 64 + 64);
	if (p == NULL) {
		fprintf(stderr, "bench-gemm: out of memory\n");
		exit(3);
	}
	return p;
}

static float *
random_floats(int64_t n, unsigned seed)
{
	float *v = xalloc((size_t)n * sizeof *v);
	for (int64_t i = 0; i < n; i++) {
		seed = seed * 1664525u + 1013904223u;
		v[i] = (float)(seed >> 8) / 16777216.0f - 0.5f;
	}
	return v;
}

/* ---- what is timed ---- */

/* One way of doing the work, run by the timing loop. */
typedef struct contender {
	const char *name;
	void (*run)(void *arg);
	void *arg;
	double *times; /* ms */
} contender;

/*
 * Alternates the contenders in bursts after `warmup` rounds and leaves each
 * one's median of `runs` in ms in *out. A burst is one untimed run, which
 * brings that contender's own data back into the caches the other one
 * used, and then up to two timed ones: steady state, as in a network that
 * runs layer after layer.
 */
/* --cold: every timed run comes after a sweep over EVICT_BYTES, which
 * pushes the contender's filters and data out of the caches, as the rest
 * of a network does between two runs of one layer. */
static bool race_cold;
#define EVICT_BYTES (256u << 20)

static void
evict_caches(void)
{
	static unsigned char *sweep;
	if (sweep == NULL)
		sweep = xalloc(EVICT_BYTES);
	for (size_t i = 0; i < EVICT_BYTES; i += 64)
		sweep[i]++;
}

static void
race(contender *c, int count, int warmup, int runs, double *out)
{
	for (int r = 0; r < warmup; r++) {
		for (int i = 0; i < count; i++)
			c[i].run(c[i].arg);
	}
	if (race_cold) {
		for (int done = 0; done < runs; done++)
			for (int i = 0; i < count; i++) {
				evict_caches();
				double t0 = now();
				c[i].run(c[i].arg);
				c[i].times[done] = (now() - t0) * 1e3;
			}
		for (int i = 0; i < count; i++)
			out[i] = median(c[i].times, runs);
		return;
	}
	for (int done = 0; done < runs;) {
		int burst = runs - done < 2 ? runs - done : 2;
		for (int i = 0; i < count; i++) {
			c[i].run(c[i].arg);
			for (int b = 0; b < burst; b++) {
				double t0 = now();
				c[i].run(c[i].arg);
				c[i].times[done + b] = (now() - t0) * 1e3;
			}
		}
		done += burst;
	}
	for (int i = 0; i < count; i++)
		out[i] = median(c[i].times, runs);
}

/* Ours: the product on one kernel over the pool. */
typedef struct own_gemm {
	const k_gemm_kernel *kr;
	k_sgemm_op op;
	void *scratch;
	int slots;
	const st_exec_ctx *ctx;
} own_gemm;

static void
run_own(void *arg)
{
	own_gemm *g = arg;
	k_sgemm_parallel(g->kr, &g->op, g->scratch, g->slots, g->ctx);
}

/* OpenBLAS: column blocks of C over the pool, one single-threaded call each. */
typedef struct blas_gemm {
	int64_t m, n, k;
	const float *a, *b;
	float *c;
	int64_t chunks;
	const st_exec_ctx *ctx;
} blas_gemm;

static void
blas_range(void *arg, int64_t c0, int64_t c1)
{
	const blas_gemm *g = arg;
	for (int64_t c = c0; c < c1; c++) {
		int64_t j0 = c * g->n / g->chunks / 16 * 16, j1 = c + 1 == g->chunks ? g->n : (c + 1) * g->n / g->chunks / 16 * 16;
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)g->m, (int)(j1 - j0), (int)g->k, 1.0f, g->a,
		            (int)g->k, g->b + j0, (int)g->n, 0.0f, g->c + j0, (int)g->n);
	}
}

static void
run_blas(void *arg)
{
	blas_gemm *g = arg;
	k_parallel_for(g->ctx, g->chunks, 1, blas_range, g);
}

/* A convolution through k_conv: the old path (OpenBLAS forced) or the new
 * one (our SGEMM, filters packed beforehand). */
typedef struct conv_run {
	k_window w;
	const float *x, *weights, *bias;
	void *packed;
	float *y;
	void *scratch;
	int slots;
	const st_exec_ctx *ctx;
} conv_run;

static void
run_conv_old(void *arg)
{
	conv_run *c = arg;
	k_gemm_force(K_GEMM_OPENBLAS);
	k_conv(&c->w, c->x, c->weights, c->bias, c->y, c->scratch, c->slots, c->ctx);
	k_gemm_force(K_GEMM_AUTO);
}

static void
run_conv_new(void *arg)
{
	conv_run *c = arg;
	k_conv_packed(&c->w, c->x, c->weights, c->packed, c->bias, c->y, c->scratch, c->slots, c->ctx);
}

static double
max_difference(const float *a, const float *b, int64_t n, double *largest)
{
	double d = 0, big = 0;
	for (int64_t i = 0; i < n; i++) {
		double e = fabs((double)a[i] - b[i]);
		d = e > d ? e : d;
		big = fabs(b[i]) > big ? fabs(b[i]) : big;
	}
	*largest = big;
	return d;
}

/* Fully connected and matmul through their kernels, with the GEMM forced:
 * the measurements behind own_wins in k-gemm.c. */
typedef struct product_run {
	k_gemm_impl impl;
	bool fc;
	int64_t n, k, m;     /* fully connected */
	k_matmul_dims g;     /* matmul */
	const float *x, *w, *b;
	void *packed;
	float *y;
	void *scratch;
	int slots;
	const st_exec_ctx *ctx;
} product_run;

static void
run_product(void *arg)
{
	product_run *p = arg;
	k_gemm_force(p->impl);
	if (p->fc)
		k_fully_connected(p->n, p->k, p->m, p->x, p->w, p->packed, NULL, p->y, p->scratch, p->slots, p->ctx);
	else
		k_matmul(&p->g, p->x, p->w, p->y, p->scratch, p->slots, p->ctx);
	k_gemm_force(K_GEMM_AUTO);
}

/* One product class: fully connected n x k -> m (fc), or matmul of batch
 * m x k by k x n. Prints ours and OpenBLAS, and which the rule picks. */
static void
bench_product(const char *what, bool fc, int64_t batch, int64_t m, int64_t k, int64_t n, int threads,
              st_exec_ctx *ctx, int runs)
{
	product_run r[2];
	float *x, *w;
	int64_t out;
	k_matmul_dims g = { 0 };
	if (fc) {
		x = random_floats(m * k, 5);
		w = random_floats(n * k, 6);
		out = m * n;
	} else {
		st_shape as = { .dtype = ST_DTYPE_FLOAT32, .rank = 3, .dims = { batch, m, k } };
		st_shape bs = { .dtype = ST_DTYPE_FLOAT32, .rank = 3, .dims = { batch, k, n } };
		k_matmul_dims_make(&as, &bs, &g);
		x = random_floats(batch * m * k, 5);
		w = random_floats(batch * k * n, 6);
		out = batch * m * n;
	}
	for (int i = 0; i < 2; i++) {
		k_gemm_impl impl = i == 0 ? K_GEMM_OWN : K_GEMM_OPENBLAS;
		r[i] = (product_run){ .impl = impl, .fc = fc, .n = m, .k = k, .m = n, .g = g, .x = x, .w = w,
			              .slots = threads, .ctx = ctx };
		k_gemm_force(impl);
		if (fc) {
			size_t bytes = k_fully_connected_packed_bytes(m, k, n);
			if (bytes) {
				r[i].packed = xalloc(bytes);
				k_fully_connected_pack(m, k, n, w, r[i].packed);
			}
			r[i].scratch = xalloc(k_fully_connected_scratch_bytes(m, k, n, threads));
		} else {
			r[i].scratch = xalloc(k_matmul_scratch_bytes(&g, threads));
		}
		r[i].y = xalloc((size_t)out * sizeof(float));
	}
	k_gemm_force(K_GEMM_AUTO);
	bool picks_own = fc ? k_fully_connected_packed_bytes(m, k, n) > 0 : k_matmul_scratch_bytes(&g, 1) > 0;
	double t_own[256], t_blas[256], med[2];
	contender c[2] = { { "own", run_product, &r[0], t_own }, { "openblas", run_product, &r[1], t_blas } };
	timing_threads = threads;
	double flop = 2.0 * (double)batch * (double)m * (double)k * (double)n;
	race(c, 2, 3, flop > 1e9 ? (runs + 1) / 2 : runs, med);
	double largest, diff = max_difference(r[0].y, r[1].y, out, &largest);
	printf("| %-30s | %d | %8.4f | %6.1f | %8.4f | %6.1f | %5.2f | %s | %.1e |\n", what, threads, med[0],
	       flop / med[0] * 1e-6, med[1], flop / med[1] * 1e-6, med[1] / med[0], picks_own ? "ours" : "OpenBLAS",
	       diff / (largest > 0 ? largest : 1));
	for (int i = 0; i < 2; i++)
		free(r[i].packed), free(r[i].scratch), free(r[i].y);
	free(x), free(w);
}

static void
bench_classes(st_exec_ctx *ctxs, int runs)
{
	static const struct {
		const char *what;
		bool fc;
		int64_t batch, m, k, n; /* fc: m samples of k features to n outputs */
	} classes[] = {
		{ "fc 1x512 -> 1000", true, 1, 1, 512, 1000 },
		{ "fc 2x512 -> 1000", true, 1, 2, 512, 1000 },
		{ "fc 4x512 -> 1000", true, 1, 4, 512, 1000 },
		{ "fc 8x512 -> 1000", true, 1, 8, 512, 1000 },
		{ "fc 32x2048 -> 1000", true, 1, 32, 2048, 1000 },
		{ "fc 128x1024 -> 1024", true, 1, 128, 1024, 1024 },
		{ "fc 16x64 -> 10", true, 1, 16, 64, 10 },
		{ "fc 1x4096 -> 4096", true, 1, 1, 4096, 4096 },
		{ "matmul 1 x (1x512 . 512x512)", false, 1, 1, 512, 512 },
		{ "matmul 1 x (4x16 . 16x4)", false, 1, 4, 16, 4 },
		{ "matmul 8 x (64x64 . 64x64)", false, 8, 64, 64, 64 },
		{ "matmul 12 x (197x64 . 64x197)", false, 12, 197, 64, 197 },
		{ "matmul 12 x (197x197 . 197x64)", false, 12, 197, 197, 64 },
		{ "matmul 1 x (256x256 . 256x256)", false, 1, 256, 256, 256 },
		{ "matmul 1 x (3136x64 . 64x64)", false, 1, 3136, 64, 64 },
		{ "matmul 1 x (1024^3)", false, 1, 1024, 1024, 1024 },
	};
	printf("\n| product class | threads | ours ms | GFLOP/s | OpenBLAS ms | GFLOP/s | speed-up | rule picks | max diff / max |\n");
	printf("|---|---|---|---|---|---|---|---|---|\n");
	for (int t = 1; t <= 2; t++) {
		for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++)
			bench_product(classes[i].what, classes[i].fc, classes[i].batch, classes[i].m, classes[i].k,
			              classes[i].n, t, &ctxs[t - 1], runs);
	}
}

/* ---- the report ---- */


typedef struct shape {
	const char *what;
	int64_t m, n, k;
} shape;

static void
bench_gemm(const shape *s, int threads, st_exec_ctx *ctx, int runs)
{
	int64_t m = s->m, n = s->n, k = s->k;
	float *a = random_floats(m * k, 1), *b = random_floats(k * n, 2);
	float *c_blas = xalloc((size_t)(m * n) * sizeof(float));
	const k_gemm_kernel *kernels[K_ISA_COUNT];
	own_gemm own[K_ISA_COUNT];
	contender c[K_ISA_COUNT + 1];
	double times[K_ISA_COUNT + 1][256];
	int count = 0;
	for (int isa = K_ISA_COUNT - 1; isa >= K_ISA_AVX2; isa--) {
		if (!k_cpu_isa_supported((k_isa)isa))
			continue;
		const k_gemm_kernel *kr = k_gemm_kernel_of((k_isa)isa);
		kernels[count] = kr;
		own[count] = (own_gemm){ .kr = kr, .slots = threads, .ctx = ctx };
		own[count].op = (k_sgemm_op){ .m = m, .n = n, .k = k, .a = { a, k, 1 }, .b = { b, n, 1 },
			                      .c = xalloc((size_t)(m * n) * sizeof(float)), .ldc = n };
		own[count].scratch = xalloc(k_sgemm_parallel_scratch_bytes(kr, &own[count].op, threads));
		c[count] = (contender){ k_cpu_isa_name((k_isa)isa), run_own, &own[count], times[count] };
		count++;
	}
	blas_gemm bl = { m, n, k, a, b, c_blas, threads > 1 && n >= 64 ? threads : 1, ctx };
	c[count] = (contender){ "openblas", run_blas, &bl, times[count] };
	double med[K_ISA_COUNT + 1];
	double flop = 2.0 * (double)m * (double)n * (double)k;
	timing_threads = threads;
	int warm = flop > 1e9 ? 2 : 5;
	race(c, count + 1, warm, runs, med);
	double gf_blas = flop / med[count] * 1e-6;
	for (int i = 0; i < count; i++) {
		double largest, diff = max_difference(own[i].op.c, c_blas, m * n, &largest);
		double gf = flop / med[i] * 1e-6;
		printf("| %-22s | %d | %-8s | %8.3f | %6.1f | %3.0f %% | %8.3f | %6.1f | %5.2f | %.1e |\n", s->what, threads,
		       c[i].name, med[i], gf, 100.0 * gf / (PEAK_PER_CORE * threads), med[count], gf_blas,
		       med[count] / med[i], diff / (largest > 0 ? largest : 1));
		free(own[i].op.c);
		free(own[i].scratch);
	}
	(void)kernels;
	free(a), free(b), free(c_blas);
}

/* Uniform random input and filters for window w into *x and *weights
 * (the caller frees both); returns the output's element count. */
static int64_t
conv_operands(const k_window *w, float **x, float **weights)
{
	int64_t in = w->batch * w->in_channels * w->in[0] * w->in[1];
	int64_t nw = w->out_channels * w->in_channels / w->groups * w->kernel[0] * w->kernel[1];
	*x = random_floats(in, 3);
	*weights = random_floats(nw, 4);
	return w->batch * w->out_channels * w->out[0] * w->out[1];
}

static void
bench_conv(const char *what, const k_window *w, int threads, st_exec_ctx *ctx, int runs, double pytorch_ms)
{
	float *x, *weights;
	int64_t out = conv_operands(w, &x, &weights);
	conv_run old = { .w = *w, .x = x, .weights = weights, .slots = threads, .ctx = ctx };
	conv_run new = old;
	k_gemm_force(K_GEMM_OPENBLAS);
	old.scratch = xalloc(k_conv_scratch_bytes(w, threads));
	k_gemm_force(K_GEMM_AUTO);
	old.y = xalloc((size_t)out * sizeof(float));
	new.y = xalloc((size_t)out * sizeof(float));
	size_t packed_bytes = k_conv_packed_bytes(w);
	new.packed = packed_bytes ? xalloc(packed_bytes) : NULL;
	if (new.packed)
		k_conv_pack(w, weights, new.packed);
	new.scratch = xalloc(k_conv_packed_scratch_bytes(w, threads));
	double t_old[256], t_new[256], med[2];
	contender c[2] = { { "old", run_conv_old, &old, t_old }, { "new", run_conv_new, &new, t_new } };
	timing_threads = threads;
	race(c, 2, 5, runs, med);
	double flop = 2.0 * (double)out * (double)(w->in_channels / w->groups) * (double)(w->kernel[0] * w->kernel[1]);
	double largest, diff = max_difference(new.y, old.y, out, &largest);
	double gf_new = flop / med[1] * 1e-6;
	char torch[32] = "-";
	if (pytorch_ms > 0)
		snprintf(torch, sizeof torch, "%.2f", pytorch_ms);
	printf("| %-26s | %d | %7.3f | %7.3f | %6.1f | %3.0f %% | %5.2f | %s | %.1e |\n", what, threads, med[0], med[1],
	       gf_new, 100.0 * gf_new / (PEAK_PER_CORE * threads), med[0] / med[1], torch,
	       diff / (largest > 0 ? largest : 1));
	free(x), free(weights), free(old.y), free(new.y), free(old.scratch), free(new.scratch), free(new.packed);
}

static k_window
conv2d_strided(int64_t c, int64_t oc, int64_t hw, int64_t kernel, int64_t stride, int64_t pad)
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

static k_window
conv2d(int64_t c, int64_t oc, int64_t hw, int64_t kernel, int64_t pad)
{
	return conv2d_strided(c, oc, hw, kernel, 1, pad);
}

/* Every convolution shape of ResNet-18 at 224 x 224, with how often it
 * occurs. */
static void
bench_resnet(st_exec_ctx *ctxs, int runs)
{
	static const struct {
		const char *what;
		int64_t c, oc, hw, kernel, stride, pad;
		int times;
	} convs[] = {
		{ "conv1 7x7/2 3->64 @224", 3, 64, 224, 7, 2, 3, 1 },
		{ "3x3 64->64 @56", 64, 64, 56, 3, 1, 1, 4 },
		{ "3x3/2 64->128 @56", 64, 128, 56, 3, 2, 1, 1 },
		{ "1x1/2 64->128 @56", 64, 128, 56, 1, 2, 0, 1 },
		{ "3x3 128->128 @28", 128, 128, 28, 3, 1, 1, 3 },
		{ "3x3/2 128->256 @28", 128, 256, 28, 3, 2, 1, 1 },
		{ "1x1/2 128->256 @28", 128, 256, 28, 1, 2, 0, 1 },
		{ "3x3 256->256 @14", 256, 256, 14, 3, 1, 1, 3 },
		{ "3x3/2 256->512 @14", 256, 512, 14, 3, 2, 1, 1 },
		{ "1x1/2 256->512 @14", 256, 512, 14, 1, 2, 0, 1 },
		{ "3x3 512->512 @7", 512, 512, 7, 3, 1, 1, 3 },
	};
	printf("\n| ResNet-18 convolution (x times) | threads | old ms | new ms | GFLOP/s | of peak | speed-up | PyTorch ms | max diff / max |\n");
	printf("|---|---|---|---|---|---|---|---|---|\n");
	for (int t = 1; t <= 2; t++) {
		for (size_t i = 0; i < sizeof convs / sizeof convs[0]; i++) {
			char what[64];
			snprintf(what, sizeof what, "%s (x%d)", convs[i].what, convs[i].times);
			k_window w = conv2d_strided(convs[i].c, convs[i].oc, convs[i].hw, convs[i].kernel, convs[i].stride,
			                            convs[i].pad);
			bench_conv(what, &w, t, &ctxs[t - 1], runs, 0);
		}
	}
}

/* One convolution with its filters packed under swap mode `mode`. */
static void
conv_packed_new(conv_run *c, const k_window *w, const float *x, const float *weights, int threads,
                const st_exec_ctx *ctx, int mode, int64_t out)
{
	*c = (conv_run){ .w = *w, .x = x, .weights = weights, .slots = threads, .ctx = ctx };
	k_conv_gemm_force_swap(mode);
	size_t packed_bytes = k_conv_packed_bytes(w);
	c->packed = packed_bytes ? xalloc(packed_bytes) : NULL;
	if (c->packed)
		k_conv_pack(w, weights, c->packed);
	c->scratch = xalloc(k_conv_packed_scratch_bytes(w, threads));
	c->y = xalloc((size_t)out * sizeof(float));
	k_conv_gemm_force_swap(0);
}

/* Positions as columns (as before) against positions as rows, and what
 * the default picks, alternating. */
static void
bench_small_conv(const char *what, const k_window *w, int threads, st_exec_ctx *ctx, int runs)
{
	float *x, *weights;
	int64_t out = conv_operands(w, &x, &weights);
	conv_run r[3];
	conv_packed_new(&r[0], w, x, weights, threads, ctx, -1, out);
	conv_packed_new(&r[1], w, x, weights, threads, ctx, 1, out);
	conv_packed_new(&r[2], w, x, weights, threads, ctx, 0, out);
	double t[3][256], med[3];
	contender c[3] = { { "columns", run_conv_new, &r[0], t[0] }, { "rows", run_conv_new, &r[1], t[1] },
		           { "default", run_conv_new, &r[2], t[2] } };
	timing_threads = threads;
	race(c, 3, 5, runs, med);
	double flop = 2.0 * (double)out * (double)(w->in_channels / w->groups) * (double)(w->kernel[0] * w->kernel[1]);
	double largest, diff = max_difference(r[1].y, r[0].y, out, &largest);
	printf("| %-28s | %d | %7.3f | %5.1f | %7.3f | %5.1f | %7.3f | %5.2f | %.1e |\n", what, threads, med[0],
	       flop / med[0] * 1e-6, med[1], flop / med[1] * 1e-6, med[2], med[0] / med[2],
	       diff / (largest > 0 ? largest : 1));
	for (int i = 0; i < 3; i++)
		free(r[i].y), free(r[i].scratch), free(r[i].packed);
	free(x), free(weights);
}

/* A 2-D convolution of a table: square input hw x hw, square kernel. */
typedef struct conv_shape {
	const char *what;
	int64_t c, oc, hw, kernel, stride, pad;
} conv_shape;

typedef void (*conv_bench_fn)(const char *what, const k_window *w, int threads, st_exec_ctx *ctx, int runs);

/* Every shape of a table through fn, on 1 thread and then on 2. */
static void
bench_table(const conv_shape *shapes, size_t n, conv_bench_fn fn, st_exec_ctx *ctxs, int runs)
{
	for (int t = 1; t <= 2; t++) {
		for (size_t i = 0; i < n; i++) {
			k_window w = conv2d_strided(shapes[i].c, shapes[i].oc, shapes[i].hw, shapes[i].kernel, shapes[i].stride,
			                            shapes[i].pad);
			fn(shapes[i].what, &w, t, &ctxs[t - 1], runs);
		}
	}
}

static void
run_conv_no_prefetch(void *arg)
{
	int keep = k_conv_tile_prefetch;
	k_conv_tile_prefetch = 0;
	run_conv_new(arg);
	k_conv_tile_prefetch = keep;
}

/* A convolution on the direct tile with and without its prefetches
 * (k_conv_tile_prefetch), in turns. */
static void
bench_prefetch(const char *what, const k_window *w, int threads, st_exec_ctx *ctx, int runs)
{
	float *x, *weights;
	int64_t out = conv_operands(w, &x, &weights);
	conv_run r[2];
	double t[2][256], med[2];
	for (int i = 0; i < 2; i++) {
		r[i] = (conv_run){ .w = *w, .x = x, .weights = weights, .slots = threads, .ctx = ctx };
		size_t pb = k_conv_packed_bytes(w);
		r[i].packed = pb ? xalloc(pb) : NULL;
		if (r[i].packed)
			k_conv_pack(w, weights, r[i].packed);
		r[i].scratch = xalloc(k_conv_packed_scratch_bytes(w, threads));
		r[i].y = xalloc((size_t)out * sizeof(float));
	}
	contender c[2] = { { "off", run_conv_no_prefetch, &r[0], t[0] }, { "on", run_conv_new, &r[1], t[1] } };
	timing_threads = threads;
	race(c, 2, 5, runs, med);
	double flop = 2.0 * (double)out * (double)(w->in_channels * w->kernel[0] * w->kernel[1]);
	double largest, diff = max_difference(r[1].y, r[0].y, out, &largest);
	printf("| %-26s | %d | %7.3f | %5.1f | %7.3f | %5.1f | %5.2f | %.1e |\n", what, threads, med[0],
	       flop / med[0] * 1e-6, med[1], flop / med[1] * 1e-6, med[0] / med[1], diff / (largest > 0 ? largest : 1));
	for (int i = 0; i < 2; i++)
		free(r[i].packed), free(r[i].scratch), free(r[i].y);
	free(x), free(weights);
}

typedef struct blocked_run {
	k_window w;
	const float *x, *packed;
	float *y;
	st_exec_ctx *ctx;
	int threads;
	size_t slice; /* k_nchwc_slice_bytes */
} blocked_run;

static void
run_blocked(void *arg)
{
	blocked_run *b = arg;
	k_nchwc_slice_bytes = b->slice;
	k_conv_nchwc(&b->w, b->x, b->packed, NULL, false, 0.0f, 0.0f, b->y, b->threads > 1 ? b->ctx : NULL);
}

/* k_conv's operands with the blocked path forced on or off (it is told
 * apart by the packed filters' header). */
static conv_run
conv_run_blocked(const k_window *w, const float *x, const float *weights, int threads, st_exec_ctx *ctx, int on)
{
	conv_run r = { .w = *w, .x = x, .weights = weights, .slots = threads, .ctx = ctx };
	k_conv_blocked_force(on);
	size_t pb = k_conv_packed_bytes(w);
	r.packed = pb ? xalloc(pb) : NULL;
	if (r.packed)
		k_conv_pack(w, weights, r.packed);
	r.scratch = xalloc(k_conv_packed_scratch_bytes(w, threads));
	k_conv_blocked_force(-1);
	r.y = xalloc((size_t)(w->batch * w->out_channels * w->out[0] * w->out[1]) * sizeof(float));
	return r;
}

/* A convolution in turns four ways: k_conv without the blocked path (on
 * Winograd or the direct tiles, NCHW), k_conv on the blocked kernel (its
 * conversions timed), and the blocked kernel alone as a blocked plan would
 * run it, with slices of 128 KiB (the default) and 40 KiB of filters. */
static void
bench_blocked_one(const char *what, const k_window *w, int threads, st_exec_ctx *ctx, int runs)
{
	float *x, *weights;
	int64_t out = conv_operands(w, &x, &weights);
	conv_run off = conv_run_blocked(w, x, weights, threads, ctx, 0);
	conv_run on = conv_run_blocked(w, x, weights, threads, ctx, 1);
	float *xb = xalloc((size_t)k_nchwc_floats(w->batch, w->in_channels, w->in[0], w->in[1]) * sizeof(float));
	k_nchwc_from_nchw(w->batch, w->in_channels, w->in[0], w->in[1], x, xb, NULL);
	float *packed = xalloc(k_conv_nchwc_packed_floats(w) * sizeof(float));
	k_conv_nchwc_pack(w, weights, packed);
	float *yb = xalloc((size_t)k_nchwc_floats(w->batch, w->out_channels, w->out[0], w->out[1]) * sizeof(float));
	blocked_run big = { .w = *w, .x = xb, .packed = packed, .y = yb, .ctx = ctx, .threads = threads,
		            .slice = k_nchwc_slice_bytes };
	blocked_run small = big;
	small.slice = 40 * 1024;
	size_t keep = k_nchwc_slice_bytes;
	double t[4][256], med[4];
	contender c[4] = { { "off", run_conv_new, &off, t[0] }, { "k_conv", run_conv_new, &on, t[1] },
		           { "alone", run_blocked, &big, t[2] }, { "alone 40K", run_blocked, &small, t[3] } };
	timing_threads = threads;
	race(c, 4, 5, runs, med);
	k_nchwc_slice_bytes = keep;
	float *back = xalloc((size_t)out * sizeof(float));
	k_nchwc_to_nchw(w->batch, w->out_channels, w->out[0], w->out[1], yb, back, NULL);
	double flop = 2.0 * (double)out * (double)(w->in_channels * w->kernel[0] * w->kernel[1]);
	double largest, diff = max_difference(back, off.y, out, &largest);
	double l2, d2 = max_difference(on.y, off.y, out, &l2);
	diff = diff / (largest > 0 ? largest : 1);
	d2 = d2 / (l2 > 0 ? l2 : 1);
	printf("| %-26s | %d | %7.3f | %5.1f | %7.3f | %5.1f | %7.3f | %5.1f | %7.3f | %5.1f | %5.2f | %.1e |\n", what, threads,
	       med[0], flop / med[0] * 1e-6, med[1], flop / med[1] * 1e-6, med[2], flop / med[2] * 1e-6, med[3],
	       flop / med[3] * 1e-6, med[0] / med[1], diff > d2 ? diff : d2);
	free(x), free(weights), free(off.packed), free(off.scratch), free(off.y), free(on.packed), free(on.scratch),
		free(on.y), free(xb), free(packed), free(yb), free(back);
}

static void
bench_blocked(st_exec_ctx *ctxs, int runs)
{
	static const conv_shape convs[] = {
		{ "R18 3x3 64->64 @56", 64, 64, 56, 3, 1, 1 },      { "R18 3x3/2 64->128 @56", 64, 128, 56, 3, 2, 1 },
		{ "R18 1x1/2 64->128 @56", 64, 128, 56, 1, 2, 0 },  { "R18 3x3 128->128 @28", 128, 128, 28, 3, 1, 1 },
		{ "R18 3x3/2 128->256 @28", 128, 256, 28, 3, 2, 1 }, { "R18 3x3 256->256 @14", 256, 256, 14, 3, 1, 1 },
		{ "R18 3x3/2 256->512 @14", 256, 512, 14, 3, 2, 1 }, { "R18 3x3 512->512 @7", 512, 512, 7, 3, 1, 1 },
		{ "1x1 256->64 @56", 256, 64, 56, 1, 1, 0 },         { "SQ 1x1 512->1000 @13", 512, 1000, 13, 1, 1, 0 },
		{ "SQ 3x3 16->64 @55", 16, 64, 55, 3, 1, 1 },        { "SQ 3x3 64->256 @13", 64, 256, 13, 3, 1, 1 },
	};
	printf("\n| convolution | threads | off ms | GFLOP/s | k_conv blocked ms | GFLOP/s | alone ms | GFLOP/s | alone "
	       "40K ms | GFLOP/s | off / k_conv | max diff / max |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
	bench_table(convs, sizeof convs / sizeof convs[0], bench_blocked_one, ctxs, runs);
}

typedef struct nhwc_run {
	int64_t positions, cin, cout;
	const float *x, *bias;
	const void *packed;
	float *y;
	void *scratch;
	int slots;
	st_exec_ctx *ctx;
	bool *knob, value; /* set to value for the run */
} nhwc_run;

static void
run_nhwc(void *arg)
{
	nhwc_run *r = arg;
	bool keep = *r->knob;
	*r->knob = r->value;
	k_pointwise_nhwc(r->positions, r->cin, r->cout, r->x, r->packed, r->bias, r->y, r->scratch, r->slots, NULL,
	                 r->slots > 1 ? r->ctx : NULL);
	*r->knob = keep;
}

/* A 1x1 convolution channels last (k_pointwise_nhwc, MobileNetV2's
 * layers) with one of the SGEMM's switches off and on, in turns. */
static void
bench_nhwc_knob(const char *what, const k_window *w, int threads, st_exec_ctx *ctx, int runs, bool *knob)
{
	float *x, *weights;
	int64_t out = conv_operands(w, &x, &weights);
	nhwc_run r[2];
	int64_t positions = w->batch * w->out[0] * w->out[1];
	size_t pb = k_pointwise_nhwc_packed_bytes(positions, w->in_channels, w->out_channels);
	size_t sb = k_pointwise_nhwc_scratch_bytes(positions, w->in_channels, w->out_channels, threads);
	for (int i = 0; i < 2; i++) {
		void *packed = xalloc(pb);
		k_pointwise_nhwc_pack(positions, w->in_channels, w->out_channels, weights, packed);
		r[i] = (nhwc_run){ .positions = positions, .cin = w->in_channels, .cout = w->out_channels, .x = x,
			           .packed = packed, .y = xalloc((size_t)out * sizeof(float)), .scratch = xalloc(sb + 64),
			           .slots = threads, .ctx = ctx, .knob = knob, .value = i == 1 };
	}
	double t[2][256], med[2];
	contender c[2] = { { "off", run_nhwc, &r[0], t[0] }, { "on", run_nhwc, &r[1], t[1] } };
	timing_threads = threads;
	race(c, 2, 5, runs, med);
	double flop = 2.0 * (double)out * (double)w->in_channels;
	double largest, diff = max_difference(r[1].y, r[0].y, out, &largest);
	printf("| %-26s | %d | %7.3f | %5.1f | %7.3f | %5.1f | %5.2f | %.1e |\n", what, threads, med[0],
	       flop / med[0] * 1e-6, med[1], flop / med[1] * 1e-6, med[0] / med[1], diff / (largest > 0 ? largest : 1));
	for (int i = 0; i < 2; i++)
		free((void *)r[i].packed), free(r[i].y), free(r[i].scratch);
	free(x), free(weights);
}

/* The prefetch of the next block of filters (k_sgemm_fetch_next); its
 * effect shows with --cold. */
static void
bench_nhwc_fetch(const char *what, const k_window *w, int threads, st_exec_ctx *ctx, int runs)
{
	bench_nhwc_knob(what, w, threads, ctx, runs, &k_sgemm_fetch_next);
}

/* Uneven column panels shared out tile by tile (k_sgemm_split_tiles);
 * one thread runs the same either way. */
static void
bench_nhwc_tiles(const char *what, const k_window *w, int threads, st_exec_ctx *ctx, int runs)
{
	bench_nhwc_knob(what, w, threads, ctx, runs, &k_sgemm_split_tiles);
}

/* The weak spots of issue 10: convolutions on 7 x 7 and 14 x 14 images, and
 * 1x1 convolutions with few input channels, of ResNet-18 and MobileNetV2. */
static void
bench_small(st_exec_ctx *ctxs, int runs)
{
	static const conv_shape convs[] = {
		{ "R18 3x3 512->512 @7", 512, 512, 7, 3, 1, 1 },
		{ "R18 3x3/2 256->512 @14", 256, 512, 14, 3, 2, 1 },
		{ "R18 1x1/2 256->512 @14", 256, 512, 14, 1, 2, 0 },
		{ "R18 3x3 256->256 @14", 256, 256, 14, 3, 1, 1 },
		{ "MV2 1x1 160->960 @7", 160, 960, 7, 1, 1, 0 },
		{ "MV2 1x1 960->160 @7", 960, 160, 7, 1, 1, 0 },
		{ "MV2 1x1 960->320 @7", 960, 320, 7, 1, 1, 0 },
		{ "MV2 1x1 320->1280 @7", 320, 1280, 7, 1, 1, 0 },
		{ "MV2 1x1 96->576 @14", 96, 576, 14, 1, 1, 0 },
		{ "MV2 1x1 576->96 @14", 576, 96, 14, 1, 1, 0 },
		{ "MV2 1x1 16->96 @112", 16, 96, 112, 1, 1, 0 },
		{ "MV2 1x1 32->16 @112", 32, 16, 112, 1, 1, 0 },
		{ "MV2 1x1 24->144 @56", 24, 144, 56, 1, 1, 0 },
		{ "MV2 1x1 144->24 @56", 144, 24, 56, 1, 1, 0 },
		{ "SQ 1x1 512->1000 @13", 512, 1000, 13, 1, 1, 0 },
		{ "SQ 1x1 512->64 @13", 512, 64, 13, 1, 1, 0 },
		{ "SQ 1x1 64->256 @13", 64, 256, 13, 1, 1, 0 },
		{ "SQ 1x1 48->192 @13", 48, 192, 13, 1, 1, 0 },
		{ "SQ 1x1 384->48 @13", 384, 48, 13, 1, 1, 0 },
		{ "SQ 1x1 384->64 @13", 384, 64, 13, 1, 1, 0 },
		{ "SQ 3x3 48->192 @13", 48, 192, 13, 3, 1, 1 },
		{ "SQ 3x3 64->256 @13", 64, 256, 13, 3, 1, 1 },
		{ "1x1 128->128 @14", 128, 128, 14, 1, 1, 0 },
		{ "1x1 96->256 @14", 96, 256, 14, 1, 1, 0 },
		{ "R50 1x1 256->1024 @14", 256, 1024, 14, 1, 1, 0 },
		{ "R50 1x1 1024->256 @14", 1024, 256, 14, 1, 1, 0 },
		{ "1x1 512->512 @14", 512, 512, 14, 1, 1, 0 },
		{ "3x3 256->512 @13", 256, 512, 13, 3, 1, 1 },
	};
	static const conv_shape direct[] = {
		{ "1x1 256->64 @56", 256, 64, 56, 1, 1, 0 },
		{ "MV2 1x1 144->24 @56", 144, 24, 56, 1, 1, 0 },
		{ "MV2 1x1 96->24 @56", 96, 24, 56, 1, 1, 0 },
		{ "R18 3x3/2 64->128 @56", 64, 128, 56, 3, 2, 1 },
		{ "R18 3x3/2 128->256 @28", 128, 256, 28, 3, 2, 1 },
		{ "SQ 1x1 16->64 @55", 16, 64, 55, 1, 1, 0 },
	};
	/* MobileNetV2's 1x1 layers at 7x7 and 14x14, channels last. */
	const conv_shape *nhwc = convs + 4;
	size_t nhwc_count = 6;
	printf("\n| channels last 1x1 | threads | no next-block fetch ms | GFLOP/s | fetch ms | GFLOP/s | speed-up | max diff / "
	       "max |\n");
	printf("|---|---|---|---|---|---|---|---|\n");
	bench_table(nhwc, nhwc_count, bench_nhwc_fetch, ctxs, runs);
	printf("\n| channels last 1x1 | threads | whole column panels ms | GFLOP/s | tiles ms | GFLOP/s | speed-up | max diff / "
	       "max |\n");
	printf("|---|---|---|---|---|---|---|---|\n");
	bench_table(nhwc, nhwc_count, bench_nhwc_tiles, ctxs, runs);
	printf("\n| direct tile | threads | no prefetch ms | GFLOP/s | prefetch ms | GFLOP/s | speed-up | max diff / max |\n");
	printf("|---|---|---|---|---|---|---|---|\n");
	bench_table(direct, sizeof direct / sizeof direct[0], bench_prefetch, ctxs, runs);
	printf("\n| small image / thin depth | threads | columns ms | GFLOP/s | rows ms | GFLOP/s | default ms | speed-up | max diff / max |\n");
	printf("|---|---|---|---|---|---|---|---|---|\n");
	bench_table(convs, sizeof convs / sizeof convs[0], bench_small_conv, ctxs, runs);
}

/* Pseudo-normal values (sum of four uniforms, variance scaled to sd^2).
 * Caller frees. */
static float *
normal_floats(int64_t n, unsigned seed, double sd)
{
	float *v = xalloc((size_t)n * sizeof *v);
	for (int64_t i = 0; i < n; i++) {
		double s = 0;
		for (int k = 0; k < 4; k++) {
			seed = seed * 1664525u + 1013904223u;
			s += (double)(seed >> 8) / 16777216.0 - 0.5;
		}
		v[i] = (float)(s * sqrt(3.0) * sd);
	}
	return v;
}

/* The worst |a - b| / (max|b| + |b|) over the elements: agreement in the
 * sense of ARCHITECTURE.md holds while it stays at or below 1e-5. */
static double
agreement(const float *a, const float *b, int64_t n)
{
	double big = 0, worst = 0;
	for (int64_t i = 0; i < n; i++)
		big = fabs((double)b[i]) > big ? fabs((double)b[i]) : big;
	for (int64_t i = 0; i < n; i++) {
		double scale = big + fabs((double)b[i]);
		double e = fabs((double)a[i] - (double)b[i]) / (scale > 0 ? scale : 1);
		worst = e > worst ? e : worst;
	}
	return worst;
}

/* One 3x3 stride-1 shape: the earlier path (Winograd off) against F(2,3)
 * and F(4,3), all packed as at prepare, on inputs N(0, 1) and He-scaled
 * weights; errors against k_conv_ref. */
static void
bench_winograd_one(const char *what, const k_window *w, int threads, st_exec_ctx *ctx, int runs, bool errors)
{
	int64_t in = w->batch * w->in_channels * w->in[0] * w->in[1];
	int64_t out = w->batch * w->out_channels * w->out[0] * w->out[1];
	int64_t nw = w->out_channels * w->in_channels * 9;
	float *x = normal_floats(in, 11, 1.0), *weights = normal_floats(nw, 12, sqrt(2.0 / (9.0 * (double)w->in_channels)));
	float *bias = normal_floats(w->out_channels, 13, 0.1);
	conv_run r[3];
	double times[3][256], med[3];
	contender c[3];
	static const char *names[3] = { "before", "F(2,3)", "F(4,3)" };
	for (int i = 0; i < 3; i++) {
		k_winograd_force(2 * i);
		r[i] = (conv_run){ .w = *w, .x = x, .weights = weights, .bias = bias, .slots = threads, .ctx = ctx };
		size_t pb = k_conv_packed_bytes(w);
		r[i].packed = pb ? xalloc(pb) : NULL;
		if (r[i].packed)
			k_conv_pack(w, weights, r[i].packed);
		r[i].scratch = xalloc(k_conv_packed_scratch_bytes(w, threads));
		r[i].y = xalloc((size_t)out * sizeof(float));
		c[i] = (contender){ names[i], run_conv_new, &r[i], times[i] };
	}
	k_winograd_force(-1);
	timing_threads = threads;
	race(c, 3, 3, runs, med);
	char err[64] = "";
	if (errors) {
		float *ref = xalloc((size_t)out * sizeof(float));
		k_conv_ref(w, x, weights, bias, ref);
		snprintf(err, sizeof err, " %.1e | %.1e | %.1e |", agreement(r[0].y, ref, out), agreement(r[1].y, ref, out),
		         agreement(r[2].y, ref, out));
		free(ref);
	}
	printf("| %-24s | %d | %7.3f | %7.3f | %7.3f | %5.2f | %5.2f |%s\n", what, threads, med[0], med[1], med[2],
	       med[0] / med[1], med[0] / med[2], errors ? err : " | | |");
	for (int i = 0; i < 3; i++)
		free(r[i].packed), free(r[i].scratch), free(r[i].y);
	free(x), free(weights), free(bias);
}

static void
run_conv_unshared(void *arg)
{
	k_winograd_share_input = false;
	run_conv_new(arg);
	k_winograd_share_input = true;
}

static void
run_conv_unbalanced(void *arg)
{
	k_winograd_balance = false;
	run_conv_new(arg);
	k_winograd_balance = true;
}

/* On two threads, Winograd at the tile size its own rule picks (forced,
 * where the blocked path would take the shape) with one of its choices
 * off (the run function `off`) and on, in turns. */
static void
bench_winograd_toggle(const char *what, const k_window *w, st_exec_ctx *ctx, int runs, void (*off)(void *))
{
	int64_t in = w->batch * w->in_channels * w->in[0] * w->in[1];
	int64_t out = w->batch * w->out_channels * w->out[0] * w->out[1];
	int64_t nw = w->out_channels * w->in_channels * 9;
	float *x = normal_floats(in, 11, 1.0), *weights = normal_floats(nw, 12, sqrt(2.0 / (9.0 * (double)w->in_channels)));
	int m = k_winograd_chosen(w, k_cpu_isa());
	conv_run r[2];
	double times[2][256], med[2];
	k_winograd_force(m);
	for (int i = 0; i < 2; i++) {
		r[i] = (conv_run){ .w = *w, .x = x, .weights = weights, .slots = 2, .ctx = ctx };
		size_t pb = k_conv_packed_bytes(w);
		r[i].packed = pb ? xalloc(pb) : NULL;
		if (r[i].packed)
			k_conv_pack(w, weights, r[i].packed);
		/* Blocks as they fall may be larger than balanced ones. */
		k_winograd_balance = i == 1;
		r[i].scratch = xalloc(k_conv_packed_scratch_bytes(w, 2));
		k_winograd_balance = true;
		r[i].y = xalloc((size_t)out * sizeof(float));
	}
	k_winograd_force(-1);
	contender c[2] = { { "off", off, &r[0], times[0] }, { "on", run_conv_new, &r[1], times[1] } };
	timing_threads = 2;
	race(c, 2, 3, runs, med);
	double largest, diff = max_difference(r[1].y, r[0].y, out, &largest);
	printf("| %-24s | F(%d,3) | %7.3f | %7.3f | %5.2f | %.1e |\n", what, m, med[0], med[1], med[0] / med[1], diff);
	for (int i = 0; i < 2; i++)
		free(r[i].packed), free(r[i].scratch), free(r[i].y);
	free(x), free(weights);
}

static void
bench_winograd(st_exec_ctx *ctxs, int runs)
{
	static const struct {
		const char *what;
		int64_t c, oc, hw;
	} convs[] = {
		{ "R18 64->64 @56 (x4)", 64, 64, 56 },     { "R18 128->128 @28 (x3)", 128, 128, 28 },
		{ "R18 256->256 @14 (x3)", 256, 256, 14 }, { "R18 512->512 @7 (x3)", 512, 512, 7 },
		{ "SQ 16->64 @55", 16, 64, 55 },           { "SQ 32->128 @27", 32, 128, 27 },
		{ "SQ 48->192 @13", 48, 192, 13 },         { "SQ 64->256 @13", 64, 256, 13 },
	};
	printf("\n| 3x3 stride 1, pad 1 | threads | before ms | F(2,3) ms | F(4,3) ms | speed-up F2 | speed-up F4 | err before | err F2 | err F4 |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < sizeof convs / sizeof convs[0]; i++) {
		for (int t = 1; t <= 2; t++) {
			k_window w = conv2d(convs[i].c, convs[i].oc, convs[i].hw, 3, 1);
			bench_winograd_one(convs[i].what, &w, t, &ctxs[t - 1], runs, t == 1);
		}
	}
	printf("\n| small planes, 2 threads | tiles | input transform by each ms | shared out ms | speed-up | max diff |\n");
	printf("|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < sizeof convs / sizeof convs[0]; i++) {
		if (convs[i].hw > 20)
			continue;
		k_window w = conv2d(convs[i].c, convs[i].oc, convs[i].hw, 3, 1);
		bench_winograd_toggle(convs[i].what, &w, &ctxs[1], runs, run_conv_unshared);
	}
	printf("\n| 2 threads | tiles | blocks as they fall ms | balanced ms | speed-up | max diff |\n");
	printf("|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < sizeof convs / sizeof convs[0]; i++) {
		k_window w = conv2d(convs[i].c, convs[i].oc, convs[i].hw, 3, 1);
		bench_winograd_toggle(convs[i].what, &w, &ctxs[1], runs, run_conv_unbalanced);
	}
}

int
main(int argc, char **argv)
{
	int runs = 21;
	bool quick = false, resnet = false, classes = false, small = false, winograd = false, blocked = false;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
			runs = atoi(argv[++i]);
		} else if (strcmp(argv[i], "--quick") == 0) {
			quick = true;
		} else if (strcmp(argv[i], "--resnet") == 0) {
			resnet = true;
		} else if (strcmp(argv[i], "--small") == 0) {
			small = true;
		} else if (strcmp(argv[i], "--winograd") == 0) {
			winograd = true;
		} else if (strcmp(argv[i], "--blocked") == 0) {
			blocked = true;
		} else if (strcmp(argv[i], "--cold") == 0) {
			race_cold = true;
		} else if (strcmp(argv[i], "--classes") == 0) {
			classes = true;
		} else if (strcmp(argv[i], "--cpu-time") == 0) {
			cpu_time = true;
		} else if (strcmp(argv[i], "--isa") == 0 && i + 1 < argc) {
			k_isa isa;
			if (k_cpu_isa_parse(argv[++i], &isa) != 0 || k_cpu_isa_force(isa) != 0) {
				fprintf(stderr, "bench-gemm: this machine cannot run --isa %s\n", argv[i]);
				return 2;
			}
		} else {
			fprintf(stderr, "usage: bench-gemm [--runs N] [--quick] [--resnet] [--small] [--classes] [--winograd] [--blocked]\n"
			                "                  [--cold] [--cpu-time] [--isa avx512|avx2|portable]\n");
			return 2;
		}
	}
	if (runs < 1 || runs > 256)
		runs = 21;
	if (k_cpu_isa_note())
		fprintf(stderr, "bench-gemm: %s\n", k_cpu_isa_note());
	k_gemm_init();
	printf("SIMD level: %s (best here: %s); FMA peak taken as %.1f GFLOP/s per core; median of %d runs%s\n\n",
	       k_cpu_isa_name(k_cpu_isa()), k_cpu_isa_name(k_cpu_isa_best()), PEAK_PER_CORE, runs,
	       cpu_time ? "; one thread in CPU time" : "");
	const shape shapes[] = {
		{ "256^3", 256, 256, 256 },
		{ "1024^3", 1024, 1024, 1024 },
		{ "64x3136x576 (conv 3x3)", 64, 3136, 576 },
		{ "64x3136x256 (conv 1x1)", 64, 3136, 256 },
	};
	st_pool *pools[2] = { st_pool_new(1), st_pool_new(2) };
	st_exec_ctx ctxs[2];
	st_pool_context(pools[0], &ctxs[0]);
	st_pool_context(pools[1], &ctxs[1]);
	if (small) {
		/* Only these: the other tables take minutes. */
		bench_small(ctxs, runs);
		st_pool_free(pools[0]);
		st_pool_free(pools[1]);
		return 0;
	}
	if (blocked) {
		bench_blocked(ctxs, runs);
		st_pool_free(pools[0]);
		st_pool_free(pools[1]);
		return 0;
	}
	if (winograd) {
		/* Only the Winograd table: the rest is measured without it. */
		bench_winograd(ctxs, runs);
		st_pool_free(pools[0]);
		st_pool_free(pools[1]);
		return 0;
	}
	printf("| SGEMM MxNxK | threads | ours | ms | GFLOP/s | of peak | OpenBLAS ms | GFLOP/s | speed-up | max diff / max |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|\n");
	for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
		if (quick && shapes[s].m == 1024)
			continue;
		for (int t = 1; t <= 2; t++)
			bench_gemm(&shapes[s], t, &ctxs[t - 1], shapes[s].m == 1024 ? (runs + 1) / 2 : runs);
	}
	printf("\n| convolution (1x C x 56 x 56) | threads | old ms | new ms | GFLOP/s | of peak | speed-up | PyTorch ms | max diff / max |\n");
	printf("|---|---|---|---|---|---|---|---|---|\n");
	k_window c3 = conv2d(64, 64, 56, 3, 1), c1 = conv2d(256, 64, 56, 1, 0);
	/* PyTorch 1.13 (oneDNN) on this machine, perf-anchors.md. */
	double torch3[2] = { 2.087, 1.076 };
	for (int t = 1; t <= 2; t++)
		bench_conv("3x3 64->64 pad 1", &c3, t, &ctxs[t - 1], runs, torch3[t - 1]);
	for (int t = 1; t <= 2; t++)
		bench_conv("1x1 256->64", &c1, t, &ctxs[t - 1], runs, 0);
	if (resnet)
		bench_resnet(ctxs, runs);
	if (classes)
		bench_classes(ctxs, runs);
	st_pool_free(pools[0]);
	st_pool_free(pools[1]);
	return 0;
}
