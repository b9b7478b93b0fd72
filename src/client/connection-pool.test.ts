import assert from 'node:assert/strict';
import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { describe, test, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { ConnectionPool, type ConnectionPoolOptions, type RawRequest } from './connection-pool.js';
import type { ParsedResponse } from './http1-parser.js';

/** A request the test server has read in full and not answered yet. */
interface HeldRequest {
  readonly request: IncomingMessage;
  readonly body: Buffer;
  readonly response: ServerResponse;
}

/**
 * A real node:http server on port 0. `onRequest` answers each request; by default the server echoes
 * `<method> <path> <body>` with the client port in `x-client-port`, which tells the connections apart.
 */
async function startServer(t: TestContext, onRequest: (held: HeldRequest) => void = answer) {
  const sockets: Socket[] = [];
  const server = createServer({ keepAliveTimeout: 60_000 }, (request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => onRequest({ request, body: Buffer.concat(chunks), response }));
  });
  server.on('connection', (socket) => sockets.push(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  return { port: (server.address() as AddressInfo).port, sockets };
}

function answer({ request, body, response }: HeldRequest, headers: Record<string, string> = {}): void {
  const text = Buffer.concat([Buffer.from(`${request.method} ${request.url} `), body]);
  response.writeHead(200, { 'content-length': String(text.byteLength), 'x-client-port': String(request.socket.remotePort), ...headers });
  response.end(text);
}

function createPool(t: TestContext, port: number, options: Partial<ConnectionPoolOptions> = {}): ConnectionPool {
  const pool = new ConnectionPool({ host: '127.0.0.1', port, maxSockets: Infinity, idleTimeoutMs: 1000, ...options });
  t.after(() => pool.close(new Error('the test is over')));
  return pool;
}

const get = (path: string): RawRequest => ({ head: `GET ${path} HTTP/1.1\r\nHost: localhost\r\n\r\n`, body: [], bodyByteLength: 0 });

function post(path: string, body: readonly Uint8Array[]): RawRequest {
  const bodyByteLength = body.reduce((sum, chunk) => sum + chunk.byteLength, 0);
  return { head: `POST ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Length: ${bodyByteLength}\r\n\r\n`, body, bodyByteLength };
}

const text = (response: ParsedResponse) => response.body.toString('latin1');
const clientPort = (response: ParsedResponse) => Number(response.headers['x-client-port']);

/** Resolves once `condition` holds, checking every few milliseconds. */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await sleep(5);
}

describe('the HTTP/1.1 connection pool', () => {
  test('one connection carries sequential requests: no body, a small body, a large body in chunks', async (t) => {
    const server = await startServer(t);
    const pool = createPool(t, server.port);

    const first = await pool.send(get('/v2/health/ready')).response;
    assert.equal(first.status, 200);
    assert.equal(text(first), 'GET /v2/health/ready ');
    assert.equal(first.isReusable, true);

    const small = await pool.send(post('/small', [Buffer.from('ab'), new Uint8Array([0x63, 0x64])])).response;
    assert.equal(text(small), 'POST /small abcd');

    const large = [Buffer.alloc(20_000, 'x'), Buffer.alloc(5_000, 'y')];
    const big = await pool.send(post('/large', large)).response;
    assert.equal(text(big), `POST /large ${'x'.repeat(20_000)}${'y'.repeat(5_000)}`);

    assert.equal(server.sockets.length, 1);
    assert.equal(new Set([first, small, big].map(clientPort)).size, 1);
  });

  test('concurrent requests open connections up to maxSockets; beyond it they wait for a free one', async (t) => {
    const held: HeldRequest[] = [];
    const server = await startServer(t, (request) => held.push(request));
    const pool = createPool(t, server.port, { maxSockets: 2 });

    const responses = ['/a', '/b', '/c', '/d'].map((path) => pool.send(get(path)).response);
    await until(() => held.length === 2);
    await sleep(50);
    assert.equal(held.length, 2, 'two requests reach the server, two wait');
    assert.equal(server.sockets.length, 2);
    assert.deepEqual(held.map((h) => h.request.url).sort(), ['/a', '/b']);

    for (const request of held.splice(0)) answer(request);
    await until(() => held.length === 2);
    assert.deepEqual(held.map((h) => h.request.url).sort(), ['/c', '/d']);
    for (const request of held.splice(0)) answer(request);

    const done = await Promise.all(responses);
    assert.deepEqual(done.map(text), ['GET /a ', 'GET /b ', 'GET /c ', 'GET /d ']);
    assert.equal(server.sockets.length, 2, 'the waiting requests went on the same two connections');
    assert.equal(new Set(done.map(clientPort)).size, 2);
  });

  test('a connection the server closes is replaced: after Connection: close, and when closed while idle', async (t) => {
    let isClosing = true;
    const server = await startServer(t, (request) => answer(request, isClosing ? { connection: 'close' } : {}));
    const pool = createPool(t, server.port);

    const first = await pool.send(get('/first')).response;
    assert.equal(first.isReusable, false);
    isClosing = false;
    const second = await pool.send(get('/second')).response;
    assert.equal(text(second), 'GET /second ');
    assert.equal(server.sockets.length, 2);
    assert.notEqual(clientPort(second), clientPort(first));

    // The server drops the idle connection; the pool notices its end and opens another.
    server.sockets[1]!.destroy();
    await sleep(50);
    const third = await pool.send(get('/third')).response;
    assert.equal(text(third), 'GET /third ');
    assert.equal(server.sockets.length, 3);
    assert.notEqual(clientPort(third), clientPort(second));
  });

  test('an idle connection is closed after idleTimeoutMs', async (t) => {
    const server = await startServer(t);
    const pool = createPool(t, server.port, { idleTimeoutMs: 100 });

    const first = await pool.send(get('/first')).response;
    const socket = server.sockets[0]!;
    await sleep(20);
    assert.equal(clientPort(await pool.send(get('/again')).response), clientPort(first), 'used again before the timeout');
    await until(() => socket.destroyed);
    const later = await pool.send(get('/later')).response;
    assert.equal(server.sockets.length, 2);
    assert.notEqual(clientPort(later), clientPort(first));
  });

  test('cancel() of a request in flight destroys its connection only', async (t) => {
    const held: HeldRequest[] = [];
    const server = await startServer(t, (request) => held.push(request));
    const pool = createPool(t, server.port);

    const cancelled = pool.send(get('/cancelled'));
    const kept = pool.send(get('/kept'));
    await until(() => held.length === 2);
    const stop = new Error('the caller gave up');
    cancelled.cancel(stop);
    await assert.rejects(cancelled.response, stop);

    const cancelledSocket = held.find((h) => h.request.url === '/cancelled')!.request.socket;
    const keptRequest = held.find((h) => h.request.url === '/kept')!;
    await until(() => cancelledSocket.destroyed);
    assert.equal(keptRequest.request.socket.destroyed, false);
    answer(keptRequest);
    const keptResponse = await kept.response;
    assert.equal(text(keptResponse), 'GET /kept ');
    kept.cancel(new Error('too late: a no-op'));

    const next = pool.send(get('/next'));
    await until(() => held.length === 3);
    answer(held[2]!);
    assert.equal(clientPort(await next.response), clientPort(keptResponse), 'the kept connection is reused');
    assert.equal(server.sockets.length, 2);
  });

  test('cancel() of a waiting request: it never reaches the server and the connection stays', async (t) => {
    const held: HeldRequest[] = [];
    const server = await startServer(t, (request) => held.push(request));
    const pool = createPool(t, server.port, { maxSockets: 1 });

    const first = pool.send(get('/first'));
    const waiting = pool.send(get('/waiting'));
    await until(() => held.length === 1);
    const stop = new Error('no longer wanted');
    waiting.cancel(stop);
    answer(held[0]!);
    const firstResponse = await first.response;
    await assert.rejects(waiting.response, stop);

    const next = pool.send(get('/next'));
    await until(() => held.length === 2);
    assert.equal(held[1]!.request.url, '/next');
    answer(held[1]!);
    assert.equal(clientPort(await next.response), clientPort(firstResponse));
    assert.equal(server.sockets.length, 1);
  });

  test('close() fails the exchanges in flight with its error and closes their connections', async (t) => {
    const held: HeldRequest[] = [];
    const server = await startServer(t, (request) => held.push(request));
    const pool = createPool(t, server.port);

    const inFlight = pool.send(get('/in-flight'));
    await until(() => held.length === 1);
    const closed = new Error('the client was closed');
    pool.close(closed);
    await assert.rejects(inFlight.response, closed);
    await until(() => held[0]!.request.socket.destroyed);
  });

  test('an unreachable server: every request fails with the connect error, waiting ones too', async (t) => {
    const free = createServer();
    await new Promise<void>((resolve) => free.listen(0, '127.0.0.1', resolve));
    const { port } = free.address() as AddressInfo;
    await new Promise((resolve) => free.close(resolve));
    const pool = createPool(t, port, { maxSockets: 1 });

    const refused = { code: 'ECONNREFUSED', syscall: 'connect', address: '127.0.0.1', port };
    const [first, second] = [pool.send(get('/first')), pool.send(get('/second'))];
    await assert.rejects(first.response, refused);
    await assert.rejects(second.response, refused);
    await assert.rejects(pool.send(post('/third', [Buffer.from('x')])).response, refused);
  });

  test('a response the server sends unasked, or a malformed one, fails the exchange', async (t) => {
    const server = await startServer(t, ({ request, response }) => {
      // Write raw bytes over the connection, past node:http's own framing.
      const raw = request.url === '/twice' ? 'HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n'.repeat(2) : 'HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n';
      response.socket!.write(raw);
    });
    const pool = createPool(t, server.port);

    await assert.rejects(pool.send(get('/twice')).response, { message: 'the server sent a response that no request asked for' });
    await assert.rejects(pool.send(get('/malformed')).response, { name: 'ResponseParseError', message: 'invalid Content-Length "x"' });
    assert.equal(server.sockets.length, 2, 'a failed connection is not used again');
  });

  test('a body read until the server closes the connection completes the exchange', async (t) => {
    const server = await startServer(t, ({ response }) => response.socket!.end('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nall of it'));
    const pool = createPool(t, server.port);

    const response = await pool.send(get('/until-close')).response;
    assert.deepEqual({ status: response.status, body: text(response), isReusable: response.isReusable }, { status: 200, body: 'all of it', isReusable: false });
  });

  test('the server closes the connection before the response is complete: the exchange fails', async (t) => {
    const server = await startServer(t, ({ request, response }) => {
      if (request.url === '/nothing') response.socket!.destroy();
      else response.socket!.end('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhalf');
    });
    const pool = createPool(t, server.port);

    await assert.rejects(pool.send(get('/nothing')).response, { message: 'the connection closed before the answer was complete' });
    await assert.rejects(pool.send(get('/half')).response, {
      name: 'ResponseParseError',
      message: 'the connection closed in the middle of a response',
    });
  });
});
