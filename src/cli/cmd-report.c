/* strata report: show an inference report as tables, or its layer table as
 * CSV; html is in cmd-report-html.c. */
#include "config.h"

#include <errno.h>
#include <langinfo.h>
#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cli.h"
#include "report-html.h"
#include "st-report.h"

/* The width of the share bar, in cells. */
#define BAR_CELLS 12

/* ---- sorting the layer table ---- */

typedef int (*layer_compare)(const st_report_layer *a, const st_report_layer *b);

static int
by_number_desc(double x, double y)
{
	return (x < y) - (x > y);
}

static int
compare_time(const st_report_layer *a, const st_report_layer *b)
{
	return by_number_desc(a->time.mean, b->time.mean);
}

static int
compare_share(const st_report_layer *a, const st_report_layer *b)
{
	return by_number_desc(a->share, b->share);
}

static int
compare_name(const st_report_layer *a, const st_report_layer *b)
{
	return strcmp(a->name, b->name);
}

static int
compare_type(const st_report_layer *a, const st_report_layer *b)
{
	return strcmp(a->type, b->type);
}

static int
compare_flops(const st_report_layer *a, const st_report_layer *b)
{
	return by_number_desc(a->flops, b->flops);
}

static int
compare_gflops(const st_report_layer *a, const st_report_layer *b)
{
	return by_number_desc(a->gflops, b->gflops);
}

static int
compare_gbs(const st_report_layer *a, const st_report_layer *b)
{
	return by_number_desc(a->gbs, b->gbs);
}

static int
compare_memory(const st_report_layer *a, const st_report_layer *b)
{
	return by_number_desc((double)a->mem_allocated, (double)b->mem_allocated);
}

static int
compare_output(const st_report_layer *a, const st_report_layer *b)
{
	return strcmp(a->output ? a->output : "", b->output ? b->output : "");
}

static int
compare_distance(const st_report_layer *a, const st_report_layer *b)
{
	return (a->distance > b->distance) - (a->distance < b->distance);
}

static int
compare_stddev(const st_report_layer *a, const st_report_layer *b)
{
	return by_number_desc(a->time.stddev, b->time.stddev);
}

static int
compare_bytes(const st_report_layer *a, const st_report_layer *b)
{
	return by_number_desc(a->bytes, b->bytes);
}

/* Unavailable counters (-1) sort last. */
static int
compare_cycles(const st_report_layer *a, const st_report_layer *b)
{
	return by_number_desc(a->cycles, b->cycles);
}

static int
compare_instructions(const st_report_layer *a, const st_report_layer *b)
{
	return by_number_desc(a->instructions, b->instructions);
}

static int
compare_misses(const st_report_layer *a, const st_report_layer *b)
{
	return by_number_desc(a->cache_misses, b->cache_misses);
}

/* The columns --sort accepts; numbers sort largest first, text A to Z. */
static const struct sort_column {
	const char *name;
	layer_compare compare;
} sort_columns[] = {
	{ "time", compare_time },     { "share", compare_share },   { "name", compare_name },
	{ "type", compare_type },     { "flops", compare_flops },   { "gflops", compare_gflops },
	{ "gbs", compare_gbs },       { "memory", compare_memory }, { "output", compare_output },
	{ "distance", compare_distance }, { "stddev", compare_stddev }, { "bytes", compare_bytes },
	{ "cycles", compare_cycles }, { "instructions", compare_instructions }, { "cache_misses", compare_misses },
};
#define N_SORT_COLUMNS (int)(sizeof sort_columns / sizeof sort_columns[0])

static const st_report *sorting;
static layer_compare sorting_by;

/* Ties keep execution order, so that every sort is stable. */
static int
compare_index(const void *a, const void *b)
{
	int i = *(const int *)a, j = *(const int *)b;
	int c = sorting_by(&sorting->layers[i], &sorting->layers[j]);
	return c ? c : (i > j) - (i < j);
}

/* The layer indices to show, in order, after --sort and --top; returns the
 * count, or -1 after a usage message. Caller frees *order. */
