"""Shared timing and output for the PyTorch side of nabla's workloads.

Every figure is printed as one line, the same words as the Go benchmark's
name (slashes become spaces) followed by the unit and the value:

    W1 f32 sgd threads=2 ms/step 1.234

The value is the median over NABLA_BENCH_ROUNDS rounds (default 7), each
timed with time.perf_counter over enough calls to last about
NABLA_BENCH_ROUND_SECONDS (default 0.2 s), after a warm-up.
"""

import os
import statistics
import sys
import time


def require_torch():
    """Return the torch module, or print a skip line and exit 0 without it."""
    try:
        import torch
    except ImportError:
        print("skipped: torch not installed")
        sys.exit(0)
    return torch


def threads():
    """The thread counts to measure with: 1 and the machine's CPUs."""
    n = int(os.environ.get("NABLA_BENCH_THREADS", os.cpu_count() or 1))
    return [1, n] if n > 1 else [1]


def measure(fn, unit_scale):
    """Median seconds per call of fn over the rounds, times unit_scale."""
    rounds = int(os.environ.get("NABLA_BENCH_ROUNDS", "7"))
    round_seconds = float(os.environ.get("NABLA_BENCH_ROUND_SECONDS", "0.2"))
    fn()
    # Warm up and size a round from the warm-up's pace.
    calls, start = 0, time.perf_counter()
    while calls < 3 or time.perf_counter() - start < round_seconds / 2:
        fn()
        calls += 1
    per_call = (time.perf_counter() - start) / calls
    n = max(1, int(round_seconds / per_call))
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(n):
            fn()
        samples.append((time.perf_counter() - start) / n)
    return statistics.median(samples) * unit_scale


def measure_cpu(fn, clock=time.process_time):
    """Median CPU seconds per call of fn over the rounds, by clock: the
    process's CPU time (all its threads) or time.thread_time (the calling
    thread's). On a shared machine CPU time counts the time the calls ran,
    not the time they waited for a core.
    """
    rounds = int(os.environ.get("NABLA_BENCH_ROUNDS", "7"))
    fn()
    calls, start = 0, clock()
    while calls < 3 or clock() - start < 0.1:
        fn()
        calls += 1
    n = max(1, int(0.2 / ((clock() - start) / calls)))
    samples = []
    for _ in range(rounds):
        start = clock()
        for _ in range(n):
            fn()
        samples.append((clock() - start) / n)
    return statistics.median(samples)


def report(name, unit, value):
    """Print one figure line."""
    print(f"{name} {unit} {value:.6g}", flush=True)


def dtypes(torch):
    """The dtypes measured, by their short names."""
    return [("f32", torch.float32), ("f64", torch.float64)]
