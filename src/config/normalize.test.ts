import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { modelConfigToProtoJson } from './model-config-json.js';
import { normalizeModelConfig } from './normalize.js';
import { parseModelConfig } from './parse-model-config.js';

/** Normalizes a config given as text and returns its proto JSON. */
function normalized(text: string, options: { modelName?: string; gpuIds?: number[] } = {}): Record<string, unknown> {
  const config = parseModelConfig(text, 'config.pbtxt');
  return modelConfigToProtoJson(normalizeModelConfig(config, { modelName: 'm', ...options }));
}

const PINNED = { input_pinned_memory: { enable: true }, output_pinned_memory: { enable: true } };

describe('normalizeModelConfig', () => {
  test('fills the defaults of a minimal Python model', () => {
    assert.deepEqual(normalized('backend: "python"'), {
      name: 'm',
      backend: 'python',
      default_model_filename: 'model.py',
      version_policy: { latest: { num_versions: 1 } },
      optimization: PINNED,
      instance_group: [{ name: 'm', kind: 'KIND_CPU', count: 1 }],
    });
  });

  test('an ONNX Runtime platform gets its backend, file name and two CPU instances', () => {
    const result = normalized('name: "densenet" platform: "onnxruntime_onnx"');
    assert.equal(result.backend, 'onnxruntime');
    assert.equal(result.platform, 'onnxruntime_onnx');
    assert.equal(result.default_model_filename, 'model.onnx');
    assert.deepEqual(result.instance_group, [{ name: 'densenet', kind: 'KIND_CPU', count: 2 }]);
  });

  test('backend, platform and model file imply each other', () => {
    const fields = (text: string): unknown[] => {
      const r = normalized(text);
      return [r.backend, r.platform, r.default_model_filename];
    };
    assert.deepEqual(fields('backend: "onnxruntime"'), ['onnxruntime', 'onnxruntime_onnx', 'model.onnx']);
    assert.deepEqual(fields('default_model_filename: "model.onnx"'), ['onnxruntime', 'onnxruntime_onnx', 'model.onnx']);
    assert.deepEqual(fields('platform: "tensorrt_plan"'), ['tensorrt', 'tensorrt_plan', 'model.plan']);
    assert.deepEqual(fields('platform: "tensorflow_savedmodel"'), ['tensorflow', 'tensorflow_savedmodel', 'model.savedmodel']);
    assert.deepEqual(fields('default_model_filename: "model.graphdef"'), ['tensorflow', 'tensorflow_graphdef', 'model.graphdef']);
    assert.deepEqual(fields('platform: "pytorch_libtorch"'), ['pytorch', 'pytorch_libtorch', undefined]);
    assert.deepEqual(fields('backend: "pytorch"'), ['pytorch', 'pytorch_libtorch', 'model.pt']);
    assert.deepEqual(fields('platform: "torch_aoti"'), ['pytorch', 'torch_aoti', 'model.pt2']);
    assert.deepEqual(fields('default_model_filename: "model.xml"'), ['openvino', undefined, 'model.xml']);
    assert.deepEqual(fields('default_model_filename: "model.py"'), ['python', undefined, 'model.py']);
    assert.deepEqual(fields('backend: "identity"'), ['identity', undefined, undefined]);
    assert.deepEqual(fields('platform: "ensemble"'), [undefined, 'ensemble', undefined]);
  });

  test('keeps a name, version policy and optimization that are given', () => {
    const result = normalized(
      'name: "given" backend: "python" version_policy: { all { } } optimization { input_pinned_memory { enable: false } }',
    );
    assert.equal(result.name, 'given');
    assert.deepEqual(result.version_policy, { all: {} });
    assert.deepEqual(result.optimization, { input_pinned_memory: {}, output_pinned_memory: { enable: true } });
  });

  test('dynamic batching prefers max_batch_size when no size is given', () => {
    assert.deepEqual(normalized('max_batch_size: 8 dynamic_batching { }').dynamic_batching, { preferred_batch_size: [8] });
    assert.deepEqual(normalized('max_batch_size: 0 dynamic_batching { }').dynamic_batching, {});
    assert.deepEqual(
      normalized('max_batch_size: 8 dynamic_batching { preferred_batch_size: [ 2, 4 ] }').dynamic_batching,
      { preferred_batch_size: [2, 4] },
    );
  });

  test('sequence batching gets a one-second idle time and oldest-first preferred sizes', () => {
    assert.deepEqual(normalized('max_batch_size: 4 sequence_batching { }').sequence_batching, {
      max_sequence_idle_microseconds: '1000000',
    });
    assert.deepEqual(normalized('max_batch_size: 4 sequence_batching { oldest { } }').sequence_batching, {
      max_sequence_idle_microseconds: '1000000',
      oldest: { preferred_batch_size: [4] },
    });
    assert.deepEqual(normalized('sequence_batching { max_sequence_idle_microseconds: 5 oldest { } }').sequence_batching, {
      max_sequence_idle_microseconds: '5',
      oldest: {},
    });
  });

  test('an ensemble gets no instance group and no optimization', () => {
    const result = normalized('name: "pipeline" platform: "ensemble" ensemble_scheduling { step [ { model_name: "a" } ] }');
    assert.equal(result.instance_group, undefined);
    assert.equal(result.optimization, undefined);
    assert.deepEqual(result.version_policy, { latest: { num_versions: 1 } });
  });

  test('groups without a name are numbered by position; KIND_AUTO becomes KIND_CPU without GPUs', () => {
    const result = normalized(
      'backend: "onnxruntime" instance_group [ { count: 3 }, { name: "named" kind: KIND_MODEL }, { kind: KIND_CPU count: -1 } ]',
    );
    assert.deepEqual(result.instance_group, [
      { name: 'm_0', kind: 'KIND_CPU', count: 3 },
      { name: 'named', kind: 'KIND_MODEL', count: 1 },
      { name: 'm_2', kind: 'KIND_CPU', count: 2 },
    ]);
  });

  test('with GPUs, KIND_AUTO becomes KIND_GPU on every GPU unless a listed GPU is missing', () => {
    const result = normalized('backend: "onnxruntime" instance_group [ { }, { gpus: [ 1 ] }, { gpus: [ 3 ] }, { kind: KIND_GPU } ]', {
      gpuIds: [0, 1],
    });
    assert.deepEqual(result.instance_group, [
      { name: 'm_0', kind: 'KIND_GPU', count: 1, gpus: [0, 1] },
      { name: 'm_1', kind: 'KIND_GPU', count: 1, gpus: [1] },
      { name: 'm_2', kind: 'KIND_CPU', count: 2, gpus: [3] },
      { name: 'm_3', kind: 'KIND_GPU', count: 1, gpus: [0, 1] },
    ]);
  });

  test('does not modify its input and changes nothing on a second run', () => {
    const config = parseModelConfig('max_batch_size: 2 dynamic_batching { } backend: "onnxruntime"', 'config.pbtxt');
    const before = modelConfigToProtoJson(config);
    const once = normalizeModelConfig(config, { modelName: 'm' });
    assert.deepEqual(modelConfigToProtoJson(config), before);
    const twice = normalizeModelConfig(once, { modelName: 'other' });
    assert.deepEqual(modelConfigToProtoJson(twice), modelConfigToProtoJson(once));
  });
});
