import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { InferRequest } from '../kernel/infer-request.js';
import { responseCacheKey } from './cache-key.js';

const base: InferRequest = {
  modelName: 'm',
  id: 'first',
  parameters: {},
  inputs: [
    { name: 'A', dataType: 'FP32', shape: [1, 2], data: new Float32Array([1, 2]) },
    { name: 'B', dataType: 'BYTES', shape: [1], data: [new TextEncoder().encode('xy')] },
  ],
};
const key = (request: Partial<InferRequest>, version = 1, loadId = 1): string => responseCacheKey({ ...base, ...request }, version, loadId);

test('equal requests share a key whatever their id, input order, priority or timeout', () => {
  assert.equal(key({ id: 'other', inputs: [...base.inputs].reverse(), parameters: { priority: 2, timeout: 100 } }), key({}));
});

test('the key changes with the model, version, load, any input byte, data type, shape, requested outputs and other parameters', () => {
  const keys = [
    key({}),
    key({ modelName: 'n' }),
    key({}, 2),
    key({}, 1, 2),
    key({ inputs: [{ ...base.inputs[0]!, data: new Float32Array([1, 3]) }, base.inputs[1]!] }),
    key({ inputs: [{ ...base.inputs[0]!, shape: [2, 1] }, base.inputs[1]!] }),
    key({ inputs: [{ ...base.inputs[0]!, dataType: 'INT32', data: new Int32Array(new Float32Array([1, 2]).buffer) }, base.inputs[1]!] }),
    key({ inputs: [base.inputs[0]!, { ...base.inputs[1]!, data: [new TextEncoder().encode('x'), new TextEncoder().encode('y')], shape: [2] }] }),
    key({ outputs: [{ name: 'OUT0' }] }),
    key({ parameters: { scale: 2 } }),
    key({ parameters: { scale: '2' } }),
  ];
  assert.equal(new Set(keys).size, keys.length);
});
