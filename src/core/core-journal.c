/* The edit journal: every command that changes a model since its last save,
 * one line each, flushed to disk as it happens, so that a session killed by
 * SIGKILL, a crash or a dropped SSH connection can be restored. Also the
 * lock that tells two Strata editing one model apart. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "st-core.h"

#define JOURNAL_MAGIC "strata-journal 1"

struct st_journal {
	char *path;      /* the journal file */
	char *lock_path; /* the lock file */
	char *model;     /* the model's absolute path */
	int fd;
	int entries;
};

/* $XDG_STATE_HOME/strata/journal, created as needed; caller frees. */
static char *
journal_dir(char *err, size_t size)
{
	char *base = st_state_dir();
	if (base == NULL) {
		snprintf(err, size, "neither XDG_STATE_HOME nor a home folder is known: nowhere to keep the journal");
		return NULL;
	}
	char *dir = st_xasprintf("%s/journal", base);
	free(base);
	if (st_make_dirs(dir, err, size) != 0) {
		free(dir);
		return NULL;
	}
	return dir;
}

/* The absolute path of a model (which may not exist yet); caller frees. */
static char *
absolute(const char *path)
{
	char buf[PATH_MAX];
	if (realpath(path, buf) != NULL)
		return st_xstrdup(buf);
	if (path[0] == '/')
		return st_xstrdup(path);
	char cwd[PATH_MAX];
	if (getcwd(cwd, sizeof cwd) == NULL)
		return st_xstrdup(path);
	return st_xasprintf("%s/%s", cwd, path);
}

/* File names for a model: a hash of its absolute path. */
static void
names_for(const char *dir, const char *model, char **journal, char **lock)
{
	uint64_t h = 1469598103934665603ull;
	for (const char *p = model; *p; p++) {
		h ^= (unsigned char)*p;
		h *= 1099511628211ull;
	}
	const char *base = strrchr(model, '/');
	base = base ? base + 1 : model;
	char safe[48];
	size_t n = 0;
	for (const char *p = base; *p && n + 1 < sizeof safe; p++)
		safe[n++] = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		                    *p == '.' || *p == '_' || *p == '-'
		                ? *p
		                : '_';
	safe[n] = '\0';
	*journal = st_xasprintf("%s/%s-%016llx.journal", dir, safe, (unsigned long long)h);
	*lock = st_xasprintf("%s/%s-%016llx.lock", dir, safe, (unsigned long long)h);
}

/* The pid in a lock file when that process still runs, else 0. */
static long
live_owner(const char *lock_path)
{
	char *text = st_read_file(lock_path, NULL);
	if (text == NULL)
		return 0;
	long pid = strtol(text, NULL, 10);
	free(text);
	if (pid <= 0 || pid == (long)getpid())
		return 0;
	if (kill((pid_t)pid, 0) == 0 || errno == EPERM)
		return pid;
	return 0;
}

long
st_journal_owner(const char *model_path)
{
	char err[256];
	char *dir = journal_dir(err, sizeof err);
	if (dir == NULL)
		return 0;
	char *model = absolute(model_path), *journal, *lock;
	names_for(dir, model, &journal, &lock);
	long pid = live_owner(lock);
	free(journal);
	free(lock);
	free(model);
	free(dir);
	return pid;
}

/* Appends one word, quoted so that a script reads it back as it was. */
static void
quote_word(st_buf *b, const char *w)
{
	bool plain = *w != '\0';
	for (const char *p = w; *p && plain; p++)
		plain = !(*p == ' ' || *p == '\t' || *p == '\n' || *p == ';' || *p == '#' || *p == '"' ||
		          *p == '\'' || *p == '\\' || *p == '\r');
	if (plain) {
		st_buf_puts(b, w);
		return;
	}
	st_buf_putc(b, '"');
	for (const char *p = w; *p; p++) {
		if (*p == '"' || *p == '\\')
			st_buf_putc(b, '\\');
		st_buf_putc(b, *p);
	}
	st_buf_putc(b, '"');
}

static int
write_header(st_journal *j, char *err, size_t size)
{
	if (ftruncate(j->fd, 0) != 0 || lseek(j->fd, 0, SEEK_SET) != 0) {
		snprintf(err, size, "cannot reset the journal %s: %s", j->path, strerror(errno));
		return -1;
	}
	struct stat st;
	long long mtime = 0, bytes = -1;
	if (stat(j->model, &st) == 0) {
		mtime = (long long)st.st_mtime;
		bytes = (long long)st.st_size;
	}
	char *header = st_xasprintf("# " JOURNAL_MAGIC " %lld %lld %s\n", mtime, bytes, j->model);
	ssize_t n = write(j->fd, header, strlen(header));
	bool ok = n == (ssize_t)strlen(header) && fdatasync(j->fd) == 0;
	free(header);
	if (!ok) {
		snprintf(err, size, "cannot write the journal %s: %s", j->path, strerror(errno));
		return -1;
	}
	j->entries = 0;
	return 0;
}

