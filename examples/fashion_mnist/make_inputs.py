"""Writes a few Fashion-MNIST test images as PNG files into inputs/, one per
class named after it, for trying the classifier and looking at its
channels (strata inspect, the editor's analysis mode):

    /usr/bin/python3 examples/fashion_mnist/make_inputs.py

It takes the first test image of each chosen class from Debian's
dataset-fashion-mnist, so the files are the same every time.
"""
import gzip
import os

import numpy as np
from PIL import Image

DATA = "/usr/share/datasets/fashion-mnist"
HERE = os.path.dirname(os.path.abspath(__file__))
CLASSES = ["t-shirt", "trouser", "pullover", "dress", "coat", "sandal", "shirt", "sneaker", "bag", "ankle-boot"]
CHOSEN = ["t-shirt", "trouser", "dress", "sneaker", "bag", "ankle-boot"]


def main():
    with gzip.open(os.path.join(DATA, "t10k-images-idx3-ubyte.gz")) as f:
        images = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 28, 28)
    with gzip.open(os.path.join(DATA, "t10k-labels-idx1-ubyte.gz")) as f:
        labels = np.frombuffer(f.read(), np.uint8, offset=8)
    out = os.path.join(HERE, "inputs")
    os.makedirs(out, exist_ok=True)
    for name in CHOSEN:
        index = int(np.flatnonzero(labels == CLASSES.index(name))[0])
        Image.fromarray(images[index], mode="L").save(os.path.join(out, name + ".png"), optimize=True)
        print(f"inputs/{name}.png: test image {index}")


if __name__ == "__main__":
    main()
