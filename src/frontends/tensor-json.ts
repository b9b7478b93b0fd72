import { BIG_INTEGER_RANGES, type DataType, INTEGER_RANGES } from '../protocol/data-type.js';
import { type BytesElements, type FixedSizeArray, type TensorData, allocateFixedSize } from '../protocol/tensor-data.js';
import { NereidError } from '../core/index.js';
import { type JsonValue, describeJson } from '../protocol/json-body.js';

/**
 * Converts the `data` of a JSON tensor (flat or nested, row major) to the data type's typed array,
 * checking the element count of fixed-size types against the shape and every value against the
 * type's range.
 */
export function tensorDataFromJson(name: string, dataType: DataType, count: number, data: JsonValue): TensorData {
  const flat = Array.isArray(data) ? flatten(data) : [data];
  // BYTES elements are counted against the shape by the core, in Triton's words (validate-request.ts).
  // The text is Triton's alone (ReadDataFromJson, src/http_server.cc): qa/L0_http greps the whole body
  // for it, so no hint may follow. Its status stays 400: a malformed request is no server error.
  if (flat.length !== count && dataType !== 'BYTES') throw new NereidError('INVALID_ARG', "Unable to parse 'data': Shape does not match true shape of 'data' field");
  const fail = (index: number, expected: string): never => {
    throw new NereidError('INVALID_ARG', `input '${name}': element ${index} is ${describeJson(flat[index])}, but ${dataType} data must be ${expected}`);
  };
  if (dataType === 'FP16' || dataType === 'BF16') {
    // Triton's sentence (http_server.cc ReadDataFromJson), then how.
    throw new NereidError(
      'INVALID_ARG',
      `receiving ${dataType} data via JSON is not supported. Please use the binary data format for input ${name} (its bytes after the JSON header, their count in parameters.binary_data_size)`,
    );
  }
  if (dataType === 'BYTES') {
    const elements: BytesElements = new Array(flat.length);
    for (let i = 0; i < flat.length; i++) {
      const value = flat[i];
      if (typeof value !== 'string') fail(i, 'strings');
      elements[i] = Buffer.from(value as string, 'utf8');
    }
    return elements;
  }
  const out = allocateFixedSize(dataType, count);
  if (dataType === 'BOOL') {
    for (let i = 0; i < count; i++) {
      const value = flat[i];
      if (typeof value !== 'boolean') fail(i, 'true or false');
      out[i] = value ? 1 : 0;
    }
    return out;
  }
  if (dataType === 'FP32' || dataType === 'FP64') {
    for (let i = 0; i < count; i++) {
      const value = flat[i];
      if (typeof value === 'number') out[i] = value;
      else if (typeof value === 'bigint') out[i] = Number(value);
      else fail(i, 'numbers');
    }
    return out;
  }
  const bigRange = BIG_INTEGER_RANGES[dataType];
  if (bigRange !== undefined) {
    const [min, max] = bigRange;
    const big = out as BigInt64Array | BigUint64Array;
    for (let i = 0; i < count; i++) {
      const value = flat[i];
      const asBig = typeof value === 'bigint' ? value : typeof value === 'number' && Number.isInteger(value) ? BigInt(value) : undefined;
      if (asBig === undefined || asBig < min || asBig > max) fail(i, `integers from ${min} to ${max}`);
      big[i] = asBig!;
    }
    return big;
  }
  const [min, max] = INTEGER_RANGES[dataType]!;
  const small = out as Exclude<FixedSizeArray, BigInt64Array | BigUint64Array>;
  for (let i = 0; i < count; i++) {
    const value = flat[i];
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) fail(i, `integers from ${min} to ${max}`);
    small[i] = value as number;
  }
  return small;
}

/** How deep a tensor's `data` arrays may nest, as Triton's ReadDataFromJson allows (qa/L0_http's test_json_recursion_depth_limit). */
const MAX_DATA_DEPTH = 100;

/**
 * The elements of nested `data` in row-major order; flat data as it is. Nested data is walked once,
 * without recursion, refusing more than MAX_DATA_DEPTH levels in Triton's words. NOTE: `flat(Infinity)`
 * copies through V8's generic path even when nothing is nested: on a 64-number request it was a
 * seventh of the main thread's work for a response cache hit (docs/benchmarks.md, "The response cache").
 */
function flatten(data: readonly JsonValue[]): readonly JsonValue[] {
  if (!data.some(Array.isArray)) return data;
  const elements: JsonValue[] = [];
  // Each open array with the index of its next element; the stack's length is the depth.
  const open: Array<{ readonly array: readonly JsonValue[]; next: number }> = [{ array: data, next: 0 }];
  while (open.length > 0) {
    const top = open[open.length - 1]!;
    if (top.next === top.array.length) {
      open.pop();
      continue;
    }
    const element = top.array[top.next++]!;
    if (!Array.isArray(element)) elements.push(element);
    else if (open.length === MAX_DATA_DEPTH) throw new NereidError('INVALID_ARG', `JSON nesting depth exceeds maximum allowed limit (${MAX_DATA_DEPTH})`);
    else open.push({ array: element, next: 0 });
  }
  return elements;
}

function formatFloat(value: number): string {
  // Python's json module (tritonclient) reads these bare tokens; JSON itself has no spelling for them.
  // String(-0) is '0': the sign of a negative zero would be lost. '-0.0' keeps it for Python's json too.
  if (Object.is(value, -0)) return '-0.0';
  if (Number.isFinite(value)) return String(value);
  return Number.isNaN(value) ? 'NaN' : value > 0 ? 'Infinity' : '-Infinity';
}

/**
 * Writes tensor data as a flat JSON array. INT64/UINT64 are written digit for digit (never through a
 * double), so values beyond 2^53 arrive unchanged.
 */
export function tensorDataToJson(name: string, dataType: DataType, data: TensorData): string {
  if (Array.isArray(data)) {
    return `[${(data as BytesElements).map((element) => JSON.stringify(Buffer.from(element.buffer, element.byteOffset, element.byteLength).toString('utf8'))).join(',')}]`;
  }
  switch (dataType) {
    case 'FP16':
    case 'BF16':
      // Triton's sentence (http_server.cc WriteDataToJson): it answers no FP16 or BF16 as JSON numbers either.
      throw new NereidError(
        'INVALID_ARG',
        `sending ${dataType} data via JSON is not supported. Please use the binary data format for output (output '${name}': ask for it with the output parameter "binary_data": true, or with "binary_data_output": true for every output)`,
      );
    case 'BOOL':
      return `[${Array.from(data as Uint8Array, (value) => (value !== 0 ? 'true' : 'false')).join(',')}]`;
    case 'FP32':
    case 'FP64':
      return `[${Array.from(data as Float32Array, formatFloat).join(',')}]`;
    default:
      return `[${(data as Int32Array).join(',')}]`;
  }
}
