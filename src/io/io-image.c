/* Input images: PNG through libpng and JPEG through libjpeg-turbo, decoded
 * to 8 bits per channel, turned into input tensors by the input layer's
 * rules; and PNG output of image-shaped results. Damaged files give a
 * message, never a crash: both libraries report errors by longjmp, which
 * lands in the function that set the jump up and frees what it held. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <jerror.h>
#include <png.h>

#include "st-io.h"

/* Decoded images larger than this are refused before any pixel is stored
 * (fuzzing lowers it to keep each run small). */
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define MAX_IMAGE_BYTES ((int64_t)4 << 20)
#else
#define MAX_IMAGE_BYTES ((int64_t)1 << 30)
#endif
/* Progressive JPEGs may hold any number of scans, each a pass over the
 * whole image; real files have about ten. */
#define MAX_JPEG_SCANS 500

static int
fail(char *err, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int
fail(char *err, size_t size, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, size, fmt, ap);
	va_end(ap);
	return -1;
}

static int
too_large(int64_t width, int64_t height, int channels, char *err, size_t size)
{
	if (width <= 0 || height <= 0)
		return fail(err, size, "the image has no pixels (%" PRId64 "x%" PRId64 ")", width, height);
	if (width > MAX_IMAGE_BYTES / height / channels)
		return fail(err, size, "the image is too large (%" PRId64 "x%" PRId64 " pixels)", width, height);
	return 0;
}

void
st_image_free(st_image *img)
{
	free(img->pixels);
	memset(img, 0, sizeof *img);
}

/* ---- PNG ---- */

typedef struct png_source {
	const unsigned char *data;
	size_t len, pos;
	char message[256];
} png_source;

static void
png_read_memory(png_structp png, png_bytep out, size_t n)
{
	png_source *s = png_get_io_ptr(png);
	if (n > s->len - s->pos)
		png_error(png, "the file ends before the image does (truncated)");
	memcpy(out, s->data + s->pos, n);
	s->pos += n;
}

static void
png_on_error(png_structp png, png_const_charp message)
{
	png_source *s = png_get_error_ptr(png);
	snprintf(s->message, sizeof s->message, "%s", message);
	png_longjmp(png, 1);
}

static void
png_on_warning(png_structp png, png_const_charp message)
{
	/* Warnings concern ancillary chunks the pixels do not depend on. */
	(void)png;
	(void)message;
}

static int
decode_png(const unsigned char *data, size_t len, st_image *img, char *err, size_t size)
{
	png_source src = { .data = data, .len = len };
	png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &src, png_on_error, png_on_warning);
	if (png == NULL)
		return fail(err, size, "out of memory reading a PNG image");
	png_infop info = png_create_info_struct(png);
	if (info == NULL) {
		png_destroy_read_struct(&png, NULL, NULL);
		return fail(err, size, "out of memory reading a PNG image");
	}
	/* Set between setjmp and a possible longjmp, hence volatile. */
	unsigned char *volatile pixels = NULL;
	png_bytep *volatile rows = NULL;
	if (setjmp(png_jmpbuf(png))) {
		free(pixels);
		free(rows);
		png_destroy_read_struct(&png, &info, NULL);
		return fail(err, size, "bad PNG image: %s", src.message);
	}
	png_set_read_fn(png, &src, png_read_memory);
#ifdef PNG_HANDLE_AS_UNKNOWN_SUPPORTED
	/* libpng allocates a chunk's stated length before it reads it: 128
	 * bytes claiming a 1.9 GB sPLT chunk cost 1.9 GB (found by fuzz-image;
	 * png_set_chunk_malloc_max does not reach that path). The ancillary
	 * chunks whose data libpng keeps (text, profiles, palettes, metadata)
	 * mean nothing to the pixels: they are skipped as they are read. */
	static const png_byte skipped[] = "sPLT\0iCCP\0tEXt\0zTXt\0iTXt\0eXIf\0pCAL\0sCAL\0hIST\0";
	png_set_keep_unknown_chunks(png, PNG_HANDLE_CHUNK_NEVER, skipped, (int)(sizeof skipped / 5));
#endif
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
	/* Let the fuzzer reach the decoder instead of stopping at checksums. */
	png_set_crc_action(png, PNG_CRC_QUIET_USE, PNG_CRC_QUIET_USE);
#ifdef PNG_IGNORE_ADLER32
	png_set_option(png, PNG_IGNORE_ADLER32, PNG_OPTION_ON);
