/* Counts the bytes the whole editor writes to its terminal: strata runs on
 * the slave side of a pty; the parent reads the master and counts what the
 * first frame took, what 2.5 idle seconds took (the editor wakes every 2 s
 * to look at the model file, and must write nothing then), what one
 * keystroke's frame took, and how the editor ended after q.
 *
 *   tui-idle STRATA MODEL [COLUMNS ROWS]
 *
 * Prints "first N", "idle N", "key N" and "exit STATUS", and exits 0; 1 on
 * a failure, with the reason on standard error. The caller sets HOME and
 * the XDG folders.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <pty.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double
now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* Reads the master for total_ms, or, with quiet_ms > 0, until something
 * came and then nothing for quiet_ms (at most total_ms). Returns the bytes
 * read; -1 when the terminal closed. */
static long
count(int master, int total_ms, int quiet_ms)
{
	long got = 0;
	double start = now_ms(), last = start;
	for (;;) {
		double t = now_ms();
		if (t - start >= total_ms)
			break;
		if (quiet_ms > 0 && got > 0 && t - last >= quiet_ms)
			break;
		struct pollfd p = { master, POLLIN, 0 };
		int r = poll(&p, 1, 20);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			continue;
		char buf[8192];
		ssize_t n = read(master, buf, sizeof buf);
		if (n <= 0)
			return got > 0 ? got : -1;
		got += n;
		last = now_ms();
	}
	return got;
}

int
main(int argc, char **argv)
{
	if (argc != 3 && argc != 5) {
		fprintf(stderr, "usage: tui-idle STRATA MODEL [COLUMNS ROWS]\n");
		return 2;
	}
	int cols = argc == 5 ? atoi(argv[3]) : 100, rows = argc == 5 ? atoi(argv[4]) : 30;
	struct winsize ws = { .ws_row = (unsigned short)rows, .ws_col = (unsigned short)cols };
	int master;
	pid_t pid = forkpty(&master, NULL, NULL, &ws);
	if (pid < 0) {
		perror("tui-idle: forkpty");
		return 1;
	}
	if (pid == 0) {
		setenv("TERM", "xterm-256color", 1);
		setenv("LC_ALL", "C.UTF-8", 1);
		unsetenv("COLORTERM");
		execl(argv[1], argv[1], argv[2], (char *)NULL);
		perror("tui-idle: exec");
		_exit(127);
	}
	long first = count(master, 10000, 300);
	long idle = count(master, 2500, 0);
	long key = -1;
	if (write(master, "j", 1) == 1)
		key = count(master, 3000, 300);
	if (write(master, "q", 1) != 1)
		fprintf(stderr, "tui-idle: cannot type q\n");
	/* Whatever the last frame and leaving write, then the end. */
	count(master, 3000, 300);
	int status = 0;
	int waited = 0;
	while (waitpid(pid, &status, WNOHANG) == 0 && waited < 5000) {
		usleep(20000);
		waited += 20;
	}
	if (waited >= 5000) {
		fprintf(stderr, "tui-idle: strata did not end after q\n");
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		return 1;
	}
	printf("first %ld\nidle %ld\nkey %ld\nexit %d\n", first, idle, key,
	       WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	return 0;
}
