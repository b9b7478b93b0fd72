/**
 * The digits pipeline (pre-processing in JavaScript, the ONNX classifier, post-processing in
 * JavaScript) three ways against one Nereid server, in one run: as the `digits_pipeline` ensemble, as
 * the `digits_bls` model that calls the three models itself, and as three separate client calls that
 * pass each result on to the next model. Concurrency 1 and 16; throughput, p50/p99 and the ratio of
 * each in-server pipeline to the three client calls.
 *
 *   npm run build && npm run bench:pipelines        (BENCH_DURATION_S, default 5)
 *
 * Every request is KServe v2 JSON over keep-alive HTTP connections from this process, one image each.
 */
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { fileURLToPath } from 'node:url';
import { measure, startNereid } from './harness.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DURATION_MS = Number(process.env.BENCH_DURATION_S ?? 5) * 1000;
const CONCURRENCY = [1, 16];
const samples = JSON.parse(readFileSync(`${ROOT}test/fixtures/digits_samples.json`, 'utf8')) as { images: number[][]; predicted: number[] };
const IMAGE = samples.images[0]!.map((value) => Math.round((value * 255) / 16));

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

const nereid = await startNereid(`${ROOT}examples/model_repository`);
const rows: string[] = [];
try {
  const check = new Agent({ keepAlive: true });
  const expected = JSON.stringify(await threeCalls(nereid.httpPort, check));
  for (const model of ['digits_pipeline', 'digits_bls']) {
    const got = JSON.stringify(await post(nereid.httpPort, check, model, [imageInput]));
    if (got !== expected) throw new Error(`${model} answered ${got}, the three calls ${expected}`);
  }
  check.destroy();
  for (const concurrency of CONCURRENCY) {
    const figures = [];
    for (const [, send] of [
      ['three client calls', (agent: Agent) => threeCalls(nereid.httpPort, agent)],
      ['ensemble', (agent: Agent) => post(nereid.httpPort, agent, 'digits_pipeline', [imageInput])],
      ['BLS model', (agent: Agent) => post(nereid.httpPort, agent, 'digits_bls', [imageInput])],
    ] as const) {
      const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
      figures.push(await measure(concurrency, DURATION_MS, () => send(agent).then(() => undefined)));
      agent.destroy();
    }
    const [calls, ensemble, bls] = figures as [(typeof figures)[0], (typeof figures)[0], (typeof figures)[0]];
    const cell = (f: typeof calls): string => `${f.perSecond.toFixed(0)} | ${f.p50Ms.toFixed(2)} / ${f.p99Ms.toFixed(2)}`;
    const row = `| ${concurrency} | ${cell(calls)} | ${cell(ensemble)} | ${(ensemble.perSecond / calls.perSecond).toFixed(2)} | ${cell(bls)} | ${(bls.perSecond / calls.perSecond).toFixed(2)} |`;
    rows.push(row);
    console.error(row);
  }
} finally {
  nereid.stop();
}
console.log(`${DURATION_MS / 1000} s per point after 1 s of warm-up; pipelines per second, latency of a whole pipeline\n`);
console.log('| concurrency | 3 client calls /s | p50 / p99 ms | ensemble /s | p50 / p99 ms | ensemble / calls | BLS /s | p50 / p99 ms | BLS / calls |');
console.log('|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
for (const row of rows) console.log(row);
process.exit(0);
