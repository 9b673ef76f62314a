/* libFuzzer target for the CUDA backend's algorithm cache file: reading
 * never crashes; a refused file leaves an empty cache that will not save;
 * an accepted one writes canonical text that reads back and writes out the
 * same, and takes a new entry that survives the trip too. All in memory. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "st-algo-cache.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The pair the seed files use most (tests/fuzz/corpus/algo-cache). */
#define DEVICE "NVIDIA H100 80GB HBM3"
#define LIBRARY "cudnn 9.10.2 cuda 13.0"

static void
fail(const char *what, const char *text)
{
	fprintf(stderr, "%s\n%s", what, text != NULL ? text : "");
	abort();
}

/* Reads text into a new cache that must accept it; caller frees. */
static st_algo_cache *
must_read(const char *text, const char *what)
{
	st_algo_cache *c = st_algo_cache_new(DEVICE, LIBRARY);
	st_diag d;
	st_diag_init(&d);
	if (st_algo_cache_parse(c, text, strlen(text), "canonical", &d) != 0) {
		st_diag_print(&d, stderr);
		fail(what, text);
	}
	st_diag_free(&d);
	return c;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	st_algo_cache *c = st_algo_cache_new(DEVICE, LIBRARY);
	st_diag d;
	st_diag_init(&d);
	int rc = st_algo_cache_parse(c, (const char *)data, size, "fuzz", &d);
	if (rc != 0) {
		if (d.errors == 0 || !st_algo_cache_failed(c) || st_algo_cache_count(c) != 0)
			fail("a refused cache gave no error, or kept entries, or forgot the failure", NULL);
		/* The refusal comes before any file is touched. */
		char err[512] = "";
		if (st_algo_cache_save(c, "/nonexistent/strata-fuzz/algos.json", err, sizeof err) != -1 ||
		    strstr(err, "could not be read") == NULL)
			fail("a refused cache did not refuse to save:", err);
		st_diag_free(&d);
		st_algo_cache_free(c);
		return 0;
	}
	if (d.errors != 0 || st_algo_cache_failed(c))
		fail("an accepted cache gave errors", NULL);
	st_diag_free(&d);

	char *first = st_algo_cache_text(c);
	st_algo_cache *again = must_read(first, "the canonical text of an accepted cache is refused:");
	char *second = st_algo_cache_text(again);
	if (strcmp(first, second) != 0 || st_algo_cache_count(again) != st_algo_cache_count(c)) {
		fprintf(stderr, "--- first\n%s--- second\n", first);
		fail("the canonical text does not write back the same:", second);
	}

	/* A new entry (or a replaced one) is found and survives the trip. */
	const st_algo_entry e = { .algo = 7, .math = 2, .workspace = 123456789, .ms = 0.5 };
	if (st_algo_cache_put(again, "fuzz key", &e) != 0 && st_algo_cache_count(again) < ST_ALGO_CACHE_MAX_ENTRIES)
		fail("put refused a valid entry", NULL);
	const st_algo_entry *found = st_algo_cache_find(again, "fuzz key");
	if (found != NULL) {
		if (found->algo != 7 || found->math != 2 || found->workspace != 123456789 || found->ms != 0.5)
			fail("find does not give what put stored", NULL);
		char *third = st_algo_cache_text(again);
		st_algo_cache *last = must_read(third, "a cache with a new entry is refused:");
		found = st_algo_cache_find(last, "fuzz key");
		if (found == NULL || found->algo != 7 || found->workspace != 123456789 || found->ms != 0.5)
			fail("a new entry did not survive saving:", third);
		st_algo_cache_free(last);
		free(third);
	}
	free(first);
	free(second);
	st_algo_cache_free(again);
	st_algo_cache_free(c);
	return 0;
}
