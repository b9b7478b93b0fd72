import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type InferenceServer, NereidError, type RequestTrace } from '../core/index.js';
import type { Logger } from '../logging/logger.js';
import { type WebServer, createWebServer } from './create-web-server.js';
import { errorReply } from './http/errors.js';
import { handleInfer } from './http/handlers/infer.js';
import { joinBody } from './http/join-body.js';
import { readBodyChunks } from './http/read-body.js';
import { type Reply, jsonReply } from './http/reply.js';
import { headerValue } from './http/access-check.js';
import { writeReply, writeStreamedReply } from './http/write-reply.js';
import { jsonHeaderSize } from './json-header-size.js';
import { listen } from './listen.js';
import type { SharedMemoryRegistry } from './shared-memory/shared-memory-registry.js';

/** The model a request runs, and its version (undefined: the newest ready one). */
export type ModelTarget = { readonly modelName: string; readonly modelVersion: number | undefined };

/** One request on a platform's port, with what answering it needs. */
export interface PlatformRequest {
  readonly req: IncomingMessage;
  /** The path, without the query. */
  readonly path: string;
  /** Aborted when the client goes away before the answer: the request is cancelled. */
  readonly signal: AbortSignal;
  readonly receivedNs: bigint;
}

export interface PlatformPortOptions {
  readonly server: InferenceServer;
  readonly logger: Logger;
  /** The platform's name in log lines ('Vertex AI', 'SageMaker'). */
  readonly platform: string;
  /** `--http-max-input-size`: the largest request body accepted. */
  readonly maxInputBytes: number;
  /** The system shared memory regions, shared with the other front ends. */
  readonly sharedMemory?: SharedMemoryRegistry;
}

/** Triton's answer to a method a platform's inference or health route does not take. */
export const METHOD_NOT_ALLOWED: Reply = jsonReply({ error: 'Method Not Allowed' }, 405);

/**
 * Whether a web page sent the request: a browser sends `Origin` with every POST, PUT and DELETE, the
 * cloud platforms never do. NOTE: a page may POST a plain-text body anywhere without asking first (no
 * preflight), so these ports, which have no page of their own to serve, refuse any such request rather
 * than let a page that a user on the machine opens infer, load or unload.
 */
function isFromWebPage(req: IncomingMessage): boolean {
  return req.headers.origin !== undefined && req.method !== 'GET' && req.method !== 'HEAD';
}

const webPageRefused = (platform: string, req: IncomingMessage): NereidError =>
  new NereidError('PERMISSION_DENIED', `requests from web pages (Origin '${req.headers.origin}') are refused on the ${platform} port: only ${platform} calls it`, {
    reason: 'CROSS_ORIGIN_REFUSED',
  });

/**
 * The HTTP port a cloud platform's container contract is served on (Triton's Vertex AI and SageMaker
 * front ends, both HTTPAPIServer subclasses): plain node:http on a port of its own, whose routes the
 * platform's front end answers (`answer`). Bodies are never compressed either way, the JSON header's
 * length of an inference request comes from its Content-Type (json-header-size.ts), and an error is
 * `{"error": ...}` with its status (http/errors.ts).
 */
export class PlatformPort {
  readonly #options: PlatformPortOptions;
  readonly #server: WebServer;
  /** Requests received and not yet answered (the server's shutdown waits for them). */
  #inflight = 0;

  constructor(options: PlatformPortOptions, answer: (request: PlatformRequest) => Promise<Reply>) {
    this.#options = options;
    this.#server = createWebServer({}, undefined, (req, res) => this.#handle(req, res, answer));
  }

