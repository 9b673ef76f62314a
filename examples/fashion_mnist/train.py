"""Trains the small Fashion-MNIST classifier of fashion_mnist.strata.json with
PyTorch, and writes what Strata needs to run it and to check itself:

    weights/<layer>_<weight>.npy   FP32 NCHW weights, Strata's naming
    reference_logits.npy           PyTorch's logits for the 10,000 test images

Run it from anywhere with Debian's Python (python3-torch, python3-numpy and
dataset-fashion-mnist installed; ./bootstrap installs them):

    /usr/bin/python3 examples/fashion_mnist/train.py

It is deterministic (seeded, one thread) and takes about a minute on 2 cores.
The network mirrors the model file layer for layer: the pixels (0-255) are
scaled by 1/255, then conv 3x3 (16) + relu, max pool 2, conv 3x3 (32) + relu,
max pool 2, fully connected 64 + relu, fully connected 10.
"""
import gzip
import os

import numpy as np
import torch
import torch.nn as nn

DATA = "/usr/share/datasets/fashion-mnist"
HERE = os.path.dirname(os.path.abspath(__file__))


def read_images(name):
    with gzip.open(os.path.join(DATA, name)) as f:
        raw = f.read()
    return np.frombuffer(raw, np.uint8, offset=16).reshape(-1, 1, 28, 28)


def read_labels(name):
    with gzip.open(os.path.join(DATA, name)) as f:
        raw = f.read()
    return np.frombuffer(raw, np.uint8, offset=8).astype(np.int64)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.fc1 = nn.Linear(32 * 7 * 7, 64)
        self.fc2 = nn.Linear(64, 10)
        self.pool = nn.MaxPool2d(2)

    def forward(self, pixels):
        x = pixels * (1.0 / 255.0)
        x = self.pool(torch.relu(self.conv1(x)))
        x = self.pool(torch.relu(self.conv2(x)))
        x = torch.relu(self.fc1(x.flatten(1)))
        return self.fc2(x)


def main():
    torch.manual_seed(0)
    np.random.seed(0)
    torch.set_num_threads(1)
    train_x = torch.from_numpy(read_images("train-images-idx3-ubyte.gz").astype(np.float32))
    train_y = torch.from_numpy(read_labels("train-labels-idx1-ubyte.gz"))
    test_x = torch.from_numpy(read_images("t10k-images-idx3-ubyte.gz").astype(np.float32))
    test_y = read_labels("t10k-labels-idx1-ubyte.gz")
    net = Net()
    opt = torch.optim.Adam(net.parameters(), lr=2e-3)
    for epoch in range(2):
        order = torch.randperm(len(train_x))
        for start in range(0, len(order), 128):
            idx = order[start:start + 128]
            opt.zero_grad()
            loss = nn.functional.cross_entropy(net(train_x[idx]), train_y[idx])
            loss.backward()
            opt.step()
    net.eval()
    with torch.no_grad():
        logits = torch.cat([net(test_x[i:i + 1000]) for i in range(0, 10000, 1000)]).numpy()
    accuracy = (logits.argmax(1) == test_y).mean()
    print(f"test accuracy {accuracy:.4f}")

    out = os.path.join(HERE, "weights")
    os.makedirs(out, exist_ok=True)
    tensors = {
        "conv1_weights": net.conv1.weight, "conv1_bias": net.conv1.bias,
        "conv2_weights": net.conv2.weight, "conv2_bias": net.conv2.bias,
        "fc1_weights": net.fc1.weight, "fc1_bias": net.fc1.bias,
        "fc2_weights": net.fc2.weight, "fc2_bias": net.fc2.bias,
    }
    for name, t in tensors.items():
        np.save(os.path.join(out, name + ".npy"), t.detach().numpy().astype("<f4"))
    np.save(os.path.join(HERE, "reference_logits.npy"), logits.astype("<f4"))


if __name__ == "__main__":
    main()
