#!/usr/bin/env python3
"""ResNet-18 and ResNet-50 on CUDA, Strata against PyTorch, in float32.

torchvision's models (random weights from a fixed seed) go to ONNX, which
`strata import` turns into Strata models with the same weights. Each model
then runs at batch 1 and 32 on the same random input in PyTorch (cuDNN with
benchmark on, TF32 off) and in `strata run --backend cuda`; the outputs are
compared (relative 1e-4 of the largest magnitude) and the median latencies
of 30 runs after 5 warm-ups are printed with their ratio.

usage: torch-vs-strata.py STRATA WORK_DIR
Prints one line per model and batch:
    ROW name batch strata_ms torch_ms ratio max_rel_diff ok|FAIL
and exits 1 when an output differs or a run fails.
"""
import json
import subprocess
import sys

import numpy as np
import torch
import torchvision


def median_ms_torch(model, x):
    with torch.no_grad():
        for _ in range(5):
            y = model(x)
        torch.cuda.synchronize()
        times = []
        for _ in range(30):
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            y = model(x)
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end))
    times.sort()
    return times[len(times) // 2], y.float().cpu().numpy()


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[-5], file=sys.stderr)
        return 2
    strata, work = sys.argv[1], sys.argv[2]
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    failures = 0
    for name in ("resnet18", "resnet50"):
        torch.manual_seed(0)
        model = getattr(torchvision.models, name)(weights=None).eval()
        onnx_path = f"{work}/{name}.onnx"
        torch.onnx.export(model, torch.rand(1, 3, 224, 224), onnx_path, input_names=["data"],
                          output_names=["logits"], dynamic_axes={"data": {0: "N"}, "logits": {0: "N"}},
                          opset_version=17, dynamo=False)
        strata_model = f"{work}/{name}.strata.json"
        subprocess.run([strata, "import", onnx_path, "-o", strata_model, "-d", "N=1", "--force"], check=True,
                       stdout=subprocess.DEVNULL)
        cuda_model = model.cuda()
        for batch in (1, 32):
            rng = np.random.default_rng(batch)
            x = rng.random((batch, 3, 224, 224), dtype=np.float32)
            x_path, y_path = f"{work}/{name}-x{batch}.npy", f"{work}/{name}-y{batch}.npy"
            np.save(x_path, x)
            torch_ms, want = median_ms_torch(cuda_model, torch.from_numpy(x).cuda())
            run = subprocess.run([strata, "run", strata_model, "--backend", "cuda", "--input", f"data={x_path}",
                                  "-o", y_path, "-n", "30", "--warmup", "5", "--json", "--no-report"],
                                 capture_output=True, text=True)
            if run.returncode != 0:
                print(f"ROW {name} {batch} - {torch_ms:.3f} - - FAIL: {run.stderr.strip()[-300:]}")
                failures += 1
                continue
            strata_ms = json.loads(run.stdout)["median_ms"]
            got = np.load(y_path).reshape(want.shape)
            scale = max(float(np.abs(want).max()), 1e-30)
            diff = float(np.abs(got - want).max()) / scale
            ok = diff <= 1e-4
            failures += not ok
            print(f"ROW {name} {batch} {strata_ms:.3f} {torch_ms:.3f} {strata_ms / torch_ms:.2f} {diff:.2e} "
                  f"{'ok' if ok else 'FAIL'}")
            sys.stdout.flush()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
