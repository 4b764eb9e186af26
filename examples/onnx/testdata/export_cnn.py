"""Writes cnn.onnx, the PyTorch CNN that examples/onnx imports and fine-tunes.

Run from the repository root with Debian's python3-torch (PyTorch 1.13):

    /usr/bin/python3 examples/onnx/testdata/export_cnn.py

The network (two blocks of 3x3 convolution, batch norm, ReLU and 2x2 max
pooling, then a linear layer) is trained briefly, one pass of SGD over the
first 700 of the UCI digits shipped in examples/mlp/testdata (pixels / 16,
8x8), from a fixed seed, and exported in evaluation mode with a symbolic
batch dimension. cnn.json holds PyTorch's logits for the first 8 test
images (rows 1400 on, which the example keeps for testing) and its accuracy
on all of them, for the example's test to compare with.
"""

import gzip
import json
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
DIGITS = os.path.join(HERE, "..", "..", "mlp", "testdata", "digits.csv.gz")
TEST_FROM = 1400


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(16)
        self.fc = nn.Linear(16 * 2 * 2, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.max_pool2d(F.relu(self.bn2(self.conv2(x))), 2)
        return self.fc(torch.flatten(x, 1))


def main():
    with gzip.open(DIGITS, "rt") as f:
        rows = np.loadtxt(f, delimiter=",")
    x = torch.tensor(rows[:, :64] / 16, dtype=torch.float32).reshape(-1, 1, 8, 8)
    y = torch.tensor(rows[:, 64], dtype=torch.int64)

    torch.manual_seed(0)
    model = CNN()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    model.train()
    for i in range(0, 700, 32):
        opt.zero_grad()
        F.cross_entropy(model(x[i:i + 32]), y[i:i + 32]).backward()
        opt.step()
    model.eval()

    torch.onnx.export(model, (x[:1],), os.path.join(HERE, "cnn.onnx"), input_names=["input"],
                      output_names=["logits"], dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}},
                      opset_version=17, do_constant_folding=False, training=torch.onnx.TrainingMode.PRESERVE)
    with torch.no_grad():
        logits = model(x[TEST_FROM:])
    accuracy = (logits.argmax(1) == y[TEST_FROM:]).double().mean().item()
    with open(os.path.join(HERE, "cnn.json"), "w") as f:
        json.dump({"test_from": TEST_FROM, "logits": logits[:8].tolist(), "accuracy": accuracy}, f)
    print("test accuracy", accuracy)


if __name__ == "__main__":
    main()
