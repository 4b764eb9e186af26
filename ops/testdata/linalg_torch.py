#!/usr/bin/python3
"""Writes linalg_torch.json: torch.linalg's values, gradients and
Hessian–vector products for nabla's linear algebra tests, float64.

For each case the inputs are stored. The scalar is the projection
L = Σᵢ Σₖ wᵢₖ·outᵢₖ over the op's outputs, with wᵢₖ = sin(0.37·k + 0.1·(i+1))
(k the element's row-major index); the gradient of L with respect to every
input is stored, and the Hessian–vector product with respect to the first
input, H·v for vₖ = cos(0.53·k + 0.2) (symmetrised, v ← ½(v + vᵀ), where
the case says "sym": the first input is symmetric and the op's derivatives
are those of its symmetric part). The Go test (linalg_torch_test.go)
computes w and v the same way.

nabla's conventions are applied to torch's results, differentiably: an
eigenvector, or a right singular vector with its left one, is signed so
that its largest component (the first of equal ones) is positive; a
Cholesky solve reads L's lower triangle (torch.cholesky_solve's gradient
does not mask it). Run from this directory:
/usr/bin/python3 linalg_torch.py
"""
import json
import math

import torch

torch.manual_seed(25)
f64 = torch.float64


def rnd(*shape):
    return torch.rand(*shape, dtype=f64) * 2 - 1


def spd(*shape):
    n = shape[-1]
    x = rnd(*shape)
    return x @ x.mT / n + torch.eye(n, dtype=f64)


def dominant(*shape):
    """A full matrix whose diagonal dominates: every triangle well conditioned."""
    n = shape[-1]
    return rnd(*shape) / n + torch.diag_embed(1 + torch.rand(*shape[:-1], dtype=f64))


def lower_factor(*shape):
    return torch.linalg.cholesky(spd(*shape))


def symmetric(*shape):
    """Well separated eigenvalues: a random rotation of 1, 2.5, 4, …"""
    n = shape[-1]
    q, _ = torch.linalg.qr(rnd(*shape))
    lam = torch.arange(n, dtype=f64) * 1.5 + 1 + 0.2 * torch.rand(*shape[:-1], dtype=f64)
    a = q @ torch.diag_embed(lam) @ q.mT
    return (a + a.mT) / 2


def orient(v):
    """Sign the columns of v so that the largest component of each (the
    first of equal ones) is positive; the signs, from the values, are
    constants to autograd."""
    idx = v.detach().abs().argmax(dim=-2, keepdim=True)
    s = torch.sign(torch.gather(v.detach(), -2, idx))
    return v * s, s


def eigh(a):
    lam, v = torch.linalg.eigh(a)
    v, _ = orient(v)
    return lam, v


def svd(a):
    u, s, vh = torch.linalg.svd(a, full_matrices=False)
    v, sign = orient(vh.mT)
    return u * sign, s, v.mT


def tri(opts):
    def f(a, b):
        upper = opts.get("Upper", False)
        if opts.get("Transpose"):
            a, upper = a.mT, not upper
        return torch.linalg.solve_triangular(a, b, upper=upper, left=not opts.get("Right", False),
                                             unitriangular=opts.get("UnitDiagonal", False))
    return f


# name, op (nabla's), torch function, inputs, options, sym
CASES = []


def case(name, op, fn, inputs, opts=None, sym=False):
    CASES.append((name, op, fn, inputs, opts or {}, sym))


case("Cholesky", "Cholesky", torch.linalg.cholesky, [spd(4, 4)], sym=True)
case("Cholesky batched", "Cholesky", torch.linalg.cholesky, [spd(2, 3, 3)], sym=True)
for opts, bshape in [({}, (4, 2)), ({"Upper": True}, (4, 3)), ({"Transpose": True}, (4, 2)),
                     ({"Upper": True, "Transpose": True, "UnitDiagonal": True}, (4, 2)),
                     ({"Right": True}, (3, 4)), ({"Right": True, "Upper": True, "Transpose": True}, (2, 4)),
                     ({"Right": True, "UnitDiagonal": True}, (2, 4))]:
    name = "TriangularSolve " + ",".join(k for k in opts) if opts else "TriangularSolve lower"
    case(name, "TriangularSolve", tri(opts), [dominant(4, 4), rnd(*bshape)], opts)
case("TriangularSolve batched upper right", "TriangularSolve", tri({"Upper": True, "Right": True}),
     [dominant(2, 3, 3), rnd(2, 2, 3)], {"Upper": True, "Right": True})
case("CholeskySolve", "CholeskySolve", lambda l, b: torch.cholesky_solve(b, l.tril()), [lower_factor(4, 4), rnd(4, 2)])
case("CholeskySolve batched", "CholeskySolve", lambda l, b: torch.cholesky_solve(b, l.tril()),
     [lower_factor(2, 3, 3), rnd(2, 3, 2)])
case("Solve", "Solve", torch.linalg.solve, [dominant(4, 4), rnd(4, 3)])
case("Solve batched", "Solve", torch.linalg.solve, [dominant(2, 3, 3), rnd(2, 3, 2)])
# SolveOp(transposed, right): op(A)·X = B or X·op(A) = B, op(A) = Aᵀ when transposed.
case("Solve transposed", "SolveOp", lambda a, b: torch.linalg.solve(a.mT, b), [dominant(4, 4), rnd(4, 2)],
     {"Transpose": True})
