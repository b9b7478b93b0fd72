/**
 * The channel between an ONNX Runtime instance (main thread) and the execution thread that hosts its
 * session: plain integers in SharedArrayBuffers, no message per request (bench/channel.ts measured a
 * structured-clone message each way at about twice the round trip; docs/benchmarks.md, issue 20).
 *
 * Each hosted session has two shared buffers, both made by the main thread:
 * - a control block (CONTROL_BYTES): the state word that hands a request to the thread and the reply
 *   back, the outputs wanted, and the run's start and end times;
 * - an arena: a descriptor table (ARENA_DATA_OFFSET bytes), then tensor data. A request's inputs are
 *   written into it by the main thread; the thread copies them out (ONNX Runtime refuses tensors over
 *   SharedArrayBuffer) and writes the outputs over them. A request that does not fit gets a larger arena
 *   from the main thread first; outputs that do not fit get one from the thread, passed back on the
 *   thread's arena port before the reply (GROWN).
 *
 * Descriptor table (Int32 words): [0] tensor count, then per tensor DESCRIPTOR_WORDS words:
 * name index (into the session's inputNames or outputNames), type code (ORT_TYPE_CODES), rank, dims
 * (MAX_RANK words), byte offset, byte length, where the data is (DATA_IN_ARENA or DATA_MAPPED). BYTES
 * ('string') data is each element's UTF-8 length (Uint32, little-endian) then its bytes; other data its
 * elements, 8-byte aligned. Data that lies in shared memory regions the main thread mapped
 * (DATA_MAPPED: the inputs of system shared memory requests) is not copied into the arena: at the
 * byte offset are its parts' count, then each part's address and byte length (Float64 words), and the
 * thread reads the parts straight from the mappings (src/util/mapped-memory.ts); the byte length word
 * is still the data's.
 */
import type { Tensor as OrtTensor } from 'onnxruntime-node';
import type { ShmAddon } from '../../util/mapped-memory.js';

export const STATE_IDLE = 0;
export const STATE_REQUEST = 1;
export const STATE_DONE = 2;
export const STATE_FAILED = 3;
/** Set by the main thread when the thread died or the session was unloaded: no answer is coming. */
export const STATE_GONE = 4;

/** Control block words (Int32): */
export const CONTROL_STATE = 0;
/** 1 when the reply is in a new arena the thread sent on its arena port. */
export const CONTROL_GROWN = 1;
export const CONTROL_FETCH_COUNT = 2;
export const CONTROL_FETCHES = 3;
export const MAX_TENSORS = 64;
/** Float64 slots after the Int32 words: when session.run started and returned, in epoch ms. */
export const CONTROL_RUN_START = 34;
export const CONTROL_RUN_END = 35;
export const CONTROL_BYTES = 36 * 8;

export const MAX_RANK = 16;
export const DESCRIPTOR_WORDS = 6 + MAX_RANK;
export const DATA_IN_ARENA = 0;
export const DATA_MAPPED = 1;
export const ARENA_DATA_OFFSET = 8192;
export const INITIAL_ARENA_BYTES = 64 * 1024;

type WaitAsync = (array: Int32Array, index: number, value: number) => { readonly async: false; readonly value: string } | { readonly async: true; readonly value: Promise<string> };
/** Atomics.waitAsync (Node 16+), which TypeScript's ES2022 library does not declare yet. */
export const waitAsync: WaitAsync = (Atomics as unknown as { waitAsync: WaitAsync }).waitAsync;

/**
 * The doorbell of an execution thread (Int32 words): a counter bumped for each request or message,
 * whether the thread sleeps, and the ready list: the ids of the sessions given a request, in a ring
 * of READY_SLOTS words that the main thread alone writes (BELL_READY_WRITTEN counts them, wrapping)
 * and the thread alone reads. With it a wake runs the sessions that have a request instead of
 * looking at every session the thread hosts (about 30 µs for 500 sessions, once per wake: a hot
 * model among 1,000 paid it on every request). A thread that falls more than READY_SLOTS behind
 * looks at every session once instead.
 */
export const BELL_COUNTER = 0;
export const BELL_SLEEPING = 1;
export const BELL_READY_WRITTEN = 2;
export const BELL_READY_BASE = 4;
export const READY_SLOTS = 1024;
export const BELL_BYTES = (BELL_READY_BASE + READY_SLOTS) * 4;

export const ORT_TYPE_CODES: readonly OrtTensor.Type[] = ['float32', 'uint8', 'int8', 'uint16', 'int16', 'int32', 'int64', 'string', 'bool', 'float16', 'float64', 'uint32', 'uint64'];
const TYPE_CODE = new Map(ORT_TYPE_CODES.map((type, code) => [type, code]));

