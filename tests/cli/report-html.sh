#!/bin/sh
# strata report html: the page's content (summary, tables, SVG charts, the
# comparison, names from files escaped), where it goes and what it refuses
# to overwrite; then headless Chromium loads it: no console message (the
# page runs no script and fetches nothing, so any message is an error),
# the whole page in the DOM, and a screenshot showing every report's colour.
# Without chromium the browser part is skipped, or fails when
# STRATA_REQUIRE_REFERENCES=1 (CI); STRATA_CHROMIUM names the browser.
. "$top_srcdir/tests/cli/lib.sh"

small="$top_srcdir/tests/data/report/small.strata-report.json"
colours="$top_srcdir/tests/tools/png-colours.py"
# The palette's first two colours (report-html.c), reports A and B.
colour_a="#2b6cb0"
colour_b="#dd6b20"
file_has() { checks=$((checks + 1)); grep -qF -- "$2" "$1" || { echo "FAIL: $1 lacks: $2"; fails=$((fails + 1)); }; }
file_lacks() { checks=$((checks + 1)); ! grep -qF -- "$2" "$1" || { echo "FAIL: $1 has: $2"; fails=$((fails + 1)); }; }
# count_is FILE TEXT N: TEXT occurs N times in FILE.
count_is() {
	checks=$((checks + 1))
	n=$(grep -oF -- "$2" "$1" | wc -l)
	[ "$n" -eq "$3" ] || { echo "FAIL: $1 has $n times '$2', expected $3"; fails=$((fails + 1)); }
}

# A report of a real run, with a layer table.
cnn="$top_srcdir/examples/cnn_classifier.strata.json"
expect 0 "$STRATA" run "$cnn" --random-weights --random-input -n 5 --profile --profile-iterations 3 \
	--report-dir "$tmp/reports"
