/**
 * Many models on one server (issue 19): what N copies of the digits MLP cost, how fast they are ready,
 * whether a hot model among them serves as fast as alone, and what loading on demand costs.
 *
 *   npm run bench:many-models            (builds first; or, after `npm run build`:)
 *   node --import tsx bench/many-models.ts
 *
 * Environment (defaults in brackets): MANY_COUNTS [100,300,1000], MANY_INSTANCES [1,2], MANY_LOAD_THREADS
 * [4] (--model-load-thread-count; `1,4` compares), MANY_WRK_SECS [10], MANY_CONCURRENCY [8], MANY_DEMAND_COUNT
 * [1000] (copies served with --load-on-demand), MANY_DEMAND_BUDGET [50] (--max-loaded-models), MANY_FIRST_SAMPLES
 * [40] (first requests timed), MANY_DEMAND_SECS [10], BENCH_WRK [wrk]. A small run under load:
 * `MANY_COUNTS=20 MANY_INSTANCES=1 MANY_WRK_SECS=3 MANY_DEMAND_COUNT=60 MANY_DEMAND_BUDGET=10 MANY_DEMAND_SECS=3`.
 *
 * Each server is `node dist/cli/main.js serve` on 127.0.0.1 (bench/batching/servers.ts), over a fresh
 * repository of renamed copies (test/helpers/model-copies.ts). For each count and instance count: the
 * time from the spawn until /v2/health/ready answers 200, the server's RSS then (/proc, after 2 s),
 * wrk on digits_0 (bench/batching/infer.lua: one image as binary data, batch 1) against the same
 * model served alone by a second server, the two measured in turn (alone, many, many, alone; means of
 * two each) with the server's CPU per request over each run (/proc), and how long SIGTERM takes to exit while wrk is still sending. With --load-on-demand: the latency of the
 * first request to each of MANY_FIRST_SAMPLES models not loaded (one at a time, p50 and p99), then
 * MANY_CONCURRENCY clients asking for random models among twice the budget for MANY_DEMAND_SECS.
 * Results: a markdown table on stdout, JSON in bench/results/many-models.json.
 */
import { readFileSync, writeFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeDigitsCopies } from '../test/helpers/model-copies.js';
import { encodeInferRequest } from './batching/kserve-binary.js';
import { type ServerProcess, freePort, startServer, stopAllOnExit } from './batching/servers.js';
import { type WrkResult, runWrk } from './batching/wrk.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const list = (name: string, fallback: string): number[] => (process.env[name] ?? fallback).split(',').map(Number);
const COUNTS = list('MANY_COUNTS', '100,300,1000');
const INSTANCES = list('MANY_INSTANCES', '1,2');
const LOAD_THREADS = list('MANY_LOAD_THREADS', '4');
const WRK_SECS = Number(process.env.MANY_WRK_SECS ?? 10);
const CONCURRENCY = Number(process.env.MANY_CONCURRENCY ?? 8);
const DEMAND_COUNT = Number(process.env.MANY_DEMAND_COUNT ?? 1000);
const DEMAND_BUDGET = Number(process.env.MANY_DEMAND_BUDGET ?? 50);
const FIRST_SAMPLES = Number(process.env.MANY_FIRST_SAMPLES ?? 40);
const DEMAND_SECS = Number(process.env.MANY_DEMAND_SECS ?? 10);

const samples = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/digits_samples.json'), 'utf8')) as { images: number[][] };
const image = new Float32Array(samples.images[0]!);
const request = encodeInferRequest([{ name: 'INPUT', datatype: 'FP32', shape: [1, 64], bytes: new Uint8Array(image.buffer) }]);
const work = mkdtempSync(join(tmpdir(), 'nereid-many-bench-'));
const bodyFile = join(work, 'body.bin');
writeFileSync(bodyFile, request.body);

