import assert from 'node:assert/strict';
import { test } from 'node:test';
import { batchSizesUpTo, climbRunConfigs, everyRunConfig, nearestCell, runConfigAt, searchSpaceOf } from './config-search.js';
import { type RunConfig, runConfigLabel } from './run-config.js';

const LIMITS = { maxInstanceCount: 3, maxModelBatchSize: 16 };

test('batch sizes are powers of two from 2, and the maximum', () => {
  assert.deepEqual(batchSizesUpTo(16), [2, 4, 8, 16]);
  assert.deepEqual(batchSizesUpTo(12), [2, 4, 8, 12]);
  assert.deepEqual(batchSizesUpTo(1), []);
});

test('brute mode lists every distinct configuration once', () => {
  const configs = everyRunConfig(searchSpaceOf(32, true, LIMITS));
  const labels = configs.map(runConfigLabel);
  assert.equal(new Set(labels).size, labels.length);
  // Per instance count: one without dynamic batching, and 4 batch sizes × 5 batching choices.
  assert.equal(configs.length, 3 * (1 + 4 * 5));
  assert.ok(labels.includes('i1 b32 off'));
  assert.ok(labels.includes('i3 b16 d500 p8/16'));
  assert.ok(labels.includes('i2 b4 d100'));
});

test('a model that cannot batch gets instance counts only', () => {
  const configs = everyRunConfig(searchSpaceOf(0, false, LIMITS));
  assert.deepEqual(configs.map(runConfigLabel), ['i1', 'i2', 'i3']);
  assert.deepEqual(everyRunConfig(searchSpaceOf(8, false, LIMITS)).map(runConfigLabel), ['i1 b8 off', 'i2 b8 off', 'i3 b8 off']);
});

test('the quick search starts at the model\'s own configuration', () => {
  const space = searchSpaceOf(32, true, LIMITS);
  const own: RunConfig = { instanceCount: 2, maxBatchSize: 32, dynamicBatching: { maxQueueDelayUs: 200, preferredBatchSizes: [] } };
  assert.equal(runConfigLabel(runConfigAt(space, nearestCell(space, own))), 'i2 b16 d100');
  assert.equal(runConfigLabel(runConfigAt(space, nearestCell(space, { ...own, dynamicBatching: undefined }))), 'i2 b32 off');
});

test('the quick search climbs to the best configuration, measuring each once and far fewer than brute mode', async () => {
  const space = searchSpaceOf(32, true, { maxInstanceCount: 5, maxModelBatchSize: 128 });
  // A smooth landscape whose peak is 4 instances, batch size 32, a 500 µs delay.
  const scoreOf = (config: RunConfig): number => {
    const delay = config.dynamicBatching?.maxQueueDelayUs ?? -1;
    return -Math.abs(config.instanceCount - 4) - Math.abs(Math.log2(config.maxBatchSize) - 5) - (config.dynamicBatching === undefined ? 5 : Math.abs(Math.log10(delay + 1) - Math.log10(501))) - (config.dynamicBatching?.preferredBatchSizes.length ?? 0);
  };
  const measured: string[] = [];
  await climbRunConfigs({
    space,
    start: nearestCell(space, { instanceCount: 1, maxBatchSize: 32, dynamicBatching: undefined }),
    measure: async (config) => {
      measured.push(runConfigLabel(config));
      return scoreOf(config);
    },
    compare: (a, b) => a - b,
    maxConfigs: 40,
  });
  assert.equal(new Set(measured).size, measured.length, 'no configuration measured twice');
  assert.ok(measured.includes('i4 b32 d500'), `reached the peak: ${measured.join(', ')}`);
  assert.ok(measured.length < everyRunConfig(space).length / 4, `${measured.length} measured`);
});

test('the quick search stops at its budget', async () => {
  const space = searchSpaceOf(32, true, LIMITS);
  let count = 0;
  await climbRunConfigs({ space, start: { instance: 0, batchSize: 0, batching: 0 }, measure: async () => ++count, compare: (a, b) => a - b, maxConfigs: 5 });
  assert.equal(count, 5);
});
