/* Channel grids: a layer's output (or a weight tensor) drawn as one small
 * picture per channel, laid out in a grid, with colour maps and per-channel
 * statistics; the channel inspector and `strata inspect` draw with it. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "st-io.h"

/* ---- colour maps ---- */

/* Stops of a map, evenly spaced from 0 to 1, linearly interpolated. */
typedef struct colormap_def {
	const char *name;
	int n;
	float stops[9][3];
} colormap_def;

static const colormap_def colormaps[ST_COLORMAP_COUNT] = {
	[ST_COLORMAP_GRAY] = { "gray", 2, { { 0, 0, 0 }, { 1, 1, 1 } } },
	/* Dark violet through blue and green to yellow, brightness rising
	 * evenly: readable in grey too. */
	[ST_COLORMAP_VIRIDIS] = { "viridis",
	                          9,
	                          { { 0.267f, 0.005f, 0.329f },
	                            { 0.283f, 0.141f, 0.458f },
	                            { 0.254f, 0.265f, 0.530f },
	                            { 0.207f, 0.372f, 0.553f },
	                            { 0.164f, 0.471f, 0.558f },
	                            { 0.128f, 0.567f, 0.551f },
	                            { 0.208f, 0.719f, 0.473f },
	                            { 0.478f, 0.821f, 0.318f },
	                            { 0.993f, 0.906f, 0.144f } } },
	/* Black, red, orange, yellow, white. */
	[ST_COLORMAP_HEAT] = { "heat",
	                       5,
	                       { { 0, 0, 0 }, { 0.55f, 0.05f, 0.02f }, { 0.9f, 0.35f, 0.0f }, { 1.0f, 0.8f, 0.1f },
	                         { 1, 1, 1 } } },
	/* Blue below zero, light grey at zero, red above. */
	[ST_COLORMAP_DIVERGING] = { "diverging",
	                            3,
	                            { { 0.230f, 0.299f, 0.754f }, { 0.865f, 0.865f, 0.865f }, { 0.706f, 0.016f, 0.150f } } },
};

const char *
st_colormap_name(st_colormap m)
{
	return (unsigned)m < ST_COLORMAP_COUNT ? colormaps[m].name : "invalid";
}

int
st_colormap_find(const char *name)
{
	for (int m = 0; m < ST_COLORMAP_COUNT; m++) {
		if (strcmp(colormaps[m].name, name) == 0)
			return m;
	}
	return -1;
}

void
st_colormap_rgb(st_colormap m, double t, float rgb[3])
{
	const colormap_def *c = &colormaps[(unsigned)m < ST_COLORMAP_COUNT ? m : ST_COLORMAP_GRAY];
	if (!(t > 0))
		t = 0; /* NaN too */
	if (t > 1)
		t = 1;
	double x = t * (c->n - 1);
	int i = (int)x;
	if (i >= c->n - 1)
		i = c->n - 2;
	double f = x - i;
	for (int k = 0; k < 3; k++)
		rgb[k] = (float)(c->stops[i][k] + (c->stops[i + 1][k] - c->stops[i][k]) * f);
}

/* ---- statistics ---- */

void
st_channel_stats_of(const float *v, int64_t n, st_channel_stats *s)
{
	memset(s, 0, sizeof *s);
	s->min = HUGE_VAL;
	s->max = -HUGE_VAL;
	double sum = 0;
	for (int64_t i = 0; i < n; i++) {
		double x = v[i];
		if (isnan(x)) {
			s->nan++;
			continue;
		}
		if (isinf(x)) {
			s->inf++;
			continue;
		}
		s->count++;
		sum += x;
		s->min = x < s->min ? x : s->min;
		s->max = x > s->max ? x : s->max;
	}
	if (s->count == 0) {
		s->min = s->max = 0;
		return;
	}
	s->mean = sum / (double)s->count;
	double squares = 0;
	for (int64_t i = 0; i < n; i++) {
		if (isfinite(v[i]))
			squares += (v[i] - s->mean) * (v[i] - s->mean);
	}
	s->std = sqrt(squares / (double)s->count);
}

/* ---- the grid ---- */

void
st_grid_geometry(const st_shape *shape, int64_t *channels, int64_t *height, int64_t *width)
{
	*channels = *height = *width = 1;
	int r = shape->rank;
	if (r >= 4) {
		/* N x C x H x W (more dimensions fold into the width's rows). */
		*channels = shape->dims[1];
		*height = shape->dims[2];
		*width = 1;
		for (int i = 3; i < r; i++)
			*width *= shape->dims[i];
	} else if (r == 3) {
		*channels = shape->dims[1];
		*width = shape->dims[2];
	} else if (r == 2) {
		*width = shape->dims[1];
	} else if (r == 1) {
		*width = shape->dims[0];
	}
}

