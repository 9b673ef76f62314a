#!/bin/sh
# The ONNX backend test suite against tests/conformance/onnx-manifest.tsv
# (see tests/conformance/README.md). Exits 77 (skipped) without Debian's
# libonnx-testdata, unless STRATA_REQUIRE_REFERENCES=1.
: "${top_srcdir:?run through make check}"
: "${top_builddir:?run through make check}"
exec "$top_builddir/tests/conformance/onnx-conformance" \
	--manifest "$top_srcdir/tests/conformance/onnx-manifest.tsv" "$@"
