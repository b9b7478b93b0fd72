import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type InferResponse, NereidError } from '../../core/index.js';
import { decodeInferRequest, decodeInferRequestNow, decodeRawInferRequest, encodeInferResponse, encodeInferResponseNow } from './infer-codec.js';

const target = { modelName: 'm', modelVersion: undefined };

test('decodes JSON tensors, nested data, big integers, parameters and requested outputs', async () => {
  const body = Buffer.from(
    '{"id":"7","parameters":{"binary_data_output":true,"priority":2},' +
      '"inputs":[{"name":"A","shape":[2,2],"datatype":"INT64","data":[[1,-9223372036854775808],[9223372036854775807,4]]},' +
      '{"name":"S","shape":[2],"datatype":"BYTES","data":["x","é"]},{"name":"B","shape":[2],"datatype":"BOOL","data":[true,false]}],' +
      '"outputs":[{"name":"O","parameters":{"binary_data":false}}]}',
  );
  const { request, encoding } = await decodeInferRequest(body, target, undefined);
  assert.equal(request.id, '7');
  assert.deepEqual(request.parameters, { priority: 2 });
  assert.deepEqual([...(request.inputs[0]!.data as BigInt64Array)], [1n, -(2n ** 63n), 2n ** 63n - 1n, 4n]);
  assert.deepEqual((request.inputs[1]!.data as Uint8Array[]).map((e) => Buffer.from(e).toString()), ['x', 'é']);
  assert.deepEqual([...(request.inputs[2]!.data as Uint8Array)], [1, 0]);
  assert.deepEqual(request.outputs, [{ name: 'O', parameters: {} }]);
  assert.equal(encoding.isBinaryByDefault, true);
  assert.equal(encoding.isBinaryByOutput.get('O'), false);
});

test('binary inputs are views of the body, BYTES split by their length prefixes', async () => {
  const header = Buffer.from(
    '{"inputs":[{"name":"F","shape":[3],"datatype":"FP32","parameters":{"binary_data_size":12}},' +
      '{"name":"S","shape":[2],"datatype":"BYTES","parameters":{"binary_data_size":11}}]}',
  );
  const floats = Buffer.from(new Float32Array([1.5, -2, 3]).buffer);
  const strings = Buffer.from([2, 0, 0, 0, 0x68, 0x69, 1, 0, 0, 0, 0x21]);
  const body = Buffer.concat([header, floats, strings]);
  const { request } = await decodeInferRequest(body, target, header.byteLength);
  assert.deepEqual([...(request.inputs[0]!.data as Float32Array)], [1.5, -2, 3]);
  assert.deepEqual((request.inputs[1]!.data as Uint8Array[]).map((e) => Buffer.from(e).toString()), ['hi', '!']);
});

test('a raw request fills the single input of a batching model with a batch of one', async () => {
  const metadata = { name: 'm', versions: ['1'], platform: 'p', inputs: [{ name: 'X', datatype: 'INT32' as const, shape: [-1, -1] }], outputs: [] };
  const { request, encoding } = await decodeRawInferRequest(Buffer.from(new Int32Array([1, 2, 3]).buffer), target, metadata, true);
  assert.deepEqual(request.inputs[0]!.shape, [1, 3]);
  assert.deepEqual([...(request.inputs[0]!.data as Int32Array)], [1, 2, 3]);
  assert.equal(encoding.isBinaryByDefault, true);
});

test('encodes JSON and binary outputs with exact 64-bit integers', async () => {
  const response: InferResponse = {
    modelName: 'm',
    modelVersion: '1',
    id: 'x',
    parameters: {},
    outputs: [
      { name: 'I', dataType: 'UINT64', shape: [2], data: new BigUint64Array([2n ** 64n - 1n, 0n]) },
      { name: 'F', dataType: 'FP32', shape: [2], data: new Float32Array([0.5, Number.NaN]) },
      { name: 'B', dataType: 'INT16', shape: [2], data: new Int16Array([-1, 2]) },
    ],
  };
  const { headerLength, chunks } = await encodeInferResponse(response, { isBinaryByDefault: false, isBinaryByOutput: new Map([['B', true]]) });
  const json = Buffer.from(chunks[0]!).toString();
  assert.equal(
    json,
    '{"model_name":"m","model_version":"1","id":"x","outputs":[{"name":"I","datatype":"UINT64","shape":[2],"data":[18446744073709551615,0]},' +
      '{"name":"F","datatype":"FP32","shape":[2],"data":[0.5,NaN]},{"name":"B","datatype":"INT16","shape":[2],"parameters":{"binary_data_size":4}}]}',
  );
  assert.equal(headerLength, Buffer.byteLength(json));
  assert.deepEqual(Buffer.from(chunks[1]!), Buffer.from([0xff, 0xff, 2, 0]));
});

