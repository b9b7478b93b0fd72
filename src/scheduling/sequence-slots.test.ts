import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ModelInstance } from '../kernel/model-instance.js';
import { SequenceSlots } from './sequence-slots.js';

const instance = (name: string): ModelInstance => ({ name, execute: () => Promise.reject(new Error('not run')), close: async () => {} });

/** Where each active or backlogged sequence is: `runner.slot`, or `backlog`. */
const placement = (slots: SequenceSlots<string>): Record<string, string> =>
  Object.fromEntries(slots.sequences().map((sequence) => [sequence.key, sequence.slot === undefined ? 'backlog' : `${slots.runners.indexOf(sequence.slot.runner)}.${sequence.slot.index}`]));

test('slots are taken lowest index first across instances; the rest wait in the backlog, first come first served', () => {
  const slots = new SequenceSlots<string>([instance('a'), instance('b')], 2);
  for (const key of ['s1', 's2', 's3', 's4', 's5', 's6']) assert.equal(slots.add(key, `${key}-r1`, { isEnd: false, nowUs: 0 }), false);
  assert.deepEqual(placement(slots), { s5: 'backlog', s6: 'backlog', s1: '0.0', s3: '0.1', s2: '1.0', s4: '1.1' });
  assert.equal(slots.add('s2', 's2-r2', { isEnd: true, nowUs: 1 }), true, 's2 is active: its END joins it');
  assert.equal(slots.isActive('s2'), false, 'after its END, the id is free for a new sequence');
  const s2 = slots.sequences().find((sequence) => sequence.key === 's2')!;
  slots.releaseIfDone(s2, 2);
  assert.equal(placement(slots).s2, '1.0', 'not done while requests are queued');
  s2.entries.splice(0);
  slots.releaseIfDone(s2, 2);
  assert.deepEqual(placement(slots), { s6: 'backlog', s1: '0.0', s3: '0.1', s5: '1.0', s4: '1.1' });
});

test('idle sequences are reaped once nothing is queued and idleUs has passed since their last request', () => {
  const slots = new SequenceSlots<string>([instance('a')], 1);
  slots.add('s1', 'r1', { isEnd: false, nowUs: 0 });
  slots.add('s2', 'r1', { isEnd: false, nowUs: 10 });
  assert.deepEqual(slots.reapIdle(5000, 1000), { reaped: [], nextUs: Number.POSITIVE_INFINITY }, 's1 has a request queued');
  slots.sequences().find((sequence) => sequence.key === 's1')!.entries.splice(0);
  assert.deepEqual(slots.reapIdle(500, 1000), { reaped: [], nextUs: 1000 });
  assert.deepEqual(slots.reapIdle(1000, 1000), { reaped: ['s1'], nextUs: Number.POSITIVE_INFINITY });
  assert.equal(slots.isActive('s1'), false);
  assert.deepEqual(placement(slots), { s2: '0.0' }, 's2 left the backlog for the freed slot');
});
