import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CutElement } from './bytes-slices.js';
import type { InferRequest } from './infer-request.js';
import type { ModelSpec, TensorSpec } from './model-spec.js';
import type { Tensor } from './tensor.js';
import { validateRequest } from './validate-request.js';

/** A model of FP32 inputs INPUT0..INPUT{n-1} of dims [1], the last `optional` of them optional (qa/L0_input_validation's models). */
function specOf(name: string, count: number, optional: number): ModelSpec {
  const inputs: TensorSpec[] = Array.from({ length: count }, (_, index) => ({ name: `INPUT${index}`, dataType: 'FP32', dims: [1], isOptional: index >= count - optional }));
  const outputs: TensorSpec[] = [{ name: 'OUTPUT0', dataType: 'FP32', dims: [1], isOptional: false }];
  return {
    name,
    version: 1,
    platform: '',
    backend: 'javascript',
    maxBatchSize: 0,
    isDecoupled: false,
    inputs,
    outputs,
    inputByName: new Map(inputs.map((input) => [input.name, input])),
    outputByName: new Map(outputs.map((output) => [output.name, output])),
  };
}

const requestWith = (model: string, names: readonly string[]): InferRequest => ({
  modelName: model,
  id: '',
  inputs: names.map((name) => ({ name, dataType: 'FP32', shape: [1], data: Float32Array.of(1) })),
  parameters: {},
});

test("input counts answer in Triton's words (qa/L0_input_validation)", () => {
  const cases: Array<[ModelSpec, readonly string[], string]> = [
    [
      specOf('input_all_required', 3, 0),
      [],
      "expected 3 inputs but got 0 inputs for model 'input_all_required'. Got input(s) [], but missing required input(s) ['INPUT0','INPUT1','INPUT2']. Please provide all required input(s).",
    ],
    [
      specOf('input_all_required', 3, 0),
      ['INPUT0'],
      "expected 3 inputs but got 1 inputs for model 'input_all_required'. Got input(s) ['INPUT0'], but missing required input(s) ['INPUT1','INPUT2']. Please provide all required input(s).",
    ],
    [
      specOf('input_optional', 4, 1),
      [],
      "expected number of inputs between 3 and 4 but got 0 inputs for model 'input_optional'. Got input(s) [], but missing required input(s) ['INPUT0','INPUT1','INPUT2']. Please provide all required input(s).",
    ],
    [
      specOf('input_optional', 4, 1),
      ['INPUT0'],
      "expected number of inputs between 3 and 4 but got 1 inputs for model 'input_optional'. Got input(s) ['INPUT0'], but missing required input(s) ['INPUT1','INPUT2']. Please provide all required input(s).",
    ],
    [
      specOf('input_all_required', 3, 0),
      ['INPUT0', 'INPUT1', 'INPUT2', 'INPUT3'],
      // The inputs given in the order Triton's core keeps them (triton-input-order.ts).
      "expected 3 inputs but got 4 inputs for model 'input_all_required'. Got input(s) ['INPUT3','INPUT2','INPUT1','INPUT0'], but missing required input(s) []. Please provide all required input(s).",
    ],
    [specOf('input_all_required', 3, 0), ['INPUT0', 'INPUT1', 'OTHER'], "unexpected inference input 'OTHER' for model 'input_all_required'; the model's inputs are 'INPUT0', 'INPUT1', 'INPUT2'"],
  ];
  for (const [spec, names, message] of cases) assert.throws(() => validateRequest(spec, requestWith(spec.name, names)), { status: 'INVALID_ARG', message });
  assert.equal(validateRequest(specOf('input_all_optional', 3, 3), requestWith('input_all_optional', [])).inputs.length, 0);
});

/** A batching model of two inputs INPUT0 and INPUT1 of dims [16] and one output (Triton's `simple`, or `graphdef_object_int32_int32` with BYTES). */
function batchingSpecOf(name: string, dataType: 'INT32' | 'BYTES'): ModelSpec {
  const inputs: TensorSpec[] = ['INPUT0', 'INPUT1'].map((input) => ({ name: input, dataType, dims: [16], isOptional: false }));
  const outputs: TensorSpec[] = [{ name: 'OUTPUT0', dataType, dims: [16], isOptional: false }];
  return {
    name,
    version: 1,
    platform: '',
    backend: 'javascript',
    maxBatchSize: 8,
    isDecoupled: false,
    inputs,
    outputs,
    inputByName: new Map(inputs.map((input) => [input.name, input])),
    outputByName: new Map(outputs.map((output) => [output.name, output])),
  };
}

const int32Input = (name: string, shape: number[]): Tensor => ({ name, dataType: 'INT32', shape, data: new Int32Array(shape.reduce((a, b) => a * b, 1)) });
const bytesInput = (name: string, shape: number[], count: number): Tensor => ({ name, dataType: 'BYTES', shape, data: Array.from({ length: count }, () => Buffer.from('7')) });
const requestOf = (model: string, inputs: Tensor[], extra: Partial<InferRequest> = {}): InferRequest => ({ modelName: model, id: '', inputs, parameters: {}, ...extra });

