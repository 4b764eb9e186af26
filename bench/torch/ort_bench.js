// Times ONNX Runtime's CPU execution provider on one thread running the
// models of BenchmarkONNXInference (bench/onnx_test.go):
//
//   node bench/torch/ort_bench.js MODULE_DIR MODEL_DIR
//
// MODULE_DIR holds node_modules/onnxruntime-node; MODEL_DIR the files
// bench/torch/onnx_models.py writes. Each figure is one line in the words of
// the Go benchmark's name, "ONNXInference lenet batch=64 us/op 123.4
// cpu-us/op 120.1": the medians of NABLA_BENCH_ROUNDS rounds (default 7),
// of wall time and of the process's CPU time (process.cpuUsage), of about
// NABLA_BENCH_ROUND_SECONDS (default 0.2) each, after a warm-up, of
// session.run on the same inputs (intraOpNumThreads and interOpNumThreads
// 1, sequential execution, every graph optimisation).
const [moduleDir, modelDir] = process.argv.slice(2);
const ort = require(moduleDir + '/node_modules/onnxruntime-node');
const path = require('path');

const shapes = {lenet: [1, 28, 28], mlp: [784], encoder: [16, 64]};
const rounds = Number(process.env.NABLA_BENCH_ROUNDS || 7);
const roundSeconds = Number(process.env.NABLA_BENCH_ROUND_SECONDS || 0.2);

async function time(session, feeds) {
  const now = () => Number(process.hrtime.bigint()) / 1e9;
  let calls = 0;
  const start = now();
  while (calls < 3 || now() - start < roundSeconds / 2) {
    await session.run(feeds);
    calls++;
  }
  const n = Math.max(1, Math.round(roundSeconds / ((now() - start) / calls)));
  const walls = [], cpus = [];
  for (let r = 0; r < rounds; r++) {
    const t0 = now(), c0 = process.cpuUsage();
    for (let i = 0; i < n; i++) await session.run(feeds);
    const c = process.cpuUsage(c0);
    walls.push((now() - t0) / n);
    cpus.push((c.user + c.system) / 1e6 / n);
  }
  const median = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  return [median(walls), median(cpus)];
}

(async () => {
  for (const [name, shape] of Object.entries(shapes)) {
    const session = await ort.InferenceSession.create(path.join(modelDir, name + '.onnx'), {
      intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential', graphOptimizationLevel: 'all',
    });
    for (const batch of [1, 64]) {
      const dims = [batch, ...shape];
      const data = Float32Array.from({length: dims.reduce((a, b) => a * b)}, (_, i) => Math.sin(i));
      const feeds = {x: new ort.Tensor('float32', data, dims)};
      const [wall, cpu] = await time(session, feeds);
      console.log(`ONNXInference ${name} batch=${batch} us/op ${(wall * 1e6).toFixed(2)} cpu-us/op ${(cpu * 1e6).toFixed(2)}`);
    }
  }
})().catch((e) => { process.stderr.write(String(e) + '\n'); process.exit(1); });
