#!/bin/sh
# Makes the tiny clips the video tests read: FFmpeg's test pattern, 32x24,
# 12 frames, in four containers and codecs. Run from this folder with the
# ffmpeg program; the clips are committed, so the tests need no ffmpeg.
set -eu
ffmpeg -loglevel error -y -f lavfi -i "testsrc=size=32x24:rate=10:duration=1.2" -c:v ffv1 tiny.mkv
ffmpeg -loglevel error -y -f lavfi -i "testsrc=size=32x24:rate=10:duration=1.2" -c:v mjpeg -q:v 5 tiny.avi
# MPEG-1 takes standard frame rates only.
ffmpeg -loglevel error -y -f lavfi -i "testsrc=size=32x24:rate=25:duration=0.48" -c:v mpeg1video -b:v 200k tiny.mpg
ffmpeg -loglevel error -y -f lavfi -i "testsrc=size=32x24:rate=10:duration=1.2" -c:v wmv2 tiny.wmv
