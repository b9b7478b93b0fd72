/**
 * The digits pipeline (pre-processing in JavaScript, the ONNX classifier, post-processing in
 * JavaScript) three ways against one Nereid server, in one run: as the `digits_pipeline` ensemble, as
 * the `digits_bls` model that calls the three models itself, and as three separate client calls that
 * pass each result on to the next model. Throughput, p50/p99, the server's CPU per pipeline (user +
 * system of all its threads, from /proc/PID/stat) and the ratios of the three ways.
 *
 *   npm run build && npm run bench:pipelines
 *
 * Settings from the environment: BENCH_DURATION_S (default 5) per point, BENCH_ROUNDS (default 1)
 * rounds alternated, BENCH_CONCURRENCY (default 1,16), BENCH_WAYS (default calls,ensemble,bls) and
 * BENCH_BEFORE_MAIN, a second build's dist/cli/main.js served alongside and measured in turn.
 *
 * Every request is KServe v2 JSON over keep-alive HTTP connections from this process, one image each.
 */
import { readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { Agent, request } from 'node:http';
import { fileURLToPath } from 'node:url';
import { type Figures, measure, startNereid } from './harness.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const env = process.env;
const DURATION_MS = Number(env.BENCH_DURATION_S ?? 5) * 1000;
const ROUNDS = Number(env.BENCH_ROUNDS ?? 1);
const CONCURRENCY = (env.BENCH_CONCURRENCY ?? '1,16').split(',').map(Number);
const WAYS = (env.BENCH_WAYS ?? 'calls,ensemble,bls').split(',');
const samples = JSON.parse(readFileSync(`${ROOT}test/fixtures/digits_samples.json`, 'utf8')) as { images: number[][]; predicted: number[] };
const IMAGE = samples.images[0]!.map((value) => Math.round((value * 255) / 16));
const CLOCK_TICKS_PER_S = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/** CPU seconds a process has used (user + system, all threads), from /proc/PID/stat. */
function cpuSecondsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const after = fields.slice(fields.lastIndexOf(')') + 2).split(' ');
  // After the command: state is field 3, utime 14 and stime 15 (proc(5)).
  return (Number(after[11]) + Number(after[12])) / CLOCK_TICKS_PER_S;
}

type Output = { name: string; data: Array<number | string> };

function post(port: number, agent: Agent, model: string, inputs: unknown[]): Promise<Output[]> {
  const body = JSON.stringify({ inputs });
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: `/v2/models/${model}/infer`, method: 'POST', agent, headers: { 'content-length': Buffer.byteLength(body) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        if (res.statusCode !== 200) reject(new Error(`${model}: HTTP ${res.statusCode} ${text}`));
        else resolve((JSON.parse(text) as { outputs: Output[] }).outputs);
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

const imageInput = { name: 'IMAGE', datatype: 'UINT8', shape: [1, 8, 8], data: IMAGE };

/** The three models called one after the other by the client, each result sent on to the next. */
async function threeCalls(port: number, agent: Agent): Promise<Output[]> {
  const [pixels] = await post(port, agent, 'digits_preprocess', [imageInput]);
  const [probabilities] = await post(port, agent, 'digits', [{ name: 'INPUT', datatype: 'FP32', shape: [1, 64], data: pixels!.data }]);
  return post(port, agent, 'digits_postprocess', [{ name: 'PROBABILITIES', datatype: 'FP32', shape: [1, 10], data: probabilities!.data }]);
}

const servers = [{ label: 'nereid', server: await startNereid(`${ROOT}examples/model_repository`) }];
if (env.BENCH_BEFORE_MAIN !== undefined) servers.push({ label: 'before', server: await startNereid(`${ROOT}examples/model_repository`, [], env.BENCH_BEFORE_MAIN) });
const sends: Record<string, (port: number, agent: Agent) => Promise<unknown>> = {
  calls: threeCalls,
  ensemble: (port, agent) => post(port, agent, 'digits_pipeline', [imageInput]),
  bls: (port, agent) => post(port, agent, 'digits_bls', [imageInput]),
};
interface Point extends Figures {
  readonly cpuUs: number;
}
/** Points by `${server} ${way} ${concurrency}`, one per round. */
const points = new Map<string, Point[]>();
try {
  for (const { label, server } of servers) {
    const check = new Agent({ keepAlive: true });
    const expected = JSON.stringify(await threeCalls(server.httpPort, check));
    for (const model of ['digits_pipeline', 'digits_bls']) {
      const got = JSON.stringify(await post(server.httpPort, check, model, [imageInput]));
      if (got !== expected) throw new Error(`${label}: ${model} answered ${got}, the three calls ${expected}`);
    }
    check.destroy();
  }
  for (let round = 0; round < ROUNDS; round++) {
    for (const concurrency of CONCURRENCY) {
      for (const way of WAYS) {
        for (const { label, server } of servers) {
          const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
          const send = sends[way]!;
          let cpuBeforeS = 0;
          const figures = await measure(concurrency, DURATION_MS, () => send(server.httpPort, agent).then(() => undefined), () => (cpuBeforeS = cpuSecondsOf(server.pid)));
          const cpuUs = ((cpuSecondsOf(server.pid) - cpuBeforeS) * 1e6) / (figures.perSecond * (DURATION_MS / 1000));
          agent.destroy();
          const key = `${label} ${way} ${concurrency}`;
          points.set(key, [...(points.get(key) ?? []), { ...figures, cpuUs }]);
          console.error(`round ${round + 1} ${key}: ${figures.perSecond.toFixed(0)}/s p50 ${figures.p50Ms.toFixed(2)} ms, ${cpuUs.toFixed(0)} CPU µs per pipeline`);
        }
      }
    }
  }
} finally {
  for (const { server } of servers) server.stop();
}
const mean = (values: readonly number[]): number => values.reduce((sum, value) => sum + value, 0) / values.length;
const rate = (key: string): number => mean(points.get(key)!.map((point) => point.perSecond));
console.log(`${DURATION_MS / 1000} s per point after 1 s of warm-up, ${ROUNDS} round(s) alternated, means; pipelines per second, latency of a whole pipeline, server CPU µs per pipeline\n`);
console.log('| server | concurrency | way | pipelines/s | p50 / p99 ms | CPU µs/pipeline | / ensemble |');
console.log('|---|---:|---|---:|---:|---:|---:|');
for (const { label } of servers) {
  for (const concurrency of CONCURRENCY) {
    for (const way of WAYS) {
      const key = `${label} ${way} ${concurrency}`;
      const list = points.get(key)!;
      const ratio = WAYS.includes('ensemble') ? (rate(key) / rate(`${label} ensemble ${concurrency}`)).toFixed(2) : '';
      console.log(`| ${label} | ${concurrency} | ${way} | ${rate(key).toFixed(0)} | ${mean(list.map((p) => p.p50Ms)).toFixed(2)} / ${mean(list.map((p) => p.p99Ms)).toFixed(2)} | ${mean(list.map((p) => p.cpuUs)).toFixed(0)} | ${ratio} |`);
    }
  }
}
if (servers.length > 1) {
  console.log('\n| way | concurrency | nereid / before |\n|---|---:|---:|');
  for (const concurrency of CONCURRENCY) for (const way of WAYS) console.log(`| ${way} | ${concurrency} | ${(rate(`nereid ${way} ${concurrency}`) / rate(`before ${way} ${concurrency}`)).toFixed(2)} |`);
}
process.exit(0);
