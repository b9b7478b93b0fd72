import { type IncomingHttpHeaders, type OutgoingHttpHeaders, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';

/**
 * The HTTP/1.1 lane: the plain-HTTP front end reads every connection here first. Requests that need
 * nothing of HTTP but a request line, headers and a body of declared length are parsed and answered on
 * the socket directly; the first request that needs more (a chunked, compressed or large body, `Expect`,
 * an upgrade, HTTP/1.0, a method or path the front end keeps for node:http, anything malformed or
 * unusual) hands the connection, with every byte not yet answered, to node:http for good, which then
 * answers it and all that follow as it would have from the start.
 *
 * NOTE: our own parser and writer rather than node:http's, because node:http is most of what a small
 * request costs: on this project's 2-core machine a node:http server answering constant bytes served
 * 58,000 requests/s of the response cache's JSON mix, and a socket server doing the same through this
 * kind of parsing 133,000 (docs/benchmarks.md, "The HTTP/1.1 lane"). The parser is strict on purpose:
 * whatever it does not recognise as the plain case goes to node:http, so the errors and edge cases
 * (400s, 431s, chunked bodies) stay node's; a head or body too slow to arrive gets node's 408 from the
 * lane, after node's timeouts.
 */

/** A request the lane read whole; the front end answers it with LaneConnection.respond. */
export interface LaneRequest {
  readonly method: 'GET' | 'POST';
  readonly url: string;
  /** Header names in lower case, as node:http gives them. */
  readonly headers: IncomingHttpHeaders;
  /** The head as it came (request line and header lines, CRLF-separated): the names in the client's case. */
  readonly rawHead: string;
  readonly body: Buffer;
  /** When the lane had read it whole (process.hrtime.bigint()). */
  readonly receivedNs: bigint;
  readonly connection: LaneConnection;
}

export interface Http1LaneOptions {
  /** Largest body the lane reads itself (a larger one goes to node:http). */
  readonly maxBodyBytes: number;
  /** Whether the front end lets the lane serve a request for this path; false hands the connection over. */
  readonly accepts: (method: 'GET' | 'POST', path: string) => boolean;
  readonly serve: (request: LaneRequest) => void;
  /** node:http takes the connection, with `unread`, the bytes the lane read and did not answer. */
  readonly handOff: (socket: Socket, unread: Buffer | undefined) => void;
  /** An idle connection closes after this long without a request (node:http's keepAliveTimeout). */
  readonly keepAliveMs: number;
  /** The client went away between a request's head and the end of its body. */
  readonly abandoned: (method: string, url: string) => void;
  /** A head, and a whole request, must arrive within these (node:http's headersTimeout and requestTimeout: 60 s and 300 s). */
  readonly headersTimeoutMs?: number;
  readonly requestTimeoutMs?: number;
}

/** The most a request's head may take before node:http handles it (node's --max-http-header-size default, 16 KiB). */
const MAX_HEAD_BYTES = 16 * 1024;
/** Bytes of pipelined requests read ahead while one is answered, before the socket stops reading. */
const MAX_READ_AHEAD_BYTES = 256 * 1024;
/** Replies up to this size are written as one buffer; larger ones as their chunks, corked. */
const SMALL_REPLY_BYTES = 16 * 1024;

const HEAD_END = Buffer.from('\r\n\r\n');
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9a-z]+$/;
const DECIMAL = /^[0-9]{1,15}$/;
/** Headers whose meaning the lane does not implement: a request with one goes to node:http. */
const HANDED_OFF_HEADERS: ReadonlySet<string> = new Set(['transfer-encoding', 'expect', 'upgrade', 'http2-settings']);

/** A parsed request head. */
interface Head {
  readonly method: 'GET' | 'POST';
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  /** The text it was parsed from. */
  readonly text: string;
}

/** Whether a header value holds a control character other than a tab (node:http answers 400 to one). */
function hasControlCharacter(value: string): boolean {
  for (let index = 0; index < value.length; index++) {
    const code = value.charCodeAt(index);
    if ((code < 0x20 && code !== 0x09) || code === 0x7f) return true;
  }
  return false;
}

const isBlank = (code: number): boolean => code === 0x20 || code === 0x09;

/** Whether a request target is printable ASCII only (node:http's parser judges any other). */
function isVisibleAscii(text: string): boolean {
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code <= 0x20 || code >= 0x7f) return false;
  }
  return true;
}

