import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { NereidError } from '../kernel/errors.js';
import type { ModelConfig } from '../protocol/gen/model_config_pb.js';
import { normalizeModelConfig } from './normalize.js';
import { parseModelConfig } from './parse-model-config.js';
import { validateModelConfig, type ValidateOptions } from './validate.js';

const FILE = 'models/simple/config.pbtxt';
const BACKENDS = ['onnxruntime', 'python', 'tensorrt'];
const PLATFORMS = ['onnxruntime_onnx', 'tensorrt_plan', 'ensemble'];

const IO = `
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 16 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 16 ] } ]`;
const SIMPLE = `backend: "onnxruntime"\nmax_batch_size: 8\n${IO}`;

const ENSEMBLE_IO = `
input [ { name: "IN" data_type: TYPE_FP32 dims: [ 4 ] } ]
output [ { name: "OUT" data_type: TYPE_FP32 dims: [ 4 ] } ]`;

function options(extra: Partial<ValidateOptions> = {}): ValidateOptions {
  return {
    file: FILE,
    isKnownBackend: (name) => BACKENDS.includes(name),
    isKnownPlatform: (name) => PLATFORMS.includes(name),
    knownBackends: BACKENDS,
    knownPlatforms: PLATFORMS,
    ...extra,
  };
}

function prepare(text: string, gpuIds?: number[]): ModelConfig {
  return normalizeModelConfig(parseModelConfig(text, FILE), { modelName: 'simple', ...(gpuIds ? { gpuIds } : {}) });
}

/** Normalizes and validates `text`; returns the error message, or undefined when it is valid. */
function check(text: string, extra: Partial<ValidateOptions> = {}): string | undefined {
  return errorOf(prepare(text, extra.gpuIds as number[] | undefined), extra);
}

function errorOf(config: ModelConfig, extra: Partial<ValidateOptions> = {}): string | undefined {
  try {
    validateModelConfig(config, options(extra));
    return undefined;
  } catch (error) {
    assert.ok(error instanceof NereidError);
    assert.equal(error.status, error.message.includes('still has kind KIND_AUTO') ? 'INTERNAL' : 'INVALID_ARG');
    return error.message;
  }
}

const expectError = (text: string, message: string, extra: Partial<ValidateOptions> = {}): void => {
  assert.equal(check(text, extra), `${FILE}: ${message}`);
};

