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
finish
