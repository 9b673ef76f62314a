"""ONNX Runtime's own time per node for one model, to set beside Strata's
layer table (`strata run M --profile`, `strata report show`): the peer
bench/cpu compares whole networks against. Run with the project's venv:

    venv/bin/python bench/cpu/ort-layers.py MODEL.onnx [THREADS] [RUNS]

THREADS defaults to 1 and RUNS to 50; the first fifth of the runs are
warm-ups. Prints, in execution order, each node's median time in
microseconds, its operator and its name (ONNX Runtime's NCHWc transformer
renames the nodes it rewrites: "..._nchwc"), then the sum of the medians.
Both tables list layers in execution order, so a network's rows can be
read side by side (ONNX Runtime fuses a Clip or Relu into its Conv as
Strata does, and adds Reorder nodes where it changes layouts).
"""
import collections
import json
import os
import sys
import tempfile


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        sys.stdout.write(__doc__)
        return 0 if len(argv) >= 2 else 2
    try:
        import numpy as np
        import onnxruntime as ort
    except ImportError as e:
        sys.stderr.write("ort-layers.py: %s (run it with the venv ./bootstrap makes)\n" % e)
        return 2
    model = argv[1]
    threads = int(argv[2]) if len(argv) > 2 else 1
    runs = int(argv[3]) if len(argv) > 3 else 50
    if threads < 1 or runs < 5:
        sys.stderr.write("ort-layers.py: THREADS must be 1 or more and RUNS 5 or more\n")
        return 2
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.enable_profiling = True
    folder = tempfile.mkdtemp(prefix="ort-layers-")
    options.profile_file_prefix = os.path.join(folder, "profile")
    try:
        session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    except Exception as e:  # onnxruntime raises its own exception types
        os.rmdir(folder)
        sys.stderr.write("ort-layers.py: %s: %s\n" % (model, e))
        return 1
    feeds = {}
    for i in session.get_inputs():
        shape = [d if isinstance(d, int) else 1 for d in i.shape]
        feeds[i.name] = np.random.default_rng(0).random(shape, dtype=np.float32)
    for _ in range(runs):
        session.run(None, feeds)
    path = session.end_profiling()
    with open(path) as f:
        events = json.load(f)
    os.remove(path)
    os.rmdir(folder)
    times = collections.OrderedDict()
    ops = {}
    for e in events:
        if e.get("cat") == "Node" and e.get("name", "").endswith("_kernel_time"):
            name = e["name"][: -len("_kernel_time")]
            times.setdefault(name, []).append(e["dur"])
            ops[name] = e.get("args", {}).get("op_name", "?")
    skip = runs // 5
    total = 0.0
    print("%10s  %-18s %s" % ("median us", "operator", "node"))
    for name, durations in times.items():
        kept = sorted(durations[skip:]) or sorted(durations)
        median = kept[len(kept) // 2]
        total += median
        print("%10.1f  %-18s %s" % (median, ops[name], name))
    print("%10.1f  sum of the medians (%d nodes, %d thread%s, %d runs)" %
          (total, len(times), threads, "" if threads == 1 else "s", runs))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
