import type { InferResponse } from '../../core/index.js';
import type { Parameters } from '../../protocol/parameters.js';
import type { OutputEncoding } from './request-header.js';

/** The fields a response's JSON header was made from, when every output went as binary data (its data is not kept). */
interface Remembered {
  readonly modelName: string;
  readonly modelVersion: string;
  readonly id: string;
  readonly outputs: ReadonlyArray<{ readonly name: string; readonly dataType: string; readonly shape: readonly number[] }>;
  readonly byteLengths: readonly number[];
  readonly json: Buffer;
}

/**
 * The last JSON header encoded for each request header's output encoding (request-header.ts shares one
 * per distinct header text). NOTE: a client that repeats a request gets a response of the same model,
 * id, outputs and shapes, so its JSON is the same bytes; comparing those few fields costs less than
 * writing the JSON again (docs/benchmarks.md, "The hot path").
 */
const remembered = new WeakMap<OutputEncoding, Remembered>();

const isEmpty = (parameters: Parameters | undefined): boolean => {
  if (parameters === undefined) return true;
  for (const key in parameters) if (Object.hasOwn(parameters, key)) return false;
  return true;
};

function isSameHead(previous: Remembered, response: InferResponse, byteLengths: readonly number[]): boolean {
  if (previous.modelName !== response.modelName || previous.modelVersion !== response.modelVersion || previous.id !== response.id) return false;
  if (!isEmpty(response.parameters) || previous.outputs.length !== response.outputs.length) return false;
  for (let index = 0; index < response.outputs.length; index++) {
    const output = response.outputs[index]!;
    const earlier = previous.outputs[index]!;
    if (output.name !== earlier.name || output.dataType !== earlier.dataType || !isEmpty(output.parameters)) return false;
    if (byteLengths[index] !== previous.byteLengths[index] || output.shape.length !== earlier.shape.length) return false;
    for (let dim = 0; dim < output.shape.length; dim++) if (output.shape[dim] !== earlier.shape[dim]) return false;
  }
  return true;
}

/**
 * The JSON header of a response whose outputs all go as binary data (`byteLengths`, in output order):
 * the one last made for a request with the same encoding when the response matches it field by field,
 * otherwise `build()`'s, remembered. The buffer is shared: nobody may write into it.
 */
export function binaryResponseJson(response: InferResponse, encoding: OutputEncoding, byteLengths: readonly number[], build: () => Buffer): Buffer {
  const previous = remembered.get(encoding);
  if (previous !== undefined && isSameHead(previous, response, byteLengths)) return previous.json;
  const json = build();
  if (isEmpty(response.parameters) && response.outputs.every((output) => isEmpty(output.parameters))) {
    const outputs = response.outputs.map(({ name, dataType, shape }) => ({ name, dataType, shape: [...shape] }));
    remembered.set(encoding, { modelName: response.modelName, modelVersion: response.modelVersion, id: response.id, outputs, byteLengths: [...byteLengths], json });
  }
  return json;
}
