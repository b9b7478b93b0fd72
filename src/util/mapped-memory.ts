import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/**
 * Shared memory mapped by the native addon (native/shm, built at install), as every thread of the
 * process sees it: the addon, loaded by whichever thread needs it, and the address of each mapping, so
 * that an execution thread can copy a client's region straight into its run (issue 13) where the main
 * thread would otherwise copy it into the channel first. A thread cannot be handed another thread's
 * ArrayBuffer over a mapping, but the mapping itself is the process's: an address reaches it, to copy
 * from or to view (ONNX Runtime then reads a lone request's input where the client wrote it).
 *
 * A mapping that a run holds stays mapped until the run lets go, even when the request that leased it
 * was answered meanwhile (cancelled while executing, its instance unloaded): unmapping it under a
 * thread that copies from it would crash the process.
 */
export interface ShmAddon {
  /** The object's size in bytes. */
  stat(key: string): number;
  /** Maps `byteSize` bytes of the object `key` from `offset`; `address` is the first byte of `buffer`. */
  map(key: string, offset: number, byteSize: number): { readonly buffer: ArrayBuffer; readonly handle: object; readonly address: number };
  /** Unmaps what map() mapped and detaches its buffer. */
  unmap(buffer: ArrayBuffer, handle: object): void;
  /** Copies `byteLength` bytes at `address` (inside a live mapping) into `target` from `targetOffset`. */
  copy(address: number, byteLength: number, target: ArrayBuffer, targetOffset: number): void;
  /** An ArrayBuffer over `byteLength` bytes at `address` (inside a live mapping), owning nothing: use it only while the mapping is held. */
  view(address: number, byteLength: number): ArrayBuffer;
}

/**
 * Where `npm install` builds the addon (scripts/build-addons.mjs), from this module's place in src/ or
 * dist/ (the same depth). A worker bundled from source (worker-thread.ts) runs from elsewhere, so
 * threads are handed this path rather than work it out.
 */
export const SHM_ADDON_PATH = fileURLToPath(new URL('../../native/shm/build/Release/nereid_shm.node', import.meta.url));

let addon: ShmAddon | undefined;

/** The addon at `path`, loaded once per thread; throws when it was not built or does not load. */
export function loadShmAddon(path: string = SHM_ADDON_PATH): ShmAddon {
  addon ??= createRequire(import.meta.url)(path) as ShmAddon;
  return addon;
}

interface Mapping {
  readonly address: number;
  holds: number;
  /** Set once the mapping's owner closed it while held: runs when the last hold is released. */
  unmap: (() => void) | undefined;
}

const mappings = new WeakMap<ArrayBufferLike, Mapping>();

/** Notes that `buffer` is a mapping at `address` (its owner calls closeMapping to unmap it). */
export function trackMapping(buffer: ArrayBuffer, address: number): void {
  mappings.set(buffer, { address, holds: 0, unmap: undefined });
}

/**
 * The address of `view`'s first byte when it lies in a tracked mapping, which then stays mapped until
 * releaseMapping(view); undefined (and nothing held) for any other memory.
 */
export function holdMapping(view: ArrayBufferView): number | undefined {
  const mapping = mappings.get(view.buffer);
  if (mapping === undefined || mapping.unmap !== undefined) return undefined;
  mapping.holds++;
  return mapping.address + view.byteOffset;
}

/** Lets go of a hold holdMapping took; the last one unmaps a mapping closed meanwhile. */
export function releaseMapping(view: ArrayBufferView): void {
  const mapping = mappings.get(view.buffer);
  if (mapping === undefined || mapping.holds === 0) return;
  mapping.holds--;
  if (mapping.holds === 0 && mapping.unmap !== undefined) {
    const unmap = mapping.unmap;
    mapping.unmap = undefined;
    mappings.delete(view.buffer);
    unmap();
  }
}

/** Unmaps `buffer` with `unmap` now, or once its last hold is released. */
export function closeMapping(buffer: ArrayBuffer, unmap: () => void): void {
  const mapping = mappings.get(buffer);
  if (mapping !== undefined && mapping.holds > 0) {
    mapping.unmap = unmap;
    return;
  }
  mappings.delete(buffer);
  unmap();
}
