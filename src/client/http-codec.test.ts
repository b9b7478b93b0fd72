import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decodeHttpInferResponse, encodeHttpInferRequest, jsonText } from './http-codec.js';
import { prepareInput } from './infer-input.js';
import type { InferInput, InferOptions } from './types.js';

const encode = (inputs: InferInput[], options: InferOptions, isBinary: boolean) => {
  const encoded = encodeHttpInferRequest(inputs.map(prepareInput), options, isBinary);
  const header = Buffer.from(encoded.chunks[0]!).toString();
  return { ...encoded, header: JSON.parse(header.replace(/(-?\d{16,})/g, '"$1"')) as Record<string, unknown>, headerText: header };
};

describe('the HTTP client codec', () => {
  test('jsonText writes bigints digit for digit and non-finite floats bare', () => {
    assert.equal(jsonText({ a: [1n << 64n, -3n], b: [Number.NaN, Infinity, -Infinity, 0.5], c: undefined, d: 'x"y', e: null, f: true }), '{"a":[18446744073709551616,-3],"b":[NaN,Infinity,-Infinity,0.5],"d":"x\\"y","e":null,"f":true}');
  });

  test('JSON data keeps the sign of a negative zero (found by test/fuzz: -0 was written as 0)', () => {
    const encoded = encode([{ name: 'X', datatype: 'FP32', shape: [2], data: new Float32Array([-0, 0]) }], {}, false);
    assert.match(encoded.headerText, /"data":\[-0\.0,0\]/);
    const [negative, positive] = (encoded.header.inputs as Array<{ data: number[] }>)[0]!.data;
    assert.ok(Object.is(negative, -0) && Object.is(positive, 0));
  });

  test('binary: tensors after the header as views of the caller\'s arrays; every output binary', () => {
    const data = new Float32Array([1, 2, 3]);
    const encoded = encode([{ name: 'X', datatype: 'FP32', shape: [1, 3], data }], { id: 'r1' }, true);
    assert.deepEqual(encoded.header, {
      id: 'r1',
      parameters: { binary_data_output: true },
      inputs: [{ name: 'X', shape: [1, 3], datatype: 'FP32', parameters: { binary_data_size: 12 } }],
    });
    assert.equal(encoded.headerLength, encoded.chunks[0]!.byteLength);
    assert.equal(encoded.chunks[1]!.buffer, data.buffer, 'no copy');
    assert.equal(encoded.byteLength, encoded.headerLength! + 12);
  });

  test("request parameters under Triton's names; requested outputs with classification and their own format", () => {
    const encoded = encode(
      [{ name: 'X', datatype: 'INT64', shape: [2], data: [2n ** 60n, -1n] }],
      {
        priority: 2,
        timeoutUs: 1000,
        sequenceId: 2n ** 63n - 1n,
        sequenceStart: true,
        parameters: { custom: 'v' },
        outputs: [{ name: 'A', classCount: 3 }, { name: 'B', binaryData: true }],
      },
      false,
    );
    assert.deepEqual(encoded.header, {
      parameters: { custom: 'v', priority: 2, timeout: 1000, sequence_id: '9223372036854775807', sequence_start: true, sequence_end: false },
      inputs: [{ name: 'X', shape: [2], datatype: 'INT64', data: ['1152921504606846976', -1] }],
      outputs: [{ name: 'A', parameters: { classification: 3 } }, { name: 'B', parameters: { binary_data: true } }],
    });
    assert.equal(encoded.headerLength, undefined);
    assert.match(encoded.headerText, /"sequence_id":9223372036854775807,/);
    assert.throws(() => encode([], { sequenceEnd: true }, true), { name: 'ClientError', message: 'sequenceStart and sequenceEnd need a sequenceId' });
  });

  test('JSON: BOOL as booleans, BYTES as strings, FP16 still binary', () => {
    const encoded = encode(
      [
        { name: 'B', datatype: 'BOOL', shape: [2], data: new Uint8Array([1, 0]) },
        { name: 'S', datatype: 'BYTES', shape: [1], data: [new Uint8Array([0x68, 0x69])] },
        { name: 'H', datatype: 'FP16', shape: [1], data: new Uint16Array([0x3c00]) },
      ],
      {},
      false,
    );
    assert.deepEqual(encoded.header.inputs, [
      { name: 'B', shape: [2], datatype: 'BOOL', data: [true, false] },
      { name: 'S', shape: [1], datatype: 'BYTES', data: ['hi'] },
      { name: 'H', shape: [1], datatype: 'FP16', parameters: { binary_data_size: 2 } },
    ]);
    assert.equal(encoded.headerLength, encoded.chunks[0]!.byteLength);
  });

  test('decoding: binary outputs in order after the header, JSON outputs, big integers exact', async () => {
    const header = Buffer.from(
      '{"model_name":"m","model_version":"2","id":"r","parameters":{"p":1},"outputs":[' +
        '{"name":"A","datatype":"INT32","shape":[2],"parameters":{"binary_data_size":8}},' +
        '{"name":"B","datatype":"UINT64","shape":[1,2],"data":[18446744073709551615,7]},' +
        '{"name":"C","datatype":"BYTES","shape":[1],"parameters":{"binary_data_size":6}},' +
        '{"name":"D","datatype":"FP32","shape":[2],"data":[NaN,-Infinity]}]}',
    );
    const body = Buffer.concat([header, Buffer.from(new Int32Array([-5, 6]).buffer), Buffer.from([2, 0, 0, 0, 0x6f, 0x6b])]);
    const result = await decodeHttpInferResponse(body, header.byteLength);
    assert.equal(result.modelName, 'm');
    assert.equal(result.modelVersion, '2');
    assert.equal(result.id, 'r');
    assert.deepEqual(result.parameters, { p: 1 });
    assert.deepEqual(result.data('A', 'INT32'), new Int32Array([-5, 6]));
    assert.deepEqual(result.data('B', 'UINT64'), new BigUint64Array([2n ** 64n - 1n, 7n]));
    assert.deepEqual(result.strings('C'), ['ok']);
    assert.deepEqual(result.data('D', 'FP32'), new Float32Array([Number.NaN, -Infinity]));
    assert.deepEqual(result.output('A').parameters, {});
  });

  test('a response that does not add up is a ClientError', async () => {
    const header = Buffer.from('{"model_name":"m","outputs":[{"name":"A","datatype":"INT32","shape":[2],"parameters":{"binary_data_size":8}}]}');
    await assert.rejects(decodeHttpInferResponse(Buffer.concat([header, Buffer.alloc(4)]), header.byteLength), {
      name: 'ClientError',
      message: "output 'A': binary_data_size 8 runs past the end of the response (4 bytes remain)",
    });
    await assert.rejects(decodeHttpInferResponse(Buffer.from('{"outputs": ['), undefined), (error: Error) => error.name === 'ClientError' && /not valid JSON/.test(error.message));
  });
});