type ArrayConstructor = new (buffer: ArrayBufferLike, byteOffset: number, length: number) => ArrayBufferView & ArrayLike<unknown>;
const ARRAYS: Partial<Record<OrtTensor.Type, ArrayConstructor & { BYTES_PER_ELEMENT: number }>> = {
  float32: Float32Array,
  uint8: Uint8Array,
  int8: Int8Array,
  uint16: Uint16Array,
  int16: Int16Array,
  int32: Int32Array,
  int64: BigInt64Array,
  bool: Uint8Array,
  float16: Uint16Array,
  float64: Float64Array,
  uint32: Uint32Array,
  uint64: BigUint64Array,
};

/** `bytes` (aligned for the type) as the typed array onnxruntime-node takes for a tensor of `type`. */
export function typedArrayOf(type: OrtTensor.Type, bytes: Uint8Array): ArrayBufferView {
  const Ctor = ARRAYS[type]!;
  return new Ctor(bytes.buffer, bytes.byteOffset, bytes.byteLength / Ctor.BYTES_PER_ELEMENT);
}

/** A tensor as the channel carries it: fixed-size data as bytes, 'string' data as UTF-8 elements. */
export interface ChannelTensor {
  readonly nameIndex: number;
  readonly type: OrtTensor.Type;
  readonly dims: readonly number[];
  /** Fixed-size data (any views, written one after the other) or the UTF-8 elements of a 'string' tensor. */
  readonly parts: readonly Uint8Array[];
  readonly isString: boolean;
  /** Where each part lies when every one is in a mapped region (fixed-size data only): written as addresses, not bytes. */
  readonly addresses?: readonly number[];
}

const align8 = (n: number): number => (n + 7) & ~7;

/** The arena size `tensors` need. */
export function arenaBytesFor(tensors: readonly ChannelTensor[]): number {
  let bytes = ARENA_DATA_OFFSET;
  for (const tensor of tensors) bytes = align8(bytes) + dataBytes(tensor);
  return bytes;
}

function dataBytes(tensor: ChannelTensor): number {
  if (tensor.addresses !== undefined) return 8 + 16 * tensor.addresses.length;
  let bytes = 0;
  for (const part of tensor.parts) bytes += part.byteLength + (tensor.isString ? 4 : 0);
  return bytes;
}

/** Writes `tensors` into `arena`, which must hold arenaBytesFor(tensors). */
export function writeTensors(arena: SharedArrayBuffer, tensors: readonly ChannelTensor[]): void {
  if (tensors.length > MAX_TENSORS) throw new RangeError(`at most ${MAX_TENSORS} tensors travel in one run, got ${tensors.length}`);
  const words = new Int32Array(arena, 0, ARENA_DATA_OFFSET / 4);
  const bytes = new Uint8Array(arena);
  const view = new DataView(arena);
  words[0] = tensors.length;
  let offset = ARENA_DATA_OFFSET;
  for (const [index, tensor] of tensors.entries()) {
    if (tensor.dims.length > MAX_RANK) throw new RangeError(`tensors of rank ${tensor.dims.length} exceed the channel's ${MAX_RANK}`);
    offset = align8(offset);
    const base = 1 + index * DESCRIPTOR_WORDS;
    words[base] = tensor.nameIndex;
    words[base + 1] = TYPE_CODE.get(tensor.type)!;
    words[base + 2] = tensor.dims.length;
    for (const [d, dim] of tensor.dims.entries()) words[base + 3 + d] = dim;
    words[base + 3 + MAX_RANK] = offset;
    if (tensor.addresses !== undefined) {
      words[base + 5 + MAX_RANK] = DATA_MAPPED;
      const table = new Float64Array(arena, offset, 1 + 2 * tensor.addresses.length);
      table[0] = tensor.addresses.length;
      let byteLength = 0;
      for (const [at, address] of tensor.addresses.entries()) {
        table[1 + 2 * at] = address;
        table[2 + 2 * at] = tensor.parts[at]!.byteLength;
        byteLength += tensor.parts[at]!.byteLength;
      }
      words[base + 4 + MAX_RANK] = byteLength;
      offset += table.byteLength;
      continue;
    }
    words[base + 5 + MAX_RANK] = DATA_IN_ARENA;
    const start = offset;
    for (const part of tensor.parts) {
      if (tensor.isString) {
        view.setUint32(offset, part.byteLength, true);
        offset += 4;
      }
      bytes.set(part, offset);
      offset += part.byteLength;
    }
    words[base + 4 + MAX_RANK] = offset - start;
  }
}

