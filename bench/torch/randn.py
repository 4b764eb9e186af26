"""torch.randn beside BenchmarkRandomNormal: 2^20 float32 standard normals
into a preallocated tensor on one thread, in MB/s of output per second of
wall time and per second of the process's CPU time (which, on a shared
machine, leaves out the time spent waiting for a core).
"""

import time

import common

torch = common.require_torch()

N = 1 << 20


def main():
    torch.set_num_threads(1)
    torch.manual_seed(1)
    out = torch.empty(N, dtype=torch.float32)

    def draw():
        torch.randn(N, out=out)

    mb = 4 * N / 1e6
    common.report("RandomNormal f32 torch.randn", "MB/s", mb / common.measure(draw, 1))
    draw()
    calls, cpu, wall = 0, time.process_time(), time.perf_counter()
    while calls < 10 or time.perf_counter() - wall < 1:
        draw()
        calls += 1
    common.report("RandomNormal f32 torch.randn", "cpu-MB/s", calls * mb / (time.process_time() - cpu))


if __name__ == "__main__":
    main()
