/**
 * The response cache and the rate limiter (issue 16), each against the same server without it.
 *
 * 1. Cache: wrk (bench/response-cache-mix.lua) against two servers of the same repository,
 *    one with `--cache-config local,size=16777216` and one without a cache (its models then log that
 *    nothing is cached), measured in turn (off, on) for CACHE_ROUNDS rounds. Each model of CACHE_MODELS
 *    has `response_cache { enable: true }`: digits (the ONNX MLP of examples/, the issue's figure) and
 *    digits_torch (the same kind of MLP on the PyTorch backend, whose executions cost more: a model for
 *    which a cache matters more). For each model and each concurrency of CACHE_CONCURRENCY: the 90 %
 *    mix (one of ten images, or a fresh random one) as JSON, the same mix with the binary data extension
 *    (perf_analyzer's and tritonclient's default), then a diagnostic of the hit path alone, the same
 *    first image as wrk's fixed JSON body (no Lua per request). Figures: requests/s, p50/p99, and the
 *    server's own CPU time per request (all threads of the Node.js process, and its main thread alone,
 *    from /proc: a figure the shared machine's noise hurts less than the rates). Each server first
 *    serves the mix for WARM_UP_SECONDS, not measured.
 * 2. Rate limiter: `light` (js_add, 1 instance) next to `heavy` (a JavaScript model that keeps a core
 *    busy for HEAVY_MS per execution, 4 instances) under 4 loops on heavy and 1 on light, with
 *    `--rate-limit=execution_count --rate-limit-resource=cpu:2` (every instance needs one global `cpu`,
 *    light at priority 1, heavy at 2) and with `--rate-limit=off`: light's latency and heavy's rate.
 *
 *   npm run bench:response-cache            (builds first; or, after `npm run build`:)
 *   node --import tsx bench/response-cache.ts
 *
 * Environment (defaults in brackets): BENCH_SECONDS [5] per measurement, CACHE_ROUNDS [2],
 * CACHE_CONCURRENCY [8,64], CACHE_MODELS [digits,digits_torch], HEAVY_MS [20] and BENCH_PARTS
 * [cache,rate-limit]; a short run: `BENCH_SECONDS=3 CACHE_ROUNDS=1 CACHE_CONCURRENCY=8 BENCH_PARTS=cache`.
 * The rate limiter's loops are Node.js `fetch` clients in this process, 1 s of warm-up each. Servers
 * are `node dist/cli/main.js serve` on 127.0.0.1.
 */
import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Figures, measure } from './harness.js';
import { encodeInferRequest } from './batching/kserve-binary.js';
import { type ServerProcess, freePort, startServer, stopAllOnExit } from './batching/servers.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONCURRENCIES = (process.env.CACHE_CONCURRENCY ?? '8,64').split(',').map(Number);
const ROUNDS = Number(process.env.CACHE_ROUNDS ?? 2);
const WARM_UP_SECONDS = 2;
const CACHE_MODELS = (process.env.CACHE_MODELS ?? 'digits,digits_torch').split(',');
const MIX_SCRIPT = join(ROOT, 'bench/response-cache-mix.lua');
const INPUT_NAMES: Readonly<Record<string, string>> = { digits: 'INPUT', digits_torch: 'INPUT__0' };
const OUTPUT_NAMES: Readonly<Record<string, string>> = { digits: 'PROBABILITIES', digits_torch: 'OUTPUT__0' };
const HEAVY_MS = Number(process.env.HEAVY_MS ?? 20);
const PARTS = (process.env.BENCH_PARTS ?? 'cache,rate-limit').split(',');

stopAllOnExit();
const work = mkdtempSync(join(tmpdir(), 'nereid-cache-bench-'));

async function serve(label: string, repository: string, flags: readonly string[]): Promise<ServerProcess> {
  const port = await freePort();
  return startServer({
    label,
    command: process.execPath,
    args: [join(ROOT, 'dist/cli/main.js'), 'serve', `--model-repository=${repository}`, `--http-port=${port}`, '--http-address=127.0.0.1', '--allow-grpc=false', '--allow-metrics=false', ...flags],
    port,
    logFile: join(work, `${label}.log`),
  });
}

async function post(url: string, message: { body: Buffer; headerLength: number }): Promise<void> {
  const response = await fetch(url, {
    method: 'POST',
    body: message.body,
    headers: { 'content-type': 'application/octet-stream', 'inference-header-content-length': String(message.headerLength) },
  });
  await response.arrayBuffer();
  if (response.status !== 200) throw new Error(`${url}: HTTP ${response.status}`);
}

const row = (label: string, figures: Figures, extra = ''): string =>
  `| ${label} | ${Math.round(figures.perSecond)} | ${figures.p50Ms.toFixed(2)} | ${figures.p99Ms.toFixed(2)} |${extra}`;
/** The children a thread started, from /proc; none when the thread ended since its task was listed. */
function childrenOf(pid: number, task: string): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(' ').filter(Boolean).map(Number);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

