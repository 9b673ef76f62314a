/* strata report html REPORT...: reads the reports, picks the base and the
 * output file, and writes the page from report-html.c atomically. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "report-html.h"

#define REPORT_SUFFIX ".strata-report.json"

/* REPORT with .strata-report.json replaced by .html, or .html appended.
 * Caller frees. */
static char *
default_output(const char *report)
{
	size_t n = strlen(report), s = strlen(REPORT_SUFFIX);
	if (n > s && strcmp(report + n - s, REPORT_SUFFIX) == 0)
		return st_xasprintf("%.*s.html", (int)(n - s), report);
	return st_xasprintf("%s.html", report);
}

/* Whether path may be written: it does not exist, it is a page this
 * command wrote earlier, or --force was given. Says why not. */
static bool
may_replace(const char *path, bool force)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL)
		return true; /* missing, or unreadable: then the write says what is wrong */
	char head[1024];
	size_t len = fread(head, 1, sizeof head, f);
	fclose(f);
	if (force || cli_report_html_is_ours(head, len))
		return true;
	fprintf(stderr,
	        "strata report: %s exists and is not a page written by strata report html; "
	        "use --force to replace it, or -o to write elsewhere\n",
	        path);
	return false;
}

/* The report --base names by path or letter, the first without it; -1
 * after a message when it names none. */
static int
find_base(const cli_args *a, int n)
{
	const char *want = cli_value(a, "base");
	if (want == NULL)
		return 0;
	for (int k = 0; k < n; k++) {
		char letter[2] = { (char)('A' + k), 0 };
		if (strcmp(want, a->argv[1 + k]) == 0 || (k < 26 && strcasecmp(want, letter) == 0))
			return k;
	}
	fprintf(stderr, "strata report: --base %s is none of the reports given (give its path or its letter, A for "
	                "the first)\n",
	        want);
	return -1;
}


int
cli_cmd_report_html(const cli_args *a)
{
	int n = a->argc - 1;
	if (n < 1) {
		fprintf(stderr, "strata report: html takes one report or more\n");
		return EXIT_USAGE;
	}
	int base = find_base(a, n), top = cli_report_top(a, REPORT_HTML_TOP);
	if (base < 0 || top < 0)
		return EXIT_USAGE;
	st_report *reports = st_xcalloc((size_t)n, sizeof *reports);
	int rc = cli_load_reports(a, n, reports);
	char *path = cli_value(a, "output") ? st_xstrdup(cli_value(a, "output")) : default_output(a->argv[1]);
	bool to_stdout = strcmp(path, "-") == 0;
	if (rc == EXIT_OK && !to_stdout && !may_replace(path, cli_flag(a, "force")))
		rc = EXIT_USAGE;
	if (rc == EXIT_OK) {
		char *page = cli_report_html(reports, (const char *const *)&a->argv[1], n, base, top);
		char err[512];
		if (to_stdout) {
			fputs(page, stdout);
		} else if (st_write_file_atomic(path, page, strlen(page), err, sizeof err) != 0) {
			fprintf(stderr, "strata report: %s\n", err);
			rc = EXIT_RUNTIME;
		} else {
			printf("wrote %s\n", path);
		}
		free(page);
	}
	free(path);
	for (int k = 0; k < n; k++)
		st_report_free(&reports[k]);
	free(reports);
	return rc;
}
