#!/usr/bin/python3
"""Writes the reference cases of the convolution, pooling, normalisation and
dense layers into tests/reference/nn/ (the unit tests in
tests/unit/test-k-nn.c run every case through the CPU implementations).

Each case is a folder tests/reference/nn/<case>/ holding
  model.strata.json    input layer(s), the layer under test, output layer "out"
  weights/<layer>_<weight>.npy   as the layer's reshape declares them
  input_<input layer>.npy        what each input layer is fed
  expected_out.npy     what reaches the output layer

The expected outputs come from ONNX Runtime running a one-node ONNX model of
the same operation (opset 13; AveragePool with dilations needs opset 19).
Every one is also computed here with plain numpy in float64 by the Strata
layer's own definition, and the script stops when the two disagree beyond
the FP32 rule of ARCHITECTURE.md, so neither reference is taken on trust.

To regenerate (Debian's numpy and onnx, onnxruntime from PyPI):

  /usr/bin/python3 -m venv --system-site-packages /tmp/venv-nn
  /tmp/venv-nn/bin/pip install onnxruntime
  /tmp/venv-nn/bin/python tests/reference/make_nn.py [--strata ./strata]

With --strata the script also runs `strata check` on every model it writes.
The data are seeded per case, so a rerun writes the same files unless the
case list or a reference changes. Files stay small (a few KB each).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import zlib

import numpy as np
import onnx
from onnx import TensorProto, helper

try:
    import onnxruntime as ort
except ImportError:
    sys.exit("make_nn.py: onnxruntime is missing; see the top of this script for the venv")

HERE = os.path.dirname(os.path.abspath(__file__))
OUT_DIR = os.path.join(HERE, "nn")
FLT_MAX = float(np.finfo(np.float32).max)

ONNX_TYPES = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.int32): TensorProto.INT32,
              np.dtype(np.int64): TensorProto.INT64}
STRATA_DTYPES = {np.dtype(np.float32): "float32", np.dtype(np.int32): "int32",
                 np.dtype(np.int64): "int64"}


# ---- small helpers ----

def rng_for(name):
    """A generator seeded by the case name, so cases do not shift each other."""
    return np.random.default_rng(zlib.crc32(name.encode()))


def uniform(rng, shape, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, size=shape).astype(np.float32)


def per_axis(value, n):
    """A parameter given as one value or one per axis, as a list of n."""
    if isinstance(value, int):
        return [value] * n
    return list(value) if len(value) == n else list(value) * n


def explicit_pads(pads, n):
    """Strata's pads (1, n or 2n values) as ONNX begins + ends."""
    if isinstance(pads, int):
        pads = [pads]
    if len(pads) == 2 * n:
        return list(pads[:n]), list(pads[n:])
    p = per_axis(pads, n)
    return p, list(p)


def allclose(a, b, rtol=1e-5):
    """ARCHITECTURE.md's agreement rule, with b as the reference."""
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    if a.shape != b.shape:
        return False
    if b.size == 0:
        return True
    atol = rtol * np.max(np.abs(b))
    return bool(np.all(np.abs(a - b) <= atol + rtol * np.abs(b)))


