import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NereidError } from '../../kernel/errors.js';
import type { Tensor } from '../../kernel/tensor.js';
import { FRAME_HEADER_BYTES, FrameReader, FrameWriter } from './frame-codec.js';
import { fromStubRequestFields, readRequest, readResponse, readTensor, toStubRequestFields, writeRequest, writeResponse, writeTensor } from './stub-protocol.js';

const bodyOf = (writer: FrameWriter): FrameReader => new FrameReader(Buffer.concat(writer.finish(1)).subarray(FRAME_HEADER_BYTES));

test('tensors of every data type read back as they were written', () => {
  const tensors: Tensor[] = [
    { name: 'b', dataType: 'BOOL', shape: [2], data: new Uint8Array([1, 0]) },
    { name: 'u64', dataType: 'UINT64', shape: [1], data: new BigUint64Array([2n ** 64n - 1n]) },
    { name: 'i8', dataType: 'INT8', shape: [2, 1], data: new Int8Array([-128, 127]) },
    { name: 'h', dataType: 'FP16', shape: [1], data: new Uint16Array([0x3c00]) },
    { name: 'f', dataType: 'FP32', shape: [3], data: new Float32Array([1.5, -2, 0]) },
    { name: 'bf', dataType: 'BF16', shape: [1], data: new Uint16Array([0x3f80]) },
    { name: 's', dataType: 'BYTES', shape: [2], data: [new Uint8Array([0, 255]), new Uint8Array([])] },
    { name: 'empty', dataType: 'INT32', shape: [0, 4], data: new Int32Array(0) },
  ];
  const writer = new FrameWriter();
  for (const tensor of tensors) writeTensor(writer, tensor);
  const reader = bodyOf(writer);
  for (const tensor of tensors) {
    const read = readTensor(reader);
    assert.equal(read.name, tensor.name);
    assert.equal(read.dataType, tensor.dataType);
    assert.deepEqual(read.shape, tensor.shape);
    assert.deepEqual(Array.isArray(read.data) ? read.data.map((e) => [...e]) : [...read.data], Array.isArray(tensor.data) ? tensor.data.map((e) => [...e]) : [...tensor.data]);
  }
});

test('a request keeps its id, correlation id, flags, parameters of every kind, outputs and inputs', () => {
  const request = {
    id: 'r1',
    correlationId: 2n ** 63n,
    flags: 3,
    parameters: { text: 'x', whole: -7, big: 9007199254740993n, ratio: 0.5, flag: true },
    requestedOutputs: ['OUT'],
    inputs: [{ name: 'IN', dataType: 'INT32', shape: [1], data: new Int32Array([5]) }] satisfies Tensor[],
  };
  const writer = new FrameWriter();
  writeRequest(writer, request);
  const read = readRequest(bodyOf(writer));
  assert.equal(read.id, 'r1');
  assert.equal(read.correlationId, 2n ** 63n);
  assert.equal(read.flags, 3);
  assert.deepEqual(read.parameters, request.parameters);
  assert.deepEqual(read.requestedOutputs, ['OUT']);
  assert.deepEqual([...(read.inputs[0]!.data as Int32Array)], [5]);
});

test('responses carry outputs and their parameters, or an error with its Triton code', () => {
  const writer = new FrameWriter();
  writeResponse(writer, { error: new NereidError('NOT_FOUND', 'gone') });
  writeResponse(writer, { outputs: [{ name: 'O', dataType: 'FP64', shape: [1], data: new Float64Array([Math.PI]) }], parameters: { note: 'x', count: 3, flag: false } });
  const reader = bodyOf(writer);
  const failed = readResponse(reader);
  assert.ok('error' in failed && failed.error.status === 'NOT_FOUND' && failed.error.message === 'gone');
  const answered = readResponse(reader);
  assert.ok('outputs' in answered);
  assert.deepEqual([...(answered.outputs[0]!.data as Float64Array)], [Math.PI]);
  assert.deepEqual(answered.parameters, { note: 'x', count: 3, flag: false });
});

test("sequence parameters become Triton's correlation id and flags, and back", () => {
  const fields = toStubRequestFields({ sequence_id: 9, sequence_start: true, sequence_end: true, priority: 1, timeout: 5, binary_data_output: true, mine: 'kept' });
  assert.deepEqual(fields, { correlationId: 9, flags: 3, parameters: { mine: 'kept' } });
  assert.deepEqual(fromStubRequestFields(fields), { mine: 'kept', sequence_id: 9, sequence_start: true, sequence_end: true });
  assert.deepEqual(toStubRequestFields({}), { correlationId: 0, flags: 0, parameters: {} });
});
