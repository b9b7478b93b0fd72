import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Client, Metadata, credentials } from '@grpc/grpc-js';
import { compileHeaderForwardPattern } from '../../src/config/header-forward-pattern.js';
import { loadGrpcServices } from '../helpers/plain-grpc-clients.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

const fail = (message: string): Error => new Error(message);

/** A JavaScript model answering with its request's parameters, as JSON with sorted keys (qa/L0_parameters' `parameter` model does the same). */
const ECHO_MODEL = `export default class EchoParameters {
  execute(requests) {
    return requests.map((request) => {
      const sorted = Object.fromEntries(Object.entries(request.parameters).sort(([a], [b]) => (a < b ? -1 : 1)));
      return { outputs: [{ name: 'PARAMETERS', datatype: 'BYTES', shape: [1], data: [JSON.stringify(sorted)] }] };
    });
  }
}
`;
const ECHO_CONFIG = `backend: "javascript"
max_batch_size: 0
input [ { name: "X" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "PARAMETERS" data_type: TYPE_STRING dims: [ 1 ] } ]
`;

/** Sends `text` as is on a new connection and resolves with the body of the one reply (by its Content-Length, or chunked). */
function rawRequest(url: string, text: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(text));
    let reply = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      reply += chunk;
      const headEnd = reply.indexOf('\r\n\r\n');
      if (headEnd < 0) return;
      const head = reply.slice(0, headEnd).toLowerCase();
      const rest = reply.slice(headEnd + 4);
      const length = /content-length: (\d+)/.exec(head);
      let body: string | undefined;
      if (length !== null && rest.length >= Number(length[1])) body = rest.slice(0, Number(length[1]));
      if (head.includes('transfer-encoding: chunked') && rest.endsWith('0\r\n\r\n')) body = rest.replace(/(?:^|\r\n)[0-9a-f]+\r\n/g, '').replace(/\r\n$/, '');
      if (body === undefined) return;
      socket.destroy();
      resolve(body);
    });
    socket.on('error', reject);
  });
}

describe('--http-header-forward-pattern and --grpc-header-forward-pattern (qa/L0_parameters)', () => {
  let repository: string;
  let server: TestServer;
  let client: Client;
  before(async () => {
    repository = await mkdtemp(join(tmpdir(), 'nereid-header-forwarding-'));
    await mkdir(join(repository, 'echo', '1'), { recursive: true });
    await writeFile(join(repository, 'echo', '1', 'model.js'), ECHO_MODEL);
    await writeFile(join(repository, 'echo', 'config.pbtxt'), ECHO_CONFIG);
    server = await startTestServer({
      modelRepositories: [repository],
      httpHeaderForwardPattern: compileHeaderForwardPattern('http-header-forward-pattern', 'MY_HEADER.*', fail),
      grpcHeaderForwardPattern: compileHeaderForwardPattern('grpc-header-forward-pattern', 'my_header_[12]', fail),
    });
    const { inference: InferenceClient } = loadGrpcServices();
    client = new InferenceClient(server.grpcUrl!, credentials.createInsecure());
  });
  after(async () => {
    client.close();
    await server.close();
    await rm(repository, { recursive: true, force: true });
  });

  const HEADERS = { header_1: 'value_1', my_header_1: 'my_value_1', my_header_2: 'my_value_2', my_header_3: 'This is a "quoted" string with a backslash\\' };

  test('HTTP: the headers the pattern matches, case-insensitively, join the parameters the request gives itself; the others do not', async () => {
    const response = await server.post('/v2/models/echo/infer', { inputs: [{ name: 'X', datatype: 'INT32', shape: [1], data: [1] }], parameters: { key1: 'value1', key2: 2 } }, { headers: HEADERS });
    const json = (await response.json()) as { outputs: Array<{ data: string[] }> };
    assert.deepEqual(JSON.parse(json.outputs[0]!.data[0]!), {
      key1: 'value1',
      key2: 2,
      my_header_1: 'my_value_1',
      my_header_2: 'my_value_2',
      my_header_3: 'This is a "quoted" string with a backslash\\',
    });
    const generated = await server.post('/v2/models/echo/generate', { X: 1, parameters: { key1: 'value1' } }, { headers: { my_header_1: 'g' } });
    assert.deepEqual(JSON.parse(((await generated.json()) as { PARAMETERS: string }).PARAMETERS), { key1: 'value1', my_header_1: 'g' });
  });

  test('HTTP: names keep the case the client sent, through the lane and through node:http; names the core reads, and the request\'s own values, are not overridden', async () => {
    const body = JSON.stringify({ inputs: [{ name: 'X', datatype: 'INT32', shape: [1], data: [1] }], parameters: { my_header_own: 'from the body' } });
    const head = (extra: string): string =>
      `POST /v2/models/echo/infer HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nMy_Header_Case: Kept\r\nmy_header_own: from a header\r\n${extra}`;
    const laneReply = await rawRequest(server.url, `${head(`Content-Length: ${body.length}\r\n`)}\r\n${body}`);
    // Chunked: node:http reads this one (the lane hands such requests over).
    const nodeReply = await rawRequest(server.url, `${head('Transfer-Encoding: chunked\r\n')}\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`);
    for (const reply of [laneReply, nodeReply]) {
      const json = JSON.parse(reply) as { outputs: Array<{ data: string[] }> };
      assert.deepEqual(JSON.parse(json.outputs[0]!.data[0]!), { My_Header_Case: 'Kept', my_header_own: 'from the body' });
    }
  });

  test('gRPC: ModelInfer and each request of a ModelStreamInfer forward the metadata the pattern matches', async () => {
    const metadata = new Metadata();
    for (const [key, value] of Object.entries(HEADERS)) metadata.set(key, value);
    const request = {
      model_name: 'echo',
      inputs: [{ name: 'X', datatype: 'INT32', shape: ['1'] }],
      raw_input_contents: [Buffer.from(new Int32Array([1]).buffer)],
      parameters: { key1: { string_param: 'value1' } },
    };
    const parametersOf = (reply: { raw_output_contents: Buffer[] }): unknown => JSON.parse(Buffer.from(reply.raw_output_contents[0]!).subarray(4).toString('utf8'));
    const unary = await new Promise<{ raw_output_contents: Buffer[] }>((resolve, reject) =>
      (client as unknown as { ModelInfer: (request: object, metadata: Metadata, callback: (error: Error | null, reply: never) => void) => void }).ModelInfer(request, metadata, (error, reply) =>
        error === null ? resolve(reply) : reject(error),
      ),
    );
    const expected = { key1: 'value1', my_header_1: 'my_value_1', my_header_2: 'my_value_2' };
    assert.deepEqual(parametersOf(unary), expected);
    const call = (client as unknown as { ModelStreamInfer: (metadata: Metadata) => NodeJS.ReadWriteStream & { write(message: object): void } }).ModelStreamInfer(metadata);
    const replies: unknown[] = [];
    const ended = new Promise<void>((resolve, reject) => {
      call.on('data', (reply: { infer_response: { raw_output_contents: Buffer[] } }) => replies.push(parametersOf(reply.infer_response)));
      call.on('end', resolve);
      call.on('error', reject);
    });
    call.write(request);
    call.write({ ...request, parameters: { key1: { string_param: 'other' } } });
    call.end();
    await ended;
    assert.deepEqual(replies, [expected, { ...expected, key1: 'other' }]);
  });
});
