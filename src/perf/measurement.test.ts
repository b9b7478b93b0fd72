import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ModelStatistics } from '../client/index.js';
import type { WindowSamples } from './load-generator.js';
import {
  type ServerCounters,
  type WindowMeasurement,
  mergeWindows,
  percentileOf,
  serverCountersOf,
  serverTimesOf,
  stabilityOf,
  subtractCounters,
  summarizeLatencies,
  throughputOf,
} from './measurement.js';

const ZERO: ServerCounters = {
  successCount: 0,
  failCount: 0,
  inferenceCount: 0,
  executionCount: 0,
  queueCount: 0,
  queueNs: 0,
  computeInputCount: 0,
  computeInputNs: 0,
  computeInferCount: 0,
  computeInferNs: 0,
  computeOutputCount: 0,
  computeOutputNs: 0,
};

function window(requests: number, durationMs: number, latencyUs: number, server: Partial<ServerCounters> = {}): WindowMeasurement {
  const samples: WindowSamples = {
    durationMs,
    sendSpanMs: durationMs,
    latenciesUs: new Array<number>(requests).fill(latencyUs),
    sentCount: requests,
    failedCount: 0,
    firstError: undefined,
    averageSendLagUs: undefined,
  };
  return { samples, batchSize: 2, server: { ...ZERO, ...server } };
}

describe('measurement', () => {
  test('nearest-rank percentiles', () => {
    const sorted = Float64Array.from({ length: 100 }, (_, i) => i + 1);
    assert.equal(percentileOf(sorted, 50), 50);
    assert.equal(percentileOf(sorted, 99), 99);
    assert.equal(percentileOf(Float64Array.from([5]), 99), 5);
    assert.equal(percentileOf(new Float64Array(0), 50), 0);
    assert.deepEqual(summarizeLatencies([30, 10, 20, 40]), { averageUs: 25, minUs: 10, maxUs: 40, p50Us: 20, p90Us: 40, p95Us: 40, p99Us: 40 });
  });

  test('throughput counts the batch size', () => {
    assert.equal(throughputOf(window(100, 1000, 1).samples, 2), 200);
    assert.equal(throughputOf(window(0, 0, 1).samples, 2), 0);
  });

  test('server counters: summed over versions, subtracted, averaged per request', () => {
    const stats = (success: number, queueNs: number): ModelStatistics => ({
      name: 'm',
      version: '1',
      lastInference: 0,
      inferenceCount: success * 2,
      executionCount: success,
      inferenceStats: {
        success: { count: success, ns: 0 },
        fail: { count: 0, ns: 0 },
        queue: { count: success, ns: queueNs },
        computeInput: { count: success, ns: 2000 * success },
        computeInfer: { count: success, ns: 5000 * success },
        computeOutput: { count: success, ns: 1000 * success },
        cacheHit: { count: 0, ns: 0 },
        cacheMiss: { count: 0, ns: 0 },
      },
      batchStats: [],
      responseStats: {},
    });
    const before = serverCountersOf([stats(1, 1000)]);
    const after = serverCountersOf([stats(3, 5000), stats(2, 4000)]);
    const delta = subtractCounters(after, before);
    assert.equal(delta.successCount, 4);
    assert.equal(delta.inferenceCount, 8);
    assert.equal(delta.queueNs, 8000);
    assert.deepEqual(serverTimesOf(delta), { queueUs: 2, computeInputUs: 2, computeInferUs: 5, computeOutputUs: 1 });
    assert.deepEqual(serverTimesOf(ZERO), { queueUs: 0, computeInputUs: 0, computeInferUs: 0, computeOutputUs: 0 });
  });

  test("stability: perf_analyzer's max/min rule over the last three windows", () => {
    const steady = [window(100, 1000, 500), window(105, 1000, 520), window(103, 1000, 510)];
    assert.deepEqual(stabilityOf(steady.slice(0, 2), 10, undefined).isStable, false, 'three windows needed');
    const stable = stabilityOf(steady, 10, undefined);
    assert.equal(stable.isStable, true);
    assert.equal(stable.throughputSpreadPercent.toFixed(3), '5.000');
    assert.equal(stable.latencySpreadPercent.toFixed(3), '4.000');
    assert.equal(stabilityOf(steady, 4.5, undefined).isStable, false, 'latency spread 4 % passes, throughput 5 % does not');
    const noisyFirst = [window(10, 1000, 5000), ...steady];
    assert.equal(stabilityOf(noisyFirst, 10, undefined).isStable, true, 'only the last three count');
    const empty = stabilityOf([window(0, 1000, 1), ...steady.slice(1)], 10, undefined);
    assert.equal(empty.isStable, false);
    assert.equal(empty.throughputSpreadPercent, Number.POSITIVE_INFINITY);
  });

  test('stability on a percentile judges that percentile', () => {
    const tail = (p99: number): WindowMeasurement => {
      const w = window(100, 1000, 100);
      return { ...w, samples: { ...w.samples, latenciesUs: [...new Array<number>(98).fill(100), p99, p99] } };
    };
    assert.equal(stabilityOf([tail(100), tail(1000), tail(100)], 20, undefined).isStable, true, 'the averages differ by 18 %');
    assert.equal(stabilityOf([tail(100), tail(1000), tail(100)], 20, 99).isStable, false, 'the p99s by 900 %');
  });

  test('merging adds requests, durations and server deltas', () => {
    const merged = mergeWindows([window(10, 100, 5, { successCount: 10, queueNs: 7 }), window(20, 300, 7, { successCount: 20, queueNs: 3 })]);
    assert.equal(merged.samples.latenciesUs.length, 30);
    assert.equal(merged.samples.durationMs, 400);
    assert.equal(merged.samples.sentCount, 30);
    assert.equal(merged.server.successCount, 30);
    assert.equal(merged.server.queueNs, 10);
    assert.equal(throughputOf(merged.samples, merged.batchSize), 150);
  });
});
