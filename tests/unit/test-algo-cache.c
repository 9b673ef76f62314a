/* Unit tests: the CUDA backend's algorithm cache file (no GPU needed):
 * round trips, canonical text, other devices kept, damaged files refused
 * with positions and never overwritten, merging on save, XDG paths. */
#include "config.h"

#include <limits.h>
#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers.h"
#include "st-algo-cache.h"

#define H100 "NVIDIA H100 80GB HBM3"
#define CUDNN "cudnn 9.10.2 cuda 13.0"
#define KEY1 "conv-fwd fp16 nhwc n1 c64 h56 w56 k64 r3 s3 pad1,1 stride1,1 dil1,1 groups1"
#define KEY2 "conv-fwd fp16 nhwc n1 c64 h56 w56 k128 r1 s1 pad0,0 stride2,2 dil1,1 groups1"
#define KEY3 "conv-bwd-data fp32 nchw n8 c3 h224 w224 k64 r7 s7 pad3,3 stride2,2 dil1,1 groups1"

static void
write_text(const char *path, const char *text)
{
	char err[256];
	cr_assert_eq(st_write_file_atomic(path, text, strlen(text), err, sizeof err), 0, "%s", err);
}

/* The file's bytes; caller frees. */
static char *
read_text(const char *path)
{
	size_t len;
	char *text = st_read_file(path, &len);
	cr_assert_not_null(text, "cannot read %s", path);
	cr_assert_eq(strlen(text), len, "%s holds a NUL byte", path);
	return text;
}

static void
put(st_algo_cache *c, const char *key, int algo, int math, uint64_t workspace, double ms)
{
	st_algo_entry e = { .algo = algo, .math = math, .workspace = workspace, .ms = ms };
	cr_assert_eq(st_algo_cache_put(c, key, &e), 0, "put '%s' was refused", key);
}

static void
assert_entry(const st_algo_cache *c, const char *key, int algo, int math, uint64_t workspace, double ms)
{
	const st_algo_entry *e = st_algo_cache_find(c, key);
	cr_assert_not_null(e, "no entry for '%s'", key);
	cr_assert_eq(e->algo, algo, "'%s': algo %d, expected %d", key, e->algo, algo);
	cr_assert_eq(e->math, math, "'%s': math %d, expected %d", key, e->math, math);
	cr_assert_eq(e->workspace, workspace, "'%s': workspace %llu, expected %llu", key,
	             (unsigned long long)e->workspace, (unsigned long long)workspace);
	/* Exactly: the file must give back the very double that was measured. */
	cr_assert(e->ms == ms && signbit(e->ms) == signbit(ms), "'%s': ms %.17g, expected %.17g", key, e->ms, ms);
}

/* Loads path into a new cache for (device, library), which must succeed
 * without any message; caller frees. */
static st_algo_cache *
load_ok(const char *path, const char *device, const char *library)
{
	st_algo_cache *c = st_algo_cache_new(device, library);
	st_diag d;
	st_diag_init(&d);
	int rc = st_algo_cache_load(c, path, &d);
	if (rc != 0 || d.count != 0)
		st_diag_print(&d, stderr);
	cr_assert_eq(rc, 0, "%s was refused", path);
	cr_assert_eq(d.count, 0);
	cr_assert_not(st_algo_cache_failed(c));
	st_diag_free(&d);
	return c;
}

Test(algo_cache, round_trip_through_a_file)
{
	char *dir = test_temp_dir("algo-cache");
	/* The folders on the way are created, private as XDG wants. */
	char *path = st_xasprintf("%s/deep/er/cudnn-algos.json", dir);
	st_algo_cache *c = st_algo_cache_new(H100, CUDNN);
	cr_assert_null(st_algo_cache_find(c, KEY1));
	cr_assert_eq(st_algo_cache_count(c), 0);
	put(c, KEY1, 1, 0, 4096, 0.0123);
	put(c, KEY2, 6, 2, 123456789012ull, -1.0);
	put(c, KEY3, INT_MAX, INT_MIN, ST_ALGO_CACHE_MAX_WORKSPACE, 1.0 / 3.0);
	put(c, "special \"quotes\" \\ back\tslash\nnewline \x01 \xc3\xa9t\xc3\xa9", 0, 0, 0, 0.0);
	cr_assert_eq(st_algo_cache_count(c), 4);
	char err[512];
	cr_assert_eq(st_algo_cache_save(c, path, err, sizeof err), 0, "%s", err);
	struct stat st;
	char *sub = st_xasprintf("%s/deep", dir);
	cr_assert_eq(stat(sub, &st), 0, "the folder was not created");
	cr_assert_eq(st.st_mode & 0777, 0700);
	free(sub);

	st_algo_cache *again = load_ok(path, H100, CUDNN);
	cr_assert_eq(st_algo_cache_count(again), 4);
	assert_entry(again, KEY1, 1, 0, 4096, 0.0123);
	assert_entry(again, KEY2, 6, 2, 123456789012ull, -1.0);
	assert_entry(again, KEY3, INT_MAX, INT_MIN, ST_ALGO_CACHE_MAX_WORKSPACE, 1.0 / 3.0);
	assert_entry(again, "special \"quotes\" \\ back\tslash\nnewline \x01 \xc3\xa9t\xc3\xa9", 0, 0, 0, 0.0);
	/* Keys match exactly: no prefix, no case folding, no trimming. */
	cr_assert_null(st_algo_cache_find(again, "conv-fwd"));
	cr_assert_null(st_algo_cache_find(again, KEY1 " "));
	cr_assert_null(st_algo_cache_find(again, "CONV-FWD FP16 NHWC N1 C64 H56 W56 K64 R3 S3 PAD1,1 STRIDE1,1 DIL1,1 GROUPS1"));
	cr_assert_null(st_algo_cache_find(again, ""));

	/* Another device or library version sees none of them. */
	st_algo_cache *other = load_ok(path, H100, "cudnn 9.11.0 cuda 13.0");
	cr_assert_eq(st_algo_cache_count(other), 0);
	cr_assert_null(st_algo_cache_find(other, KEY1));
	st_algo_cache_free(other);
	other = load_ok(path, "NVIDIA H200", CUDNN);
	cr_assert_null(st_algo_cache_find(other, KEY1));
	st_algo_cache_free(other);

	st_algo_cache_free(again);
	st_algo_cache_free(c);
	free(path);
	test_remove_dir(dir);
}

