import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NereidError } from '../../core/index.js';
import { parseRequestJsonRemembered } from './request-json-memo.js';

test('the same header text gives the same frozen value; another text its own', () => {
  const text = '{"inputs":[{"name":"INPUT0","shape":[1,16],"datatype":"FP32","parameters":{"binary_data_size":64}}]}';
  const first = parseRequestJsonRemembered(text, 'inference request') as { inputs: Array<{ shape: number[] }> };
  assert.equal(parseRequestJsonRemembered(`${text}`, 'inference request'), first);
  assert.ok(Object.isFrozen(first) && Object.isFrozen(first.inputs[0]!.shape));
  assert.throws(() => first.inputs[0]!.shape.push(2), TypeError);
  assert.deepEqual(parseRequestJsonRemembered('{"inputs":[]}', 'inference request'), { inputs: [] });
  for (let i = 0; i < 200; i++) assert.deepEqual(parseRequestJsonRemembered(`{"id":"${i}"}`, 'inference request'), { id: String(i) });
});

test('text that is not JSON is refused every time, and not remembered', () => {
  for (let i = 0; i < 2; i++) assert.throws(() => parseRequestJsonRemembered('{"inputs":', 'inference request'), (error) => error instanceof NereidError && error.status === 'INVALID_ARG');
});