static int
layer_order(const cli_args *a, const st_report *r, int **order)
{
	*order = st_xcalloc((size_t)(r->n_layers ? r->n_layers : 1), sizeof **order);
	for (int i = 0; i < r->n_layers; i++)
		(*order)[i] = i;
	const char *sort = cli_value(a, "sort");
	if (sort != NULL) {
		int k = 0;
		while (k < N_SORT_COLUMNS && strcmp(sort_columns[k].name, sort) != 0)
			k++;
		if (k == N_SORT_COLUMNS) {
			fprintf(stderr, "strata report: cannot sort by '%s'; the columns are", sort);
			for (k = 0; k < N_SORT_COLUMNS; k++)
				fprintf(stderr, "%s %s", k ? "," : "", sort_columns[k].name);
			fputc('\n', stderr);
			return -1;
		}
		sorting = r;
		sorting_by = sort_columns[k].compare;
		qsort(*order, (size_t)r->n_layers, sizeof **order, compare_index);
		sorting = NULL;
	}
	int top = cli_report_top(a, r->n_layers);
	return top < 0 ? -1 : top < r->n_layers ? top : r->n_layers;
}

int
cli_report_top(const cli_args *a, int fallback)
{
	const char *top = cli_value(a, "top");
	if (top == NULL)
		return fallback;
	char *end;
	errno = 0;
	long v = strtol(top, &end, 10);
	if (*top == '\0' || *end != '\0' || errno || v < 1 || v > 1000000000) {
		fprintf(stderr, "strata report: --top needs a positive whole number, not '%s'\n", top);
		return -1;
	}
	return (int)v;
}

/* ---- show ---- */

/* Whether the terminal's character set is UTF-8 (for the bar's eighths). */
static bool
utf8_locale(void)
{
	setlocale(LC_CTYPE, "");
	const char *set = nl_langinfo(CODESET);
	return set != NULL && (strcmp(set, "UTF-8") == 0 || strcmp(set, "utf8") == 0);
}

/* A bar of BAR_CELLS cells for a share from 0 to 1, in eighths of a cell. */
static void
share_bar(double share, bool ascii, st_buf *out)
{
	static const char *const eighths[] = { "", "▏", "▎", "▍", "▌", "▋", "▊", "▉" };
	if (!(share > 0))
		share = 0;
	if (share > 1)
		share = 1;
	int cells = 0;
	if (ascii) {
		int n = (int)(share * BAR_CELLS + 0.5);
		for (; cells < n; cells++)
			st_buf_putc(out, '#');
	} else {
		int n = (int)(share * BAR_CELLS * 8 + 0.5);
		for (; n >= 8; n -= 8, cells++)
			st_buf_puts(out, "█");
		if (n > 0) {
			st_buf_puts(out, eighths[n]);
			cells++;
		}
	}
	for (; cells < BAR_CELLS; cells++)
		st_buf_putc(out, ' ');
}

static const char *
or_dash(const char *s)
{
	return s != NULL && *s ? s : "-";
}

static void
show_summary(const st_report *r, bool ascii)
{
	printf("Network Summary\n");
	printf("  model       %s\n", or_dash(r->model));
	printf("  network     %s", or_dash(r->network));
	if (r->network_version != NULL && *r->network_version)
		printf(" (version %s)", r->network_version);
	printf("\n  date        %s\n", or_dash(r->date));
	printf("  backend     %s", or_dash(r->backend));
	if (r->device != NULL && *r->device)
		printf(" (%s)", r->device);
	printf("\n  format      %s\n", or_dash(r->format));
	printf("  threads     %d\n", r->threads);
	printf("  iterations  %d (warmup %d, batch %lld)\n", r->iterations, r->warmup, (long long)r->batch);
	const st_report_times *t = &r->latency;
	if (t->count > 0) {
		printf("  latency     mean %.3f ms, median %.3f ms, p90 %.3f ms, p95 %.3f ms, p99 %.3f ms\n", t->mean,
		       t->median, t->p90, t->p95, t->p99);
		printf("              min %.3f ms, max %.3f ms, stddev %.3f ms over %d runs\n", t->min, t->max,
		       t->stddev, t->count);
		printf("  throughput  %.1f inferences/s\n", r->throughput);
		if (r->n_latency_samples > 1) {
			st_buf line;
			st_buf_init(&line);
			st_report_sparkline(&line, r->latency_samples, r->n_latency_samples, 60, 0, 0, ascii);
			printf("  runs        %s  (%.3f to %.3f ms, in run order)\n", line.data, t->min, t->max);
			st_buf_free(&line);
		}
	} else {
		printf("  latency     not measured\n");
	}
}

