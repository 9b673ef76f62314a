#!/bin/sh
# XWN layers through ONNX (docs/onnx.md, "XWN layers"): tests/data/xwn-onnx
# (every XWN layer type) exported with the transformed weights baked in,
# checked by onnx's full checker, and run in ONNX Runtime against strata run
# on the same input (FP32: the largest error within 1e-5 of the output's
# largest value; FP16: 1e-2), plain, with --xwn-source-weights, --fp16 and
# --opset 13. Then imported back: the XWN layers return (with the transform
# off, or with their full-precision weights) and compute what the original
# computed; a damaged metadata entry gives a warning naming its key and the
# plain operators. Without the references (./bootstrap's venv with
# onnxruntime) the test is skipped, or fails when STRATA_REQUIRE_REFERENCES=1.
# STRATA_VENV_PYTHON names another venv's python (CI's tarball builds).
. "$top_srcdir/tests/cli/lib.sh"

py=$venv_python
check="$top_srcdir/tests/tools/onnx-export-check.py"
same_outputs="$top_srcdir/tests/tools/onnx-roundtrip-check.py"
need_python "$py" onnx onnxruntime numpy

model="$top_srcdir/tests/data/xwn-onnx.strata.json"
weights="--random-weights --seed 7"
cd "$tmp" || exit 1

# The inputs, and what strata run makes of them with the model's own layers.
# shellcheck disable=SC2086
expect 0 "$STRATA" export onnx "$model" -o sized.onnx $weights
"$py" "$check" inputs sized.onnx "$tmp" 5 >inputs
set --
while read -r binding; do
	set -- "$@" -i "$binding"
done <inputs
inputs_args="$*"
# Output k of the ONNX graph goes to outputK.npy (onnx-export-check.py's
# convention); for the imports, to NAME-K.npy.
outputs=$("$py" "$check" outputs sized.onnx)
k=0
for name in $outputs; do
	set -- "$@" -o "$name=$tmp/output$k.npy"
	k=$((k + 1))
done
# shellcheck disable=SC2086
expect 0 "$STRATA" run "$model" $weights "$@"

# ort TAG TOLERANCE [EXPORT OPTIONS...]: export, then ONNX Runtime against strata run.
ort() {
	tag=$1 tol=$2
	shift 2
	# shellcheck disable=SC2086
	expect 0 "$STRATA" export onnx "$model" -o "$tag.onnx" $weights "$@"
	expect 0 "$py" "$check" compare "$tag.onnx" "$tmp" "$tol"
	has out "2 output(s) agree"
}
ort plain 1e-5
ort source 1e-5 --xwn-source-weights
ort fp16 1e-2 --fp16
ort opset13 1e-5 --opset 13

# The file: baked weights, the parts of the cascades, the metadata entries
# (JSON), the full-precision copies only with the option.
expect 0 "$py" -c 'import json, sys, onnx
plain, source = onnx.load(sys.argv[1]), onnx.load(sys.argv[2])
onnx.checker.check_model(source, full_check=True)
meta = {p.key: json.loads(p.value) for p in source.metadata_props}
assert sorted(meta) == ["strata.xwn." + n for n in ("c1", "c3", "d1", "k1", "k2")], sorted(meta)
k1 = meta["strata.xwn.k1"]
assert k1["type"] == "xwn_cascade_convolution" and k1["stages"] == ["k1_stage0", "k1_stage1", "k1_stage2"], k1
assert k1["concat"] == "k1_concat" and k1["pointwise"] == "k1_pointwise", k1
assert k1["params"]["kernel_size"] == 7 and k1["xwn"]["use_pruning"] is True, k1
ops = {n.name: n.op_type for n in source.graph.node}
assert ops["k1_stage2"] == "Conv" and ops["k1_concat"] == "Concat" and ops["k1_pointwise"] == "Conv", ops
kept = sorted(t.name for t in source.graph.initializer if t.name.endswith(".xwn_source"))
assert kept == sorted(["c1_weights.xwn_source", "c3_weights.xwn_source", "d1_weights.xwn_source"]
                      + ["k1_stage%d_weights.xwn_source" % j for j in range(3)] + ["k1_pointwise_weights.xwn_source"]
                      + ["k2_stage%d_weights.xwn_source" % j for j in range(2)] + ["k2_pointwise_weights.xwn_source"]), kept
