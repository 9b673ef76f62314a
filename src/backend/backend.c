/* Finding and loading backend modules (strata-<name>.so) with dlopen. */
#include "config.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "st-backend.h"
#include "st-core.h"

#ifndef ST_BACKEND_DIR
#define ST_BACKEND_DIR "/usr/local/lib/strata/backends"
#endif

/* One backend's load, done once per process: the module, or why not. */
typedef struct loaded_backend {
	char name[32];
	const st_backend_module *module;
	char why[1024];
} loaded_backend;

#define MAX_BACKENDS 8

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static loaded_backend loaded[MAX_BACKENDS];
static int n_loaded;

int
st_backend_built(const char *name)
{
#ifdef ST_HAVE_CUDA
	if (strcmp(name, "cuda") == 0)
		return 1;
#endif
	(void)name;
	return 0;
}

char *
st_backend_search_path(void)
{
	st_buf path;
	st_buf_init(&path);
	const char *env = getenv("STRATA_BACKEND_PATH");
	if (env != NULL && *env)
		st_buf_puts(&path, env);
	if (st_running_from_build_tree())
		st_buf_printf(&path, "%s%s/src/backend/cuda/.libs", path.len ? ":" : "", ST_BUILD_DIR);
	else
		st_buf_printf(&path, "%s%s", path.len ? ":" : "", ST_BACKEND_DIR);
	return st_buf_take(&path);
}

/* Backend names are short lower-case words: never a path. */
static bool
plain_name(const char *name)
{
	size_t n = strlen(name);
	if (n == 0 || n >= sizeof loaded[0].name)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= '0' && name[i] <= '9')))
			return false;
	}
	return true;
}

/* What a user can do about a module that would not load, by backend. */
static const char *
load_hint(const char *name)
{
	if (strcmp(name, "cuda") == 0)
		return " (the CUDA runtime, cuDNN 9 and cuBLAS it was built with must be on the library path: "
		       "LD_LIBRARY_PATH or ldconfig)";
	return "";
}

/* Loads name's module into b: the first file of the search path that loads
 * and has the entry point and ABI; otherwise the first reason found. */
static void
load_module(loaded_backend *b, const char *name)
{
	b->module = NULL;
	b->why[0] = '\0';
	char *search = st_backend_search_path();
	char *save = NULL;
	bool found = false;
	for (char *dir = strtok_r(search, ":", &save); dir != NULL && b->module == NULL;
	     dir = strtok_r(NULL, ":", &save)) {
		char *file = st_xasprintf("%s/strata-%s.so", dir, name);
		if (access(file, F_OK) != 0) {
			free(file);
			continue;
		}
		found = true;
		char why[sizeof b->why];
		why[0] = '\0';
		void *h = dlopen(file, RTLD_NOW | RTLD_LOCAL);
		if (h == NULL) {
			const char *e = dlerror();
			snprintf(why, sizeof why, "the %s backend's module cannot be loaded: %s%s", name,
			         e ? e : file, load_hint(name));
		} else {
			void *sym = dlsym(h, ST_BACKEND_MODULE_SYMBOL);
			const st_backend_module *m = NULL;
			if (sym != NULL) {
				st_backend_module_get_fn get;
				memcpy(&get, &sym, sizeof get);
				m = get();
			}
			if (m == NULL) {
				snprintf(why, sizeof why, "%s is not a Strata backend module (no %s)", file,
				         ST_BACKEND_MODULE_SYMBOL);
			} else if (m->abi != ST_BACKEND_ABI_VERSION) {
				snprintf(why, sizeof why,
				         "%s was built for backend ABI %u; this strata has ABI %u (rebuild the module "
				         "with this strata)",
				         file, (unsigned)m->abi, (unsigned)ST_BACKEND_ABI_VERSION);
			} else if (m->name == NULL || strcmp(m->name, name) != 0 || m->device_count == NULL ||
			           m->device_info == NULL || m->versions == NULL) {
				snprintf(why, sizeof why, "%s does not describe the %s backend", file, name);
			} else {
				b->module = m;
			}
			if (b->module == NULL)
				dlclose(h);
			/* A loaded module stays loaded: its table is handed out. */
		}
		if (b->module == NULL && b->why[0] == '\0')
			snprintf(b->why, sizeof b->why, "%s", why);
		free(file);
	}
	if (!found) {
		if (!st_backend_built(name) && strcmp(name, "cuda") == 0) {
			snprintf(b->why, sizeof b->why,
			         "this build of strata has no CUDA backend: configure did not find the CUDA toolkit "
			         "with cuDNN (docs/cuda.md)");
		} else {
			char *folders = st_backend_search_path();
			snprintf(b->why, sizeof b->why, "no strata-%s.so in %s", name, folders);
			free(folders);
		}
	}
	free(search);
}

const st_backend_module *
st_backend_load(const char *name, char *why, size_t why_size)
{
	if (name == NULL || !plain_name(name)) {
		snprintf(why, why_size, "'%s' is not a backend name", name ? name : "(null)");
		return NULL;
	}
	pthread_mutex_lock(&lock);
	loaded_backend *b = NULL;
	for (int i = 0; i < n_loaded; i++) {
		if (strcmp(loaded[i].name, name) == 0)
			b = &loaded[i];
	}
	if (b == NULL && n_loaded < MAX_BACKENDS) {
		b = &loaded[n_loaded++];
		snprintf(b->name, sizeof b->name, "%s", name);
		load_module(b, name);
	}
	const st_backend_module *m = b ? b->module : NULL;
	if (m == NULL)
		snprintf(why, why_size, "%s", b ? b->why : "too many backends");
	pthread_mutex_unlock(&lock);
	return m;
}

int
st_backend_ready(const char *name, st_backend_device *dev, char *why, size_t why_size)
{
	char reason[1024];
	const st_backend_module *m = st_backend_load(name, reason, sizeof reason);
	if (m == NULL) {
		snprintf(why, why_size, "the %s backend is unavailable: %s", name, reason);
		return -1;
	}
	reason[0] = '\0';
	int n = m->device_count(reason, sizeof reason);
	if (n < 1) {
		snprintf(why, why_size, "the %s backend is unavailable: %s", name,
		         reason[0] ? reason : "no device");
		return -1;
	}
	st_backend_device d;
	memset(&d, 0, sizeof d);
	if (m->device_info(0, &d, reason, sizeof reason) != 0) {
		snprintf(why, why_size, "the %s backend is unavailable: %s", name, reason);
		return -1;
	}
	d.name[sizeof d.name - 1] = '\0';
	if (dev != NULL)
		*dev = d;
	return 0;
}
