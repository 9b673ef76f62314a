/* The io module: NumPy .npy files, weights folders and input images. */
#ifndef ST_IO_H
#define ST_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
 * the file, or into memory of its own when it was converted (or when the
 * file's data was not aligned to its element size); free with st_npy_free. */
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
 * int8, uint8, bool), copying only when its type differs; the file's
 * mapping is released then. Floats round to nearest even (too large: inf);
 * refuses values an integer target cannot hold exactly (out of range,
 * fractions, NaN), and leaves the array as it was. */
int st_npy_convert(st_npy *a, st_dtype dtype, char *err, size_t err_size);
void st_npy_free(st_npy *a);
/* The st_dtype that a .npy type is, or -1 (float64, 16-bit and unsigned
 * 32/64-bit integers have none). */
int st_npy_type_dtype(st_npy_type t);
/* Writes data of shape (dtype as in shape) as a version 1.0 .npy file, as
 * numpy writes it, atomically. */
int st_npy_write(const char *path, const st_shape *shape, const void *data, char *err,
                 size_t err_size);
/* The same into memory; caller frees *out. */
int st_npy_encode(const st_shape *shape, const void *data, char **out, size_t *len, char *err,
                  size_t err_size);

/* A weights folder: one file per layer and weight type, <dir>/<layer>_<weight>.npy. */
typedef struct st_weights st_weights;

/* An image decoded to 8 bits per channel, channels interleaved. */
typedef struct st_image {
	int width, height;
	int channels;     /* 1 grey, 2 grey and alpha, 3 RGB, 4 RGBA */
	uint8_t *pixels;  /* height rows of width * channels bytes; free with st_image_free */
} st_image;

/* io-weights.c */
/* Opens a weights folder (only checks that it is one). Returns NULL with a
 * message when it is missing or not a folder; caller frees with
 * st_weights_close. */
st_weights *st_weights_open(const char *dir, char *err, size_t err_size);
void st_weights_close(st_weights *w);
const char *st_weights_dir(const st_weights *w);
/* The file a weight lives in: "<dir>/<layer>_<weight>.npy"; caller frees. */
char *st_weights_path(const st_weights *w, const char *layer, const char *weight);
/*
 * Reads one weight memory-mapped, converted to expected->dtype when the file
 * holds another type (float32 for every weight but constants), its dims
 * checked against expected (rank and every size), its data 64-byte aligned.
 * Returns 0; 1 when the file is absent and optional (out is then empty);
 * -1 with a message naming the path (and both shapes on a mismatch).
 * Free out with st_npy_free.
 */
int st_weights_load(st_weights *w, const char *layer, const char *weight, const st_shape *expected,
                    bool optional, st_npy *out, char *err, size_t err_size);
/*
 * Fills data with n values uniform in (-1/sqrt(fan_in), 1/sqrt(fan_in)), or
 * (-1, 1) when fan_in <= 0 (24 random bits each, rounded to float), from
 * splitmix64 started at seed: the same values on every machine and compiler
 * for the same seed, and a shorter run is a prefix of a longer one.
 */
void st_weights_random(float *data, int64_t n, int64_t fan_in, uint64_t seed);
/* The seed of one weight tensor under a run's seed, from the layer and
 * weight names (FNV-1a), so values do not depend on the order of layers. */
uint64_t st_weights_random_seed(const char *layer, const char *weight, uint64_t run_seed);

/* io-image.c */
/* Reads a PNG or a JPEG file, told apart by its first bytes. PNG: any bit
 * depth, palette, grey, grey and alpha, RGB, RGBA, interlaced; 16-bit
 * samples are scaled to 8 bits with rounding. JPEG: grey or colour (CMYK is
 * refused). Returns 0, or -1 with a message naming path; free with
 * st_image_free. */
int st_image_read(const char *path, st_image *img, char *err, size_t err_size);
/* The same from memory; messages do not name a file. */
int st_image_decode(const void *data, size_t len, st_image *img, char *err, size_t err_size);
void st_image_free(st_image *img);
/* A copy of src resized to width x height, bilinear at pixel centres; with
 * crop, from the centre of src that has the target's aspect (the shorter
 * side fits). Returns 0, or -1 with a message; free dst with st_image_free. */
int st_image_resize(const st_image *src, int width, int height, bool crop, st_image *dst, char *err,
                    size_t err_size);
/*
 * Fills a tensor of shape N x C x H x W (NCHW, C 1 or 3, dtype as given;
 * shape->dtype is ignored) from img, by the rules of docs/layers/prose/input.md:
 * the image must be W x H; grey repeats into 3 channels, alpha is dropped,
 * colour feeds 1 channel as its BT.601 luma (rounded as PIL's convert('L'));
 * float types get (v * scale - mean[c]) / std[c] with one mean and std for all
 * channels or one per channel; integer types take v as it is (a value the
 * type cannot hold is an error); every sample of the batch is the image.
 * out holds the tensor's bytes. Returns 0, or -1 with a message.
 */
