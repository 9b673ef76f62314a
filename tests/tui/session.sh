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

# Keyboard editing: duplicate, rename, connect by choosing terminals, a
# taken input replaced only after asking, multi-select, minimise.
keys /
type_text conv_1
keys Enter
keys y
wait_for "added conv_2 (a copy of conv_1)"
keys r
wait_for "Rename to:"
keys C-u
type_text twin
keys Enter
wait_for "renamed conv_2 to twin"
# in_1's output to twin's free input.
keys /
type_text in_1
keys Enter
keys c
wait_for "connect from in_1.0"
keys /
type_text twin
keys Enter
keys Enter
wait_for "linked in_1.0 to twin"
# twin's output to gpool_1, whose only input conv_1 holds: asked first.
keys c
keys /
type_text gpool_1
keys Enter
keys Enter
wait_for "Input 0 of gpool_1 is linked to conv_1.0. Replace that link?"
keys n
wait_for "not linked"
keys /
type_text twin
keys Enter
keys c
keys /
type_text gpool_1
keys Enter
keys Enter
wait_for "Replace that link?"
keys y
wait_for "linked twin.0 to gpool_1"
keys u
wait_for "[+]"
# Two layers selected: the form shows what they have in common.
keys /
type_text conv_1
keys Enter
keys Space
wait_for "1 selected"
keys l
keys Space
wait_for "2 selected"
wait_for "2 convolution layers"
# (Esc and a key sent together would read as Alt and the key.)
keys /
type_text conv_1
keys Enter
# Minimised, a glyph is its name alone; m again shows it whole.
wait_count "8 k3" 2
keys m
wait_count "8 k3" 1
keys m
wait_count "8 k3" 2
# Everything since the duplicate undone: minimise twice, the link, the
# rename and the copy (the replacing link was undone above).
keys :
type_text "undo 5"
keys Enter
wait_gone "twin"
wait_for "EDIT ─ 4 layers"

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
