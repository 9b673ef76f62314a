/*
 * Prints how many threads this process has once the engine's thread pool
 * for one thread is made, and exits 1 unless it is just this one: OpenBLAS's
 * server threads, started when the library loads, must be stopped by then
 * (kernels/cpu/k-gemm.c), or they spin on the cores Strata's own workers
 * use (tests/cli/run.sh).
 */
#include "config.h"

#include <dirent.h>
#include <stdio.h>

#include "st-engine.h"

static int
threads(void)
{
	DIR *d = opendir("/proc/self/task");
	if (d == NULL)
		return -1;
	int n = 0;
	for (struct dirent *e; (e = readdir(d)) != NULL;)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

int
main(void)
{
	int before = threads();
	st_pool *pool = st_pool_new(1);
	int after = threads();
	st_pool_free(pool);
	printf("threads at start %d, with a pool of one thread %d\n", before, after);
	return after == 1 ? 0 : 1;
}
