import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BodyPool } from './body-pool.js';

const KIB = 1024;
const MIB = 1024 * KIB;

test('a large body comes at offset 0 of memory rounded up to 64 KiB, and its memory serves the next body of that size class', () => {
  const pool = new BodyPool();
  const first = pool.take(600 * KIB + 3);
  assert.equal(first.byteLength, 600 * KIB + 3);
  assert.equal(first.byteOffset, 0);
  assert.equal(first.buffer.byteLength, 640 * KIB);
  pool.give(first.subarray(5));
  assert.equal(pool.retainedBytes, 640 * KIB);
  const second = pool.take(577 * KIB);
  assert.equal(second.buffer, first.buffer);
  assert.equal(second.byteLength, 577 * KIB);
  assert.equal(pool.retainedBytes, 0);
  // Another size class gets memory of its own.
  assert.notEqual(pool.take(700 * KIB).buffer, first.buffer);
});

test('a body under 64 KiB has memory of its own and is not kept', () => {
  const pool = new BodyPool();
  const small = pool.take(64 * KIB - 1);
  assert.equal(small.byteOffset, 0);
  assert.equal(small.buffer.byteLength, 64 * KIB - 1);
  pool.give(small);
  assert.equal(pool.retainedBytes, 0);
});

test('memory the pool did not hand out is not kept, nor a body given back twice', () => {
  const pool = new BodyPool();
  pool.give(Buffer.allocUnsafeSlow(128 * KIB));
  assert.equal(pool.retainedBytes, 0);

  const body = pool.take(128 * KIB);
  pool.give(body);
  pool.give(body);
  assert.equal(pool.retainedBytes, 128 * KIB);
  assert.equal(pool.take(128 * KIB).buffer, body.buffer);
  assert.notEqual(pool.take(128 * KIB).buffer, body.buffer);
});

test('the free lists keep at most 64 MiB; memory beyond is left to the garbage collector', () => {
  const pool = new BodyPool();
  const bodies = Array.from({ length: 70 }, () => pool.take(MIB));
  for (const body of bodies) pool.give(body);
  assert.equal(pool.retainedBytes, 64 * MIB);
});
