import { status as GrpcStatus } from '@grpc/grpc-js';
import { NereidError } from '../../core/index.js';
import { GRPC_STATUS } from '../../protocol/status-code.js';
import type { Logger } from '../../logging/logger.js';

export interface GrpcError {
  readonly code: GrpcStatus;
  readonly details: string;
}

/** A UTF-16 surrogate without its other half. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * NOTE: grpc-js writes the status message with encodeURI, which throws on a lone surrogate; thrown in the
 * handler's callback, that crashed the server (found by test/fuzz). Messages can hold one: V8's JSON.parse
 * errors quote the text cut at a fixed length, which may split a surrogate pair (a load's `config` of emoji).
 */
const wellFormed = (text: string): string => text.replace(LONE_SURROGATE, '\uFFFD');

/** The gRPC status for an error: its code for a NereidError; anything else is a bug, logged and INTERNAL. */
export function grpcError(error: unknown, logger: Logger): GrpcError {
  if (error instanceof NereidError) {
    // Triton's sentence for a decoupled model on ModelInfer (src/grpc/infer_handler.cc), then why.
    const message = error.reason === 'DECOUPLED_UNARY' ? `ModelInfer RPC doesn't support models with decoupled transaction policy (${error.message})` : error.message;
    return { code: GRPC_STATUS[error.status], details: wellFormed(message) };
  }
  logger.error('grpc', `internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  return { code: GrpcStatus.INTERNAL, details: wellFormed(`internal error: ${error instanceof Error ? error.message : String(error)}`) };
}
