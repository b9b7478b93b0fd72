/**
 * Dynamic batching benchmark: on the same model files, in one run, over HTTP with the binary data
 * extension, wrk at concurrency 1, 8, 32 and 64 against
 *   (a) the engine's limit: the model in-process with onnxruntime-node at its best batch size (engine-limit.ts);
 *   (b) the naive way: a minimal node:http server running the model inline per request (naive-server.ts);
 *   (c) the control group: one FastAPI + uvicorn service per model, the model in PyTorch (fastapi_service.py);
 *   (d) Nereid serving `<m>_nobatch` (no scheduling block);
 *   (e) Nereid serving `<m>_batch` (`dynamic_batching { max_queue_delay_microseconds }`);
 * for a ResNet-18 with random weights (compute-heavy) and a small MLP (64 → 256 → 256 → 10), then prints
 * a table per model and the targets as ratios within the run. One wrk request is one inference of batch 1.
 *
 *   npm run bench:batching                          (builds Nereid first; or, after `npm run build`:)
 *   node --import tsx bench/batching/run.ts
 *   BENCH_QUICK=1 node --import tsx bench/batching/run.ts      (3 s per point, concurrency 1 and 32)
 *
 * Environment (defaults in brackets):
 *   BENCH_QUICK [unset]                  1: the short defaults marked "quick" below
 *   BENCH_DURATION_S [10, quick 3]       seconds of wrk per point
 *   BENCH_WARMUP_S [3, quick 1]          seconds of wrk, discarded, before each server's first point
 *   BENCH_ENGINE_S [3, quick 1]          seconds per batch size and layout of the engine limit
 *   BENCH_CONCURRENCY [1,8,32,64; quick 1,32]
 *   BENCH_MODELS [resnet18,mlp]          BENCH_SERVERS [engine,naive,fastapi,nereid_nobatch,nereid_batch]
 *   BENCH_WRK_THREADS [1]                wrk threads (at most the connections)
 *   BENCH_INSTANCE_COUNT [resnet18=1,mlp=2]  instance_group count of the Nereid models: N, or MODEL=N,...
 *                                        (make_models.py --instance-count, which explains the default)
 *   BENCH_INTRA_OP_THREADS [0]           intra_op_thread_count per instance; 0 leaves Nereid's equal share of the cores
 *   BENCH_MAX_QUEUE_DELAY_US [100]       max_queue_delay_microseconds of the `<m>_batch` models
 *   BENCH_ENGINE_LAYOUTS [1xCORES,CORESx1]   sessions x intra-op threads measured for the engine limit
 *   BENCH_NEREID_MAIN [dist/cli/main.js] the Nereid build to start (`node MAIN serve ...`)
 *   BENCH_NEREID_ARGS ['']               extra flags for `nereid serve`, split on spaces
 *   BENCH_FASTAPI_ARGS ['']              extra flags for fastapi_service.py (e.g. --torch-threads 2 --endpoint threadpool)
 *   BENCH_PYTHON [/usr/bin/python3]      BENCH_WRK [wrk]      BENCH_WORK_DIR [bench/batching/.work]
 *
 * Servers start one at a time, each only while it is measured, on a free port of 127.0.0.1; their
 * logs go to BENCH_WORK_DIR/logs/. Nereid runs as `node MAIN serve --model-repository
 * BENCH_WORK_DIR/model_repository --http-port PORT --http-address 127.0.0.1 --exit-on-error true`,
 * once per model, and serves both `<m>_nobatch` and `<m>_batch`. Each server's answer to the sample
 * request is checked against PyTorch's output before the first wrk run and after every one. The
 * report is printed and saved to bench/results/ (markdown and JSON).
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { defaultLayouts, type EngineResult, layoutName, parseLayouts } from './engine-limit.js';
import { encodeInferRequest, toFloat32 } from './kserve-binary.js';
import { engineTable, type ModelResult, modelTable, SERVER_KINDS, type ServerKind, targets, targetTable } from './report.js';
import { checkAnswer, freePort, type ServerProcess, startServer, stopAllOnExit } from './servers.js';
import { runWrk, type WrkResult } from './wrk.js';

const HERE = fileURLToPath(new URL('.', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

const env = process.env;
const isQuick = env.BENCH_QUICK === '1';
const numberFrom = (name: string, fallback: number): number => {
  const text = env[name];
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name}=${text}: expected a non-negative number`);
  return value;
};
const listFrom = (name: string, fallback: readonly string[]): string[] => {
  const text = env[name];
  return text === undefined || text.trim() === '' ? [...fallback] : text.split(',').map((s) => s.trim()).filter((s) => s !== '');
};

const SETTINGS = {
  durationS: Math.max(1, Math.round(numberFrom('BENCH_DURATION_S', isQuick ? 3 : 10))),
  warmupS: Math.round(numberFrom('BENCH_WARMUP_S', isQuick ? 1 : 3)),
  engineS: numberFrom('BENCH_ENGINE_S', isQuick ? 1 : 3),
  concurrencies: listFrom('BENCH_CONCURRENCY', isQuick ? ['1', '32'] : ['1', '8', '32', '64']).map((text) => {
    const value = Number(text);
    if (!Number.isInteger(value) || value < 1) throw new Error(`BENCH_CONCURRENCY: '${text}' is not a positive integer`);
    return value;
  }),
  models: listFrom('BENCH_MODELS', ['resnet18', 'mlp']),
  servers: listFrom('BENCH_SERVERS', ['engine', ...SERVER_KINDS]),
  wrkThreads: numberFrom('BENCH_WRK_THREADS', 1),
  instanceCount: env.BENCH_INSTANCE_COUNT || 'resnet18=1,mlp=2',
  intraOpThreads: numberFrom('BENCH_INTRA_OP_THREADS', 0),
  maxQueueDelayUs: numberFrom('BENCH_MAX_QUEUE_DELAY_US', 100),
  engineLayouts: env.BENCH_ENGINE_LAYOUTS ? parseLayouts(env.BENCH_ENGINE_LAYOUTS) : defaultLayouts(),
  batchSizes: [1, 2, 4, 8, 16, 32, 64],
  nereidArgs: (env.BENCH_NEREID_ARGS ?? '').split(' ').filter((s) => s !== ''),
  fastapiArgs: (env.BENCH_FASTAPI_ARGS ?? '').split(' ').filter((s) => s !== ''),
  python: env.BENCH_PYTHON ?? '/usr/bin/python3',
  wrk: env.BENCH_WRK ?? 'wrk',
  work: env.BENCH_WORK_DIR ?? `${HERE}.work`,
};
const REPOSITORY = `${SETTINGS.work}/model_repository`;
const NEREID_MAIN = env.BENCH_NEREID_MAIN ?? `${ROOT}dist/cli/main.js`;
const log = (line: string): void => void process.stderr.write(`${line}\n`);
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

interface Manifest {
  readonly models: Record<string, { readonly input: number[]; readonly output: number[]; readonly onnx: string }>;
}

function checkPrerequisites(): void {
  const unknown = SETTINGS.servers.filter((s) => s !== 'engine' && !SERVER_KINDS.includes(s as ServerKind));
  if (unknown.length > 0) throw new Error(`BENCH_SERVERS: unknown ${unknown.join(', ')}; expected engine,${SERVER_KINDS.join(',')}`);
  if (spawnSync(SETTINGS.wrk, ['-v']).error !== undefined) throw new Error(`'${SETTINGS.wrk}' not found: apt-get install -y wrk`);
  const needsNereid = SETTINGS.servers.some((s) => s.startsWith('nereid'));
  if (needsNereid && !existsSync(NEREID_MAIN)) throw new Error(`${NEREID_MAIN} is missing: run npm run build first`);
  const modules = SETTINGS.servers.includes('fastapi') ? 'torch, torchvision, onnx, fastapi, uvicorn' : 'torch, torchvision, onnx';
  const python = spawnSync(SETTINGS.python, ['-c', `import ${modules}`], { encoding: 'utf8' });
  if (python.status !== 0) {
    throw new Error(
      `${SETTINGS.python} cannot import ${modules}:\n${python.stderr ?? python.error?.message}\n` +
        'install Debian 12\'s packages: apt-get install -y python3-torch python3-torchvision python3-onnx python3-fastapi python3-uvicorn python3-uvloop python3-httptools',
    );
  }
}

/** make_models.py exports the models when missing and rewrites the configs from the settings. */
function makeModels(): Manifest {
  const args = [
    `${HERE}make_models.py`,
    '--out',
    SETTINGS.work,
    '--models',
    SETTINGS.models.join(','),
    '--instance-count',
    SETTINGS.instanceCount,
    '--intra-op-threads',
    String(SETTINGS.intraOpThreads),
    '--max-queue-delay-us',
    String(SETTINGS.maxQueueDelayUs),
  ];
  const result = spawnSync(SETTINGS.python, args, { stdio: ['ignore', 'inherit', 'inherit'], timeout: 600_000 });
  if (result.status !== 0) throw new Error(`make_models.py failed (${result.status ?? result.signal ?? result.error?.message})`);
  return JSON.parse(readFileSync(`${SETTINGS.work}/manifest.json`, 'utf8')) as Manifest;
}

