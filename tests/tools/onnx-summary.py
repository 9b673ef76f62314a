"""Prints the summary line tests/tools/onnx-roundtrip prints, from Python's
onnx, for ONNX files named one per line on stdin (run with /usr/bin/python3):

    PATH ir=N opsets=DOMAIN:VERSION,... ops=OP,OP,...
"""
import sys

import onnx

for line in sys.stdin:
    path = line.rstrip("\n")
    if not path:
        continue
    m = onnx.load(path, load_external_data=False)
    opsets = ",".join(f"{o.domain}:{o.version}" for o in m.opset_import)
    ops = ",".join((f"{n.domain}::" if n.domain else "") + n.op_type for n in m.graph.node)
    print(f"{path} ir={m.ir_version} opsets={opsets} ops={ops}")
