#!/usr/bin/env python3
"""Parity of Strata's XWN layers with the DDesigner API package itself
(tests/cli/xwn-parity.sh; docs/xwn-parity.md explains the method).

  xwn-parity.py probe
      exit 0 when torch, numpy and the package's PyTorch modules import;
      otherwise print why and exit 1
  xwn-parity.py run STRATA WORKDIR RESULTS
      runs every case and self-check, prints a table, writes one
      "NAME<TAB>ok|FAIL<TAB>why" line per case to RESULTS, exits 0 when
      all agree and 1 when one does not

Each case builds one layer with the package's PyTorch API (seeded random
weights), saves its weights as .npy files under Strata's names, writes a
one-layer Strata model, runs `strata run` on a seeded random input and
compares the output with the package layer's forward() on the same input:
|a - b| <= atol + rtol |b| with rtol 1e-5 and atol = rtol max|b|
(ARCHITECTURE.md, FP32 on the CPU).

The package's torch transform takes each kernel slice's mean magnitude with
torch's own reduction order, which differs from Strata's sequential float32
sum by an ulp in many slices. Such a difference moves a transformed weight
by an ulp, far inside the tolerance, but where |w| sits on the midpoint
between two levels (or a slice's magnitude on the pruning edge) it can flip
the choice. So the weights are checked too, with a numpy re-implementation
of the transform in float32:
  - fed torch's own magnitudes it must give the package's torch weights
    bit for bit (this checks that the re-implementation is the package's
    algorithm, and that nothing but the magnitudes can differ);
  - fed sequential sums (Strata's arithmetic) it must give the package's
    numpy Optimization's weights bit for bit (the package's other path,
    whose reductions over the leading axes of a contiguous array are
    sequential);
  - between the two, choices that flip are counted ("flips"). A case with
    flips may fail the output comparison against the torch layer only if it
    passes against the package's own convolution run with the
    sequential-sum weights; the table says so. No case is let through on a
    looser tolerance.

Self-checks prove that the comparison can fail: one weight negated in the
files Strata reads, the transform turned off on Strata's side only, and the
cascade's stage files swapped must each be reported as a mismatch.
"""
import importlib.util
import json
import os
import subprocess
import sys
import time
import types

RTOL = 1e-5
PACKAGE_VERSION = "0.0.6.3"


def import_reference():
    """Imports the package's PyTorch and numpy XWN modules without running
    its top-level __init__, which tries `import tensorflow` first (printing a
    warning when it is absent, taking seconds when it is present) and then
    imports the torch half anyway. A bare parent module with the package's
    path lets Python find the submodules; the pytorch subpackage's own
    __init__ needs only torch and numpy."""
    import numpy  # noqa: F401  (the error names it when missing)
    import torch  # noqa: F401

    if "ddesigner_api" not in sys.modules:
        spec = importlib.util.find_spec("ddesigner_api")
        if spec is None or not spec.submodule_search_locations:
            raise ImportError("the package ddesignerapi is not installed (No module named 'ddesigner_api')")
        parent = types.ModuleType("ddesigner_api")
        parent.__path__ = list(spec.submodule_search_locations)
        parent.__file__ = spec.origin
        sys.modules["ddesigner_api"] = parent
    from ddesigner_api.numpy.xwn import optimization
    from ddesigner_api.pytorch import dpi_nn
    from ddesigner_api.pytorch.xwn import torch_nn
    return torch_nn, dpi_nn, optimization


def package_version():
    try:
        from importlib import metadata
        return metadata.version("ddesignerapi")
    except Exception:  # not installed as a distribution (a bare checkout)
        return "unknown"


# ---- the cases ----------------------------------------------------------
# Each case: name, kind, constructor arguments of the package's layer (in
# its own names), input shape without the batch, batch.
XWN = ("use_transform", "use_pruning", "bit", "max_scale", "prun_weight")