interface Sample {
  readonly bodyFile: string;
  readonly body: Buffer;
  readonly headerLength: number;
  readonly reference: Float32Array;
}

/** The request every client sends for `model`: make_models.py's sample input, batch 1, binary. */
function writeSample(model: string, itemShape: readonly number[]): Sample {
  const input = readFileSync(`${SETTINGS.work}/samples/${model}.input.bin`);
  const { body, headerLength } = encodeInferRequest([{ name: 'INPUT', datatype: 'FP32', shape: [1, ...itemShape], bytes: input }]);
  mkdirSync(`${SETTINGS.work}/bodies`, { recursive: true });
  const bodyFile = `${SETTINGS.work}/bodies/${model}.bin`;
  writeFileSync(bodyFile, body);
  return { bodyFile, body, headerLength, reference: toFloat32(readFileSync(`${SETTINGS.work}/samples/${model}.output.bin`)) };
}

/** Runs engine-limit.ts in a child process, so the runner holds no ONNX Runtime threads. */
function engineLimit(model: string): Promise<EngineResult> {
  const args = [
    '--import',
    'tsx',
    `${HERE}engine-limit.ts`,
    '--json',
    '--work',
    SETTINGS.work,
    '--seconds',
    String(SETTINGS.engineS),
    '--batch-sizes',
    SETTINGS.batchSizes.join(','),
    '--layouts',
    SETTINGS.engineLayouts.map(layoutName).join(','),
    model,
  ];
  const limitMs = SETTINGS.engineLayouts.length * SETTINGS.batchSizes.length * (SETTINGS.engineS + 30) * 1000;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), limitMs);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (code !== 0) reject(new Error(`engine-limit.ts ${model} exited with ${code ?? signal}`));
      else resolve((JSON.parse(stdout) as EngineResult[])[0]!);
    });
  });
}

