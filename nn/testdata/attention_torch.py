#!/usr/bin/python3
"""Writes attention_torch.json: PyTorch's outputs for nabla's attention tests,
and the gradients of sum(y·w) for w = values(y.shape, 0.9).

Element i of every tensor is sin(0.37·i + seed)·scale; the Go test makes the
same tensors. Run from this directory:  /usr/bin/python3 attention_torch.py
"""
import json
import math

import torch
import torch.nn.functional as F

torch.set_default_dtype(torch.float64)


def values(shape, seed, scale=1.0):
    n = math.prod(shape)
    return torch.tensor([math.sin(0.37 * i + seed) * scale for i in range(n)]).reshape(shape)


def flat(t):
    return [float(x) for x in t.flatten()]


def grads(y, *wrt):
    """The gradients of sum(y·w), w = values(y.shape, 0.9), with respect to wrt."""
    return [flat(g) for g in torch.autograd.grad((y * values(list(y.shape), 0.9)).sum(), wrt)]


N, L, S, E, H = 2, 3, 4, 8, 2
cases = []
for name, causal, mask in [("plain", False, None), ("causal", False, "causal"), ("padding", False, "padding")]:
    mha = torch.nn.MultiheadAttention(E, H, batch_first=True)
    with torch.no_grad():
        mha.in_proj_weight.copy_(values([3 * E, E], 0.3, 0.5))
        mha.in_proj_bias.copy_(values([3 * E], 0.4, 0.1))
        mha.out_proj.weight.copy_(values([E, E], 0.5, 0.5))
        mha.out_proj.bias.copy_(values([E], 0.6, 0.1))
    q, k, v = values([N, L, E], 0.1), values([N, S, E], 0.2), values([N, S, E], 0.25)
    for t in (q, k, v):
        t.requires_grad_()
    kwargs = {"need_weights": False}
    if mask == "causal":
        # PyTorch's boolean attn_mask is True where attention is NOT allowed.
        kwargs["attn_mask"] = torch.triu(torch.ones(L, S, dtype=torch.bool), diagonal=1)
    if mask == "padding":
        pad = torch.zeros(N, S, dtype=torch.bool)
        pad[0, 3] = True
        pad[1, 1] = True
        kwargs["key_padding_mask"] = pad
    y, _ = mha(q, k, v, **kwargs)
    dq, dk, dv, dw = grads(y, q, k, v, mha.in_proj_weight)
    cases.append({"name": name, "mask": mask, "y": flat(y), "dq": dq, "dk": dk, "dv": dv, "dw": dw})

# Plain scaled dot-product attention, with a keep mask (1 attends).
q, k, v = values([2, 3, 4], 0.1), values([2, 5, 4], 0.2), values([2, 5, 3], 0.3)
for t in (q, k, v):
    t.requires_grad_()
keep = torch.tensor([[1, 1, 0, 1, 1], [0, 1, 1, 1, 0], [1, 0, 0, 0, 1]], dtype=torch.bool)
sdpa = F.scaled_dot_product_attention(q, k, v, attn_mask=keep) if hasattr(F, "scaled_dot_product_attention") else \
    torch.softmax((q @ k.transpose(1, 2) / 2).masked_fill(~keep, float("-inf")), -1) @ v
# A pre-norm GELU transformer layer, causal, its parameters filled in
# state-dict order: parameter i gets seed 0.1·(i+1) and scale 0.3.
layer = torch.nn.TransformerEncoderLayer(E, H, 16, dropout=0.0, activation="gelu", batch_first=True, norm_first=True)
names = []
with torch.no_grad():
    for i, (name, p) in enumerate(layer.named_parameters()):
        p.copy_(values(list(p.shape), 0.1 * (i + 1), 0.3))
        names.append(name)
sdpa_grads = dict(zip(["dq", "dk", "dv"], grads(sdpa, q, k, v)))
x = values([N, L, E], 0.15).requires_grad_()
causal = torch.triu(torch.ones(L, L, dtype=torch.bool), diagonal=1)
block = layer(x, src_mask=causal)
with open("attention_torch.json", "w") as f:
    json.dump({"N": N, "L": L, "S": S, "E": E, "H": H, "mha": cases, "sdpa": flat(sdpa), "sdpa_grads": sdpa_grads,
               "block_names": names, "block": flat(block), "block_dx": grads(block, x)[0]}, f)
