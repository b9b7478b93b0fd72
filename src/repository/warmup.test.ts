import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadModelSpec } from '../config/model-spec.js';
import { normalizeModelConfig } from '../config/normalize.js';
import { parseModelConfig } from '../config/parse-model-config.js';
import { NereidError } from '../kernel/errors.js';
import type { ExecuteResult, ModelInstance } from '../kernel/model-instance.js';
import { warmUp } from './warmup.js';

/** An instance that answers every execution with its inputs and counts the runs. */
class CountingInstance implements ModelInstance {
  readonly name = 'm_0';
  runs = 0;
  async execute(requests: Parameters<ModelInstance['execute']>[0]): Promise<ExecuteResult> {
    this.runs++;
    return { responses: requests.map((request) => request.inputs), timing: { inputNs: 0, inferNs: 0, outputNs: 0 } };
  }
  async close(): Promise<void> {}
}

async function warm(sample: string, maxInputBytes = 2 ** 26, signal?: AbortSignal): Promise<number> {
  const text = `name: "m" backend: "javascript" max_batch_size: 8
    input [ { name: "X" data_type: TYPE_FP32 dims: [ -1 ] }, { name: "S" data_type: TYPE_STRING dims: [ -1 ] optional: true } ]
    output [ { name: "Y" data_type: TYPE_FP32 dims: [ -1 ] } ]
    model_warmup [ ${sample} ]`;
  const config = normalizeModelConfig(parseModelConfig(text, 'config.pbtxt'), { modelName: 'm' });
  const spec = await loadModelSpec(config, 1, '/nowhere');
  const instance = new CountingInstance();
  await warmUp({ config, spec, instances: [instance], modelDir: '/nowhere', maxInputBytes, signal });
  return instance.runs;
}

const sample = (batchSize: number, count: number, dims: number, type = 'TYPE_FP32', input = 'X'): string =>
  `{ name: "s" batch_size: ${batchSize} count: ${count} inputs { key: "${input}" value: { data_type: ${type} dims: [ ${dims} ] zero_data: true } } }`;

test('a warmup within the limits runs count times on each instance', async () => {
  assert.equal(await warm(sample(8, 1000, 4)), 1000);
});

test('a warmup beyond the model limits is refused before any data is made or run', async () => {
  await assert.rejects(warm(sample(9, 1, 4)), new NereidError('INVALID_ARG', "model 'm': warmup sample 's': batch_size 9 is larger than max_batch_size 8"));
  await assert.rejects(
    warm(sample(1, 1001, 4)),
    new NereidError('INVALID_ARG', "model 'm': warmup sample 's': count 1001 is more than the 1000 runs a warmup sample may ask for"),
  );
  // 2 x 8 FP32 elements are 64 bytes; BYTES elements count their 4-byte length prefix.
  assert.equal(await warm(sample(2, 1, 8), 64), 1);
  await assert.rejects(
    warm(sample(2, 1, 8), 63),
    new NereidError('INVALID_ARG', "model 'm': warmup sample 's': its inputs hold 64 bytes, more than the 63 a request may hold (--http-max-input-size)"),
  );
  await assert.rejects(
    warm(`{ name: "s" batch_size: 1 inputs [ { key: "X" value: { data_type: TYPE_FP32 dims: [ 1 ] zero_data: true } }, { key: "S" value: { data_type: TYPE_STRING dims: [ 2 ] zero_data: true } } ] }`, 11),
    new NereidError('INVALID_ARG', "model 'm': warmup sample 's': its inputs hold 12 bytes, more than the 11 a request may hold (--http-max-input-size)"),
  );
});

test('an aborted warmup stops before its next run, with the signal reason', async () => {
  const timeout = new AbortController();
  timeout.abort(new NereidError('UNAVAILABLE', 'too slow'));
  await assert.rejects(warm(sample(1, 5, 4), 2 ** 26, timeout.signal), new NereidError('UNAVAILABLE', 'too slow'));
});
