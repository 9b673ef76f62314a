/* Helpers shared by every file of the standard collection: dtype checks,
 * size checks and weight declarations, with their messages. */
#include "config.h"

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
