import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import {
  AbortError,
  ClientError,
  ConnectionError,
  GrpcClient,
  HttpClient,
  type InferInput,
  type InferenceClient,
  ServerError,
  TimeoutError,
} from '../../src/client/index.js';
import { EXAMPLES, FIXTURES, type TestServer, startTestServer } from './server.js';
import { startRecordingProxy } from './recording-proxy.js';
import { SIMPLE_METADATA, simpleConfig } from './simple-model.js';

export type Protocol = 'http' | 'grpc';
type Client = HttpClient | GrpcClient;

const PACKAGE = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

/** Edge values of every data type the identity_all_types fixture echoes. */
export const EDGE_VALUES = {
  BOOL: new Uint8Array([1, 0, 1]),
  UINT8: new Uint8Array([0, 1, 255]),
  UINT16: new Uint16Array([0, 1, 65535]),
  UINT32: new Uint32Array([0, 1, 4294967295]),
  UINT64: new BigUint64Array([0n, 2n ** 53n + 1n, 2n ** 64n - 1n]),
  INT8: new Int8Array([-128, 0, 127]),
  INT16: new Int16Array([-32768, 0, 32767]),
  INT32: new Int32Array([-2147483648, 0, 2147483647]),
  INT64: new BigInt64Array([-(2n ** 63n), -(2n ** 53n) - 3n, 2n ** 63n - 1n]),
  FP16: new Uint16Array([0x3c00, 0xc000, 0x7bff]),
  FP32: new Float32Array([1.5, -0.1, 3.4028234663852886e38]),
  FP64: new Float64Array([Math.PI, -0, 1e-300]),
} as const;
export const STRINGS = ['hello', '', 'naïve ☃ 雪'];
export type FixedType = keyof typeof EDGE_VALUES;
export const FIXED_TYPES = Object.keys(EDGE_VALUES) as FixedType[];

/** One request to identity_all_types with every data type, [1, 3] each; BYTES as given. */
export function allTypesInputs(bytes: readonly (string | Uint8Array)[] = STRINGS): InferInput[] {
  return [
    ...FIXED_TYPES.map((type) => ({ name: `INPUT_${type}`, datatype: type, shape: [1, 3], data: EDGE_VALUES[type] }) as InferInput),
    { name: 'INPUT_BYTES', datatype: 'BYTES', shape: [1, 3], data: bytes },
  ];
}

export const simpleInputs = (shape = [1, 16]): InferInput[] => [
  { name: 'INPUT0', datatype: 'INT32', shape, data: Int32Array.from({ length: shape[1]! }, (_, i) => i) },
  { name: 'INPUT1', datatype: 'INT32', shape, data: new Int32Array(shape[1]!).fill(1) },
];
export const slowInputs: InferInput[] = [{ name: 'INPUT0', datatype: 'FP32', shape: [3], data: new Float32Array([1, 2, 3]) }];

export interface ConformanceOptions {
  readonly protocol: Protocol;
  /** A client of the server's endpoint for the protocol, or of another address (`host:port`). */
  readonly connect: (server: TestServer, address?: string) => Client;
}

