#!/bin/sh
# Every example type-checks clean, and is canonical: loading and saving it
# gives the same bytes, through the library and through strata edit.
. "$top_srcdir/tests/cli/lib.sh"

n=0
for m in "$top_srcdir"/examples/*.strata.json "$top_srcdir"/examples/*/*.strata.json; do
	n=$((n + 1))
	base=$(basename "$m")
	expect 0 "$STRATA" check "$m"
	has out "0 errors, 0 warnings"
	expect 0 "$STRATA" edit "$m" -c "save $tmp/$base"
	same "$tmp/$base" "$m"
	expect 0 "$STRATA" info --json "$m"
	has out '"errors":	0'
done
checks=$((checks + 1))
[ "$n" -ge 3 ] || { echo "FAIL: only $n examples"; fails=$((fails + 1)); }

finish
