/* Unit tests: PNG and JPEG decoding against the pixels expected for each
 * fixture (tests/data/images, made by tests/data/images/make.py), damaged
 * files, the input layer's image rules, and PNG output. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"
#include "st-io.h"

static char *
fixture(const char *name)
{
	const char *top = getenv("top_srcdir");
	cr_assert_not_null(top, "top_srcdir is not set (run through make check)");
	return st_xasprintf("%s/tests/data/images/%s", top, name);
}

/* Reads fixture name and compares every sample with name.npy. */
static void
assert_decodes(const char *name, int width, int height, int channels)
{
	char *path = fixture(name), *want_path = st_xasprintf("%s.npy", path), err[512];
	st_image img;
	cr_assert_eq(st_image_read(path, &img, err, sizeof err), 0, "%s: %s", name, err);
	cr_assert_eq(img.width, width, "%s: width %d", name, img.width);
	cr_assert_eq(img.height, height, "%s: height %d", name, img.height);
	cr_assert_eq(img.channels, channels, "%s: %d channels", name, img.channels);
	st_npy want;
	cr_assert_eq(st_npy_read(want_path, &want, err, sizeof err), 0, "%s", err);
	cr_assert_eq(want.type, ST_NPY_U1);
	cr_assert_eq(want.rank, 3);
	cr_assert_eq(want.dims[0], height);
	cr_assert_eq(want.dims[1], width);
	cr_assert_eq(want.dims[2], channels);
	const uint8_t *w = want.data;
	for (int64_t i = 0; i < want.count; i++) {
		int64_t pixel = i / channels;
		cr_assert_eq(img.pixels[i], w[i], "%s: pixel (%lld, %lld) channel %lld is %d, expected %d", name,
		             (long long)(pixel % width), (long long)(pixel / width), (long long)(i % channels),
		             img.pixels[i], w[i]);
	}
	st_npy_free(&want);
	st_image_free(&img);
	cr_assert_null(img.pixels);
	free(want_path);
	free(path);
}

static const uint8_t *
pixel(const st_image *img, int x, int y)
{
	return img->pixels + ((size_t)y * img->width + x) * img->channels;
}

/* ---- decoding ---- */

Test(image, decodes_every_kind_of_png)
{
	assert_decodes("grey.png", 5, 3, 1);
	assert_decodes("grey1.png", 5, 3, 1);
	assert_decodes("grey_alpha.png", 5, 3, 2);
	assert_decodes("grey_trns.png", 5, 3, 2);
	assert_decodes("rgb.png", 5, 3, 3);
	assert_decodes("rgba.png", 5, 3, 4);
	assert_decodes("palette.png", 5, 3, 3);
	assert_decodes("palette_trns.png", 5, 3, 4);
	assert_decodes("grey16.png", 5, 3, 1);
	assert_decodes("rgb16.png", 5, 3, 3);
	assert_decodes("interlaced.png", 11, 9, 3);
	assert_decodes("interlaced_grey16.png", 11, 9, 1);
}

Test(image, png_pixel_values_by_hand)
{
	char *path = fixture("rgb.png"), err[512];
	st_image img;
	cr_assert_eq(st_image_read(path, &img, err, sizeof err), 0, "%s", err);
	/* The pattern is (53 x + 97 y + 71 c + 13) mod 256. */
	cr_assert(memcmp(pixel(&img, 0, 0), (uint8_t[]){ 13, 84, 155 }, 3) == 0);
	cr_assert(memcmp(pixel(&img, 4, 2), (uint8_t[]){ 163, 234, 49 }, 3) == 0);
	st_image_free(&img);
	free(path);

	/* 16 bits scale with rounding: 55381 (0xd855) is 215.5 of 255, not the
	 * high byte 216. */
	path = fixture("grey16.png");
	cr_assert_eq(st_image_read(path, &img, err, sizeof err), 0, "%s", err);
	cr_assert_eq(pixel(&img, 2, 1)[0], 215);
	st_image_free(&img);
	free(path);

	/* Palette entry 0 with tRNS alpha 0; entries past the tRNS list are opaque. */
	path = fixture("palette_trns.png");
	cr_assert_eq(st_image_read(path, &img, err, sizeof err), 0, "%s", err);
	cr_assert(memcmp(pixel(&img, 0, 0), (uint8_t[]){ 10, 20, 30, 0 }, 4) == 0);
	cr_assert(memcmp(pixel(&img, 1, 0), (uint8_t[]){ 255, 0, 0, 128 }, 4) == 0);
	cr_assert(memcmp(pixel(&img, 4, 0), (uint8_t[]){ 200, 100, 50, 255 }, 4) == 0);
	st_image_free(&img);
	free(path);
}