/* Columns for count pictures of h x w pixels (gap included) so that the
 * grid comes out about as wide as it is high. */
static int
auto_columns(int64_t count, int64_t h, int64_t w)
{
	double cols = sqrt((double)count * (double)h / (double)w);
	int64_t c = (int64_t)ceil(cols);
	if (c < 1)
		c = 1;
	if (c > count)
		c = count;
	return (int)c;
}

int
st_grid_render(const float *data, const st_shape *shape, int64_t sample, const st_grid_options *opt,
               st_grid *out, char *err, size_t err_size)
{
	memset(out, 0, sizeof *out);
	int64_t channels, h, w;
	st_grid_geometry(shape, &channels, &h, &w);
	int64_t batch = shape->rank >= 2 ? shape->dims[0] : 1;
	if (sample < 0 || sample >= batch) {
		snprintf(err, err_size, "sample %lld is outside the batch of %lld", (long long)sample, (long long)batch);
		return -1;
	}
	int64_t first = opt->first, count = opt->count > 0 ? opt->count : channels;
	if (first < 0 || first >= channels) {
		snprintf(err, err_size, "channel %lld is outside the %lld channels", (long long)first, (long long)channels);
		return -1;
	}
	if (first + count > channels)
		count = channels - first;
	int scale = opt->scale > 0 ? opt->scale : 1, gap = opt->gap >= 0 ? opt->gap : 1;
	int64_t ph = h * scale, pw = w * scale;
	int cols = opt->columns > 0 ? (int)(opt->columns < count ? opt->columns : count)
	                            : auto_columns(count, ph + gap, pw + gap);
	int64_t rows = (count + cols - 1) / cols;
	int64_t gh = rows * ph + (rows + 1) * gap, gw = cols * pw + (cols + 1) * gap;
	if (gh * gw > ((int64_t)1 << 28) || gh > 65535 || gw > 65535) {
		snprintf(err, err_size, "the grid would be %lldx%lld pixels: show fewer channels or a smaller zoom",
		         (long long)gw, (long long)gh);
		return -1;
	}
	const float *base = data + sample * channels * h * w;
	/* The value range: one for every channel shown, or each its own. */
	st_channel_stats all;
	st_channel_stats_of(base + first * h * w, count * h * w, &all);
	float *planes = st_xmalloc(sizeof *planes * (size_t)(3 * gh * gw));
	for (int64_t i = 0; i < 3 * gh * gw; i++)
		planes[i] = 0.18f; /* the gaps */
	for (int64_t c = 0; c < count; c++) {
		const float *v = base + (first + c) * h * w;
		st_channel_stats own;
		const st_channel_stats *s = &all;
		if (!opt->shared_range) {
			st_channel_stats_of(v, h * w, &own);
			s = &own;
		}
		double lo = s->min, hi = s->max;
		if (opt->colormap == ST_COLORMAP_DIVERGING) {
			/* Zero stays in the middle. */
			double m = fabs(lo) > fabs(hi) ? fabs(lo) : fabs(hi);
			lo = -m;
			hi = m;
		}
		int64_t y0 = gap + (c / cols) * (ph + gap), x0 = gap + (c % cols) * (pw + gap);
		for (int64_t y = 0; y < h; y++) {
			for (int64_t x = 0; x < w; x++) {
				double value = v[y * w + x];
				float rgb[3];
				if (isnan(value)) {
					rgb[0] = 1.0f; /* NaN: magenta, outside every map */
					rgb[1] = 0.0f;
					rgb[2] = 1.0f;
				} else {
					double t = hi > lo ? (value - lo) / (hi - lo) : 0.5;
					if (isinf(value))
						t = value > 0 ? 1 : 0;
					st_colormap_rgb(opt->colormap, t, rgb);
				}
				for (int dy = 0; dy < scale; dy++) {
					for (int dx = 0; dx < scale; dx++) {
						int64_t at = (y0 + y * scale + dy) * gw + x0 + x * scale + dx;
						for (int k = 0; k < 3; k++)
							planes[k * gh * gw + at] = rgb[k];
					}
				}
			}
		}
	}
	out->planes = planes;
	out->height = (int)gh;
	out->width = (int)gw;
	out->columns = cols;
	out->rows = (int)rows;
	out->first = first;
	out->count = count;
	out->cell_height = (int)ph;
	out->cell_width = (int)pw;
	out->gap = gap;
	return 0;
}

void
st_grid_free(st_grid *g)
{
	if (g == NULL)
		return;
	free(g->planes);
	memset(g, 0, sizeof *g);
}
