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

const MODELS: Record<string, string> = {
  square_int32: QA_BASE,
  // QA's square_int32 with its delays shortened and without CUSTOM_FAIL_COUNT: 2 infer, then 1 output delays and the last response left out.
  square_int32_delayed: [QA_BASE, parameter('CUSTOM_INFER_DELAY_NS', '40000000'), parameter('CUSTOM_OUTPUT_DELAY_NS', '20000000'), parameter('CUSTOM_EMPTY_COUNT', '1')].join('\n'),
  // QA's square_int32_slow, verbatim: CUSTOM_CANCEL_DELAY_NS, which Triton's backend never reads, loads.
  square_int32_slow: [QA_BASE, parameter('CUSTOM_INFER_DELAY_NS', '1200000000'), parameter('CUSTOM_OUTPUT_DELAY_NS', '800000000'), parameter('CUSTOM_CANCEL_DELAY_NS', '400000000')].join('\n'),
  square_int32_batching: QA_BASE.replace('max_batch_size: 0', 'max_batch_size: 4\ndynamic_batching { }'),
  // QA's square_int32 verbatim, whose CUSTOM_FAIL_COUNT Nereid cannot serve.
  square_int32_fail: [
    QA_BASE,
    parameter('CUSTOM_INFER_DELAY_NS', '400000000'),
    parameter('CUSTOM_OUTPUT_DELAY_NS', '200000000'),
    parameter('CUSTOM_FAIL_COUNT', '2'),
    parameter('CUSTOM_EMPTY_COUNT', '1'),
  ].join('\n'),
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

  test("fails the load of a configuration it cannot serve, with Triton's words", async () => {
    const index = (await (await server.post('/v2/repository/index', '')).json()) as Array<{ name: string; state: string; reason?: string }>;
    const reasons = Object.fromEntries(index.filter((entry) => entry.state === 'UNAVAILABLE').map((entry) => [entry.name, entry.reason]));
    assert.deepEqual(reasons, {
      bad_name: "model 'bad_name': expected first input tensor name to be IN, got INPUT0",
      bad_shape: "model 'bad_shape': expected IN shape to be [1], got [2]",
      bad_type: "model 'bad_type': expected IN datatype to be INT32, got TYPE_INT64",
      not_decoupled:
        "model 'not_decoupled': the square backend sends as many responses to a request as its IN value (none for 0), so the model needs model_transaction_policy { decoupled: true }",
      square_int32_fail:
        "model 'square_int32_fail': parameters 'CUSTOM_FAIL_COUNT' is 2: Triton's square backend then sends responses with an error in the middle of a request's stream, which goes on, but a Nereid decoupled response carries outputs only and an error ends its request; set it to 0 or remove it",
      two_outputs: "model 'two_outputs': expected 1 output, got 2",
    });
    assert.deepEqual(
      index.filter((entry) => entry.state === 'READY').map((entry) => entry.name),
      ['square_int32', 'square_int32_batching', 'square_int32_delayed', 'square_int32_slow'],
    );
  });
});
