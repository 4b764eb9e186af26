"""Writes torch_fixture.json: the GP's negative log marginal likelihood, its
gradient and its Hessian at a fixed theta, computed by PyTorch in float64
(torch.autograd.grad and torch.autograd.functional.hessian), for
examples/gp's TestAgainstPyTorch.

    /usr/bin/python3 examples/gp/testdata/torch_fixture.py > examples/gp/testdata/torch_fixture.json

theta = (log l, log sf, log sn); K = sf^2 exp(-(x - x')^2 / (2 l^2)) + sn^2 I;
NLML = y^T K^-1 y / 2 + log|K| / 2 + n/2 log(2 pi), here through
torch.linalg.cholesky, torch.cholesky_solve and torch.logdet.
"""

import csv
import json
import math
import os
import sys

import torch

THETA = [0.3, -0.2, -1.2]


def load(path):
    with open(path) as f:
        rows = list(csv.reader(f))[1:]
    x = torch.tensor([float(r[0]) for r in rows], dtype=torch.float64)
    y = torch.tensor([float(r[1]) for r in rows], dtype=torch.float64)
    return x, y


def nlml(theta, x, y):
    length, signal, noise = torch.exp(theta[0]), torch.exp(theta[1]), torch.exp(theta[2])
    d2 = (x[:, None] - x[None, :]) ** 2
    k = signal**2 * torch.exp(-d2 / (2 * length**2)) + noise**2 * torch.eye(len(x), dtype=x.dtype)
    chol = torch.linalg.cholesky(k)
    alpha = torch.cholesky_solve(y[:, None], chol)
    n = len(x)
    return 0.5 * (y[:, None] * alpha).sum() + 0.5 * torch.logdet(k) + n / 2 * math.log(2 * math.pi)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    x, y = load(os.path.join(here, "data.csv"))
    theta = torch.tensor(THETA, dtype=torch.float64, requires_grad=True)
    value = nlml(theta, x, y)
    (grad,) = torch.autograd.grad(value, theta)
    hess = torch.autograd.functional.hessian(lambda t: nlml(t, x, y), theta.detach())
    json.dump(
        {
            "torch": torch.__version__,
            "theta": THETA,
            "nlml": value.item(),
            "grad": grad.tolist(),
            "hessian": hess.tolist(),
        },
        sys.stdout,
        indent=1,
    )
    print()


if __name__ == "__main__":
    main()