def window_geometry(sizes, kernel, stride, dilation, padding, pads, ceil_mode=False):
    """Pads and output sizes of a convolution or pooling, by std-conv.c's rule."""
    n = len(sizes)
    kernel, stride, dilation = per_axis(kernel, n), per_axis(stride, n), per_axis(dilation, n)
    begin, end, out = [0] * n, [0] * n, [0] * n
    if padding == "explicit":
        begin, end = explicit_pads(pads, n)
    for i in range(n):
        extent = (kernel[i] - 1) * dilation[i] + 1
        if padding in ("same", "same_lower"):
            out[i] = -(-sizes[i] // stride[i])
            total = max((out[i] - 1) * stride[i] + extent - sizes[i], 0)
            smaller, larger = total // 2, total - total // 2
            begin[i], end[i] = (smaller, larger) if padding == "same" else (larger, smaller)
            continue
        span = sizes[i] + begin[i] + end[i] - extent
        out[i] = span // stride[i] + 1
        if ceil_mode and span % stride[i]:
            out[i] += 1
            if (out[i] - 1) * stride[i] >= sizes[i] + begin[i]:
                out[i] -= 1
    return kernel, stride, dilation, begin, end, out


def deconv_geometry(sizes, kernel, stride, dilation, padding, pads, output_padding):
    """Crops and output sizes of a transposed convolution, by std-conv.c's rule;
    the same modes crop as a convolution pads (truncating division, as C)."""
    n = len(sizes)
    kernel, stride, dilation = per_axis(kernel, n), per_axis(stride, n), per_axis(dilation, n)
    output_padding = per_axis(output_padding, n)
    begin, end, out = [0] * n, [0] * n, [0] * n
    if padding == "explicit":
        begin, end = explicit_pads(pads, n)
    for i in range(n):
        full = stride[i] * (sizes[i] - 1) + output_padding[i] + (kernel[i] - 1) * dilation[i] + 1
        if padding in ("same", "same_lower"):
            out[i] = sizes[i] * stride[i]
            total = full - out[i]
            smaller = int(total / 2)
            larger = total - smaller
            begin[i], end[i] = (smaller, larger) if padding == "same" else (larger, smaller)
        else:
            out[i] = full - begin[i] - end[i]
    return kernel, stride, dilation, output_padding, begin, end, out


def taps(kernel):
    return np.ndindex(*kernel)


def tap_slices(tap, dilation, stride, out):
    return tuple(slice(tap[i] * dilation[i], tap[i] * dilation[i] + (out[i] - 1) * stride[i] + 1, stride[i])
                 for i in range(len(out)))


# ---- numpy references, in float64, by the Strata layers' definitions ----

def np_conv(x, w, b, stride, dilation, begin, end, out, groups):
    n, c = x.shape[:2]
    sp = x.ndim - 2
    xp = np.pad(x.astype(np.float64), [(0, 0), (0, 0)] + list(zip(begin, end)))
    # Room for windows that the output sizes reach past the padded end.
    need = [(out[i] - 1) * stride[i] + (w.shape[2 + i] - 1) * dilation[i] + 1 for i in range(sp)]
    xp = np.pad(xp, [(0, 0), (0, 0)] + [(0, max(0, need[i] - xp.shape[2 + i])) for i in range(sp)])
    oc = w.shape[0]
    cg, ocg = c // groups, oc // groups
    y = np.zeros((n, oc) + tuple(out))
    for tap in taps(w.shape[2:]):
        patch = xp[(slice(None), slice(None)) + tap_slices(tap, dilation, stride, out)]
        for g in range(groups):
            wg = w[(slice(g * ocg, (g + 1) * ocg), slice(None)) + tap].astype(np.float64)
            y[:, g * ocg:(g + 1) * ocg] += np.einsum("oc,nc...->no...", wg, patch[:, g * cg:(g + 1) * cg])
    if b is not None:
        y += b.astype(np.float64).reshape((1, -1) + (1,) * sp)
    return y


def np_deconv(x, w, b, stride, dilation, output_padding, begin, out, groups):
    n, c = x.shape[:2]
    sp = x.ndim - 2
    kernel = w.shape[2:]
    ocg = w.shape[1]
    oc, cg = ocg * groups, c // groups
    full = [stride[i] * (x.shape[2 + i] - 1) + output_padding[i] + (kernel[i] - 1) * dilation[i] + 1
            for i in range(sp)]
    # The full output, with room on both sides for a negative crop.
    lead = [max(0, -begin[i]) for i in range(sp)]
    size = [lead[i] + max(full[i], begin[i] + out[i]) for i in range(sp)]
    y = np.zeros((n, oc) + tuple(size))
    for tap in taps(kernel):
        where = tuple(slice(lead[i] + tap[i] * dilation[i],
                            lead[i] + tap[i] * dilation[i] + (x.shape[2 + i] - 1) * stride[i] + 1, stride[i])
                      for i in range(sp))
        for g in range(groups):
            wg = w[(slice(g * cg, (g + 1) * cg), slice(None)) + tap].astype(np.float64)
            y[(slice(None), slice(g * ocg, (g + 1) * ocg)) + where] += np.einsum(
                "co,nc...->no...", wg, x[:, g * cg:(g + 1) * cg].astype(np.float64))
    crop = tuple(slice(lead[i] + begin[i], lead[i] + begin[i] + out[i]) for i in range(sp))
    y = y[(slice(None), slice(None)) + crop]
    if b is not None:
        y = y + b.astype(np.float64).reshape((1, -1) + (1,) * sp)
    return y


def np_pool(x, mode, kernel, stride, dilation, begin, end, out, count_include_pad):
    sp = x.ndim - 2
    need = [(out[i] - 1) * stride[i] + (kernel[i] - 1) * dilation[i] + 1 for i in range(sp)]
    after = [max(0, need[i] - begin[i] - x.shape[2 + i]) for i in range(sp)]
    xp = np.pad(x.astype(np.float64), [(0, 0), (0, 0)] + list(zip(begin, after)), constant_values=np.nan)
    # 1 where a position lies in the padded input [-begin, in + end), 0 past it.
    inside = np.zeros(xp.shape[2:])
    inside[tuple(slice(0, begin[i] + x.shape[2 + i] + end[i]) for i in range(sp))] = 1
    values, counted = [], []
    for tap in taps(kernel):
        s = tap_slices(tap, dilation, stride, out)
        values.append(xp[(slice(None), slice(None)) + s])
        counted.append(inside[s])
    values = np.stack(values)
    valid = ~np.isnan(values)
    if mode == "max":
        y = np.where(valid, values, -np.inf).max(axis=0)
        return np.where(valid.any(axis=0), y, -FLT_MAX)
    total = np.where(valid, values, 0).sum(axis=0)
    count = np.stack(counted).sum(axis=0) if count_include_pad else valid.sum(axis=0)
    return np.where(count > 0, total / np.maximum(count, 1), 0)


# ---- ONNX Runtime ----

def run_onnx(op, inputs, initializers, attrs, opset=13, output_type=TensorProto.FLOAT):
    """Runs one node; inputs and initializers are (name, array) lists in the
    node's input order."""
    names = [n for n, _ in inputs] + [n for n, _ in initializers]
    node = helper.make_node(op, names, ["y"], **attrs)
    graph = helper.make_graph(
        [node], "case",
        [helper.make_tensor_value_info(n, ONNX_TYPES[a.dtype], list(a.shape)) for n, a in inputs],
        [helper.make_tensor_value_info("y", output_type, None)],
        [helper.make_tensor(n, ONNX_TYPES[a.dtype], list(a.shape), a.flatten().tolist())
         for n, a in initializers])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8 if opset <= 17 else 9
    options = ort.SessionOptions()
    # ONNX's shape inference knows no ceil_mode last-window rule; the kernels do.
    options.log_severity_level = 3
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return session.run(None, {n: a for n, a in inputs})[0]


# ---- writing a case ----

CASES = []


def case(fn):
    CASES.append(fn)
    return fn


def write_case(name, layer_type, layer_name, params, inputs, weights, expected, numpy_expected,
               source, exact=False):
    """inputs: (layer name, array) per input terminal; weights: (weight type,
    array) in declaration order."""
    if exact:
        ok = np.array_equal(expected, numpy_expected)
    else:
        ok = allclose(expected, numpy_expected)
    if not ok:
        diff = np.max(np.abs(np.asarray(expected, np.float64) - numpy_expected)) \
            if np.shape(expected) == np.shape(numpy_expected) else "shape"
        sys.exit(f"make_nn.py: {name}: {source} and numpy disagree "
                 f"({np.shape(expected)} vs {np.shape(numpy_expected)}, max diff {diff})")
    folder = os.path.join(OUT_DIR, name)
    os.makedirs(folder)
    if weights:
        os.makedirs(os.path.join(folder, "weights"))
    layers = []
    for i, (input_name, array) in enumerate(inputs):
        layers.append({"name": input_name, "type": "input",
                       "params": {"dims": list(array.shape[1:]), "batch": array.shape[0],
                                  "dtype": STRATA_DTYPES[array.dtype]},
                       "pos": [i * 12, 0]})
        np.save(os.path.join(folder, f"input_{input_name}.npy"), array)
    layers.append({"name": layer_name, "type": layer_type, "params": params,
                   "inputs": [f"{n}.0" for n, _ in inputs], "pos": [0, 5]})
    layers.append({"name": "out", "type": "output", "inputs": [f"{layer_name}.0"], "pos": [0, 10]})
    for weight, array in weights:
        np.save(os.path.join(folder, "weights", f"{layer_name}_{weight}.npy"), array.astype(np.float32))
    model = {"format": "strata-model", "version": 1,
             "network": {"name": name, "version": "1.0",
                         "description": f"Reference case for {layer_type}: expected output from {source}, "
                                        "checked against numpy. Written by tests/reference/make_nn.py.",
                         "tensor_format": "fp32-nchw", "weights": "weights" if weights else ""},
             "layers": layers}
    with open(os.path.join(folder, "model.strata.json"), "w") as f:
        json.dump(model, f, indent=2)
        f.write("\n")
    np.save(os.path.join(folder, "expected_out.npy"), np.ascontiguousarray(expected))


# ---- convolution ----

def conv_case(name, shape, num_output, kernel, stride=1, padding="explicit", pads=0, dilation=1, groups=1,
              bias=True):
    rng = rng_for(name)
    sp = len(shape) - 2
    x = uniform(rng, shape)
    k, s, d, begin, end, out = window_geometry(shape[2:], kernel, stride, dilation, padding, pads)
    w = uniform(rng, (num_output, shape[1] // groups) + tuple(k))
    b = uniform(rng, (num_output,)) if bias else None
    attrs = {"kernel_shape": k, "strides": s, "dilations": d, "group": groups}
    source = "ONNX Runtime Conv"
    if padding == "explicit":
        attrs["pads"] = begin + end
    elif padding != "valid" and d != [1] * sp:
        # ONNX Runtime refuses auto_pad with dilation: it gets the pads made explicit.
        attrs["pads"] = begin + end
        source += " (the same-mode pads made explicit)"
    else:
        attrs["auto_pad"] = {"same": "SAME_UPPER", "same_lower": "SAME_LOWER", "valid": "VALID"}[padding]
    inits = [("w", w)] + ([("b", b)] if bias else [])
    y = run_onnx("Conv", [("x", x)], inits, attrs)
    ref = np_conv(x, w, b, s, d, begin, end, out, groups)
    params = {"num_output": num_output, "kernel": per_axis(kernel, sp), "stride": per_axis(stride, sp),
              "padding": padding, "dilation": per_axis(dilation, sp), "groups": groups, "bias": bias}
    if padding == "explicit":
        params["pads"] = [pads] if isinstance(pads, int) else list(pads)
    weights = [("weights", w)] + ([("bias", b)] if bias else [])
    write_case(name, "convolution", "conv", params, [("data", x)], weights, y, ref, source)


@case
def convolutions():
    conv_case("conv2d_basic", (1, 3, 9, 9), 4, 3, pads=1)
    conv_case("conv2d_stride2_asymmetric_pads", (2, 4, 10, 11), 6, [3, 2], stride=[2, 1], pads=[1, 0, 2, 1])
    conv_case("conv2d_same", (1, 3, 8, 7), 5, 3, stride=2, padding="same")
    conv_case("conv2d_same_lower", (1, 2, 7, 8), 3, [4, 3], stride=2, padding="same_lower")
    conv_case("conv2d_same_dilated", (2, 3, 9, 8), 4, 3, dilation=2, padding="same", bias=False)
    conv_case("conv2d_valid_dilated", (1, 3, 11, 10), 4, 3, dilation=[2, 3], padding="valid")
    conv_case("conv2d_groups", (1, 6, 8, 8), 9, 3, pads=1, groups=3)
    conv_case("conv2d_depthwise_stride2", (2, 5, 9, 9), 5, 3, stride=2, pads=1, groups=5)
    conv_case("conv2d_depthwise_multiplier", (1, 3, 9, 10), 6, 5, pads=[2, 1], dilation=2, groups=3)
    conv_case("conv2d_pointwise", (2, 8, 7, 7), 6, 1)
    conv_case("conv2d_pointwise_stride2", (1, 8, 7, 6), 5, 1, stride=2)
    conv_case("conv2d_one_channel", (3, 1, 12, 11), 4, 3, pads=1)
    conv_case("conv2d_wide", (1, 16, 13, 12), 32, 3, pads=1, stride=[1, 2])
    conv_case("conv2d_kernel_larger_than_stride", (1, 2, 6, 6), 3, 2, stride=3, pads=[0, 0, 1, 1])
    conv_case("conv1d", (2, 3, 17), 4, 5, stride=2, pads=[2, 1])
    conv_case("conv1d_same_dilated", (1, 4, 13), 2, 3, dilation=3, padding="same", groups=2)
    conv_case("conv3d", (1, 2, 5, 6, 7), 3, 3, stride=[1, 2, 2], pads=1)
    conv_case("conv3d_groups_asymmetric", (2, 4, 4, 6, 5), 6, [2, 3, 3], pads=[0, 1, 1, 1, 0, 2],
              dilation=[1, 2, 1], groups=2)


# ---- deconvolution ----

def deconv_case(name, shape, num_output, kernel, stride=1, padding="explicit", pads=0, output_padding=0,
                dilation=1, groups=1, bias=True):
    rng = rng_for(name)
    sp = len(shape) - 2
    x = uniform(rng, shape)
    k, s, d, op, begin, end, out = deconv_geometry(shape[2:], kernel, stride, dilation, padding, pads,
                                                   output_padding)
    w = uniform(rng, (shape[1], num_output // groups) + tuple(k))
    b = uniform(rng, (num_output,)) if bias else None
    attrs = {"kernel_shape": k, "strides": s, "dilations": d, "group": groups, "output_padding": op}
    if padding == "explicit":
        attrs["pads"] = begin + end
    else:
        attrs["auto_pad"] = {"same": "SAME_UPPER", "same_lower": "SAME_LOWER", "valid": "VALID"}[padding]
    inits = [("w", w)] + ([("b", b)] if bias else [])
    y = run_onnx("ConvTranspose", [("x", x)], inits, attrs)
    ref = np_deconv(x, w, b, s, d, op, begin, out, groups)
    params = {"num_output": num_output, "kernel": per_axis(kernel, sp), "stride": per_axis(stride, sp),
              "padding": padding, "output_padding": per_axis(output_padding, sp),
              "dilation": per_axis(dilation, sp), "groups": groups, "bias": bias}
    if padding == "explicit":
        params["pads"] = [pads] if isinstance(pads, int) else list(pads)
    weights = [("weights", w)] + ([("bias", b)] if bias else [])
    write_case(name, "deconvolution", "deconv", params, [("data", x)], weights, y, ref,
               "ONNX Runtime ConvTranspose")


@case
def deconvolutions():
    deconv_case("deconv2d_basic", (1, 3, 5, 5), 4, 3, pads=1)
    deconv_case("deconv2d_stride2_output_padding", (2, 4, 4, 5), 3, 3, stride=2, pads=[1, 1, 0, 0],
                output_padding=1)
    deconv_case("deconv2d_same", (1, 3, 4, 5), 2, 3, stride=2, padding="same")
    deconv_case("deconv2d_same_lower", (1, 3, 5, 4), 2, 3, stride=2, padding="same_lower")
    deconv_case("deconv2d_groups_dilated", (1, 4, 5, 4), 6, 3, stride=2, dilation=2, groups=2,
                output_padding=[1, 0], pads=[1, 0, 0, 2])
    deconv_case("deconv2d_valid_no_bias", (1, 3, 4, 4), 4, 4, stride=2, padding="valid", bias=False)
    deconv_case("deconv2d_depthwise_upsample", (2, 4, 5, 5), 4, 4, stride=2, pads=1, groups=4)
    deconv_case("deconv2d_batch3_asymmetric", (3, 2, 3, 4), 3, [2, 3], stride=[3, 1], pads=[0, 1, 1, 0])
    deconv_case("deconv1d", (2, 3, 7), 2, 4, stride=3, pads=[1, 2], output_padding=2)
    deconv_case("deconv3d", (1, 2, 3, 4, 3), 3, [2, 3, 3], stride=[2, 1, 2], pads=1)


# ---- pooling ----

def pool_case(name, shape, mode, kernel, stride=None, padding="explicit", pads=0, dilation=1, ceil_mode=False,
              count_include_pad=False, offset=0.0):
    rng = rng_for(name)
    sp = len(shape) - 2
    x = uniform(rng, shape) + np.float32(offset)
    stride = kernel if stride is None else stride
    k, s, d, begin, end, out = window_geometry(shape[2:], kernel, stride, dilation, padding, pads, ceil_mode)
    attrs = {"kernel_shape": k, "strides": s, "ceil_mode": int(ceil_mode)}
    opset = 13
    if d != [1] * sp:
        attrs["dilations"] = d
        if mode == "avg":
            opset = 19  # AveragePool has dilations from opset 19
    if padding == "explicit":
        attrs["pads"] = begin + end
    else:
        attrs["auto_pad"] = {"same": "SAME_UPPER", "same_lower": "SAME_LOWER", "valid": "VALID"}[padding]
    if mode == "avg":
        attrs["count_include_pad"] = int(count_include_pad)
    op = "MaxPool" if mode == "max" else "AveragePool"
    y = run_onnx(op, [("x", x)], [], attrs, opset=opset)
    ref = np_pool(x, mode, k, s, d, begin, end, out, count_include_pad)
    params = {"mode": mode, "kernel": per_axis(kernel, sp), "stride": per_axis(stride, sp), "padding": padding,
              "dilation": per_axis(dilation, sp), "ceil_mode": ceil_mode,
              "count_include_pad": count_include_pad}
    if padding == "explicit":
        params["pads"] = [pads] if isinstance(pads, int) else list(pads)
    write_case(name, "pooling", "pool", params, [("data", x)], [], y, ref, f"ONNX Runtime {op} (opset {opset})")


@case
def poolings():
    pool_case("maxpool2d_basic", (1, 3, 8, 8), "max", 2)
    pool_case("maxpool2d_k3s2_pad1", (2, 4, 9, 9), "max", 3, stride=2, pads=1, offset=-2.0)
    pool_case("maxpool2d_ceil", (1, 2, 10, 9), "max", 3, stride=2, ceil_mode=True)
    pool_case("maxpool2d_ceil_drops_last", (1, 2, 5, 8), "max", 2, stride=3, pads=1, ceil_mode=True)
    pool_case("maxpool2d_dilated", (1, 3, 9, 10), "max", 3, stride=1, pads=2, dilation=[2, 1])
    pool_case("maxpool2d_same", (1, 2, 7, 8), "max", 3, stride=2, padding="same", offset=-3.0)
    pool_case("maxpool2d_same_lower", (1, 2, 8, 7), "max", [2, 3], stride=2, padding="same_lower")
    pool_case("avgpool2d_k3s1_pad1", (2, 3, 7, 7), "avg", 3, stride=1, pads=1)
    pool_case("avgpool2d_include_pad", (1, 3, 9, 8), "avg", 3, stride=2, pads=1, count_include_pad=True)
    pool_case("avgpool2d_ceil", (1, 2, 8, 9), "avg", 3, stride=2, pads=1, ceil_mode=True)
    pool_case("avgpool2d_ceil_include_pad", (1, 2, 8, 9), "avg", 3, stride=2, pads=1, ceil_mode=True,
              count_include_pad=True)
    pool_case("avgpool2d_asymmetric_pads", (1, 3, 7, 9), "avg", [2, 3], stride=[1, 2], pads=[0, 1, 1, 2],
              count_include_pad=True)
    pool_case("avgpool2d_same", (2, 2, 7, 6), "avg", 3, stride=2, padding="same")
    pool_case("avgpool2d_dilated", (1, 2, 9, 9), "avg", 2, stride=2, pads=1, dilation=2)
    pool_case("maxpool1d", (2, 3, 15), "max", 3, stride=2, pads=[1, 0])
    pool_case("avgpool1d_ceil", (1, 4, 12), "avg", 4, stride=3, ceil_mode=True)
    pool_case("maxpool3d", (1, 2, 5, 6, 7), "max", [2, 3, 2], stride=[1, 2, 2], pads=[0, 1, 0, 1, 1, 1])
    pool_case("avgpool3d", (2, 2, 4, 5, 6), "avg", 2, stride=2, ceil_mode=True)


# ---- global pooling ----

def global_pool_case(name, shape, mode):
    rng = rng_for(name)
    x = uniform(rng, shape)
    op = "GlobalMaxPool" if mode == "max" else "GlobalAveragePool"
    y = run_onnx(op, [("x", x)], [], {})
    axes = tuple(range(2, len(shape)))
    ref = x.astype(np.float64).max(axis=axes, keepdims=True) if mode == "max" else \
        x.astype(np.float64).mean(axis=axes, keepdims=True)
    write_case(name, "global_pooling", "gpool", {"mode": mode}, [("data", x)], [], y, ref, f"ONNX Runtime {op}")


@case
def global_poolings():
    global_pool_case("global_avgpool2d", (2, 5, 7, 6), "avg")
    global_pool_case("global_maxpool2d", (1, 4, 9, 9), "max")
    global_pool_case("global_avgpool1d", (3, 2, 11), "avg")
    global_pool_case("global_maxpool3d", (1, 3, 3, 4, 5), "max")


# ---- batch and instance normalisation ----

def batch_norm_case(name, shape, epsilon=None):
    rng = rng_for(name)
    c = shape[1]
    x = uniform(rng, shape, -2, 3)
    scale, bias = uniform(rng, (c,), 0.5, 1.5), uniform(rng, (c,))
    mean, variance = uniform(rng, (c,)), uniform(rng, (c,), 0.25, 2.0)
    eps = 1e-5 if epsilon is None else epsilon
    y = run_onnx("BatchNormalization", [("x", x)],
                 [("scale", scale), ("b", bias), ("mean", mean), ("var", variance)], {"epsilon": eps})
    per = (1, -1) + (1,) * (len(shape) - 2)
    ref = (x.astype(np.float64) - mean.reshape(per)) / np.sqrt(variance.astype(np.float64).reshape(per) + eps) \
        * scale.reshape(per) + bias.reshape(per)
    params = {} if epsilon is None else {"epsilon": epsilon}
    write_case(name, "batch_normalization", "bn", params, [("data", x)],
               [("scale", scale), ("bias", bias), ("mean", mean), ("variance", variance)], y, ref,
               "ONNX Runtime BatchNormalization")


def instance_norm_case(name, shape, epsilon=None, offset=0.0):
    rng = rng_for(name)
    c = shape[1]
    x = uniform(rng, shape) * np.float32(2) + np.float32(offset)
    scale, bias = uniform(rng, (c,), 0.5, 1.5), uniform(rng, (c,))
    eps = 1e-5 if epsilon is None else epsilon
    y = run_onnx("InstanceNormalization", [("x", x)], [("scale", scale), ("b", bias)], {"epsilon": eps})
    axes = tuple(range(2, len(shape)))
    x64 = x.astype(np.float64)
    mean = x64.mean(axis=axes, keepdims=True)
    variance = ((x64 - mean) ** 2).mean(axis=axes, keepdims=True)
    per = (1, -1) + (1,) * (len(shape) - 2)
    ref = (x64 - mean) / np.sqrt(variance + eps) * scale.reshape(per) + bias.reshape(per)
    params = {} if epsilon is None else {"epsilon": epsilon}
    write_case(name, "instance_normalization", "inorm", params, [("data", x)],
               [("scale", scale), ("bias", bias)], y, ref, "ONNX Runtime InstanceNormalization")


@case
def normalizations():
    batch_norm_case("batch_norm2d", (2, 5, 6, 7))
    batch_norm_case("batch_norm_nc", (4, 6), epsilon=1e-3)
    batch_norm_case("batch_norm1d", (3, 4, 9))
    batch_norm_case("batch_norm3d", (1, 3, 3, 4, 5), epsilon=0.1)
    instance_norm_case("instance_norm2d", (2, 3, 5, 6))
    instance_norm_case("instance_norm1d_offset", (3, 2, 17), epsilon=1e-3, offset=5.0)
    instance_norm_case("instance_norm3d", (1, 4, 3, 4, 5))


# ---- fully connected and matrix multiply ----

def fc_case(name, shape, num_output, bias=True):
    rng = rng_for(name)
    x = uniform(rng, shape)
    k = int(np.prod(shape[1:]))
    w = uniform(rng, (num_output, k))
    b = uniform(rng, (num_output,)) if bias else None
    flat = x.reshape(shape[0], k)
    inits = [("w", w)] + ([("b", b)] if bias else [])
    y = run_onnx("Gemm", [("x", flat)], inits, {"transB": 1})
    ref = flat.astype(np.float64) @ w.astype(np.float64).T + (0 if b is None else b)
    weights = [("weights", w)] + ([("bias", b)] if bias else [])
    write_case(name, "fully_connected", "fc", {"num_output": num_output, "bias": bias}, [("data", x)], weights,
               y, ref, "ONNX Runtime Gemm over the flattened input")


def matmul_case(name, a_shape, b_shape, dtype=np.float32):
    rng = rng_for(name)
    if dtype == np.float32:
        a, b = uniform(rng, a_shape), uniform(rng, b_shape)
    else:
        a = rng.integers(-50, 50, size=a_shape).astype(dtype)
        b = rng.integers(-50, 50, size=b_shape).astype(dtype)
    out_type = ONNX_TYPES[np.dtype(dtype)]
    y = run_onnx("MatMul", [("a", a), ("b", b)], [], {}, output_type=out_type)
    exact = dtype != np.float32
    ref = np.matmul(a, b) if exact else np.matmul(a.astype(np.float64), b.astype(np.float64))
    write_case(name, "matrix_multiply", "mm", {}, [("a", a), ("b", b)], [], y, ref, "ONNX Runtime MatMul",
               exact=exact)


@case
def dense():
    fc_case("fc_basic", (3, 20), 7)
    fc_case("fc_flattens_image", (2, 3, 4, 5), 10)
    fc_case("fc_single_sample_no_bias", (1, 33), 17, bias=False)
    matmul_case("matmul2d", (5, 7), (7, 3))
    matmul_case("matmul_broadcast_batch", (2, 1, 4, 5), (3, 5, 6))
    matmul_case("matmul_vector_a", (7,), (2, 7, 3))
    matmul_case("matmul_vector_b", (2, 3, 4, 7), (7,))
    matmul_case("matmul_int32", (2, 3, 4), (2, 4, 5), np.int32)
    matmul_case("matmul_int64_broadcast", (3, 4), (2, 4, 2), np.int64)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--strata", help="a strata binary to `check` every model with")
    args = parser.parse_args()
    shutil.rmtree(OUT_DIR, ignore_errors=True)
    os.makedirs(OUT_DIR)
    for fn in CASES:
        fn()
    names = sorted(os.listdir(OUT_DIR))
    if args.strata:
        for n in names:
            model = os.path.join(OUT_DIR, n, "model.strata.json")
            result = subprocess.run([args.strata, "check", model], capture_output=True, text=True)
            if result.returncode != 0 or "0 errors, 0 warnings" not in result.stdout:
                sys.exit(f"make_nn.py: strata check {model}:\n{result.stdout}{result.stderr}")
    size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(OUT_DIR) for f in fs)
    print(f"make_nn.py: {len(names)} cases, {size / 1024:.0f} KiB in {os.path.relpath(OUT_DIR)}")


if __name__ == "__main__":
    main()
