import { BIG_INTEGER_RANGES, DATA_TYPE_NAMES, type DataType, INTEGER_RANGES, isDataType } from '../protocol/data-type.js';
import { type FixedSizeArray, allocateFixedSize, asBytes, elementCount, fixedSizeArrayType, serializeBytes } from '../protocol/tensor-data.js';
import { ClientError } from './errors.js';
import type { InferInput, SharedMemoryInput, SharedMemoryPlace } from './types.js';

type FixedType = Exclude<DataType, 'BYTES'>;
const utf8 = new TextEncoder();
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * An input checked and brought to one form: fixed-size data as the type's typed array (the caller's own
 * array when it gave one: no copy), BYTES as byte strings.
 */
export type PreparedInput =
  | { readonly name: string; readonly datatype: FixedType; readonly shape: readonly number[]; readonly data: FixedSizeArray; readonly parameters: InferInput['parameters'] }
  | { readonly name: string; readonly datatype: 'BYTES'; readonly shape: readonly number[]; readonly data: readonly Uint8Array[]; readonly parameters: InferInput['parameters'] };

/** An input in shared memory, checked: its parameters carry the region (the wire form both protocols share). */
export interface PreparedSharedMemoryInput {
  readonly name: string;
  readonly datatype: DataType;
  readonly shape: readonly number[];
  readonly data: undefined;
  readonly parameters: Readonly<Record<string, string | number>>;
}

/** The shared memory parameters of a tensor (Triton's names), after checking the place. */
export function sharedMemoryParameters(what: string, place: SharedMemoryPlace): Record<string, string | number> {
  const offset = place.offset ?? 0;
  if (typeof place.region !== 'string' || place.region === '') throw new ClientError(`${what}: sharedMemory.region must be a region name`);
  if (!Number.isSafeInteger(place.byteSize) || place.byteSize < 0 || !Number.isSafeInteger(offset) || offset < 0) {
    throw new ClientError(`${what}: sharedMemory.byteSize and offset must be non-negative integers`);
  }
  return { shared_memory_region: place.region, shared_memory_byte_size: place.byteSize, ...(offset !== 0 ? { shared_memory_offset: offset } : {}) };
}

/** Checks an input in shared memory: name, data type and shape here; its size against the shape, on the server. */
export function prepareSharedMemoryInput(input: SharedMemoryInput): PreparedSharedMemoryInput {
  if (typeof input.name !== 'string' || input.name === '') throw new ClientError('every input needs a name');
  if (!isDataType(input.datatype)) fail(input, `unknown datatype ${JSON.stringify(input.datatype)}; expected one of ${DATA_TYPE_NAMES.join(', ')}`);
  if (!Array.isArray(input.shape) || !input.shape.every((dim) => Number.isSafeInteger(dim) && dim >= 0)) {
    fail(input, `shape must be an array of non-negative integers, got ${JSON.stringify(input.shape)}`);
  }
  const parameters = { ...input.parameters, ...sharedMemoryParameters(`input '${input.name}'`, input.sharedMemory) } as Record<string, string | number>;
  return { name: input.name, datatype: input.datatype, shape: input.shape, data: undefined, parameters };
}

/** prepareInput or prepareSharedMemoryInput, as the input says. */
export function prepareAnyInput(input: InferInput | SharedMemoryInput): PreparedInput | PreparedSharedMemoryInput {
  return 'sharedMemory' in input ? prepareSharedMemoryInput(input) : prepareInput(input);
}

function fail(input: { readonly name: string }, message: string): never {
  throw new ClientError(`input '${input.name}': ${message}`);
}

