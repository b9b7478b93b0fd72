import assert from 'node:assert/strict';
import { type InferResponse, NereidError } from '../../src/core/index.js';

/** A response of `inferStream` that the test expects to carry outputs, not an error. */
export function successful(response: InferResponse | NereidError): InferResponse {
  assert.ok(!(response instanceof NereidError), `expected a response with outputs, got the error response '${response instanceof NereidError ? response.message : ''}'`);
  return response;
}
