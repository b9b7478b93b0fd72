import assert from 'node:assert/strict';
import { Agent, request as httpRequest } from 'node:http';
import { gzipSync } from 'node:zlib';
import { create } from '@bufbuild/protobuf';
import { Client, type ServiceError, credentials, status as GrpcStatus } from '@grpc/grpc-js';
import fc from 'fast-check';
import { ModelInferRequestSchema, ModelInferResponseSchema, RepositoryModelLoadRequestSchema, RepositoryModelUnloadRequestSchema } from '../../src/protocol/gen/grpc_service_pb.js';
import { deserializeMessage, serializeMessage } from '../../src/protocol/grpc-service.js';
import { serializeBytes } from '../../src/protocol/tensor-data.js';
import type { Logger } from '../../src/logging/logger.js';
import { EXAMPLES, type TestServer, startTestServer } from '../helpers/server.js';
import { type ByteMutation, anyString, byteMutation, jsonMutation, jsonText, jsonValue, mutateBytes, mutateJson } from './arbitraries.js';
import type { FuzzTarget } from './fuzz-target.js';
import { looseRequest } from './targets/grpc-codec.js';
import { readCorpus } from './targets/model-config.js';

/*
 * The end-to-end fuzz targets: arbitrary and mutated HTTP requests and gRPC messages sent to the real
 * server (examples/model_repository's `simple`, `identity_bytes` and `word_stream`, explicit model
 * control). Every answer must be a status other than 500 (gRPC: INTERNAL or UNKNOWN), with a JSON error
 * on HTTP; the server must log no internal error and keep answering valid requests (assertServerServes).
 * Infer requests go with a Content-Length or chunked, some chunked past the server's small
 * --http-max-input-size (MAX_INPUT_BYTES), which must be a 400. Loads and unloads name only models
 * that are not in the repository, so that the models the checks use stay loaded.
 */

/** The server the targets talk to, started once per run. */
export interface FuzzServer {
  readonly server: TestServer;
  /** Error lines the server logged that no input may cause: internal errors, crashed instances (not failed loads). */
  readonly unexpectedErrors: string[];
  readonly http: { readonly host: string; readonly port: number; readonly agent: Agent };
  readonly grpc: Client;
  close(): Promise<void>;
}

/** The server's --http-max-input-size: small, so that bodies past it cost little to send. */
const MAX_INPUT_BYTES = 64 * 1024;

export async function startFuzzServer(): Promise<FuzzServer> {
  const unexpectedErrors: string[] = [];
  const logger: Logger = {
    info() {},
    warning() {},
    verbose() {},
    error(component, message) {
      if (component !== 'repository') unexpectedErrors.push(`${component}: ${message}`);
    },
  };
  const server = await startTestServer({
    logger,
    modelRepositories: [EXAMPLES],
    modelControlMode: 'explicit',
    startupModels: ['simple', 'identity_bytes', 'word_stream'],
    httpMaxInputBytes: MAX_INPUT_BYTES,
  });
  const url = new URL(server.url);
  const agent = new Agent({ keepAlive: true, maxSockets: 4 });
  const grpc = new Client(server.grpcUrl!, credentials.createInsecure());
  return {
    server,
    unexpectedErrors,
    http: { host: url.hostname, port: Number(url.port), agent },
    grpc,
    close: async () => {
      grpc.close();
      agent.destroy();
      await server.close();
    },
  };
}

interface HttpCase {
  readonly method: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Uint8Array;
  /** Sent chunked in this many pieces, without a Content-Length. */
  readonly chunks?: number;
}

/** Sends one request over a kept-alive connection; resolves with the status and body, rejects if the connection fails. */
function send(target: FuzzServer, fields: HttpCase): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: target.http.host,
        port: target.http.port,
        agent: target.http.agent,
        method: fields.method,
        path: fields.path,
        headers: fields.chunks === undefined ? { ...fields.headers, 'content-length': String(fields.body.byteLength) } : { ...fields.headers, 'transfer-encoding': 'chunked' },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode!, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    const pieceBytes = Math.ceil(fields.body.byteLength / (fields.chunks ?? 1));
    for (let at = 0; fields.chunks !== undefined && at < fields.body.byteLength; at += pieceBytes) req.write(fields.body.subarray(at, at + pieceBytes));
    req.end(fields.chunks === undefined ? fields.body : undefined);
  });
}

