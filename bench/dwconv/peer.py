"""bench/dwconv: PyTorch's time for the convolutions bench-dwconv measures.

    peer.py THREADS RUNS NAME:N:C:OC:GROUPS:H:W:K:STRIDE:PAD:BIAS ...

Prints one line per case, "NAME THREADS MEDIAN_MS MIN_MS MAX_MS": the median
of RUNS forward calls (torch.no_grad) after 5 warm-ups, on THREADS threads.
"""
import statistics
import sys
import time

import torch


def main():
    threads, runs = int(sys.argv[1]), int(sys.argv[2])
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    for spec in sys.argv[3:]:
        name, *numbers = spec.split(":")
        n, c, oc, groups, h, w, k, stride, pad, bias = (int(v) for v in numbers)
        conv = torch.nn.Conv2d(c, oc, k, stride=stride, padding=pad, groups=groups, bias=bool(bias)).eval()
        x = torch.randn(n, c, h, w)
        times = []
        with torch.no_grad():
            for i in range(5 + runs):
                t0 = time.perf_counter()
                conv(x)
                if i >= 5:
                    times.append((time.perf_counter() - t0) * 1e3)
        print("%s %d %.4f %.4f %.4f" % (name, threads, statistics.median(times), min(times), max(times)),
              flush=True)


if __name__ == "__main__":
    main()
