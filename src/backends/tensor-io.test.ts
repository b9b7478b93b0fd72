import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { NereidError } from '../kernel/errors.js';
import type { ModelSpec, TensorSpec } from '../kernel/model-spec.js';
import type { Tensor } from '../kernel/tensor.js';
import { backendShape, checkOutputs, clientShape } from './tensor-io.js';

const tensorSpec = (name: string, dims: number[], reshape?: number[]): TensorSpec => ({
  name,
  dataType: 'FP32',
  dims,
  ...(reshape !== undefined ? { reshape } : {}),
  isOptional: false,
});

function modelSpec(maxBatchSize: number, outputs: TensorSpec[]): ModelSpec {
  return {
    name: 'm',
    version: 1,
    platform: '',
    backend: 'test',
    maxBatchSize,
    isDecoupled: false,
    inputs: [],
    outputs,
    inputByName: new Map(),
    outputByName: new Map(outputs.map((output) => [output.name, output])),
  };
}

const fp32 = (name: string, shape: number[], values: number[] = Array(shape.reduce((a, b) => a * b, 1)).fill(0)): Tensor => ({
  name,
  dataType: 'FP32',
  shape,
  data: Float32Array.from(values),
});

describe('reshape', () => {
  test('the model sees the reshape and the client the dims, batch dimension kept', () => {
    const spec = tensorSpec('X', [4], [2, 2]);
    assert.deepEqual(backendShape([3, 4], spec, true), [3, 2, 2]);
    assert.deepEqual(backendShape([4], spec, false), [2, 2]);
    assert.deepEqual(clientShape([3, 2, 2], spec, true), [3, 4]);
    assert.deepEqual(clientShape([2, 2], spec, false), [4]);
  });

  test('a -1 in the reshape or the dims takes the size that keeps the element count', () => {
    const spec = tensorSpec('X', [-1], [-1, 2]);
    assert.deepEqual(backendShape([2, 6], spec, true), [2, 3, 2]);
    assert.deepEqual(clientShape([2, 3, 2], spec, true), [2, 6]);
    assert.deepEqual(clientShape([5, 2], spec, false), [10]);
  });

  test('without a reshape the shape is passed through as it is', () => {
    const shape = [1, 4];
    assert.equal(backendShape(shape, tensorSpec('X', [4]), true), shape);
    assert.equal(clientShape(shape, tensorSpec('X', [4]), true), shape);
  });
});

