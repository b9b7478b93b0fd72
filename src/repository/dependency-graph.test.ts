import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DependencyGraph } from './dependency-graph.js';

test('waits are followed through other models; a model waits for itself', () => {
  const graph = new DependencyGraph();
  graph.addWait('ens', 'mid');
  graph.addWait('mid', 'leaf');
  assert.equal(graph.isWaitingFor('ens', 'leaf'), true);
  assert.equal(graph.isWaitingFor('ens', 'mid'), true);
  assert.equal(graph.isWaitingFor('leaf', 'ens'), false);
  assert.equal(graph.isWaitingFor('other', 'other'), true);
});

test('the wait that would close a circle is seen before it is added', () => {
  const graph = new DependencyGraph();
  graph.addWait('ens_a', 'ens_b');
  // ens_b now wants ens_a: ens_a already waits for ens_b, so this wait would never end.
  assert.equal(graph.isWaitingFor('ens_a', 'ens_b'), true);
  assert.equal(graph.isWaitingFor('ens_b', 'ens_a'), false);
});

test('a released wait is gone; two waits for one model need both released', () => {
  const graph = new DependencyGraph();
  const first = graph.addWait('ens', 'leaf');
  const second = graph.addWait('ens', 'leaf');
  first();
  assert.equal(graph.isWaitingFor('ens', 'leaf'), true);
  first();
  assert.equal(graph.isWaitingFor('ens', 'leaf'), true, 'releasing twice counts once');
  second();
  assert.equal(graph.isWaitingFor('ens', 'leaf'), false);
});

test('cycles among other models do not hang the walk', () => {
  const graph = new DependencyGraph();
  graph.addWait('a', 'b');
  graph.addWait('b', 'a');
  assert.equal(graph.isWaitingFor('a', 'c'), false);
});
