/* Helpers shared by every file of the standard collection: dtype checks,
 * size checks and weight declarations, with their messages. */
#include "config.h"

#include "k-tensor.h"
#include "std.h"

const char *
std_shape_text(const st_host_api *api, const st_shape *s, char *buf)
{
	api->shape_format(s, buf, SHAPE_TEXT);
	return buf;
}

bool
std_is_float(st_dtype t)
{
	return t == ST_DTYPE_FLOAT32 || t == ST_DTYPE_FLOAT16;
}

int
std_require_float(st_reshape *r, const st_host_api *api, const st_shape *in)
{
	if (std_is_float(in->dtype))
		return 0;
	char text[SHAPE_TEXT];
	api->message(r, ST_SEVERITY_ERROR, "input %s is %s, but %s needs float32 or float16",
	             std_shape_text(api, in, text), api->dtype_name(in->dtype), r->desc->name);
	return -1;
}

int
std_check_size(st_reshape *r, const st_host_api *api, const st_shape *s, const char *what)
{
	int64_t n = api->shape_elements(s);
	if (n >= 0 && std_mul(n, 4) >= 0)
		return 0;
	char text[SHAPE_TEXT];
	api->message(r, ST_SEVERITY_ERROR, "the %s %s would hold more elements than memory can address",
	             what, std_shape_text(api, s, text));
	return -1;
}

int
std_declare_weight(st_reshape *r, const st_host_api *api, const char *name, int rank,
                   const int64_t *dims)
{
	st_shape s = { .dtype = ST_DTYPE_FLOAT32, .rank = rank };
	for (int i = 0; i < rank; i++)
		s.dims[i] = dims[i];
	if (std_check_size(r, api, &s, name) != 0)
		return -1;
	/* The host reports why a declaration fails. */
	return api->add_weight(r, name, &s, false) == 0 ? 0 : -1;
}

int
std_check_weight(st_exec_layer *L, const st_host_api *api, int index, const char *what, int rank,
                 const int64_t *dims)
{
	if (index >= L->n_weights || L->weights[index].data == NULL) {
		api->fail(L, "the %s weights are missing", what);
		return -1;
	}
	const st_shape *s = &L->weights[index].shape;
	st_shape want = { .dtype = ST_DTYPE_FLOAT32, .rank = rank };
	for (int i = 0; i < rank; i++)
		want.dims[i] = dims[i];
	bool same = s->dtype == ST_DTYPE_FLOAT32 && s->rank == rank;
	for (int i = 0; same && i < rank; i++)
		same = s->dims[i] == dims[i];
	if (!same) {
		char a[SHAPE_TEXT], b[SHAPE_TEXT];
		api->fail(L, "the %s weights are %s %s, expected float32 %s", what, api->dtype_name(s->dtype),
		          std_shape_text(api, s, a), std_shape_text(api, &want, b));
		return -1;
	}
	return 0;
}

/* The factor each axis uses in ONNX's coordinate mapping: the given scale
 * where scales set the size, out/in (in float32, as ONNX Runtime divides)
 * where sizes did, 1 on axes the list does not cover. */
void
std_resize_scales(const st_exec_layer *L, float *scales)
{
	const st_shape *in = &L->inputs[0].shape, *out = &L->outputs[0].shape;
	const st_value *given = &L->params[RESIZE_SCALES];
	bool by_size = L->params[RESIZE_SIZES].count > 0;
	int rank = in->rank, count = given->count;
	/* The axes a list covers, as std-shape.c's reshape counts them. */
	int first = rank >= 3 && (count == 1 || count == rank - 2) ? 2 : 0;
	for (int k = 0; k < rank; k++) {
		if (by_size)
			scales[k] = (float)out->dims[k] / (float)in->dims[k];
		else if (k >= first && count > 0)
			scales[k] = (float)given->floats[count == 1 ? 0 : k - first];
		else
			scales[k] = 1.0f;
	}
}

/*
 * The shape input i broadcasts with. Under broadcast channel a per-channel
 * vector ([C], [1,C], [N,C] or [1,C,1,…]) lines up with axis 1 of input 0,
 * so it becomes [1 or N, C, 1, …] of input 0's rank; numpy rules then agree.
 */
st_shape
std_eltwise_operand_shape(const st_exec_layer *L, int i)
{
	const st_shape *s = &L->inputs[i].shape;
	if (i == 0 || L->params[ELTWISE_BROADCAST].i != BROADCAST_CHANNEL || s->rank > 2)
		return *s;
	const st_shape *x = &L->inputs[0].shape;
	st_shape v = { .dtype = s->dtype, .rank = x->rank };
	for (int k = 0; k < x->rank; k++)
		v.dims[k] = 1;
	v.dims[0] = s->rank == 2 ? s->dims[0] : 1;
	v.dims[1] = s->dims[s->rank - 1];
	return v;
}

int
std_resize_desc(st_exec_layer *L, const st_host_api *api, k_resize_desc *d)
{
	const st_shape *in = &L->inputs[0].shape, *out = &L->outputs[0].shape;
	*d = (k_resize_desc){
		.mode = (k_resize_mode)L->params[RESIZE_MODE].i,
		.coord = (k_coord_mode)L->params[RESIZE_COORDINATES].i,
		.nearest = (k_nearest_mode)L->params[RESIZE_NEAREST_MODE].i,
		.cubic_a = (float)L->params[RESIZE_CUBIC_A].f,
		.exclude_outside = L->params[RESIZE_EXCLUDE_OUTSIDE].b,
	};
	if (in->rank != out->rank || in->dtype != out->dtype) {
		api->fail(L, "input and output differ in rank or dtype");
		return -1;
	}
	/* Sizes can ask for elements out of an empty axis: there is nothing to take them from. */
	for (int k = 0; k < in->rank; k++) {
		if (in->dims[k] == 0 && out->dims[k] != 0) {
			api->fail(L, "axis %d of the input is empty, so it cannot be resized to %lld", k,
			          (long long)out->dims[k]);
			return -1;
		}
	}
	std_resize_scales(L, d->scales);
	return 0;
}
