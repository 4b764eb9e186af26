"""W1 in PyTorch eager: one training step of a 784-256(tanh)-256(tanh)-10
perceptron, mean softmax cross-entropy over a batch of 64, with SGD
(lr 0.01) or Adam (lr 0.01, other settings PyTorch's defaults), in float32
and float64, on 1 thread and on all. Random data with a fixed seed.
"""

import common

torch = common.require_torch()
import torch.nn.functional as F  # noqa: E402

SIZES = [784, 256, 256, 10]
BATCH = 64
LR = 0.01


def model(dtype):
    layers = []
    for i in range(1, len(SIZES)):
        layers.append(torch.nn.Linear(SIZES[i - 1], SIZES[i]))
        if i < len(SIZES) - 1:
            layers.append(torch.nn.Tanh())
    return torch.nn.Sequential(*layers).to(dtype)


def optimizer(name, params):
    if name == "adam":
        return torch.optim.Adam(params, lr=LR)
    return torch.optim.SGD(params, lr=LR)


def main():
    for threads in common.threads():
        torch.set_num_threads(threads)
        for dname, dtype in common.dtypes(torch):
            for opt_name in ("sgd", "adam"):
                torch.manual_seed(1)
                net = model(dtype)
                opt = optimizer(opt_name, net.parameters())
                x = torch.rand(BATCH, SIZES[0], dtype=dtype) * 2 - 1
                y = torch.randint(0, SIZES[-1], (BATCH,))

                def step():
                    opt.zero_grad(set_to_none=True)
                    F.cross_entropy(net(x), y).backward()
                    opt.step()

                ms = common.measure(step, 1e3)
                common.report(f"W1 {dname} {opt_name} threads={threads}", "ms/step", ms)


if __name__ == "__main__":
    main()
