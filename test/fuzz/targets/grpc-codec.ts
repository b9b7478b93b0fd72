import assert from 'node:assert/strict';
import { type MessageInitShape, create } from '@bufbuild/protobuf';
import fc from 'fast-check';
import { encodeModelInferRequest } from '../../../src/client/grpc-codec.js';
import { prepareInput } from '../../../src/client/infer-input.js';
import { decodeModelInferRequest } from '../../../src/frontends/grpc/infer-codec.js';
import { ModelInferRequestSchema } from '../../../src/protocol/gen/grpc_service_pb.js';
import { deserializeMessage, serializeMessage } from '../../../src/protocol/grpc-service.js';
import { DATA_TYPE_NAMES } from '../../../src/protocol/data-type.js';
import { type GeneratedTensor, anyString, byteMutation, comparableData, mutateBytes, parameterKey, parameterValue, tensors } from '../arbitraries.js';
import { type FuzzTarget, expectClientErrorAsync } from '../fuzz-target.js';

const PARSER = 'gRPC codec (grpc/infer-codec.ts, ModelInferRequest fromBinary)';

/**
 * The server's path for one ModelInferRequest: the generated message's fromBinary (as grpc-js calls it),
 * then the codec. fromBinary may refuse bytes that are not a message with a plain Error, which grpc-js
 * answers itself; what it accepts, the codec decodes or refuses with INVALID_ARG.
 */
async function decodeBytes(bytes: Uint8Array): Promise<void> {
  let message;
  try {
    message = deserializeMessage(ModelInferRequestSchema, bytes);
  } catch (error) {
    assert.ok(error instanceof Error, `fromBinary threw ${String(error)}`);
    return;
  }
  await expectClientErrorAsync(() => decodeModelInferRequest(message));
}

const validInputs = tensors({ isUtf8: false });
const encodeValid = (inputs: readonly GeneratedTensor[]): Buffer =>
  serializeMessage(ModelInferRequestSchema, encodeModelInferRequest('m', inputs.map((input) => prepareInput({ ...input, data: input.data as never })), {}));

const int64 = fc.oneof(fc.bigInt({ min: -2n, max: 8n }), fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }));

/** Typed contents of every field, each any length. */
const contents = fc.record(
  {
    boolContents: fc.array(fc.boolean(), { maxLength: 4 }),
    intContents: fc.array(fc.integer(), { maxLength: 4 }),
    int64Contents: fc.array(int64, { maxLength: 4 }),
    uintContents: fc.array(fc.nat(), { maxLength: 4 }),
    uint64Contents: fc.array(fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), { maxLength: 4 }),
    fp32Contents: fc.array(fc.float(), { maxLength: 4 }),
    fp64Contents: fc.array(fc.double(), { maxLength: 4 }),
    bytesContents: fc.array(fc.uint8Array({ maxLength: 4 }), { maxLength: 4 }),
  },
  { requiredKeys: [] },
);

const parameterMessage = parameterValue.map((value) => ({
  parameterChoice:
    typeof value === 'boolean'
      ? { case: 'boolParam' as const, value }
      : typeof value === 'string'
        ? { case: 'stringParam' as const, value }
        : typeof value === 'bigint'
          ? value >= 0n
            ? { case: 'uint64Param' as const, value }
            : { case: 'int64Param' as const, value }
          : { case: 'doubleParam' as const, value },
}));

/** A ModelInferRequest whose every field may disagree with the others: shapes, types, contents, raw sizes. */
export const looseRequest: fc.Arbitrary<MessageInitShape<typeof ModelInferRequestSchema>> = fc.record({
  modelName: fc.constantFrom('m', ''),
  modelVersion: fc.oneof(fc.constantFrom('', '1', '-1', '007', '18446744073709551616', ' 1', '1a'), anyString),
  id: anyString,
  parameters: fc.dictionary(parameterKey, parameterMessage, { maxKeys: 2 }),
  inputs: fc.array(
    fc.record({
      name: anyString,
      datatype: fc.oneof(fc.constantFrom(...DATA_TYPE_NAMES), anyString),
      shape: fc.array(int64, { maxLength: 3 }),
      parameters: fc.dictionary(parameterKey, parameterMessage, { maxKeys: 2 }),
      contents: fc.option(contents, { nil: undefined }),
    }),
    { maxLength: 3 },
  ),
  outputs: fc.array(fc.record({ name: anyString }), { maxLength: 2 }),
  rawInputContents: fc.array(fc.uint8Array({ maxLength: 40 }), { maxLength: 4 }),
});

export const grpcCodecTargets: readonly FuzzTarget[] = [
  {
    parser: PARSER,
    name: 'arbitrary bytes: fromBinary refuses them with an Error, or the codec decodes or refuses with INVALID_ARG',
    property: () => fc.asyncProperty(fc.uint8Array({ maxLength: 128 }), decodeBytes),
  },
  {
    parser: PARSER,
    name: 'valid ModelInferRequest bytes with bytes deleted, inserted, duplicated, swapped or flipped',
    property: () => fc.asyncProperty(validInputs, fc.array(byteMutation, { minLength: 1, maxLength: 3 }), (inputs, mutations) => decodeBytes(mutateBytes(encodeValid(inputs), mutations))),
  },
  {
    parser: PARSER,
    name: 'messages whose shapes, datatypes, typed contents and raw_input_contents sizes disagree: a request or INVALID_ARG',
    property: () => fc.asyncProperty(looseRequest, (init) => decodeBytes(serializeMessage(ModelInferRequestSchema, create(ModelInferRequestSchema, init)))),
  },
  {
    parser: PARSER,
    name: 'round trip: the client codec encodes, fromBinary and the server codec decode the same tensors',
    property: () =>
      fc.asyncProperty(validInputs, async (inputs) => {
        const request = await decodeModelInferRequest(deserializeMessage(ModelInferRequestSchema, encodeValid(inputs)));
        assert.deepEqual(
          request.inputs.map((input) => [input.name, input.dataType, input.shape, comparableData(input.data)]),
          inputs.map((input) => [input.name, input.datatype, input.shape, comparableData(input.data)]),
        );
      }),
  },
];
