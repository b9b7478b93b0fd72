import type { OutgoingHttpHeaders } from 'node:http';
import { type ErrorReason, NereidError } from '../../core/index.js';
import { HTTP_STATUS } from '../../protocol/status-code.js';
import type { Logger } from '../../logging/logger.js';

/**
 * The reasons whose HTTP answer differs from their status code's: a method the path does not take is
 * HTTP's 405 (RFC 9110 §15.5.6), which no gRPC code stands for, so it travels as UNSUPPORTED; a refused
 * cross-origin request is 403 (Forbidden), which only HTTP has.
 */
const HTTP_STATUS_OF_REASON: Partial<Record<ErrorReason, number>> = { METHOD_NOT_ALLOWED: 405, CROSS_ORIGIN_REFUSED: 403 };

/** Headers that tell the client how to retry, from the error's details (RFC 9110 §10.2.1, RFC 7694 §3, RFC 6750 §3), or that the
 * connection ends with this answer (RFC 9112 §9.6: the rest of an oversized body is never read). */
const HEADERS_OF_REASON: Partial<Record<ErrorReason, (details: Readonly<Record<string, string>>) => OutgoingHttpHeaders>> = {
  METHOD_NOT_ALLOWED: (details) => ({ allow: details.allow }),
  UNSUPPORTED_CONTENT_ENCODING: (details) => ({ 'accept-encoding': details.accepted }),
  BEARER_TOKEN_REJECTED: (details) => ({ 'www-authenticate': details.challenge }),
  BODY_TOO_LARGE: () => ({ connection: 'close' }),
};

export interface ErrorReply {
  readonly status: number;
  readonly headers: OutgoingHttpHeaders;
  readonly body: string;
}

/** `{"error": "..."}` with the status for a NereidError; anything else is a bug, logged and answered 500. */
export function errorReply(error: unknown, logger: Logger): ErrorReply {
  const headers: OutgoingHttpHeaders = { 'content-type': 'application/json' };
  if (error instanceof NereidError) {
    const reason = error.reason;
    const status = (reason !== undefined ? HTTP_STATUS_OF_REASON[reason] : undefined) ?? HTTP_STATUS[error.status];
    const extra = reason !== undefined ? HEADERS_OF_REASON[reason]?.(error.details) : undefined;
    // Triton's sentence for a decoupled model on the infer route (HTTPAPIServer::HandleInfer), then why.
    const message = reason === 'DECOUPLED_UNARY' ? `HTTP end point doesn't support models with decoupled transaction policy (${error.message})` : error.message;
    return { status, headers: { ...headers, ...extra }, body: JSON.stringify({ error: message }) };
  }
  logger.error('http', `internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  return { status: 500, headers, body: JSON.stringify({ error: `internal error: ${error instanceof Error ? error.message : String(error)}` }) };
}
