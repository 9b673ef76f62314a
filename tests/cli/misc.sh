#!/bin/sh
# Command-line tests: version, help, usage errors, plugins, layers, new.
. "$top_srcdir/tests/cli/lib.sh"

expect 0 "$STRATA" --version
has out "strata "
has out "plugin ABI 2, model format 1.0"

expect 0 "$STRATA" --help
has out "usage: strata [MODEL]"
has out "check"
expect 2 "$STRATA"
has err "usage: strata"
expect 2 "$STRATA" --frobnicate
has err "unknown option '--frobnicate'"
expect 0 "$STRATA" check --help
has out "usage: strata check [OPTIONS] MODEL"
has out "--json"
expect 2 "$STRATA" check
has err "usage: strata check MODEL"
expect 2 "$STRATA" check a.json b.json
expect 2 "$STRATA" info --colour x.json
has err "unknown option '--colour'"
expect 2 "$STRATA" layers --category
has err "--category needs a value (CATEGORY)"
expect 0 "$STRATA" help edit
has out "edit commands (for -c and -f):"
expect 2 "$STRATA" help nothing
has err "no command 'nothing'"

# Plugins: std loads; refused plugins are listed with their reason.
expect 0 "$STRATA" plugins
has out "std $("$STRATA" --version | sed -n 's/^strata //p')"
mkdir -p "$tmp/plugins"
cp "$TEST_PLUGIN_DIR/bad-abi.so" "$TEST_PLUGIN_DIR/dup-std.so" "$tmp/plugins/"
STRATA_PLUGIN_PATH="$STRATA_PLUGIN_PATH:$tmp/plugins" expect 0 "$STRATA" plugins
has out "refused: $tmp/plugins/bad-abi.so"
has out "built for plugin ABI 999, but this Strata uses ABI 2; rebuild it"
has out "note: layer type 'convolution' refused: the name is already provided by plugin 'std'"
STRATA_PLUGIN_PATH="$STRATA_PLUGIN_PATH:$tmp/plugins" expect 0 "$STRATA" plugins --json
has out '"refused":	"built for plugin ABI 999'
has out '"loaded":	true'
lacks out 'already loaded'

# The palette.
expect 0 "$STRATA" layers
has out "Input/Output"
has out "input (in)"
has out "Activations (attached to layers)"
expect 0 "$STRATA" layers --category Pooling
has out "pooling (pool)"
lacks out "input (in)"
expect 2 "$STRATA" layers --category Nope
has err "no category 'Nope'"
expect 0 "$STRATA" layers --json
has out '"name":	"convolution"'
has out '"activations":'

# No plugins at all: a clear note, not silence. A copy of the program outside
# the build tree finds only installed plugins, if any.
cp "$STRATA" "$tmp/strata-copy"
if STRATA_PLUGIN_PATH=/nonexistent "$tmp/strata-copy" plugins | grep -q 'no plugins found'; then
	STRATA_PLUGIN_PATH=/nonexistent expect 3 "$tmp/strata-copy" layers
	has err "no plugin provides layer types"
	printf '{"format": "strata-model", "version": 1, "layers": [{"name": "x", "type": "input"}]}' >"$tmp/one.json"
	STRATA_PLUGIN_PATH=/nonexistent expect 1 "$tmp/strata-copy" check "$tmp/one.json"
	has err "note: no plugin is loaded"
else
	echo "note: plugins are installed on this machine; the no-plugin checks are skipped"
fi

# new: an empty model that type-checks, never over an existing file.
expect 0 "$STRATA" new "$tmp/My Net.strata.json"
has out "created"
expect 0 "$STRATA" check "$tmp/My Net.strata.json"
has out "0 layers, 0 errors"
grep -q '"name": "My_Net"' "$tmp/My Net.strata.json" || { echo "FAIL: network name from file name"; fails=$((fails + 1)); }
cp "$tmp/My Net.strata.json" "$tmp/before.json"
expect 2 "$STRATA" new "$tmp/My Net.strata.json"
has err "exists; use --force to replace it"
same "$tmp/My Net.strata.json" "$tmp/before.json"
expect 0 "$STRATA" new --force --name other "$tmp/My Net.strata.json"
expect 3 "$STRATA" new "$tmp/no/such/dir/m.json"
has err "cannot create a temporary file"

# strata MODEL asks for the editor (a terminal, or a build with it).
expect 2 "$STRATA" "$tmp/before.json"
has err "strata edit"

# The user's settings apply to the command line as to the editor: plugins
# disabled there stay out, extra plugin folders come in, and a broken
# config.json is reported and ignored.
mkdir -p "$HOME/.config/strata" "$tmp/extra"
cp "${top_builddir:?}/tests/plugins/.libs/good.so" "$tmp/extra/"
printf '{"disabled_plugins": ["std"], "plugin_paths": ["%s"]}\n' "$tmp/extra" >"$HOME/.config/strata/config.json"
expect 0 "$STRATA" plugins
has out "disabled in the settings (disabled_plugins in config.json)"
has out "good 2.1.0"
expect 0 "$STRATA" layers
has out "stack_test"
checks=$((checks + 1))
if grep -qE "^  convolution " "$tmp/out"; then
	echo "FAIL: a disabled plugin's layers are listed"
	fails=$((fails + 1))
fi
printf '{"disabled_plugins": "std"' >"$HOME/.config/strata/config.json"
expect 0 "$STRATA" layers
has err "config.json:1:"
has err "strata: note: the settings above are ignored"
has out "convolution"
rm -f "$HOME/.config/strata/config.json"

finish
