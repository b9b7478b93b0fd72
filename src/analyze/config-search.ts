import { type RunConfig, runConfigLabel } from './run-config.js';

/** Model Analyzer's search modes (docs/config_search.md): every configuration, or a hill climb. */
export type SearchMode = 'brute' | 'quick';

/**
 * How a candidate batches: not at all, with a queue delay, or with a delay and preferred batch sizes of
 * half the maximum and the maximum (a half-full batch may then leave without waiting out the delay).
 * With no preferred sizes Triton prefers `[max_batch_size]`.
 */
export type BatchingChoice = { readonly kind: 'off' } | { readonly kind: 'delay'; readonly delayUs: number } | { readonly kind: 'preferred'; readonly delayUs: number };

/** The batching axis, in the order the quick search walks it: off, then longer waits for fuller batches. */
export const BATCHING_CHOICES: readonly BatchingChoice[] = [
  { kind: 'off' },
  { kind: 'delay', delayUs: 0 },
  { kind: 'delay', delayUs: 100 },
  { kind: 'delay', delayUs: 500 },
  { kind: 'delay', delayUs: 2000 },
  { kind: 'preferred', delayUs: 500 },
];

/** The three axes searched. A model that cannot batch has no batch sizes and only "off". */
export interface SearchSpace {
  readonly instanceCounts: readonly number[];
  /** Max batch sizes for the batching candidates: powers of two from 2. Empty when the model cannot batch. */
  readonly maxBatchSizes: readonly number[];
  readonly batchings: readonly BatchingChoice[];
  /** The max_batch_size kept by candidates without dynamic batching (their requests are never batched). */
  readonly unbatchedMaxBatchSize: number;
}

export interface SearchLimits {
  readonly maxInstanceCount: number;
  readonly maxModelBatchSize: number;
}

/** Powers of two from 2 to `max`, and `max` itself when it is none. */
export function batchSizesUpTo(max: number): number[] {
  const sizes: number[] = [];
  for (let size = 2; size <= max; size *= 2) sizes.push(size);
  if (max >= 2 && sizes.at(-1) !== max) sizes.push(max);
  return sizes;
}

/**
 * The space for a model whose configuration says `maxBatchSize`. `canBatch` false (max_batch_size 0, or
 * a sequence model, whose batcher is not the dynamic one): instance counts only.
 */
export function searchSpaceOf(maxBatchSize: number, canBatch: boolean, limits: SearchLimits): SearchSpace {
  const instanceCounts = Array.from({ length: limits.maxInstanceCount }, (_, index) => index + 1);
  if (!canBatch) return { instanceCounts, maxBatchSizes: [], batchings: [{ kind: 'off' }], unbatchedMaxBatchSize: maxBatchSize };
  return { instanceCounts, maxBatchSizes: batchSizesUpTo(limits.maxModelBatchSize), batchings: BATCHING_CHOICES, unbatchedMaxBatchSize: maxBatchSize };
}

/** A point of the space: an index on each axis. */
export interface SearchCell {
  readonly instance: number;
  readonly batchSize: number;
  readonly batching: number;
}

export function runConfigAt(space: SearchSpace, cell: SearchCell): RunConfig {
  const instanceCount = space.instanceCounts[cell.instance]!;
  const batching = space.batchings[cell.batching]!;
  if (batching.kind === 'off' || space.maxBatchSizes.length === 0) {
    return { instanceCount, maxBatchSize: space.unbatchedMaxBatchSize, dynamicBatching: undefined };
  }
  const maxBatchSize = space.maxBatchSizes[cell.batchSize]!;
  return {
    instanceCount,
    maxBatchSize,
    dynamicBatching: { maxQueueDelayUs: batching.delayUs, preferredBatchSizes: batching.kind === 'preferred' ? [Math.max(1, Math.floor(maxBatchSize / 2)), maxBatchSize] : [] },
  };
}

const nearestIndex = (values: readonly number[], target: number, distance: (a: number, b: number) => number): number =>
  values.reduce((best, value, index) => (distance(value, target) < distance(values[best]!, target) ? index : best), 0);

