/* Hardware counters through perf_event_open(2): per thread, one group of
 * events (cycles, instructions, cache misses) counting user space only, so
 * that a process may count its own threads under the default
 * perf_event_paranoid of 2. A read sums the groups of every thread. Where
 * the kernel offers no such counters (most virtual machines), opening fails
 * with a reason the report keeps, and nothing is counted. */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef __linux__
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#endif

#include "st-engine.h"

struct st_counters {
	int n_threads;
	int *leader;                   /* per thread: the group's first open event, or -1 */
	int *fds;                      /* per thread and event: its descriptor, or -1 */
	bool available[ST_N_COUNTERS]; /* opened on every thread */
};

static const char *const counter_names[ST_N_COUNTERS] = { "cycles", "instructions", "cache misses" };

#ifdef __linux__

static int
open_event(uint32_t type, uint64_t config, int tid, int group)
{
	struct perf_event_attr attr;
	memset(&attr, 0, sizeof attr);
	attr.size = sizeof attr;
	attr.type = type;
	attr.config = config;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	attr.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	return (int)syscall(SYS_perf_event_open, &attr, tid, -1, group, PERF_FLAG_FD_CLOEXEC);
}

/* Why an event could not be opened, in the user's terms. */
static void
explain(int err, const char *what, char *why, size_t size)
{
	if (err == ENOENT || err == EOPNOTSUPP || err == ENODEV)
		snprintf(why, size,
		         "perf_event_open: %s: %s: the CPU's performance counters are not available here "
		         "(virtual machines seldom expose them)",
		         what, strerror(err));
	else if (err == EACCES || err == EPERM)
		snprintf(why, size,
		         "perf_event_open: %s: %s: the kernel refuses (kernel.perf_event_paranoid must be 2 or "
		         "less, or the process needs CAP_PERFMON)",
		         what, strerror(err));
	else if (err == ENOSYS)
		snprintf(why, size, "perf_event_open: this kernel has no performance events (%s)", strerror(err));
	else
		snprintf(why, size, "perf_event_open: %s: %s", what, strerror(err));
}

st_counters *
st_counters_open(const int *tids, int n, bool software, char *why, size_t why_size)
{
	static const uint64_t hw[ST_N_COUNTERS] = { PERF_COUNT_HW_CPU_CYCLES, PERF_COUNT_HW_INSTRUCTIONS,
		                                    PERF_COUNT_HW_CACHE_MISSES };
	/* Stand-ins any kernel with performance events has, to test the
	 * plumbing where the hardware ones are missing. */
	static const uint64_t sw[ST_N_COUNTERS] = { PERF_COUNT_SW_TASK_CLOCK, PERF_COUNT_SW_CONTEXT_SWITCHES,
		                                    PERF_COUNT_SW_PAGE_FAULTS };
	if (why_size > 0)
		why[0] = '\0';
	if (n <= 0)
		return NULL;
	st_counters *c = st_xcalloc(1, sizeof *c);
	c->n_threads = n;
	c->leader = st_xmalloc(sizeof *c->leader * (size_t)n);
	c->fds = st_xmalloc(sizeof *c->fds * (size_t)n * ST_N_COUNTERS);
	for (int e = 0; e < ST_N_COUNTERS; e++)
		c->available[e] = true;
	int first_err = 0, first_event = -1;
	for (int t = 0; t < n; t++) {
		c->leader[t] = -1;
		for (int e = 0; e < ST_N_COUNTERS; e++) {
			int fd = -1;
			if (c->available[e]) {
				fd = open_event(software ? PERF_TYPE_SOFTWARE : PERF_TYPE_HARDWARE, software ? sw[e] : hw[e],
				                tids[t], c->leader[t]);
				if (fd < 0) {
					if (first_err == 0) {
						first_err = errno;
						first_event = e;
					}
					c->available[e] = false;
				} else if (c->leader[t] < 0) {
					c->leader[t] = fd;
				}
			}
			c->fds[t * ST_N_COUNTERS + e] = fd;
		}
	}
	/* An event missing on one thread is missing everywhere: close it. */
	int open_events = 0;
	for (int e = 0; e < ST_N_COUNTERS; e++)
		open_events += c->available[e];
	if (open_events == 0) {
		explain(first_err, counter_names[first_event], why, why_size);
		st_counters_close(c);
		return NULL;
	}
	if (first_err != 0)
		explain(first_err, counter_names[first_event], why, why_size);
	/* An event refused on a later thread stays open on the earlier ones:
	 * a group reads its members in the order they joined, so each thread is
	 * read by its own open events (st_counters_read), and the event is
	 * reported unavailable. */
	return c;
}

int
st_counters_read(const st_counters *c, double out[ST_N_COUNTERS])
{
	for (int e = 0; e < ST_N_COUNTERS; e++)
		out[e] = c->available[e] ? 0 : -1;
	for (int t = 0; t < c->n_threads; t++) {
		if (c->leader[t] < 0)
			continue;
		uint64_t buf[3 + ST_N_COUNTERS];
		ssize_t got = read(c->leader[t], buf, sizeof buf);
		if (got < (ssize_t)(3 * sizeof(uint64_t)))
			return -1;
		uint64_t nr = buf[0], enabled = buf[1], running = buf[2];
		/* Multiplexed events counted part of the time: scale up. */
		double scale = running > 0 && running < enabled ? (double)enabled / (double)running : 1.0;
		int place = 0;
		for (int e = 0; e < ST_N_COUNTERS; e++) {
			if (c->fds[t * ST_N_COUNTERS + e] < 0)
				continue;
			if ((uint64_t)place < nr && (size_t)got >= (size_t)(3 + place + 1) * sizeof(uint64_t) &&
			    c->available[e])
				out[e] += (double)buf[3 + place] * scale;
			place++;
		}
	}
	return 0;
}

#else /* no perf_event_open */

st_counters *
st_counters_open(const int *tids, int n, bool software, char *why, size_t why_size)
{
	(void)tids;
	(void)n;
	(void)software;
	snprintf(why, why_size, "hardware counters need Linux's perf_event_open");
	return NULL;
}

int
st_counters_read(const st_counters *c, double out[ST_N_COUNTERS])
{
	(void)c;
	for (int e = 0; e < ST_N_COUNTERS; e++)
		out[e] = -1;
	return -1;
}

#endif

bool
st_counters_available(const st_counters *c, int event)
{
	return c != NULL && event >= 0 && event < ST_N_COUNTERS && c->available[event];
}

void
st_counters_close(st_counters *c)
{
	if (c == NULL)
		return;
	for (int i = 0; i < c->n_threads * ST_N_COUNTERS; i++) {
		if (c->fds[i] >= 0)
			close(c->fds[i]);
	}
	free(c->fds);
	free(c->leader);
	free(c);
}
