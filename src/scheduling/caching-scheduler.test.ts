import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NereidError } from '../kernel/errors.js';
import type { InferRequest } from '../kernel/infer-request.js';
import { responseParametersOf, withResponseParameters } from '../kernel/response-parameters.js';
import type { Tensor } from '../kernel/tensor.js';
import { ModelStatistics } from '../metrics/model-statistics.js';
import { FakeClock } from '../../test/helpers/fake-clock.js';
import { CachingScheduler } from './caching-scheduler.js';
import { ResponseCache } from './response-cache.js';
import type { Scheduler } from './scheduler.js';

/** A scheduler that doubles its input, taking 100 µs of the fake clock, and fails a negative one. */
class DoublingScheduler implements Scheduler {
  runs = 0;
  closed = false;
  readonly inflightCount = 0;
  readonly queuedCount = 0;
  constructor(readonly clock: FakeClock) {}
  async enqueue(request: InferRequest): Promise<readonly Tensor[]> {
    if (this.closed) throw new NereidError('UNAVAILABLE', 'closed');
    this.runs++;
    this.clock.advance(100);
    const value = (request.inputs[0]!.data as Int32Array)[0]!;
    if (value < 0) throw new NereidError('INVALID_ARG', 'negative');
    return [{ name: 'OUT', dataType: 'INT32', shape: [1], data: new Int32Array([value * 2]) }];
  }
  async close(): Promise<void> {
    this.closed = true;
  }
}

const request = (value: number): InferRequest => ({
  modelName: 'm',
  id: '',
  parameters: {},
  inputs: [{ name: 'IN', dataType: 'INT32', shape: [1], data: new Int32Array([value]) }],
});

function setUp(sizeBytes = 1024) {
  const clock = new FakeClock();
  const inner = new DoublingScheduler(clock);
  const statistics = new ModelStatistics('m', 1);
  const cache = new ResponseCache(sizeBytes);
  return { inner, statistics, cache, scheduler: new CachingScheduler({ scheduler: inner, cache, statistics, model: 'm', version: 1, loadId: 1, clock }) };
}

test('a repeated request is answered from the cache: counted as a success and a hit, not executed', async () => {
  const { inner, statistics, scheduler } = setUp();
  for (const value of [1, 2, 1, 1, 2, 3]) {
    assert.deepEqual([...((await scheduler.enqueue(request(value)))[0]!.data as Int32Array)], [value * 2]);
  }
  assert.equal(inner.runs, 3);
  // The misses' successes and queue times are the model's scheduler's to count (this one counts none).
  const { success, cacheHit, cacheMiss, queue } = statistics.snapshot().inferenceStats;
  assert.deepEqual({ hits: cacheHit.count, misses: cacheMiss.count, success: success.count, queue: queue.count }, { hits: 3, misses: 3, success: 3, queue: 3 });
});

test('a failed request is neither stored nor counted as a miss, and fails alone', async () => {
  const { inner, statistics, scheduler } = setUp();
  await assert.rejects(scheduler.enqueue(request(-1)), /negative/);
  await assert.rejects(scheduler.enqueue(request(-1)), /negative/);
  assert.equal(inner.runs, 2);
  assert.equal(statistics.snapshot().inferenceStats.cacheMiss.count, 0);
});

test('a response larger than the cache is answered, counted as a miss and as an insertion failure', async () => {
  const { inner, statistics, cache, scheduler } = setUp(2);
  assert.deepEqual([...((await scheduler.enqueue(request(5)))[0]!.data as Int32Array)], [10]);
  assert.deepEqual([...((await scheduler.enqueue(request(5)))[0]!.data as Int32Array)], [10]);
  assert.equal(inner.runs, 2);
  assert.equal(statistics.snapshot().inferenceStats.cacheMiss.count, 2);
  assert.equal(cache.statistics().insertionFailureCount, 2);
});

test('once closed, even a cached request is refused by the model', async () => {
  const { scheduler } = setUp();
  await scheduler.enqueue(request(1));
  await scheduler.close();
  await assert.rejects(scheduler.enqueue(request(1)), /closed/);
});

test('a hit answers with the response parameters the model set on the miss it repeats', async () => {
  const clock = new FakeClock();
  const parameters = { note: 'from the model', count: 3 };
  const inner: Scheduler = {
    inflightCount: 0,
    queuedCount: 0,
    enqueue: async () => withResponseParameters([{ name: 'OUT', dataType: 'INT32', shape: [1], data: new Int32Array([7]) }], parameters),
    close: async () => {},
  };
  const scheduler = new CachingScheduler({ scheduler: inner, cache: new ResponseCache(1024), statistics: new ModelStatistics('m', 1), model: 'm', version: 1, loadId: 1, clock });
  assert.deepEqual(responseParametersOf(await scheduler.enqueue(request(1))), parameters);
  const hit = await scheduler.enqueue(request(1));
  assert.deepEqual([...(hit[0]!.data as Int32Array)], [7]);
  assert.deepEqual(responseParametersOf(hit), parameters);
});