case("Solve right", "SolveOp", lambda a, b: torch.linalg.solve(a, b, left=False), [dominant(4, 4), rnd(3, 4)],
     {"Right": True})
case("Solve right transposed batched", "SolveOp", lambda a, b: torch.linalg.solve(a.mT, b, left=False),
     [dominant(2, 3, 3), rnd(2, 2, 3)], {"Right": True, "Transpose": True})
case("Inverse", "Inverse", torch.linalg.inv, [dominant(4, 4)])
case("Inverse batched", "Inverse", torch.linalg.inv, [dominant(2, 3, 3)])
case("Det", "Det", torch.linalg.det, [rnd(4, 4) + torch.eye(4, dtype=f64)])
case("Det batched", "Det", torch.linalg.det, [rnd(2, 3, 3) + torch.eye(3, dtype=f64)])
case("SlogDet", "SlogDet", torch.linalg.slogdet, [rnd(4, 4) - 0.5 * torch.eye(4, dtype=f64)])
case("SlogDet batched", "SlogDet", torch.linalg.slogdet, [rnd(2, 3, 3)])
case("LogDet", "LogDet", torch.logdet, [spd(4, 4)], sym=True)
case("LogDet batched", "LogDet", torch.logdet, [spd(2, 3, 3)], sym=True)
case("QR", "QR", torch.linalg.qr, [rnd(5, 3)])
case("QR square", "QR", torch.linalg.qr, [rnd(4, 4)])
case("QR batched", "QR", torch.linalg.qr, [rnd(2, 4, 3)])
case("Eigh", "Eigh", eigh, [symmetric(4, 4)], sym=True)
case("Eigh batched", "Eigh", eigh, [symmetric(2, 3, 3)], sym=True)
case("SVD tall", "SVD", svd, [rnd(5, 3)])
case("SVD wide", "SVD", svd, [rnd(3, 4)])
case("SVD batched", "SVD", svd, [rnd(2, 3, 3)])
case("MatrixExp", "MatrixExp", torch.linalg.matrix_exp, [rnd(4, 4)])
case("MatrixExp batched", "MatrixExp", torch.linalg.matrix_exp, [rnd(2, 3, 3) * 2])
case("Tril", "Tril", lambda x: torch.tril(x, 0), [rnd(3, 4)], {"K": 0})
case("Tril -1 batched", "Tril", lambda x: torch.tril(x, -1), [rnd(2, 4, 3)], {"K": -1})
case("Triu 1", "Triu", lambda x: torch.triu(x, 1), [rnd(4, 3)], {"K": 1})
case("Triu batched", "Triu", lambda x: torch.triu(x, 0), [rnd(2, 3, 3)], {"K": 0})
case("Diagonal", "Diagonal", lambda x: torch.diagonal(x, dim1=-2, dim2=-1), [rnd(3, 4)])
case("Diagonal batched", "Diagonal", lambda x: torch.diagonal(x, dim1=-2, dim2=-1), [rnd(2, 4, 3)])
case("DiagEmbed", "DiagEmbed", torch.diag_embed, [rnd(4)])
case("DiagEmbed batched", "DiagEmbed", torch.diag_embed, [rnd(2, 3)])
case("Trace", "Trace", lambda x: torch.diagonal(x, dim1=-2, dim2=-1).sum(-1), [rnd(4, 4)])
case("Trace batched", "Trace", lambda x: torch.diagonal(x, dim1=-2, dim2=-1).sum(-1), [rnd(2, 3, 4)])


def pattern(n, f):
    return torch.tensor([f(k) for k in range(n)], dtype=f64)


def tensor(t):
    return {"shape": list(t.shape), "data": [float(v) for v in t.detach().flatten()]}


out = []
for name, op, fn, inputs, opts, sym in CASES:
    xs = [x.clone().requires_grad_() for x in inputs]
    ys = fn(*xs)
    ys = list(ys) if isinstance(ys, (tuple, list)) else [ys]
    loss = sum((pattern(y.numel(), lambda k, i=i: math.sin(0.37 * k + 0.1 * (i + 1))).reshape(y.shape) * y).sum()
               for i, y in enumerate(ys) if y.requires_grad)
    grads = torch.autograd.grad(loss, xs, create_graph=True)
    v = pattern(xs[0].numel(), lambda k: math.cos(0.53 * k + 0.2)).reshape(xs[0].shape)
    if sym:
        v = (v + v.mT) / 2
    g0 = grads[0]
    hvp = torch.autograd.grad((g0 * v).sum(), xs[0], allow_unused=True)[0] if g0.requires_grad else None
    if hvp is None:
        hvp = torch.zeros_like(xs[0])
    out.append({"name": name, "op": op, "options": opts, "sym": sym,
                "inputs": [tensor(x) for x in inputs], "outputs": [tensor(y) for y in ys],
                "grads": [tensor(g) for g in grads], "hvp": tensor(hvp)})
with open("linalg_torch.json", "w") as f:
    f.write("[\n" + ",\n".join(json.dumps(c) for c in out) + "\n]\n")
