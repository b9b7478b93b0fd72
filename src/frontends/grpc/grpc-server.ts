import type { Http2Server, Http2Session } from 'node:http2';
import { Server, ServerCredentials, ServerInterceptingCall, type ServerInterceptor, status as GrpcStatus } from '@grpc/grpc-js';
import { decompressBody } from '../../protocol/content-encoding.js';
import type { InferenceServer } from '../../core/index.js';
import type { Logger } from '../../logging/logger.js';
import { healthService, inferenceService } from '../../protocol/grpc-service.js';
import { type AccessPolicy, OPEN_ACCESS } from '../access-policy.js';
import type { TlsIdentity } from '../tls-identity.js';
import { guardHealthService, guardInferenceService } from './access-check.js';
import { createHealthService, createInferenceService } from './service.js';
import type { SharedMemoryRegistry } from '../shared-memory/shared-memory-registry.js';
import { createTlsCredentials } from './tls-credentials.js';

/**
 * The HTTP/2 flow-control window of every connection and stream: 16 MiB instead of 64 KiB, which
 * tripled the rate of 600 KB ModelInfer calls (677 vs 232 calls/s, measured on this project's 2-core
 * machine with a grpc-js server).
 */
export const FLOW_CONTROL_WINDOW_BYTES = 16 * 1024 * 1024;

/**
 * NOTE: grpc-js 1.14 has no server option for the flow-control window, so two of its internals are
 * used, which is why package.json pins grpc-js exactly: `commonServerOptions` (the options each
 * HTTP/2 server is created with, read at bind) carries the initial window size that streams start
 * with, and `http2Servers` (its listening HTTP/2 servers) lets each new session widen its connection
 * window. grpc-server.test.ts fails if either stops taking effect.
 */
interface GrpcServerInternals {
  commonServerOptions: { settings?: Record<string, number> };
  http2Servers: Map<Http2Server, unknown>;
}

export interface GrpcFrontendOptions {
  readonly server: InferenceServer;
  readonly logger: Logger;
  /** Largest message received or sent (`--grpc-max-message-size`). */
  readonly maxMessageBytes: number;
  /** The most a compressed message may inflate to (`--grpc-max-decompressed-message-size`); maxMessageBytes when larger. */
  readonly maxDecompressedMessageBytes?: number;
  /** Keepalive pings, as Triton's --grpc-keepalive-* flags set them. */
  readonly keepaliveTimeMs: number;
  readonly keepaliveTimeoutMs: number;
  readonly isKeepalivePermittedWithoutCalls: boolean;
  readonly http2MaxPingStrikes: number;
  readonly http2MinPingIntervalWithoutDataMs: number;
  /** `--grpc-restricted-protocol` and `--auth-token-file`; open by default. */
  readonly access?: AccessPolicy;
  /** `--grpc-use-ssl[-mutual]`: TLS with this certificate (followed as it reloads); plain HTTP/2 without. */
  readonly tls?: TlsIdentity;
  /** The system shared memory regions, shared with the HTTP front end; without it, registering fails. */
  readonly sharedMemory?: SharedMemoryRegistry;
  /** `--grpc-header-forward-pattern`: the metadata an inference request forwards as its parameters. */
  readonly headerForwardPattern?: RegExp;
}

/** The base call's method that grpc-js awaits for each message it received whole (server-interceptors.js). */
interface BaseCallInternals {
  decompressMessage(message: Buffer, encoding: string): Buffer | Promise<Buffer>;
}

/**
 * Inflates each compressed message with protocol/content-encoding.ts, up to `maxBytes`, answering as
 * grpc-js does (its codes and texts). NOTE: grpc-js checks one limit for both the bytes received and the
 * bytes inflated, and Triton's default (2 GiB) let a 1 MB gzip bomb grow the server by 2 GB; a
 * compressed message gets a tighter bound (by default HTTP's, 64 MiB) than an uncompressed one, whose
 * size the client pays for in bytes sent. Its own inflater also leaves 16 KiB pieces that malloc keeps
 * (content-encoding.ts). The first interceptor is handed grpc-js's base call, whose
 * StreamDecoder has already taken the length-prefix limit. grpc-server.test.ts fails if this stops
 * taking effect.
 */
