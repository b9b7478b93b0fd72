import fc from 'fast-check';
import { DATA_TYPE_NAMES, type DataType } from '../../src/protocol/data-type.js';
import type { ParameterValue } from '../../src/protocol/parameters.js';
import { type TensorData, asBytes } from '../../src/protocol/tensor-data.js';

/*
 * Generators shared by the fuzz targets: JSON values, valid tensors and requests, and the mutations
 * that turn a valid message into a nearly valid one (the inputs that reach deepest into a parser).
 *
 * JSON values may hold integers of any size (bigints, written digit for digit) and, as a leaf, JSON
 * text nested 129 to 20,000 levels deep (past the parser's limit of 128).
 */

/** Numbers of any size: integers (bigints beyond 2^53), fractions, and the extremes of a double. */
export const jsonNumber: fc.Arbitrary<number | bigint> = fc.oneof(
  fc.integer(),
  fc.maxSafeInteger(),
  fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }),
  fc.constantFrom(2n ** 53n, -(2n ** 53n) - 1n, 2n ** 63n, 2n ** 64n, 10n ** 21n - 1n, -(10n ** 21n), 10n ** 400n),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(1e21, -1e21, 1e300, -1e308, Number.MAX_VALUE, Number.MIN_VALUE, -0, 0.5, 2 ** 31, 2 ** 32, -(2 ** 31) - 1, 2 ** 53, 1e20),
);

/** JSON text that jsonText writes as it is: how a value holds nesting too deep to build as objects. */
export class RawJson {
  constructor(readonly text: string) {}
}

/** Arrays and objects nested 129 to 20,000 levels around a scalar, some left unclosed. */
export const deepJson: fc.Arbitrary<RawJson> = fc
  .record({
    depth: fc.oneof(fc.integer({ min: 129, max: 300 }), fc.integer({ min: 129, max: 20_000 })),
    isObject: fc.boolean(),
    isMixed: fc.boolean(),
    isClosed: fc.oneof({ arbitrary: fc.constant(true), weight: 3 }, { arbitrary: fc.constant(false), weight: 1 }),
  })
  .map(({ depth, isObject, isMixed, isClosed }) => {
    const levels = Array.from({ length: depth }, (_, i) => (isMixed ? i % 2 === 0 : isObject));
    const open = levels.map((object) => (object ? '{"a":' : '[')).join('');
    const close = isClosed ? levels.map((object) => (object ? '}' : ']')).reverse().join('') : '';
    return new RawJson(`${open}1${close}`);
  });

/** Strings of any code points, lone surrogates included (JSON escapes them). */
export const anyString: fc.Arbitrary<string> = fc.oneof(fc.string({ unit: 'binary', maxLength: 12 }), fc.string({ unit: 'grapheme', maxLength: 12 }), fc.string({ maxLength: 12 }));

/** A JSON value of numbers of any size and arbitrary strings, 4 levels deep or, now and then, far deeper (deepJson). */
export const jsonValue: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', maxDepth: 4 },
    fc.constant(null),
    fc.boolean(),
    jsonNumber,
    fc.oneof({ arbitrary: anyString, weight: 9 }, { arbitrary: deepJson, weight: 1 }),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(anyString, tie('value'), { maxKeys: 4 }),
  ),
})).value;

/** JSON text of `value`: as JSON.stringify, with bigints digit for digit and bare NaN/Infinity, as tritonclient writes them. */
export function jsonText(value: unknown): string {
  switch (typeof value) {
    case 'number':
      if (Object.is(value, -0)) return '-0';
      return Number.isFinite(value) ? JSON.stringify(value) : Number.isNaN(value) ? 'NaN' : value > 0 ? 'Infinity' : '-Infinity';
    case 'bigint':
      return value.toString();
    case 'object': {
      if (value === null) return 'null';
      if (value instanceof RawJson) return value.text;
      if (Array.isArray(value)) return `[${value.map(jsonText).join(',')}]`;
      return `{${Object.entries(value)
        .filter(([, member]) => member !== undefined)
        .map(([key, member]) => `${JSON.stringify(key)}:${jsonText(member)}`)
        .join(',')}}`;
    }
    default:
      return JSON.stringify(value) ?? 'null';
  }
}

