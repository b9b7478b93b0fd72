import assert from 'node:assert/strict';
import { test } from 'node:test';
import { abortable } from './abortable.js';
import { deferred } from './deferred.js';

test('abortable settles as the promise does while the signal has not aborted', async () => {
  const controller = new AbortController();
  assert.equal(await abortable(Promise.resolve(7), controller.signal), 7);
  await assert.rejects(abortable(Promise.reject(new Error('no')), controller.signal), /^Error: no$/);
  assert.equal(await abortable(Promise.resolve(8), undefined), 8);
});

test('abortable rejects with the reason once the signal aborts, before the promise settles', async () => {
  const controller = new AbortController();
  const never = deferred<number>();
  const raced = abortable(never.promise, controller.signal);
  controller.abort(new Error('too slow'));
  await assert.rejects(raced, /^Error: too slow$/);
  await assert.rejects(abortable(Promise.resolve(1), controller.signal), /^Error: too slow$/);
});
