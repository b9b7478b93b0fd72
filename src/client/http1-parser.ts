/** One HTTP/1.1 response as the parser hands it over. */
export interface ParsedResponse {
  readonly status: number;
  /** Header names in lower case; repeated headers joined with ", ". */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
  /** Whether the connection may carry another request (no `Connection: close`, a framed body). */
  readonly isReusable: boolean;
}

export class ResponseParseError extends Error {
  override readonly name = 'ResponseParseError';
}

/** Longest response head accepted (status line and headers). */
const MAX_HEAD_BYTES = 64 * 1024;
const CRLF_CRLF = Buffer.from('\r\n\r\n');

/** The status line and headers of the response being read. */
type Head = Omit<ParsedResponse, 'body'>;

/** How the body of the response being read ends (RFC 9112 section 6.3). */
type BodyFraming =
  | { readonly kind: 'length'; remaining: number }
  | { readonly kind: 'chunked'; step: ChunkedStep; remaining: number }
  | { readonly kind: 'until-close' };

/** Where a chunked body is: at a chunk-size line, in chunk data, at the CRLF after it, or in the trailers. */
type ChunkedStep = 'size' | 'data' | 'data-end' | 'trailers';

/**
 * Reads HTTP/1.1 responses from the bytes of one connection (RFC 9112): status line and headers, then
 * a body framed by Content-Length, chunked transfer coding, or the end of the connection. 1xx
 * responses are skipped; 204 and 304 have no body. Only what a client of a KServe v2 server meets:
 * no upgrade, no HEAD.
 *
 *     push(bytes) ─▶ [head] ─CRLFCRLF─▶ [body: length | chunked | until close] ─▶ response
 *                      ▲                                                             │
 *                      └──────────────────── next response ◀────────────────────────┘
 */
export class ResponseParser {
  /** Bytes received and not yet consumed. */
  #pending: Buffer = Buffer.alloc(0);
  #head: Head | undefined;
  #framing: BodyFraming | undefined;
  #bodyChunks: Buffer[] = [];

  /** Whether a response has started and not yet completed. */
  get isInResponse(): boolean {
    return this.#head !== undefined || this.#pending.byteLength > 0;
  }

  /** Takes bytes from the connection; returns the responses they complete, in order. Throws ResponseParseError. */
  push(chunk: Buffer): ParsedResponse[] {
    this.#pending = this.#pending.byteLength === 0 ? chunk : Buffer.concat([this.#pending, chunk]);
    const responses: ParsedResponse[] = [];
    for (;;) {
      if (this.#head === undefined && !this.#readHead()) return responses;
      const response = this.#readBody();
      if (response === undefined) return responses;
      responses.push(response);
    }
  }

  /** The connection ended: completes a body read until the end, or throws if a response was cut off. */
  end(): ParsedResponse | undefined {
    if (this.#head !== undefined && this.#framing?.kind === 'until-close') {
      this.#bodyChunks.push(this.#pending);
      this.#pending = Buffer.alloc(0);
      return this.#complete();
    }
    if (this.isInResponse) throw new ResponseParseError('the connection closed in the middle of a response');
    return undefined;
  }

  #readHead(): boolean {
    const end = this.#pending.indexOf(CRLF_CRLF);
    if (end < 0) {
      if (this.#pending.byteLength > MAX_HEAD_BYTES) throw new ResponseParseError(`the response head is longer than ${MAX_HEAD_BYTES} bytes`);
      return false;
    }
    const lines = this.#pending.toString('latin1', 0, end).split('\r\n');
    this.#pending = this.#pending.subarray(end + 4);
    const statusLine = /^HTTP\/1\.([01]) (\d{3})(?: .*)?$/.exec(lines[0]!);
    if (statusLine === null) throw new ResponseParseError(`not an HTTP/1.x status line: ${JSON.stringify(lines[0]!.slice(0, 80))}`);
    const status = Number(statusLine[2]);
    const headers: Record<string, string> = {};
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      if (colon <= 0) throw new ResponseParseError(`malformed header line: ${JSON.stringify(line.slice(0, 80))}`);
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
    }
    if (status >= 100 && status < 200) return this.#pending.byteLength > 0 ? this.#readHead() : false;
    const connection = (headers.connection ?? '').toLowerCase();
    const isHttp10 = statusLine[1] === '0';
    let isReusable = isHttp10 ? /\bkeep-alive\b/.test(connection) : !/\bclose\b/.test(connection);
    if (status === 204 || status === 304) {
      this.#framing = { kind: 'length', remaining: 0 };
    } else if (/\bchunked\b/i.test(headers['transfer-encoding'] ?? '')) {
      this.#framing = { kind: 'chunked', step: 'size', remaining: 0 };
    } else if (headers['content-length'] !== undefined) {
      const length = Number(headers['content-length']);
      if (!Number.isSafeInteger(length) || length < 0) throw new ResponseParseError(`invalid Content-Length ${JSON.stringify(headers['content-length'])}`);
      this.#framing = { kind: 'length', remaining: length };
    } else {
      this.#framing = { kind: 'until-close' };
      isReusable = false;
    }
    this.#head = { status, headers, isReusable };
    return true;
  }

