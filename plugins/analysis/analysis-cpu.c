/* The analysis collection's CPU implementations: plain float32 NCHW loops.
 * Runtime options are read from L->params on every run, never cached. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"

#define NCHW ST_LAYOUT_BIT(ST_LAYOUT_NCHW)
#define FP32 ST_DTYPE_BIT(ST_DTYPE_FLOAT32)

static int64_t
count_of(const st_shape *s)
{
	int64_t n = 1;
	for (int k = 0; k < s->rank; k++)
		n *= s->dims[k];
	return n;
}

/* The host converts to what an implementation declares (float32 NCHW), so
 * this only guards that contract. */
static int
require_fp32(st_exec_layer *L, const st_host_api *api)
{
	for (int i = 0; i < L->n_inputs; i++) {
		if (L->inputs[i].data != NULL && L->inputs[i].shape.dtype != ST_DTYPE_FLOAT32) {
			api->fail(L, "%s runs on float32 tensors, but input %d is %s", L->desc->name, i,
			          api->dtype_name(L->inputs[i].shape.dtype));
			return -1;
		}
	}
	return 0;
}

static int
plain_prepare(st_exec_layer *L, const st_host_api *api)
{
	return require_fp32(L, api);
}

/* Smallest and largest finite value of x[0..n), or false when none is finite. */
static bool
finite_range(const float *x, int64_t n, double *lo, double *hi)
{
	bool any = false;
	for (int64_t i = 0; i < n; i++) {
		if (!isfinite(x[i]))
			continue;
		if (!any || x[i] < *lo)
			*lo = x[i];
		if (!any || x[i] > *hi)
			*hi = x[i];
		any = true;
	}
	return any;
}

/* Mean and population standard deviation of the finite values (two passes,
 * in double); returns how many there were. */
static int64_t
finite_moments(const float *x, int64_t n, double *mean, double *std)
{
	double sum = 0;
	int64_t count = 0;
	for (int64_t i = 0; i < n; i++) {
		if (isfinite(x[i])) {
			sum += x[i];
			count++;
		}
	}
	*mean = count ? sum / (double)count : 0;
	double dev = 0;
	for (int64_t i = 0; i < n; i++) {
		if (isfinite(x[i]))
			dev += (x[i] - *mean) * (x[i] - *mean);
	}
	*std = count ? sqrt(dev / (double)count) : 0;
	return count;
}

/* ---- channel_select ---- */

static int
select_run(st_exec_layer *L, const st_exec_ctx *ctx)
{
	const st_tensor *in = &L->inputs[0];
	st_tensor *out = &L->outputs[0];
	int64_t batch = in->shape.dims[0], channels = in->shape.dims[1];
	int64_t count = out->shape.dims[1];
	int64_t inner = channels ? count_of(&in->shape) / (batch * channels) : 0;
	int64_t asked = L->params[SELECT_FIRST].i;
	/* A runtime option cannot refuse the plan, so a first channel past the
	 * end moves back to the last range that fits, and says so. */
	int64_t first = asked > channels - count ? channels - count : asked;
	if (first < 0)
		first = 0;
	for (int64_t n = 0; n < batch; n++)
		memcpy((float *)out->data + n * count * inner,
		       (const float *)in->data + (n * channels + first) * inner,
		       sizeof(float) * (size_t)(count * inner));
	if (first != asked)
		ctx->api->status(L, ST_SEVERITY_WARNING, "first %lld is past the end: channels %lld to %lld of %lld",
		                 (long long)asked, (long long)first, (long long)(first + count - 1),
		                 (long long)channels);
	else
		ctx->api->status(L, ST_SEVERITY_INFO, "channels %lld to %lld of %lld", (long long)first,
		                 (long long)(first + count - 1), (long long)channels);
	return 0;
}

/* ---- normalize ---- */

