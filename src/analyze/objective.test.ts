import assert from 'node:assert/strict';
import { test } from 'node:test';
import { stepAt } from '../../test/helpers/measured-steps.js';
import { type Criteria, compareConfigs, describeConstraints, operatingPointOf } from './objective.js';

const steps = [stepAt(1, 100, 1), stepAt(2, 190, 2), stepAt(4, 300, 6), stepAt(8, 320, 20)];

test('the operating point is the best step meeting the constraints', () => {
  const throughput: Criteria = { objective: 'throughput', percentile: 99, latencyBudgetMs: 10, minThroughput: undefined };
  assert.equal(operatingPointOf(steps, throughput)?.concurrency, 4);
  assert.equal(operatingPointOf(steps, { ...throughput, latencyBudgetMs: undefined })?.concurrency, 8);
  const latency: Criteria = { objective: 'latency', percentile: 99, latencyBudgetMs: undefined, minThroughput: 150 };
  assert.equal(operatingPointOf(steps, latency)?.concurrency, 2);
  assert.equal(operatingPointOf(steps, { ...latency, minThroughput: 1000 }), undefined);
  assert.equal(describeConstraints({ ...throughput, minThroughput: 150 }), 'p99 ≤ 10 ms and ≥ 150 infer/s');
});

test('configurations compare on the objective, those meeting the constraints first, unmeasured ones last', () => {
  const criteria: Criteria = { objective: 'throughput', percentile: 99, latencyBudgetMs: 3, minThroughput: undefined };
  const fast = [stepAt(1, 200, 1), stepAt(2, 380, 2.5)];
  const slow = [stepAt(1, 100, 1), stepAt(2, 190, 2)];
  const outside = [stepAt(1, 900, 4)];
  const closer = [stepAt(1, 900, 3.5)];
  assert.ok(compareConfigs(fast, slow, criteria) > 0);
  assert.ok(compareConfigs(slow, outside, criteria) > 0, 'one meeting the budget beats one that does not');
  assert.ok(compareConfigs(closer, outside, criteria) > 0, 'outside the budget, the lower latency is better');
  assert.ok(compareConfigs(outside, [], criteria) > 0, 'a configuration that could not be measured is the worst');
});
