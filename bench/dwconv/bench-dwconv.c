/* bench/dwconv: the direct convolution kernels of k-dwconv.c against what
 * k_conv ran before them and against PyTorch. For each case and for 1 and 2
 * threads of the CPU backend's pool, the direct kernel and the old path
 * (the old depthwise loops, kept in old-depthwise.c, or im2col + GEMM for a
 * first layer) run in turns, RUNS rounds after 5 warm-ups, so both see the
 * same machine; medians are printed with PyTorch's median (peer.py, run in
 * the same invocation) and the ratios. "ours" is the path k_conv takes now
 * (k_conv_direct_chosen); a * marks it. The outputs of the two paths are
 * compared, and a difference beyond FP32 agreement is reported. PyTorch
 * runs with glibc's trim and mmap thresholds raised (see peer_run).
 *   bench-dwconv RUNS [PEER_SCRIPT] */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench-dwconv.h"
#include "st-engine.h"

typedef struct bench_case {
	const char *name, *what;
	int n, c, oc, groups, h, w, k, stride, pad;
	bool bias;
} bench_case;

static const bench_case cases[] = {
	{ "dw3s1_144x56", "MobileNetV2 144 ch 56x56 (anchor)", 1, 144, 144, 144, 56, 56, 3, 1, 1, false },
	{ "dw3s1_32x112", "MobileNetV2 32 ch 112x112", 1, 32, 32, 32, 112, 112, 3, 1, 1, true },
	{ "dw3s2_144x56", "MobileNetV2 144 ch 56x56 stride 2", 1, 144, 144, 144, 56, 56, 3, 2, 1, true },
	{ "dw3s2_96x112", "MobileNetV2 96 ch 112x112 stride 2", 1, 96, 96, 96, 112, 112, 3, 2, 1, true },
	{ "dw3s2_192x28", "MobileNetV2 192 ch 28x28 stride 2", 1, 192, 192, 192, 28, 28, 3, 2, 1, true },
	{ "dw3s2_576x14", "MobileNetV2 576 ch 14x14 stride 2", 1, 576, 576, 576, 14, 14, 3, 2, 1, true },
	{ "dw3s1_960x7", "MobileNetV2 960 ch 7x7", 1, 960, 960, 960, 7, 7, 3, 1, 1, true },
	{ "dw3s1_384x14", "MobileNetV2 384 ch 14x14", 1, 384, 384, 384, 14, 14, 3, 1, 1, true },
	{ "dw5s1_240x28", "EfficientNet-B0 240 ch 28x28 5x5", 1, 240, 240, 240, 28, 28, 5, 1, 2, true },
	{ "dw5s2_144x56", "EfficientNet-B0 144 ch 56x56 5x5 stride 2", 1, 144, 144, 144, 56, 56, 5, 2, 2, true },
	{ "dw7s1_96x56", "ConvNeXt-T 96 ch 56x56 7x7", 1, 96, 96, 96, 56, 56, 7, 1, 3, true },
	{ "dw3s1_m2_32x56", "depth multiplier 2, 32 -> 64 ch 56x56", 1, 32, 64, 32, 56, 56, 3, 1, 1, true },
	{ "first7s2_3x224", "ResNet conv1 3 -> 64 7x7 stride 2, 224x224", 1, 3, 64, 1, 224, 224, 7, 2, 3, false },
	{ "first3s2_3x224", "MobileNet stem 3 -> 32 3x3 stride 2, 224x224", 1, 3, 32, 1, 224, 224, 3, 2, 1, false },
	{ "first3s2p0_3x224", "SqueezeNet 1.1 stem 3 -> 64 3x3 stride 2 pad 0", 1, 3, 64, 1, 224, 224, 3, 2, 0, true },
	{ "first3s1_3x128", "VGG-ish 3 -> 32 3x3, 128x128", 1, 3, 32, 1, 128, 128, 3, 1, 1, true },
	{ "first3s1_3x224", "3 -> 64 3x3, 224x224", 1, 3, 64, 1, 224, 224, 3, 1, 1, true },
	{ "first3s1_1x28", "MNIST 1 -> 32 3x3, 28x28", 1, 1, 32, 1, 28, 28, 3, 1, 1, true },
	{ "first5s1_1x28b", "LeNet 1 -> 6 5x5, batch 16, 28x28", 16, 1, 6, 1, 28, 28, 5, 1, 0, true },
};
#define N_CASES (sizeof cases / sizeof cases[0])

