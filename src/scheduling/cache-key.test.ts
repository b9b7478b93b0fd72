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
const key = (request: Partial<InferRequest>, version = 1, loadId = 1, isShared = false, model = 'm'): string =>
  responseCacheKey({ ...base, ...request }, { model, version, loadId, isShared });

test('equal requests share a key whatever their id, input order, priority or timeout, in a local and a shared cache', () => {
  for (const isShared of [false, true]) {
    assert.equal(key({ id: 'other', inputs: [...base.inputs].reverse(), parameters: { priority: 2, timeout: 100 } }, 1, 1, isShared), key({}, 1, 1, isShared));
  }
});

test('a shared cache, and a request of more than 512 bytes of input, get a SHA-256 digest; a small request in a local cache its exact text', () => {
  assert.match(key({}, 1, 0, true), /^[0-9a-f]{64}$/);
  const large = (fill: number): Partial<InferRequest> => ({ inputs: [{ name: 'A', dataType: 'UINT8', shape: [513], data: new Uint8Array(513).fill(fill) }] });
  assert.match(key(large(0)), /^[0-9a-f]{64}$/);
  assert.notEqual(key(large(1)), key(large(0)));
  assert.ok(key({}).startsWith('"m":1:1|"A":FP32:1,2:8,|"B":BYTES:1:2,||'));
});

test('the key changes with the model, version, load, any input byte, data type, shape, requested outputs and other parameters', () => {
  for (const isShared of [false, true]) {
    const keys = variants((request, version, loadId, model) => key(request, version, loadId, isShared, model));
    assert.equal(new Set(keys).size, keys.length);
  }
});

function variants(key: (request: Partial<InferRequest>, version?: number, loadId?: number, model?: string) => string): string[] {
  return [
    key({}),
    key({}, 1, 1, 'n'),
    key({}, 2),
    key({}, 1, 2),
    key({ inputs: [{ ...base.inputs[0]!, data: new Float32Array([1, 3]) }, base.inputs[1]!] }),
    key({ inputs: [{ ...base.inputs[0]!, shape: [2, 1] }, base.inputs[1]!] }),
    key({ inputs: [{ ...base.inputs[0]!, dataType: 'INT32', data: new Int32Array(new Float32Array([1, 2]).buffer) }, base.inputs[1]!] }),
    key({ inputs: [base.inputs[0]!, { ...base.inputs[1]!, data: [new TextEncoder().encode('x'), new TextEncoder().encode('y')], shape: [2] }] }),
    key({ outputs: [{ name: 'OUT0' }] }),
    key({ outputs: [{ name: 'OUT0' }, { name: 'OUT1' }] }),
    key({ outputs: [{ name: 'OUT1' }, { name: 'OUT0' }] }),
    key({ parameters: { scale: 2 } }),
    key({ parameters: { scale: '2' } }),
    key({ parameters: { 'scale:string:"2"': true } }),
  ];
}

test("the model's key, not the name the request used, is in the key: two namespaces' models of one name never share entries", () => {
  for (const isShared of [false, true]) {
    assert.equal(key({ modelName: '/repos/a::m' }, 1, 0, isShared, '/repos/a::m'), key({ modelName: 'm' }, 1, 0, isShared, '/repos/a::m'));
    assert.notEqual(key({}, 1, 0, isShared, '/repos/a::m'), key({}, 1, 0, isShared, '/repos/b::m'));
  }
});
