// Runs an ONNX model with ONNX Runtime (npm's onnxruntime-node) and prints
// its outputs as JSON. Usage: node ort_run.js MODULE_DIR MODEL INPUTS_JSON,
// where INPUTS_JSON maps input names to {type, dims, data}.
const [moduleDir, model, inputsPath] = process.argv.slice(2);
const ort = require(moduleDir + '/node_modules/onnxruntime-node');
const fs = require('fs');

const arrays = {float32: Float32Array, float64: Float64Array, int32: Int32Array, int64: BigInt64Array};

(async () => {
  const spec = JSON.parse(fs.readFileSync(inputsPath, 'utf8'));
  const feeds = {};
  for (const [name, t] of Object.entries(spec)) {
    // Non-finite floats come as the strings "NaN", "Infinity", "-Infinity".
    const data = t.type === 'int64' ? t.data.map(BigInt) : t.data.map(Number);
    feeds[name] = new ort.Tensor(t.type, arrays[t.type].from(data), t.dims);
  }
  const session = await ort.InferenceSession.create(model);
  const results = await session.run(feeds);
  const out = {};
  for (const name of session.outputNames) {
    const r = results[name];
    // JSON has no NaN or infinities: those are written as strings.
    out[name] = {dims: r.dims, data: Array.from(r.data, (v) => (Number.isFinite(Number(v)) ? Number(v) : String(Number(v))))};
  }
  process.stdout.write(JSON.stringify(out));
})().catch((e) => { process.stderr.write(String(e) + '\n'); process.exit(1); });
