import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Client, credentials, status } from '@grpc/grpc-js';
import { ModelInferRequestSchema, ModelStreamInferResponseSchema } from '../../src/protocol/gen/grpc_service_pb.js';
import { deserializeMessage, serializeMessage } from '../../src/protocol/grpc-service.js';
import { fromPlainObject } from '../../src/protocol/plain-object.js';
import { loadGrpcServices } from '../helpers/plain-grpc-clients.js';
import { EXAMPLES, FIXTURES, type TestServer, startTestServer } from '../helpers/server.js';

const { inference: InferenceClient, health: HealthClient } = loadGrpcServices();

type Callback = (error: { code: number; details: string } | null, response: Record<string, unknown>) => void;

/** Calls a unary RPC; resolves with the response or rejects with the gRPC error. */
function call(client: Client, method: string, request: object): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    (client as unknown as Record<string, (request: object, callback: Callback) => void>)[method]!(request, (error, response) =>
      error !== null ? reject(error) : resolve(response),
    );
  });
}

const int32Raw = (values: number[]): Buffer => Buffer.from(new Int32Array(values).buffer);
const INPUT0 = Array.from({ length: 16 }, (_, i) => i);
const INPUT1 = Array.from({ length: 16 }, () => 1);
const simpleRequest = (id: string, shape = [1, 16]) => ({
  model_name: 'simple',
  id,
  inputs: [
    { name: 'INPUT0', datatype: 'INT32', shape },
    { name: 'INPUT1', datatype: 'INT32', shape },
  ],
  raw_input_contents: [int32Raw(INPUT0.slice(0, shape[1])), int32Raw(INPUT1.slice(0, shape[1]))],
});
const readInt32 = (raw: Buffer): number[] => [...new Int32Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.byteLength))];

