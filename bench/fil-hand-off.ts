/** The hand-off of the fil backend's native evaluator, shared by bench/tree-evaluators.ts and bench/fil-addon-ab.ts. */
import { buildForest } from '../src/backends/fil/forest.js';

/** One split on one feature: the evaluation costs next to nothing, so what a call takes is its overhead. */
export const stumpForest = buildForest({ numFeatures: 1, numGroups: 1, objective: 'stump', transform: { kind: 'identity' }, baseMargin: [0] }, [
  { left: [1, -1, -1], right: [2, -1, -1], feature: [0, -1, -1], kind: [0, 0, 0], defaultLeft: [0, 0, 0], value: [0.5, -1, 1], group: 0 },
]);

/** 128 rows of the stump: two blocks of 64, so the off-thread call cuts them across two threads. */
export const STUMP_ROWS = Float32Array.from({ length: 128 }, (_, index) => index / 128);

interface Margins {
  margins(input: Float32Array, rows: number): Float64Array;
  marginsOffThread(input: Float32Array, rows: number, threadCount: number): Promise<Float64Array>;
}

/**
 * µs that a call off the event loop costs beyond the same call on it: waking (or starting) the
 * threads and coming back, measured on the stump's 128 rows (mean over `durationMs` each).
 */
export async function handOffUs(stump: Margins, threadCount: number, durationMs: number): Promise<{ handOffUs: number; offThreadUs: number; onCallerUs: number }> {
  const mean = async (run: () => unknown): Promise<number> => {
    for (let i = 0; i < 3; i++) await run();
    let calls = 0;
    const start = performance.now();
    while (performance.now() - start < durationMs) {
      await run();
      calls++;
    }
    return ((performance.now() - start) / calls) * 1000;
  };
  const onCallerUs = await mean(() => stump.margins(STUMP_ROWS, STUMP_ROWS.length));
  const offThreadUs = await mean(() => stump.marginsOffThread(STUMP_ROWS, STUMP_ROWS.length, threadCount));
  return { handOffUs: offThreadUs - onCallerUs, offThreadUs, onCallerUs };
}
