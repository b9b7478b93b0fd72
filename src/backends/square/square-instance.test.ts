import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { NereidError } from '../../kernel/errors.js';
import type { InferRequest, ResponseReport } from '../../kernel/infer-request.js';
import type { ModelSpec } from '../../kernel/model-spec.js';
import type { Tensor } from '../../kernel/tensor.js';
import type { SquareSettings } from './square-config.js';
import { SquareInstance } from './square-instance.js';

const IN = { name: 'IN', dataType: 'INT32', dims: [1], isOptional: false } as const;
const OUT = { name: 'OUT', dataType: 'INT32', dims: [1], isOptional: false } as const;
const SPEC: ModelSpec = {
  name: 'square_int32',
  version: 1,
  platform: '',
  backend: 'square',
  maxBatchSize: 8,
  isDecoupled: true,
  inputs: [IN],
  outputs: [OUT],
  inputByName: new Map([['IN', IN]]),
  outputByName: new Map([['OUT', OUT]]),
};

const makeInstance = (settings: Partial<SquareSettings> = {}): SquareInstance =>
  new SquareInstance({ name: 'square_int32_0', spec: SPEC, settings: { inferDelayNs: 0, outputDelayNs: 0, failCount: 0, emptyCount: 0, ...settings } });

/** A request for IN = value, shaped `shape`, whose responses are pushed to `sent` as [shape, OUT value]. */
function request(value: number, sent: Array<[number[], number]>, options: { shape?: number[]; signal?: AbortSignal } = {}): InferRequest {
  const shape = options.shape ?? [1];
  return {
    modelName: 'square_int32',
    id: '',
    parameters: {},
    inputs: [{ name: 'IN', dataType: 'INT32', shape, data: new Int32Array(shape.reduce((a, b) => a * b, 1)).fill(value) }],
    onResponse: (outputs: readonly Tensor[] | NereidError) => {
      assert.ok(!(outputs instanceof NereidError), 'a response without an error');
      assert.deepEqual(
        outputs.map((output) => [output.name, output.dataType]),
        [['OUT', 'INT32']],
      );
      sent.push([[...outputs[0]!.shape], (outputs[0]!.data as Int32Array)[0]!]);
    },
    ...(options.signal !== undefined ? { signal: options.signal } : {}),
  };
}

describe('a square instance', () => {
  test('sends IN responses of OUT = IN for each request of the batch, then ends each with no response; IN = 0 sends none', async () => {
    const first: Array<[number[], number]> = [];
    const second: Array<[number[], number]> = [];
    const none: Array<[number[], number]> = [];
    const executed = await makeInstance().execute([request(3, first), request(2, second, { shape: [1, 1] }), request(0, none)]);
    assert.deepEqual(executed.responses, [[], [], []]);
    assert.deepEqual(first, [
      [[1], 3],
      [[1], 3],
      [[1], 3],
    ]);
    assert.deepEqual(second, [
      [[1, 1], 2],
      [[1, 1], 2],
    ]);
    assert.deepEqual(none, []);
  });

  test('fails a request of more than one batch row with its own error, in Triton words, and no response', async () => {
    const sent: Array<[number[], number]> = [];
    const executed = await makeInstance().execute([request(2, sent, { shape: [2, 1] })]);
    assert.deepEqual(executed.responses, [new NereidError('INVALID_ARG', 'unexpected shape for IN input')]);
    assert.deepEqual(sent, []);
  });

  test('leaves out the last CUSTOM_EMPTY_COUNT responses, still waiting their infer delay', async () => {
    const sent: Array<[number[], number]> = [];
    const start = performance.now();
    await makeInstance({ emptyCount: 2, inferDelayNs: 20_000_000, outputDelayNs: 10_000_000 }).execute([request(3, sent)]);
    const elapsedMs = performance.now() - start;
    assert.deepEqual(sent, [[[1], 3]]);
    // 3 infer delays and 1 output delay: 70 ms.
    assert.ok(elapsedMs >= 68 && elapsedMs < 1000, `${elapsedMs} ms`);
  });

  test('sends CUSTOM_FAIL_COUNT responses before the empty ones as the error "simulated failure", the request going on; reports every response with its times', async () => {
    const sent: Array<string | number> = [];
    const reports: ResponseReport[] = [];
    const executed = await makeInstance({ failCount: 2, emptyCount: 1, inferDelayNs: 2_000_000, outputDelayNs: 1_000_000 }).execute([
      {
        modelName: 'square_int32',
        id: '',
        parameters: {},
        inputs: [{ name: 'IN', dataType: 'INT32', shape: [1], data: new Int32Array([4]) }],
        onResponse: (response) => sent.push(response instanceof NereidError ? `${response.status}: ${response.message}` : (response[0]!.data as Int32Array)[0]!),
        reportResponse: (report) => reports.push(report),
      },
    ]);
    assert.deepEqual(executed.responses, [[]]);
    assert.deepEqual(sent, [4, 'UNKNOWN: simulated failure', 'UNKNOWN: simulated failure']);
    assert.deepEqual(
      reports.map((report) => [report.isError, report.outputStartNs !== undefined]),
      [
        [false, true],
        [true, true],
        [true, true],
        [false, false],
      ],
    );
    for (const { startNs, outputStartNs, endNs } of reports) assert.ok(startNs <= (outputStartNs ?? startNs) && (outputStartNs ?? startNs) <= endNs);
  });

  test('streams a negative IN (2^64 + IN as size_t) with OUT = IN until the request is cancelled, never blocking the event loop', async () => {
    const sent: Array<[number[], number]> = [];
    const cancel = new AbortController();
    let turns = 0;
    const ticker = setInterval(() => turns++, 1);
    const executing = makeInstance().execute([request(-1, sent, { signal: cancel.signal })]);
    await new Promise((resolve) => setTimeout(resolve, 30));
    cancel.abort();
    const executed = await executing;
    clearInterval(ticker);
    assert.deepEqual(executed.responses, [[]]);
    assert.ok(sent.length > 10, `${sent.length} responses`);
    assert.ok(sent.every(([shape, value]) => shape.length === 1 && shape[0] === 1 && value === -1));
    assert.ok(turns > 5, `${turns} timer turns`);
    const count = sent.length;
    await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(sent.length, count);
  });

  test('closed while streaming, fails the execution with UNAVAILABLE and sends no more', async () => {
    const sent: Array<[number[], number]> = [];
    const instance = makeInstance({ inferDelayNs: 10_000_000_000 });
    const executing = instance.execute([request(2, sent)]);
    await instance.close();
    await assert.rejects(executing, new NereidError('UNAVAILABLE', "instance 'square_int32_0' of model 'square_int32' was stopped before the request finished"));
    assert.deepEqual(sent, []);
  });
});
