"""W3 in PyTorch eager: second derivatives of
f(x) = sum(tanh(tanh(x·W1 + b1)·W2 + b2)), x in R^64, W1 and W2 64×64, in
float64, with respect to x:

  hvp                 H·v by double backward (grad of grad·v)
  hvp-functional      torch.autograd.functional.hvp
  hessian             torch.autograd.functional.hessian (64 backward passes)
  hessian-vectorized  the same with vectorize=True (vmap), where it works

in µs per call, on 1 thread and on all.
"""

import common

torch = common.require_torch()

DIM = 64


def main():
    torch.manual_seed(1)
    dtype = torch.float64
    scale = DIM ** -0.5
    w1 = (torch.rand(DIM, DIM, dtype=dtype) * 2 - 1) * scale
    b1 = (torch.rand(DIM, dtype=dtype) * 2 - 1) * 0.1
    w2 = (torch.rand(DIM, DIM, dtype=dtype) * 2 - 1) * scale
    b2 = (torch.rand(DIM, dtype=dtype) * 2 - 1) * 0.1
    x0 = torch.rand(DIM, dtype=dtype) * 2 - 1
    v = torch.rand(DIM, dtype=dtype) * 2 - 1

    def f(x):
        return torch.tanh(torch.tanh(x @ w1 + b1) @ w2 + b2).sum()

    def hvp():
        x = x0.detach().requires_grad_()
        (g,) = torch.autograd.grad(f(x), x, create_graph=True)
        (hv,) = torch.autograd.grad(g @ v, x)
        return hv

    def hvp_functional():
        return torch.autograd.functional.hvp(f, x0, v)[1]

    def hessian():
        return torch.autograd.functional.hessian(f, x0)

    def hessian_vectorized():
        return torch.autograd.functional.hessian(f, x0, vectorize=True)

    # The four must agree before they are timed.
    h = hessian()
    for name, got in (("hvp", hvp()), ("hvp-functional", hvp_functional())):
        if not torch.allclose(got, h @ v, rtol=1e-10, atol=1e-12):
            raise SystemExit(f"W3: {name} disagrees with hessian·v")
    cases = [("hvp", hvp), ("hvp-functional", hvp_functional), ("hessian", hessian)]
    try:
        if torch.allclose(hessian_vectorized(), h, rtol=1e-10, atol=1e-12):
            cases.append(("hessian-vectorized", hessian_vectorized))
    except Exception as e:  # vmap is experimental in older releases
        print(f"skipped: W3 hessian-vectorized ({type(e).__name__})")

    for threads in common.threads():
        torch.set_num_threads(threads)
        for name, fn in cases:
            us = common.measure(fn, 1e6)
            common.report(f"W3 f64 {name} threads={threads}", "us/op", us)


if __name__ == "__main__":
    main()