  /** Reads as much of the body as has arrived; the response once it is complete. */
  #readBody(): ParsedResponse | undefined {
    const framing = this.#framing!;
    if (framing.kind === 'until-close') {
      if (this.#pending.byteLength > 0) this.#bodyChunks.push(this.#pending);
      this.#pending = Buffer.alloc(0);
      return undefined;
    }
    if (framing.kind === 'length') {
      const take = Math.min(framing.remaining, this.#pending.byteLength);
      if (take > 0) {
        this.#bodyChunks.push(this.#pending.subarray(0, take));
        this.#pending = this.#pending.subarray(take);
        framing.remaining -= take;
      }
      return framing.remaining === 0 ? this.#complete() : undefined;
    }
    for (;;) {
      switch (framing.step) {
        case 'size': {
          const lineEnd = this.#pending.indexOf('\r\n');
          if (lineEnd < 0) return undefined;
          const sizeText = this.#pending.toString('latin1', 0, lineEnd).split(';')[0]!.trim();
          if (!/^[0-9a-fA-F]{1,12}$/.test(sizeText)) throw new ResponseParseError(`malformed chunk size ${JSON.stringify(sizeText.slice(0, 20))}`);
          this.#pending = this.#pending.subarray(lineEnd + 2);
          framing.remaining = parseInt(sizeText, 16);
          framing.step = framing.remaining === 0 ? 'trailers' : 'data';
          break;
        }
        case 'data': {
          const take = Math.min(framing.remaining, this.#pending.byteLength);
          if (take === 0) return undefined;
          this.#bodyChunks.push(this.#pending.subarray(0, take));
          this.#pending = this.#pending.subarray(take);
          framing.remaining -= take;
          if (framing.remaining === 0) framing.step = 'data-end';
          break;
        }
        case 'data-end':
          if (this.#pending.byteLength < 2) return undefined;
          this.#pending = this.#pending.subarray(2);
          framing.step = 'size';
          break;
        case 'trailers': {
          // Trailer lines, ignored, up to an empty line.
          const lineEnd = this.#pending.indexOf('\r\n');
          if (lineEnd < 0) return undefined;
          this.#pending = this.#pending.subarray(lineEnd + 2);
          if (lineEnd === 0) return this.#complete();
          break;
        }
      }
    }
  }

  #complete(): ParsedResponse {
    const head = this.#head!;
    const body = this.#bodyChunks.length === 1 ? this.#bodyChunks[0]! : Buffer.concat(this.#bodyChunks);
    this.#head = undefined;
    this.#framing = undefined;
    this.#bodyChunks = [];
    return { status: head.status, headers: head.headers, body, isReusable: head.isReusable };
  }
}
