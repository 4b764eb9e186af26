"""Linear algebra in PyTorch and in LAPACK through numpy, one thread, float64,
the sizes of nabla's ops benchmarks (ops/linalg_bench_test.go):

    Cholesky1024             torch.linalg.cholesky and numpy.linalg.cholesky
                             (dpotrf) of one 1024×1024 matrix
    Solve1024                torch.linalg.solve and numpy.linalg.solve (dgesv)
                             of one 1024×1024 system, one right-hand side
    BatchedCholeskySolve8    torch.linalg.cholesky then torch.cholesky_solve
                             of 10,000 8×8 systems, one right-hand side each

in ms per call: the wall-clock time (common.measure) and, as "cpu-ms/op",
the process's CPU time (time.process_time), which on a shared machine
counts the time the call ran and not the time it waited for a core; the Go benchmarks report the same as cpu-ns/op. The LAPACK and BLAS that numpy and torch load are printed
first (the libraries mapped into the process): Debian's reference LAPACK
unless LD_LIBRARY_PATH points at OpenBLAS's, e.g.

    OPENBLAS_NUM_THREADS=1 LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-pthread \\
        /usr/bin/python3 bench/torch/linalg.py
"""

import os

import common

torch = common.require_torch()


def spd(batch, n, gen):
    """X·Xᵀ/n + I for random X: symmetric positive-definite, well conditioned."""
    x = torch.rand(batch, n, n, generator=gen, dtype=torch.float64) * 2 - 1
    return x @ x.transpose(-1, -2) / n + torch.eye(n, dtype=torch.float64)


def timed(name, fn):
    """Report fn's wall-clock and process CPU milliseconds per call."""
    common.report(name, "ms/op", common.measure(fn, 1e3))
    common.report(name, "cpu-ms/op", common.measure_cpu(fn) * 1e3)


def libraries():
    """The BLAS and LAPACK shared objects mapped into this process."""
    found = set()
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1]
            if any(k in os.path.basename(path) for k in ("blas", "lapack", "mkl")):
                found.add(path)
    return sorted(found)


def main():
    torch.set_num_threads(1)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    gen = torch.Generator().manual_seed(7)
    a = spd(1, 1024, gen)[0]
    b = torch.rand(1024, 1, generator=gen, dtype=torch.float64)
    ab = spd(10000, 8, gen)
    bb = torch.rand(10000, 8, 1, generator=gen, dtype=torch.float64)
    timed("Cholesky1024 torch", lambda: torch.linalg.cholesky(a))
    timed("Solve1024 torch", lambda: torch.linalg.solve(a, b))
    timed("BatchedCholeskySolve8 torch", lambda: torch.cholesky_solve(bb, torch.linalg.cholesky(ab)))
    try:
        import numpy as np
    except ImportError:
        print("skipped: numpy not installed")
        return
    an, bn = a.numpy(), b.numpy()
    timed("Cholesky1024 numpy", lambda: np.linalg.cholesky(an))
    timed("Solve1024 numpy", lambda: np.linalg.solve(an, bn))
    for lib in libraries():
        print("library", lib)


if __name__ == "__main__":
    main()
