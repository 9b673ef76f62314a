#!/bin/sh
# strata xwn: compare's figures and differences against the fixed Conv2D
# example of docs/xwn.md and a numpy re-implementation of the transform,
# export-weights' files bit for bit against the same, the exported folder
# running the model with XWN off to the same outputs, and the refusals.
. "$top_srcdir/tests/cli/lib.sh"

need_python /usr/bin/python3 numpy
check="/usr/bin/python3 $top_srcdir/tests/tools/xwn-check.py"
vectors="$top_srcdir/tests/data/xwn/xwn_vectors.json"

# ---- the fixed Conv2D example, as a model ----
cat >"$tmp/fixed.strata.json" <<'JSON'
{"format": "strata-model", "version": 1,
 "network": {"name": "fixed", "weights": "fixed-weights"},
 "layers": [
  {"name": "data", "type": "input", "params": {"dims": [1, 5, 5]}},
  {"name": "conv", "type": "xwn_convolution",
   "params": {"num_output": 2, "kernel": [2, 2], "bias": false, "use_transform": true}, "inputs": ["data.0"]},
  {"name": "out", "type": "output", "inputs": ["conv.0"]}]}
JSON
mkdir "$tmp/fixed-weights"
expect 0 /usr/bin/python3 - "$vectors" "$tmp" <<'PY'
import json, sys
import numpy as np
v = json.load(open(sys.argv[1]))["conv2d_fixed"]
np.save(sys.argv[2] + "/fixed-weights/conv_weights.npy",
        np.array(v["kernel_hwio"], np.float32).transpose(3, 2, 0, 1).copy())
np.save(sys.argv[2] + "/x.npy", np.array(v["x_nhwc"], np.float32).transpose(0, 3, 1, 2).copy())
PY

expect 0 "$STRATA" xwn compare "$tmp/fixed.strata.json" -i "$tmp/x.npy" --ascii
has out "1 XWN layer (1 with transform or pruning on)"
has out "conv (xwn_convolution): 4-bit, max_scale 4, no pruning"
# out_xwn - out_plain of the vectors: largest at row 1, column 1 of channel 0 (12.796875 vs 15).
has out "output 0 1x2x4x4: max |diff| 2.20312, relative L2 0.126839"
has out "pruned 0 of 2 slices (0.0%), 8 weights in 1 tensor"
# Level indices o0 [[2,1],[7,3]], o1 [[3,2],[2,1]].
has out " 0:0 1:2 2:3 3:2 4:0 5:0 6:0 7:1"
has out "network output out 1x2x4x4: max |diff| 2.20312, relative L2 0.126839"
expect 0 "$STRATA" xwn compare "$tmp/fixed.strata.json" -i "$tmp/x.npy" --json
cp "$tmp/out" "$tmp/fixed.json"
expect 0 $check fixed "$vectors" "$tmp/fixed.json"

# Everything off: the two runs are the same network, difference 0.
sed 's/"use_transform": true/"use_transform": false/' "$tmp/fixed.strata.json" >"$tmp/off.strata.json"
expect 0 "$STRATA" xwn compare "$tmp/off.strata.json" -i "$tmp/x.npy"
has out "1 XWN layer (0 with transform or pruning on)"
has out "conv (xwn_convolution): transform and pruning off"
has out "output 0 1x2x4x4: max |diff| 0, relative L2 0"
has out "levels no transform"
has out "network output out 1x2x4x4: max |diff| 0, relative L2 0"

# The exported weights are the vectors' XWN kernel, bit for bit.
expect 0 "$STRATA" xwn export-weights "$tmp/fixed.strata.json" -o "$tmp/fixed-xwn"
has out "conv_weights.npy  2x1x2x2  4-bit, max_scale 4, no pruning"
has out "written to $tmp/fixed-xwn"
expect 0 /usr/bin/python3 - "$vectors" "$tmp/fixed-xwn/conv_weights.npy" <<'PY'
import json, sys
import numpy as np
v = json.load(open(sys.argv[1]))["conv2d_fixed"]
want = np.array(v["kernel_xwn_hwio"], np.float32).transpose(3, 2, 0, 1)
got = np.load(sys.argv[2])
sys.exit(0 if got.dtype == np.float32 and np.array_equal(got, want) else 1)
PY