describe('gRPC front end (inference.GRPCInferenceService)', () => {
  let server: TestServer;
  let client: Client;
  before(async () => {
    server = await startTestServer({ modelRepositories: [EXAMPLES, FIXTURES], isStrictReadiness: false });
    client = new InferenceClient(server.grpcUrl!, credentials.createInsecure());
  });
  after(async () => {
    client.close();
    await server.close();
  });

  test('health and metadata', async () => {
    assert.deepEqual(await call(client, 'ServerLive', {}), { live: true });
    assert.deepEqual(await call(client, 'ServerReady', {}), { ready: true });
    assert.deepEqual(await call(client, 'ModelReady', { name: 'simple', version: '' }), { ready: true });
    assert.deepEqual(await call(client, 'ModelReady', { name: 'broken_model', version: '' }), { ready: false });
    const metadata = await call(client, 'ServerMetadata', {});
    assert.equal(metadata.name, 'nereid');
    assert.ok((metadata.extensions as string[]).includes('binary_tensor_data'));
    assert.deepEqual(await call(client, 'ModelMetadata', { name: 'simple', version: '1' }), {
      name: 'simple',
      versions: ['1'],
      platform: 'onnxruntime_onnx',
      inputs: [
        { name: 'INPUT0', datatype: 'INT32', shape: ['-1', '16'] },
        { name: 'INPUT1', datatype: 'INT32', shape: ['-1', '16'] },
      ],
      outputs: [
        { name: 'OUTPUT0', datatype: 'INT32', shape: ['-1', '16'] },
        { name: 'OUTPUT1', datatype: 'INT32', shape: ['-1', '16'] },
      ],
    });
  });

  test('ModelConfig returns the configuration message', async () => {
    const { config } = (await call(client, 'ModelConfig', { name: 'simple', version: '' })) as { config: Record<string, unknown> };
    assert.equal(config.name, 'simple');
    assert.equal(config.max_batch_size, 8);
    assert.equal(config.platform, 'onnxruntime_onnx');
    assert.deepEqual((config.input as Array<{ dims: string[]; data_type: string }>)[0]!.dims, ['16']);
    assert.equal((config.input as Array<{ data_type: string }>)[0]!.data_type, 'TYPE_INT32');
  });

  test('ModelInfer with raw contents, as tritonclient sends it', async () => {
    const response = await call(client, 'ModelInfer', simpleRequest('raw-1'));
    assert.equal(response.model_name, 'simple');
    assert.equal(response.model_version, '1');
    assert.equal(response.id, 'raw-1');
    assert.deepEqual(response.outputs, [
      { name: 'OUTPUT0', datatype: 'INT32', shape: ['1', '16'], parameters: {}, contents: null },
      { name: 'OUTPUT1', datatype: 'INT32', shape: ['1', '16'], parameters: {}, contents: null },
    ]);
    const [sum, difference] = response.raw_output_contents as Buffer[];
    assert.deepEqual(readInt32(sum!), INPUT0.map((v, i) => v + INPUT1[i]!));
    assert.deepEqual(readInt32(difference!), INPUT0.map((v, i) => v - INPUT1[i]!));
  });

  test('ModelInfer with typed contents, every kind', async () => {
    const simple = await call(client, 'ModelInfer', {
      model_name: 'simple',
      inputs: [
        { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], contents: { int_contents: INPUT0 } },
        { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], contents: { int_contents: INPUT1 } },
      ],
      outputs: [{ name: 'OUTPUT1' }],
    });
    assert.deepEqual(readInt32((simple.raw_output_contents as Buffer[])[0]!), INPUT0.map((v) => v - 1));
    const strings = await call(client, 'ModelInfer', {
      model_name: 'identity_bytes',
      inputs: [{ name: 'INPUT0', datatype: 'BYTES', shape: [1, 2], contents: { bytes_contents: [Buffer.from('héllo'), Buffer.from('')] } }],
    });
    assert.deepEqual((strings.raw_output_contents as Buffer[])[0], Buffer.from([6, 0, 0, 0, ...Buffer.from('héllo'), 0, 0, 0, 0]));
    const big = await call(client, 'ModelInfer', {
      model_name: 'autocomplete_partial',
      inputs: [{ name: 'a', datatype: 'INT64', shape: [2], contents: { int64_contents: ['-9223372036854775808', '9007199254740993'] } }],
    });
    const raw = (big.raw_output_contents as Buffer[])[0]!;
    assert.deepEqual([raw.readBigInt64LE(0), raw.readBigInt64LE(8)], [-(2n ** 63n), 2n ** 53n + 1n]);
  });

  test('bad input gets the code and message HTTP gives', async () => {
    const cases: Array<[object, number, string]> = [
      [{ ...simpleRequest('x'), model_name: 'nope' }, status.INVALID_ARGUMENT, "Request for unknown model: 'nope' is not found"],
      [{ ...simpleRequest('x'), model_version: '9' }, status.NOT_FOUND, "Request for unknown model: 'simple' version 9 is not found"],
      [simpleRequest('x', [1, -1]), status.INVALID_ARGUMENT, "All input dimensions should be specified for input 'INPUT0' for model 'simple', got [1,-1]"],
      [simpleRequest('x', [1, 15]), status.INVALID_ARGUMENT, "unexpected shape for input 'INPUT1' for model 'simple'. Expected [-1,16], got [1,15]. NOTE: Setting a non-zero max_batch_size in the model config requires a batch dimension to be prepended to each input shape. If you want to specify the full shape including the batch dim in your input dims config, try setting max_batch_size to zero. See the model configuration docs for more info on max_batch_size."],
      [
        { ...simpleRequest('x'), inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 16] }, { name: 'INPUT1', datatype: 'INT32', shape: [1, 16] }] },
        status.INVALID_ARGUMENT,
        "inference input 'INPUT0' data-type is 'FP32', but model 'simple' expects 'INT32'",
      ],
      [
        { ...simpleRequest('x'), raw_input_contents: [int32Raw(INPUT0), int32Raw(INPUT1.slice(1))] },
        status.INVALID_ARGUMENT,
        "[request id: x] input byte size mismatch for input 'INPUT1' for model 'simple'. Expected 64, got 60 (shape [1,16] of INT32; its raw_input_contents holds 60)",
      ],
      [
        { ...simpleRequest('x'), raw_input_contents: [int32Raw(INPUT0)] },
        status.INVALID_ARGUMENT,
        "unable to find data for input tensor 'INPUT1' for model 'simple' in request.",
      ],
      [
        {
          ...simpleRequest('x'),
          inputs: [
            { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], contents: { int_contents: [...INPUT0] } },
            { name: 'INPUT1', datatype: 'INT32', shape: [1, 16] },
          ],
        },
        status.INVALID_ARGUMENT,
        "contents field must not be specified when using raw_input_contents for 'INPUT0' for model 'simple'",
      ],
      [{ ...simpleRequest('x'), model_name: 'broken_model' }, status.UNAVAILABLE, "Request for unknown model: 'broken_model' has no available versions"],
    ];
    for (const [request, code, details] of cases) {
      await assert.rejects(call(client, 'ModelInfer', request), (error: { code: number; details: string }) => {
        assert.equal(error.code, code, error.details);
        assert.ok(error.details.startsWith(details), `${error.details}\n  expected to start with\n${details}`);
        return true;
      });
    }
  });

  test('ModelStreamInfer: several requests in flight, answers matched by id, an error in the stream', async () => {
    const stream = (client as unknown as { ModelStreamInfer: () => NodeJS.ReadWriteStream & { write(m: object): void } }).ModelStreamInfer();
    const replies: Array<{ error_message: string; infer_response: { id: string; raw_output_contents: Buffer[] } }> = [];
    const ended = new Promise<void>((resolve, reject) => {
      stream.on('data', (reply: (typeof replies)[number]) => replies.push(reply));
      stream.on('end', resolve);
      stream.on('error', reject);
    });
    stream.write(simpleRequest('s1'));
    stream.write(simpleRequest('s2', [1, 15]));
    stream.write(simpleRequest('s3'));
    stream.end();
    await ended;
    assert.equal(replies.length, 3);
    const byId = new Map(replies.map((reply) => [reply.infer_response.id, reply]));
    for (const id of ['s1', 's3']) {
      assert.equal(byId.get(id)!.error_message, '');
      assert.deepEqual(readInt32(byId.get(id)!.infer_response.raw_output_contents[0]!), INPUT0.map((v) => v + 1));
    }
    assert.equal(byId.get('s2')!.error_message, "unexpected shape for input 'INPUT1' for model 'simple'. Expected [-1,16], got [1,15]. NOTE: Setting a non-zero max_batch_size in the model config requires a batch dimension to be prepended to each input shape. If you want to specify the full shape including the batch dim in your input dims config, try setting max_batch_size to zero. See the model configuration docs for more info on max_batch_size.");
  });

  test('ModelStreamInfer: bytes that are no ModelInferRequest fail only themselves, in the stream (found by test/fuzz: the stream hung)', async () => {
    // grpc-js ended such a stream with INTERNAL while earlier answers were still being written, then lost the status.
    const encoded = serializeMessage(ModelInferRequestSchema, fromPlainObject(ModelInferRequestSchema, simpleRequest('s1')));
    for (let round = 0; round < 5; round++) {
      const stream = client.makeBidiStreamRequest('/inference.GRPCInferenceService/ModelStreamInfer', (bytes: Buffer) => bytes, (bytes: Buffer) => bytes);
      const replies: Array<{ id: string; errorMessage: string }> = [];
      const ended = new Promise<{ code: number; details: string }>((resolve) => {
        stream.on('data', (bytes: Buffer) => {
          const reply = deserializeMessage(ModelStreamInferResponseSchema, bytes);
          replies.push({ id: reply.inferResponse?.id ?? '', errorMessage: reply.errorMessage });
        });
        stream.on('error', () => {});
        stream.on('status', resolve);
      });
      stream.write(encoded);
      stream.write(Buffer.from([0x95, 0x35, 0x68, 0xf7]));
      stream.write(encoded);
      stream.end();
      const { code, details } = await ended;
      assert.deepEqual({ code, details }, { code: status.OK, details: 'OK' });
      assert.deepEqual(replies.map((reply) => reply.id).sort(), ['', 's1', 's1']);
      assert.match(replies.find((reply) => reply.id === '')!.errorMessage, /^failed to parse a ModelInferRequest of the stream: /);
    }
  });

  test('RepositoryIndex lists the versions and their states', async () => {
    const { models } = (await call(client, 'RepositoryIndex', { repository_name: '', ready: false })) as {
      models: Array<{ name: string; version: string; state: string; reason: string }>;
    };
    assert.deepEqual(models.find((m) => m.name === 'simple'), { name: 'simple', version: '1', state: 'READY', reason: '' });
    assert.equal(models.find((m) => m.name === 'broken_model')!.state, 'UNAVAILABLE');
    const ready = (await call(client, 'RepositoryIndex', { repository_name: '', ready: true })) as { models: Array<{ state: string }> };
    assert.ok(ready.models.every((m) => m.state === 'READY'));
  });

  test('ModelStatistics counts what both front ends ran', async () => {
    const { model_stats } = (await call(client, 'ModelStatistics', { name: 'simple', version: '' })) as {
      model_stats: Array<{ name: string; inference_count: string; execution_count: string; inference_stats: { success: { count: string } } }>;
    };
    assert.equal(model_stats[0]!.name, 'simple');
    assert.ok(Number(model_stats[0]!.inference_count) >= 4);
    assert.equal(model_stats[0]!.inference_count, model_stats[0]!.inference_stats.success.count);
    await assert.rejects(call(client, 'ModelStatistics', { name: 'nope', version: '' }), { code: status.INVALID_ARGUMENT, details: "requested model 'nope' is not available" });
    await assert.rejects(call(client, 'ModelStatistics', { name: 'simple', version: '9' }), {
      code: status.INVALID_ARGUMENT,
      details: "requested model version is not available for model 'simple'",
    });
  });

  test('calls whose features are not built, or not allowed in this mode, answer UNIMPLEMENTED with a reason', async () => {
    for (const [method, details] of [
      ['LogSettings', 'this server was started with a logger whose settings cannot be changed'],
    ] as const) {
      await assert.rejects(call(client, method, {}), { code: status.UNIMPLEMENTED, details });
    }
    for (const [method, action] of [['RepositoryModelLoad', 'load'], ['RepositoryModelUnload', 'unload']] as const) {
      const details = `explicit model load / unload is not allowed if polling is enabled; cannot ${action} models: the model control mode is NONE; start the server with --model-control-mode=explicit to load and unload through the API`;
      await assert.rejects(call(client, method, {}), { code: status.UNAVAILABLE, details });
    }
  });

  test('gzip-compressed calls work', async () => {
    const gzipClient = new InferenceClient(server.grpcUrl!, credentials.createInsecure(), { 'grpc.default_compression_algorithm': 2 });
    try {
      const response = await call(gzipClient, 'ModelInfer', simpleRequest('gz'));
      assert.deepEqual(readInt32((response.raw_output_contents as Buffer[])[1]!), INPUT0.map((v) => v - 1));
    } finally {
      gzipClient.close();
    }
  });

  test('a message over --grpc-max-message-size is RESOURCE_EXHAUSTED, and the server carries on', async () => {
    const small = await startTestServer({ modelRepositories: [EXAMPLES], grpcMaxMessageBytes: 1000 });
    const smallClient = new InferenceClient(small.grpcUrl!, credentials.createInsecure());
    try {
      const big = { ...simpleRequest('big'), parameters: { padding: { string_param: 'x'.repeat(2000) } } };
      await assert.rejects(call(smallClient, 'ModelInfer', big), { code: status.RESOURCE_EXHAUSTED });
      const response = await call(smallClient, 'ModelInfer', simpleRequest('ok'));
      assert.equal(response.id, 'ok');
    } finally {
      smallClient.close();
      await small.close();
    }
  });

  test('grpc.health.v1.Health answers for the server and the inference service', async () => {
    const health = new HealthClient(server.grpcUrl!, credentials.createInsecure());
    try {
      assert.deepEqual(await call(health, 'Check', { service: '' }), { status: 'SERVING' });
      assert.deepEqual(await call(health, 'Check', { service: 'inference.GRPCInferenceService' }), { status: 'SERVING' });
      await assert.rejects(call(health, 'Check', { service: 'other' }), { code: status.NOT_FOUND });
    } finally {
      health.close();
    }
  });
});
