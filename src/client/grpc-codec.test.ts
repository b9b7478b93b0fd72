import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { create } from '@bufbuild/protobuf';
import { type InferParameter, InferParameterSchema, ModelInferRequestSchema, ModelInferResponseSchema } from '../protocol/gen/grpc_service_pb.js';
import { decodeModelInferResponse, encodeModelInferRequest, parameterMessage } from './grpc-codec.js';
import { prepareInput } from './infer-input.js';

describe('the gRPC client codec', () => {
  test('parameters as InferParameter messages', () => {
    assert.deepEqual(parameterMessage(true), { case: 'boolParam', value: true });
    assert.deepEqual(parameterMessage('s'), { case: 'stringParam', value: 's' });
    assert.deepEqual(parameterMessage(7), { case: 'int64Param', value: 7n });
    assert.deepEqual(parameterMessage(0.5), { case: 'doubleParam', value: 0.5 });
    assert.deepEqual(parameterMessage(-(2n ** 63n)), { case: 'int64Param', value: -(2n ** 63n) });
    assert.deepEqual(parameterMessage(2n ** 64n - 1n), { case: 'uint64Param', value: 2n ** 64n - 1n });
  });

  test("a ModelInferRequest as Triton's clients send it: raw contents in input order", () => {
    const data = new Int32Array([1, 2]);
    const message = encodeModelInferRequest(
      'm',
      [prepareInput({ name: 'A', datatype: 'INT32', shape: [1, 2], data }), prepareInput({ name: 'S', datatype: 'BYTES', shape: [1], data: ['hi'] })],
      { version: 3, id: 'r', priority: 1, sequenceId: 'corr-7', sequenceEnd: true, outputs: [{ name: 'O', classCount: 2 }] },
    );
    const parameter = (parameterChoice: InferParameter['parameterChoice']) => create(InferParameterSchema, { parameterChoice });
    assert.deepEqual({ ...message, rawInputContents: [] }, create(ModelInferRequestSchema, {
      modelName: 'm',
      modelVersion: '3',
      id: 'r',
      parameters: {
        priority: parameter({ case: 'uint64Param', value: 1n }),
        sequence_id: parameter({ case: 'stringParam', value: 'corr-7' }),
        sequence_start: parameter({ case: 'boolParam', value: false }),
        sequence_end: parameter({ case: 'boolParam', value: true }),
      },
      inputs: [
        { name: 'A', datatype: 'INT32', shape: [1n, 2n] },
        { name: 'S', datatype: 'BYTES', shape: [1n] },
      ],
      outputs: [{ name: 'O', parameters: { classification: parameter({ case: 'int64Param', value: 2n }) } }],
    }));
    const raw = message.rawInputContents;
    assert.equal(raw[0]!.buffer, data.buffer, 'no copy');
    assert.deepEqual([...raw[1]!], [2, 0, 0, 0, 0x68, 0x69]);
  });

  test('responses in raw contents, or in typed contents as some servers send them', () => {
    const fromRaw = decodeModelInferResponse(create(ModelInferResponseSchema, {
      modelName: 'm',
      modelVersion: '1',
      id: 'r',
      parameters: { big: { parameterChoice: { case: 'uint64Param', value: 2n ** 64n - 1n } } },
      outputs: [{ name: 'A', datatype: 'FP64', shape: [2n] }],
      rawOutputContents: [new Uint8Array(new Float64Array([0.5, -2]).buffer)],
    }));
    assert.deepEqual(fromRaw.data('A', 'FP64'), new Float64Array([0.5, -2]));
    assert.deepEqual(fromRaw.output('A').shape, [2]);
    assert.deepEqual(fromRaw.parameters, { big: 2n ** 64n - 1n });
    const fromContents = decodeModelInferResponse(create(ModelInferResponseSchema, {
      modelName: 'm',
      outputs: [
        { name: 'I', datatype: 'INT64', shape: [2n], contents: { int64Contents: [-(2n ** 63n), 5n] } },
        { name: 'B', datatype: 'BOOL', shape: [2n], contents: { boolContents: [true, false] } },
        { name: 'S', datatype: 'BYTES', shape: [1n], contents: { bytesContents: [Buffer.from('x')] } },
      ],
    }));
    assert.deepEqual(fromContents.data('I', 'INT64'), new BigInt64Array([-(2n ** 63n), 5n]));
    assert.deepEqual(fromContents.data('B', 'BOOL'), new Uint8Array([1, 0]));
    assert.deepEqual(fromContents.strings('S'), ['x']);
  });
});
