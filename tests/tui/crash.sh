#!/bin/sh
# A plugin that crashes: the editor restores the terminal, names the plugin,
# keeps the edits in the journal, and the next start keeps the plugin off,
# offers to disable it for good, then offers the edits back.
. "$top_srcdir/tests/tui/lib.sh"

mkdir -p "$tmp/plugins"
cp "${top_builddir:?}/tests/plugins/.libs/hostile.so" "$tmp/plugins/"
export STRATA_PLUGIN_PATH="$STRATA_PLUGIN_PATH:$tmp/plugins"
export ERR="$tmp/stderr"
config="$XDG_CONFIG_HOME/strata/config.json"
m="$tmp/cnn.strata.json"
cp "$top_srcdir/examples/cnn_classifier.strata.json" "$m"
cp "$m" "$tmp/original.json"

start 120 40 sh -c 'exec "$0" "$@" 2>"$ERR"' "$STRATA" "$m"
wait_for "EDIT ─ 10 layers"
keys :
type_text "rename conv1 first"
keys Enter
wait_for "first"
# crash_test's reshape raises SIGSEGV as soon as the checker calls it,
# which is once its input is linked.
keys :
type_text "add crash_test boom"
keys Enter
wait_for "added boom"
keys :
type_text "connect pool1 boom"
keys Enter
wait_exit 139
file_has "$ERR" "strata: the plugin hostile ("
file_has "$ERR" "hostile.so) crashed with signal 11; the edits are in the journal"
same "$m" "$tmp/original.json"
# The terminal was given back: the shell's screen, not the editor's.
wait_gone "EDIT ─"

# The next start: the plugin is off and the question says why.
start 120 40 "$STRATA" "$m"
wait_for "The last session ended in a crash inside the plugin hostile"
wait_for "disable it (kept in config.json)"
keys d
# Then the journal's question, which waited its turn. The rename comes
# back; the add of a type no loaded plugin has stops the restore there.
wait_for "left 2 unsaved edits. Restore them?"
keys r
wait_for "restoring stopped: "
wait_for "first"
keys :
type_text "q!"
keys Enter
wait_exit 0
file_has "$config" '"hostile"'

# From then on it stays off, listed as disabled, and nothing is asked.
start 120 40 "$STRATA" "$m"
wait_for "EDIT ─ 10 layers"
wait_gone "crash inside"
keys F3
wait_for "hostile 0.1: disabled"
keys Escape
wait_gone "Collections"
keys q
wait_exit 0

# A crash while the model is first checked, before the screen is up: a
# model that holds a crash_test layer, with the plugin enabled again.
rm -f "$config"
sed 's/{"name": "out", "type": "output", "inputs": \["prob.0"\], "pos": \[2, 72\]}/{"name": "out", "type": "output", "inputs": ["prob.0"], "pos": [2, 72]}, {"name": "boom", "type": "crash_test", "inputs": ["data.0"]}/' \
	"$tmp/original.json" >"$m"
file_has "$m" '"crash_test"'
start 120 40 sh -c 'exec "$0" "$@" 2>"$ERR"' "$STRATA" "$m"
wait_exit 139
file_has "$ERR" "crashed with signal 11"
start 120 40 "$STRATA" "$m"
wait_for "The last session ended in a crash inside the plugin hostile"
keys k
wait_for "hostile loads again from the next start"
# Off for this session: the layer's type is unknown, and that is all.
wait_for "EDIT ─ 11 layers, 1 error"
keys q
wait_exit 0
finish
