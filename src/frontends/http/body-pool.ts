/**
 * Memory for large request bodies, used again once the server knows that nobody refers to it (issue 20).
 *
 * A 600 KB body (ResNet-18's input with the binary data extension) joined into fresh memory costs its
 * page faults on the copy and counts as V8 external memory, whose growth triggers garbage collections
 * ("external memory pressure"): measured, the main thread spent about 0.27 ms a request less with its
 * bodies taken from here (docs/benchmarks.md, issue 13, 2026-12-03). Bodies under MIN_POOLED_BYTES
 * keep memory of their own, which costs less than the bookkeeping.
 *
 * NOTE: a body goes back (`give`) only when nothing can read its memory any more. The HTTP server gives
 * back the body of an inference request only (1) once the request has settled with a response: no
 * instance holds its inputs then (ModelInstance.execute's contract: it keeps no reference after its
 * promise settles); (2) when it was not traced (a trace may log its tensors until it ends); (3) once the
 * whole reply is handed to the socket ('finish'): a model may answer with its input, whose bytes the
 * reply's chunks then view. A body given back twice, or memory the pool did not hand out (a socket's
 * chunk, a decompressed body), is ignored.
 *
 *   take(n) ──► n bytes at offset 0 of a 64 KiB-rounded ArrayBuffer ──► request ──► reply out ──► give(body)
 *     ▲                                                                                              │
 *     └──────────────── the free list of its size class (at most MAX_RETAINED_BYTES in all) ◄────────┘
 */
const MIN_POOLED_BYTES = 64 * 1024;
const CLASS_BYTES = 64 * 1024;
const MAX_RETAINED_BYTES = 64 * 1024 * 1024;

export class BodyPool {
  /** Free memory by size class (its byteLength). */
  readonly #free = new Map<number, ArrayBuffer[]>();
  /** The memory this pool handed out, free or not: only it may come back. */
  readonly #owned = new WeakSet<ArrayBuffer>();
  readonly #isFree = new WeakSet<ArrayBuffer>();
  #retainedBytes = 0;

  /** Bytes held in the free lists now. */
  get retainedBytes(): number {
    return this.#retainedBytes;
  }

  /** A buffer of `byteLength` bytes at offset 0 of memory of its own (never a slice of a shared pool), its contents undefined. */
  take(byteLength: number): Buffer {
    if (byteLength < MIN_POOLED_BYTES) return Buffer.allocUnsafeSlow(byteLength);
    const classBytes = Math.ceil(byteLength / CLASS_BYTES) * CLASS_BYTES;
    let memory = this.#free.get(classBytes)?.pop();
    if (memory !== undefined) {
      this.#isFree.delete(memory);
      this.#retainedBytes -= classBytes;
    } else {
      memory = new ArrayBuffer(classBytes);
      this.#owned.add(memory);
    }
    return Buffer.from(memory, 0, byteLength);
  }

  /**
   * Takes back the memory of `body` (a view of a buffer from `take`) for a later request, unless the
   * free lists hold MAX_RETAINED_BYTES already. The caller guarantees that nothing refers to it any
   * more (see the NOTE above).
   */
  give(body: Uint8Array): void {
    const memory = body.buffer;
    if (!(memory instanceof ArrayBuffer) || !this.#owned.has(memory) || this.#isFree.has(memory)) return;
    if (this.#retainedBytes + memory.byteLength > MAX_RETAINED_BYTES) return;
    let list = this.#free.get(memory.byteLength);
    if (list === undefined) this.#free.set(memory.byteLength, (list = []));
    list.push(memory);
    this.#isFree.add(memory);
    this.#retainedBytes += memory.byteLength;
  }
}
