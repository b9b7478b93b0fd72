import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { test } from 'node:test';
import { CorsPolicy } from './cors-policy.js';
import type { Route } from './routes.js';

const request = (method: string, headers: Record<string, string> = {}): IncomingMessage => ({ method, url: '/v2/logging', headers }) as unknown as IncomingMessage;
const LOGGING: Route = { kind: 'logging' };
const INFER: Route = { kind: 'model', action: 'infer', modelName: 'simple', modelVersion: undefined };

test('control POSTs refuse the content types a page sends without a preflight; inference and GETs do not', () => {
  const policy = new CorsPolicy([]);
  for (const type of ['text/plain', 'Text/Plain; charset=UTF-8', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=b']) {
    assert.throws(() => policy.check(request('POST', { 'content-type': type }), LOGGING), { status: 'INVALID_ARG', reason: 'CROSS_ORIGIN_REFUSED' });
  }
  for (const headers of [{}, { 'content-type': 'application/json' }, { 'content-type': 'application/octet-stream' }] as Record<string, string>[]) {
    assert.doesNotThrow(() => policy.check(request('POST', headers), LOGGING));
  }
  assert.doesNotThrow(() => policy.check(request('POST', { 'content-type': 'text/plain' }), INFER));
  assert.doesNotThrow(() => policy.check(request('GET', { origin: 'https://evil.example' }), LOGGING));
  assert.deepEqual(policy.responseHeaders(request('GET', { origin: 'https://evil.example' })), {});
});

test('an Origin not allowed is refused on every POST and preflight; an allowed one is answered', () => {
  const policy = new CorsPolicy(['http://localhost:3000']);
  const message = "cross-origin request from 'https://evil.example' refused; the origins allowed are set with --http-cors-origins";
  assert.throws(() => policy.check(request('POST', { origin: 'https://evil.example' }), INFER), { message });
  assert.throws(() => policy.preflight(request('OPTIONS', { origin: 'https://evil.example' })), { message });
  assert.equal(policy.preflight(request('OPTIONS')), undefined);
  assert.equal(policy.preflight(request('POST', { origin: 'http://localhost:3000' })), undefined);
  assert.doesNotThrow(() => policy.check(request('POST', { origin: 'http://localhost:3000', 'content-type': 'text/plain' }), LOGGING));
  assert.deepEqual(policy.preflight(request('OPTIONS', { origin: 'http://localhost:3000', 'access-control-request-headers': 'content-type' })), {
    status: 204,
    chunks: [],
    headers: {
      'access-control-allow-origin': 'http://localhost:3000',
      'access-control-expose-headers': 'inference-header-content-length',
      vary: 'Origin',
      'access-control-allow-methods': 'GET, HEAD, POST',
      'access-control-allow-headers': 'content-type',
      'access-control-max-age': '600',
    },
  });
});

test('* allows any origin and answers with *', () => {
  const policy = new CorsPolicy(['*']);
  assert.doesNotThrow(() => policy.check(request('POST', { origin: 'null' }), LOGGING));
  assert.equal(policy.responseHeaders(request('GET', { origin: 'https://any.example' }))['access-control-allow-origin'], '*');
});