Test(image, decodes_jpeg_as_libjpeg_turbo_does_for_pil)
{
	assert_decodes("rgb.jpg", 16, 8, 3);
	assert_decodes("grey.jpg", 16, 8, 1);
	assert_decodes("progressive.jpg", 16, 8, 3);

	/* And close to what was encoded: flat halves of two colours. */
	char *path = fixture("rgb.jpg"), err[512];
	st_image img;
	cr_assert_eq(st_image_read(path, &img, err, sizeof err), 0, "%s", err);
	const uint8_t left[3] = { 200, 30, 40 }, right[3] = { 20, 160, 230 };
	for (int c = 0; c < 3; c++) {
		cr_assert(abs(pixel(&img, 1, 1)[c] - left[c]) <= 4, "channel %d: %d", c, pixel(&img, 1, 1)[c]);
		cr_assert(abs(pixel(&img, 14, 6)[c] - right[c]) <= 4, "channel %d: %d", c, pixel(&img, 14, 6)[c]);
	}
	st_image_free(&img);
	free(path);
}

static void
assert_read_fails(const char *name, const char *message)
{
	char *path = fixture(name), err[512], want[1024];
	st_image img;
	cr_assert_eq(st_image_read(path, &img, err, sizeof err), -1, "%s was accepted", name);
	snprintf(want, sizeof want, "%s: %s", path, message);
	cr_assert_str_eq(err, want);
	cr_assert_null(img.pixels);
	free(path);
}

Test(image, refuses_damaged_and_foreign_files)
{
	assert_read_fails("cmyk.jpg", "CMYK JPEG images are not supported; save the image as RGB");
	assert_read_fails("truncated.png", "bad PNG image: the file ends before the image does (truncated)");
	assert_read_fails("truncated.jpg", "bad JPEG image: Premature end of JPEG file");
	assert_read_fails("bad_crc.png", "bad PNG image: IHDR: CRC error");
	assert_read_fails("not_an_image.txt", "neither a PNG nor a JPEG image");
	assert_read_fails("rgb.png.npy", "a NumPy .npy file, not an image");

	char err[512];
	st_image img;
	cr_assert_eq(st_image_read("/nonexistent/cat.png", &img, err, sizeof err), -1);
	cr_assert_str_eq(err, "cannot read /nonexistent/cat.png: No such file or directory");
	cr_assert_eq(st_image_decode("", 0, &img, err, sizeof err), -1);
	cr_assert_str_eq(err, "the file is empty");
	/* A PNG signature alone, and a JPEG start-of-image alone. */
	cr_assert_eq(st_image_decode("\x89PNG\r\n\x1a\n", 8, &img, err, sizeof err), -1);
	cr_assert_eq(st_image_decode("\xff\xd8\xff", 3, &img, err, sizeof err), -1);
	cr_assert(strncmp(err, "bad JPEG image: ", 16) == 0, "%s", err);
}

/* Every prefix of a good file is refused, never decoded or crashed on. */
static void
assert_every_prefix_refused(const char *name)
{
	char *path = fixture(name), err[512];
	size_t len;
	char *data = st_read_file(path, &len);
	cr_assert_not_null(data);
	st_image img;
	cr_assert_eq(st_image_decode(data, len, &img, err, sizeof err), 0, "%s: %s", name, err);
	st_image_free(&img);
	for (size_t n = 0; n < len; n++) {
		/* A copy of exactly n bytes, so that the sanitizers and valgrind see overreads. */
		char *cut = st_xmalloc(n ? n : 1);
		memcpy(cut, data, n);
		cr_assert_eq(st_image_decode(cut, n, &img, err, sizeof err), -1, "%s cut to %zu bytes was accepted",
		             name, n);
		cr_assert_null(img.pixels);
		free(cut);
	}
	free(data);
	free(path);
}

Test(image, every_truncation_is_refused)
{
	assert_every_prefix_refused("rgb.png");
	assert_every_prefix_refused("interlaced.png");
	assert_every_prefix_refused("rgb.jpg");
	assert_every_prefix_refused("progressive.jpg");
}

/* ---- the input layer's rules ---- */

static st_shape
nchw(int64_t n, int64_t c, int64_t h, int64_t w)
{
	return (st_shape){ .dtype = ST_DTYPE_FLOAT32, .rank = 4, .dims = { n, c, h, w } };
}

