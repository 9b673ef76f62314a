/* Feeds damaged copies of real files to one fuzz target's
 * LLVMFuzzerTestOneInput without libFuzzer: every file whole, cut short at
 * many points, and with a few random bits flipped. Linked with one
 * tests/fuzz/fuzz-KIND.c into tests/tools/mangle-KIND.
 *
 *   mangle-KIND [--seed N] [--flips N] [--timeout SECONDS] [--keep DIR] FILE...
 *
 * A file of up to 64 KiB is cut at every 7th byte, a larger one at 200
 * evenly spaced points; --flips (default 200) variants each flip 1 to 8 bits
 * chosen by a generator seeded from --seed and the variant's number, so a
 * run is the same every time. Each input is a fresh allocation of exactly
 * its length, so that ASan or valgrind see any read past its end.
 *
 * Each file's inputs run in a child process limited to 2 GiB of address
 * space (not under ASan, which reserves far more), so that an absurd size in
 * a header that is believed shows up as a failed allocation. A call that
 * takes longer than --timeout (default 2 s) is a hang; a child killed by a
 * signal is a crash. Either is reported with the file and the input, the
 * input is written to DIR when --keep is given, and the run goes on with the
 * next input. Prints one summary line and exits 0, or 1 after any failure,
 * 2 on a usage or read error.
 */
#include "config.h"

#include <errno.h>
#include <ftw.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define MANGLE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MANGLE_ASAN 1
#endif
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SMALL_FILE (64 * 1024)
#define CUT_STEP 7
#define LARGE_CUTS 200
#define MAX_FLIPS 8
#define MEMORY_LIMIT ((rlim_t)2 << 30)
/* After this many failures in one file the rest of it is skipped. */
#define MAX_FAILURES_PER_FILE 10
#define CHILD_SLOW 3

/* What a child shares with its parent: the input it is in, since when, and
 * its counts. The parent reads them when the child dies or stalls. */
typedef struct {
	atomic_long current;    /* index of the input being run, -1 between calls */
	atomic_llong started;   /* CLOCK_MONOTONIC ns when that call began */
	atomic_long done;       /* inputs finished */
	atomic_llong slowest;   /* ns of the slowest finished call */
	atomic_llong last_ns;   /* ns of the last finished call */
} shared_state;

typedef struct {
	const char *name;
	uint64_t seed;
	long flips;
	double timeout;
	const char *keep;
	long inputs;
	long failures;
	int64_t slowest;
} run_state;

static int64_t
now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static uint64_t
splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15u);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

static long
n_cuts(size_t size)
{
	if (size <= SMALL_FILE)
		return (long)((size + CUT_STEP - 1) / CUT_STEP);
	return LARGE_CUTS;
}

static long
n_inputs(const run_state *r, size_t size)
{
	return 1 + n_cuts(size) + (size > 0 ? r->flips : 0);
}

/* The bits flipped in variant V: byte offsets and bit numbers. */
static int
flip_positions(const run_state *r, size_t size, long v, size_t *bytes, int *bits)
{
	uint64_t state = r->seed ^ ((uint64_t)v * 0xd1342543de82ef95u);
	int n = 1 + (int)(splitmix64(&state) % MAX_FLIPS);
	for (int i = 0; i < n; i++) {
		bytes[i] = (size_t)(splitmix64(&state) % size);
		bits[i] = (int)(splitmix64(&state) % 8);
	}
	return n;
}

/* Input INDEX of a file: 0 is the whole file, then the cuts, then the
 * variants with flipped bits. Returns a fresh allocation of exactly *len
 * bytes (caller frees), and describes it in DESC. */
static uint8_t *
make_input(const run_state *r, const uint8_t *data, size_t size, long index, size_t *len, char *desc,
           size_t desc_size)
{
	long cuts = n_cuts(size);
	size_t n = size;
	if (index == 0) {
		snprintf(desc, desc_size, "whole file");
	} else if (index <= cuts) {
		long k = index - 1;
		n = size <= SMALL_FILE ? (size_t)k * CUT_STEP : (size_t)((uint64_t)k * size / LARGE_CUTS);
		snprintf(desc, desc_size, "cut at byte %zu", n);
	}
	uint8_t *copy = malloc(n > 0 ? n : 1);
	if (copy == NULL)
		abort();
	memcpy(copy, data, n);
	if (index > cuts) {
		size_t bytes[MAX_FLIPS];
		int bits[MAX_FLIPS];
		int flips = flip_positions(r, size, index - cuts - 1, bytes, bits);
		int used = snprintf(desc, desc_size, "flipped bits (byte.bit)");
		for (int i = 0; i < flips; i++) {
			copy[bytes[i]] ^= (uint8_t)(1u << bits[i]);
			if (used > 0 && (size_t)used < desc_size)
				used += snprintf(desc + used, desc_size - (size_t)used, " %zu.%d", bytes[i], bits[i]);
		}
	}
	*len = n;
	return copy;
}

