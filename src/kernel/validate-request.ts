import { NereidError } from './errors.js';
import type { InferRequest, RequestedOutput } from './infer-request.js';
import type { ModelSpec } from './model-spec.js';
import type { Tensor } from './tensor.js';
import { tritonInputOrder } from './triton-input-order.js';
import { bytesInputError, cutStringError } from './validate-bytes-input.js';
import { elementCount } from '../protocol/tensor-data.js';

const formatShape = (shape: readonly number[]): string => `[${shape.join(',')}]`;

/**
 * Checks a request against the model it is for, before it reaches a scheduler, in Triton's words and
 * order (core src/infer_request.cc, InferenceRequest::Normalize): no input twice, the requested
 * outputs, the number of inputs; then, over the inputs in the order Triton's core keeps them
 * (triton-input-order.ts), their names and batch sizes against max_batch_size, then each one's data
 * type, shape (-1 in the config matches any size) and BYTES elements; last, a required input missing
 * and a cut BYTES string, which Triton's backends refuse. Returns the request with `outputs` resolved
 * to the outputs to compute.
 */
export function validateRequest(spec: ModelSpec, request: InferRequest): InferRequest {
  checkNonNegativeInteger(request, 'priority');
  checkNonNegativeInteger(request, 'timeout');
  checkSequenceParameters(request);
  checkDistinctInputs(request.inputs);
  const outputs = resolveOutputs(spec, request.outputs);
  const countError = inputCountError(spec, request, false);
  if (countError !== undefined) throw countError;
  const error = inputError(spec, request, undefined);
  if (error !== undefined) {
    // The usual request passes in the order it was sent; Triton's order only decides which error it names.
    throw request.inputs.length > 1 ? inputError(spec, request, tritonInputOrder(request.inputs.map((input) => input.name)))! : error;
  }
  return { ...request, outputs };
}

/** Triton refuses a second input of a name as its front end adds it (InferenceRequest::AddOriginalInput). */
function checkDistinctInputs(inputs: readonly Tensor[]): void {
  if (inputs.length < 2) return;
  const seen = new Set<string>();
  for (const { name } of inputs) {
    if (seen.has(name)) throw new NereidError('INVALID_ARG', `input '${name}' already exists in request`);
    seen.add(name);
  }
}

/**
 * The first error of the request's inputs, taking them in `order` (indexes into request.inputs;
 * undefined: as sent). The checks are Triton's, pass by pass.
 */
function inputError(spec: ModelSpec, request: InferRequest, order: readonly number[] | undefined): NereidError | undefined {
  const { inputs } = request;
  const isBatching = spec.maxBatchSize > 0;
  if (isBatching) {
    // The batch size: every input's first dimension, the same for all.
    let batchSize: number | undefined;
    for (let index = 0; index < inputs.length; index++) {
      const input = inputs[order === undefined ? index : order[index]!]!;
      if (!spec.inputByName.has(input.name)) return unexpectedInputError(spec, input.name);
      if (input.shape.length === 0) {
        return new NereidError('INVALID_ARG', `input '${input.name}' has no shape but model requires batch dimension for '${spec.name}'`);
      }
      const batch = input.shape[0]!;
      if (batchSize === undefined) batchSize = batch;
      else if (batch !== batchSize) return new NereidError('INVALID_ARG', `input '${input.name}' batch size does not match other inputs for '${spec.name}'`);
    }
    if (batchSize !== undefined && (batchSize < 1 || batchSize > spec.maxBatchSize)) {
      return new NereidError('INVALID_ARG', `inference request batch-size must be <= ${spec.maxBatchSize} for '${spec.name}'; the request's batch size is ${batchSize}`);
    }
  }
  const skipped = isBatching ? 1 : 0;
  for (let index = 0; index < inputs.length; index++) {
    const input = inputs[order === undefined ? index : order[index]!]!;
    const inputSpec = spec.inputByName.get(input.name);
    if (inputSpec === undefined) return unexpectedInputError(spec, input.name);
    if (input.dataType !== inputSpec.dataType) {
      return new NereidError(
        'INVALID_ARG',
        `inference input '${input.name}' data-type is '${input.dataType}', but model '${spec.name}' expects '${inputSpec.dataType}'`,
      );
    }
    const { dims } = inputSpec;
    if (input.shape.length !== dims.length + skipped) return shapeError(spec, input.name, input.shape, dims);
    for (let i = 0; i < dims.length; i++) {
      const dim = dims[i]!;
      if (dim !== -1 && dim !== input.shape[i + skipped]) return shapeError(spec, input.name, input.shape, dims);
    }
    if (input.dataType === 'BYTES') {
      const cut = request.cutBytesInputs?.get(input.name);
      const error = bytesInputError(input.name, spec.name, elementCount(input.shape), (input.data as unknown[]).length, cut);
      if (error !== undefined) return error;
    }
  }
  // Known names and enough of them, yet a required one missing (optional ones given in its place).
  if (inputs.length < spec.inputs.length) {
    const error = inputCountError(spec, request, true);
    if (error !== undefined) return error;
  }
  if (request.cutBytesInputs !== undefined) {
    for (let index = 0; index < inputs.length; index++) {
      const { name } = inputs[order === undefined ? index : order[index]!]!;
      const cut = request.cutBytesInputs.get(name);
      if (cut?.part === 'string') return cutStringError(name, cut);
    }
  }
  return undefined;
}

