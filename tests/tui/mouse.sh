#!/bin/sh
# The mouse, as the terminal reports it (SGR mode): a click selects, a drag
# by a glyph's body moves it, a drag from an output terminal to a glyph
# connects, the wheel pans.
. "$top_srcdir/tests/tui/lib.sh"

# hex TEXT: TEXT's bytes as send-keys -H wants them.
hex() { printf '%s' "$1" | od -An -tx1; }
# mouse BUTTON X Y [m]: one SGR mouse report at column X, row Y (1-based);
# m for a release.
mouse() {
	# shellcheck disable=SC2046
	T send-keys -t t -H $(hex "$(printf '\033[<%d;%d;%d%s' "$1" "$2" "$3" "${4:-M}")")
}
click() {
	mouse 0 "$1" "$2"
	mouse 0 "$1" "$2" m
}
drag() {
	mouse 0 "$1" "$2"
	mouse 32 "$3" "$4"
	mouse 0 "$3" "$4" m
}
# where TEXT: "COLUMN ROW" (1-based) of the first place TEXT shows; for a
# glyph's name, "│ NAME" (its left border) is the place to look for.
where() {
	screen | awk -v t="$1" '{ i = index($0, t); if (i) { print substr($0, 1, i - 1) "\t" NR; exit } }' |
		while IFS="$(printf '\t')" read -r before row; do
			# Columns, not bytes: the text before may hold box drawing.
			echo "$(($(printf '%s' "$before" | wc -m) + 1)) $row"
		done
}

m="$tmp/cnn.strata.json"
cp "$top_srcdir/examples/cnn_classifier.strata.json" "$m"
start 120 40 "$STRATA" "$m"
wait_for "EDIT ─ 10 layers"
wait_for "data · input"

# A click on conv1's glyph selects it: the parameter form shows it.
set -- $(where "│ conv1")
click "$1" "$2"
wait_for "conv1 · convolution"

# Dragged by its body 20 columns to the right, it moves, as one edit.
drag "$1" "$2" $(($1 + 20)) "$2"
wait_for "[+]"
keys C-s
wait_for "saved"
checks=$((checks + 1))
x_before=$(sed -n '/"name": "conv1"/,/"pos"/s/.*"pos": \[\([0-9-]*\),.*/\1/p' \
	"$top_srcdir/examples/cnn_classifier.strata.json")
x_after=$(sed -n '/"name": "conv1"/,/"pos"/s/.*"pos": \[\([0-9-]*\),.*/\1/p' "$m")
if [ "$x_after" != "$((x_before + 20))" ]; then
	fail "conv1 moved from x=$x_before to x=$x_after, expected $((x_before + 20))"
fi
keys u
wait_for "[+]"

# Disconnected, pool1 is an error; a drag from conv1's output terminal to
# pool1's glyph links them again.
click $(where "│ pool1")
wait_for "pool1 · pooling"
keys x
wait_for "1 error"
set -- $(where "│ conv1")
# The output terminal is on the glyph's bottom edge, 3 rows down: ●.
row=$(($2 + 3))
col=$(screen | sed -n "${row}p" | awk '{ i = index($0, "●"); print i }')
col=$(screen | sed -n "${row}p" | cut -c1-"$col" | wc -m)
set -- $(where "│ pool1")
drag "$col" "$row" "$1" "$2"
wait_gone "1 error"
wait_for "no problems"

# The wheel pans: a few notches down and the input layer leaves the view.
wait_for "│ data"
mouse 65 60 20
mouse 65 60 20
mouse 65 60 20
mouse 65 60 20
wait_gone "│ data"
mouse 64 60 20
mouse 64 60 20
mouse 64 60 20
mouse 64 60 20
wait_for "│ data"

keys q
wait_for "Save the changes before quitting?"
keys n
wait_exit 0
finish
