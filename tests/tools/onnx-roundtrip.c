/* Reads ONNX files named one per line on stdin, writes each back through
 * st_onnx_encode and compares the bytes, and prints one summary line per
 * model (the same lines tests/tools/onnx-summary.py prints from Python's
 * onnx):
 *
 *   PATH ir=N opsets=DOMAIN:VERSION,... ops=OP,OP,...
 *
 * then "N of N models decode, N re-encode byte for byte" on stderr. Exits
 * 0 when every model decodes and re-encodes identically, 1 otherwise. */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "st-onnx.h"

static void
print_str(st_onnx_str s)
{
	if (s.data != NULL)
		fwrite(s.data, 1, s.len, stdout);
}

int
main(void)
{
	char line[4096];
	int total = 0, decoded = 0, same = 0;
	while (fgets(line, sizeof line, stdin) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		if (line[0] == '\0')
			continue;
		total++;
		st_onnx_model m;
		char err[1024];
		if (st_onnx_open(line, &m, err, sizeof err) != 0) {
			fprintf(stderr, "onnx-roundtrip: %s\n", err);
			st_onnx_free(&m);
			continue;
		}
		decoded++;
		size_t len = 0;
		char *file = st_read_file(line, &len);
		st_buf b;
		st_buf_init(&b);
		st_onnx_encode(&m, &b);
		if (file != NULL && b.len == len && memcmp(b.data != NULL ? b.data : "", file, len) == 0) {
			same++;
		} else {
			size_t at = 0;
			while (file != NULL && at < len && at < b.len && b.data[at] == file[at])
				at++;
			fprintf(stderr, "onnx-roundtrip: %s: re-encoded %zu bytes differ from the file's %zu at byte %zu\n",
			        line, b.len, len, at);
		}
		st_buf_free(&b);
		free(file);
		printf("%s ir=%" PRId64 " opsets=", line, m.has_ir_version ? m.ir_version : 0);
		for (size_t i = 0; i < m.n_opsets; i++) {
			printf("%s", i ? "," : "");
			print_str(m.opsets[i].domain);
			printf(":%" PRId64, m.opsets[i].version);
		}
		printf(" ops=");
		for (size_t i = 0; m.graph != NULL && i < m.graph->n_nodes; i++) {
			const st_onnx_node *n = &m.graph->nodes[i];
			printf("%s", i ? "," : "");
			if (n->domain.len > 0) {
				print_str(n->domain);
				printf("::");
			}
			print_str(n->op_type);
		}
		printf("\n");
		st_onnx_free(&m);
	}
	fprintf(stderr, "%d of %d models decode, %d re-encode byte for byte\n", decoded, total, same);
	return decoded == total && same == total ? 0 : 1;
}