/** No 500; an error answer is Triton's `{"error": "..."}` (on generate_stream, possibly as its one event). */
async function expectHttpAnswer(target: FuzzServer, fields: HttpCase): Promise<void> {
  const logged = target.unexpectedErrors.length;
  const { status, body } = await send(target, fields);
  assertNoUnexpectedErrors(target, logged);
  assert.ok(status !== 500 && status >= 200 && status < 600, `HTTP ${status} for ${fields.method} ${fields.path}: ${body.toString('utf8', 0, 500)}`);
  if (fields.chunks !== undefined && fields.body.byteLength > MAX_INPUT_BYTES) assert.equal(status, 400, `HTTP ${status} for a body of ${fields.body.byteLength} bytes: ${body.toString('utf8', 0, 500)}`);
  if (status >= 400 && fields.method !== 'HEAD') {
    // generate_stream: an error the model sent first is an event, under its status (Triton's GenerateRequestClass).
    const text = body.toString('utf8');
    const json = JSON.parse(text.startsWith('data: ') ? text.slice('data: '.length) : text) as { error?: unknown };
    assert.equal(typeof json.error, 'string', `HTTP ${status} without an error message: ${body.toString('utf8', 0, 200)}`);
  }
}

/** No error lines logged since the first `since` (the case that logged one fails, not every case after it). */
function assertNoUnexpectedErrors(target: FuzzServer, since = 0): void {
  assert.deepEqual(target.unexpectedErrors.slice(since), [], 'the server logged an error that no request may cause');
}

/** Header values as a client may send them (printable ASCII: node:http refuses others before sending). */
const headerText = fc.string({ unit: 'binary-ascii', maxLength: 24 }).map((text) => text.replace(/[^\x20-\x7e]/g, ''));

/** 0 to 15: simple's inputs, so that OUTPUT0 (their sum) is 0, 2, ..., 30. */
const counting = Array.from({ length: 16 }, (_, i) => i);
const simpleRequest = {
  inputs: [
    { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: counting },
    { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: counting },
  ],
  outputs: [{ name: 'OUTPUT0' }, { name: 'OUTPUT1', parameters: { binary_data: true } }],
};
const bytesRequest = { id: 'b', inputs: [{ name: 'INPUT0', datatype: 'BYTES', shape: [1, 2], data: ['a', 'é'] }], parameters: { binary_data_output: true } };

/** The simple request with binary inputs: its JSON header and the 128 bytes after it. */
function binarySimpleRequest(): { header: unknown; tensors: Buffer } {
  return {
    header: {
      inputs: simpleRequest.inputs.map(({ data: _data, ...input }) => ({ ...input, parameters: { binary_data_size: 64 } })),
    },
    tensors: Buffer.from(new Int32Array([...counting, ...counting]).buffer),
  };
}

/** Mostly the right model; each other dimension of an infer case is mostly right too, so that most cases reach the codec. */
const modelPath = fc
  .tuple(
    fc.oneof({ arbitrary: fc.constant('simple'), weight: 6 }, fc.constantFrom('nope', '%zz', 'simple%2F..')),
    fc.oneof({ arbitrary: fc.constantFrom('', '/versions/1'), weight: 6 }, fc.constantFrom('/versions/2', '/versions/x', '/versions/99999999999999999999')),
  )
  .map(([model, version]) => `/v2/models/${model}${version}/infer`);

const mostly = <T>(usual: fc.Arbitrary<T>, other: fc.Arbitrary<T>): fc.Arbitrary<T> => fc.oneof({ arbitrary: usual, weight: 4 }, { arbitrary: other, weight: 1 });

/** A header length that fits, misses by a little, or is no number at all. */
const headerLength = (exact: number): fc.Arbitrary<string | undefined> =>
  mostly(fc.constant(String(exact)), fc.oneof(fc.constant(undefined), fc.nat({ max: exact + 200 }).map(String), fc.constantFrom('0', '-1', '1e3', ' 12', '', '99999999999999999999'), headerText));

