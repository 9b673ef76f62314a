/* bench/cpu/peak-fma: the machine's FP32 peak, measured. Each thread runs
 * many independent chains of fused multiply-adds, so that neither latency
 * nor memory limits them; AVX-512 and AVX2 are tried where the CPU has them
 * and the best is the peak that bench/cpu holds its convolutions to.
 *   peak-fma [--threads N] [--reps N] [--seconds S] [--json]
 *
 * With --serve it is the peak's side of bench.py's race instead: on
 * exactly --threads threads, with the widest instruction set the CPU has,
 * it calibrates runs of about --seconds (there 0.005), prints {"ready":
 * true, "gflop": G, "isa": NAME} (G: the work of one run), then for each
 * line "N [LEAD_MS]" read from stdin makes untimed runs until LEAD_MS
 * milliseconds have passed (none without it), then N runs, and prints
 * {"ms": [...]}, the time of each of the N, until stdin ends. */
#include "config.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define PEAK_X86 1
#endif

/* One kernel: runs `iterations` rounds and returns a value that depends on
 * every chain, so that the compiler keeps all the work. */
typedef float (*kernel_fn)(long iterations, float seed);

typedef struct {
	const char *name;
	kernel_fn run;
	double flops_per_iteration;
	int (*supported)(void);
} isa_desc;

#ifdef PEAK_X86
/* Sixteen zmm accumulators: far more than FMA latency times the number of
 * FMA pipes on any current core, while 32 registers leave room for the
 * operands. */
__attribute__((target("avx512f"))) static float
kernel_avx512(long iterations, float seed)
{
	__m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f * seed);
	__m512 c0 = _mm512_set1_ps(seed), c1 = _mm512_set1_ps(seed + 1), c2 = _mm512_set1_ps(seed + 2),
	       c3 = _mm512_set1_ps(seed + 3), c4 = _mm512_set1_ps(seed + 4), c5 = _mm512_set1_ps(seed + 5),
	       c6 = _mm512_set1_ps(seed + 6), c7 = _mm512_set1_ps(seed + 7), c8 = _mm512_set1_ps(seed + 8),
	       c9 = _mm512_set1_ps(seed + 9), c10 = _mm512_set1_ps(seed + 10), c11 = _mm512_set1_ps(seed + 11),
	       c12 = _mm512_set1_ps(seed + 12), c13 = _mm512_set1_ps(seed + 13), c14 = _mm512_set1_ps(seed + 14),
	       c15 = _mm512_set1_ps(seed + 15);
	for (long i = 0; i < iterations; i++) {
		c0 = _mm512_fmadd_ps(c0, a, b);
		c1 = _mm512_fmadd_ps(c1, a, b);
		c2 = _mm512_fmadd_ps(c2, a, b);
		c3 = _mm512_fmadd_ps(c3, a, b);
		c4 = _mm512_fmadd_ps(c4, a, b);
		c5 = _mm512_fmadd_ps(c5, a, b);
		c6 = _mm512_fmadd_ps(c6, a, b);
		c7 = _mm512_fmadd_ps(c7, a, b);
		c8 = _mm512_fmadd_ps(c8, a, b);
		c9 = _mm512_fmadd_ps(c9, a, b);
		c10 = _mm512_fmadd_ps(c10, a, b);
		c11 = _mm512_fmadd_ps(c11, a, b);
		c12 = _mm512_fmadd_ps(c12, a, b);
		c13 = _mm512_fmadd_ps(c13, a, b);
		c14 = _mm512_fmadd_ps(c14, a, b);
		c15 = _mm512_fmadd_ps(c15, a, b);
	}
	__m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(c0, c1), _mm512_add_ps(c2, c3)),
	                         _mm512_add_ps(_mm512_add_ps(c4, c5), _mm512_add_ps(c6, c7)));
	s = _mm512_add_ps(s, _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(c8, c9), _mm512_add_ps(c10, c11)),
	                                   _mm512_add_ps(_mm512_add_ps(c12, c13), _mm512_add_ps(c14, c15))));
	return _mm512_reduce_add_ps(s);
}

/* Twelve ymm accumulators: with the two operands that is 14 of the 16
 * registers AVX2 has, so nothing spills. */
