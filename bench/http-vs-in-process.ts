/**
 * Nereid's HTTP latency (concurrency 1) and throughput (concurrency 16) for the `digits` classifier
 * and `simple`, side by side with the same model run in-process with onnxruntime-node, in one run.
 * Reports ratios, since the machine is shared and noisy.
 *
 *   npm run build && npm run bench            (or: node --import tsx bench/http-vs-in-process.ts)
 *
 * The server runs as a child process (`nereid serve`, built code), the load comes from this process
 * over keep-alive connections with the binary data extension, as tritonclient sends it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { fileURLToPath } from 'node:url';
import { InferenceSession, Tensor } from 'onnxruntime-node';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const REPOSITORY = `${ROOT}examples/model_repository`;
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 5000);
const LATENCY_REQUESTS = Number(process.env.BENCH_LATENCY_REQUESTS ?? 1000);

interface Case {
  readonly model: string;
  readonly feeds: () => Record<string, Tensor>;
  readonly body: { readonly header: unknown; readonly tensors: readonly Uint8Array[] };
}

const digits = JSON.parse(readFileSync(`${ROOT}test/fixtures/digits_samples.json`, 'utf8')) as { images: number[][] };
const image = new Float32Array(digits.images[0]!);
const a = new Int32Array(16).map((_, i) => i);
const b = new Int32Array(16).fill(1);
const bytes = (array: ArrayBufferView): Uint8Array => new Uint8Array(array.buffer, array.byteOffset, array.byteLength);

const CASES: Case[] = [
  {
    model: 'digits',
    feeds: () => ({ INPUT: new Tensor('float32', image, [1, 64]) }),
    body: {
      header: {
        inputs: [{ name: 'INPUT', shape: [1, 64], datatype: 'FP32', parameters: { binary_data_size: 256 } }],
        parameters: { binary_data_output: true },
      },
      tensors: [bytes(image)],
    },
  },
  {
    model: 'simple',
    feeds: () => ({ INPUT0: new Tensor('int32', a, [1, 16]), INPUT1: new Tensor('int32', b, [1, 16]) }),
    body: {
      header: {
        inputs: [
          { name: 'INPUT0', shape: [1, 16], datatype: 'INT32', parameters: { binary_data_size: 64 } },
          { name: 'INPUT1', shape: [1, 16], datatype: 'INT32', parameters: { binary_data_size: 64 } },
        ],
        parameters: { binary_data_output: true },
      },
      tensors: [bytes(a), bytes(b)],
    },
  },
];

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

interface Figures {
  readonly meanUs: number;
  readonly p50Us: number;
  readonly p99Us: number;
}

function summarize(samplesUs: number[]): Figures {
  samplesUs.sort((x, y) => x - y);
  return { meanUs: samplesUs.reduce((s, v) => s + v, 0) / samplesUs.length, p50Us: percentile(samplesUs, 50), p99Us: percentile(samplesUs, 99) };
}

async function inProcess(testCase: Case): Promise<{ latency: Figures; throughput: number }> {
  const session = await InferenceSession.create(`${REPOSITORY}/${testCase.model}/1/model.onnx`, { intraOpNumThreads: 1, interOpNumThreads: 1 });
  for (let i = 0; i < 200; i++) await session.run(testCase.feeds());
  const samples: number[] = [];
  for (let i = 0; i < LATENCY_REQUESTS; i++) {
    const start = performance.now();
    await session.run(testCase.feeds());
    samples.push((performance.now() - start) * 1000);
  }
  let count = 0;
  const end = performance.now() + DURATION_MS;
  while (performance.now() < end) {
    await session.run(testCase.feeds());
    count++;
  }
  await session.release();
  return { latency: summarize(samples), throughput: count / (DURATION_MS / 1000) };
}

function encodeBody(testCase: Case): { body: Buffer; headers: Record<string, string> } {
  const json = Buffer.from(JSON.stringify(testCase.body.header));
  return {
    body: Buffer.concat([json, ...testCase.body.tensors]),
    headers: { 'inference-header-content-length': String(json.byteLength), 'content-type': 'application/octet-stream' },
  };
}

/** POSTs `body`, or GETs when it is undefined; resolves when the whole 200 answer is read. */
function send(url: URL, agent: Agent, body: Buffer | undefined, headers: Record<string, string>): Promise<void> {
  const method = body === undefined ? 'GET' : 'POST';
  const length = body === undefined ? {} : { 'content-length': String(body.byteLength) };
  return new Promise((resolve, reject) => {
    const req = request(url, { method, agent, headers: { ...headers, ...length } }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`status ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Latency at concurrency 1 and throughput at concurrency 16 of one HTTP request, repeated. */
async function measureHttp(url: URL, body: Buffer | undefined, headers: Record<string, string>): Promise<{ latency: Figures; throughput: number }> {
  const agent = new Agent({ keepAlive: true, maxSockets: 16 });
  for (let i = 0; i < 200; i++) await send(url, agent, body, headers);
  const samples: number[] = [];
  for (let i = 0; i < LATENCY_REQUESTS; i++) {
    const start = performance.now();
    await send(url, agent, body, headers);
    samples.push((performance.now() - start) * 1000);
  }
  let count = 0;
  const end = performance.now() + DURATION_MS;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (performance.now() < end) {
        await send(url, agent, body, headers);
        count++;
      }
    }),
  );
  agent.destroy();
  return { latency: summarize(samples), throughput: count / (DURATION_MS / 1000) };
}

function overHttp(baseUrl: string, testCase: Case): Promise<{ latency: Figures; throughput: number }> {
  const { body, headers } = encodeBody(testCase);
  return measureHttp(new URL(`${baseUrl}/v2/models/${testCase.model}/infer`), body, headers);
}

async function startNereid(): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [`${ROOT}dist/cli/main.js`, 'serve', '--model-repository', REPOSITORY, '--http-port=0', '--http-address=127.0.0.1', '--metrics-port=0', '--grpc-port=0'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let log = '';
    child.stderr!.on('data', (chunk: Buffer) => {
      log += chunk.toString();
      const match = /[Ss]tarted (?:HTTPService|HTTP service) at [^:]+:(\d+)/.exec(log);
      if (match !== null) resolve(`http://127.0.0.1:${match[1]}`);
    });
    child.once('exit', () => reject(new Error(`nereid exited:\n${log}`)));
  });
  return { child, url };
}

