import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InlineGuard, MAX_INLINE_RUN_US, PROBATION_RUNS, SLOW_RUN_US } from './inline-guard.js';

test('an instance qualifies after PROBATION_RUNS fast runs in a row, for inputs no bigger than measured', () => {
  const guard = new InlineGuard();
  for (let run = 1; run < PROBATION_RUNS; run++) assert.equal(guard.recordThreadRun(5, run === 10 ? 256 : 64), false);
  assert.equal(guard.allows(64), false);
  assert.equal(guard.recordThreadRun(5, 64), true);
  assert.equal(guard.recordThreadRun(5, 64), false, 'qualifies once');
  assert.equal(guard.allows(256), true);
  assert.equal(guard.allows(257), false);
});

test('a slow run on the thread starts the probation again; one between fast and slow counts for neither', () => {
  const guard = new InlineGuard();
  for (let run = 0; run < PROBATION_RUNS - 1; run++) guard.recordThreadRun(5, 64);
  assert.equal(guard.recordThreadRun(MAX_INLINE_RUN_US + 1, 64), false);
  assert.equal(guard.recordThreadRun(5, 64), true);
  const again = new InlineGuard();
  for (let run = 0; run < PROBATION_RUNS - 1; run++) again.recordThreadRun(5, 64);
  assert.equal(again.recordThreadRun(SLOW_RUN_US + 1, 64), false);
  for (let run = 0; run < PROBATION_RUNS - 1; run++) assert.equal(again.recordThreadRun(5, 64), false);
  assert.equal(again.recordThreadRun(5, 64), true);
});

test('a slow inline run, or inline runs slow on average, send the instance back to its thread for good', () => {
  const guard = new InlineGuard();
  for (let run = 0; run < PROBATION_RUNS; run++) guard.recordThreadRun(5, 64);
  assert.equal(guard.recordInlineRun(MAX_INLINE_RUN_US + 10), true, 'one run past the limit is within the mean');
  assert.equal(guard.recordInlineRun(SLOW_RUN_US + 1), false);
  assert.equal(guard.allows(64), false);
  assert.equal(guard.recordThreadRun(5, 64), false);
  const drifting = new InlineGuard();
  for (let run = 0; run < PROBATION_RUNS; run++) drifting.recordThreadRun(5, 64);
  let runs = 0;
  while (drifting.recordInlineRun(2 * MAX_INLINE_RUN_US)) runs++;
  assert.ok(runs > 0 && runs < 16, `went back after ${runs} runs of twice the limit`);
});