static int
normalize_run(st_exec_layer *L, const st_exec_ctx *ctx)
{
	(void)ctx;
	const st_tensor *in = &L->inputs[0];
	st_tensor *out = &L->outputs[0];
	const float *x = in->data;
	float *y = out->data;
	int64_t n = count_of(&in->shape);
	int64_t mode = L->params[NORMALIZE_MODE].i;
	if (mode == NORMALIZE_SCALE_SHIFT) {
		double scale = L->params[NORMALIZE_SCALE].f, shift = L->params[NORMALIZE_SHIFT].f;
		for (int64_t i = 0; i < n; i++)
			y[i] = (float)(x[i] * scale + shift);
		return 0;
	}
	/* Groups of consecutive elements that share statistics: each channel of
	 * each sample, or each sample; a tensor without a batch axis is one group. */
	int64_t groups = 1;
	if (in->shape.rank >= 2)
		groups = in->shape.dims[0] * (L->params[NORMALIZE_OVER].i == OVER_CHANNEL ? in->shape.dims[1] : 1);
	int64_t size = groups ? n / groups : 0;
	for (int64_t g = 0; g < groups; g++) {
		const float *gx = x + g * size;
		float *gy = y + g * size;
		double offset, divisor;
		if (mode == NORMALIZE_MIN_MAX) {
			double lo = 0, hi = 0;
			finite_range(gx, size, &lo, &hi);
			offset = lo;
			divisor = hi - lo;
		} else {
			finite_moments(gx, size, &offset, &divisor);
		}
		/* A constant group has no spread to divide by: it becomes 0. */
		for (int64_t i = 0; i < size; i++)
			gy[i] = divisor > 0 ? (float)((gx[i] - offset) / divisor) : (float)(gx[i] - offset) * 0.0f;
	}
	return 0;
}

/* ---- threshold ---- */

static int
threshold_run(st_exec_layer *L, const st_exec_ctx *ctx)
{
	(void)ctx;
	const float *x = L->inputs[0].data;
	float *y = L->outputs[0].data;
	int64_t n = count_of(&L->inputs[0].shape);
	double level = L->params[THRESHOLD_LEVEL].f;
	bool binary = L->params[THRESHOLD_MODE].i == THRESHOLD_BINARY;
	bool invert = L->params[THRESHOLD_INVERT].b;
	for (int64_t i = 0; i < n; i++) {
		/* NaN is never above the level, so it fails the plain test. */
		bool pass = (x[i] > level) != invert;
		y[i] = binary ? (pass ? 1.0f : 0.0f) : (pass ? x[i] : 0.0f);
	}
	return 0;
}

/* ---- colormap ---- */

static int
colormap_run(st_exec_layer *L, const st_exec_ctx *ctx)
{
	const st_tensor *in = &L->inputs[0];
	const float *x = in->data;
	float *y = L->outputs[0].data;
	int64_t batch = in->shape.dims[0];
	int64_t inner = batch ? count_of(&in->shape) / batch : 0;
	int map = (int)L->params[COLORMAP_MAP].i;
	for (int64_t n = 0; n < batch; n++) {
		const float *sx = x + n * inner;
		float *sy = y + n * 3 * inner;
		double low = L->params[COLORMAP_LOW].f, high = L->params[COLORMAP_HIGH].f;
		if (L->params[COLORMAP_AUTO_RANGE].b && finite_range(sx, inner, &low, &high) &&
		    map == ST_HOST_COLORMAP_DIVERGING) {
			/* Zero stays in the middle of a diverging map. */
			double m = fabs(low) > fabs(high) ? fabs(low) : fabs(high);
			low = -m;
			high = m;
		}
		for (int64_t i = 0; i < inner; i++) {
			/* Without a range every value takes the middle colour. */
			double t = high != low ? (sx[i] - low) / (high - low) : 0.5;
			float rgb[3];
			ctx->api->colormap_rgb(map, t, rgb);
			for (int k = 0; k < 3; k++)
				sy[k * inner + i] = rgb[k];
		}
	}
	return 0;
}

/* ---- difference ---- */

