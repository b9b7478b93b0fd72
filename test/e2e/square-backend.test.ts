import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Client, credentials } from '@grpc/grpc-js';
import { loadGrpcServices } from '../helpers/plain-grpc-clients.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

/** The first lines of QA's square_int32 (qa/L0_response_statistics/test.sh), written as its echo -e lines write them. */
const QA_BASE = `backend: "square"
max_batch_size: 0
model_transaction_policy { decoupled: True }
input [{ name: "IN" 
 data_type: TYPE_INT32 
 dims: [ 1 ] }]
output [{ name: "OUT" 
 data_type: TYPE_INT32 
 dims: [ 1 ] }]`;

const parameter = (key: string, value: string): string => `parameters [{ key: "${key}" \n value: { string_value: "${value}" } }]`;

/** QA's square_int32 of qa/L0_response_statistics with its delays shortened: of n responses, the last is empty and the 2 before it fail. */
const FAIL_CONFIG = [
  QA_BASE,
  parameter('CUSTOM_INFER_DELAY_NS', '40000000'),
  parameter('CUSTOM_OUTPUT_DELAY_NS', '20000000'),
  parameter('CUSTOM_FAIL_COUNT', '2'),
  parameter('CUSTOM_EMPTY_COUNT', '1'),
].join('\n');

const MODELS: Record<string, string> = {
  square_int32: QA_BASE,
  // QA's square_int32 with its delays shortened and without CUSTOM_FAIL_COUNT: 2 infer, then 1 output delays and the last response left out.
  square_int32_delayed: [QA_BASE, parameter('CUSTOM_INFER_DELAY_NS', '40000000'), parameter('CUSTOM_OUTPUT_DELAY_NS', '20000000'), parameter('CUSTOM_EMPTY_COUNT', '1')].join('\n'),
  // QA's square_int32_slow, verbatim: CUSTOM_CANCEL_DELAY_NS, which Triton's backend never reads, loads.
  square_int32_slow: [QA_BASE, parameter('CUSTOM_INFER_DELAY_NS', '1200000000'), parameter('CUSTOM_OUTPUT_DELAY_NS', '800000000'), parameter('CUSTOM_CANCEL_DELAY_NS', '400000000')].join('\n'),
  square_int32_batching: QA_BASE.replace('max_batch_size: 0', 'max_batch_size: 4\ndynamic_batching { }'),
  square_int32_fail: FAIL_CONFIG,
  // The same, for the HTTP test: the QA test's statistics stay its own.
  square_int32_fail_sse: FAIL_CONFIG,
  not_decoupled: QA_BASE.replace('model_transaction_policy { decoupled: True }\n', ''),
  bad_name: QA_BASE.replace('name: "IN"', 'name: "INPUT0"'),
  bad_shape: QA_BASE.replace('dims: [ 1 ] }]\noutput', 'dims: [ 2 ] }]\noutput'),
  bad_type: QA_BASE.replace('TYPE_INT32 \n dims: [ 1 ] }]\noutput', 'TYPE_INT64 \n dims: [ 1 ] }]\noutput'),
  two_outputs: QA_BASE.replace(/output \[\{ name: "OUT" \n data_type: TYPE_INT32 \n dims: \[ 1 \] \}\]$/, 'output [{ name: "OUT" data_type: TYPE_INT32 dims: [ 1 ] }, { name: "OUT2" data_type: TYPE_INT32 dims: [ 1 ] }]'),
};

async function makeRepository(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'nereid-square-'));
  for (const [name, config] of Object.entries(MODELS)) {
    await mkdir(join(root, name, '1'), { recursive: true });
    await writeFile(join(root, name, 'config.pbtxt'), `${config}\n`);
  }
  return root;
}

interface StreamReply {
  error_message: string;
  infer_response: {
    model_name: string;
    id: string;
    outputs: Array<{ name: string; datatype: string; shape: string[] }>;
    raw_output_contents: Buffer[];
    parameters: Record<string, { bool_param?: boolean }>;
  };
}

