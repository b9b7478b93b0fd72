/**
 * The system shared memory extension against the binary data extension, for ResNet-18 behind the
 * dynamic batcher (bench/batching's resnet18_batch) at concurrency 1, 8 and 32, beside the engine's
 * in-process best-batch limit (bench/batching/engine-limit.ts); and one 4 MiB FP32 tensor through a
 * model that doubles it (test/fixtures' nobatch_fp32), where the request's time outside the model is
 * what the transport costs.
 *
 *   npm run build && node --import tsx bench/shared-memory.ts      (BENCH_INTERVAL_MS, default 3000;
 *                                                                  BENCH_ENGINE_SECONDS, default 3)
 *
 * Each point is one `nereid perf` run in its own process over HTTP, windows of BENCH_INTERVAL_MS until
 * three agree within 10 %: once with the tensors in the body (binary data extension), once with
 * `--shared-memory system` (each input written once into a region, the outputs into a region all
 * requests share, as perf_analyzer does). The server runs with --allow-client-shm=true; its start-up
 * line says whether the native addon maps the regions. The highest concurrency runs once more on a copy
 * of the model whose pool threads spin (`allow_spinning` 1), the A/B of the server's choice not to
 * (session-options.ts) in one run. Beside each point: the batch the dynamic batcher
 * formed on average (the statistics extension's inference_count / execution_count over the windows)
 * and the server's CPU per request over the whole `nereid perf` run (/proc/PID/task: the main thread,
 * and all threads: the execution thread and ONNX Runtime's pool, V8's helpers), against the engine's
 * CPU per inference (its cores / its rate at the best batch). The model files come from
 * bench/batching/make_models.py (Debian's python3-torch), made on the first run.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { StepResult } from '../src/perf/profiler.js';
import { defaultLayouts, engineOptionsFor, measureEngine } from './batching/engine-limit.js';
import { startNereid, threadCpuMs } from './harness.js';
import { runNereidPerf, writeInputData } from './nereid-perf.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const WORK = `${ROOT}bench/batching/.work`;
const REPOSITORY = `${WORK}/model_repository`;
const INTERVAL_MS = Number(process.env.BENCH_INTERVAL_MS ?? 3000);
const ENGINE_SECONDS = Number(process.env.BENCH_ENGINE_SECONDS ?? 3);
const CONCURRENCY = [1, 8, 32];
// ResNet-18's output, [1, 1000] FP32.
const RESNET_OUTPUT_BYTES = 4000;
const LARGE_SHAPE = [1024, 1024];

if (!existsSync(`${REPOSITORY}/resnet18_batch`)) {
  spawnSync('/usr/bin/python3', [`${ROOT}bench/batching/make_models.py`, '--models', 'resnet18'], { stdio: 'inherit' });
}
// The same model with its pool threads spinning (`allow_spinning` 1, ONNX Runtime's default; the
// server's is 0), measured beside it at the highest concurrency: that choice's A/B in one run.
const SPIN = 'resnet18_batch_spin';
if (!existsSync(`${REPOSITORY}/${SPIN}`)) {
  cpSync(`${REPOSITORY}/resnet18_batch`, `${REPOSITORY}/${SPIN}`, { recursive: true });
  const config = readFileSync(`${REPOSITORY}/${SPIN}/config.pbtxt`, 'utf8').replace('name: "resnet18_batch"', `name: "${SPIN}"`);
  writeFileSync(`${REPOSITORY}/${SPIN}/config.pbtxt`, `${config}parameters { key: "allow_spinning" value: { string_value: "1" } }\n`);
}
if (!existsSync(`${REPOSITORY}/nobatch_fp32`)) cpSync(`${ROOT}test/fixtures/model_repository/nobatch_fp32`, `${REPOSITORY}/nobatch_fp32`, { recursive: true });
mkdirSync(`${WORK}/bodies`, { recursive: true });

const engine = await measureEngine(engineOptionsFor(WORK, 'resnet18', { batchSizes: [1, 8, 16, 32, 64], seconds: ENGINE_SECONDS, layouts: defaultLayouts() }), (line) =>
  process.stderr.write(`${line}\n`),
);
const limit = engine.best.inferPerSec;

const nereid = await startNereid(REPOSITORY, ['--allow-client-shm=true']);
const rows: string[] = [];
const largeRows: string[] = [];
try {
  const dataFile = writeInputData(`${WORK}/bodies/shared-memory-resnet18.json`, 'INPUT', readFileSync(`${WORK}/samples/resnet18.input.bin`));
  const url = `127.0.0.1:${nereid.httpPort}`;
  const successes = async (model: string): Promise<number> => {
    const body = (await (await fetch(`http://${url}/v2/models/${model}/stats`)).json()) as { model_stats: Array<{ inference_stats: { success: { count: number } } }> };
    return body.model_stats[0]!.inference_stats.success.count;
  };
  const perf = async (args: readonly string[]): Promise<StepResult & { cpu: string }> => {
    const model = args[args.indexOf('-m') + 1]!;
    const [requestsBefore, cpuBefore] = [await successes(model), threadCpuMs(nereid.pid)];
    const step = (await runNereidPerf([...args, '-u', url, '-p', String(INTERVAL_MS)])).steps[0]!;
    const [requestsAfter, cpuAfter] = [await successes(model), threadCpuMs(nereid.pid)];
    const usPerRequest = (ms: number): string => ((ms * 1000) / (requestsAfter - requestsBefore)).toFixed(0);
    const batch = step.server.inferenceCount / step.server.executionCount;
    return { ...step, cpu: `${batch.toFixed(1)} | ${usPerRequest(cpuAfter.mainMs - cpuBefore.mainMs)} / ${usPerRequest(cpuAfter.totalMs - cpuBefore.totalMs)}` };
  };
  const points = [...CONCURRENCY.map((concurrency) => ({ model: 'resnet18_batch', concurrency })), { model: SPIN, concurrency: CONCURRENCY.at(-1)! }];
  for (const { model, concurrency } of points) {
    const common = ['-m', model, '--concurrency-range', String(concurrency), '--input-data', dataFile];
    const binary = await perf(common);
    const shared = await perf([...common, '--shared-memory', 'system', '--output-shared-memory-size', String(RESNET_OUTPUT_BYTES)]);
    const cell = (step: StepResult & { cpu: string }): string =>
      `${step.throughputInferPerSec.toFixed(1)} | ${(step.throughputInferPerSec / limit).toFixed(2)} | ${(step.latencyUs.p50Us / 1000).toFixed(1)} / ${(step.latencyUs.p99Us / 1000).toFixed(1)} | ${step.cpu}`;
    const row = `| ${concurrency}${model === SPIN ? ', spinning' : ''} | ${cell(binary)} | ${cell(shared)} |`;
    rows.push(row);
    console.error(row);
  }
  const largeCommon = ['-m', 'nobatch_fp32', '--shape', `INPUT0:${LARGE_SHAPE.join(',')}`, '--input-data', 'zero', '--concurrency-range', '1'];
  const outputBytes = LARGE_SHAPE[0]! * LARGE_SHAPE[1]! * 4;
  for (const [label, extra] of [
    ['binary data', []],
    ['shared memory', ['--shared-memory', 'system', '--output-shared-memory-size', String(outputBytes)]],
  ] as const) {
    const step = await perf([...largeCommon, ...extra]);
    const server = step.serverTimesUs;
    largeRows.push(
      `| ${label} | ${(step.latencyUs.averageUs / 1000).toFixed(2)} | ${(server.computeInputUs / 1000).toFixed(2)} | ${(server.computeInferUs / 1000).toFixed(2)} | ${(server.computeOutputUs / 1000).toFixed(2)} | ${(step.overheadUs / 1000).toFixed(2)} |`,
    );
  }
} finally {
  nereid.stop();
}
console.log(`ResNet-18 (resnet18_batch), HTTP, nereid perf windows of ${INTERVAL_MS / 1000} s until three agree within 10 %`);
console.log(`engine's in-process best: ${limit.toFixed(1)} infer/s (batch ${engine.best.batchSize}, layout ${engine.best.layout}, ${engine.best.cpuUsPerInference.toFixed(0)} CPU µs an inference)`);
for (const layout of engine.layouts) console.log(`  ${layout.layout}: ${layout.points.map((point) => `batch ${point.batchSize} ${point.inferPerSec.toFixed(1)}/s`).join(', ')}`);
console.log('\nbatch: formed by the batcher on average; CPU: the server\'s µs a request, main thread / all threads\n');
console.log('| concurrency | binary infer/s | of engine | binary p50 / p99 ms | binary batch | binary CPU | shm infer/s | of engine | shm p50 / p99 ms | shm batch | shm CPU |');
console.log('|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
for (const row of rows) console.log(row);
console.log(`\nOne ${LARGE_SHAPE.join('x')} FP32 tensor (4 MiB) in and out (nobatch_fp32), concurrency 1, ms per request`);
console.log('| transport | latency | compute input | compute infer | compute output | outside the model (client, socket, front end) |');
console.log('|---|---:|---:|---:|---:|---:|');
for (const row of largeRows) console.log(row);
process.exit(0);
