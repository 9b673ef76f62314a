#!/usr/bin/python3
"""Writes the image fixtures of tests/unit/test-image.c and the image
fuzzer's seed corpus. PNGs are encoded here byte by byte (every colour type,
bit depth, transparency and Adam7 interlacing, exactly as intended); JPEGs
come from PIL (Debian package python3-pil). Next to each image that must
decode, NAME.npy holds the pixels expected: height x width x channels uint8,
for JPEGs as PIL decodes them with the same libjpeg-turbo. Run it from
anywhere after changing it and commit the files:

    /usr/bin/python3 tests/data/images/make.py
"""
import io
import os
import shutil
import struct
import zlib

import numpy as np
from PIL import Image

here = os.path.dirname(os.path.abspath(__file__))
corpus = os.path.join(here, "..", "..", "fuzz", "corpus", "image")

ADAM7 = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]
CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}


def chunk(kind, data):
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)


def scanline(pixels, depth):
    """One row of samples (tuples), packed, with filter byte 0."""
    samples = [s for p in pixels for s in p]
    if depth == 16:
        return b"\0" + b"".join(struct.pack(">H", s) for s in samples)
    if depth == 8:
        return b"\0" + bytes(samples)
    out, acc, bits = bytearray(), 0, 0
    for s in samples:
        acc = (acc << depth) | s
        bits += depth
        if bits == 8:
            out.append(acc)
            acc, bits = 0, 0
    if bits:
        out.append(acc << (8 - bits))
    return b"\0" + bytes(out)


def png(image, colour, depth, palette=None, trns=None, interlace=False):
    """image: rows of pixels, each a tuple of samples."""
    h, w = len(image), len(image[0])
    raw = b""
    if interlace:
        for x0, y0, dx, dy in ADAM7:
            rows = [[image[y][x] for x in range(x0, w, dx)] for y in range(y0, h, dy)]
            if rows and rows[0]:
                raw += b"".join(scanline(r, depth) for r in rows)
    else:
        raw = b"".join(scanline(r, depth) for r in image)
    out = b"\x89PNG\r\n\x1a\n"
    out += chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, depth, colour, 0, 0, 1 if interlace else 0))
    if palette is not None:
        out += chunk(b"PLTE", bytes(v for rgb in palette for v in rgb))
    if trns is not None:
        out += chunk(b"tRNS", trns)
    out += chunk(b"IDAT", zlib.compress(raw, 9))
    out += chunk(b"IEND", b"")
    return out


def pattern(w, h, c, top=256):
    return [[tuple((x * 53 + y * 97 + k * 71 + 13) % top for k in range(c)) for x in range(w)] for y in range(h)]


def write(name, data, expected=None):
    with open(os.path.join(here, name), "wb") as f:
        f.write(data)
    if expected is not None:
        np.save(os.path.join(here, name + ".npy"), np.asarray(expected, dtype=np.uint8))


W, H = 5, 3  # odd and unequal, so that a swapped width and height shows

for name, colour in (("grey", 0), ("grey_alpha", 4), ("rgb", 2), ("rgba", 6)):
    img = pattern(W, H, CHANNELS[colour])
    write(name + ".png", png(img, colour, 8), img)

# 1-bit grey expands to 0 and 255.
bits = [[((x + y) % 2,) for x in range(W)] for y in range(H)]
write("grey1.png", png(bits, 0, 1), [[(255 * b[0],) for b in row] for row in bits])

# 16-bit samples whose low byte matters to the rounding: scaled as
# round(v * 255 / 65535).
def deep_pattern(w, h, c):
    return [[tuple(((x * 53 + y * 97 + k * 71 + 13) % 256) * 256 + (x * 37 + y * 11 + k * 101) % 256
                   for k in range(c)) for x in range(w)] for y in range(h)]


