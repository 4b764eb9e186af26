"""torch.randn beside BenchmarkRandomNormal and BenchmarkRandomNormal64:
2^20 float32, then float64, standard normals into a preallocated tensor on
one thread, in MB/s of output per second of wall time and per second of
the process's CPU time (which, on a shared machine, leaves out the time
spent waiting for a core).
"""

import time

import common

torch = common.require_torch()

N = 1 << 20


def bench(dtype, name, size):
    out = torch.empty(N, dtype=dtype)

    def draw():
        torch.randn(N, out=out)

    mb = size * N / 1e6
    common.report(f"RandomNormal {name} torch.randn", "MB/s", mb / common.measure(draw, 1))
    draw()
    calls, cpu, wall = 0, time.process_time(), time.perf_counter()
    while calls < 10 or time.perf_counter() - wall < 1:
        draw()
        calls += 1
    common.report(f"RandomNormal {name} torch.randn", "cpu-MB/s", calls * mb / (time.process_time() - cpu))


def main():
    torch.set_num_threads(1)
    torch.manual_seed(1)
    bench(torch.float32, "f32", 4)
    bench(torch.float64, "f64", 8)


if __name__ == "__main__":
    main()
