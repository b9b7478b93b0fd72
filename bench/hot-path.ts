/**
 * The hot path (issue 20): what one request costs through Nereid beside a naive server, in one run.
 * Over HTTP with the binary data extension, `wrk -t1` with bench/batching/infer.lua at concurrency 1, 8
 * and 32, the servers measured in turn for each point (A B, then B A in the next round) on:
 *   identity_nobatch    an identity over 16 FP32, no scheduling block, 1 instance
 *   mlp_nobatch         the MLP 64 → 256 → 256 → 10, no scheduling block
 *   mlp_batch0          the MLP with dynamic_batching { max_queue_delay_microseconds: 0 }
 *   mlp_batch2000       the MLP with dynamic_batching { max_queue_delay_microseconds: 2000 }
 *   resnet18_batch      ResNet-18 (random weights) with dynamic_batching (100 µs)
 * Baselines in the same run: bench/batching/naive-server.ts (node:http, onnxruntime-node inline) and
 * the engine's in-process best-batch limit (bench/batching/engine-limit.ts) for the MLP and ResNet-18.
 * A second Nereid build (BENCH_BEFORE_MAIN, e.g. the commit before a change) is measured alongside,
 * so that "before" and "after" come from the same run.
 *
 *   npm run bench:hot-path
 *   BENCH_SECONDS=2 BENCH_ROUNDS=1 node --import tsx bench/hot-path.ts     (fast iteration)
 *
 * Environment (defaults in brackets):
 *   BENCH_SECONDS [5]          seconds of wrk per point and round
 *   BENCH_ROUNDS [2]           rounds per point; the report shows the mean rate and the median p50
 *   BENCH_CONCURRENCY [1,8,32]
 *   BENCH_CONFIGS [all]        a subset of the model names above
 *   BENCH_ENGINE_S [2]         seconds per batch size and layout of the engine limit; 0 skips it
 *   BENCH_INSTANCE_COUNT [identity=1,mlp=2,resnet18=1]
 *   BENCH_NEREID_MAIN [dist/cli/main.js]   BENCH_BEFORE_MAIN [unset]   BENCH_NEREID_ARGS ['']
 *   BENCH_WORK_DIR [bench/batching/.work]  (shared with bench:batching: the exported models are reused)
 *
 * Beside each rate, the server's CPU time per request (user + system, all its threads, from
 * /proc/PID/stat over the wrk run): a figure that a loaded machine disturbs much less than the rate.
 *
 * The answer of every server is checked against PyTorch's before and after its runs. The report is
 * printed and saved to bench/results/hot-path-<time>.md and .json.
 */