/** The head of a request: request line and headers; undefined for anything but the plain case. */
function parseHead(text: string): Head | undefined {
  let lineEnd = text.indexOf('\r\n');
  if (lineEnd < 0) lineEnd = text.length;
  const methodEnd = text.indexOf(' ');
  const urlEnd = text.lastIndexOf(' ', lineEnd);
  if (methodEnd <= 0 || urlEnd <= methodEnd + 1 || text.slice(urlEnd + 1, lineEnd) !== 'HTTP/1.1') return undefined;
  const method = text.slice(0, methodEnd);
  if (method !== 'GET' && method !== 'POST') return undefined;
  const url = text.slice(methodEnd + 1, urlEnd);
  if (url.charCodeAt(0) !== 0x2f || !isVisibleAscii(url)) return undefined;
  const headers: IncomingHttpHeaders = {};
  let start = lineEnd + 2;
  while (start < text.length) {
    let end = text.indexOf('\r\n', start);
    if (end < 0) end = text.length;
    const colon = text.indexOf(':', start);
    if (colon <= start || colon >= end) return undefined;
    const name = text.slice(start, colon).toLowerCase();
    let valueStart = colon + 1;
    let valueEnd = end;
    while (valueStart < valueEnd && isBlank(text.charCodeAt(valueStart))) valueStart++;
    while (valueEnd > valueStart && isBlank(text.charCodeAt(valueEnd - 1))) valueEnd--;
    const value = text.slice(valueStart, valueEnd);
    if (!TOKEN.test(name) || hasControlCharacter(value) || name in headers || HANDED_OFF_HEADERS.has(name)) return undefined;
    // NOTE: llhttp takes spaces after a Content-Length's digits but answers 400 to a tab there.
    if (name === 'content-length' && valueEnd < end && text.slice(valueEnd, end).includes('\t')) return undefined;
    headers[name] = value;
    start = end + 2;
  }
  return { method, url, headers, text };
}

/** Whether a request line still arriving may become one the lane serves (GET or POST, a path, HTTP/1.1). */
function mayBeginRequestLine(line: string): boolean {
  const methodEnd = line.indexOf(' ');
  if (methodEnd < 0) return 'GET'.startsWith(line) || 'POST'.startsWith(line);
  const urlEnd = line.indexOf(' ', methodEnd + 1);
  const url = line.slice(methodEnd + 1, urlEnd < 0 ? undefined : urlEnd);
  return (
    (line.startsWith('GET ') || line.startsWith('POST ')) &&
    (url === '' || url.charCodeAt(0) === 0x2f) &&
    isVisibleAscii(url) &&
    (urlEnd < 0 || 'HTTP/1.1'.startsWith(line.slice(urlEnd + 1)))
  );
}

/** Whether a header line, whole or still arriving, may be one the lane reads: a token, a colon, a value without control characters. */
function mayBeHeaderLine(line: string, isWhole: boolean): boolean {
  const colon = line.indexOf(':');
  if (colon < 0) return !isWhole && (line === '' || TOKEN.test(line.toLowerCase()));
  return colon > 0 && TOKEN.test(line.slice(0, colon).toLowerCase()) && !hasControlCharacter(line.slice(colon + 1));
}

/** The Date header's value, made once a second. */
let dateSecond = 0;
let dateText = '';
function httpDate(): string {
  const second = Math.floor(Date.now() / 1000);
  if (second !== dateSecond) {
    dateSecond = second;
    dateText = new Date(second * 1000).toUTCString();
  }
  return dateText;
}

/** A reply's status line and headers, Content-Length, Date and keep-alive included. */
function replyHead(status: number, headers: OutgoingHttpHeaders, length: number, keepAliveText: string): string {
  let head = `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Unknown'}\r\n`;
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined || name === 'content-length') continue;
    if (Array.isArray(value)) for (const item of value) head += `${name}: ${item}\r\n`;
    else head += `${name}: ${value}\r\n`;
  }
  return `${head}content-length: ${length}\r\nDate: ${httpDate()}\r\n${keepAliveText}\r\n`;
}

/** node:http's headersTimeout and requestTimeout defaults, where the options give none. */
const HEADERS_TIMEOUT_MS = 60_000;
const REQUEST_TIMEOUT_MS = 300_000;

/** The lane's options with node:http's timeouts where they give none: what every connection reads. */
type ConnectionOptions = Http1LaneOptions & { readonly headersTimeoutMs: number; readonly requestTimeoutMs: number };

/** The connections the lane reads, and the hand-off of each to node:http. */
export class Http1Lane {
  readonly #options: ConnectionOptions;
  readonly #connections = new Set<LaneConnection>();
  /** The keep-alive headers of every reply, made once. */
  readonly #keepAliveText: string;
  #isClosing = false;

