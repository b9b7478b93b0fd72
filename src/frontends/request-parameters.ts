import { NereidError } from '../core/index.js';
import type { Parameters } from '../protocol/parameters.js';

/** The request parameters starting with `triton_` that a client may set (Triton's TRITON_RESERVED_REQUEST_PARAMS). */
const TRITON_RESERVED_REQUEST_PARAMETERS = ['triton_enable_empty_final_response'] as const;

/**
 * Checks the parameters of a request, of its inputs and of its requested outputs, the same way for
 * every protocol, so that HTTP and gRPC refuse the same requests: keys starting with `triton_` other
 * than Triton's reserved ones (Triton's text, src/grpc/infer_handler.cc SetInferenceRequestMetadata),
 * and shared memory, which this server does not implement.
 */
export function checkRequestParameters(request: {
  readonly parameters: Parameters;
  readonly inputs: ReadonlyArray<{ readonly name: string; readonly parameters?: Parameters }>;
  readonly outputs?: ReadonlyArray<{ readonly name: string; readonly parameters?: Parameters }>;
}): void {
  const reserved = Object.keys(request.parameters).find(
    (key) => key.startsWith('triton_') && !(TRITON_RESERVED_REQUEST_PARAMETERS as readonly string[]).includes(key),
  );
  if (reserved !== undefined) {
    throw new NereidError(
      'INVALID_ARG',
      `parameter keys starting with 'triton_' are reserved for Triton usage. Only the following keys starting with 'triton_' are allowed: ${TRITON_RESERVED_REQUEST_PARAMETERS.join(' ')} (request parameter '${reserved}')`,
    );
  }
  for (const input of request.inputs) checkTensorParameters('input', input.name, input.parameters ?? {});
  for (const output of request.outputs ?? []) checkTensorParameters('output', output.name, output.parameters ?? {});
}

/** The tensor half of checkRequestParameters, for a codec to call before it reads the tensor's data. */
export function checkTensorParameters(kind: 'input' | 'output', name: string, parameters: Parameters): void {
  if (parameters.shared_memory_region !== undefined) {
    throw new NereidError(
      'UNSUPPORTED',
      `${kind} '${name}': shared memory (parameter 'shared_memory_region') is not supported by this server; send the tensor in the request body`,
    );
  }
}
