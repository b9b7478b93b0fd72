import { create } from '@bufbuild/protobuf';
import { NereidError } from '../../core/index.js';
import {
  type CudaSharedMemoryRegisterRequest,
  type CudaSharedMemoryRegisterResponse,
  type CudaSharedMemoryStatusRequest,
  type CudaSharedMemoryStatusResponse,
  type CudaSharedMemoryUnregisterRequest,
  type CudaSharedMemoryUnregisterResponse,
  type SystemSharedMemoryRegisterRequest,
  type SystemSharedMemoryRegisterResponse,
  type SystemSharedMemoryStatusRequest,
  type SystemSharedMemoryStatusResponse,
  type SystemSharedMemoryUnregisterRequest,
  type SystemSharedMemoryUnregisterResponse,
  CudaSharedMemoryStatusResponseSchema,
  CudaSharedMemoryUnregisterResponseSchema,
  SystemSharedMemoryRegisterResponseSchema,
  SystemSharedMemoryStatusResponseSchema,
  SystemSharedMemoryUnregisterResponseSchema,
} from '../../protocol/gen/grpc_service_pb.js';
import type { SharedMemoryRegistry } from '../shared-memory/shared-memory-registry.js';

type Handle<Request, Response> = (request: Request) => Response;

export interface SharedMemoryHandlers {
  readonly systemSharedMemoryStatus: Handle<SystemSharedMemoryStatusRequest, SystemSharedMemoryStatusResponse>;
  readonly systemSharedMemoryRegister: Handle<SystemSharedMemoryRegisterRequest, SystemSharedMemoryRegisterResponse>;
  readonly systemSharedMemoryUnregister: Handle<SystemSharedMemoryUnregisterRequest, SystemSharedMemoryUnregisterResponse>;
  readonly cudaSharedMemoryStatus: Handle<CudaSharedMemoryStatusRequest, CudaSharedMemoryStatusResponse>;
  readonly cudaSharedMemoryRegister: Handle<CudaSharedMemoryRegisterRequest, CudaSharedMemoryRegisterResponse>;
  readonly cudaSharedMemoryUnregister: Handle<CudaSharedMemoryUnregisterRequest, CudaSharedMemoryUnregisterResponse>;
}

/** A uint64 field as a number; sizes past 2^53 cannot name a real region and fail as out of bounds. */

/**
 * The System/CudaSharedMemory* RPCs, after Triton's gRPC server (src/grpc/grpc_server.cc) over the
 * registry the HTTP front end shares. CUDA shared memory answers as a Triton built without GPU
 * support: no region listed, registering fails with Triton's message, unregistering has nothing to do.
 */
export function createSharedMemoryHandlers(registry: SharedMemoryRegistry | undefined): SharedMemoryHandlers {
  const system = (): SharedMemoryRegistry => {
    if (registry === undefined) throw new NereidError('UNSUPPORTED', 'this server has no system shared memory');
    return registry;
  };
  return {
    systemSharedMemoryStatus: (request) =>
      create(SystemSharedMemoryStatusResponseSchema, {
        regions: Object.fromEntries(
          system()
            .status(request.name)
            .map((region) => [region.name, { name: region.name, key: region.key, offset: BigInt(region.offset), byteSize: BigInt(region.byteSize) }]),
        ),
      }),
    systemSharedMemoryRegister: (request) => {
      system().register(request.name, request.key, request.offset, request.byteSize);
      return create(SystemSharedMemoryRegisterResponseSchema);
    },
    systemSharedMemoryUnregister: (request) => {
      if (request.name === '') system().unregisterAll();
      else system().unregister(request.name);
      return create(SystemSharedMemoryUnregisterResponseSchema);
    },
    cudaSharedMemoryStatus: (request) => {
      if (request.name !== '') throw new NereidError('NOT_FOUND', `Unable to find cuda shared memory region: '${request.name}'`);
      return create(CudaSharedMemoryStatusResponseSchema);
    },
    cudaSharedMemoryRegister: (request) => {
      throw new NereidError('INVALID_ARG', `failed to register CUDA shared memory region: '${request.name}', GPUs not supported`);
    },
    cudaSharedMemoryUnregister: () => create(CudaSharedMemoryUnregisterResponseSchema),
  };
}
