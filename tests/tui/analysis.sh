#!/bin/sh
# Analysis mode: A opens it over the Fashion-MNIST example, :input feeds
# the input layer an image (the conversion shows), Enter on conv1 opens the
# channel inspector, PageDown pages, z zooms with statistics, l moves to the
# next channel, e exports the channel to a PNG; Esc goes back to editing
# with the worker gone. Then a video on a small model: . steps, > and <
# seek, Space plays to the end, and STRATA_MAX_FRAMES ends a session that
# plays on its own, with exit status 0.
. "$top_srcdir/tests/tui/lib.sh"

mkdir -p "$tmp/fm/weights"
cp "$top_srcdir/examples/fashion_mnist/fashion_mnist.strata.json" "$tmp/fm/"
cp "$top_srcdir"/examples/fashion_mnist/weights/*.npy "$tmp/fm/weights/"
sneaker="$top_srcdir/examples/fashion_mnist/inputs/sneaker.png"

# 80x24: a page holds fewer than conv1's 16 channels.
start 80 24 "$STRATA" "$tmp/fm/fashion_mnist.strata.json"
wait_for "EDIT ─ 10 layers"
pid=$(program_pid)
keys A
wait_for "ANALYSIS ─ 10 layers"
wait_for "DONE  run 1 in"
wait_for "no file: random data"
wait_for "Network Overview"
during=$(threads "$pid")

keys :
type_text "input pixels $sneaker"
keys Enter
wait_for "sneaker.png 28x28 grey"
wait_for "DONE  run 2 in"

# conv1 is the fourth layer in execution order.
keys j j j Enter
wait_for "conv1 output · channels 0-"
wait_for "of 16 · page 1/"
wait_for "Channel Inspector · symbols, 256 colours"
keys PageDown
wait_for "page 2/"
keys PageUp z
wait_for "conv1 output · zoom"
wait_for "channel 0/16 28x28  min "
keys l
wait_for "channel 1/16 28x28  min "
keys e
wait_for "Export PNG to:"
keys C-u
type_text "$tmp/c1.png"
keys Enter
wait_for "exported 28x28 to $tmp/c1.png"
checks=$((checks + 1))
[ "$(head -c 4 "$tmp/c1.png" 2>/dev/null | tail -c 3)" = "PNG" ] || fail "no PNG written"

# Sixel pixels on request: the program writes the picture (tmux keeps it
# from this terminal, so its raw output is read through pipe-pane).
T pipe-pane -o -t t "cat >>'$tmp/raw'"
keys :
type_text "graphics sixel"
keys Enter
wait_for "graphics: sixel pixels"
tries=0
while ! grep -q "$(printf '\033P')" "$tmp/raw" 2>/dev/null && [ $tries -lt 100 ]; do
	sleep 0.1
	tries=$((tries + 1))
done
checks=$((checks + 1))
grep -q "$(printf '\033P')" "$tmp/raw" 2>/dev/null || fail "no sixel picture was written"
T pipe-pane -t t
keys :
type_text "graphics symbols"
keys Enter
wait_for "graphics: symbols"

# Weights, and back to editing: the worker is stopped and joined.
keys w
wait_for "conv1 weights"
keys Escape
wait_for "EDIT ─ 10 layers"
wait_threads "$pid" -lt "$during" "the analysis worker outlived its view"
keys q
wait_exit 0

# A video on a model with a 3x24x32 input.
v="$tmp/video.strata.json"
"$STRATA" new "$v" >/dev/null 2>&1
"$STRATA" edit "$v" -c "add input clip; set clip dims 3x24x32; add pooling pool; connect clip pool;
add output out; connect pool out; save" >/dev/null 2>&1
clip="$top_srcdir/tests/data/video/tiny.avi"
start 120 40 "$STRATA" "$v"
wait_for "EDIT ─ 3 layers"
keys :
type_text "input $clip"
keys Enter
wait_for "ANALYSIS ─ 3 layers"
wait_for "tiny.avi 32x24 RGB"
wait_for "frame 0/11 · paused"
keys .
wait_for "frame 1/11"
keys '>'
wait_for "frame 11/11"
keys '<'
wait_for "frame 1/11"
keys Space
wait_for "the end of the video"
wait_for "frame 11/11 · paused"
keys q
wait_for "EDIT ─ 3 layers"
keys q
wait_exit 0

# Runtime options: a threshold over a ramp, changed from the options
# panel, reruns the network and the inspector shows the new mask.
o="$tmp/options.strata.json"
cat >"$o" <<'JSON'
{"format": "strata-model", "version": 1, "layers": [
 {"name": "data", "type": "input", "params": {"dims": [1, 4, 5]}},
 {"name": "mask", "type": "threshold", "params": {"level": 5.0}, "inputs": ["data"]},
 {"name": "out", "type": "output", "inputs": ["mask"]}]}
JSON
/usr/bin/python3 -c "import numpy as np; np.save('$tmp/ramp.npy', np.arange(20, dtype=np.float32).reshape(1, 1, 4, 5))" ||
	fail "numpy could not write the ramp (./bootstrap installs python3-numpy)"
start 120 40 "$STRATA" "$o"
wait_for "EDIT ─ 3 layers"
keys :
type_text "input $tmp/ramp.npy"
keys Enter
wait_for "ramp.npy 1x1x4x5"
wait_for "DONE  run 2 in"
keys j Enter z
wait_for "mean 0.7 "
keys Tab Enter C-u
type_text "9.5"
keys Enter
wait_for "  level          9.5"
wait_for "mean 0.5 "
keys q
wait_for "EDIT ─ 3 layers"
wait_for "options.strata.json [+]"
keys q
wait_for "Save the changes before quitting?"
keys n
wait_exit 0

# STRATA_MAX_FRAMES: a session playing a video ends on its own.
start 120 40 env STRATA_MAX_FRAMES=3 "$STRATA" "$v"
wait_for "EDIT ─ 3 layers"
keys :
type_text "input $clip"
keys Enter
wait_for "frame 0/11 · paused"
keys Space
wait_exit 0
finish