/* A 2x2 RGBA image: red, green / blue, a colour; alpha varies. */
static const uint8_t rgba_pixels[16] = { 255, 0, 0, 10, 0, 255, 0, 20, 0, 0, 255, 30, 10, 200, 90, 40 };

Test(image, colour_to_three_channels_with_scale_mean_and_std)
{
	st_image img = { .width = 2, .height = 2, .channels = 4, .pixels = (uint8_t *)rgba_pixels };
	st_shape s = nchw(1, 3, 2, 2);
	const double mean[3] = { 0.485, 0.456, 0.406 }, std[3] = { 0.229, 0.224, 0.225 };
	float out[12];
	char err[256];
	cr_assert_eq(st_image_to_tensor(&img, &s, ST_DTYPE_FLOAT32, 1.0 / 255, mean, 3, std, 3, out, err, sizeof err),
	             0, "%s", err);
	for (int c = 0; c < 3; c++) {
		for (int i = 0; i < 4; i++) {
			float want = (float)((rgba_pixels[i * 4 + c] * (1.0 / 255) - mean[c]) / std[c]);
			cr_assert_eq(out[c * 4 + i], want, "channel %d pixel %d: %g, expected %g", c, i, out[c * 4 + i],
			             want);
		}
	}
	/* NCHW: the red plane first, alpha nowhere. */
	cr_assert_eq(out[0], (float)((1.0 - 0.485) / 0.229));
	cr_assert_eq(out[4 + 1], (float)((1.0 - 0.456) / 0.224));

	/* One mean and one std for every channel; scale 1 keeps 0-255. */
	const double one_mean = 100, one_std = 2;
	cr_assert_eq(st_image_to_tensor(&img, &s, ST_DTYPE_FLOAT32, 1, &one_mean, 1, &one_std, 1, out, err, sizeof err),
	             0);
	cr_assert_eq(out[0], 77.5f);
	cr_assert_eq(out[3], -45.0f);
	cr_assert_eq(out[4 + 3], 50.0f);
}

Test(image, grey_repeats_into_three_channels)
{
	const uint8_t grey[6] = { 0, 50, 100, 150, 200, 255 };
	st_image img = { .width = 3, .height = 2, .channels = 1, .pixels = (uint8_t *)grey };
	st_shape s = nchw(1, 3, 2, 3);
	const double mean = 0, std = 1;
	float out[18];
	char err[256];
	cr_assert_eq(st_image_to_tensor(&img, &s, ST_DTYPE_FLOAT32, 1, &mean, 1, &std, 1, out, err, sizeof err), 0,
	             "%s", err);
	for (int c = 0; c < 3; c++)
		for (int i = 0; i < 6; i++)
			cr_assert_eq(out[c * 6 + i], (float)grey[i]);

	/* Grey and alpha: the alpha is dropped. */
	const uint8_t grey_alpha[4] = { 7, 255, 9, 0 };
	st_image ga = { .width = 2, .height = 1, .channels = 2, .pixels = (uint8_t *)grey_alpha };
	st_shape one = nchw(1, 1, 1, 2);
	cr_assert_eq(st_image_to_tensor(&ga, &one, ST_DTYPE_FLOAT32, 1, &mean, 1, &std, 1, out, err, sizeof err), 0);
	cr_assert_eq(out[0], 7.0f);
	cr_assert_eq(out[1], 9.0f);
	st_shape three = nchw(1, 3, 1, 2);
	cr_assert_eq(st_image_to_tensor(&ga, &three, ST_DTYPE_FLOAT32, 1, &mean, 1, &std, 1, out, err, sizeof err), 0);
	cr_assert_eq(out[5], 9.0f);
}

