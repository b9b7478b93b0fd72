import assert from 'node:assert/strict';
import { test } from 'node:test';
import { StepSlots } from './step-slots.js';

test('a limit of N lets N requests run; the next waits for a release, in order; 0 is no limit', async () => {
  const slots = new StepSlots(2);
  assert.equal(slots.acquire(), undefined);
  assert.equal(slots.acquire(), undefined);
  const order: string[] = [];
  const third = slots.acquire()!.then(() => order.push('third'));
  const fourth = slots.acquire()!.then(() => order.push('fourth'));
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(order, []);
  slots.release();
  await third;
  assert.deepEqual(order, ['third']);
  slots.release();
  await fourth;
  assert.deepEqual(order, ['third', 'fourth']);
  const unlimited = new StepSlots(0);
  for (let i = 0; i < 100; i++) assert.equal(unlimited.acquire(), undefined);
});
