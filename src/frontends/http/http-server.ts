import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { type InferenceServer, NereidError, type RequestTrace } from '../../core/index.js';
import { compressBody, decompressBody } from '../../protocol/content-encoding.js';
import type { Logger } from '../../logging/logger.js';
import { type AccessPolicy, OPEN_ACCESS } from '../access-policy.js';
import { type WebServer, createWebServer } from '../create-web-server.js';
import { Dashboard, type DashboardOptions, isDashboardPath } from '../dashboard/dashboard.js';
import type { TlsIdentity } from '../tls-identity.js';
import { checkHttpAccess } from './access-check.js';
import { answerRoute } from './answer-route.js';
import { CorsPolicy } from './cors-policy.js';
import { errorReply } from './errors.js';
import { joinBody } from './join-body.js';
import { bodyTooLarge, clientDisconnected, readBodyChunks } from './read-body.js';
import { writeReply, writeStreamedReply } from './write-reply.js';
import { Http1Lane, type LaneRequest } from './http1-lane.js';
import { type GenerateContext, handleGenerate, handleGenerateStream } from './handlers/generate.js';
import { forwardedHeaders, headLinePairs, rawHeaderPairs } from '../header-forwarding.js';
import type { Parameters } from '../../protocol/parameters.js';
import { handleInfer, handleInferNow } from './handlers/infer.js';
import type { SharedMemoryRegistry } from '../shared-memory/shared-memory-registry.js';
import type { Reply } from './reply.js';
import { type Route, routeOf } from './routes.js';
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

/**
 * Whether a request's reply is streamed (generate_stream, in any of the forms its route takes): node:http
 * writes those. A path without the segment is no such route, without routing it.
 */
function isStreamedRoute(method: string, path: string): boolean {
  if (!path.includes('/generate_stream')) return false;
  try {
    const route = routeOf(method, path);
    return route.kind === 'model' && route.action === 'generate_stream';
  } catch {
    return false;
  }
}

/** The body of a request the HTTP/1.1 lane read, placed as joinBody places any (its binary data aligned). */
const laneBody = ({ body, headers }: LaneRequest): Buffer => joinBody([body], body.byteLength, headers);

/** How long an idle connection stays open (node:http's keepAliveTimeout). */
const KEEP_ALIVE_MS = 65_000;

/** Bodies up to this size may take the one-step lane: a few socket reads at most. */
const ONE_STEP_BODY_BYTES = 64 * 1024;

/** A request's Content-Encoding, trimmed and in lower case; 'identity' when it has none. */
const contentEncodingOf = (headers: IncomingHttpHeaders): string => (headers['content-encoding'] ?? 'identity').trim().toLowerCase();

const isIdentityEncoding = (encoding: string): boolean => encoding === 'identity' || encoding === '';

/** A body the one-step lane reads: of a declared length within its limit and the server's, and not compressed. */
function isOneStepBody(headers: IncomingHttpHeaders, maxInputBytes: number): boolean {
  const declared = headers['content-length'];
  if (declared === undefined) return false;
  const length = Number(declared);
  return length <= ONE_STEP_BODY_BYTES && length <= maxInputBytes && isIdentityEncoding(contentEncodingOf(headers));
}

/**
 * Reads a body of declared length (isOneStepBody) without a promise: `done` gets it joined
 * (join-body.ts), `failed` the error of a client gone before its end.
 */
function readSmallBody(req: IncomingMessage, done: (body: Buffer) => void, failed: (error: NereidError) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let isSettled = false;
  req.on('data', (chunk: Buffer) => {
    chunks.push(chunk);
    size += chunk.byteLength;
  });
  req.once('end', () => {
    isSettled = true;
    done(joinBody(chunks, size, req.headers));
  });
  const disconnected = (): void => {
    if (isSettled) return;
    isSettled = true;
    failed(clientDisconnected());
  };
  req.once('error', disconnected);
  req.once('close', () => {
    if (!req.complete) disconnected();
  });
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
  /** `--http-header-forward-pattern`: the headers an inference request forwards as its parameters (header-forwarding.ts). */
  readonly headerForwardPattern?: RegExp;
}

/**
 * One request and the way back to its client: node:http's request and response, or the HTTP/1.1
 * lane's request (http1-lane.ts), whose body is read whole.
 */
type Exchange = {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly receivedNs: bigint;
  /** Aborted when the connection closes. */
  readonly signal: AbortSignal;
} & (
  | { readonly node: { readonly req: IncomingMessage; readonly res: ServerResponse }; readonly lane: undefined }
  | { readonly node: undefined; readonly lane: LaneRequest }
);

