import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { loadModelSpec } from '../../config/model-spec.js';
import { parseModelConfig } from '../../config/parse-model-config.js';
import { NereidError } from '../../kernel/errors.js';
import { checkRepeatConfig } from './repeat-config.js';

/** Triton QA's repeat_int32, tensor by tensor, so that a case can change one. */
const TENSORS = {
  IN: '{ name: "IN" data_type: TYPE_INT32 dims: [ -1 ] }',
  DELAY: '{ name: "DELAY" data_type: TYPE_UINT32 dims: [ -1 ] }',
  WAIT: '{ name: "WAIT" data_type: TYPE_UINT32 dims: [ 1 ] }',
  OUT: '{ name: "OUT" data_type: TYPE_INT32 dims: [ 1 ] }',
  IDX: '{ name: "IDX" data_type: TYPE_UINT32 dims: [ 1 ] }',
};

function configText(changes: Partial<Record<keyof typeof TENSORS, string>> = {}, extra = 'max_batch_size: 0'): string {
  const tensors = { ...TENSORS, ...changes };
  return `name: "repeat_int32"\nbackend: "repeat"\n${extra}\nmodel_transaction_policy { decoupled: True }
input [ ${[tensors.IN, tensors.DELAY, tensors.WAIT].filter((t) => t !== '').join(', ')} ]
output [ ${[tensors.OUT, tensors.IDX].filter((t) => t !== '').join(', ')} ]`;
}

async function refusal(text: string): Promise<string> {
  const config = parseModelConfig(text, 'config.pbtxt');
  try {
    checkRepeatConfig(config, await loadModelSpec(config, 1, '/nonexistent'));
  } catch (error) {
    assert.ok(error instanceof NereidError);
    assert.equal(error.status, 'INVALID_ARG');
    return error.message;
  }
  return 'loaded';
}

describe('the repeat configuration', () => {
  test("loads Triton QA's repeat_int32, fixed sizes and not decoupled included", async () => {
    assert.equal(await refusal(configText()), 'loaded');
    assert.equal(await refusal(configText({ IN: TENSORS.IN.replace('-1', '4'), DELAY: TENSORS.DELAY.replace('-1', '4') })), 'loaded');
    assert.equal(await refusal(configText().replace('decoupled: True', 'decoupled: False')), 'loaded');
  });

  test("refuses what Triton's repeat backend refuses, in its order and words", async () => {
    const cases: Array<[string, string]> = [
      [configText({}, 'max_batch_size: 8'), 'repeat backend only supports models with max_batch_size == 0'],
      [configText({ WAIT: '' }), 'expected 3 inputs, got 2'],
      [configText({ IDX: `${TENSORS.IDX}, { name: "EXTRA" data_type: TYPE_INT32 dims: [ 1 ] }` }), 'expected 2 outputs, got 3'],
      [configText({ IN: TENSORS.IN.replace('"IN"', '"INPUT"') }), 'expected first input tensor name to be IN, got INPUT'],
      [configText({ IN: TENSORS.DELAY, DELAY: TENSORS.IN }), 'expected first input tensor name to be IN, got DELAY'],
      [configText({ DELAY: TENSORS.DELAY.replace('"DELAY"', '"DELAYS"') }), 'expected second input tensor name to be DELAY, got DELAYS'],
      [configText({ WAIT: TENSORS.WAIT.replace('"WAIT"', '"W"') }), 'expected third input tensor name to be WAIT, got W'],
      [configText({ OUT: TENSORS.OUT.replace('"OUT"', '"OUTPUT"') }), 'expected first output tensor name to be OUT, got OUTPUT'],
      [configText({ IDX: TENSORS.IDX.replace('"IDX"', '"INDEX"') }), 'expected second output tensor name to be IDX, got INDEX'],
      [configText({ IN: TENSORS.IN.replace('[ -1 ]', '[ -1, 2 ]') }), 'expected IN shape to have one dimension, got [-1,2]'],
      [configText({ DELAY: TENSORS.DELAY.replace('[ -1 ]', '[ 3 ]') }), 'expected IN and DELAY shape to match, got [-1] and [3]'],
      [configText({ WAIT: TENSORS.WAIT.replace('[ 1 ]', '[ 2 ]') }), 'expected WAIT shape to be [1], got [2]'],
      [configText({ OUT: TENSORS.OUT.replace('[ 1 ]', '[ -1 ]') }), 'expected OUT shape to be [1], got [-1]'],
      [configText({ IDX: TENSORS.IDX.replace('[ 1 ]', '[ 1, 1 ]') }), 'expected IDX shape to be [1], got [1,1]'],
      [configText({ IN: TENSORS.IN.replace('TYPE_INT32', 'TYPE_INT64') }), 'expected IN datatype to be INT32, got TYPE_INT64'],
      [configText({ DELAY: TENSORS.DELAY.replace('TYPE_UINT32', 'TYPE_INT32') }), 'expected DELAY datatype to be UINT32, got TYPE_INT32'],
      [configText({ WAIT: TENSORS.WAIT.replace('TYPE_UINT32', 'TYPE_FP32') }), 'expected WAIT datatype to be UINT32, got TYPE_FP32'],
      [configText({ OUT: TENSORS.OUT.replace('TYPE_INT32', 'TYPE_STRING') }), 'expected OUT datatype to be INT32, got TYPE_STRING'],
      [configText({ IDX: TENSORS.IDX.replace('TYPE_UINT32', 'TYPE_UINT64') }), 'expected IDX datatype to be UINT32, got TYPE_UINT64'],
      // The names come before the shapes, and the shapes before the data types.
      [configText({ IN: '{ name: "X" data_type: TYPE_FP32 dims: [ 1, 1 ] }' }), 'expected first input tensor name to be IN, got X'],
      [configText({ WAIT: '{ name: "WAIT" data_type: TYPE_FP32 dims: [ 2 ] }' }), 'expected WAIT shape to be [1], got [2]'],
      [configText({}, 'max_batch_size: 0\nparameters [ { key: "execute_delay_ms" value: { string_value: "10" } } ]'), "parameter 'execute_delay_ms' is not one the repeat backend knows; it reads none"],
    ];
    for (const [text, message] of cases) assert.equal(await refusal(text), `model 'repeat_int32': ${message}`, text);
  });
});
