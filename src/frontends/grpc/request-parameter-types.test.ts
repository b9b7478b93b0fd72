import assert from 'node:assert/strict';
import { test } from 'node:test';
import { create } from '@bufbuild/protobuf';
import { type InferParameter, InferParameterSchema } from '../../protocol/gen/grpc_service_pb.js';
import { checkGrpcClassificationParameter, checkGrpcRequestParameterTypes } from './request-parameter-types.js';

const param = (choice: InferParameter['parameterChoice']): InferParameter => create(InferParameterSchema, { parameterChoice: choice });

test("request parameters of the wrong type are refused in the words of Triton's gRPC front end", () => {
  const cases: Array<[string, InferParameter, string]> = [
    ['sequence_id', param({ case: 'boolParam', value: true }), "invalid value type for 'sequence_id' parameter, expected int64_param or string_param."],
    ['sequence_start', param({ case: 'stringParam', value: 'yes' }), "invalid value type for 'sequence_start' parameter, expected bool_param."],
    ['sequence_end', param({ case: 'int64Param', value: 1n }), "invalid value type for 'sequence_end' parameter, expected bool_param."],
    ['priority', param({ case: 'doubleParam', value: 1.5 }), "invalid value type for 'priority' parameter, expected int64_param or uint64_param."],
    ['priority', param({ case: 'int64Param', value: -1n }), "invalid value for 'priority', expected value >= 0."],
    ['timeout', param({ case: 'uint64Param', value: 5n }), "invalid value type for 'timeout' parameter, expected int64_param."],
    ['custom', param({ case: 'uint64Param', value: 5n }), "invalid value type for 'custom' parameter, expected int64_param, bool_param, or string_param."],
  ];
  for (const [key, value, message] of cases) assert.throws(() => checkGrpcRequestParameterTypes({ [key]: value }), { status: 'INVALID_ARG', message });
  checkGrpcRequestParameterTypes({
    sequence_id: param({ case: 'stringParam', value: 's' }),
    sequence_start: param({ case: 'boolParam', value: true }),
    priority: param({ case: 'uint64Param', value: 2n }),
    timeout: param({ case: 'int64Param', value: 100n }),
    custom: param({ case: 'doubleParam', value: 0.5 }),
  });
});

test("a requested output's classification is an int64_param above 0, or refused in the words of Triton's gRPC front end", () => {
  const cases: Array<[InferParameter, string]> = [
    [param({ case: 'uint64Param', value: 2n }), "invalid value type for 'classification' parameter, expected int64_param"],
    [param({ case: 'stringParam', value: '2' }), "invalid value type for 'classification' parameter, expected int64_param"],
    [param({ case: 'int64Param', value: 0n }), "invalid value for 'classification' parameter, expected >= 0"],
    [param({ case: 'int64Param', value: -3n }), "invalid value for 'classification' parameter, expected >= 0"],
  ];
  for (const [value, message] of cases) assert.throws(() => checkGrpcClassificationParameter({ classification: value }), { status: 'INVALID_ARG', message });
  checkGrpcClassificationParameter({ classification: param({ case: 'int64Param', value: 2n }) });
  checkGrpcClassificationParameter({ binary_data: param({ case: 'boolParam', value: true }) });
});

test('parameters named like the properties of every object are checked as any other name', () => {
  for (const key of ['toString', 'constructor', 'hasOwnProperty']) {
    assert.throws(() => checkGrpcRequestParameterTypes({ [key]: param({ case: undefined }) }), {
      status: 'INVALID_ARG',
      message: `invalid value type for '${key}' parameter, expected int64_param, bool_param, or string_param.`,
    });
    checkGrpcRequestParameterTypes({ [key]: param({ case: 'stringParam', value: 'v' }) });
  }
});
