#!/bin/sh
# Command-line tests: strata run on the examples, its inputs, outputs,
# formats and errors.
. "$top_srcdir/tests/cli/lib.sh"

ex="$top_srcdir/examples"
fm="$ex/fashion_mnist/fashion_mnist.strata.json"

# Every example runs with random weights and inputs, in every format.
for m in "$ex"/*.strata.json; do
	for f in fp32-nchw fp16-nhwc; do
		expect 0 "$STRATA" run "$m" --random-weights --random-input --format "$f" -t 2
		has out "· $f · cpu · 2 threads"
	done
done
expect 0 "$STRATA" run "$ex/resnet18.strata.json" --random-weights --random-input -n 3 --show-plan
has out "plan: "
has out "memory: arena"
has out "3 runs after 1 warm-up"
has out "top 5:"

# The trained example with its own weights; outputs to .npy; JSON timings.
/usr/bin/python3 -c 'import numpy' 2>/dev/null && have_numpy=1 || have_numpy=0
expect 0 "$STRATA" run "$fm" --random-input -o "logits=$tmp/logits.npy" --json
has out '"format":	"fp32-nchw"'
has out '"median_ms":'
checks=$((checks + 1))
[ -s "$tmp/logits.npy" ] || { echo "FAIL: no logits.npy"; fails=$((fails + 1)); }
if [ "$have_numpy" = 1 ]; then
	checks=$((checks + 1))
	/usr/bin/python3 -c "import numpy; a = numpy.load('$tmp/logits.npy'); assert a.shape == (1, 10), a.shape" ||
		{ echo "FAIL: numpy reads the output"; fails=$((fails + 1)); }
fi

# OpenBLAS's server threads are stopped once the engine makes its pool;
# spinning, they took the second core from Strata's worker for some 70 ms.
expect 0 "$top_builddir/tests/tools/blas-threads"
has out "with a pool of one thread 1"

# The CPU kernels' SIMD level: in the run line and the JSON; STRATA_ISA
# picks one (portable runs everywhere), and a name it does not know is
# reported on stderr while the run goes on at the best level.
expect 0 env STRATA_ISA=portable "$STRATA" run "$fm" --random-input -t 1
has out "· 1 thread · portable · activations"
lacks err "STRATA_ISA"
expect 0 env STRATA_ISA=portable "$STRATA" run "$fm" --random-input -t 1 --json
has out '"simd":	"portable"'
expect 0 env STRATA_ISA=sse9 "$STRATA" run "$fm" --random-input -t 1
has err "strata run: STRATA_ISA=sse9 is not avx512, avx2 or portable; using "

# Images: the U-Net's mask written as a PNG, and a PNG fed as input.
expect 0 "$STRATA" run "$ex/unet_small.strata.json" --random-weights --random-input -o "$tmp/mask.png"
checks=$((checks + 1))
head -c 8 "$tmp/mask.png" | od -An -c | grep -q 'P   N   G' || { echo "FAIL: mask.png is not a PNG"; fails=$((fails + 1)); }
expect 0 "$STRATA" run "$ex/unet_small.strata.json" --random-weights --input "image=$tmp/mask.png"
has out "output out: 1x1x128x128"
expect 2 "$STRATA" run "$ex/resnet18.strata.json" --random-weights --input "$tmp/mask.png"
has err "128"

# Errors, each with its reason and exit code.
expect 2 "$STRATA" run "$ex/resnet18.strata.json" --random-input
has err "the model has weights but no weights folder"
expect 2 "$STRATA" run "$ex/resnet18.strata.json" --weights "$tmp/none" --random-input
has err "none"
expect 2 "$STRATA" run "$ex/resnet18.strata.json" --random-weights
has err "input 'data' needs data: --input data=FILE"
expect 2 "$STRATA" run "$ex/resnet18.strata.json" --random-weights --input nope=x.npy
has err "the model has no input layer 'nope'"
expect 2 "$STRATA" run "$ex/resnet18.strata.json" --random-weights --input "$tmp/missing.npy"
has err "missing.npy"
expect 2 "$STRATA" run "$ex/resnet18.strata.json" --random-weights --random-input --format fp64
has err "--format takes fp32-nchw"
expect 2 "$STRATA" run "$ex/resnet18.strata.json" --random-weights --random-input -n 0
has err "--iterations must be an integer from 1"
expect 3 "$STRATA" run "$ex/resnet18.strata.json" --random-weights --random-input --backend cuda
has err "the cuda backend "
expect 1 "$STRATA" run "$top_srcdir/tests/data/broken.strata.json" --random-weights --random-input
has err "type errors; strata check"

# Ctrl-C stops a long run between layers, exit 3.
checks=$((checks + 1))
"$STRATA" run "$ex/resnet18.strata.json" --random-weights --random-input -n 100000 >"$tmp/out" 2>"$tmp/err" &
pid=$!
i=0
while [ "$i" -lt 100 ] && ! grep -q . "$tmp/out" 2>/dev/null; do
	sleep 0.1
	i=$((i + 1))
	# The first run has started once the plan is compiled; give it a moment.
	[ "$i" -eq 20 ] && break
done
kill -INT "$pid"
wait "$pid"
rc=$?
[ "$rc" -eq 3 ] && grep -q "interrupted after" "$tmp/err" ||
	{ echo "FAIL: Ctrl-C gave exit $rc: $(cat "$tmp/err")"; fails=$((fails + 1)); }

finish
