import assert from 'node:assert/strict';
import { test } from 'node:test';
import { untilCheckPhase } from './check-phase.js';

test('the waits of one turn end together in the check phase, after the turn’s microtasks and after I/O callbacks of the turn', async () => {
  const order: string[] = [];
  const first = untilCheckPhase().then(() => order.push('first'));
  const second = untilCheckPhase().then(() => order.push('second'));
  queueMicrotask(() => order.push('microtask'));
  await Promise.all([first, second]);
  assert.deepEqual(order, ['microtask', 'first', 'second']);
  // A later wait is a new turn's.
  await untilCheckPhase();
});