/* The width of s on the terminal, counting UTF-8 characters. */
static int
text_width(const char *s)
{
	int w = 0;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		w += (*p & 0xC0) != 0x80;
	return w;
}

static void
print_padded(const char *s, int width)
{
	printf("%s%*s", s, width - text_width(s) > 0 ? width - text_width(s) : 0, "");
}

static void
show_layers(const st_report *r, const int *order, int n, bool ascii, const char *sort)
{
	printf("\nLayer Table (%d of %d layers, profiled over %d iterations, %s%s)\n", n, r->n_layers,
	       r->profile_iterations, sort ? "sorted by " : "in execution order", sort ? sort : "");
	int wname = 5, wtype = 4, wout = 6;
	for (int k = 0; k < n; k++) {
		const st_report_layer *l = &r->layers[order[k]];
		if (text_width(l->name) > wname)
			wname = text_width(l->name);
		if (text_width(l->type) > wtype)
			wtype = text_width(l->type);
		if (text_width(or_dash(l->output)) > wout)
			wout = text_width(or_dash(l->output));
	}
	printf("  %4s  ", "#");
	print_padded("layer", wname);
	printf("  ");
	print_padded("type", wtype);
	printf("  ");
	print_padded("output", wout);
	/* Sparklines of the profiled iterations, and the counters, when the
	 * report has them. */
	bool samples = false, counters = false;
	for (int k = 0; k < n; k++) {
		samples |= r->layers[order[k]].n_samples > 1;
		counters |= r->layers[order[k]].cycles >= 0 || r->layers[order[k]].instructions >= 0;
	}
	printf("  %10s  %10s  %7s  %-*s  %9s  %9s", "time ms", "± stddev", "share %", BAR_CELLS, "", "GFLOP/s",
	       "GB/s");
	if (counters)
		printf("  %10s  %5s  %10s", "cycles", "IPC", "misses");
	if (samples)
		printf("  %s", "iterations");
	printf("\n");
	st_buf bar;
	st_buf_init(&bar);
	for (int k = 0; k < n; k++) {
		const st_report_layer *l = &r->layers[order[k]];
		st_buf_reset(&bar);
		share_bar(l->share, ascii, &bar);
		printf("  %4d  ", order[k] + 1);
		print_padded(l->name, wname);
		printf("  ");
		print_padded(l->type, wtype);
		printf("  ");
		print_padded(or_dash(l->output), wout);
		printf("  %10.3f  %9.3f  %7.1f  %s  %9.2f  %9.2f", l->time.mean, l->time.stddev, l->share * 100, bar.data,
		       l->gflops, l->gbs);
		if (counters) {
			char c[3][24];
			const double v[3] = { l->cycles, l->instructions > 0 && l->cycles > 0 ? l->instructions / l->cycles : -1,
				              l->cache_misses };
			for (int j = 0; j < 3; j++) {
				if (v[j] < 0)
					snprintf(c[j], sizeof c[j], "n/a");
				else
					snprintf(c[j], sizeof c[j], j == 1 ? "%.2f" : "%.0f", v[j]);
			}
			printf("  %10s  %5s  %10s", c[0], c[1], c[2]);
		}
		if (samples) {
			st_buf_reset(&bar);
			st_report_sparkline(&bar, l->samples, l->n_samples, 20, 0, 0, ascii);
			printf("  %s", bar.data ? bar.data : "");
		}
		printf("\n");
	}
	st_buf_free(&bar);
	if (r->counters_note != NULL)
		printf("  Hardware counters: %s\n", r->counters_note);
	else if (!counters && r->n_layers > 0)
		printf("  Hardware counters: not in this report\n");
}

static void
show_types(const st_report *r)
{
	int n, wtype = 4;
	st_report_type *t = st_report_by_type(r, &n);
	for (int k = 0; k < n; k++)
		wtype = text_width(t[k].type) > wtype ? text_width(t[k].type) : wtype;
	printf("\nBy Type\n  ");
	print_padded("type", wtype);
	printf("  %5s  %10s  %7s\n", "count", "total ms", "share %");
	for (int k = 0; k < n; k++) {
		printf("  ");
		print_padded(t[k].type, wtype);
		printf("  %5d  %10.3f  %7.1f\n", t[k].count, t[k].time, t[k].share * 100);
	}
	free(t);
}

