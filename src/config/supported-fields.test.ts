import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { DescMessage } from '@bufbuild/protobuf';
import { NereidError } from '../kernel/errors.js';
import { ModelConfigSchema } from '../protocol/gen/model_config_pb.js';
import { normalizeModelConfig } from './normalize.js';
import { parseModelConfig } from './parse-model-config.js';
import { SUPPORTED_FIELDS, refuseUnsupportedFields } from './supported-fields.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The messages whose fields Nereid reads: ModelConfig and every message below a supported field. */
function readMessages(): Map<string, DescMessage> {
  const found = new Map<string, DescMessage>();
  const visit = (message: DescMessage): void => {
    if (found.has(message.typeName)) return;
    found.set(message.typeName, message);
    for (const field of message.fields) {
      const nested = field.fieldKind === 'message' ? field.message : field.fieldKind === 'list' && field.listKind === 'message' ? field.message : field.fieldKind === 'map' && field.mapKind === 'message' ? field.message : undefined;
      if (nested !== undefined && SUPPORTED_FIELDS[message.typeName]?.[field.name]?.decision === 'supported') visit(nested);
    }
  };
  visit(ModelConfigSchema);
  return found;
}

test('every field Nereid reads has a decision in the table, and every row names a field of model_config.proto', () => {
  const messages = readMessages();
  const undecided = [...messages.values()].flatMap((message) =>
    message.fields.filter((field) => SUPPORTED_FIELDS[message.typeName]?.[field.name] === undefined).map((field) => `${message.typeName}.${field.name}`),
  );
  assert.deepEqual(undecided, []);
  const stale = Object.entries(SUPPORTED_FIELDS).flatMap(([typeName, rows]) => {
    const message = messages.get(typeName);
    if (message === undefined) return [typeName];
    return Object.keys(rows).filter((name) => !message.fields.some((field) => field.name === name)).map((name) => `${typeName}.${name}`);
  });
  assert.deepEqual(stale, []);
});

/** Parses and normalises `text` as model 'm', then returns the refusal's message, or undefined when it loads. */
function refusalOf(text: string): string | undefined {
  const config = normalizeModelConfig(parseModelConfig(`name: "m"\nbackend: "onnxruntime"\n${text}`, 'm/config.pbtxt'), { modelName: 'm' });
  try {
    refuseUnsupportedFields(config);
    return undefined;
  } catch (error) {
    assert.ok(error instanceof NereidError);
    assert.equal(error.status, 'INVALID_ARG');
    assert.equal(error.reason, 'UNSUPPORTED_CONFIG_FIELD');
    return `${error.details.field} | ${error.message}`;
  }
}

test('sequence_batching loads with both strategies, controls, states and iterative_sequence', () => {
  assert.equal(refusalOf('sequence_batching {}'), undefined);
  assert.equal(
    refusalOf(
      'sequence_batching { oldest { max_candidate_sequences: 4 } control_input [ { name: "START" control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] } ] } ] state [ { input_name: "S" output_name: "S_OUT" data_type: TYPE_FP32 dims: [ 1 ] initial_state [ { data_type: TYPE_FP32 dims: [ 1 ] zero_data: true name: "zero" } ] } ] }',
    ),
    undefined,
  );
  assert.equal(refusalOf('sequence_batching { iterative_sequence: true }'), undefined);
});

test('response_cache and rate_limiter load, with every field inside them', () => {
  assert.equal(refusalOf('response_cache { enable: true }'), undefined);
  assert.equal(refusalOf('response_cache { enable: false }'), undefined);
  assert.equal(refusalOf('instance_group [{ count: 1 rate_limiter { resources [{ name: "R" global: true count: 2 }] priority: 3 } }]'), undefined);
});

test('a nested field is named by its path, with the index of its item', () => {
  assert.equal(
    refusalOf('instance_group [{ count: 1 }, { count: 1 host_policy: "numa0" }]'),
    "instance_group[1].host_policy | model 'm': config field 'instance_group[1].host_policy' is not supported yet (Nereid has no host policies); remove it to load the model",
  );
  assert.equal(
    refusalOf('input [{ name: "A" data_type: TYPE_FP32 dims: [1] }, { name: "B" data_type: TYPE_FP32 dims: [1] allow_ragged_batch: true }]'),
    "input[1].allow_ragged_batch | model 'm': config field 'input[1].allow_ragged_batch' is not supported yet (Nereid has no ragged batching); remove it so that requests of equal shapes batch together",
  );
  assert.equal(
    refusalOf('optimization { cuda { graphs: true } }'),
    "optimization.cuda | model 'm': config field 'optimization.cuda' is not supported yet (Nereid runs every instance on the CPU); remove it to load the model",
  );
  assert.equal(
    refusalOf('platform: "ensemble"\nensemble_scheduling { step [{ model_name: "a" model_namespace: "n" }] }'),
    "ensemble_scheduling.step[0].model_namespace | model 'm': config field 'ensemble_scheduling.step[0].model_namespace' is not supported yet (Triton reserves it for the server's use; with --model-namespacing each step's model is found in the ensemble's namespace, or else in the only namespace that has its name); remove it to load the model",
  );
});

