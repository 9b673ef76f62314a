/* Counts the bytes frames write to a terminal: a child on the slave side of
 * a pty (TERM=xterm-256color unless set) opens the terminal, flushes a full
 * screen, the same screen again, then one changed cell, and closes. The
 * parent reads everything from the master side and, after each flush,
 * checks that the terminal received what st_term_last_flush_bytes says.
 *
 *   tui-bytes [COLUMNS ROWS]
 *
 * Prints "size W H", then "first N M", "idle N M" and "one-cell N M" (N as
 * counted by Strata, M as received through the pty), then "restored yes"
 * when the terminal's modes are back as they were, and exits 0; 1 on a
 * failure, with the reason on standard error.
 */
#include "config.h"

#include <errno.h>
#include <locale.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "st-tui.h"

/* Fills every cell: boxes, text in several styles, wide characters. */
static void
draw(st_screen *s, const st_theme *t)
{
	st_screen_clear(s, &t->roles[ST_ROLE_TEXT]);
	for (int y = 0; y < s->h; y++) {
		for (int x = 0; x < s->w;) {
			const st_style *st = &t->roles[(x / 7 + y) % ST_ROLE_COUNT];
			x += st_screen_text(s, x, y, (x + y) % 3 ? "layer conv2 " : "形状 3×3 ", st, -1);
		}
	}
	st_screen_box(s, (st_rect){ 1, 1, s->w - 2, s->h - 2 }, &t->roles[ST_ROLE_BORDER], "2 Canvas",
	              &t->roles[ST_ROLE_TITLE]);
}

/* Child-to-parent messages are lines on a pipe; the parent answers each
 * with one byte once it has read from the master what came before it. */
static int
child(int report, int ack, int cols, int rows)
{
	char err[256], c;
	/* The parent notes the terminal's modes before they change. */
	dprintf(report, "ready\n");
	if (read(ack, &c, 1) != 1)
		return 1;
	if (st_term_open(-1, err, sizeof err) != 0) {
		dprintf(report, "error %s\n", err);
		return 1;
	}
	/* What opening writes (the alternate screen, modes) is no frame's. */
	dprintf(report, "opened\n");
	if (read(ack, &c, 1) != 1)
		return 1;
	int w, h;
	st_term_size(&w, &h);
	st_theme *theme = st_theme_default();
	st_screen *s = st_screen_new(w, h);
	draw(s, theme);
	for (int i = 0; i < 3; i++) {
		if (i == 2)
			st_screen_text(s, w / 2, h / 2, "#", &theme->roles[ST_ROLE_ERROR], 1);
		st_term_flush(s, theme);
		dprintf(report, "flush %zu\n", st_term_last_flush_bytes());
		if (read(ack, &c, 1) != 1)
			return 1;
	}
	st_term_close();
	st_term_close(); /* twice is harmless */
	dprintf(report, "size %d %d %d %d\n", w, h, cols, rows);
	dprintf(report, "closed\n");
	if (read(ack, &c, 1) != 1)
		return 1;
	st_screen_free(s);
	st_theme_free(theme);
	return 0;
}

/* Reads the master until at least want bytes came since the last call and
 * then nothing more for 100 ms (or 5 seconds passed); returns how many. */
static size_t
drain(int master, size_t *since, size_t want)
{
	char buf[4096];
	for (int waited = 0; waited < 5000;) {
		struct pollfd p = { master, POLLIN, 0 };
		int r = poll(&p, 1, 100);
		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0) {
			if (*since >= want)
				break;
			waited += 100;
			continue;
		}
		ssize_t n = read(master, buf, sizeof buf);
		if (n <= 0)
			break;
		*since += (size_t)n;
	}
	size_t got = *since;
	*since = 0;
	return got;
}

