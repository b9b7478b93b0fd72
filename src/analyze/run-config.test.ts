import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyRunConfig, describeRunConfig, runConfigLabel, runConfigOf } from './run-config.js';

const SERVED = {
  name: 'digits',
  max_batch_size: 32,
  instance_group: [{ name: 'digits', kind: 'KIND_CPU', count: 2, gpus: [] }],
  dynamic_batching: { max_queue_delay_microseconds: '200', preserve_ordering: true, preferred_batch_size: [32] },
};

test('a served configuration reads as its run config', () => {
  // Triton's normalized [max_batch_size] reads as no preferred sizes.
  assert.deepEqual(runConfigOf(SERVED), { instanceCount: 2, maxBatchSize: 32, dynamicBatching: { maxQueueDelayUs: 200, preferredBatchSizes: [] } });
  assert.deepEqual(runConfigOf({ ...SERVED, dynamic_batching: { preferred_batch_size: [16, 32] } }).dynamicBatching, { maxQueueDelayUs: 0, preferredBatchSizes: [16, 32] });
  assert.deepEqual(runConfigOf({ name: 'plain' }), { instanceCount: 1, maxBatchSize: 0, dynamicBatching: undefined });
});

test('applying a run config changes only the searched fields', () => {
  const applied = applyRunConfig(SERVED, { instanceCount: 3, maxBatchSize: 16, dynamicBatching: { maxQueueDelayUs: 500, preferredBatchSizes: [] } });
  assert.deepEqual(applied, {
    name: 'digits',
    max_batch_size: 16,
    instance_group: [{ name: 'digits', kind: 'KIND_CPU', count: 3, gpus: [] }],
    dynamic_batching: { max_queue_delay_microseconds: 500, preserve_ordering: true },
  });
  const unbatched = applyRunConfig(SERVED, { instanceCount: 1, maxBatchSize: 32, dynamicBatching: undefined });
  assert.equal('dynamic_batching' in unbatched, false);
  assert.deepEqual(applyRunConfig({ name: 'x' }, { instanceCount: 2, maxBatchSize: 0, dynamicBatching: undefined }).instance_group, [{ count: 2 }]);
});

test('labels and words', () => {
  const config = { instanceCount: 2, maxBatchSize: 16, dynamicBatching: { maxQueueDelayUs: 500, preferredBatchSizes: [8, 16] } };
  assert.equal(runConfigLabel(config), 'i2 b16 d500 p8/16');
  assert.equal(describeRunConfig(config), '2 instances with batching up to 16, preferred batch sizes 8, 16 and a 500 µs delay');
  assert.equal(describeRunConfig({ ...config, dynamicBatching: { maxQueueDelayUs: 500, preferredBatchSizes: [] } }), '2 instances with batching up to 16 and a 500 µs delay');
  assert.equal(describeRunConfig({ instanceCount: 1, maxBatchSize: 8, dynamicBatching: undefined }), '1 instance without dynamic batching');
  assert.equal(runConfigLabel({ instanceCount: 3, maxBatchSize: 0, dynamicBatching: undefined }), 'i3');
});
