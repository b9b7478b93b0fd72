/**
 * The system shared memory extension against the binary data extension, for ResNet-18 behind the
 * dynamic batcher (100 µs queue delay) at concurrency 1, 8 and 32, beside the engine's in-process
 * best-batch limit (bench/batching/engine-limit.ts), measured in rounds that alternate the engine and
 * the server; and one 4 MiB FP32 tensor through a model that doubles it (test/fixtures' nobatch_fp32),
 * where the request's time outside the model is what the transport costs.
 *
 *   npm run build && node --import tsx bench/shared-memory.ts
 *
 * Environment (defaults in brackets):
 *   BENCH_INTERVAL_MS [3000]       nereid perf's window
 *   BENCH_ENGINE_SECONDS [3]       seconds per batch size and layout of the engine limit
 *   BENCH_ROUNDS [2]               rounds: each measures the engine, then every server point
 *   BENCH_LAYOUT [1x2b16]          ResNet-18's instance layout at every concurrency: SxT[s][bN], S instances
 *                                  of T intra-op threads each, `s` for pool threads that spin (the
 *                                  model's `allow_spinning` 1; without it 0), `bN` for a max_batch_size
 *                                  of N (without it 64)
 *   BENCH_COMPARE_LAYOUTS [1x2,1x2s,2x1] layouts measured beside it at the highest concurrency ('' for none)
 *   BENCH_BEFORE_MAIN [unset]      a second Nereid build's dist/cli/main.js (e.g. the commit before a
 *                                  change): its server runs beside this one's, and each round measures
 *                                  it too in BENCH_LAYOUT at the highest concurrency (rows `before`)
 *
 * NOTE: the default caps batches at 16, the engine's best batch for ResNet-18 in 5 of 7 rounds here
 * (docs/benchmarks.md, issue 13, 2026-12-03): with max_batch_size 64, 32 clients fall into batches of
 * 30 to 31 and 1 to 2, and the engine itself runs batches of 32 slower than batches of 16 (one session
 * of two threads: 1 to 8 %, 4 % on average, in six rounds). The engine's limit is still the best of
 * every batch size and layout it measures.
 *
 * The bench writes its own repository (bench/batching/.work/shm_repository), one model per layout
 * (`resnet18_1x2`...), every one stating its instance count, intra_op_thread_count and
 * allow_spinning, so no other bench's configs (make_models.py rewrites model_repository's) change what
 * is measured. Each point is one `nereid perf` run in its own process over HTTP, windows of
 * BENCH_INTERVAL_MS until three agree within 10 % (at most 10): once with the tensors in the body
 * (binary data extension), once with `--shared-memory system` (each input written once into a region,
 * the outputs into a region all requests share, as perf_analyzer does); the server runs with
 * --allow-client-shm=true. Each ratio is against the engine's best of the same round. Beside each
 * point: the batch the dynamic batcher formed on average (the statistics extension's inference_count /
 * execution_count over the windows) and the server's CPU per request over the whole `nereid perf` run
 * (/proc/PID/task: the main thread, and all threads: the execution threads and ONNX Runtime's pools,
 * V8's helpers). The model files come from bench/batching/make_models.py (Debian's python3-torch and
 * python3-torchvision), made on the first run.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { StepResult } from '../src/perf/profiler.js';
import { type EngineResult, defaultLayouts, engineOptionsFor, measureEngine } from './batching/engine-limit.js';
import { startNereid, threadCpuMs } from './harness.js';
import { runNereidPerf, writeInputData } from './nereid-perf.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const WORK = `${ROOT}bench/batching/.work`;
const REPOSITORY = `${WORK}/shm_repository`;
const INTERVAL_MS = Number(process.env.BENCH_INTERVAL_MS ?? 3000);
const ENGINE_SECONDS = Number(process.env.BENCH_ENGINE_SECONDS ?? 3);
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 2));
const LAYOUT = process.env.BENCH_LAYOUT ?? '1x2b16';
const COMPARED = (process.env.BENCH_COMPARE_LAYOUTS ?? '1x2,1x2s,2x1').split(',').filter((layout) => layout !== '' && layout !== LAYOUT);
const CONCURRENCY = [1, 8, 32];
// ResNet-18's output, [1, 1000] FP32.
const RESNET_OUTPUT_BYTES = 4000;
const LARGE_SHAPE = [1024, 1024];

/** The config of ResNet-18 served in `layout` (SxT[s][bN]), every choice written out. */
function resnetConfig(layout: string): string {
  const match = /^(\d+)x(\d+)(s?)(?:b(\d+))?$/.exec(layout);
  if (match === null) throw new Error(`layout '${layout}': expected SxT[s][bN] (instances x intra-op threads, s: spinning, bN: max_batch_size N), e.g. 1x2s or 1x2b16`);
  const [, instances, threads, spinning, maxBatchSize = '64'] = match;
  const shapes = (JSON.parse(readFileSync(`${WORK}/manifest.json`, 'utf8')) as { models: Record<string, { input: number[]; output: number[] }> }).models.resnet18!;
  return [
    `name: "resnet18_${layout}"`,
    'platform: "onnxruntime_onnx"',
    `max_batch_size: ${maxBatchSize}`,
    `input [ { name: "INPUT" data_type: TYPE_FP32 dims: [ ${shapes.input.join(', ')} ] } ]`,
    `output [ { name: "OUTPUT" data_type: TYPE_FP32 dims: [ ${shapes.output.join(', ')} ] } ]`,
    `instance_group [ { count: ${instances} kind: KIND_CPU } ]`,
    'dynamic_batching { max_queue_delay_microseconds: 100 }',
    `parameters { key: "intra_op_thread_count" value: { string_value: "${threads}" } }`,
    `parameters { key: "allow_spinning" value: { string_value: "${spinning === 's' ? 1 : 0}" } }`,
    '',
  ].join('\n');
}