function fromPlainArray(input: InferInput, datatype: FixedType, values: readonly unknown[]): FixedSizeArray {
  const out = allocateFixedSize(datatype, values.length);
  const bigRange = BIG_INTEGER_RANGES[datatype];
  const range = INTEGER_RANGES[datatype];
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if (datatype === 'BOOL') {
      if (typeof value !== 'boolean') fail(input, `element ${i} is ${String(value)}, but BOOL data must be true or false (or a Uint8Array of 0/1)`);
      out[i] = value ? 1 : 0;
    } else if (bigRange !== undefined) {
      const big = typeof value === 'bigint' ? value : typeof value === 'number' && Number.isInteger(value) ? BigInt(value) : undefined;
      if (big === undefined || big < bigRange[0] || big > bigRange[1]) fail(input, `element ${i} is ${String(value)}, but ${datatype} data must be integers from ${bigRange[0]} to ${bigRange[1]}`);
      (out as BigInt64Array | BigUint64Array)[i] = big;
    } else if (range !== undefined) {
      if (typeof value !== 'number' || !Number.isInteger(value) || value < range[0] || value > range[1]) {
        fail(input, `element ${i} is ${String(value)}, but ${datatype} data must be integers from ${range[0]} to ${range[1]}`);
      }
      out[i] = value;
    } else {
      if (typeof value !== 'number') fail(input, `element ${i} is ${String(value)}, but ${datatype} data must be numbers`);
      out[i] = value;
    }
  }
  return out;
}

/** Checks an input (name, data type, shape, element count, the data's type) and brings its data to one form. */
export function prepareInput(input: InferInput): PreparedInput {
  if (typeof input.name !== 'string' || input.name === '') throw new ClientError('every input needs a name');
  const datatype: unknown = input.datatype;
  if (!isDataType(datatype)) {
    fail(input, `unknown datatype ${JSON.stringify(datatype)}; expected one of ${DATA_TYPE_NAMES.join(', ')}`);
  }
  if (!Array.isArray(input.shape) || !input.shape.every((dim) => Number.isSafeInteger(dim) && dim >= 0)) {
    fail(input, `shape must be an array of non-negative integers, got ${JSON.stringify(input.shape)}`);
  }
  const count = elementCount(input.shape);
  const { data } = input;
  if (data === undefined || data === null || typeof (data as { length?: unknown }).length !== 'number') fail(input, 'has no data');
  if (data.length !== count) fail(input, `shape [${input.shape.join(',')}] has ${count} elements but the data holds ${data.length}`);
  if (datatype === 'BYTES') {
    const elements = (data as readonly unknown[]).map((element, i) => {
      if (typeof element === 'string') return utf8.encode(element);
      if (element instanceof Uint8Array) return element;
      return fail(input, `element ${i} must be a string or a Uint8Array, got ${typeof element}`);
    });
    return { name: input.name, datatype, shape: input.shape, data: elements, parameters: input.parameters };
  }
  const Class = fixedSizeArrayType(datatype);
  let array: FixedSizeArray;
  if (data instanceof Class) {
    array = data as FixedSizeArray;
  } else if (Array.isArray(data) && datatype !== 'FP16' && datatype !== 'BF16') {
    array = fromPlainArray(input, datatype, data);
  } else {
    const got = Array.isArray(data) ? 'a plain array' : ((data as object).constructor?.name ?? typeof data);
    const plain = datatype === 'FP16' || datatype === 'BF16' ? ' (the raw 16-bit patterns)' : datatype === 'BOOL' ? ' or an array of booleans' : ' or an array of numbers';
    fail(input, `${datatype} data must be a ${Class.name}${plain}, got ${got}`);
  }
  return { name: input.name, datatype, shape: input.shape, data: array, parameters: input.parameters };
}

/** The input's bytes as the binary data extension and gRPC raw contents carry them (a view when possible). */
export function inputBytes(input: PreparedInput): Uint8Array {
  return input.datatype === 'BYTES' ? serializeBytes([...input.data]) : asBytes(input.data);
}

/**
 * The input's data as JSON values: numbers, bigints (INT64/UINT64, written digit for digit), booleans
 * (BOOL) or strings (BYTES, which must then be UTF-8).
 */
export function inputJsonValues(input: PreparedInput): unknown[] {
  switch (input.datatype) {
    case 'BYTES':
      return input.data.map((element, i) => {
        try {
          return strictUtf8.decode(element);
        } catch {
          return fail(input, `element ${i} is not UTF-8, which JSON cannot carry; send it as binary data (binaryData: true)`);
        }
      });
    case 'BOOL':
      return Array.from(input.data as Uint8Array, (value) => value !== 0);
    case 'INT64':
    case 'UINT64':
      return Array.from(input.data as BigInt64Array);
    default:
      return Array.from(input.data as Float64Array);
  }
}
