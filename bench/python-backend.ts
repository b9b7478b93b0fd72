/**
 * What the Python backend adds to a request: the same trivial model (OUTPUT0 = 2 · INPUT0, FP32) run
 * three ways, in one run:
 *
 * - **Python in-process**: the model.py's `execute([request])` called in a loop by Python itself
 *   (threads for concurrency 16), with Nereid's pb_utils: the cost of the model code alone;
 * - **Nereid, Python model**: `core.infer()` on the running server, through validation, the scheduler,
 *   the binary framing to the model's Python process and back;
 * - **Nereid, ONNX model**: the same through onnxruntime-node in a worker thread (test fixture
 *   nobatch_fp32, one Mul node), the native path for comparison.
 *
 * Requests go through `core.infer` rather than HTTP, so that protocol costs (the same for every model,
 * see docs/benchmarks.md) stay out of the figures. Each model has one instance and takes batches of up
 * to 16; at concurrency 16 it runs once without and once with `dynamic_batching`. Two payloads: 16
 * floats, and 256 Ki floats (1 MiB) to show the cost of moving data through the pipe.
 *
 *   npm run bench:python      (or: node --import tsx bench/python-backend.ts)
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { InferRequest } from '../src/core/index.js';
import { silentLogger } from '../src/logging/logger.js';
import { startServer } from '../src/server.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 3000);
const WARMUP_REQUESTS = 300;
const PAYLOADS = [
  { label: '16 floats', shape: [1, 16] },
  { label: '1 MiB', shape: [1, 256 * 1024] },
] as const;
/** The scheduler variants: concurrency 1 has nothing to batch. */
const POINTS = [
  { concurrency: 1, isBatching: false },
  { concurrency: 16, isBatching: false },
  { concurrency: 16, isBatching: true },
] as const;

const MODEL_PY = `
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        responses = []
        for request in requests:
            values = pb_utils.get_input_tensor_by_name(request, "INPUT0").as_numpy()
            responses.append(pb_utils.InferenceResponse([pb_utils.Tensor("OUTPUT0", values * 2)]))
        return responses
`;

/** Runs the model.py in-process in Python and prints the latencies (µs) and throughput as JSON. */
const IN_PROCESS_PY = `
import importlib.util, json, sys, threading, time
import numpy as np

runtime, model_file, duration_s, concurrency, *shape = sys.argv[1:]
sys.path.insert(0, runtime)
import triton_python_backend_utils as pb_utils

spec = importlib.util.spec_from_file_location("model", model_file)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
model = module.TritonPythonModel()
values = np.ones([int(d) for d in shape], dtype=np.float32)

def call():
    request = pb_utils.InferenceRequest(model_name="python_double", inputs=[pb_utils.Tensor("INPUT0", values)], requested_output_names=["OUTPUT0"])
    start = time.perf_counter_ns()
    model.execute([request])
    return (time.perf_counter_ns() - start) / 1000

for _ in range(${WARMUP_REQUESTS}):
    call()
samples = []
end = time.perf_counter() + float(duration_s)

def loop():
    while time.perf_counter() < end:
        samples.append(call())

threads = [threading.Thread(target=loop) for _ in range(int(concurrency))]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print(json.dumps({"samples": samples, "seconds": float(duration_s)}))
`;

interface Figures {
  readonly p50Us: number;
  readonly p99Us: number;
  readonly perSecond: number;
}

function summarize(samplesUs: number[], seconds: number): Figures {
  samplesUs.sort((a, b) => a - b);
  const at = (p: number): number => samplesUs[Math.min(samplesUs.length - 1, Math.floor(p * samplesUs.length))]!;
  return { p50Us: at(0.5), p99Us: at(0.99), perSecond: samplesUs.length / seconds };
}

function inProcessPython(repository: string, shape: readonly number[], concurrency: number): Figures {
  const script = join(repository, 'in_process.py');
  writeFileSync(script, IN_PROCESS_PY);
  const result = spawnSync('/usr/bin/python3', ['-B', script, `${ROOT}python`, join(repository, 'python_double', '1', 'model.py'), String(DURATION_MS / 1000), String(concurrency), ...shape.map(String)], {
    maxBuffer: 1 << 30,
  });
  if (result.status !== 0) throw new Error(`in-process Python failed: ${result.stderr.toString()}`);
  const { samples, seconds } = JSON.parse(result.stdout.toString()) as { samples: number[]; seconds: number };
  return summarize(samples, seconds);
}

