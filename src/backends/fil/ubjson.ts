/**
 * A decoder for Universal Binary JSON (https://ubjson.org, Draft 12), the container of XGBoost's
 * `.ubj` models. Big-endian numbers; typed ("$" type and "#" count) arrays of numbers decode to
 * typed arrays, the form XGBoost writes its node arrays in. Own code rather than a package: the
 * format is small and the npm decoders seen do not return typed arrays (a 500-tree model holds
 * millions of numbers).
 */
import { ModelFileError } from './model-file-error.js';

const MAX_DEPTH = 64;

class Reader {
  offset = 0;
  readonly #view: DataView;
  constructor(readonly bytes: Uint8Array) {
    this.#view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  need(count: number): void {
    if (this.offset + count > this.bytes.byteLength) throw new ModelFileError(`ends early: ${count} more bytes needed at byte ${this.offset} (UBJSON)`);
  }

  marker(): number {
    this.need(1);
    return this.bytes[this.offset++]!;
  }

  number(type: number): number {
    const view = this.#view;
    const at = this.offset;
    const size = NUMBER_SIZES.get(type);
    if (size === undefined) throw new ModelFileError(`has UBJSON marker '${String.fromCharCode(type)}' at byte ${at - 1} where a number was expected`);
    this.need(size);
    this.offset += size;
    switch (type) {
      case 0x69: return view.getInt8(at);
      case 0x55: return view.getUint8(at);
      case 0x49: return view.getInt16(at);
      case 0x6c: return view.getInt32(at);
      case 0x4c: return Number(view.getBigInt64(at));
      case 0x64: return view.getFloat32(at);
      default: return view.getFloat64(at);
    }
  }

  /** A length: an integer value with its own marker. */
  count(): number {
    const value = this.number(this.marker());
    if (!Number.isSafeInteger(value) || value < 0) throw new ModelFileError(`has a negative or huge UBJSON length ${value} at byte ${this.offset}`);
    return value;
  }

  string(): string {
    const length = this.count();
    this.need(length);
    const text = new TextDecoder().decode(this.bytes.subarray(this.offset, this.offset + length));
    this.offset += length;
    return text;
  }
}

/** i U I l L d D: the number markers and their sizes in bytes. */
const NUMBER_SIZES = new Map([
  [0x69, 1],
  [0x55, 1],
  [0x49, 2],
  [0x6c, 4],
  [0x4c, 8],
  [0x64, 4],
  [0x44, 8],
]);

const TYPED_ARRAYS = new Map<number, { new (length: number): Int8Array | Uint8Array | Int16Array | Int32Array | Float32Array | Float64Array | BigInt64Array }>([
  [0x69, Int8Array],
  [0x55, Uint8Array],
  [0x49, Int16Array],
  [0x6c, Int32Array],
  [0x4c, BigInt64Array],
  [0x64, Float32Array],
  [0x44, Float64Array],
]);

function readValue(reader: Reader, type: number, depth: number): unknown {
  if (depth > MAX_DEPTH) throw new ModelFileError(`nests UBJSON containers deeper than ${MAX_DEPTH} levels`);
  switch (type) {
    case 0x5a: return null; // Z
    case 0x54: return true; // T
    case 0x46: return false; // F
    case 0x43: return String.fromCharCode(reader.marker()); // C
    case 0x53: // S
    case 0x48: return reader.string(); // H: high-precision number, as its text
    case 0x5b: return readArray(reader, depth);
    case 0x7b: return readObject(reader, depth);
    default:
      return reader.number(type);
  }
}

/** The optional "$" type and "#" count of a container. */
function readContainerHeader(reader: Reader): { type?: number; count?: number } {
  let type: number | undefined;
  let count: number | undefined;
  if (reader.bytes[reader.offset] === 0x24) {
    reader.offset++;
    type = reader.marker();
  }
  if (reader.bytes[reader.offset] === 0x23) {
    reader.offset++;
    count = reader.count();
  } else if (type !== undefined) {
    throw new ModelFileError(`has a UBJSON container with a type but no count at byte ${reader.offset}`);
  }
  return { ...(type !== undefined ? { type } : {}), ...(count !== undefined ? { count } : {}) };
}

function readArray(reader: Reader, depth: number): unknown {
  const { type, count } = readContainerHeader(reader);
  if (type !== undefined && count !== undefined) {
    const Typed = TYPED_ARRAYS.get(type);
    if (Typed !== undefined) {
      const size = NUMBER_SIZES.get(type)!;
      reader.need(count * size);
      const out = new Typed(count);
      // NOTE: read element by element: the data is big-endian and need not be aligned.
      for (let i = 0; i < count; i++) out[i] = (type === 0x4c ? BigInt(reader.number(type)) : reader.number(type)) as never;
      return out;
    }
    return Array.from({ length: count }, () => readValue(reader, type, depth + 1));
  }
  const items: unknown[] = [];
  if (count !== undefined) {
    for (let i = 0; i < count; i++) items.push(readValue(reader, reader.marker(), depth + 1));
    return items;
  }
  for (;;) {
    const marker = reader.marker();
    if (marker === 0x5d) return items;
    items.push(readValue(reader, marker, depth + 1));
  }
}

function readObject(reader: Reader, depth: number): Record<string, unknown> {
  const { type, count } = readContainerHeader(reader);
  const out: Record<string, unknown> = {};
  const entry = (): void => {
    const key = reader.string();
    out[key] = readValue(reader, type ?? reader.marker(), depth + 1);
  };
  if (count !== undefined) {
    for (let i = 0; i < count; i++) entry();
    return out;
  }
  while (reader.bytes[reader.offset] !== 0x7d) {
    reader.need(1);
    entry();
  }
  reader.offset++;
  return out;
}

/** The value a UBJSON document holds. Throws ModelFileError when it is malformed or has bytes after it. */
export function decodeUbjson(bytes: Uint8Array): unknown {
  const reader = new Reader(bytes);
  const value = readValue(reader, reader.marker(), 0);
  if (reader.offset !== bytes.byteLength) throw new ModelFileError(`has ${bytes.byteLength - reader.offset} bytes after its UBJSON document`);
  return value;
}
