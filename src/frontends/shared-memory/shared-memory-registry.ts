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
  /** Unregistered while leased: it goes once its last lease is released (Triton's awaiting_unregister_). */
  isAwaitingUnregister: boolean;
}

/** A byte count or offset as a request gives it: a number, or a bigint past 2^53 (TritonJson's uint64). */
export type ByteCount = number | bigint;

/** SIZE_MAX on the 64-bit machines Triton runs on, for its overflow message. */
const SIZE_MAX = 2n ** 64n - 1n;

/**
 * The system shared memory regions clients registered, after Triton's SharedMemoryManager
 * (src/shared_memory_manager.cc): the same checks, statuses and messages. One registry serves both
 * front ends, so a region registered over HTTP is usable over gRPC. As in Triton, unregistering a
 * region that requests hold marks it: status still lists it, new requests may still use it, and it is
 * unmapped and forgotten when the last of them ends (qa/L0_shared_memory checks all three); its name
 * cannot be registered again until then. Status lists regions by name, as Triton's std::map does.
 */
export class SharedMemoryRegistry {
  readonly #provider: RegionMemoryProvider;
  readonly #isAllowed: boolean;
  readonly #regions = new Map<string, Region>();

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

  /** Regions mapped now, those awaiting their last lease included. */
  get mappedCount(): number {
    return this.#regions.size;
  }

  #checkAllowed(): void {
    if (!this.#isAllowed) throw new NereidError('UNAVAILABLE', CLIENT_SHM_DISABLED_MESSAGE);
  }

  /** Opens and maps `byteSize` bytes of the object `key` from `offset` under `name`. */
  register(name: string, key: string, offset: ByteCount, byteSize: ByteCount): void {
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
    if (BigInt(offset) + BigInt(byteSize) > BigInt(size)) throw new NereidError('INVALID_ARG', `failed to register shared memory region '${name}': invalid args`);
    let memory: RegionMemory;
    try {
      memory = this.#provider.open(key, Number(offset), Number(byteSize));
    } catch (error) {
      if (error instanceof RegionMemoryError && error.step === 'open') {
        throw new NereidError('INTERNAL', `Unable to open shared memory region: '${key}'`, { cause: error });
      }
      throw new NereidError('INVALID_ARG', `failed to register shared memory region '${name}': unable to process address space${(error as Error).message}`, {
        cause: error,
      });
    }
    this.#regions.set(name, { name, key, offset: Number(offset), byteSize: Number(byteSize), memory, leases: 0, isAwaitingUnregister: false });
  }

  /** Every region, or the one named: NOT_FOUND with Triton's message when there is none by that name. */
  status(name?: string): RegionStatus[] {
    const toStatus = ({ name, key, offset, byteSize }: Region): RegionStatus => ({ name, key, offset, byteSize });
    if (name === undefined || name === '') return [...this.#regions.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)).map(toStatus);
    const region = this.#regions.get(name);
    if (region === undefined) throw new NereidError('NOT_FOUND', `Unable to find system shared memory region: '${name}'`);
    return [toStatus(region)];
  }

  /** Forgets the region (a name never registered is no error, as in Triton), or marks it to go once no request holds it. */
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
    if (region.leases > 0) {
      region.isAwaitingUnregister = true;
      return;
    }
    this.#regions.delete(name);
    region.memory.close();
  }

  /**
   * A lease on `byteSize` bytes of region `name` from `offset`, with Triton's checks and messages, in
   * its order (SharedMemoryManager::GetMemoryInfo; uint64 arithmetic, so its overflow check answers as
   * Triton's does).
   */
  acquire(name: string, offset: ByteCount, byteSize: ByteCount): RegionLease {
    const region = this.#regions.get(name);
    if (region === undefined) throw new NereidError('NOT_FOUND', `Unable to find shared memory region: '${name}'`);
    const [start, length] = [BigInt(offset), BigInt(byteSize)];
    if (start >= BigInt(region.byteSize)) throw new NereidError('INVALID_ARG', `Invalid offset for shared memory region: '${name}'`);
    if (length > SIZE_MAX - start) {
      throw new NereidError(
        'INVALID_ARG',
        `Integer overflow detected: byte_size (${length}) + offset (${start}) exceeds maximum value (${SIZE_MAX}) for region '${name}'`,
      );
    }
    if (start + length > BigInt(region.byteSize)) throw new NereidError('INVALID_ARG', `Invalid offset + byte size for shared memory region: '${name}'`);
    const [at, size] = [Number(start), Number(length)];
    region.leases++;
    let isReleased = false;
    return {
      regionName: name,
      byteSize: size,
      read: () => region.memory.read(at, size),
      write: (bytes) => region.memory.write(at, bytes),
      release: () => {
        if (isReleased) return;
        isReleased = true;
        region.leases--;
        if (region.leases === 0 && region.isAwaitingUnregister) this.#forget(name);
      },
    };
  }
}
