/**
 * What Triton's repeat backend (triton-inference-server/repeat_backend, src/repeat.cc) checks in a
 * model configuration when the model loads (its ModelState::ValidateModelConfig), in its order and
 * words, after Nereid's `model '<name>': ` prefix:
 * - max_batch_size is 0 (the backend does not batch);
 * - three inputs and two outputs, in this order: IN, DELAY, WAIT and OUT, IDX (the backend reads
 *   them by position, as Triton's does);
 * - the `dims` (not the reshape) of IN have one dimension, and those of DELAY are the same; WAIT,
 *   OUT and IDX are [1];
 * - IN and OUT are TYPE_INT32; DELAY, WAIT and IDX are TYPE_UINT32.
 * The decoupled transaction policy is not required: Triton's QA runs repeat_int32 with
 * `decoupled: False` too (qa/L0_decoupled NonDecoupledTest), where a request of one element gets one
 * response. Triton's backend reads no parameters; Nereid refuses any, as it refuses every
 * configuration field it would otherwise ignore.
 */
import type { ModelConfig } from '../../protocol/gen/model_config_pb.js';
import { dataTypeToConfig } from '../../protocol/data-type.js';
import { NereidError } from '../../kernel/errors.js';
import type { ModelSpec, TensorSpec } from '../../kernel/model-spec.js';
import { refuseUnknownParameters, shapeText } from '../triton-backend-common.js';

/** Checks the configuration as Triton's repeat backend does; throws INVALID_ARG. */
export function checkRepeatConfig(config: ModelConfig, spec: ModelSpec): void {
  const fail = (message: string): never => {
    throw new NereidError('INVALID_ARG', `model '${spec.name}': ${message}`);
  };
  if (config.maxBatchSize !== 0) fail('repeat backend only supports models with max_batch_size == 0');
  if (config.input.length !== 3) fail(`expected 3 inputs, got ${config.input.length}`);
  if (config.output.length !== 2) fail(`expected 2 outputs, got ${config.output.length}`);
  // The configuration's own tensors, in its order: `spec` also holds the sequence batcher's controls.
  const [input, delay, wait] = config.input.map((tensor) => spec.inputByName.get(tensor.name)!) as [TensorSpec, TensorSpec, TensorSpec];
  const [out, idx] = config.output.map((tensor) => spec.outputByName.get(tensor.name)!) as [TensorSpec, TensorSpec];
  const roles: ReadonlyArray<[TensorSpec, string, string, 'INT32' | 'UINT32']> = [
    [input, 'first input', 'IN', 'INT32'],
    [delay, 'second input', 'DELAY', 'UINT32'],
    [wait, 'third input', 'WAIT', 'UINT32'],
    [out, 'first output', 'OUT', 'INT32'],
    [idx, 'second output', 'IDX', 'UINT32'],
  ];
  for (const [tensor, position, name] of roles) {
    if (tensor.name !== name) fail(`expected ${position} tensor name to be ${name}, got ${tensor.name}`);
  }
  if (input.dims.length !== 1) fail(`expected IN shape to have one dimension, got ${shapeText(input.dims)}`);
  if (shapeText(input.dims) !== shapeText(delay.dims)) fail(`expected IN and DELAY shape to match, got ${shapeText(input.dims)} and ${shapeText(delay.dims)}`);
  for (const tensor of [wait, out, idx]) {
    if (shapeText(tensor.dims) !== '[1]') fail(`expected ${tensor.name} shape to be [1], got ${shapeText(tensor.dims)}`);
  }
  for (const [tensor, , name, dataType] of roles) {
    if (tensor.dataType !== dataType) fail(`expected ${name} datatype to be ${dataType}, got ${dataTypeToConfig(tensor.dataType)}`);
  }
  refuseUnknownParameters(config, 'repeat', []);
}
