import type { Metadata, sendUnaryData } from '@grpc/grpc-js';
import type { RestrictedCategory } from '../../protocol/restricted-category.js';
import { NereidError } from '../../core/index.js';
import type { Logger } from '../../logging/logger.js';
import type { HealthHandlers, InferenceHandlers } from '../../protocol/grpc-service.js';
import { type AccessPolicy, missingRestrictedKey } from '../access-policy.js';
import { grpcError } from './errors.js';

/** Triton's category of each RPC of inference.GRPCInferenceService (src/grpc/grpc_server.cc). */
const RPC_CATEGORY: Record<keyof InferenceHandlers, RestrictedCategory> = {
  serverLive: 'health',
  serverReady: 'health',
  modelReady: 'health',
  serverMetadata: 'metadata',
  modelMetadata: 'metadata',
  modelInfer: 'inference',
  modelStreamInfer: 'inference',
  modelConfig: 'model-config',
  modelStatistics: 'statistics',
  repositoryIndex: 'model-repository',
  repositoryModelLoad: 'model-repository',
  repositoryModelUnload: 'model-repository',
  systemSharedMemoryStatus: 'shared-memory',
  systemSharedMemoryRegister: 'shared-memory',
  systemSharedMemoryUnregister: 'shared-memory',
  cudaSharedMemoryStatus: 'shared-memory',
  cudaSharedMemoryRegister: 'shared-memory',
  cudaSharedMemoryUnregister: 'shared-memory',
  traceSetting: 'trace',
  logSettings: 'logging',
};

/** RPCs that need no bearer token: the server's liveness and readiness, for orchestrators' probes. */
const PROBES = new Set<string>(['serverLive', 'serverReady', 'check', 'watch']);

/**
 * Throws UNAUTHENTICATED without the bearer token, then UNAVAILABLE with Triton's message when the
 * category's `triton-grpc-protocol-` metadata is missing or has another value (Triton answers
 * UNAVAILABLE, not PERMISSION_DENIED, in CommonCallData::Execute).
 */
function checkGrpcAccess(rpc: string, category: RestrictedCategory, metadata: Metadata, policy: AccessPolicy): void {
  const valueOf = (key: string): string | undefined => {
    const value = metadata.get(key)[0];
    return typeof value === 'string' ? value : undefined;
  };
  if (policy.authToken !== undefined && !PROBES.has(rpc)) policy.authToken.check(valueOf('authorization'));
  const key = missingRestrictedKey(policy.restrictedFeatures, category, valueOf);
  if (key !== undefined) throw new NereidError('UNAVAILABLE', `This protocol is restricted, expecting header '${key}'`);
}

type AnyHandler = (call: { readonly metadata: Metadata; emit(event: 'error', error: unknown): boolean }, callback?: sendUnaryData<unknown>) => void;

/** Wraps each handler so that a call is checked before it runs; a refused call is answered with its status. */
function guard<Handlers extends object>(handlers: Handlers, categoryOf: (rpc: string) => RestrictedCategory, policy: AccessPolicy, logger: Logger): Handlers {
  if (policy.authToken === undefined && Object.keys(policy.restrictedFeatures).length === 0) return handlers;
  const guarded = Object.entries(handlers as Record<string, AnyHandler>).map(([rpc, handler]): [string, AnyHandler] => [
    rpc,
    (call, callback) => {
      try {
        checkGrpcAccess(rpc, categoryOf(rpc), call.metadata, policy);
      } catch (error) {
        const status = grpcError(error, logger);
        if (callback !== undefined) callback(status);
        else call.emit('error', status);
        return;
      }
      handler(call, callback);
    },
  ]);
  return Object.fromEntries(guarded) as Handlers;
}

/** inference.GRPCInferenceService behind the front end's access policy. */
export function guardInferenceService(handlers: InferenceHandlers, policy: AccessPolicy, logger: Logger): InferenceHandlers {
  return guard(handlers, (rpc) => RPC_CATEGORY[rpc as keyof InferenceHandlers], policy, logger);
}

/** grpc.health.v1.Health behind the policy: Triton files it under `health` (inference_protocols.md). */
export function guardHealthService(handlers: HealthHandlers, policy: AccessPolicy, logger: Logger): HealthHandlers {
  return guard(handlers, () => 'health', policy, logger);
}
