// Triton's qa/L0_http/http_request_many_chunks.py: a body of many one-byte chunks ('A' each) on every
// route that reads a body is read whole and refused with Triton's own words (RapidJSON's message and
// offset), never a dropped connection.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { EXAMPLES, type TestServer, startTestServer } from '../helpers/server.js';

/** Triton's test sends a million; this many is as many as the server needs to show it reads them all. */
const CHUNK_COUNT = 200_000;
const PARSE_ERROR = 'failed to parse the request JSON buffer: Invalid value. at 0';

/** Sends `head` then CHUNK_COUNT chunks of one byte, chunked, over a raw socket; resolves with the whole answer. */
function sendChunked(url: string, head: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      socket.write(`${head}Host: ${hostname}:${port}\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n`);
      const piece = Buffer.from('1\r\nA\r\n'.repeat(10_000));
      for (let sent = 0; sent < CHUNK_COUNT; sent += 10_000) socket.write(piece);
      socket.end('0\r\n\r\n');
    });
    let answer = '';
    socket.on('data', (data: Buffer) => (answer += data.toString()));
    socket.on('close', () => resolve(answer));
    socket.on('error', reject);
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
