"""The peers of bench/cpu: PyTorch (Debian's python3-torch, run by
/usr/bin/python3) and onnxruntime (the project's venv), plus the step that
makes every row's network once so that all three engines run the same
weights. bench.py drives it; each call is its own process.

    peer.py prepare ROW_DIR ROW        torch: the module, its ONNX export,
                                       Strata's weights and the reference output
    peer.py torch ROW_DIR THREADS RUNS WARMUP [OUTPUT.npy]
    peer.py ort ONNX INPUT.npy THREADS RUNS WARMUP [OUTPUT.npy]
    peer.py serve-torch ROW_DIR THREADS WARMUP
    peer.py serve-ort ONNX INPUT.npy THREADS WARMUP

The timing calls print one JSON object: the time to load the model, the
first run, the median of RUNS runs after WARMUP untimed ones, and resident
memory (see docs/performance.md for what each number is). The serve calls
are the peers' side of bench.py's race (load-strata --serve is Strata's):
they load the model, run it 1 + WARMUP times, print {"ready": true}, then
for each line "N [LEAD_MS]" on stdin run it untimed until LEAD_MS
milliseconds have passed (none without it), then N times, and print
{"ms": [...]}, the times of the N.

This file is also imported by bench.py for ROWS, so it imports nothing
heavy at the top.
"""
import json
import os
import sys
import time

# Every row of the table. kind "model": a whole network (ResNet-18 comes as
# Strata's own example file, the others through strata import of the ONNX
# that torch exports); kind "conv": one convolution that bench.py writes as
# a small Strata model. seed: torch's seed for the weights.
ROWS = [
    {"name": "resnet18", "label": "ResNet-18 1x3x224x224", "kind": "model", "seed": 18,
     "input": [1, 3, 224, 224], "strata_model": "examples/resnet18.strata.json"},
    {"name": "mobilenet_v2", "label": "MobileNetV2 1x3x224x224", "kind": "model", "seed": 2,
     "input": [1, 3, 224, 224], "import": True},
    {"name": "squeezenet1_1", "label": "SqueezeNet 1.1 1x3x224x224", "kind": "model", "seed": 11,
     "input": [1, 3, 224, 224], "import": True},
    {"name": "conv3x3_64_56", "label": "conv 3x3 64->64 56x56", "kind": "conv", "seed": 33,
     "input": [1, 64, 56, 56], "conv": {"out": 64, "kernel": 3, "pad": 1, "groups": 1},
     "target": "gemm"},
    {"name": "conv1x1_256_64_56", "label": "conv 1x1 256->64 56x56", "kind": "conv", "seed": 11,
     "input": [1, 256, 56, 56], "conv": {"out": 64, "kernel": 1, "pad": 0, "groups": 1},
     "target": "gemm"},
    {"name": "dwconv3x3_144_56", "label": "depthwise 3x3 144ch 56x56", "kind": "conv", "seed": 144,
     "input": [1, 144, 56, 56], "conv": {"out": 144, "kernel": 3, "pad": 1, "groups": 144},
     "target": "depthwise"},
]
ROW_BY_NAME = {r["name"]: r for r in ROWS}


