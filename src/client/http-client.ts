import { type Agent as HttpAgent, type IncomingHttpHeaders, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { compressBody, decompressBody } from '../protocol/content-encoding.js';
import { ConnectionPool } from './connection-pool.js';
import { AbortError, ClientError, ConnectionError, ServerError, TimeoutError, statusFromHttp } from './errors.js';
import { decodeHttpInferResponse, encodeHttpInferRequest } from './http-codec.js';
import { prepareAnyInput } from './infer-input.js';
import type { InferResult } from './infer-result.js';
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
  RepositoryIndexEntry,
  RepositoryIndexOptions,
  ServerMetadata,
  UnloadModelOptions,
  VersionOptions,
} from './types.js';
import { configText, indexEntryFromWire, modelMetadataFromWire, serverMetadataFromWire, statisticsFromWire, versionString } from './wire-messages.js';

/**
 * Bodies up to this size are joined into one buffer before writing: one copy of a few kilobytes costs
 * less than a gathered write of several. Larger ones are written chunk by chunk, without a copy.
 */
const SMALL_BODY_BYTES = 16 * 1024;

/** How long a kept-alive connection may sit idle (see ConnectionPoolOptions.idleTimeoutMs). */
const IDLE_CONNECTION_TIMEOUT_MS = 4000;


export interface HttpClientOptions {
  /** Default `timeoutMs` of every call; none by default. */
  readonly timeoutMs?: number;
  /** Headers sent with every request. */
  readonly headers?: Readonly<Record<string, string>>;
  /** A bearer token sent with every request as `Authorization: Bearer <token>` (the server's `--auth-token-file`). */
  readonly authToken?: string;
  /** Default of `binaryData` for infer (true: Triton's binary data extension). */
  readonly binaryData?: boolean;
  /** Default of `compression` for infer. */
  readonly compression?: Compression;
  /**
   * Most connections open at once (HTTP/1.1 carries one request at a time on each); Infinity by
   * default, so that concurrent calls never queue in the client.
   */
  readonly maxSockets?: number;
  /**
   * A node:http agent of your own (left open by close()). Without one, plain HTTP goes over the
   * client's own keep-alive connections, which cost about a third of node:http's CPU per request, and
   * HTTPS over a keep-alive agent.
   */
  readonly agent?: HttpAgent;
  /** HTTPS only (an `https://` URL), for a client agent of its own: whom to trust, and the client's certificate under mutual TLS. */
  readonly tls?: HttpTlsOptions;
}

/** The TLS settings of an HTTPS client, as node:tls names them; PEM text or bytes. */
export interface HttpTlsOptions {
  /** The CA certificates that sign the server's certificate; Node's bundled CAs by default. */
  readonly ca?: string | Uint8Array;
  /** The client's certificate chain, for a server that asks for one (`--http-use-ssl-mutual`). */
  readonly cert?: string | Uint8Array;
  /** The private key of `cert`. */
  readonly key?: string | Uint8Array;
  /** The name the server's certificate must carry, when it is not the URL's host. */
  readonly servername?: string;
}

interface HttpReply {
  readonly status: number;
  /** Names in lower case. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
}

/** One exchange: what to send, with the call's options. */
interface HttpExchange extends CallOptions {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly body?: readonly Uint8Array[];
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * A client of the KServe v2 HTTP/REST protocol with Triton's extensions, for Nereid, Triton or any
 * KServe v2 server. Connections are kept alive and reused (one per concurrent call), and request
 * bodies are written from the caller's arrays without copying them into one buffer.
 *
 * ```ts
 * const client = new HttpClient('localhost:8000');
 * const result = await client.infer('simple', [
 *   { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: new Int32Array(16) },
 *   { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: new Int32Array(16).fill(1) },
 * ]);
 * result.data('OUTPUT0', 'INT32'); // Int32Array
 * ```
 */
export class HttpClient implements InferenceClient {
  readonly #url: URL;
  /** The URL's path without its trailing slash: the prefix of every request path. */
  readonly #basePath: string;
  /** Plain HTTP without an agent of the caller's: the client's own keep-alive connections. */
  readonly #pool: ConnectionPool | undefined;
  /** HTTPS, or plain HTTP with an agent of the caller's: node:http with this agent. */
  readonly #agent: HttpAgent | undefined;
  readonly #ownsAgent: boolean;
  readonly #request: typeof httpRequest;
  readonly #options: HttpClientOptions;
  /** Cancels each call in flight with the error given. */
  readonly #inFlight = new Set<(error: ClientError) => void>();
  #isClosed = false;

