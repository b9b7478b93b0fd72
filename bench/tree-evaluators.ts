/**
 * The candidate evaluators of the fil backend, on the same forests (bench/tree_models.py make):
 *
 * - **JavaScript**: predict.ts over the flat typed arrays of forest.ts, on the calling thread (the
 *   fallback without the addon);
 * - **native**: native/fil (native-forest.ts) on the calling thread, and off it on `threads` threads;
 * - **ONNX Runtime**: the trees as one ai.onnx.ml TreeEnsembleRegressor node, run by onnxruntime-node
 *   (C++, `intraOpNumThreads` threads, off the event loop).
 *
 * Latency per call at each batch size and, for the evaluators on the calling thread, the CPU time per
 * row and tree (process.cpuUsage, which the other sessions' load hurts less than the wall clock),
 * beside XGBoost's own on one thread (bench/tree_models.py, `nthread` 1, time.process_time); the
 * margins of all of them, and whether they agree (max |difference|: 0 between JavaScript and native).
 * First, the hand-off of the off-thread path (fil-hand-off.ts): the wake-up of the parked evaluator
 * threads and the way back to the event loop, in µs.
 *
 *   /usr/bin/python3 bench/tree_models.py make /tmp/trees
 *   node --import tsx bench/tree-evaluators.ts /tmp/trees [threads]      (BENCH_DURATION_MS per point, default 1500)
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as ort from 'onnxruntime-node';
import { createNativeForest } from '../src/backends/fil/native-forest.js';
import { predictMargins } from '../src/backends/fil/predict.js';
import { readForest } from '../src/backends/fil/read-forest.js';
import { handOffUs, stumpForest } from './fil-hand-off.js';
import { timedCalls } from './harness.js';

const folder = process.argv[2] ?? '/tmp/trees';
const threads = Number(process.argv[3] ?? 2);
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 1500);
const BATCHES = (process.env.BENCH_BATCHES ?? '1,64,1024,16384').split(',').map(Number);
const MODELS = [
  { name: 'example', features: 30 },
  { name: 'forest', features: 100 },
];

async function timed(run: () => unknown): Promise<{ perCallUs: number; cpuPerCallUs: number }> {
  const { wallUs, cpuUs } = await timedCalls(run, DURATION_MS);
  return { perCallUs: wallUs, cpuPerCallUs: cpuUs };
}

const xgboost = spawnSync('/usr/bin/python3', [fileURLToPath(new URL('./tree_models.py', import.meta.url)), 'xgboost', folder, '1', String(DURATION_MS / 1000), ...BATCHES.map(String)], { encoding: 'utf8' });
if (xgboost.status !== 0) throw new Error(`bench/tree_models.py failed:\n${xgboost.stderr}`);
const xgboostCpuUs = new Map(
  xgboost.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { model: string; batch: number; cpuUs: number })
    .map((figure) => [`${figure.model}/${figure.batch}`, figure.cpuUs]),
);

{
  const choice = createNativeForest(stumpForest);
  if (!('native' in choice)) throw new Error(`the native evaluator is not in use: ${choice.fallbackReason}`);
  for (const threadCount of new Set([1, threads])) {
    const figures = await handOffUs(choice.native, threadCount, DURATION_MS);
    console.log(`hand-off to ${threadCount} evaluator thread(s): ${figures.handOffUs.toFixed(1)} µs (128 rows of a one-split forest: ${figures.offThreadUs.toFixed(1)} off the thread, ${figures.onCallerUs.toFixed(1)} on it)`);
  }
}

console.log('| model | batch | JavaScript µs/call | JavaScript CPU ns/row/tree | native µs/call | native CPU ns/row/tree | XGBoost (1 thread) CPU ns/row/tree | native off-thread µs/call | ONNX Runtime µs/call | max \\|JS - native\\| | max \\|JS - ONNX\\| |');
console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
for (const { name, features } of MODELS) {
  const forest = await readForest(name, join(folder, name, '1', 'xgboost.json'), 'xgboost_json');
  const choice = createNativeForest(forest);
  if (!('native' in choice)) throw new Error(`the native evaluator is not in use: ${choice.fallbackReason}`);
  const { native } = choice;
  const session = await ort.InferenceSession.create(join(folder, name, 'model.onnx'), { intraOpNumThreads: threads, interOpNumThreads: 1 });
  const trees = forest.roots.length;
  for (const batch of BATCHES) {
    const input = Float32Array.from({ length: batch * features }, () => Math.random() * 4 - 2);
    const tensor = new ort.Tensor('float32', input, [batch, features]);
    const ours = new Float64Array(batch);
    const script = await timed(() => predictMargins(forest, input, batch, ours));
    const onCaller = await timed(() => native.margins(input, batch));
    const offThread = await timed(() => native.marginsOffThread(input, batch, threads));
    const onnx = await timed(() => session.run({ input__0: tensor }));
    const nativeMargins = native.margins(input, batch);
    const theirs = (await session.run({ input__0: tensor })).output__0!.data as Float32Array;
    let nativeDifference = 0;
    let onnxDifference = 0;
    for (let i = 0; i < batch; i++) {
      nativeDifference = Math.max(nativeDifference, Math.abs(ours[i]! - nativeMargins[i]!));
      onnxDifference = Math.max(onnxDifference, Math.abs(ours[i]! - theirs[i]!));
    }
    const perRowTree = (us: number) => ((us * 1000) / (batch * trees)).toFixed(1);
    console.log(
      `| ${name} | ${batch} | ${script.perCallUs.toFixed(1)} | ${perRowTree(script.cpuPerCallUs)} | ${onCaller.perCallUs.toFixed(1)} | ${perRowTree(onCaller.cpuPerCallUs)} | ${perRowTree(xgboostCpuUs.get(`${name}/${batch}`)!)} | ${offThread.perCallUs.toFixed(1)} | ${onnx.perCallUs.toFixed(1)} | ${nativeDifference} | ${onnxDifference.toExponential(1)} |`,
    );
  }
  await session.release();
}