# ---- every XWN layer type: deconvolution, cascade, biases, a plain layer ----
cp "$top_srcdir/tests/data/xwn/tools.strata.json" "$tmp/tools.strata.json"
mkdir "$tmp/tools-weights"
expect 0 $check weights "$tmp/tools.strata.json" "$tmp/tools-weights"
expect 0 "$STRATA" xwn compare "$tmp/tools.strata.json"
has out "4 XWN layers (3 with transform or pruning on)"
has out "inputs random (seed 0)"
has out "d1 (xwn_deconvolution): 4-bit, max_scale 4, pruning 0.5"
has out "cc (xwn_cascade_convolution): 2-bit, max_scale 4, pruning 0.9"
has out "120 weights in 3 tensors"
# A layer on a branch of its own with XWN off does not move, nor its output.
has out "off (xwn_convolution): transform and pruning off"
has out "network output side 1x2x4x4: max |diff| 0, relative L2 0"
expect 0 "$STRATA" xwn compare "$tmp/tools.strata.json" --json --threads 1 --seed 3
cp "$tmp/out" "$tmp/tools.json"
expect 0 $check compare "$tmp/tools.strata.json" "$tmp/tools-weights" "$tmp/tools.json"
has out "4 layers checked, 0 bad"

expect 0 "$STRATA" xwn export-weights "$tmp/tools.strata.json" -o "$tmp/exported/"
has out "d1_weights.npy  6x4x2x2  4-bit, max_scale 4, pruning 0.5"
has out "cc_pointwise_weights.npy  3x4x1x1  2-bit, max_scale 4, pruning 0.9"
has out "off_weights.npy  2x4x3x3  unchanged (transform and pruning off)"
has out "2 other weight files copied unchanged; xwn-settings.json written"
expect 0 $check export "$tmp/tools.strata.json" "$tmp/tools-weights" "$tmp/exported"
has out "12 files checked, 6 transformed, 0 bad"
lacks out "manifest:"
expect 0 /usr/bin/python3 -c "
import json, sys
m = json.load(open('$tmp/exported/xwn-settings.json'))
names = [l['name'] for l in m['layers']]
ok = m['format'] == 'strata-xwn-weights' and names == ['c1', 'd1', 'cc', 'off']
ok = ok and m['layers'][1]['transposed'] and m['layers'][2]['settings']['bit'] == 2
ok = ok and [f['file'] for f in m['layers'][2]['files']] == ['cc_stage0_weights.npy', 'cc_stage1_weights.npy',
    'cc_pointwise_weights.npy', 'cc_pointwise_bias.npy']
sys.exit(0 if ok else 1)
"
# No temporary folder is left beside it.
checks=$((checks + 1))
if ls -d "$tmp"/exported.* >/dev/null 2>&1; then
	echo "FAIL: a temporary folder was left: $(ls -d "$tmp"/exported.*)"
	fails=$((fails + 1))
fi

# The model with XWN off on the exported folder computes what the model
# with XWN on computes on the original weights.
cp "$tmp/tools.strata.json" "$tmp/plain.strata.json"
expect 0 "$STRATA" edit "$tmp/plain.strata.json" -c 'set c1,d1,cc use_transform false;
	set c1,d1,cc use_pruning false; network weights exported; save'
expect 0 "$STRATA" run "$tmp/tools.strata.json" --random-input -o "out=$tmp/on.npy" -o "side=$tmp/on-side.npy" --no-report
expect 0 "$STRATA" run "$tmp/plain.strata.json" --random-input -o "out=$tmp/off.npy" -o "side=$tmp/off-side.npy" \
	--no-report
expect 0 /usr/bin/python3 -c "
import sys
import numpy as np
ok = all(np.array_equal(np.load('$tmp/on%s.npy' % s), np.load('$tmp/off%s.npy' % s)) for s in ('', '-side'))
sys.exit(0 if ok else 1)
"
# Random weights: the same seed, the same folder.
expect 0 "$STRATA" xwn export-weights "$tmp/tools.strata.json" --random-weights --seed 5 -o "$tmp/r1" --json
has out '"source":	"random (seed 5)"'
has out '"folder":'
expect 0 "$STRATA" xwn export-weights "$tmp/tools.strata.json" --random-weights --seed 5 -o "$tmp/r2"
same "$tmp/r1/cc_stage0_weights.npy" "$tmp/r2/cc_stage0_weights.npy"
same "$tmp/r1/head_bias.npy" "$tmp/r2/head_bias.npy"

