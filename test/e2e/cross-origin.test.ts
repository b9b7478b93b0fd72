import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createLogger } from '../../src/logging/logger.js';
import { EXAMPLES, type TestServer, startTestServer } from '../helpers/server.js';

const UNLOAD = '/v2/repository/models/simple/unload';
const LOAD = '/v2/repository/models/simple/load';
const EVIL = 'https://evil.example';
const APP = 'http://localhost:3000';
const simpleRequest = {
  inputs: [
    { name: 'INPUT0', shape: [1, 16], datatype: 'INT32', data: Array(16).fill(1) },
    { name: 'INPUT1', shape: [1, 16], datatype: 'INT32', data: Array(16).fill(1) },
  ],
};
const refusedOrigin = (origin: string): { error: string } => ({
  error: `cross-origin request from '${origin}' refused; the origins allowed are set with --http-cors-origins`,
});
const refusedContentType = (type: string, path: string): { error: string } => ({
  error: `content type '${type}' is refused on POST ${path}: any web page can send it from a browser; send application/json (curl: -H 'Content-Type: application/json')`,
});

/** A logger the logging extension can configure, writing nothing. */
const quietLogger = (): ReturnType<typeof createLogger> => createLogger({ info: false, warning: false, error: false, verboseLevel: 0, format: 'default' });

async function assertSimpleReady(server: TestServer): Promise<void> {
  assert.equal((await server.get('/v2/models/simple/ready')).status, 200);
}

describe('issue 24: without --http-cors-origins, browser requests cannot change the server', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ modelRepositories: [EXAMPLES], modelControlMode: 'explicit', startupModels: ['simple'], logger: quietLogger() });
  });
  after(() => server.close());

  test('a text/plain POST to unload (no preflight in browsers) is refused, and the model stays loaded', async () => {
    const response = await fetch(server.url + UNLOAD, { method: 'POST', body: '{}' });
    assert.equal(response.status, 403);
    assert.deepEqual(await response.json(), refusedContentType('text/plain', UNLOAD));
    await assertSimpleReady(server);
  });

  test('form content types on the logging and repository routes are refused', async () => {
    for (const type of ['application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
      const response = await fetch(server.url + '/v2/logging', { method: 'POST', headers: { 'content-type': type }, body: '{"log_info":true}' });
      assert.equal(response.status, 403);
      assert.deepEqual(await response.json(), refusedContentType(type.split(';')[0]!, '/v2/logging'));
    }
    assert.equal(((await (await server.get('/v2/logging')).json()) as { log_info: boolean }).log_info, false);
    const index = await fetch(server.url + '/v2/repository/index', { method: 'POST', headers: { 'content-type': 'text/plain;charset=UTF-8' }, body: '{}' });
    assert.equal(index.status, 403);
    assert.deepEqual(await index.json(), refusedContentType('text/plain', '/v2/repository/index'));
  });

  test('a POST with an Origin is refused, JSON or not, inference included; its preflight too', async () => {
    const unload = await fetch(server.url + UNLOAD, { method: 'POST', headers: { origin: EVIL, 'content-type': 'application/json' }, body: '{}' });
    assert.equal(unload.status, 403);
    assert.deepEqual(await unload.json(), refusedOrigin(EVIL));
    assert.equal(unload.headers.get('access-control-allow-origin'), null);
    const infer = await fetch(server.url + '/v2/models/simple/infer', { method: 'POST', headers: { origin: EVIL, 'content-type': 'application/json' }, body: JSON.stringify(simpleRequest) });
    assert.equal(infer.status, 403);
    assert.deepEqual(await infer.json(), refusedOrigin(EVIL));
    const preflight = await fetch(server.url + UNLOAD, { method: 'OPTIONS', headers: { origin: EVIL, 'access-control-request-method': 'POST' } });
    assert.equal(preflight.status, 403);
    assert.deepEqual(await preflight.json(), refusedOrigin(EVIL));
    await assertSimpleReady(server);
  });

  test('GETs with an Origin are answered, without the headers that would let the page read them', async () => {
    const response = await fetch(server.url + '/v2/health/live', { headers: { origin: EVIL } });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('access-control-allow-origin'), null);
  });

  test("tritonclient's requests keep working: JSON or no content type, no Origin; curl's form-typed inference too", async () => {
    const unload = await fetch(server.url + UNLOAD, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.equal(unload.status, 200);
    const load = await fetch(server.url + LOAD, { method: 'POST' });
    assert.equal(load.status, 200);
    await assertSimpleReady(server);
    const infer = await fetch(server.url + '/v2/models/simple/infer', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: JSON.stringify(simpleRequest),
    });
    assert.equal(infer.status, 200);
    const options = await fetch(server.url + UNLOAD, { method: 'OPTIONS' });
    assert.equal(options.status, 405);
  });
});