function unexpectedInputError(spec: ModelSpec, name: string): NereidError {
  return new NereidError(
    'INVALID_ARG',
    `unexpected inference input '${name}' for model '${spec.name}'; the model's inputs are ${spec.inputs.map((i) => `'${i.name}'`).join(', ')}`,
  );
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
 * model has, or fewer than it requires; with `isMissingEnough`, any required input missing. The inputs
 * given are listed in the order Triton's core keeps them, the missing ones in config order.
 */
function inputCountError(spec: ModelSpec, request: InferRequest, isMissingEnough: boolean): NereidError | undefined {
  // The usual request, as many inputs as the model has, fits Triton's count: no allocation.
  if (!isMissingEnough && request.inputs.length === spec.inputs.length) return undefined;
  const names = request.inputs.map((input) => input.name);
  const given = new Set(names);
  const required = spec.inputs.filter((input) => !input.isOptional);
  const missing = required.filter((input) => !given.has(input.name));
  if (names.length <= spec.inputs.length && names.length >= required.length && !(isMissingEnough && missing.length > 0)) return undefined;
  const list = (listed: readonly string[]): string => `[${listed.map((name) => `'${name}'`).join(',')}]`;
  const expected = required.length === spec.inputs.length ? `expected ${spec.inputs.length} inputs` : `expected number of inputs between ${required.length} and ${spec.inputs.length}`;
  return new NereidError(
    'INVALID_ARG',
    `${expected} but got ${names.length} inputs for model '${spec.name}'. Got input(s) ${list(tritonInputOrder(names).map((index) => names[index]!))}, but missing required input(s) ${list(missing.map((input) => input.name))}. Please provide all required input(s).`,
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
 * The outputs to compute. An output requested twice is computed once with its first request's
 * parameters, as Triton does (core src/infer_request.cc keeps the requested names in a std::set, and
 * the front ends keep the first entry of each name); of several unknown names, Triton's set names the
 * first in byte order.
 */
function resolveOutputs(spec: ModelSpec, outputs: readonly RequestedOutput[] | undefined): readonly RequestedOutput[] {
  if (outputs === undefined || outputs.length === 0) return allOutputsOf(spec);
  const byName = new Map<string, RequestedOutput>();
  let unknown: string | undefined;
  for (const output of outputs) {
    if (!spec.outputByName.has(output.name)) {
      if (unknown === undefined || Buffer.compare(Buffer.from(output.name), Buffer.from(unknown)) < 0) unknown = output.name;
    } else if (!byName.has(output.name)) {
      byName.set(output.name, output);
    }
  }
  if (unknown !== undefined) {
    throw new NereidError(
      'INVALID_ARG',
      `unexpected inference output '${unknown}' for model '${spec.name}'; the model's outputs are ${spec.outputs.map((o) => `'${o.name}'`).join(', ')}`,
    );
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
