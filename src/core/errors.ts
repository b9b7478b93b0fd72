/**
 * The one error type of the server. Every failure that a client should see travels as a NereidError;
 * each front end maps `status` to its transport once (frontends/http/errors.ts, frontends/grpc/errors.ts),
 * as Triton's TRITONSERVER_Error codes are mapped by its HTTP and gRPC servers.
 */
export type StatusCode =
  | 'INVALID_ARG'
  | 'NOT_FOUND'
  | 'UNAVAILABLE'
  | 'UNSUPPORTED'
  | 'ALREADY_EXISTS'
  | 'CANCELLED'
  | 'INTERNAL'
  | 'UNKNOWN';

export const STATUS_CODES: readonly StatusCode[] = [
  'INVALID_ARG',
  'NOT_FOUND',
  'UNAVAILABLE',
  'UNSUPPORTED',
  'ALREADY_EXISTS',
  'CANCELLED',
  'INTERNAL',
  'UNKNOWN',
];

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
