"""LSTM in PyTorch eager: the forward and backward pass of one nn.LSTM
layer (input and hidden size 128) over 50 steps and a batch of 32, time
major, from zero states, float32: out.sum().backward(), the parameters'
gradients set to None before each pass. On 1 thread and on all.
"""

import common

torch = common.require_torch()

IN, HIDDEN, STEPS, BATCH = 128, 128, 50, 32


def main():
    for threads in common.threads():
        torch.set_num_threads(threads)
        torch.manual_seed(1)
        lstm = torch.nn.LSTM(IN, HIDDEN)
        x = torch.rand(STEPS, BATCH, IN) * 2 - 1

        def step():
            lstm.zero_grad(set_to_none=True)
            out, _ = lstm(x)
            out.sum().backward()

        ms = common.measure(step, 1e3)
        common.report(f"LSTM f32 threads={threads}", "ms/step", ms)


if __name__ == "__main__":
    main()
