import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NereidError } from '../../kernel/errors.js';
import type { InferRequest, InferResponse } from '../../kernel/infer-request.js';
import type { ModelCaller } from '../../kernel/model-caller.js';
import type { ModelSpec, TensorSpec } from '../../kernel/model-spec.js';
import { ModelStatistics } from '../../metrics/model-statistics.js';
import { type Deferred, deferred } from '../../util/deferred.js';
import { EnsembleScheduler } from './ensemble-scheduler.js';

const tensorSpec = (name: string): TensorSpec => ({ name, dataType: 'INT32', dims: [1], isOptional: false });
const spec: ModelSpec = {
  name: 'pipe',
  version: 1,
  platform: 'ensemble',
  backend: '',
  maxBatchSize: 0,
  isDecoupled: false,
  inputs: [tensorSpec('IN')],
  outputs: [tensorSpec('OUT')],
  inputByName: new Map([['IN', tensorSpec('IN')]]),
  outputByName: new Map([['OUT', tensorSpec('OUT')]]),
};

/** One step, model 'inner' (INPUT0 ← IN, OUTPUT0 → OUT), whose calls the test answers by hand. */
function setup(maxInflightRequests?: number): { scheduler: EnsembleScheduler; calls: Array<Deferred<InferResponse>> } {
  const calls: Array<Deferred<InferResponse>> = [];
  const caller: ModelCaller = {
    infer: () => {
      const call = deferred<InferResponse>();
      calls.push(call);
      return call.promise;
    },
    inferStream: () => Promise.reject(new Error('not used')),
  };
  const scheduler = new EnsembleScheduler({
    spec,
    steps: [{ index: 0, modelName: 'inner', modelKey: 'inner', modelVersion: undefined, inputs: [{ modelInput: 'INPUT0', tensor: 'IN' }], outputs: [{ modelOutput: 'OUTPUT0', tensor: 'OUT' }], isDecoupled: false }],
    caller,
    statistics: new ModelStatistics('pipe', 1),
    ...(maxInflightRequests !== undefined ? { maxInflightRequests } : {}),
  });
  return { scheduler, calls };
}

const request = (id: string): InferRequest => ({ modelName: 'pipe', id, parameters: {}, inputs: [{ name: 'IN', dataType: 'INT32', shape: [1], data: new Int32Array([7]) }] });
const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

test('close refuses new requests and waits for the running one to finish', async () => {
  const { scheduler, calls } = setup();
  const running = scheduler.enqueue(request('r0'));
  await flush();
  let isClosed = false;
  const closing = scheduler.close().then(() => (isClosed = true));
  await assert.rejects(scheduler.enqueue(request('r1')), { status: 'UNAVAILABLE', message: "model 'pipe' is unloading and takes no new requests" });
  await flush();
  assert.equal(isClosed, false);
  assert.equal(scheduler.inflightCount, 1);
  calls[0]!.resolve({ modelName: 'inner', modelVersion: '1', id: 'r0', parameters: {}, outputs: [{ name: 'OUTPUT0', dataType: 'INT32', shape: [1], data: new Int32Array([14]) }] });
  assert.deepEqual(await running, [{ name: 'OUT', dataType: 'INT32', shape: [1], data: new Int32Array([14]) }]);
  await closing;
  assert.equal(scheduler.inflightCount, 0);
});

test('a failing step fails the request with its status, named in the message', async () => {
  const { scheduler, calls } = setup();
  const failing = scheduler.enqueue(request('r0'));
  await flush();
  calls[0]!.reject(new NereidError('UNAVAILABLE', "model 'inner' is unloading and takes no new requests"));
  await assert.rejects(failing, {
    status: 'UNAVAILABLE',
    message: "in ensemble 'pipe', model 'inner' is unloading and takes no new requests (step 0, model 'inner')",
  });
  assert.equal(scheduler.inflightCount, 0);
});

test('max_inflight_requests: a step runs at most that many requests at once, across ensemble requests', async () => {
  const { scheduler, calls } = setup(1);
  const answer = (value: number): InferResponse => ({ modelName: 'inner', modelVersion: '1', id: '', parameters: {}, outputs: [{ name: 'OUTPUT0', dataType: 'INT32', shape: [1], data: new Int32Array([value]) }] });
  const first = scheduler.enqueue(request('r0'));
  const second = scheduler.enqueue(request('r1'));
  await flush();
  assert.equal(calls.length, 1, 'the second waits for the first');
  calls[0]!.resolve(answer(1));
  assert.deepEqual((await first)[0]!.data, new Int32Array([1]));
  await flush();
  assert.equal(calls.length, 2);
  calls[1]!.resolve(answer(2));
  assert.deepEqual((await second)[0]!.data, new Int32Array([2]));
});

test('a decoupled step: the step after it runs once per response, and each ensemble response pairs what came from one response', async () => {
  const streamSpec: ModelSpec = { ...spec, isDecoupled: true, outputs: [tensorSpec('WORD'), tensorSpec('OUT')], outputByName: new Map([['WORD', tensorSpec('WORD')], ['OUT', tensorSpec('OUT')]]) };
  const later: Array<Deferred<InferResponse>> = [];
  const int32 = (name: string, value: number): InferResponse['outputs'][number] => ({ name, dataType: 'INT32', shape: [1], data: new Int32Array([value]) });
  const caller: ModelCaller = {
    infer: () => {
      const call = deferred<InferResponse>();
      later.push(call);
      return call.promise;
    },
    inferStream: async (_request, onResponse) => {
      for (const value of [10, 20, 30]) onResponse({ modelName: 'stream', modelVersion: '1', id: '', parameters: {}, outputs: [int32('WORDS', value)] });
    },
  };
  const scheduler = new EnsembleScheduler({
    spec: streamSpec,
    steps: [
      { index: 0, modelName: 'stream', modelKey: 'stream', modelVersion: undefined, inputs: [{ modelInput: 'X', tensor: 'IN' }], outputs: [{ modelOutput: 'WORDS', tensor: 'WORD' }], isDecoupled: true },
      { index: 1, modelName: 'inner', modelKey: 'inner', modelVersion: undefined, inputs: [{ modelInput: 'INPUT0', tensor: 'WORD' }], outputs: [{ modelOutput: 'OUTPUT0', tensor: 'OUT' }], isDecoupled: false },
    ],
    caller,
    statistics: new ModelStatistics('pipe', 1),
  });
  const responses: Array<[number, number] | NereidError> = [];
  const done = scheduler.enqueue({
    ...request('r0'),
    onResponse: (outputs) => void responses.push(outputs instanceof NereidError ? outputs : [outputs[0]!.data[0] as number, outputs[1]!.data[0] as number]),
  });
  await flush();
  assert.equal(later.length, 3);
  // The step after the decoupled one finishes out of order: each response still pairs its own tensors.
  later[2]!.resolve({ modelName: 'inner', modelVersion: '1', id: '', parameters: {}, outputs: [int32('OUTPUT0', 31)] });
  later[0]!.resolve({ modelName: 'inner', modelVersion: '1', id: '', parameters: {}, outputs: [int32('OUTPUT0', 11)] });
  later[1]!.resolve({ modelName: 'inner', modelVersion: '1', id: '', parameters: {}, outputs: [int32('OUTPUT0', 21)] });
  assert.deepEqual(await done, []);
  assert.deepEqual(responses, [[30, 31], [10, 11], [20, 21]]);
});
