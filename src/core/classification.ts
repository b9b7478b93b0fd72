import { NereidError } from '../kernel/errors.js';
import type { TensorSpec } from '../kernel/model-spec.js';
import type { FixedSizeArray } from '../protocol/tensor-data.js';
import type { Parameters } from '../protocol/parameters.js';
import type { Tensor } from '../kernel/tensor.js';

/**
 * Reads the classification extension's output parameter (`classification: k`), undefined when absent.
 * Triton docs/protocol/extension_classification.md.
 */
export function classificationCount(parameters: Parameters | undefined, outputName: string): number | undefined {
  const value = parameters?.classification;
  if (value === undefined) return undefined;
  const count = typeof value === 'bigint' ? Number(value) : value;
  if (typeof count !== 'number' || !Number.isSafeInteger(count) || count < 1) {
    throw new NereidError('INVALID_ARG', `output '${outputName}': parameter 'classification' must be a positive integer, got ${String(value)}`);
  }
  return count;
}

/** C++ std::to_string, which Triton uses for the value: six decimals for floats, digits for integers. */
function formatValue(value: number | bigint, isFloat: boolean): string {
  return typeof value === 'bigint' ? value.toString() : isFloat ? value.toFixed(6) : String(value);
}

/**
 * Replaces an output with its top `count` classes per batch item, as Triton's classification
 * extension does: a BYTES tensor of "<value>:<index>[:<label>]", highest value first, shape
 * [batch, min(count, classes)] for a batching model, else [min(count, classes)].
 */
export function classify(output: Tensor, count: number, spec: TensorSpec, isBatching: boolean): Tensor {
  if (output.dataType === 'BYTES' || output.dataType === 'BOOL' || output.dataType === 'FP16' || output.dataType === 'BF16') {
    throw new NereidError(
      'INVALID_ARG',
      `class result not available for output '${output.name}' due to unsupported type '${output.dataType}'; classification needs a numeric output`,
    );
  }
  const data = output.data as FixedSizeArray;
  const rows = isBatching ? (output.shape[0] ?? 1) : 1;
  const classes = rows === 0 ? 0 : data.length / rows;
  const top = Math.min(count, classes);
  const isFloat = output.dataType === 'FP32' || output.dataType === 'FP64';
  const elements: Uint8Array[] = [];
  for (let row = 0; row < rows; row++) {
    const values = Array.from(data.subarray(row * classes, (row + 1) * classes) as ArrayLike<number | bigint>);
    const order = values.map((_, index) => index).sort((a, b) => (values[b]! > values[a]! ? 1 : values[b]! < values[a]! ? -1 : a - b));
    for (const index of order.slice(0, top)) {
      const label = spec.labels?.[index];
      elements.push(Buffer.from(`${formatValue(values[index]!, isFloat)}:${index}${label !== undefined ? `:${label}` : ''}`));
    }
  }
  return { name: output.name, dataType: 'BYTES', shape: isBatching ? [rows, top] : [top], data: elements };
}
