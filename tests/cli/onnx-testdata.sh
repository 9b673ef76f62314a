#!/bin/sh
# The ONNX protobuf layer against the official test models of Debian's
# libonnx-testdata (node, pytorch-converted, pytorch-operator, simple):
# every model.onnx decodes and re-encodes byte for byte, and its IR version,
# opsets and op list agree with Python's onnx (/usr/bin/python3, from
# python3-onnx). Missing references fail the test: ./bootstrap installs them.
. "$top_srcdir/tests/cli/lib.sh"

data=/usr/share/libonnx-testdata/data
tool="${top_builddir:?}/tests/tools/onnx-roundtrip"

checks=$((checks + 1))
if [ ! -d "$data/node" ]; then
	echo "FAIL: $data is missing: ./bootstrap installs libonnx-testdata"
	fails=$((fails + 1))
	finish
	exit 1
fi
checks=$((checks + 1))
if ! /usr/bin/python3 -c 'import onnx' 2>/dev/null; then
	echo "FAIL: /usr/bin/python3 cannot import onnx: ./bootstrap installs python3-onnx"
	fails=$((fails + 1))
	finish
	exit 1
fi

for suite in node pytorch-converted pytorch-operator simple; do
	find "$data/$suite" -name model.onnx
done | LC_ALL=C sort >"$tmp/list"
n=$(wc -l <"$tmp/list")
echo "$n models"

expect 0 sh -c '"$0" <"$1"' "$tool" "$tmp/list"
cp "$tmp/out" "$tmp/c.txt"
has err "$n of $n models decode, $n re-encode byte for byte"
cat "$tmp/err"

expect 0 sh -c '/usr/bin/python3 "$0" <"$1"' "$top_srcdir/tests/tools/onnx-summary.py" "$tmp/list"
cp "$tmp/out" "$tmp/py.txt"
same "$tmp/py.txt" "$tmp/c.txt"
echo "Python's onnx and Strata agree on $(wc -l <"$tmp/py.txt") of $n models"
finish
