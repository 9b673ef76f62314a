# Shared helpers for the command-line tests: run a command, then check its
# exit code and output. Each test script counts failures and calls finish.
set -u
: "${STRATA:?run through make check}"
: "${top_srcdir:?run through make check}"
fails=0
checks=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export HOME="$tmp/home"
mkdir -p "$HOME"

# expect CODE COMMAND...: runs it, keeps stdout in $tmp/out and stderr in $tmp/err.
expect() {
	want=$1
	shift
	checks=$((checks + 1))
	"$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	last="$*"
	if [ "$rc" -ne "$want" ]; then
		echo "FAIL: '$last' exited $rc, expected $want"
		sed 's/^/  out| /' "$tmp/out" | head -n 20
		sed 's/^/  err| /' "$tmp/err" | head -n 20
		fails=$((fails + 1))
	fi
}

# has out|err TEXT: the last command printed TEXT (fixed string) there.
has() {
	checks=$((checks + 1))
	if ! grep -qF -- "$2" "$tmp/$1"; then
		echo "FAIL: the $1 of '$last' lacks: $2"
		sed "s/^/  $1| /" "$tmp/$1" | head -n 30
		fails=$((fails + 1))
	fi
}

# lacks out|err TEXT
lacks() {
	checks=$((checks + 1))
	if grep -qF -- "$2" "$tmp/$1"; then
		echo "FAIL: the $1 of '$last' should not contain: $2"
		fails=$((fails + 1))
	fi
}

# same FILE1 FILE2: byte-identical.
same() {
	checks=$((checks + 1))
	if ! cmp -s "$1" "$2"; then
		echo "FAIL: $1 and $2 differ"
		diff -u "$1" "$2" | head -n 30
		fails=$((fails + 1))
	fi
}

# no_reference WHY: a reference this test needs is missing (WHY says which
# and how to get it). The test is skipped, or fails when
# STRATA_REQUIRE_REFERENCES=1: CI, where ./bootstrap installed every one.
no_reference() {
	if [ "${STRATA_REQUIRE_REFERENCES:-0}" = 1 ]; then
		echo "FAIL: $1, and STRATA_REQUIRE_REFERENCES=1"
		exit 1
	fi
	echo "SKIP: $1"
	exit 77
}

# need_python PYTHON MODULE...: PYTHON exists and imports every MODULE, or
# no_reference says which is missing.
need_python() {
	_py=$1
	shift
	[ -x "$_py" ] || no_reference "$_py is missing (./bootstrap makes it)"
	_modules=$(echo "$*" | sed 's/ /, /g')
	"$_py" -c "import $_modules" 2>/dev/null ||
		no_reference "$_py cannot import $_modules (./bootstrap installs them)"
}

# ./bootstrap's venv (onnxruntime, a newer onnx, ddesignerapi), or the one
# STRATA_VENV_PYTHON names (CI's builds from the tarball).
venv_python="${STRATA_VENV_PYTHON:-$top_srcdir/venv/bin/python}"

finish() {
	echo "$((checks - fails)) of $checks checks passed"
	[ "$fails" -eq 0 ]
	exit $?
}