Test(algo_cache, put_replaces)
{
	char *dir = test_temp_dir("algo-cache");
	char *path = st_xasprintf("%s/cudnn-algos.json", dir);
	st_algo_cache *c = st_algo_cache_new(H100, CUDNN);
	put(c, KEY1, 1, 0, 4096, 0.5);
	put(c, KEY2, 2, 0, 0, 0.25);
	put(c, KEY1, 7, 1, 8192, 0.125);
	cr_assert_eq(st_algo_cache_count(c), 2);
	assert_entry(c, KEY1, 7, 1, 8192, 0.125);
	assert_entry(c, KEY2, 2, 0, 0, 0.25);
	char err[512];
	cr_assert_eq(st_algo_cache_save(c, path, err, sizeof err), 0, "%s", err);
	st_algo_cache *again = load_ok(path, H100, CUDNN);
	cr_assert_eq(st_algo_cache_count(again), 2);
	assert_entry(again, KEY1, 7, 1, 8192, 0.125);
	/* Replaced again after loading, and saved over its own file. */
	put(again, KEY1, 3, 0, 16, -1);
	cr_assert_eq(st_algo_cache_save(again, path, err, sizeof err), 0, "%s", err);
	st_algo_cache_free(again);
	again = load_ok(path, H100, CUDNN);
	cr_assert_eq(st_algo_cache_count(again), 2);
	assert_entry(again, KEY1, 3, 0, 16, -1);
	char *text = read_text(path);
	const char *first = strstr(text, KEY1);
	cr_assert_not_null(first);
	cr_assert_null(strstr(first + 1, KEY1), "the key is written twice:\n%s", text);
	free(text);
	st_algo_cache_free(again);
	st_algo_cache_free(c);
	free(path);
	test_remove_dir(dir);
}

Test(algo_cache, put_refuses_what_the_file_could_not_hold)
{
	st_algo_cache *c = st_algo_cache_new(H100, CUDNN);
	put(c, KEY1, 1, 0, 4096, 0.5);
	st_algo_entry good = { .algo = 1, .math = 0, .workspace = 1, .ms = 1 };
	st_algo_entry e = good;
	cr_assert_eq(st_algo_cache_put(c, "", &e), -1);
	char *long_key = malloc(ST_ALGO_CACHE_MAX_KEY + 2);
	memset(long_key, 'k', ST_ALGO_CACHE_MAX_KEY + 1);
	long_key[ST_ALGO_CACHE_MAX_KEY + 1] = '\0';
	cr_assert_eq(st_algo_cache_put(c, long_key, &e), -1);
	long_key[ST_ALGO_CACHE_MAX_KEY] = '\0'; /* the longest allowed */
	cr_assert_eq(st_algo_cache_put(c, long_key, &e), 0);
	e.workspace = ST_ALGO_CACHE_MAX_WORKSPACE + 1;
	cr_assert_eq(st_algo_cache_put(c, KEY1, &e), -1);
	e = good;
	e.ms = NAN;
	cr_assert_eq(st_algo_cache_put(c, KEY1, &e), -1);
	e.ms = INFINITY;
	cr_assert_eq(st_algo_cache_put(c, KEY2, &e), -1);
	/* Refusals changed nothing. */
	cr_assert_eq(st_algo_cache_count(c), 2);
	assert_entry(c, KEY1, 1, 0, 4096, 0.5);
	cr_assert_null(st_algo_cache_find(c, KEY2));
	/* The longest key reads back. */
	char *text = st_algo_cache_text(c);
	st_algo_cache *again = st_algo_cache_new(H100, CUDNN);
	st_diag d;
	st_diag_init(&d);
	cr_assert_eq(st_algo_cache_parse(again, text, strlen(text), "t", &d), 0);
	assert_entry(again, long_key, 1, 0, 1, 1);
	st_diag_free(&d);
	st_algo_cache_free(again);
	free(text);
	free(long_key);
	st_algo_cache_free(c);
}

