import { isUtf8 } from 'node:buffer';
import type { Tensor as OrtTensor } from 'onnxruntime-node';
import type { DataType } from '../../protocol/data-type.js';
import { NereidError } from '../../kernel/errors.js';
import { forEachSliced } from '../../util/yield-slices.js';
import type { Tensor } from '../../kernel/tensor.js';

/** ONNX Runtime's element type for each data type it can hold; BF16 has none in onnxruntime-node. */
const ORT_TYPES: Partial<Record<DataType, OrtTensor.Type>> = {
  BOOL: 'bool',
  UINT8: 'uint8',
  UINT16: 'uint16',
  UINT32: 'uint32',
  UINT64: 'uint64',
  INT8: 'int8',
  INT16: 'int16',
  INT32: 'int32',
  INT64: 'int64',
  FP16: 'float16',
  FP32: 'float32',
  FP64: 'float64',
  BYTES: 'string',
};

const DATA_TYPES = new Map<string, DataType>(Object.entries(ORT_TYPES).map(([dataType, ort]) => [ort, dataType as DataType]));

export function ortTypeOf(dataType: DataType): OrtTensor.Type | undefined {
  return ORT_TYPES[dataType];
}

export function dataTypeOfOrt(type: string): DataType | undefined {
  return DATA_TYPES.get(type);
}

/**
 * Checks that a BYTES tensor can become ONNX Runtime strings (other tensors pass as they are).
 * NOTE: onnxruntime-node keeps strings as UTF-8 and cuts each at its first NUL byte, so elements
 * that are not UTF-8 or hold a NUL are refused rather than silently changed.
 */
export async function stringCheckedTensor(tensor: Tensor): Promise<Tensor> {
  if (!Array.isArray(tensor.data)) return tensor;
  const elements = tensor.data as Uint8Array[];
  await forEachSliced(elements.length, (index) => {
    const element = elements[index]!;
    if (element.byteLength === 0) return;
    if (element.includes(0)) {
      throw new NereidError('INVALID_ARG', `input '${tensor.name}': BYTES element ${index} holds a NUL byte, which ONNX Runtime string tensors cannot carry`);
    }
    if (!isUtf8(element)) {
      throw new NereidError('INVALID_ARG', `input '${tensor.name}': BYTES element ${index} is not valid UTF-8, which ONNX Runtime string tensors require`);
    }
  });
  return tensor;
}
