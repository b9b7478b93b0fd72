import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type InferRequest, type InferResponse, ResponseMemo } from '../../core/index.js';
import { encodeResponse } from './cached-encoding.js';
import { type OutputEncoding, encodeInferResponse } from './infer-codec.js';

const request = (id: string, outputs?: InferRequest['outputs']): InferRequest => ({
  modelName: 'm',
  id,
  inputs: [],
  parameters: {},
  ...(outputs !== undefined ? { outputs } : {}),
});

const response = (id: string, memo?: ResponseMemo): InferResponse => ({
  modelName: 'm',
  modelVersion: '1',
  id,
  parameters: { note: 'kept' },
  outputs: [
    { name: 'A', dataType: 'FP32', shape: [2], data: new Float32Array([0.5, 2]) },
    { name: 'B', dataType: 'INT32', shape: [1], data: new Int32Array([7]) },
  ],
  ...(memo !== undefined ? { memo } : {}),
});

const json: OutputEncoding = { isBinaryByDefault: false, isBinaryByOutput: new Map() };
const binary: OutputEncoding = { isBinaryByDefault: true, isBinaryByOutput: new Map() };
const bytesOf = (chunks: readonly Uint8Array[]): Buffer => Buffer.concat(chunks);

test('a cached response encodes as an uncached one, each hit with its own id, from the bytes kept at the first', async () => {
  const memo = new ResponseMemo();
  for (const encoding of [json, binary]) {
    for (const id of ['', 'first', 'a "quoted" id', '']) {
      const cached = await encodeResponse(response(id, memo), request(id), encoding);
      const plain = await encodeInferResponse(response(id), encoding);
      assert.deepEqual(bytesOf(cached.chunks), bytesOf(plain.chunks));
      assert.equal(cached.headerLength, plain.headerLength);
    }
  }
  // Two forms kept: the outputs' JSON and the binary one; the next hit of each reuses its bytes.
  const [first, second] = [await encodeResponse(response('x', memo), request('x'), json), await encodeResponse(response('y', memo), request('y'), json)];
  assert.equal(first.chunks.at(-1), second.chunks.at(-1));
});

test("each output's requested form and classification makes its own form", async () => {
  const memo = new ResponseMemo();
  const mixed: OutputEncoding = { isBinaryByDefault: false, isBinaryByOutput: new Map([['B', true]]) };
  const outputs = [{ name: 'A' }, { name: 'B' }];
  const plainMixed = await encodeInferResponse(response('1'), mixed);
  await encodeResponse(response('0', memo), request('0'), json);
  const cachedMixed = await encodeResponse(response('1', memo), request('1', outputs), mixed);
  assert.deepEqual(bytesOf(cachedMixed.chunks), bytesOf(plainMixed.chunks));
  assert.equal(cachedMixed.headerLength, plainMixed.headerLength);
  const asJson = await encodeResponse(response('2', memo), request('2', outputs), json);
  assert.deepEqual(bytesOf(asJson.chunks), bytesOf((await encodeInferResponse(response('2'), json)).chunks));
  await encodeResponse(response('3', memo), request('3', [{ name: 'A', parameters: { classification: 1 } }]), json);
  assert.notEqual(memo.get('http:j'), undefined);
  assert.notEqual(memo.get('http:j\u0000A\u0001undefined\u00011'), undefined);
});
