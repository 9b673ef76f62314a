/* bench/pool: the vector pooling loops and the few-row fully connected loops
 * against the paths they replaced, on the layers of SqueezeNet 1.1,
 * ResNet-18 and MobileNetV2. For each case and for 1 and 2 threads of the
 * CPU backend's pool, the new and the old path run in turns, RUNS rounds
 * after 5 warm-ups, so both see the same machine; medians are printed. The
 * old paths: k_pool_general (the loops k_pool ran before), k_global_pool_ref
 * (what k_global_pool ran per plane) and OpenBLAS sgemv (what a one-row
 * fully connected layer ran). "cold" runs read a 64 MiB buffer before each
 * timed call, so that the weights come from memory as in a whole network.
 * The outputs of the two paths are compared too.
 *   bench-pool [RUNS] [--cpu-time] [--one-thread] */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "k-nn.h"
#include "st-engine.h"

typedef enum kind { KIND_MAX, KIND_AVG, KIND_GLOBAL_AVG, KIND_FC, KIND_FC_COLD } kind;

typedef struct bench_case {
	const char *what;
	kind kind;
	int c, in, k, stride, pad, ceil; /* pooling; a fully connected layer: rows, in, out in c, in, k */
} bench_case;

static const bench_case cases[] = {
	{ "SqueezeNet maxpool 64x111x111 3/2 ceil", KIND_MAX, 64, 111, 3, 2, 0, 1 },
	{ "SqueezeNet maxpool 128x55x55 3/2 ceil", KIND_MAX, 128, 55, 3, 2, 0, 1 },
	{ "SqueezeNet maxpool 256x27x27 3/2 ceil", KIND_MAX, 256, 27, 3, 2, 0, 1 },
	{ "ResNet-18 maxpool 64x112x112 3/2 pad 1", KIND_MAX, 64, 112, 3, 2, 1, 0 },
	{ "avgpool 64x56x56 3/1 pad 1", KIND_AVG, 64, 56, 3, 1, 1, 0 },
	{ "avgpool 128x56x56 2/2", KIND_AVG, 128, 56, 2, 2, 0, 0 },
	{ "SqueezeNet global avg 1000x13x13", KIND_GLOBAL_AVG, 1000, 13, 0, 0, 0, 0 },
	{ "ResNet-18 global avg 512x7x7", KIND_GLOBAL_AVG, 512, 7, 0, 0, 0, 0 },
	{ "MobileNetV2 global avg 1280x7x7", KIND_GLOBAL_AVG, 1280, 7, 0, 0, 0, 0 },
	{ "ResNet-18 fc 1x512->1000", KIND_FC, 1, 512, 1000, 0, 0, 0 },
	{ "MobileNetV2 fc 1x1280->1000", KIND_FC, 1, 1280, 1000, 0, 0, 0 },
	{ "fc 3x1280->1000", KIND_FC, 3, 1280, 1000, 0, 0, 0 },
	{ "ResNet-18 fc 1x512->1000 cold", KIND_FC_COLD, 1, 512, 1000, 0, 0, 0 },
	{ "MobileNetV2 fc 1x1280->1000 cold", KIND_FC_COLD, 1, 1280, 1000, 0, 0, 0 },
};
#define N_CASES (sizeof cases / sizeof cases[0])

/* Wall time, or with --cpu-time the process's CPU time (all its threads),
 * which a busy machine's other processes disturb less. */
static clockid_t timer = CLOCK_MONOTONIC;

