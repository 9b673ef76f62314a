"""Peers for bench/cpu: PyTorch (Debian's python3-torch) and ONNX Runtime
(the project venv) on ResNet-18 at 1x3x224x224, float32, batch 1.

    python peer.py torch THREADS RUNS
    python peer.py ort THREADS RUNS ONNX_PATH

Prints one line: "<peer> <threads> median_ms min_ms max_ms".
"""
import statistics
import sys
import time


def measure(fn, runs, warmup=5):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times), min(times), max(times)


def model():
    import torch
    import torchvision
    torch.manual_seed(0)
    return torchvision.models.resnet18(weights=None).eval()


def main():
    peer, threads, runs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    if peer == "torch":
        import torch
        torch.set_num_threads(threads)
        net = model()
        x = torch.rand(1, 3, 224, 224)
        with torch.no_grad():
            med, lo, hi = measure(lambda: net(x), runs)
    elif peer == "export":
        import torch
        net = model()
        torch.onnx.export(net, torch.rand(1, 3, 224, 224), sys.argv[4], opset_version=13,
                          input_names=["data"], output_names=["prob"])
        return
    else:
        import numpy as np
        import onnxruntime as ort
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        sess = ort.InferenceSession(sys.argv[4], opts, providers=["CPUExecutionProvider"])
        x = np.random.rand(1, 3, 224, 224).astype(np.float32)
        med, lo, hi = measure(lambda: sess.run(None, {"data": x}), runs)
    print(f"{peer} {threads} {med:.3f} {lo:.3f} {hi:.3f}")


if __name__ == "__main__":
    main()
