"""Writes losses_torch.json: the values of torch.nn.functional's losses in
float64 under each reduction, which loss_torch_test.go compares with.

Regenerate with Debian's python3-torch (1.13), from the repository root:

    /usr/bin/python3 nn/testdata/losses_torch.py > nn/testdata/losses_torch.json
"""
import json

import torch
import torch.nn.functional as F

torch.set_default_dtype(torch.float64)


def t(values):
    return torch.tensor(values, dtype=torch.float64)


def tensor(x):
    return {"values": x.flatten().tolist(), "shape": list(x.shape)}


probs = t([[0.2, 0.9, 0.5], [1e-50, 0.999, 0.3]])
bin_targets = t([[0.0, 1.0, 0.3], [1.0, 0.0, 0.7]])
logits = t([[-3.0, 0.5, 40.0], [2.0, -800.0, 0.25]])
w3 = t([0.5, 2.0, 1.5])
log_probs = torch.log_softmax(t([[0.1, -2.0, 1.3, 0.4], [5.0, 0.0, -1.0, 2.5], [0.0, 0.3, -0.3, 1.0]]), dim=1)
labels = t([3.0, 0.0, 2.0])
w4 = t([1.0, 0.5, 2.0, 3.0])
pred = t([[0.3, -1.2, 2.0], [4.0, 0.1, -0.6]])
target = t([[0.1, 0.4, -2.5], [3.9, 0.1, 1.0]])
var = t([[0.5, 1.7, 3.0], [1e-9, 0.2, 2.0]])
kl_target = t([[0.0, 0.3, 0.7], [0.2, 0.2, 0.6]])
counts = t([[0.0, 1.0, 3.0], [7.0, 2.0, 0.5]])
rates = t([[0.2, 1.5, 2.5], [6.0, 0.0, 1.1]])
x1 = t([0.3, -1.2, 2.0, 0.5])
x2 = t([0.1, 0.4, -2.5, 0.5])
y = t([1.0, -1.0, 1.0, -1.0])
ry = t([-1.0, 1.0, 1.0, -1.0])
e1 = t([[0.3, -1.2, 2.0], [1.0, 0.5, 0.0], [0.2, 0.2, 0.2], [1.0, 2.0, 3.0]])
# Spatial NLL: log-probabilities (N, C, d1, d2) over C = 3 classes, labels
# (N, d1, d2) with an ignored one (-100); and (N, C, d1).
spatial = torch.log_softmax(torch.sin(torch.arange(2 * 3 * 2 * 2, dtype=torch.float64) * 0.7).reshape(2, 3, 2, 2) * 2, dim=1)
spatial_labels = t([[[0.0, 2.0], [1.0, -100.0]], [[2.0, 2.0], [0.0, 1.0]]])
spatial1 = torch.log_softmax(torch.cos(torch.arange(2 * 4 * 3, dtype=torch.float64) * 1.3).reshape(2, 4, 3), dim=1)
spatial1_labels = t([[3.0, 0.0, 1.0], [1.0, 1.0, 2.0]])
e2 = t([[0.1, 0.4, -2.5], [1.0, 0.4, 0.1], [-0.2, 0.2, 0.1], [0.0, 0.0, 0.0]])

