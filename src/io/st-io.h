/* The io module: NumPy .npy files, weights folders and input images. */
#ifndef ST_IO_H
#define ST_IO_H

#include <stdbool.h>
#include <stddef.h>

#include "st-core.h"

/* Element types a .npy file may hold (a superset of st_dtype). */
typedef enum st_npy_type {
	ST_NPY_F2,
	ST_NPY_F4,
	ST_NPY_F8,
	ST_NPY_I1,
	ST_NPY_U1,
	ST_NPY_I2,
	ST_NPY_U2,
	ST_NPY_I4,
	ST_NPY_U4,
	ST_NPY_I8,
	ST_NPY_U8,
	ST_NPY_B1
} st_npy_type;

/* An array read from a .npy file. data points into a read-only mapping of
 * the file, or into memory of its own when it was converted; free with
 * st_npy_free. */
typedef struct st_npy {
	st_npy_type type;   /* what data holds */
	int rank;
	int64_t dims[ST_MAX_RANK];
	int64_t count;      /* elements */
	const void *data;
	size_t bytes;       /* of data */
	int version;        /* format major version: 1, 2 or 3 */
	void *map;          /* the file's mapping, or NULL */
	size_t map_len;
	void *owned;        /* converted data, or NULL */
} st_npy;

/* io-npy.c */
const char *st_npy_type_name(st_npy_type t); /* "<f4", "|u1", ... */
/* Parses .npy bytes in memory (data then points into buf, which must outlive
 * out). Returns 0, or -1 with a reason in err. */
int st_npy_parse(const void *buf, size_t len, st_npy *out, char *err, size_t err_size);
/* Maps and parses a .npy file. */
int st_npy_read(const char *path, st_npy *out, char *err, size_t err_size);
/* Converts the array to dtype in place (float32, float16, int64, int32,
 * int8, uint8, bool), copying only when its type differs. Refuses values the
 * target cannot hold exactly (integers out of range, fractions or NaN to an
 * integer type). */
int st_npy_convert(st_npy *a, st_dtype dtype, char *err, size_t err_size);
void st_npy_free(st_npy *a);
/* The st_dtype that a .npy type is, or -1 (float64, 16-bit and unsigned
 * 32/64-bit integers have none). */
int st_npy_type_dtype(st_npy_type t);
/* Writes data of shape (dtype as in shape) as a version 1.0 .npy file,
 * atomically. */
int st_npy_write(const char *path, const st_shape *shape, const void *data, char *err,
                 size_t err_size);
/* The same into memory; caller frees *out. */
int st_npy_encode(const st_shape *shape, const void *data, char **out, size_t *len, char *err,
                  size_t err_size);

#endif
