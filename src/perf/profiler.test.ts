import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ServerCounters } from './measurement.js';
import { type ProfileSettings, profile, stepLoads } from './profiler.js';
import { createRandom } from './random.js';

/** A fake server whose statistics count each request it answered, as the statistics extension does. */
function fakeServer(options: { failFrom?: number; delayMs?: number } = {}) {
  let success = 0;
  let sent = 0;
  return {
    send: async (): Promise<void> => {
      sent++;
      const isFailing = options.failFrom !== undefined && sent >= options.failFrom;
      await new Promise((resolve) => (options.delayMs === undefined ? setImmediate(resolve) : setTimeout(resolve, options.delayMs)));
      if (isFailing) throw new Error('model is unloading');
      success++;
    },
    readServerCounters: async (): Promise<ServerCounters> => ({
      successCount: success,
      failCount: 0,
      inferenceCount: success,
      executionCount: success,
      queueCount: success,
      queueNs: success * 1000,
      computeInputCount: success,
      computeInputNs: success * 2000,
      computeInferCount: success,
      computeInferNs: success * 3000,
      computeOutputCount: success,
      computeOutputNs: success * 4000,
    }),
  };
}

const settings = (overrides: Partial<ProfileSettings> = {}): ProfileSettings => ({
  range: { mode: 'concurrency', start: 1, end: 3, step: 2 },
  batchSize: 1,
  measurementIntervalMs: 15,
  stabilityPercentage: 1e9,
  maxTrials: 5,
  percentile: undefined,
  latencyThresholdMs: 0,
  ...overrides,
});

describe('the profiler', () => {
  test('the loads of a range', () => {
    assert.deepEqual([...stepLoads({ mode: 'concurrency', start: 1, end: 7, step: 3 })], [
      { mode: 'concurrency', concurrency: 1 },
      { mode: 'concurrency', concurrency: 4 },
      { mode: 'concurrency', concurrency: 7 },
    ]);
    assert.deepEqual(
      [...stepLoads({ mode: 'request-rate', start: 0.1, end: 0.3, step: 0.1, distribution: 'constant' })].map((load) => (load.mode === 'request-rate' ? load.requestRate : 0)),
      [0.1, 0.2, 0.3],
    );
  });

  test('each step runs windows until three agree, and reports those three with exact server deltas', async () => {
    const server = fakeServer();
    const outcome = await profile(settings(), { ...server, random: createRandom(1) });
    assert.equal(outcome.failure, undefined);
    assert.equal(outcome.stopReason, undefined);
    assert.deepEqual(
      outcome.steps.map((step) => [step.load, step.isStable, step.windows.length]),
      [
        [{ mode: 'concurrency', concurrency: 1 }, true, 3],
        [{ mode: 'concurrency', concurrency: 3 }, true, 3],
      ],
    );
    for (const step of outcome.steps) {
      for (const window of step.windows) assert.equal(window.server.successCount, window.requestCount);
      assert.equal(step.requestCount, step.server.successCount);
      assert.deepEqual(step.serverTimesUs, { queueUs: 1, computeInputUs: 2, computeInferUs: 3, computeOutputUs: 4 });
    }
  });

  test('without agreement it stops at --max-trials and says the step is not stable', async () => {
    const outcome = await profile(settings({ maxTrials: 2 }), { ...fakeServer(), random: createRandom(1) });
    assert.deepEqual(
      outcome.steps.map((step) => [step.isStable, step.windows.length]),
      [
        [false, 2],
        [false, 2],
      ],
    );
  });

  test('failed requests end the sweep after their window, with the first error', async () => {
    const outcome = await profile(settings(), { ...fakeServer({ failFrom: 1 }), random: createRandom(1) });
    assert.equal(outcome.steps.length, 1);
    assert.equal(outcome.steps[0]!.windows.length, 1);
    assert.match(outcome.failure!, /^(\d+) of \1 requests failed at concurrency 1; the first: model is unloading$/);
  });

  test('the latency threshold ends an open-ended sweep', async () => {
    const outcome = await profile(settings({ range: { mode: 'concurrency', start: 1, end: 0, step: 1 }, latencyThresholdMs: 0.001 }), {
      ...fakeServer({ delayMs: 1 }),
      random: createRandom(1),
    });
    assert.equal(outcome.steps.length, 1);
    assert.match(outcome.stopReason!, /^average latency [\d.]+ ms at concurrency 1 is over the threshold of 0\.001 ms$/);
  });

  test('hooks see every window and step', async () => {
    const seen: string[] = [];
    await profile(settings({ range: { mode: 'request-rate', start: 500, end: 500, step: 1, distribution: 'poisson' }, maxTrials: 3 }), {
      ...fakeServer(),
      random: createRandom(3),
      hooks: {
        onWindowStart: (load, n) => seen.push(`start ${load.mode} ${n}`),
        onWindowEnd: (_load, n, window) => seen.push(`end ${n} ${window.requestCount === window.server.successCount}`),
        onStepEnd: (result) => seen.push(`step ${result.windows.length}`),
      },
    });
    assert.deepEqual(seen, ['start request-rate 1', 'end 1 true', 'start request-rate 2', 'end 2 true', 'start request-rate 3', 'end 3 true', 'step 3']);
  });
});
