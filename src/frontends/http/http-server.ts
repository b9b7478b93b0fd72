import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { type InferenceServer, NereidError, type RequestTrace } from '../../core/index.js';
import { compressBody, decompressBody } from '../../protocol/content-encoding.js';
import type { Logger } from '../../logging/logger.js';
import { type AccessPolicy, OPEN_ACCESS } from '../access-policy.js';
import { type WebServer, createWebServer } from '../create-web-server.js';
import { Dashboard, type DashboardOptions, isDashboardPath } from '../dashboard/dashboard.js';
import type { TlsIdentity } from '../tls-identity.js';
import { checkHttpAccess } from './access-check.js';
import { CorsPolicy } from './cors-policy.js';
import { errorReply } from './errors.js';
import { BodyPool } from './body-pool.js';
import { joinBody } from './join-body.js';
import { handleHealth, handleServerMetadata } from './handlers/health.js';
import { handleGenerate, handleGenerateStream } from './handlers/generate.js';
import { handleInfer } from './handlers/infer.js';
import { handleTraceSetting } from './handlers/trace.js';
import { handleModelConfig, handleModelMetadata, handleModelReady } from './handlers/models.js';
import { handleLogging } from './handlers/logging.js';
import { handleRepositoryIndex, handleRepositoryModel } from './handlers/repository.js';
import { handleCudaSharedMemory, handleSystemSharedMemory } from './handlers/shared-memory.js';
import type { SharedMemoryRegistry } from '../shared-memory/shared-memory-registry.js';
import { handleStatistics } from './handlers/statistics.js';
import type { Reply } from './reply.js';
import { matchRoute } from './routes.js';
import { listen } from '../listen.js';

/** The first of gzip and deflate that an Accept-Encoding header allows (a q-value of 0 refuses). */
function parseAcceptEncoding(header: string | undefined): 'gzip' | 'deflate' | undefined {
  const allowed = new Set<string>();
  for (const part of (header ?? '').split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    if (q === undefined || Number(q.slice(2)) > 0) allowed.add(name!);
  }
  return allowed.has('gzip') ? 'gzip' : allowed.has('deflate') ? 'deflate' : undefined;
}

/** parseAcceptEncoding, remembering the last header: a client sends the same one with every request. */
const acceptedEncoding = (() => {
  let lastHeader: string | undefined;
  let lastEncoding: 'gzip' | 'deflate' | undefined;
  return (header: string | undefined): 'gzip' | 'deflate' | undefined => {
    if (header !== lastHeader) {
      lastEncoding = parseAcceptEncoding(header);
      lastHeader = header;
    }
    return lastEncoding;
  };
})();

/** A body up to this size is copied into one buffer before it is written: cheaper than a write per chunk. */
const SMALL_BODY_BYTES = 16 * 1024;

/**
 * One signal per connection, aborted when the connection closes: a request on it that is not answered
 * by then is cancelled (a queued one never runs), and one already answered no longer looks. NOTE: per
 * connection rather than per request because an AbortController costs about 5 µs to make, a tenth of
 * what an unbatched request costs the main thread; whatever listens to it removes its listener once its
 * request is done (scheduling/cancellation.ts, instance-pool.ts, util/every-aborted.ts).
 */
const connectionSignals = new WeakMap<Socket, AbortSignal>();

function connectionSignal(socket: Socket): AbortSignal {
  let signal = connectionSignals.get(socket);
  if (signal === undefined) {
    const controller = new AbortController();
    socket.once('close', () => controller.abort());
    signal = controller.signal;
    connectionSignals.set(socket, signal);
  }
  return signal;
}