test("of two wrong inputs, Triton's core names the one its map of inputs yields first: the second one sent", () => {
  const simple = batchingSpecOf('simple', 'INT32');
  const cases: Array<[Tensor[], string]> = [
    [[int32Input('INPUT0', []), int32Input('INPUT1', [])], "input 'INPUT1' has no shape but model requires batch dimension for 'simple'"],
    [[int32Input('INPUT0', []), int32Input('INPUT1', [1, 16])], "input 'INPUT0' has no shape but model requires batch dimension for 'simple'"],
    // The batch size is the first input's in Triton's order: INPUT1's here, so INPUT0 differs.
    [[int32Input('INPUT0', [2, 16]), int32Input('INPUT1', [1, 16])], "input 'INPUT0' batch size does not match other inputs for 'simple'"],
    [[int32Input('INPUT0', [9, 16]), int32Input('INPUT1', [9, 16])], "inference request batch-size must be <= 8 for 'simple'; the request's batch size is 9"],
    [
      [int32Input('INPUT0', [1, 15]), int32Input('INPUT1', [1, 14])],
      "unexpected shape for input 'INPUT1' for model 'simple'. Expected [-1,16], got [1,14]. NOTE: Setting a non-zero max_batch_size in the model config requires a batch dimension to be prepended to each input shape. If you want to specify the full shape including the batch dim in your input dims config, try setting max_batch_size to zero. See the model configuration docs for more info on max_batch_size.",
    ],
    // A batch mismatch is found before any input's shape is looked at.
    [[int32Input('INPUT0', [1, 15]), int32Input('INPUT1', [2, 16])], "input 'INPUT0' batch size does not match other inputs for 'simple'"],
    [[int32Input('INPUT0', [1, 16]), int32Input('INPUT0', [1, 16])], "input 'INPUT0' already exists in request"],
  ];
  for (const [inputs, message] of cases) assert.throws(() => validateRequest(simple, requestOf('simple', inputs)), { status: 'INVALID_ARG', message });
  // qa/L0_input_validation test_input_string_shape_validation: both inputs' element counts wrong.
  const strings = batchingSpecOf('graphdef_object_int32_int32', 'BYTES');
  const both = (count: number): InferRequest => requestOf(strings.name, [bytesInput('INPUT0', [1, 16], count), bytesInput('INPUT1', [1, 16], count)]);
  assert.throws(() => validateRequest(strings, both(14)), {
    message: "expected 16 string elements for inference input 'INPUT1' for model 'graphdef_object_int32_int32', got 14",
  });
  assert.throws(() => validateRequest(strings, both(18)), {
    message: "unexpected number of string elements 17 for inference input 'INPUT1' for model 'graphdef_object_int32_int32', expecting 16",
  });
});

test('unknown requested outputs are refused before the inputs are counted, the first in byte order named (a std::set in Triton)', () => {
  const simple = batchingSpecOf('simple', 'INT32');
  assert.throws(() => validateRequest(simple, requestOf('simple', [], { outputs: [{ name: 'ZZ' }, { name: 'OUTPUT0' }, { name: 'AA' }] })), {
    message: "unexpected inference output 'AA' for model 'simple'; the model's outputs are 'OUTPUT0'",
  });
});

test("BYTES data that ends inside an element: the core's texts where its count is wrong, the backends' after every other check", () => {
  const strings = batchingSpecOf('strings', 'BYTES');
  const withCuts = (inputs: Tensor[], cuts: Array<[string, CutElement]>): InferRequest => requestOf('strings', inputs, { cutBytesInputs: new Map(cuts) });
  const good = bytesInput('INPUT1', [1, 16], 16);
  assert.throws(() => validateRequest(strings, withCuts([bytesInput('INPUT0', [1, 16], 3), good], [['INPUT0', { part: 'length', available: 3 }]])), {
    message:
      "incomplete string length indicator for inference input 'INPUT0' for model 'strings', expecting 4 bytes but only 3 bytes available. Please make sure the string length indicator is in one buffer.",
  });
  const cutLast = withCuts([bytesInput('INPUT0', [1, 16], 15), good], [['INPUT0', { part: 'string', length: 20, available: 6 }]]);
  assert.throws(() => validateRequest(strings, cutLast), {
    message: "incomplete string data for inference input 'INPUT0', expecting string of length 20 but only 6 bytes available",
  });
  // Any check of the core comes first: here another input's data type.
  const wrongType: Tensor = { ...good, dataType: 'INT32', data: new Int32Array(16) };
  assert.throws(() => validateRequest(strings, { ...cutLast, inputs: [cutLast.inputs[0]!, wrongType] }), {
    message: "inference input 'INPUT1' data-type is 'INT32', but model 'strings' expects 'BYTES'",
  });
});
