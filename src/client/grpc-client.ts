import { type Message, type MessageInitShape, create } from '@bufbuild/protobuf';
import { type CallOptions as GrpcCallOptions, type ChannelCredentials, type ChannelOptions, Client, type MethodDefinition, Metadata, type ServiceError, credentials } from '@grpc/grpc-js';
import {
  ModelConfigRequestSchema,
  ModelMetadataRequestSchema,
  ModelReadyRequestSchema,
  ModelRepositoryParameterSchema,
  ModelStatisticsRequestSchema,
  RepositoryIndexRequestSchema,
  RepositoryModelLoadRequestSchema,
  RepositoryModelUnloadRequestSchema,
  ServerLiveRequestSchema,
  ServerMetadataRequestSchema,
  ServerReadyRequestSchema,
  SystemSharedMemoryRegisterRequestSchema,
  SystemSharedMemoryStatusRequestSchema,
  SystemSharedMemoryUnregisterRequestSchema,
} from '../protocol/gen/grpc_service_pb.js';
import { ModelConfigSchema } from '../protocol/gen/model_config_pb.js';
import { inferenceService } from '../protocol/grpc-service.js';
import { toPlainObject } from '../protocol/plain-object.js';
import { AbortError, ClientError, ConnectionError, ServerError, TimeoutError, statusFromGrpc } from './errors.js';
import { decodeModelInferResponse, encodeModelInferRequest } from './grpc-codec.js';
import { indexEntryFromGrpc, modelMetadataFromGrpc, serverMetadataFromGrpc, statisticsFromGrpc } from './grpc-messages.js';
import { prepareAnyInput } from './infer-input.js';
import type { InferResult } from './infer-result.js';
import { InferStream, type StreamOptions } from './infer-stream.js';
import type {
  CallOptions,
  Compression,
  InferInput,
  SharedMemoryInput,
  SharedMemoryRegionStatus,
  InferOptions,
  InferenceClient,
  LoadModelOptions,
  ModelConfig,
  ModelMetadata,
  ModelStatistics,
  ParameterValue,
  RepositoryIndexEntry,
  RepositoryIndexOptions,
  ServerMetadata,
  UnloadModelOptions,
  VersionOptions,
} from './types.js';
import { configText, versionString } from './wire-messages.js';

export interface GrpcClientOptions {
  /** Default `timeoutMs` of every call (its gRPC deadline); none by default. */
  readonly timeoutMs?: number;
  /** Default message compression of every call; none by default. */
  readonly compression?: Compression;
  /** More @grpc/grpc-js channel options; they override the client's own. */
  readonly channelOptions?: ChannelOptions;
  /** Metadata sent with every call and stream, e.g. Triton's `triton-grpc-protocol-<key>` of restricted protocols. */
  readonly metadata?: Readonly<Record<string, string>>;
  /** A bearer token sent with every call as `authorization: Bearer <token>` metadata (the server's `--auth-token-file`). */
  readonly authToken?: string;
  /**
   * TLS (the server's `--grpc-use-ssl`), as tritonclient.grpc's `ssl=True`; on by itself when any of
   * the three PEM options below is given.
   */
  readonly ssl?: boolean;
  /** PEM CA certificates that sign the server's certificate (tritonclient's `root_certificates`); Node's bundled CAs by default. */
  readonly rootCertificates?: string | Uint8Array;
  /** The client's PEM private key, for a server that asks for a certificate (`--grpc-use-ssl-mutual`). */
  readonly privateKey?: string | Uint8Array;
  /** The client's PEM certificate chain, with `privateKey`. */
  readonly certificateChain?: string | Uint8Array;
}

/** The HTTP/2 flow-control window the client asks for: 16 MiB, as the server's (large tensors need it). */
const FLOW_CONTROL_WINDOW_BYTES = 16 * 1024 * 1024;
/** @grpc/grpc-js CompressionAlgorithms. */
const COMPRESSION_ALGORITHM: Record<Compression, number> = { none: 0, deflate: 1, gzip: 2 };

/** One unary call: the RPC, its request message, the call's options. */
interface UnaryCall<Request, Response> extends CallOptions {
  readonly method: MethodDefinition<Request, Response>;
  readonly message: Request;
  readonly compression?: Compression;
}

type RepositoryParameterInit = MessageInitShape<typeof ModelRepositoryParameterSchema>;

/**
 * A load parameter as a ModelRepositoryParameter, which has no double or uint64 member: such a value
 * travels unset, as Triton's clients send it.
 */
