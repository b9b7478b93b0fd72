import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bytesInputError, cutStringError } from './validate-bytes-input.js';

const messageOf = (...args: Parameters<typeof bytesInputError>): string | undefined => bytesInputError(...args)?.message;

test("a BYTES input's elements against its shape, in the texts and order of Triton's core", () => {
  const fewer = "expected 3 string elements for inference input 'INPUT0' for model 'm', got 2";
  const more = "unexpected number of string elements 4 for inference input 'INPUT0' for model 'm', expecting 3";
  const indicator =
    "incomplete string length indicator for inference input 'INPUT0' for model 'm', expecting 4 bytes but only 2 bytes available. Please make sure the string length indicator is in one buffer.";
  assert.equal(messageOf('INPUT0', 'm', 3, 3, undefined), undefined);
  assert.equal(messageOf('INPUT0', 'm', 3, 2, undefined), fewer);
  assert.equal(messageOf('INPUT0', 'm', 3, 5, undefined), more);
  // Bytes left once the expected elements are read: one element too many, whatever they hold.
  assert.equal(messageOf('INPUT0', 'm', 3, 3, { part: 'length', available: 2 }), more);
  assert.equal(messageOf('INPUT0', 'm', 3, 3, { part: 'string', length: 9, available: 1 }), more);
  // Too few bytes for a length: refused as such while elements are still expected.
  assert.equal(messageOf('INPUT0', 'm', 3, 1, { part: 'length', available: 2 }), indicator);
  // A string cut short counts as an element: the count decides, or the backend does.
  assert.equal(messageOf('INPUT0', 'm', 3, 1, { part: 'string', length: 9, available: 1 }), fewer);
  assert.equal(messageOf('INPUT0', 'm', 3, 2, { part: 'string', length: 9, available: 1 }), undefined);
  assert.deepEqual(bytesInputError('INPUT0', 'm', 3, 2, undefined)?.status, 'INVALID_ARG');
  const cut = cutStringError('INPUT0', { part: 'string', length: 9, available: 1 });
  assert.deepEqual(
    [cut.status, cut.message],
    ['INVALID_ARG', "incomplete string data for inference input 'INPUT0', expecting string of length 9 but only 1 bytes available"],
  );
});
