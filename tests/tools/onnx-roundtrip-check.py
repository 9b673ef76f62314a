#!/usr/bin/python3
"""Round-trip checks for tests/cli/onnx-roundtrip.sh.

  graph ORIGINAL.strata.json IMPORTED.strata.json
      the same layers: names, types and attached activations
  outputs A.npy B.npy
      the same values (relative error at most 1e-6 of the largest value)
  nodes ORIGINAL.onnx EXPORTED.onnx OP
      every OP node of ORIGINAL is in EXPORTED with the same domain and
      attributes (an operator kept as a placeholder goes back unchanged)
"""
import collections
import json
import sys


def layers(path):
    with open(path) as f:
        model = json.load(f)
    return collections.Counter(
        (l["name"], l["type"], (l.get("activation") or {}).get("type")) for l in model["layers"])


def main():
    what = sys.argv[1]
    if what == "graph":
        a, b = layers(sys.argv[2]), layers(sys.argv[3])
        if a != b:
            print("only in the original:", sorted(a - b))
            print("only in the import:", sorted(b - a))
            return 1
        print(f"same {sum(a.values())} layers")
    elif what == "outputs":
        import numpy as np
        a, b = np.load(sys.argv[2]), np.load(sys.argv[3])
        if a.shape != b.shape:
            print(f"shapes differ: {a.shape} and {b.shape}")
            return 1
        scale = max(float(np.max(np.abs(a))), 1e-30)
        err = float(np.max(np.abs(a.astype(np.float64) - b))) / scale
        print(f"relative error {err:.3g}")
        if not err <= 1e-6:
            return 1
    elif what == "nodes":
        import onnx
        a, b = onnx.load(sys.argv[2]), onnx.load(sys.argv[3])
        op = sys.argv[4]
        want = [(n.domain, [onnx.helper.printable_attribute(x) for x in n.attribute])
                for n in a.graph.node if n.op_type == op]
        got = [(n.domain, [onnx.helper.printable_attribute(x) for x in n.attribute])
               for n in b.graph.node if n.op_type == op]
        if not want or want != got:
            print(f"{op} nodes differ:\n  original {want}\n  exported {got}")
            return 1
        print(f"{len(got)} {op} node(s) unchanged")
    return 0


sys.exit(main())
