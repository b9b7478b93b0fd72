import type { ModelStatistics } from '../../protocol/statistics.js';
import type { LatencyQuantilesUs, LatencySplitUs, ModelTraffic } from './dashboard-frame.js';

/** What the metrics add to one model version's statistics, when they are on. */
export interface MetricsExtras {
  readonly quantilesUs?: LatencyQuantilesUs;
  readonly failuresByReason?: Readonly<Record<string, number>>;
}

const meanUs = (ns: number, count: number): number => (count > 0 ? ns / count / 1000 : 0);

/**
 * One model version's traffic between two snapshots of its statistics, `intervalMs` apart. Without a
 * previous snapshot (the first frame, or a version just loaded) the rates are 0. A counter that went
 * down (the version was reloaded) starts again from 0.
 */
export function modelTraffic(previous: ModelStatistics | undefined, current: ModelStatistics, intervalMs: number, extras: MetricsExtras = {}): ModelTraffic {
  const now = current.inferenceStats;
  const before = previous !== undefined && previous.executionCount <= current.executionCount ? previous : undefined;
  const delta = (read: (stats: ModelStatistics) => number): number => (before === undefined ? 0 : read(current) - read(before));
  const perS = (count: number): number => (intervalMs > 0 ? (count * 1000) / intervalMs : 0);
  const requests = delta((s) => s.inferenceStats.success.count + s.inferenceStats.fail.count);
  const successes = delta((s) => s.inferenceStats.success.count);
  const queued = delta((s) => s.inferenceStats.queue.count);
  const executionNs = (stats: ModelStatistics): number =>
    stats.batchStats.reduce((sum, batch) => sum + batch.computeInput.ns + batch.computeInfer.ns + batch.computeOutput.ns, 0);
  const split: LatencySplitUs | undefined =
    successes > 0 && queued > 0
      ? {
          request: meanUs(delta((s) => s.inferenceStats.success.ns), successes),
          queue: meanUs(delta((s) => s.inferenceStats.queue.ns), queued),
          computeInput: meanUs(delta((s) => s.inferenceStats.computeInput.ns), delta((s) => s.inferenceStats.computeInput.count)),
          computeInfer: meanUs(delta((s) => s.inferenceStats.computeInfer.ns), delta((s) => s.inferenceStats.computeInfer.count)),
          computeOutput: meanUs(delta((s) => s.inferenceStats.computeOutput.ns), delta((s) => s.inferenceStats.computeOutput.count)),
        }
      : undefined;
  return {
    name: current.name,
    version: current.version,
    successCount: now.success.count,
    failCount: now.fail.count,
    inferenceCount: current.inferenceCount,
    executionCount: current.executionCount,
    requestsPerS: perS(requests),
    inferencesPerS: perS(delta((s) => s.inferenceCount)),
    executionsPerS: perS(delta((s) => s.executionCount)),
    meanUs: split,
    quantilesUs: extras.quantilesUs,
    failuresByReason: extras.failuresByReason,
    batchExecutions: current.batchStats.map((batch) => ({ batchSize: batch.batchSize, count: batch.computeInfer.count })),
    busyInstances: intervalMs > 0 ? delta(executionNs) / 1e6 / intervalMs : 0,
  };
}
