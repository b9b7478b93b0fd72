import assert from 'node:assert/strict';
import { test } from 'node:test';
import { everyAborted } from './every-aborted.js';

test('aborts once every signal has aborted, with the last reason', () => {
  const first = new AbortController();
  const second = new AbortController();
  const combined = everyAborted([first.signal, second.signal])!;
  first.abort('one');
  assert.equal(combined.aborted, false);
  second.abort('two');
  assert.equal(combined.aborted, true);
  assert.equal(combined.reason, 'two');
  assert.equal(everyAborted([AbortSignal.abort('done')])!.aborted, true, 'signals aborted already count');
});

test('no signal to wait for, or a caller without one: never cancels', () => {
  assert.equal(everyAborted([]), undefined);
  assert.equal(everyAborted([new AbortController().signal, undefined]), undefined);
});