#endif
#endif
	png_read_info(png, info);
	int64_t width = png_get_image_width(png, info), height = png_get_image_height(png, info);
	/* Palette to RGB, grey below 8 bits to 8, transparency to an alpha
	 * channel; 16-bit samples scaled to 8 with rounding; Adam7 undone. */
	png_set_expand(png);
	png_set_scale_16(png);
	png_set_interlace_handling(png);
	png_read_update_info(png, info);
	int channels = png_get_channels(png, info);
	size_t row_bytes = png_get_rowbytes(png, info);
	if (png_get_bit_depth(png, info) != 8 || channels < 1 || channels > 4 ||
	    row_bytes != (size_t)width * (size_t)channels) {
		png_destroy_read_struct(&png, &info, NULL);
		return fail(err, size, "bad PNG image: an unexpected pixel format after decoding");
	}
	if (too_large(width, height, channels, err, size) != 0) {
		png_destroy_read_struct(&png, &info, NULL);
		return -1;
	}
	pixels = st_xmalloc(row_bytes * (size_t)height);
	rows = st_xmalloc(sizeof *rows * (size_t)height);
	for (int64_t y = 0; y < height; y++)
		rows[y] = pixels + (size_t)y * row_bytes;
	png_read_image(png, rows);
	png_read_end(png, NULL);
	png_destroy_read_struct(&png, &info, NULL);
	free(rows);
	img->width = (int)width;
	img->height = (int)height;
	img->channels = channels;
	img->pixels = pixels;
	return 0;
}

/* ---- JPEG ---- */

typedef struct jpeg_failure {
	struct jpeg_error_mgr mgr; /* first, so that cinfo->err points at the whole */
	jmp_buf jump;
	char message[JMSG_LENGTH_MAX + 64];
} jpeg_failure;

static void
jpeg_on_error(j_common_ptr cinfo)
{
	jpeg_failure *f = (jpeg_failure *)cinfo->err;
	char text[JMSG_LENGTH_MAX];
	cinfo->err->format_message(cinfo, text);
	snprintf(f->message, sizeof f->message, "%s", text);
	longjmp(f->jump, 1);
}

static void
jpeg_on_message(j_common_ptr cinfo, int level)
{
	if (level >= 0)
		return; /* trace messages */
	/* libjpeg treats damaged data as a warning and fills the rest of the
	 * image with grey; an input that is not what the file meant is an
	 * error here. Other warnings (unknown JFIF version, stray bytes
	 * between markers) do not change the pixels. */
	switch (cinfo->err->msg_code) {
	case JWRN_JPEG_EOF:
	case JWRN_HIT_MARKER:
	case JWRN_HUFF_BAD_CODE:
	case JWRN_MUST_RESYNC:
		jpeg_on_error(cinfo);
		break;
	default:
		break;
	}
}

static void
jpeg_on_output(j_common_ptr cinfo)
{
	(void)cinfo;
}

static void
jpeg_on_progress(j_common_ptr cinfo)
{
	if (cinfo->is_decompressor && ((j_decompress_ptr)cinfo)->input_scan_number > MAX_JPEG_SCANS) {
		jpeg_failure *f = (jpeg_failure *)cinfo->err;
		snprintf(f->message, sizeof f->message, "more than %d progressive scans", MAX_JPEG_SCANS);
		longjmp(f->jump, 1);
	}
}

