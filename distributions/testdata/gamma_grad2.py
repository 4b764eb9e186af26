"""Writes gamma_grad2.json: the second derivative d²x/dα² of a standard
gamma draw x at its fixed quantile (implicit reparameterisation), from
mpmath at 40 digits, which gamma_grad_internal_test.go compares with.
Differentiating Q(α, x(α)) = q twice, Q the regularized upper incomplete
gamma function:

    x'  = −Q_α / Q_x,
    x'' = −(Q_αα + 2·Q_αx·x' + Q_xx·x'²) / Q_x.

Regenerate with python3-mpmath, from the repository root:

    /usr/bin/python3 distributions/testdata/gamma_grad2.py > distributions/testdata/gamma_grad2.json
"""
import json

import mpmath

mpmath.mp.dps = 40

# The points of gen_fixtures.py's first derivatives.
GRAD_A = [0.05, 0.3, 1.0, 2.5, 40.0, 0.3, 2.5, 7.0, 150.0]
GRAD_X = [0.01, 0.2, 1.5, 0.4, 45.0, 3.0, 12.0, 1.0, 140.0]


def Q(a, x):
    return mpmath.gammainc(a, x, mpmath.inf, regularized=True)


def second(a, x):
    a, x = mpmath.mpf(a), mpmath.mpf(x)
    qa = mpmath.diff(Q, (a, x), (1, 0))
    qx = mpmath.diff(Q, (a, x), (0, 1))
    qaa = mpmath.diff(Q, (a, x), (2, 0))
    qax = mpmath.diff(Q, (a, x), (1, 1))
    qxx = mpmath.diff(Q, (a, x), (0, 2))
    d1 = -qa / qx
    return float(d1), float(-(qaa + 2 * qax * d1 + qxx * d1 ** 2) / qx)


def main():
    pairs = [second(a, x) for a, x in zip(GRAD_A, GRAD_X)]
    print(json.dumps({"alpha": GRAD_A, "x": GRAD_X, "first": [p[0] for p in pairs],
                      "second": [p[1] for p in pairs]}, indent=1))


if __name__ == "__main__":
    main()
