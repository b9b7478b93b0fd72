import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ExecuteResult, ModelInstance } from '../kernel/model-instance.js';
import { NereidError } from '../kernel/errors.js';
import type { InferRequest } from '../kernel/infer-request.js';
import type { Tensor } from '../kernel/tensor.js';
import { ModelStatistics } from '../metrics/model-statistics.js';
import { FakeClock } from '../../test/helpers/fake-clock.js';
import { DynamicBatcher, type DynamicBatcherOptions } from './dynamic-batcher.js';
import { InstancePool } from './instance-pool.js';
import type { QueuePolicy } from './priority-queue.js';
import { RateLimitedInstance } from './rate-limited-instance.js';
import { RateLimiter } from './rate-limiter.js';

/** An instance whose executions the test completes by hand; each request gets its own input back. */
class FakeInstance implements ModelInstance {
  readonly batches: string[][] = [];
  readonly #running: Array<() => void> = [];
  constructor(readonly name: string) {}
  execute(requests: readonly InferRequest[]): Promise<ExecuteResult> {
    this.batches.push(requests.map((request) => request.id));
    return new Promise((resolve) => {
      this.#running.push(() =>
        resolve({ responses: requests.map((request) => [{ ...request.inputs[0]!, name: 'OUT' }]), timing: { inputNs: 10, inferNs: 100, outputNs: 5 } }),
      );
    });
  }
  get runningCount(): number {
    return this.#running.length;
  }
  /** Completes the oldest running execution and lets the promise callbacks run. */
  async finish(): Promise<void> {
    this.#running.shift()!();
    await flush();
  }
  async close(): Promise<void> {}
}

const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

const request = (id: string, options: { batch?: number; dims?: number[]; priority?: number; timeout?: number } = {}): InferRequest => {
  const batch = options.batch ?? 1;
  const dims = options.dims ?? [2];
  const count = batch * dims.reduce((a, b) => a * b, 1);
  const parameters: Record<string, number> = {};
  if (options.priority !== undefined) parameters.priority = options.priority;
  if (options.timeout !== undefined) parameters.timeout = options.timeout;
  return { modelName: 'm', id, parameters, inputs: [{ name: 'IN', dataType: 'INT32', shape: [batch, ...dims], data: new Int32Array(count).fill(Number(id.replace(/\D/g, '')) || 0) }] };
};

const NO_POLICY: QueuePolicy = { timeoutAction: 'REJECT', defaultTimeoutUs: 0, allowTimeoutOverride: false, maxQueueSize: 0 };

/** The batcher over `instanceCount` fake instances; `scheduled` wraps each as the model would (the rate limiter's). */
function setup(overrides: Partial<DynamicBatcherOptions> = {}, instanceCount = 1, scheduled: (instance: FakeInstance) => ModelInstance = (instance) => instance) {
  const clock = new FakeClock();
  const instances = Array.from({ length: instanceCount }, (_, i) => new FakeInstance(`m_${i}`));
  const statistics = new ModelStatistics('m', 1);
  const batcher = new DynamicBatcher({
    modelName: 'm',
    pool: new InstancePool([...instances].reverse().map(scheduled)),
    statistics,
    clock,
    maxBatchSize: 8,
    preferredBatchSizes: [8],
    maxQueueDelayUs: 1000,
    preserveOrdering: false,
    priorityLevels: 0,
    defaultPriorityLevel: 0,
    defaultQueuePolicy: NO_POLICY,
    priorityQueuePolicies: new Map(),
    ...overrides,
  });
  const outcomes = new Map<string, string>();
  const send = (r: InferRequest): Promise<readonly Tensor[]> => {
    const promise = batcher.enqueue(r);
    promise.then(
      (outputs) => outcomes.set(r.id, `ok:${[...(outputs[0]!.data as Int32Array)].join(',')}`),
      (error: NereidError) => outcomes.set(r.id, `error:${error.message}`),
    );
    return promise;
  };
  return { clock, instances, instance: instances[0]!, batcher, statistics, send, outcomes };
}

