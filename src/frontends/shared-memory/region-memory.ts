import { closeSync, fstatSync, openSync, readSync, writeSync } from 'node:fs';
import { closeMapping, loadShmAddon, type ShmAddon, trackMapping } from '../../util/mapped-memory.js';

/**
 * How the server reaches a POSIX shared memory object: mapped by the native addon (native/shm, built
 * at install), or, when the addon cannot load or NEREID_SHM_FALLBACK=1, by reads and writes of the
 * object's file under /dev/shm (glibc's shm_open opens `/dev/shm/<key without the leading '/'>`).
 */
export interface RegionMemoryProvider {
  /** 'mmap' (the addon) or 'file' (the fallback), for the start-up line and tests. */
  readonly kind: 'mmap' | 'file';
  /** The object's size in bytes; throws a RegionMemoryError when it cannot be opened. */
  sizeOf(key: string): number;
  /** Opens `byteSize` bytes of the object from `offset`; throws a RegionMemoryError when it cannot. */
  open(key: string, offset: number, byteSize: number): RegionMemory;
}

/**
 * An opened stretch of a shared memory object. Owned by one registered region; `close` unmaps or
 * closes it, after which no method may be called.
 */
export interface RegionMemory {
  /** `byteSize` bytes from `offset` (relative to the region): a view of the mapping, or a copy read from the file. */
  read(offset: number, byteSize: number): Uint8Array;
  /** Writes `bytes` at `offset` (relative to the region). */
  write(offset: number, bytes: Uint8Array): void;
  close(): void;
}

/** Opening or mapping failed: `step` says which call (shm_open, fstat, mmap), `message` the system's error. */
export class RegionMemoryError extends Error {
  constructor(
    readonly step: 'open' | 'map',
    message: string,
  ) {
    super(message);
  }
}

type NativeMapping = ReturnType<ShmAddon['map']>;

/**
 * A mapping made by the addon. Its views may be copied from by execution threads (mapped-memory.ts):
 * `close` unmaps at once, or once the last run holding it lets go.
 */
class MappedMemory implements RegionMemory {
  readonly #addon: ShmAddon;
  readonly #mapping: NativeMapping;
  readonly #bytes: Uint8Array;

  constructor(addon: ShmAddon, mapping: NativeMapping) {
    this.#addon = addon;
    this.#mapping = mapping;
    this.#bytes = new Uint8Array(mapping.buffer);
    trackMapping(mapping.buffer, mapping.address);
  }

  read(offset: number, byteSize: number): Uint8Array {
    return this.#bytes.subarray(offset, offset + byteSize);
  }

  write(offset: number, bytes: Uint8Array): void {
    this.#bytes.set(bytes, offset);
  }

  close(): void {
    const { buffer, handle } = this.#mapping;
    closeMapping(buffer, () => this.#addon.unmap(buffer, handle));
  }
}

function nativeProvider(addon: ShmAddon): RegionMemoryProvider {
  return {
    kind: 'mmap',
    sizeOf(key) {
      try {
        return addon.stat(key);
      } catch (error) {
        throw new RegionMemoryError('open', (error as Error).message);
      }
    },
    open(key, offset, byteSize) {
      try {
        return new MappedMemory(addon, addon.map(key, offset, byteSize));
      } catch (error) {
        throw new RegionMemoryError((error as Error).message.startsWith('shm_open') ? 'open' : 'map', (error as Error).message);
      }
    },
  };
}

/** The file glibc's shm_open opens for `key`, or undefined for a key shm_open refuses (EINVAL). */
function shmFilePath(key: string): string | undefined {
  const name = key.replace(/^\/+/, '');
  if (name === '' || name.includes('/') || name === '.' || name === '..' || name.includes('\0')) return undefined;
  return `/dev/shm/${name}`;
}

function openShmFile(key: string): number {
  const path = shmFilePath(key);
  if (path === undefined) throw new RegionMemoryError('open', 'shm_open: Invalid argument');
  try {
    return openSync(path, 'r+');
  } catch (error) {
    throw new RegionMemoryError('open', `shm_open: ${(error as Error).message}`);
  }
}

/** The copying fallback: each read and write is a pread/pwrite of the object's file, at an offset. */
class FileMemory implements RegionMemory {
  readonly #fd: number;
  readonly #offset: number;

  constructor(fd: number, offset: number) {
    this.#fd = fd;
    this.#offset = offset;
  }

  read(offset: number, byteSize: number): Uint8Array {
    const bytes = Buffer.allocUnsafe(byteSize);
    let done = 0;
    while (done < byteSize) {
      const read = readSync(this.#fd, bytes, done, byteSize - done, this.#offset + offset + done);
      if (read === 0) {
        bytes.fill(0, done);
        break;
      }
      done += read;
    }
    return bytes;
  }

  write(offset: number, bytes: Uint8Array): void {
    let done = 0;
    while (done < bytes.byteLength) done += writeSync(this.#fd, bytes, done, bytes.byteLength - done, this.#offset + offset + done);
  }

  close(): void {
    closeSync(this.#fd);
  }
}

const fileProvider: RegionMemoryProvider = {
  kind: 'file',
  sizeOf(key) {
    const fd = openShmFile(key);
    try {
      return fstatSync(fd).size;
    } finally {
      closeSync(fd);
    }
  },
  open(key, offset) {
    return new FileMemory(openShmFile(key), offset);
  },
};

/** The result of choosing a provider: which one, and why the addon is not in use when it is not. */
export interface ProviderChoice {
  readonly provider: RegionMemoryProvider;
  readonly fallbackReason?: string;
}

/**
 * The addon when it loads, the file fallback otherwise. `NEREID_SHM_FALLBACK=1` (or `isFallbackForced`)
 * chooses the fallback without trying the addon.
 */
export function chooseRegionMemoryProvider(options: { readonly isFallbackForced?: boolean } = {}): ProviderChoice {
  if (options.isFallbackForced ?? process.env.NEREID_SHM_FALLBACK === '1') {
    return { provider: fileProvider, fallbackReason: 'NEREID_SHM_FALLBACK=1' };
  }
  try {
    return { provider: nativeProvider(loadShmAddon()) };
  } catch (error) {
    return { provider: fileProvider, fallbackReason: `the native addon did not load (${(error as Error).message.split('\n', 1)[0]}); run 'npm rebuild' or 'node scripts/build-addons.mjs'` };
  }
}
