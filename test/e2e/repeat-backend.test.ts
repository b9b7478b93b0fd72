import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Client, credentials } from '@grpc/grpc-js';
import { loadGrpcServices } from '../helpers/plain-grpc-clients.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

const { inference: InferenceClient } = loadGrpcServices();

/** Triton QA's repeat_int32 (qa/L0_decoupled/models/repeat_int32), the C++ repeat backend's model. */
const REPEAT_INT32 = `backend: "repeat"
max_batch_size: 0
model_transaction_policy {
  decoupled: True
}
input [
  { name: "IN" data_type: TYPE_INT32 dims: [ -1 ] },
  { name: "DELAY" data_type: TYPE_UINT32 dims: [ -1 ] },
  { name: "WAIT" data_type: TYPE_UINT32 dims: [ 1 ] }
]
output [
  { name: "OUT" data_type: TYPE_INT32 dims: [ 1 ] },
  { name: "IDX" data_type: TYPE_UINT32 dims: [ 1 ] }
]`;

const MODELS: Record<string, string> = {
  repeat_int32: REPEAT_INT32,
  // qa/L0_decoupled's NonDecoupledTest: the same model with `decoupled: False`.
  repeat_int32_non_decoupled: REPEAT_INT32.replace('decoupled: True', 'decoupled: False'),
  bad_batching: REPEAT_INT32.replace('max_batch_size: 0', 'max_batch_size: 8'),
  bad_inputs: REPEAT_INT32.replace('{ name: "WAIT" data_type: TYPE_UINT32 dims: [ 1 ] }', '{ name: "WAIT" data_type: TYPE_UINT32 dims: [ 1 ] }, { name: "MORE" data_type: TYPE_UINT32 dims: [ 1 ] }'),
  bad_order: REPEAT_INT32.replace('{ name: "IN" data_type: TYPE_INT32 dims: [ -1 ] },\n  { name: "DELAY" data_type: TYPE_UINT32 dims: [ -1 ] }', '{ name: "DELAY" data_type: TYPE_UINT32 dims: [ -1 ] },\n  { name: "IN" data_type: TYPE_INT32 dims: [ -1 ] }'),
  bad_shape: REPEAT_INT32.replace('{ name: "DELAY" data_type: TYPE_UINT32 dims: [ -1 ] }', '{ name: "DELAY" data_type: TYPE_UINT32 dims: [ 4 ] }'),
  bad_type: REPEAT_INT32.replace('{ name: "IDX" data_type: TYPE_UINT32', '{ name: "IDX" data_type: TYPE_INT32'),
  bad_parameter: `${REPEAT_INT32}\nparameters [ { key: "execute_delay_ms" value: { string_value: "10" } } ]`,
};

async function makeRepository(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'nereid-repeat-'));
  for (const [name, config] of Object.entries(MODELS)) {
    await mkdir(join(root, name, '1'), { recursive: true });
    await writeFile(join(root, name, 'config.pbtxt'), `name: "${name}"\n${config}\n`);
  }
  return root;
}

const int32s = (values: number[]): Buffer => Buffer.from(Int32Array.from(values).buffer);
const uint32s = (values: number[]): Buffer => Buffer.from(Uint32Array.from(values).buffer);

interface RepeatRequest {
  readonly id: string;
  readonly values: number[];
  readonly delaysMs: number[];
  readonly waitMs: number;
  /** Defaults to the values' own shape; a different one tests the shape check. */
  readonly delayShape?: number[];
}

type StreamReply = {
  error_message: string;
  infer_response: {
    id: string;
    outputs: Array<{ name: string; datatype: string; shape: string[] }>;
    raw_output_contents: Buffer[];
    parameters: Record<string, { bool_param?: boolean }>;
  };
};

/** What one reply of the stream says, with the ms since the stream opened: `OUT=4 IDX=0`, `final`, or the error. */
interface Seen {
  readonly id: string;
  readonly what: string;
  readonly atMs: number;
}

