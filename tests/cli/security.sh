#!/bin/sh
# Opening a model never executes code: whatever a model file names (plugin
# files, folders, library-like types) and whatever lies beside it, strata
# check, info, run and edit load plugins only from the search path and the
# user's settings. The witness is a plugin whose constructor writes a file
# the moment anything loads it.
. "$top_srcdir/tests/cli/lib.sh"

export TATTLE_FILE="$tmp/tattled"
dir="$tmp/project"
mkdir -p "$dir/plugins"
cp "${top_builddir:?}/tests/plugins/.libs/tattle.so" "$dir/"
cp "$dir/tattle.so" "$dir/plugins/"
cp "$dir/tattle.so" "$dir/libstrata-tattle.so"
# Fields a careless loader might follow to a plugin: refused, by name.
cat >"$dir/fields.strata.json" <<JSON
{"format": "strata-model", "version": 1,
 "plugins": ["$dir/tattle.so", "tattle.so"], "plugin_paths": ["$dir/plugins", "plugins"],
 "network": {"name": "n", "plugin": "tattle.so"},
 "layers": [{"name": "data", "type": "input", "params": {"dims": [1, 4, 4]}}]}
JSON
# Types that look like the plugin, and a weights folder full of them: the
# model loads, with unknown types, and nothing is loaded.
cat >"$dir/m.strata.json" <<JSON
{"format": "strata-model", "version": 1,
 "network": {"name": "n", "weights": "plugins"},
 "layers": [
  {"name": "data", "type": "input", "params": {"dims": [1, 4, 4]}},
  {"name": "t", "type": "$dir/tattle.so", "inputs": ["data.0"]},
  {"name": "u", "type": "tattle", "inputs": ["data.0"]}
 ]}
JSON
# From inside the model's folder too: the working folder is no search path.
cd "$dir" || exit 1
for cmd in check info run "edit -c check"; do
	# shellcheck disable=SC2086
	expect 2 "$STRATA" $cmd fields.strata.json
	has err "unknown field 'plugins' in the model"
	has err "unknown field 'plugin' in network"
done
expect 1 "$STRATA" check m.strata.json
has out "unknown layer type"
expect 1 "$STRATA" info m.strata.json
expect 1 "$STRATA" run m.strata.json --random-weights --random-input
expect 0 "$STRATA" edit m.strata.json -c 'check'
expect 0 "$STRATA" plugins
checks=$((checks + 1))
if [ -e "$TATTLE_FILE" ]; then
	echo "FAIL: opening the model loaded a plugin it named"
	fails=$((fails + 1))
fi
# The witness works: loaded through the search path, it tells.
STRATA_PLUGIN_PATH="$STRATA_PLUGIN_PATH:$dir/plugins" expect 0 "$STRATA" plugins
checks=$((checks + 1))
if [ ! -e "$TATTLE_FILE" ]; then
	echo "FAIL: the tattle plugin did not tell when loaded from the search path"
	fails=$((fails + 1))
fi
finish
