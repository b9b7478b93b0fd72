import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RouteError, matchRoute } from './routes.js';

test('Triton paths map to routes, versions numeric, names percent-decoded', () => {
  assert.deepEqual(matchRoute('GET', '/v2'), { kind: 'server-metadata' });
  assert.deepEqual(matchRoute('GET', '/v2/health/ready'), { kind: 'health', check: 'ready' });
  assert.deepEqual(matchRoute('GET', '/v2/models/simple'), { kind: 'model', action: 'metadata', modelName: 'simple', modelVersion: undefined });
  assert.deepEqual(matchRoute('POST', '/v2/models/a%20b/versions/12/infer'), { kind: 'model', action: 'infer', modelName: 'a b', modelVersion: 12 });
  assert.deepEqual(matchRoute('HEAD', '/v2/models/m/versions/3/config'), { kind: 'model', action: 'config', modelName: 'm', modelVersion: 3 });
});

test('unknown paths are 404, wrong methods 405 with Allow', () => {
  assert.throws(() => matchRoute('GET', '/v3'), (error: RouteError) => error.status === 404);
  assert.throws(() => matchRoute('POST', '/v2/health/live'), (error: RouteError) => error.status === 405 && error.allow === 'GET');
  assert.throws(() => matchRoute('GET', '/v2/models/m/infer'), (error: RouteError) => error.status === 405 && error.allow === 'POST');
});
