import { type Criteria, type MeasuredStep, isOverBudget, latencyUsAt } from './objective.js';

/** Concurrency levels as Model Analyzer sweeps them: 1, 2, 4, … doubling, and `max` itself last. */
export function concurrencyLevels(max: number): number[] {
  const levels: number[] = [];
  for (let level = 1; level <= max; level *= 2) levels.push(level);
  if (levels.at(-1) !== max) levels.push(max);
  return levels;
}

/** A level counts as growth when it raises the best throughput so far by at least this fraction. */
export const MINIMUM_THROUGHPUT_GAIN = 0.05;
/** The sweep ends after this many levels in a row without growth. */
export const FLAT_LEVELS_TO_STOP = 2;

export type LevelOutcome = { readonly step: MeasuredStep } | { readonly failure: string };

export interface SweepOutcome {
  readonly steps: readonly MeasuredStep[];
  /** Why the sweep ended before the last level, if it did. */
  readonly stopReason: string | undefined;
  readonly failure: string | undefined;
}

/**
 * Sweeps one configuration over the concurrency levels up to `maxConcurrency`, ending early once the
 * latency budget is passed (that level is kept, outside the budget) or the throughput has stopped
 * growing: `FLAT_LEVELS_TO_STOP` levels in a row each below `1 + MINIMUM_THROUGHPUT_GAIN` times the best
 * before them, as Model Analyzer stops its concurrency sweep.
 */
export async function sweepConcurrency(
  maxConcurrency: number,
  criteria: Criteria,
  measureAt: (concurrency: number) => Promise<LevelOutcome>,
): Promise<SweepOutcome> {
  const steps: MeasuredStep[] = [];
  let bestThroughput = 0;
  let flatLevels = 0;
  for (const concurrency of concurrencyLevels(maxConcurrency)) {
    const outcome = await measureAt(concurrency);
    if ('failure' in outcome) return { steps, stopReason: undefined, failure: outcome.failure };
    const { step } = outcome;
    steps.push(step);
    if (isOverBudget(step, criteria)) {
      const latencyMs = (latencyUsAt(step, criteria.percentile) / 1000).toFixed(2);
      return { steps, stopReason: `p${criteria.percentile} ${latencyMs} ms at concurrency ${concurrency} is over the budget of ${criteria.latencyBudgetMs} ms`, failure: undefined };
    }
    flatLevels = step.throughputInferPerSec >= bestThroughput * (1 + MINIMUM_THROUGHPUT_GAIN) ? 0 : flatLevels + 1;
    bestThroughput = Math.max(bestThroughput, step.throughputInferPerSec);
    if (flatLevels >= FLAT_LEVELS_TO_STOP) return { steps, stopReason: `throughput stopped growing at concurrency ${concurrency}`, failure: undefined };
  }
  return { steps, stopReason: undefined, failure: undefined };
}
