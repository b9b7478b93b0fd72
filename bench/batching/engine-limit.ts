/**
 * The engine's limit, row (a) of bench/batching/run.ts: the model run in-process with
 * onnxruntime-node, back to back, for each batch size, with no serving around it. Reports
 * inferences/s (runs × batch size / s) per batch size and the best.
 *
 *   node --import tsx bench/batching/engine-limit.ts [--seconds 3] [--batch-sizes 1,2,4,8,16,32,64]
 *       [--layouts 1x2,2x1,1x2s] [--work bench/batching/.work] [--json] resnet18 mlp
 *
 * A layout SxT runs S sessions concurrently, each in its own worker thread with T ONNX Runtime
 * intra-op threads, and sums their throughput: 1xCORES is one session using the whole machine,
 * CORESx1 is Nereid's default layout on CPU (one single-threaded instance per core). Sessions get
 * the options Nereid gives S instances of the model on S×T cores (session-options.ts: sequential
 * execution, 1 inter-op thread, all graph optimisations, pool threads that do not spin); a layout
 * ending in `s` (1x2s) makes the pool threads spin (ONNX Runtime's default, `allow_spinning` 1), one
 * ending in `n` (1x2n) keeps them from it. The default measures 1xCORES, CORESx1 and 1xCORESs, each set
 * of options once, and the limit is the best over layouts and batch sizes.
 *
 * NOTE: each session runs in a worker thread because onnxruntime-node's `session.run()` computes on
 * the calling thread (inside a setImmediate), so two sessions on one thread never overlap.
 */
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { create } from '@bufbuild/protobuf';
import { InferenceSession, Tensor } from 'onnxruntime-node';
import { sessionOptionsFromConfig } from '../../src/backends/onnxruntime/session-options.js';
import { type ModelConfig, ModelConfigSchema, ModelParameterSchema } from '../../src/protocol/gen/model_config_pb.js';

export interface EngineLayout {
  readonly sessions: number;
  readonly threads: number;
  /** Pool threads spin (true) or not (false) between parallel sections; undefined: as the server chooses. */
  readonly isSpinning?: boolean;
}

export interface EnginePoint {
  readonly batchSize: number;
  readonly inferPerSec: number;
  /** Mean wall time of one run of this batch size in one session. */
  readonly runMs: number;
  /** The process's CPU time (every session's threads) per inference. */
  readonly cpuUsPerInference: number;
}

export interface EngineResult {
  readonly model: string;
  readonly layouts: ReadonlyArray<{ readonly layout: string; readonly points: readonly EnginePoint[] }>;
  readonly best: { readonly layout: string; readonly batchSize: number; readonly inferPerSec: number; readonly cpuUsPerInference: number };
}

export interface EngineOptions {
  readonly model: string;
  readonly onnxPath: string;
  /** One item's input shape, without the batch dimension. */
  readonly itemShape: readonly number[];
  readonly batchSizes: readonly number[];
  readonly seconds: number;
  readonly layouts: readonly EngineLayout[];
}

interface WorkerInput {
  readonly onnxPath: string;
  readonly sessionOptions: InferenceSession.SessionOptions;
  readonly itemShape: readonly number[];
}

type ToWorker = { type: 'prepare'; batchSize: number } | { type: 'go'; durationMs: number } | { type: 'exit' };
type FromWorker = { type: 'ready' } | { type: 'prepared' } | { type: 'done'; runs: number; elapsedMs: number };

export const layoutName = (layout: EngineLayout): string => `${layout.sessions}x${layout.threads}${layout.isSpinning === undefined ? '' : layout.isSpinning ? 's' : 'n'}`;

export function defaultLayouts(cores = availableParallelism()): EngineLayout[] {
  const layouts: EngineLayout[] = [{ sessions: 1, threads: cores }];
  if (cores > 1) layouts.push({ sessions: cores, threads: 1 }, { sessions: 1, threads: cores, isSpinning: true });
  return layouts;
}

/** What the server gives each of `layout.sessions` instances of the model on sessions × threads cores. */
function sessionOptionsFor(layout: EngineLayout): InferenceSession.SessionOptions {
  const parameters: ModelConfig['parameters'] = {};
  if (layout.isSpinning !== undefined) parameters.allow_spinning = create(ModelParameterSchema, { stringValue: layout.isSpinning ? '1' : '0' });
  const config = create(ModelConfigSchema, { name: 'engine-limit', parameters });
  return sessionOptionsFromConfig(config, { instanceCount: layout.sessions, cpuCount: layout.sessions * layout.threads });
}

