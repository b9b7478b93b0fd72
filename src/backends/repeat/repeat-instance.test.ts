import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, mock, test } from 'node:test';
import { loadModelSpec } from '../../config/model-spec.js';
import { parseModelConfig } from '../../config/parse-model-config.js';
import { NereidError } from '../../kernel/errors.js';
import type { InferRequest } from '../../kernel/infer-request.js';
import type { ExecuteResult } from '../../kernel/model-instance.js';
import type { Tensor } from '../../kernel/tensor.js';
import { RepeatInstance } from './repeat-instance.js';

/** Triton QA's repeat_int32. */
const CONFIG = `name: "repeat_int32"
backend: "repeat"
max_batch_size: 0
model_transaction_policy { decoupled: True }
input [
  { name: "IN" data_type: TYPE_INT32 dims: [ -1 ] },
  { name: "DELAY" data_type: TYPE_UINT32 dims: [ -1 ] },
  { name: "WAIT" data_type: TYPE_UINT32 dims: [ 1 ] }
]
output [ { name: "OUT" data_type: TYPE_INT32 dims: [ 1 ] }, { name: "IDX" data_type: TYPE_UINT32 dims: [ 1 ] } ]`;

async function makeInstance(isDecoupled = true): Promise<RepeatInstance> {
  const config = parseModelConfig(isDecoupled ? CONFIG : CONFIG.replace('True', 'False'), 'config.pbtxt');
  return new RepeatInstance({ name: 'repeat_int32_0', spec: await loadModelSpec(config, 1, '/nonexistent') });
}

/** A request and the log of what reaches it: each response as `[OUT, IDX]@ms`. */
function request(values: number[], delaysMs: number[], waitMs: number, log: string[] = []): InferRequest {
  return {
    modelName: 'repeat_int32',
    id: '',
    parameters: {},
    inputs: [
      { name: 'IN', dataType: 'INT32', shape: [values.length], data: Int32Array.from(values) },
      { name: 'DELAY', dataType: 'UINT32', shape: [delaysMs.length], data: Uint32Array.from(delaysMs) },
      { name: 'WAIT', dataType: 'UINT32', shape: [1], data: Uint32Array.of(waitMs) },
    ],
    // Only OUT asked for: Triton's backend sends IDX too.
    outputs: [{ name: 'OUT' }],
    onResponse: (outputs) => log.push(`${describeOutputs(outputs)}@${Date.now()}`),
  };
}

function describeOutputs(outputs: readonly Tensor[] | NereidError): string {
  if (outputs instanceof NereidError) return outputs.message;
  return outputs.map(({ name, dataType, shape, data }) => `${name}:${dataType}${JSON.stringify(shape)}=${(data as Int32Array)[0]}`).join(' ');
}

const flush = async (): Promise<void> => {
  for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
};

/** Advances the fake clock by `ms`, one millisecond at a time, letting the promises run in between. */
async function advance(ms: number): Promise<void> {
  for (let step = 0; step < ms; step++) {
    await flush();
    mock.timers.tick(1);
  }
  await flush();
}

/** `execute`'s settlement as it comes: its time, and its result or error. */
function track(execution: Promise<ExecuteResult>): { settled?: { atMs: number; result?: ExecuteResult; error?: unknown } } {
  const tracked: { settled?: { atMs: number; result?: ExecuteResult; error?: unknown } } = {};
  execution.then(
    (result) => (tracked.settled = { atMs: Date.now(), result }),
    (error: unknown) => (tracked.settled = { atMs: Date.now(), error }),
  );
  return tracked;
}

