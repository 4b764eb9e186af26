"""Writes the PyTorch models of onnx/torch_test.go and their fixtures.

Run from the repository root with Debian's python3-torch (PyTorch 1.13):

    /usr/bin/python3 onnx/testdata/torch/export.py

Each model is built with a fixed seed and exported by torch.onnx.export
twice, as NAME.onnx (float32) and NAME_f64.onnx (the same model after
.double()), in evaluation mode and without constant folding, so that the
initializers keep the names of the model's parameters and buffers (PRESERVE
rather than EVAL, which would fold the batch norms into the convolutions).
NAME.json holds, as flat lists in row-major order with their shapes:

- inputs: the inputs fed (float inputs are float32 values, so that both
  exports read the same numbers);
- outputs32: the float32 model's outputs;
- outputs: the float64 model's outputs;
- proj: a fixed random weight for each output; the scalar
  L = sum_i sum(outputs_i * proj_i);
- grads: dL/d(input) for float inputs and dL/d(parameter) for every
  parameter, by PyTorch's autograd in float64, keyed by ONNX name;
- hvp: {"wrt": name, "v": ..., "value": ...}, the Hessian-vector product
  d/dw (dL/dw . v) in float64, by double backward.
"""

import json
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
OPSET = 17


class LeNet(nn.Module):
    """LeNet-5 with batch normalisation, on 1x28x28 images, narrow."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 5)
        self.bn1 = nn.BatchNorm2d(4)
        self.conv2 = nn.Conv2d(4, 8, 5)
        self.bn2 = nn.BatchNorm2d(8)
        self.fc1 = nn.Linear(8 * 4 * 4, 24)
        self.fc2 = nn.Linear(24, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.max_pool2d(F.relu(self.bn2(self.conv2(x))), 2)
        x = torch.flatten(x, 1)
        return F.log_softmax(self.fc2(F.relu(self.fc1(x))), dim=1)


class MLP(nn.Module):
    """Linear, GELU, LayerNorm, Linear, GELU (tanh), Linear."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(12, 16)
        self.ln = nn.LayerNorm(16)
        self.fc2 = nn.Linear(16, 16)
        self.fc3 = nn.Linear(16, 5)

    def forward(self, x):
        h = self.ln(F.gelu(self.fc1(x)))
        h = F.gelu(self.fc2(h), approximate="tanh")
        return self.fc3(h)


class Encoder(nn.Module):
    """One TransformerEncoderLayer (batch first, pre-norm off)."""

    def __init__(self):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16, dropout=0.0, batch_first=True)

    def forward(self, x):
        return self.layer(x)


class LSTMNet(nn.Module):
    """One LSTM layer, its outputs and final states."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(input_size=3, hidden_size=5)

    def forward(self, x):
        y, (h, c) = self.lstm(x)
        return y, h, c


class GRUNet(nn.Module):
    """Two stacked GRU layers, batch first, and a linear head."""

    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(input_size=3, hidden_size=4, num_layers=2, batch_first=True)
        self.head = nn.Linear(4, 2)

    def forward(self, x):
        y, h = self.gru(x)
        return self.head(y), h


class EmbeddingNet(nn.Module):
    """Token embeddings, mean over the sequence, tanh, linear."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(20, 6)
        self.fc = nn.Linear(6, 3)

    def forward(self, tokens):
        return self.fc(torch.tanh(self.emb(tokens).mean(dim=1)))


def randomize_norms(model, gen):
    """Gives batch norms non-trivial statistics and the affine parameters
    of batch and layer norms random values, which also keeps the exporter
    from merging equal initializers (two layer norms' ones and zeros)."""
    for m in model.modules():
        if isinstance(m, nn.LayerNorm):
            with torch.no_grad():
                m.weight.copy_(torch.rand(m.weight.shape, generator=gen) + 0.5)
                m.bias.copy_(torch.randn(m.bias.shape, generator=gen) * 0.1)
        if isinstance(m, nn.BatchNorm2d):
            with torch.no_grad():
                m.running_mean.copy_(torch.randn(m.num_features, generator=gen) * 0.1)
                m.running_var.copy_(torch.rand(m.num_features, generator=gen) + 0.5)
                m.weight.copy_(torch.rand(m.num_features, generator=gen) + 0.5)
                m.bias.copy_(torch.randn(m.num_features, generator=gen) * 0.1)