/** Deterministic inputs in [-1, 1): the values do not change the work of these models. */
function inputData(length: number): Float32Array {
  const data = new Float32Array(length);
  let state = 12345;
  for (let i = 0; i < length; i++) {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    data[i] = state / 2 ** 31 - 1;
  }
  return data;
}

async function workerMain(input: WorkerInput): Promise<void> {
  const port = parentPort!;
  const session = await InferenceSession.create(input.onnxPath, input.sessionOptions);
  const itemSize = input.itemShape.reduce((a, b) => a * b, 1);
  const inputName = session.inputNames[0]!;
  let feeds: Record<string, Tensor> = {};
  port.on('message', (message: ToWorker) => {
    void (async () => {
      if (message.type === 'prepare') {
        feeds = { [inputName]: new Tensor('float32', inputData(message.batchSize * itemSize), [message.batchSize, ...input.itemShape]) };
        await session.run(feeds); // the first run of a shape allocates: keep it out of the timing
        port.postMessage({ type: 'prepared' } satisfies FromWorker);
      } else if (message.type === 'go') {
        const start = performance.now();
        const deadline = start + message.durationMs;
        let runs = 0;
        do {
          await session.run(feeds);
          runs++;
        } while (performance.now() < deadline);
        port.postMessage({ type: 'done', runs, elapsedMs: performance.now() - start } satisfies FromWorker);
      } else {
        await session.release();
        port.close();
      }
    })();
  });
  port.postMessage({ type: 'ready' } satisfies FromWorker);
}

/**
 * Loads this file in a worker through tsx's API.
 * NOTE: on Node 20 a worker started on a .ts file does not get the `--import tsx` hooks of its parent,
 * even with the flag in `execArgv`: it fails with ERR_UNKNOWN_FILE_EXTENSION.
 */
const WORKER_BOOT = `import('tsx/esm/api').then(({ tsImport }) => tsImport(${JSON.stringify(fileURLToPath(import.meta.url))}, ${JSON.stringify(import.meta.url)}))`;

/** Resolves with the next message of each worker. */
function nextMessages(workers: readonly Worker[]): Promise<FromWorker[]> {
  return Promise.all(
    workers.map(
      (worker) =>
        new Promise<FromWorker>((resolve, reject) => {
          const onError = (error: Error): void => reject(error);
          worker.once('error', onError);
          worker.once('message', (message: FromWorker) => {
            worker.off('error', onError);
            resolve(message);
          });
        }),
    ),
  );
}

async function measureLayout(options: EngineOptions, layout: EngineLayout, sessionOptions: InferenceSession.SessionOptions, log: (line: string) => void): Promise<EnginePoint[]> {
  const workers = Array.from(
    { length: layout.sessions },
    () => new Worker(WORKER_BOOT, { eval: true, workerData: { onnxPath: options.onnxPath, sessionOptions, itemShape: options.itemShape } satisfies WorkerInput }),
  );
  try {
    await nextMessages(workers); // ready
    const points: EnginePoint[] = [];
    for (const batchSize of options.batchSizes) {
      const prepared = nextMessages(workers);
      for (const worker of workers) worker.postMessage({ type: 'prepare', batchSize } satisfies ToWorker);
      await prepared;
      const done = nextMessages(workers);
      const cpuBefore = process.cpuUsage();
      for (const worker of workers) worker.postMessage({ type: 'go', durationMs: options.seconds * 1000 } satisfies ToWorker);
      const results = (await done) as Array<Extract<FromWorker, { type: 'done' }>>;
      const cpu = process.cpuUsage(cpuBefore);
      const inferences = results.reduce((sum, r) => sum + r.runs * batchSize, 0);
      const cpuUsPerInference = (cpu.user + cpu.system) / inferences;
      const inferPerSec = results.reduce((sum, r) => sum + (r.runs * batchSize) / (r.elapsedMs / 1000), 0);
      const runMs = results.reduce((sum, r) => sum + r.elapsedMs / r.runs, 0) / results.length;
      points.push({ batchSize, inferPerSec, runMs, cpuUsPerInference });
      log(`engine-limit: ${options.model} ${layoutName(layout)} batch ${batchSize}: ${inferPerSec.toFixed(1)} infer/s (${runMs.toFixed(2)} ms a run, ${cpuUsPerInference.toFixed(0)} CPU µs an inference)`);
    }
    return points;
  } finally {
    for (const worker of workers) worker.postMessage({ type: 'exit' } satisfies ToWorker);
    await Promise.all(workers.map((worker) => new Promise((resolve) => worker.once('exit', resolve))));
  }
}