Test(algo_cache, canonical_text_is_sorted_and_deterministic)
{
	st_algo_cache *a = st_algo_cache_new(H100, CUDNN), *b = st_algo_cache_new(H100, CUDNN);
	char *empty = st_algo_cache_text(a);
	cr_assert_str_eq(empty, "{\n  \"format\": \"strata-algo-cache\",\n  \"version\": 1,\n  \"devices\": []\n}\n");
	free(empty);
	put(a, "b", 1, 0, 4096, 0.0123);
	put(a, "a", 0, 1, 0, -1);
	put(a, "B", 5, 0, 1, 2);
	put(b, "B", 5, 0, 1, 2);
	put(b, "a", 0, 1, 0, -1);
	put(b, "b", 9, 9, 9, 9); /* replaced below: the order of puts does not show */
	put(b, "b", 1, 0, 4096, 0.0123);
	char *ta = st_algo_cache_text(a), *tb = st_algo_cache_text(b);
	cr_assert_str_eq(ta, tb);
	/* Byte order ("B" < "a" < "b"), one entry a line. */
	static const char expected[] =
		"{\n"
		"  \"format\": \"strata-algo-cache\",\n"
		"  \"version\": 1,\n"
		"  \"devices\": [\n"
		"    {\n"
		"      \"device\": \"NVIDIA H100 80GB HBM3\",\n"
		"      \"library\": \"cudnn 9.10.2 cuda 13.0\",\n"
		"      \"entries\": [\n"
		"        {\"key\": \"B\", \"algo\": 5, \"math\": 0, \"workspace\": 1, \"ms\": 2.0},\n"
		"        {\"key\": \"a\", \"algo\": 0, \"math\": 1, \"workspace\": 0, \"ms\": -1.0},\n"
		"        {\"key\": \"b\", \"algo\": 1, \"math\": 0, \"workspace\": 4096, \"ms\": 0.0123}\n"
		"      ]\n"
		"    }\n"
		"  ]\n"
		"}\n";
	cr_assert_str_eq(ta, expected, "got:\n%s", ta);

	/* Saving twice writes the same bytes; loading and saving again too. */
	char *dir = test_temp_dir("algo-cache");
	char *p1 = st_xasprintf("%s/one.json", dir), *p2 = st_xasprintf("%s/two.json", dir);
	char err[512];
	cr_assert_eq(st_algo_cache_save(a, p1, err, sizeof err), 0, "%s", err);
	char *first = read_text(p1);
	cr_assert_str_eq(first, expected);
	cr_assert_eq(st_algo_cache_save(a, p1, err, sizeof err), 0, "%s", err);
	char *second = read_text(p1);
	cr_assert_str_eq(first, second);
	st_algo_cache *c = load_ok(p1, H100, CUDNN);
	cr_assert_eq(st_algo_cache_save(c, p2, err, sizeof err), 0, "%s", err);
	char *third = read_text(p2);
	cr_assert_str_eq(first, third);
	free(first);
	free(second);
	free(third);
	st_algo_cache_free(c);
	free(p1);
	free(p2);
	test_remove_dir(dir);
	free(ta);
	free(tb);
	st_algo_cache_free(a);
	st_algo_cache_free(b);
}

/* A file in the canonical form with three pairs; the cache under test is
 * the middle one (device "B-gpu"). */
static const char three_pairs[] =
	"{\n"
	"  \"format\": \"strata-algo-cache\",\n"
	"  \"version\": 1,\n"
	"  \"devices\": [\n"
	"    {\n"
	"      \"device\": \"A-gpu\",\n"
	"      \"library\": \"cudnn 8.9.7 cuda 12.2\",\n"
	"      \"entries\": [\n"
	"        {\"key\": \"k1\", \"algo\": 1, \"math\": 0, \"workspace\": 10, \"ms\": 0.5},\n"
	"        {\"key\": \"k2\", \"algo\": 2, \"math\": 1, \"workspace\": 0, \"ms\": -1.0}\n"
	"      ]\n"
	"    },\n"
	"    {\n"
	"      \"device\": \"B-gpu\",\n"
	"      \"library\": \"cudnn 9.10.2 cuda 13.0\",\n"
	"      \"entries\": [\n"
	"        {\"key\": \"k1\", \"algo\": 3, \"math\": 0, \"workspace\": 20, \"ms\": 1.5}\n"
	"      ]\n"
	"    },\n"
	"    {\n"
	"      \"device\": \"C-gpu\",\n"
	"      \"library\": \"cudnn 9.10.2 cuda 13.0\",\n"
	"      \"entries\": [\n"
	"        {\"key\": \"k9\", \"algo\": 4, \"math\": 2, \"workspace\": 1099511627776, \"ms\": 3.25}\n"
	"      ]\n"
	"    }\n"
	"  ]\n"
	"}\n";

/* The text of one pair's block in three_pairs, from its "{" to its "}". */
static char *
block_of(const char *text, const char *device)
{
	char *needle = st_xasprintf("    {\n      \"device\": \"%s\"", device);
	const char *start = strstr(text, needle);
	cr_assert_not_null(start, "no block for %s in:\n%s", device, text);
	const char *end = strstr(start, "\n    }");
	cr_assert_not_null(end);
	free(needle);
	return st_xstrndup(start, (size_t)(end - start) + 6);
}

Test(algo_cache, other_devices_are_kept_as_they_were)
{
	char *dir = test_temp_dir("algo-cache");
	char *path = st_xasprintf("%s/cudnn-algos.json", dir);
	write_text(path, three_pairs);
	st_algo_cache *c = load_ok(path, "B-gpu", "cudnn 9.10.2 cuda 13.0");
	/* Only its own pair is looked up. */
	cr_assert_eq(st_algo_cache_count(c), 1);
	assert_entry(c, "k1", 3, 0, 20, 1.5);
	cr_assert_null(st_algo_cache_find(c, "k2"));
	cr_assert_null(st_algo_cache_find(c, "k9"));
	put(c, "k1", 30, 1, 200, 0.75);
	put(c, "k2", 31, 0, 0, 0.0625);
	char err[512];
	cr_assert_eq(st_algo_cache_save(c, path, err, sizeof err), 0, "%s", err);
	char *saved = read_text(path);
	/* The other pairs' blocks are there, word for word. */
	char *a_before = block_of(three_pairs, "A-gpu"), *a_after = block_of(saved, "A-gpu");
	char *c_before = block_of(three_pairs, "C-gpu"), *c_after = block_of(saved, "C-gpu");
	cr_assert_str_eq(a_after, a_before);
	cr_assert_str_eq(c_after, c_before);
	/* And in order: A, B, C. */
	cr_assert(strstr(saved, "A-gpu") < strstr(saved, "B-gpu") && strstr(saved, "B-gpu") < strstr(saved, "C-gpu"),
	          "%s", saved);
	/* Each pair reads back what it had. */
	st_algo_cache *a = load_ok(path, "A-gpu", "cudnn 8.9.7 cuda 12.2");
	cr_assert_eq(st_algo_cache_count(a), 2);
	assert_entry(a, "k1", 1, 0, 10, 0.5);
	assert_entry(a, "k2", 2, 1, 0, -1);
	st_algo_cache *cc = load_ok(path, "C-gpu", "cudnn 9.10.2 cuda 13.0");
	assert_entry(cc, "k9", 4, 2, 1099511627776ull, 3.25);
	st_algo_cache *b = load_ok(path, "B-gpu", "cudnn 9.10.2 cuda 13.0");
	cr_assert_eq(st_algo_cache_count(b), 2);
	assert_entry(b, "k1", 30, 1, 200, 0.75);
	assert_entry(b, "k2", 31, 0, 0, 0.0625);
	free(a_before);
	free(a_after);
	free(c_before);
	free(c_after);
	free(saved);
	st_algo_cache_free(a);
	st_algo_cache_free(b);
	st_algo_cache_free(cc);
	st_algo_cache_free(c);
	free(path);
	test_remove_dir(dir);
}