# ---- refusals ----
expect 2 "$STRATA" xwn compare "$tmp/missing.strata.json"
has err "missing.strata.json"
expect 2 "$STRATA" xwn compare "$tmp/tools.strata.json" --weights "$tmp/nowhere"
has err "$tmp/nowhere"
expect 2 "$STRATA" xwn compare "$tmp/tools.strata.json" --weights "$tmp/fixed-weights"
has err "c1_weights.npy"
expect 2 "$STRATA" xwn compare "$tmp/tools.strata.json" --weights "$tmp/tools-weights" --random-weights
has err "not both"
expect 2 "$STRATA" xwn compare "$tmp/tools.strata.json" -o "$tmp/x"
has err "--output belongs to strata xwn export-weights"
expect 2 "$STRATA" xwn export-weights "$tmp/tools.strata.json" -i "$tmp/x.npy" -o "$tmp/x"
has err "--input belongs to strata xwn compare"
expect 2 "$STRATA" xwn frobnicate "$tmp/tools.strata.json"
has err "unknown tool 'frobnicate'; the tools are: compare, export-weights"
expect 2 "$STRATA" xwn compare "$tmp/fixed.strata.json" -i "$tmp/nothing.npy"
has err "nothing.npy"
expect 2 "$STRATA" xwn export-weights "$tmp/tools.strata.json"
has err "-o DIR"
# Never onto the weights read, nor a folder holding them or the model.
expect 2 "$STRATA" xwn export-weights "$tmp/tools.strata.json" -o "$tmp/tools-weights" --force
has err "is the weights folder"
expect 2 "$STRATA" xwn export-weights "$tmp/tools.strata.json" -o "$tmp/tools-weights/" --force
has err "is the weights folder"
expect 2 "$STRATA" xwn export-weights "$tmp/tools.strata.json" -o "$tmp" --force
has err "holds the weights folder"
expect 2 "$STRATA" xwn export-weights "$tmp/tools.strata.json" --weights "$tmp/tools-weights" -o "$tmp" --force
has err "holds the weights folder"
expect 2 "$STRATA" xwn export-weights "$tmp/tools.strata.json" -o "$tmp/x.npy"
has err "is a file, not a folder"
# An existing folder with files is replaced only with --force, and whole.
expect 2 "$STRATA" xwn export-weights "$tmp/tools.strata.json" -o "$tmp/exported"
has err "already holds files; replace it with --force"
touch "$tmp/exported/stale.npy"
expect 0 "$STRATA" xwn export-weights "$tmp/tools.strata.json" -o "$tmp/exported" --force
checks=$((checks + 1))
[ ! -e "$tmp/exported/stale.npy" ] || { echo "FAIL: --force kept a stale file"; fails=$((fails + 1)); }
expect 0 $check export "$tmp/tools.strata.json" "$tmp/tools-weights" "$tmp/exported"
# An empty folder is simply filled.
mkdir "$tmp/empty"
expect 0 "$STRATA" xwn export-weights "$tmp/fixed.strata.json" -o "$tmp/empty"
same "$tmp/empty/conv_weights.npy" "$tmp/fixed-xwn/conv_weights.npy"

# A model without XWN layers: said so, exit 1, nothing written.
expect 1 "$STRATA" xwn compare "$top_srcdir/examples/cnn_classifier.strata.json" --random-weights
has err "has no XWN layers"
has err "nothing to compare"
expect 1 "$STRATA" xwn export-weights "$top_srcdir/examples/cnn_classifier.strata.json" --random-weights \
	-o "$tmp/none"
has err "nothing to export"
checks=$((checks + 1))
[ ! -e "$tmp/none" ] || { echo "FAIL: a folder was written for a model without XWN layers"; fails=$((fails + 1)); }
# A model that does not type-check.
sed 's/"kernel": \[2, 2\]/"kernel": [9, 9]/' "$tmp/fixed.strata.json" >"$tmp/broken.strata.json"
expect 1 "$STRATA" xwn compare "$tmp/broken.strata.json" -i "$tmp/x.npy"
has err "type error"

finish
