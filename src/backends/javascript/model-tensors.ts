/**
 * Worker-side conversions between the tensors a JavaScript model sees (strings for BYTES, plain
 * arrays accepted for outputs) and the tensors that cross threads.
 */
import { type DataType, isDataType } from '../../protocol/data-type.js';
import { fixedSizeArrayType } from '../../protocol/tensor-data.js';
import type { WireTensor } from './js-messages.js';
import type { ModelTensor, OutputTensor } from './model-api.js';

const decoder = new TextDecoder();
const encoder = new TextEncoder();

export function toModelTensor(wire: WireTensor): ModelTensor {
  if (wire.datatype !== 'BYTES') return { name: wire.name, datatype: wire.datatype, shape: wire.shape, data: wire.data as ArrayBufferView };
  const bytes = wire.data as readonly Uint8Array[];
  return { name: wire.name, datatype: 'BYTES', shape: wire.shape, data: bytes.map((element) => decoder.decode(element)), bytes };
}

function bytesElement(value: unknown, name: string): Uint8Array {
  if (typeof value === 'string') return encoder.encode(value);
  if (value instanceof Uint8Array) return value.slice();
  throw new TypeError(`tensor '${name}' is BYTES, so its elements must be strings or Uint8Arrays, got ${typeof value}`);
}

function numericElement(value: unknown, dataType: DataType, name: string): number | bigint {
  const isBig = dataType === 'INT64' || dataType === 'UINT64';
  if (typeof value === 'boolean') return isBig ? BigInt(value) : Number(value);
  if (typeof value === 'bigint') return isBig ? value : Number(value);
  if (typeof value === 'number') {
    if (!isBig) return value;
    if (Number.isInteger(value)) return BigInt(value);
  }
  throw new TypeError(`tensor '${name}' is ${dataType}, so its elements must be ${isBig ? 'integers or bigints' : 'numbers'}, got ${String(value)}`);
}

/** An output as it crosses to the main thread: always a fresh array the model no longer holds. */
export function fromOutputTensor(tensor: OutputTensor): { wire: WireTensor; transfer: ArrayBuffer[] } {
  const { name, datatype, shape } = tensor;
  if (typeof name !== 'string' || !isDataType(datatype) || !Array.isArray(shape)) {
    throw new TypeError(`an output must be { name, datatype, shape, data } with a KServe data type such as 'FP32', got ${JSON.stringify({ name, datatype, shape })}`);
  }
  const values = tensor.data;
  if (values === null || typeof values !== 'object' || !('length' in values || ArrayBuffer.isView(values))) {
    throw new TypeError(`output '${name}': data must be an array or a typed array`);
  }
  if (datatype === 'BYTES') {
    const elements = Array.from(values as ArrayLike<unknown>, (value) => bytesElement(value, name));
    return { wire: { name, datatype, shape, data: elements }, transfer: [] };
  }
  const Ctor = fixedSizeArrayType(datatype);
  if ((datatype === 'FP16' || datatype === 'BF16') && !(values instanceof Uint16Array)) {
    throw new TypeError(`output '${name}' is ${datatype}: give its raw 16-bit patterns as a Uint16Array`);
  }
  const data =
    values instanceof Ctor
      ? values.slice()
      : Ctor.from(Array.from(values as ArrayLike<unknown>, (value) => numericElement(value, datatype, name)) as Iterable<number & bigint>);
  // An empty array's buffer may be shared, and a transfer list must not name a buffer twice.
  return { wire: { name, datatype, shape, data }, transfer: data.byteLength > 0 ? [data.buffer as ArrayBuffer] : [] };
}
