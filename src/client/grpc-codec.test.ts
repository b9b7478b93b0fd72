import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decodeModelInferResponse, encodeModelInferRequest, parameterMessage } from './grpc-codec.js';
import { prepareInput } from './infer-input.js';

describe('the gRPC client codec', () => {
  test('parameters as InferParameter messages', () => {
    assert.deepEqual(parameterMessage(true), { bool_param: true });
    assert.deepEqual(parameterMessage('s'), { string_param: 's' });
    assert.deepEqual(parameterMessage(7), { int64_param: '7' });
    assert.deepEqual(parameterMessage(0.5), { double_param: 0.5 });
    assert.deepEqual(parameterMessage(-(2n ** 63n)), { int64_param: '-9223372036854775808' });
    assert.deepEqual(parameterMessage(2n ** 64n - 1n), { uint64_param: '18446744073709551615' });
  });

  test("a ModelInferRequest as Triton's clients send it: raw contents in input order", () => {
    const data = new Int32Array([1, 2]);
    const message = encodeModelInferRequest(
      'm',
      [prepareInput({ name: 'A', datatype: 'INT32', shape: [1, 2], data }), prepareInput({ name: 'S', datatype: 'BYTES', shape: [1], data: ['hi'] })],
      { version: 3, id: 'r', priority: 1, sequenceId: 'corr-7', sequenceEnd: true, outputs: [{ name: 'O', classCount: 2 }] },
    ) as Record<string, unknown>;
    const raw = message.raw_input_contents as Buffer[];
    assert.deepEqual({ ...message, raw_input_contents: undefined }, {
      model_name: 'm',
      model_version: '3',
      id: 'r',
      parameters: {
        priority: { uint64_param: '1' },
        sequence_id: { string_param: 'corr-7' },
        sequence_start: { bool_param: false },
        sequence_end: { bool_param: true },
      },
      inputs: [
        { name: 'A', datatype: 'INT32', shape: [1, 2], parameters: {} },
        { name: 'S', datatype: 'BYTES', shape: [1], parameters: {} },
      ],
      outputs: [{ name: 'O', parameters: { classification: { int64_param: '2' } } }],
      raw_input_contents: undefined,
    });
    assert.equal(raw[0]!.buffer, data.buffer, 'no copy');
    assert.deepEqual([...raw[1]!], [2, 0, 0, 0, 0x68, 0x69]);
  });

  test('responses in raw contents, or in typed contents as some servers send them', () => {
    const fromRaw = decodeModelInferResponse({
      model_name: 'm',
      model_version: '1',
      id: 'r',
      parameters: { big: { parameter_choice: 'uint64_param', uint64_param: '18446744073709551615' } },
      outputs: [{ name: 'A', datatype: 'FP64', shape: ['2'], parameters: {} }],
      raw_output_contents: [Buffer.from(new Float64Array([0.5, -2]).buffer)],
    });
    assert.deepEqual(fromRaw.data('A', 'FP64'), new Float64Array([0.5, -2]));
    assert.deepEqual(fromRaw.output('A').shape, [2]);
    assert.deepEqual(fromRaw.parameters, { big: 2n ** 64n - 1n });
    const fromContents = decodeModelInferResponse({
      model_name: 'm',
      outputs: [
        { name: 'I', datatype: 'INT64', shape: ['2'], contents: { int64_contents: ['-9223372036854775808', '5'] } },
        { name: 'B', datatype: 'BOOL', shape: ['2'], contents: { bool_contents: [true, false] } },
        { name: 'S', datatype: 'BYTES', shape: ['1'], contents: { bytes_contents: [Buffer.from('x')] } },
      ],
      raw_output_contents: [],
    });
    assert.deepEqual(fromContents.data('I', 'INT64'), new BigInt64Array([-(2n ** 63n), 5n]));
    assert.deepEqual(fromContents.data('B', 'BOOL'), new Uint8Array([1, 0]));
    assert.deepEqual(fromContents.strings('S'), ['x']);
  });
});