run_report=$(ls "$tmp"/reports/*.strata-report.json)
run_html="${run_report%.strata-report.json}.html"
expect 0 "$STRATA" report html "$run_report"
has out "wrote $run_html"
file_has "$run_html" "<!DOCTYPE html>"
file_has "$run_html" "cnn_classifier"
for layer in conv1 conv2 fc1 fc2 prob; do
	file_has "$run_html" "<td>$layer</td>"
done
# The poolings are computed by the convolutions before them: listed as
# layers without a step of their own.
for layer in pool1 pool2; do
	file_has "$run_html" "<li>$layer</li>"
done
# Layer times, shares by type, memory, and the latency charts when the
# report keeps its samples.
checks=$((checks + 1))
n=$(grep -oF '<svg class="chart"' "$run_html" | wc -l)
[ "$n" -ge 3 ] || { echo "FAIL: $n charts in $run_html"; fails=$((fails + 1)); }
# Self-contained: nothing to fetch, no script.
for bad in '<script' ' src=' ' href=' 'url(' '@import' 'http://' 'https://'; do
	file_lacks "$run_html" "$bad"
done

# The hand-written report, with a hostile layer name in place of relu1.
sed 's/"name": "relu1"/"name": "<script>alert(1)<\/script>\&\\"'"'"'"/' "$small" >"$tmp/hostile.strata-report.json"
expect 0 "$STRATA" report show "$tmp/hostile.strata-report.json"
has out "<script>alert(1)</script>&\"'"
expect 0 "$STRATA" report html "$tmp/hostile.strata-report.json"
page="$tmp/hostile.html"
file_has "$page" "<td>&lt;script&gt;alert(1)&lt;/script&gt;&amp;&quot;&#39;</td>"
file_lacks "$page" "<script"
file_lacks "$page" "alert(1)</"
# The summary, the tables, and three charts (format 1.0 keeps no samples).
file_has "$page" '<tr><th>latency p95</th><td class="num">2.750 ms</td></tr>'
file_has "$page" '<tr><th>throughput</th><td class="num">470.6 inferences/s</td></tr>'
file_has "$page" '<tr><th>peak memory</th><td>1.00 MiB after conv1</td></tr>'
file_has "$page" '<td>fc,&quot;head&quot;</td><td>dense</td><td>1x10</td><td class="num">5</td><td class="num">0.300</td>'
file_has "$page" '<span class="na">n/a</span>'
file_has "$page" '<h3>Slowest layers</h3>'
file_has "$page" '<li>input</li><li>output</li>'
count_is "$page" '<svg class="chart"' 3
count_is "$page" '<table class="layers">' 1
file_lacks "$page" 'id="comparison"'

# Several reports: B's conv1 is 50% slower, and B has relu2 where A has relu1.
sed 's/"mean": 0.8,/"mean": 1.2,/; s/"name": "relu1", "type": "relu"/"name": "relu2", "type": "relu"/' \
	"$small" >"$tmp/b.strata-report.json"
expect 0 "$STRATA" report html "$small" "$tmp/b.strata-report.json" -o "$tmp/both.html"
has out "wrote $tmp/both.html"
both="$tmp/both.html"
file_has "$both" 'id="comparison"'
file_has "$both" '<td>conv1</td><td>conv2d</td><td class="num">0.800</td><td class="num">1.200</td><td class="slower">+0.400</td><td class="slower">+50.0%</td>'
file_has "$both" '<td>relu2</td><td>relu</td><td class="na">-</td><td class="num">0.200</td><td></td><td></td>'
file_has "$both" "fill=\"$colour_a\""
file_has "$both" "fill=\"$colour_b\""
count_is "$both" '<table class="layers">' 2
expect 0 "$STRATA" report html "$small" "$tmp/b.strata-report.json" --base B -o "$tmp/base-b.html"
file_has "$tmp/base-b.html" '<td class="faster">-0.400</td><td class="faster">-33.3%</td>'
expect 0 "$STRATA" report html "$small" --top 2 -o -
has out '<h3>Time per layer: the 2 slowest, in ms</h3>'
lacks out 'wrote'

# Where it goes: beside the report, .html appended to other names.
cp "$small" "$tmp/plain.json"
expect 0 "$STRATA" report html "$tmp/plain.json"
has out "wrote $tmp/plain.json.html"
# An earlier page is replaced; any other file only with --force.
expect 0 "$STRATA" report html "$tmp/plain.json"
echo "my notes" >"$tmp/notes.html"
expect 2 "$STRATA" report html "$small" -o "$tmp/notes.html"
has err "$tmp/notes.html exists and is not a page written by strata report html; use --force to replace it"
file_has "$tmp/notes.html" "my notes"
expect 0 "$STRATA" report html "$small" -o "$tmp/notes.html" --force
file_has "$tmp/notes.html" "<!DOCTYPE html>"

# Refusals name the file and exit non-zero.
expect 2 "$STRATA" report html "$tmp/missing.strata-report.json"
has err "missing.strata-report.json: error: cannot read the report"
[ ! -e "$tmp/missing.html" ] || { echo "FAIL: a page for a missing report"; fails=$((fails + 1)); }
expect 3 "$STRATA" report html "$small" -o "$tmp/no/such/folder/x.html"
has err "$tmp/no/such/folder/x.html"
expect 2 "$STRATA" report html "$small" --base C
has err "--base C is none of the reports given"
expect 2 "$STRATA" report html
has err "usage: strata report"

# ---- in the browser ----
# STRATA_CHROMIUM names another build of Chromium or Chrome.
browser=${STRATA_CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
if [ ! -x "${browser:-/nonexistent}" ]; then
	why="${browser:-chromium} is not installed (Debian package chromium; ./bootstrap installs it)"
	if [ "${STRATA_REQUIRE_REFERENCES:-0}" = 1 ]; then
		echo "FAIL: $why, and STRATA_REQUIRE_REFERENCES=1"
		checks=$((checks + 1))
		fails=$((fails + 1))
		finish
	fi
	[ "$fails" -eq 0 ] || finish
	echo "SKIP: $why; the $checks checks without a browser passed"
	exit 77
fi
sandbox=""
[ "$(id -u)" -ne 0 ] || sandbox="--no-sandbox" # Chromium refuses root with its sandbox

# chrome MODE PAGE OUT: loads PAGE in new headless mode with its own profile,
# MODE --dump-dom (DOM to OUT) or --screenshot=OUT; its log goes to OUT.log.
# timeout keeps a stuck browser from stalling the test.
chrome() {
	mode=$1
	[ "$mode" = "--screenshot" ] && mode="--screenshot=$3"
	timeout -k 5 60 "$browser" --headless=new $sandbox --disable-gpu --no-first-run \
		--user-data-dir="$tmp/chromium" --enable-logging=stderr --v=0 \
		--window-size=1280,1800 --hide-scrollbars "$mode" "file://$2" >"$3.out" 2>"$3.log"
}

# console_clean PAGE: the page loads, reaches its end, and logs nothing to
# the console (a script error, a blocked script or fetch, a failed load).
console_clean() {
	checks=$((checks + 1))
	chrome --dump-dom "$1" "$tmp/dom"
	rc=$?
	if [ "$rc" -ne 0 ]; then
		echo "FAIL: chromium exited $rc on $1"
		sed 's/^/  log| /' "$tmp/dom.log" | tail -n 20
		fails=$((fails + 1))
	elif grep -q ':CONSOLE' "$tmp/dom.log"; then
		echo "FAIL: console messages from $1:"
		grep ':CONSOLE' "$tmp/dom.log" | sed 's/^/  | /'
		fails=$((fails + 1))
	elif ! grep -q '<footer id="end">' "$tmp/dom.out"; then
		echo "FAIL: the DOM of $1 lacks the page's end"
		fails=$((fails + 1))
	fi
}

# The check must be able to fail: a script error, and a script slipped into
# a page (as an unescaped layer name would be), which the page's policy blocks.
printf '<!DOCTYPE html>\n<html><body><p>x</p><script>no_such_function();</script><footer id="end"></footer></body></html>\n' \
	>"$tmp/broken.html"
sed 's|<footer id="end">|<script>alert(1)</script>&|' "$page" >"$tmp/injected.html"
for bad in "$tmp/broken.html" "$tmp/injected.html"; do
	checks=$((checks + 1))
	chrome --dump-dom "$bad" "$tmp/bad"
	grep -q ':CONSOLE' "$tmp/bad.log" || { echo "FAIL: no console message from $bad"; fails=$((fails + 1)); }
done
for good in "$run_html" "$page" "$both"; do
	console_clean "$good"
done

# screenshot_shows PAGE PNG COLOUR...: the screenshot has a good number of
# pixels in each colour (the charts' bars and lines; a chip or a table bar
# alone stays well below it).
screenshot_shows() {
	checks=$((checks + 1))
	shot=$1 png=$2
	shift 2
	if ! chrome --screenshot "$shot" "$png" || [ ! -s "$png" ]; then
		echo "FAIL: no screenshot of $shot"
		sed 's/^/  log| /' "$png.log" | tail -n 20
		fails=$((fails + 1))
		return
	fi
	/usr/bin/python3 "$colours" "$png" "$@" >"$png.count" || { fails=$((fails + 1)); return; }
	while read -r colour pixels; do
		if [ "$pixels" -lt 5000 ]; then
			echo "FAIL: the screenshot of $shot has $pixels pixels of $colour"
			fails=$((fails + 1))
		fi
	done <"$png.count"
}
screenshot_shows "$run_html" "$tmp/run.png" "$colour_a"
screenshot_shows "$both" "$tmp/both.png" "$colour_a" "$colour_b"
# And the count can fail: a page without charts has none of them.
chrome --screenshot "$tmp/broken.html" "$tmp/broken.png"
checks=$((checks + 1))
pixels=$(/usr/bin/python3 "$colours" "$tmp/broken.png" "$colour_a" | awk '{print $2}')
[ "${pixels:-1}" -eq 0 ] || { echo "FAIL: $pixels report-coloured pixels on a page without charts"; fails=$((fails + 1)); }
finish
