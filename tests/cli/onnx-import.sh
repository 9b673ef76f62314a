#!/bin/sh
# strata import: the model and its weights folder from an ONNX file, named
# dimensions sized with --dim, the user's files kept unless --force, and
# every refusal with a clear message and exit 2, writing nothing.
. "$top_srcdir/tests/cli/lib.sh"

cd "$tmp" || exit 1
neg="$top_srcdir/tests/data/onnx/neg-dims.onnx"
conv="$top_srcdir/tests/fuzz/corpus/onnx-import/test_Conv2d.onnx"
nms="$top_srcdir/tests/fuzz/corpus/onnx-import/test_nonmaxsuppression_center_point_box_format.onnx"

# Defaults: NAME.strata.json here, NAME-weights beside it; -1 sizes (as
# Paddle writes them) and named ones take --dim or --default-dim.
expect 0 "$STRATA" import "$neg" --dim H=8 --dim W=6 -v
has out "imported $neg (opset 11): 3 layers, 2 nodes folded"
has out "wrote neg-dims.strata.json and neg-dims-weights/"
has err "graph.input[0] 'x': dimension 0 is set to 1"
lacks err "dimension 2"
expect 0 "$STRATA" check neg-dims.strata.json
expect 0 "$STRATA" info neg-dims.strata.json
has out "1x4x8x6"
grep -q '"activation": {"type": "silu"}' neg-dims.strata.json ||
	{ echo "FAIL: x·sigmoid(x) did not become silu"; fails=$((fails + 1)); }
[ -f neg-dims-weights/conv_weights.npy ] && [ -f neg-dims-weights/conv_bias.npy ] ||
	{ echo "FAIL: the conv's weights are missing"; fails=$((fails + 1)); }
expect 0 "$STRATA" run neg-dims.strata.json --random-input

# Weights in an external data file beside the model (models over 2 GB
# keep them so) come out the same; without the data file, a clear refusal.
expect 0 "$STRATA" import "$top_srcdir/tests/data/onnx/external.onnx" -o ext.strata.json
cmp -s ext-weights/conv_weights.npy neg-dims-weights/conv_weights.npy &&
	cmp -s ext-weights/conv_bias.npy neg-dims-weights/conv_bias.npy ||
	{ echo "FAIL: weights from external data differ"; fails=$((fails + 1)); }
cp "$top_srcdir/tests/data/onnx/external.onnx" lonely.onnx
expect 2 "$STRATA" import lonely.onnx -o lonely.strata.json
has err "external.onnx_data"
[ ! -e lonely.strata.json ] || { echo "FAIL: an import without its data wrote a model"; fails=$((fails + 1)); }

# The user's files are kept: the model, and a weights folder with files.
cp neg-dims.strata.json keep.json
expect 2 "$STRATA" import "$conv" -o neg-dims.strata.json
has err "neg-dims.strata.json exists; replace it with --force"
has err "was not imported; nothing was written"
cmp -s keep.json neg-dims.strata.json || { echo "FAIL: a refused import changed the model"; fails=$((fails + 1)); }
expect 2 "$STRATA" import "$conv" -o other.strata.json -w neg-dims-weights
has err "the weights folder neg-dims-weights already holds files"
[ ! -e other.strata.json ] || { echo "FAIL: a refused import wrote a model"; fails=$((fails + 1)); }
# --force replaces both, and the old weights go.
expect 0 "$STRATA" import "$conv" -o neg-dims.strata.json -w neg-dims-weights --force
[ ! -e neg-dims-weights/conv_weights.npy ] || { echo "FAIL: old weights stayed"; fails=$((fails + 1)); }
ls -a | grep -q 'importing\|replaced' && { echo "FAIL: a temporary folder was left"; fails=$((fails + 1)); }

# Weights outside the model's folder: said, and the setting is absolute.
mkdir sub
expect 0 "$STRATA" import "$conv" -o sub/m.strata.json -w outside-weights
has out "lies outside the model's folder"

# An operator without a layer: kept, and the check names it.
expect 0 "$STRATA" import "$nms" -o nms.strata.json
has out "1 operator has no Strata layer and is kept as onnx_operator layer"
expect 1 "$STRATA" check nms.strata.json
has out "ONNX operator NonMaxSuppression has no Strata layer"

# Refusals: nothing written.
expect 2 "$STRATA" import "$tmp/none.onnx" -o x.strata.json
has err "none.onnx"
printf 'this is not a model' >bad.onnx
expect 2 "$STRATA" import bad.onnx -o x.strata.json
has err "bad.onnx: model:"
head -c 100 "$conv" >cut.onnx
expect 2 "$STRATA" import cut.onnx -o x.strata.json
has err "past the end"
expect 2 "$STRATA" import "$neg" --dim H -o x.strata.json
has err "--dim takes NAME=SIZE"
expect 2 "$STRATA" import "$neg" --dim H=0 -o x.strata.json
expect 2 "$STRATA" import "$neg" --default-dim -3 -o x.strata.json
has err "--default-dim must be a whole number from 1"
expect 2 "$STRATA" import
[ ! -e x.strata.json ] && [ ! -e x-weights ] || { echo "FAIL: a refused import wrote files"; fails=$((fails + 1)); }
finish
