import type { LatencySummary } from '../perf/measurement.js';

/** The latency percentiles a budget can be set on (Model Analyzer's perf_latency_p50 … perf_latency_p99). */
export type LatencyPercentile = 50 | 90 | 95 | 99;
export const LATENCY_PERCENTILES: readonly LatencyPercentile[] = [50, 90, 95, 99];

/** What the search optimizes (Model Analyzer's objectives) and the constraints a result must meet. */
export interface Criteria {
  readonly objective: 'throughput' | 'latency';
  readonly percentile: LatencyPercentile;
  /** The chosen percentile must be at or under it; undefined: no budget. */
  readonly latencyBudgetMs: number | undefined;
  /** Inferences per second at least; undefined: no minimum. */
  readonly minThroughput: number | undefined;
}

/** One concurrency level of one configuration, as `nereid perf` measured it. */
export interface MeasuredStep {
  readonly concurrency: number;
  readonly throughputInferPerSec: number;
  readonly latencyUs: LatencySummary;
  readonly requestCount: number;
  readonly isStable: boolean;
  /** The server's queue and compute time per request (statistics extension), in microseconds. */
  readonly serverQueueUs: number;
  readonly serverComputeUs: number;
}

export function latencyUsAt(step: MeasuredStep, percentile: LatencyPercentile): number {
  return step.latencyUs[`p${percentile}Us`];
}

export function isOverBudget(step: MeasuredStep, criteria: Criteria): boolean {
  return criteria.latencyBudgetMs !== undefined && latencyUsAt(step, criteria.percentile) > criteria.latencyBudgetMs * 1000;
}

export function meetsCriteria(step: MeasuredStep, criteria: Criteria): boolean {
  return !isOverBudget(step, criteria) && (criteria.minThroughput === undefined || step.throughputInferPerSec >= criteria.minThroughput);
}

/** Positive when step `a` is better than `b` on the objective (both assumed to meet the criteria). */
export function compareOnObjective(a: MeasuredStep, b: MeasuredStep, criteria: Criteria): number {
  return criteria.objective === 'throughput'
    ? a.throughputInferPerSec - b.throughputInferPerSec
    : latencyUsAt(b, criteria.percentile) - latencyUsAt(a, criteria.percentile);
}

/**
 * The step a configuration is judged by: among its steps that meet the criteria, the best on the
 * objective (the highest throughput, or the lowest latency); undefined when none meets them.
 */
export function operatingPointOf(steps: readonly MeasuredStep[], criteria: Criteria): MeasuredStep | undefined {
  let best: MeasuredStep | undefined;
  for (const step of steps) {
    if (meetsCriteria(step, criteria) && (best === undefined || compareOnObjective(step, best, criteria) > 0)) best = step;
  }
  return best;
}

/**
 * Orders two configurations by their steps: one with an operating point beats one without; two with
 * one compare on the objective; two without compare on their lowest latency, so that a search outside
 * the budget still moves towards it. Positive when `a` is better; a configuration that could not be
 * measured (no steps) is the worst.
 */
export function compareConfigs(a: readonly MeasuredStep[], b: readonly MeasuredStep[], criteria: Criteria): number {
  if (a.length === 0 || b.length === 0) return a.length - b.length;
  const pointA = operatingPointOf(a, criteria);
  const pointB = operatingPointOf(b, criteria);
  if (pointA !== undefined && pointB !== undefined) return compareOnObjective(pointA, pointB, criteria);
  if (pointA !== undefined || pointB !== undefined) return pointA !== undefined ? 1 : -1;
  const lowest = (steps: readonly MeasuredStep[]): number => Math.min(...steps.map((step) => latencyUsAt(step, criteria.percentile)));
  return lowest(b) - lowest(a);
}

/** In words: "p99 ≤ 10 ms", "p99 ≤ 10 ms and ≥ 500 infer/s", or "" without constraints. */
export function describeConstraints(criteria: Criteria): string {
  const parts: string[] = [];
  if (criteria.latencyBudgetMs !== undefined) parts.push(`p${criteria.percentile} ≤ ${criteria.latencyBudgetMs} ms`);
  if (criteria.minThroughput !== undefined) parts.push(`≥ ${criteria.minThroughput} infer/s`);
  return parts.join(' and ');
}