const format = (value: number): string => value.toFixed(0);

const { child, url } = await startNereid();
try {
  console.log(`duration ${DURATION_MS} ms per throughput run, ${LATENCY_REQUESTS} sequential requests per latency run\n`);
  const ceiling = await measureHttp(new URL(`${url}/v2/health/live`), undefined, {});
  console.log(
    `HTTP ceiling (GET /v2/health/live, no model): latency c=1 mean ${format(ceiling.latency.meanUs)} µs, p99 ${format(ceiling.latency.p99Us)} µs; ${format(ceiling.throughput)} req/s at c=16\n`,
  );
  console.log(
    '| model | in-process latency c=1 (mean / p99 µs) | Nereid HTTP latency c=1 (mean / p99 µs) | latency ratio | in-process infer/s (1 session) | Nereid HTTP infer/s c=16 | vs in-process | vs HTTP ceiling |',
  );
  console.log('|---|---|---|---|---|---|---|---|');
  for (const testCase of CASES) {
    const local = await inProcess(testCase);
    const http = await overHttp(url, testCase);
    console.log(
      `| ${testCase.model} | ${format(local.latency.meanUs)} / ${format(local.latency.p99Us)} | ${format(http.latency.meanUs)} / ${format(http.latency.p99Us)} | ` +
        `${(http.latency.meanUs / local.latency.meanUs).toFixed(1)}x | ${format(local.throughput)} | ${format(http.throughput)} | ` +
        `${(http.throughput / local.throughput).toFixed(2)} | ${(http.throughput / ceiling.throughput).toFixed(2)} |`,
    );
  }
} finally {
  child.kill('SIGTERM');
}
