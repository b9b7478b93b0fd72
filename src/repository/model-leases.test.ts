import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ModelLeases } from './model-leases.js';

test('a model stays leased until every lease on it is returned; returning twice counts once', () => {
  const leases = new ModelLeases();
  const first = leases.take('a');
  const second = leases.take('a');
  assert.equal(leases.has('a'), true);
  first();
  first();
  assert.equal(leases.has('a'), true);
  second();
  assert.equal(leases.has('a'), false);
  assert.equal(leases.has('b'), false);
});
