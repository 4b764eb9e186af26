"""GP in PyTorch eager: the negative log marginal likelihood of a Gaussian
process with the RBF kernel, its gradient and its 3x3 Hessian with respect
to theta = (log l, log sf, log sn), float64, on examples/gp's BenchData(n):
n points x_i = -5 + 10 i/(n-1), y_i = sin x_i + 0.3 sin 3x_i + 0.1 sin 17i,
at theta = (0.3, -0.2, -1.2), the figures beside examples/gp's BenchmarkGP:

  hessian             torch.autograd.functional.hessian (reverse over
                      reverse: the gradient with create_graph, then one
                      backward pass per row)
  hessian-vectorized  the same with vectorize=True
  grad+hessian        the gradient by torch.autograd.grad and the Hessian
                      by torch.autograd.functional.hessian, as BenchmarkGP
                      computes both

in ms per call, on 1 thread and on all.
"""

import math

import common

torch = common.require_torch()

THETA = [0.3, -0.2, -1.2]


def bench_data(n):
    i = torch.arange(n, dtype=torch.float64)
    x = -5 + 10 * i / (n - 1)
    y = torch.sin(x) + 0.3 * torch.sin(3 * x) + 0.1 * torch.sin(17 * i)
    return x, y


def nlml(theta, x, y):
    length2, signal2, noise2 = torch.exp(2 * theta[0]), torch.exp(2 * theta[1]), torch.exp(2 * theta[2])
    d2 = (x[:, None] - x[None, :]) ** 2
    k = signal2 * torch.exp(-0.5 * d2 / length2) + noise2 * torch.eye(len(x), dtype=x.dtype)
    chol = torch.linalg.cholesky(k)
    alpha = torch.cholesky_solve(y[:, None], chol)
    logdet = 2 * torch.log(torch.diagonal(chol)).sum()
    return 0.5 * (y[:, None] * alpha).sum() + 0.5 * logdet + len(x) / 2 * math.log(2 * math.pi)


def main():
    theta0 = torch.tensor(THETA, dtype=torch.float64)
    for n in (50, 500):
        x, y = bench_data(n)
        f = lambda t: nlml(t, x, y)

        def hessian():
            return torch.autograd.functional.hessian(f, theta0)

        def hessian_vectorized():
            return torch.autograd.functional.hessian(f, theta0, vectorize=True)

        def grad_hessian():
            t = theta0.clone().requires_grad_()
            (g,) = torch.autograd.grad(f(t), t)
            return g, torch.autograd.functional.hessian(f, theta0)

        for threads in common.threads():
            torch.set_num_threads(threads)
            for name, fn in (("hessian", hessian), ("hessian-vectorized", hessian_vectorized), ("grad+hessian", grad_hessian)):
                try:
                    value = common.measure(fn, 1e3)
                except RuntimeError as err:  # vectorize=True needs vmap rules
                    print(f"GP n={n} {name} threads={threads} skipped: {err}".splitlines()[0])
                    continue
                common.report(f"GP n={n} {name} threads={threads}", "ms/op", value)


if __name__ == "__main__":
    main()
