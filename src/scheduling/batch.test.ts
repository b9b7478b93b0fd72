import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Tensor } from '../kernel/tensor.js';
import { concatBatch, splitBatch } from './batch.js';

const int32 = (shape: number[], values: number[]): Tensor => ({ name: 'X', dataType: 'INT32', shape, data: new Int32Array(values) });

test('concatenates along the batch dimension into a new buffer, and splits back into views', () => {
  const a = int32([2, 2], [1, 2, 3, 4]);
  const b = int32([1, 2], [5, 6]);
  const batch = concatBatch([a, b]);
  assert.deepEqual(batch.shape, [3, 2]);
  assert.deepEqual([...(batch.data as Int32Array)], [1, 2, 3, 4, 5, 6]);
  assert.notEqual((batch.data as Int32Array).buffer, (a.data as Int32Array).buffer);

  const [first, second] = splitBatch({ name: 'Y', dataType: 'INT32', shape: batch.shape, data: batch.data }, [2, 1]);
  assert.deepEqual(first!.shape, [2, 2]);
  assert.deepEqual([...(first!.data as Int32Array)], [1, 2, 3, 4]);
  assert.deepEqual([...(second!.data as Int32Array)], [5, 6]);
  assert.equal((second!.data as Int32Array).buffer, (batch.data as Int32Array).buffer);
});

test('a single tensor is copied, so the caller owns the result', () => {
  const body = new Int32Array([9, 9, 7, 8]);
  const view: Tensor = { name: 'X', dataType: 'INT32', shape: [1, 2], data: body.subarray(2) };
  const batch = concatBatch([view]);
  assert.deepEqual([...(batch.data as Int32Array)], [7, 8]);
  assert.equal((batch.data as Int32Array).byteOffset, 0);
  assert.equal((batch.data as Int32Array).buffer.byteLength, 8);
});

test('BYTES elements concatenate and split as arrays', () => {
  const bytes = (...s: string[]): Tensor => ({ name: 'S', dataType: 'BYTES', shape: [1, s.length], data: s.map((x) => Buffer.from(x)) });
  const batch = concatBatch([bytes('a', 'b'), bytes('c', 'd')]);
  assert.deepEqual(batch.shape, [2, 2]);
  const parts = splitBatch({ name: 'S', dataType: 'BYTES', shape: batch.shape, data: batch.data }, [1, 1]);
  assert.deepEqual(parts.map((p) => (p.data as Uint8Array[]).map((e) => Buffer.from(e).toString())), [['a', 'b'], ['c', 'd']]);
});

test('sizes that do not add up are an internal error', () => {
  assert.throws(() => splitBatch(int32([2, 1], [1, 2]), [1]), { message: "output 'X' has batch size 2, but the batch's requests add up to 1" });
});