def conv_cases():
    c = []
    add = c.append
    t4 = dict(use_transform=True, bit=4, max_scale=4.0)
    # Conv2d: the transform's settings one by one, on a 3x3 kernel.
    add(("conv2d_plain", "conv2d", dict(in_channels=6, out_channels=8, kernel_size=3, padding=1), (6, 9, 9), 2))
    for bit in (1, 2, 3, 4, 5):
        add(("conv2d_bit%d" % bit, "conv2d",
             dict(in_channels=6, out_channels=8, kernel_size=3, padding=1, use_transform=True, bit=bit),
             (6, 9, 9), 1))
    for ms in (2.0, 3.0):
        add(("conv2d_maxscale%d" % ms, "conv2d",
             dict(in_channels=6, out_channels=8, kernel_size=3, padding=1, use_transform=True, bit=4,
                  max_scale=ms), (6, 9, 9), 1))
    # bit 0 is left out: the package's torch Optimization cannot be built
    # with it (2^-1 levels, torch.cat of an empty list).
    add(("conv2d_prune", "conv2d",
         dict(in_channels=8, out_channels=8, kernel_size=3, padding=1, use_pruning=True, prun_weight=0.5),
         (8, 8, 8), 1))
    add(("conv2d_bit4_prune0.8", "conv2d",
         dict(in_channels=8, out_channels=6, kernel_size=3, padding=1, use_pruning=True, prun_weight=0.8, **t4),
         (8, 8, 8), 1))
    add(("conv2d_bit3_ms2_prune", "conv2d",
         dict(in_channels=8, out_channels=6, kernel_size=3, use_transform=True, bit=3, max_scale=2.0,
              use_pruning=True, prun_weight=0.6, bias=False), (8, 8, 8), 1))
    add(("conv2d_groups2", "conv2d",
         dict(in_channels=8, out_channels=12, kernel_size=3, padding=1, groups=2, use_pruning=True, **t4),
         (8, 8, 8), 1))
    add(("conv2d_groups4_nobias", "conv2d",
         dict(in_channels=8, out_channels=8, kernel_size=(3, 1), padding=(1, 0), groups=4, bias=False,
              use_transform=True, bit=5, max_scale=3.0), (8, 7, 7), 1))
    add(("conv2d_depthwise", "conv2d",
         dict(in_channels=8, out_channels=8, kernel_size=3, padding=1, groups=8, use_pruning=True,
              prun_weight=0.9, **t4), (8, 9, 9), 1))
    add(("conv2d_depthwise_x2", "conv2d",
         dict(in_channels=6, out_channels=12, kernel_size=5, padding=2, groups=6, use_transform=True, bit=2),
         (6, 9, 9), 1))
    add(("conv2d_stride_dil", "conv2d",
         dict(in_channels=5, out_channels=7, kernel_size=(3, 5), stride=(2, 1), padding=(2, 1),
              dilation=(2, 1), **t4), (5, 11, 10), 2))
    add(("conv2d_stride3_k5", "conv2d",
         dict(in_channels=4, out_channels=6, kernel_size=5, stride=3, padding=0, use_pruning=True,
              prun_weight=0.7, **t4), (4, 13, 14), 1))
    add(("conv2d_same_k4", "conv2d",
         dict(in_channels=4, out_channels=5, kernel_size=4, padding="same", dilation=1, **t4), (4, 8, 7), 1))
    add(("conv2d_valid_dil2", "conv2d",
         dict(in_channels=4, out_channels=5, kernel_size=3, padding="valid", dilation=2,
              use_transform=True, bit=1), (4, 9, 9), 1))
    # One weight set on a level midpoint, where torch's magnitude and the
    # sequential one choose different levels (see plant_flip).
    add(("conv2d_planted_flip", "conv2d",
         dict(in_channels=4, out_channels=6, kernel_size=3, padding=1, flip=True, **t4), (4, 8, 8), 1))
    add(("conv2d_1x1", "conv2d",
         dict(in_channels=16, out_channels=8, kernel_size=1, use_pruning=True, **t4), (16, 5, 5), 1))
    # Conv1d.
    add(("conv1d_bit4", "conv1d",
         dict(in_channels=6, out_channels=8, kernel_size=5, padding=2, **t4), (6, 20), 2))
    add(("conv1d_s2_dil2_g2_prune", "conv1d",
         dict(in_channels=6, out_channels=4, kernel_size=3, stride=2, padding=1, dilation=2, groups=2,
              use_transform=True, bit=3, use_pruning=True, prun_weight=0.7), (6, 21), 1))
    add(("conv1d_bit1_nobias", "conv1d",
         dict(in_channels=3, out_channels=5, kernel_size=7, bias=False, use_transform=True, bit=1),
         (3, 24), 1))
    # ConvTranspose1d / 2d.
    add(("tconv1d_s2", "tconv1d",
         dict(in_channels=6, out_channels=4, kernel_size=4, stride=2, padding=1, **t4), (6, 10), 2))
    add(("tconv1d_s2_op1_g2_prune", "tconv1d",
         dict(in_channels=6, out_channels=8, kernel_size=3, stride=2, padding=1, output_padding=1, groups=2,
              use_pruning=True, prun_weight=0.6, use_transform=True, bit=5), (6, 9), 1))
    add(("tconv2d_s2_op1", "tconv2d",
         dict(in_channels=6, out_channels=5, kernel_size=3, stride=2, padding=1, output_padding=1, **t4),
         (6, 6, 5), 1))
    add(("tconv2d_g2_prune_ms2", "tconv2d",
         dict(in_channels=8, out_channels=6, kernel_size=4, stride=2, padding=1, groups=2, use_transform=True,
              bit=3, max_scale=2.0, use_pruning=True, prun_weight=0.5), (8, 5, 5), 1))
    add(("tconv2d_dil2_s21", "tconv2d",
         dict(in_channels=4, out_channels=4, kernel_size=(3, 2), stride=(2, 1), padding=(1, 0),
              output_padding=(1, 0), dilation=2, bias=False, use_transform=True, bit=4, max_scale=3.0),
         (4, 5, 6), 1))
    add(("tconv2d_prune_only", "tconv2d",
         dict(in_channels=8, out_channels=4, kernel_size=2, stride=2, use_pruning=True, prun_weight=0.8),
         (8, 4, 4), 1))
    # CascadeConv1d / 2d, in the package's own block-style settings.
    add(("cascade2d_k3", "cascade2d",
         dict(in_channels=8, out_channels=6, kernel_size=3, transform=4), (8, 8, 8), 1))
    add(("cascade2d_k5_mid6_s2_p1_bias", "cascade2d",
         dict(in_channels=8, out_channels=10, kernel_size=5, stride=2, padding=1, mid_channels=6, bias=True,
              transform=4, pruning=0.5), (8, 9, 9), 1))
    add(("cascade2d_k7_ratio0.75", "cascade2d",
         dict(in_channels=8, out_channels=6, kernel_size=7, channel_ratio=0.75, transform=3, max_scale=2.0),
         (8, 10, 10), 1))
    add(("cascade2d_k7_plain", "cascade2d",
         dict(in_channels=16, out_channels=32, kernel_size=7, stride=(1, 1)), (16, 7, 7), 1))
    add(("cascade1d_k3_bias", "cascade1d",
         dict(in_channels=6, out_channels=4, kernel_size=3, bias=True, transform=1), (6, 16), 2))
    add(("cascade1d_k5_s2", "cascade1d",
         dict(in_channels=8, out_channels=5, kernel_size=5, stride=2, bias=True, transform=4), (8, 19), 1))
    add(("cascade1d_k7_mid4_p2_prune", "cascade1d",
         dict(in_channels=6, out_channels=7, kernel_size=7, padding=2, mid_channels=4, transform=5,
              max_scale=3.0, pruning=0.7), (6, 18), 1))
    return c