export async function measureEngine(options: EngineOptions, log: (line: string) => void = () => {}): Promise<EngineResult> {
  const layouts = [];
  let best = { layout: '', batchSize: 0, inferPerSec: 0, cpuUsPerInference: 0 };
  const measured = new Map<string, string>();
  for (const layout of options.layouts) {
    const sessionOptions = sessionOptionsFor(layout);
    const key = JSON.stringify({ sessions: layout.sessions, sessionOptions });
    const same = measured.get(key);
    if (same !== undefined) {
      log(`engine-limit: ${options.model} ${layoutName(layout)} is ${same} (the same options), not measured again`);
      continue;
    }
    measured.set(key, layoutName(layout));
    const points = await measureLayout(options, layout, sessionOptions, log);
    layouts.push({ layout: layoutName(layout), points });
    for (const point of points) {
      if (point.inferPerSec > best.inferPerSec) best = { layout: layoutName(layout), batchSize: point.batchSize, inferPerSec: point.inferPerSec, cpuUsPerInference: point.cpuUsPerInference };
    }
  }
  return { model: options.model, layouts, best };
}

export function parseLayouts(text: string): EngineLayout[] {
  return text.split(',').map((item) => {
    const match = /^(\d+)x(\d+)([sn]?)$/.exec(item.trim());
    if (match === null) throw new Error(`layout '${item}' is not SESSIONSxTHREADS[s|n], e.g. 1x2, 2x1, 1x2s or 1x2n`);
    const sessions = Number(match[1]);
    const threads = Number(match[2]);
    return match[3] === '' ? { sessions, threads } : { sessions, threads, isSpinning: match[3] === 's' };
  });
}

interface Manifest {
  readonly models: Record<string, { readonly input: number[]; readonly onnx: string }>;
}

/** The options to measure `model` of make_models.py's output folder `work`. */
export function engineOptionsFor(work: string, model: string, rest: Pick<EngineOptions, 'batchSizes' | 'seconds' | 'layouts'>): EngineOptions {
  const manifest = JSON.parse(readFileSync(`${work}/manifest.json`, 'utf8')) as Manifest;
  const entry = manifest.models[model];
  if (entry === undefined) throw new Error(`model '${model}' is not in ${work}/manifest.json; run bench/batching/make_models.py --models ${model}`);
  return { model, onnxPath: `${work}/${entry.onnx}`, itemShape: entry.input, ...rest };
}

async function cli(argv: readonly string[]): Promise<void> {
  let seconds = 3;
  let batchSizes = [1, 2, 4, 8, 16, 32, 64];
  let layouts = defaultLayouts();
  let work = fileURLToPath(new URL('.work', import.meta.url));
  let isJson = false;
  const models: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--seconds') seconds = Number(argv[++i]);
    else if (arg === '--batch-sizes') batchSizes = argv[++i]!.split(',').map(Number);
    else if (arg === '--layouts') layouts = parseLayouts(argv[++i]!);
    else if (arg === '--work') work = argv[++i]!;
    else if (arg === '--json') isJson = true;
    else if (arg.startsWith('--')) throw new Error(`engine-limit: unknown flag '${arg}'`);
    else models.push(arg);
  }
  if (models.length === 0) models.push('resnet18', 'mlp');
  const results: EngineResult[] = [];
  for (const model of models) {
    results.push(await measureEngine(engineOptionsFor(work, model, { batchSizes, seconds, layouts }), (line) => process.stderr.write(`${line}\n`)));
  }
  if (isJson) {
    process.stdout.write(`${JSON.stringify(results)}\n`);
    return;
  }
  for (const result of results) {
    console.log(`\n${result.model}: best ${result.best.inferPerSec.toFixed(1)} infer/s at batch ${result.best.batchSize}, layout ${result.best.layout}\n`);
    console.log(`| batch | ${result.layouts.map((l) => `${l.layout} infer/s | ${l.layout} ms a run`).join(' | ')} |`);
    console.log(`|---|${result.layouts.map(() => '---|---').join('|')}|`);
    batchSizes.forEach((batchSize, i) => {
      console.log(`| ${batchSize} | ${result.layouts.map((l) => `${l.points[i]!.inferPerSec.toFixed(1)} | ${l.points[i]!.runMs.toFixed(2)}`).join(' | ')} |`);
    });
  }
}

if (!isMainThread) {
  await workerMain(workerData as WorkerInput);
} else if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  await cli(process.argv.slice(2));
}
