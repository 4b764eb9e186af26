#!/usr/bin/python3
"""Writes conv_torch.json: PyTorch's outputs for nabla's convolution tests.

Inputs are not stored: element i of every input is sin(0.37·i + seed), seed
0.1 for the images and 0.7 for the weight, which the Go test computes the
same way. Run from this directory:  /usr/bin/python3 conv_torch.py
"""
import json
import math

import torch
import torch.nn.functional as F


def values(shape, seed):
    n = math.prod(shape)
    return torch.tensor([math.sin(0.37 * i + seed) for i in range(n)], dtype=torch.float64).reshape(shape)


# name, op, x shape, w shape, options (as nabla's ConvOptions)
CASES = [
    ("plain", "conv2d", [2, 3, 7, 6], [4, 3, 3, 3], {}),
    ("stride 2", "conv2d", [1, 3, 9, 8], [2, 3, 3, 2], {"Stride": [2]}),
    ("padding 1", "conv2d", [2, 2, 5, 5], [3, 2, 3, 3], {"Padding": [1]}),
    ("padding per axis", "conv2d", [1, 2, 5, 6], [3, 2, 3, 2], {"Padding": [2, 1]}),
    ("same", "conv2d", [1, 2, 6, 7], [3, 2, 3, 4], {"Same": True}),
    ("same dilated", "conv2d", [1, 2, 9, 8], [2, 2, 3, 2], {"Same": True, "Dilation": [2]}),
    ("dilation 2", "conv2d", [2, 2, 9, 9], [2, 2, 3, 3], {"Dilation": [2]}),
    ("groups 2", "conv2d", [2, 4, 6, 5], [6, 2, 3, 3], {"Groups": 2, "Padding": [1]}),
    ("depthwise", "conv2d", [1, 3, 6, 6], [6, 1, 3, 3], {"Groups": 3, "Stride": [2], "Padding": [1]}),
    ("1x1", "conv2d", [2, 5, 4, 3], [3, 5, 1, 1], {}),
    ("everything", "conv2d", [1, 4, 11, 10], [4, 2, 3, 3], {"Stride": [2, 1], "Padding": [1, 2], "Dilation": [2, 1], "Groups": 2}),
    ("transpose", "conv_transpose2d", [2, 3, 4, 5], [3, 2, 3, 3], {}),
    ("transpose stride 2", "conv_transpose2d", [1, 2, 4, 3], [2, 3, 3, 2], {"Stride": [2], "Padding": [1], "OutputPadding": [1]}),
    ("transpose groups", "conv_transpose2d", [1, 4, 3, 3], [4, 1, 2, 3], {"Groups": 2, "Stride": [2, 1], "Dilation": [1, 2]}),
    ("1d", "conv1d", [2, 3, 9], [4, 3, 3], {"Stride": [2], "Padding": [1]}),
    ("1d dilated groups", "conv1d", [1, 4, 10], [2, 2, 3], {"Dilation": [2], "Groups": 2}),
]


def run(op, x, w, o):
    stride = o.get("Stride", [1])
    dil = o.get("Dilation", [1])
    groups = o.get("Groups", 1)
    if o.get("Same"):
        pad = "same"
    else:
        pad = o.get("Padding", [0])
    if op == "conv1d":
        return F.conv1d(x, w, stride=stride[0], padding=pad if pad == "same" else pad[0], dilation=dil[0], groups=groups)
    two = lambda v: tuple(v) if len(v) == 2 else (v[0], v[0])
    if op == "conv2d":
        return F.conv2d(x, w, stride=two(stride), padding=pad if pad == "same" else two(pad), dilation=two(dil), groups=groups)
    return F.conv_transpose2d(x, w, stride=two(stride), padding=two(pad), output_padding=two(o.get("OutputPadding", [0])),
                              dilation=two(dil), groups=groups)


out = []
for name, op, xs, ws, o in CASES:
    y = run(op, values(xs, 0.1), values(ws, 0.7), o)
    out.append({"name": name, "op": op, "x": xs, "w": ws, "options": o,
                "shape": list(y.shape), "y": [float(v) for v in y.flatten()]})
with open("conv_torch.json", "w") as f:
    f.write("[\n" + ",\n".join(json.dumps(c) for c in out) + "\n]\n")