const addressOf = (server: TestServer, protocol: Protocol): string => (protocol === 'http' ? server.url.replace(/^http:\/\//, '') : server.grpcUrl!);

async function rejects(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  assert.fail('expected the call to fail');
}

/**
 * The client library's behaviour against the real server, the same over both protocols (Triton's
 * qa/common/infer_util.py runs each case over HTTP and gRPC the same way).
 */
export function describeClientConformance({ protocol, connect }: ConformanceOptions): void {
  const transport = (httpStatus: number, grpcCode: number) => (protocol === 'http' ? { protocol, httpStatus } : { protocol, grpcCode });

  describe(`${protocol}: health, metadata, config, statistics and inference`, () => {
    let server: TestServer;
    let client: Client;
    before(async () => {
      server = await startTestServer({ modelRepositories: [EXAMPLES, FIXTURES], isStrictReadiness: false });
      client = connect(server);
    });
    after(async () => {
      await client.close();
      await server.close();
    });

    test('health: server live and ready, model readiness by version', async () => {
      assert.equal(await client.isServerLive(), true);
      assert.equal(await client.isServerReady(), true);
      assert.equal(await client.isModelReady('simple'), true);
      assert.equal(await client.isModelReady('simple', { version: 1 }), true);
      assert.equal(await client.isModelReady('simple', { version: '9' }), false);
      assert.equal(await client.isModelReady('broken_model'), false);
      assert.equal(await client.isModelReady('nope'), false);
    });

    test('server and model metadata', async () => {
      const metadata = await client.serverMetadata();
      assert.equal(metadata.name, 'nereid');
      assert.equal(metadata.version, PACKAGE.version);
      for (const extension of ['binary_tensor_data', 'classification', 'model_repository', 'statistics', 'parameters']) {
        assert.ok(metadata.extensions.includes(extension), extension);
      }
      assert.deepEqual(await client.modelMetadata('simple'), SIMPLE_METADATA);
      assert.deepEqual(await client.modelMetadata('simple', { version: 1 }), SIMPLE_METADATA);
      const error = await rejects(client.modelMetadata('nope'));
      assert.ok(error instanceof ServerError);
      assert.equal(error.message, "Request for unknown model: 'nope' is not found");
    });

    test('model config, in each protocol\'s form', async () => {
      const config = await client.modelConfig('simple');
      assert.equal(config.name, 'simple');
      assert.equal(config.max_batch_size, 8);
      const [input] = config.input as Array<{ name: string; data_type: string; dims: unknown[] }>;
      assert.equal(input!.name, 'INPUT0');
      assert.equal(input!.data_type, 'TYPE_INT32');
      // Triton's HTTP JSON prints dims as numbers; gRPC carries int64 as strings.
      assert.deepEqual(input!.dims, protocol === 'http' ? [16] : ['16']);
      const digits = await client.modelConfig('digits', { version: 1 });
      assert.equal((digits.dynamic_batching as { max_queue_delay_microseconds: unknown }).max_queue_delay_microseconds, protocol === 'http' ? 200 : '200');
    });

    test('repository index, all and ready only', async () => {
      const all = await client.repositoryIndex();
      assert.deepEqual(all.find((entry) => entry.name === 'simple'), { name: 'simple', version: '1', state: 'READY', reason: '' });
      const broken = all.find((entry) => entry.name === 'broken_model');
      assert.equal(broken?.state, 'UNAVAILABLE');
      assert.match(broken!.reason, /^ONNX Runtime cannot load the model/);
      const ready = await client.repositoryIndex({ ready: true });
      assert.ok(ready.length > 0 && ready.every((entry) => entry.state === 'READY'));
      assert.equal(ready.find((entry) => entry.name === 'broken_model'), undefined);
    });

    test('statistics count each request once, per model and version', async () => {
      const before = (await client.modelStatistics('simple'))[0]!;
      for (let i = 0; i < 3; i++) await client.infer('simple', simpleInputs());
      const [after] = await client.modelStatistics('simple', { version: 1 });
      assert.equal(after!.name, 'simple');
      assert.equal(after!.version, '1');
      assert.equal(after!.inferenceStats.success.count - before.inferenceStats.success.count, 3);
      assert.equal(after!.inferenceCount - before.inferenceCount, 3);
      assert.equal(after!.inferenceStats.queue.count - before.inferenceStats.queue.count, 3);
      assert.ok(after!.inferenceStats.computeInfer.ns > before.inferenceStats.computeInfer.ns);
      assert.ok(after!.lastInference > 0);
      const everyModel = await client.modelStatistics();
      assert.ok(everyModel.some((stats) => stats.name === 'digits'));
      assert.ok(everyModel.some((stats) => stats.name === 'simple'));
    });

    test('infer: every data type round-trips exactly, BYTES as strings and as bytes', async () => {
      for (const bytes of [STRINGS, STRINGS.map((s) => new TextEncoder().encode(s))]) {
        const result = await client.infer('identity_all_types', allTypesInputs(bytes), { id: 'all-types' });
        assert.equal(result.modelName, 'identity_all_types');
        assert.equal(result.modelVersion, '1');
        assert.equal(result.id, 'all-types');
        for (const type of FIXED_TYPES) {
          const output = result.output(`OUTPUT_${type}`);
          assert.equal(output.datatype, type);
          assert.deepEqual(output.shape, [1, 3]);
          assert.deepEqual(result.data(`OUTPUT_${type}`, type), EDGE_VALUES[type], type);
        }
        assert.deepEqual(result.strings('OUTPUT_BYTES'), STRINGS);
        assert.deepEqual(result.data('OUTPUT_BYTES', 'BYTES').map((element) => Buffer.from(element).toString()), STRINGS);
      }
    });

    test('infer: plain arrays are taken for the typed ones', async () => {
      const result = await client.infer('identity_all_types', [
        ...allTypesInputs().filter((input) => !['INPUT_BOOL', 'INPUT_INT32', 'INPUT_INT64', 'INPUT_FP64'].includes(input.name)),
        { name: 'INPUT_BOOL', datatype: 'BOOL', shape: [1, 2], data: [true, false] },
        { name: 'INPUT_INT32', datatype: 'INT32', shape: [1, 2], data: [-7, 7] },
        { name: 'INPUT_INT64', datatype: 'INT64', shape: [1, 2], data: [2n ** 62n, -3] },
        { name: 'INPUT_FP64', datatype: 'FP64', shape: [1, 2], data: [0.25, -1e10] },
      ]);
      assert.deepEqual(result.data('OUTPUT_BOOL', 'BOOL'), new Uint8Array([1, 0]));
      assert.deepEqual(result.data('OUTPUT_INT32', 'INT32'), new Int32Array([-7, 7]));
      assert.deepEqual(result.data('OUTPUT_INT64', 'INT64'), new BigInt64Array([2n ** 62n, -3n]));
      assert.deepEqual(result.data('OUTPUT_FP64', 'FP64'), new Float64Array([0.25, -1e10]));
    });

    test('infer: requested outputs, classification, versions, request id', async () => {
      const one = await client.infer('simple', simpleInputs(), { outputs: [{ name: 'OUTPUT1' }], version: 1, id: 'only-1' });
      assert.deepEqual(
        one.outputs.map((output) => output.name),
        ['OUTPUT1'],
      );
      assert.deepEqual(one.data('OUTPUT1', 'INT32'), Int32Array.from({ length: 16 }, (_, i) => i - 1));
      assert.equal(one.id, 'only-1');
      const samples = JSON.parse(readFileSync(new URL('../fixtures/digits_samples.json', import.meta.url), 'utf8')) as { images: number[][]; labels: number[] };
      const classes = await client.infer('digits', [{ name: 'INPUT', datatype: 'FP32', shape: [1, 64], data: new Float32Array(samples.images[0]!) }], {
        outputs: [{ name: 'PROBABILITIES', classCount: 2 }],
      });
      const output = classes.output('PROBABILITIES');
      assert.equal(output.datatype, 'BYTES');
      assert.deepEqual(output.shape, [1, 2]);
      const [best] = classes.strings('PROBABILITIES');
      assert.match(best!, new RegExp(`^[0-9.e-]+:${samples.labels[0]}:`));
      assert.throws(() => one.output('OUTPUT0'), { name: 'ClientError', message: "the response of model 'simple' has no output 'OUTPUT0'; it has 'OUTPUT1'" });
      assert.throws(() => one.data('OUTPUT1', 'FP32'), { name: 'ClientError', message: "output 'OUTPUT1' of model 'simple' is INT32, not FP32" });
    });

    test('infer: request parameters reach the server under Triton\'s names', async () => {
      // The server checks priority and timeout: its messages name the parameters as received.
      for (const [option, name] of [
        ['priority', 'priority'],
        ['timeoutUs', 'timeout'],
      ] as const) {
        const error = await rejects(client.infer('simple', simpleInputs(), { [option]: 1.5 }));
        assert.ok(error instanceof ServerError, option);
        // Each front end refuses 1.5 by its kind, in Triton's words: TritonJson's AsUInt over HTTP, the
        // double_param gRPC carries it in over gRPC.
        const expected =
          protocol === 'http'
            ? `Unable to parse '${name}': attempt to access JSON non-unsigned-integer as unsigned-integer`
            : `invalid value type for '${name}' parameter, expected ${name === 'priority' ? 'int64_param or uint64_param' : 'int64_param'}.`;
        assert.equal(error.message, expected);
      }
      const result = await client.infer('simple', simpleInputs(), {
        priority: 1,
        timeoutUs: 5_000_000,
        sequenceId: 42n,
        sequenceStart: true,
        sequenceEnd: false,
        parameters: { custom: 'value', flag: true },
      });
      assert.deepEqual(result.data('OUTPUT0', 'INT32'), Int32Array.from({ length: 16 }, (_, i) => i + 1));
    });

    test('infer: gzip and deflate compression', async () => {
      for (const compression of ['gzip', 'deflate'] as const) {
        const result = await client.infer('simple', simpleInputs(), { compression });
        assert.deepEqual(result.data('OUTPUT1', 'INT32'), Int32Array.from({ length: 16 }, (_, i) => i - 1), compression);
      }
    });

    test('compression is on the wire: the request is smaller than its tensor', async () => {
      const proxy = await startRecordingProxy(addressOf(server, protocol));
      const proxied = connect(server, proxy.address);
      try {
        const zeros = new Uint8Array(64 * 1024);
        const inputs: InferInput[] = [{ name: 'INPUT0', datatype: 'FP32', shape: [zeros.byteLength / 4], data: new Float32Array(zeros.buffer) }];
        await proxied.infer('slow', inputs, { compression: 'gzip' });
        assert.ok(proxy.sentBytes().byteLength < zeros.byteLength / 8, `sent ${proxy.sentBytes().byteLength} bytes`);
        assert.ok(proxy.sentBytes().includes(Buffer.from([0x1f, 0x8b, 0x08])), 'a gzip member');
      } finally {
        await proxied.close();
        await proxy.close();
      }
    });

    test('connections are reused: one for sequential calls', async () => {
      const proxy = await startRecordingProxy(addressOf(server, protocol));
      const proxied = connect(server, proxy.address);
      try {
        for (let i = 0; i < 20; i++) await proxied.infer('simple', simpleInputs());
        await proxied.modelStatistics('simple');
        assert.equal(proxy.connectionCount(), 1);
      } finally {
        await proxied.close();
        await proxy.close();
      }
    });

    test('errors carry the server\'s message and status', async () => {
      const cases: Array<[Promise<unknown>, string, number, number, string]> = [
        [client.infer('nope', simpleInputs()), 'INVALID_ARG', 400, 3, "Request for unknown model: 'nope' is not found"],
        [client.infer('simple', simpleInputs(), { version: 9 }), 'NOT_FOUND', 404, 5, "Request for unknown model: 'simple' version 9 is not found"],
        // Both inputs are wrong: Triton names the one its core's map of inputs yields first, the second sent.
        [client.infer('simple', simpleInputs([1, 15])), 'INVALID_ARG', 400, 3, "unexpected shape for input 'INPUT1' for model 'simple'. Expected [-1,16], got [1,15]. NOTE: Setting a non-zero max_batch_size in the model config requires a batch dimension to be prepended to each input shape. If you want to specify the full shape including the batch dim in your input dims config, try setting max_batch_size to zero. See the model configuration docs for more info on max_batch_size."],
        [
          client.infer('broken_model', slowInputs),
          'UNAVAILABLE',
          503,
          14,
          `Request for unknown model: 'broken_model' has no available versions: ONNX Runtime cannot load the model: Load model from ${FIXTURES}/broken_model/1/model.onnx failed:Protobuf parsing failed.`,
        ],
      ];
      for (const [promise, status, httpStatus, grpcCode, message] of cases) {
        const error = await rejects(promise);
        assert.ok(error instanceof ServerError, String(error));
        assert.equal(error.status, status);
        assert.deepEqual(error.transport, transport(httpStatus, grpcCode));
        assert.equal(error.message, message);
      }
    });

    test('bad input is refused before sending, with a ClientError', async () => {
      const cases: Array<[InferInput[], string]> = [
        [[{ name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: new Int32Array(15) }], "input 'INPUT0': shape [1,16] has 16 elements but the data holds 15"],
        [[{ name: 'INPUT0', datatype: 'INT32', shape: [1, 2], data: new Float32Array(2) } as unknown as InferInput], "input 'INPUT0': INT32 data must be a Int32Array or an array of numbers, got Float32Array"],
        [[{ name: 'INPUT0', datatype: 'UINT8', shape: [1], data: [256] }], "input 'INPUT0': element 0 is 256, but UINT8 data must be integers from 0 to 255"],
        [[{ name: 'INPUT0', datatype: 'FLOAT' as 'FP32', shape: [1], data: [1] }], "input 'INPUT0': unknown datatype \"FLOAT\"; expected one of BOOL, UINT8, UINT16, UINT32, UINT64, INT8, INT16, INT32, INT64, FP16, FP32, FP64, BYTES, BF16"],
      ];
      for (const [inputs, message] of cases) {
        const error = await rejects(client.infer('simple', inputs));
        assert.equal(error.constructor, ClientError);
        assert.equal(error.message, message);
      }
    });

    test('a timeout gives up on the call with a TimeoutError; the client carries on', async () => {
      const error = await rejects(client.infer('slow', slowInputs, { timeoutMs: 1 }));
      assert.ok(error instanceof TimeoutError, String(error));
      assert.equal(error.timeoutMs, 1);
      assert.equal(error.message, "inference of model 'slow' timed out after 1 ms");
      assert.deepEqual((await client.infer('slow', slowInputs)).data('OUTPUT0', 'FP32'), new Float32Array([1, 2, 3]));
    });

    test('an AbortSignal cancels the call with an AbortError; the client carries on', async () => {
      const early = new AbortController();
      early.abort('not needed');
      const before = await rejects(client.infer('slow', slowInputs, { signal: early.signal }));
      assert.ok(before instanceof AbortError);
      assert.equal(before.message, "inference of model 'slow' was aborted: not needed");
      const controller = new AbortController();
      const call = client.infer('slow', slowInputs, { signal: controller.signal });
      setTimeout(() => controller.abort(new Error('the user left')), 10);
      const during = await rejects(call);
      assert.ok(during instanceof AbortError, String(during));
      assert.equal(during.message, "inference of model 'slow' was aborted: the user left");
      assert.equal((during.reason as Error).message, 'the user left');
      assert.equal(await client.isModelReady('slow'), true);
    });

    test('close() aborts the calls in flight and refuses new ones', async () => {
      const closing = connect(server);
      const call = closing.infer('slow', slowInputs);
      await new Promise((resolve) => setTimeout(resolve, 10));
      await closing.close();
      const error = await rejects(call);
      assert.ok(error instanceof AbortError, String(error));
      assert.ok((await rejects(closing.isServerLive())) instanceof AbortError);
    });

    test('a server that cannot be reached is a ConnectionError', async () => {
      const proxy = await startRecordingProxy(addressOf(server, protocol));
      const address = proxy.address;
      await proxy.close();
      const unreachable = connect(server, address);
      try {
        const error = await rejects(unreachable.isServerLive({ timeoutMs: 10_000 }));
        assert.ok(error instanceof ConnectionError, String(error));
        assert.match(error.message, /^server liveness failed: /);
      } finally {
        await unreachable.close();
      }
    });
  });

  describe(`${protocol}: repository load and unload`, () => {
    let server: TestServer;
    let client: InferenceClient;
    before(async () => {
      server = await startTestServer({ modelRepositories: [EXAMPLES], modelControlMode: 'explicit', startupModels: ['simple'] });
      client = connect(server);
    });
    after(async () => {
      await client.close();
      await server.close();
    });

    test('load, reload with a config, unload', async () => {
      assert.equal(await client.isModelReady('digits'), false);
      assert.deepEqual((await client.repositoryIndex()).find((entry) => entry.name === 'digits'), { name: 'digits', version: '', state: 'UNAVAILABLE', reason: 'unloaded' });
      await client.loadModel('digits');
      assert.equal(await client.isModelReady('digits'), true);
      await client.loadModel('simple', { config: simpleConfig('simple', 4) });
      assert.equal((await client.modelConfig('simple')).max_batch_size, 4);
      await client.loadModel('simple', { config: JSON.stringify(simpleConfig('simple', 8)) });
      assert.equal((await client.modelConfig('simple')).max_batch_size, 8);
      await client.unloadModel('digits', { unloadDependents: true });
      assert.equal(await client.isModelReady('digits'), false);
      assert.deepEqual((await client.repositoryIndex()).find((entry) => entry.name === 'digits'), { name: 'digits', version: '', state: 'UNAVAILABLE', reason: 'unloaded' });
    });

    test('load a model from files sent with the request', async () => {
      const model = readFileSync(`${EXAMPLES}/simple/1/model.onnx`);
      await client.loadModel('simple_copy', { config: simpleConfig('simple_copy', 8), files: { '1/model.onnx': model } });
      const result = await client.infer('simple_copy', simpleInputs());
      assert.deepEqual(result.data('OUTPUT0', 'INT32'), Int32Array.from({ length: 16 }, (_, i) => i + 1));
      await client.unloadModel('simple_copy');
      assert.equal(await client.isModelReady('simple_copy'), false);
    });

    test('a failed load is a ServerError with the reason', async () => {
      const error = await rejects(client.loadModel('nope'));
      assert.ok(error instanceof ServerError);
      assert.equal(error.status, 'INVALID_ARG');
      assert.deepEqual(error.transport, transport(400, 3));
      assert.equal(error.message, `failed to load 'nope', failed to poll from model repository; no model folder of that name in ${EXAMPLES}`);
    });

    test('the timeout parameter: a request past it in the queue is rejected by the server', async () => {
      // A batcher that waits 60 s for company, so a lone request stays queued until its own timeout.
      await client.loadModel('simple', {
        config: {
          ...simpleConfig('simple', 8),
          dynamic_batching: {
            max_queue_delay_microseconds: 60_000_000,
            default_queue_policy: { default_timeout_microseconds: 60_000_000, allow_timeout_override: true },
          },
        },
      });
      const error = await rejects(client.infer('simple', simpleInputs(), { timeoutUs: 1000 }));
      assert.ok(error instanceof ServerError, String(error));
      assert.equal(error.status, 'UNAVAILABLE');
      assert.match(error.message, /^Request timeout expired: the request waited \d+ µs in the queue of model 'simple'$/);
      await client.loadModel('simple', { config: simpleConfig('simple', 8) });
    });
  });
}
