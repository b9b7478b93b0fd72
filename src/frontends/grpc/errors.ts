import { status as GrpcStatus } from '@grpc/grpc-js';
import { NereidError, type StatusCode } from '../../core/index.js';
import type { Logger } from '../../logging/logger.js';

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
};

export interface GrpcError {
  readonly code: GrpcStatus;
  readonly details: string;
}

/** The gRPC status for an error: its code for a NereidError; anything else is a bug, logged and INTERNAL. */
export function grpcError(error: unknown, logger: Logger): GrpcError {
  if (error instanceof NereidError) return { code: GRPC_STATUS[error.status], details: error.message };
  logger.error('grpc', `internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  return { code: GrpcStatus.INTERNAL, details: `internal error: ${error instanceof Error ? error.message : String(error)}` };
}
