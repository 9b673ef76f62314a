#!/bin/sh
# The .npy files Strata writes load in numpy with the same types, shapes and
# values: the unit test npy::export_for_numpy writes them into a folder this
# script names (the CLI has no npy command yet), then numpy reads them.
# Skips when the unit tests (Criterion) or numpy are not available.
. "$top_srcdir/tests/cli/lib.sh"

if [ ! -x "${UNIT:-}" ]; then
	echo "SKIP: the unit tests are not built (Criterion missing)"
	exit 77
fi
if ! /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
	echo "SKIP: /usr/bin/python3 has no numpy (Debian package python3-numpy)"
	exit 77
fi

mkdir -p "$tmp/npy"
STRATA_NPY_EXPORT="$tmp/npy"
export STRATA_NPY_EXPORT
expect 0 "$UNIT" --filter 'npy/export_for_numpy'
# The pattern below is the one fill_pattern in tests/unit/test-npy.c writes.
expect 0 /usr/bin/python3 - "$tmp/npy" <<'PY'
import os
import sys

import numpy as np

folder = sys.argv[1]
types = {"float32": "<f4", "float16": "<f2", "int64": "<i8", "int32": "<i4",
         "int8": "|i1", "uint8": "|u1", "bool": "|b1"}
checked = 0
for name, descr in types.items():
    for rank in range(4):
        path = os.path.join(folder, "%s-%d.npy" % (name, rank))
        a = np.load(path, allow_pickle=False)
        shape = tuple(range(2, 2 + rank))
        assert a.dtype == np.dtype(descr), (path, a.dtype)
        assert a.shape == shape, (path, a.shape)
        assert a.flags.c_contiguous, path
        n = int(np.prod(shape))
        if name == "float32":
            want = np.arange(n, dtype=np.float32) * np.float32(0.75) - np.float32(3)
        elif name == "float16":
            want = (np.arange(n, dtype=np.float32) * np.float32(0.5) - np.float32(2)).astype(np.float16)
        elif name == "bool":
            want = np.arange(n) % 3 == 0
        else:
            size = np.dtype(descr).itemsize
            raw = bytes((i * 37 + 11) & 0xff for i in range(n * size))
            want = np.frombuffer(raw, dtype=descr)
        assert np.array_equal(a.reshape(-1), want), (path, a, want)
        with open(path, "rb") as f:
            head = f.read(10)
        assert head[:8] == b"\x93NUMPY\x01\x00", path
        assert (10 + int.from_bytes(head[8:10], "little")) % 64 == 0, path
        checked += 1
print("numpy read %d files" % checked)
PY
has out "numpy read 28 files"
finish