/**
 * Checks the answer, warms up, then runs wrk at each concurrency. After every wrk run the answer is
 * checked again, which also waits out the backlog.
 * NOTE: when wrk stops, the requests it had in flight are still queued in the server, which computes
 * them anyway (up to 63 ResNet-18 runs, over a second); the next run's first requests would wait
 * behind them. The check request queues behind them too, so once it is answered the server is idle.
 */
async function measure(server: ServerProcess, path: string, sample: Sample): Promise<{ runs: WrkResult[]; maxDiff: number }> {
  const url = `${server.baseUrl}${path}`;
  let maxDiff = 0;
  const check = async (): Promise<void> => {
    maxDiff = Math.max(maxDiff, await checkAnswer(url, sample.body, sample.headerLength, sample.reference));
    await sleep(200); // let wrk's connections close
  };
  await check();
  log(`  ${server.label}: answer matches PyTorch (max |diff| ${maxDiff.toExponential(1)})`);
  const wrkOptions = { url, threads: SETTINGS.wrkThreads, bodyFile: sample.bodyFile, headerLength: sample.headerLength, wrk: SETTINGS.wrk };
  if (SETTINGS.warmupS > 0) {
    await runWrk({ ...wrkOptions, concurrency: Math.max(...SETTINGS.concurrencies), durationS: SETTINGS.warmupS });
    await check();
  }
  const runs: WrkResult[] = [];
  for (const concurrency of SETTINGS.concurrencies) {
    const run = await runWrk({ ...wrkOptions, concurrency, durationS: SETTINGS.durationS });
    await check();
    const errors = run.errorCount > 0 ? `, ${run.errorCount} errors ${JSON.stringify(run.errors)}` : '';
    log(`  ${server.label} c=${concurrency}: ${run.inferPerSec.toFixed(1)} infer/s, p50 ${run.p50Ms.toFixed(2)} ms, p99 ${run.p99Ms.toFixed(2)} ms${errors}`);
    runs.push(run);
  }
  return { runs, maxDiff };
}