Test(image, colour_to_one_channel_is_luma_as_pil_computes_it)
{
	/* PIL's Image.convert('L') of these pixels gives 76 150 29 131 255 71. */
	const uint8_t rgb[18] = { 255, 0, 0, 0, 255, 0, 0, 0, 255, 10, 200, 90, 255, 255, 255, 123, 45, 67 };
	st_image img = { .width = 6, .height = 1, .channels = 3, .pixels = (uint8_t *)rgb };
	st_shape s = nchw(1, 1, 1, 6);
	s.dtype = ST_DTYPE_UINT8;
	uint8_t out[6];
	char err[256];
	cr_assert_eq(st_image_to_tensor(&img, &s, ST_DTYPE_UINT8, 1, NULL, 0, NULL, 0, out, err, sizeof err), 0, "%s",
	             err);
	cr_assert(memcmp(out, (uint8_t[]){ 76, 150, 29, 131, 255, 71 }, 6) == 0, "%d %d %d %d %d %d", out[0], out[1],
	          out[2], out[3], out[4], out[5]);

	/* RGBA too, alpha ignored. */
	st_image rgba = { .width = 2, .height = 2, .channels = 4, .pixels = (uint8_t *)rgba_pixels };
	st_shape g = nchw(1, 1, 2, 2);
	const double mean = 0, std = 1;
	float f[4];
	cr_assert_eq(st_image_to_tensor(&rgba, &g, ST_DTYPE_FLOAT32, 1, &mean, 1, &std, 1, f, err, sizeof err), 0);
	cr_assert_eq(f[0], 76.0f);
	cr_assert_eq(f[3], 131.0f);
}

Test(image, luma_matches_pil_over_many_colours)
{
	char *path = fixture("luma.png"), *want_path = fixture("luma.png.npy"), err[512];
	st_image img;
	cr_assert_eq(st_image_read(path, &img, err, sizeof err), 0, "%s", err);
	st_npy want;
	cr_assert_eq(st_npy_read(want_path, &want, err, sizeof err), 0, "%s", err);
	cr_assert_eq(want.count, (int64_t)img.width * img.height);
	st_shape s = nchw(1, 1, img.height, img.width);
	uint8_t *out = st_xmalloc((size_t)want.count);
	cr_assert_eq(st_image_to_tensor(&img, &s, ST_DTYPE_UINT8, 1, NULL, 0, NULL, 0, out, err, sizeof err), 0);
	for (int64_t i = 0; i < want.count; i++) {
		const uint8_t *p = img.pixels + i * 3;
		cr_assert_eq(out[i], ((const uint8_t *)want.data)[i], "(%d, %d, %d) gives %d, PIL %d", p[0], p[1], p[2],
		             out[i], ((const uint8_t *)want.data)[i]);
	}
	free(out);
	st_npy_free(&want);
	st_image_free(&img);
	free(want_path);
	free(path);
}

Test(image, batch_repeats_the_image)
{
	st_image img = { .width = 2, .height = 2, .channels = 4, .pixels = (uint8_t *)rgba_pixels };
	st_shape s = nchw(3, 3, 2, 2);
	const double mean = 0.5, std = 0.25;
	float out[36];
	char err[256];
	cr_assert_eq(st_image_to_tensor(&img, &s, ST_DTYPE_FLOAT32, 1.0 / 255, &mean, 1, &std, 1, out, err, sizeof err),
	             0, "%s", err);
	cr_assert(memcmp(out, out + 12, 12 * sizeof *out) == 0);
	cr_assert(memcmp(out, out + 24, 12 * sizeof *out) == 0);
	cr_assert_eq(out[0], 2.0f);   /* (1 - 0.5) / 0.25 */
	cr_assert_eq(out[1], -2.0f);  /* (0 - 0.5) / 0.25 */
}

Test(image, float16_and_integer_types)
{
	st_image img = { .width = 2, .height = 2, .channels = 4, .pixels = (uint8_t *)rgba_pixels };
	st_shape s = nchw(1, 3, 2, 2);
	const double mean = 0, std = 1;
	char err[256];
	uint16_t h[12];
	cr_assert_eq(st_image_to_tensor(&img, &s, ST_DTYPE_FLOAT16, 1.0 / 255, &mean, 1, &std, 1, h, err, sizeof err),
	             0, "%s", err);
	cr_assert_eq(h[0], st_float_to_half(1.0f));
	cr_assert_eq(h[3], st_float_to_half((float)(10 / 255.0)));

	/* Integer inputs take the raw values: scale, mean and std do not apply. */
	const double odd = 1000;
	int64_t i64[12];
	cr_assert_eq(st_image_to_tensor(&img, &s, ST_DTYPE_INT64, 0.5, &odd, 1, &odd, 1, i64, err, sizeof err), 0);
	cr_assert_eq(i64[0], 255);
	cr_assert_eq(i64[3], 10);
	cr_assert_eq(i64[4 + 3], 200);
	int32_t i32[12];
	cr_assert_eq(st_image_to_tensor(&img, &s, ST_DTYPE_INT32, 1, NULL, 0, NULL, 0, i32, err, sizeof err), 0);
	cr_assert_eq(i32[8 + 3], 90);
	uint8_t u8[12];
	cr_assert_eq(st_image_to_tensor(&img, &s, ST_DTYPE_UINT8, 1, NULL, 0, NULL, 0, u8, err, sizeof err), 0);
	cr_assert(memcmp(u8, (uint8_t[]){ 255, 0, 0, 10, 0, 255, 0, 200, 0, 0, 255, 90 }, 12) == 0);

	int8_t i8[12];
	cr_assert_eq(st_image_to_tensor(&img, &s, ST_DTYPE_INT8, 1, NULL, 0, NULL, 0, i8, err, sizeof err), -1);
	cr_assert_str_eq(err, "pixel (0, 0) channel 0 is 255, which int8 cannot hold: use a wider type");
	const uint8_t dark[4] = { 0, 1, 127, 0 };
	st_image d = { .width = 2, .height = 2, .channels = 1, .pixels = (uint8_t *)dark };
	st_shape one = nchw(1, 1, 2, 2);
	cr_assert_eq(st_image_to_tensor(&d, &one, ST_DTYPE_INT8, 1, NULL, 0, NULL, 0, i8, err, sizeof err), 0);
	cr_assert_eq(i8[2], 127);
	cr_assert_eq(st_image_to_tensor(&d, &one, ST_DTYPE_BOOL, 1, NULL, 0, NULL, 0, u8, err, sizeof err), -1);
	cr_assert_str_eq(err, "pixel (0, 1) channel 0 is 127, which bool cannot hold: use a wider type");
}