import { spawn, spawnSync } from 'node:child_process';
import { linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { EngineResult } from './batching/engine-limit.js';
import { encodeInferRequest, toFloat32 } from './batching/kserve-binary.js';
import { checkAnswer, freePort, type ServerProcess, startServer, stopAllOnExit } from './batching/servers.js';
import { runWrk, type WrkResult } from './batching/wrk.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const env = process.env;
const numberFrom = (name: string, fallback: number): number => {
  const value = env[name] === undefined || env[name] === '' ? fallback : Number(env[name]);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name}=${env[name]}: expected a non-negative number`);
  return value;
};
const listFrom = (name: string, fallback: readonly string[]): string[] =>
  env[name] === undefined || env[name]!.trim() === '' ? [...fallback] : env[name]!.split(',').map((s) => s.trim()).filter((s) => s !== '');

interface BenchConfig {
  readonly name: string;
  readonly model: 'identity' | 'mlp' | 'resnet18';
  /** max_queue_delay_microseconds, or undefined for no dynamic batching. */
  readonly queueDelayUs?: number;
}

const CONFIGS: readonly BenchConfig[] = [
  { name: 'identity_nobatch', model: 'identity' },
  { name: 'mlp_nobatch', model: 'mlp' },
  { name: 'mlp_batch0', model: 'mlp', queueDelayUs: 0 },
  { name: 'mlp_batch2000', model: 'mlp', queueDelayUs: 2000 },
  { name: 'resnet18_batch', model: 'resnet18', queueDelayUs: 100 },
];

const SETTINGS = {
  seconds: Math.max(1, Math.round(numberFrom('BENCH_SECONDS', 5))),
  rounds: Math.max(1, Math.round(numberFrom('BENCH_ROUNDS', 2))),
  concurrencies: listFrom('BENCH_CONCURRENCY', ['1', '8', '32']).map(Number),
  configs: listFrom('BENCH_CONFIGS', CONFIGS.map((c) => c.name)),
  engineS: numberFrom('BENCH_ENGINE_S', 2),
  instanceCount: env.BENCH_INSTANCE_COUNT || 'identity=1,mlp=2,resnet18=1',
  nereidMain: env.BENCH_NEREID_MAIN ?? `${ROOT}dist/cli/main.js`,
  beforeMain: env.BENCH_BEFORE_MAIN,
  nereidArgs: (env.BENCH_NEREID_ARGS ?? '').split(' ').filter((s) => s !== ''),
  work: env.BENCH_WORK_DIR ?? `${ROOT}bench/batching/.work`,
};
const configs = CONFIGS.filter((c) => SETTINGS.configs.includes(c.name));
const models = [...new Set(configs.map((c) => c.model))];
const log = (line: string): void => void process.stderr.write(`${line}\n`);
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const CLOCK_TICKS_PER_S = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/** CPU seconds a process has used (user + system, all threads), from /proc/PID/stat. */
function cpuSecondsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // After the command: state is field 3, utime 14 and stime 15 (proc(5)).
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_S;
}

function instanceCountOf(model: string): number {
  const entry = SETTINGS.instanceCount.split(',').find((item) => item.startsWith(`${model}=`));
  return entry === undefined ? 1 : Number(entry.slice(model.length + 1));
}

/** make_models.py exports what is missing; the hot-path repository links its ONNX files. */
function makeRepository(): string {
  const args = [`${ROOT}bench/batching/make_models.py`, '--out', SETTINGS.work, '--models', models.join(','), '--instance-count', models.map((m) => `${m}=${instanceCountOf(m)}`).join(',')];
  const result = spawnSync('/usr/bin/python3', args, { stdio: ['ignore', 'inherit', 'inherit'], timeout: 600_000 });
  if (result.status !== 0) throw new Error(`make_models.py failed (${result.status ?? result.signal})`);
  const repository = `${SETTINGS.work}/hot_repository`;
  rmSync(repository, { recursive: true, force: true });
  const manifest = JSON.parse(readFileSync(`${SETTINGS.work}/manifest.json`, 'utf8')) as { models: Record<string, { input: number[]; output: number[] }> };
  for (const config of configs) {
    const shapes = manifest.models[config.model]!;
    mkdirSync(`${repository}/${config.name}/1`, { recursive: true });
    linkSync(`${SETTINGS.work}/onnx/${config.model}.onnx`, `${repository}/${config.name}/1/model.onnx`);
    const lines = [
      `name: "${config.name}"`,
      'platform: "onnxruntime_onnx"',
      'max_batch_size: 64',
      `input [ { name: "INPUT" data_type: TYPE_FP32 dims: [ ${shapes.input.join(', ')} ] } ]`,
      `output [ { name: "OUTPUT" data_type: TYPE_FP32 dims: [ ${shapes.output.join(', ')} ] } ]`,
      `instance_group [ { count: ${instanceCountOf(config.model)} kind: KIND_CPU } ]`,
    ];
    if (config.queueDelayUs !== undefined) lines.push(`dynamic_batching { max_queue_delay_microseconds: ${config.queueDelayUs} }`);
    writeFileSync(`${repository}/${config.name}/config.pbtxt`, `${lines.join('\n')}\n`);
  }
  return repository;
}

interface Sample {
  readonly bodyFile: string;
  readonly body: Buffer;
  readonly headerLength: number;
  readonly reference: Float32Array;
}

function writeSample(model: string): Sample {
  const manifest = JSON.parse(readFileSync(`${SETTINGS.work}/manifest.json`, 'utf8')) as { models: Record<string, { input: number[] }> };
  const input = readFileSync(`${SETTINGS.work}/samples/${model}.input.bin`);
  const { body, headerLength } = encodeInferRequest([{ name: 'INPUT', datatype: 'FP32', shape: [1, ...manifest.models[model]!.input], bytes: input }]);
  mkdirSync(`${SETTINGS.work}/bodies`, { recursive: true });
  const bodyFile = `${SETTINGS.work}/bodies/${model}.bin`;
  writeFileSync(bodyFile, body);
  return { bodyFile, body, headerLength, reference: toFloat32(readFileSync(`${SETTINGS.work}/samples/${model}.output.bin`)) };
}

function engineLimit(model: string): Promise<EngineResult> {
  const args = ['--import', 'tsx', `${ROOT}bench/batching/engine-limit.ts`, '--json', '--work', SETTINGS.work, '--seconds', String(SETTINGS.engineS), model];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.once('exit', (code) => (code === 0 ? resolve((JSON.parse(stdout) as EngineResult[])[0]!) : reject(new Error(`engine-limit.ts ${model} exited with ${code}`))));
  });
}

interface Server {
  readonly label: string;
  readonly process: ServerProcess;
  /** The model name to request for a config. */
  readonly path: (config: BenchConfig) => string;
}

async function startServers(repository: string): Promise<Server[]> {
  mkdirSync(`${SETTINGS.work}/logs`, { recursive: true });
  const servers: Server[] = [];
  const naivePort = await freePort();
  const naive = await startServer({
    label: 'naive',
    command: process.execPath,
    args: ['--import', 'tsx', `${ROOT}bench/batching/naive-server.ts`, '--port', String(naivePort), ...models.map((m) => `${m}=${SETTINGS.work}/onnx/${m}.onnx`)],
    port: naivePort,
    logFile: `${SETTINGS.work}/logs/hot-naive.log`,
  });
  servers.push({ label: 'naive', process: naive, path: (config) => `/v2/models/${config.model}/infer` });
  const builds: Array<[string, string]> = [['nereid', SETTINGS.nereidMain]];
  if (SETTINGS.beforeMain !== undefined) builds.push(['before', SETTINGS.beforeMain]);
  for (const [label, main] of builds) {
    const port = await freePort();
    const server = await startServer({
      label,
      command: process.execPath,
      args: [main, 'serve', '--model-repository', repository, '--http-port', String(port), '--http-address', '127.0.0.1', '--grpc-port', '0', '--metrics-port', '0', '--exit-on-error', 'true', ...SETTINGS.nereidArgs],
      port,
      logFile: `${SETTINGS.work}/logs/hot-${label}.log`,
    });
    servers.push({ label, process: server, path: (config) => `/v2/models/${config.name}/infer` });
  }
  return servers;
}

interface Point {
  readonly config: string;
  readonly concurrency: number;
  readonly server: string;
  readonly runs: Run[];
}

type Run = WrkResult & { readonly cpuUsPerRequest: number };

const mean = (values: readonly number[]): number => values.reduce((a, b) => a + b, 0) / values.length;
const median = (values: readonly number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function measureConfig(config: BenchConfig, servers: readonly Server[]): Promise<Point[]> {
  const sample = writeSample(config.model);
  const check = async (server: Server): Promise<void> => {
    await checkAnswer(`${server.process.baseUrl}${server.path(config)}`, sample.body, sample.headerLength, sample.reference);
    await sleep(100);
  };
  const points = new Map<string, Point>();
  for (const server of servers) {
    await check(server);
    await runWrk({ url: `${server.process.baseUrl}${server.path(config)}`, concurrency: 8, threads: 1, durationS: 1, bodyFile: sample.bodyFile, headerLength: sample.headerLength });
    await check(server);
  }
  for (const concurrency of SETTINGS.concurrencies) {
    for (let round = 0; round < SETTINGS.rounds; round++) {
      const order = round % 2 === 0 ? servers : [...servers].reverse();
      for (const server of order) {
        const cpuBeforeS = cpuSecondsOf(server.process.pid);
        const wrk = await runWrk({ url: `${server.process.baseUrl}${server.path(config)}`, concurrency, threads: 1, durationS: SETTINGS.seconds, bodyFile: sample.bodyFile, headerLength: sample.headerLength });
        const run = { ...wrk, cpuUsPerRequest: ((cpuSecondsOf(server.process.pid) - cpuBeforeS) * 1e6) / Math.max(1, wrk.requests) };
        await check(server);
        const key = `${server.label}/${concurrency}`;
        if (!points.has(key)) points.set(key, { config: config.name, concurrency, server: server.label, runs: [] });
        points.get(key)!.runs.push(run);
        const errors = run.errorCount > 0 ? `, ${run.errorCount} errors` : '';
        log(`  ${config.name} c=${concurrency} ${server.label}: ${run.inferPerSec.toFixed(0)} req/s, p50 ${(run.p50Ms * 1000).toFixed(0)} µs, ${run.cpuUsPerRequest.toFixed(0)} CPU µs/req${errors}`);
      }
    }
  }
  return [...points.values()];
}

function table(config: BenchConfig, points: readonly Point[], servers: readonly string[], engine: EngineResult | undefined): string {
  const rate = (server: string, c: number): number => mean(points.find((p) => p.server === server && p.concurrency === c)!.runs.map((r) => r.inferPerSec));
  const p50Us = (server: string, c: number): number => median(points.find((p) => p.server === server && p.concurrency === c)!.runs.map((r) => r.p50Ms * 1000));
  const cpuUs = (server: string, c: number): number => median(points.find((p) => p.server === server && p.concurrency === c)!.runs.map((r) => r.cpuUsPerRequest));
  const hasBefore = servers.includes('before');
  const header = ['concurrency', ...servers.map((s) => `${s} req/s (p50 µs) [CPU µs/req]`), 'nereid / naive'];
  if (hasBefore) header.push('nereid / before');
  if (engine !== undefined) header.push(`nereid / engine (${engine.best.inferPerSec.toFixed(0)}/s)`);
  const rows = SETTINGS.concurrencies.map((c) => {
    const cells = [String(c), ...servers.map((s) => `${rate(s, c).toFixed(0)} (${p50Us(s, c).toFixed(0)}) [${cpuUs(s, c).toFixed(0)}]`), (rate('nereid', c) / rate('naive', c)).toFixed(2)];
    if (hasBefore) cells.push((rate('nereid', c) / rate('before', c)).toFixed(2));
    if (engine !== undefined) cells.push((rate('nereid', c) / engine.best.inferPerSec).toFixed(2));
    return `| ${cells.join(' | ')} |`;
  });
  return [`### ${config.name}`, '', `| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`, ...rows].join('\n');
}

