/**
 * Main-thread conversions between core tensors and the tensors that cross to a JavaScript model's
 * worker. What comes back from a model's code is checked here before any client sees it.
 */
import { NereidError } from '../../core/errors.js';
import type { ModelSpec } from '../../core/model-spec.js';
import { type BytesElements, type FixedSizeArray, elementCount, fixedSizeArrayType } from '../../protocol/tensor-data.js';
import type { Tensor } from '../../core/tensor.js';
import type { WireTensor } from './js-messages.js';

/**
 * A tensor as it crosses to a worker: a compact copy of its elements (the original may be a view
 * into a larger request body, which cloning would copy whole); fixed-size data is listed in
 * `transfer` to move it rather than copy it again.
 */
export function toWire(tensor: Tensor, transfer: ArrayBuffer[]): WireTensor {
  if (tensor.dataType === 'BYTES') {
    // Elements are cloned, not transferred: an empty one may share its buffer with others.
    const elements = (tensor.data as BytesElements).map((element) => element.slice());
    return { name: tensor.name, datatype: 'BYTES', shape: tensor.shape, data: elements };
  }
  const data = (tensor.data as FixedSizeArray).slice();
  // An empty array's buffer may be shared, and a transfer list must not name a buffer twice.
  if (data.byteLength > 0) transfer.push(data.buffer as ArrayBuffer);
  return { name: tensor.name, datatype: tensor.dataType, shape: tensor.shape, data };
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

/**
 * A model's outputs for one request, checked against its configuration: declared names and data
 * types, shapes matching the dims. With `requested`, only those outputs, every one of them present.
 */
export function checkOutputs(spec: ModelSpec, wires: readonly WireTensor[], requested: readonly string[] | undefined): Tensor[] {
  const byName = new Map<string, Tensor>();
  for (const wire of wires) {
    const outputSpec = spec.outputByName.get(wire.name);
    const what = `model '${spec.name}' output '${wire.name}'`;
    if (outputSpec === undefined) {
      throw new NereidError('INTERNAL', `model '${spec.name}' returned output '${wire.name}', which its configuration does not declare (outputs: ${spec.outputs.map((o) => `'${o.name}'`).join(', ')})`);
    }
    if (wire.datatype !== outputSpec.dataType) {
      throw new NereidError('INTERNAL', `${what} is ${wire.datatype}, but the configuration declares ${outputSpec.dataType}`);
    }
    const tensor = fromWire(wire, what);
    const dims = spec.maxBatchSize > 0 ? [-1, ...outputSpec.dims] : outputSpec.dims;
    if (tensor.shape.length !== dims.length || dims.some((dim, index) => dim !== -1 && dim !== tensor.shape[index])) {
      throw new NereidError('INTERNAL', `${what} has shape [${tensor.shape.join(',')}], but the configuration expects [${dims.join(',')}]`);
    }
    byName.set(wire.name, tensor);
  }
  if (requested === undefined) return [...byName.values()];
  return requested.map((name) => {
    const tensor = byName.get(name);
    if (tensor === undefined) throw new NereidError('INTERNAL', `model '${spec.name}' did not return the requested output '${name}'`);
    return tensor;
  });
}