/**
 * The KServe v2 HTTP/REST front end. NOTE: no framework: raw node:http served 1.8x the requests of
 * fastify 5 on 600 KB binary tensors (2373 vs 1329 req/s, measured on this project's 2-core machine)
 * and 1.1x on 10 KB JSON; the route set is small and fixed, and the binary data extension wants the
 * body as one Buffer. Plain-HTTP connections are read by the HTTP/1.1 lane first (http1-lane.ts), which
 * answers the usual requests itself and hands a connection to node:http at its first unusual one.
 */
export class HttpFrontend {
  readonly #options: HttpFrontendOptions;
  readonly #server: WebServer;
  readonly #lane: Http1Lane | undefined;
  readonly #cors: CorsPolicy;
  readonly #dashboard: Dashboard | undefined;
  #inflight = 0;
  /** Connections open now (#reply writes at once when there is one). */
  #connectionCount = 0;
  /** Replies of the one-step lane waiting for the end of this turn of the event loop (#flushHeld). */
  #held: Array<{ readonly exchange: Exchange; readonly reply: Reply }> = [];

  constructor(options: HttpFrontendOptions) {
    this.#options = options;
    this.#cors = new CorsPolicy(options.corsOrigins ?? []);
    this.#dashboard = options.dashboard !== undefined ? new Dashboard(options.dashboard, options.access ?? OPEN_ACCESS) : undefined;
    const server = createWebServer({ keepAliveTimeout: KEEP_ALIVE_MS }, options.tls, (req, res) => this.#handle(req, res));
    this.#server = server;
    this.#lane = options.tls === undefined ? this.#takeConnections(server) : undefined;
    server.on('connection', (socket: Socket) => {
      this.#connectionCount++;
      socket.once('close', () => this.#connectionCount--);
    });
  }

  /**
   * The lane, given every connection the server accepts in place of node:http, which gets a connection
   * from the lane when its first request is one the lane leaves to it. NOTE: node:http takes its
   * connections through its own 'connection' listener, which the lane takes the place of and calls.
   */
  #takeConnections(server: WebServer): Http1Lane {
    const [nodeListener] = server.listeners('connection') as Array<(socket: Socket) => void>;
    if (nodeListener === undefined) throw new Error('node:http registered no connection listener');
    server.removeListener('connection', nodeListener);
    const lane = new Http1Lane({
      maxBodyBytes: Math.min(ONE_STEP_BODY_BYTES, this.#options.maxInputBytes),
      keepAliveMs: KEEP_ALIVE_MS,
      accepts: (method, path) => !isDashboardPath(path) && !isStreamedRoute(method, path),
      serve: (request) => this.#serveLane(request),
      abandoned: (method, url) => this.#options.logger.verbose(1, 'http', `${method} ${url}: ${clientDisconnected().message}`),
      handOff: (socket, unread) => {
        nodeListener.call(server, socket);
        if (unread !== undefined) socket.emit('data', unread);
      },
    });
    server.on('connection', (socket: Socket) => lane.accept(socket));
    return lane;
  }

  listen(port: number, host: string): Promise<AddressInfo> {
    return listen(this.#server, port, host);
  }

  /** HTTP requests being handled now, and those whose body the HTTP/1.1 lane is still reading. */
  get inflightCount(): number {
    return this.#inflight + (this.#lane?.readingCount ?? 0);
  }

  /** Stops accepting connections; requests already received are answered, dashboard streams end, then idle connections close. */
  close(): Promise<void> {
    this.#dashboard?.close();
    return new Promise((resolve) => {
      this.#server.close(() => resolve());
      this.#server.closeIdleConnections();
      this.#lane?.close();
    });
  }

  /** Closes every connection at once, answered or not. */
  closeAllConnections(): void {
    this.#server.closeAllConnections();
    this.#lane?.destroyAll();
  }

  #handle(req: IncomingMessage, res: ServerResponse): void {
    const receivedNs = process.hrtime.bigint();
    this.#inflight++;
    const exchange: Exchange = {
      method: req.method ?? 'GET',
      url: req.url ?? '/',
      headers: req.headers,
      receivedNs,
      signal: connectionSignal(req.socket),
      node: { req, res },
      lane: undefined,
    };
    this.#serve(exchange);
  }

  /** A request the HTTP/1.1 lane read whole. */
  #serveLane(request: LaneRequest): void {
    this.#inflight++;
    const exchange: Exchange = {
      node: undefined,
      method: request.method,
      url: request.url,
      headers: request.headers,
      receivedNs: request.receivedNs,
      signal: request.connection.signal,
      lane: request,
    };
    this.#serve(exchange);
  }

  /** An inference request takes #serveInfer; any other #dispatch. */
  #serve(exchange: Exchange): void {
    const route = this.#inferRoute(exchange);
    if (route !== undefined) this.#serveInfer(exchange, route);
    else void this.#answer(exchange, this.#dispatch(exchange));
  }