def conv_macs(row):
    """Multiply-adds of a single-convolution row (stride 1, same size out)."""
    n, c, h, w = row["input"]
    cv = row["conv"]
    return n * cv["out"] * h * w * (c // cv["groups"]) * cv["kernel"] ** 2


def memory_kib(key):
    """A line of /proc/self/status in KiB (VmRSS, VmHWM), or None."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def reset_peak():
    """Resets VmHWM to the present RSS (Linux 4.0 on): the peak read later
    is then that of the runs alone."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def upper_median(values):
    """The median as strata run computes it: the upper middle value."""
    s = sorted(values)
    return s[len(s) // 2]


def time_runs(run, runs, warmup):
    """Times the first call of a loaded model, then WARMUP untimed ones,
    then RUNS timed ones. Memory is read around all of them."""
    peak_load = memory_kib("VmHWM")
    reset = reset_peak()
    loaded = memory_kib("VmRSS")
    t0 = time.perf_counter()
    out = run()
    first = (time.perf_counter() - t0) * 1e3
    for _ in range(warmup):
        run()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        run()
        times.append((time.perf_counter() - t0) * 1e3)
    peak_run = memory_kib("VmHWM")
    return out, {
        "median_ms": upper_median(times), "min_ms": min(times), "max_ms": max(times),
        "first_ms": first, "runs": runs, "warmup": warmup,
        "rss_loaded_kib": loaded, "peak_load_kib": peak_load, "peak_run_kib": peak_run,
        "peak_reset": reset,
    }


def torch_module(row):
    """The row's network with seeded weights; batch-norm statistics and
    affine terms are randomised too, so that they are not the identity."""
    import torch
    import torchvision
    torch.manual_seed(row["seed"])
    if row["kind"] == "conv":
        cv = row["conv"]
        net = torch.nn.Conv2d(row["input"][1], cv["out"], cv["kernel"], padding=cv["pad"],
                              groups=cv["groups"], bias=False)
    elif row["name"] == "resnet18":
        # Strata's example ends in a softmax; so does this.
        net = torch.nn.Sequential(torchvision.models.resnet18(weights=None), torch.nn.Softmax(dim=1))
    else:
        net = getattr(torchvision.models, row["name"])(weights=None)
    with torch.no_grad():
        for m in net.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.2, 0.2)
                m.running_mean.uniform_(-0.2, 0.2)
                m.running_var.uniform_(0.5, 1.5)
    return net.eval()


def resnet18_strata_names(state):
    """torchvision's ResNet-18 state dict under the layer and weight names
    of examples/resnet18.strata.json (layerName_weightType)."""
    kinds = {"weight": "weights", "bias": "bias", "running_mean": "mean", "running_var": "variance"}
    out = {}
    for key, value in state.items():
        parts = key.split(".")[1:]  # drop the Sequential's "0."
        if parts[-1] == "num_batches_tracked":
            continue
        kind = parts[-1]
        if parts[0].startswith("layer"):
            stage = int(parts[0][5:]) + 1
            block = parts[1]
            what = parts[2]
            if what == "downsample":
                what = "proj" if parts[3] == "0" else "proj_bn"
            layer = "l%d_%s_%s" % (stage, block, what)
        else:
            layer = parts[0]
        if layer.startswith("bn") or "_bn" in layer:
            kind = {"weight": "scale"}.get(kind, kinds[kind])
        else:
            kind = kinds[kind]
        out["%s_%s" % (layer, kind)] = value
    return out


def prepare(row_dir, name):
    """Writes model.pt, model.onnx, torch_out.npy, flops.json and, for rows
    Strata runs from its own model file, weights/*.npy."""
    import numpy as np
    import torch
    row = ROW_BY_NAME[name]
    net = torch_module(row)
    x = torch.from_numpy(np.load(os.path.join(row_dir, "input.npy")))
    flops = [0]

    def count(module, inputs, output):
        if isinstance(module, torch.nn.Conv2d):
            k = module.weight[0].numel()  # in/groups x kh x kw
            flops[0] += 2 * output.numel() * k
        elif isinstance(module, torch.nn.Linear):
            flops[0] += 2 * output.numel() * module.in_features

    hooks = [m.register_forward_hook(count) for m in net.modules()]
    with torch.inference_mode():
        y = net(x)
    for h in hooks:
        h.remove()
    np.save(os.path.join(row_dir, "torch_out.npy"), y.numpy())
    torch.save(net, os.path.join(row_dir, "model.pt"))
    torch.onnx.export(net, x, os.path.join(row_dir, "model.onnx"), opset_version=13,
                      input_names=["data"], output_names=["out"])
    if not row.get("import"):
        wdir = os.path.join(row_dir, "weights")
        os.makedirs(wdir, exist_ok=True)
        state = {k: v.numpy() for k, v in net.state_dict().items()}
        named = resnet18_strata_names(state) if name == "resnet18" else {"conv_weights": state["weight"]}
        for key, value in named.items():
            np.save(os.path.join(wdir, key + ".npy"), np.ascontiguousarray(value, dtype=np.float32))
    with open(os.path.join(row_dir, "flops.json"), "w") as f:
        json.dump({"flops": flops[0], "torch": torch.__version__}, f)


def run_torch(row_dir, threads, runs, warmup, output):
    import numpy as np
    import torch
    torch.set_num_threads(threads)
    x = torch.from_numpy(np.load(os.path.join(row_dir, "input.npy")))
    before = memory_kib("VmRSS")
    t0 = time.perf_counter()
    net = torch.load(os.path.join(row_dir, "model.pt")).eval()
    load = (time.perf_counter() - t0) * 1e3
    with torch.inference_mode():
        y, r = time_runs(lambda: net(x), runs, warmup)
    if output:
        np.save(output, y.numpy())
    r.update(load_ms=load, rss_before_load_kib=before, threads=torch.get_num_threads(), version=torch.__version__)
    return r


def ort_session(onnx_path, threads):
    """The ONNX Runtime session every timing call runs: graph optimisations
    the default (all on), `threads` intra-op threads, one inter-op."""
    import onnxruntime as ort
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    return ort.InferenceSession(onnx_path, opts, providers=["CPUExecutionProvider"])


def run_ort(onnx_path, input_path, threads, runs, warmup, output):
    import numpy as np
    import onnxruntime as ort
    x = np.load(input_path)
    before = memory_kib("VmRSS")
    t0 = time.perf_counter()
    sess = ort_session(onnx_path, threads)
    load = (time.perf_counter() - t0) * 1e3
    feed = {sess.get_inputs()[0].name: x}
    y, r = time_runs(lambda: sess.run(None, feed)[0], runs, warmup)
    if output:
        np.save(output, y)
    r.update(load_ms=load, rss_before_load_kib=before, threads=threads, version=ort.__version__)
    return r


def serve(run, warmup):
    """Bursts of timed runs on request, until stdin ends (the docstring)."""
    for _ in range(1 + warmup):
        run()
    print(json.dumps({"ready": True}))
    sys.stdout.flush()
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        lead_s = float(words[1]) / 1e3 if len(words) > 1 else 0.0
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < lead_s:
            run()
        times = []
        for _ in range(int(words[0])):
            t0 = time.perf_counter()
            run()
            times.append((time.perf_counter() - t0) * 1e3)
        print(json.dumps({"ms": times}))
        sys.stdout.flush()


def serve_torch(row_dir, threads, warmup):
    import numpy as np
    import torch
    torch.set_num_threads(threads)
    x = torch.from_numpy(np.load(os.path.join(row_dir, "input.npy")))
    net = torch.load(os.path.join(row_dir, "model.pt")).eval()
    with torch.inference_mode():
        serve(lambda: net(x), warmup)


def serve_ort(onnx_path, input_path, threads, warmup):
    import numpy as np
    x = np.load(input_path)
    sess = ort_session(onnx_path, threads)
    feed = {sess.get_inputs()[0].name: x}
    serve(lambda: sess.run(None, feed)[0], warmup)


def main(argv):
    what = argv[1] if len(argv) > 1 else ""
    if what == "serve-torch" and len(argv) == 5:
        serve_torch(argv[2], int(argv[3]), int(argv[4]))
        return 0
    if what == "serve-ort" and len(argv) == 6:
        serve_ort(argv[2], argv[3], int(argv[4]), int(argv[5]))
        return 0
    if what == "prepare" and len(argv) == 4:
        prepare(argv[2], argv[3])
        return 0
    if what == "torch" and len(argv) in (6, 7):
        r = run_torch(argv[2], int(argv[3]), int(argv[4]), int(argv[5]), argv[6] if len(argv) > 6 else None)
    elif what == "ort" and len(argv) in (7, 8):
        r = run_ort(argv[2], argv[3], int(argv[4]), int(argv[5]), int(argv[6]), argv[7] if len(argv) > 7 else None)
    else:
        sys.stderr.write(__doc__)
        return 2
    print(json.dumps(r))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
