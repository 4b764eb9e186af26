"""W1 and W3 in PyTorch on the first CUDA GPU, beside nabla's BenchmarkGPU:

  GPU W1 <dtype> <opt> eager        µs per training step, the loss read back
  GPU W1 <dtype> <opt> cudagraph    the same step captured as a CUDA graph
  GPU W3 hvp-backward               W3's H·v by double backward, µs
  GPU W3 hessian-functorch          W3's Hessian, jacfwd of jacrev, µs
  GPU CNN f32 adam eager            examples/cnn's step, batch 64, ms
  GPU LSTM f32 eager                the LSTM workload (cuDNN), ms

W1 is bench/torch/w1.py's step, W3 bench/torch/w3.py's function, on the
GPU. It prints a skip line and exits 0 without torch or a GPU.
"""

import common

torch = common.require_torch()
import torch.nn.functional as F  # noqa: E402

import cnn_step  # noqa: E402
import lstm  # noqa: E402
import w1  # noqa: E402


def sync_every(fn):
    """fn followed by a wait for the GPU: each call is a whole step."""
    def run():
        out = fn()
        torch.cuda.synchronize()
        return out
    return run


def w1_cases(dev):
    for dname, dtype in common.dtypes(torch):
        for opt_name in ("sgd", "adam"):
            torch.manual_seed(1)
            net = w1.model(dtype).to(dev)
            opt = w1.optimizer(opt_name, net.parameters())
            if opt_name == "adam":
                opt = torch.optim.Adam(net.parameters(), lr=w1.LR, capturable=True)
            x = (torch.rand(w1.BATCH, w1.SIZES[0], dtype=dtype) * 2 - 1).to(dev)
            y = torch.randint(0, w1.SIZES[-1], (w1.BATCH,)).to(dev)

            def step():
                opt.zero_grad(set_to_none=False)
                loss = F.cross_entropy(net(x), y)
                loss.backward()
                opt.step()
                return loss

            us = common.measure(lambda: step().item(), 1e6)
            common.report(f"GPU W1 {dname} {opt_name} eager", "µs/step", us)

            # The whole step as one CUDA graph, after warm-up on a side
            # stream as PyTorch's documentation does it.
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                for _ in range(3):
                    step()
            torch.cuda.current_stream().wait_stream(s)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                static_loss = step()

            def replay():
                graph.replay()
                return static_loss.item()

            us = common.measure(replay, 1e6)
            common.report(f"GPU W1 {dname} {opt_name} cudagraph", "µs/step", us)


def w3_cases(dev):
    dim = 64
    torch.manual_seed(1)
    dtype = torch.float64
    scale = dim ** -0.5
    w1_ = ((torch.rand(dim, dim, dtype=dtype) * 2 - 1) * scale).to(dev)
    b1 = ((torch.rand(dim, dtype=dtype) * 2 - 1) * 0.1).to(dev)
    w2 = ((torch.rand(dim, dim, dtype=dtype) * 2 - 1) * scale).to(dev)
    b2 = ((torch.rand(dim, dtype=dtype) * 2 - 1) * 0.1).to(dev)
    x0 = (torch.rand(dim, dtype=dtype) * 2 - 1).to(dev)
    v = (torch.rand(dim, dtype=dtype) * 2 - 1).to(dev)

    def f(x):
        return torch.tanh(torch.tanh(x @ w1_ + b1) @ w2 + b2).sum()

    def hvp_backward():
        x = x0.detach().requires_grad_()
        (g,) = torch.autograd.grad(f(x), x, create_graph=True)
        (hv,) = torch.autograd.grad(g @ v, x)
        return hv

    common.report("GPU W3 hvp-backward", "µs", common.measure(sync_every(hvp_backward), 1e6))
    try:
        import torch.func as func
        hess = func.hessian(f)
        common.report("GPU W3 hessian-functorch", "µs", common.measure(sync_every(lambda: hess(x0)), 1e6))
    except Exception as e:  # noqa: BLE001
        print(f"skipped: GPU W3 hessian-functorch ({type(e).__name__}: {e})")


def cnn_case(dev):
    """examples/cnn's Fashion-MNIST step (cnn_step.py's), batch 64, Adam,
    float32, cuDNN's convolutions, the loss read back."""
    torch.manual_seed(1)
    net = cnn_step.model().to(dev)
    opt = torch.optim.Adam(net.parameters())
    x = torch.rand(64, 1, 28, 28).to(dev)
    y = torch.randint(0, 10, (64,)).to(dev)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(net(x), y)
        loss.backward()
        opt.step()
        return loss.item()

    common.report("GPU CNN f32 adam eager", "ms/step", common.measure(step, 1e3))


def lstm_case(dev):
    """lstm.py's LSTM (cuDNN's) forward and backward pass, float32."""
    torch.manual_seed(1)
    net = torch.nn.LSTM(lstm.IN, lstm.HIDDEN).to(dev)
    x = (torch.rand(lstm.STEPS, lstm.BATCH, lstm.IN) * 2 - 1).to(dev)

    def step():
        net.zero_grad(set_to_none=True)
        out, _ = net(x)
        loss = out.sum()
        loss.backward()
        return loss.item()

    common.report("GPU LSTM f32 eager", "ms/step", common.measure(step, 1e3))


def main():
    if not torch.cuda.is_available():
        print("skipped: no CUDA GPU")
        return
    dev = torch.device("cuda")
    print(f"device: {torch.cuda.get_device_name(0)}, torch {torch.__version__}, CUDA {torch.version.cuda}")
    w1_cases(dev)
    w3_cases(dev)
    cnn_case(dev)
    lstm_case(dev)


if __name__ == "__main__":
    main()
