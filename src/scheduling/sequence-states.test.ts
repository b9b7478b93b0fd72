import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { normalizeModelConfig } from '../config/normalize.js';
import { parseModelConfig } from '../config/parse-model-config.js';
import { SequenceStates, loadStateSpecs } from './sequence-states.js';

const configWith = (state: string) =>
  normalizeModelConfig(parseModelConfig(`name: "m"\nbackend: "onnxruntime"\nmax_batch_size: 4\nsequence_batching { state [ ${state} ] }`, 'm/config.pbtxt'), { modelName: 'm' });

test('initial states: zeros with variable dims as 1, zero_data of the given dims, data_file read from <model>/initial_state/', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'nereid-states-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await mkdir(join(dir, 'initial_state'));
  await writeFile(join(dir, 'initial_state', 'start.bin'), Buffer.from(Float32Array.of(1.5, -2).buffer));
  const specs = await loadStateSpecs(
    configWith(`
      { input_name: "A" output_name: "A_OUT" data_type: TYPE_INT32 dims: [ -1, 3 ] },
      { input_name: "B" output_name: "B_OUT" data_type: TYPE_INT64 dims: [ -1 ] initial_state { data_type: TYPE_INT64 dims: [ 2 ] zero_data: true name: "z" } },
      { input_name: "C" output_name: "C_OUT" data_type: TYPE_FP32 dims: [ 2 ] initial_state { data_type: TYPE_FP32 dims: [ 2 ] data_file: "start.bin" name: "f" } }`),
    dir,
  );
  const initial = new SequenceStates(specs, true).initial();
  assert.deepEqual(
    [...initial.values()].map((tensor) => [tensor.name, tensor.dataType, tensor.shape, Array.from(tensor.data as ArrayLike<number | bigint>)]),
    [
      ['A', 'INT32', [1, 1, 3], [0, 0, 0]],
      ['B', 'INT64', [1, 2], [0n, 0n]],
      ['C', 'FP32', [1, 2], [1.5, -2]],
    ],
  );
  await writeFile(join(dir, 'initial_state', 'short.bin'), Buffer.alloc(4));
  await assert.rejects(
    loadStateSpecs(configWith('{ input_name: "C" output_name: "C_OUT" data_type: TYPE_FP32 dims: [ 2 ] initial_state { data_type: TYPE_FP32 dims: [ 2 ] data_file: "short.bin" name: "f" } }'), dir),
    { message: `model 'm' state 'C': initial state file '${join(dir, 'initial_state', 'short.bin')}' has 4 bytes; expected 8 for dims [2] of FP32` },
  );
  await assert.rejects(
    loadStateSpecs(configWith('{ input_name: "C" output_name: "C_OUT" data_type: TYPE_FP32 dims: [ 2 ] initial_state { data_type: TYPE_FP32 dims: [ 2 ] data_file: "../escape.bin" name: "f" } }'), dir),
    /initial_state.data_file/,
  );
});

test('update takes each state output for the next request and leaves it out of the client outputs unless asked for', () => {
  const states = new SequenceStates([{ inputName: 'S', outputName: 'S_OUT', initial: { dataType: 'FP32', shape: [1], data: Float32Array.of(0) } }], false);
  const held = states.initial();
  const outputs = [
    { name: 'Y', dataType: 'FP32' as const, shape: [1], data: Float32Array.of(7) },
    { name: 'S_OUT', dataType: 'FP32' as const, shape: [3], data: Float32Array.of(1, 2, 3) },
  ];
  assert.deepEqual(
    states.update(held, outputs, new Set(['Y'])).map((output) => output.name),
    ['Y'],
  );
  assert.deepEqual(held.get('S'), { name: 'S', dataType: 'FP32', shape: [3], data: Float32Array.of(1, 2, 3) }, 'a state may change shape');
  assert.deepEqual(
    states.update(held, outputs, new Set(['Y', 'S_OUT'])).map((output) => output.name),
    ['Y', 'S_OUT'],
  );
});
