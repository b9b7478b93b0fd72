import assert from 'node:assert/strict';
import { test } from 'node:test';
import { concurrencyLevels, sweepConcurrency } from './concurrency-sweep.js';
import { stepAt } from '../../test/helpers/measured-steps.js';
import type { Criteria } from './objective.js';

const CRITERIA: Criteria = { objective: 'throughput', percentile: 99, latencyBudgetMs: undefined, minThroughput: undefined };

test('levels double from 1 and end with the maximum', () => {
  assert.deepEqual(concurrencyLevels(1), [1]);
  assert.deepEqual(concurrencyLevels(8), [1, 2, 4, 8]);
  assert.deepEqual(concurrencyLevels(12), [1, 2, 4, 8, 12]);
});

test('the sweep ends after two levels in a row without 5 % more throughput', async () => {
  const throughputs: Record<number, number> = { 1: 100, 2: 180, 4: 185, 8: 186, 16: 400 };
  const measured: number[] = [];
  const outcome = await sweepConcurrency(16, CRITERIA, async (c) => {
    measured.push(c);
    return { step: stepAt(c, throughputs[c]!, c) };
  });
  assert.deepEqual(measured, [1, 2, 4, 8]);
  assert.equal(outcome.stopReason, 'throughput stopped growing at concurrency 8');
  assert.equal(outcome.failure, undefined);
});

test('one flat level followed by growth does not end it', async () => {
  const throughputs: Record<number, number> = { 1: 100, 2: 101, 4: 300, 8: 600 };
  const outcome = await sweepConcurrency(8, CRITERIA, async (c) => ({ step: stepAt(c, throughputs[c]!, c) }));
  assert.deepEqual(outcome.steps.map((step) => step.concurrency), [1, 2, 4, 8]);
  assert.equal(outcome.stopReason, undefined);
});

test('the level that passes the latency budget is kept and ends the sweep', async () => {
  const outcome = await sweepConcurrency(64, { ...CRITERIA, latencyBudgetMs: 5 }, async (c) => ({ step: stepAt(c, c * 100, c * 1.5) }));
  assert.deepEqual(outcome.steps.map((step) => step.concurrency), [1, 2, 4]);
  assert.equal(outcome.stopReason, 'p99 6.00 ms at concurrency 4 is over the budget of 5 ms');
});

test('a failed level ends the sweep with its failure', async () => {
  const outcome = await sweepConcurrency(8, CRITERIA, async (c) => (c === 4 ? { failure: 'boom' } : { step: stepAt(c, c * 100, 1) }));
  assert.deepEqual(outcome.steps.map((step) => step.concurrency), [1, 2]);
  assert.equal(outcome.failure, 'boom');
});
