import assert from 'node:assert/strict';
import { once } from 'node:events';
import { type AddressInfo, type Server, type Socket, connect, createServer } from 'node:net';
import { after, test } from 'node:test';
import { Http1Lane, type Http1LaneOptions, type LaneRequest } from './http1-lane.js';

/** The lane on a real loopback server, answering every request with `replyBytes` bytes; it counts what it serves. */
async function laneServer(replyBytes: number, options: Partial<Http1LaneOptions> = {}): Promise<{ server: Server; port: number; served: LaneRequest[] }> {
  const served: LaneRequest[] = [];
  const reply = Buffer.alloc(replyBytes, 0x61);
  const lane = new Http1Lane({
    maxBodyBytes: 64 * 1024,
    keepAliveMs: 65_000,
    accepts: () => true,
    serve: (request) => {
      served.push(request);
      request.connection.respond(200, { 'content-type': 'text/plain' }, [reply]);
    },
    handOff: (socket) => socket.destroy(),
    abandoned: () => {},
    ...options,
  });
  const server = createServer((socket) => lane.accept(socket));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, port: (server.address() as AddressInfo).port, served };
}

const servers: Server[] = [];
const sockets: Socket[] = [];
after(() => {
  for (const socket of sockets) socket.destroy();
  for (const server of servers) server.close();
});

async function client(port: number): Promise<Socket> {
  const socket = connect(port, '127.0.0.1');
  sockets.push(socket);
  await once(socket, 'connect');
  return socket;
}

test('a client that sends and never reads is read no further once its replies back up', async () => {
  const { server, port, served } = await laneServer(64 * 1024);
  servers.push(server);
  const socket = await client(port);
  socket.pause();
  const requests = Buffer.from('GET /x HTTP/1.1\r\nHost: h\r\n\r\n'.repeat(1000));
  let sent = 0;
  // Write until the server stops taking bytes: a write that does not drain within half a second.
  for (;;) {
    sent += 1000;
    if (socket.write(requests)) continue;
    const drained = await Promise.race([once(socket, 'drain').then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 500))]);
    if (!drained || sent >= 2_000_000) break;
  }
  assert.ok(sent < 2_000_000, `the server kept reading: ${sent} requests sent`);
  // What the server answered is bounded by the sockets' buffers, not by what the client sent.
  assert.ok(served.length < 2_000, `${served.length} requests served of ${sent} sent`);
  assert.ok(served.length > 0);
});

test("a head that trickles in past the head timeout gets node:http's 408 and the connection closes", async () => {
  const { server, port, served } = await laneServer(10, { headersTimeoutMs: 200 });
  servers.push(server);
  const socket = await client(port);
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
  const closed = once(socket, 'close');
  for (const byte of 'GET /x HTTP/1.1\r\nHost: h\r\n') {
    if (socket.destroyed) break;
    socket.write(byte);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await closed;
  assert.equal(received, 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n');
  assert.equal(served.length, 0);
});

test("a body that trickles in past the request timeout gets node:http's 408", async () => {
  const { server, port, served } = await laneServer(10, { requestTimeoutMs: 200 });
  servers.push(server);
  const socket = await client(port);
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
  const closed = once(socket, 'close');
  socket.write('POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 100\r\n\r\n');
  for (let index = 0; index < 40 && !socket.destroyed; index++) {
    socket.write('a');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await closed;
  assert.equal(received, 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n');
  assert.equal(served.length, 0);
});

test("a head that stops arriving gets node:http's 408 when the socket goes quiet, not a silent close", async () => {
  const { server, port, served } = await laneServer(10, { headersTimeoutMs: 100, keepAliveMs: 300 });
  servers.push(server);
  const socket = await client(port);
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
  const closed = once(socket, 'close');
  socket.write('GET /x HTTP/1.1\r\nHost: h\r\n');
  await closed;
  assert.equal(received, 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n');
  assert.equal(served.length, 0);
});

test("a body that stops arriving gets node:http's 408 once the request timeout has passed, the socket quiet meanwhile", async () => {
  const { server, port, served } = await laneServer(10, { requestTimeoutMs: 700, keepAliveMs: 300 });
  servers.push(server);
  const socket = await client(port);
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
  const closed = once(socket, 'close');
  const startMs = Date.now();
  socket.write('POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 100\r\n\r\nab');
  await closed;
  // The socket's quiet timeout fires at 300 and 600 ms, within the request timeout, and at 900 ms, past it.
  assert.ok(Date.now() - startMs >= 700, `closed after ${Date.now() - startMs} ms`);
  assert.equal(received, 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n');
  assert.equal(served.length, 0);
});

test('a body written a byte at a time is joined once, whole', async () => {
  const { server, port, served } = await laneServer(2);
  servers.push(server);
  const socket = await client(port);
  const body = Buffer.alloc(4096, 0x62);
  socket.write(`POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: ${body.byteLength}\r\n\r\n`);
  for (let offset = 0; offset < body.byteLength; offset += 1) socket.write(body.subarray(offset, offset + 1));
  const [reply] = (await once(socket, 'data')) as [Buffer];
  assert.match(reply.toString('latin1'), /^HTTP\/1\.1 200 OK\r\n/);
  assert.equal(served.length, 1);
  assert.deepEqual(served[0]!.body, body);
});
