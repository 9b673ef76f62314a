#!/bin/sh
# The report view: :report opens the model's newest report, s sorts the
# layer table, b marks a baseline that the metric charts draw beside the
# selected layer, q goes back to the canvas, :heat colours it, and a broken
# report is refused with its file and line while editing goes on.
. "$top_srcdir/tests/tui/lib.sh"

export XDG_STATE_HOME="$HOME/.local/state"
m="$tmp/cnn.strata.json"
cp "$top_srcdir/examples/cnn_classifier.strata.json" "$m"
reports="$XDG_STATE_HOME/strata/reports/cnn"
mkdir -p "$reports"
cp "$top_srcdir/tests/data/report/small.strata-report.json" "$reports/20261130-040000.strata-report.json"
cp "$top_srcdir/tests/data/report/bad.strata-report.json" "$tmp/bad.strata-report.json"

# order NAME...: the layer table shows the names in this order, top down
# (a row is a baseline's number or a space, a space, then the name).
order() {
	checks=$((checks + 1))
	last=0
	for name in "$@"; do
		at=$(screen | grep -nE "^. $name " | head -n 1 | cut -d: -f1)
		if [ -z "$at" ] || [ "$at" -le "$last" ]; then
			fail "the table is not in the order $*"
			return 1
		fi
		last=$at
	done
}

start 120 40 "$STRATA" "$m"
wait_for "EDIT ─ 10 layers"
keys :
type_text "report"
keys Enter
wait_for "REPORT ─ 10 layers"
wait_for "small_cnn 1.2"
wait_for "20261130-040000.strata-report.json"
order conv1 relu1 pool1 flatten
# s: by time, the slowest first.
keys s
wait_for "sort time"
order conv1 pool1 relu1 flatten
# S turns it round.
keys S
wait_for "sort time (reversed)"
order flatten relu1 pool1 conv1
# The slowest-but-one becomes a baseline; it shows beside conv1's metrics.
keys s s s s s
wait_for "sort time · absolute"
keys j b
wait_for "baseline 1: pool1"
wait_for "· 1 baseline"
screen | grep -q "^1 pool1 " || fail "pool1 is not marked as baseline 1"
keys g 2
wait_for "time mean"
wait_for "conv1 · conv2d · 1x16x28x28  1 pool1"
# r: shares instead of times, back on the table.
keys 1 r
wait_for "40.0%"
# B clears the baselines; q is back to editing.
keys B
wait_for "0 baselines"
keys q
wait_for "EDIT ─ 10 layers"
wait_for "2 Canvas"
# The heat overlay from the open report: a legend on the canvas.
keys :
type_text "heat"
keys Enter
wait_for "heat overlay: 2 of 10 layers"
wait_for "of time"
keys :
type_text "heat"
keys Enter
wait_for "heat overlay off"
wait_gone "of time"
# A broken report: its file and line, and the editor goes on.
keys :
type_text "report $tmp/bad.strata-report.json"
keys Enter
wait_for "bad.strata-report.json:13:"
wait_for "EDIT ─ 10 layers"
keys :
type_text "add identity spare"
keys Enter
wait_for "EDIT ─ 11 layers"
keys :
type_text "q!"
keys Enter
wait_exit 0
finish
