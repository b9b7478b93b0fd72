import assert from 'node:assert/strict';
import { test } from 'node:test';
import { deserializeBytesSliced } from './bytes-slices.js';

const serialized = (...elements: string[]): Buffer =>
  Buffer.concat(elements.flatMap((element) => [Buffer.from(new Uint32Array([Buffer.byteLength(element)]).buffer), Buffer.from(element)]));
const strings = (elements: readonly Uint8Array[]): string[] => elements.map((element) => Buffer.from(element).toString());

test('client bytes split into their elements; bytes that end inside one say where and how', async () => {
  const whole = await deserializeBytesSliced(serialized('ab', '', 'cde'));
  assert.deepEqual([strings(whole.elements), whole.cut], [['ab', '', 'cde'], undefined]);
  // Two bytes where the next element's 4-byte length should be.
  const cutLength = await deserializeBytesSliced(Buffer.concat([serialized('ab'), Buffer.from([1, 0])]));
  assert.deepEqual([strings(cutLength.elements), cutLength.cut], [['ab'], { part: 'length', available: 2 }]);
  // An element that gives itself 10 bytes and has 3.
  const cutString = await deserializeBytesSliced(Buffer.concat([serialized('ab'), Buffer.from(new Uint32Array([10]).buffer), Buffer.from('xyz')]));
  assert.deepEqual([strings(cutString.elements), cutString.cut], [['ab'], { part: 'string', length: 10, available: 3 }]);
});
