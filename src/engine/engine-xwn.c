/* The figures of XWN layers for the tools that show them (strata xwn, the
 * editor's parameter panel): which layers carry the XWN parameter set,
 * their settings, and what the transform does to their weights, computed
 * with the kernel the XWN collection itself runs (kernels/cpu/k-xwn.c). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "k-xwn.h"
#include "st-engine.h"
#include "st-io.h"

_Static_assert(ST_XWN_MAX_LEVELS == K_XWN_MAX_LEVELS, "the engine's level table must hold the kernel's");

/* The XWN parameter set, by name and kind: any layer type that has all
 * five is XWN-capable, whichever collection registers it. */
enum { SET_TRANSFORM, SET_BIT, SET_MAX_SCALE, SET_PRUNING, SET_PRUN_WEIGHT, SET_COUNT };
static const struct {
	const char *name;
	st_param_kind kind;
} xwn_set[SET_COUNT] = {
	{ "use_transform", ST_PARAM_BOOL }, { "bit", ST_PARAM_INT },         { "max_scale", ST_PARAM_FLOAT },
	{ "use_pruning", ST_PARAM_BOOL },   { "prun_weight", ST_PARAM_FLOAT },
};

/* Layer types whose weights are input channels first (I x O/groups x taps).
 * The XWN collection transforms these with transposed = true
 * (plugins/xwn/xwn-cpu.c, xwn_deconv_prepare); keep the two in step. */
static const char *const transposed_types[] = { "xwn_deconvolution" };

/* Positions of the set in l's parameters; false when l lacks any of them. */
static bool
find_set(const st_layer *l, int idx[SET_COUNT])
{
	if (l == NULL || l->type == NULL)
		return false;
	const st_layer_desc *d = l->type->desc;
	for (int i = 0; i < SET_COUNT; i++) {
		idx[i] = st_params_find(d->params, d->n_params, xwn_set[i].name);
		if (idx[i] < 0 || d->params[idx[i]].kind != xwn_set[i].kind)
			return false;
	}
	return true;
}

bool
st_xwn_layer(const st_layer *l)
{
	int idx[SET_COUNT];
	return find_set(l, idx);
}

bool
st_xwn_transposed(const st_layer *l)
{
	if (l == NULL || l->type == NULL)
		return false;
	for (size_t i = 0; i < sizeof transposed_types / sizeof transposed_types[0]; i++) {
		if (strcmp(l->type->desc->name, transposed_types[i]) == 0)
			return true;
	}
	return false;
}

bool
st_xwn_weight_transformed(const st_shape *shape)
{
	return shape->rank >= 3;
}

int
st_xwn_settings_of(const st_layer *l, const st_value *params, st_xwn_settings *out)
{
	int idx[SET_COUNT];
	if (!find_set(l, idx))
		return -1;
	const st_value *v = params != NULL ? params : l->params.values;
	*out = (st_xwn_settings){
		.transform = v[idx[SET_TRANSFORM]].b,
		.bit = (int)v[idx[SET_BIT]].i,
		.max_scale = (float)v[idx[SET_MAX_SCALE]].f,
		.pruning = v[idx[SET_PRUNING]].b,
		.prun_weight = (float)v[idx[SET_PRUN_WEIGHT]].f,
	};
	return 0;
}

static k_xwn_settings
kernel_settings(const st_xwn_settings *s)
{
	return (k_xwn_settings){ .transform = s->transform, .bit = s->bit, .max_scale = s->max_scale,
		                 .pruning = s->pruning, .prun_weight = s->prun_weight };
}

void
st_xwn_settings_text(const st_xwn_settings *s, st_buf *out)
{
	bool transform = s->transform && s->bit >= 1;
	if (!transform && !s->pruning) {
		st_buf_puts(out, "transform and pruning off");
		return;
	}
	if (transform && s->bit == 1)
		st_buf_puts(out, "1-bit (sign times mean)");
	else if (transform)
		st_buf_printf(out, "%d-bit, max_scale %g", s->bit, (double)s->max_scale);
	else
		st_buf_puts(out, "no transform");
	if (s->pruning)
		st_buf_printf(out, ", pruning %g", (double)s->prun_weight);
	else
		st_buf_puts(out, ", no pruning");
}

/* Starts the figures of l for settings s (no parts yet). */
static void
figures_begin(const st_layer *l, const st_xwn_settings *s, st_xwn_figures *out)
{
	memset(out, 0, sizeof *out);
	out->settings = *s;
	k_xwn_settings k = kernel_settings(s);
	out->active = k_xwn_active(&k);
	out->transposed = st_xwn_transposed(l);
	out->levels = s->transform && s->bit >= 1 ? (s->bit == 1 ? 1 : 1 << (s->bit - 1)) : 0;
}