static int
difference_run(st_exec_layer *L, const st_exec_ctx *ctx)
{
	(void)ctx;
	const float *a = L->inputs[0].data, *b = L->inputs[1].data;
	float *y = L->outputs[0].data;
	int64_t n = count_of(&L->outputs[0].shape);
	int64_t mode = L->params[DIFFERENCE_MODE].i;
	for (int64_t i = 0; i < n; i++) {
		float d = a[i] - b[i];
		y[i] = mode == DIFFERENCE_ABS ? fabsf(d) : mode == DIFFERENCE_SQUARED ? d * d : d;
	}
	return 0;
}

/* ---- statistics ---- */

/* What statistics keeps across runs until reset (L->state). */
typedef struct statistics_state {
	long long runs;
	bool any;            /* a finite value was seen since the reset */
	double lo, hi;       /* the smallest and largest since the reset */
	long long nan, inf;  /* counted since the reset */
} statistics_state;

static int
statistics_prepare(st_exec_layer *L, const st_host_api *api)
{
	if (require_fp32(L, api) != 0)
		return -1;
	/* Kept across prepares (a new input size) so counts survive them. */
	if (L->state == NULL) {
		L->state = calloc(1, sizeof(statistics_state));
		if (L->state == NULL) {
			api->fail(L, "out of memory");
			return -1;
		}
	}
	return 0;
}

static void
statistics_release(st_exec_layer *L)
{
	free(L->state);
	L->state = NULL;
}

static int
statistics_run(st_exec_layer *L, const st_exec_ctx *ctx)
{
	const float *x = L->inputs[0].data;
	float *y = L->outputs[0].data;
	int64_t n = count_of(&L->inputs[0].shape);
	if (y != x)
		memcpy(y, x, sizeof(float) * (size_t)n);
	statistics_state *st = L->state;
	if (L->params[STATISTICS_RESET].b)
		memset(st, 0, sizeof *st);
	long long nan = 0, inf = 0;
	for (int64_t i = 0; i < n; i++) {
		nan += isnan(x[i]) != 0;
		inf += isinf(x[i]) != 0;
	}
	double lo = 0, hi = 0, mean, std;
	bool any = finite_range(x, n, &lo, &hi);
	finite_moments(x, n, &mean, &std);
	st->runs++;
	st->nan += nan;
	st->inf += inf;
	if (any) {
		st->lo = st->any && st->lo < lo ? st->lo : lo;
		st->hi = st->any && st->hi > hi ? st->hi : hi;
		st->any = true;
	}
	st_severity sev = nan || inf ? ST_SEVERITY_WARNING : ST_SEVERITY_INFO;
	if (!any)
		ctx->api->status(L, sev, "no finite values; NaN %lld Inf %lld; runs %lld", nan, inf, st->runs);
	else
		ctx->api->status(L, sev,
		                 "min %.4g max %.4g mean %.4g std %.4g NaN %lld Inf %lld; runs %lld: min %.4g "
		                 "max %.4g NaN %lld Inf %lld",
		                 lo, hi, mean, std, nan, inf, st->runs, st->lo, st->hi, st->nan, st->inf);
	return 0;
}

const st_impl_desc analysis_impls[] = {
	{ .layer = "channel_select", .backend = "cpu", .layouts = NCHW, .dtypes = FP32,
	  .prepare = plain_prepare, .run = select_run },
	{ .layer = "normalize", .backend = "cpu", .layouts = NCHW, .dtypes = FP32,
	  .prepare = plain_prepare, .run = normalize_run },
	{ .layer = "threshold", .backend = "cpu", .layouts = NCHW, .dtypes = FP32,
	  .prepare = plain_prepare, .run = threshold_run },
	{ .layer = "colormap", .backend = "cpu", .layouts = NCHW, .dtypes = FP32,
	  .prepare = plain_prepare, .run = colormap_run },
	{ .layer = "difference", .backend = "cpu", .layouts = NCHW, .dtypes = FP32,
	  .prepare = plain_prepare, .run = difference_run },
	{ .layer = "statistics", .backend = "cpu", .layouts = NCHW, .dtypes = FP32,
	  .prepare = statistics_prepare, .run = statistics_run, .release = statistics_release },
};
const int analysis_impl_count = ANALYSIS_COUNT(analysis_impls);
