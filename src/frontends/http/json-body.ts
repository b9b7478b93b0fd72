import { parse as parseLossless } from 'lossless-json';
import { NereidError } from '../../core/index.js';

export type JsonValue = null | boolean | number | bigint | string | JsonValue[] | { [key: string]: JsonValue };

/** A run of 16 or more digits: the only way an integer beyond 2^53 can appear in the text. */
const LONG_DIGIT_RUN = /\d{16}/;
const INTEGER = /^-?\d+$/;

function parseNumber(text: string): number | bigint {
  if (INTEGER.test(text)) {
    const value = Number(text);
    return Number.isSafeInteger(value) ? value : BigInt(text);
  }
  return Number(text);
}

/**
 * Parses a JSON body so that integers beyond 2^53 (INT64/UINT64 tensor data, int64 parameters) come
 * back as exact BigInts. NOTE: the lossless parser is about 4x slower than JSON.parse, so it runs
 * only when the text holds a digit run long enough to need it.
 */
export function parseJsonBody(text: string, what: string): JsonValue {
  try {
    return (LONG_DIGIT_RUN.test(text) ? parseLossless(text, null, parseNumber) : JSON.parse(text)) as JsonValue;
  } catch (error) {
    throw new NereidError('INVALID_ARG', `failed to parse the ${what} as JSON: ${(error as Error).message}`);
  }
}