  listen(port: number, host: string): Promise<AddressInfo> {
    return listen(this.#server, port, host);
  }

  get inflightCount(): number {
    return this.#inflight;
  }

  /** Stops accepting connections; requests already received are answered, then idle connections close. */
  close(): Promise<void> {
    return new Promise((resolve) => {
      this.#server.close(() => resolve());
      this.#server.closeIdleConnections();
    });
  }

  /** Closes every connection at once, answered or not. */
  closeAllConnections(): void {
    this.#server.closeAllConnections();
  }

  /** The request's whole body, up to --http-max-input-size. */
  async readBody(req: IncomingMessage): Promise<Buffer> {
    const { chunks, size } = await readBodyChunks(req, this.#options.maxInputBytes);
    return joinBody(chunks, size, {});
  }

  /**
   * An inference request on `target`: its JSON header's length is read from a Content-Type of `mime`
   * (never from Inference-Header-Content-Length); an empty body is a raw input, as Triton's header
   * length of 0 makes it.
   */
  infer(request: PlatformRequest, target: ModelTarget, mime: string): Promise<Reply> {
    const { server, sharedMemory } = this.#options;
    return this.traced(request, target, async (chunks, size, trace) => {
      const headerLength = jsonHeaderSize(mime, headerValue(request.req.headers, 'content-type'), size);
      const headers: IncomingHttpHeaders = headerLength === size && size > 0 ? {} : { 'inference-header-content-length': String(headerLength) };
      return handleInfer(server, target, {
        headers,
        body: joinBody(chunks, size, headers),
        signal: request.signal,
        ...(sharedMemory !== undefined ? { sharedMemory } : {}),
        ...(trace !== undefined ? { trace } : {}),
      });
    });
  }

  /**
   * A request that runs `target` (inference, generate), as Triton's HandleInfer and HandleGenerate take
   * it: the model is looked up before the body is read (an unknown model's error, not the body's), and
   * the request is traced when the trace settings sample it, the reply carrying the trace to #send.
   */
  async traced(
    request: PlatformRequest,
    target: ModelTarget,
    handle: (chunks: readonly Buffer[], size: number, trace: RequestTrace | undefined) => Promise<Reply>,
  ): Promise<Reply> {
    const { server } = this.#options;
    await server.modelSpec(target.modelName, target.modelVersion);
    const trace: RequestTrace | undefined = server.startTrace(target.modelName);
    try {
      trace?.timestamp('HTTP_RECV_START', request.receivedNs);
      const { chunks, size } = await readBodyChunks(request.req, this.#options.maxInputBytes);
      trace?.timestamp('HTTP_RECV_END');
      const reply = await handle(chunks, size, trace);
      return trace === undefined ? reply : { ...reply, trace };
    } catch (error) {
      trace?.end();
      throw error;
    }
  }

  #handle(req: IncomingMessage, res: ServerResponse, answer: (request: PlatformRequest) => Promise<Reply>): void {
    const receivedNs = process.hrtime.bigint();
    const path = (req.url ?? '/').split('?', 1)[0]!;
    const { logger, platform } = this.#options;
    logger.verbose(1, 'server', `${platform} request: ${req.method} ${path}`);
    const cancel = new AbortController();
    this.#inflight++;
    res.once('close', () => {
      this.#inflight--;
      if (!res.writableFinished) cancel.abort();
    });
    const send = (reply: Reply): void => {
      try {
        this.#send(req, res, reply);
      } catch (error) {
        // A bug (errorReply logs it with its stack): the reply may be half written, so the connection goes.
        errorReply(error, logger);
        res.destroy();
      }
    };
    const answered = isFromWebPage(req) ? Promise.reject(webPageRefused(platform, req)) : answer({ req, path, signal: cancel.signal, receivedNs });
    answered.then(send, (error: unknown) => {
      if (cancel.signal.aborted) {
        logger.verbose(1, 'server', `${platform} ${req.method} ${path}: the client closed the connection first`);
        return;
      }
      const { status, headers, body } = errorReply(error, logger);
      send({ status, headers, chunks: [Buffer.from(body)] });
    });
  }

  /** Writes a reply as it is (never compressed), recording the send on its trace. */
  #send(req: IncomingMessage, res: ServerResponse, reply: Reply): void {
    const { trace } = reply;
    if (trace !== undefined) {
      trace.timestamp('HTTP_SEND_START');
      res.once('finish', () => trace.timestamp('HTTP_SEND_END'));
      res.once('close', () => trace.end());
    }
    if (reply.stream === undefined) {
      writeReply(req, res, reply.status, { ...reply.headers }, reply.chunks);
      return;
    }
    writeStreamedReply(res, reply.status, { ...reply.headers }, reply.stream).catch((error: unknown) => {
      this.#options.logger.error('server', `${this.#options.platform}: streaming a reply failed: ${(error as Error).stack ?? String(error)}`);
      res.destroy();
    });
  }
}
