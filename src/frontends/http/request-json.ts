import { NereidError } from '../../core/index.js';
import { JsonBodyError, type JsonValue, parseJsonBody } from '../../protocol/json-body.js';

/** A request body's JSON (protocol/json-body.ts); text that is not JSON is the client's error (400). */
export function parseRequestJson(text: string, what: string): JsonValue {
  try {
    return parseJsonBody(text, what);
  } catch (error) {
    if (error instanceof JsonBodyError) throw new NereidError('INVALID_ARG', error.message, { cause: error });
    throw error;
  }
}
