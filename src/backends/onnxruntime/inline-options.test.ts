import assert from 'node:assert/strict';
import { test } from 'node:test';
import { create } from '@bufbuild/protobuf';
import { ModelConfigSchema } from '../../protocol/gen/model_config_pb.js';
import { NEVER_INLINE } from './inline-guard.js';
import { inlineOptionsOf } from './inline-options.js';

const configOf = (inlineBatches: string | undefined, isBatched = true) =>
  create(ModelConfigSchema, {
    name: 'm',
    ...(isBatched ? { schedulingChoice: { case: 'dynamicBatching', value: {} } } : {}),
    ...(inlineBatches !== undefined ? { parameters: { inline_batches: { stringValue: inlineBatches } } } : {}),
  });

test('an instance behind a dynamic batcher stays on its thread unless inline_batches is "true"', () => {
  assert.deepEqual(inlineOptionsOf(configOf(undefined)), { inlinePolicy: NEVER_INLINE });
  assert.deepEqual(inlineOptionsOf(configOf('false')), { inlinePolicy: NEVER_INLINE });
  assert.deepEqual(inlineOptionsOf(configOf('true')), { isFedByBatcher: true });
});

test('an instance without a dynamic batcher is left to the inline guard, whatever inline_batches says', () => {
  assert.deepEqual(inlineOptionsOf(configOf(undefined, false)), {});
  assert.deepEqual(inlineOptionsOf(configOf('true', false)), {});
});

test('inline_batches other than "true" or "false" fails the load, with or without a dynamic batcher', () => {
  for (const isBatched of [true, false]) {
    assert.throws(() => inlineOptionsOf(configOf('yes', isBatched)), {
      name: 'NereidError',
      status: 'INVALID_ARG',
      message: "model 'm': parameter inline_batches is 'yes'; expected 'true' or 'false'",
    });
  }
});
