import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  INLINE_WARMUP_RUNS,
  InlineGuard,
  MAX_INLINE_MEDIAN_US,
  MAX_INLINE_RUN_US,
  MAX_LEAVE_MEDIAN_US,
  MAX_SINGLE_RUN_US,
  SLOW_RUN_US,
  WINDOW_RUNS,
} from './inline-guard.js';

/** Qualified, with its inline warm-up runs (slow, as a new session's are) behind it. */
const qualified = (roundTripUs = 40): InlineGuard => {
  const guard = new InlineGuard();
  for (let run = 0; run < WINDOW_RUNS; run++) guard.recordThreadRun(5, 64, roundTripUs);
  for (let run = 0; run < INLINE_WARMUP_RUNS; run++) assert.equal(guard.recordInlineRun(10 * MAX_SINGLE_RUN_US), true);
  return guard;
};

test('an instance qualifies after a window of fast runs, for inputs no bigger than measured in it', () => {
  const guard = new InlineGuard();
  for (let run = 1; run < WINDOW_RUNS; run++) assert.equal(guard.recordThreadRun(5, run === 10 ? 256 : 64, 40), false);
  assert.equal(guard.allows(64), false);
  assert.equal(guard.recordThreadRun(5, 64, 40), true);
  assert.equal(guard.recordThreadRun(5, 64, 40), false, 'qualifies once');
  assert.equal(guard.allows(256), true);
  assert.equal(guard.allows(257), false);
});

test('a window qualifies by its median and its slowest tenth, so that a preempted run or two do not count', () => {
  const preempted = new InlineGuard();
  for (let run = 0; run < WINDOW_RUNS - 2; run++) preempted.recordThreadRun(5, 64, 40);
  preempted.recordThreadRun(50 * SLOW_RUN_US, 64, 60 * SLOW_RUN_US);
  assert.equal(preempted.recordThreadRun(50 * SLOW_RUN_US, 64, 60 * SLOW_RUN_US), true);
  const slow = new InlineGuard();
  for (let run = 0; run < WINDOW_RUNS - 1; run++) slow.recordThreadRun(MAX_INLINE_RUN_US + 1, 64, 40);
  assert.equal(slow.recordThreadRun(5, 64, 40), false);
  assert.equal(slow.allows(64), false);
  for (let run = 0; run < WINDOW_RUNS - 1; run++) slow.recordThreadRun(5, 64, 40);
  assert.equal(slow.recordThreadRun(5, 64, 40), true, 'the next window is judged afresh');
});

test('inline runs slow in a window, or two very slow runs in a row, send the instance back to its thread for good', () => {
  const drifting = qualified();
  for (let run = 0; run < 15; run++) assert.equal(drifting.recordInlineRun(MAX_INLINE_MEDIAN_US + 1), true);
  assert.equal(drifting.recordInlineRun(MAX_INLINE_MEDIAN_US + 1), false);
  assert.equal(drifting.allows(64), false);
  assert.equal(drifting.recordThreadRun(5, 64, 40), false);
  const stuck = qualified();
  assert.equal(stuck.recordInlineRun(MAX_SINGLE_RUN_US + 1), true, 'one alone is a preempted run');
  assert.equal(stuck.recordInlineRun(5), true);
  assert.equal(stuck.recordInlineRun(MAX_SINGLE_RUN_US + 1), true);
  assert.equal(stuck.recordInlineRun(MAX_SINGLE_RUN_US + 1), false);
  assert.equal(stuck.allows(64), false);
  const steady = qualified();
  for (let run = 0; run < 100; run++) assert.equal(steady.recordInlineRun(run % 10 === 0 ? SLOW_RUN_US : 5), true);
});

test('inline, runs between the limit to qualify and the limit to leave keep the instance inline (hysteresis)', () => {
  const guard = qualified();
  assert.ok(MAX_INLINE_MEDIAN_US > MAX_INLINE_RUN_US);
  for (let run = 0; run < 64; run++) assert.equal(guard.recordInlineRun(MAX_INLINE_MEDIAN_US), true);
  assert.equal(guard.allows(64), true);
});

test('the leave limit follows the round trip through the thread measured when qualifying, within bounds', () => {
  assert.equal(qualified(40).leaveMedianUs, MAX_INLINE_MEDIAN_US);
  assert.equal(qualified(400).leaveMedianUs, 400);
  assert.equal(qualified(50 * MAX_LEAVE_MEDIAN_US).leaveMedianUs, MAX_LEAVE_MEDIAN_US);
  const loaded = qualified(400);
  for (let run = 0; run < 64; run++) assert.equal(loaded.recordInlineRun(300), true, 'slower than unloaded, faster than the hop');
  for (let run = 0; run < 15; run++) loaded.recordInlineRun(401);
  assert.equal(loaded.recordInlineRun(401), false);
});
