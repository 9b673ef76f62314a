#!/usr/bin/python3
"""Reference checks for tests/cli/xwn.sh: the XWN transform and pruning of
docs/xwn.md (research notes section 1.4) re-implemented in numpy, float32
step for step, to check what strata xwn export-weights and compare print.

  xwn-check.py weights MODEL DIR        seeded random weights for MODEL's layers
  xwn-check.py export MODEL SRC OUT     OUT is SRC with every XWN weight transformed
  xwn-check.py compare MODEL SRC JSON   the figures of strata xwn compare --json
  xwn-check.py fixed VECTORS JSON       the fixed Conv2D example's difference
"""
import json
import sys

import numpy as np

SHAPES = {
    # tests/data/xwn/tools.strata.json, as strata info lists its weights
    "c1_weights": (6, 4, 3, 3), "c1_bias": (6,),
    "d1_weights": (6, 4, 2, 2), "d1_bias": (4,),
    "cc_stage0_weights": (2, 4, 3, 3), "cc_stage1_weights": (2, 2, 3, 3),
    "cc_pointwise_weights": (3, 4, 1, 1), "cc_pointwise_bias": (3,),
    "head_weights": (2, 3, 1, 1), "head_bias": (2,),
    "off_weights": (2, 4, 3, 3), "off_bias": (2,),
}
XWN_TYPES = ("xwn_convolution", "xwn_deconvolution", "xwn_cascade_convolution")
DEFAULTS = {"use_transform": False, "bit": 4, "max_scale": 4.0, "use_pruning": False, "prun_weight": 0.5}
F = np.float32


def xwn(w, transposed, s):
    """The transform of one weight [A][B][taps...] (conv: O, I; transposed: I, O)."""
    a, b = w.shape[0], w.shape[1]
    t = w.reshape(a, b, -1).astype(F)
    taps = t.shape[2]
    # Each slice's mean magnitude: a sequential float32 sum, then a division.
    total = np.zeros((a, b), F)
    for k in range(taps):
        total = (total + np.abs(t[:, :, k])).astype(F)
    mag = (total / F(taps)).astype(F)
    keep = np.ones((a, b), F)
    if s["use_pruning"]:
        m = mag.T if transposed else mag  # [O][I]
        for o in range(m.shape[0]):
            acc = F(0)
            for i in range(m.shape[1]):
                acc = F(acc + m[o, i])
            edge = F(F(acc / F(m.shape[1])) * F(s["prun_weight"]))
            row = (m[o] >= edge).astype(F)
            if transposed:
                keep[:, o] = row
            else:
                keep[o] = row
    y = t.copy()
    counts = None
    bit = s["bit"]
    if s["use_transform"] and bit >= 1:
        sign = np.where(t >= 0, F(1), F(-1)).astype(F)
        n = 1 if bit == 1 else 1 << (bit - 1)
        counts = np.zeros(n, np.int64)
        if bit == 1:
            y = (sign * mag[:, :, None]).astype(F)
            level = np.zeros(t.shape, np.int64)
        else:
            best = np.full(t.shape, np.inf, F)
            level = np.zeros(t.shape, np.int64)
            for k in range(n):
                c = (F(F(s["max_scale"]) * F(2.0 ** -k)) * mag[:, :, None]).astype(F)
                d = np.abs(np.abs(t) - c).astype(F)
                better = d < best
                best = np.where(better, d, best)
                level = np.where(better, k, level)
            scale = np.array([F(F(s["max_scale"]) * F(2.0 ** -k)) for k in range(n)], F)
            y = (F(1) * sign * scale[level]).astype(F)
            y = (y * mag[:, :, None]).astype(F)
        kept = np.broadcast_to(keep[:, :, None] > 0, t.shape)
        for k in range(n):
            counts[k] = int(np.sum((level == k) & kept))
    y = (y * keep[:, :, None]).astype(F)
    pruned = int(np.sum(keep == 0))
    return y.reshape(w.shape), a * b, pruned, counts