describe('a repeat instance', () => {
  beforeEach(() => mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 0 }));
  afterEach(() => mock.timers.reset());

  test('sends OUT and IDX per element of IN after each DELAY, releases the request after WAIT, and completes after the last', async () => {
    const instance = await makeInstance();
    const log: string[] = [];
    const execution = track(instance.execute([request([4, 2, 0, 1], [1, 2, 3, 4], 5, log)]));
    await advance(5);
    assert.deepEqual(log, ['OUT:INT32[1]=4 IDX:UINT32[1]=0@1', 'OUT:INT32[1]=2 IDX:UINT32[1]=1@3']);
    assert.equal(execution.settled?.atMs, 5, 'released after WAIT');
    const { responses, unfinished } = execution.settled!.result!;
    assert.deepEqual(responses, [[]]);
    let completedAtMs: number | undefined;
    void unfinished!.get(0)!.then((final) => {
      assert.deepEqual(final, []);
      completedAtMs = Date.now();
    });
    await advance(5);
    assert.deepEqual(log.slice(2), ['OUT:INT32[1]=0 IDX:UINT32[1]=2@6', 'OUT:INT32[1]=1 IDX:UINT32[1]=3@10']);
    assert.equal(completedAtMs, 10, 'complete with the last response');
  });

  test('runs the next request while the one released still responds: their responses interleave', async () => {
    const instance = await makeInstance();
    const log: string[] = [];
    const first = track(instance.execute([request([10, 11], [4, 4], 1, log)]));
    await advance(1);
    assert.ok(first.settled?.result?.unfinished?.has(0));
    const second = track(instance.execute([request([20, 21], [2, 4], 1, log)]));
    await advance(7);
    assert.ok(second.settled?.result?.unfinished?.has(0));
    assert.deepEqual(
      log.map((entry) => entry.replace(/ IDX.*@/, '@')),
      ['OUT:INT32[1]=20@3', 'OUT:INT32[1]=10@4', 'OUT:INT32[1]=21@7', 'OUT:INT32[1]=11@8'],
    );
  });

  test('a request that completes before WAIT returns at once, but the instance stays held until WAIT has passed', async () => {
    const instance = await makeInstance();
    const log: string[] = [];
    const empty = track(instance.execute([request([], [], 10, log)]));
    await flush();
    assert.deepEqual(empty.settled, { atMs: 0, result: { responses: [[]], timing: empty.settled!.result!.timing } }, 'IN empty: no response, complete at once');
    const next = track(instance.execute([request([7], [1], 0, log)]));
    await advance(9);
    assert.deepEqual([log, next.settled], [[], undefined], 'the next request waits for the first WAIT');
    await advance(1);
    assert.equal(next.settled?.atMs, 10, 'started at 10 and released at once (WAIT 0)');
    assert.ok(next.settled.result?.unfinished?.has(0));
    await advance(1);
    assert.deepEqual(log, ['OUT:INT32[1]=7 IDX:UINT32[1]=0@11']);
  });

  test("answers IN and DELAY of different shapes with Triton's error, and still holds the instance for WAIT", async () => {
    const instance = await makeInstance();
    const bad = track(instance.execute([request([1], [1000, 1000], 3)]));
    await flush();
    assert.equal(bad.settled?.atMs, 0);
    assert.deepEqual(bad.settled?.result?.responses.map(describeOutputs), ['expected IN and DELAY shape to match, got [1] and [2]']);
    const next = track(instance.execute([request([], [], 0)]));
    await advance(2);
    assert.deepEqual([next.settled], [undefined]);
    await advance(1);
    assert.equal(next.settled?.atMs, 3);
  });

  test('a model that is not decoupled answers a request of one element with that response, and refuses others', async () => {
    const instance = await makeInstance(false);
    const one = track(instance.execute([request([5], [4], 2)]));
    await advance(2);
    const { responses, unfinished } = one.settled!.result!;
    assert.deepEqual(responses, [[]]);
    let final: string | undefined;
    void unfinished!.get(0)!.then((outputs) => (final = `${describeOutputs(outputs)}@${Date.now()}`));
    await advance(2);
    assert.equal(final, 'OUT:INT32[1]=5 IDX:UINT32[1]=0@4');
    const two = track(instance.execute([request([5, 6], [0, 0], 0)]));
    await flush();
    assert.deepEqual(two.settled?.result?.responses.map(describeOutputs), [
      "model 'repeat_int32' is not decoupled, so it sends one response per request, but IN has 2 elements; send one element, or set model_transaction_policy { decoupled: true } to get one response per element",
    ]);
  });

  test('does not wait a DELAY of 2^31 or more, which Triton reads as a negative int32', async () => {
    const instance = await makeInstance();
    const log: string[] = [];
    const execution = track(instance.execute([request([1, 2], [2 ** 31, 0xffff_ffff], 0, log)]));
    await flush();
    assert.deepEqual(log, ['OUT:INT32[1]=1 IDX:UINT32[1]=0@0', 'OUT:INT32[1]=2 IDX:UINT32[1]=1@0']);
    assert.equal(execution.settled?.atMs, 0);
  });

  test("refuses a batch of two requests with Triton's message", async () => {
    const instance = await makeInstance();
    await assert.rejects(instance.execute([request([1], [0], 0), request([2], [0], 0)]), { status: 'INVALID_ARG', message: 'repeat backend does not support batched request execution' });
  });

  test('closing stops every timer: the execution and each request still responding fail UNAVAILABLE', async () => {
    const instance = await makeInstance();
    const log: string[] = [];
    const released = track(instance.execute([request([1, 2], [1, 100], 2, log)]));
    await advance(2);
    const outcome = released.settled!.result!.unfinished!.get(0)!;
    const running = track(instance.execute([request([3], [100], 100, log)]));
    await advance(1);
    await instance.close();
    await flush();
    assert.deepEqual(describeOutputs(await outcome), "instance 'repeat_int32_0' of model 'repeat_int32' was stopped before its last response");
    assert.equal(running.settled?.atMs, 3);
    assert.ok(running.settled?.error instanceof NereidError);
    assert.deepEqual([running.settled.error.status, running.settled.error.message], ['UNAVAILABLE', "instance 'repeat_int32_0' of model 'repeat_int32' was stopped while it executed"]);
    await advance(200);
    assert.deepEqual(log, ['OUT:INT32[1]=1 IDX:UINT32[1]=0@1'], 'no response after the close');
    await assert.rejects(instance.execute([request([4], [0], 0)]), { status: 'UNAVAILABLE', message: "instance 'repeat_int32_0' of model 'repeat_int32' was stopped before the request started" });
  });
});