static k_window
case_window(const bench_case *b)
{
	k_window w = { .spatial = 2, .batch = b->n, .in_channels = b->c, .out_channels = b->oc, .groups = b->groups };
	for (int i = 0; i < 2; i++) {
		w.in[i] = i ? b->w : b->h;
		w.kernel[i] = b->k;
		w.stride[i] = b->stride;
		w.dilation[i] = 1;
		w.pad_begin[i] = w.pad_end[i] = b->pad;
		w.out[i] = (w.in[i] + 2 * b->pad - b->k) / b->stride + 1;
	}
	return w;
}

static int64_t
elements(const k_window *w, bool out)
{
	return w->batch * (out ? w->out_channels * w->out[0] * w->out[1] : w->in_channels * w->in[0] * w->in[1]);
}

static double
now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
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
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static float *
floats_new(int64_t n, unsigned seed)
{
	float *v = aligned_alloc(64, (size_t)((n + 15) / 16 * 16) * sizeof *v);
	if (v == NULL) {
		fprintf(stderr, "bench-dwconv: out of memory\n");
		exit(3);
	}
	for (int64_t i = 0; i < n; i++) {
		seed = seed * 1664525u + 1013904223u;
		v[i] = (float)(seed >> 8) / 16777216.0f * 2.0f - 1.0f;
	}
	return v;
}

/* Whether a agrees with b (ARCHITECTURE.md's FP32 rule, rtol 1e-5, with
 * atol = rtol * max |b|). */
static bool
agree(const float *a, const float *b, int64_t n)
{
	double most = 0;
	for (int64_t i = 0; i < n; i++)
		most = fabs(b[i]) > most ? fabs(b[i]) : most;
	for (int64_t i = 0; i < n; i++) {
		if (!(fabs((double)a[i] - b[i]) <= 1e-5 * most + 1e-5 * fabs(b[i])))
			return false;
	}
	return true;
}

/* PyTorch's medians: peer[case][threads - 1], NAN where there is none. */
static double peer[N_CASES][2];

static void
peer_run(const char *script, int threads, int runs)
{
	char cmd[8192];
	/* glibc's allocator would hand PyTorch's per-call buffers (output,
	 * blocked-layout copies) back to the kernel and fault them in again on
	 * every call: some 1300 page faults, 3 ms instead of 0.25 for the anchor
	 * case on this machine. Raised thresholds keep them, so that what is
	 * timed is the convolution. */
	int used = snprintf(cmd, sizeof cmd,
	                    "MALLOC_TRIM_THRESHOLD_=2000000000 MALLOC_MMAP_THRESHOLD_=2000000000 "
	                    "/usr/bin/python3 '%s' %d %d",
	                    script, threads, runs);
	for (size_t i = 0; i < N_CASES && used > 0 && (size_t)used < sizeof cmd; i++) {
		const bench_case *b = &cases[i];
		used += snprintf(cmd + used, sizeof cmd - (size_t)used, " %s:%d:%d:%d:%d:%d:%d:%d:%d:%d:%d", b->name, b->n,
		                 b->c, b->oc, b->groups, b->h, b->w, b->k, b->stride, b->pad, b->bias);
	}
	FILE *f = popen(cmd, "r");
	if (f == NULL)
		return;
	char name[64];
	int t;
	double ms, lo, hi;
	while (fscanf(f, "%63s %d %lf %lf %lf", name, &t, &ms, &lo, &hi) == 5) {
		for (size_t i = 0; i < N_CASES; i++) {
			if (strcmp(name, cases[i].name) == 0 && t == threads)
				peer[i][threads - 1] = ms;
		}
	}
	pclose(f);
}

typedef enum path { PATH_DIRECT, PATH_OLD, N_PATHS } path;

static void
run_path(path p, const k_window *w, const float *x, const float *f, const float *b, float *y, void *scratch,
         int slots, const st_exec_ctx *ctx)
{
	if (p == PATH_DIRECT)
		k_conv_direct(w, x, f, b, y, scratch, slots, ctx);
	else if (k_conv_direct_fits(w) == K_DIRECT_DEPTHWISE)
		old_depthwise(w, x, f, b, y, ctx);
	else
		k_conv_im2col(w, x, f, b, y, scratch, slots, ctx);
}