/** A tensor read back from an arena, its data copied out into memory of its own. */
export interface ReadTensor {
  readonly nameIndex: number;
  readonly type: OrtTensor.Type;
  readonly dims: number[];
  /** A typed array over its own ArrayBuffer (at offset 0), or the UTF-8 elements of a 'string' tensor. */
  readonly data: ArrayBufferView | Uint8Array[];
}

/** How a reader reaches data in mapped regions: the shared memory addon's copy and view (src/util/mapped-memory.ts). */
export type MappedAccess = Pick<ShmAddon, 'copy' | 'view'>;

/**
 * Reads the tensors of `arena`. Fixed-size data is copied into `into(byteLength)`'s memory when given
 * (the execution thread's reusable buffer), else into a new ArrayBuffer per tensor. Data in mapped
 * regions (DATA_MAPPED), which only a reader of inputs meets, is reached with `mapped()`: a tensor in
 * one part, aligned for its type, is a view of the region (no copy); one in several parts (a batch) is
 * gathered from them.
 */
export function readTensors(arena: SharedArrayBuffer, into?: (byteLength: number) => ArrayBuffer, mapped?: () => MappedAccess): ReadTensor[] {
  const words = new Int32Array(arena, 0, ARENA_DATA_OFFSET / 4);
  const bytes = new Uint8Array(arena);
  const view = new DataView(arena);
  const count = words[0]!;
  const tensors: ReadTensor[] = [];
  let total = 0;
  for (let index = 0; index < count; index++) total += align8(words[1 + index * DESCRIPTOR_WORDS + 4 + MAX_RANK]!);
  const shared = into?.(total);
  let sharedOffset = 0;
  for (let index = 0; index < count; index++) {
    const base = 1 + index * DESCRIPTOR_WORDS;
    const type = ORT_TYPE_CODES[words[base + 1]!]!;
    const rank = words[base + 2]!;
    const dims = Array.from(words.subarray(base + 3, base + 3 + rank));
    const offset = words[base + 3 + MAX_RANK]!;
    const byteLength = words[base + 4 + MAX_RANK]!;
    let data: ArrayBufferView | Uint8Array[];
    if (type === 'string') {
      const elements: Uint8Array[] = [];
      for (let at = offset; at < offset + byteLength; ) {
        const length = view.getUint32(at, true);
        elements.push(bytes.slice(at + 4, at + 4 + length));
        at += 4 + length;
      }
      data = elements;
    } else {
      const Ctor = ARRAYS[type]!;
      const isMapped = words[base + 5 + MAX_RANK] === DATA_MAPPED;
      const table = isMapped ? new Float64Array(arena, offset, 1 + 2 * view.getFloat64(offset, true)) : undefined;
      if (table !== undefined && mapped === undefined) throw new RangeError('tensor data in mapped regions read without a way to reach it');
      if (table !== undefined && table.length === 3 && table[1]! % Ctor.BYTES_PER_ELEMENT === 0) {
        data = new Ctor(mapped!().view(table[1]!, byteLength), 0, byteLength / Ctor.BYTES_PER_ELEMENT);
      } else {
        const target = shared ?? new ArrayBuffer(byteLength);
        const targetOffset = shared === undefined ? 0 : sharedOffset;
        if (table !== undefined) {
          const { copy } = mapped!();
          let at = targetOffset;
          for (let part = 1; part < table.length; part += 2) {
            copy(table[part]!, table[part + 1]!, target, at);
            at += table[part + 1]!;
          }
        } else {
          new Uint8Array(target, targetOffset, byteLength).set(bytes.subarray(offset, offset + byteLength));
        }
        data = new Ctor(target, targetOffset, byteLength / Ctor.BYTES_PER_ELEMENT);
        sharedOffset += align8(byteLength);
      }
    }
    tensors.push({ nameIndex: words[base]!, type, dims, data });
  }
  return tensors;
}

/** Error text written into an arena by a failed run (STATE_FAILED). */
export function writeError(arena: SharedArrayBuffer, message: string): void {
  const encoded = new TextEncoder().encode(message).subarray(0, arena.byteLength - 4);
  new DataView(arena).setUint32(0, encoded.byteLength, true);
  new Uint8Array(arena).set(encoded, 4);
}

export function readError(arena: SharedArrayBuffer): string {
  const length = new DataView(arena).getUint32(0, true);
  return new TextDecoder().decode(new Uint8Array(arena, 4, length));
}