/** A tensor as the client library holds it: fixed-size data as the type's typed array, BYTES as byte strings. */
export interface GeneratedTensor {
  readonly name: string;
  readonly datatype: DataType;
  readonly shape: number[];
  readonly data: TensorData;
}

const utf8 = new TextEncoder();

/** `count` elements of a data type. BYTES as UTF-8 text when `isUtf8` (JSON carries only text), else any bytes. */
function tensorData(datatype: DataType, count: number, options: TensorOptions): fc.Arbitrary<TensorData> {
  const length = { minLength: count, maxLength: count };
  switch (datatype) {
    case 'BOOL':
      return fc.array(fc.constantFrom(0, 1), length).map((values) => Uint8Array.from(values));
    case 'UINT8':
      return fc.uint8Array(length);
    case 'INT8':
      return fc.int8Array(length);
    case 'UINT16':
    case 'FP16':
    case 'BF16':
      return fc.uint16Array(length);
    case 'INT16':
      return fc.int16Array(length);
    case 'UINT32':
      return fc.uint32Array(length);
    case 'INT32':
      return fc.int32Array(length);
    case 'UINT64':
      return fc.bigUint64Array(length);
    case 'INT64':
      return fc.bigInt64Array(length);
    case 'FP32':
      return fc.float32Array(length);
    case 'FP64':
      return fc.float64Array(length);
    case 'BYTES':
      return options.isUtf8
        ? fc.array(fc.string({ unit: 'grapheme', maxLength: 8 }).map((text) => utf8.encode(text)), length)
        : fc.array(fc.uint8Array({ maxLength: 8 }), length);
  }
}

export const dataType: fc.Arbitrary<DataType> = fc.constantFrom(...DATA_TYPE_NAMES);

export interface TensorOptions {
  /** BYTES elements as UTF-8 text, which JSON can carry. */
  readonly isUtf8: boolean;
  readonly dataTypes?: fc.Arbitrary<DataType>;
}

/** A tensor with a shape of rank 0 to 3 (each dimension 0 to 4) and data that matches it. */
export function tensor(name: string, options: TensorOptions): fc.Arbitrary<GeneratedTensor> {
  return fc
    .tuple(options.dataTypes ?? dataType, fc.array(fc.integer({ min: 0, max: 4 }), { maxLength: 3 }))
    .chain(([datatype, shape]) =>
      tensorData(datatype, shape.reduce((product, dim) => product * dim, 1), options).map((data) => ({ name, datatype, shape, data })),
    );
}

/** One to three tensors with distinct names (INPUT0, INPUT1, ...). */
export function tensors(options: TensorOptions): fc.Arbitrary<GeneratedTensor[]> {
  return fc.integer({ min: 1, max: 3 }).chain((count) => fc.tuple(...Array.from({ length: count }, (_, i) => tensor(`INPUT${i}`, options))));
}

/** Parameter values of every kind a request may carry (64-bit integers as bigints beyond 2^53). */
export const parameterValue: fc.Arbitrary<ParameterValue> = fc.oneof(
  fc.boolean(),
  fc.string({ unit: 'grapheme', maxLength: 8 }),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }).filter((value) => !Number.isInteger(value)),
  fc.bigInt({ min: -(2n ** 63n), max: 2n ** 64n - 1n }).filter((value) => value > BigInt(Number.MAX_SAFE_INTEGER) || value < BigInt(Number.MIN_SAFE_INTEGER)),
);

/** Parameter names that no codec treats specially. */
export const parameterKey: fc.Arbitrary<string> = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 8 }).filter(
  (key) => !key.startsWith('triton_') && !['binary_data_size', 'binary_data', 'binary_data_output', 'shared_memory_region', 'shared_memory_offset', 'shared_memory_byte_size', '__proto__'].includes(key),
);

export const parameters: fc.Arbitrary<Record<string, ParameterValue>> = fc.dictionary(parameterKey, parameterValue, { maxKeys: 3 }).map((entries) => ({ ...entries }));

/** A tensor's data as bytes, or BYTES as its elements' bytes: what two decodings of one tensor must share. */
export function comparableData(data: TensorData): unknown {
  return Array.isArray(data) ? data.map((element) => Buffer.from(element).toString('hex')) : Buffer.from(asBytes(data)).toString('hex');
}