const rssMb = (pid: number | undefined): number => {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) / 1024;
};
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const percentile = (sorted: readonly number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;

async function serve(repository: string, label: string, flags: readonly string[]): Promise<{ server: ServerProcess; readyS: number }> {
  const port = await freePort();
  const started = performance.now();
  const server = await startServer({
    label,
    command: process.execPath,
    args: [join(ROOT, 'dist/cli/main.js'), 'serve', '--model-repository', repository, `--http-port=${port}`, '--http-address=127.0.0.1', '--allow-grpc=false', '--allow-metrics=false', ...flags],
    port,
    logFile: join(work, `${label}.log`),
    readyTimeoutMs: 900_000,
  });
  return { server, readyS: (performance.now() - started) / 1000 };
}

/** CPU time (user + system, all threads) a process has used, in µs, from /proc (100 clock ticks a second). */
function cpuUs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

/** A wrk run and the server's CPU per request over it: a figure this shared VM's noise hurts less than the rate. */
async function wrkWithCpu(server: ServerProcess, model: string): Promise<WrkResult & { cpuUsPerRequest: number }> {
  const before = cpuUs(server.pid);
  const result = await wrk(server, model);
  return { ...result, cpuUsPerRequest: (cpuUs(server.pid) - before) / result.requests };
}

function wrk(server: ServerProcess, model: string): Promise<WrkResult> {
  return runWrk({
    url: `${server.baseUrl}/v2/models/${model}/infer`,
    concurrency: CONCURRENCY,
    threads: 2,
    durationS: WRK_SECS,
    bodyFile,
    headerLength: request.headerLength,
    ...(process.env.BENCH_WRK !== undefined ? { wrk: process.env.BENCH_WRK } : {}),
  });
}

async function stopTimed(server: ServerProcess): Promise<number> {
  const started = performance.now();
  await server.stop();
  return (performance.now() - started) / 1000;
}

async function infer(server: ServerProcess, model: string): Promise<number> {
  const started = performance.now();
  const response = await fetch(`${server.baseUrl}/v2/models/${model}/infer`, {
    method: 'POST',
    body: request.body,
    headers: { 'inference-header-content-length': String(request.headerLength), 'content-type': 'application/octet-stream' },
  });
  await response.arrayBuffer();
  if (response.status !== 200) throw new Error(`${model}: HTTP ${response.status}`);
  return performance.now() - started;
}

interface LoadedRow {
  count: number;
  instances: number;
  loadThreads: number;
  readyS: number;
  rssMb: number;
  hotPerSec: number;
  alonePerSec: number;
  hotP99Ms: number;
  /** The server's CPU per request (all threads), among many and alone. */
  hotCpuUs: number;
  aloneCpuUs: number;
  sigtermS: number;
  wrkErrors: number;
}

async function measureLoaded(count: number, instances: number, loadThreads: number): Promise<LoadedRow> {
  const copies = makeDigitsCopies(count, instances);
  const { server, readyS } = await serve(copies.dir, `loaded-${count}-${instances}-${loadThreads}`, [`--model-load-thread-count=${loadThreads}`]);
  await sleep(2000);
  const rss = rssMb(server.pid);
  // The same model served alone, by a second server measured in turn with this one (alone, among
  // many, among many, alone): this VM's rate at one point moves by 2-3x between minutes, so the two
  // figures must come from the same minutes.
  const single = makeDigitsCopies(1, instances);
  const { server: aloneServer } = await serve(single.dir, `alone-${count}-${instances}`, []);
  await wrk(aloneServer, 'digits_0');
  await wrk(server, 'digits_0');
  const rounds = [
    await wrkWithCpu(aloneServer, 'digits_0'),
    await wrkWithCpu(server, 'digits_0'),
    await wrkWithCpu(server, 'digits_0'),
    await wrkWithCpu(aloneServer, 'digits_0'),
  ];
  await aloneServer.stop();
  single.remove();
  const mean = (results: readonly WrkResult[]): number => results.reduce((sum, result) => sum + result.inferPerSec, 0) / results.length;
  const hot = { inferPerSec: mean([rounds[1]!, rounds[2]!]), p99Ms: Math.max(rounds[1]!.p99Ms, rounds[2]!.p99Ms), errorCount: rounds[1]!.errorCount + rounds[2]!.errorCount };
  const alonePerSec = mean([rounds[0]!, rounds[3]!]);
  const meanCpuUs = (a: (typeof rounds)[number], b: (typeof rounds)[number]): number => (a.cpuUsPerRequest + b.cpuUsPerRequest) / 2;
  // SIGTERM while wrk still sends: how long the drain of the requests in flight takes.
  const draining = wrk(server, 'digits_0').catch(() => undefined);
  await sleep(1500);
  const sigtermS = await stopTimed(server);
  await draining;
  copies.remove();
  return {
    count,
    instances,
    loadThreads,
    readyS,
    rssMb: rss,
    hotPerSec: hot.inferPerSec,
    alonePerSec,
    hotP99Ms: hot.p99Ms,
    hotCpuUs: meanCpuUs(rounds[1]!, rounds[2]!),
    aloneCpuUs: meanCpuUs(rounds[0]!, rounds[3]!),
    sigtermS,
    wrkErrors: hot.errorCount,
  };
}

interface DemandRow {
  count: number;
  budget: number;
  readyS: number;
  firstP50Ms: number;
  firstP99Ms: number;
  hitMs: number;
  perSec: number;
  failures: number;
  rssMb: number;
}

async function measureOnDemand(): Promise<DemandRow> {
  const copies = makeDigitsCopies(DEMAND_COUNT);
  const { server, readyS } = await serve(copies.dir, 'on-demand', ['--load-on-demand=true', `--max-loaded-models=${DEMAND_BUDGET}`]);
  const first: number[] = [];
  for (let i = 0; i < FIRST_SAMPLES; i++) first.push(await infer(server, copies.names[i % copies.names.length]!));
  first.sort((a, b) => a - b);
  const hits: number[] = [];
  for (let i = 0; i < 20; i++) hits.push(await infer(server, copies.names[(FIRST_SAMPLES - 1) % copies.names.length]!));
  hits.sort((a, b) => a - b);
  const requested = copies.names.slice(0, Math.min(copies.names.length, 2 * DEMAND_BUDGET));
  let answered = 0;
  let failures = 0;
  const end = performance.now() + DEMAND_SECS * 1000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < end) {
        try {
          await infer(server, requested[Math.floor(Math.random() * requested.length)]!);
          answered++;
        } catch {
          failures++;
        }
      }
    }),
  );
  const rss = rssMb(server.pid);
  await server.stop();
  copies.remove();
  return {
    count: DEMAND_COUNT,
    budget: DEMAND_BUDGET,
    readyS,
    firstP50Ms: percentile(first, 0.5),
    firstP99Ms: percentile(first, 0.99),
    hitMs: percentile(hits, 0.5),
    perSec: answered / DEMAND_SECS,
    failures,
    rssMb: rss,
  };
}

