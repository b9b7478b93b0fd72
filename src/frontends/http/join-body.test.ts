import assert from 'node:assert/strict';
import { test } from 'node:test';
import { joinBody } from './join-body.js';

const bytes = (length: number, from = 0): Buffer => Buffer.from(Array.from({ length }, (_, index) => (from + index) % 256));

test('the binary data after the JSON header starts on an 8-byte boundary, whatever the header length and chunks', () => {
  for (const headerLength of [1, 5, 8, 13, 123]) {
    const whole = bytes(headerLength + 8192);
    const chunks = [whole.subarray(0, 7), whole.subarray(7, 40), whole.subarray(40)];
    const body = joinBody(chunks, whole.byteLength, { 'inference-header-content-length': String(headerLength) });
    assert.deepEqual(body, whole);
    assert.equal((body.byteOffset + headerLength) % 8, 0, `header of ${headerLength} bytes`);
  }
});

test('a small body is aligned too, in one chunk or several', () => {
  for (const headerLength of [1, 13, 141]) {
    const whole = bytes(headerLength + 256);
    for (const chunks of [[whole.subarray(1)], [whole.subarray(1, 8), whole.subarray(8)]]) {
      const body = joinBody(chunks, whole.byteLength - 1, { 'inference-header-content-length': String(headerLength) });
      assert.deepEqual(body, whole.subarray(1));
      assert.equal((body.byteOffset + headerLength) % 8, 0, `header of ${headerLength} bytes`);
    }
  }
});

test('a lone chunk already aligned, and a body without binary data, are returned as they came', () => {
  const whole = Buffer.allocUnsafeSlow(72).fill(3);
  assert.equal(joinBody([whole], 72, { 'inference-header-content-length': '16' }), whole);
  assert.equal(joinBody([whole], 72, {}), whole);
  const chunks = [bytes(10), bytes(10, 10)];
  assert.deepEqual(joinBody(chunks, 20, {}), bytes(20));
  // A header length that is malformed or not within the body is the infer handler's to refuse.
  for (const value of ['x', '-1', '0', '20', '99']) assert.deepEqual(joinBody(chunks, 20, { 'inference-header-content-length': value }), bytes(20));
  assert.deepEqual(joinBody([], 0, { 'inference-header-content-length': '4' }), Buffer.alloc(0));
});
