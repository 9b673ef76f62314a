#!/usr/bin/env python3
"""Checks an ONNX file written by strata export against the references.

  onnx-export-check.py inputs MODEL.onnx DIR SEED
      writes DIR/<input>.npy for every graph input (uniform 0..1, seeded)
      and prints one "NAME=PATH" line per input for strata run -i
  onnx-export-check.py outputs MODEL.onnx
      prints the graph output names, one a line
  onnx-export-check.py compare MODEL.onnx DIR TOLERANCE
      onnx.checker (full check), numpy_helper.to_array on every
      initializer, then ONNX Runtime on DIR/<input>.npy compared with
      DIR/<output>.out.npy (what strata run wrote)

The error of an output is max |onnx - strata| / max(max |strata|, 1e-30):
relative to the output's largest value, as element-wise ratios explode
where values cross zero. Exit 0 when every output is within TOLERANCE,
1 when not, 77 when onnxruntime cannot be imported.
"""
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper


def graph_inputs(model):
    names = {t.name for t in model.graph.initializer}
    return [i for i in model.graph.input if i.name not in names]


def main():
    cmd, path = sys.argv[1], sys.argv[2]
    model = onnx.load(path)
    if cmd == "outputs":
        for o in model.graph.output:
            print(o.name)
        return 0
    if cmd == "inputs":
        folder, seed = sys.argv[3], int(sys.argv[4])
        rng = np.random.default_rng(seed)
        for k, i in enumerate(graph_inputs(model)):
            dims = [d.dim_value for d in i.type.tensor_type.shape.dim]
            x = rng.random(dims, dtype=np.float64).astype(np.float32)
            file = os.path.join(folder, "input%d.npy" % k)
            np.save(file, x)
            print("%s=%s" % (i.name, file))
        return 0
    folder, tolerance = sys.argv[3], float(sys.argv[4])
    onnx.checker.check_model(model, full_check=True)
    for t in model.graph.initializer:
        a = numpy_helper.to_array(t)
        if list(a.shape) != list(t.dims):
            print("%s: initializer %s has shape %s, dims say %s" % (path, t.name, a.shape, list(t.dims)))
            return 1
    try:
        import onnxruntime as ort
    except ImportError as e:
        print("onnxruntime cannot be imported: %s" % e)
        return 77
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    feeds = {}
    for k, i in enumerate(session.get_inputs()):
        x = np.load(os.path.join(folder, "input%d.npy" % k))
        feeds[i.name] = x.astype(np.float16) if i.type == "tensor(float16)" else x
    names = [o.name for o in session.get_outputs()]
    results = session.run(names, feeds)
    worst = 0.0
    for k, (name, got) in enumerate(zip(names, results)):
        want = np.load(os.path.join(folder, "output%d.npy" % k)).astype(np.float64)
        got = np.asarray(got).astype(np.float64)
        if got.shape != want.shape:
            print("%s: output %s has shape %s in ONNX Runtime, %s in strata" % (path, name, got.shape, want.shape))
            return 1
        scale = max(float(np.max(np.abs(want))) if want.size else 0.0, 1e-30)
        err = float(np.max(np.abs(got - want))) / scale if want.size else 0.0
        worst = max(worst, err)
        if not err <= tolerance:
            print("%s: output %s differs: error %.3g > %.3g" % (path, name, err, tolerance))
            return 1
    print("%s: %d output(s) agree, error %.3g <= %.3g" % (path, len(names), worst, tolerance))
    return 0


if __name__ == "__main__":
    sys.exit(main())
