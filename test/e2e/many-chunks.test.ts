// Triton's qa/L0_http/http_request_many_chunks.py and qa/L0_sagemaker/sagemaker_request_many_chunks.py:
// a body of one-byte chunks ('A' each) on every route that reads a body is read whole up to Triton's
// 65,536 chunks and refused in RapidJSON's words; one chunk more is refused as soon as it comes, in
// Triton's words, never with a dropped connection.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { silentLogger } from '../../src/logging/logger.js';
import { startServer } from '../../src/server.js';
import { EXAMPLES, type TestServer, startTestServer } from '../helpers/server.js';

/** Triton's kMaxChunkedChunks. */
const MAX_CHUNKS = 65_536;
const PARSE_ERROR = 'failed to parse the request JSON buffer: Invalid value. at 0';
const TOO_MANY_CHUNKS = 'Chunked request body exceeds maximum of 65536 non-empty chunks. Send fewer or larger HTTP chunks.';

/** Sends `head` then `count` chunks of one byte, chunked, over a raw socket; resolves with the whole answer. */
function sendChunked(url: string, head: string, count = MAX_CHUNKS): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      socket.write(`${head}Host: ${hostname}:${port}\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n`);
      const piece = '1\r\nA\r\n';
      for (let sent = 0; sent < count; sent += 4096) socket.write(piece.repeat(Math.min(4096, count - sent)));
      socket.end('0\r\n\r\n');
    });
    let answer = '';
    socket.on('data', (data: Buffer) => (answer += data.toString()));
    socket.on('close', () => resolve(answer));
    // The server may close once it has answered, before the client has written everything (EPIPE).
    socket.on('error', (error: NodeJS.ErrnoException) => (error.code === 'EPIPE' || error.code === 'ECONNRESET' ? undefined : reject(error)));
  });
}

describe('a request body of many small chunks', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ modelRepositories: [EXAMPLES] });
  });
  after(() => server.close());

  test('an infer request read as raw data gets the model\'s refusal', async () => {
    const answer = await sendChunked(server.url, 'POST /v2/models/simple/infer HTTP/1.1\r\nInference-Header-Content-Length: 0\r\n');
    assert.match(answer, /^HTTP\/1\.1 400 /);
    assert.ok(answer.includes("Raw request must only have 1 input (found 1) to be deduced but got 2 inputs in 'simple' model configuration"), answer);
  });

  test('one chunk more than Triton takes is refused in its words, on the HTTP port and on the SageMaker port', async () => {
    const answer = await sendChunked(server.url, 'POST /v2/repository/index HTTP/1.1\r\n', MAX_CHUNKS + 1);
    assert.match(answer, /^HTTP\/1\.1 400 /);
    assert.ok(answer.includes(TOO_MANY_CHUNKS), answer);
    const sageMaker = await startServer({
      modelRepositories: [EXAMPLES],
      isHttpAllowed: false,
      isGrpcAllowed: false,
      isMetricsAllowed: false,
      modelControlMode: 'explicit',
      sageMaker: { port: 0, defaultModel: 'simple', inferenceType: 'infer', pingMode: 'ready', mmeRoot: '/opt/ml/models' },
      logger: silentLogger,
    });
    try {
      const head = 'POST /models HTTP/1.1\r\nX-Amzn-SageMaker-Target-Model: ZZZZZZZ\r\n';
      assert.ok((await sendChunked(sageMaker.sageMakerUrl!, head)).includes(PARSE_ERROR));
      const refused = await sendChunked(sageMaker.sageMakerUrl!, head, MAX_CHUNKS + 1);
      assert.match(refused, /^HTTP\/1\.1 400 /);
      assert.ok(refused.includes(TOO_MANY_CHUNKS), refused);
    } finally {
      await sageMaker.shutdown();
    }
  });

  for (const path of [
    '/v2/repository/index',
    '/v2/repository/models/simple/load',
    '/v2/repository/models/simple/unload',
    '/v2/models/simple/trace/setting',
    '/v2/logging',
    '/v2/systemsharedmemory/region/many_chunks/register',
    '/v2/cudasharedmemory/region/many_chunks/register',
    '/v2/models/simple/generate',
  ]) {
    test(`POST ${path} is refused in RapidJSON's words`, async () => {
      const answer = await sendChunked(server.url, `POST ${path} HTTP/1.1\r\n`);
      assert.match(answer, /^HTTP\/1\.1 400 /);
      assert.ok(answer.includes(PARSE_ERROR), answer);
    });
  }
});
