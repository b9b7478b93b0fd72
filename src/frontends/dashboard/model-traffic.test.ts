import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Duration, ModelStatistics } from '../../protocol/statistics.js';
import { modelTraffic } from './model-traffic.js';

const d = (count: number, ns: number): Duration => ({ count, ns });

/** Statistics after `requests` successful requests of batch size 1 run in executions of `batchSize`, each part taking the given ns. */
function statistics(requests: number, batchSize: number, ns: { queue: number; input: number; infer: number; output: number }): ModelStatistics {
  const executions = requests / batchSize;
  return {
    name: 'simple',
    version: '1',
    lastInference: 0,
    inferenceCount: requests,
    executionCount: executions,
    inferenceStats: {
      success: d(requests, requests * (ns.queue + ns.input + ns.infer + ns.output)),
      fail: d(0, 0),
      queue: d(requests, requests * ns.queue),
      computeInput: d(requests, requests * ns.input),
      computeInfer: d(requests, requests * ns.infer),
      computeOutput: d(requests, requests * ns.output),
      cacheHit: d(0, 0),
      cacheMiss: d(0, 0),
    },
    batchStats: executions > 0 ? [{ batchSize, computeInput: d(executions, executions * ns.input), computeInfer: d(executions, executions * ns.infer), computeOutput: d(executions, executions * ns.output) }] : [],
    responseStats: {},
  };
}

const NS = { queue: 4000, input: 1000, infer: 10_000, output: 2000 };

test('rates and the latency split are over the interval; counts and batch executions are since load', () => {
  const before = statistics(40, 4, NS);
  const after = statistics(240, 4, { queue: 4000, input: 1000, infer: 10_000, output: 2000 });
  const traffic = modelTraffic(before, after, 500);
  assert.equal(traffic.requestsPerS, 400);
  assert.equal(traffic.inferencesPerS, 400);
  assert.equal(traffic.executionsPerS, 100);
  assert.deepEqual(traffic.meanUs, { request: 17, queue: 4, computeInput: 1, computeInfer: 10, computeOutput: 2 });
  assert.equal(traffic.successCount, 240);
  assert.equal(traffic.inferenceCount, 240);
  assert.equal(traffic.executionCount, 60);
  assert.deepEqual(traffic.batchExecutions, [{ batchSize: 4, count: 60 }]);
  // 50 executions of 13 µs in 500 ms: 0.0013 instances busy.
  assert.ok(Math.abs(traffic.busyInstances - 0.0013) < 1e-12);
  assert.equal(traffic.quantilesUs, undefined);
});

test('the first frame, an idle interval and a reloaded version have no rates', () => {
  const now = statistics(40, 4, NS);
  const first = modelTraffic(undefined, now, 0);
  assert.deepEqual([first.requestsPerS, first.inferencesPerS, first.busyInstances, first.meanUs], [0, 0, 0, undefined]);
  assert.equal(first.successCount, 40);
  const idle = modelTraffic(now, now, 1000);
  assert.deepEqual([idle.requestsPerS, idle.meanUs], [0, undefined]);
  const reloaded = modelTraffic(now, statistics(8, 4, NS), 1000);
  assert.deepEqual([reloaded.requestsPerS, reloaded.successCount], [0, 8]);
});

test("the metrics' quantiles and failure reasons pass through", () => {
  const traffic = modelTraffic(undefined, statistics(0, 1, NS), 0, { quantilesUs: { p50: 10, p90: 20, p99: undefined }, failuresByReason: { BACKEND: 2 } });
  assert.deepEqual(traffic.quantilesUs, { p50: 10, p90: 20, p99: undefined });
  assert.deepEqual(traffic.failuresByReason, { BACKEND: 2 });
  assert.deepEqual(traffic.batchExecutions, []);
});
