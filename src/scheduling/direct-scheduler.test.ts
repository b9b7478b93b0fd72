import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ExecuteResult, ModelInstance } from '../kernel/model-instance.js';
import { NereidError } from '../kernel/errors.js';
import type { InferRequest } from '../kernel/infer-request.js';
import type { Tensor } from '../kernel/tensor.js';
import { deferred } from '../util/deferred.js';
import { ModelStatistics } from '../metrics/model-statistics.js';
import { DirectScheduler } from './direct-scheduler.js';
import { InstancePool } from './instance-pool.js';

/** An instance that answers when told to, and fails what it is running when closed (as OrtInstance does). */
class ManualInstance implements ModelInstance {
  readonly name = 'm_0';
  readonly ran: string[] = [];
  #running: Array<{ resolve: (result: ExecuteResult) => void; reject: (error: Error) => void; requests: readonly InferRequest[] }> = [];
  execute(requests: readonly InferRequest[]): Promise<ExecuteResult> {
    this.ran.push(...requests.map((r) => r.id));
    return new Promise((resolve, reject) => this.#running.push({ resolve, reject, requests }));
  }
  finish(): void {
    const { resolve, requests } = this.#running.shift()!;
    resolve({ responses: requests.map((r) => r.inputs), timing: { inputNs: 1, inferNs: 2, outputNs: 3 } });
  }
  /** Releases the request it runs before its last response (ExecuteResult.unfinished), which comes with `last`. */
  release(last: Promise<readonly Tensor[] | NereidError>): void {
    const { resolve } = this.#running.shift()!;
    resolve({ responses: [[]], unfinished: new Map([[0, last]]), timing: { inputNs: 0, inferNs: 5, outputNs: 0 } });
  }
  async close(): Promise<void> {
    for (const running of this.#running.splice(0)) running.reject(new NereidError('UNAVAILABLE', 'instance stopped'));
  }
}

const request = (id: string): InferRequest => ({
  modelName: 'm',
  id,
  parameters: {},
  inputs: [{ name: 'IN', dataType: 'INT32', shape: [2, 1], data: new Int32Array([1, 2]) }],
});
const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

test('requests run alone, in arrival order, and are counted with their batch size', async () => {
  const instance = new ManualInstance();
  const statistics = new ModelStatistics('m', 1);
  const scheduler = new DirectScheduler({ modelName: 'm', pool: new InstancePool([instance]), statistics, isBatching: true });
  const first = scheduler.enqueue(request('r0'));
  const second = scheduler.enqueue(request('r1'));
  await flush();
  assert.deepEqual(instance.ran, ['r0']);
  assert.equal(scheduler.queuedCount, 1);
  instance.finish();
  await first;
  await flush();
  assert.deepEqual(instance.ran, ['r0', 'r1']);
  instance.finish();
  await second;
  const snapshot = statistics.snapshot();
  assert.equal(snapshot.inferenceCount, 4);
  assert.equal(snapshot.executionCount, 2);
  assert.deepEqual(snapshot.batchStats.map((b) => [b.batchSize, b.computeInfer.count]), [[2, 2]]);
  assert.equal(snapshot.inferenceStats.success.count, 2);
});

test('a forced close settles every request: the running one and the waiting one', async () => {
  const instance = new ManualInstance();
  const statistics = new ModelStatistics('m', 1);
  const scheduler = new DirectScheduler({ modelName: 'm', pool: new InstancePool([instance]), statistics, isBatching: true });
  const running = scheduler.enqueue(request('r0'));
  const waiting = scheduler.enqueue(request('r1'));
  await flush();
  await scheduler.close({ isForced: true });
  await assert.rejects(running, { message: 'instance stopped' });
  await assert.rejects(waiting, { message: 'the model was unloaded before the request could run' });
  assert.equal(scheduler.inflightCount, 0);
  await assert.rejects(scheduler.enqueue(request('r2')), { message: "model 'm' is unloading and takes no new requests" });
  assert.equal(statistics.snapshot().inferenceStats.fail.count, 1, 'the request that reached an instance counts as failed');
});

test('a request cancelled while it waits for an instance leaves unexecuted; one cancelled while running runs and is answered CANCELLED', async () => {
  const instance = new ManualInstance();
  const statistics = new ModelStatistics('m', 1);
  const scheduler = new DirectScheduler({ modelName: 'm', pool: new InstancePool([instance]), statistics, isBatching: true });
  const runningAbort = new AbortController();
  const waitingAbort = new AbortController();
  const running = scheduler.enqueue({ ...request('r0'), signal: runningAbort.signal });
  const waiting = scheduler.enqueue({ ...request('r1'), signal: waitingAbort.signal });
  const next = scheduler.enqueue(request('r2'));
  await flush();
  waitingAbort.abort();
  await assert.rejects(waiting, { status: 'CANCELLED', message: "[request id: r1] the request to model 'm' was cancelled while it waited in the queue" });
  runningAbort.abort();
  instance.finish();
  await assert.rejects(running, { status: 'CANCELLED', message: "[request id: r0] the request to model 'm' was cancelled while it was executing; its result was dropped" });
  await flush();
  instance.finish();
  await next;
  assert.deepEqual(instance.ran, ['r0', 'r2'], 'the cancelled waiting request never ran');
  const snapshot = statistics.snapshot();
  assert.equal(snapshot.executionCount, 2);
  assert.deepEqual(snapshot.failuresByReason, { REJECTED: 0, CANCELED: 1, BACKEND: 0, OTHER: 0 });
  assert.equal(snapshot.inferenceStats.success.count, 2, 'the request cancelled while running was executed: a success for its backend');
  await assert.rejects(scheduler.enqueue({ ...request('r3'), signal: AbortSignal.abort() }), { status: 'CANCELLED' });
  assert.deepEqual(instance.ran, ['r0', 'r2'], 'a request cancelled before it was enqueued never runs');
});

test('a request released before its last response frees the instance and settles with its promise, counted at its release', async () => {
  const instance = new ManualInstance();
  const statistics = new ModelStatistics('m', 1);
  const scheduler = new DirectScheduler({ modelName: 'm', pool: new InstancePool([instance]), statistics, isBatching: false });
  const cancel = new AbortController();
  const firstLast = deferred<readonly Tensor[] | NereidError>();
  const secondLast = deferred<readonly Tensor[] | NereidError>();
  const first = scheduler.enqueue(request('r0'));
  const second = scheduler.enqueue({ ...request('r1'), signal: cancel.signal });
  const third = scheduler.enqueue(request('r2'));
  await flush();
  instance.release(firstLast.promise);
  await flush();
  assert.deepEqual(instance.ran, ['r0', 'r1'], 'the next request runs while the first still responds');
  assert.deepEqual([scheduler.inflightCount, scheduler.queuedCount], [3, 1], 'a responding request is in flight, not queued');
  assert.equal(statistics.snapshot().inferenceStats.success.count, 1, 'counted at its release');
  instance.release(secondLast.promise);
  await flush();
  cancel.abort();
  secondLast.resolve([]);
  await assert.rejects(second, { status: 'CANCELLED' });
  firstLast.resolve([]);
  assert.deepEqual(await first, []);
  instance.finish();
  assert.deepEqual(await third, request('r2').inputs);
  await scheduler.close();
  assert.equal(scheduler.inflightCount, 0);
});

test('a request released before its last response fails with the error its promise brings', async () => {
  const instance = new ManualInstance();
  const scheduler = new DirectScheduler({ modelName: 'm', pool: new InstancePool([instance]), statistics: new ModelStatistics('m', 1), isBatching: false });
  const answer = scheduler.enqueue(request('r0'));
  await flush();
  instance.release(Promise.resolve(new NereidError('UNAVAILABLE', 'stopped before its last response')));
  await assert.rejects(answer, { status: 'UNAVAILABLE', message: 'stopped before its last response' });
});