int
main(int argc, char **argv)
{
	int cols = argc > 2 ? atoi(argv[1]) : 80, rows = argc > 2 ? atoi(argv[2]) : 24;
	if (cols < 10 || rows < 5 || cols > 1000 || rows > 1000) {
		fprintf(stderr, "usage: tui-bytes [COLUMNS ROWS]\n");
		return 2;
	}
	setenv("TERM", getenv("TUI_BYTES_TERM") ? getenv("TUI_BYTES_TERM") : "xterm-256color", 1);
	unsetenv("COLORTERM");
	unsetenv("NO_COLOR");
	int report[2], ack[2];
	if (pipe(report) != 0 || pipe(ack) != 0) {
		perror("pipe");
		return 1;
	}
	int master;
	struct winsize ws = { .ws_row = (unsigned short)rows, .ws_col = (unsigned short)cols };
	pid_t pid = forkpty(&master, NULL, NULL, &ws);
	if (pid < 0) {
		perror("forkpty");
		return 1;
	}
	if (pid == 0) {
		close(report[0]);
		close(ack[1]);
		if (setlocale(LC_ALL, "C.UTF-8") == NULL)
			setlocale(LC_ALL, "");
		_exit(child(report[1], ack[0], cols, rows));
	}
	close(report[1]);
	close(ack[0]);
	struct termios before;
	memset(&before, 0, sizeof before);
	static const char *const names[] = { "first", "idle", "one-cell" };
	int flushes = 0, status = 0;
	size_t since = 0;
	char line[512];
	size_t have = 0;
	bool done = false;
	/* The master is read all along so that the child never blocks on a full pty. */
	while (!done) {
		struct pollfd p[2] = { { master, POLLIN, 0 }, { report[0], POLLIN, 0 } };
		if (poll(p, 2, 10000) <= 0) {
			fprintf(stderr, "tui-bytes: the child stopped answering\n");
			status = 1;
			break;
		}
		if (p[0].revents & POLLIN) {
			char buf[4096];
			ssize_t n = read(master, buf, sizeof buf);
			if (n > 0)
				since += (size_t)n;
		}
		if (!(p[1].revents & (POLLIN | POLLHUP)))
			continue;
		ssize_t n = read(report[0], line + have, sizeof line - 1 - have);
		if (n <= 0)
			break;
		have += (size_t)n;
		line[have] = '\0';
		char *nl;
		while ((nl = strchr(line, '\n')) != NULL) {
			*nl = '\0';
			size_t bytes;
			if (strcmp(line, "ready") == 0) {
				tcgetattr(master, &before);
				if (write(ack[1], "k", 1) != 1)
					done = true;
			} else if (strcmp(line, "opened") == 0) {
				drain(master, &since, 0);
				if (write(ack[1], "k", 1) != 1)
					done = true;
			} else if (sscanf(line, "flush %zu", &bytes) == 1) {
				size_t got = drain(master, &since, bytes);
				if (flushes < 3)
					printf("%s %zu %zu\n", names[flushes], bytes, got);
				flushes++;
				if (write(ack[1], "k", 1) != 1)
					done = true;
			} else if (strncmp(line, "size ", 5) == 0) {
				int w, h;
				if (sscanf(line, "size %d %d", &w, &h) == 2)
					printf("size %d %d\n", w, h);
			} else if (strcmp(line, "closed") == 0) {
				drain(master, &since, 0);
				struct termios after;
				tcgetattr(master, &after);
				bool same = before.c_lflag == after.c_lflag && before.c_iflag == after.c_iflag &&
				            before.c_oflag == after.c_oflag;
				printf("restored %s\n", same ? "yes" : "no");
				if (write(ack[1], "k", 1) != 1)
					done = true;
				done = true;
			} else {
				fprintf(stderr, "tui-bytes: %s\n", line);
				status = 1;
			}
			size_t used = (size_t)(nl + 1 - line);
			memmove(line, nl + 1, have - used + 1);
			have -= used;
		}
	}
	int wstatus;
	while (waitpid(pid, &wstatus, WNOHANG) == 0) {
		char buf[4096];
		struct pollfd p = { master, POLLIN, 0 };
		if (poll(&p, 1, 100) > 0 && read(master, buf, sizeof buf) <= 0)
			break;
	}
	if (waitpid(pid, &wstatus, 0) == pid && (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0))
		status = 1;
	if (flushes != 3)
		status = 1;
	return status;
}
