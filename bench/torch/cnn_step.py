"""The Fashion-MNIST network of examples/cnn in PyTorch eager: one training
step (forward, backward, Adam) on a batch of 64 float32 images, the
workload `go test -run '^$' -bench Step ./examples/cnn/` times in nabla.
Prints one line per thread count; skipped without torch.
"""

import collections

import common

torch = common.require_torch()
nn = torch.nn


def model():
    return nn.Sequential(collections.OrderedDict([
        ("conv1", nn.Conv2d(1, 32, 3, padding=1)), ("bn1", nn.BatchNorm2d(32)), ("relu1", nn.ReLU()),
        ("pool1", nn.MaxPool2d(2)),
        ("conv2", nn.Conv2d(32, 64, 3, padding=1)), ("bn2", nn.BatchNorm2d(64)), ("relu2", nn.ReLU()),
        ("pool2", nn.MaxPool2d(2)),
        ("flatten", nn.Flatten()), ("fc", nn.Linear(64 * 7 * 7, 10)),
    ]))


def main():
    torch.manual_seed(1)
    x = torch.rand(64, 1, 28, 28)
    y = torch.randint(0, 10, (64,))
    for threads in common.threads():
        torch.set_num_threads(threads)
        net = model()
        opt = torch.optim.Adam(net.parameters())

        def step():
            opt.zero_grad(set_to_none=True)
            torch.nn.functional.cross_entropy(net(x), y).backward()
            opt.step()

        common.report(f"CNN f32 adam threads={threads}", "ms/step", common.measure(step, 1e3))


if __name__ == "__main__":
    main()
