"""W1 under PyTorch's DistributedDataParallel, the peer of dist's
TestW1Scaling: the 784-256(tanh)-256(tanh)-10 perceptron of w1.py, float32,
batch 64 a process, SGD (lr 0.01), one thread a process, each process
bound to a core of its own (os.sched_setaffinity, as mpirun binds ranks).
It prints the samples per second of all the processes together for one
process (no DDP), two under DDP (the gloo backend: PyTorch's CPU one), and
two training apart (no DDP: the machine's ceiling for two), each the
median of NABLA_DDP_ROUNDS runs (default 5) of 300 steps after 5 to warm
up, timed from a barrier to a barrier, in turn:

    W1DDP f32 sgd ranks=2 samples/s 68000.0 ratio 1.21

The ratio is to one process's median.
"""

import os
import statistics
import sys
import tempfile
import time

import common

torch = common.require_torch()
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402
import torch.nn.functional as F  # noqa: E402

SIZES = [784, 256, 256, 10]
BATCH = 64
LR = 0.01
STEPS = 300


def model():
    layers = []
    for i in range(1, len(SIZES)):
        layers.append(torch.nn.Linear(SIZES[i - 1], SIZES[i]))
        if i < len(SIZES) - 1:
            layers.append(torch.nn.Tanh())
    return torch.nn.Sequential(*layers)


def worker(rank, size, kind, store, out):
    """One process: trains STEPS steps and puts its samples/s on out."""
    cpus = sorted(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpus[rank % len(cpus)]})
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method="file://" + store, rank=rank, world_size=size)
    torch.manual_seed(1)
    net = model()
    if kind == "ddp":
        net = torch.nn.parallel.DistributedDataParallel(net)
    opt = torch.optim.SGD(net.parameters(), lr=LR)
    x = torch.rand(BATCH, SIZES[0]) * 2 - 1
    y = torch.randint(0, SIZES[-1], (BATCH,))

    def step():
        opt.zero_grad(set_to_none=True)
        F.cross_entropy(net(x), y).backward()
        opt.step()

    for _ in range(5):
        step()
    dist.barrier()
    start = time.perf_counter()
    for _ in range(STEPS):
        step()
    took = time.perf_counter() - start
    dist.barrier()
    if rank == 0:
        out.put(BATCH * size * STEPS / took)
    dist.destroy_process_group()


def run(size, kind):
    """Samples per second of size processes training as kind says."""
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    with tempfile.TemporaryDirectory() as d:
        procs = [ctx.Process(target=worker, args=(r, size, kind, os.path.join(d, "store"), out)) for r in range(size)]
        for p in procs:
            p.start()
        s = out.get(timeout=300)
        for p in procs:
            p.join()
    return s


def main():
    if not dist.is_available() or not dist.is_gloo_available():
        print("skipped: torch.distributed with gloo not available")
        sys.exit(0)
    rounds = int(os.environ.get("NABLA_DDP_ROUNDS", "5"))
    kinds = [("ranks=1", 1, "alone"), ("ranks=2", 2, "ddp"), ("apart", 2, "alone")]
    runs = {name: [] for name, _, _ in kinds}
    for _ in range(rounds):
        for name, size, kind in kinds:
            runs[name].append(run(size, kind))
    one = statistics.median(runs["ranks=1"])
    for name, _, _ in kinds:
        s = statistics.median(runs[name])
        print(f"W1DDP f32 sgd {name} samples/s {s:.1f} ratio {s / one:.2f} best {max(runs[name]):.1f}", flush=True)


if __name__ == "__main__":
    main()