int st_image_to_tensor(const st_image *img, const st_shape *shape, st_dtype dtype, double scale,
                       const double *mean, int n_mean, const double *std, int n_std, void *out,
                       char *err, size_t err_size);
/* Writes channels (1 or 3) planes of height x width floats as an 8-bit grey
 * or RGB PNG, each value clamped to [0, 1] and scaled to 0-255 (NaN is 0),
 * atomically. */
int st_image_write_png(const char *path, const float *planes, int channels, int height, int width,
                       char *err, size_t err_size);
/* The same into memory; caller frees *out. */
int st_image_encode_png(const float *planes, int channels, int height, int width, char **out,
                        size_t *len, char *err, size_t err_size);

/* io-video.c: video files as inputs (FFmpeg) */

typedef struct st_video st_video;
/* Whether this build reads video (configure found FFmpeg). */
bool st_video_available(void);
/* Opens the first video stream of a file (AVI, MPEG, MKV, WMV, anything
 * libavformat reads) before its first frame. NULL with a message naming
 * path (no such file, no video stream, no decoder, frames larger than
 * 16384 a side). Caller frees with st_video_close. */
st_video *st_video_open(const char *path, char *err, size_t err_size);
/* The same from memory; data must outlive the video. */
st_video *st_video_open_memory(const void *data, size_t len, char *err, size_t err_size);
void st_video_close(st_video *v);
int st_video_width(const st_video *v);
int st_video_height(const st_video *v);
/* Frames per second, or 0 when the file does not say. */
double st_video_fps(const st_video *v);
/* Frames the container counts or its duration implies, or -1. */
int64_t st_video_frame_count(const st_video *v);
/* The index of the frame last returned, -1 before the first. */
int64_t st_video_position(const st_video *v);
/* Decodes the next frame as RGB into img (free with st_image_free).
 * Returns 0, 1 at the end of the video (img untouched), -1 with a message. */
int st_video_next(st_video *v, st_image *img, char *err, size_t err_size);
/* Goes to frame (from 0; the nearest key frame before it, then decoding
 * forward) and decodes it into img: 0, 1 past the end, -1 with a message. */
int st_video_seek(st_video *v, int64_t frame, st_image *img, char *err, size_t err_size);

/* io-grid.c: channel grids */

typedef enum st_colormap {
	ST_COLORMAP_GRAY,
	ST_COLORMAP_VIRIDIS,
	ST_COLORMAP_HEAT,
	ST_COLORMAP_DIVERGING, /* blue below zero, red above; zero in the middle */
	ST_COLORMAP_COUNT
} st_colormap;
const char *st_colormap_name(st_colormap m);
/* The map called name, or -1. */
int st_colormap_find(const char *name);
/* The colour of t from 0 to 1 (clamped; NaN is 0), components 0 to 1. */
void st_colormap_rgb(st_colormap m, double t, float rgb[3]);

/* Statistics of n values: min, max, mean and standard deviation of the
 * finite ones (all 0 when there are none), and how many are NaN or infinite. */
typedef struct st_channel_stats {
	double min, max, mean, std;
	int64_t count, nan, inf;
} st_channel_stats;
void st_channel_stats_of(const float *v, int64_t n, st_channel_stats *s);

/* How a tensor reads as pictures: N x C x H x W gives C pictures of H x W
 * (further dimensions widen each row), N x C x L gives C pictures of 1 x L,
 * N x F one picture of 1 x F. */
void st_grid_geometry(const st_shape *shape, int64_t *channels, int64_t *height, int64_t *width);

typedef struct st_grid_options {
	int64_t first, count;   /* the channels shown: count from first (0: to the end) */
	int columns;            /* 0: about as wide as high */
	int scale;              /* pixels per value (zoom), 1 or more; 0 is 1 */
	int gap;                /* pixels between pictures; -1 is 1 */
	st_colormap colormap;
	bool shared_range;      /* one value range for every channel shown, else each its own */
} st_grid_options;

/* A grid drawn: RGB planes of height x width floats from 0 to 1. */
typedef struct st_grid {
	float *planes;          /* 3 planes; free with st_grid_free */
	int height, width;
	int rows, columns;
	int64_t first, count;   /* the channels drawn */
	int cell_height, cell_width, gap;
} st_grid;

/* Draws channels of sample of data (float32, NCHW, shape) as a grid; the
 * gaps are dark grey and NaN is magenta. Returns 0, or -1 with a message
 * (a sample or channel out of range, a grid too large). Free with
 * st_grid_free. */
int st_grid_render(const float *data, const st_shape *shape, int64_t sample, const st_grid_options *opt,
                   st_grid *out, char *err, size_t err_size);
void st_grid_free(st_grid *g);

#endif