# name, inputs (by position), keyword options, the torch call.
CASES = [
    ("BCELoss", [probs, bin_targets], {}, lambda a, b, r: F.binary_cross_entropy(a, b, reduction=r)),
    ("BCELoss", [probs, bin_targets], {"weight": w3}, lambda a, b, r: F.binary_cross_entropy(a, b, weight=w3, reduction=r)),
    ("BCEWithLogitsLoss", [logits, bin_targets], {}, lambda a, b, r: F.binary_cross_entropy_with_logits(a, b, reduction=r)),
    ("BCEWithLogitsLoss", [logits, bin_targets], {"weight": w3, "pos_weight": t([3.0, 0.5, 2.0])},
     lambda a, b, r: F.binary_cross_entropy_with_logits(a, b, weight=w3, pos_weight=t([3.0, 0.5, 2.0]), reduction=r)),
    ("NLLLoss", [log_probs, labels], {}, lambda a, b, r: F.nll_loss(a, b.long(), reduction=r)),
    ("NLLLoss", [log_probs, labels], {"weight": w4}, lambda a, b, r: F.nll_loss(a, b.long(), weight=w4, reduction=r)),
    ("NLLLoss", [log_probs, t([3.0, -100.0, 2.0])], {"weight": w4},
     lambda a, b, r: F.nll_loss(a, b.long(), weight=w4, reduction=r)),
    ("NLLLoss", [log_probs, labels], {"ignore_index": 2}, lambda a, b, r: F.nll_loss(a, b.long(), ignore_index=2, reduction=r)),
    ("NLLLoss", [spatial, spatial_labels], {}, lambda a, b, r: F.nll_loss(a, b.long(), reduction=r)),
    ("NLLLoss", [spatial, spatial_labels], {"weight": w3}, lambda a, b, r: F.nll_loss(a, b.long(), weight=w3, reduction=r)),
    ("NLLLoss", [spatial, spatial_labels.clamp(min=1.0)], {"weight": w3, "ignore_index": 2},
     lambda a, b, r: F.nll_loss(a, b.long(), weight=w3, ignore_index=2, reduction=r)),
    ("NLLLoss", [spatial1, spatial1_labels], {"weight": w4}, lambda a, b, r: F.nll_loss(a, b.long(), weight=w4, reduction=r)),
    ("NLLLoss", [log_probs[1], t(2.0)], {"weight": w4}, lambda a, b, r: F.nll_loss(a, b.long(), weight=w4, reduction=r)),
    ("GaussianNLLLoss", [pred, target, var], {}, lambda a, b, v, r: F.gaussian_nll_loss(a, b, v, reduction=r)),
    ("GaussianNLLLoss", [pred, target, var], {"full": True, "eps": 1e-3},
     lambda a, b, v, r: F.gaussian_nll_loss(a, b, v, full=True, eps=1e-3, reduction=r)),
    ("GaussianNLLLoss", [pred, target, t([0.5, 2.0])], {}, lambda a, b, v, r: F.gaussian_nll_loss(a, b, v, reduction=r)),
    ("KLDivLoss", [log_probs[:2, :3], kl_target], {}, lambda a, b, r: F.kl_div(a, b, reduction=r)),
    ("KLDivLoss", [log_probs[:2, :3], torch.log(kl_target + 0.1)], {"log_target": True},
     lambda a, b, r: F.kl_div(a, b, reduction=r, log_target=True)),
    ("PoissonNLLLoss", [pred, counts], {}, lambda a, b, r: F.poisson_nll_loss(a, b, reduction=r)),
    ("PoissonNLLLoss", [rates, counts], {"log_input": False, "full": True, "eps": 1e-8},
     lambda a, b, r: F.poisson_nll_loss(a, b, log_input=False, full=True, eps=1e-8, reduction=r)),
    ("HuberLoss", [pred, target], {}, lambda a, b, r: F.huber_loss(a, b, reduction=r)),
    ("HuberLoss", [pred, target], {"delta": 0.5}, lambda a, b, r: F.huber_loss(a, b, delta=0.5, reduction=r)),
    ("SmoothL1Loss", [pred, target], {}, lambda a, b, r: F.smooth_l1_loss(a, b, reduction=r)),
    ("SmoothL1Loss", [pred, target], {"beta": 0.5}, lambda a, b, r: F.smooth_l1_loss(a, b, beta=0.5, reduction=r)),
    ("SmoothL1Loss", [pred, target], {"beta": 0.0}, lambda a, b, r: F.smooth_l1_loss(a, b, beta=0.0, reduction=r)),
    ("MarginRankingLoss", [x1, x2, ry], {}, lambda a, b, c, r: F.margin_ranking_loss(a, b, c, reduction=r)),
    ("MarginRankingLoss", [x1, x2, ry], {"margin": 0.7}, lambda a, b, c, r: F.margin_ranking_loss(a, b, c, margin=0.7, reduction=r)),
    ("HingeEmbeddingLoss", [x1, y], {}, lambda a, b, r: F.hinge_embedding_loss(a, b, reduction=r)),
    ("HingeEmbeddingLoss", [x1, y], {"margin": 0.2}, lambda a, b, r: F.hinge_embedding_loss(a, b, margin=0.2, reduction=r)),
    ("SoftMarginLoss", [t([0.3, -1.2, 40.0, -800.0]), y], {}, lambda a, b, r: F.soft_margin_loss(a, b, reduction=r)),
    ("TripletMarginLoss", [e1, e2, e1.flip(0)], {}, lambda a, b, c, r: F.triplet_margin_loss(a, b, c, reduction=r)),
    ("TripletMarginLoss", [e1, e2, e1.flip(0)], {"margin": 0.3},
     lambda a, b, c, r: F.triplet_margin_loss(a, b, c, margin=0.3, reduction=r)),
    ("MultiMarginLoss", [log_probs, labels], {}, lambda a, b, r: F.multi_margin_loss(a, b.long(), reduction=r)),
    ("MultiMarginLoss", [log_probs, labels], {"margin": 0.4}, lambda a, b, r: F.multi_margin_loss(a, b.long(), margin=0.4, reduction=r)),
    ("MultiMarginLoss", [log_probs[0], t(3.0)], {"margin": 0.4}, lambda a, b, r: F.multi_margin_loss(a, b.long(), margin=0.4, reduction=r)),
    ("CosineEmbeddingLoss", [e1, e2, y], {}, lambda a, b, c, r: F.cosine_embedding_loss(a, b, c, reduction=r)),
    ("CosineEmbeddingLoss", [e1, e2, y], {"margin": 0.2}, lambda a, b, c, r: F.cosine_embedding_loss(a, b, c, margin=0.2, reduction=r)),
]


def main():
    out = {"torch": torch.__version__, "cases": []}
    for name, inputs, options, call in CASES:
        case = {"loss": name, "inputs": [tensor(x) for x in inputs],
                "options": {k: (tensor(v) if isinstance(v, torch.Tensor) else v) for k, v in options.items()}}
        for r in ["none", "mean", "sum"]:
            case[r] = tensor(call(*inputs, r))
        if name == "KLDivLoss":
            case["batchmean"] = tensor(call(*inputs, "batchmean"))
        out["cases"].append(case)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
