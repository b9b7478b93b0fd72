import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  INLINE_WARMUP_RUNS,
  InlineGuard,
  MAX_INLINE_P10_US,
  MAX_INLINE_RUN_US,
  MAX_LEAVE_MEDIAN_US,
  MAX_REQUALIFY_WINDOWS,
  MAX_SINGLE_RUN_US,
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

test('only executions no bigger than those that ran fast may run inline (small batches inline, big ones on the thread)', () => {
  const guard = new InlineGuard();
  for (let run = 1; run < WINDOW_RUNS; run++) guard.recordThreadRun(run % 2 === 0 ? 10 : 4 * MAX_INLINE_P10_US, run % 2 === 0 ? 256 : 8192, 400);
  assert.equal(guard.recordThreadRun(10, 256, 400), true);
  assert.equal(guard.allows(256), true);
  assert.equal(guard.allows(8192), false);
  assert.equal(guard.recordThreadRun(MAX_INLINE_RUN_US + 1, 1024, 400), false);
  assert.equal(guard.allows(1024), false, 'a bigger execution that ran slow on the thread stays there');
  assert.equal(guard.recordThreadRun(MAX_INLINE_RUN_US, 1024, 400), false);
  assert.equal(guard.allows(1024), true, 'one that ran as fast as the model must to qualify may run inline');
  assert.equal(guard.allows(1025), false);
});

test('a window qualifies by its fastest tenth (what the model computes) and its median (how long the loop is held)', () => {
  const preempted = new InlineGuard();
  for (let run = 0; run < WINDOW_RUNS - 2; run++) preempted.recordThreadRun(5, 64, 40);
  preempted.recordThreadRun(50 * MAX_SINGLE_RUN_US, 64, 40);
  assert.equal(preempted.recordThreadRun(50 * MAX_SINGLE_RUN_US, 64, 40), true);
  const slow = new InlineGuard();
  for (let run = 0; run < WINDOW_RUNS - 1; run++) slow.recordThreadRun(MAX_INLINE_RUN_US + 1, 64, 40);
  assert.equal(slow.recordThreadRun(5, 64, 40), false);
  assert.equal(slow.allows(64), false);
  for (let run = 0; run < WINDOW_RUNS - 1; run++) slow.recordThreadRun(5, 64, 40);
  assert.equal(slow.recordThreadRun(5, 64, 40), true, 'the next window is judged afresh');
  const loaded = new InlineGuard();
  for (let run = 1; run < WINDOW_RUNS; run++) loaded.recordThreadRun(run % 4 === 0 ? 20 : 300, 64, 600);
  assert.equal(loaded.recordThreadRun(300, 64, 600), true, 'fast runs among preempted ones, a slower hop still');
  const mostlySlow = new InlineGuard();
  for (let run = 1; run < WINDOW_RUNS; run++) mostlySlow.recordThreadRun(run % 8 === 0 ? 20 : 2 * MAX_LEAVE_MEDIAN_US, 64, 4 * MAX_LEAVE_MEDIAN_US);
  assert.equal(mostlySlow.recordThreadRun(20, 64, 4 * MAX_LEAVE_MEDIAN_US), false, 'a median past the leave limit');
});

/** Runs `windows` windows on the thread, each run taking `runUs`; what the last run returned. */
const threadWindows = (guard: InlineGuard, windows: number, runUs = 5, inputBytes = 64): boolean => {
  let qualified = false;
  for (let run = 0; run < windows * WINDOW_RUNS; run++) qualified = guard.recordThreadRun(runUs, inputBytes, 40);
  return qualified;
};

/** Sends a qualified guard back to its thread with two slow inline windows. */
const sendBack = (guard: InlineGuard): void => {
  for (let run = 0; run < 31; run++) assert.equal(guard.recordInlineRun(MAX_INLINE_P10_US + 1), true);
  assert.equal(guard.recordInlineRun(MAX_INLINE_P10_US + 1), false);
};

