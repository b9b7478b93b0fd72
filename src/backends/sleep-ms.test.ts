import assert from 'node:assert/strict';
import { afterEach, beforeEach, mock, test } from 'node:test';
import { MAX_TIMER_MS, sleepMs } from './sleep-ms.js';

beforeEach(() => mock.timers.enable({ apis: ['setTimeout'] }));
afterEach(() => mock.timers.reset());

const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

test('waits past the longest Node.js timer in steps, for the whole UINT32 range', async () => {
  let result: boolean | undefined;
  void sleepMs(0xffff_ffff, new AbortController().signal).then((value) => (result = value));
  mock.timers.tick(MAX_TIMER_MS);
  await flush();
  assert.equal(result, undefined, 'still waiting after one full timer');
  mock.timers.tick(0xffff_ffff - MAX_TIMER_MS - 1);
  await flush();
  assert.equal(result, undefined, 'still waiting 1 ms before the end');
  mock.timers.tick(1);
  await flush();
  assert.equal(result, true);
});

test('ends false as soon as the signal aborts, and at once when it already has; 0 ms ends at once', async () => {
  const controller = new AbortController();
  const waiting = sleepMs(1000, controller.signal);
  controller.abort();
  assert.equal(await waiting, false);
  assert.equal(await sleepMs(1000, controller.signal), false);
  assert.equal(await sleepMs(0, new AbortController().signal), true);
});