  /** `url`: `host:port` (as tritonclient takes it) or a full `http://` or `https://` URL, with an optional base path. */
  constructor(url: string, options: HttpClientOptions = {}) {
    this.#url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(url) ? url : `http://${url}`);
    if (this.#url.protocol !== 'http:' && this.#url.protocol !== 'https:') {
      throw new ClientError(`HttpClient takes an http:// or https:// URL, got '${url}'`);
    }
    const isHttps = this.#url.protocol === 'https:';
    if (options.tls !== undefined && !isHttps) throw new ClientError(`HttpClient: tls options need an https:// URL, got '${url}'`);
    if (options.tls !== undefined && options.agent !== undefined) throw new ClientError('HttpClient: give the tls options to your own agent, or no agent');
    if ((options.tls?.cert === undefined) !== (options.tls?.key === undefined)) {
      throw new ClientError('HttpClient: tls.cert and tls.key go together (the client certificate and its key)');
    }
    this.#request = isHttps ? httpsRequest : httpRequest;
    this.#ownsAgent = options.agent === undefined;
    const agentOptions = { keepAlive: true, maxSockets: options.maxSockets ?? Infinity, scheduling: 'lifo' as const };
    this.#agent = options.agent ?? (isHttps ? new HttpsAgent({ ...agentOptions, ...tlsOptions(options.tls) }) : undefined);
    this.#options =
      options.authToken === undefined ? options : { ...options, headers: { ...options.headers, authorization: `Bearer ${options.authToken}` } };
    this.#basePath = this.#url.pathname.replace(/\/$/, '');
    if (!isHttps && options.agent === undefined) {
      this.#pool = new ConnectionPool({
        host: this.#url.hostname.replace(/^\[|\]$/g, ''),
        port: Number(this.#url.port || 80),
        maxSockets: options.maxSockets ?? Infinity,
        idleTimeoutMs: IDLE_CONNECTION_TIMEOUT_MS,
      });
    }
  }

  /** The server's base URL, e.g. `http://localhost:8000`. */
  get url(): string {
    return this.#url.href.replace(/\/$/, '');
  }

