#!/bin/sh
# strata export onnx: every example exported at the default opset, with
# --fp16, --no-tensor-sizes and --opset 13, checked by onnx's full checker
# and run in ONNX Runtime on the input strata run was given, outputs
# compared (FP32: error <= 1e-5 of the output's largest value; FP16: 1e-2,
# as float16 keeps 11 bits and rounds at every operator). Then the refusals.
# Without the references (./bootstrap's venv with onnxruntime) the test is
# skipped, or fails when STRATA_REQUIRE_REFERENCES=1 (CI).
# STRATA_VENV_PYTHON names another venv's python (CI's tarball builds).
. "$top_srcdir/tests/cli/lib.sh"

# The venv beside the sources, or the one CI names for builds elsewhere.
py=$venv_python
check="$top_srcdir/tests/tools/onnx-export-check.py"
need_python "$py" onnx onnxruntime numpy

# roundtrip MODEL TAG TOLERANCE [EXPORT OPTIONS...]: export, run both, compare.
roundtrip() {
	model=$1 tag=$2 tol=$3
	shift 3
	dir="$tmp/$tag"
	mkdir -p "$dir"
	if [ "$model" = "$top_srcdir/examples/fashion_mnist/fashion_mnist.strata.json" ]; then
		weights=""
	else
		weights="--random-weights --seed 7"
	fi
	# shellcheck disable=SC2086
	expect 0 "$STRATA" export onnx "$model" -o "$dir/m.onnx" $weights "$@"
	# Inputs come from the export with sizes (this one may have variables).
	# shellcheck disable=SC2086
	"$STRATA" export onnx "$model" -o "$dir/sized.onnx" $weights
	"$py" "$check" inputs "$dir/sized.onnx" "$dir" 5 >"$dir/inputs"
	set --
	while read -r binding; do
		set -- "$@" -i "$binding"
	done <"$dir/inputs"
	k=0
	for name in $("$py" "$check" outputs "$dir/sized.onnx"); do
		set -- "$@" -o "$name=$dir/output$k.npy"
		k=$((k + 1))
	done
	# shellcheck disable=SC2086
	expect 0 "$STRATA" run "$model" $weights "$@"
	expect 0 "$py" "$check" compare "$dir/m.onnx" "$dir" "$tol"
	has out "agree"
}

n=0
for model in "$top_srcdir"/examples/*.strata.json "$top_srcdir/examples/fashion_mnist/fashion_mnist.strata.json" \
	"$top_srcdir/tests/data/onnx-export-layers.strata.json"; do
	n=$((n + 1))
	roundtrip "$model" "m$n-default" 1e-5
	roundtrip "$model" "m$n-fp16" 1e-2 --fp16
	roundtrip "$model" "m$n-dims" 1e-5 --no-tensor-sizes
	roundtrip "$model" "m$n-opset13" 1e-5 --opset 13
done

# What the options change in the file.
fm="$top_srcdir/examples/fashion_mnist/fashion_mnist.strata.json"
"$STRATA" export onnx "$fm" -o "$tmp/v.onnx" --no-tensor-sizes --fp16 --opset 15
expect 0 "$py" -c 'import onnx, sys
m = onnx.load(sys.argv[1])
d = m.graph.input[0].type.tensor_type
assert d.elem_type == onnx.TensorProto.FLOAT16, d.elem_type
assert all(x.dim_param and not x.dim_value for x in d.shape.dim), d.shape
assert all(t.data_type == onnx.TensorProto.FLOAT16 for t in m.graph.initializer)
assert m.ir_version == 8 and m.opset_import[0].version == 15, (m.ir_version, m.opset_import)
assert m.producer_name == "strata" and m.graph.name == "fashion_mnist" and "Fashion-MNIST" in m.doc_string
print("ok")' "$tmp/v.onnx"
has out "ok"

# Refusals: usage (2), problems (1); nothing written either way.
expect 2 "$STRATA" export onnx "$fm" -o "$tmp/x.onnx" --opset 12
has err "opset 12 is not supported"
expect 2 "$STRATA" export onnx "$fm" -o "$tmp/x.onnx" --opset abc
has err "--opset must be an integer"
expect 2 "$STRATA" export onnx "$fm" -o "$tmp/x.onnx" --no-such-option
has err "no-such-option"
expect 2 "$STRATA" export onnx "$fm"
has err "-o FILE"
expect 2 "$STRATA" export tflite "$fm" -o "$tmp/x.onnx"
has err "unknown format 'tflite'"
cp "$fm" "$tmp/self.strata.json"
expect 2 "$STRATA" export onnx "$tmp/self.strata.json" -o "$tmp/self.strata.json" --random-weights
has err "is the model itself"
expect 2 "$STRATA" export onnx "$tmp/nothing.strata.json" -o "$tmp/x.onnx"

mkdir -p "$tmp/w"
cp "$top_srcdir"/examples/fashion_mnist/weights/*.npy "$tmp/w/"
rm "$tmp/w/fc1_bias.npy"
expect 2 "$STRATA" export onnx "$fm" -o "$tmp/x.onnx" -w "$tmp/w"
has err "$tmp/w/fc1_bias.npy"
has err "nothing was written"

cat >"$tmp/bad.strata.json" <<'MODEL'
{"format": "strata-model", "version": 1, "network": {"name": "bad"},
 "layers": [
  {"name": "in", "type": "input", "params": {"dims": [3, 8, 8]}},
  {"name": "conv", "type": "convolution", "params": {"num_output": 4, "kernel": [9, 9]}, "inputs": ["in.0"]},
  {"name": "out", "type": "output", "inputs": ["conv.0"]}]}
MODEL
expect 1 "$STRATA" export onnx "$tmp/bad.strata.json" -o "$tmp/x.onnx" --random-weights
has err "layer 'conv'"
has err "type error"

cat >"$tmp/ph.strata.json" <<'MODEL'
{"format": "strata-model", "version": 1, "network": {"name": "ph"},
 "layers": [
  {"name": "in", "type": "input", "params": {"dims": [3, 8, 8]}},
  {"name": "odd", "type": "onnx_operator", "params": {"op_type": "Frobnicate", "domain": "com.example", "opset": 2},
   "inputs": ["in.0"]},
  {"name": "out", "type": "output", "inputs": ["odd.0"]}]}
MODEL
expect 1 "$STRATA" export onnx "$tmp/ph.strata.json" -o "$tmp/x.onnx"
has err "ph.strata.json"
has err "layer 'odd'"
has err "--allow-placeholders"
checks=$((checks + 1))
if [ -e "$tmp/x.onnx" ]; then
	echo "FAIL: a refused export wrote $tmp/x.onnx"
	fails=$((fails + 1))
fi
expect 0 "$STRATA" export onnx "$tmp/ph.strata.json" -o "$tmp/ph.onnx" --allow-placeholders
expect 0 "$py" -c 'import onnx, sys
m = onnx.load(sys.argv[1])
n = [x for x in m.graph.node if x.op_type == "Frobnicate"][0]
assert n.domain == "com.example", n.domain
assert {(o.domain, o.version) for o in m.opset_import} == {("", 17), ("com.example", 2)}, m.opset_import
print("ok")' "$tmp/ph.onnx"
has out "ok"

finish
