#!/bin/sh
# The conformance runner fails when it should: a broken manifest names its
# file and line, a test marked pass that does not pass fails the run, one
# marked skip that passes is an unexpected pass, a test missing from the
# manifest fails, and --write-manifest puts the marks right.
. "$top_srcdir/tests/cli/lib.sh"

run="${top_builddir:?}/tests/conformance/onnx-conformance"
data=/usr/share/libonnx-testdata/data
tab=$(printf '\t')

# Manifest errors come with file:line, before any test runs.
printf '# a comment\n\nnode%stest_relu\n' "$tab" >"$tmp/bad.tsv"
expect 2 "$run" --manifest "$tmp/bad.tsv"
has err "$tmp/bad.tsv:3: expected 3 or 4 tab-separated fields (suite, test, status, reason), found 2"
printf 'node%stest_relu%smaybe\n' "$tab" "$tab" >"$tmp/bad.tsv"
expect 2 "$run" --manifest "$tmp/bad.tsv"
has err "$tmp/bad.tsv:1: unknown status 'maybe' (pass, skip or xfail)"
printf 'node%stest_relu%sskip\n' "$tab" "$tab" >"$tmp/bad.tsv"
expect 2 "$run" --manifest "$tmp/bad.tsv"
has err "$tmp/bad.tsv:1: status skip needs a reason"
printf 'node%stest_relu%spass\nnode%stest_relu%spass\n' "$tab" "$tab" "$tab" "$tab" >"$tmp/bad.tsv"
expect 2 "$run" --manifest "$tmp/bad.tsv"
has err "$tmp/bad.tsv:2: node/test_relu is listed twice (first on line 1)"
printf 'nodes%stest_relu%spass\n' "$tab" "$tab" >"$tmp/bad.tsv"
expect 2 "$run" --manifest "$tmp/bad.tsv"
has err "$tmp/bad.tsv:1: unknown suite 'nodes'"
printf 'node%s../../etc%spass\n' "$tab" "$tab" >"$tmp/bad.tsv"
expect 2 "$run" --manifest "$tmp/bad.tsv"
has err "is not a test folder name"
expect 2 "$run" --manifest "$tmp/none.tsv"
has err "$tmp/none.tsv: cannot read the manifest"

# Without test data: skipped, unless the references are required.
printf 'node%stest_relu%spass\n' "$tab" "$tab" >"$tmp/one.tsv"
expect 77 env -u STRATA_REQUIRE_REFERENCES "$run" --manifest "$tmp/one.tsv" --data "$tmp/nothing"
has out "no ONNX test data in $tmp/nothing"
expect 1 env STRATA_REQUIRE_REFERENCES=1 "$run" --manifest "$tmp/one.tsv" --data "$tmp/nothing"
has out "STRATA_REQUIRE_REFERENCES=1 requires it"

if [ ! -d "$data/node" ]; then
	echo "no $data: the checks that run tests are left out"
	finish
fi

# Abs has no Strata layer: marked pass, it fails the run.
printf 'node%stest_abs%spass\n' "$tab" "$tab" >"$tmp/m.tsv"
expect 1 "$run" --manifest "$tmp/m.tsv" --filter node/test_abs
has out "FAIL node/test_abs: expected to pass, unsupported: op Abs has no Strata layer"
last_line=$(tail -n 1 "$tmp/out")
checks=$((checks + 1))
if [ "$last_line" != "0 passed, 1 failed, 0 skipped" ]; then
	echo "FAIL: the last line is '$last_line'"
	fails=$((fails + 1))
fi

# Marked skip, Relu passes: an unexpected pass, which fails the run too.
printf 'node%stest_relu%sskip%sa stale reason\n' "$tab" "$tab" "$tab" >"$tmp/m.tsv"
expect 1 "$run" --manifest "$tmp/m.tsv" --filter node/test_relu
has out "UNEXPECTED PASS node/test_relu: marked skip (a stale reason)"
has out "0 passed, 1 failed, 0 skipped"

# A test folder the manifest does not list fails.
printf 'node%stest_relu%spass\n' "$tab" "$tab" >"$tmp/m.tsv"
expect 1 "$run" --manifest "$tmp/m.tsv" --filter node/test_sigmoid
has out "FAIL node/test_sigmoid: not in the manifest"
# So does a listed test that is not there.
printf 'node%stest_no_such_test%spass\n' "$tab" "$tab" >"$tmp/m.tsv"
expect 1 "$run" --manifest "$tmp/m.tsv" --filter test_no_such
has out "FAIL node/test_no_such_test: listed in $tmp/m.tsv:1 but not found"
# A filter that matches nothing is a usage error.
expect 2 "$run" --manifest "$tmp/one.tsv" --filter no-test-has-this-name
has err "no test matches --filter 'no-test-has-this-name'"

# Expected outcomes: SKIP and XFAIL lines, and a clean exit.
printf 'node%stest_ceil_example%sskip%sno Ceil\nnode%stest_ceil%sxfail%ssome difference\n' \
	"$tab" "$tab" "$tab" "$tab" "$tab" "$tab" >"$tmp/m.tsv"
expect 0 "$run" --manifest "$tmp/m.tsv" --filter node/test_ceil
has out "SKIP node/test_ceil_example: no Ceil"
has out "XFAIL node/test_ceil: some difference"
has out "0 passed, 0 failed, 2 skipped"

# --write-manifest puts wrong marks right and keeps what --filter left out.
printf '# header kept\nnode%stest_abs%spass\nnode%stest_relu%sskip%swrong\nsimple%stest_gradient_of_add%sskip%sleft alone\n' \
	"$tab" "$tab" "$tab" "$tab" "$tab" "$tab" "$tab" "$tab" >"$tmp/w.tsv"
expect 0 "$run" --manifest "$tmp/w.tsv" --filter node/test_ --write-manifest
grep -E '^#|node.test_abs.|node.test_relu.|test_gradient_of_add' "$tmp/w.tsv" >"$tmp/got.tsv"
printf '# header kept\nnode%stest_abs%sskip%sop Abs has no Strata layer\nnode%stest_relu%spass\nsimple%stest_gradient_of_add%sskip%sleft alone\n' \
	"$tab" "$tab" "$tab" "$tab" "$tab" "$tab" "$tab" "$tab" >"$tmp/want.tsv"
same "$tmp/want.tsv" "$tmp/got.tsv"
finish
