/* Helpers shared by the unit tests. */
#include "config.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"

const st_registry *
test_registry(void)
{
	static st_registry *r;
	if (r == NULL) {
		r = st_registry_new();
		st_registry_load_default(r);
		cr_assert(st_registry_find_layer(r, "input") != NULL,
		          "the std plugin did not load from STRATA_PLUGIN_PATH=%s",
		          getenv("STRATA_PLUGIN_PATH") ? getenv("STRATA_PLUGIN_PATH") : "(unset)");
	}
	return r;
}

st_shape
test_shape(const char *text)
{
	st_shape s = { .dtype = ST_DTYPE_FLOAT32 };
	const char *colon = strchr(text, ':');
	if (colon != NULL) {
		char dt[32];
		snprintf(dt, sizeof dt, "%.*s", (int)(colon - text), text);
		int t = st_dtype_parse(dt);
		cr_assert(t >= 0, "bad dtype in test shape '%s'", text);
		s.dtype = (st_dtype)t;
		text = colon + 1;
	}
	if (strcmp(text, "scalar") == 0)
		return s;
	const char *p = text;
	while (*p) {
		char *end;
		long long v = strtoll(p, &end, 10);
		cr_assert(end != p && s.rank < ST_MAX_RANK, "bad test shape '%s'", text);
		s.dims[s.rank++] = v;
		p = end;
		if (*p == 'x')
			p++;
	}
	return s;
}

void
test_shape_text(const st_shape *s, char *buf, size_t size)
{
	char dims[100];
	st_shape_format(s, dims, sizeof dims);
	if (s->dtype == ST_DTYPE_FLOAT32)
		snprintf(buf, size, "%s", dims);
	else
		snprintf(buf, size, "%s:%s", st_dtype_name(s->dtype), dims);
}

/* Parameters of type from "name=value name=value" (command syntax); free
 * with st_params_clear. */