/** The cell closest to a configuration (the model's own, where the quick search starts). */
export function nearestCell(space: SearchSpace, config: RunConfig): SearchCell {
  const instance = nearestIndex(space.instanceCounts, config.instanceCount, (a, b) => Math.abs(a - b));
  const batchSize = space.maxBatchSizes.length === 0 ? 0 : nearestIndex(space.maxBatchSizes, Math.max(1, config.maxBatchSize), (a, b) => Math.abs(Math.log2(a) - Math.log2(b)));
  let batching = 0;
  if (config.dynamicBatching !== undefined && space.batchings.length > 1) {
    const kind = config.dynamicBatching.preferredBatchSizes.length > 0 ? 'preferred' : 'delay';
    const choices = space.batchings.map((choice, index) => ({ choice, index })).filter(({ choice }) => choice.kind === kind);
    const delayOf = (choice: BatchingChoice): number => (choice.kind === 'off' ? 0 : choice.delayUs);
    batching = choices.reduce((best, entry) =>
      Math.abs(delayOf(entry.choice) - config.dynamicBatching!.maxQueueDelayUs) < Math.abs(delayOf(best.choice) - config.dynamicBatching!.maxQueueDelayUs) ? entry : best,
    ).index;
  }
  return { instance, batchSize, batching };
}

/** Every distinct configuration of the space (brute mode), fewest instances first. */
export function everyRunConfig(space: SearchSpace): RunConfig[] {
  const byLabel = new Map<string, RunConfig>();
  for (let instance = 0; instance < space.instanceCounts.length; instance++) {
    for (let batching = 0; batching < space.batchings.length; batching++) {
      for (let batchSize = 0; batchSize < Math.max(1, space.maxBatchSizes.length); batchSize++) {
        const config = runConfigAt(space, { instance, batchSize, batching });
        byLabel.set(runConfigLabel(config), config);
      }
    }
  }
  return [...byLabel.values()];
}

function neighboursOf(space: SearchSpace, cell: SearchCell): SearchCell[] {
  const sizes = { instance: space.instanceCounts.length, batchSize: Math.max(1, space.maxBatchSizes.length), batching: space.batchings.length };
  const neighbours: SearchCell[] = [];
  for (const axis of ['instance', 'batchSize', 'batching'] as const) {
    for (const delta of [1, -1]) {
      const index = cell[axis] + delta;
      if (index >= 0 && index < sizes[axis]) neighbours.push({ ...cell, [axis]: index });
    }
  }
  return neighbours;
}

export interface QuickSearchOptions<Score> {
  readonly space: SearchSpace;
  readonly start: SearchCell;
  /** Measures a configuration; each distinct one is measured once. */
  readonly measure: (config: RunConfig) => Promise<Score>;
  /** Positive when `a` is better than `b`. */
  readonly compare: (a: Score, b: Score) => number;
  /** Distinct configurations measured at most. */
  readonly maxConfigs: number;
  /** Configurations measured already (the model's own), by label: not measured again. */
  readonly known?: ReadonlyMap<string, Score>;
}

/**
 * Quick mode: a hill climb over the three axes (as Model Analyzer's quick search climbs its own). From
 * the start cell, every neighbour one step away on one axis is measured; the climb moves to the best
 * one when it beats the current cell, and ends when none does or `maxConfigs` have been measured.
 */
export async function climbRunConfigs<Score>(options: QuickSearchOptions<Score>): Promise<void> {
  const scores = new Map<string, Score>(options.known);
  let measuredCount = 0;
  const scoreOf = async (cell: SearchCell): Promise<Score | undefined> => {
    const config = runConfigAt(options.space, cell);
    const label = runConfigLabel(config);
    if (scores.has(label)) return scores.get(label);
    if (measuredCount >= options.maxConfigs) return undefined;
    measuredCount++;
    const score = await options.measure(config);
    scores.set(label, score);
    return score;
  };
  let current = options.start;
  let currentScore = await scoreOf(current);
  for (;;) {
    let best = current;
    let bestScore = currentScore;
    for (const neighbour of neighboursOf(options.space, current)) {
      const score = await scoreOf(neighbour);
      if (score !== undefined && (bestScore === undefined || options.compare(score, bestScore) > 0)) {
        best = neighbour;
        bestScore = score;
      }
    }
    if (best === current || measuredCount >= options.maxConfigs) return;
    current = best;
    currentScore = bestScore;
  }
}