st_journal *
st_journal_open(const char *model_path, long *other_pid, char *err, size_t size)
{
	if (other_pid)
		*other_pid = 0;
	char *dir = journal_dir(err, size);
	if (dir == NULL)
		return NULL;
	st_journal *j = st_xcalloc(1, sizeof *j);
	j->model = absolute(model_path);
	names_for(dir, j->model, &j->path, &j->lock_path);
	free(dir);
	long owner = live_owner(j->lock_path);
	if (owner != 0) {
		if (other_pid)
			*other_pid = owner;
		snprintf(err, size, "%s is open in another Strata (process %ld)", model_path, owner);
		free(j->path);
		free(j->lock_path);
		free(j->model);
		free(j);
		return NULL;
	}
	char *pid = st_xasprintf("%ld\n", (long)getpid());
	char why[256];
	if (st_write_file_atomic(j->lock_path, pid, strlen(pid), why, sizeof why) != 0) {
		snprintf(err, size, "%s", why);
		free(pid);
		st_journal_close(j, false);
		return NULL;
	}
	free(pid);
	/* The journal keeps what a previous session left until this one writes. */
	j->fd = open(j->path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (j->fd < 0) {
		snprintf(err, size, "cannot open the journal %s: %s", j->path, strerror(errno));
		unlink(j->lock_path);
		free(j->path);
		free(j->lock_path);
		free(j->model);
		free(j);
		return NULL;
	}
	return j;
}

int
st_journal_start(st_journal *j, char *err, size_t size)
{
	return write_header(j, err, size);
}

int
st_journal_append(st_journal *j, int argc, char **argv, char *err, size_t size)
{
	st_buf b;
	st_buf_init(&b);
	for (int i = 0; i < argc; i++) {
		if (i)
			st_buf_putc(&b, ' ');
		quote_word(&b, argv[i]);
	}
	st_buf_putc(&b, '\n');
	ssize_t n = write(j->fd, b.data, b.len);
	/* Each edit is on disk before the next key is read: SIGKILL loses nothing. */
	bool ok = n == (ssize_t)b.len && fdatasync(j->fd) == 0;
	st_buf_free(&b);
	if (!ok) {
		snprintf(err, size, "cannot write the journal %s: %s", j->path, strerror(errno));
		return -1;
	}
	j->entries++;
	return 0;
}

int
st_journal_entries(const st_journal *j)
{
	return j->entries;
}

void
st_journal_close(st_journal *j, bool remove)
{
	if (j == NULL)
		return;
	if (j->fd >= 0)
		close(j->fd);
	if (remove)
		unlink(j->path);
	unlink(j->lock_path);
	free(j->path);
	free(j->lock_path);
	free(j->model);
	free(j);
}

char *
st_journal_pending(const char *model_path, int *n_commands, bool *model_changed)
{
	*n_commands = 0;
	*model_changed = false;
	char err[256];
	char *dir = journal_dir(err, sizeof err);
	if (dir == NULL)
		return NULL;
	char *model = absolute(model_path), *journal, *lock;
	names_for(dir, model, &journal, &lock);
	char *text = st_read_file(journal, NULL);
	char *script = NULL;
	if (text != NULL && strncmp(text, "# " JOURNAL_MAGIC " ", strlen("# " JOURNAL_MAGIC " ")) == 0) {
		long long mtime = 0, bytes = 0;
		char path[PATH_MAX];
		if (sscanf(text + strlen("# " JOURNAL_MAGIC " "), "%lld %lld %4095[^\n]", &mtime, &bytes, path) == 3 &&
		    strcmp(path, model) == 0) {
			struct stat st;
			if (stat(model, &st) == 0)
				*model_changed = (long long)st.st_mtime != mtime || (long long)st.st_size != bytes;
			const char *body = strchr(text, '\n');
			body = body ? body + 1 : "";
			for (const char *p = body; *p; p++)
				*n_commands += *p == '\n';
			if (*n_commands > 0)
				script = st_xstrdup(body);
		}
	}
	free(text);
	free(journal);
	free(lock);
	free(model);
	free(dir);
	return script;
}

void
st_journal_discard(const char *model_path)
{
	char err[256];
	char *dir = journal_dir(err, sizeof err);
	if (dir == NULL)
		return;
	char *model = absolute(model_path), *journal, *lock;
	names_for(dir, model, &journal, &lock);
	unlink(journal);
	free(journal);
	free(lock);
	free(model);
	free(dir);
}
