"""Writes fixtures.json: log-densities, entropies, moments and KL divergences
of torch.distributions in float64, which distributions_test.go compares with.

Regenerate with Debian's python3-torch (1.13) and python3-mpmath, from the
repository root:

    /usr/bin/python3 distributions/testdata/gen_fixtures.py > distributions/testdata/fixtures.json
"""
import json
import math

import mpmath
import torch
import torch.distributions as D

torch.set_default_dtype(torch.float64)


def t(values):
    return torch.tensor(values, dtype=torch.float64)


def param(x):
    # JSON has no infinities: they are written as the strings "inf", "-inf".
    values = [v if math.isfinite(v) else str(v) for v in x.flatten().tolist()]
    return {"values": values, "shape": list(x.shape)}


FAMILIES = {
    "Normal": (lambda p: D.Normal(p["loc"], p["scale"]), ["loc", "scale"]),
    "Laplace": (lambda p: D.Laplace(p["loc"], p["scale"]), ["loc", "scale"]),
    "Uniform": (lambda p: D.Uniform(p["low"], p["high"]), ["low", "high"]),
    "Bernoulli": (lambda p: D.Bernoulli(logits=p["logits"]), ["logits"]),
    "Categorical": (lambda p: D.Categorical(logits=p["logits"]), ["logits"]),
    "Gamma": (lambda p: D.Gamma(p["concentration"], p["rate"]), ["concentration", "rate"]),
    "Beta": (lambda p: D.Beta(p["concentration1"], p["concentration0"]), ["concentration1", "concentration0"]),
    "Dirichlet": (lambda p: D.Dirichlet(p["concentration"]), ["concentration"]),
    "StudentT": (lambda p: D.StudentT(p["df"], p["loc"], p["scale"]), ["df", "loc", "scale"]),
    "MultivariateNormal": (lambda p: D.MultivariateNormal(p["loc"], scale_tril=p["scale_tril"]), ["loc", "scale_tril"]),
}

L1 = t([[1.5, 0.0, 0.0], [-0.4, 0.8, 0.0], [0.3, 0.2, 2.1]])
L2 = t([[0.7, 0.0, 0.0], [0.5, 1.3, 0.0], [-0.6, 0.1, 0.9]])

CASES = [
    ("Normal", {"loc": t([0.3, -1.2, 2.0]), "scale": t([0.5, 1.7, 3.0])}, t([0.1, 0.4, -2.5])),
    ("Normal", {"loc": t([[0.0], [1.5]]), "scale": t([0.25, 2.0])}, t([[0.7, -0.3], [1.5, 4.0]])),
    ("Laplace", {"loc": t([0.3, -1.2, 2.0]), "scale": t([0.5, 1.7, 3.0])}, t([0.1, 0.4, -2.5])),
    ("Uniform", {"low": t([-1.0, 0.5, 2.0]), "high": t([1.0, 3.0, 2.5])}, t([0.2, 2.9, 2.25])),
    ("Bernoulli", {"logits": t([-3.0, 0.2, 4.5, 30.0])}, t([0.0, 1.0, 1.0, 0.0])),
    ("Categorical", {"logits": t([[0.1, -2.0, 1.3, 0.4], [5.0, 0.0, -1.0, 2.5]])}, t([3.0, 0.0])),
    ("Gamma", {"concentration": t([0.3, 1.0, 2.5, 40.0]), "rate": t([1.0, 0.5, 2.0, 3.0])}, t([0.2, 1.7, 1e-3, 13.0])),
    ("Gamma", {"concentration": t([[0.7], [5.0]]), "rate": t([1.5, 0.2])}, t([[0.1, 4.0], [30.0, 2.5]])),
    ("Beta", {"concentration1": t([0.5, 1.0, 2.5, 30.0]), "concentration0": t([0.5, 3.0, 1.0, 12.0])},
     t([0.1, 0.4, 0.999, 0.7])),
    ("Dirichlet", {"concentration": t([[0.5, 1.0, 2.5], [4.0, 0.2, 1.5]])}, t([[0.2, 0.3, 0.5], [0.7, 0.01, 0.29]])),
    ("StudentT", {"df": t([2.5, 4.0, 30.0]), "loc": t([0.3, -1.2, 2.0]), "scale": t([0.5, 1.7, 3.0])},
     t([0.1, 0.4, -2.5])),
    ("MultivariateNormal", {"loc": t([0.3, -1.2, 2.0]), "scale_tril": L1}, t([[0.1, 0.4, -2.5], [1.0, -1.0, 0.0]])),
    ("MultivariateNormal", {"loc": t([[0.3, -1.2, 2.0], [1.0, 0.0, -0.5]]), "scale_tril": torch.stack([L1, L2])},
     t([0.1, 0.4, -2.5])),
]