/* The kernel's view of a weight: a x b slices of taps each. */
static void
slices_of(const st_shape *shape, int64_t *a, int64_t *b, int64_t *taps)
{
	*a = shape->dims[0];
	*b = shape->dims[1];
	*taps = 1;
	for (int i = 2; i < shape->rank; i++)
		*taps *= shape->dims[i];
}

/* Transforms data (name, shape) into out (room for every element), with
 * its figures in *stats. Returns 0, or -1 with a reason in err. */
static int
transform(const st_layer *l, const st_xwn_settings *s, const char *name, const st_shape *shape,
          const float *data, float *out, k_xwn_stats *stats, char *err, size_t err_size)
{
	int64_t a, b, taps;
	slices_of(shape, &a, &b, &taps);
	k_xwn_settings k = kernel_settings(s);
	if (k_xwn_apply(data, out, a, b, taps, st_xwn_transposed(l), &k, stats) != 0) {
		snprintf(err, err_size, "layer '%s': weight %s cannot be transformed (bit %d is above %d, or out of memory)",
		         l->name, name, s->bit, K_XWN_MAX_BIT);
		return -1;
	}
	return 0;
}

/* Adds the figures of one transformed weight. Returns 0 or -1 with err. */
static int
add_part(const st_layer *l, st_xwn_figures *f, const char *name, const st_shape *shape, const float *data,
         char *err, size_t err_size)
{
	int64_t n = st_shape_elements(shape);
	if (n < 0) {
		snprintf(err, err_size, "layer '%s': weight %s is too large", l->name, name);
		return -1;
	}
	float *scratch = st_xmalloc(sizeof *scratch * (size_t)(n > 0 ? n : 1));
	k_xwn_stats stats;
	int rc = transform(l, &f->settings, name, shape, data, scratch, &stats, err, err_size);
	free(scratch);
	if (rc != 0)
		return -1;
	st_xwn_part *p = &f->parts[f->n_parts++];
	snprintf(p->name, sizeof p->name, "%s", name);
	p->shape = *shape;
	p->slices = stats.slices;
	p->pruned = stats.pruned;
	f->slices += stats.slices;
	f->pruned += stats.pruned;
	f->weights += stats.weights;
	for (int k = 0; k < ST_XWN_MAX_LEVELS; k++)
		f->level_count[k] += stats.level_count[k];
	return 0;
}

int
st_xwn_figures_from_plan(const st_plan *p, const st_layer *l, st_xwn_figures *out, char *err, size_t err_size)
{
	memset(out, 0, sizeof *out);
	st_xwn_settings s;
	const st_value *params = st_plan_layer_params(p, l);
	if (params == NULL || st_xwn_settings_of(l, params, &s) != 0) {
		snprintf(err, err_size, "layer '%s' is %s", l->name,
		         params == NULL ? "not part of the compiled plan" : "not an XWN layer");
		return -1;
	}
	figures_begin(l, &s, out);
	for (int i = 0; i < l->n_weights && out->n_parts < ST_MAX_WEIGHTS; i++) {
		st_shape shape;
		const float *w = st_plan_layer_weight(p, l, l->weights[i].name, &shape);
		if (w == NULL) {
			if (l->weights[i].optional)
				continue;
			snprintf(err, err_size, "layer '%s': weight %s is not bound", l->name, l->weights[i].name);
			return -1;
		}
		if (st_xwn_weight_transformed(&shape) && add_part(l, out, l->weights[i].name, &shape, w, err, err_size) != 0)
			return -1;
	}
	return 0;
}

int
st_xwn_figures_from_dir(const st_layer *l, const char *dir, st_xwn_figures *out, char *err, size_t err_size)
{
	memset(out, 0, sizeof *out);
	st_xwn_settings s;
	if (st_xwn_settings_of(l, NULL, &s) != 0) {
		snprintf(err, err_size, "layer '%s' is not an XWN layer", l->name);
		return -1;
	}
	if (!l->outputs_known) {
		snprintf(err, err_size, "layer '%s' does not type-check, so its weights' shapes are unknown", l->name);
		return -1;
	}
	st_weights *w = st_weights_open(dir, err, err_size);
	if (w == NULL)
		return -1;
	figures_begin(l, &s, out);
	int rc = 0;
	for (int i = 0; i < l->n_weights && rc == 0 && out->n_parts < ST_MAX_WEIGHTS; i++) {
		const st_weight_desc *wd = &l->weights[i];
		if (!st_xwn_weight_transformed(&wd->shape))
			continue;
		st_npy a;
		st_shape want = wd->shape;
		want.dtype = ST_DTYPE_FLOAT32;
		int got = st_weights_load(w, l->name, wd->name, &want, wd->optional, &a, err, err_size);
		if (got == 1)
			continue;
		if (got != 0) {
			rc = -1;
			break;
		}
		rc = add_part(l, out, wd->name, &want, a.data, err, err_size);
		st_npy_free(&a);
	}
	st_weights_close(w);
	return rc;
}

