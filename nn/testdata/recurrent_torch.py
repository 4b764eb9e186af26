#!/usr/bin/python3
"""Writes PyTorch's recurrent modules' weights and outputs for nabla's tests.

For each module of MODULES, recurrent/<name>.safetensors holds its state dict
exactly as PyTorch names it (float64), and recurrent/io.safetensors holds,
under "<name>/bf<0|1>/init<0|1>/", the input x, the initial states h0 (and c0)
when init is 1, and PyTorch's outputs: out, h_n (and c_n); "<name>/unbatched/
init<0|1>/" the same for an unbatched input (T, in). Cells are run on one
step: "<name>/[unbatched/]init<0|1>/" holds x, h0 (c0), and the new h (c). The
metadata of recurrent/io.safetensors holds each module's printed form under
"<name>/bf<0|1>.repr", and each cell's under "<name>.repr".
Run from this directory:  /usr/bin/python3 recurrent_torch.py
"""
import json
import os
import struct

import torch

T, N, IN, HIDDEN = 3, 2, 3, 4

# name, constructor, keyword arguments
MODULES = [
    ("rnn_l1", torch.nn.RNN, {}),
    ("rnn_l2", torch.nn.RNN, {"num_layers": 2}),
    ("rnn_relu_l2", torch.nn.RNN, {"num_layers": 2, "nonlinearity": "relu"}),
    ("lstm_l1", torch.nn.LSTM, {}),
    ("lstm_l2", torch.nn.LSTM, {"num_layers": 2}),
    ("lstm_nobias_l1", torch.nn.LSTM, {"bias": False}),
    ("gru_l1", torch.nn.GRU, {}),
    ("gru_l2", torch.nn.GRU, {"num_layers": 2}),
    ("rnn_bi_l1", torch.nn.RNN, {"bidirectional": True}),
    ("lstm_bi_l2", torch.nn.LSTM, {"num_layers": 2, "bidirectional": True}),
    ("gru_bi_l2", torch.nn.GRU, {"num_layers": 2, "bidirectional": True}),
]

CELLS = [
    ("rnncell", torch.nn.RNNCell, {}),
    ("rnncell_relu", torch.nn.RNNCell, {"nonlinearity": "relu"}),
    ("lstmcell", torch.nn.LSTMCell, {}),
    ("grucell", torch.nn.GRUCell, {}),
]


def write_safetensors(path, tensors, metadata=None):
    """Writes float64 tensors in the safetensors format."""
    header, blobs, at = {}, [], 0
    for name in sorted(tensors):
        t = tensors[name].detach().contiguous().to(torch.float64)
        data = struct.pack("<%dd" % t.numel(), *t.flatten().tolist())
        header[name] = {"dtype": "F64", "shape": list(t.shape), "data_offsets": [at, at + len(data)]}
        blobs.append(data)
        at += len(data)
    if metadata:
        header["__metadata__"] = metadata
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(raw)) + raw + b"".join(blobs))


def run(m, x, state, io, key, lstm):
    """Runs module m and records its outputs under key."""
    out, final = m(x, state)
    io[key + "out"] = out
    if lstm:
        io[key + "h_n"], io[key + "c_n"] = final
    else:
        io[key + "h_n"] = final


def main():
    os.makedirs("recurrent", exist_ok=True)
    io, reprs = {}, {}
    for i, (name, make, kwargs) in enumerate(MODULES):
        torch.manual_seed(100 + i)
        m = make(IN, HIDDEN, **kwargs).double()
        write_safetensors(f"recurrent/{name}.safetensors", m.state_dict())
        layers = kwargs.get("num_layers", 1) * (2 if kwargs.get("bidirectional") else 1)
        lstm = make is torch.nn.LSTM
        for bf in (0, 1):
            m.batch_first = bool(bf)
            reprs[f"{name}/bf{bf}.repr"] = str(m)
            for init in (0, 1):
                key = f"{name}/bf{bf}/init{init}/"
                x = torch.randn((N, T, IN) if bf else (T, N, IN), dtype=torch.float64)
                io[key + "x"] = x
                state = None
                if init:
                    h0 = torch.randn(layers, N, HIDDEN, dtype=torch.float64)
                    io[key + "h0"] = h0
                    state = h0
                    if lstm:
                        c0 = torch.randn(layers, N, HIDDEN, dtype=torch.float64)
                        io[key + "c0"] = c0
                        state = (h0, c0)
                run(m, x, state, io, key, lstm)
        # Unbatched: x (T, in), states (layers, hidden); batch_first (now
        # True) does not apply.
        for init in (0, 1):
            key = f"{name}/unbatched/init{init}/"
            x = torch.randn(T, IN, dtype=torch.float64)
            io[key + "x"] = x
            state = None
            if init:
                h0 = torch.randn(layers, HIDDEN, dtype=torch.float64)
                io[key + "h0"] = h0
                state = h0
                if lstm:
                    c0 = torch.randn(layers, HIDDEN, dtype=torch.float64)
                    io[key + "c0"] = c0
                    state = (h0, c0)
            run(m, x, state, io, key, lstm)
    for i, (name, make, kwargs) in enumerate(CELLS):
        torch.manual_seed(200 + i)
        m = make(IN, HIDDEN, **kwargs).double()
        write_safetensors(f"recurrent/{name}.safetensors", m.state_dict())
        reprs[f"{name}.repr"] = str(m)
        lstm = make is torch.nn.LSTMCell
        for init, batch in ((0, (N,)), (1, (N,)), (0, ()), (1, ())):
            key = f"{name}/{'' if batch else 'unbatched/'}init{init}/"
            x = torch.randn(*batch, IN, dtype=torch.float64)
            io[key + "x"] = x
            state = None
            if init:
                h0 = torch.randn(*batch, HIDDEN, dtype=torch.float64)
                io[key + "h0"] = h0
                state = h0
                if lstm:
                    c0 = torch.randn(*batch, HIDDEN, dtype=torch.float64)
                    io[key + "c0"] = c0
                    state = (h0, c0)
            y = m(x, state)
            if lstm:
                io[key + "h"], io[key + "c"] = y
            else:
                io[key + "h"] = y
    write_safetensors("recurrent/io.safetensors", io, reprs)


if __name__ == "__main__":
    main()
