/* libFuzzer target for the ONNX protobuf reader: parse, check that raw_data
 * lies inside the input, and check that the writer's output reads back and
 * writes out the same bytes again (the encoding is canonical). */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "st-onnx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_graph(const st_onnx_graph *g, const uint8_t *data, size_t size)
{
	for (size_t i = 0; i < g->n_initializers; i++) {
		const st_onnx_tensor *t = &g->initializers[i];
		const void *p;
		size_t len;
		char err[256];
		if (t->raw_data.data != NULL &&
		    ((const uint8_t *)t->raw_data.data < data ||
		     (const uint8_t *)t->raw_data.data + t->raw_data.len > data + size)) {
			fprintf(stderr, "raw_data lies outside the input\n");
			abort();
		}
		if (st_onnx_tensor_bytes(t, &p, &len, err, sizeof err) == 0) {
			volatile uint8_t sum = 0;
			for (size_t k = 0; k < len; k++)
				sum += ((const uint8_t *)p)[k];
			(void)sum;
		}
	}
	for (size_t i = 0; i < g->n_nodes; i++)
		for (size_t j = 0; j < g->nodes[i].n_attributes; j++) {
			const st_onnx_attribute *a = &g->nodes[i].attributes[j];
			if (a->g != NULL)
				check_graph(a->g, data, size);
			for (size_t k = 0; k < a->n_graphs; k++)
				check_graph(&a->graphs[k], data, size);
		}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	st_onnx_model m;
	char err[1024];
	if (st_onnx_parse(data, size, &m, err, sizeof err) != 0) {
		if (err[0] == '\0') {
			fprintf(stderr, "a refusal without a message\n");
			abort();
		}
		st_onnx_free(&m);
		return 0;
	}
	if (m.graph != NULL)
		check_graph(m.graph, data, size);
	st_buf one, two;
	st_buf_init(&one);
	st_buf_init(&two);
	st_onnx_encode(&m, &one);
	st_onnx_model again;
	if (st_onnx_parse(one.data, one.len, &again, err, sizeof err) != 0) {
		fprintf(stderr, "what the writer wrote does not read back: %s\n", err);
		abort();
	}
	st_onnx_encode(&again, &two);
	if (one.len != two.len || (one.len > 0 && memcmp(one.data, two.data, one.len) != 0)) {
		fprintf(stderr, "the encoding is not stable: %zu then %zu bytes\n", one.len, two.len);
		abort();
	}
	st_onnx_free(&again);
	st_onnx_free(&m);
	st_buf_free(&one);
	st_buf_free(&two);
	return 0;
}
