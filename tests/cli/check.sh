#!/bin/sh
# Command-line tests: strata check on clean, broken and unreadable models.
. "$top_srcdir/tests/cli/lib.sh"

ex="$top_srcdir/examples"
# A fingerprint of every input, to show at the end that checking wrote nothing.
fingerprint() {
	find "$top_srcdir/examples" "$top_srcdir/tests/data" -type f -name '*.json' -exec cksum {} + | sort
}
fingerprint >"$tmp/before"
for m in "$ex"/*.strata.json; do
	expect 0 "$STRATA" check "$m"
	has out "0 errors, 0 warnings"
done

# The broken model: every kind of type error, exactly as expected.
cd "$top_srcdir/tests/data" || exit 1
expect 1 "$STRATA" check broken.strata.json
same "$tmp/out" "$top_srcdir/tests/data/broken.expected"
expect 1 "$STRATA" check --json broken.strata.json
has out '"ok":	false'
has out '"severity":	"error"'
has out '"layer":	"add1"'
expect 1 "$STRATA" check -q broken.strata.json
checks=$((checks + 1))
[ ! -s "$tmp/out" ] && [ ! -s "$tmp/err" ] || { echo "FAIL: --quiet printed something"; fails=$((fails + 1)); }
cd "$tmp" || exit 1

# Inputs that cannot be read: exit 2, a clear message, never a crash.
expect 2 "$STRATA" check "$tmp/none.json"
has err "none.json: error: cannot read the model: No such file or directory"
expect 2 "$STRATA" check "$tmp"
has err "cannot read the model: Is a directory"
head -c 700 "$ex/resnet18.strata.json" >"$tmp/truncated.json"
expect 2 "$STRATA" check "$tmp/truncated.json"
has err "unexpected end of the text: a string, list or object is not closed"
head -c 3000 /bin/sh >"$tmp/garbage.json"
expect 2 "$STRATA" check "$tmp/garbage.json"
has err "garbage.json:"
printf '{"format": "strata-model", "version": 1, "layers": [{"name": "c", "type": "conv", "params": {"stride": -2}}]}' >"$tmp/bad.json"
expect 2 "$STRATA" check "$tmp/bad.json"
has err "bad.json:1:104: error: layer 'c': parameter 'stride' must be a list of integers; item 0 must be a positive integer, got -2 (at layers[0].params.stride)"
expect 2 "$STRATA" check --json "$tmp/bad.json"
has out '"load_errors":'
has out '"line":	1'
printf '{"format": "strata-model", "version": 7, "layers": []}' >"$tmp/future.json"
expect 2 "$STRATA" check "$tmp/future.json"
has err "written by a newer Strata"

# Checking never writes: every input is byte-identical afterwards.
fingerprint >"$tmp/after"
same "$tmp/after" "$tmp/before"

finish
