import { fileURLToPath } from 'node:url';
import { type GrpcObject, Server, ServerCredentials, type ServiceClientConstructor, loadPackageDefinition } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import type { InferenceServer } from '../../core/index.js';
import type { Logger } from '../../logging/logger.js';
import { createHealthService, createInferenceService } from './service.js';

// Both src/frontends/grpc and dist/frontends/grpc sit three folders below the package root.
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const PROTO_DIRS = [`${ROOT}src/frontends/grpc/proto`, `${ROOT}src/config`];

export interface GrpcFrontendOptions {
  readonly server: InferenceServer;
  readonly logger: Logger;
  /** Largest message received or sent (`--grpc-max-message-size`). */
  readonly maxMessageBytes: number;
  /** Keepalive pings, as Triton's --grpc-keepalive-* flags set them. */
  readonly keepaliveTimeMs: number;
  readonly keepaliveTimeoutMs: number;
  readonly isKeepalivePermittedWithoutCalls: boolean;
  readonly http2MaxPingStrikes: number;
  readonly http2MinPingIntervalWithoutDataMs: number;
}

function loadServices(): { inference: ServiceClientConstructor; health: ServiceClientConstructor } {
  const definition = loadSync(['grpc_service.proto', 'health.proto'], {
    includeDirs: PROTO_DIRS,
    keepCase: true,
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true,
  });
  const loaded = loadPackageDefinition(definition);
  const inference = loaded.inference as GrpcObject;
  const health = ((loaded.grpc as GrpcObject).health as GrpcObject).v1 as GrpcObject;
  return { inference: inference.GRPCInferenceService as ServiceClientConstructor, health: health.Health as ServiceClientConstructor };
}

/**
 * The KServe v2 gRPC front end (inference.GRPCInferenceService) and the standard grpc.health.v1
 * service, on @grpc/grpc-js. Accepts gzip- and deflate-compressed messages.
 */
export class GrpcFrontend {
  readonly #server: Server;

  constructor(options: GrpcFrontendOptions) {
    this.#server = new Server({
      'grpc.max_receive_message_length': options.maxMessageBytes,
      'grpc.max_send_message_length': options.maxMessageBytes,
      'grpc.keepalive_time_ms': options.keepaliveTimeMs,
      'grpc.keepalive_timeout_ms': options.keepaliveTimeoutMs,
      'grpc.keepalive_permit_without_calls': options.isKeepalivePermittedWithoutCalls ? 1 : 0,
      'grpc.http2.max_ping_strikes': options.http2MaxPingStrikes,
      'grpc.http2.min_ping_interval_without_data_ms': options.http2MinPingIntervalWithoutDataMs,
    });
    const services = loadServices();
    this.#server.addService(services.inference.service, createInferenceService(options.server, options.logger) as never);
    this.#server.addService(services.health.service, createHealthService(options.server) as never);
  }

  /** Listens (insecure, as Triton's default) and resolves with the bound port. */
  listen(port: number, host: string): Promise<number> {
    return new Promise((resolve, reject) => {
      this.#server.bindAsync(`${host.includes(':') ? `[${host}]` : host}:${port}`, ServerCredentials.createInsecure(), (error, boundPort) =>
        error !== null ? reject(error) : resolve(boundPort),
      );
    });
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
