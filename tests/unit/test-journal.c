/* Unit tests: the edit journal (restoring after a crash) and the lock. */
#include "config.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"

/* A private state folder, and a model file in a private folder. */
static char *
setup(char **model)
{
	char *dir = test_temp_dir("journal");
	char *state = st_xasprintf("%s/state", dir);
	setenv("XDG_STATE_HOME", state, 1);
	free(state);
	*model = st_xasprintf("%s/net.strata.json", dir);
	st_graph *g = st_graph_new(test_registry());
	char err[256];
	cr_assert_eq(st_model_save(g, *model, err, sizeof err), 0);
	st_graph_free(g);
	return dir;
}

static st_session *
open_model(const char *path)
{
	st_diag d;
	st_diag_init(&d);
	st_graph *g = st_model_load(path, test_registry(), &d);
	cr_assert_not_null(g);
	st_diag_free(&d);
	st_graph_check(g);
	return st_session_new(g, path);
}

Test(journal, a_killed_session_is_restored_exactly)
{
	char *model, *dir = setup(&model);
	char err[256];
	st_session *s = open_model(model);
	st_journal *j = st_journal_open(model, NULL, err, sizeof err);
	cr_assert_not_null(j, "%s", err);
	cr_assert_eq(st_journal_start(j, err, sizeof err), 0);
	st_session_set_journal(s, j);
	cr_assert_eq(test_run(s, "add input data; set data dims 3x8x8; add conv c; connect data c;"
	                         "network description \"two words; a \\\"quote\\\"\"; set c num_output 7;"
	                         "undo; redo; list"),
	             0);
	cr_assert_eq(st_journal_entries(j), 8, "edits, undo and redo; not list");
	char *expected = st_model_serialize(st_session_graph(s));
	/* The process dies here: no save, no close. */
	int n;
	bool changed;
	char *script = st_journal_pending(model, &n, &changed);
	cr_assert_not_null(script);
	cr_assert_eq(n, 8);
	cr_assert_not(changed);
	st_session *again = open_model(model);
	st_diag d;
	st_diag_init(&d);
	cr_assert_eq(st_session_run_script(again, script, "journal", &d), 0, "%s",
	             d.count ? d.items[0].text : "");
	st_diag_free(&d);
	char *restored = st_model_serialize(st_session_graph(again));
	cr_assert_str_eq(restored, expected);
	free(restored);
	free(expected);
	free(script);
	st_session_free(again);
	st_session_free(s);
	st_journal_close(j, true);
	cr_assert_null(st_journal_pending(model, &n, &changed), "a clean close leaves nothing");
	test_remove_dir(dir);
	free(model);
}

Test(journal, saving_empties_the_journal)
{
	char *model, *dir = setup(&model);
	char err[256];
	st_session *s = open_model(model);
	st_journal *j = st_journal_open(model, NULL, err, sizeof err);
	cr_assert_eq(st_journal_start(j, err, sizeof err), 0);
	st_session_set_journal(s, j);
	cr_assert_eq(test_run(s, "add input data; save"), 0);
	int n;
	bool changed;
	cr_assert_null(st_journal_pending(model, &n, &changed));
	cr_assert_eq(test_run(s, "add identity i"), 0);
	char *script = st_journal_pending(model, &n, &changed);
	cr_assert_eq(n, 1);
	cr_assert(strstr(script, "add identity i") != NULL, "%s", script);
	cr_assert_not(changed, "the header follows the save");
	free(script);
	/* Someone else changes the file: the pending edits are flagged. */
	sleep(1);
	st_graph *other = st_graph_new(test_registry());
	cr_assert_eq(st_model_save(other, model, err, sizeof err), 0);
	st_graph_free(other);
	script = st_journal_pending(model, &n, &changed);
	cr_assert(changed);
	free(script);
	st_session_free(s);
	st_journal_close(j, true);
	test_remove_dir(dir);
	free(model);
}

Test(journal, a_second_strata_is_told_who_has_the_model)
{
	char *model, *dir = setup(&model);
	int ready[2];
	cr_assert_eq(pipe(ready), 0);
	pid_t child = fork();
	if (child == 0) {
		char err[256];
		st_journal *j = st_journal_open(model, NULL, err, sizeof err);
		if (write(ready[1], j ? "y" : "n", 1) != 1)
			_exit(2);
		pause();
		_exit(0);
	}
	char c;
	cr_assert_eq(read(ready[0], &c, 1), 1);
	cr_assert_eq(c, 'y');
	long other;
	char err[256];
	cr_assert_null(st_journal_open(model, &other, err, sizeof err));
	cr_assert_eq(other, (long)child);
	cr_assert(strstr(err, "is open in another Strata") != NULL, "%s", err);
	cr_assert_eq(st_journal_owner(model), (long)child);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	/* A lock left by a dead process does not count. */
	cr_assert_eq(st_journal_owner(model), 0);
	st_journal *j = st_journal_open(model, NULL, err, sizeof err);
	cr_assert_not_null(j, "%s", err);
	st_journal_close(j, true);
	close(ready[0]);
	close(ready[1]);
	test_remove_dir(dir);
	free(model);
}
