#!/bin/sh
# strata run on a device backend, without a GPU: the "fake" backend module
# (tests/backends) and the engine-test plugin's layers for it. The same
# model runs on the CPU and on the fake device, in both float types, with
# timing, profiling and the report, and the outputs agree.
. "$top_srcdir/tests/cli/lib.sh"
need_python /usr/bin/python3 numpy

mkdir -p "$tmp/plugins"
cp "$TEST_PLUGIN_DIR/engine-test.so" "$tmp/plugins/"
export STRATA_PLUGIN_PATH="$STRATA_PLUGIN_PATH:$tmp/plugins"
export STRATA_BACKEND_PATH="$top_builddir/tests/backends/.libs"

m="$tmp/chain.strata.json"
expect 0 "$STRATA" new "$m"
expect 0 "$STRATA" edit "$m" -c 'add input data; set data dims 3x8x8; add add_bias b; connect data b;
	add scale_rt s; connect b s; add triple t; connect s t; add add_bias b2; activation b2 relu;
	connect t b2; add output out; connect b2 out; save'

expect 0 "$STRATA" run "$m" --random-weights --random-input --no-report -o "out=$tmp/cpu.npy"
for format in fp32-nchw fp16-nhwc; do
	expect 0 "$STRATA" run "$m" --backend fake --format "$format" --random-weights --random-input \
		-n 5 --profile --profile-iterations 3 --report-dir "$tmp/reports" --json -o "out=$tmp/fake-$format.npy"
	has out '"backend":	"fake"'
	lacks err "error"
done
expect 0 "$STRATA" run "$m" --backend fake --random-weights --random-input --show-plan --no-report
has out "backend fake"
# Both float types agree with the CPU (float16 within its precision).
for format in fp32-nchw:1e-6 fp16-nhwc:1e-2; do
	expect 0 /usr/bin/python3 -c "
import sys, numpy as np
a, b = np.load('$tmp/cpu.npy'), np.load('$tmp/fake-${format%%:*}.npy')
assert a.shape == b.shape == (1, 3, 8, 8), (a.shape, b.shape)
assert (a == 0).any() and (a >= 0).all(), 'the relu'
err = np.abs(a - b) / (1 + np.abs(a))
assert err.max() <= ${format#*:}, err.max()
"
done
ls "$tmp/reports"/*.strata-report.json >/dev/null 2>&1 || { echo "FAIL: no report"; fails=$((fails + 1)); }
report=$(ls "$tmp/reports"/*.strata-report.json | head -n 1)
expect 0 "$STRATA" report show "$report"
has out "Fake GPU 0"

# A name no module answers to is a usage error; an activation the device
# implementation does not apply is refused with the layer named.
expect 2 "$STRATA" run "$m" --backend nosuch --random-weights --random-input
has err "--backend takes cpu or cuda, not 'nosuch'"
expect 0 "$STRATA" edit "$m" -c 'activation t negate_test; save'
expect 3 "$STRATA" run "$m" --backend fake --random-weights --random-input --no-report
has err "layer 't'"
has err "negate_test"

# The conformance runner on another backend: layers it lacks are skipped,
# never failed (tests/gpu/run runs it on cuda).
conf="$top_builddir/tests/conformance/onnx-conformance"
"$conf" --backend fake --filter node/test_relu >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -ne 77 ]; then
	checks=$((checks + 1))
	[ "$rc" -eq 0 ] || { echo "FAIL: onnx-conformance --backend fake exited $rc"; cat "$tmp/out" "$tmp/err"; fails=$((fails + 1)); }
	last="onnx-conformance --backend fake"
	has out "SKIP node/test_relu: compile: "
	has out "on the fake backend"
	has out "0 passed, 0 failed, 1 skipped"
fi
expect 2 "$conf" --backend nosuch
has err "the nosuch backend is unavailable"
finish