stopAllOnExit();
const loaded: LoadedRow[] = [];
try {
  for (const count of COUNTS) {
    for (const instances of INSTANCES) {
      for (const loadThreads of LOAD_THREADS) {
        const row = await measureLoaded(count, instances, loadThreads);
        loaded.push(row);
        console.error(JSON.stringify(row));
      }
    }
  }
  const demand = DEMAND_COUNT > 0 ? await measureOnDemand() : undefined;
  const fmt = (value: number, digits = 1): string => value.toFixed(digits);
  const lines = [
    '| models | instances each | load threads | ready after (s) | RSS (MB) | MB per instance | hot model (infer/s) | alone (infer/s) | hot / alone | server CPU µs per request, hot / alone | hot p99 (ms) | SIGTERM under load to exit (s) |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...loaded.map(
      (row) =>
        `| ${row.count} | ${row.instances} | ${row.loadThreads} | ${fmt(row.readyS)} | ${fmt(row.rssMb, 0)} | ${fmt(row.rssMb / (row.count * row.instances))} | ${fmt(row.hotPerSec, 0)} | ${fmt(row.alonePerSec, 0)} | ${fmt(row.hotPerSec / row.alonePerSec, 2)} | ${fmt(row.hotCpuUs, 0)} / ${fmt(row.aloneCpuUs, 0)} | ${fmt(row.hotP99Ms)} | ${fmt(row.sigtermS)} |`,
    ),
  ];
  if (demand !== undefined) {
    lines.push(
      '',
      '| models | --max-loaded-models | ready after (s) | first request p50 (ms) | p99 (ms) | loaded model (ms) | random over 2× budget (infer/s) | failures | RSS (MB) |',
      '|---|---|---|---|---|---|---|---|---|',
      `| ${demand.count} | ${demand.budget} | ${fmt(demand.readyS)} | ${fmt(demand.firstP50Ms)} | ${fmt(demand.firstP99Ms)} | ${fmt(demand.hitMs, 2)} | ${fmt(demand.perSec, 0)} | ${demand.failures} | ${fmt(demand.rssMb, 0)} |`,
    );
  }
  console.log(lines.join('\n'));
  mkdirSync(join(ROOT, 'bench/results'), { recursive: true });
  writeFileSync(join(ROOT, 'bench/results/many-models.json'), `${JSON.stringify({ loaded, demand }, null, 2)}\n`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
