import { status as GrpcStatus } from '@grpc/grpc-js';
import { NereidError } from '../../core/index.js';
import { GRPC_STATUS } from '../../protocol/status-code.js';
import type { Logger } from '../../logging/logger.js';

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
