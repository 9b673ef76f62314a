/* libFuzzer target for the report reader: parse, and for an accepted report
 * check that its canonical text reads back and writes out the same. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "st-report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	st_diag d;
	st_diag_init(&d);
	st_report r;
	if (st_report_parse((const char *)data, size, "fuzz", &r, &d) != 0) {
		if (d.errors == 0) {
			fprintf(stderr, "a refused report gave no error\n");
			abort();
		}
		st_report_free(&r);
		st_diag_free(&d);
		return 0;
	}
	char *first = st_report_serialize(&r);
	st_report again;
	st_diag_free(&d);
	st_diag_init(&d);
	if (st_report_parse(first, strlen(first), "canonical", &again, &d) != 0) {
		fprintf(stderr, "the canonical text of an accepted report is refused:\n");
		st_diag_print(&d, stderr);
		fputs(first, stderr);
		abort();
	}
	char *second = st_report_serialize(&again);
	if (strcmp(first, second) != 0) {
		fprintf(stderr, "the canonical text does not write back the same:\n%s\n----\n%s", first, second);
		abort();
	}
	free(first);
	free(second);
	st_report_free(&r);
	st_report_free(&again);
	st_diag_free(&d);
	return 0;
}
