import { NereidError } from './errors.js';
import type { InferRequest, RequestedOutput } from './infer-request.js';
import type { ModelSpec } from './model-spec.js';
import { elementCount } from '../protocol/tensor-data.js';

const formatShape = (shape: readonly number[]): string => `[${shape.join(',')}]`;

/**
 * Checks a request against the model it is for, before it reaches a scheduler, with Triton's wording
 * where known (core src/infer_request.cc): input names, required inputs, data types, shapes against
 * the config dims (-1 matches any size), the batch dimension against max_batch_size, and requested
 * output names. Returns the request with `outputs` resolved to the outputs to compute.
 */
export function validateRequest(spec: ModelSpec, request: InferRequest): InferRequest {
  const model = (): string => `model '${spec.name}'`;
  checkNonNegativeInteger(request, 'priority');
  checkNonNegativeInteger(request, 'timeout');
  checkSequenceParameters(request);
  const isBatching = spec.maxBatchSize > 0;
  checkInputCount(spec, request);
  const seen = new Set<string>();
  let batchSize: number | undefined;
  for (const input of request.inputs) {
    const inputSpec = spec.inputByName.get(input.name);
    if (inputSpec === undefined) {
      throw new NereidError(
        'INVALID_ARG',
        `unexpected inference input '${input.name}' for ${model()}; the model's inputs are ${spec.inputs.map((i) => `'${i.name}'`).join(', ')}`,
      );
    }
    if (seen.has(input.name)) throw new NereidError('INVALID_ARG', `input '${input.name}' already exists in request`);
    seen.add(input.name);
    if (input.dataType !== inputSpec.dataType) {
      throw new NereidError(
        'INVALID_ARG',
        `inference input '${input.name}' data-type is '${input.dataType}', but ${model()} expects '${inputSpec.dataType}'`,
      );
    }
    const { dims } = inputSpec;
    const skipped = isBatching ? 1 : 0;
    if (input.shape.length !== dims.length + skipped) throw shapeError(spec, input.name, input.shape, dims);
    if (isBatching) {
      const batch = input.shape[0]!;
      if (batch < 1 || batch > spec.maxBatchSize) {
        throw new NereidError(
          'INVALID_ARG',
          `inference request batch-size must be <= ${spec.maxBatchSize} for '${spec.name}'; input '${input.name}' has batch size ${batch}`,
        );
      }
      if (batchSize !== undefined && batch !== batchSize) {
        throw new NereidError(
          'INVALID_ARG',
          `input '${input.name}' batch size ${batch} does not match the other inputs' batch size ${batchSize} for ${model()}`,
        );
      }
      batchSize = batch;
    }
    for (let i = 0; i < dims.length; i++) {
      const dim = dims[i]!;
      if (dim !== -1 && dim !== input.shape[i + skipped]) throw shapeError(spec, input.name, input.shape, dims);
    }
    if (input.dataType === 'BYTES') checkBytesElementCount(input.name, spec.name, elementCount(input.shape), (input.data as unknown[]).length);
  }
  // Known names and enough of them, yet a required one missing (optional ones given in its place).
  if (seen.size < spec.inputs.length) checkInputCount(spec, request, true);
  return { ...request, outputs: resolveOutputs(spec, request.outputs) };
}

/** Triton's note after a shape that does not fit a batching model's dims (InferenceRequest::Normalize). */
const BATCH_NOTE =
  'NOTE: Setting a non-zero max_batch_size in the model config requires a batch dimension to be prepended to each input shape. ' +
  'If you want to specify the full shape including the batch dim in your input dims config, try setting max_batch_size to zero. ' +
  'See the model configuration docs for more info on max_batch_size.';

/** Triton's text for a shape that does not fit the dims: it ends with ". " and, for a batching model, its note (InferenceRequest::Normalize). */
function shapeError(spec: ModelSpec, name: string, shape: readonly number[], dims: readonly number[]): NereidError {
  const isBatching = spec.maxBatchSize > 0;
  const expected = isBatching ? [-1, ...dims] : dims;
  return new NereidError(
    'INVALID_ARG',
    `unexpected shape for input '${name}' for model '${spec.name}'. Expected ${formatShape(expected)}, got ${formatShape(shape)}. ${isBatching ? BATCH_NOTE : ''}`,
  );
}

/**
 * The number of inputs against the model's, before any input is looked at, in Triton's words and
 * order (InferenceRequest::Normalize; qa/L0_input_validation compares them): more inputs than the
 * model has, or fewer than it requires; with `isMissingEnough`, any required input missing.
 */
