import type { StatusCode } from '../protocol/status-code.js';

/**
 * Why an error happened, for code that acts on it (a status, a header, a retry) rather than only showing
 * it: callers branch on `reason` and read `details`, never match the message, whose wording is for people.
 */
export type ErrorReason =
  /** A model config sets a field Nereid does not implement; details.field is its path (`instance_group[0].rate_limiter`). */
  | 'UNSUPPORTED_CONFIG_FIELD'
  /** A request body's Content-Encoding is not one the server decodes; details.accepted lists those it does. */
  | 'UNSUPPORTED_CONTENT_ENCODING'
  /** The path exists but takes another method; details.allow names it. */
  | 'METHOD_NOT_ALLOWED'
  /** A request without the bearer token `--auth-token-file` asks for; details.challenge is the WWW-Authenticate value (RFC 6750 §3). */
  | 'BEARER_TOKEN_REJECTED'
  /** A browser request from another origin, or one any web page could send, refused on a route that changes state (HTTP 403). */
  | 'CROSS_ORIGIN_REFUSED'
  /** A request body over the size limit, refused before the rest of it is read: the connection closes after the answer. */
  | 'BODY_TOO_LARGE'
  /** The client closed the connection before its request was whole: nobody is left to answer. */
  | 'CLIENT_DISCONNECTED'
  /** A unary call to a decoupled model: each front end answers it in Triton's words for its protocol. */
  | 'DECOUPLED_UNARY';

export interface NereidErrorOptions {
  readonly cause?: unknown;
  readonly reason?: ErrorReason;
  readonly details?: Readonly<Record<string, string>>;
}

/**
 * The one error type of the server. Every failure that a client should see travels as a NereidError;
 * each front end maps `status` to its transport once (the tables of protocol/status-code.ts),
 * as Triton's TRITONSERVER_Error codes are mapped by its HTTP and gRPC servers.
 */
export class NereidError extends Error {
  override readonly name = 'NereidError';
  readonly reason: ErrorReason | undefined;
  readonly details: Readonly<Record<string, string>>;
  constructor(
    readonly status: StatusCode,
    message: string,
    options: NereidErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.reason = options.reason;
    this.details = options.details ?? {};
  }
}
