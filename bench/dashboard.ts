/**
 * What the dashboard costs inference (issue 17): wrk's throughput on one model with the dashboard off
 * (`--allow-dashboard=false`), on but unwatched, and on with one page open (an SSE client in this
 * process reading `/dashboard/events`, as the page does: one frame a second). The conditions are
 * measured in turn in each round, in the order off, unwatched, watched and then backwards (ABBA, so a
 * drift of the shared machine cancels out); every server runs the built `dist/`, each checked with one
 * request before the runs. Beside wrk's rate, the server's CPU time per inference (utime + stime of the
 * process from /proc over the run, all its threads): on a shared machine, contention moves the rate far
 * more than the CPU a request costs. Then, in this process, what building one frame costs the event loop, which
 * bounds the cost of a page open whatever the noise: that time once a second.
 *
 *   npm run bench:dashboard
 *   BENCH_SECONDS=3 BENCH_ROUNDS=1 node --import tsx bench/dashboard.ts     (fast iteration)
 *
 * Environment (defaults in brackets): BENCH_SECONDS [8] per condition and round, BENCH_ROUNDS [6],
 * BENCH_CONCURRENCY [8], BENCH_MODEL [simple] (simple: INT32 [1,16] add/sub, 2 instances, no batching;
 * digits: the MLP with dynamic batching). The report is printed and saved to bench/results/dashboard-<time>.md.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DashboardSampler } from '../src/frontends/dashboard/dashboard-sampler.js';
import { silentLogger } from '../src/logging/logger.js';
import { startServer as startInProcess } from '../src/server.js';
import { encodeInferRequest } from './batching/kserve-binary.js';
import { type ServerProcess, freePort, startServer, stopAllOnExit } from './batching/servers.js';
import { type WrkResult, runWrk } from './batching/wrk.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const env = process.env;
const numberFrom = (name: string, fallback: number): number => (env[name] === undefined || env[name] === '' ? fallback : Number(env[name]));
const SECONDS = numberFrom('BENCH_SECONDS', 8);
const ROUNDS = numberFrom('BENCH_ROUNDS', 6);
const CONCURRENCY = numberFrom('BENCH_CONCURRENCY', 8);
const MODEL = env.BENCH_MODEL ?? 'simple';

const CLOCK_TICKS_PER_S = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/** CPU seconds a process has used (user + system, all threads), from /proc/PID/stat. */
function cpuSecondsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // After the command: state is field 3, utime 14 and stime 15 (proc(5)).
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_S;
}

type Condition = 'off' | 'unwatched' | 'watched';
type Run = WrkResult & { readonly cpuUsPerInfer: number };
const CONDITIONS: readonly Condition[] = ['off', 'unwatched', 'watched'];

function requestBody(): { body: Buffer; headerLength: number } {
  if (MODEL === 'simple') {
    const ints = (value: number): Uint8Array => new Uint8Array(new Int32Array(16).fill(value).buffer);
    return encodeInferRequest([
      { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], bytes: ints(3) },
      { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], bytes: ints(1) },
    ]);
  }
  if (MODEL === 'digits') return encodeInferRequest([{ name: 'INPUT', datatype: 'FP32', shape: [1, 64], bytes: new Uint8Array(new Float32Array(64).fill(0.5).buffer) }]);
  throw new Error(`BENCH_MODEL=${MODEL}: expected simple or digits`);
}

/** Reads the dashboard's stream as the page does, counting frames, until `stop` is called. */
function watch(baseUrl: string): { stop: () => Promise<number> } {
  const controller = new AbortController();
  let frames = 0;
  const reading = (async () => {
    const response = await fetch(`${baseUrl}/dashboard/events`, { signal: controller.signal });
    if (response.status !== 200) throw new Error(`/dashboard/events answered ${response.status}`);
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      for (const part of value.split('event: frame\n').slice(1)) if (part.startsWith('data: {')) frames++;
    }
  })().catch((error: Error) => {
    if (!controller.signal.aborted) throw error;
  });
  return {
    stop: async () => {
      controller.abort();
      await reading;
      return frames;
    },
  };
}

/** Mean microseconds of one frame (statistics, index, process figures, JSON) for `repository`, in this process. */
async function frameCostUs(repository: string, body: Buffer, headerLength: number): Promise<{ us: number; bytes: number }> {
  const running = await startInProcess({ modelRepositories: [repository], httpPort: 0, httpAddress: '127.0.0.1', isGrpcAllowed: false, isMetricsAllowed: false, logger: silentLogger });
  try {
    await fetch(`${running.httpUrl!}/v2/models/${MODEL}/infer`, { method: 'POST', body, headers: { 'inference-header-content-length': String(headerLength) } });
    const sampler = new DashboardSampler({ server: running.core, controlMode: 'none' });
    let bytes = 0;
    for (let i = 0; i < 200; i++) bytes = JSON.stringify(await sampler.frame()).length;
    const count = 2000;
    const start = performance.now();
    for (let i = 0; i < count; i++) JSON.stringify(await sampler.frame());
    return { us: ((performance.now() - start) * 1000) / count, bytes };
  } finally {
    await running.shutdown();
  }
}