Test(algo_cache, a_missing_file_is_an_empty_cache)
{
	char *dir = test_temp_dir("algo-cache");
	char *path = st_xasprintf("%s/not/there/cudnn-algos.json", dir);
	st_algo_cache *c = load_ok(path, H100, CUDNN);
	cr_assert_eq(st_algo_cache_count(c), 0);
	cr_assert_null(st_algo_cache_find(c, KEY1));
	/* Loading replaces what the cache held, even with nothing. */
	put(c, KEY1, 1, 0, 0, 1);
	st_diag d;
	st_diag_init(&d);
	cr_assert_eq(st_algo_cache_load(c, path, &d), 0);
	cr_assert_eq(d.count, 0);
	cr_assert_eq(st_algo_cache_count(c), 0);
	/* And it saves. */
	put(c, KEY2, 2, 0, 0, 1);
	char err[512];
	cr_assert_eq(st_algo_cache_save(c, path, err, sizeof err), 0, "%s", err);
	st_algo_cache *again = load_ok(path, H100, CUDNN);
	assert_entry(again, KEY2, 2, 0, 0, 1);
	st_algo_cache_free(again);
	/* A path through a plain file is missing too (ENOTDIR). */
	char *through = st_xasprintf("%s/x/cudnn-algos.json", path);
	cr_assert_eq(st_algo_cache_load(c, through, &d), 0);
	cr_assert_eq(d.count, 0);
	free(through);
	st_diag_free(&d);
	st_algo_cache_free(c);
	free(path);
	test_remove_dir(dir);
}

/* One damaged file: text with a '^' where the error must point (removed
 * before writing; none: no position), and what the first message says. */
typedef struct bad_case {
	const char *text;
	const char *says;
} bad_case;

#define HEAD "{\"format\": \"strata-algo-cache\", \"version\": 1, \"devices\": [{\"device\": \"D\", \"library\": \"L\", \"entries\": ["
#define TAIL "]}]}"
#define GOOD "{\"key\": \"k\", \"algo\": 1, \"math\": 0, \"workspace\": 0, \"ms\": 1}"

