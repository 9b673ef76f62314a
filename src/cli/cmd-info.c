/* strata info: a table of layers with shapes, parameters, FLOPs and memory. */
#include "config.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

typedef struct row {
	char shape[160];
	int64_t params;
	double flops;
	int64_t bytes;
} row;

static void
layer_row(const st_layer *l, row *out)
{
	st_buf b;
	st_buf_init(&b);
	if (!l->outputs_known) {
		st_buf_puts(&b, "?");
	} else if (l->n_outputs == 0) {
		/* An output layer shows what it receives. */
		if (l->n_inputs > 0 && l->inputs[0].layer && l->inputs[0].layer->outputs_known &&
		    l->inputs[0].output < l->inputs[0].layer->n_outputs) {
			char s[128];
			st_shape_format(&l->inputs[0].layer->outputs[l->inputs[0].output], s, sizeof s);
			st_buf_puts(&b, s);
		} else {
			st_buf_puts(&b, "-");
		}
	}
	out->bytes = 0;
	for (int i = 0; l->outputs_known && i < l->n_outputs; i++) {
		char s[128];
		st_shape_format(&l->outputs[i], s, sizeof s);
		st_buf_printf(&b, "%s%s", i ? ", " : "", s);
		int64_t by = st_shape_bytes(&l->outputs[i]);
		if (by > 0)
			out->bytes += by;
	}
	snprintf(out->shape, sizeof out->shape, "%s", b.data ? b.data : "");
	if (strlen(out->shape) > 40)
		strcpy(out->shape + 37, "...");
	st_buf_free(&b);
	out->params = st_layer_param_count(l);
	out->flops = l->flops;
}

static int
max_int(int a, int b)
{
	return a > b ? a : b;
}

int
cli_cmd_info(const cli_args *a)
{
	const char *path = a->argv[0];
	st_registry *r = cli_registry();
	st_graph *g = cli_load_model(r, path);
	if (g == NULL) {
		st_registry_free(r);
		return EXIT_USAGE;
	}
	st_graph_check(g);
	int n = g->n_layers;
	row *rows = st_xcalloc((size_t)(n ? n : 1), sizeof *rows);
	int64_t total_params = 0, total_bytes = 0;
	double total_flops = 0;
	for (int i = 0; i < n; i++) {
		layer_row(g->layers[i], &rows[i]);
		total_params += rows[i].params;
		total_flops += rows[i].flops;
		total_bytes += rows[i].bytes;
	}
	const st_value *net = g->network.values;
	if (cli_flag(a, "json")) {
		cJSON *root = cJSON_CreateObject();
		cJSON_AddStringToObject(root, "file", path);
		cJSON_AddStringToObject(root, "name", net[ST_NET_NAME].s);
		cJSON_AddStringToObject(root, "version", net[ST_NET_VERSION].s);
		cJSON_AddStringToObject(root, "tensor_format",
		                        st_tensor_format_name((st_tensor_format)net[ST_NET_TENSOR_FORMAT].i));
		cJSON_AddNumberToObject(root, "errors", g->errors);
		cJSON *list = cJSON_AddArrayToObject(root, "layers");
		for (int i = 0; i < n; i++) {
			const st_layer *l = g->layers[i];
			cJSON *o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "name", l->name);
			cJSON_AddStringToObject(o, "type", l->type_name);
			cJSON *outs = cJSON_AddArrayToObject(o, "outputs");
			for (int k = 0; l->outputs_known && k < l->n_outputs; k++) {
				cJSON *s = cJSON_CreateObject();
				cJSON_AddStringToObject(s, "dtype", st_dtype_name(l->outputs[k].dtype));
				cJSON *dims = cJSON_AddArrayToObject(s, "dims");
				for (int d = 0; d < l->outputs[k].rank; d++)
					cJSON_AddItemToArray(dims, cJSON_CreateNumber((double)l->outputs[k].dims[d]));
				cJSON_AddItemToArray(outs, s);
			}
			cJSON_AddBoolToObject(o, "shapes_known", l->outputs_known);
			cJSON_AddNumberToObject(o, "params", (double)rows[i].params);
			cJSON_AddNumberToObject(o, "flops", rows[i].flops);
			cJSON_AddNumberToObject(o, "activation_bytes", (double)rows[i].bytes);
			cJSON_AddItemToArray(list, o);
		}
		cJSON *t = cJSON_AddObjectToObject(root, "total");
		cJSON_AddNumberToObject(t, "params", (double)total_params);
		cJSON_AddNumberToObject(t, "flops", total_flops);
		cJSON_AddNumberToObject(t, "activation_bytes", (double)total_bytes);
		cJSON_AddNumberToObject(t, "weight_bytes", (double)total_params * 4);
		cli_print_json(root);
	} else {
		int wn = 5, wt = 4, ws = 6;
		for (int i = 0; i < n; i++) {
			wn = max_int(wn, (int)strlen(g->layers[i]->name));
			wt = max_int(wt, (int)strlen(g->layers[i]->type_name));
			ws = max_int(ws, (int)strlen(rows[i].shape));
		}
		if (wn > 32)
			wn = 32;
		if (wt > 24)
			wt = 24;
		printf("%s %s · %s · %d layer%s\n\n", net[ST_NET_NAME].s, net[ST_NET_VERSION].s,
		       st_tensor_format_name((st_tensor_format)net[ST_NET_TENSOR_FORMAT].i), n,
		       n == 1 ? "" : "s");
		printf("%4s  %-*s  %-*s  %-*s  %10s  %10s  %11s\n", "#", wn, "layer", wt, "type", ws,
		       "output", "params", "FLOPs", "memory");
		for (int i = 0; i < n; i++) {
			char p[32], f[32], m[32];
			cli_human_count((double)rows[i].params, p, sizeof p);
			cli_human_count(rows[i].flops, f, sizeof f);
			cli_human_bytes((double)rows[i].bytes, m, sizeof m);
			printf("%4d  %-*.*s  %-*.*s  %-*s  %10s  %10s  %11s\n", i, wn, wn, g->layers[i]->name, wt,
			       wt, g->layers[i]->type_name, ws, rows[i].shape, p, f, m);
		}
		char p[32], f[32], m[32], w[32];
		cli_human_count((double)total_params, p, sizeof p);
		cli_human_count(total_flops, f, sizeof f);
		cli_human_bytes((double)total_bytes, m, sizeof m);
		cli_human_bytes((double)total_params * 4, w, sizeof w);
		printf("%4s  %-*s  %-*s  %-*s  %10s  %10s  %11s\n", "", wn, "total", wt, "", ws, "", p, f, m);
		printf("\nweights %s (FP32) · activations %s if none were reused\n", w, m);
		if (g->errors > 0)
			printf("%d type error%s: figures with '?' are unknown; see strata check %s\n", g->errors,
			       g->errors == 1 ? "" : "s", path);
	}
	int rc = g->errors > 0 ? EXIT_PROBLEM : EXIT_OK;
	free(rows);
	st_graph_free(g);
	st_registry_free(r);
	return rc;
}