# ---- the package's layers -----------------------------------------------

def build(kind, args, seed):
    """The package's layer with seeded random weights. Each slice is scaled
    by its own random factor so that slice magnitudes vary and pruning has
    something to cut (torch's default init gives near-equal magnitudes)."""
    import torch
    torch_nn, dpi_nn, _ = import_reference()
    classes = {"conv1d": torch_nn.Conv1d, "conv2d": torch_nn.Conv2d, "tconv1d": torch_nn.ConvTranspose1d,
               "tconv2d": torch_nn.ConvTranspose2d, "cascade1d": dpi_nn.CascadeConv1d,
               "cascade2d": dpi_nn.CascadeConv2d}
    torch.manual_seed(seed)
    args = dict(args)
    flip = args.pop("flip", False)
    layer = classes[kind](**args)
    g = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        for m in xwn_parts(layer):
            w = m.weight
            scale = torch.exp(0.6 * torch.randn(tuple(w.shape[:2]) + (1,) * (w.dim() - 2), generator=g))
            w.copy_(torch.randn(tuple(w.shape), generator=g) * scale * 0.3)
            if m.bias is not None:
                m.bias.copy_(torch.randn(tuple(m.bias.shape), generator=g) * 0.1)
    if flip:
        plant_flip(layer)
    layer.eval()
    return layer


