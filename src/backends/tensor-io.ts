/**
 * The tensors that cross between the core and a backend, treated the same way by every backend.
 *
 * In: the config `reshape` replaces the dims in the shape the model sees (`backendShape`); the batch
 * dimension of a batching model is kept in front.
 *
 * Out: what a model returns for one request is checked against the configuration (`checkOutputs`),
 * and the client sees the config dims in place of the `reshape` (`clientShape`). The rules, each
 * failure an INTERNAL error (the model broke its configuration's promise, not the client), in the
 * message shape `model '<model>' output '<name>' <what is wrong>[; <backend's hint>]`:
 *
 * | rule                                                                  | on failure            |
 * |-----------------------------------------------------------------------|-----------------------|
 * | the name is one the configuration declares                            | INTERNAL              |
 * | the data type is the configuration's                                  | INTERNAL              |
 * | the shape has the rank of `reshape` (else dims), plus the batch        | INTERNAL              |
 * | dimension when the model batches; every dim that is not -1 is equal   |                       |
 * | the data holds exactly the shape's element count (BYTES: elements)    | INTERNAL              |
 * | BYTES elements are byte strings (Uint8Array)                          | INTERNAL              |
 * | an output the request did not ask for                                 | dropped (as Triton)   |
 * | an output the request asked for and the model did not return          | left out (as Triton)  |
 *
 * Triton's Python backend passes outputs on as the model made them: a model there may return a data
 * type or a shape other than its configuration's, and the client receives what it returned. Such a
 * backend gives `onConfigMismatch`, which then hears of each of those two rules broken instead of
 * failing the request; the other rules still hold.
 */
import { NereidError } from '../kernel/errors.js';
import type { ModelSpec, TensorSpec } from '../kernel/model-spec.js';
import type { Tensor } from '../kernel/tensor.js';
import { type FixedSizeArray, elementCount } from '../protocol/tensor-data.js';

/** The shape the model sees: the config `reshape` in place of the dims, batch dimension kept. */
export function backendShape(shape: readonly number[], spec: TensorSpec, isBatching: boolean): readonly number[] {
  if (spec.reshape === undefined) return shape;
  return isBatching ? [shape[0]!, ...withWildcards(spec.reshape, shape, 1)] : withWildcards(spec.reshape, shape, 0);
}

/** The shape the client sees: the config dims in place of the `reshape`, batch dimension kept. */
export function clientShape(shape: readonly number[], spec: TensorSpec, isBatching: boolean): readonly number[] {
  if (spec.reshape === undefined) return shape;
  return isBatching ? [shape[0]!, ...withWildcards(spec.dims, shape, 1)] : withWildcards(spec.dims, shape, 0);
}

/**
 * `dims` for a tensor of `shape` (from `skip` on): a -1 in them (at most one, which the config
 * validation ensures for a reshaped tensor) takes the size that keeps the element count.
 */
function withWildcards(dims: readonly number[], shape: readonly number[], skip: number): readonly number[] {
  const wildcard = dims.indexOf(-1);
  if (wildcard === -1) return dims;
  let count = 1;
  for (let index = skip; index < shape.length; index++) count *= shape[index]!;
  let known = 1;
  for (const dim of dims) if (dim !== -1) known *= dim;
  const filled = [...dims];
  filled[wildcard] = known === 0 ? 0 : count / known;
  return filled;
}

export interface CheckOutputsOptions {
  /** The outputs the request asked for, in the order to answer them; undefined: every one returned. */
  readonly requested: readonly string[] | undefined;
  /** Said after a data-type mismatch, in the backend's terms (how to convert in the model's language). */
  readonly dataTypeHint?: string;
  /**
   * Given: an output whose data type or shape differs from the configuration passes as returned
   * (Triton's Python backend), and this hears why; the config `reshape` is then not undone for it.
   */
  readonly onConfigMismatch?: (output: Tensor, mismatch: NereidError) => void;
}

/**
 * A model's outputs for one request, checked by the rules above; each with the client's shape.
 * Throws the first rule broken as a NereidError.
 */