test('ensemble_scheduling.max_inflight_requests is taken (the ensemble scheduler applies it to each step)', () => {
  assert.equal(refusalOf('platform: "ensemble"\nensemble_scheduling { max_inflight_requests: 4 }'), undefined);
});

test('the other refusals the issue lists name their field', () => {
  const cases: Array<[string, string]> = [
    ['model_repository_agents { agents [{ name: "checksum" }] }', 'model_repository_agents'],
    ['batch_input [{ target_name: "X" source_input: "A" }]', 'batch_input'],
    ['batch_output [{ target_name: "Y" source_input: "A" }]', 'batch_output'],
    ['model_operations { op_library_filename: "libops.so" }', 'model_operations'],
    ['instance_group [{ host_policy: "numa0" }]', 'instance_group[0].host_policy'],
    ['instance_group [{ secondary_devices [{ device_id: 1 }] }]', 'instance_group[0].secondary_devices'],
    ['instance_group [{ passive: true }]', 'instance_group[0].passive'],
    ['instance_group [{ kind: KIND_CPU gpus: [0] }]', 'instance_group[0].gpus'],
    ['optimization { priority: PRIORITY_MAX }', 'optimization.priority'],
    ['optimization { execution_accelerators { cpu_execution_accelerator [{ name: "openvino" }] } }', 'optimization.execution_accelerators'],
    ['optimization { eager_batching: true }', 'optimization.eager_batching'],
    ['runtime: "model.py"', 'runtime'],
  ];
  assert.deepEqual(
    cases.map(([text]) => refusalOf(text)?.split(' | ')[0]),
    cases.map(([, field]) => field),
  );
});

test('what Nereid applies, or ignores by design, loads', () => {
  assert.equal(
    refusalOf(
      [
        'max_batch_size: 8',
        'version_policy { specific { versions: [1, 2] } }',
        'input [{ name: "A" data_type: TYPE_FP32 format: FORMAT_NCHW dims: [3, 4, 4] reshape { shape: [48] } optional: true }]',
        'output [{ name: "Y" data_type: TYPE_FP32 dims: [1] label_filename: "labels.txt" }]',
        'dynamic_batching { preferred_batch_size: [4] max_queue_delay_microseconds: 100 default_queue_policy { max_queue_size: 3 } }',
        'instance_group [{ name: "g" kind: KIND_CPU count: 2 }]',
        'optimization { graph { level: 1 } input_pinned_memory { enable: false } }',
        'model_metrics { metric_control [{ metric_identifier { family: "nv_inference_first_response_histogram_ms" } histogram_options { buckets: [1, 2.5] } }] }',
        'parameters { key: "intra_op_thread_count" value { string_value: "1" } }',
        'model_warmup [{ name: "w" batch_size: 1 inputs { key: "A" value { data_type: TYPE_FP32 dims: [48] zero_data: true } } }]',
        'model_transaction_policy { decoupled: false }',
        'cc_model_filenames { key: "7.5" value: "model_t4.onnx" }',
        'metric_tags { key: "team" value: "vision" }',
      ].join('\n'),
    ),
    undefined,
  );
});

test('no model the repository ships or tests with sets a refused field', () => {
  const folders = ['examples/model_repository', 'test/fixtures/model_repository', 'test/fixtures/python_repository', 'test/fixtures/js_repository', 'test/fixtures/ensemble_repository', 'test/fixtures/fil_repository'];
  const refusedModels: string[] = [];
  let checked = 0;
  for (const folder of folders) {
    for (const model of readdirSync(join(ROOT, folder))) {
      const file = join(ROOT, folder, model, 'config.pbtxt');
      let text: string;
      try {
        text = readFileSync(file, 'utf8');
      } catch {
        continue; // a model without config.pbtxt gets one from auto-complete
      }
      let config;
      try {
        config = normalizeModelConfig(parseModelConfig(text, file), { modelName: model });
      } catch {
        continue; // a fixture that is broken on purpose (bad_config)
      }
      checked++;
      try {
        refuseUnsupportedFields(config);
      } catch (error) {
        refusedModels.push(`${relative(ROOT, file)}: ${(error as Error).message}`);
      }
    }
  }
  assert.deepEqual(refusedModels, []);
  // A floor, not a count: the scan must find the repository's configs, and every new fixture raised an exact count.
  assert.ok(checked >= 100, `only ${checked} model configurations were found under ${folders.join(", ")}`);
});
