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
finish