__attribute__((target("avx2,fma"))) static float
kernel_avx2(long iterations, float seed)
{
	__m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f * seed);
	__m256 c0 = _mm256_set1_ps(seed), c1 = _mm256_set1_ps(seed + 1), c2 = _mm256_set1_ps(seed + 2),
	       c3 = _mm256_set1_ps(seed + 3), c4 = _mm256_set1_ps(seed + 4), c5 = _mm256_set1_ps(seed + 5),
	       c6 = _mm256_set1_ps(seed + 6), c7 = _mm256_set1_ps(seed + 7), c8 = _mm256_set1_ps(seed + 8),
	       c9 = _mm256_set1_ps(seed + 9), c10 = _mm256_set1_ps(seed + 10), c11 = _mm256_set1_ps(seed + 11);
	for (long i = 0; i < iterations; i++) {
		c0 = _mm256_fmadd_ps(c0, a, b);
		c1 = _mm256_fmadd_ps(c1, a, b);
		c2 = _mm256_fmadd_ps(c2, a, b);
		c3 = _mm256_fmadd_ps(c3, a, b);
		c4 = _mm256_fmadd_ps(c4, a, b);
		c5 = _mm256_fmadd_ps(c5, a, b);
		c6 = _mm256_fmadd_ps(c6, a, b);
		c7 = _mm256_fmadd_ps(c7, a, b);
		c8 = _mm256_fmadd_ps(c8, a, b);
		c9 = _mm256_fmadd_ps(c9, a, b);
		c10 = _mm256_fmadd_ps(c10, a, b);
		c11 = _mm256_fmadd_ps(c11, a, b);
	}
	__m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(c0, c1), _mm256_add_ps(c2, c3)),
	                         _mm256_add_ps(_mm256_add_ps(c4, c5), _mm256_add_ps(c6, c7)));
	s = _mm256_add_ps(s, _mm256_add_ps(_mm256_add_ps(c8, c9), _mm256_add_ps(c10, c11)));
	float lanes[8];
	_mm256_storeu_ps(lanes, s);
	return lanes[0] + lanes[1] + lanes[2] + lanes[3] + lanes[4] + lanes[5] + lanes[6] + lanes[7];
}

static int
has_avx512(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx512f");
}

