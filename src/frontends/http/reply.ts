import type { OutgoingHttpHeaders } from 'node:http';
import type { RequestTrace } from '../../core/index.js';

/** What a handler answers; the HTTP server adds Content-Length and, where allowed, compression. */
export interface Reply {
  readonly status: number;
  readonly headers?: OutgoingHttpHeaders;
  readonly chunks: readonly Uint8Array[];
  /**
   * Compress when the client accepts it. Only successful inference replies are, as in Triton
   * (src/http_server.cc): tritonclient's aio client reads every other reply as plain JSON.
   */
  readonly isCompressible?: boolean;
  /** A body written piece by piece as it is produced (server-sent events), after `chunks`. */
  readonly stream?: AsyncIterable<Uint8Array>;
  /** The request's trace (the trace extension): the server records the send and ends it once the reply is out. */
  readonly trace?: RequestTrace;
  /** Called once the whole reply is handed to the socket ('finish'); not when the connection closes first. */
  readonly onSent?: () => void;
}

export const emptyReply = (status: number): Reply => ({ status, chunks: [] });

export const jsonReply = (value: unknown, status = 200): Reply => ({
  status,
  headers: { 'content-type': 'application/json' },
  chunks: [Buffer.from(JSON.stringify(value))],
});
