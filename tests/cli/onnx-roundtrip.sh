#!/bin/sh
# import(export(model)) is the same model: every example and a fixture with
# most layer types go out as ONNX (opsets 13 and 17) and come back in with
# the same layers (names, types, attached activations) and the same outputs
# on the same input; an operator Strata has no layer for comes back out
# unchanged. Needs /usr/bin/python3 with numpy and onnx (./bootstrap
# installs them): without them the test is skipped, or fails when
# STRATA_REQUIRE_REFERENCES=1 (as in CI).
. "$top_srcdir/tests/cli/lib.sh"

py=/usr/bin/python3
check="$top_srcdir/tests/tools/onnx-roundtrip-check.py"
need_python "$py" numpy onnx

cd "$tmp" || exit 1
# roundtrip NAME MODEL OPSET [WEIGHTS]: export, import, compare.
roundtrip() {
	name=$1 model=$2 opset=$3
	if [ -n "${4:-}" ]; then
		expect 0 "$STRATA" export onnx "$model" -w "$4" -o "$name.onnx" --opset "$opset"
		run_a="-w $4"
	else
		expect 0 "$STRATA" export onnx "$model" --random-weights --seed 3 -o "$name.onnx" --opset "$opset"
		run_a="--random-weights"
	fi
	expect 0 "$STRATA" import "$name.onnx" -o "$name.strata.json"
	has out "wrote $name.strata.json and $name-weights/"
	expect 0 "$py" "$check" graph "$model" "$name.strata.json"
	# Every output of both, on the same seeded input.
	outs=$(sed -n 's/.*"name": "\([A-Za-z0-9_]*\)", "type": "output".*/\1/p' "$model")
	for o in $outs; do
		# shellcheck disable=SC2086
		expect 0 "$STRATA" run "$model" $run_a --random-input --seed 3 -o "$o=$name-$o.a.npy"
		expect 0 "$STRATA" run "$name.strata.json" --random-input --seed 3 -o "$o=$name-$o.b.npy"
		expect 0 "$py" "$check" outputs "$name-$o.a.npy" "$name-$o.b.npy"
	done
}

for m in "$top_srcdir"/examples/*.strata.json "$top_srcdir/tests/data/onnx-export-layers.strata.json"; do
	base=$(basename "$m" .strata.json)
	for opset in 13 17; do
		roundtrip "$base-$opset" "$m" "$opset"
	done
done
roundtrip fashion "$top_srcdir/examples/fashion_mnist/fashion_mnist.strata.json" 17 \
	"$top_srcdir/examples/fashion_mnist/weights"

# An operator without a layer: kept on import, written back unchanged.
nms="$top_srcdir/tests/fuzz/corpus/onnx-import/test_nonmaxsuppression_center_point_box_format.onnx"
expect 0 "$STRATA" import "$nms" -o nms.strata.json
has out "1 operator has no Strata layer"
expect 1 "$STRATA" check nms.strata.json
has out "ONNX operator NonMaxSuppression has no Strata layer"
expect 0 "$STRATA" export onnx nms.strata.json -o nms.onnx
expect 0 "$py" "$check" nodes "$nms" nms.onnx NonMaxSuppression
finish
