#!/bin/sh
# Repaint only what changed: through a pty, a full frame writes more than
# half a byte per cell, the same frame again almost nothing, and the counts
# Strata keeps agree with what the terminal received. Skips when the TUI is
# not built (configure --disable-tui).
. "$top_srcdir/tests/cli/lib.sh"

tool="${top_builddir:?}/tests/tools/tui-bytes"
if [ ! -x "$tool" ]; then
	echo "SKIP: the TUI is not built (tests/tools/tui-bytes is missing)"
	exit 77
fi

# field NAME N: the Nth number on the line starting with NAME in the output.
field() {
	sed -n "s/^$1 //p" "$tmp/out" | cut -d' ' -f"$2"
}

for size in "80 24" "120 34" "200 60"; do
	# shellcheck disable=SC2086
	expect 0 "$tool" $size
	w=$(field size 1)
	h=$(field size 2)
	first=$(field first 1)
	first_received=$(field first 2)
	idle=$(field idle 1)
	idle_received=$(field idle 2)
	one=$(field one-cell 1)
	checks=$((checks + 1))
	if [ "$w $h" != "$size" ]; then
		echo "FAIL: the terminal is ${w}x$h, expected $size"
		fails=$((fails + 1))
	fi
	checks=$((checks + 1))
	if [ "${first:-0}" -le $((w * h / 2)) ]; then
		echo "FAIL: a full ${w}x$h frame wrote ${first:-nothing} bytes, expected more than $((w * h / 2))"
		fails=$((fails + 1))
	fi
	checks=$((checks + 1))
	if [ "${idle:-99}" -ge 16 ]; then
		echo "FAIL: an idle ${w}x$h frame wrote ${idle:-?} bytes, expected fewer than 16"
		fails=$((fails + 1))
	fi
	checks=$((checks + 1))
	if [ "${one:-999}" -ge 128 ]; then
		echo "FAIL: changing one cell wrote ${one:-?} bytes, expected fewer than 128"
		fails=$((fails + 1))
	fi
	checks=$((checks + 1))
	if [ "$first" != "$first_received" ] || [ "$idle" != "$idle_received" ]; then
		echo "FAIL: counted $first and $idle bytes, the terminal received $first_received and $idle_received"
		fails=$((fails + 1))
	fi
	has out "restored yes"
done

# The whole editor through a pty: its first frame is whole, 2.5 idle
# seconds (a wake to look at the model file among them) write nothing, and
# one keystroke writes a small part of a frame.
export HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/home/config" XDG_STATE_HOME="$tmp/home/state"
cp "$top_srcdir/examples/cnn_classifier.strata.json" "$tmp/m.strata.json"
expect 0 "${top_builddir:?}/tests/tools/tui-idle" "$STRATA" "$tmp/m.strata.json" 100 30
first=$(field first 1)
idle=$(field idle 1)
key=$(field key 1)
checks=$((checks + 1))
if [ "${first:-0}" -le 1500 ]; then
	echo "FAIL: the editor's first 100x30 frame wrote ${first:-nothing} bytes, expected more than 1500"
	fails=$((fails + 1))
fi
checks=$((checks + 1))
if [ "${idle:-99}" -ne 0 ]; then
	echo "FAIL: the idle editor wrote ${idle:-?} bytes in 2.5 s, expected none"
	fails=$((fails + 1))
fi
checks=$((checks + 1))
if [ "${key:-0}" -le 0 ] || [ "$key" -ge $((first / 4)) ]; then
	echo "FAIL: one keystroke wrote ${key:-?} bytes, expected some and under a quarter of the first frame's $first"
	fails=$((fails + 1))
fi
has out "exit 0"
finish
