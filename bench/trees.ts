/**
 * Tree models over HTTP against XGBoost in-process: rows/s at batch 1, 64, 1,024 and 16,384 of
 *
 * - **Nereid, native**: one request at a time to the fil backend over HTTP (binary data extension,
 *   the HttpClient of nereid/client), the round trip included, with the native evaluator (native/fil);
 * - **Nereid, JavaScript**: the same models loaded again as `<name>_js` with NEREID_FIL_FALLBACK=1
 *   (the evaluator the backend falls back to without the addon), measured right after the native one;
 * - **XGBoost**: `Booster.inplace_predict` called in a loop by Python itself, with `nthread` threads;
 *
 * on the example breast-cancer classifier (100 trees of depth 4, 30 features) and a 500-tree depth-8
 * forest on 100 features (bench/tree_models.py make). At batch 1, the latency of the identity model
 * `echo` (test/fixtures/hot_path_repository, ONNX Runtime) beside it, the floor of a round trip, and
 * for Nereid the compute_infer time per request from the statistics extension (the evaluation alone).
 *
 * Nereid's fil instances use the cores the process may run on (os.availableParallelism); run the
 * bench under `taskset -c 0-<threads - 1>` so that both sides have the same threads.
 *
 *   /usr/bin/python3 bench/tree_models.py make /tmp/trees
 *   taskset -c 0,1 node --import tsx bench/trees.ts /tmp/trees 2
 *   short mode: BENCH_DURATION_MS=500 (per point, default 2000), BENCH_BATCHES=1,1024 (default 1,64,1024,16384)
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HttpClient } from '../src/client/index.js';
import { silentLogger } from '../src/logging/logger.js';
import { startServer } from '../src/server.js';

const folder = process.argv[2] ?? '/tmp/trees';
const threads = Number(process.argv[3] ?? 2);
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 2000);
const BATCHES = (process.env.BENCH_BATCHES ?? '1,64,1024,16384').split(',').map(Number);
const MODELS = [
  { name: 'example', features: 30 },
  { name: 'forest', features: 100 },
];
const HOT_PATH = fileURLToPath(new URL('../test/fixtures/hot_path_repository', import.meta.url));
const PYTHON_SCRIPT = fileURLToPath(new URL('./tree_models.py', import.meta.url));

/** Sequential calls for DURATION_MS after a few warm-up calls: mean latency in microseconds. */
async function meanLatencyUs(send: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 3; i++) await send();
  let calls = 0;
  const start = performance.now();
  while (performance.now() - start < DURATION_MS) {
    await send();
    calls++;
  }
  return ((performance.now() - start) / calls) * 1000;
}

console.log(`${new Date().toISOString()}, load average ${loadavg().map((load) => load.toFixed(2)).join(' ')}; Nereid may use ${availableParallelism()} cores, XGBoost nthread ${threads}`);
const xgboost = spawnSync('/usr/bin/python3', [PYTHON_SCRIPT, 'xgboost', folder, String(threads), String(DURATION_MS / 1000), ...BATCHES.map(String)], { encoding: 'utf8' });
if (xgboost.status !== 0) throw new Error(`bench/tree_models.py failed:\n${xgboost.stderr}`);
const reference = new Map(
  xgboost.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { model: string; batch: number; rowsPerSecond: number; latencyUs: number })
    .map((figure) => [`${figure.model}/${figure.batch}`, figure]),
);

// The same models under other names, loaded with the JavaScript evaluator.
const copies = mkdtempSync(join(tmpdir(), 'nereid-trees-js-'));
for (const { name } of MODELS) {
  cpSync(join(folder, name), join(copies, `${name}_js`), { recursive: true });
  const config = join(copies, `${name}_js`, 'config.pbtxt');
  writeFileSync(config, readFileSync(config, 'utf8').replace(`name: "${name}"`, `name: "${name}_js"`));
}

const server = await startServer({
  modelRepositories: [folder, copies, HOT_PATH],
  modelControlMode: 'explicit',
  startupModels: ['example', 'forest', 'echo'],
  httpPort: 0,
  httpAddress: '127.0.0.1',
  grpcPort: 0,
  metricsPort: 0,
  logger: silentLogger,
});
const client = new HttpClient(server.httpUrl!);
try {
  process.env.NEREID_FIL_FALLBACK = '1';
  for (const { name } of MODELS) await client.loadModel(`${name}_js`);
  delete process.env.NEREID_FIL_FALLBACK;
  const computeInfer = async (model: string) => (await client.modelStatistics(model))[0]!.inferenceStats.computeInfer;
  const echoInput = [{ name: 'INPUT0', datatype: 'FP32' as const, shape: [1, 4], data: new Float32Array(4) }];
  const echoUs = await meanLatencyUs(() => client.infer('echo', echoInput));
  console.log(`identity model echo, batch 1: ${echoUs.toFixed(0)} µs per request over HTTP`);
  console.log('| model | batch | native rows/s (HTTP) | JavaScript rows/s (HTTP) | XGBoost rows/s (in-process) | native / XGBoost | JavaScript / XGBoost | native µs/request | native compute µs/request | XGBoost µs/call |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const { name, features } of MODELS) {
    for (const batch of BATCHES) {
      const data = Float32Array.from({ length: batch * features }, () => Math.random() * 4 - 2);
      const inputs = [{ name: 'input__0', datatype: 'FP32' as const, shape: [batch, features], data }];
      const before = await computeInfer(name);
      const nativeUs = await meanLatencyUs(() => client.infer(name, inputs));
      const after = await computeInfer(name);
      const scriptUs = await meanLatencyUs(() => client.infer(`${name}_js`, inputs));
      const computeUs = (after.ns - before.ns) / (after.count - before.count) / 1000;
      const rowsPerS = (us: number) => (batch / us) * 1e6;
      const theirs = reference.get(`${name}/${batch}`)!;
      console.log(
        `| ${name} | ${batch} | ${rowsPerS(nativeUs).toFixed(0)} | ${rowsPerS(scriptUs).toFixed(0)} | ${theirs.rowsPerSecond.toFixed(0)} | ${(rowsPerS(nativeUs) / theirs.rowsPerSecond).toFixed(2)} | ${(rowsPerS(scriptUs) / theirs.rowsPerSecond).toFixed(2)} | ${nativeUs.toFixed(0)} | ${computeUs.toFixed(0)} | ${theirs.latencyUs.toFixed(0)} |`,
      );
    }
  }
} finally {
  await client.close();
  await server.shutdown();
  rmSync(copies, { recursive: true, force: true });
}
