import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseJsonBody } from './json-body.js';

test('plain JSON, and integers beyond 2^53 as exact BigInts', () => {
  assert.deepEqual(parseJsonBody('{"a":[1,2.5,"x"]}', 'body'), { a: [1, 2.5, 'x'] });
  assert.deepEqual(parseJsonBody('[18446744073709551615,-9223372036854775808,9007199254740991,0.1234567890123456]', 'body'), [
    18446744073709551615n,
    -9223372036854775808n,
    9007199254740991,
    0.1234567890123456,
  ]);
});

test('bare NaN and Infinity outside strings, as Python clients write them', () => {
  const value = parseJsonBody('{"d":[NaN,Infinity,-Infinity,1],"s":"NaN -Infinity \\" NaN"}', 'body') as { d: number[]; s: string };
  assert.ok(Number.isNaN(value.d[0]));
  assert.deepEqual(value.d.slice(1), [Infinity, -Infinity, 1]);
  assert.equal(value.s, 'NaN -Infinity " NaN');
  const big = parseJsonBody('[NaN,18446744073709551615]', 'body') as unknown[];
  assert.ok(Number.isNaN(big[0]));
  assert.equal(big[1], 18446744073709551615n);
});

test('malformed JSON names what failed to parse', () => {
  assert.throws(() => parseJsonBody('{"inputs": [', 'inference request'), {
    name: 'JsonBodyError',
    message: 'failed to parse the request JSON buffer: Invalid value. at 12 (the inference request is not JSON)',
  });
  assert.throws(() => parseJsonBody('[NaN,', 'inference request'), {
    name: 'JsonBodyError',
    message: 'failed to parse the request JSON buffer: Invalid value. at 5 (the inference request is not JSON)',
  });
});

test("a text that both nests too deep and is not JSON gets RapidJSON's error first, as Triton answers it", () => {
  assert.throws(() => parseJsonBody(`x${'['.repeat(200)}`, 'inference request'), {
    name: 'JsonBodyError',
    message: 'failed to parse the request JSON buffer: Invalid value. at 0 (the inference request is not JSON)',
  });
});
