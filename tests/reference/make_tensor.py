#!/usr/bin/env python3
"""Reference fixtures for the tensor, shape and activation layers' CPU kernels.

Writes one folder per case under tests/reference/tensor/<case>/:

  model.strata.json        input layer(s), the layer under test ("layer"),
                           output layer(s); activations are tested as an
                           identity layer with the activation attached
  input_<inputlayer>.npy   what each input layer is fed
  weights/layer_<w>.npy    weights, if any (constant values, prelu slopes)
  expected_<outputlayer>.npy  what each output layer must receive

tests/unit/test-k-tensor.c runs every case through the layer's CPU
implementation and compares (float32 rtol 1e-5, float16 1e-2, integers
exactly). The files are committed, so `make check` needs no Python.

References: ONNX Runtime runs one-node ONNX models (opset 13; 14 for
HardSwish, 18 for Pad, Split and Mish, 19 for Resize, whose
half_pixel_symmetric mode arrived there, 20 for Gelu) and gives the
expectations of resize, pad, slice, softmax, space_to_depth and
depth_to_space; numpy gives the rest (element-wise arithmetic is exact IEEE
arithmetic in both; activations are evaluated in float64, since ONNX
Runtime's own approximations are not the reference). Wherever both can
compute a case the script checks that they agree, and stops if they do not.
python3-onnx 1.12 knows opsets up to 17 only, but writing a node for a
later opset needs no schema, and the models are never passed to its checker. ONNX Runtime's Resize implements
linear only on 2- to 5-D inputs with untouched outer axes and cubic only on
2-D or NCHW images; other resize cases use this script's own numpy version
of the ONNX definition, which is checked against ONNX Runtime on every case
ONNX Runtime does run.

To regenerate (Debian 12: python3-numpy and python3-onnx, onnxruntime from
PyPI in a private venv):

  /usr/bin/python3 -m venv --system-site-packages /tmp/venv-tensor
  /tmp/venv-tensor/bin/pip install onnxruntime
  /tmp/venv-tensor/bin/python tests/reference/make_tensor.py [--strata ./strata]

With --strata, every model is also checked with `strata check`. The random
data is seeded, so a rerun with the same numpy and onnxruntime rewrites the
same files.
"""

import argparse
import json
import math
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

try:
    import onnxruntime as ort
except ImportError:  # pragma: no cover
    sys.exit("onnxruntime is missing: see the top of this script for the venv it needs")

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "tensor")

DTYPE_NAMES = {
    np.dtype(np.float32): "float32",
    np.dtype(np.float16): "float16",
    np.dtype(np.int64): "int64",
    np.dtype(np.int32): "int32",
    np.dtype(np.int8): "int8",
    np.dtype(np.uint8): "uint8",
    np.dtype(np.bool_): "bool",
}

ONNX_TYPES = {
    np.dtype(np.float32): TensorProto.FLOAT,
    np.dtype(np.float16): TensorProto.FLOAT16,
    np.dtype(np.int64): TensorProto.INT64,
    np.dtype(np.int32): TensorProto.INT32,
    np.dtype(np.int8): TensorProto.INT8,
    np.dtype(np.uint8): TensorProto.UINT8,
    np.dtype(np.bool_): TensorProto.BOOL,
}

rng = np.random.default_rng(20240603)
cases = []


def rand(shape, dtype=np.float32, lo=-3.0, hi=3.0):
    """Random data of a shape: uniform floats, or integers in [lo, hi]."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if dtype.kind in "iu":
        return rng.integers(int(lo), int(hi) + 1, size=shape).astype(dtype)
    return rng.uniform(lo, hi, size=shape).astype(dtype)


def allclose(a, b, rtol):
    """ARCHITECTURE.md's agreement: |a - b| <= atol + rtol|b|, atol = rtol max|b|."""
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    if a.shape != b.shape:
        return False
    if b.size == 0:
        return True
    atol = rtol * np.max(np.abs(b))
    return bool(np.all(np.abs(a - b) <= atol + rtol * np.abs(b)))


# ---- ONNX Runtime ----

def ort_run(op, inputs, attrs=None, opset=13, n_outputs=1, out_types=None):
    """Runs one ONNX node. inputs: list of arrays, or None for an omitted
    optional input. Returns the outputs as numpy arrays."""
    names, values, infos = [], {}, []
    for i, a in enumerate(inputs):
        if a is None:
            names.append("")
            continue
        name = "i%d" % i
        names.append(name)
        values[name] = a
        infos.append(helper.make_tensor_value_info(name, ONNX_TYPES[a.dtype], list(a.shape)))
    outs = ["o%d" % i for i in range(n_outputs)]
    # Outputs keep the first input's element type unless out_types says otherwise.
    first = ONNX_TYPES[inputs[0].dtype]
    out_infos = [helper.make_tensor_value_info(o, (out_types or {}).get(i, first), None)
                 for i, o in enumerate(outs)]
    node = helper.make_node(op, names, outs, **(attrs or {}))
    graph = helper.make_graph([node], "g", infos, out_infos)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8  # what onnx 1.12 writes and every onnxruntime reads
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, values)


# ---- cases ----

def case(name, layer, params, inputs, expected, activation=None, weights=None, note=None):
    """Records a case: inputs and expected outputs are lists of arrays."""
    for e in expected:
        assert isinstance(e, np.ndarray) and e.dtype in DTYPE_NAMES, (name, type(e))
    for a in inputs:
        assert a.ndim >= 1 and a.shape[0] >= 1, (name, a.shape)
    cases.append(dict(name=name, layer=layer, params=params, inputs=inputs, expected=expected,
                      activation=activation, weights=weights or {}, note=note))


def jsonable(v):
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.floating,)):
        return float(v)
    return v


def model_json(c):
    layers = []
    for i, a in enumerate(c["inputs"]):
        params = {"dims": list(a.shape[1:]), "batch": int(a.shape[0])}
        if a.dtype != np.float32:
            params["dtype"] = DTYPE_NAMES[a.dtype]
        layers.append({"name": "x%d" % i, "type": "input", "params": params, "pos": [i * 4, 0]})
    layer = {"name": "layer", "type": c["layer"], "params": jsonable(c["params"]),
             "inputs": ["x%d.0" % i for i in range(len(c["inputs"]))], "pos": [0, 6]}
    if c["activation"]:
        layer["activation"] = jsonable(c["activation"])
    layers.append(layer)
    for i in range(len(c["expected"])):
        layers.append({"name": "y%d" % i, "type": "output", "inputs": ["layer.%d" % i],
                       "pos": [i * 4, 12]})
    return {"format": "strata-model", "version": 1,
            "network": {"name": c["name"], "version": "1.0",
                        "description": c["note"] or ("reference case for " + c["layer"])},
            "layers": layers}


