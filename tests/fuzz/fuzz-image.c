/* libFuzzer target for image decoding: PNG and JPEG bytes are decoded, fed
 * to a tensor, written back as PNG and decoded again to the same pixels. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "st-io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	st_image img;
	char err[512];
	if (st_image_decode(data, size, &img, err, sizeof err) != 0)
		return 0;
	if (img.width <= 0 || img.height <= 0 || img.channels < 1 || img.channels > 4 || img.pixels == NULL)
		abort();
	/* Large images (a few bytes of PNG can say 2000x2000 zeros) are only
	 * decoded: the round trip would make each run slow. */
	if ((int64_t)img.width * img.height > (1 << 18)) {
		st_image_free(&img);
		return 0;
	}
	/* Alpha is dropped: grey and grey+alpha feed one channel, colour three. */
	int channels = img.channels >= 3 ? 3 : 1;
	st_shape shape = { .dtype = ST_DTYPE_FLOAT32, .rank = 4,
	                   .dims = { 1, channels, img.height, img.width } };
	size_t n = (size_t)channels * (size_t)img.height * (size_t)img.width;
	float *planes = st_xmalloc(n * sizeof *planes);
	const double mean = 0, std = 1;
	if (st_image_to_tensor(&img, &shape, ST_DTYPE_FLOAT32, 1.0 / 255, &mean, 1, &std, 1, planes, err,
	                       sizeof err) != 0) {
		fprintf(stderr, "a decoded image does not feed its own shape: %s\n", err);
		abort();
	}
	char *png;
	size_t len;
	if (st_image_encode_png(planes, channels, img.height, img.width, &png, &len, err, sizeof err) != 0) {
		fprintf(stderr, "a decoded image does not encode: %s\n", err);
		abort();
	}
	st_image again;
	if (st_image_decode(png, len, &again, err, sizeof err) != 0) {
		fprintf(stderr, "a PNG Strata wrote does not decode: %s\n", err);
		abort();
	}
	if (again.width != img.width || again.height != img.height || again.channels != channels) {
		fprintf(stderr, "the PNG round trip changed the image's size\n");
		abort();
	}
	for (size_t i = 0; i < (size_t)img.width * (size_t)img.height; i++) {
		for (int c = 0; c < channels; c++) {
			if (again.pixels[i * channels + c] != img.pixels[i * img.channels + c]) {
				fprintf(stderr, "the PNG round trip changed pixel %zu\n", i);
				abort();
			}
		}
	}
	st_image_free(&again);
	free(png);
	free(planes);
	st_image_free(&img);
	return 0;
}
