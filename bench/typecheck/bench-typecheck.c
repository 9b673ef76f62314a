/* Benchmark: load and type-check generated models of 1k to 100k layers, then
 * time one incremental re-check after a parameter edit.
 *   bench-typecheck [LAYERS...]   (default 1000 10000 100000)
 * Prints one line per size; bench/typecheck/run sets it beside a peer. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "st-core.h"

/*
 * A ResNet-like repetition: each block is conv+bn (relu attached), conv+bn,
 * and an element-wise add of the block's input, 5 layers, with a 1x1
 * projection conv every 8th block so that channel counts change. The model
 * file is written to disk and loaded from there, as a user's would be.
 */
static char *
generate(int target, int *n_layers)
{
	st_buf b;
	st_buf_init(&b);
	st_buf_puts(&b, "{\"format\": \"strata-model\", \"version\": 1,\n"
	                "\"network\": {\"name\": \"bench\"},\n\"layers\": [\n"
	                "{\"name\": \"data\", \"type\": \"input\", \"params\": {\"dims\": [64, 56, 56]}}");
	int n = 1, block = 0, channels = 64;
	const char *prev = "data";
	char prev_buf[64], x[64];
	while (n + 6 <= target) {
		snprintf(x, sizeof x, "%s", prev);
		int out = channels;
		if (block % 8 == 7) {
			out = channels + 16;
			st_buf_printf(&b, ",\n{\"name\": \"proj%d\", \"type\": \"convolution\", \"params\": "
			                  "{\"num_output\": %d, \"kernel\": [1]}, \"inputs\": [\"%s.0\"]}",
			              block, out, prev);
			snprintf(x, sizeof x, "proj%d", block);
			n++;
		}
		st_buf_printf(&b, ",\n{\"name\": \"c%da\", \"type\": \"convolution\", \"params\": "
		                  "{\"num_output\": %d, \"kernel\": [3], \"padding\": \"same\"}, \"inputs\": [\"%s.0\"]}"
		                  ",\n{\"name\": \"b%da\", \"type\": \"batch_normalization\", \"activation\": "
		                  "{\"type\": \"relu\"}, \"inputs\": [\"c%da.0\"]}"
		                  ",\n{\"name\": \"c%db\", \"type\": \"convolution\", \"params\": "
		                  "{\"num_output\": %d, \"kernel\": [3], \"padding\": \"same\"}, \"inputs\": [\"b%da.0\"]}"
		                  ",\n{\"name\": \"b%db\", \"type\": \"batch_normalization\", \"inputs\": [\"c%db.0\"]}"
		                  ",\n{\"name\": \"add%d\", \"type\": \"elementwise\", \"activation\": {\"type\": "
		                  "\"relu\"}, \"inputs\": [\"b%db.0\", \"%s.0\"]}",
		              block, out, x, block, block, block, out, block, block, block, block, block, x);
		n += 5;
		channels = out;
		snprintf(prev_buf, sizeof prev_buf, "add%d", block);
		prev = prev_buf;
		block++;
	}
	st_buf_printf(&b, ",\n{\"name\": \"out\", \"type\": \"output\", \"inputs\": [\"%s.0\"]}\n]}\n", prev);
	n++;
	*n_layers = n;
	return st_buf_take(&b);
}

static double
best_of(double a, double b)
{
	return a < b ? a : b;
}

static int
run_size(st_registry *r, int target)
{
	int n;
	char *text = generate(target, &n);
	char path[] = "/tmp/strata-bench-XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
		fprintf(stderr, "cannot write %s\n", path);
		return -1;
	}
	close(fd);
	double load = 1e9, check = 1e9, inc_param = 1e9, inc_shape = 1e9;
	int visited_param = 0, visited_shape = 0, errors = 0;
	/* The best of three runs: the machine is shared and noisy. */
	for (int rep = 0; rep < 3; rep++) {
		st_diag d;
		st_diag_init(&d);
		double t0 = st_now();
		st_graph *g = st_model_load(path, r, &d);
		double t1 = st_now();
		if (g == NULL) {
			st_diag_print(&d, stderr);
			return -1;
		}
		st_graph_check(g);
		double t2 = st_now();
		load = best_of(load, t1 - t0);
		check = best_of(check, t2 - t1);
		errors = g->errors;

		/* One edit in the middle through the command table, as the TUI does it. */
		st_session *s = st_session_new(g, NULL);
		char err[256], mid_bn[32], mid_conv[32], eps[] = "0.001", outs[] = "96";
		snprintf(mid_bn, sizeof mid_bn, "b%da", n / 10);
		snprintf(mid_conv, sizeof mid_conv, "c%da", n / 10);
		char *set_eps[] = { "set", mid_bn, "epsilon", eps };
		double t3 = st_now();
		if (st_session_exec(s, 4, set_eps, err, sizeof err) != 0) {
			fprintf(stderr, "edit failed: %s\n", err);
			return -1;
		}
		double t4 = st_now();
		visited_param = g->stats.visited;
		/* A shape change that the next convolution absorbs. */
		char *set_out[] = { "set", mid_conv, "num_output", outs };
		double t5 = st_now();
		st_session_exec(s, 4, set_out, err, sizeof err);
		double t6 = st_now();
		visited_shape = g->stats.visited;
		inc_param = best_of(inc_param, t4 - t3);
		inc_shape = best_of(inc_shape, t6 - t5);
		st_session_free(s);
		st_diag_free(&d);
	}
	unlink(path);
	printf("strata %7d layers  %6.1f MB  load %8.2f ms  check %8.2f ms  load+check %8.2f ms  "
	       "edit+recheck %7.1f us (%d visited)  shape edit %7.1f us (%d visited)  errors %d\n",
	       n, (double)strlen(text) / 1e6, load * 1e3, check * 1e3, (load + check) * 1e3,
	       inc_param * 1e6, visited_param, inc_shape * 1e6, visited_shape, errors);
	free(text);
	return 0;
}

int
main(int argc, char **argv)
{
	st_registry *r = st_registry_new();
	st_registry_load_default(r);
	if (st_registry_find_layer(r, "convolution") == NULL) {
		fprintf(stderr, "bench-typecheck: the std plugin is not on STRATA_PLUGIN_PATH\n");
		return 2;
	}
	int sizes[] = { 1000, 10000, 100000 };
	int rc = 0;
	if (argc > 1) {
		for (int i = 1; i < argc; i++)
			rc |= run_size(r, atoi(argv[i]));
	} else {
		for (int i = 0; i < 3; i++)
			rc |= run_size(r, sizes[i]);
	}
	st_registry_free(r);
	return rc ? 1 : 0;
}