  /** Sends what a handler answered, or the error it failed with; the request is then no longer in flight. */
  async #answer(exchange: Exchange, replied: Reply | Promise<Reply>): Promise<void> {
    let reply: Reply;
    try {
      reply = await replied;
    } catch (error) {
      if ((error instanceof NereidError && error.reason === 'CLIENT_DISCONNECTED') || exchange.signal.aborted) {
        this.#options.logger.verbose(1, 'http', `${exchange.method} ${exchange.url}: ${(error as Error).message}`);
        this.#inflight--;
        return;
      }
      reply = this.#errorReply(error);
    }
    try {
      await this.#send(exchange, reply);
    } catch (error) {
      // A bug (errorReply logs it with its stack): the reply may be half written, so the connection goes.
      errorReply(error, this.#options.logger);
      if (exchange.node === undefined) exchange.lane.connection.destroy();
      else exchange.node.res.destroy();
    } finally {
      this.#inflight--;
    }
  }

  #errorReply(error: unknown): Reply {
    const { status, headers, body } = errorReply(error, this.#options.logger);
    return { status, headers, chunks: [Buffer.from(body)] };
  }

  /**
   * The route of an inference request that may take the one-step lane (#inferNow): a POST to a
   * model's infer path that the access policy and the CORS policy let through. Undefined for any
   * other request, and for one they refuse: #dispatch then answers it with the reason.
   */
  #inferRoute(exchange: Exchange): (Route & { readonly kind: 'model' }) | undefined {
    if (exchange.method !== 'POST') return undefined;
    try {
      const route = routeOf('POST', exchange.url.split('?', 1)[0]!);
      if (route.kind !== 'model' || route.action !== 'infer') return undefined;
      checkHttpAccess(route, exchange.headers, this.#options.access ?? OPEN_ACCESS);
      this.#cors.check(exchange, route);
      return route;
    } catch {
      return undefined;
    }
  }

  /**
   * An inference request. NOTE: the one-step lane: an untraced request whose body is at hand (the
   * HTTP/1.1 lane's) or small and uncompressed (read from node:http without a promise) is answered in
   * one step when handleInferNow can (a model that runs it at once). Every await from here to the
   * socket cost a microtask turn and the state kept across it, a sizeable share of an unbatched request
   * (docs/benchmarks.md, "The hot path"). Anything else takes #infer's path, with the body already read.
   */
  #serveInfer(exchange: Exchange, route: { readonly modelName: string; readonly modelVersion: number | undefined }): void {
    let trace: RequestTrace | undefined;
    try {
      trace = this.#startTrace(exchange, route);
    } catch (error) {
      void this.#answer(exchange, Promise.reject(error));
      return;
    }
    const forwarded = this.#forwardedOf(exchange);
    if (trace !== undefined || (exchange.node !== undefined && !isOneStepBody(exchange.headers, this.#options.maxInputBytes))) {
      void this.#answer(exchange, this.#traced(exchange, trace, (body, sampled) => this.#infer(exchange, route, body, sampled, forwarded)));
      return;
    }
    if (exchange.node === undefined) {
      this.#inferNow(exchange, route, laneBody(exchange.lane), forwarded);
      return;
    }
    readSmallBody(
      exchange.node.req,
      (body) => this.#inferNow(exchange, route, body, forwarded),
      (error) => void this.#answer(exchange, Promise.reject(error)),
    );
  }

  /** An untraced inference request with its body: answered by handleInferNow where it can, by #infer otherwise. */
  #inferNow(exchange: Exchange, route: { readonly modelName: string; readonly modelVersion: number | undefined }, body: Buffer, forwarded: Parameters | undefined): void {
    let reply: Reply | Promise<Reply> | undefined;
    try {
      const isTaken = handleInferNow(this.#options.server, route, { headers: exchange.headers, body, signal: exchange.signal, forwarded }, (answered) =>
        this.#reply(exchange, answered),
      );
      if (!isTaken) reply = this.#infer(exchange, route, body, undefined, forwarded);
    } catch (error) {
      reply = Promise.reject(error);
    }
    if (reply !== undefined) this.#reply(exchange, reply);
  }

