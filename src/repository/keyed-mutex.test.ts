import assert from 'node:assert/strict';
import { test } from 'node:test';
import { deferred } from '../util/deferred.js';
import { KeyedMutex } from './keyed-mutex.js';

/** A task the test finishes by hand, recording when it starts. */
function gate(log: string[], name: string): { task: () => Promise<string>; open: () => void; fail: (error: Error) => void } {
  const done = deferred();
  return {
    task: async () => {
      log.push(`start ${name}`);
      await done.promise;
      log.push(`end ${name}`);
      return name;
    },
    open: done.resolve,
    fail: done.reject,
  };
}

const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

test('tasks of one key run one at a time, in order; other keys run alongside', async () => {
  const mutex = new KeyedMutex();
  const log: string[] = [];
  const a1 = gate(log, 'a1');
  const a2 = gate(log, 'a2');
  const b1 = gate(log, 'b1');
  const results = [mutex.run('a', a1.task), mutex.run('a', a2.task), mutex.run('b', b1.task)];
  await flush();
  assert.deepEqual(log, ['start a1', 'start b1']);
  a1.open();
  await flush();
  assert.deepEqual(log, ['start a1', 'start b1', 'end a1', 'start a2']);
  a2.open();
  b1.open();
  assert.deepEqual(await Promise.all(results), ['a1', 'a2', 'b1']);
});

test('a failed task fails its own caller only; the next task of the key still runs', async () => {
  const mutex = new KeyedMutex();
  const log: string[] = [];
  const first = gate(log, 'first');
  const second = gate(log, 'second');
  const failed = mutex.run('m', first.task);
  const next = mutex.run('m', second.task);
  first.fail(new Error('broken config'));
  await assert.rejects(failed, { message: 'broken config' });
  second.open();
  assert.equal(await next, 'second');
});

test('settled() waits for every task given so far and never rejects', async () => {
  const mutex = new KeyedMutex();
  const log: string[] = [];
  const load = gate(log, 'load');
  const running = mutex.run('m', load.task);
  let isSettled = false;
  const settled = mutex.settled('m').then(() => (isSettled = true));
  await flush();
  assert.equal(isSettled, false);
  load.fail(new Error('no'));
  await assert.rejects(running);
  await settled;
  assert.equal(isSettled, true);
  await mutex.settled('never-used');
});
