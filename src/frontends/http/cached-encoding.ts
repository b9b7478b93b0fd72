import type { InferRequest, InferResponse, ResponseMemo } from '../../core/index.js';
import type { RequestRegions } from '../shared-memory/tensor-regions.js';
import { type EncodedResponse, type OutputEncoding, encodeInferResponse, encodeInferResponseNow, responseHeadJson, responseIdJson } from './infer-codec.js';

/** A cached response encoded for one output format, cut where the request id goes. */
interface EncodedForm {
  /** `{"model_name":…,"model_version":…` */
  readonly head: Buffer;
  /** From the response parameters to the end of the JSON. */
  readonly tail: Buffer;
  /** The binary outputs, views of the cache entry's tensors; empty when every output is in the JSON. */
  readonly binary: readonly Uint8Array[];
}

/**
 * Above this many bytes of JSON a form is not kept: the cache counts only its tensors' bytes (as
 * Triton's does), and a large tensor's JSON text can be several times their size. Binary outputs
 * cost nothing to keep (views of the entry's tensors).
 */
const MAX_KEPT_JSON_BYTES = 64 * 1024;

/**
 * What shapes the encoding of a response besides the entry: every output's binary or JSON form and
 * its classification (the router classifies the entry's outputs the same way each time), in order.
 */
function formatOf(request: InferRequest, encoding: OutputEncoding): string {
  let format = encoding.isBinaryByDefault ? 'http:b' : 'http:j';
  for (const output of request.outputs ?? []) {
    const classification = output.parameters?.classification;
    format += `\u0000${output.name}\u0001${String(encoding.isBinaryByOutput.get(output.name))}\u0001${classification === undefined ? '' : String(classification)}`;
  }
  return format;
}

function chunksOf(form: EncodedForm, id: string): EncodedResponse {
  const json = id === '' ? [form.head, form.tail] : [form.head, Buffer.from(responseIdJson(id)), form.tail];
  const jsonBytes = json.reduce((sum, chunk) => sum + chunk.byteLength, 0);
  return { headerLength: form.binary.length > 0 ? jsonBytes : undefined, chunks: [...json, ...form.binary] };
}

/**
 * Encodes an inference response as encodeInferResponse does; a response from the cache (its memo set)
 * is encoded once per output format and later hits reuse the bytes with their own id, skipping the
 * outputs' JSON encoding. Outputs written to shared memory are encoded every time.
 */
export async function encodeResponse(response: InferResponse, request: InferRequest, encoding: OutputEncoding, regions?: RequestRegions): Promise<EncodedResponse> {
  const { memo } = response;
  if (memo === undefined || regions?.hasOutputs === true) return encodeInferResponse(response, encoding, regions);
  const format = formatOf(request, encoding);
  const kept = memo.get(format) as EncodedForm | undefined;
  if (kept !== undefined) return chunksOf(kept, response.id);
  return keep(memo, format, response, await encodeInferResponse({ ...response, id: '' }, encoding, regions));
}

/**
 * encodeResponse in this step, for a response with nothing to write into shared memory whose outputs
 * encode without yielding (encodeInferResponseNow); undefined for any other.
 */
export function encodeResponseNow(response: InferResponse, request: InferRequest, encoding: OutputEncoding, regions?: RequestRegions): EncodedResponse | undefined {
  const { memo } = response;
  if (memo === undefined || regions?.hasOutputs === true) return encodeInferResponseNow(response, encoding, regions);
  const format = formatOf(request, encoding);
  const kept = memo.get(format) as EncodedForm | undefined;
  if (kept !== undefined) return chunksOf(kept, response.id);
  const encoded = encodeInferResponseNow({ ...response, id: '' }, encoding, regions);
  return encoded === undefined ? undefined : keep(memo, format, response, encoded);
}

/** Cuts a response encoded without its id into its form, kept in the memo when small enough, and answers with its id. */
function keep(memo: ResponseMemo, format: string, response: InferResponse, encoded: EncodedResponse): EncodedResponse {
  const [json, ...binary] = encoded.chunks as [Buffer, ...Uint8Array[]];
  const headBytes = Buffer.byteLength(responseHeadJson(response));
  const form: EncodedForm = { head: json.subarray(0, headBytes), tail: json.subarray(headBytes), binary };
  if (json.byteLength <= MAX_KEPT_JSON_BYTES) memo.set(format, form);
  return chunksOf(form, response.id);
}