static int
has_avx2(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
#endif

/* What any compiler and CPU can run: eight scalar chains. It is the peak
 * only where no vector kernel above applies. */
static float
kernel_plain(long iterations, float seed)
{
	float a = 0.999999f, b = 1e-7f * seed, c[8];
	for (int k = 0; k < 8; k++)
		c[k] = seed + (float)k;
	for (long i = 0; i < iterations; i++) {
		for (int k = 0; k < 8; k++)
			c[k] = fmaf(c[k], a, b);
	}
	return c[0] + c[1] + c[2] + c[3] + c[4] + c[5] + c[6] + c[7];
}

static int
always(void)
{
	return 1;
}

static const isa_desc isas[] = {
#ifdef PEAK_X86
	{ "avx512", kernel_avx512, 16.0 * 16 * 2, has_avx512 },
	{ "avx2", kernel_avx2, 12.0 * 8 * 2, has_avx2 },
#endif
	{ "scalar", kernel_plain, 8.0 * 2, always },
};
#define N_ISAS ((int)(sizeof isas / sizeof isas[0]))

typedef struct {
	const isa_desc *isa;
	long iterations;
	pthread_barrier_t *start;
	double began, ended;
	float result;
} worker;

static double
now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *
work(void *arg)
{
	worker *w = arg;
	pthread_barrier_wait(w->start);
	w->began = now();
	w->result = w->isa->run(w->iterations, 1.0f);
	w->ended = now();
	return NULL;
}

/* GFLOP/s of `threads` threads each running `iterations` rounds, timed
 * by the threads themselves from the first start to the last finish (the
 * main thread may be scheduled late on a busy machine). */
static double
measure(const isa_desc *isa, int threads, long iterations)
{
	pthread_t tid[64];
	worker w[64];
	pthread_barrier_t start;
	pthread_barrier_init(&start, NULL, (unsigned)threads + 1);
	for (int t = 0; t < threads; t++) {
		w[t] = (worker){ .isa = isa, .iterations = iterations, .start = &start };
		pthread_create(&tid[t], NULL, work, &w[t]);
	}
	pthread_barrier_wait(&start);
	float sink = 0;
	double first = 0, last = 0;
	for (int t = 0; t < threads; t++) {
		pthread_join(tid[t], NULL);
		sink += w[t].result;
		first = t == 0 || w[t].began < first ? w[t].began : first;
		last = w[t].ended > last ? w[t].ended : last;
	}
	double seconds = last - first;
	pthread_barrier_destroy(&start);
	/* The results are meaningless but must look used. */
	if (sink == 12345.678f)
		fprintf(stderr, "%g\n", (double)sink);
	return isa->flops_per_iteration * (double)iterations * threads / seconds / 1e9;
}

static void
usage(void)
{
	fprintf(stderr, "usage: peak-fma [--threads N] [--reps N] [--seconds S] [--json]\n"
	                "       peak-fma --serve [--threads N] [--seconds S]\n"
	                "Measures FP32 FMA throughput on 1..N threads (default 2) with every vector\n"
	                "instruction set the CPU has, best of --reps (default 5) runs of about --seconds\n"
	                "(default 0.2) each.\n");
}

/* The --serve loop (above); returns 0 when stdin ends. */
static int
serve(int threads, double seconds)
{
	const isa_desc *isa = NULL;
	for (int k = 0; k < N_ISAS && isa == NULL; k++)
		if (isas[k].supported())
			isa = &isas[k];
	long n = 1 << 16;
	double rate = 0;
	for (int r = 0; r < 3; r++) {
		double g = measure(isa, threads, n);
		rate = g > rate ? g : rate;
	}
	long iterations = (long)(seconds * rate * 1e9 / (isa->flops_per_iteration * threads));
	if (iterations < n)
		iterations = n;
	double gflop = isa->flops_per_iteration * (double)iterations * threads / 1e9;
	printf("{\"ready\": true, \"gflop\": %.6f, \"isa\": \"%s\"}\n", gflop, isa->name);
	fflush(stdout);
	char line[64];
	while (fgets(line, sizeof line, stdin) != NULL) {
		char *rest;
		int runs = (int)strtol(line, &rest, 10);
		double lead = strtod(rest, NULL) / 1e3, spent = 0;
		while (spent < lead)
			spent += gflop / measure(isa, threads, iterations);
		printf("{\"ms\": [");
		for (int r = 0; r < runs; r++)
			printf("%s%.4f", r ? ", " : "", gflop / measure(isa, threads, iterations) * 1e3);
		printf("]}\n");
		fflush(stdout);
	}
	return 0;
}

int
main(int argc, char **argv)
{
	int max_threads = 2, reps = 5, json = 0, serving = 0, seconds_given = 0;
	double seconds = 0.2;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
			max_threads = atoi(argv[++i]);
		else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
			reps = atoi(argv[++i]);
		else if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc)
			seconds = atof(argv[++i]), seconds_given = 1;
		else if (strcmp(argv[i], "--json") == 0)
			json = 1;
		else if (strcmp(argv[i], "--serve") == 0)
			serving = 1;
		else {
			usage();
			return strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0 ? 0 : 2;
		}
	}
	if (max_threads < 1 || max_threads > 64 || reps < 1 || !(seconds > 0)) {
		usage();
		return 2;
	}
	if (serving)
		return serve(max_threads, seconds_given ? seconds : 0.005);

	/* Iterations for about `seconds` per run, from a short calibration per
	 * instruction set on one thread. */
	long iterations[N_ISAS];
	int usable[N_ISAS], n_vector = 0;
	for (int k = 0; k < N_ISAS; k++) {
		usable[k] = isas[k].supported();
		if (usable[k] && strcmp(isas[k].name, "scalar") != 0)
			n_vector++;
	}
	for (int k = 0; k < N_ISAS; k++) {
		/* The scalar chains only stand in when there is no vector kernel. */
		if (n_vector > 0 && strcmp(isas[k].name, "scalar") == 0)
			usable[k] = 0;
		if (!usable[k])
			continue;
		long n = 1 << 20;
		double rate = 0;
		for (int r = 0; r < 3; r++) {
			double g = measure(&isas[k], 1, n);
			rate = g > rate ? g : rate;
		}
		iterations[k] = (long)(seconds * rate * 1e9 / isas[k].flops_per_iteration);
		if (iterations[k] < n)
			iterations[k] = n;
	}

	if (json)
		printf("{\"peak\": [");
	else
		printf("%-8s %-8s %12s %s\n", "threads", "isa", "GFLOP/s", "(best of runs; all runs)");
	for (int t = 1; t <= max_threads; t++) {
		double best = 0;
		const char *best_isa = "";
		if (json)
			printf("%s{\"threads\": %d, \"by_isa\": {", t > 1 ? ", " : "", t);
		int printed = 0;
		for (int k = 0; k < N_ISAS; k++) {
			if (!usable[k])
				continue;
			double top = 0;
			char runs[512] = "";
			size_t used = 0;
			for (int r = 0; r < reps; r++) {
				double g = measure(&isas[k], t, iterations[k]);
				if (g > top)
					top = g;
				if (used < sizeof runs - 16)
					used += (size_t)snprintf(runs + used, sizeof runs - used, "%s%.1f", r ? " " : "", g);
			}
			if (json)
				printf("%s\"%s\": %.3f", printed++ ? ", " : "", isas[k].name, top);
			else
				printf("%-8d %-8s %12.1f (%s)\n", t, isas[k].name, top, runs);
			if (top > best) {
				best = top;
				best_isa = isas[k].name;
			}
		}
		if (json)
			printf("}, \"gflops\": %.3f, \"isa\": \"%s\"}", best, best_isa);
		else
			printf("%-8d %-8s %12.1f <- peak\n", t, best_isa, best);
	}
	if (json)
		printf("]}\n");
	return 0;
}
