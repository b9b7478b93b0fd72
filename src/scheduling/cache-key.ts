import { createHash } from 'node:crypto';
import type { InferRequest } from '../kernel/infer-request.js';
import type { ParameterValue } from '../protocol/parameters.js';
import { type BytesElements, type FixedSizeArray, asBytes } from '../protocol/tensor-data.js';

/** Request parameters that only steer scheduling, so requests differing in them share a response. */
const SCHEDULING_PARAMETERS: ReadonlySet<string> = new Set(['priority', 'timeout']);

const tagged = (value: ParameterValue): string => `${typeof value}:${String(value)}`;

/**
 * The response cache key of a request to one model version: a SHA-256 of the model name and version,
 * the load of that version (`loadId`), every input (sorted by name) with its data type, shape and
 * bytes, the outputs requested, and the request parameters other than priority and timeout.
 *
 * Triton hashes the model name, version and each input's name and bytes (core src/cache_manager.cc,
 * TritonCache::Hash) into 64 bits. Nereid adds what makes responses differ under equal bytes: the data
 * type and shape (an FP32 [2,2] and an FP32 [4] hold the same bytes), the requested outputs (a request
 * for OUTPUT0 alone is answered without OUTPUT1) and the parameters a model may read (a JavaScript or
 * Python model sees every request parameter); a 256-bit digest makes a collision, which Triton's docs
 * list as a known limitation, practically impossible. The load matters because a reload may keep the
 * version number with other files (POLL mode, the load API): the old load's entries are then never hit
 * again and age out of the cache (0 for a cache shared between servers, where loads cannot be told apart).
 */
export function responseCacheKey(request: InferRequest, version: number, loadId = 0): string {
  const inputs = [...request.inputs].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const hash = createHash('sha256');
  const outputs = request.outputs === undefined ? null : request.outputs.map((output) => output.name).sort();
  const parameters = Object.keys(request.parameters)
    .filter((key) => !SCHEDULING_PARAMETERS.has(key))
    .sort()
    .map((key) => [key, tagged(request.parameters[key]!)]);
  // The header fixes every boundary, byte lengths included, so no two requests can hash the same text.
  const header = inputs.map((input) => [
    input.name,
    input.dataType,
    input.shape,
    input.dataType === 'BYTES' ? (input.data as BytesElements).map((element) => element.byteLength) : (input.data as FixedSizeArray).byteLength,
  ]);
  hash.update(JSON.stringify([request.modelName, version, loadId, header, outputs, parameters]));
  for (const input of inputs) {
    if (input.dataType === 'BYTES') for (const element of input.data as BytesElements) hash.update(element);
    else hash.update(asBytes(input.data as FixedSizeArray));
  }
  return hash.digest('hex');
}
