import type { OutgoingHttpHeaders } from 'node:http';

/** What a handler answers; the HTTP server adds compression and Content-Length. */
export interface Reply {
  readonly status: number;
  readonly headers?: OutgoingHttpHeaders;
  readonly chunks: readonly Uint8Array[];
}

export const emptyReply = (status: number): Reply => ({ status, chunks: [] });

export const jsonReply = (value: unknown, status = 200): Reply => ({
  status,
  headers: { 'content-type': 'application/json' },
  chunks: [Buffer.from(JSON.stringify(value))],
});
