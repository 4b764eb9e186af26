#!/usr/bin/env bash
# bench/gpu/device.sh: the GPU checks and figures of issue 14, on a machine
# with an NVIDIA GPU, from the binaries bench/gpu/build made (run it from
# the repository's root; OUT, if set, receives the logs):
#
#   bench/gpu/build                      # here, with Go
#   bench/gpu/device.sh                  # there
#
# It prints the device, driver and libraries found, then runs: the cuda
# package's tests (the conformance test over the op table, the training
# step, the Hessian, the machine's contract, no allocation per step) on the
# GPU; the MLP example's test (GPU against CPU) and the example itself on
# the CPU and on the GPU; the GPU benchmarks (W1, W3, products against
# cuBLAS called directly); and PyTorch's figures on the same GPU
# (bench/torch/gpu.py) where python3 has torch.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/nabla-gpu}
mkdir -p "$OUT"
BENCHTIME=${BENCHTIME:-2s}
log() { echo; echo "== $*"; }
for f in .gpu/*.gz; do [ -e "$f" ] && gunzip -f "$f"; done
chmod +x .gpu/* 2>/dev/null

log device
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1 | head -3
ldconfig -p 2>/dev/null | grep -E 'libcuda\.so|libnvrtc|libcublas' | head
find / -xdev \( -name 'libnvrtc.so*' -o -name 'libcublas.so*' \) 2>/dev/null | head -8
grep -m1 'model name' /proc/cpuinfo

log "cuda tests on the GPU"
(cd cuda && ../.gpu/cuda.test -test.v -test.count=1 -test.timeout 8m 2>&1 | grep -v '^    --- PASS\|^=== RUN' | tee "$OUT/cuda-tests.log" | tail -60)

log "MLP example: test, then the command on the CPU and on the GPU"
(cd examples/mlp && ../../.gpu/mlp.test -test.run OnDevice -test.v 2>&1 | tail -5)
(cd examples/mlp && time ../../.gpu/mlp 2>&1 | tail -2)
(cd examples/mlp && time ../../.gpu/mlp -gpu 2>&1 | tail -2)

log "GPU benchmarks"
(cd bench && ../.gpu/bench.test -test.run '^$' -test.bench '^BenchmarkGPU$' -test.benchtime "$BENCHTIME" -test.count 3 2>&1 | tee "$OUT/bench-gpu.log" | grep -v '^goos\|^goarch\|^pkg\|^cpu')
(cd cuda && ../.gpu/cuda.test -test.run '^$' -test.bench '^BenchmarkMatMul$' -test.benchtime "$BENCHTIME" -test.count 3 2>&1 | tee "$OUT/matmul.log" | grep -v '^goos\|^goarch\|^pkg\|^cpu')

log "PyTorch on the same GPU"
(cd bench/torch && NABLA_BENCH_ROUNDS=5 timeout 240 python3 gpu.py 2>&1 | tee "$OUT/torch-gpu.log")