def plant_flip(layer):
    """Sets weight [0, 0, 0...] of a bit >= 2 convolution onto the midpoint
    between two levels of its own slice, then tries the float32 values
    around it until the package's torch magnitude and the sequential one
    choose different levels. The midpoint of levels k and k+1 is
    0.75 max_scale 2^-k m with m = (S + v) / T (S: the other taps' |w|), so
    v = a S / (T - a) with a = 0.75 max_scale 2^-k. Returns whether a flip
    was found: on a machine where torch happens to sum in tap order there
    is none, and the case is an ordinary one."""
    import numpy as np
    import torch
    w = layer.weight.detach().numpy().copy()
    taps = w[0, 0].size
    others = float(np.abs(w[0, 0]).sum() - abs(w[0, 0].flat[0]))
    for k in range(1, 5):
        a = 0.75 * float(layer.opt.max_scale) * 2.0 ** -k
        v = np.float32(a * others / (taps - a))
        for step in range(-40, 41):
            w[0, 0].flat[0] = v
            if step:
                w[0, 0].flat[0] = np.float32(v) + np.float32(step) * np.spacing(v)
            with torch.no_grad():
                layer.weight.copy_(torch.from_numpy(w))
            if weight_report(layer)["flips"]:
                return True
    return False


def xwn_parts(layer):
    """The package's XWN convolutions inside a layer, in Strata's weight
    order: a cascade's conv_list[0..n-1], then pointwise_conv."""
    if hasattr(layer, "conv_list"):
        return list(layer.conv_list) + [layer.pointwise_conv]
    return [layer]


def tuple_of(v, n):
    return list(v) if isinstance(v, (tuple, list)) else [v] * n


def strata_files(kind, args, layer):
    """The Strata layer (type, params) and its weight files {suffix: array}
    for the package's layer, parameter by parameter."""
    import numpy as np
    files = {}
    if kind.startswith("cascade"):
        n = 2 if kind == "cascade2d" else 1
        params = {
            "num_output": args["out_channels"],
            "kernel_size": args["kernel_size"],
            "stride": tuple_of(args.get("stride", 1), n),
            # The reference's padding: an int per axis, both sides.
            "pads": tuple_of(args.get("padding", 0), n),
            "mid_channels": args.get("mid_channels") or 0,
            "channel_ratio": args.get("channel_ratio", 0.5),
            "bias": bool(args.get("bias", False)),
            # Block-style transform=N / pruning=F, spelled out.
            "use_transform": args.get("transform") is not None,
            "bit": args["transform"] if args.get("transform") is not None else 4,
            "max_scale": args.get("max_scale", 4.0),
            "use_pruning": args.get("pruning") is not None,
            "prun_weight": args["pruning"] if args.get("pruning") is not None else 0.5,
        }
        for j, conv in enumerate(layer.conv_list):
            files["stage%d_weights" % j] = conv.weight.detach().numpy()
        files["pointwise_weights"] = layer.pointwise_conv.weight.detach().numpy()
        if layer.pointwise_conv.bias is not None:
            files["pointwise_bias"] = layer.pointwise_conv.bias.detach().numpy()
        return "xwn_cascade_convolution", params, {k: np.ascontiguousarray(v, np.float32) for k, v in files.items()}
    n = 2 if kind.endswith("2d") else 1
    params = {"num_output": args["out_channels"], "kernel": list(layer.kernel_size),
              "stride": list(layer.stride), "dilation": list(layer.dilation), "groups": layer.groups,
              "bias": layer.bias is not None}
    if isinstance(layer.padding, str):
        params["padding"] = layer.padding  # 'same' or 'valid', as in Strata
    else:
        params["padding"] = "explicit"
        params["pads"] = list(layer.padding)
    if kind.startswith("tconv"):
        params["output_padding"] = list(layer.output_padding)
    for key in XWN:
        params[key] = getattr(layer.opt, key)
    params["max_scale"] = float(layer.opt.max_scale)
    files["weights"] = layer.weight.detach().numpy()
    if layer.bias is not None:
        files["bias"] = layer.bias.detach().numpy()
    assert len(params["kernel"]) == n
    return ("xwn_deconvolution" if kind.startswith("tconv") else "xwn_convolution"), params, \
        {k: np.ascontiguousarray(v, np.float32) for k, v in files.items()}