Test(image, refuses_shapes_and_options_that_do_not_fit)
{
	st_image img = { .width = 2, .height = 2, .channels = 4, .pixels = (uint8_t *)rgba_pixels };
	const double mean[3] = { 0, 0, 0 }, std[3] = { 1, 1, 1 }, zero = 0;
	float out[64];
	char err[256];

	st_shape s = nchw(1, 3, 224, 224);
	cr_assert_eq(st_image_to_tensor(&img, &s, ST_DTYPE_FLOAT32, 1, mean, 1, std, 1, out, err, sizeof err), -1);
	cr_assert_str_eq(err, "the image is 2x2 pixels but the input takes 224x224 (width x height); the input layer's "
	                 "image_resize (stretch or crop) resizes it");
	s = nchw(1, 3, 2, 3);
	cr_assert_eq(st_image_to_tensor(&img, &s, ST_DTYPE_FLOAT32, 1, mean, 1, std, 1, out, err, sizeof err), -1);
	cr_assert_str_eq(err, "the image is 2x2 pixels but the input takes 3x2 (width x height); the input layer's "
	                 "image_resize (stretch or crop) resizes it");

	s = nchw(1, 4, 2, 2);
	cr_assert_eq(st_image_to_tensor(&img, &s, ST_DTYPE_FLOAT32, 1, mean, 1, std, 1, out, err, sizeof err), -1);
	cr_assert_str_eq(err, "an image feeds an input of 1 or 3 channels, not 4 (shape 1x4x2x2)");
	st_shape flat = { .rank = 2, .dims = { 1, 12 } };
	cr_assert_eq(st_image_to_tensor(&img, &flat, ST_DTYPE_FLOAT32, 1, mean, 1, std, 1, out, err, sizeof err), -1);
	cr_assert_str_eq(err, "an image feeds an input of shape N x C x H x W, not 1x12");

	s = nchw(1, 3, 2, 2);
	cr_assert_eq(st_image_to_tensor(&img, &s, ST_DTYPE_FLOAT32, 1, mean, 2, std, 1, out, err, sizeof err), -1);
	cr_assert_str_eq(err, "image_mean has 2 values: give one for every channel or 3, one per channel");
	cr_assert_eq(st_image_to_tensor(&img, &s, ST_DTYPE_FLOAT32, 1, mean, 3, std, 0, out, err, sizeof err), -1);
	cr_assert_str_eq(err, "image_std has 0 values: give one for every channel or 3, one per channel");
	st_shape g = nchw(1, 1, 2, 2);
	cr_assert_eq(st_image_to_tensor(&img, &g, ST_DTYPE_FLOAT32, 1, mean, 3, std, 1, out, err, sizeof err), -1);
	cr_assert_str_eq(err, "image_mean has 3 values: give one for every channel or 1, one per channel");
	cr_assert_eq(st_image_to_tensor(&img, &s, ST_DTYPE_FLOAT32, 1, mean, 1, &zero, 1, out, err, sizeof err), -1);
	cr_assert_str_eq(err, "image_std must be a finite number other than 0, not 0");
}

/* ---- writing ---- */

