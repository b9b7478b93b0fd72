import assert from 'node:assert/strict';
import { test } from 'node:test';
import { schedulerDelayCount } from './scheduler-delay.js';

test('TRITONSERVER_DELAY_SCHEDULER is read as C atoi reads it, as Triton does', () => {
  assert.equal(schedulerDelayCount(undefined), 0);
  assert.equal(schedulerDelayCount('8'), 8);
  assert.equal(schedulerDelayCount(' \t12'), 12);
  assert.equal(schedulerDelayCount('+3'), 3);
  assert.equal(schedulerDelayCount('16 requests'), 16);
  assert.equal(schedulerDelayCount(''), 0);
  assert.equal(schedulerDelayCount('many'), 0);
  assert.equal(schedulerDelayCount('-0'), 0);
  assert.equal(schedulerDelayCount('-2'), Number.POSITIVE_INFINITY, "a negative count is a huge size_t in Triton: the batcher never starts");
});
