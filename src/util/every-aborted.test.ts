import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { test } from 'node:test';
import { everyAborted } from './every-aborted.js';

test('aborts once every signal has aborted, with the last reason', () => {
  const first = new AbortController();
  const second = new AbortController();
  const combined = everyAborted([first.signal, second.signal])!.signal;
  first.abort('one');
  assert.equal(combined.aborted, false);
  second.abort('two');
  assert.equal(combined.aborted, true);
  assert.equal(combined.reason, 'two');
  assert.equal(everyAborted([AbortSignal.abort('done')])!.signal.aborted, true, 'signals aborted already count');
});

test('release leaves no listener on the source signals, which may outlive it', () => {
  const source = new AbortController();
  for (let i = 0; i < 20; i++) everyAborted([source.signal])!.release();
  assert.equal(getEventListeners(source.signal, 'abort').length, 0);
  const kept = everyAborted([source.signal])!;
  assert.equal(getEventListeners(source.signal, 'abort').length, 1);
  kept.release();
  source.abort();
  assert.equal(kept.signal.aborted, false, 'a released signal no longer follows its sources');
});

test('no signal to wait for, or a caller without one: never cancels', () => {
  assert.equal(everyAborted([]), undefined);
  assert.equal(everyAborted([new AbortController().signal, undefined]), undefined);
});
