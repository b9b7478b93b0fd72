import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AsyncQueue } from './async-queue.js';

async function readAll<T>(queue: AsyncQueue<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of queue) items.push(item);
  return items;
}

describe('AsyncQueue', () => {
  test('yields what was pushed before and after the reader started, in order, then ends', async () => {
    const queue = new AsyncQueue<number>();
    queue.push(1);
    const reading = readAll(queue);
    queue.push(2);
    await Promise.resolve();
    queue.push(3);
    queue.end();
    assert.deepEqual(await reading, [1, 2, 3]);
  });

  test('end(error) throws the error after the items pushed before it', async () => {
    const queue = new AsyncQueue<string>();
    const seen: string[] = [];
    queue.push('a');
    queue.end(new Error('stream failed'));
    queue.push('dropped');
    await assert.rejects(async () => {
      for await (const item of queue) seen.push(item);
    }, /^Error: stream failed$/);
    assert.deepEqual(seen, ['a']);
  });

  test('a reader that breaks out ends the queue and drops later pushes', async () => {
    const queue = new AsyncQueue<number>();
    queue.push(1);
    queue.push(2);
    for await (const item of queue) {
      assert.equal(item, 1);
      break;
    }
    assert.equal(queue.isEnded, true);
    queue.push(3);
    assert.deepEqual(await readAll(queue), []);
  });
});
