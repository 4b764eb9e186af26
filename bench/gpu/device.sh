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
# GPU; package dist's collectives through NCCL on the GPU (one rank
# under Open MPI's mpirun, NCCL forced: TestNCCLOnGPU); the MLP example's test (GPU against CPU) and the example itself on
# the CPU and on the GPU; the GPU benchmarks (W1, W3, products against
# cuBLAS called directly); and PyTorch's figures on the same GPU
# (bench/torch/gpu.py) where python3 has torch.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/nabla-gpu}
mkdir -p "$OUT"
BENCHTIME=${BENCHTIME:-2s}
COUNT=${COUNT:-3}
# PARTS picks what runs (all by default); GPUBENCH narrows BenchmarkGPU
# (e.g. 'BenchmarkGPU/(W1/f32/sgd|LSTM)').
# RUN and SKIP filter package cuda's tests (-test.run, -test.skip).
PARTS=${PARTS:-device tests dist customop mlp cnn bench parts matmul torch}
GPUBENCH=${GPUBENCH:-^BenchmarkGPU\$}
want() { [[ " $PARTS " == *" $1 "* ]]; }
log() { echo; echo "== $*"; }
for f in .gpu/*.gz; do [ -e "$f" ] && gunzip -f "$f"; done
chmod +x .gpu/* 2>/dev/null

# The driver's folder and the toolkit's, where the linker cache lacks them.
for d in /usr/local/nvidia/lib64 /usr/local/cuda/lib64; do
	[ -d "$d" ] && export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$d"
done

log device
want device && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1 | head -3
want device && ldconfig -p 2>/dev/null | grep -E 'libcuda\.so|libnvrtc|libcublas|libnccl' | head
want device && find / -xdev \( -name 'libnvrtc.so*' -o -name 'libcublas.so*' \) 2>/dev/null | head -8
want device && grep -m1 'model name' /proc/cpuinfo
want device && nvcc --version 2>/dev/null | tail -2

log "cuda tests on the GPU"
# PATH without a C compiler: the tests then run on the GPU alone, not
# also on the host stand-in (CI runs those).
# The package takes over 190 s on an H200; SKIP=TestConformance leaves
# out the longest test (60–75 s there).
want tests && (cd cuda && timeout 320 env PATH=/nonexistent ../.gpu/cuda.test -test.v -test.count=1 -test.timeout 310s -test.run "${RUN:-.}" -test.skip "${SKIP:-^$}" 2>&1 | grep -v '^    --- PASS\|^=== RUN' | tee "$OUT/cuda-tests.log" | tail -60)

log "custom-op example: a user's op with its own CUDA C kernel"
want customop && (cd examples/customop && timeout 60 env PATH=/nonexistent ../../.gpu/customop.test -test.run OnDevice -test.v 2>&1 | tail -5)

log "dist: collectives through NCCL on the GPU"
# The test binary starts itself again under mpirun (Open MPI's, as root):
# one rank, NCCL forced for it, every collective f32/f64 against the CPU,
# the plan's library steps, a CUDA graph's replay.
want dist && (cd dist && timeout 110 ../.gpu/dist.test -test.run '^(TestNCCLOnGPU|TestNCCLTwoRanksOnOneGPU|TestOnDeviceSingleProcess)$' -test.v -test.count=1 -test.timeout 108s 2>&1 | tee "$OUT/dist-nccl.log" | tail -40)
# The MLP example launched as one rank of an MPI job on the GPU.
want dist && (cd examples/mlp && timeout 60 mpirun --allow-run-as-root -np 1 ../../.gpu/mlpdist -dist -gpu -epochs 5 2>&1 | tail -3)

log "MLP example: test, then the command on the CPU and on the GPU"
want mlp && (cd examples/mlp && timeout 60 ../../.gpu/mlp.test -test.run OnDevice -test.v 2>&1 | tail -5)
want mlp && (cd examples/mlp && time timeout 60 ../../.gpu/mlp 2>&1 | tail -2)
want mlp && (cd examples/mlp && time timeout 60 ../../.gpu/mlp -gpu 2>&1 | tail -2)

log "CNN example: GPU against CPU, its step's time on each, then the command on each"
want cnn && (cd examples/cnn && timeout 90 ../../.gpu/cnn.test -test.run OnGPU -test.v -test.bench 'Step' -test.benchtime "$BENCHTIME" 2>&1 | grep -v '^goos\|^goarch\|^pkg\|^=== RUN' | tee "$OUT/cnn.log")
want cnn && (cd examples/cnn && time timeout 60 ../../.gpu/cnn 2>&1 | tail -1)
want cnn && (cd examples/cnn && time timeout 60 ../../.gpu/cnn -gpu 2>&1 | tail -1)

log "GPU benchmarks"
want bench && (cd bench && timeout 60 env PATH=/nonexistent ../.gpu/bench.test -test.run 'OnDevice' -test.v 2>&1 | grep -v '^=== RUN' | tail -5)
want bench && (cd bench && timeout 120 ../.gpu/bench.test -test.run '^$' -test.bench "$GPUBENCH" -test.benchtime "$BENCHTIME" -test.count "$COUNT" 2>&1 | tee "$OUT/bench-gpu.log" | grep -v '^goos\|^goarch\|^pkg\|^cpu')
want parts && (cd cuda && timeout 30 ../.gpu/cuda.test -test.run '^$' -test.bench '^BenchmarkStepParts$' -test.v -test.benchtime "$BENCHTIME" 2>&1 | grep -v '^goos\|^goarch\|^pkg\|^=== RUN' | tee "$OUT/parts.log")
want matmul && (cd cuda && timeout 90 ../.gpu/cuda.test -test.run '^$' -test.bench '^BenchmarkMatMul$' -test.benchtime "$BENCHTIME" -test.count "$COUNT" 2>&1 | tee "$OUT/matmul.log" | grep -v '^goos\|^goarch\|^pkg\|^cpu')

log "PyTorch on the same GPU"
want torch && (cd bench/torch && NABLA_BENCH_ROUNDS=5 timeout "${TORCH_TIMEOUT:-150}" python3 gpu.py 2>&1 | tee "$OUT/torch-gpu.log")