  async isServerLive(options: CallOptions = {}): Promise<boolean> {
    return (await this.#send('server liveness', { ...options, method: 'GET', path: '/v2/health/live' })).status === 200;
  }

  async isServerReady(options: CallOptions = {}): Promise<boolean> {
    return (await this.#send('server readiness', { ...options, method: 'GET', path: '/v2/health/ready' })).status === 200;
  }

  async isModelReady(modelName: string, options: VersionOptions = {}): Promise<boolean> {
    return (await this.#send(`readiness of model '${modelName}'`, { ...options, method: 'GET', path: `${modelPath(modelName, options.version)}/ready` })).status === 200;
  }

  async serverMetadata(options: CallOptions = {}): Promise<ServerMetadata> {
    return serverMetadataFromWire(await this.#json('server metadata', { ...options, method: 'GET', path: '/v2' }));
  }

  async modelMetadata(modelName: string, options: VersionOptions = {}): Promise<ModelMetadata> {
    return modelMetadataFromWire(await this.#json(`metadata of model '${modelName}'`, { ...options, method: 'GET', path: modelPath(modelName, options.version) }));
  }

  async modelConfig(modelName: string, options: VersionOptions = {}): Promise<ModelConfig> {
    return (await this.#json(`config of model '${modelName}'`, { ...options, method: 'GET', path: `${modelPath(modelName, options.version)}/config` })) as ModelConfig;
  }

  async repositoryIndex(options: RepositoryIndexOptions = {}): Promise<RepositoryIndexEntry[]> {
    const body = options.ready === true ? [Buffer.from('{"ready":true}')] : [];
    const index = await this.#json('repository index', { ...options, body, method: 'POST', path: '/v2/repository/index' });
    return (Array.isArray(index) ? index : []).map(indexEntryFromWire);
  }

  async loadModel(modelName: string, options: LoadModelOptions = {}): Promise<void> {
    const parameters: Record<string, unknown> = { ...options.parameters };
    if (options.config !== undefined) parameters.config = configText(options.config);
    for (const [path, bytes] of Object.entries(options.files ?? {})) {
      parameters[`file:${path}`] = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
    }
    const body = Object.keys(parameters).length > 0 ? [Buffer.from(JSON.stringify({ parameters }))] : [];
    await this.#json(`load of model '${modelName}'`, { ...options, body, method: 'POST', path: `/v2/repository/models/${encodeURIComponent(modelName)}/load` });
  }

  async unloadModel(modelName: string, options: UnloadModelOptions = {}): Promise<void> {
    const body = options.unloadDependents === true ? [Buffer.from('{"parameters":{"unload_dependents":true}}')] : [];
    await this.#json(`unload of model '${modelName}'`, { ...options, body, method: 'POST', path: `/v2/repository/models/${encodeURIComponent(modelName)}/unload` });
  }

  async modelStatistics(modelName?: string, options: VersionOptions = {}): Promise<ModelStatistics[]> {
    const path = modelName === undefined ? '/v2/models/stats' : `${modelPath(modelName, options.version)}/stats`;
    return statisticsFromWire(await this.#json(modelName === undefined ? 'statistics' : `statistics of model '${modelName}'`, { ...options, method: 'GET', path }));
  }

  /**
   * Runs an inference. Tensors travel as binary data unless `binaryData: false` (or the client's
   * option) asks for JSON; the result is the same either way.
   */
  async infer(modelName: string, inputs: ReadonlyArray<InferInput | SharedMemoryInput>, options: InferOptions = {}): Promise<InferResult> {
    const what = `inference of model '${modelName}'`;
    const encoded = encodeHttpInferRequest(inputs.map(prepareAnyInput), options, options.binaryData ?? this.#options.binaryData ?? true);
    const headers: Record<string, string> = {
      'content-type': encoded.headerLength === undefined ? 'application/json' : 'application/octet-stream',
      ...options.headers,
    };
    if (encoded.headerLength !== undefined) headers['inference-header-content-length'] = String(encoded.headerLength);
    let body = encoded.chunks;
    const compression = options.compression ?? this.#options.compression ?? 'none';
    if (compression !== 'none') {
      body = [await compressBody[compression](Buffer.concat(encoded.chunks as Uint8Array[], encoded.byteLength))];
      headers['content-encoding'] = compression;
      headers['accept-encoding'] = compression;
    }
    const reply = await this.#send(what, { ...options, headers, body, method: 'POST', path: `${modelPath(modelName, options.version)}/infer` });
    if (reply.status !== 200) throw serverError(reply);
    const headerLength = reply.headers['inference-header-content-length'];
    return decodeHttpInferResponse(reply.body, headerLength === undefined ? undefined : Number(headerLength));
  }

  async registerSystemSharedMemory(name: string, key: string, byteSize: number, options: CallOptions & { readonly offset?: number } = {}): Promise<void> {
    const body = [Buffer.from(JSON.stringify({ key, offset: options.offset ?? 0, byte_size: byteSize }))];
    await this.#json(`registration of shared memory region '${name}'`, {
      ...options,
      headers: { 'content-type': 'application/json', ...options.headers },
      body,
      method: 'POST',
      path: `/v2/systemsharedmemory/region/${encodeURIComponent(name)}/register`,
    });
  }

  async systemSharedMemoryStatus(name?: string, options: CallOptions = {}): Promise<SharedMemoryRegionStatus[]> {
    const path = name === undefined ? '/v2/systemsharedmemory/status' : `/v2/systemsharedmemory/region/${encodeURIComponent(name)}/status`;
    const regions = await this.#json('shared memory status', { ...options, method: 'GET', path });
    return (Array.isArray(regions) ? regions : []).map((region: Record<string, unknown>) => ({
      name: String(region.name),
      key: String(region.key),
      offset: Number(region.offset ?? 0),
      byteSize: Number(region.byte_size),
    }));
  }

  async unregisterSystemSharedMemory(name?: string, options: CallOptions = {}): Promise<void> {
    const path = name === undefined ? '/v2/systemsharedmemory/unregister' : `/v2/systemsharedmemory/region/${encodeURIComponent(name)}/unregister`;
    await this.#json('shared memory unregistration', { ...options, headers: { 'content-type': 'application/json', ...options.headers }, body: [], method: 'POST', path });
  }

  /** Aborts the calls in flight and closes the connections (those of an agent passed in stay open). */
  async close(): Promise<void> {
    this.#isClosed = true;
    for (const cancel of this.#inFlight) cancel(new AbortError('the call', 'the client was closed'));
    this.#pool?.close(new AbortError('the call', 'the client was closed'));
    if (this.#ownsAgent) this.#agent?.destroy();
  }

  async #json(what: string, exchange: HttpExchange): Promise<unknown> {
    const reply = await this.#send(what, exchange);
    if (reply.status !== 200) throw serverError(reply);
    if (reply.body.byteLength === 0) return {};
    try {
      return JSON.parse(reply.body.toString('utf8'));
    } catch (error) {
      throw new ClientError(`${what}: the server's answer is not JSON: ${(error as Error).message}`, { cause: error });
    }
  }

  /** Sends one request and reads the whole answer, decompressed; honours the timeout and the signal. */
  async #send(what: string, exchange: HttpExchange): Promise<HttpReply> {
    const reply = await this.#exchange(what, exchange);
    const encoding = reply.headers['content-encoding'];
    if (encoding === undefined) return reply;
    if (encoding === 'gzip' || encoding === 'deflate') {
      try {
        return { ...reply, body: await decompressBody[encoding](reply.body) };
      } catch (error) {
        throw new ClientError(`${what}: cannot ${encoding}-decompress the answer: ${(error as Error).message}`, { cause: error });
      }
    }
    return reply;
  }

  /**
   * One exchange under the call's control: the timeout and the signal cancel it, `close()` too. The
   * transport is the client's connection pool (plain HTTP) or node:http (HTTPS, or an agent given).
   */
  #exchange(what: string, exchange: HttpExchange): Promise<HttpReply> {
    const { signal } = exchange;
    if (this.#isClosed) return Promise.reject(new AbortError(what, 'the client was closed'));
    if (signal?.aborted === true) return Promise.reject(new AbortError(what, signal.reason));
    const timeoutMs = exchange.timeoutMs ?? this.#options.timeoutMs;
    let started: StartedExchange;
    try {
      started = this.#pool !== undefined ? this.#startPooled(exchange) : this.#startNodeHttp(exchange);
    } catch (error) {
      return Promise.reject(error);
    }
    return new Promise<HttpReply>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      let isSettled = false;
      const settle = (error: Error | undefined, reply?: HttpReply): void => {
        if (isSettled) return;
        isSettled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.#inFlight.delete(cancel);
        if (error !== undefined) reject(error);
        else resolve(reply!);
      };
      // NOTE: cancelling destroys the exchange's connection: a half-finished exchange never goes back to the pool.
      const cancel = (error: ClientError): void => {
        settle(error);
        started.cancel(error);
      };
      const onAbort = (): void => cancel(new AbortError(what, signal!.reason));
      this.#inFlight.add(cancel);
      signal?.addEventListener('abort', onAbort, { once: true });
      if (timeoutMs !== undefined) timer = setTimeout(() => cancel(new TimeoutError(timeoutMs, what)), timeoutMs);
      started.reply.then(
        (reply) => settle(undefined, reply),
        (error: Error) => settle(new ConnectionError(`${what} failed: ${error.message}`, { cause: error })),
      );
    });
  }

  #startPooled(exchange: HttpExchange): StartedExchange {
    const body = exchange.body ?? [];
    let bodyByteLength = 0;
    for (const chunk of body) bodyByteLength += chunk.byteLength;
    let head = `${exchange.method} ${this.#basePath}${exchange.path} HTTP/1.1\r\nHost: ${this.#url.host}\r\n`;
    for (const headers of [this.#options.headers, exchange.headers]) {
      for (const name in headers) head += headerLine(name, headers[name]!);
    }
    if (exchange.method === 'POST') head += `Content-Length: ${bodyByteLength}\r\n`;
    const pending = this.#pool!.send({ head: `${head}\r\n`, body, bodyByteLength });
    return { reply: pending.response, cancel: (error) => pending.cancel(error) };
  }

  #startNodeHttp(exchange: HttpExchange): StartedExchange {
    const body = exchange.body ?? [];
    let byteLength = 0;
    for (const chunk of body) byteLength += chunk.byteLength;
    const request = this.#request({
      agent: this.#agent,
      protocol: this.#url.protocol,
      hostname: this.#url.hostname.replace(/^\[|\]$/g, ''),
      port: this.#url.port,
      path: this.#basePath + exchange.path,
      method: exchange.method,
      headers: { ...this.#options.headers, ...exchange.headers, ...(exchange.method === 'POST' ? { 'content-length': String(byteLength) } : {}) },
    });
    const reply = new Promise<HttpReply>((resolve, reject) => {
      request.on('error', reject);
      request.on('response', (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: flatHeaders(response.headers), body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks) }));
        response.on('error', reject);
        response.on('close', () => {
          if (!response.complete) reject(new Error('the connection closed before the answer was complete'));
        });
      });
    });
    if (body.length === 1 || (body.length > 1 && byteLength <= SMALL_BODY_BYTES)) {
      request.end(body.length === 1 ? body[0] : Buffer.concat(body as Uint8Array[], byteLength));
    } else {
      request.cork();
      for (const chunk of body) request.write(chunk);
      request.uncork();
      request.end();
    }
    return { reply, cancel: () => request.destroy() };
  }
}

