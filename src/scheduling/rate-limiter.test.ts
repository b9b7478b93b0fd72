import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type DeclaredResource, type InstanceRateLimit, RateLimiter, type RateLimiterRegistration } from './rate-limiter.js';

const limit = (resources: Array<[string, number, boolean?]>, priority = 0): InstanceRateLimit => ({
  resources: resources.map(([name, count, isGlobal]) => ({ name, count, isGlobal: isGlobal ?? false })),
  priority,
  deviceId: 0,
});

/** A rate limiter whose deferred allocations run when the test says so. */
function setUp(declared: DeclaredResource[] = []) {
  const deferred: Array<() => void> = [];
  const limiter = new RateLimiter({ declared, defer: (callback) => deferred.push(callback) });
  const runDeferred = (): void => {
    for (const callback of deferred.splice(0)) callback();
  };
  return { limiter, runDeferred };
}

const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

test("by default a resource has the largest count any instance asks for (Triton's example)", () => {
  const { limiter } = setUp();
  limiter.register([
    { label: 'A', limit: limit([['R1', 4], ['R2', 4]]) },
    { label: 'B', limit: limit([['R2', 5], ['R3', 10], ['R4', 5]]) },
    { label: 'C', limit: limit([['R1', 1], ['R3', 7], ['R4', 2]]) },
  ]);
  assert.deepEqual(limiter.limits(), { 'device 0': { R1: 4, R2: 5, R3: 10, R4: 5 } });
});

test("an instance asking for more than --rate-limit-resource declares fails with Triton's message, and none of its model registers", () => {
  const { limiter } = setUp([{ name: 'R1', count: 1 }]);
  assert.throws(
    () => limiter.register([{ label: 'A', limit: limit([['R1', 4]]) }]),
    /^NereidError: Resource count for "R1" is limited to 1 which will prevent scheduling of one or more model instances, the minimum required count is 4$/,
  );
  assert.deepEqual(limiter.limits(), {});
  assert.throws(
    () => limiter.register([{ label: 'B', limit: limit([['R9', 1]]) }]),
    /Resource count for "R9" is limited to 0 which will prevent scheduling/,
  );
  limiter.register([{ label: 'C', limit: limit([['R1', 1]]) }]);
  assert.deepEqual(limiter.limits(), { 'device 0': { R1: 1 } });
});

test('declared counts: a device entry applies to its device, one without a device to all, and a global resource takes the largest', () => {
  const { limiter } = setUp([
    { name: 'R1', count: 3, device: 0 },
    { name: 'R1', count: 2 },
    { name: 'G', count: 5, device: 1 },
  ]);
  limiter.register([{ label: 'A', limit: limit([['R1', 1], ['G', 2, true]]) }]);
  assert.deepEqual(limiter.limits(), { 'device 0': { R1: 3 }, global: { G: 5 } });
});

test('a resource declared twice for the same device keeps the smaller count, as in Triton', () => {
  const { limiter } = setUp([
    { name: 'R1', count: 4 },
    { name: 'R1', count: 2 },
    { name: 'R2', count: 1, device: 0 },
    { name: 'R2', count: 6, device: 0 },
  ]);
  limiter.register([{ label: 'A', limit: limit([['R1', 1], ['R2', 1]]) }]);
  assert.deepEqual(limiter.limits(), { 'device 0': { R1: 2, R2: 1 } });
});

test('a resource both global and per device is refused', () => {
  const { limiter } = setUp();
  assert.throws(
    () => limiter.register([{ label: 'A', limit: limit([['R', 1, true]]) }, { label: 'B', limit: limit([['R', 1]]) }]),
    /^NereidError: Resource "R" is present as both global and device-specific resource in the model configuration\.$/,
  );
});

test('instances sharing a resource never hold more than its count', async () => {
  const { limiter, runDeferred } = setUp([{ name: 'R', count: 2 }]);
  const [a, b, c] = limiter.register([
    { label: 'A', limit: limit([['R', 1]]) },
    { label: 'B', limit: limit([['R', 1]]) },
    { label: 'C', limit: limit([['R', 2]]) },
  ]) as [RateLimiterRegistration, RateLimiterRegistration, RateLimiterRegistration];
  const granted: string[] = [];
  void a.acquire().then(() => granted.push('A'));
  void c.acquire().then(() => granted.push('C'));
  void b.acquire().then(() => granted.push('B'));
  await flush();
  // A holds 1 of 2; C, first in line, needs 2 and waits; B waits behind it though 1 is free.
  assert.deepEqual(granted, ['A']);
  a.release();
  runDeferred();
  await flush();
  assert.deepEqual(granted, ['A', 'C']);
  c.release();
  runDeferred();
  await flush();
  assert.deepEqual(granted, ['A', 'C', 'B']);
});

test('with one resource, priority 2 gets half the turns of priority 1 (executions × priority, lowest first)', async () => {
  const { limiter, runDeferred } = setUp();
  const [fast, slow] = limiter.register([
    { label: 'fast', limit: limit([['R', 1, true]], 1) },
    { label: 'slow', limit: limit([['R', 1, true]], 2) },
  ]) as [RateLimiterRegistration, RateLimiterRegistration];
  const order: string[] = [];
  // Each instance always has more work: it asks again as soon as it has released.
  const run = async (name: string, registration: RateLimiterRegistration, times: number): Promise<void> => {
    for (let i = 0; i < times; i++) {
      await registration.acquire();
      order.push(name);
      await flush();
      registration.release();
    }
  };
  const done = Promise.all([run('fast', fast, 8), run('slow', slow, 4)]);
  for (let i = 0; i < 30; i++) {
    await flush();
    runDeferred();
  }
  await done;
  // Scaled priorities before each turn (fast, slow): 0 0, 1 0, 1 2, 2 2 (tie: slow asked first), 2 4,
  // 3 4, 4 4 (slow), 4 6, 5 6: six turns to three.
  assert.deepEqual(order.slice(0, 9), ['fast', 'slow', 'fast', 'slow', 'fast', 'fast', 'slow', 'fast', 'fast']);
});

test('an unregistered instance is refused: its waiting acquire rejects and it takes nothing more', async () => {
  const { limiter } = setUp();
  const [a, b] = limiter.register([
    { label: 'm/A', limit: limit([['R', 1]]) },
    { label: 'm/B', limit: limit([['R', 1]]) },
  ]) as [RateLimiterRegistration, RateLimiterRegistration];
  await a.acquire();
  const waiting = b.acquire();
  b.unregister();
  await assert.rejects(waiting, /^NereidError: instance 'm\/B' was unloaded before the rate limiter gave it its resources$/);
  await assert.rejects(b.acquire(), /unloaded/);
});
