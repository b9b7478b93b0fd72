import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { InferRequest } from './infer-request.js';
import type { ModelSpec, TensorSpec } from './model-spec.js';
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
      "expected 3 inputs but got 4 inputs for model 'input_all_required'. Got input(s) ['INPUT0','INPUT1','INPUT2','INPUT3'], but missing required input(s) []. Please provide all required input(s).",
    ],
    [specOf('input_all_required', 3, 0), ['INPUT0', 'INPUT1', 'OTHER'], "unexpected inference input 'OTHER' for model 'input_all_required'; the model's inputs are 'INPUT0', 'INPUT1', 'INPUT2'"],
  ];
  for (const [spec, names, message] of cases) assert.throws(() => validateRequest(spec, requestWith(spec.name, names)), { status: 'INVALID_ARG', message });
  assert.equal(validateRequest(specOf('input_all_optional', 3, 3), requestWith('input_all_optional', [])).inputs.length, 0);
});