describe('DynamicBatcher (Triton dynamic batching rules, driven by a fake clock)', () => {
  test('sends the largest preferred size reachable, at once; the rest waits for the delay', async () => {
    const { clock, instance, send } = setup({ preferredBatchSizes: [2, 4], maxQueueDelayUs: 10_000 });
    void send(request('r0', { batch: 4 }));
    assert.deepEqual(instance.batches, [['r0']], 'a request reaching a preferred size goes at once');
    for (let i = 1; i <= 5; i++) void send(request(`r${i}`));
    await instance.finish();
    assert.deepEqual(instance.batches[1], ['r1', 'r2', 'r3', 'r4'], 'of 5 waiting, the preferred 4 go');
    await instance.finish();
    assert.equal(instance.batches.length, 2, 'the fifth waits: 1 is no preferred size');
    clock.advance(9_999);
    assert.equal(instance.batches.length, 2);
    clock.advance(1);
    assert.deepEqual(instance.batches[2], ['r5'], 'sent once the oldest has waited max_queue_delay');
  });

  test('a request counts its own batch size; a batch never exceeds max_batch_size', async () => {
    const { instance, send } = setup({ maxBatchSize: 4, preferredBatchSizes: [4] });
    void send(request('r0', { batch: 4 }));
    void send(request('r1', { batch: 3 }));
    void send(request('r2', { batch: 2 }));
    await instance.finish();
    assert.deepEqual(instance.batches[1], ['r1'], '3 + 2 > 4: the batch cannot grow, so it goes at once');
    await instance.finish();
    assert.deepEqual(instance.batches, [['r0'], ['r1']]);
  });

  test('a request cancelled while queued leaves the queue unexecuted, counted CANCELED; one cancelled in a running batch is answered CANCELLED', async () => {
    const { instance, send, outcomes, statistics, batcher } = setup({ maxBatchSize: 2, preferredBatchSizes: [2] });
    const running = new AbortController();
    const queued = new AbortController();
    void send({ ...request('r0'), signal: running.signal });
    void send(request('r1'));
    void send({ ...request('r2'), signal: queued.signal });
    void send(request('r3'));
    void send(request('r4'));
    assert.deepEqual(instance.batches, [['r0', 'r1']]);
    queued.abort();
    running.abort();
    await flush();
    assert.equal(outcomes.get('r2'), "error:[request id: r2] the request to model 'm' was cancelled while it waited in the queue");
    assert.equal(batcher.queuedCount, 2);
    await instance.finish();
    assert.equal(outcomes.get('r0'), "error:[request id: r0] the request to model 'm' was cancelled while it was executing; its result was dropped");
    assert.equal(outcomes.get('r1'), 'ok:1,1');
    assert.deepEqual(instance.batches[1], ['r3', 'r4'], 'the cancelled request is in no batch');
    await instance.finish();
    const snapshot = statistics.snapshot();
    assert.deepEqual(snapshot.failuresByReason, { REJECTED: 0, CANCELED: 1, BACKEND: 0, OTHER: 0 });
    assert.equal(snapshot.inferenceCount, 4, 'every request that ran counts, the one cancelled while running too');
    void send({ ...request('r5'), signal: AbortSignal.abort() });
    await flush();
    assert.match(outcomes.get('r5')!, /cancelled while it waited in the queue/);
    assert.equal(instance.batches.length, 2);
  });

  test('max_queue_delay_microseconds 0 sends whatever is queued as soon as an instance is idle', async () => {
    const { instance, send } = setup({ maxQueueDelayUs: 0 });
    void send(request('r0'));
    assert.deepEqual(instance.batches, [['r0']]);
    void send(request('r1'));
    void send(request('r2'));
    await instance.finish();
    assert.deepEqual(instance.batches[1], ['r1', 'r2']);
  });

  test('requests whose shapes differ are never in one batch', async () => {
    const { clock, instance, send, outcomes } = setup({ maxQueueDelayUs: 100 });
    void send(request('r0', { dims: [2] }));
    void send(request('r1', { dims: [3] }));
    void send(request('r2', { dims: [2] }));
    assert.deepEqual(instance.batches, [['r0']], 'the pending batch leaves when the next request does not match');
    await instance.finish();
    clock.advance(100);
    assert.deepEqual(instance.batches[1], ['r1']);
    await instance.finish();
    clock.advance(100);
    assert.deepEqual(instance.batches[2], ['r2']);
    await instance.finish();
    assert.deepEqual([...outcomes.keys()].sort(), ['r0', 'r1', 'r2']);
  });

  test('requests batch together whatever the order of their inputs; a request with an input of another name does not', async () => {
    const { clock, instance, send } = setup({ maxQueueDelayUs: 100 });
    const a: Tensor = { name: 'A', dataType: 'INT32', shape: [1, 2], data: new Int32Array(2) };
    const b: Tensor = { name: 'B', dataType: 'INT32', shape: [1, 3], data: new Int32Array(3) };
    void send({ modelName: 'm', id: 'ab', parameters: {}, inputs: [a, b] });
    void send({ modelName: 'm', id: 'ba', parameters: {}, inputs: [b, a] });
    void send({ modelName: 'm', id: 'ac', parameters: {}, inputs: [a, { ...b, name: 'C' }] });
    assert.deepEqual(instance.batches, [['ab', 'ba']], 'the pending batch leaves when the next request does not match');
    await instance.finish();
    clock.advance(100);
    assert.deepEqual(instance.batches, [['ab', 'ba'], ['ac']]);
  });

  test('priority levels: level 1 before level 2; 0 and out-of-range mean the default level', async () => {
    const { instance, send } = setup({ maxBatchSize: 1, preferredBatchSizes: [1], priorityLevels: 2, defaultPriorityLevel: 2 });
    void send(request('blocker'));
    void send(request('low', { priority: 2 }));
    void send(request('default', { priority: 0 }));
    void send(request('beyond', { priority: 9 }));
    void send(request('high', { priority: 1 }));
    for (let i = 0; i < 4; i++) await instance.finish();
    assert.deepEqual(instance.batches.flat(), ['blocker', 'high', 'low', 'default', 'beyond']);
  });

  test('max_queue_size rejects at once with UNAVAILABLE', async () => {
    const { instance, send, batcher } = setup({ maxBatchSize: 1, preferredBatchSizes: [1], defaultQueuePolicy: { ...NO_POLICY, maxQueueSize: 2 } });
    void send(request('r0'));
    void send(request('r1'));
    void send(request('r2'));
    await assert.rejects(send(request('r3')), (error: NereidError) => {
      assert.equal(error.status, 'UNAVAILABLE');
      assert.equal(
        error.message,
        "[request id: r3] Exceeds maximum queue size: model 'm' already has 2 request(s) waiting at priority level 1 (max_queue_size 2)",
      );
      return true;
    });
    assert.equal(batcher.queuedCount, 2);
    for (let i = 0; i < 3; i++) await instance.finish();
    assert.deepEqual(instance.batches.flat(), ['r0', 'r1', 'r2']);
  });

  test('timeout REJECT: a request still queued at its deadline fails; override only shortens', async () => {
    const { clock, instance, send, outcomes } = setup({
      maxBatchSize: 1,
      preferredBatchSizes: [1],
      defaultQueuePolicy: { timeoutAction: 'REJECT', defaultTimeoutUs: 1000, allowTimeoutOverride: true, maxQueueSize: 0 },
    });
    void send(request('r0'));
    void send(request('short', { timeout: 300 }));
    void send(request('long', { timeout: 5000 }));
    clock.advance(300);
    await flush();
    assert.equal(outcomes.get('short'), "error:[request id: short] Request timeout expired: the request waited 300 µs in the queue of model 'm'");
    assert.equal(outcomes.has('long'), false);
    clock.advance(700);
    await flush();
    assert.equal(
      outcomes.get('long'),
      "error:[request id: long] Request timeout expired: the request waited 1000 µs in the queue of model 'm'",
      'a longer request timeout does not extend the default',
    );
    await instance.finish();
    assert.deepEqual(instance.batches, [['r0']]);
  });

  test('a request timeout is ignored without allow_timeout_override, and without a default timeout', async () => {
    for (const policy of [
      { ...NO_POLICY, defaultTimeoutUs: 500, allowTimeoutOverride: false },
      { ...NO_POLICY, defaultTimeoutUs: 0, allowTimeoutOverride: true },
    ]) {
      const { clock, send, outcomes } = setup({ maxBatchSize: 1, preferredBatchSizes: [1], defaultQueuePolicy: policy });
      void send(request('r0'));
      void send(request('r1', { timeout: 10 }));
      clock.advance(400);
      await flush();
      assert.equal(outcomes.has('r1'), false, JSON.stringify(policy));
    }
  });

  test('timeout DELAY: a timed-out request moves behind the others of its level', async () => {
    const { clock, instance, send } = setup({
      maxBatchSize: 1,
      preferredBatchSizes: [1],
      defaultQueuePolicy: { timeoutAction: 'DELAY', defaultTimeoutUs: 1000, allowTimeoutOverride: true, maxQueueSize: 0 },
    });
    void send(request('blocker'));
    void send(request('impatient', { timeout: 100 }));
    void send(request('patient'));
    clock.advance(100);
    for (let i = 0; i < 3; i++) await instance.finish();
    assert.deepEqual(instance.batches.flat(), ['blocker', 'patient', 'impatient']);
  });

  test('preserve_ordering: responses leave in arrival order even when a later batch finishes first', async () => {
    const { clock, instances, send, outcomes } = setup({ maxBatchSize: 1, preferredBatchSizes: [1], preserveOrdering: true }, 2);
    void send(request('r1'));
    void send(request('r2'));
    clock.advance(0);
    assert.deepEqual(instances.map((i) => i.batches), [[['r1']], [['r2']]]);
    await instances[1]!.finish();
    assert.equal(outcomes.has('r2'), false, 'r2 is held until r1 is answered');
    await instances[0]!.finish();
    assert.deepEqual([...outcomes.keys()], ['r1', 'r2']);
  });

  test('preserve_ordering does not hold back a request that timed out in the queue', async () => {
    const { clock, instance, send, outcomes } = setup({
      maxBatchSize: 1,
      preferredBatchSizes: [1],
      preserveOrdering: true,
      defaultQueuePolicy: { ...NO_POLICY, defaultTimeoutUs: 100 },
    });
    void send(request('r0'));
    void send(request('r1'));
    clock.advance(100);
    await flush();
    assert.match(outcomes.get('r1') ?? '', /^error:\[request id: r1\] Request timeout expired/);
    assert.equal(outcomes.has('r0'), false);
    await instance.finish();
    assert.deepEqual([...outcomes.keys()], ['r1', 'r0']);
  });

  test('the queue delay counts from the oldest request in the batch, not from others queued', async () => {
    const { clock, instance, send } = setup({ maxBatchSize: 4, preferredBatchSizes: [2], maxQueueDelayUs: 1000, priorityLevels: 2, defaultPriorityLevel: 1 });
    void send(request('blocker', { batch: 2 }));
    void send(request('old', { priority: 2, dims: [3] }));
    clock.advance(500);
    for (const id of ['h1', 'h2', 'h3']) void send(request(id, { priority: 1 }));
    await instance.finish();
    assert.deepEqual(instance.batches[1], ['h1', 'h2'], 'the preferred size goes; an older request of another shape does not force the rest');
  });

  test('without priority levels only the default queue policy applies', async () => {
    const { instance, send, outcomes, batcher } = setup({
      maxBatchSize: 1,
      preferredBatchSizes: [1],
      priorityQueuePolicies: new Map([[1, { ...NO_POLICY, maxQueueSize: 1 }]]),
    });
    for (const id of ['r0', 'r1', 'r2', 'r3']) void send(request(id));
    await flush();
    assert.equal(outcomes.size, 0, 'nothing rejected: the level-1 policy with max_queue_size 1 does not apply');
    assert.equal(batcher.queuedCount, 3);
    for (let i = 0; i < 4; i++) await instance.finish();
    assert.deepEqual([...outcomes.values()].filter((o) => o.startsWith('error')), []);
  });

  test('with every instance idle a request leaves at once; with one busy, the requests of a turn leave together at its end', () => {
    const { clock, instances, send } = setup({ maxQueueDelayUs: 0 }, 2);
    void send(request('r1'));
    assert.deepEqual(instances.map((i) => i.batches), [[['r1']], []]);
    void send(request('r2'));
    void send(request('r3'));
    assert.deepEqual(instances.map((i) => i.batches), [[['r1']], []]);
    clock.advance(0);
    assert.deepEqual(instances.map((i) => i.batches), [[['r1']], [['r2', 'r3']]]);
    void send(request('r4'));
    assert.deepEqual(instances.map((i) => i.batches), [[['r1']], [['r2', 'r3']]], 'no instance idle: r4 waits for one');
  });

  test('enqueueWith: each request of the batch gets its own outputs through its callback, once, as the batch completes', async () => {
    const { instance, batcher } = setup({ maxQueueDelayUs: 0 });
    const settled: string[] = [];
    const settleOf = (id: string) => (result: readonly Tensor[] | NereidError) =>
      void settled.push(result instanceof NereidError ? `${id} error:${result.message}` : `${id} ok:${[...(result[0]!.data as Int32Array)].join(',')}`);
    batcher.enqueueWith(request('r1'), settleOf('r1'));
    batcher.enqueueWith(request('r2'), settleOf('r2'));
    batcher.enqueueWith(request('r3'), settleOf('r3'));
    assert.deepEqual(instance.batches, [['r1']]);
    assert.equal(batcher.inflightCount, 3);
    await instance.finish();
    assert.deepEqual(instance.batches, [['r1'], ['r2', 'r3']]);
    assert.deepEqual(settled, ['r1 ok:1,1']);
    await instance.finish();
    assert.deepEqual(settled, ['r1 ok:1,1', 'r2 ok:2,2', 'r3 ok:3,3']);
    assert.equal(batcher.inflightCount, 0);
  });

  test('enqueueWith: a refusal is answered in the caller\'s step', async () => {
    const { batcher } = setup();
    await batcher.close();
    const settled: Array<readonly Tensor[] | NereidError> = [];
    batcher.enqueueWith(request('r1'), (result) => void settled.push(result));
    assert.deepEqual(settled, [new NereidError('UNAVAILABLE', "model 'm' is unloading and takes no new requests")]);
  });

  test('TRITONSERVER_DELAY_SCHEDULER: nothing leaves until that many requests are queued, then batching goes on as usual', async () => {
    const { clock, instance, send } = setup({ maxBatchSize: 4, preferredBatchSizes: [4], maxQueueDelayUs: 0, delayUntilQueued: 6 });
    for (let i = 0; i < 5; i++) void send(request(`r${i}`));
    clock.advance(1_000_000);
    assert.deepEqual(instance.batches, [], 'five queued of six: the delay holds, whatever the queue delay says');
    void send(request('r5'));
    assert.deepEqual(instance.batches, [['r0', 'r1', 'r2', 'r3']], 'the sixth ends the delay: a full batch leaves');
    await instance.finish();
    assert.deepEqual(instance.batches[1], ['r4', 'r5']);
    await instance.finish();
    void send(request('r6'));
    assert.deepEqual(instance.batches[2], ['r6'], 'the delay does not come back once ended');
  });

  test('without preserve_ordering a finished batch is answered at once', async () => {
    const { clock, instances, send, outcomes } = setup({ maxBatchSize: 1, preferredBatchSizes: [1] }, 2);
    void send(request('r1'));
    void send(request('r2'));
    clock.advance(0);
    await instances[1]!.finish();
    assert.deepEqual([...outcomes.keys()], ['r2']);
  });

  test('every response reaches its own request, and the statistics add up', async () => {
    const { clock, instances, send, outcomes, statistics } = setup({ maxBatchSize: 8, preferredBatchSizes: [4, 8], maxQueueDelayUs: 50 }, 2);
    const sizes = Array.from({ length: 60 }, (_, i) => 1 + ((i * 7) % 4));
    const all = sizes.map((batch, i) => send(request(`r${i}`, { batch })));
    while (outcomes.size < sizes.length) {
      clock.advance(50);
      for (const instance of instances) if (instance.runningCount > 0) await instance.finish();
      await flush();
    }
    await Promise.all(all);
    sizes.forEach((batch, i) => assert.equal(outcomes.get(`r${i}`), `ok:${Array(batch * 2).fill(i).join(',')}`));
    const snapshot = statistics.snapshot();
    const executions = instances.reduce((sum, instance) => sum + instance.batches.length, 0);
    assert.equal(snapshot.inferenceCount, sizes.reduce((a, b) => a + b, 0));
    assert.equal(snapshot.executionCount, executions);
    assert.equal(snapshot.inferenceStats.queue.count, sizes.length);
    assert.equal(snapshot.inferenceStats.computeInfer.count, sizes.length);
    assert.equal(snapshot.batchStats.reduce((sum, b) => sum + b.computeInfer.count, 0), executions);
    assert.ok(snapshot.batchStats.every((b) => b.batchSize <= 8));
    assert.ok(snapshot.batchStats.some((b) => b.batchSize > 1));
  });

  describe('with the rate limiter: two instances sharing one global resource R', () => {
    /** Wraps each instance as the model does, its group's priority by instance name (0 when not given). */
    const rateLimited = (priorities: Record<string, number> = {}) => {
      const limiter = new RateLimiter({ declared: [] });
      const limit = (name: string) => ({ resources: [{ name: 'R', count: 1, isGlobal: true }], priority: priorities[name] ?? 0, deviceId: 0 });
      const [first, second] = limiter.register([
        { label: 'm/m_0', limit: limit('m_0') },
        { label: 'm/m_1', limit: limit('m_1') },
      ]);
      return (instance: FakeInstance): ModelInstance => new RateLimitedInstance(instance, instance.name === 'm_0' ? first! : second!);
    };

    test("a due batch waits for an instance's resources and takes the requests that came meanwhile (Triton's payload grows)", async () => {
      const { clock, instances, send, outcomes, statistics } = setup({ maxBatchSize: 4, preferredBatchSizes: [1, 2, 3, 4], maxQueueDelayUs: 5_000_000 }, 2, rateLimited());
      const [first, second] = instances as [FakeInstance, FakeInstance];
      void send(request('r0'));
      await flush();
      assert.deepEqual(first.batches, [['r0']], 'R is free: the first instance runs r0 at once');
      for (let i = 1; i <= 5; i++) {
        void send(request(`r${i}`));
        clock.advance(0);
        await flush();
      }
      assert.deepEqual(second.batches, [], 'the second instance waits for R, its batch not formed yet');
      await first.finish();
      await flush();
      assert.deepEqual(second.batches, [['r1', 'r2', 'r3', 'r4']], 'given R, it takes a full batch of what came while it waited');
      await second.finish();
      await flush();
      assert.deepEqual(first.batches, [['r0'], ['r5']]);
      await first.finish();
      assert.deepEqual([...outcomes.keys()].sort(), ['r0', 'r1', 'r2', 'r3', 'r4', 'r5']);
      assert.deepEqual(
        statistics.snapshot().batchStats.map((batch) => [batch.batchSize, batch.computeInfer.count]),
        [
          [1, 2],
          [4, 1],
        ],
      );
    });

    test("a model's own instances take turns by the rate limiter's priority: priority 1 runs twice as often as priority 2", async () => {
      const { instances, send, outcomes } = setup({ maxBatchSize: 1, preferredBatchSizes: [1], maxQueueDelayUs: 0 }, 2, rateLimited({ m_0: 1, m_1: 2 }));
      const count = 30;
      for (let i = 0; i < count; i++) void send(request(`r${i}`));
      while (outcomes.size < count) {
        await flush();
        for (const instance of instances) if (instance.runningCount > 0) await instance.finish();
      }
      // Executions so far × priority, lowest first, a tie to the one that asked first: 2 to 1 but for the ties.
      assert.deepEqual(
        instances.map((instance) => instance.batches.length),
        [19, 11],
      );
    });

    test('an instance given R after its batch went away gives R back unused, and the next request still runs', async () => {
      const { clock, instances, send, outcomes } = setup({ maxBatchSize: 4, preferredBatchSizes: [1, 2, 3, 4], maxQueueDelayUs: 5_000_000 }, 2, rateLimited());
      const [first, second] = instances as [FakeInstance, FakeInstance];
      void send(request('r0'));
      await flush();
      const cancel = new AbortController();
      void send({ ...request('r1'), signal: cancel.signal });
      clock.advance(0);
      await flush();
      cancel.abort();
      await first.finish();
      await flush();
      assert.deepEqual(second.batches, [], 'nothing was left to run when R came');
      assert.match(outcomes.get('r1')!, /cancelled while it waited in the queue/);
      void send(request('r2'));
      await flush();
      assert.equal(first.batches.length + second.batches.length, 2, 'R was given back: r2 runs');
      for (const instance of instances) if (instance.runningCount > 0) await instance.finish();
      assert.equal(outcomes.get('r2'), 'ok:2,2');
    });
  });
});