describe('issue 24: --http-cors-origins lets the browser pages of the origins it names call the API', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ modelRepositories: [EXAMPLES], modelControlMode: 'explicit', startupModels: ['simple'], httpCorsOrigins: [APP], logger: quietLogger() });
  });
  after(() => server.close());

  test("an allowed origin's preflight is answered", async () => {
    const response = await fetch(server.url + UNLOAD, {
      method: 'OPTIONS',
      headers: { origin: APP, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
    });
    assert.equal(response.status, 204);
    assert.deepEqual(
      Object.fromEntries([...response.headers].filter(([name]) => name.startsWith('access-control-') || name === 'vary')),
      {
        'access-control-allow-origin': APP,
        'access-control-allow-methods': 'GET, HEAD, POST',
        'access-control-allow-headers': 'content-type',
        'access-control-expose-headers': 'inference-header-content-length',
        'access-control-max-age': '600',
        vary: 'Origin',
      },
    );
  });

  test('an allowed origin unloads, loads, infers and changes the log settings, and may read the replies', async () => {
    const unload = await fetch(server.url + UNLOAD, { method: 'POST', headers: { origin: APP, 'content-type': 'application/json' }, body: '{}' });
    assert.equal(unload.status, 200);
    assert.equal(unload.headers.get('access-control-allow-origin'), APP);
    assert.equal(unload.headers.get('vary'), 'Origin');
    assert.equal((await fetch(server.url + LOAD, { method: 'POST', headers: { origin: APP } })).status, 200);
    const infer = await fetch(server.url + '/v2/models/simple/infer', { method: 'POST', headers: { origin: APP, 'content-type': 'application/json' }, body: JSON.stringify(simpleRequest) });
    assert.equal(infer.status, 200);
    assert.equal(infer.headers.get('access-control-allow-origin'), APP);
    const logging = await fetch(server.url + '/v2/logging', { method: 'POST', headers: { origin: APP, 'content-type': 'text/plain' }, body: '{"log_verbose_level":0}' });
    assert.equal(logging.status, 200);
    const ready = await fetch(server.url + '/v2/health/live', { headers: { origin: APP } });
    assert.equal(ready.headers.get('access-control-allow-origin'), APP);
  });

  test('other origins are still refused, and so is a text/plain POST without an Origin', async () => {
    const unload = await fetch(server.url + UNLOAD, { method: 'POST', headers: { origin: EVIL, 'content-type': 'application/json' }, body: '{}' });
    assert.equal(unload.status, 403);
    assert.deepEqual(await unload.json(), refusedOrigin(EVIL));
    const preflight = await fetch(server.url + UNLOAD, { method: 'OPTIONS', headers: { origin: 'http://localhost:3001', 'access-control-request-method': 'POST' } });
    assert.equal(preflight.status, 403);
    const plain = await fetch(server.url + UNLOAD, { method: 'POST', body: '{}' });
    assert.equal(plain.status, 403);
    await assertSimpleReady(server);
  });
});

test('issue 24: --http-cors-origins=* allows any origin', async () => {
  const server = await startTestServer({ modelRepositories: [EXAMPLES], modelControlMode: 'explicit', startupModels: ['simple'], httpCorsOrigins: ['*'], logger: quietLogger() });
  try {
    const response = await fetch(server.url + '/v2/logging', { method: 'POST', headers: { origin: EVIL, 'content-type': 'application/json' }, body: '{}' });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('access-control-allow-origin'), '*');
  } finally {
    await server.close();
  }
});