describe('validateModelConfig: the model', () => {
  test('a complete model passes', () => {
    assert.equal(check(SIMPLE), undefined);
  });

  test('name is required and must match the folder when given', () => {
    assert.equal(errorOf(parseModelConfig(SIMPLE, FILE)), `${FILE}: name is empty; expected the model's name`);
    expectError(SIMPLE, "name 'simple' differs from the model folder 'other'; expected the folder name", { modelName: 'other' });
  });

  test('backend or platform is required', () => {
    expectError(
      IO,
      'backend and platform are both empty; expected a backend (backends: onnxruntime, python, tensorrt) ' +
        'or a platform (platforms: onnxruntime_onnx, tensorrt_plan, ensemble)',
    );
  });

  test('the backend must be known', () => {
    expectError(`backend: "tensorflow"\n${IO}`, "backend 'tensorflow' is unknown; expected a backend this server has (backends: onnxruntime, python, tensorrt)");
  });

  test('a platform that names no backend', () => {
    expectError(
      `platform: "caffe2_netdef"\n${IO}`,
      "backend is empty and platform 'caffe2_netdef' is unknown; expected a backend (backends: onnxruntime, python, tensorrt) " +
        'or a known platform (platforms: onnxruntime_onnx, tensorrt_plan, ensemble)',
    );
  });

  test('platform and backend must belong together', () => {
    expectError(`backend: "onnxruntime" platform: "tensorrt_plan"\n${IO}`, "platform 'tensorrt_plan' does not match backend 'onnxruntime'; expected platform 'onnxruntime_onnx'");
    assert.equal(check(`backend: "python" platform: "anything"\n${IO}`), undefined);
  });

  test('max_batch_size must not be negative', () => {
    expectError(`backend: "python" max_batch_size: -1\n${IO}`, 'max_batch_size is -1; expected 0 (no batching) or a positive batch size');
  });

  test('version_policy must be set', () => {
    const config = parseModelConfig(`name: "simple" backend: "python"\n${IO}`, FILE);
    assert.equal(errorOf(config), `${FILE}: version_policy is not set; expected latest, all or specific (normalizeModelConfig fills latest)`);
  });

  test('a decoupled model cannot use the response cache', () => {
    expectError(
      `${SIMPLE}\nmodel_transaction_policy { decoupled: true }\nresponse_cache { enable: true }`,
      "Response Cache does not currently support model simple with 'decoupled' transaction policy. Please disable the response cache.",
    );
  });

  test('model_metrics entries must be complete', () => {
    expectError(
      `${SIMPLE}\nmodel_metrics { metric_control [ { histogram_options { buckets: [ 1 ] } } ] }`,
      'model_metrics.metric_control[0].metric_identifier.family is empty; expected the name of a metric family, e.g. nv_inference_first_response_histogram_ms',
    );
    expectError(
      `${SIMPLE}\nmodel_metrics { metric_control [ { metric_identifier { family: "f" } } ] }`,
      'model_metrics.metric_control[0].histogram_options is not set; expected histogram_options { buckets: [ ... ] }',
    );
    expectError(
      `${SIMPLE}\nmodel_metrics { metric_control [ { metric_identifier { family: "f" } histogram_options { } } ] }`,
      'model_metrics.metric_control[0].histogram_options.buckets is empty; expected at least one bucket boundary',
    );
  });
});

