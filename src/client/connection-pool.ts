import { type Socket, connect } from 'node:net';
import { type ParsedResponse, ResponseParser } from './http1-parser.js';

export interface ConnectionPoolOptions {
  readonly host: string;
  readonly port: number;
  /** Most connections open at once; more calls wait for one to come free. */
  readonly maxSockets: number;
  /**
   * An idle connection is closed after this long. NOTE: shorter than the usual server keep-alive
   * timeouts (5 s and up), so that the client closes first and never writes a request into a
   * connection the server is closing.
   */
  readonly idleTimeoutMs: number;
}

/** One request: its head (request line and headers) and body, written in order. */
export interface RawRequest {
  readonly head: string;
  readonly body: readonly Uint8Array[];
  readonly bodyByteLength: number;
}

/** An exchange in flight: `cancel` destroys its connection (a half-finished exchange is never reused). */
export interface PendingExchange {
  readonly response: Promise<ParsedResponse>;
  cancel(error: Error): void;
}

/**
 * Bodies up to this size are joined with their head into one buffer and written at once: one copy of a
 * few kilobytes costs less than a gathered write. Larger ones are written chunk by chunk, without a copy.
 */
const SMALL_BODY_BYTES = 16 * 1024;

/** One keep-alive connection, carrying one exchange at a time. */
class Connection {
  readonly socket: Socket;
  readonly #parser = new ResponseParser();
  #current: { resolve: (response: ParsedResponse) => void; reject: (error: Error) => void } | undefined;
  #isBroken = false;

  constructor(options: ConnectionPoolOptions, onClosed: (connection: Connection) => void) {
    this.socket = connect({ host: options.host, port: options.port, noDelay: true });
    this.socket.on('data', (chunk: Buffer) => this.#onData(chunk));
    this.socket.on('error', (error) => this.#fail(error));
    // Only an idle connection has a timeout set (ConnectionPool.#release): it has been idle too long.
    this.socket.on('timeout', () => this.socket.destroy());
    this.socket.on('close', () => {
      if (this.#current !== undefined) this.#finishAtClose();
      this.#isBroken = true;
      onClosed(this);
    });
  }

  /** Whether the connection can carry another exchange. */
  get isUsable(): boolean {
    return !this.#isBroken && !this.socket.destroyed && this.#current === undefined;
  }

  exchange(request: RawRequest): Promise<ParsedResponse> {
    return new Promise((resolve, reject) => {
      this.#current = { resolve, reject };
      const { socket } = this;
      if (request.bodyByteLength <= SMALL_BODY_BYTES) {
        const head = Buffer.from(request.head, 'latin1');
        socket.write(request.body.length === 0 ? head : Buffer.concat([head, ...request.body], head.byteLength + request.bodyByteLength));
      } else {
        socket.cork();
        socket.write(request.head, 'latin1');
        for (const chunk of request.body) socket.write(chunk);
        socket.uncork();
      }
    });
  }

  destroy(error: Error): void {
    this.#fail(error);
    this.socket.destroy();
  }

  #onData(chunk: Buffer): void {
    let responses: ParsedResponse[];
    try {
      responses = this.#parser.push(chunk);
    } catch (error) {
      this.destroy(error as Error);
      return;
    }
    if (responses.length === 0) return;
    if (responses.length > 1 || this.#current === undefined) {
      this.destroy(new Error('the server sent a response that no request asked for'));
      return;
    }
    this.#settle(responses[0]!);
  }

  /** The connection closed during an exchange: a body read until the end is complete; anything else failed. */
  #finishAtClose(): void {
    try {
      const response = this.#parser.end();
      if (response !== undefined) {
        this.#settle(response);
        return;
      }
    } catch (error) {
      this.#fail(error as Error);
      return;
    }
    this.#fail(new Error('the connection closed before the answer was complete'));
  }

  #settle(response: ParsedResponse): void {
    const current = this.#current!;
    this.#current = undefined;
    if (!response.isReusable) {
      this.#isBroken = true;
      this.socket.end();
    }
    current.resolve(response);
  }

  #fail(error: Error): void {
    this.#isBroken = true;
    const current = this.#current;
    this.#current = undefined;
    current?.reject(error);
  }
}

/**
 * Keep-alive HTTP/1.1 connections to one server, for HttpClient over plain HTTP: each exchange takes an
 * idle connection (the most recently used) or opens one, and gives it back once its response is
 * complete. A leaner path than node:http's agent, which costs a load generator about 1.6 times the CPU
 * per request (bench/client-cost.ts).
 */
export class ConnectionPool {
  readonly #options: ConnectionPoolOptions;
  readonly #idle: Connection[] = [];
  readonly #all = new Set<Connection>();
  readonly #waiting: Array<(connection: Connection) => void> = [];

  constructor(options: ConnectionPoolOptions) {
    this.#options = options;
  }

  /** Sends a request on a free connection; its response is complete when the promise resolves. */
  send(request: RawRequest): PendingExchange {
    let connection: Connection | undefined;
    let cancelledWith: Error | undefined;
    let isDone = false;
    const run = async (acquired: Connection): Promise<ParsedResponse> => {
      connection = acquired;
      if (cancelledWith !== undefined) {
        this.#release(acquired);
        throw cancelledWith;
      }
      acquired.socket.ref();
      acquired.socket.setTimeout(0);
      try {
        return await acquired.exchange(request);
      } finally {
        isDone = true;
        this.#release(acquired);
      }
    };
    // The usual case, a connection at hand, takes no extra turn of the event loop.
    const free = this.#takeFree();
    const response = free !== undefined ? run(free) : new Promise<Connection>((resolve) => this.#waiting.push(resolve)).then(run);
    return {
      response,
      cancel: (error) => {
        if (isDone) return;
        cancelledWith = error;
        connection?.destroy(error);
      },
    };
  }

  /** Closes every connection; exchanges in flight fail with `error`. */
  close(error: Error): void {
    for (const connection of this.#all) connection.destroy(error);
    this.#idle.length = 0;
  }

  /** An idle connection (the most recently used), or a new one while under maxSockets. */
  #takeFree(): Connection | undefined {
    for (let connection = this.#idle.pop(); connection !== undefined; connection = this.#idle.pop()) {
      if (connection.isUsable) return connection;
    }
    if (this.#all.size >= this.#options.maxSockets) return undefined;
    const connection = new Connection(this.#options, (closed) => this.#forget(closed));
    this.#all.add(connection);
    return connection;
  }

  #release(connection: Connection): void {
    if (!connection.isUsable) {
      this.#forget(connection);
      return;
    }
    const waiter = this.#waiting.shift();
    if (waiter !== undefined) {
      waiter(connection);
      return;
    }
    connection.socket.setTimeout(this.#options.idleTimeoutMs);
    connection.socket.unref();
    this.#idle.push(connection);
  }

  #forget(connection: Connection): void {
    if (!this.#all.delete(connection)) return;
    const index = this.#idle.indexOf(connection);
    if (index >= 0) this.#idle.splice(index, 1);
    // A slot came free: a waiting exchange gets a new connection.
    if (this.#waiting.length > 0) {
      const connection = this.#takeFree();
      if (connection !== undefined) this.#waiting.shift()!(connection);
    }
  }
}