static const bad_case bad_cases[] = {
	/* Not JSON. */
	{ "^", "the file is empty" },
	{ "{\"format\": \"strata-algo-cache\"^", "not closed" },
	{ "^hello", "invalid JSON" },
	{ "{\"format\": \"strata-algo-cache\"} ^x", "after the end" },
	/* Not a cache, or not one this version reads. */
	{ "^[1, 2]", "not an algorithm cache: the field \"format\" must be \"strata-algo-cache\" (at format)" },
	{ "^{\"version\": 1, \"devices\": []}", "not an algorithm cache" },
	{ "{\"format\": ^\"strata-model\", \"version\": 1, \"layers\": []}", "(at format)" },
	{ "{\"format\": \"strata-algo-cache\", \"version\": ^2, \"devices\": []}",
	  "format version 2, written by a newer Strata; this one reads version 1 (at version)" },
	{ "{\"format\": \"strata-algo-cache\", \"version\": ^\"1\", \"devices\": []}", "must be the format version" },
	{ "{\"format\": \"strata-algo-cache\", \"version\": ^0, \"devices\": []}", "must be the format version" },
	{ "{\"format\": \"strata-algo-cache\", \"version\": ^1.5, \"devices\": []}", "must be the format version" },
	{ "^{\"format\": \"strata-algo-cache\", \"version\": 1}", "the algorithm cache has no field 'devices'" },
	{ "{\"format\": \"strata-algo-cache\", \"version\": 1, \"devices\": [], ^\"extra\": 1}",
	  "unknown field 'extra' in the algorithm cache (at extra)" },
	{ "{\"format\": \"strata-algo-cache\", \"version\": 1, \"devices\": [], ^\"devices\": []}",
	  "field 'devices' is given twice" },
	{ "{\"format\": \"strata-algo-cache\", \"version\": 1, \"devices\": ^{}}", "'devices' must be a list of devices (at devices)" },
	/* Devices. */
	{ "{\"format\": \"strata-algo-cache\", \"version\": 1, \"devices\": [^7]}", "a device must be an object with \"device\", \"library\" and \"entries\" (at devices[0])" },
	{ "{\"format\": \"strata-algo-cache\", \"version\": 1, \"devices\": [^{\"device\": \"D\", \"entries\": []}]}",
	  "a device has no field 'library' (at devices[0])" },
	{ "{\"format\": \"strata-algo-cache\", \"version\": 1, \"devices\": [{\"device\": ^5, \"library\": \"L\", "
	  "\"entries\": []}]}",
	  "'device' must be a string, got 5 (at devices[0].device)" },
	{ "{\"format\": \"strata-algo-cache\", \"version\": 1, \"devices\": [{\"device\": ^\"\", \"library\": \"L\", "
	  "\"entries\": []}]}",
	  "'device' must be 1 to 1024 bytes long, got 0 (at devices[0].device)" },
	{ "{\"format\": \"strata-algo-cache\", \"version\": 1, \"devices\": [{\"device\": \"D\", \"library\": \"L\", "
	  "\"entries\": ^{}}]}",
	  "'entries' must be a list of entries (at devices[0].entries)" },
	{ "{\"format\": \"strata-algo-cache\", \"version\": 1, \"devices\": [{\"device\": \"D\", \"library\": \"L\", "
	  "\"entries\": []}, ^{\"device\": \"D\", \"library\": \"L\", \"entries\": []}]}",
	  "the device \"D\" with library \"L\" is given twice (first at line 1, column 59) (at devices[1])" },
	/* Entries. */
	{ HEAD GOOD ", ^[]" TAIL, "an entry must be an object with \"key\", \"algo\", \"math\", \"workspace\" and \"ms\" "
	  "(at devices[0].entries[1])" },
	{ HEAD GOOD ", ^{\"key\": \"j\", \"math\": 0, \"workspace\": 0, \"ms\": 1}" TAIL,
	  "an entry has no field 'algo' (at devices[0].entries[1])" },
	{ HEAD "{\"key\": \"k\", \"algo\": 1, \"math\": 0, \"workspace\": 0, \"ms\": 1, ^\"tf32\": true}" TAIL,
	  "unknown field 'tf32' in an entry (at devices[0].entries[0].tf32)" },
	{ HEAD "{\"key\": \"k\", \"algo\": 1, ^\"algo\": 2, \"math\": 0, \"workspace\": 0, \"ms\": 1}" TAIL,
	  "field 'algo' is given twice (at devices[0].entries[0].algo)" },
	{ HEAD "{\"key\": ^3, \"algo\": 1, \"math\": 0, \"workspace\": 0, \"ms\": 1}" TAIL,
	  "'key' must be a string, got 3 (at devices[0].entries[0].key)" },
	{ HEAD "{\"key\": ^\"\", \"algo\": 1, \"math\": 0, \"workspace\": 0, \"ms\": 1}" TAIL,
	  "'key' must be 1 to 4096 bytes long, got 0" },
	{ HEAD "{\"key\": \"k\", \"algo\": ^1.5, \"math\": 0, \"workspace\": 0, \"ms\": 1}" TAIL,
	  "'algo' must be an integer from -2147483648 to 2147483647, got 1.5 (at devices[0].entries[0].algo)" },
	{ HEAD "{\"key\": \"k\", \"algo\": ^3000000000, \"math\": 0, \"workspace\": 0, \"ms\": 1}" TAIL,
	  "got 3000000000 (at devices[0].entries[0].algo)" },
	{ HEAD "{\"key\": \"k\", \"algo\": ^\"1\", \"math\": 0, \"workspace\": 0, \"ms\": 1}" TAIL,
	  "'algo' must be an integer from -2147483648 to 2147483647, got a string" },
	{ HEAD "{\"key\": \"k\", \"algo\": 1, \"math\": ^null, \"workspace\": 0, \"ms\": 1}" TAIL,
	  "'math' must be an integer from -2147483648 to 2147483647, got null (at devices[0].entries[0].math)" },
	{ HEAD GOOD ",\n" GOOD ",\n{\"key\": \"j\", \"algo\": 1, \"math\": 0, \"workspace\": ^-4096, \"ms\": 1}" TAIL,
	  "'workspace' must be a whole number of bytes from 0 to 1125899906842624, got -4096 "
	  "(at devices[0].entries[2].workspace)" },
	{ HEAD "{\"key\": \"k\", \"algo\": 1, \"math\": 0, \"workspace\": ^2251799813685248, \"ms\": 1}" TAIL,
	  "'workspace' must be a whole number of bytes from 0 to 1125899906842624, got 2251799813685248" },
	{ HEAD "{\"key\": \"k\", \"algo\": 1, \"math\": 0, \"workspace\": ^1e300, \"ms\": 1}" TAIL, "got 1e+300" },
	{ HEAD "{\"key\": \"k\", \"algo\": 1, \"math\": 0, \"workspace\": ^0.1, \"ms\": 1}" TAIL, "got 0.1 (at" },
	{ HEAD "{\"key\": \"k\", \"algo\": 1, \"math\": 0, \"workspace\": 0, \"ms\": ^1e999}" TAIL,
	  "'ms' must be a finite number of milliseconds (negative: unknown), got inf (at devices[0].entries[0].ms)" },
	{ HEAD "{\"key\": \"k\", \"algo\": 1, \"math\": 0, \"workspace\": 0, \"ms\": ^-1e999}" TAIL, "got -inf" },
	{ HEAD "{\"key\": \"k\", \"algo\": 1, \"math\": 0, \"workspace\": 0, \"ms\": ^\"fast\"}" TAIL, "got a string" },
	{ HEAD GOOD ",\n  {\"key\": \"j\", \"algo\": 1, \"math\": 0, \"workspace\": 0, \"ms\": 1},\n  "
	  "{\"key\": ^\"k\", \"algo\": 2, \"math\": 0, \"workspace\": 0, \"ms\": 1},\n  " GOOD TAIL,
	  "the key \"k\" is given twice for this device and library (first at line 1, column 103) "
	  "(at devices[0].entries[2].key)" },
};

