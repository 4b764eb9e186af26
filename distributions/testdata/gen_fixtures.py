"""Writes fixtures.json: log-densities, entropies, moments and KL divergences
of torch.distributions in float64, which distributions_test.go compares with.

Regenerate with Debian's python3-torch (1.13), from the repository root:

    /usr/bin/python3 distributions/testdata/gen_fixtures.py > distributions/testdata/fixtures.json
"""
import json

import torch
import torch.distributions as D

torch.set_default_dtype(torch.float64)


def t(values):
    return torch.tensor(values, dtype=torch.float64)


def param(x):
    return {"values": x.flatten().tolist(), "shape": list(x.shape)}


FAMILIES = {
    "Normal": (lambda p: D.Normal(p["loc"], p["scale"]), ["loc", "scale"]),
    "Laplace": (lambda p: D.Laplace(p["loc"], p["scale"]), ["loc", "scale"]),
    "Uniform": (lambda p: D.Uniform(p["low"], p["high"]), ["low", "high"]),
    "Bernoulli": (lambda p: D.Bernoulli(logits=p["logits"]), ["logits"]),
    "Categorical": (lambda p: D.Categorical(logits=p["logits"]), ["logits"]),
}

CASES = [
    ("Normal", {"loc": t([0.3, -1.2, 2.0]), "scale": t([0.5, 1.7, 3.0])}, t([0.1, 0.4, -2.5])),
    ("Normal", {"loc": t([[0.0], [1.5]]), "scale": t([0.25, 2.0])}, t([[0.7, -0.3], [1.5, 4.0]])),
    ("Laplace", {"loc": t([0.3, -1.2, 2.0]), "scale": t([0.5, 1.7, 3.0])}, t([0.1, 0.4, -2.5])),
    ("Uniform", {"low": t([-1.0, 0.5, 2.0]), "high": t([1.0, 3.0, 2.5])}, t([0.2, 2.9, 2.25])),
    ("Bernoulli", {"logits": t([-3.0, 0.2, 4.5, 30.0])}, t([0.0, 1.0, 1.0, 0.0])),
    ("Categorical", {"logits": t([[0.1, -2.0, 1.3, 0.4], [5.0, 0.0, -1.0, 2.5]])}, t([3.0, 0.0])),
]

KL_CASES = [
    ("Normal", {"loc": t([0.3, -1.2]), "scale": t([0.5, 1.7])}, {"loc": t([1.0, 0.2]), "scale": t([2.0, 0.9])}),
    ("Laplace", {"loc": t([0.3, -1.2]), "scale": t([0.5, 1.7])}, {"loc": t([1.0, 0.2]), "scale": t([2.0, 0.9])}),
    ("Uniform", {"low": t([0.0, -1.0]), "high": t([1.0, 0.5])}, {"low": t([-0.5, -2.0]), "high": t([1.5, 3.0])}),
    ("Bernoulli", {"logits": t([-3.0, 0.2, 4.5])}, {"logits": t([1.0, -0.7, 2.0])}),
    ("Categorical", {"logits": t([[0.1, -2.0, 1.3], [5.0, 0.0, -1.0]])}, {"logits": t([[1.0, 0.5, -0.5], [0.0, 0.0, 0.0]])}),
]


def main():
    out = {"torch": torch.__version__, "cases": [], "kl": []}
    for family, params, x in CASES:
        d = FAMILIES[family][0](params)
        case = {"family": family, "params": {k: param(v) for k, v in params.items()}, "x": param(x),
                "log_prob": param(d.log_prob(x)), "entropy": param(d.entropy())}
        if family != "Categorical":
            case["mean"] = param(d.mean)
            case["variance"] = param(d.variance)
        out["cases"].append(case)
    for family, p, q in KL_CASES:
        make = FAMILIES[family][0]
        out["kl"].append({"family": family, "p": {k: param(v) for k, v in p.items()},
                          "q": {k: param(v) for k, v in q.items()},
                          "kl": param(D.kl_divergence(make(p), make(q)))})
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
