import { type CallOptions as GrpcCallOptions, type ChannelOptions, type Client, type ClientDuplexStream, Metadata, type ServiceError, credentials } from '@grpc/grpc-js';
import { loadGrpcServices } from '../frontends/grpc/grpc-services.js';
import { AbortError, type ClientError, ConnectionError, ServerError, TimeoutError, statusFromGrpc } from './errors.js';
import { decodeModelInferResponse, encodeModelInferRequest, parameterMessage, parameterMessages } from './grpc-codec.js';
import { prepareInput } from './infer-input.js';
import type { InferResult } from './infer-result.js';
import { InferStream, type StreamOptions } from './infer-stream.js';
import type {
  CallOptions,
  Compression,
  InferInput,
  InferOptions,
  InferenceClient,
  LoadModelOptions,
  ModelConfig,
  ModelMetadata,
  ModelStatistics,
  RepositoryIndexEntry,
  RepositoryIndexOptions,
  ServerMetadata,
  UnloadModelOptions,
  VersionOptions,
} from './types.js';
import { configText, indexEntryFromWire, modelMetadataFromWire, serverMetadataFromWire, statisticsFromWire, versionString } from './wire-messages.js';

export interface GrpcClientOptions {
  /** Default `timeoutMs` of every call (its gRPC deadline); none by default. */
  readonly timeoutMs?: number;
  /** Default message compression of every call; none by default. */
  readonly compression?: Compression;
  /** More @grpc/grpc-js channel options; they override the client's own. */
  readonly channelOptions?: ChannelOptions;
}

/** The HTTP/2 flow-control window the client asks for: 16 MiB, as the server's (large tensors need it). */
const FLOW_CONTROL_WINDOW_BYTES = 16 * 1024 * 1024;
/** @grpc/grpc-js CompressionAlgorithms. */
const COMPRESSION_ALGORITHM: Record<Compression, number> = { none: 0, deflate: 1, gzip: 2 };

/** One unary call: the RPC, its request message, the call's options. */
interface UnaryCall extends CallOptions {
  readonly method: string;
  readonly message: object;
  readonly compression?: Compression;
}

type UnaryMethod = (request: object, metadata: Metadata, options: GrpcCallOptions, callback: (error: ServiceError | null, response: unknown) => void) => { cancel(): void };