/* Totals over the layer table: the time of one profiled inference, the
 * work, the rates it reached, the counters; and the slowest layers. */
static void
show_metrics(const st_report *r)
{
	if (r->n_layers == 0)
		return;
	double time = 0, flops = 0, bytes = 0, cycles = 0, instructions = 0, misses = 0;
	bool have_cycles = true, have_instructions = true, have_misses = true;
	for (int i = 0; i < r->n_layers; i++) {
		const st_report_layer *l = &r->layers[i];
		time += l->time.mean;
		flops += l->flops;
		bytes += l->bytes;
		have_cycles &= l->cycles >= 0;
		have_instructions &= l->instructions >= 0;
		have_misses &= l->cache_misses >= 0;
		cycles += l->cycles;
		instructions += l->instructions;
		misses += l->cache_misses;
	}
	char human[32];
	printf("\nNetwork Metrics\n");
	printf("  layer time  %.3f ms per inference (sum of the layers' means)\n", time);
	printf("  work        %.3f GFLOP, ", flops / 1e9);
	cli_human_bytes(bytes, human, sizeof human);
	printf("%s moved\n", human);
	printf("  achieved    %.2f GFLOP/s, %.2f GB/s\n", time > 0 ? flops / (time / 1e3) / 1e9 : 0.0,
	       time > 0 ? bytes / (time / 1e3) / 1e9 : 0.0);
	if (have_cycles || have_instructions || have_misses) {
		printf("  counters   ");
		if (have_cycles)
			printf(" %.0f cycles", cycles);
		if (have_instructions)
			printf(" %.0f instructions", instructions);
		if (have_cycles && have_instructions && cycles > 0)
			printf(" (IPC %.2f)", instructions / cycles);
		if (have_misses)
			printf(" %.0f cache misses", misses);
		printf("\n");
	} else {
		printf("  counters    unavailable\n");
	}
	/* The slowest five, ties in execution order. */
	int *order = st_report_slowest(r);
	int n = r->n_layers < 5 ? r->n_layers : 5;
	printf("  slowest    ");
	for (int k = 0; k < n; k++)
		printf("%s %s (%.1f%%)", k ? "," : "", r->layers[order[k]].name, r->layers[order[k]].share * 100);
	printf("\n");
	free(order);
}

static void
show_memory(const st_report *r)
{
	int wname = 5;
	for (int i = 0; i < r->n_layers; i++) {
		if (text_width(r->layers[i].name) > wname)
			wname = text_width(r->layers[i].name);
	}
	printf("\nMemory\n  ");
	print_padded("layer", wname);
	printf("  %11s  %11s  %11s  %11s\n", "allocated", "freed", "live", "persistent");
	char a[32], f[32], l[32], p[32];
	for (int i = 0; i < r->n_layers; i++) {
		const st_report_layer *y = &r->layers[i];
		cli_human_bytes((double)y->mem_allocated, a, sizeof a);
		cli_human_bytes((double)y->mem_freed, f, sizeof f);
		cli_human_bytes((double)y->mem_live, l, sizeof l);
		cli_human_bytes((double)y->mem_persistent, p, sizeof p);
		printf("  ");
		print_padded(y->name, wname);
		printf("  %11s  %11s  %11s  %11s\n", a, f, l, p);
	}
	cli_human_bytes((double)r->peak_bytes, a, sizeof a);
	printf("  peak %s", a);
	if (r->peak_layer != NULL)
		printf(" after %s", r->peak_layer);
	printf("\n");
	if (r->n_skipped > 0) {
		printf("\nNot profiled (no step of their own):");
		for (int i = 0; i < r->n_skipped; i++)
			printf("%s %s", i ? "," : "", r->skipped[i]);
		printf("\n");
	}
}

static int
report_show(const cli_args *a, const st_report *r)
{
	int *order;
	int n = layer_order(a, r, &order);
	if (n < 0) {
		free(order);
		return EXIT_USAGE;
	}
	bool ascii = cli_flag(a, "ascii") || !utf8_locale();
	show_summary(r, ascii);
	show_layers(r, order, n, ascii, cli_value(a, "sort"));
	show_metrics(r);
	show_types(r);
	show_memory(r);
	free(order);
	return EXIT_OK;
}

