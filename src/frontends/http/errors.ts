import { NereidError } from '../../core/index.js';
import { HTTP_STATUS } from '../../protocol/status-code.js';
import type { Logger } from '../../logging/logger.js';

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
