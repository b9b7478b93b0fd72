/**
 * Main-thread conversions between core tensors and the tensors that cross to a JavaScript model's
 * worker. What comes back from a model's code is checked to be a tensor here, and against the
 * configuration in tensor-io.ts, before any client sees it.
 */
import { NereidError } from '../../kernel/errors.js';
import { type BytesElements, type FixedSizeArray, elementCount, fixedSizeArrayType } from '../../protocol/tensor-data.js';
import type { Tensor } from '../../kernel/tensor.js';
import type { WireTensor } from './js-messages.js';

/**
 * A tensor as it crosses to a worker, in `shape` (the config `reshape` applied): a compact copy of its
 * elements (the original may be a view into a larger request body, which cloning would copy whole);
 * fixed-size data is listed in `transfer` to move it rather than copy it again.
 */
export function toWire(tensor: Tensor, transfer: ArrayBuffer[], shape: readonly number[] = tensor.shape): WireTensor {
  if (tensor.dataType === 'BYTES') {
    // Elements are cloned, not transferred: an empty one may share its buffer with others.
    const elements = (tensor.data as BytesElements).map((element) => element.slice());
    return { name: tensor.name, datatype: 'BYTES', shape, data: elements };
  }
  const data = (tensor.data as FixedSizeArray).slice();
  // An empty array's buffer may be shared, and a transfer list must not name a buffer twice.
  if (data.byteLength > 0) transfer.push(data.buffer as ArrayBuffer);
  return { name: tensor.name, datatype: tensor.dataType, shape, data };
}

/** A tensor from a worker, checked to hold what its data type and shape promise. */
export function fromWire(wire: WireTensor, what: string): Tensor {
  const count = elementCount(wire.shape);
  if (!Array.isArray(wire.shape) || wire.shape.some((dim) => !Number.isSafeInteger(dim) || dim < 0)) {
    throw new NereidError('INTERNAL', `${what} has shape ${JSON.stringify(wire.shape)}; expected non-negative integer dimensions`);
  }
  if (wire.datatype === 'BYTES') {
    const elements = wire.data as readonly Uint8Array[];
    if (elements.length !== count) {
      throw new NereidError('INTERNAL', `${what} has shape [${wire.shape.join(',')}], which holds ${count} elements, but ${elements.length} were given`);
    }
    return { name: wire.name, dataType: 'BYTES', shape: wire.shape, data: [...elements] };
  }
  const Ctor = fixedSizeArrayType(wire.datatype);
  const data = wire.data as FixedSizeArray;
  if (!(data instanceof Ctor)) throw new NereidError('INTERNAL', `${what} is ${wire.datatype} but its data is not a ${Ctor.name}`);
  if (data.length !== count) {
    throw new NereidError('INTERNAL', `${what} has shape [${wire.shape.join(',')}], which holds ${count} elements, but ${data.length} were given`);
  }
  return { name: wire.name, dataType: wire.datatype, shape: wire.shape, data };
}