async function main(): Promise<void> {
  stopAllOnExit();
  const work = mkdtempSync(join(tmpdir(), 'nereid-bench-dashboard-'));
  const repository = join(work, 'repository');
  mkdirSync(repository);
  cpSync(join(ROOT, 'examples/model_repository', MODEL), join(repository, MODEL), { recursive: true });
  const { body, headerLength } = requestBody();
  const bodyFile = join(work, 'body.bin');
  writeFileSync(bodyFile, body);
  const servers = new Map<'off' | 'on', ServerProcess>();
  try {
    for (const dashboard of ['off', 'on'] as const) {
      const port = await freePort();
      const args = [`${ROOT}dist/cli/main.js`, 'serve', '--model-repository', repository, `--http-port=${port}`, '--http-address=127.0.0.1', '--allow-grpc=false', '--allow-metrics=true', `--metrics-port=${await freePort()}`, `--allow-dashboard=${dashboard === 'on'}`];
      servers.set(dashboard, await startServer({ label: `nereid (dashboard ${dashboard})`, command: process.execPath, args, port, logFile: join(work, `nereid-${dashboard}.log`) }));
      const check = await fetch(`${servers.get(dashboard)!.baseUrl}/v2/models/${MODEL}/infer`, { method: 'POST', body, headers: { 'inference-header-content-length': String(headerLength) } });
      if (check.status !== 200) throw new Error(`the check request answered ${check.status}: ${await check.text()}`);
    }
    const results: Record<Condition, Run[]> = { off: [], unwatched: [], watched: [] };
    const frameCounts: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? CONDITIONS : [...CONDITIONS].reverse();
      for (const condition of order) {
        const server = servers.get(condition === 'off' ? 'off' : 'on')!;
        const watcher = condition === 'watched' ? watch(server.baseUrl) : undefined;
        const cpuBefore = cpuSecondsOf(server.pid);
        const wrk = await runWrk({ url: `${server.baseUrl}/v2/models/${MODEL}/infer`, concurrency: CONCURRENCY, threads: 1, durationS: SECONDS, bodyFile, headerLength });
        const result = { ...wrk, cpuUsPerInfer: ((cpuSecondsOf(server.pid) - cpuBefore) * 1e6) / wrk.requests };
        if (watcher !== undefined) frameCounts.push(await watcher.stop());
        if (result.errorCount > 0) throw new Error(`${condition}: ${result.errorCount} errors: ${JSON.stringify(result.errors)}`);
        results[condition].push(result);
        console.error(`round ${round + 1} ${condition}: ${result.inferPerSec.toFixed(0)} infer/s, ${result.cpuUsPerInfer.toFixed(0)} CPU µs/infer, p50 ${result.p50Ms.toFixed(2)} ms, p99 ${result.p99Ms.toFixed(2)} ms`);
      }
    }
    const frame = await frameCostUs(repository, body, headerLength);
    const mean = (values: readonly number[]): number => values.reduce((a, b) => a + b, 0) / values.length;
    const rate = (condition: Condition): number => mean(results[condition].map((result) => result.inferPerSec));
    const cpu = (condition: Condition): number => mean(results[condition].map((result) => result.cpuUsPerInfer));
    const lines = [
      `# Dashboard cost: ${MODEL}, wrk -c${CONCURRENCY} -t1, ${SECONDS} s × ${ROUNDS} rounds per condition`,
      '',
      `${cpus().length} CPUs (${cpus()[0]?.model ?? 'unknown'}); ${new Date().toISOString()}`,
      '',
      '| condition | infer/s (mean) | per round | server CPU µs/infer (mean) | per round | p50 ms (median) | p99 ms (median) |',
      '|---|---:|---|---:|---|---:|---:|',
      ...CONDITIONS.map((condition) => {
        const rows = results[condition];
        const median = (values: number[]): number => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
        return `| ${condition} | ${rate(condition).toFixed(0)} | ${rows.map((r) => r.inferPerSec.toFixed(0)).join(', ')} | ${cpu(condition).toFixed(0)} | ${rows.map((r) => r.cpuUsPerInfer.toFixed(0)).join(', ')} | ${median(rows.map((r) => r.p50Ms)).toFixed(2)} | ${median(rows.map((r) => r.p99Ms)).toFixed(2)} |`;
      }),
      '',
      `Rate: unwatched / off ${(rate('unwatched') / rate('off')).toFixed(3)}, watched / unwatched ${(rate('watched') / rate('unwatched')).toFixed(3)}. ` +
        `CPU per inference: unwatched / off ${(cpu('unwatched') / cpu('off')).toFixed(3)}, watched / unwatched ${(cpu('watched') / cpu('unwatched')).toFixed(3)}. Frames read per watched run: ${frameCounts.join(', ')}.`,
      '',
      `One frame (${MODEL} alone, metrics off) takes ${frame.us.toFixed(1)} µs of the event loop and is ${frame.bytes} bytes: a page open costs ${((frame.us / 1e6) * 100).toFixed(4)}% of one core.`,
    ];
    const report = lines.join('\n');
    console.log(report);
    mkdirSync(join(ROOT, 'bench/results'), { recursive: true });
    writeFileSync(join(ROOT, `bench/results/dashboard-${new Date().toISOString().replace(/[:.]/g, '-')}.md`), `${report}\n`);
  } finally {
    for (const server of servers.values()) await server.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
