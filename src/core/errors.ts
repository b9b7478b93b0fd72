import type { StatusCode } from '../protocol/status-code.js';

/**
 * The one error type of the server. Every failure that a client should see travels as a NereidError;
 * each front end maps `status` to its transport once (the tables of protocol/status-code.ts),
 * as Triton's TRITONSERVER_Error codes are mapped by its HTTP and gRPC servers.
 */
export class NereidError extends Error {
  override readonly name = 'NereidError';
  constructor(
    readonly status: StatusCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
