import assert from 'node:assert/strict';
import { test } from 'node:test';
import { deferred } from '../util/deferred.js';
import { LoadSlots } from './load-slots.js';

const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

test('at most `count` tasks run at once; the others start in order as slots free', async () => {
  const slots = new LoadSlots(2);
  const log: string[] = [];
  const gates = ['a', 'b', 'c', 'd'].map((name) => ({ name, done: deferred() }));
  const runs = gates.map(({ name, done }) =>
    slots.run(async () => {
      log.push(`start ${name}`);
      await done.promise;
      log.push(`end ${name}`);
    }),
  );
  await flush();
  assert.deepEqual(log, ['start a', 'start b']);
  assert.equal(slots.waitingCount, 2);
  gates[1]!.done.resolve();
  await flush();
  assert.deepEqual(log, ['start a', 'start b', 'end b', 'start c']);
  gates[0]!.done.resolve();
  await flush();
  assert.deepEqual(log.slice(4), ['end a', 'start d']);
  gates[2]!.done.resolve();
  gates[3]!.done.resolve();
  await Promise.all(runs);
  assert.equal(slots.waitingCount, 0);
});

test('a failing task frees its slot', async () => {
  const slots = new LoadSlots(1);
  await assert.rejects(slots.run(() => Promise.reject(new Error('broken'))), /broken/);
  assert.equal(await slots.run(() => Promise.resolve('next')), 'next');
});

test('a task waiting for another load gives its slot back, so a dependency can load with one slot', async () => {
  const slots = new LoadSlots(1);
  const log: string[] = [];
  const ensemble = slots.run(async () => {
    log.push('ensemble starts');
    await slots.whileWaiting(() => slots.run(async () => log.push('step loads')));
    log.push('ensemble ends');
  });
  await ensemble;
  assert.deepEqual(log, ['ensemble starts', 'step loads', 'ensemble ends']);
});