def write_model(path, name, ltype, params, in_shape, batch):
    model = {"format": "strata-model", "version": 1,
             "network": {"name": "xwn_parity"},
             "layers": [
                 {"name": "data", "type": "input", "params": {"dims": list(in_shape), "batch": batch}},
                 {"name": name, "type": ltype, "params": params, "inputs": ["data.0"]},
                 {"name": "out", "type": "output", "inputs": [name + ".0"]}]}
    with open(path, "w") as f:
        json.dump(model, f, indent=1)


# ---- the transform, re-implemented in float32 ---------------------------

def slices(m):
    """A part's weights as Strata reads them, [A][B][taps]: (O, I/g) slices
    for a convolution, (I, O/g) for a transposed one; and whether the output
    index is B (transposed)."""
    w = m.weight.detach().numpy().astype("float32")
    a, b = w.shape[:2]
    return w.reshape(a, b, -1), bool(m.opt.transpose)


def torch_magnitudes(m):
    """The slice magnitudes and pruning edges the package's torch transform
    computes, with its own tensor views (so torch reduces in the same order),
    returned in [A][B] and per output index."""
    import torch
    w = m.weight.detach()
    nd = w.dim()
    # (O, I, *k) or (I, O, *k) -> (*k, I, O) / (*k, O, I), as the package does.
    x = torch.permute(w, (2, 3, 1, 0) if nd == 4 else (2, 1, 0))
    if m.opt.transpose:
        x = torch.permute(x, (0, 1, 3, 2) if nd == 4 else (0, 2, 1))
    mag_io = torch.mean(torch.abs(x.type(torch.float32)), dim=list(range(nd - 2)))  # (in, out)
    edge = torch.mean(mag_io, dim=0)[None, :] * m.opt.prun_weight  # (1, out)
    mag_io, edge = mag_io.numpy(), edge.numpy()[0]
    # Back to [A][B]: A is the output for a convolution, the input for a transposed one.
    return (mag_io if m.opt.transpose else mag_io.T), edge


def sequential_magnitudes(w, transposed, prun_weight):
    """Strata's arithmetic: sequential float32 sums in tap order, then the
    division; edges from sequential sums over the input index."""
    import numpy as np
    f32 = np.float32
    s = np.zeros(w.shape[:2], f32)
    for t in range(w.shape[2]):
        s = (s + np.abs(w[:, :, t])).astype(f32)
    mag = (s / f32(w.shape[2])).astype(f32)
    per_out = mag if transposed else mag.T  # [in][out]
    e = np.zeros(per_out.shape[1], f32)
    for i in range(per_out.shape[0]):
        e = (e + per_out[i]).astype(f32)
    edge = ((e / f32(per_out.shape[0])).astype(f32) * f32(prun_weight)).astype(f32)
    return mag, edge


def transform(w, transposed, opt, mag, edge):
    """The XWN transform and pruning of [A][B][taps] weights given the
    magnitudes [A][B] and edges per output index, in float32. Returns the
    weights, the level index of every weight (-1 without transform) and the
    keep mask [A][B]."""
    import numpy as np
    f32 = np.float32
    sign = np.where(w >= 0, f32(1), f32(-1))
    m = mag[:, :, None]
    if opt.use_pruning:
        keep = (~(mag < (edge[None, :] if transposed else edge[:, None]))).astype(f32)
    else:
        keep = np.ones(mag.shape, f32)
    level = np.full(w.shape, -1, np.int64)
    if not opt.use_transform or opt.bit < 1:
        y = w
    elif opt.bit == 1:
        y = (sign * m).astype(f32)
        level[...] = 0
    else:
        n = 1 << (opt.bit - 1)
        ms = f32(float(opt.max_scale))
        c = np.stack([(f32(ms * f32(0.5 ** k)) * m).astype(f32) for k in range(n)], axis=-1)
        d = np.abs(np.abs(w)[..., None] - c).astype(f32)
        level = np.argmin(d, axis=-1)  # the first minimum: ties to the larger level
        y = (np.take_along_axis(c, level[..., None], axis=-1)[..., 0] * sign).astype(f32)
    return (y * keep[:, :, None]).astype(f32), level, keep


