import { NereidError, type Tensor } from '../../core/index.js';
import type { JsonValue } from '../../protocol/json-body.js';
import type { ParameterValue } from '../../protocol/parameters.js';
import { NON_STRING, NON_UNSIGNED, jsonUnsigned } from '../triton-json.js';
import { tensorBytes } from '../tensor-bytes.js';
import { type ByteCount, CLIENT_SHM_DISABLED_MESSAGE, type RegionLease, type SharedMemoryRegistry } from './shared-memory-registry.js';

/** Where a tensor's data lies: `byteSize` bytes of region `region` from `offset`. */
export interface RegionReference {
  readonly region: string;
  readonly offset: ByteCount;
  readonly byteSize: ByteCount;
}

const SHM_KEYS = ['shared_memory_region', 'shared_memory_offset', 'shared_memory_byte_size'] as const;

/**
 * The shared memory parameters of an HTTP tensor, read as Triton's HTTP server reads them
 * (CheckSharedMemoryData in src/http_server.cc), in its texts: each one given must be of its kind
 * (TritonJson's AsString, AsUInt); without `shared_memory_region` the tensor is not in shared memory
 * (an offset or byte size alone is then ignored); a missing offset or byte size is 0.
 */
export function httpRegionReference(parameters: Readonly<Record<string, JsonValue>>): RegionReference | undefined {
  const { shared_memory_region: region, shared_memory_offset: offset, shared_memory_byte_size: byteSize } = parameters;
  if (region !== undefined && typeof region !== 'string') throw new NereidError('INVALID_ARG', `Unable to parse 'shared_memory_region': ${NON_STRING}`);
  const offsetValue = offset === undefined ? 0 : jsonUnsigned(offset);
  if (offsetValue === undefined) throw new NereidError('INVALID_ARG', `Unable to parse 'shared_memory_offset': ${NON_UNSIGNED}`);
  const sizeValue = byteSize === undefined ? 0 : jsonUnsigned(byteSize);
  if (sizeValue === undefined) throw new NereidError('INVALID_ARG', `Unable to parse 'shared_memory_byte_size': ${NON_UNSIGNED}`);
  return region === undefined ? undefined : { region, offset: offsetValue, byteSize: sizeValue };
}

/**
 * Reads and removes the shared memory parameters of a gRPC tensor with Triton's checks and messages
 * (ParseSharedMemoryParams in src/grpc/infer_handler.h).
 */
export function takeGrpcRegionReference(tensorName: string, parameters: Record<string, ParameterValue>): RegionReference | undefined {
  const { shared_memory_region: region, shared_memory_offset: offset, shared_memory_byte_size: byteSize } = parameters;
  for (const key of SHM_KEYS) delete parameters[key];
  const hasRegion = region !== undefined;
  if (hasRegion && typeof region !== 'string') {
    throw new NereidError('INVALID_ARG', `invalid value type for 'shared_memory_region' parameter for tensor '${tensorName}', expected string_param.`);
  }
  let offsetValue: ByteCount = 0;
  if (offset !== undefined) {
    if (!hasRegion) throw new NereidError('INVALID_ARG', `'shared_memory_offset' can not be specified without 'shared_memory_region' parameter for tensor '${tensorName}'`);
    // A uint64 parameter: a safe integer as a number, a larger one as a bigint; any other kind is undefined.
    const value = jsonUnsigned(offset);
    if (value === undefined) {
      throw new NereidError('INVALID_ARG', `invalid value type for 'shared_memory_offset' parameter for tensor '${tensorName}', expected int64_param.`);
    }
    offsetValue = value;
  }
  if (byteSize === undefined) {
    if (hasRegion) throw new NereidError('INVALID_ARG', `'shared_memory_byte_size' must be specified along with 'shared_memory_region' parameter for tensor '${tensorName}'`);
    return undefined;
  }
  if (!hasRegion) throw new NereidError('INVALID_ARG', `'shared_memory_byte_size' can not be specified without 'shared_memory_region' parameter for tensor '${tensorName}'`);
  const sizeValue = jsonUnsigned(byteSize);
  if (sizeValue === undefined) {
    throw new NereidError('INVALID_ARG', `invalid value type for 'shared_memory_byte_size' parameter for tensor '${tensorName}', expected int64_param.`);
  }
  return { region: region as string, offset: offsetValue, byteSize: sizeValue };
}

/** What a codec says for the bytes of a tensor read from a region, in size errors. */
export const SHARED_MEMORY_SOURCE = { sizePhrase: 'shared_memory_byte_size is' } as const;

/**
 * The regions one request uses: its leases, taken as the codec decodes the request and released
 * together once the response is written (or the request failed), so that a region unregistered
 * meanwhile stays mapped until then.
 */
export class RequestRegions {
  readonly #registry: SharedMemoryRegistry | undefined;
  readonly #leases: RegionLease[] = [];
  readonly #outputs = new Map<string, RegionLease>();

  constructor(registry: SharedMemoryRegistry | undefined) {
    this.#registry = registry;
  }

  /**
   * The regions of one request: a fresh set where clients may register regions; otherwise one shared
   * set that refuses every region before it holds anything, so a request without shared memory
   * allocates none.
   */
  static of(registry: SharedMemoryRegistry | undefined): RequestRegions {
    return registry?.isAllowed === true ? new RequestRegions(registry) : DISABLED;
  }

  #acquire(reference: RegionReference): RegionLease {
    if (this.#registry === undefined || !this.#registry.isAllowed) {
      throw new NereidError('UNAVAILABLE', CLIENT_SHM_DISABLED_MESSAGE);
    }
    const lease = this.#registry.acquire(reference.region, reference.offset, reference.byteSize);
    this.#leases.push(lease);
    return lease;
  }

  /** An input's bytes from its region (a view of the mapping where the addon maps it). */
  readInput(reference: RegionReference): Uint8Array {
    return this.#acquire(reference).read();
  }

  /** Marks output `name` to be written into its region instead of the response. */
  addOutput(name: string, reference: RegionReference): void {
    this.#outputs.set(name, this.#acquire(reference));
  }

  get hasOutputs(): boolean {
    return this.#outputs.size > 0;
  }

  isOutputInRegion(name: string): boolean {
    return this.#outputs.has(name);
  }

  /**
   * Writes every output that goes to a region; checks first that each fits, with Triton's message
   * (InferResponseAlloc in src/http_server.cc), so a response that fails writes nothing.
   */
  async writeOutputs(outputs: readonly Tensor[]): Promise<void> {
    const writes: Array<{ readonly lease: RegionLease; readonly bytes: Uint8Array }> = [];
    for (const output of outputs) {
      const lease = this.#outputs.get(output.name);
      if (lease === undefined) continue;
      const bytes = await tensorBytes(output.data);
      if (bytes.byteLength > lease.byteSize) {
        throw new NereidError(
          'INTERNAL',
          `shared memory size specified with the request for output '${output.name}' (${lease.byteSize} bytes) should be at least ${bytes.byteLength} bytes to hold the results`,
        );
      }
      writes.push({ lease, bytes });
    }
    for (const { lease, bytes } of writes) lease.write(bytes);
  }

  releaseAll(): void {
    for (const lease of this.#leases) lease.release();
    this.#leases.length = 0;
  }
}

const DISABLED = new RequestRegions(undefined);