/** An infer request: JSON or binary, mutated in its JSON or its bytes, with headers that may lie about it. */
const inferCase: fc.Arbitrary<HttpCase> = fc
  .record({
    path: modelPath,
    isBinary: fc.boolean(),
    isBytesModel: fc.boolean(),
    jsonMutations: mostly(fc.array(jsonMutation, { maxLength: 1 }), fc.array(jsonMutation, { maxLength: 3 })),
    byteMutations: mostly<ByteMutation[]>(fc.constant([]), fc.array(byteMutation, { maxLength: 2 })),
    encoding: mostly(fc.constantFrom(undefined, 'gzip'), fc.constantFrom('deflate', 'br', 'gzip, gzip', 'identity')),
    isCompressed: mostly(fc.constant(true), fc.constant(false)),
    contentType: fc.option(fc.constantFrom('application/json', 'application/octet-stream', 'text/plain', 'multipart/form-data'), { nil: undefined }),
    chunking: mostly(
      fc.constant(undefined),
      fc.record({ chunks: fc.integer({ min: 1, max: 16 }), bytesPastLimit: fc.oneof(fc.constant(undefined), fc.integer({ min: 1, max: MAX_INPUT_BYTES })) }),
    ),
  })
  .chain((fields) => {
    const { header, tensors } = fields.isBinary ? binarySimpleRequest() : { header: fields.isBytesModel ? bytesRequest : simpleRequest, tensors: Buffer.alloc(0) };
    const json = Buffer.from(jsonText(fields.jsonMutations.reduce<unknown>(mutateJson, header)));
    return headerLength(json.byteLength).map((length): HttpCase => {
      let body = mutateBytes(Buffer.concat([json, tensors]), fields.byteMutations);
      if (fields.encoding === 'gzip' && fields.isCompressed) body = gzipSync(body);
      const pastLimit = fields.chunking?.bytesPastLimit;
      // Trailing spaces: a JSON body that would be valid but for its size.
      if (pastLimit !== undefined) body = Buffer.concat([body, Buffer.alloc(Math.max(0, MAX_INPUT_BYTES - body.byteLength) + pastLimit, ' ')]);
      return {
        method: 'POST',
        path: fields.isBytesModel && !fields.isBinary ? fields.path.replace('/models/simple', '/models/identity_bytes') : fields.path,
        headers: {
          ...(fields.isBinary && length !== undefined ? { 'inference-header-content-length': length } : {}),
          ...(fields.encoding !== undefined ? { 'content-encoding': fields.encoding } : {}),
          ...(fields.contentType !== undefined ? { 'content-type': fields.contentType } : {}),
        },
        body,
        ...(fields.chunking !== undefined ? { chunks: fields.chunking.chunks } : {}),
      };
    });
  });

const segment = fc.oneof(
  fc.constantFrom('v2', 'models', 'simple', 'identity_bytes', 'versions', '1', 'infer', 'ready', 'config', 'stats', 'repository', 'index', 'logging', 'health', 'live', 'generate', 'generate_stream', '', '%', '%2e%2e'),
  anyString.map(encodeURIComponent),
);

/** Any method, path and headers, with any body: the router, the access checks and every handler's parser. */
const anyCase: fc.Arbitrary<HttpCase> = fc.record({
  method: fc.constantFrom('GET', 'POST', 'HEAD', 'PUT', 'DELETE', 'OPTIONS'),
  path: fc.array(segment, { maxLength: 6 }).map((segments) => `/${segments.join('/')}`),
  headers: fc.dictionary(fc.constantFrom('origin', 'authorization', 'content-type', 'content-encoding', 'accept-encoding', 'inference-header-content-length', 'x-fuzz'), headerText, { maxKeys: 3 }),
  body: fc.oneof(fc.uint8Array({ maxLength: 64 }), jsonValue.map((value) => Buffer.from(jsonText(value)))),
}).map((fields) => (fields.path.startsWith('/v2/repository/models/') ? { ...fields, path: '/v2/repository/index' } : fields));

/** A model name that is not in the repository, so that loads and unloads leave `simple` and `identity_bytes` alone. */
const foreignModel = fc.constantFrom('fuzz_model', 'fuzz%2F..%2Fsimple', '..', '%2e%2e', 'fuzz%20model', 'a'.repeat(300));

const loadParameters = fc.dictionary(
  fc.oneof(fc.constantFrom('config', 'file:1/model.onnx', 'file:config.pbtxt', 'file:../x', 'file:', 'file:1/', 'file:1/model.py', 'file:1/a', 'file:1/a/b', `file:1/${'x'.repeat(300)}`), anyString),
  fc.oneof(jsonValue, fc.uint8Array({ maxLength: 32 }).map((bytes) => Buffer.from(bytes).toString('base64')), jsonValue.map(jsonText)),
  { maxKeys: 3 },
);