/* ---- csv ---- */

/* A field quoted as RFC 4180 asks when it holds a comma, quote or line break. */
static void
csv_text(st_buf *out, const char *s)
{
	if (strpbrk(s, ",\"\r\n") == NULL) {
		st_buf_puts(out, s);
		return;
	}
	st_buf_putc(out, '"');
	for (const char *p = s; *p; p++) {
		if (*p == '"')
			st_buf_putc(out, '"');
		st_buf_putc(out, *p);
	}
	st_buf_putc(out, '"');
}

/* Whole numbers without exponent or ".0", others with the digits that read back the same. */
static void
csv_number(st_buf *out, double v)
{
	st_buf_putc(out, ',');
	if (v == floor(v) && fabs(v) < 9007199254740992.0)
		st_buf_printf(out, "%.0f", v);
	else
		st_format_double(v, out);
}

static void
csv_counter(st_buf *out, double v)
{
	if (v >= 0)
		csv_number(out, v);
	else
		st_buf_putc(out, ','); /* empty when unavailable, never a false 0 */
}

static int
report_csv(const cli_args *a, const st_report *r)
{
	int *order;
	int n = layer_order(a, r, &order);
	if (n < 0) {
		free(order);
		return EXIT_USAGE;
	}
	st_buf out;
	st_buf_init(&out);
	st_buf_puts(&out, "index,layer,type,output,distance,time_ms,stddev_ms,median_ms,p90_ms,p99_ms,share,"
	                  "flops,bytes,gflops,gbs,allocated,freed,live,persistent,cycles,instructions,cache_misses\n");
	for (int k = 0; k < n; k++) {
		const st_report_layer *l = &r->layers[order[k]];
		st_buf_printf(&out, "%d,", order[k] + 1);
		csv_text(&out, l->name);
		st_buf_putc(&out, ',');
		csv_text(&out, l->type);
		st_buf_putc(&out, ',');
		csv_text(&out, l->output ? l->output : "");
		st_buf_printf(&out, ",%d", l->distance);
		csv_number(&out, l->time.mean);
		csv_number(&out, l->time.stddev);
		csv_number(&out, l->time.median);
		csv_number(&out, l->time.p90);
		csv_number(&out, l->time.p99);
		csv_number(&out, l->share);
		csv_number(&out, l->flops);
		csv_number(&out, l->bytes);
		csv_number(&out, l->gflops);
		csv_number(&out, l->gbs);
		st_buf_printf(&out, ",%lld,%lld,%lld,%lld", (long long)l->mem_allocated, (long long)l->mem_freed,
		              (long long)l->mem_live, (long long)l->mem_persistent);
		csv_counter(&out, l->cycles);
		csv_counter(&out, l->instructions);
		csv_counter(&out, l->cache_misses);
		st_buf_putc(&out, '\n');
	}
	free(order);
	int rc = EXIT_OK;
	const char *path = cli_value(a, "output");
	if (path != NULL) {
		char err[512];
		if (st_write_file_atomic(path, out.data, out.len, err, sizeof err) != 0) {
			fprintf(stderr, "strata report: %s\n", err);
			rc = EXIT_RUNTIME;
		}
	} else {
		fwrite(out.data, 1, out.len, stdout);
	}
	st_buf_free(&out);
	return rc;
}

