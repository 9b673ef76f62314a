#!/bin/sh
# Whole sessions under tmux: a network built from nothing with the keys,
# a type error that appears and goes, undo and redo, save and reopen.
. "$top_srcdir/tests/tui/lib.sh"

m="$tmp/new.strata.json"
start 120 36 "$STRATA" edit "$m"
wait_for "new model $m"
wait_for "EDIT ─ 0 layers"

# An input layer from the palette: a opens it filtering, Enter adds.
keys a
type_text inp
wait_for "/ inp"
keys Enter
wait_for "added in_1"
wait_for "3×224×224"

# Its dims, edited in the parameters panel: e focuses it, Enter edits.
keys e Enter
wait_for "dims: Dimensions of one sample"
keys C-u
type_text 1x28x28
keys Enter
wait_for "1×28×28"

# A convolution and a global pooling below it, linked as they are added,
# then an output layer for the free output.
keys 2 a
type_text convol
keys Enter
wait_for "added conv_1, linked from in_1"
keys a
type_text global
keys Enter
wait_for "added gpool_1, linked from conv_1"
keys o
wait_for "added out_1, linked from gpool_1"
wait_for "EDIT ─ 4 layers"
wait_for "no problems"

# Cutting conv_1's input makes a type error; undo mends it, redo breaks it again.
keys k k x
wait_for "These mandatory inputs are not connected"
wait_for "1 error"
keys u
wait_for "no problems"
wait_gone "1 error"
keys C-r
wait_for "1 error"
keys u
wait_for "no problems"

# The command line runs any edit command, with its errors in the hint line.
keys :
type_text "set conv_1 num_output 8"
keys Enter
wait_for "8 k3"
keys :
type_text "connect nowhere conv_1"
keys Enter
wait_for "'nowhere' is not a layer of this model"

# Save, quit, and the file has the whole network.
keys C-s
wait_for "saved $m"
keys q
wait_exit 0
file_has "$m" '"name": "conv_1"'
file_has "$m" '"num_output": 8'
file_has "$m" '"inputs": ["gpool_1.0"]'
file_has "$m" '"dims": [1, 28, 28]'
"$STRATA" check "$m" >"$tmp/check.out" 2>&1 || { echo "FAIL: strata check on the saved model"; cat "$tmp/check.out"; fails=$((fails + 1)); }

# Reopened, it shows what was saved; q with unsaved edits asks first.
start 120 36 "$STRATA" edit "$m"
wait_for "EDIT ─ 4 layers"
wait_for "conv_1"
keys d
wait_for "deleted 1 layer"
keys q
wait_for "Save the changes before quitting?"
keys Escape
wait_gone "Save the changes before quitting?"
keys u q
wait_exit 0
"$STRATA" check "$m" >/dev/null 2>&1 || { echo "FAIL: the model changed"; fails=$((fails + 1)); }

finish