/** One of Triton's configs (test/fixtures/triton-configs) as JSON text for a load's `config`, named fuzz_model, mutated. */
const corpusConfig: fc.Arbitrary<string> = fc.record({ index: fc.nat(), mutations: fc.array(jsonMutation, { maxLength: 2 }) }).map(({ index, mutations }) => {
  const { json } = readCorpus();
  return jsonText(mutations.reduce<unknown>(mutateJson, { ...(json[index % json.length] as object), name: 'fuzz_model' }));
});

/** A load of fuzz_model with a mutated config of Triton's and, sometimes, an arbitrary model file. */
const corpusLoad: fc.Arbitrary<HttpCase> = fc
  .record({ config: corpusConfig, model: fc.uint8Array({ maxLength: 64 }), isModelFileSent: fc.boolean() })
  .map(({ config, model, isModelFileSent }) => {
    const parameters = { config, ...(isModelFileSent ? { 'file:1/model.onnx': Buffer.from(model).toString('base64') } : {}) };
    return { method: 'POST', path: '/v2/repository/models/fuzz_model/load', headers: { 'content-type': 'application/json' }, body: Buffer.from(JSON.stringify({ parameters })) };
  });

/** The generate extension: a model's inputs by name, parameters, and anything else, to generate and generate_stream. */
const generateCase: fc.Arbitrary<HttpCase> = fc
  .record({
    model: fc.constantFrom('simple', 'identity_bytes', 'word_stream'),
    route: fc.constantFrom('generate', 'generate_stream'),
    mutations: fc.array(jsonMutation, { maxLength: 2 }),
    base: fc.constantFrom<unknown>({ text_input: 'fuzz the words', parameters: { stream: true } }, { INPUT0: ['a', 'b'] }, { INPUT0: counting, INPUT1: counting }, {}),
  })
  .map(({ model, route, mutations, base }) => ({
    method: 'POST',
    path: `/v2/models/${model}/${route}`,
    headers: { 'content-type': 'application/json' },
    body: Buffer.from(jsonText(mutations.reduce<unknown>(mutateJson, base))),
  }));

/** The control routes: repository index, load and unload of unknown models, logging, with any JSON. */
const controlCase: fc.Arbitrary<HttpCase> = fc.oneof(
  corpusLoad,
  fc.record({ model: foreignModel, action: fc.constantFrom('load', 'unload'), parameters: fc.oneof(loadParameters, jsonValue) }).map(({ model, action, parameters }) => ({
    method: 'POST',
    path: `/v2/repository/models/${model}/${action}`,
    headers: { 'content-type': 'application/json' },
    body: Buffer.from(jsonText({ parameters })),
  })),
  fc.record({ path: fc.constantFrom('/v2/repository/index', '/v2/logging'), body: jsonValue }).map(({ path, body }) => ({
    method: 'POST',
    path,
    headers: { 'content-type': 'application/json' },
    // No log_file: changing it is refused, but a refusal is all the fuzzer would learn.
    body: Buffer.from(jsonText(typeof body === 'object' && body !== null && 'log_file' in body ? { ...body, log_file: undefined } : body)),
  })),
);

/** A gRPC call with raw bytes as the request: the server's fromBinary sees exactly these. */
function callGrpc(target: FuzzServer, method: string, body: Uint8Array): Promise<{ error: ServiceError | null; response: Buffer | undefined }> {
  return new Promise((resolve) => {
    target.grpc.makeUnaryRequest(
      `/inference.GRPCInferenceService/${method}`,
      (bytes: Buffer) => bytes,
      (bytes: Buffer) => bytes,
      Buffer.from(body),
      (error, response) => resolve({ error, response }),
    );
  });
}

/** No INTERNAL or UNKNOWN, but for grpc-js's own answer to bytes that are not the request message. */
async function expectGrpcAnswer(target: FuzzServer, method: string, body: Uint8Array): Promise<void> {
  const logged = target.unexpectedErrors.length;
  const { error } = await callGrpc(target, method, body);
  assertNoUnexpectedErrors(target, logged);
  if (error === null) return;
  assertGrpcStatus(method, error);
}

function assertGrpcStatus(method: string, error: { readonly code: GrpcStatus; readonly details: string }): void {
  const isDeserializeFailure = error.code === GrpcStatus.INTERNAL && error.details === 'Error deserializing request';
  assert.ok(isDeserializeFailure || (error.code !== GrpcStatus.INTERNAL && error.code !== GrpcStatus.UNKNOWN), `gRPC ${method}: ${GrpcStatus[error.code]} ${error.details}`);
}

