import { type DataType, dataTypeByteSize } from '../protocol/data-type.js';
import { type CutElement, NereidError, type Tensor, deserializeBytesSliced, serializeBytesSliced } from '../core/index.js';
import { asBytes, elementCount, viewFixedSize } from '../protocol/tensor-data.js';

/** How a protocol names the bytes it carries a tensor in, for error messages. */
export interface BytesSource {
  /** Completes "... needs N bytes, but ", e.g. "binary_data_size is" or "its raw_input_contents holds". */
  readonly sizePhrase: string;
}

/**
 * A tensor's data from its raw little-endian bytes, as the binary data extension, gRPC raw contents
 * and shared memory carry it: fixed-size types as a view of the bytes (a copy only when misaligned),
 * checked against the shape; BYTES split by their 4-byte length prefixes (yielding to the event loop
 * between slices of elements). BYTES bytes that end inside an element are noted in `cutInputs` under
 * the input's name: the core checks the elements against the shape, that cut included, in Triton's
 * words and order (validate-request.ts, InferRequest.cutBytesInputs).
 */
export async function tensorDataFromBytes(
  name: string,
  dataType: DataType,
  shape: readonly number[],
  bytes: Uint8Array,
  source: BytesSource,
  request: RequestOf,
  cutInputs: Map<string, CutElement>,
): Promise<Tensor['data']> {
  if (dataType === 'BYTES') {
    const { elements, cut } = await deserializeBytesSliced(bytes);
    if (cut !== undefined) cutInputs.set(name, cut);
    return elements;
  }
  return fixedSizeDataFromBytes(name, dataType, shape, bytes, source, request);
}

/** The request a tensor belongs to, as its byte size error names it. */
export interface RequestOf {
  readonly modelName: string;
  /** The request's id, '' for none. */
  readonly id: string;
}

/**
 * tensorDataFromBytes for a fixed-size type, in the same step (no microtask turn on the hot path). A
 * byte size that does not match the shape fails with the text of Triton's core (InferenceRequest's
 * input validation, which qa/L0_input_validation and qa/L0_shared_memory compare), then what the
 * shape needs and where the bytes came from.
 */
export function fixedSizeDataFromBytes(
  name: string,
  dataType: Exclude<DataType, 'BYTES'>,
  shape: readonly number[],
  bytes: Uint8Array,
  source: BytesSource,
  request: RequestOf,
): Tensor['data'] {
  const expected = elementCount(shape) * dataTypeByteSize(dataType);
  if (bytes.byteLength !== expected) throw byteSizeMismatch(name, dataType, shape, expected, bytes.byteLength, `${source.sizePhrase} ${bytes.byteLength}`, request);
  return viewFixedSize(dataType, bytes);
}

/** Triton's core text for data whose byte size does not fit the shape, then what the shape needs and what came. */
export function byteSizeMismatch(name: string, dataType: DataType, shape: readonly number[], expected: number, actual: number, what: string, request: RequestOf): NereidError {
  return new NereidError(
    'INVALID_ARG',
    `${request.id !== '' ? `[request id: ${request.id}] ` : ''}input byte size mismatch for input '${name}' for model '${request.modelName}'. Expected ${expected}, got ${actual} (shape [${shape.join(',')}] of ${dataType}; ${what})`,
  );
}

/**
 * A tensor's raw little-endian bytes, the reverse of `tensorDataFromBytes`: fixed-size types as a view of
 * their data, BYTES serialized with 4-byte length prefixes (yielding between slices of elements).
 */
export async function tensorBytes(data: Tensor['data']): Promise<Uint8Array> {
  return Array.isArray(data) ? serializeBytesSliced(data) : asBytes(data as Exclude<Tensor['data'], Uint8Array[]>);
}