Test(image, writes_png_clamped_to_0_255)
{
	char *dir = test_temp_dir("image"), err[512];
	const float planes[12] = {
		-1, 0, 0.5f, 1,             /* red: clamped below, 0, half (rounds to even 128), 1 */
		2, NAN, 0.25f, 1.0f / 255,  /* green: clamped above, NaN is 0, 63.75, 1 */
		0.2f, 0.4f, 0.6f, 0.8f,     /* blue */
	};
	char *path = st_xasprintf("%s/out.png", dir);
	cr_assert_eq(st_image_write_png(path, planes, 3, 2, 2, err, sizeof err), 0, "%s", err);
	st_image img;
	cr_assert_eq(st_image_read(path, &img, err, sizeof err), 0, "%s", err);
	cr_assert_eq(img.width, 2);
	cr_assert_eq(img.height, 2);
	cr_assert_eq(img.channels, 3);
	const uint8_t want[12] = { 0, 255, 51, 0, 0, 102, 128, 64, 153, 255, 1, 204 };
	cr_assert(memcmp(img.pixels, want, 12) == 0);
	st_image_free(&img);

	/* Grey, and a file that exists is replaced whole. */
	const float grey[3] = { 0, 0.5f, 1 };
	cr_assert_eq(st_image_write_png(path, grey, 1, 1, 3, err, sizeof err), 0, "%s", err);
	cr_assert_eq(st_image_read(path, &img, err, sizeof err), 0, "%s", err);
	cr_assert_eq(img.channels, 1);
	cr_assert(memcmp(img.pixels, (uint8_t[]){ 0, 128, 255 }, 3) == 0);
	st_image_free(&img);

	cr_assert_eq(st_image_write_png(path, grey, 2, 1, 1, err, sizeof err), -1);
	char want_err[600];
	snprintf(want_err, sizeof want_err, "cannot write %s: a PNG takes 1 or 3 channels, not 2", path);
	cr_assert_str_eq(err, want_err);
	char *missing = st_xasprintf("%s/no/such/out.png", dir);
	cr_assert_eq(st_image_write_png(missing, grey, 1, 1, 3, err, sizeof err), -1);
	cr_assert(strstr(err, "no/such") != NULL, "%s", err);
	free(missing);
	free(path);
	test_remove_dir(dir);
}

Test(image, resize_stretches_and_crops)
{
	/* A 2x2 grey image: 0 64 / 128 255. */
	uint8_t px[] = { 0, 64, 128, 255 };
	st_image src = { .width = 2, .height = 2, .channels = 1, .pixels = px };
	st_image dst;
	char err[256];
	/* The same size comes back the same. */
	cr_assert_eq(st_image_resize(&src, 2, 2, false, &dst, err, sizeof err), 0, "%s", err);
	cr_assert_eq(memcmp(dst.pixels, px, 4), 0);
	st_image_free(&dst);
	/* 4x4: corners keep the corner values (clamped edges), the middle
	 * interpolates: row 1, column 1 samples (0.25, 0.25). */
	cr_assert_eq(st_image_resize(&src, 4, 4, false, &dst, err, sizeof err), 0, "%s", err);
	cr_assert_eq(dst.pixels[0], 0);
	cr_assert_eq(dst.pixels[3], 64);
	cr_assert_eq(dst.pixels[12], 128);
	cr_assert_eq(dst.pixels[15], 255);
	/* (1-.25)(1-.25)*0 + .25*.75*64 + .75*.25*128 + .25*.25*255 = 51.9 */
	cr_assert_eq(dst.pixels[5], 52);
	st_image_free(&dst);
	/* A 4x1 strip cropped to 1x1 keeps the centre: the mean of columns 1 and 2. */
	uint8_t strip[] = { 0, 100, 200, 255 };
	st_image wide = { .width = 4, .height = 1, .channels = 1, .pixels = strip };
	cr_assert_eq(st_image_resize(&wide, 1, 1, true, &dst, err, sizeof err), 0, "%s", err);
	cr_assert_eq(dst.pixels[0], 150);
	st_image_free(&dst);
	/* Stretched instead, the whole strip: sampled at x = 1.5, the same here. */
	cr_assert_eq(st_image_resize(&wide, 2, 1, false, &dst, err, sizeof err), 0, "%s", err);
	cr_assert_eq(dst.pixels[0], 50);
	cr_assert_eq(dst.pixels[1], 228);
	st_image_free(&dst);
	cr_assert_eq(st_image_resize(&src, 0, 4, false, &dst, err, sizeof err), -1);
}