static double
now_ms(void)
{
	struct timespec t;
	clock_gettime(timer, &t);
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
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* n floats in [-1, 1); caller frees with free(). */
static float *
floats_new(int64_t n, unsigned seed)
{
	float *v = malloc((size_t)n * sizeof *v);
	for (int64_t i = 0; i < n; i++) {
		seed = seed * 1664525u + 1013904223u;
		v[i] = (float)(seed >> 8) / 8388608.0f - 1.0f;
	}
	return v;
}

static k_window
case_window(const bench_case *b)
{
	k_window w = { .spatial = 2, .batch = 1, .in_channels = b->c, .out_channels = b->c, .groups = 1 };
	for (int i = 0; i < 2; i++) {
		w.in[i] = b->in;
		w.kernel[i] = b->k;
		w.stride[i] = b->stride;
		w.dilation[i] = 1;
		w.pad_begin[i] = w.pad_end[i] = b->pad;
		int64_t span = b->in + 2 * b->pad - b->k;
		w.out[i] = (span + (b->ceil ? b->stride - 1 : 0)) / b->stride + 1;
	}
	return w;
}

static float *flush_buffer;
#define FLUSH_FLOATS (16 * 1024 * 1024)

/* Reads and writes 64 MiB, pushing the weights out of the caches. */
static void
flush_caches(void)
{
	for (int64_t i = 0; i < FLUSH_FLOATS; i += 16)
		flush_buffer[i] += 1.0f;
}

/* One run of the new (path 0) or the old (path 1) way. */
static void
run_case(const bench_case *b, int path, const float *x, const float *w, const float *bias, float *y,
         const st_exec_ctx *ctx)
{
	switch (b->kind) {
	case KIND_MAX:
	case KIND_AVG: {
		k_window win = case_window(b);
		k_pool_mode mode = b->kind == KIND_MAX ? K_POOL_MAX : K_POOL_AVG;
		if (path == 0)
			k_pool(&win, mode, false, x, y, ctx);
		else
			k_pool_general(&win, mode, false, x, y, ctx);
		break;
	}
	case KIND_GLOBAL_AVG:
		if (path == 0)
			k_global_pool(b->c, (int64_t)b->in * b->in, K_POOL_AVG, x, y, ctx);
		else
			k_global_pool_ref(b->c, (int64_t)b->in * b->in, K_POOL_AVG, x, y);
		break;
	case KIND_FC:
	case KIND_FC_COLD:
		k_gemm_force(path == 0 ? K_GEMM_AUTO : K_GEMM_OPENBLAS);
		k_fully_connected(b->c, b->in, b->k, x, w, NULL, bias, y, NULL, 1, ctx);
		k_gemm_force(K_GEMM_AUTO);
		break;
	}
}

static bool
agree(const float *a, const float *b, int64_t n)
{
	double top = 0;
	for (int64_t i = 0; i < n; i++)
		top = fabs(b[i]) > top ? fabs(b[i]) : top;
	for (int64_t i = 0; i < n; i++) {
		if (!(fabs(a[i] - b[i]) <= 1e-5 * (top + fabs(b[i]))))
			return false;
	}
	return true;
}

int
main(int argc, char **argv)
{
	int runs = 51, max_threads = 2;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--cpu-time") == 0)
			timer = CLOCK_PROCESS_CPUTIME_ID;
		else if (strcmp(argv[i], "--one-thread") == 0)
			max_threads = 1;
		else if (atoi(argv[i]) > 0)
			runs = atoi(argv[i]);
	}
	k_gemm_init();
	flush_buffer = calloc(FLUSH_FLOATS, sizeof *flush_buffer);
	printf("Pooling and few-row fully connected (%s variant): median ms (%s) of %d runs after 5 warm-ups,\n"
	       "new and old path alternating. old: k_pool_general, k_global_pool_ref, OpenBLAS sgemv.\n\n",
	       k_cpu_isa_name(k_cpu_isa()), timer == CLOCK_MONOTONIC ? "wall" : "CPU time", runs);
	printf("%-42s %2s %9s %9s %7s %9s\n", "case", "T", "new", "old", "old/new", "GB/s new");
	bool all_agree = true;
	for (int threads = 1; threads <= max_threads; threads++) {
		st_pool *pool = st_pool_new(threads);
		st_exec_ctx ctx;
		st_pool_context(pool, &ctx);
		for (size_t i = 0; i < N_CASES; i++) {
			const bench_case *b = &cases[i];
			bool fc = b->kind == KIND_FC || b->kind == KIND_FC_COLD;
			int64_t nx, ny, nw = 0;
			if (fc) {
				nx = (int64_t)b->c * b->in;
				ny = (int64_t)b->c * b->k;
				nw = (int64_t)b->in * b->k;
			} else if (b->kind == KIND_GLOBAL_AVG) {
				nx = (int64_t)b->c * b->in * b->in;
				ny = b->c;
			} else {
				k_window win = case_window(b);
				nx = (int64_t)b->c * b->in * b->in;
				ny = (int64_t)b->c * win.out[0] * win.out[1];
			}
			float *x = floats_new(nx, 1), *w = fc ? floats_new(nw, 2) : NULL;
			float *bias = fc ? floats_new(b->k, 3) : NULL;
			float *y[2] = { floats_new(ny, 4), floats_new(ny, 5) };
			double *times[2] = { calloc((size_t)runs, sizeof(double)), calloc((size_t)runs, sizeof(double)) };
			for (int r = 0; r < 5 + runs; r++) {
				for (int p = 0; p < 2; p++) {
					if (b->kind == KIND_FC_COLD)
						flush_caches();
					double t0 = now_ms();
					run_case(b, p, x, w, bias, y[p], &ctx);
					if (r >= 5)
						times[p][r - 5] = now_ms() - t0;
				}
			}
			bool same = agree(y[0], y[1], ny);
			all_agree = all_agree && same;
			double ms[2] = { median(times[0], runs), median(times[1], runs) };
			double bytes = 4.0 * (double)(nx + ny + nw);
			printf("%-42s %2d %9.4f %9.4f %7.2f %9.1f%s\n", b->what, threads, ms[0], ms[1], ms[1] / ms[0],
			       bytes / ms[0] * 1e-6, same ? "" : "  OUTPUTS DIFFER");
			fflush(stdout);
			free(times[0]), free(times[1]), free(y[0]), free(y[1]);
			free(x), free(w), free(bias);
		}
		st_pool_free(pool);
	}
	free(flush_buffer);
	return all_agree ? 0 : 1;
}