describe('validateModelConfig: inputs and outputs', () => {
  const withInputs = (inputs: string, maxBatchSize = 8): string =>
    `backend: "onnxruntime" max_batch_size: ${maxBatchSize}\ninput [ ${inputs} ]\noutput [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 16 ] } ]`;

  test('a tensor needs a name, a data type and dims', () => {
    expectError(withInputs('{ data_type: TYPE_FP32 dims: [ 1 ] }'), 'input[0].name is empty; expected a tensor name');
    expectError(withInputs('{ name: "A" dims: [ 1 ] }'), "input[0] 'A' has no data_type; expected a type such as TYPE_FP32, TYPE_INT64 or TYPE_STRING");
    expectError(withInputs('{ name: "A" data_type: 99 dims: [ 1 ] }'), "input[0] 'A' has unknown data_type 99; expected a type such as TYPE_FP32, TYPE_INT64 or TYPE_STRING");
    expectError(
      withInputs('{ name: "A" data_type: TYPE_FP32 }'),
      "input[0] 'A' has empty dims; expected at least one dimension (a scalar is dims: [ 1 ] with reshape: { shape: [ ] })",
    );
  });

  test('names are unique among inputs and among outputs', () => {
    expectError(
      withInputs('{ name: "A" data_type: TYPE_FP32 dims: [ 1 ] }, { name: "A" data_type: TYPE_FP32 dims: [ 1 ] }'),
      "input[1].name 'A' is already the name of input[0]; expected unique input names",
    );
    expectError(
      `${SIMPLE}\noutput [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 1 ] } ]`,
      "output[1].name 'OUTPUT0' is already the name of output[0]; expected unique output names",
    );
    assert.equal(check(`backend: "python"\ninput [ { name: "X" data_type: TYPE_FP32 dims: [ 1 ] } ]\noutput [ { name: "X" data_type: TYPE_FP32 dims: [ 1 ] } ]`), undefined);
  });

  test('each dimension is >= 1 or -1', () => {
    expectError(withInputs('{ name: "A" data_type: TYPE_FP32 dims: [ 3, 0 ] }'), 'input[0].dims[1] is 0; expected an integer >= 1, or -1 for a variable-size dimension');
    expectError(withInputs('{ name: "A" data_type: TYPE_FP32 dims: [ -2 ] }'), 'input[0].dims[0] is -2; expected an integer >= 1, or -1 for a variable-size dimension');
    expectError(
      withInputs('{ name: "A" data_type: TYPE_FP32 dims: [ 4 ] reshape: { shape: [ 2, 0 ] } }'),
      'input[0].reshape.shape[1] is 0; expected an integer >= 1, or -1 for a variable-size dimension',
    );
    assert.equal(check(withInputs('{ name: "A" data_type: TYPE_FP32 dims: [ -1, 3 ] }')), undefined);
  });

  test('reshape keeps the element count', () => {
    expectError(
      withInputs('{ name: "A" data_type: TYPE_FP32 dims: [ 2, 3 ] reshape: { shape: [ 4 ] } }'),
      "input[0] 'A' has dims [2,3] and reshape.shape [4] of different sizes; expected the same number of elements",
    );
    assert.equal(check(withInputs('{ name: "A" data_type: TYPE_FP32 dims: [ 2, 3 ] reshape: { shape: [ 6 ] } }')), undefined);
    assert.equal(check(withInputs('{ name: "A" data_type: TYPE_FP32 dims: [ 2, 4, -1, 6 ] reshape: { shape: [ 8, -1, 1, 6 ] } }')), undefined);
    expectError(
      withInputs('{ name: "A" data_type: TYPE_FP32 dims: [ 2, 4, -1, 6 ] reshape: { shape: [ 4, -1, 2, 6 ] } }'),
      "input[0] 'A' has dims [2,4,-1,6] and reshape.shape [4,-1,2,6] of different sizes; expected the same number of elements",
    );
    expectError(
      withInputs('{ name: "A" data_type: TYPE_FP32 dims: [ -1, 2, -1 ] reshape: { shape: [ -1, 2 ] } }'),
      "input[0] 'A' has 2 variable-size dimensions in dims but 1 in reshape.shape; expected the same number",
    );
    expectError(
      withInputs('{ name: "A" data_type: TYPE_FP32 dims: [ -1 ] reshape: { shape: [ 4 ] } }'),
      "input[0] 'A' has dims [-1] and reshape.shape [4] of different sizes; expected the same number of elements",
    );
  });

  test('an empty reshape makes a scalar, which needs batching', () => {
    assert.equal(check(withInputs('{ name: "A" data_type: TYPE_FP32 dims: [ 1 ] reshape: { shape: [ ] } }')), undefined);
    expectError(
      withInputs('{ name: "A" data_type: TYPE_FP32 dims: [ 1 ] reshape: { shape: [ ] } }', 0),
      "input[0] 'A' has an empty reshape but max_batch_size is 0; expected a non-empty reshape.shape, scalar tensors need a batch dimension",
    );
    expectError(
      withInputs('{ name: "A" data_type: TYPE_FP32 dims: [ 2 ] reshape: { shape: [ ] } }'),
      "input[0] 'A' has dims [2] and reshape.shape [] of different sizes; expected the same number of elements",
    );
  });

  test('image formats need three dims', () => {
    expectError(
      withInputs('{ name: "A" data_type: TYPE_FP32 format: FORMAT_NCHW dims: [ 224, 224 ] }'),
      'input[0].format is FORMAT_NCHW but dims has 2 dimensions; expected 3 dimensions (no batch dimension) for an image format',
    );
  });

  test('shape tensors and non-linear formats are TensorRT only', () => {
    expectError(
      withInputs('{ name: "A" data_type: TYPE_INT32 dims: [ 2 ] is_shape_tensor: true }'),
      "input[0] 'A' has is_shape_tensor: true; expected it only with platform 'tensorrt_plan'",
    );
    expectError(
      `${SIMPLE}\noutput [ { name: "B" data_type: TYPE_FP32 dims: [ 2 ] is_non_linear_format_io: true } ]`,
      "output[1] 'B' has is_non_linear_format_io: true; expected it only with platform 'tensorrt_plan'",
    );
    expectError(
      `platform: "tensorrt_plan" max_batch_size: 1\ninput [ { name: "A" data_type: TYPE_FP32 dims: [ 2 ] is_non_linear_format_io: true } ]`,
      "input[0] 'A' has is_non_linear_format_io: true with 1 dims; expected 3 dims",
    );
  });

  test('batch inputs and outputs refer to real tensors', () => {
    const batchInput = (body: string): string => `${SIMPLE}\nbatch_input [ { ${body} } ]`;
    expectError(batchInput('target_name: "N" data_type: TYPE_INT32'), 'batch_input[0] of kind BATCH_ELEMENT_COUNT has 0 source_input entries; expected exactly 1');
    expectError(batchInput('data_type: TYPE_INT64 source_input: "INPUT0"'), 'batch_input[0].data_type is TYPE_INT64; expected TYPE_INT32 or TYPE_FP32');
    expectError(batchInput('data_type: TYPE_FP32 source_input: "NOPE"'), "batch_input[0].source_input[0] 'NOPE' is not an input; expected one of INPUT0");
    const batchOutput = (body: string): string => `${SIMPLE}\nbatch_output [ { ${body} } ]`;
    expectError(batchOutput('target_name: "OUTPUT0"'), 'batch_output[0] of kind BATCH_SCATTER_WITH_INPUT_SHAPE has 0 source_input entries; expected exactly 1');
    expectError(batchOutput('source_input: "INPUT0" target_name: "X"'), "batch_output[0].target_name[0] 'X' is not an output; expected one of OUTPUT0");
    expectError(
      batchOutput('source_input: "INPUT0" target_name: [ "OUTPUT0", "OUTPUT0" ]'),
      "batch_output[0].target_name[1] 'OUTPUT0' is listed twice; expected each target output once",
    );
    assert.equal(check(batchInput('kind: BATCH_ITEM_SHAPE target_name: "S" data_type: TYPE_FP32 source_input: "INPUT0"')), undefined);
  });
});