def write_all(strata):
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    os.makedirs(OUT)
    names = set()
    for c in cases:
        assert c["name"] not in names, c["name"]
        names.add(c["name"])
        d = os.path.join(OUT, c["name"])
        os.makedirs(d)
        with open(os.path.join(d, "model.strata.json"), "w") as f:
            json.dump(model_json(c), f, indent=1)
            f.write("\n")
        for i, a in enumerate(c["inputs"]):
            np.save(os.path.join(d, "input_x%d.npy" % i), a)
        for i, e in enumerate(c["expected"]):
            np.save(os.path.join(d, "expected_y%d.npy" % i), e)
        if c["weights"]:
            os.makedirs(os.path.join(d, "weights"))
            for w, a in c["weights"].items():
                np.save(os.path.join(d, "weights", "layer_%s.npy" % w), a)
        if strata:
            r = subprocess.run([strata, "check", os.path.join(d, "model.strata.json")],
                               capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit("%s: strata check failed:\n%s%s" % (c["name"], r.stdout, r.stderr))


# ---- element-wise ----

NP_OPS = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
          "max": np.maximum, "min": np.minimum}


def channel_view(v, rank):
    """A per-channel vector ([C], [1,C], [N,C], [1,C,1..]) lined up with axis 1."""
    if v.ndim == 1:
        return v.reshape((1, v.shape[0]) + (1,) * (rank - 2))
    if v.ndim == 2:
        return v.reshape(v.shape + (1,) * (rank - 2))
    return v


def eltwise(name, op, arrays, broadcast="numpy", activation=None):
    views = arrays if broadcast == "numpy" else [arrays[0]] + [channel_view(a, arrays[0].ndim)
                                                               for a in arrays[1:]]
    with np.errstate(over="ignore"):
        acc = views[0]
        for v in views[1:]:
            acc = NP_OPS[op](acc, v)
    acc = np.asarray(acc, dtype=arrays[0].dtype)
    if len(arrays) == 1:
        acc = arrays[0].copy()
    params = {"operation": op}
    if broadcast != "numpy":
        params["broadcast"] = broadcast
    expected = acc
    if activation == "relu":
        expected = np.maximum(acc, 0).astype(acc.dtype)
        # The layer's own output is compared after the test applies the
        # activation, so the expectation includes it.
    # A two-input fold is an ONNX node as well: check ONNX Runtime agrees.
    if len(arrays) == 2 and broadcast == "numpy" and arrays[0].dtype in (np.float32, np.int64, np.int32):
        onnx_op = {"add": "Add", "sub": "Sub", "mul": "Mul", "div": "Div", "max": "Max", "min": "Min"}[op]
        got = ort_run(onnx_op, arrays)[0]
        assert np.array_equal(got, acc) or allclose(got, acc, 1e-6), name
    case(name, "elementwise", params, arrays, [expected],
         activation={"type": activation} if activation else None)


def nonzero(shape, lo=0.5, hi=2.0):
    """Divisors away from zero, of either sign."""
    mag = rand(shape, np.float32, lo, hi)
    sign = np.where(rng.integers(0, 2, size=shape) == 0, -1, 1).astype(np.float32)
    return mag * sign


def elementwise_cases():
    eltwise("eltwise_add_same", "add", [rand((2, 3, 4, 5)), rand((2, 3, 4, 5))])
    eltwise("eltwise_add_one", "add", [rand((2, 3, 4, 5)), rand((1,))])
    eltwise("eltwise_sub_row", "sub", [rand((2, 3, 4, 5)), rand((5,))])
    eltwise("eltwise_sub_row_first", "sub", [rand((5,)), rand((2, 3, 4, 5))])
    eltwise("eltwise_mul_middle", "mul", [rand((2, 3, 1, 5)), rand((3, 4, 1))])
    eltwise("eltwise_div_both", "div", [rand((2, 1, 4)), nonzero((3, 1))])
    eltwise("eltwise_div_same", "div", [rand((3, 7, 5)), nonzero((3, 7, 5))])
    eltwise("eltwise_max_three", "max", [rand((2, 3, 5)), rand((3, 5)), rand((2, 1, 1))])
    eltwise("eltwise_min_four", "min", [rand((1, 4, 1, 3)), rand((2, 1, 5, 1)), rand((3,)), rand((4, 5, 1))])
    eltwise("eltwise_add_odd", "add", [rand((2, 5, 9, 11)), rand((2, 5, 9, 11))])
    eltwise("eltwise_mul_rank5", "mul", [rand((2, 1, 3, 1, 5)), rand((4, 1, 2, 5))])
    eltwise("eltwise_add_single", "add", [rand((3, 4))])
    eltwise("eltwise_add_channel_c", "add", [rand((2, 3, 4, 5)), rand((3,))], "channel")
    eltwise("eltwise_mul_channel_1c", "mul", [rand((2, 3, 4, 5)), rand((1, 3))], "channel")
    eltwise("eltwise_sub_channel_nc", "sub", [rand((2, 3, 4, 5)), rand((2, 3))], "channel")
    eltwise("eltwise_add_channel_1c11", "add", [rand((2, 3, 4, 5)), rand((1, 3, 1, 1))], "channel")
    eltwise("eltwise_div_channel_rank2", "div", [rand((4, 3)), nonzero((3,))], "channel")
    eltwise("eltwise_max_channel_three", "max", [rand((2, 4, 3, 3)), rand((4,)), rand((2, 4))], "channel")
    eltwise("eltwise_min_channel_rank3", "min", [rand((3, 2, 7)), rand((1, 2, 1))], "channel")
    eltwise("eltwise_add_int64", "add", [rand((2, 3, 4), np.int64, -1000, 1000), rand((3, 1), np.int64, -1000, 1000)])
    eltwise("eltwise_sub_int32", "sub", [rand((2, 5), np.int32, -100, 100), rand((5,), np.int32, -100, 100)])
    eltwise("eltwise_mul_int8_wraps", "mul", [rand((3, 6), np.int8, -128, 127), rand((3, 6), np.int8, -128, 127)])
    eltwise("eltwise_add_uint8_wraps", "add", [rand((2, 9), np.uint8, 0, 255), rand((9,), np.uint8, 0, 255)])
    eltwise("eltwise_max_uint8", "max", [rand((4, 4), np.uint8, 0, 255), rand((4, 1), np.uint8, 0, 255)])
    eltwise("eltwise_min_int64_channel", "min", [rand((2, 3, 2), np.int64, -9, 9), rand((3,), np.int64, -9, 9)],
            "channel")
    big = np.array([2**62, -2**62, 2**63 - 1, -2**63, 5], dtype=np.int64)
    eltwise("eltwise_add_int64_wraps", "add", [big.reshape(1, 5), big[::-1].copy().reshape(1, 5)])
    eltwise("eltwise_add_relu", "add", [rand((2, 3, 4)), rand((4,))], activation="relu")


