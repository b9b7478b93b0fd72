import { NereidError, type StatusCode } from '../../core/index.js';
import type { Logger } from '../../logging/logger.js';

/** Triton's mapping of error codes to HTTP statuses (docs/protocol/README.md, src/http_server.cc). */
export const HTTP_STATUS: Record<StatusCode, number> = {
  INVALID_ARG: 400,
  ALREADY_EXISTS: 400,
  CANCELLED: 400,
  UNKNOWN: 400,
  NOT_FOUND: 404,
  UNAVAILABLE: 503,
  UNSUPPORTED: 501,
  INTERNAL: 500,
};

export interface ErrorReply {
  readonly status: number;
  readonly body: string;
}

/** `{"error": "..."}` with the status for a NereidError; anything else is a bug, logged and answered 500. */
export function errorReply(error: unknown, logger: Logger): ErrorReply {
  if (error instanceof NereidError) return { status: HTTP_STATUS[error.status], body: JSON.stringify({ error: error.message }) };
  logger.error('http', `internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  return { status: 500, body: JSON.stringify({ error: `internal error: ${error instanceof Error ? error.message : String(error)}` }) };
}
