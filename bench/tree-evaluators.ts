/**
 * The two candidate evaluators of the fil backend, on the same forests (bench/tree_models.py make):
 *
 * - **own**: predict.ts over the flat typed arrays of forest.ts, on the calling thread;
 * - **ONNX Runtime**: the trees as one ai.onnx.ml TreeEnsembleRegressor node, run by onnxruntime-node
 *   (C++, `intraOpNumThreads` threads, off the event loop).
 *
 * Rows/s and latency per call at each batch size (own: the whole output__0; ONNX Runtime: the
 * margins), and whether the two agree on the margins (max |difference|).
 *
 *   /usr/bin/python3 bench/tree_models.py make /tmp/trees
 *   node --import tsx bench/tree-evaluators.ts /tmp/trees [threads]
 */
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { computeOutput } from '../src/backends/fil/fil-outputs.js';
import { predictMargins } from '../src/backends/fil/predict.js';
import { readForest } from '../src/backends/fil/read-forest.js';

const folder = process.argv[2] ?? '/tmp/trees';
const threads = Number(process.argv[3] ?? 2);
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 1500);
const BATCHES = [1, 64, 1024, 16384];
const MODELS = [
  { name: 'example', features: 30 },
  { name: 'forest', features: 100 },
];

async function timed(run: () => Promise<unknown> | unknown): Promise<{ perCallUs: number }> {
  for (let i = 0; i < 3; i++) await run();
  let calls = 0;
  const start = performance.now();
  while (performance.now() - start < DURATION_MS) {
    await run();
    calls++;
  }
  return { perCallUs: ((performance.now() - start) / calls) * 1000 };
}

const settings = { modelType: 'xgboost_json', isClassifier: false, predictProba: false, threshold: 0.5, ignored: [] } as const;

for (const { name, features } of MODELS) {
  const forest = await readForest(name, join(folder, name, '1', 'xgboost.json'), 'xgboost_json');
  const session = await ort.InferenceSession.create(join(folder, name, 'model.onnx'), { intraOpNumThreads: threads, interOpNumThreads: 1 });
  for (const batch of BATCHES) {
    const input = Float32Array.from({ length: batch * features }, () => Math.random() * 4 - 2);
    const tensor = new ort.Tensor('float32', input, [batch, features]);
    const own = await timed(() => computeOutput(forest, settings, input, batch));
    const onnx = await timed(() => session.run({ input__0: tensor }));
    const ours = new Float64Array(batch);
    predictMargins(forest, input, batch, ours);
    const theirs = (await session.run({ input__0: tensor })).output__0!.data as Float32Array;
    let maxDifference = 0;
    for (let i = 0; i < batch; i++) maxDifference = Math.max(maxDifference, Math.abs(ours[i]! - theirs[i]!));
    const row = (us: number): string => `${((batch / us) * 1e6).toFixed(0).padStart(10)} rows/s ${us.toFixed(1).padStart(9)} µs/call`;
    console.log(`${name.padEnd(8)} batch ${String(batch).padStart(5)}  own ${row(own.perCallUs)}   onnxruntime(${threads}) ${row(onnx.perCallUs)}   max |diff| ${maxDifference.toExponential(1)}`);
  }
  await session.release();
}
