import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { NereidError } from '../kernel/errors.js';
import type { InferRequest, InferResponse } from '../kernel/infer-request.js';
import type { ModelSpec, TensorSpec } from '../kernel/model-spec.js';
import type { RequestTrace } from '../kernel/request-trace.js';
import type { Tensor } from '../kernel/tensor.js';
import { type RoutableModel, RequestRouter } from './request-router.js';

const tensorSpec = (name: string): TensorSpec => ({ name, dataType: 'INT32', dims: [2], isOptional: false });
const spec: ModelSpec = {
  name: 'batched',
  version: 3,
  platform: 'onnxruntime_onnx',
  backend: 'onnxruntime',
  maxBatchSize: 8,
  isDecoupled: false,
  inputs: [tensorSpec('IN')],
  outputs: [tensorSpec('OUT')],
  inputByName: new Map([['IN', tensorSpec('IN')]]),
  outputByName: new Map([['OUT', tensorSpec('OUT')]]),
};

/** A model whose scheduler takes callbacks (unless told otherwise); the test settles each enqueued request by hand. */
function setup({ hasCallbacks = true } = {}) {
  const enqueued: Array<{ request: InferRequest; settle: (result: readonly Tensor[] | NereidError) => void }> = [];
  const model: RoutableModel = {
    spec,
    infer: () => Promise.reject(new Error('not used')),
    ...(hasCallbacks
      ? {
          inferWith: (request: InferRequest, settle: (result: readonly Tensor[] | NereidError) => void) => {
            enqueued.push({ request, settle });
            return true;
          },
        }
      : {}),
  };
  const router = new RequestRouter({
    prepare: () => Promise.resolve(),
    lookup: () => model,
    lookupNow: (name) => {
      if (name !== 'batched') throw new NereidError('INVALID_ARG', `Request for unknown model: '${name}' is not found`);
      return model;
    },
  });
  const results: Array<InferResponse | Error> = [];
  return { router, enqueued, results, done: (result: InferResponse | Error) => void results.push(result) };
}

const request = (id: string, data = [1, 2]): InferRequest => ({
  modelName: 'batched',
  id,
  parameters: {},
  inputs: [{ name: 'IN', dataType: 'INT32', shape: [1, data.length], data: new Int32Array(data) }],
});

describe('RequestRouter.inferWith', () => {
  test('enqueues a validated request, and its outputs come back as its response', () => {
    const { router, enqueued, results, done } = setup();
    assert.equal(router.inferWith(request('r1', [5, 6]), done), true);
    assert.equal(enqueued.length, 1);
    assert.deepEqual(enqueued[0]!.request.outputs?.map((output) => output.name), ['OUT']);
    assert.deepEqual(results, []);
    enqueued[0]!.settle([{ name: 'OUT', dataType: 'INT32', shape: [1, 2], data: new Int32Array([10, 12]) }]);
    assert.deepEqual(results, [
      { modelName: 'batched', modelVersion: '3', id: 'r1', parameters: {}, outputs: [{ name: 'OUT', dataType: 'INT32', shape: [1, 2], data: new Int32Array([10, 12]) }] },
    ]);
  });

  test("the scheduler's error reaches the caller as it is", () => {
    const { router, enqueued, results, done } = setup();
    router.inferWith(request('r2'), done);
    const error = new NereidError('UNAVAILABLE', "model 'batched' was unloaded before the request ran");
    enqueued[0]!.settle(error);
    assert.deepEqual(results, [error]);
  });

  test('a request its model refuses throws before anything is enqueued', () => {
    const { router, enqueued, done } = setup();
    const bad: InferRequest = { ...request('r3'), inputs: [{ name: 'IN', dataType: 'INT32', shape: [1, 3], data: new Int32Array([1, 2, 3]) }] };
    assert.throws(() => router.inferWith(bad, done), { status: 'INVALID_ARG', message: "unexpected shape for input 'IN' for model 'batched'. Expected [-1,2], got [1,3]. NOTE: Setting a non-zero max_batch_size in the model config requires a batch dimension to be prepended to each input shape. If you want to specify the full shape including the batch dim in your input dims config, try setting max_batch_size to zero. See the model configuration docs for more info on max_batch_size." });
    assert.equal(enqueued.length, 0);
  });

  test('declines, doing nothing, a traced request and a model whose scheduler takes no callback', () => {
    const traced = setup();
    assert.equal(traced.router.inferWith({ ...request('r4'), trace: {} as RequestTrace }, traced.done), false);
    assert.equal(traced.enqueued.length, 0);
    const plain = setup({ hasCallbacks: false });
    assert.equal(plain.router.inferWith(request('r5'), plain.done), false);
  });
});

describe('RequestRouter.inferStream', () => {
  test('onAccepted marks the request accepted once it is validated: a refusal comes before it, a failure after it', async () => {
    const { router } = setup();
    const marks: string[] = [];
    const bad: InferRequest = { ...request('s1'), inputs: [{ name: 'IN', dataType: 'INT32', shape: [1, 3], data: new Int32Array([1, 2, 3]) }] };
    await assert.rejects(
      router.inferStream(bad, () => marks.push('response'), () => marks.push('accepted')),
      { status: 'INVALID_ARG' },
    );
    assert.equal(marks.length, 0, 'neither accepted nor answered');
    await assert.rejects(
      router.inferStream(request('s2'), () => marks.push('response'), () => marks.push('accepted')),
      { message: 'not used' },
    );
    assert.deepEqual(marks, ['accepted']);
  });
});
