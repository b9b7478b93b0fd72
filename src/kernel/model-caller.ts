import type { NereidError } from './errors.js';
import type { InferRequest, InferResponse } from './infer-request.js';

/**
 * Runs requests on loaded models from inside the server: ensembles and models that call other models
 * (Triton's Business Logic Scripting). Calls are validated and go through the target model's
 * scheduler, so they batch with everyone else's requests; no protocol is involved.
 */
export interface ModelCaller {
  /** One request, one response; a decoupled target is refused (use `inferStream`). */
  infer(request: InferRequest): Promise<InferResponse>;
  /**
   * Every response of the request as it comes: one for an ordinary model, zero or more for a
   * decoupled one, whose responses may be errors that fail themselves alone. Resolves once the last
   * has been delivered; rejects with the request's error.
   * `onAccepted` is called once the request is validated and goes to its model: an error before it
   * refused the request, one after it ended the request's responses.
   */
  inferStream(request: InferRequest, onResponse: (response: InferResponse | NereidError) => void, onAccepted?: () => void): Promise<void>;
}
