import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SequenceSource, type SequenceSettings, type SequenceStep } from './sequence-source.js';

const SETTINGS: SequenceSettings = { length: 3, lengthVariationPct: 0, idStart: 1, idEnd: undefined, numOfSequences: 2 };
const fields = (step: SequenceStep): string => `${step.sequenceId}${step.sequenceStart ? 'S' : ''}${step.sequenceEnd ? 'E' : ''}`;

test('concurrency mode: a request takes an idle sequence or starts one; each ends after its length and the next id follows', async () => {
  const source = new SequenceSource(SETTINGS, () => 0.5);
  const a = await source.next();
  const b = await source.next();
  assert.deepEqual([fields(a), fields(b)], ['1S', '2S'], 'two requests in flight: two sequences');
  a.release();
  b.release();
  const steps: string[] = [];
  for (let i = 0; i < 5; i++) {
    const step = await source.next();
    steps.push(fields(step));
    step.release();
  }
  assert.deepEqual(steps, ['2', '2E', '1', '1E', '3S']);
});

test('request-rate mode: at most --num-of-sequences live, a request waits for an idle one', async () => {
  const source = new SequenceSource(SETTINGS, () => 0.5, 2);
  const a = await source.next();
  const b = await source.next();
  let third: SequenceStep | undefined;
  const waiting = source.next().then((step) => (third = step));
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(third, undefined);
  b.release();
  await waiting;
  assert.deepEqual([fields(a), fields(b), fields(third!)], ['1S', '2S', '2']);
});

test('lengths vary within ± the variation; ids wrap round the range, skipping live ones', async () => {
  const low = new SequenceSource({ ...SETTINGS, length: 10, lengthVariationPct: 20 }, () => 0);
  let count = 0;
  for (let step = await low.next(); ; step = await low.next()) {
    count++;
    step.release();
    if (step.sequenceEnd) break;
  }
  assert.equal(count, 8, '10 - 20%');
  const wrapping = new SequenceSource({ ...SETTINGS, length: 1, idStart: 5, idEnd: 7 }, () => 0.5);
  const ids: number[] = [];
  for (let i = 0; i < 4; i++) {
    const step = await wrapping.next();
    ids.push(step.sequenceId);
    step.release();
  }
  assert.deepEqual(ids, [5, 6, 5, 6]);
});
