import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RESTRICTED_CATEGORIES } from '../protocol/restricted-category.js';
import { parseRestrictedFeatures } from './restricted-features.js';

const HTTP = { optionName: 'http-restricted-api', featureType: 'api', keyPrefix: '' } as const;
const GRPC = { optionName: 'grpc-restricted-protocol', featureType: 'protocol', keyPrefix: 'triton-grpc-protocol-' } as const;
const fail = (message: string): Error => new Error(message);

test("Triton's nine categories, in its order", () => {
  assert.deepEqual(RESTRICTED_CATEGORIES, ['health', 'metadata', 'inference', 'shared-memory', 'model-config', 'model-repository', 'statistics', 'trace', 'logging']);
});

test('each group gives its categories one key and value; gRPC keys get the triton-grpc-protocol- prefix', () => {
  assert.deepEqual(parseRestrictedFeatures(['inference,health:infer-key=infer-value', 'model-repository:Admin-Key=a=b'], HTTP, fail), {
    inference: { key: 'infer-key', value: 'infer-value' },
    health: { key: 'infer-key', value: 'infer-value' },
    'model-repository': { key: 'Admin-Key', value: 'a=b' },
  });
  assert.deepEqual(parseRestrictedFeatures(['logging:admin=secret'], GRPC, fail), { logging: { key: 'triton-grpc-protocol-admin', value: 'secret' } });
  assert.deepEqual(parseRestrictedFeatures([], HTTP, fail), {});
});

test("malformed values, unknown categories and a category in two groups fail with Triton's messages", () => {
  for (const entry of ['inference', 'inference:key', ':key=value', 'inference:=value', 'inference:key=', 'inference=key:value']) {
    assert.throws(() => parseRestrictedFeatures([entry], HTTP, fail), {
      message: `--http-restricted-api option format is '<config name>:<setting>=<value>'. Got ${entry}`,
    });
  }
  assert.throws(() => parseRestrictedFeatures(['inference,infer:k=v'], HTTP, fail), {
    message: "unknown restricted api 'infer'. The categories are health, metadata, inference, shared-memory, model-config, model-repository, statistics, trace, logging",
  });
  assert.throws(() => parseRestrictedFeatures(['health:a=1', 'metadata,health:b=2'], GRPC, fail), {
    message: "restricted protocol 'health' can not be specified in multiple config groups",
  });
});
