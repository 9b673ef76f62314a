#!/bin/sh
# Command-line tests: strata info tables and JSON.
. "$top_srcdir/tests/cli/lib.sh"

ex="$top_srcdir/examples"
expect 0 "$STRATA" info "$ex/resnet18.strata.json"
has out "resnet18 1.0 · fp32-nchw"
has out "1x64x112x112"
has out "1x1000"
has out "total"
# ResNet-18: 11.69 M trainable parameters, plus the batch norms' running
# mean and variance (9,600 values), which Strata counts as weights too.
expect 0 "$STRATA" info --json "$ex/resnet18.strata.json"
has out '"params":	11699112'
expect 0 "$STRATA" info "$ex/cnn_classifier.strata.json"
has out "1x16x28x28"
has out "1x10"

# A model with type errors still prints, marks unknown figures and exits 1.
expect 1 "$STRATA" info "$top_srcdir/tests/data/broken.strata.json"
has out "?"
has out "type errors: figures with '?' are unknown"

finish
