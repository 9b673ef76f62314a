#!/usr/bin/python3
"""Counts the pixels of given colours in a PNG (8-bit RGB or RGBA, not
interlaced, as Chromium writes screenshots), with only the standard library.

    png-colours.py FILE.png '#2b6cb0' '#dd6b20' ...

prints one line per colour, "#2b6cb0 1234", counting pixels within 3 of it
in every channel (colour management may move a value by one or two)."""
import collections
import sys
import zlib


def decode(path):
    """Returns (width, height, channels, rows), rows a list of bytearrays."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise SystemExit(f"{path}: not a PNG file")
    pos, idat, header = 8, [], None
    while pos < len(data):
        length = int.from_bytes(data[pos:pos + 4], "big")
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    if header is None:
        raise SystemExit(f"{path}: no IHDR chunk")
    width = int.from_bytes(header[0:4], "big")
    height = int.from_bytes(header[4:8], "big")
    depth, colour, interlace = header[8], header[9], header[12]
    if depth != 8 or colour not in (2, 6) or interlace != 0:
        raise SystemExit(f"{path}: only 8-bit RGB or RGBA without interlacing is read "
                         f"(depth {depth}, colour type {colour}, interlace {interlace})")
    channels = 3 if colour == 2 else 4
    raw = zlib.decompress(b"".join(idat))
    stride = width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind = raw[start]
        row = bytearray(raw[start + 1:start + 1 + stride])
        unfilter(kind, row, previous, channels)
        rows.append(row)
        previous = row
    return width, height, channels, rows


def unfilter(kind, row, up, bpp):
    """Undoes one row's filter in place (PNG specification, section 9)."""
    n = len(row)
    if kind == 0:
        return
    if kind == 1:
        for i in range(bpp, n):
            row[i] = (row[i] + row[i - bpp]) & 0xFF
    elif kind == 2:
        row[:] = bytes((a + b) & 0xFF for a, b in zip(row, up))
    elif kind == 3:
        for i in range(n):
            left = row[i - bpp] if i >= bpp else 0
            row[i] = (row[i] + ((left + up[i]) >> 1)) & 0xFF
    elif kind == 4:
        for i in range(n):
            a = row[i - bpp] if i >= bpp else 0
            b = up[i]
            c = up[i - bpp] if i >= bpp else 0
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            pred = a if pa <= pb and pa <= pc else b if pb <= pc else c
            row[i] = (row[i] + pred) & 0xFF
    else:
        raise SystemExit(f"unknown PNG filter {kind}")


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    width, height, channels, rows = decode(sys.argv[1])
    # Count every distinct colour once, then match the few asked for.
    seen = collections.Counter()
    for row in rows:
        seen.update(zip(row[0::channels], row[1::channels], row[2::channels]))
    for want in sys.argv[2:]:
        rgb = bytes.fromhex(want.lstrip("#"))
        total = sum(count for key, count in seen.items()
                    if all(abs(key[i] - rgb[i]) <= 3 for i in range(3)))
        print(f"{want} {total}")


main()
