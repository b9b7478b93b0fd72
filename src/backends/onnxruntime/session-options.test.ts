import assert from 'node:assert/strict';
import { test } from 'node:test';
import { create } from '@bufbuild/protobuf';
import { type ModelConfig, ModelConfigSchema } from '../../protocol/gen/model_config_pb.js';
import { sessionOptionsFromConfig } from './session-options.js';

const parameters = (entries: Record<string, string>) =>
  Object.fromEntries(Object.entries(entries).map(([key, stringValue]) => [key, { stringValue, $typeName: 'inference.ModelParameter' as const }]));

test('by default each instance gets an equal share of the cores', () => {
  const config = create(ModelConfigSchema, { name: 'm' });
  assert.deepEqual(sessionOptionsFromConfig(config, { instanceCount: 2, cpuCount: 8 }), {
    executionProviders: ['cpu'],
    intraOpNumThreads: 4,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
    logSeverityLevel: 3,
    extra: { 'session.intra_op.allow_spinning': '0', 'session.inter_op.allow_spinning': '0' },
  });
  assert.equal(sessionOptionsFromConfig(config, { instanceCount: 4, cpuCount: 2 }).intraOpNumThreads, 1);
});

test("Triton's onnxruntime parameters and graph level are read", () => {
  const config = create(ModelConfigSchema, {
    name: 'm',
    parameters: parameters({ intra_op_thread_count: '3', inter_op_thread_count: '2', execution_mode: '1', enable_mem_arena: '0', enable_mem_pattern: 'true' }),
    optimization: { graph: { level: -1 } },
  });
  assert.deepEqual(sessionOptionsFromConfig(config, { instanceCount: 1, cpuCount: 2 }), {
    executionProviders: ['cpu'],
    intraOpNumThreads: 3,
    interOpNumThreads: 2,
    executionMode: 'parallel',
    graphOptimizationLevel: 'basic',
    logSeverityLevel: 3,
    extra: { 'session.intra_op.allow_spinning': '0', 'session.inter_op.allow_spinning': '0' },
    enableCpuMemArena: false,
    enableMemPattern: true,
  });
});

test('pool threads do not spin unless parameters allow_spinning asks for it', () => {
  const spinning = (config: ModelConfig) => sessionOptionsFromConfig(config, { instanceCount: 1, cpuCount: 2 }).extra;
  assert.deepEqual(spinning(create(ModelConfigSchema, { name: 'm' })), { 'session.intra_op.allow_spinning': '0', 'session.inter_op.allow_spinning': '0' });
  const always = create(ModelConfigSchema, { name: 'm', parameters: parameters({ allow_spinning: 'true' }) });
  assert.deepEqual(spinning(always), { 'session.intra_op.allow_spinning': '1', 'session.inter_op.allow_spinning': '1' });
  const never = create(ModelConfigSchema, { name: 'm', parameters: parameters({ allow_spinning: '0' }) });
  assert.deepEqual(spinning(never), { 'session.intra_op.allow_spinning': '0', 'session.inter_op.allow_spinning': '0' });
  const bad = create(ModelConfigSchema, { name: 'm', parameters: parameters({ allow_spinning: 'yes' }) });
  assert.throws(() => spinning(bad), { message: `model 'm': parameters 'allow_spinning' must be 0, 1, true or false, got "yes"` });
});

test('bad values name the parameter and what it takes', () => {
  const config = create(ModelConfigSchema, { name: 'm', parameters: parameters({ execution_mode: 'fast' }) });
  assert.throws(() => sessionOptionsFromConfig(config, { instanceCount: 1, cpuCount: 2 }), {
    message: `model 'm': parameters 'execution_mode' must be an integer from 0 to 1, got "fast"`,
  });
  const level = create(ModelConfigSchema, { name: 'm', optimization: { graph: { level: 5 } } });
  assert.throws(() => sessionOptionsFromConfig(level, { instanceCount: 1, cpuCount: 2 }), {
    message: 'model \'m\': optimization.graph.level must be -1 (basic), 0 (all), 1 (extended) or 2 (disabled), got 5',
  });
});