# name: (module class, input specs, output names, HVP target: None for the
# first float input, else a parameter name). An input spec is (name, shape)
# for floats, (name, shape, vocabulary) for int64 token ids.
MODELS = {
    "lenet": (LeNet, [("image", (2, 1, 28, 28))], ["logp"], "conv1.weight"),
    "mlp": (MLP, [("x", (4, 12))], ["y"], None),
    "encoder": (Encoder, [("x", (2, 5, 8))], ["y"], None),
    "lstm": (LSTMNet, [("x", (6, 2, 3))], ["y", "h", "c"], None),
    "gru": (GRUNet, [("x", (2, 5, 3))], ["y", "h"], "gru.weight_hh_l1"),
    "embedding": (EmbeddingNet, [("tokens", (3, 4), 20)], ["y"], "emb.weight"),
}


def flat(t):
    return {"shape": list(t.shape), "data": t.detach().reshape(-1).tolist()}


def export(model, inputs, in_names, out_names, path):
    torch.onnx.export(model, tuple(inputs), path, input_names=in_names, output_names=out_names,
                      opset_version=OPSET, do_constant_folding=False,
                      training=torch.onnx.TrainingMode.PRESERVE)


def build(name):
    cls, specs, out_names, hvp_wrt = MODELS[name]
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(1)
    model = cls()
    randomize_norms(model, gen)
    model.eval()
    inputs = []
    for spec in specs:
        if len(spec) == 3:
            inputs.append(torch.randint(0, spec[2], spec[1], generator=gen))
        else:
            inputs.append(torch.randn(*spec[1], generator=gen))
    in_names = [s[0] for s in specs]

    export(model, inputs, in_names, out_names, os.path.join(HERE, name + ".onnx"))
    with torch.no_grad():
        outs32 = model(*inputs)
    outs32 = outs32 if isinstance(outs32, tuple) else (outs32,)

    model = model.double()
    inputs64 = [x.double() if x.is_floating_point() else x for x in inputs]
    export(model, inputs64, in_names, out_names, os.path.join(HERE, name + "_f64.onnx"))
    for x in inputs64:
        if x.is_floating_point():
            x.requires_grad_(True)
    outs = model(*inputs64)
    outs = outs if isinstance(outs, tuple) else (outs,)
    proj = [torch.randn(o.shape, generator=gen, dtype=torch.float64) for o in outs]
    loss = sum((o * p).sum() for o, p in zip(outs, proj))

    wrt = {n: x for n, x in zip(in_names, inputs64) if x.is_floating_point()}
    wrt.update(dict(model.named_parameters()))
    names = list(wrt)
    grads = torch.autograd.grad(loss, [wrt[n] for n in names], create_graph=True)
    hvp_name = hvp_wrt or in_names[0]
    g = grads[names.index(hvp_name)]
    v = torch.randn(g.shape, generator=gen, dtype=torch.float64)
    hvp, = torch.autograd.grad((g * v).sum(), wrt[hvp_name])

    fixture = {
        "inputs": {n: flat(x) for n, x in zip(in_names, inputs)},
        "outputs32": {n: flat(o) for n, o in zip(out_names, outs32)},
        "outputs": {n: flat(o) for n, o in zip(out_names, outs)},
        "proj": {n: flat(p) for n, p in zip(out_names, proj)},
        "grads": {n: flat(gr) for n, gr in zip(names, grads)},
        "hvp": {"wrt": hvp_name, "v": flat(v), "value": flat(hvp)},
    }
    with open(os.path.join(HERE, name + ".json"), "w") as f:
        json.dump(fixture, f, separators=(",", ":"))


def main():
    for name in sys.argv[1:] or MODELS:
        build(name)
        print("wrote", name)


if __name__ == "__main__":
    main()