test('inline runs slow in two windows in a row, or two very slow runs in a row, send the instance back to its thread', () => {
  const drifting = qualified();
  sendBack(drifting);
  assert.equal(drifting.allows(64), false);
  assert.equal(drifting.recordThreadRun(5, 64, 40), false);
  const stuck = qualified();
  assert.equal(stuck.recordInlineRun(MAX_SINGLE_RUN_US + 1), true, 'one alone is a preempted run');
  assert.equal(stuck.recordInlineRun(5), true);
  assert.equal(stuck.recordInlineRun(MAX_SINGLE_RUN_US + 1), true);
  assert.equal(stuck.recordInlineRun(MAX_SINGLE_RUN_US + 1), false);
  assert.equal(stuck.allows(64), false);
  const steady = qualified();
  for (let run = 0; run < 100; run++) assert.equal(steady.recordInlineRun(run % 10 === 0 ? 4 * MAX_INLINE_P10_US : 5), true);
});

test('back on its thread, an instance whose runs are fast again comes back inline after 2, then 4, 8... passing windows in a row', () => {
  const guard = qualified();
  sendBack(guard);
  assert.equal(threadWindows(guard, 1), false, 'one window is not enough after the first return');
  assert.equal(guard.allows(64), false);
  assert.equal(threadWindows(guard, 1), true);
  assert.equal(guard.allows(64), true);
  assert.equal(guard.allows(65), false, 'no bigger than the executions measured fast');
  for (let run = 0; run < 16; run++) assert.equal(guard.recordInlineRun(5), true, 'no warm-up the second time: the session is warm');
  sendBack(guard);
  assert.equal(threadWindows(guard, 3), false);
  assert.equal(threadWindows(guard, 1), true, 'four windows after the second return');
});

test('back on its thread, a failing window starts the count of passing windows again', () => {
  const guard = qualified();
  sendBack(guard);
  assert.equal(threadWindows(guard, 1), false);
  assert.equal(threadWindows(guard, 1, MAX_INLINE_RUN_US + 1), false, 'a window of slow runs');
  assert.equal(threadWindows(guard, 1), false);
  assert.equal(guard.allows(64), false);
  assert.equal(threadWindows(guard, 1), true);
});

test('a model whose runs grew stays on its thread, and the windows asked of a model that keeps flipping stop at MAX_REQUALIFY_WINDOWS', () => {
  const grown = qualified();
  sendBack(grown);
  assert.equal(threadWindows(grown, 20, 4 * MAX_INLINE_P10_US), false);
  assert.equal(grown.allows(64), false);
  const flipping = qualified();
  for (let windows = 2; windows <= 4 * MAX_REQUALIFY_WINDOWS; windows *= 2) {
    sendBack(flipping);
    const asked = Math.min(windows, MAX_REQUALIFY_WINDOWS);
    assert.equal(threadWindows(flipping, asked - 1), false);
    assert.equal(threadWindows(flipping, 1), true, `${asked} windows`);
  }
});

test('inline, runs between the limit to qualify and the limit to leave keep the instance inline (hysteresis)', () => {
  const guard = qualified();
  assert.ok(MAX_INLINE_P10_US > MAX_INLINE_RUN_US);
  for (let run = 0; run < 64; run++) assert.equal(guard.recordInlineRun(MAX_INLINE_P10_US), true);
  assert.equal(guard.allows(64), true);
});

test('the leave limit follows the round trip through the thread measured when qualifying, within bounds', () => {
  assert.equal(qualified(40).leaveMedianUs, MAX_INLINE_P10_US);
  assert.equal(qualified(400).leaveMedianUs, 400);
  assert.equal(qualified(50 * MAX_LEAVE_MEDIAN_US).leaveMedianUs, MAX_LEAVE_MEDIAN_US);
  const loaded = qualified(400);
  for (let run = 0; run < 64; run++) assert.equal(loaded.recordInlineRun(run % 4 === 0 ? 20 : 300), true, 'slower than unloaded, faster than the hop');
  for (let run = 0; run < 31; run++) loaded.recordInlineRun(401);
  assert.equal(loaded.recordInlineRun(401), false);
});

test('one slow inline window alone (a burst of contention) keeps the instance inline', () => {
  const guard = qualified();
  for (let run = 0; run < 16; run++) assert.equal(guard.recordInlineRun(3 * MAX_INLINE_P10_US), true);
  for (let run = 0; run < 16; run++) assert.equal(guard.recordInlineRun(5), true);
  for (let run = 0; run < 16; run++) assert.equal(guard.recordInlineRun(3 * MAX_INLINE_P10_US), true);
  assert.equal(guard.allows(64), true);
});