  /** Sends a reply of the one-step lane: one at hand is held for the end of the turn (#flushHeld), a promised one goes to #answer. */
  #reply(exchange: Exchange, reply: Reply | Promise<Reply>): void {
    if (reply instanceof Promise) {
      void this.#answer(exchange, reply);
      return;
    }
    if (this.#held.push({ exchange, reply }) > 1) return;
    // A lone client has no other reply to share a wake-up with: holding its reply only delays it.
    if (this.#connectionCount === 1) this.#flushHeld();
    else setImmediate(this.#flushHeld);
  }

  /**
   * Writes the replies the one-step lane held during this turn of the event loop, one after the other.
   * NOTE: held, not written at once, because a write wakes the client's side of the connection, and on
   * this project's virtual machines waking an idle core costs more than the request's own work: written
   * as each request is answered, wrk's core slept and woke between replies, and the kernel's share of an
   * unbatched request doubled (docs/benchmarks.md, "The hot path"). Written together, one wake-up serves
   * every reply of the turn, as a server that answers in a setImmediate does.
   */
  readonly #flushHeld = (): void => {
    const held = this.#held;
    this.#held = [];
    for (const { exchange, reply } of held) {
      let isSent: boolean;
      let unsent = reply;
      try {
        isSent = this.#sendNow(exchange, reply);
      } catch (error) {
        // Not a NereidError: a bug, which errorReply logs with its stack; the reply was not written.
        isSent = false;
        unsent = this.#errorReply(error);
      }
      if (isSent) this.#inflight--;
      else void this.#answer(exchange, unsent);
    }
  };

  async #dispatch(exchange: Exchange): Promise<Reply> {
    const { server } = this.#options;
    const path = exchange.url.split('?', 1)[0]!;
    const preflight = this.#cors.preflight(exchange);
    if (preflight !== undefined) return preflight;
    if (this.#dashboard !== undefined && exchange.node !== undefined && isDashboardPath(path)) return this.#dashboard.handle(exchange.node.req, path);
    const route = routeOf(exchange.method, path);
    checkHttpAccess(route, exchange.headers, this.#options.access ?? OPEN_ACCESS);
    this.#cors.check(exchange, route);
    if (route.kind === 'model') {
      const context = (trace: RequestTrace | undefined): GenerateContext => ({ trace, signal: exchange.signal, forwarded: this.#forwardedOf(exchange) });
      switch (route.action) {
        case 'infer':
          return this.#traced(exchange, this.#startTrace(exchange, route), (body, trace) => this.#infer(exchange, route, body, trace, this.#forwardedOf(exchange)));
        case 'generate':
          return this.#traced(exchange, this.#startTrace(exchange, route), (body, trace) => handleGenerate(server, route, body, context(trace)));
        case 'generate_stream':
          return this.#traced(exchange, this.#startTrace(exchange, route), (body, trace) => handleGenerateStream(server, route, body, context(trace)));
        default:
          break;
      }
    }
    return answerRoute(route, { server, sharedMemory: this.#options.sharedMemory, method: exchange.method, readBody: () => this.#readBody(exchange) });
  }

  /**
   * An inference request with its body read, traced when `trace` is given, with the parameters its
   * headers forward (#forwardedOf); the connection's closing cancels it.
   */
  #infer(
    exchange: Exchange,
    route: { readonly modelName: string; readonly modelVersion: number | undefined },
    body: Buffer,
    trace: RequestTrace | undefined,
    forwarded: Parameters | undefined,
  ): Promise<Reply> {
    const sharedMemory = this.#options.sharedMemory !== undefined ? { sharedMemory: this.#options.sharedMemory } : {};
    return handleInfer(this.#options.server, route, {
      headers: exchange.headers,
      body,
      ...sharedMemory,
      signal: exchange.signal,
      ...(trace !== undefined ? { trace } : {}),
      ...(forwarded !== undefined ? { forwarded } : {}),
    });
  }

  /** The request parameters its headers forward (`--http-header-forward-pattern`), their names as the client sent them, or undefined. */
  #forwardedOf(exchange: Exchange): Parameters | undefined {
    const pattern = this.#options.headerForwardPattern;
    if (pattern === undefined) return undefined;
    return forwardedHeaders(pattern, exchange.node !== undefined ? rawHeaderPairs(exchange.node.req.rawHeaders) : headLinePairs(exchange.lane.rawHead));
  }

  /**
   * A trace for an inference request (infer, generate, generate_stream) when the trace settings sample
   * it or, in OpenTelemetry mode, when it carries a W3C `traceparent`.
   */
  #startTrace(exchange: Exchange, route: { readonly modelName: string }): RequestTrace | undefined {
    const { traceparent, tracestate } = exchange.headers;
    const carrier = typeof traceparent === 'string' ? { traceparent, ...(typeof tracestate === 'string' ? { tracestate } : {}) } : undefined;
    return this.#options.server.startTrace(route.modelName, carrier);
  }

  /**
   * Reads the body and runs `handle`, recording Triton's HTTP_RECV_START and _END on the trace when
   * there is one. The reply carries the trace: #send records the send and ends it.
   */
  async #traced(exchange: Exchange, trace: RequestTrace | undefined, handle: (body: Buffer, trace: RequestTrace | undefined) => Promise<Reply>): Promise<Reply> {
    if (trace === undefined) return handle(await this.#readBody(exchange), undefined);
    trace.timestamp('HTTP_RECV_START', exchange.receivedNs);
    try {
      const body = await this.#readBody(exchange);
      trace.timestamp('HTTP_RECV_END');
      return { ...(await handle(body, trace)), trace };
    } catch (error) {
      trace.end();
      throw error;
    }
  }

  /**
   * Reads the whole body, refusing more than maxInputBytes before or after decompression (read-body.ts).
   * The lane's body is at hand, within the limits and not compressed (http1-lane.ts hands any other to
   * node:http).
   */
  async #readBody(exchange: Exchange): Promise<Buffer> {
    if (exchange.node === undefined) return laneBody(exchange.lane);
    const { req } = exchange.node;
    const limit = this.#options.maxInputBytes;
    const { chunks, size } = await readBodyChunks(req, limit);
    const encoding = contentEncodingOf(req.headers);
    if (isIdentityEncoding(encoding)) return joinBody(chunks, size, req.headers);
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
      if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw bodyTooLarge(req, `more than ${limit} bytes once decompressed`, limit);
      throw new NereidError('INVALID_ARG', `cannot decompress the ${encoding} request body: ${(error as Error).message}`);
    }
  }