async function main(): Promise<void> {
  const startedAt = new Date();
  const loadAtStart = loadavg();
  stopAllOnExit();
  const repository = makeRepository();
  const engines = new Map<string, EngineResult>();
  if (SETTINGS.engineS > 0) {
    for (const model of models.filter((m) => m !== 'identity')) {
      log(`${model}: engine limit, ${SETTINGS.engineS} s per batch size and layout`);
      engines.set(model, await engineLimit(model));
    }
  }
  const servers = await startServers(repository);
  const points: Point[] = [];
  try {
    for (const config of configs) points.push(...(await measureConfig(config, servers)));
  } finally {
    await Promise.all(servers.map((s) => s.process.stop()));
  }
  const commit = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).stdout.trim();
  const labels = servers.map((s) => s.label);
  const report = [
    `# Hot-path benchmark, ${startedAt.toISOString()} (${((Date.now() - startedAt.getTime()) / 1000).toFixed(0)} s)`,
    '',
    `- machine: ${availableParallelism()} cores (${cpus()[0]?.model ?? 'unknown CPU'}), Node.js ${process.version}; servers, wrk and workers share the cores`,
    `- nereid: ${SETTINGS.nereidMain} (commit ${commit})${SETTINGS.beforeMain !== undefined ? `; before: ${SETTINGS.beforeMain}` : ''}${SETTINGS.nereidArgs.length > 0 ? `; flags ${SETTINGS.nereidArgs.join(' ')}` : ''}`,
    `- load average at the start ${loadAtStart.map((l) => l.toFixed(2)).join(' ')}, at the end ${loadavg().map((l) => l.toFixed(2)).join(' ')}`,
    `- wrk -t1, ${SETTINGS.seconds} s per point, ${SETTINGS.rounds} round(s) alternated (mean rate, median p50); instance counts ${SETTINGS.instanceCount}`,
    '',
    ...configs.flatMap((config) => [table(config, points.filter((p) => p.config === config.name), labels, config.queueDelayUs !== undefined ? engines.get(config.model) : undefined), '']),
  ].join('\n');
  process.stdout.write(`\n${report}`);
  mkdirSync(`${ROOT}bench/results`, { recursive: true });
  const stem = `${ROOT}bench/results/hot-path-${startedAt.toISOString().replace(/[:.]/g, '-')}`;
  writeFileSync(`${stem}.md`, report);
  writeFileSync(`${stem}.json`, `${JSON.stringify({ startedAt, settings: SETTINGS, points, engines: Object.fromEntries(engines) }, null, 2)}\n`);
  log(`saved ${stem}.md and .json`);
}

await main();