if (!existsSync(`${WORK}/onnx/resnet18.onnx`)) {
  spawnSync('/usr/bin/python3', [`${ROOT}bench/batching/make_models.py`, '--models', 'resnet18'], { stdio: 'inherit' });
}
rmSync(REPOSITORY, { recursive: true, force: true });
for (const layout of [LAYOUT, ...COMPARED]) {
  mkdirSync(`${REPOSITORY}/resnet18_${layout}/1`, { recursive: true });
  linkSync(`${WORK}/onnx/resnet18.onnx`, `${REPOSITORY}/resnet18_${layout}/1/model.onnx`);
  writeFileSync(`${REPOSITORY}/resnet18_${layout}/config.pbtxt`, resnetConfig(layout));
}
cpSync(`${ROOT}test/fixtures/model_repository/nobatch_fp32`, `${REPOSITORY}/nobatch_fp32`, { recursive: true });
mkdirSync(`${WORK}/bodies`, { recursive: true });
const loadAtStart = loadavg();

const BEFORE_MAIN = process.env.BENCH_BEFORE_MAIN;
const nereid = await startNereid(REPOSITORY, ['--allow-client-shm=true']);
const before = BEFORE_MAIN === undefined ? undefined : await startNereid(REPOSITORY, ['--allow-client-shm=true'], BEFORE_MAIN);
const engines: EngineResult[] = [];
const rows: string[] = [];
const largeRows: string[] = [];
/** Each round's ratio to its engine at the highest concurrency, by layout and transport. */
const ratios = new Map<string, number[]>();
try {
  const dataFile = writeInputData(`${WORK}/bodies/shared-memory-resnet18.json`, 'INPUT', readFileSync(`${WORK}/samples/resnet18.input.bin`));
  const perf = async (args: readonly string[], server = nereid): Promise<StepResult & { cpu: string }> => {
    const url = `127.0.0.1:${server.httpPort}`;
    const successes = async (model: string): Promise<number> => {
      const body = (await (await fetch(`http://${url}/v2/models/${model}/stats`)).json()) as { model_stats: Array<{ inference_stats: { success: { count: number } } }> };
      return body.model_stats[0]!.inference_stats.success.count;
    };
    const model = args[args.indexOf('-m') + 1]!;
    const [requestsBefore, cpuBefore] = [await successes(model), threadCpuMs(server.pid)];
    const step = (await runNereidPerf([...args, '-u', url, '-p', String(INTERVAL_MS)])).steps[0]!;
    const [requestsAfter, cpuAfter] = [await successes(model), threadCpuMs(server.pid)];
    const usPerRequest = (ms: number): string => ((ms * 1000) / (requestsAfter - requestsBefore)).toFixed(0);
    const batch = step.server.inferenceCount / step.server.executionCount;
    return { ...step, cpu: `${batch.toFixed(1)} | ${usPerRequest(cpuAfter.mainMs - cpuBefore.mainMs)} / ${usPerRequest(cpuAfter.totalMs - cpuBefore.totalMs)}` };
  };
  const highest = CONCURRENCY.at(-1)!;
  for (let round = 0; round < ROUNDS; round++) {
    const engine = await measureEngine(engineOptionsFor(WORK, 'resnet18', { batchSizes: [1, 8, 16, 32, 64], seconds: ENGINE_SECONDS, layouts: defaultLayouts() }), (line) =>
      process.stderr.write(`${line}\n`),
    );
    engines.push(engine);
    const limit = engine.best.inferPerSec;
    const points = [
      ...CONCURRENCY.map((concurrency) => ({ layout: LAYOUT, concurrency, server: nereid, label: LAYOUT })),
      ...COMPARED.map((layout) => ({ layout, concurrency: highest, server: nereid, label: layout })),
      ...(before === undefined ? [] : [{ layout: LAYOUT, concurrency: highest, server: before, label: `${LAYOUT} before` }]),
    ];
    // Every other round runs the points in the reverse order, so that drift does not favour one of them.
    for (const { layout, concurrency, server, label } of round % 2 === 0 ? points : points.reverse()) {
      const common = ['-m', `resnet18_${layout}`, '--concurrency-range', String(concurrency), '--input-data', dataFile];
      const binary = await perf(common, server);
      const shared = await perf([...common, '--shared-memory', 'system', '--output-shared-memory-size', String(RESNET_OUTPUT_BYTES)], server);
      const cell = (step: StepResult & { cpu: string }): string =>
        `${step.throughputInferPerSec.toFixed(1)} | ${(step.throughputInferPerSec / limit).toFixed(2)} | ${(step.latencyUs.p50Us / 1000).toFixed(1)} / ${(step.latencyUs.p99Us / 1000).toFixed(1)} | ${step.cpu}`;
      const row = `| ${round + 1} | ${label} | ${concurrency} | ${cell(binary)} | ${cell(shared)} |`;
      rows.push(row);
      console.error(row);
      if (concurrency === highest) {
        for (const [transport, step] of [['binary', binary], ['shm', shared]] as const) {
          const key = `${label} ${transport}`;
          ratios.set(key, [...(ratios.get(key) ?? []), step.throughputInferPerSec / limit]);
        }
      }
    }
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
  before?.stop();
}
console.log(`ResNet-18 over HTTP, ${ROUNDS} round(s) of the engine then the server; nereid perf windows of ${INTERVAL_MS / 1000} s until three agree within 10 %`);
console.log(`layout ${LAYOUT} at every concurrency${COMPARED.length > 0 ? `, ${COMPARED.join(' and ')} at ${CONCURRENCY.at(-1)!}` : ''} (SxT[s][bN]: instances x intra-op threads, s: pool threads spin, bN: max_batch_size N, else 64)`);
console.log(`load average at the start ${loadAtStart.map((l) => l.toFixed(2)).join(' ')}, at the end ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
for (const [index, engine] of engines.entries()) {
  console.log(`round ${index + 1}: engine's in-process best ${engine.best.inferPerSec.toFixed(1)} infer/s (batch ${engine.best.batchSize}, layout ${engine.best.layout}, ${engine.best.cpuUsPerInference.toFixed(0)} CPU µs an inference)`);
  for (const layout of engine.layouts) console.log(`  ${layout.layout}: ${layout.points.map((point) => `batch ${point.batchSize} ${point.inferPerSec.toFixed(1)}/s`).join(', ')}`);
}
console.log("\nof engine: against the same round's engine best; batch: formed by the batcher on average; CPU: the server's µs a request, main thread / all threads\n");
console.log('| round | layout | concurrency | binary infer/s | of engine | binary p50 / p99 ms | binary batch | binary CPU | shm infer/s | of engine | shm p50 / p99 ms | shm batch | shm CPU |');
console.log('|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
for (const row of rows) console.log(row);
console.log(`\nAt concurrency ${CONCURRENCY.at(-1)!}, of the engine round by round:`);
for (const [key, values] of ratios) console.log(`- ${key}: ${values.map((value) => value.toFixed(2)).join(', ')}`);
console.log(`\nOne ${LARGE_SHAPE.join('x')} FP32 tensor (4 MiB) in and out (nobatch_fp32), concurrency 1, ms per request`);
console.log('| transport | latency | compute input | compute infer | compute output | outside the model (client, socket, front end) |');
console.log('|---|---:|---:|---:|---:|---:|');
for (const row of largeRows) console.log(row);
process.exit(0);
