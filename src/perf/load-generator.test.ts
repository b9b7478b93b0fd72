import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type LiveCounts, runConcurrencyWindow, runRequestRateWindow } from './load-generator.js';
import { createRandom, exponentialGapMs } from './random.js';

/** A fake server: answers after a turn of the event loop and tracks how many requests are in flight. */
function fakeSend(failEvery = 0) {
  const state = { inFlight: 0, maxInFlight: 0, sent: 0 };
  const send = async (): Promise<void> => {
    const number = ++state.sent;
    state.inFlight++;
    state.maxInFlight = Math.max(state.maxInFlight, state.inFlight);
    await new Promise((resolve) => setImmediate(resolve));
    state.inFlight--;
    if (failEvery > 0 && number % failEvery === 0) throw new Error(`request ${number} failed`);
  };
  return { send, state };
}

describe('load generation', () => {
  test('closed loop: exactly `concurrency` in flight, and the window drains', async () => {
    const { send, state } = fakeSend();
    const live: LiveCounts = { completed: 0, failed: 0 };
    const samples = await runConcurrencyWindow({ send, concurrency: 4, durationMs: 30, live });
    assert.equal(state.maxInFlight, 4);
    assert.equal(state.inFlight, 0, 'every request sent was answered');
    assert.equal(samples.sentCount, state.sent);
    assert.equal(samples.latenciesUs.length, state.sent);
    assert.equal(live.completed, state.sent);
    assert.equal(samples.failedCount, 0);
    assert.equal(samples.averageSendLagUs, undefined);
  });

  test('failures are counted with the first message', async () => {
    const { send, state } = fakeSend(3);
    const samples = await runConcurrencyWindow({ send, concurrency: 2, durationMs: 20, live: { completed: 0, failed: 0 } });
    assert.equal(samples.failedCount, Math.floor(state.sent / 3));
    assert.equal(samples.latenciesUs.length + samples.failedCount, state.sent);
    assert.equal(samples.firstError, 'request 3 failed');
  });

  test('open loop, constant gaps: one request per scheduled time in the window, however late the timer', async () => {
    const { send, state } = fakeSend();
    const samples = await runRequestRateWindow({
      send,
      rate: { ratePerSec: 200, distribution: 'constant', random: createRandom(1) },
      durationMs: 100,
      live: { completed: 0, failed: 0 },
    });
    assert.equal(samples.sentCount, 20, 'due at 0, 5, …, 95 ms');
    assert.equal(state.inFlight, 0);
    assert.ok(samples.durationMs >= 100, 'the window is at least its interval');
    assert.ok(samples.averageSendLagUs! >= 0);
  });

  test('open loop, Poisson: the arrivals of the seeded process that fall in the window', async () => {
    let expected = 0;
    const random = createRandom(42);
    for (let dueMs = exponentialGapMs(random, 300); dueMs < 100; dueMs += exponentialGapMs(random, 300)) expected++;
    const { send } = fakeSend();
    const samples = await runRequestRateWindow({
      send,
      rate: { ratePerSec: 300, distribution: 'poisson', random: createRandom(42) },
      durationMs: 100,
      live: { completed: 0, failed: 0 },
    });
    assert.equal(samples.sentCount, expected);
  });

  test('the seeded generator repeats and stays in [0, 1)', () => {
    const a = createRandom(9);
    const b = createRandom(9);
    const values = Array.from({ length: 1000 }, () => a());
    assert.deepEqual(values, Array.from({ length: 1000 }, () => b()));
    assert.ok(values.every((value) => value >= 0 && value < 1));
    const mean = values.reduce((sum, value) => sum + value, 0) / values.length;
    assert.ok(mean > 0.45 && mean < 0.55);
  });
});
