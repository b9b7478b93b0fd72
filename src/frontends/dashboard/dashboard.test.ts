import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { test } from 'node:test';
import { ModelStatistics } from '../../metrics/model-statistics.js';
import type { RepositoryIndexEntry } from '../../protocol/repository-index.js';
import { type AccessPolicy, OPEN_ACCESS } from '../access-policy.js';
import { AuthToken } from '../auth-token.js';
import { Dashboard, isDashboardPath } from './dashboard.js';
import type { DashboardFrame } from './dashboard-frame.js';
import { DashboardSampler } from './dashboard-sampler.js';

const INDEX: RepositoryIndexEntry[] = [
  { name: 'simple', version: '1', state: 'READY', reason: '' },
  { name: 'broken', version: '1', state: 'UNAVAILABLE', reason: 'failed to load: not an ONNX model' },
];

function dashboard(access: AccessPolicy = OPEN_ACCESS): Dashboard {
  // As a server has them: the READY version's statistics.
  const server = { modelStatistics: () => [new ModelStatistics('simple', 1).snapshot()], repositoryIndex: () => INDEX };
  return new Dashboard({ server, controlMode: 'explicit', intervalMs: 60_000 }, access);
}

const request = (path: string, headers: Record<string, string> = {}, method = 'GET'): IncomingMessage & { socket: EventEmitter } =>
  ({ method, url: path, headers, socket: new EventEmitter() }) as unknown as IncomingMessage & { socket: EventEmitter };

const text = (chunk: Uint8Array | undefined): string => Buffer.from(chunk ?? []).toString('utf8');

test('the stream sends a frame at once and stops, timer and all, when the client goes or the server stops', async () => {
  const board = dashboard();
  const req = request('/dashboard/events');
  const reply = await board.handle(req, '/dashboard/events');
  assert.equal(reply.headers?.['content-type'], 'text/event-stream');
  const stream = reply.stream![Symbol.asyncIterator]();
  assert.equal(text((await stream.next()).value), 'retry: 120000\n\n');
  const event = text((await stream.next()).value);
  assert.match(event, /^event: frame\ndata: .+\n\n$/);
  const frame = JSON.parse(event.slice('event: frame\ndata: '.length)) as DashboardFrame;
  assert.equal(frame.controlMode, 'explicit');
  assert.equal(frame.intervalMs, 0);
  assert.deepEqual(frame.models, [
    { name: 'simple', version: '1', state: 'READY' },
    { name: 'broken', version: '1', state: 'UNAVAILABLE', reason: 'failed to load: not an ONNX model' },
  ]);
  assert.equal(frame.server.loadedModelCount, 1);
  assert.equal(board.streamCount, 1);
  const next = stream.next();
  req.socket.emit('close');
  assert.deepEqual(await next, { value: undefined, done: true });
  assert.equal(board.streamCount, 0);

  const other = (await board.handle(request('/dashboard/events'), '/dashboard/events')).stream![Symbol.asyncIterator]();
  await other.next();
  await other.next();
  const pending = other.next();
  board.close();
  assert.deepEqual(await pending, { value: undefined, done: true });
  assert.equal(board.streamCount, 0);
});

test('the stream asks for what the statistics and the repository index ask for; the log lines what logging asks for', async () => {
  const board = dashboard({
    restrictedFeatures: { statistics: { key: 'admin-key', value: 'secret' }, logging: { key: 'log-key', value: 'l' } },
    authToken: new AuthToken('t0ken'),
  });
  assert.throws(() => board.handle(request('/dashboard/events'), '/dashboard/events'), { status: 'UNAUTHENTICATED' });
  const bearer = { authorization: 'Bearer t0ken' };
  assert.throws(() => board.handle(request('/dashboard/events', bearer), '/dashboard/events'), {
    status: 'PERMISSION_DENIED',
    message: "This API is restricted, expecting header 'admin-key'",
  });
  const allowed = await board.handle(request('/dashboard/events', { ...bearer, 'admin-key': 'secret' }), '/dashboard/events');
  assert.equal(allowed.status, 200);
  board.close();
  assert.throws(() => board.handle(request('/dashboard/logs?model=simple', bearer), '/dashboard/logs'), { status: 'PERMISSION_DENIED', message: "This API is restricted, expecting header 'log-key'" });
  const logs = await board.handle(request('/dashboard/logs?model=simple', { ...bearer, 'log-key': 'l' }), '/dashboard/logs');
  assert.deepEqual(JSON.parse(text(logs.chunks[0])), { model: 'simple', is_kept: false, lines: [] });
});

test('other paths and methods', async () => {
  const board = dashboard();
  assert.ok(isDashboardPath('/dashboard') && isDashboardPath('/dashboard/assets/app.js'));
  assert.ok(!isDashboardPath('/dashboards') && !isDashboardPath('/v2/dashboard'));
  assert.throws(() => board.handle(request('/dashboard/nothing'), '/dashboard/nothing'), { status: 'NOT_FOUND', message: "no endpoint at '/dashboard/nothing'; the dashboard is at /dashboard" });
  assert.throws(() => board.handle(request('/dashboard', {}, 'POST'), '/dashboard'), { status: 'UNSUPPORTED', reason: 'METHOD_NOT_ALLOWED' });
  assert.throws(() => board.handle(request('/dashboard/events', {}, 'HEAD'), '/dashboard/events'), { reason: 'METHOD_NOT_ALLOWED' });
  assert.throws(() => board.handle(request('/dashboard/logs'), '/dashboard/logs'), { status: 'INVALID_ARG', message: 'name the model: /dashboard/logs?model=NAME' });
  await assert.rejects(Promise.resolve(board.handle(request('/dashboard/assets/secret.txt'), '/dashboard/assets/secret.txt')), { status: 'NOT_FOUND' });
  await assert.rejects(Promise.resolve(board.handle(request('/dashboard/assets/../../package.json'), '/dashboard/assets/../../package.json')), { status: 'NOT_FOUND' });
});

test('--model-namespacing: two models of one name and version are two rows, each with its own rates, and two loaded models', async () => {
  const inNamespace = (namespace: string, successes: number): ModelStatistics => {
    const statistics = new ModelStatistics('m', 1, undefined, namespace);
    for (let i = 0; i < successes; i++) statistics.recordRequest('SUCCESS', 1000);
    return statistics;
  };
  const a = inNamespace('/repos/a', 10);
  const b = inNamespace('/repos/b', 0);
  const index: RepositoryIndexEntry[] = [
    { name: 'm', version: '1', state: 'READY', reason: '' },
    { name: 'm', version: '1', state: 'READY', reason: '' },
  ];
  const sampler = new DashboardSampler({ server: { modelStatistics: () => [a.snapshot(), b.snapshot()], repositoryIndex: () => index }, controlMode: 'none' });
  assert.equal((await sampler.frame()).server.loadedModelCount, 2);
  for (let i = 0; i < 5; i++) b.recordRequest('SUCCESS', 1000);
  await new Promise((resolve) => setTimeout(resolve, 20));
  const frame = await sampler.frame();
  assert.deepEqual(
    frame.traffic.map(({ successCount, requestsPerS }) => [successCount, requestsPerS > 0]),
    [
      [10, false],
      [5, true],
    ],
  );
});