def xwn_layers(model):
    with open(model) as f:
        m = json.load(f)
    for layer in m["layers"]:
        if layer["type"] in XWN_TYPES:
            s = dict(DEFAULTS)
            s.update({k: v for k, v in layer.get("params", {}).items() if k in DEFAULTS})
            yield layer["name"], layer["type"], s


def weights(model, out):
    rng = np.random.default_rng(20240611)
    for name, shape in SHAPES.items():
        np.save(f"{out}/{name}.npy", rng.uniform(-1, 1, shape).astype(F))


def transformed_files(model):
    """name -> (transposed, settings) for every weight file the transform touches."""
    files = {}
    for name, kind, s in xwn_layers(model):
        for key, shape in SHAPES.items():
            if key.startswith(name + "_") and len(shape) >= 3:
                files[key] = (kind == "xwn_deconvolution", s, name)
    return files


def export(model, src, out):
    files = transformed_files(model)
    with open(f"{out}/xwn-settings.json") as f:
        manifest = json.load(f)
    pruned = {}
    bad = 0
    for key in SHAPES:
        got = np.load(f"{out}/{key}.npy")
        w = np.load(f"{src}/{key}.npy")
        if key in files:
            transposed, s, layer = files[key]
            want, _, p, _ = xwn(w, transposed, s)
            pruned[layer] = pruned.get(layer, 0) + p
        else:
            want = w
        if got.dtype != np.float32 or got.shape != want.shape or not np.array_equal(got, want):
            print(f"{key}: differs; largest difference {np.max(np.abs(got - want)) if got.shape == want.shape else 'shape'}")
            bad += 1
    for layer in manifest["layers"]:
        if layer["pruned"] != pruned.get(layer["name"], 0):
            print(f"manifest: {layer['name']} pruned {layer['pruned']}, expected {pruned.get(layer['name'])}")
            bad += 1
    print(f"{len(SHAPES)} files checked, {len(files)} transformed, {bad} bad")
    return bad == 0


def compare(model, src, js):
    with open(js) as f:
        got = json.load(f)
    files = transformed_files(model)
    bad = 0
    for layer in got["layers"]:
        slices = pruned = 0
        counts = None
        for key, (transposed, s, name) in files.items():
            if name != layer["name"]:
                continue
            _, n, p, c = xwn(np.load(f"{src}/{key}.npy"), transposed, s)
            slices += n
            pruned += p
            if c is not None:
                counts = c if counts is None else counts + c
        want_counts = [] if counts is None else [int(v) for v in counts]
        if (layer["slices"], layer["pruned"], layer["level_counts"]) != (slices, pruned, want_counts):
            print(f"{layer['name']}: slices/pruned/levels {layer['slices']} {layer['pruned']} "
                  f"{layer['level_counts']}, expected {slices} {pruned} {want_counts}")
            bad += 1
    print(f"{len(got['layers'])} layers checked, {bad} bad")
    return bad == 0


def fixed(vectors, js):
    with open(vectors) as f:
        v = json.load(f)["conv2d_fixed"]
    plain = np.array(v["out_plain_nhwc"], np.float64)
    xw = np.array(v["out_xwn_nhwc"], np.float64)
    max_abs = np.max(np.abs(xw - plain))
    rel = np.linalg.norm(xw - plain) / np.linalg.norm(plain)
    with open(js) as f:
        got = json.load(f)
    ok = True
    for what, o in (("layer", got["layers"][0]["outputs"][0]), ("network", got["outputs"][0])):
        if abs(o["max_abs"] - max_abs) > 1e-5 * max_abs or abs(o["rel_l2"] - rel) > 1e-5 * rel:
            print(f"{what}: max_abs {o['max_abs']} rel_l2 {o['rel_l2']}, expected {max_abs} {rel}")
            ok = False
    print(f"fixed Conv2D: max_abs {max_abs}, rel_l2 {rel:.6g}")
    return ok


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "weights":
        weights(*args)
        ok = True
    else:
        ok = {"export": export, "compare": compare, "fixed": fixed}[cmd](*args)
    sys.exit(0 if ok else 1)
