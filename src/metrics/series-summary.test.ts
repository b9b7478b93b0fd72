import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SeriesSummary } from './series-summary.js';

const WINDOW = { percentiles: [0.5], maxAgeSeconds: 60, ageBuckets: 5 };
const lines = async (family: SeriesSummary): Promise<string[]> =>
  (await family.get()).values.map(({ metricName, labels, value }) => `${metricName ?? family.name}${JSON.stringify(labels)} ${value}`);

test('a series is there from its add, count 0, with its labels before the quantile', async () => {
  const family = new SeriesSummary('latency_us', 'Latency', WINDOW);
  family.add({ model: 'm', version: '1' });
  assert.deepEqual(await lines(family), [
    'latency_us{"model":"m","version":"1","quantile":0.5} 0',
    'latency_us_sum{"model":"m","version":"1"} 0',
    'latency_us_count{"model":"m","version":"1"} 0',
  ]);
});

test('a reloaded version adds its labels before the old one removes them: the series stays, with its observations, until both are gone', async () => {
  const family = new SeriesSummary('latency_us', 'Latency', WINDOW);
  const old = family.add({ model: 'm', version: '1' });
  old.observe(4);
  const reloaded = family.add({ model: 'm', version: '1' });
  reloaded.observe(6);
  family.remove({ model: 'm', version: '1' });
  assert.deepEqual(await lines(family), [
    'latency_us{"model":"m","version":"1","quantile":0.5} 5',
    'latency_us_sum{"model":"m","version":"1"} 10',
    'latency_us_count{"model":"m","version":"1"} 2',
  ]);
  family.remove({ model: 'm', version: '1' });
  assert.deepEqual(await lines(family), []);
});
