import type { StatusCode } from '../protocol/status-code.js';

export type { StatusCode } from '../protocol/status-code.js';

/**
 * The base of every error the client throws, so that `catch (e) { if (e instanceof ClientError) … }`
 * catches them all. The subclasses say what went wrong:
 *
 * | class | when |
 * |---|---|
 * | `ServerError` | the server answered with an error (its message, its status) |
 * | `TimeoutError` | the call ran past its `timeoutMs` |
 * | `AbortError` | the call's `AbortSignal` fired, or the client was closed |
 * | `ConnectionError` | the server could not be reached, or the connection broke |
 * | `ClientError` itself | the request was refused before sending (bad input), or the answer was not understood |
 */
export class ClientError extends Error {
  override readonly name: string = 'ClientError';
}

/** The protocol an answer came over, with the status in its own terms. */
export type TransportStatus =
  | { readonly protocol: 'http'; readonly httpStatus: number }
  /** `grpcCode` is undefined for a request that failed inside a stream, which carries only a message. */
  | { readonly protocol: 'grpc'; readonly grpcCode: number | undefined };

/**
 * The server answered with an error. `message` is the server's message, unchanged (Triton's wording:
 * clients match on it); `status` is the server's error code, read back from the HTTP status or gRPC
 * code through Triton's tables (HTTP 400 reads as INVALID_ARG, which also stands for ALREADY_EXISTS,
 * CANCELLED and UNKNOWN there); `transport` keeps the status as it arrived.
 */
export class ServerError extends ClientError {
  override readonly name = 'ServerError';
  constructor(
    readonly status: StatusCode,
    message: string,
    readonly transport: TransportStatus,
  ) {
    super(message);
  }
}

/** The call took longer than its `timeoutMs` and was given up (over gRPC, its deadline passed). */
export class TimeoutError extends ClientError {
  override readonly name = 'TimeoutError';
  constructor(readonly timeoutMs: number, what: string) {
    super(`${what} timed out after ${timeoutMs} ms`);
  }
}

/** The call was cancelled through its `AbortSignal` (`reason` is the signal's) or by `close()`. */
export class AbortError extends ClientError {
  override readonly name = 'AbortError';
  constructor(
    what: string,
    readonly reason?: unknown,
  ) {
    super(`${what} was aborted${reason instanceof Error ? `: ${reason.message}` : typeof reason === 'string' ? `: ${reason}` : ''}`);
  }
}

/** The server could not be reached or the connection broke before the answer was complete. */
export class ConnectionError extends ClientError {
  override readonly name = 'ConnectionError';
}

/** Triton's HTTP statuses read back as error codes (the inverse of protocol/status-code.ts HTTP_STATUS). */
export function statusFromHttp(httpStatus: number): StatusCode {
  switch (httpStatus) {
    case 400:
      return 'INVALID_ARG';
    case 401:
      return 'UNAUTHENTICATED';
    case 403:
      return 'PERMISSION_DENIED';
    case 404:
      return 'NOT_FOUND';
    case 501:
      return 'UNSUPPORTED';
    case 503:
      return 'UNAVAILABLE';
    case 500:
      return 'INTERNAL';
    default:
      return 'UNKNOWN';
  }
}

/** gRPC codes (numbers of @grpc/grpc-js `status`) read back as error codes (the inverse of protocol/status-code.ts GRPC_STATUS). */
const STATUS_BY_GRPC_CODE: ReadonlyMap<number, StatusCode> = new Map([
  [1, 'CANCELLED'],
  [2, 'UNKNOWN'],
  [3, 'INVALID_ARG'],
  [5, 'NOT_FOUND'],
  [6, 'ALREADY_EXISTS'],
  [7, 'PERMISSION_DENIED'],
  [12, 'UNSUPPORTED'],
  [13, 'INTERNAL'],
  [14, 'UNAVAILABLE'],
  [16, 'UNAUTHENTICATED'],
]);

export function statusFromGrpc(grpcCode: number): StatusCode {
  return STATUS_BY_GRPC_CODE.get(grpcCode) ?? 'UNKNOWN';
}