function inflateWithin(maxBytes: number): ServerInterceptor {
  const decompressMessage = async (message: Buffer, encoding: string): Promise<Buffer> => {
    const contents = message.subarray(5);
    if (encoding === 'identity') return contents;
    if (encoding !== 'gzip' && encoding !== 'deflate') {
      throw { code: GrpcStatus.UNIMPLEMENTED, details: `Received message compressed with unsupported encoding "${encoding}"` };
    }
    try {
      return await decompressBody[encoding](contents, maxBytes);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') {
        throw { code: GrpcStatus.RESOURCE_EXHAUSTED, details: `Received message that decompresses to a size larger than ${maxBytes}` };
      }
      throw { code: GrpcStatus.INTERNAL, details: 'Failed to decompress message' };
    }
  };
  return (_method, call) => {
    const internals = call as unknown as Partial<BaseCallInternals>;
    if (typeof internals.decompressMessage !== 'function') {
      throw new Error('grpc-js internals changed: the base call has no decompressMessage; see inflateWithin');
    }
    internals.decompressMessage = decompressMessage;
    return new ServerInterceptingCall(call);
  };
}

/**
 * The KServe v2 gRPC front end (inference.GRPCInferenceService) and the standard grpc.health.v1
 * service, on @grpc/grpc-js. Accepts gzip- and deflate-compressed messages.
 */
export class GrpcFrontend {
  readonly #server: Server;
  readonly #sessions = new Set<Http2Session>();
  readonly #tls: TlsIdentity | undefined;

  constructor(options: GrpcFrontendOptions) {
    this.#tls = options.tls;
    this.#server = new Server({
      'grpc.max_receive_message_length': options.maxMessageBytes,
      'grpc.max_send_message_length': options.maxMessageBytes,
      'grpc.keepalive_time_ms': options.keepaliveTimeMs,
      'grpc.keepalive_timeout_ms': options.keepaliveTimeoutMs,
      'grpc.keepalive_permit_without_calls': options.isKeepalivePermittedWithoutCalls ? 1 : 0,
      'grpc.http2.max_ping_strikes': options.http2MaxPingStrikes,
      'grpc.http2.min_ping_interval_without_data_ms': options.http2MinPingIntervalWithoutDataMs,
      interceptors: [inflateWithin(Math.min(options.maxDecompressedMessageBytes ?? options.maxMessageBytes, options.maxMessageBytes))],
    });
    const internals = this.#server as unknown as GrpcServerInternals;
    internals.commonServerOptions.settings = { ...internals.commonServerOptions.settings, initialWindowSize: FLOW_CONTROL_WINDOW_BYTES };
    const access = options.access ?? OPEN_ACCESS;
    this.#server.addService(
      inferenceService,
      guardInferenceService(createInferenceService(options.server, options.logger, options.sharedMemory, options.headerForwardPattern), access, options.logger),
    );
    this.#server.addService(healthService, guardHealthService(createHealthService(options.server), access, options.logger));
  }

  /** Listens (without TLS unless `tls` was given, as Triton's default) and resolves with the bound port. */
  async listen(port: number, host: string): Promise<number> {
    const credentials = this.#tls !== undefined ? createTlsCredentials(this.#tls) : ServerCredentials.createInsecure();
    const boundPort = await new Promise<number>((resolve, reject) => {
      this.#server.bindAsync(`${host.includes(':') ? `[${host}]` : host}:${port}`, credentials, (error, bound) =>
        error !== null ? reject(error) : resolve(bound),
      );
    });
    for (const http2Server of (this.#server as unknown as GrpcServerInternals).http2Servers.keys()) {
      http2Server.on('session', (session: Http2Session) => {
        this.#sessions.add(session);
        session.once('close', () => this.#sessions.delete(session));
        session.setLocalWindowSize(FLOW_CONTROL_WINDOW_BYTES);
      });
    }
    return boundPort;
  }

  /** The connection and stream windows of the open sessions (for the test that they are in effect). */
  flowControlWindows(): Array<{ readonly connectionBytes: number; readonly streamBytes: number }> {
    return [...this.#sessions].map((session) => ({
      connectionBytes: session.state.localWindowSize ?? 0,
      streamBytes: session.localSettings.initialWindowSize ?? 0,
    }));
  }

  /** Stops taking calls and waits for those in progress. */
  close(): Promise<void> {
    return new Promise((resolve) => this.#server.tryShutdown(() => resolve()));
  }

  /** Cancels every call still in progress. */
  forceClose(): void {
    this.#server.forceShutdown();
  }
}
