import { NereidError } from '../../core/index.js';
import type { InferParameter } from '../../protocol/gen/grpc_service_pb.js';

type Choice = InferParameter['parameterChoice']['case'];

/** What each parameter Triton reads itself may hold, and its text for anything else (SetInferenceRequestMetadata, src/grpc/infer_handler.cc). */
const EXPECTED: ReadonlyMap<string, { readonly cases: readonly Choice[]; readonly names: string }> = new Map([
  ['sequence_id', { cases: ['int64Param', 'stringParam'], names: 'int64_param or string_param' }],
  ['sequence_start', { cases: ['boolParam'], names: 'bool_param' }],
  ['sequence_end', { cases: ['boolParam'], names: 'bool_param' }],
  ['priority', { cases: ['int64Param', 'uint64Param'], names: 'int64_param or uint64_param' }],
  ['timeout', { cases: ['int64Param'], names: 'int64_param' }],
]);

/** Any other parameter reaches the core as one of these (`triton_` keys are checked by checkRequestParameters). */
const OTHER_CASES: readonly Choice[] = ['int64Param', 'boolParam', 'stringParam', 'doubleParam'];

/**
 * The request parameters of a ModelInferRequest checked by type as Triton's gRPC front end checks them,
 * with its texts (qa clients compare them); a negative int64 priority is refused there too.
 */
export function checkGrpcRequestParameterTypes(parameters: Readonly<Record<string, InferParameter>>): void {
  for (const [key, parameter] of Object.entries(parameters)) {
    const choice = parameter.parameterChoice;
    const expected = EXPECTED.get(key);
    if (expected === undefined) {
      if (!key.startsWith('triton_') && !OTHER_CASES.includes(choice.case)) {
        throw new NereidError('INVALID_ARG', `invalid value type for '${key}' parameter, expected int64_param, bool_param, or string_param.`);
      }
      continue;
    }
    if (!expected.cases.includes(choice.case)) throw new NereidError('INVALID_ARG', `invalid value type for '${key}' parameter, expected ${expected.names}.`);
    if (key === 'priority' && choice.case === 'int64Param' && choice.value < 0n) throw new NereidError('INVALID_ARG', "invalid value for 'priority', expected value >= 0.");
  }
}

/**
 * A requested output's `classification` as Triton's gRPC front end reads it, with its texts
 * (ParseClassificationParams, src/grpc/infer_handler.cc): an int64_param above 0.
 */
export function checkGrpcClassificationParameter(parameters: Readonly<Record<string, InferParameter>>): void {
  const choice = parameters.classification?.parameterChoice;
  if (choice === undefined) return;
  if (choice.case !== 'int64Param') throw new NereidError('INVALID_ARG', "invalid value type for 'classification' parameter, expected int64_param");
  if (choice.value <= 0n) throw new NereidError('INVALID_ARG', "invalid value for 'classification' parameter, expected >= 0");
}