describe('validateModelConfig: batching', () => {
  test('preferred batch sizes lie in 1..max_batch_size', () => {
    expectError(`${SIMPLE}\ndynamic_batching { preferred_batch_size: [ 4, 0 ] }`, 'dynamic_batching.preferred_batch_size[1] is 0; expected a size from 1 to max_batch_size (8)');
    expectError(`${SIMPLE}\ndynamic_batching { preferred_batch_size: [ 16 ] }`, 'dynamic_batching.preferred_batch_size[0] is 16; expected a size from 1 to max_batch_size (8)');
    expectError(
      `backend: "python"\n${IO}\ndynamic_batching { preferred_batch_size: [ 2 ] }`,
      'dynamic_batching.preferred_batch_size[0] is 2; expected no preferred sizes, since max_batch_size is 0',
    );
  });

  test('like Triton, batchers are allowed with max_batch_size 0', () => {
    assert.equal(check(`backend: "python"\n${IO}\ndynamic_batching { }`), undefined);
    assert.equal(check(`backend: "python"\n${IO}\nsequence_batching { }`), undefined);
  });

  test('priority levels', () => {
    expectError(
      `${SIMPLE}\ndynamic_batching { priority_levels: 3 }`,
      'dynamic_batching.default_priority_level is 0; expected a level from 1 to priority_levels (3)',
    );
    expectError(
      `${SIMPLE}\ndynamic_batching { priority_levels: 3 default_priority_level: 1 priority_queue_policy { key: 4 value: { } } }`,
      'dynamic_batching.priority_queue_policy has level 4; expected levels from 1 to priority_levels (3)',
    );
    assert.equal(check(`${SIMPLE}\ndynamic_batching { priority_levels: 3 default_priority_level: 3 priority_queue_policy { key: 1 value: { } } }`), undefined);
  });

  test('preserve_ordering excludes priorities and delayed timeouts', () => {
    expectError(
      `${SIMPLE}\ndynamic_batching { preserve_ordering: true priority_levels: 2 default_priority_level: 1 }`,
      'dynamic_batching.preserve_ordering is true with priority_levels 2; expected at most 1 priority level when responses keep request order',
    );
    expectError(
      `${SIMPLE}\ndynamic_batching { preserve_ordering: true default_queue_policy { timeout_action: DELAY default_timeout_microseconds: 10 } }`,
      'dynamic_batching.default_queue_policy.timeout_action is DELAY while preserve_ordering is true; expected REJECT (or no timeout)',
    );
    expectError(
      `${SIMPLE}\ndynamic_batching { preserve_ordering: true priority_levels: 1 default_priority_level: 1 priority_queue_policy { key: 1 value: { timeout_action: DELAY default_timeout_microseconds: 5 } } }`,
      'dynamic_batching.priority_queue_policy[1].timeout_action is DELAY while preserve_ordering is true; expected REJECT (or no timeout)',
    );
  });

  const sequence = (body: string): string => `${SIMPLE}\nsequence_batching { ${body} }`;

  test('sequence batching cannot use the response cache', () => {
    expectError(
      `${sequence('')}\nresponse_cache { enable: true }`,
      'Response Cache does not currently support model simple with sequence batching scheduler. Please disable the response cache.',
    );
  });

  test('control inputs', () => {
    const start = 'control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] } ]';
    assert.equal(check(sequence(`control_input [ { name: "START" ${start} } ]`)), undefined);
    expectError(
      sequence(`control_input [ { ${start} } ]`),
      'sequence_batching.control_input[0].name is empty; expected the name of the model input that carries the control',
    );
    expectError(
      sequence('control_input [ { name: "C" }, { name: "C" } ]'),
      "sequence_batching.control_input[1].name 'C' is already used by another control input; expected one control input per tensor",
    );
    expectError(
      sequence(`control_input [ { name: "A" ${start} }, { name: "B" ${start} } ]`),
      'sequence_batching.control_input[1].control[0] repeats kind CONTROL_SEQUENCE_START; expected each control kind once',
    );
    expectError(
      sequence('control_input [ { name: "A" control [ { kind: CONTROL_SEQUENCE_END } ] } ]'),
      'sequence_batching.control_input[0].control[0] of kind CONTROL_SEQUENCE_END sets none; expected exactly one of int32_false_true, fp32_false_true or bool_false_true',
    );
    expectError(
      sequence('control_input [ { name: "A" control [ { kind: CONTROL_SEQUENCE_READY int32_false_true: [ 0, 1 ] bool_false_true: [ false, true ] } ] } ]'),
      'sequence_batching.control_input[0].control[0] of kind CONTROL_SEQUENCE_READY sets int32_false_true and bool_false_true; expected exactly one of int32_false_true, fp32_false_true or bool_false_true',
    );
    expectError(
      sequence('control_input [ { name: "A" control [ { kind: CONTROL_SEQUENCE_READY fp32_false_true: [ 0 ] } ] } ]'),
      'sequence_batching.control_input[0].control[0].fp32_false_true has 1 entries; expected 2, the false value then the true value',
    );
  });

  test('correlation id controls', () => {
    assert.equal(check(sequence('control_input [ { name: "ID" control [ { kind: CONTROL_SEQUENCE_CORRID data_type: TYPE_STRING } ] } ]')), undefined);
    expectError(
      sequence('control_input [ { name: "ID" control [ { kind: CONTROL_SEQUENCE_CORRID data_type: TYPE_UINT64 int32_false_true: [ 0, 1 ] } ] } ]'),
      'sequence_batching.control_input[0].control[0] of kind CONTROL_SEQUENCE_CORRID sets int32_false_true; expected only data_type for a correlation id control',
    );
    expectError(
      sequence('control_input [ { name: "ID" control [ { kind: CONTROL_SEQUENCE_CORRID data_type: TYPE_FP32 } ] } ]'),
      'sequence_batching.control_input[0].control[0].data_type is TYPE_FP32; expected TYPE_UINT64, TYPE_INT64, TYPE_UINT32, TYPE_INT32 or TYPE_STRING',
    );
  });

  test('strategies', () => {
    expectError(sequence('oldest { }'), 'sequence_batching.oldest.max_candidate_sequences is 0; expected at least 1');
    expectError(sequence('oldest { max_candidate_sequences: 4 preferred_batch_size: [ 9 ] }'), 'sequence_batching.oldest.preferred_batch_size[0] is 9; expected a size from 1 to max_batch_size (8)');
    expectError(sequence('direct { minimum_slot_utilization: 1.5 }'), 'sequence_batching.direct.minimum_slot_utilization is 1.5; expected a fraction from 0.0 to 1.0');
    assert.equal(check(sequence('direct { minimum_slot_utilization: 0.5 }')), undefined);
  });
});

