import { status as GrpcStatus } from '@grpc/grpc-js';

/**
 * The error codes of the protocol, Triton's TRITONSERVER_Error codes: the server's NereidError carries
 * one (kernel/errors.ts), each transport writes it with its table below, and the client reads it back
 * (client/errors.ts).
 */
export type StatusCode =
  | 'INVALID_ARG'
  | 'NOT_FOUND'
  | 'UNAVAILABLE'
  | 'UNSUPPORTED'
  | 'ALREADY_EXISTS'
  | 'CANCELLED'
  | 'INTERNAL'
  | 'UNKNOWN'
  /** Beyond Triton: no valid credentials (`--auth-token-file`). */
  | 'UNAUTHENTICATED'
  /** Credentials that do not open this API: Triton's restricted HTTP APIs (`--http-restricted-api`). */
  | 'PERMISSION_DENIED';

export const STATUS_CODES: readonly StatusCode[] = [
  'INVALID_ARG',
  'NOT_FOUND',
  'UNAVAILABLE',
  'UNSUPPORTED',
  'ALREADY_EXISTS',
  'CANCELLED',
  'INTERNAL',
  'UNKNOWN',
  'UNAUTHENTICATED',
  'PERMISSION_DENIED',
];

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
  UNAUTHENTICATED: 401,
  PERMISSION_DENIED: 403,
};

/** Triton's mapping of error codes to gRPC status codes (src/grpc/grpc_utils.cc). */
export const GRPC_STATUS: Record<StatusCode, GrpcStatus> = {
  INVALID_ARG: GrpcStatus.INVALID_ARGUMENT,
  ALREADY_EXISTS: GrpcStatus.ALREADY_EXISTS,
  CANCELLED: GrpcStatus.CANCELLED,
  UNKNOWN: GrpcStatus.UNKNOWN,
  NOT_FOUND: GrpcStatus.NOT_FOUND,
  UNAVAILABLE: GrpcStatus.UNAVAILABLE,
  UNSUPPORTED: GrpcStatus.UNIMPLEMENTED,
  INTERNAL: GrpcStatus.INTERNAL,
  UNAUTHENTICATED: GrpcStatus.UNAUTHENTICATED,
  PERMISSION_DENIED: GrpcStatus.PERMISSION_DENIED,
};
