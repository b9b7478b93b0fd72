import assert from 'node:assert/strict';
import { test } from 'node:test';
import { toBinary } from '@bufbuild/protobuf';
import { type InferRequest, type InferResponse, ResponseMemo } from '../../core/index.js';
import { ModelInferResponseSchema } from '../../protocol/gen/grpc_service_pb.js';
import { encodeResponseMessage } from './cached-encoding.js';
import { encodeModelInferResponse } from './infer-codec.js';

const request = (id: string, outputs?: InferRequest['outputs']): InferRequest => ({ modelName: 'm', id, inputs: [], parameters: {}, ...(outputs !== undefined ? { outputs } : {}) });

const response = (id: string, memo?: ResponseMemo): InferResponse => ({
  modelName: 'm',
  modelVersion: '1',
  id,
  parameters: { note: 'kept', count: 2 },
  outputs: [{ name: 'A', dataType: 'FP32', shape: [2], data: new Float32Array([0.5, 2]) }],
  ...(memo !== undefined ? { memo } : {}),
});

test('a cached response gives the message an uncached one does, each hit with its own id; a classified request its own form', async () => {
  const memo = new ResponseMemo();
  for (const id of ['first', '', 'third', 'third']) {
    const cached = await encodeResponseMessage(response(id, memo), request(id), undefined);
    assert.deepEqual(toBinary(ModelInferResponseSchema, cached), toBinary(ModelInferResponseSchema, await encodeModelInferResponse(response(id))));
  }
  assert.notEqual(memo.get('grpc'), undefined);
  await encodeResponseMessage(response('c', memo), request('c', [{ name: 'A', parameters: { classification: 1 } }]), undefined);
  assert.notEqual(memo.get('grpc\u0000A\u00011'), undefined);
});
