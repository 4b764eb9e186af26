"""W2 in PyTorch eager: 200 elementwise ops on a 16-element vector (tanh,
·c, sin, +c, exp, ·0.5 in turn), forward and backward (the gradient of the
sum of the output); the time per run divided by 200, in ns.
"""

import common

torch = common.require_torch()

LENGTH = 200
WIDTH = 16


def chain(x, c):
    y = x
    for i in range(LENGTH):
        k = i % 6
        if k == 0:
            y = torch.tanh(y)
        elif k == 1:
            y = y * c
        elif k == 2:
            y = torch.sin(y)
        elif k == 3:
            y = y + c
        elif k == 4:
            y = torch.exp(y)
        else:
            y = y * 0.5
    return y


def main():
    torch.set_num_threads(common.threads()[-1])
    for dname, dtype in common.dtypes(torch):
        torch.manual_seed(1)
        c = torch.rand(WIDTH, dtype=dtype) - 0.5
        x = (torch.rand(WIDTH, dtype=dtype) * 2 - 1).requires_grad_()

        def run():
            x.grad = None
            chain(x, c).sum().backward()

        ns = common.measure(run, 1e9 / LENGTH)
        common.report(f"W2 {dname}", "ns/graphop", ns)


if __name__ == "__main__":
    main()
