import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AuthToken } from '../auth-token.js';
import { categoryOfRoute, checkHttpAccess } from './access-check.js';
import { matchRoute } from './routes.js';

test("each HTTP endpoint is in Triton's category", () => {
  const categories = Object.fromEntries(
    [
      ['GET', '/v2'],
      ['GET', '/v2/health/live'],
      ['GET', '/v2/health/ready'],
      ['GET', '/v2/models/m/ready'],
      ['GET', '/v2/models/m'],
      ['GET', '/v2/models/m/versions/1'],
      ['POST', '/v2/models/m/infer'],
      ['POST', '/v2/models/m/generate'],
      ['POST', '/v2/models/m/generate_stream'],
      ['GET', '/v2/models/m/config'],
      ['GET', '/v2/models/stats'],
      ['GET', '/v2/models/m/stats'],
      ['POST', '/v2/repository/index'],
      ['POST', '/v2/repository/models/m/load'],
      ['POST', '/v2/repository/models/m/unload'],
      ['GET', '/v2/logging'],
    ].map(([method, path]) => [`${method} ${path}`, categoryOfRoute(matchRoute(method!, path!))]),
  );
  assert.deepEqual(categories, {
    'GET /v2': 'metadata',
    'GET /v2/health/live': 'health',
    'GET /v2/health/ready': 'health',
    'GET /v2/models/m/ready': 'health',
    'GET /v2/models/m': 'metadata',
    'GET /v2/models/m/versions/1': 'metadata',
    'POST /v2/models/m/infer': 'inference',
    'POST /v2/models/m/generate': 'inference',
    'POST /v2/models/m/generate_stream': 'inference',
    'GET /v2/models/m/config': 'model-config',
    'GET /v2/models/stats': 'statistics',
    'GET /v2/models/m/stats': 'statistics',
    'POST /v2/repository/index': 'model-repository',
    'POST /v2/repository/models/m/load': 'model-repository',
    'POST /v2/repository/models/m/unload': 'model-repository',
    'GET /v2/logging': 'logging',
  });
});

test('the token comes first, then the restriction; server health needs no token', () => {
  const policy = { restrictedFeatures: { inference: { key: 'Infer-Key', value: 'v' } }, authToken: new AuthToken('t') };
  const infer = matchRoute('POST', '/v2/models/m/infer');
  assert.throws(() => checkHttpAccess(infer, { 'infer-key': 'v' }, policy), { status: 'UNAUTHENTICATED' });
  assert.throws(() => checkHttpAccess(infer, { authorization: 'Bearer t', 'infer-key': 'w' }, policy), {
    status: 'PERMISSION_DENIED',
    message: "This API is restricted, expecting header 'Infer-Key'",
  });
  checkHttpAccess(infer, { authorization: 'Bearer t', 'infer-key': 'v' }, policy);
  checkHttpAccess(matchRoute('GET', '/v2/health/ready'), {}, policy);
  assert.throws(() => checkHttpAccess(matchRoute('GET', '/v2/models/m/ready'), {}, policy), { status: 'UNAUTHENTICATED' });
});