test('enqueueNow answers a hit in this step as enqueue would; a miss is left to enqueue, counted once', async () => {
  const { inner, statistics, cache, scheduler } = setUp();
  assert.equal(scheduler.canEnqueueNow, true);
  assert.equal(scheduler.enqueueNow(request(4)), undefined);
  assert.deepEqual(cache.statistics().lookupCount, 0);
  assert.deepEqual([...((await scheduler.enqueue(request(4)))[0]!.data as Int32Array)], [8]);
  const hit = scheduler.enqueueNow(request(4))!;
  assert.deepEqual([...(hit[0]!.data as Int32Array)], [8]);
  assert.equal(hit, await scheduler.enqueue(request(4)), 'the same stored outputs');
  assert.equal(inner.runs, 1);
  const { lookupCount, hitCount, missCount } = cache.statistics();
  assert.deepEqual({ lookupCount, hitCount, missCount }, { lookupCount: 3, hitCount: 2, missCount: 1 });
  const { success, cacheHit, cacheMiss } = statistics.snapshot().inferenceStats;
  assert.deepEqual({ hits: cacheHit.count, misses: cacheMiss.count, success: success.count }, { hits: 2, misses: 1, success: 2 });
  await scheduler.close();
  assert.equal(scheduler.canEnqueueNow, false);
  assert.equal(scheduler.enqueueNow(request(4)), undefined);
});

test("a cache whose lookups wait (Redis) answers nothing in the caller's step", () => {
  const clock = new FakeClock();
  const { statistics, cache } = setUp();
  const waiting = { isShared: true, lookup: async () => undefined, insert: async () => 'failed' as const, statistics: () => cache.statistics(), close: async () => {} };
  const scheduler = new CachingScheduler({ scheduler: new DoublingScheduler(clock), cache: waiting, statistics, model: 'm', version: 1, loadId: 0, clock });
  assert.equal(scheduler.canEnqueueNow, false);
  assert.equal(scheduler.enqueueNow(request(1)), undefined);
});

/** DoublingScheduler with callbacks (as the dynamic batcher takes them): a miss settles from `settle`, later. */
class CallbackScheduler extends DoublingScheduler {
  readonly pending: Array<() => void> = [];
  enqueueWith(request: InferRequest, settle: (result: readonly Tensor[] | NereidError) => void): void {
    this.pending.push(() => void this.enqueue(request).then(settle, settle));
  }
}

test('enqueueWith, with a local cache before a scheduler that takes callbacks: a hit settles in this step, a miss from its completion', async () => {
  const clock = new FakeClock();
  const inner = new CallbackScheduler(clock);
  const statistics = new ModelStatistics('m', 1);
  const cache = new ResponseCache(1024);
  const scheduler = new CachingScheduler({ scheduler: inner, cache, statistics, model: 'm', version: 1, loadId: 1, clock });
  const settled: Array<readonly Tensor[] | NereidError> = [];
  scheduler.enqueueWith!(request(6), (result) => settled.push(result));
  assert.equal(settled.length, 0, 'a miss waits for its execution');
  inner.pending.shift()!();
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual([...((settled[0] as readonly Tensor[])[0]!.data as Int32Array)], [12]);
  scheduler.enqueueWith!(request(6), (result) => settled.push(result));
  assert.equal(settled.length, 2, 'the hit settled in this step');
  assert.deepEqual([...((settled[1] as readonly Tensor[])[0]!.data as Int32Array)], [12]);
  scheduler.enqueueWith!(request(-1), (result) => settled.push(result));
  inner.pending.shift()!();
  await new Promise((resolve) => setImmediate(resolve));
  assert.match((settled[2] as NereidError).message, /negative/);
  assert.equal(inner.runs, 2);
  const { cacheHit, cacheMiss } = statistics.snapshot().inferenceStats;
  assert.deepEqual({ hits: cacheHit.count, misses: cacheMiss.count }, { hits: 1, misses: 1 });
  assert.equal(cache.statistics().lookupCount, 3);
});

test('enqueueWith is offered only where both sides allow it: not before a scheduler without callbacks, nor with a cache that waits', () => {
  assert.equal(setUp().scheduler.enqueueWith, undefined);
  const clock = new FakeClock();
  const { statistics, cache } = setUp();
  const waiting = { isShared: true, lookup: async () => undefined, insert: async () => 'failed' as const, statistics: () => cache.statistics(), close: async () => {} };
  assert.equal(new CachingScheduler({ scheduler: new CallbackScheduler(clock), cache: waiting, statistics, model: 'm', version: 1, loadId: 0, clock }).enqueueWith, undefined);
});
