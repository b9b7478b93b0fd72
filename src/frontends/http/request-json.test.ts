import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NereidError } from '../../core/index.js';
import { parseRequestJson } from './request-json.js';

test('a request body that is not JSON is INVALID_ARG, with the parser\'s reason', () => {
  assert.deepEqual(parseRequestJson('{"a":1}', 'body'), { a: 1 });
  assert.throws(
    () => parseRequestJson('{"inputs": [', 'inference request'),
    new NereidError('INVALID_ARG', 'failed to parse the request JSON buffer: Invalid value. at 12 (the inference request is not JSON)'),
  );
});
