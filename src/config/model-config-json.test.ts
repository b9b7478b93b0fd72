import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { create } from '@bufbuild/protobuf';
import { NereidError } from '../kernel/errors.js';
import { ModelConfigSchema } from '../protocol/gen/model_config_pb.js';
import { modelConfigFromJson, modelConfigToProtoJson, modelConfigToTritonJson } from './model-config-json.js';
import { normalizeModelConfig } from './normalize.js';
import { parseModelConfig } from './parse-model-config.js';

const parse = (text: string) => parseModelConfig(text, 'config.pbtxt');

describe('modelConfigToProtoJson', () => {
  test('leaves defaults out and writes 64-bit integers as strings', () => {
    const config = parse('name: "a" max_batch_size: 0 input [ { name: "X" data_type: TYPE_FP32 dims: [ -1, 4 ] optional: false } ]');
    assert.deepEqual(modelConfigToProtoJson(config), {
      name: 'a',
      input: [{ name: 'X', data_type: 'TYPE_FP32', dims: ['-1', '4'] }],
    });
  });
});

describe('modelConfigToTritonJson', () => {
  test('matches a real GET config response of the ONNX quick start model, byte for byte', () => {
    // Response of Triton 24.x for docs/examples/model_repository/densenet_onnx without config.pbtxt
    // (auto-completed), CPU only.
    const config = normalizeModelConfig(
      parse(
        'platform: "onnxruntime_onnx"\n' +
          'input [ { name: "data_0" data_type: TYPE_FP32 dims: [ 1, 3, 224, 224 ] } ]\n' +
          'output [ { name: "fc6_1" data_type: TYPE_FP32 dims: [ 1, 1000, 1, 1 ] } ]',
      ),
      { modelName: 'densenet_onnx' },
    );
    assert.equal(
      modelConfigToTritonJson(config),
      '{"name":"densenet_onnx","platform":"onnxruntime_onnx","backend":"onnxruntime","runtime":"",' +
        '"version_policy":{"latest":{"num_versions":1}},"max_batch_size":0,' +
        '"input":[{"name":"data_0","data_type":"TYPE_FP32","format":"FORMAT_NONE","dims":[1,3,224,224],' +
        '"is_shape_tensor":false,"allow_ragged_batch":false,"optional":false,"is_non_linear_format_io":false}],' +
        '"output":[{"name":"fc6_1","data_type":"TYPE_FP32","dims":[1,1000,1,1],"label_filename":"",' +
        '"is_shape_tensor":false,"is_non_linear_format_io":false}],"batch_input":[],"batch_output":[],' +
        '"optimization":{"priority":"PRIORITY_DEFAULT","input_pinned_memory":{"enable":true},' +
        '"output_pinned_memory":{"enable":true},"gather_kernel_buffer_threshold":0,"eager_batching":false},' +
        '"instance_group":[{"name":"densenet_onnx","kind":"KIND_CPU","count":2,"gpus":[],"secondary_devices":[],' +
        '"profile":[],"passive":false,"host_policy":""}],"default_model_filename":"model.onnx",' +
        '"cc_model_filenames":{},"metric_tags":{},"parameters":{},"model_warmup":[]}',
    );
  });

  test('prints dynamic batching with its defaults and int64 fields as numbers', () => {
    const json = JSON.parse(modelConfigToTritonJson(parse('max_batch_size: 100 dynamic_batching { preferred_batch_size: [ 50 ] }')));
    assert.deepEqual(json.dynamic_batching, {
      preferred_batch_size: [50],
      max_queue_delay_microseconds: 0,
      preserve_ordering: false,
      priority_levels: 0,
      default_priority_level: 0,
      priority_queue_policy: {},
    });
  });

  test('keeps the int64 fields Triton does not convert as strings', () => {
    const text = `
      dynamic_batching {
        priority_levels: 2
        default_priority_level: 1
        priority_queue_policy { key: 2 value: { default_timeout_microseconds: 100 } }
        priority_queue_policy { key: 1 value: { max_queue_size: 3 } }
      }
      instance_group [ { secondary_devices [ { device_id: 7 } ] } ]
      model_warmup [ { name: "w" inputs { key: "X" value: { dims: [ 2 ] zero_data: true } } } ]`;
    const json = JSON.parse(modelConfigToTritonJson(parse(text)));
    assert.deepEqual(Object.keys(json.dynamic_batching.priority_queue_policy), ['1', '2']);
    assert.equal(json.dynamic_batching.priority_queue_policy['2'].default_timeout_microseconds, 100);
    assert.equal(json.dynamic_batching.priority_levels, 2);
    assert.equal(json.instance_group[0].secondary_devices[0].device_id, '7');
    assert.deepEqual(json.model_warmup[0].inputs.X, { data_type: 'TYPE_INVALID', dims: [2], zero_data: true });
  });

  test('sequence batching: state dims are numbers, initial_state dims stay strings as in Triton', () => {
    const text = `sequence_batching {
      max_sequence_idle_microseconds: 5000000
      oldest { max_queue_delay_microseconds: 10 }
      state [ { input_name: "I" output_name: "O" dims: [ -1 ] initial_state [ { dims: [ 3 ] name: "s" zero_data: true } ] } ]
    }`;
    const json = JSON.parse(modelConfigToTritonJson(parse(text)));
    assert.equal(json.sequence_batching.max_sequence_idle_microseconds, 5000000);
    assert.equal(json.sequence_batching.oldest.max_queue_delay_microseconds, 10);
    assert.deepEqual(json.sequence_batching.state[0].dims, [-1]);
    assert.deepEqual(json.sequence_batching.state[0].initial_state[0].dims, ['3']);
    assert.equal(json.sequence_batching.direct, undefined);
  });

  test('ensemble step versions are numbers', () => {
    const json = JSON.parse(modelConfigToTritonJson(parse('ensemble_scheduling { step [ { model_name: "a" model_version: -1 } ] }')));
    assert.deepEqual(json.ensemble_scheduling.step[0], {
      model_name: 'a',
      model_version: -1,
      input_map: {},
      output_map: {},
      model_namespace: '',
    });
  });

  test('writes floats as protobuf does and 64-bit values exactly', () => {
    const text = `sequence_batching {
      max_sequence_idle_microseconds: 18446744073709551615
      control_input [ { name: "C" control [ { fp32_false_true: [ 0.1, 1 ] } ] } ]
      direct { minimum_slot_utilization: 0.3333333 }
    }`;
    const json = modelConfigToTritonJson(parse(text));
    assert.match(json, /"max_sequence_idle_microseconds":18446744073709551615,/);
    assert.match(json, /"fp32_false_true":\[0\.1,1\]/);
    assert.match(json, /"minimum_slot_utilization":0\.333333313/);
  });

  test('an empty configuration is an empty body', () => {
    assert.equal(modelConfigToTritonJson(create(ModelConfigSchema)), '');
  });
});

