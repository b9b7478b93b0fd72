import type { InferRequest, InferResponse } from '../../core/index.js';
import type { ModelInferResponse } from '../../protocol/gen/grpc_service_pb.js';
import type { RequestRegions } from '../shared-memory/tensor-regions.js';
import { encodeModelInferResponse } from './infer-codec.js';

/** What shapes the message besides the entry: each requested output's classification (outputs are always raw bytes). */
function formatOf(request: InferRequest): string {
  let format = 'grpc';
  for (const output of request.outputs ?? []) {
    const classification = output.parameters?.classification;
    format += `\u0000${output.name}\u0001${classification === undefined ? '' : String(classification)}`;
  }
  return format;
}

/**
 * Encodes a ModelInferResponse as encodeModelInferResponse does; a response from the cache (its memo
 * set) is built once per format and later hits reuse the message with their own id (its raw output
 * contents are views of the entry's tensors). Outputs written to shared memory are encoded every time.
 */
export async function encodeResponseMessage(response: InferResponse, request: InferRequest, regions?: RequestRegions): Promise<ModelInferResponse> {
  const { memo } = response;
  if (memo === undefined || regions?.hasOutputs === true) return encodeModelInferResponse(response, regions);
  const format = formatOf(request);
  const kept = memo.get(format) as ModelInferResponse | undefined;
  if (kept !== undefined) return kept.id === response.id ? kept : { ...kept, id: response.id };
  const message = await encodeModelInferResponse(response, regions);
  memo.set(format, message);
  return message;
}
