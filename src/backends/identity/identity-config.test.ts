import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { loadModelSpec } from '../../config/model-spec.js';
import { parseModelConfig } from '../../config/parse-model-config.js';
import { parametersText, refusalOf } from '../../../test/helpers/config-text.js';
import { type IdentitySettings, instanceDelayMs, readIdentitySettings } from './identity-config.js';

const FP32_PAIR = 'input [{ name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] }]\noutput [{ name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] }]';

async function read(text: string): Promise<IdentitySettings> {
  const config = parseModelConfig(`name: "m"\nbackend: "identity"\n${text}`, 'config.pbtxt');
  return readIdentitySettings(config, await loadModelSpec(config, 1, '/nonexistent'));
}

const refusal = (text: string): Promise<string> => refusalOf(() => read(text));

const parameters = parametersText;

describe('the identity configuration', () => {
  test('pairs each OUTPUT<i> with INPUT<i> by the index, whatever the order', async () => {
    const settings = await read(
      'input [{ name: "INPUT1" data_type: TYPE_STRING dims: [ 1 ] }, { name: "INPUT0" data_type: TYPE_FP32 dims: [ 2, 2 ] reshape: { shape: [ 4 ] } }]\n' +
        'output [{ name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] }, { name: "OUTPUT1" data_type: TYPE_STRING dims: [ 1 ] }]',
    );
    assert.deepEqual([...settings.inputOf], [['OUTPUT0', 'INPUT0'], ['OUTPUT1', 'INPUT1']]);
    assert.deepEqual({ ...settings, inputOf: undefined }, { inputOf: undefined, executeDelayMs: 0, delayMultiplier: 0, creationDelaySec: 0 });
  });

  test("refuses what Triton's identity backend refuses, in its words", async () => {
    const cases: Array<[string, string]> = [
      ['input [{ name: "INPUT0" data_type: TYPE_FP32 dims: [ 1 ] }]', 'model configuration must have equal input/output pairs'],
      ['input [{ name: "IN0" data_type: TYPE_FP32 dims: [ 1 ] }]\noutput [{ name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 1 ] }]', "expected input name to follow INPUT<index> pattern, got 'IN0'"],
      ['input [{ name: "INPUT0" data_type: TYPE_FP32 dims: [ 1 ] }]\noutput [{ name: "OUT0" data_type: TYPE_FP32 dims: [ 1 ] }]', "expected output name to follow OUTPUT<index> pattern, got 'OUT0'"],
      ['input [{ name: "INPUT0" data_type: TYPE_FP32 dims: [ 1 ] }]\noutput [{ name: "OUTPUT1" data_type: TYPE_FP32 dims: [ 1 ] }]', 'expected input and output indices to match'],
      ['input [{ name: "INPUT0" data_type: TYPE_FP32 dims: [ 1 ] }]\noutput [{ name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 1 ] }]', 'expected input and output datatype to match, got TYPE_FP32 and TYPE_INT32'],
      ['input [{ name: "INPUT0" data_type: TYPE_FP32 dims: [ -1, 4 ] }]\noutput [{ name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] }]', 'expected input and output shape to match, got [-1,4] and [4]'],
      [
        'input [{ name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] reshape: { shape: [ 2, 2 ] } }]\noutput [{ name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] }]',
        'expected input and output shape to match, got [2,2] and [4]',
      ],
    ];
    for (const [tensors, message] of cases) assert.equal(await refusal(tensors), `model 'm': ${message}`);
  });

  test('checks the outputs in the order of their index text, as a std::map walks them', async () => {
    const message = await refusal(
      'input [{ name: "INPUT2" data_type: TYPE_INT8 dims: [ 1 ] }, { name: "INPUT1" data_type: TYPE_FP32 dims: [ 1 ] }]\n' +
        'output [{ name: "OUTPUT2" data_type: TYPE_INT16 dims: [ 1 ] }, { name: "OUTPUT1" data_type: TYPE_FP64 dims: [ 1 ] }]',
    );
    assert.equal(message, "model 'm': expected input and output datatype to match, got TYPE_FP32 and TYPE_FP64");
  });

  test('refuses an index that std::stoi cannot read, which stops Triton at the first request', async () => {
    assert.equal(
      await refusal('input [{ name: "INPUT_A" data_type: TYPE_FP32 dims: [ 1 ] }]\noutput [{ name: "OUTPUT_A" data_type: TYPE_FP32 dims: [ 1 ] }]'),
      "model 'm': 'INPUT_A' has no number after INPUT: Triton's identity backend reads the index with std::stoi at every request and stops the server on it; name it INPUT<number>",
    );
  });

  test('reads the delays', async () => {
    const settings = await read(`${FP32_PAIR}\n${parameters({ execute_delay_ms: '100', instance_wise_delay_multiplier: '4', creation_delay_sec: '2' })}`);
    assert.deepEqual({ ...settings, inputOf: undefined }, { inputOf: undefined, executeDelayMs: 100, delayMultiplier: 4, creationDelaySec: 2 });
    assert.deepEqual([0, 1, 2].map((index) => instanceDelayMs(settings, index)), [100, 400, 800]);
    const plain = await read(`${FP32_PAIR}\n${parameters({ execute_delay_ms: '30' })}`);
    assert.deepEqual([0, 1, 2].map((index) => instanceDelayMs(plain, index)), [30, 30, 30]);
    const none = await read(`${FP32_PAIR}\n${parameters({ execute_delay_ms: '0', instance_wise_delay_multiplier: '4' })}`);
    assert.deepEqual([0, 1].map((index) => instanceDelayMs(none, index)), [0, 0]);
  });

  test('accepts custom tracing off and refuses it on, and every parameter it does not read', async () => {
    await read(`${FP32_PAIR}\n${parameters({ enable_custom_tracing: 'false', nested_span_count: '6', single_activity_frequency: '3' })}`);
    const cases: Array<[Record<string, string>, string]> = [
      [{ execute_delay_ms: '2s' }, `parameters 'execute_delay_ms' must be an integer from 0 to 2147483647, got "2s"`],
      [{ execute_delay_ms: '-1' }, `parameters 'execute_delay_ms' must be an integer from 0 to 2147483647, got "-1"`],
      [{ creation_delay_sec: '2147483648' }, `parameters 'creation_delay_sec' must be an integer from 0 to 2147483647, got "2147483648"`],
      [{ instance_wise_delay_multiplier: '2' }, "parameters 'instance_wise_delay_multiplier' is read only with 'execute_delay_ms', whose delay it multiplies by the instance's index; set execute_delay_ms or remove it"],
      [{ enable_custom_tracing: 'true' }, `parameters 'enable_custom_tracing' is "true", but Nereid's traces hold no custom activities (CUSTOM_ACTIVITY_START ...); remove it to load the model`],
      [{ enable_custom_tracing: 'yes' }, `parameters 'enable_custom_tracing' must be true or false, got "yes"`],
      [
        { execute_delay: '5' },
        "parameter 'execute_delay' is not one the identity backend knows (did you mean 'execute_delay_ms'?); it knows execute_delay_ms, instance_wise_delay_multiplier, creation_delay_sec, enable_custom_tracing, nested_span_count, single_activity_frequency",
      ],
    ];
    for (const [entries, message] of cases) assert.equal(await refusal(`${FP32_PAIR}\n${parameters(entries)}`), `model 'm': ${message}`);
  });
});