export function checkOutputs(spec: ModelSpec, outputs: readonly Tensor[], options: CheckOutputsOptions): Tensor[] {
  const isBatching = spec.maxBatchSize > 0;
  const { requested, onConfigMismatch } = options;
  let asReturned: Set<Tensor> | undefined;
  for (const output of outputs) {
    const mismatch = checkOutput(spec, output, isBatching, options.dataTypeHint, onConfigMismatch !== undefined);
    if (mismatch !== undefined) {
      onConfigMismatch!(output, mismatch);
      (asReturned ??= new Set()).add(output);
    }
  }
  const shaped = (output: Tensor): Tensor => (asReturned?.has(output) === true ? output : toClient(output, spec, isBatching));
  const checked: Tensor[] = [];
  if (requested === undefined) {
    for (const output of outputs) checked.push(shaped(output));
    return checked;
  }
  for (const name of requested) {
    const output = outputs.find((candidate) => candidate.name === name);
    if (output !== undefined) checked.push(shaped(output));
  }
  return checked;
}

/**
 * One output tensor checked by the rules above (a batch output included); throws the first rule it
 * breaks. With `isMismatchAllowed`, a data type or shape other than the configuration's is returned
 * as the error it would have thrown (the other rules still checked), and undefined when it conforms.
 */
export function checkOutput(spec: ModelSpec, output: Tensor, isBatching: boolean, dataTypeHint?: string, isMismatchAllowed = false): NereidError | undefined {
  // NOTE: this runs for every output of every request: it builds no string or array unless a rule is broken.
  const outputSpec = spec.outputByName.get(output.name);
  if (outputSpec === undefined) {
    throw new NereidError(
      'INTERNAL',
      `model '${spec.name}' returned output '${output.name}', which its configuration does not declare (outputs: ${spec.outputs.map((o) => `'${o.name}'`).join(', ')})`,
    );
  }
  let mismatch: NereidError | undefined;
  if (output.dataType !== outputSpec.dataType) {
    mismatch = new NereidError('INTERNAL', `${outputLabel(spec, output)} is ${output.dataType}, but the configuration declares ${outputSpec.dataType}${dataTypeHint === undefined ? '' : `; ${dataTypeHint}`}`);
    if (!isMismatchAllowed) throw mismatch;
  }
  const { shape } = output;
  const dims = outputSpec.reshape ?? outputSpec.dims;
  const batchDims = isBatching ? 1 : 0;
  let isShapeValid = Array.isArray(shape);
  let isShapeOk = isShapeValid && shape.length === dims.length + batchDims;
  for (let index = 0; isShapeValid && index < shape.length; index++) {
    const dim = shape[index]!;
    isShapeValid = Number.isSafeInteger(dim) && dim >= 0;
    const expected = index < batchDims || index - batchDims >= dims.length ? -1 : dims[index - batchDims]!;
    isShapeOk = isShapeOk && isShapeValid && (expected === -1 || expected === dim);
  }
  if (!isShapeOk) {
    const expected = isBatching ? [-1, ...dims] : dims;
    const error = new NereidError('INTERNAL', `${outputLabel(spec, output)} has shape ${formatShape(shape)}, but the configuration expects [${expected.join(',')}]`);
    if (!isMismatchAllowed || !isShapeValid) throw error;
    mismatch ??= error;
  }
  if (output.dataType === 'BYTES' && !isByteStrings(output.data)) {
    throw new NereidError('INTERNAL', `${outputLabel(spec, output)} is BYTES, but its elements are not byte strings`);
  }
  const count = elementCount(shape);
  const length = (output.data as FixedSizeArray | readonly Uint8Array[]).length;
  if (length !== count) {
    throw new NereidError('INTERNAL', `${outputLabel(spec, output)} has shape [${shape.join(',')}], which holds ${count} elements, but ${length} were given`);
  }
  return mismatch;
}

const outputLabel = (spec: ModelSpec, output: Tensor): string => `model '${spec.name}' output '${output.name}'`;

function isByteStrings(data: unknown): boolean {
  if (!Array.isArray(data)) return false;
  for (const element of data) if (!(element instanceof Uint8Array)) return false;
  return true;
}

function toClient(output: Tensor, spec: ModelSpec, isBatching: boolean): Tensor {
  const outputSpec = spec.outputByName.get(output.name)!;
  if (outputSpec.reshape === undefined) return output;
  return { ...output, shape: clientShape(output.shape, outputSpec, isBatching) };
}

const formatShape = (shape: unknown): string => (Array.isArray(shape) ? `[${shape.join(',')}]` : JSON.stringify(shape));
