/* Video files as model inputs: FFmpeg's libavformat finds the first video
 * stream of an AVI, MPEG, MKV, WMV (or any container it reads), libavcodec
 * decodes it, and libswscale turns each frame into 8-bit RGB (st_image).
 * Frames come one at a time (next), and seeking goes to the key frame at
 * or before a time and decodes forward to the frame asked for, so that
 * stepping and seeking land on exact frames. Without FFmpeg at build time
 * every call says so. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "st-io.h"

#ifdef ST_HAVE_FFMPEG

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/imgutils.h>
#include <libswscale/swscale.h>

/* Frames larger than this are refused (a picture this big is no input). */
#define MAX_SIDE 16384

struct st_video {
	AVFormatContext *format;
	AVCodecContext *codec;
	AVIOContext *io;          /* for videos in memory, else NULL */
	struct memory_source {
		const uint8_t *data;
		size_t len, at;
	} memory;
	struct SwsContext *scale;
	AVPacket *packet;
	AVFrame *frame;
	int stream;
	AVRational time_base;
	double fps;
	int64_t frames;           /* counted by the container, or -1 */
	int64_t position;         /* index of the last frame returned, -1 before the first */
	bool draining;            /* the file ended; the decoder gives what it holds */
	bool ended;
};

static void
av_message(int code, char *buf, size_t size)
{
	char text[AV_ERROR_MAX_STRING_SIZE] = "";
	av_strerror(code, text, sizeof text);
	snprintf(buf, size, "%s", text);
}

/* Reading from memory, for the fuzz target and tests. */
static int
memory_read(void *opaque, uint8_t *buf, int size)
{
	struct memory_source *m = opaque;
	size_t left = m->len - m->at;
	if (left == 0)
		return AVERROR_EOF;
	size_t n = (size_t)size < left ? (size_t)size : left;
	memcpy(buf, m->data + m->at, n);
	m->at += n;
	return (int)n;
}

static int64_t
memory_seek(void *opaque, int64_t offset, int whence)
{
	struct memory_source *m = opaque;
	if (whence & AVSEEK_SIZE)
		return (int64_t)m->len;
	int64_t base = (whence & 3) == SEEK_CUR ? (int64_t)m->at : (whence & 3) == SEEK_END ? (int64_t)m->len : 0;
	int64_t to = base + offset;
	if (to < 0 || to > (int64_t)m->len)
		return AVERROR(EINVAL);
	m->at = (size_t)to;
	return to;
}

void
st_video_close(st_video *v)
{
	if (v == NULL)
		return;
	sws_freeContext(v->scale);
	av_frame_free(&v->frame);
	av_packet_free(&v->packet);
	avcodec_free_context(&v->codec);
	avformat_close_input(&v->format);
	if (v->io != NULL) {
		av_freep(&v->io->buffer);
		avio_context_free(&v->io);
	}
	free(v);
}

/* Finds the video stream and opens its decoder; v->format is open. */
static int
open_stream(st_video *v, const char *name, char *err, size_t err_size)
{
	char why[256];
	int rc = avformat_find_stream_info(v->format, NULL);
	if (rc < 0) {
		av_message(rc, why, sizeof why);
		snprintf(err, err_size, "%s: cannot read the streams: %s", name, why);
		return -1;
	}
	const AVCodec *decoder = NULL;
	v->stream = av_find_best_stream(v->format, AVMEDIA_TYPE_VIDEO, -1, -1, &decoder, 0);
	if (v->stream < 0 || decoder == NULL) {
		snprintf(err, err_size, "%s: %s", name,
		         v->stream == AVERROR_DECODER_NOT_FOUND ? "no decoder for its video stream"
		                                                : "the file holds no video stream");
		return -1;
	}
	AVStream *st = v->format->streams[v->stream];
	v->codec = avcodec_alloc_context3(decoder);
	if (v->codec == NULL || avcodec_parameters_to_context(v->codec, st->codecpar) < 0) {
		snprintf(err, err_size, "%s: cannot set up the %s decoder", name, decoder->name);
		return -1;
	}
	v->codec->thread_count = 1; /* frames in order, and no threads of its own beside ours */
	if ((rc = avcodec_open2(v->codec, decoder, NULL)) < 0) {
		av_message(rc, why, sizeof why);
		snprintf(err, err_size, "%s: cannot open the %s decoder: %s", name, decoder->name, why);
		return -1;
	}
	if (v->codec->width <= 0 || v->codec->height <= 0 || v->codec->width > MAX_SIDE ||
	    v->codec->height > MAX_SIDE) {
		snprintf(err, err_size, "%s: the video's frames are %dx%d; Strata takes 1 to %d pixels a side", name,
		         v->codec->width, v->codec->height, MAX_SIDE);
		return -1;
	}
	v->time_base = st->time_base;
	AVRational rate = st->avg_frame_rate.num > 0 ? st->avg_frame_rate : st->r_frame_rate;
	v->fps = rate.num > 0 && rate.den > 0 ? av_q2d(rate) : 0;
	v->frames = st->nb_frames > 0 ? st->nb_frames : -1;
	if (v->frames < 0 && v->fps > 0 && v->format->duration > 0)
		v->frames = (int64_t)((double)v->format->duration / AV_TIME_BASE * v->fps + 0.5);
	v->packet = av_packet_alloc();
	v->frame = av_frame_alloc();
	v->position = -1;
	return 0;
}

