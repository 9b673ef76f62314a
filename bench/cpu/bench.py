"""bench/cpu: Strata beside onnxruntime and PyTorch on the CPU, in one
invocation. Rows: ResNet-18, MobileNetV2, SqueezeNet 1.1 and three single
convolutions; each on 1 and 2 threads, the engines taking turns run by
run (Bench.race); the FP32 peak measured by peak-fma in the same run;
targets printed as pass/fail beside each row.
docs/performance.md says what every number is.

    bench.py BUILD_DIR [--runs N] [--warmup N] [--rounds N] [--threads 1,2]
                       [--rows a,b] [--quick] [--json] [--keep]

This driver uses the standard library only (it reads and writes .npy
itself), so that a missing peer never stops it: each peer runs in its own
process (peer.py) under the Python that has it.
"""
import argparse
import ast
import datetime
import json
import os
import platform
import random
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from array import array

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import peer  # noqa: E402  (only its table and counting; no heavy imports)

RTOL = 1e-3
# The race (Bench.race): timed runs per turn, after untimed ones for
# RACE_LEAD_MS. A core that has idled for tens of ms (the other engines'
# turns, settle) runs slowly for its first few ms of work: on the Zen 3
# guest of docs/performance.md the two-thread 1x1 row took 1.7, 1.0, 0.74,
# 0.65 ms in its first four runs after 100 ms idle and 0.61 from the fifth
# (about 4 ms in) on; with one untimed run a turn, every engine's
# two-thread single convolution was measured half cold (1.3 ms against
# 0.63 alone), while peak-fma's 5 ms runs were not.
RACE_BURST = 2
RACE_LEAD_MS = 10


def cpu_seconds(pid):
    """A process's user + system CPU time from /proc, or None."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def settle(pid, most=1.0):
    """Waits until process pid uses no CPU for 20 ms (at most `most`
    seconds; 0.3 s without /proc). After a run the threads of ONNX Runtime
    spin for some 60 ms of CPU time and PyTorch's (OpenMP) for some 130 ms
    over 200 ms; an engine whose turn came then shared the cores with them
    (Strata's two-thread SqueezeNet 12.1 ms in a race, 6.1 alone)."""
    t0, last = time.perf_counter(), cpu_seconds(pid)
    if last is None:
        time.sleep(0.3)
        return
    while time.perf_counter() - t0 < most:
        time.sleep(0.02)
        now = cpu_seconds(pid)
        if now is None or now == last:
            return
        last = now


def log(text):
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


# ---- .npy without numpy (float32, C order) ----

def npy_write(path, shape, values):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % (
        "".join("%d, " % d for d in shape))
    pad = 64 - (10 + len(header) + 1) % 64
    header += " " * pad + "\n"
    data = array("f", values)
    if sys.byteorder != "little":
        data.byteswap()
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1"))
        data.tofile(f)


def npy_read(path):
    """(shape, array('f')) of a little-endian float32 C-order .npy file."""
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:6] != b"\x93NUMPY":
        raise ValueError("%s: not a .npy file" % path)
    if raw[6] == 1:
        n, start = struct.unpack("<H", raw[8:10])[0], 10
    else:
        n, start = struct.unpack("<I", raw[8:12])[0], 12
    head = ast.literal_eval(raw[start:start + n].decode("latin1"))
    if head["descr"] not in ("<f4", "=f4") or head["fortran_order"]:
        raise ValueError("%s: %s, not little-endian float32 in C order" % (path, head["descr"]))
    data = array("f")
    data.frombytes(raw[start + n:])
    if sys.byteorder != "little":
        data.byteswap()
    return tuple(head["shape"]), data


def agreement(path_a, path_b):
    """How far output a is from the reference b: max|a-b| / max|b|, and
    whether every element passes |a-b| <= rtol * (max|b| + |b|) (the
    architecture's rule with atol = rtol * max|b|)."""
    sa, a = npy_read(path_a)
    sb, b = npy_read(path_b)
    if sa != sb:
        return {"max_rel": None, "agree": False, "why": "shapes %s and %s" % (sa, sb)}
    scale = max(abs(v) for v in b) or 1.0
    worst, ok = 0.0, True
    for x, y in zip(a, b):
        d = abs(x - y)
        if d > worst:
            worst = d
        if d > RTOL * (scale + abs(y)) or d != d:
            ok = False
    return {"max_rel": worst / scale, "agree": ok}


# ---- running things ----

def run(cmd, env=None, timeout=900):
    """(returncode, stdout, stderr, wall seconds) of a command; never raises."""
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, timeout=timeout,
                           universal_newlines=True)
        return p.returncode, p.stdout, p.stderr, time.perf_counter() - t0
    except (OSError, subprocess.TimeoutExpired) as e:
        return -1, "", str(e), time.perf_counter() - t0


