import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { ModelInferRequestSchema, ModelInferResponseSchema, ModelStreamInferResponseSchema } from './gen/grpc_service_pb.js';
import { deserializeMessage, healthService, inferenceService, serializeMessage, undecodableReason } from './grpc-service.js';

const TENSOR_BYTES = 600 * 1024;

function bigRequest() {
  return create(ModelInferRequestSchema, {
    modelName: 'big',
    id: 'r',
    parameters: { priority: { parameterChoice: { case: 'uint64Param', value: 1n } } },
    inputs: [
      { name: 'A', datatype: 'UINT8', shape: [1n, BigInt(TENSOR_BYTES)] },
      { name: 'B', datatype: 'UINT8', shape: [1n, 3n] },
    ],
    rawInputContents: [new Uint8Array(TENSOR_BYTES).map((_, i) => i % 251), Uint8Array.of(1, 2, 3)],
  });
}

describe('the gRPC service definitions', () => {
  test('a message of a request stream always decodes: bytes that are none give an empty stand-in with the reason; unary requests throw', () => {
    const garbage = Buffer.from([0x95, 0x35, 0x68, 0xf7]);
    const standIn = inferenceService.modelStreamInfer.requestDeserialize(garbage);
    assert.deepEqual(standIn, create(ModelInferRequestSchema));
    assert.match(undecodableReason(standIn) ?? '', /\S/);
    const valid = inferenceService.modelStreamInfer.requestDeserialize(serializeMessage(ModelInferRequestSchema, bigRequest()));
    assert.equal(undecodableReason(valid), undefined);
    assert.throws(() => inferenceService.modelInfer.requestDeserialize(garbage));
  });


  test('paths and streaming kinds from the .proto, under the generated and the .proto names', () => {
    assert.equal(inferenceService.modelInfer.path, '/inference.GRPCInferenceService/ModelInfer');
    assert.equal(inferenceService.modelInfer.originalName, 'ModelInfer');
    assert.deepEqual([inferenceService.modelInfer.requestStream, inferenceService.modelInfer.responseStream], [false, false]);
    assert.deepEqual([inferenceService.modelStreamInfer.requestStream, inferenceService.modelStreamInfer.responseStream], [true, true]);
    assert.equal(healthService.watch.path, '/grpc.health.v1.Health/Watch');
    assert.deepEqual([healthService.watch.requestStream, healthService.watch.responseStream], [false, true]);
    assert.equal(Object.keys(inferenceService).length, 20);
  });

  test('a 600 KB ModelInferRequest decodes to views of the received Buffer, not copies', () => {
    const wire = Buffer.from(toBinary(ModelInferRequestSchema, bigRequest()));
    const decoded = inferenceService.modelInfer.requestDeserialize(wire);
    const [a, b] = decoded.rawInputContents;
    assert.equal(a!.buffer, wire.buffer);
    assert.equal(b!.buffer, wire.buffer);
    assert.deepEqual(decoded.rawInputContents.map((bytes) => new Uint8Array(bytes)), bigRequest().rawInputContents);
    assert.deepEqual({ ...decoded, rawInputContents: [] }, { ...bigRequest(), rawInputContents: [] });
  });

  test('raw contents are written apart from the other fields and read back the same', () => {
    const request = bigRequest();
    const wire = serializeMessage(ModelInferRequestSchema, request);
    assert.ok(Buffer.isBuffer(wire));
    assert.equal(wire.byteLength, toBinary(ModelInferRequestSchema, request).byteLength);
    assert.deepEqual(fromBinary(ModelInferRequestSchema, new Uint8Array(wire)), request);
    const empty = create(ModelInferResponseSchema, { modelName: 'm', rawOutputContents: [new Uint8Array(0)] });
    assert.deepEqual(deserializeMessage(ModelInferResponseSchema, new Uint8Array(serializeMessage(ModelInferResponseSchema, empty))), empty);
  });

  test("a stream response's nested infer_response keeps its raw contents", () => {
    const inferResponse = create(ModelInferResponseSchema, {
      modelName: 'm',
      outputs: [{ name: 'O', datatype: 'UINT8', shape: [200n] }],
      rawOutputContents: [new Uint8Array(200).fill(7)],
    });
    for (const message of [
      create(ModelStreamInferResponseSchema, { inferResponse }),
      create(ModelStreamInferResponseSchema, { errorMessage: 'failed', inferResponse: { id: 'x' } }),
      create(ModelStreamInferResponseSchema, { errorMessage: 'failed' }),
    ]) {
      const wire = serializeMessage(ModelStreamInferResponseSchema, message);
      assert.equal(wire.byteLength, toBinary(ModelStreamInferResponseSchema, message).byteLength);
      assert.deepEqual(fromBinary(ModelStreamInferResponseSchema, new Uint8Array(wire)), message);
    }
  });
});
