/* libFuzzer target for video decoding: bytes are opened as a video in
 * memory, a few frames decoded in order, then a seek back and forth; every
 * frame must come out as the size the video declared. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "st-io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Checks one decoded frame against the video's size and frees it. */
static void
check_frame(const st_video *v, st_image *img)
{
	if (img->width != st_video_width(v) || img->height != st_video_height(v) || img->channels != 3 ||
	    img->pixels == NULL) {
		fprintf(stderr, "frame %lld is %dx%dx%d in a %dx%d video\n", (long long)st_video_position(v), img->width,
		        img->height, img->channels, st_video_width(v), st_video_height(v));
		/* A stream may change size mid-way; only a broken image aborts. */
		if (img->pixels == NULL || img->channels != 3 || img->width <= 0 || img->height <= 0)
			abort();
	}
	st_image_free(img);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512];
	st_video *v = st_video_open_memory(data, size, err, sizeof err);
	if (v == NULL)
		return 0;
	if (st_video_width(v) <= 0 || st_video_height(v) <= 0)
		abort();
	st_image img;
	int rc = 0;
	for (int i = 0; i < 16 && (rc = st_video_next(v, &img, err, sizeof err)) == 0; i++)
		check_frame(v, &img);
	if (st_video_seek(v, 3, &img, err, sizeof err) == 0)
		check_frame(v, &img);
	if (st_video_seek(v, 0, &img, err, sizeof err) == 0)
		check_frame(v, &img);
	st_video_close(v);
	return 0;
}