test('JSON outputs keep the sign of a negative zero (found by test/fuzz: -0 was written as 0)', async () => {
  const response: InferResponse = {
    modelName: 'm',
    modelVersion: '1',
    id: '',
    parameters: {},
    outputs: [{ name: 'F', dataType: 'FP64', shape: [2], data: new Float64Array([-0, 0]) }],
  };
  const { chunks } = await encodeInferResponse(response, { isBinaryByDefault: false, isBinaryByOutput: new Map() });
  const json = Buffer.from(chunks[0]!).toString();
  assert.equal(json, '{"model_name":"m","model_version":"1","outputs":[{"name":"F","datatype":"FP64","shape":[2],"data":[-0.0,0]}]}');
  assert.ok(Object.is((JSON.parse(json) as { outputs: Array<{ data: number[] }> }).outputs[0]!.data[0], -0));
});

test('a repeated request decodes in one step to the same header, and its response reuses the JSON made for the last one while it matches', () => {
  const header = Buffer.from('{"id":"r","inputs":[{"name":"F","shape":[1,2],"datatype":"FP32","parameters":{"binary_data_size":8}}],"parameters":{"binary_data_output":true}}');
  const bodyOf = (values: number[]): Buffer => Buffer.concat([header, Buffer.from(new Float32Array(values).buffer)]);
  const signal = new AbortController().signal;
  const first = decodeInferRequestNow(bodyOf([1, 2]), target, header.byteLength, signal)!;
  const second = decodeInferRequestNow(bodyOf([3, 4]), target, header.byteLength, signal)!;
  assert.equal(second.encoding, first.encoding);
  assert.equal(second.request.signal, signal);
  assert.deepEqual([...(second.request.inputs[0]!.data as Float32Array)], [3, 4]);
  const responseOf = (shape: number[], values: number[], id = 'r'): InferResponse => ({
    modelName: 'm',
    modelVersion: '1',
    id,
    parameters: {},
    outputs: [{ name: 'O', dataType: 'FP32', shape, data: new Float32Array(values) }],
  });
  const a = encodeInferResponseNow(responseOf([1, 2], [1, 2]), first.encoding)!;
  const b = encodeInferResponseNow(responseOf([1, 2], [5, 6]), first.encoding)!;
  assert.equal(b.chunks[0], a.chunks[0], 'the same JSON buffer');
  assert.deepEqual([...new Float32Array(Uint8Array.from(b.chunks[1]!).buffer)], [5, 6]);
  const expected = '{"model_name":"m","model_version":"1","id":"r","outputs":[{"name":"O","datatype":"FP32","shape":[1,2],"parameters":{"binary_data_size":8}}]}';
  assert.equal(Buffer.from(b.chunks[0]!).toString(), expected);
  assert.equal(b.headerLength, expected.length);
  for (const [changed, json] of [
    [responseOf([2, 1], [5, 6]), expected.replace('[1,2]', '[2,1]')],
    [responseOf([1, 2], [5, 6], 'q'), expected.replace('"id":"r"', '"id":"q"')],
    [{ ...responseOf([1, 2], [5, 6]), parameters: { sequence_id: 3 } }, expected.replace(',"outputs"', ',"parameters":{"sequence_id":3},"outputs"')],
  ] as const) {
    assert.equal(Buffer.from(encodeInferResponseNow(changed, first.encoding)!.chunks[0]!).toString(), json);
  }
  assert.equal(Buffer.from(encodeInferResponseNow(responseOf([1, 2], [7, 8]), first.encoding)!.chunks[0]!).toString(), expected);
});

test('a request with JSON data decodes in one step, as decodeInferRequest decodes it; BYTES binary data or shared memory do not', async () => {
  const signal = new AbortController().signal;
  const json = Buffer.from('{"id":"j","inputs":[{"name":"A","shape":[1,2],"datatype":"INT32","data":[[1,2]]},{"name":"S","shape":[1],"datatype":"BYTES","data":["ab"]}]}');
  const now = decodeInferRequestNow(json, target, undefined, signal)!;
  const later = await decodeInferRequest(json, target, undefined);
  assert.deepEqual(now.request.inputs, later.request.inputs);
  assert.deepEqual([...(now.request.inputs[0]!.data as Int32Array)], [1, 2]);
  assert.equal(now.request.id, 'j');
  assert.equal(now.request.signal, signal);
  assert.throws(() => decodeInferRequestNow(Buffer.from('{"inputs":[{"name":"A","shape":[3],"datatype":"INT32","data":[1,2]}]}'), target, undefined, signal), NereidError);
  const header = Buffer.from('{"inputs":[{"name":"S","shape":[1],"datatype":"BYTES","parameters":{"binary_data_size":5}}]}');
  assert.equal(decodeInferRequestNow(Buffer.concat([header, Buffer.from([1, 0, 0, 0, 0x61])]), target, header.byteLength, signal), undefined);
  const shm = Buffer.from('{"inputs":[{"name":"A","shape":[1],"datatype":"INT32","parameters":{"shared_memory_region":"r","shared_memory_byte_size":4}}]}');
  assert.equal(decodeInferRequestNow(shm, target, undefined, signal), undefined);
});
