#!/bin/sh
# Blocks and expansion in a whole session: a block from the palette's
# Blocks category inserted below the selected layer, a cascade convolution
# expanded with E, the file saved and read back.
. "$top_srcdir/tests/tui/lib.sh"

m="$tmp/casc.strata.json"
cat >"$m" <<'JSON'
{"format": "strata-model", "version": 1, "layers": [
 {"name": "data", "type": "input", "params": {"dims": [4, 8, 8]}, "pos": [2, 1]},
 {"name": "casc", "type": "xwn_cascade_convolution", "params": {"num_output": 6, "kernel_size": 7, "transform": 4},
  "activation": "relu", "inputs": ["data.0"], "pos": [2, 9]},
 {"name": "out", "type": "output", "inputs": ["casc.0"], "pos": [2, 17]}]}
JSON

start 120 40 "$STRATA" "$m"
wait_for "EDIT ─ 3 layers"
# The palette's Blocks category lists the blocks; typing filters them.
keys 1
type_text "block"
wait_for "cascade_block_2d"
wait_for "fc_block"
keys BSpace BSpace BSpace BSpace BSpace
type_text "conv_block_2d"
wait_for "/ conv_block_2d"
keys Enter
wait_for "EDIT ─ 7 layers"
wait_for "conv_block_2d_1_conv"
wait_for ":add-block conv_block_2d NAME order=conv,bn,act,dropout"

# E on the cascade: three stages, the concatenation and the pointwise part.
keys :
type_text "find casc"
keys Enter
keys E
wait_for "expanded into 5 layers (u undoes it)"
wait_for "EDIT ─ 11 layers"
keys C-s
wait_for "saved"
file_has "$m" '"name": "casc_stage2"'
file_has "$m" '"name": "casc_pointwise"'
file_has "$m" '"name": "conv_block_2d_1_dropout"'
file_has "$m" '"use_transform": true'
keys q
wait_exit 0

# What was saved opens and type-checks.
expect_rc=0
"$STRATA" check "$m" >"$tmp/check.out" 2>&1 || expect_rc=$?
checks=$((checks + 1))
if [ "$expect_rc" -ne 0 ] && [ "$expect_rc" -ne 1 ]; then
	echo "FAIL: strata check of the saved model exited $expect_rc"
	cat "$tmp/check.out"
	fails=$((fails + 1))
fi
finish
