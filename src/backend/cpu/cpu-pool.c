/* The CPU backend's thread pool: static partitioning of a range over a fixed
 * set of workers, reused across layers and runs. Idle threads spin briefly
 * before they sleep or yield, since layers hand out work every few hundred
 * microseconds. */
#include "config.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "k-cpu.h"
#include "k-nn.h"
#include "st-engine.h"

/*
 * How long an idle thread spins: a worker waiting for the next job before it
 * sleeps, and the caller waiting for the workers to finish before it yields
 * its processor at every round. 2000 pauses are some 50 us on Zen 4 (a pause
 * takes about 25 ns there): long enough to bridge the serial steps between
 * layers, short enough not to hold a core that another thread needs. With
 * 20000 (0.5 ms after every job) and an unbounded wait, ResNet-18 on 2
 * threads took twice as long on a 2-core machine shared with other work
 * (130-270 ms against 55-135 ms, interleaved runs), slower than on 1 thread.
 */
#define SPIN_ROUNDS 2000
/*
 * A worker spins longer, up to WORKER_SPIN_ROUNDS pauses (some 1.1 ms on a
 * Zen 3, where a pause takes 28 ns), yielding its processor every
 * SPIN_ROUNDS of them, before it sleeps. On the 2-vCPU test guest a worker
 * that slept between two jobs (done with its chunk more than 57 us before
 * the caller with its own, or between runs) was woken late whenever its
 * vCPU had halted, or beside the caller: the 3 x 3 row on two threads
 * took 1.13-1.60 ms (median of 4 races 1.33) in bench/cpu's race against
 * 0.93-1.23 (1.02) with the longer spin, and ONNX Runtime, whose threads
 * spin for tens of ms, 1.4-1.6 in both. With another process busy on one
 * core, SqueezeNet on two threads took the same either way (12.6-13.2 ms):
 * the yields hand the core over while the worker waits.
 */
#define WORKER_SPIN_ROUNDS 40000

struct st_pool {
	int n;                      /* threads, the caller included */
	pthread_t *workers;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	atomic_uint generation;     /* bumped for every job */
	atomic_int pending;         /* chunks not finished yet */
	atomic_bool stop;
	atomic_int *tids;           /* each worker's kernel thread id, 0 until it starts */
	/* The current job. */
	st_range_fn fn;
	void *arg;
	int64_t n_items;
	int chunks;
};

typedef struct worker_arg {
	st_pool *pool;
	int index;
} worker_arg;

static void
chunk_range(int64_t n, int chunks, int i, int64_t *begin, int64_t *end)
{
	int64_t base = n / chunks, extra = n % chunks;
	*begin = i * base + (i < extra ? i : extra);
	*end = *begin + base + (i < extra ? 1 : 0);
}

static void *
worker_main(void *p)
{
	worker_arg *w = p;
	st_pool *pool = w->pool;
	int index = w->index;
	free(w);
	atomic_store(&pool->tids[index], (int)syscall(SYS_gettid));
	/* No job can have been handed out before the pool was returned, so the
	 * first one to wait for follows generation 0 (reading the counter here
	 * instead could miss a job dispatched before this thread got going). */
	unsigned seen = 0;
	for (;;) {
		/* Wait for the next job: spin a little, then sleep. */
		int spins = 0;
		while (atomic_load_explicit(&pool->generation, memory_order_acquire) == seen &&
		       !atomic_load(&pool->stop)) {
			if (++spins < WORKER_SPIN_ROUNDS) {
				if (spins % SPIN_ROUNDS == 0)
					sched_yield();
#if defined(__x86_64__) || defined(__i386__)
				__builtin_ia32_pause();
#endif
				continue;
			}
			pthread_mutex_lock(&pool->lock);
			while (atomic_load(&pool->generation) == seen && !atomic_load(&pool->stop))
				pthread_cond_wait(&pool->wake, &pool->lock);
			pthread_mutex_unlock(&pool->lock);
		}
		if (atomic_load(&pool->stop))
			return NULL;
		seen = atomic_load(&pool->generation);
		if (index < pool->chunks) {
			int64_t b, e;
			chunk_range(pool->n_items, pool->chunks, index, &b, &e);
			if (b < e)
				pool->fn(pool->arg, b, e);
		}
		/* Every worker answers every job, busy or not, so that the next job's
		 * fields are never written while one of them may still read these. */
		atomic_fetch_sub_explicit(&pool->pending, 1, memory_order_acq_rel);
	}
}

