/* libFuzzer target for the .npy reader: parse, convert to every dtype, and
 * check that what Strata writes of an accepted array reads back the same. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "st-io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	st_npy a;
	char err[512];
	if (st_npy_parse(data, size, &a, err, sizeof err) != 0)
		return 0;
	/* The array lies inside the input. */
	if ((const uint8_t *)a.data < data || (const uint8_t *)a.data + a.bytes > data + size) {
		fprintf(stderr, "the data lies outside the input\n");
		abort();
	}
	for (int t = 0; t < ST_DTYPE_COUNT; t++) {
		st_npy b;
		if (st_npy_parse(data, size, &b, err, sizeof err) != 0)
			abort();
		if (st_npy_convert(&b, (st_dtype)t, err, sizeof err) == 0) {
			if (st_npy_type_dtype(b.type) != t || b.bytes != (size_t)b.count * (size_t)st_dtype_size((st_dtype)t)) {
				fprintf(stderr, "a conversion to %s gave %s\n", st_dtype_name((st_dtype)t),
				        st_npy_type_name(b.type));
				abort();
			}
			/* Touch every converted byte so that the sanitizers see them. */
			volatile uint8_t sum = 0;
			for (size_t i = 0; i < b.bytes; i++)
				sum += ((const uint8_t *)b.data)[i];
			(void)sum;
		}
		st_npy_free(&b);
	}
	int dtype = st_npy_type_dtype(a.type);
	if (dtype >= 0) {
		st_shape s = { .dtype = (st_dtype)dtype, .rank = a.rank };
		memcpy(s.dims, a.dims, sizeof s.dims);
		char *buf;
		size_t len;
		if (st_npy_encode(&s, a.data, &buf, &len, err, sizeof err) != 0) {
			fprintf(stderr, "an accepted array does not encode: %s\n", err);
			abort();
		}
		st_npy c;
		if (st_npy_parse(buf, len, &c, err, sizeof err) != 0 || c.type != a.type || c.rank != a.rank ||
		    memcmp(c.dims, a.dims, sizeof c.dims) != 0 || c.bytes != a.bytes ||
		    memcmp(c.data, a.data, a.bytes) != 0) {
			fprintf(stderr, "what Strata wrote does not read back the same\n");
			abort();
		}
		free(buf);
	}
	return 0;
}
