/* strata edit: run edit commands on a model without the TUI. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#ifdef ST_HAVE_TUI
#include "st-tui.h"
#endif

static void
print_line(void *user, const char *text)
{
	(void)user;
	puts(text);
}

static int
list_commands(void)
{
	for (int i = 0; i < st_n_commands; i++) {
		const st_command *c = &st_commands[i];
		char head[64];
		snprintf(head, sizeof head, "%s %s", c->name, c->usage);
		printf("%-36s %s%s%s%s\n", head, c->help, c->alias ? " (alias: " : "", c->alias ? c->alias : "",
		       c->alias ? ")" : "");
	}
	return EXIT_OK;
}

int
cli_cmd_edit(const cli_args *a)
{
	if (cli_flag(a, "list-commands"))
		return list_commands();
	const char **unused;
	int n_scripts = cli_values(a, "command", &unused);
	int n_files = cli_values(a, "file", &unused);
	if (a->argc != 1) {
		fprintf(stderr, "usage: strata edit MODEL [-c SCRIPT]... [-f FILE]...\n");
		return EXIT_USAGE;
	}
	const char *path = a->argv[0];
	if (n_scripts == 0 && n_files == 0) {
#ifdef ST_HAVE_TUI
		st_tui_options opt = { .model = path, .theme = cli_value(a, "theme"),
			               .ascii = cli_flag(a, "ascii") ? 1 : -1, .colors = -1 };
		const char *colors = cli_value(a, "colors");
		if (colors != NULL) {
			bool truecolor = strcmp(colors, "truecolor") == 0;
			char *end = (char *)colors;
			long c = truecolor ? 16777216 : strtol(colors, &end, 10);
			if ((!truecolor && (end == colors || *end)) ||
			    (c != 0 && c != 8 && c != 16 && c != 256 && c != 16777216)) {
				fprintf(stderr, "strata edit: --colors takes 0, 8, 16, 256 or truecolor, not '%s'\n",
				        colors);
				return EXIT_USAGE;
			}
			opt.colors = (int)c;
		}
		return st_tui_main(&opt);
#else
		fprintf(stderr,
		        "strata: this build has no interactive editor (configured with --disable-tui).\n"
		        "Edit headless with: strata edit %s -c 'COMMAND; ...' (strata edit --list-commands),\n"
		        "or look at the model with: strata check %s; strata info %s\n",
		        path, path, path);
		return EXIT_USAGE;
#endif
	}
	st_registry *r = cli_registry();
	st_graph *g = cli_load_model(r, path);
	if (g == NULL) {
		st_registry_free(r);
		return EXIT_USAGE;
	}
	st_graph_check(g);
	st_session *s = st_session_new(g, path);
	st_session_set_print(s, print_line, NULL);
	st_diag d;
	st_diag_init(&d);
	int rc = EXIT_OK;
	/* -c and -f run in the order they were given. */
	for (int i = 0; rc == EXIT_OK && i < a->n_given; i++) {
		const char *opt = a->cmd->options[a->given_option[i]].name, *value = a->given_value[i];
		if (strcmp(opt, "command") == 0) {
			if (st_session_run_script(s, value, "-c", &d) != 0)
				rc = EXIT_USAGE;
		} else if (strcmp(opt, "file") == 0) {
			size_t len;
			char *text = st_read_file(value, &len);
			if (text == NULL) {
				st_diag_add(&d, ST_SEVERITY_ERROR, value, 0, 0, "cannot read the script: %s",
				            strerror(errno));
				rc = EXIT_USAGE;
			} else {
				if (st_session_run_script(s, text, value, &d) != 0)
					rc = EXIT_USAGE;
				free(text);
			}
		}
	}
	st_diag_print(&d, stderr);
	st_diag_free(&d);
	if (rc == EXIT_OK && st_session_dirty(s))
		fprintf(stderr, "strata edit: warning: the edits were not saved (end the script with 'save')\n");
	else if (rc != EXIT_OK && st_session_dirty(s))
		fprintf(stderr, "strata edit: the edits after the last 'save' were not saved\n");
	st_session_free(s);
	st_registry_free(r);
	return rc;
}
