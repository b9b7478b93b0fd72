import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeUbjson } from './ubjson.js';

const bytes = (...parts: Array<number[] | string>): Uint8Array =>
  Uint8Array.from(parts.flatMap((part) => (typeof part === 'string' ? [...new TextEncoder().encode(part)] : part)));

test('objects, strings and numbers of every width, big-endian', () => {
  const doc = bytes('{', [0x55, 1], 'a', 'i', [0xff], [0x55, 1], 'b', 'I', [0x01, 0x00], [0x55, 1], 'c', 'd', [0x3f, 0xc0, 0, 0], [0x55, 1], 'd', 'S', [0x55, 2], 'hi', [0x55, 1], 'e', 'T', '}');
  assert.deepEqual(decodeUbjson(doc), { a: -1, b: 256, c: 1.5, d: 'hi', e: true });
});

test('typed arrays with a type and a count come back as typed arrays', () => {
  const floats = decodeUbjson(bytes('[', '$', 'd', '#', [0x55, 2], [0x3f, 0x80, 0, 0], [0xc0, 0, 0, 0]));
  assert.deepEqual(floats, Float32Array.from([1, -2]));
  const ints = decodeUbjson(bytes('[', '$', 'l', '#', 'i', [2], [0, 0, 0, 7], [0xff, 0xff, 0xff, 0xff]));
  assert.deepEqual(ints, Int32Array.from([7, -1]));
  assert.deepEqual(decodeUbjson(bytes('[', 'i', [1], 'Z', ']')), [1, null]);
});

test('malformed documents fail with the place, never hang or overflow', () => {
  assert.throws(() => decodeUbjson(bytes('[', '$', 'd', '#', [0x55, 9], [0, 0])), { message: /ends early: 36 more bytes needed at byte 6/ });
  assert.throws(() => decodeUbjson(bytes('{', [0x55, 1], 'a')), { message: /ends early/ });
  assert.throws(() => decodeUbjson(bytes('[', '$', 'd', [0])), { message: /a type but no count/ });
  assert.throws(() => decodeUbjson(bytes('i', [1], 'i', [2])), { message: /has 2 bytes after its UBJSON document/ });
  assert.throws(() => decodeUbjson(bytes('['.repeat(100))), { message: /deeper than 64 levels/ });
  assert.throws(() => decodeUbjson(bytes('[', '#', 'i', [0xff])), { message: /negative or huge UBJSON length -1/ });
});
