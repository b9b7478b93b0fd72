import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { InferRequest } from '../kernel/infer-request.js';
import { watchCancel } from './cancellation.js';

const requestOn = (signal?: AbortSignal): InferRequest => ({ modelName: 'm', id: '', inputs: [], parameters: {}, ...(signal !== undefined ? { signal } : {}) });

test('every request watching a shared signal is told once, in the order it began watching; one that stopped is not', () => {
  const controller = new AbortController();
  const calls: string[] = [];
  watchCancel(requestOn(controller.signal), () => calls.push('a'));
  const stopB = watchCancel(requestOn(controller.signal), () => calls.push('b'));
  watchCancel(requestOn(controller.signal), () => calls.push('c'));
  stopB();
  controller.abort();
  controller.abort();
  assert.deepEqual(calls, ['a', 'c']);
  watchCancel(requestOn(controller.signal), () => calls.push('late'));
  assert.deepEqual(calls, ['a', 'c', 'late'], 'an aborted signal calls at once');
});

test('a callback that stops another one before it runs keeps it from running; without a signal nothing is called', () => {
  const controller = new AbortController();
  const calls: string[] = [];
  let stopSecond = (): void => {};
  watchCancel(requestOn(controller.signal), () => {
    calls.push('first');
    stopSecond();
  });
  stopSecond = watchCancel(requestOn(controller.signal), () => calls.push('second'));
  controller.abort();
  assert.deepEqual(calls, ['first']);
  const stop = watchCancel(requestOn(), () => calls.push('never'));
  stop();
  assert.deepEqual(calls, ['first']);
});

test('signals are watched apart', () => {
  const one = new AbortController();
  const other = new AbortController();
  const calls: string[] = [];
  watchCancel(requestOn(one.signal), () => calls.push('one'));
  watchCancel(requestOn(other.signal), () => calls.push('other'));
  other.abort();
  assert.deepEqual(calls, ['other']);
  one.abort();
  assert.deepEqual(calls, ['other', 'one']);
});
