import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Tensor } from '../kernel/tensor.js';
import { ResponseCache, outputByteSize } from './response-cache.js';

const output = (bytes: number, fill = 1): Tensor[] => [{ name: 'OUT', dataType: 'UINT8', shape: [bytes], data: new Uint8Array(bytes).fill(fill) }];

test('an entry counts its output bytes, BYTES in the serialized layout', () => {
  assert.equal(outputByteSize([...output(10), { name: 'F', dataType: 'FP32', shape: [3], data: new Float32Array(3) }]), 22);
  assert.equal(outputByteSize([{ name: 'S', dataType: 'BYTES', shape: [2], data: [new Uint8Array(3), new Uint8Array(0)] }]), 11);
});

test('hits and misses are counted, and a hit gives back what was stored', () => {
  const cache = new ResponseCache(100);
  assert.equal(cache.lookup('a'), undefined);
  assert.equal(cache.insert('a', output(10, 7)), 'inserted');
  assert.equal(cache.insert('a', output(10, 8)), 'present');
  assert.deepEqual(cache.lookup('a'), output(10, 7));
  assert.deepEqual(cache.lookup('a'), output(10, 7));
  const stats = cache.statistics();
  assert.deepEqual(
    { entries: stats.store?.entryCount, used: stats.store?.usedBytes, lookups: stats.lookupCount, hits: stats.hitCount, misses: stats.missCount },
    { entries: 1, used: 10, lookups: 3, hits: 2, misses: 1 },
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
  const cache = new ResponseCache(30);
  cache.insert('a', output(10));
  cache.insert('b', output(10));
  cache.insert('c', output(10));
  cache.lookup('a');
  assert.deepEqual(cache.keys(), ['b', 'c', 'a']);
  cache.insert('d', output(15));
  assert.deepEqual(cache.keys(), ['a', 'd']);
  assert.equal(cache.statistics().store?.evictionCount, 2);
  assert.equal(cache.statistics().store?.usedBytes, 25);
  cache.insert('e', output(5));
  assert.deepEqual(cache.keys(), ['a', 'd', 'e']);
  assert.equal(cache.statistics().store?.usedBytes, 30);
});

test('an entry larger than the whole cache is not stored and is counted; nothing is evicted for it', () => {
  const cache = new ResponseCache(30);
  cache.insert('a', output(10));
  assert.equal(cache.insert('big', output(31)), 'failed');
  assert.deepEqual(cache.keys(), ['a']);
  assert.equal(cache.statistics().insertionFailureCount, 1);
  assert.equal(cache.statistics().store?.evictionCount, 0);
});
