"""The peer for bench/typecheck: ONNX's own shape inference (python3-onnx)
over the same ResNet-like repetition, timed as load + infer_shapes.

    /usr/bin/python3 bench/typecheck/peer_onnx.py LAYERS...
"""
import sys
import time

import onnx
from onnx import TensorProto, helper


def build(target):
    nodes, inputs, value_infos = [], [], []
    inputs.append(helper.make_tensor_value_info("data", TensorProto.FLOAT, [1, 64, 56, 56]))

    def weight(name, dims):
        # Weights are graph inputs with shapes only: inference needs no data.
        inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, dims))

    n, block, channels, prev = 1, 0, 64, "data"
    while n + 6 <= target:
        x, out = prev, channels
        if block % 8 == 7:
            out = channels + 16
            weight(f"proj{block}_w", [out, channels, 1, 1])
            nodes.append(helper.make_node("Conv", [prev, f"proj{block}_w"], [f"proj{block}"]))
            x = f"proj{block}"
            n += 1
        for half, cin in (("a", channels if block % 8 != 7 else out), ("b", out)):
            src = x if half == "a" else f"r{block}a"
            weight(f"c{block}{half}_w", [out, cin, 3, 3])
            nodes.append(helper.make_node("Conv", [src, f"c{block}{half}_w"], [f"c{block}{half}"],
                                          pads=[1, 1, 1, 1]))
            for p in ("s", "b", "m", "v"):
                weight(f"b{block}{half}_{p}", [out])
            nodes.append(helper.make_node(
                "BatchNormalization",
                [f"c{block}{half}"] + [f"b{block}{half}_{p}" for p in ("s", "b", "m", "v")],
                [f"b{block}{half}"]))
            if half == "a":
                nodes.append(helper.make_node("Relu", [f"b{block}a"], [f"r{block}a"]))
        nodes.append(helper.make_node("Add", [f"b{block}b", x], [f"add{block}"]))
        nodes.append(helper.make_node("Relu", [f"add{block}"], [f"y{block}"]))
        n += 5
        channels = out
        prev = f"y{block}"
        block += 1
    outputs = [helper.make_tensor_value_info(prev, TensorProto.FLOAT, None)]
    graph = helper.make_graph(nodes, "bench", inputs, outputs, value_info=value_infos)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), n


def main():
    for arg in sys.argv[1:]:
        model, n = build(int(arg))
        data = model.SerializeToString()
        best_load, best_infer = 1e9, 1e9
        for _ in range(3):
            t0 = time.perf_counter()
            m = onnx.load_from_string(data)
            t1 = time.perf_counter()
            inferred = onnx.shape_inference.infer_shapes(m, strict_mode=True)
            t2 = time.perf_counter()
            best_load, best_infer = min(best_load, t1 - t0), min(best_infer, t2 - t1)
        assert len(inferred.graph.value_info) > 0
        print(f"onnx   {n:7d} layers  {len(data) / 1e6:6.1f} MB  load {best_load * 1e3:8.2f} ms  "
              f"check {best_infer * 1e3:8.2f} ms  load+check {(best_load + best_infer) * 1e3:8.2f} ms")


if __name__ == "__main__":
    main()
