/* strata report html: inference reports as one self-contained HTML page
 * (tables, inline SVG charts, no scripts, nothing fetched). */
#ifndef REPORT_HTML_H
#define REPORT_HTML_H

#include <stdbool.h>
#include <stddef.h>

#include "cli.h"
#include "st-report.h"

/* How many of the slowest layers the time chart shows unless --top says. */
#define REPORT_HTML_TOP 20

/* report-html.c */
/* The page for reports[0..n-1], each named by labels[k] (its path as
 * given) and drawn in its own colour, with differences measured against
 * reports[base]; the layer-time chart shows the top slowest layers of the
 * base. Returns the page; caller frees with free(). */
char *cli_report_html(const st_report *reports, const char *const *labels, int n, int base, int top);
/* Whether text, the start of an existing file, is a page cli_report_html
 * wrote (which html may replace without --force). */
bool cli_report_html_is_ours(const char *text, size_t len);
/* The colour of report k in every chart, "#rrggbb". */
const char *cli_report_html_colour(int k);

/* cmd-report-html.c */
int cli_cmd_report_html(const cli_args *a);

#endif