def package_numpy_weights(m):
    """The package's numpy Optimization on the part's weights, brought to
    its (taps, in, out) layout as a contiguous array (its documented input),
    and back to [A][B][taps]."""
    import numpy as np
    _, _, optimization = import_reference()
    w = m.weight.detach().numpy().astype(np.float32)
    nd = w.ndim
    fwd = (2, 3, 1, 0) if nd == 4 else (2, 1, 0)
    back = (3, 2, 0, 1) if nd == 4 else (2, 1, 0)
    x = np.ascontiguousarray(np.transpose(w, fwd))
    o = m.opt
    opt = optimization.Optimization(use_transform=o.use_transform, bit=o.bit, max_scale=float(o.max_scale),
                                    use_pruning=o.use_pruning, prun_weight=o.prun_weight,
                                    transpose=o.transpose, shape=x.shape)
    y = np.transpose(opt.optimize(x), back)
    return np.ascontiguousarray(y, np.float32).reshape(w.shape[0], w.shape[1], -1)


def weight_report(layer):
    """Checks the transform of every part; returns a dict of counts and the
    sequential-sum weights of every part (torch layout)."""
    import numpy as np
    r = {"slices": 0, "pruned": 0, "mag_ulp": 0, "flips": 0, "bad": [], "seq": []}
    for m in xwn_parts(layer):
        w, transposed = slices(m)
        opt = m.opt
        t_mag, t_edge = torch_magnitudes(m)
        s_mag, s_edge = sequential_magnitudes(w, transposed, opt.prun_weight)
        t_w, t_lv, t_keep = transform(w, transposed, opt, t_mag, t_edge)
        s_w, s_lv, s_keep = transform(w, transposed, opt, s_mag, s_edge)
        pkg = m.opt(m.weight).detach().numpy().astype(np.float32).reshape(w.shape)
        if not np.array_equal(pkg, t_w):
            r["bad"].append("the re-implementation with torch's magnitudes differs from the package's torch "
                            "weights in %d of %d" % (int((pkg != t_w).sum()), pkg.size))
        npw = package_numpy_weights(m)
        if not np.array_equal(npw, s_w):
            r["bad"].append("the re-implementation with sequential sums differs from the package's numpy "
                            "Optimization in %d of %d weights" % (int((npw != s_w).sum()), npw.size))
        r["slices"] += s_mag.size
        r["pruned"] += int((s_keep == 0).sum())
        r["mag_ulp"] += int((t_mag != s_mag).sum())
        r["flips"] += int(((t_lv != s_lv) & (s_keep[:, :, None] > 0)).sum()) + \
            int((t_keep != s_keep).sum()) * w.shape[2]
        r["seq"].append(s_w.reshape(m.weight.shape))
    return r


class _Fixed:
    """Stands in for a part's `opt`: returns the given weights."""

    def __init__(self, w):
        import torch
        self.w = torch.from_numpy(w)

    def __call__(self, _):
        return self.w


def forward(layer, x, weights=None):
    """The package layer's forward(); with weights, every part convolves
    with the given (already transformed) weights instead of its own."""
    import torch
    parts = xwn_parts(layer) if weights is not None else []
    # An instance attribute shadows the registered submodule `opt` until
    # it is deleted again.
    for m, w in zip(parts, weights or []):
        m.__dict__["opt"] = _Fixed(w)
    try:
        with torch.no_grad():
            return layer(torch.from_numpy(x)).numpy()
    finally:
        for m in parts:
            del m.__dict__["opt"]


def agreement(a, b):
    """(agrees, max |a-b|, max |a-b| / max |b|) under the FP32 rule."""
    import numpy as np
    if a.shape != b.shape:
        return False, float("inf"), float("inf")
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    big = float(np.max(np.abs(b64))) if b.size else 0.0
    err = np.abs(a64 - b64)
    ok = bool(np.all(err <= RTOL * big + RTOL * np.abs(b64))) and bool(np.all(np.isfinite(a64)))
    emax = float(err.max()) if err.size else 0.0
    return ok, emax, emax / big if big > 0 else emax


# ---- running Strata -----------------------------------------------------