st_video *
st_video_open(const char *path, char *err, size_t err_size)
{
	av_log_set_level(AV_LOG_QUIET);
	st_video *v = st_xcalloc(1, sizeof *v);
	int rc = avformat_open_input(&v->format, path, NULL, NULL);
	if (rc < 0) {
		char why[256];
		if (rc == AVERROR(ENOENT))
			snprintf(why, sizeof why, "%s", strerror(ENOENT));
		else
			av_message(rc, why, sizeof why);
		snprintf(err, err_size, "%s: cannot open the video: %s", path, why);
		free(v);
		return NULL;
	}
	if (open_stream(v, path, err, err_size) != 0) {
		st_video_close(v);
		return NULL;
	}
	return v;
}

st_video *
st_video_open_memory(const void *data, size_t len, char *err, size_t err_size)
{
	av_log_set_level(AV_LOG_QUIET);
	st_video *v = st_xcalloc(1, sizeof *v);
	v->memory.data = data;
	v->memory.len = len;
	const int size = 4096;
	uint8_t *buffer = av_malloc(size);
	v->io = avio_alloc_context(buffer, size, 0, &v->memory, memory_read, NULL, memory_seek);
	v->format = avformat_alloc_context();
	if (buffer == NULL || v->io == NULL || v->format == NULL) {
		if (v->io == NULL)
			av_free(buffer);
		snprintf(err, err_size, "out of memory");
		st_video_close(v);
		return NULL;
	}
	v->format->pb = v->io;
	int rc = avformat_open_input(&v->format, NULL, NULL, NULL);
	if (rc < 0) {
		/* avformat_open_input frees the context on failure. */
		char why[256];
		av_message(rc, why, sizeof why);
		snprintf(err, err_size, "cannot open the video: %s", why);
		st_video_close(v);
		return NULL;
	}
	if (open_stream(v, "the video", err, err_size) != 0) {
		st_video_close(v);
		return NULL;
	}
	return v;
}

int
st_video_width(const st_video *v)
{
	return v->codec->width;
}

int
st_video_height(const st_video *v)
{
	return v->codec->height;
}

double
st_video_fps(const st_video *v)
{
	return v->fps;
}

int64_t
st_video_frame_count(const st_video *v)
{
	return v->frames;
}

int64_t
st_video_position(const st_video *v)
{
	return v->position;
}

/* The next decoded frame into v->frame: 0, 1 at the end, -1 on error. */
static int
decode_next(st_video *v, char *err, size_t err_size)
{
	char why[256];
	for (;;) {
		int rc = avcodec_receive_frame(v->codec, v->frame);
		if (rc == 0)
			return 0;
		if (rc == AVERROR_EOF) {
			v->ended = true;
			return 1;
		}
		if (rc != AVERROR(EAGAIN)) {
			av_message(rc, why, sizeof why);
			snprintf(err, err_size, "cannot decode frame %lld: %s", (long long)(v->position + 1), why);
			return -1;
		}
		if (v->draining) {
			v->ended = true;
			return 1;
		}
		/* The decoder wants more: the next packet of our stream. */
		rc = av_read_frame(v->format, v->packet);
		if (rc < 0) {
			v->draining = true;
			avcodec_send_packet(v->codec, NULL);
			continue;
		}
		if (v->packet->stream_index == v->stream) {
			rc = avcodec_send_packet(v->codec, v->packet);
			if (rc < 0 && rc != AVERROR(EAGAIN) && rc != AVERROR_INVALIDDATA) {
				av_packet_unref(v->packet);
				av_message(rc, why, sizeof why);
				snprintf(err, err_size, "cannot decode frame %lld: %s", (long long)(v->position + 1), why);
				return -1;
			}
		}
		av_packet_unref(v->packet);
	}
}