async function throughNereid(infer: (request: InferRequest) => Promise<unknown>, model: string, shape: readonly number[], concurrency: number): Promise<Figures> {
  const data = new Float32Array(shape[0]! * shape[1]!).fill(1);
  const request = (): InferRequest => ({ modelName: model, id: '', parameters: {}, inputs: [{ name: 'INPUT0', dataType: 'FP32', shape, data }] });
  for (let i = 0; i < WARMUP_REQUESTS; i++) await infer(request());
  const samples: number[] = [];
  const end = performance.now() + DURATION_MS;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        const start = performance.now();
        await infer(request());
        samples.push((performance.now() - start) * 1000);
      }
    }),
  );
  return summarize(samples, DURATION_MS / 1000);
}

const repository = mkdtempSync(join(tmpdir(), 'nereid-bench-python-'));
const tensorConfig = 'max_batch_size: 16\ninput [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]\noutput [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]\ninstance_group [ { count: 1, kind: KIND_CPU } ]\n';
for (const suffix of ['', '_batched']) {
  const batching = suffix === '' ? '' : 'dynamic_batching { }\n';
  cpSync(join(ROOT, 'test/fixtures/model_repository/nobatch_fp32/1'), join(repository, `onnx_double${suffix}`, '1'), { recursive: true });
  writeFileSync(join(repository, `onnx_double${suffix}`, 'config.pbtxt'), `platform: "onnxruntime_onnx"\n${tensorConfig}${batching}`);
  mkdirSync(join(repository, `python_double${suffix}`, '1'), { recursive: true });
  writeFileSync(join(repository, `python_double${suffix}`, 'config.pbtxt'), `backend: "python"\n${tensorConfig}${batching}`);
  writeFileSync(join(repository, `python_double${suffix}`, '1', 'model.py'), MODEL_PY);
}

const server = await startServer({ modelRepositories: [repository], isHttpAllowed: false, isGrpcAllowed: false, isMetricsAllowed: false, logger: silentLogger });
const infer = (request: InferRequest): Promise<unknown> => server.core.infer(request);
const us = (value: number): string => value.toFixed(0);
const perRequest = (figures: Figures): string => us(1e6 / figures.perSecond);
try {
  console.log(`${DURATION_MS} ms per point after ${WARMUP_REQUESTS} warm-up requests; one instance per model; times in µs\n`);
  console.log(
    '| payload | c | scheduler | Python in-process p50 / p99 | Nereid Python model p50 / p99 | Nereid ONNX model p50 / p99 | added by the Python backend at p50 (vs in-process) | Python vs ONNX model at p50 | infer/s: in-process / Python / ONNX | µs per request (1 / infer/s): in-process / Python / ONNX |',
  );
  console.log('|---|---:|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const payload of PAYLOADS) {
    for (const { concurrency, isBatching } of POINTS) {
      const suffix = isBatching ? '_batched' : '';
      const local = inProcessPython(repository, payload.shape, concurrency);
      const python = await throughNereid(infer, `python_double${suffix}`, payload.shape, concurrency);
      const onnx = await throughNereid(infer, `onnx_double${suffix}`, payload.shape, concurrency);
      const versusOnnx = python.p50Us - onnx.p50Us;
      console.log(
        `| ${payload.label} | ${concurrency} | ${isBatching ? 'dynamic batching' : 'direct'} | ${us(local.p50Us)} / ${us(local.p99Us)} | ${us(python.p50Us)} / ${us(python.p99Us)} | ` +
          `${us(onnx.p50Us)} / ${us(onnx.p99Us)} | ${us(python.p50Us - local.p50Us)} | ${versusOnnx >= 0 ? '+' : ''}${us(versusOnnx)} | ` +
          `${us(local.perSecond)} / ${us(python.perSecond)} / ${us(onnx.perSecond)} | ${perRequest(local)} / ${perRequest(python)} / ${perRequest(onnx)} |`,
      );
    }
  }
} finally {
  await server.shutdown();
  rmSync(repository, { recursive: true, force: true });
}
