import assert from 'node:assert/strict';
import { once } from 'node:events';
import { type Socket, connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { EXAMPLES, type TestServer, startTestServer } from '../helpers/server.js';

/**
 * The HTTP/1.1 lane (src/frontends/http/http1-lane.ts) over raw sockets: requests written byte for
 * byte as a client would, pipelined, split, and in the forms the lane leaves to node:http, which must
 * take the connection over with nothing lost, mixed up or reordered.
 */

interface RawResponse {
  readonly status: number;
  readonly headers: ReadonlyMap<string, string>;
  readonly body: Buffer;
}

/** Reads HTTP responses (Content-Length bodies; 1xx interim responses included) from a socket. */
class ResponseReader {
  #buffered = Buffer.alloc(0);
  #waiting: (() => void) | undefined;
  #isClosed = false;

  constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.#buffered = Buffer.concat([this.#buffered, chunk]);
      this.#waiting?.();
    });
    socket.on('close', () => {
      this.#isClosed = true;
      this.#waiting?.();
    });
  }

  get isClosed(): boolean {
    return this.#isClosed;
  }

  async next(): Promise<RawResponse> {
    for (;;) {
      const parsed = this.#parse();
      if (parsed !== undefined) return parsed;
      if (this.#isClosed) throw new Error(`connection closed with ${this.#buffered.byteLength} bytes unread`);
      await new Promise<void>((resolve) => (this.#waiting = resolve));
      this.#waiting = undefined;
    }
  }

  async closed(): Promise<void> {
    while (!this.#isClosed) {
      await new Promise<void>((resolve) => (this.#waiting = resolve));
      this.#waiting = undefined;
    }
  }

  #parse(): RawResponse | undefined {
    const headEnd = this.#buffered.indexOf('\r\n\r\n');
    if (headEnd < 0) return undefined;
    const [statusLine, ...lines] = this.#buffered.toString('latin1', 0, headEnd).split('\r\n');
    const headers = new Map(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()] as const));
    const status = Number(statusLine!.split(' ')[1]);
    const length = status < 200 || (headers.get('connection') === 'close' && !headers.has('content-length')) ? 0 : Number(headers.get('content-length'));
    assert.ok(Number.isInteger(length), `a response without Content-Length: ${statusLine}`);
    if (this.#buffered.byteLength < headEnd + 4 + length) return undefined;
    const body = this.#buffered.subarray(headEnd + 4, headEnd + 4 + length);
    this.#buffered = this.#buffered.subarray(headEnd + 4 + length);
    return { status, headers, body: Buffer.from(body) };
  }
}

const INPUT1 = Array.from({ length: 16 }, () => 1);

/** An infer request body of the simple model whose INPUT0 is `base`, `base + 1`, ... */
function simpleBody(base: number): string {
  return JSON.stringify({
    inputs: [
      { name: 'INPUT0', shape: [1, 16], datatype: 'INT32', data: Array.from({ length: 16 }, (_, i) => base + i) },
      { name: 'INPUT1', shape: [1, 16], datatype: 'INT32', data: INPUT1 },
    ],
  });
}

const inferHead = (host: string, length: number, extra = ''): string =>
  `POST /v2/models/simple/infer HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n${extra}\r\n`;

/** OUTPUT0 (INPUT0 + 1) of a simple reply, checked to be the answer to simpleBody(base). */
function assertSum(response: RawResponse, base: number): void {
  assert.equal(response.status, 200, response.body.toString());
  const json = JSON.parse(response.body.toString()) as { outputs: Array<{ name: string; data: number[] }> };
  assert.deepEqual(
    json.outputs.find((output) => output.name === 'OUTPUT0')!.data,
    Array.from({ length: 16 }, (_, i) => base + i + 1),
  );
}

/** The chunked form of a body: two chunks, the way the lane never reads and node:http does. */
function chunked(body: string): string {
  const half = Math.floor(body.length / 2);
  const part = (text: string): string => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;
  return `${part(body.slice(0, half))}${part(body.slice(half))}0\r\n\r\n`;
}

describe('the HTTP/1.1 lane over raw sockets', () => {
  let server: TestServer;
  let host: string;
  let port: number;
  const sockets: Socket[] = [];

  async function open(): Promise<ResponseReader> {
    const socket = connect(port, '127.0.0.1');
    sockets.push(socket);
    await once(socket, 'connect');
    return new ResponseReader(socket);
  }

  before(async () => {
    server = await startTestServer({ modelRepositories: [EXAMPLES], modelControlMode: 'explicit', startupModels: ['simple'] });
    const url = new URL(server.url);
    host = url.host;
    port = Number(url.port);
  });
  after(async () => {
    for (const socket of sockets) socket.destroy();
    await server.close();
  });

  test('a reply carries Content-Length, Date and the keep-alive headers, and the connection stays open', async () => {
    const reader = await open();
    const body = simpleBody(0);
    reader.socket.write(inferHead(host, Buffer.byteLength(body)) + body);
    const response = await reader.next();
    assertSum(response, 0);
    assert.equal(response.headers.get('content-type'), 'application/json');
    assert.equal(Number(response.headers.get('content-length')), response.body.byteLength);
    assert.match(response.headers.get('date')!, /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/);
    assert.equal(response.headers.get('connection'), 'keep-alive');
    assert.equal(response.headers.get('keep-alive'), 'timeout=65');
    reader.socket.write(`GET /v2/health/ready HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
    assert.equal((await reader.next()).status, 200);
    assert.equal(reader.isClosed, false);
  });

  test('pipelined requests in one write are answered in order, each with its own data', async () => {
    const reader = await open();
    const bodies = [10, 20, 30, 40].map(simpleBody);
    reader.socket.write(
      [
        inferHead(host, Buffer.byteLength(bodies[0]!)) + bodies[0]!,
        `GET /v2/models/simple HTTP/1.1\r\nHost: ${host}\r\n\r\n`,
        inferHead(host, Buffer.byteLength(bodies[1]!)) + bodies[1]!,
        inferHead(host, Buffer.byteLength(bodies[2]!)) + bodies[2]!,
        `POST /v2/models/simple/infer HTTP/1.1\r\nHost: ${host}\r\nContent-Length: 13\r\n\r\n{"inputs":[]}`,
        inferHead(host, Buffer.byteLength(bodies[3]!)) + bodies[3]!,
      ].join(''),
    );
    assertSum(await reader.next(), 10);
    const metadata = await reader.next();
    assert.equal(metadata.status, 200);
    assert.equal((JSON.parse(metadata.body.toString()) as { name: string }).name, 'simple');
    assertSum(await reader.next(), 20);
    assertSum(await reader.next(), 30);
    const refused = await reader.next();
    assert.equal(refused.status, 400);
    assert.match(refused.body.toString(), /expected 2 inputs but got 0 inputs for model 'simple'/);
    assertSum(await reader.next(), 40);
  });

  test('a request written a few bytes at a time is answered once whole', async () => {
    const reader = await open();
    const body = simpleBody(5);
    const bytes = Buffer.from(inferHead(host, Buffer.byteLength(body)) + body);
    for (let offset = 0; offset < bytes.byteLength; offset += 7) {
      reader.socket.write(bytes.subarray(offset, offset + 7));
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    assertSum(await reader.next(), 5);
  });

  test('a chunked request moves the connection to node:http with nothing lost or reordered', async () => {
    const reader = await open();
    const [first, second, third, fourth] = [1, 2, 3, 4].map(simpleBody);
    reader.socket.write(
      inferHead(host, Buffer.byteLength(first!)) +
        first! +
        `POST /v2/models/simple/infer HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${chunked(second!)}` +
        inferHead(host, Buffer.byteLength(third!)) +
        third!,
    );
    assertSum(await reader.next(), 1);
    assertSum(await reader.next(), 2);
    assertSum(await reader.next(), 3);
    reader.socket.write(inferHead(host, Buffer.byteLength(fourth!)) + fourth!);
    assertSum(await reader.next(), 4);
  });

  test('Expect: 100-continue gets node:http\'s interim response before the body is sent', async () => {
    const reader = await open();
    const body = simpleBody(7);
    reader.socket.write(inferHead(host, Buffer.byteLength(body), 'Expect: 100-continue\r\n'));
    assert.equal((await reader.next()).status, 100);
    reader.socket.write(body);
    assertSum(await reader.next(), 7);
  });

  test('HTTP/1.0 and Connection: close are answered, then the connection closes', async () => {
    for (const head of [
      `GET /v2/health/live HTTP/1.0\r\n\r\n`,
      `GET /v2/health/live HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`,
    ]) {
      const reader = await open();
      reader.socket.write(head);
      assert.equal((await reader.next()).status, 200);
      await reader.closed();
    }
  });

  test('a malformed request gets node:http\'s 400 and the connection closes', async () => {
    const reader = await open();
    reader.socket.write('NOT AN HTTP REQUEST\r\n\r\n');
    assert.equal((await reader.next()).status, 400);
    await reader.closed();
  });

  test('a request target with a control character goes to node:http, which refuses it', async () => {
    const reader = await open();
    reader.socket.write(`GET /v2/health/\x01live HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
    assert.equal((await reader.next()).status, 400);
    await reader.closed();
  });

  test('a head ended by bare line feeds is left to node:http, which refuses it', async () => {
    const reader = await open();
    reader.socket.write(`GET /v2/health/live HTTP/1.1\nHost: ${host}\n\n`);
    const response = await reader.next();
    assert.equal(response.status, 400);
    await reader.closed();
  });

  test('a Content-Length with a tab after its digits goes to node:http, which refuses it', async () => {
    const reader = await open();
    reader.socket.write(`GET /v2/health/live HTTP/1.1\r\nHost: ${host}\r\nContent-Length: 0\t\r\n\r\n`);
    assert.equal((await reader.next()).status, 400);
    await reader.closed();
  });

  test("a head that goes wrong before its end gets node:http's 400 at once, not a timeout", async () => {
    for (const start of [
      // A body longer than its Content-Length: the byte left over begins no request.
      `GET /v2/health/live HTTP/1.1\r\nHost: ${host}\r\nContent-Length: 1\r\n\r\n{}`,
      `GET /v2/health/live HTTP/1.1\r\nHost: ${host}\r\nX-Note: a\nb`,
      `GET /v2/health/live HTTP/1.1\r\nHost: ${host}\rX`,
      `GET /v2/health/\x80live HTTP/1.1\r\n`,
      `GET /v2/health/live HTTP/1.1\r\nHost : ${host}`,
      '\x16\x03\x01\x02\x00\x01',
    ]) {
      const reader = await open();
      reader.socket.write(Buffer.from(start, 'latin1'));
      const statuses: number[] = [];
      for (;;) {
        const { status } = await reader.next();
        statuses.push(status);
        if (status === 400) break;
      }
      assert.deepEqual(statuses, start.includes('{}') ? [200, 400] : [400], JSON.stringify(start));
      await reader.closed();
    }
  });

  test('a request without Host gets node:http\'s 400', async () => {
    const reader = await open();
    reader.socket.write('GET /v2/health/live HTTP/1.1\r\n\r\n');
    assert.equal((await reader.next()).status, 400);
  });

  test('a client that half-closes has the server close the connection, as node:http does', async () => {
    const reader = await open();
    const body = simpleBody(9);
    reader.socket.write(inferHead(host, Buffer.byteLength(body)) + body);
    assertSum(await reader.next(), 9);
    // Half a request, then the end of the client's side: nothing more can come, and the server closes.
    reader.socket.end(inferHead(host, Buffer.byteLength(body)));
    await reader.closed();
    await assert.rejects(reader.next(), /connection closed with 0 bytes unread/);
  });

  test('any mix of forms the lane serves or hands over, split anywhere: every answer in order, with its own data', async () => {
    /** The forms of an infer request of simpleBody(base): served by the lane, or handing the connection over. */
    const forms: Record<string, (base: number) => string> = {
      plain: (base) => inferHead(host, Buffer.byteLength(simpleBody(base))) + simpleBody(base),
      query: (base) => inferHead(host, Buffer.byteLength(simpleBody(base))).replace('/infer ', '/infer?from=test ') + simpleBody(base),
      spaced: (base) =>
        `POST /v2/models/simple/versions/1/infer HTTP/1.1\r\nhost:${host}\r\ncontent-length:   ${Buffer.byteLength(simpleBody(base))}  \r\nConnection: Keep-Alive\r\n\r\n${simpleBody(base)}`,
      chunked: (base) => `POST /v2/models/simple/infer HTTP/1.1\r\nHost: ${host}\r\nTransfer-Encoding: chunked\r\n\r\n${chunked(simpleBody(base))}`,
      repeated: (base) => inferHead(host, Buffer.byteLength(simpleBody(base)), 'X-Note: a\r\nX-Note: b\r\n') + simpleBody(base),
    };
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom(...Object.keys(forms)), { minLength: 1, maxLength: 6 }),
        fc.array(fc.integer({ min: 1, max: 400 }), { minLength: 1, maxLength: 12 }),
        async (sequence, cuts) => {
          const reader = await open();
          const bytes = Buffer.from(sequence.map((form, index) => forms[form]!(index * 100)).join(''));
          for (let offset = 0, cut = 0; offset < bytes.byteLength; cut++) {
            const size = cuts[cut % cuts.length]!;
            reader.socket.write(bytes.subarray(offset, offset + size));
            offset += size;
            await new Promise((resolve) => setImmediate(resolve));
          }
          for (let index = 0; index < sequence.length; index++) assertSum(await reader.next(), index * 100);
          reader.socket.destroy();
        },
      ),
      { numRuns: 60, seed: 20261203 },
    );
  });

  test('a request whose body is arriving when the server shuts down gets its answer, then the connection closes', async () => {
    const own = await startTestServer({ modelRepositories: [EXAMPLES], modelControlMode: 'explicit', startupModels: ['simple'] });
    const socket = connect(Number(new URL(own.url).port), '127.0.0.1');
    await once(socket, 'connect');
    const reader = new ResponseReader(socket);
    const body = simpleBody(3);
    socket.write(inferHead(new URL(own.url).host, Buffer.byteLength(body)) + body.slice(0, 20));
    await new Promise((resolve) => setTimeout(resolve, 50));
    const closing = own.close();
    await new Promise((resolve) => setTimeout(resolve, 50));
    socket.write(body.slice(20));
    // Answered, not reset: the server takes no new inference by then, as through node:http.
    const response = await reader.next();
    assert.deepEqual({ status: response.status, body: response.body.toString() }, { status: 503, body: '{"error":"the server is shutting down and takes no new requests"}' });
    assert.equal(response.headers.get('connection'), 'close');
    await reader.closed();
    await closing;
  });

  test('the server shuts down with idle connections of the lane open', async () => {
    const own = await startTestServer({ modelRepositories: [EXAMPLES], modelControlMode: 'explicit', startupModels: ['simple'] });
    const socket = connect(Number(new URL(own.url).port), '127.0.0.1');
    await once(socket, 'connect');
    const reader = new ResponseReader(socket);
    socket.write(`GET /v2/health/ready HTTP/1.1\r\nHost: ${new URL(own.url).host}\r\n\r\n`);
    assert.equal((await reader.next()).status, 200);
    await own.close();
    await reader.closed();
  });
});