function checkInputCount(spec: ModelSpec, request: InferRequest, isMissingEnough = false): void {
  // The usual request, as many inputs as the model has, fits Triton's count: no allocation.
  if (!isMissingEnough && request.inputs.length === spec.inputs.length) return;
  const given = new Set(request.inputs.map((input) => input.name));
  const required = spec.inputs.filter((input) => !input.isOptional);
  const missing = required.filter((input) => !given.has(input.name));
  if (given.size <= spec.inputs.length && given.size >= required.length && !(isMissingEnough && missing.length > 0)) return;
  const list = (names: readonly string[]): string => `[${names.map((name) => `'${name}'`).join(',')}]`;
  const expected = required.length === spec.inputs.length ? `expected ${spec.inputs.length} inputs` : `expected number of inputs between ${required.length} and ${spec.inputs.length}`;
  throw new NereidError(
    'INVALID_ARG',
    `${expected} but got ${given.size} inputs for model '${spec.name}'. Got input(s) ${list([...given])}, but missing required input(s) ${list(missing.map((input) => input.name))}. Please provide all required input(s).`,
  );
}

function checkNonNegativeInteger(request: InferRequest, key: 'priority' | 'timeout'): void {
  const value = request.parameters[key];
  if (value === undefined) return;
  const isInteger = typeof value === 'bigint' ? value >= 0n : typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
  if (!isInteger) throw new NereidError('INVALID_ARG', `request parameter '${key}' must be a non-negative integer, got ${JSON.stringify(String(value))}`);
}

/**
 * The sequence parameters' types, with Triton's HTTP text (src/http_server.cc): `sequence_id` an
 * unsigned integer or a string, `sequence_start` and `sequence_end` booleans.
 */
function checkSequenceParameters(request: InferRequest): void {
  const { sequence_id: id } = request.parameters;
  const isId = typeof id === 'string' || (typeof id === 'bigint' && id >= 0n) || (typeof id === 'number' && Number.isSafeInteger(id) && id >= 0);
  if (id !== undefined && !isId) {
    throw new NereidError('INVALID_ARG', `Unable to parse 'sequence_id': expected an unsigned integer or a string, got ${JSON.stringify(String(id))}`);
  }
  for (const key of ['sequence_start', 'sequence_end'] as const) {
    const value = request.parameters[key];
    if (value !== undefined && typeof value !== 'boolean') {
      throw new NereidError('INVALID_ARG', `Unable to parse '${key}': expected a boolean, got ${JSON.stringify(String(value))}`);
    }
  }
}

/**
 * A BYTES input holds as many elements as its shape says, in Triton's words (core src/infer_request.cc
 * `ValidateBytesInputs`, which stops reading at the first element past the expected count).
 */
function checkBytesElementCount(name: string, modelName: string, expected: number, actual: number): void {
  if (actual < expected) {
    throw new NereidError('INVALID_ARG', `expected ${expected} string elements for inference input '${name}' for model '${modelName}', got ${actual}`);
  }
  if (actual > expected) {
    throw new NereidError(
      'INVALID_ARG',
      `unexpected number of string elements ${expected + 1} for inference input '${name}' for model '${modelName}', expecting ${expected}`,
    );
  }
}

/**
 * The outputs to compute. An output requested twice is computed once with its first request's
 * parameters, as Triton does (core src/infer_request.cc keeps the requested names in a set, and the
 * front ends keep the first entry of each name).
 */
function resolveOutputs(spec: ModelSpec, outputs: readonly RequestedOutput[] | undefined): readonly RequestedOutput[] {
  if (outputs === undefined || outputs.length === 0) return allOutputsOf(spec);
  const byName = new Map<string, RequestedOutput>();
  for (const output of outputs) {
    if (!spec.outputByName.has(output.name)) {
      throw new NereidError(
        'INVALID_ARG',
        `unexpected inference output '${output.name}' for model '${spec.name}'; the model's outputs are ${spec.outputs.map((o) => `'${o.name}'`).join(', ')}`,
      );
    }
    if (!byName.has(output.name)) byName.set(output.name, output);
  }
  return byName.size === outputs.length ? outputs : [...byName.values()];
}

const allOutputs = new WeakMap<ModelSpec, readonly RequestedOutput[]>();

/** Every output of the model, in config order: what a request that names none gets (one frozen list per model). */
function allOutputsOf(spec: ModelSpec): readonly RequestedOutput[] {
  let outputs = allOutputs.get(spec);
  if (outputs === undefined) {
    outputs = Object.freeze(spec.outputs.map((output) => Object.freeze({ name: output.name })));
    allOutputs.set(spec, outputs);
  }
  return outputs;
}