int
st_cpu_count(void)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof set, &set) == 0) {
		int n = CPU_COUNT(&set);
		if (n > 0)
			return n;
	}
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (int)n : 1;
}

void
st_cpu_quiet(void)
{
	k_gemm_init();
}

st_pool *
st_pool_new(int n)
{
	/* OpenBLAS's own threads stop spinning before ours start (k-gemm.c). */
	st_cpu_quiet();
	if (n <= 0)
		n = st_cpu_count();
	if (n > 256)
		n = 256;
	st_pool *pool = st_xcalloc(1, sizeof *pool);
	pool->n = n;
	pthread_mutex_init(&pool->lock, NULL);
	pthread_cond_init(&pool->wake, NULL);
	atomic_init(&pool->generation, 0);
	atomic_init(&pool->pending, 0);
	atomic_init(&pool->stop, false);
	pool->workers = st_xcalloc((size_t)n, sizeof *pool->workers);
	pool->tids = st_xcalloc((size_t)n, sizeof *pool->tids);
	for (int i = 0; i < n; i++)
		atomic_init(&pool->tids[i], 0);
	for (int i = 1; i < n; i++) {
		worker_arg *w = st_xmalloc(sizeof *w);
		w->pool = pool;
		w->index = i;
		if (pthread_create(&pool->workers[i], NULL, worker_main, w) != 0) {
			/* Fewer threads than asked for still computes the same result. */
			free(w);
			pool->n = i;
			break;
		}
	}
	return pool;
}

void
st_pool_free(st_pool *pool)
{
	if (pool == NULL)
		return;
	pthread_mutex_lock(&pool->lock);
	atomic_store(&pool->stop, true);
	pthread_cond_broadcast(&pool->wake);
	pthread_mutex_unlock(&pool->lock);
	for (int i = 1; i < pool->n; i++)
		pthread_join(pool->workers[i], NULL);
	pthread_mutex_destroy(&pool->lock);
	pthread_cond_destroy(&pool->wake);
	free(pool->workers);
	free((void *)pool->tids);
	free(pool);
}

int
st_pool_threads(const st_pool *pool)
{
	return pool->n;
}

int
st_pool_thread_ids(st_pool *pool, int *tids)
{
	tids[0] = (int)syscall(SYS_gettid);
	for (int i = 1; i < pool->n; i++) {
		/* A worker records its id first thing; one just created may not
		 * have run yet. */
		while ((tids[i] = atomic_load(&pool->tids[i])) == 0)
			sched_yield();
	}
	return pool->n;
}

static void
pool_parallel_for(const st_exec_ctx *ctx, int64_t n, int64_t grain, st_range_fn fn, void *arg)
{
	st_pool *pool = ctx->host_private;
	if (n <= 0)
		return;
	if (grain < 1)
		grain = 1;
	int64_t most = (n + grain - 1) / grain;
	int chunks = most < pool->n ? (int)most : pool->n;
	if (chunks <= 1) {
		fn(arg, 0, n);
		return;
	}
	pool->fn = fn;
	pool->arg = arg;
	pool->n_items = n;
	pool->chunks = chunks;
	atomic_store(&pool->pending, pool->n - 1);
	pthread_mutex_lock(&pool->lock);
	atomic_fetch_add_explicit(&pool->generation, 1, memory_order_release);
	pthread_cond_broadcast(&pool->wake);
	pthread_mutex_unlock(&pool->lock);
	/* The caller takes the first chunk, then waits for the others; after a
	 * short spin it yields, so that a worker that lost its processor to
	 * another thread can finish. */
	int64_t b, e;
	chunk_range(n, chunks, 0, &b, &e);
	fn(arg, b, e);
	for (int spins = 0; atomic_load_explicit(&pool->pending, memory_order_acquire) > 0;) {
		if (++spins > SPIN_ROUNDS) {
			sched_yield();
			continue;
		}
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#endif
	}
}

void
st_pool_context(st_pool *pool, st_exec_ctx *ctx)
{
	memset(ctx, 0, sizeof *ctx);
	ctx->api = &st_host;
	ctx->n_threads = pool->n;
	ctx->parallel_for = pool_parallel_for;
	ctx->host_private = pool;
}

/* The kernels library decides (kernels/cpu/k-cpu.c); every copy of it, here
 * and in each plugin, decides alike from the same CPU and environment. */
const char *
st_cpu_simd(void)
{
	return k_cpu_isa_name(k_cpu_isa());
}

const char *
st_cpu_simd_note(void)
{
	return k_cpu_isa_note();
}
