#!/bin/sh
# strata devices, and --backend cuda where it cannot run: every reason is
# said in words a user can act on, with exit 3 (a runtime failure).
. "$top_srcdir/tests/cli/lib.sh"

model="$top_srcdir/examples/cnn_classifier.strata.json"

expect 0 "$STRATA" devices
has out "cpu   ready: "
has out "backend modules are searched in "
expect 0 "$STRATA" devices --json
has out '"name":	"cpu"'
has out '"ready":	true'
expect 0 "$STRATA" help devices
has out "usage: strata devices"

# No module anywhere: a build without CUDA says so, one with CUDA names the
# folders it searched when they hold nothing.
STRATA_BACKEND_PATH=/nonexistent expect 0 "$STRATA" devices
has out "cuda  "

# Garbage where the module should be: refused by the loader, the next
# folder (the build tree's module, when there is one) still used.
mkdir -p "$tmp/mods"
printf 'not a shared object' > "$tmp/mods/strata-cuda.so"
STRATA_BACKEND_PATH="$tmp/mods" expect 0 "$STRATA" devices

if grep -q '#define ST_HAVE_CUDA 1' "$top_builddir/config.h"; then
	expect 0 "$STRATA" devices
	has out "module built with CUDA "
	has out "libraries found: driver "
	if ! command -v nvidia-smi >/dev/null 2>&1 && ! [ -e /dev/nvidiactl ]; then
		# No GPU here (CI): the reason names the driver or the device.
		has out "cuda  unavailable: no "
		expect 3 "$STRATA" run "$model" --random-weights --backend cuda
		has err "the cuda backend is unavailable: no "
		lacks err "Segmentation"
	else
		# A GPU machine: the example runs there.
		expect 0 "$STRATA" run "$model" --random-weights --random-input --backend cuda --no-report
		has out " · cuda · "
	fi
else
	expect 0 "$STRATA" devices
	has out "cuda  unavailable: this build of strata has no CUDA backend"
	expect 3 "$STRATA" run "$model" --random-weights --backend cuda
	has err "this build of strata has no CUDA backend"
fi
expect 2 "$STRATA" run "$model" --random-weights --backend tpu
has err "--backend takes cpu or cuda, not 'tpu'"

finish
