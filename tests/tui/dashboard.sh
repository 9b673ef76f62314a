#!/bin/sh
# The profiling dashboard: p opens it over an example, the iteration counter
# moves at least once a second, Space pauses (the counter stops) and
# resumes, -, f and o recompile and re-sort, s writes a report that strata
# report show reads, Esc goes back to editing with the worker's threads
# gone; the F10 menu opens it too, :q quits from it, and a model with type
# errors shows them instead of running.
. "$top_srcdir/tests/tui/lib.sh"

m="$tmp/cnn.strata.json"
cp "$top_srcdir/examples/cnn_classifier.strata.json" "$m"

# The counter on the status line, or nothing.
iteration() {
	screen 2>/dev/null | sed -n 's/.*iteration \([0-9][0-9]*\).*/\1/p' | head -n 1
}

# advances: the counter moves past its value within a second.
advances() {
	checks=$((checks + 1))
	from=$(iteration)
	i=0
	while [ $i -lt 20 ]; do
		sleep 0.05
		now=$(iteration)
		if [ -n "$from" ] && [ -n "$now" ] && [ "$now" -gt "$from" ]; then
			return 0
		fi
		i=$((i + 1))
	done
	fail "the iteration counter stayed at ${from:-nothing} for a second"
	return 1
}

start 120 40 "$STRATA" "$m"
wait_for "EDIT ─ 10 layers"
pid=$(program_pid)
alone=$(threads "$pid")
keys P
wait_for "DASHBOARD ─ 10 layers"
wait_for "RUNNING  iteration"
wait_for "random weights: the model names no weights folder"
wait_for "conv1"
wait_for "Space pause"
for k in 1 2 3 4; do
	advances
done
wait_threads "$pid" -gt "$alone" "no worker thread while the dashboard runs"

# Paused, the counter holds still for a whole second; resumed, it moves.
keys Space
wait_for "PAUSED  iteration"
held=$(iteration)
checks=$((checks + 1))
i=0
while [ $i -lt 20 ]; do
	sleep 0.05
	[ "$(iteration)" = "$held" ] || { fail "paused at $held, yet the counter moved"; break; }
	i=$((i + 1))
done
keys Space
wait_for "RUNNING  iteration"
advances

# One thread fewer (as many as there are cores to start with), another
# format, another order: still running.
had=$(screen | sed -n 's/.*fp32-nchw · \([0-9][0-9]*\) threads* ·.*/\1/p' | head -n 1)
want=$(( ${had:-2} > 1 ? ${had:-2} - 1 : 1 ))
keys -
wait_for "fp32-nchw · $want thread"
keys f
wait_for "fp32-nhwc"
wait_for "RUNNING  iteration"
advances
keys o
wait_for "Layers ("
wait_for "by time)"

# A snapshot: a report in the model's reports folder that strata reads.
keys s
wait_for "snapshot saved: $HOME/.local/state/strata/reports/cnn/"
report=$(ls "$HOME"/.local/state/strata/reports/cnn/*.strata-report.json 2>/dev/null | head -n 1)
checks=$((checks + 1))
if [ -z "$report" ]; then
	fail "no report file"
elif ! "$STRATA" report show "$report" >"$tmp/show.txt" 2>&1; then
	fail "strata report show cannot read $report"
else
	file_has "$tmp/show.txt" "format      fp32-nhwc"
	file_has "$tmp/show.txt" "threads     $want"
	file_has "$tmp/show.txt" "conv1"
fi

# Back to editing: the worker is stopped and joined.
keys Escape
wait_for "EDIT ─ 10 layers"
wait_threads "$pid" -eq "$alone" "threads left after the dashboard closed"

# From the Tools menu, and :q from inside ends Strata promptly.
keys M-t
wait_for "Profiling dashboard"
keys Up Enter
wait_for "DASHBOARD ─ 10 layers"
wait_for "RUNNING  iteration"
keys :
type_text "q"
keys Enter
wait_exit 0

# A model with type errors: the dashboard says why, and nothing runs.
b="$tmp/broken.strata.json"
"$STRATA" new "$b" >/dev/null 2>&1
"$STRATA" edit "$b" -c "add input data; set data dims 3x8x8; add pooling p; connect data p;
add eltwise e; connect data e; connect p e; save" >/dev/null 2>&1
start 120 40 "$STRATA" "$b"
wait_for "EDIT ─ 3 layers, 1 error"
keys P
wait_for "FAILED  iteration 0"
wait_for "The model cannot run:"
wait_for "1 type error; fix it in the editor:"
wait_for "e: input 1 (1x3x4x4) does not broadcast"
keys q
wait_for "EDIT ─ 3 layers, 1 error"
keys q
wait_exit 0
finish
