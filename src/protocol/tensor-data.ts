import { type DataType, dataTypeByteSize } from './data-type.js';

/*
 * Tensor data as it travels: the typed array of each data type, views of little-endian bytes, and
 * Triton's serialized BYTES layout. Shared by the server and the client library.
 */

/** Elements of a BYTES tensor: each one an arbitrary byte string. */
export type BytesElements = Uint8Array[];

/**
 * The typed array that holds each data type's elements, row major:
 * BOOL as Uint8Array of 0/1, FP16 and BF16 as their raw 16-bit patterns in a Uint16Array,
 * INT64/UINT64 as BigInt arrays so that values beyond 2^53 survive.
 */
export interface TensorDataByType {
  BOOL: Uint8Array;
  UINT8: Uint8Array;
  UINT16: Uint16Array;
  UINT32: Uint32Array;
  UINT64: BigUint64Array;
  INT8: Int8Array;
  INT16: Int16Array;
  INT32: Int32Array;
  INT64: BigInt64Array;
  FP16: Uint16Array;
  FP32: Float32Array;
  FP64: Float64Array;
  BYTES: BytesElements;
  BF16: Uint16Array;
}

export type FixedSizeArray = Exclude<TensorDataByType[DataType], BytesElements>;
export type TensorData = TensorDataByType[DataType];

type TypedArrayConstructor = new (buffer: ArrayBufferLike, byteOffset: number, length: number) => FixedSizeArray;

const ARRAY_TYPES: Record<Exclude<DataType, 'BYTES'>, TypedArrayConstructor> = {
  BOOL: Uint8Array,
  UINT8: Uint8Array,
  UINT16: Uint16Array,
  UINT32: Uint32Array,
  UINT64: BigUint64Array,
  INT8: Int8Array,
  INT16: Int16Array,
  INT32: Int32Array,
  INT64: BigInt64Array,
  FP16: Uint16Array,
  FP32: Float32Array,
  FP64: Float64Array,
  BF16: Uint16Array,
};

/** The typed array constructor that holds a fixed-size data type's elements. */
export function fixedSizeArrayType(dataType: Exclude<DataType, 'BYTES'>): TypedArrayConstructor & { from(values: Iterable<number | bigint>): FixedSizeArray } {
  return ARRAY_TYPES[dataType] as TypedArrayConstructor & { from(values: Iterable<number | bigint>): FixedSizeArray };
}

export function elementCount(shape: readonly number[]): number {
  let count = 1;
  for (const dim of shape) count *= dim;
  return count;
}

/**
 * Views little-endian bytes as the data type's typed array without copying when the offset is
 * aligned to the element size; copies into a fresh aligned buffer otherwise (typed arrays need
 * aligned offsets).
 */
export function viewFixedSize(dataType: Exclude<DataType, 'BYTES'>, bytes: Uint8Array): FixedSizeArray {
  const size = dataTypeByteSize(dataType);
  const Ctor = ARRAY_TYPES[dataType];
  if (bytes.byteOffset % size === 0) return new Ctor(bytes.buffer, bytes.byteOffset, bytes.byteLength / size);
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  return new Ctor(copy.buffer, 0, bytes.byteLength / size);
}

/** Allocates a zero-filled typed array for `count` elements of a fixed-size data type. */
export function allocateFixedSize(dataType: Exclude<DataType, 'BYTES'>, count: number): FixedSizeArray {
  const Ctor = ARRAY_TYPES[dataType];
  return new Ctor(new ArrayBuffer(count * dataTypeByteSize(dataType)), 0, count);
}

/** The byte view of a fixed-size tensor's elements (no copy). */
export function asBytes(data: FixedSizeArray): Uint8Array {
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

/**
 * The element of every empty BYTES string: one frozen zero-length array instead of one object each, so
 * that millions of empty strings (4 bytes of length prefix each on the wire) cost a slot in an array.
 */
export const EMPTY_ELEMENT: Uint8Array = Object.freeze(new Uint8Array(0)) as Uint8Array;

/**
 * Reads up to `maxCount` elements of Triton's serialized BYTES layout from `offset` into `elements`;
 * returns where it stopped, or what is malformed.
 */
export function readBytesElements(bytes: Uint8Array, view: DataView, elements: BytesElements, offset: number, maxCount: number): number | string {
  for (let read = 0; read < maxCount && offset < bytes.byteLength; read++) {
    if (offset + 4 > bytes.byteLength) return `a 4-byte length prefix at byte ${offset} is cut off`;
    const length = view.getUint32(offset, true);
    offset += 4;
    if (offset + length > bytes.byteLength) {
      return `element ${elements.length} declares ${length} bytes at byte ${offset - 4} but only ${bytes.byteLength - offset} remain`;
    }
    elements.push(length === 0 ? EMPTY_ELEMENT : bytes.subarray(offset, offset + length));
    offset += length;
  }
  return offset;
}

/** Splits Triton's serialized BYTES layout (4-byte little-endian length, then the bytes) into elements. */
export function deserializeBytes(bytes: Uint8Array): BytesElements | string {
  const elements: BytesElements = [];
  const stop = readBytesElements(bytes, new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength), elements, 0, Infinity);
  return typeof stop === 'string' ? stop : elements;
}

/** The bytes of BYTES elements in Triton's serialized layout. */
export function serializedByteLength(elements: BytesElements): number {
  let total = 0;
  for (const element of elements) total += 4 + element.byteLength;
  return total;
}

/** Writes elements `start` to `end` at `offset` of `out` (sized by serializedByteLength); returns the offset after them. */
export function writeBytesElements(elements: BytesElements, out: Uint8Array, view: DataView, start: number, end: number, offset: number): number {
  for (let index = start; index < end; index++) {
    const element = elements[index]!;
    view.setUint32(offset, element.byteLength, true);
    out.set(element, offset + 4);
    offset += 4 + element.byteLength;
  }
  return offset;
}

/** Writes BYTES elements in Triton's serialized layout. */
export function serializeBytes(elements: BytesElements): Uint8Array {
  const out = new Uint8Array(serializedByteLength(elements));
  writeBytesElements(elements, out, new DataView(out.buffer), 0, elements.length, 0);
  return out;
}
