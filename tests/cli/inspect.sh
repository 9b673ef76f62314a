#!/bin/sh
# strata inspect: per-channel statistics of a layer's output, the channel
# grid as a PNG compared pixel by pixel with one numpy computes from the
# same known tensor, weights shown as kernels, the terminal drawing, video
# frames as inputs, and the refusals.
. "$top_srcdir/tests/cli/lib.sh"

need_python /usr/bin/python3 numpy PIL

# A model that passes a 4x3x5 input through: channel c holds 15c .. 15c+14.
cat >"$tmp/pass.strata.json" <<'JSON'
{"format": "strata-model", "version": 1,
 "layers": [
  {"name": "data", "type": "input", "params": {"dims": [4, 3, 5]}},
  {"name": "same", "type": "elementwise", "params": {"operation": "max"}, "inputs": ["data", "data"]},
  {"name": "out", "type": "output", "inputs": ["same"]}]}
JSON
expect 0 /usr/bin/python3 -c "
import numpy as np
np.save('$tmp/ramp.npy', np.arange(60, dtype=np.float32).reshape(1, 4, 3, 5))
"

# Statistics, exact.
expect 0 "$STRATA" inspect "$tmp/pass.strata.json" -l same -i "$tmp/ramp.npy"
has out "same output 0 (1x4x3x5): channels 0 to 3 of 4; all of them: min 0, max 59, mean 29.5"
has out "        2           30           44           37      4.32049      0      0"
expect 0 "$STRATA" inspect "$tmp/pass.strata.json" -l same -i "$tmp/ramp.npy" -c 1:2
has out "channels 1 to 2 of 4"
lacks out "        3           45"

# The grid in grey, one range for all, two columns, no zoom: numpy draws the
# same picture from the same tensor and the pixels must agree (within one
# level, for rounding).
expect 0 "$STRATA" inspect "$tmp/pass.strata.json" -l same -i "$tmp/ramp.npy" --colormap gray --shared-range \
	--columns 2 --zoom 1 -o "$tmp/grid.png"
has out "2x2 pictures of 3x5, gray, 13x9 pixels"
expect 0 /usr/bin/python3 - "$tmp/grid.png" <<'PY'
import sys

import numpy as np
from PIL import Image

