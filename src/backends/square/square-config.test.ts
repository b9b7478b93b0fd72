import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { loadModelSpec } from '../../config/model-spec.js';
import { parseModelConfig } from '../../config/parse-model-config.js';
import { parametersText, refusalOf } from '../../../test/helpers/config-text.js';
import { type SquareSettings, readSquareSettings } from './square-config.js';

const DECOUPLED = 'model_transaction_policy { decoupled: true }';
const IN = 'input [{ name: "IN" data_type: TYPE_INT32 dims: [ 1 ] }]';
const OUT = 'output [{ name: "OUT" data_type: TYPE_INT32 dims: [ 1 ] }]';

async function read(text: string, logged: string[] = []): Promise<SquareSettings> {
  const config = parseModelConfig(`name: "m"\nbackend: "square"\n${text}`, 'config.pbtxt');
  return readSquareSettings(config, await loadModelSpec(config, 1, '/nonexistent'), (message) => logged.push(message));
}

const refusal = (text: string): Promise<string> => refusalOf(() => read(text));

const parameters = parametersText;

describe('the square configuration', () => {
  test("reads QA's square_int32 (qa/L0_response_statistics), and the slow one's unread cancel delay", async () => {
    const settings = await read(
      `max_batch_size: 0\n${DECOUPLED}\n${IN}\n${OUT}\n${parameters({ CUSTOM_INFER_DELAY_NS: '400000000', CUSTOM_OUTPUT_DELAY_NS: '200000000', CUSTOM_FAIL_COUNT: '2', CUSTOM_EMPTY_COUNT: '1' })}`,
    );
    assert.deepEqual(settings, { inferDelayNs: 400_000_000, outputDelayNs: 200_000_000, failCount: 2, emptyCount: 1 });
    const slow = await read(`${DECOUPLED}\n${IN}\n${OUT}\n${parameters({ CUSTOM_INFER_DELAY_NS: '1200000000', CUSTOM_CANCEL_DELAY_NS: '400000000', CUSTOM_FAIL_COUNT: '0' })}`);
    assert.deepEqual(slow, { inferDelayNs: 1_200_000_000, outputDelayNs: 0, failCount: 0, emptyCount: 0 });
    assert.deepEqual(await read(`max_batch_size: 8\ndynamic_batching { }\n${DECOUPLED}\n${IN}\n${OUT}`), { inferDelayNs: 0, outputDelayNs: 0, failCount: 0, emptyCount: 0 });
  });

  test('leaves a value that is not all digits at 0, with the info line Triton logs', async () => {
    const logged: string[] = [];
    const settings = await read(`${DECOUPLED}\n${IN}\n${OUT}\n${parameters({ CUSTOM_INFER_DELAY_NS: '10ms', CUSTOM_EMPTY_COUNT: '-1', CUSTOM_FAIL_COUNT: '+2' })}`, logged);
    assert.deepEqual(settings, { inferDelayNs: 0, outputDelayNs: 0, failCount: 0, emptyCount: 0 });
    assert.deepEqual(logged, [
      '10ms string_value from CUSTOM_INFER_DELAY_NS parameter is not a number',
      '+2 string_value from CUSTOM_FAIL_COUNT parameter is not a number',
      '-1 string_value from CUSTOM_EMPTY_COUNT parameter is not a number',
    ]);
  });

  test("refuses what Triton's square backend refuses, in its words and order", async () => {
    const cases: Array<[string, string]> = [
      [`${OUT}`, 'expected 1 input, got 0'],
      [`input [{ name: "IN" data_type: TYPE_INT32 dims: [ 1 ] }, { name: "IN2" data_type: TYPE_INT32 dims: [ 1 ] }]\n${OUT}`, 'expected 1 input, got 2'],
      [`${IN}\noutput [{ name: "OUT" data_type: TYPE_INT32 dims: [ 1 ] }, { name: "OUT2" data_type: TYPE_INT32 dims: [ 1 ] }]`, 'expected 1 output, got 2'],
      [`${IN.replace('"IN"', '"INPUT"')}\n${OUT.replace('"OUT"', '"OUTPUT"')}`, 'expected first input tensor name to be IN, got INPUT'],
      [`${IN}\n${OUT.replace('"OUT"', '"OUTPUT"')}`, 'expected first output tensor name to be OUT, got OUTPUT'],
      [`${IN.replace('dims: [ 1 ]', 'dims: [ -1, 2 ]')}\n${OUT.replace('dims: [ 1 ]', 'dims: [ 2 ]')}`, 'expected IN shape to be [1], got [-1,2]'],
      [`${IN}\n${OUT.replace('dims: [ 1 ]', 'dims: [ 2 ]')}`, 'expected OUT shape to be [1], got [2]'],
      [`${IN.replace('TYPE_INT32', 'TYPE_FP32')}\n${OUT.replace('TYPE_INT32', 'TYPE_STRING')}`, 'expected IN datatype to be INT32, got TYPE_FP32'],
      [`${IN}\n${OUT.replace('TYPE_INT32', 'TYPE_INT64')}`, 'expected OUT datatype to be INT32, got TYPE_INT64'],
    ];
    for (const [tensors, message] of cases) assert.equal(await refusal(`${DECOUPLED}\n${tensors}`), `model 'm': ${message}`);
  });

  test('refuses a model that is not decoupled, and what Nereid cannot serve or Triton would stop on', async () => {
    const cases: Array<[string, string]> = [
      [
        `${IN}\n${OUT}`,
        'the square backend sends as many responses to a request as its IN value (none for 0), so the model needs model_transaction_policy { decoupled: true }',
      ],
      [
        `${DECOUPLED}\n${IN}\n${OUT}\n${parameters({ CUSTOM_EMPTY_COUNT: '' })}`,
        "parameters 'CUSTOM_EMPTY_COUNT' is empty: Triton's square backend reads it with std::stoi, which throws and stops the server; give a whole number from 0 to 2147483647",
      ],
      [
        `${DECOUPLED}\n${IN}\n${OUT}\n${parameters({ CUSTOM_OUTPUT_DELAY_NS: '2147483648' })}`,
        "parameters 'CUSTOM_OUTPUT_DELAY_NS' is 2147483648: Triton's square backend reads it with std::stoi, which throws and stops the server; give a whole number from 0 to 2147483647",
      ],
      [
        `${DECOUPLED}\n${IN}\n${OUT}\n${parameters({ CUSTOM_INFER_DELAY: '5' })}`,
        "parameter 'CUSTOM_INFER_DELAY' is not one the square backend knows (did you mean 'CUSTOM_INFER_DELAY_NS'?); it knows CUSTOM_INFER_DELAY_NS, CUSTOM_OUTPUT_DELAY_NS, CUSTOM_FAIL_COUNT, CUSTOM_EMPTY_COUNT, CUSTOM_CANCEL_DELAY_NS",
      ],
    ];
    for (const [text, message] of cases) assert.equal(await refusal(text), `model 'm': ${message}`);
  });
});
