import assert from 'node:assert/strict';
import { test } from 'node:test';
import { closestName } from './closest-name.js';

const fields = ['name', 'platform', 'backend', 'max_batch_size', 'input', 'output', 'instance_group'];

test('a typo finds the field', () => {
  assert.equal(closestName('max_batch_sise', fields), 'max_batch_size');
  assert.equal(closestName('platfrom', fields), 'platform');
});

test('case and underscores do not count', () => {
  assert.equal(closestName('maxBatchSize', fields), 'max_batch_size');
  assert.equal(closestName('INSTANCE_GROUP', fields), 'instance_group');
});

test('nothing close gives no guess', () => {
  assert.equal(closestName('dynamic_batching', fields), undefined);
  assert.equal(closestName('x', []), undefined);
});
