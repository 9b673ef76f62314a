#!/bin/sh
# Faults. Saving where it cannot succeed (into a read-only folder and onto a
# full file system): Strata says why, exits 2, and the file it had stays
# byte for byte, with no temporary file left beside it. Root ignores a
# folder's mode, so as root both cases use a small tmpfs; where that cannot
# be mounted the case is skipped, saying why. And a plugin that crashes is
# named as the program ends.
. "$top_srcdir/tests/cli/lib.sh"
# Whatever happens, nothing stays mounted.
trap 'umount "$tmp/ro" "$tmp/full" 2>/dev/null; rm -rf "$tmp"' EXIT

src="$top_srcdir/examples/cnn_classifier.strata.json"
cp "$src" "$tmp/original.json"
skipped=""
ran=0

# save_fails DIR WHY: an edit and a save of DIR/m.json fail with WHY, and
# the folder holds exactly what it held before.
save_fails() {
	ls -a "$1" >"$tmp/before.ls"
	expect 2 "$STRATA" edit "$1/m.json" -c 'set conv1 num_output 8; add identity extra; save'
	has err "save: cannot"
	has err "$2"
	has err "the edits after the last 'save' were not saved"
	same "$1/m.json" "$tmp/original.json"
	ls -a "$1" >"$tmp/after.ls"
	same "$tmp/after.ls" "$tmp/before.ls"
	ran=$((ran + 1))
}

# ---- a read-only folder ----
ro="$tmp/ro"
mkdir -p "$ro"
if [ "$(id -u)" -ne 0 ]; then
	cp "$src" "$ro/m.json"
	chmod a-w "$ro"
	save_fails "$ro" "Permission denied"
	chmod u+w "$ro"
elif mount -t tmpfs -o size=1m tmpfs "$ro" 2>/dev/null; then
	cp "$src" "$ro/m.json"
	if mount -o remount,ro "$ro" 2>/dev/null; then
		save_fails "$ro" "Read-only file system"
	else
		skipped="$skipped read-only (cannot remount a tmpfs read-only)"
	fi
	umount "$ro"
else
	skipped="$skipped read-only (root, and no tmpfs can be mounted here)"
fi

# ---- a full file system ----
full="$tmp/full"
mkdir -p "$full"
if mount -t tmpfs -o size=64k tmpfs "$full" 2>/dev/null; then
	cp "$src" "$full/m.json"
	# Fill what is left; dd stops at the first failed write.
	dd if=/dev/zero of="$full/filler" bs=1k count=1024 2>/dev/null
	save_fails "$full" "No space left on device"
	umount "$full"
else
	skipped="$skipped full (no tmpfs can be mounted here)"
fi

# ---- a plugin that crashes ----
# Nothing survives a crash in C, but the message names the plugin.
mkdir -p "$tmp/plugins"
cp "${top_builddir:?}/tests/plugins/.libs/hostile.so" "$tmp/plugins/"
printf '{"format": "strata-model", "version": 1, "layers": [%s, %s]}\n' \
	'{"name": "data", "type": "input", "params": {"dims": [1, 4, 4]}}' \
	'{"name": "boom", "type": "crash_test", "inputs": ["data.0"]}' >"$tmp/crash.strata.json"
STRATA_PLUGIN_PATH="$STRATA_PLUGIN_PATH:$tmp/plugins" expect 139 sh -c '"$0" check "$1" 2>&1' \
	"$STRATA" "$tmp/crash.strata.json"
has out "strata: the plugin hostile ($tmp/plugins/hostile.so) crashed"

if [ -n "$skipped" ]; then
	echo "skipped:$skipped"
fi
if [ "$ran" -eq 0 ]; then
	echo "SKIP: neither case could be set up:$skipped"
	exit 77
fi
finish