def blend_cases():
    for name, a, b, alpha in [("blend_same", rand((2, 3, 4, 5)), rand((2, 3, 4, 5)), 0.3),
                              ("blend_broadcast", rand((2, 3, 1, 5)), rand((4, 1)), 0.75),
                              ("blend_first_small", rand((5,)), rand((3, 2, 5)), 0.5),
                              ("blend_zero", rand((3, 7)), rand((3, 7)), 0.0)]:
        a32, b32 = np.float32(alpha), np.float32(1.0 - alpha)
        expected = (a32 * a + b32 * b).astype(np.float32)
        case(name, "linear_blend", {"alpha": alpha}, [a, b], [expected])


# ---- softmax ----

def softmax_cases():
    for name, x, axis in [("softmax_last", rand((2, 3, 4, 5)), -1),
                          ("softmax_channel", rand((2, 3, 4, 5)), 1),
                          ("softmax_first", rand((3, 4)), 0),
                          ("softmax_middle_neg", rand((2, 3, 4)), -2),
                          ("softmax_rank1", rand((7,)), 0),
                          ("softmax_large_values", rand((3, 10), lo=-80, hi=80), 1),
                          ("softmax_wide_inner", rand((1, 3, 300)), 1),
                          ("softmax_single", rand((4, 1)), 1)]:
        got = ort_run("Softmax", [x], {"axis": axis})[0]
        x64 = x.astype(np.float64)
        e = np.exp(x64 - x64.max(axis=axis, keepdims=True))
        ref = (e / e.sum(axis=axis, keepdims=True)).astype(np.float32)
        assert allclose(got, ref, 1e-5), name
        case(name, "softmax", {"axis": axis}, [x], [ref])


# ---- concatenation and split ----

def concat_cases():
    for name, arrays, axis in [
            ("concat_channels", [rand((2, 3, 4, 5)), rand((2, 1, 4, 5)), rand((2, 2, 4, 5))], 1),
            ("concat_last_neg", [rand((2, 3, 2)), rand((2, 3, 5))], -1),
            ("concat_batch", [rand((1, 3, 2)), rand((3, 3, 2))], 0),
            ("concat_int64", [rand((2, 2, 3), np.int64, -50, 50), rand((2, 4, 3), np.int64, -50, 50)], 1),
            ("concat_float16", [rand((2, 3, 3), np.float16), rand((2, 3, 1), np.float16)], 2),
            ("concat_bool", [rand((3, 2), np.bool_), rand((3, 5), np.bool_), rand((3, 1), np.bool_)], 1),
            ("concat_uint8_single", [rand((4, 3), np.uint8, 0, 255)], 0),
            ("concat_rank1", [rand((3,)), rand((4,))], 0)]:
        expected = np.concatenate(arrays, axis=axis)
        got = ort_run("Concat", arrays, {"axis": axis})[0]
        assert np.array_equal(got, expected), name
        case(name, "concatenation", {"axis": axis}, arrays, [expected])
    a, b = rand((2, 3, 2)), rand((2, 1, 2))
    case("concat_relu", "concatenation", {"axis": 1}, [a, b],
         [np.maximum(np.concatenate([a, b], axis=1), 0)], activation={"type": "relu"})