static int
decode_jpeg(const unsigned char *data, size_t len, st_image *img, char *err, size_t size)
{
	struct jpeg_decompress_struct cinfo;
	jpeg_failure failure;
	struct jpeg_progress_mgr progress = { .progress_monitor = jpeg_on_progress };
	memset(&cinfo, 0, sizeof cinfo);
	cinfo.err = jpeg_std_error(&failure.mgr);
	failure.mgr.error_exit = jpeg_on_error;
	failure.mgr.emit_message = jpeg_on_message;
	failure.mgr.output_message = jpeg_on_output;
	failure.message[0] = '\0';
	unsigned char *volatile pixels = NULL;
	if (setjmp(failure.jump)) {
		free(pixels);
		jpeg_destroy_decompress(&cinfo);
		return fail(err, size, "bad JPEG image: %s", failure.message);
	}
	jpeg_create_decompress(&cinfo);
	cinfo.progress = &progress;
	jpeg_mem_src(&cinfo, data, (unsigned long)len);
	jpeg_read_header(&cinfo, TRUE);
	if (cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK) {
		jpeg_destroy_decompress(&cinfo);
		return fail(err, size, "CMYK JPEG images are not supported; save the image as RGB");
	}
	int channels = cinfo.num_components == 1 ? 1 : 3;
	cinfo.out_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
	if (too_large(cinfo.image_width, cinfo.image_height, channels, err, size) != 0) {
		jpeg_destroy_decompress(&cinfo);
		return -1;
	}
	jpeg_start_decompress(&cinfo);
	if ((int)cinfo.output_components != channels) {
		jpeg_destroy_decompress(&cinfo);
		return fail(err, size, "bad JPEG image: an unexpected pixel format after decoding");
	}
	size_t row_bytes = (size_t)cinfo.output_width * (size_t)channels;
	pixels = st_xmalloc(row_bytes * cinfo.output_height);
	while (cinfo.output_scanline < cinfo.output_height) {
		JSAMPROW row = pixels + (size_t)cinfo.output_scanline * row_bytes;
		jpeg_read_scanlines(&cinfo, &row, 1);
	}
	jpeg_finish_decompress(&cinfo);
	img->width = (int)cinfo.output_width;
	img->height = (int)cinfo.output_height;
	img->channels = channels;
	img->pixels = pixels;
	jpeg_destroy_decompress(&cinfo);
	return 0;
}

/* ---- reading ---- */

int
st_image_decode(const void *data, size_t len, st_image *img, char *err, size_t size)
{
	memset(img, 0, sizeof *img);
	const unsigned char *b = data;
	if (len == 0)
		return fail(err, size, "the file is empty");
	if (len >= 8 && memcmp(b, "\x89PNG\r\n\x1a\n", 8) == 0)
		return decode_png(b, len, img, err, size);
	if (len >= 3 && b[0] == 0xff && b[1] == 0xd8 && b[2] == 0xff)
		return decode_jpeg(b, len, img, err, size);
	if (len >= 6 && memcmp(b, "\x93NUMPY", 6) == 0)
		return fail(err, size, "a NumPy .npy file, not an image");
	return fail(err, size, "neither a PNG nor a JPEG image");
}

int
st_image_read(const char *path, st_image *img, char *err, size_t size)
{
	memset(img, 0, sizeof *img);
	size_t len;
	char *data = st_read_file(path, &len);
	if (data == NULL)
		return fail(err, size, "cannot read %s: %s", path, strerror(errno));
	char why[400];
	int rc = st_image_decode(data, len, img, why, sizeof why);
	free(data);
	if (rc != 0)
		return fail(err, size, "%s: %s", path, why);
	return 0;
}

/* ---- tensors ---- */

/* BT.601 luma as PIL's convert('L') computes it, with 16-bit fixed-point
 * weights and rounding, so that Strata and a PIL-based training pipeline
 * see the same grey values. */
static int
luma(const uint8_t *p)
{
	return (int)(((uint32_t)p[0] * 19595u + (uint32_t)p[1] * 38470u + (uint32_t)p[2] * 7471u + 0x8000u) >> 16);
}

/* The value of channel c (of a C-channel input) at pixel p. */
static int
pixel_value(const st_image *img, const uint8_t *p, int c, int64_t C)
{
	bool colour = img->channels >= 3;
	if (C == 3)
		return colour ? p[c] : p[0];
	return colour ? luma(p) : p[0];
}

static int
check_count(const char *what, int n, int64_t C, char *err, size_t size)
{
	if (n == 1 || n == C)
		return 0;
	return fail(err, size, "%s has %d values: give one for every channel or %" PRId64 ", one per channel",
	            what, n, C);
}