/** A ModelStreamInfer stream that sends `messages` and ends: resolves with its final status and reply count once the server ends it. */
function streamGrpc(target: FuzzServer, messages: readonly Uint8Array[]): Promise<{ code: GrpcStatus; details: string; replies: number }> {
  return new Promise((resolve) => {
    let replies = 0;
    const call = target.grpc.makeBidiStreamRequest(
      '/inference.GRPCInferenceService/ModelStreamInfer',
      (bytes: Buffer) => bytes,
      (bytes: Buffer) => bytes,
    );
    call.on('data', () => replies++);
    call.on('error', () => {});
    call.on('status', (status) => resolve({ code: status.code, details: status.details, replies }));
    for (const message of messages) call.write(Buffer.from(message));
    call.end();
  });
}

const validGrpcRequest = (modelName: string) =>
  serializeMessage(
    ModelInferRequestSchema,
    create(ModelInferRequestSchema, {
      modelName,
      inputs: ['INPUT0', 'INPUT1'].map((name) => ({ name, datatype: 'INT32', shape: [1n, 16n] })),
      rawInputContents: [0, 1].map(() => new Uint8Array(new Int32Array(counting).buffer)),
    }),
  );

/** Model names that are not in the repository, unescaped as gRPC carries them. */
const foreignGrpcModel = fc.constantFrom('fuzz_model', '../simple', '..', 'fuzz model', 'simple/../x', '', 'a'.repeat(300));

const repositoryParameter = fc.oneof(
  fc.boolean().map((value) => ({ parameterChoice: { case: 'boolParam' as const, value } })),
  fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map((value) => ({ parameterChoice: { case: 'int64Param' as const, value } })),
  fc.oneof(anyString, corpusConfig).map((value) => ({ parameterChoice: { case: 'stringParam' as const, value } })),
  fc.uint8Array({ maxLength: 64 }).map((value) => ({ parameterChoice: { case: 'bytesParam' as const, value } })),
);

const grpcControlCall = fc.oneof(
  fc
    .record({
      modelName: foreignGrpcModel,
      parameters: fc.dictionary(fc.oneof(fc.constantFrom('config', 'file:1/model.onnx', 'file:config.pbtxt', 'file:../x', 'file:', 'file:1/', 'file:1/a', 'file:1/a/b', `file:1/${'x'.repeat(300)}`), anyString), repositoryParameter, { maxKeys: 3 }),
    })
    .map((init) => ({ method: 'RepositoryModelLoad', body: serializeMessage(RepositoryModelLoadRequestSchema, create(RepositoryModelLoadRequestSchema, init)) })),
  foreignGrpcModel.map((modelName) => ({ method: 'RepositoryModelUnload', body: serializeMessage(RepositoryModelUnloadRequestSchema, create(RepositoryModelUnloadRequestSchema, { modelName })) })),
);

/** One message of a ModelStreamInfer stream: a valid or loose request for a real model, mutated bytes, or any bytes. */
const streamMessage: fc.Arbitrary<Uint8Array> = fc.oneof(
  fc.constant(validGrpcRequest('simple')),
  fc.boolean().map((isEmptyFinalWanted) =>
    serializeMessage(
      ModelInferRequestSchema,
      create(ModelInferRequestSchema, {
        modelName: 'word_stream',
        id: 'w',
        parameters: { triton_enable_empty_final_response: { parameterChoice: { case: 'boolParam', value: isEmptyFinalWanted } } },
        inputs: [{ name: 'text_input', datatype: 'BYTES', shape: [1n] }],
        rawInputContents: [serializeBytes([Buffer.from('fuzz the words')])],
      }),
    ),
  ),
  fc.record({ init: looseRequest, model: fc.constantFrom('simple', 'word_stream') }).map(({ init, model }) => serializeMessage(ModelInferRequestSchema, create(ModelInferRequestSchema, { ...init, modelName: model }))),
  fc.array(byteMutation, { minLength: 1, maxLength: 2 }).map((mutations) => mutateBytes(validGrpcRequest('simple'), mutations)),
  fc.uint8Array({ maxLength: 32 }),
);

const READ_ONLY_RPCS = ['ModelInfer', 'ModelReady', 'ModelMetadata', 'ModelConfig', 'ModelStatistics', 'RepositoryIndex', 'ServerMetadata', 'ServerReady'];