/* Where the '^' stands in text: line and column (1-based, ASCII), or 0. */
static void
marker_position(const char *text, int *line, int *col)
{
	const char *m = strchr(text, '^');
	*line = *col = 0;
	if (m == NULL)
		return;
	*line = 1;
	const char *line_start = text;
	for (const char *p = text; p < m; p++) {
		if (*p == '\n') {
			(*line)++;
			line_start = p + 1;
		}
	}
	*col = (int)(m - line_start) + 1;
}

/* Loads path, which must be refused with a first error at line:col that
 * holds says; the cache is then empty and remembers the failure. */
static void
assert_refused(st_algo_cache *c, const char *path, int line, int col, const char *says)
{
	st_diag d;
	st_diag_init(&d);
	cr_assert_eq(st_algo_cache_load(c, path, &d), -1, "accepted: %s (expected '%s')", path, says);
	cr_assert(d.errors >= 1);
	cr_assert_str_eq(d.items[0].file, path);
	cr_assert(strstr(d.items[0].text, says) != NULL, "message '%s' lacks '%s'", d.items[0].text, says);
	cr_assert_eq(d.items[0].line, line, "'%s': line %d, expected %d", says, d.items[0].line, line);
	cr_assert_eq(d.items[0].col, col, "'%s': column %d, expected %d", says, d.items[0].col, col);
	/* The last word says what happens now. */
	cr_assert_eq(d.items[d.count - 1].severity, ST_SEVERITY_INFO);
	cr_assert(strstr(d.items[d.count - 1].text, "left as it is") != NULL, "%s", d.items[d.count - 1].text);
	cr_assert(st_algo_cache_failed(c));
	cr_assert_eq(st_algo_cache_count(c), 0);
	cr_assert_null(st_algo_cache_find(c, "k"));
	st_diag_free(&d);
}

Test(algo_cache, damaged_files_are_refused_with_file_position_and_path)
{
	char *dir = test_temp_dir("algo-cache");
	char *path = st_xasprintf("%s/cudnn-algos.json", dir);
	/* Loaded over a good cache each time: a refusal empties it. */
	write_text(path, HEAD GOOD TAIL);
	for (size_t i = 0; i < sizeof bad_cases / sizeof *bad_cases; i++) {
		st_algo_cache *c = load_ok(path, "D", "L");
		cr_assert_eq(st_algo_cache_count(c), 1);
		const bad_case *b = &bad_cases[i];
		int line, col;
		marker_position(b->text, &line, &col);
		char *text = st_xstrdup(b->text);
		char *m = strchr(text, '^');
		if (m != NULL)
			memmove(m, m + 1, strlen(m));
		write_text(path, text);
		assert_refused(c, path, line, col, b->says);
		free(text);
		st_algo_cache_free(c);
		write_text(path, HEAD GOOD TAIL);
	}
	free(path);
	test_remove_dir(dir);
}

Test(algo_cache, every_problem_is_named_in_one_pass)
{
	static const char text[] =
		"{\"format\": \"strata-algo-cache\", \"version\": 1, \"x\": 0, \"devices\": [\n"
		" {\"device\": \"D\", \"library\": \"L\", \"entries\": [\n"
		"  {\"key\": \"a\", \"algo\": 1, \"math\": 0, \"workspace\": -1, \"ms\": 1},\n"
		"  {\"key\": \"b\", \"algo\": 1, \"math\": 0.5, \"workspace\": 0, \"ms\": 1}]}]}\n";
	st_algo_cache *c = st_algo_cache_new("D", "L");
	st_diag d;
	st_diag_init(&d);
	cr_assert_eq(st_algo_cache_parse(c, text, strlen(text), "f.json", &d), -1);
	cr_assert_eq(d.errors, 3);
	cr_assert(strstr(d.items[0].text, "unknown field 'x'") != NULL, "%s", d.items[0].text);
	cr_assert(strstr(d.items[1].text, "(at devices[0].entries[0].workspace)") != NULL, "%s", d.items[1].text);
	cr_assert_eq(d.items[1].line, 3);
	cr_assert(strstr(d.items[2].text, "(at devices[0].entries[1].math)") != NULL, "%s", d.items[2].text);
	cr_assert_eq(d.items[2].line, 4);
	cr_assert_eq(d.items[2].col, 35);
	cr_assert_str_eq(d.items[2].file, "f.json");
	st_diag_free(&d);
	st_algo_cache_free(c);
}

Test(algo_cache, files_that_cannot_be_read_are_refused)
{
	char *dir = test_temp_dir("algo-cache");
	char *path = st_xasprintf("%s/cudnn-algos.json", dir);
	st_algo_cache *c = st_algo_cache_new(H100, CUDNN);
	/* A folder where the file should be. */
	cr_assert_eq(mkdir(path, 0700), 0);
	assert_refused(c, path, 0, 0, "not a regular file");
	cr_assert_eq(rmdir(path), 0);
	/* Absurdly large: refused before reading. */
	FILE *f = fopen(path, "wb");
	cr_assert_not_null(f);
	cr_assert_eq(ftruncate(fileno(f), (off_t)ST_ALGO_CACHE_MAX_BYTES + 1), 0);
	fclose(f);
	assert_refused(c, path, 0, 0, "an algorithm cache is at most 16777216 bytes");
	/* Too large given as text too. */
	size_t n = ST_ALGO_CACHE_MAX_BYTES + 1;
	char *big = malloc(n);
	memset(big, ' ', n);
	st_diag d;
	st_diag_init(&d);
	cr_assert_eq(st_algo_cache_parse(c, big, n, "big.json", &d), -1);
	cr_assert(strstr(d.items[0].text, "at most") != NULL);
	st_diag_free(&d);
	free(big);
	/* Without permission (root reads anyway). */
	if (geteuid() != 0) {
		write_text(path, HEAD GOOD TAIL);
		cr_assert_eq(chmod(path, 0), 0);
		assert_refused(c, path, 0, 0, "cannot read the algorithm cache: Permission denied");
		cr_assert_eq(chmod(path, 0600), 0);
	}
	st_algo_cache_free(c);
	free(path);
	test_remove_dir(dir);
}

