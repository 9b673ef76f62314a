#!/usr/bin/python3
"""Writes the .npy fixtures of tests/unit/test-npy.c with numpy itself, so the
tests check that Strata reads what numpy writes, and copies the readable
ones into the npy fuzzer's seed corpus. Needs python3-numpy; run it from
anywhere after changing it and commit the files:

    /usr/bin/python3 tests/data/npy/make.py
"""
import os
import shutil

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
corpus = os.path.join(here, "..", "..", "fuzz", "corpus", "npy")


def save(name, a, **kw):
    np.save(os.path.join(here, name), a, **kw)


def write_version(name, a, version):
    with open(os.path.join(here, name), "wb") as f:
        np.lib.format.write_array(f, a, version=version)


# One per element type; values cover each type's extremes.
save("f4.npy", (np.arange(6, dtype="<f4").reshape(2, 3) - 2) / 4)
save("f2.npy", np.array([[0.5, -2.0], [65504.0, 6e-08]], dtype="<f2"))
save("i1.npy", np.array([-128, -1, 0, 127], dtype="|i1"))
save("u1.npy", np.arange(8, dtype="|u1").reshape(2, 2, 2) * 36)
save("i2.npy", np.array([-32768, 7, 32767], dtype="<i2"))
save("u2.npy", np.array([0, 65535], dtype="<u2"))
save("i4.npy", np.array([-2147483648, 5, 2147483647], dtype="<i4"))
save("u4.npy", np.array([0, 4294967295], dtype="<u4"))
save("i8.npy", np.array([-(2**63), -1, 2**53 + 1, 2**63 - 1], dtype="<i8"))
save("u8.npy", np.array([0, 2**63 - 1, 2**63, 2**64 - 1], dtype="<u8"))
save("b1.npy", np.array([True, False, True], dtype="|b1"))
save("scalar.npy", np.float32(3.5))
save("empty.npy", np.zeros((0, 3), dtype="<f4"))
save("rank8.npy", np.arange(8, dtype="<f4").reshape(1, 2, 1, 2, 1, 1, 2, 1))

# Conversions: the reference is numpy's own cast.
rng = np.random.default_rng(20240601)
f8 = np.concatenate([
    np.array([0.1, -2.5, 1e-8, 1e300, -1e-300, 1 + 2**-11 + 2**-40, 65519.99, 65520.0,
              2**-25 + 2**-40, 5.960464477539063e-08, np.inf, -np.inf, -0.0]),
    rng.standard_normal(200) * 10.0 ** rng.integers(-9, 6, 200),
]).astype("<f8")
with np.errstate(over="ignore"):
    save("f8.npy", f8)
    save("f8_as_f4.npy", f8.astype("<f4"))
    save("f8_as_f2.npy", f8.astype("<f2"))
i8 = np.concatenate([
    np.array([2**53 + 1, 2**60 + 2**36 + 1, -(2**62) - 2**38 - 1, 2**24 + 1, 16777217], dtype="<i8"),
    rng.integers(-(2**63), 2**63 - 1, 100, dtype="<i8"),
])
save("i8_big.npy", i8)
save("i8_big_as_f4.npy", i8.astype("<f4"))
save("u8_big.npy", i8.view("<u8"))
save("u8_big_as_f4.npy", i8.view("<u8").astype("<f4"))
save("f8_whole.npy", np.array([0.0, -3.0, 255.0, 1e15], dtype="<f8"))

# Versions 2.0 and 3.0, as numpy writes them when asked.
write_version("v2.npy", np.arange(4, dtype="<f4"), (2, 0))
write_version("v3.npy", np.arange(4, dtype="<f4"), (3, 0))

# A header above 65535 bytes, which only 2.0 can describe (numpy writes
# one for record types with thousands of fields, which Strata refuses):
# here a plain array behind a padded header, written by hand, then read
# back with numpy to show that numpy accepts it.
d = {"descr": "<f4", "fortran_order": False, "shape": (2,)}
header = repr(d).encode("latin1")
header += b" " * (70000 - len(header))
header += b" " * ((-(12 + len(header) + 1)) % 64) + b"\n"
with open(os.path.join(here, "big_header.npy"), "wb") as f:
    f.write(b"\x93NUMPY\x02\x00" + len(header).to_bytes(4, "little") + header)
    f.write(np.array([1.5, -2.0], dtype="<f4").tobytes())
# numpy asks for consent above 10000 header bytes (max_header_size).
assert np.load(os.path.join(here, "big_header.npy"), max_header_size=100000).tolist() == [1.5, -2.0]

# What numpy writes and Strata refuses.
save("fortran.npy", np.asfortranarray(np.arange(6, dtype="<f4").reshape(2, 3)))
save("big_endian.npy", np.arange(3, dtype=">f4"))
save("object.npy", np.array([1, "a"], dtype=object), allow_pickle=True)
save("structured.npy", np.zeros(2, dtype=[("a", "<f4"), ("b", "<i4")]))

# A Python 2 header (longs as 3L), as numpy under Python 2 wrote it.
with open(os.path.join(here, "python2.npy"), "wb") as f:
    h = b"{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 3L), }"
    h += b" " * ((-(10 + len(h) + 1)) % 64) + b"\n"
    f.write(b"\x93NUMPY\x01\x00" + len(h).to_bytes(2, "little") + h)
    f.write(np.arange(6, dtype="<f4").tobytes())

os.makedirs(corpus, exist_ok=True)
for name in sorted(os.listdir(here)):
    if name.endswith(".npy") and os.path.getsize(os.path.join(here, name)) < 4096:
        shutil.copy(os.path.join(here, name), os.path.join(corpus, name))