def run_strata(strata, folder, model, x):
    import numpy as np
    np.save(os.path.join(folder, "x.npy"), x)
    out = os.path.join(folder, "y.npy")
    if os.path.exists(out):
        os.remove(out)
    p = subprocess.run([strata, "run", model, "--weights", os.path.join(folder, "weights"),
                        "--input", "data=" + os.path.join(folder, "x.npy"), "--output", "out=" + out,
                        "--no-report"], capture_output=True, text=True)
    if p.returncode != 0:
        return None, "strata run exited %d: %s" % (p.returncode, (p.stderr or p.stdout).strip()[:300])
    return np.load(out), None


def prepare(workdir, name, kind, args, in_shape, batch, seed):
    import numpy as np
    folder = os.path.join(workdir, name)
    os.makedirs(os.path.join(folder, "weights"), exist_ok=True)
    layer = build(kind, args, seed)
    lname = "casc" if kind.startswith("cascade") else "conv"
    ltype, params, files = strata_files(kind, args, layer)
    rng = np.random.default_rng(seed + 2)
    x = rng.standard_normal((batch,) + tuple(in_shape)).astype(np.float32)
    return folder, layer, lname, ltype, params, files, x


def save_case(folder, lname, ltype, params, files, in_shape, batch):
    import numpy as np
    wdir = os.path.join(folder, "weights")
    for f in os.listdir(wdir):
        os.remove(os.path.join(wdir, f))
    for suffix, arr in files.items():
        np.save(os.path.join(wdir, "%s_%s.npy" % (lname, suffix)), arr)
    model = os.path.join(folder, "model.strata.json")
    write_model(model, lname, ltype, params, in_shape, batch)
    return model


def summary(args):
    keys = [k for k in ("kernel_size", "stride", "padding", "output_padding", "dilation", "groups", "bias",
                        "mid_channels", "channel_ratio", "bit", "max_scale", "prun_weight", "transform",
                        "pruning") if k in args]
    return " ".join("%s=%s" % (k, args[k]) for k in keys)