int
st_xwn_transformed_weight(const st_plan *p, const st_layer *l, const char *name, float **out, st_shape *shape,
                          char *err, size_t err_size)
{
	*out = NULL;
	st_xwn_settings s;
	const st_value *params = st_plan_layer_params(p, l);
	if (params == NULL || st_xwn_settings_of(l, params, &s) != 0) {
		snprintf(err, err_size, "layer '%s' is %s", l->name,
		         params == NULL ? "not part of the compiled plan" : "not an XWN layer");
		return -1;
	}
	const float *w = st_plan_layer_weight(p, l, name, shape);
	if (w == NULL) {
		snprintf(err, err_size, "layer '%s' has no weight %s bound", l->name, name);
		return -1;
	}
	int64_t n = st_shape_elements(shape);
	if (n < 0) {
		snprintf(err, err_size, "layer '%s': weight %s is too large", l->name, name);
		return -1;
	}
	float *copy = st_xmalloc(sizeof *copy * (size_t)(n > 0 ? n : 1));
	k_xwn_settings k = kernel_settings(&s);
	/* The plugin runs on the bound weights themselves when the settings
	 * change nothing; so does this copy. */
	if (!st_xwn_weight_transformed(shape) || !k_xwn_active(&k)) {
		memcpy(copy, w, sizeof *copy * (size_t)n);
		*out = copy;
		return 0;
	}
	if (transform(l, &s, name, shape, w, copy, NULL, err, err_size) != 0) {
		free(copy);
		return -1;
	}
	*out = copy;
	return 1;
}

st_graph *
st_xwn_graph_plain(const st_graph *g, const char *file, int *n_changed, st_diag *d)
{
	if (n_changed != NULL)
		*n_changed = 0;
	/* A copy through the model's own text keeps everything the file would. */
	char *text = st_model_serialize(g);
	st_graph *copy = st_model_parse(text, strlen(text), file, g->registry, d);
	free(text);
	if (copy == NULL)
		return NULL;
	for (int i = 0; i < copy->n_layers; i++) {
		st_layer *l = copy->layers[i];
		int idx[SET_COUNT];
		if (!find_set(l, idx))
			continue;
		bool changed = false;
		static const int off[] = { SET_TRANSFORM, SET_PRUNING };
		for (int k = 0; k < 2; k++) {
			st_value *v = &l->params.values[idx[off[k]]];
			changed |= v->b;
			v->b = false;
			l->params.set[idx[off[k]]] = true;
		}
		/* The copy belongs to nobody's session: a plain change with a
		 * re-check mark, no undo record. */
		st_graph_touch(copy, l);
		if (changed && n_changed != NULL)
			(*n_changed)++;
	}
	st_graph_check(copy);
	if (copy->errors > 0) {
		st_diag_add(d, ST_SEVERITY_ERROR, file, 0, 0,
		            "the model without the XWN transform has %d type error%s", copy->errors,
		            copy->errors == 1 ? "" : "s");
		st_graph_free(copy);
		return NULL;
	}
	return copy;
}

void
st_xwn_difference(const float *a, const float *b, int64_t n, double *max_abs, double *rel_l2)
{
	double worst = 0, diff2 = 0, norm2 = 0;
	bool nan = false;
	for (int64_t i = 0; i < n; i++) {
		double x = a[i], y = b[i], e = fabs(x - y);
		if (isnan(e)) {
			nan = true;
			continue;
		}
		worst = e > worst ? e : worst;
		diff2 += e * e;
		norm2 += y * y;
	}
	*max_abs = nan ? NAN : worst;
	if (nan)
		*rel_l2 = NAN;
	else if (norm2 > 0)
		*rel_l2 = sqrt(diff2) / sqrt(norm2);
	else
		*rel_l2 = diff2 > 0 ? INFINITY : 0;
}
