"""W3 in PyTorch eager: second derivatives of
f(x) = sum(tanh(tanh(x·W1 + b1)·W2 + b2)), x in R^64, W1 and W2 64×64, in
float64, with respect to x:

  hvp-backward        H·v by double backward (grad of grad·v)
  hvp-functional      torch.autograd.functional.hvp
  hvp-functorch       forward over reverse: jvp of grad (torch.func or
                      functorch, where installed)
  hessian-functional  torch.autograd.functional.hessian (64 backward passes)
  hessian-vectorized  the same with vectorize=True (vmap)
  hessian-functorch   jacfwd of jacrev (torch.func or functorch)

in µs per call, on 1 thread and on all; "hvp" and "hessian" repeat the
fastest of each, the figures nabla's are compared with.
"""

import common

torch = common.require_torch()
try:
    import torch.func as func  # PyTorch 2
except ImportError:
    try:
        import functorch as func  # PyTorch 1.13 ships it separately
    except ImportError:
        func = None

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

    def hvp_backward():
        x = x0.detach().requires_grad_()
        (g,) = torch.autograd.grad(f(x), x, create_graph=True)
        (hv,) = torch.autograd.grad(g @ v, x)
        return hv

    def hvp_functional():
        return torch.autograd.functional.hvp(f, x0, v)[1]

    def hessian_functional():
        return torch.autograd.functional.hessian(f, x0)

    def hessian_vectorized():
        return torch.autograd.functional.hessian(f, x0, vectorize=True)

    hvps = [("hvp-backward", hvp_backward), ("hvp-functional", hvp_functional)]
    hessians = [("hessian-functional", hessian_functional), ("hessian-vectorized", hessian_vectorized)]
    if func is not None:
        grad_f = func.grad(f)
        hessian_f = func.hessian(f)
        hvps.append(("hvp-functorch", lambda: func.jvp(grad_f, (x0,), (v,))[1]))
        hessians.append(("hessian-functorch", lambda: hessian_f(x0)))

    # Every way must agree with the plain Hessian before it is timed; one
    # that fails to run (vmap is young in older releases) is left out.
    h = hessian_functional()
    cases = {"hvp": [], "hessian": []}
    for kind, ways, want in (("hvp", hvps, h @ v), ("hessian", hessians, h)):
        for name, fn in ways:
            try:
                got = fn()
            except Exception as e:
                print(f"skipped: W3 {name} ({type(e).__name__}: {e})")
                continue
            if not torch.allclose(got, want, rtol=1e-10, atol=1e-12):
                raise SystemExit(f"W3: {name} disagrees with the Hessian")
            cases[kind].append((name, fn))

    for threads in common.threads():
        torch.set_num_threads(threads)
        for kind, ways in cases.items():
            best = None
            for name, fn in ways:
                us = common.measure(fn, 1e6)
                common.report(f"W3 f64 {name} threads={threads}", "us/op", us)
                best = us if best is None else min(best, us)
            if best is not None:
                common.report(f"W3 f64 {kind} threads={threads}", "us/op", best)


if __name__ == "__main__":
    main()