static void
parse_params(const st_layer_type *type, const char *type_name, const char *params, st_params *p)
{
	const st_layer_desc *d = type->desc;
	st_params_init(p, d->params, d->n_params, type->defaults);
	char *copy = strdup(params ? params : "");
	char *save = NULL;
	for (char *tok = strtok_r(copy, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(tok, '=');
		cr_assert(eq != NULL, "test params must be NAME=VALUE, got '%s'", tok);
		*eq = '\0';
		int idx = st_params_find(d->params, d->n_params, tok);
		cr_assert(idx >= 0, "%s has no parameter '%s'", type_name, tok);
		char err[256];
		st_value v;
		cr_assert(st_value_from_text(&d->params[idx], eq + 1, &v, err, sizeof err) == 0,
		          "parameter %s=%s: %s", tok, eq + 1, err);
		st_value_clear(&p->values[idx]);
		p->values[idx] = v;
	}
	free(copy);
}

int
test_reshape(const char *type_name, const char *params, int n_inputs, const char *const *inputs,
             test_result *out)
{
	memset(out, 0, sizeof *out);
	const st_layer_type *type = st_registry_find_layer(test_registry(), type_name);
	cr_assert(type != NULL, "no layer type '%s'", type_name);
	st_params p;
	parse_params(type, type_name, params, &p);
	st_shape shapes[64];
	const st_shape *ptrs[64];
	cr_assert(n_inputs <= 64);
	for (int i = 0; i < n_inputs; i++) {
		if (inputs[i] == NULL) {
			ptrs[i] = NULL;
		} else {
			shapes[i] = test_shape(inputs[i]);
			ptrs[i] = &shapes[i];
		}
	}
	st_message *msgs;
	int n_msgs;
	out->rc = st_reshape_run(type, "layer", p.values, n_inputs, ptrs, out->outputs, &out->r, &msgs,
	                         &n_msgs);
	out->n_outputs = out->r.n_outputs;
	size_t used = 0;
	for (int i = 0; i < n_msgs; i++) {
		const char *sev = msgs[i].severity == ST_SEVERITY_ERROR     ? "error"
		                  : msgs[i].severity == ST_SEVERITY_WARNING ? "warning"
		                                                            : "info";
		int w = snprintf(out->messages + used, sizeof out->messages - used, "%s: %s\n", sev,
		                 msgs[i].text);
		if (w > 0 && used + (size_t)w < sizeof out->messages)
			used += (size_t)w;
		free(msgs[i].text);
	}
	free(msgs);
	st_params_clear(&p);
	return out->rc;
}

st_session *
test_session(const char *script)
{
	st_graph *g = st_graph_new(test_registry());
	st_session *s = st_session_new(g, NULL);
	st_diag d;
	st_diag_init(&d);
	int rc = st_session_run_script(s, script, "test", &d);
	if (rc != 0) {
		st_diag_print(&d, stderr);
	}
	cr_assert(rc == 0, "test script failed: %s", d.count ? d.items[0].text : "?");
	st_diag_free(&d);
	return s;
}

int
test_run(st_session *s, const char *script)
{
	st_diag d;
	st_diag_init(&d);
	int rc = st_session_run_script(s, script, "test", &d);
	st_diag_free(&d);
	return rc;
}

/* A thread pool of one: the range runs on the calling thread. */
static void
serial_for(const st_exec_ctx *ctx, int64_t n, int64_t grain, st_range_fn fn, void *arg)
{
	(void)ctx;
	(void)grain;
	if (n > 0)
		fn(arg, 0, n);
}

int
test_layer_run(const char *type_name, const char *params, int n_inputs, const st_tensor *inputs,
               int n_weights, const st_tensor *weights, test_layer *out)
{
	memset(out, 0, sizeof *out);
	const st_registry *reg = test_registry();
	const st_layer_type *type = st_registry_find_layer(reg, type_name);
	cr_assert(type != NULL, "no layer type '%s'", type_name);
	const st_impl_desc *impl = st_registry_find_impl(reg, type->desc->name, "cpu");
	cr_assert(impl != NULL, "no cpu implementation of '%s'", type_name);
	/* Reshape through the same path as test_reshape, from the tensors' shapes. */
	const st_layer_desc *d = type->desc;
	st_params p;
	parse_params(type, type_name, params, &p);
	const st_shape *shapes[64];
	cr_assert(n_inputs <= 64);
	for (int i = 0; i < n_inputs; i++)
		shapes[i] = inputs[i].data ? &inputs[i].shape : NULL;
	st_message *msgs;
	int n_msgs;
	st_shape out_shapes[ST_MAX_OUTPUTS];
	out->rc = st_reshape_run(type, "layer", p.values, n_inputs, shapes, out_shapes, &out->r, &msgs,
	                         &n_msgs);
	size_t used = 0;
	for (int i = 0; i < n_msgs; i++) {
		int w = snprintf(out->messages + used, sizeof out->messages - used, "%s: %s\n",
		                 st_severity_name(msgs[i].severity), msgs[i].text);
		if (w > 0 && used + (size_t)w < sizeof out->messages)
			used += (size_t)w;
		free(msgs[i].text);
	}
	free(msgs);
	if (out->rc != 0) {
		st_params_clear(&p);
		return out->rc;
	}
	cr_assert_eq(n_weights, out->r.n_weights, "%s declares %d weights, the test gave %d", type_name,
	             out->r.n_weights, n_weights);
	out->n_outputs = out->r.n_outputs;
	for (int i = 0; i < out->n_outputs; i++) {
		int64_t bytes = st_shape_bytes(&out_shapes[i]);
		cr_assert(bytes >= 0);
		out->outputs[i].shape = out_shapes[i];
		out->outputs[i].layout = ST_LAYOUT_NCHW;
		out->outputs[i].data = aligned_alloc(64, ((size_t)bytes + 63) / 64 * 64 + 64);
		memset(out->outputs[i].data, 0xff, (size_t)bytes); /* NaN-filled: unwritten output shows */
	}
	st_exec_report report = { 0 };
	st_exec_layer L = {
		.name = "layer", .desc = d, .params = p.values, .n_inputs = n_inputs, .inputs = inputs,
		.n_outputs = out->n_outputs, .outputs = out->outputs, .n_weights = n_weights,
		.weights = weights, .host_private = &report,
	};
	int rc = impl->prepare ? impl->prepare(&L, &st_host) : 0;
	void *scratch = NULL;
	if (rc == 0) {
		scratch = aligned_alloc(64, (L.scratch_bytes + 63) / 64 * 64 + 64);
		L.scratch = scratch;
		st_exec_ctx ctx = { .api = &st_host, .n_threads = 1, .parallel_for = serial_for };
		rc = impl->run(&L, &ctx);
	}
	if (impl->release)
		impl->release(&L);
	free(scratch);
	if (rc != 0) {
		snprintf(out->messages + used, sizeof out->messages - used, "failed: %s\n",
		         report.failed ? report.text : "(no reason given)");
		out->rc = -1;
	}
	st_params_clear(&p);
	return out->rc;
}

void
test_layer_free(test_layer *out)
{
	for (int i = 0; i < out->n_outputs; i++)
		free(out->outputs[i].data);
	memset(out, 0, sizeof *out);
}

bool
test_allclose(const float *a, const float *b, int64_t n, double rtol, char *why, size_t size)
{
	return test_allclose_scaled(a, b, n, rtol, test_max_abs(b, n), why, size);
}

double
test_max_abs(const float *b, int64_t n)
{
	double max_b = 0;
	for (int64_t i = 0; i < n; i++)
		max_b = fmax(max_b, fabs((double)b[i]));
	return max_b;
}

bool
test_allclose_scaled(const float *a, const float *b, int64_t n, double rtol, double scale, char *why, size_t size)
{
	double atol = rtol * scale, worst = -1;
	int64_t at = -1;
	for (int64_t i = 0; i < n; i++) {
		double diff = fabs((double)a[i] - (double)b[i]);
		double excess = diff - (atol + rtol * fabs((double)b[i]));
		if (isnan(a[i]) != isnan(b[i]) || excess > 0) {
			if (isnan(a[i]) || isnan(b[i]) || excess > worst) {
				worst = isnan(a[i]) || isnan(b[i]) ? INFINITY : excess;
				at = i;
			}
		}
	}
	if (at < 0)
		return true;
	snprintf(why, size, "element %lld: got %.9g, expected %.9g (rtol %g, atol %g, %lld elements)",
	         (long long)at, a[at], b[at], rtol, atol, (long long)n);
	return false;
}

char *
test_temp_dir(const char *what)
{
	const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char *dir = st_xasprintf("%s/strata-%s-XXXXXX", base, what);
	cr_assert_not_null(mkdtemp(dir));
	return dir;
}

void
test_remove_dir(char *dir)
{
	char *cmd = st_xasprintf("rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
	free(cmd);
	free(dir);
}

uint64_t
test_rng_next(test_rng *r)
{
	r->s ^= r->s << 13;
	r->s ^= r->s >> 7;
	r->s ^= r->s << 17;
	return r->s;
}

int64_t
test_pick(test_rng *r, int64_t lo, int64_t hi)
{
	return lo + (int64_t)(test_rng_next(r) % (uint64_t)(hi - lo + 1));
}

float *
test_random_floats(test_rng *r, int64_t n)
{
	float *v = malloc((size_t)(n ? n : 1) * sizeof *v);
	cr_assert(v != NULL);
	for (int64_t i = 0; i < n; i++)
		v[i] = (float)((double)(test_rng_next(r) >> 11) / 9007199254740992.0 * 2.0 - 1.0);
	return v;
}

float *
test_nan_floats(int64_t n)
{
	float *v = malloc((size_t)(n ? n : 1) * sizeof *v);
	cr_assert(v != NULL);
	for (int64_t i = 0; i < n; i++)
		v[i] = NAN;
	return v;
}

/* How many pieces a pool of ctx->n_threads cuts [0, n) into. */
static int64_t
pieces_of(const st_exec_ctx *ctx, int64_t n, int64_t grain)
{
	int64_t parts = ctx->n_threads;
	if (grain < 1)
		grain = 1;
	if (parts > n / grain)
		parts = n / grain;
	return parts < 1 ? 1 : parts;
}

void
test_pieces_run(const st_exec_ctx *ctx, int64_t n, int64_t grain, st_range_fn fn, void *arg)
{
	int64_t parts = pieces_of(ctx, n, grain);
	for (int64_t p = parts - 1; p >= 0; p--)
		fn(arg, p * n / parts, (p + 1) * n / parts);
}

typedef struct piece {
	st_range_fn fn;
	void *arg;
	int64_t begin, end;
} piece;

static void *
piece_main(void *arg)
{
	piece *p = arg;
	p->fn(p->arg, p->begin, p->end);
	return NULL;
}

void
test_threads_run(const st_exec_ctx *ctx, int64_t n, int64_t grain, st_range_fn fn, void *arg)
{
	int64_t parts = pieces_of(ctx, n, grain);
	piece pieces[16];
	pthread_t threads[16];
	cr_assert_leq(parts, 16);
	for (int64_t p = 0; p < parts; p++) {
		pieces[p] = (piece){ fn, arg, p * n / parts, (p + 1) * n / parts };
		if (p > 0)
			cr_assert_eq(pthread_create(&threads[p], NULL, piece_main, &pieces[p]), 0);
	}
	piece_main(&pieces[0]);
	for (int64_t p = 1; p < parts; p++)
		pthread_join(threads[p], NULL);
}

unsigned char *
test_scratch_new(size_t bytes)
{
	unsigned char *s = aligned_alloc(64, (bytes + 63) / 64 * 64 + 64);
	cr_assert(s != NULL);
	memset(s, 0x5a, bytes);
	memset(s + bytes, 0xa5, 64);
	return s;
}

void
test_scratch_free(unsigned char *s, size_t bytes, const char *what)
{
	for (int i = 0; i < 64; i++)
		cr_assert_eq(s[bytes + i], 0xa5, "%s wrote past its %zu bytes", what, bytes);
	free(s);
}
