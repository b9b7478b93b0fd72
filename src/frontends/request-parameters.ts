import { NereidError } from '../core/index.js';
import type { Parameters } from '../protocol/parameters.js';

/** The request parameters starting with `triton_` that a client may set (Triton's TRITON_RESERVED_REQUEST_PARAMS). */
const TRITON_RESERVED_REQUEST_PARAMETERS = ['triton_enable_empty_final_response'] as const;

/**
 * Checks the parameters of a request the same way for every protocol, so that HTTP and gRPC refuse the
 * same requests: keys starting with `triton_` other than Triton's reserved ones (Triton's text,
 * src/grpc/infer_handler.cc SetInferenceRequestMetadata).
 */
export function checkRequestParameters(request: { readonly parameters: Parameters }): void {
  for (const key of Object.keys(request.parameters)) checkRequestParameterKey(key);
}

/** checkRequestParameters for one key, for a front end that reads a request's parameters one by one. */
export function checkRequestParameterKey(key: string): void {
  if (key.startsWith('triton_') && !(TRITON_RESERVED_REQUEST_PARAMETERS as readonly string[]).includes(key)) {
    throw new NereidError(
      'INVALID_ARG',
      `parameter keys starting with 'triton_' are reserved for Triton usage. Only the following keys starting with 'triton_' are allowed: ${TRITON_RESERVED_REQUEST_PARAMETERS.join(' ')} (request parameter '${key}')`,
    );
  }
}