describe('validateModelConfig: ensembles', () => {
  const ensemble = (steps: string, extra = ''): string =>
    `platform: "ensemble"\n${ENSEMBLE_IO}\nensemble_scheduling { step [ ${steps} ] }\n${extra}`;
  const step = (model: string, input: string, output: string): string =>
    `{ model_name: "${model}" model_version: -1 input_map { key: "x" value: "${input}" } output_map { key: "y" value: "${output}" } }`;
  const chain = `${step('a', 'IN', 'MID')}, ${step('b', 'MID', 'OUT')}`;

  test('a two-step chain passes and gets no instance group', () => {
    assert.equal(check(ensemble(chain)), undefined);
    assert.equal(prepare(ensemble(chain)).instanceGroup.length, 0);
  });

  test('platform and scheduling go together', () => {
    expectError(`platform: "ensemble"\n${ENSEMBLE_IO}`, "platform is 'ensemble' but ensemble_scheduling is not set; expected ensemble_scheduling { step [ ... ] }");
    expectError(
      `backend: "python"\n${ENSEMBLE_IO}\nensemble_scheduling { step [ ${chain} ] }`,
      "ensemble_scheduling is set but platform is ''; expected platform 'ensemble'",
    );
    expectError(ensemble(chain, 'backend: "python"'), "backend is 'python' for platform 'ensemble'; expected no backend for an ensemble");
  });

  test('an ensemble has no instances, optimization or warmup of its own', () => {
    expectError(ensemble(chain, 'instance_group [ { count: 1 } ]'), 'instance_group is set for an ensemble; expected none, the composing models have their own instances');
    expectError(ensemble(chain, 'optimization { }'), 'optimization is set for an ensemble; expected none');
    expectError(ensemble(chain, 'model_warmup [ { name: "w" } ]'), 'model_warmup is set for an ensemble; expected none, warm up the composing models instead');
  });

  test('steps are complete', () => {
    expectError(ensemble(''), 'ensemble_scheduling.step is empty; expected at least one step');
    expectError(ensemble('{ input_map { key: "x" value: "IN" } output_map { key: "y" value: "OUT" } }'), 'ensemble_scheduling.step[0].model_name is empty; expected the name of the model this step runs');
    expectError(
      ensemble('{ model_name: "a" output_map { key: "y" value: "OUT" } }'),
      'ensemble_scheduling.step[0].input_map is empty; expected a map from model input names to ensemble tensor names',
    );
  });

  test('data flows from the inputs to the outputs', () => {
    expectError(
      ensemble(`${step('a', 'IN', 'OUT')}, ${step('b', 'IN', 'OUT')}`),
      "ensemble_scheduling.step[1].output_map writes ensemble tensor 'OUT', which another output already writes; expected each ensemble tensor written once",
    );
    expectError(ensemble(step('a', 'OTHER', 'OUT')), "input[0] 'IN' is not read by any ensemble step; expected it in some step's input_map");
    expectError(ensemble(step('a', 'IN', 'MID')), "output[0] 'OUT' is not written by any ensemble step; expected it in some step's output_map");
    expectError(
      ensemble(`${step('a', 'IN', 'MID')}, { model_name: "b" input_map [ { key: "x" value: "MID" }, { key: "z" value: "GHOST" } ] output_map { key: "y" value: "OUT" } }`),
      "output[0] 'OUT' cannot be computed from the ensemble inputs because ensemble tensor 'GHOST' is never produced; expected every step input to come from an ensemble input or another step",
    );
    expectError(
      ensemble(`${step('a', 'IN', 'OUT')}, ${step('b', 'IN', 'SPARE')}`),
      "ensemble tensor 'SPARE' is never read by a later step; expected every ensemble tensor to connect an input to an output",
    );
  });
});

