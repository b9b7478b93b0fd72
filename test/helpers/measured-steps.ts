import type { MeasuredStep } from '../../src/analyze/objective.js';

/** A measured step with the given throughput and p99 (the other percentiles below it). */
export function stepAt(concurrency: number, throughput: number, p99Ms: number): MeasuredStep {
  const us = p99Ms * 1000;
  return {
    concurrency,
    throughputInferPerSec: throughput,
    latencyUs: { averageUs: us / 2, minUs: us / 4, maxUs: us, p50Us: us / 2, p90Us: us * 0.8, p95Us: us * 0.9, p99Us: us },
    requestCount: 100,
    isStable: true,
    serverQueueUs: 0,
    serverComputeUs: 0,
  };
}
