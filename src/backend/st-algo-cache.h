/* The CUDA backend's algorithm-choice cache: the cuDNN algorithm measured
 * best for each convolution shape, per device and library version, kept in
 * $XDG_CACHE_HOME/strata/cudnn-algos.json (docs/cuda.md). Plain C with no
 * CUDA header, so that it builds and is tested on every machine. */
#ifndef ST_ALGO_CACHE_H
#define ST_ALGO_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "st-core.h"

#define ST_ALGO_CACHE_FORMAT "strata-algo-cache"
#define ST_ALGO_CACHE_VERSION 1
/* The file's name in the cache folder. */
#define ST_ALGO_CACHE_FILE "cudnn-algos.json"

/* Limits a file (and st_algo_cache_put) must keep; anything larger is
 * taken for damage, not data. */
#define ST_ALGO_CACHE_MAX_BYTES (16u << 20)        /* the whole file */
#define ST_ALGO_CACHE_MAX_ENTRIES 100000           /* entries of all pairs */
#define ST_ALGO_CACHE_MAX_KEY 4096                 /* bytes of a key */
#define ST_ALGO_CACHE_MAX_NAME 1024                /* bytes of a device or library name */
#define ST_ALGO_CACHE_MAX_WORKSPACE (1ull << 50)   /* bytes of one workspace: 1 PiB */

/* One (device, library) pair's choices by key; the file also carries the
 * other pairs it held, untouched. Not thread-safe: one thread at a time. */
typedef struct st_algo_cache st_algo_cache;

/* What the measured search chose for one key. */
typedef struct st_algo_entry {
	int algo;            /* the cuDNN algorithm enum value */
	int math;            /* the cuDNN math type enum value */
	uint64_t workspace;  /* bytes, at most ST_ALGO_CACHE_MAX_WORKSPACE */
	double ms;           /* the measured time; negative when unknown; finite */
} st_algo_entry;

/* ------------------------------------------------------------------------
 * backend-algo-cache.c
 * ------------------------------------------------------------------------ */

/* An empty cache for one device ("NVIDIA H100 80GB HBM3") and library
 * version ("cudnn 9.10.2 cuda 13.0"), both copied: non-empty and at most
 * ST_ALGO_CACHE_MAX_NAME bytes (asserted). Caller frees with
 * st_algo_cache_free. */
st_algo_cache *st_algo_cache_new(const char *device, const char *library);
void st_algo_cache_free(st_algo_cache *c);

/*
 * Replaces what c holds with the file at path. A missing file is an empty
 * cache and returns 0. A file that cannot be read or is not a valid cache
 * (not JSON, another format, a newer version, a wrong or missing field, an
 * entry out of range, a key given twice...) is refused as a whole: returns
 * -1 with errors in d naming the file, line:column and JSON path, leaves c
 * empty but usable, and marks it so that st_algo_cache_save refuses to
 * overwrite the file.
 */
int st_algo_cache_load(st_algo_cache *c, const char *path, st_diag *d);
/* The same from len bytes of text (need not be NUL-terminated); file names
 * the text in messages and in save's refusal. */
int st_algo_cache_parse(st_algo_cache *c, const char *text, size_t len, const char *file, st_diag *d);
/* Whether the last load or parse refused its file (save then refuses). */
bool st_algo_cache_failed(const st_algo_cache *c);

/* The entry of c's own pair for key (exact match), or NULL. The pointer
 * belongs to c and holds until the next put, load, parse, save or free. */
const st_algo_entry *st_algo_cache_find(const st_algo_cache *c, const char *key);
/* Sets key's entry in c's own pair, replacing any earlier one. Returns 0,
 * or -1 (c unchanged) when the file could not hold it: an empty or too long
 * key, a workspace over the limit, a non-finite ms, or a full cache. */
int st_algo_cache_put(st_algo_cache *c, const char *key, const st_algo_entry *e);
/* Entries of c's own pair. */
int st_algo_cache_count(const st_algo_cache *c);

/* The canonical file text of everything c holds: pairs sorted by device and
 * library, entries by key (byte order), one entry a line, pairs without
 * entries left out. Caller frees. */
char *st_algo_cache_text(const st_algo_cache *c);
/*
 * Writes c to path atomically, creating its folder. What the file holds now
 * is merged in first, so that processes sharing the file keep each other's
 * choices: on a key both have, c's entry wins for c's own pair and the
 * file's for the other pairs. c then holds the merged whole. Refuses (-1,
 * the reason in err, the file untouched) after a failed load or parse, or
 * when the file on disk can no longer be read as a cache.
 */
int st_algo_cache_save(st_algo_cache *c, const char *path, char *err, size_t err_size);

/* $XDG_CACHE_HOME/strata/cudnn-algos.json (~/.cache/strata/... when unset
 * or not absolute); NULL when no home folder is known. Caller frees. */
char *st_algo_cache_default_path(void);

/* ------------------------------------------------------------------------
 * backend-algo-host.c: api->algo_find and api->algo_keep (plugin ABI 2.8)
 * ------------------------------------------------------------------------ */

/* The choice kept for key on L's device (its name and the module's library
 * versions pick the pair), from the default file: 0, or -1 when none. */
int st_algo_host_find(const st_exec_layer *L, const char *key, st_algo_choice *out);
/* Keeps a choice and saves the file (merged, atomically): 0, or -1. */
int st_algo_host_keep(const st_exec_layer *L, const char *key, const st_algo_choice *choice);

#endif
