import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { create } from '@bufbuild/protobuf';
import { ModelInferRequestSchema, ModelInferResponseSchema } from './gen/grpc_service_pb.js';
import { DataType, ModelConfigSchema } from './gen/model_config_pb.js';
import { fromPlainObject, toPlainObject } from './plain-object.js';

describe('messages as plain objects in the .proto names', () => {
  test('every field, 64-bit integers and enums as strings, bytes as Buffers, unset messages as null, the oneof named', () => {
    const response = create(ModelInferResponseSchema, {
      modelName: 'm',
      parameters: { big: { parameterChoice: { case: 'uint64Param', value: 2n ** 64n - 1n } } },
      outputs: [{ name: 'O', datatype: 'INT32', shape: [1n, 16n] }],
      rawOutputContents: [Uint8Array.of(1, 2)],
    });
    assert.deepEqual(toPlainObject(ModelInferResponseSchema, response), {
      model_name: 'm',
      model_version: '',
      id: '',
      parameters: { big: { parameter_choice: 'uint64_param', uint64_param: '18446744073709551615' } },
      outputs: [{ name: 'O', datatype: 'INT32', shape: ['1', '16'], parameters: {}, contents: null }],
      raw_output_contents: [Buffer.from([1, 2])],
    });
    const config = toPlainObject(ModelConfigSchema, create(ModelConfigSchema, { name: 'c', input: [{ name: 'I', dataType: DataType.TYPE_INT32, dims: [16n] }] }));
    assert.equal((config.input as Array<{ data_type: unknown }>)[0]!.data_type, 'TYPE_INT32');
    assert.deepEqual((config.input as Array<{ dims: unknown }>)[0]!.dims, ['16']);
    assert.equal(config.optimization, null);
    assert.equal('dynamic_batching' in config || 'scheduling_choice' in config, false, 'an unset oneof has neither member nor name');
  });

  test('a plain request as a message: integers from numbers or strings, oneofs by the member given', () => {
    const message = fromPlainObject(ModelInferRequestSchema, {
      model_name: 'm',
      parameters: { flag: { bool_param: true } },
      inputs: [{ name: 'A', datatype: 'INT64', shape: [2, '1'], contents: { int64_contents: ['-9223372036854775808', 5] } }],
      raw_input_contents: [Buffer.from('x'), 'eQ=='],
    });
    assert.deepEqual(
      message,
      create(ModelInferRequestSchema, {
        modelName: 'm',
        parameters: { flag: { parameterChoice: { case: 'boolParam', value: true } } },
        inputs: [{ name: 'A', datatype: 'INT64', shape: [2n, 1n], contents: { int64Contents: [-(2n ** 63n), 5n] } }],
        rawInputContents: [Buffer.from('x'), Buffer.from('y')],
      }),
    );
  });
});