describe('checkOutputs', () => {
  const spec = modelSpec(8, [tensorSpec('A', [-1, 2]), tensorSpec('B', [4], [2, 2])]);
  const fail = (outputs: Tensor[], message: string, hint?: string): void =>
    assert.throws(
      () => checkOutputs(spec, outputs, { requested: ['A', 'B'], ...(hint !== undefined ? { dataTypeHint: hint } : {}) }),
      new NereidError('INTERNAL', message),
    );

  test('answers the requested outputs in their order, drops the others, leaves out the missing (as Triton)', () => {
    const a = fp32('A', [1, 3, 2]);
    const b = fp32('B', [1, 2, 2]);
    assert.deepEqual(checkOutputs(spec, [a, b], { requested: ['B', 'A'] }), [{ ...b, shape: [1, 4] }, a]);
    assert.deepEqual(checkOutputs(spec, [a, b], { requested: ['A'] }), [a]);
    assert.deepEqual(checkOutputs(spec, [b], { requested: ['A', 'B'] }), [{ ...b, shape: [1, 4] }]);
    assert.deepEqual(checkOutputs(spec, [a], { requested: undefined }), [a]);
  });

  test('an output the configuration does not declare', () => {
    fail([fp32('C', [1, 2])], "model 'm' returned output 'C', which its configuration does not declare (outputs: 'A', 'B')");
  });

  test('a data type other than the configuration’s, with the backend’s hint', () => {
    const int32: Tensor = { name: 'A', dataType: 'INT32', shape: [1, 1, 2], data: Int32Array.of(1, 2) };
    fail([int32], "model 'm' output 'A' is INT32, but the configuration declares FP32");
    fail([int32], "model 'm' output 'A' is INT32, but the configuration declares FP32; convert it", 'convert it');
  });

  test('a shape of another rank, or a fixed dim that differs (the reshape for a reshaped output)', () => {
    fail([fp32('A', [1, 2])], "model 'm' output 'A' has shape [1,2], but the configuration expects [-1,-1,2]");
    fail([fp32('A', [1, 2, 3])], "model 'm' output 'A' has shape [1,2,3], but the configuration expects [-1,-1,2]");
    fail([fp32('B', [1, 4])], "model 'm' output 'B' has shape [1,4], but the configuration expects [-1,2,2]");
    fail([fp32('A', [1, -2, 2], [])], "model 'm' output 'A' has shape [1,-2,2], but the configuration expects [-1,-1,2]");
    assert.throws(
      () => checkOutputs(modelSpec(0, [tensorSpec('A', [2])]), [fp32('A', [1, 2])], { requested: undefined }),
      new NereidError('INTERNAL', "model 'm' output 'A' has shape [1,2], but the configuration expects [2]"),
    );
  });

  test('with onConfigMismatch, a data type or shape other than the configuration’s passes as returned (Triton’s Python backend), the other rules still hold', () => {
    const heard: string[] = [];
    const onConfigMismatch = (output: Tensor, mismatch: NereidError): void => void heard.push(`${output.name}: ${mismatch.message}`);
    const fp16: Tensor = { name: 'A', dataType: 'FP16', shape: [1], data: Uint16Array.of(15360) };
    const b = fp32('B', [1, 2, 2]);
    assert.deepEqual(checkOutputs(spec, [fp16, b], { requested: ['A', 'B'], onConfigMismatch }), [fp16, { ...b, shape: [1, 4] }]);
    const wide = fp32('B', [1, 8]);
    assert.deepEqual(checkOutputs(spec, [wide], { requested: ['B'], onConfigMismatch }), [wide]);
    assert.deepEqual(heard, [
      "A: model 'm' output 'A' is FP16, but the configuration declares FP32",
      "B: model 'm' output 'B' has shape [1,8], but the configuration expects [-1,2,2]",
    ]);
    assert.throws(() => checkOutputs(spec, [fp32('C', [1, 2])], { requested: undefined, onConfigMismatch }), /does not declare/);
    assert.throws(() => checkOutputs(spec, [fp32('A', [1, 2, 2], [1, 2, 3])], { requested: undefined, onConfigMismatch }), /which holds 4 elements, but 3 were given/);
    assert.throws(() => checkOutputs(spec, [fp32('A', [1, -2, 2], [])], { requested: undefined, onConfigMismatch }), /has shape \[1,-2,2\]/);
  });

  test('data that does not hold the shape’s element count', () => {
    fail([fp32('A', [1, 2, 2], [1, 2, 3])], "model 'm' output 'A' has shape [1,2,2], which holds 4 elements, but 3 were given");
  });

  test('BYTES elements must be byte strings, as many as the shape holds', () => {
    const bytesSpec = modelSpec(0, [{ name: 'S', dataType: 'BYTES', dims: [2], isOptional: false }]);
    const check = (data: unknown[]): Tensor[] => checkOutputs(bytesSpec, [{ name: 'S', dataType: 'BYTES', shape: [2], data: data as Uint8Array[] }], { requested: undefined });
    assert.equal(check([Uint8Array.of(1), Uint8Array.of()]).length, 1);
    assert.throws(() => check(['a', 'b']), new NereidError('INTERNAL', "model 'm' output 'S' is BYTES, but its elements are not byte strings"));
    assert.throws(() => check([Uint8Array.of(1)]), new NereidError('INTERNAL', "model 'm' output 'S' has shape [2], which holds 2 elements, but 1 were given"));
  });
});
