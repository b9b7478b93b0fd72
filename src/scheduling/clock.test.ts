import assert from 'node:assert/strict';
import { test } from 'node:test';
import { systemClock } from './clock.js';

const wait = (delayUs: number): Promise<number> =>
  new Promise((resolve) => {
    const start = systemClock.nowUs();
    systemClock.setTimer(() => resolve(systemClock.nowUs() - start), delayUs);
  });

test('timers fire no earlier than asked, below a millisecond as above', async () => {
  for (const delayUs of [0, 150, 900, 2500]) assert.ok((await wait(delayUs)) >= delayUs, `${delayUs} µs`);
});

test('a cleared timer never fires', async () => {
  let isFired = false;
  for (const delayUs of [100, 3000]) systemClock.clearTimer(systemClock.setTimer(() => (isFired = true), delayUs));
  await wait(5000);
  assert.equal(isFired, false);
});
