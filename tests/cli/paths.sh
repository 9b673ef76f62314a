#!/bin/sh
# Paths written inside a model stay inside the model's folder: the weights
# folder may not be absolute, climb out with "..", or leave through a
# symbolic link, unless the user allows it; a folder given on the command
# line is the user's and is taken as given.
. "$top_srcdir/tests/cli/lib.sh"

ex="$top_srcdir/examples/fashion_mnist"
mkdir -p "$tmp/project/models" "$tmp/elsewhere"
cp -r "$ex/weights" "$tmp/elsewhere/weights"
# with_weights VALUE: the trained example with its weights setting = VALUE.
with_weights() {
	sed "s|\"weights\": \"weights\"|\"weights\": \"$1\"|" "$ex/fashion_mnist.strata.json" \
		>"$tmp/project/models/m.strata.json"
}
m="$tmp/project/models/m.strata.json"

with_weights "../../elsewhere/weights"
expect 2 "$STRATA" run "$m" --random-input
has err "the weights folder '../../elsewhere/weights' climbs out of the model's folder with '..'"
has err "--allow-outside-paths"
expect 0 "$STRATA" run "$m" --random-input --allow-outside-paths

with_weights "$tmp/elsewhere/weights"
expect 2 "$STRATA" run "$m" --random-input
has err "is an absolute path, which a model may not use"
expect 0 "$STRATA" run "$m" --random-input --allow-outside-paths

ln -s "$tmp/elsewhere/weights" "$tmp/project/models/linked"
with_weights "linked"
expect 2 "$STRATA" run "$m" --random-input
has err "'linked' leads out of the model's folder through a symbolic link"
expect 0 "$STRATA" run "$m" --random-input --allow-outside-paths

# Inside is fine, through a link inside too; --weights is taken as given.
cp -r "$ex/weights" "$tmp/project/models/inside"
ln -s inside "$tmp/project/models/alias"
with_weights "alias"
expect 0 "$STRATA" run "$m" --random-input
with_weights "../../elsewhere/weights"
expect 0 "$STRATA" run "$m" --random-input --weights "$tmp/elsewhere/weights"

# Weight files are named after layers: a name that is a path never loads.
printf '{"format": "strata-model", "version": 1, "network": {"weights": "w"}, "layers": [%s, %s]}\n' \
	'{"name": "data", "type": "input", "params": {"dims": [1, 4, 4]}}' \
	'{"name": "../../evil", "type": "convolution", "params": {"num_output": 2, "kernel": [1, 1]}, "inputs": ["data.0"]}' \
	>"$tmp/project/models/evil.strata.json"
expect 1 "$STRATA" run "$tmp/project/models/evil.strata.json" --random-input
has err "has 1 type error"
expect 1 "$STRATA" check "$tmp/project/models/evil.strata.json"
has out "invalid name '../../evil'"

finish
