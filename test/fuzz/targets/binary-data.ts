import fc from 'fast-check';
import { decodeInferRequest, decodeRawInferRequest } from '../../../src/frontends/http/infer-codec.js';
import type { ModelMetadata } from '../../../src/protocol/metadata.js';
import { dataType, jsonText, jsonValue } from '../arbitraries.js';
import { type FuzzTarget, expectClientErrorAsync } from '../fuzz-target.js';

const PARSER = 'binary data extension (infer-codec.ts, tensor-bytes.ts)';
const TARGET = { modelName: 'm', modelVersion: undefined };

/** A binary_data_size as a client might write it: fitting, off by a little, huge, negative, fractional or not a number. */
const binaryDataSize = fc.oneof(
  fc.nat({ max: 64 }),
  fc.constantFrom(-1, 0.5, 2 ** 32, 2 ** 53 - 1, 1e21, 1e300, '8', true, null),
  jsonValue,
);

/** An input announcing binary data; its shape and type need not agree with the size. */
const binaryInput = fc.record({
  name: fc.constantFrom('A', 'B', ''),
  datatype: dataType,
  shape: fc.array(fc.oneof(fc.nat({ max: 8 }), fc.constantFrom(-1, 2 ** 40, 1e21)), { maxLength: 3 }),
  parameters: fc.record({ binary_data_size: binaryDataSize }, { requiredKeys: [] }),
});

export const binaryDataTargets: readonly FuzzTarget[] = [
  {
    parser: PARSER,
    name: 'any Inference-Header-Content-Length, binary_data_size and body size: a request or INVALID_ARG',
    property: () =>
      fc.asyncProperty(
        fc.array(binaryInput, { minLength: 1, maxLength: 3 }),
        fc.uint8Array({ maxLength: 96 }),
        fc.oneof(fc.constant<'exact'>('exact'), fc.constant(undefined), fc.nat({ max: 400 }), fc.constantFrom(2 ** 53 - 1, 1e21)),
        async (inputs, tail, headerLengthChoice) => {
          const header = Buffer.from(jsonText({ inputs }));
          const headerLength = headerLengthChoice === 'exact' ? header.byteLength : headerLengthChoice;
          await expectClientErrorAsync(() => decodeInferRequest(Buffer.concat([header, tail]), TARGET, headerLength), ['INVALID_ARG', 'UNSUPPORTED']);
        },
      ),
  },
  {
    parser: PARSER,
    name: 'raw binary requests (Inference-Header-Content-Length: 0) of any size for any single-input model: a request or INVALID_ARG',
    property: () =>
      fc.asyncProperty(
        dataType,
        fc.array(fc.oneof(fc.nat({ max: 8 }), fc.constant(-1)), { maxLength: 3 }),
        fc.boolean(),
        fc.uint8Array({ maxLength: 96 }),
        async (datatype, shape, isBatching, body) => {
          const metadata: ModelMetadata = { name: 'm', versions: ['1'], platform: 'p', inputs: [{ name: 'X', datatype, shape }], outputs: [] };
          await expectClientErrorAsync(() => decodeRawInferRequest(Buffer.from(body), TARGET, metadata, isBatching));
        },
      ),
  },
];