int
st_image_to_tensor(const st_image *img, const st_shape *shape, st_dtype dtype, double scale,
                   const double *mean, int n_mean, const double *std, int n_std, void *out,
                   char *err, size_t size)
{
	char text[200];
	st_shape_format(shape, text, sizeof text);
	if (shape->rank != 4)
		return fail(err, size, "an image feeds an input of shape N x C x H x W, not %s", text);
	int64_t N = shape->dims[0], C = shape->dims[1], H = shape->dims[2], W = shape->dims[3];
	if (C != 1 && C != 3)
		return fail(err, size, "an image feeds an input of 1 or 3 channels, not %" PRId64 " (shape %s)",
		            C, text);
	if (H != img->height || W != img->width)
		return fail(err, size,
		            "the image is %dx%d pixels but the input takes %" PRId64 "x%" PRId64
		            " (width x height); the input layer's image_resize (stretch or crop) resizes it",
		            img->width, img->height, W, H);
	bool float_out = dtype == ST_DTYPE_FLOAT32 || dtype == ST_DTYPE_FLOAT16;
	int hi = 0; /* the largest raw value an integer type takes */
	switch (dtype) {
	case ST_DTYPE_FLOAT32:
	case ST_DTYPE_FLOAT16:
		break;
	case ST_DTYPE_INT64:
	case ST_DTYPE_INT32:
	case ST_DTYPE_UINT8:
		hi = 255;
		break;
	case ST_DTYPE_INT8:
		hi = 127;
		break;
	case ST_DTYPE_BOOL:
		hi = 1;
		break;
	default:
		return fail(err, size, "an image cannot feed an input of this type");
	}
	if (float_out) {
		if (check_count("image_mean", n_mean, C, err, size) != 0 ||
		    check_count("image_std", n_std, C, err, size) != 0)
			return -1;
		for (int i = 0; i < n_std; i++) {
			if (std[i] == 0 || !isfinite(std[i]))
				return fail(err, size, "image_std must be a finite number other than 0, not %g", std[i]);
		}
	}
	int elem = st_dtype_size(dtype);
	int64_t plane = H * W;
	unsigned char *o = out;
	for (int64_t c = 0; c < C; c++) {
		double m = float_out ? mean[n_mean == 1 ? 0 : c] : 0, s = float_out ? std[n_std == 1 ? 0 : c] : 1;
		for (int64_t i = 0; i < plane; i++) {
			const uint8_t *p = img->pixels + i * img->channels;
			int v = pixel_value(img, p, (int)c, C);
			unsigned char *e = o + (c * plane + i) * elem;
			if (float_out) {
				double x = ((double)v * scale - m) / s;
				if (dtype == ST_DTYPE_FLOAT32) {
					float f = (float)x;
					memcpy(e, &f, 4);
				} else {
					uint16_t h = st_float_to_half((float)x);
					memcpy(e, &h, 2);
				}
				continue;
			}
			if (v > hi)
				return fail(err, size,
				            "pixel (%" PRId64 ", %" PRId64 ") channel %" PRId64
				            " is %d, which %s cannot hold: use a wider type",
				            i % W, i / W, c, v, st_dtype_name(dtype));
			switch (dtype) {
			case ST_DTYPE_INT64: {
				int64_t w = v;
				memcpy(e, &w, 8);
				break;
			}
			case ST_DTYPE_INT32: {
				int32_t w = v;
				memcpy(e, &w, 4);
				break;
			}
			default:
				e[0] = (unsigned char)v;
				break;
			}
		}
	}
	/* Every sample of the batch is the same image. */
	size_t sample = (size_t)(C * plane * elem);
	for (int64_t n = 1; n < N; n++)
		memcpy(o + (size_t)n * sample, o, sample);
	return 0;
}

/* ---- writing ---- */

typedef struct png_sink {
	st_buf out;
	char message[256];
} png_sink;

static void
png_write_memory(png_structp png, png_bytep data, size_t n)
{
	png_sink *s = png_get_io_ptr(png);
	st_buf_add(&s->out, (const char *)data, n);
}

static void
png_flush_memory(png_structp png)
{
	(void)png;
}

static void
png_on_write_error(png_structp png, png_const_charp message)
{
	png_sink *s = png_get_error_ptr(png);
	snprintf(s->message, sizeof s->message, "%s", message);
	png_longjmp(png, 1);
}

/* One plane value as an 8-bit sample: [0, 1] to 0-255, rounded; NaN is 0. */
static png_byte
to_byte(float v)
{
	if (!(v > 0))
		return 0;
	if (v >= 1)
		return 255;
	return (png_byte)lrintf(v * 255.0f);
}

