#!/bin/sh
# The XWN layers against the DDesigner API package itself: one-layer models
# of xwn_convolution (1-D, 2-D), xwn_deconvolution (1-D, 2-D) and
# xwn_cascade_convolution (1-D, 2-D) run by strata run, compared with the
# package's PyTorch layers (Conv1d/2d, ConvTranspose1d/2d, CascadeConv1d/2d)
# on the same seeded weights and input; the transformed weights are checked
# against the package's torch and numpy transforms; three self-checks must
# be seen as mismatches (tests/tools/xwn-parity.py, docs/xwn-parity.md).
# Needs ./bootstrap's venv with torch, numpy and ddesignerapi 0.0.6.3:
# without them the test is skipped, or fails when STRATA_REQUIRE_REFERENCES=1
# (CI). STRATA_VENV_PYTHON names another venv's python (CI's tarball builds).
. "$top_srcdir/tests/cli/lib.sh"
# lib.sh's expect needs -e off; this script does not use it.
set -eu

py=$venv_python
helper="$top_srcdir/tests/tools/xwn-parity.py"
[ -x "$py" ] || no_reference "$py is missing (./bootstrap makes it)"
reason=$("$py" "$helper" probe 2>&1) ||
	no_reference "$py cannot import the reference ($reason); ./bootstrap installs ddesignerapi==0.0.6.3 into the venv"

mkdir -p "$tmp/cases"
checks=$((checks + 1))
if "$py" "$helper" run "$STRATA" "$tmp/cases" "$tmp/results" >"$tmp/out" 2>"$tmp/err"; then
	rc=0
else
	rc=$?
fi
cat "$tmp/out"
if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; then
	echo "FAIL: $helper run exited $rc"
	sed 's/^/  err| /' "$tmp/err" | tail -n 30
	fails=$((fails + 1))
elif [ -s "$tmp/err" ]; then
	# The reference printed warnings or errors: show them, they are news.
	sed 's/^/  err| /' "$tmp/err" | head -n 20
fi

# One check per case and self-check.
tab=$(printf '\t')
cases=0
if [ -f "$tmp/results" ]; then
	while IFS="$tab" read -r name status detail; do
		cases=$((cases + 1))
		checks=$((checks + 1))
		if [ "$status" != ok ]; then
			echo "FAIL: $name: $detail"
			fails=$((fails + 1))
		fi
	done <"$tmp/results"
fi
# The list must not shrink unnoticed: every kind of layer and every
# self-check is there.
for name in conv2d_bit1 conv2d_bit5 conv2d_maxscale3 conv2d_depthwise conv1d_bit4 tconv1d_s2 \
	tconv2d_s2_op1 cascade1d_k5_s2 cascade2d_k7_ratio0.75 self_negated_weight self_transform_off \
	self_stages_swapped; do
	checks=$((checks + 1))
	if ! grep -q "^$name$tab" "$tmp/results" 2>/dev/null; then
		echo "FAIL: no result for $name"
		fails=$((fails + 1))
	fi
done
echo "$cases cases and self-checks"
finish
