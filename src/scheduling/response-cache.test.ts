import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Tensor } from '../kernel/tensor.js';
import { ResponseCache, responseByteSize } from './response-cache.js';

const output = (bytes: number, fill = 1): Tensor[] => [{ name: 'OUT', dataType: 'UINT8', shape: [bytes], data: new Uint8Array(bytes).fill(fill) }];

/** What output(n) takes: 4 + (8 + 4 + 'OUT' + 4 + 'UINT8' + 4 + one dimension + 8 + n). */
const size = (bytes: number): number => 48 + bytes;

test("an entry takes the response's size as Triton serializes it for its cache, BYTES in the serialized layout", () => {
  assert.equal(responseByteSize(output(10)), 58);
  // 4 + (8 + 4+3 + 4+5 + 4+8 + 8+10) + (8 + 4+1 + 4+4 + 4+16 + 8+12)
  assert.equal(responseByteSize([...output(10), { name: 'F', dataType: 'FP32', shape: [1, 3], data: new Float32Array(3) }]), 119);
  // 4 + (8 + 4+1 + 4+5 + 4+8 + 8 + 4+3 + 4+0)
  assert.equal(responseByteSize([{ name: 'S', dataType: 'BYTES', shape: [2], data: [new Uint8Array(3), new Uint8Array(0)] }]), 57);
});

test('hits and misses are counted, and a hit gives back what was stored', () => {
  const cache = new ResponseCache(size(10));
  assert.equal(cache.lookup('a'), undefined);
  assert.equal(cache.insert('a', output(10, 7)), 'inserted');
  assert.equal(cache.insert('a', output(10, 8)), 'present');
  assert.deepEqual(cache.lookup('a'), output(10, 7));
  assert.deepEqual(cache.lookup('a'), output(10, 7));
  const stats = cache.statistics();
  assert.deepEqual(
    { entries: stats.store?.entryCount, used: stats.store?.usedBytes, lookups: stats.lookupCount, hits: stats.hitCount, misses: stats.missCount },
    { entries: 1, used: 58, lookups: 3, hits: 2, misses: 1 },
  );
});

test('the stored outputs are a copy: the backend may reuse its buffers', () => {
  const cache = new ResponseCache(100);
  const outputs = output(4, 1);
  cache.insert('a', outputs);
  (outputs[0]!.data as Uint8Array).fill(9);
  assert.deepEqual([...(cache.lookup('a')![0]!.data as Uint8Array)], [1, 1, 1, 1]);
});

test('the least recently used entries are evicted until a new one fits; a lookup makes an entry recent', () => {
  const cache = new ResponseCache(3 * size(10));
  cache.insert('a', output(10));
  cache.insert('b', output(10));
  cache.insert('c', output(10));
  cache.lookup('a');
  assert.deepEqual(cache.keys(), ['b', 'c', 'a']);
  cache.insert('d', output(11));
  assert.deepEqual(cache.keys(), ['a', 'd']);
  assert.equal(cache.statistics().store?.evictionCount, 2);
  assert.equal(cache.statistics().store?.usedBytes, size(10) + size(11));
  cache.insert('e', output(9));
  assert.deepEqual(cache.keys(), ['a', 'd', 'e']);
  assert.equal(cache.statistics().store?.usedBytes, 3 * size(10));
});

test("an entry larger than the whole cache is not stored, is counted and told in Triton's words; nothing is evicted for it", () => {
  const failures: string[] = [];
  const cache = new ResponseCache(100, { onInsertFailure: (message) => failures.push(message) });
  cache.insert('a', output(10));
  assert.equal(cache.insert('big', output(53)), 'failed');
  assert.deepEqual(cache.keys(), ['a']);
  assert.equal(cache.statistics().insertionFailureCount, 1);
  assert.equal(cache.statistics().store?.evictionCount, 0);
  assert.deepEqual(failures, [
    'Failed to insert key [2a21fe6d592a19b7de898b50eb53c429608de1a66f3e9f62da19714a770553d1] into response cache: Requested byte_size: 101 is greater than total cache size: 100',
  ]);
});
