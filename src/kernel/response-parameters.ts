import type { Parameters } from '../protocol/parameters.js';
import type { Tensor } from './tensor.js';

/*
 * Response parameters a model sets (Triton's TRITONBACKEND_ResponseSet*Parameter; in Python,
 * `pb_utils.InferenceResponse(parameters=...)`), carried with the outputs of that response.
 *
 * NOTE: the schedulers hand a request's outputs on as the one array the backend made (settle,
 * onResponse), so the parameters ride on that array's identity rather than widening every
 * scheduler's result type; the router reads them back when it builds the InferResponse. An array
 * that is copied on the way (the response cache stores tensors, not arrays) loses them.
 */
const PARAMETERS = new WeakMap<readonly Tensor[], Parameters>();

/** `outputs`, marked with the response parameters the model set for them (none: left unmarked). */
export function withResponseParameters(outputs: readonly Tensor[], parameters: Parameters): readonly Tensor[] {
  if (Object.keys(parameters).length > 0) PARAMETERS.set(outputs, parameters);
  return outputs;
}

/** The response parameters the model set for these outputs; {} when it set none. */
export function responseParametersOf(outputs: readonly Tensor[]): Parameters {
  return PARAMETERS.get(outputs) ?? {};
}
