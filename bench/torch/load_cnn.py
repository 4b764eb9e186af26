#!/usr/bin/python3
"""Loads a checkpoint written by `go run ./examples/cnn -save FILE` into the
same network in PyTorch and prints its predictions on the digits.

    /usr/bin/python3 bench/torch/load_cnn.py FILE examples/mlp/testdata/digits.csv.gz

The weights load unchanged: nabla's names and layouts are PyTorch's. Prints
"skipped: ..." and exits 0 when torch is not installed.
"""
import collections
import gzip
import json
import struct
import sys

try:
    import torch
except ImportError:
    print("skipped: torch not installed")
    sys.exit(0)

DTYPES = {"F32": torch.float32, "F64": torch.float64, "I64": torch.int64, "I32": torch.int32}


def read_safetensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    body = raw[8 + n:]
    out = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        start, end = meta["data_offsets"]
        t = torch.frombuffer(bytearray(body[start:end]), dtype=DTYPES[meta["dtype"]])
        out[name] = t.reshape(meta["shape"]).clone()
    return out


def model(c1, c2, side, classes):
    nn = torch.nn
    return nn.Sequential(collections.OrderedDict([
        ("conv1", nn.Conv2d(1, c1, 3, padding=1)), ("bn1", nn.BatchNorm2d(c1)), ("relu1", nn.ReLU()),
        ("pool1", nn.MaxPool2d(2)),
        ("conv2", nn.Conv2d(c1, c2, 3, padding=1)), ("bn2", nn.BatchNorm2d(c2)), ("relu2", nn.ReLU()),
        ("pool2", nn.MaxPool2d(2)),
        ("flatten", nn.Flatten()), ("fc", nn.Linear(c2 * (side // 4) ** 2, classes)),
    ]))


def main():
    state = read_safetensors(sys.argv[1])
    c1, c2 = state["conv1.weight"].shape[0], state["conv2.weight"].shape[0]
    net = model(c1, c2, 8, state["fc.weight"].shape[0]).float()
    for k, v in state.items():
        if k.endswith("num_batches_tracked"):
            state[k] = v.to(torch.int64)
    net.load_state_dict(state, strict=True)
    net.eval()
    rows = []
    with gzip.open(sys.argv[2], "rt") as f:
        for line in f:
            rows.append([float(v) for v in line.strip().split(",")[:64]])
    x = torch.tensor(rows, dtype=torch.float32).reshape(-1, 1, 8, 8) / 16
    with torch.no_grad():
        pred = net(x).argmax(1)
    print("predictions:", ",".join(str(int(p)) for p in pred))


main()
