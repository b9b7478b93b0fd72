import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NereidError } from '../../core/index.js';
import { matchRoute } from './routes.js';

test('Triton paths map to routes, versions numeric, names percent-decoded', () => {
  assert.deepEqual(matchRoute('GET', '/v2'), { kind: 'server-metadata' });
  assert.deepEqual(matchRoute('GET', '/v2/health/ready'), { kind: 'health', check: 'ready' });
  assert.deepEqual(matchRoute('GET', '/v2/models/simple'), { kind: 'model', action: 'metadata', modelName: 'simple', modelVersion: undefined });
  assert.deepEqual(matchRoute('POST', '/v2/models/a%20b/versions/12/infer'), { kind: 'model', action: 'infer', modelName: 'a b', modelVersion: 12 });
  assert.deepEqual(matchRoute('HEAD', '/v2/models/m/versions/3/config'), { kind: 'model', action: 'config', modelName: 'm', modelVersion: 3 });
});

test('unknown paths are NOT_FOUND; wrong methods say which method the path takes', () => {
  assert.throws(() => matchRoute('GET', '/v3'), new NereidError('NOT_FOUND', "no endpoint at '/v3'; see the KServe v2 paths under /v2"));
  const wrongMethod = (method: string, path: string): NereidError | undefined => {
    try {
      matchRoute(method, path);
    } catch (error) {
      return error as NereidError;
    }
    return undefined;
  };
  for (const [method, path, allow] of [['POST', '/v2/health/live', 'GET'], ['GET', '/v2/models/m/infer', 'POST']] as const) {
    const error = wrongMethod(method, path);
    assert.ok(error instanceof NereidError);
    assert.deepEqual(
      { status: error.status, message: error.message, reason: error.reason, details: error.details },
      { status: 'UNSUPPORTED', message: `'${path}' takes ${allow}, not ${method}`, reason: 'METHOD_NOT_ALLOWED', details: { allow } },
    );
  }
});
