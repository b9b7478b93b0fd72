import { createHash } from 'node:crypto';
import type { InferRequest } from '../kernel/infer-request.js';
import type { Tensor } from '../kernel/tensor.js';
import { type BytesElements, type FixedSizeArray, asBytes } from '../protocol/tensor-data.js';

/** Request parameters that only steer scheduling, so requests differing in them share a response. */
const SCHEDULING_PARAMETERS: ReadonlySet<string> = new Set(['priority', 'timeout']);

/**
 * Requests with at most this many bytes of input data get their exact key (below) in a local cache.
 * NOTE: a `createHash` digest cost 7.4–9.5 µs per key on this project's loaded machine whatever the
 * algorithm (set-up and digest dominate: sha1 and md5 cost as much as sha256), the exact key 0.9 µs
 * (docs/benchmarks.md); above this size the exact key would hold more memory than the entry it names.
 */
const MAX_EXACT_INPUT_BYTES = 512;

export interface ResponseCacheKeyOptions {
  /** The model's key: its name, or with `--model-namespacing` `<namespace>::<name>` (kernel/model-id.ts), whatever name the request used. */
  readonly model: string;
  readonly version: number;
  /** Tells this load of the version from earlier ones with the same number; 0 for a shared cache. */
  readonly loadId: number;
  /** A cache other servers read (Redis): its keys are always digests, of a fixed size. */
  readonly isShared: boolean;
}

const byName = (a: Tensor, b: Tensor): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** The bytes of an input's data, one view per element for BYTES. */
function* dataOf(input: Tensor): Iterable<Uint8Array> {
  if (input.dataType === 'BYTES') yield* input.data as BytesElements;
  else yield asBytes(input.data as FixedSizeArray);
}

/**
 * The response cache key of a request to one model version: the model's key and version, the load of
 * that version (`loadId`), every input (sorted by name) with its data type, shape and bytes, the
 * outputs requested (in order: a hit answers them in the order of the miss it repeats), and the
 * request parameters other than priority and timeout.
 *
 * Triton hashes the model name, version and each input's name and bytes (core src/cache_manager.cc,
 * TritonCache::Hash) into 64 bits. Nereid adds what makes responses differ under equal bytes: the data
 * type and shape (an FP32 [2,2] and an FP32 [4] hold the same bytes), the requested outputs (a request
 * for OUTPUT0 alone is answered without OUTPUT1) and the parameters a model may read (a JavaScript or
 * Python model sees every request parameter). The key is that text itself, the input bytes as Latin-1
 * (one character a byte), when the inputs are small and the cache local: no two requests share a
 * key. Otherwise it is the SHA-256 of that text, which makes a collision (Triton's docs list one as a
 * known limitation) practically impossible. The load matters because a reload may keep the version
 * number with other files (POLL mode, the load API): the old load's entries are then never hit again
 * and age out of the cache (0 for a cache shared between servers, where loads cannot be told apart).
 */
export function responseCacheKey(request: InferRequest, { model, version, loadId, isShared }: ResponseCacheKeyOptions): string {
  const inputs = request.inputs.length > 1 ? [...request.inputs].sort(byName) : request.inputs;
  // Strings are JSON-quoted and every length written, so the text fixes every boundary.
  let header = `${JSON.stringify(model)}:${version}:${loadId}`;
  let dataBytes = 0;
  for (const input of inputs) {
    header += `|${JSON.stringify(input.name)}:${input.dataType}:${input.shape.join(',')}:`;
    for (const bytes of dataOf(input)) {
      header += `${bytes.byteLength},`;
      dataBytes += bytes.byteLength;
    }
  }
  header += '|';
  for (const output of request.outputs ?? []) header += `${JSON.stringify(output.name)},`;
  header += '|';
  const names = Object.keys(request.parameters);
  if (names.length > 1) names.sort();
  for (const name of names) {
    if (SCHEDULING_PARAMETERS.has(name)) continue;
    const value = request.parameters[name]!;
    header += `${JSON.stringify(name)}:${typeof value}:${JSON.stringify(String(value))},`;
  }
  header += '|';
  if (!isShared && dataBytes <= MAX_EXACT_INPUT_BYTES) {
    let key = header;
    for (const input of inputs) for (const bytes of dataOf(input)) key += Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
    return key;
  }
  const hash = createHash('sha256');
  hash.update(header);
  for (const input of inputs) for (const bytes of dataOf(input)) hash.update(bytes);
  return hash.digest('hex');
}
