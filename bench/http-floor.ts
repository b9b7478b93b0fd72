/**
 * What no server built on node:http can beat on this machine, in one run: a server that answers every
 * request with the same bytes and computes nothing (bench/batching/constant-server.ts; and the same
 * without node:http, bench/batching/constant-socket-server.ts, for the response cache's mix), beside the
 * baselines that two targets are measured against:
 * - the hot path's naive server (node:http with onnxruntime-node inline) on the identity and the MLP,
 *   with wrk and the binary data extension at concurrency 1, 8 and 32 (the hot path's target: the
 *   batched MLP at 2x the naive server);
 * - Nereid serving the digits model without a cache, under the response cache's 90 % repeating JSON mix
 *   at concurrency 8 (the cache's target: 3x that).
 * A target above the constant server's rate is out of reach for a node:http server on this machine.
 *
 *   node --import tsx bench/http-floor.ts      (after `npm run build` and one `npm run bench:hot-path`,
 *                                               which exports the models and writes the request bodies)
 *
 * Environment: BENCH_SECONDS [4] per point, BENCH_ROUNDS [2] (alternated; the report shows the means),
 * BENCH_WORK_DIR [bench/batching/.work].
 */
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ServerProcess, freePort, startServer, stopAllOnExit } from './batching/servers.js';
import { runWrk } from './batching/wrk.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const WORK = process.env.BENCH_WORK_DIR ?? join(ROOT, 'bench/batching/.work');
const MODELS = ['identity', 'mlp'] as const;
const CONCURRENCY = [1, 8, 32];

/** The request body bench:hot-path wrote for a model, and its JSON header's length. */
function bodyOf(model: string): { bodyFile: string; headerLength: number } {
  const bodyFile = join(WORK, 'bodies', `${model}.bin`);
  if (!existsSync(bodyFile)) throw new Error(`${bodyFile} is missing: run \`npm run bench:hot-path\` once first`);
  const body = readFileSync(bodyFile);
  const binaryBytes = [...body.toString('latin1', 0, 4096).matchAll(/"binary_data_size":(\d+)/g)].reduce((sum, match) => sum + Number(match[1]), 0);
  return { bodyFile, headerLength: body.byteLength - binaryBytes };
}

/** requests/s of wrk with the response cache's mix (bench/response-cache-mix.lua) against `url`. */
function runMix(url: string, concurrency: number): Promise<number> {
  const args = ['-t1', `-c${concurrency}`, `-d${SECONDS}s`, '-s', join(ROOT, 'bench/response-cache-mix.lua'), url];
  return new Promise((resolve, reject) => {
    const child = spawn('wrk', args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => {
      const line = stdout.split('\n').find((l) => l.startsWith('BENCH_JSON '));
      if (code !== 0 || line === undefined) return reject(new Error(`wrk ${args.join(' ')} exited with ${code}:\n${stdout}`));
      const json = JSON.parse(line.slice('BENCH_JSON '.length)) as { requests: number; duration_us: number; errors: number };
      if (json.errors > 0) return reject(new Error(`wrk ${args.join(' ')}: ${json.errors} errors`));
      resolve(json.requests / (json.duration_us / 1e6));
    });
  });
}

async function serve(label: string, args: readonly string[]): Promise<ServerProcess> {
  const port = await freePort();
  mkdirSync(join(WORK, 'logs'), { recursive: true });
  return startServer({ label, command: process.execPath, args: [...args, ...(label === 'nereid' ? ['--http-port', String(port)] : ['--port', String(port)])], port, logFile: join(WORK, 'logs', `floor-${label}.log`) });
}

stopAllOnExit();
const repository = mkdtempSync(join(tmpdir(), 'nereid-floor-'));
cpSync(join(ROOT, 'examples/model_repository/digits'), join(repository, 'digits'), { recursive: true });
const constant = await serve('constant', ['--import', 'tsx', join(ROOT, 'bench/batching/constant-server.ts')]);
const socketConstant = await serve('socket', ['--import', 'tsx', join(ROOT, 'bench/batching/constant-socket-server.ts')]);
const naive = await serve('naive', ['--import', 'tsx', join(ROOT, 'bench/batching/naive-server.ts'), ...MODELS.map((m) => `${m}=${join(WORK, 'onnx', `${m}.onnx`)}`)]);
const nereid = await serve('nereid', [join(ROOT, 'dist/cli/main.js'), 'serve', '--model-repository', repository, '--http-address', '127.0.0.1', '--grpc-port', '0', '--metrics-port', '0']);
const rates = new Map<string, number[]>();
const add = (key: string, rate: number): void => void rates.set(key, [...(rates.get(key) ?? []), rate]);
const mean = (key: string): number => rates.get(key)!.reduce((a, b) => a + b, 0) / rates.get(key)!.length;
const startLoad = loadavg()[0]!;
try {
  for (let round = 1; round <= ROUNDS; round++) {
    for (const model of MODELS) {
      for (const concurrency of CONCURRENCY) {
        for (const [label, server] of [['naive', naive], ['constant', constant]] as const) {
          const result = await runWrk({ url: `${server.baseUrl}/v2/models/${model}/infer`, concurrency, threads: 1, durationS: SECONDS, ...bodyOf(model) });
          if (result.errorCount > 0) throw new Error(`${label} ${model} c=${concurrency}: ${result.errorCount} errors`);
          add(`${label} ${model} ${concurrency}`, result.inferPerSec);
        }
      }
    }
    add('nereid mix', await runMix(`${nereid.baseUrl}/v2/models/digits/infer`, 8));
    add('constant mix', await runMix(`${constant.baseUrl}/v2/models/digits/infer`, 8));
    add('socket mix', await runMix(`${socketConstant.baseUrl}/v2/models/digits/infer`, 8));
  }
} finally {
  await Promise.all([constant.stop(), socketConstant.stop(), naive.stop(), nereid.stop()]);
}
const lines = [
  `# node:http's floor, ${new Date().toISOString()} (wrk -t1, ${SECONDS} s a point, ${ROUNDS} rounds alternated, load average ${startLoad.toFixed(1)} at the start)`,
  '',
  '| body | c | naive server req/s | constant server req/s | constant / naive |',
  '|---|---:|---:|---:|---:|',
  ...MODELS.flatMap((model) =>
    CONCURRENCY.map((c) => `| ${model} | ${c} | ${mean(`naive ${model} ${c}`).toFixed(0)} | ${mean(`constant ${model} ${c}`).toFixed(0)} | ${(mean(`constant ${model} ${c}`) / mean(`naive ${model} ${c}`)).toFixed(2)} |`),
  ),
  '',
  `- The batched MLP's target, 2x the naive server at c=32: ${(2 * mean('naive mlp 32')).toFixed(0)} req/s; the constant server serves ${(mean('constant mlp 32') / (2 * mean('naive mlp 32'))).toFixed(2)} of that.`,
  `- The response cache's mix at c=8: Nereid without a cache ${mean('nereid mix').toFixed(0)} req/s, so 3x is ${(3 * mean('nereid mix')).toFixed(0)}; the constant server serves ${mean('constant mix').toFixed(0)} (${(mean('constant mix') / (3 * mean('nereid mix'))).toFixed(2)} of it).`,
  `- The same mix against the constant answer without node:http (bench/batching/constant-socket-server.ts, parsing as the HTTP/1.1 lane does): ${mean('socket mix').toFixed(0)} req/s, ${(mean('socket mix') / mean('constant mix')).toFixed(2)}x node:http's.`,
];
console.log(lines.join('\n'));
