import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ModelStatistics } from './model-statistics.js';

test("response_stats add up each response by its index as Triton's UpdateResponseSuccess, UpdateResponseFail and UpdateResponseEmpty do", () => {
  const statistics = new ModelStatistics('square_int32', 1);
  // Index 0 twice: a success (400 ns computing, 200 writing its output), then one sent with an error.
  statistics.recordResponse(0, { startNs: 1000, outputStartNs: 1400, endNs: 1600, isError: false });
  statistics.recordResponse(0, { startNs: 2000, outputStartNs: 2400, endNs: 2600, isError: true });
  // An empty response: computing only; a failure without outputs: no compute_output.
  statistics.recordResponse(1, { startNs: 3000, endNs: 3400, isError: false });
  statistics.recordResponse(1, { startNs: 4000, endNs: 4300, isError: true });
  // Times that run backwards are dropped, as Triton refuses them.
  statistics.recordResponse(1, { startNs: 5000, outputStartNs: 4000, endNs: 6000, isError: false });
  statistics.recordResponse(10, { startNs: 0, outputStartNs: 5, endNs: 10, isError: false });
  statistics.recordResponse(2, { startNs: 0, outputStartNs: 5, endNs: 10, isError: false });
  const none = { count: 0, ns: 0 };
  const { responseStats } = statistics.snapshot();
  assert.deepEqual(Object.keys(responseStats), ['0', '1', '2', '10']);
  assert.deepEqual(responseStats['0'], {
    computeInfer: { count: 2, ns: 800 },
    computeOutput: { count: 2, ns: 400 },
    success: { count: 1, ns: 600 },
    fail: { count: 1, ns: 600 },
    emptyResponse: none,
    cancel: none,
  });
  assert.deepEqual(responseStats['1'], {
    computeInfer: { count: 2, ns: 700 },
    computeOutput: none,
    success: none,
    fail: { count: 1, ns: 300 },
    emptyResponse: { count: 1, ns: 400 },
    cancel: none,
  });
});

test('a model whose backend reports no response has empty response_stats', () => {
  assert.deepEqual(new ModelStatistics('m', 1).snapshot().responseStats, {});
});
