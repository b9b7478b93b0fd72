import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Registry } from 'prom-client';
import { SeriesHistogram } from './series-histogram.js';

async function exposition(family: SeriesHistogram): Promise<string[]> {
  const registry = new Registry();
  registry.registerMetric(family as never);
  return (await registry.metrics()).trim().split('\n');
}

test("writes each series as prometheus-cpp does: count, sum, then cumulative buckets with le after the labels, any bounds Triton takes", async () => {
  const family = new SeriesHistogram('h_ms', 'A histogram');
  const series = family.add({ model: 'm', version: '1' }, [2.5, -1, 0, 1, 1]);
  for (const value of [-3, 0, 2, 1001]) series.observe(value);
  assert.deepEqual(await exposition(family), [
    '# HELP h_ms A histogram',
    '# TYPE h_ms histogram',
    'h_ms_count{model="m",version="1"} 4',
    'h_ms_sum{model="m",version="1"} 1000',
    'h_ms_bucket{model="m",version="1",le="-1"} 1',
    'h_ms_bucket{model="m",version="1",le="0"} 2',
    'h_ms_bucket{model="m",version="1",le="1"} 2',
    'h_ms_bucket{model="m",version="1",le="2.5"} 3',
    'h_ms_bucket{model="m",version="1",le="+Inf"} 4',
  ]);
});

test('a series stays until its last holder removes it (a version reloaded adds it before the old one goes)', async () => {
  const family = new SeriesHistogram('h_ms', 'A histogram');
  const labels = { model: 'm', version: '1' };
  family.add(labels, [1]).observe(5);
  family.add(labels, [1]);
  family.remove(labels);
  assert.ok((await exposition(family)).includes('h_ms_count{model="m",version="1"} 1'));
  family.remove(labels);
  assert.deepEqual(await exposition(family), ['# HELP h_ms A histogram', '# TYPE h_ms histogram']);
});