assert not [t for t in plain.graph.initializer if t.name.endswith(".xwn_source")]
assert meta["strata.xwn.c1"]["source"] == {"weights": "c1_weights.xwn_source"}
print("ok")' plain.onnx source.onnx
has out "ok"

# back MODEL.onnx NAME: import, run on the same inputs, compare with the original.
back() {
	expect 0 "$STRATA" import "$1" -o "$2.strata.json" --weights-out "$2-weights"
	has out "5 XWN layers restored from the file's metadata"
	k=0
	for name in $outputs; do
		# shellcheck disable=SC2086
		expect 0 "$STRATA" run "$2.strata.json" $inputs_args -o "$name=$tmp/$2-$k.npy"
		expect 0 "$py" "$same_outputs" outputs "output$k.npy" "$2-$k.npy"
		k=$((k + 1))
	done
	expect 0 "$py" "$same_outputs" graph "$model" "$2.strata.json"
}
# Without the full-precision weights: the transform off, as the weights are transformed.
back plain.onnx plain
expect 0 "$STRATA" import plain.onnx -o plain.strata.json --weights-out plain-weights --force
has out "5 with use_transform and use_pruning off"
expect 0 "$py" -c 'import json, sys
layers = {l["name"]: l for l in json.load(open(sys.argv[1]))["layers"]}
for n in ("c1", "d1", "k1", "c3", "k2"):
    p = layers[n]["params"]
    assert p["use_transform"] is False and p["use_pruning"] is False, (n, p)
assert layers["c1"]["params"]["prun_weight"] == 1.2 and layers["d1"]["params"]["max_scale"] == 2, layers
assert layers["c3"]["params"]["bit"] == 1 and layers["k1"]["params"]["kernel_size"] == 7
print("ok")' plain.strata.json
has out "ok"
expect 0 "$STRATA" import plain.onnx -o plain.strata.json --weights-out plain-weights --force --verbose
has err "layer 'c1' is xwn_convolution again"
has err "--xwn-source-weights"
# With them: the settings as they were.
back source.onnx source
lacks out "use_transform and use_pruning off"
expect 0 "$py" -c 'import json, sys
a = {l["name"]: l.get("params", {}) for l in json.load(open(sys.argv[1]))["layers"]}
b = {l["name"]: l.get("params", {}) for l in json.load(open(sys.argv[2]))["layers"]}
for n in ("c1", "d1", "k1", "c3", "k2"):
    for k, v in a[n].items():
        assert b[n][k] == v or k in ("padding", "pads", "stride", "dilation", "output_padding"), (n, k, v, b[n][k])
print("ok")' "$model" source.strata.json
has out "ok"

# A damaged entry: a warning naming the key, then the plain operators.
expect 0 "$py" -c 'import sys, onnx
m = onnx.load(sys.argv[1])
for p in m.metadata_props:
    if p.key == "strata.xwn.k1":
        p.value = p.value.replace("\"k1_concat\"", "\"no_such_node\"")
    if p.key == "strata.xwn.c1":
        p.value = "{broken"
onnx.save(m, sys.argv[2])' plain.onnx damaged.onnx
expect 0 "$STRATA" import damaged.onnx -o damaged.strata.json
has err "metadata_props \"strata.xwn.k1\": concat node \"no_such_node\" is not in the graph"
has err "metadata_props \"strata.xwn.c1\": the value is not a JSON object"
has out "3 XWN layers restored"
expect 0 "$STRATA" check damaged.strata.json
expect 0 "$py" -c 'import json, sys
types = {l["name"]: l["type"] for l in json.load(open(sys.argv[1]))["layers"]}
assert types["c1"] == "convolution" and types["k1_concat"] == "concatenation", types
assert types["k1_stage2"] == "convolution" and "k1" not in types and types["d1"] == "xwn_deconvolution", types
print("ok")' damaged.strata.json
has out "ok"

finish