Test(algo_cache, save_refuses_after_a_failed_load_and_leaves_the_file)
{
	char *dir = test_temp_dir("algo-cache");
	char *path = st_xasprintf("%s/cudnn-algos.json", dir);
	char *elsewhere = st_xasprintf("%s/other.json", dir);
	/* A file from a newer Strata, say: valid JSON, not ours to rewrite. */
	static const char newer[] = "{\"format\": \"strata-algo-cache\", \"version\": 2,\n \"devices\": {\"x\": [1, 2, 3]}}\n";
	write_text(path, newer);
	st_algo_cache *c = st_algo_cache_new(H100, CUDNN);
	st_diag d;
	st_diag_init(&d);
	cr_assert_eq(st_algo_cache_load(c, path, &d), -1);
	st_diag_free(&d);
	/* Usable but empty. */
	cr_assert_eq(st_algo_cache_count(c), 0);
	put(c, KEY1, 1, 0, 0, 1);
	assert_entry(c, KEY1, 1, 0, 0, 1);
	char err[512] = "";
	cr_assert_eq(st_algo_cache_save(c, path, err, sizeof err), -1);
	cr_assert(strstr(err, path) != NULL, "%s", err);
	cr_assert(strstr(err, "could not be read") != NULL, "%s", err);
	cr_assert(strstr(err, "left as it was") != NULL, "%s", err);
	cr_assert(strstr(err, "delete it") != NULL, "%s", err);
	/* Not to another path either: the other pairs of the file are unknown. */
	cr_assert_eq(st_algo_cache_save(c, elsewhere, err, sizeof err), -1);
	cr_assert_eq(access(elsewhere, F_OK), -1);
	char *after = read_text(path);
	cr_assert_str_eq(after, newer);
	free(after);
	/* Nothing else was left in the folder (no temporary file). */
	char *cmd = st_xasprintf("test $(ls -A '%s' | wc -l) -eq 1", dir);
	cr_assert_eq(system(cmd), 0, "files were left beside the cache");
	free(cmd);

	/* Once the user deletes the file, the next load starts afresh. */
	cr_assert_eq(unlink(path), 0);
	st_diag_init(&d);
	cr_assert_eq(st_algo_cache_load(c, path, &d), 0);
	cr_assert_not(st_algo_cache_failed(c));
	put(c, KEY1, 1, 0, 0, 1);
	cr_assert_eq(st_algo_cache_save(c, path, err, sizeof err), 0, "%s", err);
	st_diag_free(&d);
	st_algo_cache_free(c);
	free(elsewhere);
	free(path);
	test_remove_dir(dir);
}

Test(algo_cache, save_leaves_a_file_damaged_since_loading)
{
	char *dir = test_temp_dir("algo-cache");
	char *path = st_xasprintf("%s/cudnn-algos.json", dir);
	st_algo_cache *c = st_algo_cache_new(H100, CUDNN);
	put(c, KEY1, 1, 0, 0, 1);
	char err[512];
	cr_assert_eq(st_algo_cache_save(c, path, err, sizeof err), 0, "%s", err);
	static const char damaged[] = "{\"format\": \"strata-algo-cache\", \"version\": 1, \"devices\": [\x01";
	write_text(path, damaged);
	put(c, KEY2, 2, 0, 0, 1);
	cr_assert_eq(st_algo_cache_save(c, path, err, sizeof err), -1);
	cr_assert(strstr(err, "can no longer be read") != NULL, "%s", err);
	cr_assert(strstr(err, "line 1, column") != NULL, "%s", err);
	cr_assert(strstr(err, "delete it") != NULL, "%s", err);
	char *after = read_text(path);
	cr_assert_str_eq(after, damaged);
	free(after);
	/* The cache itself is as it was. */
	assert_entry(c, KEY1, 1, 0, 0, 1);
	assert_entry(c, KEY2, 2, 0, 0, 1);
	cr_assert_not(st_algo_cache_failed(c));
	st_algo_cache_free(c);
	free(path);
	test_remove_dir(dir);
}