def run_cases(strata, workdir, results):
    import numpy as np
    import warnings

    import torch
    torch.set_num_threads(1)
    # torch's note that padding='same' with an even kernel copies the input.
    warnings.filterwarnings("ignore", message="Using padding='same'")
    rows, lines = [], []
    all_ok = True
    t0 = time.time()
    print("reference: ddesignerapi %s (PyTorch API), torch %s from %s, numpy %s" % (
        package_version(), torch.__version__, os.path.dirname(torch.__file__), np.__version__))
    print("rule: |strata - ref| <= atol + %g |ref|, atol = %g max|ref|" % (RTOL, RTOL))
    cases = conv_cases()
    keep_for_selfcheck = {}
    for seed, (name, kind, args, in_shape, batch) in enumerate(cases, start=100):
        folder, layer, lname, ltype, params, files, x = prepare(workdir, name, kind, args, in_shape, batch,
                                                                seed * 7)
        model = save_case(folder, lname, ltype, params, files, in_shape, batch)
        ref = forward(layer, x)
        wr = weight_report(layer)
        plain = forward(layer, x, [m.weight.detach().numpy() for m in xwn_parts(layer)])
        _, _, effect = agreement(ref, plain)
        got, err = run_strata(strata, folder, model, x)
        status, why, note = "ok", "", ""
        if got is None:
            status, why = "FAIL", err
            emax = erel = float("nan")
        else:
            ok, emax, erel = agreement(got, ref)
            if not ok and wr["flips"] > 0 and not wr["bad"]:
                # Only a choice torch's reduction order flipped may explain it.
                seq_ref = forward(layer, x, wr["seq"])
                ok2, emax2, erel2 = agreement(got, seq_ref)
                if ok2:
                    note = "flip: agrees with the package's conv on sequential-sum weights (%.2e)" % erel2
                else:
                    status, why = "FAIL", "outputs differ (%.3e of max), also from the sequential-sum " \
                        "reference (%.3e)" % (erel, erel2)
            elif not ok:
                status, why = "FAIL", "outputs differ: max |a-b| %.3e, %.3e of max|ref| (shapes %s, %s)" % (
                    emax, erel, got.shape, ref.shape)
        if wr["bad"]:
            status = "FAIL"
            why = "; ".join(wr["bad"] + ([why] if why else []))
        if status != "ok":
            all_ok = False
        rows.append((name, "x".join(str(d) for d in (batch,) + tuple(in_shape)), wr["slices"], wr["pruned"],
                     wr["mag_ulp"], wr["flips"], emax, erel, effect, status + (" *" if note else "")))
        lines.append("%s\t%s\t%s" % (name, status, why or note or summary(args)))
        if why:
            print("%s: %s" % (name, why))
        if note:
            print("%s: %s" % (name, note))
        keep_for_selfcheck[name] = (folder, layer, lname, ltype, params, files, x, ref, in_shape, batch)

    # ---- self-checks: each must be seen as a mismatch ----
    checks = []
    # 1. One weight negated (the largest) in the file Strata reads.
    folder, layer, lname, ltype, params, files, x, ref, in_shape, batch = keep_for_selfcheck["conv2d_bit4"]
    bad = dict(files)
    w = bad["weights"].copy()
    flat = np.argmax(np.abs(w))
    w.flat[flat] = -w.flat[flat]
    bad["weights"] = w
    checks.append(("self_negated_weight", "one weight negated in conv_weights.npy", folder, lname, ltype, params,
                   bad, x, ref, in_shape, batch))
    # 2. The transform off on Strata's side only.
    p2 = dict(params, use_transform=False)
    checks.append(("self_transform_off", "use_transform false in Strata's model only", folder, lname, ltype, p2,
                   files, x, ref, in_shape, batch))
    # 3. A cascade's stage files 1 and 2 swapped (same shapes).
    folder, layer, lname, ltype, params, files, x, ref, in_shape, batch = \
        keep_for_selfcheck["cascade2d_k7_ratio0.75"]
    sw = dict(files, stage1_weights=files["stage2_weights"], stage2_weights=files["stage1_weights"])
    checks.append(("self_stages_swapped", "casc_stage1/2_weights.npy swapped", folder, lname, ltype, params, sw,
                   x, ref, in_shape, batch))
    for name, what, folder, lname, ltype, params, fl, x, ref, in_shape, batch in checks:
        sfolder = folder + "-" + name
        os.makedirs(os.path.join(sfolder, "weights"), exist_ok=True)
        model = save_case(sfolder, lname, ltype, params, fl, in_shape, batch)
        got, err = run_strata(strata, sfolder, model, x)
        if got is None:
            status, why = "FAIL", err
            emax = erel = float("nan")
        else:
            ok, emax, erel = agreement(got, ref)
            status, why = ("ok", "mismatch seen, as it must be") if not ok else \
                ("FAIL", "the comparison did not see: " + what)
        if status != "ok":
            all_ok = False
            print("%s: %s" % (name, why))
        rows.append((name, "-", "-", "-", "-", "-", emax, erel, float("nan"), status + " (must differ)"))
        lines.append("%s\t%s\t%s: %s" % (name, status, what, why))

    print()
    head = ("case", "input", "slices", "pruned", "mag ulp", "flips", "max abs err", "err/max", "xwn effect",
            "result")
    fmt = "%-30s %-10s %6s %6s %7s %5s %11s %9s %10s  %s"
    print(fmt % head)
    for r in rows:
        print(fmt % (r[0], r[1], r[2], r[3], r[4], r[5], "%.2e" % r[6], "%.2e" % r[7],
                     "-" if r[8] != r[8] else "%.2e" % r[8], r[9]))
    print()
    print("slices: (input, output) kernel slices of all parts; pruned: of them, zeroed (Strata's arithmetic).")
    print("mag ulp: slices whose mean magnitude torch's reduction order rounds differently from a sequential")
    print("sum. flips: weights whose level or pruning mask differs between the two magnitudes. err/max: max")
    print("|strata - ref| / max |ref|. xwn effect: how far the package's output moves with XWN off, so that")
    print("a case cannot pass by ignoring the transform. ok *: differs from the torch layer only by the flips,")
    print("and agrees with the package's own convolution run on the sequential-sum weights.")
    n_ok = sum(1 for line in lines if line.split("\t")[1] == "ok")
    print("%d of %d cases agree (%.1f s)" % (n_ok, len(lines), time.time() - t0))
    with open(results, "w") as f:
        f.write("\n".join(lines) + "\n")
    return 0 if all_ok else 1


def main(argv):
    if len(argv) >= 2 and argv[1] == "probe":
        try:
            import_reference()
        except Exception as e:  # any import failure is a reason to skip
            print("%s: %s" % (type(e).__name__, e))
            return 1
        return 0
    if len(argv) == 5 and argv[1] == "run":
        return run_cases(argv[2], argv[3], argv[4])
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
