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

test("a page of this server (the dashboard) may POST when the host it was asked for is an address; a name may be a rebinding attacker's", () => {
  const policy = new CorsPolicy([]);
  for (const host of ['127.0.0.1:8000', 'localhost:8000', '[::1]:8000', '10.0.0.5:8000']) {
    assert.doesNotThrow(() => policy.check(request('POST', { origin: `http://${host}`, host, 'content-type': 'application/json' }), LOGGING), host);
  }
  assert.doesNotThrow(() => policy.check(request('POST', { origin: 'https://127.0.0.1:8000', host: '127.0.0.1:8000' }), INFER));
  const refusals: Array<[origin: string, host: string]> = [
    ['http://evil.example:8000', 'evil.example:8000'],
    ['http://127.0.0.1:3000', '127.0.0.1:8000'],
    ['http://127.0.0.1:8000', 'localhost:8000'],
  ];
  for (const [origin, host] of refusals) {
    assert.throws(() => policy.check(request('POST', { origin, host }), LOGGING), { reason: 'CROSS_ORIGIN_REFUSED' }, origin);
  }
  assert.throws(() => policy.check(request('POST', { origin: 'http://127.0.0.1:8000' }), LOGGING), { reason: 'CROSS_ORIGIN_REFUSED' });
});