int
main(int argc, char **argv)
{
	int runs = argc > 1 ? atoi(argv[1]) : 30;
	if (runs < 1)
		runs = 30;
	const char *script = argc > 2 ? argv[2] : NULL;
	k_gemm_init();
	for (size_t i = 0; i < N_CASES; i++)
		peer[i][0] = peer[i][1] = NAN;
	if (script) {
		peer_run(script, 1, runs);
		peer_run(script, 2, runs);
	}

	printf("Direct convolutions (k-dwconv.c, %s variant) against the old path and PyTorch;\n"
	       "median ms of %d runs after 5 warm-ups. old: the depthwise loops k_conv had before, or im2col +\n"
	       "GEMM for a first layer. * marks the path k_conv takes. ours/torch < 1: faster than PyTorch\n"
	       "(run with MALLOC_TRIM_THRESHOLD_ and MALLOC_MMAP_THRESHOLD_ raised: see bench-dwconv.c).\n\n",
	       k_cpu_isa_name(k_cpu_isa()), runs);
	printf("%-16s %2s %9s %9s %9s %9s %8s %9s  %s\n", "case", "T", "direct", "old", "torch", "ours/old",
	       "ours/tch", "GFLOP/s", "what");
	bool all_agree = true;
	for (int threads = 1; threads <= 2; threads++) {
		st_pool *pool = st_pool_new(threads);
		st_exec_ctx ctx;
		st_pool_context(pool, &ctx);
		for (size_t i = 0; i < N_CASES; i++) {
			const bench_case *bc = &cases[i];
			k_window w = case_window(bc);
			int64_t nx = elements(&w, false), ny = elements(&w, true);
			int64_t nf = w.out_channels * (w.in_channels / w.groups) * w.kernel[0] * w.kernel[1];
			float *x = floats_new(nx, 1), *f = floats_new(nf, 2), *b = floats_new(w.out_channels, 3);
			float *y[N_PATHS] = { floats_new(ny, 4), floats_new(ny, 5) };
			size_t direct_bytes = k_conv_direct_scratch_bytes(&w, threads);
			size_t gemm_bytes = k_conv_im2col_scratch_bytes(&w, threads);
			size_t bytes = direct_bytes > gemm_bytes ? direct_bytes : gemm_bytes;
			void *scratch = aligned_alloc(64, (bytes + 63) / 64 * 64 + 64);
			const float *bias = bc->bias ? b : NULL;
			double *times[N_PATHS];
			for (int p = 0; p < N_PATHS; p++)
				times[p] = calloc((size_t)runs, sizeof(double));
			for (int r = 0; r < 5 + runs; r++) {
				for (int p = 0; p < N_PATHS; p++) {
					double t0 = now_ms();
					run_path((path)p, &w, x, f, bias, y[p], scratch, threads, &ctx);
					if (r >= 5)
						times[p][r - 5] = now_ms() - t0;
				}
			}
			bool same = agree(y[PATH_DIRECT], y[PATH_OLD], ny);
			all_agree = all_agree && same;
			double ms[N_PATHS];
			for (int p = 0; p < N_PATHS; p++)
				ms[p] = median(times[p], runs);
			bool direct = k_conv_direct_chosen(&w) != K_DIRECT_NONE;
			double ours = direct ? ms[PATH_DIRECT] : ms[PATH_OLD];
			double gflop = 2.0 * (double)ny * (double)(w.in_channels / w.groups) * bc->k * bc->k * 1e-9;
			printf("%-16s %2d %8.4f%s %8.4f%s %9.4f %9.2f %8.2f %9.1f  %s%s\n", bc->name, threads, ms[PATH_DIRECT],
			       direct ? "*" : " ", ms[PATH_OLD], direct ? " " : "*", peer[i][threads - 1],
			       ours / ms[PATH_OLD], ours / peer[i][threads - 1], gflop / ours * 1e3, bc->what,
			       same ? "" : "  OUTPUTS DIFFER");
			fflush(stdout);
			for (int p = 0; p < N_PATHS; p++) {
				free(times[p]);
				free(y[p]);
			}
			free(x), free(f), free(b), free(scratch);
		}
		st_pool_free(pool);
	}
	if (!script)
		printf("\n(PyTorch not measured: /usr/bin/python3 cannot import torch)\n");
	return all_agree ? 0 : 1;
}