function repositoryParameter(value: ParameterValue): RepositoryParameterInit {
  if (typeof value === 'boolean') return { parameterChoice: { case: 'boolParam', value } };
  if (typeof value === 'string') return { parameterChoice: { case: 'stringParam', value } };
  const integer = typeof value === 'bigint' ? value : Number.isSafeInteger(value) ? BigInt(value) : undefined;
  return integer !== undefined && integer >= INT64_MIN && integer <= INT64_MAX ? { parameterChoice: { case: 'int64Param', value: integer } } : {};
}

/** Plain HTTP/2, or TLS with the options' PEM files (tritonclient.grpc's `ssl`, `root_certificates`, `private_key`, `certificate_chain`). */
function channelCredentials(options: GrpcClientOptions): ChannelCredentials {
  const isSsl = options.ssl ?? (options.rootCertificates !== undefined || options.privateKey !== undefined || options.certificateChain !== undefined);
  if (!isSsl) return credentials.createInsecure();
  const pem = (value: string | Uint8Array | undefined): Buffer | null =>
    value === undefined ? null : typeof value === 'string' ? Buffer.from(value) : Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  return credentials.createSsl(pem(options.rootCertificates), pem(options.privateKey), pem(options.certificateChain));
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * A client of the KServe v2 gRPC protocol (inference.GRPCInferenceService) with Triton's extensions,
 * for Nereid, Triton or any KServe v2 server. Every call goes over one HTTP/2 connection (a second one
 * only for calls that ask for another compression than the client's: grpc-js compresses per channel).
 *
 * ```ts
 * const client = new GrpcClient('localhost:8001');
 * const result = await client.infer('simple', inputs);
 * const stream = client.stream();            // ModelStreamInfer
 * stream.send('simple', inputs); stream.end();
 * for await (const { result, error } of stream) { … }
 * ```
 */
export class GrpcClient implements InferenceClient {
  readonly #target: string;
  readonly #options: GrpcClientOptions;
  readonly #channels = new Map<Compression, Client>();
  readonly #inFlight = new Set<(error: ClientError) => void>();
  readonly #credentials: ChannelCredentials;
  #isClosed = false;

  /** `url`: `host:port`, as tritonclient takes it (a `grpc://` or `http://` prefix is dropped). */
  constructor(url: string, options: GrpcClientOptions = {}) {
    this.#target = url.replace(/^(grpc|http):\/\//i, '').replace(/\/$/, '');
    this.#options = options;
    if ((options.privateKey === undefined) !== (options.certificateChain === undefined)) {
      throw new ClientError('GrpcClient: privateKey and certificateChain go together (the client certificate and its key)');
    }
    this.#credentials = channelCredentials(options);
  }

  /** A new Metadata per call (grpc-js takes ownership of it) with the client's metadata and token. */
  #metadata(): Metadata {
    const metadata = new Metadata();
    for (const [key, value] of Object.entries(this.#options.metadata ?? {})) metadata.set(key, value);
    if (this.#options.authToken !== undefined) metadata.set('authorization', `Bearer ${this.#options.authToken}`);
    return metadata;
  }

  async isServerLive(options: CallOptions = {}): Promise<boolean> {
    return (await this.#unary('server liveness', { ...options, method: inferenceService.serverLive, message: create(ServerLiveRequestSchema) })).live;
  }

  async isServerReady(options: CallOptions = {}): Promise<boolean> {
    return (await this.#unary('server readiness', { ...options, method: inferenceService.serverReady, message: create(ServerReadyRequestSchema) })).ready;
  }

  async isModelReady(modelName: string, options: VersionOptions = {}): Promise<boolean> {
    try {
      const request = create(ModelReadyRequestSchema, { name: modelName, version: versionString(options.version) });
      return (await this.#unary(`readiness of model '${modelName}'`, { ...options, method: inferenceService.modelReady, message: request })).ready;
    } catch (error) {
      // Over HTTP an unknown model answers 400, which reads as not ready; some servers answer gRPC with an error too.
      if (error instanceof ServerError) return false;
      throw error;
    }
  }

  async serverMetadata(options: CallOptions = {}): Promise<ServerMetadata> {
    return serverMetadataFromGrpc(await this.#unary('server metadata', { ...options, method: inferenceService.serverMetadata, message: create(ServerMetadataRequestSchema) }));
  }

  async modelMetadata(modelName: string, options: VersionOptions = {}): Promise<ModelMetadata> {
    const request = create(ModelMetadataRequestSchema, { name: modelName, version: versionString(options.version) });
    return modelMetadataFromGrpc(await this.#unary(`metadata of model '${modelName}'`, { ...options, method: inferenceService.modelMetadata, message: request }));
  }

  /** The configuration in the .proto's field names, with every field (64-bit integers and enums as strings: plain-object.ts). */
  async modelConfig(modelName: string, options: VersionOptions = {}): Promise<ModelConfig> {
    const request = create(ModelConfigRequestSchema, { name: modelName, version: versionString(options.version) });
    const { config } = await this.#unary(`config of model '${modelName}'`, { ...options, method: inferenceService.modelConfig, message: request });
    return toPlainObject(ModelConfigSchema, config ?? create(ModelConfigSchema));
  }

  async repositoryIndex(options: RepositoryIndexOptions = {}): Promise<RepositoryIndexEntry[]> {
    const request = create(RepositoryIndexRequestSchema, { ready: options.ready === true });
    return (await this.#unary('repository index', { ...options, method: inferenceService.repositoryIndex, message: request })).models.map(indexEntryFromGrpc);
  }

  async loadModel(modelName: string, options: LoadModelOptions = {}): Promise<void> {
    const parameters = Object.fromEntries(Object.entries(options.parameters ?? {}).map(([key, value]) => [key, repositoryParameter(value)]));
    if (options.config !== undefined) parameters.config = { parameterChoice: { case: 'stringParam', value: configText(options.config) } };
    for (const [path, bytes] of Object.entries(options.files ?? {})) parameters[`file:${path}`] = { parameterChoice: { case: 'bytesParam', value: bytes } };
    const request = create(RepositoryModelLoadRequestSchema, { modelName, parameters });
    await this.#unary(`load of model '${modelName}'`, { ...options, method: inferenceService.repositoryModelLoad, message: request });
  }

  async unloadModel(modelName: string, options: UnloadModelOptions = {}): Promise<void> {
    const parameters: Record<string, RepositoryParameterInit> = options.unloadDependents === true ? { unload_dependents: repositoryParameter(true) } : {};
    const request = create(RepositoryModelUnloadRequestSchema, { modelName, parameters });
    await this.#unary(`unload of model '${modelName}'`, { ...options, method: inferenceService.repositoryModelUnload, message: request });
  }

  async modelStatistics(modelName?: string, options: VersionOptions = {}): Promise<ModelStatistics[]> {
    const request = create(ModelStatisticsRequestSchema, { name: modelName ?? '', version: versionString(options.version) });
    const what = modelName === undefined ? 'statistics' : `statistics of model '${modelName}'`;
    return statisticsFromGrpc(await this.#unary(what, { ...options, method: inferenceService.modelStatistics, message: request }));
  }

  async infer(modelName: string, inputs: ReadonlyArray<InferInput | SharedMemoryInput>, options: InferOptions = {}): Promise<InferResult> {
    const request = encodeModelInferRequest(modelName, inputs.map(prepareAnyInput), options);
    return decodeModelInferResponse(await this.#unary(`inference of model '${modelName}'`, { ...options, method: inferenceService.modelInfer, message: request }));
  }

  async registerSystemSharedMemory(name: string, key: string, byteSize: number, options: CallOptions & { readonly offset?: number } = {}): Promise<void> {
    const message = create(SystemSharedMemoryRegisterRequestSchema, { name, key, offset: BigInt(options.offset ?? 0), byteSize: BigInt(byteSize) });
    await this.#unary(`registration of shared memory region '${name}'`, { ...options, method: inferenceService.systemSharedMemoryRegister, message });
  }

  async systemSharedMemoryStatus(name?: string, options: CallOptions = {}): Promise<SharedMemoryRegionStatus[]> {
    const message = create(SystemSharedMemoryStatusRequestSchema, { name: name ?? '' });
    const { regions } = await this.#unary('shared memory status', { ...options, method: inferenceService.systemSharedMemoryStatus, message });
    return Object.values(regions).map((region) => ({ name: region.name, key: region.key, offset: Number(region.offset), byteSize: Number(region.byteSize) }));
  }

  async unregisterSystemSharedMemory(name?: string, options: CallOptions = {}): Promise<void> {
    const message = create(SystemSharedMemoryUnregisterRequestSchema, { name: name ?? '' });
    await this.#unary('shared memory unregistration', { ...options, method: inferenceService.systemSharedMemoryUnregister, message });
  }

  /**
   * Opens a ModelStreamInfer stream: requests go out with `send`, and the stream is an async iterable
   * of their responses, in the order the server answers. A request that fails comes back as a response
   * with `error` and the stream carries on; a failure of the stream itself ends the iteration with it.
   */
  stream(options: StreamOptions = {}): InferStream {
    if (this.#isClosed) throw new AbortError('the stream', 'the client was closed');
    const compression = options.compression ?? this.#options.compression ?? 'none';
    const timeoutMs = options.timeoutMs ?? this.#options.timeoutMs;
    const { path, requestSerialize, responseDeserialize } = inferenceService.modelStreamInfer;
    const open = () =>
      this.#channel(compression).makeBidiStreamRequest(path, requestSerialize, responseDeserialize, this.#metadata(), timeoutMs !== undefined ? { deadline: Date.now() + timeoutMs } : {});
    const stream = new InferStream(open, { ...options, timeoutMs }, (error, what) => grpcClientError(error, what, timeoutMs));
    this.#inFlight.add(stream.cancelWith);
    stream.whenFinished.then(() => this.#inFlight.delete(stream.cancelWith));
    return stream;
  }

  /** Cancels the calls and streams in flight (they fail with AbortError) and closes the connections. */
  async close(): Promise<void> {
    this.#isClosed = true;
    for (const cancel of this.#inFlight) cancel(new AbortError('the call', 'the client was closed'));
    for (const channel of this.#channels.values()) channel.close();
    this.#channels.clear();
  }

  #channel(compression: Compression): Client {
    let channel = this.#channels.get(compression);
    if (channel === undefined) {
      channel = new Client(this.#target, this.#credentials, {
        'grpc.max_receive_message_length': -1,
        'grpc.max_send_message_length': -1,
        'grpc-node.flow_control_window': FLOW_CONTROL_WINDOW_BYTES,
        'grpc.default_compression_algorithm': COMPRESSION_ALGORITHM[compression],
        ...this.#options.channelOptions,
      });
      this.#channels.set(compression, channel);
    }
    return channel;
  }

  #unary<Request extends Message, Response extends Message>(what: string, call: UnaryCall<Request, Response>): Promise<Response> {
    const { method, message, signal } = call;
    if (this.#isClosed) return Promise.reject(new AbortError(what, 'the client was closed'));
    if (signal?.aborted === true) return Promise.reject(new AbortError(what, signal.reason));
    const timeoutMs = call.timeoutMs ?? this.#options.timeoutMs;
    const channel = this.#channel(call.compression ?? this.#options.compression ?? 'none');
    const callOptions: GrpcCallOptions = timeoutMs !== undefined ? { deadline: Date.now() + timeoutMs } : {};
    return new Promise((resolve, reject) => {
      let cancelledWith: ClientError | undefined;
      const grpcCall = channel.makeUnaryRequest(method.path, method.requestSerialize, method.responseDeserialize, message, this.#metadata(), callOptions, (error, response) => {
        signal?.removeEventListener('abort', onAbort);
        this.#inFlight.delete(cancel);
        if (error === null) resolve(response!);
        else reject(cancelledWith ?? grpcClientError(error, what, timeoutMs));
      });
      const cancel = (error: ClientError): void => {
        cancelledWith = error;
        grpcCall.cancel();
      };
      const onAbort = (): void => cancel(new AbortError(what, signal!.reason));
      this.#inFlight.add(cancel);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}

/**
 * A failed call's error: DEADLINE_EXCEEDED after our deadline is a TimeoutError; UNAVAILABLE without
 * a connection is a ConnectionError; any other status is the server's (a ServerError).
 * NOTE: grpc-js reports a connection it could not make as UNAVAILABLE, the code a server also answers
 * for a model that is not ready; only its message ("No connection established", "Connection dropped")
 * tells the two apart.
 */
export function grpcClientError(error: ServiceError, what: string, timeoutMs: number | undefined): ClientError {
  const DEADLINE_EXCEEDED = 4;
  const UNAVAILABLE = 14;
  if (error.code === DEADLINE_EXCEEDED && timeoutMs !== undefined) return new TimeoutError(timeoutMs, what);
  if (error.code === UNAVAILABLE && /No connection established|Connection dropped|failed to connect|ECONNREFUSED/i.test(error.details)) {
    return new ConnectionError(`${what} failed: ${error.details}`, { cause: error });
  }
  return new ServerError(statusFromGrpc(error.code), error.details, { protocol: 'grpc', grpcCode: error.code });
}