KL_CASES = [
    ("Normal", {"loc": t([0.3, -1.2]), "scale": t([0.5, 1.7])}, {"loc": t([1.0, 0.2]), "scale": t([2.0, 0.9])}),
    ("Laplace", {"loc": t([0.3, -1.2]), "scale": t([0.5, 1.7])}, {"loc": t([1.0, 0.2]), "scale": t([2.0, 0.9])}),
    ("Uniform", {"low": t([0.0, -1.0]), "high": t([1.0, 0.5])}, {"low": t([-0.5, -2.0]), "high": t([1.5, 3.0])}),
    ("Bernoulli", {"logits": t([-3.0, 0.2, 4.5])}, {"logits": t([1.0, -0.7, 2.0])}),
    ("Categorical", {"logits": t([[0.1, -2.0, 1.3], [5.0, 0.0, -1.0]])}, {"logits": t([[1.0, 0.5, -0.5], [0.0, 0.0, 0.0]])}),
    ("Gamma", {"concentration": t([0.3, 2.5, 40.0]), "rate": t([1.0, 2.0, 3.0])},
     {"concentration": t([1.2, 0.7, 35.0]), "rate": t([0.4, 2.5, 3.5])}),
    ("Beta", {"concentration1": t([0.5, 2.5, 30.0]), "concentration0": t([0.5, 1.0, 12.0])},
     {"concentration1": t([1.5, 0.8, 25.0]), "concentration0": t([2.0, 0.3, 14.0])}),
    ("Dirichlet", {"concentration": t([[0.5, 1.0, 2.5], [4.0, 0.2, 1.5]])},
     {"concentration": t([[1.0, 1.0, 1.0], [2.0, 0.7, 3.0]])}),
    ("MultivariateNormal", {"loc": t([0.3, -1.2, 2.0]), "scale_tril": L1},
     {"loc": t([[1.0, 0.0, -0.5], [0.0, 0.0, 0.0]]), "scale_tril": torch.stack([L2, L1])}),
]

# Divergences between families: p's family, its parameters, q's family and
# its; among them PyTorch's +∞ where p's support is not inside q's.
BETA = {"concentration1": t([0.5, 2.5, 30.0]), "concentration0": t([0.5, 1.0, 12.0])}
GAMMA = {"concentration": t([0.3, 2.5, 40.0]), "rate": t([1.0, 2.0, 3.0])}
NORMAL = {"loc": t([0.3, -1.2, 2.0]), "scale": t([0.5, 1.7, 3.0])}
LAPLACE = {"loc": t([1.0, 0.2, -0.5]), "scale": t([2.0, 0.9, 0.3])}
KL_CROSS = [
    ("Beta", BETA, "Gamma", GAMMA),
    ("Beta", BETA, "Normal", NORMAL),
    ("Beta", BETA, "Uniform", {"low": t([-0.5, 0.0, 0.1]), "high": t([1.5, 1.0, 2.0])}),
    ("Gamma", GAMMA, "Normal", NORMAL),
    ("Laplace", LAPLACE, "Normal", NORMAL),
    ("Normal", NORMAL, "Laplace", LAPLACE),
    ("Uniform", {"low": t([0.1, 0.25, -0.1]), "high": t([0.9, 0.5, 0.5])}, "Beta", BETA),
    ("Uniform", {"low": t([0.1, 2.0, -1.0]), "high": t([0.9, 7.5, 3.0])}, "Gamma", GAMMA),
    ("Uniform", {"low": t([0.1, 2.0, -1.0]), "high": t([0.9, 7.5, 3.0])}, "Normal", NORMAL),
    ("Gamma", GAMMA, "Beta", BETA),
    ("Gamma", GAMMA, "Uniform", {"low": t([-0.5, 0.0, 0.1]), "high": t([1.5, 1.0, 2.0])}),
    ("Laplace", LAPLACE, "Beta", BETA),
    ("Laplace", LAPLACE, "Gamma", GAMMA),
    ("Laplace", LAPLACE, "Uniform", {"low": t([-0.5, 0.0, 0.1]), "high": t([1.5, 1.0, 2.0])}),
    ("Normal", NORMAL, "Beta", BETA),
    ("Normal", NORMAL, "Gamma", GAMMA),
    ("Normal", NORMAL, "Uniform", {"low": t([-0.5, 0.0, 0.1]), "high": t([1.5, 1.0, 2.0])}),
]

# Concentrations and standard gamma draws at which the reparameterised
# derivative dx/dα is compared.
GRAD_A = [0.05, 0.3, 1.0, 2.5, 40.0, 0.3, 2.5, 7.0, 150.0]
GRAD_X = [0.01, 0.2, 1.5, 0.4, 45.0, 3.0, 12.0, 1.0, 140.0]


def gamma_grad(a, x):
    """dx/dα = ∂Q(α, x)/∂α / p(x; α), Q the regularized upper incomplete gamma."""
    a, x = mpmath.mpf(a), mpmath.mpf(x)
    dq = mpmath.diff(lambda s: mpmath.gammainc(s, x, mpmath.inf, regularized=True), a)
    return float(dq / (x ** (a - 1) * mpmath.exp(-x) / mpmath.gamma(a)))


# Points at which lgamma and polygamma of orders 0 to 3 are compared.
SPECIAL_X = t([1e-3, 0.1, 0.5, 1.0, 1.5, 2.0, 3.7, 9.9, 10.0, 10.5, 27.0, 150.0, 1e4, -0.5, -2.7])


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
    for pf, p, qf, q in KL_CROSS:
        kl = D.kl_divergence(FAMILIES[pf][0](p), FAMILIES[qf][0](q))
        out["kl"].append({"family": pf, "q_family": qf, "p": {k: param(v) for k, v in p.items()},
                          "q": {k: param(v) for k, v in q.items()}, "kl": param(kl)})
    # torch's lgamma and digamma, and mpmath's polygamma at 30 digits:
    # torch 1.13's trigamma is accurate to about 1e-9 only.
    mpmath.mp.dps = 30
    exact = [[float(mpmath.polygamma(n, mpmath.mpf(float(x)))) for x in SPECIAL_X] for n in range(4)]
    out["special"] = {"x": param(SPECIAL_X), "lgamma": param(torch.lgamma(SPECIAL_X)),
                      "digamma": param(torch.digamma(SPECIAL_X)),
                      "polygamma": [param(t(v)) for v in exact]}
    out["gamma_grad"] = {"alpha": GRAD_A, "x": GRAD_X, "exact": [gamma_grad(a, x) for a, x in zip(GRAD_A, GRAD_X)],
                         "torch": torch._standard_gamma_grad(t(GRAD_A), t(GRAD_X)).tolist()}
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
