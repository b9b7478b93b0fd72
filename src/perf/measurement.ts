import type { ModelStatistics } from '../client/index.js';
import type { WindowSamples } from './load-generator.js';

/** Client-side latency of a set of requests, in microseconds. */
export interface LatencySummary {
  readonly averageUs: number;
  readonly minUs: number;
  readonly maxUs: number;
  readonly p50Us: number;
  readonly p90Us: number;
  readonly p95Us: number;
  readonly p99Us: number;
}

/** The nearest-rank percentile of sorted values: the smallest value with at least p % of them at or below it. */
export function percentileOf(sorted: ArrayLike<number>, percentile: number): number {
  if (sorted.length === 0) return 0;
  const rank = Math.ceil((percentile / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

export function summarizeLatencies(latenciesUs: readonly number[]): LatencySummary {
  const sorted = Float64Array.from(latenciesUs).sort();
  let total = 0;
  for (const value of sorted) total += value;
  return {
    averageUs: sorted.length > 0 ? total / sorted.length : 0,
    minUs: sorted.length > 0 ? sorted[0]! : 0,
    maxUs: sorted.length > 0 ? sorted[sorted.length - 1]! : 0,
    p50Us: percentileOf(sorted, 50),
    p90Us: percentileOf(sorted, 90),
    p95Us: percentileOf(sorted, 95),
    p99Us: percentileOf(sorted, 99),
  };
}

/** The statistics extension's counters for one model, summed over the versions measured. */
export interface ServerCounters {
  readonly successCount: number;
  readonly failCount: number;
  readonly inferenceCount: number;
  readonly executionCount: number;
  readonly queueCount: number;
  readonly queueNs: number;
  readonly computeInputCount: number;
  readonly computeInputNs: number;
  readonly computeInferCount: number;
  readonly computeInferNs: number;
  readonly computeOutputCount: number;
  readonly computeOutputNs: number;
}

export function serverCountersOf(statistics: readonly ModelStatistics[]): ServerCounters {
  const sum = (pick: (stats: ModelStatistics) => number): number => statistics.reduce((total, stats) => total + pick(stats), 0);
  return {
    successCount: sum((s) => s.inferenceStats.success.count),
    failCount: sum((s) => s.inferenceStats.fail.count),
    inferenceCount: sum((s) => s.inferenceCount),
    executionCount: sum((s) => s.executionCount),
    queueCount: sum((s) => s.inferenceStats.queue.count),
    queueNs: sum((s) => s.inferenceStats.queue.ns),
    computeInputCount: sum((s) => s.inferenceStats.computeInput.count),
    computeInputNs: sum((s) => s.inferenceStats.computeInput.ns),
    computeInferCount: sum((s) => s.inferenceStats.computeInfer.count),
    computeInferNs: sum((s) => s.inferenceStats.computeInfer.ns),
    computeOutputCount: sum((s) => s.inferenceStats.computeOutput.count),
    computeOutputNs: sum((s) => s.inferenceStats.computeOutput.ns),
  };
}

export function subtractCounters(after: ServerCounters, before: ServerCounters): ServerCounters {
  return Object.fromEntries(Object.entries(after).map(([key, value]) => [key, value - before[key as keyof ServerCounters]])) as unknown as ServerCounters;
}

export function addCounters(a: ServerCounters, b: ServerCounters): ServerCounters {
  return Object.fromEntries(Object.entries(a).map(([key, value]) => [key, value + b[key as keyof ServerCounters]])) as unknown as ServerCounters;
}

/** The server's split of a request's time, averaged per request over a window, in microseconds (perf_analyzer's "Server Queue", "Server Compute Input", ...). */
export interface ServerTimes {
  readonly queueUs: number;
  readonly computeInputUs: number;
  readonly computeInferUs: number;
  readonly computeOutputUs: number;
}

export function serverTimesOf(delta: ServerCounters): ServerTimes {
  const average = (ns: number, count: number): number => (count > 0 ? ns / count / 1000 : 0);
  return {
    queueUs: average(delta.queueNs, delta.queueCount),
    computeInputUs: average(delta.computeInputNs, delta.computeInputCount),
    computeInferUs: average(delta.computeInferNs, delta.computeInferCount),
    computeOutputUs: average(delta.computeOutputNs, delta.computeOutputCount),
  };
}

/** One measurement window: the client's samples and the server's statistics delta over the same requests. */
export interface WindowMeasurement {
  readonly samples: WindowSamples;
  readonly batchSize: number;
  readonly server: ServerCounters;
}

/** Inferences per second: successful requests × batch size over the window's duration. */
export function throughputOf(samples: Pick<WindowSamples, 'latenciesUs' | 'durationMs'>, batchSize: number): number {
  return samples.durationMs > 0 ? (samples.latenciesUs.length * batchSize * 1000) / samples.durationMs : 0;
}

/** The latency that stability and the latency threshold judge: the chosen percentile, or the average. */
export function judgedLatencyUs(latenciesUs: readonly number[], percentile: number | undefined): number {
  if (percentile !== undefined) return percentileOf(Float64Array.from(latenciesUs).sort(), percentile);
  let total = 0;
  for (const value of latenciesUs) total += value;
  return latenciesUs.length > 0 ? total / latenciesUs.length : 0;
}

export interface Stability {
  readonly isStable: boolean;
  /** (max / min − 1) over the windows judged, in percent; Infinity when a window had no successful request. */
  readonly throughputSpreadPercent: number;
  readonly latencySpreadPercent: number;
}

/** How many recent windows must agree (perf_analyzer's stability window). */
export const STABILITY_WINDOW_COUNT = 3;

/**
 * perf_analyzer's rule (docs/cli.md, --stability-percentage): stable once, over the last three
 * windows, max / min of the throughput and max / min of the latency are both within 1 + pct / 100.
 */
export function stabilityOf(windows: readonly WindowMeasurement[], stabilityPercentage: number, percentile: number | undefined): Stability {
  const recent = windows.slice(-STABILITY_WINDOW_COUNT);
  const spread = (values: number[]): number => {
    const min = Math.min(...values);
    return min > 0 ? (Math.max(...values) / min - 1) * 100 : Number.POSITIVE_INFINITY;
  };
  const throughputSpreadPercent = spread(recent.map((w) => throughputOf(w.samples, w.batchSize)));
  const latencySpreadPercent = spread(recent.map((w) => judgedLatencyUs(w.samples.latenciesUs, percentile)));
  const isStable =
    recent.length === STABILITY_WINDOW_COUNT && throughputSpreadPercent <= stabilityPercentage && latencySpreadPercent <= stabilityPercentage;
  return { isStable, throughputSpreadPercent, latencySpreadPercent };
}

/** Several windows read as one: their requests, durations and server deltas added up. */
export function mergeWindows(windows: readonly WindowMeasurement[]): WindowMeasurement {
  const first = windows[0]!;
  let lagTotal = 0;
  let lagCount = 0;
  for (const window of windows) {
    if (window.samples.averageSendLagUs !== undefined) {
      lagTotal += window.samples.averageSendLagUs * window.samples.sentCount;
      lagCount += window.samples.sentCount;
    }
  }
  return {
    batchSize: first.batchSize,
    samples: {
      durationMs: windows.reduce((total, w) => total + w.samples.durationMs, 0),
      sendSpanMs: windows.reduce((total, w) => total + w.samples.sendSpanMs, 0),
      latenciesUs: windows.flatMap((w) => w.samples.latenciesUs),
      sentCount: windows.reduce((total, w) => total + w.samples.sentCount, 0),
      failedCount: windows.reduce((total, w) => total + w.samples.failedCount, 0),
      firstError: windows.find((w) => w.samples.firstError !== undefined)?.samples.firstError,
      averageSendLagUs: first.samples.averageSendLagUs === undefined ? undefined : lagCount > 0 ? lagTotal / lagCount : 0,
    },
    server: windows.slice(1).reduce((total, w) => addCounters(total, w.server), first.server),
  };
}
