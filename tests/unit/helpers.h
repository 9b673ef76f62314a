/* Helpers shared by the unit tests. */
#ifndef TEST_HELPERS_H
#define TEST_HELPERS_H

#include <criterion/criterion.h>

#include "st-core.h"

/* The registry with the std plugin loaded from $STRATA_PLUGIN_PATH; one per
 * test process, never freed. */
const st_registry *test_registry(void);

/* Parses "1x3x224x224", "scalar", or with a dtype prefix "float16:1x3",
 * "int64:5". Aborts the test on bad text. */
st_shape test_shape(const char *text);

/* The shape as text in the same syntax, dtype prefix only when not float32. */
void test_shape_text(const st_shape *s, char *buf, size_t size);

typedef struct test_result {
	int rc;                           /* 0: outputs valid */
	int n_outputs;
	st_shape outputs[ST_MAX_OUTPUTS];
	st_reshape r;                     /* weights, flops */
	char messages[4096];              /* "error: text\n" lines */
} test_result;

/*
 * Runs the reshape of a std layer type the way the type checker does.
 * params: "num_output=16 kernel=3x3 padding=same", values in command syntax
 * (no spaces inside a value). inputs: n_inputs shape texts; NULL means the
 * terminal is not linked. Returns out->rc.
 */
int test_reshape(const char *type, const char *params, int n_inputs, const char *const *inputs,
                 test_result *out);

/* Asserts that shape s reads as text (as test_shape would parse it). */
#define assert_shape(s, text)                                                               \
	do {                                                                                \
		char got_[128];                                                             \
		test_shape_text(&(s), got_, sizeof got_);                                   \
		cr_assert_str_eq(got_, (text), "shape %s, expected %s", got_, (text));      \
	} while (0)

typedef struct test_layer {
	int rc;                               /* 0: the layer ran */
	int n_outputs;
	st_tensor outputs[ST_MAX_OUTPUTS];    /* NCHW, of the dtype reshape gave */
	st_reshape r;                         /* declared weights, flops */
	char messages[4096];                  /* reshape messages, then the failure if any */
} test_layer;

/*
 * Runs one layer of a std type through its CPU implementation, outside any
 * plan, on one thread: reshape, prepare, run. params as for test_reshape.
 * inputs are NCHW tensors (data NULL: unlinked); weights follow the order
 * reshape declares them (n_weights 0 and weights NULL when it declares none;
 * a NULL data pointer means an optional weight without a file). The attached
 * activation, if any, is not applied. Free with test_layer_free.
 */
int test_layer_run(const char *type, const char *params, int n_inputs, const st_tensor *inputs,
                   int n_weights, const st_tensor *weights, test_layer *out);
void test_layer_free(test_layer *out);

/* |a - b| <= atol + rtol * |b| element by element, with atol = rtol * max|b|
 * (ARCHITECTURE.md); on failure writes the worst element into why. */
bool test_allclose(const float *a, const float *b, int64_t n, double rtol, char *why, size_t size);
/* The same with atol = rtol * scale: for results clamped after the sums,
 * whose error comes from the scale of the unclamped values. */
bool test_allclose_scaled(const float *a, const float *b, int64_t n, double rtol, double scale, char *why,
                          size_t size);
/* max |b[i]|. */
double test_max_abs(const float *b, int64_t n);

/* Seeded random data for the kernel tests: a xorshift64 state (any seed
 * but 0). */
typedef struct test_rng {
	uint64_t s;
} test_rng;
uint64_t test_rng_next(test_rng *r);
/* An integer in [lo, hi]. */
int64_t test_pick(test_rng *r, int64_t lo, int64_t hi);
/* n values in [-1, 1); caller frees. */
float *test_random_floats(test_rng *r, int64_t n);
/* n NaNs, so that an output a kernel leaves unwritten shows; caller frees. */
float *test_nan_floats(int64_t n);

/* 64-byte aligned scratch of `bytes` (filled with 0x5a) followed by 64 guard
 * bytes; test_scratch_free asserts that the guard came back untouched
 * ("WHAT wrote past its N bytes") and frees it. */
unsigned char *test_scratch_new(size_t bytes);
void test_scratch_free(unsigned char *s, size_t bytes, const char *what);

/* st_exec_ctx parallel_for functions that cut [0, n) as a pool of
 * ctx->n_threads threads would (pieces of at least grain items): the first
 * runs the pieces one after another, last first, on the calling thread; the
 * second on threads of their own (at most 16). */
void test_pieces_run(const st_exec_ctx *ctx, int64_t n, int64_t grain, st_range_fn fn, void *arg);
void test_threads_run(const st_exec_ctx *ctx, int64_t n, int64_t grain, st_range_fn fn, void *arg);

/* A fresh folder under $TMPDIR named strata-<what>-XXXXXX; caller removes it
 * (and frees the name) with test_remove_dir. */
char *test_temp_dir(const char *what);
void test_remove_dir(char *dir);

/* A session over a new empty graph, after running script (which must succeed). */
st_session *test_session(const char *script);

/* Runs a script in s; returns its status (failures are often what a test wants). */
int test_run(st_session *s, const char *script);

#endif
