/* Files as input tensors: NumPy arrays passed as they are, images and video
 * frames converted as the input layer's parameters say. Shared by the
 * command line (strata run, strata inspect) and the editor's analysis mode. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine-internal.h"

st_input_kind
st_input_kind_of(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (f != NULL) {
		char magic[6] = { 0 };
		size_t n = fread(magic, 1, sizeof magic, f);
		fclose(f);
		if (n == 6 && memcmp(magic, "\x93NUMPY", 6) == 0)
			return ST_INPUT_NPY;
	}
	static const char *const videos[] = { ".avi", ".mkv", ".mpg", ".mpeg", ".wmv", ".mp4", ".mov", ".webm", ".m4v" };
	size_t n = strlen(path);
	if (f == NULL && n > 4 && strcasecmp(path + n - 4, ".npy") == 0)
		return ST_INPUT_NPY; /* missing: reading it says so */
	for (size_t k = 0; k < sizeof videos / sizeof videos[0]; k++) {
		size_t m = strlen(videos[k]);
		if (n > m && strcasecmp(path + n - m, videos[k]) == 0)
			return ST_INPUT_VIDEO;
	}
	return ST_INPUT_IMAGE;
}

int
st_input_from_npy(const char *path, const st_shape *want, st_tensor *t, char *err, size_t err_size)
{
	memset(t, 0, sizeof *t);
	t->layout = ST_LAYOUT_NCHW;
	st_npy npy;
	if (st_npy_read(path, &npy, err, err_size) != 0)
		return -1;
	st_dtype dtype = want->dtype;
	if (st_npy_convert(&npy, dtype, err, err_size) != 0) {
		st_npy_free(&npy);
		return -1;
	}
	/* A sample without its batch dimension gets a batch of one. */
	t->shape.dtype = dtype;
	if (npy.rank == want->rank - 1) {
		t->shape.rank = want->rank;
		t->shape.dims[0] = 1;
		memcpy(&t->shape.dims[1], npy.dims, sizeof npy.dims[0] * (size_t)npy.rank);
	} else {
		t->shape.rank = npy.rank;
		memcpy(t->shape.dims, npy.dims, sizeof npy.dims[0] * (size_t)npy.rank);
	}
	t->data = st_xmalloc(npy.bytes ? npy.bytes : 1);
	memcpy(t->data, npy.data, npy.bytes);
	st_npy_free(&npy);
	return 0;
}

int
st_input_image_params(const st_layer *l, double *scale, const double **mean, int *n_mean, const double **std,
                      int *n_std)
{
	if (l == NULL || l->type == NULL)
		return -1;
	const st_layer_desc *d = l->type->desc;
	int is = st_params_find(d->params, d->n_params, "image_scale");
	int im = st_params_find(d->params, d->n_params, "image_mean");
	int isd = st_params_find(d->params, d->n_params, "image_std");
	if (is < 0 || im < 0 || isd < 0)
		return -1;
	const st_value *pv = l->params.values;
	*scale = pv[is].f;
	*mean = pv[im].floats;
	*n_mean = pv[im].count;
	*std = pv[isd].floats;
	*n_std = pv[isd].count;
	return 0;
}

int
st_input_from_image(const st_layer *l, const st_shape *want, const st_image *img, st_tensor *t, char *err,
                    size_t err_size)
{
	memset(t, 0, sizeof *t);
	t->layout = ST_LAYOUT_NCHW;
	double scale;
	const double *mean, *std;
	int n_mean, n_std;
	if (want->rank != 4 || st_input_image_params(l, &scale, &mean, &n_mean, &std, &n_std) != 0) {
		snprintf(err, err_size, "input '%s' is not an N x C x H x W image input; give a .npy file",
		         l != NULL ? l->name : "?");
		return -1;
	}
	/* Another size: resized as the layer's image_resize says, or refused. */
	st_image resized = { 0 };
	int64_t H = want->dims[2], W = want->dims[3];
	const st_layer_desc *d = l->type->desc;
	int ir = st_params_find(d->params, d->n_params, "image_resize");
	int mode = ir >= 0 ? (int)l->params.values[ir].i : 0;
	if ((img->height != H || img->width != W) && mode > 0) {
		if (st_image_resize(img, (int)W, (int)H, mode == 2, &resized, err, err_size) != 0)
			return -1;
		img = &resized;
	}
	t->shape = *want;
	int64_t bytes = st_shape_bytes(want);
	t->data = st_xmalloc((size_t)(bytes > 0 ? bytes : 1));
	int rc = st_image_to_tensor(img, want, want->dtype, scale, mean, n_mean, std, n_std, t->data, err, err_size);
	st_image_free(&resized);
	if (rc != 0) {
		free(t->data);
		t->data = NULL;
	}
	return rc;
}
