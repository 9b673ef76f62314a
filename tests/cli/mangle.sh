#!/bin/sh
# Damaged files are refused, never a crash or a hang: every fixture of each
# kind in the source tree goes through tests/tools/mangle-KIND whole, cut at
# every 7th byte (200 points in a file over 64 KiB) and with 1-8 random bits
# flipped in 200 seeded variants, each load bounded to 2 s and 2 GiB. All
# fixtures with the default 200 flips take about 2 s on 2 cores (4 s under
# ASan), well inside the minute this test may take, so nothing is sampled.
# Themes, config and keys files are skipped when the TUI is not built
# (configure --disable-tui).
. "$top_srcdir/tests/cli/lib.sh"

tools="${top_builddir:?}/tests/tools"
src=$top_srcdir

# mangle KIND FILE...: all of them through mangle-KIND, with no failure.
mangle() {
	kind=$1
	shift
	checks=$((checks + 1))
	if [ "$#" -eq 0 ]; then
		echo "FAIL: no $kind fixtures found"
		fails=$((fails + 1))
		return
	fi
	expect 0 "$tools/mangle-$kind" "$@"
	has out "mangle-$kind: $# files,"
	has out ", 0 failures,"
	grep "^mangle-$kind:" "$tmp/out"
}

# Models are the JSON files that have layers; the test data holds others.
# shellcheck disable=SC2046
mangle model "$src"/examples/*.strata.json "$src"/examples/*/*.strata.json \
	$(find "$src/tests/data" -name '*.json' -exec grep -l '"layers"' {} + | sort) \
	"$src"/tests/fuzz/corpus/model/*
# shellcheck disable=SC2046
mangle npy "$src"/examples/fashion_mnist/weights/*.npy "$src"/examples/fashion_mnist/*.npy \
	$(find "$src/tests/data" -name '*.npy' | sort) "$src"/tests/fuzz/corpus/npy/*
# shellcheck disable=SC2046
mangle image $(find "$src/tests/data" \( -name '*.png' -o -name '*.jpg' \) | sort) \
	"$src"/tests/fuzz/corpus/image/*
mangle onnx "$src"/tests/fuzz/corpus/onnx/*
mangle onnx-import "$src"/tests/fuzz/corpus/onnx-import/*
# shellcheck disable=SC2046
mangle report $(find "$src/tests/data" -name '*.strata-report.json' | sort) "$src"/tests/fuzz/corpus/report/*
mangle video "$src"/tests/fuzz/corpus/video/*
mangle algo-cache "$src"/tests/fuzz/corpus/algo-cache/*

if [ -x "$tools/mangle-theme" ]; then
	mangle theme "$src"/themes/*.theme "$src"/tests/fuzz/corpus/theme/*
	mangle config "$src"/tests/fuzz/corpus/config/*
	mangle keymap "$src"/tests/fuzz/corpus/keymap/*
else
	echo "SKIP: themes, config and keys files (the TUI is not built)"
fi
finish