let services: ReturnType<typeof loadGrpcServices> | undefined;

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
  #isClosed = false;

  /** `url`: `host:port`, as tritonclient takes it (a `grpc://` or `http://` prefix is dropped). */
  constructor(url: string, options: GrpcClientOptions = {}) {
    this.#target = url.replace(/^(grpc|http):\/\//i, '').replace(/\/$/, '');
    this.#options = options;
  }

  async isServerLive(options: CallOptions = {}): Promise<boolean> {
    return ((await this.#unary('server liveness', { ...options, method: 'ServerLive', message: {} })) as { live: boolean }).live;
  }

  async isServerReady(options: CallOptions = {}): Promise<boolean> {
    return ((await this.#unary('server readiness', { ...options, method: 'ServerReady', message: {} })) as { ready: boolean }).ready;
  }

  async isModelReady(modelName: string, options: VersionOptions = {}): Promise<boolean> {
    try {
      const request = { name: modelName, version: versionString(options.version) };
      return ((await this.#unary(`readiness of model '${modelName}'`, { ...options, method: 'ModelReady', message: request })) as { ready: boolean }).ready;
    } catch (error) {
      // Over HTTP an unknown model answers 400, which reads as not ready; some servers answer gRPC with an error too.
      if (error instanceof ServerError) return false;
      throw error;
    }
  }

  async serverMetadata(options: CallOptions = {}): Promise<ServerMetadata> {
    return serverMetadataFromWire(await this.#unary('server metadata', { ...options, method: 'ServerMetadata', message: {} }));
  }

  async modelMetadata(modelName: string, options: VersionOptions = {}): Promise<ModelMetadata> {
    const request = { name: modelName, version: versionString(options.version) };
    return modelMetadataFromWire(await this.#unary(`metadata of model '${modelName}'`, { ...options, method: 'ModelMetadata', message: request }));
  }

  async modelConfig(modelName: string, options: VersionOptions = {}): Promise<ModelConfig> {
    const request = { name: modelName, version: versionString(options.version) };
    return ((await this.#unary(`config of model '${modelName}'`, { ...options, method: 'ModelConfig', message: request })) as { config: ModelConfig }).config;
  }

  async repositoryIndex(options: RepositoryIndexOptions = {}): Promise<RepositoryIndexEntry[]> {
    const response = (await this.#unary('repository index', { ...options, method: 'RepositoryIndex', message: { repository_name: '', ready: options.ready === true } })) as { models?: unknown[] };
    return (response.models ?? []).map(indexEntryFromWire);
  }

  async loadModel(modelName: string, options: LoadModelOptions = {}): Promise<void> {
    const parameters: Record<string, object> = parameterMessages(options.parameters);
    if (options.config !== undefined) parameters.config = { string_param: configText(options.config) };
    for (const [path, bytes] of Object.entries(options.files ?? {})) {
      parameters[`file:${path}`] = { bytes_param: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) };
    }
    await this.#unary(`load of model '${modelName}'`, { ...options, method: 'RepositoryModelLoad', message: { repository_name: '', model_name: modelName, parameters } });
  }

  async unloadModel(modelName: string, options: UnloadModelOptions = {}): Promise<void> {
    const parameters = options.unloadDependents === true ? { unload_dependents: parameterMessage(true) } : {};
    await this.#unary(`unload of model '${modelName}'`, { ...options, method: 'RepositoryModelUnload', message: { repository_name: '', model_name: modelName, parameters } });
  }

  async modelStatistics(modelName?: string, options: VersionOptions = {}): Promise<ModelStatistics[]> {
    const request = { name: modelName ?? '', version: versionString(options.version) };
    return statisticsFromWire(await this.#unary(modelName === undefined ? 'statistics' : `statistics of model '${modelName}'`, { ...options, method: 'ModelStatistics', message: request }));
  }

  async infer(modelName: string, inputs: readonly InferInput[], options: InferOptions = {}): Promise<InferResult> {
    const request = encodeModelInferRequest(modelName, inputs.map(prepareInput), options);
    return decodeModelInferResponse(await this.#unary(`inference of model '${modelName}'`, { ...options, method: 'ModelInfer', message: request }));
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
    const open = (): ClientDuplexStream<object, unknown> =>
      (this.#channel(compression) as unknown as { ModelStreamInfer: (metadata: Metadata, options: GrpcCallOptions) => ClientDuplexStream<object, unknown> }).ModelStreamInfer(
        new Metadata(),
        timeoutMs !== undefined ? { deadline: Date.now() + timeoutMs } : {},
      );
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
      services ??= loadGrpcServices();
      channel = new services.inference(this.#target, credentials.createInsecure(), {
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

  #unary(what: string, call: UnaryCall): Promise<unknown> {
    const { method, message, signal } = call;
    if (this.#isClosed) return Promise.reject(new AbortError(what, 'the client was closed'));
    if (signal?.aborted === true) return Promise.reject(new AbortError(what, signal.reason));
    const timeoutMs = call.timeoutMs ?? this.#options.timeoutMs;
    const channel = this.#channel(call.compression ?? this.#options.compression ?? 'none');
    const callOptions: GrpcCallOptions = timeoutMs !== undefined ? { deadline: Date.now() + timeoutMs } : {};
    return new Promise((resolve, reject) => {
      let cancelledWith: ClientError | undefined;
      const grpcCall = (channel as unknown as Record<string, UnaryMethod>)[method]!.call(channel, message, new Metadata(), callOptions, (error, response) => {
        signal?.removeEventListener('abort', onAbort);
        this.#inFlight.delete(cancel);
        if (error === null) resolve(response);
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
