#!/bin/sh
# The trained Fashion-MNIST example: strata run over the 10,000 test images of
# Debian's dataset-fashion-mnist reproduces PyTorch's logits (rtol 1e-4) and
# its top-1 accuracy exactly. Skips only where the package is absent;
# ./bootstrap installs it, so CI always runs it.
. "$top_srcdir/tests/cli/lib.sh"

data=/usr/share/datasets/fashion-mnist
if [ ! -f "$data/t10k-images-idx3-ubyte.gz" ]; then
	echo "SKIP: dataset-fashion-mnist is not installed (./bootstrap installs it)"
	exit 77
fi
tool="$top_builddir/tests/tools/fashion-check"
model="$top_srcdir/examples/fashion_mnist/fashion_mnist.strata.json"
batches=$("$tool" split "$data/t10k-images-idx3-ubyte.gz" 1000 "$tmp") || { echo "FAIL: split"; exit 1; }
i=0
while [ "$i" -lt "$batches" ]; do
	expect 0 "$STRATA" run "$model" --input "pixels=$tmp/images_$i.npy" --output "logits=$tmp/logits_$i.npy"
	i=$((i + 1))
done
expect 0 "$tool" compare "$tmp" "$batches" "$top_srcdir/examples/fashion_mnist/reference_logits.npy" \
	"$data/t10k-labels-idx1-ubyte.gz"
cat "$tmp/out"

# The same network with 4-bit XWN weights and pruning on both convolutions,
# from the same full-precision weights (no retraining): 0.8866 here, against
# 0.8913 in FP32. Thread counts may move a near-tie, hence the margin.
model="$top_srcdir/examples/fashion_mnist/fashion_mnist_xwn.strata.json"
i=0
while [ "$i" -lt "$batches" ]; do
	expect 0 "$STRATA" run "$model" --input "pixels=$tmp/images_$i.npy" --output "logits=$tmp/logits_$i.npy"
	i=$((i + 1))
done
expect 0 "$tool" accuracy "$tmp" "$batches" "$data/t10k-labels-idx1-ubyte.gz" 0.88
has out "top-1 accuracy 0.88"
cat "$tmp/out"
finish
