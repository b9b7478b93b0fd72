import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Registry } from 'prom-client';
import { NereidError } from '../kernel/errors.js';
import { CustomMetrics } from './custom-metrics.js';

const lines = async (registry: Registry): Promise<string[]> => (await registry.metrics()).split('\n').filter((line) => line !== '');

test('two scopes with the same family and labels share one series; it leaves the registry with the last holder', async () => {
  const registry = new Registry();
  const metrics = new CustomMetrics(registry);
  const [first, second] = [metrics.scope(), metrics.scope()];
  const a = first.createMetric(first.createFamily('jobs', 'Jobs done', 'counter'), { model: 'm' }, undefined);
  const b = second.createMetric(second.createFamily('jobs', 'Jobs done', 'counter'), { model: 'm' }, undefined);
  first.increment(a, 2);
  second.increment(b, 3);
  assert.equal(first.value(a), 5);
  assert.deepEqual(await lines(registry), ['# HELP jobs Jobs done', '# TYPE jobs counter', 'jobs{model="m"} 5']);
  first.close();
  assert.equal(second.value(b), 5);
  second.close();
  assert.deepEqual(await lines(registry), []);
});

test('a histogram renders its buckets cumulatively with +Inf, _sum and _count', async () => {
  const registry = new Registry();
  const scope = new CustomMetrics(registry).scope();
  const id = scope.createMetric(scope.createFamily('latency_ms', 'Latency', 'histogram'), {}, [1, 5]);
  for (const value of [0.5, 2, 9]) scope.observe(id, value);
  assert.deepEqual(await lines(registry), [
    '# HELP latency_ms Latency',
    '# TYPE latency_ms histogram',
    'latency_ms_bucket{le="1"} 1',
    'latency_ms_bucket{le="5"} 2',
    'latency_ms_bucket{le="+Inf"} 3',
    'latency_ms_sum 11.5',
    'latency_ms_count 3',
  ]);
});

test("Triton's refusals: another kind under a taken name, a server metric's name, bad buckets, a deleted family's metrics", () => {
  const registry = new Registry();
  registry.registerMetric({ name: 'nv_inference_count', get: () => ({}) } as never);
  const scope = new CustomMetrics(registry).scope();
  const family = scope.createFamily('queue', 'Queue', 'gauge');
  assert.throws(() => scope.createFamily('queue', 'Queue', 'counter'), /^NereidError: Family name already exists with different type/);
  assert.throws(() => scope.createFamily('nv_inference_count', 'x', 'counter'), new NereidError('ALREADY_EXISTS', "metric family 'nv_inference_count' is one of the server's own metrics; choose another name"));
  assert.throws(() => scope.createFamily('bad-name', 'x', 'gauge'), /invalid metric family name 'bad-name'/);
  assert.throws(() => scope.createMetric(family, {}, [1]), new NereidError('INVALID_ARG', 'Unexpected args found in gauge Metric constructor.'));
  const histogram = scope.createFamily('sizes', 'Sizes', 'histogram');
  assert.throws(() => scope.createMetric(histogram, {}, [5, 1]), /must be finite numbers in increasing order/);
  const metric = scope.createMetric(family, { queue: 'a' }, undefined);
  scope.deleteFamily(family);
  assert.throws(() => scope.set(metric, 1), new NereidError('INTERNAL', 'Could not set metric value. Metric has been invalidated.'));
});