/** A rough wall time for the run, from the settings and the time one model took on a 2-core VM. */
function estimateS(): number {
  const engine = SETTINGS.servers.includes('engine') ? SETTINGS.engineLayouts.length * SETTINGS.batchSizes.length * (SETTINGS.engineS + 0.7) : 0;
  const servers = SETTINGS.servers.filter((s) => s !== 'engine').length;
  const perServer = 2 + SETTINGS.warmupS + SETTINGS.concurrencies.length * (SETTINGS.durationS + 0.5);
  return SETTINGS.models.length * (engine + servers * perServer);
}

async function benchModel(model: string, manifest: Manifest): Promise<ModelResult> {
  const entry = manifest.models[model]!;
  const sample = writeSample(model, entry.input);
  const result: ModelResult = { model, servers: {}, maxDiffs: {} };
  const wants = (name: string): boolean => SETTINGS.servers.includes(name);
  mkdirSync(`${SETTINGS.work}/logs`, { recursive: true });
  const logFile = (name: string): string => `${SETTINGS.work}/logs/${name}-${model}.log`;

  if (wants('engine')) {
    log(`${model}: (a) engine limit, ${SETTINGS.engineS} s per batch size and layout`);
    result.engine = await engineLimit(model);
  }
  const record = (kind: ServerKind, measured: { runs: WrkResult[]; maxDiff: number }): void => {
    result.servers[kind] = measured.runs;
    result.maxDiffs[kind] = measured.maxDiff;
  };

  if (wants('naive')) {
    log(`${model}: (b) naive node:http server`);
    const port = await freePort();
    const server = await startServer({
      label: 'naive',
      command: process.execPath,
      args: ['--import', 'tsx', `${HERE}naive-server.ts`, '--port', String(port), `${model}=${SETTINGS.work}/${entry.onnx}`],
      port,
      logFile: logFile('naive'),
    });
    try {
      record('naive', await measure(server, `/v2/models/${model}/infer`, sample));
    } finally {
      await server.stop();
    }
  }

  if (wants('fastapi')) {
    log(`${model}: (c) FastAPI + PyTorch`);
    const port = await freePort();
    const server = await startServer({
      label: 'fastapi',
      command: SETTINGS.python,
      args: [`${HERE}fastapi_service.py`, '--model', model, '--work', SETTINGS.work, '--port', String(port), ...SETTINGS.fastapiArgs],
      port,
      logFile: logFile('fastapi'),
    });
    try {
      record('fastapi', await measure(server, `/v2/models/${model}/infer`, sample));
    } finally {
      await server.stop();
    }
  }

  const variants = (['nereid_nobatch', 'nereid_batch'] as const).filter(wants);
  if (variants.length > 0) {
    log(`${model}: (d, e) Nereid (${NEREID_MAIN})`);
    const port = await freePort();
    const server = await startServer({
      label: 'nereid',
      command: process.execPath,
      args: [NEREID_MAIN, 'serve', '--model-repository', REPOSITORY, '--http-port', String(port), '--http-address', '127.0.0.1', '--exit-on-error', 'true', '--grpc-port', '0', '--metrics-port', '0', ...SETTINGS.nereidArgs],
      port,
      logFile: logFile('nereid'),
    });
    try {
      for (const kind of variants) {
        const modelName = `${model}_${kind === 'nereid_batch' ? 'batch' : 'nobatch'}`;
        record(kind, await measure({ ...server, label: `nereid ${modelName}` }, `/v2/models/${modelName}/infer`, sample));
      }
    } finally {
      await server.stop();
    }
  }
  return result;
}

/** The fraction of all cores' time spent busy over the next `ms` (0 idle, 1 every core busy). */
async function cpuBusy(ms: number): Promise<number> {
  const total = (): { busy: number; all: number } =>
    cpus().reduce(
      (sum, cpu) => {
        const all = Object.values(cpu.times).reduce((a, b) => a + b, 0);
        return { busy: sum.busy + all - cpu.times.idle, all: sum.all + all };
      },
      { busy: 0, all: 0 },
    );
  const before = total();
  await sleep(ms);
  const after = total();
  return (after.busy - before.busy) / Math.max(1, after.all - before.all);
}

