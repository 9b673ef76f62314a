/* The weights folder: one .npy file per layer and weight type, memory-mapped,
 * checked against the shapes the type checker declared; and seeded random
 * weights for networks that have no trained ones yet. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "st-io.h"

struct st_weights {
	char *dir;
};

st_weights *
st_weights_open(const char *dir, char *err, size_t size)
{
	struct stat st;
	if (stat(dir, &st) != 0) {
		snprintf(err, size, "weights folder %s: %s", dir, strerror(errno));
		return NULL;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, size, "weights folder %s is not a folder", dir);
		return NULL;
	}
	st_weights *w = st_xcalloc(1, sizeof *w);
	w->dir = st_xstrdup(dir);
	return w;
}

void
st_weights_close(st_weights *w)
{
	if (w == NULL)
		return;
	free(w->dir);
	free(w);
}

const char *
st_weights_dir(const st_weights *w)
{
	return w->dir;
}

char *
st_weights_path(const st_weights *w, const char *layer, const char *weight)
{
	size_t n = strlen(w->dir);
	bool slash = n > 0 && w->dir[n - 1] == '/';
	return st_xasprintf("%s%s%s_%s.npy", w->dir, slash ? "" : "/", layer, weight);
}

/* A name that cannot leave the folder or hide a file: no '/', not empty. */
static bool
file_name_part(const char *s)
{
	return s[0] != '\0' && strchr(s, '/') == NULL;
}

int
st_weights_load(st_weights *w, const char *layer, const char *weight, const st_shape *expected,
                bool optional, st_npy *out, char *err, size_t size)
{
	memset(out, 0, sizeof *out);
	if (!file_name_part(layer) || !file_name_part(weight)) {
		snprintf(err, size, "'%s' and '%s' do not make a weights file name", layer, weight);
		return -1;
	}
	char *path = st_weights_path(w, layer, weight);
	char want[200];
	st_shape_format(expected, want, sizeof want);
	struct stat st;
	if (stat(path, &st) != 0 && errno == ENOENT) {
		if (!optional)
			snprintf(err, size, "%s: no such file (layer '%s' needs its '%s' weight, %s)", path,
			         layer, weight, want);
		free(path);
		return optional ? 1 : -1;
	}
	char why[600];
	if (st_npy_read(path, out, why, sizeof why) != 0) {
		/* st_npy_read's messages start with the path already. */
		snprintf(err, size, "%s", why);
		free(path);
		return -1;
	}
	bool same = out->rank == expected->rank;
	for (int i = 0; same && i < out->rank; i++)
		same = out->dims[i] == expected->dims[i];
	if (!same) {
		st_shape found = { .dtype = expected->dtype, .rank = out->rank };
		memcpy(found.dims, out->dims, sizeof found.dims);
		char have[200];
		st_shape_format(&found, have, sizeof have);
		snprintf(err, size, "%s: expected %s, found %s", path, want, have);
		goto fail;
	}
	if (st_npy_convert(out, expected->dtype, why, sizeof why) != 0) {
		snprintf(err, size, "%s: %s (converting %s to %s)", path, why, st_npy_type_name(out->type),
		         st_dtype_name(expected->dtype));
		goto fail;
	}
	/* numpy aligns data to 64 bytes in the file, hence in the mapping;
	 * files from older or other writers may be aligned less. */
	if ((uintptr_t)out->data % 64 != 0) {
		void *copy = NULL;
		if (posix_memalign(&copy, 64, out->bytes ? out->bytes : 1) != 0) {
			snprintf(err, size, "%s: out of memory", path);
			goto fail;
		}
		memcpy(copy, out->data, out->bytes);
		if (out->map)
			munmap(out->map, out->map_len);
		free(out->owned);
		out->map = NULL;
		out->map_len = 0;
		out->owned = copy;
		out->data = copy;
	}
	free(path);
	return 0;
fail:
	st_npy_free(out);
	free(path);
	return -1;
}

/* ---- random weights ---- */

/* splitmix64 (Steele, Lea and Flood 2014; Vigna's public-domain code): one
 * 64-bit state, a fixed increment and a finaliser; integer-only, so the same
 * on every machine. */
static uint64_t
splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15u);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

void
st_weights_random(float *data, int64_t n, int64_t fan_in, uint64_t seed)
{
	/* sqrt and the single multiplication below are correctly rounded in
	 * IEEE arithmetic, so the values do not depend on the machine. */
	double bound = fan_in > 0 ? 1.0 / sqrt((double)fan_in) : 1.0;
	double step = bound / 8388608.0; /* 2^23 */
	uint64_t state = seed;
	for (int64_t i = 0; i < n; i++) {
		/* 24 random bits r give (r - (2^23 - 0.5)) / 2^23, symmetric in (-1, 1). */
		int64_t r = (int64_t)(splitmix64(&state) >> 40);
		double centred = (double)r - 8388607.5;
		data[i] = (float)(centred * step);
	}
}

uint64_t
st_weights_random_seed(const char *layer, const char *weight, uint64_t run_seed)
{
	/* FNV-1a over "layer\0weight", so that ("a_b", "c") and ("a", "b_c")
	 * differ, then mixed with the run's seed through splitmix64. */
	uint64_t h = 0xcbf29ce484222325u;
	for (const unsigned char *p = (const unsigned char *)layer; *p; p++)
		h = (h ^ *p) * 0x100000001b3u;
	h = (h ^ 0) * 0x100000001b3u;
	for (const unsigned char *p = (const unsigned char *)weight; *p; p++)
		h = (h ^ *p) * 0x100000001b3u;
	uint64_t s = run_seed;
	return h ^ splitmix64(&s);
}