int
st_image_encode_png(const float *planes, int channels, int height, int width, char **out, size_t *len,
                    char *err, size_t size)
{
	if (channels != 1 && channels != 3)
		return fail(err, size, "a PNG takes 1 or 3 channels, not %d", channels);
	if (width <= 0 || height <= 0 || (int64_t)width * height * channels > MAX_IMAGE_BYTES)
		return fail(err, size, "cannot make a PNG of %dx%d pixels", width, height);
	png_sink sink;
	st_buf_init(&sink.out);
	sink.message[0] = '\0';
	png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &sink, png_on_write_error, png_on_warning);
	png_infop info = png ? png_create_info_struct(png) : NULL;
	if (info == NULL) {
		png_destroy_write_struct(&png, NULL);
		return fail(err, size, "out of memory making a PNG");
	}
	png_byte *volatile row = NULL;
	if (setjmp(png_jmpbuf(png))) {
		free(row);
		png_destroy_write_struct(&png, &info);
		st_buf_free(&sink.out);
		return fail(err, size, "cannot make a PNG: %s", sink.message);
	}
	png_set_write_fn(png, &sink, png_write_memory, png_flush_memory);
	png_set_IHDR(png, info, (png_uint_32)width, (png_uint_32)height, 8,
	             channels == 1 ? PNG_COLOR_TYPE_GRAY : PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
	             PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
	png_write_info(png, info);
	row = st_xmalloc((size_t)width * (size_t)channels);
	size_t plane = (size_t)width * (size_t)height;
	for (int y = 0; y < height; y++) {
		for (int x = 0; x < width; x++) {
			for (int c = 0; c < channels; c++)
				row[(size_t)x * channels + c] = to_byte(planes[c * plane + (size_t)y * width + x]);
		}
		png_write_row(png, row);
	}
	png_write_end(png, NULL);
	png_destroy_write_struct(&png, &info);
	free(row);
	*len = sink.out.len;
	*out = st_buf_take(&sink.out);
	return 0;
}

int
st_image_write_png(const char *path, const float *planes, int channels, int height, int width,
                   char *err, size_t size)
{
	char *data, why[300];
	size_t len;
	if (st_image_encode_png(planes, channels, height, width, &data, &len, why, sizeof why) != 0)
		return fail(err, size, "cannot write %s: %s", path, why);
	int rc = st_write_file_atomic(path, data, len, err, size);
	free(data);
	return rc;
}

int
st_image_resize(const st_image *src, int width, int height, bool crop, st_image *dst, char *err, size_t err_size)
{
	memset(dst, 0, sizeof *dst);
	if (width <= 0 || height <= 0 || width > 65535 || height > 65535 || src->width <= 0 || src->height <= 0) {
		snprintf(err, err_size, "cannot resize a %dx%d image to %dx%d", src->width, src->height, width, height);
		return -1;
	}
	/* The source window: the whole image, or with crop its centre with
	 * the target's aspect (the shorter side fits). */
	double wx = src->width, wy = src->height, x0 = 0, y0 = 0;
	if (crop) {
		double s = fmax((double)width / src->width, (double)height / src->height);
		wx = width / s;
		wy = height / s;
		x0 = (src->width - wx) / 2;
		y0 = (src->height - wy) / 2;
	}
	int c = src->channels;
	dst->width = width;
	dst->height = height;
	dst->channels = c;
	dst->pixels = st_xmalloc((size_t)width * (size_t)height * (size_t)c);
	/* Bilinear, sampling at pixel centres (half-pixel), edges clamped. */
	for (int y = 0; y < height; y++) {
		double sy = y0 + (y + 0.5) * wy / height - 0.5;
		sy = sy < 0 ? 0 : sy > src->height - 1 ? src->height - 1 : sy;
		int ya = (int)sy, yb = ya + 1 < src->height ? ya + 1 : ya;
		double fy = sy - ya;
		for (int x = 0; x < width; x++) {
			double sx = x0 + (x + 0.5) * wx / width - 0.5;
			sx = sx < 0 ? 0 : sx > src->width - 1 ? src->width - 1 : sx;
			int xa = (int)sx, xb = xa + 1 < src->width ? xa + 1 : xa;
			double fx = sx - xa;
			for (int k = 0; k < c; k++) {
				const uint8_t *p = src->pixels;
				size_t row_a = (size_t)ya * (size_t)src->width, row_b = (size_t)yb * (size_t)src->width;
				double top = p[(row_a + (size_t)xa) * (size_t)c + (size_t)k] * (1 - fx) +
				             p[(row_a + (size_t)xb) * (size_t)c + (size_t)k] * fx;
				double bottom = p[(row_b + (size_t)xa) * (size_t)c + (size_t)k] * (1 - fx) +
				                p[(row_b + (size_t)xb) * (size_t)c + (size_t)k] * fx;
				double v = top * (1 - fy) + bottom * fy;
				dst->pixels[((size_t)y * (size_t)width + (size_t)x) * (size_t)c + (size_t)k] = (uint8_t)(v + 0.5);
			}
		}
	}
	return 0;
}