describe('validateModelConfig: instance groups', () => {
  test('KIND_GPU needs GPUs this server has', () => {
    expectError(
      `${SIMPLE}\ninstance_group [ { kind: KIND_GPU } ]`,
      "instance group simple_0 of model simple has kind KIND_GPU but server does not support GPUs (instance_group[0] 'simple_0': Nereid runs models on the CPU; use KIND_CPU, KIND_AUTO or KIND_MODEL)",
    );
    expectError(`${SIMPLE}\ninstance_group [ { kind: KIND_GPU gpus: [ 0, 2 ] } ]`, 'instance_group[0].gpus[1] is 2, which is not available; expected one of 0, 1', {
      gpuIds: [0, 1],
    });
    assert.equal(check(`${SIMPLE}\ninstance_group [ { kind: KIND_GPU } ]`, { gpuIds: [0] }), undefined);
  });

  test('CPU and model groups list no GPUs', () => {
    expectError(
      `${SIMPLE}\ninstance_group [ { kind: KIND_CPU gpus: [ 0 ] } ]`,
      "instance_group[0] 'simple_0' has kind KIND_CPU but lists gpus; expected no gpus, or kind KIND_GPU",
    );
    expectError(
      `${SIMPLE}\ninstance_group [ { name: "g" kind: KIND_MODEL gpus: [ 0 ] } ]`,
      "instance_group[0] 'g' has kind KIND_MODEL but lists gpus; expected no gpus, or kind KIND_GPU",
    );
  });

  test('profiles are TensorRT optimisation profile indexes', () => {
    expectError(
      `${SIMPLE}\ninstance_group [ { profile: [ "0" ] } ]`,
      "instance_group[0] 'simple_0' sets profile with platform 'onnxruntime_onnx'; expected profile only for platform 'tensorrt_plan'",
    );
    expectError(
      `platform: "tensorrt_plan"\n${IO}\ninstance_group [ { kind: KIND_CPU profile: [ "0", "fast" ] } ]`,
      "instance_group[0].profile[1] is 'fast'; expected the index of a TensorRT optimization profile (0, 1, ...)",
    );
  });

  test('groups must be normalized: a count and a resolved kind', () => {
    const config = prepare(SIMPLE);
    config.instanceGroup[0]!.count = 0;
    assert.equal(errorOf(config), `${FILE}: instance_group[0].count is 0; expected at least 1 instance`);
    config.instanceGroup[0]!.count = 1;
    config.instanceGroup[0]!.kind = 0;
    assert.equal(errorOf(config), `${FILE}: instance_group[0] 'simple' still has kind KIND_AUTO; expected normalizeModelConfig to resolve it first`);
    config.instanceGroup.length = 0;
    assert.equal(errorOf(config), `${FILE}: instance_group is empty; expected at least one group (normalizeModelConfig adds one)`);
  });
});