function jsonErrorOf(json: string | object): string {
  try {
    modelConfigFromJson(json as never, 'load request config');
  } catch (error) {
    assert.ok(error instanceof NereidError);
    assert.equal(error.status, 'INVALID_ARG');
    return error.message;
  }
  assert.fail('expected an error');
}

describe('modelConfigFromJson', () => {
  test('refuses JSON text nested past 128 levels with INVALID_ARG (5,000 levels overflowed the stack: a RangeError, found by the fuzz suite)', () => {
    assert.equal(jsonErrorOf(`{"name":${'['.repeat(5000)}1${']'.repeat(5000)}}`), 'load request config: invalid JSON: arrays and objects nest deeper than 128 levels (at character 135)');
    assert.equal(jsonErrorOf(`${'['.repeat(129)}${']'.repeat(129)}`), 'load request config: invalid JSON: arrays and objects nest deeper than 128 levels (at character 128)');
    assert.match(jsonErrorOf(`${'['.repeat(128)}${']'.repeat(128)}`), /expected a JSON object$/);
  });
  test('reads what Triton writes', () => {
    const config = normalizeModelConfig(parse('max_batch_size: 4 dynamic_batching { } input [ { name: "X" data_type: TYPE_INT64 dims: [ 2 ] } ]'), {
      modelName: 'm',
    });
    const back = modelConfigFromJson(modelConfigToTritonJson(config));
    assert.deepEqual(modelConfigToProtoJson(back), modelConfigToProtoJson(config));
  });

  test('accepts integers as strings, JSON field names, any-case enums and nulls', () => {
    const config = modelConfigFromJson({
      name: 'm',
      maxBatchSize: '8',
      input: [{ name: 'X', data_type: 'type_fp32', dims: ['-1', 3] }],
      instance_group: [{ kind: 'kind_cpu', count: 2 }],
      dynamic_batching: { max_queue_delay_microseconds: 100 },
      output: null,
    });
    assert.deepEqual(modelConfigToProtoJson(config), {
      name: 'm',
      max_batch_size: 8,
      input: [{ name: 'X', data_type: 'TYPE_FP32', dims: ['-1', '3'] }],
      instance_group: [{ kind: 'KIND_CPU', count: 2 }],
      dynamic_batching: { max_queue_delay_microseconds: '100' },
    });
  });

  test('an unknown field, with the closest name', () => {
    assert.equal(
      jsonErrorOf('{"name": "m", "max_batch_sise": 8}'),
      "load request config: unknown field 'max_batch_sise' at the top level; did you mean 'max_batch_size'?",
    );
    assert.equal(
      jsonErrorOf({ input: [{ name: 'X', dim: [1] }] }),
      "load request config: unknown field 'dim' in field 'input[0]'; did you mean 'dims'?",
    );
  });

  test('a value of the wrong type names the field', () => {
    assert.equal(
      jsonErrorOf({ max_batch_size: 'eight' }),
      'load request config: invalid value "eight" in field \'max_batch_size\'; expected an integer',
    );
    assert.equal(
      jsonErrorOf({ input: [{ dims: [1, 2.5] }] }),
      "load request config: invalid value 2.5 in field 'input[0].dims[1]'; expected an integer",
    );
    assert.equal(
      jsonErrorOf({ parameters: { K: { string_value: 3 } } }),
      'load request config: invalid value 3 in field \'parameters["K"].string_value\'; expected a string',
    );
    assert.equal(
      jsonErrorOf({ input: { name: 'X' } }),
      'load request config: invalid value {"name":"X"} in field \'input\'; expected a JSON array',
    );
  });

  test('out of range and unknown enum values', () => {
    assert.equal(
      jsonErrorOf({ instance_group: [{ count: 3000000000 }] }),
      "load request config: value 3000000000 is out of range in field 'instance_group[0].count'; expected an integer from -2147483648 to 2147483647",
    );
    assert.equal(
      jsonErrorOf({ output: [{ data_type: 'TYPE_FP23' }] }),
      'load request config: unknown value "TYPE_FP23" in field \'output[0].data_type\'; did you mean \'TYPE_FP32\'?',
    );
  });

  test('malformed JSON gives the position', () => {
    // The wording comes from V8 (Node 20: "Expected double-quoted property name in JSON at position 17").
    assert.match(jsonErrorOf('{\n  "name": "m",\n}'), /^load request config: invalid JSON: .* at position 17 \(line 3, column 1\)$/);
    assert.equal(jsonErrorOf('[1]'), 'load request config: invalid value [1] for the configuration; expected a JSON object');
  });
});
