import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Logger } from '../../src/logging/logger.js';
import { EXAMPLES, type TestServer, startTestServer } from '../helpers/server.js';

const LIMIT_BYTES = 64 * 1024;

/** Everything the server wrote on a raw connection until it closed it, and whether it ever stopped taking our chunks. */
async function sendChunked(url: string, chunkBytes: number, chunkCount: number): Promise<{ reply: string; chunksWritten: number }> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  await new Promise<void>((resolve) => socket.once('connect', resolve));
  socket.write(
    'POST /v2/models/simple/infer HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n',
  );
  const received: Buffer[] = [];
  socket.on('data', (data: Buffer) => received.push(data));
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.on('error', () => {});
  let chunksWritten = 0;
  const chunk = Buffer.concat([Buffer.from(`${chunkBytes.toString(16)}\r\n`), Buffer.alloc(chunkBytes, 0x20), Buffer.from('\r\n')]);
  while (chunksWritten < chunkCount && !socket.destroyed && received.length === 0) {
    if (!socket.write(chunk)) await Promise.race([new Promise((resolve) => socket.once('drain', resolve)), closed]);
    chunksWritten++;
  }
  await closed;
  return { reply: Buffer.concat(received).toString('latin1'), chunksWritten };
}

describe('request bodies past --http-max-input-size, and clients that leave', () => {
  let server: TestServer;
  const logged: string[] = [];
  const logger: Logger = {
    info: (component, message) => logged.push(`I ${component}: ${message}`),
    warning: (component, message) => logged.push(`W ${component}: ${message}`),
    error: (component, message) => logged.push(`E ${component}: ${message}`),
    verbose: (level, component, message) => logged.push(`V${level} ${component}: ${message}`),
  };
  before(async () => {
    server = await startTestServer({
      modelRepositories: [EXAMPLES],
      modelControlMode: 'explicit',
      startupModels: ['simple'],
      httpMaxInputBytes: LIMIT_BYTES,
      logger,
    });
  });
  after(() => server.close());

  test('a chunked upload past the limit gets its 400 at once and the connection closes, not a stall', async () => {
    // 4096 chunks of 16 KiB (64 MiB): the server must answer long before the client could write them all.
    const { reply, chunksWritten } = await sendChunked(server.url, 16 * 1024, 4096);
    assert.match(reply, /^HTTP\/1\.1 400 Bad Request\r\n/);
    assert.match(reply, /\r\nConnection: close\r\n/i);
    const body = reply.slice(reply.indexOf('\r\n\r\n') + 4);
    assert.deepEqual(JSON.parse(body), {
      error: `Request JSON size of more than ${LIMIT_BYTES} bytes exceeds the maximum allowed value of ${LIMIT_BYTES} bytes. Use --http-max-input-size to increase the limit.`,
    });
    assert.ok(chunksWritten < 4096, `the client wrote ${chunksWritten} chunks`);
    const health = await server.get('/v2/health/live');
    assert.equal(health.status, 200);
  });

  test('a client that leaves mid-body is logged as verbose, without a stack, never as an internal error', async () => {
    const { hostname, port } = new URL(server.url);
    const socket = connect(Number(port), hostname);
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    socket.write('POST /v2/models/simple/infer HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"inputs":');
    await new Promise((resolve) => setTimeout(resolve, 100));
    socket.destroy();
    for (let i = 0; i < 50 && !logged.some((line) => line.includes('closed the connection')); i++) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(
      logged.filter((line) => !line.startsWith('I ') || line.includes('closed')),
      ['V1 http: POST /v2/models/simple/infer: the client closed the connection before sending the whole request body'],
    );
    assert.equal((await server.get('/v2/health/live')).status, 200);
  });
});