def split_cases():
    for name, x, axis, split, num in [
            ("split_two", rand((2, 4, 3)), 1, None, 2),
            ("split_uneven", rand((2, 7)), 1, None, 3),
            ("split_sizes_neg_axis", rand((2, 3, 6)), -1, [1, 2, 3], None),
            ("split_batch", rand((5, 2)), 0, [2, 3], None),
            ("split_int32", rand((3, 6, 2), np.int32, -99, 99), 1, [4, 2], None),
            ("split_float16_four", rand((2, 8), np.float16), 1, None, 4),
            ("split_empty_part", rand((2, 5, 2)), 1, [2, 0, 3], None)]:
        if split is None:
            part = -(-x.shape[axis] // num)
            sizes = [part] * (num - 1) + [x.shape[axis] - part * (num - 1)]
            params = {"axis": axis, "num_outputs": num}
        else:
            sizes = split
            params = {"axis": axis, "split": split}
        bounds = np.cumsum(sizes)[:-1]
        expected = [np.ascontiguousarray(p) for p in np.split(x, bounds, axis=axis)]
        if 0 not in sizes:
            got = ort_run("Split", [x, np.array(sizes, np.int64)], {"axis": axis}, opset=18,
                          n_outputs=len(sizes))
            assert all(np.array_equal(g, e) for g, e in zip(got, expected)), name
        case(name, "split", params, [x], expected)


# ---- resize ----

COORD_MODES = ["half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric"]
NEAREST_MODES = ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"]
F = np.float32


def coordinate(mode, x, scale, out_len, in_len):
    """ONNX Runtime's coordinate mapping, in float32 like it (and the kernel)."""
    x, scale, out_len, in_len = F(x), F(scale), F(out_len), F(in_len)
    if scale == F(1):
        return x
    if mode == "half_pixel_symmetric":
        output_width = scale * in_len
        adjustment = out_len / output_width
        center = in_len / F(2)
        offset = center * (F(1) - adjustment)
        return F(float(offset) + (float(x) + 0.5) / float(scale) - 0.5)
    if mode == "pytorch_half_pixel":
        return (x + F(0.5)) / scale - F(0.5) if out_len > 1 else F(0)
    if mode == "align_corners":
        return F(0) if out_len == 1 else x * (in_len - F(1)) / (out_len - F(1))
    if mode == "asymmetric":
        return x / scale
    return (x + F(0.5)) / scale - F(0.5)


def nearest_index(mode, x):
    if mode == "round_prefer_ceil":
        i = math.floor(x + 0.5) if x >= 0 else -math.floor(-x + 0.5)
    elif mode == "floor":
        i = math.floor(x)
    elif mode == "ceil":
        i = math.ceil(x)
    else:
        i = math.floor(x) if x == F(int(x)) + F(0.5) else (math.floor(x + 0.5) if x >= 0 else -math.floor(-x + 0.5))
    return i


def cubic_coeffs(s, a):
    s1, t, t1 = s + 1, 1 - s, 2 - s
    return [((a * s1 - 5 * a) * s1 + 8 * a) * s1 - 4 * a,
            ((a + 2) * s - (a + 3)) * s * s + 1,
            ((a + 2) * t - (a + 3)) * t * t + 1,
            ((a * t1 - 5 * a) * t1 + 8 * a) * t1 - 4 * a]


def axis_matrix(p, in_len, out_len, scale):
    """The [out, in] interpolation matrix of one axis, by the ONNX definition."""
    m = np.zeros((out_len, in_len))
    for o in range(out_len):
        x = float(coordinate(p["coordinate_transformation_mode"], o, scale, out_len, in_len))
        if p["mode"] == "nearest":
            i = min(max(nearest_index(p["nearest_mode"], x), 0), in_len - 1)
            m[o, i] = 1
        elif p["mode"] == "linear":
            xc = min(max(x, 0.0), in_len - 1.0)
            i0 = int(xc)
            i1 = min(i0 + 1, in_len - 1)
            w1 = xc - i0
            m[o, i0] += 1 - w1
            m[o, i1] += w1
        else:
            base = math.floor(x)
            w = cubic_coeffs(x - base, p["cubic_coeff_a"])
            idx = [base - 1 + j for j in range(4)]
            if p["exclude_outside"]:
                w = [wj if 0 <= i < in_len else 0.0 for wj, i in zip(w, idx)]
                total = sum(w)
                w = [wj / total for wj in w]
            for wj, i in zip(w, idx):
                m[o, min(max(i, 0), in_len - 1)] += wj
    return m


def resize_numpy(x, p, out_shape, scales):
    """Separable application of the per-axis matrices (float64)."""
    y = x.astype(np.float64)
    for k in range(x.ndim):
        m = axis_matrix(p, x.shape[k], out_shape[k], scales[k])
        y = np.moveaxis(np.tensordot(m, np.moveaxis(y, k, 0), axes=(1, 0)), 0, k)
    return y


def resize(name, x, mode="nearest", coord="half_pixel", nearest="round_prefer_floor", scales=None,
           sizes=None, cubic_a=-0.75, exclude=False, use_ort=True):
    rank = x.ndim
    p = {"mode": mode, "coordinate_transformation_mode": coord, "nearest_mode": nearest,
         "cubic_coeff_a": cubic_a, "exclude_outside": exclude}
    given = sizes if sizes is not None else scales
    first = 2 if rank >= 3 and (len(given) == 1 or len(given) == rank - 2) else 0
    full_scales = [1.0] * rank
    out_shape = list(x.shape)
    for k in range(first, rank):
        v = given[0 if len(given) == 1 else k - first]
        if sizes is not None:
            out_shape[k] = v
        else:
            out_shape[k] = int(math.floor(x.shape[k] * v))
            full_scales[k] = v
    if sizes is not None:
        full_scales = [float(F(o) / F(i)) for o, i in zip(out_shape, x.shape)]
    for k in range(rank):
        # ONNX Runtime copies an axis whose size does not change whatever the
        # scale says; the ONNX definition (and Strata) map it with the scale.
        assert out_shape[k] != x.shape[k] or F(full_scales[k]) == F(1), (name, "avoid the ORT shortcut")
        assert not (coord == "align_corners" and out_shape[k] == 1 and x.shape[k] != 1), name
    xf = x.astype(np.float32) if x.dtype != np.float32 else x
    ref = resize_numpy(xf if mode != "nearest" else np.arange(x.size, dtype=np.float64).reshape(x.shape),
                       p, out_shape, full_scales)
    if mode == "nearest":
        expected = x.reshape(-1)[ref.round().astype(np.int64).reshape(-1)].reshape(out_shape)
    else:
        expected = ref.astype(x.dtype)
    if use_ort:
        attrs = {"mode": mode, "coordinate_transformation_mode": coord}
        if mode == "nearest":
            attrs["nearest_mode"] = nearest
        if mode == "cubic":
            attrs["cubic_coeff_a"] = cubic_a
            attrs["exclude_outside"] = int(exclude)
        if sizes is not None:
            inputs = [xf, None, None, np.array(out_shape, np.int64)]
        else:
            inputs = [xf, None, np.array(full_scales, np.float32)]
        got = ort_run("Resize", inputs, attrs, opset=19)[0]
        if mode == "nearest":
            got = x.reshape(-1)[ort_run("Resize", [np.arange(x.size, dtype=np.float32).reshape(x.shape)]
                                        + inputs[1:], attrs, opset=19)[0].astype(np.int64).reshape(-1)
                                ].reshape(out_shape)
            assert np.array_equal(got, expected), (name, got, expected)
        else:
            assert allclose(got, ref, 1e-5), (name, np.max(np.abs(got - ref)))
            expected = got.astype(x.dtype)
    params = {"mode": mode, "coordinate_transformation_mode": coord}
    if mode == "nearest":
        params["nearest_mode"] = nearest
    if mode == "cubic":
        params["cubic_coeff_a"] = cubic_a
        params["exclude_outside"] = exclude
    if sizes is not None:
        params["sizes"] = list(sizes)
        params["scales"] = []
    else:
        params["scales"] = [float(s) for s in scales]
    case(name, "resize", params, [x], [np.ascontiguousarray(expected)],
         note=None if use_ort else "numpy reference: ONNX Runtime does not run this configuration")


def resize_cases():
    short = {"half_pixel": "hp", "half_pixel_symmetric": "hps", "pytorch_half_pixel": "php",
             "align_corners": "ac", "asymmetric": "asym", "round_prefer_floor": "rpf",
             "round_prefer_ceil": "rpc", "floor": "floor", "ceil": "ceil"}
    # Nearest: every coordinate mode with every rounding mode, up by sizes
    # (odd factors, so ties occur) and down by scales.
    for coord in COORD_MODES:
        for nearest in NEAREST_MODES:
            tag = "%s_%s" % (short[coord], short[nearest])
            resize("resize_nearest_up_%s" % tag, rand((1, 2, 4, 5)), coord=coord, nearest=nearest,
                   sizes=[7, 10])
            resize("resize_nearest_down_%s" % tag, rand((2, 1, 6, 9)), coord=coord, nearest=nearest,
                   scales=[0.5, 0.6])
    # Scale 2 with asymmetric lands on exact halves: the rounding modes differ there.
    for nearest in NEAREST_MODES:
        resize("resize_nearest_x2_asym_%s" % short[nearest], rand((1, 1, 3, 3)), coord="asymmetric",
               nearest=nearest, scales=[1.5, 2.5])
    for coord in COORD_MODES:
        tag = short[coord]
        resize("resize_linear_up_%s" % tag, rand((1, 2, 4, 5)), "linear", coord, sizes=[7, 9])
        resize("resize_linear_down_%s" % tag, rand((2, 2, 6, 7)), "linear", coord, scales=[0.5, 0.75])
        resize("resize_linear_scales_%s" % tag, rand((1, 1, 3, 4)), "linear", coord, scales=[2.0, 1.75])
        for exclude in (False, True):
            ex = "_excl" if exclude else ""
            resize("resize_cubic_up_%s%s" % (tag, ex), rand((1, 2, 4, 5)), "cubic", coord,
                   sizes=[9, 8], exclude=exclude)
            resize("resize_cubic_down_%s%s" % (tag, ex), rand((1, 1, 8, 9)), "cubic", coord,
                   scales=[0.5, 0.7], exclude=exclude)
        resize("resize_cubic_a05_%s" % tag, rand((2, 1, 5, 4)), "cubic", coord, scales=[1.6, 2.0],
               cubic_a=-0.5, exclude=True)
    # Other ranks and axes.
    resize("resize_nearest_rank3", rand((2, 3, 5)), scales=[2.0])
    resize("resize_linear_rank3", rand((2, 3, 5)), "linear", sizes=[8])
    resize("resize_cubic_rank3", rand((2, 2, 6)), "cubic", sizes=[9], use_ort=False)
    resize("resize_nearest_rank5", rand((1, 2, 3, 2, 4)), "nearest", "asymmetric", "floor",
           scales=[2.0, 1.5, 0.5])
    resize("resize_linear_rank5", rand((1, 2, 3, 2, 4)), "linear", "align_corners", sizes=[5, 3, 6])
    resize("resize_cubic_rank5", rand((1, 1, 3, 4, 4)), "cubic", "half_pixel", scales=[1.5],
           use_ort=False)
    resize("resize_linear_rank2_all_axes", rand((4, 5)), "linear", "half_pixel", scales=[1.5, 2.0])
    resize("resize_cubic_rank2_all_axes", rand((4, 5)), "cubic", "pytorch_half_pixel", sizes=[6, 3])
    resize("resize_nearest_all_axes", rand((2, 3, 2, 3)), "nearest", "half_pixel", "round_prefer_ceil",
           scales=[1.5, 0.67, 2.0, 1.0])
    resize("resize_linear_all_axes", rand((2, 3, 2, 3)), "linear", "asymmetric",
           sizes=[3, 2, 4, 3], use_ort=False)
    resize("resize_nearest_int64", rand((1, 2, 3, 3), np.int64, -1000, 1000), scales=[2.0, 1.5])
    resize("resize_nearest_uint8", rand((1, 1, 4, 4), np.uint8, 0, 255), "nearest", "align_corners",
           sizes=[7, 2])
    resize("resize_nearest_float16", rand((1, 2, 3, 4), np.float16), scales=[2.0, 0.5])
    resize("resize_linear_float16", rand((1, 2, 3, 4), np.float16), "linear", sizes=[5, 7])
    resize("resize_nearest_big", rand((1, 3, 12, 17)), "nearest", "asymmetric", "floor", scales=[2.0, 2.0])
    resize("resize_linear_big", rand((1, 2, 13, 16)), "linear", "half_pixel", scales=[2.0, 2.0])


# ---- pad ----

def pad(name, x, pads, mode="constant", value=0.0, form="full"):
    """pads: 2·rank values (starts then ends) as ONNX takes them. form says
    how the layer is given them: full, spatial (2·(rank − 2)) or one value."""
    rank = x.ndim
    begin, end = pads[:rank], pads[rank:]
    # The descriptor's rule: crop first (negative pads), then pad what is left.
    crop = tuple(slice(max(-b, 0), x.shape[k] - max(-e, 0)) for k, (b, e) in enumerate(zip(begin, end)))
    kept = x[crop]
    widths = [(max(b, 0), max(e, 0)) for b, e in zip(begin, end)]
    if mode == "constant":
        expected = np.pad(kept, widths, mode="constant", constant_values=np.array(value).astype(x.dtype))
    else:
        expected = np.pad(kept, widths, mode=mode)
    xf = x if x.dtype != np.float16 else x
    attrs = {"mode": mode}
    inputs = [xf, np.array(pads, np.int64)]
    if mode == "constant":
        inputs.append(np.array(value).astype(x.dtype))
    got = ort_run("Pad", inputs, attrs, opset=18)[0]
    assert np.array_equal(got, expected), (name, got, expected)
    if form == "full":
        given = list(pads)
    elif form == "spatial":
        assert all(v == 0 for v in begin[:2] + end[:2])
        given = begin[2:] + end[2:]
    else:
        given = [pads[2]]
        assert all(v == given[0] for v in begin[2:] + end[2:]) and not any(begin[:2] + end[:2])
    params = {"mode": mode, "pads": given}
    if mode == "constant" and value != 0:
        params["value"] = value
    case(name, "pad", params, [x], [expected])


def pad_cases():
    pad("pad_constant_all_axes", rand((2, 3, 4, 5)), [0, 1, 2, 1, 1, 0, 1, 3], "constant", 1.5)
    pad("pad_constant_spatial", rand((1, 2, 3, 4)), [0, 0, 1, 2, 0, 0, 2, 0], "constant", -2.0, "spatial")
    pad("pad_constant_one", rand((2, 1, 3, 3)), [0, 0, 2, 2, 0, 0, 2, 2], "constant", 0.0, "one")
    pad("pad_reflect_spatial", rand((2, 2, 4, 5)), [0, 0, 2, 3, 0, 0, 3, 1], "reflect", form="spatial")
    pad("pad_reflect_all_axes", rand((3, 4, 5)), [1, 2, 3, 2, 1, 4], "reflect")
    pad("pad_edge_one", rand((1, 2, 3, 4)), [0, 0, 3, 3, 0, 0, 3, 3], "edge", form="one")
    pad("pad_edge_all_axes", rand((2, 3, 4)), [1, 0, 2, 2, 3, 0], "edge")
    pad("pad_constant_negative", rand((2, 3, 6, 7)), [0, -1, -2, 1, -1, 0, 2, -3], "constant", 0.5)
    pad("pad_reflect_negative", rand((1, 2, 7, 8)), [0, 0, -2, 2, 0, 0, 3, -3], "reflect")
    pad("pad_edge_negative", rand((1, 2, 5, 6)), [0, 0, -3, 1, 0, 0, 2, -5], "edge")
    pad("pad_crop_only", rand((2, 3, 4, 5)), [0, 0, -1, -2, 0, 0, -1, 0], "constant")
    pad("pad_int64_constant", rand((2, 3, 3), np.int64, -100, 100), [0, 1, 1, 0, 2, 1], "constant", -3.0)
    pad("pad_uint8_reflect", rand((1, 1, 4, 4), np.uint8, 0, 255), [0, 0, 1, 3, 0, 0, 2, 1], "reflect")
    pad("pad_float16_edge", rand((1, 2, 3, 3), np.float16), [0, 0, 1, 1, 0, 0, 2, 2], "edge")
    pad("pad_bool_constant", rand((2, 5), np.bool_), [1, 2, 0, 1], "constant", 1.0)
    pad("pad_rank5_reflect", rand((1, 2, 3, 3, 4)), [0, 0, 1, 2, 1, 0, 0, 2, 1, 3], "reflect")
    pad("pad_rank1_constant", rand((6,)), [2, 3], "constant", 4.0)


# ---- slice ----

def slice_(name, x, starts, ends, axes=None, steps=None):
    inputs = [x, np.array(starts, np.int64), np.array(ends, np.int64)]
    if axes is not None or steps is not None:
        inputs.append(np.array(axes if axes is not None else list(range(len(starts))), np.int64))
    if steps is not None:
        inputs.append(np.array(steps, np.int64))
    got = ort_run("Slice", inputs)[0]
    # numpy's slicing follows the same clamping rules.
    idx = [slice(None)] * x.ndim
    for i, (s, e) in enumerate(zip(starts, ends)):
        a = (axes[i] if axes is not None else i) % x.ndim
        idx[a] = slice(s, e, steps[i] if steps is not None else 1)
    expected = np.ascontiguousarray(x[tuple(idx)])
    assert np.array_equal(got, expected), (name, got.shape, expected.shape)
    params = {"starts": starts, "ends": ends}
    if axes is not None:
        params["axes"] = axes
    if steps is not None:
        params["steps"] = steps
    case(name, "slice", params, [x], [expected])


def slice_cases():
    slice_("slice_spatial", rand((2, 3, 6, 7)), [1, 2], [5, 6], axes=[2, 3])
    slice_("slice_implicit_axes", rand((4, 5, 3)), [1, 0], [3, 4])
    slice_("slice_negative_starts", rand((2, 8)), [-5], [-1], axes=[-1])
    slice_("slice_steps", rand((2, 3, 9, 8)), [0, 1], [9, 8], axes=[2, 3], steps=[2, 3])
    slice_("slice_negative_steps", rand((2, 3, 7)), [-1, 2], [-2**31, 0], axes=[2, 1], steps=[-1, -2])
    slice_("slice_reverse_all", rand((3, 4)), [2**31 - 1, 10], [-2**31, -10], steps=[-1, -1])
    slice_("slice_clamped", rand((2, 5, 4)), [-100, 1], [100, 2**31 - 1], axes=[1, 2])
    slice_("slice_empty", rand((3, 4)), [3], [1], axes=[1])
    slice_("slice_int32", rand((2, 6, 3), np.int32, -9, 9), [1], [6], axes=[1], steps=[2])
    slice_("slice_float16", rand((3, 5), np.float16), [0, 4], [3, 0], steps=[2, -1])
    slice_("slice_batch", rand((5, 2, 3)), [1], [4], axes=[0])


# ---- transpose, space_to_depth, depth_to_space ----

def ort_moved(op, x, attrs):
    """Runs a data-movement node on the element indices (as float32, exact
    below 2^24), so it works for dtypes ONNX Runtime has no kernel for, and
    picks the elements it moved."""
    idx = np.arange(x.size, dtype=np.float32).reshape(x.shape)
    moved = ort_run(op, [idx], attrs)[0]
    return x.reshape(-1)[moved.astype(np.int64).reshape(-1)].reshape(moved.shape)


def transpose_cases():
    for name, x, perm in [("transpose_nchw_nhwc", rand((2, 3, 4, 5)), [0, 2, 3, 1]),
                          ("transpose_nhwc_nchw", rand((2, 4, 5, 3)), [0, 3, 1, 2]),
                          ("transpose_reverse", rand((2, 3, 4)), []),
                          ("transpose_rank2", rand((7, 3)), [1, 0]),
                          ("transpose_rank5", rand((2, 3, 1, 4, 2)), [4, 0, 3, 1, 2]),
                          ("transpose_rank8", rand((2, 1, 2, 3, 2, 1, 2, 2)), [7, 2, 5, 0, 3, 6, 1, 4]),
                          ("transpose_tiles", rand((2, 9, 40)), [0, 2, 1]),
                          ("transpose_tiles_outer", rand((33, 3, 12)), [2, 1, 0]),
                          ("transpose_int8", rand((3, 4, 5), np.int8, -128, 127), [2, 0, 1]),
                          ("transpose_float16", rand((2, 3, 5), np.float16), [1, 2, 0]),
                          ("transpose_int64", rand((4, 3, 2), np.int64, -10**12, 10**12), [1, 0, 2]),
                          ("transpose_identity", rand((2, 3)), [0, 1])]:
        p = perm if perm else list(range(x.ndim))[::-1]
        expected = np.ascontiguousarray(np.transpose(x, p))
        got = ort_run("Transpose", [x], {"perm": p})[0]
        assert np.array_equal(got, expected), name
        case(name, "transpose", {"perm": perm}, [x], [expected])


def space_depth_cases():
    for name, x, b in [("s2d_block2", rand((1, 2, 4, 6)), 2),
                       ("s2d_block3_batch", rand((2, 1, 6, 3)), 3),
                       ("s2d_int64", rand((1, 3, 2, 4), np.int64, -99, 99), 2)]:
        got = ort_moved("SpaceToDepth", x, {"blocksize": b})
        n, c, h, w = x.shape
        ref = x.reshape(n, c, h // b, b, w // b, b).transpose(0, 3, 5, 1, 2, 4).reshape(n, c * b * b, h // b, w // b)
        assert np.array_equal(got, ref), name
        case(name, "space_to_depth", {"block_size": b}, [x], [np.ascontiguousarray(ref)])
    for name, x, b, mode in [("d2s_dcr", rand((1, 8, 2, 3)), 2, "DCR"),
                             ("d2s_crd", rand((1, 8, 2, 3)), 2, "CRD"),
                             ("d2s_dcr_block3", rand((2, 9, 2, 2)), 3, "DCR"),
                             ("d2s_crd_block3", rand((2, 18, 1, 2)), 3, "CRD"),
                             ("d2s_float16_crd", rand((1, 4, 3, 3), np.float16), 2, "CRD")]:
        got = ort_moved("DepthToSpace", x, {"blocksize": b, "mode": mode})
        n, c, h, w = x.shape
        if mode == "DCR":
            ref = x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
        else:
            ref = x.reshape(n, c // (b * b), b, b, h, w).transpose(0, 1, 4, 2, 5, 3)
        ref = ref.reshape(n, c // (b * b), h * b, w * b)
        assert np.array_equal(got, ref), name
        case(name, "depth_to_space", {"block_size": b, "mode": mode}, [x], [np.ascontiguousarray(ref)])


# ---- reshape, flatten, identity, dropout, constant ----

def passthrough_cases():
    x = rand((2, 3, 4))
    case("reshape_infer", "reshape", {"shape": [4, -1]}, [x], [x.reshape(4, -1)])
    x = rand((2, 3, 4, 5))
    case("reshape_copy_dims", "reshape", {"shape": [0, -1]}, [x], [x.reshape(2, -1)])
    x = rand((2, 6), np.int64, -9, 9)
    case("reshape_int64_rank4", "reshape", {"shape": [1, 2, 3, 2]}, [x], [x.reshape(1, 2, 3, 2)])
    for axis in (1, 0, -1, 4):
        x = rand((2, 3, 2, 2))
        a = axis % 5 if axis >= 0 else axis + 4
        case("flatten_axis_%s" % str(axis).replace("-", "neg"), "flatten", {"axis": axis}, [x],
             [x.reshape(int(np.prod(x.shape[:a])), -1)])
    x = rand((2, 3, 4))
    case("identity_float32", "identity", {}, [x], [x])
    x = rand((3, 5), np.uint8, 0, 255)
    case("identity_uint8", "identity", {}, [x], [x])
    x = rand((2, 7))
    case("dropout_passes", "dropout", {"ratio": 0.3}, [x], [x])


def constant_cases():
    def const(name, dims, dtype, value=None, values=None):
        params = {"dims": dims, "dtype": DTYPE_NAMES[np.dtype(dtype)]}
        weights = {}
        if values is not None:
            weights["values"] = values.astype(np.float32)
            expected = values.astype(dtype)
        else:
            params["value"] = value
            expected = np.full(dims, value).astype(dtype)
        cases.append(dict(name=name, layer="constant", params=params, inputs=[], expected=[expected],
                          activation=None, weights=weights, note=None))
    const("constant_fill_float32", [2, 3], np.float32, value=2.5)
    const("constant_fill_int64", [3, 1, 2], np.int64, value=-7)
    const("constant_fill_bool", [4], np.bool_, value=1)
    const("constant_fill_float16", [2, 2], np.float16, value=0.1)
    const("constant_scalar", [], np.float32, value=-1.25)
    const("constant_values_float32", [2, 3, 4], np.float32, values=rand((2, 3, 4)))
    const("constant_values_int32", [3, 4], np.int32, values=rand((3, 4), np.int32, -1000, 1000))
    const("constant_values_uint8", [5], np.uint8, values=rand((5,), np.uint8, 0, 255))
    const("constant_values_float16", [2, 3], np.float16, values=rand((2, 3)).astype(np.float16))


# ---- activations ----

def erf(x):
    return np.vectorize(math.erf)(x)


SQRT_2_PI = math.sqrt(2 / math.pi)

# name: (reference in float64, ONNX node or None, default coefficients)
def softplus64(x):
    return np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))


ACTIVATIONS = {
    "relu": lambda x, c: np.maximum(x, 0),
    "leaky_relu": lambda x, c: np.where(x >= 0, x, c.get("alpha", 0.01) * x),
    "elu": lambda x, c: np.where(x >= 0, x, c.get("alpha", 1.0) * np.expm1(np.minimum(x, 0))),
    "selu": lambda x, c: np.where(x > 0, c.get("gamma", 1.05070102214813232421875) * x,
                                  c.get("gamma", 1.05070102214813232421875) * c.get("alpha", 1.67326319217681884765625)
                                  * np.expm1(np.minimum(x, 0))),
    "sigmoid": lambda x, c: 0.5 * (1 + np.tanh(0.5 * x)),
    "tanh": lambda x, c: np.tanh(x),
    "softplus": lambda x, c: softplus64(x),
    "hard_sigmoid": lambda x, c: np.clip(c.get("alpha", 0.2) * x + c.get("beta", 0.5), 0, 1),
    "hard_swish": lambda x, c: x * np.clip(x / 6 + 0.5, 0, 1),
    "silu": lambda x, c: x * 0.5 * (1 + np.tanh(0.5 * x)),
    "gelu": lambda x, c: (0.5 * x * (1 + erf(x / math.sqrt(2))) if c.get("approximate", "none") == "none"
                          else 0.5 * x * (1 + np.tanh(SQRT_2_PI * (x + 0.044715 * x ** 3)))),
    "mish": lambda x, c: x * np.tanh(softplus64(x)),
    "clip": lambda x, c: np.minimum(np.maximum(x, c.get("min", 0.0)), c.get("max", 6.0)),
}


def ort_activation(name, x, coef):
    """ONNX Runtime's result for the same activation, or None where ONNX has no node for it."""
    f32 = lambda v: float(np.float32(v))
    if name == "relu":
        return ort_run("Relu", [x])[0]
    if name == "leaky_relu":
        return ort_run("LeakyRelu", [x], {"alpha": f32(coef.get("alpha", 0.01))})[0]
    if name == "elu":
        return ort_run("Elu", [x], {"alpha": f32(coef.get("alpha", 1.0))})[0]
    if name == "selu":
        return ort_run("Selu", [x], {k: f32(v) for k, v in coef.items()})[0]
    if name == "sigmoid":
        return ort_run("Sigmoid", [x])[0]
    if name == "tanh":
        return ort_run("Tanh", [x])[0]
    if name == "softplus":
        return ort_run("Softplus", [x])[0]
    if name == "hard_sigmoid":
        return ort_run("HardSigmoid", [x], {"alpha": f32(coef.get("alpha", 0.2)),
                                             "beta": f32(coef.get("beta", 0.5))})[0]
    if name == "hard_swish":
        return ort_run("HardSwish", [x], opset=14)[0]
    if name == "silu":
        return x * ort_run("Sigmoid", [x])[0]
    if name == "gelu":
        return ort_run("Gelu", [x], {"approximate": coef.get("approximate", "none")}, opset=20)[0]
    if name == "mish":
        return ort_run("Mish", [x], opset=18)[0]
    if name == "clip":
        return ort_run("Clip", [x, np.array(coef.get("min", 0.0), np.float32),
                                np.array(coef.get("max", 6.0), np.float32)])[0]
    return None


def activation(case_name, name, x, coef=None, slope=None):
    coef = coef or {}
    if name == "prelu":
        alpha = coef.get("alpha", 0.25)
        s = np.full((x.shape[1],), alpha) if slope is None else slope.astype(np.float64)
        view = s.reshape((1, -1) + (1,) * (x.ndim - 2))
        ref = np.where(x >= 0, x, view * x)
        got = ort_run("PRelu", [x, view.astype(np.float32)])[0]
    else:
        ref = ACTIVATIONS[name](x.astype(np.float64), coef)
        got = ort_activation(name, x, coef)
    ref = ref.astype(np.float32)
    if got is not None and not allclose(got, ref, 1e-5):
        worst = np.max(np.abs(got.astype(np.float64) - ref))
        print("note: %s: onnxruntime differs from the float64 reference by up to %.3g" % (case_name, worst))
        assert allclose(got, ref, 1e-3), case_name
    act = dict({"type": name}, **coef)  # coefficients sit beside the type
    weights = {"prelu_slope": slope.astype(np.float32)} if slope is not None else None
    case(case_name, "identity", {}, [x], [ref], activation=act, weights=weights)


def activation_cases():
    for name in list(ACTIVATIONS) + ["prelu"]:
        activation("act_%s" % name, name, rand((2, 3, 4, 5), lo=-7, hi=7))
    wide = ["elu", "selu", "sigmoid", "tanh", "softplus", "silu", "gelu", "mish"]
    for name in wide:
        activation("act_%s_wide" % name, name, rand((2, 3, 7), lo=-60, hi=60))
    small = ["elu", "selu", "sigmoid", "tanh", "softplus", "silu", "gelu", "mish"]
    for name in small:
        activation("act_%s_small" % name, name, rand((3, 11), lo=-0.01, hi=0.01))
    activation("act_gelu_tanh", "gelu", rand((2, 3, 4, 5), lo=-7, hi=7), {"approximate": "tanh"})
    activation("act_gelu_tanh_small", "gelu", rand((3, 11), lo=-0.01, hi=0.01), {"approximate": "tanh"})
    activation("act_leaky_relu_alpha", "leaky_relu", rand((2, 9)), {"alpha": 0.2})
    activation("act_elu_alpha", "elu", rand((2, 9)), {"alpha": 0.5})
    activation("act_selu_params", "selu", rand((2, 9)), {"alpha": 1.5, "gamma": 1.25})
    activation("act_hard_sigmoid_pytorch", "hard_sigmoid", rand((2, 9), lo=-5, hi=5),
               {"alpha": 1 / 6, "beta": 0.5})
    activation("act_clip_bounds", "clip", rand((2, 9)), {"min": -1.0, "max": 1.5})
    activation("act_clip_crossed", "clip", rand((2, 9)), {"min": 2.0, "max": 1.0})
    activation("act_prelu_alpha", "prelu", rand((2, 4, 3, 3)), {"alpha": 0.1})
    activation("act_prelu_slopes", "prelu", rand((2, 4, 3, 3)), slope=rand((4,), lo=-0.5, hi=1.5))
    activation("act_prelu_slopes_rank2", "prelu", rand((3, 5)), slope=rand((5,), lo=0, hi=1))
    activation("act_sigmoid_odd", "sigmoid", rand((1, 1, 1, 13)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--strata", help="a strata binary: run `strata check` on every model")
    args = parser.parse_args()
    print("numpy %s, onnx %s, onnxruntime %s" % (np.__version__, onnx.__version__, ort.__version__))
    elementwise_cases()
    blend_cases()
    softmax_cases()
    concat_cases()
    split_cases()
    resize_cases()
    pad_cases()
    slice_cases()
    transpose_cases()
    space_depth_cases()
    passthrough_cases()
    constant_cases()
    activation_cases()
    write_all(args.strata)
    total = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(OUT) for f in fs)
    print("%d cases, %d bytes in %s" % (len(cases), total, os.path.relpath(OUT)))


if __name__ == "__main__":
    main()