got = np.asarray(Image.open(sys.argv[1]).convert("RGB")).astype(int)
t = np.arange(60, dtype=np.float64).reshape(4, 3, 5)
want = np.full((9, 13), round(0.18 * 255))
for c in range(4):
    y, x = 1 + (c // 2) * 4, 1 + (c % 2) * 6
    want[y:y + 3, x:x + 5] = np.round(t[c] / 59 * 255)
diff = np.abs(got - want[:, :, None]).max()
if got.shape != (9, 13, 3) or diff > 1:
    print("the grid differs: shape", got.shape, "largest difference", diff)
    print(got[:, :, 0])
    sys.exit(1)
PY

# Each channel its own range and a colour map: still a picture of the right size.
expect 0 "$STRATA" inspect "$tmp/pass.strata.json" -l same -i "$tmp/ramp.npy" --colormap heat --zoom 4 \
	-o "$tmp/heat.png"
has out "2x2 pictures of 3x5, heat, 43x27 pixels"

# A trained network's first layer: its kernels, one output channel per row.
fm="$top_srcdir/examples/fashion_mnist"
expect 0 "$STRATA" inspect "$fm/fashion_mnist.strata.json" -l conv1 --weight weights -i "$fm/inputs/bag.png" \
	--colormap diverging -o "$tmp/kernels.png"
has out "conv1 weights (1x16x3x3): channels 0 to 15, 1x16 pictures of 3x3, diverging"
# Its output for a real image, drawn in the terminal.
TERM=xterm-256color COLORTERM= expect 0 "$STRATA" inspect "$fm/fashion_mnist.strata.json" -l conv1 \
	-i "$fm/inputs/sneaker.png" --term --width 60
has out "conv1 output 0 (1x16x28x28): channels 0 to 15, viridis"
has out "[38;5;"
expect 0 "$STRATA" inspect "$fm/fashion_mnist.strata.json" -l conv1 -i "$fm/inputs/sneaker.png" --term --width 40 \
	--ascii
lacks out "▀"
has out "symbols graphics (TERM="
# Pixels: sixel and kitty as asked, detected from TERM, never inside tmux.
expect 0 "$STRATA" inspect "$fm/fashion_mnist.strata.json" -l conv1 -i "$fm/inputs/sneaker.png" --term --width 40 \
	--graphics sixel
has out "sixel graphics (as --graphics says)"
has out "$(printf '\033P')"
TERM=xterm-kitty expect 0 "$STRATA" inspect "$fm/fashion_mnist.strata.json" -l conv1 -i "$fm/inputs/sneaker.png" \
	--term --width 40
has out "kitty graphics (TERM=xterm-kitty has kitty graphics)"
has out "$(printf '\033_G')"
TMUX=/tmp/x TERM=xterm-kitty expect 0 "$STRATA" inspect "$fm/fashion_mnist.strata.json" -l conv1 \
	-i "$fm/inputs/sneaker.png" --term --width 40
has out "symbols graphics (inside tmux"
expect 2 "$STRATA" inspect "$fm/fashion_mnist.strata.json" -l conv1 -i "$fm/inputs/sneaker.png" --term \
	--graphics iterm
has err "--graphics takes auto, symbols, sixel or kitty, not 'iterm'"

# A video frame as the input (the clip is 32x24 RGB; this model takes 3x24x32).
cat >"$tmp/video.strata.json" <<'JSON'
{"format": "strata-model", "version": 1,
 "layers": [
  {"name": "frame", "type": "input", "params": {"dims": [3, 24, 32], "image_scale": 0.00392156862745098}},
  {"name": "out", "type": "output", "inputs": ["frame"]}]}
JSON
clip="$top_srcdir/tests/data/video/tiny.mkv"
expect 0 "$STRATA" inspect "$tmp/video.strata.json" -l frame -i "$clip" --frame 5
has out "frame output 0 (1x3x24x32)"
expect 2 "$STRATA" inspect "$tmp/video.strata.json" -l frame -i "$clip" --frame 40
has err "the video ends before frame 40 (it has 12)"
expect 2 "$STRATA" inspect "$tmp/video.strata.json" -l frame -i "$clip" --frame x
has err "--frame takes a frame number from 0, not 'x'"
expect 0 "$STRATA" run "$tmp/video.strata.json" -i "$clip" --frame 3 --no-report
# Another size: refused with the way out, then stretched or cropped as the
# input layer's image_resize says.
sed 's/"dims": \[3, 24, 32\]/"dims": [3, 48, 48]/' "$tmp/video.strata.json" >"$tmp/big.strata.json"
expect 2 "$STRATA" run "$tmp/big.strata.json" -i "$clip" --no-report
has err "the image is 32x24 pixels but the input takes 48x48 (width x height); the input layer's image_resize"
sed 's/"image_scale"/"image_resize": "stretch", "image_scale"/' "$tmp/big.strata.json" >"$tmp/stretch.strata.json"
expect 0 "$STRATA" inspect "$tmp/stretch.strata.json" -l frame -i "$clip" --frame 2
has out "frame output 0 (1x3x48x48)"
sed 's/"image_scale"/"image_resize": "crop", "image_scale"/' "$tmp/big.strata.json" >"$tmp/crop.strata.json"
expect 0 "$STRATA" inspect "$tmp/crop.strata.json" -l frame -i "$clip" --frame 2 -o "$tmp/crop.png"
has out "2x2 pictures of 48x48, viridis, 99x99 pixels"

# Refusals.
expect 2 "$STRATA" inspect "$tmp/pass.strata.json" -i "$tmp/ramp.npy"
has err "name the layer to look at: --layer NAME"
expect 2 "$STRATA" inspect "$tmp/pass.strata.json" -l nope -i "$tmp/ramp.npy"
has err "has no layer 'nope'"
expect 2 "$STRATA" inspect "$tmp/pass.strata.json" -l out -i "$tmp/ramp.npy"
has err "layer 'out' has no output 0 of its own to show"
expect 2 "$STRATA" inspect "$tmp/pass.strata.json" -l same -i "$tmp/ramp.npy" -c 9
has err "--channels starts at 9, but same output 0 (1x4x3x5) has 4 channels"
expect 2 "$STRATA" inspect "$tmp/pass.strata.json" -l same -i "$tmp/ramp.npy" -c 1:0
has err "--channels takes FIRST or FIRST:COUNT"
expect 2 "$STRATA" inspect "$tmp/pass.strata.json" -l same -i "$tmp/ramp.npy" --colormap jet
has err "--colormap takes gray, viridis, heat or diverging, not 'jet'"
expect 2 "$STRATA" inspect "$tmp/pass.strata.json" -l same -i "$tmp/ramp.npy" -o "$tmp/grid.jpg"
has err "-o writes a PNG picture"
expect 2 "$STRATA" inspect "$tmp/pass.strata.json" -l same --weight weights -i "$tmp/ramp.npy"
has err "layer 'same' has no weight 'weights' bound"
expect 2 "$STRATA" inspect "$tmp/pass.strata.json" -l same
has err "input 'data' needs data"
finish
