import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FakeClock } from '../../test/helpers/fake-clock.js';
import { InflightRequests } from './inflight-requests.js';

const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** The close's outcome so far: undefined while it still waits. */
function watch(closing: Promise<boolean>): { readonly outcome: boolean | undefined } {
  const watched: { outcome: boolean | undefined } = { outcome: undefined };
  void closing.then((isDrained) => (watched.outcome = isDrained));
  return watched;
}

test('counts what is accepted and not yet settled', () => {
  const requests = new InflightRequests('m', new FakeClock());
  requests.accept();
  requests.accept();
  assert.equal(requests.count, 2);
  requests.settle();
  assert.equal(requests.count, 1);
});

test('with nothing in flight, close is drained at once, and later requests are refused', async () => {
  const requests = new InflightRequests('m', new FakeClock());
  assert.equal(await requests.close(), true);
  assert.throws(() => requests.accept(), { status: 'UNAVAILABLE', message: "model 'm' is unloading and takes no new requests" });
  assert.equal(requests.count, 0);
});

test('close waits for the last accepted request to settle; a second close waits for the same drain', async () => {
  const requests = new InflightRequests('m', new FakeClock());
  requests.accept();
  requests.accept();
  const first = watch(requests.close());
  const second = watch(requests.close());
  assert.throws(() => requests.accept(), { message: "model 'm' is unloading and takes no new requests" });
  requests.settle();
  await flush();
  assert.deepEqual([first.outcome, second.outcome], [undefined, undefined]);
  requests.settle();
  await flush();
  assert.deepEqual([first.outcome, second.outcome], [true, true]);
});

test('a forced close waits for nothing and says requests are left', async () => {
  const requests = new InflightRequests('m', new FakeClock());
  requests.accept();
  assert.equal(await requests.close({ isForced: true }), false);
  assert.equal(requests.count, 1);
  assert.throws(() => requests.accept(), { message: "model 'm' is unloading and takes no new requests" });
});

test('drainTimeoutMs: the wait ends at the timeout with requests left', async () => {
  const clock = new FakeClock();
  const requests = new InflightRequests('m', clock);
  requests.accept();
  const closing = watch(requests.close({ drainTimeoutMs: 50 }));
  clock.advance(49_999);
  await flush();
  assert.equal(closing.outcome, undefined);
  clock.advance(1);
  await flush();
  assert.equal(closing.outcome, false);
  assert.equal(requests.count, 1);
});

test('drainTimeoutMs: a drain before the timeout ends the wait and clears the timer', async () => {
  const clock = new FakeClock();
  const requests = new InflightRequests('m', clock);
  requests.accept();
  const closing = watch(requests.close({ drainTimeoutMs: 50 }));
  assert.equal(clock.timerCount, 1);
  clock.advance(10_000);
  requests.settle();
  await flush();
  assert.equal(closing.outcome, true);
  assert.equal(clock.timerCount, 0);
});