/* v->frame as RGB into img. */
static int
to_rgb(st_video *v, st_image *img, char *err, size_t err_size)
{
	AVFrame *f = v->frame;
	if (f->width <= 0 || f->height <= 0 || f->width > MAX_SIDE || f->height > MAX_SIDE) {
		snprintf(err, err_size, "frame %lld is %dx%d", (long long)v->position, f->width, f->height);
		return -1;
	}
	v->scale = sws_getCachedContext(v->scale, f->width, f->height, (enum AVPixelFormat)f->format, f->width,
	                                f->height, AV_PIX_FMT_RGB24, SWS_BILINEAR, NULL, NULL, NULL);
	if (v->scale == NULL) {
		snprintf(err, err_size, "frame %lld: cannot convert its pixel format to RGB", (long long)v->position);
		return -1;
	}
	/* swscale's vector code may write past the end of each row: it gets
	 * rows of its own, aligned and padded, and they are copied out. */
	int row = f->width * 3, stride = FFALIGN(row, 64) + 64;
	uint8_t *staging = av_malloc((size_t)stride * (size_t)f->height + 64);
	if (staging == NULL) {
		snprintf(err, err_size, "out of memory for a %dx%d frame", f->width, f->height);
		return -1;
	}
	uint8_t *dst[4] = { staging, NULL, NULL, NULL };
	int strides[4] = { stride, 0, 0, 0 };
	sws_scale(v->scale, (const uint8_t *const *)f->data, f->linesize, 0, f->height, dst, strides);
	memset(img, 0, sizeof *img);
	img->width = f->width;
	img->height = f->height;
	img->channels = 3;
	img->pixels = st_xmalloc((size_t)row * (size_t)f->height);
	for (int y = 0; y < f->height; y++)
		memcpy(img->pixels + (size_t)y * (size_t)row, staging + (size_t)y * (size_t)stride, (size_t)row);
	av_free(staging);
	return 0;
}

int
st_video_next(st_video *v, st_image *img, char *err, size_t err_size)
{
	if (v->ended)
		return 1;
	int rc = decode_next(v, err, err_size);
	if (rc != 0)
		return rc;
	v->position++;
	rc = to_rgb(v, img, err, err_size);
	av_frame_unref(v->frame);
	return rc;
}

int
st_video_seek(st_video *v, int64_t frame, st_image *img, char *err, size_t err_size)
{
	if (frame < 0)
		frame = 0;
	/* To the key frame at or before it, then decode forward. Streams
	 * without a frame rate, or containers that cannot seek, go back to the
	 * start. */
	int64_t ts = 0;
	if (v->fps > 0 && v->time_base.num > 0)
		ts = av_rescale_q((int64_t)((double)frame / v->fps * AV_TIME_BASE), AV_TIME_BASE_Q, v->time_base);
	AVStream *st = v->format->streams[v->stream];
	if (st->start_time != AV_NOPTS_VALUE)
		ts += st->start_time;
	if (av_seek_frame(v->format, v->stream, ts, AVSEEK_FLAG_BACKWARD) < 0 &&
	    av_seek_frame(v->format, v->stream, st->start_time != AV_NOPTS_VALUE ? st->start_time : 0,
	                  AVSEEK_FLAG_BACKWARD) < 0) {
		snprintf(err, err_size, "cannot seek in this video");
		return -1;
	}
	avcodec_flush_buffers(v->codec);
	v->draining = v->ended = false;
	/* Which frame the decoder gives next follows from its time stamp. */
	for (;;) {
		int rc = decode_next(v, err, err_size);
		if (rc != 0)
			return rc;
		int64_t pts = v->frame->best_effort_timestamp;
		int64_t index = v->position + 1;
		if (pts != AV_NOPTS_VALUE && v->fps > 0) {
			double secs = (double)(pts - (st->start_time != AV_NOPTS_VALUE ? st->start_time : 0)) *
			              av_q2d(v->time_base);
			index = (int64_t)(secs * v->fps + 0.5);
		}
		v->position = index;
		if (index >= frame) {
			rc = to_rgb(v, img, err, err_size);
			av_frame_unref(v->frame);
			return rc;
		}
		av_frame_unref(v->frame);
	}
}

#else /* built without FFmpeg */

struct st_video {
	int unused;
};

#define NO_FFMPEG "this Strata was built without FFmpeg (libavformat-dev, libavcodec-dev, libswscale-dev): it reads no video"

st_video *
st_video_open(const char *path, char *err, size_t err_size)
{
	snprintf(err, err_size, "%s: %s", path, NO_FFMPEG);
	return NULL;
}

st_video *
st_video_open_memory(const void *data, size_t len, char *err, size_t err_size)
{
	(void)data;
	(void)len;
	snprintf(err, err_size, "%s", NO_FFMPEG);
	return NULL;
}

void
st_video_close(st_video *v)
{
	free(v);
}

int
st_video_width(const st_video *v)
{
	(void)v;
	return 0;
}

int
st_video_height(const st_video *v)
{
	(void)v;
	return 0;
}

double
st_video_fps(const st_video *v)
{
	(void)v;
	return 0;
}

int64_t
st_video_frame_count(const st_video *v)
{
	(void)v;
	return -1;
}

int64_t
st_video_position(const st_video *v)
{
	(void)v;
	return -1;
}

int
st_video_next(st_video *v, st_image *img, char *err, size_t err_size)
{
	(void)v;
	(void)img;
	snprintf(err, err_size, "%s", NO_FFMPEG);
	return -1;
}

int
st_video_seek(st_video *v, int64_t frame, st_image *img, char *err, size_t err_size)
{
	(void)v;
	(void)frame;
	(void)img;
	snprintf(err, err_size, "%s", NO_FFMPEG);
	return -1;
}

#endif

bool
st_video_available(void)
{
#ifdef ST_HAVE_FFMPEG
	return true;
#else
	return false;
#endif
}