  /** Writes the reply, compressed when it may be and the client accepts gzip or deflate. */
  async #send(exchange: Exchange, reply: Reply): Promise<void> {
    if (this.#sendNow(exchange, reply)) return;
    const headers = { ...reply.headers, ...this.#cors.responseHeaders(exchange) };
    let chunks = reply.chunks;
    const encoding = reply.isCompressible === true ? acceptedEncoding(exchange.headers['accept-encoding']) : undefined;
    if (encoding !== undefined && chunks.length > 0) {
      chunks = [await compressBody[encoding](Buffer.concat(chunks))];
      headers['content-encoding'] = encoding;
    }
    const { trace } = reply;
    if (trace !== undefined) trace.timestamp('HTTP_SEND_START');
    if (exchange.node === undefined) {
      // The lane serves no path whose reply is streamed (generate_stream, the dashboard's events).
      if (reply.stream !== undefined) throw new Error(`a streamed reply to ${exchange.url} on the HTTP/1.1 lane`);
      const sent =
        trace === undefined
          ? undefined
          : (): void => {
              trace.timestamp('HTTP_SEND_END');
              trace.end();
            };
      exchange.lane.connection.respond(reply.status, headers, chunks, sent);
      return;
    }
    const { req, res } = exchange.node;
    if (trace !== undefined) {
      res.once('finish', () => trace.timestamp('HTTP_SEND_END'));
      res.once('close', () => trace.end());
    }
    if (reply.stream !== undefined) {
      await writeStreamedReply(res, reply.status, headers, reply.stream);
      return;
    }
    writeReply(req, res, reply.status, headers, chunks);
  }

  /**
   * #send in this step, for a reply that is neither compressed, streamed nor traced: true once written;
   * false, nothing done, for any other.
   */
  #sendNow(exchange: Exchange, reply: Reply): boolean {
    if (reply.stream !== undefined || reply.trace !== undefined) return false;
    if (reply.isCompressible === true && reply.chunks.length > 0 && acceptedEncoding(exchange.headers['accept-encoding']) !== undefined) return false;
    const cors = exchange.headers.origin === undefined ? undefined : this.#cors.responseHeaders(exchange);
    if (exchange.node === undefined) {
      exchange.lane.connection.respond(reply.status, cors === undefined ? (reply.headers ?? {}) : { ...reply.headers, ...cors }, reply.chunks);
      return true;
    }
    const { req, res } = exchange.node;
    writeReply(req, res, reply.status, cors === undefined ? { ...reply.headers } : { ...reply.headers, ...cors }, reply.chunks);
    return true;
  }
}