function describeSettings(busyAtStart: number): string {
  const commit = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).stdout?.trim() || 'unknown';
  const dirty = spawnSync('git', ['status', '--porcelain', '--', 'src'], { cwd: ROOT, encoding: 'utf8' }).stdout?.trim() ? ' (src/ has uncommitted changes)' : '';
  const ortVersion = (JSON.parse(readFileSync(`${ROOT}node_modules/onnxruntime-node/package.json`, 'utf8')) as { version: string }).version;
  const lines = [
    `- machine: ${availableParallelism()} cores (${cpus()[0]?.model ?? 'unknown CPU'}), Node.js ${process.version}, onnxruntime-node ${ortVersion}; server, wrk and workers share the cores`,
    `- Nereid: node ${NEREID_MAIN} serve (repository at commit ${commit}${dirty}); CPUs ${(busyAtStart * 100).toFixed(0)} % busy just before the run${busyAtStart > 0.1 ? ' (other work on the machine: noisy figures)' : ''}`,
    `- wrk: ${SETTINGS.durationS} s per point after ${SETTINGS.warmupS} s of warm-up per server, ${SETTINGS.wrkThreads} thread(s), one keep-alive connection per unit of concurrency; one request = one inference of batch 1`,
    `- Nereid models: instance_group count ${SETTINGS.instanceCount} (KIND_CPU), ${SETTINGS.intraOpThreads > 0 ? `${SETTINGS.intraOpThreads} intra-op thread(s) each` : 'intra-op threads: Nereid\'s equal share of the cores'}; \`<m>_batch\`: dynamic_batching { max_queue_delay_microseconds: ${SETTINGS.maxQueueDelayUs} }${SETTINGS.nereidArgs.length > 0 ? `; serve flags: ${SETTINGS.nereidArgs.join(' ')}` : ''}`,
    `- engine limit: ${SETTINGS.engineS} s per batch size (${SETTINGS.batchSizes.join(', ')}) and layout (${SETTINGS.engineLayouts.map(layoutName).join(', ')}: sessions x intra-op threads); the best of all`,
  ];
  if (SETTINGS.servers.includes('naive')) lines.push('- naive server: one onnxruntime-node session with default options, the model run inline');
  if (SETTINGS.servers.includes('fastapi')) lines.push(`- FastAPI: one uvicorn process${SETTINGS.fastapiArgs.length > 0 ? `, flags: ${SETTINGS.fastapiArgs.join(' ')}` : ''}:`);
  return lines.join('\n');
}

async function main(): Promise<void> {
  const startedAt = new Date();
  const busyAtStart = await cpuBusy(2000);
  if (busyAtStart > 0.1) log(`warning: the CPUs were ${(busyAtStart * 100).toFixed(0)} % busy before the run; other work on the machine skews the figures`);
  stopAllOnExit();
  checkPrerequisites();
  const manifest = makeModels();
  log(`about ${Math.ceil(estimateS() / 60)} min to go (${SETTINGS.models.join(', ')}; ${SETTINGS.servers.join(', ')}; concurrency ${SETTINGS.concurrencies.join(', ')})`);
  const results: ModelResult[] = [];
  for (const model of SETTINGS.models) results.push(await benchModel(model, manifest));

  const wallS = (Date.now() - startedAt.getTime()) / 1000;
  const fastapiLogs = (SETTINGS.servers.includes('fastapi') ? SETTINGS.models : []).map((m) => `${SETTINGS.work}/logs/fastapi-${m}.log`).filter(existsSync);
  const torchLine = fastapiLogs.map((f) => readFileSync(f, 'utf8').split('\n').find((l) => l.startsWith('fastapi_service:'))).find((l) => l !== undefined);
  const sections = [
    `# Dynamic batching benchmark, ${startedAt.toISOString()} (${wallS.toFixed(0)} s)`,
    describeSettings(busyAtStart) + (torchLine !== undefined ? `\n  ${torchLine}` : ''),
    ...results.flatMap((r) => [`## ${r.model}`, modelTable(r, SETTINGS.concurrencies)]),
    '## Targets (ratios within this run)',
    targetTable(targets(results)),
    '## Engine limit by batch size',
    ...results.flatMap((r) => (r.engine !== undefined ? [engineTable(r.engine)] : [])),
  ];
  const report = sections.join('\n\n') + '\n';
  process.stdout.write(`\n${report}`);
  const resultsDir = `${ROOT}bench/results`;
  mkdirSync(resultsDir, { recursive: true });
  const stem = `${resultsDir}/batching-${startedAt.toISOString().replace(/[:.]/g, '-')}`;
  writeFileSync(`${stem}.md`, report);
  writeFileSync(`${stem}.json`, `${JSON.stringify({ startedAt, wallS, settings: SETTINGS, results, targets: targets(results) }, null, 2)}\n`);
  log(`saved ${stem}.md and .json`);
}

await main();