def run_json(cmd, env=None):
    """The JSON object a command prints last on stdout, or (None, why)."""
    rc, out, err, wall = run(cmd, env)
    if rc != 0:
        tail = (err.strip().splitlines() or ["exit %d" % rc])[-1]
        return None, tail, wall
    try:
        return json.loads(out[out.index("{"):]), None, wall
    except ValueError:
        return None, "unreadable output: %s" % out[-200:], wall


def check_python(python, modules):
    """(version text, None) when python imports modules, or (None, why)."""
    if not python or not os.path.exists(python):
        return None, "%s not found" % python
    code = "import %s; print(%s.__version__)" % (", ".join(modules), modules[0])
    rc, out, err, _ = run([python, "-c", code], timeout=120)
    if rc != 0:
        last = (err.strip().splitlines() or ["?"])[-1]
        return None, "%s cannot import %s (%s)" % (python, ", ".join(modules), last)
    return out.strip(), None


# ---- the rows ----

def conv_model(row):
    """A Strata model of one convolution: input, convolution, output."""
    n, c, h, w = row["input"]
    cv = row["conv"]
    return {
        "format": "strata-model", "version": 1,
        "network": {"name": row["name"], "version": "1.0", "tensor_format": "fp32-nchw", "weights": "weights"},
        "layers": [
            {"name": "data", "type": "input", "params": {"dims": [c, h, w]}, "pos": [0, 0]},
            {"name": "conv", "type": "convolution",
             "params": {"num_output": cv["out"], "kernel": [cv["kernel"]] * 2, "pads": [cv["pad"]],
                        "groups": cv["groups"], "bias": False},
             "inputs": ["data.0"], "pos": [0, 8]},
            {"name": "out", "type": "output", "inputs": ["conv.0"], "pos": [0, 16]},
        ],
    }


