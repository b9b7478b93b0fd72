import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ELEMENTS_PER_SLICE, forEachSliced } from './yield-slices.js';

test('forEachSliced visits every index in order and lets timers run between slices', async () => {
  const visited: number[] = [];
  let timersRun = 0;
  const timer = setInterval(() => timersRun++, 0);
  let timersSeenAtEnd = -1;
  await forEachSliced(ELEMENTS_PER_SLICE * 40, (index) => {
    visited.push(index);
    if (index === ELEMENTS_PER_SLICE * 40 - 1) timersSeenAtEnd = timersRun;
  });
  clearInterval(timer);
  assert.equal(visited.length, ELEMENTS_PER_SLICE * 40);
  assert.ok(visited.every((value, index) => value === index));
  assert.ok(timersSeenAtEnd > 0, 'a timer ran while the loop was going');
  await forEachSliced(0, () => assert.fail('no index below 0'));
});