export interface HttpFrontendOptions {
  readonly server: InferenceServer;
  readonly logger: Logger;
  /** Largest request body accepted, compressed or not (`--http-max-input-size`, Triton's default 64 MiB). */
  readonly maxInputBytes: number;
  /** `--http-restricted-api` and `--auth-token-file`; open by default. */
  readonly access?: AccessPolicy;
  /** `--http-cors-origins`: origins whose browser pages may call the API (`*`: any); none by default. */
  readonly corsOrigins?: readonly string[];
  /** `--http-use-ssl[-mutual]`: HTTPS with this certificate (followed as it reloads); plain HTTP without. */
  readonly tls?: TlsIdentity;
  /** `--allow-dashboard`: the live dashboard at /dashboard, under the same access policy; none without. */
  readonly dashboard?: DashboardOptions;
  /** The system shared memory regions, shared with the gRPC front end; without it, registering fails. */
  readonly sharedMemory?: SharedMemoryRegistry;
}

/**
 * The KServe v2 HTTP/REST front end on node:http. NOTE: no framework: raw node:http served 1.8x the
 * requests of fastify 5 on 600 KB binary tensors (2373 vs 1329 req/s, measured on this project's 2-core
 * machine) and 1.1x on 10 KB JSON; the route set is small and
 * fixed, and the binary data extension wants the body as one Buffer.
 */
export class HttpFrontend {
  readonly #options: HttpFrontendOptions;
  readonly #server: WebServer;
  readonly #cors: CorsPolicy;
  readonly #dashboard: Dashboard | undefined;
  /** Large request bodies' memory, used again once an inference request's reply is out (body-pool.ts). */
  readonly #bodies = new BodyPool();
  #inflight = 0;

  constructor(options: HttpFrontendOptions) {
    this.#options = options;
    this.#cors = new CorsPolicy(options.corsOrigins ?? []);
    this.#dashboard = options.dashboard !== undefined ? new Dashboard(options.dashboard, options.access ?? OPEN_ACCESS) : undefined;
    this.#server = createWebServer({ keepAliveTimeout: 65_000 }, options.tls, (req, res) => void this.#handle(req, res));
  }

