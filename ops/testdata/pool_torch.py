#!/usr/bin/python3
"""Writes pool_torch.json: PyTorch's outputs for nabla's pooling and
activation tests.

Inputs are not stored: element i of the input is sin(0.37·i + 0.1), scaled
by 3 for the activations so that they see both tails, and rounded to
halves (floor(2·v + 0.5)/2) for the gradients of max pooling, so that
windows hold ties; the gradients are of the sum of the output times
sin(0.37·i + 0.7). The Go test computes them the same way. Run from this
directory:  /usr/bin/python3 pool_torch.py
"""
import json
import math

import torch
import torch.nn.functional as F


def values(shape, seed, scale=1.0):
    n = math.prod(shape)
    return scale * torch.tensor([math.sin(0.37 * i + seed) for i in range(n)], dtype=torch.float64).reshape(shape)


# name, op, x shape, options (as nabla's PoolOptions)
POOLS = [
    ("max 2", "max_pool2d", [2, 3, 6, 8], {"Kernel": [2]}),
    ("max 3 stride 1", "max_pool2d", [1, 2, 7, 5], {"Kernel": [3], "Stride": [1]}),
    ("max 3 stride 2 padding 1", "max_pool2d", [2, 2, 9, 7], {"Kernel": [3], "Stride": [2], "Padding": [1]}),
    ("max 2 padding 1 odd", "max_pool2d", [1, 3, 5, 7], {"Kernel": [2], "Padding": [1]}),
    ("max dilation 2", "max_pool2d", [1, 2, 9, 8], {"Kernel": [3], "Stride": [1], "Dilation": [2]}),
    ("max dilation padding stride", "max_pool2d", [2, 1, 11, 10], {"Kernel": [3, 2], "Stride": [2, 1], "Padding": [1, 0], "Dilation": [2, 3]}),
    ("max ceil", "max_pool2d", [1, 2, 7, 6], {"Kernel": [2], "CeilMode": True}),
    ("max ceil 3 stride 2", "max_pool2d", [1, 2, 8, 9], {"Kernel": [3], "Stride": [2], "Padding": [1], "CeilMode": True}),
    ("max 1x1", "max_pool2d", [1, 2, 3, 3], {"Kernel": [1]}),
    ("max kernel per axis", "max_pool2d", [2, 2, 5, 9], {"Kernel": [1, 3], "Stride": [1, 2]}),
    ("avg 2", "avg_pool2d", [2, 3, 6, 8], {"Kernel": [2]}),
    ("avg 3 stride 1", "avg_pool2d", [1, 2, 7, 5], {"Kernel": [3], "Stride": [1]}),
    ("avg 3 stride 2 padding 1", "avg_pool2d", [2, 2, 9, 7], {"Kernel": [3], "Stride": [2], "Padding": [1]}),
    ("avg 2 padding 1 odd", "avg_pool2d", [1, 3, 5, 7], {"Kernel": [2], "Padding": [1]}),
    ("avg ceil", "avg_pool2d", [1, 2, 7, 6], {"Kernel": [2], "CeilMode": True}),
    ("avg ceil 3 stride 2 padding 1", "avg_pool2d", [1, 2, 8, 9], {"Kernel": [3], "Stride": [2], "Padding": [1], "CeilMode": True}),
    ("avg kernel per axis", "avg_pool2d", [2, 2, 5, 9], {"Kernel": [3, 2], "Stride": [1, 2], "Padding": [1, 0]}),
    ("global avg", "global_avg_pool2d", [2, 3, 5, 7], {}),
    ("max grad ties", "max_pool2d_grad", [2, 2, 7, 6], {"Kernel": [3], "Stride": [2], "Padding": [1]}),
    ("max grad ties dilated", "max_pool2d_grad", [1, 2, 9, 8], {"Kernel": [2, 3], "Stride": [1], "Dilation": [2, 1], "CeilMode": True}),
    ("erf", "erf", [3, 17], {}),
    ("gelu", "gelu", [3, 17], {}),
    ("gelu tanh", "gelu_tanh", [3, 17], {}),
    ("silu", "silu", [3, 17], {}),
]


def two(v):
    return tuple(v) if len(v) == 2 else (v[0], v[0])


def run(op, x, o):
    if op == "erf":
        return torch.erf(x)
    if op == "gelu":
        return F.gelu(x)
    if op == "gelu_tanh":
        return F.gelu(x, approximate="tanh")
    if op == "silu":
        return F.silu(x)
    if op == "global_avg_pool2d":
        return F.adaptive_avg_pool2d(x, 1).flatten(1)
    if op == "max_pool2d_grad":
        x = x.clone().requires_grad_()
        y = run("max_pool2d", x, o)
        (g,) = torch.autograd.grad(y, x, values(list(y.shape), 0.7))
        return g
    k = two(o["Kernel"])
    stride = two(o.get("Stride", o["Kernel"]))
    pad = two(o.get("Padding", [0]))
    ceil = o.get("CeilMode", False)
    if op == "max_pool2d":
        return F.max_pool2d(x, k, stride, pad, two(o.get("Dilation", [1])), ceil_mode=ceil)
    return F.avg_pool2d(x, k, stride, pad, ceil_mode=ceil, count_include_pad=True)


out = []
for name, op, xs, o in POOLS:
    x = values(xs, 0.1, 1.0 if "pool" in op else 3.0)
    if op == "max_pool2d_grad":
        x = torch.floor(2 * x + 0.5) / 2
    y = run(op, x, o)
    out.append({"name": name, "op": op, "x": xs, "options": o,
                "shape": list(y.shape), "y": [float(v) for v in y.flatten()]})
with open("pool_torch.json", "w") as f:
    f.write("[\n" + ",\n".join(json.dumps(c) for c in out) + "\n]\n")
