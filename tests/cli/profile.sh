#!/bin/sh
# strata run writes a report after every run: the headline from the timed
# runs, and with --profile a layer table from separate profiled runs; it
# goes to $XDG_STATE_HOME/strata/reports/MODEL unless --report-dir says
# otherwise, and --no-report writes none. strata report show reads it back.
. "$top_srcdir/tests/cli/lib.sh"

cnn="$top_srcdir/examples/cnn_classifier.strata.json"
export XDG_STATE_HOME="$tmp/state"

# The default place, named after the model, and the path is printed.
expect 0 "$STRATA" run "$cnn" --random-weights --random-input -n 5
has out "p90"
has out "report: $tmp/state/strata/reports/cnn_classifier/"
report=$(sed -n 's/^report: //p' "$tmp/out")
[ -f "$report" ] || { echo "FAIL: no report at $report"; fails=$((fails + 1)); }
expect 0 "$STRATA" report show "$report"
has out "cnn_classifier"
has out "fp32-nchw"
# Two runs in the same second do not overwrite each other.
expect 0 "$STRATA" run "$cnn" --random-weights --random-input
expect 0 "$STRATA" run "$cnn" --random-weights --random-input
n=$(ls "$tmp/state/strata/reports/cnn_classifier" | wc -l)
[ "$n" -eq 3 ] || { echo "FAIL: $n reports for 3 runs"; fails=$((fails + 1)); }

# --profile: every layer of the plan in the table, in execution order.
expect 0 "$STRATA" run "$cnn" --random-weights --random-input -n 3 --profile --profile-iterations 4 \
	--report-dir "$tmp/reports" --json
has out '"report":'
has out '"p99_ms":'
report=$(ls "$tmp"/reports/*.strata-report.json)
expect 0 "$STRATA" report show "$report"
for layer in conv1 conv2 fc1 fc2 prob; do
	has out "$layer"
done
# The poolings run inside the convolutions' steps (fusion).
has out "Not profiled (no step of their own): data, pool1, pool2, out"
expect 0 "$STRATA" report csv "$report"
has out "conv1"
# The iterations kept in run order for the sparklines, and why the
# counters are missing (or what stands in for them).
has_in() { grep -q -- "$2" "$1" || { echo "FAIL: $1 lacks $2"; fails=$((fails + 1)); }; checks=$((checks + 1)); }
has_in "$report" '"latency_samples_ms": \['
has_in "$report" '"samples_ms": \['
has_in "$report" '"counters_note": '
expect 0 "$STRATA" report show "$report"
has out "  runs        "
has out "Hardware counters: "
has out "Network Metrics"
STRATA_COUNTERS=software expect 0 "$STRATA" run "$cnn" --random-weights --random-input --profile \
	--profile-iterations 2 --report-dir "$tmp/soft"
expect 0 "$STRATA" report show "$tmp"/soft/*.strata-report.json
has out "Hardware counters: software stand-ins"
has out "      cycles    IPC      misses"

# The model's "profiling" setting profiles every run; --no-profile does not.
sed 's/"tensor_format": "fp32-nchw"/"tensor_format": "fp32-nchw", "profiling": true/' "$cnn" >"$tmp/prof.strata.json"
grep -q '"profiling": true' "$tmp/prof.strata.json" || { echo "FAIL: no profiling setting made"; fails=$((fails + 1)); }
expect 0 "$STRATA" run "$tmp/prof.strata.json" --random-weights --random-input --report-dir "$tmp/setting"
expect 0 "$STRATA" report show "$tmp"/setting/*.strata-report.json
has out "Layer Table (6 of 6 layers, profiled over 10 iterations"
expect 0 "$STRATA" run "$tmp/prof.strata.json" --random-weights --random-input --no-profile --report-dir "$tmp/off"
expect 0 "$STRATA" report show "$tmp"/off/*.strata-report.json
has out "Layer Table (0 of 0 layers"
expect 2 "$STRATA" run "$cnn" --random-weights --profile --no-profile
has err "--profile and --no-profile contradict each other"

# --no-report writes nothing, and cannot go with --profile.
rm -rf "$tmp/state"
expect 0 "$STRATA" run "$cnn" --random-weights --random-input --no-report
lacks out "report:"
[ ! -e "$tmp/state/strata/reports" ] || { echo "FAIL: --no-report wrote a report"; fails=$((fails + 1)); }
expect 2 "$STRATA" run "$cnn" --random-weights --random-input --no-report --profile
has err "--no-report writes no report"
expect 2 "$STRATA" run "$cnn" --random-weights --profile-iterations 0
has err "--profile-iterations"
# A report folder that cannot be made: the run says so and fails when the
# folder was asked for; the default place only warns.
printf 'x' >"$tmp/file"
expect 3 "$STRATA" run "$cnn" --random-weights --random-input --report-dir "$tmp/file/sub"
has err "strata run: no report:"
XDG_STATE_HOME="$tmp/file" expect 0 "$STRATA" run "$cnn" --random-weights --random-input
has err "strata run: warning: no report:"
lacks out "report:"
finish
