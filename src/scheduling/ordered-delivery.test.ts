import assert from 'node:assert/strict';
import { test } from 'node:test';
import { OrderedDelivery } from './ordered-delivery.js';

test('results are delivered in the order their requests were numbered, whatever order they finish in', () => {
  const delivery = new OrderedDelivery();
  const numbers = [delivery.next(), delivery.next(), delivery.next(), delivery.next()];
  assert.deepEqual(numbers, [0, 1, 2, 3]);
  const delivered: number[] = [];
  delivery.deliver(2, () => delivered.push(2));
  delivery.deliver(1, () => delivered.push(1));
  assert.equal(delivered.length, 0, 'nothing before the first is done');
  delivery.deliver(0, () => delivered.push(0));
  assert.deepEqual(delivered, [0, 1, 2]);
  delivery.deliver(3, () => delivered.push(3));
  assert.deepEqual(delivered, [0, 1, 2, 3]);
});
