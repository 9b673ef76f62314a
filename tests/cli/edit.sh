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
