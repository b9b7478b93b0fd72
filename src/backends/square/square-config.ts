/**
 * What Triton's square backend (triton-inference-server/square_backend, src/square.cc) checks and reads
 * in a model configuration when the model loads (its ModelParameters constructor and
 * ModelState::ValidateModelConfig), with its error texts after Nereid's `model '<name>': `.
 *
 * Tensors, in Triton's order: exactly 1 input and 1 output, named IN and OUT, each with `dims: [ 1 ]`
 * (the configuration's dims, whatever the `reshape`), each TYPE_INT32.
 *
 * Parameters (string values): `CUSTOM_INFER_DELAY_NS` (each response waits this long first),
 * `CUSTOM_OUTPUT_DELAY_NS` (then this long after its output is filled), `CUSTOM_EMPTY_COUNT` (the
 * last that many responses of a request are not sent), `CUSTOM_FAIL_COUNT` (that many responses before
 * those are sent with the error "simulated failure", and the request goes on). As in Triton, a
 * value that is not all digits is left at its default, 0, with an info line in Triton's words; what
 * Triton's std::stoi throws on and so stops the server (an empty value, one past 2147483647) fails the
 * load instead. Nereid's own refusals, where Triton has no such case:
 * - a parameter the backend does not know. `CUSTOM_CANCEL_DELAY_NS`, which QA's square_int32_slow sets
 *   (qa/L0_response_statistics) and Triton's backend never reads, is accepted and changes nothing;
 * - a model that is not decoupled: the backend sends any number of responses to a request, from 0,
 *   and its request ends with a flag alone (Triton's backend does not check; its requests then break
 *   the one-response exchange).
 */
import type { ModelConfig } from '../../protocol/gen/model_config_pb.js';
import { dataTypeToConfig } from '../../protocol/data-type.js';
import { NereidError } from '../../kernel/errors.js';
import type { ModelSpec } from '../../kernel/model-spec.js';
import { STOI_MAX, refuseUnknownParameters, shapeText } from '../triton-backend-common.js';

export interface SquareSettings {
  /** `CUSTOM_INFER_DELAY_NS`, 0 when unset. */
  readonly inferDelayNs: number;
  /** `CUSTOM_OUTPUT_DELAY_NS`, 0 when unset. */
  readonly outputDelayNs: number;
  /** `CUSTOM_FAIL_COUNT`, 0 when unset. */
  readonly failCount: number;
  /** `CUSTOM_EMPTY_COUNT`, 0 when unset. */
  readonly emptyCount: number;
}

const READ = ['CUSTOM_INFER_DELAY_NS', 'CUSTOM_OUTPUT_DELAY_NS', 'CUSTOM_FAIL_COUNT', 'CUSTOM_EMPTY_COUNT'] as const;
const KNOWN: readonly string[] = [...READ, 'CUSTOM_CANCEL_DELAY_NS'];

/**
 * Checks the configuration as Triton's square backend does and reads its parameters; throws
 * INVALID_ARG. `log` gets the info lines Triton's backend writes about the values it leaves at 0.
 */
export function readSquareSettings(config: ModelConfig, spec: ModelSpec, log: (message: string) => void): SquareSettings {
  const fail = (message: string): never => {
    throw new NereidError('INVALID_ARG', `model '${spec.name}': ${message}`);
  };
  refuseUnknownParameters(config, 'square', KNOWN);
  const [inferDelayNs, outputDelayNs, failCount, emptyCount] = READ.map((key) => {
    const text = config.parameters[key]?.stringValue;
    if (text === undefined) return 0;
    // ModelParameters::IsNumber: every character a digit, which the empty text passes.
    if (!/^\d*$/.test(text)) {
      log(`${text} string_value from ${key} parameter is not a number`);
      return 0;
    }
    if (text === '' || Number(text) > STOI_MAX) {
      const got = text === '' ? 'is empty' : `is ${text}`;
      return fail(`parameters '${key}' ${got}: Triton's square backend reads it with std::stoi, which throws and stops the server; give a whole number from 0 to ${STOI_MAX}`);
    }
    return Number(text);
  }) as [number, number, number, number];
  checkTensors(config, spec, fail);
  if (!spec.isDecoupled) {
    fail('the square backend sends as many responses to a request as its IN value (none for 0), so the model needs model_transaction_policy { decoupled: true }');
  }
  return { inferDelayNs, outputDelayNs, failCount, emptyCount };
}

/** ModelState::ValidateModelConfig's checks, in its order and words. */
function checkTensors(config: ModelConfig, spec: ModelSpec, fail: (message: string) => never): void {
  if (config.input.length !== 1) fail(`expected 1 input, got ${config.input.length}`);
  if (config.output.length !== 1) fail(`expected 1 output, got ${config.output.length}`);
  const input = spec.inputByName.get(config.input[0]!.name)!;
  const output = spec.outputByName.get(config.output[0]!.name)!;
  if (input.name !== 'IN') fail(`expected first input tensor name to be IN, got ${input.name}`);
  if (output.name !== 'OUT') fail(`expected first output tensor name to be OUT, got ${output.name}`);
  if (input.dims.length !== 1 || input.dims[0] !== 1) fail(`expected IN shape to be [1], got ${shapeText(input.dims)}`);
  if (output.dims.length !== 1 || output.dims[0] !== 1) fail(`expected OUT shape to be [1], got ${shapeText(output.dims)}`);
  if (input.dataType !== 'INT32') fail(`expected IN datatype to be INT32, got ${dataTypeToConfig(input.dataType)}`);
  if (output.dataType !== 'INT32') fail(`expected OUT datatype to be INT32, got ${dataTypeToConfig(output.dataType)}`);
}