/** The ids of a process's children and their children (the Python processes of a PyTorch model), from /proc. */
function descendantsOf(pid: number): number[] {
  const children = readdirSync(`/proc/${pid}/task`).flatMap((task) => childrenOf(pid, task));
  return children.flatMap((child) => [child, ...descendantsOf(child)]);
}

/**
 * CPU time (user + system, µs) of the server: every thread of it and of the processes it started, and
 * its main thread alone, from /proc (in clock ticks, 100 per second on Linux).
 */
function cpuUs(pid: number): { totalUs: number; mainUs: number } {
  const ticks = (path: string): number => {
    const fields = readFileSync(path, 'utf8').split(') ')[1]!.split(' ');
    return Number(fields[11]) + Number(fields[12]);
  };
  const total = [pid, ...descendantsOf(pid)].reduce((sum, id) => sum + ticks(`/proc/${id}/stat`), 0);
  return { totalUs: total * 10_000, mainUs: ticks(`/proc/${pid}/task/${pid}/stat`) * 10_000 };
}

interface MixFigures {
  readonly perSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly errors: number;
  /** The server's CPU per request, all threads and the main thread. */
  readonly totalUs: number;
  readonly mainUs: number;
}

/** Runs wrk with the mix script against one model of one server for SECONDS. */
function runMix(server: ServerProcess, model: string, concurrency: number, env: Record<string, string>, seconds = SECONDS): Promise<MixFigures> {
  const before = cpuUs(server.pid);
  const args = ['-t1', `-c${concurrency}`, `-d${seconds}s`, '--timeout', '60s', '-s', MIX_SCRIPT, `${server.baseUrl}/v2/models/${model}/infer`];
  return new Promise((resolve, reject) => {
    const child = spawn(process.env.BENCH_WRK ?? 'wrk', args, { env: { ...process.env, BENCH_INPUT_NAME: INPUT_NAMES[model] ?? 'INPUT', BENCH_OUTPUT_NAME: OUTPUT_NAMES[model] ?? 'PROBABILITIES', ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.once('error', (error) => reject(new Error(`cannot run wrk (${error.message}); install it: apt-get install -y wrk`)));
    child.once('exit', (code) => {
      const line = stdout.split('\n').find((l) => l.startsWith('BENCH_JSON '));
      if (code !== 0 || line === undefined) {
        reject(new Error(`wrk ${args.join(' ')} exited with ${code} and no result:\n${stdout}`));
        return;
      }
      const json = JSON.parse(line.slice('BENCH_JSON '.length)) as { requests: number; duration_us: number; p50_us: number; p99_us: number; errors: number };
      const after = cpuUs(server.pid);
      resolve({
        perSecond: json.requests / (json.duration_us / 1e6),
        p50Ms: json.p50_us / 1000,
        p99Ms: json.p99_us / 1000,
        errors: json.errors,
        totalUs: (after.totalUs - before.totalUs) / json.requests,
        mainUs: (after.mainUs - before.mainUs) / json.requests,
      });
    });
  });
}

/** The model's hit ratio and what a hit costs inside the server (µs, from its statistics). */
async function hitStatistics(baseUrl: string, model: string): Promise<string> {
  type Duration = { count: number; ns: number };
  const stats = (await (await fetch(`${baseUrl}/v2/models/${model}/stats`)).json()) as {
    model_stats: Array<{ inference_stats: Record<'cache_hit' | 'success', Duration> }>;
  };
  const { cache_hit, success } = stats.model_stats[0]!.inference_stats;
  return `${(cache_hit.count / Math.max(1, success.count)).toFixed(3)} | ${cache_hit.count === 0 ? '-' : (cache_hit.ns / cache_hit.count / 1000).toFixed(1)}`;
}

async function benchCache(): Promise<string[]> {
  const repository = join(work, 'cache-repository');
  mkdirSync(repository);
  for (const model of CACHE_MODELS) {
    cpSync(join(ROOT, 'examples/model_repository', model), join(repository, model), { recursive: true });
    writeFileSync(join(repository, model, 'config.pbtxt'), `${readFileSync(join(repository, model, 'config.pbtxt'), 'utf8')}\nresponse_cache { enable: true }\n`);
  }
  const off = await serve('cache-off', repository, []);
  const on = await serve('cache-on', repository, ['--cache-config=local,size=16777216']);
  const lines = [
    `wrk -t1, ${SECONDS} s each, the two servers in turn; load average at the start ${loadavg()[0]!.toFixed(1)}:`,
    '',
    '| model | clients | requests | round | off: req/s | on: req/s | on / off | off: server µs/req (main) | on: server µs/req (main) | on: p50 / p99 ms | on: hits / successes | on: µs per hit |',
    '|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  try {
    // Warm-up, not measured: the servers' code optimized, the cache holding the ten repeated images.
    for (const model of CACHE_MODELS) for (const server of [off, on]) await runMix(server, model, CONCURRENCIES[0]!, {}, WARM_UP_SECONDS);
    for (const model of CACHE_MODELS) {
      for (const concurrency of CONCURRENCIES) {
        for (const [label, env] of [
          ['90 % repeating', {}],
          ['90 % repeating, binary data', { BENCH_BINARY: '1' }],
          ['one image, fixed body', { BENCH_FIXED: '1' }],
        ] as const) {
          for (let round = 1; round <= ROUNDS; round++) {
            const a = await runMix(off, model, concurrency, env);
            const b = await runMix(on, model, concurrency, env);
            const us = (figures: MixFigures): string => `${figures.totalUs.toFixed(0)} (${figures.mainUs.toFixed(0)})`;
            lines.push(
              `| ${model} | ${concurrency} | ${label} | ${round} | ${Math.round(a.perSecond)} | ${Math.round(b.perSecond)} | ${(b.perSecond / a.perSecond).toFixed(2)} | ${us(a)} | ${us(b)} | ${b.p50Ms.toFixed(2)} / ${b.p99Ms.toFixed(2)} | ${await hitStatistics(on.baseUrl, model)} |`,
            );
            if (a.errors + b.errors > 0) lines.push(`(errors: off ${a.errors}, on ${b.errors})`);
          }
        }
      }
    }
  } finally {
    await Promise.all([off.stop(), on.stop()]);
  }
  return lines;
}

async function benchRateLimit(): Promise<string[]> {
  const repository = join(work, 'rate-limit-repository');
  mkdirSync(join(repository, 'heavy/1'), { recursive: true });
  cpSync(join(ROOT, 'test/fixtures/js_repository/js_add'), join(repository, 'light'), { recursive: true });
  const cpu = (priority: number): string => `rate_limiter { resources [ { name: "cpu" global: true count: 1 } ] priority: ${priority} }`;
  writeFileSync(
    join(repository, 'light/config.pbtxt'),
    readFileSync(join(repository, 'light/config.pbtxt'), 'utf8') + `\ninstance_group [ { count: 1 kind: KIND_CPU ${cpu(1)} } ]\n`,
  );
  writeFileSync(
    join(repository, 'heavy/config.pbtxt'),
    `backend: "javascript"\nmax_batch_size: 0\ninput [ { name: "X" data_type: TYPE_FP32 dims: [ 1 ] } ]\noutput [ { name: "Y" data_type: TYPE_FP32 dims: [ 1 ] } ]\ninstance_group [ { count: 4 kind: KIND_CPU ${cpu(2)} } ]\n`,
  );
  writeFileSync(
    join(repository, 'heavy/1/model.js'),
    `// Keeps its core busy for ${HEAVY_MS} ms per execution.\nexport default class Heavy {\n  execute(requests) {\n    const end = performance.now() + ${HEAVY_MS};\n    while (performance.now() < end);\n    return requests.map((request) => ({ outputs: [{ name: 'Y', datatype: 'FP32', shape: [1], data: request.input('X').data }] }));\n  }\n}\n`,
  );
  const heavyMessage = encodeInferRequest([{ name: 'X', datatype: 'FP32', shape: [1], bytes: new Uint8Array(new Float32Array([1]).buffer) }]);
  const lightMessage = encodeInferRequest(
    ['INPUT0', 'INPUT1'].map((name) => ({ name, datatype: 'FP32', shape: [1, 4], bytes: new Uint8Array(new Float32Array([1, 2, 3, 4]).buffer) })),
  );
  const lines = [
    `light (js_add) beside heavy (${HEAVY_MS} ms of CPU per execution, 4 instances) on this machine: 4 loops on heavy, 1 on light, ${SECONDS} s each:`,
    '',
    '| server | light requests/s | light p50 ms | light p99 ms | heavy requests/s |',
    '|---|---|---|---|---|',
  ];
  for (let round = 0; round < 2; round++) {
    for (const [label, flags] of [
      ['--rate-limit=off', ['--rate-limit=off']],
      ['--rate-limit=execution_count, cpu:2', ['--rate-limit=execution_count', '--rate-limit-resource=cpu:2']],
    ] as const) {
      const server = await serve(`rate-${round}-${flags.length}`, repository, flags);
      try {
        const [light, heavy] = await Promise.all([
          measure(1, SECONDS * 1000, () => post(`${server.baseUrl}/v2/models/light/infer`, lightMessage)),
          measure(4, SECONDS * 1000, () => post(`${server.baseUrl}/v2/models/heavy/infer`, heavyMessage)),
        ]);
        lines.push(`${row(`${label}, run ${round + 1}`, light)} ${Math.round(heavy.perSecond)} |`);
      } finally {
        await server.stop();
      }
    }
  }
  return lines;
}

try {
  const report: string[] = [];
  if (PARTS.includes('cache')) report.push(...(await benchCache()), '');
  if (PARTS.includes('rate-limit')) report.push(...(await benchRateLimit()), '');
  process.stdout.write(`${report.join('\n')}\n`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