/** Every path into a JSON value, the root ([]) first. */
export function jsonPaths(value: unknown, prefix: Array<string | number> = []): Array<Array<string | number>> {
  const paths = [prefix];
  if (Array.isArray(value)) value.forEach((item, i) => paths.push(...jsonPaths(item, [...prefix, i])));
  else if (typeof value === 'object' && value !== null && !(value instanceof RawJson)) for (const [key, item] of Object.entries(value)) paths.push(...jsonPaths(item, [...prefix, key]));
  return paths;
}

/** A change to one place of a JSON value: remove it, replace it, or wrap it in an array or object. */
export interface JsonMutation {
  readonly pathIndex: number;
  readonly kind: 'remove' | 'replace' | 'wrap-array' | 'wrap-object' | 'add-key';
  readonly value: unknown;
  readonly key: string;
}

export const jsonMutation: fc.Arbitrary<JsonMutation> = fc.record({
  pathIndex: fc.nat(),
  kind: fc.constantFrom('remove', 'replace', 'replace', 'wrap-array', 'wrap-object', 'add-key'),
  value: jsonValue,
  key: fc.oneof(fc.constantFrom('name', 'datatype', 'shape', 'data', 'parameters', 'inputs', 'outputs', 'id', 'binary_data_size', 'binary_data'), anyString),
});

/** `value` with `mutation` applied (a copy; the original is left as it was). */
export function mutateJson(value: unknown, mutation: JsonMutation): unknown {
  const paths = jsonPaths(value);
  const path = paths[mutation.pathIndex % paths.length]!;
  const change = (current: unknown): unknown => {
    switch (mutation.kind) {
      case 'replace':
        return mutation.value;
      case 'wrap-array':
        return [current];
      case 'wrap-object':
        return { [mutation.key]: current };
      case 'add-key':
        return typeof current === 'object' && current !== null && !Array.isArray(current) ? { ...current, [mutation.key]: mutation.value } : current;
      case 'remove':
        return undefined;
    }
  };
  const rebuild = (current: unknown, depth: number): unknown => {
    if (depth === path.length) return change(current);
    const step = path[depth]!;
    if (Array.isArray(current)) {
      const copy = [...current];
      const next = rebuild(copy[step as number], depth + 1);
      if (next === undefined) copy.splice(step as number, 1);
      else copy[step as number] = next;
      return copy;
    }
    const copy = { ...(current as Record<string, unknown>) };
    copy[step] = rebuild(copy[step], depth + 1);
    return copy;
  };
  return rebuild(value, 0);
}

/** A change to text or bytes: delete a range, insert bytes, duplicate a range, or move one. */
export interface ByteMutation {
  readonly kind: 'delete' | 'insert' | 'duplicate' | 'swap' | 'flip';
  readonly at: number;
  readonly length: number;
  readonly bytes: Uint8Array;
}

export const byteMutation: fc.Arbitrary<ByteMutation> = fc.record({
  kind: fc.constantFrom('delete', 'insert', 'duplicate', 'swap', 'flip'),
  at: fc.nat(),
  length: fc.integer({ min: 1, max: 16 }),
  bytes: fc.uint8Array({ minLength: 1, maxLength: 8 }),
});

/** `input` with each mutation applied in turn. */
export function mutateBytes(input: Uint8Array, mutations: readonly ByteMutation[]): Buffer {
  let bytes = Buffer.from(input);
  for (const mutation of mutations) {
    const at = bytes.byteLength === 0 ? 0 : mutation.at % bytes.byteLength;
    const end = Math.min(bytes.byteLength, at + mutation.length);
    const before = bytes.subarray(0, at);
    const range = bytes.subarray(at, end);
    const after = bytes.subarray(end);
    switch (mutation.kind) {
      case 'delete':
        bytes = Buffer.concat([before, after]);
        break;
      case 'insert':
        bytes = Buffer.concat([before, mutation.bytes, range, after]);
        break;
      case 'duplicate':
        bytes = Buffer.concat([before, range, range, after]);
        break;
      case 'swap':
        bytes = Buffer.concat([before, after.subarray(0, mutation.length), range, after.subarray(mutation.length)]);
        break;
      case 'flip':
        bytes = Buffer.from(bytes);
        if (bytes.byteLength > 0) bytes[at] = bytes[at]! ^ (mutation.bytes[0]! || 1);
        break;
    }
  }
  return bytes;
}
