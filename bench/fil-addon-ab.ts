/**
 * The fil backend's native evaluator (native/fil) against another build of it, alternated in one run,
 * on the forests of bench/tree_models.py make: per model and batch, the CPU time per row and tree on
 * the calling thread (process.cpuUsage) and the wall time of a call off it on `threads` threads; then
 * the hand-off (fil-hand-off.ts: two blocks of rows through one split, off the thread
 * minus on it). Median of BENCH_ROUNDS rounds, each
 * build BENCH_DURATION_MS per point and round. Checks that both give the same margins.
 *
 * To compare with the build of an earlier commit:
 *
 *   mkdir -p /tmp/fil-base && git archive <commit> native/fil | tar -x --strip-components=2 -C /tmp/fil-base &&
 *     (cd /tmp/fil-base && node <npm's node-gyp.js> rebuild)
 *   node --import tsx bench/fil-addon-ab.ts /tmp/trees /tmp/fil-base/build/Release/nereid_fil.node [threads]
 *   short mode: BENCH_DURATION_MS=200 BENCH_ROUNDS=3 BENCH_BATCHES=64,1024
 */
import { createRequire } from 'node:module';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { NativeForest } from '../src/backends/fil/native-forest.js';
import { handOffUs, stumpForest } from './fil-hand-off.js';
import { readForest } from '../src/backends/fil/read-forest.js';
import { timedCalls } from './harness.js';

const [folder = '/tmp/trees', baselinePath] = process.argv.slice(2);
if (baselinePath === undefined) throw new Error('usage: bench/fil-addon-ab.ts <trees folder> <baseline nereid_fil.node> [threads]');
const threads = Number(process.argv[4] ?? 2);
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 500);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const BATCHES = (process.env.BENCH_BATCHES ?? '64,1024,16384').split(',').map(Number);
const MODELS = [
  { name: 'example', features: 30 },
  { name: 'forest', features: 100 },
];
const require = createRequire(import.meta.url);
const builds = { baseline: require(baselinePath), current: require('../native/fil/build/Release/nereid_fil.node') } as const;
type Build = keyof typeof builds;

const timed = (run: () => unknown): Promise<{ readonly wallUs: number; readonly cpuUs: number }> => timedCalls(run, DURATION_MS);

const median = (values: number[]): number => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

console.log(`${new Date().toISOString()}, load average ${loadavg().map((load) => load.toFixed(2)).join(' ')}; ${ROUNDS} rounds of ${DURATION_MS} ms per point and build, off-thread on ${threads} threads`);
const handOffs: Record<Build, number[]> = { baseline: [], current: [] };
const stumps = { baseline: new NativeForest(builds.baseline, stumpForest), current: new NativeForest(builds.current, stumpForest) };
for (let round = 0; round < ROUNDS; round++) {
  for (const build of round % 2 === 0 ? (['baseline', 'current'] as const) : (['current', 'baseline'] as const)) handOffs[build].push((await handOffUs(stumps[build], threads, DURATION_MS)).handOffUs);
}
console.log(`hand-off (128 rows of a one-split forest off the thread minus on it, ${threads} threads): baseline ${median(handOffs.baseline).toFixed(0)} µs, current ${median(handOffs.current).toFixed(0)} µs`);
console.log('| model | batch | baseline CPU ns/row/tree | current CPU ns/row/tree | baseline off-thread µs/call | current off-thread µs/call |');
console.log('|---|---:|---:|---:|---:|---:|');
for (const { name, features } of MODELS) {
  const forest = await readForest(name, join(folder, name, '1', 'xgboost.json'), 'xgboost_json');
  const natives = { baseline: new NativeForest(builds.baseline, forest), current: new NativeForest(builds.current, forest) };
  const trees = forest.roots.length;
  for (const batch of BATCHES) {
    const input = Float32Array.from({ length: batch * features }, () => Math.random() * 4 - 2);
    const expected = natives.baseline.margins(input, batch);
    for (const build of ['current', 'baseline'] as const) {
      const margins = [natives[build].margins(input, batch), await natives[build].marginsOffThread(input, batch, threads)];
      if (margins.some((got) => got.some((value, index) => value !== expected[index]))) throw new Error(`${name}, ${batch} rows: the ${build} build's margins differ`);
    }
    const cpu: Record<Build, number[]> = { baseline: [], current: [] };
    const offThread: Record<Build, number[]> = { baseline: [], current: [] };
    for (let round = 0; round < ROUNDS; round++) {
      for (const build of round % 2 === 0 ? (['baseline', 'current'] as const) : (['current', 'baseline'] as const)) {
        cpu[build].push(((await timed(() => natives[build].margins(input, batch))).cpuUs * 1000) / (batch * trees));
        offThread[build].push((await timed(() => natives[build].marginsOffThread(input, batch, threads))).wallUs);
      }
    }
    console.log(`| ${name} | ${batch} | ${median(cpu.baseline).toFixed(1)} | ${median(cpu.current).toFixed(1)} | ${median(offThread.baseline).toFixed(0)} | ${median(offThread.current).toFixed(0)} |`);
  }
}