static uint8_t *
read_whole(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL)
		return NULL;
	size_t cap = 4096, n = 0;
	uint8_t *buf = malloc(cap);
	size_t got;
	while (buf != NULL && (got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap) {
			cap *= 2;
			uint8_t *bigger = realloc(buf, cap);
			if (bigger == NULL)
				free(buf);
			buf = bigger;
		}
	}
	if (buf == NULL || ferror(f)) {
		free(buf);
		fclose(f);
		return NULL;
	}
	fclose(f);
	*size = n;
	return buf;
}

static int
remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

/* The child: runs inputs FIRST onwards and exits 0, or CHILD_SLOW after a
 * call over the time limit (the parent reads which one). */
static _Noreturn void
run_child(const run_state *r, const uint8_t *data, size_t size, long first, shared_state *sh)
{
	struct rlimit core = { 0, 0 };
	setrlimit(RLIMIT_CORE, &core);
#ifndef MANGLE_ASAN
	struct rlimit as = { MEMORY_LIMIT, MEMORY_LIMIT };
	setrlimit(RLIMIT_AS, &as);
#endif
	/* The config target moves XDG_CONFIG_HOME to a folder of its own; it
	 * is removed here since the target is shared with libFuzzer. */
	const char *before = getenv("XDG_CONFIG_HOME");
	char *config_home = before != NULL ? strdup(before) : NULL;
	int64_t limit = (int64_t)(r->timeout * 1e9);
	long total = n_inputs(r, size);
	int rc = 0;
	for (long i = first; i < total; i++) {
		char desc[256];
		size_t len;
		uint8_t *input = make_input(r, data, size, i, &len, desc, sizeof desc);
		int64_t start = now_ns();
		atomic_store(&sh->started, start);
		atomic_store(&sh->current, i);
		LLVMFuzzerTestOneInput(input, len);
		int64_t took = now_ns() - start;
		atomic_store(&sh->current, -1);
		free(input);
		atomic_store(&sh->last_ns, took);
		if (took > atomic_load(&sh->slowest))
			atomic_store(&sh->slowest, took);
		atomic_fetch_add(&sh->done, 1);
		if (took > limit) {
			atomic_store(&sh->current, i);
			rc = CHILD_SLOW;
			break;
		}
	}
	const char *after = getenv("XDG_CONFIG_HOME");
	if (after != NULL && (config_home == NULL || strcmp(after, config_home) != 0) &&
	    strstr(after, "/strata-fuzz-") != NULL)
		nftw(after, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(config_home);
	fflush(NULL);
	_exit(rc);
}

static void
keep_input(const run_state *r, const char *path, const uint8_t *data, size_t size, long index)
{
	if (r->keep == NULL)
		return;
	char desc[256];
	size_t len;
	uint8_t *input = make_input(r, data, size, index, &len, desc, sizeof desc);
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	char out[4096];
	snprintf(out, sizeof out, "%s/%s-%s-%ld", r->keep, r->name, base, index);
	FILE *f = fopen(out, "wb");
	if (f == NULL || fwrite(input, 1, len, f) != len || fclose(f) != 0)
		fprintf(stderr, "%s: cannot write %s\n", r->name, out);
	else
		printf("  input kept in %s\n", out);
	free(input);
}

static void
report(run_state *r, const char *path, const uint8_t *data, size_t size, long index, const char *what)
{
	char desc[256];
	size_t len;
	free(make_input(r, data, size, index, &len, desc, sizeof desc));
	printf("FAIL: %s: %s (%zu bytes, input %ld, --seed %" PRIu64 "): %s\n", path, desc, len, index,
	       r->seed, what);
	fflush(stdout);
	keep_input(r, path, data, size, index);
	r->failures++;
}

/* Runs every input of one file, in as many children as failures need. */
static void
run_file(run_state *r, const char *path, shared_state *sh)
{
	size_t size;
	uint8_t *data = read_whole(path, &size);
	if (data == NULL) {
		fprintf(stderr, "%s: cannot read %s: %s\n", r->name, path, strerror(errno));
		exit(2);
	}
	long total = n_inputs(r, size);
	long first = 0;
	int failures = 0;
	int64_t limit = (int64_t)(r->timeout * 1e9);
	while (first < total && failures < MAX_FAILURES_PER_FILE) {
		atomic_store(&sh->current, -1);
		atomic_store(&sh->done, 0);
		atomic_store(&sh->slowest, 0);
		/* The pipe reaches end of file when the child is gone, however. */
		int p[2];
		if (pipe(p) != 0) {
			perror("pipe");
			exit(2);
		}
		fflush(NULL);
		pid_t pid = fork();
		if (pid < 0) {
			perror("fork");
			exit(2);
		}
		if (pid == 0) {
			close(p[0]);
			run_child(r, data, size, first, sh);
		}
		close(p[1]);
		bool hung = false;
		for (;;) {
			struct pollfd pfd = { p[0], POLLIN, 0 };
			int ready = poll(&pfd, 1, 100);
			if (ready > 0)
				break;
			long cur = atomic_load(&sh->current);
			int64_t started = atomic_load(&sh->started);
			if (cur >= 0 && now_ns() - started > limit) {
				kill(pid, SIGKILL);
				hung = true;
				break;
			}
		}
		close(p[0]);
		int status;
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		long cur = atomic_load(&sh->current);
		long done = atomic_load(&sh->done);
		r->inputs += done;
		if (atomic_load(&sh->slowest) > r->slowest)
			r->slowest = atomic_load(&sh->slowest);
		char what[128];
		bool slow = !hung && WIFEXITED(status) && WEXITSTATUS(status) == CHILD_SLOW;
		if (hung) {
			snprintf(what, sizeof what, "hang, still running after %.1f s", r->timeout);
		} else if (slow) {
			snprintf(what, sizeof what, "hang, took %.2f s (limit %.1f s)",
			         (double)atomic_load(&sh->last_ns) / 1e9, r->timeout);
		} else if (WIFSIGNALED(status)) {
			snprintf(what, sizeof what, "killed by signal %d (%s)", WTERMSIG(status),
			         strsignal(WTERMSIG(status)));
		} else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
			snprintf(what, sizeof what, "exited %d", WEXITSTATUS(status));
		} else if (first + done < total) {
			snprintf(what, sizeof what, "exited 0 before its last input");
		} else {
			break;
		}
		if (cur < 0) {
			/* It left between calls: name the last input that finished. */
			cur = first + done - 1;
			if (cur < first)
				cur = first;
		} else if (!slow) {
			r->inputs++; /* the call it died in */
		}
		report(r, path, data, size, cur, what);
		failures++;
		first = cur + 1;
	}
	if (failures >= MAX_FAILURES_PER_FILE)
		printf("  %s: stopped after %d failures\n", path, failures);
	free(data);
}

