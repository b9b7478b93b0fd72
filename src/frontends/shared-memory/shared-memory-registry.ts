import { NereidError } from '../../core/index.js';
import { type RegionMemory, RegionMemoryError, type RegionMemoryProvider } from './region-memory.js';

/** A registered region as the status APIs list it (Triton's `{name, key, offset, byte_size}`). */
export interface RegionStatus {
  readonly name: string;
  readonly key: string;
  readonly offset: number;
  readonly byteSize: number;
}

/**
 * A request's hold on part of a region: the region stays mapped until every lease on it is released,
 * even if it is unregistered meanwhile. Release exactly once, when the request's response is done.
 */
export interface RegionLease {
  readonly regionName: string;
  readonly byteSize: number;
  /** The leased bytes: a view of the mapping (mmap) or a copy (file fallback). */
  read(): Uint8Array;
  /** Writes `bytes` at the start of the leased stretch; they must fit in `byteSize`. */
  write(bytes: Uint8Array): void;
  release(): void;
}

/**
 * Triton's answer (since 26.04) to a client that registers, unregisters or uses a region while
 * `--allow-client-shm` is off. The sentence is Triton's as its users quote it; its status there is
 * not known here, so Nereid answers UNAVAILABLE (503).
 */
export const CLIENT_SHM_DISABLED_MESSAGE = "Client shared memory is disabled. Start the server with '--allow-client-shm=true' to enable.";

/** The key prefix of the regions Triton's Python backend makes for itself (kTritonSharedMemoryRegionPrefix): no client may register one. */
const RESERVED_KEY_PREFIX = 'triton_python_backend_shm_region_';

interface Region extends RegionStatus {
  readonly memory: RegionMemory;
  leases: number;
  isUnregistered: boolean;
}

/**
 * The system shared memory regions clients registered, after Triton's SharedMemoryManager
 * (src/shared_memory_manager.cc): the same checks, statuses and messages. One registry serves both
 * front ends, so a region registered over HTTP is usable over gRPC.
 *
 * NOTE: Triton keeps an unregistered region in its map until its in-flight requests finish
 * (`awaiting_unregister_`); here the name is freed at once (status stops listing it and it may be
 * registered again) and only the mapping waits for its last lease.
 */
export class SharedMemoryRegistry {
  readonly #provider: RegionMemoryProvider;
  readonly #isAllowed: boolean;
  readonly #regions = new Map<string, Region>();
  /** Every region still mapped: the registered ones and those unregistered while leased. */
  readonly #mapped = new Set<Region>();

  constructor(options: { readonly provider: RegionMemoryProvider; readonly isAllowed: boolean }) {
    this.#provider = options.provider;
    this.#isAllowed = options.isAllowed;
  }

  /** How regions are reached: 'mmap' (the native addon) or 'file' (the copying fallback). */
  get providerKind(): 'mmap' | 'file' {
    return this.#provider.kind;
  }

  /** Whether clients may register regions (`--allow-client-shm`). */
  get isAllowed(): boolean {
    return this.#isAllowed;
  }

  /** Regions mapped now, unregistered ones still leased included. */
  get mappedCount(): number {
    return this.#mapped.size;
  }

  #checkAllowed(): void {
    if (!this.#isAllowed) throw new NereidError('UNAVAILABLE', CLIENT_SHM_DISABLED_MESSAGE);
  }

  /** Opens and maps `byteSize` bytes of the object `key` from `offset` under `name`. */
  register(name: string, key: string, offset: number, byteSize: number): void {
    this.#checkAllowed();
    if (key.startsWith(RESERVED_KEY_PREFIX)) {
      throw new NereidError('INVALID_ARG', `cannot register shared memory region '${name}' with key '${key}' as the key contains the reserved prefix '${RESERVED_KEY_PREFIX}'`);
    }
    if (this.#regions.has(name)) throw new NereidError('ALREADY_EXISTS', `shared memory region '${name}' already in manager`);
    let size: number;
    try {
      size = this.#provider.sizeOf(key);
    } catch (error) {
      throw new NereidError('INTERNAL', `Unable to open shared memory region: '${key}'`, { cause: error });
    }
    if (offset + byteSize > size) throw new NereidError('INVALID_ARG', `failed to register shared memory region '${name}': invalid args`);
    let memory: RegionMemory;
    try {
      memory = this.#provider.open(key, offset, byteSize);
    } catch (error) {
      if (error instanceof RegionMemoryError && error.step === 'open') {
        throw new NereidError('INTERNAL', `Unable to open shared memory region: '${key}'`, { cause: error });
      }
      throw new NereidError('INVALID_ARG', `failed to register shared memory region '${name}': unable to process address space${(error as Error).message}`, {
        cause: error,
      });
    }
    const region: Region = { name, key, offset, byteSize, memory, leases: 0, isUnregistered: false };
    this.#regions.set(name, region);
    this.#mapped.add(region);
  }

  /** Every region, or the one named: NOT_FOUND with Triton's message when there is none by that name. */
  status(name?: string): RegionStatus[] {
    const toStatus = ({ name, key, offset, byteSize }: Region): RegionStatus => ({ name, key, offset, byteSize });
    if (name === undefined || name === '') return [...this.#regions.values()].map(toStatus);
    const region = this.#regions.get(name);
    if (region === undefined) throw new NereidError('NOT_FOUND', `Unable to find system shared memory region: '${name}'`);
    return [toStatus(region)];
  }

  /** Forgets the region (a name never registered is no error, as in Triton); unmaps it once no request holds it. */
  unregister(name: string): void {
    this.#checkAllowed();
    this.#forget(name);
  }

  unregisterAll(): void {
    this.#checkAllowed();
    this.close();
  }

  /** Forgets every region, as unregistering them all does, whether or not clients may (the server's shutdown). */
  close(): void {
    for (const name of [...this.#regions.keys()]) this.#forget(name);
  }

  #forget(name: string): void {
    const region = this.#regions.get(name);
    if (region === undefined) return;
    this.#regions.delete(name);
    region.isUnregistered = true;
    if (region.leases === 0) this.#unmap(region);
  }

  /**
   * A lease on `byteSize` bytes of region `name` from `offset`, with Triton's checks
   * (SharedMemoryManager::GetMemoryInfo).
   */
  acquire(name: string, offset: number, byteSize: number): RegionLease {
    const region = this.#regions.get(name);
    if (region === undefined) throw new NereidError('NOT_FOUND', `Unable to find shared memory region: '${name}'`);
    if (offset >= region.byteSize) throw new NereidError('INVALID_ARG', `Invalid offset for shared memory region: '${name}'`);
    if (offset + byteSize > region.byteSize) throw new NereidError('INVALID_ARG', `Invalid offset + byte size for shared memory region: '${name}'`);
    region.leases++;
    let isReleased = false;
    return {
      regionName: name,
      byteSize,
      read: () => region.memory.read(offset, byteSize),
      write: (bytes) => region.memory.write(offset, bytes),
      release: () => {
        if (isReleased) return;
        isReleased = true;
        region.leases--;
        if (region.leases === 0 && region.isUnregistered) this.#unmap(region);
      },
    };
  }

  #unmap(region: Region): void {
    if (!this.#mapped.delete(region)) return;
    region.memory.close();
  }
}