/** An exchange on its way: its reply, and how to cancel it. */
interface StartedExchange {
  readonly reply: Promise<HttpReply>;
  cancel(error: Error): void;
}

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** A request header line; refuses names and values that would break the request (header injection). */
function headerLine(name: string, value: string): string {
  if (!HEADER_NAME.test(name)) throw new ClientError(`invalid HTTP header name ${JSON.stringify(name)}`);
  if (/[\r\n\0]/.test(value)) throw new ClientError(`invalid value for HTTP header '${name}': it holds a line break or NUL`);
  return `${name}: ${value}\r\n`;
}

function flatHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : value;
  return out;
}

function modelPath(modelName: string, version: number | string | undefined): string {
  const versionText = versionString(version);
  return `/v2/models/${encodeURIComponent(modelName)}${versionText === '' ? '' : `/versions/${versionText}`}`;
}

/** The error of a non-200 answer: the server's `{"error": "..."}` message, or the body's text. */
function serverError(reply: HttpReply): ServerError {
  const text = reply.body.toString('utf8');
  let message = text === '' ? `HTTP ${reply.status}` : text;
  try {
    const json = JSON.parse(text) as { error?: unknown };
    if (typeof json.error === 'string') message = json.error;
  } catch {
    // Not JSON: the text is the message.
  }
  return new ServerError(statusFromHttp(reply.status), message, { protocol: 'http', httpStatus: reply.status });
}

/** HttpTlsOptions as node:https takes them (Buffers for bytes). */
function tlsOptions(tls: HttpTlsOptions | undefined): { ca?: string | Buffer; cert?: string | Buffer; key?: string | Buffer; servername?: string } {
  if (tls === undefined) return {};
  const pem = (value: string | Uint8Array): string | Buffer => (typeof value === 'string' ? value : Buffer.from(value.buffer, value.byteOffset, value.byteLength));
  return {
    ...(tls.ca !== undefined ? { ca: pem(tls.ca) } : {}),
    ...(tls.cert !== undefined ? { cert: pem(tls.cert) } : {}),
    ...(tls.key !== undefined ? { key: pem(tls.key) } : {}),
    ...(tls.servername !== undefined ? { servername: tls.servername } : {}),
  };
}
