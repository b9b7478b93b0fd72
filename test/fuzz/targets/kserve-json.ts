import assert from 'node:assert/strict';
import fc from 'fast-check';
import { encodeHttpInferRequest } from '../../../src/client/http-codec.js';
import { prepareInput } from '../../../src/client/infer-input.js';
import { decodeInferRequest } from '../../../src/frontends/http/infer-codec.js';
import { JsonBodyError, parseJsonBody } from '../../../src/protocol/json-body.js';
import type { TensorData } from '../../../src/protocol/tensor-data.js';
import {
  type GeneratedTensor,
  anyString,
  byteMutation,
  comparableData,
  jsonMutation,
  jsonText,
  jsonValue,
  mutateBytes,
  mutateJson,
  parameterKey,
  parameterValue,
  parameters,
  tensors,
} from '../arbitraries.js';
import { type FuzzTarget, expectClientErrorAsync } from '../fuzz-target.js';

const PARSER = 'KServe JSON (infer-codec.ts, json-body.ts)';
const TARGET = { modelName: 'm', modelVersion: undefined };
/** The errors a request body may earn: INVALID_ARG, and UNSUPPORTED for the shared memory parameters. */
const STATUSES = ['INVALID_ARG', 'UNSUPPORTED'] as const;

const decode = (body: Uint8Array, headerLength?: number) => expectClientErrorAsync(() => decodeInferRequest(Buffer.from(body), TARGET, headerLength), STATUSES);

/** A tensor's data as the JSON `data` of a request: numbers, bigints, booleans or strings. */
function jsonData(tensor: GeneratedTensor): unknown[] {
  const data: TensorData = tensor.data;
  if (Array.isArray(data)) return data.map((element) => Buffer.from(element).toString('utf8'));
  if (tensor.datatype === 'BOOL') return Array.from(data as Uint8Array, (value) => value !== 0);
  return Array.from(data as Float64Array);
}

/** A valid inference request as its JSON object (tensors as JSON `data`, 64-bit integers digit for digit). */
const validRequest = fc
  .record({
    id: fc.option(fc.string({ unit: 'grapheme', maxLength: 8 }), { nil: undefined }),
    parameters,
    inputs: tensors({ isUtf8: true }),
    outputs: fc.option(fc.array(fc.record({ name: anyString, binary: fc.option(fc.boolean(), { nil: undefined }) }), { maxLength: 2 }), { nil: undefined }),
  })
  .map((request) => ({
    ...(request.id !== undefined ? { id: request.id } : {}),
    parameters: request.parameters,
    inputs: request.inputs.map((input) => ({ name: input.name, datatype: input.datatype, shape: input.shape, data: jsonData(input) })),
    ...(request.outputs !== undefined
      ? { outputs: request.outputs.map((output) => ({ name: output.name, ...(output.binary !== undefined ? { parameters: { binary_data: output.binary } } : {}) })) }
      : {}),
  }));

/** Inputs, options and mode that the client library encodes without complaint. */
const clientRequest = fc.record({
  inputs: tensors({ isUtf8: true }),
  id: fc.option(fc.string({ unit: 'grapheme', maxLength: 8 }), { nil: undefined }),
  parameters,
  inputParameters: fc.dictionary(parameterKey, parameterValue, { maxKeys: 2 }),
  isBinary: fc.boolean(),
});

export const kserveJsonTargets: readonly FuzzTarget[] = [
  {
    parser: PARSER,
    name: 'arbitrary JSON values: a request or INVALID_ARG/UNSUPPORTED',
    property: () => fc.asyncProperty(jsonValue, async (value) => void (await decode(Buffer.from(jsonText(value))))),
  },
  {
    parser: PARSER,
    name: 'arbitrary bytes: INVALID_ARG',
    property: () => fc.asyncProperty(fc.oneof(fc.uint8Array({ maxLength: 64 }), anyString.map((text) => Buffer.from(text))), async (body) => void (await decode(body))),
  },
  {
    parser: PARSER,
    name: 'valid requests with fields removed, replaced, wrapped or added',
    property: () =>
      fc.asyncProperty(validRequest, fc.array(jsonMutation, { minLength: 1, maxLength: 3 }), async (request, mutations) => {
        const mutated = mutations.reduce<unknown>(mutateJson, request);
        await decode(Buffer.from(jsonText(mutated)));
      }),
  },
  {
    parser: PARSER,
    name: 'valid request text with bytes deleted, inserted, duplicated, swapped or flipped (duplicate keys included)',
    property: () =>
      fc.asyncProperty(validRequest, fc.array(byteMutation, { minLength: 1, maxLength: 3 }), async (request, mutations) => {
        const body = mutateBytes(Buffer.from(jsonText(request)), mutations);
        await decode(body);
      }),
  },
  {
    parser: PARSER,
    name: 'round trip: the client codec encodes, the server codec decodes the same tensors, id and parameters',
    property: () =>
      fc.asyncProperty(clientRequest, async ({ inputs, id, parameters, inputParameters, isBinary }) => {
        const prepared = inputs.map((input) => prepareInput({ ...input, data: input.data as never, parameters: { ...inputParameters } }));
        const encoded = encodeHttpInferRequest(prepared, { ...(id !== undefined ? { id } : {}), parameters }, isBinary);
        const { request, encoding } = await decodeInferRequest(Buffer.concat(encoded.chunks), TARGET, encoded.headerLength);
        assert.equal(request.id, id ?? '');
        assert.deepEqual(request.parameters, parameters);
        assert.equal(encoding.isBinaryByDefault, isBinary);
        assert.deepEqual(
          request.inputs.map((input) => [input.name, input.dataType, input.shape, comparableData(input.data), input.parameters]),
          inputs.map((input) => [input.name, input.datatype, input.shape, comparableData(input.data), { ...inputParameters }]),
        );
      }),
  },
  {
    parser: PARSER,
    name: 'any text: a JSON value or a JsonBodyError; JSON values read back exactly, integers beyond 2^53 as bigints',
    property: () =>
      fc.property(fc.oneof(anyString, jsonValue.map(jsonText)), fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }), (text, big) => {
        try {
          parseJsonBody(text, 'body');
        } catch (error) {
          assert.ok(error instanceof JsonBodyError, `expected a JsonBodyError, got ${String(error)}`);
        }
        const parsed = parseJsonBody(`{"v":${jsonText(text)},"n":[${big}]}`, 'body') as { v: unknown; n: unknown[] };
        assert.equal(parsed.v, text);
        assert.deepEqual(parsed.n, [Number.isSafeInteger(Number(big)) ? Number(big) : big]);
      }),
  },
];
