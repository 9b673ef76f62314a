#!/bin/sh
# Command-line tests: headless editing with strata edit -c / -f.
. "$top_srcdir/tests/cli/lib.sh"

m="$tmp/net.strata.json"
expect 0 "$STRATA" new "$m"
expect 0 "$STRATA" edit "$m" -c 'add input data; set data dims 3x32x32; add conv c1; set c1 num_output 16;
	set c1 kernel 3x3; set c1 padding same; activation c1 relu; connect data c1; add output out;
	connect c1 out; save'
has out "added c1 (convolution)"
has out "saved $m"
expect 0 "$STRATA" check "$m"
has out "3 layers, 0 errors, 0 warnings"
expect 0 "$STRATA" info "$m"
has out "1x16x32x32"

# A failing command stops the script with its position; the file is untouched.
cp "$m" "$tmp/before.json"
expect 2 "$STRATA" edit "$m" -c 'add identity i; connect c1 i
  connect dta i; save'
has err "-c:2:3: error: connect: 'dta' is not a layer of this model (did you mean 'data'?)"
has err "were not saved"
same "$m" "$tmp/before.json"

# Scripts from files, run in order with -c; comments and quotes.
cat >"$tmp/script" <<'SCRIPT'
# widen the network
set c1 num_output 32
network description "a small net; for tests"
SCRIPT
expect 0 "$STRATA" edit "$m" -f "$tmp/script" -c 'save'
expect 0 "$STRATA" info --json "$m"
has out '"params":	896'
grep -q '"description": "a small net; for tests"' "$m" || { echo "FAIL: description not saved"; fails=$((fails + 1)); }

# Undo and redo, and unsaved edits are reported.
cp "$m" "$tmp/before.json"
expect 0 "$STRATA" edit "$m" -c 'delete c1; undo; redo'
has err "warning: the edits were not saved"
same "$m" "$tmp/before.json"
expect 0 "$STRATA" edit "$m" -c 'delete c1; undo'
lacks err "not saved"
expect 2 "$STRATA" edit "$m" -f "$tmp/missing-script"
has err "cannot read the script: No such file or directory"
expect 2 "$STRATA" edit "$tmp/missing.json" -c 'save'
has err "cannot read the model"

# The list of commands, shared with the TUI.
expect 0 "$STRATA" edit --list-commands
has out "connect SRC[.OUT] DST[.IN]"
has out "(alias: rm)"

# Type errors are not edit errors: the edit succeeds and check reports them.
expect 0 "$STRATA" edit "$m" -c 'disconnect c1; save'
expect 1 "$STRATA" check "$m"
has out "error: layer 'c1': These mandatory inputs are not connected: 0"

# Blocks, expansion and the block-style XWN settings (docs/blocks.md): a
# failing command changes nothing and names its place in the script.
x="$tmp/blocks.strata.json"
expect 0 "$STRATA" new "$x"
expect 0 "$STRATA" edit "$x" -c 'add input data; set data dims 4x8x8;
add-block conv_block_2d b1 order=conv,bn,act num_output=8 transform=4 pruning=none activation=leaky_relu;
connect data b1_conv; add cascade casc; set casc num_output 6; set casc kernel_size 7;
set casc pruning 0.5; connect b1_act casc; add output out; connect casc out; save'
has out "added b1 (conv_block_2d): b1_conv, b1_bn, b1_act"
for want in '"use_transform": true,' '"bit": 4,' '"use_pruning": false'; do
	checks=$((checks + 1))
	grep -qF "$want" "$x" || { echo "FAIL: $x lacks $want"; fails=$((fails + 1)); }
done
checks=$((checks + 1))
if grep -q '"transform"\|"pruning"' "$x"; then
	echo "FAIL: block-style names saved in $x"
	fails=$((fails + 1))
fi
expect 0 "$STRATA" check "$x"
cp "$x" "$tmp/before.json"
expect 2 "$STRATA" edit "$x" -c 'add-block fc_block f transform=4; save'
has err "-c:1:1: error: add-block: no part of fc_block takes 'transform'"
expect 2 "$STRATA" edit "$x" -c 'set b1_bn transform 4'
has err "batch_normalization has no parameter 'transform': it is a block-style setting"
same "$x" "$tmp/before.json"
expect 0 "$STRATA" edit "$x" -c 'expand casc; save'
has out "expanded casc into 5 layers: casc_stage0, casc_stage1, casc_stage2, casc_concat, casc_pointwise"
expect 0 "$STRATA" check "$x"
has out "10 layers, 0 errors"
expect 0 "$STRATA" edit "$x" -c 'add-block'
has out "conv_block_2d            conv,bn,act,dropout"

# Without a terminal (or, configured with --disable-tui, without an editor)
# the editor says what to do instead, and the model stays as it was.
cp "$m" "$tmp/before.json"
expect 2 "$STRATA" edit "$m" </dev/null
if grep -qF "disable-tui" "$tmp/err"; then
	has err "this build has no interactive editor (configured with --disable-tui)"
else
	has err "the editor needs a terminal; for scripts use strata edit MODEL -c"
fi
expect 2 "$STRATA" "$m" </dev/null
same "$m" "$tmp/before.json"

finish