/* Writes out to -o FILE (atomically) or standard output. */
static int
emit(const cli_args *a, const st_buf *out)
{
	const char *path = cli_value(a, "output");
	if (path == NULL) {
		fwrite(out->data ? out->data : "", 1, out->len, stdout);
		return EXIT_OK;
	}
	char err[512];
	if (st_write_file_atomic(path, out->data ? out->data : "", out->len, err, sizeof err) != 0) {
		fprintf(stderr, "strata report: %s\n", err);
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}

/* Chrome trace-event JSON (opens in Perfetto and chrome://tracing): one
 * average inference, each layer a complete event of its mean time, laid
 * out in execution order on one track. */
static int
report_trace(const cli_args *a, const st_report *r)
{
	if (r->n_layers == 0) {
		fprintf(stderr, "strata report: %s has no layer table: make it with strata run --profile\n", a->argv[1]);
		return EXIT_PROBLEM;
	}
	st_buf out;
	st_buf_init(&out);
	st_buf_puts(&out, "{\"displayTimeUnit\": \"ms\", \"otherData\": {\"model\": ");
	st_json_write_string(&out, r->model ? r->model : "");
	st_buf_puts(&out, ", \"format\": ");
	st_json_write_string(&out, r->format ? r->format : "");
	st_buf_printf(&out, ", \"threads\": %d, \"profile_iterations\": %d}, \"traceEvents\": [\n", r->threads,
	              r->profile_iterations);
	st_buf_puts(&out, "  {\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": 1, \"args\": {\"name\": ");
	st_json_write_string(&out, r->network && r->network[0] ? r->network : "network");
	st_buf_puts(&out, "}}");
	double ts = 0;
	for (int i = 0; i < r->n_layers; i++) {
		const st_report_layer *l = &r->layers[i];
		double dur = l->time.mean * 1e3; /* microseconds */
		st_buf_puts(&out, ",\n  {\"name\": ");
		st_json_write_string(&out, l->name);
		st_buf_puts(&out, ", \"cat\": ");
		st_json_write_string(&out, l->type);
		st_buf_printf(&out, ", \"ph\": \"X\", \"pid\": 1, \"tid\": 1, \"ts\": %.3f, \"dur\": %.3f", ts, dur);
		st_buf_puts(&out, ", \"args\": {\"output\": ");
		st_json_write_string(&out, l->output ? l->output : "");
		st_buf_puts(&out, ", \"share\": ");
		st_format_double(l->share, &out);
		st_buf_puts(&out, ", \"gflops\": ");
		st_format_double(l->gflops, &out);
		st_buf_printf(&out, ", \"stddev_us\": %.3f", l->time.stddev * 1e3);
		st_buf_puts(&out, "}}");
		ts += dur;
	}
	st_buf_puts(&out, "\n]}\n");
	int rc = emit(a, &out);
	st_buf_free(&out);
	return rc;
}

/* The per-layer figures compare --metric takes; -1 reads as unavailable. */
static const struct layer_metric {
	const char *name, *unit;
	int decimals;
} layer_metrics[] = {
	{ "time", "ms", 3 },         { "gflops", "GFLOP/s", 2 },   { "gbs", "GB/s", 2 },
	{ "memory", "bytes allocated", 0 }, { "cycles", "cycles", 0 }, { "instructions", "instructions", 0 },
	{ "cache_misses", "cache misses", 0 },
};
#define N_LAYER_METRICS (int)(sizeof layer_metrics / sizeof layer_metrics[0])

static double
layer_metric_value(const st_report_layer *l, int m)
{
	switch (m) {
	case 0:
		return l->time.mean;
	case 1:
		return l->gflops;
	case 2:
		return l->gbs;
	case 3:
		return (double)l->mem_allocated;
	case 4:
		return l->cycles;
	case 5:
		return l->instructions;
	default:
		return l->cache_misses;
	}
}

/* One value of a comparison column, "n/a" when unavailable. */
static void
print_metric(double v, int decimals)
{
	if (v < 0)
		printf(" %12s", "n/a");
	else
		printf(" %12.*f", decimals, v);
}

static void
print_diff(double value, double base)
{
	if (base > 0)
		printf(" %+9.3f %+7.1f%%", value - base, (value - base) / base * 100);
	else
		printf(" %+9.3f %8s", value - base, "");
}

/* The network's figures of each report side by side: the layers' summed
 * time, the work and the rates, peak memory, and the counters' totals. */
static void
compare_metrics(const st_report *reports, int n)
{
	static const char *const rows[] = { "layer time ms", "GFLOP", "GFLOP/s", "GB/s", "peak MiB", "inferences/s",
		                            "cycles", "instructions", "cache misses" };
	printf("\nNetwork Metrics\n  %-14s", "");
	for (int k = 0; k < n; k++)
		printf(" %12c", 'A' + k);
	printf("\n");
	for (int row = 0; row < 9; row++) {
		printf("  %-14s", rows[row]);
		for (int k = 0; k < n; k++) {
			const st_report *r = &reports[k];
			double time = 0, flops = 0, bytes = 0, counters[3] = { 0, 0, 0 };
			for (int i = 0; i < r->n_layers; i++) {
				const st_report_layer *l = &r->layers[i];
				time += l->time.mean;
				flops += l->flops;
				bytes += l->bytes;
				const double c[3] = { l->cycles, l->instructions, l->cache_misses };
				for (int j = 0; j < 3; j++)
					counters[j] = counters[j] < 0 || c[j] < 0 ? -1 : counters[j] + c[j];
			}
			double secs = time / 1e3;
			const double v[] = { r->n_layers ? time : -1,
				             r->n_layers ? flops / 1e9 : -1,
				             r->n_layers && secs > 0 ? flops / secs / 1e9 : -1,
				             r->n_layers && secs > 0 ? bytes / secs / 1e9 : -1,
				             r->n_layers ? (double)r->peak_bytes / 1048576.0 : -1,
				             r->throughput,
				             r->n_layers ? counters[0] : -1,
				             r->n_layers ? counters[1] : -1,
				             r->n_layers ? counters[2] : -1 };
			print_metric(v[row], row >= 6 ? 0 : 3);
		}
		printf("\n");
	}
}

/* Reports side by side against a base: the summaries, then every layer
 * matched by name and type (in the base's order, then the others'), with
 * each report's time and its difference from the base. */
static int
report_compare(const cli_args *a, st_report *reports, int n)
{
	int metric = 0;
	const char *want_metric = cli_value(a, "metric");
	if (want_metric != NULL) {
		while (metric < N_LAYER_METRICS && strcmp(layer_metrics[metric].name, want_metric) != 0)
			metric++;
		if (metric == N_LAYER_METRICS) {
			fprintf(stderr, "strata report: --metric %s is not a layer figure; use", want_metric);
			for (int m = 0; m < N_LAYER_METRICS; m++)
				fprintf(stderr, "%s %s", m ? "," : "", layer_metrics[m].name);
			fputc('\n', stderr);
			return EXIT_USAGE;
		}
	}
	int base = 0;
	const char *want = cli_value(a, "base");
	if (want != NULL) {
		base = -1;
		for (int k = 0; k < n; k++) {
			char letter[2] = { (char)('A' + k), 0 };
			if (strcmp(want, a->argv[1 + k]) == 0 || strcasecmp(want, letter) == 0)
				base = k;
		}
		if (base < 0) {
			fprintf(stderr, "strata report: --base %s is none of the reports compared (give its path or its letter, "
			                "A for the first)\n",
			        want);
			return EXIT_USAGE;
		}
	}
	bool color = isatty(STDOUT_FILENO) && getenv("NO_COLOR") == NULL;
	static const char *const colors[] = { "\033[34m", "\033[33m", "\033[32m", "\033[35m", "\033[36m", "\033[31m" };
	const st_report *b = &reports[base];
	printf("Reports\n");
	for (int k = 0; k < n; k++) {
		const st_report *r = &reports[k];
		printf("  %s[%c]%s %s  %s, %s, %d thread%s, mean %.3f ms", color ? colors[k % 6] : "", 'A' + k,
		       color ? "\033[0m" : "", a->argv[1 + k], or_dash(r->format), or_dash(r->backend), r->threads,
		       r->threads == 1 ? "" : "s", r->latency.mean);
		if (k == base)
			printf("  (base)\n");
		else {
			print_diff(r->latency.mean, b->latency.mean);
			printf("\n");
		}
	}
	printf("\nLatency (ms)\n  %-10s", "");
	for (int k = 0; k < n; k++)
		printf(" %10c", 'A' + k);
	printf("\n");
	static const char *const rows[] = { "mean", "median", "p90", "p99", "min", "max" };
	for (int row = 0; row < 6; row++) {
		printf("  %-10s", rows[row]);
		for (int k = 0; k < n; k++) {
			const st_report_times *t = &reports[k].latency;
			double v[] = { t->mean, t->median, t->p90, t->p99, t->min, t->max };
			printf(" %10.3f", v[row]);
		}
		printf("\n");
	}
	compare_metrics(reports, n);
	/* Every layer once: the base's first, then those only the others have. */
	/* Rows: every (name, type) once, the base's layers first. */
	int cap = 0;
	for (int k = 0; k < n; k++)
		cap += reports[k].n_layers;
	const st_report_layer **rows_of = st_xcalloc((size_t)(cap ? cap : 1), sizeof *rows_of);
	int n_rows = 0;
	for (int step = 0; step < n; step++) {
		const st_report *src = &reports[step == 0 ? base : step <= base ? step - 1 : step];
		for (int i = 0; i < src->n_layers; i++) {
			bool seen = false;
			for (int j = 0; j < n_rows && !seen; j++)
				seen = strcmp(rows_of[j]->name, src->layers[i].name) == 0 &&
				       strcmp(rows_of[j]->type, src->layers[i].type) == 0;
			if (!seen)
				rows_of[n_rows++] = &src->layers[i];
		}
	}
	int wname = 5, wtype = 4;
	for (int i = 0; i < n_rows; i++) {
		wname = text_width(rows_of[i]->name) > wname ? text_width(rows_of[i]->name) : wname;
		wtype = text_width(rows_of[i]->type) > wtype ? text_width(rows_of[i]->type) : wtype;
	}
	const struct layer_metric *lm = &layer_metrics[metric];
	printf("\nLayer Table (%s; differences against [%c])\n  %-*s %-*s", lm->unit, 'A' + base, wname, "layer", wtype,
	       "type");
	for (int k = 0; k < n; k++) {
		if (k == base)
			printf(" %12c", 'A' + k);
		else
			printf(" %12c %9s %8s", 'A' + k, "diff", "%");
	}
	printf("\n");
	for (int i = 0; i < n_rows; i++) {
		const st_report_layer *l = rows_of[i];
		printf("  ");
		print_padded(l->name, wname);
		printf(" ");
		print_padded(l->type, wtype);
		const st_report_layer *bl = st_report_find_layer(b, l->name, l->type);
		double bv = bl != NULL ? layer_metric_value(bl, metric) : -1;
		for (int k = 0; k < n; k++) {
			const st_report_layer *x = st_report_find_layer(&reports[k], l->name, l->type);
			double v = x != NULL ? layer_metric_value(x, metric) : -1;
			if (x == NULL) {
				printf(k == base ? " %12s" : " %12s %9s %8s", "-", "", "");
				continue;
			}
			print_metric(v, lm->decimals);
			if (k == base)
				continue;
			if (v >= 0 && bv >= 0)
				print_diff(v, bv);
			else
				printf(" %9s %8s", "", "");
		}
		printf("\n");
	}
	free(rows_of);
	return EXIT_OK;
}

int
cli_cmd_report(const cli_args *a)
{
	const char *what = a->argv[0];
	if (strcmp(what, "html") == 0)
		return cli_cmd_report_html(a);
	bool show = strcmp(what, "show") == 0, csv = strcmp(what, "csv") == 0, trace = strcmp(what, "trace") == 0,
	     compare = strcmp(what, "compare") == 0;
	if (!show && !csv && !trace && !compare) {
		fprintf(stderr, "strata report: unknown action '%s'; use show, csv, trace, compare or html\n", what);
		return EXIT_USAGE;
	}
	if (compare ? a->argc < 3 : a->argc != 2) {
		fprintf(stderr, compare ? "strata report: compare takes two reports or more\n"
		                        : "strata report: %s takes one report\n",
		        what);
		return EXIT_USAGE;
	}
	if (compare) {
		int n = a->argc - 1;
		st_report *reports = st_xcalloc((size_t)n, sizeof *reports);
		int rc = cli_load_reports(a, n, reports);
		if (rc == EXIT_OK)
			rc = report_compare(a, reports, n);
		for (int k = 0; k < n; k++)
			st_report_free(&reports[k]);
		free(reports);
		return rc;
	}
	st_diag d;
	st_diag_init(&d);
	st_report r;
	if (st_report_load(a->argv[1], &r, &d) != 0) {
		st_diag_print(&d, stderr);
		st_diag_free(&d);
		st_report_free(&r);
		return EXIT_USAGE;
	}
	st_diag_free(&d);
	int rc = show ? report_show(a, &r) : csv ? report_csv(a, &r) : report_trace(a, &r);
	st_report_free(&r);
	return rc;
}
