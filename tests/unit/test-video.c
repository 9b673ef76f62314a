/* Unit tests: video inputs through FFmpeg: the tiny clips of
 * tests/data/video (made by make.sh there) in four containers, stepping,
 * seeking to exact frames, reading from memory, and refusals. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "st-io.h"

#ifdef ST_HAVE_FFMPEG

static char *
clip(const char *name)
{
	return st_xasprintf("%s/tests/data/video/%s", getenv("top_srcdir"), name);
}

/* Every frame of a clip, decoded in order; caller frees each and the list. */
static st_image *
all_frames(st_video *v, int *n)
{
	st_image *frames = st_xcalloc(64, sizeof *frames);
	char err[256];
	int rc;
	*n = 0;
	while (*n < 64 && (rc = st_video_next(v, &frames[*n], err, sizeof err)) == 0) {
		cr_assert_eq(st_video_position(v), *n);
		(*n)++;
	}
	cr_assert_eq(rc, 1, "%s", err);
	return frames;
}

static void
free_frames(st_image *frames, int n)
{
	for (int i = 0; i < n; i++)
		st_image_free(&frames[i]);
	free(frames);
}

static void
check_clip(const char *name)
{
	cr_assert(st_video_available());
	char *path = clip(name), err[256];
	st_video *v = st_video_open(path, err, sizeof err);
	cr_assert_not_null(v, "%s", err);
	cr_assert_eq(st_video_width(v), 32);
	cr_assert_eq(st_video_height(v), 24);
	cr_assert_gt(st_video_fps(v), 0);
	cr_assert_eq(st_video_position(v), -1);
	int n;
	st_image *frames = all_frames(v, &n);
	cr_assert_eq(n, 12, "%s: %d frames", name, n);
	cr_assert(frames[0].width == 32 && frames[0].height == 24 && frames[0].channels == 3);
	/* testsrc moves: the first and the last frame differ. */
	cr_assert_neq(memcmp(frames[0].pixels, frames[11].pixels, 32 * 24 * 3), 0);
	/* After the end, the end again. */
	st_image extra;
	cr_assert_eq(st_video_next(v, &extra, err, sizeof err), 1);
	/* Seeking lands on the exact frame, back and forth. */
	const int64_t targets[] = { 7, 2, 0, 11, 5 };
	for (int k = 0; k < 5; k++) {
		st_image img;
		cr_assert_eq(st_video_seek(v, targets[k], &img, err, sizeof err), 0, "%s: seek %lld: %s", name,
		             (long long)targets[k], err);
		cr_assert_eq(st_video_position(v), targets[k]);
		cr_assert_eq(memcmp(img.pixels, frames[targets[k]].pixels, 32 * 24 * 3), 0, "%s: frame %lld differs",
		             name, (long long)targets[k]);
		st_image_free(&img);
		/* And the next frame follows it. */
		if (targets[k] < 11) {
			cr_assert_eq(st_video_next(v, &img, err, sizeof err), 0, "%s", err);
			cr_assert_eq(st_video_position(v), targets[k] + 1);
			cr_assert_eq(memcmp(img.pixels, frames[targets[k] + 1].pixels, 32 * 24 * 3), 0);
			st_image_free(&img);
		}
	}
	st_image img;
	cr_assert_eq(st_video_seek(v, 40, &img, err, sizeof err), 1, "past the end");
	free_frames(frames, n);
	st_video_close(v);
	free(path);
}

Test(video, matroska_ffv1)
{
	check_clip("tiny.mkv");
}

Test(video, avi_mjpeg)
{
	check_clip("tiny.avi");
}

Test(video, mpeg1)
{
	check_clip("tiny.mpg");
}

Test(video, wmv)
{
	check_clip("tiny.wmv");
}

Test(video, from_memory)
{
	char *path = clip("tiny.mkv"), err[256];
	size_t len;
	char *data = st_read_file(path, &len);
	cr_assert_not_null(data);
	st_video *v = st_video_open_memory(data, len, err, sizeof err);
	cr_assert_not_null(v, "%s", err);
	int n;
	st_image *frames = all_frames(v, &n);
	cr_assert_eq(n, 12);
	free_frames(frames, n);
	st_video_close(v);
	/* Cut short: what there is decodes, or it is refused; never a crash. */
	v = st_video_open_memory(data, len / 3, err, sizeof err);
	if (v != NULL) {
		st_image img;
		int rc;
		while ((rc = st_video_next(v, &img, err, sizeof err)) == 0)
			st_image_free(&img);
		st_video_close(v);
	}
	free(data);
	free(path);
}

Test(video, refusals_name_the_file)
{
	char err[256];
	cr_assert_null(st_video_open("/nonexistent/clip.mkv", err, sizeof err));
	cr_assert_str_eq(err, "/nonexistent/clip.mkv: cannot open the video: No such file or directory");
	/* A text file is no video. */
	char *dir = test_temp_dir("video");
	char *text = st_xasprintf("%s/notes.avi", dir);
	cr_assert_eq(st_write_file_atomic(text, "hello, this is not a video\n", 27, err, sizeof err), 0);
	cr_assert_null(st_video_open(text, err, sizeof err));
	cr_assert(strncmp(err, text, strlen(text)) == 0, "%s", err);
	free(text);
	free(dir);
	const char junk[] = "\x1a\x45\xdf\xa3 garbage that starts like Matroska";
	cr_assert_null(st_video_open_memory(junk, sizeof junk, err, sizeof err));
}

#else

Test(video, without_ffmpeg_says_so)
{
	char err[256];
	cr_assert(!st_video_available());
	cr_assert_null(st_video_open("clip.mkv", err, sizeof err));
	cr_assert(strstr(err, "built without FFmpeg") != NULL, "%s", err);
}

#endif