  constructor(options: Http1LaneOptions) {
    this.#options = { ...options, headersTimeoutMs: options.headersTimeoutMs ?? HEADERS_TIMEOUT_MS, requestTimeoutMs: options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS };
    this.#keepAliveText = `Connection: keep-alive\r\nKeep-Alive: timeout=${Math.floor(options.keepAliveMs / 1000)}\r\n`;
  }

  /** Starts reading a connection that the listening server accepted. */
  accept(socket: Socket): void {
    if (this.#isClosing) {
      socket.destroy();
      return;
    }
    const connection = new LaneConnection(socket, this.#options, this.#keepAliveText, () => this.#connections.delete(connection));
    this.#connections.add(connection);
  }

  /** Requests whose head is read and whose body is still coming (a server shutting down waits for them). */
  get readingCount(): number {
    let count = 0;
    for (const connection of this.#connections) if (connection.isReading) count++;
    return count;
  }

  /** Closes the idle connections now and every other once its reply is written; no new ones are read. */
  close(): void {
    this.#isClosing = true;
    for (const connection of this.#connections) connection.closeWhenIdle();
  }

  /** Closes every connection at once, answered or not. */
  destroyAll(): void {
    for (const connection of this.#connections) connection.destroy();
  }
}

/** node:http's answer to a request too slow to arrive. */
const REQUEST_TIMEOUT_REPLY = 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n';

/** One connection of the lane: its requests one at a time, each answered before the next is parsed. */
export class LaneConnection {
  readonly #socket: Socket;
  readonly #options: ConnectionOptions;
  readonly #release: () => void;
  /** Bytes read and not yet parsed: a request's head, or requests read ahead of the one being answered. */
  #unread: Buffer | undefined;
  /** A request whose head is parsed and whose body is still coming, with the parts of it read so far. */
  #incomplete: { readonly head: Head; readonly length: number; readonly parts: Buffer[]; size: number } | undefined;
  /** When the lane started reading the request it reads now (Date.now()), for node:http's two timeouts. */
  #requestStartMs: number | undefined;
  /** Bytes at the start of #unread whose whole lines #mayBecomePlainHead has judged. */
  #judgedBytes = 0;
  #isBusy = false;
  #isParsing = false;
  /** A reply is waiting in the socket's buffer: the next request is parsed once it drains. */
  #isWaitingForDrain = false;
  #isClosing = false;
  #controller: AbortController | undefined;
  readonly #keepAliveText: string;
  /** The lane's socket listeners, added at the start and removed at a hand-off. */
  readonly #listeners: ReadonlyArray<readonly [string, (...args: Buffer[]) => void]>;

  constructor(socket: Socket, options: ConnectionOptions, keepAliveText: string, release: () => void) {
    this.#socket = socket;
    this.#options = options;
    this.#keepAliveText = keepAliveText;
    this.#release = release;
    this.#listeners = [
      ['data', this.#onData],
      ['end', this.#onEnd],
      ['error', this.#onError],
      ['close', this.#onClose],
      ['timeout', this.#onTimeout],
    ];
    for (const [event, listener] of this.#listeners) socket.on(event, listener);
    socket.setTimeout(options.keepAliveMs);
  }

  /** Whether a request's head is read and its body is still coming. */
  get isReading(): boolean {
    return this.#incomplete !== undefined;
  }

  /** Aborted when the connection closes: a request on it not yet answered is cancelled. */
  get signal(): AbortSignal {
    this.#controller ??= new AbortController();
    return this.#controller.signal;
  }

  /**
   * Writes the reply to the request being answered (one at a time), then reads the next once the
   * socket can take more. `onWritten` runs once the bytes are handed to the operating system (the
   * trace's HTTP_SEND_END), or at once when the connection is gone. A second reply to the same request
   * is ignored.
   */
  respond(status: number, headers: OutgoingHttpHeaders, chunks: readonly Uint8Array[], onWritten?: () => void): void {
    if (!this.#isBusy) return;
    this.#isBusy = false;
    const socket = this.#socket;
    if (socket.destroyed || socket.writableEnded) {
      onWritten?.();
      this.#unread = undefined;
      return;
    }
    let length = 0;
    for (const chunk of chunks) length += chunk.byteLength;
    const head = replyHead(status, headers, length, this.#isClosing ? 'Connection: close\r\n' : this.#keepAliveText);
    if (length <= SMALL_REPLY_BYTES) {
      const bytes = Buffer.allocUnsafe(head.length + length);
      let offset = bytes.write(head, 0, 'latin1');
      for (const chunk of chunks) {
        bytes.set(chunk, offset);
        offset += chunk.byteLength;
      }
      socket.write(bytes, onWritten);
    } else {
      socket.cork();
      socket.write(head, 'latin1');
      for (let index = 0; index < chunks.length; index++) socket.write(chunks[index]!, index === chunks.length - 1 ? onWritten : undefined);
      socket.uncork();
    }
    if (this.#isClosing) {
      this.#finish();
      return;
    }
    // A client that does not read its replies is not read either (node:http pauses it the same way).
    if (socket.writableNeedDrain) {
      this.#isWaitingForDrain = true;
      socket.once('drain', this.#onDrain);
      return;
    }
    if (socket.isPaused()) socket.resume();
    this.#parse();
  }

  /** Closes the connection now when no request is being answered or read; otherwise after its reply. */
  closeWhenIdle(): void {
    this.#isClosing = true;
    if (!this.#isBusy && this.#incomplete === undefined) this.#socket.destroy();
  }

  destroy(): void {
    this.#socket.destroy();
  }

  readonly #onData = (chunk: Buffer): void => {
    const incomplete = this.#incomplete;
    if (incomplete !== undefined) {
      incomplete.parts.push(chunk);
      incomplete.size += chunk.byteLength;
    } else {
      this.#unread = this.#unread === undefined ? chunk : Buffer.concat([this.#unread, chunk]);
    }
    if (this.#isBusy || this.#isWaitingForDrain) {
      if ((this.#unread?.byteLength ?? 0) > MAX_READ_AHEAD_BYTES) this.#socket.pause();
      return;
    }
    this.#parse();
  };

  readonly #onDrain = (): void => {
    this.#isWaitingForDrain = false;
    if (this.#socket.isPaused()) this.#socket.resume();
    this.#parse();
  };

  /** Parses and serves what was read, one request at a time, until a request is incomplete or being answered. */
  #parse(): void {
    if (this.#isParsing) return;
    this.#isParsing = true;
    try {
      while (!this.#isBusy && !this.#isWaitingForDrain && (this.#unread !== undefined || this.#incomplete !== undefined)) {
        if (!this.#serveNext()) break;
      }
    } finally {
      this.#isParsing = false;
    }
  }

  /** Serves the next request when it is whole; false when it is not (or the connection left the lane). */
  #serveNext(): boolean {
    const incomplete = this.#incomplete;
    if (incomplete !== undefined) {
      if (incomplete.size < incomplete.length) {
        this.#timeOutAfter(this.#options.requestTimeoutMs);
        return false;
      }
      const bytes = incomplete.parts.length === 1 ? incomplete.parts[0]! : Buffer.concat(incomplete.parts, incomplete.size);
      this.#incomplete = undefined;
      this.#unread = bytes.byteLength > incomplete.length ? bytes.subarray(incomplete.length) : undefined;
      this.#serve(incomplete.head, bytes.subarray(0, incomplete.length));
      return true;
    }
    const bytes = this.#unread!;
    this.#requestStartMs ??= Date.now();
    const headEnd = bytes.indexOf(HEAD_END);
    if (headEnd < 0) {
      if (bytes.byteLength > MAX_HEAD_BYTES || !this.#mayBecomePlainHead(bytes)) this.#handOff();
      else this.#timeOutAfter(this.#options.headersTimeoutMs);
      return false;
    }
    const head = headEnd <= MAX_HEAD_BYTES ? parseHead(bytes.toString('latin1', 0, headEnd)) : undefined;
    const length = head === undefined ? undefined : this.#bodyLength(head.method, head.url, head.headers);
    if (head === undefined || length === undefined) {
      this.#handOff();
      return false;
    }
    const bodyStart = headEnd + 4;
    const end = bodyStart + length;
    if (bytes.byteLength < end) {
      // The body's parts are kept as they come and joined once, not copied again with each read.
      this.#incomplete = { head, length, parts: [bytes.subarray(bodyStart)], size: bytes.byteLength - bodyStart };
      this.#unread = undefined;
      return false;
    }
    this.#unread = end === bytes.byteLength ? undefined : bytes.subarray(end);
    this.#serve(head, bytes.subarray(bodyStart, end));
    return true;
  }

  #serve(head: Head, body: Buffer): void {
    this.#isBusy = true;
    this.#judgedBytes = 0;
    this.#requestStartMs = undefined;
    this.#options.serve({ method: head.method, url: head.url, headers: head.headers, rawHead: head.text, body, receivedNs: process.hrtime.bigint(), connection: this });
  }

  /**
   * Whether the head being read, its end not here yet, may still become one the lane serves. NOTE:
   * node:http answers 400 at a head's first bad byte, not at its end: a head that the lane would hand
   * over anyway goes over at once, or its client would wait for the head timeout instead. Each whole
   * line is judged once (#judgedBytes), so a head that trickles in costs no more than its length.
   */
  #mayBecomePlainHead(bytes: Buffer): boolean {
    const text = bytes.toString('latin1', this.#judgedBytes);
    let start = 0;
    for (let end = text.indexOf('\r\n'); end >= 0; end = text.indexOf('\r\n', start)) {
      const line = text.slice(start, end);
      if (this.#judgedBytes + start === 0 ? parseHead(line) === undefined : !mayBeHeaderLine(line, true)) return false;
      start = end + 2;
    }
    this.#judgedBytes += start;
    // The line still arriving, less a last CR that may begin its CRLF.
    const line = text.slice(start, text.endsWith('\r') ? -1 : undefined);
    return this.#judgedBytes === 0 ? mayBeginRequestLine(line) : mayBeHeaderLine(line, false);
  }

  /** Answers 408 and closes, as node:http does, when the request being read started more than `limitMs` ago. */
  #timeOutAfter(limitMs: number): void {
    if (this.#requestStartMs === undefined || Date.now() - this.#requestStartMs <= limitMs) return;
    this.#incomplete = undefined;
    this.#socket.write(REQUEST_TIMEOUT_REPLY, 'latin1');
    this.#finish();
  }

  /** Reads nothing more and closes once what was written is out. */
  #finish(): void {
    const socket = this.#socket;
    socket.off('data', this.#onData);
    this.#unread = undefined;
    this.#incomplete = undefined;
    socket.end();
    socket.once('finish', () => socket.destroy());
  }

  /** The body's length of a request the lane serves; undefined hands the connection to node:http. */
  #bodyLength(method: 'GET' | 'POST', url: string, headers: IncomingHttpHeaders): number | undefined {
    if (headers.host === undefined) return undefined;
    const connection = headers.connection;
    if (connection !== undefined && connection.toLowerCase() !== 'keep-alive') return undefined;
    const encoding = headers['content-encoding'];
    if (encoding !== undefined && encoding.toLowerCase() !== 'identity') return undefined;
    const declared = headers['content-length'];
    const length = declared === undefined ? 0 : DECIMAL.test(declared) ? Number(declared) : undefined;
    if (length === undefined || length > this.#options.maxBodyBytes || (method === 'POST' && declared === undefined)) return undefined;
    const queryStart = url.indexOf('?');
    return this.#options.accepts(method, queryStart < 0 ? url : url.slice(0, queryStart)) ? length : undefined;
  }

  /** Gives the connection to node:http with the bytes not answered; the lane forgets it. A connection already gone is only forgotten. */
  #handOff(): void {
    const socket = this.#socket;
    for (const [event, listener] of this.#listeners) socket.off(event, listener);
    socket.off('drain', this.#onDrain);
    socket.setTimeout(0);
    const unread = this.#unread;
    this.#unread = undefined;
    this.#release();
    if (socket.destroyed) return;
    this.#options.handOff(socket, unread);
  }

  /**
   * The client stopped sending: as node:http does (without httpAllowHalfOpen), the request it was
   * waiting for is cancelled and answered no more, and the connection ends.
   */
  readonly #onEnd = (): void => {
    this.#reportAbandoned();
    this.#unread = undefined;
    this.#controller?.abort();
    this.#socket.end();
  };

  readonly #onError = (): void => {
    // The socket closes next ('close'): its request, if any, is cancelled there.
  };

  readonly #onClose = (): void => {
    this.#reportAbandoned();
    this.#controller?.abort();
    this.#release();
  };

  /** A client gone between a request's head and the end of its body is reported (and logged) as node:http's path logs it. */
  #reportAbandoned(): void {
    const incomplete = this.#incomplete;
    if (incomplete === undefined) return;
    this.#incomplete = undefined;
    this.#options.abandoned(incomplete.head.method, incomplete.head.url);
  }

  /**
   * The socket went quiet: an idle connection closes (node:http's keepAliveTimeout); a request whose
   * head or body stopped arriving gets node's 408 once node's timeout for it has passed, the socket
   * being watched again until then.
   */
  readonly #onTimeout = (): void => {
    if (this.#isBusy) return;
    if (this.#requestStartMs === undefined) {
      this.#socket.destroy();
      return;
    }
    const { headersTimeoutMs, requestTimeoutMs, keepAliveMs } = this.#options;
    this.#timeOutAfter(this.#incomplete === undefined ? headersTimeoutMs : requestTimeoutMs);
    if (!this.#socket.writableEnded) this.#socket.setTimeout(keepAliveMs);
  };
}