Test(algo_cache, save_merges_what_other_processes_saved)
{
	char *dir = test_temp_dir("algo-cache");
	char *path = st_xasprintf("%s/cudnn-algos.json", dir);
	/* Two GPUs of one server, and a second process on the first one, all
	 * loaded before any saved. */
	st_algo_cache *gpu0 = load_ok(path, "GPU-0", CUDNN);
	st_algo_cache *gpu1 = load_ok(path, "GPU-1", CUDNN);
	st_algo_cache *gpu0b = load_ok(path, "GPU-0", CUDNN);
	put(gpu0, "k1", 1, 0, 0, 1);
	put(gpu0, "shared", 10, 0, 0, 1);
	put(gpu1, "k1", 2, 0, 0, 2);
	put(gpu0b, "k2", 3, 0, 0, 3);
	put(gpu0b, "shared", 11, 0, 0, 1);
	char err[512];
	cr_assert_eq(st_algo_cache_save(gpu0, path, err, sizeof err), 0, "%s", err);
	cr_assert_eq(st_algo_cache_save(gpu1, path, err, sizeof err), 0, "%s", err);
	cr_assert_eq(st_algo_cache_save(gpu0b, path, err, sizeof err), 0, "%s", err);
	st_algo_cache *check0 = load_ok(path, "GPU-0", CUDNN);
	cr_assert_eq(st_algo_cache_count(check0), 3);
	assert_entry(check0, "k1", 1, 0, 0, 1);
	assert_entry(check0, "k2", 3, 0, 0, 3);
	/* The same key of the same pair: the last save wins. */
	assert_entry(check0, "shared", 11, 0, 0, 1);
	st_algo_cache *check1 = load_ok(path, "GPU-1", CUDNN);
	cr_assert_eq(st_algo_cache_count(check1), 1);
	assert_entry(check1, "k1", 2, 0, 0, 2);
	/* A saving cache takes the merged whole. */
	cr_assert_eq(st_algo_cache_count(gpu0b), 3);
	assert_entry(gpu0b, "k1", 1, 0, 0, 1);

	/* Another pair's entries come from the file, not from what this cache
	 * loaded earlier: GPU-1's process measured again since. */
	st_algo_cache *late = load_ok(path, "GPU-0", CUDNN);
	put(gpu1, "k1", 5, 0, 0, 5);
	cr_assert_eq(st_algo_cache_save(gpu1, path, err, sizeof err), 0, "%s", err);
	put(late, "k3", 6, 0, 0, 6);
	cr_assert_eq(st_algo_cache_save(late, path, err, sizeof err), 0, "%s", err);
	st_algo_cache_free(check1);
	check1 = load_ok(path, "GPU-1", CUDNN);
	assert_entry(check1, "k1", 5, 0, 0, 5);
	st_algo_cache_free(check0);
	check0 = load_ok(path, "GPU-0", CUDNN);
	cr_assert_eq(st_algo_cache_count(check0), 4);

	st_algo_cache_free(late);
	st_algo_cache_free(check0);
	st_algo_cache_free(check1);
	st_algo_cache_free(gpu0);
	st_algo_cache_free(gpu0b);
	st_algo_cache_free(gpu1);
	free(path);
	test_remove_dir(dir);
}

Test(algo_cache, save_says_why_it_could_not_write)
{
	char *dir = test_temp_dir("algo-cache");
	char *file = st_xasprintf("%s/a-file", dir);
	write_text(file, "x");
	/* The folder would have to be inside a plain file. */
	char *path = st_xasprintf("%s/sub/cudnn-algos.json", file);
	st_algo_cache *c = st_algo_cache_new(H100, CUDNN);
	put(c, KEY1, 1, 0, 0, 1);
	char err[512];
	cr_assert_eq(st_algo_cache_save(c, path, err, sizeof err), -1);
	cr_assert(strstr(err, "cannot create the folder") != NULL, "%s", err);
	assert_entry(c, KEY1, 1, 0, 0, 1);
	st_algo_cache_free(c);
	free(path);
	free(file);
	test_remove_dir(dir);
}

Test(algo_cache, default_path_follows_xdg)
{
	setenv("HOME", "/home/someone", 1);
	setenv("XDG_CACHE_HOME", "/xdg/cache", 1);
	char *p = st_algo_cache_default_path();
	cr_assert_str_eq(p, "/xdg/cache/strata/cudnn-algos.json");
	free(p);
	/* Unset, empty or relative: ~/.cache, as the XDG rules say. */
	unsetenv("XDG_CACHE_HOME");
	p = st_algo_cache_default_path();
	cr_assert_str_eq(p, "/home/someone/.cache/strata/cudnn-algos.json");
	free(p);
	setenv("XDG_CACHE_HOME", "", 1);
	p = st_algo_cache_default_path();
	cr_assert_str_eq(p, "/home/someone/.cache/strata/cudnn-algos.json");
	free(p);
	setenv("XDG_CACHE_HOME", "relative/cache", 1);
	p = st_algo_cache_default_path();
	cr_assert_str_eq(p, "/home/someone/.cache/strata/cudnn-algos.json");
	free(p);
	/* No HOME: the password database's home, or none at all. */
	unsetenv("XDG_CACHE_HOME");
	unsetenv("HOME");
	p = st_algo_cache_default_path();
	if (p != NULL) {
		const char *tail = "/.cache/strata/cudnn-algos.json";
		cr_assert(strlen(p) > strlen(tail) && strcmp(p + strlen(p) - strlen(tail), tail) == 0, "%s", p);
		cr_assert_eq(p[0], '/');
	}
	free(p);
}

Test(algo_cache, times_are_written_with_a_point_in_any_locale)
{
	/* The editor runs under the user's locale, which may write 0,5. */
	static const char *const comma_locales[] = { "de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "fr_FR.utf8",
		                                     "ru_RU.UTF-8", "nl_NL.UTF-8" };
	const char *found = NULL;
	for (size_t i = 0; i < sizeof comma_locales / sizeof *comma_locales && found == NULL; i++) {
		if (setlocale(LC_NUMERIC, comma_locales[i]) != NULL && strcmp(localeconv()->decimal_point, ".") != 0)
			found = comma_locales[i];
	}
	if (found == NULL)
		cr_skip_test("no locale with a decimal comma is installed");
	st_algo_cache *c = st_algo_cache_new(H100, CUDNN);
	put(c, KEY1, 1, 0, 0, 0.0123);
	put(c, KEY2, 1, 0, 0, -2.5e-7);
	char *text = st_algo_cache_text(c);
	cr_assert(strstr(text, "\"ms\": 0.0123}") != NULL, "in %s:\n%s", found, text);
	cr_assert(strstr(text, "\"ms\": -2.5e-07}") != NULL, "in %s:\n%s", found, text);
	st_algo_cache *again = st_algo_cache_new(H100, CUDNN);
	st_diag d;
	st_diag_init(&d);
	cr_assert_eq(st_algo_cache_parse(again, text, strlen(text), "t", &d), 0);
	assert_entry(again, KEY1, 1, 0, 0, 0.0123);
	assert_entry(again, KEY2, 1, 0, 0, -2.5e-7);
	setlocale(LC_NUMERIC, "C");
	st_diag_free(&d);
	free(text);
	st_algo_cache_free(again);
	st_algo_cache_free(c);
}
