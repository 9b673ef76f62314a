#!/bin/sh
# Menus (F10, and Alt with a menu's initial) and the collections manager:
# plugins disabled and extra plugin folders added are kept in config.json.
. "$top_srcdir/tests/tui/lib.sh"

m="$tmp/cnn.strata.json"
cp "$top_srcdir/examples/cnn_classifier.strata.json" "$m"
mkdir -p "$tmp/plugins"
cp "$top_builddir/tests/plugins/.libs/good.so" "$tmp/plugins/"
config="$XDG_CONFIG_HOME/strata/config.json"

start 120 40 "$STRATA" "$m"
wait_for "EDIT ─ 10 layers"
# F10 opens File; its items show their keys.
keys F10
wait_for "Save and quit"
wait_for "<C-s>"
keys Escape
wait_gone "Save and quit"
# Alt-v opens View; Enter on its first item shows tensor shapes on links.
keys M-v
wait_for "Tensor shapes on links"
keys Enter
wait_gone "Tensor shapes on links"
wait_for "1×16×28×28"

# The collections manager: a folder added loads its plugins at once.
keys F3
wait_for "std 0.1.0"
wait_for "extra folders: none (a adds one)"
keys a
wait_for "Plugin folder to add:"
type_text "$tmp/nowhere"
keys Enter
wait_for "$tmp/nowhere: No such file or directory"
keys a
type_text "$tmp/plugins"
keys Enter
wait_for "good 2.1.0: 1 layer type, 0 activations"
wait_for "extra folders: $tmp/plugins"
file_has "$config" "$tmp/plugins"
# Space on std (the first row) disables it from the next start.
keys Space
wait_for "(disabled from the next start)"
file_has "$config" '"disabled_plugins"'
file_has "$config" '"std"'
keys Escape
wait_gone "Collections"
keys q
wait_exit 0

# The next start: std is off (the model cannot type-check), good is on.
start 120 40 "$STRATA" "$m"
wait_for "EDIT ─"
keys F3
wait_for "std 0.1.0: disabled"
wait_for "good 2.1.0"
# Enabled again for the start after.
keys Space
wait_for "(enabled from the next start)"
keys Escape
wait_gone "Collections"
keys q
wait_exit 0
start 120 40 "$STRATA" "$m"
wait_for "EDIT ─ 10 layers"
wait_for "no problems"
keys q
wait_exit 0
finish
