/**
 * What Triton's identity backend (triton-inference-server/identity_backend, src/identity.cc) checks
 * and reads in a model configuration when the model loads (its ModelState::ValidateModelConfig and
 * CreationDelay), with its error texts after Nereid's `model '<name>': ` prefix.
 *
 * Pairing: the configuration has as many outputs as inputs; every input is named INPUT<index> and
 * every output OUTPUT<index>; each output has the input of the same index (the text after the
 * prefix), with the same data type and the same shape (`reshape` when set, else `dims`). Outputs are
 * checked in the order of their index text, as Triton walks a std::map.
 *
 * Parameters (string values, read as Triton does with std::stoi, but refused rather than crashing the
 * server or sleeping for ever when they are not whole numbers from 0 to 2^31 - 1):
 * - `execute_delay_ms`: each execution waits this long before copying;
 * - `instance_wise_delay_multiplier` (only with execute_delay_ms): instance i waits
 *   execute_delay_ms × max(multiplier × i, 1), i counting the model's instances from 0 as they are made;
 * - `creation_delay_sec`: the load waits this long before the model is ready;
 * - `enable_custom_tracing`, `nested_span_count`, `single_activity_frequency`: custom trace activities
 *   (CUSTOM_ACTIVITY_START...), which Nereid's traces cannot hold: "true" is refused; the counts only
 *   count with it, so with "false" they change nothing, as in Triton.
 * Any other parameter fails the load, naming the known ones (Triton's backend ignores it; Nereid's
 * fil backend refuses what it does not read, and so does this one).
 */
import type { ModelConfig } from '../../protocol/gen/model_config_pb.js';
import { dataTypeToConfig } from '../../protocol/data-type.js';
import { NereidError } from '../../kernel/errors.js';
import type { ModelSpec, TensorSpec } from '../../kernel/model-spec.js';
import { STOI_MAX, refuseUnknownParameters, shapeText } from '../triton-backend-common.js';

export interface IdentitySettings {
  /** Each output's input, by name: OUTPUT<i> → INPUT<i>. */
  readonly inputOf: ReadonlyMap<string, string>;
  /** `execute_delay_ms`, 0 when unset. */
  readonly executeDelayMs: number;
  /** `instance_wise_delay_multiplier`, 0 when unset. */
  readonly delayMultiplier: number;
  /** `creation_delay_sec`, 0 when unset. */
  readonly creationDelaySec: number;
}

const KNOWN = ['execute_delay_ms', 'instance_wise_delay_multiplier', 'creation_delay_sec', 'enable_custom_tracing', 'nested_span_count', 'single_activity_frequency'];

const INPUT_PREFIX = 'INPUT';
const OUTPUT_PREFIX = 'OUTPUT';

/** What std::stoi reads a number from: optional white space and sign, then a digit. */
const STOI_NUMBER = /^[\t\n\v\f\r ]*[+-]?\d/;

/** Checks the configuration as Triton's identity backend does and reads its parameters; throws INVALID_ARG. */
export function readIdentitySettings(config: ModelConfig, spec: ModelSpec): IdentitySettings {
  const fail = (message: string): never => {
    throw new NereidError('INVALID_ARG', `model '${spec.name}': ${message}`);
  };
  // The configuration's own tensors: `spec` also holds the sequence batcher's controls and states.
  const inputs = config.input.map((input) => spec.inputByName.get(input.name)!);
  const outputs = config.output.map((output) => spec.outputByName.get(output.name)!);
  const inputOf = pairTensors(inputs, outputs, fail);
  const parameter = (key: string): string | undefined => config.parameters[key]?.stringValue;
  refuseUnknownParameters(config, 'identity', KNOWN);
  const integer = (key: string): number | undefined => {
    const text = parameter(key);
    if (text === undefined) return undefined;
    const value = /^\d+$/.test(text) ? Number(text) : Number.NaN;
    if (!(value <= STOI_MAX)) fail(`parameters '${key}' must be an integer from 0 to ${STOI_MAX}, got "${text}"`);
    return value;
  };
  const executeDelayMs = integer('execute_delay_ms');
  const delayMultiplier = integer('instance_wise_delay_multiplier');
  if (delayMultiplier !== undefined && executeDelayMs === undefined) {
    fail("parameters 'instance_wise_delay_multiplier' is read only with 'execute_delay_ms', whose delay it multiplies by the instance's index; set execute_delay_ms or remove it");
  }
  const tracing = parameter('enable_custom_tracing');
  if (tracing === 'true') {
    fail("parameters 'enable_custom_tracing' is \"true\", but Nereid's traces hold no custom activities (CUSTOM_ACTIVITY_START ...); remove it to load the model");
  }
  if (tracing !== undefined && tracing !== 'false') fail(`parameters 'enable_custom_tracing' must be true or false, got "${tracing}"`);
  integer('nested_span_count');
  integer('single_activity_frequency');
  return { inputOf, executeDelayMs: executeDelayMs ?? 0, delayMultiplier: delayMultiplier ?? 0, creationDelaySec: integer('creation_delay_sec') ?? 0 };
}