/** One reply as [request id, OUT shape and value (or 'empty'), triton_final_response, error]. */
type Reply = [string, string, boolean | undefined, string];

const summary = (reply: StreamReply): Reply => {
  const response = reply.infer_response;
  const out = response.outputs[0];
  const value = out === undefined ? 'empty' : `${out.name} ${out.datatype} [${out.shape.join(',')}] ${Buffer.from(response.raw_output_contents[0]!).readInt32LE(0)}`;
  return [response.id, value, response.parameters['triton_final_response']?.bool_param, reply.error_message];
};

describe("Triton's square backend", () => {
  let repository: string;
  let server: TestServer;
  let client: Client;

  /** Sends each request on one ModelStreamInfer stream, half-closes it, and returns every reply in the order it came. */
  const stream = async (requests: Array<{ model?: string; id: string; value: number; isEmptyFinalWanted?: boolean; shape?: string[] }>): Promise<Reply[]> => {
    const call = (client as unknown as { ModelStreamInfer: () => NodeJS.ReadWriteStream & { write(message: object): void } }).ModelStreamInfer();
    const replies: Reply[] = [];
    const ended = new Promise<void>((resolve, reject) => {
      call.on('data', (reply: StreamReply) => replies.push(summary(reply)));
      call.on('end', resolve);
      call.on('error', reject);
    });
    for (const { model, id, value, isEmptyFinalWanted, shape } of requests) {
      call.write({
        model_name: model ?? 'square_int32',
        id,
        inputs: [{ name: 'IN', datatype: 'INT32', shape: shape ?? ['1'] }],
        outputs: [{ name: 'OUT' }],
        raw_input_contents: [Buffer.from(new Int32Array(Number(shape?.[0] ?? 1)).fill(value).buffer)],
        parameters: isEmptyFinalWanted === true ? { triton_enable_empty_final_response: { bool_param: true } } : {},
      });
    }
    call.end();
    await ended;
    return replies;
  };

  before(async () => {
    repository = await makeRepository();
    server = await startTestServer({ modelRepositories: [repository] });
    const { inference: InferenceClient } = loadGrpcServices();
    client = new InferenceClient(server.grpcUrl!, credentials.createInsecure());
  });
  after(async () => {
    client.close();
    await server.close();
    await rm(repository, { recursive: true, force: true });
  });

  test('gRPC ModelStreamInfer: IN responses of OUT = IN, then the empty final response when asked for', async () => {
    assert.deepEqual(await stream([{ id: 'three', value: 3, isEmptyFinalWanted: true }]), [
      ['three', 'OUT INT32 [1] 3', false, ''],
      ['three', 'OUT INT32 [1] 3', false, ''],
      ['three', 'OUT INT32 [1] 3', false, ''],
      ['three', 'empty', true, ''],
    ]);
    assert.deepEqual(await stream([{ id: 'two', value: 2 }]), [
      ['two', 'OUT INT32 [1] 2', false, ''],
      ['two', 'OUT INT32 [1] 2', false, ''],
    ]);
  });

  test('gRPC ModelStreamInfer: IN = 0 sends no response, only the final flag', async () => {
    assert.deepEqual(await stream([{ id: 'zero', value: 0, isEmptyFinalWanted: true }]), [['zero', 'empty', true, '']]);
    assert.deepEqual(await stream([{ id: 'zero', value: 0 }]), []);
  });

  test('a negative IN streams OUT = IN until the stream is cancelled, which frees the instance', async () => {
    const call = (client as unknown as { ModelStreamInfer: () => NodeJS.ReadWriteStream & { write(message: object): void; cancel(): void } }).ModelStreamInfer();
    const values: number[] = [];
    const closed = new Promise<void>((resolve) => call.on('error', () => resolve()));
    const enough = new Promise<void>((resolve) =>
      call.on('data', (reply: StreamReply) => {
        values.push(Buffer.from(reply.infer_response.raw_output_contents[0]!).readInt32LE(0));
        if (values.length === 20) resolve();
      }),
    );
    call.write({ model_name: 'square_int32', id: 'minus-one', inputs: [{ name: 'IN', datatype: 'INT32', shape: ['1'] }], raw_input_contents: [Buffer.from(new Int32Array([-1]).buffer)] });
    await enough;
    call.cancel();
    await closed;
    assert.ok(values.every((value) => value === -1));
    assert.deepEqual(await stream([{ id: 'after', value: 1 }]), [['after', 'OUT INT32 [1] 1', false, '']]);
  });

  test('the delays apply to each response, and the last CUSTOM_EMPTY_COUNT are not sent', async () => {
    const start = performance.now();
    const replies = await stream([{ model: 'square_int32_delayed', id: 'd', value: 3, isEmptyFinalWanted: true }]);
    const elapsedMs = performance.now() - start;
    assert.deepEqual(replies, [
      ['d', 'OUT INT32 [1] 3', false, ''],
      ['d', 'OUT INT32 [1] 3', false, ''],
      ['d', 'empty', true, ''],
    ]);
    // 3 infer delays of 40 ms and 2 output delays of 20 ms.
    assert.ok(elapsedMs >= 158, `${elapsedMs} ms`);
  });

  test('a batching model takes one batch row per request and fails more, in Triton words', async () => {
    assert.deepEqual(
      await stream([
        { model: 'square_int32_batching', id: 'one', value: 1, shape: ['1', '1'] },
        { model: 'square_int32_batching', id: 'two-rows', value: 1, shape: ['2', '1'] },
      ]),
      [
        ['one', 'OUT INT32 [1,1] 1', false, ''],
        ['two-rows', 'empty', undefined, 'unexpected shape for IN input'],
      ],
    );
  });

  test('HTTP generate_stream sends one event per response, none for IN = 0', async () => {
    const three = await server.post('/v2/models/square_int32/generate_stream', { IN: [3] });
    assert.equal(three.status, 200);
    assert.equal(await three.text(), 'data: {"OUT":3,"model_name":"square_int32","model_version":"1"}\n\n'.repeat(3));
    const zero = await server.post('/v2/models/square_int32/generate_stream', { IN: [0] });
    assert.deepEqual({ status: zero.status, body: await zero.text() }, { status: 200, body: '' });
  });

  test('HTTP generate_stream sends a failed response as an error event and goes on; a first response that failed sets the status', async () => {
    const four = await server.post('/v2/models/square_int32_fail_sse/generate_stream', { IN: [4] });
    assert.equal(four.status, 200);
    assert.equal(await four.text(), `data: {"OUT":4,"model_name":"square_int32_fail_sse","model_version":"1"}\n\n${'data: {"error":"simulated failure"}\n\n'.repeat(2)}`);
    const three = await server.post('/v2/models/square_int32_fail_sse/generate_stream', { IN: [3] });
    assert.deepEqual({ status: three.status, body: await three.text() }, { status: 400, body: 'data: {"error":"simulated failure"}\n\n'.repeat(2) });
  });

  test('qa/L0_response_statistics: failed responses arrive as errors and the request goes on; response_stats count every response by index, the same over HTTP and gRPC', async () => {
    const failure: Reply = ['', 'empty', false, 'simulated failure'];
    const success = (value: number): Reply => ['', `OUT INT32 [1] ${value}`, false, ''];
    // As the QA test: requests of 4, 6 and 3 responses, one stream each.
    assert.deepEqual(await stream([{ model: 'square_int32_fail', id: '', value: 4 }]), [success(4), failure, failure]);
    assert.deepEqual(await stream([{ model: 'square_int32_fail', id: '', value: 6 }]), [success(6), success(6), success(6), failure, failure]);
    assert.deepEqual(await stream([{ model: 'square_int32_fail', id: '', value: 3 }]), [failure, failure]);

    type Durations = Record<'compute_infer' | 'compute_output' | 'success' | 'fail' | 'empty_response' | 'cancel', { count: number; ns: number }>;
    const http = ((await (await server.get('/v2/models/square_int32_fail/stats')).json()) as { model_stats: Array<{ response_stats: Record<string, Durations> }> }).model_stats[0]!.response_stats;
    const grpcStats = await new Promise<{ model_stats: Array<{ response_stats: Record<string, Record<string, { count: string; ns: string }>> }> }>((resolve, reject) =>
      (client as unknown as { ModelStatistics: (request: object, callback: (error: Error | null, reply: never) => void) => void }).ModelStatistics({ name: 'square_int32_fail' }, (error, reply) =>
        error === null ? resolve(reply) : reject(error),
      ),
    );
    const grpc = grpcStats.model_stats[0]!.response_stats;
    const counts = (stats: Record<string, Record<string, { count: number | string }>>): Record<string, Record<string, number>> =>
      Object.fromEntries(Object.entries(stats).map(([index, durations]) => [index, Object.fromEntries(Object.entries(durations).map(([name, duration]) => [name, Number(duration.count)]))]));
    const expected = (computeInfer: number, computeOutput: number, success: number, fail: number, emptyResponse: number) => ({
      compute_infer: computeInfer,
      compute_output: computeOutput,
      success,
      fail,
      empty_response: emptyResponse,
      cancel: 0,
    });
    // Index by index over the three requests (success, fail or empty): 0: S S F; 1: F S F; 2: F S E; 3: E F; 4: F; 5: E.
    assert.deepEqual(counts(http), {
      0: expected(3, 3, 2, 1, 0),
      1: expected(3, 3, 1, 2, 0),
      2: expected(3, 2, 1, 1, 1),
      3: expected(2, 1, 0, 1, 1),
      4: expected(1, 1, 0, 1, 0),
      5: expected(1, 0, 0, 0, 1),
    });
    assert.deepEqual(
      Object.fromEntries(Object.entries(grpc).map(([index, durations]) => [index, Object.fromEntries(Object.entries(durations).map(([name, d]) => [name, { count: Number(d.count), ns: Number(d.ns) }]))])),
      http,
    );
    // Each part holds its timer's wait, 40 ms computing and 20 ms writing the output (at 0.9 of it, as the QA test reads it: a timer may fire a little early).
    for (const durations of Object.values(http)) {
      assert.ok(durations.compute_infer.ns >= 0.9 * durations.compute_infer.count * 40e6, JSON.stringify(durations));
      assert.ok(durations.compute_output.ns >= 0.9 * durations.compute_output.count * 20e6, JSON.stringify(durations));
    }
  });

  test("fails the load of a configuration it cannot serve, with Triton's words", async () => {
    const index = (await (await server.post('/v2/repository/index', '')).json()) as Array<{ name: string; state: string; reason?: string }>;
    const reasons = Object.fromEntries(index.filter((entry) => entry.state === 'UNAVAILABLE').map((entry) => [entry.name, entry.reason]));
    assert.deepEqual(reasons, {
      bad_name: "model 'bad_name': expected first input tensor name to be IN, got INPUT0",
      bad_shape: "model 'bad_shape': expected IN shape to be [1], got [2]",
      bad_type: "model 'bad_type': expected IN datatype to be INT32, got TYPE_INT64",
      not_decoupled:
        "model 'not_decoupled': the square backend sends as many responses to a request as its IN value (none for 0), so the model needs model_transaction_policy { decoupled: true }",
      two_outputs: "model 'two_outputs': expected 1 output, got 2",
    });
    assert.deepEqual(
      index.filter((entry) => entry.state === 'READY').map((entry) => entry.name),
      ['square_int32', 'square_int32_batching', 'square_int32_delayed', 'square_int32_fail', 'square_int32_fail_sse', 'square_int32_slow'],
    );
  });
});