function describeReply(reply: StreamReply): string {
  if (reply.error_message !== '') return `error: ${reply.error_message}`;
  const { outputs, raw_output_contents: raw, parameters } = reply.infer_response;
  const isFinal = parameters.triton_final_response?.bool_param === true;
  if (outputs.length === 0) return isFinal ? 'final' : 'empty';
  const fields = outputs.map((output, index) => {
    const value = output.datatype === 'INT32' ? raw[index]!.readInt32LE(0) : raw[index]!.readUInt32LE(0);
    return `${output.name}:${output.datatype}[${output.shape.join(',')}]=${value}`;
  });
  return `${fields.join(' ')}${isFinal ? ' final' : ''}`;
}

describe("Triton's repeat backend", () => {
  let repository: string;
  let server: TestServer;
  let client: Client;

  /**
   * Sends the requests on one ModelStreamInfer stream, `gapMs` apart, and returns every reply once the
   * server has answered them all. Only OUT is asked for, as qa/L0_decoupled's ensemble trials do.
   */
  async function stream(requests: readonly RepeatRequest[], options: { emptyFinal?: boolean; gapMs?: number } = {}): Promise<Seen[]> {
    const call = (client as unknown as { ModelStreamInfer: () => NodeJS.ReadWriteStream & { write(message: object): void } }).ModelStreamInfer();
    const seen: Seen[] = [];
    const startMs = performance.now();
    const ended = new Promise<void>((resolve, reject) => {
      call.on('data', (reply: StreamReply) => seen.push({ id: reply.infer_response.id, what: describeReply(reply), atMs: performance.now() - startMs }));
      call.on('end', resolve);
      call.on('error', reject);
    });
    for (const [index, request] of requests.entries()) {
      if (index > 0 && options.gapMs !== undefined) await new Promise((resolve) => setTimeout(resolve, options.gapMs));
      call.write({
        model_name: 'repeat_int32',
        id: request.id,
        inputs: [
          { name: 'IN', datatype: 'INT32', shape: [request.values.length] },
          { name: 'DELAY', datatype: 'UINT32', shape: request.delayShape ?? [request.delaysMs.length] },
          { name: 'WAIT', datatype: 'UINT32', shape: [1] },
        ],
        outputs: [{ name: 'OUT' }],
        raw_input_contents: [int32s(request.values), uint32s(request.delaysMs), uint32s([request.waitMs])],
        parameters: options.emptyFinal === true ? { triton_enable_empty_final_response: { bool_param: true } } : {},
      });
    }
    call.end();
    await ended;
    return seen;
  }
  const whatOf = (seen: readonly Seen[], id: string): string[] => seen.filter((reply) => reply.id === id).map((reply) => reply.what);
  const timeOf = (seen: readonly Seen[], id: string, what: string): number => seen.find((reply) => reply.id === id && reply.what === what)!.atMs;

  before(async () => {
    repository = await makeRepository();
    server = await startTestServer({ modelRepositories: [repository] });
    client = new InferenceClient(server.grpcUrl!, credentials.createInsecure());
  });
  after(async () => {
    client.close();
    await server.close();
    await rm(repository, { recursive: true, force: true });
  });

  test('gRPC: OUT and IDX for each element of IN, each after its DELAY, then the empty final response', async () => {
    const seen = await stream([{ id: 'r0', values: [4, 2, 0, -1], delaysMs: [100, 50, 0, 100], waitMs: 20 }], { emptyFinal: true });
    // Triton's backend adds OUT and IDX to every response, whatever the request asked for.
    assert.deepEqual(whatOf(seen, 'r0'), [
      'OUT:INT32[1]=4 IDX:UINT32[1]=0',
      'OUT:INT32[1]=2 IDX:UINT32[1]=1',
      'OUT:INT32[1]=0 IDX:UINT32[1]=2',
      'OUT:INT32[1]=-1 IDX:UINT32[1]=3',
      'final',
    ]);
    const at = seen.map((reply) => reply.atMs);
    for (const [index, cumulativeMs] of [100, 150, 150, 250].entries()) assert.ok(at[index]! >= cumulativeMs - 5, `response ${index} at ${at[index]} ms, before its ${cumulativeMs} ms of DELAY`);
    assert.ok(at[4]! - at[3]! < 50, 'the final response follows the last at once');
  });

  test('one instance serves the next request once WAIT releases the first: their responses interleave by time', async () => {
    const config = (await (await server.get('/v2/models/repeat_int32/config')).json()) as { instance_group: Array<{ count: number }> };
    assert.deepEqual(
      config.instance_group.map((group) => group.count),
      [1],
    );
    const seen = await stream([
      { id: 'a', values: [10, 11, 12], delaysMs: [300, 300, 300], waitMs: 10 },
      { id: 'b', values: [20, 21], delaysMs: [150, 300], waitMs: 10 },
    ]);
    assert.deepEqual(
      seen.map((reply) => `${reply.id}:${reply.what.replace(/ IDX.*/, '')}`),
      ['b:OUT:INT32[1]=20', 'a:OUT:INT32[1]=10', 'b:OUT:INT32[1]=21', 'a:OUT:INT32[1]=11', 'a:OUT:INT32[1]=12'],
    );
  });

  test('an empty IN sends no response: only the final one, at once whatever WAIT, and nothing without the empty final response', async () => {
    const withFinal = await stream([{ id: 'none', values: [], delaysMs: [], waitMs: 400 }], { emptyFinal: true });
    assert.deepEqual(whatOf(withFinal, 'none'), ['final']);
    assert.ok(withFinal[0]!.atMs < 300, `the final response came after ${withFinal[0]!.atMs} ms`);
    const without = await stream([{ id: 'none', values: [], delaysMs: [], waitMs: 0 }]);
    assert.deepEqual(without, []);
  });

  test('WAIT holds the instance after a request that completed sooner: the next one starts once it has passed', async () => {
    const seen = await stream(
      [
        { id: 'first', values: [1], delaysMs: [0], waitMs: 400 },
        { id: 'second', values: [2], delaysMs: [0], waitMs: 0 },
      ],
      { emptyFinal: true },
    );
    assert.deepEqual(whatOf(seen, 'first'), ['OUT:INT32[1]=1 IDX:UINT32[1]=0', 'final']);
    assert.deepEqual(whatOf(seen, 'second'), ['OUT:INT32[1]=2 IDX:UINT32[1]=0', 'final']);
    assert.ok(timeOf(seen, 'first', 'final') < 300, 'the first completes before its WAIT is over');
    assert.ok(timeOf(seen, 'second', 'OUT:INT32[1]=2 IDX:UINT32[1]=0') >= 395, 'the second runs once the WAIT is over');
  });

  test("refuses IN and DELAY of different shapes with Triton's error; the stream goes on", async () => {
    const seen = await stream([
      { id: 'bad', values: [100], delaysMs: [0, 0], waitMs: 0 },
      { id: 'good', values: [7], delaysMs: [0], waitMs: 0 },
    ]);
    assert.deepEqual(whatOf(seen, 'bad'), ['error: expected IN and DELAY shape to match, got [1] and [2]']);
    assert.deepEqual(whatOf(seen, 'good'), ['OUT:INT32[1]=7 IDX:UINT32[1]=0']);
  });

  test('the delays run on timers: other requests are answered while a response waits', async () => {
    const streaming = stream([{ id: 'slow', values: [1], delaysMs: [500], waitMs: 500 }]);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const startMs = performance.now();
    const live = await server.get('/v2/health/live');
    const answer = await server.post('/v2/models/repeat_int32_non_decoupled/infer', {
      inputs: [
        { name: 'IN', datatype: 'INT32', shape: [1], data: [9] },
        { name: 'DELAY', datatype: 'UINT32', shape: [1], data: [0] },
        { name: 'WAIT', datatype: 'UINT32', shape: [1], data: [0] },
      ],
    });
    assert.equal(live.status, 200);
    assert.equal(answer.status, 200);
    assert.ok(performance.now() - startMs < 300, `answered in ${performance.now() - startMs} ms behind a 500 ms DELAY`);
    assert.deepEqual(whatOf(await streaming, 'slow'), ['OUT:INT32[1]=1 IDX:UINT32[1]=0']);
  });

  test('HTTP generate_stream: one event per element of IN', async () => {
    const response = await server.post('/v2/models/repeat_int32/generate_stream', { IN: [5, 6, 7], DELAY: [10, 10, 10], WAIT: [0] });
    assert.equal(response.status, 200);
    assert.equal(
      await response.text(),
      'data: {"IDX":0,"OUT":5,"model_name":"repeat_int32","model_version":"1"}\n\n' +
        'data: {"IDX":1,"OUT":6,"model_name":"repeat_int32","model_version":"1"}\n\n' +
        'data: {"IDX":2,"OUT":7,"model_name":"repeat_int32","model_version":"1"}\n\n',
    );
  });

  test("not decoupled (QA's NonDecoupledTest): one element gets one response with OUT and IDX, whichever of DELAY and WAIT ends first", async () => {
    for (const [delayMs, waitMs] of [
      [0, 0],
      [200, 100],
      [100, 200],
    ]) {
      const response = await server.post('/v2/models/repeat_int32_non_decoupled/infer', {
        inputs: [
          { name: 'IN', datatype: 'INT32', shape: [1], data: [1] },
          { name: 'DELAY', datatype: 'UINT32', shape: [1], data: [delayMs] },
          { name: 'WAIT', datatype: 'UINT32', shape: [1], data: [waitMs] },
        ],
      });
      assert.deepEqual(await response.json(), {
        model_name: 'repeat_int32_non_decoupled',
        model_version: '1',
        outputs: [
          { name: 'OUT', datatype: 'INT32', shape: [1], data: [1] },
          { name: 'IDX', datatype: 'UINT32', shape: [1], data: [0] },
        ],
      });
    }
    const many = await server.post('/v2/models/repeat_int32_non_decoupled/infer', {
      inputs: [
        { name: 'IN', datatype: 'INT32', shape: [2], data: [1, 2] },
        { name: 'DELAY', datatype: 'UINT32', shape: [2], data: [0, 0] },
        { name: 'WAIT', datatype: 'UINT32', shape: [1], data: [0] },
      ],
    });
    assert.equal(many.status, 400);
    assert.deepEqual(await many.json(), {
      error:
        "model 'repeat_int32_non_decoupled' is not decoupled, so it sends one response per request, but IN has 2 elements; send one element, or set model_transaction_policy { decoupled: true } to get one response per element",
    });
  });

  test("fails the load of a configuration it cannot serve, with Triton's words", async () => {
    const index = (await (await server.post('/v2/repository/index', '')).json()) as Array<{ name: string; state: string; reason?: string }>;
    const reasons = Object.fromEntries(index.filter((entry) => entry.state === 'UNAVAILABLE').map((entry) => [entry.name, entry.reason]));
    assert.deepEqual(reasons, {
      bad_batching: "model 'bad_batching': repeat backend only supports models with max_batch_size == 0",
      bad_inputs: "model 'bad_inputs': expected 3 inputs, got 4",
      bad_order: "model 'bad_order': expected first input tensor name to be IN, got DELAY",
      bad_parameter: "model 'bad_parameter': parameter 'execute_delay_ms' is not one the repeat backend knows; it reads none",
      bad_shape: "model 'bad_shape': expected IN and DELAY shape to match, got [-1] and [4]",
      bad_type: "model 'bad_type': expected IDX datatype to be UINT32, got TYPE_INT32",
    });
    assert.deepEqual(
      index.filter((entry) => entry.state === 'READY').map((entry) => entry.name),
      ['repeat_int32', 'repeat_int32_non_decoupled'],
    );
  });
});