  listen(port: number, host: string): Promise<AddressInfo> {
    return listen(this.#server, port, host);
  }

  /** HTTP requests being handled now. */
  get inflightCount(): number {
    return this.#inflight;
  }

  /** Stops accepting connections; requests already received are answered, dashboard streams end, then idle connections close. */
  close(): Promise<void> {
    this.#dashboard?.close();
    return new Promise((resolve) => {
      this.#server.close(() => resolve());
      this.#server.closeIdleConnections();
    });
  }

  /** Closes every connection at once, answered or not. */
  closeAllConnections(): void {
    this.#server.closeAllConnections();
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const receivedNs = process.hrtime.bigint();
    this.#inflight++;
    const signal = connectionSignal(req.socket);
    let reply: Reply;
    try {
      reply = await this.#dispatch(req, receivedNs, signal);
    } catch (error) {
      if ((error instanceof NereidError && error.reason === 'CLIENT_DISCONNECTED') || signal.aborted) {
        this.#options.logger.verbose(1, 'http', `${req.method ?? ''} ${req.url ?? ''}: ${(error as Error).message}`);
        this.#inflight--;
        return;
      }
      const { status, headers, body } = errorReply(error, this.#options.logger);
      reply = { status, headers, chunks: [Buffer.from(body)] };
    }
    try {
      await this.#send(req, res, reply);
    } finally {
      this.#inflight--;
    }
  }

  async #dispatch(req: IncomingMessage, receivedNs: bigint, signal: AbortSignal): Promise<Reply> {
    const { server } = this.#options;
    const path = (req.url ?? '/').split('?', 1)[0]!;
    const preflight = this.#cors.preflight(req);
    if (preflight !== undefined) return preflight;
    if (this.#dashboard !== undefined && isDashboardPath(path)) return this.#dashboard.handle(req, path);
    const route = matchRoute(req.method ?? 'GET', path);
    checkHttpAccess(route, req.headers, this.#options.access ?? OPEN_ACCESS);
    this.#cors.check(req, route);
    switch (route.kind) {
      case 'server-metadata':
        return handleServerMetadata(server);
      case 'health':
        return handleHealth(server, route.check);
      case 'statistics':
        return handleStatistics(server, route);
      case 'repository-index':
        return handleRepositoryIndex(server, await this.#readBody(req));
      case 'repository-model':
        return handleRepositoryModel(server, route, await this.#readBody(req));
      case 'logging':
        return handleLogging(server, req.method === 'POST' ? await this.#readBody(req) : undefined);
      case 'shared-memory': {
        if (route.memory === 'cuda') return handleCudaSharedMemory(route);
        const body = route.action === 'register' ? await this.#readBody(req) : Buffer.alloc(0);
        if (this.#options.sharedMemory === undefined) throw new NereidError('UNSUPPORTED', 'this server has no system shared memory');
        return handleSystemSharedMemory(this.#options.sharedMemory, route, body);
      }
      case 'trace-setting':
        return handleTraceSetting(server, route.modelName, req.method === 'POST' ? await this.#readBody(req) : undefined);
      case 'model':
        switch (route.action) {
          case 'metadata':
            return handleModelMetadata(server, route);
          case 'ready':
            return handleModelReady(server, route);
          case 'config':
            return handleModelConfig(server, route);
          case 'infer':
            return this.#infer(req, route, receivedNs, signal);
          case 'generate':
            return this.#traced(req, route, receivedNs, (body, trace) => handleGenerate(server, route, body, trace, signal));
          case 'generate_stream':
            return this.#traced(req, route, receivedNs, (body, trace) => handleGenerateStream(server, route, body, trace, signal));
          case 'stats':
            return handleStatistics(server, route);
        }
    }
  }

  /** An inference request (infer, generate, generate_stream), traced when the trace settings sample it; `signal` (the connection closed) cancels it. */
  #infer(
    req: IncomingMessage,
    route: { readonly modelName: string; readonly modelVersion: number | undefined },
    receivedNs: bigint,
    signal: AbortSignal,
  ): Promise<Reply> {
    const sharedMemory = this.#options.sharedMemory !== undefined ? { sharedMemory: this.#options.sharedMemory } : {};
    return this.#traced(req, route, receivedNs, async (body, trace) => {
      const reply = await handleInfer(this.#options.server, route, { headers: req.headers, body, ...sharedMemory, signal, ...(trace !== undefined ? { trace } : {}) });
      // Settled: no instance holds the request's inputs any more. A traced request's body stays the trace's.
      return trace === undefined ? { ...reply, onSent: () => this.#bodies.give(body) } : reply;
    });
  }

  /**
   * Reads the body and runs `handle`, with a trace when the trace settings sample the request
   * (Triton's HTTP_RECV_START and _END) or, in OpenTelemetry mode, when it carries a W3C `traceparent`.
   * The reply carries the trace: #send records the send and ends it.
   */
  async #traced(
    req: IncomingMessage,
    route: { readonly modelName: string },
    receivedNs: bigint,
    handle: (body: Buffer, trace: RequestTrace | undefined) => Promise<Reply>,
  ): Promise<Reply> {
    const { traceparent, tracestate } = req.headers;
    const carrier = typeof traceparent === 'string' ? { traceparent, ...(typeof tracestate === 'string' ? { tracestate } : {}) } : undefined;
    const trace = this.#options.server.startTrace(route.modelName, carrier);
    if (trace === undefined) return handle(await this.#readBody(req), undefined);
    trace.timestamp('HTTP_RECV_START', receivedNs);
    try {
      const body = await this.#readBody(req);
      trace.timestamp('HTTP_RECV_END');
      return { ...(await handle(body, trace)), trace };
    } catch (error) {
      trace.end();
      throw error;
    }
  }

  /**
   * Reads the whole body, refusing more than maxInputBytes before or after decompression. NOTE: an
   * oversized body is refused as soon as the limit is passed, without reading the rest: the answer says
   * `Connection: close`, the socket keeps draining (so the client, still writing, reads the 400 rather
   * than a reset) until node closes it once the answer is out.
   */
  async #readBody(req: IncomingMessage): Promise<Buffer> {
    const limit = this.#options.maxInputBytes;
    const tooLarge = (size: string): NereidError =>
      new NereidError('INVALID_ARG', `request body of ${size} exceeds the maximum of ${limit} bytes (--http-max-input-size)`, {
        reason: 'BODY_TOO_LARGE',
      });
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > limit) {
      req.resume();
      throw tooLarge(`${declared} bytes`);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    await new Promise<void>((resolve, reject) => {
      const onData = (chunk: Buffer): void => {
        size += chunk.byteLength;
        if (size <= limit) {
          chunks.push(chunk);
          return;
        }
        req.off('data', onData);
        chunks.length = 0;
        req.resume();
        reject(tooLarge(`more than ${limit} bytes`));
      };
      const disconnected = (): void =>
        reject(new NereidError('CANCELLED', 'the client closed the connection before sending the whole request body', { reason: 'CLIENT_DISCONNECTED' }));
      req.on('data', onData);
      req.once('end', resolve);
      req.once('error', disconnected);
      req.once('close', () => {
        if (!req.complete) disconnected();
      });
    });
    const encoding = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
    if (encoding === 'identity' || encoding === '') return joinBody(chunks, size, req.headers, (byteLength) => this.#bodies.take(byteLength));
    const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
    if (encoding !== 'gzip' && encoding !== 'deflate') {
      throw new NereidError('UNSUPPORTED', `unsupported Content-Encoding '${encoding}'; this server accepts gzip and deflate`, {
        reason: 'UNSUPPORTED_CONTENT_ENCODING',
        details: { accepted: 'gzip, deflate' },
      });
    }
    try {
      return await decompressBody[encoding](body, limit);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge(`more than ${limit} bytes once decompressed`);
      throw new NereidError('INVALID_ARG', `cannot decompress the ${encoding} request body: ${(error as Error).message}`);
    }
  }

  /** Writes the reply, compressed when it may be and the client accepts gzip or deflate. */
  async #send(req: IncomingMessage, res: ServerResponse, reply: Reply): Promise<void> {
    const headers = { ...reply.headers, ...this.#cors.responseHeaders(req) };
    let chunks = reply.chunks;
    const encoding = reply.isCompressible === true ? acceptedEncoding(req.headers['accept-encoding']) : undefined;
    if (encoding !== undefined && chunks.length > 0) {
      chunks = [await compressBody[encoding](Buffer.concat(chunks))];
      headers['content-encoding'] = encoding;
    }
    const { trace } = reply;
    if (reply.onSent !== undefined) res.once('finish', reply.onSent);
    if (trace !== undefined) {
      trace.timestamp('HTTP_SEND_START');
      res.once('finish', () => trace.timestamp('HTTP_SEND_END'));
      res.once('close', () => trace.end());
    }
    if (reply.stream !== undefined) {
      await this.#sendStream(res, reply.status, headers, reply.stream);
      return;
    }
    let length = 0;
    for (const chunk of chunks) length += chunk.byteLength;
    headers['content-length'] = length;
    res.writeHead(reply.status, headers);
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    // Header, JSON and tensors leave in one write: a small body as one buffer (node then sends it with
    // the head), a large one as the chunks it is, corked.
    if (chunks.length <= 1 || length <= SMALL_BODY_BYTES) {
      res.end(chunks.length <= 1 ? chunks[0] : Buffer.concat(chunks, length));
      return;
    }
    res.cork();
    for (const chunk of chunks) res.write(chunk);
    res.end();
    res.uncork();
  }

  /** Writes each piece as it comes (chunked encoding), waiting when the client reads slowly; stops if it goes away. */
  async #sendStream(res: ServerResponse, status: number, headers: OutgoingHttpHeaders, stream: AsyncIterable<Uint8Array>): Promise<void> {
    res.writeHead(status, headers);
    res.flushHeaders();
    for await (const piece of stream) {
      if (res.destroyed) break;
      if (!res.write(piece)) await new Promise<void>((resolve) => res.once('drain', resolve).once('close', resolve));
    }
    res.end();
  }
}
