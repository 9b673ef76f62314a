/* The algorithm-choice cache as implementations on a device reach it
 * (api->algo_find and api->algo_keep, plugin ABI 2.8): one cache per
 * (device, library versions) pair met in this process, read from the
 * user's cache file at first use and saved at every choice kept. */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "st-algo-cache.h"
#include "st-backend.h"

typedef struct host_cache {
	char device[128];
	char library[512];
	st_algo_cache *cache;
} host_cache;

#define MAX_CACHES 16

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static host_cache caches[MAX_CACHES];
static int n_caches;

/* The cache of L's device (under lock), loaded from the file on first
 * use; NULL when L runs on no device or the device cannot say what it is.
 * A file that cannot be read as a cache is reported once on stderr and
 * left alone (st_algo_cache_save then refuses to replace it). */
static st_algo_cache *
cache_of(const st_exec_layer *L, char **path)
{
	*path = NULL;
	const st_device *dev = L != NULL && L->ctx != NULL ? L->ctx->device : NULL;
	if (dev == NULL || dev->backend == NULL)
		return NULL;
	char why[512];
	const st_backend_module *m = st_backend_load(dev->backend, why, sizeof why);
	st_backend_device info;
	if (m == NULL || m->device_info(dev->index, &info, why, sizeof why) != 0)
		return NULL;
	char library[512];
	m->versions(library, sizeof library);
	*path = st_algo_cache_default_path();
	for (int i = 0; i < n_caches; i++) {
		if (strcmp(caches[i].device, info.name) == 0 && strcmp(caches[i].library, library) == 0)
			return caches[i].cache;
	}
	if (n_caches == MAX_CACHES || info.name[0] == '\0' || library[0] == '\0')
		return NULL;
	host_cache *h = &caches[n_caches++];
	snprintf(h->device, sizeof h->device, "%s", info.name);
	snprintf(h->library, sizeof h->library, "%s", library);
	h->cache = st_algo_cache_new(h->device, h->library);
	if (*path != NULL) {
		st_diag d;
		st_diag_init(&d);
		/* The messages say the file is not used and left as it is. */
		if (st_algo_cache_load(h->cache, *path, &d) != 0)
			st_diag_print(&d, stderr);
		st_diag_free(&d);
	}
	return h->cache;
}

int
st_algo_host_find(const st_exec_layer *L, const char *key, st_algo_choice *out)
{
	if (key == NULL || out == NULL)
		return -1;
	pthread_mutex_lock(&lock);
	char *path;
	st_algo_cache *c = cache_of(L, &path);
	const st_algo_entry *e = c != NULL ? st_algo_cache_find(c, key) : NULL;
	if (e != NULL)
		*out = (st_algo_choice){ .algo = e->algo, .math = e->math, .workspace = e->workspace, .ms = e->ms };
	pthread_mutex_unlock(&lock);
	free(path);
	return e != NULL ? 0 : -1;
}

int
st_algo_host_keep(const st_exec_layer *L, const char *key, const st_algo_choice *choice)
{
	if (key == NULL || choice == NULL)
		return -1;
	pthread_mutex_lock(&lock);
	char *path;
	st_algo_cache *c = cache_of(L, &path);
	st_algo_entry e = { .algo = choice->algo, .math = choice->math, .workspace = choice->workspace,
		            .ms = choice->ms };
	int rc = -1;
	if (c != NULL && path != NULL && st_algo_cache_put(c, key, &e) == 0) {
		char err[512];
		rc = st_algo_cache_save(c, path, err, sizeof err);
	}
	pthread_mutex_unlock(&lock);
	free(path);
	return rc;
}