class Bench:
    def __init__(self, args):
        self.args = args
        self.build = os.path.abspath(args.build)
        self.strata = os.path.join(self.build, "strata")
        self.env = dict(os.environ, STRATA_PLUGIN_PATH=os.path.join(self.build, "plugins", "std", ".libs"))
        self.tmp = tempfile.mkdtemp(prefix="strata-bench-cpu-")
        self.torch_python = os.environ.get("STRATA_BENCH_TORCH_PYTHON", "/usr/bin/python3")
        self.ort_python = os.environ.get("STRATA_BENCH_ORT_PYTHON", os.path.join(TOP, "venv", "bin", "python"))
        self.peers = {}
        self.peak, self.peak_runs, self.peak_isa, self.peak_why = {}, {}, {}, None

    # -- set-up --

    def find_peers(self):
        v, why = check_python(self.torch_python, ["torch", "torchvision", "numpy"])
        self.peers["pytorch"] = {"available": v is not None, "version": v,
                                 "why": why and why + " (./bootstrap installs python3-torch)"}
        v, why = check_python(self.ort_python, ["onnxruntime", "numpy"])
        self.peers["onnxruntime"] = {"available": v is not None, "version": v,
                                     "why": why and why + " (./bootstrap makes ./venv with onnxruntime)"}
        for name, p in self.peers.items():
            log("peer %s: %s" % (name, p["version"] if p["available"] else "n/a, " + p["why"]))

    def measure_peak(self, when):
        """Runs peak-fma; the peak is the best it reaches over the whole
        invocation (it runs at the start, before each single convolution
        and at the end), since other work on the machine only lowers it."""
        exe = os.path.join(self.build, "bench", "cpu", "peak-fma")
        cmd = [exe, "--threads", str(max(self.args.threads)), "--json"]
        if self.args.quick:
            cmd += ["--reps", "2", "--seconds", "0.1"]
        elif when != "start":
            cmd += ["--reps", "3"]
        log("FMA peak (%s)" % when)
        r, why, _ = run_json(cmd)
        if r is None:
            log("FMA peak: n/a (%s)" % why)
            self.peak_why = why
            return
        for entry in r["peak"]:
            t = entry["threads"]
            self.peak_runs.setdefault(str(t), []).append(round(entry["gflops"], 1))
            if entry["gflops"] > self.peak.get(t, 0):
                self.peak[t] = entry["gflops"]
                self.peak_isa[str(t)] = entry["isa"]

    def prepare(self, row):
        """The row's folder: input.npy always; with torch its module, ONNX,
        reference output and Strata weights; Strata's model file. Returns
        the row's state (paths, how the weights are shared, or why not)."""
        d = os.path.join(self.tmp, row["name"])
        os.makedirs(d)
        st = {"dir": d, "input": os.path.join(d, "input.npy"), "why": None}
        count = 1
        for k in row["input"]:
            count *= k
        rnd = random.Random(row["seed"])
        npy_write(st["input"], row["input"], (rnd.random() for _ in range(count)))
        st["flops"] = 2 * peer.conv_macs(row) if row["kind"] == "conv" else None
        if row["kind"] == "conv":
            st["model"] = os.path.join(d, "model.strata.json")
            with open(st["model"], "w") as f:
                json.dump(conv_model(row), f, indent=1)
        elif not row.get("import"):
            st["model"] = os.path.join(TOP, row["strata_model"])
        else:
            st["model"] = os.path.join(d, "model.strata.json")

        if self.peers["pytorch"]["available"]:
            rc, _, err, wall = run([self.torch_python, os.path.join(HERE, "peer.py"), "prepare", d, row["name"]])
            if rc != 0:
                st["why"] = "torch could not make the network: %s" % (err.strip().splitlines() or ["?"])[-1]
            else:
                with open(os.path.join(d, "flops.json")) as f:
                    st["flops"] = json.load(f)["flops"]
                st["onnx"] = os.path.join(d, "model.onnx")
                st["reference"] = os.path.join(d, "torch_out.npy")
                st["weights"] = ["--weights", os.path.join(d, "weights")]
                st["source"] = "torch (seed %d)" % row["seed"]
        elif row.get("import"):
            st["why"] = "the network comes from torchvision, which is missing"
        else:
            # Without torch, Strata's own seeded weights go to ONNX for
            # onnxruntime, and its output is the reference.
            st["weights"] = ["--random-weights", "--seed", "0"]
            st["onnx"] = os.path.join(d, "model.onnx")
            rc, _, err, _ = run([self.strata, "export", "onnx", st["model"], "--random-weights", "--seed", "0",
                                 "-o", st["onnx"]], self.env)
            if rc != 0:
                st["onnx"] = None
                log("%s: strata export onnx failed: %s" % (row["name"], err.strip()))
            st["source"] = "strata --random-weights (seed 0), exported with strata export onnx"

        if row.get("import") and st["why"] is None:
            wdir = os.path.join(d, "strata-weights")
            rc, _, err, _ = run([self.strata, "import", st["onnx"], "-o", st["model"], "--weights-out", wdir],
                                self.env)
            if rc != 0:
                st["strata_why"] = "strata import failed: %s" % (err.strip().splitlines() or ["?"])[-1]
            st["weights"] = ["--weights", wdir]
        return st

    # -- measuring --

    def strata_row(self, row, st, threads, first_round=True, runs=None):
        """Strata's median of `runs` runs (default --runs) from strata run;
        in the first round also its first run and output (a process of
        their own) and, from load-strata, its load time and resident
        memory."""
        if st["why"] or st.get("strata_why"):
            return {"why": st["why"] or st["strata_why"]}
        base = [self.strata, "run", st["model"]] + st["weights"] + ["--input", st["input"],
                                                                   "--threads", str(threads), "--no-report"]
        r = {}
        if first_round:
            out_path = os.path.join(st["dir"], "strata_out_%d.npy" % threads)
            first, why, _ = run_json(base + ["--iterations", "1", "--warmup", "0", "--json", "--output", out_path],
                                     self.env)
            if first is None:
                return {"why": "strata run failed: %s" % why}
            r.update(first_ms=first["median_ms"], output=out_path)
        timed, why, _ = run_json(base + ["--iterations", str(runs or self.args.runs),
                                         "--warmup", str(self.args.warmup), "--json"], self.env)
        if timed is None:
            return {"why": "strata run failed: %s" % why}
        r.update(median_ms=timed["median_ms"], min_ms=timed["min_ms"], max_ms=timed["max_ms"],
                 arena_bytes=timed.get("arena_bytes"), threads=timed.get("threads"))
        if first_round:
            weights = st["weights"][1] if st["weights"][0] == "--weights" else "--random-weights"
            mem, why, _ = run_json([os.path.join(self.build, "bench", "cpu", "load-strata"), st["model"], weights,
                                    str(threads), "3"], self.env)
            if mem is None:
                r["load_why"] = why
            else:
                r.update({k: mem[k] for k in ("load_ms", "rss_before_load_kib", "rss_loaded_kib", "peak_load_kib",
                                              "peak_run_kib", "peak_reset")})
        return r

    def peer_cannot(self, which, st):
        """Why a peer cannot run this row, or None."""
        p = self.peers[which]
        if not p["available"]:
            return p["why"]
        if which == "pytorch" and "reference" not in st:
            return st["why"] or "no torch network"
        if which == "onnxruntime" and not st.get("onnx"):
            return st["why"] or "no ONNX file"
        return None

    def peer_env(self, threads):
        # torch.set_num_threads bounds its OpenMP pool but not the BLAS
        # pool some convolutions go through (a 1x1 convolution ran on both
        # cores with set_num_threads(1)); the variables bound every pool.
        return dict(os.environ, OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads),
                    OPENBLAS_NUM_THREADS=str(threads))

    def peer_row(self, which, row, st, threads, runs=None):
        p = self.peers[which]
        if not p["available"]:
            return {"why": p["why"]}
        if which == "pytorch" and "reference" not in st:
            return {"why": st["why"] or "no torch network"}
        if which == "onnxruntime" and not st.get("onnx"):
            return {"why": st["why"] or "no ONNX file"}
        out_path = os.path.join(st["dir"], "%s_out_%d.npy" % (which, threads))
        if which == "pytorch":
            cmd = [self.torch_python, os.path.join(HERE, "peer.py"), "torch", st["dir"]]
        else:
            cmd = [self.ort_python, os.path.join(HERE, "peer.py"), "ort", st["onnx"], st["input"]]
        cmd += [str(threads), str(runs or self.args.runs), str(self.args.warmup), out_path]
        r, why, _ = run_json(cmd, self.peer_env(threads))
        if r is None:
            return {"why": "%s failed: %s" % (which, why)}
        r["output"] = out_path
        return r

    def check_outputs(self, row, st, results):
        """Each engine's outputs against the reference (torch's, or Strata's
        own when torch is missing), once per row over every thread count."""
        ref = st.get("reference")
        engines = ["strata", "onnxruntime"] if ref else ["onnxruntime"]
        if not ref:
            firsts = [r["strata"].get("output") for r in results if r["strata"].get("output")]
            ref = firsts[0] if firsts else None
        checks = {}
        if ref is None:
            return checks
        for engine in engines:
            found = []
            for r in results:
                path = r[engine].get("output")
                if not path or not os.path.exists(path):
                    continue
                try:
                    found.append(agreement(path, ref))
                except (OSError, ValueError) as e:
                    found.append({"max_rel": None, "agree": False, "why": str(e)})
            if found:
                failed = [a for a in found if not a["agree"]]
                worst = failed[0] if failed else max(found, key=lambda a: a["max_rel"])
                worst["against"] = "pytorch" if st.get("reference") else "strata"
                checks[engine] = worst
        return checks

    def race(self, row, st, threads, k):
        """Race k of one row at one thread count: every engine that can run
        it loaded in a fresh process of its own (load-strata --serve,
        peer.py serve-*), then turns of RACE_BURST timed runs each, the
        engines' order rotating, until each has --runs timed runs; each
        turn starts with untimed runs for RACE_LEAD_MS (at least one), so
        that no timed run finds caches another engine has just used or a
        core still waking from idle, and after each burst the next engine
        waits until this one's idle threads have stopped spinning (settle).
        Run by run, a busy spell of this shared machine falls on every
        engine alike, where before each engine ran all its runs in its own
        few seconds. Returns {engine: {median_ms, min_ms, max_ms} or
        {why}}."""
        cmds = {}
        if not (st["why"] or st.get("strata_why")):
            weights = st["weights"][1] if st["weights"][0] == "--weights" else "--random-weights"
            cmds["strata"] = ([os.path.join(self.build, "bench", "cpu", "load-strata"), "--serve", st["model"],
                               weights, str(threads), str(self.args.warmup)], self.env)
        if not self.peer_cannot("onnxruntime", st):
            cmds["onnxruntime"] = ([self.ort_python, os.path.join(HERE, "peer.py"), "serve-ort", st["onnx"],
                                    st["input"], str(threads), str(self.args.warmup)], self.peer_env(threads))
        if not self.peer_cannot("pytorch", st):
            cmds["pytorch"] = ([self.torch_python, os.path.join(HERE, "peer.py"), "serve-torch", st["dir"],
                                str(threads), str(self.args.warmup)], self.peer_env(threads))
        peak_exe = os.path.join(self.build, "bench", "cpu", "peak-fma")
        if row["kind"] == "conv" and os.access(peak_exe, os.X_OK):
            # The FMA peak takes its turns too: a single convolution's
            # fraction of the peak then compares two figures measured in
            # the same spells of the machine.
            cmds["peak"] = ([peak_exe, "--serve", "--threads", str(threads)], self.env)
        procs, out, ready = {}, {}, {}
        for e, (cmd, env) in cmds.items():
            err = tempfile.TemporaryFile(mode="w+")
            try:
                procs[e] = (subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err,
                                             env=env, universal_newlines=True, bufsize=1), err)
            except OSError as ex:
                out[e] = {"why": "%s could not start: %s" % (e, ex)}

        def reply(e):
            """The engine's next JSON line, or None (and its why) when it died."""
            p, err = procs[e]
            line = p.stdout.readline()
            try:
                return json.loads(line)
            except ValueError:
                p.kill()
                p.wait()
                err.seek(0)
                tail = (err.read().strip().splitlines() or ["exit %s" % p.returncode])[-1]
                out[e] = {"why": "%s failed in the race: %s" % (e, tail)}
                del procs[e]
                return None

        for e in list(procs):
            ready[e] = reply(e)
        times = {e: [] for e in procs}
        turns = -(-self.args.runs // RACE_BURST)
        order = [e for e in ("strata", "onnxruntime", "pytorch", "peak") if e in procs]
        for turn in range(turns):
            shift = (turn + k) % max(len(order), 1)
            for e in order[shift:] + order[:shift]:
                if e not in procs:
                    continue
                try:
                    procs[e][0].stdin.write("%d %d\n" % (RACE_BURST, RACE_LEAD_MS))
                except OSError:
                    pass  # it died: reply reads its end and says why
                r = reply(e)
                if r is not None:
                    times[e].extend(r["ms"])
                    settle(procs[e][0].pid)
        for e, (p, err) in procs.items():
            try:
                p.stdin.close()
            except OSError:
                pass
            p.wait()
            err.close()
            t = times[e][:self.args.runs]
            out[e] = {"median_ms": peer.upper_median(t), "min_ms": min(t), "max_ms": max(t)}
        if "median_ms" in out.get("peak", {}):
            out["peak"].update(gflops=ready["peak"]["gflop"] / out["peak"]["median_ms"] * 1e3,
                               isa=ready["peak"]["isa"])
        return out

    def bench_row(self, row):
        """Every engine on every thread count: first each engine alone in a
        process of its own (first run, load, memory, output; a short
        median of its own kept as solo_median_ms), then --rounds races
        (race) for the medians; an engine's time is the best of its races'
        medians (combine_rounds)."""
        log("%s: preparing" % row["label"])
        st = self.prepare(row)
        results = []
        engines = ["strata", "onnxruntime", "pytorch"]
        solo_runs = min(self.args.runs, 5)
        for t in self.args.threads:
            log("%s, %d thread%s: each engine alone, then %d race%s" % (
                row["label"], t, "" if t == 1 else "s", self.args.rounds, "" if self.args.rounds == 1 else "s"))
            load = load_average()
            solo = {"strata": self.strata_row(row, st, t, runs=solo_runs)}
            for e in engines[1:]:
                solo[e] = self.peer_row(e, row, st, t, runs=solo_runs)
            races = [self.race(row, st, t, k) for k in range(self.args.rounds)]
            r = {"threads": t, "load_average": load}
            peaks = [x["peak"]["gflops"] for x in races if x.get("peak", {}).get("gflops")]
            if peaks:
                r["race_peak_gflops"], r["race_peaks_gflops"] = max(peaks), peaks
            for e in engines:
                rounds = []
                for x in races:
                    got = x.get(e, {"why": solo[e].get("why") or "not in the race"})
                    rounds.append(got if got.get("why") else dict(solo[e], solo_median_ms=solo[e].get("median_ms"),
                                                                  **got))
                r[e] = solo[e] if solo[e].get("why") else combine_rounds(rounds)
            results.append(r)
        return st, results, self.check_outputs(row, st, results)

    # -- the table --

    def summarize(self, row, st, r, checks):
        t = r["threads"]
        ms = {k: r[k].get("median_ms") for k in ("strata", "onnxruntime", "pytorch")}
        flops = st.get("flops")
        peak = self.peak.get(t)
        out = {"name": row["name"], "label": row["label"], "kind": row["kind"], "threads": t,
               "runs": self.args.runs, "warmup": self.args.warmup, "load_average": r["load_average"],
               "strata_ms": ms["strata"], "onnxruntime_ms": ms["onnxruntime"], "pytorch_ms": ms["pytorch"],
               "gflop": flops / 1e9 if flops else None, "peak_gflops": peak, "weights": st.get("source")}
        race_peak = r.get("race_peak_gflops")
        if race_peak:
            out.update(race_peak_gflops=race_peak, race_peaks_gflops=r["race_peaks_gflops"])
        for k in ("strata", "onnxruntime", "pytorch"):
            gflops = flops / (ms[k] * 1e6) if flops and ms[k] else None
            out[k + "_gflops"] = gflops
            if row["kind"] == "conv":
                # Of the peak measured in the races beside the engines (the
                # best race's, as the engines' times are); without it, of
                # the best peak-fma run of the invocation.
                of_race = gflops / race_peak if gflops and race_peak else None
                of_best = gflops / peak if gflops and peak else None
                pre = "" if k == "strata" else k + "_"
                out[pre + "peak_fraction"] = of_race if of_race is not None else of_best
                out[pre + "peak_fraction_of_best"] = of_best
            if r[k].get("round_medians_ms"):
                out[k + "_round_medians_ms"] = r[k]["round_medians_ms"]
            if r[k].get("solo_median_ms") is not None:
                out[k + "_solo_median_ms"] = r[k]["solo_median_ms"]
            out[k + "_min_ms"] = r[k].get("min_ms")
            out[k + "_max_ms"] = r[k].get("max_ms")
            out[k + "_first_ms"] = r[k].get("first_ms")
            out[k + "_load_ms"] = r[k].get("load_ms")
            if row["kind"] == "model":
                m = r[k]
                for key in ("rss_before_load_kib", "rss_loaded_kib", "peak_load_kib", "peak_run_kib"):
                    out["%s_%s" % (k, key)] = m.get(key)
                have = all(m.get(key) is not None for key in ("rss_before_load_kib", "rss_loaded_kib",
                                                               "peak_load_kib", "peak_run_kib"))
                peak = max(m["peak_load_kib"], m["peak_run_kib"]) if have else None
                # Without a reset peak mark the runs' peak cannot be told apart.
                reset = m.get("peak_reset") is not False
                out[k + "_run_rss_kib"] = m["peak_run_kib"] - m["rss_loaded_kib"] if have and reset else None
                out[k + "_model_rss_kib"] = peak - m["rss_before_load_kib"] if have else None
                out[k + "_peak_rss_kib"] = peak
            if r[k].get("why"):
                out[k + "_why"] = r[k]["why"]
            elif r[k].get("load_why"):
                out[k + "_why"] = "load-strata failed: " + r[k]["load_why"]
        out["strata_arena_bytes"] = r["strata"].get("arena_bytes")
        out["strata_vs_onnxruntime"] = ms["strata"] / ms["onnxruntime"] if ms["strata"] and ms["onnxruntime"] else None
        out["strata_vs_pytorch"] = ms["strata"] / ms["pytorch"] if ms["strata"] and ms["pytorch"] else None
        out["agreement"] = checks
        out["target"], out["target_pass"] = self.target(row, out)
        return out

    @staticmethod
    def target(row, r):
        """The row's target as text, and True/False/None (cannot tell)."""
        s, p, o = r["strata_ms"], r["pytorch_ms"], r["onnxruntime_ms"]
        if s is None:
            return "n/a: no Strata time", None
        if row["kind"] == "conv" and row["target"] == "gemm":
            want = ">= 85% of peak and <= 1.0x PyTorch"
            frac = r.get("peak_fraction")
            if frac is None or p is None:
                return want + ": cannot tell (%s)" % ("no peak" if frac is None else "no PyTorch"), None
            ok = frac >= 0.85 and s <= p
            # The fraction counts a direct convolution's FLOPs: Winograd
            # (3x3, stride 1) does fewer multiplications and passes 100 %.
            how = " in direct-convolution FLOPs (Winograd)" if frac > 1.0 else ""
            return "%s: %s (%.0f%%%s, %.2fx)" % (want, "pass" if ok else "FAIL", frac * 100, how, s / p), ok
        if row["kind"] == "conv":
            want = "<= 0.8x PyTorch"
            if p is None:
                return want + ": cannot tell (no PyTorch)", None
            ok = s <= 0.8 * p
            return "%s: %s (%.2fx)" % (want, "pass" if ok else "FAIL", s / p), ok
        want = "<= 0.9x the faster peer"
        best = min(v for v in (p, o, float("inf")) if v is not None)
        if best == float("inf"):
            return want + ": cannot tell (no peer)", None
        ok = s <= 0.9 * best
        partial = "" if p is not None and o is not None else " (one peer only)"
        return "%s: %s (%.2fx)%s" % (want, "pass" if ok else "FAIL", s / best, partial), ok


def combine_rounds(rounds):
    """One engine's result over its rounds: the first round's (first run,
    load, memory, output) with the best of the rounds' medians, and each
    round's median beside it. The best, because each round is a fresh
    process: PyTorch's depthwise convolution ran 0.24 ms in some processes
    and 2.7 ms in others on the same machine, and a busy moment slows one
    round of any engine; every engine is judged by its best round."""
    r = dict(rounds[0])
    failed = [x for x in rounds if x.get("why")]
    if failed:
        return {"why": failed[0]["why"]}
    if len(rounds) > 1:
        medians = [x["median_ms"] for x in rounds]
        r.update(median_ms=min(medians), round_medians_ms=medians,
                 min_ms=min(x["min_ms"] for x in rounds), max_ms=max(x["max_ms"] for x in rounds))
    return r


# ---- printing ----

def fmt(v, spec="%.3f", missing="n/a"):
    return missing if v is None else spec % v


def print_text(meta, rows):
    print("bench/cpu, %s: %s, %s" % (meta["date"], meta["cpu"], meta["host"]))
    print("load average %s at the start, %s at the end; median of %d runs after %d warm-ups, the engines "
          "taking turns run by run (a race)%s"
          % (meta["load_start"], meta["load_end"], meta["runs"], meta["warmup"],
             "" if meta["rounds"] == 1 else ", the best of %d races" % meta["rounds"]))
    for name, p in meta["peers"].items():
        print("%-12s %s" % (name, p["version"] if p["available"] else "n/a: " + p["why"]))
    peak = meta["peak_gflops"]
    print("FP32 peak (peak-fma, the best of its runs in this invocation):")
    for t in meta["threads"]:
        print("  %d thread%s %s GFLOP/s %s; measured %s" % (
            t, " " if t == 1 else "s", fmt(peak.get(str(t)), "%6.1f"), meta["peak_isa"].get(str(t), ""),
            " ".join("%.1f" % g for g in meta["peak_measurements"].get(str(t), [])) or "n/a"))
    if meta["peak_why"]:
        print("  peak-fma failed: %s" % meta["peak_why"])
    print()
    print("Time: median ms; ratio = Strata / peer (below 1: Strata faster); GFLOP/s and % of peak are Strata's:")
    print("%peak of the peak measured in the races beside the engines (race peak), %best of the best peak above")
    head = "%-27s %3s %9s %9s %9s %7s %7s %7s %6s %6s %6s  %s" % (
        "row", "thr", "strata", "onnxrt", "pytorch", "st/ort", "st/pt", "GFLOP/s", "race", "%peak", "%best",
        "target")
    print(head)
    print("-" * len(head))
    for r in rows:
        frac, best = r.get("peak_fraction"), r.get("peak_fraction_of_best")
        print("%-27s %3d %9s %9s %9s %7s %7s %7s %6s %6s %6s  %s" % (
            r["label"], r["threads"], fmt(r["strata_ms"]), fmt(r["onnxruntime_ms"]), fmt(r["pytorch_ms"]),
            fmt(r["strata_vs_onnxruntime"], "%.2f"), fmt(r["strata_vs_pytorch"], "%.2f"),
            fmt(r["strata_gflops"], "%.1f"), fmt(r.get("race_peak_gflops"), "%.1f", "-"),
            fmt(frac * 100 if frac is not None else None, "%.0f%%", "-"),
            fmt(best * 100 if best is not None else None, "%.0f%%", "-"), r["target"]))
    print()
    print("Agreement, once per row over every thread count: max|a-b| / max|b| against the reference"
          " (pass: every |a-b| <= 1e-3 (max|b| + |b|))")
    seen = set()
    for r in rows:
        if r["name"] in seen:
            continue
        seen.add(r["name"])
        parts = []
        for engine, a in sorted(r["agreement"].items()):
            parts.append("%s vs %s %s %s" % (engine, a["against"], fmt(a["max_rel"], "%.1e"),
                                             "agree" if a["agree"] else "DIFFER " + a.get("why", "")))
        print("  %-27s %s   [weights: %s]" % (r["label"], "; ".join(parts) or "n/a (nothing to compare)",
                                              r["weights"] or "n/a"))
    print()
    print("First run (ms, and how many medians it costs) and load (ms: files to ready)")
    head = "%-27s %3s %18s %9s %18s %9s %18s %9s" % (
        "row", "thr", "strata first", "load", "onnxrt first", "load", "pytorch first", "load")
    print(head)
    print("-" * len(head))
    for r in rows:
        cells = []
        for k in ("strata", "onnxruntime", "pytorch"):
            first, med = r[k + "_first_ms"], r[k + "_ms"]
            cells.append("%9s (%s)" % (fmt(first, "%.2f"), fmt(first / med if first and med else None, "%4.1fx",
                                                                  "   - ")))
            cells.append(fmt(r[k + "_load_ms"], "%.1f"))
        print("%-27s %3d %18s %9s %18s %9s %18s %9s" % ((r["label"], r["threads"]) + tuple(cells)))
    print()
    print("Memory of the whole models, MiB of resident memory (RSS): run = peak while running - once loaded;"
          " model = peak - before loading; peak = the process's peak; arena = Strata's planned activations")
    head = "%-27s %3s %7s | %7s %7s %7s | %7s %7s %7s | %7s %7s %7s" % (
        "row", "thr", "arena", "st run", "model", "peak", "ort run", "model", "peak", "pt run", "model", "peak")
    print(head)
    print("-" * len(head))
    mib = lambda v, scale=1024.0: fmt(v / scale if v is not None else None, "%.1f")  # noqa: E731
    for r in rows:
        if r["kind"] != "model":
            continue
        cells = [mib(r["strata_arena_bytes"], 1048576.0)]
        for k in ("strata", "onnxruntime", "pytorch"):
            cells += [mib(r[k + "_run_rss_kib"]), mib(r[k + "_model_rss_kib"]), mib(r[k + "_peak_rss_kib"])]
        print("%-27s %3d %7s | %7s %7s %7s | %7s %7s %7s | %7s %7s %7s"
              % ((r["label"], r["threads"]) + tuple(cells)))
    whys = []
    for r in rows:
        for k in ("strata", "onnxruntime", "pytorch"):
            if r.get(k + "_why") and (k, r[k + "_why"]) not in whys:
                whys.append((k, r[k + "_why"]))
    if whys:
        print()
        print("n/a because:")
        for k, why in whys:
            print("  %s: %s" % (k, why))


def main(argv):
    ap = argparse.ArgumentParser(prog="bench/cpu/run", description=__doc__.split("\n\n")[0])
    ap.add_argument("build", metavar="BUILD_DIR")
    ap.add_argument("--runs", type=int, default=None, help="timed runs per measurement (default 30; 10 with --quick)")
    ap.add_argument("--warmup", type=int, default=None, help="untimed runs first (default 5; 2 with --quick)")
    ap.add_argument("--threads", default="1,2", help="thread counts, comma-separated (default 1,2)")
    ap.add_argument("--rows", default=None, help="only these rows, comma-separated: " +
                    ", ".join(r["name"] for r in peer.ROWS))
    ap.add_argument("--rounds", type=int, default=None,
                    help="races per row and thread count, each with every engine in a fresh process, "
                         "the engines taking turns run by run; an engine keeps its best race's median "
                         "(default 3; 1 with --quick)")
    ap.add_argument("--quick", action="store_true", help="fewer runs, a shorter peak measurement")
    ap.add_argument("--json", action="store_true", help="print the table as JSON")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder (models, ONNX, outputs)")
    args = ap.parse_args(argv[1:])
    args.runs = args.runs if args.runs is not None else (10 if args.quick else 30)
    args.warmup = args.warmup if args.warmup is not None else (2 if args.quick else 5)
    args.rounds = args.rounds if args.rounds is not None else (1 if args.quick else 3)
    try:
        args.threads = [int(t) for t in args.threads.split(",") if t]
    except ValueError:
        ap.error("--threads takes numbers such as 1,2")
    if args.runs < 1 or args.warmup < 0 or args.rounds < 1 or not args.threads or min(args.threads) < 1:
        ap.error("--runs and --rounds must be at least 1, --warmup at least 0, threads at least 1")
    rows = peer.ROWS
    if args.rows:
        want = args.rows.split(",")
        unknown = [w for w in want if w not in peer.ROW_BY_NAME]
        if unknown:
            ap.error("unknown rows: %s" % ", ".join(unknown))
        rows = [r for r in rows if r["name"] in want]
    b = Bench(args)
    if not os.access(b.strata, os.X_OK):
        ap.error("%s is not a built strata (run make first)" % b.strata)
    if args.runs < 20:
        log("note: %d runs per median; the targets are meant for 20 or more" % args.runs)
    meta = {"date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
            "host": platform.node(), "cpu": cpu_name(), "runs": args.runs, "warmup": args.warmup,
            "threads": args.threads, "rounds": args.rounds, "load_start": load_average()}
    try:
        b.find_peers()
        b.measure_peak("start")
        measured = []
        for row in rows:
            if row["kind"] == "conv" and not args.quick:
                b.measure_peak("before " + row["name"])
            measured.append((row,) + b.bench_row(row))
        b.measure_peak("end")
        # Fractions of peak and targets once the peak is final.
        table = [b.summarize(row, st, r, checks) for row, st, results, checks in measured for r in results]
    finally:
        if args.keep:
            log("kept %s" % b.tmp)
        else:
            shutil.rmtree(b.tmp, ignore_errors=True)
    meta.update(load_end=load_average(), peers=b.peers,
                peak_gflops={str(t): g for t, g in sorted(b.peak.items())},
                peak_isa=b.peak_isa, peak_measurements=b.peak_runs, peak_why=b.peak_why)
    if args.json:
        print(json.dumps(dict(meta, rows=table), indent=1))
    else:
        print_text(meta, table)
    return 0


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return "%s, %d cores" % (line.split(":", 1)[1].strip(), os.cpu_count() or 0)
    except OSError:
        pass
    return "%s, %d cores" % (platform.machine(), os.cpu_count() or 0)


def load_average():
    try:
        return "%.2f %.2f %.2f" % os.getloadavg()
    except OSError:
        return "n/a"


if __name__ == "__main__":
    sys.exit(main(sys.argv))
