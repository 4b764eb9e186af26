"""Exports the models of BenchmarkONNXInference (bench/onnx_test.go).

    /usr/bin/python3 bench/torch/onnx_models.py DIR

writes DIR/lenet.onnx (LeNet-5 with batch norm on 1x28x28 images),
DIR/mlp.onnx (784-256-256-10, GELU and LayerNorm) and DIR/encoder.onnx (one
TransformerEncoderLayer, d_model 64, 4 heads, feed-forward 256, on
sequences of 16), float32, evaluation mode, opset 17, the batch dimension
symbolic ("batch"), from fixed seeds. Without torch it prints a skip line
and exits 0.
"""

import os
import sys

from common import require_torch

torch = require_torch()
nn = torch.nn
F = torch.nn.functional


class LeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5)
        self.bn1 = nn.BatchNorm2d(6)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.bn2 = nn.BatchNorm2d(16)
        self.fc1 = nn.Linear(16 * 4 * 4, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.max_pool2d(F.relu(self.bn2(self.conv2(x))), 2)
        x = torch.flatten(x, 1)
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 256)
        self.ln = nn.LayerNorm(256)
        self.fc2 = nn.Linear(256, 256)
        self.fc3 = nn.Linear(256, 10)

    def forward(self, x):
        return self.fc3(F.gelu(self.fc2(self.ln(F.gelu(self.fc1(x))))))


MODELS = {
    "lenet": (LeNet, (1, 1, 28, 28)),
    "mlp": (MLP, (1, 784)),
    "encoder": (lambda: nn.TransformerEncoderLayer(64, 4, 256, dropout=0.0, batch_first=True), (1, 16, 64)),
}


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, (make, shape) in MODELS.items():
        torch.manual_seed(0)
        model = make().eval()
        torch.onnx.export(model, (torch.randn(*shape),), os.path.join(out, name + ".onnx"),
                          input_names=["x"], output_names=["y"], dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}},
                          opset_version=17, training=torch.onnx.TrainingMode.PRESERVE)
        print("wrote", os.path.join(out, name + ".onnx"))


if __name__ == "__main__":
    main()
