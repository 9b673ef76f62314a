#!/bin/sh
# Edit > Import ONNX model: the command line opens with "import ", the ONNX
# file becomes a model and its weights folder, and the editor opens it;
# unsaved edits and unreadable files are refused without touching anything.
. "$top_srcdir/tests/tui/lib.sh"

m="$tmp/cnn.strata.json"
cp "$top_srcdir/examples/cnn_classifier.strata.json" "$m"
cp "$top_srcdir/tests/fuzz/corpus/onnx-import/test_Conv2d.onnx" "$tmp/conv.onnx"
printf 'not an onnx file' >"$tmp/bad.onnx"

start 120 40 "$STRATA" "$m"
wait_for "EDIT ─ 10 layers"
# An unreadable file: a message, and the model stays open.
keys :
type_text "import $tmp/bad.onnx $tmp/bad.strata.json"
keys Enter
wait_for "not imported:"
[ ! -e "$tmp/bad.strata.json" ] || fail "a failed import wrote a model"
wait_for "EDIT ─ 10 layers"
# Unsaved edits are not dropped by an import.
keys :
type_text "add identity spare"
keys Enter
wait_for "EDIT ─ 11 layers"
keys :
type_text "import $tmp/conv.onnx $tmp/conv.strata.json"
keys Enter
wait_for "unsaved changes"
[ ! -e "$tmp/conv.strata.json" ] || fail "an import went ahead over unsaved edits"
keys :
type_text "undo"
keys Enter
wait_for "EDIT ─ 10 layers"
keys :
type_text "w"
keys Enter
wait_for "saved"
# The menu item opens the command line with "import " typed.
keys M-e
wait_for "Import ONNX model..."
keys Down Down Down Enter
wait_for ":import"
type_text "$tmp/conv.onnx $tmp/conv.strata.json"
keys Enter
wait_for "imported $tmp/conv.onnx"
wait_for "EDIT ─ 3 layers"
file_has "$tmp/conv.strata.json" '"type": "convolution"'
[ -f "$tmp/conv-weights/t_3_weights.npy" ] || fail "no weights file t_3_weights.npy"
same "$m" "$top_srcdir/examples/cnn_classifier.strata.json"
keys q
wait_exit 0
finish