static void
usage(const char *name)
{
	fprintf(stderr, "usage: %s [--seed N] [--flips N] [--timeout SECONDS] [--keep DIR] FILE...\n", name);
	exit(2);
}

int
main(int argc, char **argv)
{
	run_state r = { .seed = 1, .flips = 200, .timeout = 2.0 };
	r.name = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	if (strncmp(r.name, "lt-", 3) == 0)
		r.name += 3;
	int i = 1;
	for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
		char *end = NULL;
		if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		}
		if (i + 1 >= argc)
			usage(r.name);
		if (strcmp(argv[i], "--seed") == 0)
			r.seed = strtoull(argv[++i], &end, 0);
		else if (strcmp(argv[i], "--flips") == 0)
			r.flips = strtol(argv[++i], &end, 0);
		else if (strcmp(argv[i], "--timeout") == 0)
			r.timeout = strtod(argv[++i], &end);
		else if (strcmp(argv[i], "--keep") == 0)
			r.keep = argv[++i];
		else
			usage(r.name);
		if (end != NULL && (*end != '\0' || end == argv[i]))
			usage(r.name);
		if (r.flips < 0 || r.timeout <= 0)
			usage(r.name);
	}
	if (i >= argc)
		usage(r.name);
	/* Counts and slowest call, shared with each child in turn. */
	shared_state *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	int files = argc - i;
	for (; i < argc; i++)
		run_file(&r, argv[i], sh);
	printf("%s: %d files, %ld inputs, %ld failures, slowest %.1f ms\n", r.name, files, r.inputs,
	       r.failures, (double)r.slowest / 1e6);
	munmap(sh, sizeof *sh);
	return r.failures ? 1 : 0;
}
