import assert from 'node:assert/strict';
import fc from 'fast-check';
import { tensorDataFromBytes } from '../../../src/frontends/tensor-bytes.js';
import { type CutElement, deserializeBytesSliced } from '../../../src/kernel/bytes-slices.js';
import { deserializeBytes, serializeBytes } from '../../../src/protocol/tensor-data.js';
import { dataType } from '../arbitraries.js';
import { type FuzzTarget, expectClientErrorAsync } from '../fuzz-target.js';

const PARSER = 'BYTES tensor layout (tensor-data.ts, tensor-bytes.ts)';
const SOURCE = { sizePhrase: 'binary_data_size is' };

/** Bytes that look like the layout: length prefixes, some true, some too long, cut anywhere. */
const nearlySerialized = fc
  .tuple(fc.array(fc.uint8Array({ maxLength: 12 }), { maxLength: 6 }), fc.nat(), fc.nat(), fc.integer({ min: 0, max: 0xffffffff }))
  .map(([elements, cut, at, length]) => {
    const bytes = Buffer.from(serializeBytes(elements));
    if (bytes.byteLength >= 4) bytes.writeUInt32LE(length, (at % (bytes.byteLength - 3)));
    return bytes.subarray(0, bytes.byteLength === 0 ? 0 : cut % (bytes.byteLength + 1));
  });

export const bytesTensorTargets: readonly FuzzTarget[] = [
  {
    parser: PARSER,
    name: 'arbitrary and nearly serialized bytes: the elements, or a reason (never an exception)',
    property: () =>
      fc.property(fc.oneof(fc.uint8Array({ maxLength: 64 }), nearlySerialized), (bytes) => {
        const result = deserializeBytes(bytes);
        if (typeof result === 'string') return;
        let total = 0;
        for (const element of result) total += 4 + element.byteLength;
        assert.equal(total, bytes.byteLength, 'the elements and their prefixes cover every byte');
      }),
  },
  {
    parser: PARSER,
    name: 'arbitrary and nearly serialized bytes, split for a request: the whole elements and how the last one is cut cover every byte',
    property: () =>
      fc.asyncProperty(fc.oneof(fc.uint8Array({ maxLength: 64 }), nearlySerialized), async (bytes) => {
        const { elements, cut } = await deserializeBytesSliced(bytes);
        let total = 0;
        for (const element of elements) total += 4 + element.byteLength;
        if (cut?.part === 'length') total += cut.available;
        if (cut?.part === 'string') total += 4 + cut.available;
        assert.equal(total, bytes.byteLength);
        if (cut?.part === 'length') assert.ok(cut.available > 0 && cut.available < 4, 'a cut length has 1 to 3 bytes');
        if (cut?.part === 'string') assert.ok(cut.available < cut.length, 'a cut string has fewer bytes than its length');
      }),
  },
  {
    parser: PARSER,
    name: 'round trip: any list of byte strings serializes and splits back to the same list',
    property: () =>
      fc.property(fc.array(fc.uint8Array({ maxLength: 300 }), { maxLength: 10 }), (elements) => {
        const split = deserializeBytes(serializeBytes(elements));
        assert.ok(typeof split !== 'string', String(split));
        assert.deepEqual(split.map((element) => Buffer.from(element)), elements.map((element) => Buffer.from(element)));
      }),
  },
  {
    parser: PARSER,
    name: 'tensor bytes of any size for any type and shape: the tensor or INVALID_ARG',
    property: () =>
      fc.asyncProperty(dataType, fc.array(fc.oneof(fc.nat({ max: 6 }), fc.constantFrom(2 ** 31, 2 ** 53 - 1)), { maxLength: 3 }), fc.oneof(fc.uint8Array({ maxLength: 64 }), nearlySerialized), fc.nat({ max: 7 }), async (datatype, shape, bytes, offset) => {
        // An odd offset into a larger buffer, as a tensor inside a request body is.
        const body = Buffer.concat([Buffer.alloc(offset), bytes]).subarray(offset);
        await expectClientErrorAsync(() => tensorDataFromBytes('X', datatype, shape, body, SOURCE, { modelName: 'm', id: '' }, new Map<string, CutElement>()));
      }),
  },
];
