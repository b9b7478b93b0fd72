import assert from 'node:assert/strict';
import { test } from 'node:test';
import { paretoFront } from './pareto-front.js';

test('the front keeps the points no other beats on both throughput and latency, from the lowest latency up', () => {
  const points = [
    { throughput: 100, latencyUs: 1000 },
    { throughput: 300, latencyUs: 3000 },
    { throughput: 200, latencyUs: 4000 }, // beaten by 300 @ 3000
    { throughput: 400, latencyUs: 9000 },
    { throughput: 90, latencyUs: 1500 }, // beaten by 100 @ 1000
    { throughput: 300, latencyUs: 3500 }, // same throughput, more latency
  ];
  assert.deepEqual(paretoFront(points), [0, 1, 3]);
});

test('of identical points the first is kept; an empty list has an empty front', () => {
  assert.deepEqual(paretoFront([{ throughput: 5, latencyUs: 5 }, { throughput: 5, latencyUs: 5 }]), [0]);
  assert.deepEqual(paretoFront([]), []);
});

test('a point with the most throughput and the least latency is the whole front', () => {
  assert.deepEqual(paretoFront([{ throughput: 1, latencyUs: 9 }, { throughput: 9, latencyUs: 1 }, { throughput: 5, latencyUs: 5 }]), [1]);
});