def scaled(image):
    return [[tuple((s * 255 + 32767) // 65535 for s in p) for p in row] for row in image]


deep = deep_pattern(W, H, 1)
write("grey16.png", png(deep, 0, 16), scaled(deep))
deep = deep_pattern(W, H, 3)
write("rgb16.png", png(deep, 2, 16), scaled(deep))

# Palettes: 8-bit indices to RGB; 4-bit indices with transparency to RGBA.
palette = [(10, 20, 30), (255, 0, 0), (0, 255, 0), (0, 0, 255), (200, 100, 50), (1, 2, 3), (250, 251, 252)]
idx = [[((x + 2 * y) % 7,) for x in range(W)] for y in range(H)]
write("palette.png", png(idx, 3, 8, palette=palette), [[palette[i[0]] for i in row] for row in idx])
alpha = [0, 128, 255]  # entries beyond the tRNS list are opaque
write("palette_trns.png", png(idx, 3, 4, palette=palette, trns=bytes(alpha)),
      [[palette[i[0]] + ((alpha[i[0]] if i[0] < len(alpha) else 255),) for i in row] for row in idx])

# Grey with a transparent value gains an alpha channel.
grey = pattern(W, H, 1)
key = grey[1][2][0]
write("grey_trns.png", png(grey, 0, 8, trns=struct.pack(">H", key)),
      [[(p[0], 0 if p[0] == key else 255) for p in row] for row in grey])

# Adam7 over a size that leaves some passes partly empty.
big = pattern(11, 9, 3)
write("interlaced.png", png(big, 2, 8, interlace=True), big)
deepi = [[(((x * 53 + y * 97) % 256) * 257,) for x in range(11)] for y in range(9)]
write("interlaced_grey16.png", png(deepi, 0, 16, interlace=True),
      [[(s[0] // 257,) for s in row] for row in deepi])

# Colours whose one-channel value is PIL's convert('L'), which Strata
# matches exactly (luma.png.npy is that, not the RGB pixels).
rng = np.random.default_rng(7)
colours = rng.integers(0, 256, (16, 16, 3), dtype=np.uint8)
colours[0, :8] = [(255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 255), (1, 1, 1), (128, 128, 128),
                  (254, 0, 1), (0, 1, 254)]
write("luma.png", png(colours.tolist(), 2, 8),
      np.asarray(Image.fromarray(colours, "RGB").convert("L"))[:, :, None])

# Damaged PNGs.
good = png(pattern(W, H, 3), 2, 8)
idat = good.index(b"IDAT")
write("truncated.png", good[: idat + 20])
bad = bytearray(good)
bad[29] ^= 0xFF  # inside IHDR's CRC
write("bad_crc.png", bytes(bad))

# JPEGs, 16x8 so that 4:2:0 has whole blocks; flat areas decode exactly.
rgb = np.zeros((8, 16, 3), dtype=np.uint8)
rgb[:, :8] = (200, 30, 40)
rgb[:, 8:] = (20, 160, 230)
grey_j = np.zeros((8, 16), dtype=np.uint8)
grey_j[:, :8] = 40
grey_j[:, 8:] = 220


def jpeg(array, mode, **kw):
    buf = io.BytesIO()
    Image.fromarray(array, mode).save(buf, "JPEG", quality=95, **kw)
    return buf.getvalue()


for name, data in (("rgb.jpg", jpeg(rgb, "RGB")), ("grey.jpg", jpeg(grey_j, "L")),
                   ("progressive.jpg", jpeg(rgb, "RGB", progressive=True))):
    decoded = np.asarray(Image.open(io.BytesIO(data)))
    if decoded.ndim == 2:
        decoded = decoded[:, :, None]
    write(name, data, decoded)
buf = io.BytesIO()
Image.new("CMYK", (16, 8), (10, 20, 30, 40)).save(buf, "JPEG", quality=95)
write("cmyk.jpg", buf.getvalue())
good = jpeg(rgb, "RGB")
write("truncated.jpg", good[: len(good) * 2 // 3])

write("not_an_image.txt", b"P6\n5 3\n255\nthis is neither PNG nor JPEG\n")

os.makedirs(corpus, exist_ok=True)
for name in sorted(os.listdir(here)):
    if name.endswith((".png", ".jpg")) and name != "luma.png":
        shutil.copy(os.path.join(here, name), os.path.join(corpus, name))
