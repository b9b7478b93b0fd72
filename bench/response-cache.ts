/**
 * The response cache and the rate limiter (issue 16), each against the same server without it.
 *
 * 1. Cache: the digits MLP with `response_cache { enable: true }` and a stream of which 90 % repeat one
 *    of ten images (test/fixtures/digits_samples.json) and 10 % are fresh random images, from
 *    CACHE_CONCURRENCY closed loops over HTTP with binary data: requests/s and latency with
 *    `--cache-config local,size=16777216` and without a cache (the model then logs that nothing is cached).
 * 2. Rate limiter: `light` (js_add, 1 instance) next to `heavy` (a JavaScript model that keeps a core
 *    busy for HEAVY_MS per execution, 4 instances) under 4 loops on heavy and 1 on light, with
 *    `--rate-limit=execution_count --rate-limit-resource=cpu:2` (every instance needs one global `cpu`,
 *    light at priority 1, heavy at 2) and with `--rate-limit=off`: light's latency and heavy's rate.
 *
 *   npm run bench:response-cache            (builds first; or, after `npm run build`:)
 *   node --import tsx bench/response-cache.ts
 *
 * Environment (defaults in brackets): BENCH_SECONDS [5] per measurement after 1 s of warm-up,
 * CACHE_CONCURRENCY [8], HEAVY_MS [20], BENCH_PARTS [cache,rate-limit]. Each configuration runs twice
 * in turn (A B A B); the report gives each run. Servers are `node dist/cli/main.js serve` on 127.0.0.1.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Figures, measure } from './harness.js';
import { encodeInferRequest } from './batching/kserve-binary.js';
import { type ServerProcess, freePort, startServer, stopAllOnExit } from './batching/servers.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONCURRENCY = Number(process.env.CACHE_CONCURRENCY ?? 8);
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

const digitsMessage = (pixels: Float32Array) => encodeInferRequest([{ name: 'INPUT', datatype: 'FP32', shape: [1, 64], bytes: new Uint8Array(pixels.buffer) }]);

/** The model's hit ratio, and what a hit and an executed request cost inside the server (µs, from its statistics). */
async function serverSide(baseUrl: string, model: string): Promise<string> {
  type Duration = { count: number; ns: number };
  const stats = (await (await fetch(`${baseUrl}/v2/models/${model}/stats`)).json()) as {
    model_stats: Array<{ inference_stats: Record<'cache_hit' | 'success' | 'queue' | 'compute_input' | 'compute_infer' | 'compute_output', Duration> }>;
  };
  const { cache_hit, success, queue, compute_input, compute_infer, compute_output } = stats.model_stats[0]!.inference_stats;
  const mean = (duration: Duration): string => (duration.count === 0 ? '-' : (duration.ns / duration.count / 1000).toFixed(1));
  const executed = { count: compute_infer.count, ns: queue.ns + compute_input.ns + compute_infer.ns + compute_output.ns };
  return ` ${(success.count === 0 ? 0 : cache_hit.count / success.count).toFixed(3)} | ${mean(cache_hit)} | ${mean(executed)} |`;
}

const row = (label: string, figures: Figures, extra = ''): string =>
  `| ${label} | ${Math.round(figures.perSecond)} | ${figures.p50Ms.toFixed(2)} | ${figures.p99Ms.toFixed(2)} |${extra}`;

async function benchCache(): Promise<string[]> {
  const repository = join(work, 'cache-repository');
  mkdirSync(repository);
  cpSync(join(ROOT, 'examples/model_repository/digits'), join(repository, 'digits'), { recursive: true });
  writeFileSync(join(repository, 'digits/config.pbtxt'), `${readFileSync(join(repository, 'digits/config.pbtxt'), 'utf8')}\nresponse_cache { enable: true }\n`);
  const images = (JSON.parse(readFileSync(join(ROOT, 'test/fixtures/digits_samples.json'), 'utf8')) as { images: number[][] }).images;
  const repeated = images.map((image) => digitsMessage(new Float32Array(image)));
  const send = (baseUrl: string) => () =>
    post(
      `${baseUrl}/v2/models/digits/infer`,
      Math.random() < 0.9 ? repeated[Math.floor(Math.random() * repeated.length)]! : digitsMessage(Float32Array.from({ length: 64 }, () => Math.floor(Math.random() * 17))),
    );
  const lines = [
    `Digits, 90 % repeating requests, ${CONCURRENCY} loops, HTTP binary, ${SECONDS} s each:`,
    '',
    '| server | requests/s | p50 ms | p99 ms | cache hits / successes | µs per hit (lookup) | µs per executed request (queue + compute) |',
    '|---|---|---|---|---|---|---|',
  ];
  for (let round = 0; round < 2; round++) {
    for (const [label, flags] of [['cache off', []], ['cache on (16 MiB)', ['--cache-config=local,size=16777216']]] as const) {
      const server = await serve(`digits-${label.split(' ')[1]}-${round}`, repository, flags);
      try {
        const figures = await measure(CONCURRENCY, SECONDS * 1000, send(server.baseUrl));
        lines.push(row(`${label}, run ${round + 1}`, figures, await serverSide(server.baseUrl, 'digits')));
      } finally {
        await server.stop();
      }
    }
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