/** Triton's pairing checks, in its order, then the index check its requests rely on; returns OUTPUT<i> → INPUT<i>. */
function pairTensors(inputs: readonly TensorSpec[], outputs: readonly TensorSpec[], fail: (message: string) => never): Map<string, string> {
  if (inputs.length !== outputs.length) fail('model configuration must have equal input/output pairs');
  // Keyed by the index text; the first of two tensors with one index wins, as std::map::insert keeps it.
  const inputByIndex = new Map<string, TensorSpec>();
  const outputByIndex = new Map<string, TensorSpec>();
  inputs.forEach((input, position) => {
    const output = outputs[position]!;
    if (!input.name.startsWith(INPUT_PREFIX)) fail(`expected input name to follow INPUT<index> pattern, got '${input.name}'`);
    if (!output.name.startsWith(OUTPUT_PREFIX)) fail(`expected output name to follow OUTPUT<index> pattern, got '${output.name}'`);
    const inputIndex = input.name.slice(INPUT_PREFIX.length);
    const outputIndex = output.name.slice(OUTPUT_PREFIX.length);
    if (!inputByIndex.has(inputIndex)) inputByIndex.set(inputIndex, input);
    if (!outputByIndex.has(outputIndex)) outputByIndex.set(outputIndex, output);
  });
  const inputOf = new Map<string, string>();
  for (const index of [...outputByIndex.keys()].sort()) {
    const output = outputByIndex.get(index)!;
    const input = inputByIndex.get(index);
    if (input === undefined) return fail('expected input and output indices to match');
    if (input.dataType !== output.dataType) {
      fail(`expected input and output datatype to match, got ${dataTypeToConfig(input.dataType)} and ${dataTypeToConfig(output.dataType)}`);
    }
    const inputShape = shapeText(input.reshape ?? input.dims);
    const outputShape = shapeText(output.reshape ?? output.dims);
    if (inputShape !== outputShape) fail(`expected input and output shape to match, got ${inputShape} and ${outputShape}`);
    inputOf.set(output.name, input.name);
  }
  // NOTE: Triton's backend reads every request's indices with std::stoi, which throws (and ends the
  // server) at the first request when the text after the prefix does not start with a number.
  const checkIndex = (tensor: TensorSpec, prefix: string): void => {
    if (STOI_NUMBER.test(tensor.name.slice(prefix.length))) return;
    fail(`'${tensor.name}' has no number after ${prefix}: Triton's identity backend reads the index with std::stoi at every request and stops the server on it; name it ${prefix}<number>`);
  };
  for (const input of inputs) checkIndex(input, INPUT_PREFIX);
  for (const output of outputs) checkIndex(output, OUTPUT_PREFIX);
  return inputOf;
}

/**
 * The execution delay of the model's `instanceIndex`-th instance (from 0), as Triton's identity
 * backend computes it: execute_delay_ms × max(multiplier × index, 1).
 */
export function instanceDelayMs(settings: IdentitySettings, instanceIndex: number): number {
  return settings.executeDelayMs * Math.max(settings.delayMultiplier * instanceIndex, 1);
}