/** The end-to-end targets; `server()` gives the started server when a property runs. */
export function serverTargets(server: () => FuzzServer): readonly FuzzTarget[] {
  const PARSER = 'end to end (the real server, HTTP and gRPC)';
  return [
    { parser: PARSER, name: 'HTTP infer requests, JSON and binary, mutated, with lying headers: no 500', property: () => fc.asyncProperty(inferCase, (fields) => expectHttpAnswer(server(), fields)) },
    { parser: PARSER, name: 'HTTP: any method, path, headers and body: no 500', property: () => fc.asyncProperty(anyCase, (fields) => expectHttpAnswer(server(), fields)) },
    { parser: PARSER, name: 'HTTP control routes (load and unload of unknown models, index, logging) with any JSON: no 500', property: () => fc.asyncProperty(controlCase, (fields) => expectHttpAnswer(server(), fields)) },
    { parser: PARSER, name: 'HTTP generate and generate_stream with mutated and arbitrary JSON: no 500', property: () => fc.asyncProperty(generateCase, (fields) => expectHttpAnswer(server(), fields)) },
    {
      parser: PARSER,
      name: 'gRPC ModelStreamInfer with loose, mutated and arbitrary messages for simple and word_stream: every message answered in the stream, which ends OK',
      property: () =>
        fc.asyncProperty(fc.array(streamMessage, { minLength: 1, maxLength: 4 }), async (messages) => {
          const logged = server().unexpectedErrors.length;
          const { code, details, replies } = await streamGrpc(server(), messages);
          assertNoUnexpectedErrors(server(), logged);
          assert.equal(code, GrpcStatus.OK, `ModelStreamInfer ended with ${GrpcStatus[code]}: ${details}`);
          assert.ok(replies >= messages.length, `${replies} replies to ${messages.length} messages`);
        }),
    },
    {
      parser: PARSER,
      name: 'gRPC RepositoryModelLoad and RepositoryModelUnload of unknown models, with mutated configs and arbitrary files: no INTERNAL',
      property: () => fc.asyncProperty(grpcControlCall, ({ method, body }) => expectGrpcAnswer(server(), method, body)),
    },
    {
      parser: PARSER,
      name: "gRPC: arbitrary bytes to the read-only RPCs, ModelInferRequests mutated in their bytes or fields: no INTERNAL but the deserializer's",
      property: () =>
        fc.asyncProperty(
          fc.oneof(
            fc.record({ method: fc.constantFrom(...READ_ONLY_RPCS), body: fc.uint8Array({ maxLength: 64 }) }),
            fc.record({ method: fc.constant('ModelInfer'), body: looseRequest.map((init) => serializeMessage(ModelInferRequestSchema, create(ModelInferRequestSchema, { ...init, modelName: 'simple' }))) }),
            fc.record({ method: fc.constant('ModelInfer'), body: fc.tuple(fc.constantFrom('simple', 'identity_bytes', 'nope'), fc.array(byteMutation, { minLength: 1, maxLength: 3 })).map(([model, mutations]) => mutateBytes(validGrpcRequest(model), mutations)) }),
          ),
          ({ method, body }) => expectGrpcAnswer(server(), method, body),
        ),
    },
  ];
}

/** The server still answers valid requests over both protocols, with the right values, and logged no internal error. */
export async function assertServerServes(target: FuzzServer): Promise<void> {
  assertNoUnexpectedErrors(target);
  const { status, body } = await send(target, { method: 'POST', path: '/v2/models/simple/infer', headers: { 'content-type': 'application/json' }, body: Buffer.from(JSON.stringify({ inputs: simpleRequest.inputs })) });
  assert.equal(status, 200, body.toString());
  const json = JSON.parse(body.toString()) as { outputs: Array<{ name: string; data: number[] }> };
  assert.deepEqual(json.outputs.find((output) => output.name === 'OUTPUT0')?.data, counting.map((value) => value * 2));
  const { error, response } = await callGrpc(target, 'ModelInfer', validGrpcRequest('simple'));
  assert.equal(error, null);
  const decoded = deserializeMessage(ModelInferResponseSchema, response!);
  const sum = decoded.rawOutputContents[0]!;
  assert.deepEqual([...new Int32Array(sum.buffer.slice(sum.byteOffset, sum.byteOffset + sum.byteLength))], counting.map((value) => value * 2));
}
